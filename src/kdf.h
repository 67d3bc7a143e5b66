/* SPDX-License-Identifier: Apache-2.0 */
/* kdf.h - internal: password preparation and key derivation of the
 * standard security handler, ISO 32000-2 7.6.4 (conventions: ps.h).
 * Pure functions of the handler parameters; no AES engine, no document. */
#ifndef PS_KDF_H
#define PS_KDF_H

#include "ps.h"

/* The standard security handler's parameters, as in /Encrypt (Table 21). */
typedef struct ps_secparams {
	int v, r;
	int64_t p;                  /* /P as signed 32-bit */
	int encrypt_metadata;       /* /EncryptMetadata, default true */
	uint8_t o[48], u[48];       /* zero-padded if shorter in the file */
	uint8_t oe[32], ue[32];
	uint8_t perms[16];
	/* R2-R4 (ISO 32000-1 7.6.3): /O and /U are the first 32 bytes of o
	 * and u; LENGTH is the file key in bytes (5 to 16); ID0 the trailer's
	 * first /ID element (Algorithm 2 step d). */
	int length;
	uint8_t id0[128];
	size_t id0len;
} ps_secparams;

/* Algorithm 2.A: tries PASSWORD as owner then as user.  The password is
 * UTF-8; it is SASLprep'd ("query" profile) and truncated to 127 bytes,
 * and if that fails to match the raw bytes are tried.  Each role is first
 * tried by its key hash alone, confirmed by /Perms (Algorithm 13), and
 * only then by Algorithm 2.A's validation hashes (kdf.c design note 2:
 * one Algorithm 2.B hash for the owner password, two for the user's; every
 * hash counted in ctx->kdf_hashes).  On success KEY holds the 32-byte file
 * key, *is_owner is set, and *perms_ok tells whether /Perms decrypted and
 * matched P and EncryptMetadata (Algorithm 13).  Returns
 * PDFSTAMP_E_PASSWORD if nothing matches. */
int ps_kdf_authenticate(ps_ctx *ctx, const ps_secparams *sp,
                        const char *password, size_t len,
                        uint8_t key[32], int *is_owner, int *perms_ok);

/* Algorithm 13 (ISO 32000-2 7.6.4.4.12): decrypts /Perms with the file
 * KEY.  *state is PS_PERMS_OK when it holds "adb" and agrees with /P and
 * /EncryptMetadata, PS_PERMS_MISMATCH when it holds "adb" but disagrees
 * (*p is then the P it records, the genuine one: /P is not authenticated,
 * /Perms is), PS_PERMS_GARBLED when it is no permissions block at all
 * (*p is 0). */
#define PS_PERMS_GARBLED 0
#define PS_PERMS_MISMATCH 1
#define PS_PERMS_OK 2
/* R6 /P granting no optional permission (Table 22: bits 7-8, 10 and 13-32
 * set, the rest clear); what "--permissions none" gives. */
#define PS_P_NONE ((int64_t)(int32_t)0xFFFFF2C0u)
int ps_kdf_read_perms(ps_ctx *ctx, const ps_secparams *sp, const uint8_t key[32],
                      int64_t *p, int *state);

/* Algorithms 8, 9, 10: fills sp->u, ue, o, oe, perms for R6 from the new
 * passwords (UTF-8, SASLprep'd with the "stored" profile) and the file key.
 * sp->p and sp->encrypt_metadata must be set; v and r are set to 5 and 6. */
int ps_kdf_make(ps_ctx *ctx, ps_secparams *sp,
                const char *user_pw, size_t ulen,
                const char *owner_pw, size_t olen, const uint8_t key[32]);

/* ---- legacy handlers, R2-R4 (ISO 32000-1 7.6.3.3-7.6.3.4) ----------------- */

/* RC4 (in may equal out).  mbedTLS ARC4 where the build has it. */
void ps_kdf_rc4(const uint8_t *key, size_t klen, const uint8_t *in, uint8_t *out, size_t n);
/* Algorithm 1: the key of object NUM GEN from the file key FKEY (N bytes),
 * with "sAlT" for AESV2 (AES nonzero); returns its length, min(N + 5, 16). */
size_t ps_kdf_object_key(const uint8_t *fkey, size_t n, uint32_t num, uint16_t gen, int aes,
                         uint8_t out[16]);
/* Algorithms 6 and 7 (owner first): PASSWORD (UTF-8, tried as
 * PDFDocEncoding, then as raw bytes) against /U and /O of SP (r 2-4).  On
 * success KEY holds the sp->length-byte file key (Algorithm 2) and
 * *is_owner is set; PDFSTAMP_E_PASSWORD if nothing matches. */
int ps_kdf_legacy_authenticate(ps_ctx *ctx, const ps_secparams *sp, const char *password,
                               size_t len, uint8_t key[16], int *is_owner);

/* ---- for the tests and benchmarks (no other library file calls these) ---- */

/* Algorithm 2.B (R6) or the single SHA-256 of R5: hash of PW (already
 * prepared and truncated), the 8-byte SALT and, for owner operations, the
 * 48-byte U (else NULL).  OUT receives 32 bytes. */
int ps_kdf_hash_r6(ps_ctx *ctx, int r, const uint8_t *pw, size_t pwlen,
                   const uint8_t salt[8], const uint8_t *u48, uint8_t out[32]);
/* Password preparation (7.6.4.3.3 a-b): SASLprep then UTF-8 then truncate to
 * 127 bytes.  STORED selects the stricter profile for new passwords.
 * OUT must hold 128 bytes (wipe it after use). */
int ps_kdf_prepare_password(ps_ctx *ctx, const char *pw, size_t len, int stored,
                            uint8_t out[128], size_t *outlen);
/* MD5 of N bytes. */
void ps_kdf_md5(const uint8_t *in, size_t n, uint8_t out[16]);
/* Algorithms 3, 4, 5: fills sp->o and sp->u (32 bytes each) from the
 * passwords (bytes as given, padded) for sp->r, length, p, id0 and
 * encrypt_metadata (legacy files, which pdfstamp itself never writes). */
int ps_kdf_legacy_make(ps_ctx *ctx, ps_secparams *sp, const char *user_pw, size_t ulen,
                       const char *owner_pw, size_t olen);

#endif
