/* SPDX-License-Identifier: Apache-2.0 */
/*
 * envelope.c - the CMS EnvelopedData (RFC 5652 6) of each /Recipients
 * string of the public-key security handler (ISO 32000-2 7.6.5.2): opened
 * with a recipient's key (ps_env_open), counted (ps_env_count), and made
 * for a list of certificates (ps_env_make).
 *
 * DESIGN NOTES
 *
 * Place: [crypto], above rkey.c (the key and certificates) and rc2.c; the
 * security handler's public-key branch is its user.  One of the modules
 * that use mbedTLS (ASN.1, RSA, AES, DES, cipher, OID): nothing of it
 * reaches ps.h.
 *
 *  1. The structure read.  ContentInfo SEQUENCE { contentType
 *     id-envelopedData (1.2.840.113549.1.7.3), [0] EXPLICIT EnvelopedData
 *     SEQUENCE { version INTEGER, originatorInfo [0] IMPLICIT OPTIONAL
 *     (skipped), recipientInfos SET OF RecipientInfo, encryptedContentInfo
 *     SEQUENCE { contentType, contentEncryptionAlgorithm AlgorithmIdentifier,
 *     encryptedContent [0] IMPLICIT OCTET STRING }, unprotectedAttrs [1]
 *     OPTIONAL (ignored) } }.  The ContentInfo must end where the string
 *     does, as every DER input of pdfstamp must (dss.c note 1): PDFBox
 *     and iText write none after it, and a string is hashed whole into
 *     the file key, so nothing there can be ignored.  BER is read too (Bouncy Castle's CMS
 *     generators and openssl cms -stream write indefinite lengths and
 *     chunked OCTET STRINGs): an envelope that does not parse as DER is
 *     copied with definite lengths (ber_item: low tag numbers only,
 *     indefinite lengths on constructed items only, at most MAX_DEPTH
 *     levels, each level holding a copy of its items: so only envelopes
 *     of at most MAX_BER bytes, well above what one recipient list
 *     needs) and parsed again; the walk reads definite lengths only
 *     (mbedTLS's reader).  The encryptedContent may be primitive or
 *     constructed of primitive OCTET STRING pieces, at most MAX_CONTENT
 *     bytes in all.  Anything else is PDFSTAMP_E_FORMAT with the place
 *     named; a ContentInfo of another type names the type.  The whole
 *     structure, every RecipientInfo included, is checked before a match
 *     is looked for, so a damaged envelope is FORMAT whoever opens it,
 *     and ps_env_count parses exactly what ps_env_open parses.
 *  2. RecipientInfos.  A KeyTransRecipientInfo (a SEQUENCE; RFC 5652
 *     6.2.1) names its recipient by issuerAndSerialNumber (a SEQUENCE:
 *     the issuer Name compared byte for byte with the certificate's, the
 *     serialNumber's content octets too) or by [0] subjectKeyIdentifier
 *     (compared with the certificate's subjectKeyIdentifier extension,
 *     RFC 5280 4.2.1.2; a certificate without one matches no such
 *     RecipientInfo).  The other kinds ([1] kari, [2] kekri, [3] pwri,
 *     [4] ori) are counted and skipped: they name no certificate of ours.
 *     The first KeyTransRecipientInfo that names the certificate is the
 *     one opened; none: ps_env_open returns 0 and the content cipher is
 *     not judged (the caller tries the next /Recipients string).
 *  3. Key transport (RFC 3370 4.2, RFC 8017 7): rsaEncryption
 *     (1.2.840.113549.1.1.1; PKCS#1 v1.5: PDFBox 2, iText 5, Acrobat,
 *     openssl cms by default) and id-RSAES-OAEP (1.2.840.113549.1.1.7,
 *     RFC 4055 3.1: hash SHA-1 (default), SHA-224/256/384/512, MGF1 with
 *     the same hash, pSpecified label).  The RSA context is copied
 *     (mbedtls_rsa_copy) to set its padding, the key's own never changes;
 *     the copy is freed (and so wiped) at once.  Other algorithms:
 *     UNSUPPORTED, with the OID.  A decryption that fails (padding), an
 *     encryptedKey not as long as the modulus, or a content key of the
 *     wrong size for its cipher: PDFSTAMP_E_PASSWORD (the key does not
 *     open what names it).  There is no oracle to protect: the caller
 *     holds the key and the file.
 *  4. Content ciphers (RFC 3370 5, RFC 3565, RFC 8018 B.2): aes128-CBC,
 *     aes192-CBC, aes256-CBC (IV OCTET STRING of 16), des-ede3-cbc (IV of
 *     8; what openssl cms -des3 and older Acrobat write) and rc2-cbc
 *     (1.2.840.113549.3.2; RC2CBCParameter SEQUENCE { rc2ParameterVersion
 *     INTEGER OPTIONAL, iv OCTET STRING (8) }: what PDFBox 2 and iText 5
 *     write, version 58 = 128 effective bits with a 16-byte key), and the
 *     deprecated ciphers ISO 32000-2 7.6.5.3 still lists: des-cbc
 *     (1.3.14.3.2.7) and RC4 (1.2.840.113549.3.4: a stream cipher, no IV
 *     (parameters absent, NULL or an empty OCTET STRING as openssl writes
 *     them), no padding, so a wrong key is not detected here: the
 *     caller's checks of the seed and permissions are what is left).  A
 *     missing version means as many effective bits as the key has (at
 *     most 1024), as Bouncy Castle reads it (the two producers' own
 *     library).  The ciphertext is a whole number of blocks; PKCS#7
 *     padding (RFC 5652 6.3) is checked in full: a wrong one is
 *     PDFSTAMP_E_PASSWORD.  Other ciphers: UNSUPPORTED, with the OID.
 *  5. The content (seed and permissions, 7.6.5.2) is decrypted into a
 *     secret buffer; at most PS_ENV_CONTENT_MAX bytes of it are returned.
 *     The content key, the cipher schedules and the plaintext are wiped on
 *     every path; CONTENT is zeroed on every failure.
 *  6. The structure written (ps_env_make): DER, version 0, one
 *     KeyTransRecipientInfo version 0 per certificate (issuerAndSerialNumber
 *     from the certificate's own bytes, rsaEncryption with NULL parameters,
 *     the AES-256 content key under PKCS#1 v1.5: every reader of the
 *     handler knows it), the SET OF sorted by encoding as DER wants,
 *     contentType id-data, aes256-CBC with a 16-byte IV, PKCS#7 padding.
 *     Key and IV come from the kernel (ps_random_os), PKCS#1 padding from
 *     the context's DRBG.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/aes.h>
#include <mbedtls/arc4.h>
#include <mbedtls/asn1.h>
#include <mbedtls/cipher.h>
#include <mbedtls/des.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "der.h"
#include "envelope.h"
#include "rc2.h"
#include "rkey.h"

#define MAX_CONTENT ((size_t)1 << 16)  /* note 1: encryptedContent bytes at most */
#define MAX_KEY 128                      /* the longest content key (RC2) */
#define MAX_DEPTH 24                     /* note 1: nested BER items at most */
#define MAX_BER ((size_t)1 << 20)        /* note 1: BER (not DER) envelopes at most */

#define SET (MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET)
#define CTX_P(n) (MBEDTLS_ASN1_CONTEXT_SPECIFIC | (n))

/* RFC 5652 4, 6; RFC 3370 4.2.1, 5; RFC 3565 4.1; RFC 4055 3.1; RFC 8018 B.2 */
static const uint8_t OID_DATA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01};
static const uint8_t OID_ENVELOPED[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x03};
static const uint8_t OID_RSA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01};
static const uint8_t OID_OAEP[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x07};
static const uint8_t OID_MGF1[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x08};
static const uint8_t OID_PSPECIFIED[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x09};
static const uint8_t OID_AES128_CBC[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x02};
static const uint8_t OID_AES192_CBC[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x16};
static const uint8_t OID_AES256_CBC[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2A};
static const uint8_t OID_DES_EDE3_CBC[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x03, 0x07};
static const uint8_t OID_RC2_CBC[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x03, 0x02};
static const uint8_t OID_RC4[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x03, 0x04};
static const uint8_t OID_DES_CBC[] = {0x2B, 0x0E, 0x03, 0x02, 0x07};
static const uint8_t OID_SKI[] = {0x55, 0x1D, 0x0E};

#define OID_IS(p, n, oid) ((n) == sizeof(oid) && memcmp((p), (oid), (n)) == 0)

/* One KeyTransRecipientInfo: spans into the DER. */
struct ktri {
	const uint8_t *issuer;       /* issuer Name TLV, or NULL */
	size_t issuer_len;
	const uint8_t *serial;       /* serialNumber content */
	size_t serial_len;
	const uint8_t *ski;          /* [0] subjectKeyIdentifier content, or NULL */
	size_t ski_len;
	const uint8_t *alg;          /* keyEncryptionAlgorithm OID content */
	size_t alg_len;
	const uint8_t *params;       /* its parameters TLV, or NULL */
	size_t params_len;
	const uint8_t *ek;           /* encryptedKey content */
	size_t ek_len;
};

/* What note 1 found. */
struct env {
	int nri;
	const uint8_t *ris, *ris_end;       /* recipientInfos SET content */
	const uint8_t *calg;                 /* contentEncryptionAlgorithm OID content */
	size_t calg_len;
	const uint8_t *cparams;              /* its parameters TLV, or NULL */
	size_t cparams_len;
	const uint8_t *ec;                   /* encryptedContent [0] TLV */
	const uint8_t *ec_end;
};

static const char *oid_str(char *buf, size_t size, const uint8_t *p, size_t n)
{
	mbedtls_asn1_buf b = {MBEDTLS_ASN1_OID, n, (unsigned char *)p};

	if (mbedtls_oid_get_numeric_string(buf, size, &b) < 0)
		snprintf(buf, size, "(an unreadable OID)");
	return buf;
}

static int damaged(ps_ctx *ctx, const char *where)
{
	return ps_err(ctx, PDFSTAMP_E_FORMAT, "a /Recipients envelope (CMS EnvelopedData) is "
	              "damaged: %s", where);
}

/* An AlgorithmIdentifier at *P: its OID content and its parameters TLV (or NULL). */
static int get_alg(const uint8_t **p, const uint8_t *end, const uint8_t **oid, size_t *oid_len,
                   const uint8_t **params, size_t *params_len)
{
	const uint8_t *q = *p, *aend;
	size_t len;

	if (ps_der_tag(&q, end, PS_DER_SEQ, &len) != 0)
		return -1;
	aend = q + len;
	if (ps_der_tag(&q, aend, MBEDTLS_ASN1_OID, oid_len) != 0)
		return -1;
	*oid = q;
	q += *oid_len;
	*params = NULL;
	*params_len = 0;
	if (q < aend) {
		const uint8_t *s = q;
		if (ps_der_skip(&q, aend, NULL) != 0 || q != aend)
			return -1;
		*params = s;
		*params_len = (size_t)(aend - s);
	}
	*p = aend;
	return 0;
}

/* One KeyTransRecipientInfo at *P (a SEQUENCE), *P past it. */
static int get_ktri(const uint8_t **p, const uint8_t *end, struct ktri *k)
{
	const uint8_t *q = *p, *kend, *s;
	size_t len;
	int v;

	memset(k, 0, sizeof *k);
	if (ps_der_tag(&q, end, PS_DER_SEQ, &len) != 0)
		return -1;
	kend = q + len;
	{
		unsigned char *u = (unsigned char *)q;
		if (mbedtls_asn1_get_int(&u, kend, &v) != 0)
			return -1;
		q = u;
	}
	if (q < kend && *q == PS_DER_SEQ) {
		/* issuerAndSerialNumber { Name, CertificateSerialNumber } */
		const uint8_t *iend;
		if (ps_der_tag(&q, kend, PS_DER_SEQ, &len) != 0)
			return -1;
		iend = q + len;
		s = q;
		if (ps_der_skip(&q, iend, NULL) != 0 || *s != PS_DER_SEQ)
			return -1;
		k->issuer = s;
		k->issuer_len = (size_t)(q - s);
		if (ps_der_tag(&q, iend, MBEDTLS_ASN1_INTEGER, &len) != 0 || q + len != iend ||
		    len == 0)
			return -1;
		k->serial = q;
		k->serial_len = len;
		q = iend;
	} else if (q < kend && *q == CTX_P(0)) {
		if (ps_der_tag(&q, kend, CTX_P(0), &len) != 0)
			return -1;
		k->ski = q;
		k->ski_len = len;
		q += len;
	} else {
		return -1;
	}
	if (get_alg(&q, kend, &k->alg, &k->alg_len, &k->params, &k->params_len) != 0)
		return -1;
	if (ps_der_tag(&q, kend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 || q + len != kend)
		return -1;
	k->ek = q;
	k->ek_len = len;
	*p = kend;
	return 0;
}

/* ---- note 1: BER lengths ----------------------------------------------------- */

static void put_len(ps_buf *b, size_t n);

/* One BER item at *P (before END) appended to OUT with definite lengths,
 * *P past it (past its end-of-contents octets if indefinite).  -1 if it
 * is not BER as note 1 takes it. */
static int ber_item(const uint8_t **p, const uint8_t *end, ps_buf *out, int depth)
{
	const uint8_t *q = *p;
	size_t len;
	ps_buf in = PS_BUF_INIT;
	int tag, rc = 0;

	if (q >= end || depth > MAX_DEPTH)
		return -1;
	tag = *q++;
	if ((tag & 0x1F) == 0x1F)
		return -1;   /* high tag numbers: no CMS type has one */
	if (q >= end)
		return -1;
	if (*q == 0x80) {
		/* indefinite: constructed only, items up to 00 00 */
		if (!(tag & MBEDTLS_ASN1_CONSTRUCTED))
			return -1;
		q++;
		for (;;) {
			if (end - q >= 2 && q[0] == 0 && q[1] == 0) {
				q += 2;
				break;
			}
			if (ber_item(&q, end, &in, depth + 1) != 0) {
				rc = -1;
				break;
			}
		}
	} else {
		unsigned char *u = (unsigned char *)q;
		if (mbedtls_asn1_get_len(&u, end, &len) != 0)
			return -1;
		q = u;
		if (tag & MBEDTLS_ASN1_CONSTRUCTED) {
			const uint8_t *cend = q + len;
			while (rc == 0 && q < cend)
				rc = ber_item(&q, cend, &in, depth + 1);
		} else {
			ps_buf_append(&in, q, len);
			q += len;
		}
	}
	if (in.oom)
		out->oom = 1;
	if (rc == 0 && !in.oom) {
		ps_buf_putc(out, tag);
		put_len(out, in.len);
		ps_buf_append(out, in.data, in.len);
	}
	rc = rc == 0 && !out->oom ? 0 : -1;
	ps_buf_free(&in);
	*p = q;
	return rc;
}

static int parse(ps_ctx *ctx, const uint8_t *der, size_t n, struct env *e);

/* parse() of DER (N bytes), or, when it is not DER but BER of at most
 * MAX_BER bytes, of its definite-length copy in BUF (E's spans then point
 * into BUF, which the caller frees). */
static int parse_any(ps_ctx *ctx, const uint8_t *der, size_t n, ps_buf *buf, struct env *e)
{
	const uint8_t *p = der;
	int rc = parse(ctx, der, n, e);

	if (rc != PDFSTAMP_E_FORMAT || n > MAX_BER)
		return rc;
	if (ber_item(&p, der + n, buf, 0) != 0)
		return buf->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : rc;
	if (p != der + n)
		return rc; /* bytes after the item: as damaged as the DER reading said */
	return parse(ctx, buf->data, buf->len, e);
}

/* ---- note 1: the structure --------------------------------------------------- */

/* The whole structure, every RecipientInfo checked. */
static int parse(ps_ctx *ctx, const uint8_t *der, size_t n, struct env *e)
{
	const uint8_t *p = der, *end, *q, *eend;
	size_t len;
	int v, tag;
	char ob[64];

	memset(e, 0, sizeof *e);
	if (!der || n == 0)
		return damaged(ctx, "the string is empty");
	end = der + n;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return damaged(ctx, "not a DER ContentInfo SEQUENCE");
	if (p + len != der + n)
		return damaged(ctx, "bytes follow the ContentInfo");
	end = p + len;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OID, &len) != 0)
		return damaged(ctx, "no contentType in the ContentInfo");
	if (!OID_IS(p, len, OID_ENVELOPED))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "a /Recipients string holds a CMS of content "
		              "type %s, not envelopedData",
		              oid_str(ob, sizeof ob, p, len));
	p += len;
	if (ps_der_tag(&p, end, PS_DER_CTX_C(0), &len) != 0)
		return damaged(ctx, "no [0] content in the ContentInfo");
	end = p + len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return damaged(ctx, "the EnvelopedData is not a SEQUENCE");
	eend = p + len;
	{
		unsigned char *u = (unsigned char *)p;
		if (mbedtls_asn1_get_int(&u, eend, &v) != 0)
			return damaged(ctx, "no EnvelopedData version");
		p = u;
	}
	if (p < eend && *p == PS_DER_CTX_C(0) && ps_der_skip(&p, eend, NULL) != 0)
		return damaged(ctx, "the originatorInfo");
	if (ps_der_tag(&p, eend, SET, &len) != 0)
		return damaged(ctx, "no recipientInfos SET");
	e->ris = p;
	e->ris_end = p + len;
	for (q = e->ris; q < e->ris_end;) {
		struct ktri k;
		if (*q == PS_DER_SEQ) {
			if (get_ktri(&q, e->ris_end, &k) != 0)
				return damaged(ctx, "a KeyTransRecipientInfo");
		} else if (ps_der_skip(&q, e->ris_end, &tag) != 0 || q > e->ris_end ||
		           (tag & MBEDTLS_ASN1_CONTEXT_SPECIFIC) == 0) {
			return damaged(ctx, "a RecipientInfo");
		}
		if (e->nri == INT_MAX)
			return damaged(ctx, "too many RecipientInfos");
		e->nri++;
	}
	if (e->nri == 0)
		return damaged(ctx, "no RecipientInfo");
	p = e->ris_end;
	/* encryptedContentInfo */
	if (ps_der_tag(&p, eend, PS_DER_SEQ, &len) != 0)
		return damaged(ctx, "no encryptedContentInfo");
	end = p + len;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OID, &len) != 0)
		return damaged(ctx, "no contentType in the encryptedContentInfo");
	p += len;
	if (get_alg(&p, end, &e->calg, &e->calg_len, &e->cparams, &e->cparams_len) != 0)
		return damaged(ctx, "the contentEncryptionAlgorithm");
	if (p >= end || (*p != CTX_P(0) && *p != PS_DER_CTX_C(0)))
		return damaged(ctx, "no encryptedContent");
	e->ec = p;
	if (ps_der_skip(&p, end, NULL) != 0 || p != end)
		return damaged(ctx, "the encryptedContent");
	e->ec_end = p;
	return 0;
}

int ps_env_count(ps_ctx *ctx, const uint8_t *der, size_t n)
{
	struct env e;
	ps_buf buf = PS_BUF_INIT;
	int rc = parse_any(ctx, der, n, &buf, &e);

	ps_buf_free(&buf);
	return rc < 0 ? rc : e.nri;
}

/* ---- note 2: which RecipientInfo --------------------------------------------- */

/* The subjectKeyIdentifier of X (RFC 5280 4.2.1.2), or 0. */
static int cert_ski(const mbedtls_x509_crt *x, const uint8_t **ski, size_t *ski_len)
{
	const uint8_t *p = x->v3_ext.p, *end, *xend;
	size_t len;

	if (!p || x->v3_ext.len == 0)
		return 0;
	end = p + x->v3_ext.len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return 0;
	end = p + len;
	while (p < end) {
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			return 0;
		xend = p + len;
		if (ps_der_tag(&p, xend, MBEDTLS_ASN1_OID, &len) != 0)
			return 0;
		if (OID_IS(p, len, OID_SKI)) {
			p += len;
			if (p < xend && *p == MBEDTLS_ASN1_BOOLEAN &&
			    ps_der_skip(&p, xend, NULL) != 0)
				return 0;
			if (ps_der_tag(&p, xend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 ||
			    ps_der_tag(&p, xend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
				return 0;
			*ski = p;
			*ski_len = len;
			return 1;
		}
		p = xend;
	}
	return 0;
}

static int names_cert(const struct ktri *k, const mbedtls_x509_crt *x)
{
	const uint8_t *ski;
	size_t ski_len;

	if (k->issuer)
		return x->issuer_raw.len == k->issuer_len &&
		       memcmp(x->issuer_raw.p, k->issuer, k->issuer_len) == 0 &&
		       x->serial.len == k->serial_len &&
		       memcmp(x->serial.p, k->serial, k->serial_len) == 0;
	return cert_ski(x, &ski, &ski_len) && ski_len == k->ski_len &&
	       memcmp(ski, k->ski, ski_len) == 0;
}

/* ---- note 3: key transport --------------------------------------------------- */

static int rng(void *ud, unsigned char *out, size_t n)
{
	return ps_random(ud, out, n) < 0 ? MBEDTLS_ERR_RSA_RNG_FAILED : 0;
}

/* The hash of an AlgorithmIdentifier TLV (P, N bytes) of RFC 4055 3.1. */
static int oaep_hash(const uint8_t *p, size_t n, mbedtls_md_type_t *md)
{
	const uint8_t *oid, *params;
	size_t oid_len, params_len;
	mbedtls_asn1_buf b;

	if (get_alg(&p, p + n, &oid, &oid_len, &params, &params_len) != 0)
		return -1;
	b.tag = MBEDTLS_ASN1_OID;
	b.len = oid_len;
	b.p = (unsigned char *)oid;
	if (mbedtls_oid_get_md_alg(&b, md) != 0)
		return -1;
	return *md == MBEDTLS_MD_SHA1 || *md == MBEDTLS_MD_SHA224 || *md == MBEDTLS_MD_SHA256 ||
	       *md == MBEDTLS_MD_SHA384 || *md == MBEDTLS_MD_SHA512 ? 0 : -1;
}

/* RSAES-OAEP-params (RFC 4055 3.1) at P (N bytes; NULL: all defaults). */
static int oaep_params(const uint8_t *p, size_t n, mbedtls_md_type_t *md, const uint8_t **label,
                       size_t *label_len)
{
	const uint8_t *end, *fend;
	size_t len;
	mbedtls_md_type_t mgf_md = MBEDTLS_MD_SHA1;

	*md = MBEDTLS_MD_SHA1;
	*label = NULL;
	*label_len = 0;
	if (!p || (n == 2 && p[0] == MBEDTLS_ASN1_NULL && p[1] == 0))
		return 0;
	end = p + n;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
		return -1;
	if (p < end && *p == PS_DER_CTX_C(0)) {
		if (ps_der_tag(&p, end, PS_DER_CTX_C(0), &len) != 0 || oaep_hash(p, len, md) != 0)
			return -1;
		p += len;
	}
	if (p < end && *p == PS_DER_CTX_C(1)) {
		const uint8_t *oid, *params;
		size_t oid_len, params_len;
		if (ps_der_tag(&p, end, PS_DER_CTX_C(1), &len) != 0)
			return -1;
		fend = p + len;
		if (get_alg(&p, fend, &oid, &oid_len, &params, &params_len) != 0 || p != fend ||
		    !OID_IS(oid, oid_len, OID_MGF1) || !params ||
		    oaep_hash(params, params_len, &mgf_md) != 0)
			return -1;
	}
	if (p < end && *p == PS_DER_CTX_C(2)) {
		const uint8_t *oid, *params;
		size_t oid_len, params_len;
		if (ps_der_tag(&p, end, PS_DER_CTX_C(2), &len) != 0)
			return -1;
		fend = p + len;
		if (get_alg(&p, fend, &oid, &oid_len, &params, &params_len) != 0 || p != fend ||
		    !OID_IS(oid, oid_len, OID_PSPECIFIED) || !params ||
		    ps_der_tag(&params, params + params_len, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
			return -1;
		*label = params;
		*label_len = len;
	}
	/* mbedTLS's MGF1 uses the OAEP hash */
	return p == end && mgf_md == *md ? 0 : -1;
}

/* Decrypts K's encryptedKey with KEY into CEK (*CEK_LEN bytes). */
static int unwrap(ps_ctx *ctx, const struct ktri *k, const ps_rkey *key, uint8_t cek[MAX_KEY],
                  size_t *cek_len)
{
	const mbedtls_pk_context *pk = ps_rkey_pk(key);
	mbedtls_rsa_context rsa;
	mbedtls_md_type_t md = MBEDTLS_MD_NONE;
	const uint8_t *label = NULL;
	size_t label_len = 0;
	int oaep, rc;
	char ob[64];

	if (OID_IS(k->alg, k->alg_len, OID_RSA)) {
		oaep = 0;
		if (k->params && !(k->params_len == 2 && k->params[0] == MBEDTLS_ASN1_NULL &&
		                   k->params[1] == 0))
			return damaged(ctx, "rsaEncryption with parameters other than NULL");
	} else if (OID_IS(k->alg, k->alg_len, OID_OAEP)) {
		oaep = 1;
		if (oaep_params(k->params, k->params_len, &md, &label, &label_len) != 0)
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a /Recipients envelope uses "
			              "RSA-OAEP with parameters not supported (SHA-1 or SHA-2 "
			              "with MGF1 of the same hash)");
	} else {
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a /Recipients envelope uses the key "
		              "transport %s (supported: RSA PKCS#1 v1.5 and RSA-OAEP)",
		              oid_str(ob, sizeof ob, k->alg, k->alg_len));
	}
	if (mbedtls_pk_get_type(pk) != MBEDTLS_PK_RSA)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key is not an RSA key");
	mbedtls_rsa_init(&rsa, MBEDTLS_RSA_PKCS_V15, 0);
	rc = mbedtls_rsa_copy(&rsa, mbedtls_pk_rsa(*pk));
	if (rc != 0) {
		mbedtls_rsa_free(&rsa);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	if (k->ek_len != mbedtls_rsa_get_len(&rsa)) {
		mbedtls_rsa_free(&rsa);
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key does not open its "
		              "/Recipients envelope (the encrypted key is %zu bytes, the key's "
		              "modulus %zu)", k->ek_len, mbedtls_rsa_get_len(&rsa));
	}
	if (oaep) {
		mbedtls_rsa_set_padding(&rsa, MBEDTLS_RSA_PKCS_V21, md);
		rc = mbedtls_rsa_rsaes_oaep_decrypt(&rsa, rng, ctx, MBEDTLS_RSA_PRIVATE, label,
		                                    label_len, cek_len, k->ek, cek, MAX_KEY);
	} else {
		mbedtls_rsa_set_padding(&rsa, MBEDTLS_RSA_PKCS_V15, 0);
		rc = mbedtls_rsa_rsaes_pkcs1_v15_decrypt(&rsa, rng, ctx, MBEDTLS_RSA_PRIVATE,
		                                         cek_len, k->ek, cek, MAX_KEY);
	}
	mbedtls_rsa_free(&rsa);
	if (rc == MBEDTLS_ERR_RSA_RNG_FAILED)
		return ps_err_wrap(ctx, PDFSTAMP_E_IO, "RSA blinding");
	if (rc != 0) {
		ps_wipe(cek, MAX_KEY);
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key does not open its "
		              "/Recipients envelope (RSA %s decryption fails)",
		              oaep ? "OAEP" : "PKCS#1 v1.5");
	}
	return 0;
}

/* ---- note 4: the content ----------------------------------------------------- */

enum { C_AES, C_DES3, C_RC2, C_DES, C_RC4 };

/* The encryptedContent of E, its pieces joined, into OUT. */
static int gather(ps_ctx *ctx, const struct env *e, ps_buf *out)
{
	const uint8_t *p = e->ec, *end;
	size_t len;

	if (*p == CTX_P(0)) {
		if (ps_der_tag(&p, e->ec_end, CTX_P(0), &len) != 0)
			return damaged(ctx, "the encryptedContent");
		if (len > MAX_CONTENT)
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a /Recipients envelope holds "
			              "%zu bytes of content (at most %zu)", len, MAX_CONTENT);
		ps_buf_append(out, p, len);
	} else {
		if (ps_der_tag(&p, e->ec_end, PS_DER_CTX_C(0), &len) != 0)
			return damaged(ctx, "the encryptedContent");
		end = p + len;
		while (p < end) {
			if (ps_der_tag(&p, end, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
				return damaged(ctx, "a piece of the encryptedContent");
			if (len > MAX_CONTENT - out->len)
				return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a /Recipients envelope "
				              "holds more than %zu bytes of content", MAX_CONTENT);
			ps_buf_append(out, p, len);
			p += len;
		}
	}
	return out->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}

/* The content cipher of E: its kind, key size (0: any of 1..128 bytes), IV
 * and RC2 effective bits (0: the key's). */
static int content_cipher(ps_ctx *ctx, const struct env *e, int *kind, size_t *keylen,
                          const uint8_t **iv, long *rc2_version)
{
	const uint8_t *p = e->cparams, *end;
	size_t len, ivlen = 16;
	char ob[64];

	*rc2_version = -1;
	if (OID_IS(e->calg, e->calg_len, OID_AES128_CBC)) {
		*kind = C_AES;
		*keylen = 16;
	} else if (OID_IS(e->calg, e->calg_len, OID_AES192_CBC)) {
		*kind = C_AES;
		*keylen = 24;
	} else if (OID_IS(e->calg, e->calg_len, OID_AES256_CBC)) {
		*kind = C_AES;
		*keylen = 32;
	} else if (OID_IS(e->calg, e->calg_len, OID_DES_EDE3_CBC)) {
		*kind = C_DES3;
		*keylen = 24;
		ivlen = 8;
	} else if (OID_IS(e->calg, e->calg_len, OID_RC2_CBC)) {
		*kind = C_RC2;
		*keylen = 0;
		ivlen = 8;
	} else if (OID_IS(e->calg, e->calg_len, OID_DES_CBC)) {
		*kind = C_DES;
		*keylen = 8;
		ivlen = 8;
	} else if (OID_IS(e->calg, e->calg_len, OID_RC4)) {
		/* a stream cipher: no IV (absent, NULL or an empty OCTET STRING) */
		*kind = C_RC4;
		*keylen = 0;
		*iv = NULL;
		if (!p || (e->cparams_len == 2 && (p[0] == MBEDTLS_ASN1_NULL ||
		                                   p[0] == MBEDTLS_ASN1_OCTET_STRING) && p[1] == 0))
			return 0;
		return damaged(ctx, "RC4 with parameters");
	} else {
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a /Recipients envelope uses the "
		              "content cipher %s (supported: AES-CBC, DES-EDE3-CBC, DES-CBC, "
		              "RC2-CBC, RC4)", oid_str(ob, sizeof ob, e->calg, e->calg_len));
	}
	if (!p)
		return damaged(ctx, "the content cipher has no IV");
	end = p + e->cparams_len;
	if (*kind == C_RC2 && *p == PS_DER_SEQ) {
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
			return damaged(ctx, "the RC2 parameters");
		if (p < end && *p == MBEDTLS_ASN1_INTEGER) {
			unsigned char *u = (unsigned char *)p;
			int v;
			if (mbedtls_asn1_get_int(&u, end, &v) != 0)
				return damaged(ctx, "the RC2 parameter version");
			p = u;
			*rc2_version = v;
		}
	}
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 || len != ivlen ||
	    p + len != end)
		return damaged(ctx, "the content cipher's IV");
	*iv = p;
	return 0;
}

/* CBC-decrypts BUF (whole blocks) in place under CEK; 0 or a PDFSTAMP_E_*. */
static int cbc_decrypt(ps_ctx *ctx, int kind, const uint8_t *cek, size_t cek_len,
                       unsigned rc2_bits, const uint8_t *iv0, uint8_t *buf, size_t n)
{
	uint8_t iv[16];
	int rc = 0;

	memcpy(iv, iv0, kind == C_AES ? 16 : 8);
	if (kind == C_AES) {
		mbedtls_aes_context a;
		mbedtls_aes_init(&a);
		rc = mbedtls_aes_setkey_dec(&a, cek, (unsigned)cek_len * 8);
		if (rc == 0)
			rc = mbedtls_aes_crypt_cbc(&a, MBEDTLS_AES_DECRYPT, n, iv, buf, buf);
		mbedtls_aes_free(&a);
	} else if (kind == C_DES) {
		mbedtls_des_context d;
		mbedtls_des_init(&d);
		rc = mbedtls_des_setkey_dec(&d, cek);
		if (rc == 0)
			rc = mbedtls_des_crypt_cbc(&d, MBEDTLS_DES_DECRYPT, n, iv, buf, buf);
		mbedtls_des_free(&d);
	} else if (kind == C_DES3) {
		mbedtls_des3_context d;
		mbedtls_des3_init(&d);
		rc = mbedtls_des3_set3key_dec(&d, cek);
		if (rc == 0)
			rc = mbedtls_des3_crypt_cbc(&d, MBEDTLS_DES_DECRYPT, n, iv, buf, buf);
		mbedtls_des3_free(&d);
	} else {
		ps_rc2 r;
		uint8_t blk[8];
		size_t i, j;
		rc = ps_rc2_setkey(&r, cek, cek_len, rc2_bits);
		for (i = 0; rc == 0 && i < n; i += 8) {
			memcpy(blk, buf + i, 8);
			ps_rc2_decrypt(&r, buf + i, buf + i);
			for (j = 0; j < 8; j++)
				buf[i + j] ^= iv[j];
			memcpy(iv, blk, 8);
		}
		ps_wipe(blk, sizeof blk);
		ps_rc2_wipe(&r);
	}
	ps_wipe(iv, sizeof iv);
	return rc == 0 ? 0 : ps_err(ctx, PDFSTAMP_E_INTERNAL, "the content cipher failed "
	                            "(-0x%04x)", (unsigned)-rc);
}

/* Note 4: the content of E under CEK into OUT (a secret buffer). */
static int decrypt_content(ps_ctx *ctx, const struct env *e, const uint8_t *cek, size_t cek_len,
                           ps_buf *out)
{
	int kind = C_AES, rc;
	size_t keylen = 0, bs, pad, i;
	const uint8_t *iv = NULL;
	long ver;
	unsigned bits = 0;
	uint8_t bad = 0;

	rc = content_cipher(ctx, e, &kind, &keylen, &iv, &ver);
	if (rc != 0)
		return rc;
	if (keylen ? cek_len != keylen : cek_len < 1 || cek_len > MAX_KEY)
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key does not open its "
		              "/Recipients envelope (a content key of %zu bytes)", cek_len);
	if (kind == C_RC2) {
		bits = ver < 0 ? (unsigned)cek_len * 8 : ps_rc2_version_bits(ver);
		if (bits == 0)
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a /Recipients envelope uses "
			              "RC2 with the parameter version %ld, which names no key "
			              "length", ver);
	}
	rc = gather(ctx, e, out);
	if (rc != 0)
		return rc;
	if (kind == C_RC4) {
		mbedtls_arc4_context a;
		if (out->len == 0)
			return damaged(ctx, "the encrypted content is empty");
		mbedtls_arc4_init(&a);
		mbedtls_arc4_setup(&a, cek, (unsigned)cek_len);
		rc = mbedtls_arc4_crypt(&a, out->len, out->data, out->data);
		mbedtls_arc4_free(&a);
		return rc == 0 ? 0 : ps_err(ctx, PDFSTAMP_E_INTERNAL, "RC4 failed");
	}
	bs = kind == C_AES ? 16 : 8;
	if (out->len == 0 || out->len % bs != 0)
		return damaged(ctx, "the encrypted content is not a whole number of blocks");
	rc = cbc_decrypt(ctx, kind, cek, cek_len, bits, iv, out->data, out->len);
	if (rc != 0)
		return rc;
	/* RFC 5652 6.3: PKCS#7 padding, checked in full */
	pad = out->data[out->len - 1];
	if (pad == 0 || pad > bs)
		bad = 1;
	for (i = 0; !bad && i < pad; i++)
		bad |= out->data[out->len - 1 - i] != pad;
	if (bad)
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key does not open its "
		              "/Recipients envelope (the content's padding is wrong)");
	out->len -= pad;
	return 0;
}

int ps_env_open(ps_ctx *ctx, const ps_rkey *k, const uint8_t *der, size_t n,
                uint8_t content[PS_ENV_CONTENT_MAX], size_t *clen, int *nri)
{
	struct env e;
	struct ktri kt;
	const mbedtls_x509_crt *x = ps_rkey_cert(k);
	const uint8_t *q;
	uint8_t cek[MAX_KEY];
	size_t cek_len = 0;
	ps_buf plain = PS_BUF_INIT, ber = PS_BUF_INIT;
	int rc, found = 0;

	memset(content, 0, PS_ENV_CONTENT_MAX);
	*clen = 0;
	if (nri)
		*nri = 0;
	rc = parse_any(ctx, der, n, &ber, &e);
	if (rc != 0) {
		ps_buf_free(&ber);
		return rc;
	}
	if (nri)
		*nri = e.nri;
	for (q = e.ris; q < e.ris_end;) {
		/* parse() checked every item */
		if (*q != PS_DER_SEQ) {
			if (ps_der_skip(&q, e.ris_end, NULL) != 0)
				break;
			continue;
		}
		if (get_ktri(&q, e.ris_end, &kt) != 0)
			break;
		if (names_cert(&kt, x)) {
			found = 1;
			break;
		}
	}
	if (!found) {
		ps_buf_free(&ber);
		return 0;
	}
	rc = unwrap(ctx, &kt, k, cek, &cek_len);
	if (rc == 0) {
		plain.secret = 1;
		rc = decrypt_content(ctx, &e, cek, cek_len, &plain);
	}
	ps_wipe(cek, sizeof cek);
	if (rc == 0) {
		*clen = plain.len < PS_ENV_CONTENT_MAX ? plain.len : PS_ENV_CONTENT_MAX;
		memcpy(content, plain.data, *clen);
	}
	ps_buf_free(&plain);
	ps_buf_free(&ber);
	return rc == 0 ? 1 : rc;
}

/* ---- note 6: writing --------------------------------------------------------- */

/* Appends a DER length. */
static void put_len(ps_buf *b, size_t n)
{
	uint8_t t[9];
	size_t i = sizeof t;

	if (n < 0x80) {
		ps_buf_putc(b, (int)n);
		return;
	}
	while (n) {
		t[--i] = (uint8_t)n;
		n >>= 8;
	}
	ps_buf_putc(b, 0x80 | (int)(sizeof t - i));
	ps_buf_append(b, t + i, sizeof t - i);
}

static void put_tlv(ps_buf *b, int tag, const void *v, size_t n)
{
	ps_buf_putc(b, tag);
	put_len(b, n);
	ps_buf_append(b, v, n);
}

/* TAG { IN } appended to OUT; IN is reset. */
static void wrap(ps_buf *out, int tag, ps_buf *in)
{
	put_tlv(out, tag, in->data, in->len);
	ps_buf_reset(in);
}

static const uint8_t NULL_TLV[] = {MBEDTLS_ASN1_NULL, 0};
static const uint8_t ZERO_INT[] = {MBEDTLS_ASN1_INTEGER, 1, 0};

/* One KeyTransRecipientInfo for X with the content key CEK, into OUT. */
static int make_ktri(ps_ctx *ctx, const mbedtls_x509_crt *x, const uint8_t *cek, size_t cek_len,
                     ps_buf *out)
{
	mbedtls_rsa_context rsa;
	uint8_t ek[MBEDTLS_MPI_MAX_SIZE];
	ps_buf t = PS_BUF_INIT, u = PS_BUF_INIT;
	size_t eklen;
	int rc;

	if (mbedtls_pk_get_type(&x->pk) != MBEDTLS_PK_RSA)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a recipient's certificate holds a "
		              "key that is not RSA");
	mbedtls_rsa_init(&rsa, MBEDTLS_RSA_PKCS_V15, 0);
	rc = mbedtls_rsa_copy(&rsa, mbedtls_pk_rsa(x->pk));
	if (rc != 0) {
		mbedtls_rsa_free(&rsa);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	mbedtls_rsa_set_padding(&rsa, MBEDTLS_RSA_PKCS_V15, 0);
	eklen = mbedtls_rsa_get_len(&rsa);
	rc = eklen <= sizeof ek ? mbedtls_rsa_rsaes_pkcs1_v15_encrypt(&rsa, rng, ctx,
	                                                               MBEDTLS_RSA_PUBLIC, cek_len,
	                                                               cek, ek) : -1;
	mbedtls_rsa_free(&rsa);
	if (rc != 0)   /* EK may hold the padded content key in clear */
		ps_wipe(ek, sizeof ek);
	if (rc == MBEDTLS_ERR_RSA_RNG_FAILED)
		return ps_err_wrap(ctx, PDFSTAMP_E_IO, "RSA padding");
	if (rc != 0)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "a recipient's RSA key cannot wrap the "
		              "content key (-0x%04x)", rc < 0 ? (unsigned)-rc : 0u);
	ps_buf_append(&t, ZERO_INT, sizeof ZERO_INT);
	/* issuerAndSerialNumber */
	ps_buf_append(&u, x->issuer_raw.p, x->issuer_raw.len);
	put_tlv(&u, MBEDTLS_ASN1_INTEGER, x->serial.p, x->serial.len);
	wrap(&t, PS_DER_SEQ, &u);
	put_tlv(&u, MBEDTLS_ASN1_OID, OID_RSA, sizeof OID_RSA);
	ps_buf_append(&u, NULL_TLV, sizeof NULL_TLV);
	wrap(&t, PS_DER_SEQ, &u);
	put_tlv(&t, MBEDTLS_ASN1_OCTET_STRING, ek, eklen);
	wrap(out, PS_DER_SEQ, &t);
	rc = t.oom || u.oom || out->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
	ps_buf_free(&t);
	ps_buf_free(&u);
	return rc;
}

static int cmp_buf(const void *a, const void *b)
{
	const ps_buf *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->data, y->data, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

int ps_env_make(ps_ctx *ctx, const ps_rcert *const *certs, size_t ncerts,
                const uint8_t *content, size_t n, ps_buf *out)
{
	uint8_t cek[32], iv[16];
	ps_buf *ris = NULL;
	ps_buf set = PS_BUF_INIT, ct = PS_BUF_INIT, a = PS_BUF_INIT, b = PS_BUF_INIT;
	mbedtls_aes_context aes;
	size_t i, pad;
	int rc;

	if (ncerts == 0 || !certs || (n && !content))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "an envelope needs a recipient and content");
	if (n > MAX_CONTENT)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "an envelope's content is at most %zu bytes",
		              MAX_CONTENT);
	if (ncerts > SIZE_MAX / sizeof *ris)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	ris = calloc(ncerts, sizeof *ris);
	if (!ris)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	rc = ps_random_os(ctx, cek, sizeof cek);
	if (rc == 0)
		rc = ps_random_os(ctx, iv, sizeof iv);
	for (i = 0; rc == 0 && i < ncerts; i++)
		rc = certs[i] ? make_ktri(ctx, ps_rcert_crt(certs[i]), cek, sizeof cek, &ris[i]) :
		     ps_err(ctx, PDFSTAMP_E_USAGE, "a NULL recipient certificate");
	if (rc != 0)
		goto done;
	/* DER: the SET OF in the order of its elements' encodings */
	qsort(ris, ncerts, sizeof *ris, cmp_buf);
	for (i = 0; i < ncerts; i++)
		ps_buf_append(&set, ris[i].data, ris[i].len);

	/* the content: AES-256-CBC, PKCS#7 padding */
	ct.secret = 1;
	pad = 16 - n % 16;
	ps_buf_append(&ct, content, n);
	for (i = 0; i < pad; i++)
		ps_buf_putc(&ct, (int)pad);
	if (ct.oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto done;
	}
	{
		uint8_t civ[16];
		memcpy(civ, iv, sizeof civ);
		mbedtls_aes_init(&aes);
		rc = mbedtls_aes_setkey_enc(&aes, cek, 256);
		if (rc == 0)
			rc = mbedtls_aes_crypt_cbc(&aes, MBEDTLS_AES_ENCRYPT, ct.len, civ, ct.data,
			                           ct.data);
		mbedtls_aes_free(&aes);
		if (rc != 0) {
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "AES-256-CBC failed (-0x%04x)",
			            (unsigned)-rc);
			goto done;
		}
	}
	/* EncryptedContentInfo */
	put_tlv(&a, MBEDTLS_ASN1_OID, OID_DATA, sizeof OID_DATA);
	put_tlv(&b, MBEDTLS_ASN1_OID, OID_AES256_CBC, sizeof OID_AES256_CBC);
	put_tlv(&b, MBEDTLS_ASN1_OCTET_STRING, iv, sizeof iv);
	wrap(&a, PS_DER_SEQ, &b);
	put_tlv(&a, CTX_P(0), ct.data, ct.len);
	/* EnvelopedData */
	ps_buf_append(&b, ZERO_INT, sizeof ZERO_INT);
	wrap(&b, SET, &set);
	wrap(&b, PS_DER_SEQ, &a);
	wrap(&a, PS_DER_SEQ, &b);
	/* ContentInfo */
	put_tlv(&b, MBEDTLS_ASN1_OID, OID_ENVELOPED, sizeof OID_ENVELOPED);
	wrap(&b, PS_DER_CTX_C(0), &a);
	wrap(out, PS_DER_SEQ, &b);
	if (a.oom || b.oom || set.oom || out->oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
done:
	ps_wipe(cek, sizeof cek);
	ps_wipe(iv, sizeof iv);
	for (i = 0; i < ncerts; i++)
		ps_buf_free(&ris[i]);
	free(ris);
	ps_buf_free(&set);
	ps_buf_free(&ct);
	ps_buf_free(&a);
	ps_buf_free(&b);
	return rc;
}
