/*
 * input.c - reading a document's input file: every byte the library reads
 * from the document goes through ps_doc_pread, every indirect object parsed
 * straight from the file through ps_doc_parse_at.
 *
 * DESIGN NOTES
 *
 * Place: below the cross-reference reader (xref.c) and the document
 * (doc.c), above io.c (the one pread loop, ps_pread_full) and the parser.
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
 *  4. A mapping instead of reads, for one file only: the rewrite's
 *     self-check re-reads the whole output it has just written, and
 *     copying 2 GB out of the page cache into buffers cost as much as
 *     reading the input (rwcheck.c note 4).  So a document opened with
 *     PS_OPEN_MAP is also mapped read-only (MADV_SEQUENTIAL) and
 *     ps_doc_mapped hands out pointers into it, bounded by the size at
 *     open and counted in bytes_read like any read.  A mapped file that
 *     shrinks kills the process (SIGBUS), so the flag is only for a file
 *     nobody else can shorten: the rewrite's output while it is unnamed
 *     (O_TMPFILE; for `-o -` without O_TMPFILE, a mkstemp file unlinked
 *     before anything is written: ps_outfile.unnamed, io.c), written
 *     through our descriptor only and never truncated.  An I/O error on
 *     a page of it is a SIGBUS too rather than an error message: the
 *     output is then gone with the process and the target untouched
 *     (io.c), as after a kill -- so the caller of the library must ask
 *     for it (PDFSTAMP_REWRITE_MAP_OUTPUT).  The command does not: once
 *     the reader's buffers were on huge pages (buf.c), reading into them
 *     beat the mapping's page faults on the benchmark VMs.  Everything
 *     else, the self-check's own xref and careful loads included, still
 *     goes through pread.  If the
 *     mapping fails, the document is simply read.  What the reader is
 *     done with leaves the resident set (ps_doc_mapped_done: MADV_DONTNEED
 *     on a shared file mapping drops only the process's page-table
 *     entries, the page cache keeps the pages and a later touch maps them
 *     again), so the resident size follows the segments in use, not the
 *     file's size.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ps.h"
#include "input.h"

#define OBJ_WINDOW_FIRST 1024
#define OBJ_WINDOW_MAX PS_OBJ_MAX
#define READ_RANGES_MAX 256 /* separate ranges of the file tracked for bytes_read */

int ps_doc_header_version(ps_doc *doc, char out[16])
{
	ps_buf h = PS_BUF_INIT;
	int rc = ps_doc_pread(doc, 0, 16, &h);

	snprintf(out, 16, "1.7");
	if (rc == 0 && h.len >= 8 && memcmp(h.data, "%PDF-", 5) == 0 && h.data[5] >= '1' && h.data[5] <= '9' &&
	    h.data[6] == '.' && h.data[7] >= '0' && h.data[7] <= '9' && (h.data[5] > '1' || h.data[7] >= '7'))
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
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "offset %lld is outside the file", (long long)off);
	if ((int64_t)len > doc->size - off)
		len = (size_t)(doc->size - off);
	if (ps_buf_reserve(out, len + 1) < 0)
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory reading %zu bytes", len);
	/* fewer than LEN bytes: the file shrank under us */
	if ((rc = ps_pread_full(doc->ctx, doc->fd, out->data, len, off, &got, "read error")) < 0)
		return rc;
	out->len = got;
	out->data[got] = 0; /* a terminator for the parser's convenience */
	return note_read(doc, off, off + (int64_t)got);
}

void ps_doc_map(ps_doc *doc)
{
	void *m;

	if (doc->map || doc->size <= 0 || (uint64_t)doc->size > SIZE_MAX)
		return;
	m = mmap(NULL, (size_t)doc->size, PROT_READ, MAP_SHARED, doc->fd, 0);
	if (m == MAP_FAILED)
		return;
	(void)madvise(m, (size_t)doc->size, MADV_SEQUENTIAL); /* a hint: its failure changes nothing */
	doc->map = m;
}

void ps_doc_unmap(ps_doc *doc)
{
	if (doc->map)
		munmap((void *)(uintptr_t)doc->map, (size_t)doc->size);
	doc->map = NULL;
}

void ps_doc_mapped_done(const uint8_t *p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a, b;

	if (!p || pg == 0 || pg == (uintptr_t)-1)
		return;
	a = ((uintptr_t)p + pg - 1) / pg * pg; /* the whole pages of [p, p + len) */
	b = ((uintptr_t)p + len) / pg * pg;
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_DONTNEED); /* a hint: its failure changes nothing */
}

const uint8_t *ps_doc_mapped(ps_doc *doc, int64_t off, size_t *len)
{
	if (!doc->map || off < 0 || off >= doc->size)
		return NULL;
	if ((int64_t)*len > doc->size - off)
		*len = (size_t)(doc->size - off);
	if (note_read(doc, off, off + (int64_t)*len) < 0)
		return NULL;
	return doc->map + off;
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
			rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "object at offset %lld is truncated or too large",
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
