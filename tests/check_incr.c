/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_incr.c - the incremental writer (incr.c) and the cross-reference
 * writer (xrefw.c).
 *
 * The writer: begin / alloc / put / set_trailer / commit into a new file
 * and in place, on plaintext files written byte by byte (pdfgen.c) in both
 * xref forms and on samples/r6-table.pdf; the output is re-opened and the
 * new objects, /Prev, /Size, the trailer and the untouched original bytes
 * are checked; numbers that objects of the file name are never handed
 * out, and an object read too late to be looked at is refused at the
 * commit (incr.c note 6).  A failed commit (PDFSTAMP_FAULT: tests/fault.c)
 * must leave the input exactly as it was.  A dry run (incr.c note 7)
 * leaves it too, and reports what the real commit then appends.
 * The xref writer: exact bytes of a classic section with subsections and
 * free entries; an xref stream's /W, /Index and rows; its refusals; and
 * sections it wrote read back by the xref reader.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "xrefw.h"
#include "pdfgen.h"

static const char *dir;
static ps_ctx *ctx;
static ps_doc *doc, *out;
static ps_update up;

/* What the index of D says (doc.h): its sections, newest first, their
 * number, its facts and its newest trailer. */
static const ps_section *sections(ps_doc *d)
{
	int n;

	return ps_xref_sections(ps_doc_xref(d), &n);
}

static int nsections(ps_doc *d)
{
	int n;

	ps_xref_sections(ps_doc_xref(d), &n);
	return n;
}

static struct ps_xref_info xinfo(ps_doc *d)
{
	struct ps_xref_info xi;

	ps_xref_info(ps_doc_xref(d), &xi);
	return xi;
}

static const ps_obj *trailer(ps_doc *d)
{
	return ps_xref_trailer(ps_doc_xref(d));
}

static void setup(void)
{
	dir = pg_tmpdir("check_incr");
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	doc = out = NULL;
	memset(&up, 0, sizeof up);
}

static void teardown(void)
{
	unsetenv("PDFSTAMP_FAULT");
	ps_update_free(&up);
	pdfstamp_doc_close(doc);
	pdfstamp_doc_close(out);
	pdfstamp_ctx_free(ctx);
	pg_rmdir(dir);
}

/* An object from its PDF syntax (owned). */
static ps_obj *obj(const char *text)
{
	size_t pos = 0;
	ps_obj *o = NULL;

	ck_assert_int_eq(ps_parse_obj(ctx, (const uint8_t *)text, strlen(text), &pos, &o), 0);
	ck_assert_ptr_nonnull(o);
	return o;
}

/* Catalog 1, pages 2, page 3 (generation 2): a classic table, or (STREAM)
 * the catalog and pages in object stream 4 and an xref stream 5. */
static char *input(int stream)
{
	pg p;
	pg_ent e[6];

	pg_start(&p);
	if (!stream) {
		pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
		pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 2 R]/Count 1>>");
		pg_obj(&p, 3, 2, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>");
		e[0] = (pg_ent){0, 0, 0, 65535};
		e[1] = pg_used(&p, 1);
		e[2] = pg_used(&p, 2);
		e[3] = pg_used(&p, 3);
		pg_table(&p, e, 4, "<</Size 4/Root 1 0 R>>");
	} else {
		static const char members[] = "1 0 2 30 <</Type/Catalog/Pages 2 0 R>> "
		                              "<</Type/Pages/Kids[3 0 R]/Count 1>>";
		pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>");
		pg_stream(&p, 4, "/Type/ObjStm/N 2/First 9", members, sizeof members - 1);
		e[0] = (pg_ent){0, 0, 0, 65535};
		e[1] = (pg_ent){1, 2, 4, 0};
		e[2] = (pg_ent){2, 2, 4, 1};
		e[3] = pg_used(&p, 3);
		e[4] = pg_used(&p, 4);
		e[5] = (pg_ent){5, 1, 0, 0};
		pg_xref_stream(&p, 5, e, 6, "/Size 6/Root 1 0 R/ID[<00112233445566778899aabbccddeeff><00>]");
	}
	return strdup(pg_save(&p, dir, stream ? "in-stream.pdf" : "in-table.pdf"));
}

static char *path_in(const char *name)
{
	char p[512];

	snprintf(p, sizeof p, "%s/%s", dir, name);
	return strdup(p);
}

/* Adds a new annotation-like object, replaces object 3 and sets /Info. */
static void typical_update(uint32_t *anum, uint32_t *inum)
{
	ps_obj *page;

	*anum = ps_update_alloc(&up);
	*inum = ps_update_alloc(&up);
	ck_assert_uint_ne(*anum, 0);
	ck_assert_uint_eq(*inum, *anum + 1);
	ck_assert_int_eq(ps_update_put(&up, *anum, 0, obj("<</Type/Annot/Subtype/Stamp/Contents(hello)>>")), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &page), 0);
	page = ps_obj_copy(page);
	ck_assert_int_eq(ps_dict_put_ref(page, "Annots", *anum, 0), 0);
	ck_assert_int_eq(ps_update_put(&up, 3, ps_doc_gen(doc, 3), page), 0);
	ck_assert_int_eq(ps_update_put(&up, *inum, 0, obj("<</Title(t)>>")), 0);
	ck_assert_int_eq(ps_update_set_trailer(&up, "Info", ps_new_ref(*inum, 0)), 0);
}

/* The output's first BASE bytes are the input's, byte for byte. */
static void same_prefix(const char *in, const char *outp, size_t base)
{
	size_t ni, no;
	uint8_t *a = pg_slurp(in, &ni), *b = pg_slurp(outp, &no);

	ck_assert_uint_eq(ni, base);
	ck_assert_uint_gt(no, base);
	ck_assert_mem_eq(a, b, base);
	free(a);
	free(b);
}

START_TEST(commit_new_file_table)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	char *in = input(0), *o = path_in("out.pdf");
	uint8_t *before;
	size_t nb, n2;
	uint32_t anum, inum;
	ps_obj *x, *id;
	int64_t prev;

	before = pg_slurp(in, &nb);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
	prev = xinfo(doc).startxref;
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	ck_assert_uint_eq(anum, 4); /* /Size 4, highest in use 3 */
	ck_assert_uint_eq(ps_update_alloc(&up), 6); /* left unused: a gap */
	ck_assert_int_eq(ps_update_put(&up, ps_update_alloc(&up), 0, obj("[7]")), 0);
	ck_assert_int_eq(ps_update_commit(&up, &w, &res), 0);
	ck_assert_int_eq(up.state, PS_UP_DONE);
	ck_assert_int_eq(res.base_length, (int64_t)nb);
	same_prefix(in, o, nb);
	free(pg_slurp(in, &n2));
	ck_assert_uint_eq(n2, nb); /* the input is not touched */

	ck_assert_int_eq(ps_doc_open(ctx, &out, o, 0), 0);
	ck_assert_int_eq(ps_doc_size(out), res.base_length + res.bytes_appended);
	ck_assert_int_eq(xinfo(out).startxref, res.xref_offset);
	ck_assert_int_eq(nsections(out), 2);
	ck_assert_int_eq(sections(out)[0].kind, PDFSTAMP_XREF_TABLE);
	ck_assert_int_eq(sections(out)[0].prev, prev);
	ck_assert_int_eq(xinfo(out).size_key, 8);
	ck_assert_int_eq(ps_xref_load_all(out), 0);
	ck_assert_int_eq(ps_xref_type(ps_doc_xref(out), 6), 0);
	ck_assert_int_eq(ps_doc_lookup(out, anum, &x), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(x, "Subtype"), "Stamp"));
	ck_assert_int_eq(ps_doc_lookup(out, 3, &x), 0);
	ck_assert_ptr_nonnull(ps_dict_get(x, "Annots"));
	ck_assert_uint_eq(ps_doc_gen(out, 3), 2); /* the generation is kept */
	x = ps_dict_get(trailer(out), "Info");
	ck_assert_int_eq(x->kind, PS_REF);
	ck_assert_uint_eq(x->u.ref.num, inum);
	ck_assert_ptr_nonnull(ps_dict_get(trailer(out), "Root"));
	/* no /ID in the input: both halves new */
	id = ps_dict_get(trailer(out), "ID");
	ck_assert_int_eq(ps_array_len(id), 2);
	ck_assert_uint_eq(ps_array_get(id, 0)->u.str.len, 16);
	ck_assert_uint_eq(ps_array_get(id, 1)->u.str.len, 16);
	/* subsections: 3-5, then 7 */
	{
		size_t no;
		uint8_t *b = pg_slurp(o, &no);
		const char *sec = (const char *)b + res.xref_offset;
		b[no] = 0;
		ck_assert_int_eq(strncmp(sec, "xref\n3 3\n", 9), 0);
		ck_assert_ptr_nonnull(strstr(sec, " n\r\n7 1\n"));
		free(b);
	}
	free(before);
	free(in);
	free(o);
	pdfstamp_result_clear(&res);
}
END_TEST

START_TEST(commit_new_file_stream)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	char *in = input(1), *o = path_in("out.pdf");
	uint32_t anum, inum, xnum;
	ps_obj *x, *wa, *idx;
	int64_t prev, base;
	const ps_xent *e;

	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
	prev = xinfo(doc).startxref;
	base = ps_doc_size(doc);
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	ck_assert_uint_eq(anum, 6);
	ck_assert_int_eq(ps_update_commit(&up, &w, &res), 0);
	same_prefix(in, o, (size_t)base);
	xnum = inum + 1; /* the stream's own number comes last */

	ck_assert_int_eq(ps_doc_open(ctx, &out, o, 0), 0);
	ck_assert_int_eq(nsections(out), 2);
	ck_assert_int_eq(sections(out)[0].kind, PDFSTAMP_XREF_STREAM);
	ck_assert_uint_eq(sections(out)[0].stream_num, xnum);
	ck_assert_int_eq(sections(out)[0].prev, prev);
	ck_assert_int_eq(ps_xref_find(out, xnum, &e), 0); /* it lists itself */
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->off, res.xref_offset);
	ck_assert_int_eq(xinfo(out).size_key, xnum + 1);
	/* ID[0] kept, ID[1] new */
	x = ps_dict_get(trailer(out), "ID");
	ck_assert_uint_eq(ps_array_get(x, 0)->u.str.len, 16);
	ck_assert_mem_eq(ps_array_get(x, 0)->u.str.p, "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
	ck_assert_uint_eq(ps_array_get(x, 1)->u.str.len, 16);
	/* /W [1 2 2] for offsets under 64 KiB; /Index [3 1 6 3] */
	wa = ps_dict_get(trailer(out), "W");
	ck_assert_int_eq(ps_array_len(wa), 3);
	ck_assert_int_eq(ps_array_get(wa, 1)->u.i, res.xref_offset > 255 ? 2 : 1);
	ck_assert_int_eq(ps_array_get(wa, 2)->u.i, 2);
	idx = ps_dict_get(trailer(out), "Index");
	ck_assert_int_eq(ps_array_len(idx), 4);
	ck_assert_int_eq(ps_array_get(idx, 0)->u.i, 3);
	ck_assert_int_eq(ps_array_get(idx, 1)->u.i, 1);
	ck_assert_int_eq(ps_array_get(idx, 2)->u.i, 6);
	ck_assert_int_eq(ps_array_get(idx, 3)->u.i, 3);
	ck_assert_int_eq(ps_doc_lookup(out, inum, &x), 0);
	ck_assert_ptr_nonnull(ps_dict_get(x, "Title"));
	ck_assert_int_eq(ps_doc_lookup(out, 1, &x), 0); /* old members still found */
	ck_assert(ps_obj_is_name(ps_dict_get(x, "Type"), "Catalog"));
	free(in);
	free(o);
	pdfstamp_result_clear(&res);
}
END_TEST

START_TEST(commit_in_place)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	char *in = input(0), *j;
	uint8_t *before;
	size_t nb;
	uint32_t anum, inum;
	ps_obj *x;

	before = pg_slurp(in, &nb);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, PDFSTAMP_OPEN_WRITE), 0);
	w.flags = PDFSTAMP_WRITE_IN_PLACE;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	ck_assert_int_eq(ps_update_commit(&up, &w, &res), 0);
	{
		size_t na;
		uint8_t *after = pg_slurp(in, &na);
		ck_assert_uint_eq(na, nb + (size_t)res.bytes_appended);
		ck_assert_mem_eq(after, before, nb);
		free(after);
	}
	j = malloc(strlen(in) + 32);
	sprintf(j, "%s.pdfstamp-journal", in);
	ck_assert_int_ne(access(j, F_OK), 0); /* the journal is gone: committed */
	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(ps_doc_open(ctx, &out, in, 0), 0);
	ck_assert_int_eq(nsections(out), 2);
	ck_assert_int_eq(ps_doc_lookup(out, anum, &x), 0);
	ck_assert_ptr_nonnull(x);
	free(before);
	free(in);
	free(j);
	pdfstamp_result_clear(&res);
}
END_TEST

START_TEST(encrypted_objects_are_encrypted)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char src[512], pw[256], *o = path_in("out.pdf");
	static const char marker[] = "incr-unit-marker-8d1f";
	ps_buf data = PS_BUF_INIT;
	uint32_t snum, tnum;
	uint8_t *bytes;
	size_t n;
	ps_obj *x;
	FILE *f;

	snprintf(src, sizeof src, "%s/../samples/user.pw", TEST_SRCDIR);
	f = fopen(src, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(pw, sizeof pw, f));
	fclose(f);
	pw[strcspn(pw, "\r\n")] = '\0';
	snprintf(src, sizeof src, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, src, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, pw, strlen(pw), 0), 0);
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	snum = ps_update_alloc(&up);
	tnum = ps_update_alloc(&up);
	ck_assert_int_eq(ps_update_put(&up, snum, 0, obj("<</Note(incr-unit-marker-8d1f)>>")), 0);
	x = ps_new_stream(obj("<<>>"), (uint8_t *)strdup(marker), sizeof marker - 1);
	ck_assert_int_eq(ps_update_put(&up, tnum, 0, x), 0);
	ck_assert_int_eq(ps_update_commit(&up, &w, NULL), 0);
	bytes = pg_slurp(o, &n);
	ck_assert_ptr_null(memmem(bytes, n, marker, sizeof marker - 1)); /* no plaintext in the file */
	free(bytes);
	ck_assert_int_eq(ps_doc_open(ctx, &out, o, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(out, pw, strlen(pw), 0), 0);
	ck_assert_int_eq(ps_doc_lookup(out, snum, &x), 0);
	x = ps_dict_get(x, "Note");
	ck_assert_uint_eq(x->u.str.len, sizeof marker - 1);
	ck_assert_mem_eq(x->u.str.p, marker, sizeof marker - 1);
	ck_assert_int_eq(ps_doc_lookup(out, tnum, &x), 0);
	ck_assert_int_eq(ps_doc_stream_data(out, tnum, x, 0, &data), 0);
	ck_assert_uint_eq(data.len, sizeof marker - 1);
	ck_assert_mem_eq(data.data, marker, sizeof marker - 1);
	ps_buf_free(&data);
	free(o);
}
END_TEST

/* doc.c note 9: the second update of timestamp --lta re-opens the new file
 * the first one wrote (-o).  A file put under that name in between (here
 * a byte-for-byte copy: same size, last revision, /Encrypt and ID[0], so
 * every check of the content passes) is not the file written, and is
 * refused: it must not be changed with the key of the document. */
START_TEST(open_written_is_the_file_written)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	char src[512], pw[256], cmd[2048], *o = path_in("out.pdf"), *c = path_in("copy.pdf");
	ps_doc *n = NULL;
	int64_t size;
	size_t before, after;
	FILE *f;

	snprintf(src, sizeof src, "%s/../samples/user.pw", TEST_SRCDIR);
	f = fopen(src, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(pw, sizeof pw, f));
	fclose(f);
	pw[strcspn(pw, "\r\n")] = '\0';
	snprintf(src, sizeof src, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, src, 0), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, pw, strlen(pw), 0), 0);
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	ck_assert_int_eq(ps_update_put(&up, ps_update_alloc(&up), 0, obj("<</N 1>>")), 0);
	ck_assert_int_eq(ps_update_commit(&up, &w, &res), 0);
	size = res.base_length + res.bytes_appended;
	/* the file written is taken */
	ck_assert_int_eq(ps_doc_open_written(doc, o, size, res.xref_offset, &n), 0);
	pdfstamp_doc_close(n);
	n = NULL;
	/* a copy renamed over it is not */
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && mv '%s' '%s'", o, c, c, o);
	ck_assert_int_eq(system(cmd), 0);
	free(pg_slurp(o, &before));
	ck_assert_int_ne(ps_doc_open_written(doc, o, size, res.xref_offset, &n), 0);
	ck_assert_ptr_null(n);
	free(pg_slurp(o, &after));
	ck_assert_uint_eq(after, before);
	pdfstamp_result_clear(&res);
	free(o);
	free(c);
}
END_TEST

START_TEST(misuse_is_refused)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char *in = input(0), *o = path_in("out.pdf");
	uint32_t n;

	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
	/* exactly one destination; in place needs a writing open */
	w.output = o;
	w.flags = PDFSTAMP_WRITE_IN_PLACE;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_USAGE);
	w.output = NULL;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_USAGE);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "opened for writing"));
	w.flags = 0;
	w.output = o;
	w.version = 0;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_USAGE);
	w.version = PDFSTAMP_WRITE_OPTS_VERSION;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	/* nothing to write */
	ck_assert_int_eq(ps_update_commit(&up, &w, NULL), PDFSTAMP_E_INTERNAL);
	ck_assert_int_eq(up.state, PS_UP_FAILED);
	ck_assert_int_ne(access(o, F_OK), 0);
	ps_update_free(&up);
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	n = ps_update_alloc(&up);
	ck_assert_int_eq(ps_update_put(&up, 0, 0, obj("null")), PDFSTAMP_E_INTERNAL);
	ck_assert_int_eq(ps_update_put(&up, n, 0, obj("(one)")), 0);
	ck_assert_int_eq(ps_update_put(&up, n, 0, obj("(two)")), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_update_put(&up, n, 0, NULL), PDFSTAMP_E_NOMEM);
	ck_assert_int_eq(ps_update_commit(&up, &w, NULL), 0);
	ck_assert_int_eq(ps_update_commit(&up, &w, NULL), PDFSTAMP_E_INTERNAL); /* once */
	free(in);
	free(o);
}
END_TEST

/* A reference to a missing object is the null object (ISO 32000-2
 * 7.3.10), never a place to write to: a put names an object in use or a
 * number this update allocated (INTERNAL otherwise), and no new number is
 * one that the carried-over trailer or an object read before the first
 * alloc names (a /Info or /Perms /DocMDP to a missing object above /Size
 * would come to name a new object). */
START_TEST(missing_objects_are_never_written)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char *o = path_in("out.pdf");
	const char *in;
	ps_obj *x;
	pg p;
	pg_ent e[5];
	uint32_t a, b;

	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R/Perms<</DocMDP 8 0 R>>>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Annots 4 0 R>>");
	e[0] = (pg_ent){0, 0, 4, 65535};
	e[1] = pg_used(&p, 1);
	e[2] = pg_used(&p, 2);
	e[3] = pg_used(&p, 3);
	e[4] = (pg_ent){4, 0, 0, 1};     /* free */
	pg_table(&p, e, 5, "<</Size 5/Root 1 0 R/Info 6 0 R>>");
	in = pg_save(&p, dir, "missing.pdf");
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &x), 0); /* read before the first alloc */
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	ck_assert_int_eq(ps_update_put(&up, 4, 0, obj("[]")), PDFSTAMP_E_INTERNAL); /* free */
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "neither an object of the file"));
	ck_assert_int_eq(ps_update_put(&up, 6, 0, obj("<<>>")), PDFSTAMP_E_INTERNAL); /* not allocated */
	ck_assert_int_eq(ps_update_put(&up, 2000000, 0, obj("[]")), PDFSTAMP_E_INTERNAL);
	a = ps_update_alloc(&up);
	b = ps_update_alloc(&up);
	ck_assert_uint_eq(a, 5);
	ck_assert_uint_eq(b, 7); /* 6 is the trailer's /Info */
	ck_assert_uint_eq(ps_update_alloc(&up), 9); /* 8 is the catalog's /Perms /DocMDP; 9 left unused */
	ck_assert_int_eq(ps_update_put(&up, 8, 0, obj("<<>>")), PDFSTAMP_E_INTERNAL); /* skipped */
	ck_assert_int_eq(ps_update_put(&up, a, 0, obj("<</Subtype/Stamp>>")), 0);
	ck_assert_int_eq(ps_update_put(&up, b, 0, obj("(x)")), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &x), 0);
	ck_assert_int_eq(ps_update_put(&up, 3, 0, ps_obj_copy(x)), 0); /* in use */
	ck_assert_int_eq(ps_update_commit(&up, &w, NULL), 0);
	ck_assert_int_eq(ps_doc_open(ctx, &out, o, 0), 0);
	ck_assert_int_eq(xinfo(out).size_key, 10);
	ck_assert_int_eq(ps_doc_lookup(out, 6, &x), 0);
	ck_assert_ptr_null(x); /* /Info still names nothing */
	ck_assert_int_eq(ps_doc_lookup(out, 8, &x), 0);
	ck_assert_ptr_null(x); /* nor /DocMDP */
	ck_assert_int_eq(ps_doc_lookup(out, 4, &x), 0);
	ck_assert_ptr_null(x);
	free(o);
}
END_TEST

/* Note 6's second line of defence: an object read after the first
 * ps_update_alloc that names a number the update handed out (a reference
 * to a missing object, which the new object would capture) makes the
 * commit refuse; read before, the number is skipped. */
START_TEST(late_reads_are_checked)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char *o = path_in("late.pdf");
	const char *in;
	ps_obj *x;
	pg p;
	pg_ent e[4];
	uint32_t a;
	int early;

	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Thumb 4 0 R/Contents[5 0 R]>>");
	e[0] = (pg_ent){0, 0, 0, 65535};
	e[1] = pg_used(&p, 1);
	e[2] = pg_used(&p, 2);
	e[3] = pg_used(&p, 3);
	pg_table(&p, e, 4, "<</Size 4/Root 1 0 R>>");
	in = pg_save(&p, dir, "late-in.pdf");
	for (early = 0; early < 2; early++) {
		ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
		w.output = o;
		unlink(o);
		ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
		if (early)
			ck_assert_int_eq(ps_doc_lookup(doc, 3, &x), 0);
		a = ps_update_alloc(&up);
		ck_assert_uint_eq(a, early ? 6 : 4);
		ck_assert_int_eq(ps_update_put(&up, a, 0, obj("<</Subtype/Stamp>>")), 0);
		ck_assert_uint_eq(ps_update_alloc(&up), early ? 7 : 5);
		ck_assert_int_eq(ps_doc_lookup(doc, 3, &x), 0); /* late, or a cache hit */
		ck_assert_int_eq(ps_update_put(&up, 3, 0, ps_obj_copy(x)), 0);
		if (early) {
			ck_assert_int_eq(ps_update_commit(&up, &w, NULL), 0);
			ck_assert_int_eq(ps_doc_open(ctx, &out, o, 0), 0);
			ck_assert_int_eq(ps_doc_lookup(out, 4, &x), 0);
			ck_assert_ptr_null(x); /* /Thumb still names nothing */
			ck_assert_int_eq(ps_doc_lookup(out, 5, &x), 0);
			ck_assert_ptr_null(x);
			pdfstamp_doc_close(out);
			out = NULL;
		} else {
			ck_assert_int_eq(ps_update_commit(&up, &w, NULL), PDFSTAMP_E_INTERNAL);
			ck_assert_ptr_nonnull(strstr(ctx->errmsg, "object 3 of the file names object 4"));
			ck_assert_int_ne(access(o, F_OK), 0); /* nothing written */
		}
		ps_update_free(&up);
		pdfstamp_doc_close(doc);
		doc = NULL;
	}
	free(o);
}
END_TEST

/* A failed in-place commit at POINT leaves the file as it was, and no journal. */
static void failed_in_place(const char *fault)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char *in = input(0), j[600];
	uint8_t *before, *after;
	size_t nb, na;
	uint32_t anum, inum;

	before = pg_slurp(in, &nb);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, PDFSTAMP_OPEN_WRITE), 0);
	w.flags = PDFSTAMP_WRITE_IN_PLACE;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	setenv("PDFSTAMP_FAULT", fault, 1);
	ck_assert_int_eq(ps_update_commit(&up, &w, NULL), PDFSTAMP_E_IO);
	unsetenv("PDFSTAMP_FAULT");
	ck_assert_int_eq(up.state, PS_UP_FAILED);
	after = pg_slurp(in, &na);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(after, before, nb);
	snprintf(j, sizeof j, "%s.pdfstamp-journal", in);
	ck_assert_int_ne(access(j, F_OK), 0);
	free(before);
	free(after);
	free(in);
}

START_TEST(failed_write_in_place)
{
	/* the 1st write is the journal's, the 2nd the update's */
	failed_in_place("fail:write:2");
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "cannot write the update"));
}
END_TEST

START_TEST(failed_fsync_in_place)
{
	failed_in_place("fail:fsync:2");
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "cannot fsync the file"));
}
END_TEST

/* The durable hook (write options version 3): what it sees, and a refusal. */
struct hook_seen {
	const char *path;
	int64_t size, expect;   /* the file's size in the hook; base + appended */
	int journal;            /* the journal still exists */
	int calls, refuse;
};

static int durable_hook(void *ud, const char *path, const struct pdfstamp_result *res)
{
	struct hook_seen *h = ud;
	char j[600];
	struct stat st;

	h->calls++;
	ck_assert_str_eq(path, h->path);
	ck_assert_int_eq(stat(path, &st), 0);
	h->size = (int64_t)st.st_size;
	h->expect = res->base_length + res->bytes_appended;
	snprintf(j, sizeof j, "%s.pdfstamp-journal", path);
	h->journal = access(j, F_OK) == 0;
	return h->refuse;
}

static void durable_case(int refuse)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	struct hook_seen h = {.refuse = refuse};
	char *in = input(0), j[600];
	uint8_t *before, *after;
	size_t nb, na;
	uint32_t anum, inum;

	before = pg_slurp(in, &nb);
	h.path = in;
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, PDFSTAMP_OPEN_WRITE), 0);
	w.flags = PDFSTAMP_WRITE_IN_PLACE;
	w.durable = durable_hook;
	w.durable_ud = &h;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	ck_assert_int_eq(ps_update_commit(&up, &w, &res), refuse ? PDFSTAMP_E_IO : 0);
	ck_assert_int_eq(h.calls, 1);
	ck_assert_int_eq(h.journal, 1); /* called while the journal guards the update */
	ck_assert_int_eq(h.size, h.expect); /* ... which is whole in the file */
	ck_assert_int_gt(h.size, (int64_t)nb);
	after = pg_slurp(in, &na);
	ck_assert_uint_eq(na, refuse ? nb : (size_t)h.expect); /* refused: undone */
	ck_assert_mem_eq(after, before, nb);
	snprintf(j, sizeof j, "%s.pdfstamp-journal", in);
	ck_assert_int_ne(access(j, F_OK), 0);
	if (refuse)
		ck_assert_ptr_nonnull(strstr(ctx->errmsg, "undone"));
	pdfstamp_doc_close(doc);
	doc = NULL;
	free(before);
	free(after);
	free(in);
	pdfstamp_result_clear(&res);
}

START_TEST(durable_hook_sees_the_update)
{
	durable_case(0);
}
END_TEST

START_TEST(durable_hook_refusal_undoes)
{
	durable_case(-1);
}
END_TEST

/* PDFSTAMP_WRITE_DEFER: the call leaves the file untouched, without a
 * journal; pdfstamp_doc_journal links it; pdfstamp_doc_commit writes the
 * update; closing without it drops the update (file untouched, no
 * journal). */
static void deferred_case(int commit)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	char *in = input(0), j[600];
	uint8_t *before, *mid, *after;
	size_t nb, nm, na;
	uint32_t anum, inum;
	ps_update again;

	before = pg_slurp(in, &nb);
	snprintf(j, sizeof j, "%s.pdfstamp-journal", in);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, PDFSTAMP_OPEN_WRITE), 0);
	w.flags = PDFSTAMP_WRITE_IN_PLACE | PDFSTAMP_WRITE_DEFER;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	ck_assert_int_eq(ps_update_commit(&up, &w, &res), 0);
	ps_update_free(&up);
	ck_assert_int_ne(access(j, F_OK), 0); /* built only: no journal yet */
	ck_assert_int_eq(pdfstamp_doc_journal(doc), 0);
	ck_assert_int_eq(pdfstamp_doc_journal(doc), 0); /* once */
	mid = pg_slurp(in, &nm);
	ck_assert_uint_eq(nm, nb); /* nothing written yet ... */
	ck_assert_mem_eq(mid, before, nb);
	ck_assert_int_eq(access(j, F_OK), 0); /* ... but the journal is there */
	ck_assert_int_gt(res.bytes_appended, 0);
	/* no second update while one is pending */
	ck_assert_int_eq(ps_update_begin(doc, &w, &again), PDFSTAMP_E_USAGE);
	ps_update_free(&again);
	if (commit) {
		ck_assert_int_eq(pdfstamp_doc_commit(doc), 0);
		ck_assert_int_eq(pdfstamp_doc_commit(doc), 0); /* nothing left: 0 */
	}
	pdfstamp_doc_close(doc);
	doc = NULL;
	after = pg_slurp(in, &na);
	ck_assert_uint_eq(na, commit ? nb + (size_t)res.bytes_appended : nb);
	ck_assert_mem_eq(after, before, nb);
	ck_assert_int_ne(access(j, F_OK), 0);
	if (commit) {
		ps_obj *x;
		ck_assert_int_eq(ps_doc_open(ctx, &out, in, 0), 0);
		ck_assert_int_eq(nsections(out), 2);
		ck_assert_int_eq(ps_doc_lookup(out, anum, &x), 0);
		ck_assert_ptr_nonnull(x);
	}
	free(before);
	free(mid);
	free(after);
	free(in);
	pdfstamp_result_clear(&res);
}

START_TEST(deferred_commit)
{
	deferred_case(1);
}
END_TEST

START_TEST(deferred_dropped_by_close)
{
	deferred_case(0);
}
END_TEST

START_TEST(deferred_needs_in_place)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char *in = input(0), o[600];

	snprintf(o, sizeof o, "%s.out.pdf", in);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
	w.output = o;
	w.flags = PDFSTAMP_WRITE_DEFER;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_USAGE);
	ck_assert_int_eq(pdfstamp_doc_commit(doc), 0); /* nothing pending */
	ck_assert_int_eq(pdfstamp_doc_journal(doc), 0);
	pdfstamp_doc_close(doc);
	doc = NULL;
	free(in);
}
END_TEST

/* PDFSTAMP_WRITE_DRY_RUN (incr.c note 7): on a document opened
 * read-only, in place, the update is built and measured; the file, its
 * directory and the durable hook are untouched.  The real update that
 * follows appends exactly the bytes the dry run reported, with the same
 * offset and objects. */
static void dry_run_case(int stream)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result dry = PDFSTAMP_RESULT_INIT, res = PDFSTAMP_RESULT_INIT;
	struct hook_seen h = {.refuse = 0};
	char *in = input(stream), j[600], o[600];
	uint8_t *before, *after;
	size_t nb, na;
	uint32_t anum, inum;

	before = pg_slurp(in, &nb);
	snprintf(j, sizeof j, "%s.pdfstamp-journal", in);
	snprintf(o, sizeof o, "%s.out.pdf", in);
	h.path = in;
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0); /* no lock */
	w.flags = PDFSTAMP_WRITE_IN_PLACE | PDFSTAMP_WRITE_DRY_RUN;
	w.durable = durable_hook;
	w.durable_ud = &h;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	ck_assert_int_eq(ps_update_commit(&up, &w, &dry), 0);
	ps_update_free(&up);
	ck_assert_int_eq(h.calls, 0);
	ck_assert_int_ne(access(j, F_OK), 0);
	ck_assert_int_eq(dry.base_length, (int64_t)nb);
	ck_assert_int_gt(dry.bytes_appended, 0);
	ck_assert_int_gt(dry.xref_offset, dry.base_length);
	/* -o OUT: not created */
	w.flags = PDFSTAMP_WRITE_DRY_RUN;
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	ps_update_free(&up);
	ck_assert_int_ne(access(o, F_OK), 0);
	pdfstamp_doc_close(doc);
	doc = NULL;
	after = pg_slurp(in, &na);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(after, before, nb);
	free(after);
	/* the real update */
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, PDFSTAMP_OPEN_WRITE), 0);
	memset(&w, 0, sizeof w);
	w.version = PDFSTAMP_WRITE_OPTS_VERSION;
	w.flags = PDFSTAMP_WRITE_IN_PLACE;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	ck_assert_int_eq(ps_update_commit(&up, &w, &res), 0);
	pdfstamp_doc_close(doc);
	doc = NULL;
	after = pg_slurp(in, &na);
	ck_assert_uint_eq(na, nb + (size_t)dry.bytes_appended);
	ck_assert_int_eq(res.bytes_appended, dry.bytes_appended);
	ck_assert_int_eq(res.xref_offset, dry.xref_offset);
	free(before);
	free(after);
	free(in);
	pdfstamp_result_clear(&dry);
	pdfstamp_result_clear(&res);
}

START_TEST(dry_run_table)
{
	dry_run_case(0);
}
END_TEST

START_TEST(dry_run_stream)
{
	dry_run_case(1);
}
END_TEST

/* What a dry run refuses as the real run would, and with DEFER. */
START_TEST(dry_run_refusals)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char *in = input(0), o[600];

	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
	w.flags = PDFSTAMP_WRITE_IN_PLACE | PDFSTAMP_WRITE_DRY_RUN | PDFSTAMP_WRITE_DEFER;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_USAGE);
	ps_update_free(&up);
	w.flags = PDFSTAMP_WRITE_DRY_RUN;
	w.output = dir; /* a directory */
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_IO);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "Is a directory"));
	ps_update_free(&up);
	snprintf(o, sizeof o, "%s/no/such/dir/out.pdf", dir);
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_IO);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "cannot create a temporary file"));
	ps_update_free(&up);
	/* without the flag, in place still needs a writing open */
	w.output = NULL;
	w.flags = PDFSTAMP_WRITE_IN_PLACE;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_USAGE);
	free(in);
}
END_TEST

START_TEST(failed_rename_new_file)
{
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	char *in = input(0), *o = path_in("out.pdf");
	uint32_t anum, inum;
	size_t nb, na;
	uint8_t *before = NULL, *after;

	before = pg_slurp(in, &nb);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, in, 0), 0);
	w.output = o;
	ck_assert_int_eq(ps_update_begin(doc, &w, &up), 0);
	typical_update(&anum, &inum);
	setenv("PDFSTAMP_FAULT", "fail:rename", 1);
	ck_assert_int_eq(ps_update_commit(&up, &w, NULL), PDFSTAMP_E_IO);
	unsetenv("PDFSTAMP_FAULT");
	ck_assert_int_ne(access(o, F_OK), 0); /* no output */
	after = pg_slurp(in, &na);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(after, before, nb);
	free(before);
	free(after);
	free(in);
	free(o);
}
END_TEST

/* ---- the xref writer ------------------------------------------------------------ */

static int write_section(const ps_xrefw_ent *ents, size_t n, const char *trailer, int stream, uint32_t self,
                         int64_t xoff, ps_buf *b)
{
	ps_xrefw_array a;
	ps_xrefw_src src;
	ps_obj *t = obj(trailer);
	int rc;

	ps_xrefw_src_array(&src, &a, ents, n);
	rc = ps_xrefw_write(ctx, &src, t, stream, self, xoff, b);
	ps_obj_free(t);
	return rc;
}

START_TEST(xrefw_table_bytes)
{
	static const ps_xrefw_ent ents[] = {
		{0, 0, 0, 65535}, {1, 1, 15, 0}, {2, 1, 100, 3}, {7, 1, 2000, 0}, {8, 0, 0, 1}, {12, 1, 9999999999, 65535},
	};
	ps_buf b = PS_BUF_INIT, t = PS_BUF_INIT, want = PS_BUF_INIT;
	ps_obj *tr = obj("<</Size 13/Root 1 0 R/Prev 7>>");

	ck_assert_int_eq(write_section(ents, 6, "<</Size 13/Root 1 0 R/Prev 7>>", 0, 0, 9999999999, &b), 0);
	ps_serialize(&t, tr);
	ps_buf_puts(&want, "xref\n0 3\n0000000000 65535 f\r\n0000000015 00000 n\r\n0000000100 00003 n\r\n"
	            "7 2\n0000002000 00000 n\r\n0000000000 00001 f\r\n12 1\n9999999999 65535 n\r\ntrailer\n");
	ps_buf_append(&want, t.data, t.len);
	ps_buf_puts(&want, "\nstartxref\n9999999999\n%%EOF\n");
	ck_assert_uint_eq(b.len, want.len);
	ck_assert_mem_eq(b.data, want.data, want.len);
	ps_obj_free(tr);
	ps_buf_free(&b);
	ps_buf_free(&t);
	ps_buf_free(&want);
}
END_TEST

/* serialize.c's integer formatter, which writes the rows above: the
 * bytes of snprintf's "%0*" PRIu64 for every width up to its cap of 20
 * (one past it is clamped) and values around each power of ten. */
START_TEST(put_u64_width)
{
	ps_buf b = PS_BUF_INIT;
	char want[32];
	uint64_t p, v;
	unsigned w;
	int i, d;

	for (w = 0; w <= 20; w++) {
		for (i = 0, p = 1; i < 20; i++, p *= 10) {
			for (d = -1; d <= 1; d++) {
				v = d < 0 ? p - 1 : d > 0 ? p + 1 : p;
				b.len = 0;
				ps_serialize_u64(&b, v, w);
				snprintf(want, sizeof want, "%0*" PRIu64, (int)w, v);
				ck_assert_msg(b.len == strlen(want) && !memcmp(b.data, want, b.len),
				              "%" PRIu64 " width %u", v, w);
			}
		}
		b.len = 0;
		ps_serialize_u64(&b, UINT64_MAX, w);
		ck_assert_uint_eq(b.len, 20);
		ck_assert_mem_eq(b.data, "18446744073709551615", 20);
	}
	b.len = 0;
	ps_serialize_u64(&b, 7, 21);
	ck_assert_uint_eq(b.len, 20);
	ck_assert_mem_eq(b.data, "00000000000000000007", 20);
	ck_assert(!b.oom);
	ps_buf_free(&b);
}
END_TEST

START_TEST(xrefw_table_refusals)
{
	static const ps_xrefw_ent compressed[] = {{1, 1, 15, 0}, {2, 2, 1, 0}};
	static const ps_xrefw_ent unordered[] = {{1, 1, 15, 0}, {3, 1, 30, 0}, {2, 1, 20, 0}};
	static const ps_xrefw_ent twice[] = {{1, 1, 15, 0}, {1, 1, 20, 0}};
	static const ps_xrefw_ent ok[] = {{1, 1, 15, 0}};
	ps_buf b = PS_BUF_INIT;

	ck_assert_int_eq(write_section(compressed, 2, "<</Size 3>>", 0, 0, 100, &b), PDFSTAMP_E_INTERNAL);
	ck_assert_int_eq(write_section(unordered, 3, "<</Size 4>>", 0, 0, 100, &b), PDFSTAMP_E_INTERNAL);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "out of order"));
	ck_assert_int_eq(write_section(twice, 2, "<</Size 2>>", 0, 0, 100, &b), PDFSTAMP_E_INTERNAL);
	b.len = 0;
	ck_assert_int_eq(write_section(ok, 1, "<</Size 2>>", 0, 0, INT64_C(10000000000), &b), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "9,999,999,999"));
	ck_assert_int_eq(write_section(ok, 1, "[1 2]", 0, 0, 100, &b), PDFSTAMP_E_INTERNAL); /* no dictionary */
	ps_buf_free(&b);
}
END_TEST

/* Parses the xref stream object in B and inflates its rows. */
static ps_obj *parse_stream(const ps_buf *b, ps_buf *rows, uint32_t *num)
{
	ps_obj *o = NULL;
	uint16_t gen;
	int64_t len;

	ck_assert_int_eq(ps_parse_indirect(ctx, b->data, b->len, 0, 0, num, &gen, &o), 0);
	ck_assert_int_eq(o->kind, PS_STREAM);
	ck_assert_int_eq(ps_obj_int(ps_dict_get(o, "Length"), &len), 0);
	ck_assert_int_le(o->u.stm.off + len, (int64_t)b->len);
	ck_assert_int_eq(ps_inflate(ctx, b->data + o->u.stm.off, (size_t)len, 1 << 20, rows), 0);
	return o;
}

START_TEST(xrefw_stream_widths_and_index)
{
	static const ps_xrefw_ent ents[] = {
		{1, 1, 0x10, 0}, {2, 2, 0x123456, 70000}, {3, 2, 9, 1}, {9, 1, 0x200, 0},
	};
	static const uint8_t want_rows[] = {
		1, 0, 0, 0x10, 0, 0, 0,   2, 0x12, 0x34, 0x56, 0x01, 0x11, 0x70,
		2, 0, 0, 9, 0, 0, 1,      1, 0, 0x02, 0x00, 0, 0, 0,
	};
	ps_buf b = PS_BUF_INIT, rows = PS_BUF_INIT;
	ps_obj *o, *a, *tr = obj("<</Type/XRef/Size 10/Prev 5>>"), *copy = ps_obj_copy(tr);
	uint32_t num;
	const char *tail;

	ck_assert_int_eq(write_section(ents, 4, "<</Type/XRef/Size 10/Prev 5>>", 1, 9, 0x200, &b), 0);
	o = parse_stream(&b, &rows, &num);
	ck_assert_uint_eq(num, 9);
	a = ps_dict_get(o, "W"); /* 3 bytes for 0x123456, 3 for 70000 */
	ck_assert_int_eq(ps_array_len(a), 3);
	ck_assert_int_eq(ps_array_get(a, 0)->u.i, 1);
	ck_assert_int_eq(ps_array_get(a, 1)->u.i, 3);
	ck_assert_int_eq(ps_array_get(a, 2)->u.i, 3);
	a = ps_dict_get(o, "Index");
	ck_assert_int_eq(ps_array_len(a), 4);
	ck_assert_int_eq(ps_array_get(a, 0)->u.i, 1);
	ck_assert_int_eq(ps_array_get(a, 1)->u.i, 3);
	ck_assert_int_eq(ps_array_get(a, 2)->u.i, 9);
	ck_assert_int_eq(ps_array_get(a, 3)->u.i, 1);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Filter"), "FlateDecode"));
	ck_assert_int_eq(ps_dict_get(o, "Prev")->u.i, 5);
	/* /Type stays first, where the caller's trailer had it */
	ck_assert_str_eq(o->u.stm.dict->u.dict.ents[0].key, "Type");
	ck_assert(ps_obj_is_name(o->u.stm.dict->u.dict.ents[0].val, "XRef"));
	ck_assert_uint_eq(rows.len, sizeof want_rows);
	ck_assert_mem_eq(rows.data, want_rows, sizeof want_rows);
	tail = "endstream\nendobj\nstartxref\n512\n%%EOF\n";
	ck_assert_uint_gt(b.len, strlen(tail));
	ck_assert_mem_eq(b.data + b.len - strlen(tail), tail, strlen(tail));
	ck_assert(ps_obj_equal(tr, copy, 0)); /* the caller's trailer is not changed */
	ck_assert_ptr_null(ps_dict_get(tr, "W"));
	ps_obj_free(o);
	ps_obj_free(tr);
	ps_obj_free(copy);
	ps_buf_free(&b);
	ps_buf_free(&rows);
}
END_TEST

START_TEST(xrefw_stream_default_index)
{
	static const ps_xrefw_ent ents[] = {{0, 0, 0, 65535}, {1, 1, 15, 0}, {2, 1, 300, 0}};
	ps_buf b = PS_BUF_INIT, rows = PS_BUF_INIT;
	ps_obj *o;
	uint32_t num;

	/* one run 0..Size-1: no /Index; /Type added after /W */
	ck_assert_int_eq(write_section(ents, 3, "<</Size 3/Root 1 0 R>>", 1, 2, 300, &b), 0);
	o = parse_stream(&b, &rows, &num);
	ck_assert_ptr_null(ps_dict_get(o, "Index"));
	ck_assert_int_eq(ps_array_get(ps_dict_get(o, "W"), 1)->u.i, 2);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "XRef"));
	ck_assert_str_eq(o->u.stm.dict->u.dict.ents[2].key, "W");
	ck_assert_str_eq(o->u.stm.dict->u.dict.ents[3].key, "Type");
	ck_assert_uint_eq(rows.len, 3 * 5);
	ps_obj_free(o);
	rows.len = b.len = 0;
	/* the same runs with a larger /Size: /Index [0 3] */
	ck_assert_int_eq(write_section(ents, 3, "<</Size 4/Root 1 0 R>>", 1, 2, 300, &b), 0);
	o = parse_stream(&b, &rows, &num);
	ck_assert_int_eq(ps_array_len(ps_dict_get(o, "Index")), 2);
	ps_obj_free(o);
	ps_buf_free(&b);
	ps_buf_free(&rows);
}
END_TEST

START_TEST(xrefw_stream_must_list_itself)
{
	static const ps_xrefw_ent ents[] = {{1, 1, 15, 0}, {2, 1, 300, 0}};
	ps_buf b = PS_BUF_INIT;

	ck_assert_int_eq(write_section(ents, 2, "<</Size 3>>", 1, 3, 400, &b), PDFSTAMP_E_INTERNAL);
	ck_assert_int_eq(write_section(ents, 2, "<</Size 3>>", 1, 2, 400, &b), PDFSTAMP_E_INTERNAL); /* wrong offset */
	ck_assert_int_eq(write_section(ents, 2, "<</Size 3>>", 1, 2, 300, &b), 0);
	ps_buf_free(&b);
}
END_TEST

/* Sections written by xrefw.c are read back by xref.c as written. */
static void round_trip(int stream)
{
	pg p;
	ps_xrefw_ent e[6];
	ps_xrefw_array a;
	ps_xrefw_src src;
	ps_obj *t, *x;
	int64_t xoff;
	size_t n = 0, i;

	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[]/Count 0>>");
	pg_obj(&p, 5, 4, "(five)");
	e[n++] = (ps_xrefw_ent){0, 0, 0, 65535};
	e[n++] = (ps_xrefw_ent){1, 1, (uint64_t)p.off[1], 0};
	e[n++] = (ps_xrefw_ent){2, 1, (uint64_t)p.off[2], 0};
	e[n++] = (ps_xrefw_ent){5, 1, (uint64_t)p.off[5], 4};
	xoff = (int64_t)p.b.len;
	if (stream)
		e[n++] = (ps_xrefw_ent){6, 1, (uint64_t)xoff, 0};
	t = obj(stream ? "<</Size 7/Root 1 0 R>>" : "<</Size 6/Root 1 0 R>>");
	ps_xrefw_src_array(&src, &a, e, n);
	ck_assert_int_eq(ps_xrefw_write(ctx, &src, t, stream, 6, xoff, &p.b), 0);
	ps_obj_free(t);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, pg_save(&p, dir, "rt.pdf"), 0), 0);
	ck_assert_int_eq(sections(doc)[0].kind, stream ? PDFSTAMP_XREF_STREAM : PDFSTAMP_XREF_TABLE);
	ck_assert_int_eq(xinfo(doc).startxref, xoff);
	ck_assert_int_eq(ps_xref_load_all(doc), 0);
	for (i = 1; i < n; i++) {
		const ps_xent *xe = ps_xref_get(ps_doc_xref(doc), e[i].num);
		ck_assert_ptr_nonnull(xe);
		ck_assert_int_eq(xe->off, (int64_t)e[i].f2);
		ck_assert_uint_eq(xe->aux, e[i].f3);
	}
	ck_assert_int_eq(ps_xref_type(ps_doc_xref(doc), 3), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &x), 0);
	ck_assert_mem_eq(x->u.str.p, "five", 4);
}

START_TEST(xrefw_round_trip_table)
{
	round_trip(0);
}
END_TEST

START_TEST(xrefw_round_trip_stream)
{
	round_trip(1);
}
END_TEST

static Suite *incr_suite(void)
{
	Suite *s = suite_create("incr");
	TCase *tc = tcase_create("incremental writer");
	TCase *tx = tcase_create("xref writer");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, commit_new_file_table);
	tcase_add_test(tc, commit_new_file_stream);
	tcase_add_test(tc, commit_in_place);
	tcase_add_test(tc, encrypted_objects_are_encrypted);
	tcase_add_test(tc, open_written_is_the_file_written);
	tcase_add_test(tc, misuse_is_refused);
	tcase_add_test(tc, missing_objects_are_never_written);
	tcase_add_test(tc, late_reads_are_checked);
	tcase_add_test(tc, failed_write_in_place);
	tcase_add_test(tc, durable_hook_sees_the_update);
	tcase_add_test(tc, durable_hook_refusal_undoes);
	tcase_add_test(tc, deferred_commit);
	tcase_add_test(tc, deferred_dropped_by_close);
	tcase_add_test(tc, deferred_needs_in_place);
	tcase_add_test(tc, dry_run_table);
	tcase_add_test(tc, dry_run_stream);
	tcase_add_test(tc, dry_run_refusals);
	tcase_add_test(tc, failed_fsync_in_place);
	tcase_add_test(tc, failed_rename_new_file);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tx, setup, teardown);
	tcase_add_test(tx, xrefw_table_bytes);
	tcase_add_test(tx, put_u64_width);
	tcase_add_test(tx, xrefw_table_refusals);
	tcase_add_test(tx, xrefw_stream_widths_and_index);
	tcase_add_test(tx, xrefw_stream_default_index);
	tcase_add_test(tx, xrefw_stream_must_list_itself);
	tcase_add_test(tx, xrefw_round_trip_table);
	tcase_add_test(tx, xrefw_round_trip_stream);
	suite_add_tcase(s, tx);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(incr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
