/* SPDX-License-Identifier: Apache-2.0 */
/* font.h - internal: the stamp's fonts: choice (fontconfig), shaping
 * (FriBidi + HarfBuzz), the embedded subset (hb-subset) or a standard-14
 * font for Latin-1 text (conventions: ps.h).  Only stamp.c uses it. */
#ifndef PS_FONT_H
#define PS_FONT_H

#include "ps.h"
#include "incr.h"

typedef struct ps_font ps_font;

/* A shaped line, glyphs in visual order (left to right), in units of
 * 1/1000 of the font size. */
typedef struct ps_line {
	size_t n;               /* glyphs */
	uint32_t *gid;          /* the font's glyph ids; WinAnsi codes for standard 14 (owned) */
	double *x, *y;          /* pen position of each glyph from the line's start (owned) */
	double width;           /* advance of the whole line */
	double ascent;          /* highest inked point above the baseline (>= 0) */
	double descent;         /* lowest inked point below it (<= 0) */
	char *text;             /* the line's UTF-8 text (owned, for /ActualText) */
	int rtl;                /* it has a right-to-left run (then no
	                         * /ActualText: font.c note 3) */
	unsigned char *run_rtl; /* per glyph: 1 inside a right-to-left run
	                         * (owned; NULL for standard 14) */
	uint32_t *lkey;         /* per glyph: its place in logical order, 64 * cluster + index in
	                           the cluster (owned; NULL for standard 14): font.c note 4 */
} ps_line;

/* Opens the font for TEXT (UTF-8, every line of the stamp).  SPEC NULL: a
 * standard-14 font (Helvetica-Bold, WinAnsiEncoding, nothing embedded)
 * when every character of TEXT is in WinAnsiEncoding, else the font
 * fontconfig finds that covers every character.  SPEC a path (it contains
 * '/') or a fontconfig family: that font, which must cover every character.
 * PDFSTAMP_E_USAGE (exit 2) names the first character no usable font covers
 * or a font that cannot be found; a file that is not a font is
 * PDFSTAMP_E_FORMAT. */
int ps_font_open(ps_ctx *ctx, const char *spec, const char *text, ps_font **out);

/* Shapes one line (no newline inside) into OUT (freed by ps_font_line_free). */
int ps_font_shape(ps_font *f, const char *utf8, size_t len, ps_line *out);
void ps_font_line_free(ps_line *l);

/* Adds the font's objects to UP once (later calls return the same number):
 * for an embedded font the Type 0 font, its CIDFont, descriptor, subset
 * font program (every glyph shaped so far, subset tag in /BaseFont) and
 * ToUnicode CMap; for a standard-14 font the simple font dictionary.
 * *NUM is the object to put under the appearance's /Resources /Font. */
int ps_font_embed(ps_font *f, ps_update *up, uint32_t *num);

/* Appends to CONTENT the operators that draw L with its left end of the
 * baseline at (X, Y) in size SIZE with font resource NAME (between BT and
 * ET; an embedded font's left-to-right line inside a /Span with /ActualText
 * for extraction, font.c note 3).  Only after ps_font_embed. */
int ps_font_show(ps_font *f, const ps_line *l, const char *name, double size, double x, double y,
                 ps_buf *content);

void ps_font_free(ps_font *f);

/* ---- for the tests and the fuzz target (fontpdf.c writes through it) ---- */

/* ps_font_open on a font in memory (face 0, DATA copied), never the
 * standard-14 font. */
int ps_font_open_mem(ps_ctx *ctx, const uint8_t *data, size_t len, const char *text, ps_font **out);
/* 1 for the standard-14 Helvetica-Bold (its "glyph ids" are WinAnsi codes). */
int ps_font_is_std14(const ps_font *f);
/* The font's glyph for character C (cmap, before shaping): 1 and *GID, or 0. */
int ps_font_nominal_glyph(ps_font *f, uint32_t c, uint32_t *gid);

/* Where ps_font_embed_to puts the objects: ALLOC returns a fresh object
 * number (0 on failure, error set), PUT takes OBJ over (also on failure). */
typedef struct ps_font_sink {
	void *ud;
	uint32_t (*alloc)(void *ud);
	int (*put)(void *ud, uint32_t num, ps_obj *obj);
} ps_font_sink;
/* ps_font_embed with SINK instead of an update. */
int ps_font_embed_to(ps_font *f, const ps_font_sink *sink, uint32_t *num);

#endif
