/* SPDX-License-Identifier: Apache-2.0 */
/* font.h - internal: the stamp's fonts: the set of fonts its text needs
 * (the fonts given, then fontconfig's fallback), shaping (FriBidi +
 * HarfBuzz) into runs of one font, an embedded subset per font used
 * (hb-subset), or a standard-14 font for Latin-1 text (conventions: ps.h).
 * Only stamp.c uses it. */
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
	unsigned char *face;    /* per glyph: its font in the set (owned; NULL for standard 14) */
} ps_line;

/* Opens the font set for TEXT (UTF-8, every line of the stamp; font.c
 * note 1).  SPEC NULL and NMORE 0: the standard-14 Helvetica-Bold
 * (WinAnsiEncoding, nothing embedded) when every character of TEXT is in
 * WinAnsiEncoding.  Otherwise the fonts given, SPEC (if not NULL) then
 * MORE[0..NMORE), each a path (it contains '/') or a fontconfig family, in
 * that order of preference, then for the characters none of them has the
 * installed fonts fontconfig finds (one font that covers all of them if
 * there is one, else a font per character).  PDFSTAMP_E_USAGE names the
 * first character of TEXT no font covers (U+XXXX and the character) and
 * the fonts tried, or a font that cannot be found; a file that is not a
 * font is PDFSTAMP_E_FORMAT. */
int ps_font_open(ps_ctx *ctx, const char *spec, const char *const *more, size_t nmore,
                 const char *text, ps_font **out);

/* Shapes one line (no newline inside) into OUT (freed by ps_font_line_free):
 * runs of one direction, script and font of the set, each shaped with its
 * font (font.c note 2).  Only the text ps_font_open was given is sure to
 * be covered: another character takes the first font of the set that has
 * it, else its neighbour's font (.notdef).  Every line before
 * ps_font_embed (the subsets are fixed then). */
int ps_font_shape(ps_font *f, const char *utf8, size_t len, ps_line *out);
void ps_font_line_free(ps_line *l);

/* Adds the objects of every font of the set that draws a glyph to UP, once
 * (later calls write nothing): for an embedded font the Type 0 font, its
 * CIDFont, descriptor, subset font program (every glyph shaped so far,
 * subset tag in /BaseFont) and ToUnicode CMap; for the standard-14 font
 * the simple font dictionary.  Then, on every call, puts /F1 ... /Fn (the
 * names ps_font_show uses) with references to them into FONTS, the /Font
 * dictionary of an appearance's /Resources. */
int ps_font_embed(ps_font *f, ps_update *up, ps_obj *fonts);

/* Appends to CONTENT the operators that draw L with its left end of the
 * baseline at (X, Y) in size SIZE (between BT and ET, a Tf wherever the
 * font changes; an embedded line with no right-to-left run inside a /Span
 * with /ActualText for extraction, font.c note 3).  Only after
 * ps_font_embed. */
int ps_font_show(ps_font *f, const ps_line *l, double size, double x, double y, ps_buf *content);

void ps_font_free(ps_font *f);

/* ---- for the tests and the fuzz target (fontpdf.c writes through it) ---- */

/* ps_font_open on a font in memory (face 0, DATA copied), which must
 * cover TEXT: a set of that font alone, never the standard-14 font. */
int ps_font_open_mem(ps_ctx *ctx, const uint8_t *data, size_t len, const char *text, ps_font **out);
/* 1 for the standard-14 Helvetica-Bold (its "glyph ids" are WinAnsi codes). */
int ps_font_is_std14(const ps_font *f);
/* The glyph for character C (cmap, before shaping) of the first font of
 * the set that has one: 1 and *GID (and its place in the set, *FACE, if
 * FACE is not NULL), or 0. */
int ps_font_nominal_glyph(ps_font *f, uint32_t c, uint32_t *gid);
int ps_font_char_face(ps_font *f, uint32_t c, size_t *face, uint32_t *gid);
/* The number of fonts in the set (0 for standard 14), the PostScript name
 * of font K, and whether ps_font_embed embedded it (its /F number, else 0). */
size_t ps_font_nfaces(const ps_font *f);
const char *ps_font_face_name(ps_font *f, size_t k);
unsigned ps_font_face_res(const ps_font *f, size_t k);

/* Where ps_font_embed_to puts the objects: ALLOC returns a fresh object
 * number (0 on failure, error set), PUT takes OBJ over (also on failure). */
typedef struct ps_font_sink {
	void *ud;
	uint32_t (*alloc)(void *ud);
	int (*put)(void *ud, uint32_t num, ps_obj *obj);
} ps_font_sink;
/* ps_font_embed with SINK instead of an update. */
int ps_font_embed_to(ps_font *f, const ps_font_sink *sink, ps_obj *fonts);

#endif
