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
	uint64_t sum;             /* ps_rewrite_sum of the stream's plaintext (rwcheck.c note 8) */
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

/* ---- rwcheck.c: what the rewrite drops (rewrite.c design note 3) --------------- */

/* The chain's own xref streams and the linearization dictionary, sorted
 * and unique, in *OUT (malloc'ed, *N numbers). */
int ps_rewrite_dropped(ps_doc *doc, uint32_t root_num, uint32_t **out, size_t *n);
/* Is NUM in DROPPED (sorted, N numbers)? */
int ps_rewrite_is_dropped(const uint32_t *dropped, size_t n, uint32_t num);

/* ---- rwcheck.c: the self-check (rewrite.c design note 5) ------------------------ */

/* The rewritten file and what the self-check holds it to. */
struct ps_segpool;
typedef struct ps_rwcheck {
	const char *path;             /* the rewritten file */
	const char *owner;            /* the new owner password, OWNER_LEN bytes */
	size_t owner_len;
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
int ps_rewrite_check(ps_doc *doc, const ps_rwcheck *c);
/* A 64-bit checksum of N bytes at P (rwcheck.c note 8): not cryptographic,
 * for catching the rewrite's own mistakes, 6-36 GB/s; CPU (ps_cpu_bits)
 * picks the kernel (PS_CPU_AVX2 or the baseline), not the result. */
uint64_t ps_rewrite_sum(unsigned cpu, const uint8_t *p, size_t n);

/* ---- rwcheck.c: the sequential reader (rwcheck.c note 4) ------------------------ */

/* A run of a document's file read with one pread.  Reference counted by
 * its users, all on one thread.  Its buffer comes from the reader's pool
 * (rwcheck.c note 6), which lives as long as the reader or any segment. */
typedef struct ps_seg {
	uint8_t *data;
	size_t cap;               /* bytes allocated at data */
	int refs;
	struct ps_segpool *pool;
} ps_seg;
void ps_seg_release(ps_seg *s);   /* drops one reference; NULL is fine */

typedef struct ps_seq_item {
	int64_t off;
	uint32_t num;
} ps_seq_item;

/* The objects of a document's body (type 1 entries), in file order. */
typedef struct ps_seqread {
	ps_doc *doc;
	int64_t size;          /* its size (ps_doc_size): where the last item ends */
	ps_seq_item *it;
	size_t n, i, k;        /* items; the next one; the end of the segment's */
	ps_seg *seg;           /* the current segment (NULL: its items go the careful way) */
	int64_t start, got;    /* the file offset of seg->data[0], the bytes it holds */
	struct ps_segpool *pool;
} ps_seqread;

/* An object as the reader hands it out. */
typedef struct ps_seq_obj {
	uint32_t num;
	int64_t off, end;      /* its bytes in the file (end: where the next object starts) */
	ps_seg *seg;           /* the segment holding them (one reference
	                        * for the holder), or NULL */
	int64_t start;         /* the file offset of seg->data[0] */
} ps_seq_obj;

/* Lists DOC's type-1 objects but those SKIP (may be NULL) says 1 for, by
 * offset; the segments' buffers come from POOL (a reference is taken),
 * or from a pool of the reader's own when it is NULL.  0 or
 * PDFSTAMP_E_NOMEM; ps_seq_close in either case. */
int ps_seq_open(ps_seqread *r, ps_doc *doc, struct ps_segpool *pool,
                int (*skip)(void *ud, uint32_t num), void *ud);
/* R's pool, with a reference for the caller (ps_segpool_unref), to hand
 * its buffers to a later reader on the same thread (rwcheck.c note 6). */
struct ps_segpool *ps_seq_pool(ps_seqread *r);
void ps_segpool_unref(struct ps_segpool *p); /* NULL is fine */
/* The next object, in file order: 1 (0 at the end, or an error).  O->seg
 * is NULL when the object has no segment (rwcheck.c note 5): the caller
 * reads it the careful way (ps_doc_parse_at, ps_doc_load). */
int ps_seq_next(ps_seqread *r, ps_seq_obj *o);
/* Parses O from its segment (touches no document: any thread may call
 * it).  *OBJ is the object (owned, strings as in the file); for a stream,
 * *DATA and *LEN are its data in the segment.  *OBJ is NULL when the
 * object cannot be taken from there (it does not parse within its own
 * bytes, another number is there, its /Length is indirect or its data lies
 * beyond its bytes): the careful way then, which also words the errors.
 * The object's memory comes from AR (obj.c note 9; NULL: malloc). */
void ps_seq_parse(ps_ctx *ctx, ps_arena *ar, const ps_seq_obj *o, ps_obj **obj, uint8_t **data,
                  size_t *len);
void ps_seq_close(ps_seqread *r);

#endif
