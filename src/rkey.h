/* SPDX-License-Identifier: Apache-2.0 */
/* rkey.h - internal: a recipient's key material for the public-key
 * security handler (rkey.c; conventions: ps.h): a private key (PEM or DER,
 * PKCS#8 encrypted or not, PKCS#1 RSA) with its certificate, or both from
 * a PKCS#12 file; and recipients' certificates for writing.  Includes
 * mbedTLS: only the modules that use mbedTLS include it. */
#ifndef PS_RKEY_H
#define PS_RKEY_H

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"

typedef struct ps_rkey ps_rkey;

/* Parses K (pdfstamp.h) into a key and its certificate and checks that
 * they belong together.  PDFSTAMP_E_PASSWORD: the key's (or PKCS#12
 * file's) password is wrong, or the key does not match the certificate;
 * PDFSTAMP_E_USAGE: missing or unparsable key material (named: "the
 * private key", "the certificate", "the PKCS#12 file"); PDFSTAMP_E_UNSUPPORTED:
 * a key that is not RSA.  Every copy of the key bytes is wiped. */
int ps_rkey_load(ps_ctx *ctx, const struct pdfstamp_key *k, ps_rkey **out);
void ps_rkey_free(ps_rkey *k);
const mbedtls_pk_context *ps_rkey_pk(const ps_rkey *k);
const mbedtls_x509_crt *ps_rkey_cert(const ps_rkey *k);
/* The certificate's subject as mbedTLS prints it ("CN=..., O=..."). */
const char *ps_rkey_subject(const ps_rkey *k);

/* A recipient's certificate, for writing (ps_env_make). */
typedef struct ps_rcert ps_rcert;
/* PEM or DER; PDFSTAMP_E_USAGE if it does not parse, PDFSTAMP_E_UNSUPPORTED
 * if its key is not RSA. */
int ps_rcert_load(ps_ctx *ctx, const uint8_t *der, size_t n, ps_rcert **out);
void ps_rcert_free(ps_rcert *c);
const mbedtls_x509_crt *ps_rcert_crt(const ps_rcert *c);

#endif
