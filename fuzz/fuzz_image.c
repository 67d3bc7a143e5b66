/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_image.c - libFuzzer target for the stamp images (image.c): the PNG
 * decoder (libspng, under our limits) and the JPEG marker walk, which
 * `pdfstamp stamp --image` runs over a file the user was handed.
 *
 * The input is the image file.  ps_image_load runs on it; if it succeeds
 * the image is added to an update of a small plaintext PDF (written once
 * to a memfd; nothing is committed) and the objects are checked.
 * Oracles:
 *  - a refusal is PDFSTAMP_E_FORMAT, PDFSTAMP_E_UNSUPPORTED or
 *    PDFSTAMP_E_NOMEM with a message (never USAGE or INTERNAL: bytes
 *    cannot be a caller's mistake);
 *  - an accepted image is 1..16384 pixels each way and at most
 *    PS_IMAGE_MAX_PIXELS in all;
 *  - a second ps_image_embed in the same update gives the same number and
 *    adds nothing;
 *  - a /FlateDecode image inflates to exactly Width x Height x components
 *    bytes, its /SMask (if any) to Width x Height; a /DCTDecode image holds
 *    the input's first bytes, from SOI to an EOI marker.
 */
#include "fuzz.h"

#include "image.h"

static const char fzim_pdf[] =
	"%PDF-1.7\n"
	"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
	"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n"
	"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>\nendobj\n"
	"xref\n0 4\n0000000000 65535 f\r\n0000000009 00000 n\r\n0000000058 00000 n\r\n"
	"0000000115 00000 n\r\ntrailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n186\n%%EOF\n";

static ps_obj *fzim_pending(const ps_update *up, uint32_t num)
{
	size_t i;

	for (i = 0; i < up->nobjs; i++)
		if (up->objs[i].num == num)
			return up->objs[i].obj;
	return NULL;
}

static int64_t fzim_int(ps_ctx *ctx, const ps_obj *d, const char *key)
{
	int64_t v;

	if (ps_obj_int(ps_dict_get(d, key), &v) < 0)
		fz_bug(ctx, "an image dictionary without an integer key");
	return v;
}

/* Inflates image stream S and checks it holds W x H x NC bytes. */
static void fzim_samples(ps_ctx *ctx, const ps_obj *s, int64_t w, int64_t h, int64_t nc)
{
	ps_buf out = PS_BUF_INIT;

	if (!s || s->kind != PS_STREAM)
		fz_bug(ctx, "an image that is not a pending stream");
	if (ps_inflate(ctx, s->u.stm.data, s->u.stm.len, PS_IMAGE_MAX_PIXELS * 4 + 1, &out) < 0) {
		if (ctx->errcode != PDFSTAMP_E_NOMEM)
			fz_bug(ctx, "our own deflated samples do not inflate");
	} else if (!out.oom && out.len != (size_t)(w * h * nc)) {
		fz_bug(ctx, "the image's samples are not Width x Height x components bytes");
	}
	ps_buf_free(&out);
}

static void fzim_check(ps_ctx *ctx, ps_doc *doc, ps_image *im, const uint8_t *data, size_t size)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	ps_update up;
	uint32_t num, num2, iw, ih;
	ps_obj *img, *sm;
	int64_t nc, iwd, iht;
	size_t n;

	ps_image_size(im, &iw, &ih);
	if (iw < 1 || ih < 1 || iw > PS_IMAGE_MAX_DIM || ih > PS_IMAGE_MAX_DIM ||
	    (uint64_t)iw * ih > PS_IMAGE_MAX_PIXELS)
		fz_bug(ctx, "an accepted image beyond the limits");
	w.output = "/nonexistent/never-written.pdf";
	if (ps_update_begin(doc, &w, &up) < 0) {
		ps_update_free(&up);
		return;
	}
	if (ps_image_embed(im, &up, &num) < 0) {
		if (ctx->errcode != PDFSTAMP_E_NOMEM)
			fz_bug(ctx, "ps_image_embed failed");
		goto out;
	}
	n = up.nobjs;
	if (ps_image_embed(im, &up, &num2) < 0 || num2 != num || up.nobjs != n)
		fz_bug(ctx, "a second ps_image_embed added the image again");
	img = fzim_pending(&up, num);
	if (!img || img->kind != PS_STREAM)
		fz_bug(ctx, "the image is not a pending stream");
	iwd = fzim_int(ctx, img, "Width");
	iht = fzim_int(ctx, img, "Height");
	if (iwd != iw || iht != ih || fzim_int(ctx, img, "BitsPerComponent") != 8)
		fz_bug(ctx, "the image dictionary disagrees with ps_image_size");
	sm = ps_dict_get(img, "ColorSpace");
	nc = ps_obj_is_name(sm, "DeviceGray") ? 1 : ps_obj_is_name(sm, "DeviceRGB") ? 3 :
	     ps_obj_is_name(sm, "DeviceCMYK") ? 4 : 0;
	if (!nc)
		fz_bug(ctx, "an image without a device colour space");
	if (ps_obj_is_name(ps_dict_get(img, "Filter"), "DCTDecode")) {
		size_t l = img->u.stm.len;
		if (l < 4 || l > size || memcmp(img->u.stm.data, data, l) != 0 ||
		    img->u.stm.data[l - 2] != 0xFF || img->u.stm.data[l - 1] != 0xD9)
			fz_bug(ctx, "a JPEG not passed through from SOI to EOI");
		if (ps_dict_get(img, "SMask"))
			fz_bug(ctx, "a JPEG with an /SMask");
	} else {
		fzim_samples(ctx, img, iwd, iht, nc);
		sm = ps_dict_get(img, "SMask");
		if (sm) {
			if (sm->kind != PS_REF)
				fz_bug(ctx, "an /SMask that is not a reference");
			fzim_samples(ctx, fzim_pending(&up, sm->u.ref.num), iwd, iht, 1);
		}
	}
out:
	ps_update_free(&up);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ps_ctx *dctx;
	static ps_doc *doc;
	ps_image *im = NULL;
	ps_ctx *ctx;
	int rc;

	if (size > FZ_MAX_INPUT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	if (!doc) {
		char path[64];
		int fd;

		if (!dctx && pdfstamp_ctx_new(&dctx) < 0)
			goto done;
		fd = fz_memfile((const uint8_t *)fzim_pdf, sizeof fzim_pdf - 1, path);
		if (fd < 0)
			goto done;
		rc = ps_doc_open(dctx, &doc, path, 0);
		close(fd);
		if (rc < 0)
			fz_bug(dctx, "the fuzzer's own PDF does not open");
	}
	rc = ps_image_load(ctx, NULL, data, size, &im);
	if (rc < 0) {
		if (rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_UNSUPPORTED && rc != PDFSTAMP_E_NOMEM)
			fz_bug(ctx, "unexpected error code from ps_image_load");
		if (pdfstamp_ctx_errmsg(ctx)[0] == 0)
			fz_bug(ctx, "an error without a message");
		if (im)
			fz_bug(ctx, "an image returned with an error");
		goto done;
	}
	fzim_check(dctx, doc, im, data, size);
done:
	ps_image_free(im);
	pdfstamp_ctx_free(ctx);
	return 0;
}
