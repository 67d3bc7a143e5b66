/* SPDX-License-Identifier: Apache-2.0 */
/* dss.h - internal: the Document Security Store's inputs (dss.c; conventions:
 * ps.h, design notes atop dss.c), for pdfstamp_dss and the unit suite. */
#ifndef PS_DSS_H
#define PS_DSS_H

#include "ps.h"

/* One SingleResponse's CertID of an OCSP response (RFC 6960 4.1.1), into
 * the item's DER. */
typedef struct ps_dss_certid {
	int md;                       /* mbedtls_md_type_t of hashAlgorithm, 0 if unknown */
	const uint8_t *name_hash;     /* issuerNameHash */
	size_t name_hash_len;
	const uint8_t *serial;        /* serialNumber: the INTEGER's content bytes */
	size_t serial_len;
} ps_dss_certid;

/* One DER item: a certificate, an OCSP response or a CRL (dss.c note 1). */
typedef struct ps_dss_item {
	int kind;                     /* PDFSTAMP_DSS_CERT, _OCSP, _CRL */
	uint8_t *der;                 /* owned */
	size_t len;
	/* offsets into der: issuer Name (certificate, CRL), subject Name and
	 * serialNumber content (certificate); whole TLVs for the Names */
	size_t iss_off, iss_len, sub_off, sub_len, ser_off, ser_len;
	ps_dss_certid *ids;           /* OCSP: its CertIDs (owned), nids entries */
	size_t nids;
	long dup_of;                  /* index of an earlier item with the same bytes, else -1 */
	uint32_t num;                 /* the stream that holds it (new or
	                               * existing), 0 until known */
	uint16_t gen;
	int belongs;                  /* ps_dss_belongs' answer for the last signature */
} ps_dss_item;

typedef struct ps_dss_items {
	ps_dss_item *v;
	size_t n;
} ps_dss_items;

/* ---- for the tests and the fuzz target (pdfstamp_dss's steps, dss.c's own) ---- */

/* Splits and checks the inputs of O into *S (dss.c notes 1-3); on failure
 * *S is empty.  0, PDFSTAMP_E_FORMAT naming the input, or _USAGE. */
int ps_dss_load(ps_ctx *ctx, const struct pdfstamp_dss_opts *o, ps_dss_items *s);
void ps_dss_items_free(ps_dss_items *s);
/* The /VRI key of a signature whose /Contents string is CONTENTS[0..N):
 * the uppercase hexadecimal SHA-1, NUL-terminated.  0 or -1. */
int ps_dss_vri_key(const uint8_t *contents, size_t n, char key[41]);
/* Sets each item's `belongs` for the signature whose /Contents is
 * CONTENTS[0..N) (dss.c note 5). */
void ps_dss_belongs(ps_dss_items *s, const uint8_t *contents, size_t n);

#endif
