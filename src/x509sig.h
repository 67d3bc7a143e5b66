/* SPDX-License-Identifier: Apache-2.0 */
/* x509sig.h - internal: X.509 signatures checked (x509sig.c; its design
 * notes), for the revocation data of `dss --fetch` (ocsp.c, revoc.c). */
#ifndef PS_X509SIG_H
#define PS_X509SIG_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/pk.h>
#include <mbedtls/x509.h>
#include <mbedtls/x509_crt.h>

/* Whether KEY verifies SIG over TBS made with MD and PK (OPTS: the
 * RSASSA-PSS options, else NULL).  1 or 0. */
int ps_x509sig_verify(mbedtls_pk_context *key, mbedtls_md_type_t md, mbedtls_pk_type_t pk,
                      const void *opts, const uint8_t *tbs, size_t tbslen, const uint8_t *sig,
                      size_t siglen);

/* Note 2: NULL if the RSASSA-PSS parameters OPTS go with the hash MD, else
 * why not (a message fragment). */
const char *ps_x509sig_pss_why(mbedtls_md_type_t md, const mbedtls_pk_rsassa_pss_options *opts);

/* Note 2: the algorithm of an AlgorithmIdentifier's OID and PARAMS: *MD,
 * *PK and, for RSASSA-PSS, *PSS.  NULL, or why it is refused. */
const char *ps_x509sig_alg(const mbedtls_x509_buf *oid, const mbedtls_x509_buf *params,
                           mbedtls_md_type_t *md, mbedtls_pk_type_t *pk,
                           mbedtls_pk_rsassa_pss_options *pss);

/* Note 1: whether ISSUER signed C (by Name and signature).  1 or 0. */
int ps_x509sig_signed_by(const mbedtls_x509_crt *c, mbedtls_x509_crt *issuer);

#endif
