/*
 * journal.c - the journal of in-place appends, and recovery from it.
 *
 * DESIGN NOTES
 *
 * What it owns: the file "FILE.pdfstamp-journal" that makes an in-place
 * incremental update (ISO 32000-2 7.5.6: a revision appended after the
 * file's last byte) undoable, its format, and the decision to roll an
 * interrupted update back.  incr.c calls it around the append
 * (ps_journal_begin, _write before a byte reaches the file, _remove as the
 * commit point, _rollback on failure); doc.c calls ps_journal_recover from
 * a writing open, and the public pdfstamp_recover / pdfstamp_journal_pending
 * live here.  It sits beside io.c (whose writes, fsyncs and truncation it
 * uses, so the fault sweep reaches every step) and below doc.c and incr.c:
 * it knows files, never documents.
 *
 * The append, in place, under the writers' exclusive flock:
 *
 *   ps_journal_write  (journal unnamed -> written -> fsynced -> linked ->
 *                      directory fsynced; fault point after-journal follows)
 *   pwrite at L, fsync the file, verify          (incr.c)
 *   ps_journal_remove (the commit point)
 *   any failure: ps_journal_rollback (truncate to L, fsync, remove)
 *
 * Format (version 2, one record, exactly as jrec_format writes it):
 *
 *   pdfstamp-journal 2
 *   file DEV INO              st_dev and st_ino of the file it guards
 *   length L                  the file's size before the update
 *   appended N SHA256         length and hash of exactly the bytes written at L
 *   before SHA256             hash of the JOURNAL_HASHSPAN bytes before L
 *
 * Recovery (ps_journal_recover) believes a journal only if it is a regular
 * file of this effective user with mode 0600 and one link, if it parses to
 * exactly this text, is bound to the file's device and inode, and the file
 * is either L bytes long (the update was never written: only the journal
 * goes) or L+N bytes whose last N hash to SHA256 (the update pdfstamp
 * wrote, whole: the file is truncated to L).  Anything else is reported
 * and left alone.  Writers create the journal unnamed (O_TMPFILE), write
 * and fsync it and only then link it into place, so a crash never leaves a
 * torn journal under the journal's name.
 *
 * Invariants:
 *  1. Nothing after the journal is linked allocates (the names are made by
 *     ps_journal_begin first), so a failure there cannot strand the file.
 *  2. Only bytes after L that are exactly the recorded section are ever
 *     removed; the first L bytes are never written, here or in incr.c.
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
#define JOURNAL_MAGIC "pdfstamp-journal 2"
#define JOURNAL_MAGIC_V1 "pdfstamp-journal 1"
#define JOURNAL_HASHSPAN 4096
#define JOURNAL_MAX 512

/* One record (the format: design notes). */
struct jrec {
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
		if ((rc = ps_pread_full(ctx, fd, buf, want, off, &k, "cannot read the file")) < 0)
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
	return snprintf(text, cap, JOURNAL_MAGIC "\nfile %ju %ju\nlength %" PRId64 "\nappended %" PRId64 " %s\nbefore %s\n",
	                r->dev, r->ino, r->len, r->appended, r->sum, r->before);
}

/* Parses TEXT (N bytes); 0 only if it is exactly what jrec_format writes. */
static int jrec_parse(const char *text, size_t n, struct jrec *r)
{
	char again[JOURNAL_MAX + 1];
	intmax_t len, app;
	int k;

	memset(r, 0, sizeof *r);
	if (sscanf(text, JOURNAL_MAGIC "\nfile %ju %ju\nlength %jd\nappended %jd %64s\nbefore %64s\n",
	           &r->dev, &r->ino, &len, &app, r->sum, r->before) != 6 || len < 0 || app <= 0)
		return -1;
	r->len = (int64_t)len;
	r->appended = (int64_t)app;
	k = jrec_format(r, again, sizeof again);
	if (k < 0 || (size_t)k != n || memcmp(again, text, n) != 0 || strspn(r->sum, "0123456789abcdef") != 64 ||
	    strspn(r->before, "0123456789abcdef") != 64)
		return -1;
	return 0;
}

int ps_journal_begin(ps_ctx *ctx, ps_journal *j, const char *file)
{
	char *copy;

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
		return ps_err(ctx, PDFSTAMP_E_IO, "a journal %s already exists (from an interrupted update that could not "
		              "be validated, or not written by pdfstamp); not appending: run 'pdfstamp recover' on the "
		              "file, or check the journal and remove it by hand", j->path);
	return ps_err(ctx, PDFSTAMP_E_IO, "cannot create the journal %s: %s", j->path, strerror(errno));
}

int ps_journal_write(ps_ctx *ctx, const ps_journal *j, int fd, const struct stat *st, int64_t l,
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
		jfd = mkstemp(tmp);
		if (jfd < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot create the journal %s: %s", j->path, strerror(errno));
			free(tmp);
			return rc;
		}
	}
	/* Exactly 0600 whatever the umask: recovery accepts nothing else. */
	if (fchmod(jfd, 0600) < 0)
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot set the mode of the journal %s: %s", j->path, strerror(errno));
	else if ((rc = ps_write_all(ctx, jfd, (const uint8_t *)text, (size_t)n, 0, "the journal")) == 0 &&
	         (rc = ps_sync_fd(ctx, jfd, "the journal")) == 0 && (rc = journal_link(ctx, j, jfd, tmp)) == 0 &&
	         (rc = ps_sync_dir(ctx, j->dir)) < 0)
		unlink(j->path);
	close(jfd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return rc;
}

int ps_journal_remove(ps_ctx *ctx, const ps_journal *j)
{
	if (unlink(j->path) < 0 && errno != ENOENT)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot remove the journal %s: %s", j->path, strerror(errno));
	return ps_sync_dir(ctx, j->dir);
}

int ps_journal_rollback(ps_ctx *ctx, const ps_journal *j, int fd, int64_t l)
{
	char msg[sizeof ctx->errmsg];
	int code = ctx->errcode;

	memcpy(msg, ctx->errmsg, sizeof msg);
	if (ps_truncate_fd(ctx, fd, l, "the file") < 0) /* errno kept */
		return ps_err(ctx, PDFSTAMP_E_IO, "%s; and the rollback failed (%s): the journal %s"
		              " is kept: 'pdfstamp recover' (or the next in-place update) restores the file",
		              msg, strerror(errno), j->path);
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
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s is a symbolic link, not a journal written by pdfstamp; "
			              "left alone", j->path);
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot read the journal %s: %s", j->path, strerror(errno));
	}
	if (fstat(jfd, jst) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat the journal %s: %s", j->path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(jst->st_mode)) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s is not a regular file, so not a journal written by pdfstamp; "
		            "left alone", j->path);
		goto out;
	}
	if (jst->st_uid != geteuid()) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s belongs to uid %ju, not to this user (uid %ju): "
		            "only journals of this user are trusted; left alone", j->path,
		            (uintmax_t)jst->st_uid, (uintmax_t)geteuid());
		goto out;
	}
	if ((jst->st_mode & 07777) != 0600 || jst->st_nlink != 1) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s has mode %04o and %ju link(s), pdfstamp writes 0600 "
		            "and 1; left alone", j->path, (unsigned)(jst->st_mode & 07777), (uintmax_t)jst->st_nlink);
		goto out;
	}
	if (jst->st_size > JOURNAL_MAX) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s is too large to be a pdfstamp journal; left alone", j->path);
		goto out;
	}
	if ((rc = ps_pread_full(ctx, jfd, text, (size_t)jst->st_size, 0, &got, "cannot read the journal %s",
	                        j->path)) < 0)
		goto out;
	text[got] = '\0';
	if (got >= sizeof JOURNAL_MAGIC_V1 - 1 && memcmp(text, JOURNAL_MAGIC_V1, sizeof JOURNAL_MAGIC_V1 - 1) == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s is a journal of an older pdfstamp, which does not record what "
		            "it appended, so it cannot be checked; left alone (compare the file with a backup, "
		            "then remove the journal by hand)", j->path);
		goto out;
	}
	if (strlen(text) != got || jrec_parse(text, got, r) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s is not a complete pdfstamp journal; left alone", j->path);
		goto out;
	}
	if (r->dev != (uintmax_t)fst->st_dev || r->ino != (uintmax_t)fst->st_ino) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s was written for another file (device %ju, inode %ju; "
		            "this one is %ju, %ju): the file was replaced or the journal copied; left alone",
		            j->path, r->dev, r->ino, (uintmax_t)fst->st_dev, (uintmax_t)fst->st_ino);
		goto out;
	}
out:
	close(jfd);
	return rc;
}

int ps_journal_recover(ps_ctx *ctx, int fd, const char *path, int *recovered)
{
	ps_journal j = {NULL, NULL};
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
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s says the file had %" PRId64 " bytes, but it has only %"
		            PRId64 "; left alone", j.path, r.len, size);
		goto out;
	}
	if ((rc = before_hash(ctx, fd, r.len, hex)) < 0)
		goto out;
	if (strcmp(hex, r.before) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s does not match the file's first %" PRId64
		            " bytes; left alone", j.path, r.len);
		goto out;
	}
	if (size > r.len) {
		if (size - r.len != r.appended) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s: the interrupted update appended %" PRId64
			            " bytes to %" PRId64 ", but the file has %" PRId64 " (bytes were appended since, or the "
			            "update is incomplete); left alone", j.path, r.appended, r.len, size);
			goto out;
		}
		if ((rc = range_hash(ctx, fd, r.len, r.appended, hex)) < 0)
			goto out;
		if (strcmp(hex, r.sum) != 0) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s: the %" PRId64 " bytes after offset %" PRId64
			            " are not the ones the interrupted update wrote; left alone", j.path, r.appended, r.len);
			goto out;
		}
	}
	/* Remove the name only if it is still the journal we checked. */
	if (lstat(j.path, &now) < 0 || now.st_dev != jst.st_dev || now.st_ino != jst.st_ino) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "journal %s changed while it was being checked; left alone", j.path);
		goto out;
	}
	/* flock is advisory: a program that is not pdfstamp may have appended
	 * while the bytes were hashed.  Truncate only what was checked. */
	if (fstat(fd, &now) < 0 || (int64_t)now.st_size != size) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s changed size while its journal was being checked; left alone",
		            path);
		goto out;
	}
	if (size > r.len) {
		if (ps_truncate_fd(ctx, fd, r.len, "the file") < 0) { /* errno kept */
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot roll back the interrupted update: %s", strerror(errno));
			goto out;
		}
		*recovered = PDFSTAMP_RECOVER_ROLLED_BACK;
	} else {
		*recovered = PDFSTAMP_RECOVER_UNWRITTEN;
	}
	rc = ps_journal_remove(ctx, &j);
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
		if ((e == EACCES || e == EPERM || e == EROFS) && pdfstamp_journal_pending(ctx, path, &pending) == 0 &&
		    !pending)
			return 0;
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot open for writing: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "not a regular file (%s)", ps_file_kind(st.st_mode));
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

