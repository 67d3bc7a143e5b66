/*
 * policy.c - what a document lets us do: permission names and lists, the
 * permission check, the signatures and their DocMDP levels, and the
 * pre-flight checks of the writers.
 *
 * DESIGN NOTES
 *
 * Place: above doc.c (it only looks objects up), below the writers that
 * ask it (stamp.c, meta.c, rewrite.c) and info.c.  It holds no state: every
 * answer is read from the document when asked.
 *
 *  1. Permissions (ISO 32000-2 7.6.4.2, Table 22).  /P is a signed 32-bit
 *     integer; bits are numbered from 1.  Named here (the public names of
 *     pdfstamp_perm_name and pdfstamp_parse_permissions):
 *        3 print        print (at low quality if bit 12 is clear)
 *        4 modify       modify contents by operations other than 5, 6, 9, 11
 *        5 copy         copy or extract text and graphics
 *        6 annotate     add or modify annotations, fill form fields
 *        9 fill-forms   fill existing form fields, even with bit 6 clear
 *       10 extract      extraction for accessibility (deprecated in PDF 2.0;
 *                       writers set it, readers ignore it)
 *       11 assemble     insert, rotate, delete pages, bookmarks, thumbnails
 *       12 print-high   print at full quality
 *     Bits 1-2 are 0; bits 7-8 and 13-32 are 1 for R >= 3, and this
 *     library writes bit 10 as 1 as well (pdfstamp_parse_permissions).
 *     The effective permissions (doc->perms) are set by pdfstamp_doc_auth
 *     from /P checked against /Perms (Algorithm 13, 7.6.4.4.12); they are
 *     read only here (ps_doc_permits, ps_doc_kept_p) and by
 *     pdfstamp_doc_info, which reports them.  The owner password grants
 *     every permission (7.6.4.1), a plaintext document too.
 *     Which operation needs which bit:
 *        stamp   adds an annotation          bit 6 (annotate)
 *        meta    edits /Info and XMP         bit 4 (modify)
 *        rotate  new key and passwords       the owner password (rewrite.c)
 *        encrypt a plaintext input           nothing
 *        info, verify                        nothing (they only read)
 *  2. Signatures (12.8).  The certification (a DocMDP signature) is read
 *     where 12.8.4.1 puts it, /Root /Perms /DocMDP, whatever the field tree
 *     looks like; its level is the /P of the signature's DocMDP transform
 *     (12.8.2.2, Table 257): 1 no changes, 2 form filling, page templates
 *     and signing, 3 also annotations; default 2.  The field tree of
 *     /AcroForm is walked (an explicit stack of 16 levels, at most 100,000
 *     fields) for the list of signatures, each with its own DocMDP level;
 *     every one is listed (info->sigs grows as needed).  A tree too deep
 *     to walk, or a /DocMDP that is not a dictionary, sets sigs_incomplete:
 *     the policy is then unknown and every writer refuses rather than
 *     guess.
 *  3. Before an incremental update (ps_policy_check), in this order: the P
 *     bit of note 1 (unless owner); the certification: P=1 refuses every
 *     update, P=2 refuses annotations; an unknown policy refuses; then
 *     each signature listed: P=1 refuses, P=2 refuses annotations, P=2/P=3
 *     warn that strict validators may report the update as a modification,
 *     and an approval signature stays valid (its bytes are untouched) but
 *     is warned about too.  Refusals are PDFSTAMP_E_PERM (exit 5), the
 *     unknown policy PDFSTAMP_E_UNSUPPORTED.
 *  4. Before a full rewrite (ps_policy_rewrite): any signature, or
 *     /AcroForm /SigFlags with bit 2 AppendOnly set (Table 224, Table 225),
 *     refuses (a rewrite changes every byte, so no signature survives it);
 *     with PDFSTAMP_REWRITE_FORCE it proceeds, warning about signatures.
 *  The coming signature audit grows from notes 2-4: it reads the same list
 *  and the same levels, and must not open a second way to them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "policy.h"

/* ---- permissions (note 1) ------------------------------------------------ */

static const struct {
	int bit;
	const char *name;
} perm_names[] = {
	{PS_PERM_PRINT, "print"},
	{PS_PERM_MODIFY, "modify"},
	{PS_PERM_COPY, "copy"},
	{PS_PERM_ANNOTATE, "annotate"},
	{PS_PERM_FILL_FORMS, "fill-forms"},
	{PS_PERM_EXTRACT, "extract"},
	{PS_PERM_ASSEMBLE, "assemble"},
	{PS_PERM_PRINT_HIGH, "print-high"},
};
#define NPERM_NAMES (sizeof perm_names / sizeof perm_names[0])

const char *pdfstamp_perm_name(int bit)
{
	size_t i;

	for (i = 0; i < NPERM_NAMES; i++)
		if (perm_names[i].bit == bit)
			return perm_names[i].name;
	return NULL;
}

int pdfstamp_parse_permissions(pdfstamp_ctx *ctx, const char *list, int64_t *p)
{
	/* Table 22: bits 1-2 zero; 7-8 and 13-32 one for R >= 3; bit 10 one. */
	uint32_t v = 0xFFFFF0C0u | (1u << 9);
	const char *s = list;

	if (strcmp(list, "all") == 0) {
		*p = -4;
		return 0;
	}
	if (strcmp(list, "none") != 0) {
		while (*s) {
			const char *e = strchr(s, ',');
			size_t n = e ? (size_t)(e - s) : strlen(s), i;
			int found = 0;
			for (i = 0; i < NPERM_NAMES; i++) {
				if (strlen(perm_names[i].name) == n && strncmp(perm_names[i].name, s, n) == 0) {
					v |= 1u << (perm_names[i].bit - 1);
					found = 1;
				}
			}
			if (!found)
				return ps_err(ctx, PDFSTAMP_E_USAGE,
				              "unknown permission '%.*s' (use print, modify, copy, annotate, fill-forms, "
				              "extract, assemble, print-high, all or none)", (int)(n > 40 ? 40 : n), s);
			s += n;
			if (*s == ',')
				s++;
		}
	}
	*p = (int64_t)(int32_t)v;
	return 0;
}

int ps_doc_permits(const ps_doc *doc, int bit)
{
	if (!doc->encrypted || doc->authenticated == 2)
		return 1;
	if (doc->authenticated != 1 || bit < 1 || bit > 32)
		return 0;
	return (int)(((uint64_t)doc->perms >> (bit - 1)) & 1);
}

int64_t ps_doc_kept_p(const ps_doc *doc)
{
	return doc->encrypted ? doc->perms : -4;
}

/* ---- signatures (note 2) ------------------------------------------------- */

static void copy_name(char *dst, size_t n, const ps_obj *o)
{
	dst[0] = 0;
	if (o && o->kind == PS_NAME)
		snprintf(dst, n, "%s", o->u.name.p);
}

/* The DocMDP level of signature dictionary SIG: the /P of its DocMDP
 * transform (ISO 32000-2 12.8.2.2, Table 257; default 2), 0 if it has none. */
static int sig_docmdp(ps_doc *doc, ps_obj *sig, int *level)
{
	ps_obj *refs = ps_dict_get(sig, "Reference");
	size_t k;
	int rc;

	*level = 0;
	if ((rc = ps_doc_resolve(doc, refs, &refs)) < 0)
		return rc;
	for (k = 0; refs && refs->kind == PS_ARRAY && k < ps_array_len(refs); k++) {
		ps_obj *r = NULL, *tp = NULL;
		int64_t pval = 2;
		if ((rc = ps_doc_resolve(doc, ps_array_get(refs, k), &r)) < 0)
			return rc;
		if (!ps_obj_is_name(ps_dict_get(r, "TransformMethod"), "DocMDP"))
			continue;
		if ((rc = ps_doc_resolve(doc, ps_dict_get(r, "TransformParams"), &tp)) < 0)
			return rc;
		ps_obj_int(ps_dict_get(tp, "P"), &pval);
		*level = pval >= 1 && pval <= 3 ? (int)pval : 2;
		return 0;
	}
	return 0;
}

/* The walk of note 2: a hostile tree is bounded (sigs_incomplete, or an
 * error past 100,000 fields), never followed without limit. */
int ps_doc_signatures(ps_doc *doc, struct pdfstamp_info *info)
{
	ps_obj *root = NULL, *acro = NULL, *fields = NULL, *perms = NULL, *docmdp, *cert = NULL;
	uint32_t docmdp_num = 0;
	/* An explicit stack of field arrays; bounded to stop hostile trees. */
	struct { ps_obj *arr; size_t i; } stack[16];
	int sp = 0, visited = 0, rc;

	if ((rc = ps_doc_catalog(doc, PS_CATALOG_ANY, &root, NULL)) < 0)
		return rc;
	if ((rc = ps_doc_resolve(doc, ps_dict_get(root, "Perms"), &perms)) < 0)
		return rc;
	docmdp = ps_dict_get(perms, "DocMDP");
	if (docmdp && docmdp->kind == PS_REF)
		docmdp_num = docmdp->u.ref.num;
	if (docmdp) {
		if ((rc = ps_doc_resolve(doc, docmdp, &cert)) < 0)
			return rc;
		if (cert && cert->kind == PS_DICT) {
			if ((rc = sig_docmdp(doc, cert, &info->docmdp)) < 0)
				return rc;
			if (!info->docmdp)
				info->docmdp = 2; /* certification without a readable /P */
		} else if (cert) {
			info->sigs_incomplete = 1; /* /DocMDP that is not a signature dictionary */
		}
	}
	if ((rc = ps_doc_resolve(doc, ps_dict_get(root, "AcroForm"), &acro)) < 0)
		return rc;
	if ((rc = ps_doc_resolve(doc, ps_dict_get(acro, "Fields"), &fields)) < 0)
		return rc;
	if (!fields || fields->kind != PS_ARRAY)
		return 0;
	stack[sp].arr = fields;
	stack[sp].i = 0;
	sp++;
	while (sp > 0) {
		ps_obj *ref, *field = NULL, *v = NULL, *kids = NULL, *ft;
		if (stack[sp - 1].i >= ps_array_len(stack[sp - 1].arr)) {
			sp--;
			continue;
		}
		ref = ps_array_get(stack[sp - 1].arr, stack[sp - 1].i++);
		if (++visited > 100000)
			return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "the form field tree is too large or has a cycle");
		if ((rc = ps_doc_resolve(doc, ref, &field)) < 0)
			return rc;
		if (!field || field->kind != PS_DICT)
			continue;
		ft = ps_dict_get(field, "FT");
		if (ps_obj_is_name(ft, "Sig") && (v = ps_dict_get(field, "V")) != NULL) {
			ps_obj *sig = NULL;
			uint32_t snum = v->kind == PS_REF ? v->u.ref.num : 0;
			if ((rc = ps_doc_resolve(doc, v, &sig)) < 0)
				return rc;
			if (sig && sig->kind == PS_DICT) {
				int level;
				if ((rc = sig_docmdp(doc, sig, &level)) < 0)
					return rc;
				if (!level && snum && snum == docmdp_num)
					level = info->docmdp;
				struct pdfstamp_sig_info *si;
				if (ps_array_grow((void **)&info->sigs, (size_t)info->nsigs, sizeof *si) < 0)
					return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
				si = &info->sigs[info->nsigs++];
				memset(si, 0, sizeof *si);
				si->objnum = snum;
				copy_name(si->subfilter, sizeof si->subfilter, ps_dict_get(sig, "SubFilter"));
				si->docmdp = level;
			}
		}
		if ((rc = ps_doc_resolve(doc, ps_dict_get(field, "Kids"), &kids)) < 0)
			return rc;
		if (kids && kids->kind == PS_ARRAY) {
			if (sp == 16) {
				info->sigs_incomplete = 1;
				continue;
			}
			stack[sp].arr = kids;
			stack[sp].i = 0;
			sp++;
		}
	}
	return 0;
}

/* ---- the writers' pre-flight (notes 3 and 4) ----------------------------- */

int ps_policy_check(ps_doc *doc, enum ps_update_kind kind)
{
	ps_ctx *ctx = doc->ctx;
	struct pdfstamp_info *info;
	int for_annotation = kind == PS_UPDATE_ANNOTATION;
	int i, rc;

	{
		int bit = for_annotation ? PS_PERM_ANNOTATE : PS_PERM_MODIFY;
		if (!ps_doc_permits(doc, bit))
			return ps_err(ctx, PDFSTAMP_E_PERM,
			              "the document does not permit %s (permission bit %d is clear); the owner password "
			              "is needed", for_annotation ? "adding annotations" : "modifying it", bit);
	}
	info = calloc(1, sizeof *info);
	if (!info)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if ((rc = ps_doc_signatures(doc, info)) < 0)
		goto out;
	/* The certification, from /Root /Perms /DocMDP (12.8.4.1), wherever its
	 * field is in the tree. */
	if (info->docmdp == 1 || (info->docmdp == 2 && for_annotation)) {
		rc = ps_err(ctx, PDFSTAMP_E_PERM,
		            info->docmdp == 1 ? "the document is certified with DocMDP P=1 (no changes allowed)"
		                              : "the document is certified with DocMDP P=2 (form filling and signing "
		                                "only; adding annotations breaks the certification)");
		goto out;
	}
	if (info->sigs_incomplete) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		            "the form field tree is nested too deeply (or /Perms /DocMDP is not a signature) to "
		            "know every signature's policy; refusing to change the file");
		goto out;
	}
	for (i = 0; i < info->nsigs; i++) {
		int p = info->sigs[i].docmdp;
		if (p == 1) {
			rc = ps_err(ctx, PDFSTAMP_E_PERM,
			            "the document is certified with DocMDP P=1 (no changes allowed) by signature object %lld",
			            (long long)info->sigs[i].objnum);
			goto out;
		}
		if (p == 2 && for_annotation) {
			rc = ps_err(ctx, PDFSTAMP_E_PERM,
			            "the document is certified with DocMDP P=2 (form filling and signing only; adding "
			            "annotations breaks the certification), signature object %lld",
			            (long long)info->sigs[i].objnum);
			goto out;
		}
		if (p == 3 || p == 2)
			ps_warn(ctx, "the document is certified with DocMDP P=%d; strict validators may report the "
			        "update as a modification", p);
		else
			ps_warn(ctx, "signature object %lld stays valid (its bytes are untouched), but strict validators "
			        "report added %s as a modification", (long long)info->sigs[i].objnum,
			        for_annotation ? "annotations" : "metadata");
	}
out:
	free(info->sigs); /* ps_doc_signatures' list (info.c, above, owns pdfstamp_info_clear) */
	free(info);
	return rc;
}

int ps_policy_rewrite(ps_doc *doc, unsigned flags)
{
	struct pdfstamp_info *info = calloc(1, sizeof *info);
	ps_obj *root = NULL, *acro = NULL, *sf = NULL;
	int64_t sigflags = 0;
	int rc;

	if (!info)
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if ((rc = ps_doc_signatures(doc, info)) < 0)
		goto out;
	if ((rc = ps_doc_catalog(doc, PS_CATALOG_ANY, &root, NULL)) < 0 ||
	    (rc = ps_doc_resolve(doc, ps_dict_get(root, "AcroForm"), &acro)) < 0 ||
	    (rc = ps_doc_resolve(doc, ps_dict_get(acro, "SigFlags"), &sf)) < 0)
		goto out;
	ps_obj_int(sf, &sigflags);
	if ((info->nsigs > 0 || (sigflags & 2)) && !(flags & PDFSTAMP_REWRITE_FORCE))
		rc = ps_err(doc->ctx, PDFSTAMP_E_PERM,
		            "the document %s; a full rewrite invalidates every signature (--force to do it anyway)",
		            info->nsigs > 0 ? "is signed" : "is marked append-only (/SigFlags AppendOnly)");
	else if (info->nsigs > 0)
		ps_warn(doc->ctx, "rewriting a signed document: its %d signature(s) will no longer validate", info->nsigs);
out:
	free(info->sigs); /* ps_doc_signatures' list (info.c, above, owns pdfstamp_info_clear) */
	free(info);
	return rc;
}
