/* SPDX-License-Identifier: Apache-2.0 */
/* date.h - internal: dates (date.c; conventions: ps.h). */
#ifndef PS_DATE_H
#define PS_DATE_H

#include "ps.h"

/* A moment: seconds since the epoch (UTC) and the local offset in minutes. */
typedef struct ps_time {
	int64_t t;
	int tzoff;   /* minutes east of UTC */
} ps_time;

/* Parses "now" (the current time, local offset) or ISO 8601:
 * YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM|-HH:MM] (no zone = UTC). */
int ps_time_parse(ps_ctx *ctx, const char *s, ps_time *out);
/* A PDF date string's bytes P[0..N) (ISO 32000-2 7.9.4: [D:]YYYY and the
 * optional fields after it, an offset Z, +HH'mm' or -HH'mm'; missing
 * fields take their defaults, no offset is UTC) into *OUT: 0, or -1 for
 * anything else (no context: a file's date that does not parse is no
 * error of its reader's). */
int ps_time_parse_pdf(const uint8_t *p, size_t n, ps_time *out);
/* D:YYYYMMDDHHmmSS+HH'mm' (or Z), 32 bytes are enough. */
void ps_time_pdf(const ps_time *tm, char out[32]);
/* YYYY-MM-DDTHH:MM:SS+HH:MM (or Z), for XMP. */
void ps_time_iso(const ps_time *tm, char out[32]);
/* Appends strftime(3) of TM in its own offset with FMT to OUT; a result
 * over 500 bytes is PDFSTAMP_E_USAGE. */
int ps_time_format(ps_ctx *ctx, const ps_time *tm, const char *fmt, ps_buf *out);

#endif
