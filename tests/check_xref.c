/*
 * check_xref.c - the cross-reference reader and lazy lookup (xref.c, doc.c).
 *
 * Each test writes a small plaintext PDF whose offsets it computes itself,
 * so every xref form (tables with several subsections, xref streams with
 * odd /W and PNG predictors, hybrid files, /Prev chains, object streams)
 * and every guard (loops, bad offsets, truncation) is exercised against
 * known answers.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ps.h"

static char tmpl[64];

static const char *write_file(const void *p, size_t n)
{
	int fd;

	snprintf(tmpl, sizeof tmpl, "/tmp/check_xref-XXXXXX");
	fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
	return tmpl;
}

/* A PDF under construction: objects appended, offsets recorded. */
struct pdf {
	ps_buf b;
	int64_t off[64];
};

static void pdf_start(struct pdf *p)
{
	memset(p, 0, sizeof *p);
	ps_buf_puts(&p->b, "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n");
}

static void pdf_obj(struct pdf *p, int num, const char *body)
{
	p->off[num] = (int64_t)p->b.len;
	ps_buf_printf(&p->b, "%d 0 obj\n%s\nendobj\n", num, body);
}

static void pdf_stream_obj(struct pdf *p, int num, const char *dict_extra, const uint8_t *data, size_t n)
{
	p->off[num] = (int64_t)p->b.len;
	ps_buf_printf(&p->b, "%d 0 obj\n<<%s /Length %zu>>\nstream\n", num, dict_extra, n);
	ps_buf_append(&p->b, data, n);
	ps_buf_puts(&p->b, "\nendstream\nendobj\n");
}

/* Classic table covering objects 0..n-1 as one subsection. */
static int64_t pdf_table(struct pdf *p, int n, const char *trailer_extra)
{
	int64_t x = (int64_t)p->b.len;
	int i;

	ps_buf_printf(&p->b, "xref\n0 %d\n0000000000 65535 f\r\n", n);
	for (i = 1; i < n; i++)
		ps_buf_printf(&p->b, "%010lld 00000 n\r\n", (long long)p->off[i]);
	ps_buf_printf(&p->b, "trailer\n<</Size %d /Root 1 0 R%s>>\nstartxref\n%lld\n%%%%EOF\n", n,
	              trailer_extra, (long long)x);
	return x;
}

static ps_ctx *ctx;
static ps_doc *doc;

static void setup(void)
{
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	doc = NULL;
}

static void teardown(void)
{
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	unlink(tmpl);
}

static int open_buf(struct pdf *p)
{
	const char *path = write_file(p->b.data, p->b.len);

	ps_buf_free(&p->b);
	return pdfstamp_doc_open(ctx, &doc, path, 0);
}

static void basic_objects(struct pdf *p)
{
	pdf_obj(p, 1, "<</Type/Catalog/Pages 2 0 R>>");
	pdf_obj(p, 2, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pdf_obj(p, 3, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>");
}

START_TEST(classic_table)
{
	struct pdf p;
	struct pdfstamp_info info;
	ps_obj *o;

	pdf_start(&p);
	basic_objects(&p);
	pdf_table(&p, 4, "");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.revisions, 1);
	ck_assert_int_eq(info.xref_kinds[0], PDFSTAMP_XREF_TABLE);
	ck_assert_int_eq(info.objects, 3);
	ck_assert_int_eq(info.pages, 1);
	ck_assert_int_eq(info.encrypted, 0);
	ck_assert_int_eq(info.trailing_bytes, 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
	/* out of range and free objects are null, not errors */
	ck_assert_int_eq(ps_doc_lookup(doc, 99, &o), 0);
	ck_assert_ptr_null(o);
}
END_TEST

START_TEST(several_subsections_and_prev)
{
	struct pdf p;
	struct pdfstamp_info info;
	ps_obj *o;
	int64_t x1, x2;

	pdf_start(&p);
	basic_objects(&p);
	x1 = pdf_table(&p, 4, "");
	/* an update: new version of 3, new object 5, as two subsections */
	pdf_obj(&p, 3, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 100 100]/Updated true>>");
	pdf_obj(&p, 5, "(five)");
	x2 = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n3 1\n%010lld 00000 n\r\n5 1\n%010lld 00000 n\r\n", (long long)p.off[3],
	              (long long)p.off[5]);
	ps_buf_printf(&p.b, "trailer\n<</Size 6/Root 1 0 R/Prev %lld>>\nstartxref\n%lld\n%%%%EOF\n", (long long)x1,
	              (long long)x2);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.revisions, 2);
	ck_assert_int_eq(info.objects, 4);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
	ck_assert_ptr_nonnull(ps_dict_get(o, "Updated")); /* newest wins */
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &o), 0);
	ck_assert_int_eq(o->kind, PS_STR);
	ck_assert_int_eq(o->u.str.len, 4);
}
END_TEST

START_TEST(newer_free_entry_hides_object)
{
	struct pdf p;
	ps_obj *o;
	int64_t x1, x2;

	pdf_start(&p);
	basic_objects(&p);
	pdf_obj(&p, 4, "(old)");
	x1 = pdf_table(&p, 5, "");
	x2 = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n4 1\n0000000000 00001 f\r\ntrailer\n<</Size 5/Root 1 0 R/Prev %lld>>\n"
	              "startxref\n%lld\n%%%%EOF\n", (long long)x1, (long long)x2);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 4, &o), 0);
	ck_assert_ptr_null(o);
}
END_TEST

START_TEST(prev_loop_is_refused)
{
	struct pdf p;
	int64_t x;

	pdf_start(&p);
	basic_objects(&p);
	x = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n0 4\n0000000000 65535 f\r\n%010lld 00000 n\r\n%010lld 00000 n\r\n"
	              "%010lld 00000 n\r\ntrailer\n<</Size 4/Root 1 0 R/Prev %lld>>\nstartxref\n%lld\n%%%%EOF\n",
	              (long long)p.off[1], (long long)p.off[2], (long long)p.off[3], (long long)x, (long long)x);
	ck_assert_int_eq(open_buf(&p), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "loop"));
}
END_TEST

START_TEST(startxref_errors)
{
	static const char *const bad[] = {
		"%PDF-1.7\nhello world, no xref here at all\n%%EOF\n",
		"%PDF-1.7\n1 0 obj<<>>endobj\nstartxref\n999999\n%%EOF\n",
		"%PDF-1.7\n1 0 obj<<>>endobj\nstartxref\n99999999999999999999999\n%%EOF\n",
		"%PDF-1.7\n1 0 obj<<>>endobj\nstartxref\n9\n",   /* no %%EOF: truncated */
		"%PDF",                                          /* tiny */
		"%PDF-1.7\n1 0 obj<<>>endobj\nstartxref\n9\n%%EOF\n", /* points at an object, not an xref */
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *path = write_file(bad[i], strlen(bad[i]));
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), PDFSTAMP_E_FORMAT);
		ck_assert_ptr_null(doc);
		ck_assert_str_ne(pdfstamp_ctx_errmsg(ctx), "");
		unlink(tmpl);
	}
}
END_TEST

START_TEST(trailing_bytes_reported)
{
	struct pdf p;
	struct pdfstamp_info info;

	pdf_start(&p);
	basic_objects(&p);
	pdf_table(&p, 4, "");
	ps_buf_puts(&p.b, "GARBAGE AFTER EOF\n");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.has_trailing_bytes, 1);
	ck_assert_int_eq(info.trailing_bytes, 18);
}
END_TEST

START_TEST(entry_past_eof_is_refused)
{
	struct pdf p;

	pdf_start(&p);
	basic_objects(&p);
	p.off[3] = 1000000;
	pdf_table(&p, 4, "");
	ck_assert_int_eq(open_buf(&p), PDFSTAMP_E_FORMAT);
}
END_TEST

START_TEST(wrong_object_at_offset)
{
	struct pdf p;
	ps_obj *o;

	pdf_start(&p);
	basic_objects(&p);
	p.off[3] = p.off[2];
	pdf_table(&p, 4, "");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), PDFSTAMP_E_FORMAT);
}
END_TEST

/* Encodes xref stream rows with the PNG Up predictor. */
static void png_up(const uint8_t *rows, size_t nrows, size_t cols, ps_buf *out)
{
	size_t r, c;

	for (r = 0; r < nrows; r++) {
		ps_buf_putc(out, 2);
		for (c = 0; c < cols; c++) {
			uint8_t prev = r ? rows[(r - 1) * cols + c] : 0;
			ps_buf_putc(out, (uint8_t)(rows[r * cols + c] - prev));
		}
	}
}

static void put_be(ps_buf *b, uint64_t v, int w)
{
	int i;

	for (i = w - 1; i >= 0; i--)
		ps_buf_putc(b, (int)(v >> (8 * i)) & 0xff);
}

/* Objects 1-3 plain, 4 an object stream holding 5 and 6, 7 the xref stream. */
static void build_stream_pdf(struct pdf *p, int w2, int predictor, const char *extra_trailer)
{
	static const char objstm_body[] = "5 0 6 6 (five) <</Six 6>>";
	ps_buf rows = PS_BUF_INIT, enc = PS_BUF_INIT;
	uint8_t z[4096];
	uLongf zlen = sizeof z;
	char dict[256];
	int i, cols = 1 + w2 + 2;
	int64_t x;

	pdf_start(p);
	basic_objects(p);
	compress(z, &zlen, (const Bytef *)objstm_body, sizeof objstm_body - 1);
	pdf_stream_obj(p, 4, "/Type/ObjStm/N 2/First 8/Filter/FlateDecode", z, zlen);
	x = (int64_t)p->b.len;
	p->off[7] = x;
	put_be(&rows, 0, 1), put_be(&rows, 0, w2), put_be(&rows, 65535, 2);
	for (i = 1; i <= 4; i++)
		put_be(&rows, 1, 1), put_be(&rows, (uint64_t)p->off[i], w2), put_be(&rows, 0, 2);
	put_be(&rows, 2, 1), put_be(&rows, 4, w2), put_be(&rows, 0, 2);
	put_be(&rows, 2, 1), put_be(&rows, 4, w2), put_be(&rows, 1, 2);
	put_be(&rows, 1, 1), put_be(&rows, (uint64_t)x, w2), put_be(&rows, 0, 2);
	if (predictor)
		png_up(rows.data, 8, (size_t)cols, &enc);
	else
		ps_buf_append(&enc, rows.data, rows.len);
	zlen = sizeof z;
	compress(z, &zlen, enc.data, enc.len);
	if (predictor)
		snprintf(dict, sizeof dict, "/Type/XRef/Size 8/W[1 %d 2]/Root 1 0 R/Filter/FlateDecode"
		         "/DecodeParms<</Predictor 12/Columns %d>>%s", w2, cols, extra_trailer);
	else
		snprintf(dict, sizeof dict, "/Type/XRef/Size 8/W[1 %d 2]/Root 1 0 R/Filter/FlateDecode%s", w2,
		         extra_trailer);
	pdf_stream_obj(p, 7, dict, z, zlen);
	ps_buf_printf(&p->b, "startxref\n%lld\n%%%%EOF\n", (long long)x);
	ps_buf_free(&rows);
	ps_buf_free(&enc);
}

static void check_stream_pdf(void)
{
	struct pdfstamp_info info;
	ps_obj *o;

	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.revisions, 1);
	ck_assert_int_eq(info.xref_kinds[0], PDFSTAMP_XREF_STREAM);
	ck_assert_int_eq(info.last_is_stream, 1);
	ck_assert_int_eq(info.objects, 7);
	ck_assert_int_eq(info.pages, 1);
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(o->kind, PS_STR);
	ck_assert_mem_eq(o->u.str.p, "five", 4);
	ck_assert_int_eq(ps_doc_lookup(doc, 6, &o), 0);
	ck_assert_ptr_nonnull(ps_dict_get(o, "Six"));
}

START_TEST(xref_stream_plain)
{
	struct pdf p;

	build_stream_pdf(&p, 4, 0, "");
	ck_assert_int_eq(open_buf(&p), 0);
	check_stream_pdf();
}
END_TEST

START_TEST(xref_stream_predictor_wide_offsets)
{
	struct pdf p;
	int w;

	for (w = 2; w <= 8; w += 3) {
		build_stream_pdf(&p, w, 1, "");
		ck_assert_int_eq(open_buf(&p), 0);
		check_stream_pdf();
		pdfstamp_doc_close(doc);
		doc = NULL;
		unlink(tmpl);
	}
}
END_TEST

START_TEST(xref_stream_bad_w)
{
	struct pdf p;

	build_stream_pdf(&p, 4, 0, "");
	/* corrupt /W into an absurd width */
	{
		char *s = memmem(p.b.data, p.b.len, "/W[1 4 2]", 9);
		ck_assert_ptr_nonnull(s);
		memcpy(s, "/W[1 9 2]", 9);
	}
	ck_assert_int_eq(open_buf(&p), PDFSTAMP_E_FORMAT);
}
END_TEST

START_TEST(hybrid_file)
{
	/* Table lists 1-3 and 4 (the objstm); 5 and 6 only through /XRefStm. */
	struct pdf p;
	struct pdfstamp_info info;
	static const char objstm_body[] = "5 0 6 6 (five) <</Six 6>>";
	ps_buf rows = PS_BUF_INIT;
	uint8_t z[1024];
	uLongf zlen = sizeof z;
	ps_obj *o;
	int64_t xs, xt;

	pdf_start(&p);
	basic_objects(&p);
	compress(z, &zlen, (const Bytef *)objstm_body, sizeof objstm_body - 1);
	pdf_stream_obj(&p, 4, "/Type/ObjStm/N 2/First 8/Filter/FlateDecode", z, zlen);
	xs = (int64_t)p.b.len;
	put_be(&rows, 2, 1), put_be(&rows, 4, 4), put_be(&rows, 0, 2);
	put_be(&rows, 2, 1), put_be(&rows, 4, 4), put_be(&rows, 1, 2);
	pdf_stream_obj(&p, 7, "/Type/XRef/Size 8/W[1 4 2]/Index[5 2]", rows.data, rows.len);
	p.off[7] = xs;
	xt = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n0 8\n0000000000 65535 f\r\n");
	ps_buf_printf(&p.b, "%010lld 00000 n\r\n%010lld 00000 n\r\n%010lld 00000 n\r\n%010lld 00000 n\r\n",
	              (long long)p.off[1], (long long)p.off[2], (long long)p.off[3], (long long)p.off[4]);
	/* 5 and 6 are free in the table: the XRefStm must override that */
	ps_buf_puts(&p.b, "0000000000 00000 f\r\n0000000000 00000 f\r\n");
	ps_buf_printf(&p.b, "%010lld 00000 n\r\n", (long long)xs);
	ps_buf_printf(&p.b, "trailer\n<</Size 8/Root 1 0 R/XRefStm %lld>>\nstartxref\n%lld\n%%%%EOF\n",
	              (long long)xs, (long long)xt);
	ps_buf_free(&rows);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.xref_kinds[0], PDFSTAMP_XREF_HYBRID);
	ck_assert_int_eq(info.last_is_stream, 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_mem_eq(o->u.str.p, "five", 4);
}
END_TEST

START_TEST(objstm_bad_header)
{
	struct pdf p;
	ps_obj *o;

	build_stream_pdf(&p, 4, 0, "");
	{
		/* claim 3 objects in a stream that holds 2 -> bad header, not a crash */
		char *s = memmem(p.b.data, p.b.len, "/N 2", 4);
		ck_assert_ptr_nonnull(s);
		s[3] = '9';
	}
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &o), PDFSTAMP_E_FORMAT);
}
END_TEST

/* Found by replaying the fuzz corpus through rotate: an /Encrypt inside an
 * object stream made open fail with a USAGE error (exit 2) from the lookup
 * guard for unauthenticated documents. */
START_TEST(encrypt_in_object_stream_is_refused)
{
	struct pdf p;

	build_stream_pdf(&p, 4, 0, "/Encrypt 6 0 R/ID[<00><00>]");
	ck_assert_int_eq(open_buf(&p), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "inside an object stream"));
}
END_TEST

START_TEST(bytes_read_is_small)
{
	/* A big payload stream between the objects must not be read to open
	 * the file and report on it. */
	struct pdf p;
	struct pdfstamp_info info;
	static uint8_t payload[4 << 20];

	memset(payload, 'x', sizeof payload);
	pdf_start(&p);
	basic_objects(&p);
	pdf_stream_obj(&p, 4, "", payload, sizeof payload);
	pdf_table(&p, 5, "");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.objects, 4);
	ck_assert_int_lt(info.bytes_read, 32 * 1024);
}
END_TEST

static Suite *xref_suite(void)
{
	Suite *s = suite_create("xref");
	TCase *tc = tcase_create("read");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, classic_table);
	tcase_add_test(tc, several_subsections_and_prev);
	tcase_add_test(tc, newer_free_entry_hides_object);
	tcase_add_test(tc, prev_loop_is_refused);
	tcase_add_test(tc, startxref_errors);
	tcase_add_test(tc, trailing_bytes_reported);
	tcase_add_test(tc, entry_past_eof_is_refused);
	tcase_add_test(tc, wrong_object_at_offset);
	tcase_add_test(tc, xref_stream_plain);
	tcase_add_test(tc, xref_stream_predictor_wide_offsets);
	tcase_add_test(tc, xref_stream_bad_w);
	tcase_add_test(tc, hybrid_file);
	tcase_add_test(tc, objstm_bad_header);
	tcase_add_test(tc, encrypt_in_object_stream_is_refused);
	tcase_add_test(tc, bytes_read_is_small);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(xref_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
