/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_rewrite.c - the full rewrite through the library API
 * (pdfstamp_encrypt, pdfstamp_rotate: rewrite.c, its self-check, and
 * pdfstamp_verify: verify.c).
 *
 * A plaintext file written by the test (pdfgen.c: strings in the catalog
 * and an array, a content stream, a binary stream, /Info) is encrypted; the
 * result is rotated to new passwords; the qpdf-made sample with object
 * streams is rotated too.  Each output is re-opened with the new password
 * (the old one must fail) and every object in use is compared, decrypted,
 * with the input's (ps_obj_equal, and the decrypted bytes of every
 * stream).  With the PDFSTAMP_FAULT hook (tests/fault.c), a
 * failed write or rename must leave no output and no temporary file, and
 * an in-place rotation must leave the input as it was; a dry run
 * creates and changes nothing and counts the real rewrite's bytes.  This program's own
 * mmap (below) counts the library's read-only shared file mappings: the
 * self-check reads its output back and never maps it.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "cpu.h"
#include "pdfgen.h"
#include "seqread.h"

#define U1 "first user"
#define O1 "first owner"
#define U2 "second user \xc3\xa9"
#define O2 "second owner"

static char dir[64], plain[160], enc1[160], enc2[160];
static ps_ctx *ctx;

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_rewrite-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(plain, sizeof plain, "%s/plain.pdf", dir);
	snprintf(enc1, sizeof enc1, "%s/enc1.pdf", dir);
	snprintf(enc2, sizeof enc2, "%s/enc2.pdf", dir);
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
}

static void teardown(void)
{
	pdfstamp_ctx_free(ctx);
	pg_rmdir(dir);
}

static int file_contains(const char *path, const char *needle)
{
	size_t n, k = strlen(needle), i;
	uint8_t *p = pg_slurp(path, &n);
	int found = 0;

	for (i = 0; !found && i + k <= n; i++)
		found = memcmp(p + i, needle, k) == 0;
	free(p);
	return found;
}

/* The names in DIR other than . and .., counted. */
static int dir_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* The library is linked into this program, so its mmap calls land here:
 * read-only shared mappings of a file are counted, then passed on. */
static int shared_ro_maps;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*next)(void *, size_t, int, int, int, off_t);

	*(void **)&next = dlsym(RTLD_NEXT, "mmap");
	if (fd >= 0 && prot == PROT_READ && (flags & MAP_SHARED))
		shared_ro_maps++;
	return next(addr, len, prot, flags, fd, off);
}

/* Catalog 1, page tree 2, pages 3 and 4, a content stream 5, /Info 6, an
 * image 7, a binary stream 8 and an array of strings 9. */
static void make_plain(void)
{
	static const char content[] = "BT /F1 24 Tf 72 700 Td (CONTENT-MARKER page one) Tj ET";
	uint8_t bin[300];
	pg p;
	size_t i;

	for (i = 0; i < sizeof bin; i++)
		bin[i] = (uint8_t)(i * 7);
	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R/Lang(en-GB)/Names<</Dests<</Names[(chapter-one)[3 0 R/Fit]]>>>>>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 0 R 4 0 R]/Count 2/MediaBox[0 0 612 792]>>");
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/Contents 5 0 R>>");
	pg_obj(&p, 4, 0, "<</Type/Page/Parent 2 0 R/Rotate 90/Annots[]>>");
	pg_stream(&p, 5, "", content, sizeof content - 1);
	pg_obj(&p, 6, 0, "<</Title(STRING-MARKER title)/Author<414243>/Keywords[(a)(b)]>>");
	pg_stream(&p, 7, "/Type/XObject/Subtype/Image/Width 10/Height 10/BitsPerComponent 8/ColorSpace/DeviceGray"
	            "/Filter/ASCIIHexDecode", "00ff", 4);
	pg_stream(&p, 8, "/Note(binary payload)", bin, sizeof bin);
	pg_obj(&p, 9, 0, "[(STRING-MARKER in an array) 1 2.5 /Name true null <</Deep[(deeper)]>>]");
	pg_save_table(&p, "/Info 6 0 R/ID[<00112233445566778899aabbccddeeff><00112233445566778899aabbccddeeff>]", dir, "plain.pdf");
}

static pdfstamp_doc *open_doc(const char *path, const char *pw)
{
	pdfstamp_doc *d = NULL;

	ck_assert_int_eq(pdfstamp_doc_open(ctx, &d, path, 0), 0);
	if (pw)
		ck_assert_int_eq(pdfstamp_doc_auth(d, pw, strlen(pw), 0), 0);
	return d;
}

static void rw_opts(struct pdfstamp_rewrite_opts *o, const char *out, const char *user, const char *owner)
{
	o->output = out;
	o->user_password = user;
	o->user_len = strlen(user);
	o->owner_password = owner;
	o->owner_len = strlen(owner);
	o->jobs = 2;
}

/* The number of the trailer's /Encrypt object, 0 if none. */
static uint32_t encrypt_num(ps_doc *d)
{
	ps_obj *e = ps_dict_get(ps_xref_trailer(ps_doc_xref(d)), "Encrypt");

	return e && e->kind == PS_REF ? e->u.ref.num : 0;
}

/* Object NUM of A and of B: equal values, and equal decrypted bytes for
 * streams.  The catalog (ROOT) is the one object the rewrite changes: it
 * gains /Extensions /ADBE << /BaseVersion /1.7 /ExtensionLevel 8 >>, the
 * extension that AES-256 (R6) belongs to; every other key stays. */
static void same_object(ps_doc *a, ps_doc *b, uint32_t num, int root)
{
	ps_obj *x = NULL, *y = NULL;
	ps_buf dx = PS_BUF_INIT, dy = PS_BUF_INIT;

	ck_assert_msg(ps_doc_load(a, num, &x) == 0 && x, "object %u of the input: %s", num, pdfstamp_ctx_errmsg(ctx));
	ck_assert_msg(ps_doc_load(b, num, &y) == 0 && y, "object %u of the output: %s", num, pdfstamp_ctx_errmsg(ctx));
	if (root) {
		ps_obj *adbe = ps_dict_get(ps_dict_get(y, "Extensions"), "ADBE");
		int64_t level = 0;
		ck_assert_int_eq(x->kind, PS_DICT);
		ck_assert(ps_obj_is_name(ps_dict_get(adbe, "BaseVersion"), "1.7"));
		ck_assert_int_eq(ps_obj_int(ps_dict_get(adbe, "ExtensionLevel"), &level), 0);
		ck_assert_int_eq(level, 8);
		ck_assert_int_eq(ps_dict_put(x, "Extensions", ps_obj_copy(ps_dict_get(y, "Extensions"))), 0);
	}
	ck_assert_msg(ps_obj_equal(x, y, x->kind == PS_STREAM), "object %u differs", num);
	if (x->kind == PS_STREAM) {
		ck_assert_int_eq(y->kind, PS_STREAM);
		ck_assert_int_eq(ps_doc_stream_data(a, num, x, 0, &dx), 0);
		ck_assert_int_eq(ps_doc_stream_data(b, num, y, 0, &dy), 0);
		ck_assert_msg(dx.len == dy.len && memcmp(dx.data, dy.data, dx.len) == 0, "stream %u differs", num);
	}
	ps_buf_free(&dx);
	ps_buf_free(&dy);
	ps_obj_free(x);
	ps_obj_free(y);
}

/* Every object in use of IN is in OUT with the same decrypted value, but
 * for IN's /Encrypt and the chain's xref streams; OUT has nothing else
 * but its own /Encrypt and xref stream.  Returns the objects compared. */
static int same_content(ps_doc *in, ps_doc *out)
{
	uint32_t num, ein = encrypt_num(in), eout = encrypt_num(out);
	const ps_xref *xin = ps_doc_xref(in), *xout = ps_doc_xref(out);
	ps_obj *root = NULL, *ref = NULL;
	int n = 0;

	ck_assert_int_eq(ps_doc_catalog(in, PS_CATALOG_INDIRECT, &root, &ref), 0);
	ck_assert_int_eq(ps_xref_load_all(in), 0);
	ck_assert_int_eq(ps_xref_load_all(out), 0);
	for (num = ps_xref_next(xin, 0); num; num = ps_xref_next(xin, num)) {
		if (num == ein || ps_doc_is_xref_stream(in, num))
			continue;
		ck_assert_msg(num != eout, "object %u is the output's /Encrypt", num);
		same_object(in, out, num, num == ref->u.ref.num);
		n++;
	}
	for (num = ps_xref_next(xout, 0); num; num = ps_xref_next(xout, num)) {
		if (num == eout || ps_doc_is_xref_stream(out, num))
			continue;
		ck_assert_msg(ps_xref_type(xin, num) != 0 && num != ein, "object %u is new in the output", num);
	}
	return n;
}

static int64_t p_of(pdfstamp_doc *d)
{
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	int64_t p;

	ck_assert_int_eq(pdfstamp_doc_info(d, &info), 0);
	p = info.p;
	pdfstamp_info_clear(&info);
	return p;
}

static void check_password_fails(const char *path, const char *pw)
{
	pdfstamp_doc *d = open_doc(path, NULL);

	ck_assert_int_eq(pdfstamp_doc_auth(d, pw, strlen(pw), 0), PDFSTAMP_E_PASSWORD);
	pdfstamp_doc_close(d);
}

/* PLAIN encrypted to ENC1 with U1 / O1 and every permission. */
static void encrypt_plain(void)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_rewrite_stats st = PDFSTAMP_REWRITE_STATS_INIT;
	pdfstamp_doc *d;

	make_plain();
	d = open_doc(plain, NULL);
	rw_opts(&o, enc1, U1, O1);
	ck_assert_int_eq(pdfstamp_encrypt(d, &o, &st), 0);
	ck_assert_int_eq(st.objects, 10); /* 9 objects and the new /Encrypt */
	ck_assert_int_eq(st.streams, 3);
	pdfstamp_doc_close(d);
}

/* A progress callback's calls, and the last figures it was given. */
struct progress_log {
	int calls;
	int64_t done, total;
};

static void log_progress(void *ud, int64_t done, int64_t total)
{
	struct progress_log *pl = ud;

	pl->calls++;
	pl->done = done;
	pl->total = total;
}

START_TEST(encrypt_plaintext)
{
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT;
	const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	pdfstamp_doc *in, *out;

	encrypt_plain();
	ck_assert(file_contains(plain, "CONTENT-MARKER"));
	ck_assert(file_contains(plain, "STRING-MARKER"));
	ck_assert(!file_contains(enc1, "CONTENT-MARKER"));
	ck_assert(!file_contains(enc1, "STRING-MARKER"));
	ck_assert(!file_contains(enc1, "binary payload"));
	check_password_fails(enc1, "wrong");
	check_password_fails(enc1, "");
	in = open_doc(plain, NULL);
	out = open_doc(enc1, U1);
	ck_assert_int_eq(pdfstamp_doc_is_encrypted(out), 1);
	ck_assert_int_eq(same_content(in, out), 9);
	ck_assert_int_eq(p_of(out), -4); /* a plaintext input keeps every permission */
	ck_assert_int_eq(pdfstamp_verify(out, &vo, &rep), 0);
	ck_assert_int_eq(rep.objects, 10);
	ck_assert_int_eq(rep.streams, 3);
	pdfstamp_doc_close(out);
	out = open_doc(enc1, O1);
	ck_assert_int_eq(same_content(in, out), 9);
	/* encrypt refuses what is encrypted already, rotate what is not */
	{
		struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
		rw_opts(&o, enc2, U2, O2);
		ck_assert_int_eq(pdfstamp_encrypt(out, &o, NULL), PDFSTAMP_E_USAGE);
		ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), PDFSTAMP_E_USAGE);
		ck_assert_int_eq(access(enc2, F_OK), -1);
	}
	/* the figure structs are versioned too: an unknown version is refused
	 * before anything is written */
	{
		struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
		struct pdfstamp_rewrite_stats st = PDFSTAMP_REWRITE_STATS_INIT;
		struct pdfstamp_verify_report r2 = PDFSTAMP_VERIFY_REPORT_INIT;
		struct pdfstamp_verify_opts vo2 = PDFSTAMP_VERIFY_OPTS_INIT;
		struct progress_log pl = {0, 0, 0};

		rw_opts(&o, enc2, U2, O2);
		st.version = PDFSTAMP_REWRITE_STATS_VERSION + 1;
		ck_assert_int_eq(pdfstamp_rotate(out, &o, &st), PDFSTAMP_E_USAGE);
		ck_assert_int_eq(access(enc2, F_OK), -1);
		r2.version = 0;
		ck_assert_int_eq(pdfstamp_verify(out, &vo, &r2), PDFSTAMP_E_USAGE);
		r2.version = PDFSTAMP_VERIFY_REPORT_VERSION;
		/* the options: required, versioned, and their callback called */
		ck_assert_int_eq(pdfstamp_verify(out, NULL, &r2), PDFSTAMP_E_USAGE);
		vo2.version = PDFSTAMP_VERIFY_OPTS_VERSION + 1;
		ck_assert_int_eq(pdfstamp_verify(out, &vo2, &r2), PDFSTAMP_E_USAGE);
		ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "verify options of an unknown version");
		vo2.version = PDFSTAMP_VERIFY_OPTS_VERSION;
		vo2.progress = log_progress;
		vo2.progress_ud = &pl;
		ck_assert_int_eq(pdfstamp_verify(out, &vo2, &r2), 0);
		ck_assert_int_ge(pl.calls, 1);
		ck_assert_int_gt(pl.total, 0);
		ck_assert_int_eq(pl.done, pl.total); /* the last call: all done */
		ck_assert_int_eq(pdfstamp_verify(out, &vo, &r2), 0);
		ck_assert_int_eq(pdfstamp_verify(out, &vo, &r2), 0); /* reusable */
		ck_assert_int_eq(r2.version, PDFSTAMP_VERIFY_REPORT_VERSION);
		ck_assert_int_eq(r2.objects, 10);
	}
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
}
END_TEST

/* ps_rwcheck_run of the output at PATH against IN, its segment buffers
 * from POOL (NULL: its own). */
static int check_pool(pdfstamp_doc *in, const char *path, const char *owner, size_t owner_len,
                      uint32_t enc, int jobs, const ps_rwoff *sums, size_t nsums, struct ps_segpool *pool)
{
	ps_rwcheck c;

	memset(&c, 0, sizeof c);
	c.path = path;
	c.owner = owner;
	c.owner_len = owner_len;
	c.enc_num = enc;
	c.jobs = jobs;
	c.sums = sums;
	c.nsums = nsums;
	c.pool = pool;
	return ps_rwcheck_run(in, &c);
}

#define check_out(in, path, owner, owner_len, dropped, ndropped, enc, jobs, sums, nsums) \
	check_pool(in, path, owner, owner_len, enc, jobs, sums, nsums, NULL)

/* A pool whose buffers hold IN's bytes: IN read through by a reader of
 * its own, as the rewrite's reader leaves its pool to the self-check. */
static struct ps_segpool *input_pool(pdfstamp_doc *in)
{
	ps_seqread r;
	ps_seq_obj so;
	struct ps_segpool *pool;
	int n = 0;

	ck_assert_int_eq(ps_seq_open(&r, in, NULL, NULL, NULL), 0);
	while (ps_seq_next(&r, &so) == 1) {
		n += so.seg != NULL;
		ps_seq_seg_release(so.seg);
	}
	ck_assert_int_gt(n, 0);
	pool = ps_seq_pool(&r);
	ps_seq_close(&r);
	return pool;
}

/* The self-check (rwcheck.c) on a good and on a damaged output: the last
 * byte of the second-to-last block of stream 8's ciphertext is flipped by
 * 0x80, which flips the last padding byte of its plaintext to a value
 * above 16 (ISO 32000-2 7.6.3.1: padding 1..16), so a real decryption
 * must see it. */
START_TEST(self_check_sees_damage)
{
	char bad[192];
	pdfstamp_doc *in, *out;
	ps_obj *o = NULL;
	int64_t len = 0;
	uint32_t enc;
	uint8_t *p;
	size_t n;
	FILE *f;

	encrypt_plain();
	in = open_doc(plain, NULL);
	ck_assert_int_eq(ps_xref_load_all(in), 0); /* as the rewrite has it */
	out = open_doc(enc1, O1);
	enc = encrypt_num(out);
	ck_assert_uint_ne(enc, 0);
	ck_assert_int_eq(ps_doc_load(out, 8, &o), 0);
	ck_assert_int_eq(ps_obj_int(ps_dict_get(o, "Length"), &len), 0);
	ck_assert(len >= 48 && len % 16 == 0); /* IV and at least two blocks */
	p = pg_slurp(enc1, &n);
	ck_assert((size_t)(o->u.stm.off + len) <= n);
	p[o->u.stm.off + len - 17] ^= 0x80;
	snprintf(bad, sizeof bad, "%s/bad.pdf", dir);
	ck_assert_ptr_nonnull(f = fopen(bad, "wb"));
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	free(p);
	ps_obj_free(o);
	ck_assert_msg(check_out(in, enc1, O1, strlen(O1), NULL, 0, enc, 2, NULL, 0) == 0, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(check_out(in, bad, O1, strlen(O1), NULL, 0, enc, 2, NULL, 0), PDFSTAMP_E_INTERNAL);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "self-check") != NULL, "%s", pdfstamp_ctx_errmsg(ctx));
	/* the wrong password does not pass either */
	ck_assert_int_lt(check_out(in, enc1, U1 "x", strlen(U1) + 1, NULL, 0, enc, 1, NULL, 0), 0);
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
}
END_TEST

/* rwcheck.c note 8: CBC lets a stream whose first plaintext block is off
 * (here: a bit of its IV flipped) decrypt with sound padding, so the
 * checks without sums pass it; with the sums of what was encrypted (taken
 * here from the good output) the self-check sees it, and a summed stream
 * that the output does not have is seen too. */
START_TEST(self_check_compares_plaintext)
{
	char bad[192];
	pdfstamp_doc *in, *out;
	const ps_xref *xout;
	struct ps_doc_security os;
	ps_rwoff rows[64];
	struct ps_segpool *pool;
	size_t nrows = 0, k, n;
	ps_obj *o = NULL;
	uint32_t enc, num;
	uint8_t *p;
	FILE *f;
	int streams = 0;

	encrypt_plain();
	in = open_doc(plain, NULL);
	ck_assert_int_eq(ps_xref_load_all(in), 0);
	out = open_doc(enc1, O1);
	enc = encrypt_num(out);
	ck_assert_int_eq(ps_xref_load_all(out), 0);
	xout = ps_doc_xref(out);
	ps_doc_security(out, &os);
	for (num = ps_xref_next(xout, 0); num; num = ps_xref_next(xout, num)) {
		ps_buf d = PS_BUF_INIT;
		ck_assert_uint_lt(nrows, 64);
		memset(&rows[nrows], 0, sizeof rows[nrows]);
		rows[nrows].num = num;
		ck_assert_int_eq(ps_doc_load(out, num, &o), 0);
		if (num != enc && o && o->kind == PS_STREAM && ps_sec_stream_encrypted(os.sec, o)) {
			ck_assert_int_eq(ps_doc_stream_data(out, num, o, 0, &d), 0);
			rows[nrows].summed = 1;
			rows[nrows].sum = ps_rwcheck_sum(ps_cpu_probe(), d.data, d.len);
			streams++;
		}
		ps_buf_free(&d);
		ps_obj_free(o);
		nrows++;
	}
	ck_assert_int_ge(streams, 3);
	ck_assert_int_eq(ps_doc_load(out, 8, &o), 0);
	p = pg_slurp(enc1, &n);
	p[o->u.stm.off + 3] ^= 0x01; /* the IV: the first plaintext block alone changes */
	ps_obj_free(o);
	snprintf(bad, sizeof bad, "%s/iv.pdf", dir);
	ck_assert_ptr_nonnull(f = fopen(bad, "wb"));
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	free(p);
	ck_assert_msg(check_out(in, enc1, O1, strlen(O1), NULL, 0, enc, 2, rows, nrows) == 0, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(check_out(in, bad, O1, strlen(O1), NULL, 0, enc, 2, NULL, 0), 0);
	ck_assert_int_eq(check_out(in, bad, O1, strlen(O1), NULL, 0, enc, 2, rows, nrows), PDFSTAMP_E_INTERNAL);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "object 8 decrypts to other bytes") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	/* the same with the buffers of a reader of the input */
	pool = input_pool(in);
	ck_assert_msg(check_pool(in, enc1, O1, strlen(O1), enc, 2, rows, nrows, pool) == 0, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ck_assert_int_eq(check_pool(in, bad, O1, strlen(O1), enc, 2, rows, nrows, pool), PDFSTAMP_E_INTERNAL);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "object 8 decrypts to other bytes") != NULL, "%s",
	              pdfstamp_ctx_errmsg(ctx));
	ps_seq_pool_unref(pool);
	for (k = 0; k < nrows && rows[k].num != 1; k++)
		;
	ck_assert_uint_lt(k, nrows);
	rows[k].summed = 1; /* the catalog, which is no stream */
	ck_assert_int_eq(check_out(in, enc1, O1, strlen(O1), NULL, 0, enc, 2, rows, nrows),
	                 PDFSTAMP_E_INTERNAL);
	ck_assert_msg(strstr(pdfstamp_ctx_errmsg(ctx), "1 of the") != NULL, "%s", pdfstamp_ctx_errmsg(ctx));
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
}
END_TEST

/* ps_rwcheck_sum sees any one changed word, and the length (with this
 * host's kernel; both kernels give the same sums: the next test). */
START_TEST(rewrite_sum_sees_changes)
{
	const unsigned cpu = ps_cpu_probe();
	uint8_t b[203], c[512];
	uint64_t h;
	size_t i, n;
	int bit;

	for (i = 0; i < sizeof b; i++)
		b[i] = (uint8_t)(i * 37 + 11);
	for (n = 0; n <= sizeof b; n += n < 40 ? 1 : 27) {
		h = ps_rwcheck_sum(cpu, b, n);
		ck_assert(ps_rwcheck_sum(cpu, b, n) == h);
		if (n < sizeof b)
			ck_assert(ps_rwcheck_sum(cpu, b, n + 1) != h);
		for (i = 0; i < n; i++)
			for (bit = 0; bit < 8; bit += 7) {
				b[i] ^= (uint8_t)(1u << bit);
				ck_assert_msg(ps_rwcheck_sum(cpu, b, n) != h,
				              "n %zu, byte %zu, bit %d", n, i, bit);
				b[i] ^= (uint8_t)(1u << bit);
			}
	}
	/* two words swapped within a lane (word 0 of two 128-byte blocks),
	 * and between lanes (words 0 and 1) */
	for (i = 0; i < sizeof c; i++)
		c[i] = (uint8_t)(i * 53 + 5);
	h = ps_rwcheck_sum(cpu, c, sizeof c);
	{
		uint8_t t[4];
		memcpy(t, c, 4);
		memcpy(c, c + 128, 4);
		memcpy(c + 128, t, 4);
		ck_assert(ps_rwcheck_sum(cpu, c, sizeof c) != h);
		memcpy(c + 128, c, 4);
		memcpy(c, t, 4);
		memcpy(t, c, 4);
		memcpy(c, c + 4, 4);
		memcpy(c + 4, t, 4);
		ck_assert(ps_rwcheck_sum(cpu, c, sizeof c) != h);
	}
}
END_TEST

/* ps_rwcheck_sum (vectors, built for AVX2 and the baseline: each kernel
 * this host runs) against its definition computed lane by lane here
 * (rwcheck.c note 8): 32 lanes of 32 bits, word i of a 128-byte block to
 * lane i, a partial block's words to lanes 0, 1, ..., a partial word
 * zero-padded; lane l times SUM_K1 + 2 l SUM_K2, plus n times SUM_K3,
 * then the final mix.  Every length to 1,100 bytes and a few long ones,
 * at every alignment of the first byte to 32. */
static uint64_t sum_reference(const uint8_t *p, size_t n)
{
	const uint64_t k1 = 0x9e3779b97f4a7c15ull, k2 = 0xc2b2ae3d27d4eb4full, k3 = 0x165667b19e3779f9ull;
	uint32_t lane[32], x;
	uint64_t h;
	size_t i, w = (n + 3) / 4;
	int l;

	for (l = 0; l < 32; l++)
		lane[l] = (uint32_t)(k3 >> 32) + (uint32_t)l * 0x9e3779b1u;
	for (i = 0; i < w; i++) {
		size_t full = n / 128 * 32; /* words in whole blocks */
		x = 0;
		memcpy(&x, p + 4 * i, n - 4 * i < 4 ? n - 4 * i : 4);
		l = i < full ? (int)(i % 32) : (int)(i - full);
		lane[l] += x * 0x85ebca77u;
		lane[l] = ((lane[l] << 13) | (lane[l] >> 19)) * 0x9e3779b1u;
	}
	h = (uint64_t)n * k3;
	for (l = 0; l < 32; l++)
		h += (uint64_t)lane[l] * (k1 + 2 * (uint64_t)l * k2);
	h ^= h >> 33;
	h *= k2;
	h ^= h >> 29;
	h *= k1;
	h ^= h >> 32;
	return h;
}

START_TEST(rewrite_sum_matches_definition)
{
	static const size_t longer[] = {4096, 65536 + 3, 1000003};
	uint64_t rng = 0x243f6a8885a308d3ull;
	uint8_t *b = malloc(1000003 + 32);
	size_t i, n, a;

	/* the baseline, then AVX2 where this CPU has it */
	const unsigned kernels[] = {0, ps_cpu_probe() & PS_CPU_AVX2};
	size_t k;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < 1000003 + 32; i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		b[i] = (uint8_t)rng;
	}
	for (k = 0; k < 2 && (k == 0 || kernels[k]); k++) {
		unsigned cpu = kernels[k];
		for (n = 0; n <= 1100; n++)
			for (a = 0; a < 32; a += n < 300 ? 1 : 13)
				ck_assert_msg(ps_rwcheck_sum(cpu, b + a, n) ==
				              sum_reference(b + a, n),
				              "kernel %#x: %zu bytes at +%zu", cpu, n, a);
		for (i = 0; i < sizeof longer / sizeof *longer; i++)
			ck_assert_msg(ps_rwcheck_sum(cpu, b + 1, longer[i]) ==
			              sum_reference(b + 1, longer[i]),
			              "kernel %#x: %zu bytes", cpu, longer[i]);
	}
	free(b);
}
END_TEST

START_TEST(rotate_new_passwords)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT;
	const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	pdfstamp_doc *in, *out;
	size_t n1, n1b;
	uint8_t *b1, *b1b;

	encrypt_plain();
	b1 = pg_slurp(enc1, &n1);
	in = open_doc(enc1, O1);
	rw_opts(&o, enc2, U2, O2);
	ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), 0);
	/* the input is untouched */
	b1b = pg_slurp(enc1, &n1b);
	ck_assert(n1 == n1b && memcmp(b1, b1b, n1) == 0);
	free(b1);
	free(b1b);
	/* the old passwords no longer open the output, the new ones do */
	check_password_fails(enc2, U1);
	check_password_fails(enc2, O1);
	out = open_doc(enc2, O2);
	ck_assert_int_eq(same_content(in, out), 9);
	ck_assert_int_eq(p_of(out), p_of(in));
	ck_assert_int_eq(pdfstamp_verify(out, &vo, &rep), 0);
	pdfstamp_doc_close(out);
	out = open_doc(enc2, U2);
	ck_assert_int_eq(same_content(in, out), 9);
	ck_assert(!file_contains(enc2, "STRING-MARKER"));
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
	/* and back through the plaintext: every object as written */
	in = open_doc(plain, NULL);
	out = open_doc(enc2, U2);
	ck_assert_int_eq(same_content(in, out), 9);
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
}
END_TEST

/* The self-check never maps the output: an I/O error reading a mapping
 * back is a SIGBUS, which a library must not spring on its caller.  Bit
 * 0x200 (once PDFSTAMP_REWRITE_MAP_OUTPUT, which asked for the mapping) is
 * ignored: a program built against an older header still gets a checked
 * rewrite, read back with pread. */
START_TEST(output_never_mapped)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	pdfstamp_doc *in, *out;
	int old_bit;

	encrypt_plain();
	for (old_bit = 0; old_bit <= 1; old_bit++) {
		in = open_doc(enc1, O1);
		rw_opts(&o, enc2, U2, O2);
		o.flags = old_bit ? 0x200 : 0;
		shared_ro_maps = 0;
		ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), 0);
		ck_assert_msg(shared_ro_maps == 0, "flags 0x%x: %d mappings", o.flags, shared_ro_maps);
		out = open_doc(enc2, O2);
		ck_assert_int_eq(same_content(in, out), 9);
		pdfstamp_doc_close(out);
		pdfstamp_doc_close(in);
		ck_assert_int_eq(unlink(enc2), 0);
	}
}
END_TEST

START_TEST(rotate_permissions)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	pdfstamp_doc *in, *out;
	int64_t want;

	encrypt_plain();
	in = open_doc(enc1, O1);
	rw_opts(&o, enc2, U2, O2);
	o.set_permissions = 1;
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "print,copy", &o.permissions), 0);
	want = o.permissions;
	ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), 0);
	out = open_doc(enc2, U2);
	ck_assert_int_eq(p_of(out), want);
	ck_assert_int_ne(p_of(out), p_of(in));
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
}
END_TEST

START_TEST(rotate_needs_owner)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	pdfstamp_doc *in;

	encrypt_plain();
	in = open_doc(enc1, U1);
	rw_opts(&o, enc2, U2, O2);
	ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), PDFSTAMP_E_PERM);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "rotating the key needs the owner password");
	ck_assert_int_eq(access(enc2, F_OK), -1);
	pdfstamp_doc_close(in);
	in = open_doc(enc1, NULL);
	ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(access(enc2, F_OK), -1);
	pdfstamp_doc_close(in);
	ck_assert_int_eq(dir_entries(), 2); /* plain, enc1 */
}
END_TEST

START_TEST(rotate_object_streams)
{
	/* The qpdf-made sample: object streams and an xref stream. */
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	char sample[512];
	pdfstamp_doc *in, *out;
	int n;

	snprintf(sample, sizeof sample, "%s/../samples/r6-objstm.pdf", TEST_SRCDIR);
	in = open_doc(sample, "sample-owner");
	rw_opts(&o, enc2, U2, O2);
	ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), 0);
	check_password_fails(enc2, "sample-owner");
	check_password_fails(enc2, "sample-user");
	out = open_doc(enc2, U2);
	n = same_content(in, out);
	ck_assert_int_gt(n, 10);
	ck_assert_int_eq(p_of(out), p_of(in));
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
}
END_TEST

/* PDFSTAMP_WRITE_DRY_RUN (rewrite.c note 14): encrypt and rotate, to a
 * file and in place on a read-only document, create nothing and change
 * nothing, and report the size and counts of the real rewrite, which
 * then writes exactly that many bytes. */
START_TEST(dry_run_counts_exactly)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_rewrite_stats dry = PDFSTAMP_REWRITE_STATS_INIT;
	struct pdfstamp_rewrite_stats real = PDFSTAMP_REWRITE_STATS_INIT;
	pdfstamp_doc *in;
	uint8_t *b, *a;
	size_t nb, na;
	struct stat st;

	make_plain();
	in = open_doc(plain, NULL);
	rw_opts(&o, enc1, U1, O1);
	o.flags = PDFSTAMP_WRITE_DRY_RUN;
	ck_assert_int_eq(pdfstamp_encrypt(in, &o, &dry), 0);
	ck_assert_int_eq(access(enc1, F_OK), -1);
	ck_assert_int_eq(dir_entries(), 1); /* plain: no temporary file */
	o.flags = 0;
	ck_assert_int_eq(pdfstamp_encrypt(in, &o, &real), 0);
	pdfstamp_doc_close(in);
	ck_assert_int_eq(stat(enc1, &st), 0);
	ck_assert_int_eq(dry.bytes_written, (int64_t)st.st_size);
	ck_assert_int_eq(dry.objects, real.objects);
	ck_assert_int_eq(dry.streams, real.streams);
	ck_assert_int_eq(dry.strings, real.strings);
	/* rotate in place, the document opened read-only: no lock needed */
	b = pg_slurp(enc1, &nb);
	in = open_doc(enc1, O1);
	rw_opts(&o, NULL, U2, O2);
	o.flags = PDFSTAMP_WRITE_IN_PLACE | PDFSTAMP_WRITE_DRY_RUN;
	ck_assert_int_eq(pdfstamp_rotate(in, &o, &dry), 0);
	pdfstamp_doc_close(in);
	a = pg_slurp(enc1, &na);
	ck_assert_msg(na == nb && memcmp(a, b, nb) == 0, "the dry run changed the file");
	ck_assert_int_eq(dir_entries(), 2);
	free(a);
	in = open_doc(enc1, O1);
	rw_opts(&o, enc2, U2, O2);
	o.flags = 0;
	ck_assert_int_eq(pdfstamp_rotate(in, &o, &real), 0);
	pdfstamp_doc_close(in);
	ck_assert_int_eq(stat(enc2, &st), 0);
	ck_assert_int_eq(dry.bytes_written, (int64_t)st.st_size);
	ck_assert_int_eq(real.bytes_written, (int64_t)st.st_size);
	/* the refusals come first: the user password, -o into a directory */
	in = open_doc(enc1, U1);
	o.flags = PDFSTAMP_WRITE_DRY_RUN;
	ck_assert_int_eq(pdfstamp_rotate(in, &o, &dry), PDFSTAMP_E_PERM);
	pdfstamp_doc_close(in);
	in = open_doc(enc1, O1);
	rw_opts(&o, dir, U2, O2);
	ck_assert_int_eq(pdfstamp_rotate(in, &o, &dry), PDFSTAMP_E_IO);
	pdfstamp_doc_close(in);
	ck_assert_int_eq(dir_entries(), 3); /* plain, enc1, enc2 */
	free(b);
}
END_TEST

/* A rotation to ENC2 (or in place) with PDFSTAMP_FAULT=SPEC fails and
 * leaves nothing behind. */
static void rotate_fails(const char *spec, int in_place)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	pdfstamp_doc *in;
	size_t n1, n1b;
	uint8_t *b1, *b1b;
	int rc;

	b1 = pg_slurp(enc1, &n1);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &in, enc1, in_place ? PDFSTAMP_OPEN_WRITE : 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(in, O1, strlen(O1), 0), 0);
	rw_opts(&o, in_place ? NULL : enc2, U2, O2);
	if (in_place)
		o.flags = PDFSTAMP_WRITE_IN_PLACE;
	ck_assert_int_eq(setenv("PDFSTAMP_FAULT", spec, 1), 0);
	rc = pdfstamp_rotate(in, &o, NULL);
	unsetenv("PDFSTAMP_FAULT");
	ck_assert_msg(rc < 0, "%s: the rotation succeeded", spec);
	pdfstamp_doc_close(in);
	ck_assert_int_eq(access(enc2, F_OK), -1);
	ck_assert_int_eq(dir_entries(), 2); /* plain, enc1: no temporary file */
	b1b = pg_slurp(enc1, &n1b);
	ck_assert_msg(n1 == n1b && memcmp(b1, b1b, n1) == 0, "%s: the input changed", spec);
	free(b1);
	free(b1b);
	/* the old password still opens it */
	in = open_doc(enc1, O1);
	pdfstamp_doc_close(in);
}

START_TEST(fault_leaves_no_output)
{
	encrypt_plain();
	rotate_fails("fail:write", 0);
	rotate_fails("fail:fsync", 0);
	rotate_fails("fail:rename", 0);
	rotate_fails("fail:rename", 1);
	rotate_fails("fail:write", 1);
	/* and without the fault the same call works */
	{
		struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
		pdfstamp_doc *in = open_doc(enc1, O1);
		rw_opts(&o, enc2, U2, O2);
		ck_assert_int_eq(pdfstamp_rotate(in, &o, NULL), 0);
		pdfstamp_doc_close(in);
		ck_assert_int_eq(dir_entries(), 3);
	}
}
END_TEST

/* The sequential reader (rewrite.c note 7, seqread.c note 1): objects
 * in the file in descending number order, an old version of object 20 and
 * junk left between objects, a stream with an indirect /Length (the
 * careful way, by the writer), a stream larger than a segment.  Encrypted
 * with two workers, then rotated with one: every object as in the input. */
START_TEST(rewrite_file_order)
{
	static uint8_t big[(5u << 20) + 7];
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_rewrite_stats st = PDFSTAMP_REWRITE_STATS_INIT;
	char order[160];
	uint8_t small[300];
	pdfstamp_doc *in, *out, *out2;
	uint32_t n;
	size_t i;
	pg p;

	for (i = 0; i < sizeof big; i++)
		big[i] = (uint8_t)(i * 131 + (i >> 12));
	for (i = 0; i < sizeof small; i++)
		small[i] = (uint8_t)(i * 7);
	pg_start(&p);
	pg_stream(&p, 30, "/Note(STRING-MARKER big)", big, sizeof big);
	for (n = 29; n >= 21; n--)
		pg_stream(&p, n, "/Note(small)", small, 1 + n * 7);
	pg_obj(&p, 20, 0, "(an old version of object 20)");
	ps_buf_puts(&p.b, "% junk between objects 20 and 20\n");
	pg_obj(&p, 20, 0, "[(STRING-MARKER new version) 20]");
	pg_obj(&p, 12, 0, "17");
	p.off[11] = (int64_t)p.b.len;
	ps_buf_puts(&p.b, "11 0 obj\n<</Length 12 0 R>>\nstream\nCONTENT-MARKER ab\nendstream\nendobj\n");
	pg_obj(&p, 4, 0, "<</Type/Page/Parent 2 0 R/Contents 11 0 R>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[4 0 R]/Count 1>>");
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_save_table(&p, "", dir, "order.pdf");
	snprintf(order, sizeof order, "%s/order.pdf", dir);
	in = open_doc(order, NULL);
	rw_opts(&o, enc1, U1, O1);
	ck_assert_int_eq(pdfstamp_encrypt(in, &o, &st), 0);
	ck_assert_int_eq(st.objects, 17); /* 16 objects and the new /Encrypt */
	ck_assert_int_eq(st.streams, 11);
	ck_assert(!file_contains(enc1, "CONTENT-MARKER"));
	ck_assert(!file_contains(enc1, "STRING-MARKER"));
	out = open_doc(enc1, O1);
	ck_assert_int_eq(same_content(in, out), 16);
	rw_opts(&o, enc2, U2, O2);
	o.jobs = 1;
	ck_assert_int_eq(pdfstamp_rotate(out, &o, NULL), 0);
	out2 = open_doc(enc2, O2);
	ck_assert_int_eq(same_content(in, out2), 16);
	ck_assert_int_eq(same_content(out, out2), 16);
	pdfstamp_doc_close(out2);
	pdfstamp_doc_close(out);
	pdfstamp_doc_close(in);
}
END_TEST

static Suite *rewrite_suite(void)
{
	Suite *s = suite_create("rewrite");
	TCase *tc = tcase_create("pipeline");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, encrypt_plaintext);
	tcase_add_test(tc, self_check_sees_damage);
	tcase_add_test(tc, rotate_new_passwords);
	tcase_add_test(tc, output_never_mapped);
	tcase_add_test(tc, self_check_compares_plaintext);
	tcase_add_test(tc, rewrite_sum_sees_changes);
	tcase_add_test(tc, rewrite_sum_matches_definition);
	tcase_add_test(tc, rotate_permissions);
	tcase_add_test(tc, rotate_needs_owner);
	tcase_add_test(tc, rotate_object_streams);
	tcase_add_test(tc, rewrite_file_order);
	tcase_add_test(tc, fault_leaves_no_output);
	tcase_add_test(tc, dry_run_counts_exactly);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rewrite_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
