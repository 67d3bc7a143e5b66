/* SPDX-License-Identifier: Apache-2.0 */
/* rng.h - internal: the context's random state (ctx.c; tests look inside).
 * Kept out of ps.h so that no module but ctx.c sees mbedTLS's DRBG types. */
#ifndef PS_RNG_H
#define PS_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <mbedtls/ctr_drbg.h>

#define PS_IVPOOL_SIZE 1024 /* 64 IVs per DRBG request (MBEDTLS_CTR_DRBG_MAX_REQUEST) */

/* The IV pool has a page of its own, marked MADV_WIPEONFORK where the
 * kernel can (Linux 4.14): a child of fork() finds it zeroed, `live`
 * included, and refills it from a reseeded DRBG without a system call on
 * the IV path (ctx.c). */
typedef struct ps_ivpage {
	uint8_t pool[PS_IVPOOL_SIZE];
	uint32_t live;               /* PS_IVPAGE_LIVE while the pool is this process's */
} ps_ivpage;

struct ps_rng {
	int drbg_ready;
	pid_t drbg_pid;              /* the process that last (re)seeded the DRBG */
	mbedtls_ctr_drbg_context drbg;
	ps_ivpage *iv;               /* NULL until the first IV */
	size_t iv_maplen;            /* mmap'ed length, 0 if malloc'ed */
	int iv_wipeonfork;           /* the page is MADV_WIPEONFORK; else getpid() per IV */
	size_t ivpos;                /* next unused byte of iv->pool */
};

#endif
