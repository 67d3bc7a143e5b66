/* SPDX-License-Identifier: Apache-2.0 */
/* p12.h - internal: a PKCS#12 file (RFC 7292) read into the DER of its
 * private key (PKCS#8, unencrypted) and of the certificate that goes with
 * it (p12.c; conventions: ps.h).  rkey.c is the only caller. */
#ifndef PS_P12_H
#define PS_P12_H

#include "ps.h"

/* Parses P12 (N bytes, DER) with PASSWORD (PWLEN bytes, UTF-8; may be
 * NULL for none).  Appends the key's DER to KEY (a buffer marked secret:
 * wiped when freed) and the matching certificate's DER to CERT.
 * PDFSTAMP_E_PASSWORD: wrong password (MAC or decryption fails);
 * PDFSTAMP_E_USAGE: not a PKCS#12 file, or no key or no certificate in it;
 * PDFSTAMP_E_UNSUPPORTED: an encryption it cannot read (named). */
int ps_p12_parse(ps_ctx *ctx, const uint8_t *p12, size_t n, const char *password, size_t pwlen,
                 ps_buf *key, ps_buf *cert);

#endif
