/* SPDX-License-Identifier: Apache-2.0 */
/* journal.h - internal: the journal of in-place appends and its recovery
 * (conventions: ps.h; the design notes are atop journal.c). */
#ifndef PS_JOURNAL_H
#define PS_JOURNAL_H

#include <sys/stat.h>

#include "ps.h"

/* ---- journal.c: the journal of in-place appends -------------------------------- */

/* The journal's path and directory, computed before anything is written
 * so that nothing after the point of no return needs to allocate. */
typedef struct ps_journal {
	char *path, *dir;
	uint64_t ticket;        /* of its link in the context's group (io.c) */
} ps_journal;

/* Names the journal of FILE (next to the file itself, wherever symbolic
 * links lead).  Nothing is created.  0 or PDFSTAMP_E_NOMEM. */
int ps_journal_begin(ps_ctx *ctx, ps_journal *j, const char *file);
/* Writes the journal of appending SEC at L to FD, the file (stat ST) the
 * caller holds the writers' lock on: created unnamed, written, fsynced,
 * linked into place (1 fsync).  Fails if a journal exists.  Its name is
 * durable only after ps_journal_durable; on a failure of that, roll
 * back. */
int ps_journal_write(ps_ctx *ctx, ps_journal *j, int fd, const struct stat *st, int64_t l,
                     const ps_buf *sec);
/* Makes the journal's name durable: a directory fsync, shared by the
 * threads of a group (io.c, "Group commit"). */
int ps_journal_durable(ps_ctx *ctx, const ps_journal *j);
/* Removes the journal once the append is synced and checked (the file's
 * fsync made the update durable; the removal is not synced); allocates
 * nothing. */
int ps_journal_remove(ps_ctx *ctx, const ps_journal *j);
/* Undoes a failed append: truncates FD back to L and removes the journal.
 * Returns the failed step's code with its message (saved from the
 * context), or PDFSTAMP_E_IO saying that the rollback failed too, and the
 * journal is kept with mode 0400 (recovery refuses it). */
int ps_journal_rollback(ps_ctx *ctx, const ps_journal *j, int fd, int64_t l);
/* Frees the names (J may be NULL). */
void ps_journal_end(ps_journal *j);
/* pdfstamp_recover on FD, an open file of PATH on which the caller
 * already holds the exclusive flock (the lock is per open file description:
 * a second open+flock in this process would fail).  Same checks, results
 * and *recovered values as pdfstamp_recover. */
int ps_journal_recover(ps_ctx *ctx, int fd, const char *path, int *recovered);

#endif
