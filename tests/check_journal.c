/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_journal.c - the journal of in-place updates at library level
 * (journal.c pdfstamp_recover, ps_journal_recover; doc.c pdfstamp_doc_open).
 *
 * A genuine crash journal is made by a child process that runs an
 * in-place pdfstamp_meta on a copy of samples/r6-table.pdf with
 * PDFSTAMP_FAULT=kill:after-write: the update is whole in the file (the
 * page cache outlives the process), the journal next to it.  Each test
 * then changes one thing (mode, owner, a symlink or FIFO at the journal's
 * name, bytes appended after the update, the update torn or changed, a
 * replaced inode) and checks that recovery refuses with
 * PDFSTAMP_E_FORMAT and leaves the file and the journal alone, that
 * read-only opens never modify anything, that FIFOs are refused without
 * blocking, and that the unchanged journal is recovered forward by
 * pdfstamp_recover and by a PDFSTAMP_OPEN_WRITE open (which recovers
 * under its own lock instead of taking a second one): the whole update is
 * kept, byte for byte, and readable; the journal removed.  A file cut
 * back to L has only its journal removed; a version-2 journal (same text)
 * is read as version 3.
 *
 * Torn updates (journal format 4, which carries a copy of the update):
 * the file cut at every length between L and L+N, the journal put back
 * each time, is truncated back to L by recovery, byte for byte the
 * sample, journal gone; a writing open does the same.  Zeros in place of
 * the update's bytes count as torn; one other byte changed, bytes beyond
 * L+N, a copy that does not hash to the record, a journal larger than
 * its record says (or claiming more than 64 MiB) are refused and change
 * nothing; a version-3 journal (the record alone) next to a torn file is
 * still left alone.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pdfstamp.h"

static char dir[64], file[128], jpath[160], pw[256];
static long orig_size, crashed_size;
static pdfstamp_ctx *ctx;
static unsigned warnings;

static void on_warn(void *ud, const char *msg)
{
	(void)ud;
	(void)msg;
	warnings++;
}

static long size_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	return (long)st.st_size;
}

static void copy_sample(const char *dst)
{
	char src[512], buf[65536];
	FILE *in, *out;
	size_t n;

	snprintf(src, sizeof src, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	in = fopen(src, "rb");
	ck_assert_ptr_nonnull(in);
	out = fopen(dst, "wb");
	ck_assert_ptr_nonnull(out);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
}

static void read_pw(void)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof p, "%s/../samples/user.pw", TEST_SRCDIR);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(pw, sizeof pw, f));
	fclose(f);
	pw[strcspn(pw, "\r\n")] = '\0';
}

/* An in-place meta update on FILE, killed after its write (child). */
static void crash_update(void)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct pdfstamp_meta_item it = {"Title", "journal test"};
		struct pdfstamp_meta_opts mo = PDFSTAMP_META_OPTS_INIT;
		struct pdfstamp_write_opts wo = PDFSTAMP_WRITE_OPTS_INIT;
		pdfstamp_ctx *c;
		pdfstamp_doc *d;

		setenv("PDFSTAMP_FAULT", "kill:after-write", 1);
		mo.items = &it;
		mo.nitems = 1;
		wo.flags = PDFSTAMP_WRITE_IN_PLACE;
		if (pdfstamp_ctx_new(&c) != 0 ||
		    pdfstamp_doc_open(c, &d, file, PDFSTAMP_OPEN_WRITE) != 0 ||
		    pdfstamp_doc_auth(d, pw, strlen(pw), 0) != 0)
			_exit(2);
		pdfstamp_meta(d, &mo, &wo, NULL);
		_exit(3); /* not reached: killed */
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	              "the update was not killed (status %d)", st);
	ck_assert_int_eq(access(jpath, F_OK), 0);
	ck_assert_int_gt(size_of(file), orig_size);
	crashed_size = size_of(file);
}

/* The first N bytes of FILE (N <= 65536) into BUF. */
static void read_prefix(uint8_t *buf, size_t n)
{
	FILE *f = fopen(file, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(buf, 1, n, f), n);
	fclose(f);
}

/* FILE opens, authenticates and passes pdfstamp_verify, with one revision
 * more than the sample and the sample's bytes first. */
static void whole_update_kept(void)
{
	static uint8_t a[65536], b[65536];
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT;
	const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	char src[512];
	pdfstamp_doc *d = NULL;
	FILE *f;

	ck_assert_int_eq(size_of(file), crashed_size);
	ck_assert_int_le(orig_size, (long)sizeof a);
	snprintf(src, sizeof src, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	f = fopen(src, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(a, 1, (size_t)orig_size, f), (size_t)orig_size);
	fclose(f);
	read_prefix(b, (size_t)orig_size);
	ck_assert_msg(memcmp(a, b, (size_t)orig_size) == 0, "the original bytes changed");
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &d, file, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(d, pw, strlen(pw), 0), 0);
	ck_assert_int_eq(pdfstamp_doc_info(d, &info), 0);
	ck_assert_int_eq(info.revisions, 2);
	ck_assert_int_eq(pdfstamp_verify(d, &vo, &rep), 0);
	pdfstamp_info_clear(&info);
	pdfstamp_doc_close(d);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_journal-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/doc.pdf", dir);
	snprintf(jpath, sizeof jpath, "%s.pdfstamp-journal", file);
	read_pw();
	copy_sample(file);
	orig_size = size_of(file);
	crash_update();
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	warnings = 0;
	pdfstamp_ctx_set_warn(ctx, on_warn, NULL);
}

static void teardown(void)
{
	char cmd[128];

	pdfstamp_ctx_free(ctx);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* The whole journal into *OUT (malloc'd); its size. */
static size_t slurp(const char *p, uint8_t **out)
{
	struct stat st;
	FILE *f = fopen(p, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	*out = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(*out);
	ck_assert_uint_eq(fread(*out, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	return (size_t)st.st_size;
}

/* The length of the journal's record: up to its fifth newline. */
static size_t record_len(void)
{
	uint8_t *j;
	size_t n = slurp(jpath, &j), i;
	int lines = 0;

	for (i = 0; i < n; i++)
		if (j[i] == '\n' && ++lines == 5)
			break;
	free(j);
	ck_assert_int_eq(lines, 5);
	return i + 1;
}

/* Turns the journal into a version-DIGIT one: its record alone, in place
 * (same inode, mode and owner). */
static void make_old(char digit)
{
	size_t rl = record_len();
	int fd = open(jpath, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)rl), 0);
	ck_assert_int_eq(pwrite(fd, &digit, 1, 17), 1);
	close(fd);
}

/* (Re)creates the journal with the N bytes J, mode 0600. */
static void put_journal(const uint8_t *j, size_t n)
{
	int fd;

	unlink(jpath);
	fd = open(jpath, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0600), 0);
	ck_assert_int_eq(write(fd, j, n), (ssize_t)n);
	close(fd);
}

/* Makes FILE the sample followed by the N bytes UPD. */
static void put_tail(const uint8_t *upd, size_t n)
{
	int fd = open(file, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, orig_size), 0);
	ck_assert_int_eq(pwrite(fd, upd, n, orig_size), (ssize_t)n);
	close(fd);
}

/* FILE is byte for byte the sample again. */
static void is_sample(void)
{
	static uint8_t a[65536], b[65536];
	char src[512];
	FILE *f;

	ck_assert_int_eq(size_of(file), orig_size);
	snprintf(src, sizeof src, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	f = fopen(src, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(a, 1, (size_t)orig_size, f), (size_t)orig_size);
	fclose(f);
	read_prefix(b, (size_t)orig_size);
	ck_assert_msg(memcmp(a, b, (size_t)orig_size) == 0, "the original bytes changed");
}

/* The N = crashed_size - orig_size bytes of the update, from FILE. */
static uint8_t *the_update(void)
{
	size_t n = (size_t)(crashed_size - orig_size);
	uint8_t *u = malloc(n);
	int fd = open(file, O_RDONLY);

	ck_assert_ptr_nonnull(u);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, u, n, orig_size), (ssize_t)n);
	close(fd);
	return u;
}

/* pdfstamp_recover refuses with E_FORMAT and changes nothing. */
static void refused(const char *why)
{
	long before = size_of(file);
	int rec = -1, rc = pdfstamp_recover(ctx, file, &rec);

	ck_assert_msg(rc == PDFSTAMP_E_FORMAT, "%s: rc %d (%s)", why, rc, pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_NONE);
	ck_assert_int_eq(size_of(file), before);
}

START_TEST(test_genuine_completed)
{
	int rec = -1, pending = -1;

	ck_assert_int_eq(pdfstamp_journal_pending(ctx, file, &pending), 0);
	ck_assert_int_eq(pending, 1);
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_COMPLETED);
	ck_assert_int_ne(access(jpath, F_OK), 0);
	whole_update_kept();
	ck_assert_int_eq(pdfstamp_journal_pending(ctx, file, &pending), 0);
	ck_assert_int_eq(pending, 0);
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_NONE);
	ck_assert_int_eq(size_of(file), crashed_size);
}
END_TEST

START_TEST(test_journal_format)
{
	/* Version 4: the record of version 3, then the update's bytes. */
	struct stat st;
	uint8_t *j, *u = the_update();
	size_t n = slurp(jpath, &j), rl = record_len(), un = (size_t)(crashed_size - orig_size);

	j[n] = '\0';
	ck_assert_msg(strncmp((char *)j, "pdfstamp-journal 4\nfile ", 24) == 0, "journal: %s",
	              (char *)j);
	ck_assert_uint_eq(n, rl + un);
	ck_assert_msg(memcmp(j + rl, u, un) == 0, "the journal's copy is not the update");
	free(j);
	free(u);
	ck_assert_int_eq(stat(jpath, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_nlink, 1);
}
END_TEST

START_TEST(test_version2_read_as_3)
{
	/* Same inode, mode and owner; the record alone, version digit 2. */
	int rec = -1;

	make_old('2');
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_COMPLETED);
	ck_assert_int_ne(access(jpath, F_OK), 0);
	whole_update_kept();
}
END_TEST

START_TEST(test_version3_read)
{
	/* A version-3 journal (the record alone) still recovers a whole update. */
	int rec = -1;

	make_old('3');
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_COMPLETED);
	ck_assert_int_ne(access(jpath, F_OK), 0);
	whole_update_kept();
}
END_TEST

START_TEST(test_refuses_other_versions)
{
	int fd = open(jpath, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "3", 1, 17), 1);
	close(fd);
	refused("version 3 followed by a copy");
	ck_assert_int_eq(access(jpath, F_OK), 0);
	fd = open(jpath, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "5", 1, 17), 1);
	close(fd);
	refused("version 5");
	ck_assert_int_eq(access(jpath, F_OK), 0);
	fd = open(jpath, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "1", 1, 17), 1);
	close(fd);
	refused("version 1");
	ck_assert_int_eq(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_unwritten)
{
	/* The file at L: the update never reached it (or was undone). */
	int rec = -1;

	ck_assert_int_eq(truncate(file, orig_size), 0);
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_UNWRITTEN);
	ck_assert_int_eq(size_of(file), orig_size);
	ck_assert_int_ne(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_refuses_torn_v3)
{
	/* A version-3 journal (the record alone) and fewer bytes than recorded.
	 * Nothing proves they are a prefix of ours: left alone, journal kept. */
	long half = orig_size + (crashed_size - orig_size) / 2;
	pdfstamp_doc *doc = NULL;

	make_old('3');
	ck_assert_int_eq(truncate(file, half), 0);
	refused("a torn update");
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "torn"));
	ck_assert_int_eq(access(jpath, F_OK), 0);
	ck_assert_int_eq(truncate(file, orig_size + 1), 0);
	refused("a torn update of 1 byte");
	/* a writing open refuses too, and changes nothing */
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, file, PDFSTAMP_OPEN_WRITE),
	                 PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(size_of(file), orig_size + 1);
	ck_assert_int_eq(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_torn_every_length)
{
	/* A kill during the write (a pwrite cut at a page boundary) or a power
	 * failure: the file cut anywhere in (L, L+N), the journal as written. */
	uint8_t *j, *u = the_update();
	size_t jn = slurp(jpath, &j);
	long s;
	int rec;

	for (s = orig_size + 1; s < crashed_size; s++) {
		put_tail(u, (size_t)(s - orig_size));
		put_journal(j, jn);
		rec = -1;
		ck_assert_msg(pdfstamp_recover(ctx, file, &rec) == 0, "length %ld: %s", s,
		              pdfstamp_ctx_errmsg(ctx));
		ck_assert_int_eq(rec, PDFSTAMP_RECOVER_TORN);
		ck_assert_int_eq(size_of(file), orig_size);
		ck_assert_int_ne(access(jpath, F_OK), 0);
	}
	is_sample();
	free(j);
	free(u);
}
END_TEST

START_TEST(test_torn_write_open)
{
	/* A writing open rolls the torn update back under its own lock, warns,
	 * and reads the sample (one revision). */
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	pdfstamp_doc *doc = NULL;
	int rc;

	ck_assert_int_eq(truncate(file, orig_size + (crashed_size - orig_size) / 2), 0);
	rc = pdfstamp_doc_open(ctx, &doc, file, PDFSTAMP_OPEN_WRITE);
	ck_assert_msg(rc == 0, "open: %s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_uint_ge(warnings, 1);
	ck_assert_int_ne(access(jpath, F_OK), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, pw, strlen(pw), 0), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.revisions, 1);
	pdfstamp_info_clear(&info);
	pdfstamp_doc_close(doc);
	is_sample();
}
END_TEST

START_TEST(test_torn_zeros)
{
	/* Zeros where data was not yet written (a power failure that made the
	 * size durable first): in the middle, at the end, all of it, and
	 * with the full length L+N. */
	uint8_t *u = the_update(), *z;
	size_t n = (size_t)(crashed_size - orig_size);
	int rec = -1;

	ck_assert_uint_gt(n, 200);
	z = malloc(n);
	ck_assert_ptr_nonnull(z);
	memcpy(z, u, n);
	memset(z + 50, 0, 60);
	memset(z + n - 40, 0, 40);
	put_tail(z, n - 10);
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_TORN);
	is_sample();
	/* L+N bytes, a block of them zeros: torn as well (a new crash: the
	 * update is encrypted with new IVs) */
	teardown();
	setup();
	free(u);
	u = the_update();
	ck_assert_uint_eq((size_t)(crashed_size - orig_size), n);
	memcpy(z, u, n);
	memset(z + 100, 0, 60);
	put_tail(z, n);
	rec = -1;
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_TORN);
	is_sample();
	/* nothing but zeros */
	teardown();
	setup();
	memset(z, 0, n);
	put_tail(z, n / 2);
	rec = -1;
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), 0);
	ck_assert_int_eq(rec, PDFSTAMP_RECOVER_TORN);
	is_sample();
	free(z);
	free(u);
}
END_TEST

START_TEST(test_torn_refuses_other_bytes)
{
	/* A torn length with one byte that is neither ours nor zero. */
	uint8_t *u = the_update();
	size_t n = (size_t)(crashed_size - orig_size) / 2;

	u[n - 1] = u[n - 1] == 'x' ? 'y' : 'x';
	put_tail(u, n);
	refused("a torn update with one byte changed");
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "not the ones"));
	ck_assert_int_eq(size_of(file), orig_size + (long)n);
	ck_assert_int_eq(access(jpath, F_OK), 0);
	/* the first byte after L */
	u[n - 1] = u[n - 1] == 'x' ? 'y' : 'x';
	u[0] ^= 0x20;
	put_tail(u, n);
	refused("a torn update with its first byte changed");
	ck_assert_int_eq(access(jpath, F_OK), 0);
	free(u);
}
END_TEST

START_TEST(test_torn_refuses_beyond)
{
	/* More than L+N bytes, even if they are ours and zeros. */
	FILE *f = fopen(file, "ab");
	static const uint8_t zeros[100];

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(zeros, 1, sizeof zeros, f), sizeof zeros);
	ck_assert_int_eq(fclose(f), 0);
	refused("zeros after the whole update");
	ck_assert_int_eq(size_of(file), crashed_size + 100);
	ck_assert_int_eq(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_torn_refuses_bad_copy)
{
	/* The journal's copy does not hash to its record (one byte changed,
	 * the file torn to match it): refused, whatever the file holds. */
	uint8_t *u = the_update(), c;
	size_t rl = record_len(), n = (size_t)(crashed_size - orig_size) / 2;
	int fd = open(jpath, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)(rl + 10)), 1);
	c = c == 'x' ? 'y' : 'x';
	ck_assert_int_eq(pwrite(fd, &c, 1, (off_t)(rl + 10)), 1);
	close(fd);
	u[10] = c;
	put_tail(u, n);
	refused("a copy that does not hash to the record");
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "does not hash"));
	ck_assert_int_eq(access(jpath, F_OK), 0);
	free(u);
}
END_TEST

START_TEST(test_torn_refuses_oversized_journal)
{
	/* A journal larger than its record says: one byte more, then a
	 * planted 1 GB one (sparse: refused by its size, never read). */
	long half = orig_size + (crashed_size - orig_size) / 2;
	struct stat st;
	int fd;

	ck_assert_int_eq(truncate(file, half), 0);
	ck_assert_int_eq(stat(jpath, &st), 0);
	ck_assert_int_eq(truncate(jpath, st.st_size + 1), 0);
	refused("a journal one byte too long");
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "its record"));
	ck_assert_int_eq(truncate(jpath, st.st_size - 1), 0);
	refused("a journal one byte too short");
	fd = open(jpath, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	refused("a 1 GB journal");
	ck_assert_int_eq(size_of(file), half);
	ck_assert_int_eq(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_torn_refuses_huge_claim)
{
	/* A record claiming an update over 64 MiB, the journal (sparse) of
	 * exactly that size: refused by the bound, not read. */
	char rec[600], *app, *eol, out[700];
	uint8_t *j;
	size_t n = slurp(jpath, &j), rl = record_len();
	long long claim = (65LL << 20);
	int fd, k;

	ck_assert_uint_lt(rl, sizeof rec);
	memcpy(rec, j, rl);
	rec[rl] = '\0';
	free(j);
	(void)n;
	app = strstr(rec, "\nappended ");
	ck_assert_ptr_nonnull(app);
	eol = strchr(app + 10, ' ');
	ck_assert_ptr_nonnull(eol);
	*app = '\0';
	k = snprintf(out, sizeof out, "%s\nappended %lld%s", rec, claim, eol);
	ck_assert_int_gt(k, 0);
	fd = open(jpath, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, out, (size_t)k), k);
	ck_assert_int_eq(ftruncate(fd, (off_t)(k + claim)), 0);
	close(fd);
	ck_assert_int_eq(truncate(file, orig_size + 100), 0);
	refused("a record claiming 65 MiB");
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "at most"));
	ck_assert_int_eq(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_refuses_changed_update)
{
	/* L+N bytes, but not the ones recorded (one byte flipped). */
	int fd = open(file, O_RDWR);
	uint8_t c;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, orig_size + 30), 1);
	c ^= 1;
	ck_assert_int_eq(pwrite(fd, &c, 1, orig_size + 30), 1);
	close(fd);
	refused("the update's bytes changed");
	ck_assert_int_eq(size_of(file), crashed_size);
	ck_assert_int_eq(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_read_only_open_never_recovers)
{
	pdfstamp_doc *doc = NULL;
	long torn = size_of(file);

	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, file, 0), 0);
	pdfstamp_doc_close(doc);
	ck_assert_int_eq(size_of(file), torn);
	ck_assert_int_eq(access(jpath, F_OK), 0);
	ck_assert_uint_ge(warnings, 1);
}
END_TEST

START_TEST(test_write_open_recovers_under_its_lock)
{
	pdfstamp_doc *doc = NULL;
	int rc = pdfstamp_doc_open(ctx, &doc, file, PDFSTAMP_OPEN_WRITE);

	ck_assert_msg(rc == 0, "open: %s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(size_of(file), crashed_size);
	ck_assert_int_ne(access(jpath, F_OK), 0);
	ck_assert_uint_ge(warnings, 1);
	pdfstamp_doc_close(doc);
	whole_update_kept();
}
END_TEST

START_TEST(test_locked_file)
{
	int fd = open(file, O_RDONLY), rec = -1;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	ck_assert_int_eq(pdfstamp_recover(ctx, file, &rec), PDFSTAMP_E_IO);
	ck_assert_int_eq(size_of(file), crashed_size);
	ck_assert_int_eq(access(jpath, F_OK), 0);
	close(fd);
}
END_TEST

START_TEST(test_refuses_mode)
{
	ck_assert_int_eq(chmod(jpath, 0644), 0);
	refused("mode 0644");
	ck_assert_int_eq(chmod(jpath, 0400), 0);
	refused("mode 0400");
}
END_TEST

START_TEST(test_refuses_owner)
{
	if (geteuid() != 0)
		return; /* only root can give a file away */
	ck_assert_int_eq(chown(jpath, 65534, (gid_t)-1), 0);
	refused("owned by uid 65534");
}
END_TEST

START_TEST(test_refuses_symlink)
{
	char real[192];

	snprintf(real, sizeof real, "%s/real-journal", dir);
	ck_assert_int_eq(rename(jpath, real), 0);
	ck_assert_int_eq(symlink("real-journal", jpath), 0);
	refused("a symbolic link");
}
END_TEST

START_TEST(test_refuses_fifo)
{
	ck_assert_int_eq(unlink(jpath), 0);
	ck_assert_int_eq(mkfifo(jpath, 0600), 0);
	refused("a FIFO"); /* and returns: the journal is opened O_NONBLOCK */
}
END_TEST

START_TEST(test_refuses_stale)
{
	FILE *f = fopen(file, "ab");

	ck_assert_ptr_nonnull(f);
	fputs("% appended by another tool\n", f);
	ck_assert_int_eq(fclose(f), 0);
	refused("bytes appended after the update");
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "is whole, but"));
	ck_assert_int_eq(access(jpath, F_OK), 0);
}
END_TEST

START_TEST(test_refuses_other_inode)
{
	char copy[192], cmd[512];

	snprintf(copy, sizeof copy, "%s/copy.pdf", dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", file, copy);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(rename(copy, file), 0);
	refused("the file was replaced");
}
END_TEST

START_TEST(test_fifo_input)
{
	char fifo[192];
	pdfstamp_doc *doc = NULL;
	int rec = -1;

	snprintf(fifo, sizeof fifo, "%s/fifo.pdf", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	/* A file that cannot be opened as a PDF is an I/O error (issue 17). */
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, fifo, 0), PDFSTAMP_E_IO);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "not a regular file (a FIFO)"));
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, fifo, PDFSTAMP_OPEN_WRITE), PDFSTAMP_E_IO);
	ck_assert_int_eq(pdfstamp_recover(ctx, fifo, &rec), PDFSTAMP_E_IO);
	/* and so is a directory, or a file that is not there */
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, dir, 0), PDFSTAMP_E_IO);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "a directory"));
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, dir, PDFSTAMP_OPEN_WRITE), PDFSTAMP_E_IO);
	ck_assert_int_eq(pdfstamp_recover(ctx, dir, &rec), PDFSTAMP_E_IO);
	snprintf(fifo, sizeof fifo, "%s/missing.pdf", dir);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, fifo, 0), PDFSTAMP_E_IO);
	ck_assert_int_eq(pdfstamp_recover(ctx, fifo, &rec), PDFSTAMP_E_IO);
}
END_TEST

START_TEST(test_write_to_fd)
{
	/* PDFSTAMP_WRITE_TO_FD (`-o -`): built and checked in a temporary file
	 * in $TMPDIR that never has a name, then copied to the descriptor
	 * (issue 17); the input is read only. */
	char in[192], out[192], tmp[192];
	struct pdfstamp_meta_item it = {"Title", "to a descriptor"};
	struct pdfstamp_meta_opts mo = PDFSTAMP_META_OPTS_INIT;
	struct pdfstamp_write_opts wo = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT;
	const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	pdfstamp_doc *d = NULL, *v = NULL;
	struct dirent *e;
	DIR *dp;
	int fd;

	snprintf(in, sizeof in, "%s/fresh.pdf", dir);
	snprintf(out, sizeof out, "%s/out.pdf", dir);
	snprintf(tmp, sizeof tmp, "%s/tmp", dir);
	copy_sample(in);
	ck_assert_int_eq(mkdir(tmp, 0700), 0);
	ck_assert_int_eq(setenv("TMPDIR", tmp, 1), 0);
	mo.items = &it;
	mo.nitems = 1;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &d, in, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(d, pw, strlen(pw), 0), 0);
	wo.flags = PDFSTAMP_WRITE_TO_FD;
	ck_assert_int_eq(wo.output_fd, -1);
	ck_assert_int_eq(pdfstamp_meta(d, &mo, &wo, &res), PDFSTAMP_E_USAGE); /* not open */
	wo.output_fd = open(in, O_WRONLY | O_APPEND);
	ck_assert_int_ge(wo.output_fd, 0);
	ck_assert_int_eq(pdfstamp_meta(d, &mo, &wo, &res), PDFSTAMP_E_USAGE); /* the input */
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "input file itself"));
	close(wo.output_fd);
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	wo.output_fd = fd;
	wo.version = 1; /* no output_fd in version 1 */
	ck_assert_int_eq(pdfstamp_meta(d, &mo, &wo, &res), PDFSTAMP_E_USAGE);
	wo.version = PDFSTAMP_WRITE_OPTS_VERSION;
	wo.output = out; /* a path and a descriptor */
	ck_assert_int_eq(pdfstamp_meta(d, &mo, &wo, &res), PDFSTAMP_E_USAGE);
	wo.output = NULL;
	ck_assert_int_eq(pdfstamp_meta(d, &mo, &wo, &res), 0);
	pdfstamp_result_clear(&res);
	close(fd);
	pdfstamp_doc_close(d);
	ck_assert_int_eq(size_of(in), orig_size);
	ck_assert_int_gt(size_of(out), orig_size);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &v, out, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(v, pw, strlen(pw), 0), 0);
	ck_assert_int_eq(pdfstamp_verify(v, &vo, &rep), 0);
	pdfstamp_doc_close(v);
	dp = opendir(tmp);
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		ck_assert_msg(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0,
		              "left behind in TMPDIR: %s", e->d_name);
	closedir(dp);
	unsetenv("TMPDIR");
}
END_TEST

/* ---- group commit (pdfstamp_group) ---------------------------------------- */

#define GROUP_THREADS 4
#define GROUP_FILES 3

struct group_worker {
	pdfstamp_group *g;
	int id, failed;
};

/* Meta updates in place of GROUP_FILES copies of the sample, in DIR, with
 * a context of the group. */
static void *group_work(void *arg)
{
	struct group_worker *w = arg;
	struct pdfstamp_meta_item it = {"Title", "group"};
	struct pdfstamp_meta_opts mo = PDFSTAMP_META_OPTS_INIT;
	struct pdfstamp_write_opts wo = PDFSTAMP_WRITE_OPTS_INIT;
	pdfstamp_ctx *c;
	char path[200];
	int i;

	mo.items = &it;
	mo.nitems = 1;
	wo.flags = PDFSTAMP_WRITE_IN_PLACE;
	if (pdfstamp_ctx_new(&c) != 0) {
		w->failed++;
		return NULL;
	}
	pdfstamp_ctx_set_group(c, w->g);
	for (i = 0; i < GROUP_FILES; i++) {
		pdfstamp_doc *d = NULL;
		snprintf(path, sizeof path, "%s/g%d-%d.pdf", dir, w->id, i);
		if (pdfstamp_doc_open(c, &d, path, PDFSTAMP_OPEN_WRITE) != 0 ||
		    pdfstamp_doc_auth(d, pw, strlen(pw), 0) != 0 ||
		    pdfstamp_meta(d, &mo, &wo, NULL) != 0)
			w->failed++;
		pdfstamp_doc_close(d);
	}
	pdfstamp_ctx_free(c);
	return NULL;
}

/* Threads of one group update files of one directory in place: every
 * update is whole, and the directory syncs are counted (at most one per
 * update, at least one). */
START_TEST(test_group_commit)
{
	struct group_worker w[GROUP_THREADS];
	pthread_t t[GROUP_THREADS];
	pdfstamp_group *g = NULL;
	uint64_t syncs = 0, requests = 0;
	char path[200];
	int i, k;

	ck_assert_int_eq(pdfstamp_group_new(&g), 0);
	for (i = 0; i < GROUP_THREADS; i++)
		for (k = 0; k < GROUP_FILES; k++) {
			snprintf(path, sizeof path, "%s/g%d-%d.pdf", dir, i, k);
			copy_sample(path);
		}
	for (i = 0; i < GROUP_THREADS; i++) {
		w[i].g = g;
		w[i].id = i;
		w[i].failed = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, group_work, &w[i]), 0);
	}
	for (i = 0; i < GROUP_THREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		ck_assert_int_eq(w[i].failed, 0);
	}
	pdfstamp_group_stats(g, &syncs, &requests);
	ck_assert_uint_eq(requests, GROUP_THREADS * GROUP_FILES);
	ck_assert_uint_ge(syncs, 1);
	ck_assert_uint_le(syncs, requests);
	for (i = 0; i < GROUP_THREADS; i++)
		for (k = 0; k < GROUP_FILES; k++) {
			struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
			pdfstamp_doc *d = NULL;
			snprintf(path, sizeof path, "%s/g%d-%d.pdf", dir, i, k);
			ck_assert_int_eq(pdfstamp_doc_open(ctx, &d, path, 0), 0);
			ck_assert_int_eq(pdfstamp_doc_auth(d, pw, strlen(pw), 0), 0);
			ck_assert_int_eq(pdfstamp_doc_info(d, &info), 0);
			ck_assert_int_eq(info.revisions, 2);
			pdfstamp_info_clear(&info);
			pdfstamp_doc_close(d);
			snprintf(path, sizeof path, "%s/g%d-%d.pdf.pdfstamp-journal", dir, i, k);
			ck_assert_int_ne(access(path, F_OK), 0);
		}
	pdfstamp_group_free(g);
	pdfstamp_group_free(NULL);
}
END_TEST

static Suite *journal_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("recover");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_genuine_completed);
	tcase_add_test(tc, test_journal_format);
	tcase_add_test(tc, test_version2_read_as_3);
	tcase_add_test(tc, test_version3_read);
	tcase_add_test(tc, test_refuses_other_versions);
	tcase_add_test(tc, test_unwritten);
	tcase_add_test(tc, test_refuses_torn_v3);
	tcase_add_test(tc, test_torn_every_length);
	tcase_add_test(tc, test_torn_write_open);
	tcase_add_test(tc, test_torn_zeros);
	tcase_add_test(tc, test_torn_refuses_other_bytes);
	tcase_add_test(tc, test_torn_refuses_beyond);
	tcase_add_test(tc, test_torn_refuses_bad_copy);
	tcase_add_test(tc, test_torn_refuses_oversized_journal);
	tcase_add_test(tc, test_torn_refuses_huge_claim);
	tcase_add_test(tc, test_refuses_changed_update);
	tcase_add_test(tc, test_read_only_open_never_recovers);
	tcase_add_test(tc, test_write_open_recovers_under_its_lock);
	tcase_add_test(tc, test_locked_file);
	tcase_add_test(tc, test_refuses_mode);
	tcase_add_test(tc, test_refuses_owner);
	tcase_add_test(tc, test_refuses_symlink);
	tcase_add_test(tc, test_refuses_fifo);
	tcase_add_test(tc, test_refuses_stale);
	tcase_add_test(tc, test_refuses_other_inode);
	tcase_add_test(tc, test_fifo_input);
	tcase_add_test(tc, test_write_to_fd);
	tcase_add_test(tc, test_group_commit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	/* Every case starts from a crash made with PDFSTAMP_FAULT (tests/fault.c). */
	sr = srunner_create(journal_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
