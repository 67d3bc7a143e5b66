/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_envelope.c - libFuzzer target for the /Recipients envelopes of the
 * public-key security handler (envelope.c, rc2.c; issue 33): the CMS
 * EnvelopedData reader with a recipient's key, and the counter.
 *
 * Input: the bytes of one /Recipients string (DER).  The key is the
 * RSA-1024 test key of tests/kat/env/fuzz.key (embedded below, loaded once
 * per process); the seeds are the .der files of tests/kat/env/ (make-seeds.py),
 * the fuzz-*.der ones made for this key, so the key transports and the
 * AES, 3DES and RC2 content paths are reached, the others for r1 and r2
 * (parsing only).
 *
 * Oracles: ps_env_open returns 1, 0, FORMAT, PASSWORD, UNSUPPORTED or
 * NOMEM, never anything else, every error with a message; ps_env_count
 * agrees with it (ps_env_open is FORMAT with *nri 0 exactly when
 * ps_env_count is FORMAT; otherwise *nri is the count); the content is at most
 * PS_ENV_CONTENT_MAX bytes, and all zero after anything but 1.  An opened
 * content goes through ps_env_make to the same certificate and opens
 * again to the same bytes (the writer's output is what the reader reads).
 */
#include "fuzz.h"
#include "envelope.h"
#include "rkey.h"

static const char FZE_KEY[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIICdQIBADANBgkqhkiG9w0BAQEFAASCAl8wggJbAgEAAoGBALpekygLiDxB148B\n"
	"/AQ/1JwGp9199Om/lk8pBfjZThI5J7iQsrnmdrLrEoWwS5p3DcHc4oFnEF099zgl\n"
	"+nBqsrpq5v8Hp8oJV+L7qk3hJQYPKmv48rWaIoPcCdCFzDNHWr4Rvxe7PtlDOVRw\n"
	"5H1Axy2opSevuleR+yMits2odqcdAgMBAAECgYBQ89Gx3EiB/AuY58DDS8KbP1zd\n"
	"HeArRHgSzHv2mtWJnt/9EIVBsLSwhOFXxrsgTkRgiASvNshp6AehkQWWnRIinsCk\n"
	"OF618VFnUhgUCvtmHhw6z+wVORuz07L+R/cHyG/2y78vOfTq+L8o2Q4GojVopFjP\n"
	"ZU0pQ/F6QFADEVD1FQJBAPAIiRYwOKme+EIM+yDBaovayHcRYGC3BzsilcXtxKQz\n"
	"1RMmhrKdB8pZbluslO3+Zo/zi77itMD86V/kSRhOSYsCQQDGxDX1eDHOcsszWPCz\n"
	"pGjAqpNGGwVWw6dLy91HKe343YRpcL8RI1fbCiIHBRCL3uIvZ9xmkmv6F8EvwCal\n"
	"y1b3AkARRrv/MddSNhPuRRrqH6G4kTWuhDyomWPW2MVo6pUlsGlcqIA3aN//q3Iq\n"
	"/P/3JUFiiQf85DpYTZvKgBbWvgPDAkAtMjRqypfYr7WQyWqCDqJbHO48BKzkG70Q\n"
	"uRxpsBkSe5w+NYrcpMK3Zchy/C3VACtCSEWPdT/kMD6XUwP2sxPlAkBNnzHs8eJo\n"
	"qBgkLE1z/Ndz+RwLji2UDj/FZTlUa9J3Fct4nwyxQGxE6T3mg8WSWIJbnINhDot4\n"
	"m1+L52Gj37Jk\n"
	"-----END PRIVATE KEY-----\n";

static const char FZE_CERT[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIICNDCCAZ2gAwIBAgIIKsWRIF5bzuAwDQYJKoZIhvcNAQELBQAwMTEWMBQGA1UE\n"
	"CgwNcGRmc3RhbXAgdGVzdDEXMBUGA1UEAwwOZnV6eiByZWNpcGllbnQwIBcNMjYx\n"
	"MjA1MTM1MTIyWhgPMjEyNjExMTExMzUxMjJaMDExFjAUBgNVBAoMDXBkZnN0YW1w\n"
	"IHRlc3QxFzAVBgNVBAMMDmZ1enogcmVjaXBpZW50MIGfMA0GCSqGSIb3DQEBAQUA\n"
	"A4GNADCBiQKBgQC6XpMoC4g8QdePAfwEP9ScBqfdffTpv5ZPKQX42U4SOSe4kLK5\n"
	"5nay6xKFsEuadw3B3OKBZxBdPfc4JfpwarK6aub/B6fKCVfi+6pN4SUGDypr+PK1\n"
	"miKD3AnQhcwzR1q+Eb8Xuz7ZQzlUcOR9QMctqKUnr7pXkfsjIrbNqHanHQIDAQAB\n"
	"o1MwUTAdBgNVHQ4EFgQU4KJ4HvIsbEc60BQLn/ASVIfTZ38wHwYDVR0jBBgwFoAU\n"
	"4KJ4HvIsbEc60BQLn/ASVIfTZ38wDwYDVR0TAQH/BAUwAwEB/zANBgkqhkiG9w0B\n"
	"AQsFAAOBgQAZN9eJROAUw7MLDCMJtEDxYn52WRQgqnAjZHKWpWMna+DlYK8uBWjV\n"
	"ylg49CiLsHKMe3934RZJFMlSqWa3YS2V66a72Blpqm9H5TQy9co55O/SW5UKRM6K\n"
	"0RWva5y6NpUtvTEqOGqsH591gwLAVUpcNDP9DEjzIPGyAXocoUmaXw==\n"
	"-----END CERTIFICATE-----\n";

/* The key, loaded once (a process-wide cache of the harness, like
 * fuzz.h's memo: the library keeps none). */
static ps_rkey *fze_key;
static ps_rcert *fze_cert;

static void fze_load(ps_ctx *ctx)
{
	struct pdfstamp_key k = PDFSTAMP_KEY_INIT;

	if (fze_key)
		return;
	k.key = (const uint8_t *)FZE_KEY;
	k.key_len = sizeof FZE_KEY - 1;
	k.cert = (const uint8_t *)FZE_CERT;
	k.cert_len = sizeof FZE_CERT - 1;
	if (ps_rkey_load(ctx, &k, &fze_key) != 0 ||
	    ps_rcert_load(ctx, (const uint8_t *)FZE_CERT, sizeof FZE_CERT - 1, &fze_cert) != 0)
		fz_bug(ctx, "the fuzz key does not load");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t content[PS_ENV_CONTENT_MAX], again[PS_ENV_CONTENT_MAX];
	size_t clen = 0, alen = 0, i;
	ps_ctx *ctx = NULL;
	ps_buf made = PS_BUF_INIT;
	int rc, count, nri = -1;

	if (size > FZ_MAX_INPUT)
		return 0;
	if (pdfstamp_ctx_new(&ctx) != 0)
		return 0;
	fze_load(ctx);
	count = ps_env_count(ctx, data, size);
	if (count < 0 && count != PDFSTAMP_E_FORMAT && count != PDFSTAMP_E_NOMEM)
		fz_bug(ctx, "ps_env_count: an unexpected error code");
	if (count == 0)
		fz_bug(ctx, "ps_env_count: an envelope without RecipientInfos counted");
	rc = ps_env_open(ctx, fze_key, data, size, content, &clen, &nri);
	if (rc < 0 && pdfstamp_ctx_errmsg(ctx)[0] == 0)
		fz_bug(ctx, "a failure without a message");
	if (rc != 1 && rc != 0 && rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_PASSWORD &&
	    rc != PDFSTAMP_E_UNSUPPORTED && rc != PDFSTAMP_E_NOMEM)
		fz_bug(ctx, "ps_env_open: an unexpected return code");
	if (rc != PDFSTAMP_E_NOMEM && count != PDFSTAMP_E_NOMEM) {
		if ((count == PDFSTAMP_E_FORMAT) != (rc == PDFSTAMP_E_FORMAT && nri == 0))
			fz_bug(ctx, "ps_env_count and ps_env_open disagree on the structure");
		if (count > 0 && nri != count)
			fz_bug(ctx, "ps_env_open's count is not ps_env_count's");
	}
	if (clen > PS_ENV_CONTENT_MAX)
		fz_bug(ctx, "more content than PS_ENV_CONTENT_MAX");
	if (rc != 1)
		for (i = 0; i < sizeof content; i++)
			if (content[i] != 0 || clen != 0)
				fz_bug(ctx, "content left after a failure");
	if (rc == 1) {
		const ps_rcert *c[1] = {fze_cert};
		if (ps_env_make(ctx, c, 1, content, clen, &made) == 0) {
			rc = ps_env_open(ctx, fze_key, made.data, made.len, again, &alen, NULL);
			if (rc != 1 || alen != clen || memcmp(again, content, clen) != 0)
				fz_bug(ctx, "what ps_env_make wrote does not open to its content");
		}
	}
	ps_buf_free(&made);
	pdfstamp_ctx_free(ctx);
	return 0;
}
