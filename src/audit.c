/*
 * audit.c - pdfstamp_audit: what changed after each signature, and does
 * the signature's policy permit it.
 *
 * DESIGN NOTES
 *
 * Place: above doc.c (objects as of a revision: ps_doc_load_as_of,
 * ps_xref_as_of) and policy.c (the signatures: ps_doc_sig_fields; the one
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
 *  2. Signatures.  Every signature field with a value (ps_doc_sig_fields,
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
 *  4. Kinds (enum pdfstamp_change_kind), from the object's own keys, its
 *     old and new versions both (the more restrictive kind wins, so an
 *     object cannot disguise itself by changing type):
 *        catalog: by the keys that differ: /AcroForm form-field, /DSS dss,
 *                 /Metadata metadata, any other catalog.  In /AcroForm:
 *                 /Fields by its elements, /SigFlags signature; what
 *                 redraws every field is catalog: /NeedAppearances true
 *                 (12.7.3), /DA, /Q, /CO, /XFA, an entry of /DR changed
 *                 or removed (entries added are form-field)
 *        page:    only /Annots differs: annotation (the annotations added
 *                 or removed decide: a document timestamp's widget is
 *                 doc-timestamp); /Contents, /Resources page-content;
 *                 other keys page-tree.  /Pages nodes: page-tree.
 *        fields and widgets: form-field; a signature field signature, or
 *                 doc-timestamp when its value is one; signature
 *                 dictionaries likewise.  A field or widget created or
 *                 deleted (the object, or an element of /Fields, /Annots,
 *                 /Kids) is an annotation: filling in a form (Table 257,
 *                 P=2) changes existing fields; a new widget draws over
 *                 the page like any annotation (12.5.6.19).
 *        annotations: annotation; /DSS, /VRI and their entries: dss;
 *        the trailer's /Info and XMP streams: metadata; /Encrypt: encryption
 *        arrays: by the elements added or removed (or all of them):
 *                 annotations, fields, content streams, pages
 *        streams without /Type: what a changed object of the same revision
 *                 uses them as (/AP of an annotation or widget, DSS data);
 *                 else a new one is "other" and an existing one
 *                 page-content (an image or form XObject: other).  Such a
 *                 role is given to a new object, or to an existing one only
 *                 if the old version of the object giving it used it the
 *                 same way: a widget whose /AP names the page's content
 *                 stream or font does not lend them its kind.
 *        new objects that no change of their revision (nor its trailer)
 *                 refers to, numbered below the signed revision's /Size:
 *                 forbidden (a signed reference that led nowhere now draws
 *                 them: a shadow).  Numbers from /Size up are not judged
 *                 so (writers leave orphans there): a residual risk.
 *        the trailer: /Root or /Info pointed elsewhere (catalog, metadata);
 *                 a /Size below the previous revision's (objects dropped
 *                 for readers that honour it, 7.5.5): catalog.
 *     A new object of kind other matters only through the changed object
 *     that reaches it, which is judged itself (policy.c note 3).
 *  5. Verdict per change and signature: for every signature whose
 *     revision is older than the change's, pdfstamp_policy_allows(level,
 *     kind, existed-at-signing); a FieldMDP lock forbids a /V change of a
 *     locked field (a lock on a name covers its descendants); an existing
 *     signature dictionary must not change at all.  A forbidden change
 *     names the first signature it breaks.  The report's verdict:
 *     "unsigned" without signatures, else "violation" if any signature is
 *     violated, else "ok".  A violation is a finding, not an error.
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
 *     changes after the first signature and what classifies them.
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
#define WHAT_ACROFORM (-2)         /* dict_diff_kind: an /AcroForm dictionary */

/* ---- small helpers --------------------------------------------------------- */

static const int kind_rank[PDFSTAMP_CHANGE_KINDS] = {
	[PDFSTAMP_CHANGE_DSS] = 1, [PDFSTAMP_CHANGE_DOC_TIMESTAMP] = 1,
	[PDFSTAMP_CHANGE_SIGNATURE] = 2, [PDFSTAMP_CHANGE_FORM_FIELD] = 3,
	[PDFSTAMP_CHANGE_ANNOTATION] = 4, [PDFSTAMP_CHANGE_METADATA] = 5,
	[PDFSTAMP_CHANGE_OTHER] = 6, [PDFSTAMP_CHANGE_PAGE_CONTENT] = 7,
	[PDFSTAMP_CHANGE_PAGE_TREE] = 8, [PDFSTAMP_CHANGE_CATALOG] = 9,
	[PDFSTAMP_CHANGE_ENCRYPTION] = 10,
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
	if (ps_array_grow((void **)v, *n, sizeof **v) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	(*v)[(*n)++] = x;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static size_t uniq_u32(uint32_t *v, size_t n)
{
	size_t i, k = 0;

	qsort(v, n, sizeof *v, cmp_u32);
	for (i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
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
	if (ps_array_grow((void **)&a->roles, a->nroles, sizeof *a->roles) < 0)
		return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	a->roles[a->nroles].num = ref->u.ref.num;
	a->roles[a->nroles++].kind = kind;
	return 0;
}

/* ---- classification (note 4) ----------------------------------------------- */

static int is_dss_dict(const ps_obj *o)
{
	size_t i;

	if (ps_obj_is_name(ps_dict_get(o, "Type"), "DSS") || ps_dict_get(o, "VRI") || ps_dict_get(o, "Certs") ||
	    ps_dict_get(o, "OCSPs") || ps_dict_get(o, "CRLs"))
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
	       (ps_dict_get(o, "T") && (ps_dict_get(o, "Kids") || ps_dict_get(o, "Parent") || ps_dict_get(o, "V")));
}

static int is_page(const ps_obj *o)
{
	return ps_obj_is_name(ps_dict_get(o, "Type"), "Page") ||
	       (!ps_dict_get(o, "Type") && ps_dict_get(o, "Parent") && !ps_dict_get(o, "Kids") &&
	        (ps_dict_get(o, "MediaBox") || ps_dict_get(o, "Contents")) && !ps_dict_get(o, "Subtype"));
}

static int is_pages(const ps_obj *o)
{
	return ps_obj_is_name(ps_dict_get(o, "Type"), "Pages") ||
	       (!ps_dict_get(o, "Type") && ps_dict_get(o, "Kids") && ps_dict_get(o, "Count") && !is_field(o));
}

/* Kind of a field (or widget merged with one) as of SEC. */
static int field_kind(struct audit *a, const ps_obj *o, int sec, int *rc)
{
	ps_obj *v = NULL, *owned = NULL;
	int k;

	*rc = 0;
	if (!ps_obj_is_name(ps_dict_get(o, "FT"), "Sig"))
		return PDFSTAMP_CHANGE_FORM_FIELD;
	if ((*rc = ps_audit_resolve(a, ps_dict_get(o, "V"), sec, &v, &owned)) < 0)
		return -1;
	k = v && ps_audit_is_timestamp_sig(v) ? PDFSTAMP_CHANGE_DOC_TIMESTAMP : PDFSTAMP_CHANGE_SIGNATURE;
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
	if (num && num == a->doc->encrypt_num)
		return PDFSTAMP_CHANGE_ENCRYPTION;
	{
		const ps_obj *info = ps_audit_trailer_key(a, sec, 1);
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
		return ps_audit_is_timestamp_sig(o) ? PDFSTAMP_CHANGE_DOC_TIMESTAMP : PDFSTAMP_CHANGE_SIGNATURE;
	if (is_field(o))
		return field_kind(a, o, sec, rc);
	if (ps_obj_is_name(ps_dict_get(o, "Subtype"), "Widget")) {
		/* a widget of a signature field is part of signing */
		ps_obj *p = NULL, *owned = NULL;
		int k = PDFSTAMP_CHANGE_FORM_FIELD;
		if ((*rc = ps_audit_resolve(a, ps_dict_get(o, "Parent"), sec, &p, &owned)) < 0)
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
		if ((*rc = ps_audit_load(a, e->u.ref.num, sec, &o)) < 0)
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

	if ((*rc = ps_audit_resolve(a, ov, sec + 1, &o, &oo)) < 0 || (*rc = ps_audit_resolve(a, nv, sec, &n, &no)) < 0)
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
		if (!extends(o->u.dict.ents[i].val, ps_dict_get(n, o->u.dict.ents[i].key), depth + 1))
			return 0;
	return 1;
}

static int is_true(const ps_obj *o)
{
	return o && o->kind == PS_BOOL && o->u.b;
}

/* Kind of a change of a dictionary that is a catalog, page, or /AcroForm
 * in both versions: by the keys that differ (note 4). */
static int dict_diff_kind(struct audit *a, const ps_obj *o, const ps_obj *n, int sec, int what, int *rc)
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
				else if (!strcmp(key, "AcroForm") && ev && dv->kind == PS_DICT && ev->kind == PS_DICT)
					kk = dict_diff_kind(a, pass ? ev : dv, pass ? dv : ev, sec, WHAT_ACROFORM, rc);
				else if (!strcmp(key, "AcroForm"))
					kk = PDFSTAMP_CHANGE_FORM_FIELD;
				else
					kk = PDFSTAMP_CHANGE_CATALOG;
			} else if (what == PDFSTAMP_CHANGE_PAGE_TREE) {
				if (!strcmp(key, "Annots"))
					kk = array_diff_kind(a, ps_dict_get(o, key), ps_dict_get(n, key), sec,
					                     PDFSTAMP_CHANGE_ANNOTATION, rc);
				else if (!strcmp(key, "Contents") || !strcmp(key, "Resources"))
					kk = PDFSTAMP_CHANGE_PAGE_CONTENT;
				else
					kk = PDFSTAMP_CHANGE_PAGE_TREE;
			} else { /* /AcroForm */
				if (!strcmp(key, "Fields"))
					kk = array_diff_kind(a, ps_dict_get(o, key), ps_dict_get(n, key), sec,
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
					kk = extends(ps_dict_get(o, key), ps_dict_get(n, key), 0) ? PDFSTAMP_CHANGE_FORM_FIELD
					                                                          : PDFSTAMP_CHANGE_CATALOG;
				else if (!strcmp(key, "DA") || !strcmp(key, "Q") || !strcmp(key, "XFA") ||
				         !strcmp(key, "CO"))
					kk = PDFSTAMP_CHANGE_CATALOG; /* how every field looks, or XFA */
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
	if (ps_xref_as_of(a->doc, ref->u.ref.num, src->sec + 1, &e) && e.type != 0 &&
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
		if ((rc = ps_audit_resolve(a, ps_dict_get(cur, "Parent"), sec, &p, &owned[np])) < 0)
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
		if (!strcmp(g->fields[i], name) || (!strncmp(g->fields[i], name, l) && name[l] == '.'))
			listed = 1;
	}
	return g->fieldmdp == PDFSTAMP_FIELDMDP_INCLUDE ? listed : !listed;
}

static int record(struct audit *a, int sec, uint32_t num, int gen, int kind, int action, int vchange,
                  int flags, const char *field)
{
	struct pdfstamp_audit_revision *rv = &a->r->revisions[a->ns - sec];
	struct pdfstamp_audit_change *c;
	int i;

	if (++a->nchanges > MAX_CHANGES)
		return ps_err(a->ctx, PDFSTAMP_E_UNSUPPORTED, "more than %d changes after the first signature",
		              MAX_CHANGES);
	if (ps_array_grow((void **)&rv->changes, (size_t)rv->nchanges, sizeof *c) < 0)
		return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	c = &rv->changes[rv->nchanges++];
	memset(c, 0, sizeof *c);
	c->object = num;
	c->generation = gen;
	c->kind = kind;
	c->action = action;
	c->signature = -1;
	snprintf(c->field, sizeof c->field, "%s", field ? field : "");
	for (i = 0; i < a->r->nsigs; i++) {
		const struct sigrec *g = &a->sigs[i];
		ps_xent e;
		int existed, ok;
		if (g->sec <= sec)
			continue; /* made in this revision or later */
		existed = num && ps_xref_as_of(a->doc, num, g->sec, &e) && e.type != 0;
		ok = pdfstamp_policy_allows(g->docmdp, kind, existed);
		if ((flags & REC_SIGVALUE) && existed)
			ok = 0; /* a signature made before it is changed */
		if ((flags & REC_ORPHAN) &&
		    (a->doc->sections[g->sec - 1].size < 0 || num < a->doc->sections[g->sec - 1].size))
			ok = 0; /* note 4: reached only through signed objects */
		if (vchange && field && locked(g, field))
			ok = 0;
		if (!ok) {
			c->forbidden = 1;
			if (c->signature < 0)
				c->signature = i;
			a->r->sigs[i].violated = 1;
		}
	}
	if (c->forbidden)
		a->r->forbidden++;
	return 0;
}

/* ---- comparing one object across one revision (note 3) -------------------- */

static int streams_equal(struct audit *a, uint32_t num, ps_obj *o, uint16_t og, ps_obj *n, uint16_t ng,
                         int *eq)
{
	ps_buf bo = PS_BUF_INIT, bn = PS_BUF_INIT;
	int rc;

	bo.secret = bn.secret = 1;
	*eq = 0;
	if ((rc = ps_doc_stream_data_as(a->doc, num, og, 0, o, 0, &bo)) == 0 &&
	    (rc = ps_doc_stream_data_as(a->doc, num, ng, 0, n, 0, &bn)) == 0)
		*eq = bo.len == bn.len && (bo.len == 0 || memcmp(bo.data, bn.data, bo.len) == 0);
	ps_buf_free(&bo);
	ps_buf_free(&bn);
	return rc;
}

static int is_chain_xref(const struct audit *a, uint32_t num, int sec, const ps_obj *o)
{
	const ps_section *s = &a->doc->sections[sec - 1];

	return o && o->kind == PS_STREAM && ps_obj_is_name(ps_dict_get(o, "Type"), "XRef") &&
	       (num == s->stream_num || num == s->xrefstm_num);
}

/* Notes every reference inside O (direct structure, parser-bounded
 * depth) as referred to by a change of the revision being audited. */
static int note_refs(struct audit *a, const ps_obj *o)
{
	size_t i;
	int rc = 0;

	if (!o)
		return 0;
	switch (o->kind) {
	case PS_REF:
		if (a->nrefd >= MAX_REFS)
			return ps_err(a->ctx, PDFSTAMP_E_UNSUPPORTED, "a revision refers to more than %zu objects",
			              MAX_REFS);
		return push_u32(a->ctx, &a->refd, &a->nrefd, o->u.ref.num);
	case PS_ARRAY:
		for (i = 0; i < o->u.arr.len && rc == 0; i++)
			rc = note_refs(a, o->u.arr.items[i]);
		return rc;
	case PS_DICT:
		for (i = 0; i < o->u.dict.len && rc == 0; i++)
			rc = note_refs(a, o->u.dict.ents[i].val);
		return rc;
	case PS_STREAM:
		return note_refs(a, o->u.stm.dict);
	default:
		return 0;
	}
}

static int referred(const struct audit *a, uint32_t num)
{
	return a->nrefd && bsearch(&num, a->refd, a->nrefd, sizeof *a->refd, cmp_u32) != NULL;
}

static int is_objstm(const ps_obj *o)
{
	return o && o->kind == PS_STREAM && ps_obj_is_name(ps_dict_get(o, "Type"), "ObjStm");
}

static int compare_one(struct audit *a, uint32_t num, int sec, int pass)
{
	ps_obj *o = NULL, *n = NULL;
	uint16_t og = 0, ng = 0;
	int rc, kind = -1, k1, k2, action, vchange = 0, flags = 0;
	char field[128] = "";

	if ((rc = ps_doc_load_as_of(a->doc, num, sec + 1, &o, &og)) < 0 ||
	    (rc = ps_doc_load_as_of(a->doc, num, sec, &n, &ng)) < 0)
		goto out;
	if (!o && !n)
		goto out;
	/* the chain's own xref streams and object streams as containers */
	if ((!n || is_chain_xref(a, num, sec, n)) &&
	    (!o || (o->kind == PS_STREAM && ps_obj_is_name(ps_dict_get(o, "Type"), "XRef"))))
		goto out;
	if ((!o || is_objstm(o)) && (!n || is_objstm(n)))
		goto out;
	if (o && n && ps_obj_equal(o, n, 1)) {
		int eq = 1;
		if (o->kind == PS_STREAM && (rc = streams_equal(a, num, o, og, n, ng, &eq)) < 0)
			goto out;
		if (eq)
			goto out;
	}
	k1 = own_kind(a, num, o, sec + 1, &rc);
	if (rc < 0)
		goto out;
	k2 = own_kind(a, num, n, sec, &rc);
	if (rc < 0)
		goto out;
	if (pass == 0) {
		/* first pass: only the roles the new versions give */
		if ((rc = note_roles(a, n, worse(k1, k2), o, k1, sec)) == 0)
			rc = note_refs(a, n);
		goto out;
	}
	action = !o ? PDFSTAMP_CHANGE_ADDED : !n ? PDFSTAMP_CHANGE_FREED : PDFSTAMP_CHANGE_MODIFIED;
	if (o && n && k1 == k2 && o->kind == PS_DICT && n->kind == PS_DICT &&
	    (k1 == PDFSTAMP_CHANGE_CATALOG || (k1 == PDFSTAMP_CHANGE_PAGE_TREE && is_page(o) && is_page(n)) ||
	     (k1 == PDFSTAMP_CHANGE_FORM_FIELD && ps_dict_get(o, "Fields") && ps_dict_get(n, "Fields"))))
		kind = dict_diff_kind(a, o, n, sec, k1 == PDFSTAMP_CHANGE_FORM_FIELD ? WHAT_ACROFORM : k1, &rc);
	else if ((o && o->kind == PS_ARRAY) || (n && n->kind == PS_ARRAY))
		kind = array_diff_kind(a, o, n, sec, -1, &rc);
	else
		kind = worse(k1, k2);
	if (rc < 0)
		goto out;
	if (kind < 0 || ((o && o->kind == PS_STREAM) || (n && n->kind == PS_STREAM))) {
		int role = role_of(a, num);
		if (role >= 0 && (kind < 0 || kind == PDFSTAMP_CHANGE_OTHER))
			kind = role;
	}
	if (kind < 0)
		kind = o && o->kind == PS_STREAM && !ps_dict_get(o, "Subtype") ? PDFSTAMP_CHANGE_PAGE_CONTENT
		                                                                : PDFSTAMP_CHANGE_OTHER;
	/* a field or widget created or deleted is no filling in (Table 257):
	 * its widget is an annotation (12.5.6.19); note 4 */
	if (kind == PDFSTAMP_CHANGE_FORM_FIELD && (!o || !n)) {
		const ps_obj *d = o ? o : n;
		if (d->kind == PS_DICT && !ps_dict_get(d, "Fields") &&
		    (is_field(d) || ps_obj_is_name(ps_dict_get(d, "Subtype"), "Widget")))
			kind = PDFSTAMP_CHANGE_ANNOTATION;
	}
	/* a form field's value: FieldMDP (note 5) */
	if ((o && o->kind == PS_DICT && is_field(o)) || (n && n->kind == PS_DICT && is_field(n))) {
		vchange = !o || !n || !ps_obj_equal(ps_dict_get(o, "V"), ps_dict_get(n, "V"), 0);
		if ((rc = field_name(a, n ? n : o, n ? sec : sec + 1, field, sizeof field)) < 0)
			goto out;
	}
	if (o && o->kind == PS_DICT && ps_dict_get(o, "ByteRange"))
		flags |= REC_SIGVALUE;
	/* a new object that no change of its revision refers to is reached
	 * through signed objects only (a reference there that led nowhere
	 * when they were signed): it changes what they show (note 4).  Only
	 * numbers below the signed revision's /Size count: writers number
	 * new objects from /Size up, and some (poppler's pdfsig) leave
	 * unreferenced appearance streams there, which a reference made
	 * before cannot be told from without walking every signed object.  A
	 * new integer is exempt: ps_doc_load_as_of makes a stream's indirect
	 * /Length direct, so the reference to it is not seen here. */
	if (!o && kind == PDFSTAMP_CHANGE_OTHER && n->kind != PS_INT && !referred(a, num))
		flags |= REC_ORPHAN;
	rc = record(a, sec, num, n ? ng : og, kind, action, vchange, flags, field[0] ? field : NULL);
out:
	ps_obj_free(o);
	ps_obj_free(n);
	return rc;
}

/* A trailer that points /Root or /Info elsewhere (note 3). */
static int compare_trailer(struct audit *a, int sec)
{
	int info, rc;

	for (info = 0; info < 2; info++) {
		const ps_obj *o = ps_audit_trailer_key(a, sec + 1, info), *n = ps_audit_trailer_key(a, sec, info);
		if (ps_obj_equal(o, n, 0))
			continue;
		rc = record(a, sec, n && n->kind == PS_REF ? n->u.ref.num : 0, 0,
		            info ? PDFSTAMP_CHANGE_METADATA : PDFSTAMP_CHANGE_CATALOG,
		            o ? PDFSTAMP_CHANGE_MODIFIED : PDFSTAMP_CHANGE_ADDED, 0, 0, NULL);
		if (rc < 0)
			return rc;
	}
	/* a /Size that shrinks drops objects for readers that honour it (7.5.5) */
	{
		int64_t so = a->doc->sections[sec].size, sn = a->doc->sections[sec - 1].size;
		if (so >= 0 && (sn < 0 || sn < so) &&
		    (rc = record(a, sec, 0, 0, PDFSTAMP_CHANGE_CATALOG, PDFSTAMP_CHANGE_MODIFIED, 0, 0, NULL)) < 0)
			return rc;
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
			if (!ps_xref_as_of(a->doc, rv->cands[i], s2, &e) || e.type != 1)
				continue;
			if ((rc = ps_audit_load(a, rv->cands[i], s2, &o)) < 0)
				return rc;
			if (is_objstm(o) && (rc = ps_doc_objstm_members(a->doc, rv->cands[i], s2, &m, &nm)) < 0) {
				ps_obj_free(o);
				return rc;
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
	rv->ncands = uniq_u32(rv->cands, rv->ncands);
	a->nroles = 0;
	a->nrefd = 0;
	if ((rc = note_refs(a, ps_audit_trailer_key(a, sec, 0))) < 0 || (rc = note_refs(a, ps_audit_trailer_key(a, sec, 1))) < 0)
		return rc;
	if ((rc = compare_trailer(a, sec)) < 0)
		return rc;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < rv->ncands; i++)
			if ((rc = compare_one(a, rv->cands[i], sec, pass)) < 0)
				return ps_err_wrap(a->ctx, rc, "revision %d, object %u", rev_no(a, sec), rv->cands[i]);
		if (pass == 0 && a->nroles)
			qsort(a->roles, a->nroles, sizeof *a->roles, cmp_role);
		if (pass == 0)
			a->nrefd = uniq_u32(a->refd, a->nrefd);
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
	existed = s < a->ns && ps_xref_as_of(a->doc, num, s + 1, &prev) && prev.type != 0;
	if (x->type == 0 && !existed)
		return 0;
	if (x->type == 0)
		rv->freed++;
	else if (existed)
		rv->modified++;
	else
		rv->added++;
	if (s < a->limit)
		return push_u32(a->ctx, &a->revs[s].cands, &a->revs[s].ncands, num);
	return 0;
}

/* ---- the entry point ---------------------------------------------------------- */

void pdfstamp_audit_clear(struct pdfstamp_audit_report *r)
{
	unsigned version;
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
	memset(r, 0, sizeof *r);
	r->version = version;
}

int pdfstamp_audit(pdfstamp_doc *doc, struct pdfstamp_audit_report *r)
{
	struct audit a;
	int docmdp = 0, incomplete = 0, rc, i, sec;
	uint32_t num;
	size_t k;

	if (!doc || !r)
		return doc ? ps_err(doc->ctx, PDFSTAMP_E_USAGE, "pdfstamp_audit: NULL argument") : PDFSTAMP_E_USAGE;
	if (r->version != PDFSTAMP_AUDIT_REPORT_VERSION)
		return ps_err(doc->ctx, PDFSTAMP_E_USAGE, "pdfstamp_audit: unknown report version %u", r->version);
	pdfstamp_audit_clear(r);
	if (doc->encrypted && !doc->authenticated)
		return ps_err(doc->ctx, PDFSTAMP_E_USAGE, "the document is encrypted and not yet authenticated");
	if ((rc = ps_xref_load_all(doc)) < 0)
		return rc;
	if (doc->shadows_lost)
		return ps_err(doc->ctx, PDFSTAMP_E_UNSUPPORTED, "the revisions redefine too many objects to audit");
	memset(&a, 0, sizeof a);
	a.doc = doc;
	a.ctx = doc->ctx;
	a.r = r;
	a.ns = doc->nsections;
	if (!(r->revisions = calloc((size_t)a.ns, sizeof *r->revisions)) ||
	    !(a.revs = calloc((size_t)a.ns + 2, sizeof *a.revs))) {
		rc = ps_err(a.ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	r->nrevisions = a.ns;
	for (i = 0; i < a.ns; i++) {
		const ps_section *s = &doc->sections[a.ns - 1 - i];
		r->revisions[i].offset = s->off;
		r->revisions[i].xref = s->kind;
	}
	if ((rc = ps_doc_sig_fields(doc, &docmdp, &incomplete, ps_audit_add_sig, &a)) < 0)
		goto out;
	if (incomplete) {
		rc = ps_err(a.ctx, PDFSTAMP_E_UNSUPPORTED, "the form field tree is nested too deeply (or /Perms /DocMDP "
		            "is not a signature) to know every signature");
		goto out;
	}
	{
		int64_t visits = 0;
		for (sec = 2; sec <= a.ns; sec++)
			if ((rc = ps_audit_old_sigs(&a, sec, &visits)) < 0)
				goto out;
	}
	a.limit = 0;
	for (i = 0; i < r->nsigs; i++)
		if (a.sigs[i].sec > a.limit)
			a.limit = a.sigs[i].sec;
	for (num = ps_xref_next_slot(doc, 0); num; num = ps_xref_next_slot(doc, num))
		if ((rc = count_entry(&a, num, ps_xref_slot(doc, num))) < 0)
			goto out;
	for (k = 0; k < doc->nshadows; k++)
		if ((rc = count_entry(&a, doc->shadows[k].num, &doc->shadows[k].e)) < 0)
			goto out;
	for (sec = a.limit - 1; sec >= 1; sec--) {
		r->revisions[a.ns - sec].audited = 1;
		if ((rc = audit_revision(&a, sec)) < 0)
			goto out;
	}
	r->verdict = r->nsigs == 0 ? PDFSTAMP_AUDIT_UNSIGNED : PDFSTAMP_AUDIT_OK;
	for (i = 0; i < r->nsigs; i++)
		if (r->sigs[i].violated)
			r->verdict = PDFSTAMP_AUDIT_VIOLATION;
	r->bytes_read = doc->bytes_read;
	rc = 0;
out:
	for (i = 0; a.sigs && i < r->nsigs; i++) {
		for (k = 0; k < (size_t)a.sigs[i].nfields; k++)
			free(a.sigs[i].fields[k]);
		free(a.sigs[i].fields);
	}
	free(a.sigs);
	for (i = 0; a.revs && i < a.ns + 2; i++)
		free(a.revs[i].cands);
	free(a.revs);
	free(a.roles);
	free(a.refd);
	return rc;
}
