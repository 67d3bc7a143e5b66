/* SPDX-License-Identifier: Apache-2.0 */
/*
 * input.c - reading a document's input file: every byte the library reads
 * from the document goes through ps_doc_pread, every indirect object parsed
 * straight from the file through ps_doc_parse_at.
 *
 * DESIGN NOTES
 *
 * Place: below the cross-reference reader (xref.c) and the document
 * (doc.c), above io.c (the one pread loop, ps_io_pread_full) and the parser.
 * It knows the document only as a file descriptor, a size and the
 * bookkeeping of what was read; it never looks an object up, so xref.c can
 * use it while the index is being built.
 *
 * Invariants:
 *  1. The file is read with pread() only, at explicit offsets, never past
 *     doc->size (the size when the document was opened, or the effective
 *     end of a salvage open, doc.c note 6): a file that grows
 *     meanwhile (an append by someone else) is not seen, one that shrinks
 *     gives short reads, never an error.
 *  2. bytes_read counts *distinct* bytes: it is what `info --json` reports,
 *     so a test can prove that the payload was never touched.  A byte read
 *     twice (the tail window, then the xref table in it) counts once, so
 *     bytes_read never exceeds the file's size.  The ranges read are kept
 *     sorted, disjoint and not touching (doc->read_ranges, start/end
 *     pairs); past READ_RANGES_MAX separate ranges (a full rewrite or
 *     verify, never a report) further reads are counted whole, still capped
 *     at the size, so the bookkeeping stays O(1).
 *  3. ps_doc_parse_at reads a window of OBJ_WINDOW_FIRST bytes and grows it
 *     fourfold while the parser asks for more (PS_E_NEEDMORE), up to
 *     OBJ_WINDOW_MAX: an object's cost follows its size.  The object is
 *     returned as it is in the file (ISO 32000-2 7.3.10, "N G obj ...
 *     endobj"): never decrypted here; doc.c decrypts what it caches.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "docpriv.h"
#include "input.h"

#define OBJ_WINDOW_FIRST 1024
#define OBJ_WINDOW_MAX PS_OBJ_MAX
#define READ_RANGES_MAX 256 /* separate ranges of the file tracked for bytes_read */

int ps_doc_header_version(ps_doc *doc, char out[16])
{
	ps_buf h = PS_BUF_INIT;
	int rc = ps_doc_pread(doc, 0, 16, &h);

	snprintf(out, 16, "1.7");
	if (rc == 0 && h.len >= 8 && memcmp(h.data, "%PDF-", 5) == 0 && h.data[5] >= '1' &&
	    h.data[5] <= '9' && h.data[6] == '.' && h.data[7] >= '0' && h.data[7] <= '9' &&
	    (h.data[5] > '1' || h.data[7] >= '7'))
		snprintf(out, 16, "%c.%c", h.data[5], h.data[7]);
	ps_buf_free(&h);
	return rc;
}

/* Adds [A, B) to the ranges read (pairs start, end: sorted, disjoint, not
 * touching); bytes_read grows by the bytes of it not read before.  0 or
 * PDFSTAMP_E_NOMEM. */
static int note_read(ps_doc *doc, int64_t a, int64_t b)
{
	int64_t *r = doc->read_ranges, added = b - a, na = a, nb = b;
	size_t n = doc->nread_ranges, lo = 0, hi = n, i, j;

	if (a >= b)
		return 0;
	if (doc->read_ranges_full)
		goto whole;
	while (lo < hi) { /* the first range that ends at or after A */
		size_t mid = lo + (hi - lo) / 2;
		if (r[2 * mid + 1] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	for (j = i; j < n && r[2 * j] <= b; j++) { /* ranges that overlap or touch [A, B) */
		int64_t s = r[2 * j] > a ? r[2 * j] : a, e = r[2 * j + 1] < b ? r[2 * j + 1] : b;
		if (e > s)
			added -= e - s;
		if (r[2 * j] < na)
			na = r[2 * j];
		if (r[2 * j + 1] > nb)
			nb = r[2 * j + 1];
	}
	if (j > i) {
		r[2 * i] = na;
		r[2 * i + 1] = nb;
		memmove(&r[2 * (i + 1)], &r[2 * j], (n - j) * 2 * sizeof *r);
		doc->nread_ranges = n - (j - i - 1);
	} else {
		if (n == doc->capread_ranges) {
			size_t ncap = n ? n * 2 : 16;
			int64_t *nr;
			if (ncap > READ_RANGES_MAX) {
				doc->read_ranges_full = 1;
				goto whole;
			}
			if (!(nr = realloc(r, ncap * 2 * sizeof *r)))
				return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			doc->read_ranges = r = nr;
			doc->capread_ranges = ncap;
		}
		memmove(&r[2 * (i + 1)], &r[2 * i], (n - i) * 2 * sizeof *r);
		r[2 * i] = a;
		r[2 * i + 1] = b;
		doc->nread_ranges = n + 1;
	}
	doc->bytes_read += added;
	return 0;
whole:
	doc->bytes_read += b - a;
	if (doc->bytes_read > doc->size)
		doc->bytes_read = doc->size;
	return 0;
}

int ps_doc_pread(ps_doc *doc, int64_t off, size_t len, ps_buf *out)
{
	size_t got = 0;
	int rc;

	out->len = 0;
	if (off < 0 || off > doc->size)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "offset %lld is outside the file",
		              (long long)off);
	if ((int64_t)len > doc->size - off)
		len = (size_t)(doc->size - off);
	if (ps_buf_reserve(out, len + 1) < 0)
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory reading %zu bytes", len);
	/* fewer than LEN bytes: the file shrank under us */
	if ((rc = ps_io_pread_full(doc->ctx, doc->fd, out->data, len, off, &got, "read error")) < 0)
		return rc;
	out->len = got;
	out->data[got] = 0; /* a terminator for the parser's convenience */
	return note_read(doc, off, off + (int64_t)got);
}

int64_t ps_doc_bytes_read(const ps_doc *doc)
{
	return doc->bytes_read;
}

ps_ctx *ps_doc_ctx(const ps_doc *doc)
{
	return doc->ctx;
}

int64_t ps_doc_size(const ps_doc *doc)
{
	return doc->size;
}

void *ps_doc_pending(const ps_doc *doc)
{
	return doc->pending;
}

void ps_doc_set_pending(ps_doc *doc, void *p, void (*drop)(void *p))
{
	doc->pending = p;
	doc->pending_drop = drop;
}

void ps_doc_file(const ps_doc *doc, struct ps_doc_file *out)
{
	memset(out, 0, sizeof *out);
	out->fd = doc->fd;
	out->path = doc->path;
	out->mode = doc->mode;
	out->locked = doc->locked;
}

int ps_doc_parse_at(ps_doc *doc, int64_t off, uint32_t expect_num, ps_obj **out, uint32_t *num_out)
{
	ps_buf w = PS_BUF_INIT;
	size_t want = OBJ_WINDOW_FIRST;
	uint32_t num = 0;
	uint16_t gen = 0;
	int rc;

	*out = NULL;
	for (;;) {
		if ((rc = ps_doc_pread(doc, off, want, &w)) < 0)
			goto out;
		rc = ps_parse_indirect(doc->ctx, w.data, w.len, 0, off, &num, &gen, out);
		if (rc == PS_E_NEEDMORE && w.len == want && want < OBJ_WINDOW_MAX) {
			want *= 4;
			continue;
		}
		if (rc == PS_E_NEEDMORE)
			rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
			            "object at offset %lld is truncated or too large",
			            (long long)off);
		break;
	}
	if (rc < 0)
		goto out;
	if (expect_num && num != expect_num) {
		ps_obj_free(*out);
		*out = NULL;
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		            "the xref says object %u is at offset %lld, but object %u is there",
		            expect_num, (long long)off, num);
		goto out;
	}
	if (num_out)
		*num_out = num;
out:
	ps_buf_free(&w);
	return rc;
}
