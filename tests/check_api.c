/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_api.c - the public API as a program sees it: linked against the
 * shared library (only the exported pdfstamp_* symbols), including only
 * pdfstamp.h.
 *
 * The pdfstamp_*_init functions (init.c) against their *_INIT macros: a
 * macro-initialised struct of static storage has zero padding (C11
 * 6.7.9p10), and so does what a function fills (it copies such a
 * template), so the two are compared byte for byte with memcmp over the
 * whole struct, padding included.  The struct is filled inside a larger
 * buffer of a marker byte, to see that nothing past the version asked for
 * is written; version 1 of a struct that has grown since gets exactly its
 * version-1 members; a NULL pointer and unknown versions are refused
 * without writing anything.
 *
 * What pdfstamp.h says is process-wide: two contexts used by two threads
 * at once (stamps in an embedded font, which load the dlopen'ed libraries
 * concurrently); the writers' lock excluding a second write open in the
 * same process; a document's descriptor close-on-exec, and no descriptor
 * or thread left behind by a rotation.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pdfstamp.h"

#define SAMPLE TEST_SRCDIR "/../samples/r6-table.pdf"
#define USER_PW "sample-user"
#define OWNER_PW "sample-owner"

#define MARK 0xa5
#define SLACK 32 /* marker bytes after the struct */

/* The bytes of a struct up to the end of MEMBER: its version-1 part when
 * MEMBER is the last member version 1 had. */
#define END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

typedef int (*init_fn)(void *p, unsigned version);

/* Checks FN against MACRO (SIZE bytes, VERSION its current version, V1LEN
 * the bytes of version 1 when the struct has grown, else 0). */
static void check_init(const char *name, init_fn fn, const void *macro, size_t size, unsigned version,
                       size_t v1len)
{
	unsigned char *buf = malloc(size + SLACK), *want = malloc(size);
	unsigned v;
	size_t i;

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(want);
	/* the current version: the macro's struct, byte for byte */
	memset(buf, MARK, size + SLACK);
	ck_assert_msg(fn(buf, version) == 0, "%s: version %u refused", name, version);
	ck_assert_msg(memcmp(buf, macro, size) == 0, "%s: not the macro's struct", name);
	for (i = size; i < size + SLACK; i++)
		ck_assert_msg(buf[i] == MARK, "%s: byte %zu past the struct written", name, i);
	/* version 1 of a struct that has grown: its own members only */
	if (v1len) {
		ck_assert_msg(v1len < size, "%s: version 1 is shorter", name);
		memset(buf, MARK, size + SLACK);
		ck_assert_msg(fn(buf, 1) == 0, "%s: version 1 refused", name);
		memcpy(want, macro, size);
		v = 1;
		memcpy(want, &v, sizeof v);
		ck_assert_msg(memcmp(buf, want, v1len) == 0, "%s: version 1 is not the macro's first members", name);
		for (i = v1len; i < size + SLACK; i++)
			ck_assert_msg(buf[i] == MARK, "%s: version 1 wrote byte %zu past its members", name, i);
	}
	/* refusals write nothing */
	memset(buf, MARK, size + SLACK);
	ck_assert_int_eq(fn(buf, 0), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(fn(buf, version + 1), PDFSTAMP_E_USAGE);
	for (i = 0; i < size + SLACK; i++)
		ck_assert_msg(buf[i] == MARK, "%s: a refused version wrote byte %zu", name, i);
	ck_assert_int_eq(fn(NULL, version), PDFSTAMP_E_USAGE);
	free(want);
	free(buf);
}

/* One test per struct: the wrapper gives the function a void * type. */
#define INIT_TEST(name, type, macro, ver, v1len) \
	static int name##_fn(void *p, unsigned version) \
	{ \
		return pdfstamp_##name##_init((type *)p, version); \
	} \
	START_TEST(init_##name) \
	{ \
		static const type m = macro; \
		check_init(#name, name##_fn, &m, sizeof m, ver, v1len); \
	} \
	END_TEST

INIT_TEST(info, struct pdfstamp_info, PDFSTAMP_INFO_INIT, PDFSTAMP_INFO_VERSION,
          END_OF(struct pdfstamp_info, sigs_incomplete))
INIT_TEST(write_opts, struct pdfstamp_write_opts, PDFSTAMP_WRITE_OPTS_INIT, PDFSTAMP_WRITE_OPTS_VERSION,
          END_OF(struct pdfstamp_write_opts, flags))
INIT_TEST(result, struct pdfstamp_result, PDFSTAMP_RESULT_INIT, PDFSTAMP_RESULT_VERSION,
          END_OF(struct pdfstamp_result, nwarnings))
INIT_TEST(stamp_opts, struct pdfstamp_stamp_opts, PDFSTAMP_STAMP_OPTS_INIT, PDFSTAMP_STAMP_OPTS_VERSION,
          END_OF(struct pdfstamp_stamp_opts, freetext))
INIT_TEST(meta_opts, struct pdfstamp_meta_opts, PDFSTAMP_META_OPTS_INIT, PDFSTAMP_META_OPTS_VERSION, 0)
INIT_TEST(dss_opts, struct pdfstamp_dss_opts, PDFSTAMP_DSS_OPTS_INIT, PDFSTAMP_DSS_OPTS_VERSION, 0)
INIT_TEST(rewrite_opts, struct pdfstamp_rewrite_opts, PDFSTAMP_REWRITE_OPTS_INIT, PDFSTAMP_REWRITE_OPTS_VERSION,
          END_OF(struct pdfstamp_rewrite_opts, progress_ud))
INIT_TEST(rewrite_stats, struct pdfstamp_rewrite_stats, PDFSTAMP_REWRITE_STATS_INIT,
          PDFSTAMP_REWRITE_STATS_VERSION, 0)
INIT_TEST(verify_opts, struct pdfstamp_verify_opts, PDFSTAMP_VERIFY_OPTS_INIT, PDFSTAMP_VERIFY_OPTS_VERSION, 0)
INIT_TEST(verify_report, struct pdfstamp_verify_report, PDFSTAMP_VERIFY_REPORT_INIT,
          PDFSTAMP_VERIFY_REPORT_VERSION, 0)
INIT_TEST(audit_report, struct pdfstamp_audit_report, PDFSTAMP_AUDIT_REPORT_INIT,
          PDFSTAMP_AUDIT_REPORT_VERSION, 0)
INIT_TEST(stamps, struct pdfstamp_stamps, PDFSTAMP_STAMPS_INIT, PDFSTAMP_STAMPS_VERSION, 0)
INIT_TEST(unstamp_opts, struct pdfstamp_unstamp_opts, PDFSTAMP_UNSTAMP_OPTS_INIT,
          PDFSTAMP_UNSTAMP_OPTS_VERSION, 0)
INIT_TEST(key, struct pdfstamp_key, PDFSTAMP_KEY_INIT, PDFSTAMP_KEY_VERSION, 0)
INIT_TEST(timestamp_opts, struct pdfstamp_timestamp_opts, PDFSTAMP_TIMESTAMP_OPTS_INIT,
          PDFSTAMP_TIMESTAMP_OPTS_VERSION, 0)
INIT_TEST(timestamp_info, struct pdfstamp_timestamp_info, PDFSTAMP_TIMESTAMP_INFO_INIT,
          PDFSTAMP_TIMESTAMP_INFO_VERSION, 0)

/* pdfstamp_timestamp refuses bad options before anything (no network: the
 * URLs name port 9 of 127.0.0.1, and every call is refused first), and a
 * dry run fills the result without a request (issue 31). */
START_TEST(timestamp_opts_refused)
{
	struct pdfstamp_timestamp_opts o;
	struct pdfstamp_timestamp_info ti = PDFSTAMP_TIMESTAMP_INFO_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	struct { const char *url; int bits; size_t reserve; const char *user, *pw; unsigned ver;
	         const char *msg; } bad[] = {
		{NULL, 256, 0, NULL, NULL, 1, "http:// or https://"},
		{"file:///etc/passwd", 256, 0, NULL, NULL, 1, "http:// or https://"},
		{"http://127.0.0.1:9/", 160, 0, NULL, NULL, 1, "sha256, sha384"},
		{"http://127.0.0.1:9/", 256, 10, NULL, NULL, 1, "less than 64"},
		{"http://127.0.0.1:9/", 256, 1u << 20, NULL, NULL, 1, "more than"},
		{"http://127.0.0.1:9/", 256, 0, "user", NULL, 1, "password"},
		{"http://127.0.0.1:9/", 256, 0, NULL, NULL, 99, "unknown version"},
	};
	size_t i;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_msg(pdfstamp_doc_open(ctx, &doc, SAMPLE, 0) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0) == 0, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	w.output = "/nonexistent-dir/out.pdf";
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(pdfstamp_timestamp_opts_init(&o, PDFSTAMP_TIMESTAMP_OPTS_VERSION), 0);
		o.tsa_url = bad[i].url;
		o.hash_bits = bad[i].bits;
		o.reserve = bad[i].reserve;
		o.tsa_user = bad[i].user;
		o.tsa_password = bad[i].pw;
		o.version = bad[i].ver;
		ck_assert_int_eq(pdfstamp_timestamp(doc, &o, &w, &res, &ti), PDFSTAMP_E_USAGE);
		ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), bad[i].msg) != NULL, "case %zu: %s", i,
		              pdfstamp_ctx_errmsg(ctx));
	}
	/* a dry run: no request (the URL's port has no server), the result filled */
	ck_assert_int_eq(pdfstamp_timestamp_opts_init(&o, PDFSTAMP_TIMESTAMP_OPTS_VERSION), 0);
	o.tsa_url = "http://127.0.0.1:9/";
	w.output = "/tmp/pdfstamp-check-api-ts.pdf";
	w.flags = PDFSTAMP_WRITE_DRY_RUN;
	ck_assert_msg(pdfstamp_timestamp(doc, &o, &w, &res, &ti) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(ti.reserve, 8192);
	ck_assert_int_eq(ti.requests, 0);
	ck_assert_int_gt(res.bytes_appended, 2 * 8192);
	ck_assert_int_ge(res.nobjects, 4);     /* dictionary, field, catalog, page */
	/* version 2: a reserve hint is used as the placeholder (no probe); out of
	 * range it is refused; lta with an output descriptor is refused */
	o.reserve_hint = 5000;
	ck_assert_msg(pdfstamp_timestamp(doc, &o, &w, &res, &ti) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(ti.reserve, 5000);
	o.reserve_hint = 63;
	ck_assert_int_eq(pdfstamp_timestamp(doc, &o, &w, &res, &ti), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "hint"));
	o.reserve_hint = 0;
	{
		struct pdfstamp_dss_opts d = PDFSTAMP_DSS_OPTS_INIT;
		struct pdfstamp_write_opts wfd = PDFSTAMP_WRITE_OPTS_INIT;
		int p[2];
		ck_assert_int_eq(pipe(p), 0);
		wfd.flags = PDFSTAMP_WRITE_TO_FD;
		wfd.output_fd = p[1];
		o.lta = &d;
		ck_assert_int_eq(pdfstamp_timestamp(doc, &o, &wfd, &res, &ti), PDFSTAMP_E_USAGE);
		ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "second update"));
		d.version = 1;
		ck_assert_int_eq(pdfstamp_timestamp(doc, &o, &w, &res, &ti), PDFSTAMP_E_USAGE);
		ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "version 2"));
		o.lta = NULL;
		close(p[0]);
		close(p[1]);
	}
	pdfstamp_result_clear(&res);
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* A caller of version 1 of the write options (without output_fd and
 * durable) has a smaller struct: pdfstamp_timestamp with lta must read no
 * byte past it.  The struct ends where a page ends and the next page is
 * not readable, so a copy of the whole current struct faults.  The TSA
 * (port 9 of 127.0.0.1) answers nothing: the call fails before a write. */
START_TEST(timestamp_lta_write_opts_v1)
{
	struct pdfstamp_timestamp_opts o = PDFSTAMP_TIMESTAMP_OPTS_INIT;
	struct pdfstamp_dss_opts d = PDFSTAMP_DSS_OPTS_INIT;
	struct pdfstamp_write_opts *w;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	long pg = sysconf(_SC_PAGESIZE);
	size_t v1 = (END_OF(struct pdfstamp_write_opts, flags) + 7) & ~(size_t)7;
	char out[] = "/tmp/pdfstamp-check-api-lta-v1.pdf";
	unsigned char *m;
	int rc;

	m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	         0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	w = (struct pdfstamp_write_opts *)(void *)(m + pg - v1);
	memset(w, 0, v1);
	w->version = 1;
	w->output = out;
	unlink(out);
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_msg(pdfstamp_doc_open(ctx, &doc, SAMPLE, 0) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0) == 0, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	o.tsa_url = "http://127.0.0.1:9/";
	o.reserve = 8192;
	o.timeout_ms = 2000;
	o.lta = &d;
	d.offline = 1;
	rc = pdfstamp_timestamp(doc, &o, w, NULL, NULL);
	ck_assert_msg(rc < 0 && rc != PDFSTAMP_E_USAGE, "refused by the TSA: %d %s", rc,
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_ne(access(out, F_OK), 0); /* nothing written */
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	munmap(m, 2 * (size_t)pg);
}
END_TEST

/* The stamp list: a sample without stamps lists none and every page;
 * clear takes NULL and keeps the version; an unknown version is refused. */
START_TEST(stamps_list_basics)
{
	struct pdfstamp_stamps l = PDFSTAMP_STAMPS_INIT;
	struct pdfstamp_unstamp_opts uo = PDFSTAMP_UNSTAMP_OPTS_INIT;
	struct pdfstamp_write_opts wo = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;

	pdfstamp_stamps_clear(NULL);
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_msg(pdfstamp_doc_open(ctx, &doc, SAMPLE, 0) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(pdfstamp_stamps_list(doc, &l), PDFSTAMP_E_USAGE); /* not authenticated */
	ck_assert_msg(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(pdfstamp_stamps_list(doc, &l) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(l.nstamps, 0);
	ck_assert_int_gt(l.pages, 0);
	ck_assert_int_ge(l.revisions, 1);
	pdfstamp_stamps_clear(&l);
	ck_assert_uint_eq(l.version, PDFSTAMP_STAMPS_VERSION);
	ck_assert_ptr_null(l.stamps);
	l.version = 99;
	ck_assert_int_eq(pdfstamp_stamps_list(doc, &l), PDFSTAMP_E_USAGE);
	/* unstamp: a bad ID is a usage error; an absent one writes nothing */
	wo.output = "/nonexistent-dir/never-written.pdf";
	uo.id = "no.dots";
	ck_assert_int_eq(pdfstamp_unstamp(doc, &uo, &wo, &res), PDFSTAMP_E_USAGE);
	uo.id = "absent";
	ck_assert_msg(pdfstamp_unstamp(doc, &uo, &wo, &res) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(res.skipped, 1);
	ck_assert_int_eq(res.nobjects, 0);
	ck_assert_int_eq(res.bytes_appended, 0);
	pdfstamp_result_clear(&res);
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* DSS options: version 1 (before fetch) is still taken; with fetch no
 * input is needed, and the fetch settings without fetch are refused
 * (issue 31). */
START_TEST(dss_opts_versions)
{
	struct pdfstamp_dss_opts d;
	pdfstamp_ctx *ctx = NULL;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	memset(&d, 0xAA, sizeof d);
	ck_assert_int_eq(pdfstamp_dss_opts_init(&d, 1), 0);
	ck_assert_int_eq(pdfstamp_dss_check(ctx, &d), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(strstr(pdfstamp_ctx_errmsg(ctx), "version"));
	ck_assert_int_eq(pdfstamp_dss_opts_init(&d, PDFSTAMP_DSS_OPTS_VERSION), 0);
	d.fetch = 1;
	ck_assert_msg(pdfstamp_dss_check(ctx, &d) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	d.fetch = 0;
	d.offline = 1;
	ck_assert_int_eq(pdfstamp_dss_check(ctx, &d), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "without fetch"));
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* Structs the functions filled are ones the library takes: pdfstamp_info
 * at version 1 and at the current version, the verify options and report,
 * on a sample; the DSS options (refused for having no input, not for
 * their version). */
START_TEST(init_structs_are_accepted)
{
	struct pdfstamp_info info;
	struct pdfstamp_verify_opts vo;
	struct pdfstamp_verify_report rep;
	struct pdfstamp_dss_opts d;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	unsigned v;

	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	ck_assert_msg(pdfstamp_doc_open(ctx, &doc, SAMPLE, 0) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	for (v = 1; v <= PDFSTAMP_INFO_VERSION; v++) {
		ck_assert_int_eq(pdfstamp_info_init(&info, v), 0);
		ck_assert_msg(pdfstamp_doc_info(doc, &info) == 0, "version %u: %s", v, pdfstamp_ctx_errmsg(ctx));
		ck_assert_int_eq(info.version, v);
		ck_assert_int_gt(info.pages, 0);
		if (v >= 3) {   /* a password file: no public-key fields */
			ck_assert_str_eq(info.subfilter, "");
			ck_assert_int_eq(info.recipient_index, -1);
			ck_assert_int_eq(info.recipients, 0);
		}
		pdfstamp_info_clear(&info);
	}
	/* the handler's name; a key does not open a password file */
	ck_assert_str_eq(pdfstamp_doc_security_handler(doc), "Standard");
	ck_assert_ptr_null(pdfstamp_doc_security_handler(NULL));
	{
		struct pdfstamp_key k = PDFSTAMP_KEY_INIT;
		ck_assert_int_eq(pdfstamp_doc_auth_key(doc, &k, 0), PDFSTAMP_E_USAGE);
		ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "not encrypted to certif"));
		k.version = 99;
		ck_assert_int_eq(pdfstamp_doc_auth_key(doc, &k, 0), PDFSTAMP_E_USAGE);
		ck_assert_int_eq(pdfstamp_doc_auth_key(doc, NULL, 0), PDFSTAMP_E_USAGE);
	}
	ck_assert_int_eq(pdfstamp_verify_opts_init(&vo, PDFSTAMP_VERIFY_OPTS_VERSION), 0);
	ck_assert_int_eq(pdfstamp_verify_report_init(&rep, PDFSTAMP_VERIFY_REPORT_VERSION), 0);
	ck_assert_msg(pdfstamp_verify(doc, &vo, &rep) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_gt(rep.objects, 0);
	pdfstamp_doc_close(doc);
	ck_assert_int_eq(pdfstamp_dss_opts_init(&d, PDFSTAMP_DSS_OPTS_VERSION), 0);
	ck_assert_int_eq(pdfstamp_dss_check(ctx, &d), PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(strstr(pdfstamp_ctx_errmsg(ctx), "version"));
	pdfstamp_ctx_free(ctx);
}
END_TEST

/* ---- what is process-wide (pdfstamp.h) ------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/check_api-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Removes the temporary directory and the files in it. */
static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[sizeof tmpdir + sizeof e->d_name + 1];

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
		ck_assert_int_eq(unlink(path), 0);
	}
	closedir(d);
	ck_assert_int_eq(rmdir(tmpdir), 0);
}

/* Copies the sample to the temporary directory as NAME; its path in PATH
 * (N bytes). */
static void copy_sample(const char *name, char *path, size_t n)
{
	char buf[1 << 16];
	size_t k;
	FILE *in = fopen(SAMPLE, "rb"), *out;

	snprintf(path, n, "%s/%s", tmpdir, name);
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out = fopen(path, "wb"));
	while ((k = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, k, out), k);
	ck_assert_int_eq(fclose(out), 0);
	fclose(in);
}

/* The open descriptors below 1024 (SET[FD] = 1); their count. */
static int fd_set_of(unsigned char set[1024])
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0, dfd;

	ck_assert_ptr_nonnull(d);
	dfd = dirfd(d);
	memset(set, 0, 1024);
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == dfd || fd >= 1024)
			continue;
		set[fd] = 1;
		n++;
	}
	closedir(d);
	return n;
}

/* The threads of this process. */
static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* One thread's work with a context of its own: open, authenticate, a
 * stamp in an embedded font (text no standard-14 font has: the dlopen'ed
 * libraries; every other thread four scripts with a fallback list, so
 * several fonts are chosen through fontconfig at once, issue 32), verify
 * the output.  The thread returns NULL, or its job's message. */
struct job {
	char in[128], out[128];
	int mixed;
	char why[300];
};

static void *stamp_job(void *arg)
{
	static const char *const fonts[] = {"DejaVu Sans", "Noto Sans Devanagari"};
	struct job *j = arg;
	struct pdfstamp_stamp_opts so;
	struct pdfstamp_write_opts wo;
	struct pdfstamp_result res;
	struct pdfstamp_verify_opts vo;
	struct pdfstamp_verify_report rep;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	int rc;

	pdfstamp_stamp_opts_init(&so, PDFSTAMP_STAMP_OPTS_VERSION);
	pdfstamp_write_opts_init(&wo, PDFSTAMP_WRITE_OPTS_VERSION);
	pdfstamp_result_init(&res, PDFSTAMP_RESULT_VERSION);
	pdfstamp_verify_opts_init(&vo, PDFSTAMP_VERIFY_OPTS_VERSION);
	pdfstamp_verify_report_init(&rep, PDFSTAMP_VERIFY_REPORT_VERSION);
	so.text = "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xbd\xd1\x8f\xd1\x82\xd0\xbe"; /* Cyrillic */
	if (j->mixed) {
		so.text = "承認 / موافق / स्वीकृत / Approved";
		so.fonts = fonts;
		so.nfonts = 2;
	}
	so.date = "2026-01-02T03:04:05Z";
	wo.output = j->out;
	if ((rc = pdfstamp_ctx_new(&ctx)) == 0 && (rc = pdfstamp_doc_open(ctx, &doc, j->in, 0)) == 0 &&
	    (rc = pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0)) == 0)
		rc = pdfstamp_stamp(doc, &so, &wo, &res);
	pdfstamp_doc_close(doc);
	doc = NULL;
	if (rc == 0 && (rc = pdfstamp_doc_open(ctx, &doc, j->out, 0)) == 0 &&
	    (rc = pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0)) == 0)
		rc = pdfstamp_verify(doc, &vo, &rep);
	if (rc != 0)
		snprintf(j->why, sizeof j->why, "%s: %d %s", j->in, rc, ctx ? pdfstamp_ctx_errmsg(ctx) : "no context");
	pdfstamp_result_clear(&res);
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	return rc ? j->why : NULL;
}

START_TEST(contexts_in_threads)
{
	enum { N = 4 };
	struct job jobs[N];
	pthread_t th[N];
	void *why;
	int i;

	make_tmpdir();
	for (i = 0; i < N; i++) {
		char name[32];
		memset(&jobs[i], 0, sizeof jobs[i]);
		snprintf(name, sizeof name, "in%d.pdf", i);
		copy_sample(name, jobs[i].in, sizeof jobs[i].in);
		snprintf(jobs[i].out, sizeof jobs[i].out, "%s/out%d.pdf", tmpdir, i);
		jobs[i].mixed = i & 1;
	}
	for (i = 0; i < N; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, stamp_job, &jobs[i]), 0);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(pthread_join(th[i], &why), 0);
		ck_assert_msg(why == NULL, "thread %d: %s", i, (const char *)why);
	}
	remove_tmpdir();
}
END_TEST

START_TEST(process_resources)
{
	struct pdfstamp_rewrite_opts ro;
	unsigned char before[1024], after[1024];
	char a[128], b[128];
	pdfstamp_ctx *c1 = NULL, *c2 = NULL;
	pdfstamp_doc *d1 = NULL, *d2 = NULL;
	int n, fd, threads;

	make_tmpdir();
	copy_sample("lock.pdf", a, sizeof a);
	ck_assert_int_eq(pdfstamp_ctx_new(&c1), 0);
	ck_assert_int_eq(pdfstamp_ctx_new(&c2), 0);
	/* the writers' lock is flock(2): a second write open in this very
	 * process is refused, without blocking */
	n = fd_set_of(before);
	ck_assert_msg(pdfstamp_doc_open(c1, &d1, a, PDFSTAMP_OPEN_WRITE) == 0, "%s", pdfstamp_ctx_errmsg(c1));
	ck_assert_int_eq(pdfstamp_doc_open(c2, &d2, a, PDFSTAMP_OPEN_WRITE), PDFSTAMP_E_IO);
	ck_assert_ptr_null(d2);
	/* the document's descriptor (its only one) is close-on-exec */
	ck_assert_int_eq(fd_set_of(after), n + 1);
	for (fd = 0; fd < 1024; fd++)
		if (after[fd] && !before[fd])
			ck_assert_msg(fcntl(fd, F_GETFD) & FD_CLOEXEC, "descriptor %d is not close-on-exec", fd);
	pdfstamp_doc_close(d1);
	ck_assert_int_eq(fd_set_of(after), n);
	/* a rotation with worker threads leaves no descriptor and no thread */
	threads = thread_count();
	ck_assert_msg(pdfstamp_doc_open(c1, &d1, a, 0) == 0, "%s", pdfstamp_ctx_errmsg(c1));
	ck_assert_msg(pdfstamp_doc_auth(d1, OWNER_PW, strlen(OWNER_PW), 0) == 0, "%s", pdfstamp_ctx_errmsg(c1));
	pdfstamp_rewrite_opts_init(&ro, PDFSTAMP_REWRITE_OPTS_VERSION);
	snprintf(b, sizeof b, "%s/rotated.pdf", tmpdir);
	ro.output = b;
	ro.user_password = "u2";
	ro.user_len = 2;
	ro.owner_password = "o2";
	ro.owner_len = 2;
	ro.jobs = 3;
	ck_assert_msg(pdfstamp_rotate(d1, &ro, NULL) == 0, "%s", pdfstamp_ctx_errmsg(c1));
	pdfstamp_doc_close(d1);
	ck_assert_int_eq(fd_set_of(after), n);
	ck_assert_int_eq(memcmp(before, after, sizeof before), 0);
	ck_assert_int_eq(thread_count(), threads);
	pdfstamp_ctx_free(c2);
	pdfstamp_ctx_free(c1);
	remove_tmpdir();
}
END_TEST

/* The context's accessors and the free functions take NULL. */
START_TEST(null_context)
{
	ck_assert_str_eq(pdfstamp_ctx_errmsg(NULL), "");
	ck_assert_int_eq(pdfstamp_ctx_errcode(NULL), 0);
	ck_assert_int_eq(pdfstamp_ctx_errhint(NULL), PDFSTAMP_HINT_NONE);
	pdfstamp_ctx_free(NULL);
	pdfstamp_doc_close(NULL);
	pdfstamp_info_clear(NULL);
	pdfstamp_result_clear(NULL);
	pdfstamp_audit_clear(NULL);
}
END_TEST

/* The placement options of version 3 (stamp.c note 9): what the library
 * refuses itself, whatever a caller's checks, writes nothing; a turned,
 * scaled, offset stamp at a new anchor is written. */
START_TEST(stamp_placement_options)
{
	struct pdfstamp_stamp_opts so;
	struct pdfstamp_write_opts wo;
	struct pdfstamp_result res;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	char out[128];
	int k, rc;

	make_tmpdir();
	snprintf(out, sizeof out, "%s/placed.pdf", tmpdir);
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	for (k = 0; k <= 11; k++) {
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, SAMPLE, 0), 0);
		ck_assert_int_eq(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0), 0);
		pdfstamp_stamp_opts_init(&so, PDFSTAMP_STAMP_OPTS_VERSION);
		pdfstamp_write_opts_init(&wo, PDFSTAMP_WRITE_OPTS_VERSION);
		pdfstamp_result_init(&res, PDFSTAMP_RESULT_VERSION);
		so.date = "2026-01-02T03:04:05Z";
		wo.output = out;
		switch (k) {
		case 0: so.offset[0] = NAN; break;
		case 1: so.offset[1] = 2e7; break;
		case 2: so.rotate = INFINITY; break;
		case 3: so.scale = 10.5; break;
		case 4: so.scale = -0.5; break;
		case 5: so.image_opacity = 0; break;
		case 6: so.image_opacity = 1.5; break;
		case 7: so.position = (enum pdfstamp_position)(PDFSTAMP_POS_RIGHT + 1); break;
		case 8: so.has_rect = 1; so.rect[2] = so.rect[3] = 100; so.rotate = 30; break;
		case 9: so.has_rect = 1; so.rect[2] = so.rect[3] = 100; so.diagonal = 1; break;
		case 10: so.margin = 305; so.rotate = 45; break; /* too small even shrunk */
		default: /* accepted */
			so.position = PDFSTAMP_POS_BOTTOM;
			so.offset[0] = -12.5;
			so.offset[1] = 20;
			so.rotate = -400;
			so.scale = 0.4;
			so.image_opacity = 0.5;
			break;
		}
		rc = pdfstamp_stamp(doc, &so, &wo, &res);
		if (k < 11) {
			ck_assert_msg(rc == PDFSTAMP_E_USAGE, "case %d: %d %s", k, rc,
			              pdfstamp_ctx_errmsg(ctx));
			ck_assert_msg(access(out, F_OK) != 0, "case %d wrote %s", k, out);
		} else {
			ck_assert_msg(rc == 0, "case %d: %s", k, pdfstamp_ctx_errmsg(ctx));
			ck_assert_int_eq(res.nobjects, 1);
		}
		pdfstamp_result_clear(&res);
		pdfstamp_doc_close(doc);
		doc = NULL;
	}
	pdfstamp_ctx_free(ctx);
	remove_tmpdir();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("init");

	tcase_add_test(tc, init_info);
	tcase_add_test(tc, init_write_opts);
	tcase_add_test(tc, init_result);
	tcase_add_test(tc, init_stamp_opts);
	tcase_add_test(tc, init_meta_opts);
	tcase_add_test(tc, init_dss_opts);
	tcase_add_test(tc, init_rewrite_opts);
	tcase_add_test(tc, init_rewrite_stats);
	tcase_add_test(tc, init_verify_opts);
	tcase_add_test(tc, init_verify_report);
	tcase_add_test(tc, init_stamps);
	tcase_add_test(tc, init_unstamp_opts);
	tcase_add_test(tc, init_key);
	tcase_add_test(tc, stamps_list_basics);
	tcase_add_test(tc, init_audit_report);
	tcase_add_test(tc, init_structs_are_accepted);
	tcase_add_test(tc, dss_opts_versions);
	tcase_add_test(tc, init_timestamp_opts);
	tcase_add_test(tc, init_timestamp_info);
	tcase_add_test(tc, timestamp_opts_refused);
	tcase_add_test(tc, timestamp_lta_write_opts_v1);
	tcase_add_test(tc, null_context);
	tcase_add_test(tc, stamp_placement_options);
	suite_add_tcase(s, tc);
	tc = tcase_create("process");
	tcase_add_test(tc, contexts_in_threads);
	tcase_add_test(tc, process_resources);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
