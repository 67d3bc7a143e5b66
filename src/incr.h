/* SPDX-License-Identifier: Apache-2.0 */
/* incr.h - internal: the incremental writer (conventions: ps.h). */
#ifndef PS_INCR_H
#define PS_INCR_H

#include "ps.h"
#include "doc.h"

/* ---- incr.c: the incremental writer ---------------------------------------- */

typedef struct ps_newobj {
	uint32_t num;
	uint16_t gen;
	ps_obj *obj;      /* plaintext; owned */
} ps_newobj;

typedef enum { PS_UP_OPEN = 0, PS_UP_DONE, PS_UP_FAILED } ps_up_state;

typedef struct ps_update ps_update;
struct ps_update {
	ps_doc *doc;
	struct ps_doc_security ds;   /* its security state (doc.h), taken at begin */
	int64_t base_len;         /* L: the input's length; nothing before it is touched */
	uint32_t next_num;        /* next object number to hand out */
	uint32_t first_num;       /* the first one handed out (the numbers below are the file's) */
	uint32_t *skip;           /* numbers >= first_num that objects read so far name (sorted) */
	size_t nskip;
	int skip_ready;           /* skip made (at the first ps_update_alloc) */
	ps_newobj *objs;
	size_t nobjs, cap;
	ps_obj *trailer_set;      /* keys to set in the new trailer (e.g. /Info); owned dict */
	ps_up_state state;
	/* Set by the caller after ps_update_begin, or NULL: called by
	 * ps_update_commit once the section SEC is built and before anything
	 * is written (never in a dry run), it may change bytes of SEC in
	 * place, never its length, and must then change the new objects in
	 * memory to match (the commit's check compares them: incr.c note 5).
	 * A document timestamp's /ByteRange and /Contents (timestamp.c). */
	int (*seal)(void *ud, ps_update *up, ps_buf *sec);
	void *seal_ud;
};

int ps_update_begin(ps_doc *doc, const struct pdfstamp_write_opts *w, ps_update *up);
/* A fresh object number, 0 if the number space is exhausted or out of
 * memory (error set).  Never one that the trailer or an object read so
 * far (the document's cache, at the first call) names: such a reference
 * is to a missing object, null, and must stay so (incr.c note 6).
 * Callers read every object their update depends on before the first
 * call: ps_update_commit refuses (INTERNAL) if an object read later names
 * a number handed out. */
uint32_t ps_update_alloc(ps_update *up);
/* Adds OBJ (owned, also on failure) as object NUM/GEN of the new revision.
 * NUM must not be pending already (edit that object in place) nor be the
 * /Encrypt dictionary: both are FORMAT errors, as only a damaged file
 * leads there.  NUM must be a number ps_update_alloc handed out or an
 * object in use in the file (INTERNAL otherwise): a reference to a missing
 * object is the null object, never a place to write to. */
int ps_update_put(ps_update *up, uint32_t num, uint16_t gen, ps_obj *obj);
int ps_update_set_trailer(ps_update *up, const char *key, ps_obj *val);
/* Serialises, writes (per W), makes it durable and verifies it. */
int ps_update_commit(ps_update *up, const struct pdfstamp_write_opts *w,
                     struct pdfstamp_result *res);
/* The writers' result (pdfstamp.h, versioned structs): ps_result_begin
 * refuses a RES of an unknown version and releases what it held (RES may
 * be NULL); ps_result_add_object appends NUM to res->objects (no-op for
 * a NULL RES).  0 or a PDFSTAMP_E_* code (message set). */
int ps_result_begin(ps_ctx *ctx, struct pdfstamp_result *res);
int ps_result_add_object(ps_ctx *ctx, struct pdfstamp_result *res, uint32_t num);
/* RES (may be NULL) of a call that wrote nothing: the file's length and
 * startxref as they are, its handler's weakness (version 2). */
void ps_result_unchanged(ps_doc *doc, struct pdfstamp_result *res);
void ps_update_free(ps_update *up);

#endif
