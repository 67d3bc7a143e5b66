/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit.c - pdfstamp_audit: what changed after each signature, and does
 * the signature's policy permit it.
 *
 * DESIGN NOTES
 *
 * Place: above doc.c (objects as of a revision: ps_doc_load_as_of,
 * ps_xref_as_of) and policy.c (the signatures: ps_policy_sig_fields; the one
 * rule table: pdfstamp_policy_allows) and auditsig.c (the signatures of
 * note 2 and objects as of a revision; struct audit is in audit.h);
 * below nothing but the CLI.  It only reads.
 *
 *  1. Revisions.  Section SEC (1 = newest, as ps_xent.sec) is revision
 *     nsections - SEC + 1 counted from the oldest, as the report lists
 *     them.  Each section's own entries are the merged index's slots whose
 *     section is SEC plus the entries it hides (doc->shadows, xref.c): one
 *     walk over both.  An entry is "added" when the object was not in use
 *     as of SEC + 1, "modified" when it was, "freed" for a free entry of an
 *     object that was in use.
 *  2. Signatures.  Every signature field with a value (ps_policy_sig_fields,
 *     the walk `info` and the writers use).  The revision a signature
 *     covers is read from its /ByteRange [0 a b c]: the signed bytes end
 *     at b + c, and they cover revision SEC exactly when the bytes before
 *     that end are "startxref <offset of section SEC> %%EOF" and its EOL
 *     (CR, LF or CR LF, as xref.c's find_startxref takes the end of a
 *     file); otherwise covers_revision is 0, the revision is the newest one
 *     whose section starts before b + c, and the signature counts as
 *     violated (bytes of its revision are not signed).  A signature
 *     dictionary (re)defined by a revision newer than the one it covers is
 *     a violation too: a signature is written inside its own revision, as
 *     a new object (one that replaces an older version of itself, with
 *     other content, was redefined: its /ByteRange cannot be believed).
 *     DocMDP level: policy.c note 2.  FieldMDP: the signature's /Reference
 *     with /TransformMethod /FieldMDP (12.8.2.4) or else the field's /Lock
 *     (12.7.5.5, Table 233): /Action All | Include | Exclude, /Fields.
 *     Document timestamps: /Type /DocTimeStamp or /SubFilter /ETSI.RFC3161
 *     (12.8.5).  The field tree is walked as of every older revision too
 *     (old_sigs): a signature that a later revision takes out of the tree
 *     (or whose field's /V it points elsewhere) is listed all the same,
 *     judges the changes after it, and is violated: no reader of the file
 *     sees it any more, so the file must not pass for "unsigned" or "ok".
 *  3. Changes.  Only revisions newer than the oldest signed one are
 *     compared.  For each object a section lists (and each member of an
 *     object stream it redefines: a member's entry may be old while the
 *     stream under its number is new), the object as of SEC + 1 and as of
 *     SEC are loaded decrypted (each with its own generation; never the
 *     ciphertext, which every re-encryption changes) and compared with
 *     ps_obj_equal, streams also by their decrypted data.  Equal versions
 *     are no change.  The chain's own xref streams and object streams as
 *     containers are not changes; a trailer that points /Root or /Info
 *     elsewhere is (catalog, metadata).
 *  4. Kinds (enum pdfstamp_change_kind), per signature: the signed
 *     revision is the truth (auditview.c).  An object in use when the
 *     signature was made has the kind of its roles in that revision
 *     (auditview.c note 2; the most restrictive wins): a catalog, page or
 *     /AcroForm by the keys that differ (below), a field or widget by
 *     field_diff_kind (note 5), arrays by the elements added or removed
 *     (an element that existed when signed by its role then, a new one by
 *     its own keys), appearances after their owner, DSS parts dss, /Info
 *     and the catalog's /Metadata metadata, the signature dictionaries
 *     signature (and never to be changed).  No role: other, existing,
 *     forbidden.  Nothing its new version says can make it more permissive.
 *     An object created after the signature takes its kind from its own
 *     keys, old and new versions both (the more restrictive kind wins),
 *     and from the roles the changed objects of its revision give it; if
 *     the signed revision referred to its number (a dangling reference),
 *     the role it had there counts too:
 *        catalog: by the keys that differ: /AcroForm form-field, /DSS dss,
 *                 /Metadata metadata, any other catalog.  In /AcroForm:
 *                 /Fields by its elements, /SigFlags signature; what
 *                 redraws every field is catalog: /NeedAppearances true
 *                 (12.7.3), /DA, /Q, /CO, /XFA, an entry of /DR changed
 *                 or removed (entries added are form-field)
 *        page:    only /Annots differs: annotation (by the annotations
 *                 added or removed); /Contents, /Resources page-content;
 *                 other keys page-tree.  /Pages nodes: page-tree.
 *        new fields, widgets: annotation (12.5.6.19), a signature field,
 *                 widget or dictionary signature (doc-timestamp when its
 *                 value is one): note 5 says when that counts.
 *        new streams without /Type: what a changed object of the same
 *                 revision uses them as (/AP, DSS data), else other.
 *        new objects that no change of their revision (nor its trailer)
 *                 refers to, numbered below the signed revision's /Size:
 *                 forbidden (a signed reference that led nowhere now draws
 *                 them).  Numbers from /Size up are not judged so.
 *        the trailer: /Root or /Info pointed elsewhere (catalog, metadata);
 *                 a /Size below the previous revision's: catalog.
 *  5. Verdict per change and signature (record): pdfstamp_policy_allows(
 *     level, kind, existed-when-signed), the level read as of the signed
 *     revision (auditsig.c), and on top of it:
 *      - policy: a change of an object the signature's policy is read
 *        from (signature dictionary, /Reference and its transforms,
 *        /Lock, /Perms) violates it;
 *      - FieldMDP: a /V change of a locked field (a lock on a name covers
 *        its descendants) violates it;
 *      - signing is real: a signature or doc-timestamp change counts as
 *        such only when its revision is closed by a signature (a document
 *        timestamp) that covers it exactly and whose CMS signs its bytes
 *        (sigcms.c); else it is an annotation.  Under P=1 and P=2 a new
 *        signature widget must not show (empty /Rect, hidden, no /AP);
 *      - form filling: an existing field or widget may change /V, /RV,
 *        /AS, /M and /AP (unless its new /AP names a signed object that
 *        was no appearance: re-pointed); any other key is an annotation;
 *      - approval signatures permit new annotations, not a change or
 *        removal of one that existed when signed (old_annot, set while
 *        the kind is found): that changes what the signer saw;
 *      - an /Info update of /ModDate and /Producer only is form filling
 *        (form fillers write it on every save);
 *      - an annotation added over a signature's shown widget is reported
 *        (its reason); with PDFSTAMP_AUDIT_STRICT, after P=3 only text
 *        notes (/Text, /Popup) not over a widget may be added, and after
 *        P=1 a DSS or document timestamp is a change (Acrobat's reading:
 *        the certification attacks, Mainka et al., IEEE S&P 2021);
 *      - identity: a generation change of a signed object is other (its
 *        signed references no longer lead to it); an "N G obj" after the
 *        oldest signed revision that its section does not list there
 *        (scan_unlisted; stream data excepted), an object of a later
 *        revision that does not read (an entry that leads to another
 *        object's bytes included), and bytes after the readable revisions
 *        (PDFSTAMP_OPEN_SALVAGE) are changes of kind damaged, forbidden by
 *        every signature before them.
 *     A forbidden change names the first signature it breaks and the
 *     reason.  The report's verdict: "unsigned" without signatures, else
 *     "violation" if any signature is violated, else "ok".  A violation is
 *     a finding, not an error.
 *  6. Hostile input: every object is loaded as of its revision with
 *     doc.c's bounds (depth, sizes); object numbers come from the index
 *     (<= PS_MAX_OBJNUM); at most MAX_CHANGES changes are recorded; at
 *     most MAX_ARRAY_CLASSIFY differing elements of an array are loaded
 *     (past them the array counts as an existing object's change: other,
 *     forbidden), matched against the other version's sorted refs (n log
 *     n); the older field trees at most MAX_OLD_FIELD_VISITS fields in
 *     all, else the audit is refused; object streams are decoded once per
 *     version (doc.c's two-slot cache); a revision chain whose
 *     hidden entries could not all be kept (xref.c) is refused, never
 *     audited partly.  /Encrypt changes, loops and other chain tampering
 *     are refused at open (doc.c, xref.c): exit 4, never "ok".
 *  7. Cost: the index walk is in memory; objects are read only for the
 *     changes after the first signature and what classifies them, plus
 *     one walk of each signed revision that a later one changes
 *     (auditview.c note 4) and the bytes after the oldest signed
 *     revision (the identity scan).  What reading older revisions decodes
 *     (object streams as of a revision, doc.c, and the stream data
 *     compared here) is capped at 4 x the file size + 64 MiB in all
 *     (doc->asof_cap): past it the audit is refused (PDFSTAMP_E_UNSUPPORTED),
 *     so that object streams interleaved to defeat doc.c's two-slot cache
 *     cannot make the walks decode without bound.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "policy.h"
#include "audit.h"

#define MAX_CHANGES 1000000
#define MAX_ARRAY_CLASSIFY 4096
#define MAX_REFS ((size_t)1 << 22)
#define REC_SIGVALUE 1             /* record(): an existing signature dictionary */
#define REC_ORPHAN 2               /* record(): a new object no change refers to */
#define REC_FIXED 4                /* record(): kind and reason given (damage, identity) */
#define WHAT_ACROFORM (-2)         /* dict_diff_kind: an /AcroForm dictionary */

/* ---- small helpers --------------------------------------------------------- */

static const int kind_rank[PDFSTAMP_CHANGE_KINDS] = {
	[PDFSTAMP_CHANGE_DSS] = 1, [PDFSTAMP_CHANGE_DOC_TIMESTAMP] = 1,
	[PDFSTAMP_CHANGE_SIGNATURE] = 2, [PDFSTAMP_CHANGE_FORM_FIELD] = 3,
	[PDFSTAMP_CHANGE_ANNOTATION] = 4, [PDFSTAMP_CHANGE_METADATA] = 5,
	[PDFSTAMP_CHANGE_OTHER] = 6, [PDFSTAMP_CHANGE_PAGE_CONTENT] = 7,
	[PDFSTAMP_CHANGE_PAGE_TREE] = 8, [PDFSTAMP_CHANGE_CATALOG] = 9,
	[PDFSTAMP_CHANGE_ENCRYPTION] = 10, [PDFSTAMP_CHANGE_DAMAGED] = 11,
};

static int worse(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return kind_rank[b] > kind_rank[a] ? b : a;
}

static int push_u32(ps_ctx *ctx, uint32_t **v, size_t *n, uint32_t x)
{
	if (ps_vec_grow((void **)v, *n, sizeof **v) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	(*v)[(*n)++] = x;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_role(const void *x, const void *y)
{
	const struct role *p = x, *q = y;

	return p->num < q->num ? -1 : p->num > q->num;
}

/* The role of NUM (binary search in the sorted roles), -1 if none. */
static int role_of(const struct audit *a, uint32_t num)
{
	size_t lo = 0, hi = a->nroles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->roles[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	{
		int k = -1; /* several roles: the more restrictive */
		for (; lo < a->nroles && a->roles[lo].num == num; lo++)
			k = worse(k, a->roles[lo].kind);
		return k;
	}
}

static int add_role(struct audit *a, const ps_obj *ref, int kind)
{
	if (!ref || ref->kind != PS_REF || a->nroles >= 1000000)
		return 0;
	if (ps_vec_grow((void **)&a->roles, a->nroles, sizeof *a->roles) < 0)
		return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	a->roles[a->nroles].num = ref->u.ref.num;
	a->roles[a->nroles++].kind = kind;
	return 0;
}

/* ---- the signed revision's view (auditview.c) --------------------------- */

/* Was NUM in use as of section S?  *E (may be NULL) its entry then. */
static int existed_at(const struct audit *a, uint32_t num, int S, ps_xent *e)
{
	ps_xent x;

	if (!e)
		e = &x;
	return num && ps_xref_as_of(a->xref, num, S, e) && e->type != 0;
}

static size_t roles_at(const struct audit *a, uint32_t num, int S, const struct vent **r)
{
	if (!a->views || S < 1 || S > a->ns || !a->views[S].built) {
		*r = NULL;
		return 0;
	}
	return ps_auditview_roles(&a->views[S], num, r);
}

/* An element of an array (/Annots, /Fields, /Kids, /Contents) that existed
 * at S, added to or removed from it: what its roles at S make of that. */
static int elem_kind(const struct audit *a, uint32_t num, int S)
{
	const struct vent *r;
	size_t n = roles_at(a, num, S, &r), i;
	int k = -1;

	for (i = 0; i < n; i++) {
		int kk;
		switch (r[i].role) {
		case VR_ANNOT: case VR_WIDGET: case VR_FIELD: case VR_SIGWIDGET: case VR_SIGFIELD:
			kk = PDFSTAMP_CHANGE_ANNOTATION; /* form structure (note 4) */
			break;
		case VR_CONTENT:
			kk = PDFSTAMP_CHANGE_PAGE_CONTENT;
			break;
		case VR_PAGE: case VR_PAGES:
			kk = PDFSTAMP_CHANGE_PAGE_TREE;
			break;
		case VR_DSS:
			kk = PDFSTAMP_CHANGE_DSS;
			break;
		default:
			kk = PDFSTAMP_CHANGE_OTHER;
		}
		k = worse(k, kk);
	}
	return k < 0 ? PDFSTAMP_CHANGE_OTHER : k;
}

/* ---- classification (note 4) ----------------------------------------------- */

static int is_dss_dict(const ps_obj *o)
{
	size_t i;

	if (ps_obj_is_name(ps_dict_get(o, "Type"), "DSS") || ps_dict_get(o, "VRI") ||
	    ps_dict_get(o, "Certs") || ps_dict_get(o, "OCSPs") || ps_dict_get(o, "CRLs"))
		return 1;
	if (ps_obj_is_name(ps_dict_get(o, "Type"), "VRI"))
		return 1;
	/* a /VRI dictionary: keys are 40 hexadecimal digits (SHA-1) */
	if (o->kind != PS_DICT || o->u.dict.len == 0)
		return 0;
	for (i = 0; i < o->u.dict.len; i++) {
		const char *k = o->u.dict.ents[i].key;
		if (strlen(k) != 40 || strspn(k, "0123456789ABCDEFabcdef") != 40)
			return 0;
	}
	return 1;
}

static int is_field(const ps_obj *o)
{
	return ps_dict_get(o, "FT") != NULL ||
	       (ps_dict_get(o, "T") &&
	        (ps_dict_get(o, "Kids") || ps_dict_get(o, "Parent") || ps_dict_get(o, "V")));
}

static int is_widget(const ps_obj *o)
{
	return ps_obj_is_name(ps_dict_get(o, "Subtype"), "Widget");
}

static int is_page(const ps_obj *o)
{
	return ps_obj_is_name(ps_dict_get(o, "Type"), "Page") ||
	       (!ps_dict_get(o, "Type") && ps_dict_get(o, "Parent") && !ps_dict_get(o, "Kids") &&
	        (ps_dict_get(o, "MediaBox") || ps_dict_get(o, "Contents")) &&
	        !ps_dict_get(o, "Subtype"));
}

static int is_pages(const ps_obj *o)
{
	return ps_obj_is_name(ps_dict_get(o, "Type"), "Pages") ||
	       (!ps_dict_get(o, "Type") && ps_dict_get(o, "Kids") && ps_dict_get(o, "Count") &&
	        !is_field(o));
}

/* Kind of a field (or widget merged with one) as of SEC. */
static int field_kind(struct audit *a, const ps_obj *o, int sec, int *rc)
{
	ps_obj *v = NULL, *owned = NULL;
	int k;

	*rc = 0;
	if (!ps_obj_is_name(ps_dict_get(o, "FT"), "Sig"))
		return PDFSTAMP_CHANGE_FORM_FIELD;
	if ((*rc = ps_auditsig_resolve(a, ps_dict_get(o, "V"), sec, &v, &owned)) < 0)
		return -1;
	k = v && ps_auditsig_is_timestamp(v) ? PDFSTAMP_CHANGE_DOC_TIMESTAMP
	                                      : PDFSTAMP_CHANGE_SIGNATURE;
	ps_obj_free(owned);
	return k;
}

/* What object O (number NUM, as of SEC) is on its own; -1 if it does not
 * say (untyped streams, plain values, arrays). */
static int own_kind(struct audit *a, uint32_t num, const ps_obj *o, int sec, int *rc)
{
	const ps_obj *type, *st;

	*rc = 0;
	if (!o)
		return -1;
	if (num && num == a->enc_num)
		return PDFSTAMP_CHANGE_ENCRYPTION;
	{
		const ps_obj *info = ps_auditsig_trailer_key(a, sec, 1);
		if (num && info && info->kind == PS_REF && info->u.ref.num == num)
			return PDFSTAMP_CHANGE_METADATA; /* the trailer's /Info */
	}
	if (o->kind == PS_STREAM) {
		type = ps_dict_get(o, "Type");
		st = ps_dict_get(o, "Subtype");
		if (ps_obj_is_name(type, "Metadata") || ps_obj_is_name(st, "XML"))
			return PDFSTAMP_CHANGE_METADATA;
		if (ps_obj_is_name(st, "Form") || ps_obj_is_name(st, "Image") || type)
			return PDFSTAMP_CHANGE_OTHER;
		return -1;
	}
	if (o->kind != PS_DICT)
		return -1;
	type = ps_dict_get(o, "Type");
	if (ps_obj_is_name(type, "Catalog"))
		return PDFSTAMP_CHANGE_CATALOG;
	if (is_pages(o) || is_page(o))
		return PDFSTAMP_CHANGE_PAGE_TREE;
	if (ps_obj_is_name(type, "Sig") || ps_obj_is_name(type, "DocTimeStamp") ||
	    (ps_dict_get(o, "ByteRange") && ps_dict_get(o, "Contents")))
		return ps_auditsig_is_timestamp(o) ? PDFSTAMP_CHANGE_DOC_TIMESTAMP
		                                    : PDFSTAMP_CHANGE_SIGNATURE;
	if (is_field(o))
		return field_kind(a, o, sec, rc);
	if (ps_obj_is_name(ps_dict_get(o, "Subtype"), "Widget")) {
		/* a widget of a signature field is part of signing */
		ps_obj *p = NULL, *owned = NULL;
		int k = PDFSTAMP_CHANGE_FORM_FIELD;
		if ((*rc = ps_auditsig_resolve(a, ps_dict_get(o, "Parent"), sec, &p, &owned)) < 0)
			return -1;
		if (p && p->kind == PS_DICT && is_field(p))
			k = field_kind(a, p, sec, rc);
		ps_obj_free(owned);
		return k;
	}
	if (ps_obj_is_name(type, "Annot") || (ps_dict_get(o, "Subtype") && ps_dict_get(o, "Rect")))
		return PDFSTAMP_CHANGE_ANNOTATION;
	if (is_dss_dict(o))
		return PDFSTAMP_CHANGE_DSS;
	if (ps_dict_get(o, "Fields") && ps_dict_get(o, "Fields")->kind != PS_DICT)
		return PDFSTAMP_CHANGE_FORM_FIELD; /* /AcroForm */
	if (ps_dict_get(o, "DocMDP") || ps_dict_get(o, "UR3"))
		return PDFSTAMP_CHANGE_CATALOG; /* /Perms */
	if (ps_obj_is_name(type, "TransformParams") || ps_obj_is_name(type, "SigRef"))
		return PDFSTAMP_CHANGE_SIGNATURE;
	if (type)
		return PDFSTAMP_CHANGE_OTHER;
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The kind of the element refs of array ARR as of SEC that are not in
 * OTHER (NULL: all of them); -1 if none says.  OTHER's refs are sorted
 * once (a hostile array of a million elements costs n log n, not n^2);
 * past MAX_ARRAY_CLASSIFY elements to classify, the rest are taken for
 * the worst (other, existing: forbidden), never left out. */
static int array_kind(struct audit *a, const ps_obj *arr, const ps_obj *other, int sec, int *rc)
{
	size_t i, n = ps_array_len(arr), m = 0, done = 0;
	uint64_t *keys = NULL;
	int k = -1;

	*rc = 0;
	if (other && ps_array_len(other)) {
		if (!(keys = malloc(ps_array_len(other) * sizeof *keys))) {
			*rc = ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			return -1;
		}
		for (i = 0; i < ps_array_len(other); i++) {
			const ps_obj *e = ps_array_get(other, i);
			if (e->kind == PS_REF)
				keys[m++] = (uint64_t)e->u.ref.num << 16 | e->u.ref.gen;
		}
		qsort(keys, m, sizeof *keys, cmp_u64);
	}
	for (i = 0; i < n; i++) {
		const ps_obj *e = ps_array_get(arr, i);
		uint64_t key;
		ps_obj *o = NULL;
		int ek;
		if (e->kind != PS_REF)
			continue;
		key = (uint64_t)e->u.ref.num << 16 | e->u.ref.gen;
		if (m && bsearch(&key, keys, m, sizeof *keys, cmp_u64))
			continue;
		if (++done > MAX_ARRAY_CLASSIFY) {
			k = worse(k, PDFSTAMP_CHANGE_OTHER);
			break;
		}
		if (a->cur_S && existed_at(a, e->u.ref.num, a->cur_S, NULL)) {
			/* an element that existed when signed: its role then */
			int ek0 = elem_kind(a, e->u.ref.num, a->cur_S);
			if (ek0 == PDFSTAMP_CHANGE_ANNOTATION)
				a->old_annot = 1; /* a signed annotation removed or re-listed */
			k = worse(k, ek0);
			continue;
		}
		if ((*rc = ps_auditsig_load(a, e->u.ref.num, sec, &o)) < 0)
			break;
		ek = own_kind(a, e->u.ref.num, o, sec, rc);
		if (ek < 0 && o && o->kind == PS_STREAM)
			ek = PDFSTAMP_CHANGE_PAGE_CONTENT; /* a /Contents array */
		if (ek == PDFSTAMP_CHANGE_FORM_FIELD)
			ek = PDFSTAMP_CHANGE_ANNOTATION; /* a field added or removed: note 4 */
		ps_obj_free(o);
		if (*rc < 0)
			break;
		k = worse(k, ek);
	}
	free(keys);
	return *rc < 0 ? -1 : k;
}

/* Kind of the difference between the values OV (as of SEC+1) and NV (as
 * of SEC) of an array-valued key such as /Annots or /Fields. */
static int array_diff_kind(struct audit *a, ps_obj *ov, ps_obj *nv, int sec, int fallback, int *rc)
{
	ps_obj *o = NULL, *n = NULL, *oo = NULL, *no = NULL;
	int k = -1, k2;

	if ((*rc = ps_auditsig_resolve(a, ov, sec + 1, &o, &oo)) < 0 ||
	    (*rc = ps_auditsig_resolve(a, nv, sec, &n, &no)) < 0)
		goto out;
	if (!(o && o->kind != PS_ARRAY) && !(n && n->kind != PS_ARRAY)) {
		k = array_kind(a, n, o, sec, rc);
		if (*rc == 0) {
			k2 = array_kind(a, o, n, sec + 1, rc);
			k = worse(k, k2);
		}
	}
out:
	ps_obj_free(oo);
	ps_obj_free(no);
	return k < 0 ? fallback : k;
}

/* Does dictionary N keep every entry of O (nested dictionaries may gain
 * entries, DEPTH levels down at most)? */
static int extends(const ps_obj *o, const ps_obj *n, int depth)
{
	size_t i;

	if (!o)
		return 1;
	if (!n || o->kind != PS_DICT || n->kind != PS_DICT || depth > 4)
		return ps_obj_equal(o, n, 0);
	for (i = 0; i < o->u.dict.len; i++)
		if (!extends(o->u.dict.ents[i].val, ps_dict_get(n, o->u.dict.ents[i].key),
		             depth + 1))
			return 0;
	return 1;
}

static int is_true(const ps_obj *o)
{
	return o && o->kind == PS_BOOL && o->u.b;
}

/* Kind of a change of a dictionary that is a catalog, page, or /AcroForm
 * in both versions: by the keys that differ (note 4). */
static int dict_diff_kind(struct audit *a, const ps_obj *o, const ps_obj *n, int sec, int what,
                          int *rc)
{
	int k = -1, pass;

	*rc = 0;
	for (pass = 0; pass < 2; pass++) {
		const ps_obj *d = pass ? n : o, *e = pass ? o : n;
		size_t i;
		for (i = 0; i < d->u.dict.len; i++) {
			const char *key = d->u.dict.ents[i].key;
			ps_obj *dv = d->u.dict.ents[i].val, *ev = ps_dict_get(e, key);
			int kk;
			if (pass && ev)
				continue; /* compared in the first pass */
			if (ev && ps_obj_equal(dv, ev, 0))
				continue;
			if (what == PDFSTAMP_CHANGE_CATALOG) {
				if (!strcmp(key, "DSS"))
					kk = PDFSTAMP_CHANGE_DSS;
				else if (!strcmp(key, "Metadata"))
					kk = PDFSTAMP_CHANGE_METADATA;
				else if (!strcmp(key, "AcroForm") && ev && dv->kind == PS_DICT &&
				         ev->kind == PS_DICT)
					kk = dict_diff_kind(a, pass ? ev : dv, pass ? dv : ev, sec,
					                    WHAT_ACROFORM, rc);
				else if (!strcmp(key, "AcroForm"))
					kk = PDFSTAMP_CHANGE_FORM_FIELD;
				else
					kk = PDFSTAMP_CHANGE_CATALOG;
			} else if (what == PDFSTAMP_CHANGE_PAGE_TREE) {
				if (!strcmp(key, "Annots"))
					kk = array_diff_kind(a, ps_dict_get(o, key),
					                     ps_dict_get(n, key), sec,
					                     PDFSTAMP_CHANGE_ANNOTATION, rc);
				else if (!strcmp(key, "Contents") || !strcmp(key, "Resources"))
					kk = PDFSTAMP_CHANGE_PAGE_CONTENT;
				else
					kk = PDFSTAMP_CHANGE_PAGE_TREE;
			} else { /* /AcroForm */
				if (!strcmp(key, "Fields"))
					kk = array_diff_kind(a, ps_dict_get(o, key),
					                     ps_dict_get(n, key), sec,
					                     PDFSTAMP_CHANGE_FORM_FIELD, rc);
				else if (!strcmp(key, "SigFlags"))
					kk = PDFSTAMP_CHANGE_SIGNATURE;
				else if (!strcmp(key, "NeedAppearances"))
					/* true: viewers redraw every field (12.7.3) */
					kk = is_true(ps_dict_get(n, key)) ? PDFSTAMP_CHANGE_CATALOG
					     : PDFSTAMP_CHANGE_FORM_FIELD;
				else if (!strcmp(key, "DR"))
					/* resources may be added, not changed: fields drawn
					 * again use them (12.7.4.3) */
					kk = extends(ps_dict_get(o, key), ps_dict_get(n, key), 0)
					     ? PDFSTAMP_CHANGE_FORM_FIELD : PDFSTAMP_CHANGE_CATALOG;
				else if (!strcmp(key, "DA") || !strcmp(key, "Q") ||
				         !strcmp(key, "XFA") || !strcmp(key, "CO"))
					/* how every field looks, or XFA */
					kk = PDFSTAMP_CHANGE_CATALOG;
				else
					kk = PDFSTAMP_CHANGE_FORM_FIELD;
			}
			if (*rc < 0)
				return -1;
			k = worse(k, kk);
		}
	}
	if (k < 0)
		k = what == WHAT_ACROFORM ? PDFSTAMP_CHANGE_FORM_FIELD : what;
	return k;
}

/* Calls FN for every reference object N (a new version of a changed
 * object of kind KIND) uses in a role of note 4; stops at the first
 * nonzero FN result. */
typedef int (*role_fn)(struct audit *a, const ps_obj *ref, int kind, void *ud);

static int each_role_ref(struct audit *a, const ps_obj *n, int kind, role_fn fn, void *ud)
{
	size_t i;
	int rc = 0;

	if (!n || n->kind != PS_DICT)
		return 0;
	if (kind == PDFSTAMP_CHANGE_DSS) {
		for (i = 0; i < n->u.dict.len && rc == 0; i++) {
			const ps_obj *v = n->u.dict.ents[i].val;
			size_t j;
			rc = fn(a, v, PDFSTAMP_CHANGE_DSS, ud);
			for (j = 0; v->kind == PS_ARRAY && j < ps_array_len(v) && rc == 0; j++)
				rc = fn(a, ps_array_get(v, j), PDFSTAMP_CHANGE_DSS, ud);
		}
		return rc;
	}
	if (kind == PDFSTAMP_CHANGE_ANNOTATION || kind == PDFSTAMP_CHANGE_FORM_FIELD ||
	    kind == PDFSTAMP_CHANGE_SIGNATURE || kind == PDFSTAMP_CHANGE_DOC_TIMESTAMP) {
		const ps_obj *ap = ps_dict_get(n, "AP");
		for (i = 0; ap && ap->kind == PS_DICT && i < ap->u.dict.len && rc == 0; i++) {
			const ps_obj *v = ap->u.dict.ents[i].val;
			size_t j;
			rc = fn(a, v, kind, ud);
			for (j = 0; v->kind == PS_DICT && j < v->u.dict.len && rc == 0; j++)
				rc = fn(a, v->u.dict.ents[j].val, kind, ud);
		}
		if (rc == 0)
			rc = fn(a, ps_dict_get(n, "AP"), kind, ud);
		if (rc == 0 && kind != PDFSTAMP_CHANGE_ANNOTATION)
			rc = fn(a, ps_dict_get(n, "V"), kind, ud);
		if (rc == 0 && kind == PDFSTAMP_CHANGE_ANNOTATION)
			rc = fn(a, ps_dict_get(n, "Popup"), kind, ud);
	}
	return rc;
}

static int is_same_ref(struct audit *a, const ps_obj *ref, int kind, void *ud)
{
	const ps_obj *want = ud;

	(void)a;
	(void)kind;
	return ref && ref->kind == PS_REF && ref->u.ref.num == want->u.ref.num;
}

struct role_src {
	const ps_obj *old;           /* the old version of the role giver (NULL: new) */
	int kind_old;                /* its kind */
	int sec;
};

/* A role is given to a new object, or to an existing one only when the
 * old version of the giver already used it in that role: else a changed
 * widget could name the page's content stream (or its font) as its
 * appearance and lend it its own, permitted kind. */
static int give_role(struct audit *a, const ps_obj *ref, int kind, void *ud)
{
	const struct role_src *src = ud;
	ps_xent e;

	if (!ref || ref->kind != PS_REF)
		return 0;
	if (ps_xref_as_of(a->xref, ref->u.ref.num, src->sec + 1, &e) && e.type != 0 &&
	    !(src->old && each_role_ref(a, src->old, src->kind_old, is_same_ref, (void *)ref) > 0))
		return 0;
	return add_role(a, ref, kind);
}

/* The roles of note 4: what the changed objects of revision SEC (their
 * new versions N; O the old ones, K1 their kind) use other objects as. */
static int note_roles(struct audit *a, const ps_obj *n, int kind, const ps_obj *o, int k1, int sec)
{
	struct role_src src = {o, k1, sec};

	return each_role_ref(a, n, kind, give_role, &src);
}

/* ---- judging a change (note 5) --------------------------------------------- */

/* The fully qualified name of field F as of SEC (12.7.4.2). */
static int field_name(struct audit *a, const ps_obj *f, int sec, char *out, size_t n)
{
	const ps_obj *parts[32];
	ps_obj *owned[32];
	int np = 0, i, rc = 0;
	ps_buf b = PS_BUF_INIT;
	const ps_obj *cur = f;

	memset(owned, 0, sizeof owned);
	while (cur && cur->kind == PS_DICT && np < 32) {
		ps_obj *p = NULL;
		parts[np] = ps_dict_get(cur, "T");
		rc = ps_auditsig_resolve(a, ps_dict_get(cur, "Parent"), sec, &p, &owned[np]);
		if (rc < 0)
			break;
		np++;
		cur = p;
	}
	for (i = np - 1; rc == 0 && i >= 0; i--) {
		const ps_obj *t = parts[i];
		if (!t || t->kind != PS_STR)
			continue;
		if (b.len)
			ps_buf_putc(&b, '.');
		if (ps_text_to_utf8(a->ctx, t->u.str.p, t->u.str.len, &b) < 0)
			ps_buf_putc(&b, '?');
	}
	for (i = 0; i < np; i++)
		ps_obj_free(owned[i]);
	out[0] = 0;
	if (rc == 0 && !b.oom && b.len)
		snprintf(out, n, "%.*s", (int)b.len, (const char *)b.data);
	ps_buf_free(&b);
	return rc;
}

/* Does lock G cover field NAME? */
static int locked(const struct sigrec *g, const char *name)
{
	int i, listed = 0;

	if (g->fieldmdp == PDFSTAMP_FIELDMDP_ALL)
		return 1;
	if (g->fieldmdp != PDFSTAMP_FIELDMDP_INCLUDE && g->fieldmdp != PDFSTAMP_FIELDMDP_EXCLUDE)
		return 0;
	for (i = 0; i < g->nfields; i++) {
		size_t l = strlen(g->fields[i]);
		if (!strcmp(g->fields[i], name) ||
		    (!strncmp(g->fields[i], name, l) && name[l] == '.'))
			listed = 1;
	}
	return g->fieldmdp == PDFSTAMP_FIELDMDP_INCLUDE ? listed : !listed;
}

/* Is NUM, as signed by G, the appearance of a widget of a field G locks? */
static int ap_of_locked(struct audit *a, uint32_t num, const struct sigrec *g, int *rc)
{
	const struct vent *r;
	size_t n = roles_at(a, num, g->sec, &r), i;
	int hit = 0;

	*rc = 0;
	for (i = 0; i < n && !hit && *rc == 0; i++) {
		ps_obj *w = NULL;
		char name[128];
		if ((r[i].role != VR_AP_WIDGET && r[i].role != VR_AP_SIG) || !r[i].owner)
			continue;
		if ((*rc = ps_auditsig_load(a, r[i].owner, g->sec, &w)) == 0 && w &&
		    (*rc = field_name(a, w, g->sec, name, sizeof name)) == 0 && name[0])
			hit = locked(g, name);
		ps_obj_free(w);
	}
	return hit;
}

/* One change being judged: the object as of SEC + 1 (O) and SEC (N). */
struct chg {
	int sec;
	uint32_t num;
	ps_obj *o, *n;
	uint16_t og, ng;
	int action;
	int vchange;                 /* a field's /V differs */
	int flags;                   /* REC_* */
	int kind;                    /* with REC_FIXED: the kind for every signature */
	const char *field;           /* the field's full name, or NULL */
	char why[160];               /* with REC_FIXED: the reason */
};

/* Is the new version N a widget that shows (12.5.6.19; 12.7.5.5 asks a
 * signature under a certification to be invisible, note 5)? */
static int visible_widget(const ps_obj *n)
{
	const ps_obj *r = ps_dict_get(n, "Rect");
	double v[4] = {0, 0, 0, 0};
	int64_t f = 0;
	size_t i;

	if (!n || n->kind != PS_DICT || !ps_dict_get(n, "AP"))
		return 0;
	if (ps_obj_int(ps_dict_get(n, "F"), &f) == 0 && (f & (2 | 32)))
		return 0; /* Hidden or NoView (Table 167) */
	if (ps_array_len(r) != 4)
		return 1; /* no readable /Rect: take it as shown */
	for (i = 0; i < 4; i++) {
		if (ps_obj_num(ps_array_get(r, i), &v[i]) < 0)
			v[i] = 0;
	}
	return (v[2] - v[0]) * (v[2] - v[0]) > 1e-6 && (v[3] - v[1]) * (v[3] - v[1]) > 1e-6;
}

/* The first signature made before SEC whose shown widget the annotation
 * N's /Rect overlaps, -1 if none (note 5). */
static int covers_widget(const struct audit *a, const ps_obj *n, int sec)
{
	const ps_obj *r = ps_dict_get(n, "Rect");
	double v[4], t;
	size_t i;
	int k;

	if (ps_array_len(r) != 4 || !ps_dict_get(n, "Subtype"))
		return -1;
	for (i = 0; i < 4; i++)
		if (ps_obj_num(ps_array_get(r, i), &v[i]) < 0)
			return -1;
	if (v[0] > v[2])
		t = v[0], v[0] = v[2], v[2] = t;
	if (v[1] > v[3])
		t = v[1], v[1] = v[3], v[3] = t;
	for (k = 0; k < a->r->nsigs; k++) {
		const struct sigrec *h = &a->sigs[k];
		if (h->sec > sec && h->has_rect && v[0] < h->rect[2] && h->rect[0] < v[2] &&
		    v[1] < h->rect[3] && h->rect[1] < v[3])
			return k;
	}
	return -1;
}

/* Is revision SEC closed by a signature (a document timestamp if TS)
 * that covers it exactly and whose CMS signs its bytes (note 5)? */
static int sealed(struct audit *a, int sec, int ts, int *rc)
{
	int i;

	*rc = 0;
	for (i = 0; i < a->r->nsigs; i++) {
		struct sigrec *h = &a->sigs[i];
		if (h->sec != sec || !h->exact || (ts && !h->timestamp))
			continue;
		if ((*rc = ps_auditsig_real(a, i)) < 0)
			return 0;
		if (h->real > 0)
			return 1;
	}
	return 0;
}

static int in_policy(const struct sigrec *g, uint32_t num)
{
	return num && g->npolicy &&
	       bsearch(&num, g->policy, g->npolicy, sizeof *g->policy, cmp_u32) != NULL;
}

static int new_kind(struct audit *a, const struct chg *c, int *rc);
static int role_kind(struct audit *a, int role, const struct chg *c, int *rc);

/* The kind of change C for signature G (note 5), with *WHY when the kind
 * follows from more than the object's role. */
static int kind_for(struct audit *a, const struct chg *c, const struct sigrec *g, int *existed,
                    char *why, size_t nwhy, int *rc)
{
	const struct vent *r;
	ps_xent es;
	size_t nr, i;
	int k = -1;

	*rc = 0;
	why[0] = 0;
	a->cur_S = g->sec;
	a->old_annot = 0;
	*existed = existed_at(a, c->num, g->sec, &es);
	nr = roles_at(a, c->num, g->sec, &r);
	if (*existed) {
		uint16_t gen_then = es.type == 1 ? (uint16_t)es.aux : 0;
		if (c->n && c->ng != gen_then) {
			snprintf(why, nwhy,
			         "the generation of a signed object changed (%u to %u): the signed "
			         "references no longer lead to it", gen_then, c->ng);
			return PDFSTAMP_CHANGE_OTHER;
		}
		for (i = 0; i < nr && *rc == 0; i++)
			k = worse(k, role_kind(a, r[i].role, c, rc));
		if (k < 0) {
			snprintf(why, nwhy, "an object with no role in the signed revision");
			k = PDFSTAMP_CHANGE_OTHER;
		}
		return k;
	}
	if (nr == 0 && a->views && a->views[g->sec].built) {
		nr = (size_t)ps_auditview_refers(a, &a->views[g->sec], c->num, rc);
		if (*rc < 0)
			return -1;
	}
	if (nr > 0) {
		/* a number the signed revision referred to (a dangling reference,
		 * the shadow attacks' hidden object): the signed bytes reach it,
		 * so it changes what they show, whatever it claims to be */
		*existed = 1;
		snprintf(why, nwhy, "a new object under a number the signed revision refers to");
		return PDFSTAMP_CHANGE_OTHER;
	}
	return new_kind(a, c, rc);
}

/* Judges change C against every signature made before it (note 5) and
 * records it. */
static int record(struct audit *a, struct chg *c)
{
	struct pdfstamp_audit_revision *rv = &a->r->revisions[a->ns - (c->sec > 0 ? c->sec : 1)];
	struct pdfstamp_audit_change *ch;
	int i, rc = 0, judged = 0;

	if (++a->nchanges > MAX_CHANGES)
		return ps_err(a->ctx, PDFSTAMP_E_UNSUPPORTED,
		              "more than %d changes after the first signature", MAX_CHANGES);
	if (ps_vec_grow((void **)&rv->changes, (size_t)rv->nchanges, sizeof *ch) < 0)
		return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	ch = &rv->changes[rv->nchanges++];
	memset(ch, 0, sizeof *ch);
	ch->object = c->num;
	ch->generation = c->n ? c->ng : c->og;
	ch->kind = c->flags & REC_FIXED ? c->kind : PDFSTAMP_CHANGE_OTHER;
	ch->action = c->action;
	ch->signature = -1;
	snprintf(ch->field, sizeof ch->field, "%s", c->field ? c->field : "");
	if (c->flags & REC_FIXED)
		snprintf(ch->reason, sizeof ch->reason, "%s", c->why);
	for (i = 0; i < a->r->nsigs; i++) {
		const struct sigrec *g = &a->sigs[i];
		char why[160];
		int existed = 0, ok, kind;
		if (g->sec <= c->sec)
			continue; /* made in this revision or later */
		if (c->flags & REC_FIXED) {
			kind = c->kind;
			snprintf(why, sizeof why, "%s", c->why);
			existed = 1;
		} else {
			kind = kind_for(a, c, g, &existed, why, sizeof why, &rc);
			if (rc < 0)
				return rc;
		}
		/* signing and timestamps must be real (note 5) */
		if (kind == PDFSTAMP_CHANGE_SIGNATURE || kind == PDFSTAMP_CHANGE_DOC_TIMESTAMP) {
			int ts = kind == PDFSTAMP_CHANGE_DOC_TIMESTAMP,
			    ok2 = sealed(a, c->sec, ts, &rc);
			if (rc < 0)
				return rc;
			if (!ok2) {
				snprintf(why, sizeof why,
				         "%s not closed by a %s that signs its revision",
				         ts ? "a document timestamp" : "signing",
				         ts ? "document timestamp" : "signature");
				kind = PDFSTAMP_CHANGE_ANNOTATION;
			} else if ((g->docmdp == 1 || g->docmdp == 2) && !existed &&
			           visible_widget(c->n)) {
				snprintf(why, sizeof why,
				         "a visible signature widget after a certification");
				kind = PDFSTAMP_CHANGE_ANNOTATION;
			}
		}
		ok = pdfstamp_policy_allows(g->docmdp, kind, existed);
		if ((c->flags & REC_SIGVALUE) && existed) {
			ok = 0; /* a signature made before it is changed */
			if (!why[0])
				snprintf(why, sizeof why, "a signature dictionary made before");
		}
		if ((c->flags & REC_ORPHAN) &&
		    (a->secs[g->sec - 1].size < 0 || c->num < a->secs[g->sec - 1].size)) {
			ok = 0; /* note 4: reached only through signed objects */
			if (!why[0])
				snprintf(why, sizeof why, "a new object that no change refers to");
		}
		if (g->docmdp == 0 && kind == PDFSTAMP_CHANGE_ANNOTATION && a->old_annot &&
		    !(c->flags & REC_FIXED)) {
			/* an approval signature permits new annotations and filling
			 * in, not a change of what it showed when made (note 5) */
			ok = 0;
			snprintf(why, sizeof why,
			         "changes an annotation or widget that existed when the approval "
			         "signature was made");
		}
		if (c->vchange && c->field && locked(g, c->field)) {
			ok = 0;
			snprintf(why, sizeof why,
			         "the field is locked by the signature (FieldMDP)");
		}
		if (g->fieldmdp && existed) {
			int lk = ap_of_locked(a, c->num, g, &rc);
			if (rc < 0)
				return rc;
			if (lk) {
				ok = 0;
				snprintf(why, sizeof why,
				         "the appearance of a field the signature locks "
				         "(FieldMDP)");
			}
		}
		if (kind == PDFSTAMP_CHANGE_ANNOTATION && !existed && c->n &&
		    c->n->kind == PS_DICT && !(c->flags & REC_FIXED)) {
			/* an annotation added over a signature's widget; with
			 * --strict only text notes after P=3 (note 5) */
			const ps_obj *st = ps_dict_get(c->n, "Subtype");
			int h = covers_widget(a, c->n, c->sec);
			if (h >= 0 && !why[0])
				snprintf(why, sizeof why,
				         "an annotation added over the widget of signature '%.60s'",
				         a->r->sigs[h].field);
			if ((a->r->flags & PDFSTAMP_AUDIT_STRICT) && g->docmdp == 3 && st &&
			    !ps_obj_is_name(st, "Widget") &&
			    (h >= 0 ||
			     (!ps_obj_is_name(st, "Text") && !ps_obj_is_name(st, "Popup")))) {
				ok = 0;
				snprintf(why, sizeof why,
				         "%s after a P=3 certification (the strict reading)",
				         h >= 0 ? "an annotation over a signature's widget"
				                : "an annotation that draws content");
			}
		}
		if ((a->r->flags & PDFSTAMP_AUDIT_STRICT) && g->docmdp == 1 &&
		    (kind == PDFSTAMP_CHANGE_DSS || kind == PDFSTAMP_CHANGE_DOC_TIMESTAMP)) {
			ok = 0;
			snprintf(why, sizeof why,
			         "a DSS or document timestamp after a P=1 certification (the "
			         "strict reading: Acrobat's)");
		}
		if (in_policy(g, c->num)) {
			ok = 0;
			snprintf(why, sizeof why, "an object the signature's policy is read from");
		}
		if (!judged || !ok) {
			if (!ch->forbidden) {
				ch->kind = kind;
				snprintf(ch->reason, sizeof ch->reason, "%s", why);
			}
			judged = 1;
		}
		if (!ok) {
			if (!ch->forbidden) {
				ch->forbidden = 1;
				ch->signature = i;
			}
			a->r->sigs[i].violated = 1;
		}
	}
	if (ch->forbidden)
		a->r->forbidden++;
	return 0;
}

/* ---- comparing one object across one revision (note 3) -------------------- */

static int streams_equal(struct audit *a, uint32_t num, ps_obj *o, uint16_t og, ps_obj *n,
                         uint16_t ng, int *eq)
{
	ps_buf bo = PS_BUF_INIT, bn = PS_BUF_INIT;
	int rc;

	bo.secret = bn.secret = 1;
	*eq = 0;
	if ((rc = ps_doc_stream_data_as(a->doc, num, og, 0, o, 0, &bo)) == 0 &&
	    (rc = ps_doc_stream_data_as(a->doc, num, ng, 0, n, 0, &bn)) == 0) {
		*eq = bo.len == bn.len && (bo.len == 0 || memcmp(bo.data, bn.data, bo.len) == 0);
		rc = ps_doc_asof_charge(a->doc, (int64_t)bo.len + (int64_t)bn.len);
	}
	ps_buf_free(&bo);
	ps_buf_free(&bn);
	return rc;
}

static int is_chain_xref(const struct audit *a, uint32_t num, int sec, const ps_obj *o)
{
	const ps_section *s = &a->secs[sec - 1];

	return o && o->kind == PS_STREAM && ps_obj_is_name(ps_dict_get(o, "Type"), "XRef") &&
	       (num == s->stream_num || num == s->xrefstm_num);
}

/* Appends every number O refers to (its direct structure, of a depth the
 * parser bounds) to *V (*N). */
static int collect_refs(struct audit *a, const ps_obj *o, uint32_t **v, size_t *n)
{
	size_t i;
	int rc = 0;

	if (!o)
		return 0;
	switch (o->kind) {
	case PS_REF:
		if (*n >= MAX_REFS)
			return ps_err(a->ctx, PDFSTAMP_E_UNSUPPORTED,
			              "a revision refers to more than %zu objects", MAX_REFS);
		return push_u32(a->ctx, v, n, o->u.ref.num);
	case PS_ARRAY:
		for (i = 0; i < o->u.arr.len && rc == 0; i++)
			rc = collect_refs(a, o->u.arr.items[i], v, n);
		return rc;
	case PS_DICT:
		for (i = 0; i < o->u.dict.len && rc == 0; i++)
			rc = collect_refs(a, o->u.dict.ents[i].val, v, n);
		return rc;
	case PS_STREAM:
		return collect_refs(a, o->u.stm.dict, v, n);
	default:
		return 0;
	}
}

/* N, the new version of a changed object or trailer key, O its previous
 * version (NULL: none): every number N refers to goes to a->refd, those
 * that O does not name to a->newrefd as well. */
static int note_refs(struct audit *a, const ps_obj *n, const ps_obj *o)
{
	uint32_t *old = NULL;
	size_t nold = 0, i, from = a->nrefd;
	int rc;

	if ((rc = collect_refs(a, n, &a->refd, &a->nrefd)) < 0 ||
	    (rc = collect_refs(a, o, &old, &nold)) < 0)
		goto out;
	nold = ps_auditsig_uniq(old, nold);
	for (i = from; i < a->nrefd && rc == 0; i++)
		if (!nold || !bsearch(&a->refd[i], old, nold, sizeof *old, cmp_u32))
			rc = push_u32(a->ctx, &a->newrefd, &a->nnewrefd, a->refd[i]);
out:
	free(old);
	return rc;
}

static int referred(const struct audit *a, uint32_t num)
{
	return a->nrefd && bsearch(&num, a->refd, a->nrefd, sizeof *a->refd, cmp_u32) != NULL;
}

/* Is NUM one of the chain's xref streams (a stream section, or a hybrid
 * section's /XRefStm)? */
static int chain_xref_num(const struct audit *a, uint32_t num)
{
	int i;

	for (i = 0; i < a->ns; i++)
		if (num && (a->secs[i].stream_num == num || a->secs[i].xrefstm_num == num))
			return 1;
	return 0;
}

/* Does a signed revision older than SEC give NUM a role (auditview.c)? */
static int has_role(const struct audit *a, uint32_t num, int sec)
{
	const struct vent *r;
	int i;

	for (i = 0; i < a->r->nsigs; i++)
		if (a->sigs[i].sec > sec && roles_at(a, num, a->sigs[i].sec, &r) > 0)
			return 1;
	return 0;
}

static int is_objstm(const ps_obj *o)
{
	return o && o->kind == PS_STREAM && ps_obj_is_name(ps_dict_get(o, "Type"), "ObjStm");
}

/* The kind of change C from the objects themselves (note 4): for an
 * object that did not exist when the signature judging it was made. */
static int new_kind(struct audit *a, const struct chg *c, int *rc)
{
	ps_obj *o = c->o, *n = c->n;
	int kind = -1, k1, k2, sec = c->sec;

	k1 = own_kind(a, c->num, o, sec + 1, rc);
	if (*rc < 0)
		return -1;
	k2 = own_kind(a, c->num, n, sec, rc);
	if (*rc < 0)
		return -1;
	if (o && n && k1 == k2 && o->kind == PS_DICT && n->kind == PS_DICT &&
	    (k1 == PDFSTAMP_CHANGE_CATALOG ||
	     (k1 == PDFSTAMP_CHANGE_PAGE_TREE && is_page(o) && is_page(n)) ||
	     (k1 == PDFSTAMP_CHANGE_FORM_FIELD && ps_dict_get(o, "Fields") &&
	      ps_dict_get(n, "Fields"))))
		kind = dict_diff_kind(a, o, n, sec,
		                      k1 == PDFSTAMP_CHANGE_FORM_FIELD ? WHAT_ACROFORM : k1, rc);
	else if ((o && o->kind == PS_ARRAY) || (n && n->kind == PS_ARRAY))
		kind = array_diff_kind(a, o, n, sec, -1, rc);
	else
		kind = worse(k1, k2);
	if (*rc < 0)
		return -1;
	if (kind < 0 || ((o && o->kind == PS_STREAM) || (n && n->kind == PS_STREAM))) {
		int role = role_of(a, c->num);
		if (role >= 0 && (kind < 0 || kind == PDFSTAMP_CHANGE_OTHER))
			kind = role;
	}
	if (kind < 0)
		kind = o && o->kind == PS_STREAM && !ps_dict_get(o, "Subtype")
		       ? PDFSTAMP_CHANGE_PAGE_CONTENT : PDFSTAMP_CHANGE_OTHER;
	/* a field or widget created or deleted is no filling in (Table 257):
	 * its widget is an annotation (12.5.6.19); note 4 */
	if (kind == PDFSTAMP_CHANGE_FORM_FIELD && (!o || !n)) {
		const ps_obj *d = o ? o : n;
		if (d->kind == PS_DICT && !ps_dict_get(d, "Fields") &&
		    (is_field(d) || ps_obj_is_name(ps_dict_get(d, "Subtype"), "Widget")))
			kind = PDFSTAMP_CHANGE_ANNOTATION;
	}
	return kind;
}

/* Does the new /AP value AP (as of SEC) name an object that existed at S
 * other than as an appearance (a signed object re-pointed: note 5)? */
static int ap_repointed(struct audit *a, const ps_obj *ap, int sec, int depth, int *rc)
{
	ps_obj *d = NULL, *owned = NULL;
	size_t i;
	int hit = 0;

	*rc = 0;
	if (!ap || depth > 2)
		return 0;
	if (ap->kind == PS_REF && existed_at(a, ap->u.ref.num, a->cur_S, NULL)) {
		const struct vent *r;
		size_t n = roles_at(a, ap->u.ref.num, a->cur_S, &r), j;
		int as_ap = 0;
		for (j = 0; j < n; j++)
			as_ap |= r[j].role == VR_AP_ANNOT || r[j].role == VR_AP_WIDGET ||
			         r[j].role == VR_AP_SIG;
		if (!as_ap)
			return 1;
	}
	if ((*rc = ps_auditsig_resolve(a, (ps_obj *)ap, sec, &d, &owned)) < 0)
		return 0;
	for (i = 0; d && d->kind == PS_DICT && i < d->u.dict.len && !hit && *rc == 0; i++)
		hit = ap_repointed(a, d->u.dict.ents[i].val, sec, depth + 1, rc);
	ps_obj_free(owned);
	return hit;
}

/* Did signature field (or widget) NUM have a value as of a->cur_S (its
 * own /V, or its parent's)?  1, 0, or a negative error. */
static int signed_then(struct audit *a, uint32_t num, int *rc)
{
	ps_obj *f = NULL, *p = NULL;
	int yes = 0;

	if ((*rc = ps_auditsig_load(a, num, a->cur_S, &f)) < 0)
		return *rc;
	if (f && f->kind == PS_DICT) {
		yes = ps_dict_get(f, "V") != NULL;
		if (!yes && ps_dict_get(f, "Parent") && ps_dict_get(f, "Parent")->kind == PS_REF) {
			if ((*rc = ps_auditsig_load(a, ps_dict_get(f, "Parent")->u.ref.num,
			                            a->cur_S, &p)) == 0)
				yes = ps_obj_is_name(ps_dict_get(p, "FT"), "Sig") &&
				      ps_dict_get(p, "V") != NULL;
		}
	}
	ps_obj_free(p);
	ps_obj_free(f);
	return *rc < 0 ? *rc : yes;
}

/* A field or widget that existed when signed (SIG: of a signature field):
 * filling in changes its value and its own appearance, nothing else
 * (note 5); the rest is form structure, judged as an annotation. */
static int field_diff_kind(struct audit *a, const struct chg *c, int sig, int *rc)
{
	const ps_obj *o = c->o, *n = c->n;
	int k = -1, pass, fill = sig ? PDFSTAMP_CHANGE_SIGNATURE : PDFSTAMP_CHANGE_FORM_FIELD;

	*rc = 0;
	/* a signature field that was signed when signed: its value and look
	 * are the signer's; redrawing them is no signing (note 5) */
	if (sig && (*rc = signed_then(a, c->num, rc)) > 0) {
		*rc = 0;
		fill = PDFSTAMP_CHANGE_ANNOTATION;
		a->old_annot = 1;
	}
	if (*rc < 0)
		return -1;
	if (!o || !n || o->kind != PS_DICT || n->kind != PS_DICT) {
		a->old_annot = 1;
		return PDFSTAMP_CHANGE_ANNOTATION;
	}
	for (pass = 0; pass < 2; pass++) {
		const ps_obj *d = pass ? n : o, *e = pass ? o : n;
		size_t i;
		for (i = 0; i < d->u.dict.len && *rc == 0; i++) {
			const char *key = d->u.dict.ents[i].key;
			const ps_obj *ev = ps_dict_get(e, key);
			int kk;
			if ((pass && ev) || (ev && ps_obj_equal(d->u.dict.ents[i].val, ev, 0)))
				continue;
			if (!strcmp(key, "V") || !strcmp(key, "RV") || !strcmp(key, "AS") ||
			    !strcmp(key, "M"))
				kk = fill;
			else if (!strcmp(key, "AP"))
				kk = ap_repointed(a, ps_dict_get(n, "AP"), c->sec, 0, rc)
				     ? PDFSTAMP_CHANGE_ANNOTATION : fill;
			else if (!strcmp(key, "Kids"))
				kk = array_diff_kind(a, ps_dict_get(o, key), ps_dict_get(n, key),
				                     c->sec, PDFSTAMP_CHANGE_ANNOTATION, rc);
			else
				/* /F, /Rect, /MK, /Parent, /A, /AA, /DA, /Ff... */
				kk = PDFSTAMP_CHANGE_ANNOTATION;
			if (kk == PDFSTAMP_CHANGE_ANNOTATION)
				a->old_annot = 1;
			k = worse(k, kk);
		}
	}
	return k < 0 ? fill : k;
}

/* Does an /Info update change only /ModDate and /Producer (what form
 * fillers such as iText write on every save)?  Judged as form filling:
 * permitted where filling is, forbidden under P=1 (note 5). */
static int info_bookkeeping(const ps_obj *o, const ps_obj *n)
{
	int pass;

	if (!o || !n || o->kind != PS_DICT || n->kind != PS_DICT)
		return 0;
	for (pass = 0; pass < 2; pass++) {
		const ps_obj *d = pass ? n : o, *e = pass ? o : n;
		size_t i;
		for (i = 0; i < d->u.dict.len; i++) {
			const char *key = d->u.dict.ents[i].key;
			if (!strcmp(key, "ModDate") || !strcmp(key, "Producer"))
				continue;
			if (!ps_obj_equal(d->u.dict.ents[i].val, ps_dict_get(e, key), 0))
				return 0;
		}
	}
	return 1;
}

/* The kind of change C to an object that had role ROLE when signed
 * (auditview.c note 2): the role says what the object is, the keys that
 * differ say what changed. */
static int role_kind(struct audit *a, int role, const struct chg *c, int *rc)
{
	ps_obj *o = c->o, *n = c->n;
	int dict2 = o && n && o->kind == PS_DICT && n->kind == PS_DICT;

	*rc = 0;
	switch (role) {
	case VR_CATALOG:
		return dict2 ? dict_diff_kind(a, o, n, c->sec, PDFSTAMP_CHANGE_CATALOG, rc)
		             : PDFSTAMP_CHANGE_CATALOG;
	case VR_PAGE:
		return dict2 ? dict_diff_kind(a, o, n, c->sec, PDFSTAMP_CHANGE_PAGE_TREE, rc)
		             : PDFSTAMP_CHANGE_PAGE_TREE;
	case VR_PAGES:
		return PDFSTAMP_CHANGE_PAGE_TREE;
	case VR_CONTENT:
		return PDFSTAMP_CHANGE_PAGE_CONTENT;
	case VR_ANNOTS:
		return array_diff_kind(a, o, n, c->sec, PDFSTAMP_CHANGE_ANNOTATION, rc);
	case VR_ANNOT:
	case VR_AP_ANNOT:
		a->old_annot = 1;
		return PDFSTAMP_CHANGE_ANNOTATION;
	case VR_WIDGET:
	case VR_FIELD:
		return field_diff_kind(a, c, 0, rc);
	case VR_SIGWIDGET:
	case VR_SIGFIELD:
		return field_diff_kind(a, c, 1, rc);
	case VR_KIDS:
	case VR_FIELDS:
		return array_diff_kind(a, o, n, c->sec, PDFSTAMP_CHANGE_FORM_FIELD, rc);
	case VR_ACROFORM:
		return dict2 ? dict_diff_kind(a, o, n, c->sec, WHAT_ACROFORM, rc)
		             : PDFSTAMP_CHANGE_CATALOG;
	case VR_DR:
		return o && n && extends(o, n, 0) ? PDFSTAMP_CHANGE_FORM_FIELD
		                                  : PDFSTAMP_CHANGE_CATALOG;
	case VR_AP_WIDGET:
		return PDFSTAMP_CHANGE_FORM_FIELD;
	case VR_AP_SIG:
		/* a signature's appearance redrawn in place: no signing (note 5) */
		a->old_annot = 1;
		return PDFSTAMP_CHANGE_ANNOTATION;
	case VR_SIGDICT:
		return PDFSTAMP_CHANGE_SIGNATURE;
	case VR_DSS:
		return PDFSTAMP_CHANGE_DSS;
	case VR_INFO:
		if (info_bookkeeping(o, n))
			return PDFSTAMP_CHANGE_FORM_FIELD;
		return PDFSTAMP_CHANGE_METADATA;
	case VR_METADATA:
		return PDFSTAMP_CHANGE_METADATA;
	default:
		return PDFSTAMP_CHANGE_CATALOG; /* VR_PERMS */
	}
}

/* A revision after a signature that cannot be read as written (note 5):
 * a finding against every signature made before it, not an error. */
static int record_damaged(struct audit *a, int sec, uint32_t num, const char *msg)
{
	struct chg c;

	memset(&c, 0, sizeof c);
	c.sec = sec;
	c.num = num;
	c.action = PDFSTAMP_CHANGE_MODIFIED;
	c.flags = REC_FIXED;
	c.kind = PDFSTAMP_CHANGE_DAMAGED;
	snprintf(c.why, sizeof c.why, "%s", msg);
	return record(a, &c);
}

static int compare_one(struct audit *a, uint32_t num, int sec, int pass)
{
	struct chg c;
	int rc;
	char field[128] = "";

	memset(&c, 0, sizeof c);
	c.sec = sec;
	c.num = num;
	a->cur_S = 0;
	/* an object of a revision after a signature that does not read is a
	 * finding (note 5); one of a signed revision is an error */
	if ((rc = ps_doc_load_as_of(a->doc, num, sec + 1, &c.o, &c.og)) < 0) {
		if (rc != PDFSTAMP_E_NOMEM && sec + 1 < a->limit)
			rc = pass ? record_damaged(a, sec + 1, num, pdfstamp_ctx_errmsg(a->ctx))
			          : 0;
		goto out;
	}
	if ((rc = ps_doc_load_as_of(a->doc, num, sec, &c.n, &c.ng)) < 0) {
		if (rc != PDFSTAMP_E_NOMEM)
			rc = pass ? record_damaged(a, sec, num, pdfstamp_ctx_errmsg(a->ctx)) : 0;
		goto out;
	}
	if (!c.o && !c.n)
		goto out;
	/* the chain's own xref streams and object streams as containers: by
	 * number, never by what they say, and never one a signed revision
	 * used (a content stream typed /ObjStm is still page content) */
	if (!has_role(a, num, sec) && chain_xref_num(a, num) &&
	    (!c.n || is_chain_xref(a, num, sec, c.n)) &&
	    (!c.o || (c.o->kind == PS_STREAM && ps_obj_is_name(ps_dict_get(c.o, "Type"), "XRef"))))
		goto out;
	if (!has_role(a, num, sec) && (!c.o || is_objstm(c.o)) && (!c.n || is_objstm(c.n)))
		goto out;
	if (c.o && c.n && c.og == c.ng && ps_obj_equal(c.o, c.n, 1)) {
		int eq = 1;
		if (c.o->kind == PS_STREAM &&
		    (rc = streams_equal(a, num, c.o, c.og, c.n, c.ng, &eq)) < 0)
			goto out;
		if (eq)
			goto out;
	}
	if (pass == 0) {
		/* first pass: only the roles the new versions give */
		int k1 = own_kind(a, num, c.o, sec + 1, &rc), k2;
		if (rc < 0)
			goto out;
		k2 = own_kind(a, num, c.n, sec, &rc);
		if (rc == 0 && (rc = note_roles(a, c.n, worse(k1, k2), c.o, k1, sec)) == 0)
			rc = note_refs(a, c.n, c.o);
		goto out;
	}
	c.action = !c.o ? PDFSTAMP_CHANGE_ADDED
	           : !c.n ? PDFSTAMP_CHANGE_FREED : PDFSTAMP_CHANGE_MODIFIED;
	/* a form field's value or its widget's look: FieldMDP (note 5) */
	if ((c.o && c.o->kind == PS_DICT && (is_field(c.o) || is_widget(c.o))) ||
	    (c.n && c.n->kind == PS_DICT && (is_field(c.n) || is_widget(c.n)))) {
		static const char *const fill[] = {"V", "RV", "AS", "AP"};
		size_t i;
		c.vchange = !c.o || !c.n;
		for (i = 0; i < 4 && !c.vchange; i++)
			c.vchange = !ps_obj_equal(ps_dict_get(c.o, fill[i]),
			                          ps_dict_get(c.n, fill[i]), 0);
		if ((rc = field_name(a, c.n ? c.n : c.o, c.n ? sec : sec + 1, field,
		                     sizeof field)) < 0)
			goto out;
		c.field = field[0] ? field : NULL;
	}
	if (c.o && c.o->kind == PS_DICT && ps_dict_get(c.o, "ByteRange"))
		c.flags |= REC_SIGVALUE;
	/* a new object that no change of its revision refers to is reached
	 * through signed objects only (a reference there that led nowhere
	 * when they were signed): it changes what they show (note 4).  Only
	 * numbers below the signed revision's /Size count: writers number
	 * new objects from /Size up, and some (poppler's pdfsig) leave
	 * unreferenced appearance streams there.  A new integer is exempt:
	 * ps_doc_load_as_of makes a stream's indirect /Length direct, so the
	 * reference to it is not seen here. */
	if (!c.o && c.n->kind != PS_INT && !referred(a, num))
		c.flags |= REC_ORPHAN; /* whatever it says it is: the shadow
		                        * attacks' hidden object */
	rc = record(a, &c);
out:
	ps_obj_free(c.o);
	ps_obj_free(c.n);
	return rc;
}

/* A trailer that points /Root or /Info elsewhere (note 3). */
static int compare_trailer(struct audit *a, int sec)
{
	struct chg c;
	int info, rc;

	memset(&c, 0, sizeof c);
	c.sec = sec;
	c.flags = REC_FIXED;
	for (info = 0; info < 2; info++) {
		const ps_obj *o = ps_auditsig_trailer_key(a, sec + 1, info),
		             *n = ps_auditsig_trailer_key(a, sec, info);
		if (ps_obj_equal(o, n, 0))
			continue;
		c.num = n && n->kind == PS_REF ? n->u.ref.num : 0;
		c.kind = info ? PDFSTAMP_CHANGE_METADATA : PDFSTAMP_CHANGE_CATALOG;
		c.action = o ? PDFSTAMP_CHANGE_MODIFIED : PDFSTAMP_CHANGE_ADDED;
		snprintf(c.why, sizeof c.why, "the trailer's /%s points elsewhere",
		         info ? "Info" : "Root");
		if ((rc = record(a, &c)) < 0)
			return rc;
	}
	/* a /Size that shrinks drops objects for readers that honour it (7.5.5) */
	{
		int64_t so = a->secs[sec].size, sn = a->secs[sec - 1].size;
		if (so >= 0 && (sn < 0 || sn < so)) {
			c.num = 0;
			c.kind = PDFSTAMP_CHANGE_CATALOG;
			c.action = PDFSTAMP_CHANGE_MODIFIED;
			snprintf(c.why, sizeof c.why, "the trailer's /Size shrinks");
			if ((rc = record(a, &c)) < 0)
				return rc;
		}
	}
	return 0;
}

static int audit_revision(struct audit *a, int sec)
{
	struct rev *rv = &a->revs[sec];
	size_t i, n0 = rv->ncands;
	int rc, pass;

	/* object streams this revision redefines: their members too */
	for (i = 0; i < n0; i++) {
		ps_obj *o = NULL;
		int s2;
		for (s2 = sec; s2 <= sec + 1; s2++) {
			uint32_t *m = NULL;
			size_t nm = 0, j;
			ps_xent e;
			if (!ps_xref_as_of(a->xref, rv->cands[i], s2, &e) || e.type != 1)
				continue;
			if ((rc = ps_auditsig_load(a, rv->cands[i], s2, &o)) < 0 ||
			    (is_objstm(o) &&
			     (rc = ps_doc_objstm_members(a->doc, rv->cands[i], s2, &m, &nm)) < 0)) {
				ps_obj_free(o);
				if (rc == PDFSTAMP_E_NOMEM || s2 >= a->limit)
					return rc;
				/* a revision after a signature that does not read */
				if ((rc = record_damaged(a, s2, rv->cands[i],
				                         pdfstamp_ctx_errmsg(a->ctx))) < 0)
					return rc;
				o = NULL;
				continue;
			}
			ps_obj_free(o);
			o = NULL;
			for (j = 0; j < nm; j++) {
				if ((rc = push_u32(a->ctx, &rv->cands, &rv->ncands, m[j])) < 0) {
					free(m);
					return rc;
				}
			}
			free(m);
		}
	}
	rv->ncands = ps_auditsig_uniq(rv->cands, rv->ncands);
	a->nroles = 0;
	a->nrefd = 0;
	a->nnewrefd = 0;
	for (i = 0; i < 2; i++)
		if ((rc = note_refs(a, ps_auditsig_trailer_key(a, sec, (int)i),
		                    ps_auditsig_trailer_key(a, sec + 1, (int)i))) < 0)
			return rc;
	if ((rc = compare_trailer(a, sec)) < 0)
		return rc;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < rv->ncands; i++)
			if ((rc = compare_one(a, rv->cands[i], sec, pass)) < 0)
				return ps_err_wrap(a->ctx, rc, "revision %d, object %u",
				                   rev_no(a, sec), rv->cands[i]);
		if (pass == 0 && a->nroles)
			qsort(a->roles, a->nroles, sizeof *a->roles, cmp_role);
		if (pass == 0) {
			a->nrefd = ps_auditsig_uniq(a->refd, a->nrefd);
			a->nnewrefd = ps_auditsig_uniq(a->newrefd, a->nnewrefd);
		}
	}
	/* a reference this revision adds to an object no revision defines:
	 * readers that meet it rebuild their xref by scanning (note 5).  One
	 * the same object's previous version already held leads nowhere new
	 * (a /DSS whose dangling entry `pdfstamp dss` kept); the revision
	 * that added it was judged for it. */
	for (i = 0; i < a->nnewrefd; i++) {
		char why[96];
		if (existed_at(a, a->newrefd[i], sec, NULL))
			continue;
		snprintf(why, sizeof why,
		         "a reference to object %u, which is not defined as of this revision",
		         a->newrefd[i]);
		if ((rc = record_damaged(a, sec, a->newrefd[i], why)) < 0)
			return rc;
	}
	return 0;
}

/* ---- the revision chain (note 1) ------------------------------------------- */

static int count_entry(struct audit *a, uint32_t num, const ps_xent *x)
{
	struct pdfstamp_audit_revision *rv;
	ps_xent prev;
	int s = x->sec, existed;

	if (s < 1 || s > a->ns)
		return 0;
	rv = &a->r->revisions[a->ns - s];
	existed = s < a->ns && ps_xref_as_of(a->xref, num, s + 1, &prev) && prev.type != 0;
	if (x->type == 0 && !existed)
		return 0;
	if (x->type == 0)
		rv->freed++;
	else if (existed)
		rv->modified++;
	else
		rv->added++;
	if (s >= a->limit)
		return 0;
	if (x->type == 1) {
		struct rev *r = &a->revs[s];
		if (ps_vec_grow((void **)&r->listed, r->nlisted, sizeof *r->listed) < 0)
			return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		r->listed[r->nlisted].off = x->off;
		r->listed[r->nlisted].num = num;
		r->listed[r->nlisted++].gen = x->aux;
	}
	return push_u32(a->ctx, &a->revs[s].cands, &a->revs[s].ncands, num);
}

/* ---- identity: objects no cross-reference section lists (note 5) ---------- */

#define SCAN_CHUNK ((size_t)1 << 20)
#define SCAN_OVERLAP 64
#define MAX_UNLISTED 1000

static int cmp_lobj(const void *x, const void *y)
{
	const struct lobj *p = x, *q = y;

	return p->off < q->off ? -1 : p->off > q->off;
}

/* The section a byte at X of a revision after a signature belongs to: the
 * oldest section that starts after X, of those newer than LIMIT; 1 (the
 * newest) for bytes after every section. */
static int owner_of(const struct audit *a, int64_t x)
{
	int sec, best = 1;

	for (sec = a->limit - 1; sec >= 1; sec--)
		if (a->secs[sec - 1].off > x) {
			best = sec;
			break;
		}
	return best;
}

/* Is the "N G obj" at X one that section SEC lists there, or one of the
 * chain's xref streams?  Bytes inside the data of a stream written after
 * the signature are no exception: a reader that rebuilds its xref by
 * scanning finds an object there as well as anywhere. */
static int listed_at(struct audit *a, int sec, uint32_t num, uint32_t gen, int64_t x)
{
	struct rev *r = &a->revs[sec];
	struct lobj key = {x, 0, 0};
	size_t lo = 0, hi = r->nlisted;
	int i;

	for (i = 0; i < a->ns; i++)
		if (a->secs[i].off == x || a->secs[i].xrefstm == x)
			return 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_lobj(&r->listed[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->nlisted && r->listed[lo].off == x; lo++)
		if (r->listed[lo].num == num && r->listed[lo].gen == gen)
			return 1;
	return 0;
}

static int regular(uint8_t c)
{
	return !ps_is_space(c) && !strchr("()<>[]{}/%", c);
}

/* Parses "N G obj" at P of BUF[0..N): 1 with the numbers, else 0. */
static int obj_header(const uint8_t *b, size_t n, size_t p, uint32_t *num, uint32_t *gen)
{
	uint64_t v = 0, g = 0;
	size_t q = p, d;

	for (d = 0; q < n && b[q] >= '0' && b[q] <= '9' && d < 10; q++, d++)
		v = v * 10 + (uint64_t)(b[q] - '0');
	if (d == 0 || q >= n || !ps_is_space(b[q]) || v > PS_MAX_OBJNUM)
		return 0;
	while (q < n && ps_is_space(b[q]))
		q++;
	for (d = 0; q < n && b[q] >= '0' && b[q] <= '9' && d < 6; q++, d++)
		g = g * 10 + (uint64_t)(b[q] - '0');
	if (d == 0 || q >= n || !ps_is_space(b[q]) || g > 65535)
		return 0;
	while (q < n && ps_is_space(b[q]))
		q++;
	if (q + 3 > n || memcmp(b + q, "obj", 3) != 0 || (q + 3 < n && regular(b[q + 3])))
		return 0;
	*num = (uint32_t)v;
	*gen = (uint32_t)g;
	return 1;
}

/* Every "N G obj" in the bytes after the oldest signed revision must be
 * one its revision's section lists at that offset (note 5): readers that
 * rebuild a damaged cross-reference table by scanning (poppler, MuPDF)
 * take an unlisted one instead of the signed object. */
static int scan_unlisted(struct audit *a)
{
	ps_buf b = PS_BUF_INIT;
	int64_t start = -1, off, size = ps_doc_size(a->doc);
	int i, rc = 0, found = 0;

	for (i = 0; i < a->r->nsigs; i++)
		if (a->sigs[i].sec == a->limit && a->sigs[i].exact && a->sigs[i].end > start)
			start = a->sigs[i].end;
	if (start < 0)
		start = a->secs[a->limit - 1].off + 1;
	for (i = 1; i < a->limit; i++)
		if (a->revs[i].nlisted > 1)
			qsort(a->revs[i].listed, a->revs[i].nlisted, sizeof *a->revs[i].listed,
			      cmp_lobj);
	for (off = start; off < size && rc == 0 && found < MAX_UNLISTED;) {
		size_t p, n;
		int64_t next;
		if ((rc = ps_doc_pread(a->doc, off, SCAN_CHUNK, &b)) < 0)
			break;
		n = b.len;
		if (n == 0)
			break;
		next = off + (int64_t)n;
		for (p = 0; p < n && found < MAX_UNLISTED; p++) {
			uint32_t num, gen;
			int64_t x = off + (int64_t)p;
			if (b.data[p] < '0' || b.data[p] > '9' || (p > 0 && regular(b.data[p - 1])))
				continue;
			if (p + SCAN_OVERLAP > n && next < size)
				break; /* read again from here with the next chunk */
			if (!obj_header(b.data, n, p, &num, &gen))
				continue;
			{
				int sec = owner_of(a, x);
				if (!listed_at(a, sec, num, gen, x)) {
					struct chg c;
					memset(&c, 0, sizeof c);
					c.sec = sec;
					c.num = num;
					c.og = c.ng = (uint16_t)gen;
					c.action = PDFSTAMP_CHANGE_ADDED;
					c.flags = REC_FIXED;
					c.kind = PDFSTAMP_CHANGE_DAMAGED;
					snprintf(c.why, sizeof c.why,
					         "object %u %u defined at offset %lld is not "
					         "listed by its revision's cross-reference section",
					         num, gen, (long long)x);
					if ((rc = record(a, &c)) < 0)
						break;
					found++;
				}
			}
		}
		if (p < n && next < size && found < MAX_UNLISTED && rc == 0)
			next = off + (int64_t)p;
		if (next <= off)
			break;
		off = next;
	}
	ps_buf_free(&b);
	return rc;
}

/* ---- the entry point ---------------------------------------------------------- */

void pdfstamp_audit_clear(struct pdfstamp_audit_report *r)
{
	unsigned version, flags;
	int i, k;

	if (!r)
		return;
	for (i = 0; i < r->nsigs; i++) {
		for (k = 0; k < r->sigs[i].nfields; k++)
			free(r->sigs[i].fields[k]);
		free(r->sigs[i].fields);
	}
	free(r->sigs);
	for (i = 0; i < r->nrevisions; i++)
		free(r->revisions[i].changes);
	free(r->revisions);
	version = r->version;
	flags = r->flags;
	memset(r, 0, sizeof *r);
	r->version = version;
	r->flags = flags;
}

int pdfstamp_audit(pdfstamp_doc *doc, struct pdfstamp_audit_report *r)
{
	struct audit a;
	struct ps_xref_info xi;
	struct ps_doc_security ds;
	const ps_xshadow *hidden;
	ps_ctx *ctx;
	int docmdp = 0, incomplete = 0, rc, i, sec;
	uint32_t num;
	size_t k, nhidden;

	if (!doc || !r)
		return doc ? ps_err(ps_doc_ctx(doc), PDFSTAMP_E_USAGE,
		                    "pdfstamp_audit: NULL argument")
		           : PDFSTAMP_E_USAGE;
	ctx = ps_doc_ctx(doc);
	if (r->version != PDFSTAMP_AUDIT_REPORT_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "pdfstamp_audit: unknown report version %u",
		              r->version);
	pdfstamp_audit_clear(r);
	ps_doc_security(doc, &ds);
	if (ds.sec && !ds.authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the document is encrypted and not yet authenticated");
	if ((rc = ps_xref_load_all(doc)) < 0)
		return rc;
	memset(&a, 0, sizeof a);
	a.xref = ps_doc_xref(doc);
	ps_xref_info(a.xref, &xi);
	if (xi.hidden_lost)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the revisions redefine too many objects to audit");
	a.doc = doc;
	a.ctx = ctx;
	a.enc_num = ds.encrypt_num;
	a.r = r;
	a.secs = ps_xref_sections(a.xref, &a.ns);
	/* note 7: what reading older revisions may decode, object streams
	 * (doc.c) and compared stream data together */
	ps_doc_asof_cap(doc, 4 * ps_doc_size(doc) + ((int64_t)64 << 20));
	if (!(r->revisions = calloc((size_t)a.ns, sizeof *r->revisions)) ||
	    !(a.revs = calloc((size_t)a.ns + 2, sizeof *a.revs))) {
		rc = ps_err(a.ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	r->nrevisions = a.ns;
	for (i = 0; i < a.ns; i++) {
		const ps_section *s = &a.secs[a.ns - 1 - i];
		r->revisions[i].offset = s->off;
		r->revisions[i].xref = s->kind;
	}
	if ((rc = ps_policy_sig_fields(doc, &docmdp, &incomplete, ps_auditsig_add, &a)) < 0)
		goto out;
	if (incomplete) {
		rc = ps_err(a.ctx, PDFSTAMP_E_UNSUPPORTED,
		            "the form field tree is nested too deeply (or /Perms /DocMDP is not a "
		            "signature) to know every signature");
		goto out;
	}
	{
		int64_t visits = 0;
		for (sec = 2; sec <= a.ns; sec++)
			if ((rc = ps_auditsig_old(&a, sec, &visits)) < 0)
				goto out;
	}
	if ((rc = ps_auditsig_stray(&a)) < 0)
		goto out;
	a.limit = 0;
	for (i = 0; i < r->nsigs; i++)
		if (a.sigs[i].sec > a.limit)
			a.limit = a.sigs[i].sec;
	for (num = ps_xref_next_slot(a.xref, 0); num; num = ps_xref_next_slot(a.xref, num))
		if ((rc = count_entry(&a, num, ps_xref_slot(a.xref, num))) < 0)
			goto out;
	hidden = ps_xref_hidden(a.xref, &nhidden);
	for (k = 0; k < nhidden; k++)
		if ((rc = count_entry(&a, hidden[k].num, &hidden[k].e)) < 0)
			goto out;
	/* the view of every signed revision that later ones change (note 4) */
	if (a.limit > 1) {
		if (!(a.views = calloc((size_t)a.ns + 1, sizeof *a.views))) {
			rc = ps_err(a.ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < r->nsigs; i++) {
			int S = a.sigs[i].sec;
			if (S > 1 && !a.views[S].built &&
			    (rc = ps_auditview_build(&a, S, &a.views[S])) < 0)
				goto out;
		}
		if ((rc = scan_unlisted(&a)) < 0)
			goto out;
	}
	/* bytes after the readable revisions (PDFSTAMP_OPEN_SALVAGE): a
	 * damaged revision after every signature (note 5) */
	{
		int64_t toff = 0, tlen = 0;
		char why[128];
		if (r->nsigs > 0 && pdfstamp_doc_damaged_tail(doc, &toff, &tlen, why, sizeof why)) {
			struct chg c;
			memset(&c, 0, sizeof c);
			c.action = PDFSTAMP_CHANGE_ADDED;
			c.flags = REC_FIXED;
			c.kind = PDFSTAMP_CHANGE_DAMAGED;
			snprintf(c.why, sizeof c.why,
			         "the %lld bytes from offset %lld are no readable revision: %.60s",
			         (long long)tlen, (long long)toff, why);
			r->revisions[a.ns - 1].audited = 1;
			if ((rc = record(&a, &c)) < 0)
				goto out;
		}
	}
	for (sec = a.limit - 1; sec >= 1; sec--) {
		r->revisions[a.ns - sec].audited = 1;
		if ((rc = audit_revision(&a, sec)) < 0)
			goto out;
	}
	r->verdict = r->nsigs == 0 ? PDFSTAMP_AUDIT_UNSIGNED : PDFSTAMP_AUDIT_OK;
	for (i = 0; i < r->nsigs; i++)
		if (r->sigs[i].violated)
			r->verdict = PDFSTAMP_AUDIT_VIOLATION;
	r->bytes_read = ps_doc_bytes_read(doc);
	rc = 0;
out:
	for (i = 0; a.sigs && i < r->nsigs; i++) {
		for (k = 0; k < (size_t)a.sigs[i].nfields; k++)
			free(a.sigs[i].fields[k]);
		free(a.sigs[i].fields);
		free(a.sigs[i].policy);
	}
	free(a.sigs);
	for (i = 0; a.revs && i < a.ns + 2; i++) {
		free(a.revs[i].cands);
		free(a.revs[i].listed);
	}
	free(a.revs);
	for (i = 0; a.views && i <= a.ns; i++)
		ps_auditview_free(&a.views[i]);
	free(a.views);
	ps_doc_asof_cap(doc, 0);
	free(a.roles);
	free(a.refd);
	free(a.newrefd);
	return rc;
}
