/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serialize.c - writing ps_obj trees in PDF syntax, and the library's one
 * number formatter.
 *
 * DESIGN NOTES
 *
 * What it owns: the bytes of every object the writers emit (incr.c,
 * rewrite.c, the xref writer) and of every real number in a content stream
 * (ps_serialize_real, used by stamp.c).  Output goes to a ps_buf, whose
 * sticky out-of-memory flag the caller checks once; nothing here fails.
 * It reads the model's fields directly and takes the character classes
 * from the lexer (ps_parse_chclass, parse.c), so that what it writes lexes back.
 *
 *  1. Output is locale-independent and uses single spaces:
 *     "<< /Key value /Key2 value2 >>" (empty: "<< >>"), "[a b]", "N G R".
 *     Names escape '#', delimiters, white space and bytes outside
 *     0x21..0x7E as #XX (ISO 32000-2 7.3.5).  Literal strings escape ( ) \
 *     and use \n \r \t \b \f and three-digit octal for the other bytes
 *     outside 0x20..0x7E (7.3.4.2).
 *  2. Strings are written as they are in the model: the caller encrypts
 *     beforehand.  A string parsed as <hex> is written as hex again.
 *  3. A real keeps its original token when it has one (parse.c note 3).
 *     New reals go through ps_serialize_real: at most 6 decimals, trailing
 *     zeros removed and a leading "0" kept ("0.5", "-2.25"); an integral
 *     value is written as an integer ("2"), which ISO 32000-2 7.3.3 allows
 *     wherever a real is expected; a value that rounds to zero is "0"
 *     (never "-0").  NaN and infinities become "0".  No printf with a
 *     radix character is involved, so the C locale does not matter.
 *  4. A PS_STREAM writes its dictionary only; the caller writes "stream",
 *     the data and "endstream".
 *  5. Integers: one digit loop (put_u64w, two digits per division) for
 *     every object number, generation, integer and integral part written
 *     here, and, through ps_serialize_u64, for the fixed-width fields
 *     of the classic xref rows (xrefw.c: ten-digit offsets, five-digit
 *     generations, ISO 32000-2 7.5.4).  A value with more digits than the
 *     width is written whole, as printf's "%0*" would.
 */
#include "config.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

#include "ps.h"

/* ======================================================================
 * Serializer
 * ====================================================================== */

static const char hexdig[] = "0123456789ABCDEF";

static void put_name(ps_buf *b, const char *s, size_t n)
{
	size_t i = 0, r;

	ps_buf_putc(b, '/');
	while (i < n) {
		int c;

		/* a run of bytes written as they are, then one #XX escape */
		for (r = i; r < n && (ps_parse_chclass[(uint8_t)s[r]] & PS_CH_NAME); r++)
			;
		ps_buf_append(b, s + i, r - i);
		if (r >= n)
			break;
		c = (uint8_t)s[r];
		ps_buf_putc(b, '#');
		ps_buf_putc(b, hexdig[c >> 4]);
		ps_buf_putc(b, hexdig[c & 15]);
		i = r + 1;
	}
}

static void put_literal(ps_buf *b, const uint8_t *p, size_t n)
{
	size_t i;

	ps_buf_reserve(b, n + 2);
	ps_buf_putc(b, '(');
	for (i = 0; i < n; i++) {
		int c = p[i];

		switch (c) {
		case '(': case ')': case '\\':
			ps_buf_putc(b, '\\');
			ps_buf_putc(b, c);
			break;
		case '\n': ps_buf_puts(b, "\\n"); break;
		case '\r': ps_buf_puts(b, "\\r"); break;
		case '\t': ps_buf_puts(b, "\\t"); break;
		case '\b': ps_buf_puts(b, "\\b"); break;
		case '\f': ps_buf_puts(b, "\\f"); break;
		default:
			if (c >= 0x20 && c <= 0x7e) {
				size_t r = i + 1;

				/* a run of bytes that need no escape */
				while (r < n && p[r] >= 0x20 && p[r] <= 0x7e && p[r] != '(' &&
				       p[r] != ')' && p[r] != '\\')
					r++;
				ps_buf_append(b, p + i, r - i);
				i = r - 1;
			} else {
				/* always three digits, so a following digit cannot join it */
				ps_buf_putc(b, '\\');
				ps_buf_putc(b, '0' + (c >> 6));
				ps_buf_putc(b, '0' + ((c >> 3) & 7));
				ps_buf_putc(b, '0' + (c & 7));
			}
		}
	}
	ps_buf_putc(b, ')');
}

static void put_hex(ps_buf *b, const uint8_t *p, size_t n)
{
	size_t i;

	if (n < (SIZE_MAX - 2) / 2)
		ps_buf_reserve(b, 2 * n + 2);
	ps_buf_putc(b, '<');
	for (i = 0; i < n; i++) {
		uint8_t pair[2] = {(uint8_t)hexdig[p[i] >> 4], (uint8_t)hexdig[p[i] & 15]};

		ps_buf_append(b, pair, 2);
	}
	ps_buf_putc(b, '>');
}

/* "00" to "99": two digits per division (note 5). */
static const char dig2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Note 5: V in decimal, zero-padded to WIDTH digits (at most 20). */
static inline void put_u64w(ps_buf *b, uint64_t v, unsigned width)
{
	char tmp[24];
	size_t k = sizeof tmp;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		k -= 2;
		memcpy(tmp + k, dig2 + 2 * r, 2);
	}
	if (v >= 10) {
		k -= 2;
		memcpy(tmp + k, dig2 + 2 * v, 2);
	} else {
		tmp[--k] = (char)('0' + v);
	}
	while (sizeof tmp - k < width)
		tmp[--k] = '0';
	ps_buf_append(b, tmp + k, sizeof tmp - k);
}

static void put_u64(ps_buf *b, uint64_t v)
{
	put_u64w(b, v, 1);
}

void ps_serialize_u64(ps_buf *b, uint64_t v, unsigned width)
{
	put_u64w(b, v, width < 20 ? width : 20);
}

void ps_serialize_obj_header(ps_buf *b, uint32_t num, uint16_t gen)
{
	put_u64(b, num);
	ps_buf_putc(b, ' ');
	put_u64(b, gen);
	ps_buf_puts(b, " obj\n");
}

/* Note 3; locale-independent: integer arithmetic on the value scaled by
 * 10^6. */
void ps_serialize_real(ps_buf *b, double v)
{
	int neg = v < 0;
	double a = neg ? -v : v;

	if (!(a <= DBL_MAX)) {          /* NaN or infinity */
		ps_buf_putc(b, '0');
		return;
	}
	if (a < 9.0e12) {
		uint64_t s = (uint64_t)(a * 1e6 + 0.5);
		uint64_t ip = s / 1000000, fp = s % 1000000;

		if (s == 0) {
			ps_buf_putc(b, '0');
			return;
		}
		if (neg)
			ps_buf_putc(b, '-');
		put_u64(b, ip);
		if (fp) {
			char f[7];
			int k;

			for (k = 5; k >= 0; k--) {
				f[k] = (char)('0' + fp % 10);
				fp /= 10;
			}
			for (k = 6; k > 0 && f[k - 1] == '0'; k--)
				;
			ps_buf_putc(b, '.');
			ps_buf_append(b, f, (size_t)k);
		}
		return;
	}
	if (neg)
		ps_buf_putc(b, '-');
	if (a < 1.8e19) {
		put_u64(b, (uint64_t)(a + 0.5));
	} else {
		/* %.0f prints no radix character, so it does not depend on the locale */
		ps_buf_printf(b, "%.0f", a);
	}
}

/* The recursion stays inside this file (no call through the PLT). */
static void ser_obj(ps_buf *b, const ps_obj *o)
{
	size_t i;

	if (!o) {
		ps_buf_puts(b, "null");
		return;
	}
	switch (o->kind) {
	case PS_NULL:
		ps_buf_puts(b, "null");
		break;
	case PS_BOOL:
		ps_buf_puts(b, o->u.b ? "true" : "false");
		break;
	case PS_INT:
		if (o->u.i < 0) {
			ps_buf_putc(b, '-');
			put_u64(b, (uint64_t)0 - (uint64_t)o->u.i);
		} else {
			put_u64(b, (uint64_t)o->u.i);
		}
		break;
	case PS_REAL:
		if (o->u.real.text)
			ps_buf_puts(b, o->u.real.text);
		else
			ps_serialize_real(b, o->u.real.v);
		break;
	case PS_STR:
		if (o->u.str.hex)
			put_hex(b, o->u.str.p, o->u.str.len);
		else
			put_literal(b, o->u.str.p, o->u.str.len);
		break;
	case PS_NAME:
		put_name(b, o->u.name.p, o->u.name.len);
		break;
	case PS_ARRAY:
		ps_buf_putc(b, '[');
		for (i = 0; i < o->u.arr.len; i++) {
			if (i)
				ps_buf_putc(b, ' ');
			ser_obj(b, o->u.arr.items[i]);
		}
		ps_buf_putc(b, ']');
		break;
	case PS_DICT:
		ps_buf_puts(b, "<<");
		for (i = 0; i < o->u.dict.len; i++) {
			ps_buf_putc(b, ' ');
			put_name(b, o->u.dict.ents[i].key, strlen(o->u.dict.ents[i].key));
			ps_buf_putc(b, ' ');
			ser_obj(b, o->u.dict.ents[i].val);
		}
		ps_buf_puts(b, " >>");
		break;
	case PS_REF:
		put_u64(b, o->u.ref.num);
		ps_buf_putc(b, ' ');
		put_u64(b, o->u.ref.gen);
		ps_buf_puts(b, " R");
		break;
	case PS_STREAM:
		ser_obj(b, o->u.stm.dict);
		break;
	}
}


void ps_serialize(ps_buf *b, const ps_obj *o)
{
	ser_obj(b, o);
}
