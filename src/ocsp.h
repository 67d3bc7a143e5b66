/* SPDX-License-Identifier: Apache-2.0 */
/* ocsp.h - internal: the OCSP request for a certificate and the checks of
 * its reply (ocsp.c; conventions: ps.h, design notes atop ocsp.c), for
 * revoc.c. */
#ifndef PS_OCSP_H
#define PS_OCSP_H

#include <mbedtls/x509_crt.h>

#include "ps.h"

/* Note 1: the DER CertID of C issued by ISS into ID.  0, or -1 (a key
 * that does not parse, out of memory). */
int ps_ocsp_certid(const mbedtls_x509_crt *c, const mbedtls_x509_crt *iss, ps_buf *id);

/* Note 1: the DER OCSPRequest for the CertID ID (with NONCE[16] if not
 * NULL) into REQ.  0, or -1 (out of memory). */
int ps_ocsp_request(const ps_buf *id, const uint8_t *nonce, ps_buf *req);

/* Notes 2, 3: checks the reply B about the certificate whose DER is ASKED
 * (or NULL), issued by ISS, asked with CertID ID and NONCE (or NULL).  0
 * good; 1 revoked (*WHEN its revocationTime, WHENLEN bytes at most); -1
 * not acceptable (*WHY set, a static message fragment).  When a delegated
 * responder signed it, *RDER and *RLEN are its certificate's DER inside B,
 * else NULL and 0. */
int ps_ocsp_check(const ps_buf *b, const ps_buf *id, const uint8_t *nonce,
                  const mbedtls_x509_buf *asked, mbedtls_x509_crt *iss, char *when,
                  size_t whenlen, const char **why, const uint8_t **rder, size_t *rlen);

#endif
