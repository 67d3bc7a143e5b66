/* SPDX-License-Identifier: Apache-2.0 */
/* sec_aes.h - internal to sec.c (and its unit tests and benchmarks): the
 * AESV3 layer over the AES engine (ISO 32000-2 7.6.3.1, Table 25).  It
 * includes aesmb.h, so no other library module may include it: its
 * functions are global for the tests and the benchmark tools alone. */
#ifndef PS_SEC_AES_H
#define PS_SEC_AES_H

#include "ps.h"
#include "aesmb.h"

/* AESV3 cipher state: the key schedules are built once per document, for
 * the fastest AES engine this CPU has (aesmb.c: VAES, AES-NI or mbedTLS).
 * Read-only after init, so worker threads share it; never copy it by
 * value.  A cipher may instead borrow another's schedules (ps_cipher_borrow):
 * then the raw key need not be kept anywhere to give a second document
 * (the writer's self-check) the same key. */
typedef struct ps_cipher {
	ps_aes_engine eng;
	int ready;
	const struct ps_cipher *lent;   /* borrowed: use lent->eng; never freed here */
} ps_cipher;

/* ---- for the tests and tools (sec.c's own; bench/make-archive encrypts) ---- */

int ps_cipher_init(ps_ctx *ctx, ps_cipher *c, const uint8_t key[32]);
/* Makes C use SRC's schedules (SRC must be ready and outlive C). */
int ps_cipher_borrow(ps_ctx *ctx, ps_cipher *c, const ps_cipher *src);
void ps_cipher_free(ps_cipher *c);     /* wipes (a borrower only lets go);
                                        * accepts a zeroed struct */
/* The engine a cipher encrypts with: its own or the one it borrows. */
static inline const ps_aes_engine *ps_cipher_eng(const ps_cipher *c)
{
	return c->lent ? &c->lent->eng : &c->eng;
}

/* Decrypts IN (16-byte IV followed by CBC data) and appends the plaintext
 * to OUT.  Length not a multiple of 16, fewer than 32 bytes, or bad PKCS#7
 * padding: PDFSTAMP_E_FORMAT.  An empty input decrypts to empty. */
int ps_aesv3_decrypt(ps_ctx *ctx, const ps_cipher *c, const uint8_t *in, size_t n, ps_buf *out);
/* Encrypts IN with a fresh IV from the context pool and PKCS#7 padding and
 * appends IV || ciphertext (16 + 16*(n/16 + 1) bytes) to OUT. */
int ps_aesv3_encrypt(ps_ctx *ctx, const ps_cipher *c, const uint8_t *in, size_t n, ps_buf *out);
/* Size of the AESV3 form of N plaintext bytes: IV + data + PKCS#7 pad. */
#define PS_AESV3_LEN(n) (16 + ((n) & ~(size_t)15) + 16)

#endif
