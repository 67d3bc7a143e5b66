/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pagesel.h - page selections: the expression language of `--pages`
 * (pdfstamp(1), Page selection) and the set of pages it selects
 * (pagesel.c, whose design notes say the rest).
 */
#ifndef PS_PAGESEL_H
#define PS_PAGESEL_H

#include "ps.h"

/* A run of pages lo..hi (1-based, inclusive) of which MASK selects the odd
 * (PS_PAGESEL_ODD) or the even (PS_PAGESEL_EVEN) ones or both; lo and hi
 * are themselves selected pages. */
#define PS_PAGESEL_ODD 1u
#define PS_PAGESEL_EVEN 2u

struct ps_pagerun {
	int64_t lo, hi;
	unsigned mask;
};

/* The selected pages: runs sorted by page, disjoint, none empty. */
typedef struct ps_pagesel {
	struct ps_pagerun *v;
	size_t n;
	int64_t count;        /* selected pages */
} ps_pagesel;

/* The largest page number an expression may name. */
#define PS_PAGESEL_MAX ((int64_t)1 << 53)

/* Parses EXPR for a document of NPAGES pages into SEL (which the caller
 * frees with ps_pagesel_free, on failure too).  PDFSTAMP_E_USAGE for a
 * malformed expression, a page the document does not have or an empty
 * selection, with a message that names the page count.  NPAGES < 0: the
 * syntax and the numbers only (no page is beyond the end, and SEL may be
 * empty). */
int ps_pagesel_parse(ps_ctx *ctx, const char *expr, int64_t npages, ps_pagesel *sel);
/* The one-page form (pdfstamp_stamp_opts.page): a page from 1,
 * PDFSTAMP_PAGE_LAST or PDFSTAMP_PAGE_ALL. */
int ps_pagesel_page(ps_ctx *ctx, int64_t page, int64_t npages, ps_pagesel *sel);
void ps_pagesel_free(ps_pagesel *sel);

/* Whether page P is selected. */
int ps_pagesel_has(const ps_pagesel *sel, int64_t p);
/* The first selected page at or after P, 0 if none. */
int64_t ps_pagesel_next(const ps_pagesel *sel, int64_t p);
/* The last selected page, 0 if none. */
int64_t ps_pagesel_last(const ps_pagesel *sel);

#endif
