/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auditview.c - the signed revision's view for pdfstamp_audit: what every
 * object reachable from a signed revision's catalog was used as when that
 * revision was signed.
 *
 * DESIGN NOTES
 *
 * Place: below audit.c (which asks it), above doc.c (objects as of a
 * revision: ps_doc_load_as_of).  It only reads.
 *
 *  1. Why.  A later revision is written by whoever appended it: anything
 *     it says about an object (its /Type, the keys of its new version,
 *     the roles its other objects give it) is a claim.  The revision a
 *     signature covers is the truth the signer saw.  So the kind of a
 *     change to an object that existed when a signature was made is the
 *     role the object had in that signed revision, found here by walking
 *     from that revision's trailer, every object read as of that revision
 *     (ISO 32000-2 7.5.6: an incremental update only adds; what a reader
 *     saw then is sections SEC.. merged).
 *  2. Roles (enum vrole, audit.h), given by the edge that reaches an
 *     object, never by the object itself:
 *        /Root                          catalog
 *        /Pages tree nodes, their /Kids  pages;  leaves: page
 *        a page's /Contents (and the elements of an array), /Resources,
 *        each value of /Resources and each value of its sub-dictionaries
 *        (fonts, XObjects, graphics states, colour spaces...): content
 *        a page's /Annots array: annots; its elements: annot, or widget /
 *        sig-widget for /Subtype /Widget (a signature widget when its own
 *        or an ancestor field's /FT is /Sig); /Popup: annot
 *        the /AP of an annotation, its sub-dictionaries and streams:
 *        ap-annot, ap-widget or ap-sig after their owner
 *        /AcroForm: acroform; its /Fields: fields; its /DR and /DR's values:
 *        dr; the field tree: field or sig-field (widget / sig-widget when a
 *        field is merged with its widget); /Kids arrays: kids; a signature
 *        field's /V: sig-dict
 *        /DSS, its arrays and their elements, /VRI and its entries: dss
 *        /Metadata of the catalog and the trailer's /Info: metadata
 *        /Perms: perms
 *     An object reached on several edges has every role (a widget whose
 *     /AP names the page's content stream has content too); audit.c takes
 *     the most restrictive kind of them.  Anything reachable otherwise
 *     (/Names, /OpenAction, outlines, fonts below a font dictionary...)
 *     has no role: a change of it is "other, existing", forbidden by every
 *     signature (policy.c note 3).  A reference to a number not in use as
 *     of the revision (a dangling one) is recorded all the same: a new
 *     object later placed under that number is reached through signed
 *     bytes, and takes the role those bytes give it.
 *  3. Bounds.  Each object is expanded at most once per walk type (page
 *     tree, annotation, field, resources, appearance, DSS; one bit per
 *     number and type), so a cycle or a shared subtree costs once; at most
 *     MAX_VIEW_LOADS objects are loaded per view and MAX_VIEW_ROLES roles
 *     recorded, else the audit is refused (PDFSTAMP_E_UNSUPPORTED); field
 *     and page trees are walked with explicit stacks.
 *  4. Cost.  The walk loads the page tree, the annotations, the field tree
 *     and the DSS: dictionaries only, never stream data.  It runs once per
 *     signed revision that a later revision changes.
 *  5. References.  Whether the signed revision refers to a number at all,
 *     on any edge (a form XObject's own resources, an action, a name
 *     tree...), is a second, wider question: every object reachable from
 *     the trailer's /Root and /Info, every reference in it noted in a
 *     bitset (ps_auditview_refers).  It is answered only when a later
 *     revision adds an object (a new object under a number the signed
 *     revision already refers to is reached through signed bytes: the
 *     shadow attacks' hidden object), and it needs every reachable
 *     object, half a million in a scanned archive.  So the references of
 *     every object in use as of the signed revision are read in one pass
 *     in file order (ps_doc_refs_as_of, doc.c note 8) into a graph (an
 *     edge list per number, capped at MAX_VIEW_ROLES edges), which is
 *     then walked in memory from the trailer: each object read once,
 *     objects no path reaches never counted.  An object the pass could
 *     not read is loaded the ordinary way when the walk reaches it, so
 *     that it fails with the message it always had.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "audit.h"

#define MAX_VIEW_LOADS 4000000
#define MAX_VIEW_ROLES ((size_t)16 << 20)
#define MAX_FIELD_DEPTH 64

enum { W_PAGES, W_ANNOT, W_FIELD, W_RES, W_AP, W_DSS, W_TYPES };

struct walk {
	struct audit *a;
	struct view *v;
	int sec;
	uint32_t bound;              /* numbers below it have seen bits */
	uint8_t *seen[W_TYPES];
	int64_t loads;
	uint32_t owner;              /* walk_ap: the owner of the appearance being walked */
};

/* One more than the highest number any section mentions: the size of
 * the tables indexed by object number. */
static uint32_t xref_bound(const struct audit *a)
{
	struct ps_xref_info xi;

	ps_xref_info(a->xref, &xi);
	return xi.bound;
}

static int mark(struct walk *w, const ps_obj *ref, int role)
{
	struct vent *e;

	if (!ref || ref->kind != PS_REF)
		return 0;
	if (w->v->n >= MAX_VIEW_ROLES)
		return ps_err(w->a->ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the signed revision has too many objects to audit "
		              "(more than %zu roles)", MAX_VIEW_ROLES);
	if (ps_vec_grow((void **)&w->v->e, w->v->n, sizeof *w->v->e) < 0)
		return ps_err(w->a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	e = &w->v->e[w->v->n++];
	e->num = ref->u.ref.num;
	e->gen = ref->u.ref.gen;
	e->role = (uint16_t)role;
	e->owner = role == VR_AP_ANNOT || role == VR_AP_WIDGET || role == VR_AP_SIG ? w->owner : 0;
	return 0;
}

/* First visit of NUM by walk type TYPE? */
static int first_visit(struct walk *w, int type, uint32_t num)
{
	uint8_t bit;

	if (num >= w->bound)
		return 0; /* no section mentions it: nothing to load */
	bit = (uint8_t)(1u << (num & 7));
	if (w->seen[type][num >> 3] & bit)
		return 0;
	w->seen[type][num >> 3] |= bit;
	return 1;
}

/* O resolved as of the walk's revision: *out is O itself when direct,
 * else the object loaded into *owned (NULL when free or absent). */
static int resolve(struct walk *w, const ps_obj *o, ps_obj **out, ps_obj **owned)
{
	int rc;

	*owned = NULL;
	*out = (ps_obj *)o;
	if (!o || o->kind != PS_REF)
		return 0;
	*out = NULL;
	if (++w->loads > MAX_VIEW_LOADS)
		return ps_err(w->a->ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the signed revision has too many objects to audit "
		              "(more than %d loaded)", MAX_VIEW_LOADS);
	if ((rc = ps_doc_load_as_of(w->a->doc, o->u.ref.num, w->sec, owned, NULL)) < 0)
		return rc;
	*out = *owned;
	return 0;
}

/* Each value of dictionary (or element of array) O gets ROLE; values that
 * are (or resolve to) dictionaries or arrays are opened DEPTH more levels
 * (expanded once per TYPE). */
static int mark_values(struct walk *w, const ps_obj *o, int role, int type, int depth)
{
	size_t i, n;
	int rc = 0;

	if (!o)
		return 0;
	if (o->kind == PS_STREAM)
		o = o->u.stm.dict;
	n = o->kind == PS_DICT ? o->u.dict.len : o->kind == PS_ARRAY ? o->u.arr.len : 0;
	for (i = 0; i < n && rc == 0; i++) {
		const ps_obj *v = o->kind == PS_DICT ? o->u.dict.ents[i].val : o->u.arr.items[i];
		ps_obj *r = NULL, *owned = NULL;
		if ((rc = mark(w, v, role)) < 0)
			break;
		if (depth <= 0)
			continue;
		if (v->kind == PS_REF && !first_visit(w, type, v->u.ref.num))
			continue;
		if (v->kind == PS_REF || v->kind == PS_DICT || v->kind == PS_ARRAY) {
			if ((rc = resolve(w, v, &r, &owned)) == 0 && r &&
			    (r->kind == PS_DICT || r->kind == PS_ARRAY))
				rc = mark_values(w, r, role, type, depth - 1);
			ps_obj_free(owned);
		}
	}
	return rc;
}

/* VAL (an /AP entry of OWNER) and what it holds: appearance of role ROLE. */
static int walk_ap(struct walk *w, const ps_obj *val, int role, uint32_t owner)
{
	ps_obj *ap = NULL, *owned = NULL;
	int rc;

	w->owner = owner;

	if (!val || (rc = mark(w, val, role)) < 0 ||
	    (val->kind == PS_REF && !first_visit(w, W_AP, val->u.ref.num)))
		return 0;
	if ((rc = resolve(w, val, &ap, &owned)) == 0 && ap && ap->kind == PS_DICT)
		rc = mark_values(w, ap, role, W_AP, 1); /* /N /R /D, and appearance
		                                         * states below them */
	ps_obj_free(owned);
	return rc;
}

/* Is the field (or widget) D, or one of its ancestors, a signature field? */
static int is_sig_field(struct walk *w, const ps_obj *d, int *rc)
{
	ps_obj *cur = (ps_obj *)d, *owned = NULL;
	int depth, sig = 0;

	*rc = 0;
	for (depth = 0; cur && cur->kind == PS_DICT && depth < MAX_FIELD_DEPTH; depth++) {
		const ps_obj *ft = ps_dict_get(cur, "FT"), *parent = ps_dict_get(cur, "Parent");
		ps_obj *next = NULL, *nowned = NULL;
		if (ft) {
			sig = ps_obj_is_name(ft, "Sig");
			break;
		}
		if (!parent || parent->kind != PS_REF)
			break;
		if ((*rc = resolve(w, parent, &next, &nowned)) < 0)
			break;
		ps_obj_free(owned);
		owned = nowned;
		cur = next;
	}
	ps_obj_free(owned);
	return sig;
}

/* An element of a page's /Annots. */
static int walk_annot(struct walk *w, const ps_obj *ref)
{
	ps_obj *an = NULL, *owned = NULL;
	int rc, role, aprole;

	if (!ref || ref->kind != PS_REF || !first_visit(w, W_ANNOT, ref->u.ref.num))
		return 0;
	if ((rc = resolve(w, ref, &an, &owned)) < 0 || !an || an->kind != PS_DICT)
		goto out;
	if (ps_obj_is_name(ps_dict_get(an, "Subtype"), "Widget")) {
		int sig = is_sig_field(w, an, &rc);
		if (rc < 0)
			goto out;
		role = sig ? VR_SIGWIDGET : VR_WIDGET;
		aprole = sig ? VR_AP_SIG : VR_AP_WIDGET;
	} else {
		role = VR_ANNOT;
		aprole = VR_AP_ANNOT;
	}
	if ((rc = mark(w, ref, role)) == 0 &&
	    (rc = walk_ap(w, ps_dict_get(an, "AP"), aprole, ref->u.ref.num)) == 0)
		rc = mark(w, ps_dict_get(an, "Popup"), VR_ANNOT);
out:
	ps_obj_free(owned);
	return rc;
}

static int walk_page(struct walk *w, const ps_obj *page)
{
	ps_obj *x = NULL, *owned = NULL;
	const ps_obj *v;
	size_t i;
	int rc;

	/* /Contents: a stream or an array of them */
	v = ps_dict_get(page, "Contents");
	if ((rc = mark(w, v, VR_CONTENT)) < 0 || (rc = resolve(w, v, &x, &owned)) < 0)
		goto out;
	if (x && x->kind == PS_ARRAY)
		rc = mark_values(w, x, VR_CONTENT, W_RES, 0);
	ps_obj_free(owned);
	owned = NULL;
	if (rc < 0)
		goto out;
	/* /Resources, each resource and each entry of its sub-dictionaries */
	v = ps_dict_get(page, "Resources");
	if ((rc = mark(w, v, VR_CONTENT)) < 0)
		goto out;
	if (!v || (v->kind == PS_REF && !first_visit(w, W_RES, v->u.ref.num)))
		goto annots;
	if ((rc = resolve(w, v, &x, &owned)) < 0)
		goto out;
	if (x && x->kind == PS_DICT)
		rc = mark_values(w, x, VR_CONTENT, W_RES, 1);
	ps_obj_free(owned);
	owned = NULL;
	if (rc < 0)
		goto out;
annots:
	v = ps_dict_get(page, "Annots");
	if ((rc = mark(w, v, VR_ANNOTS)) < 0 || (rc = resolve(w, v, &x, &owned)) < 0)
		goto out;
	for (i = 0; x && x->kind == PS_ARRAY && i < x->u.arr.len && rc == 0; i++)
		rc = walk_annot(w, x->u.arr.items[i]);
out:
	ps_obj_free(owned);
	return rc;
}

/* The page tree from ROOT (the catalog's /Pages), with an explicit stack. */
static int walk_pages(struct walk *w, const ps_obj *root)
{
	uint32_t *stack = NULL;
	size_t sp = 0;
	int rc;

	if (!root || root->kind != PS_REF)
		return 0;
	if ((rc = mark(w, root, VR_PAGES)) < 0)
		return rc;
	if (ps_vec_grow((void **)&stack, sp, sizeof *stack) < 0)
		return ps_err(w->a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	stack[sp++] = root->u.ref.num;
	while (sp > 0 && rc == 0) {
		ps_obj ref, *node = NULL, *owned = NULL, *kids = NULL, *kowned = NULL;
		const ps_obj *kv;
		ref.kind = PS_REF;
		ref.u.ref.num = stack[--sp];
		ref.u.ref.gen = 0;
		if (!first_visit(w, W_PAGES, ref.u.ref.num))
			continue;
		if ((rc = resolve(w, &ref, &node, &owned)) < 0)
			break;
		if (!node || node->kind != PS_DICT) {
			ps_obj_free(owned);
			continue;
		}
		kv = ps_dict_get(node, "Kids");
		if (kv && !ps_obj_is_name(ps_dict_get(node, "Type"), "Page")) {
			size_t i;
			/* an intermediate node (7.7.3.2) */
			rc = mark(w, kv, VR_PAGES);
			if (rc == 0)
				rc = resolve(w, kv, &kids, &kowned);
			for (i = 0;
			     rc == 0 && kids && kids->kind == PS_ARRAY && i < kids->u.arr.len;
			     i++) {
				const ps_obj *k = kids->u.arr.items[i];
				if (k->kind != PS_REF)
					continue;
				if ((rc = mark(w, k, VR_PAGE)) < 0)
					break;
				if (ps_vec_grow((void **)&stack, sp, sizeof *stack) < 0) {
					rc = ps_err(w->a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
					break;
				}
				stack[sp++] = k->u.ref.num;
			}
			ps_obj_free(kowned);
		} else {
			rc = walk_page(w, node);
		}
		ps_obj_free(owned);
	}
	free(stack);
	return rc;
}

/* The field tree of the /AcroForm dictionary ACRO. */
static int walk_fields(struct walk *w, const ps_obj *acro)
{
	struct fstack { uint32_t num; int sig; int depth; } *st = NULL;
	size_t sp = 0, i;
	ps_obj *x = NULL, *owned = NULL;
	const ps_obj *v;
	int rc;

	v = ps_dict_get(acro, "DR");
	if ((rc = mark(w, v, VR_DR)) < 0 || (rc = resolve(w, v, &x, &owned)) < 0)
		goto out;
	if (x && x->kind == PS_DICT)
		rc = mark_values(w, x, VR_DR, W_RES, 0);
	ps_obj_free(owned);
	owned = NULL;
	if (rc < 0)
		goto out;
	v = ps_dict_get(acro, "Fields");
	if ((rc = mark(w, v, VR_FIELDS)) < 0 || (rc = resolve(w, v, &x, &owned)) < 0)
		goto out;
	for (i = 0; x && x->kind == PS_ARRAY && i < x->u.arr.len; i++) {
		const ps_obj *f = x->u.arr.items[i];
		if (f->kind != PS_REF)
			continue;
		if (ps_vec_grow((void **)&st, sp, sizeof *st) < 0) {
			rc = ps_err(w->a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		st[sp].num = f->u.ref.num;
		st[sp].sig = 0;
		st[sp++].depth = 0;
	}
	while (sp > 0 && rc == 0) {
		struct fstack cur = st[--sp];
		ps_obj ref, *fd = NULL, *fo = NULL, *kids = NULL, *ko = NULL;
		const ps_obj *ft;
		int sig, widget;
		ref.kind = PS_REF;
		ref.u.ref.num = cur.num;
		ref.u.ref.gen = 0;
		if (!first_visit(w, W_FIELD, cur.num))
			continue;
		if ((rc = resolve(w, &ref, &fd, &fo)) < 0)
			break;
		if (!fd || fd->kind != PS_DICT) {
			ps_obj_free(fo);
			continue;
		}
		ft = ps_dict_get(fd, "FT");
		sig = ft ? ps_obj_is_name(ft, "Sig") : cur.sig;
		widget = ps_obj_is_name(ps_dict_get(fd, "Subtype"), "Widget");
		rc = mark(w, &ref,
		          widget ? (sig ? VR_SIGWIDGET : VR_WIDGET)
		                 : (sig ? VR_SIGFIELD : VR_FIELD));
		if (rc == 0 && widget)
			rc = walk_ap(w, ps_dict_get(fd, "AP"), sig ? VR_AP_SIG : VR_AP_WIDGET,
			             cur.num);
		if (rc == 0 && sig)
			rc = mark(w, ps_dict_get(fd, "V"), VR_SIGDICT);
		if (rc == 0)
			rc = mark(w, ps_dict_get(fd, "Kids"), VR_KIDS);
		if (rc == 0 && (rc = resolve(w, ps_dict_get(fd, "Kids"), &kids, &ko)) == 0 &&
		    kids && kids->kind == PS_ARRAY) {
			if (cur.depth >= MAX_FIELD_DEPTH) {
				rc = ps_err(w->a->ctx, PDFSTAMP_E_UNSUPPORTED,
				            "the signed form field tree is nested "
				            "more than %d levels deep", MAX_FIELD_DEPTH);
			}
			for (i = 0; rc == 0 && i < kids->u.arr.len; i++) {
				const ps_obj *k = kids->u.arr.items[i];
				if (k->kind != PS_REF)
					continue;
				if (ps_vec_grow((void **)&st, sp, sizeof *st) < 0) {
					rc = ps_err(w->a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
					break;
				}
				st[sp].num = k->u.ref.num;
				st[sp].sig = sig;
				st[sp++].depth = cur.depth + 1;
			}
		}
		ps_obj_free(ko);
		ps_obj_free(fo);
	}
out:
	ps_obj_free(owned);
	free(st);
	return rc;
}

static int walk_dss(struct walk *w, const ps_obj *v)
{
	ps_obj *x = NULL, *owned = NULL;
	int rc;

	if ((rc = mark(w, v, VR_DSS)) < 0 || !v ||
	    (v->kind == PS_REF && !first_visit(w, W_DSS, v->u.ref.num)))
		return rc;
	/* /Certs /OCSPs /CRLs and their streams; /VRI, its entries, their
	 * arrays and streams (12.8.4.3, Tables 261 and 262) */
	if ((rc = resolve(w, v, &x, &owned)) == 0 && x && x->kind == PS_DICT)
		rc = mark_values(w, x, VR_DSS, W_DSS, 3);
	ps_obj_free(owned);
	return rc;
}

static int cmp_vent(const void *x, const void *y)
{
	const struct vent *p = x, *q = y;

	if (p->num != q->num)
		return p->num < q->num ? -1 : 1;
	return p->role < q->role ? -1 : p->role > q->role;
}

int ps_auditview_build(struct audit *a, int sec, struct view *v)
{
	struct walk w;
	ps_obj *root = NULL, *ro = NULL;
	const ps_obj *rref = ps_auditsig_trailer_key(a, sec, 0);
	size_t bytes;
	int rc = 0, t;

	memset(&w, 0, sizeof w);
	w.a = a;
	w.v = v;
	w.sec = sec;
	w.bound = xref_bound(a);
	bytes = ((size_t)w.bound >> 3) + 1;
	for (t = 0; t < W_TYPES; t++)
		if (!(w.seen[t] = calloc(bytes, 1))) {
			rc = ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
	v->sec = sec;
	if ((rc = mark(&w, rref, VR_CATALOG)) < 0 ||
	    (rc = mark(&w, ps_auditsig_trailer_key(a, sec, 1), VR_INFO)) < 0)
		goto out;
	if ((rc = resolve(&w, rref, &root, &ro)) < 0 || !root || root->kind != PS_DICT)
		goto sort;
	if ((rc = mark(&w, ps_dict_get(root, "Metadata"), VR_METADATA)) < 0 ||
	    (rc = mark(&w, ps_dict_get(root, "Perms"), VR_PERMS)) < 0 ||
	    (rc = mark(&w, ps_dict_get(root, "AcroForm"), VR_ACROFORM)) < 0 ||
	    (rc = walk_dss(&w, ps_dict_get(root, "DSS"))) < 0 ||
	    (rc = walk_pages(&w, ps_dict_get(root, "Pages"))) < 0)
		goto out;
	{
		ps_obj *acro = NULL, *ao = NULL;
		if ((rc = resolve(&w, ps_dict_get(root, "AcroForm"), &acro, &ao)) == 0 && acro &&
		    acro->kind == PS_DICT)
			rc = walk_fields(&w, acro);
		ps_obj_free(ao);
		if (rc < 0)
			goto out;
	}
sort:
	if (v->n)
		qsort(v->e, v->n, sizeof *v->e, cmp_vent);
	v->built = 1;
out:
	ps_obj_free(ro);
	for (t = 0; t < W_TYPES; t++)
		free(w.seen[t]);
	return rc;
}

/* The roles of NUM in V: *first and the count (sorted by role). */
size_t ps_auditview_roles(const struct view *v, uint32_t num, const struct vent **first)
{
	size_t lo = 0, hi = v->n, k;

	if (!v->e) {
		*first = NULL; /* no role at all (NULL + 0 is undefined: C11 6.5.6) */
		return 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->e[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = v->e + lo;
	for (k = lo; k < v->n && v->e[k].num == num; k++)
		;
	return k - lo;
}

/* Note 5: the signed revision's references as a graph, the references of
 * every object in use read once, in file order (ps_doc_refs_as_of), then
 * walked in memory from the trailer. */
struct refgraph {
	struct audit *a;
	uint32_t bound;
	uint32_t *first;   /* per number: its first edge in edge[] */
	uint32_t *cnt;     /* per number: its edges; UNREAD: could not be read */
	uint32_t *edge;
	size_t nedge;
	uint8_t *refs;     /* the view's bitset being filled */
	uint8_t *seen;
	uint32_t *q;       /* each number queued at most once: BOUND of them */
	size_t nq;
};
#define UNREAD UINT32_MAX

static int scan_one(void *arg, uint32_t num, const uint32_t *refs, size_t n, int unread)
{
	struct refgraph *g = arg;
	size_t i;

	if (num >= g->bound)
		return 0;
	if (unread) {
		g->cnt[num] = UNREAD;
		return 0;
	}
	if (n > MAX_VIEW_ROLES - g->nedge)
		return ps_err(g->a->ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the signed revision has too many references to audit "
		              "(more than %zu)", MAX_VIEW_ROLES);
	g->first[num] = (uint32_t)g->nedge;
	for (i = 0; i < n; i++) {
		if (refs[i] >= g->bound)
			continue;
		if (ps_vec_grow((void **)&g->edge, g->nedge, sizeof *g->edge) < 0)
			return ps_err(g->a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		g->edge[g->nedge++] = refs[i];
	}
	g->cnt[num] = (uint32_t)(g->nedge - g->first[num]);
	return 0;
}

/* The walk reaches NUM: the signed revision refers to it. */
static int reach(void *arg, uint32_t num)
{
	struct refgraph *g = arg;
	uint8_t bit = (uint8_t)(1u << (num & 7));

	if (num >= g->bound)
		return 0;
	g->refs[num >> 3] |= bit;
	if (!(g->seen[num >> 3] & bit)) {
		g->seen[num >> 3] |= bit;
		g->q[g->nq++] = num;
	}
	return 0;
}

static int build_refs(struct audit *a, struct view *v)
{
	struct refgraph g = { .a = a, .bound = xref_bound(a) + 1 };
	size_t bytes = ((size_t)g.bound >> 3) + 1, head = 0;
	int rc = 0, info;

	v->nrefs = g.bound;
	g.first = calloc(g.bound, sizeof *g.first);
	g.cnt = calloc(g.bound, sizeof *g.cnt);
	g.q = malloc((size_t)g.bound * sizeof *g.q);
	g.seen = calloc(bytes, 1);
	g.refs = v->refs = calloc(bytes, 1);
	if (!g.first || !g.cnt || !g.q || !g.seen || !g.refs)
		rc = ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (rc == 0)
		rc = ps_doc_refs_as_of(a->doc, v->sec, scan_one, &g);
	for (info = 0; info < 2 && rc == 0; info++)
		rc = ps_obj_each_ref(ps_auditsig_trailer_key(a, v->sec, info), reach, &g);
	while (head < g.nq && rc == 0) {
		uint32_t num = g.q[head++], k;
		ps_obj *o = NULL;
		if (g.cnt[num] != UNREAD) {
			for (k = 0; k < g.cnt[num]; k++)
				reach(&g, g.edge[g.first[num] + k]);
			continue;
		}
		/* the scan could not read it: the ordinary load, for its message */
		if ((rc = ps_doc_load_as_of(a->doc, num, v->sec, &o, NULL)) == 0)
			rc = ps_obj_each_ref(o, reach, &g);
		ps_obj_free(o);
	}
	free(g.first);
	free(g.cnt);
	free(g.edge);
	free(g.q);
	free(g.seen);
	return rc;
}

int ps_auditview_refers(struct audit *a, struct view *v, uint32_t num, int *rc)
{
	*rc = 0;
	if (!v->refs && (*rc = build_refs(a, v)) < 0)
		return 0;
	return num < v->nrefs && (v->refs[num >> 3] & (1u << (num & 7)));
}

void ps_auditview_free(struct view *v)
{
	if (!v)
		return;
	free(v->refs);
	free(v->e);
	memset(v, 0, sizeof *v);
}
