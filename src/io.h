/* SPDX-License-Identifier: Apache-2.0 */
/* io.h - internal: file I/O, durable writes, the fault points (conventions: ps.h). */
#ifndef PS_IO_H
#define PS_IO_H

#include "ps.h"

/* ---- io.c: durable writes ------------------------------------------------------ */

int ps_io_write_all(ps_ctx *ctx, int fd, const void *p, size_t n, int64_t off, const char *what);
/* ps_io_write_all of the N1 bytes at P1 followed by the N2 at P2, as one
 * gathered write (one fault point "write"): the journal's record and its
 * copy of the update. */
int ps_io_write_pair(ps_ctx *ctx, int fd, const void *p1, size_t n1, const void *p2, size_t n2,
                     int64_t off, const char *what);
int ps_io_sync_fd(ps_ctx *ctx, int fd, const char *what);

/* A new file written front to back from offset 0 (the full rewrite's
 * output): pieces are listed and written together, one pwritev per MB
 * (io.c note "Gathered writes"), and with WRITEBACK the writeback of every
 * 4 MB written is started at once (io.c writeback_start, from a thread of
 * its own, which also calls fdatasync every 32 MB of it: io.c; an error
 * of those fails the next call that posts a range, or the sync).  OFF
 * counts the bytes put so far (the offset of the next byte).  Errors are
 * ps_io_write_all's.  ps_wstream_free before FD is closed.  FD -1 (and
 * WRITEBACK 0): nothing is written, only counted (a dry run: dryrun.c). */
struct ps_wback;
struct iovec;
typedef struct ps_wstream {
	ps_ctx *ctx;
	int fd;
	int writeback;
	int64_t off;          /* bytes put */
	int64_t wb;           /* bytes whose writeback has been asked for */
	ps_buf buf;           /* copies of the pieces put (never moves while listed) */
	struct iovec *iov;    /* the pieces listed, not written yet */
	int niov;
	size_t pending;       /* their bytes */
	const char *what;     /* for messages: "the output" */
	struct ps_wback *bk;  /* the writeback thread, or NULL: started inline */
} ps_wstream;
void ps_wstream_init(ps_wstream *w, ps_ctx *ctx, int fd, int writeback, const char *what);
/* Puts a copy of P[0..N). */
int ps_wstream_put(ps_wstream *w, const void *p, size_t n);
/* Puts P[0..N) itself: the caller keeps it unchanged until the next
 * ps_wstream_drain or ps_wstream_flush. */
int ps_wstream_put_ref(ps_wstream *w, const void *p, size_t n);
/* Writes what is listed (borrowed pieces may then go). */
int ps_wstream_drain(ps_wstream *w);
/* Writes what is listed, and starts the writeback of all of it. */
int ps_wstream_flush(ps_wstream *w);
/* After the last flush: the file's fsync (ps_io_sync_fd) starts on the
 * writeback thread, so that it runs while the caller goes on (the
 * rewrite's self-check), and ps_wstream_sync_wait gives its result: 0, or
 * PDFSTAMP_E_IO with the message in the writer's context (also when one
 * of the thread's data syncs on the way failed: io.c).  Without a
 * thread the fsync runs in ps_wstream_sync_wait. */
void ps_wstream_sync_start(ps_wstream *w);
int ps_wstream_sync_wait(ps_wstream *w);
void ps_wstream_free(ps_wstream *w);
/* Copies the first LEN bytes of SRC to DST (both at offset 0):
 * copy_file_range, else pread/ps_io_write_all. */
int ps_io_copy_prefix(ps_ctx *ctx, int src, int dst, int64_t len);
/* A name was linked into DIR: its ticket in the context's group (io.c,
 * "Group commit"), 0 without a group.  Nothing fails. */
uint64_t ps_io_dir_linked(ps_ctx *ctx, const char *dir);
/* Makes the names linked into DIR up to TICKET durable: an fsync of the
 * directory that started after that link, shared with the group's other
 * contexts; TICKET 0: an fsync of its own. */
int ps_io_dir_durable(ps_ctx *ctx, const char *dir, uint64_t ticket);
/* ftruncate FD to LEN bytes and fsync it (the rollback of an append; no
 * fault point).  On failure: PDFSTAMP_E_IO, message "cannot truncate WHAT:
 * ...", and errno still says why. */
int ps_io_truncate_fd(ps_ctx *ctx, int fd, int64_t len, const char *what);
/* The one pread loop: reads N bytes of FD at OFF into P, retrying EINTR
 * and short reads; fewer (*GOT < N) only at end of file.  A read error is
 * PDFSTAMP_E_IO with the message "<FMT...>: <strerror>". */
int ps_io_pread_full(ps_ctx *ctx, int fd, void *p, size_t n, int64_t off, size_t *got,
                     const char *fmt, ...) PS_PRINTF(7, 8);
/* Reads the regular file PATH whole into *OUT (malloc'd, *LEN bytes; the
 * caller frees it), for inputs that are not PDFs (fonts, images).  WHAT
 * names it in messages ("the font").  It is opened non-blocking, so a FIFO
 * cannot hang the call: a file that cannot be opened or is not a regular
 * file is PDFSTAMP_E_USAGE, one larger than MAX bytes PDFSTAMP_E_UNSUPPORTED,
 * a read error PDFSTAMP_E_IO. */
int ps_io_read_file(ps_ctx *ctx, const char *path, size_t max, const char *what, uint8_t **out,
                    size_t *len);
/* "a FIFO", "a directory", ... for messages about a file of mode MODE. */
const char *ps_io_file_kind(mode_t mode);

/* A file that replaces TARGET atomically when committed (see io.c). */
typedef struct ps_outfile {
	int fd;
	int unnamed;        /* O_TMPFILE: not yet linked into the directory */
	int named;          /* tmpname exists in the directory and is ours to remove */
	int committed;
	int to_fd;          /* ps_outfile_open_fd: no target, copied out instead of committed */
	char *target, *dir, *tmpname;
	char fdpath[32];
	int keep_owner;     /* commit gives the file uid/gid (where permitted) */
	uid_t uid;
	gid_t gid;
} ps_outfile;

int ps_outfile_open(ps_ctx *ctx, ps_outfile *of, const char *target);
/* The replacement of the file open as FD under PATH (in-place rewrites):
 * the target is the file itself, where a symbolic link leads (the link
 * stays), with its owner and group where permitted; a file with several
 * hard links is refused (UNSUPPORTED), as a rename would split them. */
int ps_outfile_open_inplace(ps_ctx *ctx, ps_outfile *of, const char *path, int fd);
struct stat;
/* What ps_outfile_open_inplace checks of PATH, open as FD (also for a dry
 * run): no other hard link; *REAL (owned) the final target of its
 * symbolic links, the file FD reads; *ST its fstat. */
int ps_io_inplace_target(ps_ctx *ctx, const char *path, int fd, char **real, struct stat *st);
/* An output for PDFSTAMP_WRITE_TO_FD: a file in $TMPDIR (else ".") that
 * never has a name; ps_outfile_copy_out, not commit, finishes it. */
int ps_outfile_open_fd(ps_ctx *ctx, ps_outfile *of);
/* Copies the whole file to OUT_FD with write(2). */
int ps_outfile_copy_out(ps_ctx *ctx, ps_outfile *of, int out_fd);
/* Checks OUT_FD for PDFSTAMP_WRITE_TO_FD: open, and not the file IN_FD
 * (-1: no check).  0 or PDFSTAMP_E_USAGE. */
int ps_io_check_out_fd(ps_ctx *ctx, int out_fd, int in_fd);
/* A path under which the (uncommitted) file can be opened for reading. */
const char *ps_outfile_path(ps_outfile *of);
/* fsync (unless SYNCED: the caller's ps_wstream_sync_wait said 0), set
 * MODE, rename over the target, fsync the directory. */
int ps_outfile_commit(ps_ctx *ctx, ps_outfile *of, mode_t mode, int synced);
/* Closes; removes the temporary file unless committed.  Accepts a zeroed struct with fd -1. */
void ps_outfile_free(ps_outfile *of);

/* The fault points.  ps_fault(POINT) is called at each step named below
 * and returns 1 if the step must fail; ps_fault_corrupt(POINT) returns 1
 * if the caller must damage its data at POINT.  The installed library
 * links src/nofault.c, where both return 0 and read nothing; the test
 * programs link the same objects with tests/fault.c, the PDFSTAMP_FAULT
 * hook: "fail:POINT" makes the named step fail with an I/O error,
 * "kill:POINT" kills the process there (SIGKILL); "fail:POINT:N" and
 * "kill:POINT:N" act only the Nth time this process reaches POINT;
 * "trace" prints every point reached, with its count, to standard error.
 * POINT is write, fsync, datasync, rename (the I/O calls) or
 * before-rename, after-journal, after-write, after-fsync (phases).
 * "corrupt:POINT" makes ps_fault_corrupt return 1 there (POINT plaintext:
 * the first bit of the rewrite's stream plaintext of 16 bytes or more,
 * after it was summed, rwcheck.c note 8, to show that a check catches
 * it); it is not a step: never traced, never swept. */
int ps_fault(const char *point);
int ps_fault_corrupt(const char *point);

#endif
