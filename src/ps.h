/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ps.h - internal declarations shared by the library's modules.
 *
 * DESIGN NOTES
 *
 * Modules: one table lists them all, layer by layer with a line each:
 * tests/e2e/layers.  A module calls only the modules of its own layer and
 * of the layers listed before it; tests/e2e/layout.sh checks the table
 * from the built objects, with the rest of the library's shape (no cycle,
 * sec.c alone references the AES engine for object data and kdf.c for
 * Alg. 2.B's chain, xrefw.c alone writes xref sections, only the reader
 * sees the document's fields: docpriv.h).
 * Each declares its internals in a header of its own, which a user
 * includes; ps.h includes the common ones (at its end) but never rng.h,
 * sec_aes.h, aesmb.h, docpriv.h or any mbedTLS header.
 * Names: a module's globals are in its families, which the table lists
 * (ps_NAME_* unless it says otherwise; a family is one module's, and
 * names one concern).  A function only its own file calls is static; one
 * that only the tests call is declared in its header's "for the tests"
 * section; no other global goes unused (layout.sh checks 10 and 11).
 *
 * Invariants:
 *  1. No globals but two: extlib.c's table of the dlopen'ed libraries'
 *     functions (filled once under a mutex, then only read) and, in test
 *     programs, tests/fault.c's fault counters.  Everything else that lives longer
 *     than a call hangs off the context or the document; pdfstamp.h lists
 *     what is process-wide (the environment, descriptors, the writers'
 *     lock, threads, the SASLprep child), and nothing may be added to it
 *     without changing that list.
 *  2. Every function that can fail returns 0 or a negative PDFSTAMP_E_*
 *     code and, when it fails, has already called ps_err() with a message.
 *     Helpers that cannot fail in any way but OOM (ps_buf) use a sticky flag
 *     checked once at the end instead.
 *  3. Key material (file key, intermediate keys, passwords, AES schedules)
 *     lives only in buffers that are wiped with ps_wipe() on every path.
 *  4. File offsets are int64_t; every number parsed from input is checked
 *     for overflow before use.
 */
#ifndef PS_H
#define PS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include "pdfstamp.h"
#include "wipe.h"

typedef struct pdfstamp_ctx ps_ctx;
typedef struct pdfstamp_doc ps_doc;

/* Internal-only status: the parser reached the end of its buffer before the
 * object ended.  The caller reads a larger window and tries again; it is
 * never returned from a public call. */
#define PS_E_NEEDMORE (-100)

#if defined(__GNUC__)
#define PS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PS_PRINTF(a, b)
#endif

/* ---- ctx.c --------------------------------------------------------------- */

struct pdfstamp_ctx {
	int errcode;
	char errmsg[256];
	int errhint;                 /* PDFSTAMP_HINT_* of errmsg (ps_err_hint), else 0 */
	pdfstamp_warn_fn warn;
	void *warn_ud;
	struct ps_rng *rng;          /* DRBG and IV pool (rng.h), made on first use */
	unsigned long kdf_hashes;    /* Alg. 2.B / R5 hashes run (kdf.c):
	                              * read by tests and benches */
	unsigned cpu;                /* cpu.c's probe | 1u << 31 once made (ps_cpu_bits:
	                              * CPUID is slow in a VM) */
	pdfstamp_group *group;       /* shared directory syncs (io.c), or NULL */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* Fuzz builds only (configure --enable-fuzzing): Algorithm 2.B with
	 * scaled-down constants (see ps_kdf_hash_r6), so that fuzz_security reaches
	 * its parsing and branching logic thousands of times a second.  Files
	 * made with the real constants do not authenticate with it set. */
	int fuzz_light_kdf;
#endif
};

/* Records CODE and a printf-style message; returns CODE. */
int ps_err(ps_ctx *ctx, int code, const char *fmt, ...) PS_PRINTF(3, 4);
/* The same for a refusal that a caller's setting lifts, or a need it can
 * meet: HINT (PDFSTAMP_HINT_*, pdfstamp_ctx_errhint) names the setting,
 * and the message describes only the problem, never a command's option. */
int ps_err_hint(ps_ctx *ctx, int hint, int code, const char *fmt, ...) PS_PRINTF(4, 5);
/* Records CODE and "<printf-style prefix>: <the current message>" (the
 * hint of the current message kept). */
int ps_err_wrap(ps_ctx *ctx, int code, const char *fmt, ...) PS_PRINTF(3, 4);
void ps_warn(ps_ctx *ctx, const char *fmt, ...) PS_PRINTF(2, 3);
/* Cryptographically strong random bytes from the context's CTR-DRBG,
 * seeded on first use and reseeded with fresh OS entropy (and the pid as
 * additional input) whenever it is used in a process other than the one
 * that seeded it (after fork()). */
int ps_random(ps_ctx *ctx, uint8_t *out, size_t n);
/* A fresh 16-byte IV drawn from a pool refilled in 1 KiB DRBG batches; a
 * pool inherited through fork() is dropped, never drawn from. */
int ps_random_iv(ps_ctx *ctx, uint8_t iv[16]);
/* Random bytes straight from the kernel (getrandom(2); /dev/urandom where
 * that is missing), for long-lived secrets: file keys. */
int ps_random_os(ps_ctx *ctx, uint8_t *out, size_t n);

/* ---- buf.c --------------------------------------------------------------- */

typedef struct ps_buf {
	uint8_t *data;
	size_t len, cap;
	int oom;            /* sticky: set when any append failed */
	int secret;         /* wipe on growth and on free */
} ps_buf;

#define PS_BUF_INIT {.data = NULL} /* every field zero */

int ps_buf_reserve(ps_buf *b, size_t extra);   /* 0 or -1 (and sets oom) */
/* The grow-and-append path of ps_buf_append (buf.c); the inline functions
 * below are its fast path when the capacity suffices (the serializer and
 * the lexer append a token at a time). */
void ps_buf_append_slow(ps_buf *b, const void *p, size_t n);
static inline void ps_buf_append(ps_buf *b, const void *p, size_t n)
{
	if (n != 0 && !b->oom && n <= b->cap - b->len) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		return;
	}
	ps_buf_append_slow(b, p, n);
}
static inline void ps_buf_putc(ps_buf *b, int c)
{
	if (!b->oom && b->len < b->cap) {
		b->data[b->len++] = (uint8_t)c;
		return;
	}
	{
		uint8_t ch = (uint8_t)c;
		ps_buf_append_slow(b, &ch, 1);
	}
}
void ps_buf_puts(ps_buf *b, const char *s);
void ps_buf_printf(ps_buf *b, const char *fmt, ...) PS_PRINTF(2, 3);
void ps_buf_reset(ps_buf *b);                  /* len = 0, keeps memory */
void ps_buf_free(ps_buf *b);                   /* wipes if secret */
/* Detaches the data (caller frees); returns NULL if oom. */
uint8_t *ps_buf_detach(ps_buf *b, size_t *len);
/* Makes room for element N (0-based) of the malloc'ed array *P of ELEM-byte
 * elements that holds N now, doubling its capacity at powers of two (the
 * capacity is implied by N: the owner stores only the count).  0 or -1
 * (*P unchanged) when out of memory or on overflow. */
int ps_vec_grow(void **p, size_t n, size_t elem);
/* Sets *P to a new array with the capacity ps_vec_grow implies for N
 * elements and copies the N ELEM-byte elements of SRC into it (*P = NULL
 * for N == 0): an array built elsewhere (the parser's stack) in one
 * malloc, that ps_vec_grow can grow later.  0 or -1 (OOM, overflow). */
int ps_vec_adopt(void **p, const void *src, size_t n, size_t elem);
/* qsort(BASE, N, ELEM, CMP) (not stable), but O(N log R) comparisons for
 * an array of R runs already in order (buf.c; one pass when R is 1; no
 * memory for the merge: qsort): the tables of a whole file (objects by
 * offset, by number) come in a few runs, as most writers emit objects in
 * number order. */
void ps_vec_sort(void *base, size_t n, size_t elem, int (*cmp)(const void *, const void *));
/* N bytes for data passing through in bulk (the sequential reader's
 * segments, an xref stream's bytes): from N >= 1 MB on, whole 2 MB pages
 * (N rounded up), aligned and marked for transparent huge pages (madvise
 * MADV_HUGEPAGE; a hint, ignored where the kernel has none), so that
 * filling it costs a fault per 2 MB rather than per 4 KB page (buf.c
 * note).  Freed with free(); NULL when out of memory. */
void *ps_buf_bulk_alloc(size_t n);

/* Big-endian fields of binary formats (font tables, PNG and JPEG headers);
 * the caller has checked that the bytes are there. */
static inline uint32_t ps_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t ps_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The modules' own headers, for files that include only ps.h. */
#include "obj.h"
#include "kdf.h"
#include "sec.h"
#include "flate.h"
#include "text.h"
#include "date.h"
#include "xmp.h"
#include "doc.h"
#include "incr.h"
#include "rewrite.h"
#include "io.h"

#endif
