/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dss.c - long-term validation data: the catalog's Document Security Store
 * (/DSS) and its /VRI entries, appended as one incremental update.
 *
 * DESIGN NOTES
 *
 * Place: above incr.c and policy.c (it asks the pre-flight and writes
 * through the incremental writer), beside stamp.c and meta.c.  It is one
 * of the modules that use mbedTLS (X.509, CRL, ASN.1, SHA-1): nothing of
 * it reaches ps.h.
 *
 *  1. Inputs (struct pdfstamp_dss_input): the bytes of a file, at most
 *     PDFSTAMP_DSS_MAX_INPUT, and at most PDFSTAMP_DSS_MAX_INPUTS inputs
 *     and items.  An input whose first byte is 0x30 (a DER SEQUENCE) is one
 *     DER structure that must span the whole input exactly (no trailing
 *     bytes, not truncated).  Anything else is PEM (RFC 7468): every
 *     "-----BEGIN L-----" ... "-----END L-----" block is one item, text
 *     around blocks is ignored, a block of another label than the kind's
 *     (CERTIFICATE; X509 CRL) or with RFC 1421 headers (encrypted PEM) is
 *     refused, and an input without a block is refused.  OCSP responses
 *     are DER only.  Every refusal is PDFSTAMP_E_FORMAT naming the input,
 *     before the document is looked at (pdfstamp_dss_check runs the same
 *     checks without one).
 *  2. Checks.  A certificate must parse with mbedtls_x509_crt_parse_der, a
 *     CRL with mbedtls_x509_crl_parse_der, each over exactly its bytes.
 *     An OCSP response (RFC 6960 4.2.1) must be an OCSPResponse SEQUENCE
 *     { responseStatus ENUMERATED = successful (0), responseBytes [0]
 *     EXPLICIT SEQUENCE { responseType = id-pkix-ocsp-basic
 *     (1.3.6.1.5.5.7.48.1.1), response OCTET STRING } } whose OCTET STRING
 *     holds a BasicOCSPResponse (4.2.1: tbsResponseData,
 *     signatureAlgorithm, signature, [0] certs) whose ResponseData has a
 *     responderID, producedAt and SingleResponses with a CertID each; the
 *     CertIDs are kept for note 5.  A refused item says what it parses as
 *     instead (a CRL given as a certificate, ...).  Signatures are not
 *     verified: whether the data validates a signature is the validator's
 *     business, and the hook that supplies it chose it.
 *  3. Duplicates.  Items of one kind with the same DER bytes are one item.
 *     An item whose bytes an entry of its /DSS array already holds
 *     (the entry's stream decrypted and decoded) is not written again:
 *     it is that entry (for note 5).  Existing entries are kept as they
 *     are, unreadable ones too (with a warning).  The work is bounded by
 *     the file, whatever the /DSS says (a hostile one may name one small
 *     FlateDecode stream of megabytes of zeros in every entry of its
 *     arrays): each distinct object, by number AND generation, is read
 *     and decoded at most once per command, and what it held (unreadable,
 *     or its length and SHA-256, compared with each item's) is kept in a
 *     table, so that a duplicate entry costs O(1) (the items are compared
 *     by length and SHA-256, not byte for byte).  The bytes read and
 *     decoded for one command (raw plus decoded, of streams that fail to
 *     decode too: distinct numbers may share bytes, and a bomb may fail
 *     late) are capped at DECODE_FACTOR (4) times the file size plus
 *     DECODE_SLACK (64 MiB), through doc.c's budget (note 7), which
 *     never inflates past it: the stream that would go past it refuses
 *     the command with PDFSTAMP_E_UNSUPPORTED naming the cap, before any
 *     number is handed out, so nothing is written.  An array holds at
 *     most MAX_EXISTING (100,000) entries (UNSUPPORTED).
 *     The /VRI entries' arrays are only compared as references (note 5),
 *     never read.
 *  4. The update (ISO 32000-2 12.8.4.3, Table 261; ETSI EN 319 142-1
 *     5.4.2).  Each new item is a new stream with the DER bytes, no
 *     filter (DER of keys and signatures hardly compresses, and a reader
 *     gets the bytes as stored), encrypted by the writer under the file's
 *     own handler like every new stream (incr.c note 2).  It is appended
 *     to /Certs, /OCSPs or /CRLs.  The smallest set of objects changes:
 *     an indirect /DSS (or an indirect array or /VRI dictionary inside
 *     it) gets a new version under its own number, leaving the catalog
 *     alone; a direct /DSS is edited inside a new version of the catalog;
 *     a missing one becomes a new indirect dictionary and the catalog's
 *     new version points at it.  Nothing else of a copied object changes
 *     (indirect things stay indirect).  The catalog is never put in an
 *     object stream (incr.c writes none).  With nothing to add no update
 *     is written at all, not even an output file.
 *  5. /VRI (12.8.4.4, Table 262).  The key of a signature is the
 *     uppercase hexadecimal SHA-1 of its /Contents string as stored: the
 *     decoded bytes of the hex string, the zero padding after the CMS
 *     included (as PDFBox and iText compute it; /Contents is never
 *     encrypted, 7.6.2, so the string doc.c hands us is those bytes).  The
 *     signatures are policy.c's list (ps_policy_signatures); a signature
 *     dictionary that is direct in its field has no number to look up
 *     and is skipped with a warning.  An item of this run belongs to a
 *     signature when (closure, repeated until nothing changes):
 *       a. a certificate whose DER occurs in the signature's /Contents
 *          (the CMS certificates: the signer and what it carries);
 *       b. a certificate whose subject is, byte for byte, the issuer of a
 *          certificate that belongs (its issuer; self-issued ones stop);
 *       c. an OCSP response with a SingleResponse whose CertID names a
 *          certificate that belongs: the same serialNumber and an
 *          issuerNameHash equal to the hash (CertID's algorithm) of that
 *          certificate's issuer Name;
 *       d. a certificate whose DER occurs in an OCSP response that belongs
 *          (the responder's certificate in BasicOCSPResponse certs);
 *       e. a CRL whose issuer Name equals the issuer of a certificate that
 *          belongs.
 *     Items of earlier runs that were not given again are not considered.
 *     The entry (/Cert, /OCSP, /CRL arrays of references to the streams,
 *     new or existing) is created or extended; existing entries and their
 *     other keys (/TU, /TS) are kept.  A signature to which nothing
 *     belongs gets no entry (a warning says so).
 *  6. RC4 files (no IV): new versions under old numbers (catalog, /DSS,
 *     /VRI) carry the old strings unchanged, so their ciphertext comes out
 *     byte for byte the same; no new string is written under an old
 *     number.  New streams have new numbers.
 *  7. Every object that gets a new version is read before the first new
 *     number is handed out (incr.c note 6): the catalog, /DSS and its
 *     arrays (match_existing), the signatures and their /VRI entries with
 *     the entries' arrays (vri_read), so that a /VRI entry naming /Size
 *     does not come to name the new certificate stream.
 *  8. --fetch (opts version 2, fetch): after the pre-flight and before
 *     anything else is read, the /Contents of every signature of note 5's
 *     list (document timestamps included) is handed to revoc.c, which
 *     returns its certificates, the issuers it fetched, and an OCSP
 *     response or a CRL per certificate, each checked against its issuer
 *     (revoc.c notes); they become items exactly like inputs (note 2's
 *     checks run on them again), after the caller's own inputs, and the
 *     rest (notes 3-7) is the same.  Any failure there (network, a reply
 *     that is not what was asked, a revoked certificate) fails the call
 *     before the first number is handed out: nothing is written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/asn1.h>
#include <mbedtls/base64.h>
#include <mbedtls/error.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "policy.h"
#include "dss.h"
#include "der.h"
#include "revoc.h"

/* ---- items (notes 1 and 2) --------------------------------------------------- */

#define MAX_CERTIDS 1024      /* SingleResponses kept per OCSP response */
#define MAX_EXISTING 100000   /* entries of one /DSS array compared (note 3) */
#define DECODE_FACTOR 4       /* note 3's cap on bytes read and decoded: 4 x the file size ... */
#define DECODE_SLACK ((uint64_t)64 << 20) /* ... + 64 MiB */

static const char *kind_name(int kind)
{
	return kind == PDFSTAMP_DSS_CERT ? "certificate"
	       : kind == PDFSTAMP_DSS_OCSP ? "OCSP response" : "CRL";
}

static void item_clear(ps_dss_item *it)
{
	free(it->der);
	free(it->ids);
	memset(it, 0, sizeof *it);
}

void ps_dss_items_free(ps_dss_items *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		item_clear(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}


static void mbed_msg(int ret, char *buf, size_t n)
{
	mbedtls_strerror(ret, buf, n);
	if (!buf[0])
		snprintf(buf, n, "mbedTLS error -0x%04X", (unsigned)-ret);
}

/* The BasicOCSPResponse of RFC 6960 4.2.1 in [P, END): its CertIDs are
 * recorded in IT.  0, or -1 with *WHY set. */
static int parse_basic_ocsp(const uint8_t *p, const uint8_t *end, ps_dss_item *it, const char **why)
{
	const uint8_t *bend, *tend, *rend;
	size_t len;
	int tag;

	*why = "the BasicOCSPResponse is not a SEQUENCE";
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
		return -1;
	*why = "the ResponseData is not a SEQUENCE";
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return -1;
	tend = p + len;
	bend = end;
	/* version [0] EXPLICIT DEFAULT v1 */
	if (p < tend && *p == PS_DER_CTX_C(0) && ps_der_skip(&p, tend, &tag) != 0)
		return -1;
	*why = "the ResponseData has no responderID";
	if (p >= tend || (*p != PS_DER_CTX_C(1) && *p != PS_DER_CTX_C(2)) ||
	    ps_der_skip(&p, tend, &tag) != 0)
		return -1;
	*why = "the ResponseData has no producedAt time";
	if (ps_der_tag(&p, tend, MBEDTLS_ASN1_GENERALIZED_TIME, &len) != 0)
		return -1;
	p += len;
	*why = "the ResponseData has no responses";
	if (ps_der_tag(&p, tend, PS_DER_SEQ, &len) != 0)
		return -1;
	rend = p + len;
	while (p < rend) {
		const uint8_t *send, *cend;
		ps_dss_certid id;
		mbedtls_asn1_buf oid;

		memset(&id, 0, sizeof id);
		*why = "a SingleResponse is not a SEQUENCE with a CertID";
		if (ps_der_tag(&p, rend, PS_DER_SEQ, &len) != 0)
			return -1;
		send = p + len;
		if (ps_der_tag(&p, send, PS_DER_SEQ, &len) != 0)
			return -1;
		cend = p + len;
		if (ps_der_tag(&p, cend, PS_DER_SEQ, &len) != 0)
			return -1;
		{
			const uint8_t *aend = p + len;
			if (ps_der_tag(&p, aend, MBEDTLS_ASN1_OID, &len) != 0)
				return -1;
			oid.tag = MBEDTLS_ASN1_OID;
			oid.p = (unsigned char *)p;
			oid.len = len;
			mbedtls_md_type_t md;
			if (mbedtls_oid_get_md_alg(&oid, &md) != 0)
				md = MBEDTLS_MD_NONE; /* an algorithm we cannot
				                       * compute: never matches */
			id.md = (int)md;
			p = aend;
		}
		if (ps_der_tag(&p, cend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
			return -1;
		id.name_hash = p;
		id.name_hash_len = len;
		p += len;
		if (ps_der_tag(&p, cend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
			return -1;
		p += len;
		if (ps_der_tag(&p, cend, MBEDTLS_ASN1_INTEGER, &len) != 0 || p + len != cend)
			return -1;
		id.serial = p;
		id.serial_len = len;
		p = cend;
		*why = "a SingleResponse has no certStatus and thisUpdate";
		if (p >= send || (*p != 0x80 && *p != PS_DER_CTX_C(1) && *p != 0x82) ||
		    ps_der_skip(&p, send, &tag) != 0)
			return -1;
		if (ps_der_tag(&p, send, MBEDTLS_ASN1_GENERALIZED_TIME, &len) != 0)
			return -1;
		p = send; /* nextUpdate, singleExtensions: not needed */
		if (it->nids < MAX_CERTIDS) {
			if (ps_vec_grow((void **)&it->ids, it->nids, sizeof *it->ids) < 0) {
				*why = NULL;
				return -1;
			}
			it->ids[it->nids++] = id;
		}
	}
	p = tend;
	*why = "the BasicOCSPResponse has no signatureAlgorithm and signature";
	if (ps_der_tag(&p, bend, PS_DER_SEQ, &len) != 0)
		return -1;
	p += len;
	if (ps_der_tag(&p, bend, MBEDTLS_ASN1_BIT_STRING, &len) != 0)
		return -1;
	p += len;
	*why = "the BasicOCSPResponse has trailing data";
	if (p < bend && (*p != PS_DER_CTX_C(0) || ps_der_skip(&p, bend, &tag) != 0))
		return -1;
	return p == bend ? 0 : -1;
}

/* RFC 6960 4.2.1.  0, or -1 with *WHY set (NULL: out of memory). */
static int parse_ocsp(const uint8_t *der, size_t n, ps_dss_item *it, const char **why)
{
	static const uint8_t basic[] = {0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01};
	static const char *const status[] = {
		"", "the OCSP responseStatus is malformedRequest (1), not successful (0)",
		"the OCSP responseStatus is internalError (2), not successful (0)",
		"the OCSP responseStatus is tryLater (3), not successful (0)",
		"the OCSP responseStatus is 4 (unused), not successful (0)",
		"the OCSP responseStatus is sigRequired (5), not successful (0)",
		"the OCSP responseStatus is unauthorized (6), not successful (0)"};
	const uint8_t *p = der, *end = der + n, *bend;
	size_t len;
	int st;

	*why = "not an OCSPResponse (no SEQUENCE with a responseStatus)";
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
		return -1;
	{
		unsigned char *q = (unsigned char *)p;
		if (mbedtls_asn1_get_enum(&q, end, &st) != 0)
			return -1;
		p = q;
	}
	if (st != 0) {
		*why = st > 0 && st <= 6 ? status[st]
		                         : "the OCSP responseStatus is not successful (0)";
		return -1;
	}
	*why = "the OCSPResponse has no responseBytes";
	if (ps_der_tag(&p, end, PS_DER_CTX_C(0), &len) != 0 || p + len != end)
		return -1;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 || p + len != end)
		return -1;
	bend = end;
	*why = "the OCSP responseType is not id-pkix-ocsp-basic";
	if (ps_der_tag(&p, bend, MBEDTLS_ASN1_OID, &len) != 0 || len != sizeof basic ||
	    memcmp(p, basic, len) != 0)
		return -1;
	p += len;
	*why = "the OCSP response is not an OCTET STRING";
	if (ps_der_tag(&p, bend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0 || p + len != bend)
		return -1;
	return parse_basic_ocsp(p, bend, it, why);
}

/* What DER parses as, for a refusal's hint: "" if nothing we know. */
static const char *what_is(const uint8_t *der, size_t n, int not_kind)
{
	mbedtls_x509_crt crt;
	mbedtls_x509_crl crl;
	ps_dss_item tmp;
	const char *why;
	int rc;

	if (not_kind != PDFSTAMP_DSS_CERT) {
		mbedtls_x509_crt_init(&crt);
		rc = mbedtls_x509_crt_parse_der(&crt, der, n);
		mbedtls_x509_crt_free(&crt);
		if (rc == 0)
			return "; it is an X.509 certificate";
	}
	if (not_kind != PDFSTAMP_DSS_CRL) {
		mbedtls_x509_crl_init(&crl);
		rc = mbedtls_x509_crl_parse_der(&crl, der, n);
		mbedtls_x509_crl_free(&crl);
		if (rc == 0)
			return "; it is an X.509 CRL";
	}
	if (not_kind != PDFSTAMP_DSS_OCSP) {
		memset(&tmp, 0, sizeof tmp);
		rc = parse_ocsp(der, n, &tmp, &why);
		free(tmp.ids);
		if (rc == 0)
			return "; it is an OCSP response";
	}
	return "";
}

/* Checks one DER item of KIND (note 2) and appends it to S.  NAME names
 * its input, BLOCK its PEM block (0 for a DER input). */
static int add_der(ps_ctx *ctx, ps_dss_items *s, int kind, const char *name, size_t block,
                   const uint8_t *der, size_t n)
{
	ps_dss_item it;
	char where[48] = "", msg[128];
	const uint8_t *p = der;
	size_t len;
	int rc;

	memset(&it, 0, sizeof it);
	it.kind = kind;
	if (block)
		snprintf(where, sizeof where, " (PEM block %zu)", block);
	if (s->n >= PDFSTAMP_DSS_MAX_INPUTS)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: more than %d items in all", name,
		              PDFSTAMP_DSS_MAX_INPUTS);
	/* one structure, exactly (note 1) */
	rc = ps_der_tag(&p, der + n, PS_DER_SEQ, &len);
	if (rc == MBEDTLS_ERR_ASN1_OUT_OF_DATA)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s%s: the DER %s is truncated", name, where,
		              kind_name(kind));
	if (rc != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s%s: not a DER %s (no SEQUENCE)", name,
		              where, kind_name(kind));
	if ((size_t)(p - der) + len != n)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s%s: %zu bytes follow the DER %s", name,
		              where, n - (size_t)(p - der) - len, kind_name(kind));
	if (kind == PDFSTAMP_DSS_CERT) {
		mbedtls_x509_crt crt;
		mbedtls_x509_crt_init(&crt);
		if ((rc = mbedtls_x509_crt_parse_der(&crt, der, n)) != 0 || crt.raw.len != n) {
			mbedtls_x509_crt_free(&crt);
			mbed_msg(rc, msg, sizeof msg);
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s%s: not an X.509 certificate (%s)%s", name, where, msg,
			              what_is(der, n, kind));
		}
		it.iss_off = (size_t)(crt.issuer_raw.p - crt.raw.p);
		it.iss_len = crt.issuer_raw.len;
		it.sub_off = (size_t)(crt.subject_raw.p - crt.raw.p);
		it.sub_len = crt.subject_raw.len;
		it.ser_off = (size_t)(crt.serial.p - crt.raw.p);
		it.ser_len = crt.serial.len;
		mbedtls_x509_crt_free(&crt);
	} else if (kind == PDFSTAMP_DSS_CRL) {
		mbedtls_x509_crl crl;
		mbedtls_x509_crl_init(&crl);
		if ((rc = mbedtls_x509_crl_parse_der(&crl, der, n)) != 0 || crl.raw.len != n) {
			mbedtls_x509_crl_free(&crl);
			mbed_msg(rc, msg, sizeof msg);
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s%s: not an X.509 CRL (%s)%s", name,
			              where, msg, what_is(der, n, kind));
		}
		it.iss_off = (size_t)(crl.issuer_raw.p - crl.raw.p);
		it.iss_len = crl.issuer_raw.len;
		mbedtls_x509_crl_free(&crl);
	} else {
		const char *why;
		if (parse_ocsp(der, n, &it, &why) < 0) {
			free(it.ids);
			if (!why)
				return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s%s: not a usable OCSP response: %s%s", name, where, why,
			              what_is(der, n, kind));
		}
	}
	it.der = malloc(n ? n : 1);
	if (!it.der || ps_vec_grow((void **)&s->v, s->n, sizeof *s->v) < 0) {
		free(it.der);
		free(it.ids);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	memcpy(it.der, der, n);
	it.len = n;
	if (kind == PDFSTAMP_DSS_OCSP) {
		size_t k;
		for (k = 0; k < it.nids; k++) { /* rebase into the copy */
			it.ids[k].name_hash = it.der + (it.ids[k].name_hash - der);
			it.ids[k].serial = it.der + (it.ids[k].serial - der);
		}
	}
	s->v[s->n++] = it;
	return 0;
}

static int is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The PEM blocks of one input (note 1). */
static int add_pem(ps_ctx *ctx, ps_dss_items *s, int kind, const char *name, const uint8_t *data,
                   size_t n)
{
	static const char begin[] = "-----BEGIN ", dashes[] = "-----";
	const char *want = kind == PDFSTAMP_DSS_CERT ? "CERTIFICATE" : "X509 CRL";
	const uint8_t *p = data, *end = data + n, *b;
	size_t blocks = 0;
	int rc = 0;

	if (kind == PDFSTAMP_DSS_OCSP)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%s: not a DER OCSP response (it does not start with a SEQUENCE)%s",
		              name, memmem(data, n, begin, 11)
		                    ? "; PEM is not accepted for OCSP responses" : "");
	while ((b = memmem(p, (size_t)(end - p), begin, sizeof begin - 1)) != NULL) {
		const uint8_t *lab = b + sizeof begin - 1, *le, *body, *f;
		char footer[96];
		uint8_t *b64 = NULL, *der = NULL;
		size_t lablen, k, m = 0, olen = 0;

		le = memmem(lab, (size_t)(end - lab), dashes, 5);
		if (!le || le - lab > 40 || le == lab)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s: a PEM BEGIN line without its label", name);
		lablen = (size_t)(le - lab);
		for (k = 0; k < lablen; k++)
			if (lab[k] < 0x20 || lab[k] > 0x7e)
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "%s: a PEM BEGIN line without its label", name);
		blocks++;
		if (lablen != strlen(want) || memcmp(lab, want, lablen) != 0)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s: PEM block %zu is a %.*s, not a%s %s", name, blocks,
			              (int)lablen, (const char *)lab,
			              kind == PDFSTAMP_DSS_CERT ? "" : "n", want);
		body = le + 5;
		snprintf(footer, sizeof footer, "-----END %.*s-----", (int)lablen,
		         (const char *)lab);
		f = memmem(body, (size_t)(end - body), footer, strlen(footer));
		if (!f)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: PEM block %zu has no END line",
			              name, blocks);
		if (memchr(body, ':', (size_t)(f - body)))
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s: PEM block %zu has headers (an encrypted block?)", name,
			              blocks);
		b64 = malloc((size_t)(f - body) + 1);
		if (!b64)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		for (k = 0; body + k < f; k++)
			if (!is_space(body[k]))
				b64[m++] = body[k];
		if (m == 0 ||
		    mbedtls_base64_decode(NULL, 0, &olen, b64, m) ==
		            MBEDTLS_ERR_BASE64_INVALID_CHARACTER ||
		    olen == 0) {
			free(b64);
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s: PEM block %zu is empty or not valid base64", name,
			              blocks);
		}
		if (!(der = malloc(olen))) {
			free(b64);
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		if (mbedtls_base64_decode(der, olen, &olen, b64, m) != 0) {
			free(b64);
			free(der);
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "%s: PEM block %zu is not valid base64", name, blocks);
		}
		free(b64);
		rc = add_der(ctx, s, kind, name, blocks, der, olen);
		free(der);
		if (rc < 0)
			return rc;
		p = f + strlen(footer);
	}
	if (!blocks)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%s: neither a DER %s (it does not start with a SEQUENCE) nor PEM "
		              "(no -----BEGIN %s----- line)", name, kind_name(kind), want);
	return 0;
}

static void dedup(ps_dss_items *s);

int ps_dss_load(ps_ctx *ctx, const struct pdfstamp_dss_opts *o, ps_dss_items *s)
{
	size_t i;
	int rc;

	memset(s, 0, sizeof *s);
	if (!o || o->version < 1 || o->version > PDFSTAMP_DSS_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "DSS options of an unknown version (use PDFSTAMP_DSS_OPTS_INIT)");
	if (o->version >= 2 && o->fetch && o->ninputs == 0)
		return 0; /* note 8: all of it fetched */
	if (o->version >= 2 && !o->fetch && (o->offline || o->cache_dir || o->timeout_ms))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "a cache, offline or a timeout without fetch");
	if (o->ninputs == 0 || !o->inputs)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "no certificate, OCSP response or CRL to add");
	if (o->ninputs > PDFSTAMP_DSS_MAX_INPUTS)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "more than %d inputs",
		              PDFSTAMP_DSS_MAX_INPUTS);
	for (i = 0; i < o->ninputs; i++) {
		const struct pdfstamp_dss_input *in = &o->inputs[i];
		char fallback[32];
		const char *name = in->name;
		if (!name) {
			snprintf(fallback, sizeof fallback, "input %zu", i + 1);
			name = fallback;
		}
		if (in->kind != PDFSTAMP_DSS_CERT && in->kind != PDFSTAMP_DSS_OCSP &&
		    in->kind != PDFSTAMP_DSS_CRL)
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "%s: unknown kind of DSS input %d", name,
			            (int)in->kind);
		else if (!in->data && in->len)
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "%s: no data", name);
		else if (in->len == 0)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: empty", name);
		else if (in->len > PDFSTAMP_DSS_MAX_INPUT)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: larger than %u bytes", name,
			            PDFSTAMP_DSS_MAX_INPUT);
		else if (in->data[0] == 0x30)
			rc = add_der(ctx, s, in->kind, name, 0, in->data, in->len);
		else
			rc = add_pem(ctx, s, in->kind, name, in->data, in->len);
		if (rc < 0) {
			ps_dss_items_free(s);
			return rc;
		}
	}
	dedup(s);
	return 0;
}

/* Note 3: the same bytes twice are one item. */
static void dedup(ps_dss_items *s)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		s->v[i].dup_of = -1;
		for (j = 0; j < i; j++) {
			if (s->v[j].dup_of < 0 && s->v[j].kind == s->v[i].kind &&
			    s->v[j].len == s->v[i].len &&
			    memcmp(s->v[j].der, s->v[i].der, s->v[i].len) == 0) {
				s->v[i].dup_of = (long)j;
				break;
			}
		}
	}
}

int pdfstamp_dss_check(pdfstamp_ctx *ctx, const struct pdfstamp_dss_opts *o)
{
	ps_dss_items s;
	int rc = ps_dss_load(ctx, o, &s);

	ps_dss_items_free(&s);
	return rc;
}

int ps_dss_vri_key(const uint8_t *contents, size_t n, char key[41])
{
	static const char hex[] = "0123456789ABCDEF";
	uint8_t h[20];
	size_t i;

	if (mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_SHA1), contents, n, h) != 0)
		return -1;
	for (i = 0; i < 20; i++) {
		key[2 * i] = hex[h[i] >> 4];
		key[2 * i + 1] = hex[h[i] & 15];
	}
	key[40] = 0;
	return 0;
}

/* ---- the VRI closure (note 5) ---------------------------------------------------- */

static int same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	return an == bn && memcmp(a, b, an) == 0;
}

/* Does CertID ID name certificate C? */
static int certid_names(const ps_dss_certid *id, const ps_dss_item *c)
{
	const mbedtls_md_info_t *md = id->md != MBEDTLS_MD_NONE
	                              ? mbedtls_md_info_from_type((mbedtls_md_type_t)id->md) : NULL;
	uint8_t h[MBEDTLS_MD_MAX_SIZE];

	if (!md || !same_bytes(id->serial, id->serial_len, c->der + c->ser_off, c->ser_len) ||
	    id->name_hash_len != mbedtls_md_get_size(md))
		return 0;
	if (mbedtls_md(md, c->der + c->iss_off, c->iss_len, h) != 0)
		return 0;
	return memcmp(h, id->name_hash, id->name_hash_len) == 0;
}

void ps_dss_belongs(ps_dss_items *s, const uint8_t *contents, size_t n)
{
	size_t i, j, k;
	int changed;

	for (i = 0; i < s->n; i++) {
		ps_dss_item *it = &s->v[i];
		it->belongs = it->dup_of < 0 && it->kind == PDFSTAMP_DSS_CERT && it->len <= n &&
		              memmem(contents, n, it->der, it->len) != NULL; /* a */
	}
	do {
		changed = 0;
		for (i = 0; i < s->n; i++) {
			ps_dss_item *it = &s->v[i];
			if (it->belongs || it->dup_of >= 0)
				continue;
			for (j = 0; j < s->n && !it->belongs; j++) {
				const ps_dss_item *b = &s->v[j];
				if (!b->belongs || j == i)
					continue;
				if (b->kind == PDFSTAMP_DSS_CERT) {
					const uint8_t *biss = b->der + b->iss_off;
					if (it->kind == PDFSTAMP_DSS_CERT) /* b: its issuer */
						it->belongs = same_bytes(it->der + it->sub_off,
						                         it->sub_len, biss,
						                         b->iss_len) &&
						              !same_bytes(b->der + b->sub_off,
						                          b->sub_len, biss,
						                          b->iss_len);
					else if (it->kind == PDFSTAMP_DSS_CRL) /* e */
						it->belongs = same_bytes(it->der + it->iss_off,
						                         it->iss_len, biss,
						                         b->iss_len);
					else /* c */
						for (k = 0; k < it->nids && !it->belongs; k++)
							it->belongs = certid_names(&it->ids[k], b);
				} else if (b->kind == PDFSTAMP_DSS_OCSP &&
				           it->kind == PDFSTAMP_DSS_CERT) { /* d */
					it->belongs = it->len <= b->len &&
					              memmem(b->der, b->len, it->der,
					                     it->len) != NULL;
				}
			}
			changed |= it->belongs;
		}
	} while (changed);
}

/* ---- the update (note 4) ----------------------------------------------------------- */

struct dss {
	ps_doc *doc;
	ps_ctx *ctx;
	ps_update up;
	ps_obj *root_ref;         /* the trailer's /Root (a reference) */
};

static const char *const arr_key[4] = {NULL, "Certs", "OCSPs", "CRLs"};
static const char *const vri_key[4] = {NULL, "Cert", "OCSP", "CRL"};

static ps_obj *pending(struct dss *d, uint32_t num)
{
	size_t i;

	for (i = 0; i < d->up.nobjs; i++)
		if (d->up.objs[i].num == num)
			return d->up.objs[i].obj;
	return NULL;
}

/* The current version of O (borrowed): this update's new version of a
 * referenced object if there is one, else the document's.  NULL unless
 * of KIND. */
static int cur(struct dss *d, ps_obj *o, ps_kind kind, ps_obj **out)
{
	ps_obj *p = o && o->kind == PS_REF ? pending(d, o->u.ref.num) : NULL;
	int rc = 0;

	*out = NULL;
	if (!p && (rc = ps_doc_resolve(d->doc, o, &p)) < 0)
		return rc;
	*out = p && p->kind == kind ? p : NULL;
	return 0;
}

/* The writable new version of the indirect object REF, which must be of
 * KIND (WHAT names it in the refusal). */
static int edit_ref(struct dss *d, const ps_obj *ref, ps_kind kind, const char *what, ps_obj **out)
{
	ps_obj *o = pending(d, ref->u.ref.num), *copy;
	int rc;

	if (!o) {
		if ((rc = ps_doc_lookup(d->doc, ref->u.ref.num, &o)) < 0)
			return rc;
		if (o && o->kind == kind) {
			if (!(copy = ps_obj_copy(o)))
				return ps_err(d->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			if ((rc = ps_update_put(&d->up, ref->u.ref.num, ref->u.ref.gen, copy)) < 0)
				return rc;
			o = copy;
		}
	}
	if (!o || o->kind != kind)
		return ps_err(d->ctx, PDFSTAMP_E_FORMAT, "%s (object %u) is not %s", what,
		              ref->u.ref.num, kind == PS_DICT ? "a dictionary" : "an array");
	*out = o;
	return 0;
}

/* The writable value of KEY in the writable dictionary PARENT, of KIND:
 * the new version of an indirect one, the direct one, or a new direct
 * one. */
static int edit_member(struct dss *d, ps_obj *parent, const char *key, ps_kind kind,
                       const char *what, ps_obj **out)
{
	ps_obj *v = ps_dict_get(parent, key);

	if (v && v->kind == PS_REF)
		return edit_ref(d, v, kind, what, out);
	if (v && v->kind != kind)
		return ps_err(d->ctx, PDFSTAMP_E_FORMAT, "%s is not %s", what,
		              kind == PS_DICT ? "a dictionary" : "an array");
	if (!v) {
		if (ps_dict_put(parent, key, kind == PS_DICT ? ps_new_dict() : ps_new_array()) < 0)
			return ps_err(d->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		v = ps_dict_get(parent, key);
	}
	*out = v;
	return 0;
}

/* The writable /DSS dictionary (note 4). */
static int edit_dss(struct dss *d, ps_obj **out)
{
	ps_obj *cat = NULL, *v, *wcat;
	uint32_t num;
	int rc;

	if ((rc = cur(d, d->root_ref, PS_DICT, &cat)) < 0)
		return rc;
	if (!cat)
		return ps_err(d->ctx, PDFSTAMP_E_FORMAT, "the catalog is not a dictionary");
	v = ps_dict_get(cat, "DSS");
	if (v && v->kind == PS_REF)
		return edit_ref(d, v, PS_DICT, "the catalog's /DSS", out);
	if ((rc = edit_ref(d, d->root_ref, PS_DICT, "the catalog", &wcat)) < 0)
		return rc;
	if (v)
		return edit_member(d, wcat, "DSS", PS_DICT, "the catalog's /DSS", out);
	if (!(num = ps_update_alloc(&d->up)))
		return d->ctx->errcode;
	if ((rc = ps_update_put(&d->up, num, 0, ps_new_dict())) < 0)
		return rc;
	if (ps_dict_put_ref(wcat, "DSS", num, 0) < 0)
		return ps_err(d->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	*out = pending(d, num);
	return 0;
}

static int has_ref(const ps_obj *arr, uint32_t num, uint16_t gen)
{
	size_t i;

	for (i = 0; arr && i < ps_array_len(arr); i++) {
		const ps_obj *e = ps_array_get(arr, i);
		if (e->kind == PS_REF && e->u.ref.num == num && e->u.ref.gen == gen)
			return 1;
	}
	return 0;
}

/* The current /DSS (NULL if none). */
static int cur_dss(struct dss *d, ps_obj **dss)
{
	ps_obj *cat = NULL;
	int rc;

	*dss = NULL;
	if ((rc = cur(d, d->root_ref, PS_DICT, &cat)) < 0 || !cat)
		return rc;
	return cur(d, ps_dict_get(cat, "DSS"), PS_DICT, dss);
}

/* Makes sure the reference NUM GEN is in /DSS's array of IT's kind, or
 * with HEXKEY in /VRI HEXKEY's array of that kind. */
static int ensure_ref(struct dss *d, const char *hexkey, const ps_dss_item *it)
{
	const char *key = hexkey ? vri_key[it->kind] : arr_key[it->kind];
	ps_obj *dss, *vri = NULL, *ent = NULL, *arr = NULL, *w;
	char what[96];
	int rc;

	if ((rc = cur_dss(d, &dss)) < 0)
		return rc;
	if (hexkey) {
		if ((rc = cur(d, ps_dict_get(dss, "VRI"), PS_DICT, &vri)) < 0 ||
		    (rc = cur(d, ps_dict_get(vri, hexkey), PS_DICT, &ent)) < 0 ||
		    (rc = cur(d, ps_dict_get(ent, key), PS_ARRAY, &arr)) < 0)
			return rc;
	} else if ((rc = cur(d, ps_dict_get(dss, key), PS_ARRAY, &arr)) < 0) {
		return rc;
	}
	if (has_ref(arr, it->num, it->gen))
		return 0;
	if ((rc = edit_dss(d, &w)) < 0)
		return rc;
	if (hexkey) {
		snprintf(what, sizeof what, "the /VRI /%s entry", hexkey);
		if ((rc = edit_member(d, w, "VRI", PS_DICT, "the /DSS /VRI entry", &w)) < 0 ||
		    (rc = edit_member(d, w, hexkey, PS_DICT, what, &w)) < 0)
			return rc;
		snprintf(what, sizeof what, "the /VRI /%s /%s entry", hexkey, key);
	} else {
		snprintf(what, sizeof what, "the /DSS /%s entry", key);
	}
	if ((rc = edit_member(d, w, key, PS_ARRAY, what, &w)) < 0)
		return rc;
	if (ps_array_push(w, ps_new_ref(it->num, it->gen)) < 0)
		return ps_err(d->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

/* ---- existing entries (note 3) ------------------------------------------------------ */

/* What note 3 learnt of one existing object, by number and generation. */
typedef struct seen {
	uint64_t key;                 /* (num << 16 | gen) + 1; 0: an empty slot */
	int ok;                       /* decoded: LEN and SHA hold its bytes' length and SHA-256 */
	size_t len;
	uint8_t sha[32];
} seen;

typedef struct seen_set {
	seen *v;                      /* open addressing, CAP a power of two, at most half full */
	size_t cap, n;
	uint64_t left, limit;         /* note 3's cap on bytes read and decoded,
	                               * and what is left of it */
	int warned;
} seen_set;

static size_t seen_hash(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The slot of KEY in SS: its entry, or the empty slot where it goes. */
static int seen_slot(ps_ctx *ctx, seen_set *ss, uint64_t key, seen **out)
{
	size_t i;

	if (ss->n + 1 > ss->cap / 2) {
		size_t ncap = ss->cap ? ss->cap * 2 : 64, j;
		seen *nv;
		if (ncap > SIZE_MAX / sizeof *nv || !(nv = calloc(ncap, sizeof *nv)))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		for (j = 0; j < ss->cap; j++) {
			if (!ss->v[j].key)
				continue;
			for (i = seen_hash(ss->v[j].key, ncap); nv[i].key; i = (i + 1) & (ncap - 1))
				;
			nv[i] = ss->v[j];
		}
		free(ss->v);
		ss->v = nv;
		ss->cap = ncap;
	}
	for (i = seen_hash(key, ss->cap); ss->v[i].key && ss->v[i].key != key;
	     i = (i + 1) & (ss->cap - 1))
		;
	*out = &ss->v[i];
	return 0;
}

/* The existing entry E (a reference) of the /DSS array KEY: decoded at
 * most once per number and generation, its bytes counted against the cap
 * (note 3).  *OUT (valid until the next call) says whether it could be
 * read, and what it holds.  0, or NOMEM, or UNSUPPORTED past the cap. */
static int existing_entry(struct dss *d, seen_set *ss, const ps_obj *e, const char *key,
                          const seen **out)
{
	uint64_t k = ((uint64_t)e->u.ref.num << 16 | e->u.ref.gen) + 1;
	ps_buf data = PS_BUF_INIT;
	ps_obj *stm = NULL;
	seen *s = NULL;
	int rc, over = 0;

	if ((rc = seen_slot(d->ctx, ss, k, &s)) < 0)
		return rc;
	*out = s;
	if (s->key == k)
		return 0; /* a duplicate: what the first time found */
	s->key = k;
	ss->n++;
	if ((rc = ps_doc_lookup(d->doc, e->u.ref.num, &stm)) == 0 && stm &&
	    stm->kind == PS_STREAM &&
	    (rc = ps_doc_stream_data_budget(d->doc, e->u.ref.num, stm, &ss->left, &over,
	                                    &data)) == 0) {
		if (over)
			rc = ps_err(d->ctx, PDFSTAMP_E_UNSUPPORTED,
			            "the existing /DSS entries take more than %llu bytes to read "
			            "and decode (the cap: 4 times the file size plus 64 MiB); "
			            "not reading further", (unsigned long long)ss->limit);
		else if (mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), data.data,
		                    data.len, s->sha) != 0)
			rc = ps_err(d->ctx, PDFSTAMP_E_INTERNAL, "SHA-256 failed");
		s->ok = rc == 0;
		s->len = data.len;
		ps_buf_free(&data);
		return rc;
	}
	ps_buf_free(&data);
	if (rc == PDFSTAMP_E_NOMEM)
		return rc; /* ours, not the entry's: not a reason to add it again */
	if (!ss->warned++)
		ps_warn(d->ctx,
		        "an entry of /DSS /%s (object %u) cannot be read%s%s; it is kept as it is",
		        key, e->u.ref.num, rc < 0 ? ": " : "",
		        rc < 0 ? pdfstamp_ctx_errmsg(d->ctx) : "");
	return 0;
}

/* Note 3: items that an entry of their existing /DSS array holds take that
 * entry's number. */
static int match_existing(struct dss *d, ps_dss_items *s)
{
	const mbedtls_md_info_t *sha256 = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
	ps_obj *dss, *arr;
	seen_set ss;
	uint8_t (*dig)[32] = NULL;
	int64_t size = ps_doc_size(d->doc);
	size_t i, k;
	int kind, rc = 0;

	memset(&ss, 0, sizeof ss);
	if ((rc = cur_dss(d, &dss)) < 0 || !dss)
		return rc;
	/* note 3's cap, without overflow */
	ss.limit = (uint64_t)DECODE_SLACK;
	if (size > 0)
		ss.limit = (uint64_t)size > (UINT64_MAX - DECODE_SLACK) / DECODE_FACTOR
		                 ? UINT64_MAX
		                 : (uint64_t)size * DECODE_FACTOR + DECODE_SLACK;
	ss.left = ss.limit;
	if (s->n && !(dig = calloc(s->n, sizeof *dig)))
		return ps_err(d->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < s->n; i++)
		if (mbedtls_md(sha256, s->v[i].der, s->v[i].len, dig[i]) != 0) {
			rc = ps_err(d->ctx, PDFSTAMP_E_INTERNAL, "SHA-256 failed");
			goto out;
		}
	for (kind = PDFSTAMP_DSS_CERT; kind <= PDFSTAMP_DSS_CRL; kind++) {
		ps_obj *v = ps_dict_get(dss, arr_key[kind]);
		int want = 0;
		for (i = 0; i < s->n; i++)
			want |= s->v[i].kind == kind;
		if (!want || !v)
			continue;
		if ((rc = cur(d, v, PS_ARRAY, &arr)) < 0)
			break;
		if (!arr) {
			rc = ps_err(d->ctx, PDFSTAMP_E_FORMAT, "the /DSS /%s entry is not an array",
			            arr_key[kind]);
			break;
		}
		if (ps_array_len(arr) > MAX_EXISTING) {
			rc = ps_err(d->ctx, PDFSTAMP_E_UNSUPPORTED,
			            "the /DSS /%s array has more than %d entries", arr_key[kind],
			            MAX_EXISTING);
			break;
		}
		for (k = 0; k < ps_array_len(arr); k++) {
			ps_obj *e = ps_array_get(arr, k);
			const seen *se;
			size_t left = 0;
			for (i = 0; i < s->n; i++)
				left += s->v[i].kind == kind && s->v[i].dup_of < 0 && !s->v[i].num;
			if (!left)
				break; /* every item of this kind is there already */
			if (e->kind != PS_REF)
				continue;
			if ((rc = existing_entry(d, &ss, e, arr_key[kind], &se)) < 0)
				break;
			for (i = 0; se->ok && i < s->n; i++) {
				ps_dss_item *it = &s->v[i];
				if (it->kind == kind && it->dup_of < 0 && !it->num &&
				    it->len == se->len &&
				    memcmp(dig[i], se->sha, sizeof se->sha) == 0) {
					it->num = e->u.ref.num;
					it->gen = e->u.ref.gen;
				}
			}
		}
		if (rc < 0)
			break;
	}
out:
	free(dig);
	free(ss.v);
	return rc;
}

/* Note 5: the signatures (policy.c's list, into INFO) and everything of
 * the file that add_vri reads and may copy into a new version: each
 * signature dictionary, /DSS /VRI and its entry for that signature with
 * the entry's arrays.  Read before the update hands out its first number,
 * so that none of the new numbers is one these objects name (incr.c note
 * 6). */
static int vri_read(struct dss *d, struct pdfstamp_info *info)
{
	static const char *const keys[3] = {"Cert", "OCSP", "CRL"};
	ps_obj *dss = NULL, *vri = NULL;
	int k, m, rc;

	if ((rc = ps_policy_signatures(d->doc, info)) < 0 || (rc = cur_dss(d, &dss)) < 0 ||
	    (rc = cur(d, ps_dict_get(dss, "VRI"), PS_DICT, &vri)) < 0)
		return rc;
	for (k = 0; k < info->nsigs; k++) {
		ps_obj *sig = NULL, *c, *ent = NULL, *arr = NULL;
		char key[41];
		if (info->sigs[k].objnum <= 0)
			continue;
		if ((rc = ps_doc_lookup(d->doc, (uint32_t)info->sigs[k].objnum, &sig)) < 0)
			return rc;
		if (!sig || sig->kind != PS_DICT || !ps_sec_is_signature_dict(sig) || !vri)
			continue;
		c = ps_dict_get(sig, "Contents");
		if (ps_dss_vri_key(c->u.str.p, c->u.str.len, key) < 0)
			return ps_err(d->ctx, PDFSTAMP_E_INTERNAL, "SHA-1 failed");
		if ((rc = cur(d, ps_dict_get(vri, key), PS_DICT, &ent)) < 0)
			return rc;
		for (m = 0; ent && m < 3; m++)
			if ((rc = cur(d, ps_dict_get(ent, keys[m]), PS_ARRAY, &arr)) < 0)
				return rc;
	}
	return 0;
}

/* Note 5: a /VRI entry for every signature of INFO (vri_read's). */
static int add_vri(struct dss *d, ps_dss_items *s, const struct pdfstamp_info *info)
{
	size_t i;
	int k, rc = 0;

	if (info->nsigs == 0)
		ps_warn(d->ctx, "the document has no signature, so no /VRI entry is added");
	for (k = 0; k < info->nsigs; k++) {
		ps_obj *sig = NULL, *c;
		char key[41];
		int any = 0;
		if (info->sigs[k].objnum <= 0) {
			ps_warn(d->ctx, "a signature dictionary is direct in its field; "
			        "it gets no /VRI entry");
			continue;
		}
		if ((rc = ps_doc_lookup(d->doc, (uint32_t)info->sigs[k].objnum, &sig)) < 0)
			return rc;
		c = ps_dict_get(sig, "Contents");
		if (!sig || sig->kind != PS_DICT || !ps_sec_is_signature_dict(sig)) {
			ps_warn(d->ctx, "signature object %lld has no /Contents string and "
			        "/ByteRange; it gets no /VRI entry",
			        (long long)info->sigs[k].objnum);
			continue;
		}
		if (ps_dss_vri_key(c->u.str.p, c->u.str.len, key) < 0)
			return ps_err(d->ctx, PDFSTAMP_E_INTERNAL, "SHA-1 failed");
		ps_dss_belongs(s, c->u.str.p, c->u.str.len);
		for (i = 0; i < s->n; i++) {
			if (!s->v[i].belongs)
				continue;
			any = 1;
			if ((rc = ensure_ref(d, key, &s->v[i])) < 0)
				return rc;
		}
		if (!any)
			ps_warn(d->ctx, "none of the inputs belongs to signature object %lld (no "
			        "certificate of its /Contents among them); it gets no /VRI entry",
			        (long long)info->sigs[k].objnum);
	}
	return 0;
}

/* Note 8: the validation data of every signature of the file, fetched,
 * checked as inputs are (note 2) and added to S. */
static int fetch_all(struct dss *d, const struct pdfstamp_dss_opts *o, ps_dss_items *s)
{
	struct pdfstamp_info info;
	ps_revoc *r = NULL;
	int k, rc;

	memset(&info, 0, sizeof info);
	if ((rc = ps_policy_signatures(d->doc, &info)) < 0)
		return rc;
	if (info.nsigs == 0)
		ps_warn(d->ctx, "the document has no signature: nothing to fetch");
	if ((rc = ps_revoc_new(d->ctx, o, &r)) < 0)
		goto out;
	for (k = 0; k < info.nsigs; k++) {
		struct ps_revoc_item *items = NULL;
		size_t n = 0, i;
		ps_obj *sig = NULL, *c;
		if (info.sigs[k].objnum <= 0) {
			ps_warn(d->ctx, "a signature dictionary is direct in its field; "
			        "nothing is fetched for it");
			continue;
		}
		if ((rc = ps_doc_lookup(d->doc, (uint32_t)info.sigs[k].objnum, &sig)) < 0)
			goto out;
		if (!sig || sig->kind != PS_DICT || !ps_sec_is_signature_dict(sig)) {
			ps_warn(d->ctx, "signature object %lld has no /Contents string and "
			        "/ByteRange; nothing is fetched for it",
			        (long long)info.sigs[k].objnum);
			continue;
		}
		c = ps_dict_get(sig, "Contents");
		if ((rc = ps_revoc_collect(r, c->u.str.p, c->u.str.len, &items, &n)) < 0) {
			rc = ps_err_wrap(d->ctx, rc, "signature object %lld",
			                 (long long)info.sigs[k].objnum);
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (rc == 0)
				rc = add_der(d->ctx, s, items[i].kind, "fetched data", 0,
				             items[i].der, items[i].len);
			free(items[i].der);
		}
		free(items);
		if (rc < 0)
			goto out;
	}
	dedup(s);
out:
	ps_revoc_free(r);
	free(info.sigs);
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int pdfstamp_dss(pdfstamp_doc *doc, const struct pdfstamp_dss_opts *o,
                 const struct pdfstamp_write_opts *w, struct pdfstamp_result *res)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_dss_items s;
	struct dss d;
	struct pdfstamp_info *info = NULL;
	ps_obj *root = NULL;
	size_t i;
	int rc;

	memset(&d, 0, sizeof d);
	memset(&s, 0, sizeof s);
	if ((rc = ps_result_begin(ctx, res)) < 0)
		return rc;
	if ((rc = ps_dss_load(ctx, o, &s)) < 0)
		return rc;
	d.doc = doc;
	d.ctx = ctx;
	if ((rc = ps_update_begin(doc, w, &d.up)) < 0)
		goto out;
	if ((rc = ps_preflight_update(doc, PS_UPDATE_DSS)) < 0)
		goto out;
	if ((rc = ps_doc_catalog(doc, PS_CATALOG_INDIRECT, &root, &d.root_ref)) < 0)
		goto out;
	if (o->version >= 2 && o->fetch && (rc = fetch_all(&d, o, &s)) < 0)
		goto out;
	if ((rc = match_existing(&d, &s)) < 0)
		goto out;
	/* everything read before the first number is handed out (incr.c
	 * note 6): the catalog and /DSS with its arrays (match_existing), the
	 * signatures and their /VRI entries */
	if (o->vri) {
		if (!(info = calloc(1, sizeof *info))) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		if ((rc = vri_read(&d, info)) < 0)
			goto out;
	}
	for (i = 0; i < s.n; i++) {
		ps_dss_item *it = &s.v[i];
		uint8_t *copy;
		ps_obj *stm;
		if (it->dup_of >= 0 || it->num)
			continue;
		if (!(it->num = ps_update_alloc(&d.up))) {
			rc = ctx->errcode;
			goto out;
		}
		copy = malloc(it->len);
		if (!copy || !(stm = ps_new_stream(ps_new_dict(), copy, it->len))) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		memcpy(copy, it->der, it->len);
		if ((rc = ps_update_put(&d.up, it->num, 0, stm)) < 0)
			goto out;
	}
	for (i = 0; i < s.n; i++) {
		if (s.v[i].dup_of < 0 && (rc = ensure_ref(&d, NULL, &s.v[i])) < 0)
			goto out;
	}
	if (o->vri && (rc = add_vri(&d, &s, info)) < 0)
		goto out;
	if (d.up.nobjs == 0) {
		/* nothing new (note 4): no update, no output */
		ps_result_unchanged(doc, res);
		goto out;
	}
	if (res) { /* before the commit: a durable hook or a deferred commit reads them */
		for (i = 0; i < d.up.nobjs; i++)
			if ((rc = ps_result_add_object(ctx, res, d.up.objs[i].num)) < 0)
				goto out;
		qsort(res->objects, (size_t)res->nobjects, sizeof *res->objects, cmp_u32);
	}
	if ((rc = ps_update_commit(&d.up, w, res)) < 0)
		goto out;
out:
	if (info)
		free(info->sigs); /* ps_policy_signatures' list */
	free(info);
	ps_update_free(&d.up);
	ps_dss_items_free(&s);
	return rc;
}
