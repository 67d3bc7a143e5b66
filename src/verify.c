/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify.c - whole-file verification (pdfstamp_verify, `pdfstamp verify`),
 * also the first part of the full rewrite's self-check (rwcheck.c).
 *
 * DESIGN NOTES
 *
 *  1. Every object in use of the newest revision is loaded uncached
 *     (ps_doc_load), so every string is decrypted (ISO 32000-2 7.6.2) and
 *     memory stays flat however large the file; every stream's raw data is
 *     read and decrypted as well (ps_doc_stream_data), which checks the
 *     AES-CBC padding of each (7.6.3.1).  An xref entry that does not point
 *     at its object fails the load of that object.
 *  2. A fault does not stop the walk: faults are counted, the first is
 *     described (object number and message), and the call fails with
 *     PDFSTAMP_E_FORMAT at the end, so one damaged object does not hide the
 *     others.  /Perms that does not match /P and /EncryptMetadata
 *     (Algorithm 13, 7.6.4.4.12: accepted only with PDFSTAMP_AUTH_FORCE) is
 *     a fault too.
 *  3. Decrypted stream data is held in a secret buffer (wiped when freed).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ps.h"

static int count_string(void *ud, ps_obj *str, const ps_obj *parent, const char *key)
{
	(*(int64_t *)ud)++;
	return 0;
}

int pdfstamp_verify(pdfstamp_doc *doc, const struct pdfstamp_verify_opts *opts,
                    struct pdfstamp_verify_report *r)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	const ps_xref *x = ps_doc_xref(doc);
	int64_t size = ps_doc_size(doc);
	struct ps_doc_security ds;
	ps_buf data = PS_BUF_INIT;
	pdfstamp_progress_fn progress;
	void *ud;
	uint32_t num;
	int rc;

	if (!opts || opts->version != PDFSTAMP_VERIFY_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "verify options of an unknown version");
	if (!r || r->version != PDFSTAMP_VERIFY_REPORT_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "verify report of an unknown version");
	progress = opts->progress;
	ud = opts->progress_ud;
	memset(r, 0, sizeof *r);
	r->version = PDFSTAMP_VERIFY_REPORT_VERSION;
	data.secret = 1;
	ps_doc_security(doc, &ds);
	if (ds.sec && !ds.authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	if ((rc = ps_xref_load_all(doc)) < 0)
		return rc;
	if (ds.sec && !ps_sec_perms_ok(ds.sec) && ds.authenticated) {
		r->faults++;
		snprintf(r->first_fault, sizeof r->first_fault,
		         "/Perms does not match /P and /EncryptMetadata");
	}
	for (num = ps_xref_next(x, 0); num != 0; num = ps_xref_next(x, num)) {
		const ps_xent *e = ps_xref_get(x, num);
		ps_obj *o = NULL;

		/* load (uncached) decrypts every string; memory stays flat */
		rc = ps_doc_load(doc, num, &o);
		if (rc == 0 && o) {
			r->objects++;
			ps_obj_walk_strings(o, count_string, &r->strings);
			if (o->kind == PS_STREAM) {
				r->streams++;
				rc = ps_doc_stream_data(doc, num, o, 0, &data);
			}
		}
		ps_obj_free(o);
		if (rc < 0) {
			if (!r->faults++) {
				r->first_fault_object = num;
				snprintf(r->first_fault, sizeof r->first_fault, "%s", ctx->errmsg);
			}
		}
		if (progress && e->type == 1 && (num & 1023) == 0)
			progress(ud, e->off, size);
	}
	ps_buf_free(&data);
	if (progress)
		progress(ud, size, size);
	if (r->faults)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%lld object(s) failed verification; first: %s", (long long)r->faults,
		              r->first_fault);
	return 0;
}
