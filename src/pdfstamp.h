/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pdfstamp.h - public API of libpdfstamp.
 *
 * libpdfstamp opens AES-256 encrypted PDFs (standard security handler,
 * /V 5 with /R 6 or /R 5), reads only the cross-reference data and the
 * objects it is asked for, and appends encrypted incremental updates.
 *
 * Conventions (see also the design notes in src/ps.h):
 *  - Every call returns 0 or a negative PDFSTAMP_E_* code; the message of
 *    the last failure is kept in the context (pdfstamp_ctx_errmsg).
 *  - Ownership is in the name: *_new / *_open return objects the caller
 *    frees with the matching *_free / *_close; both accept NULL.
 *  - Threads.  What a call works on lives in its context and in the
 *    documents opened with it: a context and its documents are used by one
 *    thread at a time; different contexts may be used by different threads
 *    at the same time; the functions that take no context
 *    (pdfstamp_version, pdfstamp_strerror, pdfstamp_aes_engine,
 *    pdfstamp_perm_name, pdfstamp_change_kind_name, pdfstamp_policy_allows,
 *    pdfstamp_*_init) from any thread at any time.  There is no global
 *    init or cleanup call.  Callbacks run on the calling thread, except that
 *    during pdfstamp_rotate and pdfstamp_encrypt warnings may come from the
 *    call's worker threads: one at a time, and all before it returns.
 *  - What is process-wide, all of it safe to use from several threads at
 *    once:
 *     - the libraries some stamps need (HarfBuzz, hb-subset, fontconfig and
 *       FriBidi for text in an embedded font, libspng for a PNG image),
 *       opened with dlopen by the first such stamp under a mutex, their
 *       table of functions filled once and then only read; they stay
 *       loaded until the process exits.  fontconfig keeps process-wide
 *       state of its own (thread-safe since 2.10); FcFini is never called.
 *     - the environment, read with getenv at each use, never written:
 *       PDFSTAMP_AES (the AES engine and the password-hash kernels; see
 *       pdfstamp_aes_engine), TMPDIR (the temporary file of
 *       PDFSTAMP_WRITE_TO_FD) and, through localtime_r, TZ (the offset of
 *       the date "now").  POSIX does not make getenv safe against setenv or
 *       putenv: do not change these while another thread is inside a call.
 *     - the process's resources: file descriptors (every one the library
 *       opens is close-on-exec and closed before the call returns, but a
 *       document's, which pdfstamp_doc_close closes); the writers' lock,
 *       flock(2) on the file, so that two PDFSTAMP_OPEN_WRITE opens of one
 *       file exclude each other within one process too; locked memory for
 *       secrets (RLIMIT_MEMLOCK: a failed mlock is no error); the threads
 *       of pdfstamp_rotate and pdfstamp_encrypt (joined before they
 *       return); and a child process: a password for /R 5 or 6 that is not
 *       printable ASCII is prepared (SASLprep) in a child made with fork(),
 *       which runs only that and _exit and is waited for by its pid (the
 *       caller's pthread_atfork handlers run as for any fork).  Writing to
 *       the descriptor of PDFSTAMP_WRITE_TO_FD raises SIGPIPE if it is a
 *       pipe without a reader, as write(2) does: ignore SIGPIPE to get
 *       PDFSTAMP_E_IO instead.
 *     - test programs only (tests/fault.c, linked into them; never in
 *       this library): PDFSTAMP_FAULT and the count of its hits.
 *  - fork(): a context may go on being used after fork() in the parent,
 *    the child, or both.  It notices that the process changed, reseeds its
 *    random generator with fresh OS entropy and drops the IVs it had drawn
 *    ahead, so the two processes never write the same IV; file keys come
 *    from the kernel (getrandom) directly.  A document opened with
 *    PDFSTAMP_OPEN_WRITE belongs to one process only (both would share its
 *    lock).  Still never share a context between threads, and do not fork
 *    while another thread is inside a call on it.
 *  - Versioned structs.  The option structs and the result structs start
 *    with `unsigned version`, which the caller sets: initialise them with
 *    the matching *_INIT macro (options: PDFSTAMP_STAMP_OPTS_INIT, ...;
 *    results: PDFSTAMP_INFO_INIT, PDFSTAMP_RESULT_INIT, ...).  A version
 *    the library does not know is refused with PDFSTAMP_E_USAGE, so a
 *    struct may grow at its end in a later release without breaking
 *    programs built against this header.
 *    Where macros cannot be used (language bindings), each macro has a
 *    function: pdfstamp_NAME_init(&s, PDFSTAMP_NAME_VERSION) gives struct
 *    pdfstamp_NAME the values of PDFSTAMP_NAME_INIT, and zero padding.
 *    The version passed is the one the caller was compiled with: only the
 *    members of that version are written, nothing past them, so a program
 *    built against an older header gets its older, shorter struct.  It
 *    returns 0, or PDFSTAMP_E_USAGE (writing nothing) for a NULL pointer or
 *    a version the library does not know; like the macro it allocates and
 *    frees nothing, so a result struct must be fresh or cleared.
 *    Result structs hold no fixed-size arrays of items: a list is a pointer
 *    and a count owned by the struct, allocated by the call that fills it
 *    and released by the matching *_clear function (pdfstamp_info_clear,
 *    pdfstamp_result_clear), which accepts NULL, keeps `version` and leaves
 *    the struct ready to be filled again (a filling call releases what
 *    the struct held first, so reusing one struct for several calls does
 *    not leak).  Fixed-size char buffers for names and messages (e.g.
 *    `subfilter`, `first_fault`) are part of a struct's version: they
 *    truncate, and are always NUL-terminated.  The figure structs
 *    (pdfstamp_rewrite_stats, pdfstamp_verify_report) are versioned the
 *    same way (PDFSTAMP_REWRITE_STATS_INIT, PDFSTAMP_VERIFY_REPORT_INIT).
 *  - The manual page libpdfstamp(3) describes the API as a whole.
 */
#ifndef PDFSTAMP_H
#define PDFSTAMP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PDFSTAMP_VERSION "0.1.0"

/* Error codes.  The CLI maps them to exit statuses (see pdfstamp(1)). */
enum {
	PDFSTAMP_OK = 0,
	PDFSTAMP_E_IO = -1,          /* read/write/fsync/rename failed   -> 1 */
	PDFSTAMP_E_NOMEM = -2,       /* allocation failed                -> 1 */
	PDFSTAMP_E_INTERNAL = -3,    /* a bug or a failed self-check     -> 1 */
	PDFSTAMP_E_USAGE = -4,       /* bad argument to a call           -> 2 */
	PDFSTAMP_E_PASSWORD = -5,    /* password matches neither O nor U -> 3 */
	PDFSTAMP_E_FORMAT = -6,      /* malformed input                  -> 4 */
	PDFSTAMP_E_UNSUPPORTED = -7, /* valid PDF we do not handle       -> 4 */
	PDFSTAMP_E_PERM = -8         /* not permitted (permissions, DocMDP) -> 5 */
};

typedef struct pdfstamp_ctx pdfstamp_ctx;
typedef struct pdfstamp_doc pdfstamp_doc;

typedef void (*pdfstamp_warn_fn)(void *userdata, const char *message);

const char *pdfstamp_version(void);
const char *pdfstamp_strerror(int code);
/* Name of the AES engine object data goes through on this CPU: "vaes-16",
 * "aesni-8" or "mbedtls" (PDFSTAMP_AES=mbedtls|aesni|vaes may ask for another). */
const char *pdfstamp_aes_engine(void);

int pdfstamp_ctx_new(pdfstamp_ctx **out);
void pdfstamp_ctx_free(pdfstamp_ctx *ctx);
/* Message of the last error, "" if none.  Never contains a password. */
const char *pdfstamp_ctx_errmsg(const pdfstamp_ctx *ctx);
int pdfstamp_ctx_errcode(const pdfstamp_ctx *ctx);
/* Messages describe the problem, never a command's options.  When the last
 * error is a refusal that a setting of the caller's would lift, or needs a
 * font the library could not find itself, pdfstamp_ctx_errhint says which,
 * so that a program can offer it or name its own option for it (the
 * pdfstamp command adds "--force", ...); PDFSTAMP_HINT_NONE for any other
 * error, for none, and for a NULL CTX.  It belongs to the message: the
 * next error replaces both. */
enum pdfstamp_hint {
	PDFSTAMP_HINT_NONE = 0,
	PDFSTAMP_HINT_ALLOW_TRAILING = 1, /* PDFSTAMP_WRITE_ALLOW_TRAILING in the write options */
	PDFSTAMP_HINT_ALLOW_IDENTITY = 2, /* PDFSTAMP_WRITE_ALLOW_IDENTITY in the write options */
	PDFSTAMP_HINT_REWRITE_FORCE = 3,  /* PDFSTAMP_REWRITE_FORCE in the rewrite options */
	PDFSTAMP_HINT_AUTH_FORCE = 4,     /* PDFSTAMP_AUTH_FORCE for pdfstamp_doc_auth */
	PDFSTAMP_HINT_FONT = 5,           /* a font in the stamp options (font, a file) */
	PDFSTAMP_HINT_DSS_LATER = 6       /* pdfstamp_dss with fetch adds what is missing later */
};
int pdfstamp_ctx_errhint(const pdfstamp_ctx *ctx);
/* Warnings (non-fatal oddities) go to this callback; default: dropped. */
void pdfstamp_ctx_set_warn(pdfstamp_ctx *ctx, pdfstamp_warn_fn fn, void *userdata);

/* A group of contexts, one per thread, whose in-place updates share their
 * directory syncs (group commit): the journal of an in-place update must
 * be durable under its name before the update is written, which costs a
 * directory fsync; updates of several contexts in the same directory
 * whose journals were linked while no such sync was running share the
 * next one.  Each update still waits for a sync that started after its
 * own journal was linked, so nothing is less durable.  Thread-safe; free
 * it after every context that uses it.  0 or PDFSTAMP_E_NOMEM. */
typedef struct pdfstamp_group pdfstamp_group;
int pdfstamp_group_new(pdfstamp_group **group);
void pdfstamp_group_free(pdfstamp_group *group);
/* Writes, syncs and links the journal of the update a call with
 * PDFSTAMP_WRITE_DEFER left pending on DOC (0 at once if there is none or
 * it is journaled); on failure the update is dropped, nothing written. */
int pdfstamp_doc_journal(pdfstamp_doc *doc);
/* Journals it if need be, then writes, syncs and checks it; 0 at once if
 * there is none.  On failure the update is undone, as it would have been
 * in the call. */
int pdfstamp_doc_commit(pdfstamp_doc *doc);
/* The directory syncs the group made, and those its members asked for. */
void pdfstamp_group_stats(const pdfstamp_group *group, uint64_t *syncs, uint64_t *requests);
/* CTX's in-place updates from now on share syncs with the group's other
 * contexts (NULL: none). */
void pdfstamp_ctx_set_group(pdfstamp_ctx *ctx, pdfstamp_group *group);

/* ---- Opening a document ------------------------------------------------ */

/* Flags for pdfstamp_doc_open (any other bit: PDFSTAMP_E_USAGE). */
#define PDFSTAMP_OPEN_WRITE 0x1 /* open read-write and lock (for --in-place appends);
                                   recovers a crash journal under that lock */
/* PDFSTAMP_OPEN_SALVAGE (read-only: with PDFSTAMP_OPEN_WRITE it is
 * PDFSTAMP_E_USAGE) is for judging a file rather than changing it (`pdfstamp
 * audit`).  It reads every cross-reference entry of the chain at open.  If
 * the chain that ends at the file's last startxref cannot be read (or its
 * /Encrypt checks fail) with PDFSTAMP_E_FORMAT or PDFSTAMP_E_UNSUPPORTED,
 * the file is opened as if it ended just after the newest earlier
 * revision end ("startxref N %%EOF" and its end of line; at most 64 are
 * tried, newest first, the file scanned backwards at most once) whose
 * chain does read.  Nothing past that end is ever read again: the
 * document's size (file_size, bytes_read) is that end, and what follows
 * it is the damaged tail (pdfstamp_doc_damaged_tail).  If no earlier
 * revision reads either, the open fails with the error of the whole file
 * (code and message); an I/O error or PDFSTAMP_E_NOMEM met while trying
 * them is returned as such.  A pending journal draws the warning of any
 * read-only open.  Writing calls (stamp, meta, dss, rotate, encrypt)
 * refuse a document that has a damaged tail (PDFSTAMP_E_USAGE). */
#define PDFSTAMP_OPEN_SALVAGE 0x2

/* Opens PATH and reads its trailer and cross-reference data (never the
 * payload).  The document is not yet authenticated.  A PATH that cannot be
 * opened (missing, not readable) or is not a regular file (FIFO, directory,
 * device) is refused with PDFSTAMP_E_IO, without blocking.  Without
 * PDFSTAMP_OPEN_WRITE nothing is ever modified: a pending journal only
 * draws a warning (see pdfstamp_recover). */
int pdfstamp_doc_open(pdfstamp_ctx *ctx, pdfstamp_doc **out, const char *path,
                      unsigned flags);
void pdfstamp_doc_close(pdfstamp_doc *doc);

/* 1 if DOC was opened with PDFSTAMP_OPEN_SALVAGE and only a prefix of the
 * file could be read, else 0 (DOC NULL too).  Then *OFFSET is where the
 * damaged tail starts (the end of the prefix that was read: the byte
 * after the last readable revision's %%EOF and its end of line), *LENGTH
 * the bytes after it, WHY (WHYLEN bytes, truncated, always
 * NUL-terminated) the message the open of the whole file failed with;
 * else 0, 0 and "".  Any output pointer may be NULL (WHY also with WHYLEN
 * 0). */
int pdfstamp_doc_damaged_tail(const pdfstamp_doc *doc, int64_t *offset, int64_t *length, char *why,
                              size_t whylen);

/* 1 if the document has an /Encrypt dictionary. */
int pdfstamp_doc_is_encrypted(const pdfstamp_doc *doc);
/* The security handler's name: "Standard" (passwords: pdfstamp_doc_auth),
 * "Adobe.PubSec" (certificates: pdfstamp_doc_auth_key), or NULL when the
 * document is not encrypted. */
const char *pdfstamp_doc_security_handler(const pdfstamp_doc *doc);

/* Flags for pdfstamp_doc_auth. */
/* PDFSTAMP_AUTH_FORCE accepts a /Perms entry that does not agree with /P
 * (Algorithm 13), with a warning.  /P is not protected and /Perms is, so
 * the permissions then in force (every permission check, info's p, the
 * permissions rotate keeps) are those /Perms records; if /Perms is not a
 * permissions record at all, no optional permission is granted. */
#define PDFSTAMP_AUTH_FORCE 0x1

/* Authenticates with PASSWORD (UTF-8, LEN bytes; it is SASLprep'd for you,
 * with a raw-bytes fallback), unwraps the file key and builds the cipher
 * state.  Returns PDFSTAMP_E_PASSWORD if neither the owner nor the user
 * password matches.  A plaintext document needs no call. */
int pdfstamp_doc_auth(pdfstamp_doc *doc, const char *password, size_t len,
                      unsigned flags);

/* A recipient's key material, for files encrypted to certificates (the
 * public-key security handler /Adobe.PubSec, ISO 32000-2 7.6.5).  The
 * bytes are the caller's: the library copies what it parses and wipes its
 * copies.  Either KEY (and CERT) or P12 is given. */
struct pdfstamp_key {
	unsigned version;            /* PDFSTAMP_KEY_VERSION */
	const uint8_t *key;          /* the private key: PEM or DER, PKCS#8 (encrypted or
	                                not) or PKCS#1 RSA */
	size_t key_len;
	const uint8_t *cert;         /* its certificate (PEM or DER): picks the RecipientInfo by
	                                issuer and serial number or subject key identifier */
	size_t cert_len;
	const uint8_t *p12;          /* a PKCS#12 file (DER) holding both, instead */
	size_t p12_len;
	const char *password;        /* of an encrypted PKCS#8 key or of the PKCS#12 file;
	                                NULL: none */
	size_t password_len;
};
#define PDFSTAMP_KEY_VERSION 1
#define PDFSTAMP_KEY_INIT {PDFSTAMP_KEY_VERSION, NULL, 0, NULL, 0, NULL, 0, NULL, 0}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_key_init(struct pdfstamp_key *key, unsigned version);

/* Authenticates a document encrypted with the public-key security handler
 * with a recipient's key: finds the RecipientInfo of KEY's certificate in
 * /Recipients, decrypts its envelope (the 20-byte seed and the
 * recipient's 4 permission bytes), derives the file key and builds the
 * cipher state.  The recipient's permissions then act as /P does for the
 * standard handler; a recipient granted every permission counts as the
 * owner (rotate).  Returns PDFSTAMP_E_PASSWORD when no RecipientInfo names
 * the certificate, the key does not match its certificate, or the key's
 * password is wrong (the message says which); PDFSTAMP_E_UNSUPPORTED for a
 * key transport or content cipher it does not know (named); PDFSTAMP_E_USAGE
 * for a document that is not encrypted to certificates or key material it
 * cannot parse. */
int pdfstamp_doc_auth_key(pdfstamp_doc *doc, const struct pdfstamp_key *key, unsigned flags);

/* ---- Reporting --------------------------------------------------------- */

enum pdfstamp_xref_kind {
	PDFSTAMP_XREF_TABLE = 1,
	PDFSTAMP_XREF_STREAM = 2,
	PDFSTAMP_XREF_HYBRID = 3 /* a table whose trailer has /XRefStm */
};

struct pdfstamp_sig_info {
	int64_t objnum;      /* the signature dictionary */
	int docmdp;          /* 0 = approval signature, else DocMDP /P (1..3) */
	char subfilter[64];  /* e.g. "adbe.pkcs7.detached" */
};

struct pdfstamp_info {
	unsigned version;            /* PDFSTAMP_INFO_VERSION, set by the caller */
	int64_t file_size;
	int encrypted;
	char filter[32];             /* "Standard" */
	int v, r, key_bits;
	char strf[32], stmf[32];     /* crypt filter names, e.g. "StdCF" */
	char cfm[32];                /* method of StdCF, e.g. "AESV3" */
	int encrypt_metadata;
	int perms_valid;             /* /Perms decrypted and matched (Alg. 13) */
	int authenticated_as;        /* 0 none, 1 user, 2 owner */
	int64_t p;                   /* effective permissions, signed 32-bit: /P, or with
	                                PDFSTAMP_AUTH_FORCE what /Perms records */
	int revisions;               /* cross-reference sections in the chain */
	enum pdfstamp_xref_kind *xref_kinds; /* revisions entries, newest first (owned) */
	int last_is_stream;
	int64_t objects;             /* in-use objects, newest revision wins */
	int64_t size;                /* trailer /Size */
	int64_t pages;
	int has_trailing_bytes;      /* bytes after the last %%EOF */
	int64_t trailing_bytes;
	int nsigs;
	struct pdfstamp_sig_info *sigs; /* nsigs entries, in field tree order (owned) */
	int64_t bytes_read;          /* distinct bytes of the file read so far: a byte read
	                                twice counts once, so never more than file_size */
	int docmdp;                  /* DocMDP level (1..3, 0 none) of /Root /Perms /DocMDP */
	int sigs_incomplete;         /* the field tree could not be read whole (too deep): the
	                                signature policy is unknown, and writers refuse */
	/* version 2 */
	int ncrypt_filters;          /* entries of crypt_filters */
	struct pdfstamp_crypt_filter *crypt_filters; /* /CF of a /V 4 or 5 handler, in /CF order;
	                                   NULL when there is none (owned) */
	char weak[64];               /* why the handler is weak, e.g. "RC4 40-bit" (RC4, or a
	                                key under 128 bits); empty when strong or not encrypted */
	/* version 3: the public-key handler (filter "Adobe.PubSec") */
	char subfilter[32];          /* e.g. "adbe.pkcs7.s5"; "" for the standard handler */
	int recipients;              /* RecipientInfos in all /Recipients envelopes */
	int envelopes;               /* /Recipients strings (one per permission set) */
	int recipient_index;         /* the envelope that opened the file, 0-based; -1 if none */
	char recipient[160];         /* the certificate that opened it: subject, or "" */
};

/* One crypt filter of /CF (ISO 32000-2 7.6.6, Table 25). */
struct pdfstamp_crypt_filter {
	char name[32];               /* e.g. "StdCF" */
	char method[16];             /* /CFM: "V2" (RC4), "AESV2", "AESV3" or "None" */
};

/* Versions 1 and 2 (without the later fields) are still accepted. */
#define PDFSTAMP_INFO_VERSION 3
#define PDFSTAMP_INFO_INIT {PDFSTAMP_INFO_VERSION, 0, 0, "", 0, 0, 0, "", "", "", 0, 0, 0, 0, 0, \
	NULL, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, NULL, "", "", 0, 0, -1, ""}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_info_init(struct pdfstamp_info *info, unsigned version);

/* Fills INFO, which must have been initialised with PDFSTAMP_INFO_INIT (or
 * filled before: what it held is released first).  Reads the page count
 * from the page tree root.  On success and on failure alike, release it
 * with pdfstamp_info_clear. */
int pdfstamp_doc_info(pdfstamp_doc *doc, struct pdfstamp_info *info);
/* Frees the lists INFO owns and zeroes everything but `version`.  NULL is
 * accepted. */
void pdfstamp_info_clear(struct pdfstamp_info *info);

/* The name of permission bit BIT of /P (1-based, ISO 32000-2 Table 22):
 * "print" (3), "modify" (4), "copy" (5), "annotate" (6), "fill-forms" (9),
 * "extract" (10), "assemble" (11), "print-high" (12); NULL for every other
 * bit.  The names are those pdfstamp_parse_permissions accepts; to list
 * them, ask for bits 1 to 32 in turn. */
const char *pdfstamp_perm_name(int bit);

/* ---- Writing: incremental updates ------------------------------------ */

/* Flags of pdfstamp_write_opts. */
#define PDFSTAMP_WRITE_IN_PLACE 0x1       /* append to the input file itself */
#define PDFSTAMP_WRITE_ALLOW_TRAILING 0x2 /* append even after bytes that follow the last %%EOF */
/* append to an encrypted file whose /StrF or /StmF is /Identity, i.e.
 * write new strings or streams in clear */
#define PDFSTAMP_WRITE_ALLOW_IDENTITY 0x4
/* Write the new file to the open descriptor output_fd (a pipe, a terminal,
 * standard output; it is written with write(2) from where it stands and is
 * not closed) instead of a path; output must be NULL.  The file is still
 * built in a temporary file, in $TMPDIR or else the current directory,
 * that never has a name (O_TMPFILE, or unlinked at once) and so never
 * outlives the call; it is checked there as usual and only then copied
 * to output_fd.  output_fd must not be the input file.  Needs version 2
 * of the options (pdfstamp_write_opts and pdfstamp_rewrite_opts). */
#define PDFSTAMP_WRITE_TO_FD 0x8
/* Version 3, with PDFSTAMP_WRITE_IN_PLACE: the call builds the update and
 * returns 0 with the result filled, the file untouched and still locked:
 * pdfstamp_doc_journal writes its journal (synced, linked), and
 * pdfstamp_doc_commit (which journals first if need be) writes the update,
 * makes it durable and checks it (the durable hook runs there); closing
 * the document first drops it (a journal removed, the file untouched).  A
 * caller that journals the updates of several documents of a group
 * (pdfstamp_ctx_set_group) before committing them has all their journals
 * made durable by one directory sync.  The result must outlive the
 * commit. */
#define PDFSTAMP_WRITE_DEFER 0x10
/* Dry run (any version of the options; also in the flags of
 * pdfstamp_rewrite_opts), on a document authenticated as for the real
 * call: the call runs every pre-flight of the real one, builds what it
 * would write and fills its result, and returns 0 without creating,
 * opening for writing, locking, changing or syncing any file: no output
 * (-o OUT is not created), no temporary file, no journal, no flock, no
 * fsync; the durable hook is not called.  The output mode is given as for
 * the real call and judged without touching it (OUT's directory can take a
 * new file, the descriptor is open, the file of PDFSTAMP_WRITE_IN_PLACE is
 * writable).  In place, the document may be (and should be) opened
 * read-only: a writing open takes the writers' lock and recovers a pending
 * journal, which a read-only open only reports with a warning.
 * pdfstamp_stamp, pdfstamp_meta and pdfstamp_dss fill pdfstamp_result as a
 * real call would (base_length, xref_offset, nobjects, objects;
 * bytes_appended is exactly the number of bytes the update would append:
 * every new object is built and encrypted as it would be, and only lengths
 * count, which the random IVs and /ID do not change; the same options,
 * date included, give the same length).  pdfstamp_rotate and
 * pdfstamp_encrypt run their whole pass with the output discarded: the
 * statistics are those of the real call and bytes_written is the size of
 * the file it would write, exactly.  Not judged: a writers' lock another
 * process holds, a full disk, and the self-check of the written file (a
 * rewrite's may still refuse a damaged input).  With PDFSTAMP_WRITE_DEFER:
 * PDFSTAMP_E_USAGE. */
#define PDFSTAMP_WRITE_DRY_RUN 0x20

struct pdfstamp_result;

struct pdfstamp_write_opts {
	unsigned version;
	const char *output;   /* path of the new file; NULL with
	                       * PDFSTAMP_WRITE_IN_PLACE or _TO_FD */
	unsigned flags;
	int output_fd;        /* version 2: the descriptor of PDFSTAMP_WRITE_TO_FD, else ignored */
	/* version 3: with PDFSTAMP_WRITE_IN_PLACE, called once the update is
	 * durable and checked and before its journal is removed (from then
	 * on a crash keeps the update: pdfstamp_recover says COMPLETED), with
	 * the result the call returns; RES is NULL if the call was given
	 * none.  A caller's record of the update (a ledger of done files) made
	 * durable here is never missing for an update that no journal
	 * guards.  Not 0: the update is undone as after a failed check, and
	 * the call fails with PDFSTAMP_E_IO (the hook reports its own reason).
	 * NULL: none.  Ignored without PDFSTAMP_WRITE_IN_PLACE. */
	int (*durable)(void *userdata, const char *path, const struct pdfstamp_result *res);
	void *durable_ud;
};
/* Versions 1 (without output_fd) and 2 (without durable) are still accepted. */
#define PDFSTAMP_WRITE_OPTS_VERSION 3
#define PDFSTAMP_WRITE_OPTS_INIT {PDFSTAMP_WRITE_OPTS_VERSION, NULL, 0, -1, NULL, NULL}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_write_opts_init(struct pdfstamp_write_opts *opts, unsigned version);

struct pdfstamp_result {
	unsigned version;         /* PDFSTAMP_RESULT_VERSION, set by the caller */
	int64_t base_length;      /* length of the input (the new section
	                           * starts here, after an EOL) */
	int64_t xref_offset;      /* offset of the new cross-reference section (new startxref) */
	int64_t bytes_appended;
	int nobjects;             /* annotation (stamp) or Info (meta) objects written */
	uint32_t *objects;        /* their object numbers, nobjects entries (owned) */
	int nwarnings;            /* warnings issued (also sent to the warning callback) */
	/* version 2 */
	char weak[64];            /* the file's handler is weak (RC4, or a key under 128 bits):
	                             why, e.g. "RC4 40-bit"; empty when strong or not encrypted */
	/* version 3 */
	int skipped;              /* pdfstamp_stamp: every selected page already had a stamp of
	                           * this ID; nothing was written (or locked, or synced) */
	int64_t pages_stamped;    /* pdfstamp_stamp: pages stamped */
	int64_t pages_already;    /* selected pages that already had a stamp of this ID */
	int has_bates;            /* the stamp numbered its pages ({bates}): */
	int64_t bates_first, bates_last; /* the first and last number this file got */
	char id[33];              /* pdfstamp_stamp: the stamp's ID */
};
/* Versions 1 (without weak) and 2 (without skipped...) are still accepted. */
#define PDFSTAMP_RESULT_VERSION 3
#define PDFSTAMP_RESULT_INIT {PDFSTAMP_RESULT_VERSION, 0, 0, 0, 0, NULL, 0, "", 0, 0, 0, 0, 0, 0, \
	""}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_result_init(struct pdfstamp_result *result, unsigned version);

/* Frees the list RES owns and zeroes everything but `version`.  NULL is
 * accepted.  pdfstamp_stamp and pdfstamp_meta take a RES initialised with
 * PDFSTAMP_RESULT_INIT (or NULL), release what it held first, and fill it
 * on success (on failure it may hold part of a list: clear it either
 * way). */
void pdfstamp_result_clear(struct pdfstamp_result *res);

/* ---- Journals of interrupted in-place updates ----------------------- */

/* Values of *recovered. */
#define PDFSTAMP_RECOVER_NONE 0        /* no journal: nothing to do */
#define PDFSTAMP_RECOVER_ROLLED_BACK 1 /* no longer returned: a whole update is kept (COMPLETED) */
#define PDFSTAMP_RECOVER_UNWRITTEN 2   /* the update never reached the file: journal removed */
#define PDFSTAMP_RECOVER_COMPLETED 3   /* the update is whole in the file: kept (synced), journal
                                          removed */
#define PDFSTAMP_RECOVER_TORN 4        /* a torn part of the update was in the file: cut off
                                          (truncated back, synced), journal removed */

/* Finishes an in-place update interrupted by a crash, if PATH has its
 * journal "PATH.pdfstamp-journal" (next to the file itself, where symbolic
 * links lead, so that every name of it finds the same journal).  Takes the
 * writers' lock on PATH first
 * (non-blocking: PDFSTAMP_E_IO if another process holds it), then reads
 * the journal.  The journal is believed only if it is a regular file (not
 * a symbolic link, FIFO, ...) owned by the effective user, with mode 0600
 * and one link, recording PATH's device and inode, a length L not larger
 * than PATH's size with the hash of the 4 KiB before L, and the length N
 * and SHA-256 of the bytes pdfstamp appended after L.  If PATH then has
 * exactly L+N bytes and the last N hash to that value, the update is
 * whole: it is kept (the file is fsynced, never changed) and the journal
 * removed (PDFSTAMP_RECOVER_COMPLETED).  If PATH still has exactly L bytes
 * (the update never reached it), only the journal is removed.  If it has
 * more than L but at most L+N, each byte after L the byte the journal's
 * copy of the update (format 4, updates up to 64 MiB; the journal's size
 * must be its record's plus N and the copy must hash to the record) has
 * there, or zero, the update is torn (a kill or a power failure during
 * its write): PATH is truncated back to L and fsynced, then the journal
 * removed (PDFSTAMP_RECOVER_TORN).  Anything else (other bytes, bytes
 * appended after the update, a torn update under a version-3 journal):
 * PDFSTAMP_E_FORMAT naming the reason, and nothing is changed.  The file
 * is never written, and truncated only back to L over a torn update.
 * A PATH that cannot be opened or is not a regular file: PDFSTAMP_E_IO,
 * without blocking.  pdfstamp_doc_open with
 * PDFSTAMP_OPEN_WRITE does the same under its own lock (and fails if the
 * journal is refused); read-only opens never modify anything and only
 * warn that a journal exists. */
int pdfstamp_recover(pdfstamp_ctx *ctx, const char *path, int *recovered);

/* *pending = 1 if something exists at PATH's journal name (whether or not
 * pdfstamp_recover would accept it), else 0.  Reads, changes and removes
 * nothing. */
int pdfstamp_journal_pending(pdfstamp_ctx *ctx, const char *path, int *pending);

/* ---- Stamping ----------------------------------------------------------- */

enum pdfstamp_position {
	PDFSTAMP_POS_TOP_RIGHT = 0,
	PDFSTAMP_POS_TOP_LEFT,
	PDFSTAMP_POS_BOTTOM_RIGHT,
	PDFSTAMP_POS_BOTTOM_LEFT,
	PDFSTAMP_POS_CENTER,
	/* version 3 of the options: the middles of the four edges (pdfstamp(1)
	 * PLACEMENT: the bounding box of the turned stamp is anchored, margin
	 * from the edges it touches, centred along the others) */
	PDFSTAMP_POS_TOP,
	PDFSTAMP_POS_BOTTOM,
	PDFSTAMP_POS_LEFT,
	PDFSTAMP_POS_RIGHT
};

/* Error-correction levels of a QR code (ISO/IEC 18004: about 7, 15, 25
 * and 30 per cent of the symbol may be lost). */
enum pdfstamp_qr_level {
	PDFSTAMP_QR_L = 0,
	PDFSTAMP_QR_M,
	PDFSTAMP_QR_Q,
	PDFSTAMP_QR_H
};

#define PDFSTAMP_PAGE_LAST (-1)
#define PDFSTAMP_PAGE_ALL 0

struct pdfstamp_stamp_opts {
	unsigned version;
	int64_t page;            /* 1-based, or PDFSTAMP_PAGE_LAST / PDFSTAMP_PAGE_ALL */
	const char *text;        /* visible text, UTF-8 (default "APPROVED") */
	const char *icon;        /* /Name of the stamp (default "Approved") */
	int has_rect;            /* use rect (default user space of the page) */
	double rect[4];
	enum pdfstamp_position position; /* when !has_rect; relative to the page as shown */
	double margin;           /* points from the page edges (default 36) */
	const char *author;      /* /T (optional) */
	const char *note;        /* /Contents, the popup text (default: text) */
	const char *date;        /* "now" (default) or ISO 8601 */
	double color[3];         /* RGB 0..1 (default dark red) */
	double opacity;          /* 0..1 (default 1) */
	int freetext;            /* write a /FreeText annotation instead of /Stamp */
	/* version 2 */
	const char *font;        /* font file (contains '/') or fontconfig family; NULL:
	                          * Helvetica-Bold for WinAnsi text, else the fonts
	                          * fontconfig finds for the text (see fonts) */
	const char *image;       /* PNG or JPEG file drawn in the stamp (optional) */
	const uint8_t *image_data; /* or the image's bytes when image is NULL (not kept) */
	size_t image_len;
	/* version 3 */
	const char *pages;       /* page expression, e.g. "1-3,7", "all,!1" (pdfstamp(1), Page
	                          * selection; pdfstamp_pages_check, below); not NULL:
	                          * overrides page */
	double offset[2];        /* DX, DY added to the anchored position, in points of the
	                          * page as shown (x right, y up); |DX|, |DY| <= 1e7 */
	double rotate;           /* degrees counter-clockwise on the page as shown, any finite
	                          * angle, about the stamp's centre; /Rect is the bounding
	                          * box of the turned stamp, shrunk to fit as needed */
	int diagonal;            /* turn along the page's diagonal, bottom left to top right
	                          * (rotate is then ignored) */
	double scale;            /* 0: natural size; else (0 < scale <= 10) the stamp's width
	                          * (before rotate) is scale times the width of the page as
	                          * shown; offset, rotate, diagonal and scale with has_rect:
	                          * PDFSTAMP_E_USAGE */
	double image_opacity;    /* of the image, 0 < F <= 1; negative: as opacity (which then
	                          * applies to the frame and the text) */
	const char *small;       /* template of the small line under the text; NULL: the
	                          * default "{author}  {date}", "": none */
	const char *file_name;   /* what {file} stands for (its base name is used) */
	int64_t bates_start;     /* the first number of {bates} in a batch (default 1) */
	int64_t bates_offset;    /* numbers earlier files of the batch took (default 0):
	                          * this file's first is bates_start + bates_offset */
	const char *bates_prefix; /* before the number (default none) */
	int bates_digits;        /* zero-padded to this many digits (default 6) */
	const char *qr;          /* template of a QR code drawn in the stamp (optional): its
	                          * UTF-8 bytes, black on white, left of the text or, when
	                          * text, image and image_data are NULL, alone; too long
	                          * for qr_level (2953/2331/1663/1273 bytes, one less if
	                          * not ASCII): PDFSTAMP_E_USAGE */
	enum pdfstamp_qr_level qr_level; /* default PDFSTAMP_QR_M */
	const char *const *fonts; /* fallback fonts after font, nfonts of them (at most
	                           * 23, none NULL), each as font; then installed fonts
	                           * for characters none of them has (pdfstamp(1)
	                           * --text) */
	size_t nfonts;
	const char *id;          /* the stamp's ID, 1 to 32 of [A-Za-z0-9_-]; NULL: derived
	                          * from the options that define the stamp (pdfstamp(1)
	                          * Stamp IDs; pdfstamp_stamp_id) */
};
#define PDFSTAMP_STAMP_OPTS_VERSION 3
#define PDFSTAMP_STAMP_OPTS_INIT {PDFSTAMP_STAMP_OPTS_VERSION, 1, NULL, NULL, 0, {0, 0, 0, 0}, \
	PDFSTAMP_POS_TOP_RIGHT, 36.0, NULL, NULL, NULL, {0.75, 0.05, 0.05}, 1.0, 0, NULL, NULL, \
	NULL, 0, NULL, {0, 0}, 0, 0, 0, -1.0, NULL, NULL, 1, 0, NULL, 6, NULL, PDFSTAMP_QR_M, \
	NULL, 0, NULL}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_stamp_opts_init(struct pdfstamp_stamp_opts *opts, unsigned version);

/* What the templates of OPTS use (pdfstamp_stamp_uses). */
#define PDFSTAMP_USES_BATES 0x1    /* {bates}: numbers that continue across files */
#define PDFSTAMP_USES_PER_PAGE 0x2 /* a variable that differs per page ({page}, {bates}) */

/* Checks the templates of OPTS (text, small line, QR) and the Bates
 * options without a document, and sets *USES to the PDFSTAMP_USES_* bits
 * of what they use: a caller numbering a batch ({bates}) must stamp its
 * files one after the other and set bates_offset of each to the numbers
 * the earlier ones took (pages_stamped + pages_already of their results).
 * A syntax error or an unknown variable: PDFSTAMP_E_USAGE naming it. */
int pdfstamp_stamp_uses(pdfstamp_ctx *ctx, const struct pdfstamp_stamp_opts *opts,
                        unsigned *uses);

/* Page selections (the `pages` field above; pdfstamp(1), Page selection).
 * Comma-separated items, applied left to right: N, N-M (reversed ends name
 * the same pages), N- (to the last page), -N (the N-th page from the last:
 * -1 is the last), first, last, all, odd, even; "!ITEM" removes what ITEM
 * names ("all,!1", "1-10,!5"), and an expression that starts with an
 * exclusion starts from all pages ("!1" is "all,!1").  Blanks around items
 * are allowed.  Every page an item names must exist: a number beyond the
 * page count, and a selection that is left empty, are PDFSTAMP_E_USAGE
 * with a message naming the page count ("page 20 does not exist (the
 * document has 12)", "... selects no page of the 12").
 * pdfstamp_pages_check checks EXPR as pdfstamp_stamp would for a document
 * of NPAGES pages and sets *COUNT (if not NULL) to the number of pages it
 * selects; NPAGES < 1 checks the syntax and the numbers only (a program
 * checks an option once before opening any file), *COUNT then counts up
 * to the largest page number, 2^53. */
int pdfstamp_pages_check(pdfstamp_ctx *ctx, const char *expr, int64_t npages, int64_t *count);

/* Adds a stamp annotation with an appearance stream to the chosen page(s)
 * as one incremental update.  Requires the annotation permission (P bit 6)
 * or the owner password (PDFSTAMP_E_PERM otherwise), and refuses files
 * certified with DocMDP P=1 or P=2 (PDFSTAMP_E_PERM). */
int pdfstamp_stamp(pdfstamp_doc *doc, const struct pdfstamp_stamp_opts *opts,
                   const struct pdfstamp_write_opts *wopts, struct pdfstamp_result *result);

/* Stamp IDs: re-runs never stamp a page twice.  Every annotation
 * pdfstamp_stamp writes has /NM = ID "." N, N the decimal 1-based number of
 * its page (e.g. "Kx3_a9Qm2Z.12").  Before anything is written (nothing
 * created, locked beyond the open, written or synced), each selected page's
 * /Annots is read: a page that has an annotation with exactly that /NM is
 * left out.  If every selected page has it, the call returns 0 with
 * result->skipped = 1 and nothing written (with PDFSTAMP_WRITE_DEFER: no
 * update pending, pdfstamp_doc_journal and pdfstamp_doc_commit return 0 at
 * once); else the other pages are stamped.  Result version 3 reports id,
 * pages_stamped and pages_already.  An entry of /Annots that cannot be read
 * draws a warning and does not match; an /Annots of more than 100,000
 * entries is PDFSTAMP_E_FORMAT.  opts->id not 1 to 32 of [A-Za-z0-9_-]:
 * PDFSTAMP_E_USAGE.
 * The default ID (opts->id NULL) is 10 base64url characters of the SHA-256
 * of these options, in a versioned canonical form: text, small, note,
 * icon, author, freetext, font and fonts (as given), the image (the SHA-256
 * of its bytes, not its path), rect (with has_rect), position, margin,
 * offset, rotate, diagonal, scale, color, opacity, image_opacity, qr,
 * qr_level, bates_start, bates_prefix, bates_digits, and date as given
 * ("now" stays "now", so that a re-run matches).  The page selection (page,
 * pages), file_name and bates_offset are not part of it: the same stamp
 * over other pages or files has the same ID.  pdfstamp_stamp_id writes the
 * ID that OPTS give (opts->id, else the default; an image is read and
 * checked) and a NUL into ID: 0, or PDFSTAMP_E_USAGE and the image's
 * errors. */
int pdfstamp_stamp_id(pdfstamp_ctx *ctx, const struct pdfstamp_stamp_opts *opts, char id[33]);

/* ---- Metadata ------------------------------------------------------------- */

struct pdfstamp_meta_item {
	const char *key;      /* Info key without '/', e.g. "Title" */
	const char *value;    /* UTF-8, or NULL to remove the key */
};

struct pdfstamp_meta_opts {
	unsigned version;
	const struct pdfstamp_meta_item *items;
	size_t nitems;
	int xmp;              /* also update (or create) the XMP /Metadata stream */
	const char *date;     /* ModDate: "now" (default) or ISO 8601 */
};
#define PDFSTAMP_META_OPTS_VERSION 1
#define PDFSTAMP_META_OPTS_INIT {PDFSTAMP_META_OPTS_VERSION, NULL, 0, 0, NULL}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_meta_opts_init(struct pdfstamp_meta_opts *opts, unsigned version);

/* Writes a new version of the Info dictionary (and of the XMP stream with
 * opts->xmp) as one incremental update.  Requires the modify permission
 * (P bit 4) or the owner password; refuses DocMDP P=1. */
int pdfstamp_meta(pdfstamp_doc *doc, const struct pdfstamp_meta_opts *opts,
                  const struct pdfstamp_write_opts *wopts, struct pdfstamp_result *result);

/* ---- Long-term validation data: the Document Security Store ------------------ */

enum pdfstamp_dss_kind {
	PDFSTAMP_DSS_CERT = 1,   /* X.509 certificate: one DER certificate, or PEM with one or more
	                            CERTIFICATE blocks */
	PDFSTAMP_DSS_OCSP = 2,   /* one DER OCSPResponse (RFC 6960 4.2.1): successful, basic */
	PDFSTAMP_DSS_CRL = 3     /* X.509 CRL: one DER CRL, or PEM with one
	                          * or more X509 CRL blocks */
};

/* One input: the bytes of a file, which the call reads but does not keep. */
struct pdfstamp_dss_input {
	enum pdfstamp_dss_kind kind;
	const char *name;        /* names the input in messages (a file name); NULL: "input N" */
	const uint8_t *data;
	size_t len;              /* at most PDFSTAMP_DSS_MAX_INPUT */
};
#define PDFSTAMP_DSS_MAX_INPUT (64u << 20)   /* bytes of one input */
#define PDFSTAMP_DSS_MAX_INPUTS 10000        /* inputs, and DER items after PEM splitting */

/* One reply that pdfstamp_dss with opts->fetch fetched, took from the
 * cache, or failed to get, told as it happens (the strings are valid
 * during the call only). */
struct pdfstamp_fetch_event {
	const char *url;
	const char *what;        /* "ocsp", "crl" or "cert" (a caIssuers certificate) */
	long status;             /* HTTP status of the reply, 0 if none (or from the cache) */
	size_t bytes;            /* of the reply's body */
	int from_cache;          /* 1 if read from opts->cache_dir, no request sent */
	const char *error;       /* NULL, or why the reply could not be had, or
	                          * "refused: " and why its checks refused it */
};
typedef void (*pdfstamp_fetch_fn)(void *userdata, const struct pdfstamp_fetch_event *event);

struct pdfstamp_dss_opts {
	unsigned version;
	const struct pdfstamp_dss_input *inputs;
	size_t ninputs;          /* at least one, unless fetch */
	int vri;                 /* also a /VRI entry per signature (pdfstamp(1), dss) */
	/* version 2: fetching the validation data of the file's signatures */
	int fetch;               /* fetch chain, OCSP and CRLs for every signature and document
	                          * timestamp (pdfstamp(1), dss --fetch); network only then */
	const char *cache_dir;   /* with fetch: keep and reuse replies there (NULL: none) */
	int offline;             /* with fetch: never open a socket, the cache only */
	long timeout_ms;         /* with fetch: per request, connecting included; 0: 10 s */
	pdfstamp_fetch_fn on_fetch; /* with fetch: told of each reply (may be NULL) */
	void *on_fetch_userdata;
};
#define PDFSTAMP_DSS_OPTS_VERSION 2
#define PDFSTAMP_DSS_OPTS_INIT {PDFSTAMP_DSS_OPTS_VERSION, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_dss_opts_init(struct pdfstamp_dss_opts *opts, unsigned version);

/* Checks every input of OPTS without a document: PEM split into DER,
 * certificates and CRLs parsed with mbedTLS, OCSP responses checked to be
 * successful basic OCSPResponse structures.  PDFSTAMP_E_FORMAT names the
 * first bad input; PDFSTAMP_E_USAGE for bad options.  pdfstamp_dss does
 * the same checks itself first. */
int pdfstamp_dss_check(pdfstamp_ctx *ctx, const struct pdfstamp_dss_opts *opts);

/* Adds the inputs to the catalog's /DSS (ISO 32000-2 12.8.4.3): /Certs,
 * /OCSPs and /CRLs arrays of new, unfiltered streams holding the DER bytes
 * (encrypted like any new stream), existing entries kept, an item whose
 * bytes an entry of its array already holds (or an earlier input) not
 * added again; with opts->vri, /VRI entries keyed by the SHA-1 of each
 * signature's /Contents.  One incremental update, after the same
 * pre-flight as the other writers.  If there is nothing new to add,
 * nothing is written (not even an -o output file): RESULT then has
 * nobjects 0 and bytes_appended 0. */
int pdfstamp_dss(pdfstamp_doc *doc, const struct pdfstamp_dss_opts *opts,
                 const struct pdfstamp_write_opts *wopts, struct pdfstamp_result *result);

/* ---- Document timestamps (RFC 3161) ----------------------------------------- */

struct pdfstamp_timestamp_opts {
	unsigned version;
	const char *tsa_url;     /* the time-stamping authority: http:// or https:// */
	int hash_bits;           /* the messageImprint's SHA-2: 256 (also 0), 384 or 512 */
	size_t reserve;          /* bytes kept for the token in /Contents; 0: sized from a
	                          * first request's token (one more round trip) */
	const char *tsa_ca;      /* PEM or DER file of CA certificates the TSA certificate must
	                          * chain to, or NULL: not checked (the caller's business) */
	const char *tsa_user;    /* HTTP basic authentication, or NULL */
	const char *tsa_password;    /* its password (tsa_password_len bytes; the library
	                              * copies nothing and logs nothing of it) */
	size_t tsa_password_len;
	long timeout_ms;         /* each request's total time; 0: 10000 */
	/* version 2 */
	size_t reserve_hint;     /* with reserve 0: the placeholder to try instead of a first
	                          * request (64 to 524288; e.g. info->reserve of an earlier
	                          * file of a batch); a token that does not fit it makes the
	                          * update be built again, once, sized from that token */
	const struct pdfstamp_dss_opts *lta; /* NULL, or PAdES B-LTA: the validation data of
	                          * the token's own chain (certificates, OCSP or CRLs, fetched
	                          * as pdfstamp_dss with fetch does, with this structure's
	                          * cache_dir, offline, timeout_ms, on_fetch and vri; its
	                          * inputs and fetch are ignored) added in a second update */
};
#define PDFSTAMP_TIMESTAMP_OPTS_VERSION 2
#define PDFSTAMP_TIMESTAMP_OPTS_INIT {PDFSTAMP_TIMESTAMP_OPTS_VERSION, NULL, 256, 0, NULL, NULL, \
	NULL, 0, 0, 0, NULL}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_timestamp_opts_init(struct pdfstamp_timestamp_opts *opts, unsigned version);

/* What pdfstamp_timestamp got (filled on success). */
struct pdfstamp_timestamp_info {
	unsigned version;
	char gen_time[32];       /* the token's genTime (GeneralizedTime, e.g. 20261205140000Z) */
	char tsa[256];           /* the TSA certificate's subject */
	char serial[96];         /* the token's serialNumber, hexadecimal */
	uint32_t sig_obj;        /* object number of the /DocTimeStamp dictionary */
	size_t token_len;        /* bytes of the token */
	size_t reserve;          /* bytes the /Contents placeholder held */
	int requests;            /* requests sent to the TSA (2 when the size was probed) */
	long http_status;        /* of the last reply */
	int64_t bytes_hashed;    /* bytes the /ByteRange covers */
	/* version 2: with opts->lta */
	struct pdfstamp_result *lta_result; /* set by the caller: the second update's result
	                          * (initialised like any result; NULL: not kept; with
	                          * PDFSTAMP_WRITE_DEFER it must outlive the commit) */
	int lta_certs, lta_ocsps, lta_crls; /* items got for the token's chain (those /DSS
	                          * already held are not added again) */
};
#define PDFSTAMP_TIMESTAMP_INFO_VERSION 2
#define PDFSTAMP_TIMESTAMP_INFO_INIT {PDFSTAMP_TIMESTAMP_INFO_VERSION, "", "", "", 0, 0, 0, 0, \
	0, 0, NULL, 0, 0, 0}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_timestamp_info_init(struct pdfstamp_timestamp_info *info, unsigned version);

/* Appends a document timestamp (ISO 32000-2 12.8.5; PAdES B-LTA) as one
 * incremental update: an invisible signature field (widget on the first
 * page, in /AcroForm /Fields, /SigFlags 3) whose value is a /Type
 * /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 dictionary;
 * its /Contents (a placeholder of opts->reserve bytes, never encrypted)
 * holds the RFC 3161 token over the hash of the /ByteRange bytes, all
 * of the file but /Contents, read once.  Everything else the update adds
 * is encrypted under the file's handler.  The update is built, hashed and
 * time-stamped before anything is written (the token is checked: status,
 * nonce, messageImprint, its signature with the TSA certificate it
 * carries, that certificate's critical id-kp-timeStamping usage, the ESS
 * signing-certificate attribute naming it, its chain with
 * opts->tsa_ca), then written as every update (in place: journal, durable
 * before the call returns); any failure leaves the file as it was.
 * PDFSTAMP_E_IO: the TSA could not be reached (refused, timeout) or
 * answered with an HTTP status other than 200; PDFSTAMP_E_FORMAT: its reply
 * is not a valid token for this request, or the token does not fit
 * opts->reserve; the same pre-flight as pdfstamp_dss (permission bit 4
 * or the owner password; allowed under every DocMDP level).  A dry run
 * sends nothing (with reserve 0 it assumes 8192 bytes).  INFO (may be NULL)
 * must be initialised with PDFSTAMP_TIMESTAMP_INFO_INIT.
 *
 * With opts->lta (PAdES B-LTA; timestamp.c note 6): once the token is
 * checked, and still before anything is written, the validation data of
 * its chain is got (pdfstamp_dss's fetch: the issuers, an OCSP response or
 * a CRL for each certificate, each checked); a failure there leaves the
 * file as it was.  The timestamp's update is then committed at once (even
 * with PDFSTAMP_WRITE_DEFER; the durable hook runs for it), and the data
 * is added to /DSS (with lta->vri, a /VRI entry for the timestamp) as a
 * second update, written as WOPTS says: in place on the same descriptor
 * and lock, or appended in place to the new file -o wrote (nothing if
 * /DSS holds it all already).  If that second update fails (an I/O error,
 * a file changed under us), the timestamp stays, the call fails with the
 * second update's error and says so; `pdfstamp dss --fetch` can add the
 * data later.  Not with PDFSTAMP_WRITE_TO_FD (PDFSTAMP_E_USAGE).  A dry run
 * shows the timestamp's update only. */
int pdfstamp_timestamp(pdfstamp_doc *doc, const struct pdfstamp_timestamp_opts *opts,
                       const struct pdfstamp_write_opts *wopts, struct pdfstamp_result *result,
                       struct pdfstamp_timestamp_info *info);

/* ---- Full rewrite: key rotation and encryption ------------------------------ */

/* Called now and then during long work with bytes done and the total. */
typedef void (*pdfstamp_progress_fn)(void *userdata, int64_t done, int64_t total);

/* One recipient of a certificate-encrypted output. */
struct pdfstamp_recipient {
	const uint8_t *cert;         /* X.509 certificate with an RSA key, PEM or DER */
	size_t cert_len;
	int set_permissions;         /* 1: PERMISSIONS; 0: the rewrite's (set_permissions and
	                                permissions above, else those in force now) */
	int64_t permissions;         /* as /P */
};

struct pdfstamp_rewrite_opts {
	unsigned version;
	const char *output;          /* new file; NULL with PDFSTAMP_WRITE_IN_PLACE (temp + rename
	                                over the input) or PDFSTAMP_WRITE_TO_FD */
	unsigned flags;              /* PDFSTAMP_WRITE_IN_PLACE, PDFSTAMP_WRITE_TO_FD,
	                                PDFSTAMP_WRITE_DRY_RUN, PDFSTAMP_REWRITE_FORCE */
	const char *user_password;   /* UTF-8, SASLprep'd ("stored" profile) */
	size_t user_len;
	const char *owner_password;
	size_t owner_len;
	int set_permissions;         /* use `permissions` instead of keeping /P */
	int64_t permissions;         /* /P, e.g. from pdfstamp_parse_permissions */
	int jobs;                    /* worker threads; 0 = number of online CPUs */
	pdfstamp_progress_fn progress;
	void *progress_ud;
	int output_fd;               /* version 2: the descriptor of
	                              * PDFSTAMP_WRITE_TO_FD, else ignored */
	/* version 3 */
	const struct pdfstamp_recipient *recipients; /* encrypt to these certificates
	                              * (public-key handler, adbe.pkcs7.s5 with AESV3) instead of
	                              * to passwords: the password fields are then ignored */
	size_t nrecipients;
};
#define PDFSTAMP_REWRITE_FORCE 0x100  /* rewrite even if signatures or /SigFlags AppendOnly exist */
/* 0x200 is reserved and ignored (it asked an earlier version to map the
 * output for its self-check). */
/* Versions 1 (without output_fd) and 2 (without recipients) are still accepted. */
#define PDFSTAMP_REWRITE_OPTS_VERSION 3
#define PDFSTAMP_REWRITE_OPTS_INIT {PDFSTAMP_REWRITE_OPTS_VERSION, NULL, 0, NULL, 0, NULL, 0, 0, \
	-4, 0, NULL, NULL, -1, NULL, 0}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_rewrite_opts_init(struct pdfstamp_rewrite_opts *opts, unsigned version);

struct pdfstamp_rewrite_stats {
	unsigned version;            /* PDFSTAMP_REWRITE_STATS_VERSION, set by the caller */
	int64_t objects;             /* objects written */
	int64_t streams;             /* streams re-encrypted */
	int64_t strings;             /* strings re-encrypted */
	int64_t payload_bytes;       /* stream bytes pushed through AES
	                              * (decrypt + encrypt counted once) */
	double crypto_seconds;       /* summed CPU time spent in AES by all
	                              * workers (decrypt + encrypt) */
	double decrypt_seconds;      /* of which decrypting the old ciphertext */
	double encrypt_seconds;      /* of which encrypting (multi-lane batches) */
	double seconds;              /* wall time of the whole rewrite */
	int64_t bytes_written;       /* with PDFSTAMP_WRITE_DRY_RUN: the bytes it would write */
	int jobs;
};
#define PDFSTAMP_REWRITE_STATS_VERSION 1
#define PDFSTAMP_REWRITE_STATS_INIT {PDFSTAMP_REWRITE_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_rewrite_stats_init(struct pdfstamp_rewrite_stats *stats, unsigned version);

/* Rotation (ISO 32000-2 7.6.4.4): a new random file key, new /U /UE /O
 * /OE /Perms for the new passwords (always R6), every string and stream
 * re-encrypted, one clean revision written to a temp file that is fsynced,
 * verified and renamed over the target.  Needs the owner password (or the
 * user password when the owner password is empty). */
int pdfstamp_rotate(pdfstamp_doc *doc, const struct pdfstamp_rewrite_opts *opts,
                    struct pdfstamp_rewrite_stats *stats);
/* Encrypts a plaintext document the same way (PDFSTAMP_E_USAGE if it is
 * already encrypted). */
int pdfstamp_encrypt(pdfstamp_doc *doc, const struct pdfstamp_rewrite_opts *opts,
                     struct pdfstamp_rewrite_stats *stats);

/* Parses a permission list such as "print,copy,annotate" (names of
 * pdfstamp_perm_name, "all" or "none") into a /P value for R6. */
int pdfstamp_parse_permissions(pdfstamp_ctx *ctx, const char *list, int64_t *p);

struct pdfstamp_verify_report {
	unsigned version;            /* PDFSTAMP_VERIFY_REPORT_VERSION, set by the caller */
	int64_t objects, streams, strings;
	int64_t faults;              /* objects that failed to parse or decrypt */
	int64_t first_fault_object;
	char first_fault[256];
};
#define PDFSTAMP_VERIFY_REPORT_VERSION 1
#define PDFSTAMP_VERIFY_REPORT_INIT {PDFSTAMP_VERIFY_REPORT_VERSION, 0, 0, 0, 0, 0, ""}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_verify_report_init(struct pdfstamp_verify_report *report, unsigned version);

struct pdfstamp_verify_opts {
	unsigned version;            /* PDFSTAMP_VERIFY_OPTS_VERSION */
	pdfstamp_progress_fn progress; /* called now and then with bytes done
	                                * and the total; NULL: none */
	void *progress_ud;
};
#define PDFSTAMP_VERIFY_OPTS_VERSION 1
#define PDFSTAMP_VERIFY_OPTS_INIT {PDFSTAMP_VERIFY_OPTS_VERSION, NULL, NULL}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_verify_opts_init(struct pdfstamp_verify_opts *opts, unsigned version);

/* Reads and decrypts every live object, string and stream (padding
 * checked), checks /Perms and that every xref entry points at its object.
 * OPTS (PDFSTAMP_VERIFY_OPTS_INIT, then a progress callback if wanted) and
 * REPORT (PDFSTAMP_VERIFY_REPORT_INIT) are required.  Returns
 * PDFSTAMP_E_FORMAT if anything failed (details in REPORT). */
int pdfstamp_verify(pdfstamp_doc *doc, const struct pdfstamp_verify_opts *opts,
                    struct pdfstamp_verify_report *report);

/* ---- Auditing a signed document (pdfstamp audit) ---------------------- */

/* What a change after a signature touches (pdfstamp_audit). */
enum pdfstamp_change_kind {
	PDFSTAMP_CHANGE_OTHER = 0,       /* anything else (a new object nothing classifies) */
	PDFSTAMP_CHANGE_ANNOTATION,      /* an annotation, or a page whose only change is /Annots */
	PDFSTAMP_CHANGE_FORM_FIELD,      /* a form field's value (/V) or a widget's appearance */
	PDFSTAMP_CHANGE_SIGNATURE,       /* a new signature field or signature value */
	PDFSTAMP_CHANGE_DSS,             /* the catalog's /DSS, its /VRI and streams */
	PDFSTAMP_CHANGE_DOC_TIMESTAMP,   /* a /Type /DocTimeStamp signature */
	PDFSTAMP_CHANGE_METADATA,        /* /Info, the XMP /Metadata stream */
	PDFSTAMP_CHANGE_PAGE_CONTENT,    /* a page's /Contents or /Resources, content streams */
	PDFSTAMP_CHANGE_PAGE_TREE,       /* /Pages nodes, /Kids, /Count, other keys of a page */
	PDFSTAMP_CHANGE_CATALOG,         /* other keys of the catalog, or another /Root */
	PDFSTAMP_CHANGE_ENCRYPTION,      /* the encryption dictionary */
	PDFSTAMP_CHANGE_DAMAGED          /* a later revision that cannot be read as written, an
	                                    object its cross-reference data does not list, or an
	                                    entry that does not lead to the object it names */
};
#define PDFSTAMP_CHANGE_KINDS 12
/* "other", "annotation", "form-field", "signature", "dss", "doc-timestamp",
 * "metadata", "page-content", "page-tree", "catalog", "encryption",
 * "damaged"; NULL for any other value. */
const char *pdfstamp_change_kind_name(int kind);

/* Is a change of KIND after a signature with DocMDP level DOCMDP (0 for
 * an approval signature, 1..3 for a certification) permitted?  EXISTED:
 * the object existed when the signature was made (a new object of kind
 * OTHER is reachable only through a changed object, judged on its own).
 * The one rule table of pdfstamp_audit and of the writers' pre-flight;
 * FieldMDP locks are judged by field name on top of it (pdfstamp(1),
 * AUDIT). */
int pdfstamp_policy_allows(int docmdp, int kind, int existed);

/* Action of a change. */
#define PDFSTAMP_CHANGE_ADDED 1
#define PDFSTAMP_CHANGE_MODIFIED 2
#define PDFSTAMP_CHANGE_FREED 3

struct pdfstamp_audit_change {
	int64_t object;              /* object number */
	int generation;
	int kind;                    /* enum pdfstamp_change_kind */
	int action;                  /* PDFSTAMP_CHANGE_ADDED, _MODIFIED or _FREED */
	int forbidden;               /* some signature's policy forbids it */
	int signature;               /* index into sigs of the first signature it breaks, -1 */
	char field[128];             /* form-field changes: the field's full name, else "" */
	char reason[160];            /* why a change is judged as it is when that is not its kind
	                                alone (e.g. "generation changed", "policy object of the
	                                signature"), else "" */
};

struct pdfstamp_audit_revision {
	int64_t offset;              /* of its cross-reference section */
	enum pdfstamp_xref_kind xref;
	int64_t added, modified, freed; /* object counts of its own section */
	int audited;                 /* newer than the first signature: changes classified */
	int nchanges;
	struct pdfstamp_audit_change *changes; /* audited revisions only (owned) */
};

/* FieldMDP /Action of a lock. */
#define PDFSTAMP_FIELDMDP_NONE 0
#define PDFSTAMP_FIELDMDP_ALL 1
#define PDFSTAMP_FIELDMDP_INCLUDE 2
#define PDFSTAMP_FIELDMDP_EXCLUDE 3

struct pdfstamp_audit_sig {
	char field[128];             /* full field name (truncated) */
	int64_t objnum;              /* the signature dictionary, 0 if direct */
	int revision;                /* the one its /ByteRange ends in, 1 the oldest; 0 unknown */
	int covers_revision;         /* the /ByteRange ends exactly at that revision's end */
	int docmdp;                  /* 0 approval, else the certification's DocMDP /P */
	int doc_timestamp;           /* /Type /DocTimeStamp */
	int fieldmdp;                /* PDFSTAMP_FIELDMDP_* (the /Reference
	                              * FieldMDP or the /Lock) */
	int nfields;                 /* the locked field names (Include/Exclude) */
	char **fields;               /* (owned) */
	char subfilter[64];
	int violated;                /* a change after it breaks its policy */
};

#define PDFSTAMP_AUDIT_OK 0
#define PDFSTAMP_AUDIT_VIOLATION 1
#define PDFSTAMP_AUDIT_UNSIGNED 2

struct pdfstamp_audit_report {
	unsigned version;            /* PDFSTAMP_AUDIT_REPORT_VERSION, set by the caller */
	int verdict;                 /* PDFSTAMP_AUDIT_OK, _VIOLATION or _UNSIGNED */
	int nsigs;
	struct pdfstamp_audit_sig *sigs; /* in field tree order (owned) */
	int nrevisions;
	struct pdfstamp_audit_revision *revisions; /* oldest first (owned) */
	int64_t forbidden;           /* forbidden changes in all */
	int64_t bytes_read;          /* distinct bytes of the file read so
	                              * far (as pdfstamp_info's) */
	unsigned flags;              /* PDFSTAMP_AUDIT_*, set by the caller (kept by *_clear) */
};
#define PDFSTAMP_AUDIT_REPORT_VERSION 1
#define PDFSTAMP_AUDIT_REPORT_INIT {PDFSTAMP_AUDIT_REPORT_VERSION, 0, 0, NULL, 0, NULL, 0, 0, 0}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_audit_report_init(struct pdfstamp_audit_report *report, unsigned version);
/* flags: the stricter reading of certifications (pdfstamp(1), AUDIT):
 * after P=3 only text notes (/Text, /Popup) may be added, and an added
 * annotation over a signature's widget is forbidden; after P=1 a DSS and a
 * document timestamp are changes too (Acrobat's reading).  Without it:
 * ISO 32000-2 with its errata. */
#define PDFSTAMP_AUDIT_STRICT 0x1
/* Walks the revision chain and every signature of an authenticated (or
 * plaintext) DOC and classifies each change made after each signature by
 * comparing the decrypted objects of the revisions (pdfstamp(1), AUDIT).
 * A violation is a verdict in REPORT, not an error: the call returns 0;
 * PDFSTAMP_E_FORMAT / _UNSUPPORTED for a damaged or unauditable file.
 * Release REPORT with pdfstamp_audit_clear on success and failure alike. */
int pdfstamp_audit(pdfstamp_doc *doc, struct pdfstamp_audit_report *report);
/* Frees what REPORT owns and zeroes everything but `version`; NULL is
 * accepted. */
void pdfstamp_audit_clear(struct pdfstamp_audit_report *report);
/* Writes the first REVISION revisions of DOC (1 = the oldest, as the
 * report numbers them) to PATH: the file's bytes up to the %%EOF that
 * closes that revision, byte for byte (still encrypted), which is what a
 * signature of that revision covers ("view signed version").  PATH is
 * replaced atomically (temporary file, fsync, rename); it must not be DOC's
 * own file (PDFSTAMP_E_USAGE).  *LENGTH (may be NULL): the bytes written. */
int pdfstamp_audit_extract(pdfstamp_doc *doc, int revision, const char *path, int64_t *length);

/* ---- Listing and removing stamps (pdfstamp stamps, pdfstamp unstamp) ------- */

/* One /Stamp or /FreeText annotation of a page (ISO 32000-2 12.5.6.12,
 * 12.5.6.6).  Text fields are UTF-8 (PDFDocEncoding and UTF-16 text strings
 * converted), "" when the entry is missing or not a string. */
struct pdfstamp_stamp_info {
	int64_t page;                /* 1-based page whose /Annots holds it */
	int64_t objnum;              /* the annotation's object, 0 if direct in /Annots */
	int generation;
	char subtype[16];            /* "Stamp" or "FreeText" */
	int has_rect;                /* rect holds /Rect (normalised x1 y1 x2 y2) */
	double rect[4];
	char *contents;              /* /Contents (owned) */
	char *author;                /* /T (owned) */
	char date[32];               /* /M as ISO 8601 (YYYY-MM-DDTHH:MM:SS and Z or +HH:MM),
	                                "" if missing or not a PDF date */
	char *nm;                    /* /NM (owned) */
	char id[33];                 /* the stamp ID /NM carries (ID "." page, pdfstamp(1) STAMP
	                                IDS), "" if none */
	int revision;                /* the revision that added it, 1 = the original file;
	                                0 for a direct annotation, or one that no section
	                                lists in use with its generation (see
	                                pdfstamp_stamps_list) */
	int64_t revision_end;        /* where that revision's bytes end (just past its
	                                %%EOF line), -1 if unknown */
	int signed_revision;         /* 1: a signature covers that revision, 0: none does,
	                                -1: unknown (the signatures could not be judged, or
	                                a direct annotation in a signed file) */
};

struct pdfstamp_stamps {
	unsigned version;            /* PDFSTAMP_STAMPS_VERSION, set by the caller */
	int64_t pages;               /* pages walked */
	int revisions;               /* revisions of the file (cross-reference sections) */
	int nsigs;                   /* signatures found (pdfstamp_audit's), -1 unknown */
	int64_t nstamps;
	struct pdfstamp_stamp_info *stamps; /* page order, then /Annots order (owned) */
	int64_t skipped;             /* /Annots entries that could not be read (a warning each
	                                for the first few) or past PDFSTAMP_STAMPS_MAX_ANNOTS */
};
#define PDFSTAMP_STAMPS_VERSION 1
#define PDFSTAMP_STAMPS_INIT {PDFSTAMP_STAMPS_VERSION, 0, 0, 0, 0, NULL, 0}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_stamps_init(struct pdfstamp_stamps *list, unsigned version);
/* /Annots entries read per page; the rest of a longer array is skipped. */
#define PDFSTAMP_STAMPS_MAX_ANNOTS 100000

/* Lists the /Stamp and /FreeText annotations of every page of an
 * authenticated (or plaintext) DOC into LIST, whichever program wrote
 * them.  The revision that added an annotation object N with generation
 * G: the oldest revision of the unbroken run, going back from the newest
 * cross-reference section that lists N, of sections that list N in use
 * with generation G (a compressed entry has generation 0); sections that
 * do not mention N do not break the run.  A later revision that only
 * changed the annotation does not move it.  A signature covers revision R
 * when its /ByteRange ends at R's end or in a later revision (as
 * pdfstamp_audit places it).  Annotations or /Annots entries that cannot be
 * read (a string that does not decrypt, a missing object, not a
 * dictionary) are skipped with a warning; a damaged page tree is an
 * error.  Release LIST with pdfstamp_stamps_clear on success and failure
 * alike. */
int pdfstamp_stamps_list(pdfstamp_doc *doc, struct pdfstamp_stamps *list);
/* Frees what LIST owns and zeroes everything but `version`; NULL is
 * accepted. */
void pdfstamp_stamps_clear(struct pdfstamp_stamps *list);

struct pdfstamp_unstamp_opts {
	unsigned version;            /* PDFSTAMP_UNSTAMP_OPTS_VERSION */
	const char *id;              /* the stamp ID to remove: 1 to 32 of [A-Za-z0-9_-] */
};
#define PDFSTAMP_UNSTAMP_OPTS_VERSION 1
#define PDFSTAMP_UNSTAMP_OPTS_INIT {PDFSTAMP_UNSTAMP_OPTS_VERSION, NULL}
/* The macro as a function (see Versioned structs, above). */
int pdfstamp_unstamp_opts_init(struct pdfstamp_unstamp_opts *opts, unsigned version);

/* Removes from every page's /Annots each /Stamp or /FreeText annotation
 * whose stamp ID (pdfstamp_stamps_list's id) is opts->id, as one incremental
 * update: a new version of each page that holds one (every other key
 * kept), or of the indirect /Annots array it names; the annotation
 * objects themselves stay in the file, no longer reachable.  The
 * pre-flight of pdfstamp_stamp first (removing an annotation is an
 * annotation change, ISO 32000-2 12.8.2.2): the annotation permission (P
 * bit 6) or the owner password, and no signature whose policy forbids it
 * (DocMDP P=1, P=2: PDFSTAMP_E_PERM); P=3 allows it.  An approval
 * signature permits new annotations, not the removal of one that existed
 * when it was made (pdfstamp_audit's rule): a stamp added in or before the
 * revision an approval signature covers is refused (PDFSTAMP_E_PERM),
 * nothing written.  RESULT (as for
 * pdfstamp_stamp) lists the annotations removed in objects (0 for a
 * direct one).  If none has the ID, nothing is written (not even an -o
 * output file): RESULT has nobjects 0,
 * bytes_appended 0 and skipped 1. */
int pdfstamp_unstamp(pdfstamp_doc *doc, const struct pdfstamp_unstamp_opts *opts,
                     const struct pdfstamp_write_opts *wopts, struct pdfstamp_result *result);

#ifdef __cplusplus
}
#endif
#endif
