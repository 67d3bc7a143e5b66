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
 * Format (version 4: one record, exactly as jrec_format writes it, then
 * the update itself):
 *
 *   pdfstamp-journal 4
 *   file DEV INO              st_dev and st_ino of the file it guards
 *   length L                  the file's size before the update
 *   appended N SHA256         length and hash of exactly the bytes written at L
 *   before SHA256             hash of the JOURNAL_HASHSPAN bytes before L
 *   <N bytes>                 a copy of those bytes (already encrypted: exactly
 *                             what goes to the file), so the journal has
 *                             exactly (record) + N bytes
 *
 * Why the copy (version 4): an append can be torn without a power
 * failure.  ps_io_write_all is a pwrite loop, and Linux cuts even a single
 * pwrite of a regular file short at a page boundary once a fatal signal
 * is pending (generic_perform_write checks fatal_signal_pending between
 * pages), so a kill -9 during the write leaves L < S < L+N (seen: a file of
 * 4096 bytes for L = 2467, N = 2242).  A hash of the whole update cannot
 * tell a prefix of it from other bytes; the copy can, and costs N more
 * bytes in the same journal write, under the same single fsync.  The
 * alternatives were weaker: hashes of every page boundary's prefix cannot
 * judge a tail of zeros, and a journal-less "truncate whatever follows L"
 * would remove bytes that another writer appended.  Updates larger than
 * JOURNAL_COPY_MAX (64 MiB; a stamp is a few KB, a huge attachment could
 * pass it) get a version-3 journal, record only, so the journal never
 * doubles a huge write: their torn appends stay left alone, as before.
 *
 * Version 3 is the record alone; version 2 has the same text.  Version 2
 * (pdfstamp before roll forward) made the journal's durable removal the
 * point where the update was done, so an older pdfstamp finding a journal
 * next to a whole update would truncate it: version 3's new number makes
 * those refuse it ("not a complete pdfstamp journal; left alone"), as
 * version-3 readers refuse version 4.  A version-2 journal is read as
 * version 3: a whole update it guards is exactly the bytes its writer
 * built and synced, and keeping it removes nothing.  Version 1 journals
 * (no record of what was appended) are refused.
 *
 * Recovery (ps_journal_recover) believes a journal only if it is a regular
 * file of this effective user with mode 0600 and one link, if its record
 * parses to exactly this text, is bound to the file's device and inode,
 * and the JOURNAL_HASHSPAN bytes before L hash to `before`; a version-4
 * journal also only if N <= JOURNAL_COPY_MAX, its size is exactly the
 * record's plus N (a planted huge journal is refused by its size; only
 * the record, at most JOURNAL_MAX bytes, is read into memory, the copy is
 * hashed and compared in pieces) and its copy hashes to SHA256.  Then, by
 * the file's size S:
 *
 *   S == L            the update was never written: only the journal goes
 *                     (PDFSTAMP_RECOVER_UNWRITTEN);
 *   S == L+N, the last N bytes hash to SHA256
 *                     the update pdfstamp wrote, whole: KEPT, the journal
 *                     goes (PDFSTAMP_RECOVER_COMPLETED);
 *   L < S <= L+N, version 4, each byte after L equal to the copy's byte
 *                     at the same place or zero
 *                     a torn append: the file is truncated back to L and
 *                     fsynced, then the journal goes (PDFSTAMP_RECOVER_TORN);
 *   anything else     (S < L; S > L+N; bytes after L that differ from the
 *                     copy, or from the hash for a version-3 journal, or
 *                     any torn update under a version-3 journal) reported
 *                     (PDFSTAMP_E_FORMAT) and left alone, journal
 *                     included, for a human.
 *
 * A torn append (zeros): a power failure can make the file's new size
 * durable before all of its data (file systems that write the inode before
 * the data, e.g. ext4 data=writeback), which shows unwritten blocks as
 * zeros, anywhere in the range, not only at its end.  Such zeros are
 * accepted in place of the copy's bytes: removing them loses nothing (a
 * run of zeros carries no data), and a byte that is neither ours nor zero
 * (another writer's, or a damaged one) still leaves the file alone.  S ==
 * L+N with bytes that fail the hash but pass this test is the same torn
 * update, and is cut off too.
 *
 * Threat model.  Who can plant a journal that recovery believes: only
 * this user (or root), since it must be a regular file owned by the
 * effective user, mode 0600, one link, bound to the file's device and
 * inode and to the 4 KiB before L.  Other users with write access to the
 * directory can create, replace or remove the name, which at most makes
 * recovery refuse (exit 4) or find nothing; a copied or stale journal
 * does not match the inode or the bytes.  What a believed journal can
 * make us do: remove itself next to a file that already holds exactly the
 * bytes it names (kept), or truncate the file back to L, but only when
 * every byte after L is the byte the journal itself holds at that place,
 * or zero, so that nothing is removed that the journal does not contain,
 * and only bytes after L, the first L bytes being the ones it hashed.  A
 * journal of this user's own making can therefore only cut off bytes it
 * already knows, which the user could cut off anyway.  Another user who
 * appends to the file after a torn update (ignoring the flock) makes the
 * bytes differ, so the file is left alone; one who overwrites a whole
 * update (whose fsync had returned, its journal surviving a crash) with
 * zeros has destroyed it already, and recovery then restores the file's
 * first L bytes, as they were, rather than keep the damage: the one case
 * where recovery removes (the remains of) an update whose fsync had
 * returned, and it takes write access to the file and a crash between
 * that fsync and the journal's removal.  Sizes are re-checked just before
 * the truncation; a writer that ignores the flock and appends in that
 * window of microseconds is not excluded (flock is advisory).
 *
 * Recovery therefore never writes or extends the file, and truncates it
 * only back to L, over a torn copy of the journal's own bytes; it fsyncs
 * a kept update before removing its journal (its writer may have died
 * before its own fsync), and fsyncs the truncation before removing the
 * journal (a crash in between finds S == L).  If the in-process
 * rollback cannot truncate, it sets the journal's mode to 0400, so that
 * recovery refuses it instead of keeping an update that failed.  Writers
 * create the journal unnamed (O_TMPFILE), write and fsync it and only
 * then link it into place, so a crash never leaves a torn journal under
 * the journal's name.
 *
 * What a crash leaves, by the step it interrupts: before the link, no
 * journal and the file untouched; between the link and the file's fsync,
 * the file at L (journal removed by recovery), whole (kept), or torn, by
 * a kill during the write or a power failure (version 4: cut back to L,
 * the journal removed; version 3: left alone, reported); after the file's
 * fsync, the whole update, kept.  An update killed between its write and
 * the end of its self-check (verify_output, incr.c) is kept although that
 * check did not finish: its bytes are exactly the ones pdfstamp built,
 * and `pdfstamp verify` checks them.
 *
 * Invariants:
 *  1. Nothing after the journal is linked allocates (the names are made by
 *     ps_journal_begin first), so a failure there cannot strand the file.
 *  2. Only bytes after L are ever removed, and only (a) by the process
 *     that wrote them (ps_journal_rollback after a failed write, fsync or
 *     verify), or (b) by recovery, when S <= L+N and every byte after L is
 *     the version-4 journal's copy of that byte or zero, under the same
 *     checks of owner, mode, links, inode and `before` as any recovery.
 *     A whole update is never removed by recovery.  The first L bytes are
 *     never written, here or in incr.c.
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
#define JOURNAL_MAGIC "pdfstamp-journal 4" /* the record, then the update's bytes */
#define JOURNAL_MAGIC_V3 "pdfstamp-journal 3"
#define JOURNAL_MAGIC_V2 "pdfstamp-journal 2" /* the same text; read as version 3 */
#define JOURNAL_MAGIC_V1 "pdfstamp-journal 1"
#define JOURNAL_HASHSPAN 4096
#define JOURNAL_MAX 512                      /* the record (all of a version 2 or 3 journal) */
#define JOURNAL_COPY_MAX ((int64_t)64 << 20) /* larger updates get a version-3 journal */

/* One record (the format: design notes). */
struct jrec {
	int version;            /* 4, 3 or 2 (2 has the text of 3) */
	uintmax_t dev, ino;
	int64_t len, appended;
	char sum[65], before[65];
	int64_t head;           /* version 4: the record's length, where the copy starts */
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
	const char *magic = r->version == 4 ? JOURNAL_MAGIC
	                    : r->version == 3 ? JOURNAL_MAGIC_V3 : JOURNAL_MAGIC_V2;

	return snprintf(text, cap, "%s\nfile %ju %ju\nlength %" PRId64 "\nappended %" PRId64
	                " %s\nbefore %s\n", magic, r->dev, r->ino, r->len, r->appended, r->sum,
	                r->before);
}

/* Parses the record TEXT (N bytes); 0 only if it is exactly what
 * jrec_format writes (version 4, 3, or 2 with the text of 3). */
static int jrec_parse(const char *text, size_t n, struct jrec *r)
{
	char again[JOURNAL_MAX + 1];
	intmax_t len, app;
	size_t m = sizeof JOURNAL_MAGIC - 1;
	int k;

	memset(r, 0, sizeof *r);
	if (n > m && memcmp(text, JOURNAL_MAGIC, m) == 0)
		r->version = 4;
	else if (n > m && memcmp(text, JOURNAL_MAGIC_V3, m) == 0)
		r->version = 3;
	else if (n > m && memcmp(text, JOURNAL_MAGIC_V2, m) == 0)
		r->version = 2;
	else
		return -1;
	if (sscanf(text + m, "\nfile %ju %ju\nlength %jd\nappended %jd %64s\nbefore %64s\n",
	           &r->dev, &r->ino, &len, &app, r->sum, r->before) != 6 || len < 0 || app <= 0)
		return -1;
	r->len = (int64_t)len;
	r->appended = (int64_t)app;
	r->head = (int64_t)n;
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
	/* The update's own bytes follow the record, so that recovery can tell
	 * a torn append from anything else (design notes); a very large one
	 * gets a version-3 journal (record only). */
	r.version = r.appended <= JOURNAL_COPY_MAX ? 4 : 3;
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
	else if ((rc = ps_io_write_pair(ctx, jfd, text, (size_t)n, sec->data,
	                                r.version < 4 ? 0 : sec->len, 0, "the journal")) == 0 &&
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

/* The end of the record at the start of a version-4 journal: just after
 * its fifth newline, or 0 if the N bytes of TEXT hold none. */
static size_t record_end(const char *text, size_t n)
{
	size_t i;
	int lines = 0;

	for (i = 0; i < n; i++)
		if (text[i] == '\n' && ++lines == 5)
			return i + 1;
	return 0;
}

/* Reads and checks the journal J of the locked file FD (stat FST) into R.
 * 1: there is none; 0: R is a journal of this file (a version-4 one whose
 * copy of the update hashes to its record, its descriptor left open in
 * *JFD_OUT for the caller to close; else *JFD_OUT is -1); < 0: refused. */
static int journal_load(ps_ctx *ctx, const ps_journal *j, const struct stat *fst, struct jrec *r,
                        struct stat *jst, int *jfd_out)
{
	char text[JOURNAL_MAX + 1], hex[65];
	size_t got = 0, want, head;
	int jfd, rc = 0;

	*jfd_out = -1;
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
	/* Only the record is read into memory; a version-4 journal's copy is
	 * compared and hashed in pieces, and its size is checked first. */
	want = jst->st_size > JOURNAL_MAX ? JOURNAL_MAX : (size_t)jst->st_size;
	if ((rc = ps_io_pread_full(ctx, jfd, text, want, 0, &got,
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
	head = got;
	if (got >= sizeof JOURNAL_MAGIC - 1 &&
	    memcmp(text, JOURNAL_MAGIC, sizeof JOURNAL_MAGIC - 1) == 0)
		head = record_end(text, got);
	else if (jst->st_size > JOURNAL_MAX) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "%s is too large to be a pdfstamp journal; left alone", j->path);
		goto out;
	}
	if (head == 0 || strlen(text) < head || jrec_parse(text, head, r) < 0) {
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
	if (r->version < 4)
		goto out;
	/* Version 4: exactly the record and the N bytes of the update. */
	if (r->appended > JOURNAL_COPY_MAX || (int64_t)jst->st_size != r->head + r->appended) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s has %jd bytes, but its record (%jd bytes) says it holds "
		            "an update of %" PRId64 " (at most %" PRId64 "); left alone", j->path,
		            (intmax_t)jst->st_size, (intmax_t)r->head, r->appended,
		            JOURNAL_COPY_MAX);
		goto out;
	}
	if ((rc = range_hash(ctx, jfd, r->head, r->appended, hex)) < 0)
		goto out;
	if (strcmp(hex, r->sum) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s: its copy of the update does not hash to its record; "
		            "left alone", j->path);
		goto out;
	}
	*jfd_out = jfd;
	return 0;
out:
	close(jfd);
	return rc;
}

/* Whether the N bytes of FD at L are a torn copy of the update whose copy
 * is at HEAD in the journal JFD: each byte equal to the copy's or zero
 * (design notes, "A torn append").  1: they are; 0: they are not; < 0:
 * a read failed. */
static int torn_prefix(ps_ctx *ctx, int fd, int64_t l, int jfd, int64_t head, int64_t n)
{
	uint8_t a[8192], b[8192];
	int64_t off = 0;
	size_t want, ka, kb, i;
	int rc;

	while (off < n) {
		want = n - off > (int64_t)sizeof a ? sizeof a : (size_t)(n - off);
		if ((rc = ps_io_pread_full(ctx, fd, a, want, l + off, &ka,
		                           "cannot read the file")) < 0 ||
		    (rc = ps_io_pread_full(ctx, jfd, b, want, head + off, &kb,
		                           "cannot read the journal")) < 0)
			return rc;
		if (ka < want || kb < want)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot read the file: short file");
		for (i = 0; i < want; i++)
			if (a[i] != b[i] && a[i] != 0)
				return 0;
		off += (int64_t)want;
	}
	return 1;
}

int ps_journal_recover(ps_ctx *ctx, int fd, const char *path, int *recovered)
{
	ps_journal j = {.path = NULL};
	struct stat fst, jst, now;
	struct jrec r;
	char hex[65];
	int64_t size, got;
	int rc, jfd = -1, whole = 0, torn = 0;

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
	if ((rc = journal_load(ctx, &j, &fst, &r, &jst, &jfd)) != 0) {
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
	/* S == L, S == L+N with our hash, and (version 4) L < S <= L+N with a
	 * torn copy of our bytes are acted on (design notes). */
	got = size - r.len;
	if (got > 0 && got >= r.appended) {
		if ((rc = range_hash(ctx, fd, r.len, r.appended, hex)) < 0)
			goto out;
		whole = strcmp(hex, r.sum) == 0;
	}
	if (got > 0 && !whole && got <= r.appended && r.version >= 4) {
		if ((rc = torn_prefix(ctx, fd, r.len, jfd, r.head, got)) < 0)
			goto out;
		torn = rc;
		rc = 0;
	}
	if (got > 0 && !whole && !torn) {
		if (got < r.appended && r.version < 4)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "journal %s: the interrupted update was to append %" PRId64
			            " bytes to %" PRId64 ", but the file has %" PRId64
			            ": the update is torn, and this older journal holds no copy of "
			            "it to compare with; left alone: compare the file with a "
			            "backup, or truncate it to %" PRId64 " bytes, then remove the "
			            "journal",
			            j.path, r.appended, r.len, size, r.len);
		else if (got <= r.appended)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "journal %s: the %" PRId64 " bytes after offset %" PRId64
			            " are not the ones the interrupted update wrote (nor a torn "
			            "part of them); left alone", j.path, got, r.len);
		else
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "journal %s: %" PRId64 " bytes follow offset %" PRId64
			            ", more than the interrupted update's %" PRId64
			            " (bytes appended by something else); left alone: check "
			            "the file, then remove the journal", j.path, got, r.len,
			            r.appended);
		goto out;
	}
	if (whole && got > r.appended) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "journal %s: the interrupted update (%" PRId64
		            " bytes at %" PRId64 ") is whole, but %" PRId64
		            " more bytes were appended after it by something else; "
		            "left alone: check the file, then remove the journal",
		            j.path, r.appended, r.len, got - r.appended);
		goto out;
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
	/* A whole update is kept (roll forward).  It is synced first: a writer
	 * killed before its own fsync left it in the page cache only, and the
	 * journal must outlive that.  A torn one is cut off (truncate and
	 * fsync) before its journal goes: a crash in between finds S == L. */
	if (whole && (rc = ps_io_sync_fd(ctx, fd, "the file")) < 0)
		goto out;
	if (torn && (rc = ps_io_truncate_fd(ctx, fd, r.len, "the torn update")) < 0)
		goto out;
	if ((rc = ps_journal_remove(ctx, &j)) == 0)
		*recovered = whole ? PDFSTAMP_RECOVER_COMPLETED
		             : torn ? PDFSTAMP_RECOVER_TORN : PDFSTAMP_RECOVER_UNWRITTEN;
out:
	if (jfd >= 0)
		close(jfd);
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

