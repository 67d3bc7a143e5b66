/* SPDX-License-Identifier: Apache-2.0 */
/* qr.h - internal: QR codes for stamps, encoded by libqrencode (opened by
 * extlib.c) and drawn as vector paths (conventions: ps.h).  Only stamp.c
 * uses it. */
#ifndef PS_QR_H
#define PS_QR_H

#include "ps.h"

typedef struct ps_qr ps_qr;

#define PS_QR_QUIET 4          /* light modules around the symbol, each side (qr.c note 3) */
#define PS_QR_MIN_MODULE 1.5   /* points: the smallest module that scans at 150 dpi (note 4) */

/* Encodes the LEN bytes of UTF-8 at S at LEVEL into *OUT.  An empty
 * string, one that is not UTF-8, an unknown level or a string too long
 * for LEVEL (naming the limit) is PDFSTAMP_E_USAGE; libqrencode missing is
 * PDFSTAMP_E_IO (extlib.c note 3).  Writes nothing. */
int ps_qr_encode(ps_ctx *ctx, const char *s, size_t len, enum pdfstamp_qr_level level,
                 ps_qr **out);

/* Modules on a side, the quiet zone included. */
uint32_t ps_qr_modules(const ps_qr *q);

/* Appends to C the content-stream fragment that draws the symbol with its
 * quiet zone as the square of SIDE points whose lower left corner is X, Y
 * (note 3): balanced in q/Q, graphics state restored. */
void ps_qr_draw(const ps_qr *q, double x, double y, double side, ps_buf *c);

void ps_qr_free(ps_qr *q);

#endif
