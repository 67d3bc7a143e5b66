/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu.h - what the CPU can run: the one CPUID probe of the library
 * (cpu.c), kept once per context (ps_cpu_bits), for the AES engine
 * (aesmb.c, given the bits by sec.c), the password hash's kernels
 * (kdf.c: sha2.c's SHA-256 and SHA-384/512, aesmb.c's AES-128 chain) and
 * the rewrite's plaintext sum (rwcheck.c note 8).
 */
#ifndef PS_CPU_H
#define PS_CPU_H

/* The CPU kernels of the password hash (sha2.c, aesmb.c's AES-128 chain)
 * and the register wipe are built for x86-64 with GCC >= 8 or clang >= 6
 * only: on i386 the compiler spills their XMM registers (password bytes,
 * round keys) to the stack, where nothing wipes them. */
#if defined(__x86_64__) && \
	((defined(__clang__) && __clang_major__ >= 6) || \
	 (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 8))
#define PS_X86_KERNELS 1
#endif

enum {
	PS_CPU_AESNI = 1u << 0,   /* AES-NI and SSE2 */
	PS_CPU_VAES = 1u << 1,    /* VAES and AVX2, with the OS saving YMM state */
	PS_CPU_SHA = 1u << 2,     /* SHA extensions, SSSE3 and SSE4.1 */
	PS_CPU_AVX = 1u << 3,     /* AVX, with the OS saving YMM state */
	PS_CPU_AVX512 = 1u << 4,  /* AVX-512F, with the OS saving ZMM state */
	PS_CPU_AVX2 = 1u << 5,    /* AVX2, with the OS saving YMM state (rwcheck.c's sum) */
	PS_CPU_BMI2 = 1u << 6,    /* BMI2: RORX (sha2.c's SHA-384/512 rounds, with AVX) */
};

/* The PS_CPU_* bits of this CPU (0 on other architectures or compilers).
 * Asks CPUID, which traps to the hypervisor in a VM (tens of
 * microseconds): the library asks ps_cpu_bits instead. */
unsigned ps_cpu_probe(void);

/* ps_cpu_probe's answer, made once per context and kept in it (ctx->cpu,
 * bit 31 = made; cpu.c note 3); a fresh probe when CTX is NULL. */
struct pdfstamp_ctx;
unsigned ps_cpu_bits(struct pdfstamp_ctx *ctx);

/* Zeroes the vector registers this CPU has (BITS from ps_cpu_probe: all
 * 32 ZMM with AVX-512, else the 16 YMM, else the 16 XMM): after a
 * password hash, so that what they held (glibc's memcpy moves K1 through
 * them) cannot be saved later to some stack by the lazy binder or a signal
 * frame (cpu.c note 4).  Nothing where PS_X86_KERNELS is not defined. */
void ps_cpu_wipe_vectors(unsigned bits);

#endif
