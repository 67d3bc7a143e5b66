/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_stampid.c - unit tests for src/stampid.c: the default stamp ID,
 * the /NM format, and pdfstamp_stamp's skip of pages that carry the ID.
 *
 * Expected values come from outside the code under test: the two known
 * default IDs were computed by a separate Python implementation of the
 * serialisation stampid.c note 2 documents (hashlib.sha256 over the
 * fields with struct.pack('>Q'/'>q'/'>d'), base64.urlsafe_b64encode, the
 * first 10 characters); the /NM cases follow the pattern of pdfstamp(1)
 * STAMP IDS; the skip is judged by the file's size and mtime (stat), not
 * by the library's own report alone.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "stampid.h"

#define SAMPLE TEST_SRCDIR "/../samples/r6-table.pdf"
#define USER_PW "sample-user"

static ps_ctx *ctx;

static void setup(void)
{
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
}

static void teardown(void)
{
	pdfstamp_ctx_free(ctx);
	ctx = NULL;
}

static void id_of(const struct pdfstamp_stamp_opts *o, char id[33])
{
	ck_assert_msg(pdfstamp_stamp_id(ctx, o, id) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(ps_stampid_valid(id), "%s", id);
}

/* ---- the default ID (stampid.c note 2) ------------------------------------ */

START_TEST(default_known_answers)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	char id[33];

	id_of(&o, id);
	ck_assert_str_eq(id, "E-m721Qfdh");
	o.text = "Reviewed";
	o.author = "QA";
	o.date = "2026-01-02T03:04:05Z";
	id_of(&o, id);
	ck_assert_str_eq(id, "RDmpezJblc");
}
END_TEST

START_TEST(default_stable_and_canonical)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT, p = PDFSTAMP_STAMP_OPTS_INIT;
	char a[33], b[33];

	id_of(&o, a);
	id_of(&o, b);
	ck_assert_str_eq(a, b);
	ck_assert_uint_eq(strlen(a), 10);
	/* the defaults spelled out name the same stamp */
	p.text = "APPROVED";
	p.note = "APPROVED";
	p.icon = "Approved";
	p.date = "now";
	p.rect[0] = 99; /* ignored without has_rect */
	id_of(&p, b);
	ck_assert_str_eq(a, b);
	/* -0 is 0 */
	p.offset[0] = -0.0;
	id_of(&p, b);
	ck_assert_str_eq(a, b);
}
END_TEST

/* Options that are not part of the ID: the page selection, the file name,
 * the Bates offset. */
START_TEST(default_ignores_pages_and_file)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	char a[33], b[33];

	o.text = "Paid";
	id_of(&o, a);
	o.page = PDFSTAMP_PAGE_ALL;
	id_of(&o, b);
	ck_assert_str_eq(a, b);
	o.page = 7;
	o.pages = "1-3,!2";
	id_of(&o, b);
	ck_assert_str_eq(a, b);
	o.file_name = "/archive/2026/a.pdf";
	o.bates_offset = 1234;
	id_of(&o, b);
	ck_assert_str_eq(a, b);
}
END_TEST

typedef void (*mutate_fn)(struct pdfstamp_stamp_opts *o);

static const char *const fallback[] = {"Noto Sans CJK JP"};
static void m_text(struct pdfstamp_stamp_opts *o) { o->text = "APPROVED "; }
static void m_small(struct pdfstamp_stamp_opts *o) { o->small = ""; }
static void m_note(struct pdfstamp_stamp_opts *o) { o->note = "see ticket 12"; }
static void m_icon(struct pdfstamp_stamp_opts *o) { o->icon = "Draft"; }
static void m_author(struct pdfstamp_stamp_opts *o) { o->author = "QA"; }
static void m_freetext(struct pdfstamp_stamp_opts *o) { o->freetext = 1; }
static void m_font(struct pdfstamp_stamp_opts *o) { o->font = "DejaVu Sans"; }
static void m_fonts(struct pdfstamp_stamp_opts *o) { o->fonts = fallback; o->nfonts = 1; }
static void m_rect(struct pdfstamp_stamp_opts *o)
{
	static const double r[4] = {10, 10, 200, 80};
	o->has_rect = 1;
	memcpy(o->rect, r, sizeof r);
}
static void m_position(struct pdfstamp_stamp_opts *o) { o->position = PDFSTAMP_POS_CENTER; }
static void m_margin(struct pdfstamp_stamp_opts *o) { o->margin = 36.5; }
static void m_offset(struct pdfstamp_stamp_opts *o) { o->offset[1] = -3; }
static void m_rotate(struct pdfstamp_stamp_opts *o) { o->rotate = 45; }
static void m_diagonal(struct pdfstamp_stamp_opts *o) { o->diagonal = 1; }
static void m_scale(struct pdfstamp_stamp_opts *o) { o->scale = 0.5; }
static void m_color(struct pdfstamp_stamp_opts *o) { o->color[2] = 0.06; }
static void m_opacity(struct pdfstamp_stamp_opts *o) { o->opacity = 0.5; }
static void m_image_opacity(struct pdfstamp_stamp_opts *o) { o->image_opacity = 0.5; }
static void m_qr(struct pdfstamp_stamp_opts *o) { o->qr = "https://example.org/{file}"; }
static void m_qr_level(struct pdfstamp_stamp_opts *o) { o->qr_level = PDFSTAMP_QR_H; }
static void m_bates_start(struct pdfstamp_stamp_opts *o) { o->bates_start = 1000; }
static void m_bates_prefix(struct pdfstamp_stamp_opts *o) { o->bates_prefix = "ABC"; }
static void m_bates_digits(struct pdfstamp_stamp_opts *o) { o->bates_digits = 8; }
static void m_date(struct pdfstamp_stamp_opts *o) { o->date = "2026-01-02"; }

static const mutate_fn mutations[] = {
	m_text, m_small, m_note, m_icon, m_author, m_freetext, m_font, m_fonts, m_rect,
	m_position, m_margin, m_offset, m_rotate, m_diagonal, m_scale, m_color, m_opacity,
	m_image_opacity, m_qr, m_qr_level, m_bates_start, m_bates_prefix, m_bates_digits, m_date
};
#define NMUT (sizeof mutations / sizeof mutations[0])

/* Every option that defines the stamp changes the ID, each to another. */
START_TEST(default_changes_with_each_option)
{
	char ids[NMUT + 1][33];
	size_t i, k;

	for (i = 0; i <= NMUT; i++) {
		struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
		if (i < NMUT)
			mutations[i](&o);
		id_of(&o, ids[i]);
	}
	for (i = 0; i <= NMUT; i++)
		for (k = i + 1; k <= NMUT; k++)
			ck_assert_msg(strcmp(ids[i], ids[k]) != 0, "mutations %zu and %zu: %s", i, k,
			              ids[i]);
}
END_TEST

/* A baseline JPEG that ps_image_load accepts, W pixels wide. */
static void jpeg(ps_buf *b, unsigned w)
{
	static const uint8_t head[] = {
		0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00};
	uint8_t sof[] = {0xFF, 0xC0, 0x00, 0x0B, 8, 0, 16, 0, 0, 1, 1, 0x11, 0};
	static const uint8_t dht[] = {0xFF, 0xC4, 0x00, 0x13, 0};
	static const uint8_t sos[] = {0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 63, 0};
	uint8_t zero[64] = {0};

	sof[7] = (uint8_t)(w >> 8);
	sof[8] = (uint8_t)w;
	ps_buf_append(b, head, sizeof head);
	ps_buf_append(b, zero, 64);
	ps_buf_append(b, sof, sizeof sof);
	ps_buf_append(b, dht, sizeof dht);
	ps_buf_append(b, zero, 16);
	ps_buf_append(b, sos, sizeof sos);
	ps_buf_append(b, "\x12\x34\xFF\xD9", 4);
}

/* The image counts by its bytes, whether from a file or a buffer, never
 * by its path. */
START_TEST(default_image_by_bytes)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	char path[] = "/tmp/check_stampid-XXXXXX", none[33], a[33], b[33], c[33];
	ps_buf j1 = PS_BUF_INIT, j2 = PS_BUF_INIT;
	FILE *f;
	int fd;

	jpeg(&j1, 16);
	jpeg(&j2, 17);
	ck_assert(!j1.oom && !j2.oom);
	id_of(&o, none);
	o.image_data = j1.data;
	o.image_len = j1.len;
	id_of(&o, a);
	ck_assert_str_ne(a, none);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(f = fdopen(fd, "wb"));
	ck_assert_uint_eq(fwrite(j1.data, 1, j1.len, f), j1.len);
	ck_assert_int_eq(fclose(f), 0);
	o.image_data = NULL;
	o.image_len = 0;
	o.image = path;
	id_of(&o, b);
	ck_assert_str_eq(a, b); /* same bytes, from a file */
	o.image = NULL;
	o.image_data = j2.data;
	o.image_len = j2.len;
	id_of(&o, c);
	ck_assert_str_ne(a, c);
	/* an image that does not load: its error, no ID */
	o.image_data = (const uint8_t *)"GIF89a";
	o.image_len = 6;
	ck_assert_int_lt(pdfstamp_stamp_id(ctx, &o, c), 0);
	unlink(path);
	ps_buf_free(&j1);
	ps_buf_free(&j2);
}
END_TEST

START_TEST(explicit_ids)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	static const char *const bad[] = {
		"", "a.b", "a b", "caf\xc3\xa9", "a/b", "123456789012345678901234567890123", "x\n"
	};
	char id[33];
	size_t i;

	o.id = "approval_2026-Q1";
	id_of(&o, id);
	ck_assert_str_eq(id, "approval_2026-Q1");
	o.id = "12345678901234567890123456789012"; /* 32: the longest */
	id_of(&o, id);
	ck_assert_str_eq(id, o.id);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		o.id = bad[i];
		ck_assert_int_eq(pdfstamp_stamp_id(ctx, &o, id), PDFSTAMP_E_USAGE);
		ck_assert_int_eq(ps_stampid_valid(bad[i]), 0);
	}
	ck_assert_int_eq(pdfstamp_stamp_id(ctx, NULL, id), PDFSTAMP_E_USAGE);
	o.version = 99;
	ck_assert_int_eq(pdfstamp_stamp_id(ctx, &o, id), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(pdfstamp_stamp_id(NULL, &o, id), PDFSTAMP_E_USAGE);
}
END_TEST

/* Options of version 1 and 2: their text is literal, and the ID is the
 * one pdfstamp_stamp gives them (the v3 template with braces doubled). */
START_TEST(old_versions)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT, v3 = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	char dir[] = "/tmp/check_stampid-XXXXXX", out[128], a[33], b[33];
	pdfstamp_doc *doc = NULL;

	o.version = 2;
	o.text = "x{page}y";
	o.bates_digits = 99; /* past version 2's end: not read */
	id_of(&o, a);
	v3.text = "x{{page}}y";
	id_of(&v3, b);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(out, sizeof out, "%s/out.pdf", dir);
	w.output = out;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, SAMPLE, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0), 0);
	ck_assert_msg(pdfstamp_stamp(doc, &o, &w, &res) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_str_eq(res.id, a);
	pdfstamp_doc_close(doc);
	pdfstamp_result_clear(&res);
	unlink(out);
	rmdir(dir);
}
END_TEST

/* ---- the /NM format (note 1) ----------------------------------------------- */

START_TEST(nm_format)
{
	static const struct {
		const char *nm;
		const char *id;
		int64_t page;
	} good[] = {
		{"Kx3_a9Qm2Z.12", "Kx3_a9Qm2Z", 12},
		{"a.1", "a", 1},
		{"12345678901234567890123456789012.9999999999", "12345678901234567890123456789012",
		 9999999999},
		{"-_-.4", "-_-", 4},
	};
	static const char *const bad[] = {
		"Kx3_a9Qm2Z", ".1", "a.", "a.0", "a.01", "a.1x", "a.b.1", "a .1", "a.-1",
		"123456789012345678901234567890123.1", "a.12345678901", "aBcDeFgHiJkLmNo",
		"caf\xc3\xa9.1", "a.1\n"
	};
	char id[PS_STAMPID_MAX + 1], nm[PS_STAMPID_NM_MAX + 1];
	int64_t page;
	size_t i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		ck_assert_msg(ps_stampid_parse_nm((const uint8_t *)good[i].nm, strlen(good[i].nm),
		                                  id, &page) == 1, "%s", good[i].nm);
		ck_assert_str_eq(id, good[i].id);
		ck_assert_int_eq(page, good[i].page);
		ck_assert_uint_eq(ps_stampid_nm(id, page, nm), strlen(good[i].nm));
		ck_assert_str_eq(nm, good[i].nm);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(ps_stampid_parse_nm((const uint8_t *)bad[i], strlen(bad[i]), id,
		                                  &page) == 0, "%s", bad[i]);
	/* a NUL inside is not the end */
	ck_assert_int_eq(ps_stampid_parse_nm((const uint8_t *)"a.1\0", 4, id, &page), 0);
	/* the default ID's /NM fits one AES block up to page 9999 */
	ck_assert_uint_eq(ps_stampid_nm("E-m721Qfdh", 9999, nm), 15);
}
END_TEST

/* ---- the skip, through the public API (note 3; stamp.c note 9) ----------- */

static void copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	size_t k;
	FILE *in = fopen(from, "rb"), *out;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out = fopen(to, "wb"));
	while ((k = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, k, out), k);
	ck_assert_int_eq(fclose(out), 0);
	fclose(in);
}

/* Stamps PATH in place with a deferred update and commits it; *RES. */
static int stamp_deferred(const char *path, const struct pdfstamp_stamp_opts *o,
                          struct pdfstamp_result *res, int *pending_journal)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	pdfstamp_doc *doc = NULL;
	char jpath[256];
	int rc;

	w.flags = PDFSTAMP_WRITE_IN_PLACE | PDFSTAMP_WRITE_DEFER;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, PDFSTAMP_OPEN_WRITE), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0), 0);
	rc = pdfstamp_stamp(doc, o, &w, res);
	if (rc == 0) {
		ck_assert_int_eq(pdfstamp_doc_journal(doc), 0);
		snprintf(jpath, sizeof jpath, "%s.pdfstamp-journal", path);
		*pending_journal = access(jpath, F_OK) == 0;
		rc = pdfstamp_doc_commit(doc);
	}
	pdfstamp_doc_close(doc);
	return rc;
}

START_TEST(skip_already_stamped)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	char dir[] = "/tmp/check_stampid-XXXXXX", path[128], id[33];
	struct stat before, after;
	int journal = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/a.pdf", dir);
	copy_file(SAMPLE, path);
	o.text = "Checked";
	id_of(&o, id);
	/* page 1 */
	ck_assert_msg(stamp_deferred(path, &o, &res, &journal) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(res.skipped, 0);
	ck_assert_int_eq(res.pages_stamped, 1);
	ck_assert_int_eq(res.pages_already, 0);
	ck_assert_str_eq(res.id, id);
	ck_assert_int_eq(journal, 1);
	/* page 1 again: skipped, nothing pending, the file untouched */
	ck_assert_int_eq(stat(path, &before), 0);
	ck_assert_msg(stamp_deferred(path, &o, &res, &journal) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_int_eq(res.skipped, 1);
	ck_assert_int_eq(res.pages_stamped, 0);
	ck_assert_int_eq(res.pages_already, 1);
	ck_assert_int_eq(res.nobjects, 0);
	ck_assert_int_eq(res.bytes_appended, 0);
	ck_assert_str_eq(res.id, id);
	ck_assert_int_eq(journal, 0);
	ck_assert_int_eq(after.st_size, before.st_size);
	ck_assert(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	          after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	/* all pages: only page 2 */
	o.page = PDFSTAMP_PAGE_ALL;
	ck_assert_msg(stamp_deferred(path, &o, &res, &journal) == 0, "%s", pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(res.skipped, 0);
	ck_assert_int_eq(res.pages_stamped, 1);
	ck_assert_int_eq(res.pages_already, 1);
	ck_assert_int_eq(res.nobjects, 1);
	/* all pages again: skipped; another ID stamps both */
	ck_assert_int_eq(stamp_deferred(path, &o, &res, &journal), 0);
	ck_assert_int_eq(res.skipped, 1);
	ck_assert_int_eq(res.pages_already, 2);
	o.id = "other";
	ck_assert_int_eq(stamp_deferred(path, &o, &res, &journal), 0);
	ck_assert_int_eq(res.skipped, 0);
	ck_assert_int_eq(res.pages_stamped, 2);
	ck_assert_str_eq(res.id, "other");
	/* a bad ID is refused before anything */
	o.id = "no good";
	ck_assert_int_eq(stamp_deferred(path, &o, &res, &journal), PDFSTAMP_E_USAGE);
	pdfstamp_result_clear(&res);
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *stampid_suite(void)
{
	Suite *s = suite_create("stampid");
	TCase *tc = tcase_create("stampid");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, default_known_answers);
	tcase_add_test(tc, default_stable_and_canonical);
	tcase_add_test(tc, default_ignores_pages_and_file);
	tcase_add_test(tc, default_changes_with_each_option);
	tcase_add_test(tc, default_image_by_bytes);
	tcase_add_test(tc, explicit_ids);
	tcase_add_test(tc, old_versions);
	tcase_add_test(tc, nm_format);
	tcase_add_test(tc, skip_already_stamped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(stampid_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
