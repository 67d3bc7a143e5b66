/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ocsp.c - OCSP (RFC 6960) for `dss --fetch`: the request for one
 * certificate, and the checks of a reply to it.  revoc.c decides what to
 * ask, sends it (http.c, netcache.c) and keeps what passes.
 *
 * DESIGN NOTES
 *
 * Place: [content], above x509sig.c, below revoc.c.  mbedTLS for X.509,
 * ASN.1 and SHA-1; nothing of it reaches ps.h.  Every byte of a reply is
 * hostile: it is parsed within its bounds (der.h), any doubt refuses it.
 *
 *  1. The request (4.1, A.1): one Request whose CertID has hashAlgorithm
 *     SHA-1, issuerNameHash = SHA-1(issuer's subject Name DER),
 *     issuerKeyHash = SHA-1(issuer's subjectPublicKey BIT STRING value
 *     without its unused-bits byte), the serialNumber; with a nonce (the
 *     caller's choice: revoc.c sends none with a cache, whose reply could
 *     not echo it) a 16-byte nonce extension (RFC 8954:
 *     id-pkix-ocsp-nonce, an OCTET STRING).  No requestorName, no
 *     signature.
 *  2. The reply must be an OCSPResponse (nothing after it) with
 *     responseStatus successful (the others are named: unauthorized,
 *     tryLater, ...), of type id-pkix-ocsp-basic, with a SingleResponse
 *     whose CertID equals the one asked byte for byte (algorithm, both
 *     hashes, serial) and whose nextUpdate, if any, has not passed (and
 *     without a nextUpdate, whose thisUpdate is at most MAX_AGE_NO_NEXT
 *     old: a reply that never expires could otherwise be replayed from
 *     before a revocation, on plain http or from a cache, where no nonce
 *     is sent); a nonce extension in it must echo the one sent (none
 *     sent: refused);
 *     its signature (signatureAlgorithm, x509sig.c note 2, RSASSA-PSS
 *     included, over the DER of tbsResponseData) verifies with the
 *     issuer's key, or with a delegated responder's (note 3).  certStatus
 *     good is 0, revoked is 1 with its revocationTime, unknown refused.
 *  3. A delegated responder (4.2.2.2): a certificate of the reply's certs
 *     that the issuer signed (by Name and signature) and whose extended
 *     key usage has id-kp-OCSPSigning itself (anyExtendedKeyUsage does not
 *     do: RFC 6960 4.2.2.2 names the OID), and that is valid now (its
 *     notBefore and notAfter).  Its DER (within the reply) is
 *     handed back, for the caller to keep (revoc.c note 3a).  A reply
 *     about the responder itself signed by that responder proves nothing
 *     (4.2.2.2.1) and is refused, saying so.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mbedtls/asn1.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "der.h"
#include "ocsp.h"
#include "x509sig.h"

#define OID_OCSP_BASIC "\x2B\x06\x01\x05\x05\x07\x30\x01\x01"
#define MAX_AGE_NO_NEXT (7 * 86400)   /* note 2: seconds */
#define OID_OCSP_NONCE "\x2B\x06\x01\x05\x05\x07\x30\x01\x02"

static int oid_is(const uint8_t *p, size_t len, const char *oid, size_t olen)
{
	return len == olen && memcmp(p, oid, olen) == 0;
}
#define OID_IS(p, len, oid) oid_is(p, len, oid, sizeof oid - 1)

static int same(const mbedtls_x509_buf *a, const mbedtls_x509_buf *b)
{
	return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

/* Appends TAG, the DER length of LEN and P[0..LEN) to B. */
static void tlv(ps_buf *b, int tag, const void *p, size_t len)
{
	uint8_t h[6];
	size_t k = 0;

	h[k++] = (uint8_t)tag;
	if (len < 0x80) {
		h[k++] = (uint8_t)len;
	} else if (len < 0x100) {
		h[k++] = 0x81;
		h[k++] = (uint8_t)len;
	} else if (len < 0x10000) {
		h[k++] = 0x82;
		h[k++] = (uint8_t)(len >> 8);
		h[k++] = (uint8_t)len;
	} else {
		h[k++] = 0x83;
		h[k++] = (uint8_t)(len >> 16);
		h[k++] = (uint8_t)(len >> 8);
		h[k++] = (uint8_t)len;
	}
	ps_buf_append(b, h, k);
	ps_buf_append(b, p, len);
}

/* B = TAG { B } */
static void wrap(ps_buf *b, int tag)
{
	ps_buf t = PS_BUF_INIT;

	tlv(&t, tag, b->data, b->len);
	if (t.oom)
		b->oom = 1;
	ps_buf_free(b);
	*b = t;
}

/* The CertID of C issued by ISS (its DER TLV into ID). */
int ps_ocsp_certid(const mbedtls_x509_crt *c, const mbedtls_x509_crt *iss, ps_buf *id)
{
	const mbedtls_md_info_t *sha1 = mbedtls_md_info_from_type(MBEDTLS_MD_SHA1);
	static const uint8_t alg[] = {0x30, 0x09, 0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A,
	                              0x05, 0x00};
	const uint8_t *p = iss->pk_raw.p, *end = p + iss->pk_raw.len;
	uint8_t nh[20], kh[20];
	size_t len;

	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 ||
	    ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return -1;
	p += len;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_BIT_STRING, &len) != 0 || len < 1)
		return -1;
	if (mbedtls_md(sha1, p + 1, len - 1, kh) != 0 ||
	    mbedtls_md(sha1, iss->subject_raw.p, iss->subject_raw.len, nh) != 0)
		return -1;
	ps_buf_reset(id);
	ps_buf_append(id, alg, sizeof alg);
	tlv(id, MBEDTLS_ASN1_OCTET_STRING, nh, 20);
	tlv(id, MBEDTLS_ASN1_OCTET_STRING, kh, 20);
	tlv(id, MBEDTLS_ASN1_INTEGER, c->serial.p, c->serial.len);
	wrap(id, PS_DER_SEQ);
	return id->oom ? -1 : 0;
}

/* The OCSPRequest for CERTID (with NONCE[16] if not NULL). */
int ps_ocsp_request(const ps_buf *id, const uint8_t *nonce, ps_buf *req)
{
	ps_buf ext = PS_BUF_INIT;

	ps_buf_reset(req);
	ps_buf_append(req, id->data, id->len);
	wrap(req, PS_DER_SEQ);  /* Request */
	wrap(req, PS_DER_SEQ);  /* requestList */
	if (nonce) {
		tlv(&ext, MBEDTLS_ASN1_OID, OID_OCSP_NONCE, sizeof OID_OCSP_NONCE - 1);
		{
			ps_buf v = PS_BUF_INIT;
			tlv(&v, MBEDTLS_ASN1_OCTET_STRING, nonce, 16);
			tlv(&ext, MBEDTLS_ASN1_OCTET_STRING, v.data, v.len);
			ps_buf_free(&v);
		}
		wrap(&ext, PS_DER_SEQ);  /* Extension */
		wrap(&ext, PS_DER_SEQ);  /* Extensions */
		wrap(&ext, PS_DER_CTX_C(2));
		ps_buf_append(req, ext.data, ext.len);
		if (ext.oom)
			req->oom = 1;
		ps_buf_free(&ext);
	}
	wrap(req, PS_DER_SEQ);  /* TBSRequest */
	wrap(req, PS_DER_SEQ);  /* OCSPRequest */
	return req->oom ? -1 : 0;
}

/* Note 3: whether C's extended key usage names id-kp-OCSPSigning itself.
 * Not mbedtls_x509_crt_check_extended_key_usage, which also accepts a
 * certificate without the extension and one with anyExtendedKeyUsage:
 * either would make any certificate the issuer signed a responder. */
static int ocsp_signing(const mbedtls_x509_crt *c)
{
	const mbedtls_x509_sequence *s;

	if (!(c->ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE))
		return 0;
	for (s = &c->ext_key_usage; s; s = s->next)
		if (s->buf.tag == MBEDTLS_ASN1_OID && OID_IS(s->buf.p, s->buf.len,
		                                             MBEDTLS_OID_OCSP_SIGNING))
			return 1;
	return 0;
}

/* Note 2: whether the GeneralizedTime T[0..N) ("YYYYMMDDHHMMSSZ", DER) is
 * before AGO seconds ago; a time of another form counts as before. */
static int gt_before(const uint8_t *t, size_t n, time_t ago)
{
	char then[16];
	struct tm tm;
	time_t s = time(NULL) - ago;

	if (n != 15 || t[14] != 'Z' || !gmtime_r(&s, &tm) || strftime(then, sizeof then,
	                                                              "%Y%m%d%H%M%S", &tm) != 14)
		return 1;
	return memcmp(t, then, 14) < 0;
}

/* Note 2: whether the SingleResponse from its certStatus at Q to SEND is
 * current: its nextUpdate not past; without one, its thisUpdate at most
 * MAX_AGE_NO_NEXT old.  0 with *WHY set if not (or malformed). */
static int current(const uint8_t *q, const uint8_t *send, const char **why)
{
	const uint8_t *t = q, *this;
	size_t tl, thislen;
	int tag;

	if (ps_der_skip(&t, send, &tag) != 0 ||
	    ps_der_tag(&t, send, MBEDTLS_ASN1_GENERALIZED_TIME, &thislen) != 0)
		return 0;
	this = t;
	t += thislen;
	if (t < send && *t == PS_DER_CTX_C(0)) {
		if (ps_der_tag(&t, send, PS_DER_CTX_C(0), &tl) != 0 ||
		    ps_der_tag(&t, send, MBEDTLS_ASN1_GENERALIZED_TIME, &tl) != 0)
			return 0;
		if (gt_before(t, tl, 0)) {
			*why = "it is out of date (its nextUpdate has passed)";
			return 0;
		}
	} else if (gt_before(this, thislen, MAX_AGE_NO_NEXT)) {
		*why = "it has no nextUpdate and its thisUpdate is more than 7 days old";
		return 0;
	}
	return 1;
}

/* Checks the OCSP reply B for the certificate whose DER is ASKED (issuer
 * ISS, CertID ID, NONCE or NULL).  0 good; 1 revoked (*WHEN set); -1 not
 * acceptable (*WHY set).  When a delegated responder signed it, *RDER and
 * *RLEN are its certificate's DER inside B (note 3), else NULL and 0. */
int ps_ocsp_check(const ps_buf *b, const ps_buf *id, const uint8_t *nonce,
                  const mbedtls_x509_buf *asked, mbedtls_x509_crt *iss, char *when,
                  size_t whenlen, const char **why, const uint8_t **rder, size_t *rlen)
{
	const uint8_t *p = b->data, *end, *tbs, *tend, *sigalg, *sig, *q;
	size_t len, tbslen, siglen;
	mbedtls_pk_rsassa_pss_options pss;
	const void *opts;
	int st, tag, found = -1;
	mbedtls_md_type_t md;
	mbedtls_pk_type_t pk;
	int itself = 0, stale = 0;

	*rder = NULL;
	*rlen = 0;
	*why = "not an OCSPResponse";
	if (!p || !b->len)
		return -1; /* an empty reply (and no NULL + 0) */
	end = p + b->len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
		return -1;
	{
		unsigned char *u = (unsigned char *)p;
		if (mbedtls_asn1_get_enum(&u, end, &st) != 0)
			return -1;
		p = u;
	}
	if (st != 0) {
		*why = st == 6   ? "responseStatus unauthorized (6)"
		       : st == 1 ? "responseStatus malformedRequest (1)"
		       : st == 2 ? "responseStatus internalError (2)"
		       : st == 3 ? "responseStatus tryLater (3)"
		       : st == 5 ? "responseStatus sigRequired (5)"
		                 : "responseStatus not successful";
		return -1;
	}
	*why = "no basic OCSP responseBytes";
	if (ps_der_tag(&p, end, PS_DER_CTX_C(0), &len) != 0 ||
	    ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 ||
	    ps_der_tag(&p, end, MBEDTLS_ASN1_OID, &len) != 0 || !OID_IS(p, len, OID_OCSP_BASIC))
		return -1;
	p += len;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
		return -1;
	end = p + len;
	*why = "the BasicOCSPResponse does not parse";
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return -1;
	end = p + len;
	tbs = p;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return -1;
	tend = p + len;
	tbslen = (size_t)(tend - tbs);
	/* version, responderID, producedAt */
	if (p < tend && *p == PS_DER_CTX_C(0) && ps_der_skip(&p, tend, &tag) != 0)
		return -1;
	if (ps_der_skip(&p, tend, &tag) != 0 || ps_der_skip(&p, tend, &tag) != 0)
		return -1;
	if (ps_der_tag(&p, tend, PS_DER_SEQ, &len) != 0)
		return -1;
	q = p;
	p += len;
	while (q < p) {
		const uint8_t *send, *cid;
		size_t cidlen;
		if (ps_der_tag(&q, p, PS_DER_SEQ, &len) != 0)
			return -1;
		send = q + len;
		cid = q;
		if (ps_der_skip(&q, send, &tag) != 0)
			return -1;
		cidlen = (size_t)(q - cid);
		if (found < 0 && cidlen == id->len && memcmp(cid, id->data, cidlen) == 0) {
			if (q >= send)
				return -1;
			found = *q == 0x80 ? 0 : *q == PS_DER_CTX_C(1) ? 1 : 2;
			if (!current(q, send, why))
				return -1;
			if (found == 1) {
				const uint8_t *t = q;
				size_t tl;
				if (ps_der_tag(&t, send, PS_DER_CTX_C(1), &tl) == 0 &&
				    ps_der_tag(&t, send, MBEDTLS_ASN1_GENERALIZED_TIME, &tl) == 0)
					snprintf(when, whenlen, "%.*s", (int)(tl < 40 ? tl : 40),
					         (const char *)t);
			}
		}
		q = send;
	}
	/* responseExtensions [1]: the nonce */
	if (p < tend && *p == PS_DER_CTX_C(1)) {
		const uint8_t *x = p, *xend;
		if (ps_der_tag(&x, tend, PS_DER_CTX_C(1), &len) != 0 ||
		    ps_der_tag(&x, tend, PS_DER_SEQ, &len) != 0)
			return -1;
		xend = x + len;
		while (x < xend) {
			const uint8_t *e;
			if (ps_der_tag(&x, xend, PS_DER_SEQ, &len) != 0)
				return -1;
			e = x + len;
			if (ps_der_tag(&x, e, MBEDTLS_ASN1_OID, &len) != 0)
				return -1;
			if (OID_IS(x, len, OID_OCSP_NONCE)) {
				x += len;
				if (x < e && *x == MBEDTLS_ASN1_BOOLEAN &&
				    ps_der_skip(&x, e, &tag) != 0)
					return -1;
				*why = "the reply's nonce is not the one sent";
				if (!nonce ||
				    ps_der_tag(&x, e, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 ||
				    ps_der_tag(&x, e, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 ||
				    len != 16 || memcmp(x, nonce, 16) != 0)
					return -1;
			}
			x = e;
		}
	}
	p = tend;
	if (found < 0) {
		*why = "it has no SingleResponse for the certificate asked about";
		return -1;
	}
	if (found == 2) {
		*why = "the responder does not know the certificate (certStatus unknown)";
		return -1;
	}
	*why = "the BasicOCSPResponse has no signature";
	sigalg = p;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return -1;
	p += len;
	{
		unsigned char *a = (unsigned char *)sigalg;
		mbedtls_asn1_buf oid, params;
		if (mbedtls_asn1_get_alg(&a, (unsigned char *)p, &oid, &params) != 0 || a != p)
			return -1;
		if ((*why = ps_x509sig_alg(&oid, &params, &md, &pk, &pss)) != NULL)
			return -1;
		opts = pk == MBEDTLS_PK_RSASSA_PSS ? &pss : NULL;
	}
	*why = "the BasicOCSPResponse has no signature";
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_BIT_STRING, &len) != 0 || len < 1 || *p != 0)
		return -1;
	sig = p + 1;
	siglen = len - 1;
	p += len;
	if (ps_x509sig_verify(&iss->pk, md, pk, opts, tbs, tbslen, sig, siglen))
		goto signed_ok;
	/* a delegated responder among certs [0] */
	if (p < end && *p == PS_DER_CTX_C(0)) {
		const uint8_t *cend;
		if (ps_der_tag(&p, end, PS_DER_CTX_C(0), &len) != 0 ||
		    ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			return -1;
		cend = p + len;
		while (p < cend) {
			const uint8_t *c0 = p;
			mbedtls_x509_crt t;
			int ok;
			if (ps_der_skip(&p, cend, &tag) != 0 || p > cend)
				return -1;
			mbedtls_x509_crt_init(&t);
			ok = mbedtls_x509_crt_parse_der(&t, c0, (size_t)(p - c0)) == 0 &&
			     ps_x509sig_signed_by(&t, iss) && ocsp_signing(&t) &&
			     ps_x509sig_verify(&t.pk, md, pk, opts, tbs, tbslen, sig, siglen);
			if (ok && (mbedtls_x509_time_is_past(&t.valid_to) ||
			           mbedtls_x509_time_is_future(&t.valid_from))) {
				ok = 0; /* note 3: a responder not valid now */
				stale = 1;
			}
			if (ok && asked && same(&t.raw, asked)) {
				ok = 0; /* note 3: the responder vouching for itself */
				itself = 1;
			}
			mbedtls_x509_crt_free(&t);
			if (ok) {
				*rder = c0;
				*rlen = (size_t)(p - c0);
				goto signed_ok;
			}
		}
	}
	*why = itself ? "signed by the responder it is about: no proof (RFC 6960 4.2.2.2.1)"
	       : stale ? "signed by a delegated responder whose certificate is not valid now"
	              : "it is signed neither by the issuer nor by a responder the issuer "
	                "delegated (id-kp-OCSPSigning)";
	return -1;
signed_ok:
	return found == 1 ? 1 : 0;
}
