/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aes-bench.c - single-threaded AES-256-CBC throughput per object size:
 * mbedTLS (one mbedtls_aes_crypt_cbc call per object) against every engine
 * kind of src/aesmb.c (one ps_aes_cbc_encrypt_batch call for all objects),
 * plus pipelined CBC decryption per object.
 *
 * usage: aes-bench [-c] [RUNS]     (RUNS >= 5, default 7)
 *   -c  tabulate throughput by the thread's CPU time instead of wall time
 *       (for a shared, busy machine; the JSON line always has both)
 *
 * DESIGN NOTES
 *  1. Workloads: N objects of one size laid out in one arena, for 208 B
 *     (a 200 B object after PKCS#7 padding), 4 KB, 136 KB and 16 MB.  Each
 *     timed run encrypts every object, repeated so a run moves >= 64 MB.
 *     Throughput is payload bytes / time, in GB/s (10^9 B/s); wall time
 *     (CLOCK_MONOTONIC) and thread CPU time are both taken, and the share
 *     CPU/wall is printed so a contended run is visible.
 *  2. Placement: objects of 4 KB and up start 336 B apart modulo 4 KiB so
 *     that lanes never alias (lanes whose addresses are equal modulo 4 KiB
 *     halve the 16-lane throughput on these CPUs); one extra row
 *     shows the 4K-aligned layout to make the trap visible.
 *  3. Arenas are touched before timing (fresh guest memory is slow), and
 *     each engine kind is checked against mbedTLS on a few objects first.
 *  4. Output: a Markdown table (median [min-max] of RUNS runs) and one JSON
 *     line with every number.
 *  5. The "scan mix" row is one batch of unequal objects, the scanned
 *     archive's shape: every 205th object is a 1 MB image, the others 208 B
 *     (16 images, 3,264 small objects).  It measures the engine's lane
 *     refill (aesmb.c note 3): encrypted in file order one lane at a time
 *     it would run near the single-chain speed.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/aes.h>

#include "ps.h"
#include "aesmb.h"
#include "cpu.h"

#define MAXRUNS 101
#define NCOLS 4   /* mbedtls, then the three engine kinds */

struct work {
	const char *label;
	size_t size;      /* bytes per object (a multiple of 16) */
	size_t n;         /* objects */
	size_t gap;       /* bytes between objects */
	int enc_only;     /* the aliasing row: encrypt only */
	size_t every;     /* if not 0: every EVERY-th object (from 0) is BIG bytes (note 5) */
	size_t big;
};

static const struct work works[] = {
	{ "208 B", 208, 4096, 0, 0, 0, 0 },
	{ "4 KB", 4096, 64, 336, 0, 0, 0 },
	{ "136 KB", 136 * 1024, 64, 336, 0, 0, 0 },
	{ "16 MB", 16u << 20, 16, 336, 0, 0, 0 },
	{ "4 KB, 4K-aligned (trap)", 4096, 64, 0, 1, 0, 0 },
	{ "scan mix: 16 x 1 MB + 3264 x 208 B", 208, 3280, 0, 0, 205, 1u << 20 },
};
#define NWORKS (sizeof works / sizeof works[0])

/* Bytes of object I of W (note 5). */
static size_t obj_size(const struct work *w, size_t i)
{
	return w->every && i % w->every == 0 ? w->big : w->size;
}

static size_t work_bytes(const struct work *w)
{
	size_t i, t = 0;

	for (i = 0; i < w->n; i++)
		t += obj_size(w, i);
	return t;
}

struct stat3 {
	double med, min, max;
	int valid;
};

struct result {
	struct stat3 wall, cpu;
	double wall_s, cpu_s;   /* total seconds of the timed runs */
};

static double now(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct stat3 summarize(double *v, int n)
{
	struct stat3 s;

	qsort(v, (size_t)n, sizeof *v, cmp_double);
	s.min = v[0];
	s.max = v[n - 1];
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.valid = 1;
	return s;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct layout {
	uint8_t *in, *out;
	size_t *off;      /* object i starts at in + off[i] (and out + off[i]) */
	ps_aes_job *jobs;
	uint8_t (*iv)[16];
};

static int layout_make(const struct work *w, struct layout *L, uint64_t *seed)
{
	size_t i, pos = 0, total;

	L->off = calloc(w->n, sizeof *L->off);
	L->jobs = calloc(w->n, sizeof *L->jobs);
	L->iv = calloc(w->n, 16);
	if (!L->off || !L->jobs || !L->iv)
		return -1;
	for (i = 0; i < w->n; i++) {
		L->off[i] = pos;
		pos += obj_size(w, i) + w->gap;
	}
	total = pos + 64;
	/* 4 KiB aligned arenas: the gap alone decides the lanes' 4K offsets. */
	if (posix_memalign((void **)&L->in, 4096, total) || posix_memalign((void **)&L->out, 4096, total))
		return -1;
	for (i = 0; i < total; i += 8) {
		uint64_t v = rnd(seed);

		memcpy(L->in + i, &v, total - i < 8 ? total - i : 8);
	}
	memset(L->out, 0, total);
	for (i = 0; i < w->n; i++)
		memcpy(L->iv[i], L->in + L->off[i], 16);
	return 0;
}

static void layout_free(struct layout *L)
{
	free(L->in);
	free(L->out);
	free(L->off);
	free(L->jobs);
	free(L->iv);
}

static void set_jobs(const struct work *w, struct layout *L)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		L->jobs[i].in = L->in + L->off[i];
		L->jobs[i].out = L->out + L->off[i];
		L->jobs[i].len = obj_size(w, i);
		memcpy(L->jobs[i].iv, L->iv[i], 16);
	}
}

/* One pass over all objects.  COL 0 = mbedTLS, else engine kind COL-1. */
static void pass_enc(const struct work *w, struct layout *L, int col, mbedtls_aes_context *mb,
		     const ps_aes_engine *e)
{
	size_t i;

	set_jobs(w, L);
	if (col == 0) {
		for (i = 0; i < w->n; i++)
			mbedtls_aes_crypt_cbc(mb, MBEDTLS_AES_ENCRYPT, obj_size(w, i), L->jobs[i].iv,
					      L->jobs[i].in, L->jobs[i].out);
	} else {
		ps_aes_cbc_encrypt_batch(e, L->jobs, w->n);
	}
}

static void pass_dec(const struct work *w, struct layout *L, int col, mbedtls_aes_context *mb,
		     const ps_aes_engine *e)
{
	uint8_t iv[16];
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (col == 0) {
			memcpy(iv, L->iv[i], 16);
			mbedtls_aes_crypt_cbc(mb, MBEDTLS_AES_DECRYPT, obj_size(w, i), iv, L->out + L->off[i],
					      L->in + L->off[i]);
		} else {
			ps_aes_cbc_decrypt(e, L->iv[i], L->out + L->off[i], L->in + L->off[i], obj_size(w, i));
		}
	}
}

/* Encrypts the first few objects with the engine and with mbedTLS. */
static int verify(const struct work *w, struct layout *L, mbedtls_aes_context *mb,
		  const ps_aes_engine *e)
{
	size_t n = w->n < 17 ? w->n : 17, i;
	size_t bytes = w->size < (1u << 20) ? w->size : (1u << 20);  /* object 0 of a mix is larger: cut */
	uint8_t *ref = malloc(bytes), iv[16];
	int bad = 0;

	if (!ref)
		return -1;
	for (i = 0; i < n; i++) {
		L->jobs[i].in = L->in + L->off[i];
		L->jobs[i].out = L->out + L->off[i];
		L->jobs[i].len = bytes;
		memcpy(L->jobs[i].iv, L->iv[i], 16);
	}
	ps_aes_cbc_encrypt_batch(e, L->jobs, n);
	for (i = 0; i < n && !bad; i++) {
		memcpy(iv, L->iv[i], 16);
		mbedtls_aes_crypt_cbc(mb, MBEDTLS_AES_ENCRYPT, bytes, iv, L->in + L->off[i], ref);
		bad = memcmp(ref, L->out + L->off[i], bytes) != 0 || memcmp(iv, L->jobs[i].iv, 16) != 0;
	}
	free(ref);
	return bad ? -1 : 0;
}

static struct result measure(const struct work *w, struct layout *L, int col, int dec, int runs,
			     mbedtls_aes_context *mbe, mbedtls_aes_context *mbd, const ps_aes_engine *e)
{
	double vw[MAXRUNS], vc[MAXRUNS];
	struct result res;
	size_t per = work_bytes(w), reps = (64u << 20) / per, k;
	int r;

	if (reps < 1)
		reps = 1;
	/* warm-up pass */
	if (dec)
		pass_dec(w, L, col, mbd, e);
	else
		pass_enc(w, L, col, mbe, e);
	res.wall_s = res.cpu_s = 0;
	for (r = 0; r < runs; r++) {
		double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID), dt, dc;

		for (k = 0; k < reps; k++) {
			if (dec)
				pass_dec(w, L, col, mbd, e);
			else
				pass_enc(w, L, col, mbe, e);
		}
		dt = now(CLOCK_MONOTONIC) - t0;
		dc = now(CLOCK_THREAD_CPUTIME_ID) - c0;
		vw[r] = (double)per * (double)reps / dt / 1e9;
		vc[r] = (double)per * (double)reps / dc / 1e9;
		res.wall_s += dt;
		res.cpu_s += dc;
	}
	res.wall = summarize(vw, runs);
	res.cpu = summarize(vc, runs);
	return res;
}

/* Column 0 calls mbedTLS directly; column 1 is the engine forced to its
 * mbedTLS fallback. */
static const char *col_name(int col)
{
	static const char *const names[NCOLS] = { "mbedtls", "engine:mbedtls", "aesni-8", "vaes-16" };

	return names[col];
}

static void cell(const struct stat3 *s)
{
	if (s->valid)
		printf(" %.2f [%.2f-%.2f] |", s->med, s->min, s->max);
	else
		printf(" n/a |");
}

int main(int argc, char **argv)
{
	static struct result res[2][NWORKS][NCOLS];
	mbedtls_aes_context mbe, mbd;
	ps_aes_engine eng[NCOLS];
	uint8_t key[32];
	uint64_t seed = 0x5eed;
	int runs = 7, col, dec, first = 1, use_cpu = 0, ai = 1;
	double wall_s = 0, cpu_s = 0;
	size_t wi;

	if (ai < argc && !strcmp(argv[ai], "-c")) {
		use_cpu = 1;
		ai++;
	}
	if (argc - ai > 1 || (ai < argc && argv[ai][0] == '-')) {
		fprintf(stderr, "usage: aes-bench [-c] [RUNS]\n");
		return 2;
	}
	if (ai < argc) {
		char *end;
		long v;

		errno = 0;
		v = strtol(argv[ai], &end, 10);
		if (errno || end == argv[ai] || *end || v < 5 || v > MAXRUNS) {
			fprintf(stderr, "aes-bench: RUNS must be 5..%d\n", MAXRUNS);
			return 2;
		}
		runs = (int)v;
	}
	for (wi = 0; wi < 32; wi++)
		key[wi] = (uint8_t)rnd(&seed);
	mbedtls_aes_init(&mbe);
	mbedtls_aes_init(&mbd);
	if (mbedtls_aes_setkey_enc(&mbe, key, 256) || mbedtls_aes_setkey_dec(&mbd, key, 256))
		return 1;
	memset(eng, 0, sizeof eng);
	for (col = 1; col < NCOLS; col++)
		if (ps_aes_engine_init(&eng[col], key, col - 1, ps_cpu_probe()) < 0)
			return 1;

	for (wi = 0; wi < NWORKS; wi++) {
		const struct work *w = &works[wi];
		struct layout L;

		memset(&L, 0, sizeof L);
		if (layout_make(w, &L, &seed) < 0) {
			fprintf(stderr, "aes-bench: out of memory\n");
			return 1;
		}
		for (col = 1; col < NCOLS; col++) {
			if (eng[col].kind != col - 1)
				continue;
			if (verify(w, &L, &mbe, &eng[col]) < 0) {
				fprintf(stderr, "aes-bench: %s output differs from mbedTLS\n", col_name(col));
				return 1;
			}
		}
		for (dec = 0; dec < 2; dec++) {
			if (dec && w->enc_only)
				continue;
			for (col = 0; col < NCOLS; col++) {
				/* a kind the CPU lacks is reported n/a, not a duplicate */
				if (col > 0 && eng[col].kind != col - 1)
					continue;
				res[dec][wi][col] = measure(w, &L, col, dec, runs, &mbe, &mbd, &eng[col]);
				wall_s += res[dec][wi][col].wall_s;
				cpu_s += res[dec][wi][col].cpu_s;
				fprintf(stderr, ".");
			}
		}
		layout_free(&L);
	}
	fprintf(stderr, "\n");

	printf("AES-256-CBC, one thread, GB/s (10^9 B/s) by %s time, median [min-max] of %d runs; "
	       "auto engine here: %s; CPU share of wall time %.0f%%%s\n\n", use_cpu ? "thread CPU" : "wall",
	       runs, ps_aes_engine_name(ps_aes_engine_best(ps_cpu_probe())), 100.0 * cpu_s / wall_s,
	       cpu_s < 0.9 * wall_s && !use_cpu ? " (contended: try -c)" : "");
	for (dec = 0; dec < 2; dec++) {
		printf("| %s | objects |", dec ? "decrypt (one object per call)" : "encrypt (all objects, one batch)");
		for (col = 0; col < NCOLS; col++)
			printf(" %s |", col_name(col));
		printf("\n|---|---|");
		for (col = 0; col < NCOLS; col++)
			printf("---|");
		printf("\n");
		for (wi = 0; wi < NWORKS; wi++) {
			if (dec && works[wi].enc_only)
				continue;
			printf("| %s | %zu |", works[wi].label, works[wi].n);
			for (col = 0; col < NCOLS; col++)
				cell(use_cpu ? &res[dec][wi][col].cpu : &res[dec][wi][col].wall);
			printf("\n");
		}
		printf("\n");
	}
	printf("{\"bench\":\"aes-256-cbc\",\"unit\":\"GB/s\",\"runs\":%d,\"auto\":\"%s\","
	       "\"cpu_share\":%.3f,\"results\":[", runs, ps_aes_engine_name(ps_aes_engine_best(ps_cpu_probe())),
	       cpu_s / wall_s);
	for (dec = 0; dec < 2; dec++)
		for (wi = 0; wi < NWORKS; wi++)
			for (col = 0; col < NCOLS; col++) {
				const struct stat3 *s = &res[dec][wi][col].wall, *c = &res[dec][wi][col].cpu;

				if (!s->valid)
					continue;
				printf("%s{\"op\":\"%s\",\"size\":%zu,\"objects\":%zu,\"aligned4k\":%s,"
				       "\"engine\":\"%s\",\"median\":%.3f,\"min\":%.3f,\"max\":%.3f,"
				       "\"cpu_median\":%.3f,\"cpu_min\":%.3f,\"cpu_max\":%.3f}",
				       first ? "" : ",", dec ? "decrypt" : "encrypt", works[wi].size,
				       works[wi].n, works[wi].gap == 0 && works[wi].size % 4096 == 0 ? "true" : "false",
				       col_name(col), s->med, s->min, s->max, c->med, c->min, c->max);
				first = 0;
			}
	printf("]}\n");
	for (col = 1; col < NCOLS; col++)
		ps_aes_engine_free(&eng[col]);
	mbedtls_aes_free(&mbe);
	mbedtls_aes_free(&mbd);
	return 0;
}
