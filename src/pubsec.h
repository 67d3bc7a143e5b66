/* SPDX-License-Identifier: Apache-2.0 */
/* pubsec.h - internal: the public-key security handler's keys (pubsec.c;
 * conventions: ps.h): a recipient's envelope opened into the file key, and
 * new envelopes for a rewrite to certificates. */
#ifndef PS_PUBSEC_H
#define PS_PUBSEC_H

#include "ps.h"

#define PS_PUBSEC_SEED 20
/* The most /Recipients strings read or written (sec.c note 9). */
#define PS_PUBSEC_MAX_RECIPIENTS 4096

/* Who opened the file (pubsec.c notes 2-4). */
struct ps_pubsec_who {
	int64_t perms;        /* the recipient's permissions, as /P */
	int as;               /* 1, or 2 when every permission is granted */
	int index;            /* the /Recipients entry that opened, 0-based */
	char subject[160];    /* the certificate's subject */
};

/* Authenticates SEC (a public-key handler) with K: opens the envelope that
 * names K's certificate, derives the file key and gives it to SEC.  0 with
 * WHO filled, or PDFSTAMP_E_PASSWORD / FORMAT / UNSUPPORTED / USAGE
 * (pubsec.c note 3).  Nothing of SEC changes on failure. */
int ps_pubsec_auth(ps_ctx *ctx, ps_sec *sec, const struct pdfstamp_key *k,
                   struct ps_pubsec_who *who);
/* The RecipientInfos of all of SEC's envelopes, or a negative error. */
int ps_pubsec_count(ps_ctx *ctx, const ps_sec *sec);
/* A new AES-256 public-key handler to the N recipients R (note 5); a
 * recipient without set_permissions gets PERMS.  SEED receives the seed
 * (the caller wipes it). */
int ps_pubsec_new(ps_ctx *ctx, const struct pdfstamp_recipient *r, size_t n, int64_t perms,
                  int encrypt_metadata, uint8_t seed[PS_PUBSEC_SEED], ps_sec **out);
/* Authenticates SEC, read back from a file ps_pubsec_new's handler wrote,
 * with that handler's SEED (the rewrite's self-check): the key is derived
 * from SEC's own /Recipients strings; as the owner-equivalent (2). */
int ps_pubsec_auth_seed(ps_ctx *ctx, ps_sec *sec, const uint8_t seed[PS_PUBSEC_SEED]);

#endif
