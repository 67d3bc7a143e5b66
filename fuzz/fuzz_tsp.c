/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_tsp.c - libFuzzer target for the checks of a TSA's reply
 * (tsp.c, ps_tsp_check; `pdfstamp timestamp` and every signing with
 * --tsa): the TimeStampResp and its PKIStatusInfo, the token's CMS
 * (through sigcms.c: the signed attributes, the messageDigest, the
 * signature with the certificate the token carries), the TSTInfo
 * (imprint, serial, genTime, nonce), the TSA certificate's extended key
 * usage (check_eku) and the ESS signing-certificate attribute.
 *
 * Input layout:
 *   byte 0       flags: bits 0-1 the request's hash, 0 SHA-256, 1 SHA-384,
 *                2 SHA-512 (3: SHA-256 as well); bit 2: also check with
 *                the CA file (the CA of tests/kat/tsp/ca.pem, embedded
 *                below, written to an anonymous file: the chain check)
 *   bytes 1-64   the request's hash (its first bits / 8 bytes are used)
 *   bytes 65-80  the request's nonce (PS_TSP_NONCE_LEN bytes)
 *   the rest     the TimeStampResp
 * The seeds (fuzz/make-seeds.py) are the replies of `openssl ts -reply` in
 * tests/kat/tsp/ (make-tsp.sh) with the hash and nonce of their queries,
 * so the success path is reached; and a rejection.  The TSTInfo and the
 * signed attributes are under the TSA's signature: a mutation there is
 * refused by sigcms.c, so check_tstinfo, check_ess and check_eku see the
 * seeds' signed contents (the make-tsp.sh variants: three hashes,
 * ESSCertID and ESSCertIDv2, a chain of ESSCertIDs, no nonce) with the
 * request's hash and nonce varied, while the status, the CMS framing and
 * the unsigned parts (certificates, unsigned attributes) are mutated freely.
 *
 * Oracles: never a crash; ps_tsp_check returns 0, FORMAT or NOMEM, an
 * error always with a message and no token bytes; on success the token's
 * DER is there, genTime is a NUL-terminated printable string of at least
 * 14 characters, the serial and the TSA name are NUL-terminated, and the
 * token, read again by ps_sigcms_token, verifies and its TSTInfo holds
 * the request's hash as an OCTET STRING and its nonce as an INTEGER.
 * With the CA flag the same reply is checked again with the CA file: it
 * may fail only where the chain does (FORMAT), and it never succeeds
 * where the check without it failed.
 */
#include "fuzz.h"
#include "sigcms.h"
#include "tsp.h"

/* tests/kat/tsp/ca.pem (the CA of make-tsp.sh's TSA) */
static const char FZT_CA[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIDEDCCAfigAwIBAgIUS6THqdzH1FLcveCAdz2MH0NJufQwDQYJKoZIhvcNAQEL\n"
	"BQAwHzEdMBsGA1UEAwwUcGRmc3RhbXAgZnV6el90c3AgQ0EwIBcNMjYxMjA1MTc0\n"
	"OTQxWhgPMjEyNjExMTExNzQ5NDFaMB8xHTAbBgNVBAMMFHBkZnN0YW1wIGZ1enpf\n"
	"dHNwIENBMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAxXNPSuJYoj98\n"
	"A9EdPO22LU5I+coexYmSPRscoU7lNZlaf6MR6R90+GpJnTiKqQKJLYED5PF8trgj\n"
	"jtFZbChuVP8OfuzPhaWsSQQ6mvH9YGoKknMY2SRg5lC8X9wLnR9Jyom8QFh1m1i2\n"
	"WSbY3cLMxNYcs6zxKAiVyUv06vH3/jOe3L3uJ9+uHU/FqLGJ/Ffo30J5bV1+13Eq\n"
	"XKa1sy185muHbwIJ6XOjep23FIIHApy/BmXJL3IkJpMofdxv6b+tVcgAHf/NBC8v\n"
	"8y39kEcWnLpS5t5wdHmI0GlJtLKm9UXPSc+CDnlIjtrVkKqPXpxB2JhaFxHvtUk5\n"
	"N/vryNDDkwIDAQABo0IwQDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIB\n"
	"BjAdBgNVHQ4EFgQU1AHf4ieuMLfYr8FqzJX+hKRoOCYwDQYJKoZIhvcNAQELBQAD\n"
	"ggEBAJewEkswoQ0AEGBz80fTkncbFSqBg07OmMGs1p/Fz6N33OYy2/q9YB+TgdKa\n"
	"rQRcdJwiYS4XFVaESIyxkAVa8FFmazE5dJA2rAgTC4eDl2w90clD9TVHV15R+Fd0\n"
	"Eer6HF1U1k29RBVc5/epyW8cy0+eCDBkUoFEwn+RNX4QEzvtHVpVz6NloEB6v8wm\n"
	"2DVDh8ZmJUDTO7CyYYBbNQfRAAry/eqEMwvrFL2a9K//r05qBy3LEUu7sbTTzs5J\n"
	"SS9Ahc+b7sdiuW6oAyvJkF/k1cTk4nGVn2q7cWKtAUFJU189og/huKUzyKoAR5et\n"
	"gqEqpZYNbYyhsso/7iCP0rSOS7M=\n"
	"-----END CERTIFICATE-----\n";

#define FZT_HEAD (1 + 64 + PS_TSP_NONCE_LEN)

/* Whether NEEDLE[0..M) occurs in HAY[0..N). */
static int fzt_has(const uint8_t *hay, size_t n, const uint8_t *needle, size_t m)
{
	size_t i;

	for (i = 0; m <= n && i <= n - m; i++)
		if (memcmp(hay + i, needle, m) == 0)
			return 1;
	return 0;
}

/* The oracles of one ps_tsp_check result (see the top). */
static void fzt_result(ps_ctx *ctx, const struct ps_tsp_req *req, int rc,
                       const struct ps_tsp_token *tok)
{
	struct ps_sigcms cms;
	struct ps_sigcms_token t;
	uint8_t imp[2 + 64], non[2 + PS_TSP_NONCE_LEN];
	size_t i, hl = (size_t)req->bits / 8;

	if (rc != 0 && rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_NOMEM)
		fz_bug(ctx, "ps_tsp_check: an unexpected result");
	if (rc < 0) {
		if (!pdfstamp_ctx_errmsg(ctx)[0])
			fz_bug(ctx, "ps_tsp_check: an error without a message");
		if (tok->der || tok->len)
			fz_bug(ctx, "ps_tsp_check: token bytes after a failure");
		return;
	}
	if (!tok->der || !tok->len)
		fz_bug(ctx, "ps_tsp_check: success without a token");
	if (!memchr(tok->gen_time, 0, sizeof tok->gen_time) || strlen(tok->gen_time) < 14)
		fz_bug(ctx, "ps_tsp_check: genTime not a string of 14 or more characters");
	for (i = 0; tok->gen_time[i]; i++)
		if (tok->gen_time[i] < 0x20 || tok->gen_time[i] >= 0x7F)
			fz_bug(ctx, "ps_tsp_check: genTime not printable");
	if (!memchr(tok->serial, 0, sizeof tok->serial) || !memchr(tok->tsa, 0, sizeof tok->tsa))
		fz_bug(ctx, "ps_tsp_check: serial or TSA name not terminated");
	if (ps_sigcms_token(ctx, tok->der, tok->len, &cms, &t) != 0 || !cms.digest_ok ||
	    cms.signature_ok != 1 || !t.tstinfo)
		fz_bug(ctx, "ps_tsp_check: the token it accepted does not verify again");
	imp[0] = 0x04;
	imp[1] = (uint8_t)hl;
	memcpy(imp + 2, req->hash, hl);
	non[0] = 0x02;
	non[1] = PS_TSP_NONCE_LEN;
	memcpy(non + 2, req->nonce, PS_TSP_NONCE_LEN);
	if (!fzt_has(t.tstinfo, t.tstinfo_len, imp, 2 + hl))
		fz_bug(ctx, "ps_tsp_check: the accepted TSTInfo lacks the request's hash");
	if (!fzt_has(t.tstinfo, t.tstinfo_len, non, sizeof non))
		fz_bug(ctx, "ps_tsp_check: the accepted TSTInfo lacks the request's nonce");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int bits[4] = {256, 384, 512, 256};
	struct ps_tsp_req req;
	struct ps_tsp_token tok;
	ps_ctx *ctx = NULL;
	int rc, rc2, fd;
	char path[64];

	if (size < FZT_HEAD || size > FZ_MAX_INPUT)
		return 0;
	if (pdfstamp_ctx_new(&ctx) != 0)
		return 0;
	memset(&req, 0, sizeof req);
	req.bits = bits[data[0] & 3];
	memcpy(req.hash, data + 1, sizeof req.hash);
	memcpy(req.nonce, data + 1 + 64, sizeof req.nonce);
	rc = ps_tsp_check(ctx, &req, data + FZT_HEAD, size - FZT_HEAD, NULL, &tok);
	fzt_result(ctx, &req, rc, &tok);
	ps_tsp_token_free(&tok);
	if ((data[0] & 4) &&
	    (fd = fz_memfile((const uint8_t *)FZT_CA, sizeof FZT_CA - 1, path)) >= 0) {
		rc2 = ps_tsp_check(ctx, &req, data + FZT_HEAD, size - FZT_HEAD, path, &tok);
		fzt_result(ctx, &req, rc2, &tok);
		if (rc2 == 0 && rc != 0)
			fz_bug(ctx, "ps_tsp_check: accepted with the CA file, refused without");
		ps_tsp_token_free(&tok);
		close(fd);
	}
	pdfstamp_ctx_free(ctx);
	return 0;
}
