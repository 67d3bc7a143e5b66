/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rwxref.c - where the full rewrite put each object, and the output's
 * trailer and cross-reference section built from that (rewrite.c notes 2,
 * 3 and 7).  The section's bytes are xrefw.c's; this file only lists the
 * entries and the trailer's keys.
 *
 * DESIGN NOTES
 *
 *  1. The table (ps_rwoffs) has one row per object written, appended in
 *     file order by the writer (one thread), with room for every object
 *     in use in the input plus the new /Encrypt and xref stream: a row
 *     beyond that is a bug, reported, never a reallocation.  It is sorted
 *     by number once everything is written (ps_rwoffs_sort); an object
 *     written twice is a bug too.
 *  2. The entries (a ps_xrefw_src): object 0, the head of an empty free
 *     list (ISO 32000-2 7.5.4); the rows; and, in an xref stream, the
 *     members of object streams carried over (type 2, as in the input,
 *     7.5.8.3; the old /Encrypt never).  Numbers in none are left out: the
 *     subsections cover only the ranges in use, so the section follows the
 *     objects present, not the highest number (issue 11).
 *  3. The trailer (7.5.5): /Root and /Info (an indirect one only) as the
 *     input has them, /Encrypt the new dictionary, /ID twice the new
 *     16 bytes, /Size one past the highest number (the new /Encrypt, or
 *     the xref stream after it).  Nothing else of the old trailer is kept:
 *     no /Prev (one section), no /XRefStm.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "rewrite.h"
#include "xrefw.h"

int ps_rwoffs_init(ps_ctx *ctx, ps_rwoffs *t, size_t cap)
{
	memset(t, 0, sizeof *t);
	if (!(t->v = ps_buf_bulk_alloc((cap ? cap : 1) * sizeof *t->v))) /* in bulk: buf.c */
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	t->cap = cap;
	return 0;
}

void ps_rwoffs_free(ps_rwoffs *t)
{
	if (!t)
		return;
	free(t->v);
	memset(t, 0, sizeof *t);
}

int ps_rwoffs_add(ps_ctx *ctx, ps_rwoffs *t, uint32_t num, uint16_t gen, int64_t off)
{
	if (t->n == t->cap)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "more objects written than the input has");
	memset(&t->v[t->n], 0, sizeof t->v[t->n]);
	t->v[t->n].num = num;
	t->v[t->n].gen = gen;
	t->v[t->n].off = off;
	t->n++;
	return 0;
}

static int cmp_off(const void *a, const void *b)
{
	uint32_t x = ((const ps_rwoff *)a)->num, y = ((const ps_rwoff *)b)->num;

	return x < y ? -1 : x > y;
}

const ps_rwoff *ps_rwoffs_find(const ps_rwoff *v, size_t n, uint32_t num)
{
	ps_rwoff key;

	key.num = num;
	return n ? bsearch(&key, v, n, sizeof *v, cmp_off) : NULL;
}

int ps_rwoffs_sort(ps_ctx *ctx, ps_rwoffs *t)
{
	size_t i;

	ps_vec_sort(t->v, t->n, sizeof *t->v, cmp_off);
	for (i = 1; i < t->n; i++)
		if (t->v[i].num == t->v[i - 1].num)
			return ps_err(ctx, PDFSTAMP_E_INTERNAL, "object %u is written twice",
			              t->v[i].num);
	return 0;
}

/* ---- the entries (note 2) ------------------------------------------------------- */

struct xout {
	const ps_xref *xref;  /* the input's index */
	uint32_t old_enc;     /* the input's /Encrypt, not carried over */
	const ps_rwoffs *t;
	int members;          /* list the carried-over members (xref stream) */
	int head;             /* object 0 is still to come */
	size_t a;             /* next row of t */
	uint32_t b;           /* next carried-over member, 0 if none */
};

static uint32_t next_member(const struct xout *x, uint32_t after)
{
	uint32_t n;

	for (n = ps_xref_next(x->xref, after); n != 0; n = ps_xref_next(x->xref, n))
		if (ps_xref_get(x->xref, n)->type == 2 && n != x->old_enc)
			return n;
	return 0;
}

static void xout_start(void *ud)
{
	struct xout *x = ud;

	x->head = 1;
	x->a = 0;
	x->b = x->members ? next_member(x, 0) : 0;
}

static int xout_next(void *ud, ps_xrefw_ent *e)
{
	struct xout *x = ud;
	uint32_t na = x->a < x->t->n ? x->t->v[x->a].num : 0, num = x->b;
	const ps_xent *xe;

	if (x->head) {
		x->head = 0;
		e->num = 0;
		e->type = 0;
		e->f2 = 0;
		e->f3 = 65535;
		return 1;
	}
	if (na != 0 && (num == 0 || na <= num)) {
		const ps_rwoff *o = &x->t->v[x->a++];
		if (num == na) /* the catalog, taken out of its object stream */
			x->b = next_member(x, num);
		e->num = na;
		e->type = 1;
		e->f2 = (uint64_t)o->off;
		e->f3 = o->gen;
		return 1;
	}
	if (num == 0)
		return 0;
	xe = ps_xref_get(x->xref, num);
	e->num = num;
	e->type = 2;
	e->f2 = (uint64_t)xe->off;
	e->f3 = xe->aux;
	x->b = next_member(x, num);
	return 1;
}

/* ---- the trailer and the section (note 3) ------------------------------------------ */

int ps_rwxref_write(ps_ctx *ctx, const ps_doc *doc, ps_rwoffs *t, uint32_t enc_num,
                    const uint8_t id[16], int stream_form, int64_t xoff, ps_buf *out)
{
	uint32_t size = enc_num + 1;
	ps_obj *tr = ps_new_dict(), *ida = ps_new_array(), *v;
	const ps_obj *trailer = ps_xref_trailer(ps_doc_xref(doc));
	struct ps_doc_security ds;
	struct xout x = {.xref = ps_doc_xref(doc), .t = t, .members = stream_form, .head = 1};
	ps_xrefw_src src = {xout_start, xout_next, &x};
	int rc = 0;

	ps_doc_security(doc, &ds);
	x.old_enc = ds.encrypt_num;
	if (!tr || !ida)
		goto oom;
	if (stream_form)
		size++; /* the xref stream itself */
	if ((v = ps_dict_get(trailer, "Root")) && ps_dict_put(tr, "Root", ps_obj_copy(v)) < 0)
		goto oom;
	if ((v = ps_dict_get(trailer, "Info")) && v->kind == PS_REF &&
	    ps_dict_put(tr, "Info", ps_obj_copy(v)) < 0)
		goto oom;
	if (ps_dict_put(tr, "Encrypt", ps_new_ref(enc_num, 0)) < 0 ||
	    ps_array_push(ida, ps_new_str(id, 16)) < 0 ||
	    ps_array_push(ida, ps_new_str(id, 16)) < 0)
		goto oom;
	ps_array_get(ida, 0)->u.str.hex = ps_array_get(ida, 1)->u.str.hex = 1;
	rc = ps_dict_put(tr, "ID", ida);
	ida = NULL;
	if (rc < 0 || ps_dict_put(tr, "Size", ps_new_int(size)) < 0)
		goto oom;
	/* the xref stream is the last object, at xoff */
	if (stream_form && (rc = ps_rwoffs_add(ctx, t, size - 1, 0, xoff)) < 0)
		goto out;
	rc = ps_xrefw_write(ctx, &src, tr, stream_form, size - 1, xoff, out);
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(tr);
	ps_obj_free(ida);
	return rc;
}
