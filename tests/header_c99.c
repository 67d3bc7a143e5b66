/* SPDX-License-Identifier: Apache-2.0 */
/*
 * header_c99.c - pdfstamp.h as a C99 program sees it: compiled with
 * -std=c99 -pedantic -Werror -Wall -Wextra (Makefile.am), including
 * nothing but pdfstamp.h, linked against the shared library.  Every *_INIT
 * macro is used as an initialiser; a few calls check that the program
 * links and runs.  Exits 0, or the number of the first check that failed.
 * tests/header_cxx.cc compiles this same file as C++ (so it must stay
 * valid in both languages).
 */
#include <pdfstamp.h>

static int same_str(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

int main(void)
{
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	struct pdfstamp_write_opts wo = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	struct pdfstamp_stamp_opts so = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_meta_opts mo = PDFSTAMP_META_OPTS_INIT;
	struct pdfstamp_dss_opts dso = PDFSTAMP_DSS_OPTS_INIT;
	struct pdfstamp_rewrite_opts ro = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_rewrite_stats st = PDFSTAMP_REWRITE_STATS_INIT;
	struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	struct pdfstamp_verify_report vr = PDFSTAMP_VERIFY_REPORT_INIT;
	struct pdfstamp_audit_report ar = PDFSTAMP_AUDIT_REPORT_INIT;
	struct pdfstamp_stamps sl = PDFSTAMP_STAMPS_INIT;
	struct pdfstamp_unstamp_opts uo = PDFSTAMP_UNSTAMP_OPTS_INIT;
	struct pdfstamp_stamp_opts so2;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	int rc;

	if (!same_str(pdfstamp_version(), PDFSTAMP_VERSION))
		return 1;
	if (!same_str(pdfstamp_strerror(PDFSTAMP_E_PASSWORD), "wrong password"))
		return 2;
	if (info.version != PDFSTAMP_INFO_VERSION || wo.output_fd != -1 || res.version != PDFSTAMP_RESULT_VERSION ||
	    mo.version != PDFSTAMP_META_OPTS_VERSION || dso.version != PDFSTAMP_DSS_OPTS_VERSION ||
	    ro.jobs != 0 || st.version != PDFSTAMP_REWRITE_STATS_VERSION || vo.progress != NULL ||
	    vr.version != PDFSTAMP_VERIFY_REPORT_VERSION || ar.version != PDFSTAMP_AUDIT_REPORT_VERSION ||
	    sl.version != PDFSTAMP_STAMPS_VERSION || sl.stamps != NULL || uo.id != NULL)
		return 3;
	/* the function gives the macro's values */
	if (pdfstamp_stamp_opts_init(&so2, PDFSTAMP_STAMP_OPTS_VERSION) != 0 || so2.page != so.page ||
	    so2.margin != so.margin || so2.color[0] != so.color[0] || so2.opacity != so.opacity ||
	    so2.position != so.position || so2.font != so.font)
		return 4;
	if (pdfstamp_ctx_new(&ctx) != 0)
		return 5;
	rc = pdfstamp_doc_open(ctx, &doc, "/nonexistent/header-test.pdf", 0);
	if (rc != PDFSTAMP_E_IO || doc != NULL || pdfstamp_ctx_errcode(ctx) != PDFSTAMP_E_IO ||
	    !*pdfstamp_ctx_errmsg(ctx) || pdfstamp_ctx_errhint(ctx) != PDFSTAMP_HINT_NONE)
		return 6;
	if (!same_str(pdfstamp_perm_name(6), "annotate") || pdfstamp_change_kind_name(PDFSTAMP_CHANGE_DSS) == NULL)
		return 7;
	pdfstamp_info_clear(&info);
	pdfstamp_result_clear(&res);
	pdfstamp_audit_clear(&ar);
	pdfstamp_stamps_clear(&sl);
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	return 0;
}
