/* SPDX-License-Identifier: Apache-2.0 */
/* flate.h - internal: FlateDecode (conventions: ps.h). */
#ifndef PS_FLATE_H
#define PS_FLATE_H

#include "ps.h"

/* ---- flate.c -------------------------------------------------------------- */

/* FlateDecode with its /DecodeParms (PARMS may be NULL): inflate, then undo
 * a PNG predictor (10-15); TIFF predictor 2 is UNSUPPORTED. */
int ps_flate_decode(ps_ctx *ctx, const ps_obj *parms, const uint8_t *in, size_t n, size_t max_out,
                    ps_buf *out);
/* A FlateDecode stream (with PARMS' PNG predictor) decoded as far as it is
 * asked (flate.c): IN, N bytes, is borrowed until the free; more than
 * MAX_OUT inflated bytes is a FORMAT error.  fill appends to OUT until it
 * holds WANT bytes or the stream ends (done: 1), and may append a little
 * more; it fails on a corrupt, truncated or badly predicted stream as
 * ps_flate_decode does.  free accepts NULL. */
typedef struct ps_flate_reader ps_flate_reader;
int ps_flate_reader_new(ps_ctx *ctx, const ps_obj *parms, const uint8_t *in, size_t n,
                        size_t max_out, ps_flate_reader **out);
int ps_flate_reader_fill(ps_ctx *ctx, ps_flate_reader *r, size_t want, ps_buf *out);
int ps_flate_reader_done(const ps_flate_reader *r);
void ps_flate_reader_free(ps_flate_reader *r);
/* Deflates IN (zlib format) at LEVEL (0-9), appending to OUT. */
int ps_deflate(ps_ctx *ctx, const uint8_t *in, size_t n, int level, ps_buf *out);

/* ---- for the tests and the fuzz targets (which read what was written) ---- */

/* Inflates a zlib stream, appending to OUT; output beyond MAX_OUT bytes is a
 * FORMAT error (decompression bombs).  A truncated stream is a FORMAT error. */
int ps_inflate(ps_ctx *ctx, const uint8_t *in, size_t n, size_t max_out, ps_buf *out);

#endif
