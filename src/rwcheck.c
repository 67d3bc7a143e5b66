/*
 * rwcheck.c - the full rewrite's self-check: the temporary output is
 * re-read and compared with the input before it replaces anything
 * (rewrite.c design note 5).
 *
 * DESIGN NOTES
 *
 *  1. What is checked, in this order, on the output re-opened from its
 *     temporary file (without looking at any journal: PS_OPEN_NO_RECOVER):
 *       a. the new owner password opens it, as the owner (Algorithm 2.A,
 *          ISO 32000-2 7.6.4.3.3);
 *       b. pdfstamp_verify: every object parses and decrypts, every
 *          stream's padding is sound (verify.c);
 *       c. it has one cross-reference section, whose live object numbers
 *          are exactly the input's, less its /Encrypt and what the rewrite
 *          drops (the chain's xref streams, the linearization dictionary),
 *          plus the new /Encrypt and the output's own xref stream;
 *       d. /Root is an indirect dictionary and the page tree walked from
 *          it (7.7.3) has the input's page count, when the input's tree
 *          can be walked at all.
 *  2. Blame: a failure is PDFSTAMP_E_INTERNAL ("self-check ..."), a bug,
 *     except when b fails and the input, verified only then, has at least
 *     as many faults: members of object streams are carried over unparsed,
 *     so damage in them shows only now, and it is the input's
 *     (PDFSTAMP_E_FORMAT, "the input is damaged").
 *  3. The page tree walk loads its nodes uncached and frees them at once,
 *     and visits each node once (a set of numbers catches cycles), so it
 *     is bounded by the file whatever the tree claims.
 *  State: none is kept; the output document is opened and closed here.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Note 1c: the output's live objects are exactly the input's, less the old
 * /Encrypt and what the rewrite dropped (DROPPED, sorted), plus the new
 * /Encrypt and the output's own xref stream. */
static int check_live_objects(ps_doc *doc, ps_doc *v, const uint32_t *dropped, size_t ndropped, uint32_t enc_num)
{
	uint32_t a, b, num, self = 0;

	if (v->nsections != 1)
		return ps_err(doc->ctx, PDFSTAMP_E_INTERNAL, "self-check: the output has %d cross-reference sections",
		              v->nsections);
	if (v->sections[0].kind == PDFSTAMP_XREF_STREAM)
		self = v->sections[0].stream_num;
	/* both walks in step, over the numbers in use in either file */
	a = ps_xref_next(doc, 0);
	b = ps_xref_next(v, 0);
	while (a != 0 || b != 0) {
		int in, want, got;
		num = a == 0 ? b : b == 0 ? a : a < b ? a : b;
		in = num == a;
		got = num == b;
		want = (in && num != doc->encrypt_num && !bsearch(&num, dropped, ndropped, sizeof *dropped, cmp_u32)) ||
		       num == enc_num || num == self;
		if (want != got)
			return ps_err(doc->ctx, PDFSTAMP_E_INTERNAL, "self-check: object %u is %s the output", num,
			              got ? "new in" : "missing from");
		if (in)
			a = ps_xref_next(doc, a);
		if (got)
			b = ps_xref_next(v, b);
	}
	return 0;
}

/* A set of object numbers (open addressing; 0 is never a member). */
struct numset {
	uint32_t *slot;
	size_t cap, n;
};

/* Adds NUM: 1 if it was new, 0 if already there, -1 out of memory. */
static int numset_add(struct numset *s, uint32_t num)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct numset g = {NULL, s->cap ? 2 * s->cap : 1024, 0};
		if (!(g.slot = calloc(g.cap, sizeof *g.slot)))
			return -1;
		for (i = 0; i < s->cap; i++)
			if (s->slot[i])
				numset_add(&g, s->slot[i]);
		free(s->slot);
		*s = g;
	}
	for (i = (num * UINT32_C(2654435761)) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == num)
			return 0;
	s->slot[i] = num;
	s->n++;
	return 1;
}

/* The page tree of D from /Root (note 3): the number of pages, or in WHY
 * the first thing that stops the walk (a node reached twice, which catches
 * cycles, a kid that is not an indirect dictionary, an object that cannot
 * be read).  The catalog comes from ps_doc_catalog.  ROOT_OK says whether
 * /Root resolved to a dictionary.  Returns 0 or PDFSTAMP_E_NOMEM. */
static int walk_pages(ps_doc *d, int *root_ok, int64_t *pages, char *why, size_t whylen)
{
	ps_obj *r = NULL, *cat = NULL, *node = NULL, *kids, *p;
	struct numset seen = {NULL, 0, 0};
	uint32_t *stack = NULL, num;
	size_t sp = 0, cap = 0, i;
	int rc = 0, k;

	*root_ok = 0;
	*pages = 0;
	why[0] = 0;
	if ((k = ps_doc_catalog(d, PS_CATALOG_ANY, &cat, &r)) == PDFSTAMP_E_NOMEM)
		goto oom;
	if (k < 0 || !r || !cat || cat->kind != PS_DICT) {
		snprintf(why, whylen, "/Root is not an indirect dictionary");
		goto out;
	}
	*root_ok = 1;
	if (numset_add(&seen, r->u.ref.num) < 0)
		goto oom;
	p = ps_dict_get(cat, "Pages");
	if (!p || p->kind != PS_REF) {
		snprintf(why, whylen, "the catalog has no indirect /Pages");
		goto out;
	}
	num = p->u.ref.num;
	for (;;) {
		ps_obj_free(node);
		node = NULL;
		if ((k = numset_add(&seen, num)) < 0)
			goto oom;
		if (k == 0) {
			snprintf(why, whylen, "page tree object %u is reached twice", num);
			goto out;
		}
		if ((k = ps_doc_load(d, num, &node)) == PDFSTAMP_E_NOMEM)
			goto oom;
		if (k < 0 || !node || node->kind != PS_DICT) {
			snprintf(why, whylen, "page tree object %u is not a readable dictionary", num);
			goto out;
		}
		kids = ps_dict_get(node, "Kids");
		if (ps_obj_is_name(ps_dict_get(node, "Type"), "Pages") ||
		    (kids && !ps_obj_is_name(ps_dict_get(node, "Type"), "Page"))) {
			if (!kids || kids->kind != PS_ARRAY) {
				snprintf(why, whylen, "page tree node %u has no /Kids array", num);
				goto out;
			}
			for (i = ps_array_len(kids); i-- > 0;) {
				ps_obj *kid = ps_array_get(kids, i);
				if (kid->kind != PS_REF) {
					snprintf(why, whylen, "page tree node %u has a kid that is not a reference", num);
					goto out;
				}
				if (sp == cap) {
					uint32_t *ns = realloc(stack, (cap ? 2 * cap : 64) * sizeof *stack);
					if (!ns)
						goto oom;
					stack = ns;
					cap = cap ? 2 * cap : 64;
				}
				stack[sp++] = kid->u.ref.num;
			}
		} else {
			(*pages)++;
		}
		if (sp == 0)
			break;
		num = stack[--sp];
	}
	goto out;
oom:
	rc = ps_err(d->ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(node);
	free(stack);
	free(seen.slot);
	return rc;
}

/* Note 1d: the output's /Root resolves, and its page tree has the input's
 * pages (when the input's page tree can be walked at all). */
static int check_page_trees(ps_doc *in, ps_doc *out)
{
	char wa[160], wb[160];
	int64_t na, nb;
	int ra, rb, rc;

	if ((rc = walk_pages(in, &ra, &na, wa, sizeof wa)) < 0 || (rc = walk_pages(out, &rb, &nb, wb, sizeof wb)) < 0)
		return rc;
	if (!rb)
		return ps_err(in->ctx, PDFSTAMP_E_INTERNAL, "self-check: in the output, %s", wb);
	if (!wa[0] && wb[0])
		return ps_err(in->ctx, PDFSTAMP_E_INTERNAL, "self-check: in the output, %s", wb);
	if (!wa[0] && na != nb)
		return ps_err(in->ctx, PDFSTAMP_E_INTERNAL,
		              "self-check: the output's page tree has %" PRId64 " pages, the input's %" PRId64, nb, na);
	return 0;
}

int ps_rewrite_check(ps_doc *doc, const char *path, const char *owner, size_t owner_len,
                     const uint32_t *dropped, size_t ndropped, uint32_t enc_num)
{
	ps_ctx *ctx = doc->ctx;
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT, in = PDFSTAMP_VERIFY_REPORT_INIT;
	char why[sizeof ctx->errmsg];
	ps_doc *v = NULL;
	int rc;

	if ((rc = ps_doc_open(ctx, &v, path, PS_OPEN_NO_RECOVER)) < 0 ||
	    (rc = pdfstamp_doc_auth(v, owner, owner_len, 0)) < 0 ||
	    (rc = pdfstamp_verify(v, &rep, NULL, NULL)) < 0) {
		/* note 2 */
		snprintf(why, sizeof why, "%s", ctx->errmsg);
		if (rc == PDFSTAMP_E_FORMAT && rep.faults > 0 &&
		    pdfstamp_verify(doc, &in, NULL, NULL) == PDFSTAMP_E_FORMAT && in.faults >= rep.faults)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the input is damaged: %" PRId64
			            " object(s) cannot be read; first: %s", in.faults, in.first_fault);
		else
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check of the rewritten file failed: %s", why);
		goto out;
	}
	if (v->authenticated != 2) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: the new owner password does not open the output");
		goto out;
	}
	if ((rc = check_live_objects(doc, v, dropped, ndropped, enc_num)) < 0)
		goto out;
	rc = check_page_trees(doc, v);
out:
	pdfstamp_doc_close(v);
	return rc;
}
