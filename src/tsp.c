/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tsp.c - the RFC 3161 Time-Stamp Protocol client: the TimeStampReq it
 * sends and every check of the TimeStampResp before a token is used.
 *
 * DESIGN NOTES
 *
 * Place: a module that uses mbedTLS (ASN.1, X.509), above sigcms.c, whose
 * CMS reader checks the token's signature (ps_sigcms_token), below
 * timestamp.c, its user.  No I/O: http.c carries the bytes.  Everything in
 * a reply is hostile: every DER length is checked by mbedTLS's readers
 * against the end of its enclosing item; the structure is walked by a
 * fixed sequence of reads (no recursion).
 *
 *  1. The request (RFC 3161 2.4.1): TimeStampReq SEQUENCE { version 1,
 *     messageImprint { hashAlgorithm (SHA-256, -384 or -512, parameters
 *     NULL), hashedMessage }, nonce INTEGER, certReq TRUE }.  No reqPolicy
 *     (the TSA's default) and no extensions.  The nonce is
 *     PS_TSP_NONCE_LEN random bytes, its first byte forced into 1..127 so
 *     that its DER is exactly those bytes: a positive INTEGER without a
 *     leading zero, compared byte for byte in note 4.  certReq TRUE makes
 *     the TSA put its certificate in the token, which note 3 needs.
 *  2. The status (2.4.2): TimeStampResp SEQUENCE { PKIStatusInfo
 *     { status INTEGER, statusString PKIFreeText OPTIONAL, failInfo BIT
 *     STRING OPTIONAL }, timeStampToken OPTIONAL }.  Only granted (0) and
 *     grantedWithMods (1) go on, and then a token must be there; any other
 *     status is refused with its name and the TSA's first UTF8String (made
 *     printable, bounded) in the message.
 *  3. The token: a CMS SignedData of id-ct-TSTInfo whose messageDigest is
 *     the hash of the TSTInfo and whose signature verifies with the
 *     certificate the CMS carries (sigcms.c notes 2-4).  That certificate
 *     must have the extended key usage id-kp-timeStamping alone, and it
 *     must be critical (2.3; read from the DER, check_eku), and the
 *     token's ESS signing-certificate attribute (2.4.1; RFC 2634 5.4, RFC
 *     5816 2.2.1) must name it: the first
 *     ESSCertID's certHash (SHA-1; ESSCertIDv2: its hashAlgorithm, SHA-256
 *     by default) is the hash of its DER, so that no other certificate
 *     with the same key can pass for the TSA's.  Whether it is trusted is
 *     the caller's business: with a CA file, mbedtls_x509_crt_verify over
 *     the signer and the token's other certificates against the file's
 *     certificates (validity times included, no CRL).
 *  4. The TSTInfo (2.4.2): version 1, policy, messageImprint equal to the
 *     request's (algorithm and bytes), serialNumber, genTime, accuracy and
 *     ordering skipped, nonce present and equal to the request's: a reply
 *     without the nonce, or with another, may be a replay.  The genTime
 *     text, the serialNumber and the signer's subject are kept for the
 *     caller's report.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/asn1.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "tsp.h"
#include "sigcms.h"
#include "der.h"

/* RFC 2634 5.4 id-aa-signingCertificate, RFC 5035 id-aa-signingCertificateV2 */
static const uint8_t OID_SIGNING_CERT[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09,
                                           0x10, 0x02, 0x0C};
static const uint8_t OID_SIGNING_CERT_V2[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09,
                                              0x10, 0x02, 0x2F};

static mbedtls_md_type_t md_of(int bits)
{
	return bits == 256 ? MBEDTLS_MD_SHA256 : bits == 384 ? MBEDTLS_MD_SHA384
	       : bits == 512 ? MBEDTLS_MD_SHA512 : MBEDTLS_MD_NONE;
}

/* One DER length (short or long form, up to 4 bytes) into OUT. */
static void put_len(ps_buf *out, size_t n)
{
	if (n < 0x80) {
		ps_buf_putc(out, (int)n);
	} else if (n <= 0xFF) {
		ps_buf_putc(out, 0x81);
		ps_buf_putc(out, (int)n);
	} else {
		ps_buf_putc(out, 0x82);
		ps_buf_putc(out, (int)(n >> 8));
		ps_buf_putc(out, (int)(n & 0xFF));
	}
}

static void put_tlv(ps_buf *out, int tag, const void *p, size_t n)
{
	ps_buf_putc(out, tag);
	put_len(out, n);
	ps_buf_append(out, p, n);
}

int ps_tsp_request(ps_ctx *ctx, struct ps_tsp_req *req, ps_buf *out)
{
	static const uint8_t v1[] = {0x02, 0x01, 0x01}, cert_req[] = {0x01, 0x01, 0xFF};
	mbedtls_md_type_t md = md_of(req->bits);
	ps_buf alg = PS_BUF_INIT, imp = PS_BUF_INIT, body = PS_BUF_INIT;
	const char *oid;
	size_t olen;
	int rc;

	if (md == MBEDTLS_MD_NONE || mbedtls_oid_get_oid_by_md(md, &oid, &olen) != 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "a time stamp hash must be SHA-256, -384 or "
		              "-512");
	if ((rc = ps_random(ctx, req->nonce, sizeof req->nonce)) < 0)
		return rc;
	req->nonce[0] = (uint8_t)(1 + req->nonce[0] % 127);   /* note 1 */
	put_tlv(&alg, MBEDTLS_ASN1_OID, oid, olen);
	ps_buf_putc(&alg, MBEDTLS_ASN1_NULL);
	ps_buf_putc(&alg, 0);
	put_tlv(&imp, PS_DER_SEQ, alg.data, alg.len);
	put_tlv(&imp, MBEDTLS_ASN1_OCTET_STRING, req->hash, (size_t)req->bits / 8);
	ps_buf_append(&body, v1, sizeof v1);
	put_tlv(&body, PS_DER_SEQ, imp.data, imp.len);
	put_tlv(&body, MBEDTLS_ASN1_INTEGER, req->nonce, sizeof req->nonce);
	ps_buf_append(&body, cert_req, sizeof cert_req);
	put_tlv(out, PS_DER_SEQ, body.data, body.len);
	rc = alg.oom || imp.oom || body.oom || out->oom ?
	     ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
	ps_buf_free(&alg);
	ps_buf_free(&imp);
	ps_buf_free(&body);
	return rc;
}

void ps_tsp_token_free(struct ps_tsp_token *tok)
{
	if (!tok)
		return;
	free(tok->der);
	memset(tok, 0, sizeof *tok);
}

static const char *status_name(int s)
{
	static const char *const n[] = {"granted", "grantedWithMods", "rejection", "waiting",
	                                 "revocationWarning", "revocationNotification"};
	return s >= 0 && s < 6 ? n[s] : "unknown";
}

/* Note 2: the TSA's first statusString, printable, into OUT. */
static void status_text(const uint8_t *p, const uint8_t *end, char *out, size_t cap)
{
	size_t len, i, k = 0;

	out[0] = '\0';
	if (p >= end || *p != PS_DER_SEQ || ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return;
	end = p + len;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_UTF8_STRING, &len) != 0)
		return;
	for (i = 0; i < len && k + 1 < cap; i++)
		out[k++] = p[i] >= 0x20 && p[i] < 0x7F ? (char)p[i] : '?';
	out[k] = '\0';
}

/* An INTEGER's content without leading zero bytes. */
static void int_strip(const uint8_t **p, size_t *n)
{
	while (*n > 1 && (*p)[0] == 0) {
		(*p)++;
		(*n)--;
	}
}

/* Note 4. */
static int check_tstinfo(ps_ctx *ctx, const struct ps_tsp_req *req, const uint8_t *d, size_t n,
                         struct ps_tsp_token *tok)
{
	const uint8_t *p = d, *end = d + n, *mend, *h;
	unsigned char *q;
	mbedtls_md_type_t md;
	mbedtls_asn1_buf oid;
	size_t len, hlen, i;
	int ver;

	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
		goto bad;
	q = (unsigned char *)p;
	if (mbedtls_asn1_get_int(&q, end, &ver) != 0 || ver != 1)
		goto bad;
	p = q;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OID, &len) != 0)    /* policy */
		goto bad;
	p += len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		goto bad;
	mend = p + len;
	q = (unsigned char *)p;
	if (mbedtls_asn1_get_alg_null(&q, mend, &oid) != 0 ||
	    mbedtls_oid_get_md_alg(&oid, &md) != 0)
		goto bad;
	p = q;
	if (ps_der_tag(&p, mend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 || p + len != mend)
		goto bad;
	h = p;
	hlen = len;
	if (md != md_of(req->bits) || hlen != (size_t)req->bits / 8 ||
	    memcmp(h, req->hash, hlen) != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the time stamp's messageImprint is not the "
		              "hash that was sent (a token for other data)");
	p = mend;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_INTEGER, &len) != 0 || len == 0)   /* serial */
		goto bad;
	for (i = 0; i < len && 2 * i + 2 < sizeof tok->serial; i++)
		snprintf(tok->serial + 2 * i, 3, "%02x", p[i]);
	p += len;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_GENERALIZED_TIME, &len) != 0 || len < 14 ||
	    len >= sizeof tok->gen_time)
		goto bad;
	for (i = 0; i < len; i++) {
		if (p[i] < 0x20 || p[i] >= 0x7F)
			goto bad;
		tok->gen_time[i] = (char)p[i];
	}
	tok->gen_time[len] = '\0';
	p += len;
	if (p < end && *p == PS_DER_SEQ && ps_der_skip(&p, end, NULL) != 0)     /* accuracy */
		goto bad;
	if (p < end && *p == MBEDTLS_ASN1_BOOLEAN && ps_der_skip(&p, end, NULL) != 0)
		goto bad;
	if (p >= end || *p != MBEDTLS_ASN1_INTEGER)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the time stamp carries no nonce (a reply "
		              "to another request, or a replay)");
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_INTEGER, &len) != 0 || len == 0)
		goto bad;
	{
		const uint8_t *a = p, *b = req->nonce;
		size_t an = len, bn = sizeof req->nonce;
		int_strip(&a, &an);
		int_strip(&b, &bn);
		if (an != bn || memcmp(a, b, an) != 0)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "the time stamp's nonce is not the "
			              "one sent (a reply to another request, or a replay)");
	}
	return 0;
bad:
	return ps_err(ctx, PDFSTAMP_E_FORMAT, "the time stamp's TSTInfo does not parse");
}

/* Note 3: the ESS signing-certificate attribute names the certificate
 * that verified the signature. */
static int check_ess(ps_ctx *ctx, const struct ps_sigcms_token *t)
{
	const uint8_t *p = t->attrs, *end, *aend, *oid, *q;
	uint8_t h[MBEDTLS_MD_MAX_SIZE];
	size_t len, oid_len;

	if (!p || ps_der_tag(&p, p + t->attrs_len, PS_DER_CTX_C(0), &len) != 0)
		goto bad;
	end = p + len;
	while (p < end) {
		mbedtls_md_type_t md = MBEDTLS_MD_SHA1;
		const mbedtls_md_info_t *mi;
		int v2;
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			goto bad;
		aend = p + len;
		if (ps_der_tag(&p, aend, MBEDTLS_ASN1_OID, &oid_len) != 0)
			goto bad;
		oid = p;
		p += oid_len;
		v2 = oid_len == sizeof OID_SIGNING_CERT_V2 &&
		     memcmp(oid, OID_SIGNING_CERT_V2, oid_len) == 0;
		if (!v2 && (oid_len != sizeof OID_SIGNING_CERT ||
		            memcmp(oid, OID_SIGNING_CERT, oid_len) != 0)) {
			p = aend;
			continue;
		}
		/* SET { SigningCertificate{V2} { certs SEQUENCE OF ESSCertID{v2}, ... } } */
		if (ps_der_tag(&p, aend, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET, &len) != 0 ||
		    ps_der_tag(&p, aend, PS_DER_SEQ, &len) != 0 ||
		    ps_der_tag(&p, aend, PS_DER_SEQ, &len) != 0 ||
		    ps_der_tag(&p, aend, PS_DER_SEQ, &len) != 0)
			goto bad;
		q = p + len;
		if (v2) {
			md = MBEDTLS_MD_SHA256;
			if (p < q && *p == PS_DER_SEQ) {
				mbedtls_asn1_buf alg, params;
				unsigned char *u = (unsigned char *)p;
				if (mbedtls_asn1_get_alg(&u, q, &alg, &params) != 0 ||
				    mbedtls_oid_get_md_alg(&alg, &md) != 0)
					goto bad;
				p = u;
			}
		}
		/* a hash mbedTLS names but cannot compute (no md_info) is malformed
		 * for us, never a zero-length hash */
		mi = mbedtls_md_info_from_type(md);
		if (!mi || ps_der_tag(&p, q, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 ||
		    len != mbedtls_md_get_size(mi) ||
		    mbedtls_md(mi, t->signer, t->signer_len, h) != 0)
			goto bad;
		if (memcmp(h, p, len) != 0)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the time-stamp token's ESS signing-certificate attribute "
			              "names another certificate than the one that signed it");
		return 0;
	}
	return ps_err(ctx, PDFSTAMP_E_FORMAT, "the time-stamp token has no ESS signing-certificate "
	              "attribute (RFC 3161 2.4.1)");
bad:
	return ps_err(ctx, PDFSTAMP_E_FORMAT, "the time-stamp token's ESS signing-certificate "
	              "attribute does not parse");
}

/* Note 3, RFC 3161 2.3: "The corresponding certificate MUST contain only
 * one instance of the extended key usage field extension ... with
 * KeyPurposeID having value id-kp-timeStamping.  This extension MUST be
 * critical."  Read from the DER, since mbedTLS neither keeps the critical
 * flag nor tells anyExtendedKeyUsage (which it takes as a wildcard) from
 * the purpose itself. */
static int check_eku(ps_ctx *ctx, const mbedtls_x509_crt *c, const char *name)
{
	static const char eku[] = MBEDTLS_OID_EXTENDED_KEY_USAGE;
	static const char ts[] = MBEDTLS_OID_TIME_STAMPING;
	const uint8_t *v, *end;
	size_t vlen, len;
	int critical = 0;

	if (ps_der_cert_ext(&c->v3_ext, eku, sizeof eku - 1, &v, &vlen, &critical) != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA certificate (%s) lacks the extended "
		              "key usage id-kp-timeStamping", name);
	end = v + vlen;
	if (ps_der_tag(&v, end, PS_DER_SEQ, &len) != 0 || v + len != end ||
	    ps_der_tag(&v, end, MBEDTLS_ASN1_OID, &len) != 0 || len != sizeof ts - 1 ||
	    memcmp(v, ts, len) != 0 || v + len != end)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA certificate (%s) has an extended "
		              "key usage other than id-kp-timeStamping alone (RFC 3161 2.3)", name);
	if (!critical)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA certificate's (%s) extended key "
		              "usage is not critical (RFC 3161 2.3)", name);
	return 0;
}

int ps_tsp_check_tsa_usage(ps_ctx *ctx, const uint8_t *cert, size_t n)
{
	mbedtls_x509_crt c;
	int rc;

	mbedtls_x509_crt_init(&c);
	if (mbedtls_x509_crt_parse_der(&c, cert, n) != 0)
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA certificate does not parse");
	else
		rc = check_eku(ctx, &c, "test");
	mbedtls_x509_crt_free(&c);
	return rc;
}

/* Note 3: the TSA certificate's usage, and its chain with a CA file. */
static int check_cert(ps_ctx *ctx, const struct ps_sigcms_token *t, const char *ca_file,
                      struct ps_tsp_token *tok)
{
	mbedtls_x509_crt chain, ca;
	const uint8_t *p = t->certs, *c;
	size_t len;
	uint32_t flags = 0;
	int rc = 0, r;

	mbedtls_x509_crt_init(&chain);
	mbedtls_x509_crt_init(&ca);
	if (mbedtls_x509_crt_parse_der(&chain, t->signer, t->signer_len) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA certificate does not parse");
		goto out;
	}
	if (mbedtls_x509_dn_gets(tok->tsa, sizeof tok->tsa, &chain.subject) < 0)
		tok->tsa[0] = '\0';
	if ((rc = check_eku(ctx, &chain, tok->tsa)) < 0)
		goto out;
	if (!ca_file)
		goto out;
	if ((r = mbedtls_x509_crt_parse_file(&ca, ca_file)) < 0 || !ca.raw.p) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "%s: no certificate could be read (-0x%04x)",
		            ca_file, (unsigned)-r);
		goto out;
	}
	while (ps_sigcms_next_cert(&p, t->certs_end, &c, &len)) {
		if (c == t->signer)
			continue;
		(void)mbedtls_x509_crt_parse_der(&chain, c, len);   /* those that parse */
	}
	if (mbedtls_x509_crt_verify(&chain, &ca, NULL, NULL, &flags, NULL, NULL) != 0) {
		char why[256];
		if (mbedtls_x509_crt_verify_info(why, sizeof why, "", flags) < 0)
			why[0] = '\0';
		for (r = 0; why[r]; r++)
			if (why[r] == '\n')
				why[r] = ';';
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA certificate (%s) does not chain to "
		            "%s: %s", tok->tsa, ca_file, why);
	}
out:
	mbedtls_x509_crt_free(&chain);
	mbedtls_x509_crt_free(&ca);
	return rc;
}

int ps_tsp_check(ps_ctx *ctx, const struct ps_tsp_req *req, const uint8_t *reply, size_t n,
                 const char *ca_file, struct ps_tsp_token *tok)
{
	const uint8_t *p = reply, *end = reply + n, *send, *tstart, *tend;
	struct ps_sigcms cms;
	struct ps_sigcms_token t;
	unsigned char *q;
	size_t len;
	int status, rc;

	memset(tok, 0, sizeof *tok);
	if (n > PS_TSP_MAX_REPLY || ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 ||
	    p + len != end || ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA's reply is not a TimeStampResp");
	send = p + len;
	q = (unsigned char *)p;
	if (mbedtls_asn1_get_int(&q, send, &status) != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA's reply is not a TimeStampResp");
	if (status != 0 && status != 1) {
		char text[128];
		status_text(q, send, text, sizeof text);
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA refused: status %d (%s)%s%s%s",
		              status, status_name(status), text[0] ? ": \"" : "", text,
		              text[0] ? "\"" : "");
	}
	p = send;
	tstart = p;
	if (p >= end || ps_der_skip(&p, end, NULL) != 0 || p != end)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the TSA granted a time stamp but sent no "
		              "token");
	tend = p;
	if ((rc = ps_sigcms_token(ctx, tstart, (size_t)(tend - tstart), &cms, &t)) < 0)
		return rc;
	if (!cms.digest_ok || cms.signature_ok != 1 || !t.signer)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the time-stamp token is not valid: %s",
		              cms.why[0] ? cms.why : "no TSA certificate in the token");
	if ((rc = check_tstinfo(ctx, req, t.tstinfo, t.tstinfo_len, tok)) < 0 ||
	    (rc = check_ess(ctx, &t)) < 0 || (rc = check_cert(ctx, &t, ca_file, tok)) < 0)
		return rc;
	if (!(tok->der = malloc((size_t)(tend - tstart))))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	memcpy(tok->der, tstart, (size_t)(tend - tstart));
	tok->len = (size_t)(tend - tstart);
	return 0;
}
