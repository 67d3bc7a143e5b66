/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_sigcms.c - whether a signature's CMS signs its /ByteRange bytes
 * (sigcms.c).  The signed files are written byte by byte (pdfgen) with a
 * /Contents placeholder; the CMS in them is made in the run by openssl
 * (`openssl cms -sign`, `openssl ts -reply`) from keys generated in the
 * run (P-256, RSA 2048, RSA-PSS), never committed.  A last case signs with
 * poppler's pdfsig from a throwaway NSS database (as tests/e2e/signed.sh),
 * plain and on an encrypted sample.  Cases whose tool is missing are
 * skipped with a message.
 */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ps.h"
#include "policy.h"
#include "sigcms.h"
#include "pdfgen.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif

#define NHEX 1900   /* /Contents placeholder: bytes (pdfgen bodies are at most 4 KB) */

static const char *dir;
static ps_ctx *ctx;
static ps_doc *doc;

static void setup(void)
{
	dir = pg_tmpdir("check_sigcms");
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	doc = NULL;
}

static void teardown(void)
{
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	pg_rmdir(dir);
}

/* Runs a shell command (printf-style) in the temporary directory: its
 * exit status. */
static int sh(const char *fmt, ...) PS_PRINTF(1, 2);
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	int n, rc;
	va_list ap;

	n = snprintf(cmd, sizeof cmd, "cd '%s' && ( ", dir);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
	va_end(ap);
	strncat(cmd, " ) >>tool.log 2>&1", sizeof cmd - strlen(cmd) - 1);
	rc = system(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

static int have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static void write_file(const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static uint8_t *read_file(const char *name, size_t *n)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return pg_slurp(path, n);
}

/* A one-page file whose object 8 is a signature dictionary with DICT's
 * keys, a zero /Contents of NHEX bytes and a /ByteRange around it that
 * ends at the file's end. */
struct sf {
	uint8_t *b;
	size_t n;
	size_t a, gb;    /* the gap: [a, gb) is "<...>" */
	size_t cap;      /* /Contents bytes */
};

static void make_n(struct sf *f, const char *dict, size_t cap)
{
	static char zeros[2 * NHEX + 1];
	pg p;
	pg_ent e[9];
	uint32_t i;
	char tmp[64];
	size_t k;

	ck_assert_uint_le(cap, NHEX);
	memset(zeros, 0, sizeof zeros);
	memset(zeros, '0', 2 * cap);
	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[7 0 R]/SigFlags 3>>>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R/Annots[7 0 R]>>");
	pg_obj(&p, 4, 0, "<</Producer(check_sigcms)>>");
	pg_stream(&p, 5, "", "BT ET", 5);
	pg_obj(&p, 6, 0, "null");
	pg_obj(&p, 7, 0, "<</Type/Annot/Subtype/Widget/FT/Sig/T(Sig1)/V 8 0 R/Rect[0 0 0 0]/P 3 0 R>>");
	pg_obj(&p, 8, 0, "<</Type/Sig/Filter/Adobe.PPKLite%s/ByteRange[0 0000000000 0000000000 0000000000]          "
	       "/Contents<%s>>>", dict, zeros);
	memset(e, 0, sizeof e);
	for (i = 1; i <= 8; i++)
		e[i] = pg_used(&p, i);
	e[0].f3 = 65535;
	pg_table(&p, e, 9, "<</Size 9/Root 1 0 R/Info 4 0 R>>");
	ck_assert(!p.b.oom);
	f->b = ps_buf_detach(&p.b, &f->n);
	ck_assert_ptr_nonnull(f->b);
	for (k = 0; k + 10 <= f->n && memcmp(f->b + k, "/Contents<", 10) != 0; k++)
		;
	ck_assert_uint_lt(k + 10, f->n);
	f->a = k + 9;
	f->gb = f->a + 2 * cap + 2;
	f->cap = cap;
	for (k = 0; k + 13 <= f->n && memcmp(f->b + k, "/ByteRange[0 ", 13) != 0; k++)
		;
	snprintf(tmp, sizeof tmp, "%010zu %010zu %010zu", f->a, f->gb, f->n - f->gb);
	memcpy(f->b + k + 13, tmp, strlen(tmp));
}

static void make(struct sf *f, const char *dict)
{
	make_n(f, dict, NHEX);
}

/* Changes one signed byte without making the file unreadable: a white
 * space byte after the /ByteRange array's last number becomes a tab (the
 * same byte again changes it back). */
static void flip(uint8_t *b, size_t n)
{
	size_t k;

	for (k = 0; k + 11 < n && memcmp(b + k, "/ByteRange", 10) != 0; k++)
		;
	while (k < n && b[k] != ']')
		k++;
	ck_assert_uint_lt(k + 1, n);
	if (b[k - 1] == ' ' || b[k - 1] == '\t')
		k--;
	else
		k++;
	ck_assert_msg(b[k] == ' ' || b[k] == '\t', "no white space beside the /ByteRange's ']'");
	b[k] = b[k] == ' ' ? '\t' : ' ';
}

/* The signed bytes into DIR/NAME. */
static void signed_bytes(const struct sf *f, const char *name)
{
	uint8_t *d = malloc(f->n);

	ck_assert_ptr_nonnull(d);
	memcpy(d, f->b, f->a);
	memcpy(d + f->a, f->b + f->gb, f->n - f->gb);
	write_file(name, d, f->a + f->n - f->gb);
	free(d);
}

/* DER[0..N) into the placeholder, in hex (the rest stays zero padding). */
static void put_der(struct sf *f, const uint8_t *der, size_t n)
{
	size_t i;

	ck_assert_uint_le(n, f->cap);
	memset(f->b + f->a + 1, '0', 2 * f->cap);
	for (i = 0; i < n; i++) {
		f->b[f->a + 1 + 2 * i] = "0123456789ABCDEF"[der[i] >> 4];
		f->b[f->a + 2 + 2 * i] = "0123456789ABCDEF"[der[i] & 15];
	}
}

static void put_file(struct sf *f, const char *name)
{
	size_t n;
	uint8_t *der = read_file(name, &n);

	ck_assert_msg(der != NULL, "%s was not made (see %s/tool.log)", name, dir);
	put_der(f, der, n);
	free(der);
}

/* Saves F's bytes, opens them and checks signature object NUM. */
static void check_path(const char *path, const char *pw, uint32_t num, struct ps_sigcms *out)
{
	ps_obj *sig;

	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), 0);
	if (pw)
		ck_assert_int_eq(pdfstamp_doc_auth(doc, pw, strlen(pw), 0), 0);
	ck_assert_int_eq(ps_doc_lookup(doc, num, &sig), 0);
	ck_assert_ptr_nonnull(sig);
	ck_assert_int_eq(ps_sigcms_check(doc, sig, out), 0);
}

static void check(const struct sf *f, struct ps_sigcms *out)
{
	char path[512];

	write_file("t.pdf", f->b, f->n);
	snprintf(path, sizeof path, "%s/t.pdf", dir);
	check_path(path, NULL, 8, out);
}

#define NEED(tool)                                                          \
	do {                                                                  \
		if (!have(tool)) {                                            \
			fprintf(stderr, "check_sigcms: %s missing, case skipped\n", tool); \
			return;                                               \
		}                                                             \
	} while (0)

/* A self-signed signer: ec (P-256), rsa (2048) or tsa (P-256 with the
 * critical timeStamping extended key usage, RFC 3161 2.3). */
static void keys(const char *kind)
{
	if (strcmp(kind, "ec") == 0)
		ck_assert_int_eq(sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		                    "-keyout ec.key -out ec.pem -subj /CN=sigcms-ec -days 2"), 0);
	else if (strcmp(kind, "rsa") == 0)
		ck_assert_int_eq(sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout rsa.key -out rsa.pem "
		                    "-subj /CN=sigcms-rsa -days 2"), 0);
	else
		ck_assert_int_eq(sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		                    "-keyout tsa.key -out tsa.pem -subj /CN=sigcms-tsa -days 2 "
		                    "-addext extendedKeyUsage=critical,timeStamping"), 0);
}

/* `openssl cms -sign` (detached, DER) of FILE with key KIND into cms.der;
 * EXTRA: more options. */
static void cms_sign(const char *file, const char *kind, const char *extra)
{
	ck_assert_int_eq(sh("openssl cms -sign -binary -outform DER -in %s -signer %s.pem -inkey %s.key "
	                    "-out cms.der %s", file, kind, kind, extra), 0);
}

/* ---- detached signatures ------------------------------------------------------ */

START_TEST(detached_sha256)
{
	struct sf f;
	struct ps_sigcms r;

	NEED("openssl");
	keys("ec");
	make(&f, "/SubFilter/adbe.pkcs7.detached");
	signed_bytes(&f, "data.bin");
	cms_sign("data.bin", "ec", "-md sha256");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_msg(r.parsed == 1 && r.digest_ok == 1 && r.signature_ok == 1 && r.timestamp == 0,
	              "parsed %d digest %d sig %d: %s", r.parsed, r.digest_ok, r.signature_ok, r.why);
	ck_assert_str_eq(r.why, "");

	/* one signed byte changed */
	flip(f.b, f.n);
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_int_eq(r.signature_ok, 1);   /* the attributes are still what was signed */
	ck_assert_str_eq(r.why, "messageDigest differs from the SHA-256 of the signed bytes");
	flip(f.b, f.n);
	/* one signed byte after the gap: the end of line after the dictionary */
	ck_assert_int_eq(f.b[f.gb + 2], '\n');
	f.b[f.gb + 2] = ' ';
	check(&f, &r);
	ck_assert_int_eq(r.digest_ok, 0);
	f.b[f.gb + 2] = '\n';

	/* the signature's last byte changed: the digest still matches */
	{
		size_t n;
		uint8_t *der = read_file("cms.der", &n);
		der[n - 1] ^= 0x01;
		put_der(&f, der, n);
		free(der);
	}
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 1);
	ck_assert_int_eq(r.signature_ok, 0);
	ck_assert_str_eq(r.why, "the signature does not verify with the signer's certificate");
	free(f.b);
}
END_TEST

/* SHA-384, SHA-512 and SHA-1 digests; RSA PKCS#1 v1.5 and PSS; the signer
 * named by subjectKeyIdentifier; CAdES. */
START_TEST(detached_algorithms)
{
	static const struct {
		const char *kind, *opts, *subfilter;
	} v[] = {
		{"rsa", "-md sha256", "/SubFilter/adbe.pkcs7.detached"},
		{"rsa", "-md sha384 -keyid", "/SubFilter/ETSI.CAdES.detached"},
		{"rsa", "-md sha512 -keyopt rsa_padding_mode:pss", ""},
		{"ec", "-md sha1", "/SubFilter/adbe.pkcs7.detached"},
		{"ec", "-md sha512 -keyid", "/SubFilter/ETSI.CAdES.detached"},
	};
	size_t i;

	NEED("openssl");
	keys("ec");
	keys("rsa");
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		struct sf f;
		struct ps_sigcms r;
		make(&f, v[i].subfilter);
		signed_bytes(&f, "data.bin");
		cms_sign("data.bin", v[i].kind, v[i].opts);
		put_file(&f, "cms.der");
		check(&f, &r);
		ck_assert_msg(r.parsed == 1 && r.digest_ok == 1 && r.signature_ok == 1,
		              "%s %s: parsed %d digest %d sig %d: %s", v[i].kind, v[i].opts, r.parsed, r.digest_ok,
		              r.signature_ok, r.why);
		flip(f.b, f.n);
		check(&f, &r);
		ck_assert_msg(r.digest_ok == 0, "%s %s: a changed byte still matches", v[i].kind, v[i].opts);
		free(f.b);
	}
}
END_TEST

/* No signed attributes: the digest is bound by the signature alone. */
START_TEST(detached_noattr)
{
	struct sf f;
	struct ps_sigcms r;

	NEED("openssl");
	keys("rsa");
	make(&f, "/SubFilter/adbe.pkcs7.detached");
	signed_bytes(&f, "data.bin");
	cms_sign("data.bin", "rsa", "-md sha256 -noattr");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_msg(r.parsed == 1 && r.digest_ok == 1 && r.signature_ok == 1, "%d %d %d: %s", r.parsed,
	              r.digest_ok, r.signature_ok, r.why);
	flip(f.b, f.n);
	check(&f, &r);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_int_eq(r.signature_ok, 0);
	/* without the certificate, nothing binds the digest */
	flip(f.b, f.n);
	cms_sign("data.bin", "rsa", "-md sha256 -noattr -nocerts");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_int_eq(r.signature_ok, -1);
	ck_assert_str_eq(r.why, "no signed attributes, and the signature could not be checked: "
	                 "no signer certificate in the CMS");
	free(f.b);
}
END_TEST

/* Signed attributes over other bytes; no certificate in the CMS. */
START_TEST(wrong_digest_and_nocerts)
{
	struct sf f;
	struct ps_sigcms r;

	NEED("openssl");
	keys("ec");
	make(&f, "/SubFilter/adbe.pkcs7.detached");
	ck_assert_int_eq(sh("printf 'other bytes' >other.bin"), 0);
	cms_sign("other.bin", "ec", "-md sha256");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_int_eq(r.signature_ok, 1);
	ck_assert_str_eq(r.why, "messageDigest differs from the SHA-256 of the signed bytes");

	signed_bytes(&f, "data.bin");
	cms_sign("data.bin", "ec", "-md sha256 -nocerts");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 1);
	ck_assert_int_eq(r.signature_ok, -1);
	ck_assert_str_eq(r.why, "the signature was not checked: no signer certificate in the CMS");
	free(f.b);
}
END_TEST

/* ---- hostile /Contents -------------------------------------------------------- */

START_TEST(bad_contents)
{
	struct sf f;
	struct ps_sigcms r;
	uint8_t *der;
	size_t n, cut;
	static const uint8_t junk_after[] = {0x30, 0x03, 0x02, 0x01, 0x01, 0x00, 0x07};

	make(&f, "/SubFilter/adbe.pkcs7.detached");
	/* all zero */
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 0);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_int_eq(r.signature_ok, -1);
	ck_assert_str_eq(r.why, "the CMS does not parse (no ContentInfo)");
	/* a SEQUENCE that is not a ContentInfo, then a non-zero byte: what
	 * follows is not looked at (sigcms.c note 2), the SEQUENCE is refused */
	put_der(&f, junk_after, sizeof junk_after);
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 0);
	ck_assert_int_eq(r.digest_ok, 0);

	if (!have("openssl")) {
		free(f.b);
		return;
	}
	keys("ec");
	signed_bytes(&f, "data.bin");
	cms_sign("data.bin", "ec", "-md sha256");
	der = read_file("cms.der", &n);
	ck_assert_ptr_nonnull(der);
	/* truncated at every length, /Contents exactly that long: never
	 * parsed (the outer length is past the end), never a crash */
	for (cut = 1; cut < n; cut += (cut < 64 ? 1 : 97)) {
		struct sf t;
		make_n(&t, "/SubFilter/adbe.pkcs7.detached", cut);
		put_der(&t, der, cut);
		check(&t, &r);
		free(t.b);
		ck_assert_msg(r.parsed == 0 && r.digest_ok == 0, "cut at %zu parses", cut);
	}
	/* truncated in the middle, the rest zero padding */
	memset(f.b + f.a + 1, '0', 2 * NHEX);
	put_der(&f, der, n / 2);
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 0);
	/* truncated inside the signature value: it parses, the digest matches,
	 * the signature does not verify */
	memset(f.b + f.a + 1, '0', 2 * NHEX);
	put_der(&f, der, n - 4);
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 1);
	ck_assert_int_eq(r.signature_ok, 0);
	/* the outer length cut to the truncation: an inner item overruns */
	memset(f.b + f.a + 1, '0', 2 * NHEX);
	put_der(&f, der, n);
	ck_assert_uint_eq(der[1], 0x82);
	ck_assert_uint_gt(der[2], 0);
	der[2]--;                      /* 256 bytes shorter than its contents */
	put_der(&f, der, n);
	der[2]++;
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 0);
	/* the outer SEQUENCE with a BER indefinite length (as NSS writes
	 * it): the same CMS */
	{
		uint8_t *ber = malloc(n + 2);
		ck_assert_ptr_nonnull(ber);
		ber[0] = 0x30;
		ber[1] = 0x80;
		memcpy(ber + 2, der + 4, n - 4);
		ber[n - 2] = ber[n - 1] = 0;
		memset(f.b + f.a + 1, '0', 2 * NHEX);
		put_der(&f, ber, n);
		check(&f, &r);
		ck_assert_msg(r.parsed == 1 && r.digest_ok == 1 && r.signature_ok == 1, "%s", r.why);
		/* an indefinite length on a primitive item (the OID) */
		ber[2] = 0x06;
		ber[3] = 0x80;
		put_der(&f, ber, n);
		check(&f, &r);
		ck_assert_int_eq(r.parsed, 0);
		free(ber);
	}
	/* indefinite lengths nested 40 deep: refused, no deep recursion */
	{
		uint8_t deep[80];
		size_t i;
		for (i = 0; i < 40; i++) {
			deep[2 * i] = 0x30;
			deep[2 * i + 1] = 0x80;
		}
		memset(f.b + f.a + 1, '0', 2 * NHEX);
		put_der(&f, deep, sizeof deep);
		check(&f, &r);
		ck_assert_int_eq(r.parsed, 0);
	}
	free(der);
	free(f.b);
}
END_TEST

/* Every byte of a valid CMS changed in turn: the call never fails, and
 * never says valid for a change of the messageDigest value or of the
 * signature value (the last bytes of the DER).  Changes elsewhere in the
 * certificate may stay valid: its own signature, dates and names are
 * trust, which is not judged here. */
START_TEST(mutations)
{
	static const uint8_t md_attr[] = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04,
	                                  0x31, 0x22, 0x04, 0x20};
	struct sf f;
	struct ps_sigcms r;
	uint8_t *der;
	size_t n, i, md_off = 0;

	NEED("openssl");
	keys("ec");
	make(&f, "/SubFilter/adbe.pkcs7.detached");
	signed_bytes(&f, "data.bin");
	cms_sign("data.bin", "ec", "-md sha256");
	der = read_file("cms.der", &n);
	ck_assert_ptr_nonnull(der);
	for (i = 0; i + sizeof md_attr < n && !md_off; i++)
		if (memcmp(der + i, md_attr, sizeof md_attr) == 0)
			md_off = i + sizeof md_attr;
	ck_assert_uint_ne(md_off, 0);
	for (i = 0; i < n; i++) {
		uint8_t was = der[i];
		der[i] ^= (uint8_t)(0x80 >> (i % 8)) | 1;
		put_der(&f, der, n);
		check(&f, &r);
		der[i] = was;
		if ((i >= md_off && i < md_off + 32) || i >= n - 60)
			ck_assert_msg(!(r.digest_ok && r.signature_ok == 1), "byte %zu changed: still valid", i);
		if (i >= md_off && i < md_off + 32)
			ck_assert_int_eq(r.digest_ok, 0);
	}
	free(der);
	free(f.b);
}
END_TEST

/* ---- /ByteRange --------------------------------------------------------------- */

/* Object 8 with /ByteRange BR and a valid CMS over the usual range. */
static void with_byterange(const char *br, struct ps_sigcms *r)
{
	struct sf f;
	char path[512];
	size_t k;
	int64_t before;
	ps_obj *sig;

	make(&f, "/SubFilter/adbe.pkcs7.detached");
	signed_bytes(&f, "data.bin");
	if (have("openssl")) {
		cms_sign("data.bin", "ec", "-md sha256");
		put_file(&f, "cms.der");
	}
	/* replace the /ByteRange in place (same length, padded with spaces) */
	for (k = 0; memcmp(f.b + k, "/ByteRange[", 11) != 0; k++)
		;
	ck_assert_uint_le(strlen(br), 46);
	memset(f.b + k + 10, ' ', 46);
	memcpy(f.b + k + 10, br, strlen(br));
	write_file("t.pdf", f.b, f.n);
	free(f.b);
	snprintf(path, sizeof path, "%s/t.pdf", dir);
	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), 0);
	ck_assert_msg(ps_doc_lookup(doc, 8, &sig) == 0, "%s: %s", br, pdfstamp_ctx_errmsg(ctx));
	before = ps_doc_bytes_read(doc);
	ck_assert_int_eq(ps_sigcms_check(doc, sig, r), 0);
	/* nothing read for a refused range */
	if (!r->digest_ok)
		ck_assert_int_eq(ps_doc_bytes_read(doc), before);
}

START_TEST(bad_byterange)
{
	static const char *v[] = {
		"[0 100 50 10]",                                      /* a > b: overlapping */
		"[0 100 200 999999]",                                 /* past the end */
		"[0 100 200 9223372036854775807]",                    /* b + c overflows */
		"[0 9223372036854775807 9223372036854775807 1]",      /* past the end */
		"[0 -1 200 10]",                                      /* negative */
		"[1 100 200 10]",                                     /* not from 0 */
		"[0 100 200]",                                        /* three */
		"[0 100 200 10 5]",                                   /* five */
		"[0 100 200 1.5]",                                    /* not an integer */
		"[0 100 200 -5]",                                     /* negative length */
		"[0 100 100 10]",                                     /* no gap */
		"(0 100 200 10)",                                     /* not an array */
	};
	size_t i;
	struct ps_sigcms r;

	NEED("openssl");
	keys("ec");
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		with_byterange(v[i], &r);
		ck_assert_msg(r.digest_ok == 0, "%s accepted", v[i]);
		ck_assert_msg(r.why[0] != 0, "%s: no reason", v[i]);
	}
}
END_TEST

/* A /ByteRange inside the file whose gap is not the /Contents string. */
START_TEST(gap_not_contents)
{
	struct sf f;
	struct ps_sigcms r;
	char br[64];
	size_t k;

	NEED("openssl");
	keys("ec");
	make(&f, "/SubFilter/adbe.pkcs7.detached");
	signed_bytes(&f, "data.bin");
	cms_sign("data.bin", "ec", "-md sha256");
	put_file(&f, "cms.der");
	/* the gap one byte short on each side */
	for (k = 0; memcmp(f.b + k, "/ByteRange[0 ", 13) != 0; k++)
		;
	snprintf(br, sizeof br, "%010zu %010zu %010zu", f.a + 1, f.gb - 1, f.n - f.gb + 1);
	memcpy(f.b + k + 13, br, strlen(br));
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_str_eq(r.why, "the bytes the /ByteRange leaves out are not the /Contents string");
	free(f.b);
}
END_TEST

/* ---- adbe.pkcs7.sha1 ----------------------------------------------------------- */

START_TEST(pkcs7_sha1)
{
	struct sf f;
	struct ps_sigcms r;

	NEED("openssl");
	keys("rsa");
	make(&f, "/SubFilter/adbe.pkcs7.sha1");
	signed_bytes(&f, "data.bin");
	ck_assert_int_eq(sh("openssl dgst -sha1 -binary data.bin >h.bin"), 0);
	cms_sign("h.bin", "rsa", "-md sha256 -nodetach");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_msg(r.parsed == 1 && r.digest_ok == 1 && r.signature_ok == 1, "%d %d %d: %s", r.parsed,
	              r.digest_ok, r.signature_ok, r.why);
	flip(f.b, f.n);
	check(&f, &r);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_str_eq(r.why, "the encapsulated SHA-1 differs from the SHA-1 of the signed bytes");
	flip(f.b, f.n);
	/* a detached CMS under adbe.pkcs7.sha1 */
	cms_sign("data.bin", "rsa", "-md sha256");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 0);
	free(f.b);
}
END_TEST

/* ---- RFC 3161 document time stamps ------------------------------------------- */

static void ts_config(void)
{
	ck_assert_int_eq(sh("printf '01\\n' >tsaserial && printf '%s' '"
	                    "[ tsa ]\ndefault_tsa = tsa1\n[ tsa1 ]\nserial = ./tsaserial\n"
	                    "signer_digest = sha256\ndefault_policy = 1.2.3.4.1\n"
	                    "digests = sha1, sha256, sha384, sha512\ness_cert_id_alg = sha256\n"
	                    "accuracy = secs:1\nordering = no\ntsa_name = no\n' >ts.cnf", "%s"), 0);
}

/* A time-stamp token over FILE's bytes with imprint hash MD into tok.der. */
static void ts_token(const char *file, const char *md)
{
	ck_assert_int_eq(sh("openssl ts -query -data %s -%s -cert -no_nonce -out q.tsq && "
	                    "openssl ts -reply -config ts.cnf -queryfile q.tsq -signer tsa.pem -inkey tsa.key "
	                    "-token_out -out tok.der", file, md), 0);
}

START_TEST(doc_timestamp)
{
	struct sf f;
	struct ps_sigcms r;

	NEED("openssl");
	keys("tsa");
	ts_config();
	make(&f, "/Type/DocTimeStamp/SubFilter/ETSI.RFC3161");
	/* pg's /Type/Sig comes first: the file has both, as a test of
	 * /SubFilter deciding */
	signed_bytes(&f, "data.bin");
	ts_token("data.bin", "sha256");
	put_file(&f, "tok.der");
	check(&f, &r);
	ck_assert_msg(r.parsed == 1 && r.timestamp == 1 && r.digest_ok == 1 && r.signature_ok == 1,
	              "%d %d %d %d: %s", r.parsed, r.timestamp, r.digest_ok, r.signature_ok, r.why);
	flip(f.b, f.n);
	check(&f, &r);
	ck_assert_int_eq(r.timestamp, 1);
	ck_assert_int_eq(r.digest_ok, 0);
	ck_assert_str_eq(r.why, "the time stamp's messageImprint differs from the SHA-256 of the signed bytes");
	flip(f.b, f.n);

	/* a token over other bytes */
	ck_assert_int_eq(sh("printf 'other bytes' >other.bin"), 0);
	ts_token("other.bin", "sha512");
	put_file(&f, "tok.der");
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.timestamp, 1);
	ck_assert_int_eq(r.digest_ok, 0);

	/* SHA-384 imprint over the right bytes */
	memset(f.b + f.a + 1, '0', 2 * NHEX);
	ts_token("data.bin", "sha384");
	put_file(&f, "tok.der");
	check(&f, &r);
	ck_assert_msg(r.digest_ok == 1, "%s", r.why);
	free(f.b);

	/* a detached CMS signature under ETSI.RFC3161: not a token */
	keys("ec");
	make(&f, "/Type/DocTimeStamp/SubFilter/ETSI.RFC3161");
	signed_bytes(&f, "data.bin");
	cms_sign("data.bin", "ec", "-md sha256");
	put_file(&f, "cms.der");
	check(&f, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.timestamp, 0);
	ck_assert_int_eq(r.digest_ok, 0);
	/* and a token under adbe.pkcs7.detached: not detached */
	free(f.b);
	make(&f, "/SubFilter/adbe.pkcs7.detached");
	signed_bytes(&f, "data.bin");
	ts_token("data.bin", "sha256");
	put_file(&f, "tok.der");
	check(&f, &r);
	ck_assert_int_eq(r.timestamp, 1);
	ck_assert_int_eq(r.digest_ok, 0);
	free(f.b);
}
END_TEST

/* ---- a real signer: poppler's pdfsig with NSS ---------------------------------- */

struct first_sig {
	uint32_t num;
};

static int first_sig_fn(void *ud, ps_obj *field, uint32_t fnum, ps_obj *sig, uint32_t snum, int level,
                        const char *name)
{
	struct first_sig *fs = ud;

	(void)field, (void)fnum, (void)sig, (void)level, (void)name;
	if (!fs->num)
		fs->num = snum;
	return 0;
}

/* Signs SRC (password PW or NULL) with pdfsig into s.pdf and checks it,
 * then the same with one signed byte changed. */
static void pdfsig_case(const char *src, const char *pw)
{
	struct first_sig fs = {0};
	struct ps_sigcms r;
	char path[512];
	int docmdp, incomplete;
	uint8_t *b;
	size_t n;

	ck_assert_int_eq(sh("rm -f s.pdf && pdfsig -add-signature -nssdir sql:nss -nick sigcms %s%s%s "
	                    "-reason check_sigcms '%s' s.pdf", pw ? "-upw '" : "", pw ? pw : "", pw ? "'" : "", src),
	                 0);
	snprintf(path, sizeof path, "%s/s.pdf", dir);
	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, path, 0), 0);
	if (pw)
		ck_assert_int_eq(pdfstamp_doc_auth(doc, pw, strlen(pw), 0), 0);
	ck_assert_int_eq(ps_policy_sig_fields(doc, &docmdp, &incomplete, first_sig_fn, &fs), 0);
	ck_assert_uint_ne(fs.num, 0);
	check_path(path, pw, fs.num, &r);
	ck_assert_msg(r.parsed == 1 && r.digest_ok == 1 && r.signature_ok == 1 && r.timestamp == 0,
	              "%s: %d %d %d: %s", src, r.parsed, r.digest_ok, r.signature_ok, r.why);
	/* one signed byte */
	b = read_file("s.pdf", &n);
	ck_assert_ptr_nonnull(b);
	flip(b, n);
	write_file("s2.pdf", b, n);
	free(b);
	snprintf(path, sizeof path, "%s/s2.pdf", dir);
	check_path(path, pw, fs.num, &r);
	ck_assert_int_eq(r.parsed, 1);
	ck_assert_int_eq(r.digest_ok, 0);
}

START_TEST(pdfsig_signed)
{
	pg p;
	pg_ent e[6];
	uint32_t i;
	char sample[512];

	NEED("pdfsig");
	NEED("certutil");
	ck_assert_int_eq(sh("mkdir nss && head -c 256 /dev/urandom >noise && "
	                    "certutil -N -d sql:nss --empty-password && "
	                    "certutil -S -x -d sql:nss -n sigcms -s 'CN=sigcms signer' -t CT,C,C -k rsa -g 2048 "
	                    "-z noise -v 12 --keyUsage digitalSignature,nonRepudiation"), 0);
	pg_start(&p);
	pg_obj(&p, 1, 0, "<</Type/Catalog/Pages 2 0 R>>");
	pg_obj(&p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(&p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 5 0 R>>");
	pg_obj(&p, 4, 0, "<</Producer(check_sigcms)>>");
	pg_stream(&p, 5, "", "BT ET", 5);
	memset(e, 0, sizeof e);
	for (i = 1; i <= 5; i++)
		e[i] = pg_used(&p, i);
	e[0].f3 = 65535;
	pg_table(&p, e, 6, "<</Size 6/Root 1 0 R/Info 4 0 R>>");
	pg_save(&p, dir, "plain.pdf");
	pdfsig_case("plain.pdf", NULL);
	/* an AES-256 file: /Contents is not encrypted (7.6.2) */
	snprintf(sample, sizeof sample, "%s/../samples/r6-table.pdf", TEST_SRCDIR);
	pdfsig_case(sample, "sample-user");
}
END_TEST

static Suite *sigcms_suite(void)
{
	Suite *s = suite_create("sigcms");
	TCase *tc = tcase_create("cms");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, detached_sha256);
	tcase_add_test(tc, detached_algorithms);
	tcase_add_test(tc, detached_noattr);
	tcase_add_test(tc, wrong_digest_and_nocerts);
	tcase_add_test(tc, bad_contents);
	tcase_add_test(tc, mutations);
	tcase_add_test(tc, bad_byterange);
	tcase_add_test(tc, gap_not_contents);
	tcase_add_test(tc, pkcs7_sha1);
	tcase_add_test(tc, doc_timestamp);
	tcase_add_test(tc, pdfsig_signed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sigcms_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
