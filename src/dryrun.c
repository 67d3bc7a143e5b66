/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dryrun.c - the output side of a dry run (PDFSTAMP_WRITE_DRY_RUN in the
 * write options of stamp, meta and dss, and in the rewrite options of
 * rotate and encrypt).
 *
 * DESIGN NOTES
 *
 * What a dry run is: the call does everything up to the first byte of
 * output and stops there.  The document is authenticated by the caller;
 * the call runs every pre-flight of the real one (permissions, the
 * signature policy, DocMDP, trailing bytes, /Identity filters, a salvaged
 * document, options), builds what it would write, fills its result, and
 * returns 0.  It never creates, opens for writing, locks, truncates,
 * renames or syncs a file: no output, no temporary file, no journal, no
 * flock, no fsync.
 *
 *  1. Incremental updates (incr.c).  ps_update_commit serialises the new
 *     section in memory as the real commit does: every new object
 *     encrypted under the file's handler with fresh IVs, the cross-reference
 *     section sized from the real offsets, the trailer with a fresh ID[1].
 *     The result's base_length, xref_offset, bytes_appended and objects are
 *     those of that section, so bytes_appended is exactly what a real run
 *     with the same options appends: lengths do not depend on the random
 *     bytes (IVs, ID, keys are of fixed length, strings in hex), and only
 *     a different clock ("now" at another second draws other digits,
 *     which with an embedded font may subset other glyphs) can change
 *     them; give the date to compare.  The self-check that re-reads the
 *     written file (incr.c note 5) cannot run.
 *  2. Full rewrites (rewrite.c).  The rewrite runs its whole pass (read,
 *     decrypt, re-encrypt, serialise) into a writer without a file
 *     (io.c ps_wstream with fd -1 counts and discards), so its statistics
 *     are those of the real run and bytes_written is the size the new file
 *     would have, exactly (the new key, IVs and /ID change no length).
 *     What it cannot do is the self-check of the written file (rwcheck.c),
 *     which on a damaged input can still refuse (PDFSTAMP_E_FORMAT).  So
 *     the dry run costs the rewrite's CPU, not its disk writes or syncs.
 *  3. The document.  A dry run accepts a document opened read-only, also
 *     for PDFSTAMP_WRITE_IN_PLACE: a writing open (PDFSTAMP_OPEN_WRITE)
 *     takes the writers' lock and recovers a journal, which a dry run must
 *     not do; a read-only open only warns that a journal exists (doc.c),
 *     which is the report.  A real in-place run recovers it first; a
 *     journal that recovery refuses then fails that run.
 *  4. The output's pre-flights (this file): what the real run would find
 *     when it opens its output, judged with lstat, realpath and access
 *     (effective IDs, faccessat AT_EACCESS): -o OUT (not a directory or a
 *     special file; its directory takes a new file), -o - (the descriptor
 *     open and not the input; $TMPDIR, else ".", takes the temporary
 *     file), in place (the file writable and its directory writable, for
 *     the journal; a rewrite also refuses a file with several hard links).
 *     The messages are those of the real failures.  Not judged: the
 *     writers' lock held by another process (taking it to see would lock),
 *     a full disk, quotas, and anything that changes between the dry run
 *     and the real one.
 *  5. Not with PDFSTAMP_WRITE_DEFER (nothing would be left pending):
 *     PDFSTAMP_E_USAGE.  The durable hook is never called: nothing becomes
 *     durable.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "io.h"
#include "journal.h"
#include "dryrun.h"

/* Can this process make a file in DIR?  0 or errno. */
static int dir_takes_file(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0 ? errno : 0;
}

/* The directory part of PATH, malloc'ed (NULL: out of memory). */
static char *dir_of(const char *path)
{
	char *copy = strdup(path), *dir;

	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

int ps_dryrun_new_file(ps_ctx *ctx, const char *target)
{
	struct stat st;
	char *dir;
	int e;

	/* as ps_outfile_open (io.c) */
	if (lstat(target, &st) == 0 && S_ISDIR(st.st_mode))
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot write the output %s: %s", target,
		              strerror(EISDIR));
	if (lstat(target, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return ps_err(ctx, PDFSTAMP_E_IO,
		              "cannot write the output %s: not a regular file (%s; -o - writes "
		              "standard output)", target, ps_io_file_kind(st.st_mode));
	if (!(dir = dir_of(target)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	e = dir_takes_file(dir);
	if (e)
		ps_err(ctx, PDFSTAMP_E_IO,
		       "cannot create a temporary file for the output %s in %s: %s", target, dir,
		       strerror(e));
	free(dir);
	return e ? PDFSTAMP_E_IO : 0;
}

int ps_dryrun_to_fd(ps_ctx *ctx, int out_fd, int in_fd)
{
	const char *tmp = getenv("TMPDIR");
	int rc, e;

	if ((rc = ps_io_check_out_fd(ctx, out_fd, in_fd)) < 0)
		return rc;
	if (!tmp || !*tmp)
		tmp = ".";
	if ((e = dir_takes_file(tmp)) != 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot create a temporary file in %s: %s", tmp,
		              strerror(e));
	return 0;
}

int ps_dryrun_append(ps_ctx *ctx, const char *path)
{
	ps_journal j;
	int rc = 0, e;

	/* the writing open (doc.c) opens the file O_RDWR */
	if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot open: %s", strerror(errno));
	/* the journal goes next to the file itself (journal.c) */
	if ((rc = ps_journal_begin(ctx, &j, path)) < 0)
		return rc;
	if ((e = dir_takes_file(j.dir)) != 0)
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot create the journal in %s: %s", j.dir,
		            strerror(e));
	ps_journal_end(&j);
	return rc;
}

int ps_dryrun_replace(ps_ctx *ctx, const char *path, int fd)
{
	struct stat st;
	char *real, *dir;
	int e;

	/* the checks of ps_outfile_open_inplace */
	if ((e = ps_io_inplace_target(ctx, path, fd, &real, &st)) < 0)
		return e;
	dir = dir_of(real);
	free(real);
	if (!dir)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	e = dir_takes_file(dir);
	if (e)
		ps_err(ctx, PDFSTAMP_E_IO,
		       "cannot create a temporary file for the output in %s: %s", dir,
		       strerror(e));
	free(dir);
	return e ? PDFSTAMP_E_IO : 0;
}
