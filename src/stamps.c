/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stamps.c - the stamps a document carries: listing them (pdfstamp
 * stamps) and removing those of one ID (pdfstamp unstamp).
 *
 * DESIGN NOTES
 *
 *  1. What counts as a stamp: an entry of a page's /Annots that is a
 *     /Stamp or /FreeText annotation (ISO 32000-2 12.5.6.12, 12.5.6.6),
 *     whoever wrote it; both are what pdfstamp writes.  Its ID is the part
 *     before the dot of an /NM of the form ID "." PAGE
 *     (^[A-Za-z0-9_-]{1,32}\.[1-9][0-9]{0,9}$, pdfstamp(1) STAMP IDS);
 *     any other /NM carries none.  The page in /NM is the page it was
 *     written on and is not checked against where it stands now.
 *  2. Bounds (every byte hostile, later revisions too).  The pages come
 *     from stamp.c's walk (stamp.h: bounded by the file's objects and the
 *     tree depth, /Count checked); per page at most
 *     PDFSTAMP_STAMPS_MAX_ANNOTS entries of /Annots are read, the rest
 *     counted as skipped.  An entry that cannot be read (a reference to a
 *     missing object, an object or a string that does not parse or
 *     decrypt, not a dictionary) is skipped and counted, warned about
 *     for the first MAX_WARN; I/O errors and a lack of memory stop the
 *     call.  A page tree that cannot be walked is an error: the list
 *     would be silently short.
 *  3. The revision that added an annotation N (generation G), in the
 *     public numbering (1 = the original file; section SEC of doc.h,
 *     numbered from the newest, is revision nsections - SEC + 1): start
 *     at the newest section that lists N (the merged entry) and go back
 *     through the older entries that newer sections hide (xref.c note
 *     "Older entries", sorted by number, then section) while each lists N
 *     in use with generation G (type 2 counts as generation 0); the last
 *     one reached is the revision that added it.  A direct annotation
 *     has no number: revision 0.  Its end is where audit places that
 *     revision's end (auditsig.c: the %%EOF line whose startxref names
 *     the section), the signatures are pdfstamp_audit's (every signature
 *     of every revision, each placed in the revision its /ByteRange ends
 *     in): a signature covers revision R when it ends in a revision after
 *     R, or exactly at R's end.  Audit is run once; if it cannot judge
 *     the file, coverage is unknown (-1) and a warning says why; so is
 *     that of a direct annotation in a signed file.
 *  4. Removal (pdfstamp_unstamp).  Every page is read, and every entry
 *     matched, before anything is written; nothing is allocated (no new
 *     number: incr.c note 6 is moot), only new versions of objects in
 *     use: the page (a copy with /Annots filtered, every other key kept)
 *     when /Annots is direct, else the indirect /Annots array (filtered),
 *     once even when pages share it.  Each match marks its entry in a
 *     per-target bitmap, its target found through a bit per object
 *     number, and each new array is built once from the entries left:
 *     linear in the entries read (5,000 pages of stamps removed in a
 *     third of a second), a page or array met twice counted once.  The annotation objects stay, no
 *     longer referenced (7.5.6: an update need not free them).  Removing an
 *     annotation is an annotation change (ISO 32000-2 12.8.2.2, Table
 *     257): the pre-flight of stamp (preflight.c, PS_UPDATE_ANNOTATION)
 *     judges it, after the match and only if there is something to
 *     remove: an ID that is not there writes nothing and is no refusal.
 *     On top of it the rule audit adds for approval signatures (audit.c
 *     note 5: they permit new annotations, not the removal of one that
 *     existed when signed): ps_preflight_removal refuses when an approval
 *     signature was made in or after the revision that added the oldest
 *     annotation to remove, so that unstamp never writes what audit
 *     calls a violation.
 * States: none kept between calls; the list is the caller's.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "policy.h"
#include "audit.h"
#include "stamp.h"
#include "stampid.h"

#define MAX_WARN 5

/* ---- one annotation ------------------------------------------------------- */

/* The string KEY of D, resolved (pdfstamp writes shared strings as
 * indirect objects): 1 and *S, 0 if none (missing, not a string, or an
 * object that cannot be read), or an I/O or memory error. */
static int str_of(ps_doc *doc, const ps_obj *d, const char *key, const ps_obj **s)
{
	ps_obj *v = NULL;
	int rc = ps_doc_resolve(doc, ps_dict_get(d, key), &v);

	*s = NULL;
	if (rc == PDFSTAMP_E_NOMEM || rc == PDFSTAMP_E_IO)
		return rc;
	if (rc < 0 || !v || v->kind != PS_STR)
		return 0;
	*s = v;
	return 1;
}

/* The text string KEY of D as UTF-8 into *OUT (owned, "" if none). */
static int text_of(ps_doc *doc, const ps_obj *d, const char *key, char **out)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_buf b = PS_BUF_INIT;
	const ps_obj *s;
	int rc;

	*out = NULL;
	if ((rc = str_of(doc, d, key, &s)) < 0)
		return rc;
	if (rc == 1 && (rc = ps_text_to_utf8(ctx, s->u.str.p, s->u.str.len, &b)) < 0) {
		ps_buf_free(&b);
		return rc;
	}
	ps_buf_putc(&b, 0);
	if (b.oom || !(*out = (char *)ps_buf_detach(&b, NULL))) {
		ps_buf_free(&b);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	return 0;
}

static void info_free(struct pdfstamp_stamp_info *s)
{
	free(s->contents);
	free(s->author);
	free(s->nm);
	s->contents = s->author = s->nm = NULL;
}

/* Reads the /Annots entry E of page PAGE into *S when it is a stamp (note
 * 1): 1, 0 if it is another annotation, 2 if it cannot be read (note 2:
 * the caller counts it), or an I/O or memory error. */
static int read_annot(ps_doc *doc, int64_t page, const ps_obj *e, struct pdfstamp_stamp_info *s)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_obj *a = NULL, *st;
	const ps_obj *nm, *m;
	double r[4], t;
	int64_t nm_page;
	int rc, i;
	ps_time when;

	memset(s, 0, sizeof *s);
	s->page = page;
	s->revision_end = -1;
	if (e->kind == PS_REF) {
		s->objnum = e->u.ref.num;
		s->generation = e->u.ref.gen;
		if ((rc = ps_doc_lookup(doc, e->u.ref.num, &a)) < 0) {
			if (rc == PDFSTAMP_E_NOMEM || rc == PDFSTAMP_E_IO)
				return rc;
			return 2;
		}
	} else {
		a = (ps_obj *)e;
	}
	if (!a || a->kind != PS_DICT)
		return 2;
	st = ps_dict_get(a, "Subtype");
	if (!ps_obj_is_name(st, "Stamp") && !ps_obj_is_name(st, "FreeText"))
		return 0;
	snprintf(s->subtype, sizeof s->subtype, "%s", st->u.name.p);
	/* /Rect: four numbers (direct, as Table 166 has them) */
	{
		ps_obj *ra = ps_dict_get(a, "Rect");
		if (ra && ra->kind == PS_ARRAY && ps_array_len(ra) == 4) {
			for (i = 0; i < 4; i++)
				if (ps_obj_num(ps_array_get(ra, (size_t)i), &r[i]) < 0 ||
				    !isfinite(r[i]))
					break;
			if (i == 4) {
				if (r[0] > r[2])
					t = r[0], r[0] = r[2], r[2] = t;
				if (r[1] > r[3])
					t = r[1], r[1] = r[3], r[3] = t;
				memcpy(s->rect, r, sizeof r);
				s->has_rect = 1;
			}
		}
	}
	if ((rc = text_of(doc, a, "Contents", &s->contents)) < 0 ||
	    (rc = text_of(doc, a, "T", &s->author)) < 0 || (rc = text_of(doc, a, "NM", &s->nm)) < 0)
		goto fail;
	if ((rc = str_of(doc, a, "NM", &nm)) < 0)
		goto fail;
	if (rc == 1 && !ps_stampid_parse_nm(nm->u.str.p, nm->u.str.len, s->id, &nm_page))
		s->id[0] = '\0'; /* note 1: an /NM that carries no ID */
	if ((rc = str_of(doc, a, "M", &m)) < 0)
		goto fail;
	if (rc == 1 && ps_time_parse_pdf(m->u.str.p, m->u.str.len, &when) == 0)
		ps_time_iso(&when, s->date);
	return 1;
fail:
	info_free(s);
	(void)ctx;
	return rc;
}

/* ---- the walk: every page's stamps ------------------------------------------ */

/* What one page's /Annots holds for the caller: FN is called for each
 * stamp read (S filled, I its index in ANNOTS); 0 or an error. */
struct walk {
	ps_doc *doc;
	int64_t pages;
	int64_t skipped;
	int warned;
	int (*fn)(struct walk *w, int64_t page, uint32_t num, uint16_t gen, ps_obj *dict,
	          ps_obj *annots, size_t i, struct pdfstamp_stamp_info *s);
	void *arg;
};

static int walk_page(void *arg, int64_t page, uint32_t num, uint16_t gen, ps_obj *dict,
                     ps_obj *annots)
{
	struct walk *w = arg;
	ps_ctx *ctx = ps_doc_ctx(w->doc);
	size_t i, n;
	int rc;

	w->pages = page;
	if (!annots)
		return 0;
	if (annots->kind != PS_ARRAY) {
		if (annots->kind != PS_NULL && w->warned++ < MAX_WARN)
			ps_warn(ctx, "page %lld: /Annots is not an array; skipped",
			        (long long)page);
		if (annots->kind != PS_NULL)
			w->skipped++;
		return 0;
	}
	n = ps_array_len(annots);
	if (n > PDFSTAMP_STAMPS_MAX_ANNOTS) {
		w->skipped += (int64_t)(n - PDFSTAMP_STAMPS_MAX_ANNOTS);
		if (w->warned++ < MAX_WARN)
			ps_warn(ctx, "page %lld: /Annots has %zu entries; only the first %d "
			        "are read", (long long)page, n, PDFSTAMP_STAMPS_MAX_ANNOTS);
		n = PDFSTAMP_STAMPS_MAX_ANNOTS;
	}
	for (i = 0; i < n; i++) {
		struct pdfstamp_stamp_info s;
		const ps_obj *e = ps_array_get(annots, i);
		if (e->kind == PS_NULL)
			continue;
		if ((rc = read_annot(w->doc, page, e, &s)) < 0)
			return rc;
		if (rc == 2) {
			w->skipped++;
			if (w->warned++ < MAX_WARN)
				ps_warn(ctx, "page %lld: /Annots entry %zu cannot be read; skipped",
				        (long long)page, i);
			continue;
		}
		if (rc == 0)
			continue;
		rc = w->fn(w, page, num, gen, dict, annots, i, &s);
		info_free(&s);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- listing ------------------------------------------------------------------- */

void pdfstamp_stamps_clear(struct pdfstamp_stamps *list)
{
	int64_t i;
	unsigned v;

	if (!list)
		return;
	for (i = 0; i < list->nstamps && list->stamps; i++)
		info_free(&list->stamps[i]);
	free(list->stamps);
	v = list->version;
	memset(list, 0, sizeof *list);
	list->version = v;
}

static int list_one(struct walk *w, int64_t page, uint32_t num, uint16_t gen, ps_obj *dict,
                    ps_obj *annots, size_t i, struct pdfstamp_stamp_info *s)
{
	struct pdfstamp_stamps *l = w->arg;

	(void)page, (void)num, (void)gen, (void)dict, (void)annots, (void)i;
	if (ps_vec_grow((void **)&l->stamps, (size_t)l->nstamps, sizeof *l->stamps) < 0)
		return ps_err(ps_doc_ctx(w->doc), PDFSTAMP_E_NOMEM, "out of memory");
	l->stamps[l->nstamps++] = *s;
	memset(s, 0, sizeof *s); /* the list owns its strings now */
	return 0;
}

/* Note 3: the section (1 = newest) of the revision that added N/GEN, 0 if
 * no section lists it in use. */
static int added_in(const ps_xref *x, uint32_t num, uint16_t gen)
{
	const ps_xent *e = ps_xref_slot(x, num);
	const ps_xshadow *h;
	size_t nh, lo = 0, hi;
	int sec;

	if (!e || e->type == 0 || (e->type == 1 ? e->aux : 0) != gen)
		return 0;
	sec = e->sec;
	h = ps_xref_hidden(x, &nh);
	hi = nh;
	while (lo < hi) { /* the first hidden entry of NUM */
		size_t mid = lo + (hi - lo) / 2;
		if (h[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nh && h[lo].num == num; lo++) {
		const ps_xent *o = &h[lo].e;
		if (o->sec <= sec)
			continue; /* the same section (a hybrid's two parts) */
		if (o->type == 0 || (o->type == 1 ? o->aux : 0) != gen)
			break;
		sec = o->sec;
	}
	return sec;
}

/* Note 3: each stamp's revision, its end and whether a signature covers it. */
static int place_stamps(ps_doc *doc, struct pdfstamp_stamps *l)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct pdfstamp_audit_report rep = PDFSTAMP_AUDIT_REPORT_INIT;
	const ps_xref *x;
	struct ps_xref_info xi;
	int64_t i;
	int ns, rc, known;

	if ((rc = ps_xref_load_all(doc)) < 0)
		return rc;
	x = ps_doc_xref(doc);
	ps_xref_sections(x, &ns);
	ps_xref_info(x, &xi);
	l->revisions = ns;
	if (xi.hidden_lost && l->nstamps)
		ps_warn(ctx, "the older cross-reference entries could not all be kept; the "
		        "revisions given for stamps may be too recent");
	rc = pdfstamp_audit(doc, &rep);
	if (rc == PDFSTAMP_E_NOMEM || rc == PDFSTAMP_E_IO) {
		pdfstamp_audit_clear(&rep);
		return rc;
	}
	known = rc == 0;
	if (!known)
		ps_warn(ctx, "cannot tell which revisions signatures cover: %s",
		        pdfstamp_ctx_errmsg(ctx));
	l->nsigs = known ? rep.nsigs : -1;
	for (i = 0; i < l->nstamps; i++) {
		struct pdfstamp_stamp_info *s = &l->stamps[i];
		int sec = s->objnum ? added_in(x, (uint32_t)s->objnum, (uint16_t)s->generation) : 0;
		int k;
		s->revision = sec ? ns - sec + 1 : 0;
		s->revision_end = sec ? ps_auditsig_revision_end(doc, sec) : -1;
		s->signed_revision = known && (sec || rep.nsigs == 0) ? 0 : -1;
		for (k = 0; known && sec && k < rep.nsigs; k++) {
			const struct pdfstamp_audit_sig *g = &rep.sigs[k];
			if (g->revision > s->revision ||
			    (g->revision == s->revision && g->covers_revision))
				s->signed_revision = 1;
		}
	}
	pdfstamp_audit_clear(&rep);
	return 0;
}

int pdfstamp_stamps_list(pdfstamp_doc *doc, struct pdfstamp_stamps *list)
{
	ps_ctx *ctx;
	struct walk w;
	int rc;

	if (!doc || !list)
		return doc ? ps_err(ps_doc_ctx(doc), PDFSTAMP_E_USAGE,
		                    "pdfstamp_stamps_list: NULL argument")
		           : PDFSTAMP_E_USAGE;
	ctx = ps_doc_ctx(doc);
	if (list->version != PDFSTAMP_STAMPS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "stamp list of an unknown version");
	pdfstamp_stamps_clear(list);
	{
		struct ps_doc_security ds;
		ps_doc_security(doc, &ds);
		if (ds.sec && !ds.authenticated)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	}
	memset(&w, 0, sizeof w);
	w.doc = doc;
	w.fn = list_one;
	w.arg = list;
	if ((rc = ps_stamp_each_page(doc, walk_page, &w)) < 0)
		return rc;
	list->pages = w.pages;
	list->skipped = w.skipped;
	return place_stamps(doc, list);
}

/* ---- removal (note 4) -------------------------------------------------------- */

/* A new version to write: the page NUM (its /Annots filtered) or the
 * indirect array NUM (filtered). */
struct target {
	uint32_t num;
	uint16_t gen;
	ps_obj *dict;          /* the page (borrowed), NULL for an indirect array */
	ps_obj *src;           /* its /Annots as read (borrowed) */
	uint8_t *drop;         /* 1 for each entry of SRC to leave out (n of them) */
	size_t n;
};

struct unstamp {
	const char *id;
	struct target *t;
	size_t nt;
	uint8_t *seen;         /* a bit per object number that is a target */
	uint32_t *nums;        /* the annotations removed, 0 for a direct one */
	uint16_t *gens;
	size_t n;
	struct pdfstamp_result *res;
	ps_ctx *ctx;
};

/* Marks entry I of the page's /Annots for removal (note 4): linear in the
 * matches, a page met twice (shared page tree nodes) or an array pages
 * share counted once. */
static int unstamp_one(struct walk *w, int64_t page, uint32_t num, uint16_t gen, ps_obj *dict,
                       ps_obj *annots, size_t i, struct pdfstamp_stamp_info *s)
{
	struct unstamp *u = w->arg;
	ps_obj *aref = ps_dict_get(dict, "Annots");
	int indirect = aref && aref->kind == PS_REF;
	uint32_t tnum = indirect ? aref->u.ref.num : num;
	struct target *t = NULL;
	size_t k;
	int rc;

	(void)page;
	if (strcmp(s->id, u->id) != 0)
		return 0;
	if (tnum > PS_MAX_OBJNUM)
		return ps_err(u->ctx, PDFSTAMP_E_FORMAT, "object number %u out of range", tnum);
	if (!u->seen && !(u->seen = calloc(PS_MAX_OBJNUM / 8 + 1, 1)))
		return ps_err(u->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (u->seen[tnum / 8] & (1u << (tnum % 8))) {
		for (k = u->nt; k-- > 0 && !t;)
			if (u->t[k].num == tnum)
				t = &u->t[k];
		if (!t || t->dict != (indirect ? NULL : dict) || t->src != annots)
			return ps_err(u->ctx, PDFSTAMP_E_FORMAT,
			              "object %u is both a page and an /Annots array", tnum);
	} else {
		if (ps_vec_grow((void **)&u->t, u->nt, sizeof *u->t) < 0)
			return ps_err(u->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		t = &u->t[u->nt];
		memset(t, 0, sizeof *t);
		t->num = tnum;
		t->gen = indirect ? aref->u.ref.gen : gen;
		t->dict = indirect ? NULL : dict;
		t->src = annots;
		t->n = ps_array_len(annots);
		if (!(t->drop = calloc(t->n ? t->n : 1, 1)))
			return ps_err(u->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		u->nt++;
		u->seen[tnum / 8] |= (uint8_t)(1u << (tnum % 8));
	}
	if (i >= t->n || t->drop[i])
		return 0; /* met before: counted once */
	t->drop[i] = 1;
	if (ps_vec_grow((void **)&u->nums, u->n, sizeof *u->nums) < 0 ||
	    ps_vec_grow((void **)&u->gens, u->n, sizeof *u->gens) < 0)
		return ps_err(u->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	u->nums[u->n] = (uint32_t)s->objnum;
	u->gens[u->n++] = (uint16_t)s->generation;
	if ((rc = ps_result_add_object(u->ctx, u->res, (uint32_t)s->objnum)) < 0)
		return rc;
	return 0;
}

/* T's /Annots without the entries marked (note 4): a new array (owned). */
static int filtered(ps_ctx *ctx, const struct target *t, ps_obj **out)
{
	size_t k, n = ps_array_len(t->src);

	if (!(*out = ps_new_array()))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (k = 0; k < n; k++) {
		if (k < t->n && t->drop[k])
			continue;
		if (ps_array_push(*out, ps_obj_copy(ps_array_get(t->src, k))) < 0) {
			ps_obj_free(*out);
			*out = NULL;
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
	}
	return 0;
}

/* Note 4: the oldest revision (1 = the original file) that added one of
 * the annotations U removes; 1 for a direct one or one not placed. */
static int oldest_removed(ps_doc *doc, const struct unstamp *u, int *rev)
{
	const ps_xref *x;
	size_t k;
	int ns, rc;

	if ((rc = ps_xref_load_all(doc)) < 0)
		return rc;
	x = ps_doc_xref(doc);
	ps_xref_sections(x, &ns);
	*rev = ns + 1;
	for (k = 0; k < u->n; k++) {
		int sec = u->nums[k] ? added_in(x, u->nums[k], u->gens[k]) : 0;
		int r = sec ? ns - sec + 1 : 1;
		if (r < *rev)
			*rev = r;
	}
	return 0;
}

int pdfstamp_unstamp(pdfstamp_doc *doc, const struct pdfstamp_unstamp_opts *o,
                     const struct pdfstamp_write_opts *wo, struct pdfstamp_result *res)
{
	ps_ctx *ctx;
	ps_update up;
	struct unstamp u;
	struct walk w;
	size_t k;
	int rc;

	if (!doc)
		return PDFSTAMP_E_USAGE;
	ctx = ps_doc_ctx(doc);
	if ((rc = ps_result_begin(ctx, res)) < 0)
		return rc;
	if (!o || o->version != PDFSTAMP_UNSTAMP_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "unstamp options of an unknown version");
	{
		size_t n = o->id ? strlen(o->id) : 0;
		for (k = 0; k < n; k++) {
			char c = o->id[k];
			if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			      (c >= '0' && c <= '9') || c == '_' || c == '-'))
				break;
		}
		if (n == 0 || n > 32 || k != n)
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "a stamp ID is 1 to 32 of the characters A-Z a-z 0-9 _ -");
	}
	memset(&up, 0, sizeof up);
	memset(&u, 0, sizeof u);
	memset(&w, 0, sizeof w);
	u.id = o->id;
	u.res = res;
	u.ctx = ctx;
	w.doc = doc;
	w.fn = unstamp_one;
	w.arg = &u;
	if ((rc = ps_update_begin(doc, wo, &up)) < 0 ||
	    (rc = ps_stamp_each_page(doc, walk_page, &w)) < 0)
		goto out;
	if (u.nt == 0) {
		/* nothing to remove: no update, no output (as pdfstamp_dss) */
		ps_result_unchanged(doc, res);
		if (res && res->version >= 3)
			res->skipped = 1;
		goto out;
	}
	{
		int oldest;
		if ((rc = ps_preflight_update(doc, PS_UPDATE_UNSTAMP)) < 0 ||
		    (rc = oldest_removed(doc, &u, &oldest)) < 0 ||
		    (rc = ps_preflight_removal(doc, oldest)) < 0)
			goto out;
	}
	for (k = 0; k < u.nt; k++) {
		struct target *t = &u.t[k];
		ps_obj *nv, *arr;
		if ((rc = filtered(ctx, t, &arr)) < 0)
			goto out;
		nv = t->dict ? ps_obj_copy(t->dict) : arr;
		/* ps_dict_put takes ARR over, and frees it on failure */
		if (!nv || (t->dict && ps_dict_put(nv, "Annots", arr) < 0)) {
			if (!nv)
				ps_obj_free(arr);
			ps_obj_free(nv);
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		if ((rc = ps_update_put(&up, t->num, t->gen, nv)) < 0)
			goto out;
	}
	rc = ps_update_commit(&up, wo, res);
out:
	for (k = 0; k < u.nt; k++)
		free(u.t[k].drop);
	free(u.t);
	free(u.seen);
	free(u.nums);
	free(u.gens);
	ps_update_free(&up);
	return rc;
}
