/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_security.c - libFuzzer target for the standard security handler
 * (ISO 32000-2 7.6.4.3: Algorithms 2.A, 2.B, 11, 12, 13).
 *
 * Input layout (shorter inputs are zero-padded):
 *   byte 0     flags: bits 0-2 select R (0-3: 6, 4-5: 5, 6: 4, 7: 7);
 *              bit 3 EncryptMetadata; bit 7 runs the round-trip oracle
 *   bytes 1-4  /P, big-endian two's complement
 *   5..180     /O (48), /U (48), /OE (32), /UE (32), /Perms (16)
 *   181..      the password, UTF-8 or not (at most 256 bytes are used)
 * ps_kdf_authenticate must never crash, must fail with PASSWORD, FORMAT
 * or UNSUPPORTED (or succeed), and always leaves a message on failure.
 * In fuzz builds the context runs Algorithm 2.B with scaled-down constants
 * (ps_ctx.fuzz_light_kdf; 16 copies instead of 64, 2 or 3 rounds instead of
 * about 70): the real hash costs milliseconds under ASan, and its constants
 * are covered by the known-answer tests in tests/check_crypt.c.  The replay
 * of fuzz/regress/ in normal builds runs the real hash.  Seeds made with
 * the real constants no longer authenticate here; the round trip (bit 7)
 * reaches the success paths instead.
 * Round trip (bit 7): ps_kdf_make (Algorithms 8, 9, 10) with the password
 * split at its first NUL into user and owner and a file key taken from the
 * input, then ps_kdf_authenticate with each must give back that key; with
 * the owner password as owner, and /Perms valid (Algorithm 13).
 */
#include "fuzz.h"

#define FZS_HDR 181
#define FZS_MAX_PW 256

static void fzs_expect_key(ps_ctx *ctx, const ps_secparams *sp, const char *pw, size_t len,
                           const uint8_t key[32], int want_owner)
{
	uint8_t got[32];
	int is_owner = 0, perms_ok = 0, rc;

	rc = ps_kdf_authenticate(ctx, sp, pw, len, got, &is_owner, &perms_ok);
	if (rc == PDFSTAMP_E_NOMEM)
		return;
	if (rc < 0)
		fz_bug(ctx, "a password set by ps_kdf_make is not accepted");
	if (memcmp(got, key, 32) != 0)
		fz_bug(ctx, "ps_kdf_authenticate unwrapped a different file key");
	if (!perms_ok)
		fz_bug(ctx, "/Perms made by ps_kdf_make does not verify");
	if (want_owner && !is_owner)
		fz_bug(ctx, "the owner password authenticated as user");
	ps_wipe(got, sizeof got);
}

static void fzs_roundtrip(ps_ctx *ctx, const ps_secparams *in, const uint8_t *pw, size_t len)
{
	const uint8_t *nul = memchr(pw, 0, len);
	size_t ulen = nul ? (size_t)(nul - pw) : len;
	const char *owner = nul ? (const char *)nul + 1 : "";
	size_t olen = nul ? len - ulen - 1 : 0;
	ps_secparams sp;
	uint8_t key[32];
	int rc;

	memset(&sp, 0, sizeof sp);
	sp.p = in->p;
	sp.encrypt_metadata = in->encrypt_metadata;
	memcpy(key, in->u, 32);
	rc = ps_kdf_make(ctx, &sp, (const char *)pw, ulen, owner, olen, key);
	if (rc == PDFSTAMP_E_INTERNAL)
		fz_bug(ctx, "ps_kdf_make");
	if (rc < 0)
		return; /* e.g. a password SASLprep's stored profile refuses */
	if (sp.v != 5 || sp.r != 6)
		fz_bug(ctx, "ps_kdf_make did not set V 5 R 6");
	fzs_expect_key(ctx, &sp, owner, olen, key, 1);
	fzs_expect_key(ctx, &sp, (const char *)pw, ulen, key, 0);
	ps_wipe(key, sizeof key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int rsel[8] = {6, 6, 6, 6, 5, 5, 4, 7};
	uint8_t hdr[FZS_HDR], key[32];
	const uint8_t *pw;
	size_t pwlen;
	ps_secparams sp;
	ps_ctx *ctx;
	uint32_t p;
	int is_owner = 0, perms_ok = 0, rc;

	if (pdfstamp_ctx_new(&ctx) < 0)
		return 0;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	ctx->fuzz_light_kdf = 1;
#endif
	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, data, size < FZS_HDR ? size : FZS_HDR);
	pw = size > FZS_HDR ? data + FZS_HDR : (const uint8_t *)"";
	pwlen = size > FZS_HDR ? size - FZS_HDR : 0;
	if (pwlen > FZS_MAX_PW)
		pwlen = FZS_MAX_PW;

	memset(&sp, 0, sizeof sp);
	sp.r = rsel[hdr[0] & 7];
	sp.v = sp.r == 4 ? 4 : 5;
	sp.encrypt_metadata = (hdr[0] >> 3) & 1;
	p = (uint32_t)hdr[1] << 24 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 8 | hdr[4];
	sp.p = (int64_t)(int32_t)p;
	memcpy(sp.o, hdr + 5, 48);
	memcpy(sp.u, hdr + 53, 48);
	memcpy(sp.oe, hdr + 101, 32);
	memcpy(sp.ue, hdr + 133, 32);
	memcpy(sp.perms, hdr + 165, 16);

	rc = ps_kdf_authenticate(ctx, &sp, (const char *)pw, pwlen, key, &is_owner, &perms_ok);
	if (rc < 0) {
		if (rc != PDFSTAMP_E_PASSWORD && rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_UNSUPPORTED &&
		    rc != PDFSTAMP_E_NOMEM && rc != PDFSTAMP_E_USAGE)
			fz_bug(ctx, "unexpected error code from ps_kdf_authenticate");
		if (pdfstamp_ctx_errmsg(ctx)[0] == 0)
			fz_bug(ctx, "an error without a message");
	} else if (sp.r != 5 && sp.r != 6) {
		fz_bug(ctx, "an unsupported revision was accepted");
	}
	ps_wipe(key, sizeof key);
	if (hdr[0] & 0x80)
		fzs_roundtrip(ctx, &sp, pw, pwlen);
	pdfstamp_ctx_free(ctx);
	return 0;
}
