/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_audit.c - libFuzzer target for pdfstamp_audit (audit.c, auditsig.c):
 * what changed after each signature, and whether its policy permits it.
 *
 * The input is a whole file, meant to be signed with later revisions
 * (make-seeds.py writes files with a /ByteRange over the first revision and
 * incremental updates that add an annotation, change page content, add a
 * /DSS, in table and xref-stream form, plaintext and RC4-encrypted).  It is
 * opened from an anonymous file (fuzz.h), authenticated with the fuzzing
 * passwords if encrypted (a file no password opens is dropped), and
 * audited on the fresh document (fuzz_xref audits after a walk of every
 * object, with warm caches; here the audit reads everything itself).
 *
 * Oracles, besides the sanitizers (no crash, no leak):
 *  - the call returns 0 or a negative PDFSTAMP_E_* code; never INTERNAL,
 *    USAGE (the arguments are valid: only the file could cause it),
 *    PASSWORD or PERM (audit only reads, and the document is
 *    authenticated); every error has a message;
 *  - on success the report is consistent: one revision per cross-reference
 *    section; the verdict is UNSIGNED exactly when there is no signature,
 *    VIOLATION exactly when some signature is violated, else OK; every
 *    change has a known kind and action, lies in an audited revision, and
 *    is forbidden exactly when it names a signature, which is then
 *    violated; `forbidden` is the number of forbidden changes; the
 *    signatures' revisions, levels and strings are in range and
 *    terminated; bytes_read does not exceed the file;
 *  - audit only reads: a second audit of the same document gives the same
 *    report (verdict, counts, every change);
 *  - pdfstamp_audit_clear leaves an empty report with its version;
 *  - pdfstamp_stamps_list (stamps.c, which places each stamp in a revision
 *    and asks audit which revisions signatures cover) returns 0 or an
 *    error the file can cause, and on success a consistent list: pages,
 *    revisions and signatures agree with the document and the audit, every
 *    stamp's page is one of them, its revision in range (0 for a direct
 *    one) and, when covered, no later than the newest signed revision, its
 *    ID a prefix of its /NM of [A-Za-z0-9_-]; pdfstamp_stamps_clear empties it.
 */
#include "fuzz.h"

static void fza_check_report(ps_ctx *ctx, const ps_doc *doc, const struct pdfstamp_audit_report *r, size_t size)
{
	int i, k, nsec, violated = 0;
	int64_t forbidden = 0;

	ps_xref_sections(ps_doc_xref(doc), &nsec);
	if (r->nrevisions != nsec || r->nrevisions < 1 || !r->revisions)
		fz_bug(ctx, "the report does not list one revision per cross-reference section");
	if (r->nsigs < 0 || (r->nsigs > 0 && !r->sigs))
		fz_bug(ctx, "a bad signature count");
	for (i = 0; i < r->nsigs; i++) {
		const struct pdfstamp_audit_sig *g = &r->sigs[i];
		if (!memchr(g->field, 0, sizeof g->field) || !memchr(g->subfilter, 0, sizeof g->subfilter))
			fz_bug(ctx, "a signature's field or subfilter is not terminated");
		if (g->revision < 0 || g->revision > r->nrevisions || (g->covers_revision && g->revision < 1))
			fz_bug(ctx, "a signature's revision is out of range");
		if (g->docmdp < 0 || g->docmdp > 3 || g->fieldmdp < PDFSTAMP_FIELDMDP_NONE ||
		    g->fieldmdp > PDFSTAMP_FIELDMDP_EXCLUDE || g->nfields < 0 || (g->nfields > 0 && !g->fields))
			fz_bug(ctx, "a signature's DocMDP or FieldMDP is out of range");
		for (k = 0; k < g->nfields; k++)
			if (!g->fields[k])
				fz_bug(ctx, "a FieldMDP field name is NULL");
		violated |= g->violated != 0;
	}
	if (r->verdict != (r->nsigs == 0 ? PDFSTAMP_AUDIT_UNSIGNED
	                                 : violated ? PDFSTAMP_AUDIT_VIOLATION : PDFSTAMP_AUDIT_OK))
		fz_bug(ctx, "the verdict does not follow from the signatures");
	for (i = 0; i < r->nrevisions; i++) {
		const struct pdfstamp_audit_revision *rv = &r->revisions[i];
		if (rv->nchanges < 0 || (rv->nchanges > 0 && (!rv->changes || !rv->audited)))
			fz_bug(ctx, "changes listed for a revision that was not audited");
		if (rv->added < 0 || rv->modified < 0 || rv->freed < 0)
			fz_bug(ctx, "a negative object count");
		for (k = 0; k < rv->nchanges; k++) {
			const struct pdfstamp_audit_change *c = &rv->changes[k];
			if (!pdfstamp_change_kind_name(c->kind))
				fz_bug(ctx, "a change of an unknown kind");
			if (c->action < PDFSTAMP_CHANGE_ADDED || c->action > PDFSTAMP_CHANGE_FREED)
				fz_bug(ctx, "a change of an unknown action");
			if (!memchr(c->field, 0, sizeof c->field))
				fz_bug(ctx, "a change's field name is not terminated");
			if (c->forbidden ? c->signature < 0 || c->signature >= r->nsigs || !r->sigs[c->signature].violated
			                 : c->signature != -1)
				fz_bug(ctx, "a change is forbidden without breaking a violated signature, or the reverse");
			forbidden += c->forbidden != 0;
		}
	}
	if (forbidden != r->forbidden)
		fz_bug(ctx, "`forbidden` is not the number of forbidden changes");
	if (r->bytes_read < 0 || (uint64_t)r->bytes_read > size)
		fz_bug(ctx, "more bytes read than the file has");
}

/* A second audit of the same document reports the same. */
static void fza_same(ps_ctx *ctx, const struct pdfstamp_audit_report *a, const struct pdfstamp_audit_report *b)
{
	int i, k;

	if (a->verdict != b->verdict || a->nsigs != b->nsigs || a->nrevisions != b->nrevisions ||
	    a->forbidden != b->forbidden)
		fz_bug(ctx, "a second audit gives another verdict or other counts");
	for (i = 0; i < a->nsigs; i++)
		if (a->sigs[i].violated != b->sigs[i].violated || a->sigs[i].revision != b->sigs[i].revision ||
		    a->sigs[i].covers_revision != b->sigs[i].covers_revision || a->sigs[i].docmdp != b->sigs[i].docmdp ||
		    strcmp(a->sigs[i].field, b->sigs[i].field) != 0)
			fz_bug(ctx, "a second audit judges a signature otherwise");
	for (i = 0; i < a->nrevisions; i++) {
		const struct pdfstamp_audit_revision *x = &a->revisions[i], *y = &b->revisions[i];
		if (x->offset != y->offset || x->audited != y->audited || x->nchanges != y->nchanges ||
		    x->added != y->added || x->modified != y->modified || x->freed != y->freed)
			fz_bug(ctx, "a second audit lists a revision otherwise");
		for (k = 0; k < x->nchanges; k++)
			if (memcmp(&x->changes[k], &y->changes[k], sizeof x->changes[k]) != 0)
				fz_bug(ctx, "a second audit classifies a change otherwise");
	}
}

static void fza_check_rc(ps_ctx *ctx, int rc)
{
	if (rc > 0 || rc < PDFSTAMP_E_PERM)
		fz_bug(ctx, "pdfstamp_audit returned neither 0 nor a PDFSTAMP_E_* code");
	if (rc == PDFSTAMP_E_INTERNAL || rc == PDFSTAMP_E_USAGE || rc == PDFSTAMP_E_PASSWORD || rc == PDFSTAMP_E_PERM)
		fz_bug(ctx, "pdfstamp_audit: an error the file cannot cause");
	if (rc < 0 && pdfstamp_ctx_errmsg(ctx)[0] == 0)
		fz_bug(ctx, "an error without a message");
}

static void fza_check_cleared(ps_ctx *ctx, const struct pdfstamp_audit_report *r)
{
	if (r->version != PDFSTAMP_AUDIT_REPORT_VERSION || r->verdict || r->nsigs || r->sigs || r->nrevisions ||
	    r->revisions || r->forbidden || r->bytes_read)
		fz_bug(ctx, "pdfstamp_audit_clear left something behind");
}

/* The stamp list of the same document (stamps.c) against the audit REP. */
static void fza_stamps(ps_ctx *ctx, ps_doc *doc, const struct pdfstamp_audit_report *rep)
{
	struct pdfstamp_stamps l = PDFSTAMP_STAMPS_INIT;
	int64_t i;
	int k, newest_signed = 0, rc = pdfstamp_stamps_list(doc, &l);

	fza_check_rc(ctx, rc);
	for (k = 0; k < rep->nsigs; k++)
		if (rep->sigs[k].revision > newest_signed)
			newest_signed = rep->sigs[k].revision;
	if (rc == 0) {
		if (l.revisions != rep->nrevisions || l.nsigs != rep->nsigs || l.pages < 0 ||
		    l.skipped < 0 || l.nstamps < 0 || (l.nstamps > 0 && !l.stamps))
			fz_bug(ctx, "the stamp list disagrees with the audit");
		for (i = 0; i < l.nstamps; i++) {
			const struct pdfstamp_stamp_info *s = &l.stamps[i];
			size_t n = strlen(s->id);
			if (s->page < 1 || s->page > l.pages || s->revision < 0 ||
			    s->revision > l.revisions || (s->objnum == 0 && s->revision != 0) ||
			    s->signed_revision < -1 || s->signed_revision > 1 ||
			    (s->signed_revision == 1 && s->revision > newest_signed))
				fz_bug(ctx, "a stamp's page, revision or coverage is out of range");
			if (!s->contents || !s->author || !s->nm ||
			    !memchr(s->subtype, 0, sizeof s->subtype) || !memchr(s->date, 0, sizeof s->date))
				fz_bug(ctx, "a stamp's strings are missing or not terminated");
			if (n > 32 || strspn(s->id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			                            "0123456789_-") != n ||
			    (n && (strncmp(s->nm, s->id, n) != 0 || s->nm[n] != '.')))
				fz_bug(ctx, "a stamp's ID is not the start of its /NM");
		}
	}
	pdfstamp_stamps_clear(&l);
	if (l.version != PDFSTAMP_STAMPS_VERSION || l.nstamps || l.stamps || l.pages || l.revisions)
		fz_bug(ctx, "pdfstamp_stamps_clear left something behind");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pdfstamp_audit_report rep = PDFSTAMP_AUDIT_REPORT_INIT, again = PDFSTAMP_AUDIT_REPORT_INIT;
	char path[64];
	ps_ctx *ctx = NULL;
	ps_doc *doc = NULL;
	int fd = -1, rc;

	if (size > FZ_MAX_INPUT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	if ((fd = fz_memfile(data, size, path)) < 0)
		goto out;
	if (pdfstamp_doc_open(ctx, &doc, path, 0) < 0 || fz_doc_auth(doc) < 0)
		goto out;
	rc = pdfstamp_audit(doc, &rep);
	fza_check_rc(ctx, rc);
	if (rc == 0) {
		fza_check_report(ctx, doc, &rep, size);
		rc = pdfstamp_audit(doc, &again);
		fza_check_rc(ctx, rc);
		if (rc == 0)
			fza_same(ctx, &rep, &again);
		else if (rc != PDFSTAMP_E_NOMEM)
			fz_bug(ctx, "a second audit of the same document fails");
		if (rc == 0)
			fza_stamps(ctx, doc, &rep);
	}
	pdfstamp_audit_clear(&rep);
	pdfstamp_audit_clear(&again);
	fza_check_cleared(ctx, &rep);
	fza_check_cleared(ctx, &again);
out:
	pdfstamp_doc_close(doc);
	if (fd >= 0)
		close(fd);
	pdfstamp_ctx_free(ctx);
	return 0;
}
