/* SPDX-License-Identifier: Apache-2.0 */
/*
 * image.c - images for stamps: PNG decoded with libspng, JPEG passed
 * through as /DCTDecode.
 *
 * DESIGN NOTES
 *
 * Input.  A regular file (io.c's ps_io_read_file: at most PS_IMAGE_MAX_FILE
 * bytes; one that cannot be opened, or a FIFO, directory or device, is
 * PDFSTAMP_E_USAGE naming the path) or the caller's bytes (same bound).
 * The format is sniffed from the first bytes: the PNG signature
 * 89 50 4E 47 0D 0A 1A 0A (PNG spec 5.2) or a JPEG SOI followed by a
 * marker, FF D8 FF (ITU T.81 B.2.1); anything else is
 * PDFSTAMP_E_UNSUPPORTED "not a PNG or JPEG image".  Everything is checked
 * and, for PNG, decoded and compressed at load time, so that a bad image
 * is refused before anything is written.
 *
 * Limits (image.h): each dimension at most PS_IMAGE_MAX_DIM (16384)
 * pixels and at most PS_IMAGE_MAX_PIXELS (32 Mi) pixels in all, for both
 * formats (a JPEG is decoded by the viewer, which deserves the same
 * protection); that bounds the PNG decode buffer (4 bytes a pixel) at 128
 * MiB.  Dimensions are checked from the header (IHDR, SOF) before any
 * buffer of that size is allocated.  PNG ancillary chunks are bounded by
 * spng_set_chunk_limits: a compressed one (zTXt, iTXt, iCCP) may inflate
 * to 4 MiB, and all that libspng keeps of them to 8 MiB; with libspng's
 * chunk count limit, exceeding a limit is PDFSTAMP_E_UNSUPPORTED.
 *
 * PNG (PNG spec, ISO/IEC 15948): every colour type and bit depth of
 * Table 11.1 (gray 1/2/4/8/16, RGB 8/16, palette 1/2/4/8, gray+alpha and
 * RGBA 8/16), Adam7 interlacing; libspng checks the CRCs of critical
 * chunks and the zlib stream, and any damage is PDFSTAMP_E_FORMAT with
 * spng_strerror's text.  Decoded to 8-bit RGBA (SPNG_FMT_RGBA8, tRNS
 * applied: a palette's alpha table, or the one transparent gray or RGB
 * value), then split into
 *   - the colour samples: /DeviceGray for colour types 0 and 4, else
 *     /DeviceRGB, /BitsPerComponent 8 (16-bit samples keep their high
 *     byte, as libspng scales them; 1/2/4-bit gray is scaled to 0..255);
 *   - the alpha samples, as a separate /SMask image (ISO 32000-2
 *     11.6.5.3: /DeviceGray, 8 bits, same size), omitted when every pixel
 *     is opaque (alpha 255).  The colour samples of transparent pixels are
 *     kept as decoded (no matte, /Matte absent: not premultiplied).
 * Both are compressed with /FlateDecode (ISO 32000-2 7.4.4) without a
 * predictor.  Ignored: gAMA, cHRM, sRGB, iCCP (samples are taken as
 * DeviceRGB/DeviceGray: no colour management), sBIT (libspng uses it only
 * when asked), bKGD, pHYs (the stamp's rectangle decides the size), text
 * and time chunks.
 *
 * JPEG (ITU T.81 Annex B; ISO 32000-2 7.4.8): the bytes from SOI through
 * EOI are embedded unchanged with /Filter /DCTDecode (bytes after EOI are
 * dropped).  The marker walk is bounds-checked at every step: each
 * segment's length must fit in the file; fill bytes (FF FF ...) are
 * skipped; after each SOS the entropy-coded data is skipped up to the next
 * marker that is not a stuffed FF 00 or a restart FF D0-D7.  Required: a
 * frame header before the first scan, at least one scan, and the EOI
 * (a cut file is PDFSTAMP_E_FORMAT, naming which part is missing).
 *   - Frames: SOF0 baseline, SOF1 extended sequential and SOF2
 *     progressive (Huffman coding), which PDF readers decode.  Lossless
 *     (SOF3), hierarchical (SOF5-7, DHP) and arithmetic-coded (SOF9-11,
 *     SOF13-15) files are PDFSTAMP_E_UNSUPPORTED, as is any precision but
 *     8 bits and a height of 0 (defined later by DNL).  A second frame
 *     header is PDFSTAMP_E_FORMAT.
 *   - Colour: 1 component /DeviceGray, 3 /DeviceRGB, 4 /DeviceCMYK; the
 *     decoder applies the YCbCr/YCCK transform itself (/ColorTransform
 *     defaults from the APP14 marker, 7.4.8 Table 13).  A 4-component
 *     file with an Adobe APP14 marker stores CMYK inverted (as Photoshop
 *     writes it): the image gets /Decode [1 0 1 0 1 0 1 0] (8.9.5.2), the
 *     usual way such files are embedded (readers do not look for the
 *     APP14 marker themselves); MuPDF and poppler render cyan, magenta,
 *     yellow and black right with it (tests/e2e/image.sh).  Embedded ICC
 *     profiles (APP2) and EXIF orientation are ignored.
 *
 * Embedding (ps_image_embed): the image XObject (8.9.5, Table 87) and its
 * /SMask are new objects of the update, given as plaintext to the writer,
 * which encrypts their data under the document's handler like every other
 * new stream (incr.c invariant 2).  An image remembers the update it was
 * added to (the update, its base length and the pending object); a second
 * call for the same update returns the same number.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "sha2.h"
#include "ps.h"
#include "extlib.h"
#include "io.h"

enum { IM_PNG = 1, IM_JPEG };

struct ps_image {
	int kind;
	uint32_t w, h;
	int ncomp;              /* 1 gray, 3 RGB, 4 CMYK */
	int cmyk_inverted;      /* JPEG with an Adobe APP14 marker */
	uint8_t *data;          /* JPEG bytes, or the deflated colour samples */
	size_t len;
	uint8_t *alpha;         /* deflated alpha samples (PNG), NULL when opaque */
	size_t alpha_len;
	uint8_t sha256[32];     /* of the bytes it was loaded from (ps_image_sha256) */
	/* the update the image was added to (ps_image_embed) */
	const ps_update *up;
	int64_t up_base;
	const ps_obj *up_obj;
	uint32_t num;
};

/* ---- input -------------------------------------------------------------- */

/* The common size checks of both formats. */
static int check_size(ps_ctx *ctx, const char *what, uint32_t w, uint32_t h)
{
	if (w == 0 || h == 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%s image of %" PRIu32 " x %" PRIu32 " pixels", what, w, h);
	if (w > PS_IMAGE_MAX_DIM || h > PS_IMAGE_MAX_DIM || (uint64_t)w * h > PS_IMAGE_MAX_PIXELS)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "%s image too large: %" PRIu32 " x %" PRIu32 " pixels (at most %u "
		              "in each dimension and %u Mi pixels)", what, w, h,
		              (unsigned)PS_IMAGE_MAX_DIM, (unsigned)(PS_IMAGE_MAX_PIXELS >> 20));
	return 0;
}

/* ---- PNG ---------------------------------------------------------------- */

static int spng_fail(ps_ctx *ctx, const uint8_t *data, size_t len, int err)
{
	switch (err) {
	case SPNG_EMEM:
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory decoding a PNG image");
	case SPNG_EUSER_WIDTH:
	case SPNG_EUSER_HEIGHT:
		/* IHDR is the first chunk (PNG 5.6): its size for the message */
		if (len >= 24)
			return check_size(ctx, "PNG", ps_be32(data + 16), ps_be32(data + 20));
		/* fall through */
	case SPNG_ECHUNK_LIMITS:
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "PNG image beyond our limits: %s",
		              PS_X(spng_strerror)(err));
	default:
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "damaged PNG image: %s",
		              PS_X(spng_strerror)(err));
	}
}

static int load_png(ps_ctx *ctx, const uint8_t *data, size_t len, ps_image *im)
{
	spng_ctx *sp;
	struct spng_ihdr ih;
	uint8_t *px = NULL, *alpha = NULL;
	size_t size, npx, i;
	ps_buf z = PS_BUF_INIT, za = PS_BUF_INIT;
	int err, rc = 0, opaque = 1, c;

	if ((rc = ps_ext_need(ctx, PS_EXT_PNG)) < 0) /* extlib.c note 3 */
		return rc;
	if (!(sp = PS_X(spng_ctx_new)(0)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory decoding a PNG image");
	if ((err = PS_X(spng_set_image_limits)(sp, PS_IMAGE_MAX_DIM, PS_IMAGE_MAX_DIM)) != 0 ||
	    (err = PS_X(spng_set_chunk_limits)(sp, PS_IMAGE_MAX_CHUNK,
	                                       2 * PS_IMAGE_MAX_CHUNK)) != 0 ||
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	    /* fuzz builds only: a mutated chunk fails its CRC at once, so the
	     * fuzzer would never get past it (libspng's own fuzzer does this) */
	    (err = PS_X(spng_set_crc_action)(sp, SPNG_CRC_USE, SPNG_CRC_USE)) != 0 ||
#endif
	    (err = PS_X(spng_set_png_buffer)(sp, data, len)) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "cannot set up the PNG decoder: %s",
		            PS_X(spng_strerror)(err));
		goto out;
	}
	if ((err = PS_X(spng_get_ihdr)(sp, &ih)) != 0) {
		rc = spng_fail(ctx, data, len, err);
		goto out;
	}
	if ((rc = check_size(ctx, "PNG", ih.width, ih.height)) < 0)
		goto out;
	if ((err = PS_X(spng_decoded_image_size)(sp, SPNG_FMT_RGBA8, &size)) != 0) {
		rc = spng_fail(ctx, data, len, err);
		goto out;
	}
	npx = (size_t)ih.width * ih.height;
	if (size != npx * 4) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "unexpected PNG decode size");
		goto out;
	}
	px = malloc(size);
	if (!px) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory decoding a PNG image of %" PRIu32
		            " x %" PRIu32 " pixels", ih.width, ih.height);
		goto out;
	}
	/* the image, then the chunks after it up to IEND (the CRC of the
	 * last IDAT is checked only there; a file cut before IEND is damaged) */
	if ((err = PS_X(spng_decode_image)(sp, px, size, SPNG_FMT_RGBA8, SPNG_DECODE_TRNS)) != 0 ||
	    (err = PS_X(spng_decode_chunks)(sp)) != 0) {
		rc = spng_fail(ctx, data, len, err);
		goto out;
	}
	im->ncomp = ih.color_type == SPNG_COLOR_TYPE_GRAYSCALE ||
	            ih.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ? 1 : 3;
	for (i = 0; i < npx; i++)
		if (px[i * 4 + 3] != 255) {
			opaque = 0;
			break;
		}
	if (!opaque) {
		alpha = malloc(npx);
		if (!alpha)
			goto oom;
		for (i = 0; i < npx; i++)
			alpha[i] = px[i * 4 + 3];
	}
	/* the colour samples, compacted in place (the write index never
	 * passes the read index) */
	for (i = 0; i < npx; i++)
		for (c = 0; c < im->ncomp; c++)
			px[i * (size_t)im->ncomp + (size_t)c] = px[i * 4 + (size_t)c];
	if ((rc = ps_deflate(ctx, px, npx * (size_t)im->ncomp, 6, &z)) < 0)
		goto out;
	free(px);
	px = NULL;
	if (alpha && (rc = ps_deflate(ctx, alpha, npx, 6, &za)) < 0)
		goto out;
	if (z.oom || za.oom)
		goto oom;
	im->kind = IM_PNG;
	im->w = ih.width;
	im->h = ih.height;
	im->data = ps_buf_detach(&z, &im->len);
	if (alpha)
		im->alpha = ps_buf_detach(&za, &im->alpha_len);
	if (!im->data || (alpha && !im->alpha))
		goto oom;
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory decoding a PNG image");
out:
	ps_buf_free(&z);
	ps_buf_free(&za);
	free(px);
	free(alpha);
	PS_X(spng_ctx_free)(sp);
	return rc;
}

/* ---- JPEG --------------------------------------------------------------- */

/* The frame header (SOF, T.81 B.2.2) of segment body P[0..N). */
static int jpeg_sof(ps_ctx *ctx, const uint8_t *p, size_t n, size_t at, ps_image *im)
{
	uint32_t nf, k;

	if (n < 6 || n != 6 + 3 * (size_t)p[5])
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "JPEG frame header (offset %zu) of a wrong length", at);
	if (p[0] != 8)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "%u-bit JPEG image: PDF readers take only 8-bit JPEG",
		              (unsigned)p[0]);
	im->h = ps_be16(p + 1);
	im->w = ps_be16(p + 3);
	nf = p[5];
	if (im->h == 0)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "JPEG image whose height is given only after its data (DNL marker)");
	if (nf != 1 && nf != 3 && nf != 4)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "JPEG image with %" PRIu32 " colour components "
		              "(1, 3 or 4 are supported)", nf);
	for (k = 0; k < nf; k++) {
		uint8_t hv = p[6 + 3 * k + 1];
		if ((hv >> 4) < 1 || (hv >> 4) > 4 || (hv & 15) < 1 || (hv & 15) > 4)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "JPEG frame header with a sampling factor out of range");
	}
	im->ncomp = (int)nf;
	return check_size(ctx, "JPEG", im->w, im->h);
}

static int load_jpeg(ps_ctx *ctx, const uint8_t *d, size_t len, ps_image *im)
{
	size_t pos = 2, seg, n;
	int sof = 0, sos = 0, eoi = 0, adobe = 0, rc;
	unsigned m;

	while (!eoi) {
		if (pos >= len)
			break;
		if (d[pos] != 0xFF)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "damaged JPEG image: no marker at offset %zu", pos);
		while (pos < len && d[pos] == 0xFF) /* fill bytes (B.1.1.2) */
			pos++;
		if (pos >= len)
			break;
		m = d[pos++];
		if (m == 0xD9) { /* EOI */
			if (!sos)
				break;
			eoi = 1;
			continue;
		}
		if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) /* TEM, RSTn: no length */
			continue;
		if (m == 0x00 || m == 0xD8)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "damaged JPEG image: marker FF %02X at offset %zu", m,
			              pos - 2);
		/* a marker segment: a 2-byte length that counts itself */
		if (len - pos < 2 || (seg = ps_be16(d + pos)) < 2 || seg > len - pos)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "truncated JPEG image: the segment of marker FF %02X at "
			              "offset %zu runs past the end of the file", m, pos - 2);
		n = seg - 2;
		switch (m) {
		case 0xC0: case 0xC1: case 0xC2: /* baseline, extended, progressive */
			if (sof)
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "JPEG image with two frame headers");
			if ((rc = jpeg_sof(ctx, d + pos + 2, n, pos - 2, im)) < 0)
				return rc;
			sof = 1;
			break;
		case 0xC3:
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			              "lossless JPEG image: PDF readers take baseline or "
			              "progressive JPEG only");
		case 0xC5: case 0xC6: case 0xC7: case 0xDE:
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			              "hierarchical JPEG image: PDF readers take baseline or "
			              "progressive JPEG only");
		case 0xC9: case 0xCA: case 0xCB: case 0xCD: case 0xCE: case 0xCF:
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			              "arithmetic-coded JPEG image: PDF readers take "
			              "Huffman-coded JPEG only");
		case 0xEE: /* APP14: "Adobe", version, flags0, flags1, transform */
			if (n >= 12 && memcmp(d + pos + 2, "Adobe", 5) == 0)
				adobe = 1;
			break;
		case 0xDA: /* SOS (B.2.3): Ns, Ns component selectors, Ss Se Ah/Al */
			if (!sof)
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "damaged JPEG image: a scan before the frame header");
			if (n < 1 || d[pos + 2] < 1 || d[pos + 2] > 4 ||
			    n != 4 + 2 * (size_t)d[pos + 2])
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "damaged JPEG image: scan header (offset %zu) of "
				              "a wrong length", pos - 2);
			sos = 1;
			pos += seg;
			/* the entropy-coded data, up to the next real marker */
			for (;;) {
				const uint8_t *ff = pos < len ? memchr(d + pos, 0xFF, len - pos)
				                              : NULL;
				if (!ff || (size_t)(ff - d) + 1 >= len) {
					pos = len;
					break;
				}
				pos = (size_t)(ff - d);
				m = d[pos + 1];
				if (m == 0x00 || (m >= 0xD0 && m <= 0xD7))
					pos += 2;
				else if (m == 0xFF)
					pos += 1;
				else
					break;
			}
			continue;
		default:
			break;
		}
		pos += seg;
	}
	if (!sof)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "truncated or damaged JPEG image: no frame header (SOF marker)");
	if (!sos)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "truncated or damaged JPEG image: no image data (SOS marker)");
	if (!eoi)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "truncated JPEG image: no end-of-image marker (EOI)");
	im->kind = IM_JPEG;
	im->cmyk_inverted = im->ncomp == 4 && adobe;
	im->data = malloc(pos);
	if (!im->data)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory loading a JPEG image");
	memcpy(im->data, d, pos);
	im->len = pos;
	return 0;
}

/* ---- the public calls ----------------------------------------------------- */

int ps_image_load(ps_ctx *ctx, const char *path, const uint8_t *data, size_t len, ps_image **out)
{
	static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
	uint8_t *file = NULL;
	ps_image *im;
	int rc;

	*out = NULL;
	if (path) {
		rc = ps_io_read_file(ctx, path, PS_IMAGE_MAX_FILE, "the image", &file, &len);
		if (rc < 0)
			return rc;
		data = file;
	} else if (!data && len) {
		return ps_err(ctx, PDFSTAMP_E_USAGE, "no image bytes");
	} else if (len > PS_IMAGE_MAX_FILE) {
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the image is larger than %u MiB",
		              (unsigned)(PS_IMAGE_MAX_FILE >> 20));
	}
	im = calloc(1, sizeof *im);
	if (!im) {
		free(file);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	if (ps_sha256_hw(0, data, len, im->sha256) != 0) {
		free(file);
		ps_image_free(im);
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "SHA-256 failed");
	}
	if (len >= 8 && memcmp(data, png_sig, 8) == 0)
		rc = load_png(ctx, data, len, im);
	else if (len >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF)
		rc = load_jpeg(ctx, data, len, im);
	else
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "not a PNG or JPEG image");
	if (rc < 0 && path)
		rc = ps_err_wrap(ctx, rc, "%s", path);
	free(file);
	if (rc < 0) {
		ps_image_free(im);
		return rc;
	}
	*out = im;
	return 0;
}

void ps_image_size(const ps_image *im, uint32_t *w, uint32_t *h)
{
	*w = im->w;
	*h = im->h;
}

void ps_image_sha256(const ps_image *im, uint8_t out[32])
{
	memcpy(out, im->sha256, 32);
}

/* An image stream of W x H with DATA[0..N) copied; NULL on OOM. */
static ps_obj *image_stream(const ps_image *im, const char *cs, const uint8_t *data, size_t n,
                            int dct)
{
	ps_obj *d = ps_new_dict();
	uint8_t *copy = malloc(n ? n : 1);

	if (!d || !copy || ps_dict_put_name(d, "Type", "XObject") < 0 ||
	    ps_dict_put_name(d, "Subtype", "Image") < 0 || ps_dict_put_int(d, "Width", im->w) < 0 ||
	    ps_dict_put_int(d, "Height", im->h) < 0 || ps_dict_put_name(d, "ColorSpace", cs) < 0 ||
	    ps_dict_put_int(d, "BitsPerComponent", 8) < 0 ||
	    ps_dict_put_name(d, "Filter", dct ? "DCTDecode" : "FlateDecode") < 0) {
		ps_obj_free(d);
		free(copy);
		return NULL;
	}
	memcpy(copy, data, n);
	return ps_new_stream(d, copy, n);
}

/* Whether object NUM of UP is still the object OBJ we put there. */
static int still_pending(const ps_update *up, uint32_t num, const ps_obj *obj)
{
	size_t i;

	for (i = 0; i < up->nobjs; i++)
		if (up->objs[i].num == num)
			return up->objs[i].obj == obj;
	return 0;
}

int ps_image_embed(ps_image *im, ps_update *up, uint32_t *num)
{
	ps_ctx *ctx = ps_doc_ctx(up->doc);
	static const char *const cs[5] = {NULL, "DeviceGray", NULL, "DeviceRGB", "DeviceCMYK"};
	ps_obj *img = NULL, *smask = NULL, *dec;
	uint32_t inum, snum = 0;
	int rc, k;

	*num = 0;
	if (im->up == up && im->up_base == up->base_len && still_pending(up, im->num, im->up_obj)) {
		*num = im->num;
		return 0;
	}
	if (im->alpha) {
		if (!(snum = ps_update_alloc(up)))
			return ctx->errcode < 0 ? ctx->errcode : PDFSTAMP_E_UNSUPPORTED;
		smask = image_stream(im, "DeviceGray", im->alpha, im->alpha_len, 0);
		if (!smask)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		if ((rc = ps_update_put(up, snum, 0, smask)) < 0)
			return rc;
	}
	if (!(inum = ps_update_alloc(up)))
		return ctx->errcode < 0 ? ctx->errcode : PDFSTAMP_E_UNSUPPORTED;
	img = image_stream(im, cs[im->ncomp], im->data, im->len, im->kind == IM_JPEG);
	if (!img)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (snum && ps_dict_put_ref(img, "SMask", snum, 0) < 0)
		goto oom;
	if (im->cmyk_inverted) { /* Adobe CMYK: stored inverted */
		if (!(dec = ps_new_array()) || ps_dict_put(img, "Decode", dec) < 0)
			goto oom;
		for (k = 0; k < 8; k++)
			if (ps_array_push(dec, ps_new_int(k % 2 ? 0 : 1)) < 0)
				goto oom;
	}
	if ((rc = ps_update_put(up, inum, 0, img)) < 0)
		return rc;
	im->up = up;
	im->up_base = up->base_len;
	im->up_obj = img;
	im->num = inum;
	*num = inum;
	return 0;
oom:
	ps_obj_free(img);
	return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
}

void ps_image_free(ps_image *im)
{
	if (!im)
		return;
	free(im->data);
	free(im->alpha);
	free(im);
}
