/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_obj.c - unit tests for obj.c (object model, typed dictionary
 * helpers), parse.c (parser) and serialize.c (serializer, ps_serialize_real).
 *
 * Every parse runs on an exact-size heap copy of its input, so a read past
 * the window shows up under valgrind / ASan.  Run under valgrind with
 *   CK_FORK=no valgrind --error-exitcode=1 --leak-check=full tests/check_obj
 */
#include "config.h"

#include <check.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

static ps_ctx *ctx;
static int nwarn;
static char lastwarn[256];

static void on_warn(void *ud, const char *msg)
{
	(void)ud;
	nwarn++;
	snprintf(lastwarn, sizeof lastwarn, "%s", msg);
}

static void setup(void)
{
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	pdfstamp_ctx_set_warn(ctx, on_warn, NULL);
	nwarn = 0;
	lastwarn[0] = 0;
}

static void teardown(void)
{
	pdfstamp_ctx_free(ctx);
	ctx = NULL;
}

/* ---- helpers --------------------------------------------------------- */

/* Parses the first N bytes of S from an exact-size heap copy. */
static int parse_n(const void *s, size_t n, size_t *pos, ps_obj **out)
{
	uint8_t *b = malloc(n ? n : 1);
	size_t p = 0;
	int rc;

	ck_assert_ptr_nonnull(b);
	if (n)
		memcpy(b, s, n);
	rc = ps_parse_obj(ctx, b, n, &p, out);
	free(b);
	if (pos)
		*pos = p;
	return rc;
}

static int parse_s(const char *s, ps_obj **out)
{
	return parse_n(s, strlen(s), NULL, out);
}

/* Parses S, which must succeed. */
static ps_obj *P(const char *s)
{
	ps_obj *o = NULL;
	int rc = parse_s(s, &o);

	ck_assert_msg(rc == 0, "parse of '%s' failed: %d %s", s, rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_ptr_nonnull(o);
	return o;
}

static int expect_rc(const char *s, int want)
{
	ps_obj *o = NULL;
	int rc = parse_s(s, &o);

	ck_assert_msg(rc == want, "parse of '%s': rc %d, wanted %d (%s)", s, rc, want,
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_ptr_null(o);
	return rc;
}

/* Serializes into a NUL-terminated heap string. */
static char *ser(const ps_obj *o)
{
	ps_buf b = PS_BUF_INIT;
	size_t n;
	char *s;

	ps_serialize(&b, o);
	ps_buf_putc(&b, 0);
	s = (char *)ps_buf_detach(&b, &n);
	ck_assert_ptr_nonnull(s);
	return s;
}

static int num_eq(double a, double b)
{
	double d = a - b;

	return d < 1e-6 && d > -1e-6;
}

/* Structural equality.  LOOSE lets an integral real equal an integer and
 * compares reals with a 1e-6 tolerance (for serialized new reals). */
static int obj_eq(const ps_obj *a, const ps_obj *b, int loose)
{
	size_t i;

	if (!a || !b)
		return a == b;
	if (loose && (a->kind == PS_INT || a->kind == PS_REAL) &&
	    (b->kind == PS_INT || b->kind == PS_REAL)) {
		double x, y;

		ps_obj_num(a, &x);
		ps_obj_num(b, &y);
		return num_eq(x, y);
	}
	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case PS_NULL:
		return 1;
	case PS_BOOL:
		return a->u.b == b->u.b;
	case PS_INT:
		return a->u.i == b->u.i;
	case PS_REAL:
		if (a->u.real.text && b->u.real.text && strcmp(a->u.real.text, b->u.real.text) != 0)
			return 0;
		return a->u.real.v == b->u.real.v;
	case PS_STR:
		return a->u.str.len == b->u.str.len && a->u.str.hex == b->u.str.hex &&
		       memcmp(a->u.str.p, b->u.str.p, a->u.str.len) == 0;
	case PS_NAME:
		return a->u.name.len == b->u.name.len && strcmp(a->u.name.p, b->u.name.p) == 0;
	case PS_ARRAY:
		if (a->u.arr.len != b->u.arr.len)
			return 0;
		for (i = 0; i < a->u.arr.len; i++)
			if (!obj_eq(a->u.arr.items[i], b->u.arr.items[i], loose))
				return 0;
		return 1;
	case PS_DICT:
		if (a->u.dict.len != b->u.dict.len)
			return 0;
		for (i = 0; i < a->u.dict.len; i++) {
			if (strcmp(a->u.dict.ents[i].key, b->u.dict.ents[i].key) != 0)
				return 0;
			if (!obj_eq(a->u.dict.ents[i].val, b->u.dict.ents[i].val, loose))
				return 0;
		}
		return 1;
	case PS_REF:
		return a->u.ref.num == b->u.ref.num && a->u.ref.gen == b->u.ref.gen;
	case PS_STREAM:
		if (a->u.stm.off != b->u.stm.off || a->u.stm.len != b->u.stm.len)
			return 0;
		if ((a->u.stm.data == NULL) != (b->u.stm.data == NULL))
			return 0;
		if (a->u.stm.data && memcmp(a->u.stm.data, b->u.stm.data, a->u.stm.len) != 0)
			return 0;
		return obj_eq(a->u.stm.dict, b->u.stm.dict, loose);
	}
	return 0;
}

/* xorshift64*: deterministic test randomness */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static unsigned rndn(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/* ---- lexer helpers ---------------------------------------------------- */

START_TEST(test_lexer_helpers)
{
	static const char sp[] = {0, 9, 10, 12, 13, 32};
	static const char dl[] = "()<>[]{}/%";
	const uint8_t *b;
	size_t i, p;
	int64_t v;
	int c, nsp = 0, ndl = 0;

	for (i = 0; i < sizeof sp; i++)
		ck_assert(ps_is_space(sp[i]));
	for (i = 0; i < 10; i++)
		ck_assert(ps_is_delim(dl[i]));
	for (c = 0; c < 256; c++) {
		nsp += ps_is_space(c) != 0;
		ndl += ps_is_delim(c) != 0;
	}
	ck_assert_int_eq(nsp, 6);
	ck_assert_int_eq(ndl, 10);
	ck_assert(!ps_is_space(11));   /* VT is not PDF white space */
	ck_assert(!ps_is_delim('#'));

	b = (const uint8_t *)" \t% comment\r\n%x\n\f\0 7";
	ck_assert_uint_eq(ps_parse_skip_ws(b, 20, 0), 19);
	ck_assert_uint_eq(ps_parse_skip_ws(b, 5, 0), 5);      /* comment runs to the end */
	ck_assert_uint_eq(ps_parse_skip_ws(b, 20, 19), 19);

	b = (const uint8_t *)"0042x";
	p = 0;
	ck_assert_int_eq(ps_parse_uint(b, 5, &p, &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_uint_eq(p, 4);
	p = 4;
	ck_assert_int_eq(ps_parse_uint(b, 5, &p, &v), -1);
	ck_assert_uint_eq(p, 4);
	b = (const uint8_t *)"9223372036854775807 9223372036854775808 -1";
	p = 0;
	ck_assert_int_eq(ps_parse_uint(b, 43, &p, &v), 0);
	ck_assert(v == INT64_MAX);
	p = 20;
	ck_assert_int_eq(ps_parse_uint(b, 43, &p, &v), -1);
	ck_assert_uint_eq(p, 20);
	p = 40;
	ck_assert_int_eq(ps_parse_uint(b, 43, &p, &v), -1);  /* no sign allowed */
	p = 0;
	ck_assert_int_eq(ps_parse_uint(b, 3, &p, &v), 0);     /* stops at len */
	ck_assert_int_eq(v, 922);
}
END_TEST

/* ---- scalar tokens ---------------------------------------------------- */

START_TEST(test_scalars)
{
	ps_obj *o;
	size_t pos;
	int64_t i;
	double d;

	o = P("  % lead\n null ");
	ck_assert_int_eq(o->kind, PS_NULL);
	ps_obj_free(o);
	o = P("true]");
	ck_assert_int_eq(o->kind, PS_BOOL);
	ck_assert_int_eq(o->u.b, 1);
	ps_obj_free(o);
	o = P("false/");
	ck_assert_int_eq(o->kind, PS_BOOL);
	ck_assert_int_eq(o->u.b, 0);
	ps_obj_free(o);

	/* a complete keyword at the end of the window needs no more data */
	ck_assert_int_eq(parse_n("true", 4, &pos, &o), 0);
	ck_assert_uint_eq(pos, 4);
	ps_obj_free(o);

	o = P("-17 ]");
	ck_assert_int_eq(ps_obj_int(o, &i), 0);
	ck_assert_int_eq(i, -17);
	ps_obj_free(o);
	o = P("+17]");
	ck_assert_int_eq(o->u.i, 17);
	ps_obj_free(o);
	o = P("-0]");
	ck_assert_int_eq(o->kind, PS_INT);
	ck_assert_int_eq(o->u.i, 0);
	ps_obj_free(o);
	o = P("9223372036854775807]");
	ck_assert(o->u.i == INT64_MAX);
	ps_obj_free(o);
	o = P("-9223372036854775808]");
	ck_assert(o->u.i == INT64_MIN);
	ps_obj_free(o);
	o = P("000123]");
	ck_assert_int_eq(o->u.i, 123);
	ps_obj_free(o);
	expect_rc("9223372036854775808]", PDFSTAMP_E_FORMAT);
	expect_rc("-9223372036854775809]", PDFSTAMP_E_FORMAT);
	expect_rc("99999999999999999999999]", PDFSTAMP_E_FORMAT);

	o = P(".5]");
	ck_assert_int_eq(o->kind, PS_REAL);
	ck_assert(o->u.real.v == 0.5);
	ck_assert_str_eq(o->u.real.text, ".5");
	ck_assert_int_eq(ps_obj_int(o, &i), -1);
	ck_assert_int_eq(ps_obj_num(o, &d), 0);
	ck_assert(d == 0.5);
	ps_obj_free(o);
	o = P("-3.]");
	ck_assert(o->u.real.v == -3.0);
	ck_assert_str_eq(o->u.real.text, "-3.");
	ps_obj_free(o);
	o = P("+1.25]");
	ck_assert(o->u.real.v == 1.25);
	ck_assert_str_eq(o->u.real.text, "+1.25");
	ps_obj_free(o);
	o = P("-.002]");
	ck_assert(num_eq(o->u.real.v, -0.002));
	ps_obj_free(o);
	o = P("0.000000000000000000000000001234]");
	ck_assert(fabs(o->u.real.v - 1.234e-27) < 1e-36);
	ps_obj_free(o);
	o = P("123456789012345678901234.5]");   /* more than 19 significant digits */
	ck_assert(fabs(o->u.real.v / 1.234567890123456789e23 - 1) < 1e-12);
	ps_obj_free(o);
	o = P("3.14159265358979323846264338]");
	ck_assert(fabs(o->u.real.v - 3.14159265358979323846) < 1e-15);
	ps_obj_free(o);
	{
		/* beyond the double range */
		char big[420];

		big[0] = '1';
		memset(big + 1, '0', 400);
		memcpy(big + 401, ".0]", 4);
		expect_rc(big, PDFSTAMP_E_FORMAT);
		memcpy(big, "0.", 2);
		memset(big + 2, '0', 400);
		memcpy(big + 402, "1]", 3);
		o = P(big);
		ck_assert(o->kind == PS_REAL && o->u.real.v == 0.0);
		ps_obj_free(o);
	}

	expect_rc("1.2.3 ", PDFSTAMP_E_FORMAT);
	expect_rc("- ", PDFSTAMP_E_FORMAT);
	expect_rc("+ ", PDFSTAMP_E_FORMAT);
	expect_rc(". ", PDFSTAMP_E_FORMAT);
	expect_rc("-.", PS_E_NEEDMORE);
	expect_rc("--5 ", PDFSTAMP_E_FORMAT);
	expect_rc("5- ", PDFSTAMP_E_FORMAT);
	expect_rc("1e5 ", PDFSTAMP_E_FORMAT);
	expect_rc("12abc ", PDFSTAMP_E_FORMAT);
	expect_rc("truex ", PDFSTAMP_E_FORMAT);
	expect_rc("nul ", PDFSTAMP_E_FORMAT);
	expect_rc("NULL ", PDFSTAMP_E_FORMAT);
	expect_rc("obj ", PDFSTAMP_E_FORMAT);
	expect_rc("endobj ", PDFSTAMP_E_FORMAT);
	expect_rc("stream\n", PDFSTAMP_E_FORMAT);
	expect_rc("R ", PDFSTAMP_E_FORMAT);
	expect_rc("#x ", PDFSTAMP_E_FORMAT);
	expect_rc(")", PDFSTAMP_E_FORMAT);
	expect_rc("]", PDFSTAMP_E_FORMAT);
	expect_rc(">", PDFSTAMP_E_FORMAT);
	expect_rc("{", PDFSTAMP_E_FORMAT);
	expect_rc("}", PDFSTAMP_E_FORMAT);
	expect_rc("", PS_E_NEEDMORE);
	expect_rc("   % only a comment", PS_E_NEEDMORE);
	/* error messages name the problem and its offset */
	expect_rc("   1e5 ", PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "3-byte token"));
	ck_assert_ptr_null(strstr(pdfstamp_ctx_errmsg(ctx), "1e5")); /* never the bytes */
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "offset 3"));
	ck_assert_int_eq(pdfstamp_ctx_errcode(ctx), PDFSTAMP_E_FORMAT);
}
END_TEST

/* ---- strings ----------------------------------------------------------- */

static void check_str(const char *src, size_t srclen, const void *want, size_t wantlen, int hex)
{
	ps_obj *o = NULL;
	size_t pos;
	int rc = parse_n(src, srclen, &pos, &o);

	ck_assert_msg(rc == 0, "parse of string '%s' failed: %s", src, pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(o->kind, PS_STR);
	ck_assert_msg(o->u.str.len == wantlen && memcmp(o->u.str.p, want, wantlen) == 0,
	              "string '%s' decoded wrongly (len %zu)", src, o->u.str.len);
	ck_assert_int_eq(o->u.str.p[o->u.str.len], 0);
	ck_assert_int_eq(o->u.str.hex, hex);
	ck_assert_uint_eq(pos, srclen);
	ps_obj_free(o);
}

#define CHECK_STR(src, want, hex) check_str(src, sizeof src - 1, want, sizeof want - 1, hex)

START_TEST(test_strings)
{
	CHECK_STR("()", "", 0);
	CHECK_STR("(abc)", "abc", 0);
	CHECK_STR("(a(b)c)", "a(b)c", 0);
	CHECK_STR("(((x)))", "((x))", 0);
	CHECK_STR("(a\\)b)", "a)b", 0);
	CHECK_STR("(a\\(b)", "a(b", 0);
	CHECK_STR("(\\n\\r\\t\\b\\f\\\\)", "\n\r\t\b\f\\", 0);
	CHECK_STR("(\\101\\60\\0)", "A0\0", 0);
	CHECK_STR("(\\1011)", "A1", 0);         /* at most 3 octal digits */
	CHECK_STR("(\\0053)", "\0053", 0);
	CHECK_STR("(\\8)", "8", 0);              /* not octal: backslash ignored */
	CHECK_STR("(\\777)", "\377", 0);         /* high-order overflow ignored */
	CHECK_STR("(\\q\\%)", "q%", 0);          /* unknown escapes */
	CHECK_STR("(a\\\nb)", "ab", 0);          /* backslash-LF continuation */
	CHECK_STR("(a\\\rb)", "ab", 0);          /* backslash-CR */
	CHECK_STR("(a\\\r\nb)", "ab", 0);        /* backslash-CRLF */
	CHECK_STR("(a\rb)", "a\nb", 0);          /* CR -> LF */
	CHECK_STR("(a\r\nb)", "a\nb", 0);        /* CRLF -> LF */
	CHECK_STR("(a\n\rb)", "a\n\nb", 0);      /* LF CR is two ends of line */
	CHECK_STR("(a\n\nb)", "a\n\nb", 0);
	CHECK_STR("(%not a comment)", "%not a comment", 0);
	CHECK_STR("(\0\377)", "\0\377", 0);      /* raw bytes pass */
	CHECK_STR("<>", "", 1);
	CHECK_STR("<41 42\n43\t44>", "ABCD", 1);
	CHECK_STR("<aBcD>", "\xab\xcd", 1);
	CHECK_STR("<901FA>", "\x90\x1f\xa0", 1); /* odd: final digit followed by 0 */
	CHECK_STR("<7>", "\x70", 1);

	expect_rc("<4G>", PDFSTAMP_E_FORMAT);
	expect_rc("<41 42 )", PDFSTAMP_E_FORMAT);
	expect_rc("(abc", PS_E_NEEDMORE);
	expect_rc("(a(b)", PS_E_NEEDMORE);
	expect_rc("(a\\)", PS_E_NEEDMORE);
	expect_rc("(a\\", PS_E_NEEDMORE);
	expect_rc("<414", PS_E_NEEDMORE);
	expect_rc("<", PS_E_NEEDMORE);
}
END_TEST

/* ---- names ------------------------------------------------------------- */

START_TEST(test_names)
{
	ps_obj *o;

	o = P("/Type ");
	ck_assert_int_eq(o->kind, PS_NAME);
	ck_assert_str_eq(o->u.name.p, "Type");
	ck_assert_uint_eq(o->u.name.len, 4);
	ck_assert(ps_obj_is_name(o, "Type"));
	ck_assert(!ps_obj_is_name(o, "Typ"));
	ps_obj_free(o);

	o = P("/A#20B#23#2f#e9/next");
	ck_assert_str_eq(o->u.name.p, "A B#/\xe9");
	ck_assert_uint_eq(o->u.name.len, 6);
	ps_obj_free(o);

	o = P("/ ");         /* the empty name is legal */
	ck_assert_uint_eq(o->u.name.len, 0);
	ck_assert_str_eq(o->u.name.p, "");
	ps_obj_free(o);

	o = P("/a.b;c:-_~!*'\" ");
	ck_assert_str_eq(o->u.name.p, "a.b;c:-_~!*'\"");
	ps_obj_free(o);

	o = P("/Name(str)");  /* a delimiter ends the name */
	ck_assert_str_eq(o->u.name.p, "Name");
	ps_obj_free(o);

	expect_rc("/A#00B ", PDFSTAMP_E_FORMAT);
	expect_rc("/A#G1 ", PDFSTAMP_E_FORMAT);
	expect_rc("/A#4 ", PDFSTAMP_E_FORMAT);
	expect_rc("/A# ", PDFSTAMP_E_FORMAT);
	expect_rc("/Type", PS_E_NEEDMORE);  /* might be /TypeX */
	expect_rc("/A#4", PS_E_NEEDMORE);
	expect_rc("/", PS_E_NEEDMORE);
}
END_TEST


/* ---- references vs integers --------------------------------------------- */

START_TEST(test_refs)
{
	ps_obj *o, *v;
	int64_t i;
	size_t pos;

	o = P("[1 2 3 R 4 0 R 5 65535 R 2147483647 0 R 6%c\n7\rR]");
	ck_assert_uint_eq(ps_array_len(o), 6);
	ck_assert_int_eq(ps_obj_int(ps_array_get(o, 0), &i), 0);
	ck_assert_int_eq(i, 1);
	v = ps_array_get(o, 1);
	ck_assert_int_eq(v->kind, PS_REF);
	ck_assert_uint_eq(v->u.ref.num, 2);
	ck_assert_uint_eq(v->u.ref.gen, 3);
	v = ps_array_get(o, 2);
	ck_assert(v->kind == PS_REF && v->u.ref.num == 4 && v->u.ref.gen == 0);
	v = ps_array_get(o, 3);
	ck_assert(v->kind == PS_REF && v->u.ref.num == 5 && v->u.ref.gen == 65535);
	v = ps_array_get(o, 4);
	ck_assert(v->kind == PS_REF && v->u.ref.num == 2147483647u && v->u.ref.gen == 0);
	v = ps_array_get(o, 5);   /* comments are white space */
	ck_assert(v->kind == PS_REF && v->u.ref.num == 6 && v->u.ref.gen == 7);
	ck_assert_ptr_null(ps_array_get(o, 6));
	ps_obj_free(o);

	/* integers that are not references */
	o = P("[1 2 3 4.0 5 -6 7 +8 9 10/R]");
	ck_assert_uint_eq(ps_array_len(o), 11);
	for (pos = 0; pos < 11; pos++)
		ck_assert_int_ne(ps_array_get(o, pos)->kind, PS_REF);
	ps_obj_free(o);
	o = P("[1 2]");
	ck_assert_uint_eq(ps_array_len(o), 2);
	ck_assert_int_eq(ps_array_get(o, 1)->kind, PS_INT);
	ps_obj_free(o);

	/* at top level, "N G" followed by something else is just N */
	ck_assert_int_eq(parse_n("12 0 obj", 8, &pos, &o), 0);
	ck_assert_int_eq(o->kind, PS_INT);
	ck_assert_int_eq(o->u.i, 12);
	ck_assert_uint_eq(pos, 2);
	ps_obj_free(o);
	ck_assert_int_eq(parse_n("1 0 R", 5, &pos, &o), 0);
	ck_assert_int_eq(o->kind, PS_REF);
	ck_assert_uint_eq(pos, 5);
	ps_obj_free(o);
	ck_assert_int_eq(parse_n("1 0 Rx", 6, &pos, &o), 0);  /* not R: int 1 */
	ck_assert_int_eq(o->kind, PS_INT);
	ck_assert_uint_eq(pos, 1);
	ps_obj_free(o);

	/* an integer that touches the end might still become a reference */
	expect_rc("12", PS_E_NEEDMORE);
	expect_rc("12 ", PS_E_NEEDMORE);
	expect_rc("12 0", PS_E_NEEDMORE);
	expect_rc("12 0 ", PS_E_NEEDMORE);

	expect_rc("[-1 0 R]", PDFSTAMP_E_FORMAT);    /* "0 R" then bare R */
	expect_rc("[2147483648 0 R]", PDFSTAMP_E_FORMAT);
	expect_rc("[1 65536 R]", PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "65536"));
	/* an out-of-range pair that is not followed by R is fine */
	o = P("[2147483648 65536]");
	ck_assert_uint_eq(ps_array_len(o), 2);
	ps_obj_free(o);
}
END_TEST

/* ---- arrays and dictionaries ----------------------------------------------- */

START_TEST(test_containers)
{
	ps_obj *o, *v;
	int64_t i;

	o = P("[]");
	ck_assert_int_eq(o->kind, PS_ARRAY);
	ck_assert_uint_eq(ps_array_len(o), 0);
	ps_obj_free(o);
	o = P("[[][[]]()<>/N<<>>]");
	ck_assert_uint_eq(ps_array_len(o), 6);
	ck_assert_int_eq(ps_array_get(o, 0)->kind, PS_ARRAY);
	ck_assert_uint_eq(ps_array_len(ps_array_get(o, 1)), 1);
	ck_assert_int_eq(ps_array_get(o, 2)->kind, PS_STR);
	ck_assert_int_eq(ps_array_get(o, 3)->u.str.hex, 1);
	ck_assert(ps_obj_is_name(ps_array_get(o, 4), "N"));
	ck_assert_int_eq(ps_array_get(o, 5)->kind, PS_DICT);
	ps_obj_free(o);

	o = P("<</Type/Page/Kids[1 0 R 2 0 R]/Count 2/Res<</Font<</F1 5 0 R>>>>/Null null"
	      "/S(x)/H<00ff>/R 1.5/B true>>");
	ck_assert_int_eq(o->kind, PS_DICT);
	ck_assert_uint_eq(o->u.dict.len, 9);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
	ck_assert_uint_eq(ps_array_len(ps_dict_get(o, "Kids")), 2);
	ck_assert_int_eq(ps_obj_int(ps_dict_get(o, "Count"), &i), 0);
	ck_assert_int_eq(i, 2);
	v = ps_dict_get(ps_dict_get(ps_dict_get(o, "Res"), "Font"), "F1");
	ck_assert(v && v->kind == PS_REF && v->u.ref.num == 5);
	ck_assert_int_eq(ps_dict_get(o, "Null")->kind, PS_NULL);  /* kept */
	ck_assert_ptr_null(ps_dict_get(o, "Missing"));
	ck_assert_ptr_null(ps_dict_get(o, "type"));               /* case matters */
	ck_assert_str_eq(o->u.dict.ents[0].key, "Type");           /* file order */
	ck_assert_str_eq(o->u.dict.ents[8].key, "B");
	ps_obj_free(o);

	o = P("<< /A#20B 1 >>");
	ck_assert_str_eq(o->u.dict.ents[0].key, "A B");
	ps_obj_free(o);

	expect_rc("<< 1 2 >>", PDFSTAMP_E_FORMAT);
	expect_rc("<< (k) 2 >>", PDFSTAMP_E_FORMAT);
	expect_rc("<< /A >>", PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "key (1-byte token) has no value"));
	expect_rc("<< /A 1 /B >>", PDFSTAMP_E_FORMAT);
	expect_rc("<< /A 1 ]", PDFSTAMP_E_FORMAT);
	expect_rc("<< /A 1 > >", PDFSTAMP_E_FORMAT);
	expect_rc("[1 2 >>", PDFSTAMP_E_FORMAT);
	expect_rc("[1 2 )", PDFSTAMP_E_FORMAT);
	expect_rc("[1 {2} ]", PDFSTAMP_E_FORMAT);
	expect_rc("<< /A 1", PS_E_NEEDMORE);
	expect_rc("<< /A 1 >", PS_E_NEEDMORE);
	expect_rc("<< /A", PS_E_NEEDMORE);
	expect_rc("[1 [2", PS_E_NEEDMORE);
}
END_TEST

START_TEST(test_duplicate_keys)
{
	ps_obj *o;
	int64_t i;
	char src[1024];
	size_t n = 0, k;

	/* small dictionary: the last value wins at the first key's position */
	o = P("<< /A 1 /B 2 /A 3 /C 4 /A 5 >>");
	ck_assert_uint_eq(o->u.dict.len, 3);
	ck_assert_str_eq(o->u.dict.ents[0].key, "A");
	ck_assert_str_eq(o->u.dict.ents[1].key, "B");
	ck_assert_str_eq(o->u.dict.ents[2].key, "C");
	ck_assert_int_eq(ps_obj_int(ps_dict_get(o, "A"), &i), 0);
	ck_assert_int_eq(i, 5);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_ptr_nonnull(strstr(lastwarn, "duplicate key (1-byte token)"));
	ps_obj_free(o);

	/* large dictionary (sorted path): keys k0..k39, then k3 and k17 again */
	n += (size_t)snprintf(src + n, sizeof src - n, "<<");
	for (k = 0; k < 40; k++)
		n += (size_t)snprintf(src + n, sizeof src - n, " /k%zu %zu", k, k);
	n += (size_t)snprintf(src + n, sizeof src - n, " /k3 [(x)] /k17 300 /k3 103 >>");
	o = P(src);
	ck_assert_uint_eq(o->u.dict.len, 40);
	for (k = 0; k < 40; k++) {
		char key[8];

		snprintf(key, sizeof key, "k%zu", k);
		ck_assert_str_eq(o->u.dict.ents[k].key, key);
		ck_assert_int_eq(ps_obj_int(o->u.dict.ents[k].val, &i), 0);
		ck_assert_int_eq(i, k == 3 ? 103 : k == 17 ? 300 : (int64_t)k);
	}
	ck_assert_int_eq(nwarn, 2);
	ps_obj_free(o);

	/* no duplicates: no warning */
	o = P("<< /A 1 /a 2 /AA 3 >>");
	ck_assert_uint_eq(o->u.dict.len, 3);
	ck_assert_int_eq(nwarn, 2);
	ps_obj_free(o);
}
END_TEST

/* Builds "[" x n "]" x n, or the same with "<< /K " ... " >>". */
static char *nest(size_t n, int dict)
{
	const char *open = dict ? "<</K " : "[", *close = dict ? ">>" : "]";
	size_t lo = strlen(open), lc = strlen(close), i;
	char *s = malloc(n * (lo + lc) + 2), *p = s;

	ck_assert_ptr_nonnull(s);
	for (i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	*p++ = '1';
	for (i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p = 0;
	return s;
}

START_TEST(test_depth_limit)
{
	ps_obj *o;
	char *s;
	size_t d;

	s = nest(PS_MAX_DEPTH, 0);
	o = P(s);
	free(s);
	{
		ps_obj *x = o;

		for (d = 0; d < PS_MAX_DEPTH; d++) {
			ck_assert_int_eq(x->kind, PS_ARRAY);
			x = ps_array_get(x, 0);
		}
		ck_assert_int_eq(x->kind, PS_INT);
	}
	ps_obj_free(o);

	s = nest(PS_MAX_DEPTH + 1, 0);
	expect_rc(s, PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "nested"));
	free(s);

	s = nest(PS_MAX_DEPTH, 1);
	o = P(s);
	free(s);
	ps_obj_free(o);
	s = nest(PS_MAX_DEPTH + 1, 1);
	expect_rc(s, PDFSTAMP_E_FORMAT);
	free(s);

	/* very deep and cut off: the limit is reported, not NEEDMORE, and the
	 * recursion stays bounded */
	s = malloc(100001);
	memset(s, '[', 100000);
	s[100000] = 0;
	expect_rc(s, PDFSTAMP_E_FORMAT);
	free(s);
}
END_TEST

/* ---- truncation: every prefix ------------------------------------------------ */

static const char *const samples[] = {
	"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612.5 -792] /Contents [4 0 R 5 0 R]"
	" /Name (a\\(b\\)\\\\c\\101\\r\\\n) /H <4142 43> /N#20x /K /K2 true /L null /M false >>",
	"[1 2 R 3 4 5 0 R (x) <00> /a [[[]]] -7 +.5 % comment\n 6]",
	"(nested (parens) and \\) escapes \\0 \\12 \\123 \r\n end)",
	"<0 1 2 3 4 5 6 7 8 9 a b c d e f>",
	"1 0 R",
	"true",
	"<< >>",
	"[/Name#23x 1 0 R]",
};

START_TEST(test_truncation_prefixes)
{
	size_t si, k, pos;

	for (si = 0; si < sizeof samples / sizeof samples[0]; si++) {
		const char *s = samples[si];
		size_t n = strlen(s);
		ps_obj *full = NULL, *o;
		int rc;

		rc = parse_n(s, n, &pos, &full);
		ck_assert_msg(rc == 0, "sample %zu: %s", si, pdfstamp_ctx_errmsg(ctx));
		ck_assert_uint_eq(pos, n);
		for (k = 0; k < n; k++) {
			o = NULL;
			rc = parse_n(s, k, &pos, &o);
			ck_assert_msg(rc == PS_E_NEEDMORE || rc == 0,
			              "sample %zu prefix %zu: rc %d (%s)", si, k, rc,
			              pdfstamp_ctx_errmsg(ctx));
			if (rc == 0) {
				ck_assert_uint_le(pos, k);
				ps_obj_free(o);
			} else {
				ck_assert_ptr_null(o);
				ck_assert_int_eq(pdfstamp_ctx_errcode(ctx), PS_E_NEEDMORE);
			}
		}
		ps_obj_free(full);
	}
}
END_TEST

/* ---- indirect objects ---------------------------------------------------------- */

static int parse_ind_n(const char *s, size_t n, int64_t base, uint32_t *num, uint16_t *gen,
                       ps_obj **out)
{
	uint8_t *b = malloc(n ? n : 1);
	int rc;

	ck_assert_ptr_nonnull(b);
	if (n)
		memcpy(b, s, n);
	rc = ps_parse_indirect(ctx, b, n, 0, base, num, gen, out);
	free(b);
	return rc;
}

static int parse_ind(const char *s, int64_t base, uint32_t *num, uint16_t *gen, ps_obj **out)
{
	return parse_ind_n(s, strlen(s), base, num, gen, out);
}

START_TEST(test_messages_never_echo_bytes)
{
	/* Object-stream members are decrypted content: a parse error names the
	 * offset and the token's length, never its bytes (issue 11). */
	static const char *const bad[] = {
		"[ SECRETKW ]", "[ 12SECRET3 ]", "<< /K >>", "[ 1.0e99999SECRET ]",
		"<< /SECRETKEY >>", "[ 99999999999999999999999SECRET ]",
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t pos = 0;
		ps_obj *o = NULL;
		int rc = ps_parse_obj(ctx, (const uint8_t *)bad[i], strlen(bad[i]), &pos, &o);
		const char *m = pdfstamp_ctx_errmsg(ctx);
		ck_assert_msg(rc == PDFSTAMP_E_FORMAT, "%s: rc %d", bad[i], rc);
		ck_assert_msg(strstr(m, "SECRET") == NULL, "%s echoed: %s", bad[i], m);
		ck_assert_msg(strstr(m, "offset") != NULL, "%s: no offset: %s", bad[i], m);
		ps_obj_free(o);
	}
}
END_TEST

START_TEST(test_indirect)
{
	static const char s1[] = "12 3 obj\n<< /Length 5 >>\nstream\r\nhello\nendstream\nendobj\n";
	static const char s2[] = "7 0 obj << /Length 5 >> stream\nhello";
	static const char s3[] = "7 0 obj << /Length 5 >> stream\rhello";
	uint32_t num;
	uint16_t gen;
	ps_obj *o;
	int64_t i;

	ck_assert_int_eq(parse_ind(s1, 1000, &num, &gen, &o), 0);
	ck_assert_uint_eq(num, 12);
	ck_assert_uint_eq(gen, 3);
	ck_assert_int_eq(o->kind, PS_STREAM);
	ck_assert_int_eq(o->u.stm.off, 1000 + (int64_t)(strstr(s1, "hello") - s1));
	ck_assert_ptr_null(o->u.stm.data);
	ck_assert_int_eq(ps_obj_int(ps_dict_get(o, "Length"), &i), 0);  /* via the stream */
	ck_assert_int_eq(i, 5);
	ps_obj_free(o);
	ck_assert_int_eq(nwarn, 0);

	ck_assert_int_eq(parse_ind(s2, 0, &num, &gen, &o), 0);
	ck_assert_int_eq(o->u.stm.off, (int64_t)(strstr(s2, "hello") - s2));
	ps_obj_free(o);
	ck_assert_int_eq(nwarn, 0);

	ck_assert_int_eq(parse_ind(s3, 0, &num, &gen, &o), 0);    /* lone CR: warning */
	ck_assert_int_eq(o->u.stm.off, (int64_t)(strstr(s3, "hello") - s3));
	ps_obj_free(o);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_ptr_nonnull(strstr(lastwarn, "CR"));

	/* without endobj */
	ck_assert_int_eq(parse_ind("5 0 obj [1 2 3]", 0, &num, &gen, &o), 0);
	ck_assert_uint_eq(num, 5);
	ck_assert_uint_eq(ps_array_len(o), 3);
	ps_obj_free(o);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_int_eq(parse_ind("5 0 obj (s)\n6 0 obj", 0, &num, &gen, &o), 0);
	ck_assert_int_eq(o->kind, PS_STR);
	ps_obj_free(o);
	ck_assert_int_eq(nwarn, 2);   /* another token where endobj should be */
	ck_assert_int_eq(parse_ind("5 0 obj << /A 1 >>\n6 0 obj", 0, &num, &gen, &o), 0);
	ck_assert_int_eq(o->kind, PS_DICT);
	ps_obj_free(o);
	ck_assert_int_eq(nwarn, 3);
	ck_assert_int_eq(parse_ind("  5 0 obj 42 endobj", 0, &num, &gen, &o), 0);
	ck_assert_int_eq(o->u.i, 42);
	ps_obj_free(o);
	ck_assert_int_eq(parse_ind("5 0 obj 1 0 R endobj", 0, &num, &gen, &o), 0);
	ck_assert_int_eq(o->kind, PS_REF);
	ps_obj_free(o);
	ck_assert_int_eq(parse_ind("5 0 obj<<>>endobj", 0, &num, &gen, &o), 0);
	ps_obj_free(o);
	ck_assert_int_eq(parse_ind("5 0 obj null endobj", 0, &num, &gen, &o), 0);
	ck_assert_int_eq(o->kind, PS_NULL);
	ps_obj_free(o);
	ck_assert_int_eq(parse_ind("2147483647 65535 obj 1 endobj", 0, &num, &gen, &o), 0);
	ck_assert_uint_eq(num, 2147483647u);
	ck_assert_uint_eq(gen, 65535);
	ps_obj_free(o);
	ck_assert_int_eq(nwarn, 3);

	/* malformed */
	o = (ps_obj *)1;
	ck_assert_int_eq(parse_ind("5 0 obj << >> stream hello", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(parse_ind("5 0 obj << >> streamx\n", 0, &num, &gen, &o), 0);  /* missing endobj */
	ps_obj_free(o);
	ck_assert_int_eq(parse_ind("5 0 obj [1] stream\n", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("5 0 ob [1] endobj", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("5 x obj 1 endobj", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("-5 0 obj 1 endobj", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("2147483648 0 obj 1 endobj", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("5 65536 obj 1 endobj", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("99999999999999999999 0 obj", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("5 0 obj endobj", 0, &num, &gen, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(parse_ind("5 0 obj << /A 1 ] >> endobj", 5000, &num, &gen, &o),
	                 PDFSTAMP_E_FORMAT);
	/* the message reports the base-relative offset of the ']' */
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "offset 5016"));
	ck_assert_ptr_null(o);

	/* cut off */
	ck_assert_int_eq(parse_ind("5 0 obj << /A 1 >>", 0, &num, &gen, &o), PS_E_NEEDMORE);
	ck_assert_int_eq(parse_ind("5 0 obj << /A 1 >> stream\r", 0, &num, &gen, &o), PS_E_NEEDMORE);
	ck_assert_int_eq(parse_ind("5 0 obj << /A 1 >> stream", 0, &num, &gen, &o), PS_E_NEEDMORE);
	ck_assert_int_eq(parse_ind("5 0 obj << /A 1 >> endob", 0, &num, &gen, &o), PS_E_NEEDMORE);
	ck_assert_int_eq(parse_ind("5 0 o", 0, &num, &gen, &o), PS_E_NEEDMORE);
	ck_assert_int_eq(parse_ind("5", 0, &num, &gen, &o), PS_E_NEEDMORE);
	ck_assert_int_eq(parse_ind("", 0, &num, &gen, &o), PS_E_NEEDMORE);
}
END_TEST

START_TEST(test_indirect_prefixes)
{
	static const char *const ind[] = {
		"12 0 obj\n<< /Length 5 /F [1 2 R] /S (x\\)) >>\nstream\r\nhello\nendstream\nendobj\n",
		"7 0 obj\n[1 2 (x) 3 0 R]\nendobj\n",
		"8 1 obj <</A<</B[<414>]>>>>endobj",
		"9 0 obj 3.25 endobj",
	};
	size_t si, k;

	for (si = 0; si < sizeof ind / sizeof ind[0]; si++) {
		const char *s = ind[si];
		size_t n = strlen(s);
		uint32_t num, num2;
		uint16_t gen, gen2;
		ps_obj *full, *o;
		int rc;

		ck_assert_int_eq(parse_ind_n(s, n, 100, &num, &gen, &full), 0);
		for (k = 0; k < n; k++) {
			o = NULL;
			rc = parse_ind_n(s, k, 100, &num2, &gen2, &o);
			ck_assert_msg(rc == PS_E_NEEDMORE || rc == 0,
			              "indirect %zu prefix %zu: rc %d (%s)", si, k, rc, pdfstamp_ctx_errmsg(ctx));
			if (rc == 0) {
				/* success on a prefix must give the very same object */
				ck_assert(num2 == num && gen2 == gen);
				ck_assert_msg(obj_eq(o, full, 0), "indirect %zu prefix %zu differs", si, k);
				ps_obj_free(o);
			}
		}
		ps_obj_free(full);
	}
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

/* ---- serializer ---------------------------------------------------------------- */

static void check_ser(ps_obj *o, const char *want)
{
	char *s;

	ck_assert_ptr_nonnull(o);
	s = ser(o);
	ck_assert_str_eq(s, want);
	free(s);
	ps_obj_free(o);
}

/* ps_vec_sort (buf.c) against qsort: arrays of 0 to 70,000 elements made of
 * 1 to 5,000 ascending runs (ties and descending steps included), for
 * two element sizes; past 64 runs their starts are kept on the heap, and
 * 70,000 16-byte elements merge through a buffer in bulk (over 1 MB). */
struct sort16 {
	uint64_t key, tag;
};

static int cmp_sort16(const void *a, const void *b)
{
	const struct sort16 *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

static int cmp_sortu32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_sort_runs)
{
	static const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 5000, 70000};
	static const size_t runs[] = {1, 2, 3, 10, 63, 64, 65, 200, 5000};
	uint64_t rng = 88172645463325252ull;
	size_t si, ri, i;

	for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (ri = 0; ri < sizeof runs / sizeof *runs; ri++) {
			size_t n = sizes[si], nr = runs[ri];
			struct sort16 *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
			uint32_t *u = malloc((n ? n : 1) * sizeof *u), *v = malloc((n ? n : 1) * sizeof *v);
			uint64_t k = 0;

			ck_assert(a && b && u && v);
			for (i = 0; i < n; i++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				if (i % (n / nr + 1) == 0)
					k = rng % 1000; /* a new run starts low */
				else
					k += rng % 3; /* ascending, with ties */
				a[i].key = k;
				a[i].tag = rng % 7;
				u[i] = (uint32_t)k;
			}
			memcpy(b, a, n * sizeof *a);
			memcpy(v, u, n * sizeof *u);
			ps_vec_sort(a, n, sizeof *a, cmp_sort16);
			qsort(b, n, sizeof *b, cmp_sort16);
			ps_vec_sort(u, n, sizeof *u, cmp_sortu32);
			qsort(v, n, sizeof *v, cmp_sortu32);
			ck_assert_msg(memcmp(a, b, n * sizeof *a) == 0, "%zu elements, %zu runs", n, nr);
			ck_assert_msg(memcmp(u, v, n * sizeof *u) == 0, "%zu words, %zu runs", n, nr);
			free(a);
			free(b);
			free(u);
			free(v);
		}
}
END_TEST

/* The parser's fast paths (parse.c): items and entries collected on the
 * stack and handed over in one allocation up to 16, pushed beyond; names
 * and real texts in their object's allocation (obj.c note 7); the inline
 * ps_buf appends (ps.h). */
START_TEST(test_fast_paths)
{
	static const size_t counts[] = {0, 1, 4, 5, 15, 16, 17, 33};
	ps_buf b = PS_BUF_INIT;
	size_t i, k;
	ps_obj *o, *c;
	char *s;

	for (k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		char in[600], want[600];
		size_t n = counts[k], wn = 0, inn = 0;

		/* an array of N items; a dictionary of N keys whose key 0 comes
		 * again last (the last value wins, in the first one's place) */
		inn += (size_t)snprintf(in + inn, sizeof in - inn, "[");
		wn += (size_t)snprintf(want + wn, sizeof want - wn, "[");
		for (i = 0; i < n; i++) {
			inn += (size_t)snprintf(in + inn, sizeof in - inn, " %zu", i);
			wn += (size_t)snprintf(want + wn, sizeof want - wn, "%s%zu", i ? " " : "", i);
		}
		snprintf(in + inn, sizeof in - inn, "]");
		snprintf(want + wn, sizeof want - wn, "]");
		o = P(in);
		ck_assert_uint_eq(ps_array_len(o), n);
		/* the capacity given is the one ps_vec_grow assumes: push, del */
		ck_assert_int_eq(ps_array_push(o, ps_new_int(99)), 0);
		ck_assert_int_eq(ps_array_del(o, n), 0);
		s = ser(o);
		ck_assert_str_eq(s, want);
		free(s);
		ps_obj_free(o);

		inn = 0;
		wn = 0;
		inn += (size_t)snprintf(in + inn, sizeof in - inn, "<<");
		wn += (size_t)snprintf(want + wn, sizeof want - wn, "<<");
		for (i = 0; i < n; i++) {
			inn += (size_t)snprintf(in + inn, sizeof in - inn, "/K%zu %zu", i, i);
			wn += (size_t)snprintf(want + wn, sizeof want - wn, " /K%zu %zu", i, i ? i : (size_t)777);
		}
		if (n)
			inn += (size_t)snprintf(in + inn, sizeof in - inn, "/K0 777");
		snprintf(in + inn, sizeof in - inn, ">>");
		snprintf(want + wn, sizeof want - wn, " >>");
		o = P(in);
		ck_assert_int_eq(ps_dict_put_int(o, "New", 1), 0);
		ck_assert_int_eq(ps_dict_del(o, "New"), 0);
		s = ser(o);
		ck_assert_str_eq(s, want);
		free(s);
		ps_obj_free(o);
	}
	/* a failure after the stack items: freed (the sanitizers and
	 * check_alloc watch the leaks) */
	expect_rc("[1 2 3 /A#0 ]", PDFSTAMP_E_FORMAT);
	expect_rc("<</A 1 /B (x) /C /D#00 >>", PDFSTAMP_E_FORMAT);

	/* names and reals in their object's allocation, copied and freed */
	o = P("[/A#20B#2f 1.50 -.0 /Type /Sig]");
	c = ps_obj_copy(o);
	ck_assert(ps_obj_equal(o, c, 0));
	ck_assert_str_eq(ps_array_get(o, 0)->u.name.p, "A B/");
	ck_assert_uint_eq(ps_array_get(o, 0)->u.name.len, 4);
	ck_assert_str_eq(ps_array_get(c, 1)->u.real.text, "1.50");
	check_ser(c, "[/A#20B#2F 1.50 -.0 /Type /Sig]");
	ps_obj_free(o);
	check_ser(ps_new_name("Odd#Name"), "/Odd#23Name");

	/* inline appends: exact fit, growth, and the sticky oom flag */
	ps_serialize_obj_header(&b, 4294967295u, 65535);
	ck_assert_uint_eq(b.len, 21);
	ck_assert(memcmp(b.data, "4294967295 65535 obj\n", 21) == 0);
	while (b.len < b.cap)
		ps_buf_putc(&b, 'x');
	ps_buf_append(&b, "yz", 2);
	ck_assert_uint_eq(b.data[b.len - 1], 'z');
	ck_assert_uint_eq(b.data[b.len - 2], 'y');
	b.oom = 1;
	i = b.len;
	ps_buf_putc(&b, 'q');
	ps_buf_append(&b, "q", 1);
	ck_assert_uint_eq(b.len, i);
	ps_buf_free(&b);
}
END_TEST

/* Dictionary keys shared for the common names (obj.c note 8) and
 * ps_str_set in place: the same bytes either way, freed either way (the
 * sanitizers and check_alloc watch the frees). */
START_TEST(test_shared_keys)
{
	/* one key of every length the table has (1..17 bytes): a group's
	 * offset off by one would give a key that is longer than its name */
	static const char *const common[] = {
		"A", "W", "ID", "CS", "URI", "Type", "Kids", "Width", "Length", "Subtype", "MediaBox",
		"Resources", "ColorSpace", "BaseVersion", "CreationDate", "CIDSystemInfo", "ContentsLength",
		"DescendantFonts", "BitsPerComponent", "ViewerPreferences", "ParentTreeNextKey",
	};
	static const char *const other[] = {
		"B", "Typ", "Typex", "type", "Lengt", "ViewerPreferencesX", "Foo", "K0",
	};
	ps_obj *o, *c, *s;
	char *k, *k2, name[80];
	size_t i;
	uint8_t *p;

	for (i = 0; i < sizeof common / sizeof common[0]; i++) {
		k = ps_dict_key_dup(common[i], strlen(common[i]));
		k2 = ps_dict_key_dup(common[i], strlen(common[i]));
		ck_assert_ptr_nonnull(k);
		ck_assert_msg(ps_dict_key_is_shared(k), "%s not shared", common[i]);
		ck_assert_ptr_eq(k, k2);
		ck_assert_str_eq(k, common[i]);
		ps_dict_key_free(k);
		ps_dict_key_free(k2);
		ck_assert_str_eq(k, common[i]);     /* still there: never freed */
	}
	for (i = 0; i < sizeof other / sizeof other[0]; i++) {
		k = ps_dict_key_dup(other[i], strlen(other[i]));
		ck_assert_ptr_nonnull(k);
		ck_assert(!ps_dict_key_is_shared(k));
		ck_assert_str_eq(k, other[i]);
		ps_dict_key_free(k);
	}
	/* a prefix of a common name given with its length only */
	k = ps_dict_key_dup("Typeface", 4);
	ck_assert(ps_dict_key_is_shared(k));
	ck_assert_str_eq(k, "Type");
	ps_dict_key_free(NULL);

	/* parsed: shared and own keys side by side, an escaped spelling of a
	 * common name, a duplicate shared key dropped, a key longer than the
	 * parser's stack buffer; then copy, put, del and free */
	memset(name, 'L', 70);
	name[70] = 0;
	{
		char in[200];

		snprintf(in, sizeof in, "<</Ty#70e /XObject /Foo 1 /Length 5 /%s 2 /Type /X /Width 3>>", name);
		o = P(in);
	}
	ck_assert_int_eq(nwarn, 1);     /* the duplicate /Type */
	ck_assert_uint_eq(o->u.dict.len, 5);
	ck_assert_str_eq(o->u.dict.ents[0].key, "Type");
	ck_assert(ps_dict_key_is_shared(o->u.dict.ents[0].key));
	ck_assert(!ps_dict_key_is_shared(o->u.dict.ents[1].key));
	ck_assert(!ps_dict_key_is_shared(o->u.dict.ents[3].key));
	ck_assert_str_eq(o->u.dict.ents[3].key, name);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "X"));
	ck_assert_int_eq(ps_dict_put_int(o, "Height", 4), 0);
	ck_assert(ps_dict_key_is_shared(o->u.dict.ents[5].key));
	ck_assert_int_eq(ps_dict_put_int(o, "Bar", 6), 0);
	ck_assert(!ps_dict_key_is_shared(o->u.dict.ents[6].key));
	c = ps_obj_copy(o);
	ck_assert(ps_obj_equal(o, c, 0));
	ck_assert_ptr_eq(c->u.dict.ents[0].key, o->u.dict.ents[0].key);
	ck_assert_ptr_ne(c->u.dict.ents[1].key, o->u.dict.ents[1].key);
	ck_assert_int_eq(ps_dict_del(o, "Type"), 0);
	ck_assert_int_eq(ps_dict_del(o, "Foo"), 0);
	ck_assert_int_eq(ps_dict_del(o, name), 0);
	check_ser(o, "<< /Length 5 /Width 3 /Height 4 /Bar 6 >>");
	ps_obj_free(c);
	expect_rc("<</Type /A /Length (x) /D#00 1>>", PDFSTAMP_E_FORMAT);
	expect_rc("<</Type /A /Length", PS_E_NEEDMORE);

	/* ps_str_set: in place when not longer (also from its own bytes),
	 * a new allocation when longer */
	s = ps_new_str("0123456789", 10);
	ck_assert_ptr_nonnull(s);
	p = s->u.str.p;
	ck_assert_int_eq(ps_str_set(s, s->u.str.p + 2, 6), 0);
	ck_assert_ptr_eq(s->u.str.p, p);
	ck_assert_uint_eq(s->u.str.len, 6);
	ck_assert(memcmp(s->u.str.p, "234567", 7) == 0);   /* with its NUL */
	ck_assert_int_eq(ps_str_set(s, "abcdef", 6), 0);
	ck_assert_ptr_eq(s->u.str.p, p);
	ck_assert_int_eq(ps_str_set(s, NULL, 0), 0);
	ck_assert_uint_eq(s->u.str.len, 0);
	ck_assert_uint_eq(s->u.str.p[0], 0);
	ck_assert_int_eq(ps_str_set(s, "a longer string", 15), 0);
	ck_assert_str_eq((const char *)s->u.str.p, "a longer string");
	ck_assert_uint_eq(s->u.str.len, 15);
	ps_obj_free(s);
}
END_TEST

/* The arena (obj.c note 9): the same objects as from malloc, changed
 * through every call that replaces or grows a part (the parts move out
 * to malloc), freed, and the arena reset and used again; under ASan a
 * tree used after the reset would show. */
/* ps_arena_reset keeps ARENA_KEEP chunks (1 MB) and gives back the rest:
 * a tree of 200,000 strings (~10 MB of arena) between small ones, the
 * arena reset in between, each tree the same as the malloc'd parse (and
 * ASan, in the sanitizer build, sees every chunk given back or reused). */
START_TEST(test_arena_keep)
{
	ps_arena *ar = ps_arena_new();
	ps_buf big = PS_BUF_INIT;
	const char *small = "12 0 obj\n<< /A [1 2 (x)] /B (yz) >>\nendobj\n";
	size_t i, k;

	ck_assert_ptr_nonnull(ar);
	ps_buf_puts(&big, "11 0 obj\n[");
	for (i = 0; i < 200000; i++)
		ps_buf_printf(&big, "(s%zu) ", i);
	ps_buf_puts(&big, "]\nendobj\n");
	ck_assert(!big.oom);
	for (k = 0; k < 5; k++) {
		const uint8_t *src = k % 2 ? (const uint8_t *)small : big.data;
		size_t n = k % 2 ? strlen(small) : big.len;
		ps_obj *a = NULL, *m = NULL;
		uint32_t na, nm;
		uint16_t ga, gm;
		char *sa, *sm;

		ck_assert_int_eq(ps_parse_indirect(ctx, src, n, 0, 0, &nm, &gm, &m), 0);
		ck_assert_int_eq(ps_parse_indirect_in(ctx, ar, src, n, 0, 0, &na, &ga, &a), 0);
		ck_assert_uint_eq(na, nm);
		sa = ser(a);
		sm = ser(m);
		ck_assert_str_eq(sa, sm);
		free(sa);
		free(sm);
		if (k % 2 == 0)
			ck_assert_uint_eq(ps_array_len(a), 200000);
		ps_obj_free(a);
		ps_obj_free(m);
		ps_arena_reset(ar);
	}
	ps_buf_free(&big);
	ps_arena_free(ar);
}
END_TEST

START_TEST(test_arena)
{
	static const char *const src[] = {
		"7 0 obj\n<< /Type /XObject /Subtype /Image /W [1 2 3] /S (abc) /H <414243> /N null /B true"
		" /F false /R 1.50 /Ref 12 0 R /Type /Dup /K#20 [[] << >> (x)] >>\nendobj\n",
		"8 0 obj\n[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 (s) /N]\nendobj\n",
		"9 0 obj\n<< /Length 3 >>\nstream\nabc\nendstream\nendobj\n",
		"10 0 obj\n(a string (nested) \\n)\nendobj\n",
	};
	ps_arena *ar = ps_arena_new();
	size_t i, k;

	ck_assert_ptr_nonnull(ar);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < sizeof src / sizeof src[0]; i++) {
			ps_obj *a = NULL, *m = NULL, *d, *c;
			uint32_t na, nm;
			uint16_t ga, gm;
			char *sa, *sm;
			size_t n = strlen(src[i]);

			nwarn = 0;
			ck_assert_int_eq(ps_parse_indirect(ctx, (const uint8_t *)src[i], n, 0, 0, &nm, &gm, &m), 0);
			ck_assert_int_eq(ps_parse_indirect_in(ctx, ar, (const uint8_t *)src[i], n, 0, 0, &na, &ga, &a), 0);
			ck_assert_int_eq(nwarn, i == 0 ? 2 : 0);  /* the duplicate /Type, once per parse */
			ck_assert_uint_eq(na, nm);
			ck_assert_uint_eq(ga, gm);
			sa = ser(a);
			sm = ser(m);
			ck_assert_str_eq(sa, sm);
			free(sa);
			free(sm);
			ck_assert(ps_obj_equal(a, m, 0));
			c = ps_obj_copy(a);
			ck_assert(ps_obj_equal(c, m, 0));
			ps_obj_free(c);
			/* change both the same way, compare again */
			d = a->kind == PS_STREAM ? a->u.stm.dict : a;
			ck_assert_int_eq(ps_dict_put_int(a, "Length", 99) == 0, d->kind == PS_DICT);
			ps_dict_put_int(m, "Length", 99);
			ps_dict_put_str(a, "New", "0123456789abcdef0123", 20);
			ps_dict_put_str(m, "New", "0123456789abcdef0123", 20);
			ps_dict_del(a, "Subtype");
			ps_dict_del(m, "Subtype");
			if (ps_dict_get(a, "W")) {
				ck_assert_int_eq(ps_array_push(ps_dict_get(a, "W"), ps_new_int(4)), 0);
				ck_assert_int_eq(ps_array_push(ps_dict_get(m, "W"), ps_new_int(4)), 0);
				ck_assert_int_eq(ps_array_del(ps_dict_get(a, "W"), 0), 0);
				ck_assert_int_eq(ps_array_del(ps_dict_get(m, "W"), 0), 0);
				/* strings: longer (out of the arena), then shorter (in place) */
				ck_assert_int_eq(ps_str_set(ps_dict_get(a, "S"), "a much longer string", 20), 0);
				ck_assert_int_eq(ps_str_set(ps_dict_get(m, "S"), "a much longer string", 20), 0);
				ck_assert_int_eq(ps_str_set(ps_dict_get(a, "H"), "Z", 1), 0);
				ck_assert_int_eq(ps_str_set(ps_dict_get(m, "H"), "Z", 1), 0);
			}
			if (a->kind == PS_ARRAY) {
				ck_assert_int_eq(ps_array_push(a, ps_new_name("More")), 0);
				ck_assert_int_eq(ps_array_push(m, ps_new_name("More")), 0);
				ck_assert_int_eq(ps_array_del(a, 3), 0);
				ck_assert_int_eq(ps_array_del(m, 3), 0);
			}
			if (a->kind == PS_STR) {
				ck_assert_int_eq(ps_str_set(a, a->u.str.p + 2, 3), 0);
				ck_assert_int_eq(ps_str_set(m, m->u.str.p + 2, 3), 0);
			}
			sa = ser(a);
			sm = ser(m);
			ck_assert_str_eq(sa, sm);
			free(sa);
			free(sm);
			ps_obj_free(a);
			ps_obj_free(m);
		}
		/* errors: the same code and message, nothing left behind */
		{
			const char *bad = "3 0 obj\n<< /A [1 2 (x) /B#0 ] >>\nendobj\n";
			char msg[256];
			ps_obj *o = NULL;
			uint32_t num;
			uint16_t gen;

			ck_assert_int_eq(ps_parse_indirect(ctx, (const uint8_t *)bad, strlen(bad), 0, 0, &num, &gen, &o),
			                 PDFSTAMP_E_FORMAT);
			snprintf(msg, sizeof msg, "%s", pdfstamp_ctx_errmsg(ctx));
			ck_assert_int_eq(ps_parse_indirect_in(ctx, ar, (const uint8_t *)bad, strlen(bad), 0, 0, &num, &gen, &o),
			                 PDFSTAMP_E_FORMAT);
			ck_assert_ptr_null(o);
			ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), msg);
		}
		ps_arena_reset(ar);
	}
	ps_arena_free(ar);
	ps_arena_free(NULL);
	ps_arena_reset(NULL);
}
END_TEST

START_TEST(test_serialize_scalars)
{
	static const uint8_t bin[] = {'a', '(', ')', '\\', '\r', '\n', '\t', '\b', '\f', 0, 1,
	                              0x7f, 0x80, 0xff, '7', 0};
	ps_obj *o;

	{
		char *t = ser(NULL);

		ck_assert_str_eq(t, "null");
		free(t);
	}
	check_ser(ps_new_null(), "null");
	check_ser(ps_new_bool(1), "true");
	check_ser(ps_new_bool(7), "true");
	check_ser(ps_new_bool(0), "false");
	check_ser(ps_new_int(0), "0");
	check_ser(ps_new_int(-42), "-42");
	check_ser(ps_new_int(INT64_MAX), "9223372036854775807");
	check_ser(ps_new_int(INT64_MIN), "-9223372036854775808");
	check_ser(ps_new_real(0.5), "0.5");
	check_ser(ps_new_real(-2.25), "-2.25");
	check_ser(ps_new_real(2.0), "2");
	check_ser(ps_new_real(1.0 / 3), "0.333333");
	check_ser(ps_new_real(2.0 / 3), "0.666667");
	check_ser(ps_new_real(-0.0), "0");
	check_ser(ps_new_real(-1e-9), "0");
	check_ser(ps_new_real(0.0000005), "0.000001");
	check_ser(ps_new_real(612.1), "612.1");
	check_ser(ps_new_real(1e15), "1000000000000000");
	check_ser(ps_new_real(-123456789.125), "-123456789.125");
	check_ser(ps_new_real(1e300 * 1e300), "0");   /* infinity */
	check_ser(ps_new_real(0.1 + 0.2), "0.3");
	check_ser(ps_new_ref(12, 0), "12 0 R");
	check_ser(ps_new_ref(4294967295u, 65535), "4294967295 65535 R");

	/* a parsed real is written back verbatim */
	o = P("[+001.500]");
	check_ser(o, "[+001.500]");

	check_ser(ps_new_name("Type"), "/Type");
	check_ser(ps_new_name(""), "/");
	check_ser(ps_new_name("A B#C/D(E)F<G>H[I]J{K}L%M\x01\x7f\x80\xff~!"),
	          "/A#20B#23C#2FD#28E#29F#3CG#3EH#5BI#5DJ#7BK#7DL#25M#01#7F#80#FF~!");

	check_ser(ps_new_str("", 0), "()");
	check_ser(ps_new_str(bin, sizeof bin), "(a\\(\\)\\\\\\r\\n\\t\\b\\f\\000\\001\\177\\200\\3777\\000)");
	o = ps_new_str("\x01\xab", 2);
	o->u.str.hex = 1;
	check_ser(o, "<01AB>");
	o = ps_new_str("", 0);
	o->u.str.hex = 1;
	check_ser(o, "<>");
}
END_TEST

START_TEST(test_serialize_containers)
{
	ps_obj *d, *a, *s;

	d = ps_new_dict();
	ck_assert_int_eq(ps_dict_put(d, "Type", ps_new_name("Annot")), 0);
	a = ps_new_array();
	ck_assert_int_eq(ps_array_push(a, ps_new_int(0)), 0);
	ck_assert_int_eq(ps_array_push(a, ps_new_real(0.5)), 0);
	ck_assert_int_eq(ps_array_push(a, ps_new_ref(3, 0)), 0);
	ck_assert_int_eq(ps_array_push(a, ps_new_array()), 0);
	ck_assert_int_eq(ps_dict_put(d, "Rect", a), 0);
	ck_assert_int_eq(ps_dict_put(d, "Empty", ps_new_dict()), 0);
	ck_assert_int_eq(ps_dict_put(d, "K e", ps_new_str("v", 1)), 0);
	check_ser(ps_obj_copy(d), "<< /Type /Annot /Rect [0 0.5 3 0 R []] /Empty << >> /K#20e (v) >>");

	/* a stream writes only its dictionary */
	s = ps_new_stream(d, (uint8_t *)strdup("data"), 4);
	ck_assert_ptr_nonnull(s);
	check_ser(s, "<< /Type /Annot /Rect [0 0.5 3 0 R []] /Empty << >> /K#20e (v) >>");
}
END_TEST

/* The serializer must not depend on LC_NUMERIC (only testable where a
 * locale with a decimal comma is installed). */
START_TEST(test_serialize_locale)
{
	static const char *const locs[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
	size_t i;
	int set = 0;

	for (i = 0; i < sizeof locs / sizeof locs[0] && !set; i++)
		set = setlocale(LC_NUMERIC, locs[i]) != NULL;
	check_ser(ps_new_real(1.5), "1.5");
	check_ser(ps_new_real(-0.25), "-0.25");
	setlocale(LC_NUMERIC, "C");
}
END_TEST

/* serialize(parse(x)) == x for text already in canonical form */
START_TEST(test_roundtrip_text)
{
	static const char *const canon[] = {
		"<< /Type /Page /MediaBox [0 0 612 792] /Contents 4 0 R /Rot -90 >>",
		"[1.5 -.25 +3. (a\\(b\\)) <00FF10> /N#23#20 true false null [] << >>]",
		"<< /A << /B << /C [(\\r\\n\\\\) 1 0 R] >> >> /D (\\000\\377) >>",
		"(\\(\\))",
		"[/#2F#25 /]",
		"1 2 R",
	};
	static const char *const messy[] = {
		"<</Type/Page/X[1 2 3 R(a\r\nb)<41\n4>]>>",
		"[%c\n/A#42 (a\\\nb) (\\8\\9) .5]",
		"<< /K (\\101\\60) /K2 <6> >>",
	};
	size_t i;

	for (i = 0; i < sizeof canon / sizeof canon[0]; i++) {
		ps_obj *o = P(canon[i]);
		char *s = ser(o);

		ck_assert_str_eq(s, canon[i]);
		free(s);
		ps_obj_free(o);
	}
	for (i = 0; i < sizeof messy / sizeof messy[0]; i++) {
		ps_obj *o = P(messy[i]), *o2;
		char *s = ser(o), *s2;

		o2 = P(s);
		ck_assert(obj_eq(o, o2, 0));
		s2 = ser(o2);
		ck_assert_str_eq(s, s2);   /* canonical form is a fixed point */
		free(s);
		free(s2);
		ps_obj_free(o);
		ps_obj_free(o2);
	}
}
END_TEST

static ps_obj *rand_obj(int depth)
{
	unsigned k = rndn(depth > 0 ? 10 : 7);
	ps_obj *o = NULL;
	size_t n, i;

	switch (k) {
	case 0:
		return ps_new_null();
	case 1:
		return ps_new_bool((int)rndn(2));
	case 2:
		switch (rndn(4)) {
		case 0: return ps_new_int(INT64_MIN + (int64_t)rndn(3));
		case 1: return ps_new_int(INT64_MAX - (int64_t)rndn(3));
		default: return ps_new_int((int64_t)(rnd() % 2000001) - 1000000);
		}
	case 3:
		/* a multiple of 1/1024, so six decimals keep it within 1e-6 */
		return ps_new_real(((double)(int64_t)(rnd() % 2000000001) - 1000000000.0) / 1024.0);
	case 4: {
		uint8_t b[40];

		n = rndn(sizeof b);
		for (i = 0; i < n; i++)
			b[i] = (uint8_t)rnd();
		o = ps_new_str(b, n);
		if (o)
			o->u.str.hex = (int)rndn(2);
		return o;
	}
	case 5: {
		char b[20];

		n = rndn(sizeof b);
		for (i = 0; i < n; i++)
			b[i] = (char)(1 + rndn(255));
		b[n] = 0;
		return ps_new_name(b);
	}
	case 6:
		return ps_new_ref((uint32_t)rndn(2147483647u), (uint16_t)rndn(65536));
	case 7:
	case 8:
		o = ps_new_array();
		n = rndn(6);
		for (i = 0; i < n; i++)
			ck_assert_int_eq(ps_array_push(o, rand_obj(depth - 1)), 0);
		return o;
	default:
		o = ps_new_dict();
		n = rndn(6);
		for (i = 0; i < n; i++) {
			char key[8];

			key[0] = (char)('A' + rndn(8));     /* collisions exercise replace */
			key[1] = (char)(1 + rndn(255));
			key[2] = 0;
			ck_assert_int_eq(ps_dict_put(o, key, rand_obj(depth - 1)), 0);
		}
		return o;
	}
}

/* parse(serialize(obj)) == obj for randomly built objects */
START_TEST(test_roundtrip_random)
{
	int iter;

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (iter = 0; iter < 3000; iter++) {
		ps_obj *o = rand_obj(4), *o2 = NULL;
		ps_buf b = PS_BUF_INIT;
		size_t pos = 0;
		int rc;

		ck_assert_ptr_nonnull(o);
		ps_serialize(&b, o);
		ps_buf_puts(&b, "\n]");   /* a delimiter so a final number is complete */
		ck_assert(!b.oom);
		rc = ps_parse_obj(ctx, b.data, b.len, &pos, &o2);
		ck_assert_msg(rc == 0, "iteration %d: %s", iter, pdfstamp_ctx_errmsg(ctx));
		ck_assert_uint_eq(pos, b.len - 2);
		ck_assert_msg(obj_eq(o, o2, 1), "iteration %d: round trip differs: %.*s", iter,
		              (int)b.len, (const char *)b.data);
		ps_buf_free(&b);
		ps_obj_free(o);
		ps_obj_free(o2);
	}
	ck_assert_int_eq(nwarn, 0);  /* ps_dict_put never leaves duplicates */
}
END_TEST

/* ---- object model ---------------------------------------------------------------- */

START_TEST(test_dict_ops)
{
	ps_obj *d = ps_new_dict(), *s, *n;
	int64_t i;
	double x;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(ps_dict_put(d, "A", ps_new_int(1)), 0);
	ck_assert_int_eq(ps_dict_put(d, "B", ps_new_int(2)), 0);
	ck_assert_int_eq(ps_dict_put(d, "C", ps_new_int(3)), 0);
	ck_assert_uint_eq(d->u.dict.len, 3);
	/* replace keeps the position */
	ck_assert_int_eq(ps_dict_put(d, "A", ps_new_real(1.5)), 0);
	ck_assert_uint_eq(d->u.dict.len, 3);
	ck_assert_str_eq(d->u.dict.ents[0].key, "A");
	ck_assert_int_eq(ps_obj_int(ps_dict_get(d, "A"), &i), -1);
	ck_assert_int_eq(ps_obj_num(ps_dict_get(d, "A"), &x), 0);
	ck_assert(x == 1.5);
	ck_assert_int_eq(ps_obj_num(ps_dict_get(d, "B"), &x), 0);
	ck_assert(x == 2.0);
	ck_assert_int_eq(ps_obj_num(ps_dict_get(d, "Z"), &x), -1);
	/* delete in the middle keeps order */
	ck_assert_int_eq(ps_dict_del(d, "B"), 0);
	ck_assert_uint_eq(d->u.dict.len, 2);
	ck_assert_str_eq(d->u.dict.ents[1].key, "C");
	ck_assert_ptr_null(ps_dict_get(d, "B"));
	ck_assert_int_eq(ps_dict_del(d, "B"), 0);     /* absent: still 0 */
	ck_assert_int_eq(ps_dict_del(d, "C"), 0);
	ck_assert_int_eq(ps_dict_del(d, "A"), 0);
	ck_assert_uint_eq(d->u.dict.len, 0);
	/* many keys: growth */
	for (i = 0; i < 100; i++) {
		char k[8];

		snprintf(k, sizeof k, "K%d", (int)i);
		ck_assert_int_eq(ps_dict_put(d, k, ps_new_int(i)), 0);
	}
	ck_assert_uint_eq(d->u.dict.len, 100);
	ck_assert_int_eq(ps_obj_int(ps_dict_get(d, "K77"), &i), 0);
	ck_assert_int_eq(i, 77);

	/* a NULL value counts as the caller's allocation failure */
	ck_assert_int_eq(ps_dict_put(d, "X", NULL), PDFSTAMP_E_NOMEM);
	/* wrong kinds: the value is taken and freed (valgrind checks the leak) */
	n = ps_new_int(5);
	ck_assert_int_eq(ps_dict_put(n, "X", ps_new_int(1)), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_array_push(n, ps_new_int(1)), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_array_push(NULL, ps_new_int(1)), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_dict_put(d, NULL, ps_new_int(1)), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(ps_dict_get(n, "X"));
	ck_assert_ptr_null(ps_array_get(n, 0));
	ck_assert_uint_eq(ps_array_len(n), 0);
	ck_assert_ptr_null(ps_dict_get(NULL, "X"));
	ck_assert(!ps_obj_is_name(NULL, "X"));
	ck_assert(!ps_obj_is_name(n, "X"));
	ck_assert_int_eq(ps_obj_int(NULL, &i), -1);
	ps_obj_free(n);

	/* streams: the dict functions reach the stream's dictionary */
	s = ps_new_stream(d, NULL, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->u.stm.off, -1);
	ck_assert_int_eq(ps_dict_put(s, "Length", ps_new_int(0)), 0);
	ck_assert_ptr_nonnull(ps_dict_get(s, "Length"));
	ck_assert_ptr_nonnull(ps_dict_get(s, "K5"));
	ck_assert_int_eq(ps_dict_del(s, "K5"), 0);
	ck_assert_ptr_null(ps_dict_get(s, "K5"));
	ps_obj_free(s);

	/* a stream needs a dictionary; both arguments are freed on failure */
	ck_assert_ptr_null(ps_new_stream(ps_new_array(), (uint8_t *)strdup("x"), 1));
	ck_assert_ptr_null(ps_new_stream(NULL, (uint8_t *)strdup("x"), 1));
	ps_obj_free(NULL);
}
END_TEST

/* ps_dict_put_name/int/real/bool/ref/str: one value of each kind, written
 * as ps_dict_put would; replacing keeps the position; failures take
 * nothing the caller must free (valgrind/ASan check the leaks). */
START_TEST(test_dict_typed)
{
	static const uint8_t bin[] = {'a', 0, 'b'};
	ps_obj *d = ps_new_dict(), *n, *s;
	int64_t i;
	double x;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(ps_dict_put_name(d, "Type", "Annot"), 0);
	ck_assert_int_eq(ps_dict_put_int(d, "F", 4 | 128), 0);
	ck_assert_int_eq(ps_dict_put_real(d, "CA", 0.5), 0);
	ck_assert_int_eq(ps_dict_put_bool(d, "Open", 7), 0);
	ck_assert_int_eq(ps_dict_put_ref(d, "P", 4294967295u, 65535), 0);
	ck_assert_int_eq(ps_dict_put_str(d, "NM", bin, sizeof bin), 0);
	ck_assert_int_eq(ps_dict_put_str(d, "E", NULL, 0), 0);
	ck_assert_int_eq(ps_dict_put_int(d, "Min", INT64_MIN), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(d, "Type"), "Annot"));
	ck_assert_int_eq(ps_obj_int(ps_dict_get(d, "F"), &i), 0);
	ck_assert_int_eq(i, 132);
	ck_assert_int_eq(ps_dict_get(d, "CA")->kind, PS_REAL);
	ck_assert_ptr_null(ps_dict_get(d, "CA")->u.real.text);
	ck_assert_int_eq(ps_dict_get(d, "Open")->u.b, 1);
	ck_assert_int_eq(ps_dict_get(d, "NM")->u.str.len, 3);
	ck_assert_int_eq(ps_dict_get(d, "NM")->u.str.p[3], 0);   /* obj.c note 3 */
	ck_assert_int_eq(ps_dict_get(d, "E")->u.str.len, 0);
	check_ser(ps_obj_copy(d), "<< /Type /Annot /F 132 /CA 0.5 /Open true /P 4294967295 65535 R "
	                          "/NM (a\\000b) /E () /Min -9223372036854775808 >>");

	/* replacing, also by another kind, keeps the position */
	ck_assert_int_eq(ps_dict_put_real(d, "F", 2.5), 0);
	ck_assert_int_eq(ps_dict_put_int(d, "Type", 1), 0);
	ck_assert_int_eq(ps_dict_put_bool(d, "Min", 0), 0);
	ck_assert_int_eq(ps_dict_put_name(d, "NM", "N"), 0);
	ck_assert_int_eq(ps_dict_put_ref(d, "CA", 3, 0), 0);
	ck_assert_int_eq(ps_dict_put_str(d, "Open", "x", 1), 0);
	ck_assert_uint_eq(d->u.dict.len, 8);
	ck_assert_str_eq(d->u.dict.ents[1].key, "F");
	ck_assert_int_eq(ps_obj_num(d->u.dict.ents[1].val, &x), 0);
	ck_assert(x == 2.5);
	check_ser(ps_obj_copy(d), "<< /Type 1 /F 2.5 /CA 3 0 R /Open (x) /P 4294967295 65535 R "
	                          "/NM /N /E () /Min false >>");

	/* a NULL name or string is the constructor's failure: NOMEM, and the
	 * dictionary is unchanged */
	ck_assert_int_eq(ps_dict_put_name(d, "Type", NULL), PDFSTAMP_E_NOMEM);
	ck_assert_int_eq(ps_dict_put_str(d, "X", NULL, 1), PDFSTAMP_E_NOMEM);
	ck_assert_uint_eq(d->u.dict.len, 8);
	ck_assert_int_eq(ps_obj_int(ps_dict_get(d, "Type"), &i), 0);
	/* wrong kinds and a NULL key: USAGE, the value built is freed */
	n = ps_new_int(5);
	ck_assert_int_eq(ps_dict_put_name(n, "X", "Y"), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_dict_put_int(NULL, "X", 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_dict_put_real(n, "X", 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_dict_put_bool(n, "X", 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_dict_put_ref(n, "X", 1, 0), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_dict_put_str(d, NULL, "x", 1), PDFSTAMP_E_USAGE);
	ps_obj_free(n);

	/* a stream: the helpers reach its dictionary */
	s = ps_new_stream(d, NULL, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ps_dict_put_int(s, "Length", 0), 0);
	ck_assert_ptr_nonnull(ps_dict_get(s, "Length"));
	ps_obj_free(s);
}
END_TEST

/* ps_serialize_real, the one number formatter (serialize.c note 3). */
static void check_real(double v, const char *want)
{
	ps_buf b = PS_BUF_INIT;

	ps_serialize_real(&b, v);
	ck_assert(!b.oom);
	ck_assert_uint_eq(b.len, strlen(want));
	ck_assert_msg(memcmp(b.data, want, b.len) == 0, "%.17g: %.*s, want %s", v, (int)b.len,
	              (const char *)b.data, want);
	ps_buf_free(&b);
	/* a new real is serialized with the same formatter */
	check_ser(ps_new_real(v), want);
}

START_TEST(test_put_real)
{
	check_real(0, "0");
	check_real(-0.0, "0");
	check_real(-0.5, "-0.5");
	check_real(0.5, "0.5");
	check_real(1e-7, "0");
	check_real(-1e-7, "0");
	check_real(4e-7, "0");
	check_real(5e-7, "0.000001");
	check_real(-5e-7, "-0.000001");
	check_real(1e-6, "0.000001");
	check_real(123456.789, "123456.789");
	check_real(-123456.789, "-123456.789");
	check_real(0.1 + 0.2, "0.3");
	check_real(1.0 / 3, "0.333333");
	check_real(-2.0 / 3, "-0.666667");
	check_real(0.9999996, "1");
	check_real(612.1, "612.1");
	check_real(42, "42");
	check_real(1234567.25, "1234567.25");
	check_real(9e12, "9000000000000");
	check_real(1e15, "1000000000000000");
	check_real(-1e15, "-1000000000000000");
	check_real(1.5e19, "15000000000000000000");
	check_real(1e20, "100000000000000000000");
	check_real(-1e20, "-100000000000000000000");
	check_real(1e300 * 1e300, "0");
	check_real(-1e300 * 1e300, "0");
	check_real(NAN, "0");
	check_real(-NAN, "0");
	check_real(DBL_MAX, "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368");
}
END_TEST

START_TEST(test_copy_independent)
{
	ps_obj *o, *c, *s, *sc, *v;
	char *t1, *t2;

	o = P("<< /A [1 2.50 (str) <41> /N 3 0 R << /X true >>] /B null >>");
	c = ps_obj_copy(o);
	ck_assert_ptr_nonnull(c);
	ck_assert(c != o);
	ck_assert(obj_eq(o, c, 0));
	t1 = ser(o);
	/* mutate the original everywhere */
	v = ps_dict_get(o, "A");
	ps_array_get(v, 2)->u.str.p[0] = 'X';
	ck_assert_int_eq(ps_array_push(v, ps_new_int(9)), 0);
	ck_assert_int_eq(ps_dict_put(ps_array_get(v, 6), "X", ps_new_bool(0)), 0);
	ck_assert_int_eq(ps_dict_del(o, "B"), 0);
	ck_assert(!obj_eq(o, c, 0));
	ps_obj_free(o);
	/* the copy is intact after the original is gone */
	t2 = ser(c);
	ck_assert_str_eq(t1, t2);
	ck_assert(ps_array_get(ps_dict_get(c, "A"), 1)->u.real.text !=
	          NULL);   /* text was copied too */
	ck_assert_str_eq(ps_array_get(ps_dict_get(c, "A"), 1)->u.real.text, "2.50");
	free(t1);
	free(t2);
	ps_obj_free(c);

	/* streams: dictionary and data are copied */
	s = ps_new_stream(P("<< /Length 3 >>"), (uint8_t *)strdup("abc"), 3);
	ck_assert_ptr_nonnull(s);
	s->u.stm.off = 77;
	sc = ps_obj_copy(s);
	ck_assert(obj_eq(s, sc, 0));
	ck_assert(sc->u.stm.data != s->u.stm.data);
	ck_assert(sc->u.stm.dict != s->u.stm.dict);
	s->u.stm.data[0] = 'z';
	ck_assert_int_eq(sc->u.stm.data[0], 'a');
	ck_assert_int_eq(sc->u.stm.off, 77);
	ps_obj_free(s);
	ck_assert_uint_eq(sc->u.stm.len, 3);
	ps_obj_free(sc);
	ck_assert_ptr_null(ps_obj_copy(NULL));
}
END_TEST

struct walk_rec {
	int n, stop_at;
	char seen[8][16];
	const ps_obj *pd[8];
};

static int walk_cb(void *ud, ps_obj *str, const ps_obj *parent_dict, const char *key)
{
	struct walk_rec *w = ud;

	if (w->n < 8) {
		snprintf(w->seen[w->n], sizeof w->seen[0], "%s=%.*s", key ? key : "-",
		         (int)str->u.str.len, (const char *)str->u.str.p);
		w->pd[w->n] = parent_dict;
	}
	w->n++;
	return w->n == w->stop_at ? 7 : 0;
}

START_TEST(test_walk_strings)
{
	ps_obj *o = P("<< /A (x) /B [(y) << /C <7A> /D 5 >> [(w)]] /E /N >>"), *s;
	struct walk_rec w;

	memset(&w, 0, sizeof w);
	ck_assert_int_eq(ps_obj_walk_strings(o, walk_cb, &w), 0);
	ck_assert_int_eq(w.n, 4);
	ck_assert_str_eq(w.seen[0], "A=x");
	ck_assert_str_eq(w.seen[1], "B=y");
	ck_assert_str_eq(w.seen[2], "C=z");
	ck_assert_str_eq(w.seen[3], "B=w");
	ck_assert(w.pd[0] == o && w.pd[1] == o && w.pd[3] == o);
	ck_assert(w.pd[2] == ps_array_get(ps_dict_get(o, "B"), 1));

	memset(&w, 0, sizeof w);
	w.stop_at = 2;
	ck_assert_int_eq(ps_obj_walk_strings(o, walk_cb, &w), 7);
	ck_assert_int_eq(w.n, 2);

	/* the callback may rewrite the string (as encryption does) */
	s = ps_new_stream(o, NULL, 0);
	memset(&w, 0, sizeof w);
	ck_assert_int_eq(ps_obj_walk_strings(s, walk_cb, &w), 0);
	ck_assert_int_eq(w.n, 4);
	ps_obj_free(s);

	o = P("(top)");
	memset(&w, 0, sizeof w);
	ck_assert_int_eq(ps_obj_walk_strings(o, walk_cb, &w), 0);
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.seen[0], "-=top");
	ck_assert_ptr_null(w.pd[0]);
	ps_obj_free(o);
	ck_assert_int_eq(ps_obj_walk_strings(NULL, walk_cb, &w), 0);
}
END_TEST

/* ---- fuzz ------------------------------------------------------------------------ */

/* ---- ps_parse_scan_refs against the parser ----------------------------------------- */

struct refl {
	uint32_t v[512];
	size_t n;
	int over;
};

static int refl_add(void *ud, uint32_t num)
{
	struct refl *r = ud;

	if (r->n == sizeof r->v / sizeof r->v[0])
		r->over = 1;
	else
		r->v[r->n++] = num;
	return 0;
}

/* Every reference the parser built into O is among the scan's S (as a
 * multiset: the scan may report more, never fewer); B[0..N) is the source,
 * for the message. */
static void scan_covers(const ps_obj *o, const struct refl *s, const uint8_t *b, size_t n)
{
	struct refl p = {{0}, 0, 0};
	uint8_t used[512] = {0};
	size_t i, j;

	ps_obj_each_ref(o, refl_add, &p);
	for (i = 0; i < p.n && !p.over; i++) {
		for (j = 0; j < s->n && (used[j] || s->v[j] != p.v[i]); j++)
			;
		ck_assert_msg(j < s->n, "the parser found reference %u that the scan missed in: %.*s", p.v[i],
		              (int)(n < 200 ? n : 200), (const char *)b);
		used[j] = 1;
	}
}

/* The oracle of the scan (parse.c "References only"): it answers 0, 1 or
 * NEEDMORE; when it and the parser both read the object at B[0..N) (an
 * exact-size copy: ASan sees a read past it), the header numbers agree
 * and every reference the parser built is among the scan's (as a
 * multiset: the scan may report more, never fewer).  Returns the scan's
 * answer; *SCANNED (may be NULL) its references. */
static int scan_vs_parse(const uint8_t *b, size_t n, struct refl *scanned)
{
	struct refl s = {{0}, 0, 0};
	uint32_t snum = 0, num = 0;
	uint16_t gen = 0;
	ps_obj *o = NULL;
	int rc, prc;

	rc = ps_parse_scan_refs(b, n, &snum, refl_add, &s);
	ck_assert(rc == 0 || rc == 1 || rc == PS_E_NEEDMORE);
	prc = ps_parse_indirect(ctx, b, n, 0, 0, &num, &gen, &o);
	if (rc == 0 && prc == 0 && !s.over) {
		ck_assert_uint_eq(snum, num);
		scan_covers(o, &s, b, n);
	}
	ps_obj_free(o);
	if (scanned)
		*scanned = s;
	return rc;
}

/* The same oracle for a direct object at B[0..N) (an object stream's
 * member): ps_parse_scan_refs_direct against ps_parse_obj. */
static int scan_vs_parse_direct(const uint8_t *b, size_t n, struct refl *scanned)
{
	struct refl s = {{0}, 0, 0};
	ps_obj *o = NULL;
	size_t pos = 0;
	int rc;

	rc = ps_parse_scan_refs_direct(b, n, 0, refl_add, &s);
	ck_assert(rc == 0 || rc == 1);
	if (rc == 0 && ps_parse_obj(ctx, b, n, &pos, &o) == 0 && !s.over)
		scan_covers(o, &s, b, n);
	ps_obj_free(o);
	if (scanned)
		*scanned = s;
	return rc;
}

START_TEST(test_scan_refs)
{
	static const struct {
		const char *src;
		int rc;
		const char *refs; /* the scan's, in order */
	} cases[] = {
		{"1 0 obj << /A 2 0 R /B [3 0 R 4 1 R] /C << /D 5 0 R >> >> endobj", 0, "2,3,4,5"},
		{"7 0 obj [1 2 3 R 4 0 R 5 65535 R 2147483647 0 R 6%c\n7\rR] endobj", 0, "2,4,5,2147483647,6"},
		{"1 0 obj << /S (8 0 R \\) 9 0 R \\( x) /T (a(b)c) /U 9 0 R >> endobj", 0, "9"},
		{"1 0 obj << /S <38 20 30 20 52> %9 0 R\n /N /R#20 /O 10 0 R >> endobj", 0, "10"},
		{"1 0 obj << /Length 11 0 R >>\nstream\n12 0 R\nendstream endobj", 0, "11"},
		{"1 0 obj [ ] endobj 2 0 obj [ 3 0 R ] endobj", 0, ""},
		{"1 0 obj true endobj", 0, ""},
		{"1 0 obj 12 0 R endobj", 1, NULL},          /* a reference at the top: parsed */
		{"1 0 obj [ +1 0 R ] endobj", 1, NULL},       /* "0 R" then a bare R */
		{"1 0 obj [ 1.0 0 R ] endobj", 1, NULL},
		{"1 0 obj [ 2147483648 0 R ] endobj", 1, NULL},
		{"1 0 obj [ 1 65536 R ] endobj", 1, NULL},
		{"1 0 obj [ 1 0 Rx ] endobj", 1, NULL},
		{"1 0 obj << /A <4g> >> endobj", 1, NULL},    /* not a hex digit */
		{"1 0 obj << /A#4 1 >> endobj", 1, NULL},     /* a bad escape */
		{"1 0 obj [ 1 0 R >> endobj", 1, NULL},
		{"1 0 obj << /A [ >> ] endobj", 1, NULL},
		{"1 0 obj [ { ] endobj", 1, NULL},
		{"1 0 obj [ ] stream\n", 1, NULL},            /* stream after an array */
		{"1 0 obj [ 2 0 R ] [ 3 0 R ] endobj", 1, NULL}, /* two values */
		{"1 0 obj [ 2 0 R ] 3 0 obj ", 1, NULL},     /* no endobj */
		{"1 0 obj [ 2 0 R ] endob", PS_E_NEEDMORE, NULL},
		{"1 0 obj [ 2 0 R ]", PS_E_NEEDMORE, NULL},
		{"1 0 obj (abc", PS_E_NEEDMORE, NULL},
		{"1 0 obj <abc", PS_E_NEEDMORE, NULL},
		{"1 0 ob", PS_E_NEEDMORE, NULL},
		{"1 x obj [ ] endobj", 1, NULL},
		{"1 65536 obj [ ] endobj", 1, NULL},
		{"-1 0 obj [ ] endobj", 1, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = strlen(cases[i].src), k;
		uint8_t *b = malloc(n);
		struct refl r;
		char got[256] = "";
		int rc;

		ck_assert_ptr_nonnull(b);
		memcpy(b, cases[i].src, n);
		rc = scan_vs_parse(b, n, &r);
		ck_assert_msg(rc == cases[i].rc, "%s: %d, not %d", cases[i].src, rc, cases[i].rc);
		for (k = 0; k < r.n && rc == 0; k++)
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%u", k ? "," : "", r.v[k]);
		if (cases[i].refs)
			ck_assert_msg(strcmp(got, cases[i].refs) == 0, "%s: refs %s, not %s", cases[i].src, got,
			              cases[i].refs);
		free(b);
	}
	/* a direct object (an object stream's member) ends with its value */
	{
		static const struct {
			const char *src;
			int rc;
			const char *refs;
		} direct[] = {
			{"<< /A 2 0 R /B [3 0 R] >> 4 0 R", 0, "2,3"},
			{"[5 0 R 6 0 R]7 0 R", 0, "5,6"},
			{"(x 8 0 R) 9 0 R", 0, ""},
			{"/Name 9 0 R", 0, ""},
			{"12 0 R", 1, NULL},  /* an integer at the top: perhaps a reference */
			{"12", 1, NULL},
			{"[1 0 R", 1, NULL},  /* the data ends first */
			{"<< /A 1 0 R", 1, NULL},
			{"] 1 0 R", 1, NULL},
		};
		for (i = 0; i < sizeof direct / sizeof direct[0]; i++) {
			size_t n = strlen(direct[i].src), k;
			uint8_t *b = malloc(n);
			struct refl r;
			char got[256] = "";
			int rc;

			ck_assert_ptr_nonnull(b);
			memcpy(b, direct[i].src, n);
			rc = scan_vs_parse_direct(b, n, &r);
			ck_assert_msg(rc == direct[i].rc, "%s: %d, not %d", direct[i].src, rc, direct[i].rc);
			for (k = 0; k < r.n && rc == 0; k++)
				snprintf(got + strlen(got), sizeof got - strlen(got), "%s%u", k ? "," : "", r.v[k]);
			if (direct[i].refs)
				ck_assert_msg(strcmp(got, direct[i].refs) == 0, "%s: refs %s, not %s", direct[i].src, got,
				              direct[i].refs);
			free(b);
		}
	}
}
END_TEST

/* Parses SRC[0..N) object after object; on every success the object must
 * survive serialize -> parse unchanged; and the scan's oracles. */
static void fuzz_one(const uint8_t *src, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	size_t pos = 0;
	uint32_t num;
	uint16_t gen;
	ps_obj *o;
	int rc, guard = 0;

	ck_assert_ptr_nonnull(b);
	if (n)
		memcpy(b, src, n);
	while (pos < n && guard++ < 1000) {
		size_t before = pos;

		o = NULL;
		rc = ps_parse_obj(ctx, b, n, &pos, &o);
		ck_assert(rc == 0 || rc == PS_E_NEEDMORE || rc == PDFSTAMP_E_FORMAT);
		if (rc < 0) {
			ck_assert_ptr_null(o);
			break;
		}
		ck_assert(pos > before && pos <= n);
		{
			ps_buf sb = PS_BUF_INIT;
			size_t p2 = 0;
			ps_obj *o2 = NULL;

			ps_serialize(&sb, o);
			ps_buf_puts(&sb, "\n]");
			rc = ps_parse_obj(ctx, sb.data, sb.len, &p2, &o2);
			ck_assert_msg(rc == 0, "reparse failed: %s", pdfstamp_ctx_errmsg(ctx));
			ck_assert(obj_eq(o, o2, 0));
			ps_buf_free(&sb);
			ps_obj_free(o2);
		}
		ps_obj_free(o);
	}
	o = NULL;
	rc = ps_parse_indirect(ctx, b, n, 0, 0, &num, &gen, &o);
	ck_assert(rc == 0 || rc == PS_E_NEEDMORE || rc == PDFSTAMP_E_FORMAT);
	ck_assert((rc == 0) == (o != NULL));
	if (o && o->kind == PS_STREAM)
		ck_assert(o->u.stm.off >= 0 && o->u.stm.off <= (int64_t)n);
	ps_obj_free(o);
	scan_vs_parse(b, n, NULL);
	scan_vs_parse_direct(b, n, NULL);
	free(b);
}

START_TEST(test_fuzz_random)
{
	static const char *const toks[] = {
		"<<", ">>", "[", "]", "(", ")", "<", ">", "/", "/N", "#", "#41", "#00", "\\", "\\(",
		"\\0", "\\12", "1", "0", "-", "+", ".", "5.5", "R", " ", "\n", "\r", "%", "true",
		"null", "obj", "endobj", "stream", "\r\n", "{", "}", "ff", "9999999999999999999", " 7 0 R ",
		" endobj",
	};
	uint8_t buf[96];
	int iter;

	rng_state = 0x123456789abcdefULL;
	for (iter = 0; iter < 20000; iter++) {
		size_t n = 0, want = rndn(sizeof buf);

		if (iter & 1) {
			for (n = 0; n < want; n++)
				buf[n] = (uint8_t)rnd();
		} else {
			if (iter & 2) { /* an indirect object, for the scan's oracle */
				memcpy(buf, "1 0 obj ", 8);
				n = 8;
			}
			while (n < want) {
				const char *t = toks[rndn(sizeof toks / sizeof toks[0])];
				size_t l = strlen(t);

				if (n + l > sizeof buf)
					break;
				memcpy(buf + n, t, l);
				n += l;
			}
		}
		fuzz_one(buf, n);
	}
}
END_TEST

START_TEST(test_fuzz_mutate)
{
	uint8_t buf[512];
	size_t si;
	int iter, m;

	rng_state = 0xfeedfacecafebeefULL;
	for (iter = 0; iter < 4000; iter++) {
		const char *s = samples[rndn(sizeof samples / sizeof samples[0])];
		size_t n = strlen(s);

		memcpy(buf, s, n);
		for (m = (int)rndn(4) + 1; m > 0; m--) {
			si = rndn((unsigned)n);
			switch (rndn(3)) {
			case 0: buf[si] = (uint8_t)rnd(); break;
			case 1: buf[si] = (uint8_t)"()<>[]{}/%#\\ 0R"[rndn(15)]; break;
			default: n = si; break;   /* truncate */
			}
			if (n == 0)
				break;
		}
		fuzz_one(buf, n);
	}
}
END_TEST

static Suite *obj_suite(void)
{
	Suite *s = suite_create("obj");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_lexer_helpers);
	tcase_add_test(tc, test_scalars);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_refs);
	tcase_add_test(tc, test_scan_refs);
	tcase_add_test(tc, test_containers);
	tcase_add_test(tc, test_duplicate_keys);
	tcase_add_test(tc, test_depth_limit);
	tcase_add_test(tc, test_truncation_prefixes);
	tcase_add_test(tc, test_indirect);
	tcase_add_test(tc, test_indirect_prefixes);
	tcase_add_test(tc, test_serialize_scalars);
	tcase_add_test(tc, test_serialize_containers);
	tcase_add_test(tc, test_fast_paths);
	tcase_add_test(tc, test_shared_keys);
	tcase_add_test(tc, test_arena);
	tcase_add_test(tc, test_arena_keep);
	tcase_add_test(tc, test_serialize_locale);
	tcase_add_test(tc, test_roundtrip_text);
	tcase_add_test(tc, test_roundtrip_random);
	tcase_add_test(tc, test_dict_ops);
	tcase_add_test(tc, test_dict_typed);
	tcase_add_test(tc, test_put_real);
	tcase_add_test(tc, test_copy_independent);
	tcase_add_test(tc, test_walk_strings);
	tcase_add_test(tc, test_messages_never_echo_bytes);
	tcase_add_test(tc, test_sort_runs);
	tcase_add_test(tc, test_fuzz_random);
	tcase_add_test(tc, test_fuzz_mutate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(obj_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
