/*
 * flate.c - zlib glue: inflate with a size cap, deflate, PNG predictors.
 *
 * Invariants: output never exceeds the caller's cap (decompression bombs
 * become a FORMAT error, not an allocation of gigabytes); a stream that
 * ends early is an error, trailing bytes after Z_STREAM_END are ignored as
 * most readers do.
 */
#include "config.h"

#include <string.h>
#include <zlib.h>

#include "ps.h"

int ps_inflate(ps_ctx *ctx, const uint8_t *in, size_t n, size_t max_out, ps_buf *out)
{
	z_stream zs;
	int zr, rc = 0;
	size_t start = out->len;

	memset(&zs, 0, sizeof zs);
	if (inflateInit(&zs) != Z_OK)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "cannot initialise zlib");
	zs.next_in = (Bytef *)(uintptr_t)in;
	for (;;) {
		size_t chunk;
		uInt avail_in_before;

		if (zs.avail_in == 0 && n > 0) {
			size_t take = n > (1u << 30) ? (1u << 30) : n;
			zs.avail_in = (uInt)take;
			n -= take;
		}
		chunk = out->len - start + 65536 > max_out ? max_out - (out->len - start) + 1 : 65536;
		if (chunk == 0 || out->len - start > max_out) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "compressed stream inflates past %zu bytes", max_out);
			goto out;
		}
		if (ps_buf_reserve(out, chunk) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory inflating a stream");
			goto out;
		}
		zs.next_out = out->data + out->len;
		zs.avail_out = (uInt)chunk;
		avail_in_before = zs.avail_in;
		zr = inflate(&zs, Z_NO_FLUSH);
		out->len += chunk - zs.avail_out;
		if (out->len - start > max_out) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "compressed stream inflates past %zu bytes", max_out);
			goto out;
		}
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_BUF_ERROR && zs.avail_in == 0 && n == 0) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "compressed stream is truncated");
			goto out;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "corrupt compressed stream (%s)",
			            zs.msg ? zs.msg : "zlib error");
			goto out;
		}
		if (zr == Z_BUF_ERROR && zs.avail_in == avail_in_before && zs.avail_out > 0 && n == 0) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "compressed stream is truncated");
			goto out;
		}
	}
out:
	inflateEnd(&zs);
	if (rc < 0)
		out->len = start;
	return rc;
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

int ps_png_unpredict(ps_ctx *ctx, uint8_t *data, size_t *len, int colors, int bpc, int columns)
{
	size_t bpp, rowlen, in, outp = 0, nrows, r, i;
	uint8_t *prev = NULL;

	if (colors < 1 || colors > 32 || columns < 1 || columns > (1 << 24) ||
	    (bpc != 1 && bpc != 2 && bpc != 4 && bpc != 8 && bpc != 16))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "unsupported PNG predictor parameters");
	bpp = ((size_t)colors * (size_t)bpc + 7) / 8;
	rowlen = ((size_t)colors * (size_t)bpc * (size_t)columns + 7) / 8;
	if (*len % (rowlen + 1) != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "predicted data is not a whole number of rows");
	nrows = *len / (rowlen + 1);
	for (r = 0, in = 0; r < nrows; r++) {
		uint8_t type = data[in++];
		uint8_t *row = data + outp;

		/* The decoded row is written over the bytes just consumed (outp <= in). */
		memmove(row, data + in, rowlen);
		in += rowlen;
		for (i = 0; i < rowlen; i++) {
			int a = i >= bpp ? row[i - bpp] : 0;
			int b = prev ? prev[i] : 0;
			int c = (prev && i >= bpp) ? prev[i - bpp] : 0;
			switch (type) {
			case 0: break;
			case 1: row[i] = (uint8_t)(row[i] + a); break;
			case 2: row[i] = (uint8_t)(row[i] + b); break;
			case 3: row[i] = (uint8_t)(row[i] + ((a + b) >> 1)); break;
			case 4: row[i] = (uint8_t)(row[i] + paeth(a, b, c)); break;
			default:
				return ps_err(ctx, PDFSTAMP_E_FORMAT, "bad PNG predictor row type %u", type);
			}
		}
		prev = row;
		outp += rowlen;
	}
	*len = outp;
	return 0;
}

int ps_flate_decode(ps_ctx *ctx, const ps_obj *parms, const uint8_t *in, size_t n, size_t max_out, ps_buf *out)
{
	int64_t pred = 1, colors = 1, bpc = 8, cols = 1;
	size_t start = out->len, len;
	int rc;

	if (parms && parms->kind == PS_DICT) {
		ps_obj_int(ps_dict_get(parms, "Predictor"), &pred);
		ps_obj_int(ps_dict_get(parms, "Colors"), &colors);
		ps_obj_int(ps_dict_get(parms, "BitsPerComponent"), &bpc);
		ps_obj_int(ps_dict_get(parms, "Columns"), &cols);
	}
	if (pred != 1 && pred < 10)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "predictor %lld is not supported", (long long)pred);
	if (pred >= 10 && (colors < 1 || colors > 32 || bpc < 1 || bpc > 16 || cols < 1 || cols > (1 << 24)))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "bad predictor parameters");
	if ((rc = ps_inflate(ctx, in, n, max_out, out)) < 0)
		return rc;
	if (pred < 10)
		return 0;
	len = out->len - start;
	if ((rc = ps_png_unpredict(ctx, out->data + start, &len, (int)colors, (int)bpc, (int)cols)) < 0) {
		out->len = start;
		return rc;
	}
	out->len = start + len;
	return 0;
}
