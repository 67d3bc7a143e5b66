/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_doc.c - opening a document and looking objects up (doc.c, with
 * xref.c and input.c underneath), on files written byte by byte in the
 * test (pdfgen.c): a classic table with generation numbers, an xref stream
 * with an object stream, a two-revision file with a deleted object; lazy
 * lookup, resolve, object-stream members, the distinct-byte accounting of
 * bytes_read, and damaged offsets (PDFSTAMP_E_FORMAT); the salvage open
 * (PDFSTAMP_OPEN_SALVAGE, doc.c note 6) of files whose newest revisions
 * are damaged: the readable prefix, nothing read past it, the tail
 * reported, the whole file's error when no prefix reads; the functions
 * through which the other modules see the document (doc.h, input.h).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "docpriv.h" /* the reader's own suite: its fields too */
#include "incr.h"
#include "policy.h"
#include "pdfgen.h"

static const char *dir;
static ps_ctx *ctx;
static ps_doc *doc;

static void setup(void)
{
	dir = pg_tmpdir("check_doc");
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	doc = NULL;
}

static void teardown(void)
{
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	pg_rmdir(dir);
}

/* Catalog 1, pages 2, page 3 (generation 2), a string 4 (generation 7). */
static int64_t classic(pg *p, int damage)
{
	pg_ent e[5];

	pg_start(p);
	pg_obj(p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_obj(p, 2, 0, "<</Type/Pages/Kids[3 2 R]/Count 1>>");
	pg_obj(p, 3, 2, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Note 4 7 R>>");
	pg_obj(p, 4, 7, "(four)");
	e[0] = (pg_ent){0, 0, 0, 65535};
	e[1] = pg_used(p, 1);
	e[2] = pg_used(p, 2);
	e[3] = pg_used(p, 3);
	e[4] = pg_used(p, 4);
	if (damage == 1)
		e[3].f2 += 5; /* into the middle of object 3 */
	if (damage == 2)
		e[3].f2 = (uint64_t)p->off[2]; /* at object 2 */
	if (damage == 3)
		e[3].f2 = 999999; /* past the end */
	return pg_table(p, e, 5, "<</Size 5/Root 1 0 R>>");
}

static int open_file(const char *path)
{
	return ps_doc_open(ctx, &doc, path, 0);
}

START_TEST(classic_lookup_resolve_generations)
{
	pg p;
	ps_obj *o, *pages, *kids, *r;

	classic(&p, 0);
	ck_assert_int_eq(open_file(pg_save(&p, dir, "classic.pdf")), 0);
	ck_assert_int_eq(doc->xref.nsections, 1);
	ck_assert_int_eq(doc->xref.sections[0].kind, PDFSTAMP_XREF_TABLE);
	ck_assert_int_eq(doc->xref.size_key, 5);
	ck_assert_uint_eq(doc->xref.bound, 5); /* known from the subsection header alone */
	ck_assert_int_eq(ps_xref_load_all(doc), 0);
	ck_assert_uint_eq(doc->xref.max, 4);
	ck_assert_int_eq(ps_xref_type(ps_doc_xref(doc), 0), 0);
	ck_assert_int_eq(ps_xref_type(ps_doc_xref(doc), 3), 1);
	ck_assert_uint_eq(ps_doc_gen(doc, 3), 2);
	ck_assert_uint_eq(ps_doc_gen(doc, 4), 7);
	ck_assert_uint_eq(ps_doc_gen(doc, 1), 0);
	ck_assert_uint_eq(ps_xref_next(ps_doc_xref(doc), 0), 1);
	ck_assert_uint_eq(ps_xref_next(ps_doc_xref(doc), 4), 0);

	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Catalog"));
	/* lookups are cached: the same pointer again */
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &r), 0);
	ck_assert_ptr_eq(r, o);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(o, "Pages"), &pages), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(pages, "Type"), "Pages"));
	kids = ps_dict_get(pages, "Kids");
	ck_assert_int_eq(kids->kind, PS_ARRAY);
	ck_assert_uint_eq(ps_array_get(kids, 0)->u.ref.gen, 2);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_array_get(kids, 0), &r), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(r, "Type"), "Page"));
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(r, "Note"), &r), 0);
	ck_assert_int_eq(r->kind, PS_STR);
	ck_assert_uint_eq(r->u.str.len, 4);
	ck_assert_mem_eq(r->u.str.p, "four", 4);
	/* a direct object resolves to itself, NULL to NULL */
	ck_assert_int_eq(ps_doc_resolve(doc, o, &r), 0);
	ck_assert_ptr_eq(r, o);
	ck_assert_int_eq(ps_doc_resolve(doc, NULL, &r), 0);
	ck_assert_ptr_null(r);
	/* free and absent numbers are the null object, not errors */
	r = o;
	ck_assert_int_eq(ps_doc_lookup(doc, 0, &r), 0);
	ck_assert_ptr_null(r);
	r = o;
	ck_assert_int_eq(ps_doc_lookup(doc, 40, &r), 0);
	ck_assert_ptr_null(r);
}
END_TEST

/* Catalog 1 and pages 2 in object stream 4; page 3 plain; xref stream 5. */
static void with_objstm(pg *p)
{
	static const char members[] = "1 0 2 30 <</Type/Catalog/Pages 2 0 R>> "
	                              "<</Type/Pages/Kids[3 0 R]/Count 1>>";
	pg_ent e[6];

	pg_start(p);
	pg_obj(p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>");
	pg_stream(p, 4, "/Type/ObjStm/N 2/First 9", members, sizeof members - 1);
	e[0] = (pg_ent){0, 0, 0, 65535};
	e[1] = (pg_ent){1, 2, 4, 0};
	e[2] = (pg_ent){2, 2, 4, 1};
	e[3] = pg_used(p, 3);
	e[4] = pg_used(p, 4);
	e[5] = (pg_ent){5, 1, 0, 0};
	pg_xref_stream(p, 5, e, 6, "/Size 6/Root 1 0 R");
}

/* Reads as of a revision decode object streams against doc->asof_cap
 * (audit.c note 7): within it they count, past it the load is refused. */
START_TEST(asof_decode_cap)
{
	pg p;
	ps_obj *o = NULL;

	with_objstm(&p);
	ck_assert_int_eq(open_file(pg_save(&p, dir, "objstm-cap.pdf")), 0);
	ck_assert_int_eq(ps_xref_load_all(doc), 0);
	doc->asof_decoded = 0;
	doc->asof_cap = 1000;
	ck_assert_int_eq(ps_doc_load_as_of(doc, 1, 1, &o, NULL), 0);
	ck_assert_ptr_nonnull(o);
	ps_obj_free(o);
	o = NULL;
	ck_assert_int_gt(doc->asof_decoded, 0);
	ck_assert_int_le(doc->asof_decoded, 1000);
	/* a second member of the same stream: the slot, nothing decoded */
	{
		int64_t before = doc->asof_decoded;
		ck_assert_int_eq(ps_doc_load_as_of(doc, 2, 1, &o, NULL), 0);
		ps_obj_free(o);
		o = NULL;
		ck_assert_int_eq(doc->asof_decoded, before);
	}
	/* a cap already spent: the next decode is refused */
	doc->asof_stm[0].offs = (free(doc->asof_stm[0].offs), NULL);
	doc->asof_stm[1].offs = (free(doc->asof_stm[1].offs), NULL);
	doc->asof_cap = doc->asof_decoded;
	ck_assert_int_eq(ps_doc_load_as_of(doc, 1, 1, &o, NULL), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_null(o);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "refused"));
	doc->asof_cap = 0;
}
END_TEST

START_TEST(xref_stream_and_object_stream)
{
	pg p;
	ps_obj *o, *r;
	const ps_xent *x;

	with_objstm(&p);
	ck_assert_int_eq(open_file(pg_save(&p, dir, "objstm.pdf")), 0);
	ck_assert_int_eq(doc->xref.nsections, 1);
	ck_assert_int_eq(doc->xref.sections[0].kind, PDFSTAMP_XREF_STREAM);
	ck_assert_uint_eq(doc->xref.sections[0].stream_num, 5);
	ck_assert(ps_doc_is_xref_stream(doc, 5));
	ck_assert(!ps_doc_is_xref_stream(doc, 4));
	ck_assert_int_eq(ps_xref_find(doc, 2, &x), 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->type, 2);
	ck_assert_int_eq(x->off, 4);
	ck_assert_uint_eq(x->aux, 1);
	ck_assert_uint_eq(ps_doc_gen(doc, 2), 0); /* compressed: generation 0 */

	ck_assert_int_eq(ps_doc_lookup(doc, 2, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Pages"));
	ck_assert_uint_eq(doc->objstm_num, 4); /* the decoded stream is kept */
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Catalog"));
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(o, "Pages"), &r), 0);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_array_get(ps_dict_get(r, "Kids"), 0), &r), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(r, "Type"), "Page"));
	/* the xref stream is an object like the others */
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &o), 0);
	ck_assert_int_eq(o->kind, PS_STREAM);
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "XRef"));
}
END_TEST

/* Revision 2 replaces object 2 (one more kid), adds page 5 and deletes
 * object 4 (free entry, generation 8). */
START_TEST(two_revisions)
{
	pg p;
	pg_ent e[4];
	int64_t x1, x2;
	ps_obj *o;
	const ps_xent *x;
	char tr[128];

	x1 = classic(&p, 0);
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 2 R 5 0 R]/Count 2>>");
	pg_obj(&p, 5, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 300]>>");
	e[0] = pg_used(&p, 2);
	e[1] = (pg_ent){4, 0, 0, 8};
	e[2] = pg_used(&p, 5);
	snprintf(tr, sizeof tr, "<</Size 6/Root 1 0 R/Prev %lld>>", (long long)x1);
	x2 = pg_table(&p, e, 3, tr);
	ck_assert_int_eq(open_file(pg_save(&p, dir, "two.pdf")), 0);
	ck_assert_int_eq(doc->xref.nsections, 2);
	ck_assert_int_eq(doc->xref.startxref, x2);
	ck_assert_int_eq(doc->xref.sections[0].off, x2);
	ck_assert_int_eq(doc->xref.sections[0].prev, x1);
	ck_assert_int_eq(doc->xref.sections[1].off, x1);
	ck_assert_int_eq(doc->xref.size_key, 6);
	ck_assert_int_eq(ps_doc_lookup(doc, 2, &o), 0);
	ck_assert_int_eq(ps_array_len(ps_dict_get(o, "Kids")), 2); /* the newer object 2 */
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), 0);          /* older ones stay visible */
	ck_assert(ps_obj_is_name(ps_dict_get(o, "Type"), "Page"));
	ck_assert_int_eq(ps_xref_find(doc, 4, &x), 0);
	ck_assert_ptr_null(x);                                    /* the newer free entry hides it */
	ck_assert_int_eq(ps_doc_lookup(doc, 4, &o), 0);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ps_xref_find(doc, 5, &x), 0);
	ck_assert_uint_eq(x->sec, 1);
	ck_assert_int_eq(ps_xref_find(doc, 3, &x), 0);
	ck_assert_uint_eq(x->sec, 2);
}
END_TEST

START_TEST(bytes_read_counts_what_was_read)
{
	pg p;
	ps_buf b = PS_BUF_INIT;
	ps_obj *o;
	int64_t after_open, after_lookup;

	/* a large stream in the middle that no lookup needs */
	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[]/Count 0>>");
	{
		static uint8_t big[200000];
		pg_ent e[4];
		memset(big, 'x', sizeof big);
		pg_stream(&p, 3, "", big, sizeof big);
		e[0] = (pg_ent){0, 0, 0, 65535};
		e[1] = pg_used(&p, 1);
		e[2] = pg_used(&p, 2);
		e[3] = pg_used(&p, 3);
		pg_table(&p, e, 4, "<</Size 4/Root 1 0 R>>");
	}
	ck_assert_int_eq(open_file(pg_save(&p, dir, "big.pdf")), 0);
	after_open = doc->bytes_read;
	ck_assert_int_gt(after_open, 0);
	ck_assert_int_lt(after_open, 4096); /* the tail and the table, not the payload */
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0);
	after_lookup = doc->bytes_read;
	ck_assert_int_gt(after_lookup, after_open);
	ck_assert_int_le(after_lookup - after_open, 1024); /* one first window */
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0);   /* cached: nothing read */
	ck_assert_int_eq(doc->bytes_read, after_lookup);
	/* the same bytes read again count once; the whole file counts its size */
	ck_assert_int_eq(ps_doc_pread(doc, 0, 100, &b), 0);
	ck_assert_uint_eq(b.len, 100);
	ck_assert_int_eq(ps_doc_pread(doc, 0, 100, &b), 0);
	ck_assert_int_eq(ps_doc_pread(doc, 0, (size_t)doc->size + 50, &b), 0);
	ck_assert_int_eq((int64_t)b.len, doc->size); /* short only at the end */
	ck_assert_int_eq(doc->bytes_read, doc->size);
	ck_assert_int_eq(ps_doc_pread(doc, doc->size + 1, 1, &b), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ps_doc_pread(doc, -1, 1, &b), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(doc->bytes_read, doc->size);
	ps_buf_free(&b);
}
END_TEST

START_TEST(parse_at_checks_the_number)
{
	pg p;
	ps_obj *o = NULL;
	uint32_t num = 0;
	int64_t off;

	classic(&p, 0);
	ck_assert_int_eq(open_file(pg_save(&p, dir, "classic.pdf")), 0);
	ck_assert_int_eq(ps_xref_load_all(doc), 0);
	off = ps_xref_get(ps_doc_xref(doc), 4)->off;
	ck_assert_int_eq(ps_doc_parse_at(doc, off, 0, &o, &num), 0);
	ck_assert_uint_eq(num, 4);
	ck_assert_int_eq(o->kind, PS_STR);
	ps_obj_free(o);
	ck_assert_int_eq(ps_doc_parse_at(doc, off, 3, &o, &num), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_null(o);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "object 3"));
}
END_TEST

START_TEST(large_object_grows_the_window)
{
	pg p;
	pg_ent e[3];
	ps_obj *o;
	char body[3500];

	memset(body, 'a', sizeof body - 3);
	body[0] = '(';
	body[sizeof body - 3] = ')';
	body[sizeof body - 2] = '\0';
	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Long %s>>", body);
	pg_obj(&p, 2, 0, "null");
	e[0] = (pg_ent){0, 0, 0, 65535};
	e[1] = pg_used(&p, 1);
	e[2] = pg_used(&p, 2);
	pg_table(&p, e, 3, "<</Size 3/Root 1 0 R>>");
	ck_assert_int_eq(open_file(pg_save(&p, dir, "long.pdf")), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0);
	ck_assert_uint_eq(ps_dict_get(o, "Long")->u.str.len, sizeof body - 4);
}
END_TEST

/* A table entry that does not lead to its object is a damaged file. */
static void damaged(int how)
{
	pg p;
	ps_obj *o = NULL;

	classic(&p, how);
	ck_assert_int_eq(open_file(pg_save(&p, dir, "damaged.pdf")), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0); /* the rest reads */
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(ctx->errcode, PDFSTAMP_E_FORMAT);
}

START_TEST(damaged_offset_mid_object)
{
	damaged(1);
}
END_TEST

START_TEST(damaged_offset_other_object)
{
	damaged(2);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "object 3"));
}
END_TEST

START_TEST(damaged_offset_past_end)
{
	pg p;

	ps_obj *o = NULL;

	/* the reader refuses an entry past the end when it reads it: at the
	 * lookup of that object, or when a whole-file pass loads every entry */
	classic(&p, 3);
	ck_assert_int_eq(open_file(pg_save(&p, dir, "past.pdf")), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &o), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "past the end of the file"));
	ck_assert_int_eq(ps_doc_lookup(doc, 1, &o), 0); /* the others stay readable */
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(ps_xref_load_all(doc), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "past the end of the file"));
}
END_TEST

START_TEST(open_refusals)
{
	pg p;

	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, "/nonexistent/x.pdf", 0), PDFSTAMP_E_IO);
	ck_assert_ptr_null(doc);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, dir, 0), PDFSTAMP_E_IO);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "a directory"));
	classic(&p, 0);
	/* internal flags are not part of the public entry */
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, pg_save(&p, dir, "c.pdf"), PS_OPEN_NO_RECOVER),
	                 PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(doc);
	pg_start(&p);
	ps_buf_puts(&p.b, "no cross-reference here\n");
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, pg_save(&p, dir, "bad.pdf"), 0), PDFSTAMP_E_FORMAT);
	ck_assert_ptr_null(doc);
}
END_TEST

/* Writes LEN bytes of DATA, after JUNK bytes of 'x', to DIR/NAME. */
static const char *write_raw(const char *name, size_t junk, const char *data, size_t len)
{
	static char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	while (junk-- > 0)
		ck_assert_int_eq(fputc('x', f), 'x');
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* Issue 30: a file that does not open and has no "%PDF-" in its first
 * 1024 bytes is called what it is; with a header, the reader's own
 * message stands. */
START_TEST(not_a_pdf_says_so)
{
	static const char text[] = "hello, this is text\nstartxref\nfoo\n%%EOF\n";
	static const char headed[] = "%PDF-1.7\nhello\nstartxref\nfoo\n%%EOF\n";
	const char *path;
	unsigned flags[2] = { 0, PDFSTAMP_OPEN_SALVAGE };
	int k;

	for (k = 0; k < 2; k++) {
		path = write_raw("text.pdf", 0, text, sizeof text - 1);
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, flags[k]), PDFSTAMP_E_FORMAT);
		ck_assert_ptr_null(doc);
		ck_assert_str_eq(ctx->errmsg, "not a PDF: no %PDF header");
		path = write_raw("empty.pdf", 0, "", 0);
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, flags[k]), PDFSTAMP_E_FORMAT);
		ck_assert_str_eq(ctx->errmsg, "not a PDF: no %PDF header");
		path = write_raw("headed.pdf", 0, headed, sizeof headed - 1);
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, flags[k]), PDFSTAMP_E_FORMAT);
		ck_assert_str_eq(ctx->errmsg, "startxref is not followed by a valid offset");
		/* readers look for the header in the first 1024 bytes */
		path = write_raw("late.pdf", 1015, headed, sizeof headed - 1);
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, flags[k]), PDFSTAMP_E_FORMAT);
		ck_assert_str_eq(ctx->errmsg, "startxref is not followed by a valid offset");
		path = write_raw("later.pdf", 1020, headed, sizeof headed - 1);
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, flags[k]), PDFSTAMP_E_FORMAT);
		ck_assert_str_eq(ctx->errmsg, "not a PDF: no %PDF header");
	}
	/* an I/O failure is never renamed */
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, dir, 0), PDFSTAMP_E_IO);
	ck_assert_ptr_nonnull(strstr(ctx->errmsg, "a directory"));
}
END_TEST

/* ---- the salvage open --------------------------------------------------- */

/* The ways a second revision is damaged. */
enum tail_damage {
	TD_STARTXREF,    /* startxref points at garbage */
	TD_ENTRY,        /* an entry line in the middle of its table is not one */
	TD_PREV,         /* /Prev leads to no section */
	TD_TRAILER,      /* the trailer dictionary is cut off */
	TD_THIRD,        /* a good third revision on top of a broken second one */
	TD_STREAM        /* an xref stream section with a bad /W */
};

/* classic() (revision 1) and a damaged revision 2 on top; *GOOD is where
 * revision 1 ends (after "%%EOF\n"). */
static const char *two_revisions_damaged(enum tail_damage how, int64_t *good, int64_t *total)
{
	pg p;
	pg_ent e[4];
	int64_t x1, x2;
	char tr[160];
	const char *path;
	struct stat st;

	x1 = classic(&p, 0);
	*good = (int64_t)p.b.len;
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 2 R 5 0 R]/Count 2>>");
	pg_obj(&p, 5, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 300]>>");
	pg_obj(&p, 6, 0, "(six)");
	e[0] = pg_used(&p, 2);
	e[1] = pg_used(&p, 5);
	e[2] = pg_used(&p, 6);
	snprintf(tr, sizeof tr, "<</Size 7/Root 1 0 R/Prev %lld>>", how == TD_PREV ? 20LL : (long long)x1);
	switch (how) {
	case TD_STARTXREF:
		pg_table(&p, e, 3, tr);
		p.b.len -= strlen("%%EOF\n") + 1; /* back into the offset of the last startxref */
		while (p.b.data[p.b.len - 1] != '\n')
			p.b.len--;
		ps_buf_printf(&p.b, "%lld\n%%%%EOF\n", (long long)p.off[5] + 3); /* into object 5 */
		break;
	case TD_ENTRY:
	case TD_THIRD:
		x2 = (int64_t)p.b.len;
		/* TD_THIRD: its subsection header is bad too, found at open */
		ps_buf_printf(&p.b, "xref\n5 %s\n%010lld 00000 n\r\n00000abc12 00000 n\r\n0000000000 00001 f\r\n",
		              how == TD_THIRD ? "-3" : "3", (long long)p.off[5]);
		ps_buf_printf(&p.b, "trailer\n%s\nstartxref\n%lld\n%%%%EOF\n", tr, (long long)x2);
		if (how == TD_THIRD) {
			pg_ent e3[1];
			pg_obj(&p, 7, 0, "(seven)");
			e3[0] = pg_used(&p, 7);
			snprintf(tr, sizeof tr, "<</Size 8/Root 1 0 R/Prev %lld>>", (long long)x2);
			pg_table(&p, e3, 1, tr);
		}
		break;
	case TD_PREV:
		pg_table(&p, e, 3, tr);
		break;
	case TD_TRAILER:
		x2 = (int64_t)p.b.len;
		ps_buf_printf(&p.b, "xref\n5 1\n%010lld 00000 n\r\n", (long long)p.off[5]);
		ps_buf_printf(&p.b, "trailer\n<</Size 7/Root 1 0 R/Prev %lld\nstartxref\n%lld\n%%%%EOF\n",
		              (long long)x1, (long long)x2);
		break;
	case TD_STREAM:
		x2 = (int64_t)p.b.len;
		ps_buf_printf(&p.b, "8 0 obj\n<</Type/XRef/Size 9/W[1 0 2]/Index[5 1]/Root 1 0 R/Prev %lld/Length 3>>\n"
		              "stream\n", (long long)x1);
		ps_buf_append(&p.b, "\x01\x00\x00", 3);
		ps_buf_printf(&p.b, "\nendstream\nendobj\nstartxref\n%lld\n%%%%EOF\n", (long long)x2);
		break;
	}
	path = pg_save(&p, dir, "tail.pdf");
	ck_assert_int_eq(stat(path, &st), 0);
	*total = (int64_t)st.st_size;
	return path;
}

/* Every range read ends at or before END (input.c's bookkeeping). */
static void assert_read_within(const ps_doc *d, int64_t end)
{
	size_t i;

	ck_assert(!d->read_ranges_full);
	ck_assert_int_le(d->bytes_read, end);
	for (i = 0; i < d->nread_ranges; i++)
		ck_assert_int_le(d->read_ranges[2 * i + 1], end);
}

static void salvage_case(enum tail_damage how)
{
	int64_t good, total, off = -1, len = -1;
	char whole[256], why[256];
	const char *path = two_revisions_damaged(how, &good, &total);
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	ps_obj *o;
	ps_buf b = PS_BUF_INIT;
	int rc;

	/* without the flag: as before (the entry is found lazily, by the full load) */
	rc = pdfstamp_doc_open(ctx, &doc, path, 0);
	if (how == TD_ENTRY) {
		ck_assert_int_eq(rc, 0);
		rc = ps_xref_load_all(doc);
		pdfstamp_doc_close(doc);
		doc = NULL;
	}
	ck_assert_int_eq(rc, PDFSTAMP_E_FORMAT);
	ck_assert_ptr_null(doc);
	snprintf(whole, sizeof whole, "%s", ctx->errmsg);
	ck_assert_int_gt((int)strlen(whole), 0);

	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, PDFSTAMP_OPEN_SALVAGE), 0);
	ck_assert_int_eq(pdfstamp_doc_damaged_tail(doc, &off, &len, why, sizeof why), 1);
	ck_assert_int_eq(off, good);
	ck_assert_int_eq(len, total - good);
	ck_assert_str_eq(why, whole);
	ck_assert_int_eq(pdfstamp_doc_damaged_tail(doc, NULL, NULL, NULL, 0), 1);
	ck_assert_int_eq(doc->size, good);
	ck_assert_int_eq(doc->xref.nsections, 1);
	ck_assert_int_eq(doc->xref.trailing, 0);
	ck_assert(doc->xref.full);
	assert_read_within(doc, good);
	/* revision 1 as it was: object 2 with one kid, no object 5 */
	ck_assert_int_eq(ps_doc_lookup(doc, 2, &o), 0);
	ck_assert_int_eq(ps_array_len(ps_dict_get(o, "Kids")), 1);
	ck_assert_int_eq(ps_doc_lookup(doc, 5, &o), 0);
	ck_assert_ptr_null(o);
	ck_assert_int_eq(ps_doc_lookup(doc, 4, &o), 0);
	ck_assert_int_eq(o->kind, PS_STR);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.file_size, good);
	ck_assert_int_eq(info.revisions, 1);
	ck_assert_int_le(info.bytes_read, good);
	ck_assert_int_eq(info.has_trailing_bytes, 0);
	pdfstamp_info_clear(&info);
	assert_read_within(doc, good);
	/* the tail is out of reach of every read */
	ck_assert_int_eq(ps_doc_pread(doc, good, 100, &b), 0);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(ps_doc_pread(doc, good + 1, 1, &b), PDFSTAMP_E_FORMAT);
	ps_buf_free(&b);
	assert_read_within(doc, good);
	/* nothing is written on a prefix of the file */
	{
		struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
		ps_update up;
		char out[600];
		snprintf(out, sizeof out, "%s/out.pdf", dir);
		w.output = out;
		ck_assert_int_eq(ps_update_begin(doc, &w, &up), PDFSTAMP_E_USAGE);
		ck_assert_ptr_nonnull(strstr(ctx->errmsg, "salvaged"));
		ps_update_free(&up);
		ck_assert_int_eq(ps_policy_rewrite(doc, PDFSTAMP_REWRITE_FORCE), PDFSTAMP_E_USAGE);
		ck_assert_int_ne(access(out, F_OK), 0);
	}
}

START_TEST(salvage_startxref_at_garbage)
{
	salvage_case(TD_STARTXREF);
}
END_TEST

START_TEST(salvage_bad_entry_line)
{
	salvage_case(TD_ENTRY);
	ck_assert_ptr_nonnull(strstr(doc->damaged_why, "bad entry"));
}
END_TEST

START_TEST(salvage_prev_nowhere)
{
	salvage_case(TD_PREV);
}
END_TEST

START_TEST(salvage_truncated_trailer)
{
	salvage_case(TD_TRAILER);
}
END_TEST

START_TEST(salvage_third_on_broken_second)
{
	salvage_case(TD_THIRD);
	ck_assert_ptr_nonnull(strstr(doc->damaged_why, "subsection header"));
}
END_TEST

START_TEST(salvage_bad_xref_stream)
{
	salvage_case(TD_STREAM);
	ck_assert_ptr_nonnull(strstr(doc->damaged_why, "no offset field"));
}
END_TEST

/* A clean file opens whole with the flag; the flag is read-only. */
START_TEST(salvage_clean_and_usage)
{
	pg p;
	int64_t off = 7, len = 7;
	char why[16] = "x";
	const char *path;

	classic(&p, 0);
	path = pg_save(&p, dir, "clean.pdf");
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, PDFSTAMP_OPEN_SALVAGE | PDFSTAMP_OPEN_WRITE),
	                 PDFSTAMP_E_USAGE);
	ck_assert_ptr_null(doc);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, PDFSTAMP_OPEN_SALVAGE), 0);
	ck_assert_int_eq(pdfstamp_doc_damaged_tail(doc, &off, &len, why, sizeof why), 0);
	ck_assert_int_eq(off, 0);
	ck_assert_int_eq(len, 0);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(pdfstamp_doc_damaged_tail(NULL, &off, NULL, why, sizeof why), 0);
	ck_assert(doc->xref.full); /* every entry read at open */
}
END_TEST

/* Broken in its only (or oldest) revision: no prefix reads, so the
 * whole file's error, code and message. */
START_TEST(salvage_first_revision_broken)
{
	pg p;
	char whole[256];
	const char *path;
	int64_t good, total;
	int k;

	for (k = 0; k < 2; k++) {
		classic(&p, 0);
		if (k == 0) {
			/* startxref at garbage in the only revision */
			p.b.len -= strlen("%%EOF\n");
			while (p.b.data[p.b.len - 1] == '\n' || (p.b.data[p.b.len - 1] >= '0' && p.b.data[p.b.len - 1] <= '9'))
				p.b.len--;
			ps_buf_puts(&p.b, "\n30\n%%EOF\n");
			path = pg_save(&p, dir, "first.pdf");
		} else {
			/* the oldest revision's table is damaged: revision 2 reads, its /Prev fails */
			ps_buf_free(&p.b);
			path = two_revisions_damaged(TD_THIRD, &good, &total);
			/* ... and make revision 1 unreadable too: its table header */
			{
				size_t n;
				uint8_t *d = pg_slurp(path, &n);
				uint8_t *x = (uint8_t *)strstr((char *)d + 20, "xref\n0 5");
				FILE *f;
				ck_assert_ptr_nonnull(x);
				x[5] = 'Z';
				f = fopen(path, "wb");
				ck_assert_uint_eq(fwrite(d, 1, n, f), n);
				ck_assert_int_eq(fclose(f), 0);
				free(d);
			}
		}
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), PDFSTAMP_E_FORMAT);
		snprintf(whole, sizeof whole, "%s", ctx->errmsg);
		ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, PDFSTAMP_OPEN_SALVAGE), PDFSTAMP_E_FORMAT);
		ck_assert_ptr_null(doc);
		ck_assert_int_eq(ctx->errcode, PDFSTAMP_E_FORMAT);
		ck_assert_str_eq(ctx->errmsg, whole);
	}
}
END_TEST

static int nwarn;
static void count_warn(void *ud, const char *msg)
{
	(void)ud;
	if (strstr(msg, "journal"))
		nwarn++;
}

/* A pending journal: one warning, nothing touched, as for any read-only open. */
START_TEST(salvage_with_pending_journal)
{
	int64_t good, total;
	const char *path = two_revisions_damaged(TD_STARTXREF, &good, &total);
	char jp[600];
	FILE *f;
	struct stat st;

	snprintf(jp, sizeof jp, "%s.pdfstamp-journal", path);
	f = fopen(jp, "wb");
	ck_assert_ptr_nonnull(f);
	fputs("not a journal", f);
	ck_assert_int_eq(fclose(f), 0);
	nwarn = 0;
	pdfstamp_ctx_set_warn(ctx, count_warn, NULL);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, PDFSTAMP_OPEN_SALVAGE), 0);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_int_eq(pdfstamp_doc_damaged_tail(doc, NULL, NULL, NULL, 0), 1);
	ck_assert_int_eq(stat(jp, &st), 0);
	ck_assert_int_eq(st.st_size, 13);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, total);
	unlink(jp);
}
END_TEST

/* An AES-256 sample with a damaged revision appended: the prefix
 * authenticates and reads, nothing past it is read. */
START_TEST(salvage_encrypted)
{
	char src[600];
	uint8_t *d;
	size_t n;
	ps_buf b = PS_BUF_INIT;
	const char *path;
	int64_t off = 0;
	ps_obj *root = NULL;
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;

	snprintf(src, sizeof src, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	d = pg_slurp(src, &n);
	ps_buf_append(&b, d, n);
	free(d);
	ps_buf_printf(&b, "99 0 obj\n(junk)\nendobj\nxref\n99 1\nnot an entry at all\ntrailer\n<</Size 100>>\n"
	              "startxref\n%zu\n%%%%EOF\n", n + 23);
	{
		pg p;
		memset(&p, 0, sizeof p);
		p.b = b;
		path = pg_save(&p, dir, "enc.pdf");
	}
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, PDFSTAMP_OPEN_SALVAGE), 0);
	ck_assert_int_eq(pdfstamp_doc_damaged_tail(doc, &off, NULL, NULL, 0), 1);
	ck_assert_int_eq(off, (int64_t)n);
	ck_assert_int_eq(pdfstamp_doc_is_encrypted(doc), 1);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, "sample-user", 11, 0), 0);
	ck_assert_int_eq(doc->authenticated, 1);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL), 0);
	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	ck_assert_int_eq(info.pages, 2);
	ck_assert_int_eq(info.file_size, (int64_t)n);
	pdfstamp_info_clear(&info);
	assert_read_within(doc, (int64_t)n);
}
END_TEST

/* doc.h's and input.h's view of the document, which every module outside
 * the reader has instead of the fields: each tells what the fields hold,
 * the cache walk sees every object looked up once, the as-of budget
 * counts and refuses past its cap, a re-read shares the security state. */
START_TEST(accessors_tell_the_fields)
{
	char src[600];
	struct ps_doc_security ds;
	struct ps_doc_file f;
	ps_doc *v = NULL;
	const ps_obj *o;
	ps_obj *root = NULL;
	uint32_t num, seen = 0;
	size_t pos = 0, n = 0;
	pg p;

	/* plaintext: no handler, nothing to share */
	classic(&p, 0);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, pg_save(&p, dir, "plain.pdf"), PDFSTAMP_OPEN_WRITE), 0);
	ck_assert_ptr_eq(ps_doc_ctx(doc), ctx);
	ck_assert_int_eq(ps_doc_size(doc), doc->size);
	ps_doc_file(doc, &f);
	ck_assert_int_eq(f.fd, doc->fd);
	ck_assert_str_eq(f.path, doc->path);
	ck_assert_int_eq(f.locked, 1);
	ps_doc_security(doc, &ds);
	ck_assert_ptr_null(ds.sec);
	ck_assert_int_eq(ds.authenticated, 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, "x", 1, 0), 0);
	ps_doc_security(doc, &ds);
	ck_assert_int_eq(ds.password_given, 1);
	/* the cache: objects 1 to 4, each once */
	ck_assert_int_eq(ps_doc_pages(doc, &root, NULL, NULL), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 3, &root), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, 4, &root), 0);
	while (ps_doc_cached_next(doc, &pos, &num, &o)) {
		ck_assert_ptr_nonnull(o);
		ck_assert_uint_eq(seen & (1u << num), 0);
		seen |= 1u << num;
		n++;
	}
	ck_assert_uint_eq(n, doc->ncache);
	ck_assert_uint_eq(seen, 0x1e);
	ck_assert_int_eq(ps_doc_cached_next(doc, &pos, &num, &o), 0);
	/* the as-of budget: counted against the cap, refused past it */
	ps_doc_asof_cap(doc, 100);
	ck_assert_int_eq(ps_doc_asof_charge(doc, 100), 0);
	ck_assert_int_eq(ps_doc_asof_charge(doc, 1), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(pdfstamp_ctx_errmsg(ctx), "100 bytes"));
	ps_doc_asof_cap(doc, 0);
	ck_assert_int_eq(ps_doc_asof_charge(doc, INT64_MAX / 2), 0);
	pdfstamp_doc_close(doc);
	doc = NULL;

	/* AES-256: the handler, the /Encrypt number, the authentication, and
	 * a PS_OPEN_NEWEST_ONLY re-read given the same state */
	snprintf(src, sizeof src, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	ck_assert_int_eq(ps_doc_open(ctx, &doc, src, 0), 0);
	ps_doc_security(doc, &ds);
	ck_assert_ptr_eq(ds.sec, doc->sec);
	ck_assert_ptr_nonnull(ds.sec);
	ck_assert_uint_eq(ds.encrypt_num, doc->encrypt_num);
	ck_assert_int_eq(ds.authenticated, 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, "sample-owner", 12, 0), 0);
	ps_doc_security(doc, &ds);
	ck_assert_int_eq(ds.authenticated, 2);
	ck_assert_int_eq(ds.perms, doc->perms);
	ck_assert_int_eq(ps_doc_open(ctx, &v, src, PS_OPEN_NO_RECOVER | PS_OPEN_NEWEST_ONLY), 0);
	ps_doc_security(v, &ds);
	ck_assert_ptr_null(ds.sec);
	ck_assert_int_eq(ps_doc_share_security(v, doc), 0);
	ps_doc_security(v, &ds);
	ck_assert_ptr_nonnull(ds.sec);
	ck_assert_uint_eq(ds.encrypt_num, doc->encrypt_num);
	ck_assert_int_eq(ds.authenticated, 2);
	ck_assert_int_eq(ps_doc_catalog(v, PS_CATALOG_DICT, &root, NULL), 0);
	pdfstamp_doc_close(v);
}
END_TEST

static Suite *doc_suite(void)
{
	Suite *s = suite_create("doc");
	TCase *tc = tcase_create("open and lookup");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, classic_lookup_resolve_generations);
	tcase_add_test(tc, xref_stream_and_object_stream);
	tcase_add_test(tc, asof_decode_cap);
	tcase_add_test(tc, two_revisions);
	tcase_add_test(tc, bytes_read_counts_what_was_read);
	tcase_add_test(tc, parse_at_checks_the_number);
	tcase_add_test(tc, large_object_grows_the_window);
	tcase_add_test(tc, damaged_offset_mid_object);
	tcase_add_test(tc, damaged_offset_other_object);
	tcase_add_test(tc, damaged_offset_past_end);
	tcase_add_test(tc, open_refusals);
	tcase_add_test(tc, not_a_pdf_says_so);
	tcase_add_test(tc, salvage_startxref_at_garbage);
	tcase_add_test(tc, salvage_bad_entry_line);
	tcase_add_test(tc, salvage_prev_nowhere);
	tcase_add_test(tc, salvage_truncated_trailer);
	tcase_add_test(tc, salvage_third_on_broken_second);
	tcase_add_test(tc, salvage_bad_xref_stream);
	tcase_add_test(tc, salvage_clean_and_usage);
	tcase_add_test(tc, salvage_first_revision_broken);
	tcase_add_test(tc, salvage_with_pending_journal);
	tcase_add_test(tc, salvage_encrypted);
	tcase_add_test(tc, accessors_tell_the_fields);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(doc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
