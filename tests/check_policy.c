/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_policy.c - permissions and signature policy (policy.c) and the
 * catalog / page tree helpers it stands on (doc.c ps_doc_catalog,
 * ps_doc_pages).
 *
 * Every document is written by the test (pdfgen.c): plaintext files with
 * DocMDP certifications (/Root /Perms /DocMDP and the signature field's
 * /V), approval signatures, /SigFlags AppendOnly, a field tree too deep to
 * walk; encrypted ones are made from them with pdfstamp_encrypt and a
 * restricted /P, then opened with the user password, the owner password
 * or none.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps.h"
#include "policy.h"
#include "pdfgen.h"

#define USER_PW "policy-user"
#define OWNER_PW "policy-owner"

/* /P with no optional permission (Table 22): bits 7-8, 10 and 13-32 set. */
#define P_NONE ((int64_t)(int32_t)(0xFFFFF0C0u | (1u << 9)))

static char dir[64], path[160], encpath[160];
static ps_ctx *ctx;
static ps_doc *doc;
static int nwarn;
static char lastwarn[512];

static void on_warn(void *ud, const char *msg)
{
	(void)ud;
	nwarn++;
	snprintf(lastwarn, sizeof lastwarn, "%s", msg);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_policy-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/in.pdf", dir);
	snprintf(encpath, sizeof encpath, "%s/enc.pdf", dir);
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	pdfstamp_ctx_set_warn(ctx, on_warn, NULL);
	doc = NULL;
	nwarn = 0;
	lastwarn[0] = 0;
}

static void teardown(void)
{
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	unlink(path);
	unlink(encpath);
	rmdir(dir);
}

static void open_path(const char *p)
{
	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, p, 0), 0);
}

/* How DOC was opened, as pdfstamp_doc_info reports it: 0, 1 user, 2 owner. */
static int auth_as(void)
{
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	int as;

	ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
	as = info.authenticated_as;
	pdfstamp_info_clear(&info);
	return as;
}

/* Catalog 1 (with CATALOG_EXTRA), page tree 2, page 3, /Info 4; the
 * tests' own objects start at 7. */
static void basic(pg *p, const char *catalog_extra)
{
	pg_start(p);
	pg_obj(p, 1, 0, "<</Type/Catalog/Pages 2 0 R%s>>", catalog_extra);
	pg_obj(p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]>>");
	pg_obj(p, 4, 0, "<</Producer(check_policy)>>");
}

static int has_msg(const char *s)
{
	return strstr(pdfstamp_ctx_errmsg(ctx), s) != NULL;
}

/* ---- permission names and lists ---------------------------------------------- */

START_TEST(perm_names)
{
	static const struct { int bit; const char *name; } want[] = {
		{3, "print"}, {4, "modify"}, {5, "copy"}, {6, "annotate"},
		{9, "fill-forms"}, {10, "extract"}, {11, "assemble"}, {12, "print-high"},
	};
	int bit, named = 0;
	size_t i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_str_eq(pdfstamp_perm_name(want[i].bit), want[i].name);
	for (bit = -1; bit <= 40; bit++)
		named += pdfstamp_perm_name(bit) != NULL;
	ck_assert_int_eq(named, 8);
	ck_assert_ptr_null(pdfstamp_perm_name(1));
	ck_assert_ptr_null(pdfstamp_perm_name(7));
	ck_assert_ptr_null(pdfstamp_perm_name(13));
	ck_assert_ptr_null(pdfstamp_perm_name(32));
}
END_TEST

START_TEST(parse_each_name)
{
	int64_t p;
	int bit;

	/* each name sets exactly its own bit on top of "none" */
	for (bit = 1; bit <= 32; bit++) {
		const char *name = pdfstamp_perm_name(bit);
		if (!name)
			continue;
		ck_assert_int_eq(pdfstamp_parse_permissions(ctx, name, &p), 0);
		ck_assert_int_eq((uint32_t)p, (uint32_t)P_NONE | (1u << (bit - 1)));
		ck_assert_int_lt(p, 0); /* signed 32-bit: bit 32 is set */
	}
}
END_TEST

START_TEST(parse_lists)
{
	int64_t p = 12345, q;

	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "none", &p), 0);
	ck_assert_int_eq(p, P_NONE);
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "all", &p), 0);
	ck_assert_int_eq(p, -4);
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "print,copy,annotate", &p), 0);
	ck_assert_int_eq((uint32_t)p, (uint32_t)P_NONE | 1u << 2 | 1u << 4 | 1u << 5);
	/* duplicates and order do not matter */
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "annotate,print,copy,print,annotate", &q), 0);
	ck_assert_int_eq(q, p);
	/* every name: "all" but bits 1-2 */
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "print,modify,copy,annotate,fill-forms,extract,"
	                                                 "assemble,print-high", &p), 0);
	ck_assert_int_eq(p, -4);
	/* a trailing comma ends the list */
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "print,", &p), 0);
	ck_assert_int_eq((uint32_t)p, (uint32_t)P_NONE | 1u << 2);
}
END_TEST

START_TEST(parse_bad_names)
{
	static const char *const bad[] = {
		"bogus", "print,bogus", "Print", "prin", "printx", "print,,copy", ",print", "print copy",
		"none,print", "all,print", "",
	};
	size_t i;
	int64_t p;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		p = 777;
		if (!*bad[i]) {
			/* the empty list: no name at all, the same as "none" */
			ck_assert_int_eq(pdfstamp_parse_permissions(ctx, bad[i], &p), 0);
			ck_assert_int_eq(p, P_NONE);
			continue;
		}
		ck_assert_msg(pdfstamp_parse_permissions(ctx, bad[i], &p) == PDFSTAMP_E_USAGE, "accepted '%s'", bad[i]);
		ck_assert_int_eq(p, 777); /* untouched */
		ck_assert(has_msg("unknown permission '"));
		ck_assert(has_msg("use print, modify, copy, annotate, fill-forms, extract, assemble, print-high, all or none"));
	}
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "print,bogus,copy", &p), PDFSTAMP_E_USAGE);
	ck_assert(has_msg("unknown permission 'bogus'"));
	/* a long name is cut to 40 characters in the message */
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", &p),
	                 PDFSTAMP_E_USAGE);
	ck_assert(has_msg("'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"));
}
END_TEST

/* ---- ps_policy_permits --------------------------------------------------------------- */

/* The basic document, encrypted to ENCPATH with permissions LIST. */
static void make_encrypted(const char *list)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	pg p;

	basic(&p, "");
	pg_save_table(&p, "/Info 4 0 R", dir, "in.pdf");
	open_path(path);
	o.output = encpath;
	o.user_password = USER_PW;
	o.user_len = strlen(USER_PW);
	o.owner_password = OWNER_PW;
	o.owner_len = strlen(OWNER_PW);
	o.set_permissions = 1;
	o.jobs = 1;
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, list, &o.permissions), 0);
	ck_assert_int_eq(pdfstamp_encrypt(doc, &o, NULL), 0);
	open_path(encpath);
}

START_TEST(permits_plaintext)
{
	pg p;
	int bit;

	basic(&p, "");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	for (bit = 1; bit <= 32; bit++)
		ck_assert_int_eq(ps_policy_permits(doc, bit), 1);
	ck_assert_int_eq(ps_policy_kept_p(doc), -4);
}
END_TEST

START_TEST(permits_user)
{
	int64_t want;
	int bit;

	make_encrypted("print,fill-forms");
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "print,fill-forms", &want), 0);
	/* not authenticated: nothing */
	for (bit = 1; bit <= 32; bit++)
		ck_assert_int_eq(ps_policy_permits(doc, bit), 0);
	ck_assert_int_eq(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0), 0);
	ck_assert_int_eq(auth_as(), 1);
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_PRINT), 1);
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_FILL_FORMS), 1);
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_EXTRACT), 1); /* always written as 1 */
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_MODIFY), 0);
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_COPY), 0);
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_ANNOTATE), 0);
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_ASSEMBLE), 0);
	ck_assert_int_eq(ps_policy_permits(doc, PS_PERM_PRINT_HIGH), 0);
	ck_assert_int_eq(ps_policy_permits(doc, 1), 0);
	ck_assert_int_eq(ps_policy_permits(doc, 2), 0);
	ck_assert_int_eq(ps_policy_permits(doc, 32), 1);
	ck_assert_int_eq(ps_policy_permits(doc, 0), 0);
	ck_assert_int_eq(ps_policy_permits(doc, 33), 0);
	ck_assert_int_eq(ps_policy_kept_p(doc), want);
}
END_TEST

START_TEST(permits_owner)
{
	int64_t want;
	int bit;

	make_encrypted("none");
	ck_assert_int_eq(pdfstamp_doc_auth(doc, OWNER_PW, strlen(OWNER_PW), 0), 0);
	ck_assert_int_eq(auth_as(), 2);
	for (bit = 1; bit <= 32; bit++)
		ck_assert_int_eq(ps_policy_permits(doc, bit), 1);
	/* a rewrite keeps the file's /P, not the owner's rights */
	ck_assert_int_eq(pdfstamp_parse_permissions(ctx, "none", &want), 0);
	ck_assert_int_eq(ps_policy_kept_p(doc), want);
}
END_TEST

/* ---- the pre-flight of stamp and meta ------------------------------------------ */

START_TEST(check_permission_bits)
{
	make_encrypted("print,modify");
	ck_assert_int_eq(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0), 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), PDFSTAMP_E_PERM);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "the document does not permit adding annotations (permission "
	                 "bit 6 is clear); the owner password is needed");
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), 0);

	make_encrypted("print,annotate");
	ck_assert_int_eq(pdfstamp_doc_auth(doc, USER_PW, strlen(USER_PW), 0), 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "the document does not permit modifying it (permission bit 4 "
	                 "is clear); the owner password is needed");

	/* the owner password lifts both */
	ck_assert_int_eq(pdfstamp_doc_auth(doc, OWNER_PW, strlen(OWNER_PW), 0), 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), 0);
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

#define SIGDICT "<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/adbe.pkcs7.detached/ByteRange[0 10 20 30]/Contents<0badf00d>%s>>"
#define DOCMDP_REF "/Reference[<</Type/SigRef/TransformMethod/DocMDP/TransformParams<</Type/TransformParams%s/V/1.2>>>>]"

/* A plaintext file with one signature field (7) whose value (8) carries
 * SIG_EXTRA; CERTIFY puts it at /Root /Perms /DocMDP too. */
static void make_signed(const char *sig_extra, int certify, int in_field)
{
	pg p;
	char cat[256];

	snprintf(cat, sizeof cat, "%s%s", certify ? "/Perms<</DocMDP 8 0 R>>" : "",
	         in_field ? "/AcroForm<</Fields[7 0 R]/SigFlags 3>>" : "");
	basic(&p, cat);
	pg_obj(&p, 7, 0, "<</FT/Sig/T(Signature1)/V 8 0 R/Type/Annot/Subtype/Widget/Rect[0 0 0 0]/P 3 0 R>>");
	pg_obj(&p, 8, 0, SIGDICT, sig_extra);
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
}

static void certified(int level)
{
	char ref[256], tp[32];

	snprintf(tp, sizeof tp, "/P %d", level);
	snprintf(ref, sizeof ref, DOCMDP_REF, tp);
	make_signed(ref, 1, 1);
}

START_TEST(docmdp_p1)
{
	certified(1);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), PDFSTAMP_E_PERM);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "the document is certified with DocMDP P=1 (no changes allowed); "
	                 "adding annotations breaks the certification");
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "the document is certified with DocMDP P=1 (no changes allowed); "
	                 "changing metadata breaks the certification");
	/* a DSS is not a change under any level (ISO 32000-2 Table 257, /P) */
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_DSS), 0);
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

START_TEST(docmdp_p2)
{
	certified(2);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), PDFSTAMP_E_PERM);
	ck_assert(has_msg("DocMDP P=2 (form filling and signing only); adding annotations breaks the certification"));
	ck_assert_int_eq(nwarn, 0);
	/* metadata is not among Table 257's permitted changes (issue 15: the
	 * pre-flight refuses what `audit` calls a violation) */
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
	ck_assert(has_msg("changing metadata breaks the certification"));
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_DSS), 0);
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

START_TEST(docmdp_p3)
{
	certified(3);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), 0);
	ck_assert_int_eq(nwarn, 1);
	ck_assert(strstr(lastwarn, "DocMDP P=3") != NULL);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
	ck_assert(has_msg("DocMDP P=3"));
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_DSS), 0);
	ck_assert_int_eq(nwarn, 1);
}
END_TEST

START_TEST(docmdp_default_and_range)
{
	/* a DocMDP transform without /P means P=2 (Table 257), and so does a
	 * /P out of range or not a number */
	static const char *const params[] = {"", "/P 7", "/P 0", "/P -1", "/P(1)"};
	char ref[256];
	size_t i;

	for (i = 0; i < sizeof params / sizeof params[0]; i++) {
		snprintf(ref, sizeof ref, DOCMDP_REF, params[i]);
		make_signed(ref, 1, 1);
		ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), PDFSTAMP_E_PERM);
		ck_assert_msg(has_msg("DocMDP P=2"), "%s: %s", params[i], pdfstamp_ctx_errmsg(ctx));
	}
	/* a certification without any DocMDP reference: P=2 as well */
	make_signed("", 1, 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), PDFSTAMP_E_PERM);
	ck_assert(has_msg("DocMDP P=2"));
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
	/* and its field's signature is that certification, not an approval */
	make_signed("", 1, 1);
	{
		struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
		ck_assert_int_eq(pdfstamp_doc_info(doc, &info), 0);
		ck_assert_int_eq(info.nsigs, 1);
		ck_assert_int_eq(info.sigs[0].docmdp, 2);
		pdfstamp_info_clear(&info);
	}
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_DSS), 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
}
END_TEST

START_TEST(docmdp_perms_only)
{
	/* the certification counts where /Root /Perms puts it, even with no
	 * field pointing at it */
	char ref[256];

	snprintf(ref, sizeof ref, DOCMDP_REF, "/P 1");
	make_signed(ref, 1, 0);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
	ck_assert(has_msg("DocMDP P=1"));
	/* and a DocMDP signature in the field tree counts without /Perms */
	make_signed(ref, 0, 1);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_PERM);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "signature object 8 is DocMDP P=1 (no changes allowed); "
	                 "changing metadata breaks it");
}
END_TEST

START_TEST(approval_signature)
{
	make_signed("", 0, 1);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), 0);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_str_eq(lastwarn, "signature object 8 stays valid (its bytes are untouched), but strict validators "
	                 "report added annotations as a modification");
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), 0);
	ck_assert_int_eq(nwarn, 2);
	ck_assert(strstr(lastwarn, "report added metadata as a modification") != NULL);
}
END_TEST

START_TEST(unknown_policy)
{
	pg p;
	int i;

	/* a field tree deeper than the walk's stack */
	basic(&p, "/AcroForm<</Fields[7 0 R]>>");
	for (i = 7; i < 30; i++)
		pg_obj(&p, i, 0, "<</T(f%d)/Kids[%d 0 R]>>", i, i + 1);
	pg_obj(&p, 30, 0, "<</T(leaf)/FT/Tx>>");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_METADATA), PDFSTAMP_E_UNSUPPORTED);
	ck_assert(has_msg("nested too deeply"));
	/* /Perms /DocMDP that is not a signature dictionary */
	basic(&p, "/Perms<</DocMDP 7 0 R>>");
	pg_obj(&p, 7, 0, "42");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), PDFSTAMP_E_UNSUPPORTED);
	/* a field tree with a cycle */
	basic(&p, "/AcroForm<</Fields[7 0 R]>>");
	pg_obj(&p, 7, 0, "<</T(a)/Kids[7 0 R 7 0 R]>>");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_lt(ps_preflight_update(doc, PS_UPDATE_METADATA), 0);
}
END_TEST

START_TEST(signatures_listed)
{
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	pg p;
	char ref[256], sig[512];

	snprintf(ref, sizeof ref, DOCMDP_REF, "/P 3");
	basic(&p, "/Perms<</DocMDP 8 0 R>>/AcroForm<</Fields[7 0 R 9 0 R]/SigFlags 3>>");
	pg_obj(&p, 7, 0, "<</FT/Sig/T(cert)/V 8 0 R>>");
	pg_obj(&p, 8, 0, SIGDICT, ref);
	pg_obj(&p, 9, 0, "<</T(group)/Kids[10 0 R]>>");
	pg_obj(&p, 10, 0, "<</FT/Sig/T(approval)/V 11 0 R>>");
	snprintf(sig, sizeof sig, "<</Type/Sig/SubFilter/ETSI.CAdES.detached/ByteRange[0 1 2 3]/Contents<00>>>");
	pg_obj(&p, 11, 0, "%s", sig);
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_policy_signatures(doc, &info), 0);
	ck_assert_int_eq(info.nsigs, 2);
	ck_assert_int_eq(info.docmdp, 3);
	ck_assert_int_eq(info.sigs_incomplete, 0);
	ck_assert_int_eq(info.sigs[0].objnum, 8);
	ck_assert_int_eq(info.sigs[0].docmdp, 3);
	ck_assert_str_eq(info.sigs[0].subfilter, "adbe.pkcs7.detached");
	ck_assert_int_eq(info.sigs[1].objnum, 11);
	ck_assert_int_eq(info.sigs[1].docmdp, 0);
	ck_assert_str_eq(info.sigs[1].subfilter, "ETSI.CAdES.detached");
	pdfstamp_info_clear(&info);
	/* P=3 and an approval signature: both warned about, nothing refused */
	ck_assert_int_eq(ps_preflight_update(doc, PS_UPDATE_ANNOTATION), 0);
	ck_assert_int_eq(nwarn, 2);
}
END_TEST

/* ---- the pre-flight of a full rewrite ------------------------------------------ */

START_TEST(rewrite_signed)
{
	make_signed("", 0, 1);
	ck_assert_int_eq(ps_policy_rewrite(doc, 0), PDFSTAMP_E_PERM);
	/* the problem in the message, the setting that lifts it in the hint */
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "the document is signed; a full rewrite invalidates every "
	                 "signature");
	ck_assert_int_eq(pdfstamp_ctx_errhint(ctx), PDFSTAMP_HINT_REWRITE_FORCE);
	ck_assert_int_eq(nwarn, 0);
	ck_assert_int_eq(ps_policy_rewrite(doc, PDFSTAMP_REWRITE_FORCE), 0);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_str_eq(lastwarn, "rewriting a signed document: its 1 signature(s) will no longer validate");
}
END_TEST

START_TEST(rewrite_append_only)
{
	pg p;

	basic(&p, "/AcroForm<</Fields[]/SigFlags 2>>");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_policy_rewrite(doc, 0), PDFSTAMP_E_PERM);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "the document is marked append-only (/SigFlags AppendOnly); a "
	                 "full rewrite invalidates every signature");
	ck_assert_int_eq(pdfstamp_ctx_errhint(ctx), PDFSTAMP_HINT_REWRITE_FORCE);
	ck_assert_int_eq(ps_policy_rewrite(doc, PDFSTAMP_REWRITE_FORCE), 0);
	ck_assert_int_eq(nwarn, 0); /* no signature to lose */
	/* SignaturesExist alone (bit 1) does not make it append-only */
	basic(&p, "/AcroForm<</Fields[]/SigFlags 1>>");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_policy_rewrite(doc, 0), 0);
	/* neither does a document without a form */
	basic(&p, "");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_policy_rewrite(doc, 0), 0);
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

/* ---- the catalog and the page tree (doc.c) ------------------------------------ */

START_TEST(catalog_and_pages)
{
	pg p;
	ps_obj *root = NULL, *ref = NULL, *pages = NULL;
	int64_t n = -1;

	basic(&p, "");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_INDIRECT, &root, &ref), 0);
	ck_assert(ps_obj_is_name(ps_dict_get(root, "Type"), "Catalog"));
	ck_assert_int_eq(ref->kind, PS_REF);
	ck_assert_uint_eq(ref->u.ref.num, 1);
	ck_assert_int_eq(ps_doc_pages(doc, &pages, &ref, &n), 0);
	ck_assert_int_eq(n, 1);
	ck_assert(ps_obj_is_name(ps_dict_get(pages, "Type"), "Pages"));
	ck_assert_uint_eq(ref->u.ref.num, 2);

	/* /Root that is a number */
	pg_start(&p);
	pg_obj(&p, 1, 0, "5");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_ANY, &root, &ref), 0);
	ck_assert_int_eq(root->kind, PS_INT);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL), PDFSTAMP_E_FORMAT);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "/Root is not a dictionary");
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_INDIRECT, &root, NULL), PDFSTAMP_E_FORMAT);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "/Root is not an indirect dictionary");
	ck_assert_int_eq(ps_doc_pages(doc, &pages, NULL, &n), PDFSTAMP_E_FORMAT);
	ck_assert_str_eq(pdfstamp_ctx_errmsg(ctx), "the page tree root has no valid /Count");

	/* a page tree root with a negative /Count */
	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[]/Count -1>>");
	pg_save_table(&p, "", dir, "in.pdf");
	open_path(path);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL), 0);
	ck_assert_int_eq(ps_doc_pages(doc, NULL, NULL, &n), PDFSTAMP_E_FORMAT);
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("permissions");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, perm_names);
	tcase_add_test(tc, parse_each_name);
	tcase_add_test(tc, parse_lists);
	tcase_add_test(tc, parse_bad_names);
	tcase_add_test(tc, permits_plaintext);
	tcase_add_test(tc, permits_user);
	tcase_add_test(tc, permits_owner);
	tcase_add_test(tc, check_permission_bits);
	suite_add_tcase(s, tc);

	tc = tcase_create("signatures");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, docmdp_p1);
	tcase_add_test(tc, docmdp_p2);
	tcase_add_test(tc, docmdp_p3);
	tcase_add_test(tc, docmdp_default_and_range);
	tcase_add_test(tc, docmdp_perms_only);
	tcase_add_test(tc, approval_signature);
	tcase_add_test(tc, unknown_policy);
	tcase_add_test(tc, signatures_listed);
	tcase_add_test(tc, rewrite_signed);
	tcase_add_test(tc, rewrite_append_only);
	tcase_add_test(tc, catalog_and_pages);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(policy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
