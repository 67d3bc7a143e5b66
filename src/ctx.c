/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctx.c - the library context: error slot, warnings, DRBG and IV pool
 * (rng.h), and ps_wipe (wipe.h).
 *
 * One context per thread; nothing here is global.  The CTR-DRBG is seeded
 * once, lazily, on the first request for random bytes, from the kernel's
 * generator (os_entropy: a system call and a DRBG instantiation, which
 * per object would add 412,000 of each to a rewrite of the README's
 * reference archive), and IVs are drawn from a 1 KiB pool refilled with
 * one DRBG request (64 IVs).
 *
 * Fork safety (issue 11): fork() duplicates the DRBG state and the pool, so
 * without care parent and child would write the same IVs and derive the
 * same "random" values.  Hence:
 *  - the context records the pid that seeded its DRBG; every ps_random()
 *    compares getpid() (one system call per DRBG request, about 0.2 us)
 *    and in a new process reseeds with fresh entropy from
 *    the OS, the pid as additional input, and drops the pool;
 *  - the pool's page is MADV_WIPEONFORK, so a child finds it zeroed (its
 *    `live` marker too) and refills it: the per-IV path stays free of
 *    system calls.  Where the kernel refuses the advice, ps_random_iv()
 *    calls getpid() per IV instead;
 *  - file keys do not come from the DRBG at all but from getrandom(2)
 *    (ps_random_os), which no fork can duplicate.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef HAVE_GETRANDOM
#include <sys/random.h>
#endif

#include "ps.h"
#include "rng.h"

#define PS_IVPAGE_LIVE 0x49565021u  /* any non-zero value: a wiped page reads 0 */

const char *pdfstamp_version(void)
{
	return PACKAGE_VERSION;
}

const char *pdfstamp_strerror(int code)
{
	switch (code) {
	case PDFSTAMP_OK: return "success";
	case PDFSTAMP_E_IO: return "I/O error";
	case PDFSTAMP_E_NOMEM: return "out of memory";
	case PDFSTAMP_E_INTERNAL: return "internal error";
	case PDFSTAMP_E_USAGE: return "invalid argument";
	case PDFSTAMP_E_PASSWORD: return "wrong password";
	case PDFSTAMP_E_FORMAT: return "malformed PDF";
	case PDFSTAMP_E_UNSUPPORTED: return "unsupported PDF feature";
	case PDFSTAMP_E_PERM: return "operation not permitted";
	default: return "unknown error";
	}
}

int pdfstamp_ctx_new(pdfstamp_ctx **out)
{
	pdfstamp_ctx *ctx;

	*out = NULL;
	ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return PDFSTAMP_E_NOMEM;
	ctx->rng = calloc(1, sizeof *ctx->rng);
	if (!ctx->rng) {
		free(ctx);
		return PDFSTAMP_E_NOMEM;
	}
	ctx->rng->ivpos = PS_IVPOOL_SIZE; /* empty pool */
	*out = ctx;
	return 0;
}

void pdfstamp_ctx_free(pdfstamp_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->rng->drbg_ready)
		mbedtls_ctr_drbg_free(&ctx->rng->drbg);
	if (ctx->rng->iv) {
		ps_wipe(ctx->rng->iv, sizeof *ctx->rng->iv);
		if (ctx->rng->iv_maplen)
			munmap(ctx->rng->iv, ctx->rng->iv_maplen);
		else
			free(ctx->rng->iv);
	}
	ps_wipe(ctx->rng, sizeof *ctx->rng);
	free(ctx->rng);
	ps_wipe(ctx, sizeof *ctx);
	free(ctx);
}

const char *pdfstamp_ctx_errmsg(const pdfstamp_ctx *ctx)
{
	return ctx ? ctx->errmsg : "";
}

int pdfstamp_ctx_errcode(const pdfstamp_ctx *ctx)
{
	return ctx ? ctx->errcode : 0;
}

void pdfstamp_ctx_set_warn(pdfstamp_ctx *ctx, pdfstamp_warn_fn fn, void *userdata)
{
	ctx->warn = fn;
	ctx->warn_ud = userdata;
}

void pdfstamp_ctx_set_group(pdfstamp_ctx *ctx, pdfstamp_group *group)
{
	ctx->group = group;
}

int pdfstamp_ctx_errhint(const pdfstamp_ctx *ctx)
{
	return ctx ? ctx->errhint : PDFSTAMP_HINT_NONE;
}

int ps_err(ps_ctx *ctx, int code, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return code;
	ctx->errcode = code;
	ctx->errhint = PDFSTAMP_HINT_NONE;
	va_start(ap, fmt);
	vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
	va_end(ap);
	return code;
}

int ps_err_hint(ps_ctx *ctx, int hint, int code, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return code;
	ctx->errcode = code;
	ctx->errhint = hint;
	va_start(ap, fmt);
	vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
	va_end(ap);
	return code;
}

int ps_err_wrap(ps_ctx *ctx, int code, const char *fmt, ...)
{
	char prefix[128], old[sizeof ctx->errmsg];
	va_list ap;

	if (!ctx)
		return code;
	memcpy(old, ctx->errmsg, sizeof old); /* never format a buffer into itself */
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	ctx->errcode = code;
	snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s: %s", prefix, old);
	return code;
}

void ps_warn(ps_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	char msg[256];

	if (!ctx || !ctx->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ctx->warn(ctx->warn_ud, msg);
}

void ps_wipe(void *p, size_t n)
{
	if (!p || !n)
		return;
#ifdef HAVE_EXPLICIT_BZERO
	explicit_bzero(p, n);
#else
	{
		/* A volatile function pointer keeps the compiler from proving the
		 * memset dead (the mbedTLS platform_util.c technique). */
		static void *(*const volatile memset_v)(void *, int, size_t) = memset;
		memset_v(p, 0, n);
	}
#endif
}

/* Personalisation (seed) or additional input (reseed): a label and the
 * pid, so that even two processes whose entropy sources misbehaved alike
 * would not run the same DRBG stream. */
static size_t drbg_label(uint8_t out[64], const char *label, pid_t pid)
{
	size_t n = strlen(label);
	uint64_t v = (uint64_t)(int64_t)pid;
	int i;

	memcpy(out, label, n);
	for (i = 0; i < 8; i++)
		out[n++] = (uint8_t)(v >> (8 * i));
	return n;
}

/* The pool is dropped: nothing drawn before may be handed out again. */
static void ivpool_drop(ps_ctx *ctx)
{
	if (ctx->rng->iv)
		ps_wipe(ctx->rng->iv, sizeof *ctx->rng->iv);
	ctx->rng->ivpos = PS_IVPOOL_SIZE;
}

/* The DRBG's entropy input: the kernel's generator (ps_random_os), which
 * is where mbedtls_entropy_func would gather it from too -- without its
 * accumulator, and without the start-up of the HAVEGE collector that
 * Debian's mbedTLS 2.28 builds in (about a million instructions per
 * context: a third of a stamp's work besides the key derivation). */
static int os_entropy(void *ud, unsigned char *out, size_t len)
{
	return ps_random_os(ud, out, len) < 0 ? MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED : 0;
}

/* Seeds the DRBG on first use (NIST SP 800-90A CTR_DRBG through mbedTLS),
 * and reseeds it from fresh OS entropy when the process is not the one
 * that seeded it: fork() duplicated the state. */
static int drbg_seed(ps_ctx *ctx)
{
	uint8_t pers[64];
	size_t plen;
	pid_t pid = getpid();
	int rc;

	if (ctx->rng->drbg_ready) {
		if (pid == ctx->rng->drbg_pid)
			return 0;
		ivpool_drop(ctx);
		plen = drbg_label(pers, "pdfstamp ctr-drbg reseed after fork", pid);
		rc = mbedtls_ctr_drbg_reseed(&ctx->rng->drbg, pers, plen);
		if (rc != 0)
			return ps_err(ctx, PDFSTAMP_E_INTERNAL,
			              "cannot reseed the random generator after fork "
			              "(mbedTLS -0x%04x)", (unsigned)-rc);
		ctx->rng->drbg_pid = pid;
		return 0;
	}
	plen = drbg_label(pers, "pdfstamp ctr-drbg", pid);
	mbedtls_ctr_drbg_init(&ctx->rng->drbg);
	rc = mbedtls_ctr_drbg_seed(&ctx->rng->drbg, os_entropy, ctx, pers, plen);
	if (rc != 0) {
		mbedtls_ctr_drbg_free(&ctx->rng->drbg);
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              "cannot seed the random generator (mbedTLS -0x%04x)", (unsigned)-rc);
	}
	ctx->rng->drbg_ready = 1;
	ctx->rng->drbg_pid = pid;
	return 0;
}

int ps_random(ps_ctx *ctx, uint8_t *out, size_t n)
{
	int rc;

	if ((rc = drbg_seed(ctx)) < 0)
		return rc;
	while (n > 0) {
		size_t k = n > MBEDTLS_CTR_DRBG_MAX_REQUEST ? MBEDTLS_CTR_DRBG_MAX_REQUEST : n;
		rc = mbedtls_ctr_drbg_random(&ctx->rng->drbg, out, k);
		if (rc != 0)
			return ps_err(ctx, PDFSTAMP_E_INTERNAL,
			              "random generator failed (mbedTLS -0x%04x)", (unsigned)-rc);
		out += k;
		n -= k;
	}
	return 0;
}

/* The pool's page: its own mapping, wiped in a child of fork(). */
static int ivpage_alloc(ps_ctx *ctx)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = sizeof(ps_ivpage);
	void *p;

	if (pg > 0)
		len = (len + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		ctx->rng->iv = p;
		ctx->rng->iv_maplen = len;
#ifdef MADV_WIPEONFORK
		ctx->rng->iv_wipeonfork = madvise(p, len, MADV_WIPEONFORK) == 0;
#endif
		return 0;
	}
	ctx->rng->iv = calloc(1, sizeof *ctx->rng->iv);
	if (!ctx->rng->iv)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	ctx->rng->iv_maplen = 0;
	ctx->rng->iv_wipeonfork = 0;
	return 0;
}

int ps_random_iv(ps_ctx *ctx, uint8_t iv[16])
{
	int rc;

	if (!ctx->rng->iv && (rc = ivpage_alloc(ctx)) < 0)
		return rc;
	/* A wiped page (fork, MADV_WIPEONFORK) reads live == 0; without the
	 * advice, the pid tells. */
	if (ctx->rng->iv->live != PS_IVPAGE_LIVE ||
	    (!ctx->rng->iv_wipeonfork && getpid() != ctx->rng->drbg_pid))
		ivpool_drop(ctx);
	if (ctx->rng->ivpos + 16 > PS_IVPOOL_SIZE) {
		/* ps_random reseeds first if the process changed */
		if ((rc = ps_random(ctx, ctx->rng->iv->pool, PS_IVPOOL_SIZE)) < 0)
			return rc;
		ctx->rng->iv->live = PS_IVPAGE_LIVE;
		ctx->rng->ivpos = 0;
	}
	memcpy(iv, ctx->rng->iv->pool + ctx->rng->ivpos, 16);
	ps_wipe(ctx->rng->iv->pool + ctx->rng->ivpos, 16); /* an IV is used once */
	ctx->rng->ivpos += 16;
	return 0;
}

int ps_random_os(ps_ctx *ctx, uint8_t *out, size_t n)
{
	size_t got = 0;
	int fd = -1;

	while (got < n) {
		ssize_t k = -1;
#ifdef HAVE_GETRANDOM
		if (fd < 0) {
			/* blocks only until the kernel's pool is initialised, once
			 * per boot; short reads and EINTR just go round again */
			k = getrandom(out + got, n - got, 0);
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && errno != ENOSYS) {
				ps_wipe(out, got);
				return ps_err(ctx, PDFSTAMP_E_INTERNAL, "getrandom failed: %s",
				              strerror(errno));
			}
		}
#endif
		if (k < 0 && fd < 0) {
			fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				ps_wipe(out, got);
				return ps_err(ctx, PDFSTAMP_E_INTERNAL,
				              "cannot open /dev/urandom: %s", strerror(errno));
			}
		}
		if (fd >= 0) {
			k = read(fd, out + got, n - got);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				int e = k < 0 ? errno : EIO;
				close(fd);
				ps_wipe(out, got);
				return ps_err(ctx, PDFSTAMP_E_INTERNAL,
				              "cannot read /dev/urandom: %s", strerror(e));
			}
		}
		got += (size_t)k;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
