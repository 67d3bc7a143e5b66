/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_crypt.c - unit tests for src/kdf.c and src/sec.c.
 *
 * Known answers come from two independent sources:
 *  - the tests/kat/ files, made by qpdf 11.3 (tests/kat/make-kat.sh): /O /U /OE
 *    /UE /Perms /P and the file key qpdf reports for R5 and R6 files;
 *  - NIST SP 800-38A F.2.5 (CBC-AES256) for the AESV3 layer, and mbedTLS
 *    used directly (not through sec.c) to build or check ciphertexts.
 * SASLprep expectations are taken from RFC 4013 section 3 and the
 * Unicode 3.2 decomposition of U+2F874 (RFC 4013, RFC 3454; ISO 32000-2 7.6.4.3.3).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mbedtls/aes.h>

#include "ps.h"
#include "doc.h"
#include "rng.h"
#include "sec_aes.h"
#include "sha2.h"
#include "cpu.h"
#include "pubsec.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "."
#endif

/* ---- helpers -------------------------------------------------------------- */

static ps_ctx *new_ctx(void)
{
	ps_ctx *ctx = NULL;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes hex text into OUT (at most CAP bytes); returns the length, or
 * fails the test on bad input. */
static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (s[0] && s[0] != '\n') {
		int hi = hexval((unsigned char)s[0]);
		int lo = s[1] ? hexval((unsigned char)s[1]) : -1;

		ck_assert_msg(hi >= 0 && lo >= 0, "bad hex: %s", s);
		ck_assert_msg(n < cap, "hex value too long: %s", s);
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return n;
}

struct kat {
	const char *name;
	int r;
	int64_t p;
	int encrypt_metadata;
	uint8_t upw[256], opw[256];
	size_t upwlen, opwlen;
	uint8_t o[48], u[48], oe[32], ue[32], perms[16], key[32];
	unsigned seen;
};

static int64_t parse_i64(const char *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	ck_assert_msg(errno == 0 && end != v && (*end == '\0' || *end == '\n'),
	              "bad number: %s", v);
	return (int64_t)x;
}

static void fixed_hex(const char *v, uint8_t *out, size_t want, const char *what)
{
	size_t n = unhex(v, out, want);

	ck_assert_msg(n == want, "%s: %zu bytes, expected %zu", what, n, want);
}

static void load_kat(const char *name, struct kat *k)
{
	char path[512], line[1024];
	FILE *f;

	memset(k, 0, sizeof *k);
	k->name = name;
	snprintf(path, sizeof path, "%s/kat/%s.txt", TEST_SRCDIR, name);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof line, f)) {
		char *eq, *v;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		eq = strchr(line, '=');
		ck_assert_msg(eq != NULL, "%s: bad line %s", path, line);
		*eq = '\0';
		v = eq + 1;
		if (!strcmp(line, "r")) {
			k->r = (int)parse_i64(v);
			k->seen |= 1;
		} else if (!strcmp(line, "p")) {
			k->p = parse_i64(v);
			k->seen |= 2;
		} else if (!strcmp(line, "encrypt_metadata")) {
			k->encrypt_metadata = (int)parse_i64(v);
			k->seen |= 4;
		} else if (!strcmp(line, "user_pw")) {
			k->upwlen = unhex(v, k->upw, sizeof k->upw);
			k->seen |= 8;
		} else if (!strcmp(line, "owner_pw")) {
			k->opwlen = unhex(v, k->opw, sizeof k->opw);
			k->seen |= 16;
		} else if (!strcmp(line, "o")) {
			fixed_hex(v, k->o, 48, "o");
			k->seen |= 32;
		} else if (!strcmp(line, "u")) {
			fixed_hex(v, k->u, 48, "u");
			k->seen |= 64;
		} else if (!strcmp(line, "oe")) {
			fixed_hex(v, k->oe, 32, "oe");
			k->seen |= 128;
		} else if (!strcmp(line, "ue")) {
			fixed_hex(v, k->ue, 32, "ue");
			k->seen |= 256;
		} else if (!strcmp(line, "perms")) {
			fixed_hex(v, k->perms, 16, "perms");
			k->seen |= 512;
		} else if (!strcmp(line, "key")) {
			fixed_hex(v, k->key, 32, "key");
			k->seen |= 1024;
		} else {
			ck_abort_msg("%s: unknown field %s", path, line);
		}
	}
	fclose(f);
	ck_assert_msg(k->seen == 2047, "%s: missing fields (mask %#x)", path, k->seen);
}

static void kat_params(const struct kat *k, ps_secparams *sp)
{
	memset(sp, 0, sizeof *sp);
	sp->v = 5;
	sp->r = k->r;
	sp->p = k->p;
	sp->encrypt_metadata = k->encrypt_metadata;
	memcpy(sp->o, k->o, 48);
	memcpy(sp->u, k->u, 48);
	memcpy(sp->oe, k->oe, 32);
	memcpy(sp->ue, k->ue, 32);
	memcpy(sp->perms, k->perms, 16);
}

/* Authenticates and checks the outcome in one go. */
static void expect_auth(ps_ctx *ctx, const ps_secparams *sp, const void *pw, size_t len,
                        const uint8_t *want_key, int want_owner, int want_perms)
{
	uint8_t key[32];
	int owner = -1, perms = -1, rc;

	memset(key, 0xa5, sizeof key);
	rc = ps_kdf_authenticate(ctx, sp, pw, len, key, &owner, &perms);
	ck_assert_msg(rc == 0, "authenticate failed: %d %s", rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(owner, want_owner);
	ck_assert_int_eq(perms, want_perms);
	if (want_key)
		ck_assert_mem_eq(key, want_key, 32);
}

static void expect_bad_password(ps_ctx *ctx, const ps_secparams *sp, const void *pw, size_t len)
{
	uint8_t key[32], sentinel[32];
	int owner = -1, perms = -1;

	memset(key, 0xa5, sizeof key);
	memset(sentinel, 0xa5, sizeof sentinel);
	ck_assert_int_eq(ps_kdf_authenticate(ctx, sp, pw, len, key, &owner, &perms),
	                 PDFSTAMP_E_PASSWORD);
	ck_assert_int_eq(pdfstamp_ctx_errcode(ctx), PDFSTAMP_E_PASSWORD);
	ck_assert_mem_eq(key, sentinel, 32);   /* untouched on failure */
	ck_assert_int_eq(owner, 0);
	ck_assert_int_eq(perms, 0);
}

/* ---- qpdf known answers ----------------------------------------------------- */

static const char *const kat_names[] = {
	"r6-basic", "r6-empty-user", "r6-nonascii", "r6-long", "r5-basic", "r5-nonascii",
	"r6-unprepared", "r5-unprepared",
};
#define NKAT (int)(sizeof kat_names / sizeof kat_names[0])

START_TEST(test_kat_hash)
{
	struct kat k;
	uint8_t h[32];
	ps_ctx *ctx = new_ctx();

	load_kat(kat_names[_i], &k);
	/* qpdf does no SASLprep, and these passwords are ASCII, NFC or
	 * exactly 127 bytes, so the bytes are what both sides hashed. */
	ck_assert_int_le(k.upwlen, 127);
	ck_assert_int_le(k.opwlen, 127);
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, k.r, k.upw, k.upwlen, k.u + 32, NULL, h), 0);
	ck_assert_mem_eq(h, k.u, 32);
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, k.r, k.opw, k.opwlen, k.o + 32, k.u, h), 0);
	ck_assert_mem_eq(h, k.o, 32);
	/* The owner hash needs all 48 bytes of U, not just U[0..31]. */
	{
		uint8_t u32[48];

		memcpy(u32, k.u, 32);
		memset(u32 + 32, 0, 16);
		ck_assert_int_eq(ps_kdf_hash_r6(ctx, k.r, k.opw, k.opwlen, k.o + 32, u32, h), 0);
		ck_assert(memcmp(h, k.o, 32) != 0);
	}
	/* The other revision's hash must not match (R5 and R6 differ). */
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, k.r == 5 ? 6 : 5, k.upw, k.upwlen, k.u + 32, NULL, h),
	                 0);
	ck_assert(memcmp(h, k.u, 32) != 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_kat_auth)
{
	struct kat k;
	ps_secparams sp;
	ps_ctx *ctx = new_ctx();
	uint8_t wrong[260];

	load_kat(kat_names[_i], &k);
	kat_params(&k, &sp);

	expect_auth(ctx, &sp, k.upw, k.upwlen, k.key, 0, 1);
	expect_auth(ctx, &sp, k.opw, k.opwlen, k.key, 1, 1);

	/* A wrong password: the user password with its last byte changed (or
	 * one byte when the user password is empty). */
	memcpy(wrong, k.upw, k.upwlen);
	if (k.upwlen) {
		wrong[k.upwlen - 1] ^= 0x01;
		expect_bad_password(ctx, &sp, wrong, k.upwlen);
	} else {
		expect_bad_password(ctx, &sp, "x", 1);
		/* An empty user password is not a wildcard: a space or any
		 * other non-empty string must still fail. */
		expect_bad_password(ctx, &sp, " ", 1);
	}
	expect_bad_password(ctx, &sp, "definitely not it", 17);
	if (k.upwlen)
		expect_bad_password(ctx, &sp, "", 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_kat_perms_mismatch)
{
	struct kat k;
	ps_secparams sp;
	ps_ctx *ctx = new_ctx();

	load_kat(kat_names[_i], &k);

	/* Algorithm 13 failures still authenticate, with perms_ok = 0. */
	kat_params(&k, &sp);
	sp.perms[5] ^= 0x40;
	expect_auth(ctx, &sp, k.upw, k.upwlen, k.key, 0, 0);

	kat_params(&k, &sp);
	sp.p ^= 0x4;   /* /P says something /Perms does not */
	expect_auth(ctx, &sp, k.opw, k.opwlen, k.key, 1, 0);

	kat_params(&k, &sp);
	sp.encrypt_metadata = !sp.encrypt_metadata;
	expect_auth(ctx, &sp, k.upw, k.upwlen, k.key, 0, 0);

	/* A damaged /UE unwraps to a different key, which /Perms catches. */
	kat_params(&k, &sp);
	sp.ue[31] ^= 0x80;
	{
		uint8_t key[32];
		int owner, perms;

		ck_assert_int_eq(ps_kdf_authenticate(ctx, &sp, (const char *)k.upw, k.upwlen,
		                                     key, &owner, &perms), 0);
		ck_assert(memcmp(key, k.key, 32) != 0);
		ck_assert_int_eq(perms, 0);
		/* ...but the owner path (through /OE) is unaffected. */
		expect_auth(ctx, &sp, k.opw, k.opwlen, k.key, 1, 1);
	}

	/* Changing U's key salt breaks the owner check (it hashes all 48
	 * bytes of U), while the user password still validates. */
	kat_params(&k, &sp);
	sp.u[44] ^= 0x01;
	expect_bad_password(ctx, &sp, k.opw, k.opwlen);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- Algorithm 2.B hashes per authentication (kdf.c design note 2) ---------- */

/* Authenticates PW and returns how many Alg. 2.B (R5: SHA-256) hashes it
 * took, checking the role and /Perms outcome (WANT_OWNER -1: must fail). */
static unsigned long hashes_for(ps_ctx *ctx, const ps_secparams *sp, const void *pw, size_t len,
                                const uint8_t *want_key, int want_owner, int want_perms)
{
	unsigned long before = ctx->kdf_hashes;

	if (want_owner < 0)
		expect_bad_password(ctx, sp, pw, len);
	else
		expect_auth(ctx, sp, pw, len, want_key, want_owner, want_perms);
	return ctx->kdf_hashes - before;
}

static const char *const count_kats[] = { "r6-basic", "r5-basic", "r6-empty-user" };

START_TEST(test_hash_count)
{
	struct kat k;
	ps_secparams sp;
	ps_ctx *ctx = new_ctx();
	uint8_t h[32];
	unsigned long n0;

	load_kat(count_kats[_i], &k);
	kat_params(&k, &sp);
	/* the counter counts: one ps_kdf_hash_r6, one hash */
	n0 = ctx->kdf_hashes;
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, k.r, k.upw, k.upwlen, k.u + 32, NULL, h), 0);
	ck_assert_uint_eq(ctx->kdf_hashes - n0, 1);
	/* /Perms intact: owner 1 (its key hash), user 2 (the owner's key hash,
	 * then its own), a wrong password 4 (both key hashes, then both
	 * validation hashes of Alg. 2.A) */
	ck_assert_uint_eq(hashes_for(ctx, &sp, k.opw, k.opwlen, k.key, 1, 1), 1);
	ck_assert_uint_eq(hashes_for(ctx, &sp, k.upw, k.upwlen, k.key, 0, 1), 2);
	ck_assert_uint_eq(hashes_for(ctx, &sp, "definitely not it", 17, NULL, -1, 0), 4);
	/* /Perms that matches no key (changed by a byte): Alg. 2.A's
	 * validation hashes decide, with the keys already derived: owner 3,
	 * user 4; both still authenticate, with perms_ok 0 */
	sp.perms[5] ^= 0x40;
	ck_assert_uint_eq(hashes_for(ctx, &sp, k.opw, k.opwlen, k.key, 1, 0), 3);
	ck_assert_uint_eq(hashes_for(ctx, &sp, k.upw, k.upwlen, k.key, 0, 0), 4);
	ck_assert_uint_eq(hashes_for(ctx, &sp, "definitely not it", 17, NULL, -1, 0), 4);
	/* /P that /Perms does not record: the same, by Alg. 13's P check */
	kat_params(&k, &sp);
	sp.p ^= 0x4;
	ck_assert_uint_eq(hashes_for(ctx, &sp, k.opw, k.opwlen, k.key, 1, 0), 3);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_hash_count_made)
{
	/* Files pdfstamp writes (Alg. 8-10), R6: the same counts, and a
	 * password that is both opens as owner with one hash (Alg. 2.A order). */
	ps_ctx *ctx = new_ctx();
	ps_secparams sp;
	uint8_t key[32];

	ck_assert_int_eq(ps_random(ctx, key, 32), 0);
	memset(&sp, 0, sizeof sp);
	sp.p = -3904;
	sp.encrypt_metadata = 1;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "user pw", 7, "owner pw", 8, key), 0);
	ck_assert_uint_eq(hashes_for(ctx, &sp, "owner pw", 8, key, 1, 1), 1);
	ck_assert_uint_eq(hashes_for(ctx, &sp, "user pw", 7, key, 0, 1), 2);
	ck_assert_uint_eq(hashes_for(ctx, &sp, "", 0, NULL, -1, 0), 4);
	memset(&sp, 0, sizeof sp);
	sp.p = -3904;
	sp.encrypt_metadata = 1;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "same", 4, "same", 4, key), 0);
	ck_assert_uint_eq(hashes_for(ctx, &sp, "same", 4, key, 1, 1), 1);
	/* a /UE that unwraps to another key (damaged): /Perms confirms neither;
	 * the user password still validates (Alg. 11) and gets that key, with
	 * perms_ok 0, as Alg. 2.A alone would give it */
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "user pw", 7, "owner pw", 8, key), 0);
	sp.ue[3] ^= 0x10;
	ck_assert_uint_eq(hashes_for(ctx, &sp, "user pw", 7, NULL, 0, 0), 4);
	ck_assert_uint_eq(hashes_for(ctx, &sp, "owner pw", 8, key, 1, 1), 1);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_hash_count_files)
{
	/* pdfstamp_doc_auth on the R6 and R5 samples (qpdf-made): the owner
	 * password costs one hash, the user password two. */
	static const char *const files[] = { "r6-table.pdf", "r5-table.pdf", "r6-objstm.pdf" };
	static const char *const pws[] = { "sample-owner", "sample-user" };
	char path[512];
	size_t f;
	int w;

	for (f = 0; f < sizeof files / sizeof files[0]; f++) {
		for (w = 0; w < 2; w++) {
			ps_ctx *ctx = new_ctx();
			pdfstamp_doc *doc = NULL;
			struct ps_doc_security ds;

			snprintf(path, sizeof path, "%s/../samples/%s", TEST_SRCDIR, files[f]);
			ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), 0);
			ck_assert_uint_eq(ctx->kdf_hashes, 0);
			ck_assert_int_eq(pdfstamp_doc_auth(doc, pws[w], strlen(pws[w]), 0), 0);
			ps_doc_security(doc, &ds);
			ck_assert_int_eq(ds.authenticated, w == 0 ? 2 : 1);
			ck_assert_msg(ctx->kdf_hashes == (w == 0 ? 1u : 2u), "%s, %s password: %lu hashes", files[f],
			              w == 0 ? "owner" : "user", ctx->kdf_hashes);
			pdfstamp_doc_close(doc);
			pdfstamp_ctx_free(ctx);
		}
	}
}
END_TEST

START_TEST(test_kat_long_truncation)
{
	struct kat k;
	ps_secparams sp;
	ps_ctx *ctx = new_ctx();
	char pw[300];

	load_kat("r6-long", &k);
	ck_assert_int_eq(k.upwlen, 127);
	ck_assert_int_eq(k.opwlen, 127);
	kat_params(&k, &sp);

	/* Bytes past 127 are ignored (Alg. 2.A step b). */
	memcpy(pw, k.upw, 127);
	memset(pw + 127, 'Z', 100);
	expect_auth(ctx, &sp, pw, 227, k.key, 0, 1);
	memcpy(pw, k.opw, 127);
	memcpy(pw + 127, "-and-then-some", 14);
	expect_auth(ctx, &sp, pw, 141, k.key, 1, 1);
	/* ...but all 127 count. */
	expect_bad_password(ctx, &sp, k.upw, 126);
	expect_bad_password(ctx, &sp, k.opw, 126);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* SASLprep at authentication: other spellings of the same password. */
START_TEST(test_kat_unicode_forms)
{
	static const char nfd[] = "pa\xcc\x88sswo\xcc\x88rd";    /* a + U+0308 */
	static const char fullwidth_p[] = "\xef\xbd\x90\xc3\xa4sswo\xcc\x88rd"; /* U+FF50 */
	static const char shy[] = "p\xc3\xa4ss\xc2\xadw\xc3\xb6rd";    /* U+00AD inside */
	static const char latin1[] = "p\xe4ssw\xf6rd";                /* not UTF-8 */
	const char *names[] = {"r6-nonascii", "r5-nonascii"};
	int i;

	for (i = 0; i < 2; i++) {
		struct kat k;
		ps_secparams sp;
		ps_ctx *ctx = new_ctx();

		load_kat(names[i], &k);
		kat_params(&k, &sp);
		expect_auth(ctx, &sp, nfd, strlen(nfd), k.key, 0, 1);
		expect_auth(ctx, &sp, fullwidth_p, strlen(fullwidth_p), k.key, 0, 1);
		expect_auth(ctx, &sp, shy, strlen(shy), k.key, 0, 1);
		expect_bad_password(ctx, &sp, latin1, strlen(latin1));
		pdfstamp_ctx_free(ctx);
	}
}
END_TEST

/* qpdf hashed the raw, non-normalised bytes of these passwords; they open
 * only through the raw-bytes fallback, since SASLprep changes them. */
START_TEST(test_kat_unprepared)
{
	const char *names[] = {"r6-unprepared", "r5-unprepared"};
	int i;

	for (i = 0; i < 2; i++) {
		struct kat k;
		ps_secparams sp;
		uint8_t prep[128];
		size_t plen;
		ps_ctx *ctx = new_ctx();

		load_kat(names[i], &k);
		kat_params(&k, &sp);
		ck_assert_int_eq(ps_kdf_prepare_password(ctx, (const char *)k.upw, k.upwlen, 0,
		                                         prep, &plen), 0);
		ck_assert(plen != k.upwlen || memcmp(prep, k.upw, plen) != 0);
		ck_assert_int_eq(ps_kdf_prepare_password(ctx, (const char *)k.opw, k.opwlen, 0,
		                                         prep, &plen), 0);
		ck_assert(plen != k.opwlen || memcmp(prep, k.opw, plen) != 0);
		expect_auth(ctx, &sp, k.upw, k.upwlen, k.key, 0, 1);
		expect_auth(ctx, &sp, k.opw, k.opwlen, k.key, 1, 1);
		/* The normalised spelling is a different password here. */
		expect_bad_password(ctx, &sp, "p\xc3\xa4ssword", 10);
		pdfstamp_ctx_free(ctx);
	}
}
END_TEST

/* 48 qpdf-made R6 files: 192 independent Algorithm 2.B outputs; once with
 * the CPU's kernels (sha2.c, aesmb.c's AES-128 chain) where it has them,
 * once with mbedTLS alone (PDFSTAMP_AES=mbedtls). */
START_TEST(test_kat_bulk)
{
	char path[512], line[2048];
	FILE *f;
	int count = 0;
	ps_ctx *ctx = new_ctx();

	if (_i == 1)
		ck_assert_int_eq(setenv("PDFSTAMP_AES", "mbedtls", 1), 0);
	else
		ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);

	snprintf(path, sizeof path, "%s/kat/r6-bulk.txt", TEST_SRCDIR);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof line, f)) {
		char *field[7], *save = NULL, *t;
		uint8_t upw[128], opw[128], h[32];
		size_t ul, ol;
		struct kat k;
		ps_secparams sp;
		int nf = 0;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		for (t = strtok_r(line, " \n", &save); t && nf < 7; t = strtok_r(NULL, " \n", &save))
			field[nf++] = t;
		ck_assert_msg(nf == 7 && !t, "%s: bad line", path);
		memset(&k, 0, sizeof k);
		k.r = 6;
		k.p = -4;
		k.encrypt_metadata = 1;
		ul = unhex(field[0], upw, sizeof upw);
		ol = unhex(field[1], opw, sizeof opw);
		fixed_hex(field[2], k.o, 48, "o");
		fixed_hex(field[3], k.u, 48, "u");
		fixed_hex(field[4], k.oe, 32, "oe");
		fixed_hex(field[5], k.ue, 32, "ue");
		fixed_hex(field[6], k.key, 32, "key");
		kat_params(&k, &sp);

		ck_assert_int_eq(ps_kdf_hash_r6(ctx, 6, upw, ul, k.u + 32, NULL, h), 0);
		ck_assert_msg(memcmp(h, k.u, 32) == 0, "line %d: user hash", count + 1);
		ck_assert_int_eq(ps_kdf_hash_r6(ctx, 6, opw, ol, k.o + 32, k.u, h), 0);
		ck_assert_msg(memcmp(h, k.o, 32) == 0, "line %d: owner hash", count + 1);
		/* The key-salt hashes are checked through the unwrapped key
		 * (/Perms is not recorded, so perms_ok is 0). */
		expect_auth(ctx, &sp, upw, ul, k.key, 0, 0);
		expect_auth(ctx, &sp, opw, ol, k.key, 1, 0);
		count++;
	}
	fclose(f);
	ck_assert_int_eq(count, 48);
	/* the probe was made once and kept (also for the register wipe) */
	ck_assert_uint_eq(ctx->cpu, ps_cpu_probe() | 1u << 31);
	pdfstamp_ctx_free(ctx);
	ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);
}
END_TEST

/* One CPUID probe per context (cpu.c note 3): ps_cpu_bits keeps it, the
 * AES engine takes it from there (ps_cipher_init) and so does the password
 * hash, neither probing again: a context whose kept answer says "no AES-NI,
 * no SHA" gets mbedTLS for both, and the hash is still right. */
START_TEST(test_cpu_once)
{
	ps_ctx *ctx = new_ctx();
	unsigned real = ps_cpu_probe();
	uint8_t key[32], h[32];
	ps_cipher c;
	struct kat k;

	memset(key, 0x5c, sizeof key);
	memset(&c, 0, sizeof c);
	ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);
	ck_assert_uint_eq(ctx->cpu, 0);
	ck_assert_uint_eq(ps_cpu_bits(ctx), real);
	ck_assert_uint_eq(ctx->cpu, real | 1u << 31);
	ck_assert_int_eq(ps_cipher_init(ctx, &c, key), 0);
	ck_assert_int_eq(ps_cipher_eng(&c)->kind, ps_aes_engine_best(real));
	ps_cipher_free(&c);

	ctx->cpu = 1u << 31;            /* probed: nothing */
	ck_assert_int_eq(ps_cipher_init(ctx, &c, key), 0);
	ck_assert_int_eq(ps_cipher_eng(&c)->kind, PS_AES_MBEDTLS);
	ps_cipher_free(&c);
	load_kat("r6-basic", &k);
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, k.r, k.upw, k.upwlen, k.u + 32, NULL, h), 0);
	ck_assert_mem_eq(h, k.u, 32);
	ck_assert_uint_eq(ctx->cpu, 1u << 31);
	ck_assert_uint_eq(ps_cpu_bits(NULL), real);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* sha2.c's kernel: the FIPS 180-4 examples (one block, two blocks after
 * padding, a million 'a'), then every length 0..300 (at offset length mod
 * 16 of an aligned buffer) and a few long ones against mbedTLS called
 * directly. */
static void sha256_ref(const uint8_t *p, size_t n, uint8_t out[32])
{
	ck_assert_int_eq(ps_sha256(p, n, out), 0);
}

START_TEST(test_sha256_kernel)
{
	static const char *const msg[] = {
		"abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", NULL,
	};
	static const char *const want[] = {
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
	};
	int ni = (ps_cpu_probe() & PS_CPU_SHA) != 0;
	size_t n, len[] = { 1000, 4096, 6400, 15296, 1000000 };
	uint8_t *buf = malloc(1000000 + 64), h[32], r[32], w[32];
	uint64_t st = 0x5ea256;
	unsigned i, off;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < 3; i++) {
		const uint8_t *p = (const uint8_t *)msg[i];

		n = msg[i] ? strlen(msg[i]) : 1000000;
		if (!msg[i]) {
			memset(buf, 'a', n);
			p = buf;
		}
		ck_assert_int_eq(unhex(want[i], w, 32), 32);
		ck_assert_int_eq(ps_sha256_hw(ni, p, n, h), 0);
		ck_assert_mem_eq(h, w, 32);
		ck_assert_int_eq(ps_sha256_hw(0, p, n, h), 0);
		ck_assert_mem_eq(h, w, 32);
	}
	for (i = 0; i < 1000000 + 64; i += 8) {
		uint64_t v = (st += 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;

		memcpy(buf + i, &v, 8);
	}
	for (n = 0; n <= 300; n++) {
		off = (unsigned)(n % 16);
		sha256_ref(buf + off, n, r);
		ck_assert_int_eq(ps_sha256_hw(ni, buf + off, n, h), 0);
		ck_assert_msg(memcmp(h, r, 32) == 0, "length %zu", n);
	}
	for (i = 0; i < sizeof len / sizeof len[0]; i++) {
		sha256_ref(buf + i, len[i], r);
		ck_assert_int_eq(ps_sha256_hw(ni, buf + i, len[i], h), 0);
		ck_assert_msg(memcmp(h, r, 32) == 0, "length %zu", len[i]);
	}
	ck_assert_int_eq(ps_sha256_hw(ni, NULL, 0, h), 0);
	sha256_ref(buf, 0, r);
	ck_assert_mem_eq(h, r, 32);
	free(buf);
}
END_TEST

/* sha2.c's streaming SHA-256, SHA-384 and SHA-512 (note 6), with the
 * kernels (if this CPU has them) and without: every length 0..300 and a
 * long one, cut into pieces of every size 1..130 (so that pieces end
 * inside, at and across block boundaries), against mbedTLS over the
 * whole. */
START_TEST(test_sha256_stream)
{
	unsigned cpu = ps_cpu_probe();
	int ni = (cpu & PS_CPU_SHA) != 0, k, v;
	size_t n, piece, at, lens[302];
	uint8_t *buf = malloc(70000), h[64], r[64];
	ps_sha256_stream st;
	ps_sha512_stream st5;
	unsigned i;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < 70000; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 7));
	for (i = 0; i <= 300; i++)
		lens[i] = i;
	lens[301] = 65537;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 302; i++) {
			n = lens[i];
			sha256_ref(buf, n, r);
			for (piece = 1; piece <= 130; piece += (n > 300 ? 43 : 1)) {
				ps_sha256_stream_start(&st, k ? 0 : ni);
				for (at = 0; at < n; at += piece)
					ps_sha256_stream_update(&st, buf + at,
					                        n - at < piece ? n - at : piece);
				ps_sha256_stream_finish(&st, h);
				ck_assert_msg(memcmp(h, r, 32) == 0, "length %zu, pieces of %zu, ni %d",
				              n, piece, k ? 0 : ni);
			}
			for (v = 0; v < 2; v++) {
				ck_assert_int_eq(ps_sha512(buf, n, r, v), 0);
				for (piece = 1; piece <= 260; piece += (n > 300 ? 87 : 3)) {
					ps_sha512_stream_start(&st5, k ? 0 : cpu, v);
					for (at = 0; at < n; at += piece)
						ps_sha512_stream_update(&st5, buf + at,
						                        n - at < piece ? n - at : piece);
					memset(h, 0xEE, sizeof h);
					ps_sha512_stream_finish(&st5, h);
					ck_assert_msg(memcmp(h, r, v ? 48 : 64) == 0,
					              "SHA-%d length %zu, pieces of %zu, cpu %u",
					              v ? 384 : 512, n, piece, k ? 0 : cpu);
					ck_assert(!v || h[48] == 0xEE);
				}
			}
		}
	}
	free(buf);
}
END_TEST

/* sha2.c's SHA-384/512 kernel (note 3) when _i is 0 (if this CPU has AVX
 * and BMI2; else it is the fallback again), its mbedTLS fallback (no CPU
 * bits) when _i is 1: the FIPS 180-4 examples (NIST's example values for
 * SHA-384 and SHA-512: the empty message, one block, two blocks after
 * padding, a million 'a'), then every length 0..300 (at offset length mod
 * 16 of an aligned buffer) and long ones against mbedTLS called directly:
 * among them lengths that Alg. 2.B hashes (64 copies of password || K ||
 * U: 2048 to 15296 bytes).  SHA-384 writes 48 bytes and nothing after. */
static void sha512_ref(const uint8_t *p, size_t n, uint8_t *out, int is384)
{
	ck_assert_int_eq(ps_sha512(p, n, out, is384), 0);
}

START_TEST(test_sha512_kernel)
{
	static const char *const msg[] = {
		"", "abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		"klmnopqrlmnopqrsmnopqrstnopqrstu", NULL,
	};
	static const char *const want[][2] = {
		{ "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
		  "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
		  "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da"
		  "274edebfe76f65fbd51ad2f14898b95b" },
		{ "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
		  "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
		  "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
		  "8086072ba1e7cc2358baeca134c825a7" },
		{ "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
		  "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445",
		  "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6"
		  "b0455a8520bc4e6f5fe95b1fe3c8452b" },
		{ "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
		  "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
		  "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712"
		  "fcc7c71a557e2db966c3e9fa91746039" },
		{ "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
		  "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b",
		  "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b"
		  "07b8b3dc38ecc4ebae97ddd87f3d8985" },
	};
	const unsigned cpu = _i == 0 ? ps_cpu_probe() : 0;
	size_t n, len[] = { 1000, 2048, 4096, 6528, 7552, 7680, 7727, 7744, 8576, 15296, 1000000 };
	uint8_t *buf = malloc(1000000 + 64), h[80], r[64], w[64];
	uint64_t st = 0x5ea512;
	unsigned i, off;
	int is384, hl;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < sizeof msg / sizeof msg[0]; i++) {
		const uint8_t *p = (const uint8_t *)msg[i];

		n = msg[i] ? strlen(msg[i]) : 1000000;
		if (!msg[i]) {
			memset(buf, 'a', n);
			p = buf;
		}
		for (is384 = 0; is384 <= 1; is384++) {
			hl = is384 ? 48 : 64;
			ck_assert_int_eq(unhex(want[i][is384], w, 64), hl);
			memset(h, 0xa5, sizeof h);
			ck_assert_int_eq(ps_sha512_hw(cpu, p, n, h, is384), 0);
			ck_assert_msg(memcmp(h, w, hl) == 0, "example %u, SHA-%d", i, hl * 8);
			ck_assert_uint_eq(h[hl], 0xa5);
		}
	}
	for (i = 0; i < 1000000 + 64; i += 8) {
		uint64_t v = (st += 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;

		memcpy(buf + i, &v, 8);
	}
	for (is384 = 0; is384 <= 1; is384++) {
		hl = is384 ? 48 : 64;
		for (n = 0; n <= 300; n++) {
			off = (unsigned)(n % 16);
			sha512_ref(buf + off, n, r, is384);
			ck_assert_int_eq(ps_sha512_hw(cpu, buf + off, n, h, is384), 0);
			ck_assert_msg(memcmp(h, r, hl) == 0, "SHA-%d, length %zu", hl * 8, n);
		}
		for (i = 0; i < sizeof len / sizeof len[0]; i++) {
			sha512_ref(buf + i, len[i], r, is384);
			ck_assert_int_eq(ps_sha512_hw(cpu, buf + i, len[i], h, is384), 0);
			ck_assert_msg(memcmp(h, r, hl) == 0, "SHA-%d, length %zu", hl * 8, len[i]);
		}
		ck_assert_int_eq(ps_sha512_hw(cpu, NULL, 0, h, is384), 0);
		sha512_ref(buf, 0, r, is384);
		ck_assert_mem_eq(h, r, hl);
	}
	free(buf);
}
END_TEST

/* sha2.c note 5: what the SHA-384/512 kernel leaves on the stack.  The
 * region below this test's frame is filled with a pattern, the kernel
 * hashes a 7,744-byte message, and the region is searched (8-byte words)
 * for every value that hash computed: each W[t], W[t] + K[t], T1, new a,
 * new e and a ^ b of every round and each block's H, from the plain
 * FIPS 180-4 6.4.2 below (checked against mbedTLS).  Without the kernel's
 * stack wipe GCC 12 -O2 leaves 60 of them.  A control: a canary that a
 * function leaves in its frame, called the same way, is found. */
#define RESIDUE_SPAN 32768
#define RESIDUE_PATTERN 0x5a

static const uint64_t ref_k512[80] = {
	0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
	0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
	0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
	0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
	0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
	0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
	0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
	0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
	0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
	0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
	0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
	0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
	0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
	0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
	0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
	0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
	0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
	0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
	0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
	0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
};

#define REF_ROTR(x, n) ((x) >> (n) | (x) << (64 - (n)))

/* SHA-512 of M[0..N) (N < 2^61) into OUT, appending every intermediate
 * value to VALS (*NV of them). */
static void ref_sha512_trace(const uint8_t *m, size_t n, uint8_t out[64], uint64_t *vals,
                             size_t *nv)
{
	uint64_t hs[8] = { 0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b,
	                   0xa54ff53a5f1d36f1, 0x510e527fade682d1, 0x9b05688c2b3e6c1f,
	                   0x1f83d9abfb41bd6b, 0x5be0cd19137e2179 };
	size_t total = (n + 17 + 127) / 128 * 128, off, i;
	uint8_t *pad = calloc(1, total);
	int t;

	ck_assert_ptr_nonnull(pad);
	memcpy(pad, m, n);
	pad[n] = 0x80;
	for (i = 0; i < 8; i++)
		pad[total - 1 - i] = (uint8_t)((uint64_t)n * 8 >> (8 * i));
	for (off = 0; off < total; off += 128) {
		uint64_t w[80], a = hs[0], b = hs[1], c = hs[2], d = hs[3], e = hs[4], f = hs[5],
		         g = hs[6], h = hs[7], t1, t2;

		for (t = 0; t < 80; t++) {
			if (t < 16) {
				for (w[t] = 0, i = 0; i < 8; i++)
					w[t] = w[t] << 8 | pad[off + 8 * (size_t)t + i];
			} else {
				w[t] = (REF_ROTR(w[t - 2], 19) ^ REF_ROTR(w[t - 2], 61) ^ w[t - 2] >> 6) +
				       w[t - 7] + w[t - 16] +
				       (REF_ROTR(w[t - 15], 1) ^ REF_ROTR(w[t - 15], 8) ^ w[t - 15] >> 7);
			}
			t1 = h + (REF_ROTR(e, 14) ^ REF_ROTR(e, 18) ^ REF_ROTR(e, 41)) +
			     ((e & f) ^ (~e & g)) + ref_k512[t] + w[t];
			t2 = (REF_ROTR(a, 28) ^ REF_ROTR(a, 34) ^ REF_ROTR(a, 39)) +
			     ((a & b) ^ (a & c) ^ (b & c));
			vals[(*nv)++] = w[t];
			vals[(*nv)++] = w[t] + ref_k512[t];
			vals[(*nv)++] = t1;
			h = g;
			g = f;
			f = e;
			e = d + t1;
			d = c;
			c = b;
			b = a;
			a = t1 + t2;
			vals[(*nv)++] = a;
			vals[(*nv)++] = e;
			vals[(*nv)++] = a ^ b;
		}
		hs[0] += a;
		hs[1] += b;
		hs[2] += c;
		hs[3] += d;
		hs[4] += e;
		hs[5] += f;
		hs[6] += g;
		hs[7] += h;
		for (i = 0; i < 8; i++)
			vals[(*nv)++] = hs[i];
	}
	for (i = 0; i < 64; i++)
		out[i] = (uint8_t)(hs[i / 8] >> (56 - 8 * (i % 8)));
	free(pad);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static __attribute__((noinline)) void residue_fill(void)
{
	uint8_t a[RESIDUE_SPAN], *p = a;

	memset(a, RESIDUE_PATTERN, sizeof a);
	__asm__ __volatile__("" : "+r"(p) : : "memory");   /* the stores stay */
}

static __attribute__((noinline)) void residue_canary(uint64_t canary)
{
	uint64_t a[32], *p = a;
	int i;

	for (i = 0; i < 32; i++)
		a[i] = canary;
	__asm__ __volatile__("" : "+r"(p) : : "memory");
}

/* How many 8-byte words of the region (what the last calls left below
 * this test's frame) are among VALS[0..NV) (sorted) or equal CANARY. */
static __attribute__((noinline)) size_t residue_scan(const uint64_t *vals, size_t nv,
                                                     uint64_t canary)
{
	uint8_t a[RESIDUE_SPAN], *p = a;
	size_t i, hits = 0;
	uint64_t v;

	/* the compiler must assume the asm wrote the array */
	__asm__ __volatile__("" : "+r"(p) : : "memory");
	for (i = 0; i + 8 <= RESIDUE_SPAN; i += 8) {
		memcpy(&v, p + i, 8);
		if (v == 0 || v == 0x5a5a5a5a5a5a5a5aull)
			continue;
		if (v == canary || bsearch(&v, vals, nv, sizeof *vals, cmp_u64))
			hits++;
	}
	return hits;
}

START_TEST(test_sha512_residue)
{
	const uint64_t canary = 0x3c1e5a7d9b2f4e61ull;
	const unsigned cpu = ps_cpu_probe();
	size_t n = 7744, nv = 0, i;
	uint8_t *m = malloc(n), h[64], r[64];
	uint64_t *vals = malloc(sizeof *vals * ((n + 17 + 127) / 128 * (80 * 6 + 8)));
	uint64_t st = 0x7e51d0e;

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(vals);
	for (i = 0; i < n; i++)
		m[i] = (uint8_t)((st = st * 6364136223846793005ull + 1442695040888963407ull) >> 56);
	ref_sha512_trace(m, n, r, vals, &nv);
	sha512_ref(m, n, h, 0);
	ck_assert_mem_eq(r, h, 64);
	qsort(vals, nv, sizeof *vals, cmp_u64);

	residue_fill();
	residue_canary(canary);
	ck_assert_uint_gt(residue_scan(vals, 0, canary), 0);
	if ((cpu & (PS_CPU_AVX | PS_CPU_BMI2)) != (PS_CPU_AVX | PS_CPU_BMI2)) {
		free(vals);
		free(m);
		return;   /* no kernel here: mbedTLS runs */
	}
	residue_fill();
	ck_assert_int_eq(ps_sha512_hw(cpu, m, n, h, 0), 0);
	ck_assert_mem_eq(h, r, 64);
	ck_assert_uint_eq(residue_scan(vals, nv, 0), 0);
	free(vals);
	free(m);
}
END_TEST

START_TEST(test_auth_args)
{
	struct kat k;
	ps_secparams sp;
	ps_ctx *ctx = new_ctx();
	uint8_t key[32];
	int owner, perms;

	load_kat("r6-basic", &k);
	kat_params(&k, &sp);
	sp.r = 4;
	ck_assert_int_eq(ps_kdf_authenticate(ctx, &sp, "user", 4, key, &owner, &perms),
	                 PDFSTAMP_E_UNSUPPORTED);
	sp.r = 7;
	ck_assert_int_eq(ps_kdf_authenticate(ctx, &sp, "user", 4, key, &owner, &perms),
	                 PDFSTAMP_E_UNSUPPORTED);
	sp.r = 6;
	ck_assert_int_eq(ps_kdf_authenticate(ctx, &sp, NULL, 4, key, &owner, &perms),
	                 PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, 6, k.upw, 128, k.u + 32, NULL, key), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, 4, k.upw, 4, k.u + 32, NULL, key), PDFSTAMP_E_USAGE);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- SASLprep ------------------------------------------------------------------ */

struct prep_case {
	const char *in;
	size_t inlen;        /* 0: strlen */
	int stored;
	const char *want;
	size_t wantlen;      /* 0: strlen */
};

static const struct prep_case prep_cases[] = {
	/* RFC 4013 section 3 examples */
	{"I\xc2\xadX", 0, 0, "IX", 0},                  /* soft hyphen mapped to nothing */
	{"user", 0, 0, "user", 0},
	{"USER", 0, 0, "USER", 0},                      /* no case folding */
	{"\xc2\xaa", 0, 0, "a", 0},                     /* U+00AA -> a (NFKC) */
	{"\xe2\x85\xa8", 0, 0, "IX", 0},                /* U+2168 ROMAN NUMERAL NINE */
	{"\x07", 0, 0, "\x07", 0},                      /* prohibited: raw bytes */
	{"\xd8\xa7" "1", 0, 0, "\xd8\xa7" "1", 0},      /* BiDi violation: raw */
	/* more mapping */
	{"a\xc2\xa0" "b", 0, 0, "a b", 0},              /* NBSP -> SPACE */
	{"a\xe2\x80\x83" "b", 0, 0, "a b", 0},          /* EM SPACE -> SPACE */
	{"\xef\xac\x81", 0, 0, "fi", 0},                /* U+FB01 ligature */
	{"a\xcd\x8f" "b", 0, 0, "ab", 0},               /* U+034F CGJ mapped to nothing */
	{"a\xcc\x8a", 0, 0, "\xc3\xa5", 0},             /* a + ring -> U+00E5 */
	/* Unicode 3.2 tables: U+2F874 -> U+5F33, not the later U+5F53 */
	{"\xf0\xaf\xa1\xb4", 0, 0, "\xe5\xbc\xb3", 0},
	/* failures fall back to the raw bytes */
	{"\xff\xfe" "abc", 0, 0, "\xff\xfe" "abc", 0},  /* invalid UTF-8 */
	{"\xc0\xaf", 0, 0, "\xc0\xaf", 0},              /* overlong '/' */
	{"a\0b", 3, 0, "a\0b", 3},                      /* embedded NUL */
	{"pass\xef\xbf\xbe", 0, 0, "pass\xef\xbf\xbe", 0}, /* U+FFFE noncharacter */
	/* unassigned in Unicode 3.2 (U+0221): allowed by "query" only */
	{"\xc2\xad\xc8\xa1", 0, 0, "\xc8\xa1", 0},
	{"\xc2\xad\xc8\xa1", 0, 1, "\xc2\xad\xc8\xa1", 0},
	{"I\xc2\xadX", 0, 1, "IX", 0},
	{"", 0, 0, "", 0},
	{"\xc2\xad", 0, 0, "", 0},                      /* maps to empty */
};

START_TEST(test_saslprep)
{
	const struct prep_case *c = &prep_cases[_i];
	size_t inlen = c->inlen ? c->inlen : strlen(c->in);
	size_t wantlen = c->wantlen ? c->wantlen : strlen(c->want);
	uint8_t out[128];
	size_t outlen = 999;
	ps_ctx *ctx = new_ctx();

	ck_assert_int_eq(ps_kdf_prepare_password(ctx, c->in, inlen, c->stored, out, &outlen), 0);
	ck_assert_msg(outlen == wantlen, "case %d: length %zu, want %zu", _i, outlen, wantlen);
	ck_assert_msg(memcmp(out, c->want, wantlen) == 0, "case %d: wrong bytes", _i);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_saslprep_truncate)
{
	char in[600];
	uint8_t out[128];
	size_t outlen, i;
	ps_ctx *ctx = new_ctx();

	/* Plain truncation at 127 bytes, prepared and raw alike. */
	memset(in, 'a', 200);
	ck_assert_int_eq(ps_kdf_prepare_password(ctx, in, 200, 0, out, &outlen), 0);
	ck_assert_int_eq(outlen, 127);
	for (i = 0; i < outlen; i++)
		ck_assert_int_eq(out[i], 'a');
	in[150] = '\x07';   /* prohibited -> raw, still truncated */
	ck_assert_int_eq(ps_kdf_prepare_password(ctx, in, 200, 0, out, &outlen), 0);
	ck_assert_int_eq(outlen, 127);

	/* Mapping happens before truncation: 200 soft hyphens vanish. */
	for (i = 0; i < 200; i++)
		memcpy(in + 2 * i, "\xc2\xad", 2);
	memcpy(in + 400, "abc", 3);
	ck_assert_int_eq(ps_kdf_prepare_password(ctx, in, 403, 0, out, &outlen), 0);
	ck_assert_int_eq(outlen, 3);
	ck_assert_mem_eq(out, "abc", 3);

	/* Expansion: U+FDFA becomes 18 code points (33 bytes) under NFKC. */
	for (i = 0; i < 10; i++)
		memcpy(in + 3 * i, "\xef\xb7\xba", 3);
	ck_assert_int_eq(ps_kdf_prepare_password(ctx, in, 30, 0, out, &outlen), 0);
	ck_assert_int_eq(outlen, 127);
	ck_assert(memcmp(out, in, 3) != 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- ps_kdf_make --------------------------------------------------------------- */

/* Decrypts /Perms with mbedTLS directly and checks the Alg. 10 layout. */
static void check_perms_layout(const ps_secparams *sp, const uint8_t key[32], int64_t p)
{
	mbedtls_aes_context aes;
	uint8_t blk[16];
	uint64_t ext = (uint64_t)(int64_t)p;
	int i;

	mbedtls_aes_init(&aes);
	ck_assert_int_eq(mbedtls_aes_setkey_dec(&aes, key, 256), 0);
	ck_assert_int_eq(mbedtls_aes_crypt_ecb(&aes, MBEDTLS_AES_DECRYPT, sp->perms, blk), 0);
	mbedtls_aes_free(&aes);
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(blk[i], (uint8_t)(ext >> (8 * i)));
	ck_assert_int_eq(blk[8], sp->encrypt_metadata ? 'T' : 'F');
	ck_assert_int_eq(blk[9], 'a');
	ck_assert_int_eq(blk[10], 'd');
	ck_assert_int_eq(blk[11], 'b');
}

START_TEST(test_make_roundtrip)
{
	static const char upw[] = "secret user";
	static const char opw[] = "\xce\xa9-owner";  /* "Ω-owner" */
	ps_ctx *ctx = new_ctx();
	ps_secparams sp, sp2;
	uint8_t key[32], h[32];

	ck_assert_int_eq(ps_random(ctx, key, 32), 0);
	memset(&sp, 0, sizeof sp);
	sp.p = -3904;
	sp.encrypt_metadata = 1;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, upw, strlen(upw), opw, strlen(opw), key), 0);
	ck_assert_int_eq(sp.v, 5);
	ck_assert_int_eq(sp.r, 6);
	ck_assert_int_eq(sp.p, -3904);

	expect_auth(ctx, &sp, upw, strlen(upw), key, 0, 1);
	expect_auth(ctx, &sp, opw, strlen(opw), key, 1, 1);
	expect_bad_password(ctx, &sp, "secret user ", 12);
	expect_bad_password(ctx, &sp, "", 0);
	check_perms_layout(&sp, key, -3904);

	/* The layout of U and O: hash || validation salt || key salt, with
	 * the hash checked by the (qpdf-validated) Alg. 2.B. */
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, 6, (const uint8_t *)upw, strlen(upw), sp.u + 32, NULL,
	                                h), 0);
	ck_assert_mem_eq(h, sp.u, 32);
	ck_assert_int_eq(ps_kdf_hash_r6(ctx, 6, (const uint8_t *)opw, strlen(opw), sp.o + 32, sp.u,
	                                h), 0);
	ck_assert_mem_eq(h, sp.o, 32);

	/* Fresh salts and /Perms randomness every time. */
	memset(&sp2, 0, sizeof sp2);
	sp2.p = -3904;
	sp2.encrypt_metadata = 1;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp2, upw, strlen(upw), opw, strlen(opw), key), 0);
	ck_assert(memcmp(sp.u, sp2.u, 48) != 0);
	ck_assert(memcmp(sp.o, sp2.o, 48) != 0);
	ck_assert(memcmp(sp.ue, sp2.ue, 32) != 0);
	ck_assert(memcmp(sp.oe, sp2.oe, 32) != 0);
	ck_assert(memcmp(sp.perms, sp2.perms, 16) != 0);
	ck_assert(memcmp(sp.u + 32, sp.u + 40, 8) != 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_make_variants)
{
	ps_ctx *ctx = new_ctx();
	ps_secparams sp;
	uint8_t key[32];
	char longpw[200];

	ck_assert_int_eq(ps_random(ctx, key, 32), 0);

	/* Empty user password, EncryptMetadata false, P given as unsigned. */
	memset(&sp, 0, sizeof sp);
	sp.p = 0xfffff0c4;
	sp.encrypt_metadata = 0;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "", 0, "own", 3, key), 0);
	ck_assert_int_eq(sp.p, (int64_t)(int32_t)0xfffff0c4);
	check_perms_layout(&sp, key, (int32_t)0xfffff0c4);
	expect_auth(ctx, &sp, "", 0, key, 0, 1);
	expect_auth(ctx, &sp, "own", 3, key, 1, 1);
	sp.encrypt_metadata = 1;   /* the 'F' in /Perms now disagrees */
	expect_auth(ctx, &sp, "", 0, key, 0, 0);

	/* Stored SASLprep: NFD in, NFC or NFD later both open it. */
	memset(&sp, 0, sizeof sp);
	sp.p = -4;
	sp.encrypt_metadata = 1;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "pa\xcc\x88ss", 6, "o\xc2\xa0w", 4, key), 0);
	expect_auth(ctx, &sp, "p\xc3\xa4ss", 5, key, 0, 1);
	expect_auth(ctx, &sp, "pa\xcc\x88ss", 6, key, 0, 1);
	expect_auth(ctx, &sp, "o w", 3, key, 1, 1);
	/* ...and the stored bytes are the prepared ones: a raw NFD hash
	 * (what a non-SASLprep reader would compute) does not match U. */
	{
		uint8_t h[32];

		ck_assert_int_eq(ps_kdf_hash_r6(ctx, 6, (const uint8_t *)"pa\xcc\x88ss", 6,
		                                sp.u + 32, NULL, h), 0);
		ck_assert(memcmp(h, sp.u, 32) != 0);
		ck_assert_int_eq(ps_kdf_hash_r6(ctx, 6, (const uint8_t *)"p\xc3\xa4ss", 5,
		                                sp.u + 32, NULL, h), 0);
		ck_assert_mem_eq(h, sp.u, 32);
	}

	/* A password SASLprep refuses is stored raw and still opens. */
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "bell\x07", 5, "\xff\xfe", 2, key), 0);
	expect_auth(ctx, &sp, "bell\x07", 5, key, 0, 1);
	expect_auth(ctx, &sp, "\xff\xfe", 2, key, 1, 1);

	/* Long passwords are truncated to 127 bytes. */
	memset(longpw, 'q', sizeof longpw);
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, longpw, 200, "o", 1, key), 0);
	expect_auth(ctx, &sp, longpw, 127, key, 0, 1);
	expect_auth(ctx, &sp, longpw, 150, key, 0, 1);
	expect_bad_password(ctx, &sp, longpw, 126);

	/* Same user and owner password: it opens as owner. */
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "same", 4, "same", 4, key), 0);
	expect_auth(ctx, &sp, "same", 4, key, 1, 1);

	/* /P outside 32 bits is a usage error and leaves SP alone. */
	sp.p = (int64_t)1 << 33;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "a", 1, "b", 1, key), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(sp.p, (int64_t)1 << 33);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- AESV3 ----------------------------------------------------------------------- */

static const uint8_t test_key[32] = {
	0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d, 0x77, 0x81,
	0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4,
};

static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/* IV || CBC(pt || pad) built with mbedTLS directly; PAD_OVERRIDE lets a
 * test write a wrong pad.  Returns a malloc'd buffer of *outlen bytes. */
static uint8_t *independent_encrypt(const uint8_t iv0[16], const uint8_t *pt, size_t n,
                                    const uint8_t *last_block, size_t *outlen)
{
	mbedtls_aes_context aes;
	size_t padded = (n / 16 + 1) * 16;
	uint8_t *buf = malloc(16 + padded), iv[16];
	size_t pad = padded - n;

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, iv0, 16);
	if (n)
		memcpy(buf + 16, pt, n);
	memset(buf + 16 + n, (int)pad, pad);
	if (last_block)
		memcpy(buf + 16 + padded - 16, last_block, 16);
	memcpy(iv, iv0, 16);
	mbedtls_aes_init(&aes);
	ck_assert_int_eq(mbedtls_aes_setkey_enc(&aes, test_key, 256), 0);
	ck_assert_int_eq(mbedtls_aes_crypt_cbc(&aes, MBEDTLS_AES_ENCRYPT, padded, iv,
	                                       buf + 16, buf + 16), 0);
	mbedtls_aes_free(&aes);
	*outlen = 16 + padded;
	return buf;
}

START_TEST(test_aes_roundtrip)
{
	ps_ctx *ctx = new_ctx();
	ps_cipher c;
	static const size_t big[] = {4096, 65535, 65536, 1048576 + 5, 3 * 1048576};
	size_t sizes[101 + 5], ns = 0, i;
	mbedtls_aes_context dec;

	for (i = 0; i <= 100; i++)
		sizes[ns++] = i;
	for (i = 0; i < 5; i++)
		sizes[ns++] = big[i];

	memset(&c, 0, sizeof c);
	ck_assert_int_eq(ps_cipher_init(ctx, &c, test_key), 0);
	mbedtls_aes_init(&dec);
	ck_assert_int_eq(mbedtls_aes_setkey_dec(&dec, test_key, 256), 0);

	for (i = 0; i < ns; i++) {
		size_t n = sizes[i], want = 16 + 16 * (n / 16 + 1), pad;
		uint8_t *pt = malloc(n ? n : 1), *chk, iv[16];
		ps_buf enc = PS_BUF_INIT, out = PS_BUF_INIT;

		ck_assert_ptr_nonnull(pt);
		fill_pattern(pt, n, (unsigned)n);
		/* Appends after existing content. */
		ps_buf_append(&enc, "pre", 3);
		ck_assert_int_eq(ps_aesv3_encrypt(ctx, &c, pt, n, &enc), 0);
		ck_assert(!enc.oom);
		ck_assert_uint_eq(enc.len, 3 + want);
		ck_assert_mem_eq(enc.data, "pre", 3);

		/* Independent decryption with mbedTLS: PKCS#7 layout. */
		chk = malloc(want - 16);
		ck_assert_ptr_nonnull(chk);
		memcpy(iv, enc.data + 3, 16);
		ck_assert_int_eq(mbedtls_aes_crypt_cbc(&dec, MBEDTLS_AES_DECRYPT, want - 16, iv,
		                                       enc.data + 3 + 16, chk), 0);
		pad = 16 - n % 16;
		ck_assert_uint_eq(chk[want - 17], pad);
		ck_assert(n == 0 || memcmp(chk, pt, n) == 0);
		for (size_t j = n; j < want - 16; j++)
			ck_assert_uint_eq(chk[j], pad);
		free(chk);

		/* And back through ps_aesv3_decrypt. */
		ps_buf_append(&out, "x", 1);
		ck_assert_int_eq(ps_aesv3_decrypt(ctx, &c, enc.data + 3, want, &out), 0);
		ck_assert_uint_eq(out.len, 1 + n);
		ck_assert(n == 0 || memcmp(out.data + 1, pt, n) == 0);
		ps_buf_free(&enc);
		ps_buf_free(&out);
		free(pt);
	}
	mbedtls_aes_free(&dec);
	ps_cipher_free(&c);
	ps_cipher_free(&c);   /* idempotent */
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_aes_fresh_iv)
{
	ps_ctx *ctx = new_ctx();
	ps_cipher c;
	ps_buf a = PS_BUF_INIT;
	int i, j;

	ck_assert_int_eq(ps_cipher_init(ctx, &c, test_key), 0);
	/* 100 encryptions of the same text cross an IV pool refill (64 IVs):
	 * every IV and every ciphertext differs. */
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(ps_aesv3_encrypt(ctx, &c, (const uint8_t *)"same", 4, &a), 0);
	ck_assert_uint_eq(a.len, 100 * 32);
	for (i = 0; i < 100; i++)
		for (j = i + 1; j < 100; j++)
			ck_assert(memcmp(a.data + 32 * i, a.data + 32 * j, 16) != 0);
	ps_buf_free(&a);
	ps_cipher_free(&c);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* NIST SP 800-38A F.2.5/F.2.6, CBC-AES256, followed by one more block that
 * encrypts a full PKCS#7 pad block (16 x 0x10), computed with mbedTLS. */
START_TEST(test_aes_nist)
{
	static const uint8_t iv[16] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
		0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	};
	static const uint8_t pt[64] = {
		0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a,
		0xae, 0x2d, 0x8a, 0x57, 0x1e, 0x03, 0xac, 0x9c, 0x9e, 0xb7, 0x6f, 0xac, 0x45, 0xaf, 0x8e, 0x51,
		0x30, 0xc8, 0x1c, 0x46, 0xa3, 0x5c, 0xe4, 0x11, 0xe5, 0xfb, 0xc1, 0x19, 0x1a, 0x0a, 0x52, 0xef,
		0xf6, 0x9f, 0x24, 0x45, 0xdf, 0x4f, 0x9b, 0x17, 0xad, 0x2b, 0x41, 0x7b, 0xe6, 0x6c, 0x37, 0x10,
	};
	static const uint8_t ct[64] = {
		0xf5, 0x8c, 0x4c, 0x04, 0xd6, 0xe5, 0xf1, 0xba, 0x77, 0x9e, 0xab, 0xfb, 0x5f, 0x7b, 0xfb, 0xd6,
		0x9c, 0xfc, 0x4e, 0x96, 0x7e, 0xdb, 0x80, 0x8d, 0x67, 0x9f, 0x77, 0x7b, 0xc6, 0x70, 0x2c, 0x7d,
		0x39, 0xf2, 0x33, 0x69, 0xa9, 0xd9, 0xba, 0xcf, 0xa5, 0x30, 0xe2, 0x63, 0x04, 0x23, 0x14, 0x61,
		0xb2, 0xeb, 0x05, 0xe2, 0xc3, 0x9b, 0xe9, 0xfc, 0xda, 0x6c, 0x19, 0x07, 0x8c, 0x6a, 0x9d, 0x1b,
	};
	uint8_t in[16 + 64 + 16], blk[16];
	mbedtls_aes_context aes;
	ps_ctx *ctx = new_ctx();
	ps_cipher c;
	ps_buf out = PS_BUF_INIT;
	int i;

	memcpy(in, iv, 16);
	memcpy(in + 16, ct, 64);
	for (i = 0; i < 16; i++)
		blk[i] = (uint8_t)(0x10 ^ ct[48 + i]);
	mbedtls_aes_init(&aes);
	ck_assert_int_eq(mbedtls_aes_setkey_enc(&aes, test_key, 256), 0);
	ck_assert_int_eq(mbedtls_aes_crypt_ecb(&aes, MBEDTLS_AES_ENCRYPT, blk, in + 80), 0);
	mbedtls_aes_free(&aes);

	ck_assert_int_eq(ps_cipher_init(ctx, &c, test_key), 0);
	ck_assert_int_eq(ps_aesv3_decrypt(ctx, &c, in, sizeof in, &out), 0);
	ck_assert_uint_eq(out.len, 64);
	ck_assert_mem_eq(out.data, pt, 64);
	ps_buf_free(&out);
	ps_cipher_free(&c);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_aes_independent_decrypt)
{
	static const uint8_t iv[16] = "fixed-iv-0123456";
	ps_ctx *ctx = new_ctx();
	ps_cipher c;
	size_t n, len;

	ck_assert_int_eq(ps_cipher_init(ctx, &c, test_key), 0);
	for (n = 0; n <= 70; n += 7) {
		uint8_t pt[80], *ct;
		ps_buf out = PS_BUF_INIT;

		fill_pattern(pt, n, (unsigned)n + 99);
		ct = independent_encrypt(iv, pt, n, NULL, &len);
		ck_assert_int_eq(ps_aesv3_decrypt(ctx, &c, ct, len, &out), 0);
		ck_assert_uint_eq(out.len, n);
		ck_assert(n == 0 || memcmp(out.data, pt, n) == 0);
		ps_buf_free(&out);
		free(ct);
	}
	ps_cipher_free(&c);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* Decrypting IN must fail with FORMAT and leave OUT exactly as it was. */
static void expect_format(ps_ctx *ctx, ps_cipher *c, const uint8_t *in, size_t n)
{
	ps_buf out = PS_BUF_INIT;

	ps_buf_append(&out, "keep", 4);
	ck_assert_int_eq(ps_aesv3_decrypt(ctx, c, in, n, &out), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(pdfstamp_ctx_errcode(ctx), PDFSTAMP_E_FORMAT);
	ck_assert_uint_eq(out.len, 4);
	ck_assert_mem_eq(out.data, "keep", 4);
	/* No plaintext lingers in the space that was decrypted into. */
	if (n >= 32 && n % 16 == 0) {
		ck_assert_uint_ge(out.cap, 4 + n - 16);
		for (size_t i = 4; i < 4 + n - 16; i++)
			ck_assert_uint_eq(out.data[i], 0);
	}
	ps_buf_free(&out);
}

START_TEST(test_aes_bad_input)
{
	static const uint8_t iv[16] = "another-fixed-iv";
	uint8_t junk[100], pt[40], last[16], *ct;
	ps_ctx *ctx = new_ctx();
	ps_cipher c, zero;
	ps_buf out = PS_BUF_INIT;
	size_t n, len;

	ck_assert_int_eq(ps_cipher_init(ctx, &c, test_key), 0);
	fill_pattern(junk, sizeof junk, 7);

	/* Lengths: 1..31, and anything that is not a multiple of 16. */
	for (n = 1; n < 100; n++)
		if (n < 32 || n % 16)
			expect_format(ctx, &c, junk, n);
	/* Empty input is empty output. */
	ck_assert_int_eq(ps_aesv3_decrypt(ctx, &c, NULL, 0, &out), 0);
	ck_assert_uint_eq(out.len, 0);

	fill_pattern(pt, sizeof pt, 3);
	/* Last byte 0, last byte 17, and 0xff. */
	memcpy(last, pt, 16);
	last[15] = 0;
	ct = independent_encrypt(iv, pt, 32, last, &len);
	expect_format(ctx, &c, ct, len);
	free(ct);
	last[15] = 17;
	ct = independent_encrypt(iv, pt, 32, last, &len);
	expect_format(ctx, &c, ct, len);
	free(ct);
	last[15] = 0xff;
	ct = independent_encrypt(iv, pt, 32, last, &len);
	expect_format(ctx, &c, ct, len);
	free(ct);
	/* A pad of 4 whose first pad byte is wrong (only the last byte would
	 * satisfy a lenient reader). */
	memcpy(last, "0123456789ab\x05\x04\x04\x04", 16);
	ct = independent_encrypt(iv, pt, 32, last, &len);
	expect_format(ctx, &c, ct, len);
	free(ct);
	/* A full pad block with one byte off. */
	memset(last, 0x10, 16);
	last[0] = 0x11;
	ct = independent_encrypt(iv, pt, 32, last, &len);
	expect_format(ctx, &c, ct, len);
	free(ct);
	/* The same blocks with correct pads decrypt fine. */
	memcpy(last, "0123456789ab\x04\x04\x04\x04", 16);
	ct = independent_encrypt(iv, pt, 32, last, &len);
	ck_assert_int_eq(ps_aesv3_decrypt(ctx, &c, ct, len, &out), 0);
	ck_assert_uint_eq(out.len, 32 + 12);
	ck_assert_mem_eq(out.data, pt, 32);
	ck_assert_mem_eq(out.data + 32, "0123456789ab", 12);
	free(ct);

	/* An uninitialised (zeroed) cipher is refused and can be freed. */
	memset(&zero, 0, sizeof zero);
	ck_assert_int_eq(ps_aesv3_decrypt(ctx, &zero, junk, 32, &out), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_aesv3_encrypt(ctx, &zero, junk, 32, &out), PDFSTAMP_E_USAGE);
	ps_cipher_free(&zero);
	ps_cipher_free(NULL);

	ps_buf_free(&out);
	ps_cipher_free(&c);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- fork safety (issue 11) ------------------------------------------------
 * A context used before fork() and then in both processes must not hand
 * out the same bytes twice: the child sends what it drew through a pipe
 * and the parent compares with its own draws after the fork. */

#define FORK_DRAW (4 * 16 + 48)

/* 4 IVs then 48 bytes of ps_random, or of the OS source when OS is set. */
static void fork_draw(ps_ctx *ctx, int os, uint8_t out[FORK_DRAW])
{
	int i;

	for (i = 0; i < 4; i++)
		ck_assert_int_eq(ps_random_iv(ctx, out + 16 * i), 0);
	if (os)
		ck_assert_int_eq(ps_random_os(ctx, out + 64, 48), 0);
	else
		ck_assert_int_eq(ps_random(ctx, out + 64, 48), 0);
}

/* Forks; the child draws from CTX and writes its bytes to a pipe, the
 * parent draws, collects the child's and compares IV by IV. */
static void fork_compare(ps_ctx *ctx, int os)
{
	uint8_t mine[FORK_DRAW], theirs[FORK_DRAW];
	size_t got = 0;
	int fds[2], st = 0, i, j;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint8_t b[FORK_DRAW];
		size_t off = 0;
		int ok;

		close(fds[0]);
		/* no ck_assert in the child: report failure by the exit status */
		ok = 1;
		for (i = 0; i < 4 && ok; i++)
			ok = ps_random_iv(ctx, b + 16 * i) == 0;
		if (ok)
			ok = (os ? ps_random_os(ctx, b + 64, 48) : ps_random(ctx, b + 64, 48)) == 0;
		while (ok && off < sizeof b) {
			ssize_t k = write(fds[1], b + off, sizeof b - off);
			if (k <= 0)
				_exit(2);
			off += (size_t)k;
		}
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	fork_draw(ctx, os, mine);
	while (got < sizeof theirs) {
		ssize_t k = read(fds[0], theirs + got, sizeof theirs - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed to draw (status %d)", st);
	ck_assert_uint_eq(got, sizeof theirs);
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++)
			ck_assert_msg(memcmp(mine + 16 * i, theirs + 16 * j, 16) != 0,
			              "parent IV %d equals child IV %d after fork", i, j);
	ck_assert_msg(memcmp(mine + 64, theirs + 64, 48) != 0,
	              "parent and child drew the same random bytes after fork");
}

START_TEST(test_fork_iv_and_drbg)
{
	ps_ctx *ctx = new_ctx();
	uint8_t before[FORK_DRAW];

	/* Seed the DRBG and fill the IV pool before the fork. */
	fork_draw(ctx, 0, before);
	fork_compare(ctx, 0);
	/* and again: the parent's own state goes on, a second child too */
	fork_compare(ctx, 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_fork_unseeded)
{
	ps_ctx *ctx = new_ctx();

	/* Nothing drawn before the fork: each process seeds on its own. */
	fork_compare(ctx, 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_fork_pid_fallback)
{
	ps_ctx *ctx = new_ctx();
	uint8_t before[FORK_DRAW];

	/* Where the kernel cannot wipe the pool page on fork, the context
	 * compares getpid() on every draw instead: undo the advice, so that
	 * the child inherits a live pool, and check that it is not used. */
	fork_draw(ctx, 0, before);
	ck_assert_ptr_nonnull(ctx->rng->iv);
#ifdef MADV_KEEPONFORK
	if (ctx->rng->iv_maplen)
		ck_assert_int_eq(madvise(ctx->rng->iv, ctx->rng->iv_maplen, MADV_KEEPONFORK), 0);
#endif
	ctx->rng->iv_wipeonfork = 0;
	fork_compare(ctx, 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_random_os)
{
	ps_ctx *ctx = new_ctx();
	uint8_t a[32], b[32], z[32] = {0};
	uint8_t big[70000];

	ck_assert_int_eq(ps_random_os(ctx, a, sizeof a), 0);
	ck_assert_int_eq(ps_random_os(ctx, b, sizeof b), 0);
	ck_assert(memcmp(a, b, 32) != 0);
	ck_assert(memcmp(a, z, 32) != 0);
	/* longer than one getrandom(2) call returns at once (32 MiB - 1 is the
	 * limit; 256 bytes are always whole): still filled to the end */
	memset(big, 0, sizeof big);
	ck_assert_int_eq(ps_random_os(ctx, big, sizeof big), 0);
	ck_assert(memcmp(big + sizeof big - 32, z, 32) != 0);
	/* the OS source is fork-safe by nature */
	fork_compare(ctx, 1);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- issue 11: /Perms as the source of permissions, SASLprep warning,
 * borrowed cipher state ---------------------------------------------------- */

START_TEST(test_read_perms)
{
	ps_ctx *ctx = new_ctx();
	ps_secparams sp;
	uint8_t key[32];
	int64_t p;
	int st;

	ck_assert_int_eq(ps_random_os(ctx, key, 32), 0);
	memset(&sp, 0, sizeof sp);
	sp.p = -3904;                   /* print, copy, no annotate */
	sp.encrypt_metadata = 1;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "u", 1, "o", 1, key), 0);

	ck_assert_int_eq(ps_kdf_read_perms(ctx, &sp, key, &p, &st), 0);
	ck_assert_int_eq(st, PS_PERMS_OK);
	ck_assert_int_eq(p, -3904);

	/* /P edited to grant more: /Perms still tells the genuine value */
	sp.p = -4;
	ck_assert_int_eq(ps_kdf_read_perms(ctx, &sp, key, &p, &st), 0);
	ck_assert_int_eq(st, PS_PERMS_MISMATCH);
	ck_assert_int_eq(p, -3904);
	sp.p = -3904;

	/* EncryptMetadata flipped: mismatch, same P */
	sp.encrypt_metadata = 0;
	ck_assert_int_eq(ps_kdf_read_perms(ctx, &sp, key, &p, &st), 0);
	ck_assert_int_eq(st, PS_PERMS_MISMATCH);
	ck_assert_int_eq(p, -3904);
	sp.encrypt_metadata = 1;

	/* not a permissions block (or another key) */
	sp.perms[3] ^= 1;
	ck_assert_int_eq(ps_kdf_read_perms(ctx, &sp, key, &p, &st), 0);
	ck_assert_int_eq(st, PS_PERMS_GARBLED);
	pdfstamp_ctx_free(ctx);
}
END_TEST

struct warns {
	int n;
	char msg[4][256];
};

static void collect_warn(void *ud, const char *m)
{
	struct warns *w = ud;

	if (w->n < 4)
		snprintf(w->msg[w->n], sizeof w->msg[0], "%s", m);
	w->n++;
}

START_TEST(test_make_saslprep_warning)
{
	/* U+00AD SOFT HYPHEN maps to nothing (RFC 4013 B.1), U+FF21 FULLWIDTH
	 * A becomes "A" under NFKC: both change what the user typed. */
	static const char upw[] = "Kx\xc2\xadQz7";
	static const char opw[] = "\xef\xbc\xa1wq9";
	ps_ctx *ctx = new_ctx();
	struct warns w;
	ps_secparams sp;
	uint8_t key[32];
	int i;

	memset(&w, 0, sizeof w);
	pdfstamp_ctx_set_warn(ctx, collect_warn, &w);
	ck_assert_int_eq(ps_random_os(ctx, key, 32), 0);
	memset(&sp, 0, sizeof sp);
	sp.p = -4;
	sp.encrypt_metadata = 1;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, upw, strlen(upw), opw, strlen(opw), key), 0);
	ck_assert_int_eq(w.n, 2);
	ck_assert_ptr_nonnull(strstr(w.msg[0], "user password"));
	ck_assert_ptr_nonnull(strstr(w.msg[1], "owner password"));
	for (i = 0; i < 2; i++) {
		ck_assert_ptr_null(strstr(w.msg[i], "KxQz7"));
		ck_assert_ptr_null(strstr(w.msg[i], upw));
		ck_assert_ptr_null(strstr(w.msg[i], "Awq9"));
		ck_assert_ptr_null(strstr(w.msg[i], opw));
		ck_assert_ptr_null(strstr(w.msg[i], "Qz7"));
	}
	/* the prepared forms open it (what qpdf would need typed) */
	expect_auth(ctx, &sp, "KxQz7", 5, key, 0, 1);
	expect_auth(ctx, &sp, "Awq9", 4, key, 1, 1);

	/* unchanged passwords: no warning (ASCII, and NFKC-stable "Ω") */
	w.n = 0;
	ck_assert_int_eq(ps_kdf_make(ctx, &sp, "plain", 5, "\xce\xa9-owner", 8, key), 0);
	ck_assert_int_eq(w.n, 0);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_cipher_borrow)
{
	ps_ctx *ctx = new_ctx();
	ps_cipher own, b1, b2;
	ps_buf ct = PS_BUF_INIT, pt = PS_BUF_INIT;

	memset(&b1, 0, sizeof b1);
	memset(&b2, 0, sizeof b2);
	ck_assert_int_eq(ps_cipher_init(ctx, &own, test_key), 0);
	ck_assert_int_eq(ps_cipher_borrow(ctx, &b1, &own), 0);
	ck_assert_int_eq(ps_cipher_borrow(ctx, &b2, &b1), 0);   /* a loan of a loan */
	ck_assert_ptr_eq(b2.lent, &own);
	ck_assert_ptr_eq(ps_cipher_eng(&b2), &own.eng);
	ck_assert_int_eq(ps_aesv3_encrypt(ctx, &b2, (const uint8_t *)"borrowed", 8, &ct), 0);
	ps_cipher_free(&b1);
	ps_cipher_free(&b2);
	ck_assert_int_eq(b2.ready, 0);
	/* the lender is untouched by its borrowers' free */
	ck_assert_int_eq(own.ready, 1);
	ck_assert_int_eq(ps_aesv3_decrypt(ctx, &own, ct.data, ct.len, &pt), 0);
	ck_assert_uint_eq(pt.len, 8);
	ck_assert_mem_eq(pt.data, "borrowed", 8);
	/* nothing to borrow from */
	ps_cipher_free(&own);
	ck_assert_int_eq(ps_cipher_borrow(ctx, &b1, &own), PDFSTAMP_E_USAGE);
	ps_buf_free(&ct);
	ps_buf_free(&pt);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- sec.c: the handler, the walker, /Encrypt, sharing, batches ------------- */

/* A dictionary with strings at several depths and a signature dictionary. */
static ps_obj *sample_obj(void)
{
	ps_obj *d = ps_new_dict(), *a = ps_new_array(), *sig = ps_new_dict(), *br = ps_new_array();

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(ps_dict_put(d, "Title", ps_new_str("a title", 7)), 0);
	ck_assert_int_eq(ps_dict_put(d, "Empty", ps_new_str("", 0)), 0);
	ck_assert_int_eq(ps_array_push(a, ps_new_str("0123456789abcdef", 16)), 0);
	ck_assert_int_eq(ps_array_push(a, ps_new_int(42)), 0);
	ck_assert_int_eq(ps_dict_put(d, "Arr", a), 0);
	ck_assert_int_eq(ps_array_push(br, ps_new_int(0)), 0);
	ck_assert_int_eq(ps_array_push(br, ps_new_int(10)), 0);
	ck_assert_int_eq(ps_dict_put(sig, "Type", ps_new_name("Sig")), 0);
	ck_assert_int_eq(ps_dict_put(sig, "ByteRange", br), 0);
	ck_assert_int_eq(ps_dict_put(sig, "Contents", ps_new_str("\x30\x82sigvalue", 10)), 0);
	ck_assert_int_eq(ps_dict_put(sig, "Name", ps_new_str("signer", 6)), 0);
	ck_assert_int_eq(ps_dict_put(d, "V", sig), 0);
	return d;
}

/* A handler parsed from the /Encrypt dictionary A writes, authenticated
 * with PW (object number ENC_NUM). */
static ps_sec *reparse(ps_ctx *ctx, const ps_sec *a, uint32_t enc_num, const char *pw, int want_as)
{
	ps_obj *d = NULL;
	ps_sec *b = NULL;
	int64_t perms = 0;
	int as = 0;

	ck_assert_int_eq(ps_sec_write_dict(ctx, a, &d), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, enc_num, NULL, 0, &b), 0);
	ps_obj_free(d);
	ck_assert_int_eq(ps_sec_perms_ok(b), 0);    /* parsed: not authenticated */
	ck_assert_int_eq(ps_sec_auth(ctx, b, pw, strlen(pw), 0, &perms, &as), 0);
	ck_assert_int_eq(as, want_as);
	ck_assert_int_eq(perms, ps_sec_params(a)->p);
	ck_assert_int_eq(ps_sec_perms_ok(b), 1);
	return b;
}

START_TEST(test_sec_walker)
{
	ps_ctx *ctx = new_ctx();
	ps_sec *a = NULL, *b = NULL, *pa = NULL;
	ps_obj *orig = sample_obj(), *o = ps_obj_copy(orig), *v;
	int64_t count = 0;

	ck_assert_int_eq(ps_sec_new_r6(ctx, "u", 1, "o", 1, -4, 1, &a), 0);
	ck_assert_int_eq(ps_sec_new_r6(ctx, "u2", 2, "o2", 2, -4, 1, &b), 0);
	/* encrypt (the incremental writer): every string but the signature value */
	ck_assert_int_eq(ps_sec_convert_strings(ctx, NULL, a, 5, 0, o, &count), 0);
	ck_assert_int_eq(count, 4);
	v = ps_dict_get(o, "Title");
	ck_assert_uint_eq(v->u.str.len, 32);
	ck_assert_int_eq(v->u.str.hex, 1);
	ck_assert_uint_eq(ps_dict_get(o, "Empty")->u.str.len, 32);
	ck_assert_uint_eq(ps_array_get(ps_dict_get(o, "Arr"), 0)->u.str.len, 48);
	v = ps_dict_get(ps_dict_get(o, "V"), "Contents");
	ck_assert_uint_eq(v->u.str.len, 10);
	ck_assert_mem_eq(v->u.str.p, "\x30\x82sigvalue", 10);
	ck_assert_uint_eq(ps_dict_get(ps_dict_get(o, "V"), "Name")->u.str.len, 32);
	ck_assert(!ps_obj_equal(o, orig, 0));
	/* re-encrypt (the rewrite), then decrypt (the reader) */
	count = 0;
	ck_assert_int_eq(ps_sec_convert_strings(ctx, a, b, 5, 0, o, &count), 0);
	ck_assert_int_eq(count, 4);
	ck_assert_int_eq(ps_sec_convert_strings(ctx, b, NULL, 5, 0, o, NULL), 0);
	ck_assert(ps_obj_equal(o, orig, 0));
	/* nothing to do on either side */
	ck_assert_int_eq(ps_sec_convert_strings(ctx, NULL, NULL, 5, 0, o, NULL), 0);
	ck_assert(ps_obj_equal(o, orig, 0));

	/* the /Encrypt object's own strings are exempt, on both sides */
	pa = reparse(ctx, a, 9, "o", 2);
	ck_assert_int_eq(ps_sec_strings_encrypted(pa, 9), 0);
	ck_assert_int_eq(ps_sec_strings_encrypted(pa, 10), 1);
	ck_assert_int_eq(ps_sec_strings_encrypted(NULL, 10), 0);
	ck_assert_int_eq(ps_sec_convert_strings(ctx, NULL, pa, 9, 0, o, NULL), 0);
	ck_assert(ps_obj_equal(o, orig, 0));
	ck_assert_int_eq(ps_sec_convert_strings(ctx, pa, NULL, 9, 0, o, NULL), 0);
	ck_assert(ps_obj_equal(o, orig, 0));
	/* what the new handler encrypts, the parsed one decrypts */
	ck_assert_int_eq(ps_sec_convert_strings(ctx, NULL, a, 10, 0, o, NULL), 0);
	ck_assert_int_eq(ps_sec_convert_strings(ctx, pa, NULL, 10, 0, o, NULL), 0);
	ck_assert(ps_obj_equal(o, orig, 0));

	/* a bad string: the reader's message names the object */
	ck_assert_int_eq(ps_str_set(ps_dict_get(o, "Title"), "0123456789abcdef0", 17), 0);
	ck_assert_int_eq(ps_sec_convert_strings(ctx, a, NULL, 11, 0, o, NULL), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "cannot decrypt a string in object 11"));

	ps_obj_free(o);
	ps_obj_free(orig);
	ps_sec_free(pa);
	ps_sec_free(a);
	ps_sec_free(b);
	ps_sec_free(NULL);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_sec_dict_roundtrip)
{
	ps_ctx *ctx = new_ctx();
	struct pdfstamp_info info;
	ps_sec *a = NULL, *b = NULL, *c = NULL;
	ps_obj *d = NULL, *stm;
	int as = 0;

	ck_assert_int_eq(ps_sec_new_r6(ctx, "user", 4, "owner", 5, -3904, 0, &a), 0);
	b = reparse(ctx, a, 3, "user", 1);
	ck_assert_mem_eq(ps_sec_params(b), ps_sec_params(a), sizeof(ps_secparams));
	ck_assert_int_eq(ps_sec_encrypt_metadata(b), 0);
	ck_assert_int_eq(ps_sec_identity(b), 0);
	memset(&info, 0, sizeof info);
	ps_sec_describe(ctx, b, &info);
	ck_assert_str_eq(info.filter, "Standard");
	ck_assert_str_eq(info.strf, "StdCF");
	ck_assert_str_eq(info.stmf, "StdCF");
	ck_assert_str_eq(info.cfm, "AESV3");
	ck_assert_int_eq(info.v, 5);
	ck_assert_int_eq(info.r, 6);
	ck_assert_int_eq(info.key_bits, 256);
	ck_assert_int_eq(info.encrypt_metadata, 0);
	ck_assert_int_eq(info.perms_valid, 1);
	ck_assert_int_eq(ps_sec_check_password(ctx, b, "owner", 5, &as), 0);
	ck_assert_int_eq(as, 2);
	ck_assert_int_eq(ps_sec_check_password(ctx, b, "x", 1, &as), PDFSTAMP_E_PASSWORD);
	ck_assert_int_eq(as, 0);

	/* per-stream rules: metadata in clear here (EncryptMetadata false),
	 * an Identity /Crypt filter, and plain content */
	stm = ps_new_stream(ps_new_dict(), NULL, 0);
	ck_assert_int_eq(ps_sec_stream_encrypted(b, stm), 1);
	ck_assert_int_eq(ps_sec_stream_encrypted(NULL, stm), 0);
	ck_assert_int_eq(ps_dict_put(stm->u.stm.dict, "Type", ps_new_name("Metadata")), 0);
	ck_assert_int_eq(ps_sec_stream_encrypted(b, stm), 0);
	ck_assert_int_eq(ps_sec_stream_encrypted(c = reparse(ctx, b, 3, "user", 1), stm), 0);
	ps_sec_free(c);
	ck_assert_int_eq(ps_dict_put(stm->u.stm.dict, "Type", ps_new_name("XObject")), 0);
	ck_assert_int_eq(ps_dict_put(stm->u.stm.dict, "Filter", ps_new_name("Crypt")), 0);
	ck_assert_int_eq(ps_sec_stream_encrypted(b, stm), 0);
	ps_obj_free(stm);

	/* StmF Identity; refusals keep their codes */
	ck_assert_int_eq(ps_sec_write_dict(ctx, a, &d), 0);
	ck_assert_int_eq(ps_dict_put(d, "StmF", ps_new_name("Identity")), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &c), 0);
	ck_assert_uint_eq(ps_sec_identity(c), PS_SEC_STMF);
	stm = ps_new_stream(ps_new_dict(), NULL, 0);
	ck_assert_int_eq(ps_sec_stream_encrypted(c, stm), 0);
	ps_obj_free(stm);
	ps_sec_free(c);
	ck_assert_int_eq(ps_dict_put(d, "V", ps_new_int(4)), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &c), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(ps_dict_put(d, "V", ps_new_int(5)), 0);
	ck_assert_int_eq(ps_dict_put(d, "Filter", ps_new_name("Adobe.PubSec")), 0);
	/* a public-key handler without /SubFilter is malformed (test_pubsec_dict) */
	ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &c), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_dict_put(d, "Filter", ps_new_name("Custom.Handler")), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &c), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_int_eq(ps_dict_put(d, "Filter", ps_new_name("Standard")), 0);
	ck_assert_int_eq(ps_dict_put(d, "UE", ps_new_str("short", 5)), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &c), PDFSTAMP_E_FORMAT);
	ps_obj_free(d);
	ck_assert_int_eq(ps_sec_new(ctx, NULL, 3, NULL, 0, &c), PDFSTAMP_E_FORMAT);

	ps_sec_free(a);
	ps_sec_free(b);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* One /Encrypt dictionary from its PDF text. */
static ps_obj *dict_of(ps_ctx *ctx, const char *text)
{
	ps_obj *o = NULL;
	size_t pos = 0;

	ck_assert_int_eq(ps_parse_obj(ctx, (const uint8_t *)text, strlen(text), &pos, &o), 0);
	return o;
}

/* The public-key handler's dictionary (sec.c note 9): what is read, what
 * is refused with which code, and the s5 dictionary a rewrite writes read
 * back with the key derived again from its seed (pubsec.c note 5). */
START_TEST(test_pubsec_dict)
{
	static const struct {
		const char *text;
		int rc, v, r, len, em, nrec;
	} cases[] = {
		/* PDFBox / iText shapes */
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 2/Length 128"
		 "/Recipients[<3001><3002>]>>", 0, 2, 3, 16, 1, 2},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 1/Recipients[<30>]>>",
		 0, 1, 3, 5, 1, 1},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s5/V 4/Length 128"
		 "/CF<</DefaultCryptFilter<</CFM/AESV2/Recipients[<3003>]"
		 "/EncryptMetadata false>>>>/StmF/DefaultCryptFilter/StrF/DefaultCryptFilter>>",
		 0, 4, 4, 16, 0, 1},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s5/V 5/R 5/Length 256"
		 "/CF<</DefaultCryptFilter<</CFM/AESV3/Recipients[<30><31><32>]>>>>"
		 "/StmF/DefaultCryptFilter/StrF/DefaultCryptFilter>>", 0, 5, 5, 32, 1, 3},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s5/V 4"
		 "/CF<</DefaultCryptFilter<</CFM/V2/Recipients <3003>>>>>"
		 "/StmF/DefaultCryptFilter/StrF/DefaultCryptFilter>>", 0, 4, 4, 16, 1, 1},
		/* refusals */
		{"<</Filter/Adobe.PubSec/V 2/Recipients[<30>]>>", PDFSTAMP_E_FORMAT, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s9/V 2/Recipients[<30>]>>",
		 PDFSTAMP_E_UNSUPPORTED, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 5/Recipients[<30>]>>",
		 PDFSTAMP_E_UNSUPPORTED, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s5/V 2/Recipients[<30>]>>",
		 PDFSTAMP_E_UNSUPPORTED, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 2>>", PDFSTAMP_E_FORMAT, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 2/Recipients[]>>",
		 PDFSTAMP_E_FORMAT, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 2/Recipients[<30> 7]>>",
		 PDFSTAMP_E_FORMAT, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 2/Recipients 5 0 R>>",
		 PDFSTAMP_E_FORMAT, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 2/Length 20"
		 "/Recipients[<30>]>>", PDFSTAMP_E_UNSUPPORTED, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s5/V 5"
		 "/CF<</DefaultCryptFilter<</CFM/AESV3>>>>"
		 "/StmF/DefaultCryptFilter/StrF/DefaultCryptFilter>>", PDFSTAMP_E_FORMAT, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s5/V 5"
		 "/CF<</A<</CFM/AESV3/Recipients[<30>]>>/B<</CFM/AESV3/Recipients[<30>]>>>>"
		 "/StmF/A/StrF/B>>", PDFSTAMP_E_UNSUPPORTED, 0, 0, 0, 0, 0},
		{"<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s5/V 5"
		 "/CF<</DefaultCryptFilter<</CFM/AESV2/Recipients[<30>]>>>>"
		 "/StmF/DefaultCryptFilter/StrF/DefaultCryptFilter>>", PDFSTAMP_E_UNSUPPORTED, 0, 0, 0, 0, 0},
	};
	ps_ctx *ctx = new_ctx();
	ps_sec *s = NULL, *n = NULL, *b = NULL;
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	uint8_t key[32] = {1, 2, 3}, seed[20] = {9, 8, 7};
	ps_obj *d, *r;
	ps_buf ct = PS_BUF_INIT, pt = PS_BUF_INIT;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		d = dict_of(ctx, cases[i].text);
		ck_assert_msg(ps_sec_new(ctx, d, 3, NULL, 0, &s) == cases[i].rc, "case %zu: %s",
		              i, ctx->errmsg);
		ps_obj_free(d);
		if (cases[i].rc) {
			ck_assert_ptr_null(s);
			continue;
		}
		ck_assert_str_eq(ps_sec_handler(s), "Adobe.PubSec");
		ck_assert_int_eq(ps_sec_params(s)->v, cases[i].v);
		ck_assert_int_eq(ps_sec_params(s)->r, cases[i].r == 5 ? 6 : cases[i].r);
		ck_assert_int_eq(ps_sec_params(s)->length, cases[i].len);
		ck_assert_int_eq(ps_sec_encrypt_metadata(s), cases[i].em);
		ck_assert_uint_eq(ps_array_len(ps_sec_recipients(s)), (size_t)cases[i].nrec);
		ck_assert_int_eq(ps_sec_describe(ctx, s, &info), 0);
		ck_assert_str_eq(info.filter, "Adobe.PubSec");
		ck_assert_int_eq(info.envelopes, cases[i].nrec);
		ck_assert_int_eq(info.r, i == 3 ? 5 : 0); /* as written */
		pdfstamp_info_clear(&info);
		/* no password opens it, and nothing can be decrypted yet */
		{
			int64_t perms = 0;
			int as = 0;
			ck_assert_int_eq(ps_sec_auth(ctx, s, "", 0, 0, &perms, &as),
			                 PDFSTAMP_E_PASSWORD);
			ck_assert_ptr_nonnull(strstr(ctx->errmsg, "certificates"));
		}
		ps_sec_free(s);
		s = NULL;
	}
	/* too many envelopes */
	{
		ps_buf t = PS_BUF_INIT;
		ps_buf_puts(&t, "<</Filter/Adobe.PubSec/SubFilter/adbe.pkcs7.s4/V 2/Recipients[");
		for (i = 0; i < 4097; i++)
			ps_buf_puts(&t, "<30>");
		ps_buf_puts(&t, "]>>");
		ps_buf_putc(&t, 0);
		d = dict_of(ctx, (const char *)t.data);
		ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &s), PDFSTAMP_E_UNSUPPORTED);
		ps_obj_free(d);
		ps_buf_free(&t);
	}

	/* the handler a rewrite makes, written and read back */
	r = dict_of(ctx, "[<3082000130> <30820002ab>]");
	ck_assert_int_eq(ps_sec_new_pubsec(ctx, key, ps_obj_copy(r), 1, &n), 0);
	ck_assert_int_eq(ps_sec_write_dict(ctx, n, &d), 0);
	ck_assert_ptr_nonnull(ps_dict_get(ps_dict_get(ps_dict_get(d, "CF"), "DefaultCryptFilter"),
	                                  "Recipients"));
	ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &b), 0);
	ps_obj_free(d);
	ck_assert(ps_obj_equal(ps_sec_recipients(b), r, 0));
	ck_assert_int_eq(ps_sec_params(b)->v, 5);
	/* a key of the wrong length is refused; the right key opens what the
	 * new handler encrypted, another key does not */
	ck_assert_int_eq(ps_sec_auth_pubsec(ctx, b, key, 16, 2), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_sec_encrypt(ctx, n, 4, 0, (const uint8_t *)"to certs", 8, &ct), 0);
	ck_assert_int_eq(ps_sec_auth_pubsec(ctx, b, key, 32, 2), 0);
	ck_assert_int_eq(ps_sec_decrypt(ctx, b, 4, 0, ct.data, ct.len, &pt), 0);
	ck_assert_uint_eq(pt.len, 8);
	ck_assert_mem_eq(pt.data, "to certs", 8);
	key[0] ^= 1;
	ck_assert_int_eq(ps_sec_auth_pubsec(ctx, b, key, 32, 2), 0);
	ps_buf_reset(&pt);
	ck_assert_int_ne(ps_sec_decrypt(ctx, b, 4, 0, ct.data, ct.len, &pt) == 0 &&
	                 pt.len == 8 && memcmp(pt.data, "to certs", 8) == 0, 1);
	/* the seed path (ps_pubsec_auth_seed) derives from the strings as read */
	ck_assert_int_eq(ps_pubsec_auth_seed(ctx, b, seed), 0);

	ps_obj_free(r);
	ps_buf_free(&ct);
	ps_buf_free(&pt);
	ps_sec_free(n);
	ps_sec_free(b);
	pdfstamp_ctx_free(ctx);
}
END_TEST

START_TEST(test_sec_share)
{
	ps_ctx *ctx = new_ctx();
	ps_sec *a = NULL, *s = NULL, *p = NULL;
	ps_buf ct = PS_BUF_INIT, pt = PS_BUF_INIT;
	ps_obj *d = NULL;

	ck_assert_int_eq(ps_sec_new_r6(ctx, "", 0, "o", 1, -4, 1, &a), 0);
	ck_assert_int_eq(ps_sec_share(ctx, a, &s), 0);
	ck_assert_mem_eq(ps_sec_params(s), ps_sec_params(a), sizeof(ps_secparams));
	ck_assert_int_eq(ps_sec_encrypt(ctx, s, 4, 0, (const uint8_t *)"shared", 6, &ct), 0);
	/* a lender cannot be re-keyed while its schedules are lent */
	{
		int64_t perms = 0;
		int as = 0;

		ck_assert_int_eq(ps_sec_auth(ctx, a, "o", 1, 0, &perms, &as), PDFSTAMP_E_USAGE);
		ps_sec_free(s);
		ck_assert_int_eq(ps_sec_auth(ctx, a, "o", 1, 0, &perms, &as), 0);
		ck_assert_int_eq(as, 2);
	}
	/* the lender is untouched by its borrower's free */
	ck_assert_int_eq(ps_sec_decrypt(ctx, a, 4, 0, ct.data, ct.len, &pt), 0);
	ck_assert_uint_eq(pt.len, 6);
	ck_assert_mem_eq(pt.data, "shared", 6);
	/* nothing to borrow from a handler that is only parsed */
	ck_assert_int_eq(ps_sec_write_dict(ctx, a, &d), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, 0, NULL, 0, &p), 0);
	ck_assert_int_eq(ps_sec_share(ctx, p, &s), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(s);
	pt.len = 0;
	ck_assert_int_eq(ps_sec_decrypt(ctx, p, 4, 0, ct.data, ct.len, &pt), PDFSTAMP_E_USAGE);
	ps_obj_free(d);
	ps_sec_free(p);
	ps_sec_free(a);
	ps_buf_free(&ct);
	ps_buf_free(&pt);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* AES-256-CBC of PT (PKCS#7-padded) under test_key from IV, by mbedTLS. */
static void expect_cbc(const uint8_t *ct, size_t ctlen, const uint8_t *pt, size_t n)
{
	mbedtls_aes_context aes;
	size_t padded = (n & ~(size_t)15) + 16;
	uint8_t *buf = malloc(padded), iv[16];

	ck_assert_uint_eq(ctlen, 16 + padded);
	memcpy(buf, pt, n);
	memset(buf + n, (int)(padded - n), padded - n);
	memcpy(iv, ct, 16);
	mbedtls_aes_init(&aes);
	ck_assert_int_eq(mbedtls_aes_setkey_enc(&aes, test_key, 256), 0);
	ck_assert_int_eq(mbedtls_aes_crypt_cbc(&aes, MBEDTLS_AES_ENCRYPT, padded, iv, buf, buf), 0);
	mbedtls_aes_free(&aes);
	ck_assert_mem_eq(buf, ct + 16, padded);
	free(buf);
}

START_TEST(test_sec_batch)
{
	static const size_t lens[] = {0, 1, 15, 16, 17, 100, 4096, 70001};
	enum { N = sizeof lens / sizeof lens[0] };
	ps_ctx *ctx = new_ctx();
	ps_sec *a = NULL, *k = NULL, *p = NULL;
	ps_sec_job jobs[N];
	ps_buf out[N], one = PS_BUF_INIT, pt = PS_BUF_INIT;
	uint8_t *src = malloc(70001);
	ps_obj *d = NULL;
	size_t i;

	for (i = 0; i < 70001; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	/* K: a handler with a known key (test_key), to check against mbedTLS */
	ck_assert_int_eq(ps_sec_new_r6(ctx, "", 0, "o", 1, -4, 1, &a), 0);
	ck_assert_int_eq(ps_sec_write_dict(ctx, a, &d), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, 0, NULL, 0, &k), 0);
	ck_assert_int_eq(ps_sec_auth_key(ctx, k, test_key, 2, 1), 0);
	ps_obj_free(d);

	/* new data through the batch under K */
	for (i = 0; i < N; i++) {
		size_t elen = ps_sec_encrypted_len(k, lens[i]);
		out[i] = (ps_buf)PS_BUF_INIT;
		ck_assert_int_eq(ps_buf_reserve(&out[i], elen), 0);
		ck_assert_int_eq(ps_sec_encrypt_prepare(ctx, k, (uint32_t)i + 1, 0, src, lens[i], out[i].data, &jobs[i]), 0);
		out[i].len = elen;
	}
	ck_assert_int_eq(ps_sec_run_batch(ctx, k, jobs, N), 0);
	for (i = 0; i < N; i++) {
		/* the same as one object at a time: same length, same cipher */
		one.len = 0;
		ck_assert_int_eq(ps_sec_encrypt(ctx, k, (uint32_t)i + 1, 0, src, lens[i], &one), 0);
		ck_assert_uint_eq(one.len, out[i].len);
		expect_cbc(out[i].data, out[i].len, src, lens[i]);
		expect_cbc(one.data, one.len, src, lens[i]);
		pt.len = 0;
		ck_assert_int_eq(ps_sec_decrypt(ctx, k, (uint32_t)i + 1, 0, out[i].data, out[i].len, &pt), 0);
		ck_assert_uint_eq(pt.len, lens[i]);
		if (lens[i])
			ck_assert_mem_eq(pt.data, src, lens[i]);
	}
	/* re-encryption in place: K to A, then A's single-object decryption */
	for (i = 0; i < N; i++) {
		uint8_t iv0[16];
		memcpy(iv0, out[i].data, 16);
		ck_assert_int_eq(ps_sec_reencrypt_prepare(ctx, k, a, (uint32_t)i + 1, 0, out[i].data, out[i].len,
		                                          &jobs[i]), 0);
		ck_assert(memcmp(iv0, out[i].data, 16) != 0);   /* a fresh IV */
	}
	ck_assert_int_eq(ps_sec_run_batch(ctx, a, jobs, N), 0);
	for (i = 0; i < N; i++) {
		pt.len = 0;
		ck_assert_int_eq(ps_sec_decrypt(ctx, a, (uint32_t)i + 1, 0, out[i].data, out[i].len, &pt), 0);
		ck_assert_uint_eq(pt.len, lens[i]);
		if (lens[i])
			ck_assert_mem_eq(pt.data, src, lens[i]);
	}
	/* refusals: bad ciphertext, no cipher */
	ck_assert_int_eq(ps_sec_reencrypt_prepare(ctx, k, a, 1, 0, out[0].data, 17, &jobs[0]), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_sec_run_batch(ctx, NULL, jobs, 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_sec_write_dict(ctx, a, &d), 0);
	ck_assert_int_eq(ps_sec_new(ctx, d, 0, NULL, 0, &p), 0);
	ck_assert_int_eq(ps_sec_run_batch(ctx, p, jobs, 1), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_sec_run_batch(ctx, a, jobs, 0), 0);
	ps_obj_free(d);
	for (i = 0; i < N; i++)
		ps_buf_free(&out[i]);
	ps_buf_free(&one);
	ps_buf_free(&pt);
	free(src);
	ps_sec_free(p);
	ps_sec_free(k);
	ps_sec_free(a);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- legacy handlers, R2-R4 (ISO 32000-1 7.6.3) ------------------------------ */

static void hex2bin(const char *h, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned v = 0;
		ck_assert_int_eq(sscanf(h + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* RFC 6229 (key 0x0102030405, keystream offsets 0 and 16) and RFC 1321. */
START_TEST(test_legacy_rc4_md5_kat)
{
	static const uint8_t key[5] = {1, 2, 3, 4, 5}, zero[32];
	uint8_t want[32], out[32], h[16];

	hex2bin("b2396305f03dc027ccc3524a0a1118a86982944f18fc82d589c403a47a0d0919", want, 32);
	ps_kdf_rc4(key, 5, zero, out, 32);
	ck_assert_mem_eq(out, want, 32);
	ps_kdf_rc4(key, 5, out, out, 32);                 /* in place, and its own inverse */
	ck_assert_mem_eq(out, zero, 32);
	hex2bin("d41d8cd98f00b204e9800998ecf8427e", want, 16);
	ps_kdf_md5((const uint8_t *)"", 0, h);
	ck_assert_mem_eq(h, want, 16);
	hex2bin("900150983cd24fb0d6963f7d28e17f72", want, 16);
	ps_kdf_md5((const uint8_t *)"abc", 3, h);
	ck_assert_mem_eq(h, want, 16);
	hex2bin("57edf4a22be3c955ac49da2e2107b67a", want, 16);
	ps_kdf_md5((const uint8_t *)"1234567890123456789012345678901234567890"
	           "1234567890123456789012345678901234567890", 80, h);
	ck_assert_mem_eq(h, want, 16);
}
END_TEST

/* Algorithms 3/4/5 (make) against 6/7 (authenticate), every revision. */
START_TEST(test_legacy_make_auth)
{
	static const int rs[4] = {2, 3, 3, 4}, lens[4] = {5, 16, 7, 16};
	ps_ctx *ctx = NULL;
	ps_secparams sp;
	uint8_t ku[16], ko[16];
	int owner = -1, i;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	for (i = 0; i < 4; i++) {
		memset(&sp, 0, sizeof sp);
		sp.v = rs[i] == 2 ? 1 : rs[i] == 3 ? 2 : 4;
		sp.r = rs[i];
		sp.length = lens[i];
		sp.p = -3904;
		sp.encrypt_metadata = i != 3;
		sp.id0len = 16;
		memcpy(sp.id0, "0123456789abcdef", 16);
		/* the owner password is "\xe9\xa0" in PDFDocEncoding: "é€" in UTF-8 */
		ck_assert_int_eq(ps_kdf_legacy_make(ctx, &sp, "user", 4, "\xe9\xa0", 2), 0);
		ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "user", 4, ku, &owner), 0);
		ck_assert_int_eq(owner, 0);
		ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "\xc3\xa9\xe2\x82\xac", 5, ko, &owner), 0);
		ck_assert_int_eq(owner, 1);
		ck_assert_mem_eq(ku, ko, (size_t)sp.length);
		ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "\xe9\xa0", 2, ko, &owner), 0); /* raw bytes */
		ck_assert_int_eq(owner, 1);
		ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "User", 4, ko, &owner), PDFSTAMP_E_PASSWORD);
		/* a 40-character password is cut to 32 bytes */
		ck_assert_int_eq(ps_kdf_legacy_make(ctx, &sp, "0123456789012345678901234567890123456789", 40, "", 0), 0);
		ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "01234567890123456789012345678901", 32, ko, &owner), 0);
		ck_assert_int_eq(owner, 1); /* empty owner password: the user password is both */
	}
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* A legacy handler built from a hand-made /Encrypt: per-object round trips,
 * the RC4 ciphertext checked against Algorithm 1 done here, and AESV2's
 * layout (IV || blocks, PKCS#7). */
START_TEST(test_legacy_sec_objects)
{
	static const char *const dicts[3] = {
		"<< /Filter /Standard /V 2 /R 3 /Length 128 /P -3904",
		"<< /Filter /Standard /V 4 /R 4 /P -3904 /StmF /StdCF /StrF /StdCF "
		"/CF << /StdCF << /CFM /AESV2 /Length 16 >> >>",
		"<< /Filter /Standard /V 4 /R 4 /P -3904 /StmF /A /StrF /R "
		"/CF << /A << /CFM /AESV2 /Length 128 >> /R << /CFM /V2 /Length 16 >> >>",
	};
	ps_ctx *ctx = NULL;
	int i;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	for (i = 0; i < 3; i++) {
		ps_secparams sp;
		char ohex[65], uhex[65], text[600], why[64];
		ps_obj *d = NULL, *str;
		ps_sec *s = NULL, *sh = NULL;
		ps_buf c = PS_BUF_INIT, p = PS_BUF_INIT;
		int64_t perms = 0;
		int as = 0, k;
		size_t pos = 0;

		memset(&sp, 0, sizeof sp);
		sp.v = i ? 4 : 2;
		sp.r = i ? 4 : 3;
		sp.length = 16;
		sp.p = -3904;
		sp.encrypt_metadata = 1;
		sp.id0len = 4;
		memcpy(sp.id0, "ID01", 4);
		ck_assert_int_eq(ps_kdf_legacy_make(ctx, &sp, "u", 1, "o", 1), 0);
		for (k = 0; k < 32; k++) {
			snprintf(ohex + 2 * k, 3, "%02x", sp.o[k]);
			snprintf(uhex + 2 * k, 3, "%02x", sp.u[k]);
		}
		snprintf(text, sizeof text, "%s /O <%s> /U <%s> >>", dicts[i], ohex, uhex);
		ck_assert_int_eq(ps_parse_obj(ctx, (const uint8_t *)text, strlen(text), &pos, &d), 0);
		ck_assert_int_eq(ps_sec_new(ctx, d, 7, (const uint8_t *)"ID01", 4, &s), 0);
		ck_assert_int_eq(ps_sec_auth(ctx, s, "o", 1, 0, &perms, &as), 0);
		ck_assert_int_eq(as, 2);
		ck_assert_int_eq(perms, -3904);
		ck_assert_int_eq(ps_sec_weak(s, why, sizeof why), i != 1);
		ck_assert_str_eq(why, i == 1 ? "" : "RC4 128-bit");
		/* streams */
		ck_assert_int_eq(ps_sec_encrypt(ctx, s, 12, 0, (const uint8_t *)"hello, world", 12, &c), 0);
		ck_assert_uint_eq(c.len, i == 0 ? 12 : 32);
		if (i == 0) {                /* RC4 with MD5(key || 12 0 0 || 0 0) */
			uint8_t fk[16], b[21], ok[16], want[12];
			int owner;
			ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "u", 1, fk, &owner), 0);
			memcpy(b, fk, 16);
			memcpy(b + 16, "\x0c\x00\x00\x00\x00", 5);
			ps_kdf_md5(b, 21, ok);
			ps_kdf_rc4(ok, 16, (const uint8_t *)"hello, world", want, 12);
			ck_assert_mem_eq(c.data, want, 12);
		}
		ck_assert_int_eq(ps_sec_decrypt(ctx, s, 12, 0, c.data, c.len, &p), 0);
		ck_assert_uint_eq(p.len, 12);
		ck_assert_mem_eq(p.data, "hello, world", 12);
		p.len = 0;                   /* another object's key does not fit */
		if (i == 0) {
			ck_assert_int_eq(ps_sec_decrypt(ctx, s, 13, 0, c.data, c.len, &p), 0);
			ck_assert_int_ne(memcmp(p.data, "hello, world", 12), 0);
		}
		/* strings through the walker, and back through a shared handler */
		str = ps_new_str("secret", 6);
		ck_assert_ptr_nonnull(str);
		ck_assert_int_eq(ps_sec_convert_strings(ctx, NULL, s, 5, 0, str, NULL), 0);
		ck_assert_uint_eq(str->u.str.len, i == 1 ? 32 : 6);
		ck_assert_int_eq(ps_sec_share(ctx, s, &sh), 0);
		ck_assert_int_eq(ps_sec_convert_strings(ctx, sh, NULL, 5, 0, str, NULL), 0);
		ck_assert_uint_eq(str->u.str.len, 6);
		ck_assert_mem_eq(str->u.str.p, "secret", 6);
		ps_sec_free(sh);
		ps_obj_free(str);
		ps_buf_free(&c);
		ps_buf_free(&p);
		ps_sec_free(s);
		ps_obj_free(d);
	}
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* Refusals: public-key handlers, unknown /V /R, AESV3 under /V 4, V 4
 * without the named filter. */
START_TEST(test_legacy_refusals)
{
	static const struct {
		const char *dict;
		int rc;
	} t[] = {
		{"<< /Filter /Adobe.PubSec /V 4 /R 4 >>", PDFSTAMP_E_FORMAT}, /* no /SubFilter */
		{"<< /Filter /Standard /V 3 /R 3 /P 0 /O <00> /U <00> >>", PDFSTAMP_E_UNSUPPORTED},
		{"<< /Filter /Standard /V 2 /R 5 /P 0 /O <00> /U <00> >>", PDFSTAMP_E_UNSUPPORTED},
		{"<< /Filter /Standard /V 2 /R 3 /Length 44 /P 0 /O <00> /U <00> >>", PDFSTAMP_E_UNSUPPORTED},
		{"<< /Filter /Standard /V 4 /R 4 /P 0 /StmF /StdCF /CF << /StdCF << /CFM /AESV3 >> >> >>",
		 PDFSTAMP_E_UNSUPPORTED},
		{"<< /Filter /Standard /V 4 /R 4 /P 0 /StmF /StdCF >>", PDFSTAMP_E_FORMAT},
	};
	ps_ctx *ctx = NULL;
	size_t i;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		ps_obj *d = NULL;
		ps_sec *s = NULL;
		size_t pos = 0;
		ck_assert_int_eq(ps_parse_obj(ctx, (const uint8_t *)t[i].dict, strlen(t[i].dict), &pos, &d), 0);
		ck_assert_int_eq(ps_sec_new(ctx, d, 3, NULL, 0, &s), t[i].rc);
		ck_assert_ptr_null(s);
		ps_obj_free(d);
	}
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* A rewrite drops a stream's own /Crypt filter that names a filter of the
 * old handler (the output defines only its /StmF), with its /DecodeParms
 * entry, and keeps /Crypt /Identity and every other filter. */
START_TEST(test_drop_crypt_filter)
{
	static const struct {
		const char *in, *out;
	} t[] = {
		{"<< /Filter [/Crypt /FlateDecode] /DecodeParms [<< /Name /MyCF >> null] /Length 3 >>",
		 "<< /Filter [/FlateDecode] /DecodeParms [null] /Length 3 >>"},
		{"<< /Filter /Crypt /DecodeParms << /Name /MyCF >> /Length 3 >>", "<< /Length 3 >>"},
		{"<< /Filter [/Crypt /FlateDecode] /DecodeParms << /Name /MyCF >> /Length 3 >>",
		 "<< /Filter [/FlateDecode] /Length 3 >>"},
		{"<< /Filter [/Crypt /FlateDecode] /DecodeParms [<< /Name /Identity >> null] /Length 3 >>",
		 "<< /Filter [/Crypt /FlateDecode] /DecodeParms [<< /Name /Identity >> null] /Length 3 >>"},
		{"<< /Filter /Crypt /Length 3 >>", "<< /Filter /Crypt /Length 3 >>"}, /* no /Name: Identity */
		{"<< /Filter /FlateDecode /Length 3 >>", "<< /Filter /FlateDecode /Length 3 >>"},
		/* /Crypt out of place (7.4.10 wants it first; readers honour it anywhere) */
		{"<< /Filter [/FlateDecode /Crypt] /DecodeParms [null << /Name /MyCF >>] /Length 3 >>",
		 "<< /Filter [/FlateDecode] /DecodeParms [null] /Length 3 >>"},
	};
	ps_ctx *ctx = NULL;
	size_t i;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		ps_obj *d = NULL, *stm;
		ps_buf b = PS_BUF_INIT;
		size_t pos = 0;

		ck_assert_int_eq(ps_parse_obj(ctx, (const uint8_t *)t[i].in, strlen(t[i].in), &pos, &d), 0);
		stm = ps_new_stream(d, NULL, 0);
		ck_assert_ptr_nonnull(stm);
		ck_assert_int_eq(ps_sec_drop_crypt_filter(ctx, stm), 0);
		ps_serialize(&b, stm);
		ps_buf_putc(&b, 0);
		ck_assert_str_eq((const char *)b.data, t[i].out);
		ps_buf_free(&b);
		ps_obj_free(stm);
	}
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* Files made by qpdf (when installed): Algorithm 2's key as qpdf reports
 * it, Algorithms 3-5 reproduce /O and /U, 6 and 7 open with both
 * passwords, and every object decrypts (pdfstamp_verify). */
START_TEST(test_legacy_qpdf)
{
	static const char *const modes[4] = {"40", "128 --use-aes=n", "128 --use-aes=y", "128 --force-V4 --use-aes=n"};
	char dir[] = "/tmp/pscrypt.XXXXXX", cmd[1024], line[512], path[600];
	ps_ctx *ctx = NULL;
	int i;

	if (system("qpdf --version >/dev/null 2>&1") != 0)
		return;                      /* no qpdf: covered by the KATs above */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	for (i = 0; i < 4; i++) {
		pdfstamp_doc *doc = NULL;
		struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT;
		const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
		struct ps_doc_security ds;
		ps_secparams sp;
		uint8_t want[16], key[16];
		int owner = -1, found = 0;
		FILE *f;

		snprintf(path, sizeof path, "%s/l%d.pdf", dir, i);
		snprintf(cmd, sizeof cmd, "qpdf --allow-weak-crypto --encrypt u o %s -- %s/../samples/plain-2page.pdf %s",
		         modes[i], TEST_SRCDIR, path);
		ck_assert_int_eq(system(cmd), 0);
		snprintf(cmd, sizeof cmd, "qpdf --password=u --show-encryption-key --show-encryption %s", path);
		ck_assert_ptr_nonnull(f = popen(cmd, "r"));
		while (fgets(line, sizeof line, f))
			if (strncmp(line, "Encryption key = ", 17) == 0) {
				hex2bin(line + 17, want, strlen(line + 17) / 2 > 16 ? 16 : strlen(line + 17) / 2);
				found = (int)(strlen(line + 17) / 2);
			}
		pclose(f);
		ck_assert_int_gt(found, 0);
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), 0);
		ps_doc_security(doc, &ds);
		sp = *ps_sec_params(ds.sec);
		ck_assert_int_eq(sp.length, found);
		ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "u", 1, key, &owner), 0);
		ck_assert_int_eq(owner, 0);
		ck_assert_mem_eq(key, want, (size_t)found);
		ck_assert_int_eq(ps_kdf_legacy_authenticate(ctx, &sp, "o", 1, key, &owner), 0);
		ck_assert_int_eq(owner, 1);
		ck_assert_mem_eq(key, want, (size_t)found);
		{
			ps_secparams mine = sp;
			ck_assert_int_eq(ps_kdf_legacy_make(ctx, &mine, "u", 1, "o", 1), 0);
			ck_assert_mem_eq(mine.o, sp.o, 32);
			ck_assert_mem_eq(mine.u, sp.u, sp.r == 2 ? 32 : 16);
		}
		ck_assert_int_eq(pdfstamp_doc_auth(doc, "u", 1, 0), 0);
		ck_assert_int_eq(pdfstamp_verify(doc, &vo, &rep), 0);
		ck_assert_int_eq(rep.faults, 0);
		ck_assert_int_gt(rep.streams, 0);
		pdfstamp_doc_close(doc);
		unlink(path);
	}
	rmdir(dir);
	pdfstamp_ctx_free(ctx);
}
END_TEST

static Suite *crypt_suite(void)
{
	Suite *s = suite_create("crypt");
	TCase *tc;

	tc = tcase_create("kat");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, test_kat_hash, 0, NKAT);
	tcase_add_loop_test(tc, test_kat_auth, 0, NKAT);
	tcase_add_loop_test(tc, test_kat_perms_mismatch, 0, NKAT);
	tcase_add_loop_test(tc, test_hash_count, 0, (int)(sizeof count_kats / sizeof count_kats[0]));
	tcase_add_test(tc, test_hash_count_made);
	tcase_add_test(tc, test_hash_count_files);
	tcase_add_test(tc, test_kat_long_truncation);
	tcase_add_test(tc, test_kat_unicode_forms);
	tcase_add_test(tc, test_kat_unprepared);
	tcase_add_loop_test(tc, test_kat_bulk, 0, 2);
	tcase_add_test(tc, test_cpu_once);
	tcase_add_test(tc, test_sha256_kernel);
	tcase_add_test(tc, test_sha256_stream);
	tcase_add_loop_test(tc, test_sha512_kernel, 0, 2);
	tcase_add_test(tc, test_sha512_residue);
	tcase_add_test(tc, test_auth_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("saslprep");
	tcase_add_loop_test(tc, test_saslprep, 0,
	                    (int)(sizeof prep_cases / sizeof prep_cases[0]));
	tcase_add_test(tc, test_saslprep_truncate);
	suite_add_tcase(s, tc);

	tc = tcase_create("make");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_make_roundtrip);
	tcase_add_test(tc, test_make_variants);
	suite_add_tcase(s, tc);

	tc = tcase_create("aesv3");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_aes_roundtrip);
	tcase_add_test(tc, test_aes_fresh_iv);
	tcase_add_test(tc, test_aes_nist);
	tcase_add_test(tc, test_aes_independent_decrypt);
	tcase_add_test(tc, test_aes_bad_input);
	suite_add_tcase(s, tc);

	tc = tcase_create("fork");
	tcase_add_test(tc, test_fork_iv_and_drbg);
	tcase_add_test(tc, test_fork_unseeded);
	tcase_add_test(tc, test_fork_pid_fallback);
	tcase_add_test(tc, test_random_os);
	suite_add_tcase(s, tc);

	tc = tcase_create("issue11");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_read_perms);
	tcase_add_test(tc, test_make_saslprep_warning);
	tcase_add_test(tc, test_cipher_borrow);
	suite_add_tcase(s, tc);

	tc = tcase_create("sec");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_sec_walker);
	tcase_add_test(tc, test_legacy_rc4_md5_kat);
	tcase_add_test(tc, test_legacy_make_auth);
	tcase_add_test(tc, test_legacy_sec_objects);
	tcase_add_test(tc, test_legacy_refusals);
	tcase_add_test(tc, test_legacy_qpdf);
	tcase_add_test(tc, test_sec_dict_roundtrip);
	tcase_add_test(tc, test_sec_share);
	tcase_add_test(tc, test_pubsec_dict);
	tcase_add_test(tc, test_drop_crypt_filter);
	tcase_add_test(tc, test_sec_batch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(crypt_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
