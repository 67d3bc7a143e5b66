/* SPDX-License-Identifier: Apache-2.0 */
/*
 * flate.c - zlib glue: inflate with a size cap, deflate, PNG predictors.
 *
 * Invariants: output never exceeds the caller's cap (decompression bombs
 * become a FORMAT error, not an allocation of gigabytes); a stream that
 * ends early is an error, trailing bytes after Z_STREAM_END are ignored as
 * most readers do.
 *
 * One decoder, ps_flate_reader, does FlateDecode with its PNG predictor
 * (ISO 32000-2 7.4.4.4) as far as it is asked: ps_flate_decode and
 * ps_inflate run it to the end, xrefsec.c runs an xref stream's only up to
 * the entries a lookup needs (a stamp on a file of 400,000 objects reads
 * the first few, not 3 MB).  It inflates in chunks of CHUNK bytes, or
 * of what is still wanted when that is less (at least FILL_MIN: zlib
 * fills whatever room it is given, and a lookup that wants a few
 * entries should not pay for 64 KB of them); with a
 * predictor, whole rows are undone as they arrive (png_row, the one row
 * decoder), a partial row waits for the
 * next chunk, and a stream that ends inside a row is a FORMAT error.  A
 * fill that failed leaves the reader refusing every later fill (its state
 * is not resumable: rows half taken, zlib's own error); rows longer than
 * the cap are refused at once.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ps.h"

#define CHUNK 65536
#define FILL_MIN 4096

struct ps_flate_reader {
	z_stream zs;
	const uint8_t *in;       /* borrowed: the caller keeps it until the free */
	size_t n, fed;           /* its length, and what zlib was given of it */
	size_t max_out, got;     /* the cap and what was inflated (before the predictor) */
	int ended;               /* Z_STREAM_END seen */
	size_t rowlen, bpp;      /* a PNG predictor: the decoded row, bytes per pixel */
	uint8_t *prev;           /* the previous decoded row (rowlen bytes,
	                          * zero before the first) */
	ps_buf pend;             /* inflated bytes of rows not yet whole */
	int failed;              /* a fill failed: the state is not resumable,
	                          * every later fill fails */
};

static int predictor(ps_ctx *ctx, const ps_obj *parms, size_t *rowlen, size_t *bpp)
{
	int64_t pred = 1, colors = 1, bpc = 8, cols = 1;

	*rowlen = *bpp = 0;
	if (parms && parms->kind == PS_DICT) {
		ps_obj_int(ps_dict_get(parms, "Predictor"), &pred);
		ps_obj_int(ps_dict_get(parms, "Colors"), &colors);
		ps_obj_int(ps_dict_get(parms, "BitsPerComponent"), &bpc);
		ps_obj_int(ps_dict_get(parms, "Columns"), &cols);
	}
	if (pred != 1 && pred < 10)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "predictor %lld is not supported",
		              (long long)pred);
	if (pred < 10)
		return 0;
	if (colors < 1 || colors > 32 || cols < 1 || cols > (1 << 24) ||
	    (bpc != 1 && bpc != 2 && bpc != 4 && bpc != 8 && bpc != 16))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "bad predictor parameters");
	*bpp = ((size_t)colors * (size_t)bpc + 7) / 8;
	*rowlen = ((size_t)colors * (size_t)bpc * (size_t)cols + 7) / 8;
	return 0;
}

int ps_flate_reader_new(ps_ctx *ctx, const ps_obj *parms, const uint8_t *in, size_t n,
                        size_t max_out, ps_flate_reader **out)
{
	ps_flate_reader *r;
	int rc;

	*out = NULL;
	if (!(r = calloc(1, sizeof *r)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if ((rc = predictor(ctx, parms, &r->rowlen, &r->bpp)) < 0) {
		free(r);
		return rc;
	}
	if (r->rowlen && r->rowlen >= max_out) { /* not one whole row could arrive */
		size_t rowlen = r->rowlen;
		free(r);
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "predictor rows of %zu bytes are longer than the stream may inflate",
		              rowlen);
	}
	if (r->rowlen && !(r->prev = calloc(1, r->rowlen))) {
		free(r);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	if (inflateInit(&r->zs) != Z_OK) {
		free(r->prev);
		free(r);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "cannot initialise zlib");
	}
	r->in = in;
	r->n = n;
	r->max_out = max_out;
	r->zs.next_in = (Bytef *)(uintptr_t)in;
	*out = r;
	return 0;
}

void ps_flate_reader_free(ps_flate_reader *r)
{
	if (!r)
		return;
	inflateEnd(&r->zs);
	free(r->prev);
	ps_buf_free(&r->pend);
	free(r);
}

int ps_flate_reader_done(const ps_flate_reader *r)
{
	return r->ended;
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c;
	int pa = p > a ? p - a : a - p;
	int pb = p > b ? p - b : b - p;
	int pc = p > c ? p - c : c - p;

	if (pa <= pb && pa <= pc)
		return a;
	return pb <= pc ? b : c;
}

/* Undoes the PNG predictor (ISO 32000-2 7.4.4.4, PNG filter types 0-4) of
 * one row: TYPE, then ROWLEN bytes at ROW, in place; PREV is the previous
 * decoded row (NULL: none). */
static int png_row(ps_ctx *ctx, int type, uint8_t *row, const uint8_t *prev, size_t rowlen,
                   size_t bpp)
{
	size_t i;

	if (type < 0 || type > 4)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "bad PNG predictor row type %d", type);
	for (i = 0; i < rowlen; i++) {
		int a = i >= bpp ? row[i - bpp] : 0;
		int b = prev ? prev[i] : 0;
		int c = (prev && i >= bpp) ? prev[i - bpp] : 0;
		switch (type) {
		case 1: row[i] = (uint8_t)(row[i] + a); break;
		case 2: row[i] = (uint8_t)(row[i] + b); break;
		case 3: row[i] = (uint8_t)(row[i] + ((a + b) >> 1)); break;
		case 4: row[i] = (uint8_t)(row[i] + paeth(a, b, c)); break;
		default: break;
		}
	}
	return 0;
}

/* The whole rows of r->pend, decoded onto OUT. */
static int take_rows(ps_ctx *ctx, ps_flate_reader *r, ps_buf *out)
{
	size_t at = 0, step = r->rowlen + 1;
	int rc;

	while (r->pend.len - at >= step) {
		uint8_t *row = r->pend.data + at;
		if ((rc = png_row(ctx, row[0], row + 1, r->prev, r->rowlen, r->bpp)) < 0)
			return rc;
		memcpy(r->prev, row + 1, r->rowlen);
		ps_buf_append(out, row + 1, r->rowlen);
		at += step;
	}
	memmove(r->pend.data, r->pend.data + at, r->pend.len - at);
	r->pend.len -= at;
	return out->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory inflating a stream") : 0;
}

static int fill(ps_ctx *ctx, ps_flate_reader *r, size_t want, ps_buf *out);

int ps_flate_reader_fill(ps_ctx *ctx, ps_flate_reader *r, size_t want, ps_buf *out)
{
	int rc;

	if (r->failed)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "compressed stream is damaged (reported before)");
	if ((rc = fill(ctx, r, want, out)) < 0)
		r->failed = 1;
	return rc;
}

static int fill(ps_ctx *ctx, ps_flate_reader *r, size_t want, ps_buf *out)
{
	z_stream *zs = &r->zs;
	int zr, rc;

	while (out->len < want && !r->ended) {
		ps_buf *dst = r->rowlen ? &r->pend : out;
		size_t chunk = want - out->len < CHUNK ? want - out->len : CHUNK;

		if (chunk < FILL_MIN)
			chunk = FILL_MIN;
		if (r->max_out - r->got < chunk)
			chunk = r->max_out - r->got + 1; /* one byte past the cap shows a bomb */
		uInt avail_in_before;

		if (zs->avail_in == 0 && r->fed < r->n) {
			size_t take = r->n - r->fed > (1u << 30) ? (1u << 30) : r->n - r->fed;
			zs->next_in = (Bytef *)(uintptr_t)(r->in + r->fed);
			zs->avail_in = (uInt)take;
			r->fed += take;
		}
		if (ps_buf_reserve(dst, chunk) < 0)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory inflating a stream");
		zs->next_out = dst->data + dst->len;
		zs->avail_out = (uInt)chunk;
		avail_in_before = zs->avail_in;
		zr = inflate(zs, Z_NO_FLUSH);
		dst->len += chunk - zs->avail_out;
		r->got += chunk - zs->avail_out;
		if (r->got > r->max_out)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "compressed stream inflates past %zu bytes", r->max_out);
		if (zr == Z_STREAM_END)
			r->ended = 1;
		else if (zr == Z_BUF_ERROR && zs->avail_in == 0 && r->fed == r->n)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "compressed stream is truncated");
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "corrupt compressed stream (%s)",
			              zs->msg ? zs->msg : "zlib error");
		else if (zr == Z_BUF_ERROR && zs->avail_in == avail_in_before &&
		         zs->avail_out > 0 && r->fed == r->n)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "compressed stream is truncated");
		if (r->rowlen && (rc = take_rows(ctx, r, out)) < 0)
			return rc;
	}
	if (r->ended && r->rowlen && r->pend.len)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "predicted data is not a whole number of rows");
	return 0;
}

int ps_inflate(ps_ctx *ctx, const uint8_t *in, size_t n, size_t max_out, ps_buf *out)
{
	return ps_flate_decode(ctx, NULL, in, n, max_out, out);
}

int ps_deflate(ps_ctx *ctx, const uint8_t *in, size_t n, int level, ps_buf *out)
{
	z_stream zs;
	int zr, rc = 0;
	size_t start = out->len;
	uLong bound;

	if (n > (1u << 30))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "stream too large to deflate in one piece");
	memset(&zs, 0, sizeof zs);
	if (deflateInit(&zs, level) != Z_OK)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "cannot initialise zlib");
	bound = deflateBound(&zs, (uLong)n);
	if (ps_buf_reserve(out, bound) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory deflating a stream");
		goto out;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out->data + out->len;
	zs.avail_out = (uInt)bound;
	zr = deflate(&zs, Z_FINISH);
	if (zr != Z_STREAM_END) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "deflate failed");
		goto out;
	}
	out->len += bound - zs.avail_out;
out:
	deflateEnd(&zs);
	if (rc < 0)
		out->len = start;
	return rc;
}

int ps_flate_decode(ps_ctx *ctx, const ps_obj *parms, const uint8_t *in, size_t n, size_t max_out,
                    ps_buf *out)
{
	ps_flate_reader *r;
	size_t start = out->len;
	int rc;

	if ((rc = ps_flate_reader_new(ctx, parms, in, n, max_out, &r)) < 0)
		return rc;
	rc = ps_flate_reader_fill(ctx, r, SIZE_MAX, out);
	ps_flate_reader_free(r);
	if (rc < 0)
		out->len = start;
	return rc;
}
