/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xref.c - the cross-reference reader: the /Prev chain, the merge rule and
 * the index of entries.
 *
 * DESIGN NOTES
 *
 * What is read at open (ps_xref_load): the tail of the file (to find the
 * last startxref and the last %%EOF), then each cross-reference section of
 * the /Prev chain: its trailer, and the layout of its parts (a classic
 * table, an xref stream, or both: a hybrid table whose trailer names an
 * /XRefStm), which xrefsec.c reads only as far as needed: a well-formed
 * table costs its subsection headers, not its entries.  No object other
 * than xref streams is parsed here; object streams are opened lazily by
 * doc.c.
 *
 * The index is a type of its own, struct ps_xref (one per document,
 * doc->xref): the chain (sections, newest trailer, the file's tail), the
 * merged entries, the hidden older entries and the numbers that bound
 * them.  Other modules reach it through ps_doc_xref and read it only
 * through the ps_xref_* calls of doc.h, which take the index itself
 * (const: nothing outside the reader changes it); the calls that may
 * read the file (ps_xref_find, ps_xref_load_all) take the document.
 *
 * Two states of the index:
 *   lazy  (after open)  an entry is read from the parts when first asked
 *                       for (ps_xref_find) and kept in its slot, marked
 *                       PS_XENT_KNOWN; a stamp reads the entries on the
 *                       path to its page, a few KB of a 10 MB table.
 *   full  (ps_xref_load_all, for whole-file passes: rewrite, verify, info,
 *                       audit) every entry of every part, the counts
 *                       (used, max) and the hidden older entries.
 *                       The walks (ps_xref_next, ps_xref_slot, ps_xref_as_of)
 *                       exist only here.
 * Both states apply the same merge rule to the same parts, so an entry
 * read lazily is the entry the full load records.
 *
 * Merge rule (ISO 32000-2 7.5.6, 7.5.8.4): sections are numbered 1, 2, ...
 * from the newest.  An entry is taken from the first section that mentions
 * the object (newest wins, a newer free entry hides an older object).
 * Within a hybrid section the table comes first, but a free entry of the
 * table yields to the same section's /XRefStm entry (that is how hybrid
 * files hide compressed objects from PDF 1.4 readers).
 *
 * The index is sparse: a directory of pages of PS_XREF_PAGE entries, a page
 * allocated when the first entry in its range is recorded.  A lookup is two
 * array indexings behind one call (ps_xref_get); ps_xref_next walks the
 * numbers in use, skipping empty pages.  Memory follows the entries
 * present (or asked for), not the highest object number: one object
 * numbered 8,388,000 costs one 4 KiB page and a 256 KiB directory at most,
 * not 134 MB.
 *
 * Older entries (full state): an entry that a newer section hides is kept
 * in the index's shadows (not for hybrid precedence inside one section), sorted
 * by number and section once the chain is read, so that an object can be
 * found as of any revision (ps_xref_as_of: the merged slot if its section
 * is old enough, else the newest hidden entry that is).  They cost memory
 * only for objects that later revisions redefine; past PS_MAX_SHADOWS
 * they are dropped and shadows_lost set (the audit then refuses).
 *
 * The /Encrypt object is looked up in every part of every section at open
 * (watch_encrypt): doc.c compares every definition with the one in use.
 *
 * Earlier revision ends (ps_xref_prev_eof, for doc.c's salvage open): a
 * "%%EOF" that "startxref", white space, digits and white space precede
 * (7.5.5), found scanning backwards in chunks of PREV_EOF_CHUNK bytes
 * from a given offset; each call starts below the last marker found, so
 * all of them together read the file once.  A "%%EOF" elsewhere (inside a
 * stream, a comment) is not a revision end.
 *
 * Guards: at most PS_MAX_SECTIONS sections; a /Prev or /XRefStm that points
 * at an offset already visited is a loop (FORMAT); object numbers above
 * PS_MAX_OBJNUM are refused; every count and offset is range-checked
 * against the file size before anything is allocated for it (xrefsec.c),
 * and each entry recorded allocates at most one page, so memory is bounded
 * by the size of the cross-reference data actually present.  New object
 * numbers are chosen above the bound, the highest number any section
 * mentions, which needs no entry read.
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "docpriv.h"
#include "input.h"
#include "xrefsec.h"

#define TAIL_FIRST 1024
#define TAIL_MAX (1024 * 1024)
#define PREV_EOF_CHUNK ((int64_t)64 << 10) /* the backward scan for earlier revision ends */
#define PREV_EOF_BEFORE 64                 /* what it sees before a marker: "startxref N" */
#define PS_MAX_SHADOWS ((size_t)1 << 21)

/* The slot for NUM, allocating its page (and growing the directory) on
 * first use. */
static int xref_slot(ps_doc *doc, uint32_t num, ps_xent **out)
{
	ps_xref *x = &doc->xref;
	uint32_t p = num >> PS_XREF_PAGE_BITS;

	if (num > PS_MAX_OBJNUM)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "object number %u is out of range", num);
	if (p >= x->npages) {
		uint32_t ncap = x->npages ? x->npages : 16;
		ps_xent **d;
		while (ncap <= p)
			ncap *= 2; /* at most
			            * (PS_MAX_OBJNUM >> PS_XREF_PAGE_BITS) + 1, a power of 2 */
		d = realloc(x->pages, (size_t)ncap * sizeof *d);
		if (!d)
			return ps_err(doc->ctx, PDFSTAMP_E_NOMEM,
			              "out of memory for the cross-reference index");
		memset(d + x->npages, 0, (size_t)(ncap - x->npages) * sizeof *d);
		x->bytes += (size_t)(ncap - x->npages) * sizeof *d;
		x->pages = d;
		x->npages = ncap;
	}
	if (!x->pages[p]) {
		x->pages[p] = calloc(PS_XREF_PAGE, sizeof(ps_xent));
		if (!x->pages[p])
			return ps_err(doc->ctx, PDFSTAMP_E_NOMEM,
			              "out of memory for the cross-reference index");
		x->bytes += PS_XREF_PAGE * sizeof(ps_xent);
	}
	*out = &x->pages[p][num & (PS_XREF_PAGE - 1)];
	return 0;
}

/* The lowest number above AFTER whose slot is in use (SLOTS 0) or
 * mentioned by some section at all (SLOTS 1), 0 if none. */
static uint32_t next_num(const ps_xref *x, uint32_t after, int slots)
{
	uint32_t num = after + 1, p;

	assert(x->full); /* ps_xref_load_all first: a lazy index has only what was asked */
	if (!x->full)
		return 0;
	if (num == 0) /* after was UINT32_MAX */
		return 0;
	for (p = num >> PS_XREF_PAGE_BITS; p < x->npages; p++, num = p << PS_XREF_PAGE_BITS) {
		const ps_xent *pg = x->pages[p];
		uint32_t i;
		if (!pg)
			continue;
		for (i = num & (PS_XREF_PAGE - 1); i < PS_XREF_PAGE; i++)
			if (slots ? pg[i].sec != 0 : pg[i].type != 0)
				return (p << PS_XREF_PAGE_BITS) | i;
	}
	return 0;
}

/* The slot of NUM, NULL if its page was never allocated. */
static const ps_xent *slot_of(const ps_xref *x, uint32_t num)
{
	uint32_t p = num >> PS_XREF_PAGE_BITS;

	if (p >= x->npages || !x->pages[p])
		return NULL;
	return &x->pages[p][num & (PS_XREF_PAGE - 1)];
}

const ps_xref *ps_doc_xref(const ps_doc *doc)
{
	return &doc->xref;
}

const ps_xent *ps_xref_get(const ps_xref *x, uint32_t num)
{
	const ps_xent *e = slot_of(x, num);

	return e && e->type != 0 ? e : NULL;
}

int ps_xref_type(const ps_xref *x, uint32_t num)
{
	const ps_xent *e = slot_of(x, num);

	return e ? e->type : 0;
}

uint32_t ps_xref_next(const ps_xref *x, uint32_t after)
{
	return next_num(x, after, 0);
}

const ps_xent *ps_xref_slot(const ps_xref *x, uint32_t num)
{
	const ps_xent *e;

	assert(x->full);
	e = slot_of(x, num);
	return e && e->sec != 0 ? e : NULL;
}

uint32_t ps_xref_next_slot(const ps_xref *x, uint32_t after)
{
	return next_num(x, after, 1);
}

int ps_xref_as_of(const ps_xref *x, uint32_t num, int sec, ps_xent *out)
{
	const ps_xent *e = ps_xref_slot(x, num);
	size_t lo = 0, hi = x->nshadows;

	if (!e)
		return 0;
	if (e->sec >= sec) {
		*out = *e;
		return 1;
	}
	/* the hidden entries of NUM, oldest section last: the first whose
	 * section is SEC or older */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->shadows[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->nshadows && x->shadows[lo].num == num; lo++) {
		if (x->shadows[lo].e.sec >= sec) {
			*out = x->shadows[lo].e;
			return 1;
		}
	}
	return 0;
}

const ps_section *ps_xref_sections(const ps_xref *x, int *n)
{
	*n = x->nsections;
	return x->sections;
}

const ps_obj *ps_xref_trailer(const ps_xref *x)
{
	return x->trailer;
}

void ps_xref_info(const ps_xref *x, struct ps_xref_info *out)
{
	memset(out, 0, sizeof *out);
	out->startxref = x->startxref;
	out->eof_end = x->eof_end;
	out->trailing = x->trailing;
	out->size_key = x->size_key;
	out->bound = x->bound;
	out->mentioned = x->mentioned;
	out->used = x->used;
	out->max = x->max;
	out->hidden_lost = x->shadows_lost;
}

const ps_xshadow *ps_xref_hidden(const ps_xref *x, size_t *n)
{
	*n = x->nshadows;
	return x->shadows;
}

static int cmp_shadow(const void *a, const void *b)
{
	const ps_xshadow *x = a, *y = b;

	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	if (x->e.sec != y->e.sec)
		return x->e.sec < y->e.sec ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts the hidden entries and keeps one per number and section, by the
 * merge rule's hybrid precedence (a table's free entry yields to the same
 * section's /XRefStm entry). */
static void sort_shadows(ps_xref *x)
{
	size_t i, n = 0;

	if (!x->nshadows)
		return;
	qsort(x->shadows, x->nshadows, sizeof *x->shadows, cmp_shadow);
	for (i = 0; i < x->nshadows; i++) {
		ps_xshadow *h = &x->shadows[i];
		if (n > 0 && x->shadows[n - 1].num == h->num &&
		    x->shadows[n - 1].e.sec == h->e.sec) {
			ps_xshadow *k = &x->shadows[n - 1];
			if ((k->e.flags & PS_XENT_TABLE) && k->e.type == 0 &&
			    !(h->e.flags & PS_XENT_TABLE))
				*k = *h;
			continue;
		}
		x->shadows[n++] = *h;
	}
	x->nshadows = n;
}

static void free_parts(ps_section *s);

void ps_xref_free(ps_xref *x)
{
	uint32_t p;

	for (p = 0; p < x->npages; p++)
		free(x->pages[p]);
	free(x->pages);
	free(x->shadows);
	for (int i = 0; x->sections && i < x->nsections; i++) {
		free_parts(&x->sections[i]);
		ps_obj_free(x->sections[i].enc);
		ps_obj_free(x->sections[i].id0);
		ps_obj_free(x->sections[i].root);
		ps_obj_free(x->sections[i].info);
	}
	free(x->sections);
	ps_obj_free(x->trailer);
	free(x->xstm);
	free(x->enc_versions);
	memset(x, 0, sizeof *x);
}

/* Notes one in-file definition of the /Encrypt object, whether or not a
 * newer section hides it: doc.c compares them all with the one in use.
 * At most one per section and offset, so bounded by PS_MAX_SECTIONS. */
static void note_enc_version(ps_xref *x, int64_t off, uint16_t sec)
{
	int i;

	for (i = 0; i < x->nenc_versions; i++)
		if (x->enc_versions[i].off == off)
			return;
	if (x->nenc_versions == x->capenc_versions) {
		int ncap = x->capenc_versions ? 2 * x->capenc_versions : 4;
		ps_enc_version *n = realloc(x->enc_versions, (size_t)ncap * sizeof *n);
		if (!n) {
			x->enc_versions_oom = 1;
			return;
		}
		x->enc_versions = n;
		x->capenc_versions = ncap;
	}
	x->enc_versions[x->nenc_versions].off = off;
	x->enc_versions[x->nenc_versions].sec = sec - 1;
	x->nenc_versions++;
}

/* Keeps an entry that a newer section hides (note "Older entries"). */
static void note_shadow(ps_xref *x, uint32_t num, int type, int64_t off, uint32_t aux, uint16_t sec,
                        int from_table)
{
	ps_xshadow *h;

	if (x->shadows_lost)
		return;
	if (x->nshadows == x->capshadows) {
		size_t ncap = x->capshadows ? 2 * x->capshadows : 64;
		ps_xshadow *n;
		if (ncap > PS_MAX_SHADOWS || !(n = realloc(x->shadows, ncap * sizeof *n))) {
			x->shadows_lost = 1;
			return;
		}
		x->shadows = n;
		x->capshadows = ncap;
	}
	h = &x->shadows[x->nshadows];
	memset(h, 0, sizeof *h);
	h->num = num;
	h->seq = (uint32_t)x->nshadows++;
	h->e.type = (uint8_t)type;
	h->e.off = off;
	h->e.aux = aux;
	h->e.sec = sec;
	h->e.flags = (uint8_t)((from_table ? PS_XENT_TABLE : 0) | PS_XENT_KNOWN);
}

/* Records an entry unless a newer section already decided this object
 * (the full load). */
static int set_entry(ps_doc *doc, uint32_t num, int type, int64_t off, uint32_t aux,
                     uint16_t sec, int from_table)
{
	ps_xref *x = &doc->xref;
	ps_xent *e = NULL;
	int rc;

	if (num == x->enc_watch && num != 0 && type == 1)
		note_enc_version(x, off, sec); /* every definition, hidden or not */
	if (num == 0)
		return 0; /* the head of the free list, never an object */
	if ((rc = xref_slot(doc, num, &e)) < 0)
		return rc;
	if (e->sec != 0) {
		/* hybrid: this section's XRefStm overrides its own table's free entry */
		if (!(e->sec == sec && (e->flags & PS_XENT_TABLE) && e->type == 0 && !from_table)) {
			if (e->sec != sec)
				note_shadow(x, num, type, off, aux, sec, from_table);
			return 0;
		}
	}
	/* An entry in use is never overwritten (only a free one yields), so
	 * the counts only grow. */
	if (type != 0) {
		x->used++;
		if (num > x->max)
			x->max = num;
	}
	e->type = (uint8_t)type;
	e->off = off;
	e->aux = aux;
	e->sec = sec;
	e->flags = (uint8_t)((from_table ? PS_XENT_TABLE : 0) | PS_XENT_KNOWN);
	return 0;
}

/* Finds the last "startxref" and "%%EOF" near the end of the file. */
static int find_startxref(ps_doc *doc)
{
	ps_xref *x = &doc->xref;
	ps_buf tail = PS_BUF_INIT;
	size_t want = TAIL_FIRST;
	int64_t base;
	size_t i, pos;
	int rc = 0, found = 0;

	if (doc->size < 20)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		              "file is too small to be a PDF (%lld bytes)", (long long)doc->size);
	for (;;) {
		if ((int64_t)want > doc->size)
			want = (size_t)doc->size;
		base = doc->size - (int64_t)want;
		if ((rc = ps_doc_pread(doc, base, want, &tail)) < 0)
			goto out;
		for (i = tail.len >= 9 ? tail.len - 9 + 1 : 0; i-- > 0;) {
			if (memcmp(tail.data + i, "startxref", 9) == 0) {
				found = 1;
				break;
			}
		}
		if (found || (int64_t)want >= doc->size || want >= TAIL_MAX)
			break;
		want *= 16;
	}
	if (!found) {
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		            "no startxref found: not a PDF, or truncated");
		goto out;
	}
	pos = ps_parse_skip_ws(tail.data, tail.len, i + 9);
	if (ps_parse_uint(tail.data, tail.len, &pos, &x->startxref) < 0) {
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		            "startxref is not followed by a valid offset");
		goto out;
	}
	if (x->startxref >= doc->size) {
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		            "startxref %lld points past the end of the file",
		            (long long)x->startxref);
		goto out;
	}
	/* The last %%EOF after startxref; what follows it (beyond one EOL and
	 * white space) is reported as trailing bytes. */
	x->eof_end = -1;
	for (i = tail.len >= 5 ? tail.len - 5 + 1 : 0; i-- > pos;) {
		if (memcmp(tail.data + i, "%%EOF", 5) == 0) {
			size_t e = i + 5, j;
			int64_t junk = 0;
			if (e < tail.len && tail.data[e] == '\r')
				e++;
			if (e < tail.len && tail.data[e] == '\n')
				e++;
			x->eof_end = base + (int64_t)e;
			for (j = e; j < tail.len; j++)
				if (!ps_is_space(tail.data[j]))
					junk = (int64_t)(tail.len - e);
			x->trailing = junk;
			break;
		}
	}
	if (x->eof_end < 0) {
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		            "no %%%%EOF after the last startxref: the file is truncated");
		goto out;
	}
out:
	ps_buf_free(&tail);
	return rc;
}

/* Does "startxref", white space, digits and white space end just before
 * index Q of W (the "%%EOF" of a revision's end, ISO 32000-2 7.5.5)? */
static int ends_revision(const uint8_t *w, size_t q)
{
	size_t i = q, d;

	while (i > 0 && ps_is_space(w[i - 1]))
		i--;
	for (d = i; i > 0 && w[i - 1] >= '0' && w[i - 1] <= '9'; i--)
		;
	if (i == d || i == 0 || !ps_is_space(w[i - 1]))
		return 0;
	while (i > 0 && ps_is_space(w[i - 1]))
		i--;
	return i >= 9 && memcmp(w + i - 9, "startxref", 9) == 0;
}

int ps_xref_prev_eof(ps_doc *doc, int64_t below, int64_t *mark, int64_t *end)
{
	ps_buf w = PS_BUF_INIT;
	int64_t hi = below < doc->size ? below : doc->size;
	int rc = 0;

	*mark = *end = -1;
	while (hi > 0) {
		int64_t lo = hi > PREV_EOF_CHUNK ? hi - PREV_EOF_CHUNK : 0;
		int64_t wb = lo > PREV_EOF_BEFORE ? lo - PREV_EOF_BEFORE : 0;
		int64_t we = doc->size - hi > 6 ? hi + 6 : doc->size;
		size_t i;

		if ((rc = ps_doc_pread(doc, wb, (size_t)(we - wb), &w)) < 0)
			break;
		/* markers that start in [lo, hi), newest first */
		for (i = (size_t)(hi - wb); i-- > (size_t)(lo - wb);) {
			size_t e = i + 5;
			if (e > w.len || memcmp(w.data + i, "%%EOF", 5) != 0 ||
			    !ends_revision(w.data, i))
				continue;
			if (e < w.len && w.data[e] == '\r')
				e++;
			if (e < w.len && w.data[e] == '\n')
				e++;
			*mark = wb + (int64_t)i;
			*end = wb + (int64_t)e;
			rc = 1;
			goto out;
		}
		hi = lo;
	}
out:
	ps_buf_free(&w);
	return rc;
}

/* The trailer dictionary that starts at OFF (just past "trailer"). */
static int read_trailer(ps_doc *doc, int64_t off, ps_obj **trailer)
{
	ps_ctx *ctx = doc->ctx;
	ps_buf w = PS_BUF_INIT;
	size_t want = 4096;
	int rc;

	*trailer = NULL;
	for (;;) {
		size_t p = 0;

		if ((rc = ps_doc_pread(doc, off, want, &w)) < 0)
			goto out;
		rc = ps_parse_obj(ctx, w.data, w.len, &p, trailer);
		if (rc == PS_E_NEEDMORE && w.len == want && want < (64u << 20)) {
			want *= 4;
			continue;
		}
		if (rc == PS_E_NEEDMORE)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "the trailer at offset %lld is truncated", (long long)off);
		if (rc < 0)
			goto out;
		break;
	}
	if ((*trailer)->kind != PS_DICT) {
		ps_obj_free(*trailer);
		*trailer = NULL;
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "the trailer at offset %lld is not a dictionary", (long long)off);
	}
out:
	ps_buf_free(&w);
	return rc;
}

/* Reads the xref stream whose object starts at OFF into *PART; *dict
 * (may be NULL) receives a copy of its dictionary (which doubles as the
 * trailer). */
static int read_xref_stream(ps_doc *doc, int64_t off, ps_xpart *part, ps_obj **dict,
                            uint32_t *stream_num)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *stm = NULL;
	int rc;

	if (dict)
		*dict = NULL;
	if ((rc = ps_doc_parse_at(doc, off, 0, &stm, stream_num)) < 0)
		goto out;
	if (stm->kind != PS_STREAM || !ps_obj_is_name(ps_dict_get(stm, "Type"), "XRef")) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "offset %lld holds neither an xref table nor an xref stream",
		            (long long)off);
		goto out;
	}
	if ((rc = ps_xpart_read_stream(doc, stm, off, part)) < 0)
		goto out;
	if (dict && !(*dict = ps_obj_copy(stm->u.stm.dict)))
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(stm);
	return rc;
}

/* Has any of the first N sections used OFF? */
static int visited(const ps_doc *doc, int64_t off, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (doc->xref.sections[i].off == off || doc->xref.sections[i].xrefstm == off)
			return 1;
	return 0;
}

/* Is there an "xref" keyword at OFF (after white space)? */
static int starts_with_xref(ps_doc *doc, int64_t off, int *is_table)
{
	ps_buf w = PS_BUF_INIT;
	size_t pos;
	int rc;

	if ((rc = ps_doc_pread(doc, off, 64, &w)) < 0)
		return rc;
	pos = ps_parse_skip_ws(w.data, w.len, 0);
	*is_table = w.len - pos >= 4 && memcmp(w.data + pos, "xref", 4) == 0;
	ps_buf_free(&w);
	return 0;
}

static int get_offset_key(ps_doc *doc, const ps_obj *d, const char *key, int64_t *out)
{
	ps_obj *o = ps_dict_get(d, key);

	*out = -1;
	if (!o)
		return 0;
	if (ps_obj_int(o, out) < 0 || *out < 0 || *out >= doc->size)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "trailer /%s is not a valid offset",
		              key);
	return 0;
}

/* Keeps what section S's trailer says about encryption (/Encrypt, ID[0];
 * and /Root, /Info, /Size for the audit) for the chain check. */
static int keep_security_facts(ps_doc *doc, ps_section *s, const ps_obj *trailer)
{
	ps_obj *enc = ps_dict_get(trailer, "Encrypt");
	ps_obj *id0 = ps_array_get(ps_dict_get(trailer, "ID"), 0);

	if (enc && !(s->enc = ps_obj_copy(enc)))
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (id0 && !(s->id0 = ps_obj_copy(id0)))
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (ps_dict_get(trailer, "Root") && !(s->root = ps_obj_copy(ps_dict_get(trailer, "Root"))))
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (ps_dict_get(trailer, "Info") && !(s->info = ps_obj_copy(ps_dict_get(trailer, "Info"))))
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (ps_obj_int(ps_dict_get(trailer, "Size"), &s->size) < 0 || s->size < 0)
		s->size = -1;
	return 0;
}

static int cmp_xstm(const void *a, const void *b)
{
	const ps_xstm *x = a, *y = b;

	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The chain's own xref streams (stream sections and hybrids' /XRefStm),
 * sorted by object number, for ps_doc_is_xref_stream. */
static int index_xref_streams(ps_doc *doc)
{
	ps_xref *x = &doc->xref;
	int i;

	x->xstm = calloc((size_t)x->nsections + 1, sizeof *x->xstm);
	if (!x->xstm)
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < x->nsections; i++) {
		const ps_section *s = &x->sections[i];
		if (s->kind == PDFSTAMP_XREF_STREAM) {
			x->xstm[x->nxstm].num = s->stream_num;
			x->xstm[x->nxstm++].off = s->off;
		} else if (s->kind == PDFSTAMP_XREF_HYBRID) {
			x->xstm[x->nxstm].num = s->xrefstm_num;
			x->xstm[x->nxstm++].off = s->xrefstm;
		}
	}
	qsort(x->xstm, x->nxstm, sizeof *x->xstm, cmp_xstm);
	return 0;
}

/* Every in-file definition of the newest trailer's /Encrypt object, in
 * every part of every section, hidden or not (doc.c compares them all). */
struct watch {
	uint16_t sec;
};

static int watch_def(ps_doc *doc, void *ud, const ps_xrec *r)
{
	if (r->type == 1)
		note_enc_version(&doc->xref, r->off, ((struct watch *)ud)->sec);
	return 0;
}

static int watch_encrypt(ps_doc *doc)
{
	ps_xref *x = &doc->xref;
	int i, k, rc;

	if (!x->enc_watch)
		return 0;
	for (i = 0; i < x->nsections; i++) {
		ps_xpart *parts[2] = {x->sections[i].tab, x->sections[i].stm};
		struct watch w = {(uint16_t)(i + 1)};
		for (k = 0; k < 2; k++)
			if (parts[k] &&
			    (rc = ps_xpart_defs(doc, parts[k], x->enc_watch, watch_def, &w)) < 0)
				return rc;
	}
	return 0;
}

static int merge_section(ps_doc *doc, int i);

/* Past this many bytes of decoded xref streams kept for lazy lookups (or
 * with a stream whose /Index ranges are unsorted or overlap), the chain
 * is loaded whole at open, section by section as it is read, each
 * section's parts freed once merged: memory as for the full load. */
#define XREF_KEPT_MAX ((size_t)32 << 20)
/* Sections walked by lazy lookups before the full load takes over. */
#define XREF_LAZY_WORK_MAX ((uint64_t)1 << 16)

static int new_part(ps_doc *doc, ps_xpart **p)
{
	if (!(*p = calloc(1, sizeof **p)))
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

int ps_xref_load(ps_doc *doc)
{
	ps_xref *x = &doc->xref;
	ps_ctx *ctx = doc->ctx;
	int64_t off;
	int rc;

	if ((rc = find_startxref(doc)) < 0)
		return rc;
	off = x->startxref;
	while (off >= 0) {
		ps_section *s;
		ps_obj *trailer = NULL;
		int is_table;

		if (x->nsections >= PS_MAX_SECTIONS)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "more than %d cross-reference sections", PS_MAX_SECTIONS);
		if (visited(doc, off, x->nsections))
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the /Prev chain loops back to offset %lld", (long long)off);
		s = realloc(x->sections, (size_t)(x->nsections + 1) * sizeof *s);
		if (!s)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		x->sections = s;
		s = &x->sections[x->nsections++];
		memset(s, 0, sizeof *s);
		s->off = off;
		s->xrefstm = -1;
		s->prev = -1;
		if ((rc = starts_with_xref(doc, off, &is_table)) < 0)
			return rc;
		if (is_table) {
			int64_t toff;
			s->kind = PDFSTAMP_XREF_TABLE;
			if ((rc = new_part(doc, &s->tab)) < 0 ||
			    (rc = ps_xpart_read_table(doc, off, s->tab, &toff)) < 0 ||
			    (rc = read_trailer(doc, toff, &trailer)) < 0)
				return rc;
			if ((rc = get_offset_key(doc, trailer, "XRefStm", &s->xrefstm)) < 0 ||
			    (rc = get_offset_key(doc, trailer, "Prev", &s->prev)) < 0) {
				ps_obj_free(trailer);
				return rc;
			}
			if (s->xrefstm >= 0) {
				if (s->xrefstm == off ||
				    visited(doc, s->xrefstm, x->nsections - 1)) {
					ps_obj_free(trailer);
					return ps_err(ctx, PDFSTAMP_E_FORMAT,
					              "/XRefStm at offset %lld points at a section "
					              "already read", (long long)s->xrefstm);
				}
				s->kind = PDFSTAMP_XREF_HYBRID;
				if ((rc = new_part(doc, &s->stm)) < 0 ||
				    (rc = read_xref_stream(doc, s->xrefstm, s->stm, NULL,
				                           &s->xrefstm_num)) < 0) {
					ps_obj_free(trailer);
					return rc;
				}
			}
		} else {
			s->kind = PDFSTAMP_XREF_STREAM;
			if ((rc = new_part(doc, &s->stm)) < 0 ||
			    (rc = read_xref_stream(doc, off, s->stm, &trailer, &s->stream_num)) < 0)
				return rc;
			if ((rc = get_offset_key(doc, trailer, "Prev", &s->prev)) < 0) {
				ps_obj_free(trailer);
				return rc;
			}
		}
		if ((rc = keep_security_facts(doc, s, trailer)) < 0) {
			ps_obj_free(trailer);
			return rc;
		}
		{
			ps_xpart *parts[2] = {s->tab, s->stm};
			for (int k = 0; k < 2; k++) {
				if (!parts[k])
					continue;
				if (parts[k]->bound > x->bound)
					x->bound = parts[k]->bound;
				x->mentioned += parts[k]->nents;
			}
		}
		if (x->nsections == 1) {
			ps_obj *enc = ps_dict_get(trailer, "Encrypt");
			if (enc && enc->kind == PS_REF)
				x->enc_watch = enc->u.ref.num; /* every definition of it is
				                                * noted (doc.c compares them) */
		}
		if (s->stm) {
			x->kept += s->stm->kept;
			if (x->kept > XREF_KEPT_MAX || !s->stm->sorted)
				x->full = 1; /* from now on: the full load, merged as read */
		}
		if (x->full) {
			int i0;
			for (i0 = x->merged; i0 < x->nsections; i0++) {
				if ((rc = merge_section(doc, i0)) < 0) {
					ps_obj_free(trailer);
					return rc;
				}
				free_parts(&x->sections[i0]);
			}
			x->merged = x->nsections;
		}
		if (!x->trailer) {
			x->trailer = trailer;
		} else {
			/* Keys the newest trailer lacks are taken from older ones. */
			static const char *const carry[] = {"Root", "Info", "ID", "Encrypt"};
			size_t k;
			for (k = 0; k < sizeof carry / sizeof carry[0]; k++) {
				ps_obj *v = ps_dict_get(trailer, carry[k]);
				if (v && !ps_dict_get(x->trailer, carry[k])) {
					if ((rc = ps_dict_put(x->trailer, carry[k],
					                      ps_obj_copy(v))) < 0) {
						ps_obj_free(trailer);
						return ps_err(ctx, rc, "out of memory");
					}
				}
			}
			ps_obj_free(trailer);
		}
		off = (doc->open_flags & PS_OPEN_NEWEST_ONLY) ? -1 : s->prev;
	}
	if (ps_obj_int(ps_dict_get(x->trailer, "Size"), &x->size_key) < 0 || x->size_key < 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer has no valid /Size");
	if (!ps_dict_get(x->trailer, "Root"))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer has no /Root");
	if (x->full) {
		sort_shadows(x);
		x->kept = 0;
	} else if ((rc = watch_encrypt(doc)) < 0) {
		return rc;
	}
	return index_xref_streams(doc);
}

/* The merged entry of NUM from the parts (the merge rule, design notes):
 * 1 with *OUT, 0 if no section mentions NUM. */
static int merged_entry(ps_doc *doc, uint32_t num, ps_xent *out)
{
	int i, rc;

	for (i = 0; i < doc->xref.nsections; i++) {
		const ps_section *s = &doc->xref.sections[i];
		ps_xrec t, x;
		int has_t = 0, from_tab = 1;
		if (s->tab) {
			if ((rc = ps_xpart_get(doc, s->tab, num, &t)) < 0)
				return rc;
			has_t = rc;
			if (has_t && t.type != 0) {
				x = t;
				goto found;
			}
		}
		if (s->stm) {
			if ((rc = ps_xpart_get(doc, s->stm, num, &x)) < 0)
				return rc;
			if (rc == 1) {
				from_tab = 0;
				goto found;
			}
		}
		if (has_t) {
			x = t;
			goto found;
		}
		continue;
found:
		out->type = x.type;
		out->off = x.off;
		out->aux = x.aux;
		out->sec = (uint16_t)(i + 1);
		out->flags = (uint8_t)(PS_XENT_KNOWN | (from_tab ? PS_XENT_TABLE : 0));
		return 1;
	}
	return 0;
}

int ps_xref_find(ps_doc *doc, uint32_t num, const ps_xent **out)
{
	ps_xref *x = &doc->xref;
	ps_xent *e, m;
	int rc;

	*out = NULL;
	if (num == 0 || num > PS_MAX_OBJNUM)
		return 0;
	if (x->full) {
		*out = ps_xref_get(x, num);
		return 0;
	}
	{
		uint32_t p = num >> PS_XREF_PAGE_BITS;
		if (p < x->npages && x->pages[p]) {
			e = &x->pages[p][num & (PS_XREF_PAGE - 1)];
			if (e->flags & PS_XENT_KNOWN) {
				*out = e->type != 0 ? e : NULL;
				return 0;
			}
		}
	}
	if (num >= x->bound)
		return 0; /* no section lists it */
	/* Many lookups on a long chain: the full load is cheaper from here on
	 * (each lazy lookup walks the sections; hostile files can have 4096).
	 * If it fails (a damaged entry nobody asked for), stay lazy. */
	x->lazy_work += (uint64_t)x->nsections;
	if (x->lazy_work > XREF_LAZY_WORK_MAX && !x->full_failed) {
		if (ps_xref_load_all(doc) == 0) {
			*out = ps_xref_get(x, num);
			return 0;
		}
		x->full_failed = 1;
		doc->ctx->errmsg[0] = '\0';
	}
	memset(&m, 0, sizeof m);
	if ((rc = merged_entry(doc, num, &m)) <= 0)
		return rc; /* not mentioned: nothing is kept (no page for a number nobody lists) */
	if ((rc = xref_slot(doc, num, &e)) < 0)
		return rc;
	*e = m;
	*out = e->type != 0 ? e : NULL;
	return 0;
}

struct full_load {
	uint16_t sec;
	int from_table;
};

static int full_entry(ps_doc *doc, void *ud, const ps_xrec *r)
{
	const struct full_load *f = ud;

	return set_entry(doc, r->num, r->type, r->off, r->aux, f->sec, f->from_table);
}

/* Records every entry of section I (the full load; sections in order,
 * newest first) and frees its parts, which the full index replaces. */
static int merge_section(ps_doc *doc, int i)
{
	ps_section *s = &doc->xref.sections[i];
	struct full_load f = {(uint16_t)(i + 1), 1};
	int rc;

	if (s->tab && (rc = ps_xpart_each(doc, s->tab, full_entry, &f)) < 0)
		return rc;
	f.from_table = 0;
	if (s->stm && (rc = ps_xpart_each(doc, s->stm, full_entry, &f)) < 0)
		return rc;
	return 0;
}

static void free_parts(ps_section *s)
{
	ps_xpart_free(s->tab);
	ps_xpart_free(s->stm);
	free(s->tab);
	free(s->stm);
	s->tab = s->stm = NULL;
}

int ps_xref_load_all(ps_doc *doc)
{
	ps_xref *x = &doc->xref;
	uint32_t p;
	int i, rc = 0;

	if (x->full)
		return 0;
	/* Entries resolved lazily so far are recomputed in place: pointers
	 * handed out stay valid and see the same values (the parts answer
	 * alike lazily and in full: xrefsec.c). */
	for (p = 0; p < x->npages; p++)
		if (x->pages[p])
			memset(x->pages[p], 0, PS_XREF_PAGE * sizeof(ps_xent));
	x->used = x->max = 0;
	for (i = 0; i < x->nsections && rc >= 0; i++)
		rc = merge_section(doc, i);
	if (rc < 0) { /* back to an empty lazy index */
		for (p = 0; p < x->npages; p++)
			if (x->pages[p])
				memset(x->pages[p], 0, PS_XREF_PAGE * sizeof(ps_xent));
		x->used = x->max = 0;
		x->nshadows = 0;
		return rc;
	}
	sort_shadows(x);
	for (i = 0; i < x->nsections; i++)
		free_parts(&x->sections[i]);
	x->kept = 0;
	x->full = 1;
	return 0;
}

int ps_doc_is_xref_stream(ps_doc *doc, uint32_t num)
{
	const ps_xref *x = &doc->xref;
	/* The live object NUM is a section of the chain when its entry points
	 * at that section's xref stream; a number an xref stream once had but a
	 * newer revision gave to another object is not (issue 11).  Binary
	 * search: every stream of a rewrite asks, and a chain may have
	 * PS_MAX_SECTIONS sections. */
	const ps_xent *e;
	size_t lo = 0, hi = x->nxstm;

	if (ps_xref_find(doc, num, &e) < 0 || !e || e->type != 1)
		return 0; /* an entry that cannot be read is not one of the chain's (their
		           * entries were read at open) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->xstm[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->nxstm && x->xstm[lo].num == num; lo++)
		if (x->xstm[lo].off == e->off)
			return 1;
	return 0;
}
