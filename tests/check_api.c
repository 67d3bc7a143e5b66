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
 */
#include "config.h"

#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pdfstamp.h"

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
	ck_assert_msg(pdfstamp_doc_open(ctx, &doc, TEST_SRCDIR "/../samples/r6-table.pdf", 0) == 0, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(pdfstamp_doc_auth(doc, "sample-user", 11, 0) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	for (v = 1; v <= PDFSTAMP_INFO_VERSION; v++) {
		ck_assert_int_eq(pdfstamp_info_init(&info, v), 0);
		ck_assert_msg(pdfstamp_doc_info(doc, &info) == 0, "version %u: %s", v, pdfstamp_ctx_errmsg(ctx));
		ck_assert_int_eq(info.version, v);
		ck_assert_int_gt(info.pages, 0);
		pdfstamp_info_clear(&info);
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
	tcase_add_test(tc, init_audit_report);
	tcase_add_test(tc, init_structs_are_accepted);
	tcase_add_test(tc, null_context);
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
