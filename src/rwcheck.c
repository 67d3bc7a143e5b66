/* SPDX-License-Identifier: Apache-2.0 */
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
 *          ISO 32000-2 7.6.4.3.3); or, encrypted to certificates, the
 *          seed of its envelopes with the key derived again from the
 *          /Recipients strings as written (pubsec.c note 5);
 *       b. pdfstamp_verify: every object parses and decrypts, every
 *          stream's padding is sound (verify.c), and every stream
 *          decrypts to the bytes the rewrite encrypted (note 8);
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
 *     (PDFSTAMP_E_FORMAT, "the input is damaged").  A stream that decrypts
 *     to other bytes than were encrypted (note 8) is never the input's: it
 *     is reported as found, before anything else can mask it.
 *  3. The page tree walk loads its nodes uncached and frees them at once,
 *     and visits each node once (a set of numbers catches cycles), so it
 *     is bounded by the file whatever the tree claims.
 *  4. One pass over the bytes.  Check b is what pdfstamp_verify does (every
 *     object in use parsed, its strings decrypted, every stream's data
 *     decrypted and its padding checked, /Perms), but done in file order
 *     over large reads: the sequential reader (seqread.c, also the
 *     rewrite's reader) lists the output's type-1 objects by offset from
 *     its own, freshly read xref, reads the file in segments of about 4 MB
 *     and parses each object from its bytes there (from its offset to the
 *     next object's), so the output is read once, in a few dozen preads,
 *     instead of three small preads and a window parse per object.  It is
 *     read, never mapped: a mapping turns an I/O error on the output into
 *     a SIGBUS in the caller's process instead of PDFSTAMP_E_IO, and since
 *     the reader's buffers sit on huge pages (seqread.c note 2) reading
 *     into them is no slower than the mapping's page faults were.  The
 *     decryption is real: the output's own handler, opened with the new
 *     password, decrypts every string and stream (ps_sec_convert_strings,
 *     ps_sec_decrypt_stream, as doc.c does).  An object the reader cannot
 *     take from its segment, and the members of object streams, are
 *     loaded exactly as pdfstamp_verify loads them.  Only when this pass
 *     finds a fault does pdfstamp_verify run, for the report that note 2
 *     compares.
 *  5. The reader's segments: seqread.c note 1.
 *  6. Its segment buffers come from a pool that outlives the reader
 *     (seqread.c note 2).  The rewrite keeps a reference (ps_seq_pool)
 *     and hands the pool to its self-check (ps_rwcheck.pool), whose
 *     reader on the same thread then reads the output into the buffers
 *     the input was read into: none fresh.  The buffers hold what the
 *     file holds (the rewrite's are re-encrypted in place, and wiped by it
 *     where that stops half-way: rewrite.c batch_clear).
 *  7. Check b runs on the rewrite's thread count: this thread lists the
 *     objects in batches of about one segment (with what needs the
 *     document: generation, xref stream or not), any thread parses and
 *     decrypts a batch from its segments (ps_seq_parse and the output's
 *     handler, read-only, touch no document), and this thread takes the
 *     results in file order, loads the objects a segment could not serve
 *     the careful way (the document and its cache are this thread's
 *     alone), and releases the segments.  So the first fault in file order
 *     is the one reported, as a serial pass would; at most one batch per
 *     thread plus one is in flight.  Warnings of every thread reach the
 *     caller's callback one at a time.  Each thread decrypts into one
 *     secret buffer of its own for the whole pass, wiped after every
 *     batch (not freed: a fresh one per batch cost page faults).
 *  8. What the data decrypts to.  CBC has no integrity check: a stream
 *     whose middle blocks the rewrite got wrong (a plaintext not wholly
 *     decrypted, a lane that chained from the wrong block) still decrypts,
 *     and its padding, which depends only on the last two blocks, is
 *     sound; checks a-d would pass and the target would be replaced by it.
 *     So the rewrite sums each stream's plaintext just before the engine
 *     encrypts it (rewrite.c note 12; the rows SUMS), and here every
 *     stream the output's handler decrypts must give the same sum, and
 *     every summed stream must be met: else PDFSTAMP_E_INTERNAL.  The sum
 *     (ps_rwcheck_sum) is not cryptographic -- it catches our mistakes, not
 *     an attacker's, who has no hand in either side -- but any change of
 *     one 4-byte word is always seen (each step, and the lanes' final
 *     combination, is a bijection of the lane's state), and the length
 *     is in it.  Here it runs on data the decryption has just left in the
 *     cache; in the rewrite, on a batch's bytes just before the engine
 *     reads them (for a batch larger than the cache, one more pass over
 *     memory, which the engine then finds cached).  32 lanes of 32 bits,
 *     eight to a vector (ps_rwcheck_sum): the scalar sum of 4 lanes of 64
 *     bits it replaced ran at 5-10 GB/s and cost as much CPU as the
 *     encryption.  The sum costs its row 8 bytes more (24 for every
 *     object written).
 *  State: none is kept; the output document is opened and closed here.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "cpu.h"
#include "seqread.h"

/* ---- note 8: the plaintext's sum ---------------------------------------------------- */

#define SUM_K1 0x9e3779b97f4a7c15ull   /* odd constants: multiplying by them is a bijection */
#define SUM_K2 0xc2b2ae3d27d4eb4full
#define SUM_K3 0x165667b19e3779f9ull
#define SUM_M1 0x9e3779b1u             /* the same, for the 32-bit lanes */
#define SUM_M2 0x85ebca77u
#define SUM_LANES 32                   /* 4-byte words: a step takes 128 bytes */

/* One step of a lane: a bijection of V for each word X, and of X for each V. */
static uint32_t sum_step(uint32_t v, uint32_t x)
{
	v += x * SUM_M2;
	return ((v << 13) | (v >> 19)) * SUM_M1;
}

/* Eight lanes at once (GCC's and clang's vector extensions), stepped in
 * ps_rwcheck_sum by the arithmetic of sum_step, lane by lane. */
typedef uint32_t sum_vec __attribute__((vector_size(32)));

/* The lanes' starting values (distinct: the high half of SUM_K3 plus
 * l times SUM_M1). */
static const uint32_t sum_init[SUM_LANES] __attribute__((aligned(32))) = {
	0x165667b1, 0xb48de162, 0x52c55b13, 0xf0fcd4c4,
	0x8f344e75, 0x2d6bc826, 0xcba341d7, 0x69dabb88,
	0x08123539, 0xa649aeea, 0x4481289b, 0xe2b8a24c,
	0x80f01bfd, 0x1f2795ae, 0xbd5f0f5f, 0x5b968910,
	0xf9ce02c1, 0x98057c72, 0x363cf623, 0xd4746fd4,
	0x72abe985, 0x10e36336, 0xaf1adce7, 0x4d525698,
	0xeb89d049, 0x89c149fa, 0x27f8c3ab, 0xc6303d5c,
	0x6467b70d, 0x029f30be, 0xa0d6aa6f, 0x3f0e2420,
};

/* Note 8.  Word i (4 bytes, host order: both sides run on this host) of
 * each 128-byte block goes to lane i; the words of a last partial block
 * go to lanes 0, 1, ... in turn, a last partial word padded with zeros.
 * The lanes are then added up, lane l times the odd 64-bit SUM_K1 + 2 l
 * SUM_K2 (a lane that differs by d changes the total by d times an odd
 * number, never 0 mod 2^64 for 0 < |d| < 2^32), with the length times
 * SUM_K3, and the total mixed by bijections.  The vector type is the
 * arithmetic of sum_step on eight lanes at a time, four vectors in
 * flight.  The body is built twice, for the baseline and for AVX2
 * (sum_avx2, where PS_X86_KERNELS), and ps_rwcheck_sum picks by the
 * caller's CPU bits: the same result either way, which
 * tests/check_rewrite.c checks of each against a lane-by-lane reference.
 * (Not GCC's target_clones: clang 14 emits its ifunc under another name
 * than the function's, and the library does not link.) */
static inline __attribute__((always_inline)) uint64_t sum_body(const uint8_t *p, size_t n)
{
	sum_vec v0, v1, v2, v3, x0, x1, x2, x3;
	uint32_t lane[SUM_LANES], last = 0;
	uint64_t h;
	size_t i = 0, k;
	int l;

	memcpy(&v0, sum_init, 32);
	memcpy(&v1, sum_init + 8, 32);
	memcpy(&v2, sum_init + 16, 32);
	memcpy(&v3, sum_init + 24, 32);
	for (; n - i >= 4 * SUM_LANES; i += 4 * SUM_LANES) {
		memcpy(&x0, p + i, 32);
		memcpy(&x1, p + i + 32, 32);
		memcpy(&x2, p + i + 64, 32);
		memcpy(&x3, p + i + 96, 32);
		v0 += x0 * SUM_M2;
		v1 += x1 * SUM_M2;
		v2 += x2 * SUM_M2;
		v3 += x3 * SUM_M2;
		v0 = ((v0 << 13) | (v0 >> 19)) * SUM_M1;
		v1 = ((v1 << 13) | (v1 >> 19)) * SUM_M1;
		v2 = ((v2 << 13) | (v2 >> 19)) * SUM_M1;
		v3 = ((v3 << 13) | (v3 >> 19)) * SUM_M1;
	}
	memcpy(lane, &v0, 32);
	memcpy(lane + 8, &v1, 32);
	memcpy(lane + 16, &v2, 32);
	memcpy(lane + 24, &v3, 32);
	for (k = 0; n - i >= 4; i += 4, k++) {
		uint32_t x;
		memcpy(&x, p + i, 4);
		lane[k] = sum_step(lane[k], x);
	}
	if (i < n) {
		memcpy(&last, p + i, n - i);
		lane[k] = sum_step(lane[k], last);
	}
	h = (uint64_t)n * SUM_K3;
	for (l = 0; l < SUM_LANES; l++)
		h += (uint64_t)lane[l] * (SUM_K1 + 2 * (uint64_t)l * SUM_K2);
	h ^= h >> 33;
	h *= SUM_K2;
	h ^= h >> 29;
	h *= SUM_K1;
	h ^= h >> 32;
	return h;
}

static uint64_t sum_base(const uint8_t *p, size_t n)
{
	return sum_body(p, n);
}

#ifdef PS_X86_KERNELS
__attribute__((target("avx2"))) static uint64_t sum_avx2(const uint8_t *p, size_t n)
{
	return sum_body(p, n);
}
#endif

uint64_t ps_rwcheck_sum(unsigned cpu, const uint8_t *p, size_t n)
{
#ifdef PS_X86_KERNELS
	if (cpu & PS_CPU_AVX2)
		return sum_avx2(p, n);
#endif
	(void)cpu;
	return sum_base(p, n);
}

/* ---- the checks ----------------------------------------------------------------------- */

/* Note 1c: the output's live objects are exactly the input's, less the old
 * /Encrypt and what the rewrite dropped (DROPPED, sorted), plus the new
 * /Encrypt and the output's own xref stream. */
static int check_live_objects(ps_doc *doc, ps_doc *v, const uint32_t *dropped, size_t ndropped,
                              uint32_t enc_num)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	const ps_xref *xd = ps_doc_xref(doc), *xv = ps_doc_xref(v);
	struct ps_doc_security ds;
	int nsec;
	const ps_section *vs = ps_xref_sections(xv, &nsec);
	uint32_t a, b, num, self = 0;

	ps_doc_security(doc, &ds);
	if (nsec != 1)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              "self-check: the output has %d cross-reference sections", nsec);
	if (vs[0].kind == PDFSTAMP_XREF_STREAM)
		self = vs[0].stream_num;
	/* both walks in step, over the numbers in use in either file */
	a = ps_xref_next(xd, 0);
	b = ps_xref_next(xv, 0);
	while (a != 0 || b != 0) {
		int in, want, got;
		num = a == 0 ? b : b == 0 ? a : a < b ? a : b;
		in = num == a;
		got = num == b;
		want = (in && num != ds.encrypt_num &&
		        !ps_rwdrop_has(dropped, ndropped, num)) ||
		       num == enc_num || num == self;
		if (want != got)
			return ps_err(ctx, PDFSTAMP_E_INTERNAL,
			              "self-check: object %u is %s the output", num,
			              got ? "new in" : "missing from");
		if (in)
			a = ps_xref_next(xd, a);
		if (got)
			b = ps_xref_next(xv, b);
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
	for (i = (num * UINT32_C(2654435761)) & (s->cap - 1); s->slot[i];
	     i = (i + 1) & (s->cap - 1))
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
			snprintf(why, whylen, "page tree object %u is not a readable dictionary",
			         num);
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
					snprintf(why, whylen,
					         "page tree node %u has a kid that is not "
					         "a reference", num);
					goto out;
				}
				if (sp == cap) {
					uint32_t *ns = realloc(stack, (cap ? 2 * cap : 64) *
					                              sizeof *stack);
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
	rc = ps_err(ps_doc_ctx(d), PDFSTAMP_E_NOMEM, "out of memory");
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
	ps_ctx *ctx = ps_doc_ctx(in);
	char wa[160], wb[160];
	int64_t na, nb;
	int ra, rb, rc;

	if ((rc = walk_pages(in, &ra, &na, wa, sizeof wa)) < 0 ||
	    (rc = walk_pages(out, &rb, &nb, wb, sizeof wb)) < 0)
		return rc;
	if (!rb)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: in the output, %s", wb);
	if (!wa[0] && wb[0])
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: in the output, %s", wb);
	if (!wa[0] && na != nb)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: the output's page tree has %"
		              PRId64 " pages, the input's %" PRId64, nb, na);
	return 0;
}

/* Note 7: the check of note 4 in batches of about one segment, shared out
 * to JOBS threads (this one included).  A batch's objects are listed here,
 * in file order, with what needs the document (generation, whether it is
 * an xref stream); any thread parses and decrypts them from their segment
 * (touching no document: ps_seq_parse, the output's handler read-only);
 * this thread takes the results in file order, loads the objects that
 * could not be taken from a segment the careful way, and releases the
 * segments.  The first fault in file order is the one reported, as in a
 * serial pass. */
#define CHK_BYTES ((int64_t)4 << 20)
#define CHK_ITEMS 4096

struct chk_item {
	ps_seq_obj so;
	uint16_t gen;
	int xs;               /* an xref stream of the output: not encrypted */
	int careful;          /* not from its segment: this thread loads it */
};

struct chk_batch {
	struct chk_item *it;
	size_t n;
	int state;            /* 0 queued, 1 taken, 2 done */
	int rc;               /* the first fault's code, at item FAIL */
	size_t fail;
	size_t summed;        /* streams whose sums matched (note 8) */
	char err[256];
	struct chk_batch *next; /* on the spare list */
};

struct chk {
	ps_doc *v;
	ps_sec *vsec;                 /* its handler (ps_doc_security), NULL if not encrypted */
	const ps_rwoff *sums;         /* note 8: sorted by number, or NULL */
	size_t nsums;
	unsigned cpu;                 /* ps_cpu_bits: the sum's kernel */
	size_t met;                   /* sums matched, of the batches taken */
	pthread_mutex_t mu, wmu;
	pthread_cond_t cv;
	struct chk_batch **win;       /* ring, in file order */
	size_t wcap, whead, wcount;
	struct chk_batch *spare;      /* taken, for the next batch (this thread's) */
	int stop;
	pdfstamp_warn_fn warn;        /* the caller's, restored at the end */
	void *warn_ud;
};

static void chk_warn(void *ud, const char *msg)
{
	struct chk *c = ud;

	pthread_mutex_lock(&c->wmu);
	if (c->warn)
		c->warn(c->warn_ud, msg);
	pthread_mutex_unlock(&c->wmu);
}

/* Note 8: P (N bytes) is what object NUM's stream decrypts to in the
 * output; it must be what the rewrite summed.  Counts it in *MET. */
static int sum_check(ps_ctx *ctx, const struct chk *c, uint32_t num, const uint8_t *p, size_t n,
                     size_t *met)
{
	const ps_rwoff *row;

	if (!c->sums)
		return 0;
	if (!(row = ps_rwoffs_find(c->sums, c->nsums, num)) || !row->summed)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              "self-check: object %u has encrypted stream data that the rewrite "
		              "did not encrypt", num);
	if (ps_rwcheck_sum(c->cpu, p, n) != row->sum)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL,
		              "self-check: the stream of object %u decrypts to other bytes than "
		              "the rewrite encrypted", num);
	(*met)++;
	return 0;
}

/* Parses and decrypts B's objects (any thread, its own CTX) into PLAIN,
 * the thread's secret buffer, kept from batch to batch (its pages stay
 * mapped: no growing and page faults per batch); each stream's plaintext
 * overwrites the last one's from byte 0, so the longest of the batch is
 * what is wiped at its end (sec.c wipes what a failure leaves past len).
 * Each object comes from the thread's arena AR and is freed before AR is
 * reset for the next (obj.c note 9): one object's worth of it is used. */
static void chk_run(const struct chk *c, ps_ctx *ctx, struct chk_batch *b, ps_buf *plain,
                    ps_arena *ar)
{
	ps_sec *vsec = c->vsec;
	size_t i, used = 0;
	int rc = 0;

	for (i = 0; i < b->n && rc == 0; i++) {
		struct chk_item *e = &b->it[i];
		uint8_t *data;
		size_t len;
		ps_obj *o;

		ps_arena_reset(ar); /* the previous object's (or failed parse's) memory */
		ps_seq_parse(ctx, ar, &e->so, &o, &data, &len);
		if (!o) {
			e->careful = 1;
			continue;
		}
		if (vsec && !(o->kind == PS_STREAM && e->xs))
			rc = ps_sec_convert_strings(ctx, vsec, NULL, e->so.num, e->gen, o, NULL);
		if (rc == 0 && o->kind == PS_STREAM && vsec && !e->xs &&
		    ps_sec_stream_encrypted(vsec, o)) {
			if ((rc = ps_sec_decrypt_stream(ctx, vsec, o, e->so.num, e->gen, data, len,
			                                plain)) < 0)
				rc = ps_err_wrap(ctx, rc, "cannot decrypt the stream of object %u",
				                 e->so.num);
			else
				rc = sum_check(ctx, c, e->so.num, plain->data, plain->len,
				               &b->summed);
		}
		if (plain->len > used)
			used = plain->len;
		plain->len = 0;
		plain->oom = 0;
		ps_obj_free(o);
		if (rc < 0) {
			b->rc = rc;
			b->fail = i;
			snprintf(b->err, sizeof b->err, "%s", ctx->errmsg);
		}
	}
	ps_arena_reset(ar);
	if (used)
		ps_wipe(plain->data, used);
}

static void *chk_worker(void *arg)
{
	struct chk *c = arg;
	ps_ctx *wctx = NULL;
	ps_buf plain = PS_BUF_INIT;
	ps_arena *ar = ps_arena_new(); /* NULL: malloc */

	plain.secret = 1;
	if (pdfstamp_ctx_new(&wctx) < 0)
		wctx = NULL;
	if (wctx) {
		wctx->warn = chk_warn;
		wctx->warn_ud = c;
	}
	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct chk_batch *b = NULL;
		size_t i;
		for (i = 0; i < c->wcount && !b; i++)
			if (c->win[(c->whead + i) % c->wcap]->state == 0)
				b = c->win[(c->whead + i) % c->wcap];
		if (!wctx || c->stop)
			break; /* no context (the other threads do the work), or done */
		if (!b) {
			pthread_cond_wait(&c->cv, &c->mu);
			continue;
		}
		b->state = 1;
		pthread_mutex_unlock(&c->mu);
		chk_run(c, wctx, b, &plain, ar);
		pthread_mutex_lock(&c->mu);
		b->state = 2;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	plain.secret = 0; /* wiped after each batch (chk_run): no need to fault in the rest */
	ps_buf_free(&plain);
	ps_arena_free(ar);
	pdfstamp_ctx_free(wctx);
	return NULL;
}

static void chk_free(struct chk_batch *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++)
		ps_seq_seg_release(b->it[i].so.seg);
	free(b->it);
	free(b);
}

/* A batch taken goes to the spare list, its item array with it: a fresh
 * one per batch would be a fresh mapping, its pages faulted in anew. */
static void chk_done(struct chk *c, struct chk_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		ps_seq_seg_release(b->it[i].so.seg);
	b->n = 0;
	b->state = b->rc = 0;
	b->fail = b->summed = 0;
	b->next = c->spare;
	c->spare = b;
}

/* Takes the oldest batch's results (running queued batches meanwhile):
 * its careful objects loaded here, its first fault reported, in order. */
static int chk_take(struct chk *c, ps_buf *plain, ps_arena *ar)
{
	ps_doc *v = c->v;
	struct chk_batch *b;
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&c->mu);
	b = c->win[c->whead];
	while (b->state != 2) {
		struct chk_batch *q = NULL;
		for (i = 0; i < c->wcount && !q; i++)
			if (c->win[(c->whead + i) % c->wcap]->state == 0)
				q = c->win[(c->whead + i) % c->wcap];
		if (!q) {
			pthread_cond_wait(&c->cv, &c->mu);
			continue;
		}
		q->state = 1;
		pthread_mutex_unlock(&c->mu);
		chk_run(c, ps_doc_ctx(v), q, plain, ar);
		pthread_mutex_lock(&c->mu);
		q->state = 2;
		pthread_cond_broadcast(&c->cv);
	}
	c->whead = (c->whead + 1) % c->wcap;
	c->wcount--;
	pthread_mutex_unlock(&c->mu);
	for (i = 0; i < b->n && rc == 0; i++) {
		if (b->rc < 0 && i == b->fail) {
			rc = ps_err(ps_doc_ctx(v), b->rc, "%s", b->err);
		} else if (b->it[i].careful) { /* the careful way, as pdfstamp_verify */
			ps_obj *o = NULL;
			uint32_t num = b->it[i].so.num;
			if ((rc = ps_doc_load(v, num, &o)) == 0 && o && o->kind == PS_STREAM &&
			    (rc = ps_doc_stream_data(v, num, o, 0, plain)) == 0 && c->vsec &&
			    !b->it[i].xs && ps_sec_stream_encrypted(c->vsec, o))
				rc = sum_check(ps_doc_ctx(v), c, num, plain->data, plain->len,
				               &b->summed);
			ps_buf_reset(plain); /* wipes the plaintext (a secret buffer) */
			ps_obj_free(o);
		}
	}
	c->met += b->summed;
	chk_done(c, b);
	return rc;
}

/* Note 4: one pass over the output V (note 7: on JOBS threads): 0 when
 * every object in use parses and decrypts, else the first failure (a
 * fault; NOMEM is not one). */
static int check_objects(ps_doc *v, const ps_rwcheck *in)
{
	ps_ctx *ctx = ps_doc_ctx(v);
	const ps_xref *vx = ps_doc_xref(v);
	struct ps_doc_security vs;
	struct chk c;
	struct chk_batch *b = NULL;
	ps_seqread r;
	ps_buf plain = PS_BUF_INIT;
	ps_arena *ar = NULL;
	ps_seq_obj so;
	pthread_t th[8];
	uint32_t num;
	ps_obj *o;
	int rc, i, nth = 0, more = 1, jobs = in->jobs < 1 ? 1 : in->jobs > 9 ? 9 : in->jobs;

	plain.secret = 1;
	ps_doc_security(v, &vs);
	if (vs.sec && !ps_sec_perms_ok(vs.sec))
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "/Perms does not match /P and /EncryptMetadata");
	memset(&c, 0, sizeof c);
	c.v = v;
	c.vsec = vs.sec;
	c.sums = in->sums;
	c.nsums = in->nsums;
	c.cpu = ps_cpu_bits(ctx);
	if ((rc = ps_seq_open(&r, v, in->pool, NULL, NULL)) < 0) {
		ps_seq_close(&r);
		return rc;
	}
	c.wcap = (size_t)jobs + 1;
	if (!(c.win = calloc(c.wcap, sizeof *c.win))) {
		ps_seq_close(&r);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	ar = ps_arena_new(); /* this thread's (NULL: malloc) */
	pthread_mutex_init(&c.mu, NULL);
	pthread_mutex_init(&c.wmu, NULL);
	pthread_cond_init(&c.cv, NULL);
	c.warn = ctx->warn;
	c.warn_ud = ctx->warn_ud;
	ctx->warn = chk_warn;
	ctx->warn_ud = &c;
	for (i = 0; i + 1 < jobs && pthread_create(&th[i], NULL, chk_worker, &c) == 0; i++)
		nth++;
	rc = 0;
	while (more) {
		int64_t bytes = 0;
		if (c.spare) {
			b = c.spare;
			c.spare = b->next;
		} else if (!(b = calloc(1, sizeof *b)) ||
		           !(b->it = malloc(CHK_ITEMS * sizeof *b->it))) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			break;
		}
		while (b->n < CHK_ITEMS && bytes < CHK_BYTES) {
			struct chk_item *e;
			if ((rc = ps_seq_next(&r, &so)) != 1) {
				more = 0;
				break;
			}
			rc = 0;
			e = &b->it[b->n++];
			memset(e, 0, sizeof *e);
			e->so = so;
			e->gen = ps_doc_gen(v, so.num);
			e->xs = ps_doc_is_xref_stream(v, so.num);
			e->careful = !so.seg;
			bytes += so.end - so.off;
		}
		if (rc < 0 || b->n == 0)
			break;
		while (rc >= 0 && c.wcount == c.wcap)
			rc = chk_take(&c, &plain, ar);
		if (rc < 0)
			break;
		pthread_mutex_lock(&c.mu);
		c.win[(c.whead + c.wcount) % c.wcap] = b;
		c.wcount++;
		pthread_cond_broadcast(&c.cv);
		pthread_mutex_unlock(&c.mu);
		b = NULL;
	}
	chk_free(b);
	while (rc >= 0 && c.wcount > 0)
		rc = chk_take(&c, &plain, ar);
	pthread_mutex_lock(&c.mu);
	c.stop = 1;
	pthread_cond_broadcast(&c.cv);
	pthread_mutex_unlock(&c.mu);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	while (c.wcount > 0) { /* after a fault: what is left, unread */
		chk_free(c.win[c.whead]);
		c.whead = (c.whead + 1) % c.wcap;
		c.wcount--;
	}
	ctx->warn = c.warn;
	ctx->warn_ud = c.warn_ud;
	pthread_mutex_destroy(&c.mu);
	pthread_mutex_destroy(&c.wmu);
	pthread_cond_destroy(&c.cv);
	free(c.win);
	while (c.spare) {
		b = c.spare;
		c.spare = b->next;
		chk_free(b);
	}
	if (rc < 0)
		goto out;
	/* the members of object streams, as pdfstamp_verify loads them */
	for (num = ps_xref_next(vx, 0); num != 0; num = ps_xref_next(vx, num)) {
		if (ps_xref_type(vx, num) != 2)
			continue;
		o = NULL;
		rc = ps_doc_load(v, num, &o);
		ps_obj_free(o);
		if (rc < 0)
			goto out;
	}
	if (in->sums) { /* note 8: every stream the rewrite encrypted, met */
		size_t want = 0, k;
		for (k = 0; k < in->nsums; k++)
			want += in->sums[k].summed;
		if (c.met != want)
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
			            "self-check: %zu of the %zu streams the rewrite encrypted are "
			            "not encrypted in the output", want - c.met, want);
	}
out:
	ps_seq_close(&r);
	/* every plaintext was wiped after its use (chk_run, chk_take): wiping
	 * the whole capacity again would only fault in pages never written */
	plain.secret = 0;
	ps_buf_free(&plain);
	ps_arena_free(ar);
	return rc;
}

int ps_rwcheck_run(ps_doc *doc, const ps_rwcheck *c)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT,
	                              in = PDFSTAMP_VERIFY_REPORT_INIT;
	const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	struct ps_doc_security vs;
	char why[sizeof ctx->errmsg];
	ps_doc *v = NULL;
	int rc;

	if ((rc = ps_doc_open(ctx, &v, c->path, PS_OPEN_NO_RECOVER)) == 0 &&
	    (rc = ps_xref_load_all(v)) == 0 &&
	    (rc = c->seed ? ps_doc_auth_seed(v, c->seed)
	                  : pdfstamp_doc_auth(v, c->owner, c->owner_len, 0)) == 0 &&
	    (rc = check_objects(v, c)) < 0 && rc != PDFSTAMP_E_NOMEM &&
	    rc != PDFSTAMP_E_INTERNAL) { /* INTERNAL: note 8's, reported as it is (note 2) */
		/* note 4: a fault; pdfstamp_verify makes the report note 2 needs */
		snprintf(why, sizeof why, "%s", ctx->errmsg);
		if ((rc = pdfstamp_verify(v, &vo, &rep)) == 0)
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "%s", why);
	}
	if (rc == PDFSTAMP_E_NOMEM)
		goto out; /* no fault of the output's: not blamed on it (note 2) */
	if (rc < 0) {
		/* note 2 */
		snprintf(why, sizeof why, "%s", ctx->errmsg);
		if (rc == PDFSTAMP_E_FORMAT && rep.faults > 0 &&
		    pdfstamp_verify(doc, &vo, &in) == PDFSTAMP_E_FORMAT && in.faults >= rep.faults)
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the input is damaged: %" PRId64
			            " object(s) cannot be read; first: %s", in.faults,
			            in.first_fault);
		else
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
			            "self-check of the rewritten file failed: %s", why);
		goto out;
	}
	ps_doc_security(v, &vs);
	if (vs.authenticated != 2) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
		            "self-check: the new owner password (or seed) does not open the "
		            "output");
		goto out;
	}
	if ((rc = check_live_objects(doc, v, c->dropped, c->ndropped, c->enc_num)) < 0)
		goto out;
	rc = check_page_trees(doc, v);
out:
	pdfstamp_doc_close(v);
	return rc;
}
