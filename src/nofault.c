/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nofault.c - the installed library's fault points: they do nothing.
 *
 * DESIGN NOTES
 *
 *  1. The writers call ps_fault() at each write, fsync, data sync and
 *     rename and at the phases of an update, and the rewrite asks
 *     ps_fault_corrupt() once per stream (io.h).  The test hook that
 *     answers them (PDFSTAMP_FAULT) is tests/fault.c, linked only into the
 *     test programs together with the very objects this library is made
 *     of (src/libpscore.la; Makefile.am): a build compiles each library
 *     source once, and no release build carries the hook or reads the
 *     variable (.ci/run checks the Debian package for its name).
 *  2. The cost is one call to a function that returns 0 per write, sync
 *     and stream, where the writes and syncs themselves are system calls.
 */
#include "config.h"

#include "ps.h"

int ps_fault(const char *point)
{
	(void)point;
	return 0;
}

int ps_fault_corrupt(const char *point)
{
	(void)point;
	return 0;
}
