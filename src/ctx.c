/*
 * ctx.c - the library context: error slot, warnings, DRBG and IV pool.
 *
 * One context per thread; nothing here is global.  The CTR-DRBG is seeded
 * once, lazily, on the first request for random bytes (seeding costs about
 * 0.25 ms on these machines, see shared/docs/perf-limits.md 1), and IVs are
 * drawn from a 1 KiB pool refilled with one DRBG request (64 IVs).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

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
	ctx->ivpos = PS_IVPOOL_SIZE; /* empty pool */
	*out = ctx;
	return 0;
}

void pdfstamp_ctx_free(pdfstamp_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->drbg_ready) {
		mbedtls_ctr_drbg_free(&ctx->drbg);
		mbedtls_entropy_free(&ctx->entropy);
	}
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

int ps_err(ps_ctx *ctx, int code, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return code;
	ctx->errcode = code;
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

static int drbg_seed(ps_ctx *ctx)
{
	static const char pers[] = "pdfstamp ctr-drbg";
	int rc;

	if (ctx->drbg_ready)
		return 0;
	mbedtls_entropy_init(&ctx->entropy);
	mbedtls_ctr_drbg_init(&ctx->drbg);
	rc = mbedtls_ctr_drbg_seed(&ctx->drbg, mbedtls_entropy_func, &ctx->entropy,
	                           (const unsigned char *)pers, sizeof pers - 1);
	if (rc != 0) {
		mbedtls_ctr_drbg_free(&ctx->drbg);
		mbedtls_entropy_free(&ctx->entropy);
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "cannot seed the random generator (mbedTLS -0x%04x)",
		              (unsigned)-rc);
	}
	ctx->drbg_ready = 1;
	return 0;
}

int ps_random(ps_ctx *ctx, uint8_t *out, size_t n)
{
	int rc;

	if ((rc = drbg_seed(ctx)) < 0)
		return rc;
	while (n > 0) {
		size_t k = n > MBEDTLS_CTR_DRBG_MAX_REQUEST ? MBEDTLS_CTR_DRBG_MAX_REQUEST : n;
		rc = mbedtls_ctr_drbg_random(&ctx->drbg, out, k);
		if (rc != 0)
			return ps_err(ctx, PDFSTAMP_E_INTERNAL, "random generator failed (mbedTLS -0x%04x)",
			              (unsigned)-rc);
		out += k;
		n -= k;
	}
	return 0;
}

int ps_random_iv(ps_ctx *ctx, uint8_t iv[16])
{
	int rc;

	if (ctx->ivpos + 16 > PS_IVPOOL_SIZE) {
		if ((rc = ps_random(ctx, ctx->ivpool, PS_IVPOOL_SIZE)) < 0)
			return rc;
		ctx->ivpos = 0;
	}
	memcpy(iv, ctx->ivpool + ctx->ivpos, 16);
	ps_wipe(ctx->ivpool + ctx->ivpos, 16); /* an IV is used once */
	ctx->ivpos += 16;
	return 0;
}
