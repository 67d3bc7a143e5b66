/*
 * ps.h - internal declarations shared by the library's modules.
 *
 * DESIGN NOTES
 *
 * Modules and their prefixes:
 *   ctx.c     ps_ctx (= pdfstamp_ctx): error slot, warnings, DRBG, IV pool.
 *   buf.c     ps_buf: growable byte buffer with a sticky out-of-memory flag.
 *   obj.c     ps_obj: object model, parser (from memory) and serializer.
 *   crypt.c   standard security handler R5/R6 and AESV3 per-object crypto.
 *   xref.c    startxref, xref tables/streams/hybrid, /Prev chain, objstm.
 *   doc.c     pdfstamp_doc: open, authenticate, lazy lookup, info.
 *
 * Invariants:
 *  1. No globals.  Everything that lives longer than a call hangs off the
 *     context or the document.
 *  2. Every function that can fail returns 0 or a negative PDFSTAMP_E_*
 *     code and, when it fails, has already called ps_err() with a message.
 *     Helpers that cannot fail in any way but OOM (ps_buf) use a sticky flag
 *     checked once at the end instead.
 *  3. Key material (file key, intermediate keys, passwords, AES schedules)
 *     lives only in buffers that are wiped with ps_wipe() on every path.
 *  4. File offsets are int64_t; every number parsed from input is checked
 *     for overflow before use.
 */
#ifndef PS_H
#define PS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <mbedtls/aes.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>

#include "aesmb.h"

#include "pdfstamp.h"

typedef struct pdfstamp_ctx ps_ctx;
typedef struct pdfstamp_doc ps_doc;

/* Internal-only status: the parser reached the end of its buffer before the
 * object ended.  The caller reads a larger window and tries again; it is
 * never returned from a public call. */
#define PS_E_NEEDMORE (-100)

#if defined(__GNUC__)
#define PS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PS_PRINTF(a, b)
#endif

/* ---- ctx.c --------------------------------------------------------------- */

#define PS_IVPOOL_SIZE 1024 /* 64 IVs per DRBG request (MBEDTLS_CTR_DRBG_MAX_REQUEST) */

/* The IV pool has a page of its own, marked MADV_WIPEONFORK where the
 * kernel can (Linux 4.14): a child of fork() finds it zeroed, `live`
 * included, and refills it from a reseeded DRBG without a system call on
 * the IV path (ctx.c). */
typedef struct ps_ivpage {
	uint8_t pool[PS_IVPOOL_SIZE];
	uint32_t live;               /* PS_IVPAGE_LIVE while the pool is this process's */
} ps_ivpage;

struct pdfstamp_ctx {
	int errcode;
	char errmsg[256];
	pdfstamp_warn_fn warn;
	void *warn_ud;
	int drbg_ready;
	pid_t drbg_pid;              /* the process that last (re)seeded the DRBG */
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	ps_ivpage *iv;               /* NULL until the first IV */
	size_t iv_maplen;            /* mmap'ed length, 0 if malloc'ed */
	int iv_wipeonfork;           /* the page is MADV_WIPEONFORK; else getpid() per IV */
	size_t ivpos;                /* next unused byte of iv->pool */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* Fuzz builds only (configure --enable-fuzzing): Algorithm 2.B with
	 * scaled-down constants (see ps_hash_r6), so that fuzz_security reaches
	 * its parsing and branching logic thousands of times a second.  Files
	 * made with the real constants do not authenticate with it set. */
	int fuzz_light_kdf;
#endif
};

/* Records CODE and a printf-style message; returns CODE. */
int ps_err(ps_ctx *ctx, int code, const char *fmt, ...) PS_PRINTF(3, 4);
/* Records CODE and "<printf-style prefix>: <the current message>". */
int ps_err_wrap(ps_ctx *ctx, int code, const char *fmt, ...) PS_PRINTF(3, 4);
void ps_warn(ps_ctx *ctx, const char *fmt, ...) PS_PRINTF(2, 3);
void ps_wipe(void *p, size_t n);
/* Cryptographically strong random bytes from the context's CTR-DRBG,
 * seeded on first use and reseeded with fresh OS entropy (and the pid as
 * additional input) whenever it is used in a process other than the one
 * that seeded it (after fork()). */
int ps_random(ps_ctx *ctx, uint8_t *out, size_t n);
/* A fresh 16-byte IV drawn from a pool refilled in 1 KiB DRBG batches; a
 * pool inherited through fork() is dropped, never drawn from. */
int ps_random_iv(ps_ctx *ctx, uint8_t iv[16]);
/* Random bytes straight from the kernel (getrandom(2); /dev/urandom where
 * that is missing), for long-lived secrets: file keys. */
int ps_random_os(ps_ctx *ctx, uint8_t *out, size_t n);

/* ---- buf.c --------------------------------------------------------------- */

typedef struct ps_buf {
	uint8_t *data;
	size_t len, cap;
	int oom;            /* sticky: set when any append failed */
	int secret;         /* wipe on growth and on free */
} ps_buf;

#define PS_BUF_INIT {NULL, 0, 0, 0, 0}

int ps_buf_reserve(ps_buf *b, size_t extra);   /* 0 or -1 (and sets oom) */
void ps_buf_append(ps_buf *b, const void *p, size_t n);
void ps_buf_putc(ps_buf *b, int c);
void ps_buf_puts(ps_buf *b, const char *s);
void ps_buf_printf(ps_buf *b, const char *fmt, ...) PS_PRINTF(2, 3);
void ps_buf_reset(ps_buf *b);                  /* len = 0, keeps memory */
void ps_buf_free(ps_buf *b);                   /* wipes if secret */
/* Detaches the data (caller frees); returns NULL if oom. */
uint8_t *ps_buf_detach(ps_buf *b, size_t *len);

/* ---- obj.c: object model ------------------------------------------------- */

typedef enum {
	PS_NULL = 0,
	PS_BOOL,
	PS_INT,
	PS_REAL,
	PS_STR,
	PS_NAME,
	PS_ARRAY,
	PS_DICT,
	PS_REF,
	PS_STREAM
} ps_kind;

typedef struct ps_obj ps_obj;

typedef struct ps_dict_ent {
	char *key;          /* decoded name without '/', NUL-terminated */
	ps_obj *val;
} ps_dict_ent;

struct ps_obj {
	ps_kind kind;
	union {
		int b;
		int64_t i;
		struct {
			double v;
			char *text;     /* original token, re-emitted verbatim; NULL for new reals */
		} real;
		struct {
			uint8_t *p;     /* bytes after escape/hex decoding (and decryption) */
			size_t len;
			int hex;        /* was written as <hex> (serializer preference) */
		} str;
		struct {
			char *p;        /* decoded (#xx resolved), NUL-terminated, no '/' */
			size_t len;
		} name;
		struct {
			ps_obj **items;
			size_t len, cap;
		} arr;
		struct {
			ps_dict_ent *ents;   /* in file order */
			size_t len, cap;
		} dict;
		struct {
			uint32_t num;
			uint16_t gen;
		} ref;
		struct {
			ps_obj *dict;   /* PS_DICT, owned */
			int64_t off;    /* absolute file offset of the raw data, -1 if in memory */
			uint8_t *data;  /* in-memory raw (already filtered) data, owned, or NULL */
			size_t len;     /* length of data (in-memory streams) */
		} stm;
	} u;
};

/* Constructors return NULL on allocation failure. */
ps_obj *ps_new_null(void);
ps_obj *ps_new_bool(int b);
ps_obj *ps_new_int(int64_t i);
ps_obj *ps_new_real(double v);
ps_obj *ps_new_str(const void *p, size_t len);
ps_obj *ps_new_name(const char *name);
ps_obj *ps_new_array(void);
ps_obj *ps_new_dict(void);
ps_obj *ps_new_ref(uint32_t num, uint16_t gen);
/* Takes ownership of DICT and DATA (both freed on failure). */
ps_obj *ps_new_stream(ps_obj *dict, uint8_t *data, size_t len);
void ps_obj_free(ps_obj *o);
ps_obj *ps_obj_copy(const ps_obj *o);   /* deep copy, NULL on OOM */
/* Same value (a stream compares by its dictionary; SKIP_LENGTH ignores the
 * top-level /Length there); integers and reals compare by value, reals to
 * 1e-4 (our serializer's precision).  NULL equals only NULL. */
int ps_obj_equal(const ps_obj *a, const ps_obj *b, int skip_length);

/* Replaces the bytes of string STR with a copy of P[0..N) (kept
 * NUL-terminated like every parsed string): 0 or PDFSTAMP_E_NOMEM. */
int ps_str_set(ps_obj *str, const void *p, size_t n);

/* Containers take ownership of the item, also when they fail (-> freed). */
int ps_array_push(ps_obj *arr, ps_obj *item);        /* 0 or PDFSTAMP_E_NOMEM */
int ps_dict_put(ps_obj *dict, const char *key, ps_obj *val); /* replaces an existing key in place */
int ps_dict_del(ps_obj *dict, const char *key);      /* 0 whether or not present */
/* Borrowed lookups; NULL if absent or if O is not a dict / array. For a
 * PS_STREAM, ps_dict_get looks in its dictionary. */
ps_obj *ps_dict_get(const ps_obj *dict, const char *key);
ps_obj *ps_array_get(const ps_obj *arr, size_t i);
size_t ps_array_len(const ps_obj *arr);
int ps_obj_is_name(const ps_obj *o, const char *name);
/* Typed accessors: 0 on success, -1 if O is absent or of another kind. */
int ps_obj_int(const ps_obj *o, int64_t *out);
int ps_obj_num(const ps_obj *o, double *out);       /* int or real */

/* ---- obj.c: parser --------------------------------------------------------
 * The parser works on a memory window [buf, buf+len).  It never reads past
 * len.  If an object is cut off by the end of the window it returns
 * PS_E_NEEDMORE (the caller may retry with a larger window); any other
 * malformation gives PDFSTAMP_E_FORMAT with a message naming what was wrong.
 * Nesting is limited to PS_MAX_DEPTH; strings and names are limited only by
 * the window. */

#define PS_MAX_DEPTH 64

/* Parses one direct object starting at *pos (leading white space and
 * comments are skipped) and advances *pos past it.  "N G R" is recognised
 * as a reference.  A stream keyword is not accepted here. */
int ps_parse_obj(ps_ctx *ctx, const uint8_t *buf, size_t len, size_t *pos, ps_obj **out);

/* Parses "N G obj <object> endobj" or "N G obj <<dict>> stream<EOL>"
 * starting at POS.  On success *out is the object; for a stream it is a
 * PS_STREAM whose u.stm.off is BASE + the offset of the first data byte
 * (BASE is the file offset of buf[0]); its data is not read.  A missing
 * "endobj" is tolerated.  NUM and GEN receive the object's header numbers. */
int ps_parse_indirect(ps_ctx *ctx, const uint8_t *buf, size_t len, size_t pos,
                      int64_t base, uint32_t *num, uint16_t *gen, ps_obj **out);

/* Lexer helpers used by the xref reader. */
int ps_is_space(int c);
int ps_is_delim(int c);
/* Skips white space and comments; returns the new position. */
size_t ps_skip_ws(const uint8_t *buf, size_t len, size_t pos);
/* Parses an unsigned decimal integer at *pos (no sign) with overflow check
 * against INT64_MAX; advances *pos.  Returns 0, or -1 if no digit or overflow. */
int ps_parse_uint(const uint8_t *buf, size_t len, size_t *pos, int64_t *out);

/* ---- obj.c: serializer ----------------------------------------------------
 * Writes O in PDF syntax, locale-independent.  Strings are written as-is
 * (the caller encrypts beforehand): literal "(...)" with escapes unless
 * str.hex is set, then "<...>".  Reals keep their original text when they
 * have one, else the shortest form with up to 6 decimals.  A PS_STREAM
 * writes its dictionary only (the caller writes "stream" and the data). */
void ps_serialize(ps_buf *b, const ps_obj *o);

/* Calls FN on every string inside O (recursing into arrays, dicts and a
 * stream's dict), stopping at the first non-zero return. */
typedef int (*ps_str_fn)(void *ud, ps_obj *str, const ps_obj *parent_dict, const char *key);
int ps_obj_walk_strings(ps_obj *o, ps_str_fn fn, void *ud);

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

/* ---- flate.c -------------------------------------------------------------- */

/* Inflates a zlib stream, appending to OUT; output beyond MAX_OUT bytes is a
 * FORMAT error (decompression bombs).  A truncated stream is a FORMAT error. */
int ps_inflate(ps_ctx *ctx, const uint8_t *in, size_t n, size_t max_out, ps_buf *out);
/* FlateDecode with its /DecodeParms (PARMS may be NULL): inflate, then undo
 * a PNG predictor (10-15); TIFF predictor 2 is UNSUPPORTED. */
int ps_flate_decode(ps_ctx *ctx, const ps_obj *parms, const uint8_t *in, size_t n, size_t max_out, ps_buf *out);
/* Deflates IN (zlib format) at LEVEL (0-9), appending to OUT. */
int ps_deflate(ps_ctx *ctx, const uint8_t *in, size_t n, int level, ps_buf *out);
/* Undoes a PNG predictor (/Predictor 10-15) in place: DATA holds rows of
 * 1 + COLUMNS*COLORS*BPC/8 bytes; on return *LEN is the decoded length. */
int ps_png_unpredict(ps_ctx *ctx, uint8_t *data, size_t *len, int colors, int bpc, int columns);

/* ---- text.c: text strings and dates ---------------------------------------- */

/* A PDF text string from UTF-8: printable ASCII stays single-byte, anything
 * else becomes UTF-16BE with a BOM (ISO 32000-2 7.9.2.2).  Invalid UTF-8 is
 * a USAGE error.  *out is a new PS_STR. */
int ps_text_from_utf8(ps_ctx *ctx, const char *s, size_t len, ps_obj **out);
/* UTF-8 from a PDF text string (UTF-16BE or UTF-8 with BOM, else
 * PDFDocEncoding), appended to OUT. */
int ps_text_to_utf8(ps_ctx *ctx, const uint8_t *p, size_t len, ps_buf *out);
/* Latin-1/WinAnsiEncoding bytes for UTF-8 text drawn with a standard-14
 * font; characters WinAnsi lacks become '?'.  Appended to OUT. */
int ps_text_to_winansi(ps_ctx *ctx, const char *s, size_t len, ps_buf *out);

/* A moment: seconds since the epoch (UTC) and the local offset in minutes. */
typedef struct ps_time {
	int64_t t;
	int tzoff;   /* minutes east of UTC */
} ps_time;

/* Parses "now" (the current time, local offset) or ISO 8601:
 * YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM|-HH:MM] (no zone = UTC). */
int ps_time_parse(ps_ctx *ctx, const char *s, ps_time *out);
/* D:YYYYMMDDHHmmSS+HH'mm' (or Z), 32 bytes are enough. */
void ps_time_pdf(const ps_time *tm, char out[32]);
/* YYYY-MM-DDTHH:MM:SS+HH:MM (or Z), for XMP. */
void ps_time_iso(const ps_time *tm, char out[32]);

/* ---- xmp.c: XMP metadata packets ------------------------------------------- */

typedef struct ps_meta_kv {
	const char *key;     /* Info key: Title, Author, Subject, Keywords, Creator,
	                        Producer, or a custom key */
	const char *value;   /* UTF-8; NULL = remove */
} ps_meta_kv;

/* Rewrites an XMP packet (OLD may be NULL or empty: a fresh packet is made)
 * so that it agrees with the Info changes in KV and carries MODDATE
 * (xmp:ModifyDate and xmp:MetadataDate) in ISO form.  Title -> dc:title
 * (x-default), Author -> dc:creator (seq), Subject -> dc:description,
 * Keywords -> pdf:Keywords, Producer -> pdf:Producer, Creator ->
 * xmp:CreatorTool; custom keys -> pdfx:<Key>.  Everything else in the
 * packet is preserved byte for byte where possible.  Values are XML-escaped.
 * The result is appended to OUT. */
int ps_xmp_update(ps_ctx *ctx, const uint8_t *old, size_t oldlen,
                  const ps_meta_kv *kv, size_t nkv, const char *moddate_iso, ps_buf *out);

/* ---- xref.c / doc.c: the document ------------------------------------------ */

#define PS_MAX_SECTIONS 4096      /* /Prev chain depth guard */
#define PS_MAX_OBJNUM 8388607     /* highest object number we accept (ISO 32000 C.2) */

typedef struct ps_xent {
	int64_t off;      /* type 1: offset of "N G obj"; type 2: number of the object stream */
	uint32_t aux;     /* type 0/1: generation; type 2: index inside the object stream */
	uint16_t sec;     /* 1-based section that set this entry (newest first); 0 = unset */
	uint8_t type;     /* 0 free (or absent), 1 in use, 2 compressed */
	uint8_t from_table; /* set by a classic table (hybrid precedence) */
} ps_xent;

/* Entries per page of the cross-reference index (4 KiB pages of 16-byte
 * entries; the directory has at most 32768 slots). */
#define PS_XREF_PAGE_BITS 8
#define PS_XREF_PAGE (1u << PS_XREF_PAGE_BITS)

typedef struct ps_section {
	int64_t off;                  /* offset of "xref" or of the xref stream object */
	enum pdfstamp_xref_kind kind;
	int64_t xrefstm;              /* hybrid: /XRefStm offset, else -1 */
	int64_t prev;                 /* /Prev or -1 */
	uint32_t stream_num;          /* xref stream: its object number */
	uint32_t xrefstm_num;         /* hybrid: the /XRefStm stream's object number */
	/* What this revision's trailer says about the security state; the
	 * chain check (doc.c) compares revisions, since any of them may have
	 * been appended by someone without the password. */
	ps_obj *enc;                  /* its /Encrypt value (owned copy), NULL if absent */
	ps_obj *id0;                  /* its ID[0] (owned copy), NULL if absent */
} ps_section;

/* An xref stream of the chain: its object number and offset. */
typedef struct ps_xstm {
	uint32_t num;
	int64_t off;
} ps_xstm;

/* One definition of the /Encrypt object found in the chain (enc_watch). */
typedef struct ps_enc_version {
	int64_t off;
	int sec;                      /* index into sections (0 = newest) */
} ps_enc_version;

typedef struct ps_cache_ent {
	uint32_t num;
	ps_obj *obj;
} ps_cache_ent;

struct pdfstamp_doc {
	ps_ctx *ctx;
	int fd;
	char *path;
	int64_t size;                 /* file size when opened */
	int64_t bytes_read;           /* distinct bytes read (doc.c note 1), <= size */
	int64_t *read_ranges;         /* what was read: start, end pairs, sorted and merged */
	size_t nread_ranges, capread_ranges;
	int read_ranges_full;         /* too many ranges (or no memory): reads counted whole */
	int64_t startxref;            /* value of the last startxref */
	int64_t eof_end;              /* offset just past the last %%EOF (and its EOL) */
	int64_t trailing;             /* non-white bytes after the last %%EOF */

	/* The cross-reference index (xref.c), paged so that its memory follows
	 * the entries present, not the highest object number: page P holds
	 * numbers P*PS_XREF_PAGE .. +PS_XREF_PAGE-1 and is allocated on its
	 * first entry.  Read it only through ps_xref_get / ps_xref_next. */
	ps_xent **xpages;             /* directory, NULL slots for empty pages */
	uint32_t nxpages;             /* directory length (highest page + 1) */
	uint32_t xref_used;           /* entries in use (type 1 or 2) */
	uint32_t xref_max;            /* highest object number in use, 0 if none */
	size_t xref_bytes;            /* memory held by the index */
	ps_section *sections;         /* newest first */
	int nsections;
	ps_obj *trailer;              /* newest trailer (or xref stream dict), owned */
	ps_xstm *xstm;                /* the chain's xref streams, sorted by number (xref.c) */
	size_t nxstm;
	uint32_t enc_watch;           /* newest trailer's /Encrypt object number, 0 if none */
	ps_enc_version *enc_versions; /* every in-file definition of it (at most one per section) */
	int nenc_versions, capenc_versions;
	int enc_versions_oom;         /* a definition could not be recorded: refuse */
	int64_t size_key;             /* trailer /Size */

	/* security */
	int encrypted;
	ps_obj *encrypt;              /* the /Encrypt dictionary (owned copy) */
	uint32_t encrypt_num;         /* its object number if indirect, else 0 */
	ps_secparams sp;              /* after auth, sp.p = the effective permissions (pdfstamp_doc_auth) */
	int strf_identity, stmf_identity;
	int authenticated;            /* 0 none, 1 user, 2 owner */
	int perms_ok;
	int password_given;           /* auth was given a password, but the file is not encrypted */                 /* /Perms agreed with /P and /EncryptMetadata (Alg. 13) */
	ps_cipher cipher;

	/* lazily loaded objects, open addressing by object number */
	ps_cache_ent *cache;
	size_t ncache, capcache;
	int depth;                    /* recursion guard for lookups */
	int locked;                   /* holds an exclusive flock (opened for writing) */
	unsigned open_flags;
	mode_t mode;                  /* permission bits of the file */

	/* the last decoded object stream */
	uint32_t objstm_num;
	ps_buf objstm_data;
	int64_t *objstm_offs;         /* 2*N: object number, offset from /First */
	int64_t objstm_n, objstm_first;
};

/* "a FIFO", "a directory", ... for messages about a file of mode MODE. */
const char *ps_file_kind(mode_t mode);
/* Reads up to LEN bytes at OFF into OUT (replacing its contents); fewer
 * only at end of file.  Counts bytes_read (distinct bytes, see
 * struct pdfstamp_doc). */
int ps_doc_pread(ps_doc *doc, int64_t off, size_t len, ps_buf *out);
/* xref.c: locates startxref and reads every section into the index. */
int ps_xref_load(ps_doc *doc);
/* The merged entry of object NUM if it is in use (type 1 or 2), else NULL
 * (free, absent or out of range).  Two array indexings: lookups are hot. */
static inline const ps_xent *ps_xref_get(const ps_doc *doc, uint32_t num)
{
	uint32_t p = num >> PS_XREF_PAGE_BITS;
	const ps_xent *e;

	if (p >= doc->nxpages || !doc->xpages[p])
		return NULL;
	e = &doc->xpages[p][num & (PS_XREF_PAGE - 1)];
	return e->type != 0 ? e : NULL;
}
/* Its type: 1 in use, 2 compressed, 0 free or absent. */
static inline int ps_xref_type(const ps_doc *doc, uint32_t num)
{
	const ps_xent *e = ps_xref_get(doc, num);

	return e ? e->type : 0;
}
/* The lowest object number above AFTER that is in use, 0 if none: a walk
 * over every object in use is O(objects), empty pages are skipped. */
uint32_t ps_xref_next(const ps_doc *doc, uint32_t after);
/* Frees the index. */
void ps_xref_free(ps_doc *doc);
/* Borrowed pointer to object NUM (parsed, strings decrypted), NULL with
 * *err = 0 if the object is free or absent (the PDF null object), or an
 * error.  The object lives as long as the document. */
int ps_doc_lookup(ps_doc *doc, uint32_t num, ps_obj **out);
/* The same, uncached: *out is owned by the caller (whole-file passes). */
int ps_doc_load(ps_doc *doc, uint32_t num, ps_obj **out);
/* Follows O if it is a reference (chains too), borrowed. NULL -> *out NULL. */
int ps_doc_resolve(ps_doc *doc, ps_obj *o, ps_obj **out);
/* Raw, decrypted or decoded stream data of a PS_STREAM that belongs to
 * object NUM (for the exemptions).  DECODE also undoes FlateDecode. */
int ps_doc_stream_data(ps_doc *doc, uint32_t num, ps_obj *stm, int decode, ps_buf *out);
/* Parses the indirect object at OFF without decrypting (used for xref
 * streams and by lookup).  Owned result.  EXPECT_NUM 0 accepts any object
 * number; NUM_OUT (may be NULL) receives the number found. */
int ps_doc_parse_at(ps_doc *doc, int64_t off, uint32_t expect_num, ps_obj **out, uint32_t *num_out);
/* Length of a stream's raw data (resolves an indirect /Length). */
int ps_doc_stream_length(ps_doc *doc, ps_obj *stm, int64_t *len);
/* xref.c: is the live object NUM one of the chain's own xref streams (a
 * stream section, or a hybrid section's /XRefStm, whose entry points at
 * it)?  Only these are exempt from encryption and dropped by a rewrite;
 * any other stream typed /XRef is ordinary content. */
int ps_doc_is_xref_stream(const ps_doc *doc, uint32_t num);

/* Internal open flag: do not look at the journal at all (used when
 * verifying our own output while the journal is still in place). */
#define PS_OPEN_NO_RECOVER 0x100
/* incr.c: pdfstamp_recover on FD, an open file of PATH on which the caller
 * already holds the exclusive flock (the lock is per open file description:
 * a second open+flock in this process would fail).  Same checks, results
 * and *recovered values as pdfstamp_recover. */
int ps_journal_recover(ps_ctx *ctx, int fd, const char *path, int *recovered);
/* Internal open flag: read only the newest cross-reference section and not
 * /Encrypt (the caller supplies the security state): the cheap re-read that
 * checks an update we just appended. */
#define PS_OPEN_NEWEST_ONLY 0x200
/* Authenticates with a file key we already hold (verification of output). */
int ps_doc_auth_key(ps_doc *doc, const uint8_t key[32], int as);
/* The same with the schedules of another document's cipher, borrowed (C
 * must outlive DOC): how the writer verifies its output without the key. */
int ps_doc_auth_cipher(ps_doc *doc, const ps_cipher *c, int as);
/* Is a stream with this dictionary encrypted, in a file with these
 * settings?  (StmF Identity, /Crypt filters, metadata with EncryptMetadata
 * false: 7.6.2, Table 20, Table 21, 7.6.6.)  The xref streams of the
 * chain are exempt too (7.5.8.2), but that is decided by object number
 * (ps_doc_is_xref_stream), never by /Type: a stream of a new revision
 * that says /Type /XRef is still encrypted. */
int ps_stream_needs_crypt(int encrypted, int stmf_identity, int encrypt_metadata, const ps_obj *stm);
/* A dictionary whose /Contents is a signature value (never encrypted,
 * spec-facts 2.2): /ByteRange, a string /Contents, /Type Sig, DocTimeStamp or none. */
int ps_is_signature_dict(const ps_obj *d);
/* Appends the signatures found through /AcroForm to info->sigs. */
int ps_doc_signatures(ps_doc *doc, struct pdfstamp_info *info);
/* Generation of object NUM in the newest revision (0 if compressed/free). */
uint16_t ps_doc_gen(const ps_doc *doc, uint32_t num);

/* ---- incr.c: the incremental writer ---------------------------------------- */

typedef struct ps_newobj {
	uint32_t num;
	uint16_t gen;
	ps_obj *obj;      /* plaintext; owned */
} ps_newobj;

typedef enum { PS_UP_OPEN = 0, PS_UP_DONE, PS_UP_FAILED } ps_up_state;

typedef struct ps_update {
	ps_doc *doc;
	int64_t base_len;         /* L: the input's length; nothing before it is touched */
	uint32_t next_num;        /* next object number to hand out */
	ps_newobj *objs;
	size_t nobjs, cap;
	ps_obj *trailer_set;      /* keys to set in the new trailer (e.g. /Info); owned dict */
	ps_up_state state;
} ps_update;

int ps_update_begin(ps_doc *doc, const struct pdfstamp_write_opts *w, ps_update *up);
/* A fresh object number, 0 if the number space is exhausted (error set). */
uint32_t ps_update_alloc(ps_update *up);
/* Adds OBJ (owned, also on failure) as object NUM/GEN of the new revision.
 * NUM must not be pending already (edit that object in place) nor be the
 * /Encrypt dictionary: both are FORMAT errors, as only a damaged file
 * leads there. */
int ps_update_put(ps_update *up, uint32_t num, uint16_t gen, ps_obj *obj);
int ps_update_set_trailer(ps_update *up, const char *key, ps_obj *val);
/* Serialises, writes (per W), makes it durable and verifies it. */
int ps_update_commit(ps_update *up, const struct pdfstamp_write_opts *w, struct pdfstamp_result *res);
void ps_update_free(ps_update *up);

/* stamp.c: refuses an update that the permissions (P bit 6 for
 * annotations, bit 4 otherwise, unless owner) or a DocMDP certification
 * forbid; warns where signatures will be reported as modified. */
int ps_policy_check(ps_doc *doc, int for_annotation);

/* ---- rewrite.c ------------------------------------------------------------------ */

/* The largest offset a classic cross-reference entry can hold (10 digits). */
#define PS_MAX_TABLE_OFFSET INT64_C(9999999999)
/* The full rewrite's xref form: 1 (a stream) when members of object
 * streams are carried over or when XREF_OFFSET, which bounds every object
 * offset, exceeds PS_MAX_TABLE_OFFSET; else 0 (a classic table). */
int ps_rewrite_xref_form(int has_compressed, int64_t xref_offset);

/* ---- io.c: durable writes ------------------------------------------------------ */

int ps_write_all(ps_ctx *ctx, int fd, const void *p, size_t n, int64_t off, const char *what);
int ps_sync_fd(ps_ctx *ctx, int fd, const char *what);
int ps_sync_dir(ps_ctx *ctx, const char *dir);

/* A file that replaces TARGET atomically when committed (see io.c). */
typedef struct ps_outfile {
	int fd;
	int unnamed;        /* O_TMPFILE: not yet linked into the directory */
	int named;          /* tmpname exists in the directory and is ours to remove */
	int committed;
	int to_fd;          /* ps_outfile_open_fd: no target, copied out instead of committed */
	char *target, *dir, *tmpname;
	char fdpath[32];
	int keep_owner;     /* commit gives the file uid/gid (where permitted) */
	uid_t uid;
	gid_t gid;
} ps_outfile;

int ps_outfile_open(ps_ctx *ctx, ps_outfile *of, const char *target);
/* The replacement of the file open as FD under PATH (in-place rewrites):
 * the target is the file itself, where a symbolic link leads (the link
 * stays), with its owner and group where permitted; a file with several
 * hard links is refused (UNSUPPORTED), as a rename would split them. */
int ps_outfile_open_inplace(ps_ctx *ctx, ps_outfile *of, const char *path, int fd);
/* An output for PDFSTAMP_WRITE_TO_FD: a file in $TMPDIR (else ".") that
 * never has a name; ps_outfile_copy_out, not commit, finishes it. */
int ps_outfile_open_fd(ps_ctx *ctx, ps_outfile *of);
/* Copies the whole file to OUT_FD with write(2). */
int ps_outfile_copy_out(ps_ctx *ctx, ps_outfile *of, int out_fd);
/* Checks OUT_FD for PDFSTAMP_WRITE_TO_FD: open, and not the file IN_FD
 * (-1: no check).  0 or PDFSTAMP_E_USAGE. */
int ps_check_out_fd(ps_ctx *ctx, int out_fd, int in_fd);
/* A path under which the (uncommitted) file can be opened for reading. */
const char *ps_outfile_path(ps_outfile *of);
/* fsync, set MODE, rename over the target, fsync the directory. */
int ps_outfile_commit(ps_ctx *ctx, ps_outfile *of, mode_t mode);
/* Closes; removes the temporary file unless committed.  Accepts a zeroed struct with fd -1. */
void ps_outfile_free(ps_outfile *of);

/* Test hook (io.c): PDFSTAMP_FAULT="fail:POINT" makes the named step fail
 * with an I/O error, "kill:POINT" kills the process there (SIGKILL);
 * "fail:POINT:N" and "kill:POINT:N" act only the Nth time this process
 * reaches POINT; "trace" prints every point reached, with its count, to
 * standard error.  POINT is write, fsync, rename (the I/O calls) or
 * before-rename, after-journal, after-write, after-fsync (phases).
 * Returns 1 if the step must fail. */
int ps_fault(const char *point);

#endif
