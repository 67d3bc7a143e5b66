/* SPDX-License-Identifier: Apache-2.0 */
/*
 * qr.c - QR codes in stamps: a string encoded by libqrencode (opened on
 * first use by extlib.c) and drawn as vector paths in the stamp's
 * appearance.
 *
 * DESIGN NOTES
 *
 *  1. Encoding (ISO/IEC 18004:2015).  The string is UTF-8 and goes in as
 *     its bytes, in one byte-mode segment (7.4.5), whatever characters it
 *     holds, so that the limit is a number of bytes the user can count:
 *     a version 40 symbol holds 2953, 2331, 1663 or 1273 bytes at levels
 *     L, M, Q and H (Table 7: its data codewords less the mode indicator
 *     and the 16-bit count).  A string that is not all ASCII is preceded
 *     by the ECI designator 000026, UTF-8 (7.4.2.2), one byte of the
 *     capacity: without it decoders guess the charset of byte mode, and
 *     zbar reads a short UTF-8 string such as "Größe" as Shift JIS.  An
 *     ASCII string gets no ECI header (the same bytes in every charset;
 *     some older readers stumble on ECI).  libqrencode chooses the
 *     smallest version that holds the segment and the mask (7.8.3).
 *  2. Refusals, before anything is written (stamp.c note 3): an empty
 *     string, one that is not UTF-8 (the ECI header would lie), an unknown
 *     level and a string longer than the level holds (capacity_of) are
 *     PDFSTAMP_E_USAGE, the last naming the limit; the length is checked
 *     before libqrencode is called, and its ERANGE (which it should never
 *     return then) is mapped to the same message.  A missing libqrencode is extlib.c's
 *     PDFSTAMP_E_IO.
 *  3. What is drawn.  The symbol (width w modules, 21 to 177) and its
 *     quiet zone of PS_QR_QUIET (4) light modules on every side (6.3.8),
 *     n = w + 8 modules in all, as one square:
 *         q  m 0 0 m x y cm        one unit = one module, origin at the
 *                                  lower left corner of the quiet zone
 *         1 g 0 0 n n re f         light: the whole square, white
 *         0 g  c r l 1 re ...  f   dark: one rectangle per horizontal run
 *         Q                        of dark modules, all in one path
 *     Light is white and dark is black whatever the stamp's colour, which
 *     may be too light to scan, and the white square covers whatever lies
 *     under it (the page, the stamp's image), so that it scans on any
 *     page.  The runs are filled by one f (nonzero rule; they never
 *     overlap): anti-aliasing renderers leave no seams between rows, as
 *     they may between separately filled rectangles.  The coordinates in
 *     module units are small integers: about 11 bytes a run, 3.8 KB for a
 *     60-character URL at level M (version 4), 110 KB at version 40,
 *     before stamp.c deflates them (note 12 there).  m, x and y are
 *     rounded to 1/1000 (stamp.c note 7).
 *  4. Size.  The caller chooses the square's side; stamp.c keeps modules
 *     at least PS_QR_MIN_MODULE (1.5 pt: 3.1 pixels at 150 dpi) wide
 *     when it chooses the box, and warns when a --rect or a small page
 *     makes them smaller.
 *  5. The module matrix is copied (one byte a module, 1 = dark) and
 *     libqrencode's QRcode freed at once: nothing of the library is kept.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qr.h"
#include "extlib.h"
#include "obj.h"
#include "text.h"

#define QR_MAX_WIDTH 177   /* version 40 */
#define QR_ECI_UTF8 26     /* ISO/IEC 18004 7.4.2.2; AIM ECI assignment */

struct ps_qr {
	uint32_t width;        /* modules of the symbol, without the quiet zone */
	uint8_t *dark;         /* width x width, row 0 at the top, 1 = dark */
};

/* Bytes in one byte-mode segment at version 40 (note 1), per level. */
static const size_t capacity[4] = {2953, 2331, 1663, 1273};
static const char level_name[4] = {'L', 'M', 'Q', 'H'};

/* The most bytes a symbol of LEVEL holds (version 40, byte mode; one less
 * when the string is not ASCII: the ECI header, note 1). */
static size_t capacity_of(enum pdfstamp_qr_level level, int ascii)
{
	return capacity[level] - (ascii ? 0 : 1);
}

/* 1 if S holds only ASCII; 0 if it is UTF-8 with other characters; -1 if
 * it is not UTF-8. */
static int utf8_kind(const uint8_t *s, size_t len)
{
	size_t i = 0, k;
	uint32_t cp;
	int ascii = 1;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (!(k = ps_text_utf8_decode(s + i, len - i, &cp)))
			return -1;
		ascii = 0;
		i += k;
	}
	return ascii;
}

int ps_qr_encode(ps_ctx *ctx, const char *s, size_t len, enum pdfstamp_qr_level level,
                 ps_qr **out)
{
	static const QRecLevel lv[4] = {QR_ECLEVEL_L, QR_ECLEVEL_M, QR_ECLEVEL_Q, QR_ECLEVEL_H};
	QRinput *in = NULL;
	QRcode *code = NULL;
	ps_qr *q = NULL;
	size_t i, n;
	int ascii, rc, e;

	*out = NULL;
	if ((unsigned)level > PDFSTAMP_QR_H)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "unknown QR error-correction level %d",
		              (int)level);
	if (!s || !len)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the QR code's string is empty");
	if ((ascii = utf8_kind((const uint8_t *)s, len)) < 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the QR code's string is not valid UTF-8");
	if (len > capacity_of(level, ascii))
		goto too_long;
	if ((rc = ps_ext_need(ctx, PS_EXT_QR)) < 0) /* extlib.c note 3 */
		return rc;
	errno = 0;
	if (!(in = PS_X(QRinput_new2)(0, lv[level])) ||
	    (!ascii && PS_X(QRinput_appendECIheader)(in, QR_ECI_UTF8) < 0) ||
	    PS_X(QRinput_append)(in, QR_MODE_8, (int)len, (const unsigned char *)s) < 0 ||
	    !(code = PS_X(QRcode_encodeInput)(in))) {
		e = errno;
		if (in)
			PS_X(QRinput_free)(in);
		if (e == ERANGE)
			goto too_long;
		if (e == ENOMEM)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "libqrencode could not encode the QR "
		              "code's string (errno %d)", e);
	}
	PS_X(QRinput_free)(in);
	/* note 5: a copy of the matrix; trust nothing of its size */
	if (code->width < 21 || code->width > QR_MAX_WIDTH || !code->data) {
		e = code->width;
		PS_X(QRcode_free)(code);
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "libqrencode made a symbol of %d modules",
		              e);
	}
	n = (size_t)code->width * (size_t)code->width;
	if (!(q = calloc(1, sizeof *q)) || !(q->dark = malloc(n))) {
		free(q);
		PS_X(QRcode_free)(code);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	q->width = (uint32_t)code->width;
	for (i = 0; i < n; i++)
		q->dark[i] = code->data[i] & 1; /* bit 0: dark (qrencode.h) */
	PS_X(QRcode_free)(code);
	*out = q;
	return 0;
too_long:
	return ps_err(ctx, PDFSTAMP_E_USAGE,
	              "the QR code's string is %zu bytes; a QR code of level %c holds at most "
	              "%zu bytes of %s (a lower level holds more: L %zu, M %zu, Q %zu, H %zu)",
	              len, level_name[level], capacity_of(level, ascii),
	              ascii ? "ASCII" : "UTF-8 text that is not all ASCII",
	              capacity_of(PDFSTAMP_QR_L, ascii), capacity_of(PDFSTAMP_QR_M, ascii),
	              capacity_of(PDFSTAMP_QR_Q, ascii), capacity_of(PDFSTAMP_QR_H, ascii));
}

uint32_t ps_qr_modules(const ps_qr *q)
{
	return q->width + 2 * PS_QR_QUIET;
}

static double milli(double v)
{
	return llround(v * 1000.0) / 1000.0;
}

void ps_qr_draw(const ps_qr *q, double x, double y, double side, ps_buf *c)
{
	uint32_t n = ps_qr_modules(q), r, col, end;
	double m = milli(side / n);

	ps_buf_puts(c, "q ");
	ps_serialize_real(c, m);
	ps_buf_puts(c, " 0 0 ");
	ps_serialize_real(c, m);
	ps_buf_putc(c, ' ');
	ps_serialize_real(c, milli(x));
	ps_buf_putc(c, ' ');
	ps_serialize_real(c, milli(y));
	ps_buf_printf(c, " cm\n1 g 0 0 %u %u re f\n0 g\n", n, n);
	for (r = 0; r < q->width; r++) {
		const uint8_t *row = q->dark + (size_t)r * q->width;
		int any = 0;
		for (col = 0; col < q->width; col = end) {
			if (!row[col]) {
				end = col + 1;
				continue;
			}
			for (end = col; end < q->width && row[end]; end++)
				;
			/* row 0 is the top: its lower edge is n - QUIET - 1 */
			ps_buf_printf(c, "%s%u %u %u 1 re", any ? " " : "", col + PS_QR_QUIET,
			              n - PS_QR_QUIET - 1 - r, end - col);
			any = 1;
		}
		if (any)
			ps_buf_putc(c, '\n');
	}
	ps_buf_puts(c, "f Q\n");
}

void ps_qr_free(ps_qr *q)
{
	if (!q)
		return;
	free(q->dark);
	free(q);
}
