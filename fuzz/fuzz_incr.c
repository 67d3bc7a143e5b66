/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_incr.c - libFuzzer target for the incremental writer round trip.
 *
 * The input is a whole PDF.  If it opens and one of the fuzzing passwords
 * (fuzz.h) is accepted, pdfstamp_stamp writes a stamp on page 1 to a file
 * in a private temporary directory (on /dev/shm when there is one, so the
 * writer's fsyncs are cheap), and the result is checked:
 *  - PDFSTAMP_E_INTERNAL (e.g. the writer's own re-open self-check failed)
 *    is a bug: abort();
 *  - on failure the output file must not exist;
 *  - on success the output starts with the exact input bytes, has
 *    base_length == input size, re-opens, authenticates with the same
 *    password, and every object the writer reports (the annotations) and
 *    the new page objects look up and decrypt without error.
 * PDFSTAMP_FUZZ_VERBOSE=1 in the environment prints each stamp's result.
 */
#include "fuzz.h"

#include <sys/stat.h>

static char fzi_dir[256];

static void fzi_cleanup(void)
{
	if (fzi_dir[0])
		rmdir(fzi_dir);
}

static const char *fzi_outdir(void)
{
	const char *bases[3] = {"/dev/shm", getenv("TMPDIR"), "/tmp"};
	int i;

	if (fzi_dir[0])
		return fzi_dir;
	for (i = 0; i < 3; i++) {
		if (!bases[i] || !bases[i][0])
			continue;
		snprintf(fzi_dir, sizeof fzi_dir, "%s/pdfstamp-fuzz-incr.XXXXXX", bases[i]);
		if (mkdtemp(fzi_dir)) {
			atexit(fzi_cleanup);
			return fzi_dir;
		}
	}
	fzi_dir[0] = 0;
	return NULL;
}

static void fzi_check_output(ps_ctx *ctx, const char *out, const uint8_t *data, size_t size,
                             const struct pdfstamp_result *res)
{
	ps_doc *doc = NULL;
	uint8_t *head;
	int64_t got;
	int fd, i, rc;
	struct stat st;

	if (res->base_length != (int64_t)size)
		fz_bug(ctx, "result base_length is not the input's size");
	fd = open(out, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		fz_bug(ctx, "the output of a successful stamp cannot be opened");
	if (st.st_size < (off_t)size || st.st_size != (off_t)(res->base_length + res->bytes_appended))
		fz_bug(ctx, "output size does not match base_length + bytes_appended");
	head = malloc(size ? size : 1);
	if (head) {
		got = pread(fd, head, size, 0);
		if (got != (int64_t)size || memcmp(head, data, size) != 0)
			fz_bug(ctx, "the output does not start with the input's bytes");
		free(head);
	}
	close(fd);

	rc = pdfstamp_doc_open(ctx, &doc, out, 0);
	if (rc == PDFSTAMP_E_NOMEM)
		return;
	if (rc < 0)
		fz_bug(ctx, "the stamped output does not re-open");
	rc = fz_doc_auth(doc);
	if (rc < 0 && rc != PDFSTAMP_E_NOMEM)
		fz_bug(ctx, "the stamped output does not authenticate with the same password");
	if (rc == 0) {
		struct ps_xref_info xi;
		ps_xref_info(ps_doc_xref(doc), &xi);
		if (xi.startxref != res->xref_offset)
			fz_bug(ctx, "the output's startxref is not the reported xref offset");
	}
	for (i = 0; rc == 0 && i < res->nobjects; i++) {
		ps_obj *o = NULL;
		int r2 = ps_doc_lookup(doc, res->objects[i], &o);
		if (r2 == PDFSTAMP_E_NOMEM)
			break;
		if (r2 < 0 || !o)
			fz_bug(ctx, "a new object of the stamp does not look up");
	}
	pdfstamp_doc_close(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pdfstamp_stamp_opts so = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts wo = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	const char *dir = fzi_outdir();
	char path[64], out[300];
	ps_ctx *ctx;
	ps_doc *doc = NULL;
	int fd = -1, rc;

	if (!dir || size > FZ_MAX_INPUT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	snprintf(out, sizeof out, "%s/out.pdf", dir);
	unlink(out);
	fd = fz_memfile(data, size, path);
	if (fd < 0)
		goto done;
	if (pdfstamp_doc_open(ctx, &doc, path, 0) < 0 || fz_doc_auth(doc) < 0)
		goto done;
	so.date = "2024-05-06T07:08:09Z";
	so.text = "FUZZ";
	so.author = "fuzz";
	wo.output = out;
	rc = pdfstamp_stamp(doc, &so, &wo, &res);
	if (getenv("PDFSTAMP_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz_incr: stamp: %d %s (%lld bytes appended)\n", rc,
		        rc < 0 ? pdfstamp_ctx_errmsg(ctx) : "ok", (long long)res.bytes_appended);
	if (rc == PDFSTAMP_E_INTERNAL)
		fz_bug(ctx, "pdfstamp_stamp (self-check)");
	if (rc < 0) {
		if (pdfstamp_ctx_errmsg(ctx)[0] == 0)
			fz_bug(ctx, "an error without a message");
		if (access(out, F_OK) == 0)
			fz_bug(ctx, "a failed stamp left its output file behind");
		goto done;
	}
	fzi_check_output(ctx, out, data, size, &res);
done:
	pdfstamp_result_clear(&res);
	pdfstamp_doc_close(doc);
	if (fd >= 0)
		close(fd);
	unlink(out);
	pdfstamp_ctx_free(ctx);
	return 0;
}
