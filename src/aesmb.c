/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aesmb.c - multi-lane AES-256-CBC engine (issue 6).
 *
 * DESIGN NOTES
 *
 *  1. Why lanes.  CBC encryption (NIST SP 800-38A 6.2: C_i = E_K(P_i ^ C_i-1))
 *     is a serial chain: one block costs the full AES latency, 14 rounds of
 *     4 cycles on the CPUs here, about 0.85 GB/s.  AESENC can start two
 *     rounds per cycle, so 8 independent chains (objects) fill the pipeline
 *     (AES-NI, xmm) and 16 fill it twice over with VAES (two blocks per ymm
 *     register).  CBC decryption (P_i = D_K(C_i) ^ C_i-1) has no chain, so
 *     one object's blocks are decrypted 8 (xmm) or 16 (ymm) at a time.
 *  2. Kernels.  AES-256 round keys come from our own key expansion
 *     (FIPS-197 5.2, with AESKEYGENASSIST); decryption keys for the
 *     equivalent inverse cipher (FIPS-197 5.3.5) are AESIMC of rounds
 *     13..1, with rounds 14 and 0 unchanged.  Both are checked against
 *     mbedTLS and the FIPS-197 C.3 vector by tests/check_aesmb.c.  No kernel
 *     does a table lookup or a key- or data-dependent branch.
 *  3. Scheduler (encrypt).  Lanes hold (job, byte offset, blocks left, chain
 *     value).  Each step runs every active lane for as many blocks as the
 *     shortest one has left, with no per-block bookkeeping; then lanes whose
 *     job ended store the final chain value in job->iv and take the next job
 *     (jobs shorter than a block are skipped, their iv untouched).  Jobs are
 *     taken longest first (order_jobs: a stable bucket sort by the bit
 *     length of the block count, exact within the longest bucket), the
 *     classic LPT rule: the large objects of a batch start together and run
 *     side by side, and the small ones fill the lanes that free up, so the
 *     batch ends with its lanes nearly level instead of one large object
 *     running alone at the end.  The one exception is a job longer than all
 *     the others together (divided among the other lanes): CBC encryption of
 *     one chain is serial, so nothing can shorten it.  When fewer jobs than
 *     lanes remain, a narrower kernel runs (16 -> 8 -> 4 -> 2 -> 1); the few
 *     spare lanes of a kernel duplicate lane 0 (same input, output and chain
 *     value, so they write identical bytes) instead of branching.  Because
 *     every kernel of at most 16 lanes is latency bound, a spare lane costs
 *     loads and stores but no time; a step's cost is its block count (two
 *     groups of 8: twice that), which ps_aes_batch_stats reports so that
 *     tests can check the schedule without timing it.
 *  4. Aliasing.  Within a kernel step all loads of a step come before its
 *     stores in program order, so OUT == IN works for every job and for
 *     decrypt (the next chain value is read before the block is
 *     overwritten).  Partial overlaps are not supported.
 *  5. Dispatch.  Kernels carry per-function target attributes, so the rest
 *     of the build needs no -m flags; the caller's PS_CPU_* bits (cpu.c's
 *     CPUID and XGETBV probe, made once per context: ps_cpu_bits) decide
 *     at init which kind may run; the engine never probes.  Non-x86 builds
 *     compile only the mbedTLS path.  PDFSTAMP_AES is read here alone
 *     (ps_aes_env_kind), by the engine's choice and by kdf.c, whose
 *     password-hash kernels it turns off when it says mbedtls.
 *  6. Secrets.  The round keys live only in the engine, which free() wipes.
 *  7. Placement.  Sixteen lanes whose buffers are equal modulo 4 KiB (for
 *     example separately malloc'd large objects, page aligned) crowd one L1
 *     set with 32 streams and run at a quarter of the speed (measured: 2.4
 *     against 9.7 GB/s); eight such lanes are barely hurt.  So before each
 *     16-lane step the scheduler counts streams per L1 set and, when one
 *     set holds more than 8, runs the lanes as two groups of 8 instead
 *     (6.0 GB/s on that layout).  Callers should still stagger buffers.
 *  8. The one AES-128 of the project (ps_aes128_cbc_encrypt): Algorithm
 *     2.B step c (ISO 32000-2 7.6.4.3.4) encrypts ~6 KB as one CBC chain,
 *     64 or more times per password tried, under a key that changes every
 *     round.  Nothing can run beside it, so it is the serial kernel: the
 *     FIPS-197 5.2 expansion for Nk = 4 with AESKEYGENASSIST, then 10
 *     AESENC per block, ~3x faster than mbedTLS's call per block.  The
 *     schedule is built in the caller's locked scratch and wiped there.
 *     Tested against SP 800-38A F.2.1 and mbedTLS (tests/check_aesmb.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pdfstamp.h"   /* error codes */
#include "wipe.h"
#include "aesmb.h"
#include "cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && \
	((defined(__clang__) && __clang_major__ >= 6) || \
	 (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 8))
#define PS_AES_X86 1
#include <immintrin.h>
#define TGT_NI __attribute__((target("aes,sse2")))
#define TGT_VAES __attribute__((target("aes,sse2,avx,avx2,vaes")))
#define INLINE_ALWAYS inline __attribute__((always_inline))
#endif

/* ---- kind selection ----------------------------------------------------- */

/* Bit K set when kind K can run on a CPU and OS with the PS_CPU_* bits
 * CPU (cpu.h). */
static unsigned cpu_kinds(unsigned cpu)
{
	unsigned mask = 1u << PS_AES_MBEDTLS;
#ifdef PS_AES_X86
	if (cpu & PS_CPU_AESNI)
		mask |= 1u << PS_AES_AESNI8;
	if (cpu & PS_CPU_VAES)
		mask |= 1u << PS_AES_VAES16;
#else
	(void)cpu;
#endif
	return mask;
}

int ps_aes_env_kind(void)
{
	const char *s = getenv("PDFSTAMP_AES");

	if (!s)
		return -1;
	if (!strcmp(s, "mbedtls"))
		return PS_AES_MBEDTLS;
	if (!strcmp(s, "aesni") || !strcmp(s, "aesni-8"))
		return PS_AES_AESNI8;
	if (!strcmp(s, "vaes") || !strcmp(s, "vaes-16"))
		return PS_AES_VAES16;
	return -1;   /* "auto", empty or unknown: automatic choice */
}

static int pick_kind(int prefer, unsigned cpu)
{
	unsigned m = cpu_kinds(cpu);

	if (prefer < 0)
		prefer = ps_aes_env_kind();
	if (prefer >= PS_AES_MBEDTLS && prefer <= PS_AES_VAES16 && (m & (1u << prefer)))
		return prefer;
	if (m & (1u << PS_AES_VAES16))
		return PS_AES_VAES16;
	if (m & (1u << PS_AES_AESNI8))
		return PS_AES_AESNI8;
	return PS_AES_MBEDTLS;
}

int ps_aes_engine_best(unsigned cpu)
{
	return pick_kind(-1, cpu);
}

int ps_aes_engine_supported(int kind, unsigned cpu)
{
	if (kind < PS_AES_MBEDTLS || kind > PS_AES_VAES16)
		return 0;
	return (cpu_kinds(cpu) >> kind) & 1u;
}

const char *ps_aes_engine_name(int kind)
{
	switch (kind) {
	case PS_AES_MBEDTLS:
		return "mbedtls";
	case PS_AES_AESNI8:
		return "aesni-8";
	case PS_AES_VAES16:
		return "vaes-16";
	}
	return "unknown";
}

/* ---- AES-NI (xmm) kernels ------------------------------------------------ */

#ifdef PS_AES_X86

static INLINE_ALWAYS TGT_NI __m128i ks_mix(__m128i k, __m128i t)
{
	/* w[i] = w[i-8] ^ temp, then each next word also xors the previous new
	 * word: a prefix xor of the 4 words of round key i-2. */
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	return _mm_xor_si128(k, t);
}

/* FIPS-197 5.2 for Nk = 8.  Even round keys (word index i mod 8 == 0):
 * temp = SubWord(RotWord(w[i-1])) ^ Rcon, which is dword 3 of
 * AESKEYGENASSIST; odd ones (i mod 8 == 4): temp = SubWord(w[i-1]), dword 2
 * of AESKEYGENASSIST with rcon 0. */
#define KS_EVEN(i, rcon) \
	rk[i] = ks_mix(rk[(i) - 2], \
	               _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[(i) - 1], rcon), 0xff))
#define KS_ODD(i) \
	rk[i] = ks_mix(rk[(i) - 2], \
	               _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[(i) - 1], 0), 0xaa))

static TGT_NI void ni_expand(ps_aes_engine *e, const uint8_t key[32])
{
	__m128i *rk = (__m128i *)(void *)e->rk_enc;
	__m128i *dk = (__m128i *)(void *)e->rk_dec;
	int i;

	rk[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
	rk[1] = _mm_loadu_si128((const __m128i *)(const void *)(key + 16));
	KS_EVEN(2, 0x01); KS_ODD(3);
	KS_EVEN(4, 0x02); KS_ODD(5);
	KS_EVEN(6, 0x04); KS_ODD(7);
	KS_EVEN(8, 0x08); KS_ODD(9);
	KS_EVEN(10, 0x10); KS_ODD(11);
	KS_EVEN(12, 0x20); KS_ODD(13);
	KS_EVEN(14, 0x40);
	/* Equivalent inverse cipher (FIPS-197 5.3.5): reversed order, with
	 * InvMixColumns applied to the middle round keys. */
	dk[0] = rk[14];
	for (i = 1; i < 14; i++)
		dk[i] = _mm_aesimc_si128(rk[14 - i]);
	dk[14] = rk[0];
}

static TGT_NI void ni_ecb_encrypt(const ps_aes_engine *e, const uint8_t in[16], uint8_t out[16])
{
	const __m128i *rk = (const __m128i *)(const void *)e->rk_enc;
	__m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)in), rk[0]);
	int r;

	for (r = 1; r < 14; r++)
		x = _mm_aesenc_si128(x, rk[r]);
	x = _mm_aesenclast_si128(x, rk[14]);
	_mm_storeu_si128((__m128i *)(void *)out, x);
}

#ifdef PS_X86_KERNELS
/* FIPS-197 5.2 for Nk = 4: every round key is temp = SubWord(RotWord(w[i-1]))
 * ^ Rcon (dword 3 of AESKEYGENASSIST) mixed into the previous one. */
#define KS128(i, rcon) \
	k[i] = ks_mix(k[(i) - 1], \
	              _mm_shuffle_epi32(_mm_aeskeygenassist_si128(k[(i) - 1], rcon), 0xff))

/* One AES-128-CBC chain in place (ps_aes128_cbc_encrypt): the schedule goes
 * through W's locked memory, the chain is the latency of 10 AESENC per
 * block. */
static TGT_NI void ni_cbc128(ps_aes128_work *w, const uint8_t key[16], const uint8_t iv[16],
			     uint8_t *buf, size_t nblk)
{
	__m128i *k = (__m128i *)(void *)w->rk;
	__m128i k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, x;

	k[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
	KS128(1, 0x01); KS128(2, 0x02); KS128(3, 0x04); KS128(4, 0x08); KS128(5, 0x10);
	KS128(6, 0x20); KS128(7, 0x40); KS128(8, 0x80); KS128(9, 0x1b); KS128(10, 0x36);
	k0 = k[0]; k1 = k[1]; k2 = k[2]; k3 = k[3]; k4 = k[4]; k5 = k[5];
	k6 = k[6]; k7 = k[7]; k8 = k[8]; k9 = k[9]; k10 = k[10];
	x = _mm_loadu_si128((const __m128i *)(const void *)iv);
	for (; nblk > 0; nblk--, buf += 16) {
		/* SP 800-38A 6.2: C_i = E_K(P_i ^ C_i-1) */
		x = _mm_xor_si128(_mm_xor_si128(x, _mm_loadu_si128(
			(const __m128i *)(const void *)buf)), k0);
		x = _mm_aesenc_si128(x, k1);
		x = _mm_aesenc_si128(x, k2);
		x = _mm_aesenc_si128(x, k3);
		x = _mm_aesenc_si128(x, k4);
		x = _mm_aesenc_si128(x, k5);
		x = _mm_aesenc_si128(x, k6);
		x = _mm_aesenc_si128(x, k7);
		x = _mm_aesenc_si128(x, k8);
		x = _mm_aesenc_si128(x, k9);
		x = _mm_aesenclast_si128(x, k10);
		_mm_storeu_si128((__m128i *)(void *)buf, x);
	}
}
#endif

/* N lanes (N constant after inlining) of CBC encryption for NBLK blocks.
 * CV[l] is lane l's chain value in and out. */
static INLINE_ALWAYS TGT_NI void
ni_enc_lanes(const ps_aes_engine *e, int n, uint8_t (*cv)[16],
	     const uint8_t *const *ip, uint8_t *const *op, size_t nblk)
{
	const __m128i *rkp = (const __m128i *)(const void *)e->rk_enc;
	__m128i k[15], c[8], x[8];
	size_t o, end = nblk * 16;
	int l, r;

#pragma GCC unroll 15
	for (r = 0; r < 15; r++)
		k[r] = _mm_load_si128(rkp + r);
#pragma GCC unroll 8
	for (l = 0; l < n; l++)
		c[l] = _mm_loadu_si128((const __m128i *)(const void *)cv[l]);
	for (o = 0; o < end; o += 16) {
		/* P ^ K0 is off the chain's critical path; then ^ C_i-1. */
#pragma GCC unroll 8
		for (l = 0; l < n; l++)
			x[l] = _mm_xor_si128(c[l], _mm_xor_si128(_mm_loadu_si128(
				(const __m128i *)(const void *)(ip[l] + o)), k[0]));
#pragma GCC unroll 13
		for (r = 1; r < 14; r++) {
#pragma GCC unroll 8
			for (l = 0; l < n; l++)
				x[l] = _mm_aesenc_si128(x[l], k[r]);
		}
#pragma GCC unroll 8
		for (l = 0; l < n; l++) {
			c[l] = _mm_aesenclast_si128(x[l], k[14]);
			_mm_storeu_si128((__m128i *)(void *)(op[l] + o), c[l]);
		}
	}
#pragma GCC unroll 8
	for (l = 0; l < n; l++)
		_mm_storeu_si128((__m128i *)(void *)cv[l], c[l]);
}

static TGT_NI void ni_enc8(const ps_aes_engine *e, uint8_t (*cv)[16], const uint8_t *const *ip,
			   uint8_t *const *op, size_t nblk)
{
	ni_enc_lanes(e, 8, cv, ip, op, nblk);
}

static TGT_NI void ni_enc4(const ps_aes_engine *e, uint8_t (*cv)[16], const uint8_t *const *ip,
			   uint8_t *const *op, size_t nblk)
{
	ni_enc_lanes(e, 4, cv, ip, op, nblk);
}

static TGT_NI void ni_enc2(const ps_aes_engine *e, uint8_t (*cv)[16], const uint8_t *const *ip,
			   uint8_t *const *op, size_t nblk)
{
	ni_enc_lanes(e, 2, cv, ip, op, nblk);
}

static TGT_NI void ni_enc1(const ps_aes_engine *e, uint8_t (*cv)[16], const uint8_t *const *ip,
			   uint8_t *const *op, size_t nblk)
{
	ni_enc_lanes(e, 1, cv, ip, op, nblk);
}

/* Decrypts N blocks (N constant after inlining) at IN into OUT; *PREV is the
 * ciphertext block before them and becomes the last one. */
static INLINE_ALWAYS TGT_NI void
ni_dec_group(const __m128i *k, int n, __m128i *prev, const uint8_t *in, uint8_t *out)
{
	__m128i c[8], x[8];
	int l, r;

#pragma GCC unroll 8
	for (l = 0; l < n; l++) {
		c[l] = _mm_loadu_si128((const __m128i *)(const void *)(in + 16 * l));
		x[l] = _mm_xor_si128(c[l], k[0]);
	}
#pragma GCC unroll 13
	for (r = 1; r < 14; r++) {
#pragma GCC unroll 8
		for (l = 0; l < n; l++)
			x[l] = _mm_aesdec_si128(x[l], k[r]);
	}
#pragma GCC unroll 8
	for (l = 0; l < n; l++)
		x[l] = _mm_aesdeclast_si128(x[l], k[14]);
	x[0] = _mm_xor_si128(x[0], *prev);
#pragma GCC unroll 8
	for (l = 1; l < n; l++)
		x[l] = _mm_xor_si128(x[l], c[l - 1]);
	*prev = c[n - 1];
#pragma GCC unroll 8
	for (l = 0; l < n; l++)
		_mm_storeu_si128((__m128i *)(void *)(out + 16 * l), x[l]);
}

/* Blocks [I, NBLK) of a chain whose previous ciphertext block is PREV:
 * 8 in flight, then the remainder as 4 + 2 + 1. */
static INLINE_ALWAYS TGT_NI void
ni_dec_from(const __m128i *k, __m128i prev, const uint8_t *in, uint8_t *out, size_t i, size_t nblk)
{
	for (; nblk - i >= 8; i += 8)
		ni_dec_group(k, 8, &prev, in + 16 * i, out + 16 * i);
	if (nblk - i >= 4) {
		ni_dec_group(k, 4, &prev, in + 16 * i, out + 16 * i);
		i += 4;
	}
	if (nblk - i >= 2) {
		ni_dec_group(k, 2, &prev, in + 16 * i, out + 16 * i);
		i += 2;
	}
	if (nblk - i >= 1)
		ni_dec_group(k, 1, &prev, in + 16 * i, out + 16 * i);
}

static TGT_NI void ni_dec(const ps_aes_engine *e, const uint8_t iv[16], const uint8_t *in,
			  uint8_t *out, size_t nblk)
{
	const __m128i *dkp = (const __m128i *)(const void *)e->rk_dec;
	__m128i k[15];
	int r;

#pragma GCC unroll 15
	for (r = 0; r < 15; r++)
		k[r] = _mm_load_si128(dkp + r);
	ni_dec_from(k, _mm_loadu_si128((const __m128i *)(const void *)iv), in, out, 0, nblk);
}

/* ---- VAES (ymm) kernels --------------------------------------------------- */

static INLINE_ALWAYS TGT_VAES __m256i load2(const uint8_t *lo, const uint8_t *hi)
{
	return _mm256_inserti128_si256(_mm256_castsi128_si256(
		_mm_loadu_si128((const __m128i *)(const void *)lo)),
		_mm_loadu_si128((const __m128i *)(const void *)hi), 1);
}

static INLINE_ALWAYS TGT_VAES void store2(uint8_t *lo, uint8_t *hi, __m256i v)
{
	_mm_storeu_si128((__m128i *)(void *)lo, _mm256_castsi256_si128(v));
	_mm_storeu_si128((__m128i *)(void *)hi, _mm256_extracti128_si256(v, 1));
}

/* 16 lanes of CBC encryption, lanes 2j and 2j+1 in ymm register j. */
static TGT_VAES void vaes_enc16(const ps_aes_engine *e, uint8_t (*cv)[16], const uint8_t *const *ip,
				uint8_t *const *op, size_t nblk)
{
	const __m128i *rkp = (const __m128i *)(const void *)e->rk_enc;
	__m256i k[15], c[8], x[8];
	size_t o, end = nblk * 16;
	int j, r;

#pragma GCC unroll 15
	for (r = 0; r < 15; r++)
		k[r] = _mm256_broadcastsi128_si256(_mm_load_si128(rkp + r));
#pragma GCC unroll 8
	for (j = 0; j < 8; j++)
		c[j] = load2(cv[2 * j], cv[2 * j + 1]);
	for (o = 0; o < end; o += 16) {
#pragma GCC unroll 8
		for (j = 0; j < 8; j++)
			x[j] = _mm256_xor_si256(c[j], _mm256_xor_si256(
				load2(ip[2 * j] + o, ip[2 * j + 1] + o), k[0]));
#pragma GCC unroll 13
		for (r = 1; r < 14; r++) {
#pragma GCC unroll 8
			for (j = 0; j < 8; j++)
				x[j] = _mm256_aesenc_epi128(x[j], k[r]);
		}
#pragma GCC unroll 8
		for (j = 0; j < 8; j++) {
			c[j] = _mm256_aesenclast_epi128(x[j], k[14]);
			store2(op[2 * j] + o, op[2 * j + 1] + o, c[j]);
		}
	}
#pragma GCC unroll 8
	for (j = 0; j < 8; j++)
		store2(cv[2 * j], cv[2 * j + 1], c[j]);
}

/* One chain, 16 blocks (8 ymm) in flight, the remainder with AES-NI. */
static TGT_VAES void vaes_dec(const ps_aes_engine *e, const uint8_t iv[16], const uint8_t *in,
			      uint8_t *out, size_t nblk)
{
	const __m128i *dkp = (const __m128i *)(const void *)e->rk_dec;
	__m128i k[15], prev = _mm_loadu_si128((const __m128i *)(const void *)iv);
	__m256i kk[15], c[8], p[8], x[8];
	size_t i = 0;
	int j, r;

#pragma GCC unroll 15
	for (r = 0; r < 15; r++) {
		k[r] = _mm_load_si128(dkp + r);
		kk[r] = _mm256_broadcastsi128_si256(k[r]);
	}
	for (; nblk - i >= 16; i += 16) {
		const uint8_t *s = in + 16 * i;
		uint8_t *d = out + 16 * i;

		/* All loads (blocks and their predecessors) before any store. */
#pragma GCC unroll 8
		for (j = 0; j < 8; j++)
			c[j] = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32 * j));
		p[0] = _mm256_inserti128_si256(_mm256_castsi128_si256(prev),
		                               _mm_loadu_si128((const __m128i *)(const void *)s),
		                               1);
#pragma GCC unroll 7
		for (j = 1; j < 8; j++)
			p[j] = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32 * j - 16));
		prev = _mm_loadu_si128((const __m128i *)(const void *)(s + 240));
#pragma GCC unroll 8
		for (j = 0; j < 8; j++)
			x[j] = _mm256_xor_si256(c[j], kk[0]);
#pragma GCC unroll 13
		for (r = 1; r < 14; r++) {
#pragma GCC unroll 8
			for (j = 0; j < 8; j++)
				x[j] = _mm256_aesdec_epi128(x[j], kk[r]);
		}
#pragma GCC unroll 8
		for (j = 0; j < 8; j++) {
			x[j] = _mm256_xor_si256(_mm256_aesdeclast_epi128(x[j], kk[14]), p[j]);
			_mm256_storeu_si256((__m256i *)(void *)(d + 32 * j), x[j]);
		}
	}
	ni_dec_from(k, prev, in, out, i, nblk);
}

#endif /* PS_AES_X86 */

/* ---- scheduler ------------------------------------------------------------ */

#ifdef PS_AES_X86
typedef void (*enc_kernel)(const ps_aes_engine *, uint8_t (*)[16], const uint8_t *const *,
			   uint8_t *const *, size_t);

struct lane {
	size_t job;    /* index into the batch */
	size_t off;    /* bytes done */
	size_t left;   /* whole blocks left */
};

/* Bit length of X (0 for 0). */
static unsigned bitlen(size_t x)
{
	unsigned b = 0;

	while (x) {
		b++;
		x >>= 1;
	}
	return b;
}

/* The order in which the scheduler takes the jobs (note 3): longest
 * first, by the bit length of the block count (a stable bucket sort, O(n)),
 * exactly by length within the longest bucket when it is small.  NULL when
 * out of memory: the jobs are then taken in their own order (only slower). */
static size_t *order_jobs(const ps_aes_job *jobs, size_t n)
{
	size_t cnt[66] = {0}, pos[66], i, k, p = 0, *ord;
	unsigned b, top = 0;

	if (n > SIZE_MAX / sizeof *ord || !(ord = malloc(n * sizeof *ord)))
		return NULL;
	for (i = 0; i < n; i++) {
		b = bitlen(jobs[i].len / 16);
		cnt[b]++;
		if (b > top)
			top = b;
	}
	for (b = 66; b-- > 0;) {
		pos[b] = p;
		p += cnt[b];
	}
	for (i = 0; i < n; i++)
		ord[pos[bitlen(jobs[i].len / 16)]++] = i;
	if (cnt[top] <= 256) {  /* insertion sort of the longest bucket, stable */
		for (i = 1; i < cnt[top]; i++) {
			size_t x = ord[i];
			for (k = i; k > 0 && jobs[ord[k - 1]].len < jobs[x].len; k--)
				ord[k] = ord[k - 1];
			ord[k] = x;
		}
	}
	return ord;
}

/* Moves the batch cursor *NEXT to the next job (in the order ORD, if any)
 * with at least one block and loads it into lane L; returns 0 when none is
 * left. */
static int lane_take(ps_aes_job *jobs, const size_t *ord, size_t n, size_t *next, struct lane *ln,
                     uint8_t cv[16])
{
	while (*next < n) {
		size_t j = ord ? ord[*next] : *next;

		(*next)++;
		if (jobs[j].len >= 16) {
			ln->job = j;
			ln->off = 0;
			ln->left = jobs[j].len / 16;
			memcpy(cv, jobs[j].iv, 16);
			return 1;
		}
	}
	return 0;
}

/* Runs lanes [0, ACT) of the arrays (ACT <= 16) for NBLK blocks with the
 * narrowest kernel that holds them; spare lanes repeat lane 0 exactly
 * (design note 3), so CV, IP and OP must have room for 16 entries. */
static void run_lanes(const ps_aes_engine *e, uint8_t (*cv)[16], const uint8_t **ip, uint8_t **op,
		      int act, size_t nblk)
{
	enc_kernel k;
	int w, l;

	if (act > 8) {
		k = vaes_enc16;
		w = 16;
	} else if (act > 4) {
		k = ni_enc8;
		w = 8;
	} else if (act > 2) {
		k = ni_enc4;
		w = 4;
	} else if (act == 2) {
		k = ni_enc2;
		w = 2;
	} else {
		k = ni_enc1;
		w = 1;
	}
	for (l = act; l < w; l++) {
		ip[l] = ip[0];
		op[l] = op[0];
		memcpy(cv[l], cv[0], 16);
	}
	k(e, cv, ip, op, nblk);
}

/* 1 when the lanes' data crowd one L1 set (address bits 6..11) with more
 * streams than its 8 ways: equal addresses modulo 4 KiB.  Sixteen such lanes
 * run several times slower than two groups of eight (design note 7). */
static int lanes_crowded(const uint8_t *const *ip, uint8_t *const *op, int act)
{
	uint8_t cnt[64];
	int l;

	memset(cnt, 0, sizeof cnt);
	for (l = 0; l < act; l++) {
		if (++cnt[((uintptr_t)ip[l] >> 6) & 63] > 8)
			return 1;
		if (op[l] != ip[l] && ++cnt[((uintptr_t)op[l] >> 6) & 63] > 8)
			return 1;
	}
	return 0;
}

static void sched_encrypt(const ps_aes_engine *e, ps_aes_job *jobs, size_t n, int maxlanes,
			  ps_aes_batch_stats *st)
{
	struct lane ln[16];
	_Alignas(16) uint8_t cv[16][16];
	const uint8_t *ip[16];
	uint8_t *op[16];
	size_t next = 0, m, *ord = n > 1 ? order_jobs(jobs, n) : NULL;
	int act = 0, l;

	while (act < maxlanes && lane_take(jobs, ord, n, &next, &ln[act], cv[act]))
		act++;
	while (act > 0) {
		m = ln[0].left;
		for (l = 0; l < act; l++) {
			if (ln[l].left < m)
				m = ln[l].left;
			ip[l] = jobs[ln[l].job].in + ln[l].off;
			op[l] = jobs[ln[l].job].out + ln[l].off;
		}
		if (act > 8 && lanes_crowded(ip, op, act)) {
			/* Lanes 0..7, then 8..act-1 as a group of its own
			 * (its spare lanes stay below index 16). */
			run_lanes(e, cv, ip, op, 8, m);
			run_lanes(e, cv + 8, ip + 8, op + 8, act - 8, m);
			st->steps += 2 * (uint64_t)m;
		} else {
			run_lanes(e, cv, ip, op, act, m);
			st->steps += m;
		}
		st->blocks += (uint64_t)m * (uint64_t)act;
		for (l = 0; l < act; l++) {
			ln[l].off += m * 16;
			ln[l].left -= m;
		}
		for (l = 0; l < act;) {
			if (ln[l].left) {
				l++;
				continue;
			}
			memcpy(jobs[ln[l].job].iv, cv[l], 16);
			if (lane_take(jobs, ord, n, &next, &ln[l], cv[l])) {
				l++;
				continue;
			}
			/* No job left: the last active lane moves here. */
			act--;
			if (l != act) {
				ln[l] = ln[act];
				memcpy(cv[l], cv[act], 16);
			}
		}
	}
	free(ord);
}
#endif /* PS_AES_X86 */

/* ---- public calls --------------------------------------------------------- */

int ps_aes_engine_init(ps_aes_engine *e, const uint8_t key[32], int prefer, unsigned cpu)
{
	if (!e)
		return PDFSTAMP_E_USAGE;
	memset(e, 0, sizeof *e);
	if (!key)
		return PDFSTAMP_E_USAGE;
	mbedtls_aes_init(&e->mb_enc);
	mbedtls_aes_init(&e->mb_dec);
	if (mbedtls_aes_setkey_enc(&e->mb_enc, key, 256) != 0 ||
	    mbedtls_aes_setkey_dec(&e->mb_dec, key, 256) != 0) {
		ps_aes_engine_free(e);
		return PDFSTAMP_E_INTERNAL;
	}
	e->kind = pick_kind(prefer, cpu);
#ifdef PS_AES_X86
	if (e->kind != PS_AES_MBEDTLS)
		ni_expand(e, key);
#endif
	return 0;
}

void ps_aes_engine_free(ps_aes_engine *e)
{
	if (!e)
		return;
	mbedtls_aes_free(&e->mb_enc);
	mbedtls_aes_free(&e->mb_dec);
	ps_wipe(e, sizeof *e);
}

void ps_aes_cbc_encrypt_batch_stats(const ps_aes_engine *e, ps_aes_job *jobs, size_t n,
                                    ps_aes_batch_stats *st)
{
	ps_aes_batch_stats dummy;
	size_t i;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
#ifdef PS_AES_X86
	if (e->kind == PS_AES_VAES16 || e->kind == PS_AES_AESNI8) {
		sched_encrypt(e, jobs, n, e->kind == PS_AES_VAES16 ? 16 : 8, st);
		return;
	}
#endif
	/* mbedTLS only reads the context; the cast drops const for its API. */
	for (i = 0; i < n; i++) {
		(void)mbedtls_aes_crypt_cbc((mbedtls_aes_context *)&e->mb_enc, MBEDTLS_AES_ENCRYPT,
					    jobs[i].len & ~(size_t)15, jobs[i].iv, jobs[i].in,
					    jobs[i].out);
		st->blocks += jobs[i].len / 16;
		st->steps += jobs[i].len / 16;
	}
}

void ps_aes_cbc_encrypt_batch(const ps_aes_engine *e, ps_aes_job *jobs, size_t n)
{
	ps_aes_cbc_encrypt_batch_stats(e, jobs, n, NULL);
}

void ps_aes_cbc_decrypt(const ps_aes_engine *e, const uint8_t iv[16], const uint8_t *in,
			uint8_t *out, size_t len)
{
	uint8_t ivc[16];

	len &= ~(size_t)15;
	if (len == 0)
		return;
#ifdef PS_AES_X86
	if (e->kind == PS_AES_VAES16) {
		vaes_dec(e, iv, in, out, len / 16);
		return;
	}
	if (e->kind == PS_AES_AESNI8) {
		ni_dec(e, iv, in, out, len / 16);
		return;
	}
#endif
	memcpy(ivc, iv, 16);
	(void)mbedtls_aes_crypt_cbc((mbedtls_aes_context *)&e->mb_dec, MBEDTLS_AES_DECRYPT, len,
				    ivc, in, out);
}

void ps_aes_ecb_encrypt_block(const ps_aes_engine *e, const uint8_t in[16], uint8_t out[16])
{
#ifdef PS_AES_X86
	if (e->kind != PS_AES_MBEDTLS) {
		ni_ecb_encrypt(e, in, out);
		return;
	}
#endif
	(void)mbedtls_aes_crypt_ecb((mbedtls_aes_context *)&e->mb_enc, MBEDTLS_AES_ENCRYPT, in,
	                            out);
}

int ps_aes128_cbc_encrypt(ps_aes128_work *w, int ni, const uint8_t key[16], const uint8_t iv[16],
			  uint8_t *buf, size_t len)
{
	uint8_t ivc[16];
	int rc = 0;

	len &= ~(size_t)15;
#ifdef PS_X86_KERNELS
	if (ni) {
		ni_cbc128(w, key, iv, buf, len / 16);
		ps_wipe(w->rk, sizeof w->rk);
		return 0;
	}
#else
	(void)ni;
#endif
	memcpy(ivc, iv, 16);
	mbedtls_aes_init(&w->mb);
	if (mbedtls_aes_setkey_enc(&w->mb, key, 128) != 0 ||
	    mbedtls_aes_crypt_cbc(&w->mb, MBEDTLS_AES_ENCRYPT, len, ivc, buf, buf) != 0)
		rc = PDFSTAMP_E_INTERNAL;
	mbedtls_aes_free(&w->mb);    /* zeroizes the schedule */
	ps_wipe(ivc, sizeof ivc);
	return rc;
}
