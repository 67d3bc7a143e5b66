/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_text.c - unit tests for src/text.c, src/date.c, src/template.c and
 * src/xmp.c (with src/xml.c).
 *
 * Expected values come from outside the code under test:
 *  - UTF-16 and UTF-8 byte sequences from the Unicode code charts;
 *  - PDFDocEncoding and WinAnsiEncoding codes from ISO 32000 Annex D;
 *  - epoch seconds computed with Python's datetime, and the C library's
 *    gmtime_r() as an oracle for calendar arithmetic;
 *  - XMP packets written by hand in the shapes Adobe XMP Core 5, older
 *    Acrobat (one rdf:Description per schema, attribute form), Ghostscript
 *    (single quotes) and others produce.  Well-formedness of the results is
 *    checked with a small tag balancer that is independent of xmp.c.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps.h"
#include "template.h"

/* ---- helpers -------------------------------------------------------------- */

static ps_ctx *new_ctx(void)
{
	ps_ctx *ctx = NULL;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

static void assert_bytes(const uint8_t *got, size_t glen, const char *want, size_t wlen)
{
	size_t i;

	ck_assert_uint_eq(glen, wlen);
	for (i = 0; i < wlen; i++)
		ck_assert_msg(got[i] == (uint8_t)want[i], "byte %zu: got %02x, want %02x",
		              i, got[i], (uint8_t)want[i]);
}

/* UTF-8 -> text string, checked against WANT, then back to UTF-8. */
static void text_roundtrip(const char *utf8, const char *want, size_t wlen)
{
	ps_ctx *ctx = new_ctx();
	ps_obj *o = NULL;
	ps_buf b = PS_BUF_INIT;

	ck_assert_int_eq(ps_text_from_utf8(ctx, utf8, strlen(utf8), &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(o->kind, PS_STR);
	assert_bytes(o->u.str.p, o->u.str.len, want, wlen);
	ck_assert_int_eq(ps_text_to_utf8(ctx, o->u.str.p, o->u.str.len, &b), 0);
	assert_bytes(b.data, b.len, utf8, strlen(utf8));
	ps_buf_free(&b);
	ps_obj_free(o);
	pdfstamp_ctx_free(ctx);
}

static void to_utf8_is(const char *in, size_t inlen, const char *want)
{
	ps_ctx *ctx = new_ctx();
	ps_buf b = PS_BUF_INIT;

	ck_assert_int_eq(ps_text_to_utf8(ctx, (const uint8_t *)in, inlen, &b), 0);
	assert_bytes(b.data, b.len, want, strlen(want));
	ps_buf_free(&b);
	pdfstamp_ctx_free(ctx);
}

/* IN's characters through ps_text_winansi_code (font.c's test of whether
 * Helvetica will do), '?' for each one WinAnsi lacks. */
static void winansi_is(const char *in, const char *want, size_t wlen)
{
	const uint8_t *p = (const uint8_t *)in;
	size_t i, k, n = strlen(in);
	ps_buf b = PS_BUF_INIT;
	uint32_t c;

	for (i = 0; i < n; i += k) {
		int code;

		k = ps_text_utf8_decode(p + i, n - i, &c);
		ck_assert_uint_gt(k, 0);
		code = ps_text_winansi_code(c);
		ps_buf_putc(&b, code < 0 ? '?' : code);
	}
	ck_assert(!b.oom);
	assert_bytes(b.data, b.len, want, wlen);
	ps_buf_free(&b);
}

/* ---- text strings --------------------------------------------------------- */

START_TEST(test_text_ascii)
{
	text_roundtrip("Hello (World) \\ 1+1", "Hello (World) \\ 1+1", 19);
	text_roundtrip("", "", 0);
	text_roundtrip("tab\tnl\n", "tab\tnl\n", 7);
}
END_TEST

START_TEST(test_text_latin1)
{
	/* "caf" U+00E9 */
	text_roundtrip("caf\xC3\xA9", "\xFE\xFF\x00" "c\x00" "a\x00" "f\x00\xE9", 10);
	/* a control character forces UTF-16 too */
	text_roundtrip("a\x01", "\xFE\xFF\x00" "a\x00\x01", 6);
}
END_TEST

START_TEST(test_text_cjk)
{
	/* U+65E5 U+672C */
	text_roundtrip("\xE6\x97\xA5\xE6\x9C\xAC", "\xFE\xFF\x65\xE5\x67\x2C", 6);
}
END_TEST

START_TEST(test_text_emoji)
{
	/* U+1F600 = D83D DE00; U+10FFFF = DBFF DFFF; mixed with ASCII */
	text_roundtrip("\xF0\x9F\x98\x80", "\xFE\xFF\xD8\x3D\xDE\x00", 6);
	text_roundtrip("x\xF4\x8F\xBF\xBF", "\xFE\xFF\x00x\xDB\xFF\xDF\xFF", 8);
}
END_TEST

static const char *const bad_utf8[] = {
	"\xC0\xAF",             /* overlong '/' */
	"\xC1\xBF",             /* overlong */
	"\xE0\x80\xAF",         /* overlong, 3 bytes */
	"\xF0\x80\x80\xAF",     /* overlong, 4 bytes */
	"\xED\xA0\x80",         /* U+D800 */
	"\xED\xBF\xBF",         /* U+DFFF */
	"\xF4\x90\x80\x80",     /* U+110000 */
	"\xF5\x80\x80\x80",     /* lead byte above F4 */
	"\xF8\x88\x80\x80\x80", /* 5-byte form */
	"\xFF",
	"\x80",                 /* lone continuation */
	"ab\xC3",               /* truncated at the end */
	"\xE6\x97",             /* truncated 3-byte */
	"\xE6\x97x",            /* bad continuation */
};

START_TEST(test_text_invalid_utf8)
{
	ps_ctx *ctx = new_ctx();
	const char *s = bad_utf8[_i];
	ps_obj *o = (ps_obj *)&o;

	ck_assert_int_eq(ps_text_from_utf8(ctx, s, strlen(s), &o), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(ctx->errcode, PDFSTAMP_E_USAGE);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_text_nul)
{
	ps_ctx *ctx = new_ctx();
	ps_obj *o = NULL;

	ck_assert_int_eq(ps_text_from_utf8(ctx, "a\0b", 3, &o), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(o);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_text_utf16_decode)
{
	/* unpaired high and low surrogates -> U+FFFD each */
	to_utf8_is("\xFE\xFF\xD8\x00\x00" "A", 6, "\xEF\xBF\xBD" "A");
	to_utf8_is("\xFE\xFF\xDC\x00", 4, "\xEF\xBF\xBD");
	/* odd trailing byte */
	to_utf8_is("\xFE\xFF\x00" "A\x00", 5, "A\xEF\xBF\xBD");
	/* PDF 2.0 language escape: ESC "en" ESC is not text */
	to_utf8_is("\xFE\xFF\x00\x1B\x00" "e\x00" "n\x00\x1B\x00" "A", 12, "A");
	/* UTF-16LE BOM from broken producers */
	to_utf8_is("\xFF\xFE" "A\x00\xE9\x00", 6, "A\xC3\xA9");
	/* UTF-8 with BOM (PDF 2.0), invalid byte -> U+FFFD */
	to_utf8_is("\xEF\xBB\xBFh\xC3\xA9\xFF", 7, "h\xC3\xA9\xEF\xBF\xBD");
	/* just a BOM */
	to_utf8_is("\xFE\xFF", 2, "");
}
END_TEST

START_TEST(test_text_pdfdoc)
{
	/* ISO 32000 Annex D, Table D.2, PDF column */
	to_utf8_is("\x18", 1, "\xCB\x98");              /* breve U+02D8 */
	to_utf8_is("\x1F", 1, "\xCB\x9C");              /* tilde U+02DC */
	to_utf8_is("\x80", 1, "\xE2\x80\xA2");          /* bullet U+2022 */
	to_utf8_is("\x84", 1, "\xE2\x80\x94");          /* emdash U+2014 */
	to_utf8_is("\x8A", 1, "\xE2\x88\x92");          /* minus U+2212 */
	to_utf8_is("\x8D", 1, "\xE2\x80\x9C");          /* quotedblleft U+201C */
	to_utf8_is("\x92", 1, "\xE2\x84\xA2");          /* trademark U+2122 */
	to_utf8_is("\x93", 1, "\xEF\xAC\x81");          /* fi U+FB01 */
	to_utf8_is("\x95", 1, "\xC5\x81");              /* Lslash U+0141 */
	to_utf8_is("\x9E", 1, "\xC5\xBE");              /* zcaron U+017E */
	to_utf8_is("\xA0", 1, "\xE2\x82\xAC");          /* Euro U+20AC */
	to_utf8_is("\xE9\xFF", 2, "\xC3\xA9\xC3\xBF");  /* Latin-1 part */
	to_utf8_is("a\tb\r\n", 5, "a\tb\r\n");
	/* undefined codes */
	to_utf8_is("\x9F", 1, "\xEF\xBF\xBD");
	to_utf8_is("\x7F", 1, "\xEF\xBF\xBD");
	to_utf8_is("\xAD", 1, "\xEF\xBF\xBD");
	to_utf8_is("\x01", 1, "\xEF\xBF\xBD");
}
END_TEST

START_TEST(test_text_winansi)
{
	/* ISO 32000 Annex D, Table D.2, WIN column */
	winansi_is("A\xE2\x82\xAC", "A\x80", 2);                       /* Euro */
	winansi_is("\xE2\x80\x9A\xC6\x92\xE2\x80\x9E", "\x82\x83\x84", 3); /* quotesinglbase florin quotedblbase */
	winansi_is("\xE2\x80\x9C\xE2\x80\x9D", "\x93\x94", 2);         /* curly double quotes */
	winansi_is("\xE2\x80\x98\xE2\x80\x99", "\x91\x92", 2);         /* curly single quotes */
	winansi_is("\xE2\x80\xA2\xE2\x80\x93\xE2\x80\x94", "\x95\x96\x97", 3); /* bullet en em */
	winansi_is("\xE2\x84\xA2", "\x99", 1);                         /* trademark */
	winansi_is("\xC5\xA0\xC5\x92\xC5\xBD", "\x8A\x8C\x8E", 3);     /* Scaron OE Zcaron */
	winansi_is("\xC5\xB8", "\x9F", 1);                             /* Ydieresis */
	winansi_is("\xCB\x86\xCB\x9C", "\x88\x98", 2);                 /* circumflex tilde */
	winansi_is("caf\xC3\xA9 \xC2\xA0\xC3\xBF", "caf\xE9 \xA0\xFF", 7);
	/* characters WinAnsi lacks: one '?' per character, not per byte */
	winansi_is("\xE6\x97\xA5" "x\xF0\x9F\x98\x80", "?x?", 3);      /* CJK, emoji */
	winansi_is("\xC5\x81", "?", 1);         /* Lslash: PDFDoc has it, WinAnsi not */
	winansi_is("\xE2\x88\x92", "?", 1);     /* minus sign */
	winansi_is("\xC2\x81\xC2\x9F", "??", 2); /* C1 controls are not the 0x8x glyphs */
	winansi_is("a\x01" "b", "a?b", 3);
	winansi_is("", "", 0);
}
END_TEST

/* ---- dates ---------------------------------------------------------------- */

static void parse_ok(const char *s, int64_t t, int tzoff, const char *pdf, const char *iso)
{
	ps_ctx *ctx = new_ctx();
	ps_time tm;
	char buf[32];

	ck_assert_msg(ps_time_parse(ctx, s, &tm) == 0, "%s: %s", s, ctx->errmsg);
	ck_assert_msg(tm.t == t, "%s: t=%lld want %lld", s, (long long)tm.t, (long long)t);
	ck_assert_int_eq(tm.tzoff, tzoff);
	ps_time_pdf(&tm, buf);
	ck_assert_str_eq(buf, pdf);
	ps_time_iso(&tm, buf);
	ck_assert_str_eq(buf, iso);
	pdfstamp_ctx_free(ctx);
}

START_TEST(test_time_parse)
{
	parse_ok("2024-02-29T12:34:56+05:30", 1709190296, 330,
	         "D:20240229123456+05'30'", "2024-02-29T12:34:56+05:30");
	parse_ok("2024-02-29T12:34:56+0530", 1709190296, 330,
	         "D:20240229123456+05'30'", "2024-02-29T12:34:56+05:30");
	parse_ok("1999-12-31T23:59:59-08:00", 946713599, -480,
	         "D:19991231235959-08'00'", "1999-12-31T23:59:59-08:00");
	parse_ok("2000-02-29", 951782400, 0, "D:20000229000000Z", "2000-02-29T00:00:00Z");
	parse_ok("1970-01-01T00:00Z", 0, 0, "D:19700101000000Z", "1970-01-01T00:00:00Z");
	parse_ok("1969-12-31T23:59:59Z", -1, 0, "D:19691231235959Z", "1969-12-31T23:59:59Z");
	parse_ok("1601-01-01T00:00:00", -11644473600LL, 0, "D:16010101000000Z",
	         "1601-01-01T00:00:00Z");
	parse_ok("9999-12-31T23:59:59z", 253402300799LL, 0, "D:99991231235959Z",
	         "9999-12-31T23:59:59Z");
	/* fractions are dropped; -00:00 is UTC; +14:00 is the limit */
	parse_ok("2024-02-29T12:34:56.789+05:30", 1709190296, 330,
	         "D:20240229123456+05'30'", "2024-02-29T12:34:56+05:30");
	parse_ok("1970-01-01T00:00-00:00", 0, 0, "D:19700101000000Z", "1970-01-01T00:00:00Z");
	parse_ok("1970-01-02T00:00+14:00", 36000, 840, "D:19700102000000+14'00'",
	         "1970-01-02T00:00:00+14:00");
	parse_ok("1970-01-01T00:00:00-01", 3600, -60, "D:19700101000000-01'00'",
	         "1970-01-01T00:00:00-01:00");
	/* a leap second is accepted and lands on the next minute */
	parse_ok("2016-12-31T23:59:60Z", 1483228800, 0, "D:20170101000000Z",
	         "2017-01-01T00:00:00Z");
}
END_TEST

static const char *const bad_dates[] = {
	"", "today", "2024", "2024-02", "2024-2-01", "24-02-01", "2024/02/01",
	"2023-02-29", "1900-02-29", "2100-02-29", "2024-02-30", "2024-04-31",
	"2024-00-10", "2024-13-01", "2024-01-00", "2024-01-32",
	"2024-01-01T24:00", "2024-01-01T12:60", "2024-01-01T12:00:61",
	"2024-01-01T12", "2024-01-01T1:00", "2024-01-01T12:00:", "2024-01-01T12:00:00.",
	"2024-01-01T12:00+14:01", "2024-01-01T12:00-15:00", "2024-01-01T12:00+05:60",
	"2024-01-01T12:00+5", "2024-01-01T12:00+05:3", "2024-01-01T12:00 ",
	" 2024-01-01", "2024-01-01T12:00ZZ", "2024-01-01x", "+2024-01-01",
	"NOW", "now ",
};

START_TEST(test_time_invalid)
{
	ps_ctx *ctx = new_ctx();
	ps_time tm;

	ck_assert_msg(ps_time_parse(ctx, bad_dates[_i], &tm) == PDFSTAMP_E_USAGE,
	              "accepted '%s'", bad_dates[_i]);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* PDF dates of annotations (/M), as writers put them: every field after
 * the year optional, "D:" too, offsets Z, +HH'mm' with or without the
 * apostrophes; anything else refused, nothing read past N. */
START_TEST(test_time_parse_pdf)
{
	static const struct {
		const char *s;
		const char *iso;        /* NULL: refused */
	} v[] = {
		{"D:20260102030405+01'00'", "2026-01-02T03:04:05+01:00"},
		{"D:20260102030405+01'00", "2026-01-02T03:04:05+01:00"},
		{"D:20260102030405-0530", "2026-01-02T03:04:05-05:30"},
		{"D:20260102030405Z", "2026-01-02T03:04:05Z"},
		{"D:20260102030405Z00'00'", "2026-01-02T03:04:05Z"},
		{"20260102030405", "2026-01-02T03:04:05Z"},
		{"D:2026", "2026-01-01T00:00:00Z"},
		{"D:202602", "2026-02-01T00:00:00Z"},
		{"D:20240229", "2024-02-29T00:00:00Z"},
		{"D:20230229", NULL}, {"D:20261301", NULL}, {"D:2026010224", NULL},
		{"D:202601020304056", NULL}, {"D:20260102030405+15'00'", NULL},
		{"D:20260102030405+01'60'", NULL}, {"D:20260102030405 ", NULL},
		{"D:", NULL}, {"", NULL}, {"D:20x6", NULL}, {"D:2026010", NULL},
	};
	size_t i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		ps_time tm;
		char iso[32];
		int rc = ps_time_parse_pdf((const uint8_t *)v[i].s, strlen(v[i].s), &tm);
		ck_assert_msg(rc == (v[i].iso ? 0 : -1), "%s: %d", v[i].s, rc);
		if (!v[i].iso)
			continue;
		ps_time_iso(&tm, iso);
		ck_assert_msg(strcmp(iso, v[i].iso) == 0, "%s: %s", v[i].s, iso);
	}
	/* the length is the bound: a prefix of a longer buffer */
	{
		ps_time tm;
		char iso[32];
		ck_assert_int_eq(ps_time_parse_pdf((const uint8_t *)"D:20260102XXXX", 10, &tm), 0);
		ps_time_iso(&tm, iso);
		ck_assert_str_eq(iso, "2026-01-02T00:00:00Z");
	}
}
END_TEST

/* Formatting with offset 0 agrees with the C library's gmtime_r, and every
 * formatted moment parses back to itself, for many offsets. */
START_TEST(test_time_oracle)
{
	static const int offs[] = {0, 1, -1, 60, -60, 330, -570, 345, 840, -720, 765};
	ps_ctx *ctx = new_ctx();
	int64_t t;
	size_t k;

	for (t = -12219292800LL; t < 253402300799LL - 86400; t += 7777777 + (t & 0xFFF)) {
		ps_time a = {t, 0}, b;
		char iso[32], pdf[32], want[64];
		time_t tt = (time_t)t;
		struct tm g;

		ck_assert_ptr_nonnull(gmtime_r(&tt, &g));
		snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02dZ", g.tm_year + 1900,
		         g.tm_mon + 1, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec);
		ps_time_iso(&a, iso);
		ck_assert_str_eq(iso, want);
		snprintf(want, sizeof want, "D:%04d%02d%02d%02d%02d%02dZ", g.tm_year + 1900,
		         g.tm_mon + 1, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec);
		ps_time_pdf(&a, pdf);
		ck_assert_str_eq(pdf, want);
		for (k = 0; k < sizeof offs / sizeof *offs; k++) {
			a.tzoff = offs[k];
			ps_time_iso(&a, iso);
			ck_assert_int_eq(ps_time_parse(ctx, iso, &b), 0);
			ck_assert_msg(b.t == t && b.tzoff == offs[k], "%s", iso);
		}
	}
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_time_clamp)
{
	ps_time a = {INT64_MAX, 0}, b = {INT64_MIN, 5000};
	char buf[32];

	ps_time_iso(&a, buf);
	ck_assert_str_eq(buf, "9999-12-31T23:59:59Z");
	ps_time_pdf(&a, buf);
	ck_assert_str_eq(buf, "D:99991231235959Z");
	ps_time_iso(&b, buf);
	ck_assert_str_eq(buf, "0000-01-01T00:00:00+23:59");
	ps_time_pdf(&b, buf);
	ck_assert_str_eq(buf, "D:00000101000000+23'59'");
}
END_TEST

START_TEST(test_time_now)
{
	ps_ctx *ctx = new_ctx();
	ps_time tm;
	time_t before, after;

	/* a POSIX TZ rule needs no zoneinfo: UTC+05:30, no DST */
	ck_assert_int_eq(setenv("TZ", "XST-5:30", 1), 0);
	tzset();
	before = time(NULL);
	ck_assert_int_eq(ps_time_parse(ctx, "now", &tm), 0);
	after = time(NULL);
	ck_assert(tm.t >= (int64_t)before && tm.t <= (int64_t)after);
	ck_assert_int_eq(tm.tzoff, 330);

	ck_assert_int_eq(setenv("TZ", "YST8", 1), 0);
	tzset();
	ck_assert_int_eq(ps_time_parse(ctx, "now", &tm), 0);
	ck_assert_int_eq(tm.tzoff, -480);

	ck_assert_int_eq(setenv("TZ", "UTC0", 1), 0);
	tzset();
	ck_assert_int_eq(ps_time_parse(ctx, "now", &tm), 0);
	ck_assert_int_eq(tm.tzoff, 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- XMP ------------------------------------------------------------------ */

/* Independent well-formedness check: every start tag has its end tag,
 * quotes close, comments and PIs terminate, nothing is left open. */
static int tags_balance(const char *s, size_t n)
{
	const char *stack[256];
	size_t lens[256], depth = 0, i = 0;

	while (i < n) {
		size_t j;

		if (s[i] != '<') {
			if (s[i] == '>' && depth == 0)
				return 0;
			i++;
			continue;
		}
		if (i + 4 <= n && memcmp(s + i, "<!--", 4) == 0) {
			const char *e = strstr(s + i + 4, "-->");

			if (!e)
				return 0;
			i = (size_t)(e - s) + 3;
			continue;
		}
		if (i + 1 < n && s[i + 1] == '?') {
			const char *e = strstr(s + i + 2, "?>");

			if (!e)
				return 0;
			i = (size_t)(e - s) + 2;
			continue;
		}
		if (i + 1 < n && s[i + 1] == '/') {
			j = i + 2;
			while (j < n && s[j] != '>' && s[j] != ' ')
				j++;
			if (!depth || lens[depth - 1] != j - i - 2 ||
			    memcmp(stack[depth - 1], s + i + 2, j - i - 2) != 0)
				return 0;
			depth--;
			while (j < n && s[j] != '>')
				j++;
			i = j + 1;
			continue;
		}
		j = i + 1;
		while (j < n && !strchr(" \t\r\n/>", s[j]))
			j++;
		if (depth == 256)
			return 0;
		stack[depth] = s + i + 1;
		lens[depth] = j - i - 1;
		while (j < n && s[j] != '>') {
			if (s[j] == '"' || s[j] == '\'') {
				const char *e = memchr(s + j + 1, s[j], n - j - 1);

				if (!e)
					return 0;
				j = (size_t)(e - s);
			} else if (s[j] == '<') {
				return 0;
			}
			j++;
		}
		if (j >= n)
			return 0;
		if (s[j - 1] != '/')
			depth++;
		i = j + 1;
	}
	return depth == 0;
}

static size_t count(const char *s, const char *needle)
{
	size_t c = 0, k = strlen(needle);
	const char *p = s;

	while ((p = strstr(p, needle)) != NULL) {
		c++;
		p += k;
	}
	return c;
}

/* Runs ps_xmp_update; returns a NUL-terminated copy of the result that the
 * caller frees, after checking that the tags balance. */
static char *xmp(const char *old, const ps_meta_kv *kv, size_t nkv, const char *date)
{
	ps_ctx *ctx = new_ctx();
	ps_buf b = PS_BUF_INIT;
	char *r;
	int rc;

	rc = ps_xmp_update(ctx, (const uint8_t *)old, old ? strlen(old) : 0, kv, nkv, date, &b);
	ck_assert_msg(rc == 0, "ps_xmp_update: %d %s", rc, ctx->errmsg);
	ck_assert_ptr_null(memchr(b.data, 0, b.len));
	ck_assert_msg(tags_balance((const char *)b.data, b.len), "unbalanced:\n%.*s",
	              (int)b.len, (const char *)b.data);
	r = malloc(b.len + 1);
	ck_assert_ptr_nonnull(r);
	memcpy(r, b.data, b.len);
	r[b.len] = 0;
	ps_buf_free(&b);
	pdfstamp_ctx_free(ctx);
	return r;
}

static int xmp_fails(const char *old, size_t len, const ps_meta_kv *kv, size_t nkv)
{
	ps_ctx *ctx = new_ctx();
	ps_buf b = PS_BUF_INIT;
	int rc;

	rc = ps_xmp_update(ctx, (const uint8_t *)old, len, kv, nkv, "2024-01-01T00:00:00Z", &b);
	ck_assert_int_ne(rc, 0);
	ck_assert_int_eq(ctx->errcode, rc);
	ck_assert_uint_eq(b.len, 0);    /* nothing half-written */
	ps_buf_free(&b);
	pdfstamp_ctx_free(ctx);
	return rc;
}

/* Adobe XMP Core 5 style: one description, element forms, a second
 * language for the title, properties we must not touch. */
static const char adobe5[] =
	"<?xpacket begin=\"\xEF\xBB\xBF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
	"<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"Adobe XMP Core 5.6-c017\">\n"
	"   <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
	"      <rdf:Description rdf:about=\"\"\n"
	"            xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\"\n"
	"            xmlns:dc=\"http://purl.org/dc/elements/1.1/\"\n"
	"            xmlns:xmpMM=\"http://ns.adobe.com/xap/1.0/mm/\"\n"
	"            xmlns:pdf=\"http://ns.adobe.com/pdf/1.3/\">\n"
	"         <xmp:ModifyDate>2016-03-01T10:00:00+01:00</xmp:ModifyDate>\n"
	"         <xmp:CreateDate>2016-02-01T09:00:00+01:00</xmp:CreateDate>\n"
	"         <xmp:MetadataDate>2016-03-01T10:00:00+01:00</xmp:MetadataDate>\n"
	"         <xmp:CreatorTool>Word</xmp:CreatorTool>\n"
	"         <dc:format>application/pdf</dc:format>\n"
	"         <dc:title>\n"
	"            <rdf:Alt>\n"
	"               <rdf:li xml:lang=\"x-default\">Old title</rdf:li>\n"
	"               <rdf:li xml:lang=\"de-DE\">Alter Titel</rdf:li>\n"
	"            </rdf:Alt>\n"
	"         </dc:title>\n"
	"         <dc:creator>\n"
	"            <rdf:Seq>\n"
	"               <rdf:li>Ann</rdf:li>\n"
	"               <rdf:li>Bob</rdf:li>\n"
	"            </rdf:Seq>\n"
	"         </dc:creator>\n"
	"         <!-- a comment with <dc:title> inside -->\n"
	"         <xmpMM:DocumentID>uuid:1234-abcd</xmpMM:DocumentID>\n"
	"         <pdf:Producer>Acrobat PDFMaker 15</pdf:Producer>\n"
	"      </rdf:Description>\n"
	"   </rdf:RDF>\n"
	"</x:xmpmeta>\n"
	"                                                                    \n"
	"                                                                    \n"
	"<?xpacket end=\"w\"?>";

/* Older Acrobat style: one description per schema, attribute forms, the
 * "xap" prefix for the XMP basic schema, self-closing descriptions. */
static const char acro5[] =
	"<?xpacket begin='\xEF\xBB\xBF' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"
	"<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n"
	"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n"
	"<rdf:Description rdf:about='uuid:b8659d3a' xmlns:pdf='http://ns.adobe.com/pdf/1.3/'"
	" pdf:Producer='Acrobat Distiller 5.0' pdf:Keywords='old kw'/>\n"
	"<rdf:Description rdf:about='uuid:b8659d3a' xmlns:xap='http://ns.adobe.com/xap/1.0/'"
	" xap:ModifyDate='2002-01-01T00:00:00Z' xap:CreatorTool='PScript5.dll'/>\n"
	"<rdf:Description rdf:about='uuid:b8659d3a' xmlns:dc='http://purl.org/dc/elements/1.1/'"
	" dc:format='application/pdf'><dc:title><rdf:Alt><rdf:li xml:lang='x-default'>T</rdf:li>"
	"</rdf:Alt></dc:title></rdf:Description>\n"
	"</rdf:RDF>\n"
	"</x:xmpmeta>\n"
	"<?xpacket end='r'?>";

/* Ghostscript style */
static const char gs[] =
	"<?xpacket begin='\xEF\xBB\xBF' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"
	"<?adobe-xap-filters esc=\"CRLF\"?>\n"
	"<x:xmpmeta xmlns:x='adobe:ns:meta/' x:xmptk='XMP toolkit 2.9.1-13, framework 1.6'>\n"
	"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' xmlns:iX='http://ns.adobe.com/iX/1.0/'>\n"
	"<rdf:Description rdf:about='uuid:75c1' xmlns:pdf='http://ns.adobe.com/pdf/1.3/' pdf:Producer='GPL Ghostscript 9.50'/>\n"
	"<rdf:Description rdf:about='uuid:75c1' xmlns:xmp='http://ns.adobe.com/xap/1.0/'><xmp:ModifyDate>2020-01-01T00:00:00Z</xmp:ModifyDate>\n"
	"<xmp:CreateDate>2020-01-01T00:00:00Z</xmp:CreateDate>\n"
	"<xmp:CreatorTool>UnknownApplication</xmp:CreatorTool></rdf:Description>\n"
	"</rdf:RDF>\n"
	"</x:xmpmeta>\n"
	"<?xpacket end='w'?>";

START_TEST(test_xmp_fresh)
{
	static const ps_meta_kv kv[] = {
		{"Title", "A <b> & \"c\" 'd'"},
		{"Author", "Jane Doe"},
		{"Subject", "S\xC3\xBC" "bject"},
		{"Keywords", "k1, k2"},
		{"Producer", "pdfstamp"},
		{"Creator", "Writer"},
		{"Department", "R&D"},
		{"bad key", "x"},         /* not an XML name: skipped */
		{"ModDate", "D:2000"},    /* dates come from MODDATE */
		{"Trapped", "True"},
	};
	char *r = xmp(NULL, kv, sizeof kv / sizeof *kv, "2024-02-29T12:34:56+05:30");

	ck_assert(strncmp(r, "<?xpacket begin=\"\xEF\xBB\xBF\"", 19) == 0);
	ck_assert(strstr(r, "<?xpacket end=\"w\"?>") != NULL);
	ck_assert(strstr(r, "xmlns:x=\"adobe:ns:meta/\"") != NULL);
	ck_assert(strstr(r, "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"") != NULL);
	ck_assert_uint_eq(count(r, "xmlns:dc=\"http://purl.org/dc/elements/1.1/\""), 1);
	ck_assert_uint_eq(count(r, "xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\""), 1);
	ck_assert_uint_eq(count(r, "xmlns:pdf=\"http://ns.adobe.com/pdf/1.3/\""), 1);
	ck_assert_uint_eq(count(r, "xmlns:pdfx=\"http://ns.adobe.com/pdfx/1.3/\""), 1);
	ck_assert(strstr(r, "<rdf:li xml:lang=\"x-default\">A &lt;b&gt; &amp; \"c\" 'd'</rdf:li>") != NULL);
	ck_assert(strstr(r, "<rdf:Seq>") != NULL);
	ck_assert(strstr(r, "<rdf:li>Jane Doe</rdf:li>") != NULL);
	ck_assert(strstr(r, "S\xC3\xBC" "bject</rdf:li>") != NULL);
	ck_assert(strstr(r, "<pdf:Keywords>k1, k2</pdf:Keywords>") != NULL);
	ck_assert(strstr(r, "<pdf:Producer>pdfstamp</pdf:Producer>") != NULL);
	ck_assert(strstr(r, "<xmp:CreatorTool>Writer</xmp:CreatorTool>") != NULL);
	ck_assert(strstr(r, "<pdfx:Department>R&amp;D</pdfx:Department>") != NULL);
	ck_assert(strstr(r, "<xmp:ModifyDate>2024-02-29T12:34:56+05:30</xmp:ModifyDate>") != NULL);
	ck_assert(strstr(r, "<xmp:MetadataDate>2024-02-29T12:34:56+05:30</xmp:MetadataDate>") != NULL);
	ck_assert(strstr(r, "bad key") == NULL && strstr(r, "D:2000") == NULL);
	ck_assert(strstr(r, "Trapped") == NULL && strstr(r, "ModDate") == NULL);
	/* padding for in-place editors */
	ck_assert(strstr(r, "                                        \n") != NULL);
	free(r);

	/* no changes at all still gives a valid packet; so does whitespace */
	r = xmp("  \n", NULL, 0, NULL);
	ck_assert(strstr(r, "<rdf:Description rdf:about=\"\">") != NULL);
	ck_assert(strstr(r, "ModifyDate") == NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_adobe_update)
{
	static const ps_meta_kv kv[] = {
		{"Title", "New & improved"},
		{"Author", "Carol"},
		{"Keywords", "alpha"},
		{"Producer", NULL},
		{"Custom1", "v"},
	};
	char *r = xmp(adobe5, kv, sizeof kv / sizeof *kv, "2024-01-02T03:04:05Z");
	const char *decl_end = strstr(adobe5, "/pdf/1.3/\"") + 10;

	/* untouched bytes stay: the header through the namespace list (the
	 * new declaration lines up with the others), other properties, the
	 * comment, the padding and the trailer */
	ck_assert(strncmp(r, adobe5, (size_t)(decl_end - adobe5)) == 0);
	ck_assert(strncmp(r + (decl_end - adobe5),
	                  "\n            xmlns:pdfx=\"http://ns.adobe.com/pdfx/1.3/\">\n", 53) == 0);
	ck_assert(strstr(r, "<xmp:CreateDate>2016-02-01T09:00:00+01:00</xmp:CreateDate>\n") != NULL);
	ck_assert(strstr(r, "<dc:format>application/pdf</dc:format>") != NULL);
	ck_assert(strstr(r, "<xmpMM:DocumentID>uuid:1234-abcd</xmpMM:DocumentID>") != NULL);
	ck_assert(strstr(r, "<!-- a comment with <dc:title> inside -->") != NULL);
	ck_assert(strstr(r, "<xmp:CreatorTool>Word</xmp:CreatorTool>") != NULL);
	ck_assert(strstr(r, "                                                                    \n"
	                    "                                                                    \n"
	                    "<?xpacket end=\"w\"?>") != NULL);
	/* title: x-default replaced, other language kept */
	ck_assert(strstr(r, "<rdf:li xml:lang=\"x-default\">New &amp; improved</rdf:li>") != NULL);
	ck_assert(strstr(r, "<rdf:li xml:lang=\"de-DE\">Alter Titel</rdf:li>") != NULL);
	ck_assert_uint_eq(count(r, "<dc:title>"), 2);  /* + the one in the comment */
	/* creator: a one-item sequence */
	ck_assert(strstr(r, "<rdf:li>Carol</rdf:li>") != NULL);
	ck_assert(strstr(r, "Ann") == NULL && strstr(r, "Bob") == NULL);
	ck_assert_uint_eq(count(r, "<dc:creator>"), 1);
	/* keywords added with the existing pdf prefix, no new declaration */
	ck_assert(strstr(r, "<pdf:Keywords>alpha</pdf:Keywords>") != NULL);
	ck_assert_uint_eq(count(r, "xmlns:pdf="), 1);
	/* producer removed, pdfx declared once */
	ck_assert(strstr(r, "Producer") == NULL);
	ck_assert_uint_eq(count(r, "xmlns:pdfx=\"http://ns.adobe.com/pdfx/1.3/\""), 1);
	ck_assert(strstr(r, "<pdfx:Custom1>v</pdfx:Custom1>") != NULL);
	/* dates replaced in place, once */
	ck_assert(strstr(r, "         <xmp:ModifyDate>2024-01-02T03:04:05Z</xmp:ModifyDate>\n") != NULL);
	ck_assert(strstr(r, "<xmp:MetadataDate>2024-01-02T03:04:05Z</xmp:MetadataDate>") != NULL);
	ck_assert_uint_eq(count(r, "ModifyDate>"), 2);
	ck_assert(strstr(r, "2016-03-01") == NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_idempotent)
{
	static const ps_meta_kv kv[] = {
		{"Title", "T"}, {"Author", "A"}, {"Subject", "S"}, {"Keywords", "K"},
		{"Producer", "P"}, {"Creator", "C"}, {"X", "y"},
	};
	const char *const inputs[] = {NULL, adobe5, acro5, gs};
	size_t i;

	for (i = 0; i < 4; i++) {
		char *a = xmp(inputs[i], kv, sizeof kv / sizeof *kv, "2024-05-06T07:08:09-04:00");
		char *b = xmp(a, kv, sizeof kv / sizeof *kv, "2024-05-06T07:08:09-04:00");

		ck_assert_str_eq(a, b);
		ck_assert_uint_eq(count(a, "2024-05-06T07:08:09-04:00"), 2);
		free(a);
		free(b);
	}
}
END_TEST

START_TEST(test_xmp_attribute_form)
{
	static const ps_meta_kv kv[] = {
		{"Producer", NULL},
		{"Keywords", "it's \"new\"\t<x>"},
		{"Title", "Only"},
		{"Author", "Me"},
	};
	char *r = xmp(acro5, kv, sizeof kv / sizeof *kv, "2024-01-02T03:04:05Z");

	/* attribute value replaced in place, escaped for either quote */
	ck_assert(strstr(r, "pdf:Keywords='it&apos;s &quot;new&quot;&#x9;&lt;x&gt;'") != NULL);
	ck_assert(strstr(r, "Producer") == NULL);
	/* xap: is the XMP namespace: the attribute is updated, not duplicated */
	ck_assert(strstr(r, "xap:ModifyDate='2024-01-02T03:04:05Z'") != NULL);
	ck_assert(strstr(r, "xmp:ModifyDate") == NULL);
	ck_assert(strstr(r, "xap:CreatorTool='PScript5.dll'") != NULL);
	/* MetadataDate is new: it joins the description that already has the
	 * schema (self-closing until now), under its prefix, no new xmlns */
	ck_assert(strstr(r, " xap:CreatorTool='PScript5.dll'>\n"
	                    "   <xap:MetadataDate>2024-01-02T03:04:05Z</xap:MetadataDate>\n"
	                    "</rdf:Description>\n") != NULL);
	ck_assert_uint_eq(count(r, "http://ns.adobe.com/xap/1.0/"), 1);
	/* the title element in the third description is updated in place */
	ck_assert(strstr(r, "<rdf:li xml:lang='x-default'>Only</rdf:li>") != NULL);
	ck_assert_uint_eq(count(r, "dc:title>"), 2);
	ck_assert(strstr(r, "<rdf:li>Me</rdf:li>") != NULL);
	ck_assert(strstr(r, "<?xpacket end='r'?>") != NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_ghostscript)
{
	static const ps_meta_kv kv[] = {{"Producer", "pdfstamp 1.0"}, {"Creator", NULL}};
	char *r = xmp(gs, kv, sizeof kv / sizeof *kv, "2024-01-02T03:04:05Z");

	ck_assert(strstr(r, "pdf:Producer='pdfstamp 1.0'/>") != NULL);
	ck_assert(strstr(r, "CreatorTool") == NULL);
	ck_assert(strstr(r, "<xmp:ModifyDate>2024-01-02T03:04:05Z</xmp:ModifyDate>") != NULL);
	ck_assert(strstr(r, "<xmp:CreateDate>2020-01-01T00:00:00Z</xmp:CreateDate>\n"
	                    "<xmp:MetadataDate>2024-01-02T03:04:05Z</xmp:MetadataDate>"
	                    "</rdf:Description>") != NULL);
	ck_assert_uint_eq(count(r, "http://ns.adobe.com/xap/1.0/"), 1);
	ck_assert(strstr(r, "<?adobe-xap-filters esc=\"CRLF\"?>") != NULL);
	ck_assert(strstr(r, "xmlns:iX='http://ns.adobe.com/iX/1.0/'") != NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_duplicates)
{
	static const char dup[] =
		"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' xmlns:pdf='http://ns.adobe.com/pdf/1.3/' pdf:Producer='one'/>"
		"<rdf:Description rdf:about='' xmlns:p2='http://ns.adobe.com/pdf/1.3/'>"
		"<p2:Producer>two</p2:Producer><p2:Producer>three</p2:Producer></rdf:Description>"
		"</rdf:RDF></x:xmpmeta>";
	static const ps_meta_kv set[] = {{"Producer", "new"}};
	static const ps_meta_kv del[] = {{"Producer", NULL}};
	char *r = xmp(dup, set, 1, NULL);

	ck_assert_uint_eq(count(r, "Producer"), 1);
	ck_assert(strstr(r, "pdf:Producer='new'") != NULL);
	free(r);
	r = xmp(dup, del, 1, NULL);
	ck_assert(strstr(r, "Producer") == NULL);
	ck_assert(strstr(r, "one") == NULL && strstr(r, "two") == NULL && strstr(r, "three") == NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_prefix_clash)
{
	/* "dc" is bound to something else: the new title needs another prefix,
	 * and the existing dc:thing keeps its meaning */
	static const char clash[] =
		"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'"
		" xmlns:dc='http://example.com/not-dc/'>"
		"<rdf:Description rdf:about=''><dc:thing>keep</dc:thing></rdf:Description>"
		"</rdf:RDF></x:xmpmeta>";
	static const ps_meta_kv kv[] = {{"Title", "T"}};
	char *r = xmp(clash, kv, 1, NULL);

	ck_assert(strstr(r, "<dc:thing>keep</dc:thing>") != NULL);
	ck_assert(strstr(r, "xmlns:dc1=\"http://purl.org/dc/elements/1.1/\"") != NULL);
	ck_assert(strstr(r, "<dc1:title>") != NULL);
	ck_assert(strstr(r, "xmlns:dc='http://example.com/not-dc/'") != NULL);
	ck_assert_uint_eq(count(r, "xmlns:dc="), 1);
	free(r);
}
END_TEST

START_TEST(test_xmp_default_namespace)
{
	/* properties written with a default namespace are still found */
	static const char defns[] =
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about=''><Producer xmlns='http://ns.adobe.com/pdf/1.3/'>old</Producer>"
		"</rdf:Description></rdf:RDF>";
	static const ps_meta_kv kv[] = {{"Producer", "new"}};
	char *r = xmp(defns, kv, 1, NULL);

	ck_assert(strstr(r, "<Producer xmlns='http://ns.adobe.com/pdf/1.3/'>new</Producer>") != NULL);
	ck_assert(strstr(r, "old") == NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_no_description)
{
	static const char empty_rdf[] =
		"<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>"
		"<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'/>"
		"</x:xmpmeta><?xpacket end='w'?>";
	static const char empty_rdf2[] =
		"<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n <rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n"
		" </rdf:RDF>\n</x:xmpmeta>";
	static const ps_meta_kv kv[] = {{"Title", "T"}, {"Producer", "P"}};
	char *r = xmp(empty_rdf, kv, 2, "2024-01-01T00:00:00Z");

	ck_assert(strstr(r, "<rdf:Description rdf:about=\"\"") != NULL);
	ck_assert(strstr(r, "<pdf:Producer>P</pdf:Producer>") != NULL);
	ck_assert(strstr(r, "</rdf:RDF></x:xmpmeta><?xpacket end='w'?>") != NULL);
	free(r);
	r = xmp(empty_rdf2, kv, 2, NULL);
	ck_assert(strstr(r, "<rdf:li xml:lang=\"x-default\">T</rdf:li>") != NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_title_shapes)
{
	/* an Alt without x-default gets one, first */
	static const char no_default[] =
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/'>"
		"<dc:title><rdf:Alt><rdf:li xml:lang='en'>E</rdf:li></rdf:Alt></dc:title>"
		"</rdf:Description></rdf:RDF>";
	/* a title written as a simple value (invalid XMP) is rebuilt */
	static const char simple[] =
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/' dc:title='attr'>"
		"<dc:description>plain</dc:description>"
		"</rdf:Description></rdf:RDF>";
	static const ps_meta_kv kv[] = {{"Title", "T"}, {"Subject", "S"}};
	char *r = xmp(no_default, kv, 2, NULL);

	ck_assert(strstr(r, "<rdf:li xml:lang=\"x-default\">T</rdf:li>") != NULL);
	ck_assert(strstr(r, "<rdf:li xml:lang=\"x-default\">T</rdf:li>") <
	          strstr(r, "<rdf:li xml:lang='en'>E</rdf:li>"));
	free(r);
	r = xmp(simple, kv, 2, NULL);
	ck_assert(strstr(r, "attr") == NULL && strstr(r, "plain") == NULL);
	ck_assert_uint_eq(count(r, "<dc:title>"), 1);
	ck_assert_uint_eq(count(r, "<dc:description>"), 1);
	ck_assert(strstr(r, "<rdf:li xml:lang=\"x-default\">S</rdf:li>") != NULL);
	free(r);
}
END_TEST

START_TEST(test_xmp_last_key_wins)
{
	static const ps_meta_kv kv[] = {{"Title", "first"}, {"Title", "second"}};
	static const ps_meta_kv kv2[] = {{"Title", "first"}, {"Title", NULL}};
	char *r = xmp(adobe5, kv, 2, NULL);

	ck_assert(strstr(r, ">second</rdf:li>") != NULL && strstr(r, "first") == NULL);
	free(r);
	r = xmp(adobe5, kv2, 2, NULL);
	ck_assert(strstr(r, "first") == NULL && strstr(r, "Old title") == NULL);
	ck_assert_uint_eq(count(r, "<dc:title>"), 1);  /* only the comment's */
	free(r);
}
END_TEST

START_TEST(test_xmp_unsupported)
{
	static const ps_meta_kv kv[] = {{"Title", "T"}};
	static const char *const bad[] = {
		"not xml at all",
		"<x:xmpmeta xmlns:x='adobe:ns:meta/'></x:xmpmeta>",              /* no rdf:RDF */
		"<rdf:RDF xmlns:rdf='http://example.com/'></rdf:RDF>",         /* wrong URI */
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><a></b></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>",
		"<!DOCTYPE x [<!ENTITY a 'b'>]><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'/>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' a='1></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' a=1></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><!-- open </rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'></rdf:RDF></rdf:RDF>",
		/* namespace-ill-formed: undeclared prefixes, bad prefixes */
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' pdf:Producer='x'/></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about=''><pdf:Producer>x</pdf:Producer></rdf:Description></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' xmlns::pdf='http://ns.adobe.com/pdf/1.3/'/></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' a:b:c='1'/></rdf:RDF>",
		/* found by fuzz_xmp: the edit then wrote a second xmlns:dc */
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' xmlns:dc=''/></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' xmlns:pdf='http://ns.adobe.com/pdf/1.3/'"
		" xmlns:pdf='http://ns.adobe.com/pdf/1.3/'/></rdf:RDF>",
		"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
		"<rdf:Description rdf:about='' rdf:about='x'/></rdf:RDF>",
	};
	static const char utf16[] = "\xFE\xFF\x00<\x00r";
	size_t i;

	for (i = 0; i < sizeof bad / sizeof *bad; i++)
		ck_assert_msg(xmp_fails(bad[i], strlen(bad[i]), kv, 1) == PDFSTAMP_E_UNSUPPORTED,
		              "accepted %s", bad[i]);
	ck_assert_int_eq(xmp_fails(utf16, sizeof utf16 - 1, kv, 1), PDFSTAMP_E_UNSUPPORTED);
}
END_TEST

START_TEST(test_xmp_bad_values)
{
	static const ps_meta_kv ctl[] = {{"Title", "a\x01" "b"}};
	static const ps_meta_kv inval[] = {{"Title", "a\xC0\xAF"}};
	static const ps_meta_kv surr[] = {{"Author", "\xED\xA0\x80"}};
	static const ps_meta_kv fffe[] = {{"Author", "\xEF\xBF\xBE"}};

	ck_assert_int_eq(xmp_fails(adobe5, strlen(adobe5), ctl, 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(xmp_fails(adobe5, strlen(adobe5), inval, 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(xmp_fails(NULL, 0, surr, 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(xmp_fails(NULL, 0, fffe, 1), PDFSTAMP_E_USAGE);
}
END_TEST

START_TEST(test_xmp_multiline_value)
{
	/* CR survives XML end-of-line normalisation only as a reference */
	static const ps_meta_kv kv[] = {{"Subject", "line1\r\nline2"}, {"Producer", "a\nb"}};
	char *r = xmp(gs, kv, 2, NULL);

	ck_assert(strstr(r, ">line1&#xD;\nline2</") != NULL);
	ck_assert(strstr(r, "pdf:Producer='a&#xA;b'") != NULL);
	free(r);
}
END_TEST

/* Every prefix of a valid packet is either refused cleanly or, for the
 * few cut points that leave a well-formed document, edited sanely. */
START_TEST(test_xmp_truncations)
{
	static const ps_meta_kv kv[] = {{"Title", "T"}};
	size_t n = strlen(adobe5), k;

	for (k = 1; k < n; k++) {
		ps_ctx *ctx = new_ctx();
		ps_buf b = PS_BUF_INIT;
		int rc = ps_xmp_update(ctx, (const uint8_t *)adobe5, k, kv, 1, NULL, &b);

		if (rc == 0)
			ck_assert(tags_balance((const char *)b.data, b.len));
		else
			ck_assert_int_eq(rc, PDFSTAMP_E_UNSUPPORTED);
		ps_buf_free(&b);
		pdfstamp_ctx_free(ctx);
	}
}
END_TEST


/* ---- templates (src/template.c) ---------------------------------------------- */

/* Expands SRC with the variables of a fixed page and moment. */
static char *expand(const char *src, int64_t page, int64_t bates, const char *file, int *rc_out)
{
	ps_ctx *ctx = new_ctx();
	ps_tmpl *t = NULL;
	ps_tmpl_vars v;
	ps_buf b = PS_BUF_INIT;
	char *out = NULL;
	int rc;

	memset(&v, 0, sizeof v);
	v.page = page;
	v.pages = 12;
	/* 2026-03-01T09:05:07+01:00, a Sunday: 1772352307 (Python's datetime) */
	v.when.t = 1772352307;
	v.when.tzoff = 60;
	v.file = file;
	v.author = "J\xc3\xb6rg";
	v.bates = bates;
	v.bates_prefix = "ACME-";
	v.bates_digits = 6;
	rc = ps_tmpl_parse(ctx, "the text", src, &t);
	if (rc == 0)
		rc = ps_tmpl_expand(ctx, t, &v, &b);
	if (rc == 0) {
		ps_buf_putc(&b, '\0');
		out = strdup((const char *)b.data);
	}
	*rc_out = rc;
	ps_buf_free(&b);
	ps_tmpl_free(t);
	pdfstamp_ctx_free(ctx);
	return out;
}

static const struct {
	const char *src, *want;
} tmpl_cases[] = {
	{"APPROVED", "APPROVED"},
	{"Page {page} of {pages}", "Page 7 of 12"},
	{"{bates}", "ACME-000107"},
	{"{{page}} {page}}}", "{page} 7}"},
	{"a } b", "a } b"},
	{"{file}", "scan 01.pdf"},
	{"{author}: {date}", "J\xc3\xb6rg: 2026-03-01 09:05"},
	{"{date:%A %d %B %Y, %H:%M:%S %z}", "Sunday 01 March 2026, 09:05:07 +0100"},
	{"{date:%j %u %Z}", "060 7 +0100"},
	{"\xe6\x89\xbf\xe8\xaa\x8d {page}/{pages}", "\xe6\x89\xbf\xe8\xaa\x8d 7/12"},
	{"", ""},
};

START_TEST(test_tmpl_expand)
{
	int rc;
	char *got = expand(tmpl_cases[_i].src, 7, 107, "/archive/2026/scan 01.pdf", &rc);

	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(got, tmpl_cases[_i].want);
	free(got);
}
END_TEST

static const char *const tmpl_bad[] = {
	"{pag}", "{ page}", "{page", "abc {", "{date:}", "{PAGE}", "{bates:3}", "\xff",
};

START_TEST(test_tmpl_bad)
{
	int rc;
	char *got = expand(tmpl_bad[_i], 1, 1, NULL, &rc);

	ck_assert_int_eq(rc, PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(got);
}
END_TEST

/* What a template uses, and values that cannot change the layout. */
START_TEST(test_tmpl_uses_and_values)
{
	ps_ctx *ctx = new_ctx();
	ps_tmpl *t = NULL;
	int rc;
	char *got;

	ck_assert_int_eq(ps_tmpl_parse(ctx, "t", "{file} {date} {author}", &t), 0);
	ck_assert_uint_eq(ps_tmpl_uses(t), 0);
	ps_tmpl_free(t);
	ck_assert_int_eq(ps_tmpl_parse(ctx, "t", "{page}", &t), 0);
	ck_assert_uint_eq(ps_tmpl_uses(t), PS_TMPL_PER_PAGE);
	ps_tmpl_free(t);
	ck_assert_int_eq(ps_tmpl_parse(ctx, "t", "{bates} {pages}", &t), 0);
	ck_assert_uint_eq(ps_tmpl_uses(t), PS_TMPL_PER_PAGE | PS_TMPL_BATES | PS_TMPL_PAGES);
	ps_tmpl_free(t);
	ck_assert_uint_eq(ps_tmpl_uses(NULL), 0);
	pdfstamp_ctx_free(ctx);
	/* a file name with a newline, a tab and a byte that is not UTF-8 */
	got = expand("[{file}]", 1, 1, "dir/a\nb\tc\xff.pdf", &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(got, "[a?b?c?.pdf]");
	free(got);
	/* a number wider than its digits is written in full */
	got = expand("{bates}", 1, 12345678, NULL, &rc);
	ck_assert_str_eq(got, "ACME-12345678");
	free(got);
}
END_TEST

static Suite *text_suite(void)
{
	Suite *s = suite_create("text");
	TCase *tc;

	tc = tcase_create("strings");
	tcase_add_test(tc, test_text_ascii);
	tcase_add_test(tc, test_text_latin1);
	tcase_add_test(tc, test_text_cjk);
	tcase_add_test(tc, test_text_emoji);
	tcase_add_loop_test(tc, test_text_invalid_utf8, 0, sizeof bad_utf8 / sizeof *bad_utf8);
	tcase_add_test(tc, test_text_nul);
	tcase_add_test(tc, test_text_utf16_decode);
	tcase_add_test(tc, test_text_pdfdoc);
	tcase_add_test(tc, test_text_winansi);
	suite_add_tcase(s, tc);

	tc = tcase_create("dates");
	tcase_add_test(tc, test_time_parse);
	tcase_add_loop_test(tc, test_time_invalid, 0, sizeof bad_dates / sizeof *bad_dates);
	tcase_add_test(tc, test_time_oracle);
	tcase_add_test(tc, test_time_parse_pdf);
	tcase_add_test(tc, test_time_clamp);
	tcase_add_test(tc, test_time_now);
	suite_add_tcase(s, tc);

	tc = tcase_create("templates");
	tcase_add_loop_test(tc, test_tmpl_expand, 0, sizeof tmpl_cases / sizeof *tmpl_cases);
	tcase_add_loop_test(tc, test_tmpl_bad, 0, sizeof tmpl_bad / sizeof *tmpl_bad);
	tcase_add_test(tc, test_tmpl_uses_and_values);
	suite_add_tcase(s, tc);

	tc = tcase_create("xmp");
	tcase_add_test(tc, test_xmp_fresh);
	tcase_add_test(tc, test_xmp_adobe_update);
	tcase_add_test(tc, test_xmp_idempotent);
	tcase_add_test(tc, test_xmp_attribute_form);
	tcase_add_test(tc, test_xmp_ghostscript);
	tcase_add_test(tc, test_xmp_duplicates);
	tcase_add_test(tc, test_xmp_prefix_clash);
	tcase_add_test(tc, test_xmp_default_namespace);
	tcase_add_test(tc, test_xmp_no_description);
	tcase_add_test(tc, test_xmp_title_shapes);
	tcase_add_test(tc, test_xmp_last_key_wins);
	tcase_add_test(tc, test_xmp_unsupported);
	tcase_add_test(tc, test_xmp_bad_values);
	tcase_add_test(tc, test_xmp_multiline_value);
	tcase_add_test(tc, test_xmp_truncations);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(text_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
