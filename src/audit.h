/* SPDX-License-Identifier: Apache-2.0 */
/* audit.h - internal: the state of one signature audit, shared by
 * audit.c (revisions, kinds, verdicts) and auditsig.c (the signatures and
 * the objects as of a revision).  Conventions: ps.h; design: audit.c. */
#ifndef PS_AUDIT_H
#define PS_AUDIT_H

#include "ps.h"
#include "doc.h"

struct sigrec {
	int sec;                     /* section of its revision (1 = newest); ns if unknown */
	int exact;                   /* its /ByteRange ends exactly at that revision's end */
	int64_t end;                 /* where its signed bytes end, -1 if unreadable */
	int docmdp;                  /* as of its own revision (auditsig.c) */
	int fieldmdp;
	char **fields;
	int nfields;
	uint32_t *policy;            /* the objects its policy is read from, as of SEC, sorted */
	size_t npolicy;
	int real;                    /* -1 not yet known; 0/1: its CMS parses and signs its bytes */
	int timestamp;               /* a document timestamp (12.8.5) */
	uint32_t snum;               /* its signature dictionary, 0 if direct */
	int has_rect;                /* RECT: its widget's /Rect as of SEC,
	                              * shown (note 5 of audit.c) */
	double rect[4];              /* x1 y1 x2 y2, normalised */
};

/* Roles of an object in a signed revision (auditview.c note 2). */
enum vrole {
	VR_CATALOG = 1, VR_PAGES, VR_PAGE, VR_CONTENT, VR_ANNOTS, VR_ANNOT, VR_WIDGET, VR_SIGWIDGET,
	VR_FIELD, VR_SIGFIELD, VR_KIDS, VR_FIELDS, VR_ACROFORM, VR_DR, VR_AP_ANNOT, VR_AP_WIDGET,
	VR_AP_SIG, VR_DSS, VR_METADATA, VR_INFO, VR_SIGDICT, VR_PERMS
};

struct vent {
	uint32_t num;
	uint16_t gen;
	uint16_t role;               /* enum vrole */
	uint32_t owner;              /* VR_AP_*: the annotation or widget whose appearance it is */
};

/* The view of one signed revision: roles sorted by number, then role. */
struct view {
	int sec;
	int built;
	struct vent *e;
	size_t n;
	uint8_t *refs;               /* every number a reachable reference names (a bitset of
	                                nrefs bits), built on first need; NULL before */
	uint32_t nrefs;
};

struct role {
	uint32_t num;
	int kind;
};

/* An object a revision's own cross-reference section lists at OFF. */
struct lobj {
	int64_t off;
	uint32_t num;
	uint32_t gen;
};

struct rev {
	uint32_t *cands;
	size_t ncands;
	struct lobj *listed;         /* its type-1 entries, sorted by offset (note 5, identity) */
	size_t nlisted;
};

struct audit {
	ps_doc *doc;
	ps_ctx *ctx;
	const ps_xref *xref;         /* the document's index (doc.h), loaded whole */
	const ps_section *secs;      /* its sections, newest first: section SEC is secs[SEC - 1] */
	uint32_t enc_num;            /* its /Encrypt dictionary's number, 0 if direct or none */
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
	/* those of them that the same object's (or trailer key's) previous
	 * version did not name: only a new reference leads a reader somewhere
	 * the signed revision did not (audit.c, the dangling check) */
	uint32_t *newrefd;
	size_t nnewrefd;
	int64_t nchanges;
	int cur_S;                   /* the signed section judging now (0: none; audit.c) */
	int old_annot;               /* the change being judged alters an annotation or
	                                widget that existed at cur_S other than by filling
	                                it in (audit.c note 5) */
	struct view *views;          /* index SEC: the view of a signed
	                              * revision, built on first use */
};

/* Revision number (1 = oldest, as reported) of section SEC (1 = newest). */
static inline int rev_no(const struct audit *a, int sec)
{
	return a->ns - sec + 1;
}

/* ---- auditsig.c ------------------------------------------------------------ */

/* Object NUM as of section SEC, owned (ps_doc_load_as_of). */
int ps_auditsig_load(struct audit *a, uint32_t num, int sec, ps_obj **out);
/* O resolved as of SEC into *OWNED (NULL if O is direct: then *out = O). */
int ps_auditsig_resolve(struct audit *a, ps_obj *o, int sec, ps_obj **out, ps_obj **owned);
/* The trailer's /Root (INFO 0) or /Info (INFO 1) as of SEC, borrowed. */
const ps_obj *ps_auditsig_trailer_key(const struct audit *a, int sec, int info);
/* Is SIG a document timestamp (12.8.5)? */
int ps_auditsig_is_timestamp(const ps_obj *sig);
/* The ps_sig_field_fn of the walk (UD: struct audit): lists one signature
 * in a->r->sigs and a->sigs (audit.c note 2). */
int ps_auditsig_add(void *ud, ps_obj *field, uint32_t fnum, ps_obj *sig, uint32_t snum, int level,
                    const char *name);
/* Lists the signature dictionaries of revisions after the first that no
 * field tree holds (auditsig.c). */
int ps_auditsig_stray(struct audit *a);
/* Does signature I's CMS sign its bytes?  Sets a->sigs[I].real once
 * (sigcms.c); 0 or an I/O error. */
int ps_auditsig_real(struct audit *a, int i);
/* Where the bytes of section SEC's revision (1 = newest) end: just past
 * the %%EOF line that closes it ("startxref <its offset>"), what a
 * signature of that revision covers; -1 if no such line is found. */
int64_t ps_auditsig_revision_end(ps_doc *doc, int sec);
/* Sorts V and drops repeats; the new count. */
size_t ps_auditsig_uniq(uint32_t *v, size_t n);
/* Lists the signatures of the field tree as of SEC that the newest tree
 * no longer holds, violated (audit.c note 2); *VISITS bounds the walk
 * over all revisions. */
int ps_auditsig_old(struct audit *a, int sec, int64_t *visits);

/* ---- auditview.c ------------------------------------------------------------- */

/* Builds V, the roles of the objects reachable from revision SEC's
 * trailer as of SEC (auditview.c). */
int ps_auditview_build(struct audit *a, int sec, struct view *v);
/* The roles of NUM in V: their count, *FIRST the first. */
size_t ps_auditview_roles(const struct view *v, uint32_t num, const struct vent **first);
/* Does a reference reachable from V's revision (any object, any key) name
 * NUM?  Builds V's reference set on first use (auditview.c note 5). */
int ps_auditview_refers(struct audit *a, struct view *v, uint32_t num, int *rc);
void ps_auditview_free(struct view *v);

#endif
