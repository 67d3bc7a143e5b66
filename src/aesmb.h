/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aesmb.h - multi-lane AES-256-CBC engine (issue 6).
 *
 * Every AESV3 object is an independent CBC chain under one file key
 * (ISO 32000-2 7.6.3.1).  CBC encryption of one chain is serial, so the
 * engine encrypts up to 8 chains at once with AES-NI (or 16 with VAES) and
 * decrypts one chain with many blocks in flight.  mbedTLS is the portable
 * path and the reference the fast kernels are tested against.
 *
 * Usage: ps_aes_engine_init() once per document key, then share the engine
 * read-only between threads (no call below modifies it).  The engine holds
 * mbedTLS contexts, which point into themselves: never copy an initialised
 * engine by value; init it in place.  ps_aes_engine_free() wipes the round
 * keys and accepts a zero-filled, never-initialised engine.
 *
 * Data placement: lanes whose buffers sit at addresses equal modulo 4 KiB
 * (for example equal-sized objects packed at 4 KiB strides) suffer 4K
 * aliasing and L1 set conflicts, which can cut throughput by half or more
 * (page-aligned buffers, e.g. separate large mallocs, are the usual case).
 * The engine cannot move caller buffers: it only falls back from 16 lanes to
 * two groups of 8 when it sees the crowding.  Callers that lay out many
 * objects should stagger them by a few hundred bytes.
 */
#ifndef PS_AESMB_H
#define PS_AESMB_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/aes.h>

typedef struct ps_aes_job {
	const uint8_t *in;   /* plaintext (encrypt) or ciphertext (decrypt); whole blocks */
	uint8_t *out;        /* may equal in (but must not otherwise overlap it) */
	size_t len;          /* multiple of 16 (a trailing partial block is ignored), may be 0 */
	uint8_t iv[16];      /* in: the IV; out: the last ciphertext block (the
	                      * IV to continue the chain), unchanged if len < 16 */
} ps_aes_job;

enum ps_aes_kind { PS_AES_MBEDTLS = 0, PS_AES_AESNI8 = 1, PS_AES_VAES16 = 2 };

typedef struct ps_aes_engine {
	_Alignas(16) uint8_t rk_enc[15][16];  /* FIPS-197 5.2 key schedule, rounds 0..14 */
	_Alignas(16) uint8_t rk_dec[15][16];  /* equivalent inverse cipher (FIPS-197 5.3.5) */
	int kind;                             /* enum ps_aes_kind actually in use */
	mbedtls_aes_context mb_enc;           /* fallback and ECB path when kind is MBEDTLS */
	mbedtls_aes_context mb_dec;
} ps_aes_engine;

/* Picks the fastest kernel that CPU (the PS_CPU_* bits of cpu.h: from
 * ps_cpu_bits, which probes once per context, or ps_cpu_probe) allows
 * unless PREFER (a ps_aes_kind) is given (>= 0) or, when PREFER is -1, the
 * environment variable PDFSTAMP_AES=mbedtls|aesni|vaes asks otherwise.  A
 * request the CPU cannot honour falls back to the best available kernel.
 * Returns 0, or PDFSTAMP_E_USAGE / PDFSTAMP_E_INTERNAL (the engine is then
 * wiped). */
int ps_aes_engine_init(ps_aes_engine *e, const uint8_t key[32], int prefer, unsigned cpu);
void ps_aes_engine_free(ps_aes_engine *e);   /* wipes round keys; NULL is fine */
const char *ps_aes_engine_name(int kind);    /* "mbedtls", "aesni-8", "vaes-16" */
int ps_aes_engine_best(unsigned cpu);        /* what auto picks for CPU (honours PDFSTAMP_AES) */
/* The kind PDFSTAMP_AES asks for: "mbedtls" PS_AES_MBEDTLS, "aesni" or
 * "aesni-8" PS_AES_AESNI8, "vaes" or "vaes-16" PS_AES_VAES16; -1 when it
 * is unset, empty, "auto" or unknown (the automatic choice).  The one
 * reader of the variable: the engine's choice, and kdf.c, whose
 * password-hash kernels PS_AES_MBEDTLS turns off. */
int ps_aes_env_kind(void);

/* CBC-encrypts N independent jobs (unequal lengths allowed, any order),
 * keeping all lanes busy: jobs are taken longest first and a lane whose job
 * ends takes the next one, so only a job longer than the rest of the batch
 * together (per lane) runs with idle lanes beside it (aesmb.c note 3).
 * Each job's iv is replaced by its last ciphertext block.  Jobs must not
 * overlap each other. */
void ps_aes_cbc_encrypt_batch(const ps_aes_engine *e, ps_aes_job *jobs, size_t n);
/* CBC-decrypts one chain with many blocks in flight (8 with AES-NI, 16 with
 * VAES).  OUT may equal IN.  LEN is a multiple of 16 (a trailing partial
 * block is ignored).  The caller who continues a chain must keep the last
 * ciphertext block before decrypting in place. */
void ps_aes_cbc_decrypt(const ps_aes_engine *e, const uint8_t iv[16], const uint8_t *in,
			uint8_t *out, size_t len);

/* The other AES of the project: Algorithm 2.B step c (ISO 32000-2
 * 7.6.4.3.4) encrypts K1 with AES-128-CBC, key K[0..15], IV K[16..31], no
 * padding: one serial chain, about 6 KB, some 64 times per password.  W is
 * the caller's scratch for the key schedule (locked memory in kdf.c); it
 * is wiped before returning.  NI: use AES-NI (PS_CPU_AESNI, cpu.h), else
 * mbedTLS.  BUF is encrypted in place, LEN a multiple of 16 (a trailing
 * partial block is ignored).  0, or PDFSTAMP_E_INTERNAL if mbedTLS fails. */
typedef struct ps_aes128_work {
	_Alignas(16) uint8_t rk[11][16];      /* FIPS-197 5.2 for Nk = 4 */
	mbedtls_aes_context mb;
} ps_aes128_work;
int ps_aes128_cbc_encrypt(ps_aes128_work *w, int ni, const uint8_t key[16], const uint8_t iv[16],
			  uint8_t *buf, size_t len);

/* ---- for the tests and benchmarks (no other library file calls these) ---- */

int ps_aes_engine_supported(int kind, unsigned cpu);   /* 1 if CPU can run KIND */
/* Encrypts one block with E's kernel (FIPS-197's vectors check its key
 * schedule). */
void ps_aes_ecb_encrypt_block(const ps_aes_engine *e, const uint8_t in[16], uint8_t out[16]);
/* What a batch cost (no timing involved). */
typedef struct ps_aes_batch_stats {
	uint64_t blocks;   /* 16-byte blocks encrypted */
	uint64_t steps;    /* serial AES latencies the kernels took: the batch's
	                    * time; blocks / (steps * lanes) is the lane occupancy */
} ps_aes_batch_stats;
/* ps_aes_cbc_encrypt_batch, reporting into ST (may be NULL). */
void ps_aes_cbc_encrypt_batch_stats(const ps_aes_engine *e, ps_aes_job *jobs, size_t n,
                                    ps_aes_batch_stats *st);

#endif /* PS_AESMB_H */
