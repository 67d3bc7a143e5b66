/* SPDX-License-Identifier: Apache-2.0 */
/* tsp.h - internal: the RFC 3161 Time-Stamp Protocol client, what is sent
 * and what is checked (tsp.c; conventions: ps.h).  No I/O: the caller
 * sends the request (http.c) and hands the reply back. */
#ifndef PS_TSP_H
#define PS_TSP_H

#include "ps.h"

#define PS_TSP_NONCE_LEN 16          /* bytes of the nonce (positive, first byte not 0) */
#define PS_TSP_MAX_REPLY (1u << 20)  /* the largest TimeStampResp accepted */

/* The hash of the messageImprint: 256, 384 or 512 (SHA-2 bits). */
struct ps_tsp_req {
	int bits;
	uint8_t hash[64];            /* bits / 8 bytes */
	uint8_t nonce[PS_TSP_NONCE_LEN];
};

/* Fills REQ's nonce from the context's generator and appends the DER
 * TimeStampReq (RFC 3161 2.4.1: version 1, messageImprint, nonce, certReq
 * TRUE, no policy, no extensions) to OUT. */
int ps_tsp_request(ps_ctx *ctx, struct ps_tsp_req *req, ps_buf *out);

struct ps_tsp_token {
	uint8_t *der;                /* the TimeStampToken (a CMS ContentInfo), owned */
	size_t len;
	char gen_time[32];           /* TSTInfo genTime as sent (GeneralizedTime text) */
	char tsa[256];               /* the signer certificate's subject (mbedTLS text) */
	char serial[96];             /* TSTInfo serialNumber, hexadecimal */
};

/* Checks the TimeStampResp REPLY[0..N) for REQ (tsp.c notes 2-4): status
 * granted or grantedWithMods, a token whose CMS parses and whose signature
 * verifies with the TSA certificate it carries, that certificate's
 * critical extended key usage id-kp-timeStamping, the ESS
 * signing-certificate attribute naming it, TSTInfo messageImprint
 * and nonce equal to REQ's; with CA_FILE (PEM or DER, or NULL) the
 * certificate's chain (through the token's certificates) to one of its
 * certificates.  0 with TOK filled; PDFSTAMP_E_FORMAT for anything else,
 * the message saying what (and the TSA's status text for a refusal). */
int ps_tsp_check(ps_ctx *ctx, const struct ps_tsp_req *req, const uint8_t *reply, size_t n,
                 const char *ca_file, struct ps_tsp_token *tok);
void ps_tsp_token_free(struct ps_tsp_token *tok);

/* ---- for the tests ---- */

/* Note 3's usage check of the DER certificate CERT[0..N) as a TSA's: its
 * extended key usage exactly id-kp-timeStamping, critical.  0, or
 * PDFSTAMP_E_FORMAT saying why (also for a certificate that does not
 * parse). */
int ps_tsp_check_tsa_usage(ps_ctx *ctx, const uint8_t *cert, size_t n);

#endif
