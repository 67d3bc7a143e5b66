/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sha2.c - SHA-256 with the CPU's SHA extensions, for the password hash.
 *
 * DESIGN NOTES
 *
 *  1. Why.  Algorithm 2.B (ISO 32000-2 7.6.4.3.4) hashes about 64 rounds
 *     of 64 copies of (password || K || U): some 400 KB per password tried,
 *     a third of it with SHA-256.  mbedTLS 2.28 computes SHA-256 in C
 *     (about 0.9 ms of a 3 ms hash here); the SHA extensions (SHA256RNDS2,
 *     SHA256MSG1/2) do the same in about a quarter of the time.  SHA-384
 *     and SHA-512 have no such instructions on these CPUs and stay with
 *     mbedTLS, as does every other hash of the project (journal.c).
 *  2. The kernel is FIPS 180-4 6.2.2 computed four rounds at a time: the
 *     state is kept as the two registers SHA256RNDS2 expects (ABEF and
 *     CDGH), each group of four message words W[t..t+3] is derived from
 *     the previous four groups (W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) +
 *     W[t-16], eq. 6.2.2 step 1: MSG1 gives s0 + W[t-16], PALIGNR W[t-7],
 *     MSG2 adds s1), and the constants K[t] (4.2.2) are added before the
 *     two SHA256RNDS2 of the group.  Padding (5.1.1) is done here on the
 *     last one or two blocks.
 *  3. Dispatch.  The caller passes PS_CPU_SHA from cpu.c's probe, which
 *     kdf.c keeps in the context (a CPUID traps to the hypervisor in a VM)
 *     and drops when PDFSTAMP_AES=mbedtls asks for the portable paths;
 *     without it, or on other CPUs and compilers, ps_sha256_hw is mbedTLS.
 *     tests/check_crypt.c checks the kernel against the FIPS 180-4
 *     examples and mbedTLS (every length 0..300, a few long ones), and
 *     Algorithm 2.B against qpdf's files both ways.
 *  4. Secrets.  The input is key material: the kernel keeps it in
 *     registers and in the caller's buffer (x86-64 only: on i386 the
 *     registers would spill, cpu.h); the digest is stored from the
 *     registers to the caller's OUT; the padded tail block and the state
 *     are wiped before returning, the registers by the caller (kdf.c).
 */
#include "config.h"

#include <string.h>

#include "sha2.h"
#include "wipe.h"

#include "cpu.h"
#ifdef PS_X86_KERNELS
#define PS_SHA_X86 1
#include <immintrin.h>
#define TGT_SHA __attribute__((target("sha,sse4.1,ssse3")))
#endif

#ifdef PS_SHA_X86
/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes, four per round group. */
static const uint32_t sha256_k[64] __attribute__((aligned(16))) = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* One group of four rounds (note 2): W + K, then two SHA256RNDS2; the
 * first leaves the new ABEF in CDGH's register and the old ABEF, the new
 * CDGH, in the other, so the second swaps them back. */
#define RND4(wv, g) do { \
		m = _mm_add_epi32((wv), _mm_load_si128( \
			(const __m128i *)(const void *)&sha256_k[4 * (g)])); \
		cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m); \
		abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0e)); \
	} while (0)
/* The next four message words into W4 (which held W[t-16..t-13]) from
 * W3 (W[t-12..]), W2 (W[t-8..]) and W1 (W[t-4..t-1]). */
#define SCHED(w4, w3, w2, w1) \
	w4 = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w4, w3), \
	                                        _mm_alignr_epi8(w1, w2, 4)), w1)
#define GROUPS4(g) do { \
		SCHED(w0, w1, w2, w3); RND4(w0, (g)); \
		SCHED(w1, w2, w3, w0); RND4(w1, (g) + 1); \
		SCHED(w2, w3, w0, w1); RND4(w2, (g) + 2); \
		SCHED(w3, w0, w1, w2); RND4(w3, (g) + 3); \
	} while (0)

/* Note 2: NBLK 64-byte blocks of P into the state S (a..h); with OUT, the
 * last call, the digest goes straight from the registers to OUT (big-endian
 * words, 6.2.2 step 4) and S is left as it was. */
static TGT_SHA void ni_blocks(uint32_t s[8], const uint8_t *p, size_t nblk, uint8_t *out)
{
	/* big-endian words: reverse the bytes within each 32-bit lane */
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i abef, cdgh, t, w0, w1, w2, w3, m, save0, save1, abcd, efgh;

	/* (a,b,c,d), (e,f,g,h) -> ABEF = (f,e,b,a) and CDGH = (h,g,d,c),
	 * listed from the low lane up */
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&s[0]),
	                      0xb1);            /* b,a,d,c */
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&s[4]),
	                         0x1b);         /* h,g,f,e */
	abef = _mm_alignr_epi8(t, cdgh, 8);     /* f,e,b,a */
	cdgh = _mm_blend_epi16(cdgh, t, 0xf0);  /* h,g,d,c */

	for (; nblk > 0; nblk--, p += 64) {
		save0 = abef;
		save1 = cdgh;
		w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), bswap);
		w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16)),
		                      bswap);
		w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 32)),
		                      bswap);
		w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 48)),
		                      bswap);
		RND4(w0, 0);
		RND4(w1, 1);
		RND4(w2, 2);
		RND4(w3, 3);
		GROUPS4(4);
		GROUPS4(8);
		GROUPS4(12);
		abef = _mm_add_epi32(abef, save0);
		cdgh = _mm_add_epi32(cdgh, save1);
	}

	t = _mm_shuffle_epi32(abef, 0x1b);      /* a,b,e,f */
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);   /* g,h,c,d */
	abcd = _mm_blend_epi16(t, cdgh, 0xf0);  /* a,b,c,d */
	efgh = _mm_alignr_epi8(cdgh, t, 8);     /* e,f,g,h */
	if (out) {
		_mm_storeu_si128((__m128i *)(void *)out, _mm_shuffle_epi8(abcd, bswap));
		_mm_storeu_si128((__m128i *)(void *)(out + 16), _mm_shuffle_epi8(efgh, bswap));
	} else {
		_mm_storeu_si128((__m128i *)(void *)&s[0], abcd);
		_mm_storeu_si128((__m128i *)(void *)&s[4], efgh);
	}
}

static void ni_sha256(const uint8_t *in, size_t n, uint8_t out[32])
{
	/* FIPS 180-4 5.3.3: the initial hash value */
	uint32_t s[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	uint8_t tail[128];
	size_t full = n / 64, rest = n % 64, tl;
	uint64_t bits = (uint64_t)n * 8;
	int i;

	ni_blocks(s, in, full, NULL);
	/* 5.1.1: the message, a 1 bit, zeros, then its length in bits as a
	 * 64-bit big-endian number, to a multiple of 512 bits */
	if (rest)
		memcpy(tail, in + full * 64, rest);
	tail[rest] = 0x80;
	tl = rest + 1 + 8 <= 64 ? 64 : 128;
	memset(tail + rest + 1, 0, tl - rest - 1);
	for (i = 0; i < 8; i++)
		tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
	ni_blocks(s, tail, tl / 64, out);
	ps_wipe(tail, sizeof tail);
	ps_wipe(s, sizeof s);
}
#endif /* PS_SHA_X86 */

int ps_sha256_hw(int ni, const void *in, size_t n, uint8_t out[32])
{
#ifdef PS_SHA_X86
	if (ni) {
		ni_sha256(in, n, out);
		return 0;
	}
#else
	(void)ni;
#endif
	return ps_sha256(in, n, out);
}
