/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdf-bench.c - times ISO 32000-2 Algorithm 2.B (the R6 password hash) as
 * opening a file runs it: once with the user password (no U) and once with
 * the owner password (48-byte U).  Medians over 16 salts x 5 runs; the
 * spread comes mostly from the data-dependent round count.
 *
 * With --hash, the speed of the hashes a round runs instead (sha2.c
 * note 1), on 7,744 bytes: 64 copies of password || K || U with a
 * 25-byte password and a 48-byte K, one of an owner hash's rounds (the
 * 21-byte password above gives 6,464, 7,488 and 8,512 bytes).  sha2.c's
 * kernels (this CPU's bits) and mbedTLS, in MB/s: medians of 21 runs of
 * 200 hashes, kernel and mbedTLS alternating.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps.h"
#include "cpu.h"
#include "sha2.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define HASH_LEN 7744
#define HASH_RUNS 21
#define HASH_REPS 200

/* MB/s of one run of HASH_REPS hashes of IN: SHA-256 when BITS is 256,
 * else SHA-512; with the kernels when CPU has their bits. */
static double hash_run(int bits, unsigned cpu, const uint8_t *in)
{
	uint8_t out[64];
	double t0 = now();
	int i;

	for (i = 0; i < HASH_REPS; i++) {
		if (bits == 256)
			ps_sha256_hw((cpu & PS_CPU_SHA) != 0, in, HASH_LEN, out);
		else
			ps_sha512_hw(cpu, in, HASH_LEN, out, 0);
	}
	return (double)HASH_LEN * HASH_REPS / (now() - t0) / 1e6;
}

static int hash_bench(int json)
{
	static uint8_t in[HASH_LEN];
	double r[4][HASH_RUNS];
	unsigned cpu = ps_cpu_probe();
	int i, k;

	for (i = 0; i < HASH_LEN; i++)
		in[i] = (uint8_t)(i * 167 + 13);
	for (i = 0; i < HASH_RUNS; i++)
		for (k = 0; k < 4; k++)
			r[k][i] = hash_run(k < 2 ? 256 : 512, k % 2 ? 0 : cpu, in);
	for (k = 0; k < 4; k++)
		qsort(r[k], HASH_RUNS, sizeof r[k][0], cmp);
	if (json)
		printf("{\"bytes\":%d,\"sha256_mbps\":%.0f,\"sha256_mbedtls_mbps\":%.0f,"
		       "\"sha512_mbps\":%.0f,\"sha512_mbedtls_mbps\":%.0f,\"runs\":%d}\n", HASH_LEN,
		       r[0][HASH_RUNS / 2], r[1][HASH_RUNS / 2], r[2][HASH_RUNS / 2],
		       r[3][HASH_RUNS / 2], HASH_RUNS);
	else
		printf("On %d bytes: SHA-256 %.0f MB/s (mbedTLS %.0f), SHA-512 %.0f MB/s "
		       "(mbedTLS %.0f), medians of %d runs\n", HASH_LEN, r[0][HASH_RUNS / 2],
		       r[1][HASH_RUNS / 2], r[2][HASH_RUNS / 2], r[3][HASH_RUNS / 2], HASH_RUNS);
	return 0;
}

int main(int argc, char **argv)
{
	ps_ctx *ctx;
	uint8_t salt[8], u48[48], out[32];
	double user[80], owner[80];
	int i, n = 0, json = 0, hash = 0;
	const char *pw = "correct horse battery";

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--hash") == 0)
			hash = 1;
	}
	if (hash)
		return hash_bench(json);

	if (pdfstamp_ctx_new(&ctx) < 0)
		return 1;
	for (i = 0; i < 80; i++) {
		double t0;
		if (ps_random(ctx, salt, sizeof salt) < 0 || ps_random(ctx, u48, sizeof u48) < 0)
			return 1;
		t0 = now();
		ps_kdf_hash_r6(ctx, 6, (const uint8_t *)pw, strlen(pw), salt, NULL, out);
		user[n] = now() - t0;
		t0 = now();
		ps_kdf_hash_r6(ctx, 6, (const uint8_t *)pw, strlen(pw), salt, u48, out);
		owner[n] = now() - t0;
		n++;
	}
	qsort(user, (size_t)n, sizeof *user, cmp);
	qsort(owner, (size_t)n, sizeof *owner, cmp);
	if (json)
		printf("{\"user_ms\":%.3f,\"user_min_ms\":%.3f,\"user_max_ms\":%.3f,\"owner_ms\":%.3f,"
		       "\"owner_min_ms\":%.3f,\"owner_max_ms\":%.3f,\"samples\":%d}\n",
		       user[n / 2] * 1e3, user[0] * 1e3, user[n - 1] * 1e3, owner[n / 2] * 1e3, owner[0] * 1e3,
		       owner[n - 1] * 1e3, n);
	else
		printf("Algorithm 2.B: user %.2f ms (%.2f-%.2f), owner %.2f ms (%.2f-%.2f), %d samples\n",
		       user[n / 2] * 1e3, user[0] * 1e3, user[n - 1] * 1e3, owner[n / 2] * 1e3, owner[0] * 1e3,
		       owner[n - 1] * 1e3, n);
	pdfstamp_ctx_free(ctx);
	return 0;
}
