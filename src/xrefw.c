/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xrefw.c - the cross-reference writer: the one place that writes a
 * cross-reference section, its trailer and the startxref line.
 *
 * DESIGN NOTES
 *
 * Users: the incremental writer (incr.c: one new section appended after
 * the file's last byte, ISO 32000-2 7.5.6) and the full rewrite
 * (rewrite.c: the only section of a new file).  Each supplies its entries
 * through a source (ps_xrefw_src: start/next, numbers ascending, so that a
 * rewrite of millions of objects need not gather them into one array) and
 * the trailer dictionary, whose keys (/Size, /Prev, /Root, /Info, /Encrypt,
 * /ID) are the caller's business; this file decides only the section's
 * syntax.  Position: above obj.c and serialize.c (the serializer) and
 * flate.c (the stream's compression), below incr.c and rewrite.c; it
 * never looks at a document.  It also decides the full rewrite's form
 * (ps_xrefw_form): a stream when members of object streams are carried
 * over or an offset would not fit the ten digits of a table entry.
 *
 * Forms:
 *  - Classic table (7.5.4): "xref", then per run of consecutive object
 *    numbers a subsection header "FIRST COUNT" and 20-byte entries
 *    "OOOOOOOOOO GGGGG n\r\n" (in use) or "... f\r\n" (free), then
 *    "trailer", the dictionary (7.5.5), "startxref", the offset, "%%EOF".
 *    Ten digits bound the offsets: PS_MAX_TABLE_OFFSET; a table whose
 *    section would start past it is refused (every entry lies before it).
 *  - Cross-reference stream (7.5.8): object SELF_NUM, its dictionary being the
 *    trailer's keys plus /W [1 w2 w3] (w2 the bytes of the largest field 2,
 *    the section's own offset included; w3 at least 2, the bytes of the
 *    largest field 3), /Index [FIRST COUNT ...] per run (left out when the
 *    one run is the default [0 /Size], 7.5.8.2, Table 17), /Type /XRef,
 *    /Filter /FlateDecode (level 6) and /Length; rows of 1+w2+w3 bytes,
 *    big-endian (7.5.8.3, Table 18).  The stream lists itself (7.5.8.4
 *    recommends it; the source must supply that entry, which is checked).
 *
 * Invariants:
 *  1. Output depends only on the entries, the trailer, the form and the
 *     offsets: the same inputs give the same bytes (no random part here;
 *     /ID is the caller's).
 *  2. Entries out of order, a compressed entry in a table, or a stream
 *     without its own entry are INTERNAL errors: the callers' bugs, never
 *     written to a file.
 *  3. The caller's trailer is never changed (the stream form works on a
 *     copy; a key the copy has keeps its place, so /Type /XRef stays where
 *     an incremental update's trailer put it).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "ps.h"
#include "xrefw.h"

#define XREF_DEFLATE_LEVEL 6

/* ---- sources ------------------------------------------------------------------ */

static void array_start(void *ud)
{
	((ps_xrefw_array *)ud)->i = 0;
}

static int array_next(void *ud, ps_xrefw_ent *e)
{
	ps_xrefw_array *a = ud;

	if (a->i >= a->n)
		return 0;
	*e = a->ents[a->i++];
	return 1;
}

void ps_xrefw_src_array(ps_xrefw_src *src, ps_xrefw_array *a, const ps_xrefw_ent *ents, size_t n)
{
	a->ents = ents;
	a->n = n;
	a->i = 0;
	src->start = array_start;
	src->next = array_next;
	src->ud = a;
}

/* ---- walking the entries ------------------------------------------------------ */

/* Bytes needed for V, at least MIN and at most MAX. */
static int width_for(uint64_t v, int min, int max)
{
	int n = min;

	while (n < max && (v >> (8 * n)) != 0)
		n++;
	return n;
}

/* What a walk over the entries does: ROW for each entry, RUN (may be
 * NULL) after each run of consecutive numbers, with its first number and
 * length.  Either returns 0 or an error, which ends the walk. */
struct walk {
	ps_ctx *ctx;
	int (*row)(struct walk *w, const ps_xrefw_ent *e);
	int (*run)(struct walk *w, uint32_t first, uint32_t count);
	ps_buf *out;          /* the section */
	ps_buf buf;           /* table: the run's entries; stream: the rows */
	ps_obj *index;        /* stream: /Index */
	int w2, w3;           /* stream: field widths */
	uint32_t self_num;
	uint32_t runs, first, count; /* stream: runs so far, and the last one */
	int64_t xref_off;
	int self;             /* stream: its own entry was seen */
};

/* Walks SRC from the start: numbers strictly ascending, types 0-2 (an
 * INTERNAL error otherwise). */
static int walk(const ps_xrefw_src *src, struct walk *w)
{
	ps_xrefw_ent e;
	uint32_t first = 0, count = 0;
	int more, rc = 0;

	src->start(src->ud);
	do {
		more = src->next(src->ud, &e);
		if (more && count > 0 && e.num < first + count)
			return ps_err(w->ctx, PDFSTAMP_E_INTERNAL,
			              "cross-reference entries out of order (object %u after %u)",
			              e.num, first + count - 1);
		if (more && e.type > 2)
			return ps_err(w->ctx, PDFSTAMP_E_INTERNAL,
			              "cross-reference entry of object %u has type %u", e.num,
			              e.type);
		if (count > 0 && (!more || e.num != first + count)) {
			if (w->run && (rc = w->run(w, first, count)) < 0)
				return rc;
			count = 0;
		}
		if (!more)
			break;
		if (count == 0)
			first = e.num;
		count++;
		if ((rc = w->row(w, &e)) < 0)
			return rc;
	} while (more);
	return 0;
}

/* ---- classic table (7.5.4) ------------------------------------------------------ */

static int table_row(struct walk *w, const ps_xrefw_ent *e)
{
	if (e->type == 2)
		return ps_err(w->ctx, PDFSTAMP_E_INTERNAL,
		              "object %u is compressed: a classic xref table cannot say so",
		              e->num);
	/* the 20-byte row "oooooooooo ggggg n\r\n" (7.5.4), without printf:
	 * serialize.c's formatter (write_table bounds the offsets to ten
	 * digits; a wider value would be written whole, as by "%010") */
	ps_serialize_u64(&w->buf, e->f2, 10);
	ps_buf_putc(&w->buf, ' ');
	ps_serialize_u64(&w->buf, e->f3, 5);
	ps_buf_append(&w->buf, e->type == 1 ? " n\r\n" : " f\r\n", 4);
	return 0;
}

static int table_run(struct walk *w, uint32_t first, uint32_t count)
{
	ps_buf_printf(w->out, "%u %u\n", first, count);
	ps_buf_append(w->out, w->buf.data, w->buf.len);
	w->buf.len = 0;
	return 0;
}

static int write_table(struct walk *w, const ps_xrefw_src *src, const ps_obj *trailer)
{
	int rc;

	if (w->xref_off > PS_MAX_TABLE_OFFSET)
		return ps_err(w->ctx, PDFSTAMP_E_UNSUPPORTED,
		              "offsets past 9,999,999,999 bytes do not fit a classic xref table");
	w->row = table_row;
	w->run = table_run;
	ps_buf_puts(w->out, "xref\n");
	if ((rc = walk(src, w)) < 0)
		return rc;
	ps_buf_puts(w->out, "trailer\n");
	ps_serialize(w->out, trailer);
	ps_buf_printf(w->out, "\nstartxref\n%" PRId64 "\n%%%%EOF\n", w->xref_off);
	return 0;
}

/* ---- cross-reference stream (7.5.8) -------------------------------------------- */

/* Pass 1: the widths, and the stream's own entry. */
static int stream_size(struct walk *w, const ps_xrefw_ent *e)
{
	w->w2 = width_for(e->f2, w->w2, 8);
	w->w3 = width_for(e->f3, w->w3, 4);
	if (e->num == w->self_num && e->type == 1 && e->f2 == (uint64_t)w->xref_off)
		w->self = 1;
	return 0;
}

static void put_be(ps_buf *b, uint64_t v, int width)
{
	int k;

	for (k = width - 1; k >= 0; k--)
		ps_buf_putc(b, (int)(v >> (8 * k)) & 0xff);
}

/* Pass 2: the rows, and /Index. */
static int stream_row(struct walk *w, const ps_xrefw_ent *e)
{
	ps_buf_putc(&w->buf, e->type);
	put_be(&w->buf, e->f2, w->w2);
	put_be(&w->buf, e->f3, w->w3);
	return 0;
}

static int stream_run(struct walk *w, uint32_t first, uint32_t count)
{
	if (ps_array_push(w->index, ps_new_int(first)) < 0 ||
	    ps_array_push(w->index, ps_new_int(count)) < 0)
		return ps_err(w->ctx, PDFSTAMP_E_NOMEM, "out of memory building the xref stream");
	w->runs++;
	w->first = first;
	w->count = count;
	return 0;
}

static int write_stream(struct walk *w, const ps_xrefw_src *src, const ps_obj *trailer)
{
	ps_buf z = PS_BUF_INIT;
	ps_obj *t = NULL, *wa = NULL;
	int64_t size = -1;
	int rc;

	w->w2 = width_for((uint64_t)w->xref_off, 1, 8);
	w->w3 = 2;
	w->row = stream_size;
	w->run = NULL;
	if ((rc = walk(src, w)) < 0)
		return rc;
	if (!w->self)
		return ps_err(w->ctx, PDFSTAMP_E_INTERNAL,
		              "the xref stream %u does not list itself", w->self_num);
	if (!(w->index = ps_new_array()))
		goto oom;
	w->row = stream_row;
	w->run = stream_run;
	if ((rc = walk(src, w)) < 0)
		goto out;
	if (w->buf.oom)
		goto oom;
	if ((rc = ps_deflate(w->ctx, w->buf.data, w->buf.len, XREF_DEFLATE_LEVEL, &z)) < 0)
		goto out;
	if (!(wa = ps_new_array()) || ps_array_push(wa, ps_new_int(1)) < 0 ||
	    ps_array_push(wa, ps_new_int(w->w2)) < 0 || ps_array_push(wa, ps_new_int(w->w3)) < 0 ||
	    !(t = ps_obj_copy(trailer)))
		goto oom;
	rc = ps_dict_put(t, "W", wa);
	wa = NULL; /* t owns it, also on failure */
	if (rc < 0)
		goto oom;
	/* /Index only when the runs are not the default [0 /Size] */
	ps_obj_int(ps_dict_get(trailer, "Size"), &size);
	if (w->runs != 1 || w->first != 0 || (int64_t)w->count != size) {
		rc = ps_dict_put(t, "Index", w->index);
		w->index = NULL;
		if (rc < 0)
			goto oom;
	}
	if (ps_dict_put_name(t, "Type", "XRef") < 0 ||
	    ps_dict_put_name(t, "Filter", "FlateDecode") < 0 ||
	    ps_dict_put_int(t, "Length", (int64_t)z.len) < 0)
		goto oom;
	ps_buf_printf(w->out, "%u 0 obj\n", w->self_num);
	ps_serialize(w->out, t);
	ps_buf_puts(w->out, "\nstream\r\n");
	ps_buf_append(w->out, z.data, z.len);
	ps_buf_printf(w->out, "\nendstream\nendobj\nstartxref\n%" PRId64 "\n%%%%EOF\n",
	              w->xref_off);
	rc = 0;
	goto out;
oom:
	rc = ps_err(w->ctx, PDFSTAMP_E_NOMEM, "out of memory building the xref stream");
out:
	ps_obj_free(t);
	ps_obj_free(wa);
	ps_buf_free(&z);
	return rc;
}

/* ---- entry points ------------------------------------------------------------- */

int ps_xrefw_write(ps_ctx *ctx, const ps_xrefw_src *src, const ps_obj *trailer, int stream,
                   uint32_t self_num, int64_t xref_off, ps_buf *out)
{
	struct walk w;
	int rc;

	if (!trailer || trailer->kind != PS_DICT || xref_off < 0)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              "cross-reference section without a trailer dictionary or offset");
	memset(&w, 0, sizeof w);
	w.ctx = ctx;
	w.out = out;
	w.self_num = self_num;
	w.xref_off = xref_off;
	rc = stream ? write_stream(&w, src, trailer) : write_table(&w, src, trailer);
	if (rc == 0 && (out->oom || w.buf.oom))
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM,
		            stream ? "out of memory building the xref stream" : "out of memory");
	ps_buf_free(&w.buf);
	ps_obj_free(w.index);
	return rc;
}

int ps_xrefw_form(int has_compressed, int64_t xref_offset)
{
	/* Every object lies before the xref, so XREF_OFFSET bounds them all;
	 * a classic entry has ten digits for the offset (7.5.4). */
	return has_compressed || xref_offset > PS_MAX_TABLE_OFFSET;
}
