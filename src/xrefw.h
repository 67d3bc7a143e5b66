/* SPDX-License-Identifier: Apache-2.0 */
/* xrefw.h - internal: the cross-reference writer (conventions: ps.h; the
 * design notes are atop xrefw.c). */
#ifndef PS_XREFW_H
#define PS_XREFW_H

#include "ps.h"

/* ---- xrefw.c: the one writer of cross-reference sections ------------------------ */

/* The largest offset a classic cross-reference entry can hold (10 digits). */
#define PS_MAX_TABLE_OFFSET INT64_C(9999999999)

/* One entry (ISO 32000-2 7.5.8.3, Table 18). */
typedef struct ps_xrefw_ent {
	uint32_t num;
	uint8_t type;     /* 0 free, 1 in use, 2 compressed */
	uint64_t f2;      /* 1: byte offset; 2: the object stream's number; 0: next free number */
	uint32_t f3;      /* 1, 0: generation; 2: index in the object stream */
} ps_xrefw_ent;

/* Where the entries come from: START rewinds to the lowest number, NEXT
 * fills *E with the next entry (numbers strictly ascending) and returns 1,
 * or returns 0 at the end.  The writer may walk the entries more than once
 * (an xref stream sizes /W first), so they must not change in between. */
typedef struct ps_xrefw_src {
	void (*start)(void *ud);
	int (*next)(void *ud, ps_xrefw_ent *e);
	void *ud;
} ps_xrefw_src;

/* A source over an array of N entries sorted by number (borrowed). */
typedef struct ps_xrefw_array {
	const ps_xrefw_ent *ents;
	size_t n, i;
} ps_xrefw_array;
void ps_xrefw_src_array(ps_xrefw_src *src, ps_xrefw_array *a, const ps_xrefw_ent *ents, size_t n);

/* Appends to OUT one cross-reference section whose first byte lands at
 * offset XREF_OFF of the file, then "startxref XREF_OFF %%EOF".
 * STREAM 0: "xref", a subsection per run of consecutive numbers, "trailer"
 * and TRAILER as given (7.5.4, 7.5.5); a type 2 entry or an XREF_OFF past
 * PS_MAX_TABLE_OFFSET is refused.  STREAM 1: object SELF_NUM, an xref
 * stream (7.5.8) whose dictionary is TRAILER's keys then /W (widths fitted
 * to the largest fields; field 3 at least 2 bytes), /Index (unless the one
 * run is 0../Size-1), /Type /XRef (in place if TRAILER has it), /Filter
 * /FlateDecode and /Length; SRC must list SELF_NUM itself, type 1 at
 * XREF_OFF.  TRAILER (/Size, /Root, /Prev, /Info, /Encrypt, /ID as the
 * caller wants them) is not changed. */
int ps_xrefw_write(ps_ctx *ctx, const ps_xrefw_src *src, const ps_obj *trailer, int stream,
                   uint32_t self_num, int64_t xref_off, ps_buf *out);
/* The full rewrite's xref form: 1 (a stream) when members of object
 * streams are carried over or when XREF_OFFSET, which bounds every object
 * offset, exceeds PS_MAX_TABLE_OFFSET; else 0 (a classic table). */
int ps_xrefw_form(int has_compressed, int64_t xref_offset);

#endif
