/* SPDX-License-Identifier: Apache-2.0 */
/*
 * io.c - file I/O: durable replacement of a file (the output of -o and of
 * rewrites), durable writes, truncation, the pread loop and the fault points.
 *
 * DESIGN NOTES
 *
 * A new file is first an *unnamed* file in the target's directory
 * (O_TMPFILE, mode 0600): if the process dies while writing it, nothing is
 * left behind, and the target is untouched.  Commit: fsync the data, give
 * the file a hidden temporary name (linkat), rename that over the target,
 * fsync the directory.  Only the instant between linkat and rename can
 * leave a ".pdfstamp-XXXXXX" file behind after a kill -9.  Where O_TMPFILE
 * is not supported, mkostemp (O_EXCL, 0600, close-on-exec) in the same directory is used,
 * and a kill leaves that temp file (but never a damaged target).
 *
 * In-place replacement (ps_outfile_open_inplace, rotate/encrypt -i): the
 * target is the realpath of the file, checked to be the inode that was
 * read, so a symbolic link keeps pointing at the (new) document; the new
 * file gets the old one's owner and group where fchown is permitted (else
 * a warning).  A file with st_nlink > 1 is refused: rename would leave the
 * other names on the old inode, with the old key.  Appending updates
 * (stamp/meta -i) write into the open file and need none of this.
 *
 * Output to a descriptor (PDFSTAMP_WRITE_TO_FD, `-o -`): the new file is
 * built the same way in $TMPDIR (else the current directory), but never
 * gets a name: O_TMPFILE, or mkostemp and unlink at once, so even a kill -9
 * leaves nothing behind.  It is checked through /proc/self/fd like any
 * uncommitted output, then copied to the descriptor (ps_outfile_copy_out)
 * instead of being committed.  Like every output, it holds what the
 * output holds: ciphertext, and plaintext only where the input had it.
 *
 * Early writeback (writeback_start, done by the buffered writer
 * ps_wstream every 4 MB): a writer of a large file (the full rewrite)
 * starts the writeback of each region it has written, so
 * that the disk writes overlap the rest of the work and the final fsync
 * finds little left to do.  On Linux this is sync_file_range(2) with
 * SYNC_FILE_RANGE_WRITE alone: it queues the dirty pages of the range for
 * writeback and returns without waiting for them; it syncs no metadata and
 * guarantees nothing, so it is never a durability point.  It does block
 * while the device's queue is full, which on a slow disk would tie the
 * writer to the disk's pace; so ps_wstream makes these calls from a thread
 * of its own (one per writer, asleep in the kernel or waiting for the next
 * range; inline if it cannot be started), and the writer only posts the
 * end of what it has written.  Durability stays with ps_io_sync_fd (fsync)
 * before the rename, exactly as without it; a writeback error is kept by
 * the kernel for the file (errseq) and reported by that fsync, or by a
 * data sync of the thread before it (next note), so the hint has no result
 * to check.  Elsewhere it does nothing.  The rewrite also
 * hands that fsync to the thread (ps_wstream_sync_start), to run while
 * its self-check reads the output, and takes its result
 * (ps_wstream_sync_wait) before it renames anything.
 *
 * Data syncs on the way (issue 16): written-back pages are not yet on
 * stable storage.  A virtual disk with a write cache (the CI machines')
 * takes them at memory speed and pays at the flush, about 0.6 ms per MB
 * still unflushed, so the final fsync of a 175 MB output took ~100 ms
 * after all its writeback had ended: the longest step of a rotate after
 * its self-check.  So the thread also calls fdatasync each time it has
 * started the writeback of another WS_DSYNC_CHUNK (32 MB) since its last
 * one; the final fsync then finds at most that much unflushed (~10 ms).
 * These syncs are not durability points either (the fsync before the
 * rename still is), but they can report an error: with errseq, a failure
 * that one sync reports is not reported again by the next on the same
 * file description, so the thread keeps the first one (derr) and the
 * writer fails on it at its next range posted (ws_kick: before writing
 * the rest, unless the thread lags behind), as does ps_wstream_sync_wait
 * even if the final fsync succeeds.  When the last range comes with the
 * fsync already asked for (a lagging thread), its data sync still runs
 * first: a flush of what the fsync would flush anyway, and it keeps the
 * rule simple (the suite counts one data sync per 32 MB).  The inline
 * fallback (no thread) makes no data syncs: they would stall the writer.
 *
 * Gathered writes (ps_wstream): the pieces of the output (an object's
 * header, its payload where it was encrypted, its trailer) are not copied
 * into a buffer but listed (iovecs) and written by one pwritev per MB or
 * per WS_IOV pieces; only pieces the caller does not keep (ps_wstream_put)
 * are copied, into one buffer of WS_BUF bytes that never moves while it is
 * listed (such a piece of WS_DIRECT bytes or more is written at once,
 * after what is listed).  A borrowed piece (ps_wstream_put_ref) must stay as it is until
 * the next ps_wstream_drain or ps_wstream_flush, which the rewrite calls
 * before it frees a batch.
 *
 * Messages name the path that failed: the output (or its directory),
 * not the input, which the caller names.
 *
 * States: OPEN (fd valid) --commit--> COMMITTED, --abort--> ABORTED.
 *
 * Every write, fsync, ftruncate and rename of a document or output goes
 * through this file (ps_io_write_all, ps_io_sync_fd, ps_io_dir_durable, ps_io_truncate_fd,
 * ps_outfile_commit; the journal, journal.c, writes and syncs with the same
 * calls), so the fault points of the test hook (ps_fault(), io.h) are here
 * too; the hook itself, tests/fault.c, is linked only into the test
 * programs (the installed library has src/nofault.c).  Fault points here:
 * "write" in ps_io_write_all and ps_io_write_pair (and ps_wstream's pwritev) and
 * ps_outfile_copy_out, "fsync" in ps_io_sync_fd,
 * "datasync" in the writeback thread's data syncs, "before-rename" and
 * "rename" in ps_outfile_commit; the writers add their phases
 * (after-journal, after-write, after-fsync); ps_io_truncate_fd has none (it
 * is the rollback after a failed step), nor has writeback_start (a
 * hint, not a step: the fsync that follows is the point).  Reads: ps_io_pread_full is
 * the library's one pread loop (EINTR retried, stops only at end of file).
 *
 * Group commit (pdfstamp_group, ps_io_dir_linked, ps_io_dir_durable): the
 * journal of an in-place update is linked into the file's directory, and
 * that name must be durable (a directory fsync) before the update is
 * written.  Contexts of one group (threads of one process) share these
 * syncs per directory: a caller that has linked its name takes a ticket
 * (linked + 1), and later asks for it to be durable; a sync started when
 * LINKED was T covers every ticket up to T.  If none is running the
 * caller runs one for everything linked so far; else it waits for the
 * running one and, if that one started before its ticket, for or with the
 * next.  So each name is synced by a sync that started after it was
 * linked (never less durable than alone), and names linked while a sync
 * runs share the next one; a writer that links the journals of several
 * files before asking (PDFSTAMP_WRITE_DEFER, incr.c) has them all synced
 * by one fsync.  A failed sync covers nothing: each
 * waiter then syncs for itself and reports its own failure.  The group's
 * lock is held only to take tickets and hand over, never during an fsync.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ps.h"

/* ---- reading ----------------------------------------------------------------- */

int ps_io_pread_full(ps_ctx *ctx, int fd, void *p, size_t n, int64_t off, size_t *got,
                     const char *fmt, ...)
{
	uint8_t *b = p;
	size_t done = 0;

	while (done < n) {
		ssize_t k = pread(fd, b + done, n - done, (off_t)(off + (int64_t)done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			char what[200];
			int e = errno;
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(what, sizeof what, fmt, ap);
			va_end(ap);
			*got = done;
			return ps_err(ctx, PDFSTAMP_E_IO, "%s: %s", what, strerror(e));
		}
		if (k == 0)
			break; /* end of file */
		done += (size_t)k;
	}
	*got = done;
	return 0;
}

const char *ps_io_file_kind(mode_t mode)
{
	return S_ISFIFO(mode) ? "a FIFO" : S_ISDIR(mode) ? "a directory" :
	       S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : S_ISREG(mode) ? "a regular file" :
	       "a socket or other special file";
}

int ps_io_read_file(ps_ctx *ctx, const char *path, size_t max, const char *what, uint8_t **out,
                    size_t *len)
{
	struct stat st;
	uint8_t *d;
	size_t got;
	int fd, rc;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "cannot open %s %s: %s", what, path,
		              strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot read %s %s: %s", what, path,
		            strerror(errno));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ps_err(ctx, PDFSTAMP_E_USAGE, "%s %s is %s, not a regular file", what, path,
		              ps_io_file_kind(st.st_mode));
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "%s %s is larger than %zu MiB", what,
		              path, max >> 20);
	}
	if (!(d = malloc(st.st_size ? (size_t)st.st_size : 1))) {
		close(fd);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory reading %s %s", what, path);
	}
	rc = ps_io_pread_full(ctx, fd, d, (size_t)st.st_size, 0, &got, "cannot read %s %s", what,
	                      path);
	close(fd);
	if (rc < 0) {
		free(d);
		return rc;
	}
	*out = d;
	*len = got;
	return 0;
}

/* ---- writing ----------------------------------------------------------------- */

/* Copies the first LEN bytes of SRC to DST (both at offset 0). */
int ps_io_copy_prefix(ps_ctx *ctx, int src, int dst, int64_t len)
{
	loff_t in = 0, out = 0;
	uint8_t *buf = NULL;
	int rc;

	while (in < len) {
		ssize_t k = copy_file_range(src, &in, dst, &out,
		                            (size_t)(len - in > (1 << 30) ? (1 << 30) : len - in),
		                            0);
		if (k > 0)
			continue;
		if (k == 0)
			return ps_err(ctx, PDFSTAMP_E_IO,
			              "the input shrank while it was being copied");
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP && errno != EINVAL)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot copy the input: %s",
			              strerror(errno));
		break; /* fall back to read/write */
	}
	while (in < len) {
		size_t k, want = (size_t)(len - in > (1 << 20) ? (1 << 20) : len - in);
		if (!buf && !(buf = malloc(1 << 20)))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		if ((rc = ps_io_pread_full(ctx, src, buf, want, in, &k,
		                           "cannot read the input")) == 0 && k < want)
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot read the input: short file");
		if (rc == 0)
			rc = ps_io_write_all(ctx, dst, buf, k, out, "the output");
		if (rc < 0) {
			free(buf);
			return rc;
		}
		in += (loff_t)k;
		out += (loff_t)k;
	}
	free(buf);
	return 0;
}

/* Writes the N pieces at IOV at OFF (changed: a short write moves them
 * on), retrying EINTR and short writes: ps_io_write_all and ps_wstream. */
static int writev_all(ps_ctx *ctx, int fd, struct iovec *iov, int n, int64_t off, const char *what)
{
	if (ps_fault("write")) {
		errno = ENOSPC;
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot write %s: %s", what, strerror(errno));
	}
	for (;;) {
		ssize_t k;

		while (n > 0 && iov->iov_len == 0) /* so that pending bytes and
		                                    * k == 0 mean no progress */
			iov++, n--;
		if (n == 0)
			return 0;
		k = pwritev(fd, iov, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot write %s: %s", what,
			              strerror(errno));
		if (k == 0) /* never loop on a write that takes nothing */
			return ps_err(ctx, PDFSTAMP_E_IO,
			              "cannot write %s: the write made no progress", what);
		off += k;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
}

int ps_io_write_all(ps_ctx *ctx, int fd, const void *p, size_t n, int64_t off, const char *what)
{
	struct iovec iov = {(void *)p, n};

	return writev_all(ctx, fd, &iov, 1, off, what);
}

int ps_io_write_pair(ps_ctx *ctx, int fd, const void *p1, size_t n1, const void *p2, size_t n2,
                     int64_t off, const char *what)
{
	struct iovec iov[2] = {{(void *)p1, n1}, {(void *)p2, n2}};

	return writev_all(ctx, fd, iov, 2, off, what);
}

int ps_io_sync_fd(ps_ctx *ctx, int fd, const char *what)
{
	errno = 0;
	if (ps_fault("fsync") || fsync(fd) < 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot fsync %s: %s", what,
		              errno ? strerror(errno) : "injected fault");
	return 0;
}

/* Starts the writeback of bytes [OFF, OFF + LEN) of FD, already written,
 * without waiting for it (note "Early writeback"): a hint that makes
 * nothing durable, so it has no result; ps_io_sync_fd stays the one durability
 * point and reports any error the writeback meets.  Nothing where the
 * platform lacks sync_file_range. */
static void writeback_start(int fd, int64_t off, int64_t len)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (off >= 0 && len > 0)
		(void)sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
	(void)off;
	(void)len;
#endif
}

/* ---- the buffered writer (io.h ps_wstream) ---------------------------------------- */

#define WS_BUF ((size_t)1 << 20)       /* pieces gather up to 1 MB, copied ones too */
#define WS_DIRECT ((size_t)256 << 10)  /* larger copied pieces are written at once */
#define WS_IOV 512                     /* pieces per pwritev (IOV_MAX is 1024) */
#define WS_WB_CHUNK ((int64_t)4 << 20) /* writeback started every 4 MB written */
#define WS_DSYNC_CHUNK ((int64_t)32 << 20) /* and a data sync every 32 MB of it */

/* The writeback thread (note "Early writeback"): it starts the writeback
 * of [done, want) whenever the writer has moved WANT on. */
struct ps_wback {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fd, stop;
	int64_t want;
	int sync;             /* 1: fsync once WANT is started; 2: done */
	ps_ctx *sctx;         /* the fsync's result: a context of the thread's own */
	int src;
	int derr;             /* the first failed data sync: its errno, -1 if injected */
};

/* Note "Data syncs on the way": 0, or the errno of the failure (-1: injected). */
static int data_sync(int fd)
{
	if (ps_fault("datasync"))
		return -1;
	return fdatasync(fd) < 0 ? (errno ? errno : EIO) : 0;
}

static int derr_msg(ps_ctx *ctx, int derr, const char *what)
{
	return ps_err(ctx, PDFSTAMP_E_IO, "cannot fdatasync %s: %s", what,
	              derr < 0 ? "injected fault" : strerror(derr));
}

/* The fsync before the rename: a data sync's kept error (DERR) stands for
 * it, since the fsync would not report that error again (errseq). */
static int sync_after(ps_ctx *ctx, int fd, int derr, const char *what)
{
	return derr ? derr_msg(ctx, derr, what) : ps_io_sync_fd(ctx, fd, what);
}

static void *wback_main(void *arg)
{
	struct ps_wback *k = arg;
	int64_t done = 0, synced = 0, want;
	int e;

	pthread_mutex_lock(&k->mu);
	for (;;) {
		if (k->stop)
			break; /* what is left, the fsync that follows writes */
		if (k->want == done && k->sync == 1) {
			pthread_mutex_unlock(&k->mu);
			/* derr is this thread's to write: no lock to read it */
			k->src = sync_after(k->sctx, k->fd, k->derr, "the output");
			pthread_mutex_lock(&k->mu);
			k->sync = 2;
			pthread_cond_broadcast(&k->cv);
			continue;
		}
		if (k->want == done) {
			pthread_cond_wait(&k->cv, &k->mu);
			continue;
		}
		want = k->want;
		pthread_mutex_unlock(&k->mu);
		writeback_start(k->fd, done, want - done);
		done = want;
		e = 0;
		if (!k->derr && done - synced >= WS_DSYNC_CHUNK) {
			e = data_sync(k->fd);
			synced = done;
		}
		pthread_mutex_lock(&k->mu);
		if (e)
			k->derr = e;
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

void ps_wstream_init(ps_wstream *w, ps_ctx *ctx, int fd, int writeback, const char *what)
{
	struct ps_wback *k;

	memset(w, 0, sizeof *w);
	w->ctx = ctx;
	w->fd = fd;
	w->writeback = writeback;
	w->what = what;
	if (!writeback || !(k = calloc(1, sizeof *k)))
		return;
	k->fd = fd;
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->cv, NULL);
	if (pthread_create(&k->th, NULL, wback_main, k) == 0) {
		w->bk = k;
		return;
	}
	pthread_mutex_destroy(&k->mu);
	pthread_cond_destroy(&k->cv);
	free(k);
}

/* Has the writeback of what was written since the last time started, once
 * that is WS_WB_CHUNK bytes or more (ALL: whatever it is).  Fails, when it
 * posts a range or ALL is set, if a data sync of the thread has (note "Data
 * syncs on the way"); the bytes written before stay written. */
static int ws_kick(ps_wstream *w, int all)
{
	int64_t end = w->off - (int64_t)w->pending; /* written, not listed */
	int post = w->writeback && end > w->wb && (all || end - w->wb >= WS_WB_CHUNK), derr = 0;

	if (w->bk && (post || all)) {
		pthread_mutex_lock(&w->bk->mu);
		if (post) {
			w->bk->want = end;
			pthread_cond_signal(&w->bk->cv);
		}
		derr = w->bk->derr;
		pthread_mutex_unlock(&w->bk->mu);
	} else if (post) {
		writeback_start(w->fd, w->wb, end - w->wb);
	}
	if (post)
		w->wb = end;
	return derr ? derr_msg(w->ctx, derr, w->what) : 0;
}

static int ws_drain(ps_wstream *w)
{
	int rc = 0;

	if (w->niov) {
		if (w->fd >= 0) /* fd -1: counted only (io.h) */
			rc = writev_all(w->ctx, w->fd, w->iov, w->niov,
			                w->off - (int64_t)w->pending, w->what);
		w->niov = 0;
		w->pending = 0;
		w->buf.len = 0;
		if (rc == 0)
			rc = ws_kick(w, 0);
	}
	return rc;
}

/* Lists P[0..N) as the next piece (merged with the last one if it follows
 * it in memory); writes what is listed once it makes WS_BUF bytes. */
static int ws_list(ps_wstream *w, const void *p, size_t n)
{
	int rc;

	if (n == 0)
		return 0;
	if (!w->iov && !(w->iov = malloc(WS_IOV * sizeof *w->iov)))
		return ps_err(w->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (w->niov == WS_IOV && (rc = ws_drain(w)) < 0)
		return rc;
	if (w->niov &&
	    (const uint8_t *)w->iov[w->niov - 1].iov_base + w->iov[w->niov - 1].iov_len == p) {
		w->iov[w->niov - 1].iov_len += n;
	} else {
		w->iov[w->niov].iov_base = (void *)p;
		w->iov[w->niov].iov_len = n;
		w->niov++;
	}
	w->pending += n;
	w->off += (int64_t)n;
	return w->pending >= WS_BUF ? ws_drain(w) : 0;
}

int ps_wstream_put_ref(ps_wstream *w, const void *p, size_t n)
{
	return ws_list(w, p, n);
}

int ps_wstream_put(ps_wstream *w, const void *p, size_t n)
{
	int rc;

	if (n >= WS_DIRECT) {
		if ((rc = ws_drain(w)) < 0)
			return rc;
		rc = w->fd >= 0 ? ps_io_write_all(w->ctx, w->fd, p, n, w->off, w->what) : 0;
		w->off += (int64_t)n;
		return rc < 0 ? rc : ws_kick(w, 0);
	}
	/* the buffer never moves while pieces in it are listed */
	if ((w->buf.len + n > WS_BUF || w->niov == WS_IOV) && (rc = ws_drain(w)) < 0)
		return rc;
	if (!w->buf.data && ps_buf_reserve(&w->buf, WS_BUF) < 0)
		return ps_err(w->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	memcpy(w->buf.data + w->buf.len, p, n);
	w->buf.len += n;
	return ws_list(w, w->buf.data + w->buf.len - n, n);
}

int ps_wstream_drain(ps_wstream *w)
{
	return ws_drain(w);
}

int ps_wstream_flush(ps_wstream *w)
{
	int rc = ws_drain(w);

	return rc < 0 ? rc : ws_kick(w, 1);
}

void ps_wstream_sync_start(ps_wstream *w)
{
	struct ps_wback *k = w->bk;

	/* sctx and sync == 1 are this thread's to set (the other thread
	 * only moves 1 to 2, under the lock) */
	if (!k || k->sctx || pdfstamp_ctx_new(&k->sctx) < 0)
		return; /* ps_wstream_sync_wait does it */
	pthread_mutex_lock(&k->mu);
	k->sync = 1;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
}

/* Stops and frees the writeback thread; the error of its data syncs. */
static int wback_end(ps_wstream *w)
{
	struct ps_wback *k = w->bk;
	int derr;

	if (!k)
		return 0;
	pthread_mutex_lock(&k->mu);
	k->stop = 1;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->th, NULL);
	derr = k->derr;
	pdfstamp_ctx_free(k->sctx); /* a sync never waited for */
	pthread_mutex_destroy(&k->mu);
	pthread_cond_destroy(&k->cv);
	free(k);
	w->bk = NULL;
	return derr;
}

int ps_wstream_sync_wait(ps_wstream *w)
{
	struct ps_wback *k = w->bk;
	int rc;

	if (!k || !k->sctx) /* the fsync here, once no data sync can run */
		return sync_after(w->ctx, w->fd, wback_end(w), w->what);
	pthread_mutex_lock(&k->mu);
	while (k->sync != 2)
		pthread_cond_wait(&k->cv, &k->mu);
	k->sync = 0;
	pthread_mutex_unlock(&k->mu);
	rc = k->src < 0 ? ps_err(w->ctx, k->src, "%s", pdfstamp_ctx_errmsg(k->sctx)) : 0;
	pdfstamp_ctx_free(k->sctx);
	k->sctx = NULL;
	return rc;
}

void ps_wstream_free(ps_wstream *w)
{
	(void)wback_end(w);
	ps_buf_free(&w->buf);
	free(w->iov);
	w->iov = NULL;
	w->niov = 0;
}

/* No fault point here: truncation is how a failed (or injected) step is
 * undone, and the sweep counts only the steps of the update itself. */
int ps_io_truncate_fd(ps_ctx *ctx, int fd, int64_t len, const char *what)
{
	int e;

	if (ftruncate(fd, (off_t)len) == 0 && fsync(fd) == 0)
		return 0;
	e = errno;
	ps_err(ctx, PDFSTAMP_E_IO, "cannot truncate %s: %s", what, strerror(e));
	errno = e; /* for the callers that word their own message */
	return PDFSTAMP_E_IO;
}

static int sync_dir(ps_ctx *ctx, const char *dir)
{
	int fd, rc = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot fsync directory %s: %s", dir,
		            strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ---- group commit of directory syncs ------------------------------------------ */

struct gdir {
	char *path;
	uint64_t linked;        /* tickets taken */
	uint64_t synced;        /* every ticket up to this one is durable */
	int syncing;
};

struct pdfstamp_group {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct gdir *dirs;
	size_t n;
	uint64_t syncs, requests;
};

int pdfstamp_group_new(pdfstamp_group **out)
{
	pdfstamp_group *g;

	*out = NULL;
	if (!(g = calloc(1, sizeof *g)))
		return PDFSTAMP_E_NOMEM;
	if (pthread_mutex_init(&g->lock, NULL) != 0) {
		free(g);
		return PDFSTAMP_E_NOMEM;
	}
	if (pthread_cond_init(&g->cond, NULL) != 0) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		return PDFSTAMP_E_NOMEM;
	}
	*out = g;
	return 0;
}

void pdfstamp_group_free(pdfstamp_group *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n; i++)
		free(g->dirs[i].path);
	free(g->dirs);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

void pdfstamp_group_stats(const pdfstamp_group *g, uint64_t *syncs, uint64_t *requests)
{
	pthread_mutex_t *lock = (pthread_mutex_t *)&g->lock; /* reading under it */

	pthread_mutex_lock(lock);
	if (syncs)
		*syncs = g->syncs;
	if (requests)
		*requests = g->requests;
	pthread_mutex_unlock(lock);
}

/* The index of DIR's entry, made if new (under the lock; an index, not a
 * pointer: another directory's entry may move the array while this one
 * waits); -1 when out of memory. */
static long group_dir(pdfstamp_group *g, const char *dir)
{
	struct gdir *e;
	size_t i;

	for (i = 0; i < g->n; i++)
		if (strcmp(g->dirs[i].path, dir) == 0)
			return (long)i;
	if (g->n >= LONG_MAX || ps_vec_grow((void **)&g->dirs, g->n, sizeof *g->dirs) < 0)
		return -1;
	e = &g->dirs[g->n];
	memset(e, 0, sizeof *e);
	if (!(e->path = strdup(dir)))
		return -1;
	return (long)g->n++;
}

uint64_t ps_io_dir_linked(ps_ctx *ctx, const char *dir)
{
	pdfstamp_group *g = ctx->group;
	uint64_t mine = 0;
	long k;

	if (!g)
		return 0;
	pthread_mutex_lock(&g->lock);
	if ((k = group_dir(g, dir)) >= 0) { /* else out of memory: synced alone */
		mine = ++g->dirs[k].linked;
		g->requests++;
	}
	pthread_mutex_unlock(&g->lock);
	return mine;
}

int ps_io_dir_durable(ps_ctx *ctx, const char *dir, uint64_t ticket)
{
	pdfstamp_group *g = ctx->group;
	uint64_t upto;
	long k;
	int rc = 0;

	if (!g || !ticket)
		return sync_dir(ctx, dir);
	pthread_mutex_lock(&g->lock);
	k = group_dir(g, dir); /* made when the ticket was taken */
	while (g->dirs[k].synced < ticket) {
		if (g->dirs[k].syncing) {
			pthread_cond_wait(&g->cond, &g->lock);
			continue;
		}
		upto = g->dirs[k].linked; /* the sync starts after all of these */
		g->dirs[k].syncing = 1;
		g->syncs++;
		pthread_mutex_unlock(&g->lock);
		rc = sync_dir(ctx, dir);
		pthread_mutex_lock(&g->lock);
		g->dirs[k].syncing = 0;
		if (rc == 0 && upto > g->dirs[k].synced)
			g->dirs[k].synced = upto;
		pthread_cond_broadcast(&g->cond);
		if (rc != 0)
			break;
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}

int ps_outfile_open(ps_ctx *ctx, ps_outfile *of, const char *target)
{
	struct stat st;
	char *copy;
	size_t n;

	memset(of, 0, sizeof *of);
	of->fd = -1;
	/* Said now, not after the whole output was built and checked (lstat:
	 * a symbolic link, even to a directory, is replaced by the rename).
	 * A FIFO or device is not renamed over either (-o /dev/null as root
	 * would replace the device; -o - is standard output). */
	if (lstat(target, &st) == 0 && S_ISDIR(st.st_mode))
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot write the output %s: %s", target,
		              strerror(EISDIR));
	if (lstat(target, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return ps_err(ctx, PDFSTAMP_E_IO,
		              "cannot write the output %s: not a regular file (%s; -o - writes "
		              "standard output)", target, ps_io_file_kind(st.st_mode));
	of->target = strdup(target);
	copy = strdup(target);
	if (!of->target || !copy) {
		free(copy);
		free(of->target);
		of->target = NULL;
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	of->dir = strdup(dirname(copy));
	free(copy);
	if (!of->dir)
		goto oom;
	n = strlen(of->dir) + 32;
	of->tmpname = malloc(n);
	if (!of->tmpname)
		goto oom;
	snprintf(of->tmpname, n, "%s/.pdfstamp-XXXXXX", of->dir);
#ifdef O_TMPFILE
	of->fd = open(of->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (of->fd >= 0) {
		of->unnamed = 1;
		return 0;
	}
#endif
	of->fd = mkostemp(of->tmpname, O_CLOEXEC);
	if (of->fd >= 0)
		of->named = 1;
	if (of->fd < 0) {
		int e = errno;
		ps_err(ctx, PDFSTAMP_E_IO,
		       "cannot create a temporary file for the output %s in %s: %s", target,
		       of->dir, strerror(e));
		ps_outfile_free(of);
		return PDFSTAMP_E_IO;
	}
	return 0;
oom:
	ps_outfile_free(of);
	return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
}

int ps_io_inplace_target(ps_ctx *ctx, const char *path, int fd, char **real, struct stat *st)
{
	struct stat rs;

	*real = NULL;
	if (fstat(fd, st) < 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot stat the file: %s", strerror(errno));
	if (st->st_nlink > 1)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the file has %ju hard links: replacing it in place would split "
		              "them, and the other names would keep the old file (its key and "
		              "passwords); write a new file with -o instead",
		              (uintmax_t)st->st_nlink);
	/* The final target of any symbolic links, checked to be the file we
	 * read: the new file goes into its directory and is renamed over it. */
	if (!(*real = realpath(path, NULL)))
		return ps_err(ctx, errno == ENOMEM ? PDFSTAMP_E_NOMEM : PDFSTAMP_E_IO,
		              "cannot resolve the file's path: %s", strerror(errno));
	if (stat(*real, &rs) < 0 || rs.st_dev != st->st_dev || rs.st_ino != st->st_ino ||
	    st->st_nlink == 0) {
		free(*real);
		*real = NULL;
		return ps_err(ctx, PDFSTAMP_E_IO,
		              "the file was moved or replaced while it was being rewritten");
	}
	return 0;
}

int ps_outfile_open_inplace(ps_ctx *ctx, ps_outfile *of, const char *path, int fd)
{
	struct stat st;
	char *real;
	int rc;

	memset(of, 0, sizeof *of);
	of->fd = -1;
	if ((rc = ps_io_inplace_target(ctx, path, fd, &real, &st)) < 0)
		return rc;
	rc = ps_outfile_open(ctx, of, real);
	free(real);
	if (rc == 0) {
		of->keep_owner = 1;
		of->uid = st.st_uid;
		of->gid = st.st_gid;
	}
	return rc;
}

int ps_io_check_out_fd(ps_ctx *ctx, int out_fd, int in_fd)
{
	struct stat os, is;

	if (out_fd < 0 || fstat(out_fd, &os) < 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the output descriptor %d is not open",
		              out_fd);
	if (in_fd >= 0 && fstat(in_fd, &is) == 0 && os.st_dev == is.st_dev &&
	    os.st_ino == is.st_ino)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the output (descriptor %d) is the input file itself", out_fd);
	return 0;
}

int ps_outfile_open_fd(ps_ctx *ctx, ps_outfile *of)
{
	const char *tmp = getenv("TMPDIR");
	size_t n;

	memset(of, 0, sizeof *of);
	of->fd = -1;
	of->to_fd = 1;
	of->dir = strdup(tmp && *tmp ? tmp : ".");
	if (!of->dir)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	n = strlen(of->dir) + 32;
	if (!(of->tmpname = malloc(n))) {
		ps_outfile_free(of);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	snprintf(of->tmpname, n, "%s/.pdfstamp-XXXXXX", of->dir);
#ifdef O_TMPFILE
	of->fd = open(of->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
	if (of->fd < 0 && (of->fd = mkostemp(of->tmpname, O_CLOEXEC)) >= 0 &&
	    unlink(of->tmpname) < 0) {
		int e = errno;
		close(of->fd);
		of->fd = -1;
		unlink(of->tmpname);
		errno = e;
	}
	if (of->fd < 0) {
		int e = errno;
		ps_err(ctx, PDFSTAMP_E_IO, "cannot create a temporary file in %s (%s): %s", of->dir,
		       tmp && *tmp ? "TMPDIR" : "the current directory, as TMPDIR is not set",
		       strerror(e));
		ps_outfile_free(of);
		return PDFSTAMP_E_IO;
	}
	of->unnamed = 1; /* never linked: ps_outfile_path goes through /proc */
	return 0;
}

int ps_outfile_copy_out(ps_ctx *ctx, ps_outfile *of, int out_fd)
{
	const size_t bufsz = (size_t)1 << 16;
	uint8_t *buf;
	int64_t off = 0;
	int rc = 0;

	if (!of->to_fd)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "copy_out on an output with a path");
	if (!(buf = malloc(bufsz)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (ps_fault("write")) {
		free(buf);
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot write the output (descriptor %d): %s",
		              out_fd, strerror(ENOSPC));
	}
	for (;;) {
		size_t k, done = 0;
		ssize_t w;

		if ((rc = ps_io_pread_full(ctx, of->fd, buf, bufsz, off, &k,
		                           "cannot read the temporary file in %s", of->dir)) < 0 ||
		    k == 0)
			break;
		while (done < k) {
			w = write(out_fd, buf + done, k - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = ps_err(ctx, PDFSTAMP_E_IO,
				            "cannot write the output (descriptor %d): %s", out_fd,
				            w < 0 ? strerror(errno) : "nothing written");
				break;
			}
			done += (size_t)w;
		}
		if (rc < 0)
			break;
		off += (int64_t)k;
	}
	free(buf);
	return rc;
}

const char *ps_outfile_path(ps_outfile *of)
{
	if (of->unnamed) {
		snprintf(of->fdpath, sizeof of->fdpath, "/proc/self/fd/%d", of->fd);
		return of->fdpath;
	}
	return of->tmpname;
}

int ps_outfile_commit(ps_ctx *ctx, ps_outfile *of, mode_t mode, int synced)
{
	int rc;

	if (of->to_fd)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "commit of an output without a path");
	if (!synced && (rc = ps_io_sync_fd(ctx, of->fd, "the output")) < 0)
		return rc;
	/* Owner and group before the mode (chown may clear set-id bits).  Not
	 * permitted (another user's file, a group we are not in): the new file
	 * is ours, and we say so. */
	if (of->keep_owner && fchown(of->fd, of->uid, of->gid) < 0) {
		if (errno != EPERM)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot set the owner of %s: %s",
			              of->target, strerror(errno));
		ps_warn(ctx, "%s: the new file could not be given the old owner and group "
		        "(uid %ju, gid %ju: not permitted); it has yours",
		        of->target, (uintmax_t)of->uid, (uintmax_t)of->gid);
	}
	if (fchmod(of->fd, mode & 07777) < 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot set the mode of the output %s: %s",
		              of->target, strerror(errno));
	if (of->unnamed) {
		int fd;
		/* linkat needs a fresh, unused name: reserve one with mkostemp,
		 * then replace it by the unnamed file. */
		fd = mkostemp(of->tmpname, O_CLOEXEC);
		if (fd < 0)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot name the output %s in %s: %s",
			              of->target, of->dir, strerror(errno));
		close(fd);
		unlink(of->tmpname);
		if (linkat(AT_FDCWD, ps_outfile_path(of), AT_FDCWD, of->tmpname,
		           AT_SYMLINK_FOLLOW) < 0)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot name the output %s in %s: %s",
			              of->target, of->dir, strerror(errno));
		of->unnamed = 0;
		of->named = 1;
	}
	ps_fault("before-rename");
	errno = 0;
	if (ps_fault("rename") || rename(of->tmpname, of->target) < 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot rename the output into place as %s: %s",
		              of->target, errno ? strerror(errno) : "injected fault");
	of->named = 0; /* the name is the target's now */
	of->committed = 1;
	return sync_dir(ctx, of->dir); /* nothing after the rename may allocate */
}

void ps_outfile_free(ps_outfile *of)
{
	if (!of)
		return;
	if (of->fd >= 0)
		close(of->fd);
	if (of->named && !of->committed)
		unlink(of->tmpname);
	free(of->tmpname);
	free(of->target);
	free(of->dir);
	memset(of, 0, sizeof *of);
	of->fd = -1;
}
