/* SPDX-License-Identifier: Apache-2.0 */
/* rewrite.h - internal: the full rewrite (conventions: ps.h). */
#ifndef PS_REWRITE_H
#define PS_REWRITE_H

#include "ps.h"

/* ---- rewrite.c ------------------------------------------------------------------ */

/* Its entry points are public (pdfstamp.h); the choice of the output's
 * xref form is xrefw.h's ps_xrefw_form. */

/* ---- rwxref.c: the objects written and the output's xref (rwxref.c notes) ------ */

/* Where the output has object NUM (generation GEN). */
typedef struct ps_rwoff {
	uint32_t num;
	uint16_t gen;
	uint8_t summed;           /* its stream data was encrypted: SUM is its plaintext's */
	int64_t off;
	uint64_t sum;             /* ps_rwcheck_sum of the stream's plaintext (rwcheck.c note 8) */
} ps_rwoff;
/* One row per object written, in file order, then sorted by number. */
typedef struct ps_rwoffs {
	ps_rwoff *v;
	size_t n, cap;
} ps_rwoffs;
/* Room for CAP rows (never more: note 1).  0 or PDFSTAMP_E_NOMEM. */
int ps_rwoffs_init(ps_ctx *ctx, ps_rwoffs *t, size_t cap);
void ps_rwoffs_free(ps_rwoffs *t);
/* Object NUM starts at output offset OFF (not summed); PDFSTAMP_E_INTERNAL
 * if T is full. */
int ps_rwoffs_add(ps_ctx *ctx, ps_rwoffs *t, uint32_t num, uint16_t gen, int64_t off);
/* Sorts T by number; PDFSTAMP_E_INTERNAL if an object was written twice. */
int ps_rwoffs_sort(ps_ctx *ctx, ps_rwoffs *t);
/* The row of object NUM among N rows at V sorted by number, or NULL. */
const ps_rwoff *ps_rwoffs_find(const ps_rwoff *v, size_t n, uint32_t num);
/* Appends to OUT the output's trailer and cross-reference section (xrefw.c
 * ps_xrefw_write; STREAM_FORM as ps_xrefw_form chose) at output offset
 * XOFF: the rows of T (sorted), object 0, and in an xref stream DOC's
 * carried-over members and the stream itself (added to T).  ENC_NUM is
 * the new /Encrypt, the highest number but the xref stream's; ID the new
 * /ID.  0 or a negative error. */
int ps_rwxref_write(ps_ctx *ctx, const ps_doc *doc, ps_rwoffs *t, uint32_t enc_num,
                    const uint8_t id[16], int stream_form, int64_t xoff, ps_buf *out);

/* ---- rwdrop.c: what the rewrite drops (rewrite.c design note 3) ---------------- */

/* The chain's own xref streams and the linearization dictionary, sorted
 * and unique, in *OUT (malloc'ed, *N numbers). */
int ps_rwdrop_list(ps_doc *doc, uint32_t root_num, uint32_t **out, size_t *n);
/* Is NUM in DROPPED (sorted, N numbers)? */
int ps_rwdrop_has(const uint32_t *dropped, size_t n, uint32_t num);

/* ---- rwcheck.c: the self-check (rewrite.c design note 5) ------------------------ */

/* The rewritten file and what the self-check holds it to. */
struct ps_segpool;
typedef struct ps_rwcheck {
	const char *path;             /* the rewritten file */
	const char *owner;            /* the new owner password, OWNER_LEN bytes */
	size_t owner_len;
	const uint8_t *seed;          /* or, for an output encrypted to certificates, the seed of
	                               * its handler (pubsec.h); NULL otherwise */
	const uint32_t *dropped;      /* the input's numbers the rewrite dropped, sorted */
	size_t ndropped;
	uint32_t enc_num;             /* the new /Encrypt */
	int jobs;                     /* threads (rwcheck.c note 7) */
	const ps_rwoff *sums;         /* NSUMS rows sorted by number, or NULL: the objects
	                               * written, each stream whose data was encrypted with its
	                               * plaintext's sum (note 8) */
	size_t nsums;
	struct ps_segpool *pool;      /* segment buffers to reuse (the
	                               * rewrite's: note 6), or NULL */
} ps_rwcheck;
/* Checks the rewritten file C->path against its input DOC before it
 * replaces anything (rwcheck.c note 1): opened with the new owner
 * password, verified, its live objects those of DOC less its /Encrypt and
 * C->dropped plus C->enc_num and its own xref stream, its page tree the
 * input's, its streams' plaintexts the sums'.  0, or PDFSTAMP_E_FORMAT if
 * the input is damaged, else PDFSTAMP_E_INTERNAL (rwcheck.c note 2). */
int ps_rwcheck_run(ps_doc *doc, const ps_rwcheck *c);
/* A 64-bit checksum of N bytes at P (rwcheck.c note 8): not cryptographic,
 * for catching the rewrite's own mistakes, 6-36 GB/s; CPU (ps_cpu_bits)
 * picks the kernel (PS_CPU_AVX2 or the baseline), not the result. */
uint64_t ps_rwcheck_sum(unsigned cpu, const uint8_t *p, size_t n);

#endif
