/*
 * xref.c - the cross-reference reader.
 *
 * DESIGN NOTES
 *
 * What is read: the tail of the file (to find the last startxref and the
 * last %%EOF), then each cross-reference section of the /Prev chain: a
 * classic table with its trailer, an xref stream, or both (a hybrid table
 * whose trailer names an /XRefStm).  No object other than xref streams is
 * parsed here; object streams are opened lazily by doc.c.
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
 * array indexings (ps_xref_get, inline in doc.h); ps_xref_next walks the
 * numbers in use, skipping empty pages.  Memory follows the entries
 * present, not the highest object number: one object numbered 8,388,000
 * costs one 4 KiB page and a 256 KiB directory at most, not 134 MB.
 *
 * Older entries: an entry that a newer section hides is kept in
 * doc->shadows (not for hybrid precedence inside one section), sorted by
 * number and section once the chain is read, so that an object can be
 * found as of any revision (ps_xref_as_of: the merged slot if its section
 * is old enough, else the newest hidden entry that is).  They cost memory
 * only for objects that later revisions redefine; past PS_MAX_SHADOWS
 * they are dropped and shadows_lost set (the audit then refuses).
 *
 * Guards: at most PS_MAX_SECTIONS sections; a /Prev or /XRefStm that points
 * at an offset already visited is a loop (FORMAT); object numbers above
 * PS_MAX_OBJNUM are refused; every count and offset is range-checked
 * against the file size before anything is allocated for it, and each
 * entry read allocates at most one page, so memory is bounded by the size
 * of the cross-reference data actually present (at worst one page per
 * subsection or /Index range, whatever the object numbers).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "input.h"

#define TAIL_FIRST 1024
#define TAIL_MAX (1024 * 1024)
#define XREFSTM_MAX_DECODED ((size_t)PS_MAX_OBJNUM * 20)
#define PS_MAX_SHADOWS ((size_t)1 << 21)

/* The slot for NUM, allocating its page (and growing the directory) on
 * first use. */
static int xref_slot(ps_doc *doc, uint32_t num, ps_xent **out)
{
	uint32_t p = num >> PS_XREF_PAGE_BITS;

	if (num > PS_MAX_OBJNUM)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "object number %u is out of range", num);
	if (p >= doc->nxpages) {
		uint32_t ncap = doc->nxpages ? doc->nxpages : 16;
		ps_xent **d;
		while (ncap <= p)
			ncap *= 2; /* at most (PS_MAX_OBJNUM >> PS_XREF_PAGE_BITS) + 1, a power of 2 */
		d = realloc(doc->xpages, (size_t)ncap * sizeof *d);
		if (!d)
			return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory for the cross-reference index");
		memset(d + doc->nxpages, 0, (size_t)(ncap - doc->nxpages) * sizeof *d);
		doc->xref_bytes += (size_t)(ncap - doc->nxpages) * sizeof *d;
		doc->xpages = d;
		doc->nxpages = ncap;
	}
	if (!doc->xpages[p]) {
		doc->xpages[p] = calloc(PS_XREF_PAGE, sizeof(ps_xent));
		if (!doc->xpages[p])
			return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory for the cross-reference index");
		doc->xref_bytes += PS_XREF_PAGE * sizeof(ps_xent);
	}
	*out = &doc->xpages[p][num & (PS_XREF_PAGE - 1)];
	return 0;
}

/* The lowest number above AFTER whose slot is in use (SLOTS 0) or
 * mentioned by some section at all (SLOTS 1), 0 if none. */
static uint32_t next_num(const ps_doc *doc, uint32_t after, int slots)
{
	uint32_t num = after + 1, p;

	if (num == 0) /* after was UINT32_MAX */
		return 0;
	for (p = num >> PS_XREF_PAGE_BITS; p < doc->nxpages; p++, num = p << PS_XREF_PAGE_BITS) {
		const ps_xent *pg = doc->xpages[p];
		uint32_t i;
		if (!pg)
			continue;
		for (i = num & (PS_XREF_PAGE - 1); i < PS_XREF_PAGE; i++)
			if (slots ? pg[i].sec != 0 : pg[i].type != 0)
				return (p << PS_XREF_PAGE_BITS) | i;
	}
	return 0;
}

uint32_t ps_xref_next(const ps_doc *doc, uint32_t after)
{
	return next_num(doc, after, 0);
}

const ps_xent *ps_xref_slot(const ps_doc *doc, uint32_t num)
{
	uint32_t p = num >> PS_XREF_PAGE_BITS;
	const ps_xent *e;

	if (p >= doc->nxpages || !doc->xpages[p])
		return NULL;
	e = &doc->xpages[p][num & (PS_XREF_PAGE - 1)];
	return e->sec != 0 ? e : NULL;
}

uint32_t ps_xref_next_slot(const ps_doc *doc, uint32_t after)
{
	return next_num(doc, after, 1);
}

int ps_xref_as_of(const ps_doc *doc, uint32_t num, int sec, ps_xent *out)
{
	const ps_xent *e = ps_xref_slot(doc, num);
	size_t lo = 0, hi = doc->nshadows;

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
		if (doc->shadows[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < doc->nshadows && doc->shadows[lo].num == num; lo++) {
		if (doc->shadows[lo].e.sec >= sec) {
			*out = doc->shadows[lo].e;
			return 1;
		}
	}
	return 0;
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
static void sort_shadows(ps_doc *doc)
{
	size_t i, n = 0;

	if (!doc->nshadows)
		return;
	qsort(doc->shadows, doc->nshadows, sizeof *doc->shadows, cmp_shadow);
	for (i = 0; i < doc->nshadows; i++) {
		ps_xshadow *x = &doc->shadows[i];
		if (n > 0 && doc->shadows[n - 1].num == x->num && doc->shadows[n - 1].e.sec == x->e.sec) {
			ps_xshadow *k = &doc->shadows[n - 1];
			if (k->e.from_table && k->e.type == 0 && !x->e.from_table)
				*k = *x;
			continue;
		}
		doc->shadows[n++] = *x;
	}
	doc->nshadows = n;
}

void ps_xref_free(ps_doc *doc)
{
	uint32_t p;

	for (p = 0; p < doc->nxpages; p++)
		free(doc->xpages[p]);
	free(doc->xpages);
	doc->xpages = NULL;
	doc->nxpages = 0;
	doc->xref_used = doc->xref_max = 0;
	doc->xref_bytes = 0;
	free(doc->shadows);
	doc->shadows = NULL;
	doc->nshadows = doc->capshadows = 0;
}

/* Notes one in-file definition of the /Encrypt object, whether or not a
 * newer section hides it: doc.c compares them all with the one in use.
 * At most one per section and offset, so bounded by PS_MAX_SECTIONS. */
static void note_enc_version(ps_doc *doc, int64_t off, uint16_t sec)
{
	int i;

	for (i = 0; i < doc->nenc_versions; i++)
		if (doc->enc_versions[i].off == off)
			return;
	if (doc->nenc_versions == doc->capenc_versions) {
		int ncap = doc->capenc_versions ? 2 * doc->capenc_versions : 4;
		ps_enc_version *n = realloc(doc->enc_versions, (size_t)ncap * sizeof *n);
		if (!n) {
			doc->enc_versions_oom = 1;
			return;
		}
		doc->enc_versions = n;
		doc->capenc_versions = ncap;
	}
	doc->enc_versions[doc->nenc_versions].off = off;
	doc->enc_versions[doc->nenc_versions].sec = sec - 1;
	doc->nenc_versions++;
}

/* Keeps an entry that a newer section hides (note "Older entries"). */
static void note_shadow(ps_doc *doc, uint32_t num, int type, int64_t off, uint32_t aux, uint16_t sec,
                        int from_table)
{
	ps_xshadow *x;

	if (doc->shadows_lost)
		return;
	if (doc->nshadows == doc->capshadows) {
		size_t ncap = doc->capshadows ? 2 * doc->capshadows : 64;
		ps_xshadow *n;
		if (ncap > PS_MAX_SHADOWS || !(n = realloc(doc->shadows, ncap * sizeof *n))) {
			doc->shadows_lost = 1;
			return;
		}
		doc->shadows = n;
		doc->capshadows = ncap;
	}
	x = &doc->shadows[doc->nshadows];
	memset(x, 0, sizeof *x);
	x->num = num;
	x->seq = (uint32_t)doc->nshadows++;
	x->e.type = (uint8_t)type;
	x->e.off = off;
	x->e.aux = aux;
	x->e.sec = sec;
	x->e.from_table = (uint8_t)from_table;
}

/* Records an entry unless a newer section already decided this object. */
static int set_entry(ps_doc *doc, uint32_t num, int type, int64_t off, uint32_t aux,
                     uint16_t sec, int from_table)
{
	ps_xent *e = NULL;
	int rc;

	if (num == doc->enc_watch && num != 0 && type == 1)
		note_enc_version(doc, off, sec);
	if (num == 0)
		return 0; /* the head of the free list, never an object */
	if ((rc = xref_slot(doc, num, &e)) < 0)
		return rc;
	if (e->sec != 0) {
		/* hybrid: this section's XRefStm overrides its own table's free entry */
		if (!(e->sec == sec && e->from_table && e->type == 0 && !from_table)) {
			if (e->sec != sec)
				note_shadow(doc, num, type, off, aux, sec, from_table);
			return 0;
		}
	}
	/* An entry in use is never overwritten (only a free one yields), so
	 * the counts only grow. */
	if (type != 0) {
		doc->xref_used++;
		if (num > doc->xref_max)
			doc->xref_max = num;
	}
	e->type = (uint8_t)type;
	e->off = off;
	e->aux = aux;
	e->sec = sec;
	e->from_table = (uint8_t)from_table;
	return 0;
}

/* Finds the last "startxref" and "%%EOF" near the end of the file. */
static int find_startxref(ps_doc *doc)
{
	ps_buf tail = PS_BUF_INIT;
	size_t want = TAIL_FIRST;
	int64_t base;
	size_t i, pos;
	int rc = 0, found = 0;

	if (doc->size < 20)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "file is too small to be a PDF (%lld bytes)",
		              (long long)doc->size);
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
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "no startxref found: not a PDF, or truncated");
		goto out;
	}
	pos = ps_skip_ws(tail.data, tail.len, i + 9);
	if (ps_parse_uint(tail.data, tail.len, &pos, &doc->startxref) < 0) {
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "startxref is not followed by a valid offset");
		goto out;
	}
	if (doc->startxref >= doc->size) {
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "startxref %lld points past the end of the file",
		            (long long)doc->startxref);
		goto out;
	}
	/* The last %%EOF after startxref; what follows it (beyond one EOL and
	 * white space) is reported as trailing bytes. */
	doc->eof_end = -1;
	for (i = tail.len >= 5 ? tail.len - 5 + 1 : 0; i-- > pos;) {
		if (memcmp(tail.data + i, "%%EOF", 5) == 0) {
			size_t e = i + 5, j;
			int64_t junk = 0;
			if (e < tail.len && tail.data[e] == '\r')
				e++;
			if (e < tail.len && tail.data[e] == '\n')
				e++;
			doc->eof_end = base + (int64_t)e;
			for (j = e; j < tail.len; j++)
				if (!ps_is_space(tail.data[j]))
					junk = (int64_t)(tail.len - e);
			doc->trailing = junk;
			break;
		}
	}
	if (doc->eof_end < 0) {
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "no %%%%EOF after the last startxref: the file is truncated");
		goto out;
	}
out:
	ps_buf_free(&tail);
	return rc;
}

/* Reads a classic table at OFF (pointing at "xref"); sets *trailer. */
static int read_table(ps_doc *doc, int64_t off, uint16_t sec, ps_obj **trailer)
{
	ps_ctx *ctx = doc->ctx;
	ps_buf w = PS_BUF_INIT;
	size_t pos, want;
	int64_t cur = off;
	int rc;

	*trailer = NULL;
	if ((rc = ps_doc_pread(doc, cur, 4096, &w)) < 0)
		goto out;
	pos = ps_skip_ws(w.data, w.len, 0);
	if (w.len - pos < 4 || memcmp(w.data + pos, "xref", 4) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "no cross-reference table at offset %lld", (long long)off);
		goto out;
	}
	pos += 4;
	for (;;) {
		int64_t first, count, i;

		pos = ps_skip_ws(w.data, w.len, pos);
		if (w.len - pos >= 7 && memcmp(w.data + pos, "trailer", 7) == 0) {
			pos += 7;
			break;
		}
		/* Re-anchor the window on the subsection header so that its
		 * entries fit. */
		cur += (int64_t)pos;
		if ((rc = ps_doc_pread(doc, cur, 64, &w)) < 0)
			goto out;
		pos = 0;
		if (ps_parse_uint(w.data, w.len, &pos, &first) < 0 ||
		    (pos = ps_skip_ws(w.data, w.len, pos),
		     ps_parse_uint(w.data, w.len, &pos, &count) < 0)) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad cross-reference subsection header at offset %lld",
			            (long long)cur);
			goto out;
		}
		if (first > PS_MAX_OBJNUM || count > PS_MAX_OBJNUM + 1 - first ||
		    count * 18 > doc->size - cur) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "cross-reference subsection %lld+%lld at offset %lld does not fit the file",
			            (long long)first, (long long)count, (long long)cur);
			goto out;
		}
		want = pos + (size_t)count * 21 + 4096;
		if ((rc = ps_doc_pread(doc, cur, want, &w)) < 0)
			goto out;
		for (i = 0; i < count; i++) {
			int64_t eoff, egen;
			int c;

			pos = ps_skip_ws(w.data, w.len, pos);
			if (ps_parse_uint(w.data, w.len, &pos, &eoff) < 0 ||
			    (pos = ps_skip_ws(w.data, w.len, pos),
			     ps_parse_uint(w.data, w.len, &pos, &egen) < 0)) {
				rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad entry %lld in the table at offset %lld",
				            (long long)(first + i), (long long)off);
				goto out;
			}
			pos = ps_skip_ws(w.data, w.len, pos);
			c = pos < w.len ? w.data[pos++] : 0;
			if (c == 'f' && egen > 65535)
				egen = 65535; /* MuPDF writes "65536 f" for object 0 */
			if ((c != 'n' && c != 'f') || egen > 65535) {
				rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad entry %lld in the table at offset %lld",
				            (long long)(first + i), (long long)off);
				goto out;
			}
			if (c == 'n' && (eoff <= 0 || eoff >= doc->size)) {
				if (eoff == 0) { /* some writers mark unused entries "0 0 n" */
					c = 'f';
				} else {
					rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
					            "object %lld is listed at offset %lld, past the end of the file",
					            (long long)(first + i), (long long)eoff);
					goto out;
				}
			}
			if (first + i == 0)
				continue; /* object 0 is the head of the free list */
			if ((rc = set_entry(doc, (uint32_t)(first + i), c == 'n' ? 1 : 0,
			                    c == 'n' ? eoff : 0, (uint32_t)egen, sec, 1)) < 0)
				goto out;
		}
	}
	/* The trailer dictionary. */
	cur += (int64_t)pos;
	want = 4096;
	for (;;) {
		size_t p = 0;

		if ((rc = ps_doc_pread(doc, cur, want, &w)) < 0)
			goto out;
		rc = ps_parse_obj(ctx, w.data, w.len, &p, trailer);
		if (rc == PS_E_NEEDMORE && w.len == want && want < (64u << 20)) {
			want *= 4;
			continue;
		}
		if (rc == PS_E_NEEDMORE)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer at offset %lld is truncated", (long long)cur);
		if (rc < 0)
			goto out;
		break;
	}
	if ((*trailer)->kind != PS_DICT) {
		ps_obj_free(*trailer);
		*trailer = NULL;
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer at offset %lld is not a dictionary", (long long)cur);
	}
out:
	ps_buf_free(&w);
	return rc;
}

static int get_uint_key(ps_ctx *ctx, const ps_obj *d, const char *key, int64_t max, int64_t *out,
                        int64_t off)
{
	if (ps_obj_int(ps_dict_get(d, key), out) < 0 || *out < 0 || *out > max)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "bad or missing /%s in the xref stream at offset %lld",
		              key, (long long)off);
	return 0;
}

/* Reads an xref stream whose object starts at OFF; *dict receives a copy
 * of its dictionary (which doubles as the trailer). */
static int read_xref_stream(ps_doc *doc, int64_t off, uint16_t sec, ps_obj **dict, uint32_t *stream_num)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *stm = NULL, *w, *index, *filter, *parms;
	ps_buf raw = PS_BUF_INIT, dec = PS_BUF_INIT;
	int64_t width[3], size, len, n, i, ranges;
	size_t entlen, p, decoded_len;
	int rc;

	*dict = NULL;
	if ((rc = ps_doc_parse_at(doc, off, 0, &stm, stream_num)) < 0)
		goto out;
	if (stm->kind != PS_STREAM || !ps_obj_is_name(ps_dict_get(stm, "Type"), "XRef")) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "offset %lld holds neither an xref table nor an xref stream",
		            (long long)off);
		goto out;
	}
	if ((rc = get_uint_key(ctx, stm, "Size", PS_MAX_OBJNUM + 1, &size, off)) < 0)
		goto out;
	/* /Length of an xref stream must be direct: the index it would need
	 * to resolve an indirect one is what we are reading. */
	if (ps_obj_int(ps_dict_get(stm, "Length"), &len) < 0 || len < 0 ||
	    len > doc->size - stm->u.stm.off) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /Length in the xref stream at offset %lld", (long long)off);
		goto out;
	}
	w = ps_dict_get(stm, "W");
	if (ps_array_len(w) != 3) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /W in the xref stream at offset %lld", (long long)off);
		goto out;
	}
	for (i = 0; i < 3; i++) {
		if (ps_obj_int(ps_array_get(w, (size_t)i), &width[i]) < 0 || width[i] < 0 || width[i] > 8) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /W in the xref stream at offset %lld", (long long)off);
			goto out;
		}
	}
	entlen = (size_t)(width[0] + width[1] + width[2]);
	if (width[1] == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "xref stream at offset %lld has no offset field", (long long)off);
		goto out;
	}
	if ((rc = ps_doc_pread(doc, stm->u.stm.off, (size_t)len, &raw)) < 0)
		goto out;
	if ((int64_t)raw.len != len) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "xref stream at offset %lld is truncated", (long long)off);
		goto out;
	}
	filter = ps_dict_get(stm, "Filter");
	parms = ps_dict_get(stm, "DecodeParms");
	if (filter && filter->kind == PS_ARRAY) {
		if (ps_array_len(filter) > 1) {
			rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "xref stream with several filters");
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
	rc = 0;
	if (filter)
		rc = ps_flate_decode(ctx, parms, raw.data, raw.len, XREFSTM_MAX_DECODED, &dec);
	else
		ps_buf_append(&dec, raw.data, raw.len);
	if (rc < 0) {
		ps_err_wrap(ctx, rc, "xref stream at offset %lld", (long long)off);
		goto out;
	}
	if (dec.oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory reading an xref stream");
		goto out;
	}
	decoded_len = dec.len;
	index = ps_dict_get(stm, "Index");
	if (index && (index->kind != PS_ARRAY || ps_array_len(index) % 2 != 0)) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /Index in the xref stream at offset %lld", (long long)off);
		goto out;
	}
	ranges = index ? (int64_t)ps_array_len(index) / 2 : 1;
	p = 0;
	for (n = 0; n < ranges; n++) {
		int64_t first = 0, count = size;
		if (index && (ps_obj_int(ps_array_get(index, (size_t)(2 * n)), &first) < 0 ||
		              ps_obj_int(ps_array_get(index, (size_t)(2 * n + 1)), &count) < 0 ||
		              first < 0 || count < 0 || first > PS_MAX_OBJNUM ||
		              count > PS_MAX_OBJNUM + 1 - first)) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad /Index in the xref stream at offset %lld", (long long)off);
			goto out;
		}
		if ((uint64_t)count > (decoded_len - p) / entlen) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "xref stream at offset %lld has fewer entries than /Index says",
			            (long long)off);
			goto out;
		}
		for (i = 0; i < count; i++) {
			uint64_t f[3];
			int k, b;
			for (k = 0; k < 3; k++) {
				f[k] = 0;
				for (b = 0; b < width[k]; b++)
					f[k] = (f[k] << 8) | dec.data[p++];
			}
			if (width[0] == 0)
				f[0] = 1;
			if (first + i == 0 && f[0] != 1)
				continue;
			switch (f[0]) {
			case 0:
				rc = set_entry(doc, (uint32_t)(first + i), 0, 0, f[2] > 65535 ? 65535 : (uint32_t)f[2], sec, 0);
				break;
			case 1:
				if (f[1] == 0 || f[1] >= (uint64_t)doc->size || f[2] > 65535) {
					rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
					            "xref stream entry for object %lld points outside the file",
					            (long long)(first + i));
					goto out;
				}
				rc = set_entry(doc, (uint32_t)(first + i), 1, (int64_t)f[1], (uint32_t)f[2], sec, 0);
				break;
			case 2:
				if (f[1] == 0 || f[1] > PS_MAX_OBJNUM || f[2] > PS_MAX_OBJNUM) {
					rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "bad compressed entry for object %lld",
					            (long long)(first + i));
					goto out;
				}
				rc = set_entry(doc, (uint32_t)(first + i), 2, (int64_t)f[1], (uint32_t)f[2], sec, 0);
				break;
			default:
				break; /* unknown types are treated as null objects (7.5.8.3) */
			}
			if (rc < 0)
				goto out;
		}
	}
	*dict = ps_obj_copy(stm->u.stm.dict);
	if (!*dict)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(stm);
	ps_buf_free(&raw);
	ps_buf_free(&dec);
	return rc;
}

/* Has any of the first N sections used OFF? */
static int visited(const ps_doc *doc, int64_t off, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (doc->sections[i].off == off || doc->sections[i].xrefstm == off)
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
	pos = ps_skip_ws(w.data, w.len, 0);
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
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "trailer /%s is not a valid offset", key);
	return 0;
}

/* Keeps what section S's trailer says about encryption (/Encrypt, ID[0]; and /Root, /Info for the audit)
 * for the chain check, and from the newest trailer on, watches the /Encrypt
 * object's definitions in the older sections. */
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
	if (doc->nsections == 1 && enc && enc->kind == PS_REF) {
		uint32_t num = enc->u.ref.num;
		doc->enc_watch = num;
		/* The newest section's own entry was recorded before the watch. */
		const ps_xent *e = ps_xref_get(doc, num);
		if (e && e->type == 1 && e->sec == 1)
			note_enc_version(doc, e->off, 1);
	}
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
	int i;

	doc->xstm = calloc((size_t)doc->nsections + 1, sizeof *doc->xstm);
	if (!doc->xstm)
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < doc->nsections; i++) {
		const ps_section *s = &doc->sections[i];
		if (s->kind == PDFSTAMP_XREF_STREAM) {
			doc->xstm[doc->nxstm].num = s->stream_num;
			doc->xstm[doc->nxstm++].off = s->off;
		} else if (s->kind == PDFSTAMP_XREF_HYBRID) {
			doc->xstm[doc->nxstm].num = s->xrefstm_num;
			doc->xstm[doc->nxstm++].off = s->xrefstm;
		}
	}
	qsort(doc->xstm, doc->nxstm, sizeof *doc->xstm, cmp_xstm);
	return 0;
}

int ps_xref_load(ps_doc *doc)
{
	ps_ctx *ctx = doc->ctx;
	int64_t off;
	int rc;

	if ((rc = find_startxref(doc)) < 0)
		return rc;
	off = doc->startxref;
	while (off >= 0) {
		ps_section *s;
		ps_obj *trailer = NULL;
		int is_table;
		uint16_t sec;

		if (doc->nsections >= PS_MAX_SECTIONS)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "more than %d cross-reference sections", PS_MAX_SECTIONS);
		if (visited(doc, off, doc->nsections))
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Prev chain loops back to offset %lld", (long long)off);
		s = realloc(doc->sections, (size_t)(doc->nsections + 1) * sizeof *s);
		if (!s)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		doc->sections = s;
		s = &doc->sections[doc->nsections++];
		memset(s, 0, sizeof *s);
		s->off = off;
		s->xrefstm = -1;
		s->prev = -1;
		sec = (uint16_t)doc->nsections;
		if ((rc = starts_with_xref(doc, off, &is_table)) < 0)
			return rc;
		if (is_table) {
			s->kind = PDFSTAMP_XREF_TABLE;
			if ((rc = read_table(doc, off, sec, &trailer)) < 0)
				return rc;
			if ((rc = get_offset_key(doc, trailer, "XRefStm", &s->xrefstm)) < 0 ||
			    (rc = get_offset_key(doc, trailer, "Prev", &s->prev)) < 0) {
				ps_obj_free(trailer);
				return rc;
			}
			if (s->xrefstm >= 0) {
				ps_obj *sd = NULL;
				if (s->xrefstm == off || visited(doc, s->xrefstm, doc->nsections - 1)) {
					ps_obj_free(trailer);
					return ps_err(ctx, PDFSTAMP_E_FORMAT, "/XRefStm at offset %lld points at a section already read", (long long)s->xrefstm);
				}
				s->kind = PDFSTAMP_XREF_HYBRID;
				rc = read_xref_stream(doc, s->xrefstm, sec, &sd, &s->xrefstm_num);
				ps_obj_free(sd);
				if (rc < 0) {
					ps_obj_free(trailer);
					return rc;
				}
			}
		} else {
			s->kind = PDFSTAMP_XREF_STREAM;
			if ((rc = read_xref_stream(doc, off, sec, &trailer, &s->stream_num)) < 0)
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
		if (!doc->trailer) {
			doc->trailer = trailer;
		} else {
			/* Keys the newest trailer lacks are taken from older ones. */
			static const char *const carry[] = {"Root", "Info", "ID", "Encrypt"};
			size_t k;
			for (k = 0; k < sizeof carry / sizeof carry[0]; k++) {
				ps_obj *v = ps_dict_get(trailer, carry[k]);
				if (v && !ps_dict_get(doc->trailer, carry[k])) {
					if ((rc = ps_dict_put(doc->trailer, carry[k], ps_obj_copy(v))) < 0) {
						ps_obj_free(trailer);
						return ps_err(ctx, rc, "out of memory");
					}
				}
			}
			ps_obj_free(trailer);
		}
		off = (doc->open_flags & PS_OPEN_NEWEST_ONLY) ? -1 : s->prev;
	}
	if (ps_obj_int(ps_dict_get(doc->trailer, "Size"), &doc->size_key) < 0 || doc->size_key < 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer has no valid /Size");
	if (!ps_dict_get(doc->trailer, "Root"))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer has no /Root");
	sort_shadows(doc);
	return index_xref_streams(doc);
}

int ps_doc_is_xref_stream(const ps_doc *doc, uint32_t num)
{
	/* The live object NUM is a section of the chain when its entry points
	 * at that section's xref stream; a number an xref stream once had but a
	 * newer revision gave to another object is not (issue 11).  Binary
	 * search: every stream of a rewrite asks, and a chain may have
	 * PS_MAX_SECTIONS sections. */
	const ps_xent *e = ps_xref_get(doc, num);
	size_t lo = 0, hi = doc->nxstm;

	if (!e || e->type != 1)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (doc->xstm[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < doc->nxstm && doc->xstm[lo].num == num; lo++)
		if (doc->xstm[lo].off == e->off)
			return 1;
	return 0;
}
