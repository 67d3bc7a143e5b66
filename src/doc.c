/*
 * doc.c - an open document: file access, security handler set-up, lazy
 * object lookup, stream data, and the facts `pdfstamp info` reports.
 *
 * DESIGN NOTES
 *
 * States:  OPENED (xref read, /Encrypt parsed, no key) --auth--> KEYED.
 * A plaintext document is usable as soon as it is OPENED.  Objects of an
 * encrypted document can be looked up only when KEYED (before that only the
 * /Encrypt dictionary itself is read, and it is never encrypted).
 *
 * Invariants:
 *  1. The file is read with pread() only, through ps_doc_pread(), which
 *     counts the distinct bytes read: bytes_read is what `info --json`
 *     reports, so a test can prove that the payload was never touched.  A
 *     byte read twice (the tail window, then the xref table in it) counts
 *     once, so bytes_read never exceeds the file's size.  The ranges read
 *     are kept sorted and merged; past READ_RANGES_MAX separate ranges (a
 *     full rewrite or verify, never a report) further reads are counted
 *     whole, still capped at the size, so the bookkeeping stays O(1).
 *  2. Objects are parsed when first looked up and then cached for the
 *     document's lifetime; lookups hand out borrowed pointers.
 *  3. Strings of objects read from the file body are decrypted on load,
 *     except where ISO 32000-2 7.6.2 exempts them: the /Encrypt dictionary,
 *     xref streams, and the /Contents of signature dictionaries (spec-facts
 *     2.1, 2.2).  Objects inside an object stream are not decrypted again:
 *     the object stream was decrypted as a whole.
 *  4. The file key exists only inside doc->cipher (AES schedules, wiped by
 *     ps_cipher_free); the raw key is wiped right after the schedules are
 *     built.  The writer's self-check gives the re-opened output the same
 *     key by borrowing those schedules (ps_doc_auth_cipher).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"

#define OBJ_WINDOW_FIRST 1024
#define OBJ_WINDOW_MAX ((size_t)64 << 20)
#define OBJSTM_MAX_DECODED ((size_t)256 << 20)
#define MAX_LOOKUP_DEPTH 32
#define READ_RANGES_MAX 256 /* separate ranges of the file tracked for bytes_read */

const struct pdfstamp_perm_name pdfstamp_perm_names[] = {
	{3, "print"},
	{4, "modify"},
	{5, "copy"},
	{6, "annotate"},
	{9, "fill-forms"},
	{10, "extract"},
	{11, "assemble"},
	{12, "print-high"},
	{0, NULL}
};

const char *pdfstamp_aes_engine(void)
{
	return ps_aes_engine_name(ps_aes_engine_best());
}

/* Adds [A, B) to the ranges read (pairs start, end: sorted, disjoint, not
 * touching); bytes_read grows by the bytes of it not read before.  0 or
 * PDFSTAMP_E_NOMEM. */
static int note_read(ps_doc *doc, int64_t a, int64_t b)
{
	int64_t *r = doc->read_ranges, added = b - a, na = a, nb = b;
	size_t n = doc->nread_ranges, lo = 0, hi = n, i, j;

	if (a >= b)
		return 0;
	if (doc->read_ranges_full)
		goto whole;
	while (lo < hi) { /* the first range that ends at or after A */
		size_t mid = lo + (hi - lo) / 2;
		if (r[2 * mid + 1] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	for (j = i; j < n && r[2 * j] <= b; j++) { /* ranges that overlap or touch [A, B) */
		int64_t s = r[2 * j] > a ? r[2 * j] : a, e = r[2 * j + 1] < b ? r[2 * j + 1] : b;
		if (e > s)
			added -= e - s;
		if (r[2 * j] < na)
			na = r[2 * j];
		if (r[2 * j + 1] > nb)
			nb = r[2 * j + 1];
	}
	if (j > i) {
		r[2 * i] = na;
		r[2 * i + 1] = nb;
		memmove(&r[2 * (i + 1)], &r[2 * j], (n - j) * 2 * sizeof *r);
		doc->nread_ranges = n - (j - i - 1);
	} else {
		if (n == doc->capread_ranges) {
			size_t ncap = n ? n * 2 : 16;
			int64_t *nr;
			if (ncap > READ_RANGES_MAX) {
				doc->read_ranges_full = 1;
				goto whole;
			}
			if (!(nr = realloc(r, ncap * 2 * sizeof *r)))
				return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
			doc->read_ranges = r = nr;
			doc->capread_ranges = ncap;
		}
		memmove(&r[2 * (i + 1)], &r[2 * i], (n - i) * 2 * sizeof *r);
		r[2 * i] = a;
		r[2 * i + 1] = b;
		doc->nread_ranges = n + 1;
	}
	doc->bytes_read += added;
	return 0;
whole:
	doc->bytes_read += b - a;
	if (doc->bytes_read > doc->size)
		doc->bytes_read = doc->size;
	return 0;
}

int ps_doc_pread(ps_doc *doc, int64_t off, size_t len, ps_buf *out)
{
	size_t got = 0;

	out->len = 0;
	if (off < 0 || off > doc->size)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "offset %lld is outside the file", (long long)off);
	if ((int64_t)len > doc->size - off)
		len = (size_t)(doc->size - off);
	if (ps_buf_reserve(out, len + 1) < 0)
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory reading %zu bytes", len);
	while (got < len) {
		ssize_t n = pread(doc->fd, out->data + got, len - got, (off_t)(off + (int64_t)got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ps_err(doc->ctx, PDFSTAMP_E_IO, "read error: %s", strerror(errno));
		}
		if (n == 0)
			break; /* the file shrank under us */
		got += (size_t)n;
	}
	out->len = got;
	out->data[got] = 0; /* a terminator for the parser's convenience */
	return note_read(doc, off, off + (int64_t)got);
}

/* ---- object cache (open addressing on the object number) ---------------- */

static ps_obj **cache_slot(ps_doc *doc, uint32_t num, int insert)
{
	size_t i, mask;

	if (insert && (doc->ncache + 1) * 2 > doc->capcache) {
		size_t ncap = doc->capcache ? doc->capcache * 2 : 64, j;
		ps_cache_ent *n = calloc(ncap, sizeof *n);
		if (!n)
			return NULL;
		for (j = 0; j < doc->capcache; j++) {
			ps_cache_ent *e = &doc->cache[j];
			size_t k;
			if (!e->num)
				continue;
			for (k = (e->num * 2654435761u) & (ncap - 1); n[k].num; k = (k + 1) & (ncap - 1))
				;
			n[k] = *e;
		}
		free(doc->cache);
		doc->cache = n;
		doc->capcache = ncap;
	}
	if (!doc->capcache)
		return NULL;
	mask = doc->capcache - 1;
	for (i = (num * 2654435761u) & mask; doc->cache[i].num; i = (i + 1) & mask)
		if (doc->cache[i].num == num)
			return &doc->cache[i].obj;
	if (!insert)
		return NULL;
	doc->cache[i].num = num;
	doc->ncache++;
	return &doc->cache[i].obj;
}

static void cache_clear(ps_doc *doc)
{
	size_t i;

	for (i = 0; i < doc->capcache; i++)
		ps_obj_free(doc->cache[i].obj);
	free(doc->cache);
	doc->cache = NULL;
	doc->ncache = doc->capcache = 0;
}

/* ---- parsing objects from the file ---------------------------------------- */

int ps_doc_parse_at(ps_doc *doc, int64_t off, uint32_t expect_num, ps_obj **out, uint32_t *num_out)
{
	ps_buf w = PS_BUF_INIT;
	size_t want = OBJ_WINDOW_FIRST;
	uint32_t num = 0;
	uint16_t gen = 0;
	int rc;

	*out = NULL;
	for (;;) {
		if ((rc = ps_doc_pread(doc, off, want, &w)) < 0)
			goto out;
		rc = ps_parse_indirect(doc->ctx, w.data, w.len, 0, off, &num, &gen, out);
		if (rc == PS_E_NEEDMORE && w.len == want && want < OBJ_WINDOW_MAX) {
			want *= 4;
			continue;
		}
		if (rc == PS_E_NEEDMORE)
			rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "object at offset %lld is truncated or too large",
			            (long long)off);
		break;
	}
	if (rc < 0)
		goto out;
	if (expect_num && num != expect_num) {
		ps_obj_free(*out);
		*out = NULL;
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		            "the xref says object %u is at offset %lld, but object %u is there",
		            expect_num, (long long)off, num);
		goto out;
	}
	if (num_out)
		*num_out = num;
out:
	ps_buf_free(&w);
	return rc;
}

int ps_is_signature_dict(const ps_obj *d)
{
	ps_obj *type = ps_dict_get(d, "Type");
	ps_obj *contents = ps_dict_get(d, "Contents");
	ps_obj *br = ps_dict_get(d, "ByteRange");

	if (!contents || contents->kind != PS_STR || !br || br->kind != PS_ARRAY)
		return 0;
	return !type || ps_obj_is_name(type, "Sig") || ps_obj_is_name(type, "DocTimeStamp");
}

struct decrypt_ud {
	ps_doc *doc;
	uint32_t num;
	ps_buf tmp;
};

static int decrypt_string(void *ud_, ps_obj *str, const ps_obj *parent, const char *key)
{
	struct decrypt_ud *ud = ud_;
	int rc;

	if (parent && key && strcmp(key, "Contents") == 0 && ps_is_signature_dict(parent))
		return 0;
	ud->tmp.len = 0;
	rc = ps_aesv3_decrypt(ud->doc->ctx, &ud->doc->cipher, str->u.str.p, str->u.str.len, &ud->tmp);
	if (rc < 0)
		return ps_err_wrap(ud->doc->ctx, rc, "cannot decrypt a string in object %u", ud->num);
	if (ps_str_set(str, ud->tmp.data, ud->tmp.len) < 0)
		return ps_err(ud->doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

/* Decrypts the strings of an object read from the file body (invariant 3). */
static int decrypt_object(ps_doc *doc, uint32_t num, ps_obj *o)
{
	struct decrypt_ud ud = {doc, num, PS_BUF_INIT};
	int rc;

	if (!doc->encrypted || doc->strf_identity || num == doc->encrypt_num)
		return 0;
	/* 7.5.8.2: only the chain's own xref streams are exempt, never any
	 * stream that merely says /Type /XRef (issue 11). */
	if (o->kind == PS_STREAM && ps_doc_is_xref_stream(doc, num))
		return 0;
	ud.tmp.secret = 1;
	rc = ps_obj_walk_strings(o, decrypt_string, &ud);
	ps_buf_free(&ud.tmp);
	return rc;
}

int ps_doc_stream_length(ps_doc *doc, ps_obj *stm, int64_t *len)
{
	ps_obj *l = NULL;
	int rc;

	if ((rc = ps_doc_resolve(doc, ps_dict_get(stm, "Length"), &l)) < 0)
		return rc;
	if (ps_obj_int(l, len) < 0 || *len < 0 || stm->u.stm.off < 0 || *len > doc->size - stm->u.stm.off)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "stream at offset %lld has a bad /Length",
		              (long long)stm->u.stm.off);
	return 0;
}

/* Does this stream carry its own /Crypt filter, and is it Identity? */
static int crypt_filter_identity(const ps_obj *stm, int *has_crypt)
{
	ps_obj *f = ps_dict_get(stm, "Filter"), *parms = ps_dict_get(stm, "DecodeParms");
	size_t i, n = f && f->kind == PS_ARRAY ? ps_array_len(f) : 1;

	*has_crypt = 0;
	for (i = 0; i < n; i++) {
		ps_obj *fi = f && f->kind == PS_ARRAY ? ps_array_get(f, i) : f;
		ps_obj *pi = parms && parms->kind == PS_ARRAY ? ps_array_get(parms, i) : parms;
		if (ps_obj_is_name(fi, "Crypt")) {
			ps_obj *name = ps_dict_get(pi, "Name");
			*has_crypt = 1;
			return !name || ps_obj_is_name(name, "Identity");
		}
	}
	return 0;
}

int ps_stream_needs_crypt(int encrypted, int stmf_identity, int encrypt_metadata, const ps_obj *stm)
{
	int has_crypt, identity = crypt_filter_identity(stm, &has_crypt);

	if (!encrypted || identity || (stmf_identity && !has_crypt))
		return 0;
	if (ps_obj_is_name(ps_dict_get(stm, "Type"), "Metadata") && !encrypt_metadata)
		return 0; /* Table 21 EncryptMetadata */
	return 1;
}

int ps_doc_stream_data(ps_doc *doc, uint32_t num, ps_obj *stm, int decode, ps_buf *out)
{
	ps_ctx *ctx = doc->ctx;
	ps_buf raw = PS_BUF_INIT, plain = PS_BUF_INIT;
	ps_buf *cur = &raw;
	int64_t len;
	int rc, encrypted;

	out->len = 0;
	if (stm->kind != PS_STREAM)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "object %u is not a stream", num);
	if (stm->u.stm.off < 0) {
		ps_buf_append(&raw, stm->u.stm.data, stm->u.stm.len);
	} else {
		if ((rc = ps_doc_stream_length(doc, stm, &len)) < 0)
			goto out;
		if ((rc = ps_doc_pread(doc, stm->u.stm.off, (size_t)len, &raw)) < 0)
			goto out;
		if ((int64_t)raw.len != len) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "stream of object %u is truncated", num);
			goto out;
		}
	}
	encrypted = stm->u.stm.off >= 0 && num != 0 && !ps_doc_is_xref_stream(doc, num) &&
	            ps_stream_needs_crypt(doc->encrypted, doc->stmf_identity, doc->sp.encrypt_metadata, stm);
	if (encrypted) {
		if ((rc = ps_aesv3_decrypt(ctx, &doc->cipher, raw.data, raw.len, &plain)) < 0) {
			rc = ps_err_wrap(ctx, rc, "cannot decrypt the stream of object %u", num);
			goto out;
		}
		cur = &plain;
	}
	if (decode) {
		ps_obj *f = ps_dict_get(stm, "Filter");
		size_t i, n = f && f->kind == PS_ARRAY ? ps_array_len(f) : (f ? 1 : 0);
		int flate = 0;
		for (i = 0; i < n; i++) {
			ps_obj *fi = f->kind == PS_ARRAY ? ps_array_get(f, i) : f;
			if (ps_obj_is_name(fi, "Crypt"))
				continue;
			if (ps_obj_is_name(fi, "FlateDecode") && !flate) {
				flate = 1;
				continue;
			}
			rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "stream of object %u uses a filter we do not decode", num);
			goto out;
		}
		if (flate) {
			ps_obj *parms = ps_dict_get(stm, "DecodeParms");
			if (parms && parms->kind == PS_ARRAY)
				parms = ps_array_get(parms, 0);
			if ((rc = ps_flate_decode(ctx, parms, cur->data, cur->len, OBJSTM_MAX_DECODED, out)) < 0)
				ps_err_wrap(ctx, rc, "stream of object %u", num);
			goto out;
		}
	}
	ps_buf_append(out, cur->data, cur->len);
	rc = out->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
out:
	if (rc < 0)
		out->len = 0;
	ps_buf_free(&raw);
	ps_buf_free(&plain);
	return rc;
}

/* Decodes object stream NUM into doc->objstm_* (one is kept at a time).
 * Re-entrant: looking up the stream or its /Length may load another object
 * stream (a /Length inside one), so the data is decoded into local state
 * and installed only when complete (issue 11: a nested load used to
 * overwrite the buffer being filled). */
static int load_objstm(ps_doc *doc, uint32_t num)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *stm = NULL;
	ps_buf data = PS_BUF_INIT;
	int64_t n, first, i, *offs = NULL;
	size_t pos;
	int rc;

	if (doc->objstm_num == num && doc->objstm_offs)
		return 0;
	data.secret = 1; /* decrypted object streams are plaintext */
	if (ps_xref_type(doc, num) != 1)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "object stream %u is not a plain indirect object", num);
	if ((rc = ps_doc_lookup(doc, num, &stm)) < 0)
		return rc;
	if (!stm || stm->kind != PS_STREAM || !ps_obj_is_name(ps_dict_get(stm, "Type"), "ObjStm"))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "object %u is not an object stream", num);
	if (ps_obj_int(ps_dict_get(stm, "N"), &n) < 0 || ps_obj_int(ps_dict_get(stm, "First"), &first) < 0 ||
	    n < 0 || n > PS_MAX_OBJNUM || first < 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "object stream %u has a bad /N or /First", num);
	if ((rc = ps_doc_stream_data(doc, num, stm, 1, &data)) < 0)
		goto out;
	/* A sentinel keyword ends the last member, so that a bare number at the
	 * very end ("... 42") is not taken for the start of "42 0 R". */
	ps_buf_puts(&data, "\nendobj\n");
	if (data.oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if ((uint64_t)first > data.len || (uint64_t)n > data.len / 2) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "object stream %u: /First or /N does not fit its data", num);
		goto out;
	}
	offs = malloc((size_t)(n ? n : 1) * 2 * sizeof(int64_t));
	if (!offs) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	pos = 0;
	for (i = 0; i < n; i++) {
		int64_t onum, ooff;
		pos = ps_skip_ws(data.data, (size_t)first, pos);
		if (ps_parse_uint(data.data, (size_t)first, &pos, &onum) < 0 ||
		    (pos = ps_skip_ws(data.data, (size_t)first, pos),
		     ps_parse_uint(data.data, (size_t)first, &pos, &ooff) < 0) ||
		    ooff > (int64_t)data.len - first) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "object stream %u has a bad header", num);
			goto out;
		}
		offs[2 * i] = onum;
		offs[2 * i + 1] = ooff;
	}
	/* Install: whatever a nested load left behind is replaced. */
	ps_buf_free(&doc->objstm_data);
	free(doc->objstm_offs);
	doc->objstm_data = data;
	doc->objstm_offs = offs;
	doc->objstm_n = n;
	doc->objstm_first = first;
	doc->objstm_num = num;
	return 0;
out:
	ps_buf_free(&data);
	free(offs);
	return rc;
}

static int load_compressed(ps_doc *doc, uint32_t num, const ps_xent *e, ps_obj **out)
{
	size_t pos, end;
	int64_t idx = e->aux;
	int rc;

	if ((rc = load_objstm(doc, (uint32_t)e->off)) < 0)
		return rc;
	if (idx >= doc->objstm_n || doc->objstm_offs[2 * idx] != num)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "object %u is not at index %lld of object stream %lld",
		              num, (long long)idx, (long long)e->off);
	pos = (size_t)(doc->objstm_first + doc->objstm_offs[2 * idx + 1]);
	end = doc->objstm_data.len;
	rc = ps_parse_obj(doc->ctx, doc->objstm_data.data, end, &pos, out);
	if (rc == PS_E_NEEDMORE)
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "object %u is truncated in its object stream", num);
	else if (rc < 0) /* offsets in the message are inside the decoded stream */
		rc = ps_err_wrap(doc->ctx, rc, "object %u in object stream %lld (offsets are in its decoded data)",
		                 num, (long long)e->off);
	return rc;
}

int ps_doc_load(ps_doc *doc, uint32_t num, ps_obj **out)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *o = NULL;
	const ps_xent *ep;
	ps_xent e;
	int rc;

	*out = NULL;
	if (num == 0 || !(ep = ps_xref_get(doc, num)))
		return 0; /* a reference to a free or missing object is the null object */
	if (doc->encrypted && !doc->authenticated && num != doc->encrypt_num)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is encrypted and not yet authenticated");
	if (doc->depth >= MAX_LOOKUP_DEPTH)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "objects refer to each other too deeply (at object %u)", num);
	doc->depth++;
	e = *ep;
	if (e.type == 1) {
		rc = ps_doc_parse_at(doc, e.off, num, &o, NULL);
		if (rc == 0)
			rc = decrypt_object(doc, num, o);
	} else {
		rc = load_compressed(doc, num, &e, &o);
	}
	doc->depth--;
	if (rc < 0) {
		ps_obj_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

int ps_doc_lookup(ps_doc *doc, uint32_t num, ps_obj **out)
{
	ps_obj **slot, *o = NULL;
	int rc;

	*out = NULL;
	if ((slot = cache_slot(doc, num, 0)) != NULL) {
		*out = *slot;
		return 0;
	}
	if ((rc = ps_doc_load(doc, num, &o)) < 0 || !o)
		return rc;
	slot = cache_slot(doc, num, 1);
	if (!slot) {
		ps_obj_free(o);
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	*slot = o;
	*out = o;
	return 0;
}

int ps_doc_resolve(ps_doc *doc, ps_obj *o, ps_obj **out)
{
	int hops = 0, rc;

	while (o && o->kind == PS_REF) {
		if (++hops > MAX_LOOKUP_DEPTH)
			return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "reference chain too long");
		if ((rc = ps_doc_lookup(doc, o->u.ref.num, &o)) < 0)
			return rc;
	}
	*out = o;
	return 0;
}

/* ---- the security handler's dictionary ----------------------------------- */

static int copy_sec_string(ps_ctx *ctx, const ps_obj *enc, const char *key, uint8_t *dst, size_t n,
                           int required)
{
	ps_obj *s = ps_dict_get(enc, key);

	memset(dst, 0, n);
	if (!s || s->kind != PS_STR) {
		if (!required)
			return 0;
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary has no /%s string", key);
	}
	/* ISO 32000-2 Table 21: fixed sizes.  A short value cannot hold its
	 * hash and salts, so the file is malformed; longer ones are read by
	 * their leading bytes, as qpdf does. */
	if (s->u.str.len < n)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary's /%s is %zu bytes; it must be %zu",
		              key, s->u.str.len, n);
	if (s->u.str.len > n)
		ps_warn(ctx, "/Encrypt /%s is %zu bytes; using its first %zu", key, s->u.str.len, n);
	memcpy(dst, s->u.str.p, n);
	return 0;
}

static int name_is(const ps_obj *o, const char *n)
{
	return o && ps_obj_is_name(o, n);
}

/* Revision K of N, counted from the oldest, for messages. */
static int rev_no(const ps_doc *doc, int i)
{
	return doc->nsections - i;
}

/*
 * The chain check (issue 11).  Every revision of the file may have been
 * appended by someone who does not know the password, so the security
 * state is not simply the newest trailer's: a newer revision must not drop
 * /Encrypt, point it at another object or give that object other content,
 * or change ID[0].  Otherwise an update could make us write the user's new
 * text in clear or under a key the attacker chose.  ISO 32000-2 7.5.6: an
 * update's trailer carries every entry of the previous one.  Revisions
 * older than the first one with /Encrypt may lack it (the main trailer of
 * a linearized file holds only /Size).
 */
static int check_chain(ps_doc *doc)
{
	ps_ctx *ctx = doc->ctx;
	const ps_obj *first_enc = NULL, *first_id0 = NULL;
	int i, oldest = -1;

	for (i = doc->nsections - 1; i >= 0; i--) {
		const ps_obj *e = doc->sections[i].enc;
		if (e && e->kind != PS_NULL) {
			oldest = i;
			first_enc = e;
			break;
		}
	}
	if (oldest < 0)
		return 0; /* not encrypted in any revision */
	for (i = oldest - 1; i >= 0; i--) {
		const ps_obj *e = doc->sections[i].enc;
		if (!e || e->kind == PS_NULL)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d (cross-reference section at offset %lld) drops the /Encrypt "
			              "entry of the revisions before it: the file was changed by someone without the "
			              "password; refusing it", rev_no(doc, i), doc->nsections,
			              (long long)doc->sections[i].off);
		if (!ps_obj_equal(e, first_enc, 0))
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d (cross-reference section at offset %lld) points /Encrypt at "
			              "another encryption dictionary than the revisions before it; refusing it",
			              rev_no(doc, i), doc->nsections, (long long)doc->sections[i].off);
	}
	for (i = doc->nsections - 1; i >= 0; i--) {
		const ps_obj *id0 = doc->sections[i].id0;
		if (!id0)
			continue;
		if (!first_id0)
			first_id0 = id0;
		else if (!ps_obj_equal(id0, first_id0, 0))
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d (cross-reference section at offset %lld) changes the first "
			              "/ID string of the encrypted file; refusing it", rev_no(doc, i), doc->nsections,
			              (long long)doc->sections[i].off);
	}
	return 0;
}

/* Every definition of the /Encrypt object in the chain must have the
 * content of the one in use (ENC): a newer revision may not replace it. */
static int check_enc_versions(ps_doc *doc, const ps_obj *enc)
{
	ps_ctx *ctx = doc->ctx;
	const ps_xent *cur = ps_xref_get(doc, doc->encrypt_num);
	int i, rc;

	if (doc->enc_versions_oom)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory checking the revisions of the /Encrypt dictionary");
	for (i = 0; cur && i < doc->nenc_versions; i++) {
		const ps_enc_version *v = &doc->enc_versions[i];
		ps_obj *o = NULL;
		int same;
		if (v->off == cur->off)
			continue;
		if ((rc = ps_doc_parse_at(doc, v->off, doc->encrypt_num, &o, NULL)) < 0)
			return ps_err_wrap(ctx, rc, "an older definition of the /Encrypt dictionary (revision %d)",
			                   rev_no(doc, v->sec));
		same = ps_obj_equal(o, enc, 0);
		ps_obj_free(o);
		if (!same)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d gives the /Encrypt dictionary (object %u) other content than "
			              "revision %d did: the file was changed by someone without the password; refusing it",
			              rev_no(doc, cur->sec - 1), doc->nsections, doc->encrypt_num, rev_no(doc, v->sec));
	}
	return 0;
}

static int read_encrypt(ps_doc *doc)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *encref = ps_dict_get(doc->trailer, "Encrypt"), *enc = NULL, *cf, *stdcf, *strf, *stmf;
	int64_t v = 0, r = 0, p = 0;
	ps_obj *em;
	int rc;

	if ((rc = check_chain(doc)) < 0)
		return rc;
	if (!encref || encref->kind == PS_NULL)
		return 0;
	doc->encrypted = 1;
	if (encref->kind == PS_REF) {
		doc->encrypt_num = encref->u.ref.num;
		/* ISO 32000-2 7.5.7: never in an object stream (whose own data
		 * would need the key to read). */
		if (ps_xref_type(doc, doc->encrypt_num) == 2)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary (object %u) is inside an object "
			              "stream, which is not allowed", doc->encrypt_num);
		if ((rc = ps_doc_lookup(doc, encref->u.ref.num, &enc)) < 0)
			return rc;
	} else {
		enc = encref;
	}
	if (!enc || enc->kind != PS_DICT)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer's /Encrypt is not a dictionary");
	if (doc->encrypt_num && (rc = check_enc_versions(doc, enc)) < 0)
		return rc;
	if (ps_dict_get(doc->trailer, "AuthCode") || ps_dict_get(enc, "KDFSalt"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the file is protected by a PDF-MAC (ISO/TS 32004), which pdfstamp does not support");
	if (!name_is(ps_dict_get(enc, "Filter"), "Standard"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "security handler is not /Standard (public-key or custom handlers are not supported)");
	if (ps_dict_get(enc, "SubFilter"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the /Encrypt dictionary has a /SubFilter");
	ps_obj_int(ps_dict_get(enc, "V"), &v);
	ps_obj_int(ps_dict_get(enc, "R"), &r);
	if (v != 5 || (r != 5 && r != 6))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "encryption /V %lld /R %lld is not supported (only AES-256: /V 5 with /R 5 or /R 6)",
		              (long long)v, (long long)r);
	if (ps_obj_int(ps_dict_get(enc, "P"), &p) < 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary has no /P");
	/* /P is a 32-bit signed value; some writers store it unsigned. */
	if (p > INT32_MAX && p <= (int64_t)UINT32_MAX)
		p -= (int64_t)1 << 32;
	if (p < INT32_MIN || p > INT32_MAX)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "/P is out of range");
	doc->sp.v = (int)v;
	doc->sp.r = (int)r;
	doc->sp.p = p;
	em = ps_dict_get(enc, "EncryptMetadata");
	doc->sp.encrypt_metadata = !(em && em->kind == PS_BOOL && !em->u.b);
	cf = ps_dict_get(enc, "CF");
	strf = ps_dict_get(enc, "StrF");
	stmf = ps_dict_get(enc, "StmF");
	doc->strf_identity = !strf || name_is(strf, "Identity");
	doc->stmf_identity = !stmf || name_is(stmf, "Identity");
	{
		/* Every crypt filter named by StrF/StmF must exist with /CFM /AESV3. */
		ps_obj *names[2] = {strf, stmf};
		int k;
		for (k = 0; k < 2; k++) {
			if (!names[k] || name_is(names[k], "Identity"))
				continue;
			if (names[k]->kind != PS_NAME)
				return ps_err(ctx, PDFSTAMP_E_FORMAT, "/StrF or /StmF is not a name");
			stdcf = ps_dict_get(cf, names[k]->u.name.p);
			if (!stdcf || stdcf->kind != PS_DICT)
				return ps_err(ctx, PDFSTAMP_E_FORMAT, "crypt filter /%s is not defined in /CF",
				              names[k]->u.name.p);
			if (!name_is(ps_dict_get(stdcf, "CFM"), "AESV3"))
				return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
				              "crypt filter /%s does not use /AESV3", names[k]->u.name.p);
		}
	}
	if ((rc = copy_sec_string(ctx, enc, "O", doc->sp.o, 48, 1)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "U", doc->sp.u, 48, 1)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "OE", doc->sp.oe, 32, 1)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "UE", doc->sp.ue, 32, 1)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "Perms", doc->sp.perms, 16, 1)) < 0)
		return rc;
	doc->encrypt = ps_obj_copy(enc);
	if (!doc->encrypt)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

/* ---- public entry points -------------------------------------------------- */

const char *ps_file_kind(mode_t mode)
{
	return S_ISFIFO(mode) ? "a FIFO" : S_ISDIR(mode) ? "a directory" :
	       S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : S_ISREG(mode) ? "a regular file" :
	       "a socket or other special file";
}

int pdfstamp_doc_open(pdfstamp_ctx *ctx, pdfstamp_doc **out, const char *path, unsigned flags)
{
	ps_doc *doc;
	struct stat st;
	int rc;

	*out = NULL;
	doc = calloc(1, sizeof *doc);
	if (!doc)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	doc->ctx = ctx;
	doc->fd = -1;
	doc->objstm_data.secret = 1; /* decrypted object streams are plaintext */
	doc->path = strdup(path);
	if (!doc->path) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto fail;
	}
	/* O_NONBLOCK: a FIFO or device given as input must not hang the
	 * open; it is refused below, before any read. */
	doc->fd = open(path, ((flags & PDFSTAMP_OPEN_WRITE) ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	/* A file that cannot be opened, whatever the reason (missing, not
	 * permitted, a directory, not a regular file), is an I/O error. */
	if (doc->fd < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (fstat(doc->fd, &st) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat: %s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot open: not a regular file (%s)", ps_file_kind(st.st_mode));
		goto fail;
	}
	if ((rc = fcntl(doc->fd, F_GETFL)) < 0 || fcntl(doc->fd, F_SETFL, rc & ~O_NONBLOCK) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (flags & PDFSTAMP_OPEN_WRITE) {
		/* Held until close: nobody else appends between our read and our write. */
		if (flock(doc->fd, LOCK_EX | LOCK_NB) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "the file is locked by another process");
			goto fail;
		}
		doc->locked = 1;
		/* Under that lock (recovery takes none of its own here): a journal
		 * of ours is rolled back, any other one fails the open. */
		if (!(flags & PS_OPEN_NO_RECOVER)) {
			int recovered = PDFSTAMP_RECOVER_NONE;
			if ((rc = ps_journal_recover(ctx, doc->fd, path, &recovered)) < 0)
				goto fail;
			if (recovered == PDFSTAMP_RECOVER_ROLLED_BACK)
				ps_warn(ctx, "rolled back an interrupted in-place update; the file is as it was before it");
			else if (recovered == PDFSTAMP_RECOVER_UNWRITTEN)
				ps_warn(ctx, "removed the journal of an interrupted in-place update that had not changed the file");
			if (recovered && fstat(doc->fd, &st) < 0) {
				rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat: %s", strerror(errno));
				goto fail;
			}
		}
	} else if (!(flags & PS_OPEN_NO_RECOVER)) {
		/* Read-only: a journal is reported, never acted on. */
		int pending = 0;
		if ((rc = pdfstamp_journal_pending(ctx, path, &pending)) == PDFSTAMP_E_NOMEM)
			goto fail;
		if (rc == 0 && pending)
			ps_warn(ctx, "%s.pdfstamp-journal exists: an in-place update of this file may have been interrupted; "
			        "the file was read as it is and nothing was changed ('pdfstamp recover %s' checks the "
			        "journal and rolls the update back)", path, path);
	}
	doc->size = (int64_t)st.st_size;
	doc->mode = st.st_mode;
	doc->open_flags = flags;
	if ((rc = ps_xref_load(doc)) < 0 ||
	    (!(flags & PS_OPEN_NEWEST_ONLY) && (rc = read_encrypt(doc)) < 0))
		goto fail;
	*out = doc;
	return 0;
fail:
	pdfstamp_doc_close(doc);
	return rc;
}

void pdfstamp_doc_close(pdfstamp_doc *doc)
{
	if (!doc)
		return;
	cache_clear(doc);
	ps_obj_free(doc->trailer);
	ps_obj_free(doc->encrypt);
	ps_cipher_free(&doc->cipher);
	ps_buf_free(&doc->objstm_data);
	free(doc->objstm_offs);
	ps_xref_free(doc);
	free(doc->enc_versions);
	free(doc->xstm);
	for (int i = 0; doc->sections && i < doc->nsections; i++) {
		ps_obj_free(doc->sections[i].enc);
		ps_obj_free(doc->sections[i].id0);
	}
	free(doc->sections);
	free(doc->read_ranges);
	free(doc->path);
	if (doc->fd >= 0)
		close(doc->fd);
	ps_wipe(&doc->sp, sizeof doc->sp);
	free(doc);
}

int pdfstamp_doc_is_encrypted(const pdfstamp_doc *doc)
{
	return doc->encrypted;
}

/* Permissions (issue 11): /P is not authenticated, /Perms is (it is
 * encrypted under the file key, Algorithm 10).  So after authentication
 * doc->perms holds the effective permissions, which every decision reads
 * (ps_policy_check, rotate's "keep permissions", info):
 *  - /Perms agrees with /P: /P;
 *  - /Perms is a well-formed block that disagrees: refused, or with FORCE
 *    the P that /Perms records;
 *  - /Perms is no permissions block at all: refused, or with FORCE no
 *    optional permission (PS_P_NONE): nothing trustworthy grants any. */
int pdfstamp_doc_auth(pdfstamp_doc *doc, const char *password, size_t len, unsigned flags)
{
	ps_ctx *ctx = doc->ctx;
	uint8_t key[32];
	int64_t genuine = 0, eff;
	int is_owner = 0, perms_ok = 0, pstate = PS_PERMS_GARBLED, rc;

	if (!doc->encrypted) {
		/* The caller expected encryption; a revision may have cut it off
		 * (an appended section without /Prev hides the chain): writers
		 * refuse to add anything in clear (ps_update_begin). */
		if (len > 0)
			doc->password_given = 1;
		return 0;
	}
	rc = ps_sec_authenticate(ctx, &doc->sp, password, len, key, &is_owner, &perms_ok);
	if (rc < 0)
		goto out;
	/* Algorithm 13 (7.6.4.4.12): what /Perms itself says */
	if ((rc = ps_sec_read_perms(ctx, &doc->sp, key, &genuine, &pstate)) < 0)
		goto out;
	eff = doc->sp.p;
	if (pstate != PS_PERMS_OK) {
		if (!(flags & PDFSTAMP_AUTH_FORCE)) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "/Perms does not match /P and /EncryptMetadata (Algorithm 13); the "
			            "encryption dictionary may have been tampered with (--force overrides)");
			goto out;
		}
		/* /EncryptMetadata is covered by /Perms too: with it in doubt,
		 * take the reading that encrypts new metadata. */
		doc->sp.encrypt_metadata = 1;
		if (pstate == PS_PERMS_MISMATCH) {
			eff = genuine;
			if (genuine != doc->sp.p)
				ps_warn(ctx, "/Perms does not match /P (Algorithm 13); continuing (forced) with the "
				        "permissions /Perms records (P=%lld), not /P (%lld)",
				        (long long)genuine, (long long)doc->sp.p);
			else
				ps_warn(ctx, "/Perms does not match /EncryptMetadata (Algorithm 13); continuing (forced)");
		} else {
			eff = PS_P_NONE;
			ps_warn(ctx, "/Perms is not a permissions block (Algorithm 13); continuing (forced) "
			        "with no optional permissions, since /P cannot be trusted");
		}
	}
	if ((rc = ps_doc_auth_key(doc, key, is_owner ? 2 : 1)) < 0)
		goto out;
	doc->perms_ok = perms_ok;
	doc->perms = eff;
out:
	ps_wipe(key, sizeof key);
	return rc;
}

/* Builds the cipher state; the raw key is not kept (invariant 4). */
int ps_doc_auth_key(ps_doc *doc, const uint8_t key[32], int as)
{
	int rc;

	ps_cipher_free(&doc->cipher);
	if ((rc = ps_cipher_init(doc->ctx, &doc->cipher, key)) < 0)
		return rc;
	/* Objects cached before authentication (only /Encrypt) stay valid:
	 * they are never encrypted. */
	doc->authenticated = as;
	return 0;
}

int ps_doc_auth_cipher(ps_doc *doc, const ps_cipher *c, int as)
{
	int rc;

	if ((rc = ps_cipher_borrow(doc->ctx, &doc->cipher, c)) < 0)
		return rc;
	doc->authenticated = as;
	return 0;
}

uint16_t ps_doc_gen(const ps_doc *doc, uint32_t num)
{
	const ps_xent *e = ps_xref_get(doc, num);

	return e && e->type == 1 ? (uint16_t)e->aux : 0;
}

/* ---- info ------------------------------------------------------------------ */

static void copy_name(char *dst, size_t n, const ps_obj *o)
{
	dst[0] = 0;
	if (o && o->kind == PS_NAME)
		snprintf(dst, n, "%s", o->u.name.p);
}

/* The DocMDP level of signature dictionary SIG: the /P of its DocMDP
 * transform (ISO 32000-2 12.8.2.2, Table 257; default 2), 0 if it has none. */
static int sig_docmdp(ps_doc *doc, ps_obj *sig, int *level)
{
	ps_obj *refs = ps_dict_get(sig, "Reference");
	size_t k;
	int rc;

	*level = 0;
	if ((rc = ps_doc_resolve(doc, refs, &refs)) < 0)
		return rc;
	for (k = 0; refs && refs->kind == PS_ARRAY && k < ps_array_len(refs); k++) {
		ps_obj *r = NULL, *tp = NULL;
		int64_t pval = 2;
		if ((rc = ps_doc_resolve(doc, ps_array_get(refs, k), &r)) < 0)
			return rc;
		if (!name_is(ps_dict_get(r, "TransformMethod"), "DocMDP"))
			continue;
		if ((rc = ps_doc_resolve(doc, ps_dict_get(r, "TransformParams"), &tp)) < 0)
			return rc;
		ps_obj_int(ps_dict_get(tp, "P"), &pval);
		*level = pval >= 1 && pval <= 3 ? (int)pval : 2;
		return 0;
	}
	return 0;
}

/*
 * Signatures and the certification level.  The certification is read
 * where ISO 32000-2 12.8.4.1 puts it, /Root /Perms /DocMDP, whatever the
 * field tree looks like; the field tree is walked for the list of
 * signatures.  Every signature is counted (the first 16 are described),
 * and a tree too deep to walk sets sigs_incomplete: the policy is then
 * unknown and writers refuse rather than guess (issue 11).
 */
int ps_doc_signatures(ps_doc *doc, struct pdfstamp_info *info)
{
	ps_obj *root = NULL, *acro = NULL, *fields = NULL, *perms = NULL, *docmdp, *cert = NULL;
	uint32_t docmdp_num = 0;
	/* An explicit stack of field arrays; bounded to stop hostile trees. */
	struct { ps_obj *arr; size_t i; } stack[16];
	int sp = 0, visited = 0, rc;

	if ((rc = ps_doc_resolve(doc, ps_dict_get(doc->trailer, "Root"), &root)) < 0)
		return rc;
	if ((rc = ps_doc_resolve(doc, ps_dict_get(root, "Perms"), &perms)) < 0)
		return rc;
	docmdp = ps_dict_get(perms, "DocMDP");
	if (docmdp && docmdp->kind == PS_REF)
		docmdp_num = docmdp->u.ref.num;
	if (docmdp) {
		if ((rc = ps_doc_resolve(doc, docmdp, &cert)) < 0)
			return rc;
		if (cert && cert->kind == PS_DICT) {
			if ((rc = sig_docmdp(doc, cert, &info->docmdp)) < 0)
				return rc;
			if (!info->docmdp)
				info->docmdp = 2; /* certification without a readable /P */
		} else if (cert) {
			info->sigs_incomplete = 1; /* /DocMDP that is not a signature dictionary */
		}
	}
	if ((rc = ps_doc_resolve(doc, ps_dict_get(root, "AcroForm"), &acro)) < 0)
		return rc;
	if ((rc = ps_doc_resolve(doc, ps_dict_get(acro, "Fields"), &fields)) < 0)
		return rc;
	if (!fields || fields->kind != PS_ARRAY)
		return 0;
	stack[sp].arr = fields;
	stack[sp].i = 0;
	sp++;
	while (sp > 0) {
		ps_obj *ref, *field = NULL, *v = NULL, *kids = NULL, *ft;
		if (stack[sp - 1].i >= ps_array_len(stack[sp - 1].arr)) {
			sp--;
			continue;
		}
		ref = ps_array_get(stack[sp - 1].arr, stack[sp - 1].i++);
		if (++visited > 100000)
			return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "the form field tree is too large or has a cycle");
		if ((rc = ps_doc_resolve(doc, ref, &field)) < 0)
			return rc;
		if (!field || field->kind != PS_DICT)
			continue;
		ft = ps_dict_get(field, "FT");
		if (name_is(ft, "Sig") && (v = ps_dict_get(field, "V")) != NULL) {
			ps_obj *sig = NULL;
			uint32_t snum = v->kind == PS_REF ? v->u.ref.num : 0;
			if ((rc = ps_doc_resolve(doc, v, &sig)) < 0)
				return rc;
			if (sig && sig->kind == PS_DICT) {
				int level;
				if ((rc = sig_docmdp(doc, sig, &level)) < 0)
					return rc;
				if (!level && snum && snum == docmdp_num)
					level = info->docmdp;
				/* Beyond the 16 described, a DocMDP level still counts. */
				if (info->nsigs >= 16 && level && (!info->docmdp || level < info->docmdp))
					info->docmdp = level;
				if (info->nsigs < 16) {
					struct pdfstamp_sig_info *si = &info->sigs[info->nsigs];
					memset(si, 0, sizeof *si);
					si->objnum = snum;
					copy_name(si->subfilter, sizeof si->subfilter, ps_dict_get(sig, "SubFilter"));
					si->docmdp = level;
				}
				info->nsigs++;
			}
		}
		if ((rc = ps_doc_resolve(doc, ps_dict_get(field, "Kids"), &kids)) < 0)
			return rc;
		if (kids && kids->kind == PS_ARRAY) {
			if (sp == 16) {
				info->sigs_incomplete = 1;
				continue;
			}
			stack[sp].arr = kids;
			stack[sp].i = 0;
			sp++;
		}
	}
	return 0;
}

int pdfstamp_doc_info(pdfstamp_doc *doc, struct pdfstamp_info *info)
{
	ps_obj *root = NULL, *pages = NULL;
	uint32_t i;
	int rc;

	memset(info, 0, sizeof *info);
	info->file_size = doc->size;
	info->encrypted = doc->encrypted;
	if (doc->encrypted) {
		ps_obj *cf = ps_dict_get(doc->encrypt, "CF"), *m = NULL, *filt;
		snprintf(info->filter, sizeof info->filter, "Standard");
		info->v = doc->sp.v;
		info->r = doc->sp.r;
		info->key_bits = 256;
		copy_name(info->strf, sizeof info->strf, ps_dict_get(doc->encrypt, "StrF"));
		copy_name(info->stmf, sizeof info->stmf, ps_dict_get(doc->encrypt, "StmF"));
		filt = ps_dict_get(cf, info->stmf[0] ? info->stmf : "StdCF");
		m = ps_dict_get(filt, "CFM");
		copy_name(info->cfm, sizeof info->cfm, m);
		info->encrypt_metadata = doc->sp.encrypt_metadata;
		info->perms_valid = doc->perms_ok;
		info->authenticated_as = doc->authenticated;
		info->p = doc->perms;
	}
	info->revisions = doc->nsections;
	for (i = 0; i < (uint32_t)doc->nsections && i < PDFSTAMP_MAX_REVISIONS_REPORTED; i++)
		info->xref_kinds[i] = doc->sections[i].kind;
	info->last_is_stream = doc->sections[0].kind == PDFSTAMP_XREF_STREAM;
	info->objects = doc->xref_used;
	info->size = doc->size_key;
	info->has_trailing_bytes = doc->trailing > 0;
	info->trailing_bytes = doc->trailing;
	if (doc->encrypted && !doc->authenticated)
		goto done;
	if ((rc = ps_doc_resolve(doc, ps_dict_get(doc->trailer, "Root"), &root)) < 0)
		return rc;
	if (!root || root->kind != PS_DICT)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "/Root is not a dictionary");
	if ((rc = ps_doc_resolve(doc, ps_dict_get(root, "Pages"), &pages)) < 0)
		return rc;
	if (!pages || pages->kind != PS_DICT || ps_obj_int(ps_dict_get(pages, "Count"), &info->pages) < 0 ||
	    info->pages < 0)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT, "the page tree root has no valid /Count");
	if ((rc = ps_doc_signatures(doc, info)) < 0)
		return rc;
done:
	info->bytes_read = doc->bytes_read;
	return 0;
}
