/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sha2.h - SHA-256/384/512 through mbedTLS 2.28 or 3.x: the one place that
 * knows which names the installed mbedTLS gives them (the _ret suffix was
 * dropped in 3.0).  Included by the files that hash (kdf.c, journal.c).
 * Also the SHA-256 and SHA-384/512 kernels of the password hash (sha2.c).
 */
#ifndef PS_SHA2_H
#define PS_SHA2_H

#include <mbedtls/sha256.h>
#include <mbedtls/sha512.h>
#include <mbedtls/version.h>

#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#define ps_sha256(in, n, out) mbedtls_sha256((in), (n), (out), 0)
#define ps_sha512(in, n, out, is384) mbedtls_sha512((in), (n), (out), (is384))
#define ps_sha256_starts(c) mbedtls_sha256_starts((c), 0)
#define ps_sha256_update(c, p, n) mbedtls_sha256_update((c), (p), (n))
#define ps_sha256_finish(c, h) mbedtls_sha256_finish((c), (h))
#define ps_sha512_starts(c, is384) mbedtls_sha512_starts((c), (is384))
#define ps_sha512_update(c, p, n) mbedtls_sha512_update((c), (p), (n))
#define ps_sha512_finish(c, h) mbedtls_sha512_finish((c), (h))
#else
#define ps_sha256(in, n, out) mbedtls_sha256_ret((in), (n), (out), 0)
#define ps_sha512(in, n, out, is384) mbedtls_sha512_ret((in), (n), (out), (is384))
#define ps_sha256_starts(c) mbedtls_sha256_starts_ret((c), 0)
#define ps_sha256_update(c, p, n) mbedtls_sha256_update_ret((c), (p), (n))
#define ps_sha256_finish(c, h) mbedtls_sha256_finish_ret((c), (h))
#define ps_sha512_starts(c, is384) mbedtls_sha512_starts_ret((c), (is384))
#define ps_sha512_update(c, p, n) mbedtls_sha512_update_ret((c), (p), (n))
#define ps_sha512_finish(c, h) mbedtls_sha512_finish_ret((c), (h))
#endif

#include <stddef.h>
#include <stdint.h>

/* SHA-256 (FIPS 180-4 6.2) of IN[0..N): with the SHA extensions when NI
 * (PS_CPU_SHA, cpu.h), else mbedTLS.  0 or mbedTLS's error. */
int ps_sha256_hw(int ni, const void *in, size_t n, uint8_t out[32]);

/* SHA-256 of a long input given in pieces (a document timestamp's byte
 * range, timestamp.c): the SHA extensions' kernel over whole blocks when
 * NI, else mbedTLS.  Not for secrets (nothing is wiped but the tail). */
typedef struct ps_sha256_stream {
	int ni;
	uint32_t s[8];
	uint8_t buf[64];
	size_t n;                 /* bytes in buf */
	uint64_t total;
	mbedtls_sha256_context mc;
} ps_sha256_stream;
void ps_sha256_stream_start(ps_sha256_stream *st, int ni);
void ps_sha256_stream_update(ps_sha256_stream *st, const void *p, size_t n);
/* Writes the digest and releases ST. */
void ps_sha256_stream_finish(ps_sha256_stream *st, uint8_t out[32]);

/* The same for SHA-512, or SHA-384 when IS384: the AVX and BMI2 kernel
 * over whole blocks when CPU (PS_CPU_* bits) has both, else mbedTLS. */
typedef struct ps_sha512_stream {
	int avx, is384;
	uint64_t s[8];
	uint8_t buf[128];
	size_t n;                 /* bytes in buf */
	uint64_t total;
	mbedtls_sha512_context mc;
} ps_sha512_stream;
void ps_sha512_stream_start(ps_sha512_stream *st, unsigned cpu, int is384);
void ps_sha512_stream_update(ps_sha512_stream *st, const void *p, size_t n);
/* Writes the digest (48 or 64 bytes) and releases ST. */
void ps_sha512_stream_finish(ps_sha512_stream *st, uint8_t *out);

/* SHA-512 (FIPS 180-4 6.4), or SHA-384 (6.5) when IS384, of IN[0..N) into
 * OUT (64 or 48 bytes): with AVX and BMI2 when CPU (PS_CPU_* bits, cpu.h)
 * has both, else mbedTLS.  0 or mbedTLS's error. */
int ps_sha512_hw(unsigned cpu, const void *in, size_t n, uint8_t *out, int is384);

#endif
