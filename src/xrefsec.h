/* SPDX-License-Identifier: Apache-2.0 */
/* xrefsec.h - internal: the entries of one cross-reference section part
 * (a classic table or an xref stream), read as far as needed; design
 * notes atop xrefsec.c.  Only xref.c uses it. */
#ifndef PS_XREFSEC_H
#define PS_XREFSEC_H

#include "ps.h"

/* What a part says of one object number. */
typedef struct ps_xrec {
	int64_t off;      /* type 1: offset; type 2: number of the object stream */
	uint32_t num;
	uint32_t aux;     /* generation, or index inside the object stream */
	uint32_t seq;     /* order in the file (RECS: the first mention wins) */
	uint8_t type;     /* 0 free, 1 in use, 2 compressed */
} ps_xrec;

/* One subsection of a well-formed table: entries first..first+count-1 at
 * off + i * stride. */
typedef struct ps_xsub {
	int64_t off;
	uint32_t first, count, stride;
} ps_xsub;

/* One /Index range of an xref stream: its entries start at byte AT of the
 * decoded data. */
typedef struct ps_xrange {
	uint32_t first, count;
	size_t at;
} ps_xrange;

enum ps_xpart_form { PS_XPART_NONE = 0, PS_XPART_SUBS, PS_XPART_STREAM, PS_XPART_RECS };

typedef struct ps_xpart {
	enum ps_xpart_form form;
	ps_xsub *subs;               /* SUBS, sorted and disjoint */
	size_t nsubs, capsubs;
	ps_buf data;                 /* STREAM: the decoded stream, as far as decoded */
	ps_buf raw;                  /* STREAM being decoded: its compressed bytes */
	struct ps_flate_reader *fr;  /* STREAM being decoded: the decoder (NULL once done) */
	size_t total;                /* STREAM: the bytes /Index's entries take */
	size_t kept;                 /* STREAM: the most it holds (raw and
	                              * decoded), for xref.c's budget */
	int64_t stm_off;             /* STREAM: its offset, for messages */
	int failed;                  /* STREAM: the error its decoding met, 0 if none (a
	                              * full load fails on it) */
	ps_xrange *ranges;           /* STREAM, in /Index order */
	size_t nranges, entlen;
	int sorted;                  /* STREAM: the ranges are sorted and disjoint */
	int w[3];
	ps_xrec *recs;               /* RECS, sorted by number, then file order (every mention) */
	size_t nrecs, caprecs;
	int64_t table_off;           /* SUBS, RECS of a table: its offset (at "xref") */
	uint32_t bound;              /* highest number mentioned + 1 (0: none) */
	uint64_t nents;              /* entries mentioned (a bound on those in use) */
} ps_xpart;

/* Reads the table at OFF (at "xref") into *P; *TRAILER receives the
 * offset just past its "trailer" keyword. */
int ps_xpart_read_table(ps_doc *doc, int64_t off, ps_xpart *p, int64_t *trailer);
/* Reads the xref stream STM (parsed at OFF) into *P. */
int ps_xpart_read_stream(ps_doc *doc, const ps_obj *stm, int64_t off, ps_xpart *p);
/* What *P says of NUM (its first mention): 1 with *OUT, 0 if it says
 * nothing, or an error (an entry read now that breaks the rules). */
int ps_xpart_get(ps_doc *doc, ps_xpart *p, uint32_t num, ps_xrec *out);
/* Calls FN for every mention of NUM in *P, the one that counts first
 * (several only in RECS and unsorted STREAM parts: a hostile section that
 * lists a number twice); stops at the first error. */
typedef int (*ps_xpart_fn)(ps_doc *doc, void *ud, const ps_xrec *r);
int ps_xpart_defs(ps_doc *doc, ps_xpart *p, uint32_t num, ps_xpart_fn fn, void *ud);
/* Calls FN for every entry of *P (RECS: in number order, every mention,
 * the first of a number first); stops at the first error. */
int ps_xpart_each(ps_doc *doc, ps_xpart *p, ps_xpart_fn fn, void *ud);
void ps_xpart_free(ps_xpart *p);

#endif
