/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu.c - the one CPUID probe (cpu.h).
 *
 * DESIGN NOTES
 *
 *  1. The probe runs on x86 (the AES engine's kernels also build for
 *     i386); the password hash's kernels and the register wipe exist only
 *     for x86-64 (PS_X86_KERNELS, cpu.h).  Elsewhere the answer is 0 and
 *     the portable mbedTLS paths run.
 *  2. AES-NI needs CPUID.1:ECX.AES and EDX.SSE2.  VAES needs, beyond it,
 *     AVX with the OS saving the XMM and YMM state (OSXSAVE, XGETBV XCR0
 *     bits 1 and 2) and CPUID.7.0:EBX.AVX2 and ECX.VAES.  The SHA kernel
 *     needs CPUID.7.0:EBX.SHA (bit 29), SSSE3 and SSE4.1 (XMM only).
 *     AVX2 (the rewrite's plaintext sum) needs the same OS state and
 *     CPUID.7.0:EBX.AVX2.  BMI2 (RORX, general-purpose registers only:
 *     no OS state) is CPUID.7.0:EBX bit 8; the SHA-384/512 kernel wants
 *     it and AVX.
 *  3. No globals: the answer is kept in the context (ctx->cpu, bit 31 set
 *     once made), one probe per context whatever asks (the AES engine's
 *     kernel choice at each document key, the password hash, the register
 *     wipe).  The engine (aesmb.c) takes the bits as an argument and never
 *     probes, so it needs no context; ps_cpu_probe itself is for the
 *     calls that have no context (pdfstamp_aes_engine, tests, benches).
 *  4. Register residue.  Vector registers are not wiped by anyone: glibc's
 *     memcpy leaves the last bytes it moved in them (ZMM16-31 with its
 *     AVX-512 variant), legacy SSE code (AES-NI, SHA-NI) leaves the upper
 *     halves alone, and a new thread starts with a copy of its creator's
 *     registers.  The first call through a lazily bound PLT entry saves
 *     the whole register file on the caller's stack (glibc's
 *     _dl_runtime_resolve_xsavec), as does a signal frame, so password
 *     bytes held there reach unlocked stacks; tests/e2e/secrets.sh found
 *     them on the writeback thread's stack.  ps_cpu_wipe_vectors zeroes
 *     them at the end of each password hash and of each authentication
 *     or new /Encrypt (kdf.c), and the library and the tool are linked
 *     with -z now where the linker takes it (configure.ac), so the lazy
 *     binder never runs in the middle of a hash.  A signal frame during a
 *     hash remains a residual risk.  The instructions are written in
 *     inline assembly, which the assembler takes whatever the compiler's
 *     target, and run only when CPUID and XGETBV say the registers exist;
 *     the function is never inlined, so no caller keeps a vector value
 *     live across it (all are call-clobbered in the SysV ABI).
 */
#include "config.h"

#include "ps.h"
#include "cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && \
	((defined(__clang__) && __clang_major__ >= 6) || \
	 (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 8))
#define PS_CPU_X86 1
#include <cpuid.h>
#ifndef bit_VAES
#define bit_VAES (1 << 9)
#endif
#ifndef bit_SHA
#define bit_SHA (1 << 29)
#endif
#ifndef bit_BMI2
#define bit_BMI2 (1 << 8)
#endif
#ifndef bit_AVX512F
#define bit_AVX512F (1 << 16)
#endif

static unsigned xgetbv0(void)
{
	unsigned lo, hi;

	__asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)hi;
	return lo;
}
#endif

unsigned ps_cpu_probe(void)
{
	unsigned bits = 0;
#ifdef PS_CPU_X86
	unsigned a, b, c, d, c1, d1, xcr0;
	int avx_os;

	if (!__get_cpuid(1, &a, &b, &c1, &d1))
		return 0;
	if ((c1 & bit_AES) && (d1 & bit_SSE2))
		bits |= PS_CPU_AESNI;
	xcr0 = (c1 & bit_OSXSAVE) ? xgetbv0() : 0;
	avx_os = (c1 & bit_AVX) && (xcr0 & 6u) == 6u;
	if (avx_os)
		bits |= PS_CPU_AVX;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return bits;
	/* AVX-512 state: opmask, ZMM0-15 upper halves, ZMM16-31 (XCR0 5-7) */
	if (avx_os && (b & bit_AVX512F) && (xcr0 & 0xe0u) == 0xe0u)
		bits |= PS_CPU_AVX512;
	if (avx_os && (b & bit_AVX2))
		bits |= PS_CPU_AVX2;
	if (b & bit_BMI2)
		bits |= PS_CPU_BMI2;
	if ((bits & PS_CPU_AESNI) && avx_os && (b & bit_AVX2) && (c & bit_VAES))
		bits |= PS_CPU_VAES;
	if ((b & bit_SHA) && (c1 & bit_SSSE3) && (c1 & bit_SSE4_1))
		bits |= PS_CPU_SHA;
#endif
	return bits;
}

unsigned ps_cpu_bits(ps_ctx *ctx)
{
	if (!ctx)
		return ps_cpu_probe();
	if (!(ctx->cpu & 1u << 31))
		ctx->cpu = ps_cpu_probe() | 1u << 31;
	return ctx->cpu & ~(1u << 31);
}

__attribute__((noinline)) void ps_cpu_wipe_vectors(unsigned bits)
{
#ifdef PS_X86_KERNELS
	/* Every vector register is call-clobbered in the SysV ABI, so the
	 * caller keeps nothing there across this call. */
	if (bits & PS_CPU_AVX512) {
		__asm__ __volatile__(
			"vpxord %%zmm0, %%zmm0, %%zmm0\n\tvpxord %%zmm1, %%zmm1, %%zmm1\n\t"
			"vpxord %%zmm2, %%zmm2, %%zmm2\n\tvpxord %%zmm3, %%zmm3, %%zmm3\n\t"
			"vpxord %%zmm4, %%zmm4, %%zmm4\n\tvpxord %%zmm5, %%zmm5, %%zmm5\n\t"
			"vpxord %%zmm6, %%zmm6, %%zmm6\n\tvpxord %%zmm7, %%zmm7, %%zmm7\n\t"
			"vpxord %%zmm8, %%zmm8, %%zmm8\n\tvpxord %%zmm9, %%zmm9, %%zmm9\n\t"
			"vpxord %%zmm10, %%zmm10, %%zmm10\n\tvpxord %%zmm11, %%zmm11, %%zmm11\n\t"
			"vpxord %%zmm12, %%zmm12, %%zmm12\n\tvpxord %%zmm13, %%zmm13, %%zmm13\n\t"
			"vpxord %%zmm14, %%zmm14, %%zmm14\n\tvpxord %%zmm15, %%zmm15, %%zmm15\n\t"
			"vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"
			"vpxord %%zmm18, %%zmm18, %%zmm18\n\tvpxord %%zmm19, %%zmm19, %%zmm19\n\t"
			"vpxord %%zmm20, %%zmm20, %%zmm20\n\tvpxord %%zmm21, %%zmm21, %%zmm21\n\t"
			"vpxord %%zmm22, %%zmm22, %%zmm22\n\tvpxord %%zmm23, %%zmm23, %%zmm23\n\t"
			"vpxord %%zmm24, %%zmm24, %%zmm24\n\tvpxord %%zmm25, %%zmm25, %%zmm25\n\t"
			"vpxord %%zmm26, %%zmm26, %%zmm26\n\tvpxord %%zmm27, %%zmm27, %%zmm27\n\t"
			"vpxord %%zmm28, %%zmm28, %%zmm28\n\tvpxord %%zmm29, %%zmm29, %%zmm29\n\t"
			"vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31"
			::: "memory");
	} else if (bits & PS_CPU_AVX) {
		__asm__ __volatile__("vzeroall" ::: "memory");
	} else {
		__asm__ __volatile__(
			"pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
			"pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
			"pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
			"pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
			"pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"
			"pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15" ::: "memory");
	}
#else
	(void)bits;
#endif
}
