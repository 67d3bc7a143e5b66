/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_qr.c - QR codes for stamps (qr.c) and through pdfstamp_stamp.
 *
 * The fragment ps_qr_draw writes is parsed back (its transform, the white
 * square, the runs) into a module matrix, which must equal the symbol that
 * libqrencode, called directly here (linked, with the ECI header for
 * UTF-8 that is not ASCII), makes of the same bytes at the same level; the
 * runs must be maximal.  The limits of each level (ISO/IEC 18004 Table 7,
 * byte mode, version 40) are probed at their last accepted byte and the
 * first refused one, ASCII and not; bad strings and levels are
 * PDFSTAMP_E_USAGE.  Through the public call: a QR stamp of each level is
 * written to the encrypted sample; a string too long, a bad level, and a
 * QR code with an image but no text are PDFSTAMP_E_USAGE with no output
 * file.  (tests/e2e/qr.sh reads the codes back from renders with zbar.)
 */
#include "config.h"

#include <check.h>
#include <qrencode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps.h"
#include "qr.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif
#define USER_PW "sample-user"

static ps_ctx *ctx;

static void setup(void)
{
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
}

static void teardown(void)
{
	pdfstamp_ctx_free(ctx);
}

static const char *const strings[] = {
	"HELLO",
	"https://dms.example.org/approve?file=report-2026.pdf&page=12",
	"Gr\xc3\xb6\xc3\x9f" "e",
	"Genehmigt: Gr\xc3\xb6\xc3\x9f" "e \xe2\x80\x93 \xe6\x89\xbf\xe8\xaa\x8d / "
	"\xd9\x85\xd9\x88\xd8\xa7\xd9\x81\xd9\x82",
};

/* libqrencode's own symbol of S at LEVEL (qr.c note 1: byte mode, ECI 26
 * when not ASCII). */
static QRcode *reference(const char *s, int level)
{
	static const QRecLevel lv[4] = {QR_ECLEVEL_L, QR_ECLEVEL_M, QR_ECLEVEL_Q, QR_ECLEVEL_H};
	QRinput *in = QRinput_new2(0, lv[level]);
	QRcode *c;
	int ascii = 1;
	size_t i;

	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] >= 0x80)
			ascii = 0;
	ck_assert_ptr_nonnull(in);
	if (!ascii)
		ck_assert_int_eq(QRinput_appendECIheader(in, 26), 0);
	ck_assert_int_eq(QRinput_append(in, QR_MODE_8, (int)strlen(s), (const unsigned char *)s),
	                 0);
	c = QRcode_encodeInput(in);
	QRinput_free(in);
	ck_assert_ptr_nonnull(c);
	return c;
}

/* Parses the fragment of ps_qr_draw(q, 0, 0, n, ...) into DARK (n x n, row
 * 0 at the top); the number of modules a side. */
static unsigned parse(const char *f, uint8_t **dark)
{
	unsigned n, n2, x, y, w, i;
	const char *p;
	int k;

	ck_assert_int_eq(sscanf(f, "q 1 0 0 1 0 0 cm\n1 g 0 0 %u %u re f\n0 g\n%n", &n, &n2, &k),
	                 2);
	ck_assert_uint_eq(n, n2);
	ck_assert_uint_ge(n, 29);
	*dark = calloc((size_t)n * n, 1);
	ck_assert_ptr_nonnull(*dark);
	p = f + k;
	while (sscanf(p, "%u %u %u 1 re%n", &x, &y, &w, &k) == 3) {
		ck_assert_uint_gt(w, 0);
		ck_assert_uint_le(x + w, n - PS_QR_QUIET);
		ck_assert_uint_ge(x, PS_QR_QUIET);
		ck_assert_uint_ge(y, PS_QR_QUIET);
		ck_assert_uint_lt(y, n - PS_QR_QUIET);
		/* maximal runs: neither neighbour is dark yet, none overlaps */
		ck_assert(!(*dark)[(size_t)(n - 1 - y) * n + x - 1]);
		ck_assert(!(*dark)[(size_t)(n - 1 - y) * n + x + w]);
		for (i = 0; i < w; i++) {
			ck_assert(!(*dark)[(size_t)(n - 1 - y) * n + x + i]);
			(*dark)[(size_t)(n - 1 - y) * n + x + i] = 1;
		}
		p += k;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	ck_assert_str_eq(p, "f Q\n");
	return n;
}

START_TEST(matrix_as_drawn)
{
	size_t si;
	int level;

	for (si = 0; si < sizeof strings / sizeof *strings; si++) {
		for (level = 0; level < 4; level++) {
			ps_qr *q = NULL;
			ps_buf b = PS_BUF_INIT;
			QRcode *ref = reference(strings[si], level);
			uint8_t *dark = NULL;
			unsigned n, r, c;

			ck_assert_int_eq(ps_qr_encode(ctx, strings[si], strlen(strings[si]),
			                              (enum pdfstamp_qr_level)level, &q), 0);
			ck_assert_uint_eq(ps_qr_modules(q), (unsigned)ref->width + 8);
			ps_qr_draw(q, 0, 0, ps_qr_modules(q), &b);
			ps_buf_putc(&b, '\0');
			ck_assert(!b.oom);
			n = parse((const char *)b.data, &dark);
			ck_assert_uint_eq(n, ps_qr_modules(q));
			for (r = 0; r < n; r++) {
				for (c = 0; c < n; c++) {
					int want = r >= 4 && c >= 4 && r < n - 4 && c < n - 4 &&
					           (ref->data[(r - 4) * ref->width + c - 4] & 1);
					ck_assert_msg(dark[r * n + c] == want, "string %zu level "
					              "%d: module %u,%u", si, level, r, c);
				}
			}
			free(dark);
			QRcode_free(ref);
			ps_buf_free(&b);
			ps_qr_free(q);
		}
	}
}
END_TEST

START_TEST(placement)
{
	const char *want = "q 2 0 0 2 10.5 20.25 cm\n1 g 0 0 29 29 re f\n0 g\n";
	ps_qr *q = NULL;
	ps_buf b = PS_BUF_INIT;

	ck_assert_int_eq(ps_qr_encode(ctx, "HELLO", 5, PDFSTAMP_QR_M, &q), 0);
	ck_assert_uint_eq(ps_qr_modules(q), 29); /* version 1 and the quiet zone */
	ps_qr_draw(q, 10.5, 20.25, 58, &b);
	ps_buf_putc(&b, '\0');
	ck_assert_msg(strncmp((const char *)b.data, want, strlen(want)) == 0, "got %.44s",
	              (const char *)b.data);
	ps_buf_free(&b);
	ps_qr_free(q);
	ps_qr_free(NULL);
}
END_TEST

START_TEST(limits)
{
	static const size_t cap[4] = {2953, 2331, 1663, 1273};
	char *s = malloc(3000), want[64];
	int level;

	ck_assert_ptr_nonnull(s);
	for (level = 0; level < 4; level++) {
		enum pdfstamp_qr_level lv = (enum pdfstamp_qr_level)level;
		ps_qr *q = NULL;
		/* ASCII: cap bytes fit (version 40), one more does not */
		memset(s, 'a', cap[level] + 1);
		ck_assert_int_eq(ps_qr_encode(ctx, s, cap[level], lv, &q), 0);
		ck_assert_uint_eq(ps_qr_modules(q), 177 + 8);
		ps_qr_free(q);
		q = NULL;
		ck_assert_int_eq(ps_qr_encode(ctx, s, cap[level] + 1, lv, &q), PDFSTAMP_E_USAGE);
		ck_assert_ptr_null(q);
		snprintf(want, sizeof want, "at most %zu bytes of ASCII", cap[level]);
		ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), want));
		/* not ASCII: the ECI header takes one byte */
		memcpy(s, "\xc3\xa9", 2);
		ck_assert_int_eq(ps_qr_encode(ctx, s, cap[level] - 1, lv, &q), 0);
		ps_qr_free(q);
		q = NULL;
		ck_assert_int_eq(ps_qr_encode(ctx, s, cap[level], lv, &q), PDFSTAMP_E_USAGE);
		snprintf(want, sizeof want, "at most %zu bytes of UTF-8", cap[level] - 1);
		ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), want));
	}
	free(s);
}
END_TEST

START_TEST(bad_strings)
{
	static const char *const bad[] = {"\xff", "ab\xc3", "\xed\xa0\x80", "\xc0\xaf", "a\x80"};
	ps_qr *q = NULL;
	size_t i;

	ck_assert_int_eq(ps_qr_encode(ctx, "", 0, PDFSTAMP_QR_M, &q), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_qr_encode(ctx, NULL, 0, PDFSTAMP_QR_M, &q), PDFSTAMP_E_USAGE);
	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_int_eq(ps_qr_encode(ctx, bad[i], strlen(bad[i]), PDFSTAMP_QR_M, &q),
		                 PDFSTAMP_E_USAGE);
		ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "not valid UTF-8"));
	}
	ck_assert_int_eq(ps_qr_encode(ctx, "a", 1, (enum pdfstamp_qr_level)4, &q),
	                 PDFSTAMP_E_USAGE);
	ck_assert_int_eq(ps_qr_encode(ctx, "a", 1, (enum pdfstamp_qr_level)-1, &q),
	                 PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(q);
}
END_TEST

/* ---- through pdfstamp_stamp ---------------------------------------------- */

/* Stamps samples/r6-table.pdf with SO into OUT; the return code. */
static int stamp(const struct pdfstamp_stamp_opts *so, const char *out)
{
	struct pdfstamp_write_opts wo = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	pdfstamp_doc *doc = NULL;
	int rc;

	wo.output = out;
	unlink(out);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, TEST_SRCDIR "/../samples/r6-table.pdf", 0),
	                 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0), 0);
	rc = pdfstamp_stamp(doc, so, &wo, &res);
	if (rc == 0)
		ck_assert_int_eq(res.nobjects, 1);
	pdfstamp_result_clear(&res);
	pdfstamp_doc_close(doc);
	return rc;
}

START_TEST(public_call)
{
	static const uint8_t png[] = { /* 1 x 1, gray */
		0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
		0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00,
		0x00, 0x3a, 0x7e, 0x9b, 0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78,
		0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x48, 0xaf, 0xa4, 0x71, 0x00,
		0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
	};
	struct pdfstamp_stamp_opts so = PDFSTAMP_STAMP_OPTS_INIT;
	char dir[64], out[128], *big;
	int level;

	snprintf(dir, sizeof dir, "/tmp/check_qr.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(out, sizeof out, "%s/out.pdf", dir);
	so.date = "2026-12-05T10:00:00Z";
	so.qr = strings[1];
	for (level = 0; level < 4; level++) {
		so.qr_level = (enum pdfstamp_qr_level)level;
		so.text = level & 1 ? "APPROVED" : NULL;  /* beside the text, and alone */
		ck_assert_int_eq(stamp(&so, out), 0);
		ck_assert_int_eq(access(out, F_OK), 0);
	}
	so.qr_level = (enum pdfstamp_qr_level)7;
	ck_assert_int_eq(stamp(&so, out), PDFSTAMP_E_USAGE);
	ck_assert_int_ne(access(out, F_OK), 0);
	so.qr_level = PDFSTAMP_QR_H;
	big = malloc(1275);
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', 1274);
	big[1274] = '\0';
	so.qr = big;
	ck_assert_int_eq(stamp(&so, out), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "at most 1273 bytes"));
	ck_assert_int_ne(access(out, F_OK), 0);
	free(big);
	so.qr = strings[0];
	so.text = NULL;
	so.image_data = png;
	so.image_len = sizeof png;
	ck_assert_int_eq(stamp(&so, out), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "a QR code and an image need text"));
	ck_assert_int_ne(access(out, F_OK), 0);
	so.text = "SEALED";
	ck_assert_int_eq(stamp(&so, out), 0);
	ck_assert_int_eq(unlink(out), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *qr_suite(void)
{
	Suite *s = suite_create("qr");
	TCase *t = tcase_create("qr");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, matrix_as_drawn);
	tcase_add_test(t, placement);
	tcase_add_test(t, limits);
	tcase_add_test(t, bad_strings);
	tcase_add_test(t, public_call);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(qr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
