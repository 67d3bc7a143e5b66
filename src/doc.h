/* SPDX-License-Identifier: Apache-2.0 */
/* doc.h - internal: the open document (doc.c: open, authentication, lazy
 * lookup, the catalog and page tree root) and its cross-reference index
 * (xref.c); conventions: ps.h, design notes atop doc.c and xref.c.
 *
 * Both types are incomplete here: their fields are the reader's alone
 * (docpriv.h), and every other module uses the functions below, grouped
 * by concern: the index (lookups, revisions, the chain and its numbers),
 * then the document (security state, cache, the as-of budget, lookups and
 * stream data, the catalog); its context, size and file are input.h's. */
#ifndef PS_DOC_H
#define PS_DOC_H

#include "ps.h"
#include "sec.h"
#include "input.h" /* input.c: ps_doc_pread, ps_doc_parse_at */

typedef struct ps_xref ps_xref;

/* ---- the records the document and its index hand out ------------------------------ */

#define PS_MAX_SECTIONS 4096      /* /Prev chain depth guard */
#define PS_MAX_OBJNUM 8388607     /* highest object number we accept (ISO 32000 C.2) */

typedef struct ps_xent {
	int64_t off;      /* type 1: offset of "N G obj"; type 2: number of the object stream */
	uint32_t aux;     /* type 0/1: generation; type 2: index inside the object stream */
	uint16_t sec;     /* 1-based section that set this entry (newest first); 0 = unset */
	uint8_t type;     /* 0 free (or absent), 1 in use, 2 compressed */
	uint8_t flags;    /* PS_XENT_* */
} ps_xent;
#define PS_XENT_TABLE 1   /* set by a classic table (hybrid precedence) */
#define PS_XENT_KNOWN 2   /* decided (a lazy slot without it was never asked for) */

/* One cross-reference section of the chain (ps_xref_sections). */
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
	ps_obj *root, *info;          /* its /Root and /Info (owned copies),
	                               * NULL if absent (audit) */
	int64_t size;                 /* its /Size, -1 if absent or not a count (audit) */
	struct ps_xpart *tab, *stm;   /* its table and xref stream parts
	                               * (xrefsec.c), owned, NULL if none */
} ps_section;

/* An entry of an older section that a newer one hides (xref.c note
 * "Older entries"): what `audit` needs to read an object as of a revision. */
typedef struct ps_xshadow {
	uint32_t num;
	uint32_t seq;                 /* order of recording (hybrid precedence) */
	ps_xent e;                    /* e.sec: its section (1-based, newest first) */
} ps_xshadow;

/* ---- xref.c: the cross-reference index -------------------------------------- */

/* The document's index, borrowed: valid (at the same address) as long as
 * the document, whatever lookups and loads change in it.  The queries
 * below take it; the calls that may read the file take the document. */
const ps_xref *ps_doc_xref(const ps_doc *doc);
/* The merged entry of object NUM into *out if it is in use (type 1 or 2),
 * else NULL (free, absent or out of range); reads the entry on first use.
 * The pointer stays valid as long as the document. */
int ps_xref_find(ps_doc *doc, uint32_t num, const ps_xent **out);
/* Loads every entry of every section (whole-file passes: rewrite, verify,
 * info, audit) and the older entries newer sections hide; after it,
 * ps_xref_get, ps_xref_next and the revision calls below may be used. */
int ps_xref_load_all(ps_doc *doc);
/* After ps_xref_load_all (or for an entry ps_xref_find returned): the
 * merged entry of NUM if it is in use, else NULL.  Two array indexings
 * behind one call: whole-file walks are hot. */
const ps_xent *ps_xref_get(const ps_xref *x, uint32_t num);
/* Its type: 1 in use, 2 compressed, 0 free or absent (after
 * ps_xref_load_all; doc.c's lookups use ps_xref_find). */
int ps_xref_type(const ps_xref *x, uint32_t num);
/* The lowest object number above AFTER that is in use, 0 if none: a walk
 * over every object in use is O(objects), empty pages are skipped. */
uint32_t ps_xref_next(const ps_xref *x, uint32_t after);
/* Revisions (audit.c).  SEC numbers a section 1.. from the newest, as
 * ps_xent.sec does; "as of SEC" is the state a reader saw when that
 * section was the newest (sections SEC..nsections merged).
 * The merged slot of NUM whatever its type (a free entry included), NULL
 * if no section mentions NUM. */
const ps_xent *ps_xref_slot(const ps_xref *x, uint32_t num);
/* The lowest number above AFTER that some section mentions (free entries
 * included), 0 if none. */
uint32_t ps_xref_next_slot(const ps_xref *x, uint32_t after);
/* The entry of NUM as of section SEC into *OUT (its type may be 0: freed
 * by that revision): 1, or 0 if no section SEC.. mentions NUM. */
int ps_xref_as_of(const ps_xref *x, uint32_t num, int sec, ps_xent *out);
/* The chain's sections, newest first (section SEC is element SEC - 1),
 * *N of them (at least one once the document is open); borrowed, valid as
 * long as the document. */
const ps_section *ps_xref_sections(const ps_xref *x, int *n);
/* The newest trailer (an xref stream's dictionary for a stream section),
 * with /Root, /Info, /ID and /Encrypt carried over from older trailers
 * that have them when it lacks them; borrowed, as long as the document. */
const ps_obj *ps_xref_trailer(const ps_xref *x);
/* What the index knows of the file's end and of the object numbers
 * (ps_xref_info fills it; a copy, no pointers). */
struct ps_xref_info {
	int64_t startxref;            /* the last startxref's offset: the newest section */
	int64_t eof_end;              /* just past the last %%EOF and one end of line */
	int64_t trailing;             /* non-white bytes after the last %%EOF, 0 if none */
	int64_t size_key;             /* the newest trailer's /Size */
	uint32_t bound;               /* the highest number any section mentions + 1: new numbers go
	                                 at or above it (known at open, no entry read) */
	uint64_t mentioned;           /* entries the sections list, free ones included (>= used) */
	/* counted by the full load (ps_xref_load_all); 0 until then: */
	uint32_t used;                /* entries in use (type 1 or 2) */
	uint32_t max;                 /* the highest number in use, 0 if none */
	int hidden_lost;              /* some hidden entries could not be kept (too many, or no
	                                 memory): ps_xref_hidden is incomplete, audit refuses */
};
void ps_xref_info(const ps_xref *x, struct ps_xref_info *out);
/* After ps_xref_load_all: the entries that newer sections hide (xref.c
 * note "Older entries"), sorted by number, then section, *N of them;
 * borrowed, as long as the document.  Incomplete if info.hidden_lost. */
const ps_xshadow *ps_xref_hidden(const ps_xref *x, size_t *n);

/* ---- doc.c: the document ------------------------------------------------------- */

/* What other modules know of the document's state, by concern (its
 * context, size and file: input.h); none of these fails, and the copies
 * they fill hold no pointer the caller owns. */

/* The security state (doc.c note 4): */
struct ps_doc_security {
	ps_sec *sec;                  /* the handler (borrowed, as long as the document), NULL
	                                 exactly when the file is not encrypted */
	uint32_t encrypt_num;         /* the /Encrypt dictionary's number if indirect, else 0 */
	int authenticated;            /* 0 not yet, 1 with the user password, 2 with the owner's */
	int64_t perms;                /* once authenticated: the effective permissions (read by
	                                 policy.c's ps_policy_permits and info.c only) */
	int password_given;           /* pdfstamp_doc_auth had a password, but the file is not
	                                 encrypted (writers refuse to write in clear then) */
	int recipient_index;          /* pdfstamp_doc_auth_key: the envelope that opened the
	                                 file, else -1 */
	const char *recipient;        /* and its certificate's subject ("" if none; borrowed) */
};
void ps_doc_security(const ps_doc *doc, struct ps_doc_security *out);
/* Gives DOC, just opened with PS_OPEN_NEWEST_ONLY, the security state of
 * FROM (the document it re-reads): FROM's handler shared (ps_sec_share:
 * the key schedules borrowed, so FROM must outlive DOC), its /Encrypt
 * number and its authentication.  Nothing to do if FROM is not
 * encrypted.  0 or PDFSTAMP_E_NOMEM. */
int ps_doc_share_security(ps_doc *doc, const ps_doc *from);
/* Note 9 of doc.c: the next update on a file this process just appended
 * to.  ps_doc_refresh re-reads DOC (opened for writing, no update
 * pending) on its own descriptor and lock; ps_doc_open_written opens PATH
 * (a new file the update wrote, -o) for writing, its handler shared with
 * FROM (which must outlive it).  Either requires SIZE bytes whose newest
 * cross-reference section is at STARTXREF (PDFSTAMP_E_IO otherwise) and
 * FROM's /Encrypt and ID[0] (PDFSTAMP_E_FORMAT), and ps_doc_open_written
 * the very file FROM's commit wrote (PDFSTAMP_E_IO: a file renamed over
 * it in between is not), then carries the authentication over.  On
 * failure DOC is as it was; *OUT NULL. */
int ps_doc_refresh(ps_doc *doc, int64_t size, int64_t startxref);
/* incr.c: the new file a commit of DOC just wrote to a path is the inode
 * DEV, INO (the one ps_doc_open_written accepts). */
void ps_doc_set_written(ps_doc *doc, dev_t dev, ino_t ino);
int ps_doc_open_written(ps_doc *from, const char *path, int64_t size, int64_t startxref,
                        ps_doc **out);
/* Authenticates DOC, a file a rewrite to certificates just wrote, with the
 * seed of its handler (pubsec.c note 5), as the owner-equivalent.  0 or
 * the error of ps_pubsec_auth_seed. */
int ps_doc_auth_seed(ps_doc *doc, const uint8_t *seed);
/* The objects looked up so far (the cache, note 2), in no set order:
 * start with *POS = 0; 1 with *NUM and *OBJ (borrowed, as long as the
 * document) for the next one, 0 after the last. */
int ps_doc_cached_next(const ps_doc *doc, size_t *pos, uint32_t *num, const ps_obj **obj);
/* Reads as of older revisions (note 5), byte accounting: what they decode
 * (object streams here, the stream data a caller decodes and charges)
 * counts against a cap.  ps_doc_asof_cap sets the cap (0: none) and
 * restarts the count; ps_doc_asof_charge counts N more bytes: 0, or
 * PDFSTAMP_E_UNSUPPORTED once the count is past the cap. */
void ps_doc_asof_cap(ps_doc *doc, int64_t cap);
int ps_doc_asof_charge(ps_doc *doc, int64_t n);

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
/* ps_doc_stream_data (decoded) under a budget (doc.c note 7): the
 * raw bytes read and the bytes decoded are taken from *LEFT, even when
 * decoding fails; a stream that would take more sets *OVER (*LEFT 0,
 * OUT empty) and returns 0 without going past the budget. */
int ps_doc_stream_data_budget(ps_doc *doc, uint32_t num, ps_obj *stm, uint64_t *left, int *over,
                              ps_buf *out);
/* Object NUM as of section SEC (see ps_xref_as_of): parsed and decrypted
 * with that version's own generation, an object-stream member read from
 * the object stream as of SEC too; an indirect /Length of a stream is
 * resolved as of SEC and made direct.  *out (owned, uncached) is NULL
 * for a free or absent object; *gen (may be NULL) its generation. */
int ps_doc_load_as_of(ps_doc *doc, uint32_t num, int sec, ps_obj **out, uint16_t *gen);
/* The object numbers object stream NUM holds as of section SEC (its
 * header), into *NUMS (owned, *N of them). */
int ps_doc_objstm_members(ps_doc *doc, uint32_t num, int sec, uint32_t **nums, size_t *n);
/* Note 8: calls FN once for every object in use as of section SEC, in
 * file order (plain objects by offset, then each object stream's members),
 * with the object numbers of its references (N of them, in order, repeats
 * kept; REFS valid for the call only), or with UNREAD set if the object
 * cannot be read (FORMAT or UNSUPPORTED: a caller that needs it loads it
 * again for the message).  FN's non-zero return stops the scan and is
 * returned; so are I/O and memory errors. */
typedef int (*ps_refs_fn)(void *arg, uint32_t num, const uint32_t *refs, size_t n, int unread);
int ps_doc_refs_as_of(ps_doc *doc, int sec, ps_refs_fn fn, void *arg);
/* ps_doc_stream_data for a stream loaded by ps_doc_load_as_of: GEN and
 * whether it is one of the chain's xref streams (EXEMPT) given. */
int ps_doc_stream_data_as(ps_doc *doc, uint32_t num, uint16_t gen, int exempt, ps_obj *stm,
                          int decode, ps_buf *out);
/* Length of a stream's raw data (resolves an indirect /Length). */
int ps_doc_stream_length(ps_doc *doc, ps_obj *stm, int64_t *len);
/* xref.c: is the live object NUM one of the chain's own xref streams (a
 * stream section, or a hybrid section's /XRefStm, whose entry points at
 * it)?  Only these are exempt from encryption and dropped by a rewrite;
 * any other stream typed /XRef is ordinary content. */
int ps_doc_is_xref_stream(ps_doc *doc, uint32_t num);

/* pdfstamp_doc_open with the internal PS_OPEN_* flags too (the public
 * entry refuses them with PDFSTAMP_E_USAGE). */
int ps_doc_open(ps_ctx *ctx, ps_doc **out, const char *path, unsigned flags);
/* Internal open flag: do not look at the journal at all (used when
 * verifying our own output while the journal is still in place). */
#define PS_OPEN_NO_RECOVER 0x100
/* Internal open flag: read only the newest cross-reference section and not
 * /Encrypt (the caller supplies the security state:
 * ps_doc_share_security): the cheap re-read that checks an update we just
 * appended. */
#define PS_OPEN_NEWEST_ONLY 0x200
/* Generation of object NUM in the newest revision (0 if compressed/free). */
uint16_t ps_doc_gen(ps_doc *doc, uint32_t num);

/* The one place that resolves the catalog and the root of the page tree
 * (ISO 32000-2 7.7.2, 7.7.3.2).  What the caller needs of the catalog: */
enum ps_catalog_need {
	PS_CATALOG_ANY = 0,       /* whatever /Root resolves to, NULL if absent */
	PS_CATALOG_DICT,          /* a dictionary, else "/Root is not a dictionary" */
	PS_CATALOG_INDIRECT       /* an indirect one, else "/Root is not an indirect dictionary" */
};
/* The trailer's /Root, resolved (borrowed) into *root; REF (may be NULL)
 * receives the /Root entry when it is a reference, else NULL.  With
 * PS_CATALOG_ANY only a failed lookup is an error. */
int ps_doc_catalog(ps_doc *doc, enum ps_catalog_need need, ps_obj **root, ps_obj **ref);
/* The root of the page tree: the catalog's /Pages, resolved (borrowed)
 * into *pages; REF receives the /Pages entry itself, COUNT its /Count (each
 * of the three may be NULL).  PDFSTAMP_E_FORMAT "the page tree root has no valid /Count"
 * unless it is a dictionary with a /Count >= 0 (a missing catalog has no
 * page tree root). */
int ps_doc_pages(ps_doc *doc, ps_obj **pages, ps_obj **ref, int64_t *count);

#endif
