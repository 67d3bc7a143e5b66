/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text.c - PDF text strings, WinAnsi codes for standard-14 fonts.
 *
 * DESIGN NOTES
 *
 * Text strings (ISO 32000-2 7.9.2.2):
 *  - Writing: a string whose characters are all printable ASCII (plus TAB,
 *    LF, CR, which PDFDocEncoding defines identically) is written as those
 *    bytes; anything else becomes UTF-16BE with the BOM FE FF and surrogate
 *    pairs above U+FFFF.  We never write PDFDocEncoding's non-ASCII half,
 *    so a reader needs no table to read what we write.  U+0000 is refused:
 *    many readers treat it as a terminator.
 *  - Reading: FE FF = UTF-16BE, EF BB BF = UTF-8 (PDF 2.0), FF FE =
 *    UTF-16LE (not in the standard, but written by some broken producers;
 *    a PDFDocEncoded string cannot sensibly start with "ythorn"), else
 *    PDFDocEncoding (Annex D, Table D.2).  Reading is lossy, never fails on
 *    content: an unpaired surrogate, an odd trailing byte, an invalid
 *    UTF-8 sequence or an undefined PDFDocEncoding code becomes U+FFFD.  The
 *    PDF 2.0 language escape (U+001B lang U+001B) inside UTF-16 is dropped.
 *
 * UTF-8 input is validated strictly (RFC 3629): no overlong forms, no
 * surrogates, nothing above U+10FFFF, no truncated sequences.
 *
 * WinAnsiEncoding (Annex D, Table D.2): U+0020..U+007E and U+00A0..U+00FF
 * map to themselves; 27 characters (euro, quotes, dashes, bullet, ...)
 * sit in 0x80..0x9F; LF keeps its code 10 so that a caller may split
 * lines after conversion; every other character has none
 * (ps_text_winansi_code: -1), and font.c then picks a font that has it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Decodes one scalar value from P (N > 0 bytes available).  Returns the
 * number of bytes used, or 0 if the sequence is not strict UTF-8. */
static size_t utf8_decode(const uint8_t *p, size_t n, uint32_t *cp)
{
	uint32_t c = p[0], min;
	size_t need, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xC2 && c <= 0xDF) {
		need = 1;
		c &= 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		c &= 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;       /* continuation byte, C0/C1 overlong lead, F5..FF */
	}
	if (n < need + 1)
		return 0;
	for (i = 1; i <= need; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return need + 1;
}

size_t ps_text_utf8_decode(const uint8_t *p, size_t n, uint32_t *cp)
{
	return utf8_decode(p, n, cp);
}

static void utf8_put(ps_buf *b, uint32_t c)
{
	uint8_t t[4];

	if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		c = 0xFFFD;
	if (c < 0x80) {
		ps_buf_putc(b, (int)c);
	} else if (c < 0x800) {
		t[0] = (uint8_t)(0xC0 | (c >> 6));
		t[1] = (uint8_t)(0x80 | (c & 0x3F));
		ps_buf_append(b, t, 2);
	} else if (c < 0x10000) {
		t[0] = (uint8_t)(0xE0 | (c >> 12));
		t[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
		t[2] = (uint8_t)(0x80 | (c & 0x3F));
		ps_buf_append(b, t, 3);
	} else {
		t[0] = (uint8_t)(0xF0 | (c >> 18));
		t[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
		t[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
		t[3] = (uint8_t)(0x80 | (c & 0x3F));
		ps_buf_append(b, t, 4);
	}
}

/* ---- text strings --------------------------------------------------------- */

static int single_byte_ok(uint32_t c)
{
	return (c >= 0x20 && c <= 0x7E) || c == '\t' || c == '\n' || c == '\r';
}

int ps_text_from_utf8(ps_ctx *ctx, const char *s, size_t len, ps_obj **out)
{
	const uint8_t *p = (const uint8_t *)s;
	ps_buf b = PS_BUF_INIT;
	size_t i, k;
	uint32_t c;
	int wide = 0;

	*out = NULL;
	if (!s && len)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "text: NULL string");
	for (i = 0; i < len; i += k) {
		k = utf8_decode(p + i, len - i, &c);
		if (!k)
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "text is not valid UTF-8 (at byte %zu)", i);
		if (c == 0)
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "text contains a NUL character (at byte %zu)", i);
		if (!single_byte_ok(c))
			wide = 1;
	}
	if (!wide) {
		*out = ps_new_str(len ? (const void *)p : "", len);
		return *out ? 0 : ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	/* ISO 32000-2 7.9.2.2.1: UTF-16BE, BOM first. */
	if (ps_buf_reserve(&b, 2 + 2 * len) == 0) {
		ps_buf_putc(&b, 0xFE);
		ps_buf_putc(&b, 0xFF);
	}
	for (i = 0; i < len; i += k) {
		k = utf8_decode(p + i, len - i, &c);
		if (c >= 0x10000) {
			uint32_t v = c - 0x10000;
			uint32_t hi = 0xD800 | (v >> 10), lo = 0xDC00 | (v & 0x3FF);

			ps_buf_putc(&b, (int)(hi >> 8));
			ps_buf_putc(&b, (int)(hi & 0xFF));
			ps_buf_putc(&b, (int)(lo >> 8));
			ps_buf_putc(&b, (int)(lo & 0xFF));
		} else {
			ps_buf_putc(&b, (int)(c >> 8));
			ps_buf_putc(&b, (int)(c & 0xFF));
		}
	}
	if (!b.oom)
		*out = ps_new_str(b.data, b.len);
	ps_buf_free(&b);
	return *out ? 0 : ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
}

/* PDFDocEncoding codes that differ from Latin-1, ISO 32000-2 Annex D,
 * Table D.2.  0 marks an undefined code (decoded as U+FFFD). */
static const uint16_t pdfdoc_18_1f[8] = {
	0x02D8, /* 18 breve */
	0x02C7, /* 19 caron */
	0x02C6, /* 1A circumflex */
	0x02D9, /* 1B dotaccent */
	0x02DD, /* 1C hungarumlaut */
	0x02DB, /* 1D ogonek */
	0x02DA, /* 1E ring */
	0x02DC, /* 1F tilde */
};

static const uint16_t pdfdoc_80_a0[33] = {
	0x2022, /* 80 bullet */
	0x2020, /* 81 dagger */
	0x2021, /* 82 daggerdbl */
	0x2026, /* 83 ellipsis */
	0x2014, /* 84 emdash */
	0x2013, /* 85 endash */
	0x0192, /* 86 florin */
	0x2044, /* 87 fraction */
	0x2039, /* 88 guilsinglleft */
	0x203A, /* 89 guilsinglright */
	0x2212, /* 8A minus */
	0x2030, /* 8B perthousand */
	0x201E, /* 8C quotedblbase */
	0x201C, /* 8D quotedblleft */
	0x201D, /* 8E quotedblright */
	0x2018, /* 8F quoteleft */
	0x2019, /* 90 quoteright */
	0x201A, /* 91 quotesinglbase */
	0x2122, /* 92 trademark */
	0xFB01, /* 93 fi */
	0xFB02, /* 94 fl */
	0x0141, /* 95 Lslash */
	0x0152, /* 96 OE */
	0x0160, /* 97 Scaron */
	0x0178, /* 98 Ydieresis */
	0x017D, /* 99 Zcaron */
	0x0131, /* 9A dotlessi */
	0x0142, /* 9B lslash */
	0x0153, /* 9C oe */
	0x0161, /* 9D scaron */
	0x017E, /* 9E zcaron */
	0,      /* 9F undefined */
	0x20AC, /* A0 Euro */
};

static uint32_t pdfdoc_to_unicode(uint8_t c)
{
	uint32_t u;

	if (c == '\t' || c == '\n' || c == '\r')
		return c;
	if (c < 0x18)
		return 0xFFFD;
	if (c < 0x20)
		return pdfdoc_18_1f[c - 0x18];
	if (c < 0x7F)
		return c;
	if (c == 0x7F || c == 0xAD)
		return 0xFFFD;
	if (c <= 0xA0) {
		u = pdfdoc_80_a0[c - 0x80];
		return u ? u : 0xFFFD;
	}
	return c;
}

/* PDFDocEncoding from UTF-8 (the legacy password encoding, ISO 32000-1
 * 7.6.3.3 Algorithm 2 step a): the inverse of pdfdoc_to_unicode.  Writes at
 * most MAX bytes (the rest is dropped: passwords are cut to 32 anyway).
 * Returns 0, or -1 when S is not UTF-8 or holds a character PDFDocEncoding
 * lacks. */
int ps_text_pdfdoc_from_utf8(const char *s, size_t len, uint8_t *out, size_t max, size_t *outlen)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, o = 0, k;
	uint32_t c;
	int b;

	while (i < len) {
		if (!(k = utf8_decode(p + i, len - i, &c)))
			return -1;
		i += k;
		for (b = 0; b < 256 && pdfdoc_to_unicode((uint8_t)b) != c; b++)
			;
		if (b == 256 || c == 0xFFFD)
			return -1;
		if (o < max)
			out[o++] = (uint8_t)b;
	}
	*outlen = o;
	return 0;
}

/* UTF-16 (BE or LE) after the BOM. */
static void utf16_to_utf8(const uint8_t *p, size_t len, int le, ps_buf *out)
{
	size_t i = 0;
	int in_lang = 0;

	while (i + 1 < len) {
		uint32_t c = le ? (uint32_t)(p[i] | p[i + 1] << 8)
		                : (uint32_t)(p[i] << 8 | p[i + 1]);

		i += 2;
		if (c >= 0xD800 && c <= 0xDBFF && i + 1 < len) {
			uint32_t d = le ? (uint32_t)(p[i] | p[i + 1] << 8)
			                : (uint32_t)(p[i] << 8 | p[i + 1]);
			if (d >= 0xDC00 && d <= 0xDFFF) {
				c = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
				i += 2;
			}
		}
		/* ISO 32000-2 7.9.2.2.1: ESC lang [country] ESC marks a language. */
		if (c == 0x1B) {
			in_lang = !in_lang;
			continue;
		}
		if (in_lang)
			continue;
		utf8_put(out, c);   /* lone surrogates become U+FFFD there */
	}
	if (i < len)
		utf8_put(out, 0xFFFD);  /* odd trailing byte */
}

int ps_text_to_utf8(ps_ctx *ctx, const uint8_t *p, size_t len, ps_buf *out)
{
	size_t i, k;
	uint32_t c;

	if (!p && len)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "text: NULL string");
	if (len >= 2 && p[0] == 0xFE && p[1] == 0xFF) {
		utf16_to_utf8(p + 2, len - 2, 0, out);
	} else if (len >= 2 && p[0] == 0xFF && p[1] == 0xFE) {
		utf16_to_utf8(p + 2, len - 2, 1, out);
	} else if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
		for (i = 3; i < len; i += k) {
			k = utf8_decode(p + i, len - i, &c);
			if (!k) {
				c = 0xFFFD;
				k = 1;
			}
			utf8_put(out, c);
		}
	} else {
		for (i = 0; i < len; i++)
			utf8_put(out, pdfdoc_to_unicode(p[i]));
	}
	return out->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}

/* WinAnsiEncoding codes 0x80..0x9F, Annex D Table D.2; 0 = undefined. */
static const uint16_t winansi_80_9f[32] = {
	0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
	0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

int ps_text_winansi_code(uint32_t c)
{
	int i;

	if ((c >= 0x20 && c <= 0x7E) || (c >= 0xA0 && c <= 0xFF) || c == '\n')
		return (int)c;
	for (i = 0; i < 32; i++)
		if (winansi_80_9f[i] && winansi_80_9f[i] == c)
			return 0x80 + i;
	return -1;
}
