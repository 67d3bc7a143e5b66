/* SPDX-License-Identifier: Apache-2.0 */
/*
 * font.c - the stamp's fonts: which font (fontconfig), shaping (FriBidi +
 * HarfBuzz), and what is drawn with it.  The embedded subset and its PDF
 * objects are in fontpdf.c.
 *
 * DESIGN NOTES
 *
 *  1. Selection (ps_font_open).  The text is strict UTF-8 (text.c); LF
 *     separates lines and is never drawn (nor the CR of a CR LF); other C0
 *     and C1 control characters are refused (PDFSTAMP_E_USAGE).
 *       - SPEC NULL and every character in WinAnsiEncoding (Annex D.2):
 *         the standard-14 Helvetica-Bold, nothing embedded (ISO 32000-2
 *         9.6.2.2), a simple font whose codes are WinAnsi bytes; its
 *         widths and vertical extents are the table below, so Latin-1
 *         stamps cost what they always did.
 *       - SPEC NULL otherwise: fontconfig sorts the installed fonts for
 *         "sans-serif, bold" (FcFontSort on a private FcConfig, loaded and
 *         destroyed per call; FcFini is never called: the application may
 *         use fontconfig too.  fontconfig keeps process-wide state of its
 *         own, initialised once and thread-safe since 2.10: its table of
 *         mapped cache files, default languages, program name; that is
 *         what LeakSanitizer may report at exit, never per call); the
 *         first TrueType/CFF font whose charset has every
 *         character, that is not a variable font and whose OS/2 fsType
 *         permits embedding, wins.
 *       - SPEC containing '/': that font file (face 0 of a collection).
 *       - else SPEC is a fontconfig pattern ("Noto Sans", "DejaVu
 *         Sans:bold"); the first font of its family (compared without
 *         case) in fontconfig's order that covers the text.
 *     Coverage ignores LF, CR and the default-ignorable format characters
 *     HarfBuzz never draws (ZWJ, ZWNJ, bidi controls, variation
 *     selectors).  Nothing covers the text, or the family or file does
 *     not exist: PDFSTAMP_E_USAGE naming the first character (U+XXXX) no
 *     font has.  A file that is not a font, is truncated (a table past
 *     its end), lacks a required table (cmap head hhea hmtx maxp, and
 *     glyf+loca or CFF), has no glyphs or a 'head' table without its
 *     magic number or with a unitsPerEm outside 16..16384:
 *     PDFSTAMP_E_FORMAT; CFF2 (no PDF font type carries it):
 *     PDFSTAMP_E_UNSUPPORTED.
 *  2. Shaping (ps_font_shape), per line: FriBidi resolves the embedding
 *     levels (UAX #9 P2-I2 and L1, base direction from the first strong
 *     character); the line is cut into runs of one level and one script
 *     (Common and Inherited characters join their neighbour's script), the
 *     runs are put in visual order by rule L2 (reverse every sequence of
 *     runs at level >= k, for k from the highest level down to the lowest
 *     odd one), and each run is shaped by HarfBuzz with its direction
 *     (odd level: RTL) and script, the whole line passed as context so
 *     that Arabic joins across run ends.  HarfBuzz returns an RTL run's
 *     glyphs in visual order already.  Positions are font units scaled
 *     to 1/1000 em; ascent and descent are the inked extents of the glyphs
 *     used, with their y offsets (marks).
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
 *  4. Drawing (ps_font_show).  Standard 14: exactly "BT /F Sz Tf x y Td
 *     (bytes) Tj ET", the operators stamp.c always wrote.  Embedded: one
 *     TJ array of 2-byte CIDs (Identity-H, 9.7.5.2) whose adjustments
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
 *     most 10,000 characters of text and 64 code points of text per glyph
 *     in the CMap.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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
static int load_face(ps_font *f, uint8_t *data, size_t n, unsigned index, const char *what)
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

/* The first character of CP[0..N) that F has no glyph for, or 0. */
static uint32_t first_missing(ps_font *f, const uint32_t *cp, size_t n)
{
	hb_codepoint_t g;
	size_t i;

	for (i = 0; i < n; i++)
		if (!ignorable(cp[i]) && !PS_X(hb_font_get_nominal_glyph)(f->font, cp[i], &g))
			return cp[i];
	return 0;
}

static void unload(ps_font *f)
{
	if (f->font) /* a standard-14 font has neither (nor the libraries: extlib.c) */
		PS_X(hb_font_destroy)(f->font);
	if (f->face)
		PS_X(hb_face_destroy)(f->face);
	f->font = NULL;
	f->face = NULL;
}

/* Opens the file PATH as face INDEX, which must cover CP[0..N). */
static int open_file(ps_font *f, const char *path, unsigned index, const uint32_t *cp, size_t n)
{
	uint8_t *d;
	size_t len = 0;
	uint32_t miss;
	int rc;

	if ((rc = ps_io_read_file(f->ctx, path, PS_FONT_MAX_FILE, "the font", &d, &len)) < 0 ||
	    (rc = load_face(f, d, len, index, path)) < 0)
		return rc;
	if ((miss = first_missing(f, cp, n)) != 0)
		return ps_err(f->ctx, PDFSTAMP_E_USAGE, "the font %s has no glyph for U+%04X", path,
		              (unsigned)miss);
	if (embedding_restricted(f->face))
		return ps_err(f->ctx, PDFSTAMP_E_USAGE,
		              "the font %s does not permit embedding (OS/2 fsType)", path);
	return 0;
}

/* ---- fontconfig ------------------------------------------------------------------ */

static int fc_usable(FcPattern *p, const uint32_t *cp, size_t n, const FcChar8 **file, int *index)
{
	FcCharSet *cs;
	FcChar8 *fmt;
	FcBool var;
	size_t i;

	if (PS_X(FcPatternGetString)(p, FC_FILE, 0, (FcChar8 **)file) != FcResultMatch ||
	    PS_X(FcPatternGetString)(p, FC_FONTFORMAT, 0, &fmt) != FcResultMatch ||
	    (strcmp((const char *)fmt, "TrueType") != 0 && strcmp((const char *)fmt, "CFF") != 0) ||
	    PS_X(FcPatternGetCharSet)(p, FC_CHARSET, 0, &cs) != FcResultMatch)
		return 0;
	if (PS_X(FcPatternGetBool)(p, FC_VARIABLE, 0, &var) == FcResultMatch && var)
		return 0;
	if (PS_X(FcPatternGetInteger)(p, FC_INDEX, 0, index) != FcResultMatch || *index < 0 ||
	    *index > 0xFFFF)
		return 0;   /* named instances of variable fonts have bits above 16 */
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

/* Chooses with fontconfig (note 1) and loads the font; fontconfig one
 * thread at a time (extlib.c note 4). */
static int open_fc_locked(ps_font *f, const char *spec, const uint32_t *cp, size_t n);

static int open_fc(ps_font *f, const char *spec, const uint32_t *cp, size_t n)
{
	int rc;

	ps_ext_fc_enter();
	rc = open_fc_locked(f, spec, cp, n);
	ps_ext_fc_leave();
	return rc;
}

static int open_fc_locked(ps_font *f, const char *spec, const uint32_t *cp, size_t n)
{
	ps_ctx *ctx = f->ctx;
	FcConfig *cfg = PS_X(FcInitLoadConfigAndFonts)();
	FcPattern *pat = NULL;
	FcFontSet *fs = NULL;
	FcChar8 *family = NULL;
	FcResult res;
	int rc, i, index, family_seen = 0;
	const FcChar8 *file;

	if (!cfg)
		return ps_err_hint(ctx, PDFSTAMP_HINT_FONT, PDFSTAMP_E_USAGE,
		                   "fontconfig cannot load its configuration: no installed font "
		                   "can be chosen, only a font file");
	pat = spec ? PS_X(FcNameParse)((const FcChar8 *)spec) : PS_X(FcPatternCreate)();
	if (!pat) {
		rc = spec ? ps_err(ctx, PDFSTAMP_E_USAGE, "cannot parse the font name '%s'", spec)
		          : ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if (spec) {
		FcChar8 *fam0;
		if (PS_X(FcPatternGetString)(pat, FC_FAMILY, 0, &fam0) != FcResultMatch) {
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the font name '%s' names no family",
			            spec);
			goto out;
		}
		if (!(family = PS_X(FcStrCopy)(fam0))) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
	} else {
		PS_X(FcPatternAddString)(pat, FC_FAMILY, (const FcChar8 *)"sans-serif");
	}
	if (PS_X(FcPatternGetInteger)(pat, FC_WEIGHT, 0, &i) != FcResultMatch)
		PS_X(FcPatternAddInteger)(pat, FC_WEIGHT, FC_WEIGHT_BOLD);
	PS_X(FcConfigSubstitute)(cfg, pat, FcMatchPattern);
	PS_X(FcDefaultSubstitute)(pat);
	fs = PS_X(FcFontSort)(cfg, pat, FcFalse, NULL, &res);
	for (i = 0; fs && i < fs->nfont; i++) {
		FcPattern *p = fs->fonts[i];
		if (family && !fc_family_is(p, family))
			continue;
		family_seen = 1;
		if (!fc_usable(p, cp, n, &file, &index))
			continue;
		if ((rc = open_file(f, (const char *)file, (unsigned)index, cp, n)) == 0)
			goto out;
		if (rc == PDFSTAMP_E_NOMEM)
			goto out;
		unload(f);   /* damaged, restricted or lying charset: try the next */
	}
	if (family && !family_seen) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "no installed font has the family '%s'",
		            (const char *)family);
		goto out;
	}
	{
		/* name the first character that no font at all has */
		size_t k;
		uint32_t miss = 0;
		for (k = 0; k < n && !miss; k++) {
			int any = 0;
			FcCharSet *cs;
			if (ignorable(cp[k]))
				continue;
			for (i = 0; fs && i < fs->nfont && !any; i++)
				any = (!family || fc_family_is(fs->fonts[i], family)) &&
				      PS_X(FcPatternGetCharSet)(fs->fonts[i], FC_CHARSET, 0,
				                                &cs) == FcResultMatch &&
				      PS_X(FcCharSetHasChar)(cs, cp[k]);
			if (!any)
				miss = cp[k];
		}
		if (family && miss)
			rc = ps_err(ctx, PDFSTAMP_E_USAGE,
			            "no font of the family '%s' covers U+%04X",
			            (const char *)family, (unsigned)miss);
		else if (miss)
			rc = ps_err_hint(ctx, PDFSTAMP_HINT_FONT, PDFSTAMP_E_USAGE,
			                 "no installed font covers U+%04X", (unsigned)miss);
		else
			rc = ps_err_hint(ctx, PDFSTAMP_HINT_FONT, PDFSTAMP_E_USAGE,
			                 "no single installed font%s%s%s covers every character "
			                 "of the text", family ? " of the family '" : "",
			                 family ? (const char *)family : "", family ? "'" : "");
	}
out:
	if (fs)
		PS_X(FcFontSetDestroy)(fs);
	if (pat)
		PS_X(FcPatternDestroy)(pat);
	PS_X(FcStrFree)(family);
	PS_X(FcConfigDestroy)(cfg);
	return rc;
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

int ps_font_open(ps_ctx *ctx, const char *spec, const char *text, ps_font **out)
{
	ps_font *f = NULL;
	uint32_t *cp = NULL, miss;
	size_t n, i;
	int rc;

	*out = NULL;
	if ((rc = decode(ctx, text, text ? strlen(text) : 0, &cp, &n)) < 0)
		return rc;
	if ((rc = font_new(ctx, &f)) < 0)
		goto out;
	if (!spec) {
		for (i = 0; i < n && (ps_text_winansi_code(cp[i]) >= 0 || cp[i] == '\r'); i++)
			;
		if (i == n) {
			f->std14 = 1;
			goto out;
		}
	}
	if (spec && !*spec)
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "empty font name");
	else if ((rc = ps_ext_need(ctx, PS_EXT_TEXT)) < 0) /* extlib.c note 3 */
		;
	else if (spec && strchr(spec, '/'))
		rc = open_file(f, spec, 0, cp, n);
	else
		rc = open_fc(f, spec, cp, n);
	if (rc == 0 && (miss = first_missing(f, cp, n)) != 0)
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the chosen font has no glyph for U+%04X",
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

int ps_font_open_mem(ps_ctx *ctx, const uint8_t *data, size_t len, const char *text, ps_font **out)
{
	ps_font *f = NULL;
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
	if ((rc = font_new(ctx, &f)) < 0 || !(d = malloc(len ? len : 1))) {
		rc = rc < 0 ? rc : ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if (len)
		memcpy(d, data, len);
	if ((rc = load_face(f, d, len, 0, "the font")) < 0)
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

int ps_font_nominal_glyph(ps_font *f, uint32_t c, uint32_t *gid)
{
	hb_codepoint_t g;

	if (f->std14) {
		int b = ps_text_winansi_code(c);
		*gid = b < 0 ? 0 : (uint32_t)b;
		return b >= 32;
	}
	if (!PS_X(hb_font_get_nominal_glyph)(f->font, c, &g))
		return 0;
	*gid = g;
	return 1;
}

void ps_font_free(ps_font *f)
{
	size_t i;

	if (!f)
		return;
	unload(f);
	for (i = 0; i < f->nglyphs; i++)
		free(f->glyphs[i].text);
	free(f->glyphs);
	free(f->psname);
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
	memset(l, 0, sizeof *l);
}

/* ---- the glyphs used ------------------------------------------------------------------ */

/* The entry of GID in F's sorted list of used glyphs, or NULL. */
static ps_font_glyph *find_glyph(ps_font *f, uint32_t gid)
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
static int use_glyph(ps_font *f, uint32_t gid, const uint32_t *text, size_t nt)
{
	ps_font_glyph *g = find_glyph(f, gid);
	size_t lo = 0, hi = f->nglyphs;

	if (!g) {
		if (f->embedded_num)
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
static int shape_run(ps_font *f, hb_buffer_t *buf, const uint32_t *cp, size_t n, const run *r,
                     ps_line *l, size_t *cap, double *pen)
{
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
	if ((rc = itemize(ctx, cp, n, lev, &r, &nr)) < 0)
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

int ps_font_show(ps_font *f, const ps_line *l, const char *name, double size, double x, double y,
                 ps_buf *content)
{
	double cur = 0, rise = 0;
	size_t i, k, *ord = NULL;
	int in_tj = 0, rc;

	if (f->std14) {
		ps_buf_puts(content, "BT /");
		ps_buf_puts(content, name);
		ps_buf_putc(content, ' ');
		put_num(content, size, " Tf ");
		put_num(content, x, " ");
		put_num(content, y, " Td ");
		put_pdf_string(content, l);
		ps_buf_puts(content, " Tj ET\n");
		return content->oom ? ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
	}
	if (!f->embedded_num)
		return ps_err(f->ctx, PDFSTAMP_E_INTERNAL, "ps_font_show before ps_font_embed");
	if (!l->rtl) {
		ps_buf_puts(content, "/Span << /ActualText ");
		if ((rc = put_actual_text(f->ctx, content, l->text ? l->text : "")) < 0)
			return rc;
		ps_buf_puts(content, " >> BDC ");
	} else if (l->n && l->lkey) {
		/* note 4: a line with a right-to-left run is drawn in logical order */
		if ((rc = logical_order(f->ctx, l, &ord)) < 0)
			return rc;
	}
	ps_buf_puts(content, "BT /");
	ps_buf_puts(content, name);
	ps_buf_putc(content, ' ');
	put_num(content, size, " Tf ");
	put_num(content, x, " ");
	put_num(content, y, " Td ");
	for (k = 0; k < l->n; k++) {
		ps_font_glyph *g;
		double adj;
		i = ord ? ord[k] : k;
		g = find_glyph(f, l->gid[i]);
		if (!g || !g->in_subset) {
			free(ord);
			return ps_err(f->ctx, PDFSTAMP_E_INTERNAL,
			              "glyph %u is not in the embedded subset",
			              (unsigned)l->gid[i]);
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
