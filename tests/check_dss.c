/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_dss.c - the Document Security Store (dss.c): inputs (DER, PEM,
 * refusals), OCSP structure checks on hand-built DER, duplicates, the
 * /VRI key and what belongs to a signature, and whole updates of files
 * written by the test (pdfgen.c), plaintext and encrypted.
 *
 * The certificates and the CRL below were made once with openssl (a P-256
 * CA "CN=CA", a leaf "CN=Leaf" with serial 0x1001 that it issued, and its
 * empty CRL); the OCSP responses are built here, byte by byte.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mbedtls/base64.h>
#include <mbedtls/md.h>

#include "ps.h"
#include "dss.h"
#include "flate.h"
#include "pdfgen.h"

static const uint8_t ca_der[] = {
	0x30, 0x82, 0x01, 0x5e, 0x30, 0x82, 0x01, 0x04, 0xa0, 0x03, 0x02, 0x01, 0x02, 0x02, 0x14, 0x3a,
	0x72, 0x49, 0xd1, 0x6c, 0x8d, 0xf6, 0x8e, 0x1d, 0xed, 0x0f, 0x9d, 0x4d, 0x1f, 0x50, 0x9c, 0xcf,
	0x83, 0x97, 0x2c, 0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02, 0x30,
	0x0d, 0x31, 0x0b, 0x30, 0x09, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x02, 0x43, 0x41, 0x30, 0x1e,
	0x17, 0x0d, 0x32, 0x36, 0x31, 0x32, 0x30, 0x31, 0x31, 0x37, 0x32, 0x38, 0x30, 0x30, 0x5a, 0x17,
	0x0d, 0x33, 0x36, 0x31, 0x31, 0x32, 0x38, 0x31, 0x37, 0x32, 0x38, 0x30, 0x30, 0x5a, 0x30, 0x0d,
	0x31, 0x0b, 0x30, 0x09, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x02, 0x43, 0x41, 0x30, 0x59, 0x30,
	0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
	0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04, 0x2f, 0x16, 0xae, 0x4b, 0xcd, 0xa4, 0x69, 0x0e,
	0xbb, 0xf5, 0xfd, 0x3f, 0xbe, 0xfb, 0x58, 0x05, 0x78, 0xf1, 0x8e, 0x7b, 0xbe, 0x52, 0x03, 0x6f,
	0x4f, 0x6a, 0xb9, 0x3f, 0x88, 0x76, 0x99, 0xa6, 0x10, 0x50, 0x00, 0x2d, 0x1c, 0x3b, 0xb9, 0x78,
	0x9e, 0xdd, 0x8b, 0x5b, 0x0f, 0xad, 0x5e, 0x3c, 0x5c, 0xb3, 0x7b, 0x6a, 0x1f, 0x0f, 0xb6, 0xf7,
	0x99, 0x5a, 0x92, 0x1b, 0xcf, 0xe0, 0x68, 0x12, 0xa3, 0x42, 0x30, 0x40, 0x30, 0x0f, 0x06, 0x03,
	0x55, 0x1d, 0x13, 0x01, 0x01, 0xff, 0x04, 0x05, 0x30, 0x03, 0x01, 0x01, 0xff, 0x30, 0x0e, 0x06,
	0x03, 0x55, 0x1d, 0x0f, 0x01, 0x01, 0xff, 0x04, 0x04, 0x03, 0x02, 0x01, 0x06, 0x30, 0x1d, 0x06,
	0x03, 0x55, 0x1d, 0x0e, 0x04, 0x16, 0x04, 0x14, 0xd1, 0x79, 0x53, 0x68, 0xba, 0xc9, 0xde, 0xff,
	0x83, 0x57, 0xeb, 0xf0, 0xc3, 0x63, 0xa3, 0x01, 0xed, 0x5f, 0xfe, 0xf4, 0x30, 0x0a, 0x06, 0x08,
	0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02, 0x03, 0x48, 0x00, 0x30, 0x45, 0x02, 0x20, 0x1b,
	0xbf, 0xe7, 0xa7, 0x90, 0xc9, 0x73, 0x8b, 0x2b, 0x5d, 0x48, 0x5c, 0x8e, 0x38, 0x32, 0xb0, 0x7d,
	0xe0, 0x92, 0xa3, 0xcc, 0x6c, 0xaf, 0x59, 0x65, 0x3a, 0x59, 0xe8, 0x6d, 0x25, 0x63, 0x5f, 0x02,
	0x21, 0x00, 0xc4, 0x34, 0x5a, 0xda, 0x42, 0xd0, 0xf9, 0xc0, 0xea, 0x76, 0x12, 0x2c, 0xfa, 0x57,
	0x9c, 0x79, 0xba, 0xae, 0x22, 0x22, 0x13, 0xaf, 0x36, 0x1d, 0xea, 0x1a, 0x75, 0xff, 0xf0, 0xb4,
	0x3f, 0x33,
};
static const uint8_t leaf_der[] = {
	0x30, 0x82, 0x01, 0x69, 0x30, 0x82, 0x01, 0x0f, 0xa0, 0x03, 0x02, 0x01, 0x02, 0x02, 0x02, 0x10,
	0x01, 0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02, 0x30, 0x0d, 0x31,
	0x0b, 0x30, 0x09, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x02, 0x43, 0x41, 0x30, 0x1e, 0x17, 0x0d,
	0x32, 0x36, 0x31, 0x32, 0x30, 0x31, 0x31, 0x37, 0x32, 0x38, 0x30, 0x30, 0x5a, 0x17, 0x0d, 0x33,
	0x36, 0x31, 0x31, 0x32, 0x38, 0x31, 0x37, 0x32, 0x38, 0x30, 0x30, 0x5a, 0x30, 0x0f, 0x31, 0x0d,
	0x30, 0x0b, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x04, 0x4c, 0x65, 0x61, 0x66, 0x30, 0x59, 0x30,
	0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
	0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04, 0x9f, 0x25, 0x7f, 0x20, 0x9a, 0xa8, 0xb5, 0x87,
	0x44, 0xb4, 0x1e, 0x21, 0x06, 0xe9, 0x11, 0xd2, 0x8a, 0x8d, 0x98, 0x5c, 0x56, 0x1f, 0x1a, 0x0f,
	0x31, 0x9a, 0x26, 0x94, 0x96, 0xae, 0x9e, 0xbc, 0x43, 0xde, 0x4e, 0x55, 0x72, 0x69, 0x82, 0xcf,
	0xf9, 0x22, 0x2e, 0xbb, 0x0e, 0x37, 0x23, 0xea, 0x30, 0x7d, 0xb0, 0x21, 0xd1, 0x6d, 0x8c, 0x3d,
	0xda, 0x6a, 0xdd, 0x15, 0xa9, 0x05, 0x5b, 0xdd, 0xa3, 0x5d, 0x30, 0x5b, 0x30, 0x09, 0x06, 0x03,
	0x55, 0x1d, 0x13, 0x04, 0x02, 0x30, 0x00, 0x30, 0x0e, 0x06, 0x03, 0x55, 0x1d, 0x0f, 0x01, 0x01,
	0xff, 0x04, 0x04, 0x03, 0x02, 0x06, 0xc0, 0x30, 0x1d, 0x06, 0x03, 0x55, 0x1d, 0x0e, 0x04, 0x16,
	0x04, 0x14, 0x02, 0x8f, 0xa0, 0x63, 0xd6, 0x17, 0x29, 0x9c, 0x65, 0xc0, 0x15, 0x0f, 0x91, 0xf7,
	0xc9, 0x2a, 0x6c, 0x45, 0x7a, 0x3e, 0x30, 0x1f, 0x06, 0x03, 0x55, 0x1d, 0x23, 0x04, 0x18, 0x30,
	0x16, 0x80, 0x14, 0xd1, 0x79, 0x53, 0x68, 0xba, 0xc9, 0xde, 0xff, 0x83, 0x57, 0xeb, 0xf0, 0xc3,
	0x63, 0xa3, 0x01, 0xed, 0x5f, 0xfe, 0xf4, 0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
	0x04, 0x03, 0x02, 0x03, 0x48, 0x00, 0x30, 0x45, 0x02, 0x20, 0x1d, 0x16, 0x8b, 0xd9, 0xce, 0x7c,
	0x0b, 0x38, 0x55, 0xa8, 0x20, 0xc9, 0x5e, 0x55, 0xf3, 0x8e, 0xba, 0xd8, 0x78, 0x2d, 0xde, 0x09,
	0x85, 0x87, 0x0e, 0xc7, 0xd7, 0xcc, 0x94, 0x0b, 0xb2, 0x20, 0x02, 0x21, 0x00, 0xfc, 0x03, 0x05,
	0x98, 0xc2, 0x98, 0x9c, 0xfb, 0x7c, 0x7d, 0xb2, 0xf2, 0x11, 0xa2, 0x0a, 0xbf, 0xe2, 0xab, 0x4f,
	0x56, 0x83, 0x2f, 0x91, 0xcc, 0xca, 0x53, 0x30, 0xd1, 0x03, 0x99, 0x60, 0xe6,
};
static const uint8_t crl_der[] = {
	0x30, 0x81, 0xa4, 0x30, 0x4c, 0x02, 0x01, 0x01, 0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
	0x3d, 0x04, 0x03, 0x02, 0x30, 0x0d, 0x31, 0x0b, 0x30, 0x09, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c,
	0x02, 0x43, 0x41, 0x17, 0x0d, 0x32, 0x36, 0x31, 0x32, 0x30, 0x31, 0x31, 0x37, 0x32, 0x38, 0x30,
	0x30, 0x5a, 0x17, 0x0d, 0x32, 0x36, 0x31, 0x32, 0x33, 0x31, 0x31, 0x37, 0x32, 0x38, 0x30, 0x30,
	0x5a, 0xa0, 0x0e, 0x30, 0x0c, 0x30, 0x0a, 0x06, 0x03, 0x55, 0x1d, 0x14, 0x04, 0x03, 0x02, 0x01,
	0x01, 0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02, 0x03, 0x48, 0x00,
	0x30, 0x45, 0x02, 0x21, 0x00, 0xf2, 0x49, 0x6f, 0x02, 0x66, 0x72, 0x19, 0xa8, 0xf9, 0xc5, 0x79,
	0x1f, 0x40, 0x8f, 0x38, 0x64, 0x41, 0x61, 0xc8, 0x47, 0x05, 0x92, 0xc8, 0x42, 0x67, 0x26, 0xab,
	0x09, 0x65, 0x0a, 0x22, 0x4d, 0x02, 0x20, 0x46, 0xa8, 0xa4, 0xd7, 0x80, 0x5e, 0x8d, 0x1e, 0x14,
	0x05, 0x0e, 0xca, 0x19, 0x69, 0x2d, 0xfd, 0x04, 0x88, 0xbd, 0xef, 0x31, 0x06, 0x67, 0xe9, 0x50,
	0x90, 0xcf, 0xdf, 0x09, 0x7d, 0x2d, 0x08,
};

#define USER_PW "dss-user"
#define OWNER_PW "dss-owner"

static char dir[64], path[160], encpath[160], outpath[160];
static ps_ctx *ctx;
static ps_doc *doc;
static int nwarn;

static void on_warn(void *ud, const char *msg)
{
	(void)ud;
	(void)msg;
	nwarn++;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_dss-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/in.pdf", dir);
	snprintf(encpath, sizeof encpath, "%s/enc.pdf", dir);
	snprintf(outpath, sizeof outpath, "%s/out.pdf", dir);
	ck_assert_int_eq(pdfstamp_ctx_new(&ctx), 0);
	pdfstamp_ctx_set_warn(ctx, on_warn, NULL);
	doc = NULL;
	nwarn = 0;
}

static void teardown(void)
{
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	unlink(path);
	unlink(encpath);
	unlink(outpath);
	rmdir(dir);
}

static int has_msg(const char *s)
{
	return strstr(pdfstamp_ctx_errmsg(ctx), s) != NULL;
}

/* Loads the inputs (kind, data, len) given as triples; returns the code. */
static int load(ps_dss_items *s, size_t n, const struct pdfstamp_dss_input *in)
{
	struct pdfstamp_dss_opts o = PDFSTAMP_DSS_OPTS_INIT;

	o.inputs = in;
	o.ninputs = n;
	return ps_dss_load(ctx, &o, s);
}

static int load1(int kind, const void *data, size_t len)
{
	struct pdfstamp_dss_input in = {kind, "in.x", data, len};
	ps_dss_items s;
	int rc = load(&s, 1, &in);

	ps_dss_items_free(&s);
	return rc;
}

/* PEM of LABEL around DER, 64 columns; PREFIX before it (malloc'ed). */
static char *pem(const char *prefix, const char *label, const uint8_t *der, size_t n)
{
	size_t olen = 0, i, k = 0;
	unsigned char *b64;
	char *out;

	mbedtls_base64_encode(NULL, 0, &olen, der, n);
	b64 = malloc(olen);
	ck_assert_ptr_nonnull(b64);
	ck_assert_int_eq(mbedtls_base64_encode(b64, olen, &olen, der, n), 0);
	out = malloc(strlen(prefix) + olen + olen / 64 + 2 * strlen(label) + 64);
	ck_assert_ptr_nonnull(out);
	k = (size_t)sprintf(out, "%s-----BEGIN %s-----\n", prefix, label);
	for (i = 0; i < olen; i++) {
		out[k++] = (char)b64[i];
		if (i % 64 == 63 || i + 1 == olen)
			out[k++] = '\n';
	}
	k += (size_t)sprintf(out + k, "-----END %s-----\n", label);
	free(b64);
	return out;
}

/* ---- a tiny DER writer for OCSP responses ---------------------------------------- */

typedef struct { uint8_t b[2048]; size_t n; } der;

static void put(der *d, const void *p, size_t n)
{
	ck_assert_uint_le(d->n + n, sizeof d->b);
	if (n) /* P may be NULL for an empty value (memcpy's arguments must not be) */
		memcpy(d->b + d->n, p, n);
	d->n += n;
}

/* TAG with the contents of INNER (or of P[0..N) when INNER is NULL). */
static void tlv(der *d, int tag, const der *inner, const void *p, size_t n)
{
	uint8_t h[4];
	size_t hl = 0;

	if (inner) {
		p = inner->b;
		n = inner->n;
	}
	h[hl++] = (uint8_t)tag;
	if (n < 128) {
		h[hl++] = (uint8_t)n;
	} else if (n < 256) {
		h[hl++] = 0x81;
		h[hl++] = (uint8_t)n;
	} else {
		h[hl++] = 0x82;
		h[hl++] = (uint8_t)(n >> 8);
		h[hl++] = (uint8_t)n;
	}
	put(d, h, hl);
	put(d, p, n);
}

enum { OCSP_GOOD = 0, OCSP_STATUS_TRYLATER, OCSP_WRONG_TYPE, OCSP_NO_BYTES, OCSP_NO_RESPONSES,
       OCSP_OTHER_SERIAL };

/* An OCSPResponse for the leaf (CertID: SHA-1 of its issuer Name, its
 * serial 0x1001), broken as VARIANT says. */
static void make_ocsp(der *out, int variant)
{
	static const uint8_t sha1_oid[] = {0x2B, 0x0E, 0x03, 0x02, 0x1A};
	static const uint8_t basic_oid[] = {0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01};
	static const uint8_t other_oid[] = {0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x02};
	static const uint8_t sha256rsa[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B};
	static const char when[] = "20260101000000Z";
	static const uint8_t serial[] = {0x10, 0x01}, other_serial[] = {0x10, 0x02}, zero = 0;
	ps_dss_items s;
	struct pdfstamp_dss_input in = {PDFSTAMP_DSS_CERT, "leaf", leaf_der, sizeof leaf_der};
	der alg, certid, single, responses, rd, sigalg, basic, rb, rbs, resp, tmp;
	uint8_t h[20], keyhash[20];
	uint8_t st = variant == OCSP_STATUS_TRYLATER ? 3 : 0;

	memset(keyhash, 0xAB, sizeof keyhash);
	ck_assert_int_eq(load(&s, 1, &in), 0);
	ck_assert_int_eq(mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_SHA1), s.v[0].der + s.v[0].iss_off,
	                            s.v[0].iss_len, h), 0);
	ps_dss_items_free(&s);
	memset(&alg, 0, sizeof alg);
	tlv(&alg, 0x06, NULL, sha1_oid, sizeof sha1_oid);
	tlv(&alg, 0x05, NULL, NULL, 0);
	memset(&certid, 0, sizeof certid);
	tlv(&certid, 0x30, &alg, NULL, 0);
	tlv(&certid, 0x04, NULL, h, sizeof h);
	tlv(&certid, 0x04, NULL, keyhash, sizeof keyhash);
	if (variant == OCSP_OTHER_SERIAL)
		tlv(&certid, 0x02, NULL, other_serial, sizeof other_serial);
	else
		tlv(&certid, 0x02, NULL, serial, sizeof serial);
	memset(&single, 0, sizeof single);
	tlv(&single, 0x30, &certid, NULL, 0);
	tlv(&single, 0x80, NULL, NULL, 0);          /* good [0] IMPLICIT NULL */
	tlv(&single, 0x18, NULL, when, strlen(when)); /* thisUpdate */
	memset(&responses, 0, sizeof responses);
	if (variant != OCSP_NO_RESPONSES)
		tlv(&responses, 0x30, &single, NULL, 0);
	memset(&rd, 0, sizeof rd);
	memset(&tmp, 0, sizeof tmp);
	tlv(&tmp, 0x04, NULL, keyhash, sizeof keyhash);
	tlv(&rd, 0xA2, &tmp, NULL, 0);              /* responderID byKey */
	tlv(&rd, 0x18, NULL, when, strlen(when));   /* producedAt */
	if (variant != OCSP_NO_RESPONSES)
		tlv(&rd, 0x30, &responses, NULL, 0);
	memset(&sigalg, 0, sizeof sigalg);
	tlv(&sigalg, 0x06, NULL, sha256rsa, sizeof sha256rsa);
	memset(&basic, 0, sizeof basic);
	tlv(&basic, 0x30, &rd, NULL, 0);
	tlv(&basic, 0x30, &sigalg, NULL, 0);
	memset(&tmp, 0, sizeof tmp);
	put(&tmp, &zero, 1);
	put(&tmp, keyhash, sizeof keyhash);
	tlv(&basic, 0x03, &tmp, NULL, 0);           /* signature (not checked) */
	memset(&tmp, 0, sizeof tmp);
	tlv(&tmp, 0x30, &basic, NULL, 0);
	memset(&rb, 0, sizeof rb);
	if (variant == OCSP_WRONG_TYPE)
		tlv(&rb, 0x06, NULL, other_oid, sizeof other_oid);
	else
		tlv(&rb, 0x06, NULL, basic_oid, sizeof basic_oid);
	tlv(&rb, 0x04, &tmp, NULL, 0);
	memset(&rbs, 0, sizeof rbs);
	tlv(&rbs, 0x30, &rb, NULL, 0);
	memset(&resp, 0, sizeof resp);
	tlv(&resp, 0x0A, NULL, &st, 1);
	if (variant != OCSP_NO_BYTES)
		tlv(&resp, 0xA0, &rbs, NULL, 0);
	memset(out, 0, sizeof *out);
	tlv(out, 0x30, &resp, NULL, 0);
}

/* ---- inputs ------------------------------------------------------------------------ */

START_TEST(der_inputs)
{
	ps_dss_items s;
	struct pdfstamp_dss_input in[3] = {
		{PDFSTAMP_DSS_CERT, "leaf.der", leaf_der, sizeof leaf_der},
		{PDFSTAMP_DSS_CERT, "ca.der", ca_der, sizeof ca_der},
		{PDFSTAMP_DSS_CRL, "crl.der", crl_der, sizeof crl_der},
	};

	ck_assert_int_eq(load(&s, 3, in), 0);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(s.v[0].len, sizeof leaf_der);
	ck_assert(memcmp(s.v[0].der, leaf_der, sizeof leaf_der) == 0);
	/* the leaf's issuer is the CA's subject, the CRL's issuer too */
	ck_assert_uint_eq(s.v[0].iss_len, s.v[1].sub_len);
	ck_assert(memcmp(s.v[0].der + s.v[0].iss_off, s.v[1].der + s.v[1].sub_off, s.v[0].iss_len) == 0);
	ck_assert(memcmp(s.v[2].der + s.v[2].iss_off, s.v[1].der + s.v[1].sub_off, s.v[2].iss_len) == 0);
	ck_assert_uint_eq(s.v[0].ser_len, 2);
	ck_assert_int_eq(s.v[0].der[s.v[0].ser_off], 0x10);
	ck_assert_int_eq(s.v[0].dup_of, -1);
	ps_dss_items_free(&s);
	{
		struct pdfstamp_dss_opts o = PDFSTAMP_DSS_OPTS_INIT;
		o.inputs = in;
		o.ninputs = 3;
		ck_assert_int_eq(pdfstamp_dss_check(ctx, &o), 0);
	}
}
END_TEST

START_TEST(pem_inputs)
{
	char *a = pem("subject=CN = Leaf\n", "CERTIFICATE", leaf_der, sizeof leaf_der);
	char *b = pem("", "CERTIFICATE", ca_der, sizeof ca_der);
	char *c = pem("", "X509 CRL", crl_der, sizeof crl_der);
	char *k = pem("", "PRIVATE KEY", crl_der, sizeof crl_der);
	char *both = malloc(strlen(a) + strlen(b) + 32);
	ps_dss_items s;
	struct pdfstamp_dss_input in;

	sprintf(both, "%s\ntext between\r\n%s", a, b);
	in = (struct pdfstamp_dss_input){PDFSTAMP_DSS_CERT, "chain.pem", (const uint8_t *)both, strlen(both)};
	ck_assert_int_eq(load(&s, 1, &in), 0);
	ck_assert_uint_eq(s.n, 2);
	ck_assert(s.v[0].len == sizeof leaf_der && memcmp(s.v[0].der, leaf_der, sizeof leaf_der) == 0);
	ck_assert(s.v[1].len == sizeof ca_der && memcmp(s.v[1].der, ca_der, sizeof ca_der) == 0);
	ps_dss_items_free(&s);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CRL, c, strlen(c)), 0);
	/* a block of another label */
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, k, strlen(k)), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("in.x: PEM block 1 is a PRIVATE KEY, not a CERTIFICATE"));
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CRL, a, strlen(a)), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("is a CERTIFICATE, not an X509 CRL"));
	/* PEM for OCSP is not accepted */
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, b, strlen(b)), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("not a DER OCSP response"));
	/* no END line, bad base64, headers */
	b[strlen(b) - 10] = 0;
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, b, strlen(b)), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("has no END line"));
	free(b);
	b = pem("", "CERTIFICATE", ca_der, sizeof ca_der);
	b[40] = '*';
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, b, strlen(b)), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("not valid base64"));
	free(b);
	b = pem("", "CERTIFICATE", ca_der, sizeof ca_der);
	memcpy(b + 28, "Proc-Type: 4,ENCRYPTED\n", 23);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, b, strlen(b)), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("headers"));
	free(a);
	free(b);
	free(c);
	free(k);
	free(both);
}
END_TEST

START_TEST(refusals)
{
	static const char text[] = "hello, I am not a certificate\n";
	uint8_t buf[1024];

	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, text, sizeof text - 1), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("in.x: neither a DER certificate"));
	/* truncated DER */
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, leaf_der, sizeof leaf_der - 7), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("in.x: the DER certificate is truncated"));
	/* trailing bytes */
	memcpy(buf, leaf_der, sizeof leaf_der);
	buf[sizeof leaf_der] = 0;
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, buf, sizeof leaf_der + 1), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("1 bytes follow the DER certificate"));
	/* a CRL as a certificate, a certificate as a CRL or as OCSP */
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, crl_der, sizeof crl_der), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("not an X.509 certificate"));
	ck_assert(has_msg("it is an X.509 CRL"));
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CRL, ca_der, sizeof ca_der), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("it is an X.509 certificate"));
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, leaf_der, sizeof leaf_der), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("not a usable OCSP response"));
	ck_assert(has_msg("it is an X.509 certificate"));
	/* a corrupted certificate body */
	memcpy(buf, leaf_der, sizeof leaf_der);
	buf[8] ^= 0xFF;
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, buf, sizeof leaf_der), PDFSTAMP_E_FORMAT);
	/* empty, too large, bad options */
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, leaf_der, 0), PDFSTAMP_E_FORMAT);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, leaf_der, (size_t)PDFSTAMP_DSS_MAX_INPUT + 1), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("larger than"));
	ck_assert_int_eq(load1(9, leaf_der, sizeof leaf_der), PDFSTAMP_E_USAGE);
	{
		ps_dss_items s;
		ck_assert_int_eq(load(&s, 0, NULL), PDFSTAMP_E_USAGE);
		ck_assert_uint_eq(s.n, 0);
	}
	{
		struct pdfstamp_dss_opts o = PDFSTAMP_DSS_OPTS_INIT;
		o.version = 77;
		ck_assert_int_eq(pdfstamp_dss_check(ctx, &o), PDFSTAMP_E_USAGE);
	}
}
END_TEST

START_TEST(ocsp_structure)
{
	der d;
	ps_dss_items s;
	struct pdfstamp_dss_input in = {PDFSTAMP_DSS_OCSP, "r.der", NULL, 0};

	make_ocsp(&d, OCSP_GOOD);
	in.data = d.b;
	in.len = d.n;
	ck_assert_int_eq(load(&s, 1, &in), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.v[0].nids, 1);
	ck_assert_int_eq(s.v[0].ids[0].md, MBEDTLS_MD_SHA1);
	ck_assert_uint_eq(s.v[0].ids[0].serial_len, 2);
	ck_assert_ptr_eq(s.v[0].ids[0].serial, s.v[0].der + (s.v[0].ids[0].serial - s.v[0].der)); /* into the copy */
	ck_assert(s.v[0].ids[0].serial >= s.v[0].der && s.v[0].ids[0].serial < s.v[0].der + s.v[0].len);
	ps_dss_items_free(&s);
	/* truncated, trailing byte */
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, d.b, d.n - 1), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("truncated"));
	d.b[d.n++] = 0;
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, d.b, d.n), PDFSTAMP_E_FORMAT);
	make_ocsp(&d, OCSP_STATUS_TRYLATER);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, d.b, d.n), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("tryLater (3), not successful (0)"));
	make_ocsp(&d, OCSP_WRONG_TYPE);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, d.b, d.n), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("not id-pkix-ocsp-basic"));
	make_ocsp(&d, OCSP_NO_BYTES);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, d.b, d.n), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("no responseBytes"));
	make_ocsp(&d, OCSP_NO_RESPONSES);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_OCSP, d.b, d.n), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("no responses"));
	/* an OCSP response given as a certificate says what it is */
	make_ocsp(&d, OCSP_GOOD);
	ck_assert_int_eq(load1(PDFSTAMP_DSS_CERT, d.b, d.n), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("it is an OCSP response"));
}
END_TEST

START_TEST(duplicates)
{
	char *a = pem("", "CERTIFICATE", leaf_der, sizeof leaf_der);
	ps_dss_items s;
	struct pdfstamp_dss_input in[4] = {
		{PDFSTAMP_DSS_CERT, "leaf.der", leaf_der, sizeof leaf_der},
		{PDFSTAMP_DSS_CERT, "ca.der", ca_der, sizeof ca_der},
		{PDFSTAMP_DSS_CERT, "leaf.pem", (const uint8_t *)a, strlen(a)},
		{PDFSTAMP_DSS_CRL, "crl.der", crl_der, sizeof crl_der},
	};

	ck_assert_int_eq(load(&s, 4, in), 0);
	ck_assert_uint_eq(s.n, 4);
	ck_assert_int_eq(s.v[0].dup_of, -1);
	ck_assert_int_eq(s.v[1].dup_of, -1);
	ck_assert_int_eq(s.v[2].dup_of, 0);   /* the same bytes, given as PEM */
	ck_assert_int_eq(s.v[3].dup_of, -1);
	ps_dss_items_free(&s);
	free(a);
}
END_TEST

START_TEST(vri_key_and_belongs)
{
	char key[41];
	uint8_t contents[2048];
	der o, o2;
	ps_dss_items s;
	struct pdfstamp_dss_input in[5] = {
		{PDFSTAMP_DSS_CERT, "ca", ca_der, sizeof ca_der},
		{PDFSTAMP_DSS_CERT, "leaf", leaf_der, sizeof leaf_der},
		{PDFSTAMP_DSS_CRL, "crl", crl_der, sizeof crl_der},
		{PDFSTAMP_DSS_OCSP, "ocsp", NULL, 0},
		{PDFSTAMP_DSS_OCSP, "ocsp-other", NULL, 0},
	};

	/* FIPS 180 test vector: SHA-1("abc") */
	ck_assert_int_eq(ps_dss_vri_key((const uint8_t *)"abc", 3, key), 0);
	ck_assert_str_eq(key, "A9993E364706816ABA3E25717850C26C9CD0D89D");
	/* zero padding is part of the key */
	ck_assert_int_eq(ps_dss_vri_key((const uint8_t *)"abc\0", 4, key), 0);
	ck_assert_str_ne(key, "A9993E364706816ABA3E25717850C26C9CD0D89D");

	make_ocsp(&o, OCSP_GOOD);
	make_ocsp(&o2, OCSP_OTHER_SERIAL);
	in[3].data = o.b;
	in[3].len = o.n;
	in[4].data = o2.b;
	in[4].len = o2.n;
	ck_assert_int_eq(load(&s, 5, in), 0);
	/* a CMS-like blob holding the leaf, zero-padded */
	memset(contents, 0, sizeof contents);
	memcpy(contents + 100, leaf_der, sizeof leaf_der);
	ps_dss_belongs(&s, contents, sizeof contents);
	ck_assert_int_eq(s.v[1].belongs, 1); /* a: in /Contents */
	ck_assert_int_eq(s.v[0].belongs, 1); /* b: its issuer */
	ck_assert_int_eq(s.v[2].belongs, 1); /* e: its issuer's CRL */
	ck_assert_int_eq(s.v[3].belongs, 1); /* c: CertID names the leaf */
	ck_assert_int_eq(s.v[4].belongs, 0); /* another serial */
	/* nothing of ours in /Contents: nothing belongs */
	memset(contents, 0, sizeof contents);
	memcpy(contents, ca_der, 50); /* a prefix is not the certificate */
	ps_dss_belongs(&s, contents, sizeof contents);
	ck_assert_int_eq(s.v[0].belongs + s.v[1].belongs + s.v[2].belongs + s.v[3].belongs + s.v[4].belongs, 0);
	/* the CA alone: the CRL it issued is not "for" the CA (its issuer is itself, self-issued stops b) */
	memcpy(contents, ca_der, sizeof ca_der);
	ps_dss_belongs(&s, contents, sizeof contents);
	ck_assert_int_eq(s.v[0].belongs, 1);
	ck_assert_int_eq(s.v[1].belongs, 0);
	ck_assert_int_eq(s.v[3].belongs, 0);
	ps_dss_items_free(&s);
}
END_TEST

/* ---- whole updates ----------------------------------------------------------------- */

/* A file with one signature field whose /Contents holds the leaf,
 * zero-padded to 600 bytes; CATALOG_EXTRA in the catalog, EXTRA objects
 * (numbers 9..) written by the caller through P before saving. */
static void signed_file(pg *p, const char *catalog_extra)
{
	char hex[1201];
	size_t i;

	memset(hex, '0', 1200);
	hex[1200] = 0;
	for (i = 0; i < sizeof leaf_der; i++)
		sprintf(hex + 2 * i, "%02X", leaf_der[i]);
	hex[2 * sizeof leaf_der] = '0'; /* sprintf's NUL */
	pg_start(p);
	pg_obj(p, 1, 0, "<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[7 0 R]/SigFlags 3>>%s>>", catalog_extra);
	pg_obj(p, 2, 0, "<</Type/Pages/Kids[3 0 R]/Count 1>>");
	pg_obj(p, 3, 0, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Annots[7 0 R]>>");
	pg_obj(p, 4, 0, "<</Producer(check_dss)>>");
	pg_obj(p, 7, 0, "<</FT/Sig/T(Signature1)/V 8 0 R/Type/Annot/Subtype/Widget/Rect[0 0 0 0]/P 3 0 R>>");
	pg_obj(p, 8, 0, "<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/adbe.pkcs7.detached" PG_SIG_BR
	       "/Contents<%s>>>", hex);
}

/* P as in.pdf, one revision whose signature covers it. */
static void save_signed(pg *p)
{
	pg_table_all(p, "/Info 4 0 R");
	pg_set_byterange(p, 0);
	pg_save(p, dir, "in.pdf");
}

static void open_doc(const char *pth, int write, const char *pw)
{
	pdfstamp_doc_close(doc);
	doc = NULL;
	ck_assert_int_eq(pdfstamp_doc_open(ctx, &doc, pth, write ? PDFSTAMP_OPEN_WRITE : 0), 0);
	if (pw)
		ck_assert_int_eq(pdfstamp_doc_auth(doc, pw, strlen(pw), 0), 0);
}

static int run_dss(int vri, int in_place, const char *out, struct pdfstamp_result *res)
{
	der o;
	struct pdfstamp_dss_input in[4] = {
		{PDFSTAMP_DSS_CERT, "leaf", leaf_der, sizeof leaf_der},
		{PDFSTAMP_DSS_CERT, "ca", ca_der, sizeof ca_der},
		{PDFSTAMP_DSS_CRL, "crl", crl_der, sizeof crl_der},
		{PDFSTAMP_DSS_OCSP, "ocsp", NULL, 0},
	};
	struct pdfstamp_dss_opts opts = PDFSTAMP_DSS_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;

	make_ocsp(&o, OCSP_GOOD);
	in[3].data = o.b;
	in[3].len = o.n;
	opts.inputs = in;
	opts.ninputs = 4;
	opts.vri = vri;
	if (in_place)
		w.flags = PDFSTAMP_WRITE_IN_PLACE;
	else
		w.output = out;
	return pdfstamp_dss(doc, &opts, &w, res);
}

/* The decrypted bytes of the stream at array entry I of ARR. */
static void expect_stream(ps_obj *arr, size_t i, const uint8_t *want, size_t n)
{
	ps_obj *e = ps_array_get(arr, i), *stm = NULL;
	ps_buf b = PS_BUF_INIT;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->kind, PS_REF);
	ck_assert_int_eq(ps_doc_lookup(doc, e->u.ref.num, &stm), 0);
	ck_assert_ptr_nonnull(stm);
	ck_assert_int_eq(stm->kind, PS_STREAM);
	ck_assert_ptr_null(ps_dict_get(stm, "Filter"));
	ck_assert_int_eq(ps_doc_stream_data(doc, e->u.ref.num, stm, 1, &b), 0);
	ck_assert_uint_eq(b.len, n);
	ck_assert(memcmp(b.data, want, n) == 0);
	ps_buf_free(&b);
}

/* Checks the /DSS of DOC after a full run; returns the catalog. */
static ps_obj *check_dss_of(int vri)
{
	ps_obj *root = NULL, *dss = NULL, *arr = NULL, *sig = NULL, *v = NULL, *ent = NULL;
	char key[41];

	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL), 0);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(root, "DSS"), &dss), 0);
	ck_assert_ptr_nonnull(dss);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(dss, "Certs"), &arr), 0);
	ck_assert_uint_eq(ps_array_len(arr), 2);
	expect_stream(arr, 0, leaf_der, sizeof leaf_der);
	expect_stream(arr, 1, ca_der, sizeof ca_der);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(dss, "CRLs"), &arr), 0);
	ck_assert_uint_eq(ps_array_len(arr), 1);
	expect_stream(arr, 0, crl_der, sizeof crl_der);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(dss, "OCSPs"), &arr), 0);
	ck_assert_uint_eq(ps_array_len(arr), 1);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(dss, "VRI"), &v), 0);
	if (!vri) {
		ck_assert_ptr_null(v);
		return root;
	}
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(ps_doc_lookup(doc, 8, &sig), 0);
	ck_assert_int_eq(ps_dss_vri_key(ps_dict_get(sig, "Contents")->u.str.p, ps_dict_get(sig, "Contents")->u.str.len,
	                                key), 0);
	ck_assert_uint_eq(ps_dict_get(sig, "Contents")->u.str.len, 600);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(v, key), &ent), 0);
	ck_assert_ptr_nonnull(ent);
	ck_assert_uint_eq(ps_array_len(ps_dict_get(ent, "Cert")), 2);
	ck_assert_uint_eq(ps_array_len(ps_dict_get(ent, "CRL")), 1);
	ck_assert_uint_eq(ps_array_len(ps_dict_get(ent, "OCSP")), 1);
	return root;
}

static int64_t size_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	return (int64_t)st.st_size;
}

START_TEST(update_plaintext)
{
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	ps_obj *root;
	pg p;
	int64_t before;

	signed_file(&p, "");
	save_signed(&p);
	open_doc(path, 1, NULL);
	before = size_of(path);
	/* without --vri first, then with it: only the VRI is new */
	ck_assert_int_eq(run_dss(0, 1, NULL, &res), 0);
	ck_assert_int_eq(res.nobjects, 6); /* 4 streams, /DSS, the catalog */
	ck_assert_int_gt(size_of(path), before);
	open_doc(path, 1, NULL);
	root = check_dss_of(0);
	ck_assert_ptr_nonnull(ps_dict_get(root, "AcroForm")); /* the rest of the catalog kept */
	ck_assert_int_eq(ps_dict_get(root, "DSS")->kind, PS_REF);
	before = size_of(path);
	ck_assert_int_eq(run_dss(1, 1, NULL, &res), 0);
	ck_assert_int_eq(res.nobjects, 1); /* only the indirect /DSS */
	open_doc(path, 1, NULL);
	check_dss_of(1);
	/* a third run: nothing new, nothing written */
	before = size_of(path);
	ck_assert_int_eq(run_dss(1, 1, NULL, &res), 0);
	ck_assert_int_eq(res.nobjects, 0);
	ck_assert_int_eq(res.bytes_appended, 0);
	ck_assert_int_eq(size_of(path), before);
	/* -o with nothing new: no output file */
	ck_assert_int_eq(run_dss(1, 0, outpath, &res), 0);
	ck_assert_int_eq(access(outpath, F_OK), -1);
	pdfstamp_result_clear(&res);
}
END_TEST

START_TEST(update_direct_dss)
{
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	ps_obj *root, *dss;
	pg p;

	/* a direct /DSS that already holds the CA (object 9, Flate-free) */
	signed_file(&p, "/DSS<</Certs[9 0 R]/Foo 1>>");
	pg_stream(&p, 9, "", ca_der, sizeof ca_der);
	save_signed(&p);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(1, 0, outpath, &res), 0);
	ck_assert_int_eq(res.nobjects, 4); /* leaf, CRL, OCSP, the catalog */
	open_doc(outpath, 0, NULL);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL), 0);
	dss = ps_dict_get(root, "DSS");
	ck_assert_int_eq(dss->kind, PS_DICT);
	ck_assert_ptr_nonnull(ps_dict_get(dss, "Foo"));
	/* the CA is not added twice: existing entry first, then the leaf */
	ck_assert_uint_eq(ps_array_len(ps_dict_get(dss, "Certs")), 2);
	ck_assert_int_eq(ps_array_get(ps_dict_get(dss, "Certs"), 0)->u.ref.num, 9);
	expect_stream(ps_dict_get(dss, "Certs"), 1, leaf_der, sizeof leaf_der);
	pdfstamp_result_clear(&res);
}
END_TEST

START_TEST(update_encrypted)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	pg p;

	signed_file(&p, "");
	save_signed(&p);
	open_doc(path, 0, NULL);
	o.output = encpath;
	o.flags = PDFSTAMP_REWRITE_FORCE;
	o.user_password = USER_PW;
	o.user_len = strlen(USER_PW);
	o.owner_password = OWNER_PW;
	o.owner_len = strlen(OWNER_PW);
	o.jobs = 1;
	ck_assert_int_eq(pdfstamp_encrypt(doc, &o, NULL), 0);
	open_doc(encpath, 0, USER_PW);
	ck_assert_int_eq(run_dss(1, 0, outpath, &res), 0);
	ck_assert_int_eq(res.nobjects, 6);
	open_doc(outpath, 0, USER_PW);
	check_dss_of(1);
	/* the streams are encrypted in the file: the DER is not there in clear */
	{
		size_t n;
		uint8_t *all = pg_slurp(outpath, &n);
		ck_assert_ptr_nonnull(all);
		ck_assert_ptr_null(memmem(all, n, crl_der, sizeof crl_der));
		free(all);
	}
	/* the same run on the output adds nothing */
	ck_assert_int_eq(run_dss(1, 1, NULL, &res), PDFSTAMP_E_USAGE); /* read-only open: in place refused */
	unlink(encpath);
	ck_assert_int_eq(rename(outpath, encpath), 0);
	open_doc(encpath, 0, USER_PW);
	ck_assert_int_eq(run_dss(1, 0, outpath, &res), 0);
	ck_assert_int_eq(res.nobjects, 0);
	ck_assert_int_eq(access(outpath, F_OK), -1);
	pdfstamp_result_clear(&res);
}
END_TEST

START_TEST(update_refused)
{
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	pg p;

	/* /DSS that is not a dictionary, /Certs that is not an array */
	signed_file(&p, "/DSS 5");
	save_signed(&p);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(0, 0, outpath, &res), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("/DSS"));
	ck_assert_int_eq(access(outpath, F_OK), -1);
	signed_file(&p, "/DSS<</Certs 7>>");
	save_signed(&p);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(0, 0, outpath, &res), PDFSTAMP_E_FORMAT);
	ck_assert(has_msg("/Certs"));
	ck_assert_int_eq(access(outpath, F_OK), -1);
	/* the pre-flight (policy.c) runs first: a certification that is not a
	 * signature dictionary leaves the policy unknown, and nothing is built */
	signed_file(&p, "/Perms<</DocMDP 5>>");
	save_signed(&p);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(0, 0, outpath, &res), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_int_eq(access(outpath, F_OK), -1);
	pdfstamp_result_clear(&res);
}
END_TEST

/* A /DSS from a hostile revision: /VRI is the /DSS itself, /Certs an
 * indirect array that holds itself, a stream with the CA (a duplicate) and
 * junk; /OCSPs names a page and a missing object.  Nothing crashes or
 * loops, every entry is kept, the CA is not added twice, the catalog is
 * not touched, and a second run adds nothing. */
START_TEST(update_hostile_dss)
{
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	ps_obj *root = NULL, *dss = NULL, *arr = NULL;
	pg p;
	int i;

	signed_file(&p, "/DSS 9 0 R");
	pg_obj(&p, 9, 0, "<</Certs 10 0 R/VRI 9 0 R/OCSPs[3 0 R 99 0 R]>>");
	pg_obj(&p, 10, 0, "[10 0 R 11 0 R 12 0 R]");
	pg_stream(&p, 11, "", ca_der, sizeof ca_der);
	pg_stream(&p, 12, "/Filter/FlateDecode", "junk", 4);
	save_signed(&p);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(1, 0, outpath, &res), 0);
	ck_assert_int_gt(nwarn, 0); /* the unreadable entries */
	for (i = 0; i < res.nobjects; i++)
		ck_assert_uint_ne(res.objects[i], 1); /* the catalog is left alone */
	open_doc(outpath, 0, NULL);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL), 0);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(root, "DSS"), &dss), 0);
	ck_assert_ptr_nonnull(dss);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(dss, "Certs"), &arr), 0);
	ck_assert_uint_eq(ps_array_len(arr), 4); /* 10, 11 (the CA), 12, the leaf */
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(ps_array_get(arr, (size_t)i)->u.ref.num, (unsigned)(10 + i));
	expect_stream(arr, 3, leaf_der, sizeof leaf_der);
	arr = ps_dict_get(dss, "OCSPs");
	ck_assert_uint_eq(ps_array_len(arr), 3);
	ck_assert_uint_eq(ps_array_get(arr, 0)->u.ref.num, 3);
	ck_assert_uint_eq(ps_array_get(arr, 1)->u.ref.num, 99);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(dss, "CRLs"), &arr), 0);
	ck_assert_uint_eq(ps_array_len(arr), 1);
	expect_stream(arr, 0, crl_der, sizeof crl_der);
	/* again: everything is there (the CA through object 11) */
	unlink(path);
	ck_assert_int_eq(rename(outpath, path), 0);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(1, 0, outpath, &res), 0);
	ck_assert_int_eq(res.nobjects, 0);
	ck_assert_int_eq(access(outpath, F_OK), -1);
	pdfstamp_result_clear(&res);
}
END_TEST

/* Object NUM: an array of N references to TARGET, then one to LAST (0: none);
 * too long for pg_obj's buffer, so written here. */
static void big_array(pg *p, uint32_t num, uint32_t target, size_t n, uint32_t last)
{
	size_t i;

	p->off[num] = (int64_t)p->b.len;
	p->gen[num] = 0;
	ps_buf_printf(&p->b, "%u 0 obj\n[", num);
	for (i = 0; i < n; i++)
		ps_buf_printf(&p->b, "%u 0 R ", target);
	if (last)
		ps_buf_printf(&p->b, "%u 0 R", last);
	ps_buf_puts(&p->b, "]\nendobj\n");
}

/* A FlateDecode stream of MB MiB of zeros (ps_deflate), into OUT. */
static void zeros(size_t mb, ps_buf *out)
{
	uint8_t *z = calloc(mb << 20, 1);

	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(ps_deflate(ctx, z, mb << 20, 9, out), 0);
	free(z);
}

/* dss.c note 3: a /Certs array naming one 4 MiB FlateDecode stream 20,000
 * times (80 GB if each entry were decoded: far past the cap, which would
 * refuse) and then the CA.  Each object is decoded once: the run succeeds,
 * finds the CA where it is and adds the rest. */
START_TEST(update_amplified_dss)
{
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	ps_buf z = PS_BUF_INIT;
	ps_obj *root = NULL, *dss = NULL, *arr = NULL;
	pg p;

	zeros(4, &z);
	signed_file(&p, "/DSS 9 0 R");
	pg_obj(&p, 9, 0, "<</Certs 10 0 R>>");
	big_array(&p, 10, 11, 20000, 12);
	pg_stream(&p, 11, "/Filter/FlateDecode", z.data, z.len);
	pg_stream(&p, 12, "", ca_der, sizeof ca_der);
	save_signed(&p);
	ps_buf_free(&z);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(0, 0, outpath, &res), 0);
	ck_assert_int_eq(res.nobjects, 5); /* leaf, CRL, OCSP, /Certs (10), /DSS (9) */
	open_doc(outpath, 0, NULL);
	ck_assert_int_eq(ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL), 0);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(root, "DSS"), &dss), 0);
	ck_assert_int_eq(ps_doc_resolve(doc, ps_dict_get(dss, "Certs"), &arr), 0);
	ck_assert_uint_eq(ps_array_len(arr), 20002); /* the CA (12) is not added again */
	ck_assert_uint_eq(ps_array_get(arr, 20000)->u.ref.num, 12);
	expect_stream(arr, 20001, leaf_der, sizeof leaf_der);
	pdfstamp_result_clear(&res);
}
END_TEST

/* dss.c note 3: three distinct 32 MiB streams (96 MiB decoded, past 4
 * times the small file plus 64 MiB): refused with UNSUPPORTED naming the
 * cap, no output, the file unchanged in place; the same with streams that
 * fail to decode; two streams are under the cap. */
START_TEST(update_decode_cap)
{
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	ps_buf z = PS_BUF_INIT;
	int64_t before;
	pg p;

	zeros(32, &z);
	signed_file(&p, "/DSS<</Certs[10 0 R 11 0 R 12 0 R 10 0 R]>>");
	pg_stream(&p, 10, "/Filter/FlateDecode", z.data, z.len);
	pg_stream(&p, 11, "/Filter/FlateDecode", z.data, z.len);
	pg_stream(&p, 12, "/Filter/FlateDecode", z.data, z.len);
	save_signed(&p);
	ps_buf_free(&z);
	before = size_of(path);
	ck_assert_int_lt(before, 1 << 20);
	open_doc(path, 1, NULL);
	ck_assert_int_eq(run_dss(0, 0, outpath, &res), PDFSTAMP_E_UNSUPPORTED);
	ck_assert(has_msg("the cap: 4 times the file size plus 64 MiB"));
	ck_assert_int_eq(access(outpath, F_OK), -1);
	ck_assert_int_eq(run_dss(0, 1, NULL, &res), PDFSTAMP_E_UNSUPPORTED);
	ck_assert_int_eq(size_of(path), before);
	/* what fails to decode counts too: three truncated 32 MiB streams each
	 * inflate most of their bytes before failing (each alone a warning) */
	zeros(32, &z);
	ck_assert_uint_gt(z.len, 64);
	signed_file(&p, "/DSS<</Certs[10 0 R 11 0 R 12 0 R]>>");
	pg_stream(&p, 10, "/Filter/FlateDecode", z.data, z.len - 16);
	pg_stream(&p, 11, "/Filter/FlateDecode", z.data, z.len - 16);
	pg_stream(&p, 12, "/Filter/FlateDecode", z.data, z.len - 16);
	save_signed(&p);
	ps_buf_free(&z);
	open_doc(path, 0, NULL);
	nwarn = 0;
	ck_assert_int_eq(run_dss(0, 0, outpath, &res), PDFSTAMP_E_UNSUPPORTED);
	ck_assert(has_msg("the cap: 4 times the file size plus 64 MiB"));
	ck_assert_int_eq(nwarn, 1); /* the first one that failed */
	ck_assert_int_eq(access(outpath, F_OK), -1);
	/* two of them (64 MiB) are under the cap */
	signed_file(&p, "/DSS<</Certs[10 0 R 11 0 R 10 0 R 11 0 R]>>");
	zeros(32, &z);
	pg_stream(&p, 10, "/Filter/FlateDecode", z.data, z.len);
	pg_stream(&p, 11, "/Filter/FlateDecode", z.data, z.len);
	save_signed(&p);
	ps_buf_free(&z);
	open_doc(path, 0, NULL);
	ck_assert_int_eq(run_dss(0, 0, outpath, &res), 0);
	pdfstamp_result_clear(&res);
}
END_TEST

static Suite *dss_suite(void)
{
	Suite *s = suite_create("dss");
	TCase *tc = tcase_create("inputs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, der_inputs);
	tcase_add_test(tc, pem_inputs);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, ocsp_structure);
	tcase_add_test(tc, duplicates);
	tcase_add_test(tc, vri_key_and_belongs);
	suite_add_tcase(s, tc);
	tc = tcase_create("updates");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, update_plaintext);
	tcase_add_test(tc, update_direct_dss);
	tcase_add_test(tc, update_encrypted);
	tcase_add_test(tc, update_refused);
	tcase_add_test(tc, update_hostile_dss);
	tcase_add_test(tc, update_amplified_dss);
	tcase_add_test(tc, update_decode_cap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dss_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
