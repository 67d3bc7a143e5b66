/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_xref.c - libFuzzer target for the whole read path: the input is a
 * complete file.
 *
 * pdfstamp_doc_open (startxref, xref tables and streams, /Prev chains,
 * hybrid files, /Encrypt), then authentication with the fuzzing passwords
 * (see fuzz.h), pdfstamp_doc_info, and a lookup of every object in use (up
 * to a bound), with the data of every stream read, decrypted and decoded;
 * then pdfstamp_audit (every revision's objects as of that revision).
 * Oracles: the sanitizers; no PDFSTAMP_E_INTERNAL; no PDFSTAMP_E_USAGE once
 * the document is open (except from doc_info before authentication, which
 * is the caller's mistake); every error carries a message; a looked-up
 * object is stable (the second lookup returns the
 * same cached pointer).
 */
#include "fuzz.h"

#define FZ_XREF_MAX_LOOKUPS 2000

static void fzx_check_rc(ps_ctx *ctx, int rc, const char *what)
{
	if (rc == PDFSTAMP_E_INTERNAL)
		fz_bug(ctx, what);
	if (rc < 0 && pdfstamp_ctx_errmsg(ctx)[0] == 0)
		fz_bug(ctx, "an error without a message");
}

/* The same, for calls whose arguments are all valid: then no input may
 * make the library report a usage error (exit 2 would blame the user). */
static void fzx_check_rc_valid(ps_ctx *ctx, int rc, const char *what)
{
	fzx_check_rc(ctx, rc, what);
	if (rc == PDFSTAMP_E_USAGE)
		fz_bug(ctx, "a usage error caused by the file's contents");
}

/* The lazy index and the full load must agree (xref.c design notes):
 * every entry read one by one on the freshly opened document is the one
 * the full load records, and a lazy read that fails means the full load
 * fails too (it reads the same entry by the same rules). */
#define FZX_DIFF_MAX 2048
static void fzx_lazy_vs_full(ps_doc *doc)
{
	static ps_xent lazy[FZX_DIFF_MAX];
	static signed char state[FZX_DIFF_MAX]; /* 0 absent, 1 in use, -1 error */
	struct ps_xref_info xi;
	uint32_t num, top;
	int failed = 0;

	ps_xref_info(ps_doc_xref(doc), &xi);
	top = xi.bound < FZX_DIFF_MAX ? xi.bound : FZX_DIFF_MAX;

	for (num = 1; num < top; num++) {
		const ps_xent *e = NULL;
		if (ps_xref_find(doc, num, &e) < 0) {
			state[num] = -1;
			failed = 1;
			continue;
		}
		state[num] = e != NULL;
		if (e)
			lazy[num] = *e;
	}
	if (ps_xref_load_all(doc) < 0)
		return;
	if (failed)
		fz_bug(ps_doc_ctx(doc), "a lazy entry read failed where the full load did not");
	for (num = 1; num < top; num++) {
		const ps_xent *f = ps_xref_get(ps_doc_xref(doc), num);
		if ((f != NULL) != (state[num] == 1))
			fz_bug(ps_doc_ctx(doc), "the lazy index and the full load disagree on an entry's use");
		if (f && (f->type != lazy[num].type || f->off != lazy[num].off || f->aux != lazy[num].aux ||
		          f->sec != lazy[num].sec))
			fz_bug(ps_doc_ctx(doc), "the lazy index and the full load disagree on an entry");
	}
}

static void fzx_walk(ps_doc *doc)
{
	ps_buf data = PS_BUF_INIT;
	uint32_t num, n = 0;
	int rc;

	if (ps_xref_load_all(doc) < 0)
		return;
	/* the objects in use, in order, however sparse their numbers */
	for (num = ps_xref_next(ps_doc_xref(doc), 0); num != 0 && n++ < FZ_XREF_MAX_LOOKUPS;
	     num = ps_xref_next(ps_doc_xref(doc), num)) {
		ps_obj *o = NULL, *again = NULL;
		rc = ps_doc_lookup(doc, num, &o);
		fzx_check_rc_valid(ps_doc_ctx(doc), rc, "ps_doc_lookup");
		if (rc < 0 || !o)
			continue;
		rc = ps_doc_lookup(doc, num, &again);
		if (rc < 0 || again != o)
			fz_bug(ps_doc_ctx(doc), "a second lookup of a cached object differs");
		if (o->kind == PS_STREAM) {
			ps_buf_reset(&data);
			rc = ps_doc_stream_data(doc, num, o, 1, &data);
			fzx_check_rc_valid(ps_doc_ctx(doc), rc, "ps_doc_stream_data");
		}
	}
	ps_buf_free(&data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	char path[64];
	ps_ctx *ctx;
	ps_doc *doc = NULL;
	int fd, rc;

	if (size > FZ_MAX_INPUT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	fd = fz_memfile(data, size, path);
	if (fd < 0)
		goto out;
	rc = pdfstamp_doc_open(ctx, &doc, path, 0);
	fzx_check_rc_valid(ctx, rc, "pdfstamp_doc_open");
	if (rc < 0)
		goto out;
	fzx_lazy_vs_full(doc);
	/* Before authentication: only unencrypted things are reachable. */
	rc = pdfstamp_doc_info(doc, &info);
	fzx_check_rc(ctx, rc, "pdfstamp_doc_info (not authenticated)");
	rc = fz_doc_auth(doc);
	fzx_check_rc_valid(ctx, rc, "authentication");
	if (rc < 0)
		goto out;
	rc = pdfstamp_doc_info(doc, &info);
	fzx_check_rc_valid(ctx, rc, "pdfstamp_doc_info");
	fzx_walk(doc);
	{
		/* the signature audit: every revision read as of itself */
		struct pdfstamp_audit_report rep = PDFSTAMP_AUDIT_REPORT_INIT;
		rc = pdfstamp_audit(doc, &rep);
		fzx_check_rc_valid(ctx, rc, "pdfstamp_audit");
		pdfstamp_audit_clear(&rep);
	}
out:
	pdfstamp_info_clear(&info);
	pdfstamp_doc_close(doc);
	if (fd >= 0)
		close(fd);
	pdfstamp_ctx_free(ctx);
	return 0;
}
