/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c - the PDF lexer and parser: objects from a memory window.
 *
 * DESIGN NOTES
 *
 * What it owns: turning bytes into ps_obj trees (obj.c) for the xref
 * reader, the document's lazy lookup and object streams.  It keeps no
 * state between calls; the window, the context and BASE travel in a
 * pstate on the stack.
 *
 *  1. The parser never reads at or past LEN.  A token (number, name,
 *     keyword) that touches the end of the window is incomplete as far as
 *     the parser can tell, so it gives PS_E_NEEDMORE; so does an integer at
 *     top level that might still become "N G R".  The only exception is a
 *     complete keyword with no valid longer spelling (true, false, null,
 *     the R of a reference, endobj): extending the window cannot turn it
 *     into a different valid object.  Every other malformation is
 *     PDFSTAMP_E_FORMAT.  Both set a message with the offset (BASE-relative
 *     in ps_parse_indirect, window-relative in ps_parse_obj).  At the true
 *     end of the data (the last object of an object stream, a file's last
 *     bytes) NEEDMORE means "truncated"; a caller that knows the extent of
 *     a bare number can parse it from a copy followed by a delimiter.
 *  2. Limits: nesting of arrays/dictionaries <= PS_MAX_DEPTH (so the
 *     recursion is bounded); integers must fit int64_t; reals must be
 *     finite doubles; references need N <= 2^31-1 and G <= 65535; strings
 *     and names are limited by the window only.
 *  3. Numbers are converted without strtod/strtol (locale-independent).  A
 *     real keeps its token in u.real.text and is re-emitted verbatim by the
 *     serializer.
 *  4. Duplicate keys in a dictionary: the LAST value wins and takes the
 *     place of the FIRST occurrence, with one warning per dictionary (obj.c
 *     note 4).  Detection is O(n log n), so that a hostile dictionary with
 *     many keys cannot make parsing quadratic.
 *  5. Messages name an offending token by its length, never its bytes
 *     (they may be decrypted object-stream content).
 *  6. Decoded strings are built here and handed to the model with
 *     ps_new_str_take (obj.h), a name object's bytes are decoded straight
 *     into its own allocation (ps_arena_name_room, obj.c note 7), and
 *     either way obj.c's invariants are kept (a NUL after every string,
 *     no NUL inside a name); a dictionary key is decoded on
 *     the stack and made a key by ps_dict_key_dup (a shared copy for the
 *     common names, obj.c note 8), so keys are freed with
 *     ps_dict_key_free.  Given an arena (ps_parse_indirect_in: the
 *     rewrite and its self-check), every object, item array and string
 *     of the tree comes from it (obj.c note 9, the ps_arena_*
 *     constructors); without one, from malloc as before.
 *  7. Speed, with the same results, messages and limits (issue 16): the
 *     byte classes of 7.2.3 are one table (ps_parse_chclass, read through
 *     obj.h's inline accessors by the serializer and the xref reader
 *     too); runs of ordinary bytes and hex digit pairs are taken a run at
 *     a time; the items of an array or dictionary are collected on the
 *     stack (STACK_ITEMS, so at most PS_MAX_DEPTH such frames) and handed
 *     over in one allocation of the capacity ps_vec_grow implies; the
 *     overflow checks of integers begin after 18 digits, which always
 *     fit.
 */
#include "config.h"

#include <float.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

/* ======================================================================
 * Lexer helpers
 * ====================================================================== */

/* The class of every byte (obj.h: PS_CH_*), generated from the rules of
 * ISO 32000-2 7.2.3 and checked against them by tests/check_obj.c. */
const uint8_t ps_parse_chclass[256] = {
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 00 */
	0x00, 0x01, 0x01, 0x00, 0x01, 0x05, 0x00, 0x00,  /* 08 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 10 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 18 */
	0x01, 0x08, 0x08, 0x00, 0x08, 0x02, 0x08, 0x08,  /* 20 */
	0x06, 0x06, 0x08, 0x08, 0x08, 0x08, 0x08, 0x02,  /* 28 */
	0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08,  /* 30 */
	0x08, 0x08, 0x08, 0x08, 0x02, 0x08, 0x02, 0x08,  /* 38 */
	0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08,  /* 40 */
	0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08,  /* 48 */
	0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08,  /* 50 */
	0x08, 0x08, 0x08, 0x02, 0x0c, 0x02, 0x08, 0x08,  /* 58 */
	0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08,  /* 60 */
	0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08,  /* 68 */
	0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08,  /* 70 */
	0x08, 0x08, 0x08, 0x02, 0x08, 0x02, 0x08, 0x00,  /* 78 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 80 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 88 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 90 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 98 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* a0 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* a8 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* b0 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* b8 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* c0 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* c8 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* d0 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* d8 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* e0 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* e8 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* f0 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* f8 */
};

/* The value of a hex digit + 1, 0 for any other byte (7.3.4.3, 7.3.5). */
static const uint8_t hexv1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static inline int is_regular(int c)
{
	return (ps_parse_chclass[(uint8_t)c] & (PS_CH_SPACE | PS_CH_DELIM)) == 0;
}

static inline int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline int hex_val(int c)
{
	return (int)hexv1[(uint8_t)c] - 1;
}

/* ps_parse_skip_ws, inlined into the parser's loops. */
static inline size_t skip_ws(const uint8_t *buf, size_t len, size_t pos)
{
	while (pos < len) {
		uint8_t c = buf[pos];

		if (ps_parse_chclass[c] & PS_CH_SPACE) {
			pos++;
		} else if (c == '%') {
			while (pos < len && buf[pos] != '\r' && buf[pos] != '\n')
				pos++;
		} else {
			break;
		}
	}
	return pos;
}

size_t ps_parse_skip_ws(const uint8_t *buf, size_t len, size_t pos)
{
	return skip_ws(buf, len, pos);
}

static inline int parse_uint(const uint8_t *buf, size_t len, size_t *pos, int64_t *out)
{
	size_t p = *pos, p0 = p;
	int64_t v = 0;

	if (p >= len || !is_digit(buf[p]))
		return -1;
	while (p < len && is_digit(buf[p])) {
		int d = buf[p] - '0';

		/* 18 digits always fit; check only beyond them */
		if (p - p0 >= 18 && v > (INT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		p++;
	}
	*pos = p;
	*out = v;
	return 0;
}

int ps_parse_uint(const uint8_t *buf, size_t len, size_t *pos, int64_t *out)
{
	return parse_uint(buf, len, pos, out);
}

/* ======================================================================
 * Parser
 * ====================================================================== */

typedef struct pstate {
	ps_ctx *ctx;
	const uint8_t *buf;
	size_t len;
	int64_t base;   /* offset reported for buf[0] */
	ps_arena *ar;   /* where the objects go (obj.c note 9), NULL: malloc */
} pstate;

static int64_t st_off(const pstate *st, size_t at)
{
	return st->base + (int64_t)at;
}

/* What messages say about an offending token: its length, never its bytes.
 * The bytes may be decrypted content (object-stream members), and no
 * plaintext may reach a message, stderr or JSON (issue 11); the offset
 * printed beside it locates the token. */
static const char *show(char out[40], const uint8_t *p, size_t n)
{
	(void)p;
	snprintf(out, 40, "%zu-byte token", n);
	return out;
}

static int p_needmore(const pstate *st, size_t start, const char *what)
{
	return ps_err(st->ctx, PS_E_NEEDMORE,
	              "%s at offset %" PRId64 " is cut off by the end of the data", what,
	              st_off(st, start));
}

static int p_nomem(const pstate *st)
{
	return ps_err(st->ctx, PDFSTAMP_E_NOMEM, "out of memory while parsing an object");
}

static int p_format(const pstate *st, size_t at, const char *fmt, ...) PS_PRINTF(3, 4);
static int p_format(const pstate *st, size_t at, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ps_err(st->ctx, PDFSTAMP_E_FORMAT, "%s at offset %" PRId64, msg, st_off(st, at));
}

/* End of the run of regular characters starting at P. */
static inline size_t tok_end(const pstate *st, size_t p)
{
	const uint8_t *buf = st->buf;
	size_t len = st->len;

	while (p < len && (ps_parse_chclass[buf[p]] & (PS_CH_SPACE | PS_CH_DELIM)) == 0)
		p++;
	return p;
}

static int tok_is(const pstate *st, size_t p, size_t e, const char *kw)
{
	size_t n = strlen(kw);

	return e - p == n && memcmp(st->buf + p, kw, n) == 0;
}

/* The token [p, e) is a non-empty prefix of KW (or KW itself). */
static int tok_prefix_of(const pstate *st, size_t p, size_t e, const char *kw)
{
	size_t n = strlen(kw);

	return e > p && e - p <= n && memcmp(st->buf + p, kw, e - p) == 0;
}

static int parse_value(const pstate *st, size_t *pos, ps_obj **out, int depth);

/* Converts a validated real token ([sign] digits with one '.') without
 * strtod: up to 19 significant digits go into an integer mantissa, the
 * rest only moves the decimal exponent.  Returns +-HUGE when out of range. */
static double real_value(const uint8_t *s, size_t n)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
	};
	uint64_t mant = 0;
	int sig = 0, frac = 0, neg = 0;
	int64_t exp = 0;
	size_t i = 0;
	double v;

	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i++;
	}
	for (; i < n; i++) {
		int d;

		if (s[i] == '.') {
			frac = 1;
			continue;
		}
		d = s[i] - '0';
		if (mant == 0 && d == 0) {
			if (frac)
				exp--;
			continue;
		}
		if (sig < 19) {
			mant = mant * 10 + (uint64_t)d;
			sig++;
			if (frac)
				exp--;
		} else if (!frac) {
			exp++;
		}
	}
	v = (double)mant;
	if (mant != 0) {
		if (exp > 0) {
			while (exp > 22 && v <= DBL_MAX) {
				v *= 1e22;
				exp -= 22;
			}
			if (v <= DBL_MAX)
				v *= p10[exp > 22 ? 22 : exp];
		} else {
			exp = -exp;
			while (exp > 22 && v > 0) {
				v /= 1e22;
				exp -= 22;
			}
			v /= p10[exp > 22 ? 22 : exp];
		}
	}
	return neg ? -v : v;
}

/* A number token at P (first char is a digit, sign or '.').  An unsigned
 * integer at the top of a value may turn out to be "N G R". */
/* The integer V of token [P, E) (UNSIGNED: written without a sign),
 * or the reference "V G R" that starts there, into *OUT. */
static int int_or_ref(const pstate *st, size_t p, size_t e, int64_t v, int unsigned_, size_t *pos,
                      ps_obj **out)
{
	const uint8_t *buf = st->buf;
	ps_obj *o;

	/* "N G R": only for an integer written without a sign */
	if (unsigned_) {
		size_t g = skip_ws(buf, st->len, e), ge, q, r;
		int64_t gen;

		if (g >= st->len)
			return p_needmore(st, p, "integer or reference");
		if (is_digit(buf[g])) {
			ge = tok_end(st, g);
			if (ge >= st->len)
				return p_needmore(st, p, "integer or reference");
			q = g;
			if (parse_uint(buf, ge, &q, &gen) == 0 && q == ge) {
				r = skip_ws(buf, st->len, ge);
				if (r >= st->len)
					return p_needmore(st, p, "integer or reference");
				if (buf[r] == 'R' &&
				    (r + 1 >= st->len || !is_regular(buf[r + 1]))) {
					if (v > INT32_MAX)
						return p_format(st, p, "object number %" PRId64
						                " in reference out of range", v);
					if (gen > 65535)
						return p_format(st, g, "generation %" PRId64
						                " in reference out of range", gen);
					o = ps_arena_obj(st->ar, PS_REF);
					if (!o)
						return p_nomem(st);
					o->u.ref.num = (uint32_t)v;
					o->u.ref.gen = (uint16_t)gen;
					*out = o;
					*pos = r + 1;
					return 0;
				}
			}
		}
	}
	o = ps_arena_obj(st->ar, PS_INT);
	if (!o)
		return p_nomem(st);
	o->u.i = v;
	*out = o;
	*pos = e;
	return 0;
}

static int parse_number(const pstate *st, size_t *pos, ps_obj **out)
{
	const uint8_t *buf = st->buf;
	size_t p = *pos, e, i, q;
	size_t ndig = 0, ndot = 0;
	int neg = 0, bad = 0;
	char tmp[40];
	ps_obj *o;

	/* The common case in one pass: digits only, up to 18 of them (they
	 * always fit), then white space or a delimiter.  Anything else takes
	 * the checks below, which give the same results. */
	if (is_digit(buf[p])) {
		uint64_t mag = 0;

		for (q = p; q < st->len && q - p < 18 && is_digit(buf[q]); q++)
			mag = mag * 10 + (uint64_t)(buf[q] - '0');
		if (q < st->len && (ps_parse_chclass[buf[q]] & (PS_CH_SPACE | PS_CH_DELIM)))
			return int_or_ref(st, p, q, (int64_t)mag, 1, pos, out);
	}
	e = tok_end(st, p);
	if (e >= st->len)
		return p_needmore(st, p, "number");
	i = p;
	if (buf[i] == '+' || buf[i] == '-') {
		neg = buf[i] == '-';
		i++;
	}
	for (q = i; q < e; q++) {
		if (is_digit(buf[q]))
			ndig++;
		else if (buf[q] == '.')
			ndot++;
		else
			bad = 1;
	}
	if (bad || ndig == 0 || ndot > 1)
		return p_format(st, p, "malformed number (%s)", show(tmp, buf + p, e - p));

	if (ndot) {
		double v = real_value(buf + p, e - p);

		if (!(v <= DBL_MAX && v >= -DBL_MAX))
			return p_format(st, p, "real number (%s) out of range",
			                show(tmp, buf + p, e - p));
		o = ps_arena_real_text(st->ar, v, (const char *)buf + p, e - p);
		if (!o)
			return p_nomem(st);
		*out = o;
		*pos = e;
		return 0;
	}

	/* integer: accumulate the magnitude against the signed limit */
	{
		uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		uint64_t mag = 0;
		int64_t v;

		for (q = i; q < e; q++) {
			uint64_t d = (uint64_t)(buf[q] - '0');

			/* 18 digits always fit; check only beyond them */
			if (q - i >= 18 && mag > (lim - d) / 10)
				return p_format(st, p, "integer (%s) out of range",
				                show(tmp, buf + p, e - p));
			mag = mag * 10 + d;
		}
		if (neg)
			v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
		else
			v = (int64_t)mag;
		return int_or_ref(st, p, e, v, i == p, pos, out);
	}
}

/* Decodes the name token [p, e) (p at its '/') into S, which has room
 * for e - p bytes: the bytes with #xx resolved and a NUL.  0, or
 * PDFSTAMP_E_FORMAT for a bad escape. */
static int name_decode(const pstate *st, size_t p, size_t e, char *s, size_t *outlen)
{
	const uint8_t *buf = st->buf;
	size_t q, n = 0;

	for (q = p + 1; q < e; ) {
		size_t r = q;
		int hi, lo;

		/* the run up to the next '#' as it is */
		while (r < e && buf[r] != '#')
			r++;
		memcpy(s + n, buf + q, r - q);
		n += r - q;
		q = r;
		if (q >= e)
			break;
		if (e - q < 3 || (hi = hex_val(buf[q + 1])) < 0 || (lo = hex_val(buf[q + 2])) < 0)
			return p_format(st, q, "invalid #xx escape in name");
		if (hi == 0 && lo == 0)
			return p_format(st, q, "#00 in name");
		s[n++] = (char)(hi << 4 | lo);
		q += 3;
	}
	s[n] = 0;
	*outlen = n;
	return 0;
}

/* A dictionary key at P ('/').  *out receives the decoded bytes,
 * NUL-terminated, as a key of obj.c (ps_dict_key_dup: shared for the
 * common names, note 8 there); a short one is decoded on the stack. */
static int parse_name_raw(const pstate *st, size_t *pos, char **out, size_t *outlen)
{
	size_t p = *pos, e = tok_end(st, p + 1);
	char tmp[64], *s;
	int rc;

	if (e >= st->len)
		return p_needmore(st, p, "name");
	if (e - p <= sizeof tmp) {
		if ((rc = name_decode(st, p, e, tmp, outlen)) < 0)
			return rc;
		if (!(s = ps_dict_key_dup(tmp, *outlen)))
			return p_nomem(st);
		*out = s;
		*pos = e;
		return 0;
	}
	s = malloc(e - p);      /* decoded length <= e - p - 1, plus NUL */
	if (!s)
		return p_nomem(st);
	if ((rc = name_decode(st, p, e, s, outlen)) < 0) {
		free(s);
		return rc;
	}
	*out = s;
	*pos = e;
	return 0;
}

/* A name object: its bytes are decoded straight into the object's own
 * allocation (obj.c note 7). */
static int parse_name(const pstate *st, size_t *pos, ps_obj **out)
{
	size_t p = *pos, e = tok_end(st, p + 1);
	ps_obj *o;
	int rc;

	if (e >= st->len)
		return p_needmore(st, p, "name");
	o = ps_arena_name_room(st->ar, e - p - 1);
	if (!o)
		return p_nomem(st);
	if ((rc = name_decode(st, p, e, o->u.name.p, &o->u.name.len)) < 0) {
		ps_obj_free(o);
		return rc;
	}
	*out = o;
	*pos = e;
	return 0;
}

/* Turns the decoded bytes in B into a PS_STR (B is consumed). */
static int str_from_buf(const pstate *st, ps_buf *b, int hex, ps_obj **out)
{
	ps_obj *o;
	uint8_t *p;
	size_t n;

	if (st->ar) {   /* object and bytes in the arena (obj.c note 9) */
		o = b->oom ? NULL : ps_arena_str(st->ar, b->len ? b->data : (const uint8_t *)"",
		                                 b->len, hex);
		ps_buf_free(b);
		if (!o)
			return p_nomem(st);
		*out = o;
		return 0;
	}
	ps_buf_putc(b, 0);
	p = ps_buf_detach(b, &n);
	if (!p)
		return p_nomem(st);
	o = ps_new_str_take(p, n - 1, hex);
	if (!o)
		return p_nomem(st);
	*out = o;
	return 0;
}

/* A literal string at P ('('), ISO 32000 7.3.4.2. */
static int parse_literal(const pstate *st, size_t *pos, ps_obj **out)
{
	const uint8_t *buf = st->buf;
	size_t p = *pos, q = p + 1, nest = 1;
	ps_buf b = PS_BUF_INIT;
	int rc;

	for (;;) {
		size_t r = q;
		int c;

		/* copy a run of ordinary bytes at once */
		while (r < st->len && (ps_parse_chclass[buf[r]] & PS_CH_LIT) == 0)
			r++;
		if (r > q) {
			ps_buf_append(&b, buf + q, r - q);
			q = r;
		}
		if (q >= st->len) {
			rc = b.oom ? p_nomem(st) : p_needmore(st, p, "literal string");
			ps_buf_free(&b);
			return rc;
		}
		c = buf[q++];
		if (c == '(') {
			nest++;
		} else if (c == ')') {
			if (--nest == 0)
				break;
		} else if (c == '\r') {
			/* an unescaped CR or CRLF reads as a single LF */
			if (q < st->len && buf[q] == '\n')
				q++;
			c = '\n';
		} else if (c == '\\') {
			if (q >= st->len)
				continue;   /* reported as cut off above */
			c = buf[q++];
			switch (c) {
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case '(': case ')': case '\\': break;
			case '\r':
				/* backslash-EOL: a line continuation, no byte */
				if (q < st->len && buf[q] == '\n')
					q++;
				continue;
			case '\n':
				continue;
			case '0': case '1': case '2': case '3':
			case '4': case '5': case '6': case '7': {
				int v = c - '0', k;

				for (k = 1; k < 3 && q < st->len && buf[q] >= '0' && buf[q] <= '7';
				     k++)
					v = v * 8 + (buf[q++] - '0');
				c = v & 0xff;   /* high-order overflow is ignored */
				break;
			}
			default:
				break;      /* unknown escape: the backslash is ignored */
			}
		}
		ps_buf_putc(&b, c);
	}
	if ((rc = str_from_buf(st, &b, 0, out)) < 0)
		return rc;
	*pos = q;
	return 0;
}

/* A hex string at P ('<' not followed by '<'), ISO 32000 7.3.4.3. */
static int parse_hex(const pstate *st, size_t *pos, ps_obj **out)
{
	const uint8_t *buf = st->buf;
	size_t p = *pos, q = p + 1;
	ps_buf b = PS_BUF_INIT;
	int nib = -1, rc;

	for (;;) {
		int c, h;

		/* a run of digit pairs at once (what the steps below would do) */
		if (nib < 0) {
			while (q + 1 < st->len && hexv1[buf[q]] && hexv1[buf[q + 1]]) {
				ps_buf_putc(&b, (hexv1[buf[q]] - 1) << 4 | (hexv1[buf[q + 1]] - 1));
				q += 2;
			}
		}
		if (q >= st->len) {
			/* out of memory is said as such, never hidden behind a
			 * retry with more bytes */
			rc = b.oom ? p_nomem(st) : p_needmore(st, p, "hex string");
			ps_buf_free(&b);
			return rc;
		}
		c = buf[q++];
		if (c == '>')
			break;
		if (ps_parse_chclass[c] & PS_CH_SPACE)
			continue;
		if ((h = hex_val(c)) < 0) {
			ps_buf_free(&b);
			return p_format(st, q - 1, "invalid character in hex string");
		}
		if (nib < 0) {
			nib = h;
		} else {
			ps_buf_putc(&b, nib << 4 | h);
			nib = -1;
		}
	}
	if (nib >= 0)
		ps_buf_putc(&b, nib << 4);  /* odd count: final digit is followed by 0 */
	if ((rc = str_from_buf(st, &b, 1, out)) < 0)
		return rc;
	*pos = q;
	return 0;
}

/* Items of an array (entries of a dictionary) are collected on the stack
 * first and given to the object in one allocation of the size
 * ps_vec_grow implies (ps_vec_adopt), instead of a malloc and
 * reallocs per object; a longer one continues with ps_array_push.  The
 * recursion is bounded by PS_MAX_DEPTH, and so is the stack used. */
#define STACK_ITEMS 16

static int parse_array(const pstate *st, size_t *pos, ps_obj **out, int depth)
{
	size_t p = *pos, q = p + 1, ns = 0, i;
	ps_obj *arr, *item, *stk[STACK_ITEMS];
	int rc, spilled = 0;

	if (depth >= PS_MAX_DEPTH)
		return p_format(st, p, "objects nested deeper than %d levels", PS_MAX_DEPTH);
	arr = ps_arena_obj(st->ar, PS_ARRAY);
	if (!arr)
		return p_nomem(st);
	for (;;) {
		q = skip_ws(st->buf, st->len, q);
		if (q >= st->len) {
			rc = p_needmore(st, p, "array");
			goto fail;
		}
		if (st->buf[q] == ']') {
			q++;
			break;
		}
		if ((rc = parse_value(st, &q, &item, depth + 1)) < 0)
			goto fail;
		if (!spilled && ns < STACK_ITEMS) {
			stk[ns++] = item;
			continue;
		}
		if (!spilled) {
			if (ps_arena_adopt(st->ar, arr, (void **)&arr->u.arr.items, stk, ns,
			                   sizeof *stk) < 0) {
				ps_obj_free(item);
				rc = p_nomem(st);
				goto fail;
			}
			arr->u.arr.len = ns;
			ns = 0;
			spilled = 1;
		}
		if (ps_array_push(arr, item) < 0) {
			rc = p_nomem(st);
			goto fail;
		}
	}
	if (!spilled) {
		if (ps_arena_adopt(st->ar, arr, (void **)&arr->u.arr.items, stk, ns,
		                   sizeof *stk) < 0) {
			rc = p_nomem(st);
			goto fail;
		}
		arr->u.arr.len = ns;
	}
	*out = arr;
	*pos = q;
	return 0;
fail:
	for (i = 0; i < ns; i++)
		ps_obj_free(stk[i]);
	ps_obj_free(arr);
	return rc;
}

struct keyidx {
	const char *key;
	size_t idx;
};

static int keyidx_cmp(const void *a, const void *b)
{
	const struct keyidx *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Resolves duplicate keys of a freshly parsed dictionary: the last value
 * moves into the slot of the first occurrence, the others are dropped.
 * Small dictionaries without duplicates take a quick quadratic check;
 * everything else is sorted, so the cost stays O(n log n). */
static int dict_dedup(const pstate *st, ps_obj *d, size_t at)
{
	ps_dict_ent *ents = d->u.dict.ents;
	size_t n = d->u.dict.len, i, j, k, w;
	struct keyidx *ki;
	int found = 0;

	if (n < 2)
		return 0;
	if (n <= 16) {
		for (i = 0; i < n && !found; i++)
			for (j = i + 1; j < n && !found; j++)
				found = ents[i].key[0] == ents[j].key[0] &&
				        strcmp(ents[i].key, ents[j].key) == 0;
		if (!found)
			return 0;
	}
	ki = malloc(n * sizeof *ki);
	if (!ki)
		return p_nomem(st);
	for (i = 0; i < n; i++) {
		ki[i].key = ents[i].key;
		ki[i].idx = i;
	}
	qsort(ki, n, sizeof *ki, keyidx_cmp);
	found = 0;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(ki[j].key, ki[i].key) == 0; j++)
			;
		if (j - i > 1) {
			size_t first = ki[i].idx, last = ki[j - 1].idx;
			ps_obj *tmp;

			if (!found) {
				char m[40];

				ps_warn(st->ctx, "duplicate key (%s) in dictionary at offset %"
				        PRId64 " (the last one is used)",
				        show(m, (const uint8_t *)ki[i].key, strlen(ki[i].key)),
				        st_off(st, at));
				found = 1;
			}
			tmp = ents[first].val;
			ents[first].val = ents[last].val;
			ents[last].val = tmp;
			for (k = i + 1; k < j; k++) {
				ps_dict_ent *e = &ents[ki[k].idx];

				ps_dict_key_free(e->key);
				ps_obj_free(e->val);
				e->key = NULL;
				e->val = NULL;
			}
		}
	}
	free(ki);
	for (i = w = 0; i < n; i++)
		if (ents[i].key)
			ents[w++] = ents[i];
	d->u.dict.len = w;
	return 0;
}

static int parse_dict(const pstate *st, size_t *pos, ps_obj **out, int depth)
{
	const uint8_t *buf = st->buf;
	size_t p = *pos, q = p + 2, klen, ns = 0, i;
	ps_obj *d, *val;
	ps_dict_ent stk[STACK_ITEMS];
	char *key = NULL;
	int rc, spilled = 0;

	if (depth >= PS_MAX_DEPTH)
		return p_format(st, p, "objects nested deeper than %d levels", PS_MAX_DEPTH);
	d = ps_arena_obj(st->ar, PS_DICT);
	if (!d)
		return p_nomem(st);
	for (;;) {
		q = skip_ws(buf, st->len, q);
		if (q >= st->len) {
			rc = p_needmore(st, p, "dictionary");
			goto fail;
		}
		if (buf[q] == '>') {
			if (q + 1 >= st->len) {
				rc = p_needmore(st, p, "dictionary");
				goto fail;
			}
			if (buf[q + 1] != '>') {
				rc = p_format(st, q, "expected '>>' to end the dictionary");
				goto fail;
			}
			q += 2;
			break;
		}
		if (buf[q] != '/') {
			rc = p_format(st, q, "dictionary key is not a name");
			goto fail;
		}
		if ((rc = parse_name_raw(st, &q, &key, &klen)) < 0)
			goto fail;
		q = skip_ws(buf, st->len, q);
		if (q < st->len && buf[q] == '>') {
			char m[40];

			rc = p_format(st, q, "dictionary key (%s) has no value",
			              show(m, (const uint8_t *)key, klen));
			ps_dict_key_free(key);
			goto fail;
		}
		if ((rc = parse_value(st, &q, &val, depth + 1)) < 0) {
			ps_dict_key_free(key);
			goto fail;
		}
		if (!spilled && ns < STACK_ITEMS) {
			stk[ns].key = key;
			stk[ns++].val = val;
			continue;
		}
		if (!spilled) {
			if (ps_arena_adopt(st->ar, d, (void **)&d->u.dict.ents, stk, ns,
			                   sizeof *stk) < 0) {
				ps_dict_key_free(key);
				ps_obj_free(val);
				rc = p_nomem(st);
				goto fail;
			}
			d->u.dict.len = ns;
			ns = 0;
			spilled = 1;
		}
		if (ps_dict_append_take(d, key, val) < 0) {
			rc = p_nomem(st);
			goto fail;
		}
	}
	if (!spilled) {
		if (ps_arena_adopt(st->ar, d, (void **)&d->u.dict.ents, stk, ns, sizeof *stk) < 0) {
			rc = p_nomem(st);
			goto fail;
		}
		d->u.dict.len = ns;
		ns = 0;
	}
	if ((rc = dict_dedup(st, d, p)) < 0)
		goto fail;
	*out = d;
	*pos = q;
	return 0;
fail:
	for (i = 0; i < ns; i++) {
		ps_dict_key_free(stk[i].key);
		ps_obj_free(stk[i].val);
	}
	ps_obj_free(d);
	return rc;
}

static int parse_keyword(const pstate *st, size_t *pos, ps_obj **out)
{
	static const char *const kws[] = {"true", "false", "null"};
	size_t p = *pos, e = tok_end(st, p), i;
	ps_obj *o = NULL;
	char tmp[40];

	if (tok_is(st, p, e, "true") || tok_is(st, p, e, "false")) {
		o = ps_arena_obj(st->ar, PS_BOOL);
		if (o)
			o->u.b = st->buf[p] == 't';
	} else if (tok_is(st, p, e, "null")) {
		o = ps_arena_obj(st->ar, PS_NULL);
	} else {
		if (e >= st->len) {
			for (i = 0; i < sizeof kws / sizeof kws[0]; i++)
				if (tok_prefix_of(st, p, e, kws[i]))
					return p_needmore(st, p, "keyword");
		}
		if (e == p)
			return p_format(st, p, "unexpected character");
		return p_format(st, p, "unexpected keyword (%s)", show(tmp, st->buf + p, e - p));
	}
	if (!o)
		return p_nomem(st);
	*out = o;
	*pos = e;
	return 0;
}

static int parse_value(const pstate *st, size_t *pos, ps_obj **out, int depth)
{
	size_t p = skip_ws(st->buf, st->len, *pos);
	int c, rc;

	*out = NULL;
	if (p >= st->len)
		return p_needmore(st, p, "object");
	c = st->buf[p];
	switch (c) {
	case '/':
		rc = parse_name(st, &p, out);
		break;
	case '(':
		rc = parse_literal(st, &p, out);
		break;
	case '<':
		if (p + 1 >= st->len)
			return p_needmore(st, p, "string or dictionary");
		if (st->buf[p + 1] == '<')
			rc = parse_dict(st, &p, out, depth);
		else
			rc = parse_hex(st, &p, out);
		break;
	case '[':
		rc = parse_array(st, &p, out, depth);
		break;
	case ')': case '>': case ']': case '{': case '}':
		return p_format(st, p, "unexpected '%c'", c);
	default:
		if (is_digit(c) || c == '+' || c == '-' || c == '.')
			rc = parse_number(st, &p, out);
		else
			rc = parse_keyword(st, &p, out);
		break;
	}
	if (rc < 0)
		return rc;
	*pos = p;
	return 0;
}

int ps_parse_obj(ps_ctx *ctx, const uint8_t *buf, size_t len, size_t *pos, ps_obj **out)
{
	pstate st;

	st.ctx = ctx;
	st.buf = buf;
	st.len = len;
	st.base = 0;
	st.ar = NULL;
	*out = NULL;
	if (*pos > len)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              "parse position %zu beyond window of %zu bytes", *pos, len);
	return parse_value(&st, pos, out, 0);
}

/* An unsigned header number ("N" or "G" of "N G obj") at *pos. */
static int header_uint(const pstate *st, size_t *pos, int64_t max, const char *what, int64_t *out)
{
	size_t p = skip_ws(st->buf, st->len, *pos), e;
	char tmp[40];

	if (p >= st->len)
		return p_needmore(st, p, "object header");
	e = tok_end(st, p);
	if (e >= st->len)
		return p_needmore(st, p, "object header");
	*pos = p;
	if (parse_uint(st->buf, e, pos, out) < 0 || *pos != e)
		return p_format(st, p, "expected %s, found a %s", what,
		                show(tmp, st->buf + p, e - p));
	if (*out > max)
		return p_format(st, p, "%s %" PRId64 " out of range", what, *out);
	return 0;
}

/* ======================================================================
 * References only (obj.h: ps_parse_scan_refs)
 *
 * The same grammar as the parser above, without building anything: a
 * scan of every object of a revision (doc.c note 8) needs only the
 * references.  It is sure only of the plain shape, "N G obj", one value,
 * then "endobj" (or, after a dictionary, "stream"); for anything else (a
 * reference at the top, a stray delimiter or keyword, a bad escape, a
 * number out of range) it answers 1 and the caller parses the object, so
 * that what it reports is exactly what the parser would build.  It may
 * report more than the parser keeps: a dictionary's duplicate key, or a
 * value in a key's place (which the parser refuses), are scanned too.
 * ====================================================================== */

/* Hex digits and white space: what a hex string may hold (7.3.4.3). */
static const uint8_t hex_or_space[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	[0] = 1, ['\t'] = 1, ['\n'] = 1, ['\f'] = 1, ['\r'] = 1, [' '] = 1,
};

/* The unsigned integer token [P, E), or -1 (not one, or past INT64_MAX). */
static int64_t scan_uint(const uint8_t *buf, size_t p, size_t e)
{
	int64_t v;
	size_t q = p;

	if (parse_uint(buf, e, &q, &v) < 0 || q != e)
		return -1;
	return v;
}

/* The scan from P: of an indirect object's value up to its "endobj" or
 * "stream" (INDIRECT), or of one direct object, which ends where its
 * value does (an object stream's member). */
static int scan_value(const uint8_t *buf, size_t len, size_t p, int indirect,
                      int (*fn)(void *, uint32_t), void *arg);

int ps_parse_scan_refs_direct(const uint8_t *buf, size_t len, size_t pos,
                              int (*fn)(void *, uint32_t), void *arg)
{
	int rc = pos <= len ? scan_value(buf, len, pos, 0, fn, arg) : 1;

	return rc == PS_E_NEEDMORE ? 1 : rc; /* the data is all there is */
}

int ps_parse_scan_refs(const uint8_t *buf, size_t len, uint32_t *num, int (*fn)(void *, uint32_t),
                       void *arg)
{
	int64_t v;
	size_t p = 0, e;
	int k;

	/* "N G obj" (header_uint) */
	for (k = 0; k < 3; k++) {
		p = skip_ws(buf, len, p);
		e = p;
		while (e < len && is_regular(buf[e]))
			e++;
		if (e >= len)
			return PS_E_NEEDMORE;
		if (k == 2) {
			if (e - p != 3 || memcmp(buf + p, "obj", 3) != 0)
				return 1;
		} else if ((v = scan_uint(buf, p, e)) < 0 || v > (k ? 65535 : INT32_MAX)) {
			return 1;
		} else if (k == 0) {
			*num = (uint32_t)v;
		}
		p = e;
	}
	return scan_value(buf, len, p, 1, fn, arg);
}

static int scan_value(const uint8_t *buf, size_t len, size_t p, int indirect,
                      int (*fn)(void *, uint32_t), void *arg)
{
	uint8_t open[PS_MAX_DEPTH]; /* '[' or '<' per open container */
	int64_t i1 = -1, i2 = -1;   /* the last two tokens, when unsigned integers */
	int depth = 0, ntop = 0, topdict = 0, rc;
	size_t e;

	for (;;) {
		int64_t v = -1;
		int c;

		p = skip_ws(buf, len, p);
		if (p >= len)
			return PS_E_NEEDMORE;
		c = buf[p];
		if (is_digit(c)) { /* the most common token first */
			uint64_t m = 0;
			for (e = p; e < len && e - p < 18 && is_digit(buf[e]); e++)
				m = m * 10 + (uint64_t)(buf[e] - '0');
			if (e >= len || is_regular(buf[e])) {
				for (; e < len && is_regular(buf[e]); e++)
					;
				if (e >= len)
					return PS_E_NEEDMORE;
				v = scan_uint(buf, p, e);
			} else {
				v = (int64_t)m;
			}
			p = e;
		} else if (c == '/') {
			for (e = p + 1; e < len && is_regular(buf[e]); e++)
				if (buf[e] == '#' && (e + 2 >= len || hex_val(buf[e + 1]) < 0 ||
				                      hex_val(buf[e + 2]) < 0))
					return e + 2 >= len ? PS_E_NEEDMORE : 1;
			if (e >= len)
				return PS_E_NEEDMORE;
			p = e;
		} else if (c == '(') {
			size_t nest = 1;
			for (e = p + 1; nest > 0; e++) {
				if (e >= len)
					return PS_E_NEEDMORE;
				if (buf[e] == '\\')
					e++;
				else if (buf[e] == '(')
					nest++;
				else if (buf[e] == ')')
					nest--;
			}
			p = e;
		} else if (c == '<' || c == '[') {
			if (c == '<' && p + 1 >= len)
				return PS_E_NEEDMORE;
			if (c == '[' || buf[p + 1] == '<') {
				if (depth >= PS_MAX_DEPTH)
					return 1;
				if (depth == 0 && ntop == 0)
					topdict = c == '<';
				open[depth++] = (uint8_t)c;
				p += c == '<' ? 2 : 1;
				i1 = i2 = -1;
				continue; /* a container is one value when it closes */
			}
			for (e = p + 1;
			     e + 8 <= len && (hex_or_space[buf[e]] & hex_or_space[buf[e + 1]] &
			                      hex_or_space[buf[e + 2]] & hex_or_space[buf[e + 3]] &
			                      hex_or_space[buf[e + 4]] & hex_or_space[buf[e + 5]] &
			                      hex_or_space[buf[e + 6]] & hex_or_space[buf[e + 7]]);
			     e += 8)
				; /* the digits eight at a time, then one by one */
			for (; e < len && hex_or_space[buf[e]]; e++)
				;
			if (e >= len)
				return PS_E_NEEDMORE;
			if (buf[e] != '>')
				return 1;
			p = e + 1;
		} else if (c == '>' || c == ']') {
			if (c == '>' && p + 1 >= len)
				return PS_E_NEEDMORE;
			if (depth == 0 || open[depth - 1] != (c == '>' ? '<' : '[') ||
			    (c == '>' && buf[p + 1] != '>'))
				return 1;
			depth--;
			p += c == '>' ? 2 : 1;
		} else if (c == ')' || c == '{' || c == '}') {
			return 1;
		} else {
			for (e = p; e < len && is_regular(buf[e]); e++)
				;
			if (e >= len && !(e - p == 6 && memcmp(buf + p, "endobj", 6) == 0))
				return PS_E_NEEDMORE; /* a longer token?  (the window's
				                       * last "endobj" is one) */
			if (e - p == 1 && c == 'R') {
				if (i1 < 0 || i2 < 0 || i1 > INT32_MAX || i2 > 65535 || depth == 0)
					return 1;
				if ((rc = fn(arg, (uint32_t)i1)) != 0)
					return rc;
				i1 = i2 = -1;
				p = e;
				continue; /* the two integers before it were counted as values */
			} else if ((e - p == 6 && memcmp(buf + p, "endobj", 6) == 0) ||
			           (e - p == 6 && memcmp(buf + p, "stream", 6) == 0)) {
				if (depth != 0 || ntop != 1 || (c == 's' && !topdict))
					return 1;
				return 0;
			} else if (!(c == '+' || c == '-' || c == '.') &&
			           !(e - p == 4 && (memcmp(buf + p, "true", 4) == 0 ||
			                            memcmp(buf + p, "null", 4) == 0)) &&
			           !(e - p == 5 && memcmp(buf + p, "false", 5) == 0)) {
				return 1;
			}
			p = e;
		}
		/* a value ended at P: V if it is an unsigned integer */
		i1 = i2;
		i2 = v;
		if (depth == 0 && ++ntop == 1 && !indirect)
			return v >= 0 ? 1 : 0; /* an integer at the top may be "N G R" */
	}
}

int ps_parse_indirect(ps_ctx *ctx, const uint8_t *buf, size_t len, size_t pos,
                      int64_t base, uint32_t *num, uint16_t *gen, ps_obj **out)
{
	return ps_parse_indirect_in(ctx, NULL, buf, len, pos, base, num, gen, out);
}

int ps_parse_indirect_in(ps_ctx *ctx, ps_arena *ar, const uint8_t *buf, size_t len, size_t pos,
                         int64_t base, uint32_t *num, uint16_t *gen, ps_obj **out)
{
	pstate st;
	int64_t n, g;
	size_t p = pos, e, hdr;
	ps_obj *o = NULL, *s;
	char tmp[40];
	int rc;

	st.ctx = ctx;
	st.buf = buf;
	st.len = len;
	st.base = base;
	st.ar = ar;
	*out = NULL;
	if (pos > len)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              "parse position %zu beyond window of %zu bytes", pos, len);

	hdr = skip_ws(buf, len, p);
	if ((rc = header_uint(&st, &p, INT32_MAX, "object number", &n)) < 0)
		return rc;
	if ((rc = header_uint(&st, &p, 65535, "generation number", &g)) < 0)
		return rc;
	p = skip_ws(buf, len, p);
	if (p >= len)
		return p_needmore(&st, hdr, "object header");
	e = tok_end(&st, p);
	if (e >= len && tok_prefix_of(&st, p, e, "obj"))
		return p_needmore(&st, hdr, "object header");
	if (!tok_is(&st, p, e, "obj"))
		return p_format(&st, p,
		                "expected 'obj' after '%" PRId64 " %" PRId64 "', found a %s", n, g,
		                show(tmp, buf + p, e - p));
	p = e;

	if ((rc = parse_value(&st, &p, &o, 0)) < 0)
		return rc;

	p = skip_ws(buf, len, p);
	e = tok_end(&st, p);
	if (o->kind == PS_DICT) {
		/* the dictionary may still be followed by "stream" */
		if (p >= len || (e >= len && (tok_prefix_of(&st, p, e, "stream") ||
		                              (tok_prefix_of(&st, p, e, "endobj") &&
		                               !tok_is(&st, p, e, "endobj"))))) {
			ps_obj_free(o);
			return p_needmore(&st, hdr, "indirect object");
		}
		if (tok_is(&st, p, e, "stream")) {
			size_t d = e;

			if (buf[d] == '\n') {
				d++;
			} else if (buf[d] == '\r') {
				if (d + 1 >= len) {
					ps_obj_free(o);
					return p_needmore(&st, hdr, "indirect object");
				}
				if (buf[d + 1] == '\n') {
					d += 2;
				} else {
					ps_warn(ctx, "object %" PRId64 " %" PRId64
					        ": 'stream' keyword at offset %" PRId64
					        " is followed by CR alone", n, g, st_off(&st, p));
					d++;
				}
			} else {
				ps_obj_free(o);
				return p_format(&st, p,
				                "'stream' keyword not followed by an end of line");
			}
			s = ps_new_stream(o, NULL, 0);   /* frees O on failure */
			if (!s)
				return p_nomem(&st);
			s->u.stm.off = base + (int64_t)d;
			o = s;
		} else if (!tok_is(&st, p, e, "endobj")) {
			ps_warn(ctx, "object %" PRId64 " %" PRId64 ": missing 'endobj' at offset %"
			        PRId64, n, g, st_off(&st, p));
		}
	} else if (p < len) {
		if (tok_is(&st, p, e, "stream")) {
			ps_obj_free(o);
			return p_format(&st, p,
			                "'stream' after an object that is not a dictionary");
		}
		if (!tok_is(&st, p, e, "endobj") &&
		    !(e >= len && tok_prefix_of(&st, p, e, "endobj")))
			ps_warn(ctx, "object %" PRId64 " %" PRId64 ": missing 'endobj' at offset %"
			        PRId64, n, g, st_off(&st, p));
	}
	*num = (uint32_t)n;
	*gen = (uint16_t)g;
	*out = o;
	return 0;
}

