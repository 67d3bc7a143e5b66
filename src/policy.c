/* SPDX-License-Identifier: Apache-2.0 */
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
 *     read only here (ps_policy_permits, ps_policy_kept_p) and by
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
 *  3. The rule table (pdfstamp_policy_allows): which kind of change after
 *     a signature its policy permits.  Columns: an approval signature (no
 *     DocMDP), certification P=1, P=2, P=3 (12.8.2.2, Table 257):
 *        kind            approval  P=1  P=2  P=3
 *        annotation         yes     no   no  yes   P=3: "annotation creation,
 *                                                   deletion, and modification"
 *        form-field         yes     no  yes  yes   P=2: "filling in forms"
 *        signature          yes     no  yes  yes   P=2: "and signing"
 *        dss                yes    yes  yes  yes   (a)
 *        doc-timestamp      yes    yes  yes  yes   (a)
 *        metadata           yes     no   no   no   not among Table 257's changes
 *        page-content        no     no   no   no   visible content (b)
 *        page-tree           no     no   no   no   visible content (b)
 *        catalog             no     no   no   no   /OpenAction, /Names, /Root...
 *        encryption          no     no   no   no   (doc.c refuses it at open)
 *        damaged             no     no   no   no   audit.c note 5 (identity)
 *        other, existing     no     no   no   no   fonts, images, XObjects (b)
 *        other, new         yes    yes  yes  yes   reachable only through a
 *                                                   changed object judged itself;
 *                                                   audit.c forbids one that no
 *                                                   change refers to (an orphan:
 *                                                   a signed reference that led
 *                                                   nowhere now draws it)
 *     (a) ISO 32000-2:2020 Table 257, the /P entry: "Changes to a PDF that
 *     are incremental updates which include only the data necessary to add
 *     DSS's (12.8.4.3) and/or document timestamps (12.8.5) to the document
 *     shall not be considered as changes to the document as defined in the
 *     choices below"; 12.8.5.3: the presence of a document timestamp and/or
 *     DSS information shall be ignored when evaluating DocMDP restrictions.
 *     ETSI EN 319 142-1 (PAdES) 5.4.2.3: DocMDP restrictions do not apply to
 *     incremental updates that add a DSS dictionary with its VRI, Certs,
 *     CRLs and OCSPs; 5.4.3 the same for document time-stamps, whose note
 *     says that P=1 forbids any change but allows document time-stamps.
 *     (b) An approval signature (12.8.1) has no transform, but a change
 *     to what was signed and is shown (page content, the page tree, the
 *     objects they use) is what the "incremental saving" and "shadow"
 *     attacks (NDSS 2019, 2021) hide in a later revision; no signature
 *     permits it.  FieldMDP locks (12.8.2.4; the field's /Lock, 12.7.5.5)
 *     forbid /V changes of the locked fields on top of the table (audit.c).
 *     The table is the one rule of both pdfstamp_audit and the pre-flight.
 *  3b. Before an incremental update: ps_preflight_update, in preflight.c (it
 *     also asks audit.c, which is above this file).
 *  4. Before a full rewrite (ps_policy_rewrite): any signature, or
 *     /AcroForm /SigFlags with bit 2 AppendOnly set (Table 224, Table 225),
 *     refuses (a rewrite changes every byte, so no signature survives it);
 *     with PDFSTAMP_REWRITE_FORCE it proceeds, warning about signatures.
 *     Before either, a document salvaged by PDFSTAMP_OPEN_SALVAGE (doc.c
 *     note 6) is refused (PDFSTAMP_E_USAGE; ps_update_begin does the same
 *     for incremental updates): it is only a prefix of the file.
 *  The signature audit (audit.c) reads the same list and levels (through
 *  ps_policy_signatures) and the same table; there is no second way to them.
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
				if (strlen(perm_names[i].name) == n &&
				    strncmp(perm_names[i].name, s, n) == 0) {
					v |= 1u << (perm_names[i].bit - 1);
					found = 1;
				}
			}
			if (!found)
				return ps_err(ctx, PDFSTAMP_E_USAGE,
				              "unknown permission '%.*s' (use print, modify, copy, "
				              "annotate, fill-forms, extract, assemble, "
				              "print-high, all or none)",
				              (int)(n > 40 ? 40 : n), s);
			s += n;
			if (*s == ',')
				s++;
		}
	}
	*p = (int64_t)(int32_t)v;
	return 0;
}

int ps_policy_permits(const ps_doc *doc, int bit)
{
	struct ps_doc_security ds;

	ps_doc_security(doc, &ds);
	if (!ds.sec || ds.authenticated == 2)
		return 1;
	if (ds.authenticated != 1 || bit < 1 || bit > 32)
		return 0;
	return (int)(((uint64_t)ds.perms >> (bit - 1)) & 1);
}

int64_t ps_policy_kept_p(const ps_doc *doc)
{
	struct ps_doc_security ds;

	ps_doc_security(doc, &ds);
	return ds.sec ? ds.perms : -4;
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

/* Appends the UTF-8 of field name T (a text string) to PATH, after a
 * '.' unless PATH is empty (12.7.4.2: the fully qualified name). */
static void name_push(ps_ctx *ctx, ps_buf *path, const ps_obj *t)
{
	if (!t || t->kind != PS_STR)
		return;
	if (path->len)
		ps_buf_putc(path, '.');
	if (ps_text_to_utf8(ctx, t->u.str.p, t->u.str.len, path) < 0)
		ps_buf_append(path, "?", 1);
}

/* The walk of note 2: a hostile tree is bounded (*incomplete, or an
 * error past 100,000 fields), never followed without limit. */
int ps_policy_sig_fields(ps_doc *doc, int *docmdp_out, int *incomplete, ps_sig_field_fn fn,
                         void *ud)
{
	ps_obj *root = NULL, *acro = NULL, *fields = NULL, *perms = NULL, *docmdp, *cert = NULL;
	uint32_t docmdp_num = 0;
	/* An explicit stack of field arrays; bounded to stop hostile trees.
	 * NAMELEN: the length of the name path of the parent of its fields. */
	struct { ps_obj *arr; size_t i, namelen; } stack[16];
	ps_buf path = PS_BUF_INIT;
	int sp = 0, visited = 0, rc, level0 = 0;

	*docmdp_out = 0;
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
			if ((rc = sig_docmdp(doc, cert, &level0)) < 0)
				return rc;
			if (!level0)
				level0 = 2; /* certification without a readable /P */
			*docmdp_out = level0;
		} else if (cert) {
			*incomplete = 1; /* /DocMDP that is not a signature dictionary */
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
	stack[sp].namelen = 0;
	sp++;
	while (sp > 0) {
		ps_obj *ref, *field = NULL, *v = NULL, *kids = NULL, *ft;
		if (stack[sp - 1].i >= ps_array_len(stack[sp - 1].arr)) {
			sp--;
			continue;
		}
		ref = ps_array_get(stack[sp - 1].arr, stack[sp - 1].i++);
		if (++visited > 100000) {
			rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
			            "the form field tree is too large or has a cycle");
			goto out;
		}
		if ((rc = ps_doc_resolve(doc, ref, &field)) < 0)
			goto out;
		if (!field || field->kind != PS_DICT)
			continue;
		path.len = stack[sp - 1].namelen;
		name_push(ps_doc_ctx(doc), &path, ps_dict_get(field, "T"));
		ps_buf_putc(&path, 0);
		if (path.oom) {
			rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		path.len--;
		ft = ps_dict_get(field, "FT");
		if (ps_obj_is_name(ft, "Sig") && (v = ps_dict_get(field, "V")) != NULL) {
			ps_obj *sig = NULL;
			uint32_t snum = v->kind == PS_REF ? v->u.ref.num : 0;
			if ((rc = ps_doc_resolve(doc, v, &sig)) < 0)
				goto out;
			if (sig && sig->kind == PS_DICT) {
				int level;
				if ((rc = sig_docmdp(doc, sig, &level)) < 0)
					goto out;
				if (!level && snum && snum == docmdp_num)
					level = level0;
				if ((rc = fn(ud, field, ref->kind == PS_REF ? ref->u.ref.num : 0,
				             sig, snum, level, (const char *)path.data)) < 0)
					goto out;
			}
		}
		if ((rc = ps_doc_resolve(doc, ps_dict_get(field, "Kids"), &kids)) < 0)
			goto out;
		if (kids && kids->kind == PS_ARRAY) {
			if (sp == 16) {
				*incomplete = 1;
				continue;
			}
			stack[sp].arr = kids;
			stack[sp].i = 0;
			stack[sp].namelen = path.len;
			sp++;
		}
	}
	rc = 0;
out:
	ps_buf_free(&path);
	return rc;
}

static int add_sig_info(void *ud, ps_obj *field, uint32_t fnum, ps_obj *sig, uint32_t snum,
                        int level, const char *name)
{
	struct { ps_doc *doc; struct pdfstamp_info *info; } *w = ud;
	struct pdfstamp_info *info = w->info;
	struct pdfstamp_sig_info *si;

	(void)field;
	(void)fnum;
	(void)name;
	if (ps_vec_grow((void **)&info->sigs, (size_t)info->nsigs, sizeof *si) < 0)
		return ps_err(ps_doc_ctx(w->doc), PDFSTAMP_E_NOMEM, "out of memory");
	si = &info->sigs[info->nsigs++];
	memset(si, 0, sizeof *si);
	si->objnum = snum;
	copy_name(si->subfilter, sizeof si->subfilter, ps_dict_get(sig, "SubFilter"));
	si->docmdp = level;
	return 0;
}

int ps_policy_signatures(ps_doc *doc, struct pdfstamp_info *info)
{
	struct { ps_doc *doc; struct pdfstamp_info *info; } w = {doc, info};

	return ps_policy_sig_fields(doc, &info->docmdp, &info->sigs_incomplete, add_sig_info, &w);
}

/* ---- the rule table (note 3) --------------------------------------------- */

/* Columns: approval, P=1, P=2, P=3; rows: enum pdfstamp_change_kind. */
static const unsigned char rule_table[PDFSTAMP_CHANGE_KINDS][4] = {
	[PDFSTAMP_CHANGE_OTHER] = {0, 0, 0, 0},          /* existing objects; new ones: see below */
	[PDFSTAMP_CHANGE_ANNOTATION] = {1, 0, 0, 1},
	[PDFSTAMP_CHANGE_FORM_FIELD] = {1, 0, 1, 1},
	[PDFSTAMP_CHANGE_SIGNATURE] = {1, 0, 1, 1},
	[PDFSTAMP_CHANGE_DSS] = {1, 1, 1, 1},
	[PDFSTAMP_CHANGE_DOC_TIMESTAMP] = {1, 1, 1, 1},
	[PDFSTAMP_CHANGE_METADATA] = {1, 0, 0, 0},
	[PDFSTAMP_CHANGE_PAGE_CONTENT] = {0, 0, 0, 0},
	[PDFSTAMP_CHANGE_PAGE_TREE] = {0, 0, 0, 0},
	[PDFSTAMP_CHANGE_CATALOG] = {0, 0, 0, 0},
	[PDFSTAMP_CHANGE_ENCRYPTION] = {0, 0, 0, 0},
	[PDFSTAMP_CHANGE_DAMAGED] = {0, 0, 0, 0},
};

static const char *const kind_names[PDFSTAMP_CHANGE_KINDS] = {
	"other", "annotation", "form-field", "signature", "dss", "doc-timestamp",
	"metadata", "page-content", "page-tree", "catalog", "encryption", "damaged",
};

const char *pdfstamp_change_kind_name(int kind)
{
	return kind >= 0 && kind < PDFSTAMP_CHANGE_KINDS ? kind_names[kind] : NULL;
}

int pdfstamp_policy_allows(int docmdp, int kind, int existed)
{
	if (kind < 0 || kind >= PDFSTAMP_CHANGE_KINDS || docmdp < 0 || docmdp > 3)
		return 0;
	if (kind == PDFSTAMP_CHANGE_OTHER && !existed)
		return 1;
	return rule_table[kind][docmdp];
}

/* ---- before a full rewrite (note 4) ------------------------------------- */

int ps_policy_rewrite(ps_doc *doc, unsigned flags)
{
	struct pdfstamp_info *info = calloc(1, sizeof *info);
	ps_obj *root = NULL, *acro = NULL, *sf = NULL;
	ps_ctx *ctx = ps_doc_ctx(doc);
	int64_t sigflags = 0, damaged;
	int rc;

	if (!info)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (pdfstamp_doc_damaged_tail(doc, NULL, &damaged, NULL, 0)) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE,
		            "the document was salvaged (its last %lld bytes cannot be read); "
		            "refusing to rewrite it", (long long)damaged);
		goto out;
	}
	if ((rc = ps_policy_signatures(doc, info)) < 0)
		goto out;
	if ((rc = ps_doc_catalog(doc, PS_CATALOG_ANY, &root, NULL)) < 0 ||
	    (rc = ps_doc_resolve(doc, ps_dict_get(root, "AcroForm"), &acro)) < 0 ||
	    (rc = ps_doc_resolve(doc, ps_dict_get(acro, "SigFlags"), &sf)) < 0)
		goto out;
	ps_obj_int(sf, &sigflags);
	if ((info->nsigs > 0 || (sigflags & 2)) && !(flags & PDFSTAMP_REWRITE_FORCE))
		rc = ps_err_hint(ctx, PDFSTAMP_HINT_REWRITE_FORCE, PDFSTAMP_E_PERM,
		                 "the document %s; a full rewrite invalidates every signature",
		                 info->nsigs > 0 ? "is signed"
		                                 : "is marked append-only (/SigFlags AppendOnly)");
	else if (info->nsigs > 0)
		ps_warn(ctx,
		        "rewriting a signed document: its %d signature(s) will no longer validate",
		        info->nsigs);
out:
	free(info->sigs); /* ps_policy_signatures' list (info.c, above, owns pdfstamp_info_clear) */
	free(info);
	return rc;
}
