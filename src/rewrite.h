/* rewrite.h - internal: the full rewrite (conventions: ps.h). */
#ifndef PS_REWRITE_H
#define PS_REWRITE_H

#include "ps.h"

/* ---- rewrite.c ------------------------------------------------------------------ */

/* The largest offset a classic cross-reference entry can hold (10 digits). */
#define PS_MAX_TABLE_OFFSET INT64_C(9999999999)
/* The full rewrite's xref form: 1 (a stream) when members of object
 * streams are carried over or when XREF_OFFSET, which bounds every object
 * offset, exceeds PS_MAX_TABLE_OFFSET; else 0 (a classic table). */
int ps_rewrite_xref_form(int has_compressed, int64_t xref_offset);

#endif
