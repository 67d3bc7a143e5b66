/* SPDX-License-Identifier: Apache-2.0 */
/* envelope.h - internal: the CMS EnvelopedData (RFC 5652 section 6) that
 * each /Recipients string of the public-key security handler holds (ISO
 * 32000-2 7.6.5.2), read and written (envelope.c; conventions: ps.h).
 * The enveloped content is the 20-byte seed and the recipient's 4
 * permission bytes (big-endian), sometimes more that is ignored. */
#ifndef PS_ENVELOPE_H
#define PS_ENVELOPE_H

#include "ps.h"
#include "rkey.h"

/* The most content bytes ps_env_open returns. */
#define PS_ENV_CONTENT_MAX 64

/* Opens one /Recipients string DER (N bytes) with K.  Returns 1 with the
 * decrypted content in CONTENT (*CLEN bytes, at most PS_ENV_CONTENT_MAX) when
 * a RecipientInfo names K's certificate (issuerAndSerialNumber, or
 * subjectKeyIdentifier) and K opens it; 0 when no RecipientInfo names it.
 * Errors: PDFSTAMP_E_FORMAT (not a ContentInfo of type envelopedData, or
 * damaged DER: the message says where), PDFSTAMP_E_UNSUPPORTED (a key
 * transport or content cipher not supported: named with its OID), and
 * PDFSTAMP_E_PASSWORD (a RecipientInfo names the certificate but the key
 * does not decrypt it, or the content's padding is wrong).  *NRI (may be
 * NULL) is set to the number of RecipientInfos whenever the structure
 * parsed that far, else 0.  CONTENT is wiped on every failure. */
int ps_env_open(ps_ctx *ctx, const ps_rkey *k, const uint8_t *der, size_t n,
                uint8_t content[PS_ENV_CONTENT_MAX], size_t *clen, int *nri);

/* The number of RecipientInfos of DER, or a negative PDFSTAMP_E_FORMAT. */
int ps_env_count(ps_ctx *ctx, const uint8_t *der, size_t n);

/* Makes one EnvelopedData (DER, appended to OUT): CONTENT (N bytes) under
 * a fresh AES-256-CBC key and IV from the OS, that key transported to each
 * of the NCERTS certificates with RSA PKCS#1 v1.5 (one
 * KeyTransRecipientInfo each, version 0, issuerAndSerialNumber).  The
 * content key is wiped. */
int ps_env_make(ps_ctx *ctx, const ps_rcert *const *certs, size_t ncerts,
                const uint8_t *content, size_t n, ps_buf *out);

#endif
