/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_font.c - libFuzzer target for the font loader, the shaper and the
 * subsetter (font.c, fontpdf.c), which `pdfstamp stamp --font FILE` runs
 * over a font file the user names (and fontconfig over installed ones).
 *
 * Input: a font file (TrueType, OpenType/CFF or a collection), as it is,
 * so that real fonts and tests/malformed/fonts/ are inputs.  Its length
 * modulo 16 picks the rest: bits 0-2 the text (list below); bit 3: open
 * with an empty text (no coverage check), so that shaping and subsetting
 * run on fonts that lack the characters (.notdef glyphs).
 *
 * Oracles: ps_font_open_mem fails only with FORMAT, UNSUPPORTED, USAGE
 * (the font lacks a character) or NOMEM, always with a message; once
 * open, shaping every line never fails but for NOMEM; embedding fails
 * only with FORMAT or NOMEM, and a second call returns the same object
 * without writing anything; drawing every shaped line succeeds.  A
 * TrueType program HarfBuzz wrote must load back with at least one glyph.
 */
#include "fuzz.h"

#include <hb.h>

#include "font.h"

struct fzf_sink {
	ps_obj *o[8];
	uint32_t next, puts;
};

static uint32_t fzf_alloc(void *ud)
{
	struct fzf_sink *s = ud;

	return s->next < 8 ? s->next++ : 0;
}

static int fzf_put(void *ud, uint32_t num, ps_obj *obj)
{
	struct fzf_sink *s = ud;

	s->puts++;
	if (num >= 8 || s->o[num]) {
		ps_obj_free(obj);
		return PDFSTAMP_E_INTERNAL;
	}
	s->o[num] = obj;
	return 0;
}

static void fzf_check(ps_ctx *ctx, int rc, int allowed_mask, const char *what)
{
	int bit = rc == PDFSTAMP_E_FORMAT ? 1 : rc == PDFSTAMP_E_UNSUPPORTED ? 2 : rc == PDFSTAMP_E_USAGE ? 4 :
	          rc == PDFSTAMP_E_NOMEM ? 8 : 0;

	if (!(bit & allowed_mask))
		fz_bug(ctx, what);
	if (pdfstamp_ctx_errmsg(ctx)[0] == 0)
		fz_bug(ctx, "an error without a message");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const texts[8] = {
		"Approved", "Одобрено\nΕγκρίθηκε", "承認", "موافق 2024", "स्वीकृत कि", "a\xcc\x81\xcc\x81 g\xcc\xa3",
		"Approved: موافق (ok)", "\xef\xac\x81 \xf0\x9f\x98\x80 A",
	};
	struct fzf_sink sink = {{0}, 1, 0};
	ps_font_sink s = {&sink, fzf_alloc, fzf_put};
	ps_line lines[2];
	ps_buf content = PS_BUF_INIT;
	const char *text, *p, *nl;
	ps_font *f = NULL;
	ps_ctx *ctx;
	ps_obj *d1 = ps_new_dict(), *d2 = ps_new_dict();
	size_t nlines = 0, i, k, glyphs;
	int rc;

	if (size > FZ_MAX_INPUT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	memset(lines, 0, sizeof lines);
	text = texts[size & 7];
	rc = ps_font_open_mem(ctx, data, size, (size & 8) ? "" : text, &f);
	if (rc < 0) {
		fzf_check(ctx, rc, 1 | 2 | 4 | 8, "ps_font_open_mem: unexpected error code");
		goto done;
	}
	for (p = text; nlines < 2; p = nl + 1) {
		nl = strchr(p, '\n');
		rc = ps_font_shape(f, p, nl ? (size_t)(nl - p) : strlen(p), &lines[nlines]);
		if (rc < 0) {
			fzf_check(ctx, rc, 8, "ps_font_shape failed on an open font");
			goto done;
		}
		nlines++;
		if (!nl)
			break;
	}
	if (!d1 || !d2)
		goto done;
	rc = ps_font_embed_to(f, &s, d1);
	if (rc < 0) {
		fzf_check(ctx, rc, 1 | 8, "ps_font_embed_to: unexpected error code");
		goto done;
	}
	i = sink.puts;
	/* text that shapes to no glyph at all (a hostile font can do that)
	 * draws nothing and embeds no font: then no /F1 (fontpdf.c note 5) */
	glyphs = 0;
	for (k = 0; k < nlines; k++)
		glyphs += lines[k].n;
	if (ps_font_embed_to(f, &s, d2) < 0 || sink.puts != i ||
	    d1->u.dict.len != (glyphs ? 1u : 0u) || d2->u.dict.len != d1->u.dict.len ||
	    (glyphs && (!ps_dict_get(d1, "F1") || !ps_dict_get(d2, "F1") ||
	                ps_dict_get(d1, "F1")->u.ref.num != ps_dict_get(d2, "F1")->u.ref.num)))
		fz_bug(ctx, "a second ps_font_embed_to wrote again or named other objects");
	for (i = 0; i < nlines; i++) {
		rc = ps_font_show(f, &lines[i], 22, 1, 2, &content);
		if (rc < 0) {
			fzf_check(ctx, rc, 8, "ps_font_show failed after embedding");
			goto done;
		}
	}
	/* the TrueType program loads back */
	for (i = 1; i < sink.next; i++) {
		ps_obj *o = sink.o[i];
		if (o && o->kind == PS_STREAM && ps_dict_get(o, "Length1")) {
			ps_buf b = PS_BUF_INIT;
			if (ps_inflate(ctx, o->u.stm.data, o->u.stm.len, 1 << 27, &b) == 0) {
				hb_blob_t *blob = hb_blob_create((const char *)b.data, (unsigned)b.len, HB_MEMORY_MODE_READONLY,
				                                 NULL, NULL);
				hb_face_t *face = hb_face_create(blob, 0);
				if (hb_face_get_glyph_count(face) == 0)
					fz_bug(ctx, "the subset HarfBuzz wrote has no glyphs");
				hb_face_destroy(face);
				hb_blob_destroy(blob);
			}
			ps_buf_free(&b);
		}
	}
done:
	ps_obj_free(d1);
	ps_obj_free(d2);
	for (i = 0; i < 8; i++)
		ps_obj_free(sink.o[i]);
	for (i = 0; i < 2; i++)
		ps_font_line_free(&lines[i]);
	ps_buf_free(&content);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
	return 0;
}
