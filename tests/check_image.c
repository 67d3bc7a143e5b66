/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_image.c - images for stamps (image.c).
 *
 * PNG files are built here, byte by byte (zlib for IDAT and the CRCs), in
 * every colour type and bit depth, plain and Adam7-interlaced, with PLTE
 * and tRNS; each is loaded, added to an update on a plaintext sample, and
 * the pending image XObject's dictionary and inflated samples are compared
 * with the expected 8-bit gray or RGB samples and /SMask alpha.  JPEG marker
 * sequences are built by hand (the DCT data is never decoded here: it is
 * passed through) to check the frame header parsing, the Adobe inversion,
 * the walk over entropy-coded data and the bytes kept.  Hostile inputs
 * (truncations, bad CRC, bad zlib, zero and huge sizes, segments past the
 * end, missing markers, unsupported JPEG processes, other formats) must
 * give the documented code with a message.  One image goes through a
 * committed update of the encrypted sample and is read back decrypted.
 * The 100000 x 100000 and 16384 x 16384 headers are refused before any
 * pixel buffer exists (under --enable-sanitizers an allocation of that
 * size would abort the test).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ps.h"
#include "image.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif

static ps_ctx *ctx;
static ps_doc *doc;
static ps_update up;
static char tmpdir[64];

static void setup(void)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char path[4096];

	snprintf(tmpdir, sizeof tmpdir, "/tmp/check_image.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	snprintf(path, sizeof path, "%s/../samples/plain-2page.pdf", TEST_SRCDIR);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, path, 0), 0);
	snprintf(path, sizeof path, "%s/out.pdf", tmpdir);
	w.output = path;
	memset(&up, 0, sizeof up);
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
}

static void teardown(void)
{
	char cmd[128];

	ps_update_free(&up);
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* ---- PNG files built here ------------------------------------------------ */

static void put32(ps_buf *b, uint32_t v)
{
	uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	ps_buf_append(b, p, 4);
}

static void chunk(ps_buf *b, const char *type, const void *data, size_t n)
{
	uLong crc = crc32(0, (const Bytef *)type, 4);

	if (n)
		crc = crc32(crc, data, (uInt)n);
	put32(b, (uint32_t)n);
	ps_buf_append(b, type, 4);
	ps_buf_append(b, data, n);
	put32(b, (uint32_t)crc);
}

static int channels(int ctype)
{
	static const int ch[7] = {1, 0, 3, 1, 2, 0, 4};
	return ch[ctype];
}

/* Packs pixel (X, Y) of SAMPLES (W x channels per row, values at DEPTH) into
 * the scanline being written, MSB first for depths below 8. */
static void pack_row(ps_buf *raw, const uint16_t *s, uint32_t w, int depth, int nch,
                     uint32_t y, uint32_t x0, uint32_t dx)
{
	uint32_t x;
	int acc = 0, nbits = 0, c;

	ps_buf_putc(raw, 0); /* filter type None */
	for (x = x0; x < w; x += dx)
		for (c = 0; c < nch; c++) {
			uint16_t v = s[((size_t)y * w + x) * (size_t)nch + (size_t)c];
			if (depth == 16) {
				ps_buf_putc(raw, v >> 8);
				ps_buf_putc(raw, v & 255);
			} else if (depth == 8) {
				ps_buf_putc(raw, v);
			} else {
				acc = acc << depth | v;
				nbits += depth;
				if (nbits == 8) {
					ps_buf_putc(raw, acc);
					acc = nbits = 0;
				}
			}
		}
	if (nbits)
		ps_buf_putc(raw, acc << (8 - nbits));
}

typedef struct pngspec {
	uint32_t w, h;
	int depth, ctype, interlace;
	const uint16_t *samples;         /* w * h * channels */
	const uint8_t *plte;             /* 3 * nplte */
	size_t nplte;
	const uint8_t *trns;
	size_t ntrns;
} pngspec;

/* The PNG file of S (IDAT split in two chunks when long enough). */
static uint8_t *make_png(const pngspec *s, size_t *len)
{
	static const uint32_t a7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
	                                  {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
	ps_buf b = PS_BUF_INIT, raw = PS_BUF_INIT;
	uint8_t ihdr[13];
	uLongf zlen;
	uint8_t *z;
	uint32_t y;
	int p, nch = channels(s->ctype);

	ps_buf_append(&b, "\x89PNG\r\n\x1a\n", 8);
	ihdr[0] = (uint8_t)(s->w >> 24); ihdr[1] = (uint8_t)(s->w >> 16);
	ihdr[2] = (uint8_t)(s->w >> 8);  ihdr[3] = (uint8_t)s->w;
	ihdr[4] = (uint8_t)(s->h >> 24); ihdr[5] = (uint8_t)(s->h >> 16);
	ihdr[6] = (uint8_t)(s->h >> 8);  ihdr[7] = (uint8_t)s->h;
	ihdr[8] = (uint8_t)s->depth;
	ihdr[9] = (uint8_t)s->ctype;
	ihdr[10] = ihdr[11] = 0;
	ihdr[12] = (uint8_t)s->interlace;
	chunk(&b, "IHDR", ihdr, 13);
	if (s->plte)
		chunk(&b, "PLTE", s->plte, 3 * s->nplte);
	if (s->trns)
		chunk(&b, "tRNS", s->trns, s->ntrns);
	if (!s->interlace) {
		for (y = 0; y < s->h; y++)
			pack_row(&raw, s->samples, s->w, s->depth, nch, y, 0, 1);
	} else {
		for (p = 0; p < 7; p++) {
			if (a7[p][0] >= s->w || a7[p][1] >= s->h)
				continue; /* an empty pass has no scanlines at all */
			for (y = a7[p][1]; y < s->h; y += a7[p][3])
				pack_row(&raw, s->samples, s->w, s->depth, nch, y, a7[p][0], a7[p][2]);
		}
	}
	ck_assert(!raw.oom);
	zlen = compressBound((uLong)raw.len);
	z = malloc(zlen);
	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(compress2(z, &zlen, raw.data, (uLong)raw.len, 9), Z_OK);
	if (zlen > 16) {
		chunk(&b, "IDAT", z, 10);
		chunk(&b, "IDAT", z + 10, zlen - 10);
	} else {
		chunk(&b, "IDAT", z, zlen);
	}
	chunk(&b, "IEND", NULL, 0);
	free(z);
	ps_buf_free(&raw);
	ck_assert(!b.oom);
	return ps_buf_detach(&b, len);
}

/* ---- inspecting what was embedded -------------------------------------- */

static ps_obj *pending(uint32_t num)
{
	size_t i;

	for (i = 0; i < up.nobjs; i++)
		if (up.objs[i].num == num)
			return up.objs[i].obj;
	return NULL;
}

static int64_t dict_int(const ps_obj *d, const char *key)
{
	int64_t v = -1;

	ck_assert_int_eq(ps_obj_int(ps_dict_get(d, key), &v), 0);
	return v;
}

/* Checks the common keys of an image stream and returns its inflated data. */
static void image_samples(const ps_obj *stm, uint32_t w, uint32_t h, const char *cs, ps_buf *out)
{
	ck_assert_ptr_nonnull(stm);
	ck_assert_int_eq(stm->kind, PS_STREAM);
	ck_assert(ps_obj_is_name(ps_dict_get(stm, "Type"), "XObject"));
	ck_assert(ps_obj_is_name(ps_dict_get(stm, "Subtype"), "Image"));
	ck_assert_int_eq(dict_int(stm, "Width"), w);
	ck_assert_int_eq(dict_int(stm, "Height"), h);
	ck_assert_int_eq(dict_int(stm, "BitsPerComponent"), 8);
	ck_assert(ps_obj_is_name(ps_dict_get(stm, "ColorSpace"), cs));
	ck_assert(ps_obj_is_name(ps_dict_get(stm, "Filter"), "FlateDecode"));
	ck_assert_ptr_null(ps_dict_get(stm, "DecodeParms"));
	ps_buf_reset(out);
	ck_assert_int_eq(ps_inflate(ctx, stm->u.stm.data, stm->u.stm.len, 1u << 24, out), 0);
}

/* Loads PNG S, embeds it and compares: colour samples COLOR (ncomp per
 * pixel) and, when ALPHA is not NULL, an /SMask with those values (else
 * none). */
static void expect_png(const pngspec *s, int ncomp, const uint8_t *color, const uint8_t *alpha)
{
	size_t len, npx = (size_t)s->w * s->h;
	uint8_t *png = make_png(s, &len);
	ps_image *im = NULL;
	ps_buf got = PS_BUF_INIT;
	uint32_t num, w, h;
	ps_obj *img, *sm;

	ck_assert_msg(ps_image_load(ctx, NULL, png, len, &im) == 0, "load: %s", pdfstamp_ctx_errmsg(ctx));
	free(png);
	ps_image_size(im, &w, &h);
	ck_assert_uint_eq(w, s->w);
	ck_assert_uint_eq(h, s->h);
	ck_assert_int_eq(ps_image_embed(im, &up, &num), 0);
	img = pending(num);
	image_samples(img, s->w, s->h, ncomp == 1 ? "DeviceGray" : "DeviceRGB", &got);
	ck_assert_uint_eq(got.len, npx * (size_t)ncomp);
	ck_assert_mem_eq(got.data, color, got.len);
	sm = ps_dict_get(img, "SMask");
	if (alpha) {
		ck_assert_ptr_nonnull(sm);
		ck_assert_int_eq(sm->kind, PS_REF);
		image_samples(pending(sm->u.ref.num), s->w, s->h, "DeviceGray", &got);
		ck_assert_uint_eq(got.len, npx);
		ck_assert_mem_eq(got.data, alpha, npx);
	} else {
		ck_assert_ptr_null(sm);
	}
	ps_buf_free(&got);
	ps_image_free(im);
}

/* Expects ps_image_load of DATA to fail with CODE and a message that
 * contains WORD (when not NULL). */
static void expect_refusal(const uint8_t *data, size_t len, int code, const char *word)
{
	ps_image *im = (ps_image *)1;
	int rc = ps_image_load(ctx, NULL, data, len, &im);

	ck_assert_msg(rc == code, "expected %d, got %d (%s)", code, rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_ptr_null(im);
	ck_assert_str_ne(pdfstamp_ctx_errmsg(ctx), "");
	if (word)
		ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), word) != NULL, "message '%s' lacks '%s'",
		              pdfstamp_ctx_errmsg(ctx), word);
}

#define W 5
#define H 3
#define NPX (W * H)

/* ---- PNG colour types and depths ---------------------------------------- */

START_TEST(png_gray_depths)
{
	static const int depths[5] = {1, 2, 4, 8, 16};
	uint16_t s[NPX];
	uint8_t want[NPX];
	int d, i, il;

	for (il = 0; il < 2; il++)
		for (d = 0; d < 5; d++) {
			int depth = depths[d];
			uint32_t max = (1u << depth) - 1;
			pngspec p = {W, H, depth, 0, il, s, NULL, 0, NULL, 0};
			for (i = 0; i < NPX; i++) {
				s[i] = (uint16_t)((uint32_t)(i * 7 + 3) % (max + 1));
				if (depth == 16)
					s[i] = (uint16_t)(i * 4099 + 0x80); /* the high byte counts */
				want[i] = depth == 16 ? (uint8_t)(s[i] >> 8) : (uint8_t)(s[i] * 255 / max);
			}
			expect_png(&p, 1, want, NULL);
		}
}
END_TEST

START_TEST(png_rgb)
{
	uint16_t s[NPX * 3];
	uint8_t want[NPX * 3];
	int i, depth;

	for (depth = 8; depth <= 16; depth += 8) {
		pngspec p = {W, H, depth, 2, 0, s, NULL, 0, NULL, 0};
		for (i = 0; i < NPX * 3; i++) {
			s[i] = depth == 8 ? (uint16_t)(i * 17 % 256) : (uint16_t)(i * 2999 % 65536);
			want[i] = depth == 8 ? (uint8_t)s[i] : (uint8_t)(s[i] >> 8);
		}
		expect_png(&p, 3, want, NULL);
	}
}
END_TEST

START_TEST(png_palette)
{
	static const uint8_t plte[16 * 3] = {
		255, 0, 0,  0, 255, 0,  0, 0, 255,  10, 20, 30,  40, 50, 60,  70, 80, 90,
		1, 2, 3,  4, 5, 6,  7, 8, 9,  11, 12, 13,  14, 15, 16,  17, 18, 19,
		21, 22, 23,  24, 25, 26,  27, 28, 29,  200, 201, 202};
	static const uint8_t trns[3] = {0, 128, 255}; /* entries 3.. are opaque */
	static const int depths[4] = {1, 2, 4, 8};
	uint16_t s[NPX];
	uint8_t want[NPX * 3], alpha[NPX];
	int d, i, t;

	for (t = 0; t < 2; t++)
		for (d = 0; d < 4; d++) {
			int n = depths[d] >= 4 ? 16 : 1 << depths[d];
			/* (tRNS may not be longer than PLTE: 2 entries at 1 bit) */
			pngspec p = {W, H, depths[d], 3, 0, s, plte, (size_t)n, t ? trns : NULL, t ? (n < 3 ? 2 : 3) : 0};
			for (i = 0; i < NPX; i++) {
				s[i] = (uint16_t)((i * 5 + 1) % n);
				memcpy(want + 3 * i, plte + 3 * s[i], 3);
				alpha[i] = s[i] < 3 ? trns[s[i]] : 255;
			}
			/* a palette with tRNS has an /SMask; the 1-bit one uses only
			 * entries 0 and 1 */
			expect_png(&p, 3, want, t ? alpha : NULL);
		}
}
END_TEST

START_TEST(png_alpha)
{
	uint16_t s[NPX * 4];
	uint8_t color[NPX * 3], alpha[NPX];
	int i, c, depth, ctype;

	for (ctype = 4; ctype <= 6; ctype += 2)
		for (depth = 8; depth <= 16; depth += 8) {
			int nch = channels(ctype), nc = nch - 1;
			pngspec p = {W, H, depth, ctype, 0, s, NULL, 0, NULL, 0};
			for (i = 0; i < NPX; i++) {
				for (c = 0; c < nch; c++) {
					uint16_t v = (uint16_t)((i * 37 + c * 101) % 256);
					if (c == nch - 1)
						v = (uint16_t)(i % 3 == 0 ? 0 : i % 3 == 1 ? 255 : 77 + i);
					s[i * nch + c] = depth == 16 ? (uint16_t)(v << 8 | 0x5A) : v;
					if (c < nc)
						color[i * nc + c] = (uint8_t)v;
					else
						alpha[i] = (uint8_t)v;
				}
			}
			expect_png(&p, nc, color, alpha);
			/* every pixel opaque: no /SMask */
			for (i = 0; i < NPX; i++) {
				s[i * nch + nch - 1] = depth == 16 ? 0xFFFF : 255;
				alpha[i] = 255;
			}
			expect_png(&p, nc, color, NULL);
		}
}
END_TEST

START_TEST(png_trns_color_key)
{
	uint16_t s[NPX * 3];
	uint8_t color[NPX * 3], alpha[NPX], trns[6];
	int i, c, depth;

	for (depth = 8; depth <= 16; depth += 8) {
		/* gray: the value 9 (16-bit: 0x0909) is transparent */
		pngspec g = {W, H, depth, 0, 0, s, NULL, 0, trns, 2};
		uint16_t key = depth == 8 ? 9 : 0x0909;
		trns[0] = (uint8_t)(key >> 8);
		trns[1] = (uint8_t)key;
		for (i = 0; i < NPX; i++) {
			s[i] = i % 4 == 1 ? key : (uint16_t)(depth == 8 ? 100 + i : (100 + i) << 8);
			color[i] = (uint8_t)(depth == 8 ? s[i] : s[i] >> 8);
			alpha[i] = i % 4 == 1 ? 0 : 255;
		}
		expect_png(&g, 1, color, alpha);
		/* RGB: (1, 2, 3) (16-bit: 0x0101 0x0202 0x0303) is transparent;
		 * (1, 2, 4) is not */
		{
			pngspec p = {W, H, depth, 2, 0, s, NULL, 0, trns, 6};
			for (c = 0; c < 3; c++) {
				uint16_t v = (uint16_t)(depth == 8 ? c + 1 : (c + 1) * 0x0101);
				trns[2 * c] = (uint8_t)(v >> 8);
				trns[2 * c + 1] = (uint8_t)v;
			}
			for (i = 0; i < NPX; i++) {
				for (c = 0; c < 3; c++) {
					uint16_t v = (uint16_t)(i % 3 ? 50 + i + c : c + 1);
					if (i == 4 && c == 2)
						v = 4;
					s[i * 3 + c] = depth == 8 ? v : (uint16_t)(v * 0x0101);
					color[i * 3 + c] = (uint8_t)v;
				}
				alpha[i] = i % 3 || i == 4 ? 255 : 0;
			}
			expect_png(&p, 3, color, alpha);
		}
	}
}
END_TEST

START_TEST(png_interlaced)
{
	enum { IW = 11, IH = 9 };
	uint16_t s[IW * IH * 4];
	uint8_t color[IW * IH * 3], alpha[IW * IH];
	int i, c;
	pngspec p = {IW, IH, 8, 6, 1, s, NULL, 0, NULL, 0};

	for (i = 0; i < IW * IH; i++) {
		for (c = 0; c < 3; c++) {
			s[i * 4 + c] = (uint16_t)((i * 13 + c * 71) % 256);
			color[i * 3 + c] = (uint8_t)s[i * 4 + c];
		}
		s[i * 4 + 3] = alpha[i] = (uint8_t)(i * 29 % 256);
	}
	expect_png(&p, 3, color, alpha);
	/* 1 x 1 and 2 x 1: most Adam7 passes empty */
	p.w = 1;
	p.h = 1;
	expect_png(&p, 3, color, alpha);
	{
		uint16_t s2[2 * 4] = {1, 2, 3, 255, 4, 5, 6, 255};
		uint8_t c2[6] = {1, 2, 3, 4, 5, 6};
		pngspec q = {2, 1, 8, 6, 1, s2, NULL, 0, NULL, 0};
		expect_png(&q, 3, c2, NULL);
	}
}
END_TEST

/* ---- hostile PNG --------------------------------------------------------- */

static uint8_t *small_png(size_t *len)
{
	static uint16_t s[16 * 16 * 3];
	pngspec p = {16, 16, 8, 2, 0, s, NULL, 0, NULL, 0};
	int i;

	for (i = 0; i < 16 * 16 * 3; i++)
		s[i] = (uint16_t)(i * 7919 % 251);
	return make_png(&p, len);
}

START_TEST(png_truncated)
{
	size_t len, cut;
	uint8_t *png = small_png(&len);
	/* signature only, in IHDR, after IHDR, in the first IDAT, in the
	 * second, before its CRC */
	size_t cuts[] = {8, 12, 20, 33, 40, 50, len / 2, len - 20, len - 16};
	size_t k;

	for (k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
		cut = cuts[k];
		expect_refusal(png, cut, PDFSTAMP_E_FORMAT, "PNG");
	}
	free(png);
}
END_TEST

START_TEST(png_bad_crc_and_zlib)
{
	size_t len;
	uint8_t *png = small_png(&len);

	png[29] ^= 1; /* IHDR's CRC */
	expect_refusal(png, len, PDFSTAMP_E_FORMAT, "PNG");
	png[29] ^= 1;
	png[len - 13] ^= 0x40; /* the last IDAT's CRC */
	expect_refusal(png, len, PDFSTAMP_E_FORMAT, "PNG");
	free(png);
	{
		/* a valid CRC over a broken zlib stream */
		ps_buf b = PS_BUF_INIT;
		static const uint8_t ihdr[13] = {0, 0, 0, 4, 0, 0, 0, 4, 8, 0, 0, 0, 0};
		static const uint8_t junk[12] = {0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6};
		ps_buf_append(&b, "\x89PNG\r\n\x1a\n", 8);
		chunk(&b, "IHDR", ihdr, 13);
		chunk(&b, "IDAT", junk, sizeof junk);
		chunk(&b, "IEND", NULL, 0);
		expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "PNG");
		ps_buf_free(&b);
	}
}
END_TEST

START_TEST(png_chunk_limits)
{
	size_t len, big = 2 * PS_IMAGE_MAX_CHUNK + 1, k;
	uint8_t *png = small_png(&len), *text = calloc(1, big);
	uLongf zlen = compressBound((uLong)big);
	uint8_t *z = malloc(zlen + 10);
	ps_buf b = PS_BUF_INIT;

	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(z);
	/* stored ancillary data over the cache limit (twice the chunk limit):
	 * a tEXt chunk of that size */
	memcpy(text, "Comment", 8); /* keyword, NUL, then the text */
	memset(text + 8, 'x', big - 8);
	ps_buf_append(&b, png, 33); /* signature and IHDR */
	chunk(&b, "tEXt", text, big);
	ps_buf_append(&b, png + 33, len - 33);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "limits");
	/* a compressed chunk inflating past the chunk limit: a zTXt bomb of a
	 * few KiB */
	ps_buf_reset(&b);
	memcpy(z, "Comment\0\0", 9); /* keyword, NUL, compression method 0 */
	ck_assert_int_eq(compress2(z + 9, &zlen, text + 8, (uLong)(PS_IMAGE_MAX_CHUNK + 1), 9), Z_OK);
	ck_assert_uint_lt(zlen, 65536);
	ps_buf_append(&b, png, 33);
	chunk(&b, "zTXt", z, zlen + 9);
	ps_buf_append(&b, png + 33, len - 33);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "limits");
	/* within the limits: loads */
	ps_buf_reset(&b);
	ps_buf_append(&b, png, 33);
	for (k = 0; k < 3; k++)
		chunk(&b, "tEXt", text, 1000);
	ps_buf_append(&b, png + 33, len - 33);
	{
		ps_image *im = NULL;
		ck_assert_int_eq(ps_image_load(ctx, NULL, b.data, b.len, &im), 0);
		ps_image_free(im);
	}
	free(z);
	free(text);
	free(png);
	ps_buf_free(&b);
}
END_TEST

/* A PNG header of W x H (depth 8, colour type CT) and a tiny IDAT. */
static void header_only(uint32_t w, uint32_t h, int ct, int code, const char *word)
{
	ps_buf b = PS_BUF_INIT;
	uint8_t ihdr[13] = {0};
	static const uint8_t idat[8] = {0x78, 0x9c, 0x03, 0, 0, 0, 0, 1};

	ihdr[0] = (uint8_t)(w >> 24); ihdr[1] = (uint8_t)(w >> 16); ihdr[2] = (uint8_t)(w >> 8); ihdr[3] = (uint8_t)w;
	ihdr[4] = (uint8_t)(h >> 24); ihdr[5] = (uint8_t)(h >> 16); ihdr[6] = (uint8_t)(h >> 8); ihdr[7] = (uint8_t)h;
	ihdr[8] = 8;
	ihdr[9] = (uint8_t)ct;
	ps_buf_append(&b, "\x89PNG\r\n\x1a\n", 8);
	chunk(&b, "IHDR", ihdr, 13);
	chunk(&b, "IDAT", idat, sizeof idat);
	chunk(&b, "IEND", NULL, 0);
	expect_refusal(b.data, b.len, code, word);
	ps_buf_free(&b);
}

START_TEST(png_sizes)
{
	header_only(0, 10, 2, PDFSTAMP_E_FORMAT, "PNG");
	header_only(10, 0, 2, PDFSTAMP_E_FORMAT, "PNG");
	/* refused from the header, naming the size, before any allocation */
	header_only(100000, 100000, 6, PDFSTAMP_E_UNSUPPORTED, "100000 x 100000");
	header_only(16385, 1, 0, PDFSTAMP_E_UNSUPPORTED, "16385 x 1");
	header_only(1, 16385, 0, PDFSTAMP_E_UNSUPPORTED, "too large");
	/* within each dimension, too many pixels in all */
	header_only(16384, 16384, 6, PDFSTAMP_E_UNSUPPORTED, "16384 x 16384");
	header_only(0x7fffffff, 0x7fffffff, 6, PDFSTAMP_E_UNSUPPORTED, "too large");
	/* a bad colour type / depth combination */
	header_only(4, 4, 5, PDFSTAMP_E_FORMAT, "PNG");
}
END_TEST

/* ---- JPEG marker sequences ----------------------------------------------- */

static void seg(ps_buf *b, int marker, const void *body, size_t n)
{
	ps_buf_putc(b, 0xFF);
	ps_buf_putc(b, marker);
	ps_buf_putc(b, (int)((n + 2) >> 8));
	ps_buf_putc(b, (int)((n + 2) & 255));
	ps_buf_append(b, body, n);
}

/* SOI, APP0 JFIF, DQT, SOF (MARKER, PREC, W, H, NC components), DHT, SOS,
 * entropy data with stuffing and a restart marker, EOI, then junk. */
static void jpeg(ps_buf *b, int marker, int prec, unsigned w, unsigned h, int nc, int adobe)
{
	uint8_t sof[6 + 12], sos[4 + 8], q[65] = {0};
	int c;

	ps_buf_append(b, "\xFF\xD8", 2);
	seg(b, 0xE0, "JFIF\0\1\1\0\0\1\0\1\0\0", 14);
	if (adobe)
		seg(b, 0xEE, "Adobe\0\144\0\0\0\0\2", 12);
	seg(b, 0xDB, q, sizeof q);
	sof[0] = (uint8_t)prec;
	sof[1] = (uint8_t)(h >> 8); sof[2] = (uint8_t)h;
	sof[3] = (uint8_t)(w >> 8); sof[4] = (uint8_t)w;
	sof[5] = (uint8_t)nc;
	for (c = 0; c < nc; c++) {
		sof[6 + 3 * c] = (uint8_t)(c + 1);
		sof[7 + 3 * c] = c == 0 ? 0x22 : 0x11;
		sof[8 + 3 * c] = 0;
	}
	ps_buf_append(b, "\xFF\xFF", 2); /* fill bytes before a marker */
	seg(b, marker, sof, 6 + 3 * (size_t)nc);
	seg(b, 0xC4, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 17);
	sos[0] = (uint8_t)nc;
	for (c = 0; c < nc; c++) {
		sos[1 + 2 * c] = (uint8_t)(c + 1);
		sos[2 + 2 * c] = 0;
	}
	sos[1 + 2 * nc] = 0;
	sos[2 + 2 * nc] = 63;
	sos[3 + 2 * nc] = 0;
	seg(b, 0xDA, sos, 4 + 2 * (size_t)nc);
	ps_buf_append(b, "\x12\x34\xFF\x00\x56\xFF\xD0\x78\xFF\xFF\xD1\x9a", 12);
	if (marker == 0xC2) { /* a second scan of a progressive file */
		seg(b, 0xC4, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 17);
		seg(b, 0xDA, sos, 4 + 2 * (size_t)nc);
		ps_buf_append(b, "\xAB\xFF\x00", 3);
	}
	ps_buf_append(b, "\xFF\xD9", 2);
}

static void expect_jpeg(const ps_buf *b, size_t keep, unsigned w, unsigned h, const char *cs, int inverted)
{
	ps_image *im = NULL;
	uint32_t num, num2, iw, ih;
	ps_obj *img, *dec;
	size_t nobjs;
	int k;

	ck_assert_msg(ps_image_load(ctx, NULL, b->data, b->len, &im) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ps_image_size(im, &iw, &ih);
	ck_assert_uint_eq(iw, w);
	ck_assert_uint_eq(ih, h);
	ck_assert_int_eq(ps_image_embed(im, &up, &num), 0);
	nobjs = up.nobjs;
	ck_assert_int_eq(ps_image_embed(im, &up, &num2), 0);
	ck_assert_uint_eq(num2, num); /* once per update */
	ck_assert_uint_eq(up.nobjs, nobjs);
	img = pending(num);
	ck_assert_ptr_nonnull(img);
	ck_assert(ps_obj_is_name(ps_dict_get(img, "Subtype"), "Image"));
	ck_assert(ps_obj_is_name(ps_dict_get(img, "Filter"), "DCTDecode"));
	ck_assert(ps_obj_is_name(ps_dict_get(img, "ColorSpace"), cs));
	ck_assert_int_eq(dict_int(img, "Width"), w);
	ck_assert_int_eq(dict_int(img, "Height"), h);
	ck_assert_int_eq(dict_int(img, "BitsPerComponent"), 8);
	ck_assert_ptr_null(ps_dict_get(img, "SMask"));
	/* passed through: the bytes up to EOI, unchanged */
	ck_assert_uint_eq(img->u.stm.len, keep);
	ck_assert_mem_eq(img->u.stm.data, b->data, keep);
	dec = ps_dict_get(img, "Decode");
	if (inverted) {
		ck_assert_uint_eq(ps_array_len(dec), 8);
		for (k = 0; k < 8; k++) {
			int64_t v;
			ck_assert_int_eq(ps_obj_int(ps_array_get(dec, (size_t)k), &v), 0);
			ck_assert_int_eq(v, k % 2 ? 0 : 1);
		}
	} else {
		ck_assert_ptr_null(dec);
	}
	ps_image_free(im);
}

START_TEST(jpeg_frames)
{
	ps_buf b = PS_BUF_INIT;
	size_t keep;

	jpeg(&b, 0xC0, 8, 640, 480, 1, 0);
	keep = b.len;
	ps_buf_append(&b, "trailing junk\xFF\xD9", 15); /* dropped */
	expect_jpeg(&b, keep, 640, 480, "DeviceGray", 0);
	ps_buf_reset(&b);
	jpeg(&b, 0xC1, 8, 3, 16384, 3, 0);
	expect_jpeg(&b, b.len, 3, 16384, "DeviceRGB", 0);
	ps_buf_reset(&b);
	jpeg(&b, 0xC2, 8, 1000, 999, 3, 1); /* progressive, Adobe RGB */
	expect_jpeg(&b, b.len, 1000, 999, "DeviceRGB", 0);
	ps_buf_reset(&b);
	jpeg(&b, 0xC0, 8, 17, 9, 4, 0); /* CMYK without the Adobe marker */
	expect_jpeg(&b, b.len, 17, 9, "DeviceCMYK", 0);
	ps_buf_reset(&b);
	jpeg(&b, 0xC2, 8, 17, 9, 4, 1); /* Adobe CMYK: inverted */
	expect_jpeg(&b, b.len, 17, 9, "DeviceCMYK", 1);
	ps_buf_free(&b);
}
END_TEST

START_TEST(jpeg_hostile)
{
	ps_buf b = PS_BUF_INIT;
	size_t sof_at, sos_at, len;
	uint8_t *p;

	jpeg(&b, 0xC0, 8, 64, 64, 3, 0);
	len = b.len;
	p = b.data;
	sof_at = (size_t)((uint8_t *)memmem(p, len, "\xFF\xC0", 2) - p);
	sos_at = (size_t)((uint8_t *)memmem(p, len, "\xFF\xDA", 2) - p);
	/* cut before the frame header, inside it, before the scan, inside the
	 * scan header, in the data, before EOI */
	expect_refusal(p, 2, PDFSTAMP_E_UNSUPPORTED, "not a PNG or JPEG"); /* FF D8 FF sniffed */
	expect_refusal(p, 3, PDFSTAMP_E_FORMAT, "JPEG");
	expect_refusal(p, sof_at, PDFSTAMP_E_FORMAT, "SOF");
	expect_refusal(p, sof_at + 7, PDFSTAMP_E_FORMAT, "past the end");
	expect_refusal(p, sos_at, PDFSTAMP_E_FORMAT, "SOS");
	expect_refusal(p, sos_at + 5, PDFSTAMP_E_FORMAT, "past the end");
	expect_refusal(p, sos_at + 14, PDFSTAMP_E_FORMAT, "EOI");
	expect_refusal(p, len - 1, PDFSTAMP_E_FORMAT, "EOI");
	expect_refusal(p, len - 2, PDFSTAMP_E_FORMAT, "EOI");
	/* a segment length running past the end */
	p[sof_at + 2] = 0x7F;
	expect_refusal(p, len, PDFSTAMP_E_FORMAT, "past the end");
	p[sof_at + 2] = 0;
	/* a segment length below 2 */
	p[sof_at + 3] = 1;
	expect_refusal(p, len, PDFSTAMP_E_FORMAT, "past the end");
	p[sof_at + 3] = 17;
	/* no frame header at all: SOF turned into an APP segment */
	p[sof_at + 1] = 0xE1;
	expect_refusal(p, len, PDFSTAMP_E_FORMAT, "frame header");
	/* two frame headers: the DQT turned into one (wrong length, refused
	 * either way), then a real duplicate */
	p[sof_at + 1] = 0xC0;
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8", 2);
	seg(&b, 0xC0, "\x08\0\1\0\1\1\1\x11\0", 9);
	seg(&b, 0xC2, "\x08\0\1\0\1\1\1\x11\0", 9);
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "two frame headers");
	/* garbage where a marker belongs */
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8\xFF\xE0\0\4ab" "xyz", 11);
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "no marker");
	/* a second SOI; FF 00 outside a scan */
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8\xFF\xD8", 4);
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "FF D8");
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8\xFF\x00", 4);
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "FF 00");
	/* EOI before any scan */
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8", 2);
	seg(&b, 0xC0, "\x08\0\1\0\1\1\1\x11\0", 9);
	ps_buf_append(&b, "\xFF\xD9", 2);
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "SOS");
	/* a scan before the frame header */
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8", 2);
	seg(&b, 0xDA, "\1\1\0\0\x3f\0", 6);
	ps_buf_append(&b, "\1\2\xFF\xD9", 4);
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "before the frame header");
	/* bad scan and frame header lengths, sampling factors */
	ps_buf_reset(&b);
	jpeg(&b, 0xC0, 8, 8, 8, 1, 0);
	p = memmem(b.data, b.len, "\xFF\xDA", 2);
	p[4] = 2; /* Ns 2 with room for 1 */
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "scan header");
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8", 2);
	seg(&b, 0xC0, "\x08\0\1\0\1\3\1\x11\0", 9); /* Nf 3 in a 1-component header */
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "frame header");
	ps_buf_reset(&b);
	ps_buf_append(&b, "\xFF\xD8", 2);
	seg(&b, 0xC0, "\x08\0\1\0\1\1\1\x51\0", 9); /* H = 5 */
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "sampling");
	ps_buf_free(&b);
}
END_TEST

START_TEST(jpeg_unsupported)
{
	static const int arith[] = {0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF};
	ps_buf b = PS_BUF_INIT;
	size_t k;

	jpeg(&b, 0xC1, 12, 64, 64, 3, 0);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "12-bit");
	ps_buf_reset(&b);
	jpeg(&b, 0xC3, 8, 64, 64, 3, 0);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "lossless");
	for (k = 0xC5; k <= 0xC7; k++) {
		ps_buf_reset(&b);
		jpeg(&b, (int)k, 8, 64, 64, 3, 0);
		expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "hierarchical");
	}
	for (k = 0; k < sizeof arith / sizeof arith[0]; k++) {
		ps_buf_reset(&b);
		jpeg(&b, arith[k], 8, 64, 64, 3, 0);
		expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "arithmetic");
	}
	ps_buf_reset(&b);
	jpeg(&b, 0xC0, 8, 64, 0, 3, 0);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "DNL");
	ps_buf_reset(&b);
	jpeg(&b, 0xC0, 8, 0, 64, 3, 0);
	expect_refusal(b.data, b.len, PDFSTAMP_E_FORMAT, "0 x 64");
	ps_buf_reset(&b);
	jpeg(&b, 0xC0, 8, 64, 64, 2, 0);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "2 colour components");
	ps_buf_reset(&b);
	jpeg(&b, 0xC0, 8, 20000, 20000, 3, 0);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "20000 x 20000");
	ps_buf_reset(&b);
	jpeg(&b, 0xC2, 8, 16384, 16384, 1, 0);
	expect_refusal(b.data, b.len, PDFSTAMP_E_UNSUPPORTED, "too large");
	ps_buf_free(&b);
}
END_TEST

/* ---- other inputs --------------------------------------------------------- */

START_TEST(not_an_image)
{
	static const char *const what[] = {"%PDF-1.7\n", "GIF89a\1\0\1\0", "\x89PNG\r\n", "\xFF\xD8", "BM", ""};
	size_t k;

	for (k = 0; k < sizeof what / sizeof what[0]; k++)
		expect_refusal((const uint8_t *)what[k], strlen(what[k]), PDFSTAMP_E_UNSUPPORTED,
		               "not a PNG or JPEG image");
	expect_refusal(NULL, 0, PDFSTAMP_E_UNSUPPORTED, "not a PNG or JPEG image");
}
END_TEST

START_TEST(from_file)
{
	char path[128], msg[512];
	size_t len;
	uint8_t *png = small_png(&len);
	ps_image *im = NULL;
	uint32_t w, h;
	FILE *f;

	snprintf(path, sizeof path, "%s/seal.png", tmpdir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(png, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(ps_image_load(ctx, path, NULL, 0, &im), 0);
	ps_image_size(im, &w, &h);
	ck_assert_uint_eq(w, 16);
	ck_assert_uint_eq(h, 16);
	ps_image_free(im);
	ps_image_free(NULL);
	/* a damaged file: the message names it */
	ck_assert_int_eq(truncate(path, 40), 0);
	ck_assert_int_eq(ps_image_load(ctx, path, NULL, 0, &im), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), path));
	/* missing, a directory: usage errors naming the path */
	snprintf(path, sizeof path, "%s/missing.png", tmpdir);
	ck_assert_int_eq(ps_image_load(ctx, path, NULL, 0, &im), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(im);
	snprintf(msg, sizeof msg, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_ptr_nonnull(strstr(msg, path));
	ck_assert_int_eq(ps_image_load(ctx, tmpdir, NULL, 0, &im), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "directory"));
	/* too large a file, refused from its size */
	snprintf(path, sizeof path, "%s/big.png", tmpdir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(png, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(truncate(path, (off_t)PS_IMAGE_MAX_FILE + 1), 0);
	ck_assert_int_eq(ps_image_load(ctx, path, NULL, 0, &im), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "64 MiB"));
	free(png);
}
END_TEST

START_TEST(embed_per_update)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	uint16_t s[4 * 2] = {10, 0, 20, 255, 30, 128, 40, 255};
	pngspec p = {2, 2, 8, 4, 0, s, NULL, 0, NULL, 0};
	size_t len;
	uint8_t *png = make_png(&p, &len);
	ps_image *im = NULL;
	ps_update up2;
	uint32_t a, b, c;
	char path[128];

	ck_assert_int_eq(ps_image_load(ctx, NULL, png, len, &im), 0);
	free(png);
	ck_assert_int_eq(ps_image_embed(im, &up, &a), 0);
	ck_assert_uint_eq(up.nobjs, 2); /* image and /SMask */
	ck_assert_int_eq(ps_image_embed(im, &up, &b), 0);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_eq(up.nobjs, 2);
	snprintf(path, sizeof path, "%s/out2.pdf", tmpdir);
	w.output = path;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up2), 0);
	ck_assert_int_eq(ps_image_embed(im, &up2, &c), 0);
	ck_assert_uint_eq(up2.nobjs, 2);
	ck_assert_ptr_nonnull(up2.objs[0].obj);
	ps_update_free(&up2);
	ps_image_free(im);
}
END_TEST

/* Through a committed update of the AES-256 sample: the objects come back
 * decrypted as they were meant. */
START_TEST(embed_encrypted)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	uint16_t s[3 * 2 * 4];
	uint8_t color[6 * 3], alpha[6];
	pngspec p = {3, 2, 8, 6, 0, s, NULL, 0, NULL, 0};
	ps_doc *enc = NULL, *back = NULL;
	ps_update u2;
	ps_image *im = NULL;
	ps_buf got = PS_BUF_INIT, plain = PS_BUF_INIT;
	ps_obj *img, *sm;
	char in[4096], out[256];
	uint8_t *png, *file;
	size_t len, i, flen;
	uint32_t num;
	FILE *f;

	for (i = 0; i < 6; i++) {
		s[i * 4] = color[i * 3] = (uint8_t)(i * 40);
		s[i * 4 + 1] = color[i * 3 + 1] = (uint8_t)(255 - i * 40);
		s[i * 4 + 2] = color[i * 3 + 2] = 7;
		s[i * 4 + 3] = alpha[i] = (uint8_t)(i == 0 ? 0 : i * 50);
	}
	png = make_png(&p, &len);
	ck_assert_int_eq(ps_image_load(ctx, NULL, png, len, &im), 0);
	free(png);
	snprintf(in, sizeof in, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	ck_assert_int_eq(ps_doc_open(ctx, &enc, in, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(enc, "sample-user", 11, 0), 0);
	snprintf(out, sizeof out, "%s/enc.pdf", tmpdir);
	w.output = out;
	ck_assert_int_eq(ps_update_begin(enc, &w, &u2), 0);
	ck_assert_int_eq(ps_image_embed(im, &u2, &num), 0);
	for (i = 0; i < u2.nobjs; i++)
		if (u2.objs[i].num == num)
			ps_buf_append(&plain, u2.objs[i].obj->u.stm.data, u2.objs[i].obj->u.stm.len);
	ck_assert_uint_gt(plain.len, 8);
	ck_assert_int_eq(ps_update_commit(&u2, &w, &res), 0);
	ps_update_free(&u2);
	pdfstamp_result_clear(&res);
	pdfstamp_doc_close(enc);

	/* the deflated plaintext is nowhere in the file: encrypted */
	f = fopen(out, "rb");
	ck_assert_ptr_nonnull(f);
	file = malloc(1 << 20);
	flen = fread(file, 1, 1 << 20, f);
	fclose(f);
	ck_assert_uint_gt(flen, 1000);
	ck_assert_ptr_null(memmem(file, flen, plain.data, plain.len));
	free(file);
	ps_buf_free(&plain);

	ck_assert_int_eq(ps_doc_open(ctx, &back, out, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(back, "sample-user", 11, 0), 0);
	ck_assert_int_eq(ps_doc_lookup(back, num, &img), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(img, "Subtype"), "Image"));
	ck_assert_int_eq(ps_doc_stream_data(back, num, img, 1, &got), 0);
	ck_assert_uint_eq(got.len, sizeof color);
	ck_assert_mem_eq(got.data, color, sizeof color);
	sm = ps_dict_get(img, "SMask");
	ck_assert_ptr_nonnull(sm);
	ck_assert_int_eq(sm->kind, PS_REF);
	num = sm->u.ref.num;
	ck_assert_int_eq(ps_doc_lookup(back, num, &sm), 0);
	ps_buf_reset(&got);
	ck_assert_int_eq(ps_doc_stream_data(back, num, sm, 1, &got), 0);
	ck_assert_uint_eq(got.len, sizeof alpha);
	ck_assert_mem_eq(got.data, alpha, sizeof alpha);
	ps_buf_free(&got);
	pdfstamp_doc_close(back);
	ps_image_free(im);
}
END_TEST

static Suite *image_suite(void)
{
	Suite *s = suite_create("image");
	TCase *t = tcase_create("png");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, png_gray_depths);
	tcase_add_test(t, png_rgb);
	tcase_add_test(t, png_palette);
	tcase_add_test(t, png_alpha);
	tcase_add_test(t, png_trns_color_key);
	tcase_add_test(t, png_interlaced);
	tcase_add_test(t, png_truncated);
	tcase_add_test(t, png_bad_crc_and_zlib);
	tcase_add_test(t, png_sizes);
	tcase_add_test(t, png_chunk_limits);
	suite_add_tcase(s, t);
	t = tcase_create("jpeg");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, jpeg_frames);
	tcase_add_test(t, jpeg_hostile);
	tcase_add_test(t, jpeg_unsupported);
	suite_add_tcase(s, t);
	t = tcase_create("load and embed");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, not_an_image);
	tcase_add_test(t, from_file);
	tcase_add_test(t, embed_per_update);
	tcase_add_test(t, embed_encrypted);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(image_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
