/* SPDX-License-Identifier: Apache-2.0 */
/*
 * journal.c - the journal of in-place appends, and recovery from it.
 *
 * DESIGN NOTES
 *
 * What it owns: the file "FILE.pdfstamp-journal" that guards an in-place
 * incremental update (ISO 32000-2 7.5.6: a revision appended after the
 * file's last byte), its format, and the decision about an interrupted
 * update.  incr.c calls it around the append (ps_journal_begin, _write
 * before a byte reaches the file, _remove once the update is synced
 * and checked, _rollback on failure); doc.c calls ps_journal_recover from a writing
 * open, and the public pdfstamp_recover / pdfstamp_journal_pending live
 * here.  It sits beside io.c (whose writes, fsyncs and truncation it uses,
 * so the fault sweep reaches every step) and below doc.c and incr.c: it
 * knows files, never documents.
 *
 * The append, in place, under the writers' exclusive flock (3 fsyncs):
 *
 *   ps_journal_write  (journal unnamed -> written -> fsync 1 -> linked)
 *   ps_journal_durable (directory fsync 2, which the threads of a group
 *                      share: io.c; fault point after-journal follows)
 *   pwrite at L, fsync 3 of the file (DURABLE: a crash from here on
 *                      keeps the update), verify                (incr.c)
 *   ps_journal_remove (unlink, not synced: see "roll forward" below)
 *   any failure before the end of verify: ps_journal_rollback (truncate
 *   to L, fsync, unlink)
 *
 * The journal's name is durable (fsync 2) before a byte reaches the file,
 * so a file whose append may be torn always has its journal.  Its removal
 * is not made durable: once the file's fsync has returned, the update is
 * whole on disk, and a journal that a crash brings back finds exactly that
 * whole update, which recovery keeps (roll forward).  The caller reports
 * success only after the file's fsync and the check.
 *
 * Format (version 3, one record, exactly as jrec_format writes it):
 *
 *   pdfstamp-journal 3
 *   file DEV INO              st_dev and st_ino of the file it guards
 *   length L                  the file's size before the update
 *   appended N SHA256         length and hash of exactly the bytes written at L
 *   before SHA256             hash of the JOURNAL_HASHSPAN bytes before L
 *
 * Version 3 has the text of version 2; only its meaning changed.  Version
 * 2 (pdfstamp before roll forward) made the journal's durable removal the
 * point where the update was done, so an older pdfstamp finding a journal next to a whole
 * update would truncate it, even though this version already reported
 * that update as done: the new number makes older versions refuse these
 * journals ("not a complete pdfstamp journal; left alone") instead.  A
 * version-2 journal is read as version 3: a whole update it guards is
 * exactly the bytes its writer built and synced (it had not yet reported
 * success), and keeping it removes nothing.  Version 1 journals (no
 * record of what was appended) are refused.
 *
 * Recovery (ps_journal_recover) believes a journal only if it is a regular
 * file of this effective user with mode 0600 and one link, if it parses to
 * exactly this text, is bound to the file's device and inode, and the
 * JOURNAL_HASHSPAN bytes before L hash to `before`.  Then, by the file's
 * size S:
 *
 *   S == L            the update was never written: only the journal goes
 *                     (PDFSTAMP_RECOVER_UNWRITTEN);
 *   S == L+N, the last N bytes hash to SHA256
 *                     the update pdfstamp wrote, whole: KEPT, the journal
 *                     goes (PDFSTAMP_RECOVER_COMPLETED);
 *   anything else     (S < L; L < S < L+N, a torn append, as a power
 *                     failure before the file's fsync can leave; S == L+N
 *                     with other bytes; S > L+N, bytes appended after
 *                     it) reported (PDFSTAMP_E_FORMAT) and left alone,
 *                     journal included, for a human: no hash of a prefix
 *                     is recorded, so bytes after L that are not the whole
 *                     update cannot be told from another writer's.
 *
 * Recovery therefore never writes, truncates or extends the file (it
 * fsyncs a kept update before removing its journal: its writer may have
 * died before its own fsync): a planted or stale journal can at most make
 * pdfstamp remove that journal (a file of this user, 0600) next to a file
 * that already holds exactly the bytes it names.  If the in-process
 * rollback cannot truncate, it sets the journal's mode to 0400, so that
 * recovery refuses it instead of keeping an update that failed.  Writers
 * create the journal unnamed (O_TMPFILE), write and fsync it and only
 * then link it into place, so a crash never leaves a torn journal under
 * the journal's name.
 *
 * What a crash leaves, by the step it interrupts: before the link, no
 * journal and the file untouched; between the link and the file's fsync,
 * the file at L (journal removed by recovery), whole (kept), or, after a
 * power failure, torn (left alone, reported); after the file's fsync, the
 * whole update, kept.  An update killed between its write and the end of
 * its self-check (verify_output, incr.c) is kept although that check did
 * not finish: its bytes are exactly the ones pdfstamp built, and `pdfstamp
 * verify` checks them.
 *
 * Invariants:
 *  1. Nothing after the journal is linked allocates (the names are made by
 *     ps_journal_begin first), so a failure there cannot strand the file.
 *  2. Only bytes after L that are exactly the recorded section are ever
 *     removed, and only by the process that wrote them (ps_journal_rollback
 *     after a failed write, fsync or verify); recovery removes none.  The
 *     first L bytes are never written, here or in incr.c.
 *  3. Read-only opens never act on a journal (doc.c only warns): a journal
 *     is input that anyone with write access to the directory could have
 *     planted.  Recovery takes the writers' lock before the journal.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "io.h"
#include "journal.h"
#include "sha2.h"

#define JOURNAL_SUFFIX ".pdfstamp-journal"
#define JOURNAL_MAGIC "pdfstamp-journal 3"
#define JOURNAL_MAGIC_V2 "pdfstamp-journal 2" /* the same text; read as version 3 */
#define JOURNAL_MAGIC_V1 "pdfstamp-journal 1"
#define JOURNAL_HASHSPAN 4096
#define JOURNAL_MAX 512

/* One record (the format: design notes). */
struct jrec {
	int v2;                 /* read from a version-2 journal (same text) */
	uintmax_t dev, ino;
	int64_t len, appended;
	char sum[65], before[65];
};

/* The journal lives next to the file itself, wherever symbolic links
 * lead, so that every name of a symlinked document finds the same one. */
static char *journal_path(const char *path)
{
	char *real = realpath(path, NULL);
	const char *base = real ? real : path;
	size_t n = strlen(base);
	char *j = malloc(n + sizeof JOURNAL_SUFFIX);

	if (j) {
		memcpy(j, base, n);
		memcpy(j + n, JOURNAL_SUFFIX, sizeof JOURNAL_SUFFIX);
	}
	free(real);
	return j;
}

static void to_hex(const uint8_t h[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[h[i] >> 4];
		hex[2 * i + 1] = digits[h[i] & 15];
	}
	hex[64] = '\0';
}

/* SHA-256 (hex) of the N bytes of FD at OFF; E_IO if they are not all there. */
static int range_hash(ps_ctx *ctx, int fd, int64_t off, int64_t n, char hex[65])
{
	mbedtls_sha256_context sc;
	uint8_t buf[16384], h[32];
	int rc = 0;

	mbedtls_sha256_init(&sc);
	ps_sha256_starts(&sc);
	while (n > 0) {
		size_t want = n > (int64_t)sizeof buf ? sizeof buf : (size_t)n, k;
		rc = ps_io_pread_full(ctx, fd, buf, want, off, &k, "cannot read the file");
		if (rc < 0)
			goto out;
		if (k < want) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot read the file: short file");
			goto out;
		}
		ps_sha256_update(&sc, buf, k);
		off += (int64_t)k;
		n -= (int64_t)k;
	}
	ps_sha256_finish(&sc, h);
	to_hex(h, hex);
out:
	mbedtls_sha256_free(&sc);
	return rc;
}

/* Hash of the JOURNAL_HASHSPAN bytes before L. */
static int before_hash(ps_ctx *ctx, int fd, int64_t l, char hex[65])
{
	int64_t start = l > JOURNAL_HASHSPAN ? l - JOURNAL_HASHSPAN : 0;

	return range_hash(ctx, fd, start, l - start, hex);
}

static int jrec_format(const struct jrec *r, char *text, size_t cap)
{
	return snprintf(text, cap, "%s\nfile %ju %ju\nlength %" PRId64 "\nappended %" PRId64
	                " %s\nbefore %s\n", r->v2 ? JOURNAL_MAGIC_V2 : JOURNAL_MAGIC, r->dev,
	                r->ino, r->len, r->appended, r->sum, r->before);
}

/* Parses TEXT (N bytes); 0 only if it is exactly what jrec_format writes
 * (version 3, or version 2 with the same text). */
static int jrec_parse(const char *text, size_t n, struct jrec *r)
{
	char again[JOURNAL_MAX + 1];
	intmax_t len, app;
	size_t m = sizeof JOURNAL_MAGIC - 1;
	int k;

	memset(r, 0, sizeof *r);
	if (n > m && memcmp(text, JOURNAL_MAGIC_V2, m) == 0)
		r->v2 = 1;
	else if (n <= m || memcmp(text, JOURNAL_MAGIC, m) != 0)
		return -1;
	if (sscanf(text + m, "\nfile %ju %ju\nlength %jd\nappended %jd %64s\nbefore %64s\n",
	           &r->dev, &r->ino, &len, &app, r->sum, r->before) != 6 || len < 0 || app <= 0)
		return -1;
	r->len = (int64_t)len;
	r->appended = (int64_t)app;
	k = jrec_format(r, again, sizeof again);
	if (k < 0 || (size_t)k != n || memcmp(again, text, n) != 0 ||
	    strspn(r->sum, "0123456789abcdef") != 64 || strspn(r->before, "0123456789abcdef") != 64)
		return -1;
	return 0;
}

int ps_journal_begin(ps_ctx *ctx, ps_journal *j, const char *file)
{
	char *copy;

	j->ticket = 0;
	j->path = journal_path(file);
	copy = j->path ? strdup(j->path) : NULL;
	j->dir = copy ? strdup(dirname(copy)) : NULL;
	free(copy);
	if (!j->dir) {
		free(j->path);
		j->path = NULL;
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	return 0;
}

void ps_journal_end(ps_journal *j)
{
	if (!j)
		return;
	free(j->path);
	free(j->dir);
	j->path = j->dir = NULL;
}

/* Gives the complete, synced journal JFD the name J->path; fails (EEXIST)
 * if anything is there.  TMP is the temporary name of a named JFD, or
 * NULL for an unnamed (O_TMPFILE) one. */
static int journal_link(ps_ctx *ctx, const ps_journal *j, int jfd, const char *tmp)
{
	char fdpath[40];
	int r;

	if (tmp) {
		r = link(tmp, j->path);
	} else {
		snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", jfd);
		r = linkat(AT_FDCWD, fdpath, AT_FDCWD, j->path, AT_SYMLINK_FOLLOW);
	}
	if (r == 0)
		return 0;
	if (errno == EEXIST)
		return ps_err(ctx, PDFSTAMP_E_IO,
		              "a journal %s already exists (from an interrupted update that could "
		              "not be validated, or not written by pdfstamp); not appending: "
		              "run 'pdfstamp recover' on the file, or check the journal and "
		              "remove it by hand", j->path);
	return ps_err(ctx, PDFSTAMP_E_IO, "cannot create the journal %s: %s", j->path,
	              strerror(errno));
}

int ps_journal_write(ps_ctx *ctx, ps_journal *j, int fd, const struct stat *st, int64_t l,
                     const ps_buf *sec)
{
	struct jrec r;
	char text[JOURNAL_MAX + 1], *tmp = NULL;
	uint8_t h[32];
	int jfd = -1, rc, n;
	size_t tn;

	memset(&r, 0, sizeof r);
	r.dev = (uintmax_t)st->st_dev;
	r.ino = (uintmax_t)st->st_ino;
	r.len = l;
	r.appended = (int64_t)sec->len;
	ps_sha256(sec->data, sec->len, h);
	to_hex(h, r.sum);
	if ((rc = before_hash(ctx, fd, l, r.before)) < 0)
		return rc;
	n = jrec_format(&r, text, sizeof text);
	if (n < 0 || n > JOURNAL_MAX)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "journal record too long");
#ifdef O_TMPFILE
	jfd = open(j->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#endif
	if (jfd < 0) {
		tn = strlen(j->path) + 8;
		if (!(tmp = malloc(tn)))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		snprintf(tmp, tn, "%s.XXXXXX", j->path);
		jfd = mkostemp(tmp, O_CLOEXEC);
		if (jfd < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot create the journal %s: %s", j->path,
			            strerror(errno));
			free(tmp);
			return rc;
		}
	}
	/* Exactly 0600 whatever the umask: recovery accepts nothing else. */
	if (fchmod(jfd, 0600) < 0)
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot set the mode of the journal %s: %s",
		            j->path, strerror(errno));
	else if ((rc = ps_io_write_all(ctx, jfd, (const uint8_t *)text, (size_t)n, 0,
	                               "the journal")) == 0 &&
	         (rc = ps_io_sync_fd(ctx, jfd, "the journal")) == 0 &&
	         (rc = journal_link(ctx, j, jfd, tmp)) == 0)
		j->ticket = ps_io_dir_linked(ctx, j->dir);
	close(jfd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return rc;
}

int ps_journal_durable(ps_ctx *ctx, const ps_journal *j)
{
	return ps_io_dir_durable(ctx, j->dir, j->ticket);
}

/* Not synced (design notes): a journal a crash brings back finds the file
 * as the caller left it, synced, and recovery draws the same conclusion. */
int ps_journal_remove(ps_ctx *ctx, const ps_journal *j)
{
	if (unlink(j->path) < 0 && errno != ENOENT)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot remove the journal %s: %s", j->path,
		              strerror(errno));
	return 0;
}

int ps_journal_rollback(ps_ctx *ctx, const ps_journal *j, int fd, int64_t l)
{
	char msg[sizeof ctx->errmsg];
	int code = ctx->errcode;

	memcpy(msg, ctx->errmsg, sizeof msg);
	if (ps_io_truncate_fd(ctx, fd, l, "the file") < 0) { /* errno kept */
		int e = errno;
		/* The bytes after L may be a whole update that failed its check:
		 * mode 0400 makes recovery refuse the journal, not keep them. */
		int marked = chmod(j->path, 0400) == 0;
		return ps_err(ctx, PDFSTAMP_E_IO,
		              "%s; and the rollback failed (%s): the file may hold the failed "
		              "update after byte %" PRId64
		              "; the journal %s is kept%s: truncate the file to %" PRId64
		              " bytes, then remove the journal",
		              msg, strerror(e), l, j->path,
		              marked ? " (mode 0400, so that no recovery acts on it)" : "", l);
	}
	ps_journal_remove(ctx, j);
	return ps_err(ctx, code, "%s", msg);
}

/* Reads and checks the journal J of the locked file FD (stat FST) into R.
 * 1: there is none; 0: R is a journal of this file; < 0: refused. */
static int journal_load(ps_ctx *ctx, const ps_journal *j, const struct stat *fst, struct jrec *r,
                        struct stat *jst)
{
	char text[JOURNAL_MAX + 1];
	size_t got = 0;
	int jfd, rc = 0;

	jfd = open(j->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (jfd < 0) {
		if (errno == ENOENT)
			return 1;
		if (errno == ELOOP)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s is a symbolic link, not a journal written by pdfstamp; "
			              "left alone", j->path);
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot read the journal %s: %s", j->path,
		              strerror(errno));
	}
	if (fstat(jfd, jst) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat the journal %s: %s", j->path,
		            strerror(errno));
		goto out;
	}
	if (!S_ISREG(jst->st_mode)) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "%s is not a regular file, so not a journal written by pdfstamp; "
		            "left alone", j->path);
		goto out;
	}
	if (jst->st_uid != geteuid()) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s belongs to uid %ju, not to this user (uid %ju): "
		            "only journals of this user are trusted; left alone", j->path,
		            (uintmax_t)jst->st_uid, (uintmax_t)geteuid());
		goto out;
	}
	if ((jst->st_mode & 07777) != 0600 || jst->st_nlink != 1) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s has mode %04o and %ju link(s), "
		            "pdfstamp writes 0600 and 1; left alone", j->path,
		            (unsigned)(jst->st_mode & 07777), (uintmax_t)jst->st_nlink);
		goto out;
	}
	if (jst->st_size > JOURNAL_MAX) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "%s is too large to be a pdfstamp journal; left alone", j->path);
		goto out;
	}
	if ((rc = ps_io_pread_full(ctx, jfd, text, (size_t)jst->st_size, 0, &got,
	                           "cannot read the journal %s", j->path)) < 0)
		goto out;
	text[got] = '\0';
	if (got >= sizeof JOURNAL_MAGIC_V1 - 1 &&
	    memcmp(text, JOURNAL_MAGIC_V1, sizeof JOURNAL_MAGIC_V1 - 1) == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "%s is a journal of an older pdfstamp, which does not record what it "
		            "appended, so it cannot be checked; left alone (compare the file with "
		            "a backup, then remove the journal by hand)", j->path);
		goto out;
	}
	if (strlen(text) != got || jrec_parse(text, got, r) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "%s is not a complete pdfstamp journal; left alone", j->path);
		goto out;
	}
	if (r->dev != (uintmax_t)fst->st_dev || r->ino != (uintmax_t)fst->st_ino) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s was written for another file (device %ju, inode %ju; "
		            "this one is %ju, %ju): the file was replaced or the journal copied; "
		            "left alone", j->path, r->dev, r->ino, (uintmax_t)fst->st_dev,
		            (uintmax_t)fst->st_ino);
		goto out;
	}
out:
	close(jfd);
	return rc;
}

int ps_journal_recover(ps_ctx *ctx, int fd, const char *path, int *recovered)
{
	ps_journal j = {.path = NULL};
	struct stat fst, jst, now;
	struct jrec r;
	char hex[65];
	int64_t size;
	int rc;

	*recovered = PDFSTAMP_RECOVER_NONE;
	if ((rc = ps_journal_begin(ctx, &j, path)) < 0)
		return rc;
	if (fstat(fd, &fst) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(fst.st_mode)) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "not a regular file");
		goto out;
	}
	if ((rc = journal_load(ctx, &j, &fst, &r, &jst)) != 0) {
		if (rc > 0)
			rc = 0; /* no journal: nothing to do */
		goto out;
	}
	size = (int64_t)fst.st_size;
	if (size < r.len) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s says the file had %" PRId64 " bytes, but it has only %"
		            PRId64 "; left alone", j.path, r.len, size);
		goto out;
	}
	if ((rc = before_hash(ctx, fd, r.len, hex)) < 0)
		goto out;
	if (strcmp(hex, r.before) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s does not match the file's first %"
		            PRId64 " bytes; left alone", j.path, r.len);
		goto out;
	}
	/* Only S == L and S == L+N with our hash are acted on (design notes). */
	if (size > r.len && size - r.len < r.appended) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s: the interrupted update was to append %" PRId64
		            " bytes to %" PRId64 ", but the file has %" PRId64
		            ": the update is torn (a crash before it was synced); left alone: "
		            "compare the file with a backup, or truncate it to %" PRId64
		            " bytes, then remove the journal",
		            j.path, r.appended, r.len, size, r.len);
		goto out;
	}
	if (size > r.len) {
		if ((rc = range_hash(ctx, fd, r.len, r.appended, hex)) < 0)
			goto out;
		if (strcmp(hex, r.sum) != 0) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "journal %s: the %" PRId64 " bytes after offset %" PRId64
			            " are not the ones the interrupted update wrote; left alone",
			            j.path, r.appended, r.len);
			goto out;
		}
		if (size - r.len > r.appended) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "journal %s: the interrupted update (%" PRId64
			            " bytes at %" PRId64 ") is whole, but %" PRId64
			            " more bytes were appended after it by something else; "
			            "left alone: check the file, then remove the journal",
			            j.path, r.appended, r.len, size - r.len - r.appended);
			goto out;
		}
	}
	/* Remove the name only if it is still the journal we checked. */
	if (lstat(j.path, &now) < 0 || now.st_dev != jst.st_dev || now.st_ino != jst.st_ino) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s changed while it was being checked; left alone", j.path);
		goto out;
	}
	/* flock is advisory: a program that is not pdfstamp may have appended
	 * while the bytes were hashed.  Conclude only about what was checked. */
	if (fstat(fd, &now) < 0 || (int64_t)now.st_size != size) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "%s changed size while its journal was being checked; left alone",
		            path);
		goto out;
	}
	/* The file is not changed: a whole update is kept (roll forward).  It
	 * is synced first: a writer killed before its own fsync left it in
	 * the page cache only, and the journal must outlive that. */
	if (size > r.len && (rc = ps_io_sync_fd(ctx, fd, "the file")) < 0)
		goto out;
	if ((rc = ps_journal_remove(ctx, &j)) == 0)
		*recovered = size > r.len ? PDFSTAMP_RECOVER_COMPLETED : PDFSTAMP_RECOVER_UNWRITTEN;
out:
	ps_journal_end(&j);
	return rc;
}

int pdfstamp_recover(pdfstamp_ctx *ctx, const char *path, int *recovered)
{
	struct stat st;
	int fd, rc;

	*recovered = PDFSTAMP_RECOVER_NONE;
	/* Never blocks: a FIFO or device is refused after the open. */
	fd = open(path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno, pending = 1;
		/* A file we may not write cannot need our recovery unless it has a journal. */
		if ((e == EACCES || e == EPERM || e == EROFS) &&
		    pdfstamp_journal_pending(ctx, path, &pending) == 0 && !pending)
			return 0;
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot open for writing: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "not a regular file (%s)",
		            ps_io_file_kind(st.st_mode));
		goto out;
	}
	/* The writers' lock first, then the journal (never the other way). */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "the file is locked by another process");
		goto out;
	}
	rc = ps_journal_recover(ctx, fd, path, recovered);
out:
	close(fd);
	return rc;
}

int pdfstamp_journal_pending(pdfstamp_ctx *ctx, const char *path, int *pending)
{
	struct stat st;
	char *jp;

	*pending = 0;
	if (!(jp = journal_path(path)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (lstat(jp, &st) == 0)
		*pending = 1;
	else if (errno != ENOENT && errno != ENOTDIR) {
		int e = errno;
		ps_err(ctx, PDFSTAMP_E_IO, "cannot look for the journal %s: %s", jp, strerror(e));
		free(jp);
		return PDFSTAMP_E_IO;
	}
	free(jp);
	return 0;
}

