/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xrefsec.c - the entries of one cross-reference section, read only as
 * far as they are needed.
 *
 * DESIGN NOTES
 *
 * A section (xref.c walks the /Prev chain) has one or two parts: a classic
 * table (ISO 32000-2 7.5.4), an xref stream (7.5.8), or both (a hybrid
 * table whose trailer names an /XRefStm, 7.5.8.4).  This file reads a part
 * and answers two questions about it: "what does this part say of object
 * NUM" (ps_xpart_get) and "every entry it has, in order" (ps_xpart_each).
 * xref.c applies the merge rule across parts and sections; the rules for a
 * single entry (what a table's "0 0 n" means, which offsets are possible)
 * are here and nowhere else, so the lazy lookup and the full load cannot
 * disagree.
 *
 * A part is held in one of three forms:
 *
 *  SUBS (a well-formed table).  Opening reads the subsection headers only,
 *     locating each by arithmetic: 7.5.4 makes every entry exactly 20 bytes
 *     ("nnnnnnnnnn ggggg n" and a two-byte end of line).  The stride is
 *     taken from the subsection's first entry (19 and 21 bytes are
 *     accepted, as writers produce them), and the last entry and what
 *     follows it must parse where the arithmetic puts them.  An entry is
 *     then read (20 bytes, one pread) when it is asked for: a file of
 *     500,000 objects costs a few KB to open, not 10 MB.  An entry that is
 *     not one strict entry where the arithmetic puts it is a FORMAT error,
 *     for the lazy lookup and the full load alike: re-reading such a table
 *     tolerantly could give the entries between two misfits other offsets
 *     than the ones already handed out (entries of several lengths that
 *     happen to add up), and 7.5.4 is what fixes their place.
 *  STREAM (an xref stream, or a hybrid's /XRefStm).  The stream is
 *     inflated once, and only as far as the entries asked for so far
 *     (flate.c's ps_flate_reader keeps its place): an entry is found by
 *     arithmetic in its /Index ranges, binary search when they are sorted
 *     and disjoint, else the first range in /Index order that holds the
 *     number (xref.c loads such a file whole at open, so that is never a
 *     per-lookup cost), and the decoded bytes are extended to cover it.
 *     The writers put the catalog and the page tree first, so a stamp on a
 *     file of 400,000 objects inflates a few KB of its 3 MB of entries
 *     (33 ms -> see the README's figures).  A stream with fewer entries
 *     than /Index says is a FORMAT error when an entry past its end is
 *     asked for, or at a full load (ps_xpart_each), as a corrupt
 *     compressed stream is where the decoder meets the damage; after
 *     such an error the decoder refuses every later lookup past what it
 *     had decoded (never "not present", which would let an older
 *     section's entry win), and a full load of the part fails (failed)
 *     even if the rows before the damage cover every entry, as it would
 *     have on a fresh open.  The lookup that needs the last entries
 *     decodes the rest of the stream too, so the whole stream is judged
 *     (checksum, truncation, the cap) as it always was at a full load.
 *     Decoded bytes past the entries (a wide predictor row, the stream's
 *     tail) are cut off and the buffer shrunk, so a part holds at most
 *     what xref.c counted for it at open (kept).
 *  RECS (a table the scan does not fit: white space between the fields,
 *     overlapping or unsorted subsections).  Every entry is parsed at open
 *     as tolerantly as readers do, into an array sorted by number and then
 *     file order: the first mention of a number in a section wins (7.5.4: a
 *     section lists a number once; where a hostile one lists it twice the
 *     first wins, as it always did here), and the later ones stay listed
 *     (ps_xpart_defs) so that every definition of the /Encrypt object is
 *     seen.
 *
 * Lazily read entries are checked when read, with the same rules as at a
 * full load; an entry nobody reads is never judged, which is the point (a
 * stamp reads what it needs, 7.5.6).
 *
 * Memory follows the entries present: SUBS costs one record per
 * subsection, STREAM its compressed bytes while it is decoded and its
 * decoded entries (xref.c caps their total, counted at open), RECS
 * one record per entry of the table.  Every count and offset is checked
 * against the file size before anything is allocated for it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "flate.h"
#include "input.h"
#include "xrefsec.h"

#define XREFSTM_MAX_DECODED ((size_t)PS_MAX_OBJNUM * 20)
#define WINDOW 4096
#define FULL_CHUNK (1u << 20) /* bytes of a table read at once by ps_xpart_each */

/* ---- one entry -------------------------------------------------------------- */

/* The rules of one table entry (7.5.4), shared by every form: C is 'n' or
 * 'f'.  Returns 1 with *OUT set, 0 if the entry says nothing (object 0),
 * or an error. */
static int table_entry(ps_doc *doc, int64_t num, int c, int64_t eoff, int64_t egen,
                       int64_t table_off, ps_xrec *out)
{
	if (c == 'f' && egen > 65535)
		egen = 65535; /* MuPDF writes "65536 f" for object 0 */
	if ((c != 'n' && c != 'f') || egen > 65535)
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
		              "bad entry %lld in the table at offset %lld", (long long)num,
		              (long long)table_off);
	if (c == 'n' && (eoff <= 0 || eoff >= ps_doc_size(doc))) {
		if (eoff != 0)
			return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
			              "object %lld is listed at offset %lld, past the end "
			              "of the file", (long long)num, (long long)eoff);
		c = 'f'; /* some writers mark unused entries "0 0 n" */
	}
	if (num == 0)
		return 0; /* the head of the free list, never an object */
	out->num = (uint32_t)num;
	out->type = c == 'n' ? 1 : 0;
	out->off = c == 'n' ? eoff : 0;
	out->aux = (uint32_t)egen;
	return 1;
}

/* The strict 18 bytes "nnnnnnnnnn ggggg c" at P (LEN available): 0 and
 * the fields, or -1. */
static int strict_entry(const uint8_t *p, size_t len, int64_t *off, int64_t *gen, int *c)
{
	int64_t o = 0, g = 0;
	int i;

	if (len < 18 || p[10] != ' ' || p[16] != ' ')
		return -1;
	for (i = 0; i < 10; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		o = o * 10 + (p[i] - '0');
	}
	for (i = 11; i < 16; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		g = g * 10 + (p[i] - '0');
	}
	*off = o;
	*gen = g;
	*c = p[17];
	return 0;
}

/* The rules of one xref stream entry (7.5.8.3). */
static int stream_entry(ps_doc *doc, const ps_xpart *p, const uint8_t *d, uint32_t num,
                        ps_xrec *out)
{
	uint64_t f[3];
	int k, b;

	for (k = 0; k < 3; k++) {
		f[k] = 0;
		for (b = 0; b < p->w[k]; b++)
			f[k] = (f[k] << 8) | *d++;
	}
	if (p->w[0] == 0)
		f[0] = 1;
	if (num == 0)
		return 0;
	out->num = num;
	switch (f[0]) {
	case 0:
		out->type = 0;
		out->off = 0;
		out->aux = f[2] > 65535 ? 65535 : (uint32_t)f[2];
		return 1;
	case 1:
		if (f[1] == 0 || f[1] >= (uint64_t)ps_doc_size(doc) || f[2] > 65535)
			return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
			              "xref stream entry for object %u points outside the file",
			              num);
		out->type = 1;
		out->off = (int64_t)f[1];
		out->aux = (uint32_t)f[2];
		return 1;
	case 2:
		if (f[1] == 0 || f[1] > PS_MAX_OBJNUM || f[2] > PS_MAX_OBJNUM)
			return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
			              "bad compressed entry for object %u", num);
		out->type = 2;
		out->off = (int64_t)f[1];
		out->aux = (uint32_t)f[2];
		return 1;
	default:
		return 0; /* unknown types are treated as null objects (7.5.8.3) */
	}
}

/* ---- RECS ------------------------------------------------------------------- */

static int push_rec(ps_doc *doc, ps_xpart *p, const ps_xrec *r)
{
	if (p->nrecs == p->caprecs) {
		size_t ncap = p->caprecs ? 2 * p->caprecs : 64;
		ps_xrec *n = realloc(p->recs, ncap * sizeof *n);
		if (!n)
			return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM,
			              "out of memory for the cross-reference index");
		p->recs = n;
		p->caprecs = ncap;
	}
	p->recs[p->nrecs] = *r;
	p->recs[p->nrecs].seq = (uint32_t)p->nrecs;
	p->nrecs++;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const ps_xrec *x = a, *y = b;

	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts the records by number, then file order (the first mention of a
 * number comes first; the later ones are kept for ps_xpart_defs). */
static void finish_recs(ps_xpart *p)
{
	p->form = PS_XPART_RECS;
	if (p->nrecs)
		qsort(p->recs, p->nrecs, sizeof *p->recs, cmp_rec);
}

static void note_range(ps_xpart *p, uint64_t first, uint64_t count)
{
	if (count && first + count > p->bound)
		p->bound = (uint32_t)(first + count);
	p->nents += count;
}

/* ---- classic tables --------------------------------------------------------- */

/* A window of the file: [base, base + buf.len). */
struct win {
	ps_buf buf;
	int64_t base;
};

/* Makes [off, off + need) available (as much of it as the file has) and
 * returns a pointer to OFF; *avail the bytes from there. */
static int win_at(ps_doc *doc, struct win *w, int64_t off, size_t need, const uint8_t **ptr,
                  size_t *avail)
{
	int rc;

	if (!(off >= w->base && off - w->base <= (int64_t)w->buf.len &&
	      w->buf.len - (size_t)(off - w->base) >= need)) {
		if ((rc = ps_doc_pread(doc, off, need > WINDOW ? need : WINDOW, &w->buf)) < 0)
			return rc;
		w->base = off;
	}
	*ptr = w->buf.data + (off - w->base);
	*avail = w->buf.len - (size_t)(off - w->base);
	return 0;
}

/* The tolerant reader of a whole table (the RECS form): white space as
 * readers accept it between the fields.  *TRAILER receives the offset
 * just past the "trailer" keyword. */
static int read_table_recs(ps_doc *doc, int64_t off, ps_xpart *p, int64_t *trailer)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_buf w = PS_BUF_INIT;
	size_t pos, want;
	int64_t cur = off;
	int rc;

	ps_xpart_free(p);
	p->form = PS_XPART_RECS;
	if ((rc = ps_doc_pread(doc, cur, 4096, &w)) < 0)
		goto out;
	pos = ps_parse_skip_ws(w.data, w.len, 0);
	if (w.len - pos < 4 || memcmp(w.data + pos, "xref", 4) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "no cross-reference table at offset %lld",
		            (long long)off);
		goto out;
	}
	pos += 4;
	for (;;) {
		int64_t first, count, i;

		pos = ps_parse_skip_ws(w.data, w.len, pos);
		if (w.len - pos >= 7 && memcmp(w.data + pos, "trailer", 7) == 0) {
			*trailer = cur + (int64_t)pos + 7;
			break;
		}
		/* Re-anchor the window on the subsection header so that its
		 * entries fit. */
		cur += (int64_t)pos;
		if ((rc = ps_doc_pread(doc, cur, 64, &w)) < 0)
			goto out;
		pos = 0;
		if (ps_parse_uint(w.data, w.len, &pos, &first) < 0 ||
		    (pos = ps_parse_skip_ws(w.data, w.len, pos),
		     ps_parse_uint(w.data, w.len, &pos, &count) < 0)) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "bad cross-reference subsection header at offset %lld",
			            (long long)cur);
			goto out;
		}
		if (first > PS_MAX_OBJNUM || count > PS_MAX_OBJNUM + 1 - first ||
		    count * 18 > ps_doc_size(doc) - cur) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "cross-reference subsection %lld+%lld at offset %lld "
			            "does not fit the file",
			            (long long)first, (long long)count, (long long)cur);
			goto out;
		}
		note_range(p, (uint64_t)first, (uint64_t)count);
		want = pos + (size_t)count * 21 + 4096;
		if ((rc = ps_doc_pread(doc, cur, want, &w)) < 0)
			goto out;
		for (i = 0; i < count; i++) {
			int64_t eoff, egen;
			ps_xrec r;
			int c;

			pos = ps_parse_skip_ws(w.data, w.len, pos);
			if (ps_parse_uint(w.data, w.len, &pos, &eoff) < 0 ||
			    (pos = ps_parse_skip_ws(w.data, w.len, pos),
			     ps_parse_uint(w.data, w.len, &pos, &egen) < 0)) {
				rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
				            "bad entry %lld in the table at offset %lld",
				            (long long)(first + i), (long long)off);
				goto out;
			}
			pos = ps_parse_skip_ws(w.data, w.len, pos);
			c = pos < w.len ? w.data[pos++] : 0;
			if ((rc = table_entry(doc, first + i, c, eoff, egen, off, &r)) < 0)
				goto out;
			if (rc == 1 && (rc = push_rec(doc, p, &r)) < 0)
				goto out;
		}
	}
	finish_recs(p);
	rc = 0;
out:
	ps_buf_free(&w);
	return rc;
}

/* Where the entries of a subsection start: after the header's end of
 * line.  The stride is that of its first entry; 0 if COUNT is 0. */
static int sub_stride(const uint8_t *q, size_t avail, uint32_t *stride)
{
	int64_t o, g;
	int c;
	size_t k = 18;

	if (strict_entry(q, avail, &o, &g, &c) < 0 || (c != 'n' && c != 'f'))
		return -1;
	while (k < avail && k < 21 && (q[k] == ' ' || q[k] == '\r' || q[k] == '\n'))
		k++;
	if (k == 18 || k >= avail || !((q[k] >= '0' && q[k] <= '9') || q[k] == 't'))
		return -1; /* an entry ends with 1-3 bytes of white space,
		            * then a digit or "trailer" */
	*stride = (uint32_t)k;
	return 0;
}

/* The SUBS form: headers located by arithmetic (design notes).  Returns 1
 * if the table fits it, 0 if not (the caller falls back to RECS). */
static int scan_table(ps_doc *doc, int64_t off, ps_xpart *p, int64_t *trailer)
{
	struct win w = {PS_BUF_INIT, 0};
	const uint8_t *q;
	size_t avail, pos;
	int64_t cur;
	int rc, fits = 0;

	p->form = PS_XPART_SUBS;
	p->table_off = off;
	if ((rc = win_at(doc, &w, off, 64, &q, &avail)) < 0)
		goto out;
	pos = ps_parse_skip_ws(q, avail, 0);
	if (avail - pos < 4 || memcmp(q + pos, "xref", 4) != 0) {
		rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
		            "no cross-reference table at offset %lld", (long long)off);
		goto out;
	}
	cur = off + (int64_t)pos + 4;
	for (;;) {
		int64_t first, count, last;
		uint32_t stride = 20;
		ps_xsub *s;

		if ((rc = win_at(doc, &w, cur, 64, &q, &avail)) < 0)
			goto out;
		pos = ps_parse_skip_ws(q, avail, 0);
		if (pos == avail)
			goto out; /* white space to the end of the window: let RECS judge */
		if (avail - pos >= 7 && memcmp(q + pos, "trailer", 7) == 0) {
			*trailer = cur + (int64_t)pos + 7;
			fits = 1;
			break;
		}
		if (ps_parse_uint(q, avail, &pos, &first) < 0 || pos >= avail || (q[pos] != ' ') ||
		    (pos++, ps_parse_uint(q, avail, &pos, &count) < 0))
			goto out;
		/* the header's end of line, then the first entry */
		{
			size_t e = pos;
			while (e < avail && e - pos < 3 &&
			       (q[e] == ' ' || q[e] == '\r' || q[e] == '\n'))
				e++;
			if (e == pos)
				goto out;
			pos = e;
		}
		if (first > PS_MAX_OBJNUM || count > PS_MAX_OBJNUM + 1 - first ||
		    count * 19 > ps_doc_size(doc) - (cur + (int64_t)pos))
			goto out;
		cur += (int64_t)pos;
		if (count > 0) {
			if ((rc = win_at(doc, &w, cur, 64, &q, &avail)) < 0)
				goto out;
			if (sub_stride(q, avail, &stride) < 0)
				goto out;
			if (count * (int64_t)stride > ps_doc_size(doc) - cur)
				goto out;
			/* the last entry must be one, and end where the next header or
			 * the trailer begins */
			last = cur + (count - 1) * (int64_t)stride;
			if ((rc = win_at(doc, &w, last, 64, &q, &avail)) < 0)
				goto out;
			{
				uint32_t s2;
				if (sub_stride(q, avail, &s2) < 0 || s2 != stride)
					goto out;
			}
		}
		if (count == 0)
			continue; /* mentions nothing */
		if (p->nsubs == p->capsubs) {
			size_t ncap = p->capsubs ? 2 * p->capsubs : 4;
			ps_xsub *n = realloc(p->subs, ncap * sizeof *n);
			if (!n) {
				rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM,
				            "out of memory for the cross-reference index");
				goto out;
			}
			p->subs = n;
			p->capsubs = ncap;
		}
		s = &p->subs[p->nsubs++];
		s->off = cur;
		s->first = (uint32_t)first;
		s->count = (uint32_t)count;
		s->stride = stride;
		note_range(p, (uint64_t)first, (uint64_t)count);
		cur += count * (int64_t)stride;
	}
	/* Binary search needs the subsections sorted and disjoint; a table
	 * that lists them otherwise is read whole (RECS). */
	for (size_t i = 1; fits && i < p->nsubs; i++)
		if ((uint64_t)p->subs[i - 1].first + p->subs[i - 1].count > p->subs[i].first)
			fits = 0;
out:
	ps_buf_free(&w.buf);
	return rc < 0 ? rc : fits;
}

int ps_xpart_read_table(ps_doc *doc, int64_t off, ps_xpart *p, int64_t *trailer)
{
	int rc = scan_table(doc, off, p, trailer);

	if (rc == 1)
		return 0;
	if (rc < 0)
		return rc;
	rc = read_table_recs(doc, off, p, trailer);
	p->table_off = off;
	return rc;
}

/* Reads entry I of subsection S, located by arithmetic: it must be one
 * strict entry of the subsection's stride there (design notes, SUBS). */
static int sub_entry(ps_doc *doc, const ps_xsub *s, uint32_t i, const uint8_t *q, size_t avail,
                     ps_xrec *out)
{
	int64_t o, g;
	int c;
	uint32_t k;

	if (strict_entry(q, avail, &o, &g, &c) < 0 || avail < s->stride)
		goto misfit;
	for (k = 18; k < s->stride; k++)
		if (!ps_is_space(q[k]))
			goto misfit;
	return table_entry(doc, (int64_t)s->first + i, c, o, g, s->off, out);
misfit:
	return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
	              "bad entry %lld in the table at offset %lld: not a %u-byte entry "
	              "where ISO 32000-2 7.5.4 puts it",
	              (long long)s->first + i, (long long)s->off, s->stride);
}

/* ---- xref streams ----------------------------------------------------------- */

static int get_uint_key(ps_ctx *ctx, const ps_obj *d, const char *key, int64_t max, int64_t *out,
                        int64_t off)
{
	if (ps_obj_int(ps_dict_get(d, key), out) < 0 || *out < 0 || *out > max)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "bad or missing /%s in the xref stream at offset %lld", key,
		              (long long)off);
	return 0;
}

int ps_xpart_read_stream(ps_doc *doc, const ps_obj *stm, int64_t off, ps_xpart *p)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_obj *w, *index, *filter, *parms;
	ps_buf raw = PS_BUF_INIT, dec = PS_BUF_INIT;
	int64_t size, len, n, i, ranges;
	size_t entlen, at;
	int rc, sorted = 1;

	ps_xpart_free(p);
	p->form = PS_XPART_STREAM;
	if ((rc = get_uint_key(ctx, stm, "Size", PS_MAX_OBJNUM + 1, &size, off)) < 0)
		goto out;
	/* /Length of an xref stream must be direct: the index it would need
	 * to resolve an indirect one is what we are reading. */
	if (ps_obj_int(ps_dict_get(stm, "Length"), &len) < 0 || len < 0 ||
	    len > ps_doc_size(doc) - stm->u.stm.off) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /Length in the xref stream at offset %lld",
		            (long long)off);
		goto out;
	}
	w = ps_dict_get(stm, "W");
	if (ps_array_len(w) != 3) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /W in the xref stream at offset %lld",
		            (long long)off);
		goto out;
	}
	for (i = 0; i < 3; i++) {
		int64_t v;
		if (ps_obj_int(ps_array_get(w, (size_t)i), &v) < 0 || v < 0 || v > 8) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "bad /W in the xref stream at offset %lld", (long long)off);
			goto out;
		}
		p->w[i] = (int)v;
	}
	entlen = (size_t)(p->w[0] + p->w[1] + p->w[2]);
	if (p->w[1] == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "xref stream at offset %lld has no offset field", (long long)off);
		goto out;
	}
	/* one read, of up to a few MB: on huge pages from 1 MB on (buf.c) */
	if (ps_buf_reserve(&raw, (size_t)len + 1) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory reading %lld bytes",
		            (long long)len);
		goto out;
	}
	if ((rc = ps_doc_pread(doc, stm->u.stm.off, (size_t)len, &raw)) < 0)
		goto out;
	if ((int64_t)raw.len != len) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "xref stream at offset %lld is truncated",
		            (long long)off);
		goto out;
	}
	filter = ps_dict_get(stm, "Filter");
	parms = ps_dict_get(stm, "DecodeParms");
	if (filter && filter->kind == PS_ARRAY) {
		if (ps_array_len(filter) > 1) {
			rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			            "xref stream with several filters");
			goto out;
		}
		filter = ps_array_get(filter, 0);
		if (parms && parms->kind == PS_ARRAY)
			parms = ps_array_get(parms, 0);
	}
	if (filter && !ps_obj_is_name(filter, "FlateDecode")) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "xref stream filter is not FlateDecode");
		goto out;
	}
	p->stm_off = off;
	if (filter) { /* decoded as far as lookups need (note STREAM) */
		if ((rc = ps_flate_reader_new(ctx, parms, raw.data, raw.len, XREFSTM_MAX_DECODED,
		                              &p->fr)) < 0) {
			ps_err_wrap(ctx, rc, "xref stream at offset %lld", (long long)off);
			goto out;
		}
		p->raw = raw; /* the reader's input from now on */
		raw = (ps_buf)PS_BUF_INIT;
	} else {
		dec = raw;
		raw = (ps_buf)PS_BUF_INIT;
	}
	index = ps_dict_get(stm, "Index");
	if (index && (index->kind != PS_ARRAY || ps_array_len(index) % 2 != 0)) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /Index in the xref stream at offset %lld",
		            (long long)off);
		goto out;
	}
	ranges = index ? (int64_t)ps_array_len(index) / 2 : 1;
	if (!(p->ranges = malloc((size_t)(ranges ? ranges : 1) * sizeof *p->ranges))) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory reading an xref stream");
		goto out;
	}
	at = 0;
	for (n = 0; n < ranges; n++) {
		int64_t first = 0, count = size;
		if (index && (ps_obj_int(ps_array_get(index, (size_t)(2 * n)), &first) < 0 ||
		              ps_obj_int(ps_array_get(index, (size_t)(2 * n + 1)), &count) < 0 ||
		              first < 0 || count < 0 || first > PS_MAX_OBJNUM ||
		              count > PS_MAX_OBJNUM + 1 - first)) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "bad /Index in the xref stream at offset %lld", (long long)off);
			goto out;
		}
		if (entlen && (uint64_t)count > (XREFSTM_MAX_DECODED - at) / entlen) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "xref stream at offset %lld has more entries than any file can",
			            (long long)off);
			goto out;
		}
		if (!p->fr && entlen && (uint64_t)count > (dec.len - at) / entlen) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "xref stream at offset %lld has fewer entries than /Index says",
			            (long long)off);
			goto out;
		}
		if (count == 0)
			continue;
		if (p->nranges > 0) {
			const ps_xrange *pr = &p->ranges[p->nranges - 1];
			if ((uint64_t)pr->first + pr->count > (uint64_t)first)
				sorted = 0;
		}
		p->ranges[p->nranges].first = (uint32_t)first;
		p->ranges[p->nranges].count = (uint32_t)count;
		p->ranges[p->nranges].at = at;
		p->nranges++;
		at += (size_t)count * entlen;
		note_range(p, (uint64_t)first, (uint64_t)count);
	}
	p->entlen = entlen;
	p->sorted = sorted;
	p->total = at;
	/* kept (xref.c counts the most it will hold against the budget for
	 * lazy lookups): the entries are read from it */
	if (!p->fr)
		dec.len = at;
	p->data = dec;
	/* the most held between lookups: raw, decoded (doubling: 2x), and the
	 * reader's row and pending row (each at most the entries' size + a chunk
	 * once whole rows past the entries are trimmed) */
	p->kept = p->raw.cap + (p->fr ? 4 * (at + 65536) : p->data.cap);
	dec = (ps_buf)PS_BUF_INIT;
out:
	ps_buf_free(&raw);
	ps_buf_free(&dec);
	return rc;
}

/* ---- lookup and iteration --------------------------------------------------- */

/* Note STREAM: decoded bytes beyond a lookup's entry (about 580 entries
 * of 7 bytes).  A stamp looks up a dozen entries near the start, and
 * every byte inflated costs: 64 KB ahead was half of what a stamp on a
 * file of 414,000 objects executed besides the key derivation (callgrind). */
#define LOOKAHEAD 4096

/* Note STREAM: the decoded bytes of *P cover [0, UPTO) (UPTO <= total). */
static int stream_cover(ps_doc *doc, ps_xpart *p, size_t upto)
{
	int rc;

	if (upto <= p->data.len)
		return 0;
	if (p->fr) {
		/* a little ahead (LOOKAHEAD): the next lookups are usually
		 * near; the last entries: to the end of the stream, judged (and
		 * capped) as a whole as the full load always did */
		size_t want = upto + LOOKAHEAD < p->total ? upto + LOOKAHEAD : p->total;
		rc = ps_flate_reader_fill(ps_doc_ctx(doc), p->fr, want, &p->data);
		if (rc == 0 && p->data.len >= p->total) /* all entries: the
		                                         * rest of the stream too */
			rc = ps_flate_reader_fill(ps_doc_ctx(doc), p->fr, SIZE_MAX, &p->data);
		if (p->data.len > p->total) /* a wide predictor row, or bytes after the entries
		                             * (also on an error: a bomb's tail) */
			p->data.len = p->total;
		if (p->data.cap > p->total + 2 * 65536 && p->data.len == p->total) {
			uint8_t *t = realloc(p->data.data, p->total ? p->total : 1);
			if (t) {
				p->data.data = t;
				p->data.cap = p->total ? p->total : 1;
			}
		}
		if (rc < 0) { /* the reader refuses from now on
		               * (flate.c: failed), the full load too */
			p->failed = rc;
			return ps_err_wrap(ps_doc_ctx(doc), rc, "xref stream at offset %lld",
			                   (long long)p->stm_off);
		}
		if (ps_flate_reader_done(p->fr)) { /* the input is needed no more */
			ps_flate_reader_free(p->fr);
			p->fr = NULL;
			ps_buf_free(&p->raw);
		}
	}
	if (upto > p->data.len)
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
		              "xref stream at offset %lld has fewer entries than /Index says",
		              (long long)p->stm_off);
	return 0;
}

/* Entry K of range R of the STREAM part *P, object NUM (stream_entry). */
static int range_entry(ps_doc *doc, ps_xpart *p, size_t r, uint32_t k, uint32_t num, ps_xrec *out)
{
	size_t at = p->ranges[r].at + (size_t)k * p->entlen;
	int rc;

	if ((rc = stream_cover(doc, p, at + p->entlen)) < 0)
		return rc;
	return stream_entry(doc, p, p->data.data + at, num, out);
}

/* The index of the first record of NUM or above in a RECS part. */
static size_t recs_first(const ps_xpart *p, uint32_t num)
{
	size_t lo = 0, hi = p->nrecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->recs[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ps_xpart_get(ps_doc *doc, ps_xpart *p, uint32_t num, ps_xrec *out)
{
	size_t lo = 0, hi;

	switch (p->form) {
	case PS_XPART_SUBS: {
		const ps_xsub *s;
		ps_buf b = PS_BUF_INIT;
		int rc;
		hi = p->nsubs;
		while (lo < hi) { /* the last subsection starting at or below NUM */
			size_t mid = lo + (hi - lo) / 2;
			if (p->subs[mid].first <= num)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			return 0;
		s = &p->subs[lo - 1];
		if (num - s->first >= s->count)
			return 0;
		if ((rc = ps_doc_pread(doc, s->off + (int64_t)(num - s->first) * s->stride,
		                       s->stride, &b)) == 0)
			rc = sub_entry(doc, s, num - s->first, b.data, b.len, out);
		ps_buf_free(&b);
		return rc;
	}
	case PS_XPART_STREAM:
		if (p->sorted) {
			hi = p->nranges;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (p->ranges[mid].first <= num)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == 0 || num - p->ranges[lo - 1].first >= p->ranges[lo - 1].count)
				return 0;
			lo--;
		} else { /* the first range in /Index order that holds NUM */
			for (lo = 0; lo < p->nranges; lo++)
				if (num >= p->ranges[lo].first &&
				    num - p->ranges[lo].first < p->ranges[lo].count)
					break;
			if (lo == p->nranges)
				return 0;
		}
		return range_entry(doc, p, lo, num - p->ranges[lo].first, num, out);
	case PS_XPART_RECS:
		lo = recs_first(p, num);
		if (lo < p->nrecs && p->recs[lo].num == num) {
			*out = p->recs[lo];
			return 1;
		}
		return 0;
	default:
		return 0;
	}
}

int ps_xpart_defs(ps_doc *doc, ps_xpart *p, uint32_t num, ps_xpart_fn fn, void *ud)
{
	ps_xrec r;
	size_t lo;
	int rc;

	if (p->form == PS_XPART_RECS) {
		for (rc = 0, lo = recs_first(p, num);
		     lo < p->nrecs && p->recs[lo].num == num && rc >= 0; lo++)
			rc = fn(doc, ud, &p->recs[lo]);
		return rc < 0 ? rc : 0;
	}
	if (p->form == PS_XPART_STREAM && !p->sorted) {
		for (lo = 0, rc = 0; lo < p->nranges && rc >= 0; lo++) {
			if (num < p->ranges[lo].first ||
			    num - p->ranges[lo].first >= p->ranges[lo].count)
				continue;
			rc = range_entry(doc, p, lo, num - p->ranges[lo].first, num, &r);
			if (rc == 1)
				rc = fn(doc, ud, &r);
		}
		return rc < 0 ? rc : 0;
	}
	if ((rc = ps_xpart_get(doc, p, num, &r)) == 1)
		rc = fn(doc, ud, &r);
	return rc < 0 ? rc : 0;
}

int ps_xpart_each(ps_doc *doc, ps_xpart *p, ps_xpart_fn fn, void *ud)
{
	ps_xrec r;
	size_t i;
	int rc = 0;

	switch (p->form) {
	case PS_XPART_SUBS: {
		ps_buf b = PS_BUF_INIT;
		for (i = 0; i < p->nsubs && rc >= 0; i++) {
			const ps_xsub *s = &p->subs[i];
			uint32_t per = FULL_CHUNK / s->stride, k = 0;
			while (k < s->count && rc >= 0) {
				uint32_t n = s->count - k < per ? s->count - k : per, j;
				if ((rc = ps_doc_pread(doc, s->off + (int64_t)k * s->stride,
				                       (size_t)n * s->stride, &b)) < 0)
					break;
				for (j = 0; j < n; j++) {
					size_t at = (size_t)j * s->stride;
					rc = sub_entry(doc, s, k + j, b.data + at,
					               b.len > at ? b.len - at : 0, &r);
					if (rc == 1)
						rc = fn(doc, ud, &r);
					if (rc < 0)
						break;
				}
				k += n;
			}
		}
		ps_buf_free(&b);
		break;
	}
	case PS_XPART_STREAM:
		/* all of it, judged now; a stream whose decoding failed fails here
		 * even when the rows before the damage cover the entries */
		rc = p->failed ? ps_err(ps_doc_ctx(doc), p->failed,
		                        "xref stream at offset %lld is damaged "
		                        "(found by an earlier lookup)", (long long)p->stm_off)
		               : stream_cover(doc, p, p->total);
		for (i = 0; i < p->nranges && rc >= 0; i++) {
			uint32_t k;
			for (k = 0; k < p->ranges[i].count; k++) {
				rc = range_entry(doc, p, i, k, p->ranges[i].first + k, &r);
				if (rc == 1)
					rc = fn(doc, ud, &r);
				if (rc < 0)
					break;
			}
		}
		break;
	case PS_XPART_RECS:
		for (i = 0; i < p->nrecs && rc >= 0; i++)
			rc = fn(doc, ud, &p->recs[i]);
		break;
	default:
		break;
	}
	return rc < 0 ? rc : 0;
}

void ps_xpart_free(ps_xpart *p)
{
	if (!p)
		return;
	free(p->subs);
	free(p->recs);
	free(p->ranges);
	ps_buf_free(&p->data);
	ps_flate_reader_free(p->fr);
	ps_buf_free(&p->raw);
	memset(p, 0, sizeof *p);
}
