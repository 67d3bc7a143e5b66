/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_font.c - unit tests for src/font.c and src/fontpdf.c: choosing,
 * shaping, subsetting and drawing the stamp's font.
 *
 * Expected values come from outside the code under test:
 *  - Helvetica-Bold metrics from Adobe's AFM (widths, glyph bounding boxes);
 *  - glyph ids from HarfBuzz and the fonts' own cmap (ps_font_nominal_glyph
 *    reads the cmap, not the shaper), so "joined" and "reordered" are
 *    checked against the isolated nominal glyphs;
 *  - the PDF objects are checked key by key against ISO 32000-2 9.7-9.10,
 *    the font program is inflated (zlib) and loaded by HarfBuzz (TrueType)
 *    or checked for a CFF header, and the ToUnicode CMap is parsed here
 *    and applied to the codes of the content stream, which must spell the
 *    text again.
 * The fonts are the Debian packages the build depends on (fonts-noto-core,
 * fonts-noto-cjk, fonts-dejavu-core), found through fontconfig.
 */
#include "config.h"

#include <check.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hb.h>

#include "ps.h"
#include "fontint.h"

#define DEJAVU_BOLD "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

static ps_ctx *new_ctx(void)
{
	ps_ctx *ctx = NULL;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	return ctx;
}

static ps_font *open_ok(ps_ctx *ctx, const char *spec, const char *text)
{
	ps_font *f = NULL;
	int rc = ps_font_open(ctx, spec, NULL, 0, text, &f);

	ck_assert_msg(rc == 0, "ps_font_open(%s, %s): %d %s", spec ? spec : "NULL", text, rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_ptr_nonnull(f);
	return f;
}

static void shape_ok(ps_font *f, const char *s, ps_line *l)
{
	int rc = ps_font_shape(f, s, strlen(s), l);

	ck_assert_int_eq(rc, 0);
}

/* ---- the standard-14 font --------------------------------------------------- */

START_TEST(test_std14_latin)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, NULL, "Grüße ÄÖÜ\n€ – approved");
	ps_line l, a, g;
	ps_buf c = PS_BUF_INIT;

	ck_assert(ps_font_is_std14(f));
	shape_ok(f, "\xc3\x84" "A", &l);         /* ÄA */
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.gid[0], 0xC4);
	ck_assert_uint_eq(l.gid[1], 'A');
	/* AFM: Adieresis WX 722 B 0 0 654 915, A WX 722 B 20 0 702 718 */
	ck_assert(l.x[1] == 722 && l.width == 1444);
	ck_assert(l.ascent == 915);
	ck_assert(l.descent == 0);
	ck_assert_ptr_null(l.run_rtl);
	shape_ok(f, "A", &a);
	ck_assert(a.ascent == 718);
	ck_assert(l.ascent > a.ascent);
	shape_ok(f, "gQ", &g);                 /* g: B 40 -217 553 546; Q: B 34 -52 745 737 */
	ck_assert(g.descent == -217 && g.ascent == 737);
	ck_assert(g.width == 611 + 778);
	/* the exact operators stamp.c always wrote */
	ck_assert_int_eq(ps_font_show(f, &l, 22, 10.25, 20, &c), 0);
	ck_assert_uint_eq(c.len, strlen("BT /F1 22 Tf 10.25 20 Td (\\304A) Tj ET\n"));
	ck_assert(memcmp(c.data, "BT /F1 22 Tf 10.25 20 Td (\\304A) Tj ET\n", c.len) == 0);
	ps_buf_reset(&c);
	ps_font_line_free(&a);
	shape_ok(f, "(a\\b)", &a);
	ck_assert_int_eq(ps_font_show(f, &a, 8, 1.0004, 2, &c), 0);
	ck_assert_str_eq((const char *)(ps_buf_putc(&c, 0), c.data), "BT /F1 8 Tf 1 2 Td (\\(a\\\\b\\)) Tj ET\n");
	ps_font_line_free(&a);
	/* a character WinAnsi lacks cannot be shaped with it */
	ck_assert_int_eq(ps_font_shape(f, "\xd0\x96", 2, &a), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_font_shape(f, "a\nb", 3, &a), PDFSTAMP_E_USAGE);
	ps_buf_free(&c);
	ps_font_line_free(&l);
	ps_font_line_free(&a);
	ps_font_line_free(&g);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

typedef struct coll {
	ps_obj *o[32];
	uint32_t next, puts;
} coll;

static uint32_t c_alloc(void *ud)
{
	coll *c = ud;

	return c->next < 32 ? c->next++ : 0;
}

static int c_put(void *ud, uint32_t n, ps_obj *o)
{
	coll *c = ud;

	ck_assert(n < 32 && !c->o[n]);
	c->o[n] = o;
	c->puts++;
	return 0;
}

static void coll_free(coll *c)
{
	size_t i;

	for (i = 0; i < 32; i++)
		ps_obj_free(c->o[i]);
}

/* ps_font_embed_to into a fresh /Font dictionary of an appearance: its
 * entries, and the object of /F<K> (K from 1). */
static ps_obj *embed_dict(ps_font *f, ps_font_sink *s)
{
	ps_obj *d = ps_new_dict();

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(ps_font_embed_to(f, s, d), 0);
	ck_assert_int_eq(d->kind, PS_DICT);
	return d;
}

static uint32_t font_ref(const ps_obj *d, unsigned k)
{
	char name[16];
	const ps_obj *r;

	snprintf(name, sizeof name, "F%u", k);
	r = ps_dict_get(d, name);
	ck_assert_msg(r && r->kind == PS_REF, "no /%s", name);
	return r->u.ref.num;
}

/* Embeds F once into C: /F1 (and checks a second call writes nothing
 * and names the same objects). */
static uint32_t embed_one(ps_font *f, coll *c)
{
	ps_font_sink s = {c, c_alloc, c_put};
	ps_obj *d1 = embed_dict(f, &s), *d2;
	uint32_t puts = c->puts, n;

	d2 = embed_dict(f, &s);
	ck_assert_uint_eq(c->puts, puts);
	ck_assert_uint_eq(d1->u.dict.len, 1);
	ck_assert_uint_eq(d2->u.dict.len, 1);
	n = font_ref(d1, 1);
	ck_assert_uint_eq(font_ref(d2, 1), n);
	ps_obj_free(d1);
	ps_obj_free(d2);
	return n;
}

START_TEST(test_std14_embed)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, NULL, "APPROVED");
	coll c = {{0}, 1, 0};
	ps_buf b = PS_BUF_INIT;
	uint32_t n1 = embed_one(f, &c);

	ck_assert_uint_eq(c.puts, 1);
	ps_serialize(&b, c.o[n1]);
	ps_buf_putc(&b, 0);
	ck_assert_str_eq((const char *)b.data,
	                 "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>");
	ps_buf_free(&b);
	coll_free(&c);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- choosing a font ------------------------------------------------------------ */

static const char *const scripts[] = {
	"Одобрено",                   /* Cyrillic */
	"Εγκρίθηκε",                  /* Greek */
	"承認",                        /* CJK */
	"موافق",                       /* Arabic */
	"स्वीकृत",                     /* Devanagari */
	"Approved: Одобрено / موافق 2024",  /* mixed scripts and directions */
};

START_TEST(test_fc_covers)
{
	const char *t = scripts[_i];
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, NULL, t);
	size_t i, k;
	uint32_t cp, gid;

	ck_assert(!ps_font_is_std14(f));
	for (i = 0; t[i]; i += k) {
		k = ps_text_utf8_decode((const uint8_t *)t + i, strlen(t + i), &cp);
		ck_assert_uint_gt(k, 0);
		ck_assert_msg(ps_font_nominal_glyph(f, cp, &gid) && gid != 0, "U+%04X not covered", (unsigned)cp);
	}
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_fc_errors)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = (ps_font *)1;

	ck_assert_int_eq(ps_font_open(ctx, NULL, NULL, 0, "ok \xf4\x8f\xbf\xbd", &f), PDFSTAMP_E_USAGE); /* U+10FFFD */
	ck_assert_ptr_null(f);
	/* the problem in the message, no command's option: the hint says a
	 * font given in the options would do (the CLI names --font) */
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "no installed font covers U+10FFFD '\xf4\x8f\xbf\xbd'");
	ck_assert_int_eq(pdfstamp_ctx_errhint(ctx), PDFSTAMP_HINT_FONT);
	ck_assert_int_eq(ps_font_open(ctx, "No Such Family Anywhere", NULL, 0, "x", &f), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(pdfstamp_ctx_errhint(ctx), PDFSTAMP_HINT_NONE); /* a new error, a new hint */
	/* a font given that lacks characters: the installed fonts fill in,
	 * until a character no font has (note 1) */
	ck_assert_int_eq(ps_font_open(ctx, "DejaVu Sans", NULL, 0, "承認 \xee\x80\x80", &f), PDFSTAMP_E_USAGE);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx),
	                 "no font covers U+E000 '\xee\x80\x80' (tried 'DejaVu Sans', then every installed font)");
	ck_assert_int_eq(pdfstamp_ctx_errhint(ctx), PDFSTAMP_HINT_FONT);
	ck_assert_int_eq(ps_font_open(ctx, DEJAVU_BOLD, NULL, 0, "\xee\x80\x80", &f), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_font_open(ctx, "/nonexistent/font.ttf", NULL, 0, "x", &f), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_font_open(ctx, NULL, NULL, 0, "bad \xc0\x80 UTF-8", &f), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_font_open(ctx, "", NULL, 0, "x", &f), PDFSTAMP_E_USAGE);
	/* control characters other than LF (and the CR of CR LF) are refused by name */
	ck_assert_int_eq(ps_font_open(ctx, NULL, NULL, 0, "A\tB", &f), PDFSTAMP_E_USAGE);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "control character U+0009") != NULL, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(ps_font_open(ctx, NULL, NULL, 0, "A\xc2\x85", &f), PDFSTAMP_E_USAGE);   /* U+0085 */
	/* CR LF: still the standard-14 font for Latin text, and an embedded
	 * one covers it too */
	f = open_ok(ctx, NULL, "A\r\nB");
	ck_assert(ps_font_is_std14(f));
	ps_font_free(f);
	f = open_ok(ctx, NULL, "Одобрено\r\nOK");
	ck_assert(!ps_font_is_std14(f));
	ps_font_free(f);
	/* a family name and a file both work for a covered text */
	f = open_ok(ctx, "DejaVu Sans", "Approved");
	ck_assert(!ps_font_is_std14(f));
	ps_font_free(f);
	f = open_ok(ctx, DEJAVU_BOLD, "Approved");
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* A file of N bytes: the first N of FROM, or TEXT. */
static const char *write_tmp(const char *name, const uint8_t *p, size_t n)
{
	static char path[256];
	FILE *fp;

	snprintf(path, sizeof path, "/tmp/check_font_%ld_%s", (long)getpid(), name);
	fp = fopen(path, "wb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(p, 1, n, fp), n);
	fclose(fp);
	return path;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *d;
	long len;

	ck_assert_ptr_nonnull(fp);
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	d = malloc((size_t)len);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(fread(d, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	*n = (size_t)len;
	return d;
}

START_TEST(test_bad_fonts)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = NULL;
	const char *txt = "this is not a font, only a few words of text\n";
	size_t n, cut;
	uint8_t *d = slurp(DEJAVU_BOLD, &n);
	const char *p;

	p = write_tmp("text.ttf", (const uint8_t *)txt, strlen(txt));
	ck_assert_int_eq(ps_font_open(ctx, p, NULL, 0, "x", &f), PDFSTAMP_E_FORMAT);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "not a font") != NULL, "%s", pdfstamp_ctx_errmsg(ctx));
	unlink(p);
	for (cut = 0; cut < n; cut += cut < 4096 ? 97 : 40009) {
		int rc;
		p = write_tmp("trunc.ttf", d, cut);
		rc = ps_font_open(ctx, p, NULL, 0, "x", &f);
		ck_assert_msg(rc == PDFSTAMP_E_FORMAT, "cut at %zu: %d %s", cut, rc, pdfstamp_ctx_errmsg(ctx));
		ck_assert_ptr_null(f);
		unlink(p);
		ck_assert_int_eq(ps_font_open_mem(ctx, d, cut, "x", &f), PDFSTAMP_E_FORMAT);
	}
	/* a directory, and a table offset pointing past the end */
	ck_assert_int_eq(ps_font_open(ctx, "/usr/share/fonts/", NULL, 0, "x", &f), PDFSTAMP_E_USAGE);
	d[12 + 8] = 0x7F;   /* first table record's offset */
	ck_assert_int_eq(ps_font_open_mem(ctx, d, n, "x", &f), PDFSTAMP_E_FORMAT);
	free(d);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- shaping -------------------------------------------------------------------- */

START_TEST(test_arabic_joined_rtl)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, NULL, "موافق مو");
	ps_line l, two;
	uint32_t meem, qaf;
	size_t i;

	shape_ok(f, "موافق", &l);
	shape_ok(f, "مو", &two);
	ck_assert_uint_eq(l.n, 5);
	ck_assert(l.rtl);
	for (i = 0; i < l.n; i++)
		ck_assert(l.run_rtl[i] == 1);
	for (i = 1; i < l.n; i++)
		ck_assert(l.x[i] > l.x[i - 1]);      /* visual order, left to right */
	ck_assert(ps_font_nominal_glyph(f, 0x0645, &meem));
	ck_assert(ps_font_nominal_glyph(f, 0x0642, &qaf));
	/* meem starts the word: rightmost, in its initial (joined) form */
	ck_assert_uint_ne(l.gid[4], meem);
	ck_assert_uint_eq(l.gid[4], two.gid[1]);
	/* qaf ends it: leftmost, final form */
	ck_assert_uint_ne(l.gid[0], qaf);
	ck_assert(l.width > 0 && l.ascent > 0 && l.descent < 0);
	ps_font_line_free(&l);
	ps_font_line_free(&two);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_devanagari_reordered)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, NULL, "कि स्वीकृत");
	ps_line l;
	uint32_t ka, i_sign;

	shape_ok(f, "कि", &l);
	ck_assert(ps_font_nominal_glyph(f, 0x0915, &ka));
	ck_assert(ps_font_nominal_glyph(f, 0x093F, &i_sign));
	ck_assert_uint_eq(l.n, 2);
	ck_assert(!l.rtl);
	/* the vowel sign I is drawn before (left of) its consonant */
	ck_assert_uint_ne(l.gid[0], ka);
	ck_assert_uint_eq(l.gid[1], ka);
	ck_assert(l.x[0] < l.x[1]);
	ps_font_line_free(&l);
	/* a conjunct: fewer glyphs than characters */
	shape_ok(f, "स्व", &l);
	ck_assert_uint_lt(l.n, 3);
	ps_font_line_free(&l);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_marks_extents)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, DEJAVU_BOLD, "a a\xcc\x81\xcc\x81 g");
	ps_line a, acc, g;

	shape_ok(f, "a", &a);
	shape_ok(f, "a\xcc\x81\xcc\x81", &acc);   /* a + two combining acutes: stacked */
	shape_ok(f, "g", &g);
	ck_assert(acc.ascent > a.ascent + 100);
	ck_assert(g.descent < -100);
	ck_assert(a.descent > -50);
	ps_font_line_free(&a);
	ps_font_line_free(&acc);
	ps_font_line_free(&g);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- embedding ---------------------------------------------------------------- */

static ps_obj *deref(coll *c, const ps_obj *ref)
{
	ck_assert_ptr_nonnull(ref);
	ck_assert_int_eq(ref->kind, PS_REF);
	ck_assert(ref->u.ref.num < 32 && c->o[ref->u.ref.num]);
	return c->o[ref->u.ref.num];
}

static void inflate_stream(ps_ctx *ctx, const ps_obj *s, ps_buf *out)
{
	ck_assert_int_eq(s->kind, PS_STREAM);
	ck_assert(ps_obj_is_name(ps_dict_get(s, "Filter"), "FlateDecode"));
	ck_assert_int_eq(ps_inflate(ctx, s->u.stm.data, s->u.stm.len, 1 << 26, out), 0);
}

static void put_utf8(ps_buf *b, uint32_t c)
{
	if (c < 0x80) {
		ps_buf_putc(b, (int)c);
	} else if (c < 0x800) {
		ps_buf_putc(b, 0xC0 | (int)(c >> 6));
		ps_buf_putc(b, 0x80 | (int)(c & 0x3F));
	} else if (c < 0x10000) {
		ps_buf_putc(b, 0xE0 | (int)(c >> 12));
		ps_buf_putc(b, 0x80 | (int)((c >> 6) & 0x3F));
		ps_buf_putc(b, 0x80 | (int)(c & 0x3F));
	} else {
		ps_buf_putc(b, 0xF0 | (int)(c >> 18));
		ps_buf_putc(b, 0x80 | (int)((c >> 12) & 0x3F));
		ps_buf_putc(b, 0x80 | (int)((c >> 6) & 0x3F));
		ps_buf_putc(b, 0x80 | (int)(c & 0x3F));
	}
}

/* UTF-16BE hex digits H[0..N) as UTF-8 appended to OUT. */
static void utf16hex_to_utf8(const char *h, size_t n, ps_buf *out)
{
	size_t i;
	unsigned hi = 0;

	ck_assert_uint_eq(n % 4, 0);
	for (i = 0; i < n; i += 4) {
		unsigned u;
		ck_assert_int_eq(sscanf(h + i, "%4x", &u), 1);
		if (u >= 0xD800 && u < 0xDC00) {
			hi = u;
			continue;
		}
		if (u >= 0xDC00 && u < 0xE000) {
			ck_assert_uint_ne(hi, 0);
			put_utf8(out, 0x10000 + ((hi - 0xD800) << 10) + (u - 0xDC00));
			hi = 0;
			continue;
		}
		put_utf8(out, u);
	}
}

/* The CMap's bfchar entries: CID -> UTF-8 (NULL if unmapped). */
typedef struct cmap {
	char *to[65536];
} cmap;

static void parse_cmap(const ps_buf *b, cmap *m)
{
	char *s = malloc(b->len + 1), *p, *e;
	int in = 0;

	memcpy(s, b->data, b->len);
	s[b->len] = 0;
	ck_assert_ptr_nonnull(strstr(s, "begincodespacerange\n<0000> <FFFF>\nendcodespacerange"));
	ck_assert_ptr_nonnull(strstr(s, "/CMapName"));
	for (p = s; (e = strchr(p, '\n')) != NULL; p = e + 1) {
		unsigned cid;
		char *lt;
		*e = 0;
		if (strstr(p, "beginbfchar")) {
			ck_assert(!in);
			in = 1;
		} else if (strstr(p, "endbfchar")) {
			in = 0;
		} else if (in) {
			ps_buf u = PS_BUF_INIT;
			ck_assert_int_eq(sscanf(p, "<%4x>", &cid), 1);
			lt = strchr(p + 6, '<');
			ck_assert_ptr_nonnull(lt);
			ck_assert_ptr_null(m->to[cid]);
			utf16hex_to_utf8(lt + 1, strcspn(lt + 1, ">"), &u);
			ps_buf_putc(&u, 0);
			m->to[cid] = (char *)u.data;
		}
	}
	free(s);
}

static void check_embedded(const char *text, const char *spec, int want_cff)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, spec, text);
	coll c = {{0}, 1, 0};
	ps_obj *t0, *cid, *desc, *prog, *tu, *csi, *w;
	ps_buf b = PS_BUF_INIT, content = PS_BUF_INIT, got = PS_BUF_INIT;
	cmap *m = calloc(1, sizeof *m);
	uint32_t num = 0, num2 = 0;
	ps_line l;
	regex_t re;
	const char *bf, *p;
	size_t i, total = 0;

	shape_ok(f, text, &l);
	ck_assert_int_eq(ps_font_show(f, &l, 10, 0, 0, &content), PDFSTAMP_E_INTERNAL); /* before embed */
	ck_assert_uint_eq(ps_font_nfaces(f), 1);
	num = embed_one(f, &c);
	ck_assert_uint_eq(c.puts, 5);
	/* Type 0 font (9.7.6) */
	t0 = c.o[num];
	ck_assert(ps_obj_is_name(ps_dict_get(t0, "Type"), "Font"));
	ck_assert(ps_obj_is_name(ps_dict_get(t0, "Subtype"), "Type0"));
	ck_assert(ps_obj_is_name(ps_dict_get(t0, "Encoding"), "Identity-H"));
	ck_assert_int_eq(ps_dict_get(t0, "BaseFont")->kind, PS_NAME);
	bf = ps_dict_get(t0, "BaseFont")->u.name.p;
	ck_assert_int_eq(regcomp(&re, "^[A-Z]{6}\\+[!-~]+$", REG_EXTENDED | REG_NOSUB), 0);
	ck_assert_msg(regexec(&re, bf, 0, NULL, 0) == 0, "BaseFont %s", bf);
	regfree(&re);
	ck_assert_uint_eq(ps_array_len(ps_dict_get(t0, "DescendantFonts")), 1);
	/* CIDFont (9.7.4) */
	cid = deref(&c, ps_array_get(ps_dict_get(t0, "DescendantFonts"), 0));
	if (want_cff < 0)   /* either: the installed font decides */
		want_cff = ps_obj_is_name(ps_dict_get(cid, "Subtype"), "CIDFontType0");
	ck_assert(ps_obj_is_name(ps_dict_get(cid, "Subtype"), want_cff ? "CIDFontType0" : "CIDFontType2"));
	ck_assert(ps_obj_is_name(ps_dict_get(cid, "BaseFont"), bf));
	csi = ps_dict_get(cid, "CIDSystemInfo");
	ck_assert(ps_dict_get(csi, "Registry")->u.str.len == 5 && !memcmp(ps_dict_get(csi, "Registry")->u.str.p, "Adobe", 5));
	ck_assert(ps_dict_get(csi, "Ordering")->u.str.len == 8 &&
	          !memcmp(ps_dict_get(csi, "Ordering")->u.str.p, "Identity", 8));
	ck_assert(ps_dict_get(csi, "Supplement")->u.i == 0);
	if (want_cff)
		ck_assert_ptr_null(ps_dict_get(cid, "CIDToGIDMap"));
	else
		ck_assert(ps_obj_is_name(ps_dict_get(cid, "CIDToGIDMap"), "Identity"));
	w = ps_dict_get(cid, "W");
	ck_assert(w && w->kind == PS_ARRAY && ps_array_len(w) >= 2);
	/* descriptor (9.8) */
	desc = deref(&c, ps_dict_get(cid, "FontDescriptor"));
	ck_assert(ps_obj_is_name(ps_dict_get(desc, "Type"), "FontDescriptor"));
	ck_assert(ps_obj_is_name(ps_dict_get(desc, "FontName"), bf));
	{
		static const char *const keys[] = {"Flags", "FontBBox", "ItalicAngle", "Ascent", "Descent", "CapHeight", "StemV"};
		for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
			ck_assert_msg(ps_dict_get(desc, keys[i]) != NULL, "no /%s", keys[i]);
	}
	ck_assert_uint_eq(ps_array_len(ps_dict_get(desc, "FontBBox")), 4);
	/* the font program (9.9) */
	prog = deref(&c, ps_dict_get(desc, want_cff ? "FontFile3" : "FontFile2"));
	inflate_stream(ctx, prog, &b);
	total += prog->u.stm.len;
	if (want_cff) {
		ck_assert(ps_obj_is_name(ps_dict_get(prog, "Subtype"), "CIDFontType0C"));
		ck_assert(b.len > 4 && b.data[0] == 1 && b.data[2] >= 4);   /* CFF header, major version 1 */
	} else {
		hb_blob_t *blob = hb_blob_create((const char *)b.data, (unsigned)b.len, HB_MEMORY_MODE_READONLY, NULL, NULL);
		hb_face_t *face = hb_face_create(blob, 0);
		unsigned ng = hb_face_get_glyph_count(face), distinct = 0;
		int64_t len1 = -1;
		ck_assert_int_eq(ps_obj_int(ps_dict_get(prog, "Length1"), &len1), 0);
		ck_assert_int_eq(len1, (int64_t)b.len);
		for (i = 0; i < l.n; i++) {
			size_t j;
			for (j = 0; j < i && l.gid[j] != l.gid[i]; j++)
				;
			distinct += j == i;
		}
		/* glyph 0 plus the glyphs used (and any composite components) */
		ck_assert_msg(ng >= distinct + 1 && ng <= distinct + 1 + 2 * distinct, "%u glyphs for %u", ng, distinct);
		ck_assert(hb_face_get_upem(face) >= 16);
		hb_face_destroy(face);
		hb_blob_destroy(blob);
	}
	/* ToUnicode (9.10.3): the codes drawn spell the text again */
	tu = deref(&c, ps_dict_get(t0, "ToUnicode"));
	ps_buf_reset(&b);
	inflate_stream(ctx, tu, &b);
	total += tu->u.stm.len;
	parse_cmap(&b, m);
	ck_assert_int_eq(ps_font_show(f, &l, 10, 0, 0, &content), 0);
	ps_buf_putc(&content, 0);
	if (!l.rtl) {
		/* ActualText (14.9.4) with the UTF-16BE of the text */
		ps_buf at = PS_BUF_INIT;
		p = strstr((const char *)content.data, "/ActualText <FEFF");
		ck_assert_ptr_nonnull(p);
		utf16hex_to_utf8(p + 17, strcspn(p + 17, ">"), &at);
		ps_buf_putc(&at, 0);
		ck_assert_str_eq((const char *)at.data, text);
		ps_buf_free(&at);
	}
	for (p = strstr((const char *)content.data, "BT"); (p = strchr(p, '<')) != NULL; p += 6) {
		unsigned code;
		ck_assert_int_eq(sscanf(p, "<%4x>", &code), 1);
		ck_assert_int_eq(p[5], '>');
		if (m->to[code])
			ps_buf_puts(&got, m->to[code]);
	}
	ps_buf_putc(&got, 0);
	ck_assert_msg(strcmp((const char *)got.data, text) == 0, "ToUnicode gives '%s' for '%s' (%s)", got.data, text,
	              content.data);
	/* the same glyphs of the same font get the same tag */
	{
		ps_font *f2 = open_ok(ctx, spec, text);
		coll c2 = {{0}, 1, 0};
		ps_line l2;
		shape_ok(f2, text, &l2);
		num2 = embed_one(f2, &c2);
		ck_assert(ps_obj_is_name(ps_dict_get(c2.o[num2], "BaseFont"), bf));
		ps_font_line_free(&l2);
		coll_free(&c2);
		ps_font_free(f2);
	}
	/* a short stamp stays far below the 64 KB budget */
	ck_assert_msg(total < 16384, "%zu bytes", total);
	for (i = 0; i < 65536; i++)
		free(m->to[i]);
	free(m);
	ps_buf_free(&b);
	ps_buf_free(&content);
	ps_buf_free(&got);
	ps_font_line_free(&l);
	coll_free(&c);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}

START_TEST(test_embed_cjk_cff)
{
	check_embedded("承認", NULL, 1);
}
END_TEST

START_TEST(test_embed_arabic)
{
	check_embedded("موافق", NULL, 0);
	/* right-to-left lines with numbers and Latin (runs moved by rule L2):
	 * drawn in logical order, so text in drawing order is the text */
	check_embedded("موافق 2026", NULL, -1);
	check_embedded("موافق ABC عليه", NULL, -1);
	check_embedded("Approved موافق 12 done", NULL, -1);
}
END_TEST

START_TEST(test_embed_devanagari)
{
	check_embedded("स्वीकृत", NULL, 0);
}
END_TEST

START_TEST(test_embed_cyrillic_greek)
{
	check_embedded("Одобрено Εγκρίθηκε", NULL, 0);
	check_embedded("Approved", DEJAVU_BOLD, 0);
	/* above U+FFFF: surrogate pairs in /ActualText and the CMap */
	check_embedded("\xf0\x9d\x90\x80\xf0\x9d\x90\x81 ok", NULL, -1);
}
END_TEST

START_TEST(test_shape_after_embed)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, DEJAVU_BOLD, "ab");
	coll c = {{0}, 1, 0};
	ps_line l;

	shape_ok(f, "a", &l);
	ps_font_line_free(&l);
	embed_one(f, &c);
	shape_ok(f, "a", &l);                       /* a glyph already in the subset */
	ps_font_line_free(&l);
	ck_assert_int_eq(ps_font_shape(f, "b", 1, &l), PDFSTAMP_E_INTERNAL);
	coll_free(&c);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- font sets: the fonts given, then fontconfig's fallback ------------------ */

#define FOUR "承認 / موافق / स्वीकृत / Approved"

/* 1 if font K of the set has a glyph for C in its cmap (HarfBuzz, not
 * the code under test's choice). */
static int face_has_c(ps_font *f, size_t k, uint32_t c)
{
	hb_codepoint_t g;

	ck_assert_uint_lt(k, ps_font_nfaces(f));
	return hb_font_get_nominal_glyph(f->faces[k]->font, c, &g) && g != 0;
}

static size_t utf32(const char *s, uint32_t *out, size_t max)
{
	size_t i, k, n = 0;

	for (i = 0; s[i]; i += k) {
		k = ps_text_utf8_decode((const uint8_t *)s + i, strlen(s + i), &out[n]);
		ck_assert_uint_gt(k, 0);
		ck_assert_uint_lt(++n, max);
	}
	return n;
}

/* The font drawing the glyphs of the cluster that starts at character CI
 * of line L (all in one font), or SIZE_MAX if no cluster starts there. */
static size_t face_of_char(const ps_line *l, uint32_t ci)
{
	size_t i, k = SIZE_MAX;

	for (i = 0; i < l->n; i++)
		if (l->lkey[i] / 64 == ci) {
			ck_assert(k == SIZE_MAX || k == l->face[i]);
			k = l->face[i];
		}
	return k;
}

/* Draws L of F (embedded into C, /Font dictionary D) and reads it back:
 * the codes of the content through the ToUnicode CMap of the font each
 * Tf selected, in drawing order; *NTF is the number of Tf. */
static void read_back(ps_ctx *ctx, ps_font *f, coll *c, const ps_obj *d, const ps_line *l,
                      ps_buf *got, size_t *ntf)
{
	ps_buf content = PS_BUF_INIT;
	cmap *m[PS_FONT_MAX_FACES + 1] = {NULL};
	const char *p;
	unsigned cur = 0, k;
	size_t i;

	ck_assert_int_eq(ps_font_show(f, l, 10, 0, 0, &content), 0);
	ps_buf_putc(&content, 0);
	*ntf = 0;
	for (p = (const char *)content.data; *p; p++) {
		if (*p == '/' && p[1] == 'F' && sscanf(p, "/F%u", &k) == 1) {
			ck_assert(k >= 1 && k <= PS_FONT_MAX_FACES);
			ck_assert_msg(strncmp(p + strcspn(p, " ") + strspn(p + strcspn(p, " "), " 0123456789."),
			                      "Tf ", 3) == 0, "/F%u not followed by SIZE Tf: %.40s", k, p);
			if (!m[k]) {
				ps_obj *t0 = c->o[font_ref(d, k)];
				ps_buf b = PS_BUF_INIT;
				m[k] = calloc(1, sizeof *m[k]);
				inflate_stream(ctx, deref(c, ps_dict_get(t0, "ToUnicode")), &b);
				parse_cmap(&b, m[k]);
				ps_buf_free(&b);
			}
			cur = k;
			(*ntf)++;
		} else if (*p == '<' && p[1] != '<' && p[1] != 'F' && cur) {
			unsigned code;
			ck_assert_int_eq(sscanf(p, "<%4x>", &code), 1);
			ck_assert_msg(m[cur]->to[code] != NULL, "code %04X of /F%u has no text", code, cur);
			ps_buf_puts(got, m[cur]->to[code]);
			p += 5;
		}
	}
	ps_buf_putc(got, 0);
	for (k = 0; k <= PS_FONT_MAX_FACES; k++) {
		if (!m[k])
			continue;
		for (i = 0; i < 65536; i++)
			free(m[k]->to[i]);
		free(m[k]);
	}
	ps_buf_free(&content);
}

START_TEST(test_set_four_scripts)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, NULL, FOUR "\n2026-12-01 10:00");
	coll c = {{0}, 1, 0};
	ps_font_sink s = {&c, c_alloc, c_put};
	ps_buf got = PS_BUF_INIT;
	uint32_t cp[64];
	size_t n = utf32(FOUR, cp, 64), i, k, used = 0, changes = 0, ntf;
	size_t han, ara, deva, lat;
	ps_line l;
	ps_obj *d;

	ck_assert(!ps_font_is_std14(f));
	/* no installed font has all four scripts: a CJK, an Arabic and a
	 * Devanagari font at least */
	ck_assert_uint_ge(ps_font_nfaces(f), 3);
	ck_assert_uint_le(ps_font_nfaces(f), 4);
	shape_ok(f, FOUR, &l);
	ck_assert(l.rtl);
	ck_assert_ptr_nonnull(l.face);
	/* each glyph's font has the character its cluster starts with */
	for (i = 0; i < l.n; i++) {
		uint32_t ch = cp[l.lkey[i] / 64];
		ck_assert_msg(face_has_c(f, l.face[i], ch), "glyph %zu: font %u lacks U+%04X", i, l.face[i],
		              (unsigned)ch);
		changes += i > 0 && l.face[i] != l.face[i - 1];
	}
	/* runs of one font: the scripts in their fonts, spaces and slashes
	 * with a neighbour, "Approved" in one font */
	han = face_of_char(&l, 0);
	ara = face_of_char(&l, 5);
	deva = face_of_char(&l, 13);
	lat = face_of_char(&l, (uint32_t)(n - 8));
	ck_assert(han != ara && ara != deva && han != deva);
	ck_assert_ptr_nonnull(strstr(ps_font_face_name(f, han), "CJK"));
	ck_assert_ptr_nonnull(strstr(ps_font_face_name(f, deva), "Devanagari"));
	ck_assert(han != SIZE_MAX && ara != SIZE_MAX && deva != SIZE_MAX && lat != SIZE_MAX);
	for (i = 0; i < n; i++) {
		size_t fi = face_of_char(&l, (uint32_t)i);
		if (fi == SIZE_MAX)
			continue;   /* inside a cluster */
		if (cp[i] == 0x627F || cp[i] == 0x8A8D)
			ck_assert_uint_eq(fi, han);
		else if (cp[i] >= 0x0600 && cp[i] < 0x0700)
			ck_assert_uint_eq(fi, ara);
		else if (cp[i] >= 0x0900 && cp[i] < 0x0980)
			ck_assert_uint_eq(fi, deva);
		else if (i >= n - 8)
			ck_assert_uint_eq(fi, lat);
	}
	ck_assert_uint_ge(changes, 3);
	ck_assert_uint_le(changes, 6);
	/* one Type 0 font per font that draws something, /F1 ... /Fn */
	d = embed_dict(f, &s);
	for (k = 0; k < ps_font_nfaces(f); k++)
		if (ps_font_face_res(f, k))
			used++;
	ck_assert_uint_ge(used, 3);
	ck_assert_uint_eq(d->u.dict.len, used);
	ck_assert_uint_eq(c.puts, 5 * used);
	for (k = 1; k <= used; k++) {
		ps_obj *t0 = c.o[font_ref(d, (unsigned)k)];
		ck_assert(ps_obj_is_name(ps_dict_get(t0, "Subtype"), "Type0"));
	}
	/* drawn in logical order (a right-to-left run), every font switched
	 * to by Tf: the codes spell the text again */
	read_back(ctx, f, &c, d, &l, &got, &ntf);
	ck_assert_str_eq((const char *)got.data, FOUR);
	ck_assert_uint_ge(ntf, used);
	ps_obj_free(d);
	ps_buf_free(&got);
	ps_font_line_free(&l);
	coll_free(&c);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_set_given_first)
{
	ps_ctx *ctx = new_ctx();
	const char *more[] = {"Noto Sans Devanagari"};
	ps_font *f = NULL;
	coll c = {{0}, 1, 0};
	ps_font_sink s = {&c, c_alloc, c_put};
	ps_buf got = PS_BUF_INIT;
	const char *t = "Approved स्वीकृत 承認";
	size_t ntf, i;
	ps_line l;
	ps_obj *d;

	/* the fonts given, in order, then one installed font for the rest */
	ck_assert_int_eq(ps_font_open(ctx, "DejaVu Sans", more, 1, t, &f), 0);
	ck_assert_uint_eq(ps_font_nfaces(f), 3);
	ck_assert_ptr_nonnull(strstr(ps_font_face_name(f, 0), "DejaVuSans"));
	ck_assert_ptr_nonnull(strstr(ps_font_face_name(f, 1), "Devanagari"));
	ck_assert_ptr_nonnull(strstr(ps_font_face_name(f, 2), "CJK"));
	shape_ok(f, t, &l);
	ck_assert(!l.rtl);
	/* Latin and its space in DejaVu (first), Devanagari in the second, Han
	 * in the fallback; the glyphs in visual order = logical here */
	for (i = 0; i < l.n; i++) {
		uint32_t k = l.lkey[i] / 64;
		ck_assert_uint_eq(l.face[i], k < 9 ? 0 : k < 17 ? 1 : 2);
	}
	d = embed_dict(f, &s);
	ck_assert_uint_eq(d->u.dict.len, 3);
	ck_assert_uint_eq(ps_font_face_res(f, 0), 1);
	ck_assert_uint_eq(ps_font_face_res(f, 2), 3);
	read_back(ctx, f, &c, d, &l, &got, &ntf);
	ck_assert_str_eq((const char *)got.data, t);
	ck_assert_uint_eq(ntf, 3);     /* BT /F1 .. Tf, then two switches */
	ps_obj_free(d);
	ps_buf_free(&got);
	ps_font_line_free(&l);
	coll_free(&c);
	ps_font_free(f);
	/* a font given twice is in the set once; a NULL in the list is refused */
	more[0] = DEJAVU_BOLD;
	ck_assert_int_eq(ps_font_open(ctx, DEJAVU_BOLD, more, 1, "abc", &f), 0);
	ck_assert_uint_eq(ps_font_nfaces(f), 1);
	ps_font_free(f);
	more[0] = NULL;
	ck_assert_int_eq(ps_font_open(ctx, DEJAVU_BOLD, more, 1, "abc", &f), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(f);
	ck_assert_int_eq(ps_font_open(ctx, DEJAVU_BOLD, NULL, 1, "abc", &f), PDFSTAMP_E_USAGE);
	{
		const char *many[24];
		for (i = 0; i < 24; i++)
			many[i] = DEJAVU_BOLD;
		ck_assert_int_eq(ps_font_open(ctx, DEJAVU_BOLD, many, 23, "abc", &f), 0);
		ck_assert_uint_eq(ps_font_nfaces(f), 1);
		ps_font_free(f);
		ck_assert_int_eq(ps_font_open(ctx, DEJAVU_BOLD, many, 24, "abc", &f), PDFSTAMP_E_USAGE);
		ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "at most 24 fonts can be given");
	}
	/* fonts[] without font */
	more[0] = DEJAVU_BOLD;
	ck_assert_int_eq(ps_font_open(ctx, NULL, more, 1, "abc", &f), 0);
	ck_assert(!ps_font_is_std14(f));
	ck_assert_uint_eq(ps_font_nfaces(f), 1);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_set_unused_not_embedded)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = open_ok(ctx, DEJAVU_BOLD, "承認");
	coll c = {{0}, 1, 0};
	ps_font_sink s = {&c, c_alloc, c_put};
	ps_line l;
	ps_obj *d;
	size_t fi;
	uint32_t g;

	/* DejaVu has no Han: the installed CJK font draws all of it */
	ck_assert_uint_eq(ps_font_nfaces(f), 2);
	ck_assert(ps_font_char_face(f, 0x627F, &fi, &g) && fi == 1 && g != 0);
	shape_ok(f, "承認", &l);
	ck_assert(l.face[0] == 1 && l.face[1] == 1);
	d = embed_dict(f, &s);
	ck_assert_uint_eq(d->u.dict.len, 1);
	ck_assert_uint_eq(c.puts, 5);
	ck_assert_uint_eq(ps_font_face_res(f, 0), 0);
	ck_assert_uint_eq(ps_font_face_res(f, 1), 1);
	ck_assert_ptr_nonnull(strstr(ps_dict_get(c.o[font_ref(d, 1)], "BaseFont")->u.name.p, "CJK"));
	ps_obj_free(d);
	ps_font_line_free(&l);
	coll_free(&c);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_set_hieroglyphs)
{
	ps_ctx *ctx = new_ctx();
	ps_font *f = NULL;
	size_t fi;
	uint32_t g;
	int rc;

	/* issue 32: a font without digits; the date line's come from another */
	rc = ps_font_open(ctx, "Noto Sans Egyptian Hieroglyphs", NULL, 0, "\xf0\x93\x80\x80\n2026-12-01 10:00",
	                  &f);
	if (rc == PDFSTAMP_E_USAGE && strstr(pdfstamp_ctx_errmsg(ctx), "no installed font has the family")) {
		fprintf(stderr, "check_font: Noto Sans Egyptian Hieroglyphs is not installed, skipped\n");
		pdfstamp_ctx_free(ctx);
		return;
	}
	ck_assert_msg(rc == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_uint_eq(ps_font_nfaces(f), 2);
	ck_assert_ptr_nonnull(strstr(ps_font_face_name(f, 0), "EgyptianHieroglyphs"));
	ck_assert(ps_font_char_face(f, 0x13000, &fi, &g) && fi == 0);
	ck_assert(ps_font_char_face(f, '2', &fi, &g) && fi == 1);
	ck_assert(!face_has_c(f, 0, '2'));
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_set_missing)
{
	ps_ctx *ctx = new_ctx();
	const char *more[] = {DEJAVU_BOLD};
	ps_font *f = (ps_font *)1;

	/* the first character no font has, in the order of the text, as
	 * U+XXXX and itself, and the fonts tried */
	ck_assert_int_eq(ps_font_open(ctx, "DejaVu Sans", more, 1, "a 承\xee\x80\x81 b\xee\x80\x80", &f),
	                 PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(f);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx),
	                 "no font covers U+E001 '\xee\x80\x81' (tried 'DejaVu Sans', '" DEJAVU_BOLD
	                 "', then every installed font)");
	ck_assert_int_eq(pdfstamp_ctx_errhint(ctx), PDFSTAMP_HINT_FONT);
	ck_assert_int_eq(ps_font_open(ctx, NULL, NULL, 0, FOUR "\n\xee\x80\x80", &f), PDFSTAMP_E_USAGE);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "no installed font covers U+E000 '\xee\x80\x80'");
	/* format characters need no glyph */
	f = open_ok(ctx, DEJAVU_BOLD, "a\xe2\x80\x8d\xe2\x80\x8f" "b");
	ck_assert_uint_eq(ps_font_nfaces(f), 1);
	ps_font_free(f);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- the font corpus (tests/malformed/fonts/INDEX) ------------------------------ */

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif

static int code_of(const char *name)
{
	if (strcmp(name, "FORMAT") == 0)
		return PDFSTAMP_E_FORMAT;
	if (strcmp(name, "USAGE") == 0)
		return PDFSTAMP_E_USAGE;
	if (strcmp(name, "UNSUPPORTED") == 0)
		return PDFSTAMP_E_UNSUPPORTED;
	ck_abort_msg("unknown code %s in INDEX", name);
	return 0;
}

START_TEST(test_corpus)
{
	char line[1024], path[1200];
	FILE *fp = fopen(TEST_SRCDIR "/malformed/fonts/INDEX", "r");
	ps_ctx *ctx = new_ctx();
	int count = 0;

	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof line, fp)) {
		char *name = strtok(line, "\t\n"), *text = strtok(NULL, "\t\n"), *outcome = strtok(NULL, "\t\n");
		ps_font *f = NULL;
		coll c = {{0}, 1, 0};
		ps_font_sink s = {&c, c_alloc, c_put};
		ps_line l;
		ps_obj *d;
		int rc;

		if (!name || name[0] == '#')
			continue;
		ck_assert(text && outcome);
		count++;
		snprintf(path, sizeof path, "%s/malformed/fonts/%s", TEST_SRCDIR, name);
		rc = ps_font_open(ctx, path, NULL, 0, text, &f);
		if (strncmp(outcome, "open:", 5) == 0) {
			ck_assert_msg(rc == code_of(outcome + 5), "%s: open gave %d (%s)", name, rc, pdfstamp_ctx_errmsg(ctx));
			ck_assert(pdfstamp_ctx_errmsg(ctx)[0] != 0);
			ck_assert_ptr_null(f);
			continue;
		}
		ck_assert_msg(rc == 0, "%s: %s", name, pdfstamp_ctx_errmsg(ctx));
		shape_ok(f, text, &l);
		d = ps_new_dict(); /* the /Font resources the embedding fills */
		ck_assert_ptr_nonnull(d);
		rc = ps_font_embed_to(f, &s, d);
		ps_obj_free(d);
		if (strncmp(outcome, "embed:", 6) == 0)
			ck_assert_msg(rc == code_of(outcome + 6), "%s: embed gave %d (%s)", name, rc, pdfstamp_ctx_errmsg(ctx));
		else
			ck_assert_msg(rc == 0 && strcmp(outcome, "ok") == 0, "%s: %s", name, pdfstamp_ctx_errmsg(ctx));
		ps_font_line_free(&l);
		coll_free(&c);
		ps_font_free(f);
	}
	fclose(fp);
	ck_assert_int_ge(count, 14);
	pdfstamp_ctx_free(ctx);
}
END_TEST

static Suite *font_suite(void)
{
	Suite *s = suite_create("font");
	TCase *tc = tcase_create("std14");

	tcase_add_test(tc, test_std14_latin);
	tcase_add_test(tc, test_std14_embed);
	suite_add_tcase(s, tc);

	tc = tcase_create("choice");
	tcase_add_loop_test(tc, test_fc_covers, 0, sizeof scripts / sizeof scripts[0]);
	tcase_add_test(tc, test_fc_errors);
	tcase_add_test(tc, test_bad_fonts);
	tcase_add_test(tc, test_corpus);
	suite_add_tcase(s, tc);

	tc = tcase_create("shaping");
	tcase_add_test(tc, test_arabic_joined_rtl);
	tcase_add_test(tc, test_devanagari_reordered);
	tcase_add_test(tc, test_marks_extents);
	suite_add_tcase(s, tc);

	tc = tcase_create("embedding");
	tcase_add_test(tc, test_embed_cjk_cff);
	tcase_add_test(tc, test_embed_arabic);
	tcase_add_test(tc, test_embed_devanagari);
	tcase_add_test(tc, test_embed_cyrillic_greek);
	tcase_add_test(tc, test_shape_after_embed);
	suite_add_tcase(s, tc);

	tc = tcase_create("sets");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_set_four_scripts);
	tcase_add_test(tc, test_set_given_first);
	tcase_add_test(tc, test_set_unused_not_embedded);
	tcase_add_test(tc, test_set_hieroglyphs);
	tcase_add_test(tc, test_set_missing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(font_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
