/* SPDX-License-Identifier: Apache-2.0 */
/* revoc.h - internal: revocation data fetched for the certificates of a
 * signature's CMS (revoc.c; conventions: ps.h, design notes atop revoc.c),
 * for pdfstamp_dss's --fetch. */
#ifndef PS_REVOC_H
#define PS_REVOC_H

#include "ps.h"

/* One DER item found or fetched: PDFSTAMP_DSS_CERT, _OCSP or _CRL. */
struct ps_revoc_item {
	int kind;
	uint8_t *der;                 /* owned */
	size_t len;
};

typedef struct ps_revoc ps_revoc;

/* A session for one command: OPTS' fetch settings (timeout, cache,
 * offline, callback) are read, not kept beyond the session's life.  0 or
 * NOMEM. */
int ps_revoc_new(ps_ctx *ctx, const struct pdfstamp_dss_opts *opts, ps_revoc **out);
void ps_revoc_free(ps_revoc *r);

/* For the signature whose /Contents is CONTENTS[0..N) (a CMS SignedData,
 * zero padding after it allowed): its certificates, the missing issuers
 * fetched through caIssuers, and an OCSP response or a CRL for each
 * certificate that has an issuer, all checked (revoc.c notes 2-5), are
 * appended to *ITEMS (*NITEMS entries; the caller frees each der and the
 * array).  Certificates already handled in this session are not asked
 * for again.  0; PDFSTAMP_E_FORMAT for a CMS that does not parse, a
 * reply that is not what was asked, or a revoked certificate (the message
 * says which and since when); PDFSTAMP_E_IO for the network. */
int ps_revoc_collect(ps_revoc *r, const uint8_t *contents, size_t n,
                     struct ps_revoc_item **items, size_t *nitems);

/* ---- for the tests and the fuzz target ---- */

/* Note 3's checks of the OCSP reply REPLY[0..N) for the DER certificate
 * CERT issued by the DER certificate ISS, as if asked with NONCE (16
 * bytes, or NULL: none sent): 0 good, 1 revoked, PDFSTAMP_E_FORMAT (with
 * the reason) if refused or if CERT or ISS does not parse. */
int ps_revoc_ocsp_check(ps_ctx *ctx, const uint8_t *reply, size_t n, const uint8_t *cert,
                        size_t certlen, const uint8_t *iss, size_t isslen,
                        const uint8_t *nonce);

#endif
