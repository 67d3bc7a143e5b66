/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_fuzzregress.c - replays kept fuzzer inputs in a normal build.
 *
 * Every libFuzzer target of fuzz/ is compiled in here under its own name
 * (each defines LLVMFuzzerTestOneInput; a macro renames it per include),
 * so the exact code path that found a crash runs again in every build,
 * with or without sanitizers.  Without arguments it replays:
 *   every file of fuzz/regress/<target>/ (the kept crashers), and
 *   the .pdf files of tests/malformed/ and samples/ through fuzz_xref,
 *   fuzz_incr and fuzz_audit, the images of tests/malformed/images/ through
 *   fuzz_image, and the fonts of tests/malformed/fonts/ through fuzz_font.
 * With arguments: check_fuzzregress TARGET FILE... (to reproduce by hand).
 * A crash, sanitizer report or fz_bug() abort kills the process, which the
 * test driver reports as a failure; otherwise it prints one "ok" line per
 * input and exits 0.
 */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLVMFuzzerTestOneInput fuzz_parse_one
#include "../fuzz/fuzz_parse.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_xref_one
#include "../fuzz/fuzz_xref.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_security_one
#include "../fuzz/fuzz_security.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_objstm_one
#include "../fuzz/fuzz_objstm.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_incr_one
#include "../fuzz/fuzz_incr.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_xmp_one
#include "../fuzz/fuzz_xmp.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_image_one
#include "../fuzz/fuzz_image.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_font_one
#include "../fuzz/fuzz_font.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_dss_one
#include "../fuzz/fuzz_dss.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_audit_one
#include "../fuzz/fuzz_audit.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_envelope_one
#include "../fuzz/fuzz_envelope.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_revoc_one
#include "../fuzz/fuzz_revoc.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_tsp_one
#include "../fuzz/fuzz_tsp.c"
#undef LLVMFuzzerTestOneInput

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif

typedef int (*one_fn)(const uint8_t *, size_t);

static const struct {
	const char *name;
	one_fn fn;
} targets[] = {
	{"fuzz_parse", fuzz_parse_one},
	{"fuzz_xref", fuzz_xref_one},
	{"fuzz_security", fuzz_security_one},
	{"fuzz_objstm", fuzz_objstm_one},
	{"fuzz_incr", fuzz_incr_one},
	{"fuzz_xmp", fuzz_xmp_one},
	{"fuzz_image", fuzz_image_one},
	{"fuzz_font", fuzz_font_one},
	{"fuzz_dss", fuzz_dss_one},
	{"fuzz_revoc", fuzz_revoc_one},
	{"fuzz_tsp", fuzz_tsp_one},
	{"fuzz_audit", fuzz_audit_one},
	{"fuzz_envelope", fuzz_envelope_one},
};

static long nrun;

static int replay_file(const char *target, one_fn fn, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t n = 0, cap = 0, r;

	if (!f) {
		printf("FAIL - %s: cannot open %s\n", target, path);
		return -1;
	}
	for (;;) {
		if (n == cap) {
			uint8_t *p = realloc(data, cap ? cap * 2 : 65536);
			if (!p) {
				fclose(f);
				free(data);
				printf("FAIL - out of memory reading %s\n", path);
				return -1;
			}
			data = p;
			cap = cap ? cap * 2 : 65536;
		}
		r = fread(data + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	fflush(stdout);
	fn(data, n);
	free(data);
	nrun++;
	printf("ok - %s %s\n", target, path);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file in DIR (sorted) whose name ends in SUFFIX. */
static int replay_dir(const char *target, one_fn fn, const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i, sl = strlen(suffix);
	int rc = 0;

	if (!d)
		return 0; /* nothing kept yet */
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || l < sl || strcmp(e->d_name + l - sl, suffix) != 0 ||
		    strcmp(e->d_name, "README") == 0)
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
			if (!p)
				break;
			names = p;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, name_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (replay_file(target, fn, path) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	char dir[4096];
	size_t t;
	int i, rc = 0;

	if (argc >= 2) {
		for (t = 0; t < sizeof targets / sizeof targets[0]; t++)
			if (strcmp(argv[1], targets[t].name) == 0)
				break;
		if (t == sizeof targets / sizeof targets[0] || argc < 3) {
			fprintf(stderr, "usage: %s TARGET FILE...   (TARGET:", argv[0]);
			for (t = 0; t < sizeof targets / sizeof targets[0]; t++)
				fprintf(stderr, " %s", targets[t].name);
			fprintf(stderr, ")\n");
			return 2;
		}
		for (i = 2; i < argc; i++)
			if (replay_file(targets[t].name, targets[t].fn, argv[i]) < 0)
				rc = 1;
		return rc;
	}
	for (t = 0; t < sizeof targets / sizeof targets[0]; t++) {
		snprintf(dir, sizeof dir, "%s/../fuzz/regress/%s", TEST_SRCDIR, targets[t].name);
		if (replay_dir(targets[t].name, targets[t].fn, dir, "") < 0)
			rc = 1;
	}
	snprintf(dir, sizeof dir, "%s/malformed", TEST_SRCDIR);
	if (replay_dir("fuzz_xref", fuzz_xref_one, dir, ".pdf") < 0 ||
	    replay_dir("fuzz_incr", fuzz_incr_one, dir, ".pdf") < 0 ||
	    replay_dir("fuzz_audit", fuzz_audit_one, dir, ".pdf") < 0)
		rc = 1;
	/* the hostile images (tests/e2e/fixtures/images.py hostile) */
	snprintf(dir, sizeof dir, "%s/malformed/images", TEST_SRCDIR);
	if (replay_dir("fuzz_image", fuzz_image_one, dir, "") < 0)
		rc = 1;
	/* the font corpus (tests/malformed/fonts/INDEX) */
	snprintf(dir, sizeof dir, "%s/malformed/fonts", TEST_SRCDIR);
	if (replay_dir("fuzz_font", fuzz_font_one, dir, ".ttf") < 0 ||
	    replay_dir("fuzz_font", fuzz_font_one, dir, ".otf") < 0 ||
	    replay_dir("fuzz_font", fuzz_font_one, dir, ".ttc") < 0)
		rc = 1;
	/* the envelopes of tests/kat/env/ (fuzz_envelope's seeds) */
	snprintf(dir, sizeof dir, "%s/kat/env", TEST_SRCDIR);
	if (replay_dir("fuzz_envelope", fuzz_envelope_one, dir, ".der") < 0)
		rc = 1;
	snprintf(dir, sizeof dir, "%s/../samples", TEST_SRCDIR);
	if (replay_dir("fuzz_xref", fuzz_xref_one, dir, ".pdf") < 0 ||
	    replay_dir("fuzz_incr", fuzz_incr_one, dir, ".pdf") < 0 ||
	    replay_dir("fuzz_audit", fuzz_audit_one, dir, ".pdf") < 0)
		rc = 1;
	printf("%ld passed, %d failed\n", nrun, rc ? 1 : 0);
	return rc;
}
