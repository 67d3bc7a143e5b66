/* SPDX-License-Identifier: Apache-2.0 */
/* docpriv.h - private to the reader: the fields of the open document and
 * of its cross-reference index.
 *
 * Included by the reader's files that keep this state, and by them only:
 * doc.c (the document), input.c (reads of its file and their count) and
 * xref.c (the index).  The reader's fourth file, xrefsec.c (one section's
 * entries), needs only the context and the size and asks for them like
 * any other module.  tests/e2e/layout.sh checks that no other file of the
 * library or the CLI includes it (of the tests, the reader's own unit
 * suites check_doc.c and check_xref.c, and fuzz.h's copy of
 * pdfstamp_doc_auth, may).  Every other module reads and changes the
 * document through the functions of doc.h and input.h, which say who owns
 * what; doc.h keeps struct pdfstamp_doc and struct ps_xref incomplete. */
#ifndef PS_DOCPRIV_H
#define PS_DOCPRIV_H

#include "doc.h"

/* Entries per page of the cross-reference index (4 KiB pages of 16-byte
 * entries; the directory has at most 32768 slots). */
#define PS_XREF_PAGE_BITS 8
#define PS_XREF_PAGE (1u << PS_XREF_PAGE_BITS)

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

/* The cross-reference index of one document (xref.c): the /Prev chain as
 * read at open, the merged entries, the entries newer sections hide, and
 * the numbers that bound them. */
struct ps_xref {
	/* the chain (ps_xref_load) */
	int64_t startxref;            /* value of the last startxref */
	int64_t eof_end;              /* offset just past the last %%EOF (and its EOL) */
	int64_t trailing;             /* non-white bytes after the last %%EOF */
	ps_section *sections;         /* newest first */
	int nsections;
	ps_obj *trailer;              /* newest trailer (or xref stream dict), owned */
	int64_t size_key;             /* trailer /Size */
	ps_xstm *xstm;                /* the chain's xref streams, sorted by number */
	size_t nxstm;
	uint32_t enc_watch;           /* newest trailer's /Encrypt object number, 0 if none */
	ps_enc_version *enc_versions; /* every in-file definition of it (at most one per section) */
	int nenc_versions, capenc_versions;
	int enc_versions_oom;         /* a definition could not be recorded: refuse */

	/* The merged entries, paged so that memory follows the entries
	 * present, not the highest object number: page P holds numbers
	 * P*PS_XREF_PAGE .. +PS_XREF_PAGE-1 and is allocated on its first
	 * entry.  Lazy until ps_xref_load_all: only the entries asked for
	 * (ps_xref_find). */
	ps_xent **pages;              /* directory, NULL slots for empty pages */
	uint32_t npages;              /* directory length (highest page + 1) */
	int full;                     /* every entry loaded (ps_xref_load_all) */
	uint32_t used;                /* full: entries in use (type 1 or 2) */
	uint32_t max;                 /* full: highest object number in use, 0 if none */
	uint32_t bound;               /* highest number any section mentions + 1 (>= max + 1) */
	uint64_t mentioned;           /* entries the sections list (>= used) */
	uint64_t lazy_work;           /* sections walked by lazy lookups */
	int full_failed;              /* a full load was tried and failed: stay lazy */
	int merged;                   /* sections merged into the index at open */
	size_t kept;                  /* decoded xref stream bytes kept for lazy lookups */
	size_t bytes;                 /* memory held by the pages and the directory */

	/* the older entries newer sections hide (full state) */
	ps_xshadow *shadows;          /* sorted by number, then section */
	size_t nshadows, capshadows;
	int shadows_lost;             /* too many (or no memory) to keep them all: no audit */
};

typedef struct ps_cache_ent {
	uint32_t num;
	ps_obj *obj;
} ps_cache_ent;

struct pdfstamp_doc {
	ps_ctx *ctx;
	int fd;
	char *path;
	int64_t size;                 /* file size when opened; after a salvage open the
	                                 effective end (doc.c note 6): nothing past it is read */
	int64_t damaged_len;          /* salvage open: bytes of the damaged
	                               * tail past size, else 0 */
	char damaged_why[256];        /* and why the whole file did not open */
	int64_t bytes_read;           /* distinct bytes read (input.c note 2), <= size */
	int64_t *read_ranges;         /* what was read: start, end pairs, sorted and merged */
	size_t nread_ranges, capread_ranges;
	int read_ranges_full;         /* too many ranges (or no memory): reads counted whole */

	ps_xref xref;                 /* the cross-reference index (xref.c) */

	/* security */
	int encrypted;
	ps_obj *encrypt;              /* the /Encrypt dictionary (owned copy) */
	uint32_t encrypt_num;         /* its object number if indirect, else 0 */
	ps_sec *sec;                  /* the security handler (sec.c), NULL if not encrypted */
	int64_t perms;                /* after auth: the effective
	                               * permissions (pdfstamp_doc_auth) */
	int authenticated;            /* 0 none, 1 user, 2 owner */
	int password_given;           /* auth was given a password, but the file is not encrypted */
	int recipient_index;          /* public-key handler: the /Recipients entry that opened
	                               * the file (-1 before) */
	char recipient[160];          /* and its certificate's subject */

	/* lazily loaded objects, open addressing by object number */
	ps_cache_ent *cache;
	size_t ncache, capcache;
	int depth;                    /* recursion guard for lookups */
	int locked;                   /* holds an exclusive flock (opened for writing) */
	unsigned open_flags;
	mode_t mode;                  /* permission bits of the file */
	int written;                  /* a commit of this document wrote a new file (-o), */
	dev_t written_dev;            /* this one (doc.c note 9: ps_doc_open_written */
	ino_t written_ino;            /* opens only it) */

	/* the last two object streams decoded as of an older revision (audit
	 * compares a member as of two revisions: two slots, least recently
	 * used replaced, so that neither is decoded again per member) */
	struct ps_asof_stm {
		uint32_t num;
		int64_t off;                  /* offset of the version decoded */
		ps_buf data;
		int64_t *offs;                /* 2*N: object number, offset from /First */
		int64_t n, first;
		unsigned used;                /* recency stamp */
	} asof_stm[2];
	unsigned asof_clock;
	/* bytes decoded for reads as of older revisions (object streams here,
	 * the stream data a caller charges) against the cap it sets (0: none):
	 * past it ps_doc_asof_charge refuses (PDFSTAMP_E_UNSUPPORTED) */
	int64_t asof_decoded, asof_cap;

	/* the last decoded object stream */
	uint32_t objstm_num;
	ps_buf objstm_data;
	int64_t *objstm_offs;         /* 2*N: object number, offset from /First */
	int64_t objstm_n, objstm_first;

	/* an update built and journaled, not yet written (incr.c) */
	void *pending;
	void (*pending_drop)(void *pending); /* called by close */
};

/* ---- xref.c: what only the reader calls ---------------------------------------- */

/* Locates startxref and reads the /Prev chain: every trailer, the
 * layout of every section (xrefsec.c), no entry yet (lazy). */
int ps_xref_load(ps_doc *doc);
/* The newest revision end that starts before BELOW (a "%%EOF"
 * that "startxref N" precedes, as 7.5.5 writes it), scanning backwards in
 * chunks: 1 with *MARK (where "%%EOF" starts) and *END (past it and one
 * EOL), 0 if there is none; called again with BELOW = *MARK, the calls
 * together read the file at most once (the salvage open, doc.c). */
int ps_xref_prev_eof(ps_doc *doc, int64_t below, int64_t *mark, int64_t *end);
/* Frees everything the index holds (the chain included). */
void ps_xref_free(ps_xref *x);

#endif
