/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fault.c - the PDFSTAMP_FAULT test hook: the library's fault points made
 * to fail, kill the process, or damage data on request (src/io.h).
 *
 * DESIGN NOTES
 *
 *  1. For test programs only.  Makefile.am links this file, after the
 *     library's objects (src/libpscore.la), into the unit suites, the fuzz
 *     targets, the benchmark tools and tests/pdfstamp-fault, the CLI that
 *     the end-to-end scripts run for their crash and fault cases
 *     ($PDFSTAMP_HOOKED, tests/e2e/lib.sh).  The installed library links
 *     src/nofault.c instead, so that no release build carries the hook;
 *     both define the same two functions, and the library's objects are
 *     the same in both.
 *  2. The variable is read at every point reached, so that a test may set
 *     it between two calls in one process (tests/check_*.c do).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

/* The points the library reaches (keep in step with the man page). */
static const char *const fault_points[] = {
	"write", "fsync", "datasync", "rename", "before-rename", "after-journal", "after-write", "after-fsync",
};
#define NFAULT_POINTS (sizeof fault_points / sizeof fault_points[0])

int ps_fault(const char *point)
{
	/* Process-wide on purpose (the one exception to "no globals"): the
	 * count is "the Nth write of this process", and the rewrite's worker
	 * threads have contexts of their own. */
	static atomic_ulong hits[NFAULT_POINTS];
	const char *f = getenv("PDFSTAMP_FAULT"), *p, *colon;
	unsigned long nth = 0, hit;
	size_t i, n;
	int kill;

	if (!f || !*f)
		return 0;
	for (i = 0; i < NFAULT_POINTS && strcmp(fault_points[i], point) != 0; i++)
		;
	if (i == NFAULT_POINTS)
		return 0;
	hit = atomic_fetch_add(&hits[i], 1) + 1;
	if (strcmp(f, "trace") == 0) {
		fprintf(stderr, "pdfstamp: fault point %s %lu\n", point, hit);
		return 0;
	}
	if (strncmp(f, "kill:", 5) == 0)
		kill = 1;
	else if (strncmp(f, "fail:", 5) == 0)
		kill = 0;
	else
		return 0;
	p = f + 5;
	colon = strchr(p, ':');
	n = colon ? (size_t)(colon - p) : strlen(p);
	if (n != strlen(point) || strncmp(p, point, n) != 0)
		return 0;
	if (colon) {
		char *end;
		errno = 0;
		nth = strtoul(colon + 1, &end, 10);
		if (errno || *end || end == colon + 1 || nth == 0)
			return 0; /* malformed: never fires */
		if (hit != nth)
			return 0;
	}
	if (kill)
		raise(SIGKILL);
	return 1;
}

int ps_fault_corrupt(const char *point)
{
	const char *f = getenv("PDFSTAMP_FAULT");

	return f && strncmp(f, "corrupt:", 8) == 0 && strcmp(f + 8, point) == 0;
}
