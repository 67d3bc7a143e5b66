/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seqread.c - the sequential reader: a document's objects in file order,
 * read in segments of about 4 MB with one pread each and parsed from their
 * bytes there.  The full rewrite reads its input with it (rewrite.c note
 * 7) and its self-check the output (rwcheck.c note 4): each file is read
 * once, in a few dozen preads, instead of three small preads and a window
 * parse per object.
 *
 * DESIGN NOTES
 *
 *  1. The segments: the items (type-1 objects, from the document's xref)
 *     sorted by offset; a segment runs from an object's offset over the
 *     following objects while it stays within SEG_TARGET (at least one
 *     object; an object whose bytes exceed SEG_MAX, or that starts outside
 *     the file, has no segment and goes the careful way).  An object's
 *     bytes end where the next object in file order starts (the file's end
 *     for the last), so stream data is only borrowed when it lies inside
 *     its own object's bytes: bytes of one object are never handed out as
 *     another's.  The segments are read with ps_doc_pread: bounded by the
 *     size at open, bytes_read counted.
 *  2. Segment buffers are reused: a segment of at most SEG_TARGET bytes
 *     gets a buffer of SEG_BUF bytes from the reader's pool, and gives it
 *     back when its last reference goes (ps_seq_seg_release), so a long file is
 *     read into the same few buffers (no page faults, no mmap/munmap per
 *     segment), each on two huge pages where the kernel has them
 *     (ps_buf_bulk_alloc, buf.c: their first fill is then two faults, not
 *     1,024).  A buffer is taken from the pool only when none is free, so
 *     the pool never holds more buffers than were live at once: it raises
 *     no peak.  The pool is a list threaded through the free buffers
 *     (giving one back cannot fail), referenced by the reader and by each
 *     live segment, since the rewrite's segments outlive its reader; it is
 *     touched, like the references, by one thread only.  A reference to it
 *     (ps_seq_pool) hands its buffers to a later reader on the same thread
 *     (rwcheck.c note 6).
 *  State: the reader's, and the pool's, which its segments share.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "seqread.h"

#define SEG_BUF ((size_t)4 << 20)       /* note 2: a pooled buffer, two huge pages */
#define SEG_TARGET (SEG_BUF - 1)        /* the reader adds a terminator */
#define SEG_MAX ((size_t)64 << 20)

/* Note 2: the free buffers of SEG_BUF bytes, each holding the address of
 * the next in its first bytes. */
struct ps_segpool {
	uint8_t *free;
	int refs;             /* the reader and each live segment */
};

void ps_seq_pool_unref(struct ps_segpool *p)
{
	if (p && --p->refs == 0) {
		while (p->free) {
			uint8_t *next;
			memcpy(&next, p->free, sizeof next);
			free(p->free);
			p->free = next;
		}
		free(p);
	}
}

void ps_seq_seg_release(ps_seg *s)
{
	if (s && --s->refs == 0) {
		struct ps_segpool *p = s->pool;
		if (p && s->cap == SEG_BUF) {
			memcpy(s->data, &p->free, sizeof p->free);
			p->free = s->data;
		} else {
			free(s->data); /* a buffer of its own size */
		}
		free(s);
		ps_seq_pool_unref(p);
	}
}

static int cmp_item(const void *a, const void *b)
{
	const ps_seq_item *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->num < y->num ? -1 : x->num > y->num;
}

int ps_seq_open(ps_seqread *r, ps_doc *doc, struct ps_segpool *pool,
                int (*skip)(void *ud, uint32_t num), void *ud)
{
	const ps_xref *x = ps_doc_xref(doc);
	struct ps_xref_info xi;
	size_t cap;
	uint32_t num;

	ps_xref_info(x, &xi);
	cap = (size_t)xi.used + 1;
	memset(r, 0, sizeof *r);
	r->doc = doc;
	r->size = ps_doc_size(doc);
	if (pool) {
		pool->refs++;
		r->pool = pool;
	} else if ((r->pool = calloc(1, sizeof *r->pool)) != NULL) {
		r->pool->refs = 1;
	}
	if (!r->pool || !(r->it = ps_buf_bulk_alloc(cap * sizeof *r->it)))
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
	for (num = ps_xref_next(x, 0); num != 0 && r->n < cap; num = ps_xref_next(x, num)) {
		const ps_xent *e = ps_xref_get(x, num);
		if (e->type != 1 || (skip && skip(ud, num)))
			continue;
		r->it[r->n].off = e->off;
		r->it[r->n++].num = num;
	}
	ps_vec_sort(r->it, r->n, sizeof *r->it, cmp_item);
	return 0;
}

/* Where item I's bytes end (note 1). */
static int64_t item_end(const ps_seqread *r, size_t i)
{
	int64_t e = i + 1 < r->n ? r->it[i + 1].off : r->size;

	if (e > r->size)
		e = r->size;
	return e < r->it[i].off ? r->it[i].off : e;
}

/* The segment that starts with item I (note 1). */
static int seg_next(ps_seqread *r)
{
	ps_doc *doc = r->doc;
	struct ps_segpool *p = r->pool;
	size_t i = r->i, k = i + 1, need;
	ps_buf b = PS_BUF_INIT;
	int64_t start = r->it[i].off;
	int rc;

	ps_seq_seg_release(r->seg);
	r->seg = NULL;
	r->k = k;
	if (start < 0 || start >= r->size || item_end(r, i) - start > (int64_t)SEG_MAX)
		return 0;
	while (k < r->n && r->it[k].off < r->size && item_end(r, k) - start <= (int64_t)SEG_TARGET)
		k++;
	need = (size_t)(item_end(r, k - 1) - start);
	/* note 2: a pooled buffer when it fits, else one of its own size (in
	 * bulk either way: ps_buf_reserve, buf.c) */
	if (need + 1 <= SEG_BUF && p->free) {
		b.data = p->free;
		b.cap = SEG_BUF;
		memcpy(&p->free, b.data, sizeof p->free);
	} else {
		ps_buf_reserve(&b, need + 1 <= SEG_BUF ? SEG_BUF : need + 1);
	}
	if (!b.data || !(r->seg = malloc(sizeof *r->seg))) {
		ps_buf_free(&b);
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
	}
	r->seg->data = b.data;
	r->seg->cap = b.cap;
	r->seg->refs = 1;
	r->seg->pool = p;
	p->refs++;
	rc = ps_doc_pread(doc, start, need, &b);
	r->seg->data = b.data; /* the same buffer (it has room for NEED + 1 bytes) */
	r->seg->cap = b.cap;
	if (rc < 0) {
		ps_seq_seg_release(r->seg);
		r->seg = NULL;
		return rc;
	}
	r->start = start;
	r->got = (int64_t)b.len;
	r->k = k;
	return 0;
}

int ps_seq_next(ps_seqread *r, ps_seq_obj *o)
{
	size_t m;
	int rc;

	memset(o, 0, sizeof *o);
	if (r->i >= r->n)
		return 0;
	if (r->i == r->k && (rc = seg_next(r)) < 0)
		return rc;
	m = r->i++;
	o->num = r->it[m].num;
	o->off = r->it[m].off;
	o->end = item_end(r, m);
	if (r->seg) {
		if (o->end > r->start + r->got)
			o->end = r->start + r->got;
		o->seg = r->seg;
		o->start = r->start;
		r->seg->refs++;
	}
	return 1;
}

void ps_seq_parse(ps_ctx *ctx, ps_arena *ar, const ps_seq_obj *so, ps_obj **obj, uint8_t **data,
                  size_t *len)
{
	int64_t dlen;
	uint32_t got = 0;
	uint16_t gen;
	ps_obj *o = NULL;

	*obj = NULL;
	*data = NULL;
	*len = 0;
	if (!so->seg || so->end <= so->off ||
	    ps_parse_indirect_in(ctx, ar, so->seg->data + (so->off - so->start),
	                         (size_t)(so->end - so->off), 0, so->off, &got, &gen, &o) < 0)
		return;
	if (got == so->num && o->kind != PS_STREAM) {
		*obj = o;
		return;
	}
	if (got == so->num && ps_obj_int(ps_dict_get(o, "Length"), &dlen) == 0 && dlen >= 0 &&
	    o->u.stm.off <= so->end && dlen <= so->end - o->u.stm.off) {
		*obj = o;
		*data = so->seg->data + (o->u.stm.off - so->start);
		*len = (size_t)dlen;
		return;
	}
	ps_obj_free(o);
}

struct ps_segpool *ps_seq_pool(ps_seqread *r)
{
	r->pool->refs++;
	return r->pool;
}

void ps_seq_close(ps_seqread *r)
{
	ps_seq_seg_release(r->seg);
	ps_seq_pool_unref(r->pool);
	free(r->it);
	memset(r, 0, sizeof *r);
}
