/* SPDX-License-Identifier: Apache-2.0 */
/* seqread.h - internal: the sequential reader, a document's objects in
 * file order from large reads (seqread.c; conventions: ps.h).  The full
 * rewrite reads its input with it, and its self-check the output. */
#ifndef PS_SEQREAD_H
#define PS_SEQREAD_H

#include "ps.h"

struct ps_segpool;

/* A run of a document's file read with one pread.  Reference counted by
 * its users, all on one thread.  Its buffer comes from the reader's pool
 * (seqread.c note 2), which lives as long as the reader or any segment. */
typedef struct ps_seg {
	uint8_t *data;
	size_t cap;               /* bytes allocated at data */
	int refs;
	struct ps_segpool *pool;
} ps_seg;
void ps_seq_seg_release(ps_seg *s);   /* drops one reference; NULL is fine */

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
	ps_seg *seg;           /* the segment holding them (a reference for the holder), or NULL */
	int64_t start;         /* the file offset of seg->data[0] */
} ps_seq_obj;

/* Lists DOC's type-1 objects but those SKIP (may be NULL) says 1 for, by
 * offset; the segments' buffers come from POOL (a reference is taken),
 * or from a pool of the reader's own when it is NULL.  0 or
 * PDFSTAMP_E_NOMEM; ps_seq_close in either case. */
int ps_seq_open(ps_seqread *r, ps_doc *doc, struct ps_segpool *pool,
                int (*skip)(void *ud, uint32_t num), void *ud);
/* R's pool, with a reference for the caller (ps_seq_pool_unref), to hand
 * its buffers to a later reader on the same thread (seqread.c note 2). */
struct ps_segpool *ps_seq_pool(ps_seqread *r);
void ps_seq_pool_unref(struct ps_segpool *p); /* NULL is fine */
/* The next object, in file order: 1 (0 at the end, or an error).  O->seg
 * is NULL when the object has no segment (seqread.c note 1): the caller
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
