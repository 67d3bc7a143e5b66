/* SPDX-License-Identifier: Apache-2.0 */
/*
 * font.c - the stamp's fonts: which fonts (the set: the fonts given, then
 * fontconfig's fallback), shaping (FriBidi + HarfBuzz, runs of one font),
 * and what is drawn with them.  The embedded subsets and their PDF
 * objects are in fontpdf.c.
 *
 * DESIGN NOTES
 *
 *  1. Selection (ps_font_open): a set of fonts, in order of preference.
 *     The text is strict UTF-8 (text.c); LF separates lines and is never
 *     drawn (nor the CR of a CR LF); other C0 and C1 control characters
 *     are refused (PDFSTAMP_E_USAGE).
 *       - No font given and every character in WinAnsiEncoding (Annex
 *         D.2): the standard-14 Helvetica-Bold alone, nothing embedded
 *         (ISO 32000-2 9.6.2.2), a simple font whose codes are WinAnsi
 *         bytes; its widths and vertical extents are the table below, so
 *         Latin-1 stamps cost what they always did (the same bytes).
 *       - Otherwise first the fonts given (stamp options font, then
 *         fonts[]), in that order, each whatever it covers of the text:
 *         a SPEC containing '/' is that font file (face 0 of a
 *         collection), else a fontconfig pattern ("Noto Sans", "DejaVu
 *         Sans:bold") naming a family: of the installed fonts of that
 *         family (compared without case) that can be embedded, the one
 *         whose charset has the most characters of the text, the first in
 *         fontconfig's order for the pattern (bold unless it says) among
 *         equals.  A family no installed font has, a file that cannot be
 *         read or whose OS/2 fsType forbids embedding: PDFSTAMP_E_USAGE.
 *         A font given twice is in the set once.
 *       - Then, if characters remain that no font of the set has,
 *         fontconfig's fallback: the installed fonts sorted for
 *         "sans-serif, bold" (FcFontSort, every font); the first that has
 *         all of them joins the set (so text one installed font covers is
 *         drawn with that font alone, as before the set existed), else,
 *         in the order of the text, for each character still missing the
 *         first font that has it.  Only fonts PDF can carry are taken
 *         (TrueType or CFF outlines, not variable fonts, embedding
 *         permitted), and one whose cmap lacks what its fontconfig
 *         charset claims is passed over.
 *     fontconfig runs on a private FcConfig, loaded at most once per call
 *     and only when a family is named or a fallback is needed, and
 *     destroyed at its end; every fontconfig call of one ps_font_open is
 *     inside one ps_ext_fc_enter/leave (extlib.c note 4).  FcFini is never
 *     called: the application may use fontconfig too.  fontconfig keeps
 *     process-wide state of its own, initialised once and thread-safe
 *     since 2.10: its table of mapped cache files, default languages,
 *     program name; that is what LeakSanitizer may report at exit, never
 *     per call.
 *     Coverage ignores LF, CR and the default-ignorable format characters
 *     HarfBuzz never draws (ZWJ, ZWNJ, bidi controls, variation
 *     selectors).  A character no font of the set has, after the
 *     fallback: PDFSTAMP_E_USAGE (hint PDFSTAMP_HINT_FONT) naming the
 *     first such character of the text as U+XXXX and as itself, and the
 *     fonts given ("tried 'A', '/b.ttf', then every installed font").
 *     A file that is not a font, is truncated (a table past its end),
 *     lacks a required table (cmap head hhea hmtx maxp, and glyf+loca or
 *     CFF), has no glyphs or a 'head' table without its magic number or
 *     with a unitsPerEm outside 16..16384: PDFSTAMP_E_FORMAT; CFF2 (no PDF
 *     font type carries it): PDFSTAMP_E_UNSUPPORTED.  An installed font
 *     that fails so is passed over; a font given fails the call.
 *  2. Shaping (ps_font_shape), per line: FriBidi resolves the embedding
 *     levels (UAX #9 P2-I2 and L1, base direction from the first strong
 *     character); the line is cut into runs of one level and one script
 *     (Common and Inherited characters join their neighbour's script), the
 *     runs are put in visual order by rule L2 (reverse every sequence of
 *     runs at level >= k, for k from the highest level down to the lowest
 *     odd one), and each run is shaped by HarfBuzz with its direction
 *     (odd level: RTL) and script, the whole line passed as context so
 *     that Arabic joins across run ends (also across a change of font).
 *     Each run of one level and script is then cut where the font
 *     changes, before rule L2, so that the pieces of a right-to-left run
 *     are reordered too: the run takes the first font of the set that has
 *     all its characters; failing that each letter takes the font of the
 *     letter before it in the run if that has it, else the first font
 *     that has it, and the other characters (Common and Inherited script:
 *     spaces, digits, punctuation, combining marks; format characters)
 *     the font of the character before them, else of the letter after
 *     them, if it has them, else the first font that has them.  So
 *     clusters and words stay in one font where one can draw them.
 *     HarfBuzz returns an RTL run's glyphs in visual order already.
 *     Positions are font units scaled to 1/1000 em (of each run's font);
 *     ascent and descent are the inked extents of the glyphs used, with
 *     their y offsets (marks).
 *  3. Extraction.  The glyphs of a shaped cluster, taken in logical
 *     order, get one code point of the cluster's text each and the last
 *     one the rest (a ligature or conjunct glyph: several; a glyph beyond
 *     the text: none), so that a reader concatenating ToUnicode text in
 *     drawing order gets the cluster back (Devanagari 'ि' drawn before
 *     its consonant included).  The CMap keeps the first text a glyph
 *     got.  As a glyph can stand for other text elsewhere, ps_font_show
 *     also wraps a left-to-right line in a /Span with /ActualText (ISO
 *     32000-2 14.9.4), which poppler prefers.  Not a line with a
 *     right-to-left run: poppler 22.12 reverses an /ActualText of RTL
 *     text, while it orders the glyphs' own ToUnicode text by position
 *     correctly.  MuPDF 1.21 and pdf.js ignore /ActualText and report
 *     glyphs in drawing order (note 4); pdf.js splits them into items
 *     at the TJ adjustments.
 *  4. Drawing (ps_font_show).  Standard 14: exactly "BT /F1 Sz Tf x y Td
 *     (bytes) Tj ET", the operators stamp.c always wrote.  Embedded: the
 *     font of the set is the resource /F<k> ps_font_embed named it
 *     (fontpdf.c note 5); "BT /Fk Sz Tf x y Td", then TJ arrays of 2-byte
 *     CIDs (Identity-H, 9.7.5.2), and where the font changes "] TJ /Fm
 *     Sz Tf [": Tf leaves the text position where the last glyph put it
 *     (9.3.1), so the adjustments of one line go on across fonts.  With a
 *     single font the content is what it was before sets existed.  The
 *     adjustments
 *     move each glyph from where the /W width of the previous glyph leaves
 *     the pen to its shaped position (9.4.3, 9.4.4); a change of y
 *     (marks) ends the array and sets the text rise (Ts, 9.3.7), reset to
 *     0 afterwards.  A line with a right-to-left run is drawn in logical
 *     order (by cluster, then by the glyph's place in its cluster, each
 *     glyph positioned by the TJ adjustment): readers that list glyphs in
 *     drawing order (MuPDF) then extract the text in logical order, also
 *     when a right-to-left line holds numbers or Latin words (whose runs
 *     rule L2 moved), and poppler, which sorts by position, still does.
 *     CIDs are known only once the subset exists, hence "only after
 *     ps_font_embed".
 *  5. Limits: a font file of at most 64 MiB, unitsPerEm 16..16384, at
 *     most 10,000 characters of text, 64 code points of text per glyph in
 *     the CMap and 24 fonts in a set (given and fallback: "the text needs
 *     more than 24 fonts", PDFSTAMP_E_USAGE).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extlib.h"

#include "ps.h"
#include "fontint.h"

/* Helvetica-Bold metrics for WinAnsi codes 32..255: advance width, ymax,
 * ymin of the glyph's bounding box in 1/1000 em.  Source: Adobe's
 * Helvetica-Bold AFM (core 14, Version 003.001, 1999), as converted by
 * GNU afmtodit into groff's devps/HB font description (width,height,depth)
 * and mapped through the WinAnsiEncoding glyph names of Annex D.2; the
 * undefined codes 127, 129, 141, 143, 144 and 157 carry bullet's metrics
 * (text.c never produces them).  Code 39 is quotesingle and 96 grave. */
static const short helvb[224][3] = {
	{278, 0, 0}, {333, 718, 0}, {474, 718, 0}, {556, 698, 0},
	{556, 775, -115}, {889, 710, -19}, {722, 718, -19}, {238, 718, 0},
	{333, 734, -208}, {333, 734, -208}, {389, 718, 0}, {584, 506, 0},
	{278, 146, -168}, {333, 345, 0}, {278, 146, 0}, {278, 737, -19},
	{556, 710, -19}, {556, 710, 0}, {556, 710, 0}, {556, 710, -19},
	{556, 710, 0}, {556, 698, -19}, {556, 710, -19}, {556, 698, 0},
	{556, 710, -19}, {556, 710, -19}, {333, 512, 0}, {333, 512, -168},
	{584, 514, -8}, {584, 419, 0}, {584, 514, -8}, {611, 727, 0},
	{975, 737, -19}, {722, 718, 0}, {722, 718, 0}, {722, 737, -19},
	{722, 718, 0}, {667, 718, 0}, {611, 718, 0}, {778, 737, -19},
	{722, 718, 0}, {278, 718, 0}, {556, 718, -18}, {722, 718, 0},
	{611, 718, 0}, {833, 718, 0}, {722, 718, 0}, {778, 737, -19},
	{667, 718, 0}, {778, 737, -52}, {722, 718, 0}, {667, 737, -19},
	{611, 718, 0}, {722, 718, -19}, {667, 718, 0}, {944, 718, 0},
	{667, 718, 0}, {667, 718, 0}, {611, 718, 0}, {333, 722, -196},
	{278, 737, -19}, {333, 722, -196}, {584, 698, 0}, {556, 0, -125},
	{333, 750, 0}, {556, 546, -14}, {611, 718, -14}, {556, 546, -14},
	{611, 718, -14}, {556, 546, -14}, {333, 727, 0}, {611, 546, -217},
	{611, 718, 0}, {278, 725, 0}, {278, 725, -214}, {556, 718, 0},
	{278, 718, 0}, {889, 546, 0}, {611, 546, 0}, {611, 546, -14},
	{611, 546, -207}, {611, 546, -207}, {389, 546, 0}, {556, 546, -14},
	{333, 676, -6}, {611, 532, -14}, {556, 532, 0}, {778, 532, 0},
	{556, 532, 0}, {556, 532, -214}, {500, 532, 0}, {389, 722, -196},
	{280, 775, -225}, {389, 722, -196}, {584, 343, 0}, {350, 524, 0},
	{556, 710, -19}, {350, 524, 0}, {278, 127, -146}, {556, 737, -210},
	{500, 127, -146}, {1000, 146, 0}, {556, 718, -171}, {556, 718, -171},
	{333, 750, 0}, {1000, 710, -19}, {667, 936, -19}, {333, 484, 0},
	{1000, 737, -19}, {350, 524, 0}, {611, 936, 0}, {350, 524, 0},
	{350, 524, 0}, {278, 727, 0}, {278, 718, 0}, {500, 727, 0},
	{500, 718, 0}, {350, 524, 0}, {556, 333, 0}, {1000, 333, 0},
	{333, 737, 0}, {1000, 718, 0}, {556, 750, -14}, {333, 484, 0},
	{944, 546, -14}, {350, 524, 0}, {500, 750, 0}, {667, 915, 0},
	{278, 0, 0}, {333, 532, -186}, {556, 628, -118}, {556, 718, -16},
	{556, 636, 0}, {556, 698, 0}, {280, 700, -150}, {556, 727, -184},
	{333, 729, 0}, {737, 737, -19}, {370, 737, 0}, {556, 484, 0},
	{584, 419, 0}, {333, 345, 0}, {737, 737, -19}, {333, 678, 0},
	{400, 712, 0}, {584, 506, 0}, {333, 710, 0}, {333, 710, 0},
	{333, 750, 0}, {611, 532, -207}, {556, 700, -191}, {278, 334, 0},
	{333, 0, -228}, {333, 710, 0}, {365, 737, 0}, {556, 484, 0},
	{834, 710, -19}, {834, 710, -19}, {834, 710, -19}, {611, 532, -195},
	{722, 936, 0}, {722, 936, 0}, {722, 936, 0}, {722, 923, 0},
	{722, 915, 0}, {722, 962, 0}, {1000, 718, 0}, {722, 737, -228},
	{667, 936, 0}, {667, 936, 0}, {667, 936, 0}, {667, 915, 0},
	{278, 936, 0}, {278, 936, 0}, {278, 936, 0}, {278, 915, 0},
	{722, 718, 0}, {722, 923, 0}, {778, 936, -19}, {778, 936, -19},
	{778, 936, -19}, {778, 923, -19}, {778, 915, -19}, {584, 505, 0},
	{778, 745, -27}, {722, 936, -19}, {722, 936, -19}, {722, 936, -19},
	{722, 915, -19}, {667, 936, 0}, {667, 718, 0}, {611, 731, -14},
	{556, 750, -14}, {556, 750, -14}, {556, 750, -14}, {556, 737, -14},
	{556, 729, -14}, {556, 776, -14}, {889, 546, -14}, {556, 546, -228},
	{556, 750, -14}, {556, 750, -14}, {556, 750, -14}, {556, 729, -14},
	{278, 750, 0}, {278, 750, 0}, {278, 750, 0}, {278, 729, 0},
	{611, 737, -14}, {611, 737, 0}, {611, 750, -14}, {611, 750, -14},
	{611, 750, -14}, {611, 737, -14}, {611, 729, -14}, {584, 548, -42},
	{611, 560, -29}, {611, 750, -14}, {611, 750, -14}, {611, 750, -14},
	{611, 729, -14}, {556, 750, -214}, {611, 718, -208}, {556, 729, -214},
};

double ps_font_milli(double v)
{
	return llround(v * 1000.0) / 1000.0;
}

/* ---- text ------------------------------------------------------------------ */

/* Decodes UTF-8 S[0..LEN) into *OUT (malloc'ed, *N code points). */
static int decode(ps_ctx *ctx, const char *s, size_t len, uint32_t **out, size_t *n)
{
	uint32_t *cp;
	size_t i, k, m = 0;

	*out = NULL;
	*n = 0;
	if (!s && len)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "text: NULL string");
	if (len > PS_FONT_MAX_CHARS * 4)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the text is too long (at most %d characters)",
		              PS_FONT_MAX_CHARS);
	if (!(cp = malloc((len ? len : 1) * sizeof *cp)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < len; i += k) {
		k = ps_text_utf8_decode((const uint8_t *)s + i, len - i, &cp[m]);
		if (!k) {
			free(cp);
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "text is not valid UTF-8 (at byte %zu)", i);
		}
		if (cp[m] == 0) {
			free(cp);
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "text contains a NUL character (at byte %zu)", i);
		}
		if ((cp[m] < 0x20 && cp[m] != '\n' && cp[m] != '\r') ||
		    (cp[m] >= 0x7F && cp[m] < 0xA0)) {
			uint32_t c = cp[m];
			free(cp);
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "text contains the control character U+%04X (at byte %zu)",
			              (unsigned)c, i);
		}
		m++;
	}
	if (m > PS_FONT_MAX_CHARS) {
		free(cp);
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the text is too long (at most %d characters)",
		              PS_FONT_MAX_CHARS);
	}
	*out = cp;
	*n = m;
	return 0;
}

/* Characters no font needs to have: LF, CR (of CR LF; stamp.c drops it)
 * and the default-ignorable format
 * characters HarfBuzz hides (UAX #44 Default_Ignorable_Code_Point, the
 * ones text uses). */
static int ignorable(uint32_t c)
{
	return c == '\n' || c == '\r' || c == 0x00AD || c == 0x034F ||
	       (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
	       (c >= 0x2060 && c <= 0x2069) || (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF ||
	       (c >= 0xE0100 && c <= 0xE01EF);
}

/* ---- loading a font file ------------------------------------------------------ */


/* The sfnt table directory of face INDEX (a collection's too): every
 * table inside the file, the tables a PDF font program needs present.
 * Sets *CFF for CFF outlines. */
static int check_sfnt(ps_ctx *ctx, const uint8_t *d, size_t n, unsigned index, const char *what,
                      int *cff)
{
	enum { CMAP = 1, HEAD = 2, HHEA = 4, HMTX = 8, MAXP = 16, GLYF = 32, LOCA = 64,
	       CFF = 128, CFF2 = 256 };
	static const char *const tags[] = {"cmap", "head", "hhea", "hmtx", "maxp",
	                                   "glyf", "loca", "CFF ", "CFF2"};
	uint64_t off = 0;
	unsigned have = 0, nt, i, k;

	if (n >= 12 && memcmp(d, "ttcf", 4) == 0) {
		if (ps_be32(d + 8) <= index || n < 16 + 4 * (uint64_t)index)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: the font collection is damaged",
			              what);
		off = ps_be32(d + 12 + 4 * index);
	}
	if (off + 12 > n)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%s is not a font file (TrueType, OpenType or a collection)", what);
	if (ps_be32(d + off) != 0x00010000 && memcmp(d + off, "OTTO", 4) != 0 &&
	    memcmp(d + off, "true", 4) != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%s is not a font file (TrueType, OpenType or a collection)", what);
	nt = ps_be16(d + off + 4);
	if (off + 12 + 16 * (uint64_t)nt > n)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%s: the font file is truncated (table directory)", what);
	for (i = 0; i < nt; i++) {
		const uint8_t *r = d + off + 12 + 16 * i;
		if ((uint64_t)ps_be32(r + 8) + ps_be32(r + 12) > n)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s: the font file is truncated or damaged (table '%.4s' "
			              "ends past its end)", what, (const char *)r);
		for (k = 0; k < sizeof tags / sizeof tags[0]; k++)
			if (memcmp(r, tags[k], 4) == 0)
				have |= 1u << k;
	}
	if ((have & CFF2) && !(have & (CFF | GLYF)))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "%s: CFF2 (variable CFF) fonts cannot be embedded in PDF", what);
	for (k = 0; k < 5; k++)
		if (!(have & (1u << k)))
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: the font has no '%s' table",
			              what, tags[k]);
	if ((have & (GLYF | LOCA)) != (GLYF | LOCA) && !(have & CFF))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: the font has no outlines (glyf or CFF)",
		              what);
	*cff = !(have & GLYF);
	return 0;
}

/* OS/2 fsType (embedding licensing): 0 when embedding is permitted. */
static int embedding_restricted(hb_face_t *face)
{
	hb_blob_t *b = PS_X(hb_face_reference_table)(face, HB_TAG('O', 'S', '/', '2'));
	unsigned len;
	const uint8_t *p = (const uint8_t *)PS_X(hb_blob_get_data)(b, &len);
	int r = 0;

	if (p && len >= 10) {
		unsigned fs = ps_be16(p + 8);
		r = (fs & 0x000F) == 0x0002 || (fs & 0x0200);
	}
	PS_X(hb_blob_destroy)(b);
	return r;
}

/* Takes DATA (malloc'ed, freed here on failure) as face INDEX of font F. */
static int load_face(ps_face *f, uint8_t *data, size_t n, unsigned index, const char *what)
{
	ps_ctx *ctx = f->ctx;
	hb_blob_t *blob;
	const uint8_t *head;
	unsigned upem, len;
	int rc, cff = 0;

	if ((rc = check_sfnt(ctx, data, n, index, what, &cff)) < 0) {
		free(data);
		return rc;
	}
	blob = PS_X(hb_blob_create)((const char *)data, (unsigned)n, HB_MEMORY_MODE_READONLY, data,
	                            free);
	f->face = PS_X(hb_face_create)(blob, index);
	PS_X(hb_blob_destroy)(blob);
	if (!f->face || PS_X(hb_face_get_glyph_count)(f->face) == 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: the font has no glyphs", what);
	/* 'head' as stored (HarfBuzz reports 1000 for a bad unitsPerEm) */
	blob = PS_X(hb_face_reference_table)(f->face, HB_TAG('h', 'e', 'a', 'd'));
	head = (const uint8_t *)PS_X(hb_blob_get_data)(blob, &len);
	upem = head && len >= 54 && ps_be32(head + 12) == 0x5F0F3CF5 ? ps_be16(head + 18) : 0;
	PS_X(hb_blob_destroy)(blob);
	if (upem < 16 || upem > 16384)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%s: the font's 'head' table is damaged (unitsPerEm %u)", what, upem);
	f->upem = upem;
	f->cff = cff;
	if (!(f->font = PS_X(hb_font_create)(f->face)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	PS_X(hb_font_set_scale)(f->font, (int)upem, (int)upem);
	return 0;
}

/* 1 if face F has a glyph for C (its cmap). */
static int face_has(ps_face *f, uint32_t c)
{
	hb_codepoint_t g;

	return PS_X(hb_font_get_nominal_glyph)(f->font, c, &g) != 0;
}

/* The first font of the set that has C, or -1. */
static int set_find(ps_font *f, uint32_t c)
{
	size_t k;

	for (k = 0; k < f->nfaces; k++)
		if (face_has(f->faces[k], c))
			return (int)k;
	return -1;
}

/* The first character of CP[0..N) that no font of the set has, or 0. */
static uint32_t first_missing(ps_font *f, const uint32_t *cp, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!ignorable(cp[i]) && set_find(f, cp[i]) < 0)
			return cp[i];
	return 0;
}

static void face_free(ps_face *f)
{
	size_t i;

	if (!f)
		return;
	if (f->font) /* a standard-14 font has none (nor the libraries: extlib.c) */
		PS_X(hb_font_destroy)(f->font);
	if (f->face)
		PS_X(hb_face_destroy)(f->face);
	for (i = 0; i < f->nglyphs; i++)
		free(f->glyphs[i].text);
	free(f->glyphs);
	free(f->psname);
	free(f->file);
	free(f);
}

/* A new face of set F for face INDEX of the file PATH (NULL: the caller
 * loads it); refused when the set is full. */
static int face_new(ps_font *f, const char *path, unsigned index, ps_face **out)
{
	ps_face *fc;

	*out = NULL;
	if (f->nfaces >= PS_FONT_MAX_FACES)
		return ps_err(f->ctx, PDFSTAMP_E_USAGE, "the text needs more than %d fonts",
		              PS_FONT_MAX_FACES);
	if (!(fc = calloc(1, sizeof *fc)) || (path && !(fc->file = strdup(path)))) {
		free(fc);
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	fc->ctx = f->ctx;
	fc->index = index;
	*out = fc;
	return 0;
}

/* 1 if the set has face INDEX of PATH already. */
static int set_has_file(const ps_font *f, const char *path, unsigned index)
{
	size_t k;

	for (k = 0; k < f->nfaces; k++)
		if (f->faces[k]->file && f->faces[k]->index == index &&
		    strcmp(f->faces[k]->file, path) == 0)
			return 1;
	return 0;
}

/* Loads face INDEX of the file PATH into *OUT (not yet in the set). */
static int open_file(ps_font *f, const char *path, unsigned index, ps_face **out)
{
	ps_face *fc;
	uint8_t *d;
	size_t len = 0;
	int rc;

	if ((rc = face_new(f, path, index, &fc)) < 0)
		return rc;
	if ((rc = ps_io_read_file(f->ctx, path, PS_FONT_MAX_FILE, "the font", &d, &len)) < 0 ||
	    (rc = load_face(fc, d, len, index, path)) < 0)
		goto fail;
	if (embedding_restricted(fc->face)) {
		rc = ps_err(f->ctx, PDFSTAMP_E_USAGE,
		            "the font %s does not permit embedding (OS/2 fsType)", path);
		goto fail;
	}
	*out = fc;
	return 0;
fail:
	face_free(fc);
	return rc;
}

static void set_add(ps_font *f, ps_face *fc)
{
	f->faces[f->nfaces++] = fc;    /* room: face_new */
}

/* ---- fontconfig ------------------------------------------------------------------ */

/* What fontconfig gives one ps_font_open: its config, loaded on first
 * need, and the fallback order (note 1), under the lock (extlib.c note 4). */
typedef struct fc_session {
	int entered;
	FcConfig *cfg;
	FcFontSet *sorted;      /* "sans-serif:bold", every installed font */
} fc_session;

static int fc_begin(ps_ctx *ctx, fc_session *s)
{
	if (!s->entered) {
		ps_ext_fc_enter();
		s->entered = 1;
		s->cfg = PS_X(FcInitLoadConfigAndFonts)();
	}
	if (!s->cfg)
		return ps_err_hint(ctx, PDFSTAMP_HINT_FONT, PDFSTAMP_E_USAGE,
		                   "fontconfig cannot load its configuration: no installed font "
		                   "can be chosen, only a font file");
	return 0;
}

static void fc_end(fc_session *s)
{
	if (!s->entered)
		return;
	if (s->sorted)
		PS_X(FcFontSetDestroy)(s->sorted);
	if (s->cfg)
		PS_X(FcConfigDestroy)(s->cfg);
	ps_ext_fc_leave();
	memset(s, 0, sizeof *s);
}

/* An installed font a PDF can embed (TrueType or CFF outlines, not
 * variable): its FILE and face INDEX. */
static int fc_usable(FcPattern *p, const FcChar8 **file, int *index)
{
	FcChar8 *fmt;
	FcBool var;

	if (PS_X(FcPatternGetString)(p, FC_FILE, 0, (FcChar8 **)file) != FcResultMatch ||
	    PS_X(FcPatternGetString)(p, FC_FONTFORMAT, 0, &fmt) != FcResultMatch ||
	    (strcmp((const char *)fmt, "TrueType") != 0 && strcmp((const char *)fmt, "CFF") != 0))
		return 0;
	if (PS_X(FcPatternGetBool)(p, FC_VARIABLE, 0, &var) == FcResultMatch && var)
		return 0;
	if (PS_X(FcPatternGetInteger)(p, FC_INDEX, 0, index) != FcResultMatch || *index < 0 ||
	    *index > 0xFFFF)
		return 0;   /* named instances of variable fonts have bits above 16 */
	return 1;
}

/* How many characters of CP[0..N) (not ignorable) P's charset has. */
static size_t fc_count(FcPattern *p, const uint32_t *cp, size_t n)
{
	FcCharSet *cs;
	size_t i, k = 0;

	if (PS_X(FcPatternGetCharSet)(p, FC_CHARSET, 0, &cs) != FcResultMatch)
		return 0;
	for (i = 0; i < n; i++)
		k += !ignorable(cp[i]) && PS_X(FcCharSetHasChar)(cs, cp[i]);
	return k;
}

/* 1 if P's charset has every character of CP[0..N) (not ignorable). */
static int fc_has_all(FcPattern *p, const uint32_t *cp, size_t n)
{
	FcCharSet *cs;
	size_t i;

	if (PS_X(FcPatternGetCharSet)(p, FC_CHARSET, 0, &cs) != FcResultMatch)
		return 0;
	for (i = 0; i < n; i++)
		if (!ignorable(cp[i]) && !PS_X(FcCharSetHasChar)(cs, cp[i]))
			return 0;
	return 1;
}

static int fc_family_is(FcPattern *p, const FcChar8 *family)
{
	FcChar8 *s;
	int k;

	for (k = 0; PS_X(FcPatternGetString)(p, FC_FAMILY, k, &s) == FcResultMatch; k++)
		if (PS_X(FcStrCmpIgnoreCase)(s, family) == 0)
			return 1;
	return 0;
}

/* The installed fonts sorted for pattern PAT (taken), bold unless it says. */
static FcFontSet *fc_sort(fc_session *s, FcPattern *pat)
{
	FcFontSet *fs;
	FcResult res;
	int w;

	if (PS_X(FcPatternGetInteger)(pat, FC_WEIGHT, 0, &w) != FcResultMatch)
		PS_X(FcPatternAddInteger)(pat, FC_WEIGHT, FC_WEIGHT_BOLD);
	PS_X(FcConfigSubstitute)(s->cfg, pat, FcMatchPattern);
	PS_X(FcDefaultSubstitute)(pat);
	fs = PS_X(FcFontSort)(s->cfg, pat, FcFalse, NULL, &res);
	PS_X(FcPatternDestroy)(pat);
	return fs;
}

/* Tries installed font P: loaded and added to the set if it can be embedded
 * and really has (cmap, not only fontconfig's charset) every character of
 * NEED[0..NN).  1 added, 2 in the set already, 0 not usable, or an error
 * that is not the font's. */
static int fc_try(ps_font *f, FcPattern *p, const uint32_t *need, size_t nn)
{
	const FcChar8 *file;
	ps_face *fc = NULL;
	int index, rc;
	size_t i;

	if (!fc_usable(p, &file, &index))
		return 0;
	if (set_has_file(f, (const char *)file, (unsigned)index))
		return 2;
	if ((rc = open_file(f, (const char *)file, (unsigned)index, &fc)) < 0)
		return rc == PDFSTAMP_E_NOMEM || f->nfaces >= PS_FONT_MAX_FACES ? rc : 0;
	for (i = 0; i < nn; i++)
		if (!ignorable(need[i]) && !face_has(fc, need[i])) {
			face_free(fc);   /* its charset lied */
			return 0;
		}
	set_add(f, fc);
	return 1;
}

/* Adds the font of the family of SPEC (a fontconfig pattern) that covers
 * the most of CP[0..N), the first in fontconfig's order among equals. */
static int open_family(ps_font *f, fc_session *s, const char *spec, const uint32_t *cp, size_t n)
{
	ps_ctx *ctx = f->ctx;
	FcPattern *pat;
	FcFontSet *fs = NULL;
	FcChar8 *family = NULL, *fam0;
	size_t *score = NULL;
	int rc = 0, i, seen = 0;

	if ((rc = fc_begin(ctx, s)) < 0)
		return rc;
	if (!(pat = PS_X(FcNameParse)((const FcChar8 *)spec)))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "cannot parse the font name '%s'", spec);
	if (PS_X(FcPatternGetString)(pat, FC_FAMILY, 0, &fam0) != FcResultMatch) {
		PS_X(FcPatternDestroy)(pat);
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the font name '%s' names no family", spec);
	}
	if (!(family = PS_X(FcStrCopy)(fam0))) {
		PS_X(FcPatternDestroy)(pat);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	fs = fc_sort(s, pat);
	if (fs && fs->nfont > 0 && !(score = calloc((size_t)fs->nfont, sizeof *score))) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; fs && i < fs->nfont; i++) {
		const FcChar8 *file;
		int index;
		if (!fc_family_is(fs->fonts[i], family))
			continue;
		seen = 1;
		if (fc_usable(fs->fonts[i], &file, &index))
			score[i] = 1 + fc_count(fs->fonts[i], cp, n);
	}
	if (!seen) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "no installed font has the family '%s'",
		            (const char *)family);
		goto out;
	}
	for (;;) {
		/* the best candidate not yet tried */
		int best = -1;
		for (i = 0; i < fs->nfont; i++)
			if (score[i] && (best < 0 || score[i] > score[best]))
				best = i;
		if (best < 0)
			break;
		score[best] = 0;
		if ((rc = fc_try(f, fs->fonts[best], NULL, 0)) != 0)
			goto out;   /* added or already there, or an error */
	}
	rc = ps_err(ctx, PDFSTAMP_E_USAGE,
	            "no installed font of the family '%s' can be embedded (TrueType or CFF, "
	            "not variable, embedding permitted)", (const char *)family);
out:
	if (rc > 0)
		rc = 0;
	free(score);
	if (fs)
		PS_X(FcFontSetDestroy)(fs);
	PS_X(FcStrFree)(family);
	return rc;
}

/* Note 1: installed fonts for the characters of CP[0..N) that the set
 * lacks: the first font in fontconfig's order for "sans-serif:bold" that
 * has all of them, else, in the order of the text, the first that has
 * each.  Stops at the first character no installed font has (the caller
 * names it); S->cfg stays NULL when fontconfig cannot load. */
static int fallback(ps_font *f, fc_session *s, const uint32_t *cp, size_t n)
{
	uint32_t *need;
	size_t nn = 0, i;
	FcFontSet *fs;
	int rc = 0, k;

	if (!first_missing(f, cp, n))
		return 0;
	if (fc_begin(f->ctx, s) < 0)
		return 0;   /* the caller names the character */
	if (!s->sorted) {
		FcPattern *pat = PS_X(FcPatternCreate)();
		const FcChar8 *sans = (const FcChar8 *)"sans-serif";
		if (!pat || !PS_X(FcPatternAddString)(pat, FC_FAMILY, sans)) {
			if (pat)
				PS_X(FcPatternDestroy)(pat);
			return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		s->sorted = fc_sort(s, pat);
	}
	if (!(fs = s->sorted))
		return 0;
	if (!(need = malloc(n * sizeof *need)))
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < n; i++)
		if (!ignorable(cp[i]) && set_find(f, cp[i]) < 0)
			need[nn++] = cp[i];
	/* one font for all of them */
	for (k = 0; k < fs->nfont && rc == 0; k++)
		if (fc_has_all(fs->fonts[k], need, nn) &&
		    (rc = fc_try(f, fs->fonts[k], need, nn)) == 2)
			rc = 0;
	/* else font by font, in the order of the text */
	for (i = 0; i < nn && rc == 0; i++) {
		int added = 0;
		if (set_find(f, need[i]) >= 0)
			continue;
		for (k = 0; k < fs->nfont && rc == 0 && !added; k++)
			if (fc_has_all(fs->fonts[k], &need[i], 1)) {
				if ((rc = fc_try(f, fs->fonts[k], &need[i], 1)) > 0)
					added = rc == 1;
				rc = rc < 0 ? rc : 0;
			}
		if (!added)
			break;       /* no installed font has need[i] */
	}
	free(need);
	return rc < 0 ? rc : 0;
}

/* fontpdf.c note 2 */
int ps_font_psname(ps_face *f)
{
	char buf[256], *o;
	unsigned len = sizeof buf, i, k = 0;

	len = PS_X(hb_ot_name_get_utf8)(f->face, HB_OT_NAME_ID_POSTSCRIPT_NAME,
	                                PS_X(hb_language_from_string)("en", -1), &len, buf);
	if (!(o = malloc(64)))
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < len && i < sizeof buf && buf[i] && k < 63; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c > 32 && c < 127 && !strchr("()<>[]{}/%#", c))
			o[k++] = (char)c;
	}
	if (!k)
		strcpy(o, "Font");
	else
		o[k] = 0;
	f->psname = o;
	return 0;
}

/* ---- open and free ------------------------------------------------------------------ */

static int font_new(ps_ctx *ctx, ps_font **out)
{
	ps_font *f = calloc(1, sizeof *f);

	*out = f;
	if (!f)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	f->ctx = ctx;
	return 0;
}

/* C as UTF-8 in OUT (at least 5 bytes). */
static void utf8_of(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		out[1] = 0;
	} else if (c < 0x800) {
		out[0] = (char)(0xC0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3F));
		out[2] = 0;
	} else if (c < 0x10000) {
		out[0] = (char)(0xE0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3F));
		out[2] = (char)(0x80 | (c & 0x3F));
		out[3] = 0;
	} else {
		out[0] = (char)(0xF0 | c >> 18);
		out[1] = (char)(0x80 | (c >> 12 & 0x3F));
		out[2] = (char)(0x80 | (c >> 6 & 0x3F));
		out[3] = (char)(0x80 | (c & 0x3F));
		out[4] = 0;
	}
}

/* Note 1: the error for MISS, the first character of the text no font
 * has, naming the fonts given (SPECS[0..NS), NULLs skipped). */
static int missing_error(ps_ctx *ctx, uint32_t miss, const char *const *specs, size_t ns,
                         int fc_ok)
{
	char ch[8], tried[160];
	size_t k, len = 0, given = 0;

	utf8_of(miss, ch);
	tried[0] = 0;
	for (k = 0; k < ns; k++) {
		if (!specs[k])
			continue;
		if (len + strlen(specs[k]) + 8 >= sizeof tried) {
			snprintf(tried + len, sizeof tried - len, ", ...");
			break;
		}
		len += (size_t)snprintf(tried + len, sizeof tried - len, "%s'%s'",
		                        given ? ", " : "", specs[k]);
		given++;
	}
	if (!fc_ok)
		return ps_err_hint(ctx, PDFSTAMP_HINT_FONT, PDFSTAMP_E_USAGE,
		                   "no font covers U+%04X '%s' (tried %s; fontconfig cannot "
		                   "load its configuration, so no installed font)",
		                   (unsigned)miss, ch, given ? tried : "none");
	if (!given)
		return ps_err_hint(ctx, PDFSTAMP_HINT_FONT, PDFSTAMP_E_USAGE,
		                   "no installed font covers U+%04X '%s'", (unsigned)miss, ch);
	return ps_err_hint(ctx, PDFSTAMP_HINT_FONT, PDFSTAMP_E_USAGE,
	                   "no font covers U+%04X '%s' (tried %s, then every installed font)",
	                   (unsigned)miss, ch, tried);
}

/* The fonts given, then fontconfig's (note 1). */
static int open_set(ps_font *f, const char *const *specs, size_t ns, const uint32_t *cp,
                    size_t n)
{
	ps_ctx *ctx = f->ctx;
	fc_session s;
	ps_face *fc;
	uint32_t miss;
	size_t k;
	int rc = 0;

	memset(&s, 0, sizeof s);
	for (k = 0; k < ns && rc == 0; k++) {
		const char *sp = specs[k];
		if (!sp)
			continue;
		if (!*sp)
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "empty font name");
		else if (!strchr(sp, '/'))
			rc = open_family(f, &s, sp, cp, n);
		else if (!set_has_file(f, sp, 0) && (rc = open_file(f, sp, 0, &fc)) == 0)
			set_add(f, fc);
	}
	if (rc == 0)
		rc = fallback(f, &s, cp, n);
	if (rc == 0 && (miss = first_missing(f, cp, n)) != 0)
		rc = missing_error(ctx, miss, specs, ns, !s.entered || s.cfg);
	fc_end(&s);
	return rc;
}

int ps_font_open(ps_ctx *ctx, const char *spec, const char *const *more, size_t nmore,
                 const char *text, ps_font **out)
{
	const char **specs = NULL;
	ps_font *f = NULL;
	uint32_t *cp = NULL;
	size_t n, i;
	int rc;

	*out = NULL;
	if ((rc = decode(ctx, text, text ? strlen(text) : 0, &cp, &n)) < 0)
		return rc;
	if (nmore > PS_FONT_MAX_FACES - 1) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "at most %d fonts can be given",
		            PS_FONT_MAX_FACES);
		goto out;
	}
	if (nmore && !more) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "fonts is NULL but nfonts is %zu", nmore);
		goto out;
	}
	for (i = 0; i < nmore; i++)
		if (!more[i]) {
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "fonts[%zu] is NULL", i);
			goto out;
		}
	if ((rc = font_new(ctx, &f)) < 0)
		goto out;
	if (!spec && !nmore) {
		for (i = 0; i < n && (ps_text_winansi_code(cp[i]) >= 0 || cp[i] == '\r'); i++)
			;
		if (i == n) {
			f->std14 = 1;
			goto out;
		}
	}
	if (!(specs = malloc((nmore + 1) * sizeof *specs))) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	specs[0] = spec;
	for (i = 0; i < nmore; i++)
		specs[i + 1] = more[i];
	if ((rc = ps_ext_need(ctx, PS_EXT_TEXT)) == 0) /* extlib.c note 3 */
		rc = open_set(f, specs, nmore + 1, cp, n);
out:
	free(specs);
	free(cp);
	if (rc < 0) {
		ps_font_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int ps_font_open_mem(ps_ctx *ctx, const uint8_t *data, size_t len, const char *text, ps_font **out)
{
	ps_font *f = NULL;
	ps_face *fc = NULL;
	uint32_t *cp = NULL, miss;
	uint8_t *d;
	size_t n;
	int rc;

	*out = NULL;
	if ((rc = decode(ctx, text, text ? strlen(text) : 0, &cp, &n)) < 0)
		return rc;
	if (len > PS_FONT_MAX_FILE) {
		free(cp);
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the font is larger than %d MiB",
		              PS_FONT_MAX_FILE >> 20);
	}
	if ((rc = ps_ext_need(ctx, PS_EXT_TEXT)) < 0) {
		free(cp);
		return rc;
	}
	if ((rc = font_new(ctx, &f)) < 0 || (rc = face_new(f, NULL, 0, &fc)) < 0)
		goto out;
	if (!(d = malloc(len ? len : 1))) {
		face_free(fc);
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if (len)
		memcpy(d, data, len);
	set_add(f, fc);
	if ((rc = load_face(fc, d, len, 0, "the font")) < 0)
		goto out;
	if ((miss = first_missing(f, cp, n)) != 0)
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the font has no glyph for U+%04X",
		            (unsigned)miss);
out:
	free(cp);
	if (rc < 0) {
		ps_font_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int ps_font_is_std14(const ps_font *f)
{
	return f->std14;
}

int ps_font_char_face(ps_font *f, uint32_t c, size_t *face, uint32_t *gid)
{
	hb_codepoint_t g;
	int k;

	if (f->std14) {
		int b = ps_text_winansi_code(c);
		*gid = b < 0 ? 0 : (uint32_t)b;
		if (face)
			*face = 0;
		return b >= 32;
	}
	if ((k = set_find(f, c)) < 0 ||
	    !PS_X(hb_font_get_nominal_glyph)(f->faces[k]->font, c, &g))
		return 0;
	*gid = g;
	if (face)
		*face = (size_t)k;
	return 1;
}

int ps_font_nominal_glyph(ps_font *f, uint32_t c, uint32_t *gid)
{
	return ps_font_char_face(f, c, NULL, gid);
}

size_t ps_font_nfaces(const ps_font *f)
{
	return f->nfaces;
}

const char *ps_font_face_name(ps_font *f, size_t k)
{
	if (k >= f->nfaces)
		return NULL;
	if (!f->faces[k]->psname && ps_font_psname(f->faces[k]) < 0)
		return NULL;
	return f->faces[k]->psname;
}

unsigned ps_font_face_res(const ps_font *f, size_t k)
{
	return k < f->nfaces && f->embedded ? f->faces[k]->res : 0;
}

void ps_font_free(ps_font *f)
{
	size_t k;

	if (!f)
		return;
	for (k = 0; k < f->nfaces; k++)
		face_free(f->faces[k]);
	free(f);
}

void ps_font_line_free(ps_line *l)
{
	if (!l)
		return;
	free(l->gid);
	free(l->x);
	free(l->y);
	free(l->text);
	free(l->run_rtl);
	free(l->lkey);
	free(l->face);
	memset(l, 0, sizeof *l);
}

/* ---- the glyphs used ------------------------------------------------------------------ */

/* The entry of GID in F's sorted list of used glyphs, or NULL. */
static ps_font_glyph *find_glyph(ps_face *f, uint32_t gid)
{
	size_t lo = 0, hi = f->nglyphs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->glyphs[mid].gid == gid)
			return &f->glyphs[mid];
		if (f->glyphs[mid].gid < gid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Records GID as used; TEXT[0..NT) (may be empty) is the text it stands
 * for if it has none yet. */
static int use_glyph(ps_face *f, uint32_t gid, const uint32_t *text, size_t nt)
{
	ps_font_glyph *g = find_glyph(f, gid);
	size_t lo = 0, hi = f->nglyphs;

	if (!g) {
		if (f->sealed)
			return ps_err(f->ctx, PDFSTAMP_E_INTERNAL,
			              "a glyph was shaped after the font was embedded");
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (f->glyphs[mid].gid < gid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (ps_vec_grow((void **)&f->glyphs, f->nglyphs, sizeof *f->glyphs) < 0)
			return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		memmove(&f->glyphs[lo + 1], &f->glyphs[lo], (f->nglyphs - lo) * sizeof *f->glyphs);
		f->nglyphs++;
		g = &f->glyphs[lo];
		memset(g, 0, sizeof *g);
		g->gid = gid;
		g->w = ps_font_milli(PS_X(hb_font_get_glyph_h_advance)(f->font, gid) * 1000.0 /
		                     f->upem);
	}
	if (nt && !g->ntext) {
		if (nt > PS_FONT_MAX_GLYPH_TEXT)
			nt = PS_FONT_MAX_GLYPH_TEXT;
		if (!(g->text = malloc(nt * sizeof *g->text)))
			return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		memcpy(g->text, text, nt * sizeof *g->text);
		g->ntext = nt;
	}
	return 0;
}

/* ---- shaping ------------------------------------------------------------------ */

typedef struct run {
	size_t start, len;
	FriBidiLevel level;
	hb_script_t script;
	unsigned face;          /* in the set */
} run;

/* Room for N glyphs in L's arrays (the right-to-left flags included). */
static int line_grow(ps_line *l, size_t n)
{
	uint32_t *g = realloc(l->gid, n * sizeof *g);
	double *x, *y;
	unsigned char *r;

	if (!g)
		return -1;
	l->gid = g;
	if (!(x = realloc(l->x, n * sizeof *x)))
		return -1;
	l->x = x;
	if (!(y = realloc(l->y, n * sizeof *y)))
		return -1;
	l->y = y;
	if (!(r = realloc(l->run_rtl, n)))
		return -1;
	l->run_rtl = r;
	if (!(g = realloc(l->lkey, n * sizeof *g)))
		return -1;
	l->lkey = g;
	if (!(r = realloc(l->face, n)))
		return -1;
	l->face = r;
	return 0;
}

static int line_alloc(ps_line *l, size_t n)
{
	l->gid = malloc((n ? n : 1) * sizeof *l->gid);
	l->x = malloc((n ? n : 1) * sizeof *l->x);
	l->y = malloc((n ? n : 1) * sizeof *l->y);
	return l->gid && l->x && l->y ? 0 : -1;
}

static int shape_std14(ps_font *f, const uint32_t *cp, size_t n, ps_line *l)
{
	size_t i;
	double pen = 0;

	if (line_alloc(l, n) < 0)
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		int b = ps_text_winansi_code(cp[i]);
		if (b < 32)
			return ps_err(f->ctx, PDFSTAMP_E_USAGE, "Helvetica-Bold cannot draw U+%04X",
			              (unsigned)cp[i]);
		l->gid[i] = (uint32_t)b;
		l->x[i] = pen;
		l->y[i] = 0;
		pen += helvb[b - 32][0];
		if (helvb[b - 32][1] > l->ascent)
			l->ascent = helvb[b - 32][1];
		if (helvb[b - 32][2] < l->descent)
			l->descent = helvb[b - 32][2];
	}
	l->n = n;
	l->width = pen;
	return 0;
}

static hb_script_t char_script(uint32_t c)
{
	return PS_X(hb_unicode_script)(PS_X(hb_unicode_funcs_get_default)(), c);
}

/* Cuts CP[0..N) into runs of one level and one script (note 2). */
static int itemize(ps_ctx *ctx, const uint32_t *cp, size_t n, const FriBidiLevel *lev, run **out,
                   size_t *nruns)
{
	run *r = NULL;
	size_t i, nr = 0, k;

	for (i = 0; i < n; i++) {
		hb_script_t s = char_script(cp[i]);
		int weak = s == HB_SCRIPT_COMMON || s == HB_SCRIPT_INHERITED ||
		           s == HB_SCRIPT_UNKNOWN;
		if (nr && r[nr - 1].level == lev[i] &&
		    (weak || r[nr - 1].script == s || r[nr - 1].script == HB_SCRIPT_COMMON)) {
			if (!weak && r[nr - 1].script == HB_SCRIPT_COMMON)
				r[nr - 1].script = s;
			r[nr - 1].len++;
			continue;
		}
		if (ps_vec_grow((void **)&r, nr, sizeof *r) < 0) {
			free(r);
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		r[nr].start = i;
		r[nr].len = 1;
		r[nr].level = lev[i];
		r[nr].script = weak ? HB_SCRIPT_COMMON : s;
		r[nr].face = 0;
		nr++;
	}
	/* a run of Common characters only takes its neighbour's script */
	for (k = 0; k < nr; k++)
		if (r[k].script == HB_SCRIPT_COMMON)
			r[k].script = k > 0 ? r[k - 1].script
			              : k + 1 < nr ? r[k + 1].script : HB_SCRIPT_LATIN;
	*out = r;
	*nruns = nr;
	return 0;
}

static int weak_char(uint32_t c)
{
	hb_script_t s = char_script(c);

	return s == HB_SCRIPT_COMMON || s == HB_SCRIPT_INHERITED || s == HB_SCRIPT_UNKNOWN ||
	       ignorable(c);
}

/* The font of each character of run R (note 2) into FC[R->start ...]. */
static void run_faces(ps_font *set, const uint32_t *cp, const run *r, unsigned char *fc)
{
	size_t i, j, e = r->start + r->len;
	unsigned k, last = UINT_MAX;

	/* the first font that has the whole run */
	for (k = 0; k < set->nfaces; k++) {
		ps_face *fk = set->faces[k];
		for (i = r->start; i < e && (ignorable(cp[i]) || face_has(fk, cp[i])); i++)
			;
		if (i == e) {
			memset(fc + r->start, (int)k, r->len);
			return;
		}
	}
	/* else the letters: the font of the letter before if it has this one,
	 * else the first font that has it */
	for (i = r->start; i < e; i++) {
		int f;
		fc[i] = UCHAR_MAX;
		if (weak_char(cp[i]))
			continue;
		if (last != UINT_MAX && face_has(set->faces[last], cp[i]))
			f = (int)last;
		else if ((f = set_find(set, cp[i])) < 0)
			f = last != UINT_MAX ? (int)last : 0;   /* .notdef (not opened for it) */
		fc[i] = (unsigned char)f;
		last = (unsigned)f;
	}
	/* then the rest (spaces, digits, punctuation, marks, format
	 * characters): the font of the character before, else of the letter
	 * after, if it has it; else the first font that has it */
	for (i = r->start; i < e; i++) {
		unsigned prev = i > r->start ? fc[i - 1] : UINT_MAX, next = UINT_MAX;
		int f, ign = ignorable(cp[i]);
		if (fc[i] != UCHAR_MAX)
			continue;
		for (j = i + 1; j < e && next == UINT_MAX; j++)
			if (fc[j] != UCHAR_MAX)
				next = fc[j];
		if (prev != UINT_MAX && (ign || face_has(set->faces[prev], cp[i])))
			f = (int)prev;
		else if (next != UINT_MAX && (ign || face_has(set->faces[next], cp[i])))
			f = (int)next;
		else if ((f = set_find(set, cp[i])) < 0)
			f = prev != UINT_MAX ? (int)prev : next != UINT_MAX ? (int)next : 0;
		fc[i] = (unsigned char)f;
	}
}

/* Cuts the runs *R[0..*NR) of CP[0..N) where the font changes (note 2). */
static int split_faces(ps_font *set, const uint32_t *cp, size_t n, run **rr, size_t *nr)
{
	unsigned char *fc;
	run *r = *rr, *o = NULL;
	size_t k, i, no = 0;

	if (set->nfaces < 2)
		return 0;   /* every run in font 0 */
	if (!(fc = malloc(n ? n : 1)))
		return ps_err(set->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (k = 0; k < *nr; k++)
		run_faces(set, cp, &r[k], fc);
	for (k = 0; k < *nr; k++)
		for (i = r[k].start; i < r[k].start + r[k].len; i++) {
			if (i > r[k].start && fc[i] == fc[i - 1]) {
				o[no - 1].len++;
				continue;
			}
			if (ps_vec_grow((void **)&o, no, sizeof *o) < 0) {
				free(o);
				free(fc);
				return ps_err(set->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			}
			o[no] = r[k];
			o[no].start = i;
			o[no].len = 1;
			o[no].face = fc[i];
			no++;
		}
	free(fc);
	free(r);
	*rr = o;
	*nr = no;
	return 0;
}

/* Rule L2 on whole runs: from the highest level down to the lowest odd
 * level, reverse every maximal sequence of runs at that level or higher. */
static void reorder_runs(run *r, size_t nr)
{
	/* lo above every level (FriBidiLevel is a signed char: 255 was -1,
	 * harmless only because reversals below the lowest odd level cancel) */
	int hi = 0, lo = 256, k;
	size_t i, j, a, b;

	for (i = 0; i < nr; i++) {
		if (r[i].level > hi)
			hi = r[i].level;
		if ((r[i].level & 1) && r[i].level < lo)
			lo = r[i].level;
	}
	for (k = hi; k >= lo && k > 0; k--) {
		for (i = 0; i < nr; i = j) {
			if (r[i].level < k) {
				j = i + 1;
				continue;
			}
			for (j = i; j < nr && r[j].level >= k; j++)
				;
			for (a = i, b = j - 1; a < b; a++, b--) {
				run t = r[a];
				r[a] = r[b];
				r[b] = t;
			}
		}
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Shapes run R of CP[0..N) and appends its glyphs to L at pen *PEN. */
static int shape_run(ps_font *set, hb_buffer_t *buf, const uint32_t *cp, size_t n, const run *r,
                     ps_line *l, size_t *cap, double *pen)
{
	ps_face *f = set->faces[r->face];
	hb_glyph_info_t *gi;
	hb_glyph_position_t *gp;
	unsigned ng, i, gs, ge;
	uint32_t *cl = NULL;
	double s = 1000.0 / f->upem;
	int rc = 0;

	PS_X(hb_buffer_clear_contents)(buf);
	PS_X(hb_buffer_add_utf32)(buf, cp, (int)n, (unsigned)r->start, (int)r->len);
	PS_X(hb_buffer_set_direction)(buf, (r->level & 1) ? HB_DIRECTION_RTL : HB_DIRECTION_LTR);
	PS_X(hb_buffer_set_script)(buf, r->script);
	PS_X(hb_buffer_guess_segment_properties)(buf);
	PS_X(hb_shape)(f->font, buf, NULL, 0);
	if (!PS_X(hb_buffer_allocation_successful)(buf))
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	gi = PS_X(hb_buffer_get_glyph_infos)(buf, &ng);
	gp = PS_X(hb_buffer_get_glyph_positions)(buf, NULL);
	if (l->n + ng > *cap) {
		if (line_grow(l, l->n + ng + 16) < 0)
			return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		*cap = l->n + ng + 16;
	}
	/* the clusters' start indices, sorted: a cluster's text runs to the next */
	if (ng && !(cl = malloc(ng * sizeof *cl)))
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < ng; i++)
		cl[i] = gi[i].cluster;
	if (ng)
		qsort(cl, ng, sizeof *cl, cmp_u32);
	for (gs = 0; gs < ng && rc == 0; gs = ge) {
		uint32_t c = gi[gs].cluster, end = (uint32_t)(r->start + r->len);
		size_t lo = 0, hi = ng;
		/* the cluster's glyphs are together (HarfBuzz's default cluster
		 * level); its text runs to the next larger cluster start */
		for (ge = gs + 1; ge < ng && gi[ge].cluster == c; ge++)
			;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cl[mid] <= c)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < ng)
			end = cl[lo];
		if (c >= end || end > n)
			end = c;   /* not expected from HarfBuzz; no text then */
		for (i = gs; i < ge && rc == 0; i++) {
			hb_glyph_extents_t ext;
			/* IDX: this glyph's place in logical order (an RTL run's
			 * glyphs come right to left); note 3: one code point each,
			 * the rest to the last glyph */
			unsigned idx = (r->level & 1) ? ge - 1 - i : i - gs;
			uint32_t ta = c + idx < end ? c + idx : end;
			uint32_t tb = idx + 1 == ge - gs ? end : ta + 1 < end ? ta + 1 : end;
			double y = gp[i].y_offset * s;
			rc = use_glyph(f, gi[i].codepoint, cp + ta, tb - ta);
			l->gid[l->n] = gi[i].codepoint;
			l->run_rtl[l->n] = r->level & 1;
			l->face[l->n] = (unsigned char)r->face;
			l->lkey[l->n] = c * 64 + (idx < 63 ? idx : 63);
			l->x[l->n] = *pen + gp[i].x_offset * s;
			l->y[l->n] = y;
			l->n++;
			*pen += gp[i].x_advance * s;
			if (PS_X(hb_font_get_glyph_extents)(f->font, gi[i].codepoint, &ext) &&
			    ext.height != 0) {
				double top = y + ext.y_bearing * s,
				       bot = y + (ext.y_bearing + ext.height) * s;
				if (top > l->ascent)
					l->ascent = top;
				if (bot < l->descent)
					l->descent = bot;
			}
		}
	}
	free(cl);
	return rc;
}

static int shape_embedded(ps_font *f, const uint32_t *cp, size_t n, ps_line *l)
{
	ps_ctx *ctx = f->ctx;
	FriBidiCharType *types = NULL;
	FriBidiBracketType *br = NULL;
	FriBidiLevel *lev = NULL;
	FriBidiParType dir = FRIBIDI_PAR_ON;
	hb_buffer_t *buf = NULL;
	run *r = NULL;
	size_t nr = 0, i, cap = 0;
	double pen = 0;
	int rc = 0;

	if (!n)
		return line_grow(l, 1) < 0 ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
	types = malloc(n * sizeof *types);
	br = malloc(n * sizeof *br);
	lev = malloc(n * sizeof *lev);
	buf = PS_X(hb_buffer_create)();
	if (!types || !br || !lev || !PS_X(hb_buffer_allocation_successful)(buf)) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	PS_X(fribidi_get_bidi_types)(cp, (FriBidiStrIndex)n, types);
	PS_X(fribidi_get_bracket_types)(cp, (FriBidiStrIndex)n, types, br);
	if (!PS_X(fribidi_get_par_embedding_levels_ex)(types, br, (FriBidiStrIndex)n, &dir, lev) ||
	    !PS_X(fribidi_reorder_line)(FRIBIDI_FLAGS_DEFAULT & ~FRIBIDI_FLAG_REORDER_NSM, types,
	                                (FriBidiStrIndex)n, 0, dir, lev, NULL, NULL)) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory (bidi)");
		goto out;
	}
	if ((rc = itemize(ctx, cp, n, lev, &r, &nr)) < 0 ||
	    (rc = split_faces(f, cp, n, &r, &nr)) < 0)
		goto out;
	for (i = 0; i < nr; i++)
		if (r[i].level & 1)
			l->rtl = 1;
	reorder_runs(r, nr);
	for (i = 0; i < nr && rc == 0; i++)
		rc = shape_run(f, buf, cp, n, &r[i], l, &cap, &pen);
	l->width = pen;
out:
	free(types);
	free(br);
	free(lev);
	free(r);
	PS_X(hb_buffer_destroy)(buf);
	return rc;
}

int ps_font_shape(ps_font *f, const char *utf8, size_t len, ps_line *out)
{
	uint32_t *cp = NULL;
	size_t n, i;
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = decode(f->ctx, utf8, len, &cp, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		if (cp[i] == '\n' || cp[i] == '\r') {
			free(cp);
			return ps_err(f->ctx, PDFSTAMP_E_USAGE,
			              "text contains a carriage return that does not end a line");
		}
	if (!(out->text = malloc(len + 1))) {
		rc = ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if (len)
		memcpy(out->text, utf8, len);
	out->text[len] = 0;
	rc = f->std14 ? shape_std14(f, cp, n, out) : shape_embedded(f, cp, n, out);
out:
	free(cp);
	if (rc < 0)
		ps_font_line_free(out);
	return rc;
}

/* ---- drawing ------------------------------------------------------------------ */

/* Escapes WinAnsi bytes for a literal string in a content stream. */
static void put_pdf_string(ps_buf *b, const ps_line *l)
{
	size_t i;

	ps_buf_putc(b, '(');
	for (i = 0; i < l->n; i++) {
		unsigned s = l->gid[i] & 0xFF;
		if (s == '(' || s == ')' || s == '\\')
			ps_buf_putc(b, '\\');
		if (s < 32 || s >= 127)
			ps_buf_printf(b, "\\%03o", s);
		else
			ps_buf_putc(b, (int)s);
	}
	ps_buf_putc(b, ')');
}

static void put_num(ps_buf *b, double v, const char *after)
{
	ps_serialize_real(b, ps_font_milli(v));
	ps_buf_puts(b, after);
}

void ps_font_put_utf16(ps_buf *b, uint32_t c)
{
	if (c >= 0x10000)
		ps_buf_printf(b, "%04X%04X", 0xD800 + ((c - 0x10000) >> 10),
		              0xDC00 + ((c - 0x10000) & 0x3FF));
	else
		ps_buf_printf(b, "%04X", (unsigned)c);
}

/* <FEFF...>: the line's text as a UTF-16BE text string (7.9.2.2). */
static int put_actual_text(ps_ctx *ctx, ps_buf *b, const char *s)
{
	size_t i, n = strlen(s), k;
	uint32_t c;

	ps_buf_puts(b, "<FEFF");
	for (i = 0; i < n; i += k) {
		if (!(k = ps_text_utf8_decode((const uint8_t *)s + i, n - i, &c)))
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "text is not valid UTF-8 (at byte %zu)", i);
		ps_font_put_utf16(b, c);
	}
	ps_buf_putc(b, '>');
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The glyph indices of L in logical order (note 4): by L->lkey, ties in
 * visual order.  *ORD is malloc'ed. */
static int logical_order(ps_ctx *ctx, const ps_line *l, size_t **ord)
{
	uint64_t *key = malloc(l->n * sizeof *key);
	size_t k;

	*ord = malloc(l->n * sizeof **ord);
	if (!key || !*ord) {
		free(key);
		free(*ord);
		*ord = NULL;
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	for (k = 0; k < l->n; k++)
		key[k] = (uint64_t)l->lkey[k] << 32 | k;
	qsort(key, l->n, sizeof *key, cmp_u64);
	for (k = 0; k < l->n; k++)
		(*ord)[k] = (size_t)(key[k] & 0xFFFFFFFFu);
	free(key);
	return 0;
}

/* "/F<res> SIZE Tf " of face FACE of the set (note 4). */
static void put_tf(ps_buf *b, unsigned res, double size)
{
	ps_buf_printf(b, "/F%u ", res);
	put_num(b, size, " Tf ");
}

int ps_font_show(ps_font *f, const ps_line *l, double size, double x, double y, ps_buf *content)
{
	double cur = 0, rise = 0;
	size_t i, k, *ord = NULL;
	unsigned cf = UINT_MAX;
	int in_tj = 0, rc;

	if (f->std14) {
		ps_buf_puts(content, "BT ");
		put_tf(content, 1, size);
		put_num(content, x, " ");
		put_num(content, y, " Td ");
		put_pdf_string(content, l);
		ps_buf_puts(content, " Tj ET\n");
		return content->oom ? ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
	}
	if (!f->embedded)
		return ps_err(f->ctx, PDFSTAMP_E_INTERNAL, "ps_font_show before ps_font_embed");
	if (!l->n)
		return 0;
	for (i = 0; i < l->n; i++)
		if (l->face[i] >= f->nfaces || !f->faces[l->face[i]]->res)
			return ps_err(f->ctx, PDFSTAMP_E_INTERNAL,
			              "a glyph of a font that was not embedded");
	if (!l->rtl) {
		ps_buf_puts(content, "/Span << /ActualText ");
		if ((rc = put_actual_text(f->ctx, content, l->text ? l->text : "")) < 0)
			return rc;
		ps_buf_puts(content, " >> BDC ");
	} else if (l->lkey) {
		/* note 4: a line with a right-to-left run is drawn in logical order */
		if ((rc = logical_order(f->ctx, l, &ord)) < 0)
			return rc;
	}
	ps_buf_puts(content, "BT ");
	for (k = 0; k < l->n; k++) {
		ps_font_glyph *g;
		ps_face *fc;
		double adj;
		i = ord ? ord[k] : k;
		fc = f->faces[l->face[i]];
		g = find_glyph(fc, l->gid[i]);
		if (!g || !g->in_subset) {
			free(ord);
			return ps_err(f->ctx, PDFSTAMP_E_INTERNAL,
			              "glyph %u is not in the embedded subset",
			              (unsigned)l->gid[i]);
		}
		if (l->face[i] != cf) {
			/* the first font and its position, or another font (the
			 * pen stays where it is, 9.3.1) */
			if (in_tj)
				ps_buf_puts(content, "] TJ ");
			in_tj = 0;
			put_tf(content, fc->res, size);
			if (cf == UINT_MAX) {
				put_num(content, x, " ");
				put_num(content, y, " Td ");
			}
			cf = l->face[i];
		}
		if (fabs(l->y[i] - rise) > 0.0005) {
			if (in_tj)
				ps_buf_puts(content, "] TJ ");
			in_tj = 0;
			rise = l->y[i];
			put_num(content, rise / 1000.0 * size, " Ts ");
		}
		if (!in_tj)
			ps_buf_putc(content, '[');
		adj = ps_font_milli(cur - l->x[i]);
		if (fabs(adj) >= 0.001) {
			if (in_tj)
				ps_buf_putc(content, ' ');
			ps_serialize_real(content, adj);
			ps_buf_putc(content, ' ');
		}
		in_tj = 1;
		ps_buf_printf(content, "<%04X>", (unsigned)g->cid);
		cur = l->x[i] + g->w;
	}
	if (in_tj)
		ps_buf_puts(content, "] TJ ");
	if (rise != 0)
		ps_buf_puts(content, "0 Ts ");
	free(ord);
	ps_buf_puts(content, l->rtl ? "ET\n" : "ET EMC\n");
	return content->oom ? ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}
