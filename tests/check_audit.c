/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_audit.c - the signature audit (audit.c) and its rule table
 * (policy.c): files written byte by byte (pdfgen), a signed first revision
 * whose /ByteRange ends at its own %%EOF, then later revisions made by hand,
 * including hostile ones (an object stream that redefines a signed object,
 * a freed object, another /Root, a redefined signature dictionary, a /Prev
 * loop, object numbers out of range).
 */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps.h"
#include "policy.h"
#include "pdfgen.h"

static const char *dir;
static ps_ctx *ctx;
static ps_doc *doc;
static struct pdfstamp_audit_report rep = PDFSTAMP_AUDIT_REPORT_INIT;
static int visible_sig; /* signed_base: the signature's widget shows, at [100 100 300 150] */

static void setup(void)
{
	dir = pg_tmpdir("check_audit");
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	doc = NULL;
}

static void teardown(void)
{
	pdfstamp_audit_clear(&rep);
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	pg_rmdir(dir);
}

#define DOCMDP "/Reference[<</Type/SigRef/TransformMethod/DocMDP/TransformParams<</Type/TransformParams/P %d/V/1.2>>>>]"
#define FIELDMDP "/Reference[<</Type/SigRef/TransformMethod/FieldMDP/TransformParams<</Type/TransformParams" \
	"/Action/Include/Fields[(Name)]/V/1.2>>>>]"

/* The first S in P's bytes at or after FROM. */
static char *find(pg *p, size_t from, const char *str)
{
	size_t n = strlen(str), i;

	for (i = from; i + n <= p->b.len; i++)
		if (memcmp(p->b.data + i, str, n) == 0)
			return (char *)p->b.data + i;
	return NULL;
}

/* Revision 1: catalog 1, pages 2, page 3 (content 5, annots [6 7]), font
 * 4, text field 6 (Name), signature field 7 with value 8 (LEVEL 0:
 * approval, else a DocMDP certification; LOCK: a FieldMDP lock on Name),
 * /Info 9.  Its /ByteRange ends at the end of the revision.  Returns the
 * offset of its xref section (for /Prev). */
static int64_t signed_base(pg *p, int level, int lock)
{
	pg_ent e[10];
	char ref[256] = "";
	int64_t x;
	uint32_t i;

	if (level)
		snprintf(ref, sizeof ref, DOCMDP, level);
	else if (lock)
		snprintf(ref, sizeof ref, "%s", FIELDMDP);
	pg_start(p);
	pg_obj(p, 1, 0, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R]/SigFlags 3>>%s>>",
	       level ? "/Perms<</DocMDP 8 0 R>>" : "");
	pg_obj(p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R"
	       "/Resources<</Font<</F1 4 0 R>>>>/Annots[6 0 R 7 0 R]>>");
	pg_obj(p, 4, 0, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>");
	pg_stream(p, 5, "", "BT /F1 24 Tf 72 700 Td (signed) Tj ET", 37);
	pg_obj(p, 6, 0, "<</Type/Annot/Subtype/Widget/FT/Tx/T(Name)/V(before)/Rect[0 0 10 10]/P 3 0 R>>");
	pg_obj(p, 7, 0, "<</Type/Annot/Subtype/Widget/FT/Sig/T(Sig1)/V 8 0 R/Rect[%s]/P 3 0 R/AP<</N 5 0 R>>>>",
	       visible_sig ? "100 100 300 150" : "0 0 0 0");
	pg_obj(p, 8, 0, "<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/adbe.pkcs7.detached" PG_SIG_BR
	       "/Contents<00112233>%s>>", ref);
	pg_obj(p, 9, 0, "<</Producer(check_audit)>>");
	memset(e, 0, sizeof e);
	for (i = 1; i <= 9; i++)
		e[i] = pg_used(p, i);
	e[0].num = 0;
	e[0].f3 = 65535;
	x = pg_table(p, e, 10, "<</Size 10/Root 1 0 R/Info 9 0 R>>");
	/* the signed range ends at this revision's end */
	ck_assert(!p->b.oom);
	pg_set_byterange(p, 0);
	return x;
}

static void reopen(pg *p, const char *name)
{
	const char *path = pg_save(p, dir, name);

	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), 0);
}

static int do_audit(void)
{
	pdfstamp_audit_clear(&rep);
	return pdfstamp_audit(doc, &rep);
}

/* The first change of the newest revision that concerns object NUM. */
static const struct pdfstamp_audit_change *change_of(int64_t num)
{
	int i, k;

	for (i = rep.nrevisions - 1; i >= 0; i--)
		for (k = 0; k < rep.revisions[i].nchanges; k++)
			if (rep.revisions[i].changes[k].object == num)
				return &rep.revisions[i].changes[k];
	return NULL;
}

/* Appends a revision: the objects already written to P since MARK, the
 * entries ENTS, trailer "/Size SIZE/Root ROOT 0 R/Prev PREV" + EXTRA. */
static void update(pg *p, const pg_ent *ents, size_t n, int size, int root, int64_t prev, const char *extra)
{
	char tr[256];

	snprintf(tr, sizeof tr, "<</Size %d/Root %d 0 R/Info 9 0 R/Prev %lld%s>>", size, root, (long long)prev,
	         extra ? extra : "");
	pg_table(p, ents, n, tr);
}

/* ---- the rule table ------------------------------------------------------------ */

START_TEST(rule_table)
{
	/* columns approval, P=1, P=2, P=3 (policy.c note 3) */
	static const struct { int kind; int allow[4]; } want[] = {
		{PDFSTAMP_CHANGE_ANNOTATION, {1, 0, 0, 1}},
		{PDFSTAMP_CHANGE_FORM_FIELD, {1, 0, 1, 1}},
		{PDFSTAMP_CHANGE_SIGNATURE, {1, 0, 1, 1}},
		{PDFSTAMP_CHANGE_DSS, {1, 1, 1, 1}},
		{PDFSTAMP_CHANGE_DOC_TIMESTAMP, {1, 1, 1, 1}},
		{PDFSTAMP_CHANGE_METADATA, {1, 0, 0, 0}},
		{PDFSTAMP_CHANGE_PAGE_CONTENT, {0, 0, 0, 0}},
		{PDFSTAMP_CHANGE_PAGE_TREE, {0, 0, 0, 0}},
		{PDFSTAMP_CHANGE_CATALOG, {0, 0, 0, 0}},
		{PDFSTAMP_CHANGE_ENCRYPTION, {0, 0, 0, 0}},
		{PDFSTAMP_CHANGE_DAMAGED, {0, 0, 0, 0}},
		{PDFSTAMP_CHANGE_OTHER, {0, 0, 0, 0}},
	};
	size_t i;
	int l;

	for (i = 0; i < sizeof want / sizeof want[0]; i++)
		for (l = 0; l < 4; l++)
			ck_assert_msg(pdfstamp_policy_allows(l, want[i].kind, 1) == want[i].allow[l], "%s at level %d",
			              pdfstamp_change_kind_name(want[i].kind), l);
	for (l = 0; l < 4; l++) /* a new object of no recognised kind */
		ck_assert_int_eq(pdfstamp_policy_allows(l, PDFSTAMP_CHANGE_OTHER, 0), 1);
	ck_assert_int_eq(pdfstamp_policy_allows(4, PDFSTAMP_CHANGE_DSS, 1), 0);
	ck_assert_int_eq(pdfstamp_policy_allows(0, PDFSTAMP_CHANGE_KINDS, 0), 0);
	ck_assert_int_eq(pdfstamp_policy_allows(0, -1, 0), 0);
	ck_assert_str_eq(pdfstamp_change_kind_name(PDFSTAMP_CHANGE_PAGE_CONTENT), "page-content");
	ck_assert_str_eq(pdfstamp_change_kind_name(PDFSTAMP_CHANGE_DOC_TIMESTAMP), "doc-timestamp");
	ck_assert_ptr_null(pdfstamp_change_kind_name(PDFSTAMP_CHANGE_KINDS));
}
END_TEST

/* ---- verdicts ------------------------------------------------------------------ */

START_TEST(unsigned_and_untouched)
{
	pg p;

	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[]/Count 0>>");
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, pg_save_table(&p, "", dir, "u.pdf"), 0), 0);
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_UNSIGNED);

	signed_base(&p, 0, 0);
	reopen(&p, "s.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	ck_assert_int_eq(rep.nsigs, 1);
	ck_assert_str_eq(rep.sigs[0].field, "Sig1");
	ck_assert_int_eq(rep.sigs[0].covers_revision, 1);
	ck_assert_int_eq(rep.sigs[0].revision, 1);
	ck_assert_int_eq(rep.nrevisions, 1);
	ck_assert_int_eq(rep.revisions[0].added, 9);
}
END_TEST

/* Revision 2 replaces the content stream (5) after an approval signature. */
START_TEST(page_content_after_approval)
{
	pg p;
	int64_t x = signed_base(&p, 0, 0);
	pg_ent e[1];

	pg_stream(&p, 5, "", "BT /F1 24 Tf 72 700 Td (forged) Tj ET", 37);
	e[0] = pg_used(&p, 5);
	update(&p, e, 1, 10, 1, x, NULL);
	reopen(&p, "c.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_ptr_nonnull(change_of(5));
	ck_assert_int_eq(change_of(5)->kind, PDFSTAMP_CHANGE_PAGE_CONTENT);
	ck_assert_int_eq(change_of(5)->forbidden, 1);
	ck_assert_int_eq(change_of(5)->signature, 0);
	ck_assert_int_eq(rep.revisions[1].modified, 1);
	ck_assert_int_eq(rep.sigs[0].violated, 1);
}
END_TEST

/* The same bytes rewritten (a re-save): no change at all. */
START_TEST(identical_rewrite_is_no_change)
{
	pg p;
	int64_t x = signed_base(&p, 1, 0);
	pg_ent e[1];

	pg_stream(&p, 5, "", "BT /F1 24 Tf 72 700 Td (signed) Tj ET", 37);
	e[0] = pg_used(&p, 5);
	update(&p, e, 1, 10, 1, x, NULL);
	reopen(&p, "same.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	ck_assert_int_eq(rep.revisions[1].nchanges, 0);
	ck_assert_int_eq(rep.revisions[1].modified, 1);
}
END_TEST

/* An annotation added (page 3's /Annots and a new annotation 10). */
static void add_annotation(int level)
{
	pg p;
	int64_t x = signed_base(&p, level, 0);
	pg_ent e[2];

	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R"
	       "/Resources<</Font<</F1 4 0 R>>>>/Annots[6 0 R 7 0 R 10 0 R]>>");
	pg_obj(&p, 10, 0, "<</Type/Annot/Subtype/Text/Rect[0 0 20 20]/Contents(note)>>");
	e[0] = pg_used(&p, 3);
	e[1] = pg_used(&p, 10);
	update(&p, e, 2, 11, 1, x, NULL);
	reopen(&p, "a.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_ptr_nonnull(change_of(3));
	ck_assert_ptr_nonnull(change_of(10));
	ck_assert_int_eq(change_of(3)->kind, PDFSTAMP_CHANGE_ANNOTATION);
	ck_assert_int_eq(change_of(10)->kind, PDFSTAMP_CHANGE_ANNOTATION);
	ck_assert_int_eq(change_of(10)->action, PDFSTAMP_CHANGE_ADDED);
}

START_TEST(annotation_by_level)
{
	add_annotation(1);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(rep.sigs[0].docmdp, 1);
	add_annotation(2);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	add_annotation(3);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	add_annotation(0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
}
END_TEST

/* The text field's value (6): P=2 ok, P=1 and a FieldMDP lock forbid it. */
static void fill(int level, int lock)
{
	pg p;
	int64_t x = signed_base(&p, level, lock);
	pg_ent e[1];

	pg_obj(&p, 6, 0, "<</Type/Annot/Subtype/Widget/FT/Tx/T(Name)/V(after)/Rect[0 0 10 10]/P 3 0 R>>");
	e[0] = pg_used(&p, 6);
	update(&p, e, 1, 10, 1, x, NULL);
	reopen(&p, "f.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_ptr_nonnull(change_of(6));
	ck_assert_int_eq(change_of(6)->kind, PDFSTAMP_CHANGE_FORM_FIELD);
	ck_assert_str_eq(change_of(6)->field, "Name");
}

START_TEST(form_fill_and_fieldmdp)
{
	fill(2, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	fill(3, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	fill(1, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	fill(0, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	fill(0, 1);
	ck_assert_int_eq(rep.sigs[0].fieldmdp, PDFSTAMP_FIELDMDP_INCLUDE);
	ck_assert_int_eq(rep.sigs[0].nfields, 1);
	ck_assert_str_eq(rep.sigs[0].fields[0], "Name");
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(6)->forbidden, 1);
}
END_TEST

/* A DSS under P=1 (ISO 32000-2 Table 257): not a change. */
START_TEST(dss_under_p1)
{
	pg p;
	int64_t x = signed_base(&p, 1, 0);
	pg_ent e[3];

	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R]/SigFlags 3>>"
	       "/Perms<</DocMDP 8 0 R>>/DSS 10 0 R>>");
	pg_obj(&p, 10, 0, "<</Type/DSS/Certs[11 0 R]>>");
	pg_stream(&p, 11, "", "0\x82\x01\x00", 4);
	e[0] = pg_used(&p, 1);
	e[1] = pg_used(&p, 10);
	e[2] = pg_used(&p, 11);
	update(&p, e, 3, 12, 1, x, NULL);
	reopen(&p, "d.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	ck_assert_int_eq(change_of(1)->kind, PDFSTAMP_CHANGE_DSS);
	ck_assert_int_eq(change_of(10)->kind, PDFSTAMP_CHANGE_DSS);
	ck_assert_int_eq(change_of(11)->kind, PDFSTAMP_CHANGE_DSS);
}
END_TEST

/* A document timestamp after a P=1 certification (ETSI EN 319 142-1 5.4.3):
 * the catalog's direct /AcroForm gets the field, the page's /Annots its
 * widget.  Its /Contents is no CMS (<00>), so the revision is not closed by
 * a timestamp that signs it: signing that signs nothing is no signing
 * (audit.c note 5), every change of it counts as an annotation, and P=1
 * and P=2 forbid it; an approval signature permits annotations.  The real
 * timestamps and signatures are in tests/e2e/audit-attacks.sh. */
static void add_timestamp(int level, int dts)
{
	pg p;
	int64_t x = signed_base(&p, level, 0);
	pg_ent e[4];

	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R 10 0 R]/SigFlags 3>>%s>>",
	       level ? "/Perms<</DocMDP 8 0 R>>" : "");
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R"
	       "/Resources<</Font<</F1 4 0 R>>>>/Annots[6 0 R 7 0 R 10 0 R]>>");
	pg_obj(&p, 10, 0, "<</Type/Annot/Subtype/Widget/FT/Sig/T(TS1)/V 11 0 R/Rect[0 0 0 0]/P 3 0 R>>");
	pg_obj(&p, 11, 0, dts ? "<</Type/DocTimeStamp/Filter/Adobe.PPKLite/SubFilter/ETSI.RFC3161" PG_SIG_BR
	       "/Contents<00>>>" : "<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/adbe.pkcs7.detached" PG_SIG_BR
	       "/Contents<00>>>");
	e[0] = pg_used(&p, 1);
	e[1] = pg_used(&p, 3);
	e[2] = pg_used(&p, 10);
	e[3] = pg_used(&p, 11);
	{
		size_t from = (size_t)x;
		update(&p, e, 4, 12, 1, x, NULL);
		pg_set_byterange(&p, from);
	}
	reopen(&p, "ts.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.nsigs, 2);
	ck_assert_int_eq(rep.sigs[1].doc_timestamp, dts);
	ck_assert_int_eq(rep.sigs[1].revision, 2);
	ck_assert_int_eq(rep.sigs[1].covers_revision, 1);
	if (level == 0) {
		ck_assert_int_eq(change_of(1)->forbidden, 0);
		return;
	}
	ck_assert_int_eq(change_of(11)->kind, PDFSTAMP_CHANGE_ANNOTATION);
	ck_assert_int_eq(change_of(11)->forbidden, 1);
	ck_assert_ptr_nonnull(strstr(change_of(11)->reason, "not closed by a"));
}

/* An annotation added after P=3: permitted; over the signature's shown
 * widget it is reported (its reason); --strict (PDFSTAMP_AUDIT_STRICT)
 * forbids it, and any annotation but a text note (audit.c note 5). */
static void p3_annot(const char *subtype, const char *rect, unsigned flags)
{
	pg p;
	int64_t x;
	pg_ent e[2];

	visible_sig = 1;
	x = signed_base(&p, 3, 0);
	visible_sig = 0;
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R"
	       "/Resources<</Font<</F1 4 0 R>>>>/Annots[6 0 R 7 0 R 10 0 R]>>");
	pg_obj(&p, 10, 0, "<</Type/Annot/Subtype/%s/Rect[%s]/Contents(note)/P 3 0 R>>", subtype, rect);
	e[0] = pg_used(&p, 3);
	e[1] = pg_used(&p, 10);
	update(&p, e, 2, 11, 1, x, NULL);
	reopen(&p, "p3annot.pdf");
	rep.flags = flags;
	ck_assert_int_eq(do_audit(), 0);
	rep.flags = 0;
	ck_assert_ptr_nonnull(change_of(10));
	ck_assert_int_eq(change_of(10)->kind, PDFSTAMP_CHANGE_ANNOTATION);
}

START_TEST(annotation_over_signature)
{
	p3_annot("Square", "150 120 200 140", 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	ck_assert_ptr_nonnull(strstr(change_of(10)->reason, "over the widget of signature 'Sig1'"));
	p3_annot("Square", "400 400 450 450", 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	ck_assert_str_eq(change_of(10)->reason, "");
	p3_annot("Square", "150 120 200 140", PDFSTAMP_AUDIT_STRICT);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(10)->forbidden, 1);
	p3_annot("Text", "400 400 420 420", PDFSTAMP_AUDIT_STRICT);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
	p3_annot("Text", "150 120 170 140", PDFSTAMP_AUDIT_STRICT);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	p3_annot("FreeText", "400 400 450 450", PDFSTAMP_AUDIT_STRICT);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	/* the reason names the reading, not the command's option */
	ck_assert_str_eq(change_of(10)->reason, "an annotation that draws content after a P=3 certification "
	                 "(the strict reading)");
}
END_TEST

START_TEST(doc_timestamp_under_p1)
{
	add_timestamp(1, 1);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	add_timestamp(1, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	add_timestamp(2, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	add_timestamp(0, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
}
END_TEST

/* Metadata: approval ok, any certification forbids it. */
START_TEST(metadata)
{
	int level;

	for (level = 0; level <= 3; level++) {
		pg p;
		int64_t x = signed_base(&p, level, 0);
		pg_ent e[1];
		pg_obj(&p, 9, 0, "<</Producer(check_audit)/Title(changed)>>");
		e[0] = pg_used(&p, 9);
		update(&p, e, 1, 10, 1, x, NULL);
		reopen(&p, "m.pdf");
		ck_assert_int_eq(do_audit(), 0);
		ck_assert_int_eq(change_of(9)->kind, PDFSTAMP_CHANGE_METADATA);
		ck_assert_int_eq(rep.verdict, level ? PDFSTAMP_AUDIT_VIOLATION : PDFSTAMP_AUDIT_OK);
	}
}
END_TEST

/* ---- hostile revisions ------------------------------------------------------------ */

/* Revision 2 frees the content stream. */
START_TEST(freed_object)
{
	pg p;
	int64_t x = signed_base(&p, 3, 0);
	pg_ent e[1];

	e[0].num = 5;
	e[0].type = 0;
	e[0].f2 = 0;
	e[0].f3 = 1;
	update(&p, e, 1, 10, 1, x, NULL);
	reopen(&p, "free.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(5)->action, PDFSTAMP_CHANGE_FREED);
	ck_assert_int_eq(change_of(5)->forbidden, 1);
	ck_assert_int_eq(rep.revisions[1].freed, 1);
}
END_TEST

/* Revision 2 is an xref stream that moves the content (5) into a new object
 * stream with other text: the change is found in the decoded member. */
START_TEST(objstm_redefines_signed_object)
{
	pg p;
	int64_t x = signed_base(&p, 3, 0);
	static const char body[] = "5 0 <</Length 0>>";
	char dict[64];
	pg_ent e[3];

	/* an object stream may not hold a stream: hold a non-stream instead,
	 * which still changes what object 5 is */
	snprintf(dict, sizeof dict, "/Type/ObjStm/N 1/First 4");
	pg_stream(&p, 10, dict, body, strlen(body));
	memset(e, 0, sizeof e);
	e[0].num = 5;
	e[0].type = 2;
	e[0].f2 = 10;
	e[0].f3 = 0;
	e[1] = pg_used(&p, 10);
	e[2].num = 11;
	e[2].type = 1;
	{
		char extra[128];
		snprintf(extra, sizeof extra, "/Size 12/Root 1 0 R/Info 9 0 R/Prev %lld", (long long)x);
		pg_xref_stream(&p, 11, e, 3, extra);
	}
	reopen(&p, "objstm.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_ptr_nonnull(change_of(5));
	ck_assert_int_eq(change_of(5)->forbidden, 1);
	ck_assert_ptr_null(change_of(11)); /* the chain's own xref stream is no change */
	ck_assert_ptr_null(change_of(10)); /* nor the object stream as a container */
}
END_TEST

/* Signed objects live in object stream 10; revision 2 replaces only the
 * object stream, leaving the members' entries as they were. */
START_TEST(objstm_replaced_under_old_entries)
{
	pg p;
	pg_ent e[9];
	int64_t x;
	static const char v1[] = "12 0 <</Type/Font/Subtype/Type1/BaseFont/Helvetica>>";
	static const char v2[] = "12 0 <</Type/Font/Subtype/Type1/BaseFont/Courier  >>";
	static const uint32_t used[] = {1, 2, 3, 7, 8, 10};
	size_t i;

	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[7 0 R]/SigFlags 3>>>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<</Font<</F1 12 0 R>>>>>>");
	pg_obj(&p, 7, 0, "<</FT/Sig/T(Sig1)/V 8 0 R>>");
	pg_obj(&p, 8, 0, "<</Type/Sig" PG_SIG_BR "/Contents<00>>>");
	pg_stream(&p, 10, "/Type/ObjStm/N 1/First 5", v1, strlen(v1));
	memset(e, 0, sizeof e);
	e[0].num = 0;
	e[0].f3 = 65535;
	for (i = 0; i < 6; i++)
		e[i + 1] = pg_used(&p, used[i]);
	e[7].num = 11; /* the xref stream itself */
	e[7].type = 1;
	e[8].num = 12; /* compressed in 10 */
	e[8].type = 2;
	e[8].f2 = 10;
	x = pg_xref_stream(&p, 11, e, 9, "/Size 13/Root 1 0 R");
	pg_set_byterange(&p, 0);
	/* revision 2: object stream 10 again, with other content for 12 */
	pg_stream(&p, 10, "/Type/ObjStm/N 1/First 5", v2, strlen(v2));
	{
		pg_ent r2[2];
		char extra[128];
		memset(r2, 0, sizeof r2);
		r2[0] = pg_used(&p, 10);
		r2[1].num = 13;
		r2[1].type = 1;
		snprintf(extra, sizeof extra, "/Size 14/Root 1 0 R/Prev %lld", (long long)x);
		pg_xref_stream(&p, 13, r2, 2, extra);
	}
	reopen(&p, "objstm2.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.sigs[0].covers_revision, 1);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_ptr_nonnull(change_of(12));
	ck_assert_int_eq(change_of(12)->action, PDFSTAMP_CHANGE_MODIFIED);
	ck_assert_int_eq(change_of(12)->forbidden, 1);
}
END_TEST

/* Revision 2 points /Root at a new catalog (a "shadow" document). */
START_TEST(root_replaced)
{
	pg p;
	int64_t x = signed_base(&p, 0, 0);
	pg_ent e[3];

	pg_obj(&p, 10, 0, "<</Type/Catalog/Pages 11 0 R/AcroForm<</Fields[6 0 R 7 0 R]>>>>");
	pg_obj(&p, 11, 0, "<</Type/Pages/Kids[]/Count 0>>");
	e[0] = pg_used(&p, 10);
	e[1] = pg_used(&p, 11);
	update(&p, e, 2, 12, 10, x, NULL);
	reopen(&p, "root.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(10)->kind, PDFSTAMP_CHANGE_CATALOG);
	ck_assert_int_eq(change_of(10)->forbidden, 1);
}
END_TEST

/* Revision 2 redefines the signature dictionary so that its /ByteRange
 * covers the whole file: the signature cannot be taken at its word. */
START_TEST(signature_redefined)
{
	pg p;
	int64_t x = signed_base(&p, 2, 0);
	pg_ent e[2];
	size_t from = p.b.len;

	pg_obj(&p, 8, 0, "<</Type/Sig" PG_SIG_BR "/Contents<00>" DOCMDP ">>", 3);
	pg_stream(&p, 5, "", "BT /F1 24 Tf 72 700 Td (forged) Tj ET", 37);
	e[0] = pg_used(&p, 5);
	e[1] = pg_used(&p, 8);
	update(&p, e, 2, 10, 1, x, NULL);
	pg_set_byterange(&p, from);
	reopen(&p, "sig.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(rep.sigs[0].violated, 1);
}
END_TEST

/* A /ByteRange that does not end at a revision end: violated, never ok. */
START_TEST(byterange_not_at_revision_end)
{
	pg p;
	char *br;

	signed_base(&p, 0, 0);
	br = find(&p, 0, "/ByteRange[0 ");
	ck_assert_ptr_nonnull(br);
	memcpy(br + 13, "0000000010 0000000020 0000000030", 32);
	reopen(&p, "br.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.sigs[0].covers_revision, 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
}
END_TEST

/* A /Prev loop and object numbers out of range: errors at open, and a
 * huge but valid object number is just a new object. */
START_TEST(chain_loop_and_huge_numbers)
{
	pg p;
	int64_t x = signed_base(&p, 1, 0);
	pg_ent e[1];
	const char *path;
	char tr[128];

	/* revision 2 whose /Prev is itself */
	pg_obj(&p, 9, 0, "<</Producer(loop)>>");
	e[0] = pg_used(&p, 9);
	snprintf(tr, sizeof tr, "<</Size 10/Root 1 0 R/Prev %lld>>", (long long)p.b.len);
	pg_table(&p, e, 1, tr);
	path = pg_save(&p, dir, "loop.pdf");
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), PDFSTAMP_E_FORMAT);

	x = signed_base(&p, 1, 0);
	e[0].num = PS_MAX_OBJNUM; /* past pdfgen's table of offsets: by hand */
	e[0].type = 1;
	e[0].f2 = p.b.len;
	e[0].f3 = 0;
	ps_buf_printf(&p.b, "%d 0 obj\n<</Producer(far)>>\nendobj\n", PS_MAX_OBJNUM);
	update(&p, e, 1, PS_MAX_OBJNUM + 1, 1, x, NULL);
	reopen(&p, "huge.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.revisions[1].added, 1);
	ck_assert_int_eq(change_of(PS_MAX_OBJNUM)->action, PDFSTAMP_CHANGE_ADDED);
	/* nothing refers to it, but it is numbered past the signed /Size
	 * (audit.c note 4): not judged an orphan */
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);

	x = signed_base(&p, 1, 0);
	e[0].num = PS_MAX_OBJNUM + 1;
	e[0].type = 1;
	e[0].f2 = 20;
	e[0].f3 = 0;
	update(&p, e, 1, PS_MAX_OBJNUM + 2, 1, x, NULL);
	path = pg_save(&p, dir, "toohigh.pdf");
	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), PDFSTAMP_E_FORMAT);
}
END_TEST

START_TEST(api_guards)
{
	pg p;
	struct pdfstamp_audit_report bad = PDFSTAMP_AUDIT_REPORT_INIT;

	signed_base(&p, 0, 0);
	reopen(&p, "g.pdf");
	bad.version = 99;
	ck_assert_int_eq(pdfstamp_audit(doc, &bad), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(pdfstamp_audit(doc, NULL), PDFSTAMP_E_USAGE);
	pdfstamp_audit_clear(NULL);
	/* filling twice does not leak (ASan) */
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(pdfstamp_audit(doc, &rep), 0);
	ck_assert_int_eq(rep.version, PDFSTAMP_AUDIT_REPORT_VERSION);
}
END_TEST

/* ---- hostile revisions, review (issue 15) --------------------------------------- */

/* One revision of objects given as "num:body" strings (stream bodies are
 * written with pg_stream when BODY starts with '#': the rest is the data). */
static int64_t rev_objs(pg *p, int64_t prev, const char *extra, int n, ...)
{
	pg_ent e[16];
	va_list ap;
	int i;
	int64_t x;
	char tr[256];

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		uint32_t num = va_arg(ap, uint32_t);
		const char *body = va_arg(ap, const char *);
		if (body[0] == '#')
			pg_stream(p, num, "", body + 1, strlen(body + 1));
		else
			pg_obj(p, num, 0, "%s", body);
		e[i] = pg_used(p, num);
	}
	va_end(ap);
	snprintf(tr, sizeof tr, "<</Size 16/Root 1 0 R/Info 9 0 R/Prev %lld%s>>", (long long)prev, extra ? extra : "");
	x = p->b.len;
	pg_table(p, e, (size_t)n, tr);
	return x;
}

#define PAGE3(annots) "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R" \
	"/Resources<</Font<</F1 4 0 R>>>>/Annots[" annots "]>>"
#define CAT2(fields, more) "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[" fields "]/SigFlags 3>>" \
	"/Perms<</DocMDP 8 0 R>>" more ">>"

/* A new text field (a widget drawn over the page) under P=2: adding a field
 * is not filling one in (Table 257): forbidden. */
START_TEST(new_field_under_p2)
{
	pg p;
	int64_t x = signed_base(&p, 2, 0);

	rev_objs(&p, x, NULL, 3, 1u, CAT2("6 0 R 7 0 R 10 0 R", ""), 3u, PAGE3("6 0 R 7 0 R 10 0 R"),
	         10u, "<</Type/Annot/Subtype/Widget/FT/Tx/T(Over)/V(x)/Rect[0 0 612 792]/P 3 0 R>>");
	reopen(&p, "newfield.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(10)->forbidden, 1);
}
END_TEST

/* A widget whose /AP now names the page's content stream, which the same
 * revision replaces: the stream stays page content, whatever uses it. */
START_TEST(appearance_role_hijack)
{
	pg p;
	int64_t x = signed_base(&p, 2, 0);

	rev_objs(&p, x, NULL, 2,
	         6u, "<</Type/Annot/Subtype/Widget/FT/Tx/T(Name)/V(after)/Rect[0 0 10 10]/P 3 0 R/AP<</N 5 0 R>>>>",
	         5u, "#BT /F1 24 Tf 72 700 Td (forged) Tj ET");
	reopen(&p, "hijack.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(5)->forbidden, 1);
	ck_assert_int_eq(change_of(5)->kind, PDFSTAMP_CHANGE_PAGE_CONTENT);
}
END_TEST

/* A changed appearance of an existing annotation: an annotation change
 * (P=2 forbids, P=3 permits); its existing appearance stream replaced in
 * place is judged with it. */
START_TEST(existing_annotation_appearance)
{
	int level;

	for (level = 2; level <= 3; level++) {
		pg p;
		int64_t x;
		pg_ent e[12];
		uint32_t i;
		pg_start(&p);
		pg_obj(&p, 1, 0, CAT2("7 0 R", ""));
		pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
		pg_obj(&p, 3, 0, PAGE3("10 0 R 7 0 R"));
		pg_obj(&p, 4, 0, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>");
		pg_stream(&p, 5, "", "BT /F1 24 Tf 72 700 Td (signed) Tj ET", 37);
		pg_obj(&p, 6, 0, "null");
		pg_obj(&p, 7, 0, "<</Type/Annot/Subtype/Widget/FT/Sig/T(Sig1)/V 8 0 R/Rect[0 0 0 0]/P 3 0 R>>");
		pg_obj(&p, 8, 0, "<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/adbe.pkcs7.detached" PG_SIG_BR
		       "/Contents<00112233>" DOCMDP ">>", level);
		pg_obj(&p, 9, 0, "<</Producer(check_audit)>>");
		pg_obj(&p, 10, 0, "<</Type/Annot/Subtype/Square/Rect[0 0 50 50]/AP<</N 11 0 R>>>>");
		pg_stream(&p, 11, "/Type/XObject/Subtype/Form/BBox[0 0 50 50]", "0 0 50 50 re f", 15);
		memset(e, 0, sizeof e);
		for (i = 1; i <= 11; i++)
			e[i] = pg_used(&p, i);
		e[0].f3 = 65535;
		x = pg_table(&p, e, 12, "<</Size 12/Root 1 0 R/Info 9 0 R>>");
		pg_set_byterange(&p, 0);
		/* the square now covers the page, its appearance stream in place */
		{
			pg_ent r[2];
			pg_obj(&p, 10, 0, "<</Type/Annot/Subtype/Square/Rect[0 0 612 792]/AP<</N 11 0 R>>>>");
			pg_stream(&p, 11, "/Type/XObject/Subtype/Form/BBox[0 0 612 792]", "1 g 0 0 612 792 re f", 20);
			r[0] = pg_used(&p, 10);
			r[1] = pg_used(&p, 11);
			update(&p, r, 2, 12, 1, x, NULL);
		}
		reopen(&p, "ap.pdf");
		ck_assert_int_eq(do_audit(), 0);
		ck_assert_int_eq(change_of(10)->kind, PDFSTAMP_CHANGE_ANNOTATION);
		ck_assert_int_eq(change_of(11)->kind, PDFSTAMP_CHANGE_ANNOTATION);
		ck_assert_int_eq(rep.verdict, level == 3 ? PDFSTAMP_AUDIT_OK : PDFSTAMP_AUDIT_VIOLATION);
	}
}
END_TEST

/* Optional content that hides the page's text, and a replaced font: the
 * catalog and an existing object, forbidden even after an approval. */
START_TEST(ocproperties_and_font)
{
	pg p;
	int64_t x = signed_base(&p, 0, 0);

	rev_objs(&p, x, NULL, 2,
	         1u, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R]/SigFlags 3>>"
	             "/OCProperties<</OCGs[10 0 R]/D<</OFF[10 0 R]>>>>>>",
	         10u, "<</Type/OCG/Name(x)>>");
	reopen(&p, "oc.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(1)->kind, PDFSTAMP_CHANGE_CATALOG);
	ck_assert_int_eq(change_of(1)->forbidden, 1);

	x = signed_base(&p, 3, 0);
	rev_objs(&p, x, NULL, 1, 4u, "<</Type/Font/Subtype/Type1/BaseFont/Symbol>>");
	reopen(&p, "font.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(4)->forbidden, 1);
}
END_TEST

/* Freed in revision 2, reused with generation 1 in revision 3. */
START_TEST(freed_then_reused)
{
	pg p;
	int64_t x = signed_base(&p, 3, 0), x2;
	pg_ent e[1];

	e[0].num = 5;
	e[0].type = 0;
	e[0].f2 = 0;
	e[0].f3 = 1;
	x2 = p.b.len;
	update(&p, e, 1, 10, 1, x, NULL);
	pg_obj(&p, 5, 1, "<</Length 37>>stream\nBT /F1 24 Tf 72 700 Td (forged) Tj ET\nendstream");
	e[0] = pg_used(&p, 5);
	update(&p, e, 1, 10, 1, x2, NULL);
	reopen(&p, "reuse.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(rep.nrevisions, 3);
	ck_assert_int_eq(rep.revisions[1].nchanges, 1);
	ck_assert_int_eq(rep.revisions[2].nchanges, 1);
	ck_assert_int_eq(rep.revisions[2].changes[0].generation, 1);
	ck_assert_int_eq(rep.revisions[2].changes[0].forbidden, 1);
}
END_TEST

/* A later trailer whose /Size no longer includes signed objects: readers
 * that honour /Size lose them (7.5.5): forbidden. */
START_TEST(size_reduced)
{
	pg p;
	int64_t x = signed_base(&p, 0, 0);
	char tr[128];
	pg_ent e[1];

	pg_obj(&p, 9, 0, "<</Producer(shrink)>>");
	e[0] = pg_used(&p, 9);
	snprintf(tr, sizeof tr, "<</Size 5/Root 1 0 R/Info 9 0 R/Prev %lld>>", (long long)x);
	pg_table(&p, e, 1, tr);
	reopen(&p, "size.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
}
END_TEST

/* A later revision that takes the signature field out of /Fields: the
 * signature made in revision 1 is still found and judges the change. */
START_TEST(signature_field_removed)
{
	pg p;
	int64_t x = signed_base(&p, 1, 0);

	rev_objs(&p, x, NULL, 2, 1u, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R]>>>>",
	         5u, "#BT /F1 24 Tf 72 700 Td (forged) Tj ET");
	reopen(&p, "nosig.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_ne(rep.verdict, PDFSTAMP_AUDIT_OK);
	ck_assert_int_ne(rep.verdict, PDFSTAMP_AUDIT_UNSIGNED);
}
END_TEST

/* Two signatures: a change between them is judged by the first only; the
 * second, covering it, is untouched. */
START_TEST(later_signature_covers_change)
{
	pg p;
	int64_t x = signed_base(&p, 0, 0), x2;
	size_t from;

	x2 = rev_objs(&p, x, NULL, 1, 4u, "<</Type/Font/Subtype/Type1/BaseFont/Symbol>>");
	from = p.b.len;
	rev_objs(&p, x2, NULL, 4, 1u, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R 10 0 R]/SigFlags 3>>>>",
	         3u, PAGE3("6 0 R 7 0 R 10 0 R"),
	         10u, "<</Type/Annot/Subtype/Widget/FT/Sig/T(Sig2)/V 11 0 R/Rect[0 0 0 0]/P 3 0 R>>",
	         11u, "<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/adbe.pkcs7.detached" PG_SIG_BR "/Contents<00>>>");
	pg_set_byterange(&p, from);
	reopen(&p, "two.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.nsigs, 2);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(4)->forbidden, 1);
	ck_assert_int_eq(change_of(4)->signature, 0);
	ck_assert_int_eq(rep.sigs[0].violated, 1);
	ck_assert_int_eq(rep.sigs[1].violated, 0);
}
END_TEST

/* /AcroForm under P=2: /NeedAppearances true (every field drawn again) and
 * a changed /DR font are forbidden; a font added to /DR is not. */
START_TEST(acroform_appearance_keys)
{
	static const struct { const char *acro; int verdict; } c[] = {
		{"/NeedAppearances true", PDFSTAMP_AUDIT_VIOLATION},
		{"/NeedAppearances false", PDFSTAMP_AUDIT_OK},
		{"/DR<</Font<</Helv 4 0 R/ZaDb 4 0 R>>>>", PDFSTAMP_AUDIT_OK},
		{"/DA(/Helv 40 Tf 0 g)", PDFSTAMP_AUDIT_VIOLATION},
	};
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		pg p;
		int64_t x = signed_base(&p, 2, 0);
		char cat[256];
		snprintf(cat, sizeof cat, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R]/SigFlags 3%s>>"
		         "/Perms<</DocMDP 8 0 R>>>>", c[i].acro);
		rev_objs(&p, x, NULL, 1, 1u, cat);
		reopen(&p, "acro.pdf");
		ck_assert_int_eq(do_audit(), 0);
		ck_assert_msg(rep.verdict == c[i].verdict, "%s: verdict %d", c[i].acro, rep.verdict);
	}
	/* a /DR entry added in revision 2, changed in revision 3 */
	{
		pg p;
		int64_t x = signed_base(&p, 2, 0);
		x = rev_objs(&p, x, NULL, 1, 1u, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R]/SigFlags 3"
		             "/DR<</Font<</Helv 4 0 R>>>>>>/Perms<</DocMDP 8 0 R>>>>");
		rev_objs(&p, x, NULL, 1, 1u, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R]/SigFlags 3"
		         "/DR<</Font<</Helv 9 0 R>>>>>>/Perms<</DocMDP 8 0 R>>>>");
		reopen(&p, "dr.pdf");
		ck_assert_int_eq(do_audit(), 0);
		ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
		ck_assert_int_eq(rep.revisions[1].nchanges, 1);
		ck_assert_int_eq(rep.revisions[1].changes[0].forbidden, 0);
		ck_assert_int_eq(rep.revisions[2].changes[0].forbidden, 1);
	}
}
END_TEST

/* A new object below the signed /Size that no change refers to (the
 * shadow of a reference that led nowhere when signed: "/X1 Do" with no /X1
 * yet): forbidden; the same object as the appearance of a new annotation:
 * permitted (approval). */
/* signed_base with a trailer /Size of 20 (numbers 10-19 free) */
static int64_t signed_base_size20(pg *p)
{
	int64_t x = signed_base(p, 0, 0);
	char *sz = find(p, (size_t)x, "/Size 10/");

	ck_assert_ptr_nonnull(sz);
	memcpy(sz, "/Size 20/", 9);
	return x;
}

START_TEST(orphan_new_object)
{
	pg p;
	int64_t x = signed_base_size20(&p);

	pg_stream(&p, 12, "/Type/XObject/Subtype/Form/BBox[0 0 612 792]", "1 g 0 0 612 792 re f", 20);
	{
		pg_ent e[1] = {pg_used(&p, 12)};
		update(&p, e, 1, 20, 1, x, NULL);
	}
	reopen(&p, "orphan.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	ck_assert_int_eq(change_of(12)->forbidden, 1);
	ck_assert_int_eq(rep.revisions[1].nchanges, 1); /* not the /Size */

	x = signed_base_size20(&p);
	pg_stream(&p, 12, "/Type/XObject/Subtype/Form/BBox[0 0 20 20]", "0 0 20 20 re f", 14);
	pg_obj(&p, 3, 0, PAGE3("6 0 R 7 0 R 10 0 R"));
	pg_obj(&p, 10, 0, "<</Type/Annot/Subtype/Square/Rect[0 0 20 20]/AP<</N 12 0 R>>>>");
	{
		pg_ent e[3] = {pg_used(&p, 3), pg_used(&p, 10), pg_used(&p, 12)};
		update(&p, e, 3, 20, 1, x, NULL);
	}
	reopen(&p, "reached.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_OK);
}
END_TEST

/* Revision 1 as signed_base (approval, /Size 20), its catalog's /Names
 * naming object 10, which refers to the free number 15 in the way SHAPE
 * says, each a path of the reference graph's scan (doc.c note 8):
 *  0  a 3 KB array, 15 0 R at its end (longer than the scan's window)
 *  1  "15 0 R" itself, at the top (the scan leaves it to the parser)
 *  2  an array inside object stream 11 (xref stream 12)
 *  3  the array written before the catalog (offsets out of number order) */
static int64_t dangling_base(pg *p, int shape)
{
	char pad[3001];
	pg_ent e[13];
	uint32_t i;
	int64_t x;

	memset(pad, 0, sizeof pad);
	for (i = 0; i + 6 < sizeof pad - 1; i += 6)
		memcpy(pad + i, "/Pad  ", 6);
	pg_start(p);
	if (shape == 3)
		pg_obj(p, 10, 0, "[/Dests 15 0 R]");
	pg_obj(p, 1, 0, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[6 0 R 7 0 R]/SigFlags 3>>/Names 10 0 R>>");
	pg_obj(p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R"
	       "/Resources<</Font<</F1 4 0 R>>>>/Annots[6 0 R 7 0 R]>>");
	pg_obj(p, 4, 0, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>");
	pg_stream(p, 5, "", "BT /F1 24 Tf 72 700 Td (signed) Tj ET", 37);
	pg_obj(p, 6, 0, "<</Type/Annot/Subtype/Widget/FT/Tx/T(Name)/V(before)/Rect[0 0 10 10]/P 3 0 R>>");
	pg_obj(p, 7, 0, "<</Type/Annot/Subtype/Widget/FT/Sig/T(Sig1)/V 8 0 R/Rect[0 0 0 0]/P 3 0 R>>");
	pg_obj(p, 8, 0, "<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/adbe.pkcs7.detached" PG_SIG_BR
	       "/Contents<00112233>>>");
	pg_obj(p, 9, 0, "<</Producer(check_audit)>>");
	if (shape == 0)
		pg_obj(p, 10, 0, "[%s 15 0 R]", pad);
	else if (shape == 1)
		pg_obj(p, 10, 0, "15 0 R");
	memset(e, 0, sizeof e);
	e[0].num = 0;
	e[0].f3 = 65535;
	for (i = 1; i <= 10; i++)
		e[i] = pg_used(p, i);
	if (shape != 2) {
		x = pg_table(p, e, 11, "<</Size 20/Root 1 0 R/Info 9 0 R>>");
	} else {
		static const char body[] = "10 0 [/Dests 15 0 R]";
		pg_stream(p, 11, "/Type/ObjStm/N 1/First 5", body, strlen(body));
		e[10].num = 10;
		e[10].type = 2;
		e[10].f2 = 11;
		e[10].f3 = 0;
		e[11] = pg_used(p, 11);
		e[12].num = 12;
		e[12].type = 1;
		x = pg_xref_stream(p, 12, e, 13, "/Size 20/Root 1 0 R/Info 9 0 R");
	}
	ck_assert(!p->b.oom);
	pg_set_byterange(p, 0);
	return x;
}

/* A later revision defines the number a signed object refers to (the
 * shadow attacks' hidden object), whichever way the signed revision
 * holds the reference; the same object under a number nothing refers to
 * is reported as an orphan instead. */
START_TEST(dangling_reference_shapes)
{
	int shape, filled;

	for (shape = 0; shape < 4; shape++) {
		for (filled = 15; filled <= 16; filled++) {
			pg p;
			int64_t x = dangling_base(&p, shape);
			const struct pdfstamp_audit_change *c;
			char name[32];

			pg_stream(&p, (uint32_t)filled, "/Type/XObject/Subtype/Form/BBox[0 0 612 792]",
			          "1 g 0 0 612 792 re f", 20);
			{
				pg_ent e[1] = {pg_used(&p, (uint32_t)filled)};
				update(&p, e, 1, 20, 1, x, NULL);
			}
			snprintf(name, sizeof name, "dangle%d-%d.pdf", shape, filled);
			reopen(&p, name);
			ck_assert_int_eq(do_audit(), 0);
			ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
			c = change_of(filled);
			ck_assert_ptr_nonnull(c);
			ck_assert_int_eq(c->forbidden, 1);
			ck_assert_msg(strstr(c->reason, filled == 15 ? "the signed revision refers to"
			                                             : "no change refers to") != NULL,
			              "shape %d, object %d: %s", shape, filled, c->reason);
		}
	}
}
END_TEST

/* A dangling reference is judged in the revision that adds it: one that a
 * later revision keeps in the same object (pdfstamp dss keeps a hostile
 * /DSS's entries) leads nowhere new and is no second finding. */
START_TEST(dangling_reference_kept)
{
	pg p;
	int64_t x1 = signed_base(&p, 0, 0), x2, x3;
	int i, k, found[2] = {0, 0};

	pg_obj(&p, 9, 0, "<</Producer(check_audit)/X 50 0 R>>");
	x2 = (int64_t)p.b.len;
	{
		pg_ent e[1] = {pg_used(&p, 9)};
		update(&p, e, 1, 10, 1, x1, NULL);
	}
	pg_obj(&p, 9, 0, "<</Producer(changed)/X 50 0 R>>");
	x3 = (int64_t)p.b.len;
	{
		pg_ent e[1] = {pg_used(&p, 9)};
		update(&p, e, 1, 10, 1, x2, NULL);
	}
	reopen(&p, "dangle-kept.pdf");
	ck_assert_int_eq(do_audit(), 0);
	ck_assert_int_eq(rep.verdict, PDFSTAMP_AUDIT_VIOLATION);
	for (i = 0; i < rep.nrevisions; i++)
		for (k = 0; k < rep.revisions[i].nchanges; k++) {
			const struct pdfstamp_audit_change *c = &rep.revisions[i].changes[k];
			if (c->object != 50)
				continue;
			ck_assert_int_eq(c->kind, PDFSTAMP_CHANGE_DAMAGED);
			ck_assert(rep.revisions[i].offset == x2 || rep.revisions[i].offset == x3);
			found[rep.revisions[i].offset == x3]++;
		}
	ck_assert_int_eq(found[0], 1); /* the revision that added it */
	ck_assert_int_eq(found[1], 0); /* not the one that kept it */
}
END_TEST

static Suite *audit_suite(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("audit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rule_table);
	tcase_add_test(tc, unsigned_and_untouched);
	tcase_add_test(tc, page_content_after_approval);
	tcase_add_test(tc, identical_rewrite_is_no_change);
	tcase_add_test(tc, annotation_by_level);
	tcase_add_test(tc, form_fill_and_fieldmdp);
	tcase_add_test(tc, dss_under_p1);
	tcase_add_test(tc, metadata);
	tcase_add_test(tc, doc_timestamp_under_p1);
	tcase_add_test(tc, annotation_over_signature);
	tcase_add_test(tc, freed_object);
	tcase_add_test(tc, objstm_redefines_signed_object);
	tcase_add_test(tc, objstm_replaced_under_old_entries);
	tcase_add_test(tc, root_replaced);
	tcase_add_test(tc, signature_redefined);
	tcase_add_test(tc, byterange_not_at_revision_end);
	tcase_add_test(tc, chain_loop_and_huge_numbers);
	tcase_add_test(tc, api_guards);
	tcase_add_test(tc, new_field_under_p2);
	tcase_add_test(tc, appearance_role_hijack);
	tcase_add_test(tc, existing_annotation_appearance);
	tcase_add_test(tc, ocproperties_and_font);
	tcase_add_test(tc, freed_then_reused);
	tcase_add_test(tc, size_reduced);
	tcase_add_test(tc, signature_field_removed);
	tcase_add_test(tc, later_signature_covers_change);
	tcase_add_test(tc, acroform_appearance_keys);
	tcase_add_test(tc, orphan_new_object);
	tcase_add_test(tc, dangling_reference_shapes);
	tcase_add_test(tc, dangling_reference_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(audit_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
