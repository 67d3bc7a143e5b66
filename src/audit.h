/* audit.h - internal: the state of one signature audit, shared by
 * audit.c (revisions, kinds, verdicts) and auditsig.c (the signatures and
 * the objects as of a revision).  Conventions: ps.h; design: audit.c. */
#ifndef PS_AUDIT_H
#define PS_AUDIT_H

#include "ps.h"
#include "doc.h"

struct sigrec {
	int sec;                     /* section of its revision (1 = newest); ns if unknown */
	int docmdp;
	int fieldmdp;
	char **fields;
	int nfields;
};

struct role {
	uint32_t num;
	int kind;
};

struct rev {
	uint32_t *cands;
	size_t ncands;
};

struct audit {
	ps_doc *doc;
	ps_ctx *ctx;
	struct pdfstamp_audit_report *r;
	struct sigrec *sigs;
	int ns;
	int limit;                   /* sections 1..limit-1 are audited */
	struct rev *revs;            /* index SEC */
	/* roles of objects in the revision being classified (note 4),
	 * sorted by number after the first pass */
	struct role *roles;
	size_t nroles;
	/* the objects that the changed objects of that revision (new
	 * versions) and its trailer refer to, sorted after the first pass */
	uint32_t *refd;
	size_t nrefd;
	int64_t nchanges;
};

/* Revision number (1 = oldest, as reported) of section SEC (1 = newest). */
static inline int rev_no(const struct audit *a, int sec)
{
	return a->ns - sec + 1;
}

/* ---- auditsig.c ------------------------------------------------------------ */

/* Object NUM as of section SEC, owned (ps_doc_load_as_of). */
int ps_audit_load(struct audit *a, uint32_t num, int sec, ps_obj **out);
/* O resolved as of SEC into *OWNED (NULL if O is direct: then *out = O). */
int ps_audit_resolve(struct audit *a, ps_obj *o, int sec, ps_obj **out, ps_obj **owned);
/* The trailer's /Root (INFO 0) or /Info (INFO 1) as of SEC, borrowed. */
const ps_obj *ps_audit_trailer_key(const struct audit *a, int sec, int info);
/* Is SIG a document timestamp (12.8.5)? */
int ps_audit_is_timestamp_sig(const ps_obj *sig);
/* The ps_sig_field_fn of the walk (UD: struct audit): lists one signature
 * in a->r->sigs and a->sigs (audit.c note 2). */
int ps_audit_add_sig(void *ud, ps_obj *field, ps_obj *sig, uint32_t snum, int level, const char *name);
/* Lists the signatures of the field tree as of SEC that the newest tree
 * no longer holds, violated (audit.c note 2); *VISITS bounds the walk
 * over all revisions. */
int ps_audit_old_sigs(struct audit *a, int sec, int64_t *visits);

#endif
