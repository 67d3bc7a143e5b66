/* flate.h - internal: FlateDecode (conventions: ps.h). */
#ifndef PS_FLATE_H
#define PS_FLATE_H

#include "ps.h"

/* ---- flate.c -------------------------------------------------------------- */

/* Inflates a zlib stream, appending to OUT; output beyond MAX_OUT bytes is a
 * FORMAT error (decompression bombs).  A truncated stream is a FORMAT error. */
int ps_inflate(ps_ctx *ctx, const uint8_t *in, size_t n, size_t max_out, ps_buf *out);
/* FlateDecode with its /DecodeParms (PARMS may be NULL): inflate, then undo
 * a PNG predictor (10-15); TIFF predictor 2 is UNSUPPORTED. */
int ps_flate_decode(ps_ctx *ctx, const ps_obj *parms, const uint8_t *in, size_t n, size_t max_out, ps_buf *out);
/* Deflates IN (zlib format) at LEVEL (0-9), appending to OUT. */
int ps_deflate(ps_ctx *ctx, const uint8_t *in, size_t n, int level, ps_buf *out);
/* Undoes a PNG predictor (/Predictor 10-15) in place: DATA holds rows of
 * 1 + COLUMNS*COLORS*BPC/8 bytes; on return *LEN is the decoded length. */
int ps_png_unpredict(ps_ctx *ctx, uint8_t *data, size_t *len, int colors, int bpc, int columns);

#endif
