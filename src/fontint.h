/* SPDX-License-Identifier: Apache-2.0 */
/* fontint.h - internal to font.c and fontpdf.c: the font set and its faces
 * (see the notes atop font.c and fontpdf.c; conventions: ps.h). */
#ifndef PS_FONTINT_H
#define PS_FONTINT_H

#include <hb.h>

#include "font.h"

#define PS_FONT_MAX_FILE (64 << 20)     /* bytes of a font file */
#define PS_FONT_MAX_CHARS 10000         /* characters of text per call */
#define PS_FONT_MAX_GLYPH_TEXT 64       /* code points a glyph stands for in the CMap */
#define PS_FONT_MAX_FACES 24            /* fonts of a set, given and fallback together */

/* A glyph shaped so far (font.c) and what the subset made of it (fontpdf.c). */
typedef struct ps_font_glyph {
	uint32_t gid;           /* in the font */
	double w;               /* advance, 1/1000 em, rounded as written in /W */
	uint32_t *text;         /* the text it stands for (ToUnicode), owned; may be NULL */
	size_t ntext;
	int in_subset;          /* set by ps_font_embed */
	uint32_t cid;           /* its code (= CID) in the content, after ps_font_embed */
} ps_font_glyph;

/* One font of the set: a face of a font file, its glyphs used so far and,
 * once embedded, its objects. */
typedef struct ps_face {
	ps_ctx *ctx;
	hb_face_t *face;
	hb_font_t *font;        /* scaled to font units */
	unsigned upem;
	int cff;                /* CFF outlines (else glyf) */
	ps_font_glyph *glyphs;  /* sorted by gid; capacity implied (ps_vec_grow) */
	size_t nglyphs;
	char *psname;
	char *file;             /* the file it came from (owned; NULL from memory) */
	unsigned index;         /* its face in that file */
	uint32_t embedded_num;  /* its Type 0 font, 0 before ps_font_embed */
	unsigned res;           /* its resource name is /F<res>; 0: draws nothing */
	int sealed;             /* the set was embedded: no new glyphs */
} ps_face;

struct ps_font {
	ps_ctx *ctx;
	int std14;              /* Helvetica-Bold, WinAnsi; no faces */
	ps_face *faces[PS_FONT_MAX_FACES]; /* in order of preference (font.c note 1) */
	size_t nfaces;
	int embedded;           /* ps_font_embed has written every used face */
	uint32_t std14_num;     /* the standard-14 font's dictionary, once written */
};

/* Appends code point C as UTF-16BE hex digits (a surrogate pair above
 * U+FFFF): /ActualText and the ToUnicode CMap. */
void ps_font_put_utf16(ps_buf *b, uint32_t c);

/* Sets F->psname: the PostScript name ('name' ID 6), printable ASCII
 * that needs no escape in a name, at most 63 bytes (fontpdf.c note 2). */
int ps_font_psname(ps_face *f);

/* v rounded to 1/1000: what the content and /W say. */
double ps_font_milli(double v);

#endif
