/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_envelope.c - the /Recipients envelopes of the public-key security
 * handler (issue 33): RC2 (rc2.c) against RFC 2268's vectors, the key
 * material (rkey.c) in every form it reads, and the CMS EnvelopedData
 * reader and writer (envelope.c) against the known-answer files of
 * tests/kat/env/ (made by `openssl cms -encrypt` for each cipher, OAEP,
 * -keyid, several recipients and -stream (BER), and by PDFBox 2 and iText
 * 5 themselves: tests/kat/make-env-kat.sh).  What ps_env_make writes is
 * decrypted by `openssl cms -decrypt` and by Bouncy Castle's
 * CMSEnvelopedData, the reader of PDFBox and iText (tests/kat/PubEnv.java),
 * in the run (each skipped with a message when its tool is missing).
 * Damaged, truncated and altered envelopes give the documented codes and
 * never crash.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps.h"
#include "envelope.h"
#include "rc2.h"
#include "rkey.h"
#include "pdfgen.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif
#define KAT TEST_SRCDIR "/kat/env/"

static ps_ctx *ctx;

static void setup(void)
{
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
}

static void teardown(void)
{
	pdfstamp_ctx_free(ctx);
}

/* The bytes of KAT file NAME (malloc'ed; *N its length). */
static uint8_t *slurp(const char *name, size_t *n)
{
	char path[1024];

	snprintf(path, sizeof path, "%s%s", KAT, name);
	return pg_slurp(path, n);
}

/* Loads key file KEY with certificate CERT (and PASS, a file, or NULL). */
static int load(const char *key, const char *cert, const char *pass, ps_rkey **out)
{
	struct pdfstamp_key k = PDFSTAMP_KEY_INIT;
	uint8_t *kb, *cb, *pb = NULL;
	size_t kn, cn, pn = 0;
	int rc;

	kb = slurp(key, &kn);
	cb = slurp(cert, &cn);
	if (pass) {
		pb = slurp(pass, &pn);
		pb[pn] = 0;
	}
	k.key = kb;
	k.key_len = kn;
	k.cert = cb;
	k.cert_len = cn;
	k.password = (const char *)pb;
	k.password_len = pn;
	rc = ps_rkey_load(ctx, &k, out);
	free(kb);
	free(cb);
	free(pb);
	return rc;
}

static ps_rkey *load_ok(const char *key, const char *cert, const char *pass)
{
	ps_rkey *k = NULL;
	int rc = load(key, cert, pass, &k);

	ck_assert_msg(rc == 0, "%s: %d %s", key, rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_ptr_nonnull(k);
	return k;
}

/* Opens DER with K: the return code; CONTENT and *CLEN, *NRI filled. */
static int open_env(const ps_rkey *k, const uint8_t *der, size_t n, uint8_t *content,
                    size_t *clen, int *nri)
{
	return ps_env_open(ctx, k, der, n, content, clen, nri);
}

/* Envelope file NAME opens with K to the content of file EXPECT, NRI infos. */
static void opens_to(const ps_rkey *k, const char *name, const char *expect, int want_nri)
{
	uint8_t content[PS_ENV_CONTENT_MAX], *der, *want;
	size_t n, clen, wn;
	int rc, nri;

	der = slurp(name, &n);
	want = slurp(expect, &wn);
	rc = open_env(k, der, n, content, &clen, &nri);
	ck_assert_msg(rc == 1, "%s: %d %s", name, rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_uint_eq(clen, wn);
	ck_assert_msg(memcmp(content, want, wn) == 0, "%s: wrong content", name);
	ck_assert_int_eq(nri, want_nri);
	ck_assert_int_eq(ps_env_count(ctx, der, n), want_nri);
	free(der);
	free(want);
}

/* ---- RC2 ------------------------------------------------------------------------ */

static void unhex(const char *h, uint8_t *out, size_t *n)
{
	size_t i = 0;
	unsigned v;

	for (; h[0] && h[1]; h += 2) {
		ck_assert_int_eq(sscanf(h, "%2x", &v), 1);
		out[i++] = (uint8_t)v;
	}
	*n = i;
}

START_TEST(rc2_rfc2268_vectors)
{
	/* RFC 2268 5: key, effective bits, plaintext, ciphertext */
	static const struct {
		const char *key;
		unsigned bits;
		const char *pt, *ct;
	} v[] = {
		{"0000000000000000", 63, "0000000000000000", "ebb773f993278eff"},
		{"ffffffffffffffff", 64, "ffffffffffffffff", "278b27e42e2f0d49"},
		{"3000000000000000", 64, "1000000000000001", "30649edf9be7d2c2"},
		{"88", 64, "0000000000000000", "61a8a244adacccf0"},
		{"88bca90e90875a", 64, "0000000000000000", "6ccf4308974c267f"},
		{"88bca90e90875a7f0f79c384627bafb2", 64, "0000000000000000", "1a807d272bbe5db1"},
		{"88bca90e90875a7f0f79c384627bafb2", 128, "0000000000000000", "2269552ab0f85ca6"},
		{"88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e", 129,
		 "0000000000000000", "5b78d3a43dfff1f1"},
	};
	uint8_t key[64], pt[8], ct[8], out[8];
	size_t i, kn, n;
	ps_rc2 c;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		unhex(v[i].key, key, &kn);
		unhex(v[i].pt, pt, &n);
		unhex(v[i].ct, ct, &n);
		ck_assert_int_eq(ps_rc2_setkey(&c, key, kn, v[i].bits), 0);
		ps_rc2_encrypt(&c, pt, out);
		ck_assert_msg(memcmp(out, ct, 8) == 0, "RFC 2268 vector %zu encrypts wrong", i + 1);
		ps_rc2_decrypt(&c, ct, out);
		ck_assert_msg(memcmp(out, pt, 8) == 0, "RFC 2268 vector %zu decrypts wrong", i + 1);
		ps_rc2_wipe(&c);
	}
	/* lengths out of range are refused */
	ck_assert_int_eq(ps_rc2_setkey(&c, key, 0, 64), -1);
	ck_assert_int_eq(ps_rc2_setkey(&c, key, 129, 64), -1);
	ck_assert_int_eq(ps_rc2_setkey(&c, key, 8, 0), -1);
	ck_assert_int_eq(ps_rc2_setkey(&c, key, 8, 1025), -1);
}
END_TEST

START_TEST(rc2_versions)
{
	/* RFC 8018 B.2.3 and RFC 2268 6 */
	ck_assert_uint_eq(ps_rc2_version_bits(160), 40);
	ck_assert_uint_eq(ps_rc2_version_bits(120), 64);
	ck_assert_uint_eq(ps_rc2_version_bits(58), 128);
	ck_assert_uint_eq(ps_rc2_version_bits(256), 256);
	ck_assert_uint_eq(ps_rc2_version_bits(1024), 1024);
	ck_assert_uint_eq(ps_rc2_version_bits(1025), 0);
	ck_assert_uint_eq(ps_rc2_version_bits(-1), 0);
	ck_assert_uint_eq(ps_rc2_version_bits(0xbd), 0);   /* the version of 0 bits */
}
END_TEST

/* ---- key material ---------------------------------------------------------------- */

START_TEST(rkey_forms)
{
	static const char *forms[] = {"r3-pbes2-aes.key", "r3-pbes2-des3.der", "r3-pkcs12pbe.key",
	                              "r3-pkcs1-aes.key"};
	ps_rkey *k;
	size_t i;

	k = load_ok("r1.key", "r1.crt", NULL);
	ck_assert_str_eq(ps_rkey_subject(k), "O=pdfstamp test, CN=recipient one");
	ck_assert_int_eq(mbedtls_pk_get_type(ps_rkey_pk(k)), MBEDTLS_PK_RSA);
	ck_assert_ptr_nonnull(ps_rkey_cert(k)->raw.p);
	ps_rkey_free(k);
	k = load_ok("r3-pkcs1.der", "r3.crt", NULL);
	ps_rkey_free(k);
	{
		/* one PEM file holding both, given as key and as certificate */
		struct pdfstamp_key both = PDFSTAMP_KEY_INIT;
		uint8_t *kb, *cb, *pem;
		size_t kn, cn;
		kb = slurp("r2.key", &kn);
		cb = slurp("r2.crt", &cn);
		pem = malloc(kn + cn);
		ck_assert_ptr_nonnull(pem);
		memcpy(pem, cb, cn);
		memcpy(pem + cn, kb, kn);
		both.key = both.cert = pem;
		both.key_len = both.cert_len = kn + cn;
		ck_assert_int_eq(ps_rkey_load(ctx, &both, &k), 0);
		opens_to(k, "multi.der", "content.bin", 3);
		ps_rkey_free(k);
		free(pem);
		free(kb);
		free(cb);
	}
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		k = load_ok(forms[i], "r3.crt", "r3.pass");
		opens_to(k, "multi.der", "content.bin", 3);
		ps_rkey_free(k);
	}
	ps_rkey_free(NULL);
	ps_rcert_free(NULL);
}
END_TEST

START_TEST(rkey_refusals)
{
	static const char *enc[] = {"r3-pbes2-aes.key", "r3-pbes2-des3.der", "r3-pkcs12pbe.key",
	                            "r3-pkcs1-aes.key"};
	struct pdfstamp_key k = PDFSTAMP_KEY_INIT;
	ps_rkey *r = (ps_rkey *)1;
	size_t i, n;
	uint8_t *b;
	int rc;

	for (i = 0; i < sizeof enc / sizeof enc[0]; i++) {
		/* no password, a wrong password: PDFSTAMP_E_PASSWORD */
		ck_assert_int_eq(load(enc[i], "r3.crt", NULL, &r), PDFSTAMP_E_PASSWORD);
		ck_assert_ptr_null(r);
		rc = load(enc[i], "r3.crt", "r3.crt", &r);
		ck_assert_msg(rc == PDFSTAMP_E_PASSWORD, "%s: %d %s", enc[i], rc,
		              pdfstamp_ctx_errmsg(ctx));
		ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "password") != NULL, "%s: %s",
		              enc[i], pdfstamp_ctx_errmsg(ctx));
	}
	/* a key that is not the certificate's */
	ck_assert_int_eq(load("r1.key", "r2.crt", NULL, &r), PDFSTAMP_E_PASSWORD);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "does not match") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	/* not RSA */
	ck_assert_int_eq(load("ec.key", "ec.crt", NULL, &r), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_int_eq(load("r1.key", "ec.crt", NULL, &r), PDFSTAMP_E_UNSUPPORTED);
	/* unparsable or missing material names what */
	ck_assert_int_eq(load("content.bin", "r1.crt", NULL, &r), PDFSTAMP_E_USAGE);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "private key") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(load("r1.key", "r1.key", NULL, &r), PDFSTAMP_E_USAGE);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "certificate") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	b = slurp("r1.crt", &n);
	k.cert = b;
	k.cert_len = n;
	ck_assert_int_eq(ps_rkey_load(ctx, &k, &r), PDFSTAMP_E_USAGE);
	k.version = 99;
	ck_assert_int_eq(ps_rkey_load(ctx, &k, &r), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_rkey_load(ctx, NULL, &r), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_rcert_load(ctx, b, n / 2, (ps_rcert **)&r), PDFSTAMP_E_USAGE);
	free(b);
	b = slurp("ec.crt", &n);
	ck_assert_int_eq(ps_rcert_load(ctx, b, n, (ps_rcert **)&r), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_null(r);
	free(b);
}
END_TEST

/* ---- the reader ------------------------------------------------------------------ */

START_TEST(openssl_ciphers)
{
	static const char *cases[] = {"aes128.der", "aes192.der", "aes256.der", "des3.der",
	                              "rc2-128.der", "rc2-64.der", "rc2-40.der", "des.der",
	                              "rc4.der", "oaep.der", "oaep256.der", "keyid.der"};
	ps_rkey *k = load_ok("r1.key", "r1.crt", NULL);
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		opens_to(k, cases[i], "content.bin", 1);
	ps_rkey_free(k);
}
END_TEST

START_TEST(several_recipients)
{
	static const char *who[][2] = {{"r1.key", "r1.crt"}, {"r2.key", "r2.crt"},
	                               {"r3-pbes2-aes.key", "r3.crt"}};
	uint8_t content[PS_ENV_CONTENT_MAX], *der;
	size_t i, n, clen;
	int nri;
	ps_rkey *k;

	for (i = 0; i < 3; i++) {
		k = load_ok(who[i][0], who[i][1], "r3.pass");
		opens_to(k, "multi.der", "content.bin", 3);
		if (i != 1)
			opens_to(k, "multi-rc2.der", "content.bin", 2);
		ps_rkey_free(k);
	}
	/* not a recipient: 0, content zero, the count still given */
	k = load_ok("r1.key", "r1.crt", NULL);
	der = slurp("r2-only.der", &n);
	memset(content, 0xAA, sizeof content);
	ck_assert_int_eq(open_env(k, der, n, content, &clen, &nri), 0);
	ck_assert_uint_eq(clen, 0);
	ck_assert_int_eq(nri, 1);
	for (i = 0; i < sizeof content; i++)
		ck_assert_uint_eq(content[i], 0);
	free(der);
	der = slurp("multi-rc2.der", &n);
	ps_rkey_free(k);
	k = load_ok("r2.key", "r2.crt", NULL);
	ck_assert_int_eq(open_env(k, der, n, content, &clen, NULL), 0);
	free(der);
	ps_rkey_free(k);
}
END_TEST

START_TEST(java_producers)
{
	/* what PDFBox 2 and iText 5 put in /Recipients: RC2-CBC, version 58 */
	ps_rkey *k1 = load_ok("r1.key", "r1.crt", NULL), *k2 = load_ok("r2.key", "r2.crt", NULL);
	uint8_t content[PS_ENV_CONTENT_MAX], *der;
	size_t n, clen;

	opens_to(k1, "pdfbox-0.der", "pdfbox.bin", 1);
	opens_to(k2, "pdfbox-1.der", "pdfbox.bin", 1);
	opens_to(k1, "itext-0.der", "itext.bin", 1);
	opens_to(k2, "itext-1.der", "itext.bin", 1);
	/* one envelope per recipient: the other's key finds nothing */
	der = slurp("itext-1.der", &n);
	ck_assert_int_eq(open_env(k1, der, n, content, &clen, NULL), 0);
	free(der);
	ps_rkey_free(k1);
	ps_rkey_free(k2);
}
END_TEST

START_TEST(ber_streamed)
{
	/* openssl cms -stream: indefinite lengths, the content in pieces */
	ps_rkey *k1 = load_ok("r1.key", "r1.crt", NULL), *k2 = load_ok("r2.key", "r2.crt", NULL);
	uint8_t content[PS_ENV_CONTENT_MAX], *der;
	size_t n, clen, cut;
	int rc;

	opens_to(k1, "stream.der", "content.bin", 2);
	opens_to(k2, "stream.der", "content.bin", 2);
	der = slurp("stream.der", &n);
	ck_assert_uint_eq(der[1], 0x80);  /* it is what it claims to be */
	for (cut = 0; cut < n; cut++) {
		rc = open_env(k1, der, cut, content, &clen, NULL);
		ck_assert_msg(rc == PDFSTAMP_E_FORMAT, "cut at %zu: %d", cut, rc);
	}
	/* an end-of-contents octet pair missing inside: damaged */
	der[n - 1] = 0x01;
	ck_assert_int_eq(open_env(k1, der, n, content, &clen, NULL), PDFSTAMP_E_FORMAT);
	free(der);
	ps_rkey_free(k1);
	ps_rkey_free(k2);
}
END_TEST

/* Replaces the first occurrence of OLD (N bytes) in DER with NEW. */
static void patch(uint8_t *der, size_t len, const void *old, const void *new, size_t n)
{
	size_t i;

	for (i = 0; i + n <= len; i++)
		if (memcmp(der + i, old, n) == 0) {
			memcpy(der + i, new, n);
			return;
		}
	ck_abort_msg("pattern not found");
}

START_TEST(refusals)
{
	static const uint8_t aes128[] = {0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	                                 0x01, 0x02};
	static const uint8_t aes128_ecb[] = {0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03,
	                                     0x04, 0x01, 0x01};
	static const uint8_t rsa[] = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01,
	                              0x01, 0x01};
	static const uint8_t pss[] = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01,
	                              0x01, 0x0A};
	static const uint8_t enveloped[] = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D,
	                                    0x01, 0x07, 0x03};
	static const uint8_t signed_data[] = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D,
	                                      0x01, 0x07, 0x02};
	ps_rkey *k = load_ok("r1.key", "r1.crt", NULL);
	uint8_t content[PS_ENV_CONTENT_MAX], *der, *orig;
	size_t n, clen, cut, i;
	int rc, nri;

	orig = slurp("aes128.der", &n);
	der = malloc(n);
	ck_assert_ptr_nonnull(der);

	/* a content cipher not supported: named */
	memcpy(der, orig, n);
	patch(der, n, aes128, aes128_ecb, sizeof aes128);
	ck_assert_int_eq(open_env(k, der, n, content, &clen, &nri), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "2.16.840.1.101.3.4.1.1") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(nri, 1);
	/* a key transport not supported: named */
	memcpy(der, orig, n);
	patch(der, n, rsa, pss, sizeof rsa);
	ck_assert_int_eq(open_env(k, der, n, content, &clen, NULL), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "1.2.840.113549.1.1.10") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	/* another content type */
	memcpy(der, orig, n);
	patch(der, n, enveloped, signed_data, sizeof enveloped);
	ck_assert_int_eq(open_env(k, der, n, content, &clen, &nri), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(nri, 0);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "1.2.840.113549.1.7.2") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(ps_env_count(ctx, der, n), PDFSTAMP_E_FORMAT);
	/* a damaged encrypted key: the key does not open it */
	memcpy(der, orig, n);
	{
		/* the encryptedKey: 256 bytes just before the encryptedContentInfo */
		const uint8_t *p = orig;
		for (i = 0; i + 4 < n; i++)
			if (p[i] == 0x04 && p[i + 1] == 0x82 && p[i + 2] == 0x01 &&
			    p[i + 3] == 0x00)
				break;
		ck_assert_uint_lt(i + 4, n);
		der[i + 4 + 100] ^= 0x55;
	}
	ck_assert_int_eq(open_env(k, der, n, content, &clen, NULL), PDFSTAMP_E_PASSWORD);
	for (i = 0; i < sizeof content; i++)
		ck_assert_uint_eq(content[i], 0);
	/* the last ciphertext byte: wrong padding (the known-answer file's
	 * plaintext then ends in a byte other than 01..10 with all pads equal) */
	memcpy(der, orig, n);
	der[n - 17] ^= 0xFF; /* the previous block flips the last byte of the last one */
	ck_assert_int_eq(open_env(k, der, n, content, &clen, NULL), PDFSTAMP_E_PASSWORD);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "padding") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	/* the RC2 parameter version counts: 58 (128 bits) made 120 (64 bits)
	 * decrypts to garbage; a negative version is damaged DER */
	free(orig);
	orig = slurp("rc2-128.der", &n);
	{
		static const uint8_t v58[] = {0x02, 0x01, 0x3A, 0x04, 0x08};
		static const uint8_t v120[] = {0x02, 0x01, 0x78, 0x04, 0x08};
		static const uint8_t vneg[] = {0x02, 0x01, 0xFF, 0x04, 0x08};
		uint8_t *d2 = malloc(n);
		ck_assert_ptr_nonnull(d2);
		memcpy(d2, orig, n);
		patch(d2, n, v58, v120, sizeof v58);
		ck_assert_int_eq(open_env(k, d2, n, content, &clen, NULL), PDFSTAMP_E_PASSWORD);
		memcpy(d2, orig, n);
		patch(d2, n, v58, vneg, sizeof v58);
		ck_assert_int_eq(open_env(k, d2, n, content, &clen, NULL), PDFSTAMP_E_FORMAT);
		ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "RC2") != NULL, "%s",
		              pdfstamp_ctx_errmsg(ctx));
		free(d2);
	}
	free(orig);
	orig = slurp("aes128.der", &n);
	/* every truncation: FORMAT, never a crash */
	for (cut = 0; cut < n; cut++) {
		rc = open_env(k, orig, cut, content, &clen, &nri);
		ck_assert_msg(rc == PDFSTAMP_E_FORMAT, "cut at %zu: %d", cut, rc);
		ck_assert_int_eq(ps_env_count(ctx, orig, cut), PDFSTAMP_E_FORMAT);
	}
	/* bytes after the ContentInfo, even zeros, are refused (note 1) */
	der = realloc(der, n + 7);
	ck_assert_ptr_nonnull(der);
	memcpy(der, orig, n);
	memset(der + n, 0, 7);
	ck_assert_int_eq(open_env(k, der, n + 7, content, &clen, NULL), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_env_count(ctx, der, n + 7), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(open_env(k, der, n, content, &clen, NULL), 1);
	/* every single-byte change: a documented code, never a crash */
	for (i = 0; i < n; i++) {
		memcpy(der, orig, n);
		der[i] ^= 0x41;
		rc = open_env(k, der, n, content, &clen, &nri);
		ck_assert_msg(rc == 0 || rc == 1 || rc == PDFSTAMP_E_FORMAT ||
		              rc == PDFSTAMP_E_PASSWORD || rc == PDFSTAMP_E_UNSUPPORTED,
		              "byte %zu: %d", i, rc);
		if (rc != 1)
			for (cut = 0; cut < sizeof content; cut++)
				ck_assert_uint_eq(content[cut], 0);
	}
	free(der);
	free(orig);
	ps_rkey_free(k);
}
END_TEST

/* ---- the writer ------------------------------------------------------------------ */

static ps_rcert *rcert(const char *name)
{
	ps_rcert *c = NULL;
	uint8_t *b;
	size_t n;

	b = slurp(name, &n);
	ck_assert_int_eq(ps_rcert_load(ctx, b, n, &c), 0);
	free(b);
	return c;
}

/* The Java producers' own reader (Bouncy Castle's CMSEnvelopedData, as
 * PDFBox 2 and iText 5 open a /Recipients string) on ENV, in DIR, with r1
 * and r2: it must give MSG.  Skipped with a message without javac or the
 * jars. */
static void java_opens(const char *dir, const uint8_t *msg, size_t mlen)
{
	static const char jars[] = "/usr/share/java/bcprov.jar:/usr/share/java/bcpkix.jar:"
	                           "/usr/share/java/pdfbox2.jar:/usr/share/java/fontbox2.jar:"
	                           "/usr/share/java/itext5.jar:/usr/share/java/commons-logging.jar";
	char cmd[2048], want[2 * PS_ENV_CONTENT_MAX + 2], got[256];
	FILE *f;
	size_t i;

	snprintf(cmd, sizeof cmd, "command -v javac >/dev/null && command -v java >/dev/null && "
	         "for j in $(echo '%s' | tr : ' '); do test -f $j || exit 1; done", jars);
	if (system(cmd) != 0) {
		fprintf(stderr, "check_envelope: no javac or no Bouncy Castle, PDFBox or iText "
		        "jar; the writer's output is not checked by the Java producers' "
		        "reader\n");
		return;
	}
	snprintf(cmd, sizeof cmd, "javac -nowarn -cp '%s' -d '%s' '%s/kat/PubEnv.java' "
	         ">'%s/javac.log' 2>&1", jars, dir, TEST_SRCDIR, dir);
	ck_assert_msg(system(cmd) == 0, "javac PubEnv.java fails (%s/javac.log)", dir);
	for (i = 0; i < mlen; i++)
		snprintf(want + 2 * i, 3, "%02x", msg[i]);
	for (i = 1; i <= 2; i++) {
		snprintf(cmd, sizeof cmd, "java -cp '%s:%s' PubEnv open '%s/env.der' "
		         "'" KAT "r%zu.crt' '" KAT "r%zu.key' >'%s/java.out'", jars, dir, dir, i,
		         i, dir);
		ck_assert_msg(system(cmd) == 0, "Bouncy Castle cannot open it for r%zu", i);
		snprintf(cmd, sizeof cmd, "%s/java.out", dir);
		f = fopen(cmd, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(got, sizeof got, f));
		fclose(f);
		got[strcspn(got, "\n")] = 0;
		ck_assert_str_eq(got, want);
	}
}

START_TEST(make_and_open)
{
	ps_rcert *c[3] = {rcert("r1.crt"), rcert("r2.crt"), rcert("r3.crt")};
	ps_buf out = PS_BUF_INIT, out2 = PS_BUF_INIT;
	uint8_t content[PS_ENV_CONTENT_MAX], msg[24];
	size_t clen, i;
	ps_rkey *k;
	int nri;
	char dir[] = "/tmp/check_envelope.XXXXXX", cmd[2048], path[1100];
	FILE *f;

	for (i = 0; i < sizeof msg; i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	ck_assert_int_eq(ps_env_make(ctx, (const ps_rcert *const *)c, 3, msg, sizeof msg, &out),
	                 0);
	ck_assert_int_eq(ps_env_count(ctx, out.data, out.len), 3);
	/* each recipient opens it; nothing else changes between two runs but
	 * the key, the IV and the padding */
	k = load_ok("r2.key", "r2.crt", NULL);
	ck_assert_int_eq(ps_env_open(ctx, k, out.data, out.len, content, &clen, &nri), 1);
	ck_assert_uint_eq(clen, sizeof msg);
	ck_assert_mem_eq(content, msg, sizeof msg);
	ck_assert_int_eq(nri, 3);
	ps_rkey_free(k);
	k = load_ok("r3-pkcs1.der", "r3.crt", NULL);
	ck_assert_int_eq(ps_env_open(ctx, k, out.data, out.len, content, &clen, &nri), 1);
	ck_assert_mem_eq(content, msg, sizeof msg);
	ps_rkey_free(k);
	ck_assert_int_eq(ps_env_make(ctx, (const ps_rcert *const *)c, 1, msg, sizeof msg, &out2),
	                 0);
	ck_assert_int_eq(ps_env_count(ctx, out2.data, out2.len), 1);
	ck_assert(out2.len != out.len || memcmp(out.data, out2.data, out.len) != 0);
	/* refusals */
	ck_assert_int_eq(ps_env_make(ctx, (const ps_rcert *const *)c, 0, msg, sizeof msg, &out2),
	                 PDFSTAMP_E_USAGE);

	/* an independent reader: openssl cms -decrypt, with each recipient's key */
	if (system("openssl version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "check_envelope: no openssl; the writer's output is not "
		        "checked by openssl\n");
	} else {
		static const char *keys[3] = {"r1.key", "r2.key", "r3-pkcs1.der"};
		ck_assert_ptr_nonnull(mkdtemp(dir));
		snprintf(path, sizeof path, "%s/env.der", dir);
		f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(out.data, 1, out.len, f), out.len);
		fclose(f);
		for (i = 0; i < 3; i++) {
			uint8_t got[64];
			size_t gn;
			snprintf(cmd, sizeof cmd, "openssl cms -decrypt -inform DER -in "
			         "'%s/env.der' -recip '" KAT "r%zu.crt' -inkey '" KAT "%s' "
			         "-out '%s/got' 2>/dev/null", dir, i + 1, keys[i], dir);
			ck_assert_msg(system(cmd) == 0, "openssl cannot decrypt for r%zu", i + 1);
			snprintf(path, sizeof path, "%s/got", dir);
			f = fopen(path, "rb");
			ck_assert_ptr_nonnull(f);
			gn = fread(got, 1, sizeof got, f);
			fclose(f);
			ck_assert_uint_eq(gn, sizeof msg);
			ck_assert_mem_eq(got, msg, sizeof msg);
		}
		/* strict DER: openssl re-encodes it byte for byte */
		snprintf(cmd, sizeof cmd, "cd '%s' && openssl cms -cmsout -inform DER -in env.der "
		         "-outform DER -out re.der && cmp -s env.der re.der", dir);
		ck_assert_msg(system(cmd) == 0, "the envelope is not DER as openssl writes it");
		java_opens(dir, msg, sizeof msg);
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	for (i = 0; i < 3; i++)
		ps_rcert_free(c[i]);
	ps_buf_free(&out);
	ps_buf_free(&out2);
}
END_TEST

static Suite *envelope_suite(void)
{
	Suite *s = suite_create("envelope");
	TCase *tc = tcase_create("envelope");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rc2_rfc2268_vectors);
	tcase_add_test(tc, rc2_versions);
	tcase_add_test(tc, rkey_forms);
	tcase_add_test(tc, rkey_refusals);
	tcase_add_test(tc, openssl_ciphers);
	tcase_add_test(tc, several_recipients);
	tcase_add_test(tc, java_producers);
	tcase_add_test(tc, ber_streamed);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, make_and_open);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(envelope_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
