/* SPDX-License-Identifier: Apache-2.0 */
/* dryrun.h - internal: the output pre-flights of a dry run (PDFSTAMP_WRITE_DRY_RUN;
 * conventions: ps.h; the design notes are atop dryrun.c). */
#ifndef PS_DRYRUN_H
#define PS_DRYRUN_H

#include "ps.h"

/* ---- dryrun.c: what the output of a write would meet ------------------------- */

/* Each returns 0, or the error (code and message) the write itself would
 * fail with there; none creates, opens for writing, locks or syncs
 * anything. */

/* -o TARGET: what ps_outfile_open refuses (a directory, a file that is not
 * regular) and a directory where no temporary file can be made. */
int ps_dryrun_new_file(ps_ctx *ctx, const char *target);
/* PDFSTAMP_WRITE_TO_FD: the descriptor (ps_io_check_out_fd against IN_FD)
 * and the directory of the nameless temporary file ($TMPDIR, else "."). */
int ps_dryrun_to_fd(ps_ctx *ctx, int out_fd, int in_fd);
/* An in-place append to PATH (incr.c): the file opened for writing, its
 * journal made next to it. */
int ps_dryrun_append(ps_ctx *ctx, const char *path);
/* An in-place replacement of PATH, open as FD (rewrite.c): what
 * ps_outfile_open_inplace refuses, and the target's directory. */
int ps_dryrun_replace(ps_ctx *ctx, const char *path, int fd);

#endif
