/* SPDX-License-Identifier: Apache-2.0 */
/* sec.h - internal: the security handler (conventions: ps.h; design notes
 * atop sec.c).  The only door to the AES engine: no other module sees a
 * key, a key schedule or an aesmb.h type. */
#ifndef PS_SEC_H
#define PS_SEC_H

#include "ps.h"
#include "kdf.h"

/* A document's (or a new file's) security handler: the /Encrypt
 * parameters, the per-object rules, and after authentication the cipher
 * state.  Opaque; NULL stands for "not encrypted" wherever a handler is
 * taken. */
typedef struct ps_sec ps_sec;

/* ---- life cycle ------------------------------------------------------------ */

/* Parses the already-resolved /Encrypt dictionary ENCDICT (ENC_NUM its
 * object number, 0 if direct; ID0 the trailer's first /ID element, which
 * the R2-R4 key derivation needs).  Handlers other than the standard one
 * (/V 1 /R 2, /V 2 /R 3, /V 4 /R 4 with V2/AESV2 filters, /V 5 /R 5 or 6
 * with AESV3) are refused: UNSUPPORTED; malformed entries: FORMAT.  The
 * handler is parsed, not authenticated. */
int ps_sec_new(ps_ctx *ctx, const ps_obj *encdict, uint32_t enc_num, const uint8_t *id0,
               size_t id0len, ps_sec **out);
/* A new AES-256 R6 handler for a new file: a random file key from the OS,
 * /U /UE /O /OE /Perms from the passwords (Algorithms 8, 9, 10), P and
 * EncryptMetadata as given.  Authenticated as owner. */
int ps_sec_new_r6(ps_ctx *ctx, const char *user_pw, size_t ulen, const char *owner_pw, size_t olen,
                  int64_t p, int encrypt_metadata, ps_sec **out);
/* A handler with SRC's parameters and state that borrows SRC's key
 * schedules (SRC must be authenticated and outlive it): how a writer reads
 * back its output without the file key.  While SRC lends its schedules,
 * authenticating it again is refused (PDFSTAMP_E_USAGE). */
int ps_sec_share(ps_ctx *ctx, ps_sec *src, ps_sec **out);
/* Wipes and frees; NULL is fine. */
void ps_sec_free(ps_sec *s);

/* ---- authentication ---------------------------------------------------------- */

/* Algorithm 2.A, then Algorithm 13 (/Perms) with PDFSTAMP_AUTH_FORCE
 * handling as pdfstamp_doc_auth documents.  On success the cipher state
 * is built, *as is 1 (user) or 2 (owner) and *perms the effective
 * permissions; on failure the handler is unchanged. */
int ps_sec_auth(ps_ctx *ctx, ps_sec *s, const char *pw, size_t len, unsigned flags, int64_t *perms,
                int *as);
/* Does PW open S, and as whom (*as 1 user, 2 owner)?  Changes nothing. */
/* The public-key handler (sec.c note 9; the envelopes are pubsec.c's).
 * The handler's name, "Standard" or "Adobe.PubSec" (NULL for NULL). */
const char *ps_sec_handler(const ps_sec *s);
/* The /Recipients strings (an array) whose bytes make the file key; NULL
 * for the standard handler. */
const ps_obj *ps_sec_recipients(const ps_sec *s);
/* Authenticates a public-key handler with its file key KEY (N bytes: the
 * handler's key length), as AS (1 user, 2 owner-equivalent). */
int ps_sec_auth_pubsec(ps_ctx *ctx, ps_sec *s, const uint8_t *key, size_t n, int as);
/* A new AES-256 public-key handler (adbe.pkcs7.s5, AESV3) for a rewrite:
 * file key KEY, the /Recipients strings RECIPS (an array; taken, also on
 * failure). */
int ps_sec_new_pubsec(ps_ctx *ctx, const uint8_t key[32], ps_obj *recips, int encrypt_metadata,
                      ps_sec **out);
int ps_sec_check_password(ps_ctx *ctx, const ps_sec *s, const char *pw, size_t len, int *as);

/* ---- what the handler says --------------------------------------------------- */

/* The effective /EncryptMetadata (a forced authentication with /Perms in
 * doubt takes true); 1 for NULL. */
int ps_sec_encrypt_metadata(const ps_sec *s);
/* Did /Perms agree with /P and /EncryptMetadata (Algorithm 13)? */
int ps_sec_perms_ok(const ps_sec *s);
/* Which of /StrF (PS_SEC_STRF) and /StmF (PS_SEC_STMF) are Identity. */
#define PS_SEC_STRF 1u
#define PS_SEC_STMF 2u
unsigned ps_sec_identity(const ps_sec *s);
/* Fills the encryption fields of INFO: filter, v, r, key_bits, strf, stmf,
 * cfm, encrypt_metadata, perms_valid. */
int ps_sec_describe(ps_ctx *ctx, const ps_sec *s, struct pdfstamp_info *info);
/* Is S weak (RC4, or a key under 128 bits)?  WHY (N bytes) receives e.g.
 * "RC4 40-bit", or "" when strong; 0 for NULL and AES-256. */
int ps_sec_weak(const ps_sec *s, char *why, size_t n);
/* Would a new version of an object, written under its old number and
 * generation, be encrypted with the same key stream as the old one?  (RC4:
 * Algorithm 1's per-object key has no IV, so old XOR new ciphertext gives
 * old XOR new plaintext.)  Writers then give changed content a new number. */
int ps_sec_same_keystream(const ps_sec *s);
/* Can ps_sec_reencrypt_prepare turn FROM's stream data into TO's in place
 * (same ciphertext length: AESV2 or AESV3 streams to AESV3)? */
int ps_sec_reencrypt_in_place(const ps_sec *from, const ps_sec *to, const ps_obj *stm);
/* A rewrite's output handler defines only its own crypt filter: removes
 * STM's own /Crypt filter (7.4.10; first of /Filter, or wherever it is) with
 * its /DecodeParms entry when it names one other than Identity, so that
 * the stream follows the new handler's /StmF.  Always 0. */
int ps_sec_drop_crypt_filter(ps_ctx *ctx, ps_obj *stm);
/* The /Encrypt dictionary of S (owned by the caller): the one place that
 * writes one. */
int ps_sec_write_dict(ps_ctx *ctx, const ps_sec *s, ps_obj **out);

/* ---- which bytes are encrypted (ISO 32000-2 7.6.2) --------------------------- */

/* Is the data of stream STM encrypted under S?  0 for NULL; StmF Identity,
 * /Crypt filters and metadata with EncryptMetadata false (Table 20, Table
 * 21, 7.6.6).  The chain's own xref streams are exempt too (7.5.8.2), but
 * that is decided by object number (ps_doc_is_xref_stream), never by /Type:
 * callers do not ask about them. */
int ps_sec_stream_encrypted(const ps_sec *s, const ps_obj *stm);
/* A dictionary whose /Contents is a signature value (never encrypted,
 * 7.6.2, 12.8.1): /ByteRange, a string /Contents, /Type Sig, DocTimeStamp
 * or none. */
int ps_sec_is_signature_dict(const ps_obj *d);

/* ---- the one walker and stream data -------------------------------------------- */

/* Converts every string of object NUM GEN (O, in place) from FROM to TO:
 * FROM NULL means the strings are plaintext, TO NULL leaves them
 * plaintext; each side applies its own rules (ps_sec_strings_encrypted)
 * and signature /Contents are left alone.  Encrypted strings are written
 * as hex.  COUNT (may be NULL) is increased by the strings changed.  A
 * pure decryption (TO NULL) reports a bad string as "cannot decrypt a
 * string in object NUM". */
int ps_sec_convert_strings(ps_ctx *ctx, const ps_sec *from, const ps_sec *to, uint32_t num,
                           uint16_t gen, ps_obj *o, int64_t *count);
/* Decrypts (appends the plaintext of) IN, the data of stream STM, object
 * NUM GEN, to OUT; FORMAT for data that is no ciphertext.  IN must not
 * point into OUT.  STM may name its own crypt filter (/Filter /Crypt with
 * /DecodeParms /Name, 7.4.10); ps_sec_encrypt (and ps_sec_decrypt, below)
 * use /StmF's. */
int ps_sec_decrypt_stream(ps_ctx *ctx, const ps_sec *s, const ps_obj *stm, uint32_t num,
                          uint16_t gen, const uint8_t *in, size_t n, ps_buf *out);
/* Encrypts IN, the data of object NUM GEN, appending the ciphertext to OUT. */
int ps_sec_encrypt(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen, const uint8_t *in,
                   size_t n, ps_buf *out);

/* ---- batches: many objects through the multi-lane engine ------------------------ */

/* One object's data laid out for encryption in place: LEN bytes (whole
 * blocks) at BUF, chained from IV.  Filled by the prepare calls, consumed
 * by ps_sec_run_batch; it points into plaintext until then. */
typedef struct ps_sec_job {
	uint8_t *buf;
	size_t len;
	uint8_t iv[16];
} ps_sec_job;

/* Size of the ciphertext of N plaintext bytes under S. */
size_t ps_sec_encrypted_len(const ps_sec *s, size_t n);
/* Lays out IN (object NUM GEN) at OUT (ps_sec_encrypted_len(s, n) bytes;
 * the two may overlap) as the ciphertext-to-be and fills JOB: running the
 * job on S completes the ciphertext. */
int ps_sec_encrypt_prepare(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen,
                           const uint8_t *in, size_t n, uint8_t *out, ps_sec_job *job);
/* Re-encryption without copies: BUF holds N bytes of ciphertext under
 * FROM; decrypts it in place and fills JOB so that running it on TO
 * completes the ciphertext under TO (same length).  The plaintext exists
 * only in BUF, between this call and the batch. */
int ps_sec_reencrypt_prepare(ps_ctx *ctx, const ps_sec *from, const ps_sec *to, uint32_t num,
                             uint16_t gen, uint8_t *buf, size_t n, ps_sec_job *job);
/* Runs N prepared jobs on S's engine (8 or 16 chains at a time). */
int ps_sec_run_batch(ps_ctx *ctx, const ps_sec *s, ps_sec_job *jobs, size_t n);

/* ---- for the tests and the fuzz targets (no other library file calls these) ---- */

/* Authenticates with a file key the caller already derived from
 * ps_sec_params (the fuzz targets' memoised Algorithm 2.A); KEY is not
 * kept. */
int ps_sec_auth_key(ps_ctx *ctx, ps_sec *s, const uint8_t key[32], int as, int perms_ok);
const struct ps_secparams *ps_sec_params(const ps_sec *s);
/* Are the strings of object NUM encrypted under S?  0 for NULL, StrF
 * Identity, or NUM the /Encrypt object itself. */
int ps_sec_strings_encrypted(const ps_sec *s, uint32_t num);
/* Decrypts (appends the plaintext of) IN, the data of object NUM GEN, to
 * OUT; FORMAT for data that is no ciphertext.  IN must not point into OUT. */
int ps_sec_decrypt(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen, const uint8_t *in,
                   size_t n, ps_buf *out);

#endif
