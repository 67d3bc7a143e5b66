/*
 * incr.c - the incremental writer: one appended revision per transaction.
 *
 * DESIGN NOTES
 *
 * States:   OPEN --commit ok--> DONE
 *             \--any failure--> FAILED   (free is valid in every state)
 *
 * Invariants:
 *  1. Append only (ISO 32000-2 7.5.6).  The first L bytes of the input
 *     (L = its length when the document was opened) are never written: with
 *     -o they are copied, in place they are left alone and only bytes from
 *     offset L on are written.
 *  2. New objects are plaintext in memory and encrypted only while being
 *     serialised: strings per /StrF, streams per /StmF, each with a fresh
 *     IV from the context's pool (AESV3, 7.6.3.1: IV || AES-256-CBC ||
 *     PKCS#7 pad), /Length = encrypted length.  Nothing encrypted is ever
 *     decrypted back into a file; no plaintext reaches any file.
 *  3. The new section has the form of the newest one (spec-facts 3.2): a
 *     classic table after a table or hybrid section (no /XRefStm carried),
 *     an xref stream after a stream, with /W sized from the largest offset
 *     and an entry for the xref stream itself.  The trailer carries every
 *     previous key (same /Encrypt, /Root, ID[0]) and sets /Prev, /Size and
 *     a fresh ID[1].
 *  4. Durability.  -o: an unnamed temp file in the target's directory
 *     (io.c) <- copy of L bytes + section, verify, fsync, chmod, rename,
 *     fsync dir.  To a descriptor (PDFSTAMP_WRITE_TO_FD, `-o -`): the same
 *     file in $TMPDIR, never named, verified, then copied to it.
 *     In place (under the exclusive lock taken at open): the section is
 *     built in memory; then the journal "FILE.pdfstamp-journal" (version
 *     2: FILE's device and inode, L, and the length and SHA-256 of the
 *     section, see "the journal" below) is written, fsynced, linked into
 *     place and the directory fsynced; then one pwrite at L, fsync,
 *     verify, and only then the journal is removed (the commit point).
 *     Any failure truncates back to L.  A crash leaves the journal; the
 *     next writing open (PDFSTAMP_OPEN_WRITE, under its lock) or
 *     pdfstamp_recover truncates the file back to L only if the journal
 *     is ours and the bytes after L are exactly the section it records.
 *     Read-only opens never act on a journal (they warn that one exists):
 *     a journal is input that anyone with write access to the directory
 *     could have planted.
 *  5. Before the commit reports success the output is re-opened, the new
 *     startxref must point at the new section, and every new object is
 *     looked up, decrypted and compared with what we meant to write.
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
#include "sha2.h"

#define JOURNAL_SUFFIX ".pdfstamp-journal"
#define JOURNAL_MAGIC "pdfstamp-journal 2"
#define JOURNAL_MAGIC_V1 "pdfstamp-journal 1"
#define JOURNAL_HASHSPAN 4096
#define JOURNAL_MAX 512

#define MAX_TABLE_OFFSET INT64_C(9999999999)

/* ---- small I/O helpers -------------------------------------------------------- */

/* Copies the first LEN bytes of SRC to DST (both at offset 0). */
static int copy_prefix(ps_ctx *ctx, int src, int dst, int64_t len)
{
	loff_t in = 0, out = 0;
	uint8_t *buf = NULL;

	while (in < len) {
		ssize_t k = copy_file_range(src, &in, dst, &out, (size_t)(len - in > (1 << 30) ? (1 << 30) : len - in), 0);
		if (k > 0)
			continue;
		if (k == 0)
			return ps_err(ctx, PDFSTAMP_E_IO, "the input shrank while it was being copied");
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP && errno != EINVAL)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot copy the input: %s", strerror(errno));
		break; /* fall back to read/write */
	}
	while (in < len) {
		ssize_t k, want = (ssize_t)(len - in > (1 << 20) ? (1 << 20) : len - in);
		if (!buf && !(buf = malloc(1 << 20)))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		k = pread(src, buf, (size_t)want, in);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			free(buf);
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot read the input: %s", k < 0 ? strerror(errno) : "short file");
		}
		if (ps_write_all(ctx, dst, buf, (size_t)k, out, "the output") < 0) {
			free(buf);
			return PDFSTAMP_E_IO;
		}
		in += k;
		out += k;
	}
	free(buf);
	return 0;
}

/* ---- the journal of in-place appends ------------------------------------------ */

/*
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
 */
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
		ssize_t k = pread(fd, buf, n > (int64_t)sizeof buf ? sizeof buf : (size_t)n, (off_t)off);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot read the file: %s", k < 0 ? strerror(errno) : "short file");
			goto out;
		}
		ps_sha256_update(&sc, buf, (size_t)k);
		off += k;
		n -= k;
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

/* The journal's path and directory, computed before anything is written
 * so that nothing after the point of no return needs to allocate. */
struct journal {
	char *path, *dir;
};

static int journal_names(ps_ctx *ctx, const char *file, struct journal *j)
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

static void journal_names_free(struct journal *j)
{
	free(j->path);
	free(j->dir);
}

/* Gives the complete, synced journal JFD the name J->path; fails (EEXIST)
 * if anything is there.  TMP is the temporary name of a named JFD, or
 * NULL for an unnamed (O_TMPFILE) one. */
static int journal_link(ps_ctx *ctx, const struct journal *j, int jfd, const char *tmp)
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

/* Writes the journal of appending SEC at L to FD (under the lock). */
static int journal_write(ps_ctx *ctx, const struct journal *j, int fd, const struct stat *st, int64_t l,
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

/* Removes the journal; allocates nothing. */
static int journal_remove(ps_ctx *ctx, const struct journal *j)
{
	if (unlink(j->path) < 0 && errno != ENOENT)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot remove the journal %s: %s", j->path, strerror(errno));
	return ps_sync_dir(ctx, j->dir);
}

/* Reads and checks the journal J of the locked file FD (stat FST) into R.
 * 1: there is none; 0: R is a journal of this file; < 0: refused. */
static int journal_load(ps_ctx *ctx, const struct journal *j, const struct stat *fst, struct jrec *r,
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
	while (got < (size_t)jst->st_size) {
		ssize_t k = pread(jfd, text + got, (size_t)jst->st_size - got, (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot read the journal %s: %s", j->path, strerror(errno));
			goto out;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
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
	struct journal j = {NULL, NULL};
	struct stat fst, jst, now;
	struct jrec r;
	char hex[65];
	int64_t size;
	int rc;

	*recovered = PDFSTAMP_RECOVER_NONE;
	if ((rc = journal_names(ctx, path, &j)) < 0)
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
		if (ftruncate(fd, (off_t)r.len) < 0 || fsync(fd) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot roll back the interrupted update: %s", strerror(errno));
			goto out;
		}
		*recovered = PDFSTAMP_RECOVER_ROLLED_BACK;
	} else {
		*recovered = PDFSTAMP_RECOVER_UNWRITTEN;
	}
	rc = journal_remove(ctx, &j);
out:
	journal_names_free(&j);
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

/* ---- transaction ---------------------------------------------------------------- */

int ps_update_begin(ps_doc *doc, const struct pdfstamp_write_opts *w, ps_update *up)
{
	ps_ctx *ctx = doc->ctx;
	uint32_t hi;

	memset(up, 0, sizeof *up);
	up->doc = doc;
	up->state = PS_UP_FAILED;
	if (!w || w->version < 1 || w->version > PDFSTAMP_WRITE_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "write options of an unknown version");
	if ((w->flags & PDFSTAMP_WRITE_TO_FD) && w->version < 2)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "PDFSTAMP_WRITE_TO_FD needs version 2 of the write options");
	if (!!(w->flags & PDFSTAMP_WRITE_IN_PLACE) + !!(w->flags & PDFSTAMP_WRITE_TO_FD) + !!w->output != 1)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "give exactly one of an output file, an output descriptor and "
		              "in-place mode");
	if (w->flags & PDFSTAMP_WRITE_TO_FD) {
		int rc = ps_check_out_fd(ctx, w->output_fd, doc->fd);
		if (rc < 0)
			return rc;
	}
	if ((w->flags & PDFSTAMP_WRITE_IN_PLACE) && !doc->locked)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "in-place updates need a document opened for writing");
	if (doc->encrypted && !doc->authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	if (doc->trailing > 0 && !(w->flags & PDFSTAMP_WRITE_ALLOW_TRAILING))
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%lld bytes follow the last %%%%EOF; refusing to append after them "
		              "(--allow-trailing-bytes keeps them and appends anyway)", (long long)doc->trailing);
	if (!doc->encrypted && doc->password_given)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "a password was given, but the file is not encrypted (its newest revision may have cut "
		              "off the encrypted ones); refusing to write in clear (give no password for plaintext "
		              "files)");
	if (doc->encrypted && (doc->strf_identity || doc->stmf_identity) && !(w->flags & PDFSTAMP_WRITE_ALLOW_IDENTITY))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the file is encrypted, but its %s filter is /Identity: new %s would be written in "
		              "clear (--allow-identity writes them so anyway)",
		              doc->strf_identity ? (doc->stmf_identity ? "string and stream" : "string") : "stream",
		              doc->strf_identity ? (doc->stmf_identity ? "strings and streams" : "strings") : "streams");
	up->base_len = doc->size;
	hi = doc->xref_max; /* the highest number in use */
	if (doc->size_key > PS_MAX_OBJNUM || hi >= PS_MAX_OBJNUM)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "no object numbers left for new objects");
	up->next_num = (uint32_t)doc->size_key > hi + 1 ? (uint32_t)doc->size_key : hi + 1;
	up->trailer_set = ps_new_dict();
	if (!up->trailer_set)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	up->state = PS_UP_OPEN;
	return 0;
}

uint32_t ps_update_alloc(ps_update *up)
{
	if (up->next_num > PS_MAX_OBJNUM) {
		ps_err(up->doc->ctx, PDFSTAMP_E_UNSUPPORTED, "no object numbers left for new objects");
		return 0;
	}
	return up->next_num++;
}

int ps_update_put(ps_update *up, uint32_t num, uint16_t gen, ps_obj *obj)
{
	size_t i;

	if (up->state != PS_UP_OPEN || !obj || num == 0) {
		ps_obj_free(obj);
		return ps_err(up->doc->ctx, obj ? PDFSTAMP_E_INTERNAL : PDFSTAMP_E_NOMEM,
		              obj ? "bad update state" : "out of memory");
	}
	if (up->doc->encrypt_num && num == up->doc->encrypt_num) {
		/* The page tree, /Annots, /Root or /Info of a damaged file names the
		 * encryption dictionary, which is never encrypted and must not be
		 * replaced (found by fuzz_incr). */
		ps_obj_free(obj);
		return ps_err(up->doc->ctx, PDFSTAMP_E_FORMAT,
		              "object %u, which this update would have to replace, is the /Encrypt dictionary: "
		              "the file is damaged", num);
	}
	for (i = 0; i < up->nobjs; i++) {
		if (up->objs[i].num == num) {
			/* Callers edit a pending object in place; a second put means one
			 * object plays two roles in a damaged file (meta on a file whose
			 * /Info is its /Root: replacing would free what the first
			 * role's caller still uses; found by replaying fuzz corpora). */
			ps_obj_free(obj);
			return ps_err(up->doc->ctx, PDFSTAMP_E_FORMAT,
			              "object %u would be replaced twice by this update: the file uses it for two "
			              "different things (e.g. as both /Root and /Info)", num);
		}
	}
	if (up->nobjs == up->cap) {
		size_t ncap = up->cap ? up->cap * 2 : 8;
		ps_newobj *n = realloc(up->objs, ncap * sizeof *n);
		if (!n) {
			ps_obj_free(obj);
			return ps_err(up->doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		up->objs = n;
		up->cap = ncap;
	}
	up->objs[up->nobjs].num = num;
	up->objs[up->nobjs].gen = gen;
	up->objs[up->nobjs].obj = obj;
	up->nobjs++;
	return 0;
}

int ps_update_set_trailer(ps_update *up, const char *key, ps_obj *val)
{
	int rc = ps_dict_put(up->trailer_set, key, val);

	return rc < 0 ? ps_err(up->doc->ctx, rc, "out of memory") : 0;
}

void ps_update_free(ps_update *up)
{
	size_t i;

	if (!up)
		return;
	for (i = 0; i < up->nobjs; i++)
		ps_obj_free(up->objs[i].obj);
	free(up->objs);
	ps_obj_free(up->trailer_set);
	memset(up, 0, sizeof *up);
}

/* ---- serialisation ---------------------------------------------------------------- */

struct enc_ud {
	ps_doc *doc;
	ps_buf tmp;
};

static int encrypt_string(void *ud_, ps_obj *str, const ps_obj *parent, const char *key)
{
	struct enc_ud *ud = ud_;
	int rc;

	if (parent && key && strcmp(key, "Contents") == 0 && ps_is_signature_dict(parent))
		return 0;
	ud->tmp.len = 0;
	if ((rc = ps_aesv3_encrypt(ud->doc->ctx, &ud->doc->cipher, str->u.str.p, str->u.str.len, &ud->tmp)) < 0)
		return rc;
	if (ps_str_set(str, ud->tmp.data, ud->tmp.len) < 0)
		return ps_err(ud->doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	str->u.str.hex = 1;
	return 0;
}

/* Appends "num gen obj ... endobj" for one new object. */
static int emit_object(ps_update *up, const ps_newobj *no, ps_buf *out)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	struct enc_ud ud = {doc, PS_BUF_INIT};
	ps_buf data = PS_BUF_INIT;
	ps_obj *copy = ps_obj_copy(no->obj);
	int rc = 0;

	if (!copy)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (doc->encrypted && !doc->strf_identity) {
		if ((rc = ps_obj_walk_strings(copy, encrypt_string, &ud)) < 0)
			goto out;
	}
	ps_buf_printf(out, "%u %u obj\n", no->num, no->gen);
	if (copy->kind == PS_STREAM) {
		if (ps_stream_needs_crypt(doc->encrypted, doc->stmf_identity, doc->sp.encrypt_metadata, copy)) {
			if ((rc = ps_aesv3_encrypt(ctx, &doc->cipher, copy->u.stm.data, copy->u.stm.len, &data)) < 0)
				goto out;
		} else {
			ps_buf_append(&data, copy->u.stm.data, copy->u.stm.len);
		}
		if ((rc = ps_dict_put(copy->u.stm.dict, "Length", ps_new_int((int64_t)data.len))) < 0) {
			rc = ps_err(ctx, rc, "out of memory");
			goto out;
		}
		ps_serialize(out, copy);
		ps_buf_puts(out, "\nstream\r\n");
		ps_buf_append(out, data.data, data.len);
		ps_buf_puts(out, "\nendstream\nendobj\n");
	} else {
		ps_serialize(out, copy);
		ps_buf_puts(out, "\nendobj\n");
	}
	if (out->oom || data.oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_buf_free(&ud.tmp);
	ps_buf_free(&data);
	ps_obj_free(copy);
	return rc;
}

static int cmp_newobj(const void *a, const void *b)
{
	const ps_newobj *x = a, *y = b;

	return x->num < y->num ? -1 : x->num > y->num;
}

/* The new trailer: every key of the newest one but the section-specific
 * ones, then /Prev, /Size, /ID and what the caller set (spec-facts 3.1). */
static int build_trailer(ps_update *up, uint32_t size, int for_stream, ps_obj **out)
{
	static const char *const drop[] = {"Prev", "XRefStm", "DocChecksum", "Type", "W", "Index", "Filter",
	                                   "DecodeParms", "Length", "Size", "ID"};
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	ps_obj *t = ps_obj_copy(doc->trailer), *id, *old_id, *id0;
	uint8_t rnd[16];
	size_t k;
	int rc = 0;

	if (!t)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (k = 0; k < sizeof drop / sizeof drop[0]; k++)
		ps_dict_del(t, drop[k]);
	if ((rc = ps_random(ctx, rnd, sizeof rnd)) < 0)
		goto fail;
	old_id = ps_dict_get(doc->trailer, "ID");
	id0 = ps_array_get(old_id, 0);
	id = ps_new_array();
	if (!id)
		goto oom;
	if (id0 && id0->kind == PS_STR) {
		rc = ps_array_push(id, ps_obj_copy(id0));
	} else {
		/* No usable /ID: both halves new (required when /Encrypt is present). */
		rc = ps_array_push(id, ps_new_str(rnd, sizeof rnd));
		if (rc == 0 && (rc = ps_random(ctx, rnd, sizeof rnd)) < 0) {
			ps_obj_free(id);
			goto fail;
		}
	}
	if (rc == 0)
		rc = ps_array_push(id, ps_new_str(rnd, sizeof rnd));
	if (rc < 0) {
		ps_obj_free(id);
		goto oom;
	}
	ps_array_get(id, 0)->u.str.hex = 1;
	ps_array_get(id, 1)->u.str.hex = 1;
	if ((rc = ps_dict_put(t, "ID", id)) < 0) /* owns id from here, also on failure */
		goto oom;
	if (for_stream && (rc = ps_dict_put(t, "Type", ps_new_name("XRef"))) < 0)
		goto oom;
	if ((rc = ps_dict_put(t, "Size", ps_new_int(size))) < 0 ||
	    (rc = ps_dict_put(t, "Prev", ps_new_int(doc->startxref))) < 0)
		goto oom;
	for (k = 0; k < up->trailer_set->u.dict.len; k++) {
		ps_dict_ent *e = &up->trailer_set->u.dict.ents[k];
		if ((rc = ps_dict_put(t, e->key, ps_obj_copy(e->val))) < 0)
			goto oom;
	}
	*out = t;
	return 0;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
fail:
	ps_obj_free(t);
	return rc;
}

static int bytes_for(uint64_t v)
{
	int n = 1;

	while (v >>= 8)
		n++;
	return n;
}

/* Serialises the whole section into OUT; OFFS[i] receives the offset of
 * object i (objs sorted by number). */
static int build_section(ps_update *up, int lead_eol, ps_buf *out, int64_t *xref_off)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	int stream_form = doc->sections[0].kind == PDFSTAMP_XREF_STREAM;
	int64_t *offs = NULL;
	ps_obj *trailer = NULL;
	uint32_t size, xnum = 0;
	size_t i, j;
	int rc = 0;

	if (up->nobjs == 0)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "an update with no objects");
	qsort(up->objs, up->nobjs, sizeof *up->objs, cmp_newobj);
	if (stream_form && (xnum = ps_update_alloc(up)) == 0)
		return ctx->errcode;
	offs = calloc(up->nobjs + 1, sizeof *offs);
	if (!offs)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (lead_eol)
		ps_buf_putc(out, '\n');
	for (i = 0; i < up->nobjs; i++) {
		offs[i] = up->base_len + (int64_t)out->len;
		if ((rc = emit_object(up, &up->objs[i], out)) < 0)
			goto out;
	}
	size = up->next_num > (uint32_t)doc->size_key ? up->next_num : (uint32_t)doc->size_key;
	*xref_off = up->base_len + (int64_t)out->len;
	if ((rc = build_trailer(up, size, stream_form, &trailer)) < 0)
		goto out;
	if (!stream_form) {
		if (*xref_off > MAX_TABLE_OFFSET) {
			rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			            "offsets past 9,999,999,999 bytes do not fit a classic xref table");
			goto out;
		}
		ps_buf_puts(out, "xref\n");
		for (i = 0; i < up->nobjs; i = j) {
			for (j = i + 1; j < up->nobjs && up->objs[j].num == up->objs[j - 1].num + 1; j++)
				;
			ps_buf_printf(out, "%u %zu\n", up->objs[i].num, j - i);
			for (; i < j; i++)
				ps_buf_printf(out, "%010" PRId64 " %05u n\r\n", offs[i], up->objs[i].gen);
		}
		ps_buf_puts(out, "trailer\n");
		ps_serialize(out, trailer);
		ps_buf_printf(out, "\nstartxref\n%" PRId64 "\n%%%%EOF\n", *xref_off);
	} else {
		/* The xref stream lists the new objects and itself (pdf-issues#523). */
		ps_buf rows = PS_BUF_INIT, z = PS_BUF_INIT;
		ps_obj *index = ps_new_array(), *w = ps_new_array();
		ps_newobj self = {xnum, 0, NULL};
		int wo = bytes_for((uint64_t)*xref_off);
		size_t n = up->nobjs + 1;

		offs[up->nobjs] = *xref_off;
		rc = (!index || !w) ? PDFSTAMP_E_NOMEM : 0;
		if (rc == 0)
			rc = ps_array_push(w, ps_new_int(1));
		if (rc == 0)
			rc = ps_array_push(w, ps_new_int(wo));
		if (rc == 0)
			rc = ps_array_push(w, ps_new_int(2));
		/* xnum is the highest number, so it extends or follows the list. */
		for (i = 0; rc == 0 && i < n; i = j) {
			const ps_newobj *oi = i < up->nobjs ? &up->objs[i] : &self;
			for (j = i + 1; j < n; j++) {
				const ps_newobj *oj = j < up->nobjs ? &up->objs[j] : &self;
				const ps_newobj *op = j - 1 < up->nobjs ? &up->objs[j - 1] : &self;
				if (oj->num != op->num + 1)
					break;
			}
			rc = ps_array_push(index, ps_new_int(oi->num));
			if (rc == 0)
				rc = ps_array_push(index, ps_new_int((int64_t)(j - i)));
		}
		for (i = 0; rc == 0 && i < n; i++) {
			uint16_t gen = i < up->nobjs ? up->objs[i].gen : 0;
			int b;
			ps_buf_putc(&rows, 1);
			for (b = wo - 1; b >= 0; b--)
				ps_buf_putc(&rows, (int)((uint64_t)offs[i] >> (8 * b)) & 0xff);
			ps_buf_putc(&rows, gen >> 8);
			ps_buf_putc(&rows, gen & 0xff);
		}
		if (rc == 0 && rows.oom)
			rc = PDFSTAMP_E_NOMEM;
		if (rc == 0)
			rc = ps_deflate(ctx, rows.data, rows.len, 6, &z);
		if (rc == 0) {
			rc = ps_dict_put(trailer, "W", w); /* the dict owns them now */
			w = NULL;
		}
		if (rc == 0) {
			rc = ps_dict_put(trailer, "Index", index);
			index = NULL;
		}
		if (rc == 0)
			rc = ps_dict_put(trailer, "Filter", ps_new_name("FlateDecode"));
		if (rc == 0)
			rc = ps_dict_put(trailer, "Length", ps_new_int((int64_t)z.len));
		if (rc == 0) {
			ps_buf_printf(out, "%u 0 obj\n", xnum);
			ps_serialize(out, trailer);
			ps_buf_puts(out, "\nstream\r\n");
			ps_buf_append(out, z.data, z.len);
			ps_buf_printf(out, "\nendstream\nendobj\nstartxref\n%" PRId64 "\n%%%%EOF\n", *xref_off);
		}
		ps_obj_free(index);
		ps_obj_free(w);
		ps_buf_free(&rows);
		ps_buf_free(&z);
		if (rc < 0) {
			if (rc == PDFSTAMP_E_NOMEM)
				rc = ps_err(ctx, rc, "out of memory building the xref stream");
			goto out;
		}
	}
	if (out->oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(trailer);
	free(offs);
	return rc;
}

/* ---- verification (invariant 5) --------------------------------------------- */

static int verify_output(ps_update *up, const char *path, int64_t xref_off)
{
	ps_ctx *ctx = up->doc->ctx;
	ps_doc *v = NULL;
	ps_buf data = PS_BUF_INIT;
	const ps_obj *id0;
	size_t i;
	int rc;

	data.secret = 1;
	/* Only the new section is read back; the security state is the
	 * original's (checked below: its /Encrypt is referenced unchanged). */
	if ((rc = pdfstamp_doc_open(ctx, &v, path, PS_OPEN_NO_RECOVER | PS_OPEN_NEWEST_ONLY)) < 0)
		goto out;
	if (v->startxref != xref_off || v->sections[0].prev != up->doc->startxref) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: the new revision is not the file's newest");
		goto out;
	}
	/* The security state may be carried over only because the new trailer
	 * references the same /Encrypt (and keeps ID[0], which R2-4 keys
	 * depend on and readers compare), and ps_update_put never replaces
	 * the /Encrypt object: this stands in for re-running the password,
	 * which the library does not keep. */
	id0 = ps_array_get(ps_dict_get(up->doc->trailer, "ID"), 0);
	if (id0 && id0->kind != PS_STR)
		id0 = NULL; /* unusable: the writer made a new /ID (build_trailer) */
	if (!ps_obj_equal(ps_dict_get(v->trailer, "Encrypt"), ps_dict_get(up->doc->trailer, "Encrypt"), 0) ||
	    (id0 && !ps_obj_equal(ps_array_get(ps_dict_get(v->trailer, "ID"), 0), id0, 0))) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: the new trailer changes /Encrypt or ID[0]");
		goto out;
	}
	if (up->doc->encrypted) {
		v->encrypted = 1;
		v->encrypt_num = up->doc->encrypt_num;
		v->sp = up->doc->sp;
		v->strf_identity = up->doc->strf_identity;
		v->stmf_identity = up->doc->stmf_identity;
		if ((rc = ps_doc_auth_cipher(v, &up->doc->cipher, up->doc->authenticated)) < 0)
			goto out;
	}
	for (i = 0; i < up->nobjs; i++) {
		ps_newobj *no = &up->objs[i];
		ps_obj *got = NULL;
		if ((rc = ps_doc_lookup(v, no->num, &got)) < 0)
			goto out;
		if (!ps_obj_equal(no->obj, got, 0)) {
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: object %u does not read back as written", no->num);
			goto out;
		}
		if (no->obj->kind == PS_STREAM) {
			if ((rc = ps_doc_stream_data(v, no->num, got, 0, &data)) < 0)
				goto out;
			if (data.len != no->obj->u.stm.len || memcmp(data.data, no->obj->u.stm.data, data.len) != 0) {
				rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: stream %u does not decrypt to what was written",
				            no->num);
				goto out;
			}
		}
	}
out:
	if (rc < 0 && ctx->errcode != PDFSTAMP_E_INTERNAL)
		rc = ps_err_wrap(ctx, PDFSTAMP_E_INTERNAL, "self-check of the output failed");
	ps_buf_free(&data);
	pdfstamp_doc_close(v);
	return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

static int last_byte_is_eol(ps_doc *doc, int *yes)
{
	ps_buf b = PS_BUF_INIT;
	int rc = ps_doc_pread(doc, doc->size - 1, 1, &b);

	*yes = rc == 0 && b.len == 1 && (b.data[0] == '\n' || b.data[0] == '\r');
	ps_buf_free(&b);
	return rc;
}

/* OUTPUT is a path, or NULL to copy the checked file to OUT_FD. */
static int commit_to_new_file(ps_update *up, const char *output, int out_fd, const ps_buf *sec,
                              int64_t xref_off)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	ps_outfile of;
	struct stat st;
	int rc;

	if ((rc = output ? ps_outfile_open(ctx, &of, output) : ps_outfile_open_fd(ctx, &of)) < 0)
		return rc;
	if (fstat(doc->fd, &st) < 0 || (int64_t)st.st_size != up->base_len) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "the input changed size since it was opened");
		goto out;
	}
	if ((rc = copy_prefix(ctx, doc->fd, of.fd, up->base_len)) < 0 ||
	    (rc = ps_write_all(ctx, of.fd, sec->data, sec->len, up->base_len, "the output")) < 0)
		goto out;
	ps_fault("after-write");
	if ((rc = verify_output(up, ps_outfile_path(&of), xref_off)) < 0)
		goto out;
	rc = output ? ps_outfile_commit(ctx, &of, doc->mode) : ps_outfile_copy_out(ctx, &of, out_fd);
out:
	ps_outfile_free(&of);
	return rc;
}

static int commit_in_place(ps_update *up, const ps_buf *sec, int64_t xref_off)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	struct journal j;
	struct stat st;
	int rc;

	if (fstat(doc->fd, &st) < 0 || (int64_t)st.st_size != up->base_len)
		return ps_err(ctx, PDFSTAMP_E_IO, "the file changed size since it was opened");
	if ((rc = journal_names(ctx, doc->path, &j)) < 0)
		return rc;
	/* The journal records the section (length and hash) before a byte of
	 * it reaches the file: recovery undoes exactly this update or nothing. */
	if ((rc = journal_write(ctx, &j, doc->fd, &st, up->base_len, sec)) < 0)
		goto out;
	ps_fault("after-journal");
	if ((rc = ps_write_all(ctx, doc->fd, sec->data, sec->len, up->base_len, "the update")) < 0)
		goto rollback;
	ps_fault("after-write");
	if ((rc = ps_sync_fd(ctx, doc->fd, "the file")) < 0)
		goto rollback;
	ps_fault("after-fsync");
	if ((rc = verify_output(up, doc->path, xref_off)) < 0)
		goto rollback;
	/* The commit point is the journal's removal.  If it cannot be removed
	 * the update is undone now (and otherwise by the next open). */
	if ((rc = journal_remove(ctx, &j)) < 0)
		goto rollback;
	goto out;
rollback:
	{
		char msg[256];
		int code = ctx->errcode;
		memcpy(msg, ctx->errmsg, sizeof msg);
		if (ftruncate(doc->fd, (off_t)up->base_len) < 0 || fsync(doc->fd) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "%s; and the rollback failed (%s): the journal %s"
			            " is kept: 'pdfstamp recover' (or the next in-place update) restores the file",
			            msg, strerror(errno), j.path);
			goto out;
		}
		journal_remove(ctx, &j);
		rc = ps_err(ctx, code, "%s", msg);
	}
out:
	journal_names_free(&j);
	return rc;
}

int ps_update_commit(ps_update *up, const struct pdfstamp_write_opts *w, struct pdfstamp_result *res)
{
	ps_doc *doc = up->doc;
	ps_buf sec = PS_BUF_INIT;
	int64_t xref_off = 0;
	int eol, rc;

	if (up->state != PS_UP_OPEN)
		return ps_err(doc->ctx, PDFSTAMP_E_INTERNAL, "bad update state");
	up->state = PS_UP_FAILED;
	if ((rc = last_byte_is_eol(doc, &eol)) < 0 || (rc = build_section(up, !eol, &sec, &xref_off)) < 0)
		goto out;
	if (w->flags & PDFSTAMP_WRITE_IN_PLACE)
		rc = commit_in_place(up, &sec, xref_off);
	else
		rc = commit_to_new_file(up, w->output, (w->flags & PDFSTAMP_WRITE_TO_FD) ? w->output_fd : -1, &sec,
		                        xref_off);
	if (rc < 0)
		goto out;
	up->state = PS_UP_DONE;
	if (res) {
		res->base_length = up->base_len;
		res->xref_offset = xref_off;
		res->bytes_appended = (int64_t)sec.len;
	}
out:
	ps_buf_free(&sec);
	return rc;
}
