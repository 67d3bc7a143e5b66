/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_aesmb.c - unit tests for src/aesmb.c (the multi-lane AES engine).
 *
 * Known answers come from outside the engine:
 *  - FIPS-197 appendix C.3 (AES-256 block) and appendix A.3 (the last
 *    words of the expanded key for the A.3 cipher key);
 *  - NIST SP 800-38A F.2.5/F.2.6 (CBC-AES256);
 *  - mbedTLS used directly (its own mbedtls_aes_context, never the engine's)
 *    for random keys, IVs and data: every engine kind's output and final IV
 *    must equal mbedtls_aes_crypt_cbc byte for byte.
 * Each looped test runs once per kind (mbedTLS, AES-NI 8 lanes, VAES 16
 * lanes); a kind the CPU lacks falls back, which is checked too.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/aes.h>

#include "ps.h"
#include "aesmb.h"
#include "cpu.h"

#define NKINDS 3

/* ---- helpers -------------------------------------------------------------- */

/* splitmix64: reproducible test data (not a source of keys in the product). */
static uint64_t rnd_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rnd_fill(uint64_t *s, uint8_t *p, size_t n)
{
	while (n) {
		uint64_t v = rnd_next(s);
		size_t k = n < 8 ? n : 8;

		memcpy(p, &v, k);
		p += k;
		n -= k;
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void unhex(const char *s, uint8_t *out, size_t want)
{
	size_t n = 0;

	while (*s) {
		int hi, lo;

		if (*s == ' ') {
			s++;
			continue;
		}
		hi = hexval((unsigned char)s[0]);
		lo = s[1] ? hexval((unsigned char)s[1]) : -1;
		ck_assert_msg(hi >= 0 && lo >= 0 && n < want, "bad hex: %s", s);
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	ck_assert_uint_eq(n, want);
}

/* This CPU's PS_CPU_* bits, as the library passes them to the engine
 * (there from the probe a context keeps: ps_cpu_bits). */
static unsigned hw(void)
{
	return ps_cpu_probe();
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* Initialises E for KIND (the test's loop index) and checks the choice: the
 * requested kind when the CPU has it, else the best one available. */
static void engine_for(ps_aes_engine *e, const uint8_t key[32], int kind)
{
	ck_assert_int_eq(ps_aes_engine_init(e, key, kind, hw()), 0);
	if (ps_aes_engine_supported(kind, hw()))
		ck_assert_int_eq(e->kind, kind);
	else
		ck_assert_int_ne(e->kind, kind);
	ck_assert(ps_aes_engine_supported(e->kind, hw()));
}

static void ref_cbc(const uint8_t key[32], int mode, uint8_t iv[16], const uint8_t *in, uint8_t *out,
		    size_t len)
{
	mbedtls_aes_context a;

	mbedtls_aes_init(&a);
	if (mode == MBEDTLS_AES_ENCRYPT)
		ck_assert_int_eq(mbedtls_aes_setkey_enc(&a, key, 256), 0);
	else
		ck_assert_int_eq(mbedtls_aes_setkey_dec(&a, key, 256), 0);
	ck_assert_int_eq(mbedtls_aes_crypt_cbc(&a, mode, len, iv, in, out), 0);
	mbedtls_aes_free(&a);
}

/* One batch of N jobs with the given lengths, each in its own buffer at a
 * random stagger; checks ciphertext and final IV of every job against
 * mbedTLS, then decrypts every job back with the engine, both into a
 * separate buffer and in place.  FLAGS: BATCH_INPLACE encrypts with
 * out == in; BATCH_ALIGN4K puts every buffer at a 4 KiB boundary (the
 * crowded-lanes layout of aesmb.c design note 7). */
#define BATCH_INPLACE 1
#define BATCH_ALIGN4K 2
/* ST (may be NULL) receives the batch's schedule and *KIND_USED (may be
 * NULL) the engine kind that ran it. */
static void check_batch_st(int kind, uint64_t seed, const size_t *lens, size_t n, int flags,
			   ps_aes_batch_stats *st, int *kind_used)
{
	ps_aes_engine e;
	uint8_t key[32];
	ps_aes_job *jobs = xmalloc(n * sizeof *jobs);
	uint8_t **plain = xmalloc(n * sizeof *plain), **bufs = xmalloc(n * sizeof *bufs);
	uint8_t (*ivs)[16] = xmalloc(n * 16);
	size_t i;

	rnd_fill(&seed, key, sizeof key);
	engine_for(&e, key, kind);
	for (i = 0; i < n; i++) {
		size_t stagger = (size_t)(rnd_next(&seed) % 64) * 16 + (rnd_next(&seed) & 1) * 8;

		plain[i] = xmalloc(lens[i]);
		rnd_fill(&seed, plain[i], lens[i]);
		if (flags & BATCH_ALIGN4K) {
			void *p = NULL;

			ck_assert_int_eq(posix_memalign(&p, 4096, lens[i] ? lens[i] : 1), 0);
			bufs[i] = p;
			stagger = 0;
		} else {
			bufs[i] = xmalloc(2 * lens[i] + stagger);
		}
		jobs[i].out = bufs[i] + stagger;
		if (flags & BATCH_INPLACE) {
			memcpy(jobs[i].out, plain[i], lens[i]);
			jobs[i].in = jobs[i].out;
		} else {
			jobs[i].in = plain[i];
		}
		jobs[i].len = lens[i];
		rnd_fill(&seed, jobs[i].iv, 16);
		memcpy(ivs[i], jobs[i].iv, 16);
	}
	ps_aes_cbc_encrypt_batch_stats(&e, jobs, n, st);
	if (kind_used)
		*kind_used = e.kind;
	for (i = 0; i < n; i++) {
		uint8_t *ref = xmalloc(lens[i]), *back = xmalloc(lens[i]);
		uint8_t iv[16];

		memcpy(iv, ivs[i], 16);
		ref_cbc(key, MBEDTLS_AES_ENCRYPT, iv, plain[i], ref, lens[i]);
		ck_assert_msg(lens[i] == 0 || memcmp(ref, jobs[i].out, lens[i]) == 0,
			      "kind %d job %zu/%zu len %zu: ciphertext differs", e.kind, i, n, lens[i]);
		ck_assert_msg(memcmp(iv, jobs[i].iv, 16) == 0,
			      "kind %d job %zu/%zu len %zu: final IV differs", e.kind, i, n, lens[i]);
		if (lens[i] == 0)
			ck_assert_mem_eq(jobs[i].iv, ivs[i], 16);
		/* Decrypt: into another buffer, then in place. */
		ps_aes_cbc_decrypt(&e, ivs[i], jobs[i].out, back, lens[i]);
		ck_assert_msg(lens[i] == 0 || memcmp(back, plain[i], lens[i]) == 0,
			      "kind %d job %zu len %zu: decrypt differs", e.kind, i, lens[i]);
		ps_aes_cbc_decrypt(&e, ivs[i], jobs[i].out, jobs[i].out, lens[i]);
		ck_assert_msg(lens[i] == 0 || memcmp(jobs[i].out, plain[i], lens[i]) == 0,
			      "kind %d job %zu len %zu: in-place decrypt differs", e.kind, i, lens[i]);
		free(ref);
		free(back);
		free(plain[i]);
		free(bufs[i]);
	}
	ps_aes_engine_free(&e);
	free(jobs);
	free(plain);
	free(bufs);
	free(ivs);
}

static void check_batch(int kind, uint64_t seed, const size_t *lens, size_t n, int flags)
{
	check_batch_st(kind, seed, lens, n, flags, NULL, NULL);
}

/* ---- known answers -------------------------------------------------------- */

START_TEST(test_fips197_c3)
{
	uint8_t key[32], pt[16], ct[16], out[16], zero[16] = {0};
	ps_aes_engine e;
	int i;

	for (i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	unhex("00112233445566778899aabbccddeeff", pt, 16);
	unhex("8ea2b7ca516745bfeafc49904b496089", ct, 16);
	engine_for(&e, key, _i);
	ps_aes_ecb_encrypt_block(&e, pt, out);
	ck_assert_mem_eq(out, ct, 16);
	/* One CBC block with a zero IV is the inverse cipher. */
	ps_aes_cbc_decrypt(&e, zero, ct, out, 16);
	ck_assert_mem_eq(out, pt, 16);
	ps_aes_engine_free(&e);
}
END_TEST

START_TEST(test_key_schedule)
{
	/* FIPS-197 A.3: the last four words w56..w59 of the expansion. */
	uint8_t key[32], last[16];
	ps_aes_engine e;

	unhex("603deb1015ca71be2b73aef0857d7781 1f352c073b6108d72d9810a30914dff4", key, 32);
	unhex("fe4890d1e6188d0b046df344706c631e", last, 16);
	if (!ps_aes_engine_supported(_i, hw()) || _i == PS_AES_MBEDTLS)
		return;   /* only the AES-NI kinds expand keys themselves */
	engine_for(&e, key, _i);
	ck_assert_mem_eq(e.rk_enc[0], key, 16);
	ck_assert_mem_eq(e.rk_enc[1], key + 16, 16);
	ck_assert_mem_eq(e.rk_enc[14], last, 16);
	/* The inverse schedule starts with the last round key, ends with the first. */
	ck_assert_mem_eq(e.rk_dec[0], last, 16);
	ck_assert_mem_eq(e.rk_dec[14], key, 16);
	ps_aes_engine_free(&e);
}
END_TEST

START_TEST(test_sp800_38a)
{
	uint8_t key[32], iv[16], pt[64], ct[64], out[64], (*outs)[64];
	ps_aes_engine e;
	ps_aes_job jobs[17];
	int i;

	unhex("603deb1015ca71be2b73aef0857d7781 1f352c073b6108d72d9810a30914dff4", key, 32);
	unhex("000102030405060708090a0b0c0d0e0f", iv, 16);
	unhex("6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
	      "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710", pt, 64);
	unhex("f58c4c04d6e5f1ba779eabfb5f7bfbd6 9cfc4e967edb808d679f777bc6702c7d"
	      "39f23369a9d9bacfa530e26304231461 b2eb05e2c39be9fcda6c19078c6a9d1b", ct, 64);
	engine_for(&e, key, _i);
	/* 17 identical jobs: every lane of the widest kernel plus a refill. */
	outs = xmalloc(17 * 64);
	for (i = 0; i < 17; i++) {
		jobs[i].in = pt;
		jobs[i].out = outs[i];
		jobs[i].len = 64;
		memcpy(jobs[i].iv, iv, 16);
	}
	ps_aes_cbc_encrypt_batch(&e, jobs, 17);
	for (i = 0; i < 17; i++) {
		ck_assert_mem_eq(outs[i], ct, 64);
		ck_assert_mem_eq(jobs[i].iv, ct + 48, 16);
	}
	ps_aes_cbc_decrypt(&e, iv, ct, out, 64);
	ck_assert_mem_eq(out, pt, 64);
	free(outs);
	ps_aes_engine_free(&e);
}
END_TEST

START_TEST(test_ecb_random)
{
	uint64_t s = 0x1234 + (uint64_t)_i;
	uint8_t key[32], in[16], a[16], b[16];
	mbedtls_aes_context ref;
	ps_aes_engine e;
	int k, i;

	for (k = 0; k < 20; k++) {
		rnd_fill(&s, key, 32);
		engine_for(&e, key, _i);
		mbedtls_aes_init(&ref);
		ck_assert_int_eq(mbedtls_aes_setkey_enc(&ref, key, 256), 0);
		for (i = 0; i < 50; i++) {
			rnd_fill(&s, in, 16);
			ps_aes_ecb_encrypt_block(&e, in, a);
			ck_assert_int_eq(mbedtls_aes_crypt_ecb(&ref, MBEDTLS_AES_ENCRYPT, in, b), 0);
			ck_assert_mem_eq(a, b, 16);
			/* in == out */
			ps_aes_ecb_encrypt_block(&e, in, in);
			ck_assert_mem_eq(in, b, 16);
		}
		mbedtls_aes_free(&ref);
		ps_aes_engine_free(&e);
	}
}
END_TEST

/* ---- lengths and batches --------------------------------------------------- */

START_TEST(test_each_length_alone)
{
	size_t nb;

	/* 0..100 blocks, each as a batch of one (single-lane path). */
	for (nb = 0; nb <= 100; nb++) {
		size_t len = nb * 16;

		check_batch(_i, 0x5000 + nb, &len, 1, 0);
	}
}
END_TEST

START_TEST(test_all_lengths_one_batch)
{
	size_t lens[101], i;

	for (i = 0; i <= 100; i++)
		lens[i] = i * 16;
	check_batch(_i, 77, lens, 101, 0);
	/* Descending, so long jobs start together and short ones trickle in. */
	for (i = 0; i <= 100; i++)
		lens[i] = (100 - i) * 16;
	check_batch(_i, 78, lens, 101, BATCH_INPLACE);
}
END_TEST

static const size_t batch_sizes[] = { 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 1000 };

START_TEST(test_batch_sizes)
{
	uint64_t s = 0xbeef + (uint64_t)_i;
	size_t bi;

	for (bi = 0; bi < sizeof batch_sizes / sizeof batch_sizes[0]; bi++) {
		size_t n = batch_sizes[bi], i;
		size_t *lens = xmalloc(n * sizeof *lens);
		int round;

		for (round = 0; round < 3; round++) {
			for (i = 0; i < n; i++) {
				uint64_t r = rnd_next(&s);

				switch (round) {
				case 0:   /* all equal (the small-object case: 208 B) */
					lens[i] = 208;
					break;
				case 1:   /* mixed, some empty */
					lens[i] = (r % 7 == 0) ? 0 : (size_t)(r >> 8) % 300 * 16;
					break;
				default:  /* mostly small, a few long ones */
					lens[i] = (r % 50 == 0) ? (size_t)(r >> 8) % 4096 * 16 + 16
					                        : (size_t)(r >> 8) % 20 * 16;
					break;
				}
			}
			check_batch(_i, s + (uint64_t)round, lens, n, round == 2 ? BATCH_INPLACE : 0);
		}
		free(lens);
	}
}
END_TEST

START_TEST(test_large)
{
	/* A long job alone, a long job with short ones (it finishes alone in
	 * the narrow kernels), and two long ones of different size. */
	size_t one[1] = { (1u << 20) + 16 };
	size_t mix[10] = { 4u << 20, 16, 32, 208, 4096, 0, 208, 136 * 1024, 48, 16 };
	size_t two[2] = { 4u << 20, (1u << 20) + 16 };

	check_batch(_i, 901, one, 1, 0);
	check_batch(_i, 902, mix, 10, 0);
	check_batch(_i, 903, two, 2, BATCH_INPLACE);
}
END_TEST

/* ---- lane refill (aesmb.c note 3) ------------------------------------------ */

static size_t lanes_of(int kind)
{
	return kind == PS_AES_VAES16 ? 16 : kind == PS_AES_AESNI8 ? 8 : 1;
}

/* Fisher-Yates, so that the long jobs sit anywhere in the batch. */
static void shuffle(uint64_t *s, size_t *v, size_t n)
{
	size_t i;

	for (i = n; i > 1; i--) {
		size_t k = (size_t)(rnd_next(s) % i), t = v[i - 1];

		v[i - 1] = v[k];
		v[k] = t;
	}
}

/* Lengths 0, 16 and odd multiples of 16 (partial blocks: test_partial_block_ignored). */
static size_t tiny_len(uint64_t *s)
{
	static const size_t pick[] = { 0, 16, 48, 80, 208, 336, 1008, 4080, 1616, 0 };

	return pick[rnd_next(s) % (sizeof pick / sizeof pick[0])];
}

START_TEST(test_refill_huge_and_tiny)
{
	/* One 4 MB job somewhere among 3000 tiny ones: the tiny ones run in
	 * the other lanes beside it, so the batch takes no more steps than the
	 * huge job's own chain (it is longer than all the rest per lane). */
	size_t n = 3001, *lens = xmalloc(n * sizeof *lens), i, huge = (size_t)4 << 20;
	uint64_t s = 0x4eed + (uint64_t)_i;
	ps_aes_batch_stats st;
	int used, flags;

	for (flags = 0; flags <= BATCH_INPLACE; flags++) {
		lens[0] = huge;
		for (i = 1; i < n; i++)
			lens[i] = tiny_len(&s);
		shuffle(&s, lens, n);
		check_batch_st(_i, s, lens, n, flags, &st, &used);
		if (lanes_of(used) > 1 && flags == BATCH_INPLACE)
			ck_assert_msg(st.steps == huge / 16, "kind %d: %llu steps for a chain of %zu blocks", used,
				      (unsigned long long)st.steps, huge / 16);
		ck_assert_uint_gt(st.blocks, huge / 16);
	}
	free(lens);
}
END_TEST

START_TEST(test_refill_many_large)
{
	/* 40 large jobs of nearly equal size (the scanned-archive shape: about
	 * 1 MB images, here 64 KB) interleaved with 3000 tiny ones: every lane
	 * stays busy to the end (occupancy >= 90%), whatever the order. */
	size_t n = 3040, *lens = xmalloc(n * sizeof *lens), i;
	uint64_t s = 0x1a4e + (uint64_t)_i;
	ps_aes_batch_stats st;
	int used;

	for (i = 0; i < n; i++)
		lens[i] = i < 40 ? (size_t)(4096 - rnd_next(&s) % 64) * 16 : tiny_len(&s);
	shuffle(&s, lens, n);
	check_batch_st(_i, s, lens, n, BATCH_INPLACE, &st, &used);
	ck_assert(st.steps > 0);
	ck_assert_msg(st.blocks * 10 >= st.steps * lanes_of(used) * 9, "kind %d: occupancy %.2f", used,
		      (double)st.blocks / (double)(st.steps * lanes_of(used)));
	/* all equal: exactly the ideal number of steps (in place, in staggered
	 * buffers: separate page-aligned inputs, as ASan's allocator hands
	 * out, would rightly make the engine split 16 lanes into groups of 8,
	 * which test_crowded_lanes covers) */
	for (i = 0; i < 32; i++)
		lens[i] = 4096 * 16;
	check_batch_st(_i, s + 1, lens, 32, BATCH_INPLACE, &st, &used);
	ck_assert_uint_eq(st.blocks, 32 * 4096);
	if (lanes_of(used) > 1)
		ck_assert_uint_le(st.steps, 2 * 4096 * (16 / lanes_of(used)));
	free(lens);
}
END_TEST

START_TEST(test_crowded_lanes)
{
	/* Page-aligned buffers, so every lane sits in the same L1 set: the
	 * scheduler splits 16 lanes into groups of 8 (and the remainder).  The
	 * plaintext sources are malloc'd elsewhere, so out-of-place runs see
	 * crowded outputs only; in-place runs see crowded inputs and outputs. */
	static const size_t counts[] = { 9, 12, 16, 17, 40 };
	uint64_t s = 0xa11 + (uint64_t)_i;
	size_t ci, i;

	for (ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
		size_t n = counts[ci], *lens = xmalloc(n * sizeof *lens);

		for (i = 0; i < n; i++)
			lens[i] = (size_t)(rnd_next(&s) % 200 + 1) * 16;
		check_batch(_i, s, lens, n, BATCH_ALIGN4K);
		check_batch(_i, s + 1, lens, n, BATCH_ALIGN4K | BATCH_INPLACE);
		for (i = 0; i < n; i++)
			lens[i] = 4096;
		check_batch(_i, s + 2, lens, n, BATCH_ALIGN4K | BATCH_INPLACE);
		free(lens);
	}
}
END_TEST

START_TEST(test_decrypt_vs_mbedtls)
{
	uint64_t s = 0xdec + (uint64_t)_i;
	static const size_t extra[] = { 255 * 16, 256 * 16, 257 * 16, (1u << 20) + 16, 4u << 20 };
	uint8_t key[32], iv[16], iv2[16];
	ps_aes_engine e;
	size_t k;

	rnd_fill(&s, key, 32);
	engine_for(&e, key, _i);
	for (k = 0; k <= 100 + sizeof extra / sizeof extra[0]; k++) {
		size_t len = k <= 100 ? k * 16 : extra[k - 101];
		uint8_t *ct = xmalloc(len), *a = xmalloc(len), *b = xmalloc(len);

		rnd_fill(&s, ct, len);
		rnd_fill(&s, iv, 16);
		memcpy(iv2, iv, 16);
		ps_aes_cbc_decrypt(&e, iv, ct, a, len);
		ref_cbc(key, MBEDTLS_AES_DECRYPT, iv2, ct, b, len);
		ck_assert_msg(len == 0 || memcmp(a, b, len) == 0, "kind %d len %zu", e.kind, len);
		ps_aes_cbc_decrypt(&e, iv, ct, ct, len);
		ck_assert_msg(len == 0 || memcmp(ct, b, len) == 0, "in place, kind %d len %zu", e.kind,
			      len);
		free(ct);
		free(a);
		free(b);
	}
	ps_aes_engine_free(&e);
}
END_TEST

START_TEST(test_partial_block_ignored)
{
	uint8_t key[32] = {1}, iv[16] = {2}, in[40], out[40], ref[32], riv[16];
	ps_aes_job job;
	ps_aes_engine e;

	memset(in, 0x5a, sizeof in);
	memset(out, 0xee, sizeof out);
	engine_for(&e, key, _i);
	job.in = in;
	job.out = out;
	job.len = 40;   /* two blocks and 8 stray bytes */
	memcpy(job.iv, iv, 16);
	ps_aes_cbc_encrypt_batch(&e, &job, 1);
	memcpy(riv, iv, 16);
	ref_cbc(key, MBEDTLS_AES_ENCRYPT, riv, in, ref, 32);
	ck_assert_mem_eq(out, ref, 32);
	ck_assert_mem_eq(job.iv, riv, 16);
	ck_assert_uint_eq(out[32], 0xee);
	ck_assert_uint_eq(out[39], 0xee);
	/* A job shorter than one block is left alone, IV included. */
	job.len = 15;
	memcpy(job.iv, iv, 16);
	memset(out, 0xee, sizeof out);
	ps_aes_cbc_encrypt_batch(&e, &job, 1);
	ck_assert_mem_eq(job.iv, iv, 16);
	ck_assert_uint_eq(out[0], 0xee);
	/* Empty batch. */
	ps_aes_cbc_encrypt_batch(&e, NULL, 0);
	ps_aes_engine_free(&e);
}
END_TEST

START_TEST(test_kinds_agree)
{
	/* The same jobs through every available kind give identical bytes. */
	uint64_t s = 4242;
	uint8_t key[32], iv[16], *pt, *out[NKINDS];
	size_t len = 37 * 16, n = 23, i;
	int k;

	rnd_fill(&s, key, 32);
	rnd_fill(&s, iv, 16);
	pt = xmalloc(n * len);
	rnd_fill(&s, pt, n * len);
	for (k = 0; k < NKINDS; k++) {
		ps_aes_engine e;
		ps_aes_job jobs[23];

		out[k] = xmalloc(n * len);
		memset(out[k], 0, n * len);   /* the shortened jobs leave tails */
		engine_for(&e, key, k);
		for (i = 0; i < n; i++) {
			jobs[i].in = pt + i * len;
			jobs[i].out = out[k] + i * len;
			jobs[i].len = len - (i % 5) * 16;
			memcpy(jobs[i].iv, iv, 16);
			jobs[i].iv[0] ^= (uint8_t)i;
		}
		ps_aes_cbc_encrypt_batch(&e, jobs, n);
		ps_aes_engine_free(&e);
		if (k > 0)
			ck_assert_mem_eq(out[k], out[0], n * len);
	}
	for (k = 0; k < NKINDS; k++)
		free(out[k]);
	free(pt);
}
END_TEST

/* ---- the password hash's AES-128 chain (Algorithm 2.B step c) ----------- */

START_TEST(test_aes128_chain)
{
	/* NIST SP 800-38A F.2.1 (CBC-AES128.Encrypt), then random keys, IVs
	 * and lengths against mbedTLS called directly, with and without
	 * AES-NI; W is wiped after every call. */
	uint8_t key[16], iv[16], pt[64], ct[64], buf[15296], ref[15296], ivc[16];
	ps_aes128_work w, zero;
	mbedtls_aes_context m;
	uint64_t st = 0xae5128;
	int ni = (ps_cpu_probe() & PS_CPU_AESNI) != 0, mode, t;
	size_t n;

	memset(&zero, 0, sizeof zero);
	memset(&w, 0, sizeof w);
	unhex("6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
	      "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710", pt, 64);
	unhex("7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2"
	      "73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7", ct, 64);
	for (mode = 0; mode < 2; mode++) {
		int use = mode ? ni : 0;

		unhex("2b7e151628aed2a6abf7158809cf4f3c", key, 16);
		unhex("000102030405060708090a0b0c0d0e0f", iv, 16);
		memcpy(buf, pt, 64);
		ck_assert_int_eq(ps_aes128_cbc_encrypt(&w, use, key, iv, buf, 64), 0);
		ck_assert_mem_eq(buf, ct, 64);
		ck_assert_mem_eq(w.rk, zero.rk, sizeof w.rk);
		for (t = 0; t < 40; t++) {
			n = 16 * (size_t)(rnd_next(&st) % (sizeof buf / 16 + 1));
			rnd_fill(&st, key, 16);
			rnd_fill(&st, iv, 16);
			rnd_fill(&st, buf, n);
			memcpy(ref, buf, n);
			memcpy(ivc, iv, 16);
			mbedtls_aes_init(&m);
			ck_assert_int_eq(mbedtls_aes_setkey_enc(&m, key, 128), 0);
			ck_assert_int_eq(mbedtls_aes_crypt_cbc(&m, MBEDTLS_AES_ENCRYPT, n, ivc, ref, ref), 0);
			mbedtls_aes_free(&m);
			ck_assert_int_eq(ps_aes128_cbc_encrypt(&w, use, key, iv, buf, n), 0);
			ck_assert_msg(memcmp(buf, ref, n) == 0, "mode %d, %zu bytes", mode, n);
			ck_assert_msg(memcmp(&w, &zero, sizeof w) == 0, "schedule left in W");
		}
	}
	ck_assert_int_eq(ni, ps_aes_engine_supported(PS_AES_AESNI8, hw()));
}
END_TEST

/* ---- selection, names, wiping -------------------------------------------- */

START_TEST(test_env_override)
{
	uint8_t key[32] = {0};
	ps_aes_engine e;
	int best;

	ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);
	best = ps_aes_engine_best(hw());
	ck_assert(ps_aes_engine_supported(best, hw()));
	/* Auto picks the widest kernel the CPU has. */
	if (ps_aes_engine_supported(PS_AES_VAES16, hw()))
		ck_assert_int_eq(best, PS_AES_VAES16);
	else if (ps_aes_engine_supported(PS_AES_AESNI8, hw()))
		ck_assert_int_eq(best, PS_AES_AESNI8);
	else
		ck_assert_int_eq(best, PS_AES_MBEDTLS);

	ck_assert_int_eq(setenv("PDFSTAMP_AES", "mbedtls", 1), 0);
	ck_assert_int_eq(ps_aes_engine_best(hw()), PS_AES_MBEDTLS);
	ck_assert_int_eq(ps_aes_engine_init(&e, key, -1, hw()), 0);
	ck_assert_int_eq(e.kind, PS_AES_MBEDTLS);
	ps_aes_engine_free(&e);
	/* An explicit preference beats the environment. */
	ck_assert_int_eq(ps_aes_engine_init(&e, key, best, hw()), 0);
	ck_assert_int_eq(e.kind, best);
	ps_aes_engine_free(&e);

	ck_assert_int_eq(setenv("PDFSTAMP_AES", "aesni", 1), 0);
	ck_assert_int_eq(ps_aes_engine_best(hw()),
			 ps_aes_engine_supported(PS_AES_AESNI8, hw()) ? PS_AES_AESNI8 : best);
	ck_assert_int_eq(setenv("PDFSTAMP_AES", "vaes", 1), 0);
	ck_assert_int_eq(ps_aes_engine_best(hw()),
			 ps_aes_engine_supported(PS_AES_VAES16, hw()) ? PS_AES_VAES16 : best);
	ck_assert_int_eq(setenv("PDFSTAMP_AES", "no-such-engine", 1), 0);
	ck_assert_int_eq(ps_aes_engine_best(hw()), best);
	ck_assert_int_eq(setenv("PDFSTAMP_AES", "", 1), 0);
	ck_assert_int_eq(ps_aes_engine_best(hw()), best);
	/* Out-of-range preferences fall back to the automatic choice. */
	ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);
	ck_assert_int_eq(ps_aes_engine_init(&e, key, 99, hw()), 0);
	ck_assert_int_eq(e.kind, best);
	ps_aes_engine_free(&e);
	ck_assert_int_eq(ps_aes_engine_init(NULL, key, -1, hw()), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_aes_engine_init(&e, NULL, -1, hw()), PDFSTAMP_E_USAGE);
	ps_aes_engine_free(&e);
}
END_TEST

/* The one reader of PDFSTAMP_AES (the engine and kdf.c ask it). */
START_TEST(test_env_kind)
{
	static const struct { const char *v; int kind; } t[] = {
		{"mbedtls", PS_AES_MBEDTLS}, {"aesni", PS_AES_AESNI8}, {"aesni-8", PS_AES_AESNI8},
		{"vaes", PS_AES_VAES16}, {"vaes-16", PS_AES_VAES16}, {"auto", -1}, {"", -1},
		{"MBEDTLS", -1}, {"mbedtls ", -1}, {"aes", -1},
	};
	size_t i;

	ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);
	ck_assert_int_eq(ps_aes_env_kind(), -1);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		ck_assert_int_eq(setenv("PDFSTAMP_AES", t[i].v, 1), 0);
		ck_assert_msg(ps_aes_env_kind() == t[i].kind, "PDFSTAMP_AES='%s'", t[i].v);
	}
	ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);
}
END_TEST

/* The engine decides from the bits it is given, never from a probe of its
 * own: without PS_CPU_AESNI nothing but mbedTLS, whatever is asked; without
 * PS_CPU_VAES at most AES-NI (the library passes the context's one probe,
 * ps_cpu_bits). */
START_TEST(test_given_bits)
{
	uint8_t key[32] = {0};
	ps_aes_engine e;
	unsigned real = hw();
	int k;

	ck_assert_int_eq(unsetenv("PDFSTAMP_AES"), 0);
	ck_assert_int_eq(ps_aes_engine_best(0), PS_AES_MBEDTLS);
	for (k = -1; k <= PS_AES_VAES16; k++) {
		ck_assert_int_eq(ps_aes_engine_supported(k, 0), k == PS_AES_MBEDTLS);
		ck_assert_int_eq(ps_aes_engine_init(&e, key, k, 0), 0);
		ck_assert_int_eq(e.kind, PS_AES_MBEDTLS);
		ps_aes_engine_free(&e);
	}
	ck_assert(!ps_aes_engine_supported(PS_AES_VAES16, real & ~(unsigned)PS_CPU_VAES));
	ck_assert_int_ne(ps_aes_engine_best(real & ~(unsigned)PS_CPU_VAES), PS_AES_VAES16);
	if (real & PS_CPU_AESNI) {
		ck_assert_int_eq(ps_aes_engine_init(&e, key, PS_AES_VAES16, real & ~(unsigned)PS_CPU_VAES), 0);
		ck_assert_int_eq(e.kind, PS_AES_AESNI8);
		ps_aes_engine_free(&e);
	}
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(ps_aes_engine_name(PS_AES_MBEDTLS), "mbedtls");
	ck_assert_str_eq(ps_aes_engine_name(PS_AES_AESNI8), "aesni-8");
	ck_assert_str_eq(ps_aes_engine_name(PS_AES_VAES16), "vaes-16");
	ck_assert_str_eq(ps_aes_engine_name(-1), "unknown");
	ck_assert(ps_aes_engine_supported(PS_AES_MBEDTLS, hw()));
	ck_assert(!ps_aes_engine_supported(-1, hw()));
	ck_assert(!ps_aes_engine_supported(3, hw()));
}
END_TEST

START_TEST(test_free_wipes)
{
	uint8_t key[32];
	ps_aes_engine e, zero;
	size_t i;

	memset(key, 0xa7, sizeof key);
	ck_assert_int_eq(ps_aes_engine_init(&e, key, _i, hw()), 0);
	ps_aes_engine_free(&e);
	for (i = 0; i < sizeof e; i++)
		ck_assert_msg(((const uint8_t *)&e)[i] == 0, "byte %zu not wiped", i);
	/* free accepts NULL and a zeroed, never-initialised engine. */
	ps_aes_engine_free(NULL);
	memset(&zero, 0, sizeof zero);
	ps_aes_engine_free(&zero);
}
END_TEST

static Suite *aesmb_suite(void)
{
	Suite *s = suite_create("aesmb");
	TCase *tc;

	tc = tcase_create("kat");
	tcase_add_loop_test(tc, test_fips197_c3, 0, NKINDS);
	tcase_add_loop_test(tc, test_key_schedule, 0, NKINDS);
	tcase_add_loop_test(tc, test_sp800_38a, 0, NKINDS);
	tcase_add_loop_test(tc, test_ecb_random, 0, NKINDS);
	suite_add_tcase(s, tc);

	tc = tcase_create("batch");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_each_length_alone, 0, NKINDS);
	tcase_add_loop_test(tc, test_all_lengths_one_batch, 0, NKINDS);
	tcase_add_loop_test(tc, test_batch_sizes, 0, NKINDS);
	tcase_add_loop_test(tc, test_large, 0, NKINDS);
	tcase_add_loop_test(tc, test_crowded_lanes, 0, NKINDS);
	tcase_add_loop_test(tc, test_refill_huge_and_tiny, 0, NKINDS);
	tcase_add_loop_test(tc, test_refill_many_large, 0, NKINDS);
	tcase_add_loop_test(tc, test_decrypt_vs_mbedtls, 0, NKINDS);
	tcase_add_loop_test(tc, test_partial_block_ignored, 0, NKINDS);
	tcase_add_test(tc, test_kinds_agree);
	tcase_add_test(tc, test_aes128_chain);
	suite_add_tcase(s, tc);

	tc = tcase_create("select");
	tcase_add_test(tc, test_env_override);
	tcase_add_test(tc, test_env_kind);
	tcase_add_test(tc, test_given_bits);
	tcase_add_test(tc, test_names);
	tcase_add_loop_test(tc, test_free_wipes, 0, NKINDS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(aesmb_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
