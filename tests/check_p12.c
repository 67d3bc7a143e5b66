/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_p12.c - PKCS#12 files read into a key and its certificate
 * (p12.c).  The files are the .p12 files of tests/kat/p12/, made by `openssl pkcs12
 * -export` (OpenSSL 3: its defaults, -legacy, and the variants that
 * tests/kat/p12/make-p12.sh lists); the answers are OpenSSL's own
 * key.der (the key as unencrypted PKCS#8) and cert.der.  Each key read
 * is also checked by mbedTLS (an independent reader): it parses, and it
 * is the private half of the certificate's public key.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "p12.h"
#include "pdfgen.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif

#define PW "p12-secret"

static ps_ctx *ctx;

static void setup(void)
{
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
}

static void teardown(void)
{
	pdfstamp_ctx_free(ctx);
}

/* tests/kat/p12/NAME, whole; *N its size. */
static uint8_t *load(const char *name, size_t *n)
{
	char path[512];
	uint8_t *p;

	snprintf(path, sizeof path, "%s/kat/p12/%s", TEST_SRCDIR, name);
	p = pg_slurp(path, n);
	ck_assert_uint_gt(*n, 0);
	return p;
}

/* Parses NAME with PASSWORD (NULL: none); the call's return. */
static int parse(const char *name, const char *password, ps_buf *key, ps_buf *cert)
{
	size_t n;
	uint8_t *p = load(name, &n);
	int rc = ps_p12_parse(ctx, p, n, password, password ? strlen(password) : 0, key, cert);

	free(p);
	return rc;
}

/* KEY and CERT are key.der and cert.der, and mbedTLS takes KEY for the
 * private half of CERT's public key. */
static void check_answer(const char *name, const ps_buf *key, const ps_buf *cert)
{
	size_t nk, nc;
	uint8_t *k = load("key.der", &nk), *c = load("cert.der", &nc);
	mbedtls_pk_context pk;
	mbedtls_x509_crt crt;

	ck_assert_msg(key->secret, "%s: the key's buffer is not marked secret", name);
	ck_assert_msg(cert->len == nc && memcmp(cert->data, c, nc) == 0,
	              "%s: not the key's certificate", name);
	ck_assert_msg(key->len == nk && memcmp(key->data, k, nk) == 0,
	              "%s: the key is not OpenSSL's PKCS#8 of it (%zu bytes, %zu expected)",
	              name, key->len, nk);
	mbedtls_pk_init(&pk);
	mbedtls_x509_crt_init(&crt);
	ck_assert_int_eq(mbedtls_pk_parse_key(&pk, key->data, key->len, NULL, 0), 0);
	ck_assert_int_eq(mbedtls_x509_crt_parse_der(&crt, cert->data, cert->len), 0);
	ck_assert_msg(mbedtls_pk_check_pair(&crt.pk, &pk) == 0, "%s: key and certificate "
	              "do not match", name);
	ck_assert_int_eq(mbedtls_pk_get_type(&pk), MBEDTLS_PK_RSA);
	mbedtls_pk_free(&pk);
	mbedtls_x509_crt_free(&crt);
	free(k);
	free(c);
}

static void good(const char *name, const char *password)
{
	ps_buf key = PS_BUF_INIT, cert = PS_BUF_INIT;
	int rc = parse(name, password, &key, &cert);

	ck_assert_msg(rc == 0, "%s: %d %s", name, rc, pdfstamp_ctx_errmsg(ctx));
	check_answer(name, &key, &cert);
	ps_buf_free(&key);
	ps_buf_free(&cert);
}

/* NAME with PASSWORD fails with CODE, its message naming the PKCS#12
 * file and not the password, nothing appended. */
static void bad(const char *name, const char *password, int code)
{
	ps_buf key = PS_BUF_INIT, cert = PS_BUF_INIT;
	int rc = parse(name, password, &key, &cert);
	const char *msg = pdfstamp_ctx_errmsg(ctx);

	ck_assert_msg(rc == code, "%s: %d, not %d (%s)", name, rc, code, msg);
	ck_assert_msg(strstr(msg, "PKCS#12") != NULL, "%s: message '%s'", name, msg);
	ck_assert_msg(!password || !*password || !strstr(msg, password), "%s: password in '%s'",
	              name, msg);
	ck_assert_uint_eq(key.len, 0);
	ck_assert_uint_eq(cert.len, 0);
	ps_buf_free(&key);
	ps_buf_free(&cert);
}

/* OpenSSL 3's defaults: PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC,
 * HMAC-SHA256 MAC. */
START_TEST(openssl3_default)
{
	good("default.p12", PW);
}
END_TEST

/* -legacy: 3DES key bag, RC2-40 certificate bag, SHA-1 MAC. */
START_TEST(openssl_legacy)
{
	good("legacy.p12", PW);
}
END_TEST

/* The variants: a CA certificate before or after the key's, no MAC, bags in
 * clear, SHA-512 MAC, the empty password (as NULL and as ""), UTF-8. */
START_TEST(variants)
{
	good("chain.p12", PW);
	good("nomac.p12", PW);
	good("plain.p12", PW);
	good("sha512.p12", PW);
	good("empty.p12", NULL);
	good("empty.p12", "");
	good("utf8.p12", "pässwörd ключ");
}
END_TEST

/* A wrong password is PDFSTAMP_E_PASSWORD whether the MAC, the decryption
 * or (bags in clear) only the MAC can tell; so is a password given to a
 * file made with the empty one. */
START_TEST(wrong_password)
{
	bad("default.p12", "p12-secreT", PDFSTAMP_E_PASSWORD);
	bad("legacy.p12", "x9-Wq", PDFSTAMP_E_PASSWORD);
	bad("plain.p12", "x9-Wq", PDFSTAMP_E_PASSWORD);
	bad("nomac.p12", "x9-Wq", PDFSTAMP_E_PASSWORD);
	bad("default.p12", NULL, PDFSTAMP_E_PASSWORD);
	bad("empty.p12", PW, PDFSTAMP_E_PASSWORD);
	/* the same letters, not the same bytes (NFC vs NFD is the caller's) */
	bad("utf8.p12", "passwort kljuch", PDFSTAMP_E_PASSWORD);
}
END_TEST

/* What the file lacks: a key, or the key's certificate. */
START_TEST(missing_parts)
{
	bad("certonly.p12", PW, PDFSTAMP_E_USAGE);
	bad("keyonly.p12", PW, PDFSTAMP_E_USAGE);
}
END_TEST

/* A MAC made to take long is refused before it is computed. */
START_TEST(iteration_limit)
{
	bad("bigiter.p12", PW, PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "2000000"));
}
END_TEST

/* A MAC whose digest is unknown (SHA-256's OID in macData changed to
 * 2.16.840.1.101.3.4.2.127) is unsupported, the OID named; the OID
 * GnuTLS decodes is freed (ASan builds: no leak). */
START_TEST(unknown_mac_digest)
{
	static const uint8_t sha256[] = {0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	                                 0x02, 0x01};
	ps_buf key = PS_BUF_INIT, cert = PS_BUF_INIT;
	size_t n, i, at = 0;
	uint8_t *p = load("default.p12", &n);

	for (i = 0; i + sizeof sha256 <= n; i++) /* the last one is macData's */
		if (memcmp(p + i, sha256, sizeof sha256) == 0)
			at = i;
	ck_assert(at > n - 100);
	p[at + sizeof sha256 - 1] = 0x7f;
	ck_assert_int_eq(ps_p12_parse(ctx, p, n, PW, strlen(PW), &key, &cert),
	                 PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "2.16.840.1.101.3.4.2.127"));
	ck_assert_uint_eq(key.len, 0);
	free(p);
}
END_TEST

/* Input that is not a PKCS#12 file, and a password no PKCS#12 file can have. */
START_TEST(not_p12)
{
	static const uint8_t junk[] = "-----BEGIN PKCS12-----\nnot really\n";
	ps_buf key = PS_BUF_INIT, cert = PS_BUF_INIT;
	size_t n;
	uint8_t *p;

	bad("cert.der", PW, PDFSTAMP_E_USAGE);
	bad("key.der", PW, PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_p12_parse(ctx, junk, sizeof junk - 1, PW, strlen(PW), &key, &cert),
	                 PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_p12_parse(ctx, junk, 0, PW, strlen(PW), &key, &cert),
	                 PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_p12_parse(ctx, NULL, 0, NULL, 0, &key, &cert), PDFSTAMP_E_USAGE);
	p = load("default.p12", &n);
	ck_assert_int_eq(ps_p12_parse(ctx, p, n, "p12\0secret", 10, &key, &cert),
	                 PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "NUL"));
	/* the password's length is PWLEN, not strlen: a prefix is wrong */
	ck_assert_int_eq(ps_p12_parse(ctx, p, n, PW "xyz", strlen(PW), &key, &cert), 0);
	ps_buf_free(&key);
	ps_buf_free(&cert);
	ck_assert_int_eq(ps_p12_parse(ctx, p, n, PW, strlen(PW) - 1, &key, &cert),
	                 PDFSTAMP_E_PASSWORD);
	ck_assert_uint_eq(key.len, 0);
	free(p);
}
END_TEST

/* Hostile bytes: every truncation of the default and legacy files, and
 * each byte flipped in turn, give an error or (a flip where nothing
 * checks it, such as in the MAC's iteration count's padding) the right
 * answer; never a crash (ASan builds), never a key that is not the key. */
START_TEST(damaged)
{
	static const char *const names[] = {"default.p12", "legacy.p12"};
	ps_buf key = PS_BUF_INIT, cert = PS_BUF_INIT;
	size_t n, i, k, ok = 0;
	uint8_t *p;
	int rc;

	for (k = 0; k < 2; k++) {
		p = load(names[k], &n);
		for (i = 0; i < n; i += 7) {
			rc = ps_p12_parse(ctx, p, i, PW, strlen(PW), &key, &cert);
			ck_assert_msg(rc < 0, "%s cut at %zu parsed", names[k], i);
			ck_assert_uint_eq(key.len, 0);
		}
		for (i = 0; i < n; i += 5) {
			p[i] ^= 0x20;
			rc = ps_p12_parse(ctx, p, n, PW, strlen(PW), &key, &cert);
			p[i] ^= 0x20;
			if (rc == 0) {
				check_answer(names[k], &key, &cert);
				ok++;
			} else {
				ck_assert_msg(rc == PDFSTAMP_E_USAGE || rc == PDFSTAMP_E_PASSWORD ||
				              rc == PDFSTAMP_E_UNSUPPORTED, "%s byte %zu: %d",
				              names[k], i, rc);
			}
			ps_buf_free(&key);
			ps_buf_free(&cert);
		}
		free(p);
	}
	ck_assert(ok < 20); /* nearly every byte is checked by something */
}
END_TEST

static Suite *p12_suite(void)
{
	Suite *s = suite_create("p12");
	TCase *tc = tcase_create("p12");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, openssl3_default);
	tcase_add_test(tc, openssl_legacy);
	tcase_add_test(tc, variants);
	tcase_add_test(tc, wrong_password);
	tcase_add_test(tc, missing_parts);
	tcase_add_test(tc, iteration_limit);
	tcase_add_test(tc, unknown_mac_digest);
	tcase_add_test(tc, not_p12);
	tcase_add_test(tc, damaged);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(p12_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
