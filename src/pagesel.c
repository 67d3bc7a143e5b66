/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pagesel.c - page selections: the expression of `--pages` (the `pages`
 * field of struct pdfstamp_stamp_opts) parsed into the set of pages it
 * selects.
 *
 * DESIGN NOTES
 *
 *  1. The language, as pdfcpu and qpdf users write it (pdfstamp(1), Page
 *     selection, has the table of examples): items separated by commas,
 *     blanks (space, tab) allowed around items and around the '-' of a
 *     range.  An item is N, N-M, N- (N to the last page), -N (the N-th
 *     page from the last: -1 is the last page, like qpdf's rN), or one of
 *     the words first, last, all, odd, even (ASCII, any case); an item
 *     preceded by '!' excludes what it names.  Numbers are decimal digits
 *     only, from 1 to PS_PAGESEL_MAX, checked for overflow as they are
 *     read.  Anything else (an empty item, a sign, a word, a byte that is
 *     not ASCII) is refused with the item quoted, non-printable bytes as
 *     '?'.
 *  2. Meaning.  Items apply left to right: an inclusion adds its pages to
 *     the set, an exclusion removes them, so a later item wins ("1-10,!5"
 *     is 1-4 and 6-10, "!5,1-10" is 1-10).  An expression whose first item
 *     is an exclusion starts from all pages ("!1" is "all,!1"), as pdfcpu
 *     reads it.  A range whose ends are reversed names the same pages as
 *     in order ("3-1" is 1-3; qpdf reads it as those pages backwards, and
 *     a stamp has no order).  Every page an item names must exist: a
 *     number beyond the page count, in an inclusion or an exclusion, is a
 *     usage error naming the page count ("page 20 does not exist (the
 *     document has 12)"), as `--page 20` is; "N-" and "-N" count from the
 *     end and need N <= the page count.  A selection left empty is a usage
 *     error too ("... selects no page of the 12").  So an expression
 *     means the same thing or nothing on every file of a batch.  A page
 *     count above PS_PAGESEL_MAX (2^53, more pages than any file can
 *     hold: a lying /Count) is taken as PS_PAGESEL_MAX; the page-tree
 *     walk finds the lie (stamp.c note 1).
 *  3. The set is compact whatever the page count (a hostile /Count may
 *     say 2^31 or more): sorted, disjoint runs of pages lo..hi, each
 *     taking the odd pages, the even pages or both (struct ps_pagerun);
 *     every run starts and ends on a selected page and is not empty.  An
 *     expression of K items makes at most 4K + 1 runs, never one byte per
 *     page.  Membership and "the next selected page at or after P" are
 *     binary searches, O(log runs): the page-tree walk asks them once per
 *     node it meets (stamp.c note 1).
 *  4. Evaluation, O(K log K): a page of a parity class (odd, even) ends up
 *     in the set iff the last item that covers it in that class is an
 *     inclusion.  Per class, a sweep over the items' ends keeps the items
 *     that cover the current stretch in a max-heap of their positions
 *     (an item that has ended is dropped when it reaches the top); each
 *     stretch between two ends takes the state of the top item.  The two
 *     classes' stretches are then merged into runs.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pagesel.h"

#define BOTH (PS_PAGESEL_ODD | PS_PAGESEL_EVEN)

/* One item: the pages lo..hi of the classes MASK, added or removed. */
struct item {
	int64_t lo, hi;
	unsigned mask;
	int incl;
};

struct items {
	struct item *v;
	size_t n;
};

/* A stretch of pages, inclusive. */
struct span {
	int64_t lo, hi;
};

struct spans {
	struct span *v;
	size_t n;
};

void ps_pagesel_free(ps_pagesel *sel)
{
	if (!sel)
		return;
	free(sel->v);
	sel->v = NULL;
	sel->n = 0;
	sel->count = 0;
}

/* ---- the set ------------------------------------------------------------------ */

static unsigned parity(int64_t p)
{
	return (p & 1) ? PS_PAGESEL_ODD : PS_PAGESEL_EVEN;
}

/* Appends lo..hi of the classes MASK to SEL, trimmed to selected pages and
 * merged with the run before it when they continue each other (note 3). */
static int add_run(ps_ctx *ctx, ps_pagesel *sel, int64_t lo, int64_t hi, unsigned mask)
{
	struct ps_pagerun *r;

	if (mask != BOTH) {
		if (parity(lo) != mask)
			lo++;
		if (parity(hi) != mask)
			hi--;
	}
	if (!mask || lo > hi)
		return 0;
	if (lo == hi)
		mask = BOTH;
	sel->count += mask == BOTH ? hi - lo + 1 : (hi - lo) / 2 + 1;
	r = sel->n ? &sel->v[sel->n - 1] : NULL;
	if (r && r->mask == mask && lo == r->hi + (mask == BOTH ? 1 : 2)) {
		r->hi = hi;
		return 0;
	}
	if (ps_vec_grow((void **)&sel->v, sel->n, sizeof *sel->v) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	sel->v[sel->n].lo = lo;
	sel->v[sel->n].hi = hi;
	sel->v[sel->n].mask = mask;
	sel->n++;
	return 0;
}

/* The index of the first run whose hi is >= P (SEL->n if none). */
static size_t run_at(const ps_pagesel *sel, int64_t p)
{
	size_t a = 0, b = sel->n;

	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (sel->v[m].hi < p)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

int ps_pagesel_has(const ps_pagesel *sel, int64_t p)
{
	size_t i = run_at(sel, p);

	return i < sel->n && sel->v[i].lo <= p && (sel->v[i].mask & parity(p)) != 0;
}

int64_t ps_pagesel_next(const ps_pagesel *sel, int64_t p)
{
	size_t i = run_at(sel, p);
	int64_t c;

	if (i >= sel->n)
		return 0;
	c = p > sel->v[i].lo ? p : sel->v[i].lo;
	/* hi is selected (note 3), so a page of the wrong class is below it */
	return (sel->v[i].mask & parity(c)) ? c : c + 1;
}

int64_t ps_pagesel_last(const ps_pagesel *sel)
{
	return sel->n ? sel->v[sel->n - 1].hi : 0;
}

/* ---- evaluation (note 4) -------------------------------------------------------- */

struct event {
	int64_t pos;
	size_t item;
	int start;
};

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void heap_push(size_t *h, size_t *n, size_t v)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(size_t *h, size_t *n)
{
	size_t i = 0, v = h[--(*n)];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* The stretches of pages 1..N in which class CLS ends up selected. */
static int sweep(ps_ctx *ctx, const struct items *it, unsigned cls, int64_t n, struct spans *out)
{
	struct event *ev = NULL;
	size_t *heap = NULL, nev = 0, nh = 0, i, k;
	unsigned char *ended = NULL;
	int rc = 0;

	out->v = NULL;
	out->n = 0;
	if (!it->n)
		return 0;
	ev = calloc(2 * it->n, sizeof *ev);
	heap = calloc(it->n, sizeof *heap);
	ended = calloc(it->n, 1);
	if (!ev || !heap || !ended)
		goto oom;
	for (k = 0; k < it->n; k++) {
		if (!(it->v[k].mask & cls))
			continue;
		ev[nev].pos = it->v[k].lo;
		ev[nev].item = k;
		ev[nev++].start = 1;
		ev[nev].pos = it->v[k].hi + 1;
		ev[nev].item = k;
		ev[nev++].start = 0;
	}
	qsort(ev, nev, sizeof *ev, event_cmp);
	for (i = 0; i < nev;) {
		int64_t pos = ev[i].pos, end;
		for (; i < nev && ev[i].pos == pos; i++) {
			if (ev[i].start)
				heap_push(heap, &nh, ev[i].item);
			else
				ended[ev[i].item] = 1;
		}
		while (nh && ended[heap[0]])
			heap_pop(heap, &nh);
		end = i < nev ? ev[i].pos - 1 : n;
		if (!nh || !it->v[heap[0]].incl || pos > end)
			continue;
		if (out->n && out->v[out->n - 1].hi + 1 == pos) {
			out->v[out->n - 1].hi = end;
			continue;
		}
		if (ps_vec_grow((void **)&out->v, out->n, sizeof *out->v) < 0)
			goto oom;
		out->v[out->n].lo = pos;
		out->v[out->n++].hi = end;
	}
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	free(ev);
	free(heap);
	free(ended);
	return rc;
}

static int64_t span_next(const struct spans *s, size_t i, int64_t pos)
{
	/* the next end of a span after POS (a start, or one past a hi) */
	if (i >= s->n)
		return INT64_MAX;
	return s->v[i].lo > pos ? s->v[i].lo : s->v[i].hi + 1;
}

/* Both classes' stretches merged into SEL's runs. */
static int evaluate(ps_ctx *ctx, const struct items *it, int64_t n, ps_pagesel *sel)
{
	struct spans odd, even;
	size_t a = 0, b = 0;
	int64_t pos = 1;
	int rc;

	if ((rc = sweep(ctx, it, PS_PAGESEL_ODD, n, &odd)) < 0)
		return rc;
	if ((rc = sweep(ctx, it, PS_PAGESEL_EVEN, n, &even)) < 0)
		goto out;
	while (a < odd.n || b < even.n) {
		int64_t na, nb, next;
		unsigned mask = 0;

		while (a < odd.n && odd.v[a].hi < pos)
			a++;
		while (b < even.n && even.v[b].hi < pos)
			b++;
		if (a >= odd.n && b >= even.n)
			break;
		if (a < odd.n && odd.v[a].lo <= pos)
			mask |= PS_PAGESEL_ODD;
		if (b < even.n && even.v[b].lo <= pos)
			mask |= PS_PAGESEL_EVEN;
		na = span_next(&odd, a, pos);
		nb = span_next(&even, b, pos);
		next = na < nb ? na : nb;
		if (mask && (rc = add_run(ctx, sel, pos, next - 1, mask)) < 0)
			goto out;
		pos = next;
	}
out:
	free(odd.v);
	free(even.v);
	return rc;
}

/* ---- the parser (note 1) ------------------------------------------------------- */

/* ITEM (LEN bytes) for a message: at most 40 bytes, the rest "...",
 * non-printable bytes as '?'. */
static void quote(char out[48], const char *item, size_t len)
{
	size_t i, m = len > 40 ? 40 : len;

	for (i = 0; i < m; i++) {
		unsigned char c = (unsigned char)item[i];
		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (m < len) {
		memcpy(out + m, "...", 3);
		m += 3;
	}
	out[m] = '\0';
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The number at *P (digits before END), its end in *P.  1 if there is
 * none. */
static int number(ps_ctx *ctx, const char **p, const char *end, const char *item, size_t len,
                  int64_t *v)
{
	const char *s = *p;
	char q[48];

	if (s >= end || !is_digit(*s))
		return 1;
	*v = 0;
	for (; s < end && is_digit(*s); s++) {
		int d = *s - '0';
		if (*v > (PS_PAGESEL_MAX - d) / 10) {
			quote(q, item, len);
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "page selection: '%s': a page number is too large", q);
		}
		*v = *v * 10 + d;
	}
	if (*v == 0) {
		quote(q, item, len);
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "page selection: '%s': there is no page 0 (pages count from 1)", q);
	}
	*p = s;
	return 0;
}

static const char *blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* A page number P of an item must exist (note 2): N of the document's. */
static int exists(ps_ctx *ctx, int64_t p, int from_last, int64_t n)
{
	if (n < 0 || p <= n)
		return 0;
	if (from_last)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "page selection: page -%lld (counted from the last) does not exist "
		              "(the document has %lld)", (long long)p, (long long)n);
	return ps_err(ctx, PDFSTAMP_E_USAGE,
	              "page selection: page %lld does not exist (the document has %lld)",
	              (long long)p, (long long)n);
}

/* One item, S..END (no comma), into *IT, for N pages (note 1). */
static int parse_item(ps_ctx *ctx, const char *s, const char *end, int64_t n, int64_t vn,
                      struct item *it)
{
	static const struct {
		const char *w;
		int what;
	} words[] = { {"all", 0}, {"first", 1}, {"last", 2}, {"odd", 3}, {"even", 4} };
	const char *p, *item;
	size_t len, k;
	char q[48];
	int rc;

	s = blanks(s, end);
	while (end > s && is_blank(end[-1]))
		end--;
	item = s;
	len = (size_t)(end - s);
	if (s == end)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "page selection: an empty item (two commas, "
		              "or a comma at an end)");
	it->incl = 1;
	it->mask = BOTH;
	if (*s == '!') {
		it->incl = 0;
		s = blanks(s + 1, end);
	}
	for (k = 0; k < sizeof words / sizeof *words; k++) {
		if ((size_t)(end - s) != strlen(words[k].w) || strncasecmp(s, words[k].w,
		                                                           strlen(words[k].w)))
			continue;
		it->lo = words[k].what == 2 ? vn : 1;
		it->hi = words[k].what == 1 ? 1 : vn;
		if (words[k].what == 3)
			it->mask = PS_PAGESEL_ODD;
		if (words[k].what == 4)
			it->mask = PS_PAGESEL_EVEN;
		return 0;
	}
	p = s;
	if (p < end && *p == '-') { /* -N */
		p = blanks(p + 1, end);
		if ((rc = number(ctx, &p, end, item, len, &it->lo)) < 0)
			return rc;
		if (rc == 0 && p == end) {
			if ((rc = exists(ctx, it->lo, 1, n)) < 0)
				return rc;
			it->lo = it->hi = vn - it->lo + 1;
			return 0;
		}
	} else if ((rc = number(ctx, &p, end, item, len, &it->lo)) < 0) {
		return rc;
	} else if (rc == 0) { /* N, N-, N-M */
		it->hi = it->lo;
		p = blanks(p, end);
		if (p < end && *p == '-') {
			p = blanks(p + 1, end);
			it->hi = vn;
			if (p < end && (rc = number(ctx, &p, end, item, len, &it->hi)) < 0)
				return rc;
		}
		if (p == end && rc == 0) {
			if (it->lo > it->hi) { /* note 2: the same pages */
				int64_t t = it->lo;
				it->lo = it->hi;
				it->hi = t;
			}
			if ((rc = exists(ctx, it->hi, 0, n)) < 0)
				return rc;
			return 0;
		}
	}
	quote(q, item, len);
	return ps_err(ctx, PDFSTAMP_E_USAGE, "page selection: '%s' is not a page, a range or "
	              "one of all, first, last, odd, even", q);
}

int ps_pagesel_parse(ps_ctx *ctx, const char *expr, int64_t npages, ps_pagesel *sel)
{
	struct items it = {NULL, 0};
	/* the count the items resolve against; without one, the largest */
	int64_t vn = npages < 0 || npages > PS_PAGESEL_MAX ? PS_PAGESEL_MAX : npages;
	const char *s, *c;
	int rc = 0;

	memset(sel, 0, sizeof *sel);
	if (!expr)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "page selection: no expression");
	if (!*blanks(expr, expr + strlen(expr)))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "page selection: the expression is empty");
	for (s = expr;; s = c + 1) {
		struct item one;
		c = strchr(s, ',');
		if ((rc = parse_item(ctx, s, c ? c : s + strlen(s), npages, vn, &one)) < 0)
			goto out;
		if (it.n == 0 && !one.incl) { /* note 2: "!N" is "all,!N" */
			if (ps_vec_grow((void **)&it.v, it.n, sizeof *it.v) < 0)
				goto oom;
			it.v[it.n].lo = 1;
			it.v[it.n].hi = vn;
			it.v[it.n].mask = BOTH;
			it.v[it.n++].incl = 1;
		}
		if (ps_vec_grow((void **)&it.v, it.n, sizeof *it.v) < 0)
			goto oom;
		it.v[it.n++] = one;
		if (!c)
			break;
	}
	if ((rc = evaluate(ctx, &it, vn, sel)) < 0)
		goto out;
	if (npages >= 0 && sel->count == 0) {
		char q[48];
		quote(q, expr, strlen(expr));
		rc = ps_err(ctx, PDFSTAMP_E_USAGE,
		            "page selection '%s' selects no page of the %lld", q,
		            (long long)npages);
	}
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	free(it.v);
	return rc;
}

int ps_pagesel_page(ps_ctx *ctx, int64_t page, int64_t npages, ps_pagesel *sel)
{
	int64_t lo = page, hi = page;

	memset(sel, 0, sizeof *sel);
	if (page == PDFSTAMP_PAGE_ALL) {
		lo = 1;
		hi = npages;
	} else if (page == PDFSTAMP_PAGE_LAST) {
		lo = hi = npages;
	}
	if (lo < 1 || hi > npages)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "page %lld does not exist (the document has "
		              "%lld)", (long long)page, (long long)npages);
	return add_run(ctx, sel, lo, hi, BOTH);
}

int pdfstamp_pages_check(pdfstamp_ctx *ctx, const char *expr, int64_t npages, int64_t *count)
{
	ps_pagesel sel;
	int rc;

	if (!ctx)
		return PDFSTAMP_E_USAGE;
	rc = ps_pagesel_parse(ctx, expr, npages < 1 ? -1 : npages, &sel);
	if (rc == 0 && count)
		*count = sel.count;
	ps_pagesel_free(&sel);
	return rc;
}
