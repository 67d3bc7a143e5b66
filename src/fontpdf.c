/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fontpdf.c - the stamp fonts' PDF objects: the standard-14 font
 * dictionary, or per font of the set that draws something the subset
 * (hb-subset) and the Type 0 font around it, and the /Font resources.
 *
 * DESIGN NOTES
 *
 *  1. Standard 14: one simple font dictionary, << /Type /Font /Subtype
 *     /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>
 *     (ISO 32000-2 9.6.2.2), the dictionary stamp.c always wrote.
 *  2. Embedded: five objects (9.7.4, 9.7.6, 9.8, 9.9, 9.10.3):
 *       Type 0 font   /Encoding /Identity-H (2-byte codes = CIDs),
 *                     /DescendantFonts [CIDFont], /ToUnicode;
 *       CIDFont       /CIDSystemInfo (Adobe) (Identity) 0, /DW 1000, /W
 *                     with the advance of every glyph used (1/1000 em,
 *                     rounded to 1/1000 exactly as font.c positions with
 *                     them), /FontDescriptor;
 *       descriptor    /Flags 4 (symbolic: the glyphs are not the standard
 *                     Latin set) plus 1 (fixed pitch) and 64 (italic) from
 *                     'post'; /FontBBox from 'head'; /Ascent /Descent /
 *                     /CapHeight from OS/2 or hhea (HarfBuzz's metrics);
 *                     /StemV, which fonts do not record, estimated from
 *                     the OS/2 weight class (50 + (weight / 65)^2, the
 *                     usual heuristic); /FontName;
 *       font program  Flate-compressed; see 3;
 *       ToUnicode     a CMap of bfchar entries, each CID to the UTF-16BE
 *                     text it stands for (surrogate pairs above U+FFFF),
 *                     at most 100 per block (9.10.3).
 *     /BaseFont and /FontName are TAG+PostScriptName (9.9.2): TAG is six
 *     capitals from an FNV-1a hash of the PostScript name, the subset's
 *     font program (hb-subset is deterministic), the sorted glyph ids and
 *     their advances, so the same glyphs of the same font get the same tag
 *     and another subset, or the same glyphs of another version of the
 *     font, (almost surely) another.
 *     The PostScript name ('name' ID 6) keeps only printable ASCII that
 *     needs no escape in a name, at most 63 bytes ("Font" if none).
 *  3. The subset and the CID of each glyph.  hb-subset keeps glyph 0, the
 *     glyphs shaped (and composite components); it drops the layout
 *     tables (GSUB, GPOS, GDEF, ...; PDF places glyphs itself), colour,
 *     bitmap, vertical and variation tables, and hinting (NO_HINTING;
 *     stamps are large, and it halves a CJK subset).  The plan's old->new
 *     glyph map gives each used glyph its new id.
 *       - glyf outlines: /CIDFontType2 with /CIDToGIDMap /Identity and
 *         /FontFile2 (the subset TrueType, /Length1): CID = new glyph id.
 *       - CFF outlines: /CIDFontType0 with /FontFile3 /Subtype
 *         /CIDFontType0C, the subset's bare 'CFF ' table.  The CID selects
 *         the glyph through the CFF charset when the Top DICT has ROS (a
 *         CID-keyed font such as Noto Sans CJK, which hb-subset keeps
 *         CID-keyed with the original CIDs), else CID = glyph id
 *         (9.7.4.2).  So the subset's CFF is parsed here (header, Name and
 *         Top DICT INDEXes, the charset, formats 0-2) and each glyph's CID
 *         read from its charset entry.  Not /Subtype /OpenType: FreeType
 *         maps CIDs through the charset only for a bare CFF, and poppler
 *         22 (Splash and Cairo) draws nothing for a CID-keyed OpenType
 *         CFF whose CIDs are not its glyph ids; MuPDF draws both (checked
 *         with Noto Sans CJK Bold).
 *     A glyph the subset lost, a CID that repeats or a CFF that does not
 *     parse is a FORMAT error: the font was damaged.
 *  4. Idempotence: the objects are written once; later calls put the
 *     same references into the resources they are given.  Glyphs shaped
 *     afterwards are refused by font.c (INTERNAL), since the subsets are
 *     fixed (in every font of the set, so the names of note 5 stay).
 *  5. The set: the first ps_font_embed numbers the fonts of the set that
 *     have a glyph shaped, in the set's order, /F1 ... /Fn, and writes
 *     the five objects of each (a font that draws nothing is not
 *     embedded); every call puts /F1 ... /Fn into the /Font dictionary of
 *     the appearance it is given, which font.c's Tf operators name.  The
 *     standard-14 font is /F1.  One font, one subset: a font's glyphs of
 *     every line are in its one subset.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extlib.h"

#include "ps.h"
#include "fontint.h"


static int16_t s16(const uint8_t *p)
{
	return (int16_t)(uint16_t)ps_be16(p);
}

/* ---- the CFF charset ------------------------------------------------------------ */

/* An INDEX at *POS of D[0..N): its COUNT and the data offset of entry 0
 * and of the end of entry 0 (when COUNT > 0); *POS moves past it. */
static int cff_index(const uint8_t *d, size_t n, size_t *pos, uint32_t *count, size_t *e0,
                     size_t *e1)
{
	size_t p = *pos, osz, base, k, last = 0;
	uint32_t c, i;

	if (p + 2 > n)
		return -1;
	c = ps_be16(d + p);
	*count = c;
	if (c == 0) {
		*pos = p + 2;
		return 0;
	}
	if (p + 3 > n || (osz = d[p + 2]) < 1 || osz > 4 || p + 3 + ((size_t)c + 1) * osz > n)
		return -1;
	base = p + 3 + ((size_t)c + 1) * osz - 1;
	for (i = 0; i <= c; i++) {
		size_t v = 0;
		for (k = 0; k < osz; k++)
			v = v << 8 | d[p + 3 + (size_t)i * osz + k];
		if (i == 0) {
			*e0 = base + v;
		} else if (i == 1) {
			*e1 = base + v;
		}
		if (i == c)
			last = base + v;
	}
	if (*e0 > *e1 || *e1 > n || last > n || last < base)
		return -1;
	*pos = last;
	return 0;
}

/* Parses the Top DICT D[p..end): charset and CharStrings offsets, ROS. */
static int cff_topdict(const uint8_t *d, size_t p, size_t end, long *charset, long *chstr, int *ros)
{
	long st[48];
	int ns = 0;

	while (p < end) {
		unsigned b = d[p];
		if (b <= 21) {
			unsigned op = b;
			if (b == 12) {
				if (p + 1 >= end)
					return -1;
				op = 1200 + d[p + 1];
				p++;
			}
			p++;
			if (op == 15 && ns >= 1)
				*charset = st[ns - 1];
			else if (op == 17 && ns >= 1)
				*chstr = st[ns - 1];
			else if (op == 1230)
				*ros = 1;
			ns = 0;
			continue;
		}
		if (ns == 48)
			return -1;
		if (b == 28 && p + 3 <= end) {
			st[ns++] = (int16_t)(uint16_t)ps_be16(d + p + 1);
			p += 3;
		} else if (b == 29 && p + 5 <= end) {
			st[ns++] = (int32_t)((uint32_t)ps_be16(d + p + 1) << 16 |
			                     ps_be16(d + p + 3));
			p += 5;
		} else if (b == 30) {
			for (p++; p < end && (d[p] & 0x0F) != 0x0F && (d[p] >> 4) != 0x0F; p++)
				;
			if (p++ >= end)
				return -1;
			st[ns++] = 0;
		} else if (b >= 32 && b <= 246) {
			st[ns++] = (long)b - 139;
			p++;
		} else if (b >= 247 && b <= 250 && p + 2 <= end) {
			st[ns++] = ((long)b - 247) * 256 + d[p + 1] + 108;
			p += 2;
		} else if (b >= 251 && b <= 254 && p + 2 <= end) {
			st[ns++] = -((long)b - 251) * 256 - d[p + 1] - 108;
			p += 2;
		} else {
			return -1;
		}
	}
	return 0;
}

/* The CID of every glyph of CFF table D[0..N) into *CIDS (malloc'ed,
 * *NG glyphs); glyph ids themselves for a font that is not CID-keyed. */
static int cff_cids(const uint8_t *d, size_t n, uint32_t **cids, uint32_t *ng)
{
	size_t pos, e0 = 0, e1 = 0, p;
	uint32_t cnt, nglyphs, g, *c;
	long charset = 0, chstr = -1;
	int ros = 0;

	if (n < 4 || d[2] < 4)
		return -1;
	pos = d[2];
	if (cff_index(d, n, &pos, &cnt, &e0, &e1) < 0)     /* Name INDEX */
		return -1;
	if (cff_index(d, n, &pos, &cnt, &e0, &e1) < 0 || cnt < 1 ||   /* Top DICT INDEX */
	    cff_topdict(d, e0, e1, &charset, &chstr, &ros) < 0)
		return -1;
	if (chstr <= 0 || (size_t)chstr >= n)
		return -1;
	pos = (size_t)chstr;
	if (cff_index(d, n, &pos, &nglyphs, &e0, &e1) < 0 || nglyphs == 0)
		return -1;
	if (!(c = malloc(nglyphs * sizeof *c)))
		return -2;
	for (g = 0; g < nglyphs; g++)
		c[g] = g;
	if (ros) {
		if (charset <= 2 || (size_t)charset >= n)
			goto bad;
		p = (size_t)charset;
		c[0] = 0;
		g = 1;
		if (d[p] == 0) {
			for (p++; g < nglyphs; g++, p += 2) {
				if (p + 2 > n)
					goto bad;
				c[g] = ps_be16(d + p);
			}
		} else if (d[p] == 1 || d[p] == 2) {
			int fmt = d[p++];
			while (g < nglyphs) {
				uint32_t first, left, k;
				if (p + (fmt == 1 ? 3 : 4) > n)
					goto bad;
				first = ps_be16(d + p);
				left = fmt == 1 ? d[p + 2] : ps_be16(d + p + 2);
				p += fmt == 1 ? 3 : 4;
				for (k = 0; k <= left && g < nglyphs; k++)
					c[g++] = first + k;
			}
		} else {
			goto bad;
		}
	}
	*cids = c;
	*ng = nglyphs;
	return 0;
bad:
	free(c);
	return -1;
}

/* ---- the subset ------------------------------------------------------------------ */

static const char drop_tags[][5] = {
	"GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH", "kern", "morx", "mort", "kerx",
	"feat", "DSIG", "hdmx", "VDMX", "LTSH", "gasp", "COLR", "CPAL", "SVG ", "sbix",
	"CBDT", "CBLC", "EBDT", "EBLC", "EBSC", "vhea", "vmtx", "VORG", "STAT", "meta",
	"fvar", "gvar", "avar", "HVAR", "VVAR", "MVAR", "cvar", "PCLT",
};

/* Subsets F to its glyphs: PROG receives the font program (the TrueType
 * font, or the bare CFF table), each glyph its CID (note 3). */
static int make_subset(ps_face *f, ps_buf *prog)
{
	ps_ctx *ctx = f->ctx;
	hb_subset_input_t *in = PS_X(hb_subset_input_create_or_fail)();
	hb_subset_plan_t *plan = NULL;
	hb_face_t *sub = NULL;
	hb_blob_t *blob = NULL, *cff = NULL;
	const hb_map_t *map;
	uint32_t *cids = NULL, ncids = 0;
	uint8_t *seen = NULL;
	const char *data;
	unsigned len, i;
	size_t k;
	int rc = 0;

	if (!in)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	PS_X(hb_set_add)(PS_X(hb_subset_input_glyph_set)(in), 0);
	for (k = 0; k < f->nglyphs; k++)
		PS_X(hb_set_add)(PS_X(hb_subset_input_glyph_set)(in), f->glyphs[k].gid);
	for (i = 0; i < sizeof drop_tags / sizeof drop_tags[0]; i++)
		PS_X(hb_set_add)(PS_X(hb_subset_input_set)(in, HB_SUBSET_SETS_DROP_TABLE_TAG),
		                 HB_TAG(drop_tags[i][0], drop_tags[i][1], drop_tags[i][2],
		                        drop_tags[i][3]));
	PS_X(hb_subset_input_set_flags)(in, HB_SUBSET_FLAGS_NO_HINTING);
	if (!(plan = PS_X(hb_subset_plan_create_or_fail)(f->face, in)) ||
	    !(sub = PS_X(hb_subset_plan_execute_or_fail)(plan))) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the font cannot be subset (damaged font?)");
		goto out;
	}
	blob = PS_X(hb_face_reference_blob)(sub);
	data = PS_X(hb_blob_get_data)(blob, &len);
	if (!data || len < 12) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the font cannot be subset (empty subset)");
		goto out;
	}
	if (f->cff) {
		const uint8_t *cd;
		cff = PS_X(hb_face_reference_table)(sub, HB_TAG('C', 'F', 'F', ' '));
		cd = (const uint8_t *)PS_X(hb_blob_get_data)(cff, &len);
		if (!cd || (rc = cff_cids(cd, len, &cids, &ncids)) < 0) {
			rc = rc == -2 ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory")
			              : ps_err(ctx, PDFSTAMP_E_FORMAT,
			                       "the subset's CFF table does not parse "
			                       "(damaged font?)");
			goto out;
		}
		ps_buf_append(prog, cd, len);
	} else {
		ps_buf_append(prog, data, len);
	}
	map = PS_X(hb_subset_plan_old_to_new_glyph_mapping)(plan);
	for (k = 0; k < f->nglyphs; k++) {
		ps_font_glyph *g = &f->glyphs[k];
		hb_codepoint_t ng = PS_X(hb_map_get)(map, g->gid);
		if (ng == HB_MAP_VALUE_INVALID || ng > 0xFFFF || (f->cff && ng >= ncids)) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "the font subset lost glyph %u (damaged font?)",
			            (unsigned)g->gid);
			goto out;
		}
		g->cid = f->cff ? cids[ng] : ng;
		if (g->cid > 0xFFFF) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "CID %u of the font is out of range",
			            (unsigned)g->cid);
			goto out;
		}
		g->in_subset = 1;
	}
	/* two glyphs with one CID would draw the same glyph */
	if (!(seen = calloc(65536 / 8, 1))) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	for (k = 0; k < f->nglyphs; k++) {
		uint32_t c = f->glyphs[k].cid;
		if (seen[c >> 3] & (1u << (c & 7))) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the font's CFF charset repeats CID %u",
			            (unsigned)c);
			goto out;
		}
		seen[c >> 3] |= (uint8_t)(1u << (c & 7));
	}
	if (prog->oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	free(seen);
	free(cids);
	PS_X(hb_blob_destroy)(cff);
	PS_X(hb_blob_destroy)(blob);
	PS_X(hb_face_destroy)(sub);
	PS_X(hb_subset_plan_destroy)(plan);
	PS_X(hb_subset_input_destroy)(in);
	return rc;
}

/* ---- names ------------------------------------------------------------------ */

/* TAG+PSNAME (note 2), in OUT (at least 71 bytes); PROG is the subset's
 * font program. */
static void base_font(const ps_face *f, const ps_buf *prog, char *out)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *s;
	size_t k;
	int i;

	for (s = f->psname; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	for (k = 0; k < prog->len; k++)
		h = (h ^ prog->data[k]) * 0x100000001b3ull;
	for (k = 0; k < f->nglyphs; k++) {
		uint32_t w = (uint32_t)llround(f->glyphs[k].w * 1000);
		for (i = 0; i < 4; i++)
			h = (h ^ ((f->glyphs[k].gid >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
		for (i = 0; i < 4; i++)
			h = (h ^ ((w >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
	}
	for (i = 0; i < 6; i++) {
		out[i] = (char)('A' + h % 26);
		h /= 26;
	}
	out[6] = '+';
	strcpy(out + 7, f->psname);
}

/* ---- the objects ------------------------------------------------------------------ */

static ps_obj *new_stream(ps_ctx *ctx, ps_obj *dict, const uint8_t *data, size_t n, int *rc)
{
	ps_buf z = PS_BUF_INIT;
	uint8_t *p;
	size_t len;

	*rc = 0;
	if (!dict || (*rc = ps_deflate(ctx, data, n, 9, &z)) < 0 ||
	    ps_dict_put_name(dict, "Filter", "FlateDecode") < 0) {
		ps_obj_free(dict);
		ps_buf_free(&z);
		if (!*rc)
			*rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		return NULL;
	}
	p = ps_buf_detach(&z, &len);
	return ps_new_stream(dict, p, len);
}

static void put_utf16(ps_buf *b, const uint32_t *t, size_t n)
{
	size_t i;

	ps_buf_putc(b, '<');
	for (i = 0; i < n; i++)
		ps_font_put_utf16(b, t[i]);
	ps_buf_putc(b, '>');
}

/* The ToUnicode CMap (9.10.3; the form of Adobe's Identity-UCS CMaps). */
static void tounicode(const ps_face *f, ps_buf *b)
{
	size_t k, n = 0, done = 0;

	for (k = 0; k < f->nglyphs; k++)
		n += f->glyphs[k].ntext > 0;
	ps_buf_puts(b, "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
	               "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
	               "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
	               "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n");
	for (k = 0; k < f->nglyphs; k++) {
		const ps_font_glyph *g = &f->glyphs[k];
		if (!g->ntext)
			continue;
		if (done % 100 == 0)
			ps_buf_printf(b, "%zu beginbfchar\n", n - done < 100 ? n - done : 100);
		ps_buf_printf(b, "<%04X> ", (unsigned)g->cid);
		put_utf16(b, g->text, g->ntext);
		ps_buf_putc(b, '\n');
		if (++done % 100 == 0 || done == n)
			ps_buf_puts(b, "endbfchar\n");
	}
	ps_buf_puts(b, "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
}

static int cmp_cid(const void *a, const void *b)
{
	const ps_font_glyph *x = *(const ps_font_glyph *const *)a,
	                    *y = *(const ps_font_glyph *const *)b;

	return x->cid < y->cid ? -1 : x->cid > y->cid;
}

/* /W [c [w ...] ...] in CID order, runs of consecutive CIDs together. */
static ps_obj *widths(const ps_face *f)
{
	const ps_font_glyph **v = malloc((f->nglyphs ? f->nglyphs : 1) * sizeof *v);
	ps_obj *w = ps_new_array(), *run = NULL;
	size_t k;

	if (!v || !w)
		goto oom;
	for (k = 0; k < f->nglyphs; k++)
		v[k] = &f->glyphs[k];
	qsort(v, f->nglyphs, sizeof *v, cmp_cid);
	for (k = 0; k < f->nglyphs; k++) {
		if (!run || v[k]->cid != v[k - 1]->cid + 1) {
			if (ps_array_push(w, ps_new_int(v[k]->cid)) < 0 ||
			    !(run = ps_new_array()) || ps_array_push(w, run) < 0)
				goto oom;
		}
		if (ps_array_push(run, ps_new_real(v[k]->w)) < 0)
			goto oom;
	}
	free(v);
	return w;
oom:
	free(v);
	ps_obj_free(w);
	return NULL;
}

/* Table TAG of F's face: its bytes while *B lives (NULL if shorter than MIN). */
static const uint8_t *table(const ps_face *f, hb_tag_t tag, unsigned min, hb_blob_t **b)
{
	unsigned len;
	const char *p;

	*b = PS_X(hb_face_reference_table)(f->face, tag);
	p = PS_X(hb_blob_get_data)(*b, &len);
	return p && len >= min ? (const uint8_t *)p : NULL;
}

static ps_obj *descriptor(const ps_face *f, const char *base)
{
	ps_obj *d = ps_new_dict(), *bbox = ps_new_array();
	hb_blob_t *b;
	const uint8_t *p;
	double s = 1000.0 / f->upem, box[4] = {0, 0, 1000, 1000}, italic = 0;
	hb_position_t asc = (hb_position_t)f->upem * 4 / 5, desc = -(hb_position_t)f->upem / 5, cap;
	int flags = 4, weight = 400, i, ok = 1;

	if ((p = table(f, HB_TAG('h', 'e', 'a', 'd'), 54, &b)) != NULL)
		for (i = 0; i < 4; i++)
			box[i] = s16(p + 36 + 2 * i) * s;
	PS_X(hb_blob_destroy)(b);
	if ((p = table(f, HB_TAG('p', 'o', 's', 't'), 16, &b)) != NULL) {
		italic = (int32_t)((uint32_t)ps_be16(p + 4) << 16 | ps_be16(p + 6)) / 65536.0;
		if (ps_be16(p + 12) || ps_be16(p + 14))
			flags |= 1;
	}
	PS_X(hb_blob_destroy)(b);
	if ((p = table(f, HB_TAG('O', 'S', '/', '2'), 6, &b)) != NULL && ps_be16(p + 4) >= 1 &&
	    ps_be16(p + 4) <= 1000)
		weight = (int)ps_be16(p + 4);
	PS_X(hb_blob_destroy)(b);
	if (italic != 0 && isfinite(italic))
		flags |= 64;
	else
		italic = 0;
	PS_X(hb_ot_metrics_get_position)(f->font, HB_OT_METRICS_TAG_HORIZONTAL_ASCENDER, &asc);
	PS_X(hb_ot_metrics_get_position)(f->font, HB_OT_METRICS_TAG_HORIZONTAL_DESCENDER, &desc);
	if (!PS_X(hb_ot_metrics_get_position)(f->font, HB_OT_METRICS_TAG_CAP_HEIGHT, &cap) ||
	    cap <= 0)
		cap = asc;
	for (i = 0; bbox && i < 4; i++)
		if (ps_array_push(bbox, ps_new_real(ps_font_milli(box[i]))) < 0)
			ok = 0;
	if (!ok || !d || !bbox || ps_dict_put_name(d, "Type", "FontDescriptor") < 0 ||
	    ps_dict_put_name(d, "FontName", base) < 0 || ps_dict_put_int(d, "Flags", flags) < 0) {
		ps_obj_free(bbox);
		ps_obj_free(d);
		return NULL;
	}
	if (ps_dict_put(d, "FontBBox", bbox) < 0 ||    /* takes BBOX, also on failure */
	    ps_dict_put_real(d, "ItalicAngle", ps_font_milli(italic)) < 0 ||
	    ps_dict_put_real(d, "Ascent", ps_font_milli(asc * s)) < 0 ||
	    ps_dict_put_real(d, "Descent", ps_font_milli(desc * s)) < 0 ||
	    ps_dict_put_real(d, "CapHeight", ps_font_milli(cap * s)) < 0 ||
	    ps_dict_put_int(d, "StemV",
	                    50 + (int64_t)llround((weight / 65.0) * (weight / 65.0))) < 0) {
		ps_obj_free(d);
		return NULL;
	}
	return d;
}

/* The error of a sink's ALLOC that returned 0 (it has set one). */
static int alloc_failed(ps_ctx *ctx)
{
	return ctx->errcode < 0 ? ctx->errcode
	                        : ps_err(ctx, PDFSTAMP_E_INTERNAL, "no object number for the font");
}

static int embed_std14(ps_font *f, const ps_font_sink *s)
{
	ps_obj *d = ps_new_dict();
	uint32_t n;
	int rc;

	if (!d || ps_dict_put_name(d, "Type", "Font") < 0 ||
	    ps_dict_put_name(d, "Subtype", "Type1") < 0 ||
	    ps_dict_put_name(d, "BaseFont", "Helvetica-Bold") < 0 ||
	    ps_dict_put_name(d, "Encoding", "WinAnsiEncoding") < 0) {
		ps_obj_free(d);
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	if (!(n = s->alloc(s->ud))) {
		ps_obj_free(d);
		return alloc_failed(f->ctx);
	}
	if ((rc = s->put(s->ud, n, d)) < 0)
		return rc;
	f->std14_num = n;
	return 0;
}

/* The five objects of face F (note 2); *NUM is its Type 0 font. */
static int embed_face(ps_face *f, const ps_font_sink *s, uint32_t *num)
{
	ps_ctx *ctx = f->ctx;
	ps_buf prog = PS_BUF_INIT, cmap = PS_BUF_INIT;
	ps_obj *o = NULL, *a;
	uint32_t n0, n1, n2, n3, n4;
	char base[80];
	int rc = 0;

	if (f->embedded_num) {
		*num = f->embedded_num;
		return 0;
	}
	if ((!f->psname && (rc = ps_font_psname(f)) < 0) || (rc = make_subset(f, &prog)) < 0)
		goto out;
	base_font(f, &prog, base);
	tounicode(f, &cmap);
	if (cmap.oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if (!(n0 = s->alloc(s->ud)) || !(n1 = s->alloc(s->ud)) || !(n2 = s->alloc(s->ud)) ||
	    !(n3 = s->alloc(s->ud)) || !(n4 = s->alloc(s->ud))) {
		rc = alloc_failed(ctx);
		goto out;
	}
	/* the font program: /FontFile2 with /Length1, or /FontFile3 (bare CFF) */
	o = ps_new_dict();
	if (o && (f->cff ? ps_dict_put_name(o, "Subtype", "CIDFontType0C")
	                 : ps_dict_put_int(o, "Length1", (int64_t)prog.len)) < 0) {
		ps_obj_free(o);
		o = NULL;
	}
	if (!(o = new_stream(ctx, o, prog.data, prog.len, &rc)))
		goto nomem;
	if ((rc = s->put(s->ud, n3, o)) < 0)
		goto out;
	/* the ToUnicode CMap */
	if (!(o = new_stream(ctx, ps_new_dict(), cmap.data, cmap.len, &rc)))
		goto nomem;
	if ((rc = s->put(s->ud, n4, o)) < 0)
		goto out;
	/* the descriptor */
	if (!(o = descriptor(f, base)) ||
	    ps_dict_put_ref(o, f->cff ? "FontFile3" : "FontFile2", n3, 0) < 0)
		goto nomem;
	if ((rc = s->put(s->ud, n2, o)) < 0)
		goto out;
	/* the CIDFont */
	o = ps_new_dict();
	a = ps_new_dict();
	if (!o || !a || ps_dict_put_str(a, "Registry", "Adobe", 5) < 0 ||
	    ps_dict_put_str(a, "Ordering", "Identity", 8) < 0 ||
	    ps_dict_put_int(a, "Supplement", 0) < 0) {
		ps_obj_free(a);
		goto nomem;
	}
	if (ps_dict_put_name(o, "Type", "Font") < 0 ||
	    ps_dict_put_name(o, "Subtype", f->cff ? "CIDFontType0" : "CIDFontType2") < 0 ||
	    ps_dict_put_name(o, "BaseFont", base) < 0) {
		ps_obj_free(a);
		goto nomem;
	}
	if (ps_dict_put(o, "CIDSystemInfo", a) < 0 ||     /* takes A, also on failure */
	    ps_dict_put_ref(o, "FontDescriptor", n2, 0) < 0 || ps_dict_put_int(o, "DW", 1000) < 0 ||
	    ps_dict_put(o, "W", widths(f)) < 0 ||
	    (!f->cff && ps_dict_put_name(o, "CIDToGIDMap", "Identity") < 0))
		goto nomem;
	if ((rc = s->put(s->ud, n1, o)) < 0)
		goto out;
	/* the Type 0 font */
	o = ps_new_dict();
	a = ps_new_array();
	if (!o || !a || ps_array_push(a, ps_new_ref(n1, 0)) < 0) {
		ps_obj_free(a);
		goto nomem;
	}
	if (ps_dict_put_name(o, "Type", "Font") < 0 ||
	    ps_dict_put_name(o, "Subtype", "Type0") < 0 ||
	    ps_dict_put_name(o, "BaseFont", base) < 0 ||
	    ps_dict_put_name(o, "Encoding", "Identity-H") < 0) {
		ps_obj_free(a);
		goto nomem;
	}
	if (ps_dict_put(o, "DescendantFonts", a) < 0 || ps_dict_put_ref(o, "ToUnicode", n4, 0) < 0)
		goto nomem;
	if ((rc = s->put(s->ud, n0, o)) < 0)
		goto out;
	o = NULL;
	*num = f->embedded_num = n0;
	goto out;
nomem:
	ps_obj_free(o);
	if (rc == 0)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_buf_free(&prog);
	ps_buf_free(&cmap);
	return rc;
}

/* /F<k> N 0 R into FONTS. */
static int put_font_ref(ps_ctx *ctx, ps_obj *fonts, unsigned k, uint32_t num)
{
	char name[16];

	snprintf(name, sizeof name, "F%u", k);
	if (ps_dict_put_ref(fonts, name, num, 0) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

int ps_font_embed_to(ps_font *f, const ps_font_sink *s, ps_obj *fonts)
{
	size_t k;
	unsigned res = 0;
	int rc;

	if (!fonts)
		return ps_err(f->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (f->std14) {
		if (!f->std14_num && (rc = embed_std14(f, s)) < 0)
			return rc;
		return put_font_ref(f->ctx, fonts, 1, f->std14_num);
	}
	/* note 5: the faces that draw something, /F1 ... in the set's order;
	 * fixed by the first call (no glyph can be added after it) */
	for (k = 0; k < f->nfaces && !f->embedded; k++)
		f->faces[k]->res = f->faces[k]->nglyphs ? ++res : 0;
	for (k = 0; k < f->nfaces; k++) {
		ps_face *fc = f->faces[k];
		uint32_t num = 0;
		if (!fc->res)
			continue;
		if ((rc = embed_face(fc, s, &num)) < 0 ||
		    (rc = put_font_ref(f->ctx, fonts, fc->res, num)) < 0)
			return rc;
	}
	f->embedded = 1;
	for (k = 0; k < f->nfaces; k++)
		f->faces[k]->sealed = 1;
	return 0;
}

static uint32_t up_alloc(void *ud)
{
	return ps_update_alloc(ud);
}

static int up_put(void *ud, uint32_t num, ps_obj *obj)
{
	return ps_update_put(ud, num, 0, obj);
}

int ps_font_embed(ps_font *f, ps_update *up, ps_obj *fonts)
{
	ps_font_sink s = {up, up_alloc, up_put};

	return ps_font_embed_to(f, &s, fonts);
}
