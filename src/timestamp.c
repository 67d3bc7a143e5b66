/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timestamp.c - pdfstamp_timestamp: a document timestamp (ISO 32000-2
 * 12.8.5, PAdES B-LTA) appended as one incremental update.
 *
 * DESIGN NOTES
 *
 * Place: a writer of the content layer, beside dss.c: it reads the
 * document through doc.h, writes through incr.c, asks the TSA through
 * http.c and judges the reply through tsp.c.
 *
 * States: BUILT (the update's objects, with placeholders) --seal-->
 * SEALED (section bytes final: /ByteRange, token in /Contents) --commit-->
 * written.  Nothing reaches the file before SEALED: the seal runs inside
 * ps_update_commit after the section is built and before any journal or
 * byte is written (incr.h, seal), so every failure of the network, of the
 * TSA or of the checks leaves the file byte-identical, and the update is
 * then written by the one path every update takes (incr.c note 4: in
 * place under its journal, durable before the call returns).
 *
 * Invariants:
 *  1. The objects (12.7.5.5, 12.8.1, 12.8.5): a signature dictionary
 *     << /Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161
 *     /ByteRange [...] /Contents <00...> >> and one field merged with its
 *     widget << /FT /Sig /T (DocTimeStampN) /V sig /Type /Annot /Subtype
 *     /Widget /Rect [0 0 0 0] /F 132 /P page >> (invisible: zero
 *     rectangle; Print and Locked), listed in the first page's /Annots and
 *     in /AcroForm /Fields; /SigFlags gets bits 1 and 2 (12.7.5.2, Table
 *     225).  N is the smallest number whose name no field of /Fields has.
 *     Every object the update edits (catalog, /AcroForm, /Fields, the page,
 *     its /Annots) is read before the first number is handed out (incr.c
 *     note 6).
 *  2. Encryption: sec.c leaves the /Contents of a signature dictionary in
 *     clear (ps_sec_is_signature_dict: /Contents a string, /ByteRange an
 *     array, /Type /Sig or /DocTimeStamp); the field name and every other
 *     string are encrypted by the update writer as usual.  The seal finds
 *     the placeholder in the built section and refuses (INTERNAL) unless
 *     it is the 2 * reserve '0' digits it put there: an encrypted
 *     /Contents would be found out here, not by a validator.
 *  3. The byte range: /ByteRange is written with 14-digit placeholders,
 *     wide enough for any offset below 10^14, and the seal writes the real
 *     [0 a b c] into the same bytes, padded with spaces before ']'.  a is
 *     the offset of '<', b the offset after '>', c the rest of the file
 *     (the section's end).  The hash covers the input's first L bytes (read
 *     once, in HASH_CHUNK pieces, through ps_doc_pread) and the section
 *     outside the gap: the bytes the file will hold, since with -o the
 *     output is L bytes copied and the section.
 *  4. The token (tsp.c): requested with a fresh nonce and certReq, checked
 *     before it is used; it must fit the placeholder (its DER, then zeros:
 *     sigcms.c note 2 ignores what follows the ContentInfo).  With reserve
 *     0, a first request over a random imprint sizes the placeholder:
 *     its token's length plus a quarter plus 1024 bytes, for the variable
 *     parts (genTime fractions, serial numbers, a renewed certificate).
 *     With reserve_hint (a batch passes the size an earlier file got) no
 *     first request is made; a token that does not fit that placeholder
 *     (found in the seal, before anything is written) makes the update be
 *     built again, once, sized from that token as from a probe: the same
 *     two requests as the probe, in the rare case only.
 *  5. The new objects in memory are changed to match the sealed bytes
 *     (the integers of /ByteRange, the bytes of /Contents), so that the
 *     commit's check of the written file (incr.c note 5) compares what
 *     was really written.
 *  6. B-LTA (opts->lta; ETSI EN 319 142-1 5.5: the validation data of
 *     the newest document timestamp in /DSS, so that a later timestamp
 *     covers it).  States: SEALED --fetched--> (token's chain data in
 *     memory) --commit--> TIMESTAMPED --refresh--> --dss--> written.  The
 *     data is got in the seal, after the token is checked and before any
 *     byte is written (revoc.c over the token's CMS: its certificates,
 *     missing issuers, OCSP or CRL per certificate, all checked), so the
 *     network's failures leave the file as it was, like the TSA's.  The
 *     timestamp is then committed at once, whatever the write options
 *     defer, since the second update is appended after it and built on
 *     what it wrote; the document is read again (doc.c note 9:
 *     the same descriptor and lock in place, the new file with -o), and
 *     the items go to pdfstamp_dss as inputs, checked there again, so the
 *     second update is exactly a `dss` update.  Only local failures (disk,
 *     a file changed under us) can come between the two, and then the
 *     timestamp stays, complete, and the error says the data is missing.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "cpu.h"
#include "doc.h"
#include "incr.h"
#include "policy.h"
#include "sha2.h"
#include "http.h"
#include "revoc.h"
#include "tsp.h"

#define HASH_CHUNK ((size_t)4 << 20)     /* note 3: bytes hashed per read */
#define BR_DIGITS 14                     /* note 3 */
#define BR_PLACEHOLDER 99999999999999LL  /* BR_DIGITS nines */
#define MAX_RESERVE ((size_t)512 << 10)  /* the largest placeholder (bytes) */
#define DRY_RESERVE 8192                 /* a dry run's placeholder without --reserve */
#define MAX_PAGE_DEPTH 64                /* /Kids levels followed to the first page */
#define MAX_FIELDS 100000                /* fields of /Fields looked at for names */

struct ts {
	ps_doc *doc;
	ps_ctx *ctx;
	ps_update up;
	const struct pdfstamp_timestamp_opts *o;
	struct pdfstamp_timestamp_info *info;
	size_t reserve;
	int hinted;                            /* reserve is opts->reserve_hint (note 4) */
	int grow;                              /* the token did not fit the hint */
	uint32_t sig_num;
	int64_t bytes_hashed;
	int requests;
	long http_status;
	struct ps_tsp_token tok;
	const struct pdfstamp_dss_opts *lta;   /* note 6, or NULL */
	struct ps_revoc_item *items;           /* what note 6 got for the token */
	size_t nitems;
};

static ps_obj *pending(struct ts *t, uint32_t num)
{
	size_t i;

	for (i = 0; i < t->up.nobjs; i++)
		if (t->up.objs[i].num == num)
			return t->up.objs[i].obj;
	return NULL;
}

/* The writable new version of the indirect object REF, of KIND. */
static int edit_ref(struct ts *t, const ps_obj *ref, ps_kind kind, const char *what, ps_obj **out)
{
	ps_obj *o = pending(t, ref->u.ref.num), *copy;
	int rc;

	if (!o) {
		if ((rc = ps_doc_lookup(t->doc, ref->u.ref.num, &o)) < 0)
			return rc;
		if (o && o->kind == kind) {
			if (!(copy = ps_obj_copy(o)))
				return ps_err(t->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			if ((rc = ps_update_put(&t->up, ref->u.ref.num, ref->u.ref.gen, copy)) < 0)
				return rc;
			o = copy;
		}
	}
	if (!o || o->kind != kind)
		return ps_err(t->ctx, PDFSTAMP_E_FORMAT, "%s (object %u) is not %s", what,
		              ref->u.ref.num, kind == PS_DICT ? "a dictionary" : "an array");
	*out = o;
	return 0;
}

/* The writable value of KEY in the writable dictionary PARENT, of KIND:
 * the new version of an indirect one, the direct one, or a new one. */
static int edit_member(struct ts *t, ps_obj *parent, const char *key, ps_kind kind,
                       const char *what, ps_obj **out)
{
	ps_obj *v = ps_dict_get(parent, key);

	if (v && v->kind == PS_REF)
		return edit_ref(t, v, kind, what, out);
	if (v && v->kind != kind)
		return ps_err(t->ctx, PDFSTAMP_E_FORMAT, "%s is not %s", what,
		              kind == PS_DICT ? "a dictionary" : "an array");
	if (!v) {
		if (ps_dict_put(parent, key, kind == PS_DICT ? ps_new_dict() : ps_new_array()) < 0)
			return ps_err(t->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		v = ps_dict_get(parent, key);
	}
	*out = v;
	return 0;
}

/* Resolves O (borrowed), NULL unless of KIND. */
static int get(struct ts *t, ps_obj *o, ps_kind kind, ps_obj **out)
{
	ps_obj *r = NULL;
	int rc = ps_doc_resolve(t->doc, o, &r);

	*out = rc == 0 && r && r->kind == kind ? r : NULL;
	return rc;
}

/* Note 1: the first page (its reference), the tree walked down /Kids[0]. */
static int first_page(struct ts *t, ps_obj **ref)
{
	ps_obj *node = NULL, *kids, *kid, *o;
	int depth, rc;

	*ref = NULL;
	if ((rc = ps_doc_pages(t->doc, &node, NULL, NULL)) < 0)
		return rc;
	for (depth = 0; node && depth < MAX_PAGE_DEPTH; depth++) {
		if ((rc = get(t, ps_dict_get(node, "Kids"), PS_ARRAY, &kids)) < 0)
			return rc;
		kid = ps_array_get(kids, 0);
		if (!kid || kid->kind != PS_REF)
			break;
		if ((rc = get(t, kid, PS_DICT, &o)) < 0)
			return rc;
		if (o && (ps_obj_is_name(ps_dict_get(o, "Type"), "Page") ||
		          !ps_dict_get(o, "Kids"))) {
			*ref = kid;
			/* read what the update edits: the page and its /Annots */
			return get(t, ps_dict_get(o, "Annots"), PS_ARRAY, &kids);
		}
		node = o;
	}
	return ps_err(t->ctx, PDFSTAMP_E_FORMAT, "the document has no first page to hold the "
	              "timestamp's widget");
}

/* Note 1: the smallest N such that no field of FIELDS is named
 * DocTimeStampN (its fields read, before any number is handed out): one
 * pass marks the N in use up to the number of fields. */
static int field_name(struct ts *t, ps_obj *fields, char name[32])
{
	static const char stem[] = "DocTimeStamp";
	size_t i, k, len = ps_array_len(fields), sl = sizeof stem - 1;
	uint8_t *used;
	int rc = 0;

	if (len > MAX_FIELDS)
		return ps_err(t->ctx, PDFSTAMP_E_UNSUPPORTED, "/AcroForm /Fields has more than "
		              "%d entries", MAX_FIELDS);
	if (!(used = calloc(len + 2, 1)))
		return ps_err(t->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < len; i++) {
		ps_obj *f, *tt;
		uint64_t n = 0;
		if ((rc = get(t, ps_array_get(fields, i), PS_DICT, &f)) < 0)
			goto out;
		tt = ps_dict_get(f, "T");
		if (tt && tt->kind == PS_REF && (rc = get(t, tt, PS_STR, &tt)) < 0)
			goto out;
		if (!tt || tt->kind != PS_STR || tt->u.str.len <= sl || tt->u.str.len > sl + 9 ||
		    memcmp(tt->u.str.p, stem, sl) != 0 || tt->u.str.p[sl] == '0')
			continue;
		for (k = sl; k < tt->u.str.len && tt->u.str.p[k] >= '0' && tt->u.str.p[k] <= '9';
		     k++)
			n = n * 10 + (uint64_t)(tt->u.str.p[k] - '0');   /* at most 9 digits */
		if (k == tt->u.str.len && n <= len + 1)
			used[n] = 1;
	}
	for (k = 1; k <= len + 1 && used[k]; k++)
		;
	snprintf(name, 32, "%s%zu", stem, k);
out:
	free(used);
	return rc;
}

static int find(const ps_buf *b, size_t from, size_t to, const char *s, size_t *at)
{
	size_t n = strlen(s), i;

	for (i = from; i + n <= to; i++)
		if (memcmp(b->data + i, s, n) == 0) {
			*at = i;
			return 0;
		}
	return -1;
}

/* Sends REQ to the TSA and checks its reply into t->tok (note 4). */
static int ask(struct ts *t, struct ps_tsp_req *req)
{
	struct ps_http_req hr;
	struct ps_http_resp resp;
	ps_buf body = PS_BUF_INIT;
	int rc;

	memset(&hr, 0, sizeof hr);
	memset(&resp, 0, sizeof resp);
	ps_tsp_token_free(&t->tok);
	if ((rc = ps_tsp_request(t->ctx, req, &body)) < 0)
		goto out;
	hr.url = t->o->tsa_url;
	hr.content_type = "application/timestamp-query";
	hr.body = body.data;
	hr.body_len = body.len;
	hr.timeout_ms = t->o->timeout_ms > 0 ? t->o->timeout_ms : 10000;
	hr.max_bytes = PS_TSP_MAX_REPLY;
	hr.user = t->o->tsa_user;
	hr.password = t->o->tsa_password;
	hr.password_len = t->o->tsa_password_len;
	t->requests++;
	if ((rc = ps_http_fetch(t->ctx, &hr, &resp)) < 0)
		goto out;
	t->http_status = resp.status;
	if (resp.status != 200) {
		rc = ps_err(t->ctx, PDFSTAMP_E_IO, "the TSA %s answered HTTP %ld", t->o->tsa_url,
		            resp.status);
		goto out;
	}
	rc = ps_tsp_check(t->ctx, req, resp.body.data, resp.body.len, t->o->tsa_ca, &t->tok);
out:
	ps_http_resp_free(&resp);
	ps_buf_free(&body);
	return rc;
}

/* Note 3: the hash of the input's first L bytes, then of SEC but [lt, gt];
 * with the CPU's kernels where it has them (sha2.c note 6). */
struct hasher {
	int bits;
	ps_sha256_stream s256;
	ps_sha512_stream s512;
};

static void h_update(struct hasher *h, const uint8_t *p, size_t n)
{
	if (h->bits == 256)
		ps_sha256_stream_update(&h->s256, p, n);
	else
		ps_sha512_stream_update(&h->s512, p, n);
}

static int hash_range(struct ts *t, const ps_buf *sec, size_t lt, size_t gt, uint8_t *out)
{
	struct hasher h;
	ps_buf b = PS_BUF_INIT;
	int64_t off = 0, left = t->up.base_len;
	int rc = 0;

	memset(&h, 0, sizeof h);
	h.bits = t->o->hash_bits ? t->o->hash_bits : 256;
	if (h.bits == 256)
		ps_sha256_stream_start(&h.s256, (ps_cpu_bits(t->ctx) & PS_CPU_SHA) != 0);
	else
		ps_sha512_stream_start(&h.s512, ps_cpu_bits(t->ctx), h.bits == 384);
	while (left > 0) {
		size_t want = left > (int64_t)HASH_CHUNK ? HASH_CHUNK : (size_t)left;
		if ((rc = ps_doc_pread(t->doc, off, want, &b)) < 0)
			break;
		if (b.len != want) {
			rc = ps_err(t->ctx, PDFSTAMP_E_IO,
			            "the file shrank while being time-stamped");
			break;
		}
		h_update(&h, b.data, b.len);
		off += (int64_t)want;
		left -= (int64_t)want;
	}
	if (rc == 0) {
		h_update(&h, sec->data, lt);
		h_update(&h, sec->data + gt + 1, sec->len - gt - 1);
	}
	if (h.bits == 256) {
		uint8_t d[32];
		ps_sha256_stream_finish(&h.s256, d);
		memcpy(out, d, sizeof d);
	} else {
		ps_sha512_stream_finish(&h.s512, out);
	}
	ps_buf_free(&b);
	return rc;
}

/* Note 6: the validation data of the token's chain, before anything is
 * written. */
static int lta_fetch(struct ts *t)
{
	ps_revoc *r = NULL;
	int rc;

	if ((rc = ps_revoc_new(t->ctx, t->lta, &r)) == 0 &&
	    (rc = ps_revoc_collect(r, t->tok.der, t->tok.len, &t->items, &t->nitems)) < 0)
		rc = ps_err_wrap(t->ctx, rc, "the validation data of the timestamp's chain");
	ps_revoc_free(r);
	return rc;
}

static void items_free(struct ts *t)
{
	size_t i;

	for (i = 0; i < t->nitems; i++)
		free(t->items[i].der);
	free(t->items);
	t->items = NULL;
	t->nitems = 0;
}

/* *DST: the write options W of the caller's version (its struct may be
 * smaller than ours: version 1 has no output_fd, 2 no durable), the rest
 * as PDFSTAMP_WRITE_OPTS_INIT has it.  Never *DST = *W. */
static void wopts_copy(struct pdfstamp_write_opts *dst, const struct pdfstamp_write_opts *w)
{
	struct pdfstamp_write_opts d = PDFSTAMP_WRITE_OPTS_INIT;

	d.version = w->version;
	d.output = w->output;
	d.flags = w->flags;
	if (w->version >= 2)
		d.output_fd = w->output_fd;
	if (w->version >= 3) {
		d.durable = w->durable;
		d.durable_ud = w->durable_ud;
	}
	*dst = d;
}

/* Note 6: the second update, on the file the first one just made: DOC
 * itself (in place) or the new file -o wrote. */
static int lta_add(struct ts *t, const struct pdfstamp_write_opts *w,
                   const struct pdfstamp_result *first)
{
	struct pdfstamp_dss_opts d = PDFSTAMP_DSS_OPTS_INIT;
	struct pdfstamp_write_opts w2;
	struct pdfstamp_dss_input *in = NULL;
	struct pdfstamp_result *res = NULL;
	int64_t size = first->base_length + first->bytes_appended;
	ps_doc *target = t->doc, *out = NULL;
	size_t i;
	int rc;

	wopts_copy(&w2, w);
	if (!(in = calloc(t->nitems ? t->nitems : 1, sizeof *in)))
		return ps_err(t->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < t->nitems; i++) {
		in[i].kind = (enum pdfstamp_dss_kind)t->items[i].kind;
		in[i].name = "the timestamp's validation data";
		in[i].data = t->items[i].der;
		in[i].len = t->items[i].len;
		if (t->info && t->info->version >= 2) {
			t->info->lta_certs += in[i].kind == PDFSTAMP_DSS_CERT;
			t->info->lta_ocsps += in[i].kind == PDFSTAMP_DSS_OCSP;
			t->info->lta_crls += in[i].kind == PDFSTAMP_DSS_CRL;
		}
	}
	d.inputs = in;
	d.ninputs = t->nitems;
	d.vri = t->lta->vri;
	if (t->info && t->info->version >= 2)
		res = t->info->lta_result;
	if (t->nitems == 0) {
		ps_warn(t->ctx, "the timestamp's token names no certificate: no validation data "
		        "to add");
		rc = 0;
		goto out;
	}
	if (w->flags & PDFSTAMP_WRITE_IN_PLACE) {
		rc = ps_doc_refresh(t->doc, size, first->xref_offset);
	} else {
		rc = ps_doc_open_written(t->doc, w->output, size, first->xref_offset, &out);
		target = out;
		w2.output = NULL;
		w2.flags = (w->flags & ~(unsigned)PDFSTAMP_WRITE_DEFER) | PDFSTAMP_WRITE_IN_PLACE;
		w2.durable = NULL;
	}
	if (rc == 0)
		rc = pdfstamp_dss(target, &d, &w2, res);
out:
	if (rc < 0) {
		rc = ps_err_wrap(t->ctx, rc, "the document timestamp was appended and is "
		                 "complete, but its validation data was not added");
		t->ctx->errhint = PDFSTAMP_HINT_DSS_LATER;
	}
	pdfstamp_doc_close(out);
	free(in);
	return rc;
}

/* incr.h's seal: notes 2 to 5. */
static int seal(void *ud, ps_update *up, ps_buf *sec)
{
	struct ts *t = ud;
	struct ps_tsp_req req;
	char head[32], br[64];
	size_t start, end, bro, brc, lt, gt, i, n;
	int64_t a, b, c, base = up->base_len;
	ps_obj *sig = pending(t, t->sig_num), *arr, *str;
	uint8_t *tokpad;
	int rc;

	/* the signature dictionary's bytes: "N 0 obj" ... "endobj" */
	n = (size_t)snprintf(head, sizeof head, "\n%u 0 obj\n", t->sig_num);
	if (sec->len >= n - 1 && memcmp(sec->data, head + 1, n - 1) == 0)
		start = 0;       /* the first object, no EOL before it */
	else if (find(sec, 0, sec->len, head, &start) != 0)
		return ps_err(t->ctx, PDFSTAMP_E_INTERNAL, "the timestamp's object is not in the "
		              "update");
	if (find(sec, start + 1, sec->len, "endobj", &end) != 0 ||
	    find(sec, start, end, "/ByteRange", &bro) != 0 ||
	    find(sec, bro, end, "[", &bro) != 0 || find(sec, bro, end, "]", &brc) != 0 ||
	    find(sec, start, end, "/Contents", &lt) != 0 || find(sec, lt, end, "<", &lt) != 0 ||
	    find(sec, lt, end, ">", &gt) != 0 || gt - lt - 1 != 2 * t->reserve)
		return ps_err(t->ctx, PDFSTAMP_E_INTERNAL, "the timestamp's placeholders are not "
		              "in the update as written");
	for (i = lt + 1; i < gt; i++)
		if (sec->data[i] != '0')
			return ps_err(t->ctx, PDFSTAMP_E_INTERNAL, "the timestamp's /Contents was "
			              "changed (encrypted?) on its way into the update");
	a = base + (int64_t)lt;
	b = base + (int64_t)gt + 1;
	c = base + (int64_t)sec->len - b;
	n = (size_t)snprintf(br, sizeof br, "[0 %lld %lld %lld", (long long)a, (long long)b,
	                     (long long)c);
	if (n > brc - bro)
		return ps_err(t->ctx, PDFSTAMP_E_UNSUPPORTED, "the file is too large for a "
		              "/ByteRange of %d digits", BR_DIGITS);
	memcpy(sec->data + bro, br, n);
	memset(sec->data + bro + n, ' ', brc - bro - n);
	t->bytes_hashed = a + c;
	/* note 4: the token for these bytes */
	memset(&req, 0, sizeof req);
	req.bits = t->o->hash_bits ? t->o->hash_bits : 256;
	if ((rc = hash_range(t, sec, lt, gt, req.hash)) < 0 || (rc = ask(t, &req)) < 0)
		return rc;
	if (t->tok.len > t->reserve && t->hinted)
		t->grow = 1;
	if (t->tok.len > t->reserve)
		return ps_err(t->ctx, PDFSTAMP_E_FORMAT, "the time-stamp token (%zu bytes) does "
		              "not fit the /Contents placeholder (%zu bytes; --reserve)",
		              t->tok.len, t->reserve);
	for (i = 0; i < t->tok.len; i++) {
		static const char hx[] = "0123456789abcdef";
		sec->data[lt + 1 + 2 * i] = (uint8_t)hx[t->tok.der[i] >> 4];
		sec->data[lt + 2 + 2 * i] = (uint8_t)hx[t->tok.der[i] & 15];
	}
	/* note 5 */
	arr = ps_dict_get(sig, "ByteRange");
	str = ps_dict_get(sig, "Contents");
	if (!arr || ps_array_len(arr) != 4 || !str || str->kind != PS_STR)
		return ps_err(t->ctx, PDFSTAMP_E_INTERNAL, "the timestamp's dictionary changed");
	ps_array_get(arr, 1)->u.i = a;
	ps_array_get(arr, 2)->u.i = b;
	ps_array_get(arr, 3)->u.i = c;
	if (!(tokpad = calloc(1, t->reserve)))
		return ps_err(t->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	memcpy(tokpad, t->tok.der, t->tok.len);
	rc = ps_str_set(str, tokpad, t->reserve);
	free(tokpad);
	if (rc < 0)
		return ps_err(t->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return t->lta ? lta_fetch(t) : 0;
}

/* Note 1: the objects, with placeholders. */
static int build(struct ts *t, ps_obj *root_ref, ps_obj *page_ref, const char *name)
{
	ps_obj *sig = ps_new_dict(), *fld = ps_new_dict(), *br = ps_new_array(), *rect;
	ps_obj *cat, *form, *fields, *page, *annots, *flags;
	uint8_t *zeros = calloc(1, t->reserve + 1);   /* ps_new_str_take: a NUL after */
	uint32_t fnum;
	int64_t f = 0;
	int rc = 0, k;

	if (!sig || !fld || !br || !zeros)
		goto oom;
	if (ps_dict_put_name(sig, "Type", "DocTimeStamp") < 0 ||
	    ps_dict_put_name(sig, "Filter", "Adobe.PPKLite") < 0 ||
	    ps_dict_put_name(sig, "SubFilter", "ETSI.RFC3161") < 0)
		goto oom;
	for (k = 0; k < 4; k++)
		if (ps_array_push(br, ps_new_int(k ? BR_PLACEHOLDER : 0)) < 0)
			goto oom;
	if (ps_dict_put(sig, "ByteRange", br) < 0) {
		br = NULL;
		goto oom;
	}
	br = NULL;
	if (ps_dict_put(sig, "Contents", ps_new_str_take(zeros, t->reserve, 1)) < 0) {
		zeros = NULL;
		goto oom;
	}
	zeros = NULL;
	if (!(t->sig_num = ps_update_alloc(&t->up)) || !(fnum = ps_update_alloc(&t->up))) {
		rc = t->ctx->errcode;
		goto out;
	}
	rc = ps_update_put(&t->up, t->sig_num, 0, sig);
	sig = NULL;
	if (rc < 0)
		goto out;
	if (!(rect = ps_new_array()))
		goto oom;
	for (k = 0; k < 4; k++)
		if (ps_array_push(rect, ps_new_int(0)) < 0) {
			ps_obj_free(rect);
			goto oom;
		}
	if (ps_dict_put(fld, "Rect", rect) < 0 || ps_dict_put_name(fld, "FT", "Sig") < 0 ||
	    ps_dict_put_str(fld, "T", name, strlen(name)) < 0 ||
	    ps_dict_put_ref(fld, "V", t->sig_num, 0) < 0 ||
	    ps_dict_put_name(fld, "Type", "Annot") < 0 ||
	    ps_dict_put_name(fld, "Subtype", "Widget") < 0 ||
	    ps_dict_put_int(fld, "F", 132) < 0 ||
	    ps_dict_put_ref(fld, "P", page_ref->u.ref.num, page_ref->u.ref.gen) < 0)
		goto oom;
	rc = ps_update_put(&t->up, fnum, 0, fld);
	fld = NULL;
	if (rc < 0)
		goto out;
	/* the catalog's /AcroForm /Fields, /SigFlags; the page's /Annots */
	if ((rc = edit_ref(t, root_ref, PS_DICT, "the catalog", &cat)) < 0 ||
	    (rc = edit_member(t, cat, "AcroForm", PS_DICT, "the catalog's /AcroForm", &form)) < 0)
		goto out;
	flags = ps_dict_get(form, "SigFlags");
	if (flags && ps_obj_int(flags, &f) != 0)
		f = 0;
	if (ps_dict_put_int(form, "SigFlags", (f & 0xFFFF) | 3) < 0)
		goto oom;
	if ((rc = edit_member(t, form, "Fields", PS_ARRAY, "/AcroForm /Fields", &fields)) < 0 ||
	    (rc = ps_array_push(fields, ps_new_ref(fnum, 0))) < 0 ||
	    (rc = edit_ref(t, page_ref, PS_DICT, "the first page", &page)) < 0 ||
	    (rc = edit_member(t, page, "Annots", PS_ARRAY, "the first page's /Annots",
	                      &annots)) < 0 ||
	    (rc = ps_array_push(annots, ps_new_ref(fnum, 0))) < 0)
		goto out;
	return 0;
oom:
	rc = ps_err(t->ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(sig);
	ps_obj_free(fld);
	ps_obj_free(br);
	free(zeros);
	return rc;
}

/* Note 4: the placeholder for a token of N bytes. */
static size_t sized(size_t n)
{
	size_t r = n + n / 4 + 1024;

	return r > MAX_RESERVE ? MAX_RESERVE : r;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int check_opts(ps_ctx *ctx, const struct pdfstamp_timestamp_opts *o)
{
	if (!o || o->version < 1 || o->version > PDFSTAMP_TIMESTAMP_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "timestamp options of an unknown version");
	if (!o->tsa_url || (strncmp(o->tsa_url, "http://", 7) != 0 &&
	                    strncmp(o->tsa_url, "https://", 8) != 0))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the TSA URL must be http:// or https://");
	if (o->hash_bits != 0 && o->hash_bits != 256 && o->hash_bits != 384 &&
	    o->hash_bits != 512)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the timestamp hash must be sha256, sha384 "
		              "or sha512");
	if (o->reserve > MAX_RESERVE)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "a /Contents reserve of more than %zu bytes",
		              MAX_RESERVE);
	if (o->reserve != 0 && o->reserve < 64)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "a /Contents reserve of less than 64 bytes");
	if (o->version >= 2 && o->reserve_hint != 0 &&
	    (o->reserve_hint < 64 || o->reserve_hint > MAX_RESERVE))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "a /Contents reserve hint out of 64 to %zu "
		              "bytes", MAX_RESERVE);
	if (!o->tsa_user != !o->tsa_password || o->timeout_ms < 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "a TSA user needs a password (and only then)");
	return 0;
}

int pdfstamp_timestamp(pdfstamp_doc *doc, const struct pdfstamp_timestamp_opts *o,
                       const struct pdfstamp_write_opts *wopts, struct pdfstamp_result *res,
                       struct pdfstamp_timestamp_info *info)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	const struct pdfstamp_write_opts *w = wopts;
	struct pdfstamp_write_opts w1;
	struct pdfstamp_result own = PDFSTAMP_RESULT_INIT;
	struct ts t;
	ps_obj *root = NULL, *root_ref = NULL, *form = NULL, *fields = NULL, *page_ref = NULL;
	char name[32];
	size_t i;
	int rc, attempt, dry = w && (w->flags & PDFSTAMP_WRITE_DRY_RUN);

	memset(&t, 0, sizeof t);
	if ((rc = check_opts(ctx, o)) < 0)
		return rc;
	if (info && (info->version < 1 || info->version > PDFSTAMP_TIMESTAMP_INFO_VERSION))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "timestamp info of an unknown version");
	if ((rc = ps_result_begin(ctx, res)) < 0)
		return rc;
	t.doc = doc;
	t.ctx = ctx;
	t.o = o;
	t.info = info;
	if ((rc = ps_update_begin(doc, w, &t.up)) < 0 ||
	    (rc = ps_preflight_update(doc, PS_UPDATE_TIMESTAMP)) < 0 ||
	    (rc = ps_doc_catalog(doc, PS_CATALOG_INDIRECT, &root, &root_ref)) < 0)
		goto out;
	/* note 1: everything edited is read before the first number */
	if ((rc = get(&t, ps_dict_get(root, "AcroForm"), PS_DICT, &form)) < 0 ||
	    (rc = get(&t, ps_dict_get(form, "Fields"), PS_ARRAY, &fields)) < 0 ||
	    (rc = field_name(&t, fields, name)) < 0 || (rc = first_page(&t, &page_ref)) < 0)
		goto out;
	t.reserve = o->reserve;
	if (o->version >= 2 && o->lta) {
		if (w && (w->flags & PDFSTAMP_WRITE_TO_FD)) {
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the timestamp's validation data (lta) "
			            "is a second update, which a descriptor cannot take: write to "
			            "a file or in place");
			goto out;
		}
		if (o->lta->version < 2) {
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the lta options must be DSS options of "
			            "version 2 or later");
			goto out;
		}
		t.lta = dry ? NULL : o->lta;   /* a dry run shows the timestamp's update */
	}
	if (!t.reserve && o->version >= 2 && o->reserve_hint) {
		t.reserve = o->reserve_hint;
		t.hinted = 1;
	} else if (!t.reserve && dry) {
		t.reserve = DRY_RESERVE;
	} else if (!t.reserve) {
		/* note 4: one token over a random imprint sizes the placeholder */
		struct ps_tsp_req req;
		memset(&req, 0, sizeof req);
		req.bits = o->hash_bits ? o->hash_bits : 256;
		if ((rc = ps_random(ctx, req.hash, sizeof req.hash)) < 0 ||
		    (rc = ask(&t, &req)) < 0)
			goto out;
		t.reserve = sized(t.tok.len);
	}
	if (t.lta) {
		/* note 6: committed now, its result kept for the second update */
		wopts_copy(&w1, w);
		w1.flags &= ~(unsigned)PDFSTAMP_WRITE_DEFER;
		if (!res)
			res = &own;
		w = &w1;
	}
	for (attempt = 0;; attempt++) {
		if ((rc = build(&t, root_ref, page_ref, name)) < 0)
			goto out;
		t.up.seal = seal;
		t.up.seal_ud = &t;
		if (res) {
			for (i = 0; i < t.up.nobjs; i++)
				if ((rc = ps_result_add_object(ctx, res, t.up.objs[i].num)) < 0)
					goto out;
			qsort(res->objects, (size_t)res->nobjects, sizeof *res->objects, cmp_u32);
		}
		if (info) {
			/* before the commit: its durable hook may read them */
			info->sig_obj = t.sig_num;
			info->reserve = t.reserve;
		}
		rc = ps_update_commit(&t.up, w, res);
		if (rc == 0 || !t.grow || attempt > 0)
			break;
		/* note 4: the hint was too small; nothing was written */
		t.reserve = sized(t.tok.len);
		t.grow = t.hinted = 0;
		ps_update_free(&t.up);
		if ((rc = ps_result_begin(ctx, res)) < 0 ||
		    (rc = ps_update_begin(doc, wopts, &t.up)) < 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	if (info) {
		snprintf(info->gen_time, sizeof info->gen_time, "%s", t.tok.gen_time);
		snprintf(info->tsa, sizeof info->tsa, "%s", t.tok.tsa);
		snprintf(info->serial, sizeof info->serial, "%s", t.tok.serial);
		info->token_len = t.tok.len;
		info->requests = t.requests;
		info->http_status = t.http_status;
		info->bytes_hashed = t.bytes_hashed;
	}
	if (t.lta) {
		ps_update_free(&t.up);  /* the update is the file's now: reads may resume */
		rc = lta_add(&t, wopts, res);
	}
out:
	ps_update_free(&t.up);
	ps_tsp_token_free(&t.tok);
	items_free(&t);
	if (res == &own)
		pdfstamp_result_clear(&own);
	return rc;
}
