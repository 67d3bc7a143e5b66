/* SPDX-License-Identifier: Apache-2.0 */
/* rc2.h - internal: the RC2 block cipher (RFC 2268), for the envelopes of
 * the public-key security handler that PDFBox 2 and iText 5 write with
 * RC2-CBC (envelope.c; rc2.c's design notes say why it is here). */
#ifndef PS_RC2_H
#define PS_RC2_H

#include <stddef.h>
#include <stdint.h>

typedef struct ps_rc2 {
	uint16_t k[64];     /* the expanded key (RFC 2268 2): key material, wiped by
	                     * ps_rc2_wipe */
} ps_rc2;

/* Expands KEY (LEN bytes, 1..128) with BITS effective key bits (1..1024).
 * 0, or -1 for a length out of range (C untouched). */
int ps_rc2_setkey(ps_rc2 *c, const uint8_t *key, size_t len, unsigned bits);
void ps_rc2_decrypt(const ps_rc2 *c, const uint8_t in[8], uint8_t out[8]);
/* The effective key bits that an RC2CBCParameter's rc2ParameterVersion
 * stands for (RFC 8018 B.2.3: 160 -> 40, 120 -> 64, 58 -> 128, any V of
 * 256 or more -> V bits); 0 for a version that names none. */
unsigned ps_rc2_version_bits(long version);
void ps_rc2_wipe(ps_rc2 *c);

/* ---- for the tests (RFC 2268's vectors are encryptions) ---- */
void ps_rc2_encrypt(const ps_rc2 *c, const uint8_t in[8], uint8_t out[8]);

#endif
