/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sha2.c - SHA-256 with the CPU's SHA extensions, and SHA-384/512 with AVX
 * and BMI2, for the password hash.
 *
 * DESIGN NOTES
 *
 *  1. Why.  Algorithm 2.B (ISO 32000-2 7.6.4.3.4) hashes about 64 rounds
 *     of 64 copies of (password || K || U): some 400 KB per password tried,
 *     a third of it with SHA-256 and two thirds with SHA-384 or SHA-512.
 *     mbedTLS 2.28 computes all three in C: SHA-256 took about 0.9 ms of a
 *     3 ms hash here, and with SHA-256 and the AES chain on the CPU's
 *     instructions (note 2, aesmb.c) mbedtls_sha512 was the largest part
 *     left, 36% of a batch stamp's CPU time (issue 34).  The SHA extensions
 *     (SHA256RNDS2, SHA256MSG1/2) compute SHA-256 in about a sixth of
 *     mbedTLS's time; SHA-384/512 have no such instructions on these CPUs,
 *     and note 3's kernel computes them at 1.6 times mbedTLS's speed
 *     (bench/kdf-bench --hash on 7.7 KB, a length an owner hash's rounds
 *     hash, on the Zen 3 VM of bench/results: 675 against 418 MB/s;
 *     SHA-256 1,570 against 260).  Every other hash of the project
 *     (journal.c, the signatures) stays with mbedTLS.
 *  2. The SHA-256 kernel is FIPS 180-4 6.2.2 computed four rounds at a
 *     time: the state is kept as the two registers SHA256RNDS2 expects
 *     (ABEF and CDGH), each group of four message words W[t..t+3] is
 *     derived from the previous four groups (W[t] = s1(W[t-2]) + W[t-7] +
 *     s0(W[t-15]) + W[t-16], eq. 6.2.2 step 1: MSG1 gives s0 + W[t-16],
 *     PALIGNR W[t-7], MSG2 adds s1), and the constants K[t] (4.2.2) are
 *     added before the two SHA256RNDS2 of the group.  Padding (5.1.1) is
 *     done here on the last one or two blocks.
 *  3. The SHA-384/512 kernel is FIPS 180-4 6.4.2 (SHA-512; SHA-384, 6.5,
 *     is the same with the initial hash value of 5.3.4 and the first six
 *     words of the result), split between the two kinds of execution unit.
 *     The 80 rounds (step 3) are scalar C: the working variables a..h are
 *     locals, renamed from round to round by the macro's arguments instead
 *     of moved; Maj(a,b,c) (4.1.3, eq. 4.9) is ((a ^ b) & (b ^ c)) ^ b,
 *     whose b ^ c is the previous round's a ^ b; the rotations of S0 and
 *     S1 (eq. 4.10, 4.11) become RORX, BMI2's three-operand rotate that
 *     leaves the flags alone.  The message schedule (step 1, eq. 4.12 and
 *     4.13 for s0 and s1) runs in XMM registers, two words at a time, VEX
 *     encoded (AVX): eight registers hold W[t-16..t-1], W[t-15..t-14] and
 *     W[t-7..t-6] are PALIGNRs of neighbours, the rotations are shift pairs
 *     (64-bit lanes have no rotate before AVX-512) except s0's ROTR 8, a
 *     byte shuffle.  Each pair is computed 16 rounds before it is needed,
 *     K[t] (4.2.3) added, and stored into a 16-word ring that the rounds
 *     read, so that the vector units compute the schedule while the integer
 *     units run the rounds: about 25 integer instructions a round remain.
 *     Padding (5.1.2: a 1 bit, zeros, the length in bits as 128 bits) is
 *     done here on the last one or two blocks.  The variants tried, in a
 *     stand-alone program on 7.7 KB (Zen 3, MB/s, best of 15 runs):
 *     mbedTLS 420; these rounds with the schedule in C 520 with ROR, 545
 *     with RORX, 570 with the Maj above too; this kernel 698 (670 with
 *     ROR); the schedules of two blocks in the two halves of YMM registers
 *     (OpenSSL's AVX2 layout; the second block's rounds then run alone)
 *     715, not worth its odd-block case and doubled constants.  Unrolling
 *     all 80 rounds (of the C-schedule variant) instead of looping over 16
 *     was slower.  OpenSSL 3.0's assembly gives 657 (openssl speed) on the
 *     same length.
 *  4. Dispatch.  The caller passes cpu.c's PS_CPU_* bits: PS_CPU_SHA for
 *     the SHA-256 kernel, all of the bits for the SHA-384/512 one, which
 *     runs when PS_CPU_AVX and PS_CPU_BMI2 are both set.  kdf.c keeps the
 *     probe in the context (a CPUID traps to the hypervisor in a VM) and
 *     passes no bits when PDFSTAMP_AES=mbedtls asks for the portable paths;
 *     without the bits, or on other CPUs and compilers, ps_sha256_hw and
 *     ps_sha512_hw are mbedTLS.  tests/check_crypt.c checks both kernels
 *     and both fallbacks against the FIPS 180-4 examples and mbedTLS
 *     (every length 0..300, long ones), and Algorithm 2.B against qpdf's
 *     files both ways.
 *  5. Secrets.  The input is key material.  The SHA-256 kernel keeps it in
 *     registers and in the caller's buffer (x86-64 only: on i386 the
 *     registers would spill, cpu.h); the digest is stored from the
 *     registers to the caller's OUT.  The SHA-384/512 kernel has more
 *     values than registers: its W + K ring is a local that it wipes, the
 *     state and the padded tail block are locals of the one-shot function,
 *     wiped before it returns, and whatever the compiler spills of the
 *     working variables and the schedule (GCC 12 -O2 spills some: 60
 *     values of a 7.7 KB hash were found there) lies in the frames the two
 *     functions leave below the caller's stack pointer, which stack_wipe
 *     overwrites (4 KB, not measurable beside the hash).
 *     tests/check_crypt.c searches that region for every intermediate
 *     value of a hash.  The vector registers are wiped by the caller
 *     (kdf.c) after each hash.
 *  6. Streaming (ps_sha256_stream_*, ps_sha512_stream_*): the same
 *     kernels over whole blocks as they come, the partial block kept,
 *     padded at the end as in notes 2 and 3 (neither kernel keeps secrets
 *     here, so no stack_wipe); for a document timestamp's byte range, gigabytes read once
 *     (timestamp.c), at the kernel's speed instead of mbedTLS's.  Its
 *     input is no secret.
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
#define TGT_AVX __attribute__((target("avx,bmi2")))
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
/* ---- SHA-384/512 (note 3) ---------------------------------------------- */

/* FIPS 180-4 4.2.3: the first 64 bits of the fractional parts of the cube
 * roots of the first 80 primes. */
static const uint64_t sha512_k[80] __attribute__((aligned(16))) = {
	0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
	0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
	0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
	0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
	0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
	0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
	0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
	0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
	0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
	0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
	0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
	0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
	0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
	0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
	0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
	0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
	0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
	0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
	0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
	0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
};

/* 5.3.5 and 5.3.4: the initial hash values of SHA-512 and SHA-384. */
static const uint64_t sha512_h0[2][8] = {
	{ 0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	  0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179 },
	{ 0xcbbb9d5dc1059ed8, 0x629a292a367cd507, 0x9159015a3070dd17, 0x152fecd8f70e5939,
	  0x67332667ffc00b31, 0x8eb44a8768581511, 0xdb0c2e0d64f98fa7, 0x47b5481dbefa4fa4 },
};

#define ROTR64(x, n) ((x) >> (n) | (x) << (64 - (n)))
#define BSIG0(x) (ROTR64(x, 28) ^ ROTR64(x, 34) ^ ROTR64(x, 39))  /* 4.10 */
#define BSIG1(x) (ROTR64(x, 14) ^ ROTR64(x, 18) ^ ROTR64(x, 41))  /* 4.11 */

/* 4.12: s0(x) = ROTR 1 ^ ROTR 8 ^ SHR 7, of both words of X. */
static TGT_AVX inline __m128i ssig0x2(__m128i x)
{
	const __m128i rotr8 = _mm_set_epi64x(0x080f0e0d0c0b0a09LL, 0x0007060504030201LL);
	__m128i r = _mm_xor_si128(_mm_srli_epi64(x, 1), _mm_slli_epi64(x, 63));

	r = _mm_xor_si128(r, _mm_srli_epi64(x, 7));
	return _mm_xor_si128(r, _mm_shuffle_epi8(x, rotr8));
}

/* 4.13: s1(x) = ROTR 19 ^ ROTR 61 ^ SHR 6, of both words of X. */
static TGT_AVX inline __m128i ssig1x2(__m128i x)
{
	__m128i r = _mm_xor_si128(_mm_srli_epi64(x, 19), _mm_slli_epi64(x, 45));

	r = _mm_xor_si128(r, _mm_srli_epi64(x, 61));
	r = _mm_xor_si128(r, _mm_slli_epi64(x, 3));
	return _mm_xor_si128(r, _mm_srli_epi64(x, 6));
}

/* One round (6.4.2 step 3) with WK = W[t] + K[t]: T1 goes into d (the
 * next e) and T1 + T2 into h (the next a); the callers rotate the names.
 * BC holds b ^ c on entry and the next round's on exit (note 3). */
#define RND64(a, b, c, d, e, f, g, h, wk) do { \
		uint64_t t1_ = h + (wk) + BSIG1(e) + (((f ^ g) & e) ^ g), ab_ = a ^ b; \
		d += t1_; \
		h = t1_ + BSIG0(a) + ((ab_ & bc) ^ b); \
		bc = ab_; \
	} while (0)
/* Rounds t and t + 1, their W + K in ring slots I and I + 1. */
#define RND64X2(i, a, b, c, d, e, f, g, h) do { \
		RND64(a, b, c, d, e, f, g, h, wk[(i)]); \
		RND64(h, a, b, c, d, e, f, g, wk[(i) + 1]); \
	} while (0)
/* W[t..t+1] (6.4.2 step 1) into W0, which held W[t-16..t-15], from W1
 * (W[t-14..]), W4 (W[t-8..]), W5 (W[t-6..]) and W7 (W[t-2..t-1]); plus
 * K[t..t+1] at KP[I] into ring slots I and I + 1. */
#define SCHED64X2(i, w0, w1, w4, w5, w7) do { \
		w0 = _mm_add_epi64(_mm_add_epi64(w0, ssig0x2(_mm_alignr_epi8(w1, w0, 8))), \
		                   _mm_add_epi64(_mm_alignr_epi8(w5, w4, 8), ssig1x2(w7))); \
		_mm_store_si128((__m128i *)(void *)&wk[(i)], _mm_add_epi64(w0, \
			_mm_load_si128((const __m128i *)(const void *)&kp[(i)]))); \
	} while (0)
/* Big-endian words 2J and 2J + 1 of the block into W, and W + K into the
 * ring. */
#define LOAD64X2(j, w) do { \
		w = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * (j))); \
		w = _mm_shuffle_epi8(w, bswap); \
		_mm_store_si128((__m128i *)(void *)&wk[2 * (j)], _mm_add_epi64(w, \
			_mm_load_si128((const __m128i *)(const void *)&sha512_k[2 * (j)]))); \
	} while (0)

/* Note 3: NBLK 128-byte blocks of P into the state S (a..h). */
static TGT_AVX __attribute__((noinline)) void avx_blocks(uint64_t s[8], const uint8_t *p,
                                                         size_t nblk)
{
	/* big-endian words: reverse the bytes within each 64-bit lane */
	const __m128i bswap = _mm_set_epi64x(0x08090a0b0c0d0e0fLL, 0x0001020304050607LL);
	uint64_t wk[16] __attribute__((aligned(16)));
	uint64_t a, b, c, d, e, f, g, h, bc;
	__m128i w0, w1, w2, w3, w4, w5, w6, w7;
	const uint64_t *kp;

	for (; nblk > 0; nblk--, p += 128) {
		LOAD64X2(0, w0);
		LOAD64X2(1, w1);
		LOAD64X2(2, w2);
		LOAD64X2(3, w3);
		LOAD64X2(4, w4);
		LOAD64X2(5, w5);
		LOAD64X2(6, w6);
		LOAD64X2(7, w7);
		a = s[0];
		b = s[1];
		c = s[2];
		d = s[3];
		e = s[4];
		f = s[5];
		g = s[6];
		h = s[7];
		bc = b ^ c;
		/* rounds t..t+15 with W + K for t+16..t+31 (KP = K + t + 16)
		 * computed in the slots they have just read */
		for (kp = sha512_k + 16; kp < sha512_k + 80; kp += 16) {
			RND64X2(0, a, b, c, d, e, f, g, h);
			SCHED64X2(0, w0, w1, w4, w5, w7);
			RND64X2(2, g, h, a, b, c, d, e, f);
			SCHED64X2(2, w1, w2, w5, w6, w0);
			RND64X2(4, e, f, g, h, a, b, c, d);
			SCHED64X2(4, w2, w3, w6, w7, w1);
			RND64X2(6, c, d, e, f, g, h, a, b);
			SCHED64X2(6, w3, w4, w7, w0, w2);
			RND64X2(8, a, b, c, d, e, f, g, h);
			SCHED64X2(8, w4, w5, w0, w1, w3);
			RND64X2(10, g, h, a, b, c, d, e, f);
			SCHED64X2(10, w5, w6, w1, w2, w4);
			RND64X2(12, e, f, g, h, a, b, c, d);
			SCHED64X2(12, w6, w7, w2, w3, w5);
			RND64X2(14, c, d, e, f, g, h, a, b);
			SCHED64X2(14, w7, w0, w3, w4, w6);
		}
		/* rounds 64..79 */
		RND64X2(0, a, b, c, d, e, f, g, h);
		RND64X2(2, g, h, a, b, c, d, e, f);
		RND64X2(4, e, f, g, h, a, b, c, d);
		RND64X2(6, c, d, e, f, g, h, a, b);
		RND64X2(8, a, b, c, d, e, f, g, h);
		RND64X2(10, g, h, a, b, c, d, e, f);
		RND64X2(12, e, f, g, h, a, b, c, d);
		RND64X2(14, c, d, e, f, g, h, a, b);
		/* step 4 */
		s[0] += a;
		s[1] += b;
		s[2] += c;
		s[3] += d;
		s[4] += e;
		s[5] += f;
		s[6] += g;
		s[7] += h;
	}
	ps_wipe(wk, sizeof wk);
}

static __attribute__((noinline)) void avx_sha512(const uint8_t *in, size_t n, uint8_t *out,
                                                 int is384)
{
	uint64_t s[8];
	uint8_t tail[256];
	size_t full = n / 128, rest = n % 128, tl;
	uint64_t bits = (uint64_t)n << 3, bits_hi = (uint64_t)n >> 61;
	int i;

	memcpy(s, sha512_h0[is384 != 0], sizeof s);
	if (full)
		avx_blocks(s, in, full);
	/* 5.1.2: the message, a 1 bit, zeros, then its length in bits as a
	 * 128-bit big-endian number, to a multiple of 1024 bits */
	if (rest)
		memcpy(tail, in + full * 128, rest);
	tail[rest] = 0x80;
	tl = rest + 1 + 16 <= 128 ? 128 : 256;
	memset(tail + rest + 1, 0, tl - rest - 1);
	for (i = 0; i < 8; i++) {
		tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
		tail[tl - 9 - i] = (uint8_t)(bits_hi >> (8 * i));
	}
	avx_blocks(s, tail, tl / 128);
	/* 6.4.2 step 4's H as big-endian words; six of them for SHA-384
	 * (6.5.2) */
	for (i = 0; i < (is384 ? 48 : 64); i++)
		out[i] = (uint8_t)(s[i / 8] >> (56 - 8 * (i % 8)));
	ps_wipe(tail, sizeof tail);
	ps_wipe(s, sizeof s);
}

/* Note 5: overwrites the stack below the caller's frame, where the frames
 * of avx_sha512 and avx_blocks were (what the compiler spilled there).
 * They take about 0.9 KB with GCC 12 and clang 14 at -O2, 2.3 KB with
 * ASan; 4 KB unoptimised, hence the larger wipe there. */
#ifdef __OPTIMIZE__
#define STACK_WIPE_BYTES 4096
#else
#define STACK_WIPE_BYTES 16384
#endif
static __attribute__((noinline)) void stack_wipe(void)
{
	uint8_t below[STACK_WIPE_BYTES];

	ps_wipe(below, sizeof below);
}
#endif /* PS_SHA_X86 */

/* Note 6: the streaming form, NI's blocks as they come. */
void ps_sha256_stream_start(ps_sha256_stream *st, int ni)
{
	static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memset(st, 0, sizeof *st);
#ifdef PS_SHA_X86
	st->ni = ni;
#else
	(void)ni;
#endif
	memcpy(st->s, h0, sizeof h0);
	mbedtls_sha256_init(&st->mc);
	if (!st->ni)
		(void)ps_sha256_starts(&st->mc);
}

void ps_sha256_stream_update(ps_sha256_stream *st, const void *in, size_t n)
{
	const uint8_t *p = in;

	if (!st->ni) {
		(void)ps_sha256_update(&st->mc, p, n);
		return;
	}
#ifdef PS_SHA_X86
	st->total += n;
	if (st->n) {
		size_t k = 64 - st->n < n ? 64 - st->n : n;
		memcpy(st->buf + st->n, p, k);
		st->n += k;
		p += k;
		n -= k;
		if (st->n < 64)
			return;
		ni_blocks(st->s, st->buf, 1, NULL);
		st->n = 0;
	}
	if (n >= 64)
		ni_blocks(st->s, p, n / 64, NULL);
	memcpy(st->buf, p + n / 64 * 64, n % 64);
	st->n = n % 64;
#endif
}

void ps_sha256_stream_finish(ps_sha256_stream *st, uint8_t out[32])
{
	if (!st->ni) {
		(void)ps_sha256_finish(&st->mc, out);
		mbedtls_sha256_free(&st->mc);
		return;
	}
#ifdef PS_SHA_X86
	{
		/* 5.1.1 as in ni_sha256 */
		uint8_t tail[128];
		uint64_t bits = st->total * 8;
		size_t tl = st->n + 1 + 8 <= 64 ? 64 : 128;
		int i;

		memcpy(tail, st->buf, st->n);
		tail[st->n] = 0x80;
		memset(tail + st->n + 1, 0, tl - st->n - 1);
		for (i = 0; i < 8; i++)
			tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
		ni_blocks(st->s, tail, tl / 64, out);
		ps_wipe(tail, sizeof tail);
	}
#endif
	mbedtls_sha256_free(&st->mc);
	ps_wipe(st->buf, sizeof st->buf);
}

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

/* Note 6: SHA-384/512 streaming. */
void ps_sha512_stream_start(ps_sha512_stream *st, unsigned cpu, int is384)
{
	memset(st, 0, sizeof *st);
	st->is384 = is384 != 0;
#ifdef PS_SHA_X86
	st->avx = (cpu & (PS_CPU_AVX | PS_CPU_BMI2)) == (PS_CPU_AVX | PS_CPU_BMI2);
	memcpy(st->s, sha512_h0[st->is384], sizeof st->s);
#else
	(void)cpu;
#endif
	mbedtls_sha512_init(&st->mc);
	if (!st->avx)
		(void)ps_sha512_starts(&st->mc, st->is384);
}

void ps_sha512_stream_update(ps_sha512_stream *st, const void *in, size_t n)
{
	const uint8_t *p = in;

	if (!st->avx) {
		(void)ps_sha512_update(&st->mc, p, n);
		return;
	}
#ifdef PS_SHA_X86
	st->total += n;
	if (st->n) {
		size_t k = 128 - st->n < n ? 128 - st->n : n;
		memcpy(st->buf + st->n, p, k);
		st->n += k;
		p += k;
		n -= k;
		if (st->n < 128)
			return;
		avx_blocks(st->s, st->buf, 1);
		st->n = 0;
	}
	if (n >= 128)
		avx_blocks(st->s, p, n / 128);
	memcpy(st->buf, p + n / 128 * 128, n % 128);
	st->n = n % 128;
#endif
}

void ps_sha512_stream_finish(ps_sha512_stream *st, uint8_t *out)
{
	if (!st->avx) {
		(void)ps_sha512_finish(&st->mc, out);
		mbedtls_sha512_free(&st->mc);
		return;
	}
#ifdef PS_SHA_X86
	{
		/* 5.1.2 as in avx_sha512 (the length below 2^61 bytes) */
		uint8_t tail[256];
		uint64_t bits = st->total << 3, bits_hi = st->total >> 61;
		size_t tl = st->n + 1 + 16 <= 128 ? 128 : 256;
		int i;

		memcpy(tail, st->buf, st->n);
		tail[st->n] = 0x80;
		memset(tail + st->n + 1, 0, tl - st->n - 1);
		for (i = 0; i < 8; i++) {
			tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
			tail[tl - 9 - i] = (uint8_t)(bits_hi >> (8 * i));
		}
		avx_blocks(st->s, tail, tl / 128);
		for (i = 0; i < (st->is384 ? 48 : 64); i++)
			out[i] = (uint8_t)(st->s[i / 8] >> (56 - 8 * (i % 8)));
		ps_wipe(tail, sizeof tail);
	}
#endif
	mbedtls_sha512_free(&st->mc);
	ps_wipe(st->buf, sizeof st->buf);
}

int ps_sha512_hw(unsigned cpu, const void *in, size_t n, uint8_t *out, int is384)
{
#ifdef PS_SHA_X86
	if ((cpu & (PS_CPU_AVX | PS_CPU_BMI2)) == (PS_CPU_AVX | PS_CPU_BMI2)) {
		avx_sha512(in, n, out, is384);
		stack_wipe();
		return 0;
	}
#else
	(void)cpu;
#endif
	return ps_sha512(in, n, out, is384);
}
