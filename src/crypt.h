/* crypt.h - internal: the standard security handler (conventions: ps.h). */
#ifndef PS_CRYPT_H
#define PS_CRYPT_H

#include "ps.h"
#include "aesmb.h"

/* ---- crypt.c: standard security handler (ISO 32000-2 7.6.4) --------------- */

typedef struct ps_secparams {
	int v, r;
	int64_t p;                  /* /P as signed 32-bit */
	int encrypt_metadata;       /* /EncryptMetadata, default true */
	uint8_t o[48], u[48];       /* zero-padded if shorter in the file */
	uint8_t oe[32], ue[32];
	uint8_t perms[16];
} ps_secparams;

/* Algorithm 2.B (R6) or the single SHA-256 of R5: hash of PW (already
 * prepared and truncated), the 8-byte SALT and, for owner operations, the
 * 48-byte U (else NULL).  OUT receives 32 bytes. */
int ps_hash_r6(ps_ctx *ctx, int r, const uint8_t *pw, size_t pwlen,
               const uint8_t salt[8], const uint8_t *u48, uint8_t out[32]);

/* Algorithm 2.A: tries PASSWORD as owner then as user.  The password is
 * UTF-8; it is SASLprep'd ("query" profile) and truncated to 127 bytes,
 * and if that fails to match the raw bytes are tried.  On success KEY holds
 * the 32-byte file key, *is_owner is set, and *perms_ok tells whether
 * /Perms decrypted and matched P and EncryptMetadata (Algorithm 13).
 * Returns PDFSTAMP_E_PASSWORD if nothing matches. */
int ps_sec_authenticate(ps_ctx *ctx, const ps_secparams *sp,
                        const char *password, size_t len,
                        uint8_t key[32], int *is_owner, int *perms_ok);

/* Algorithm 13 (ISO 32000-2 7.6.4.4.12, spec-facts 1.6): decrypts /Perms
 * with the file KEY.  *state is PS_PERMS_OK when it
 * holds "adb" and agrees with /P and /EncryptMetadata, PS_PERMS_MISMATCH
 * when it holds "adb" but disagrees (*p is then the P it records, the
 * genuine one: /P is not authenticated, /Perms is), PS_PERMS_GARBLED when
 * it is no permissions block at all (*p is 0). */
#define PS_PERMS_GARBLED 0
#define PS_PERMS_MISMATCH 1
#define PS_PERMS_OK 2
/* R6 /P granting no optional permission (Table 22: bits 7-8, 10 and 13-32
 * set, the rest clear); what "--permissions none" gives. */
#define PS_P_NONE ((int64_t)(int32_t)0xFFFFF2C0u)
int ps_sec_read_perms(ps_ctx *ctx, const ps_secparams *sp, const uint8_t key[32],
                      int64_t *p, int *state);

/* Algorithms 8, 9, 10: fills sp->u, ue, o, oe, perms for R6 from the new
 * passwords (UTF-8, SASLprep'd with the "stored" profile) and the file key.
 * sp->p and sp->encrypt_metadata must be set; v and r are set to 5 and 6. */
int ps_sec_make(ps_ctx *ctx, ps_secparams *sp,
                const char *user_pw, size_t ulen,
                const char *owner_pw, size_t olen, const uint8_t key[32]);

/* Password preparation (7.6.4.3.3 a-b): SASLprep then UTF-8 then truncate to
 * 127 bytes.  STORED selects the stricter profile for new passwords.
 * OUT must hold 128 bytes (wipe it after use). */
int ps_sec_prepare_password(ps_ctx *ctx, const char *pw, size_t len, int stored,
                            uint8_t out[128], size_t *outlen);

/* AESV3 cipher state: the key schedules are built once per document, for
 * the fastest AES engine this CPU has (aesmb.c: VAES, AES-NI or mbedTLS).
 * Read-only after init, so worker threads share it; never copy it by
 * value.  A cipher may instead borrow another's schedules (ps_cipher_borrow):
 * then the raw key need not be kept anywhere to give a second document
 * (the writer's self-check) the same key. */
typedef struct ps_cipher {
	ps_aes_engine eng;
	int ready;
	const struct ps_cipher *lent;   /* borrowed: use lent->eng; never freed here */
} ps_cipher;

int ps_cipher_init(ps_ctx *ctx, ps_cipher *c, const uint8_t key[32]);
/* Makes C use SRC's schedules (SRC must be ready and outlive C). */
int ps_cipher_borrow(ps_ctx *ctx, ps_cipher *c, const ps_cipher *src);
void ps_cipher_free(ps_cipher *c);     /* wipes (a borrower only lets go); accepts a zeroed struct */
/* The engine a cipher encrypts with: its own or the one it borrows. */
static inline const ps_aes_engine *ps_cipher_eng(const ps_cipher *c)
{
	return c->lent ? &c->lent->eng : &c->eng;
}

/* Decrypts IN (16-byte IV followed by CBC data) and appends the plaintext
 * to OUT.  Length not a multiple of 16, fewer than 32 bytes, or bad PKCS#7
 * padding: PDFSTAMP_E_FORMAT.  An empty input decrypts to empty. */
int ps_aesv3_decrypt(ps_ctx *ctx, ps_cipher *c, const uint8_t *in, size_t n, ps_buf *out);
/* Encrypts IN with a fresh IV from the context pool and PKCS#7 padding and
 * appends IV || ciphertext (16 + 16*(n/16 + 1) bytes) to OUT. */
int ps_aesv3_encrypt(ps_ctx *ctx, ps_cipher *c, const uint8_t *in, size_t n, ps_buf *out);
/* Size of the AESV3 form of N plaintext bytes: IV + data + PKCS#7 pad. */
#define PS_AESV3_LEN(n) (16 + ((n) & ~(size_t)15) + 16)
/* Lays out IN as AESV3 *plaintext* in OUT (IV from the pool, data, PKCS#7
 * pad: PS_AESV3_LEN(n) bytes at OUT) and fills JOB so that encrypting it in
 * place (ps_aes_cbc_encrypt_batch) completes the ciphertext.  For batching
 * many objects through the multi-lane engine. */
int ps_aesv3_prepare(ps_ctx *ctx, const uint8_t *in, size_t n, uint8_t *out, ps_aes_job *job);
/* Re-encryption without copies: BUF holds N bytes of AESV3 data under OLD;
 * decrypts it in place (padding checked), writes a fresh IV and fills JOB
 * so that encrypting it in place under the new key completes it.  The
 * plaintext exists only in BUF, between this call and the encryption. */
int ps_aesv3_reencrypt_prepare(ps_ctx *ctx, ps_cipher *old, uint8_t *buf, size_t n, ps_aes_job *job);

#endif
