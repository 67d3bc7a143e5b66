/* SPDX-License-Identifier: Apache-2.0 */
/* der.h - internal: the DER readers that dss.c, sigcms.c, tsp.c and
 * revoc.c share, over mbedTLS's ASN.1 reader (which refuses a length past
 * END and indefinite lengths).  Included only by the modules that use
 * mbedTLS (ps.h never includes it: layout.sh). */
#ifndef PS_DER_H
#define PS_DER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <mbedtls/asn1.h>

#define PS_DER_SEQ (MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)
#define PS_DER_CTX_C(n) (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | (n))

/* One DER tag TAG and its length at *P; the value starts at *P on return. */
static inline int ps_der_tag(const uint8_t **p, const uint8_t *end, int tag, size_t *len)
{
	unsigned char *q = (unsigned char *)*p;
	int rc = mbedtls_asn1_get_tag(&q, end, len, tag);

	*p = q;
	return rc;
}

/* Any one TLV at *P, *P past it; its tag in *TAG (may be NULL). */
static inline int ps_der_skip(const uint8_t **p, const uint8_t *end, int *tag)
{
	unsigned char *q = (unsigned char *)*p;
	size_t len;

	if (q >= end)
		return -1;
	if (tag)
		*tag = *q;
	q++;
	if (mbedtls_asn1_get_len(&q, end, &len) != 0)
		return -1;
	*p = q + len;
	return 0;
}

/* The extension OID (OLEN bytes of DER content) of a certificate whose
 * mbedTLS v3_ext buffer is EXT (RFC 5280 4.1: Extensions ::= SEQUENCE OF
 * SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET
 * STRING }): 0 with *V, *VLEN the extnValue's content and *CRITICAL (may
 * be NULL) its flag; -1 if absent or malformed. */
static inline int ps_der_cert_ext(const mbedtls_asn1_buf *ext, const char *oid, size_t olen,
                                  const uint8_t **v, size_t *vlen, int *critical)
{
	const uint8_t *p = ext->p, *end;
	size_t len;

	if (!p) /* no extensions (a v1 certificate) */
		return -1;
	end = p + ext->len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return -1;
	end = p + len;
	while (p < end) {
		const uint8_t *eend, *id;
		size_t idlen;
		int crit = 0;
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			return -1;
		eend = p + len;
		if (ps_der_tag(&p, eend, MBEDTLS_ASN1_OID, &idlen) != 0)
			return -1;
		id = p;
		p += idlen;
		if (p < eend && *p == MBEDTLS_ASN1_BOOLEAN) {
			if (ps_der_tag(&p, eend, MBEDTLS_ASN1_BOOLEAN, &len) != 0 || len != 1)
				return -1;
			crit = *p != 0;
			p += len;
		}
		if (ps_der_tag(&p, eend, MBEDTLS_ASN1_OCTET_STRING, &len) != 0)
			return -1;
		if (idlen == olen && memcmp(id, oid, olen) == 0) {
			*v = p;
			*vlen = len;
			if (critical)
				*critical = crit;
			return 0;
		}
		p = eend;
	}
	return -1;
}

#endif
