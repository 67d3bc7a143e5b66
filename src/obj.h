/* SPDX-License-Identifier: Apache-2.0 */
/* obj.h - internal: the object model (obj.c), its parser (parse.c) and
 * serializer (serialize.c); conventions: ps.h. */
#ifndef PS_OBJ_H
#define PS_OBJ_H

#include "ps.h"

/* ---- obj.c: object model ------------------------------------------------- */

typedef enum {
	PS_NULL = 0,
	PS_BOOL,
	PS_INT,
	PS_REAL,
	PS_STR,
	PS_NAME,
	PS_ARRAY,
	PS_DICT,
	PS_REF,
	PS_STREAM
} ps_kind;

typedef struct ps_obj ps_obj;

typedef struct ps_dict_ent {
	char *key;          /* decoded name without '/', NUL-terminated */
	ps_obj *val;
} ps_dict_ent;

struct ps_obj {
	ps_kind kind;
	int flags;          /* where its memory lies (obj.c notes 7 and 9); only obj.c reads them */
	union {
		int b;
		int64_t i;
		struct {
			double v;
			char *text;     /* original token, re-emitted
			                 * verbatim; NULL for new reals */
		} real;
		struct {
			uint8_t *p;     /* bytes after escape/hex decoding (and decryption) */
			size_t len;
			int hex;        /* was written as <hex> (serializer preference) */
		} str;
		struct {
			char *p;        /* decoded (#xx resolved), NUL-terminated, no '/' */
			size_t len;
		} name;
		struct {
			ps_obj **items;     /* capacity implied by len (ps_vec_grow) */
			size_t len;
		} arr;
		struct {
			ps_dict_ent *ents;   /* in file order; capacity implied by len */
			size_t len;
		} dict;
		struct {
			uint32_t num;
			uint16_t gen;
		} ref;
		struct {
			ps_obj *dict;   /* PS_DICT, owned */
			int64_t off;    /* absolute file offset of the raw data, -1 if in memory */
			uint8_t *data;  /* in-memory raw (already filtered) data, owned, or NULL */
			size_t len;     /* length of data (in-memory streams) */
		} stm;
	} u;
};

/* Constructors return NULL on allocation failure. */
ps_obj *ps_new_int(int64_t i);
ps_obj *ps_new_real(double v);
ps_obj *ps_new_str(const void *p, size_t len);
ps_obj *ps_new_name(const char *name);
ps_obj *ps_new_array(void);
ps_obj *ps_new_dict(void);
ps_obj *ps_new_ref(uint32_t num, uint16_t gen);
/* Takes ownership of DICT and DATA (both freed on failure). */
ps_obj *ps_new_stream(ps_obj *dict, uint8_t *data, size_t len);
/* For the parser: a string that adopts the malloc'd P (freed on failure;
 * a NULL P gives NULL, as the caller's allocation failure): N bytes plus
 * a NUL at P[N] (obj.c note 3). */
ps_obj *ps_new_str_take(uint8_t *p, size_t n, int hex);
void ps_obj_free(ps_obj *o);
/* Calls FN with the object number of every reference in O's direct
 * structure (a stream's dictionary included), in order; stops at FN's
 * first non-zero result and returns it. */
int ps_obj_each_ref(const ps_obj *o, int (*fn)(void *, uint32_t), void *arg);
ps_obj *ps_obj_copy(const ps_obj *o);   /* deep copy, NULL on OOM */
/* Same value (a stream compares by its dictionary; SKIP_LENGTH ignores the
 * top-level /Length there); integers and reals compare by value, reals to
 * 1e-4 (our serializer's precision).  NULL equals only NULL. */
int ps_obj_equal(const ps_obj *a, const ps_obj *b, int skip_length);

/* Replaces the bytes of string STR with a copy of P[0..N) (kept
 * NUL-terminated like every parsed string; P may point into STR's own
 * bytes; a string that does not grow keeps its allocation, so
 * u.str.p changes only when N > u.str.len): 0 or PDFSTAMP_E_NOMEM. */
int ps_str_set(ps_obj *str, const void *p, size_t n);

/* An arena (obj.c note 9): objects for a tree that is parsed, changed
 * and freed again soon, allocated from large chunks instead of one malloc
 * each.  Such a tree behaves like any other (every call of this header,
 * ps_obj_free included); only its memory stays with the arena, so it must
 * be freed before the arena is reset or freed.  ps_arena_new gives NULL
 * on OOM, and a NULL arena everywhere means malloc; ps_arena_reset makes
 * all of it reusable (keeping its first 1 MB of chunks), ps_arena_free
 * gives it back. */
typedef struct ps_arena ps_arena;
ps_arena *ps_arena_new(void);
void ps_arena_reset(ps_arena *a);
void ps_arena_free(ps_arena *a);
/* For the parser, in arena A (NULL: malloc): an object of KIND; a PS_NAME
 * with room for N bytes and a NUL in its own allocation (obj.c note 7:
 * the caller writes the bytes to u.name.p, the NUL at u.name.p[len] and
 * sets u.name.len <= N); a real like ps_new_real's that keeps the token
 * TEXT[0..N) for verbatim output; ps_new_str's string; and
 * ps_vec_adopt's copy of SRC[0..N) for the items or entries of an
 * object made so (ps_arena_adopt: 0 or -1 on OOM; *P NULL for N == 0). */
ps_obj *ps_arena_obj(ps_arena *a, ps_kind kind);
ps_obj *ps_arena_name_room(ps_arena *a, size_t n);
ps_obj *ps_arena_real_text(ps_arena *a, double v, const char *text, size_t n);
ps_obj *ps_arena_str(ps_arena *a, const void *p, size_t n, int hex);
int ps_arena_adopt(ps_arena *a, ps_obj *o, void **p, const void *src, size_t n, size_t elem);

/* Containers take ownership of the item, also when they fail (-> freed). */
int ps_array_push(ps_obj *arr, ps_obj *item);        /* 0 or PDFSTAMP_E_NOMEM */
/* Removes (and frees) item I of ARR, moving the rest down; 0, or
 * PDFSTAMP_E_USAGE if ARR is not an array or I is out of range. */
int ps_array_del(ps_obj *arr, size_t i);
int ps_dict_put(ps_obj *dict, const char *key, ps_obj *val); /* replaces an existing key in place */
/* Typed ps_dict_put: build the value and put it (replacing KEY in place).
 * 0, PDFSTAMP_E_NOMEM (also for a NULL NAME, or P == NULL with N > 0) or
 * PDFSTAMP_E_USAGE (DICT not a dict or stream, KEY NULL); the STR copies P. */
int ps_dict_put_name(ps_obj *dict, const char *key, const char *name);
int ps_dict_put_int(ps_obj *dict, const char *key, int64_t i);
int ps_dict_put_real(ps_obj *dict, const char *key, double v);
int ps_dict_put_bool(ps_obj *dict, const char *key, int b);
int ps_dict_put_ref(ps_obj *dict, const char *key, uint32_t num, uint16_t gen);
int ps_dict_put_str(ps_obj *dict, const char *key, const void *p, size_t n);
int ps_dict_del(ps_obj *dict, const char *key);      /* 0 whether or not present */
/* Appends KEY (from ps_dict_key_dup, taken over) and VAL (taken
 * over, non-NULL) to the PS_DICT D without looking for an existing KEY;
 * both are freed on failure.  0 or PDFSTAMP_E_NOMEM. */
int ps_dict_append_take(ps_obj *d, char *key, ps_obj *val);
/* A dictionary key for S[0..N) (N bytes, no NUL among them): a shared
 * read-only copy for the common names of PDF, else a malloc'd one (obj.c
 * note 8); NULL on OOM.  Every key of a ps_obj dictionary is freed with
 * ps_dict_key_free (NULL is a no-op), never with free(), and never
 * written; ps_dict_key_is_shared (for the tests) tells the two apart. */
char *ps_dict_key_dup(const char *s, size_t n);
void ps_dict_key_free(char *key);
/* Borrowed lookups; NULL if absent or if O is not a dict / array. For a
 * PS_STREAM, ps_dict_get looks in its dictionary. */
ps_obj *ps_dict_get(const ps_obj *dict, const char *key);
ps_obj *ps_array_get(const ps_obj *arr, size_t i);
size_t ps_array_len(const ps_obj *arr);
int ps_obj_is_name(const ps_obj *o, const char *name);
/* Typed accessors: 0 on success, -1 if O is absent or of another kind. */
int ps_obj_int(const ps_obj *o, int64_t *out);
int ps_obj_num(const ps_obj *o, double *out);       /* int or real */

/* Calls FN on every string inside O (recursing into arrays, dicts and a
 * stream's dict), stopping at the first non-zero return. */
typedef int (*ps_str_fn)(void *ud, ps_obj *str, const ps_obj *parent_dict, const char *key);
int ps_obj_walk_strings(ps_obj *o, ps_str_fn fn, void *ud);

/* ---- parse.c: lexer and parser -------------------------------------------
 * The parser works on a memory window [buf, buf+len).  It never reads past
 * len.  If an object is cut off by the end of the window it returns
 * PS_E_NEEDMORE (the caller may retry with a larger window); any other
 * malformation gives PDFSTAMP_E_FORMAT with a message naming what was wrong.
 * Nesting is limited to PS_MAX_DEPTH; strings and names are limited only by
 * the window. */

#define PS_MAX_DEPTH 64

/* Parses one direct object starting at *pos (leading white space and
 * comments are skipped) and advances *pos past it.  "N G R" is recognised
 * as a reference.  A stream keyword is not accepted here. */
int ps_parse_obj(ps_ctx *ctx, const uint8_t *buf, size_t len, size_t *pos, ps_obj **out);

/* Parses "N G obj <object> endobj" or "N G obj <<dict>> stream<EOL>"
 * starting at POS.  On success *out is the object; for a stream it is a
 * PS_STREAM whose u.stm.off is BASE + the offset of the first data byte
 * (BASE is the file offset of buf[0]); its data is not read.  A missing
 * "endobj" is tolerated.  NUM and GEN receive the object's header numbers. */
int ps_parse_indirect(ps_ctx *ctx, const uint8_t *buf, size_t len, size_t pos,
                      int64_t base, uint32_t *num, uint16_t *gen, ps_obj **out);

/* ps_parse_indirect with the objects in arena AR (obj.c note 9; NULL:
 * malloc): for the rewrite and its self-check, which free each tree
 * before they reset the arena.  Same results, messages and limits. */
int ps_parse_indirect_in(ps_ctx *ctx, ps_arena *ar, const uint8_t *buf, size_t len, size_t pos,
                         int64_t base, uint32_t *num, uint16_t *gen, ps_obj **out);

/* The references of the indirect object at BUF[0..LEN) without building
 * it (parse.c, "References only"): *NUM gets the header's number and FN
 * is called with the object number of each "N G R" in order.  0; 1 when
 * the object is not of the plain shape the scan is sure about (the caller
 * parses it instead; FN may have been called already); PS_E_NEEDMORE when
 * the window ends first; or FN's non-zero result.  No message is set. */
int ps_parse_scan_refs(const uint8_t *buf, size_t len, uint32_t *num, int (*fn)(void *, uint32_t),
                       void *arg);
/* The same for the direct object at BUF[POS..), which ends where its
 * value does (an object stream's member): 0, 1 (parse it instead; also
 * when the data ends first) or FN's non-zero result. */
int ps_parse_scan_refs_direct(const uint8_t *buf, size_t len, size_t pos,
                              int (*fn)(void *, uint32_t), void *arg);

/* Lexer helpers used by the xref reader.  The character classes of ISO
 * 32000-2 7.2.3 are a table (parse.c) read by inline accessors: bit
 * PS_CH_SPACE marks the six white-space bytes (NUL, HT, LF, FF, CR, SP),
 * PS_CH_DELIM the ten delimiters ( ) < > [ ] { } / %; a byte with neither
 * is a regular character.  Arguments outside 0..255 are in no class. */
#define PS_CH_SPACE 0x01
#define PS_CH_DELIM 0x02
#define PS_CH_LIT   0x04    /* ( ) \ CR: ends a run inside a literal string */
#define PS_CH_NAME  0x08    /* 0x21..0x7E but not '#' nor a delimiter: written bare in a name */
extern const uint8_t ps_parse_chclass[256];
static inline int ps_is_space(int c)
{
	return (unsigned)c < 256 && (ps_parse_chclass[c] & PS_CH_SPACE) != 0;
}
static inline int ps_is_delim(int c)
{
	return (unsigned)c < 256 && (ps_parse_chclass[c] & PS_CH_DELIM) != 0;
}
/* Skips white space and comments; returns the new position. */
size_t ps_parse_skip_ws(const uint8_t *buf, size_t len, size_t pos);
/* Parses an unsigned decimal integer at *pos (no sign) with overflow check
 * against INT64_MAX; advances *pos.  Returns 0, or -1 if no digit or overflow. */
int ps_parse_uint(const uint8_t *buf, size_t len, size_t *pos, int64_t *out);

/* ---- serialize.c: serializer and number formatter -------------------------
 * Writes O in PDF syntax, locale-independent.  Strings are written as-is
 * (the caller encrypts beforehand): literal "(...)" with escapes unless
 * str.hex is set, then "<...>".  Reals keep their original text when they
 * have one, else the shortest form with up to 6 decimals.  A PS_STREAM
 * writes its dictionary only (the caller writes "stream" and the data). */
void ps_serialize(ps_buf *b, const ps_obj *o);
/* "NUM GEN obj" and a LF: the header of an indirect object (7.3.10),
 * without printf. */
void ps_serialize_obj_header(ps_buf *b, uint32_t num, uint16_t gen);
/* The one number formatter (serialize.c note 3): V with at most 6
 * decimals, trailing zeros removed, integral values as integers, "0" for
 * values that round to zero and for NaN and infinities. */
void ps_serialize_real(ps_buf *b, double v);
/* The integer formatter (serialize.c note 5): V in decimal, zero-padded to
 * WIDTH digits (at most 20; a longer V is written whole), no printf. */
void ps_serialize_u64(ps_buf *b, uint64_t v, unsigned width);

/* ---- for the tests (obj.c alone calls these) -------------------------------- */

/* Constructors return NULL on allocation failure (as above). */
ps_obj *ps_new_null(void);
ps_obj *ps_new_bool(int b);
/* 1 if KEY is a shared copy of a common name (ps_dict_key_dup). */
int ps_dict_key_is_shared(const char *key);

#endif
