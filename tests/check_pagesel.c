/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_pagesel.c - unit tests for src/pagesel.c, the page selections of
 * `pdfstamp stamp --pages`.
 *
 * Expected values come from outside the code under test:
 *  - a reference table written by hand from the rules of pdfstamp(1),
 *    Page selection (its table of examples for 12 pages is here row for
 *    row), with the pages each expression selects or the words its error
 *    must contain;
 *  - random expressions built from items whose meaning the test knows
 *    without parsing, evaluated page by page on a plain array of flags
 *    (one per page: an independent oracle for small documents), and
 *    compared with the set, its count and its has/next/last queries;
 *  - a page count of 2^31 and more, where the set must stay a handful of
 *    runs.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "pagesel.h"

static ps_ctx *new_ctx(void)
{
	ps_ctx *ctx = NULL;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

/* The pages SEL selects, as "1,2,3" (pages 1..N asked one by one). */
static void listing(const ps_pagesel *sel, int64_t n, char *out, size_t cap)
{
	size_t len = 0;
	int64_t p;

	out[0] = '\0';
	for (p = 1; p <= n; p++)
		if (ps_pagesel_has(sel, p))
			len += (size_t)snprintf(out + len, cap - len, "%s%" PRId64, len ? "," : "", p);
}

/* ---- the reference table ---------------------------------------------------------- */

static const struct {
	const char *expr;
	int64_t npages;
	const char *want;     /* the pages, or NULL: an error */
	const char *err;      /* words the error message contains */
} table[] = {
	/* pdfstamp(1), Page selection: its examples for 12 pages, row for row */
	{"1-3,7", 12, "1,2,3,7", NULL},
	{"3-1", 12, "1,2,3", NULL},
	{"10-", 12, "10,11,12", NULL},
	{"-1", 12, "12", NULL},
	{"-3", 12, "10", NULL},
	{"-3-", 12, NULL, "'-3-' is not a page"},
	{"first,last", 12, "1,12", NULL},
	{"even", 12, "2,4,6,8,10,12", NULL},
	{"odd,!1", 12, "3,5,7,9,11", NULL},
	{"all,!1", 12, "2,3,4,5,6,7,8,9,10,11,12", NULL},
	{"!1", 12, "2,3,4,5,6,7,8,9,10,11,12", NULL},
	{"1-10,!5", 12, "1,2,3,4,6,7,8,9,10", NULL},
	{"1-10,!3-5,4", 12, "1,2,4,6,7,8,9,10", NULL},
	{"odd,!1-6,4", 12, "4,7,9,11", NULL},
	{"1-20", 12, NULL, "page 20 does not exist (the document has 12)"},
	{"-13", 12, NULL, "page -13 (counted from the last) does not exist (the document has 12)"},
	{"all,!all", 12, NULL, "selects no page of the 12"},
	/* more of the same rules */
	{"all", 1, "1", NULL},
	{"last", 1, "1", NULL},
	{"-1", 1, "1", NULL},
	{"even", 1, NULL, "'even' selects no page of the 1"},
	{"odd", 5, "1,3,5", NULL},
	{"even", 5, "2,4", NULL},
	{"odd,even", 5, "1,2,3,4,5", NULL},
	{"even,!-1", 6, "2,4", NULL},
	{"2-,!-1", 2, NULL, "selects no page of the 2"},
	{"1-3,2-5", 6, "1,2,3,4,5", NULL},
	{"5,4,3", 6, "3,4,5", NULL},
	{"3,3,3", 6, "3", NULL},
	{"1-6,!2-5,3", 6, "1,3,6", NULL},
	{"!odd", 6, "2,4,6", NULL},
	{"!5,1-3", 6, "1,2,3,4,6", NULL},
	{"!even,!1", 6, "3,5", NULL},
	{"odd,!3-", 9, "1", NULL},
	{"even,5,!4", 9, "2,5,6,8", NULL},
	{"1-,!odd,1", 4, "1,2,4", NULL},
	{" 1 - 2 ,\tlast ", 5, "1,2,5", NULL},
	{"ALL,!First,!LAST", 4, "2,3", NULL},
	{"Odd", 3, "1,3", NULL},
	{"- 2", 4, "3", NULL},
	{"4-4", 4, "4", NULL},
	{"4-", 4, "4", NULL},
	{"5-", 4, NULL, "page 5 does not exist (the document has 4)"},
	{"3-9", 4, NULL, "page 9 does not exist (the document has 4)"},
	{"9-3", 4, NULL, "page 9 does not exist (the document has 4)"},
	{"all,!5", 4, NULL, "page 5 does not exist (the document has 4)"},
	{"-5", 4, NULL, "page -5 (counted from the last) does not exist"},
	/* garbage, empty, zero, overflow */
	{"", 4, NULL, "the expression is empty"},
	{"  ", 4, NULL, "the expression is empty"},
	{",", 4, NULL, "an empty item"},
	{"1,", 4, NULL, "an empty item"},
	{",1", 4, NULL, "an empty item"},
	{"1,,2", 4, NULL, "an empty item"},
	{"!", 4, NULL, "'!' is not a page"},
	{"!!1", 4, NULL, "'!!1' is not a page"},
	{"0", 4, NULL, "there is no page 0"},
	{"0-2", 4, NULL, "there is no page 0"},
	{"-0", 4, NULL, "there is no page 0"},
	{"1-0", 4, NULL, "there is no page 0"},
	{"+1", 4, NULL, "'+1' is not a page"},
	{"1.5", 4, NULL, "'1.5' is not a page"},
	{"1 2", 4, NULL, "'1 2' is not a page"},
	{"1--2", 4, NULL, "'1--2' is not a page"},
	{"--1", 4, NULL, "'--1' is not a page"},
	{"1-2-3", 4, NULL, "'1-2-3' is not a page"},
	{"-", 4, NULL, "'-' is not a page"},
	{"l", 4, NULL, "'l' is not a page"},
	{"lastly", 4, NULL, "'lastly' is not a page"},
	{"1;2", 4, NULL, "'1;2' is not a page"},
	{"0x10", 4, NULL, "there is no page 0"},
	{"\xc3\xa9", 4, NULL, "'?" "?' is not a page"},
	{"1\n", 4, NULL, "'1?' is not a page"},
	{"9007199254740992", 4, NULL, "page 9007199254740992 does not exist"},
	{"9007199254740993", 4, NULL, "a page number is too large"},
	{"9223372036854775807", 4, NULL, "a page number is too large"},
	{"9223372036854775808", 4, NULL, "a page number is too large"},
	{"1-99999999999999999999999", 4, NULL, "a page number is too large"},
	{"-18446744073709551617", 4, NULL, "a page number is too large"},
	{"00000000000000000000000000003", 4, "3", NULL},
};

START_TEST(test_table)
{
	ps_ctx *ctx = new_ctx();
	ps_pagesel sel;
	char got[512];
	int rc;

	rc = ps_pagesel_parse(ctx, table[_i].expr, table[_i].npages, &sel);
	if (table[_i].want) {
		ck_assert_msg(rc == 0, "'%s' on %" PRId64 " pages: %s", table[_i].expr,
		              table[_i].npages, pdfstamp_ctx_errmsg(ctx));
		listing(&sel, table[_i].npages, got, sizeof got);
		ck_assert_msg(strcmp(got, table[_i].want) == 0, "'%s' on %" PRId64 " pages: "
		              "got %s, want %s", table[_i].expr, table[_i].npages, got,
		              table[_i].want);
	} else {
		ck_assert_msg(rc == PDFSTAMP_E_USAGE, "'%s' on %" PRId64 " pages: rc %d",
		              table[_i].expr, table[_i].npages, rc);
		ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), table[_i].err) != NULL,
		              "'%s': message '%s' lacks '%s'", table[_i].expr,
		              pdfstamp_ctx_errmsg(ctx), table[_i].err);
	}
	ps_pagesel_free(&sel);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* The syntax check without a page count (the CLI's, before any file). */
START_TEST(test_check_only)
{
	ps_ctx *ctx = new_ctx();
	int64_t count = -1;

	ck_assert_int_eq(pdfstamp_pages_check(ctx, "1-3,7,-1,odd,!2", 0, NULL), 0);
	ck_assert_int_eq(pdfstamp_pages_check(ctx, "999999", 0, &count), 0);
	ck_assert_int_eq(count, 1);
	ck_assert_int_eq(pdfstamp_pages_check(ctx, "all,!all", -1, NULL), 0);
	ck_assert_int_eq(pdfstamp_pages_check(ctx, "1-x", 0, NULL), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "'1-x' is not a page"));
	ck_assert_int_eq(pdfstamp_pages_check(ctx, NULL, 0, NULL), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(pdfstamp_pages_check(NULL, "1", 0, NULL), PDFSTAMP_E_USAGE);
	/* with a page count, as pdfstamp_stamp resolves it */
	ck_assert_int_eq(pdfstamp_pages_check(ctx, "odd,!1", 12, &count), 0);
	ck_assert_int_eq(count, 5);
	ck_assert_int_eq(pdfstamp_pages_check(ctx, "13", 12, &count), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "the document has 12"));
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* The one-page form of the page field. */
START_TEST(test_page_field)
{
	ps_ctx *ctx = new_ctx();
	ps_pagesel sel;
	char got[128];

	ck_assert_int_eq(ps_pagesel_page(ctx, 3, 5, &sel), 0);
	listing(&sel, 5, got, sizeof got);
	ck_assert_str_eq(got, "3");
	ps_pagesel_free(&sel);
	ck_assert_int_eq(ps_pagesel_page(ctx, PDFSTAMP_PAGE_LAST, 5, &sel), 0);
	listing(&sel, 5, got, sizeof got);
	ck_assert_str_eq(got, "5");
	ps_pagesel_free(&sel);
	ck_assert_int_eq(ps_pagesel_page(ctx, PDFSTAMP_PAGE_ALL, 3, &sel), 0);
	listing(&sel, 3, got, sizeof got);
	ck_assert_str_eq(got, "1,2,3");
	ps_pagesel_free(&sel);
	ck_assert_int_eq(ps_pagesel_page(ctx, 9, 3, &sel), PDFSTAMP_E_USAGE);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "page 9 does not exist (the document has 3)");
	ps_pagesel_free(&sel);
	ck_assert_int_eq(ps_pagesel_page(ctx, -7, 3, &sel), PDFSTAMP_E_USAGE);
	ps_pagesel_free(&sel);
	ps_pagesel_free(NULL);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* A hostile page count: the set stays a few runs, the queries exact. */
START_TEST(test_huge)
{
	ps_ctx *ctx = new_ctx();
	const int64_t n = (int64_t)1 << 31;
	ps_pagesel sel;

	ck_assert_int_eq(ps_pagesel_parse(ctx, "all,!1", n, &sel), 0);
	ck_assert_uint_le(sel.n, 2);
	ck_assert_int_eq(sel.count, n - 1);
	ck_assert_int_eq(ps_pagesel_next(&sel, 1), 2);
	ck_assert_int_eq(ps_pagesel_last(&sel), n);
	ps_pagesel_free(&sel);
	ck_assert_int_eq(ps_pagesel_parse(ctx, "even,!2-1000000,-1,7", n, &sel), 0);
	ck_assert_uint_le(sel.n, 4);
	ck_assert_int_eq(sel.count, (n - 1000000) / 2 + 1);
	ck_assert(ps_pagesel_has(&sel, 7));
	ck_assert(!ps_pagesel_has(&sel, 8));
	ck_assert(!ps_pagesel_has(&sel, 1000001));
	ck_assert(ps_pagesel_has(&sel, 1000002));
	ck_assert_int_eq(ps_pagesel_next(&sel, 8), 1000002);
	ck_assert_int_eq(ps_pagesel_next(&sel, 1000003), 1000004);
	ck_assert_int_eq(ps_pagesel_last(&sel), n);
	ck_assert_int_eq(ps_pagesel_next(&sel, n + 1), 0);
	ps_pagesel_free(&sel);
	/* a page count above the largest page number an item may name */
	ck_assert_int_eq(ps_pagesel_parse(ctx, "-1", INT64_MAX, &sel), 0);
	ck_assert_int_eq(sel.count, 1);
	ps_pagesel_free(&sel);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- random expressions against a page-by-page oracle ------------------------- */

static uint64_t rnd_state = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

START_TEST(test_random)
{
	ps_ctx *ctx = new_ctx();
	char expr[1024];
	unsigned char flag[41];
	int round;

	for (round = 0; round < 5000; round++) {
		int64_t n = 1 + (int64_t)(rnd() % 40), p, count = 0, last = 0;
		int k, items = 1 + (int)(rnd() % 6);
		size_t len = 0;
		ps_pagesel sel;
		int rc;

		memset(flag, 0, sizeof flag);
		for (k = 0; k < items; k++) {
			int excl = rnd() % 3 == 0, kind = (int)(rnd() % 9);
			int64_t a = 1 + (int64_t)(rnd() % (uint64_t)n);
			int64_t b = 1 + (int64_t)(rnd() % (uint64_t)n), lo, hi;
			int par = 0; /* 1 odd, 2 even */
			char it[64];

			switch (kind) {
			case 0: snprintf(it, sizeof it, "%" PRId64, a); lo = hi = a; break;
			case 1:
				snprintf(it, sizeof it, "%" PRId64 "-%" PRId64, a, b);
				lo = a < b ? a : b;
				hi = a < b ? b : a;
				break;
			case 2: snprintf(it, sizeof it, "%" PRId64 "-", a); lo = a; hi = n; break;
			case 3: snprintf(it, sizeof it, "-%" PRId64, a); lo = hi = n - a + 1; break;
			case 4: snprintf(it, sizeof it, "first"); lo = hi = 1; break;
			case 5: snprintf(it, sizeof it, "last"); lo = hi = n; break;
			case 6: snprintf(it, sizeof it, "all"); lo = 1; hi = n; break;
			case 7: snprintf(it, sizeof it, "odd"); lo = 1; hi = n; par = 1; break;
			default: snprintf(it, sizeof it, "even"); lo = 1; hi = n; par = 2; break;
			}
			len += (size_t)snprintf(expr + len, sizeof expr - len, "%s%s%s",
			                        k ? "," : "", excl ? "!" : "", it);
			if (k == 0 && excl) /* the rule of a leading exclusion */
				memset(flag + 1, 1, (size_t)n);
			for (p = lo; p <= hi; p++)
				if (!par || (par == 1) == (p % 2 == 1))
					flag[p] = !excl;
		}
		for (p = 1; p <= n; p++)
			if (flag[p]) {
				count++;
				last = p;
			}
		rc = ps_pagesel_parse(ctx, expr, n, &sel);
		if (!count) {
			ck_assert_msg(rc == PDFSTAMP_E_USAGE, "'%s' on %" PRId64 ": rc %d", expr, n,
			              rc);
			ps_pagesel_free(&sel);
			continue;
		}
		ck_assert_msg(rc == 0, "'%s' on %" PRId64 ": %s", expr, n,
		              pdfstamp_ctx_errmsg(ctx));
		ck_assert_int_eq(sel.count, count);
		ck_assert_int_eq(ps_pagesel_last(&sel), last);
		for (k = 0; k + 1 < (int)sel.n; k++) /* sorted, disjoint */
			ck_assert_int_lt(sel.v[k].hi, sel.v[k + 1].lo);
		for (p = 1; p <= n + 1; p++) {
			int64_t want = 0, q;
			for (q = p; q <= n; q++)
				if (flag[q]) {
					want = q;
					break;
				}
			ck_assert_msg(ps_pagesel_has(&sel, p) == (p <= n && flag[p]),
			              "'%s' on %" PRId64 ": page %" PRId64, expr, n, p);
			ck_assert_msg(ps_pagesel_next(&sel, p) == want,
			              "'%s' on %" PRId64 ": next(%" PRId64 ") %" PRId64 ", want %"
			              PRId64, expr, n, p, ps_pagesel_next(&sel, p), want);
		}
		ps_pagesel_free(&sel);
	}
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* Many items: evaluation stays fast (note 4) and the runs few. */
START_TEST(test_many_items)
{
	ps_ctx *ctx = new_ctx();
	ps_buf b = PS_BUF_INIT;
	ps_pagesel sel;
	int i;

	for (i = 0; i < 100000; i++) {
		char it[32];
		snprintf(it, sizeof it, "%s%d-%d", i ? "," : "", 1 + i % 5000, 2 + i % 7000);
		ps_buf_puts(&b, it);
	}
	ps_buf_puts(&b, ",!3-4");
	ps_buf_putc(&b, '\0');
	ck_assert(!b.oom);
	ck_assert_int_eq(ps_pagesel_parse(ctx, (const char *)b.data, 10000, &sel), 0);
	ck_assert_int_eq(sel.count, 7001 - 2);
	ck_assert_uint_eq(sel.n, 2);
	ps_pagesel_free(&sel);
	ps_buf_free(&b);
	pdfstamp_ctx_free(ctx);
}
END_TEST

static Suite *pagesel_suite(void)
{
	Suite *s = suite_create("pagesel");
	TCase *tc = tcase_create("pagesel");

	tcase_add_loop_test(tc, test_table, 0, sizeof table / sizeof *table);
	tcase_add_test(tc, test_check_only);
	tcase_add_test(tc, test_page_field);
	tcase_add_test(tc, test_huge);
	tcase_add_test(tc, test_random);
	tcase_add_test(tc, test_many_items);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pagesel_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
