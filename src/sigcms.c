/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sigcms.c - whether a signature dictionary's CMS really signs the bytes
 * its /ByteRange names: the structure of the CMS, the digest of the signed
 * bytes and, where the signer's certificate travels in the CMS, the
 * signature itself.  Whom the certificate belongs to (trust, chains,
 * revocation, time) is not judged here.
 *
 * DESIGN NOTES
 *
 * Place: above input.c and doc.c (it reads the file through ps_doc_pread
 * and resolves references with ps_doc_resolve), below audit.c, its user.
 * It is one of the modules that use mbedTLS (ASN.1, message digests,
 * X.509, public keys): nothing of it reaches ps.h.  Everything it reads is
 * hostile: every DER length is checked by mbedTLS's readers against the
 * end of the enclosing item, the structure is walked by a fixed sequence
 * of reads (no recursion: the nesting it follows is the handful of levels
 * of RFC 5652 and RFC 3161, whatever the input holds), file offsets are
 * int64_t checked before any sum.
 *
 * The result (struct ps_sigcms) starts as parsed 0, digest_ok 0,
 * signature_ok -1, timestamp 0, and each step sets what it proved; the
 * first failure writes `why` and stops the steps after it.  Only I/O
 * errors and out of memory are errors of the call.
 *
 *  1. The byte range (ISO 32000-2 12.8.1, Table 255 /ByteRange and
 *     /Contents).  /ByteRange is [0 a b c], four non-negative integers
 *     with a <= b, b <= size and c <= size - b (no sum that can overflow);
 *     the signed bytes are [0, a) and [b, b + c).  The gap [a, b) must
 *     hold exactly the hexadecimal string '<' ... '>' (white space allowed
 *     inside, 7.3.4.3) whose bytes are the dictionary's /Contents, at most
 *     PS_SIGCMS_MAX_CONTENTS of them: the CMS we parse is the one the
 *     range leaves out, not a string from some other place.  The gap is
 *     read once (bounded by the /Contents limit); the signed bytes are
 *     hashed in HASH_CHUNK pieces, never held whole,
 *     SHA-2 with the CPU's kernels where it has them (sha2.c note 6): a
 *     document timestamp's range is the whole file before it.  A file that ends
 *     inside the range (it shrank) is an invalid signature, not an error.
 *  2. The CMS (RFC 5652 3, 5.1-5.4).  ContentInfo SEQUENCE { contentType
 *     id-signedData, [0] EXPLICIT SignedData }.  What follows it in
 *     /Contents is not looked at: signers pad with zeros, and PDFBox 2
 *     leaves the ciphertext of its encrypted placeholder there in an
 *     encrypted file (its COSWriter encrypts every string); those bytes
 *     are outside the /ByteRange, signed by nothing, so they can neither
 *     make a signature valid nor hide a change.  The containers may have BER
 *     indefinite lengths (NSS, hence pdfsig, writes them): their ends are
 *     found by skipping items up to the end-of-contents octets, at most
 *     MAX_DEPTH nested indefinite lengths deep; everything else must be
 *     DER (mbedTLS's readers), the signed attributes above all, whose
 *     bytes are hashed as they stand (RFC 5652 5.4).  SignedData: version,
 *     digestAlgorithms, encapContentInfo { eContentType, [0] EXPLICIT
 *     eContent OCTET STRING OPTIONAL (primitive) }, [0] IMPLICIT
 *     certificates, [1] IMPLICIT crls, signerInfos.  Only signerInfos[0]
 *     is looked at.  Its digestAlgorithm is SHA-1, SHA-256, SHA-384 or
 *     SHA-512 (mbedtls_md).  Its signedAttrs, if present, hold exactly one
 *     contentType attribute equal to eContentType and exactly one
 *     messageDigest attribute of one OCTET STRING (5.3, 11.1, 11.2).
 *     `parsed` is set when all of this parses.
 *  3. The digest, by /SubFilter (12.8.3.3, 12.8.3.4 and 12.8.5):
 *       a. adbe.pkcs7.detached, ETSI.CAdES.detached, or none: eContentType
 *          id-data, no eContent; messageDigest = H(signed bytes), H the
 *          signer's digestAlgorithm (RFC 5652 5.4).  Without signedAttrs
 *          the digest is only bound by the signature: digest_ok is then
 *          signature_ok over H(signed bytes) (5.4: the signature is over
 *          the content's digest).
 *       b. adbe.pkcs7.sha1: eContentType id-data, eContent = SHA-1(signed
 *          bytes); messageDigest (if signedAttrs) = H(eContent).
 *       c. ETSI.RFC3161 (/Type /DocTimeStamp): eContentType id-ct-TSTInfo
 *          (RFC 3161 2.4.2), eContent a TSTInfo whose messageImprint
 *          hashedMessage = H_imprint(signed bytes), H_imprint the
 *          imprint's own hashAlgorithm; the signer's messageDigest =
 *          H(the TSTInfo's DER, the eContent octets).
 *     `timestamp` is set whenever eContentType is id-ct-TSTInfo.  Another
 *     /SubFilter (adbe.x509.rsa_sha1: PKCS#1, not CMS) is not valid here.
 *  4. The signature (RFC 5652 5.4, 5.6).  The signer's certificate is the
 *     first of SignedData.certificates (at most MAX_CERTS looked at) that
 *     mbedTLS parses and that the SignerIdentifier names: the issuer Name
 *     byte for byte and the serialNumber, or a subjectKeyIdentifier
 *     extension (RFC 5280 4.2.1.2) with the same key identifier.  The
 *     signature is over H(DER of signedAttrs with its [0] IMPLICIT tag
 *     replaced by SET OF, 0x31), or without signedAttrs over the digest of
 *     the content; signatureAlgorithm rsaEncryption, sha*WithRSAEncryption
 *     (PKCS#1 v1.5), RSASSA-PSS (its parameters: mbedtls_x509_get_sig_alg),
 *     id-ecPublicKey or ecdsa-with-SHA* (ECDSA); a hash named by the
 *     signature algorithm must be the digestAlgorithm.  No certificate
 *     found, or an algorithm mbedTLS does not know: signature_ok stays -1.
 *     A wrongly chosen certificate can only make the check fail: whatever
 *     key verifies the signature, the signature is over these bytes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/asn1.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform.h>
#include <mbedtls/x509.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "cpu.h"
#include "input.h"
#include "sha2.h"
#include "sigcms.h"
#include "der.h"

#define HASH_CHUNK ((size_t)1 << 20)   /* note 1: bytes hashed per read */
#define MAX_CERTS 256                  /* note 4: certificates parsed per CMS */
#define MAX_DEPTH 16                   /* note 2: nested indefinite lengths */

#define SET (MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET)

/* RFC 5652 3, 5.1, 11.1, 11.2; RFC 3161 2.4.2; RFC 8017 A.1; RFC 5480 2.1.1 */
static const uint8_t OID_SIGNED_DATA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02};
static const uint8_t OID_DATA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01};
static const uint8_t OID_TSTINFO[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D,
                                      0x01, 0x09, 0x10, 0x01, 0x04};
static const uint8_t OID_CONTENT_TYPE[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x03};
static const uint8_t OID_MESSAGE_DIGEST[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04};
static const uint8_t OID_RSA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01};
static const uint8_t OID_EC_PUBKEY[] = {0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01};
/* the extnID of subjectKeyIdentifier (2.5.29.14) as a DER OID TLV */
static const uint8_t TLV_SKI[] = {0x06, 0x03, 0x55, 0x1D, 0x0E};

enum { SF_DETACHED, SF_SHA1, SF_RFC3161, SF_OTHER };

/* What note 2 found: spans into the /Contents bytes. */
struct cms {
	const uint8_t *ectype;           /* eContentType OID content */
	size_t ectype_len;
	const uint8_t *econtent;         /* eContent OCTET STRING content, NULL if absent */
	size_t econtent_len;
	const uint8_t *certs, *certs_end;  /* [0] IMPLICIT certificates content, NULL if absent */
	/* signerInfos[0] */
	const uint8_t *issuer;           /* sid: issuer Name TLV, or NULL */
	size_t issuer_len;
	const uint8_t *serial;           /* sid: serialNumber content */
	size_t serial_len;
	const uint8_t *ski;              /* sid: [0] subjectKeyIdentifier content, or NULL */
	size_t ski_len;
	mbedtls_md_type_t md;            /* digestAlgorithm */
	const uint8_t *attrs;            /* signedAttrs TLV (tag 0xA0), NULL if absent */
	size_t attrs_len;
	const uint8_t *msgdig;           /* messageDigest OCTET STRING content */
	size_t msgdig_len;
	mbedtls_asn1_buf sig_oid, sig_params;
	const uint8_t *sig;
	size_t sig_len;
};

static void why(struct ps_sigcms *out, const char *fmt, ...) PS_PRINTF(2, 3);
static void why(struct ps_sigcms *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->why, sizeof out->why, fmt, ap);
	va_end(ap);
}

static const char *md_name(mbedtls_md_type_t md)
{
	switch (md) {
	case MBEDTLS_MD_SHA1: return "SHA-1";
	case MBEDTLS_MD_SHA256: return "SHA-256";
	case MBEDTLS_MD_SHA384: return "SHA-384";
	case MBEDTLS_MD_SHA512: return "SHA-512";
	default: return "unknown hash";
	}
}

static int oid_is(const uint8_t *p, size_t n, const uint8_t *oid, size_t oid_len)
{
	return n == oid_len && memcmp(p, oid, n) == 0;
}

/* An AlgorithmIdentifier naming one of the four hashes (note 2). */
static int get_md_alg(const uint8_t **p, const uint8_t *end, mbedtls_md_type_t *md)
{
	mbedtls_asn1_buf oid, params;
	unsigned char *q = (unsigned char *)*p;

	if (mbedtls_asn1_get_alg(&q, end, &oid, &params) != 0)
		return -1;
	*p = q;
	if (mbedtls_oid_get_md_alg(&oid, md) != 0)
		return -1;
	return *md == MBEDTLS_MD_SHA1 || *md == MBEDTLS_MD_SHA256 || *md == MBEDTLS_MD_SHA384 ||
	               *md == MBEDTLS_MD_SHA512 ? 0 : -1;
}

/* ---- note 2: the CMS --------------------------------------------------------- */

/* The signedAttrs content [P, END): contentType and messageDigest (RFC 5652
 * 5.3, 11.1, 11.2).  0 or -1 with *W set. */
static int parse_attrs(const uint8_t *p, const uint8_t *end, struct cms *c, const char **w)
{
	int have_ct = 0;
	size_t len;

	while (p < end) {
		const uint8_t *aend, *vend, *oid;
		size_t oid_len;

		*w = "a signed attribute does not parse";
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			return -1;
		aend = p + len;
		if (ps_der_tag(&p, aend, MBEDTLS_ASN1_OID, &oid_len) != 0)
			return -1;
		oid = p;
		p += oid_len;
		if (ps_der_tag(&p, aend, SET, &len) != 0 || p + len != aend)
			return -1;
		vend = aend;
		if (oid_is(oid, oid_len, OID_MESSAGE_DIGEST, sizeof OID_MESSAGE_DIGEST)) {
			*w = "the messageDigest attribute is not one OCTET STRING";
			if (c->msgdig ||
			    ps_der_tag(&p, vend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 ||
			    p + len != vend)
				return -1;
			c->msgdig = p;
			c->msgdig_len = len;
		} else if (oid_is(oid, oid_len, OID_CONTENT_TYPE, sizeof OID_CONTENT_TYPE)) {
			*w = "the contentType attribute is not one OID";
			if (have_ct || ps_der_tag(&p, vend, MBEDTLS_ASN1_OID, &len) != 0 ||
			    p + len != vend)
				return -1;
			*w = "the contentType attribute differs from eContentType";
			if (len != c->ectype_len || memcmp(p, c->ectype, len) != 0)
				return -1;
			have_ct = 1;
		}
		p = aend;
	}
	*w = "the signed attributes lack messageDigest";
	if (!c->msgdig)
		return -1;
	*w = "the signed attributes lack contentType";
	return have_ct ? 0 : -1;
}

/* The SignerInfo at [P, END) (RFC 5652 5.3). */
static int parse_signer(const uint8_t *p, const uint8_t *end, struct cms *c, const char **w)
{
	unsigned char *q;
	size_t len;
	int ver;

	*w = "the SignerInfo does not parse";
	q = (unsigned char *)p;
	if (mbedtls_asn1_get_int(&q, end, &ver) != 0)
		return -1;
	p = q;
	if (p < end && *p == PS_DER_SEQ) {        /* issuerAndSerialNumber */
		const uint8_t *send;
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			return -1;
		send = p + len;
		c->issuer = p;
		if (ps_der_skip(&p, send, NULL) != 0 || c->issuer[0] != PS_DER_SEQ)
			return -1;
		c->issuer_len = (size_t)(p - c->issuer);
		if (ps_der_tag(&p, send, MBEDTLS_ASN1_INTEGER, &len) != 0 || p + len != send)
			return -1;
		c->serial = p;
		c->serial_len = len;
		p = send;
	} else {                           /* [0] IMPLICIT SubjectKeyIdentifier */
		if (ps_der_tag(&p, end, MBEDTLS_ASN1_CONTEXT_SPECIFIC | 0, &len) != 0)
			return -1;
		c->ski = p;
		c->ski_len = len;
		p += len;
	}
	*w = "the signer's digestAlgorithm is not SHA-1, SHA-256, SHA-384 or SHA-512";
	if (get_md_alg(&p, end, &c->md) != 0)
		return -1;
	if (p < end && *p == PS_DER_CTX_C(0)) {
		const uint8_t *a = p;
		*w = "the signed attributes do not parse";
		if (ps_der_tag(&p, end, PS_DER_CTX_C(0), &len) != 0)
			return -1;
		c->attrs = a;
		c->attrs_len = (size_t)(p + len - a);
		if (parse_attrs(p, p + len, c, w) != 0)
			return -1;
		p += len;
	}
	*w = "the SignerInfo's signatureAlgorithm does not parse";
	q = (unsigned char *)p;
	if (mbedtls_asn1_get_alg(&q, end, &c->sig_oid, &c->sig_params) != 0)
		return -1;
	p = q;
	*w = "the SignerInfo's signature does not parse";
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
		return -1;
	c->sig = p;
	c->sig_len = len;
	p += len;
	if (p < end && *p == PS_DER_CTX_C(1) && ps_der_skip(&p, end, NULL) != 0)
		return -1;
	*w = "the SignerInfo has bytes after its fields";
	return p == end ? 0 : -1;
}

/* Note 2: the end of the contents of an indefinite length starting at P:
 * the end-of-contents octets, found by skipping the items before them
 * (each nested indefinite length one level deeper, at most MAX_DEPTH). */
static int ber_skip(const uint8_t **p, const uint8_t *end, int depth);

static int ber_eoc(const uint8_t *p, const uint8_t *end, int depth, const uint8_t **eoc)
{
	if (depth > MAX_DEPTH)
		return -1;
	while (end - p >= 2) {
		if (p[0] == 0 && p[1] == 0) {
			*eoc = p;
			return 0;
		}
		if (ber_skip(&p, end, depth) != 0)
			return -1;
	}
	return -1;
}

/* The length at *P (after the tag TAG): definite (mbedTLS's reader) or,
 * for a constructed TAG, indefinite.  The value is [*P, *VEND) and the
 * item ends at *NEXT. */
static int ber_len(const uint8_t **p, const uint8_t *end, int tag, int depth, const uint8_t **vend,
                   const uint8_t **next)
{
	unsigned char *q = (unsigned char *)*p;
	size_t len;

	if (q < end && *q == 0x80) {
		if (!(tag & MBEDTLS_ASN1_CONSTRUCTED) || ber_eoc(q + 1, end, depth + 1, vend) != 0)
			return -1;
		*p = q + 1;
		*next = *vend + 2;
		return 0;
	}
	if (mbedtls_asn1_get_len(&q, end, &len) != 0)
		return -1;
	*p = q;
	*vend = *next = q + len;
	return 0;
}

static int ber_skip(const uint8_t **p, const uint8_t *end, int depth)
{
	const uint8_t *q = *p, *vend, *next;
	int tag;

	if (q >= end || (*q & 0x1F) == 0x1F)  /* high tag numbers: not in these structures */
		return -1;
	tag = *q++;
	if (ber_len(&q, end, tag, depth, &vend, &next) != 0)
		return -1;
	*p = next;
	return 0;
}

/* One item of tag TAG at *P, in DER or BER (definite or indefinite
 * lengths): the value is [*P, *VEND), the item ends at *NEXT. */
static int ber_tag(const uint8_t **p, const uint8_t *end, int tag, const uint8_t **vend,
                   const uint8_t **next)
{
	const uint8_t *q = *p;

	if (q >= end || *q != tag)
		return -1;
	q++;
	if (ber_len(&q, end, tag, 0, vend, next) != 0)
		return -1;
	*p = q;
	return 0;
}

/* Note 2: the ContentInfo in D[0..N). */
static int parse_cms(const uint8_t *d, size_t n, struct cms *c, const char **w)
{
	const uint8_t *p = d, *end = d + n, *sdend, *eend, *vend, *next, *q;
	size_t len;
	unsigned char *u;
	int ver;

	memset(c, 0, sizeof *c);
	*w = "the CMS does not parse (no ContentInfo)";
	if (ber_tag(&p, end, PS_DER_SEQ, &vend, &next) != 0)
		return -1;
	/* what follows the ContentInfo (padding) is not looked at: note 2 */
	(void)next;
	end = vend;
	*w = "the CMS is not a SignedData (id-signedData)";
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OID, &len) != 0 ||
	    !oid_is(p, len, OID_SIGNED_DATA, sizeof OID_SIGNED_DATA))
		return -1;
	p += len;
	*w = "the CMS's SignedData does not parse";
	if (ber_tag(&p, end, PS_DER_CTX_C(0), &vend, &next) != 0 || next != end)
		return -1;
	end = vend;
	if (ber_tag(&p, end, PS_DER_SEQ, &vend, &next) != 0 || next != end)
		return -1;
	sdend = vend;
	u = (unsigned char *)p;
	if (mbedtls_asn1_get_int(&u, sdend, &ver) != 0)
		return -1;
	p = u;
	if (ber_skip(&p, sdend, 0) != 0)    /* digestAlgorithms */
		return -1;
	*w = "the SignedData's encapContentInfo does not parse";
	if (ber_tag(&p, sdend, PS_DER_SEQ, &eend, &next) != 0)
		return -1;
	if (ps_der_tag(&p, eend, MBEDTLS_ASN1_OID, &len) != 0)
		return -1;
	c->ectype = p;
	c->ectype_len = len;
	p += len;
	if (p < eend) {
		const uint8_t *oend;
		if (ber_tag(&p, eend, PS_DER_CTX_C(0), &oend, &q) != 0 || q != eend)
			return -1;
		*w = "the eContent is not a primitive OCTET STRING";
		if (ps_der_tag(&p, oend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 || p + len != oend)
			return -1;
		c->econtent = p;
		c->econtent_len = len;
	}
	p = next;
	*w = "the SignedData does not parse after its encapContentInfo";
	if (p < sdend && *p == PS_DER_CTX_C(0)) {
		if (ber_tag(&p, sdend, PS_DER_CTX_C(0), &vend, &next) != 0)
			return -1;
		c->certs = p;
		c->certs_end = vend;
		p = next;
	}
	if (p < sdend && *p == PS_DER_CTX_C(1) && ber_skip(&p, sdend, 0) != 0)
		return -1;
	*w = "the SignedData has no SignerInfo";
	if (ber_tag(&p, sdend, SET, &vend, &next) != 0 || next != sdend || vend == p)
		return -1;
	if (ber_tag(&p, vend, PS_DER_SEQ, &vend, &next) != 0)
		return -1;
	return parse_signer(p, vend, c, w);
}

int ps_sigcms_certs(const uint8_t *contents, size_t n, const uint8_t **certs,
                    const uint8_t **certs_end)
{
	struct cms c;
	const char *w;

	*certs = *certs_end = NULL;
	if (n > PS_SIGCMS_MAX_CONTENTS)
		n = PS_SIGCMS_MAX_CONTENTS;
	if (parse_cms(contents, n, &c, &w) != 0)
		return -1;
	*certs = c.certs;
	*certs_end = c.certs_end;
	return 0;
}

/* RFC 3161 2.4.2: the messageImprint of the TSTInfo in D[0..N). */
static int parse_tstinfo(const uint8_t *d, size_t n, mbedtls_md_type_t *md, const uint8_t **h,
                         size_t *hlen, const char **w)
{
	const uint8_t *p = d, *end = d + n, *mend;
	unsigned char *q;
	size_t len;
	int ver;

	*w = "the TSTInfo does not parse";
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
		return -1;
	q = (unsigned char *)p;
	if (mbedtls_asn1_get_int(&q, end, &ver) != 0)
		return -1;
	p = q;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OID, &len) != 0)    /* policy */
		return -1;
	p += len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return -1;
	mend = p + len;
	*w = "the TSTInfo's messageImprint hash is not SHA-1, SHA-256, SHA-384 or SHA-512";
	if (get_md_alg(&p, mend, md) != 0)
		return -1;
	*w = "the TSTInfo's messageImprint does not parse";
	if (ps_der_tag(&p, mend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 || p + len != mend)
		return -1;
	*h = p;
	*hlen = len;
	return 0;
}

/* ---- note 1: the byte range -------------------------------------------------- */

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int pdf_white(int ch)
{
	return ch == 0 || ch == '\t' || ch == '\n' || ch == '\f' || ch == '\r' || ch == ' ';
}

/* Whether G[0..N) is '<' hex '>' (7.3.4.3) decoding to C[0..CN). */
static int gap_holds(const uint8_t *g, size_t n, const uint8_t *c, size_t cn)
{
	size_t i, k = 0;
	int hi = -1, v;

	if (n < 2 || g[0] != '<' || g[n - 1] != '>')
		return 0;
	for (i = 1; i + 1 < n; i++) {
		if (pdf_white(g[i]))
			continue;
		if ((v = hexval(g[i])) < 0)
			return 0;
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (k >= cn || c[k] != (uint8_t)(hi << 4 | v))
			return 0;
		k++;
		hi = -1;
	}
	if (hi >= 0) {  /* an odd last digit is followed by 0 */
		if (k >= cn || c[k] != (uint8_t)(hi << 4))
			return 0;
		k++;
	}
	return k == cn;
}

/* Hashes [0, br[1]) and [br[2], br[2] + br[3]) with MD into H.  *SHORT is
 * set (and H undefined) when the file ends inside the range. */
static int hash_range(ps_doc *doc, mbedtls_md_type_t md, const int64_t br[4], uint8_t *h,
                      int *shortread)
{
	const mbedtls_md_info_t *info = mbedtls_md_info_from_type(md);
	unsigned cpu = ps_cpu_bits(ps_doc_ctx(doc));
	/* SHA-2 with the CPU's kernels where it has them (sha2.c note 6): the
	 * ranges of document timestamps are whole files */
	int kind = md == MBEDTLS_MD_SHA256 && (cpu & PS_CPU_SHA) ? 256
	           : md == MBEDTLS_MD_SHA384 ? 384 : md == MBEDTLS_MD_SHA512 ? 512 : 0;
	mbedtls_md_context_t mc;
	ps_sha256_stream s256;
	ps_sha512_stream s512;
	ps_buf b = PS_BUF_INIT;
	int part, rc = 0;

	*shortread = 0;
	mbedtls_md_init(&mc);
	if (kind == 256) {
		ps_sha256_stream_start(&s256, 1);
	} else if (kind) {
		ps_sha512_stream_start(&s512, cpu, kind == 384);
	} else if (!info || mbedtls_md_setup(&mc, info, 0) != 0 || mbedtls_md_starts(&mc) != 0) {
		mbedtls_md_free(&mc);
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory setting up %s",
		              md_name(md));
	}
	for (part = 0; part < 2 && rc == 0 && !*shortread; part++) {
		int64_t off = part ? br[2] : br[0], left = part ? br[3] : br[1];
		while (left > 0) {
			size_t want = left > (int64_t)HASH_CHUNK ? HASH_CHUNK : (size_t)left;
			if ((rc = ps_doc_pread(doc, off, want, &b)) < 0)
				break;
			if (b.len != want) {
				*shortread = 1;
				break;
			}
			if (kind == 256)
				ps_sha256_stream_update(&s256, b.data, b.len);
			else if (kind)
				ps_sha512_stream_update(&s512, b.data, b.len);
			else
				(void)mbedtls_md_update(&mc, b.data, b.len);
			off += (int64_t)want;
			left -= (int64_t)want;
		}
	}
	if (kind == 256)
		ps_sha256_stream_finish(&s256, h);
	else if (kind)
		ps_sha512_stream_finish(&s512, h);
	else if (rc == 0 && !*shortread)
		(void)mbedtls_md_finish(&mc, h);
	mbedtls_md_free(&mc);
	ps_buf_free(&b);
	return rc;
}

/* A direct value of SIG, or what its reference names. */
static int get_val(ps_doc *doc, const ps_obj *sig, const char *key, ps_obj **out)
{
	return ps_doc_resolve(doc, ps_dict_get(sig, key), out);
}

/* Note 1: /ByteRange into BR; 0 when valid, 1 with OUT->why when not. */
static int byte_range(ps_doc *doc, const ps_obj *sig, int64_t br[4], struct ps_sigcms *out)
{
	ps_obj *a, *v;
	int64_t size = ps_doc_size(doc);
	size_t i;
	int rc;

	if ((rc = get_val(doc, sig, "ByteRange", &a)) < 0)
		return rc;
	if (!a || a->kind != PS_ARRAY || a->u.arr.len != 4) {
		why(out, "the /ByteRange is not an array of four integers");
		return 1;
	}
	for (i = 0; i < 4; i++) {
		if ((rc = ps_doc_resolve(doc, ps_array_get(a, i), &v)) < 0)
			return rc;
		if (ps_obj_int(v, &br[i]) != 0 || br[i] < 0) {
			why(out, "the /ByteRange is not an array of four non-negative integers");
			return 1;
		}
	}
	if (br[0] != 0) {
		why(out, "the /ByteRange does not start at the file's first byte");
		return 1;
	}
	if (br[1] > br[2] || br[2] > size || br[3] > size - br[2]) {
		why(out, "the /ByteRange [0 %lld %lld %lld] overlaps itself or leaves the file "
		    "(%lld bytes)", (long long)br[1], (long long)br[2], (long long)br[3],
		    (long long)size);
		return 1;
	}
	return 0;
}

/* ---- note 4: the signature --------------------------------------------------- */

/* Whether certificate X is the one the SignerIdentifier names. */
static int names_signer(const mbedtls_x509_crt *x, const struct cms *c)
{
	const uint8_t *p, *end;

	if (c->issuer)
		return x->issuer_raw.len == c->issuer_len &&
		       memcmp(x->issuer_raw.p, c->issuer, c->issuer_len) == 0 &&
		       x->serial.len == c->serial_len &&
		       memcmp(x->serial.p, c->serial, c->serial_len) == 0;
	/* subjectKeyIdentifier: extnID, critical BOOLEAN?, OCTET STRING
	 * { OCTET STRING keyIdentifier } inside the extensions */
	if (!x->v3_ext.p || x->v3_ext.len < sizeof TLV_SKI)
		return 0;
	end = x->v3_ext.p + x->v3_ext.len;
	for (p = x->v3_ext.p; p + sizeof TLV_SKI <= end; p++) {
		const uint8_t *q = p + sizeof TLV_SKI;
		size_t len;
		if (memcmp(p, TLV_SKI, sizeof TLV_SKI) != 0)
			continue;
		if (q < end && *q == MBEDTLS_ASN1_BOOLEAN && ps_der_skip(&q, end, NULL) != 0)
			return 0;
		if (ps_der_tag(&q, end, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 ||
		    ps_der_tag(&q, end, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
			return 0;
		return len == c->ski_len && memcmp(q, c->ski, len) == 0;
	}
	return 0;
}

/* Verifies C's signature with X's key over DIGEST (the hash of what was
 * signed, c->md).  1 verified, 0 not, -1 algorithm unknown. */
static int verify_with(mbedtls_x509_crt *x, const struct cms *c, const uint8_t *digest,
                       struct ps_sigcms *out)
{
	mbedtls_pk_type_t pk;
	mbedtls_md_type_t md = c->md;
	void *opts = NULL;
	int rc;

	if (oid_is(c->sig_oid.p, c->sig_oid.len, OID_RSA, sizeof OID_RSA))
		pk = MBEDTLS_PK_RSA;
	else if (oid_is(c->sig_oid.p, c->sig_oid.len, OID_EC_PUBKEY, sizeof OID_EC_PUBKEY))
		pk = MBEDTLS_PK_ECDSA;
	else if (mbedtls_x509_get_sig_alg(&c->sig_oid, &c->sig_params, &md, &pk, &opts) != 0) {
		why(out, "the signatureAlgorithm is not one mbedTLS knows");
		return -1;
	}
	if (md != c->md) {
		mbedtls_free(opts);
		why(out, "the signatureAlgorithm's hash (%s) is not the digestAlgorithm (%s)",
		    md_name(md), md_name(c->md));
		return 0;
	}
	rc = mbedtls_pk_verify_ext(pk, opts, &x->pk, md, digest,
	                           mbedtls_md_get_size(mbedtls_md_info_from_type(md)), c->sig,
	                           c->sig_len);
	mbedtls_free(opts);
	if (rc != 0)
		why(out, "the signature does not verify with the signer's certificate");
	return rc == 0;
}

/* Note 4: sets out->signature_ok.  CONTENT_DIGEST is H(content), for a
 * SignerInfo without signedAttrs. */
static int check_signature(ps_ctx *ctx, const struct cms *c, const uint8_t *content_digest,
                           struct ps_sigcms *out, const uint8_t **signer, size_t *signer_len)
{
	uint8_t digest[MBEDTLS_MD_MAX_SIZE];
	const uint8_t *p = c->certs;
	mbedtls_x509_crt x;
	int n = 0, rc;

	if (c->attrs) {
		/* RFC 5652 5.4: the DER of signedAttrs with the SET OF tag */
		uint8_t *a = malloc(c->attrs_len);
		if (!a)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory checking a signature");
		memcpy(a, c->attrs, c->attrs_len);
		a[0] = SET;
		rc = mbedtls_md(mbedtls_md_info_from_type(c->md), a, c->attrs_len, digest);
		free(a);
		if (rc != 0)
			return ps_err(ctx, PDFSTAMP_E_NOMEM,
			              "out of memory hashing the signed attributes");
	} else {
		memcpy(digest, content_digest,
		       mbedtls_md_get_size(mbedtls_md_info_from_type(c->md)));
	}
	while (p && p < c->certs_end && n++ < MAX_CERTS) {
		const uint8_t *item = p;
		if (ber_skip(&p, c->certs_end, 0) != 0)
			break;
		if (*item != PS_DER_SEQ)      /* other CertificateChoices */
			continue;
		mbedtls_x509_crt_init(&x);
		rc = mbedtls_x509_crt_parse_der(&x, item, (size_t)(p - item));
		if (rc == MBEDTLS_ERR_X509_ALLOC_FAILED) {
			mbedtls_x509_crt_free(&x);
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory parsing a certificate");
		}
		if (rc == 0 && names_signer(&x, c)) {
			out->signature_ok = verify_with(&x, c, digest, out);
			if (signer) {
				*signer = item;
				*signer_len = (size_t)(p - item);
			}
			mbedtls_x509_crt_free(&x);
			return 0;
		}
		mbedtls_x509_crt_free(&x);
	}
	return 0;
}

/* ---- the check --------------------------------------------------------------- */

/* Notes 1 and 3: the gap holds /Contents, then the digest by SUBFILTER. */
static int check_digest(ps_doc *doc, const int64_t br[4], int subfilter, const struct cms *c,
                        const uint8_t *contents, size_t clen, struct ps_sigcms *out)
{
	uint8_t h[MBEDTLS_MD_MAX_SIZE], hc[MBEDTLS_MD_MAX_SIZE];
	const mbedtls_md_info_t *mi = mbedtls_md_info_from_type(c->md);
	size_t hlen = mbedtls_md_get_size(mi);
	ps_buf g = PS_BUF_INIT;
	mbedtls_md_type_t rmd = c->md;
	const uint8_t *imprint = NULL;
	size_t imprint_len = 0;
	const char *w;
	int rc, shortread;

	/* note 1: the gap, bounded by the /Contents limit */
	if (br[2] - br[1] > (int64_t)(4 * PS_SIGCMS_MAX_CONTENTS)) {
		why(out, "the /ByteRange leaves out more than the /Contents string");
		return 0;
	}
	if ((rc = ps_doc_pread(doc, br[1], (size_t)(br[2] - br[1]), &g)) < 0)
		return rc;
	rc = g.len == (size_t)(br[2] - br[1]) && gap_holds(g.data, g.len, contents, clen);
	ps_buf_free(&g);
	if (!rc) {
		why(out, "the bytes the /ByteRange leaves out are not the /Contents string");
		return 0;
	}
	/* note 3: what the signed bytes must hash to */
	if (subfilter == SF_OTHER) {
		why(out, "the /SubFilter is not a CMS signature (adbe.pkcs7.detached, "
		    "ETSI.CAdES.detached, adbe.pkcs7.sha1, ETSI.RFC3161)");
		return 0;
	}
	if (subfilter == SF_RFC3161) {
		if (!out->timestamp || !c->econtent) {
			why(out,
			    "an ETSI.RFC3161 /Contents is not a time-stamp token (id-ct-TSTInfo)");
			return 0;
		}
		if (parse_tstinfo(c->econtent, c->econtent_len, &rmd, &imprint, &imprint_len,
		                  &w) != 0) {
			why(out, "%s", w);
			return 0;
		}
	} else if (!oid_is(c->ectype, c->ectype_len, OID_DATA, sizeof OID_DATA)) {
		why(out, "the signed content is not id-data");
		return 0;
	} else if (subfilter == SF_SHA1) {
		rmd = MBEDTLS_MD_SHA1;
		if (!c->econtent) {
			why(out, "an adbe.pkcs7.sha1 signature has no encapsulated content");
			return 0;
		}
	} else if (c->econtent) {
		why(out, "a detached signature encapsulates content");
		return 0;
	}
	if ((rc = hash_range(doc, rmd, br, h, &shortread)) < 0)
		return rc;
	if (shortread) {
		why(out, "the file ends inside the /ByteRange");
		return 0;
	}
	/* H over what the signer's digest covers: the signed bytes (detached)
	 * or the eContent (sha1, RFC 3161) */
	if (subfilter == SF_DETACHED) {
		memcpy(hc, h, hlen);
	} else {
		size_t rlen = mbedtls_md_get_size(mbedtls_md_info_from_type(rmd));
		if (subfilter == SF_SHA1 &&
		    (c->econtent_len != rlen || memcmp(c->econtent, h, rlen) != 0)) {
			why(out,
			    "the encapsulated SHA-1 differs from the SHA-1 of the signed bytes");
			return 0;
		}
		if (subfilter == SF_RFC3161 &&
		    (imprint_len != rlen || memcmp(imprint, h, rlen) != 0)) {
			why(out, "the time stamp's messageImprint differs from the %s of the "
			    "signed bytes", md_name(rmd));
			return 0;
		}
		if (mbedtls_md(mi, c->econtent, c->econtent_len, hc) != 0)
			return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM,
			              "out of memory hashing the encapsulated content");
	}
	if ((rc = check_signature(ps_doc_ctx(doc), c, hc, out, NULL, NULL)) < 0)
		return rc;
	if (c->msgdig) {
		if (c->msgdig_len != hlen || memcmp(c->msgdig, hc, hlen) != 0) {
			why(out, "messageDigest differs from the %s of the %s", md_name(c->md),
			    subfilter == SF_DETACHED ? "signed bytes" :
			    subfilter == SF_SHA1 ? "encapsulated SHA-1" : "TSTInfo");
			return 0;
		}
		out->digest_ok = 1;
	} else if (subfilter == SF_RFC3161) {
		why(out, "the time-stamp token has no signed attributes");
	} else if (out->signature_ok == 1) {
		out->digest_ok = 1;     /* note 3a: bound by the signature alone */
	} else if (out->signature_ok == -1) {
		char was[sizeof out->why];
		snprintf(was, sizeof was, "%s",
		         out->why[0] ? out->why : "no signer certificate in the CMS");
		why(out, "no signed attributes, and the signature could not be checked: %s", was);
	}
	return 0;
}

int ps_sigcms_check(ps_doc *doc, const ps_obj *sig, struct ps_sigcms *out)
{
	int64_t br[4] = {0, 0, 0, 0};
	ps_obj *cont, *sf;
	struct cms c;
	const char *w;
	int rc, brbad, subfilter = SF_DETACHED;

	memset(out, 0, sizeof *out);
	out->signature_ok = -1;
	if (!sig || (sig->kind != PS_DICT && sig->kind != PS_STREAM)) {
		why(out, "the signature is not a dictionary");
		return 0;
	}
	if ((rc = get_val(doc, sig, "SubFilter", &sf)) < 0 ||
	    (rc = get_val(doc, sig, "Contents", &cont)) < 0)
		return rc;
	if (sf) {
		if (ps_obj_is_name(sf, "adbe.pkcs7.detached") ||
		    ps_obj_is_name(sf, "ETSI.CAdES.detached"))
			subfilter = SF_DETACHED;
		else if (ps_obj_is_name(sf, "adbe.pkcs7.sha1"))
			subfilter = SF_SHA1;
		else if (ps_obj_is_name(sf, "ETSI.RFC3161"))
			subfilter = SF_RFC3161;
		else
			subfilter = SF_OTHER;
	}
	if (!cont || cont->kind != PS_STR) {
		why(out, "the signature has no /Contents string");
		return 0;
	}
	if (cont->u.str.len > PS_SIGCMS_MAX_CONTENTS) {
		why(out, "the /Contents string is longer than %zu bytes", PS_SIGCMS_MAX_CONTENTS);
		return 0;
	}
	if (parse_cms(cont->u.str.p, cont->u.str.len, &c, &w) != 0) {
		why(out, "%s", w);
		return 0;
	}
	out->parsed = 1;
	out->timestamp = oid_is(c.ectype, c.ectype_len, OID_TSTINFO, sizeof OID_TSTINFO);
	if ((brbad = byte_range(doc, sig, br, out)) != 0)
		return brbad < 0 ? brbad : 0;
	if ((rc = check_digest(doc, br, subfilter, &c, cont->u.str.p, cont->u.str.len, out)) < 0) {
		out->digest_ok = 0;
		return rc;
	}
	if (out->digest_ok && out->signature_ok == 1)
		out->why[0] = 0;
	else if (out->digest_ok && out->signature_ok == -1 && !out->why[0])
		why(out, "the signature was not checked: no signer certificate in the CMS");
	return 0;
}

int ps_sigcms_token(ps_ctx *ctx, const uint8_t *tok, size_t n, struct ps_sigcms *out,
                    struct ps_sigcms_token *t)
{
	uint8_t hc[MBEDTLS_MD_MAX_SIZE];
	struct cms c;
	const char *w;
	size_t hlen;
	int rc;

	memset(out, 0, sizeof *out);
	memset(t, 0, sizeof *t);
	out->signature_ok = -1;
	if (parse_cms(tok, n, &c, &w) != 0) {
		why(out, "%s", w);
		return 0;
	}
	out->parsed = 1;
	out->timestamp = oid_is(c.ectype, c.ectype_len, OID_TSTINFO, sizeof OID_TSTINFO);
	if (!out->timestamp || !c.econtent) {
		why(out, "the token's content is not a TSTInfo (id-ct-TSTInfo)");
		return 0;
	}
	if (!c.msgdig) {
		why(out, "the time-stamp token has no signed attributes");
		return 0;
	}
	/* note 3c: the signer's messageDigest is over the TSTInfo's DER */
	hlen = mbedtls_md_get_size(mbedtls_md_info_from_type(c.md));
	if (mbedtls_md(mbedtls_md_info_from_type(c.md), c.econtent, c.econtent_len, hc) != 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory hashing a TSTInfo");
	if ((rc = check_signature(ctx, &c, hc, out, &t->signer, &t->signer_len)) < 0)
		return rc;
	if (c.msgdig_len != hlen || memcmp(c.msgdig, hc, hlen) != 0) {
		why(out, "messageDigest differs from the %s of the TSTInfo", md_name(c.md));
		return 0;
	}
	out->digest_ok = 1;
	t->tstinfo = c.econtent;
	t->tstinfo_len = c.econtent_len;
	t->certs = c.certs;
	t->certs_end = c.certs_end;
	t->attrs = c.attrs;
	t->attrs_len = c.attrs_len;
	return 0;
}

int ps_sigcms_next_cert(const uint8_t **p, const uint8_t *end, const uint8_t **cert, size_t *len)
{
	while (*p && *p < end) {
		const uint8_t *item = *p;
		if (ber_skip(p, end, 0) != 0)
			return 0;
		if (*item == PS_DER_SEQ) {
			*cert = item;
			*len = (size_t)(*p - item);
			return 1;
		}
	}
	return 0;
}
