/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdf-bench.c - times ISO 32000-2 Algorithm 2.B (the R6 password hash) as
 * opening a file runs it: once with the user password (no U) and once with
 * the owner password (48-byte U).  Medians over 16 salts x 5 runs; the
 * spread comes mostly from the data-dependent round count.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps.h"

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

int main(int argc, char **argv)
{
	ps_ctx *ctx;
	uint8_t salt[8], u48[48], out[32];
	double user[80], owner[80];
	int i, n = 0, json = argc > 1 && strcmp(argv[1], "--json") == 0;
	const char *pw = "correct horse battery";

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
