/* SPDX-License-Identifier: Apache-2.0 */
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
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ps.h"
#include "docpriv.h" /* the reader's own suite: its fields too */
#include "xrefw.h"
#include "xrefsec.h"

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
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
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
	pdfstamp_info_clear(&info);
}
END_TEST

/* The public pdfstamp_doc_open takes only the public flags: the internal
 * ones (skip the journal, read only the newest section) are refused. */
START_TEST(public_open_refuses_internal_flags)
{
	static const unsigned bad[] = { PS_OPEN_NO_RECOVER, PS_OPEN_NEWEST_ONLY,
	                                PS_OPEN_NO_RECOVER | PDFSTAMP_OPEN_WRITE, 0x80000000u };
	struct pdf p;
	const char *path;
	size_t i;

	pdf_start(&p);
	basic_objects(&p);
	pdf_table(&p, 4, "");
	path = write_file(p.b.data, p.b.len);
	ps_buf_free(&p.b);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		doc = (pdfstamp_doc *)&p; /* must be reset to NULL */
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, bad[i]), PDFSTAMP_E_USAGE);
		ck_assert_ptr_null(doc);
		ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "unknown flags"));
	}
	ck_assert_int_eq(pdfstamp_doc_open(ctx, NULL, path, 0), PDFSTAMP_E_USAGE);
	/* the internal entry point still takes them */
	ck_assert_int_eq(ps_doc_open(ctx, &doc, path, PS_OPEN_NO_RECOVER | PS_OPEN_NEWEST_ONLY), 0);
	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), 0);
}
END_TEST

/* Result structs are versioned (pdfstamp.h): an unknown version is refused,
 * a filled struct can be filled again and is released by _clear. */
START_TEST(info_is_versioned)
{
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	struct pdf p;

	pdf_start(&p);
	basic_objects(&p);
	pdf_table(&p, 4, "");
	ck_assert_int_eq(open_buf(&p), 0);
	info.version = 0;
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), PDFSTAMP_E_USAGE);
	info.version = PDFSTAMP_INFO_VERSION;
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0); /* no leak: the lists are released first */
	ck_assert_int_eq(info.revisions, 1);
	ck_assert_ptr_nonnull(info.xref_kinds);
	pdfstamp_info_clear(&info);
	ck_assert_uint_eq(info.version, PDFSTAMP_INFO_VERSION);
	ck_assert_ptr_null(info.xref_kinds);
	ck_assert_int_eq(info.revisions, 0);
	pdfstamp_info_clear(NULL);
	pdfstamp_result_clear(NULL);
}
END_TEST

START_TEST(several_subsections_and_prev)
{
	struct pdf p;
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
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
	pdfstamp_info_clear(&info);
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
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;

	pdf_start(&p);
	basic_objects(&p);
	pdf_table(&p, 4, "");
	ps_buf_puts(&p.b, "GARBAGE AFTER EOF\n");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.has_trailing_bytes, 1);
	ck_assert_int_eq(info.trailing_bytes, 18);
	pdfstamp_info_clear(&info);
}
END_TEST

START_TEST(entry_past_eof_is_refused)
{
	struct pdf p;
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;

	pdf_start(&p);
	basic_objects(&p);
	p.off[3] = 1000000;
	pdf_table(&p, 4, "");
	ck_assert_int_eq(open_buf(&p), 0); /* entries are read when asked for */
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), PDFSTAMP_E_FORMAT); /* a whole-file pass reads them all */
	pdfstamp_info_clear(&info); /* on failure too (pdfstamp.h) */
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
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	ps_obj *o;

	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.revisions, 1);
	ck_assert_int_eq(info.xref_kinds[0], PDFSTAMP_XREF_STREAM);
	ck_assert_int_eq(info.last_is_stream, 1);
	ck_assert_int_eq(info.objects, 7);
	ck_assert_int_eq(info.pages, 1);
	pdfstamp_info_clear(&info);
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
	/* issue 11: the section's stream is the chain's; the object stream is not */
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 7), 1);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 4), 0);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 1), 0);
}
END_TEST

START_TEST(xref_stream_by_section_only)
{
	/* issue 11: a plain stream object that says /Type /XRef is content,
	 * not one of the chain's xref streams. */
	struct pdf p;
	static const uint8_t data[] = "not a cross-reference section";

	pdf_start(&p);
	basic_objects(&p);
	pdf_stream_obj(&p, 4, "/Type/XRef/Size 5/W[1 4 2]", data, sizeof data - 1);
	pdf_table(&p, 5, "");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 4), 0);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 0), 0);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 99), 0);
}
END_TEST

START_TEST(rewrite_xref_form_threshold)
{
	/* issue 11: a classic entry has ten digits for the offset; the full
	 * rewrite switches to an xref stream above them (rewrite.c). */
	ck_assert_int_eq(ps_xrefw_form(0, 0), 0);
	ck_assert_int_eq(ps_xrefw_form(0, INT64_C(9999999999)), 0);
	ck_assert_int_eq(ps_xrefw_form(0, INT64_C(10000000000)), 1);
	ck_assert_int_eq(ps_xrefw_form(0, INT64_MAX), 1);
	ck_assert_int_eq(ps_xrefw_form(1, 100), 1);
	ck_assert_int_eq(ps_xrefw_form(1, INT64_C(10000000000)), 1);
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

/* An xref stream's first five rows (W [1 4 2]): the free list's head,
 * objects 1-3 of basic_objects in use, and object 4, the xref stream
 * itself, at X. */
static void first_rows(ps_buf *rows, const struct pdf *p, int64_t x)
{
	int i;

	put_be(rows, 0, 1), put_be(rows, 0, 4), put_be(rows, 65535, 2);
	for (i = 1; i <= 3; i++)
		put_be(rows, 1, 1), put_be(rows, (uint64_t)p->off[i], 4), put_be(rows, 0, 2);
	put_be(rows, 1, 1), put_be(rows, (uint64_t)x, 4), put_be(rows, 0, 2);
}

/* xrefsec.c note STREAM: an xref stream is decoded only as far as the
 * entries asked for.  Objects 1-3 in use, 4 the xref stream, 5 to N - 1
 * free (N = 200,000: 1.4 MB of entries); DAMAGE 1 corrupts the zlib
 * checksum (the last 4 bytes), DAMAGE 2 makes the stream hold 100,000
 * entries where /Size says N. */
static void build_long_stream_pdf(struct pdf *p, int predictor, int damage)
{
	const uint32_t n = 200000, rows_made = damage == 2 ? 100000 : n;
	ps_buf rows = PS_BUF_INIT, enc = PS_BUF_INIT;
	uLongf zlen;
	uint8_t *z;
	char dict[160];
	uint32_t i;
	int64_t x;

	pdf_start(p);
	basic_objects(p);
	x = (int64_t)p->b.len;
	first_rows(&rows, p, x);
	for (i = 5; i < rows_made; i++)
		put_be(&rows, 0, 1), put_be(&rows, 0, 4), put_be(&rows, 1, 2);
	if (predictor)
		png_up(rows.data, rows_made, 7, &enc);
	else
		ps_buf_append(&enc, rows.data, rows.len);
	zlen = compressBound(enc.len);
	ck_assert_ptr_nonnull(z = malloc(zlen));
	ck_assert_int_eq(compress(z, &zlen, enc.data, enc.len), Z_OK);
	if (damage == 1)
		z[zlen - 1] ^= 0x55;
	snprintf(dict, sizeof dict, "/Type/XRef/Size %u/W[1 4 2]/Root 1 0 R/Filter/FlateDecode%s", n,
	         predictor ? "/DecodeParms<</Predictor 12/Columns 7>>" : "");
	pdf_stream_obj(p, 4, dict, z, zlen);
	ps_buf_printf(&p->b, "startxref\n%lld\n%%%%EOF\n", (long long)x);
	free(z);
	ps_buf_free(&rows);
	ps_buf_free(&enc);
}

START_TEST(xref_stream_decoded_as_needed)
{
	int predictor, damage;

	for (predictor = 0; predictor <= 1; predictor++)
		for (damage = 0; damage <= 2; damage++) {
			struct pdf p;
			const struct ps_xpart *part;
			ps_obj *o = NULL;
			int rc;

			build_long_stream_pdf(&p, predictor, damage);
			ck_assert_msg(open_buf(&p) == 0, "predictor %d, damage %d: %s", predictor, damage,
			              pdfstamp_ctx_errmsg(ctx));
			ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
			ck_assert_ptr_nonnull(ps_dict_get(o, "MediaBox"));
			part = doc->xref.sections[0].stm;
			ck_assert_ptr_nonnull(part);
			ck_assert_uint_eq(part->total, (size_t)200000 * 7);
			ck_assert_msg(part->data.len <= 256 * 1024, "decoded %zu bytes for three lookups", part->data.len);
			/* the end: decoded only now, and judged */
			rc = ps_doc_lookup(doc, 199999, &o);
			if (damage == 0) {
				ck_assert_int_eq(rc, 0);
				ck_assert_ptr_null(o); /* free */
				ck_assert_uint_eq(part->data.len, part->total);
				ck_assert_ptr_null(part->fr); /* the compressed bytes are let go */
				ck_assert_int_eq(ps_xref_load_all(doc), 0);
			} else {
				ck_assert_int_eq(rc, PDFSTAMP_E_FORMAT);
				ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), damage == 1 ? "corrupt" : "fewer entries"));
				ck_assert_int_eq(ps_doc_lookup(doc, 2, &o), 0); /* what was decoded stays usable */
				ck_assert_ptr_nonnull(o);
			}
			pdfstamp_doc_close(doc);
			doc = NULL;
			/* a full load judges the whole stream at once */
			build_long_stream_pdf(&p, predictor, damage);
			ck_assert_int_eq(open_buf(&p), 0);
			ck_assert_int_eq(ps_xref_load_all(doc), damage ? PDFSTAMP_E_FORMAT : 0);
			pdfstamp_doc_close(doc);
			doc = NULL;
			unlink(tmpl);
		}
}
END_TEST

/* Found by review of the lazy decoding (xrefsec.c note STREAM):
 * a decoder that failed once fails every later lookup (a retried row
 * decoder re-decoded rows into garbage that a later lookup read as
 * entries: an older section would then have won the merge rule). */
START_TEST(xref_stream_damage_is_sticky)
{
	const uint32_t n = 200000, bad = 20000;
	ps_buf rows = PS_BUF_INIT, enc = PS_BUF_INIT;
	struct pdf p;
	uLongf zlen;
	uint8_t *z;
	char dict[160];
	uint32_t i;
	int64_t x;
	ps_xrec r;
	ps_xpart *part;

	pdf_start(&p);
	basic_objects(&p);
	x = (int64_t)p.b.len;
	first_rows(&rows, &p, x);
	for (i = 5; i < n; i++)
		put_be(&rows, 1, 1), put_be(&rows, (uint64_t)p.off[1], 4), put_be(&rows, 0, 2);
	png_up(rows.data, n, 7, &enc);
	enc.data[(size_t)bad * 8] = 7; /* row BAD: filter type 7 */
	zlen = compressBound(enc.len);
	ck_assert_ptr_nonnull(z = malloc(zlen));
	ck_assert_int_eq(compress(z, &zlen, enc.data, enc.len), Z_OK);
	snprintf(dict, sizeof dict, "/Type/XRef/Size %u/W[1 4 2]/Root 1 0 R/Filter/FlateDecode"
	         "/DecodeParms<</Predictor 12/Columns 7>>", n);
	pdf_stream_obj(&p, 4, dict, z, zlen);
	ps_buf_printf(&p.b, "startxref\n%lld\n%%%%EOF\n", (long long)x);
	ck_assert_int_eq(open_buf(&p), 0);
	part = doc->xref.sections[0].stm;
	ck_assert_int_eq(ps_xpart_get(doc, part, 3, &r), 1);
	ck_assert_int_eq(ps_xpart_get(doc, part, 25000, &r), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_xpart_get(doc, part, 25000, &r), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_xpart_get(doc, part, 21000, &r), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_xpart_get(doc, part, 3, &r), 1); /* decoded before the damage: still usable */
	free(z);
	ps_buf_free(&rows);
	ps_buf_free(&enc);
}
END_TEST

/* A full load judges the whole compressed stream, past its entries too:
 * five entries, then 400 KB of zeros, intact, with a bad checksum,
 * truncated. */
START_TEST(xref_stream_tail_is_judged)
{
	int damage;

	for (damage = 0; damage <= 2; damage++) {
		ps_buf rows = PS_BUF_INIT;
		struct pdf p;
		uLongf zlen;
		uint8_t *z;
		uint32_t i;
		int64_t x;
		int rc;

		pdf_start(&p);
		basic_objects(&p);
		x = (int64_t)p.b.len;
		first_rows(&rows, &p, x);
		for (i = 0; i < 400000; i++)
			ps_buf_putc(&rows, 0);
		zlen = compressBound(rows.len);
		ck_assert_ptr_nonnull(z = malloc(zlen));
		ck_assert_int_eq(compress(z, &zlen, rows.data, rows.len), Z_OK);
		if (damage == 1)
			z[zlen - 1] ^= 0x55;
		if (damage == 2)
			zlen -= 6;
		pdf_stream_obj(&p, 4, "/Type/XRef/Size 5/W[1 4 2]/Root 1 0 R/Filter/FlateDecode", z, zlen);
		ps_buf_printf(&p.b, "startxref\n%lld\n%%%%EOF\n", (long long)x);
		rc = open_buf(&p);
		if (rc == 0)
			rc = ps_xref_load_all(doc);
		ck_assert_msg(rc == (damage ? PDFSTAMP_E_FORMAT : 0), "damage %d: %d %s", damage, rc,
		              pdfstamp_ctx_errmsg(ctx));
		pdfstamp_doc_close(doc);
		doc = NULL;
		unlink(tmpl);
		free(z);
		ps_buf_free(&rows);
	}
}
END_TEST

/* What a part holds stays within what xref.c counts for it: sections
 * whose one entry comes in a 16 MB predictor row (/Colors 8 /Columns
 * 2^21, ~16 KB compressed) keep only their entry once looked up. */
START_TEST(xref_stream_wide_row_is_trimmed)
{
	const int nsec = 3;
	const size_t rowlen = (size_t)8 << 21;
	struct pdf p;
	ps_buf rows = PS_BUF_INIT;
	int64_t x[3];
	uLongf zlen;
	uint8_t *z = NULL;
	char dict[300];
	size_t held = 0, counted = 0;
	uint32_t num;
	int s;

	pdf_start(&p);
	basic_objects(&p);
	for (s = 0; s < nsec; s++) {
		rows.len = 0;
		ps_buf_putc(&rows, 0);
		put_be(&rows, 1, 1), put_be(&rows, (uint64_t)p.off[1], 4), put_be(&rows, 0, 2);
		while (rows.len < rowlen + 1)
			ps_buf_putc(&rows, 0);
		zlen = compressBound(rows.len);
		ck_assert_ptr_nonnull(z = realloc(z, zlen));
		ck_assert_int_eq(compress2(z, &zlen, rows.data, rows.len, 9), Z_OK);
		x[s] = (int64_t)p.b.len;
		snprintf(dict, sizeof dict, "/Type/XRef/Size 30/Index[%d 1]/W[1 4 2]/Root 1 0 R%s%.0lld"
		         "/Filter/FlateDecode/DecodeParms<</Predictor 10/Colors 8/Columns 2097152>>", 10 + s,
		         s ? "/Prev " : "", s ? (long long)x[s - 1] : 0LL);
		pdf_stream_obj(&p, 40 + s, dict, z, zlen);
	}
	{
		int64_t t = (int64_t)p.b.len;
		ps_buf_printf(&p.b, "xref\n0 4\n0000000000 65535 f\r\n");
		for (s = 1; s <= 3; s++)
			ps_buf_printf(&p.b, "%010lld 00000 n\r\n", (long long)p.off[s]);
		ps_buf_printf(&p.b, "trailer\n<</Size 60/Root 1 0 R/Prev %lld>>\nstartxref\n%lld\n%%%%EOF\n",
		              (long long)x[nsec - 1], (long long)t);
	}
	ck_assert_msg(open_buf(&p) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	for (num = 10; num < 10 + (uint32_t)nsec; num++) {
		const ps_xent *e;
		ck_assert_int_eq(ps_xref_find(doc, num, &e), 0);
		ck_assert_int_eq(e->type, 1);
	}
	for (s = 0; s < doc->xref.nsections; s++) {
		const ps_xpart *part = doc->xref.sections[s].stm;
		if (part) {
			held += part->data.cap + part->raw.cap;
			counted += part->kept;
			ck_assert_ptr_null(part->fr);
		}
	}
	ck_assert_msg(held <= counted && held < ((size_t)1 << 20), "held %zu, counted %zu", held, counted);
	free(z);
	ps_buf_free(&rows);
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
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
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
	/* issue 11: the /XRefStm stream (object 7) is one of the chain's */
	ck_assert_int_eq(doc->xref.sections[0].xrefstm_num, 7);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 7), 1);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 4), 0);
	pdfstamp_info_clear(&info);
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
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
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
	pdfstamp_info_clear(&info);
}
END_TEST

START_TEST(bytes_read_counts_each_byte_once)
{
	/* A small file is read in overlapping windows (the tail, the table in
	 * it, each object's 1 KiB window): each byte counts once (issue 17). */
	struct pdf p;
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	ps_buf b = PS_BUF_INIT;

	pdf_start(&p);
	basic_objects(&p);
	pdf_table(&p, 4, "");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_gt(info.bytes_read, 0);
	ck_assert_int_le(info.bytes_read, info.file_size);
	/* Reading the whole file again adds exactly what was not read yet. */
	ck_assert_int_eq(ps_doc_pread(doc, 0, (size_t)info.file_size, &b), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.bytes_read, info.file_size);
	ck_assert_int_eq(ps_doc_pread(doc, 10, 20, &b), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.bytes_read, info.file_size);
	ps_buf_free(&b);
	pdfstamp_info_clear(&info);
}
END_TEST

START_TEST(bytes_read_merges_ranges)
{
	/* Disjoint, touching and overlapping reads, in any order. */
	struct pdf p;
	static uint8_t payload[64 << 10];
	ps_buf b = PS_BUF_INIT;
	int64_t base;

	memset(payload, 'x', sizeof payload);
	pdf_start(&p);
	basic_objects(&p);
	pdf_stream_obj(&p, 4, "", payload, sizeof payload);
	pdf_table(&p, 5, "");
	ck_assert_int_eq(open_buf(&p), 0);
	base = doc->bytes_read;
	/* the payload sits between offsets 1000 and 60000 whatever the rest */
	ck_assert_int_eq(ps_doc_pread(doc, 20000, 100, &b), 0);
	ck_assert_int_eq(doc->bytes_read, base + 100);
	ck_assert_int_eq(ps_doc_pread(doc, 10000, 100, &b), 0);
	ck_assert_int_eq(doc->bytes_read, base + 200);
	ck_assert_int_eq(ps_doc_pread(doc, 10100, 100, &b), 0);  /* touches */
	ck_assert_int_eq(doc->bytes_read, base + 300);
	ck_assert_int_eq(ps_doc_pread(doc, 10050, 9950, &b), 0); /* bridges to 20000 */
	ck_assert_int_eq(doc->bytes_read, base + 10100);
	ck_assert_int_eq(ps_doc_pread(doc, 10000, 10100, &b), 0); /* nothing new */
	ck_assert_int_eq(doc->bytes_read, base + 10100);
	ck_assert_int_eq(ps_doc_pread(doc, 9990, 10120, &b), 0); /* 10 + 10 new */
	ck_assert_int_eq(doc->bytes_read, base + 10120);
	ps_buf_free(&b);
}
END_TEST

/* ---- memory follows the objects present (issue 11, "Amplification") ---------- */

/* Bytes the allocator has handed out and not taken back, where glibc can
 * tell (mallinfo2, 2.33); -1 elsewhere. */
static int64_t heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();

	return (int64_t)(mi.uordblks + mi.hblkhd);
#else
	return -1;
#endif
}

/* Catalog, page tree and page numbered BASE..BASE+2, one subsection. */
static void high_numbered_pdf(ps_buf *b, uint32_t base)
{
	size_t off[3];
	int64_t x;
	int i;

	ps_buf_puts(b, "%PDF-1.7\n");
	off[0] = b->len;
	ps_buf_printf(b, "%u 0 obj\n<</Type/Catalog/Pages %u 0 R>>\nendobj\n", base, base + 1);
	off[1] = b->len;
	ps_buf_printf(b, "%u 0 obj\n<</Type/Pages/Kids[%u 0 R]/Count 1>>\nendobj\n", base + 1, base + 2);
	off[2] = b->len;
	ps_buf_printf(b, "%u 0 obj\n<</Type/Page/Parent %u 0 R/MediaBox[0 0 612 792]>>\nendobj\n", base + 2, base + 1);
	x = (int64_t)b->len;
	ps_buf_printf(b, "xref\n0 1\n0000000000 65535 f\r\n%u 3\n", base);
	for (i = 0; i < 3; i++)
		ps_buf_printf(b, "%010zu 00000 n\r\n", off[i]);
	ps_buf_printf(b, "trailer\n<</Size %u/Root %u 0 R>>\nstartxref\n%lld\n%%%%EOF\n", base + 3, base, (long long)x);
}

/* A file of a few hundred bytes with objects numbered 8,388,000-8,388,002
 * once cost a 134 MB index (16 bytes times the highest number). */
START_TEST(sparse_high_numbers_cost_little)
{
	ps_buf b = PS_BUF_INIT;
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	int64_t before, after;
	ps_obj *o;

	high_numbered_pdf(&b, 8388000);
	ck_assert_int_lt(b.len, 512);
	write_file(b.data, b.len);
	ps_buf_free(&b);
	before = heap_in_use();
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, tmpl, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	after = heap_in_use();
	ck_assert_int_eq(info.objects, 3);
	ck_assert_int_eq(info.pages, 1);
	ck_assert_int_eq(info.size, 8388003);
	/* one 4 KiB page and a directory of at most 32768 slots */
	ck_assert_uint_le(doc->xref.bytes, PS_XREF_PAGE * sizeof(ps_xent) + 32768 * sizeof(ps_xent *));
	if (before >= 0)
		ck_assert_int_lt(after - before, 4 << 20);
	/* lookups, the walk over the objects in use, the highest number */
	ck_assert_int_eq(ps_doc_lookup(doc, 8388002, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
	ck_assert_ptr_null(ps_xref_get(ps_doc_xref(doc), 8387999));
	ck_assert_ptr_null(ps_xref_get(ps_doc_xref(doc), 8388003));
	ck_assert_ptr_null(ps_xref_get(ps_doc_xref(doc), PS_MAX_OBJNUM));
	ck_assert_ptr_null(ps_xref_get(ps_doc_xref(doc), UINT32_MAX));
	ck_assert_ptr_null(ps_xref_get(ps_doc_xref(doc), 0));
	ck_assert_int_eq(ps_xref_type(ps_doc_xref(doc), 8388001), 1);
	ck_assert_uint_eq(ps_xref_next(ps_doc_xref(doc), 0), 8388000);
	ck_assert_uint_eq(ps_xref_next(ps_doc_xref(doc), 8388000), 8388001);
	ck_assert_uint_eq(ps_xref_next(ps_doc_xref(doc), 8388001), 8388002);
	ck_assert_uint_eq(ps_xref_next(ps_doc_xref(doc), 8388002), 0);
	ck_assert_uint_eq(ps_xref_next(ps_doc_xref(doc), UINT32_MAX), 0);
	ck_assert_uint_eq(doc->xref.max, 8388002);
	ck_assert_uint_eq(doc->xref.used, 3);
	pdfstamp_info_clear(&info);
}
END_TEST

/* Objects scattered over the whole number range, in two revisions: the
 * merge rule holds across pages (a newer free entry hides an older object
 * on a page of its own), the walk visits each object once, in order, and
 * memory is one page per range touched. */
START_TEST(sparse_scattered_revisions)
{
	struct pdf p;
	ps_buf tail = PS_BUF_INIT;
	ps_obj *o;
	int64_t x1, x2, offs[8];
	static const uint32_t nums[8] = {4, 300, 70000, 1000000, 4000000, 6000000, 8000000, PS_MAX_OBJNUM};
	uint32_t n;
	int i;

	pdf_start(&p);
	basic_objects(&p);
	for (i = 0; i < 8; i++) {
		offs[i] = (int64_t)p.b.len;
		ps_buf_printf(&p.b, "%u 0 obj\n(n%u)\nendobj\n", nums[i], nums[i]);
	}
	x1 = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n0 4\n0000000000 65535 f\r\n%010lld 00000 n\r\n%010lld 00000 n\r\n%010lld 00000 n\r\n",
	              (long long)p.off[1], (long long)p.off[2], (long long)p.off[3]);
	for (i = 0; i < 8; i++)
		ps_buf_printf(&p.b, "%u 1\n%010lld 00000 n\r\n", nums[i], (long long)offs[i]);
	ps_buf_printf(&p.b, "trailer\n<</Size %u/Root 1 0 R>>\nstartxref\n%lld\n%%%%EOF\n", PS_MAX_OBJNUM + 1,
	              (long long)x1);
	/* revision 2 frees 4000000 and adds 5000000 */
	offs[0] = (int64_t)p.b.len;
	ps_buf_puts(&p.b, "5000000 0 obj\n(new)\nendobj\n");
	x2 = (int64_t)p.b.len;
	ps_buf_printf(&tail, "xref\n4000000 1\n0000000000 00001 f\r\n5000000 1\n%010lld 00000 n\r\n"
	              "trailer\n<</Size %u/Root 1 0 R/Prev %lld>>\nstartxref\n%lld\n%%%%EOF\n",
	              (long long)offs[0], PS_MAX_OBJNUM + 1, (long long)x1, (long long)x2);
	ps_buf_append(&p.b, tail.data, tail.len);
	ps_buf_free(&tail);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 4000000, &o), 0);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(ps_doc_lookup(doc, 5000000, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_mem_eq(o->u.str.p, "new", 3);
	ck_assert_int_eq(ps_doc_lookup(doc, PS_MAX_OBJNUM, &o), 0);
	ck_assert_ptr_nonnull(o);
	/* the walk: 1 2 3 4 300 70000 1000000 5000000 6000000 8000000 max */
	ck_assert_int_eq(ps_xref_load_all(doc), 0);
	{
		static const uint32_t want[] = {1, 2, 3, 4, 300, 70000, 1000000, 5000000, 6000000, 8000000, PS_MAX_OBJNUM};
		const ps_xref *x = ps_doc_xref(doc);
		i = 0;
		for (n = ps_xref_next(x, 0); n != 0; n = ps_xref_next(x, n)) {
			ck_assert_int_lt(i, (int)(sizeof want / sizeof want[0]));
			ck_assert_uint_eq(n, want[i]);
			i++;
		}
		ck_assert_int_eq(i, (int)(sizeof want / sizeof want[0]));
	}
	ck_assert_uint_eq(doc->xref.used, 11);
	ck_assert_uint_eq(doc->xref.max, PS_MAX_OBJNUM);
	/* pages: 1-4, 300, 70000, 1000000, 4000000, 5000000, 6000000, 8000000, max */
	ck_assert_uint_le(doc->xref.bytes, 9 * PS_XREF_PAGE * sizeof(ps_xent) + 32768 * sizeof(ps_xent *));
}
END_TEST

/* ---- the revision chain is attacker-writable (issue 11) ---------------------- */

/* A /V 5 /R 6 encryption dictionary with the right shapes (no password
 * opens it; the chain check runs before any password is tried). */
static void enc_body(char *out, size_t n, const char *filters)
{
	char o[97], oe[65], perms[33];

	memset(o, 'a', 96);
	o[96] = 0;
	memset(oe, 'b', 64);
	oe[64] = 0;
	memset(perms, 'c', 32);
	perms[32] = 0;
	snprintf(out, n, "<</Filter/Standard/V 5/R 6/Length 256/P -4/CF<</StdCF<</CFM/AESV3/Length 32"
	         "/AuthEvent/DocOpen>>>>%s/O<%s>/U<%s>/OE<%s>/UE<%s>/Perms<%s>>>", filters, o, o, oe, oe, perms);
}

#define ID_A "/ID[<00112233445566778899aabbccddeeff><00112233445566778899aabbccddeeff>]"
#define ID_B "/ID[<ffeeddccbbaa99887766554433221100><00112233445566778899aabbccddeeff>]"

/* The original revision: objects 1-3 and /Encrypt 4 0 R. */
static int64_t encrypted_base(struct pdf *p)
{
	char enc[512];

	pdf_start(p);
	basic_objects(p);
	enc_body(enc, sizeof enc, "/StmF/StdCF/StrF/StdCF");
	pdf_obj(p, 4, enc);
	return pdf_table(p, 5, "/Encrypt 4 0 R" ID_A);
}

/* Appends a revision that redefines object NUM as BODY (NUM 0: object 3,
 * unchanged) with the trailer keys EXTRA. */
static void append_revision(struct pdf *p, int64_t prev, int num, const char *body, const char *extra)
{
	int64_t off, x;

	if (!num) {
		num = 3;
		body = "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>";
	}
	off = (int64_t)p->b.len;
	ps_buf_printf(&p->b, "%d 0 obj\n%s\nendobj\n", num, body);
	x = (int64_t)p->b.len;
	ps_buf_printf(&p->b, "xref\n%d 1\n%010lld 00000 n\r\ntrailer\n<</Size 5 /Root 1 0 R /Prev %lld%s>>\n"
	              "startxref\n%lld\n%%%%EOF\n", num, (long long)off, (long long)prev, extra, (long long)x);
}

static void chain_refused(int num, const char *body, const char *extra, const char *why)
{
	struct pdf p;
	int64_t prev = encrypted_base(&p);

	append_revision(&p, prev, num, body, extra);
	ck_assert_int_eq(open_buf(&p), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_null(doc);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), why) != NULL, "message: %s", pdfstamp_ctx_errmsg(ctx));
}

START_TEST(chain_encrypt_null)
{
	chain_refused(0, NULL, "/Encrypt null" ID_A, "revision 2 of 2");
}
END_TEST

START_TEST(chain_encrypt_dropped)
{
	chain_refused(0, NULL, ID_A, "drops the /Encrypt");
}
END_TEST

START_TEST(chain_encrypt_elsewhere)
{
	char enc[512];

	enc_body(enc, sizeof enc, "/StmF/StdCF/StrF/StdCF");
	chain_refused(6, enc, "/Encrypt 6 0 R" ID_A, "points /Encrypt at another");
}
END_TEST

START_TEST(chain_encrypt_redefined)
{
	char enc[512];

	enc_body(enc, sizeof enc, "/StmF/Identity/StrF/Identity");
	chain_refused(4, enc, "/Encrypt 4 0 R" ID_A, "revision 2 of 2 gives the /Encrypt dictionary (object 4) other content than revision 1");
}
END_TEST

START_TEST(chain_id_changed)
{
	chain_refused(0, NULL, "/Encrypt 4 0 R" ID_B, "first /ID string");
}
END_TEST

START_TEST(chain_honest_revisions)
{
	/* The same /Encrypt and ID[0] in every revision, and even the same
	 * dictionary written again: the file opens (and is encrypted). */
	struct pdf p;
	char enc[512];
	int64_t prev = encrypted_base(&p);

	enc_body(enc, sizeof enc, "/StmF/StdCF/StrF/StdCF");
	append_revision(&p, prev, 4, enc, "/Encrypt 4 0 R" ID_A);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_is_encrypted(doc), 1);
}
END_TEST

START_TEST(chain_linearized_main_trailer)
{
	/* An older trailer without /Encrypt (the main trailer of a linearized
	 * file holds only /Size) under a newer one that has it: allowed. */
	struct pdf p;
	char enc[512];
	int64_t x, off;

	pdf_start(&p);
	basic_objects(&p);
	x = pdf_table(&p, 4, "");
	enc_body(enc, sizeof enc, "/StmF/StdCF/StrF/StdCF");
	off = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "4 0 obj\n%s\nendobj\n", enc);
	{
		int64_t x2 = (int64_t)p.b.len;
		ps_buf_printf(&p.b, "xref\n4 1\n%010lld 00000 n\r\ntrailer\n<</Size 5 /Root 1 0 R /Prev %lld"
		              "/Encrypt 4 0 R" ID_A ">>\nstartxref\n%lld\n%%%%EOF\n", (long long)off, (long long)x,
		              (long long)x2);
	}
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(pdfstamp_doc_is_encrypted(doc), 1);
}
END_TEST

START_TEST(xref_type_is_not_an_exemption)
{
	/* A stream that says /Type /XRef but is no section of the chain is
	 * encrypted like any other; the chain's own xref stream is not. */
	struct pdf p;

	build_stream_pdf(&p, 4, 0, "");
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_is_xref_stream(doc, 1), 0);
	ck_assert_int_ne(ps_doc_is_xref_stream(doc, doc->xref.sections[0].stream_num), 0);
	{
		ps_obj *d = ps_new_dict(), *stm;
		ck_assert_int_eq(ps_dict_put(d, "Type", ps_new_name("XRef")), 0);
		stm = ps_new_stream(d, NULL, 0);
		ck_assert_ptr_nonnull(stm);
		ps_sec *sec = NULL;
		ck_assert_int_eq(ps_sec_new_r6(doc->ctx, "", 0, "o", 1, -4, 1, &sec), 0);
		ck_assert_int_eq(ps_sec_stream_encrypted(sec, stm), 1);
		ps_sec_free(sec);
		ps_obj_free(stm);
	}
}
END_TEST

START_TEST(objstm_length_in_another_objstm)
{
	/* Object stream 10 holds the catalog; its /Length is object 20, in
	 * object stream 11, which also holds a shadow "object 1".  Loading 10
	 * loads 11 on the way: the catalog read must be the real one. */
	struct pdf p;
	const char *real = "<</Type/Catalog/Pages 2 0 R/Real true>>";
	const char *shadow = "<</Type/Catalog/Pages 2 0 R>>";
	char h10[40], h11[40], d10[256], d11[256];
	ps_buf rows = PS_BUF_INIT;
	ps_obj *cat = NULL;
	int64_t x;
	int n, i;

	snprintf(h10, sizeof h10, "%-16s", "1 0");
	n = snprintf(d10, sizeof d10, "%s%s\n", h10, real);
	{
		char hdr[32];
		snprintf(hdr, sizeof hdr, "1 0 20 %zu", strlen(shadow) + 1);
		snprintf(h11, sizeof h11, "%-16s", hdr);
	}
	snprintf(d11, sizeof d11, "%s%s\n%d\n", h11, shadow, n);
	pdf_start(&p);
	pdf_obj(&p, 2, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pdf_obj(&p, 3, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>");
	p.off[10] = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "10 0 obj\n<</Type/ObjStm/N 1/First 16/Length 20 0 R>>\nstream\n%s\nendstream\nendobj\n", d10);
	pdf_stream_obj(&p, 11, "/Type/ObjStm/N 2/First 16", (const uint8_t *)d11, strlen(d11));
	x = (int64_t)p.b.len;
	for (i = 0; i <= 21; i++) {
		int type = i == 1 || i == 20 ? 2 : (i == 2 || i == 3 || i == 10 || i == 11 || i == 21) ? 1 : 0;
		int64_t f2 = i == 1 ? 10 : i == 20 ? 11 : i == 21 ? x : type == 1 ? p.off[i] : 0;
		int f3 = i == 20 ? 1 : 0;
		put_be(&rows, (uint64_t)type, 1);
		put_be(&rows, (uint64_t)f2, 4);
		put_be(&rows, (uint64_t)f3, 2);
	}
	ps_buf_printf(&p.b, "21 0 obj\n<</Type/XRef/Size 22/W[1 4 2]/Root 1 0 R/Length %zu>>\nstream\n", rows.len);
	ps_buf_append(&p.b, rows.data, rows.len);
	ps_buf_printf(&p.b, "\nendstream\nendobj\nstartxref\n%lld\n%%%%EOF\n", (long long)x);
	ps_buf_free(&rows);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &cat), 0);
	ck_assert_ptr_nonnull(cat);
	ck_assert_ptr_nonnull(ps_dict_get(cat, "Real"));
}
END_TEST

/* ---- the lazy index (xref.c, xrefsec.c) ---------------------------------- */

/* Every number below the bound, read lazily on a fresh open, against the
 * full load of another open of the same file: the two must agree. */
static void lazy_equals_full(const char *path)
{
	ps_doc *lazy = NULL, *full = NULL;
	uint32_t num;

	ck_assert_int_eq(pdfstamp_doc_open(ctx, &lazy, path, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &full, path, 0), 0);
	ck_assert_int_eq(ps_xref_load_all(full), 0);
	ck_assert_uint_ge(lazy->xref.bound, full->xref.max + 1);
	ck_assert_uint_ge(lazy->xref.mentioned, full->xref.used);
	for (num = 0; num < lazy->xref.bound + 2; num++) {
		const ps_xent *a = NULL, *b = ps_xref_get(ps_doc_xref(full), num);
		ck_assert_int_eq(ps_xref_find(lazy, num, &a), 0);
		ck_assert_msg((a != NULL) == (b != NULL), "object %u: lazy %p, full %p", num, (void *)a, (void *)b);
		if (a) {
			ck_assert_int_eq(a->type, b->type);
			ck_assert_int_eq(a->off, b->off);
			ck_assert_uint_eq(a->aux, b->aux);
			ck_assert_uint_eq(a->sec, b->sec);
		}
	}
	pdfstamp_doc_close(lazy);
	pdfstamp_doc_close(full);
}

/* A stamp reads the entries it needs: opening a file with a 20,000-entry
 * table and looking up one object reads a few KB, not the 400 KB table. */
START_TEST(lazy_table_reads_little)
{
	struct pdf p;
	ps_obj *o;
	int64_t x;
	int i, n = 20000;

	pdf_start(&p);
	basic_objects(&p);
	x = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n0 4\n0000000000 65535 f\r\n");
	for (i = 1; i < 4; i++)
		ps_buf_printf(&p.b, "%010lld 00000 n\r\n", (long long)p.off[i]);
	ps_buf_printf(&p.b, "4 %d\n", n - 4); /* a second subsection of free entries */
	for (i = 4; i < n; i++)
		ps_buf_printf(&p.b, "%010d 00001 f\r\n", 0);
	ps_buf_printf(&p.b, "trailer\n<</Size %d /Root 1 0 R>>\nstartxref\n%lld\n%%%%EOF\n", n, (long long)x);
	ck_assert_int_gt(p.b.len, 400000);
	write_file(p.b.data, p.b.len);
	ps_buf_free(&p.b);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, tmpl, 0), 0);
	ck_assert_ptr_nonnull(doc->xref.sections[0].tab);
	ck_assert_int_eq(doc->xref.sections[0].tab->form, PS_XPART_SUBS);
	ck_assert_uint_eq(doc->xref.sections[0].tab->nsubs, 2);
	ck_assert_uint_eq(doc->xref.bound, (uint32_t)n);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
	ck_assert_int_eq(ps_doc_lookup(doc, 19999, &o), 0);
	ck_assert_ptr_null(o);
	ck_assert_int_lt(doc->bytes_read, 16384);
	/* numbers nobody lists cost nothing however many are asked for (a
	 * hostile /Kids array of far-apart references must not make pages) */
	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(ps_doc_lookup(doc, (uint32_t)(n + i * 8000), &o), 0);
		ck_assert_ptr_null(o);
	}
	ck_assert_int_lt(doc->xref.bytes, 64 * 1024);
	lazy_equals_full(tmpl);
}
END_TEST

/* Tables the arithmetic does not fit are read whole, as tolerantly as
 * before, and answer the same: 19-byte entries, a stride that changes
 * inside a subsection, overlapping and unsorted subsections, white space
 * between the fields, an empty subsection. */
START_TEST(lazy_irregular_tables)
{
	static const char *const shapes[] = {"lf19", "overlap", "unsorted", "spaces", "empty"};
	size_t k;

	for (k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		struct pdf p;
		ps_obj *o;
		int64_t x;
		const char *sh = shapes[k];
		enum ps_xpart_form want = PS_XPART_RECS;

		pdf_start(&p);
		basic_objects(&p);
		x = (int64_t)p.b.len;
		if (!strcmp(sh, "lf19")) {
			want = PS_XPART_SUBS; /* 19-byte entries fit the arithmetic with their own stride */
			ps_buf_printf(&p.b, "xref\n0 4\n0000000000 65535 f\n%010lld 00000 n\n%010lld 00000 n\n%010lld 00000 n\n",
			              (long long)p.off[1], (long long)p.off[2], (long long)p.off[3]);
		} else if (!strcmp(sh, "overlap")) {
			/* object 2 twice in one section: the first mention wins */
			ps_buf_printf(&p.b, "xref\n0 3\n0000000000 65535 f\r\n%010lld 00000 n\r\n%010lld 00000 n\r\n"
			              "2 2\n%010lld 00000 n\r\n%010lld 00000 n\r\n",
			              (long long)p.off[1], (long long)p.off[2], (long long)p.off[3], (long long)p.off[3]);
		} else if (!strcmp(sh, "unsorted")) {
			ps_buf_printf(&p.b, "xref\n3 1\n%010lld 00000 n\r\n0 3\n0000000000 65535 f\r\n%010lld 00000 n\r\n"
			              "%010lld 00000 n\r\n",
			              (long long)p.off[3], (long long)p.off[1], (long long)p.off[2]);
			want = PS_XPART_RECS;
		} else if (!strcmp(sh, "spaces")) {
			ps_buf_printf(&p.b, "xref\n0  4\n0 65535 f\r\n%lld 0 n\r\n%lld 0 n\r\n%lld 0 n\r\n",
			              (long long)p.off[1], (long long)p.off[2], (long long)p.off[3]);
		} else {
			want = PS_XPART_SUBS; /* an empty subsection mentions nothing */
			ps_buf_printf(&p.b, "xref\n0 0\n0 4\n0000000000 65535 f\r\n%010lld 00000 n\r\n%010lld 00000 n\r\n"
			              "%010lld 00000 n\r\n9 0\n",
			              (long long)p.off[1], (long long)p.off[2], (long long)p.off[3]);
		}
		ps_buf_printf(&p.b, "trailer\n<</Size 4 /Root 1 0 R>>\nstartxref\n%lld\n%%%%EOF\n", (long long)x);
		write_file(p.b.data, p.b.len);
		ps_buf_free(&p.b);
		ck_assert_msg(pdfstamp_doc_open(ctx, &doc, tmpl, 0) == 0, "%s: %s", sh, ctx->errmsg);
		ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
		ck_assert_msg(o && ps_obj_is_name(ps_dict_get(o, "Type"), "Page"), "%s", sh);
		ck_assert_int_eq(ps_doc_lookup(doc, 2, &o), 0);
		ck_assert_msg(o && ps_obj_is_name(ps_dict_get(o, "Type"), "Pages"), "%s", sh);
		ck_assert_msg(doc->xref.sections[0].tab->form == want, "%s: form %d", sh, doc->xref.sections[0].tab->form);
		lazy_equals_full(tmpl);
		pdfstamp_doc_close(doc);
		doc = NULL;
		unlink(tmpl);
	}
}
END_TEST

/* An entry damaged inside a well-formed table is refused when it is read,
 * with its number; the others stay readable. */
START_TEST(lazy_damaged_entry)
{
	struct pdf p;
	ps_obj *o;
	int64_t x;

	pdf_start(&p);
	basic_objects(&p);
	x = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n0 4\n0000000000 65535 f\r\n%010lld 00000 n\r\n00000x0000 00000 n\r\n%010lld 00000 n\r\n",
	              (long long)p.off[1], (long long)p.off[3]);
	ps_buf_printf(&p.b, "trailer\n<</Size 4 /Root 1 0 R>>\nstartxref\n%lld\n%%%%EOF\n", (long long)x);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ps_doc_lookup(doc, 2, &o), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "bad entry 2"));
	ck_assert_int_eq(ps_xref_load_all(doc), PDFSTAMP_E_FORMAT);
}
END_TEST

/* An xref stream whose /Index ranges overlap or come unsorted: one sorted
 * array, the first mention winning, equal to the full load. */
START_TEST(lazy_xref_stream_unsorted_index)
{
	struct pdf p;
	ps_obj *o;
	uint8_t d[5 * 6];
	int64_t x;
	char extra[128];
	int i;

	pdf_start(&p);
	basic_objects(&p);
	x = (int64_t)p.b.len;
	/* /Index [3 1 0 4 1 1]: 3, then 0..3, then 1 again (ignored: 3 and 1 came first) */
	{
		const int nums[6] = {3, 0, 1, 2, 3, 1};
		for (i = 0; i < 6; i++) {
			int64_t off = nums[i] == 0 ? 0 : (i == 4 ? 1 : (nums[i] == 4 ? x : p.off[nums[i]]));
			d[5 * i] = nums[i] == 0 ? 0 : 1;
			d[5 * i + 1] = (uint8_t)(off >> 16);
			d[5 * i + 2] = (uint8_t)(off >> 8);
			d[5 * i + 3] = (uint8_t)off;
			d[5 * i + 4] = 0;
		}
	}
	snprintf(extra, sizeof extra, "/Type/XRef/Size 5/W[1 3 1]/Index[3 1 0 4 1 1]/Root 1 0 R");
	pdf_stream_obj(&p, 4, extra, d, sizeof d);
	ps_buf_printf(&p.b, "startxref\n%lld\n%%%%EOF\n", (long long)p.off[4]);
	write_file(p.b.data, p.b.len);
	ps_buf_free(&p.b);
	(void)x;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, tmpl, 0), 0);
	ck_assert_int_eq(doc->xref.full, 1); /* loaded whole at open, the parts freed */
	ck_assert_ptr_null(doc->xref.sections[0].stm);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Catalog"));
	lazy_equals_full(tmpl);
}
END_TEST

/* Entries of several lengths that add up to the arithmetic (a blank slot
 * and, further on, a slot holding two short entries): the slots that do
 * not hold one strict entry are refused when read, lazily and at the full
 * load alike, and the table is never re-read tolerantly (that would give
 * the slots between them other offsets than those already handed out). */
START_TEST(lazy_entries_that_add_up)
{
	struct pdf p;
	ps_obj *o;
	int64_t x, off3;
	char mixed[64];

	pdf_start(&p);
	basic_objects(&p);
	x = (int64_t)p.b.len;
	snprintf(mixed, sizeof mixed, "%lld 0 n %lld 0 n", (long long)p.off[2], (long long)p.off[3]);
	off3 = p.off[3];
	ps_buf_printf(&p.b, "xref\n0 6\n0000000000 65535 f\r\n%010lld 00000 n\r\n%-18s\r\n%-18s\r\n", (long long)p.off[1],
	              "", mixed);
	ps_buf_printf(&p.b, "%010lld 00000 n\r\n%010lld 00000 n\r\n", (long long)p.off[3], (long long)p.off[2]);
	ps_buf_printf(&p.b, "trailer\n<</Size 6 /Root 1 0 R>>\nstartxref\n%lld\n%%%%EOF\n", (long long)x);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(doc->xref.sections[0].tab->form, PS_XPART_SUBS);
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0);
	ck_assert_ptr_nonnull(o);
	/* 7.5.4 puts entry 4 at 4 x 20 bytes: that is what is read */
	{
		const ps_xent *e = NULL;
		ck_assert_int_eq(ps_xref_find(doc, 4, &e), 0);
		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(e->off, off3);
	}
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "7.5.4"));
	ck_assert_int_eq(ps_doc_lookup(doc, 2, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(doc->xref.sections[0].tab->form, PS_XPART_SUBS);
	ck_assert_int_eq(ps_xref_load_all(doc), PDFSTAMP_E_FORMAT);
}
END_TEST

/* A section that lists the /Encrypt object twice, the second time with
 * other content: every definition is compared, the file refused. */
START_TEST(lazy_encrypt_listed_twice)
{
	struct pdf p;
	char enc[512], enc2[512];
	int64_t prev = encrypted_base(&p), off1, off2, x;

	enc_body(enc, sizeof enc, "/StmF/StdCF/StrF/StdCF");
	enc_body(enc2, sizeof enc2, "/StmF/Identity/StrF/Identity");
	off1 = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "4 0 obj\n%s\nendobj\n", enc);
	off2 = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "4 0 obj\n%s\nendobj\n", enc2);
	x = (int64_t)p.b.len;
	/* "4 1" twice: overlapping subsections, the tolerant form */
	ps_buf_printf(&p.b, "xref\n4 1\n%010lld 00000 n\r\n4 1\n%010lld 00000 n\r\ntrailer\n<</Size 5 /Root 1 0 R /Prev %lld"
	              "/Encrypt 4 0 R" ID_A ">>\nstartxref\n%lld\n%%%%EOF\n", (long long)off1, (long long)off2,
	              (long long)prev, (long long)x);
	ck_assert_int_eq(open_buf(&p), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "other content"));
}
END_TEST

/* Decoded xref streams past the budget kept for lazy lookups: the chain
 * is loaded whole as it is read, each section's data freed once merged. */
START_TEST(lazy_big_streams_load_whole)
{
	struct pdf p;
	ps_buf raw = PS_BUF_INIT;
	int64_t prev = -1;
	int s, n = 1200000; /* 17 bytes an entry: 20 MB a section, 2 sections pass 32 MB */
	ps_obj *o;

	pdf_start(&p);
	basic_objects(&p);
	for (s = 0; s < 2; s++) {
		uLongf zl;
		uint8_t *z;
		int i;
		ps_buf_reset(&raw);
		for (i = 0; i < 4; i++) { /* objects 0-3 of the first range */
			uint8_t e[17] = {0};
			int64_t off = i ? p.off[i] : 0;
			e[0] = i ? 1 : 0;
			for (int b = 0; b < 8; b++)
				e[1 + b] = (uint8_t)(off >> (56 - 8 * b));
			ps_buf_append(&raw, e, 17);
		}
		{
			uint8_t zero[17] = {0};
			for (i = 0; i < n; i++)
				ps_buf_append(&raw, zero, 17);
		}
		zl = compressBound(raw.len);
		z = malloc(zl);
		ck_assert_int_eq(compress(z, &zl, raw.data, raw.len), Z_OK);
		{
			char extra[160];
			int64_t at = (int64_t)p.b.len;
			if (prev >= 0)
				snprintf(extra, sizeof extra, "/Type/XRef/Size %d/W[1 8 8]/Index[0 4 100 %d]/Root 1 0 R/Prev %lld/Filter/FlateDecode",
				         100 + n, n, (long long)prev);
			else
				snprintf(extra, sizeof extra, "/Type/XRef/Size %d/W[1 8 8]/Index[0 4 100 %d]/Root 1 0 R/Filter/FlateDecode",
				         100 + n, n);
			pdf_stream_obj(&p, 5 + s, extra, z, zl);
			prev = at;
		}
		free(z);
	}
	ps_buf_printf(&p.b, "startxref\n%lld\n%%%%EOF\n", (long long)prev);
	ps_buf_free(&raw);
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(doc->xref.full, 1);
	ck_assert_ptr_null(doc->xref.sections[0].stm);
	ck_assert_ptr_null(doc->xref.sections[1].stm);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
}
END_TEST

/* A long chain and many lookups: past a budget of sections walked, the
 * full load takes over (a lookup then costs two array indexings). */
START_TEST(lazy_long_chain_goes_full)
{
	struct pdf p;
	int64_t prev;
	int s, i;
	ps_obj *o;

	pdf_start(&p);
	basic_objects(&p);
	prev = (int64_t)p.b.len;
	ps_buf_printf(&p.b, "xref\n0 1000\n0000000000 65535 f\r\n");
	for (i = 1; i < 1000; i++)
		ps_buf_printf(&p.b, "%010lld %05d %c\r\n", i < 4 ? (long long)p.off[i] : 0LL, i < 4 ? 0 : 1, i < 4 ? 'n' : 'f');
	ps_buf_printf(&p.b, "trailer\n<</Size 1000 /Root 1 0 R>>\nstartxref\n%lld\n%%%%EOF\n", (long long)prev);
	for (s = 0; s < 300; s++) {
		int64_t x = (int64_t)p.b.len;
		ps_buf_printf(&p.b, "xref\n0 0\ntrailer\n<</Size 4 /Root 1 0 R /Prev %lld>>\nstartxref\n%lld\n%%%%EOF\n",
		              (long long)prev, (long long)x);
		prev = x;
	}
	ck_assert_int_eq(open_buf(&p), 0);
	ck_assert_int_eq(doc->xref.nsections, 301);
	ck_assert_int_eq(doc->xref.full, 0);
	/* distinct numbers, each a walk over the 301 sections */
	for (i = 4; i < 1000 && !doc->xref.full; i++) {
		ck_assert_int_eq(ps_doc_lookup(doc, (uint32_t)i, &o), 0);
		ck_assert_ptr_null(o);
	}
	ck_assert_int_eq(doc->xref.full, 1);
	ck_assert_int_lt(i, 400);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
}
END_TEST

static Suite *xref_suite(void)
{
	Suite *s = suite_create("xref");
	TCase *tc = tcase_create("read");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, classic_table);
	tcase_add_test(tc, public_open_refuses_internal_flags);
	tcase_add_test(tc, info_is_versioned);
	tcase_add_test(tc, several_subsections_and_prev);
	tcase_add_test(tc, newer_free_entry_hides_object);
	tcase_add_test(tc, prev_loop_is_refused);
	tcase_add_test(tc, startxref_errors);
	tcase_add_test(tc, trailing_bytes_reported);
	tcase_add_test(tc, entry_past_eof_is_refused);
	tcase_add_test(tc, wrong_object_at_offset);
	tcase_add_test(tc, xref_stream_plain);
	tcase_add_test(tc, xref_stream_by_section_only);
	tcase_add_test(tc, rewrite_xref_form_threshold);
	tcase_add_test(tc, xref_stream_predictor_wide_offsets);
	tcase_add_test(tc, xref_stream_bad_w);
	tcase_add_test(tc, xref_stream_decoded_as_needed);
	tcase_add_test(tc, xref_stream_damage_is_sticky);
	tcase_add_test(tc, xref_stream_tail_is_judged);
	tcase_add_test(tc, xref_stream_wide_row_is_trimmed);
	tcase_add_test(tc, hybrid_file);
	tcase_add_test(tc, objstm_bad_header);
	tcase_add_test(tc, encrypt_in_object_stream_is_refused);
	tcase_add_test(tc, bytes_read_is_small);
	tcase_add_test(tc, bytes_read_counts_each_byte_once);
	tcase_add_test(tc, bytes_read_merges_ranges);
	tcase_add_test(tc, sparse_high_numbers_cost_little);
	tcase_add_test(tc, sparse_scattered_revisions);
	tcase_add_test(tc, chain_encrypt_null);
	tcase_add_test(tc, chain_encrypt_dropped);
	tcase_add_test(tc, chain_encrypt_elsewhere);
	tcase_add_test(tc, chain_encrypt_redefined);
	tcase_add_test(tc, chain_id_changed);
	tcase_add_test(tc, chain_honest_revisions);
	tcase_add_test(tc, chain_linearized_main_trailer);
	tcase_add_test(tc, xref_type_is_not_an_exemption);
	tcase_add_test(tc, objstm_length_in_another_objstm);
	tcase_add_test(tc, lazy_table_reads_little);
	tcase_add_test(tc, lazy_irregular_tables);
	tcase_add_test(tc, lazy_damaged_entry);
	tcase_add_test(tc, lazy_xref_stream_unsorted_index);
	tcase_add_test(tc, lazy_entries_that_add_up);
	tcase_add_test(tc, lazy_encrypt_listed_twice);
	tcase_add_test(tc, lazy_big_streams_load_whole);
	tcase_add_test(tc, lazy_long_chain_goes_full);
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
