/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auditsig.c - the signatures of pdfstamp_audit: where each one's
 * /ByteRange ends (the revision it covers), its DocMDP and FieldMDP
 * policy, and the signatures that later revisions took out of the field
 * tree; and reading objects as of a revision for audit.c.
 *
 * DESIGN NOTES: audit.c note 2 (signatures) and note 6 (bounds).  This
 * file only reads; it is below audit.c (which calls it) and above doc.c
 * and policy.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ps.h"
#include "policy.h"
#include "audit.h"
#include "sigcms.h"
#include "io.h"

#define MAX_OLD_FIELD_VISITS 1000000

/* ---- objects as of a revision ------------------------------------------------ */

/* Object NUM as of SEC, owned. */
int ps_auditsig_load(struct audit *a, uint32_t num, int sec, ps_obj **out)
{
	return ps_doc_load_as_of(a->doc, num, sec, out, NULL);
}

/* O resolved as of SEC into *OWNED (NULL if O is direct: then *out = O). */
int ps_auditsig_resolve(struct audit *a, ps_obj *o, int sec, ps_obj **out, ps_obj **owned)
{
	int rc;

	*owned = NULL;
	*out = o;
	if (!o || o->kind != PS_REF)
		return 0;
	if ((rc = ps_auditsig_load(a, o->u.ref.num, sec, owned)) < 0)
		return rc;
	*out = *owned;
	return 0;
}

/* The trailer key KEY as of SEC (newest section SEC.. that has it). */
const ps_obj *ps_auditsig_trailer_key(const struct audit *a, int sec, int info)
{
	int i;

	for (i = sec - 1; i < a->ns; i++) {
		const ps_obj *v = info ? a->secs[i].info : a->secs[i].root;
		if (v)
			return v;
	}
	return NULL;
}

int ps_auditsig_is_timestamp(const ps_obj *sig)
{
	return ps_obj_is_name(ps_dict_get(sig, "Type"), "DocTimeStamp") ||
	       ps_obj_is_name(ps_dict_get(sig, "SubFilter"), "ETSI.RFC3161");
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

size_t ps_auditsig_uniq(uint32_t *v, size_t n)
{
	size_t i, k = 0;

	if (n < 2)
		return n; /* V may be NULL: not for qsort (C11 7.22.5p1) */
	qsort(v, n, sizeof *v, cmp_u32);
	for (i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* ---- signatures (note 2) --------------------------------------------------- */

/* Which revision the signed bytes ending at END close: the section whose
 * "startxref" value precedes the %%EOF there; 0 if none. */
static int revision_at(ps_doc *doc, int64_t end, int *exact)
{
	ps_buf w = PS_BUF_INIT;
	int64_t start = end > 256 ? end - 256 : 0, v = 0, mul = 1;
	size_t p;
	int i, ns, sec = 0;
	const ps_section *secs = ps_xref_sections(ps_doc_xref(doc), &ns);

	*exact = 0;
	if (end <= 0 || end > ps_doc_size(doc) ||
	    ps_doc_pread(doc, start, (size_t)(end - start) + 2, &w) < 0) {
		ps_buf_free(&w);
		return 0;
	}
	p = (size_t)(end - start);
	if (p > w.len)
		goto out;
	/* not exact if the EOL of the %%EOF line goes on past END */
	{
		int next = p < w.len ? w.data[p] : -1, prev = p > 0 ? w.data[p - 1] : -1;
		int cut = (prev == 'F' && (next == '\r' || next == '\n')) ||
		          (prev == '\r' && next == '\n');
		size_t q = p;
		if (q > 0 && w.data[q - 1] == '\n')
			q--;
		if (q > 0 && w.data[q - 1] == '\r')
			q--;
		if (q < 5 || memcmp(w.data + q - 5, "%%EOF", 5) != 0)
			goto out;
		q -= 5;
		while (q > 0 && ps_is_space(w.data[q - 1]))
			q--;
		if (q == 0 || w.data[q - 1] < '0' || w.data[q - 1] > '9')
			goto out;
		while (q > 0 && w.data[q - 1] >= '0' && w.data[q - 1] <= '9' &&
		       mul <= 1000000000000LL) {
			v += (w.data[q - 1] - '0') * mul;
			mul *= 10;
			q--;
		}
		while (q > 0 && ps_is_space(w.data[q - 1]))
			q--;
		if (q < 9 || memcmp(w.data + q - 9, "startxref", 9) != 0)
			goto out;
		for (i = 0; i < ns; i++) {
			if (secs[i].off == v) {
				sec = i + 1;
				*exact = !cut;
				break;
			}
		}
	}
out:
	ps_buf_free(&w);
	return sec;
}

/* The newest section that starts before END (the revision a ByteRange that
 * ends elsewhere is taken to sign); the oldest if none does. */
static int revision_before(const struct audit *a, int64_t end)
{
	int i;

	for (i = 0; i < a->ns; i++)
		if (a->secs[i].off < end && a->secs[i].xrefstm < end)
			return i + 1;
	return a->ns;
}

static int add_policy(struct audit *a, struct sigrec *g, const ps_obj *ref)
{
	if (!ref || ref->kind != PS_REF)
		return 0;
	return ps_vec_grow((void **)&g->policy, g->npolicy, sizeof *g->policy) < 0
	               ? ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory")
	               : (g->policy[g->npolicy++] = ref->u.ref.num, 0);
}

/* A FieldMDP lock (12.8.2.4, Table 258; a field's /Lock, 12.7.5.5, Table
 * 233) as of G's revision. */
static int read_lock(struct audit *a, struct sigrec *g, const ps_obj *lock)
{
	ps_obj *l = NULL, *lo = NULL, *fields = NULL, *fo = NULL;
	size_t i;
	int rc;

	if ((rc = add_policy(a, g, lock)) < 0 ||
	    (rc = ps_auditsig_resolve(a, (ps_obj *)lock, g->sec, &l, &lo)) < 0)
		return rc;
	if (l && l->kind == PS_DICT) {
		const ps_obj *act = ps_dict_get(l, "Action");
		g->fieldmdp = ps_obj_is_name(act, "All") ? PDFSTAMP_FIELDMDP_ALL
		              : ps_obj_is_name(act, "Include") ? PDFSTAMP_FIELDMDP_INCLUDE
		              : ps_obj_is_name(act, "Exclude") ? PDFSTAMP_FIELDMDP_EXCLUDE
		              : PDFSTAMP_FIELDMDP_ALL; /* unknown: strictest */
		if ((rc = add_policy(a, g, ps_dict_get(l, "Fields"))) == 0 &&
		    (rc = ps_auditsig_resolve(a, ps_dict_get(l, "Fields"), g->sec, &fields,
		                              &fo)) == 0) {
			for (i = 0; fields && fields->kind == PS_ARRAY &&
			            i < ps_array_len(fields) && i < 10000;
			     i++) {
				const ps_obj *t = ps_array_get(fields, i);
				ps_buf b = PS_BUF_INIT;
				char **nf;
				if (t->kind != PS_STR)
					continue;
				if (ps_text_to_utf8(a->ctx, t->u.str.p, t->u.str.len, &b) < 0 ||
				    (ps_buf_putc(&b, 0), b.oom) ||
				    !(nf = realloc(g->fields,
				                   ((size_t)g->nfields + 1) * sizeof *nf))) {
					ps_buf_free(&b);
					rc = ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
					break;
				}
				g->fields = nf;
				g->fields[g->nfields++] = (char *)ps_buf_detach(&b, NULL);
			}
		}
	}
	ps_obj_free(lo);
	ps_obj_free(fo);
	return rc;
}

/* The policy of signature G, read as of the revision it covers and never
 * later (note 2): its DocMDP level (12.8.2.2, Table 257: the /P of its
 * DocMDP transform, default 2; a signature that /Perms /DocMDP names is a
 * certification even without one), its FieldMDP transform (12.8.2.4) or
 * else its field's /Lock (12.7.5.5), and the objects all of these are read
 * from (G->policy: a later change of any of them is a violation of G).
 * SIG and FIELD are the versions the newest field tree gave, used only if
 * the objects are not in use as of G's revision (then G is violated
 * anyway: note 2). */
static int read_policy(struct audit *a, struct sigrec *g, uint32_t fnum, ps_obj *field,
                       uint32_t snum, ps_obj *sig)
{
	ps_obj *s = NULL, *f = NULL, *refs = NULL, *ro = NULL, *root = NULL, *perms = NULL,
	       *po = NULL;
	const ps_obj *rref = ps_auditsig_trailer_key(a, g->sec, 0);
	size_t k;
	int rc;

	if ((snum && (rc = ps_auditsig_load(a, snum, g->sec, &s)) < 0) ||
	    (fnum && (rc = ps_auditsig_load(a, fnum, g->sec, &f)) < 0))
		goto out;
	if (s && s->kind == PS_DICT)
		sig = s;
	if (f && f->kind == PS_DICT)
		field = f;
	g->docmdp = 0;
	if ((rc = add_policy(a, g, ps_dict_get(sig, "Reference"))) < 0 ||
	    (rc = ps_auditsig_resolve(a, ps_dict_get(sig, "Reference"), g->sec, &refs, &ro)) < 0)
		goto out;
	for (k = 0; refs && refs->kind == PS_ARRAY && k < ps_array_len(refs) && k < 64; k++) {
		ps_obj *r = NULL, *rown = NULL, *tp = NULL, *tpo = NULL;
		const ps_obj *tm;
		if ((rc = add_policy(a, g, ps_array_get(refs, k))) < 0 ||
		    (rc = ps_auditsig_resolve(a, ps_array_get(refs, k), g->sec, &r, &rown)) < 0)
			break;
		tm = ps_dict_get(r, "TransformMethod");
		if ((rc = add_policy(a, g, ps_dict_get(r, "TransformParams"))) == 0 &&
		    (rc = ps_auditsig_resolve(a, ps_dict_get(r, "TransformParams"), g->sec, &tp,
		                              &tpo)) == 0) {
			if (ps_obj_is_name(tm, "DocMDP") && !g->docmdp) {
				int64_t p = 2;
				ps_obj_int(ps_dict_get(tp, "P"), &p);
				g->docmdp = p >= 1 && p <= 3 ? (int)p : 2;
			} else if (ps_obj_is_name(tm, "FieldMDP") && !g->fieldmdp) {
				rc = read_lock(a, g, ps_dict_get(r, "TransformParams"));
			}
		}
		ps_obj_free(tpo);
		ps_obj_free(rown);
		if (rc < 0)
			goto out;
	}
	/* the certification of /Perms /DocMDP as of G's revision (12.8.4.1) */
	if (rref && rref->kind == PS_REF &&
	    (rc = ps_auditsig_load(a, rref->u.ref.num, g->sec, &root)) < 0)
		goto out;
	if ((rc = add_policy(a, g, ps_dict_get(root, "Perms"))) < 0 ||
	    (rc = ps_auditsig_resolve(a, ps_dict_get(root, "Perms"), g->sec, &perms, &po)) < 0)
		goto out;
	{
		const ps_obj *d = ps_dict_get(perms, "DocMDP");
		if (!g->docmdp && snum && d && d->kind == PS_REF && d->u.ref.num == snum)
			g->docmdp = 2;
	}
	if (!g->fieldmdp && ps_dict_get(field, "Lock")) {
		ps_obj fr;
		fr.kind = PS_REF;
		fr.u.ref.num = fnum;
		fr.u.ref.gen = 0;
		if ((fnum && (rc = add_policy(a, g, &fr)) < 0) ||
		    (rc = read_lock(a, g, ps_dict_get(field, "Lock"))) < 0)
			goto out;
	}
	if ((rc = add_policy(a, g, &(ps_obj){.kind = PS_REF, .u.ref = {snum, 0}})) < 0)
		goto out;
	g->npolicy = g->npolicy ? ps_auditsig_uniq(g->policy, g->npolicy) : 0;
	rc = 0;
out:
	ps_obj_free(po);
	ps_obj_free(root);
	ps_obj_free(ro);
	ps_obj_free(f);
	ps_obj_free(s);
	return rc;
}

/* The /Rect of signature G's widget (its field merged with it, or its
 * first kid) as of G's revision, when it shows (an overlap with it is
 * reported: audit.c note 5). */
static int widget_rect(struct audit *a, struct sigrec *g, uint32_t fnum)
{
	ps_obj *f = NULL, *k = NULL, *ko = NULL;
	const ps_obj *w, *r;
	size_t i;
	int rc;

	if (!fnum || (rc = ps_auditsig_load(a, fnum, g->sec, &f)) < 0 || !f)
		return fnum ? rc : 0;
	w = f;
	if (!ps_dict_get(f, "Rect") &&
	    (rc = ps_auditsig_resolve(a, ps_array_get(ps_dict_get(f, "Kids"), 0), g->sec, &k,
	                              &ko)) == 0 && k)
		w = k;
	r = ps_dict_get(w, "Rect");
	if (ps_array_len(r) == 4) {
		for (i = 0; i < 4; i++)
			if (ps_obj_num(ps_array_get(r, i), &g->rect[i]) < 0)
				break;
		if (i == 4) {
			double t;
			if (g->rect[0] > g->rect[2])
				t = g->rect[0], g->rect[0] = g->rect[2], g->rect[2] = t;
			if (g->rect[1] > g->rect[3])
				t = g->rect[1], g->rect[1] = g->rect[3], g->rect[3] = t;
			g->has_rect = g->rect[2] - g->rect[0] > 1e-3 &&
			              g->rect[3] - g->rect[1] > 1e-3;
		}
	}
	ps_obj_free(ko);
	ps_obj_free(f);
	return 0;
}

int ps_auditsig_add(void *ud, ps_obj *field, uint32_t fnum, ps_obj *sig, uint32_t snum, int level,
                    const char *name)
{
	struct audit *a = ud;
	struct pdfstamp_audit_sig *s;
	struct sigrec *g;
	ps_obj *br = ps_dict_get(sig, "ByteRange");
	int64_t v[4] = {-1, -1, -1, -1}, end = -1;
	int exact = 0, rc = 0;
	size_t k;

	(void)level; /* the newest revision's: read again as of the signed one */
	if (ps_vec_grow((void **)&a->r->sigs, (size_t)a->r->nsigs, sizeof *s) < 0 ||
	    ps_vec_grow((void **)&a->sigs, (size_t)a->r->nsigs, sizeof *g) < 0)
		return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	s = &a->r->sigs[a->r->nsigs];
	g = &a->sigs[a->r->nsigs];
	a->r->nsigs++;
	memset(s, 0, sizeof *s);
	memset(g, 0, sizeof *g);
	g->real = -1;
	g->snum = snum;
	snprintf(s->field, sizeof s->field, "%s", name);
	s->objnum = snum;
	s->doc_timestamp = g->timestamp = ps_auditsig_is_timestamp(sig);
	if (ps_dict_get(sig, "SubFilter") && ps_dict_get(sig, "SubFilter")->kind == PS_NAME)
		snprintf(s->subfilter, sizeof s->subfilter, "%s",
		         ps_dict_get(sig, "SubFilter")->u.name.p);
	if (ps_array_len(br) == 4) {
		int64_t size = ps_doc_size(a->doc);
		for (k = 0; k < 4; k++)
			if (ps_obj_int(ps_array_get(br, k), &v[k]) < 0 || v[k] < 0 || v[k] > size)
				v[k] = -1;
		if (v[0] == 0 && v[1] >= 0 && v[2] >= v[1] && v[3] >= 0 && v[2] <= size - v[3])
			end = v[2] + v[3];
	}
	g->end = end;
	g->sec = end > 0 ? revision_at(a->doc, end, &exact) : 0;
	if (!g->sec)
		g->sec = end > 0 ? revision_before(a, end) : a->ns;
	s->covers_revision = g->exact = exact;
	s->revision = rev_no(a, g->sec);
	if (!exact)
		s->violated = 1; /* note 2: bytes of its revision are unsigned */
	if (snum) {
		const ps_xent *e = ps_xref_slot(a->xref, snum);
		ps_xent old;
		if (e && e->sec < g->sec)
			s->violated = 1; /* note 2: redefined after the revision it covers */
		/* a signature dictionary is new in its own revision: one that
		 * replaces an older version of itself was redefined */
		if (e && e->sec < a->ns && ps_xref_as_of(a->xref, snum, e->sec + 1, &old) &&
		    old.type != 0) {
			ps_obj *prev = NULL;
			if ((rc = ps_auditsig_load(a, snum, e->sec + 1, &prev)) < 0)
				return rc;
			if (!ps_obj_equal(prev, sig, 0))
				s->violated = 1;
			ps_obj_free(prev);
		}
	}
	if ((rc = read_policy(a, g, fnum, field, snum, sig)) < 0 ||
	    (rc = widget_rect(a, g, fnum)) < 0)
		return rc;
	s->docmdp = g->docmdp;
	s->fieldmdp = g->fieldmdp;
	if (g->nfields) {
		if (!(s->fields = calloc((size_t)g->nfields, sizeof *s->fields)))
			return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		for (k = 0; k < (size_t)g->nfields; k++) {
			if (!(s->fields[k] = strdup(g->fields[k])))
				return ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			s->nfields++;
		}
	}
	return 0;
}

/* ---- signatures no longer in the field tree (note 2) ---------------------------- */


static int known_sig(const struct audit *a, uint32_t snum)
{
	int i;

	for (i = 0; i < a->r->nsigs; i++)
		if (a->r->sigs[i].objnum == snum)
			return 1;
	return 0;
}

/* The field tree as of SEC: a signature (an indirect /V) that the newest
 * revision's tree no longer holds was removed by a later revision.  It is
 * listed, judges the changes after it, and is violated: no reader of the
 * file sees it any more.  *VISITS bounds the work over all revisions. */
int ps_auditsig_old(struct audit *a, int sec, int64_t *visits)
{
	struct { ps_obj *arr; size_t i; } st[16];
	ps_obj *root = NULL, *acro = NULL, *ao = NULL, *fields = NULL, *fo = NULL;
	const ps_obj *rref = ps_auditsig_trailer_key(a, sec, 0);
	int sp = 0, rc = 0;

	if (!rref || rref->kind != PS_REF)
		return 0;
	if ((rc = ps_auditsig_load(a, rref->u.ref.num, sec, &root)) < 0 ||
	    (rc = ps_auditsig_resolve(a, ps_dict_get(root, "AcroForm"), sec, &acro, &ao)) < 0 ||
	    (rc = ps_auditsig_resolve(a, ps_dict_get(acro, "Fields"), sec, &fields, &fo)) < 0)
		goto out;
	if (fields && fields->kind == PS_ARRAY) {
		if (!(st[0].arr = ps_obj_copy(fields))) {
			rc = ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		st[0].i = 0;
		sp = 1;
	}
	while (sp > 0 && rc == 0) {
		const ps_obj *ref, *v;
		ps_obj *field = NULL, *kids = NULL, *ko = NULL;
		if (st[sp - 1].i >= ps_array_len(st[sp - 1].arr)) {
			ps_obj_free(st[--sp].arr);
			continue;
		}
		ref = ps_array_get(st[sp - 1].arr, st[sp - 1].i++);
		if (ref->kind != PS_REF)
			continue;
		if (++*visits > MAX_OLD_FIELD_VISITS) {
			rc = ps_err(a->ctx, PDFSTAMP_E_UNSUPPORTED,
			            "the form field trees of the revisions are too large to audit");
			break;
		}
		if ((rc = ps_auditsig_load(a, ref->u.ref.num, sec, &field)) < 0)
			break;
		if (!field || field->kind != PS_DICT) {
			ps_obj_free(field);
			continue;
		}
		v = ps_dict_get(field, "V");
		if (ps_obj_is_name(ps_dict_get(field, "FT"), "Sig") && v && v->kind == PS_REF &&
		    !known_sig(a, v->u.ref.num)) {
			ps_obj *sig = NULL;
			char name[128] = "?";
			const ps_obj *t = ps_dict_get(field, "T");
			if (t && t->kind == PS_STR)
				snprintf(name, sizeof name, "%.*s",
				         (int)(t->u.str.len < 100 ? t->u.str.len : 100),
				         (const char *)t->u.str.p);
			if ((rc = ps_auditsig_load(a, v->u.ref.num, sec, &sig)) == 0 && sig &&
			    sig->kind == PS_DICT &&
			    (rc = ps_auditsig_add(a, field, ref->u.ref.num, sig, v->u.ref.num, 0,
			                          name)) == 0)
				a->r->sigs[a->r->nsigs - 1].violated = 1;
			ps_obj_free(sig);
		}
		if (rc == 0 &&
		    (rc = ps_auditsig_resolve(a, ps_dict_get(field, "Kids"), sec, &kids,
		                              &ko)) == 0 &&
		    kids && kids->kind == PS_ARRAY) {
			if (sp == 16)
				rc = ps_err(a->ctx, PDFSTAMP_E_UNSUPPORTED,
				            "the form field tree of revision %d is nested too "
				            "deeply to know every signature", rev_no(a, sec));
			else if (!(st[sp].arr = ps_obj_copy(kids)))
				rc = ps_err(a->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			else
				st[sp++].i = 0;
		}
		ps_obj_free(ko);
		ps_obj_free(field);
	}
out:
	while (sp > 0)
		ps_obj_free(st[--sp].arr);
	ps_obj_free(fo);
	ps_obj_free(ao);
	ps_obj_free(root);
	return rc;
}

/* ---- is a signature real (note 5 of audit.c) ------------------------------- */

int ps_auditsig_real(struct audit *a, int i)
{
	struct sigrec *g = &a->sigs[i];
	struct ps_sigcms cms;
	ps_obj *sig = NULL;
	int rc;

	if (g->real >= 0)
		return 0;
	g->real = 0;
	if (!g->snum)
		return 0; /* a direct signature dictionary: a field of the same revision names it */
	if ((rc = ps_auditsig_load(a, g->snum, g->sec, &sig)) < 0)
		return rc == PDFSTAMP_E_NOMEM ? rc : 0;
	memset(&cms, 0, sizeof cms);
	if (sig && sig->kind == PS_DICT && (rc = ps_sigcms_check(a->doc, sig, &cms)) < 0) {
		ps_obj_free(sig);
		return rc;
	}
	ps_obj_free(sig);
	g->real = cms.parsed && cms.digest_ok && cms.signature_ok != 0 &&
	          (!g->timestamp || cms.timestamp);
	return 0;
}

/* ---- the bytes of a revision ("view signed version") ----------------------- */

/* Where revision SEC's bytes end: after the first "%%EOF" (and its EOL)
 * past its section that closes it ("startxref <its offset>"); -1 if none
 * (audit.h: also what pdfstamp_stamps reports). */
int64_t ps_auditsig_revision_end(ps_doc *doc, int sec)
{
	const ps_xref *x = ps_doc_xref(doc);
	struct ps_xref_info xi;
	ps_buf b = PS_BUF_INIT;
	int ns;
	int64_t off = ps_xref_sections(x, &ns)[sec - 1].off, end = -1, size = ps_doc_size(doc);

	ps_xref_info(x, &xi);
	if (sec == 1)
		return xi.eof_end > 0 ? xi.eof_end : size;
	while (off < size && end < 0) {
		size_t i;
		if (ps_doc_pread(doc, off, (size_t)1 << 16, &b) < 0 || b.len < 6)
			break;
		for (i = 0; i + 5 <= b.len && end < 0; i++) {
			int64_t e = off + (int64_t)i + 5;
			int exact = 0;
			if (memcmp(b.data + i, "%%EOF", 5) != 0)
				continue;
			if (i + 5 < b.len && b.data[i + 5] == '\r')
				e++;
			if (e - off < (int64_t)b.len && b.data[e - off] == '\n')
				e++;
			if (revision_at(doc, e, &exact) == sec && exact)
				end = e;
		}
		off += (int64_t)b.len - 8; /* a marker across the chunk boundary */
	}
	ps_buf_free(&b);
	return end;
}

int pdfstamp_audit_extract(pdfstamp_doc *doc, int revision, const char *path, int64_t *length)
{
	ps_ctx *ctx;
	ps_outfile of;
	struct ps_doc_file f;
	struct stat in, out;
	int64_t end;
	int rc, sec, ns;

	if (!doc || !path)
		return doc ? ps_err(ps_doc_ctx(doc), PDFSTAMP_E_USAGE,
		                    "pdfstamp_audit_extract: NULL argument")
		           : PDFSTAMP_E_USAGE;
	ctx = ps_doc_ctx(doc);
	ps_doc_file(doc, &f);
	ps_xref_sections(ps_doc_xref(doc), &ns);
	if (revision < 1 || revision > ns)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "there is no revision %d (the file has %d)",
		              revision, ns);
	/* the output must not be the input: that would drop its later revisions */
	if (fstat(f.fd, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
	    in.st_ino == out.st_ino)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the output is the input file itself");
	sec = ns - revision + 1;
	if ((end = ps_auditsig_revision_end(doc, sec)) <= 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "revision %d has no %%%%EOF that closes it",
		              revision);
	if ((rc = ps_outfile_open(ctx, &of, path)) < 0)
		return rc;
	if ((rc = ps_io_copy_prefix(ctx, f.fd, of.fd, end)) == 0 &&
	    (rc = ps_outfile_commit(ctx, &of, 0644, 0)) == 0 && length)
		*length = end;
	ps_outfile_free(&of);
	return rc;
}

/* ---- signatures outside the field tree (note 2) ---------------------------- */

static int stray_sig(struct audit *a, uint32_t num, const ps_xent *x, int64_t *loads)
{
	ps_obj *o = NULL;
	const ps_obj *type;
	int rc;

	if (x->type == 0 || x->sec < 1 || x->sec >= a->ns || known_sig(a, num))
		return 0;
	if (++*loads > MAX_OLD_FIELD_VISITS)
		return ps_err(a->ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the later revisions hold too many objects to find every signature");
	if ((rc = ps_auditsig_load(a, num, x->sec, &o)) < 0)
		return rc == PDFSTAMP_E_NOMEM ? rc : 0; /* judged (damaged) where it is compared */
	type = ps_dict_get(o, "Type");
	if (o && o->kind == PS_DICT && ps_array_len(ps_dict_get(o, "ByteRange")) == 4 &&
	    ps_dict_get(o, "Contents") && ps_dict_get(o, "Contents")->kind == PS_STR &&
	    (!type || ps_obj_is_name(type, "Sig") || ps_obj_is_name(type, "DocTimeStamp")))
		rc = ps_auditsig_add(a, NULL, 0, o, num, 0, "(outside the form field tree)");
	ps_obj_free(o);
	return rc;
}

/* Signature dictionaries that a revision after the first defines but no
 * field tree lists (a widget on a page only: poppler's pdfsig writes one
 * when /AcroForm is direct in the catalog, and viewers show and validate
 * it).  Each is listed and judges the changes after it like any other: a
 * signed file must never pass for "unsigned".  The first revision is not
 * searched (a signature made with the document itself is in its form). */
int ps_auditsig_stray(struct audit *a)
{
	int64_t loads = 0;
	const ps_xshadow *hidden;
	uint32_t num;
	size_t k, nhidden;
	int rc = 0;

	for (num = ps_xref_next_slot(a->xref, 0); num && rc == 0;
	     num = ps_xref_next_slot(a->xref, num))
		rc = stray_sig(a, num, ps_xref_slot(a->xref, num), &loads);
	hidden = ps_xref_hidden(a->xref, &nhidden);
	for (k = 0; k < nhidden && rc == 0; k++)
		rc = stray_sig(a, hidden[k].num, &hidden[k].e, &loads);
	return rc;
}
