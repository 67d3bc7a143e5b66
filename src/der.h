/* SPDX-License-Identifier: Apache-2.0 */
/* der.h - internal: the two DER readers that dss.c and sigcms.c share,
 * over mbedTLS's ASN.1 reader (which refuses a length past END and
 * indefinite lengths).  Included only by the modules that use mbedTLS
 * (ps.h never includes it: layout.sh). */
#ifndef PS_DER_H
#define PS_DER_H

#include <stddef.h>
#include <stdint.h>

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

#endif
