/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doc.c - an open document: opening (the revision chain and its security
 * checks, the security handler made from the resolved /Encrypt),
 * authentication, lazy object lookup, object streams, stream data, the
 * catalog and the page tree root.
 *
 * DESIGN NOTES
 *
 * Place: above input.c (reads of the file), xref.c (the index), sec.c (the
 * security handler) and journal.c (recovery at a writing open); below
 * policy.c, info.c (the `info` report) and every writer.  It calls no
 * writer, so the reader needs nothing of incr.c.
 *
 * Privacy: struct pdfstamp_doc and its index (struct ps_xref, xref.c) are
 * complete only in the reader's files that keep their state (doc.c,
 * input.c, xref.c), which include docpriv.h; layout.sh checks that nobody
 * else does (xrefsec.c, the reader's fourth file, needs only the context
 * and the size).  Other modules see the document through functions, by
 * concern: input.h's ps_doc_ctx, ps_doc_size (where reading stops),
 * ps_doc_file (what the writers need of the file) and ps_doc_bytes_read;
 * doc.h's ps_doc_security (the handler and the outcome of authentication;
 * ps_doc_share_security for the writers' re-reads), ps_doc_cached_next
 * (the cache, for incr.c's capture check) and ps_doc_asof_cap and
 * ps_doc_asof_charge (note 5's budget); the index through ps_doc_xref and
 * the ps_xref_* queries.  The snapshots they fill hold borrowed pointers
 * only.  A caller that needs a fact per object keeps its own copy (the
 * rewrite's handler, the sequential reader's size), so hiding the fields
 * costs a whole-file pass one call per object at most (the index's
 * ps_xref_get and ps_xref_next, no longer inline).
 *
 * States:  OPENED (xref read, /Encrypt parsed, no key) --auth--> KEYED.
 * A plaintext document is usable as soon as it is OPENED.  Objects of an
 * encrypted document can be looked up only when KEYED (before that only the
 * /Encrypt dictionary itself is read, and it is never encrypted).
 *
 * Invariants:
 *  1. The file is read with pread() only, through ps_doc_pread() and
 *     ps_doc_parse_at() (input.c), which count the distinct bytes read:
 *     bytes_read is what `info --json` reports.  A journal found at open is
 *     handled by journal.c (recovery under the writers' lock, a warning on
 *     read-only opens).
 *  2. Objects are parsed when first looked up and then cached for the
 *     document's lifetime; lookups hand out borrowed pointers.  Whole-file
 *     passes (verify, the rewrite's self-check) use ps_doc_load instead:
 *     an owned, uncached copy, so memory stays flat.
 *  3. Strings of objects read from the file body are decrypted on load
 *     (ps_sec_convert_strings), except where ISO 32000-2 exempts them: the
 *     /Encrypt dictionary (7.6.2), the chain's xref streams (7.5.8.2,
 *     decided by object number: ps_doc_is_xref_stream, xref.c, never by
 *     /Type), the /Contents of signature
 *     dictionaries (12.8.1); sec.c's design note 4 has the whole rule.
 *     Objects inside an object stream are not decrypted again: the object
 *     stream was decrypted as a whole.
 *  4. The security handler is doc->sec (sec.c): made from the resolved
 *     /Encrypt dictionary once the revision chain is checked (read_encrypt),
 *     authenticated by pdfstamp_doc_auth, which keeps only the outcome
 *     (doc->authenticated, doc->perms).  The file key never leaves it.  The
 *     writer's self-check gives the re-opened output a handler sharing the
 *     original's key schedules (ps_doc_share_security, ps_sec_share); no
 *     other module sets any of this state.
 *  5. Older revisions (audit.c): ps_doc_load_as_of reads an object as a
 *     reader saw it when section SEC was the newest (xref.c's hidden
 *     entries), with that version's generation for its key and the object
 *     stream as of SEC for a compressed one (a two-slot cache of its own,
 *     doc->asof_stm, so that comparing a member as of two revisions does
 *     not decode either stream again per member, and the current-state
 *     cache is never touched); the exemptions of invariant 3 apply by
 *     number and offset.  Such objects are owned and uncached.  Both
 *     states decode object streams with the one decoder, objstm_decode.
 *  6. The salvage open (PDFSTAMP_OPEN_SALVAGE, read-only, for `audit`):
 *     the open reads the chain and every entry of it (ps_xref_load_all,
 *     so a damaged entry fails now, not in the middle of a report), then
 *     /Encrypt and its chain checks (load_chain).  If that fails with
 *     FORMAT or UNSUPPORTED, ps_xref_prev_eof finds the earlier revision
 *     ends ("startxref N %%EOF", newest first, the file scanned backwards
 *     once) and for each, at most SALVAGE_MAX_TRIES, a fresh document on
 *     the same descriptor whose size is that end loads the chain again;
 *     the first that loads replaces the failed one.  Its size is the
 *     effective end, so every bound check and read (input.c note 1) stops
 *     there and bytes_read counts only the prefix; damaged_len and
 *     damaged_why remember the tail (pdfstamp_doc_damaged_tail).  The
 *     journal is looked at once, before any of this, as for any read-only
 *     open.  No prefix: the whole file's error and message; an I/O error
 *     or no memory while trying is that error (never blamed on the file).
 *     Writers refuse a salvaged document (ps_update_begin,
 *     ps_policy_rewrite): appending to a prefix would drop the tail.
 *  7. Stream data is read, decrypted and decoded by one function
 *     (stream_data); FlateDecode output stops at OBJSTM_MAX_DECODED (256
 *     MiB) per stream.  A caller that reads many streams named by the
 *     file (dss.c note 3) passes a budget: the raw bytes read and the
 *     bytes decoded are taken from it, failing or not, the inflater never
 *     runs past it, and a stream that would is reported as over budget
 *     (0 with a flag, so the caller names its own cap) before more work.
 *  8. The references of a whole revision (ps_doc_refs_as_of, for audit's
 *     reference graph: auditview.c note 5).  Half a million objects read
 *     one by one cost a second (a read, a parse, string decryption each),
 *     so this pass reads each object in use as of SEC once, in file order:
 *     the plain ones sorted by offset (a natural merge sort: most files
 *     list their objects in a few runs of file order), nearby ones in one
 *     window of up to EACH_WINDOW bytes, and scans them for references
 *     only (ps_parse_scan_refs: no objects built, nothing decrypted, since
 *     strings hold no references).  An object longer than its part of the
 *     window is read alone in a growing window; one the scan is not sure
 *     about (parse.c, "References only") is parsed.  Members of object
 *     streams come last, grouped by stream, so each stream is decoded
 *     once (as of SEC, through doc->asof_stm and its cap).  An object
 *     that cannot be read is reported as such, not as an error: most are
 *     never reached, and the caller loads the one it reaches again for
 *     the message; warnings are off during the pass for the same reason.
 *  9. A second update in one call (timestamp --lta: timestamp.c note 6).
 *     After an update this process committed, the document's index and
 *     cache describe the file before it.  ps_doc_refresh reads the file
 *     again on the same descriptor, under the same writers' lock, and
 *     ps_doc_open_written opens a new file (-o) a commit just wrote.  Both
 *     read the whole chain again with every check of an open (check_chain,
 *     the /Encrypt versions), then require what the commit reported: the
 *     file's size and its newest startxref, and the same /Encrypt (number
 *     and content) and ID[0]; ps_doc_open_written also the inode the
 *     commit wrote (incr.c tells it, ps_doc_set_written): a file renamed
 *     over the new one in between, even a copy, is refused.  Only then
 *     does the re-read document carry the authentication over: the same
 *     handler (moved, or shared as ps_doc_share_security does),
 *     permissions, recipient.  The password is never needed again, and
 *     nothing the re-read finds can change the key: a file whose /Encrypt
 *     or ID[0] differs is refused.
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
#include "docpriv.h"
#include "io.h"
#include "journal.h"
#include "pubsec.h"

#define OBJSTM_MAX_DECODED ((size_t)256 << 20)
#define MAX_LOOKUP_DEPTH 32
#define SALVAGE_MAX_TRIES 64 /* earlier revision ends a salvage open tries (note 6) */

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
			for (k = (e->num * 2654435761u) & (ncap - 1); n[k].num;
			     k = (k + 1) & (ncap - 1))
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


/* Decrypts the strings of an object read from the file body (invariant 3). */
static int decrypt_object(ps_doc *doc, uint32_t num, uint16_t gen, ps_obj *o)
{
	if (!doc->encrypted)
		return 0;
	/* 7.5.8.2: only the chain's own xref streams are exempt, never any
	 * stream that merely says /Type /XRef (issue 11). */
	if (o->kind == PS_STREAM && ps_doc_is_xref_stream(doc, num))
		return 0;
	return ps_sec_convert_strings(doc->ctx, doc->sec, NULL, num, gen, o, NULL);
}

int ps_doc_stream_length(ps_doc *doc, ps_obj *stm, int64_t *len)
{
	ps_obj *l = NULL;
	int rc;

	if ((rc = ps_doc_resolve(doc, ps_dict_get(stm, "Length"), &l)) < 0)
		return rc;
	if (ps_obj_int(l, len) < 0 || *len < 0 || stm->u.stm.off < 0 ||
	    *len > doc->size - stm->u.stm.off)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		              "stream at offset %lld has a bad /Length", (long long)stm->u.stm.off);
	return 0;
}

int ps_doc_stream_data(ps_doc *doc, uint32_t num, ps_obj *stm, int decode, ps_buf *out)
{
	return ps_doc_stream_data_as(doc, num, ps_doc_gen(doc, num),
	                             ps_doc_is_xref_stream(doc, num), stm, decode, out);
}

/* ps_doc_stream_data_as, and with LEFT (decode only) the budget of
 * note 7: what is read and decoded is taken from *LEFT, and past it
 * *OVER is set and 0 returned with OUT empty. */
static int stream_data(ps_doc *doc, uint32_t num, uint16_t gen, int exempt, ps_obj *stm, int decode,
                       uint64_t *left, int *over, ps_buf *out)
{
	ps_ctx *ctx = doc->ctx;
	ps_buf raw = PS_BUF_INIT, plain = PS_BUF_INIT;
	ps_buf *cur = &raw;
	int64_t len;
	int rc, encrypted;

	plain.secret = 1; /* the decrypted bytes are wiped when it goes */
	out->len = 0;
	if (stm->kind != PS_STREAM)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "object %u is not a stream", num);
	if (stm->u.stm.off < 0) {
		ps_buf_append(&raw, stm->u.stm.data, stm->u.stm.len);
	} else {
		if ((rc = ps_doc_stream_length(doc, stm, &len)) < 0)
			goto out;
		if (left && (uint64_t)len > *left) {
			*over = 1; /* not even read */
			*left = 0;
			rc = 0;
			goto out;
		}
		if ((rc = ps_doc_pread(doc, stm->u.stm.off, (size_t)len, &raw)) < 0)
			goto out;
		if ((int64_t)raw.len != len) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "stream of object %u is truncated",
			            num);
			goto out;
		}
	}
	if (left) {
		if (raw.len > *left) {
			*over = 1;
			*left = 0;
			rc = 0;
			goto out;
		}
		*left -= raw.len;
	}
	encrypted = stm->u.stm.off >= 0 && num != 0 && !exempt &&
	            ps_sec_stream_encrypted(doc->sec, stm);
	if (encrypted) {
		if ((rc = ps_sec_decrypt_stream(ctx, doc->sec, stm, num, gen, raw.data, raw.len,
		                                &plain)) < 0) {
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
			rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			            "stream of object %u uses a filter we do not decode", num);
			goto out;
		}
		if (flate) {
			ps_obj *parms = ps_dict_get(stm, "DecodeParms");
			ps_flate_reader *r = NULL;
			if (parms && parms->kind == PS_ARRAY)
				parms = ps_array_get(parms, 0);
			if (!left) {
				if ((rc = ps_flate_decode(ctx, parms, cur->data, cur->len,
				                          OBJSTM_MAX_DECODED, out)) < 0)
					ps_err_wrap(ctx, rc, "stream of object %u", num);
				goto out;
			}
			/* at most *LEFT + 1 bytes (and what one fill adds past them) */
			if ((rc = ps_flate_reader_new(ctx, parms, cur->data, cur->len,
			                              OBJSTM_MAX_DECODED, &r)) == 0)
				rc = ps_flate_reader_fill(ctx, r,
				                          *left < SIZE_MAX - 1 ? (size_t)*left + 1
				                                               : SIZE_MAX, out);
			if (out->len > *left || (rc == 0 && !ps_flate_reader_done(r))) {
				*over = 1; /* failed or not, the budget is spent */
				*left = 0;
				rc = 0;
			} else {
				*left -= out->len; /* what a failed inflate made counts too */
			}
			ps_flate_reader_free(r);
			if (rc < 0)
				ps_err_wrap(ctx, rc, "stream of object %u", num);
			goto out;
		}
	}
	if (left) {
		if (cur->len > *left) {
			*over = 1;
			*left = 0;
			rc = 0;
			goto out;
		}
		*left -= cur->len;
	}
	ps_buf_append(out, cur->data, cur->len);
	rc = out->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
out:
	if (rc < 0 || (over && *over))
		out->len = 0;
	ps_buf_free(&raw);
	ps_buf_free(&plain);
	return rc;
}

int ps_doc_stream_data_as(ps_doc *doc, uint32_t num, uint16_t gen, int exempt, ps_obj *stm,
                          int decode, ps_buf *out)
{
	return stream_data(doc, num, gen, exempt, stm, decode, NULL, NULL, out);
}

int ps_doc_stream_data_budget(ps_doc *doc, uint32_t num, ps_obj *stm, uint64_t *left, int *over,
                              ps_buf *out)
{
	*over = 0;
	return stream_data(doc, num, ps_doc_gen(doc, num), ps_doc_is_xref_stream(doc, num), stm, 1,
	                   left, over, out);
}

/* The one object-stream decoder (ISO 32000-2 7.5.7), for the current
 * state and for older revisions alike: STM (object NUM, generation GEN,
 * EXEMPT if it is one of the chain's xref streams) checked and decoded
 * into *DATA (sentinel appended) and its header into *OFFS (2*N:
 * object number, offset from /First).  Owned by the caller on success. */
static int objstm_decode(ps_doc *doc, uint32_t num, uint16_t gen, int exempt, ps_obj *stm,
                         ps_buf *data, int64_t **offsp, int64_t *np, int64_t *firstp)
{
	ps_ctx *ctx = doc->ctx;
	int64_t n, first, i, *offs = NULL;
	size_t pos;
	int rc;

	*data = (ps_buf)PS_BUF_INIT;
	data->secret = 1; /* decrypted object streams are plaintext */
	if (!stm || stm->kind != PS_STREAM || !ps_obj_is_name(ps_dict_get(stm, "Type"), "ObjStm"))
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "object %u is not an object stream", num);
	if (ps_obj_int(ps_dict_get(stm, "N"), &n) < 0 ||
	    ps_obj_int(ps_dict_get(stm, "First"), &first) < 0 ||
	    n < 0 || n > PS_MAX_OBJNUM || first < 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "object stream %u has a bad /N or /First",
		              num);
	if ((rc = ps_doc_stream_data_as(doc, num, gen, exempt, stm, 1, data)) < 0)
		goto out;
	/* A sentinel keyword ends the last member, so that a bare number at the
	 * very end ("... 42") is not taken for the start of "42 0 R". */
	ps_buf_puts(data, "\nendobj\n");
	if (data->oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if ((uint64_t)first > data->len || (uint64_t)n > data->len / 2) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "object stream %u: /First or /N does not fit its data", num);
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
		pos = ps_parse_skip_ws(data->data, (size_t)first, pos);
		if (ps_parse_uint(data->data, (size_t)first, &pos, &onum) < 0 ||
		    (pos = ps_parse_skip_ws(data->data, (size_t)first, pos),
		     ps_parse_uint(data->data, (size_t)first, &pos, &ooff) < 0) ||
		    ooff > (int64_t)data->len - first) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "object stream %u has a bad header",
			            num);
			goto out;
		}
		offs[2 * i] = onum;
		offs[2 * i + 1] = ooff;
	}
	*offsp = offs;
	*np = n;
	*firstp = first;
	return 0;
out:
	ps_buf_free(data);
	free(offs);
	return rc;
}

/* Member NUM at index IDX of a decoded object stream (number STMNUM). */
static int objstm_member(ps_doc *doc, const ps_buf *data, const int64_t *offs, int64_t n,
                         int64_t first, uint32_t num, int64_t idx, int64_t stmnum, ps_obj **out)
{
	size_t pos;
	int rc;

	if (idx >= n || offs[2 * idx] != num)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		              "object %u is not at index %lld of object stream %lld", num,
		              (long long)idx, (long long)stmnum);
	pos = (size_t)(first + offs[2 * idx + 1]);
	rc = ps_parse_obj(doc->ctx, data->data, data->len, &pos, out);
	if (rc == PS_E_NEEDMORE)
		rc = ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		            "object %u is truncated in its object stream", num);
	else if (rc < 0) /* offsets in the message are inside the decoded stream */
		rc = ps_err_wrap(doc->ctx, rc,
		                 "object %u in object stream %lld (offsets are in its "
		                 "decoded data)", num, (long long)stmnum);
	return rc;
}

/* Decodes object stream NUM into doc->objstm_* (one is kept at a time).
 * Re-entrant: looking up the stream or its /Length may load another object
 * stream (a /Length inside one), so the data is decoded into local state
 * and installed only when complete (issue 11: a nested load used to
 * overwrite the buffer being filled). */
static int load_objstm(ps_doc *doc, uint32_t num)
{
	ps_obj *stm = NULL;
	ps_buf data;
	int64_t n, first, *offs = NULL;
	int rc;

	const ps_xent *e;

	if (doc->objstm_num == num && doc->objstm_offs)
		return 0;
	if ((rc = ps_xref_find(doc, num, &e)) < 0)
		return rc;
	if (!e || e->type != 1)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		              "object stream %u is not a plain indirect object", num);
	if ((rc = ps_doc_lookup(doc, num, &stm)) < 0)
		return rc;
	if ((rc = objstm_decode(doc, num, ps_doc_gen(doc, num), ps_doc_is_xref_stream(doc, num),
	                        stm, &data, &offs, &n, &first)) < 0)
		return rc;
	/* Install: whatever a nested load left behind is replaced. */
	ps_buf_free(&doc->objstm_data);
	free(doc->objstm_offs);
	doc->objstm_data = data;
	doc->objstm_offs = offs;
	doc->objstm_n = n;
	doc->objstm_first = first;
	doc->objstm_num = num;
	return 0;
}

static int load_compressed(ps_doc *doc, uint32_t num, const ps_xent *e, ps_obj **out)
{
	int rc;

	if ((rc = load_objstm(doc, (uint32_t)e->off)) < 0)
		return rc;
	return objstm_member(doc, &doc->objstm_data, doc->objstm_offs, doc->objstm_n,
	                     doc->objstm_first, num, e->aux, e->off, out);
}

int ps_doc_load(ps_doc *doc, uint32_t num, ps_obj **out)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *o = NULL;
	const ps_xent *ep;
	ps_xent e;
	int rc;

	*out = NULL;
	if ((rc = ps_xref_find(doc, num, &ep)) < 0)
		return rc;
	if (num == 0 || !ep)
		return 0; /* a reference to a free or missing object is the null object */
	if (doc->encrypted && !doc->authenticated && num != doc->encrypt_num)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the document is encrypted and not yet authenticated");
	if (doc->depth >= MAX_LOOKUP_DEPTH)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "objects refer to each other too deeply (at object %u)", num);
	doc->depth++;
	e = *ep;
	if (e.type == 1) {
		rc = ps_doc_parse_at(doc, e.off, num, &o, NULL);
		if (rc == 0)
			rc = decrypt_object(doc, num, (uint16_t)e.aux, o);
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

/* ---- objects as of an older revision (audit.c) ------------------------------ */

/* Is the version of NUM at OFF one of the chain's own xref streams? */
static int is_xref_stream_at(const ps_doc *doc, uint32_t num, int64_t off)
{
	size_t i;

	for (i = 0; i < doc->xref.nxstm; i++)
		if (doc->xref.xstm[i].num == num && doc->xref.xstm[i].off == off)
			return 1;
	return 0;
}

/* Object NUM at entry E (type 1) as of SEC: parsed, decrypted, an indirect
 * /Length resolved as of SEC and made direct. */
static int load_plain_as_of(ps_doc *doc, uint32_t num, const ps_xent *e, int sec, ps_obj **out)
{
	ps_obj *o = NULL, *len;
	int rc;

	*out = NULL;
	if ((rc = ps_doc_parse_at(doc, e->off, num, &o, NULL)) < 0)
		return rc;
	if (doc->encrypted && num != doc->encrypt_num &&
	    !(o->kind == PS_STREAM && is_xref_stream_at(doc, num, e->off)) &&
	    (rc = ps_sec_convert_strings(doc->ctx, doc->sec, NULL, num, (uint16_t)e->aux, o,
	                                 NULL)) < 0) {
		ps_obj_free(o);
		return rc;
	}
	if (o->kind == PS_STREAM && (len = ps_dict_get(o, "Length")) != NULL &&
	    len->kind == PS_REF) {
		ps_obj *l = NULL;
		int64_t v = -1;
		if ((rc = ps_doc_load_as_of(doc, len->u.ref.num, sec, &l, NULL)) < 0) {
			ps_obj_free(o);
			return rc;
		}
		ps_obj_int(l, &v);
		ps_obj_free(l);
		if (v < 0 || (rc = ps_dict_put_int(o, "Length", v)) < 0) {
			ps_obj_free(o);
			return v < 0 ? ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
			                      "object %u: bad indirect /Length", num)
			             : ps_err(doc->ctx, rc, "out of memory");
		}
	}
	*out = o;
	return 0;
}

/* Object stream NUM as of SEC, decoded into one of doc->asof_stm (the
 * least recently used is replaced); *SLOT receives it. */
static int load_objstm_as_of(ps_doc *doc, uint32_t num, int sec, struct ps_asof_stm **slot)
{
	struct ps_asof_stm *c;
	ps_obj *stm = NULL;
	ps_buf data;
	int64_t n, first, *offs = NULL;
	ps_xent e;
	int rc, k;

	if (!ps_xref_as_of(&doc->xref, num, sec, &e) || e.type != 1)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		              "object stream %u is not a plain indirect object in revision %d", num,
		              doc->xref.nsections - sec + 1);
	for (k = 0; k < 2; k++) {
		c = &doc->asof_stm[k];
		if (c->offs && c->num == num && c->off == e.off) {
			c->used = ++doc->asof_clock;
			*slot = c;
			return 0;
		}
	}
	if ((rc = load_plain_as_of(doc, num, &e, sec, &stm)) < 0)
		return rc;
	rc = objstm_decode(doc, num, (uint16_t)e.aux, 0, stm, &data, &offs, &n, &first);
	ps_obj_free(stm);
	if (rc < 0)
		return rc;
	if ((rc = ps_doc_asof_charge(doc, (int64_t)data.len)) < 0) {
		ps_buf_free(&data);
		free(offs);
		return rc;
	}
	/* install (a nested load may have filled a slot meanwhile) */
	c = doc->asof_stm[0].used <= doc->asof_stm[1].used ? &doc->asof_stm[0] : &doc->asof_stm[1];
	ps_buf_free(&c->data);
	free(c->offs);
	c->data = data;
	c->offs = offs;
	c->n = n;
	c->first = first;
	c->num = num;
	c->off = e.off;
	c->used = ++doc->asof_clock;
	*slot = c;
	return 0;
}

int ps_doc_load_as_of(ps_doc *doc, uint32_t num, int sec, ps_obj **out, uint16_t *gen)
{
	ps_ctx *ctx = doc->ctx;
	ps_xent e;
	int rc;

	*out = NULL;
	if (gen)
		*gen = 0;
	if (num == 0 || sec < 1 || sec > doc->xref.nsections ||
	    !ps_xref_as_of(&doc->xref, num, sec, &e) || e.type == 0)
		return 0;
	if (doc->encrypted && !doc->authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the document is encrypted and not yet authenticated");
	if (doc->depth >= MAX_LOOKUP_DEPTH)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "objects refer to each other too deeply (at object %u)", num);
	doc->depth++;
	if (e.type == 1) {
		if (gen)
			*gen = (uint16_t)e.aux;
		rc = load_plain_as_of(doc, num, &e, sec, out);
	} else {
		struct ps_asof_stm *c;
		if ((rc = load_objstm_as_of(doc, (uint32_t)e.off, sec, &c)) == 0)
			rc = objstm_member(doc, &c->data, c->offs, c->n, c->first, num, e.aux,
			                   e.off, out);
	}
	doc->depth--;
	if (rc < 0) {
		ps_obj_free(*out);
		*out = NULL;
	}
	return rc;
}

int ps_doc_objstm_members(ps_doc *doc, uint32_t num, int sec, uint32_t **nums, size_t *n)
{
	struct ps_asof_stm *c;
	int64_t i;
	int rc;

	*nums = NULL;
	*n = 0;
	if ((rc = load_objstm_as_of(doc, num, sec, &c)) < 0)
		return rc;
	if (!(*nums = malloc((size_t)(c->n ? c->n : 1) * sizeof **nums)))
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < c->n; i++)
		if (c->offs[2 * i] > 0 && c->offs[2 * i] <= PS_MAX_OBJNUM)
			(*nums)[(*n)++] = (uint32_t)c->offs[2 * i];
	return 0;
}

/* ---- the references of every object of a revision (note 8) -------------- */

#define EACH_WINDOW ((size_t)256 << 10) /* at most this much read in one go */
#define EACH_GAP 4096                   /* a gap up to this is read, not skipped */
#define EACH_HEAD 1024                  /* read for an object's own dictionary */

struct each_ent {
	int64_t key;  /* type 1: offset; type 2: the object stream's number */
	uint32_t num;
	uint32_t idx; /* type 2: index in the stream */
};

struct each {
	ps_doc *doc;
	ps_refs_fn fn;
	void *arg;
	uint32_t *refs; /* of the object at hand */
	size_t n;
};

static int each_le(const struct each_ent *x, const struct each_ent *y)
{
	return x->key < y->key || (x->key == y->key && x->idx <= y->idx);
}

/* Sorts E[0..N) (key, then idx): a natural merge sort, since the objects
 * of most files are listed in a few runs in file order already (by number,
 * a few groups written elsewhere); each pass merges neighbouring runs, so
 * R runs take log2(R) passes.  Memory: a copy of E (qsort's merge sort
 * would take as much).  0, or -1 out of memory. */
static int sort_each(struct each_ent *e, size_t n)
{
	struct each_ent *src = e, *dst = NULL, *t;
	size_t i, j, k, a, b, o, runs = 2;

	for (i = 1; i < n && each_le(&e[i - 1], &e[i]); i++)
		;
	if (i >= n)
		return 0;
	if (!(dst = malloc(n * sizeof *dst)))
		return -1;
	while (runs > 1) {
		for (runs = 0, i = 0; i < n; i = k, runs++) {
			for (j = i + 1; j < n && each_le(&src[j - 1], &src[j]); j++)
				;
			for (k = j < n ? j + 1 : j; k < n && each_le(&src[k - 1], &src[k]); k++)
				;
			for (a = i, b = j, o = i; a < j || b < k; o++)
				dst[o] = b >= k || (a < j && each_le(&src[a], &src[b])) ? src[a++]
				                                                        : src[b++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != e)
		memcpy(e, src, n * sizeof *e);
	free(src == e ? dst : src);
	return 0;
}

static int each_collect(void *arg, uint32_t num)
{
	struct each *st = arg;

	if (ps_vec_grow((void **)&st->refs, st->n, sizeof *st->refs) < 0)
		return ps_err(st->doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	st->refs[st->n++] = num;
	return 0;
}

/* Object NUM read (RC 0, O parsed; or the scan's references collected
 * when O is NULL) or not (RC < 0: FORMAT and UNSUPPORTED are the object's,
 * FN hears of them as unread; anything else, I/O or memory, stops). */
static int each_report(struct each *st, uint32_t num, int rc, const ps_obj *o)
{
	if (rc == 0 && o) {
		st->n = 0;
		rc = ps_obj_each_ref(o, each_collect, st);
	}
	if (rc < 0 && rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_UNSUPPORTED)
		return rc;
	return st->fn(st->arg, num, st->refs, rc < 0 ? 0 : st->n, rc < 0);
}

/* The references of the plain object at OFF (ps_parse_scan_refs) read alone, in
 * a window grown fourfold while the scan needs more, as ps_doc_parse_at
 * does: 0, 1 (the parser must tell) or an error. */
static int scan_alone(struct each *st, int64_t off, uint32_t *num)
{
	ps_buf w = PS_BUF_INIT;
	size_t want = EACH_HEAD * 4;
	int rc;

	for (;;) {
		st->n = 0;
		if ((rc = ps_doc_pread(st->doc, off, want, &w)) < 0)
			break;
		rc = ps_parse_scan_refs(w.data, w.len, num, each_collect, st);
		if (rc != PS_E_NEEDMORE)
			break;
		if (w.len < want || want >= PS_OBJ_MAX) {
			rc = 1;
			break;
		}
		want *= 4;
	}
	ps_buf_free(&w);
	return rc;
}

/* The plain objects E[0..N), sorted by offset: runs of nearby objects are
 * read as one window and scanned for references (ps_parse_scan_refs); an object
 * the window does not hold whole is read alone (scan_alone), one the scan
 * is not sure about (or whose number is not the one listed) parsed, for
 * the parser's result or message (ps_doc_parse_at). */
static int each_plain(struct each *st, const struct each_ent *e, size_t n)
{
	ps_doc *doc = st->doc;
	ps_buf w = PS_BUF_INIT;
	size_t i = 0, k;
	uint32_t num = 0;
	int rc = 0;

	while (i < n && rc == 0) {
		int64_t end = e[i].key + EACH_HEAD, woff;
		/* the run: objects starting within EACH_GAP of the previous
		 * one's head, the window at most EACH_WINDOW */
		for (k = i + 1; k < n; k++) {
			if (e[k].key > end + EACH_GAP ||
			    e[k].key + EACH_HEAD - e[i].key > (int64_t)EACH_WINDOW)
				break;
			end = e[k].key + EACH_HEAD;
		}
		woff = e[i].key;
		if ((rc = ps_doc_pread(doc, woff, (size_t)(end - woff), &w)) < 0)
			break;
		for (; i < k && rc == 0; i++) {
			size_t at = (size_t)(e[i].key - woff);
			st->n = 0;
			rc = at < w.len
			         ? ps_parse_scan_refs(w.data + at, w.len - at, &num,
			                              each_collect, st)
			         : PS_E_NEEDMORE;
			if (rc == PS_E_NEEDMORE) /* longer than its part of the window */
				rc = scan_alone(st, e[i].key, &num);
			if (rc == 0 && num != e[i].num)
				rc = 1; /* the parser's message */
			if (rc == 1) {
				ps_obj *o = NULL;
				rc = ps_doc_parse_at(doc, e[i].key, e[i].num, &o, NULL);
				rc = each_report(st, e[i].num, rc, o);
				ps_obj_free(o);
			} else if (rc == 0) {
				rc = each_report(st, e[i].num, 0, NULL);
			}
		}
	}
	ps_buf_free(&w);
	return rc;
}

/* The compressed objects E[0..N), sorted by stream and index: each object
 * stream decoded once. */
static int each_member(struct each *st, int sec, const struct each_ent *e, size_t n)
{
	ps_doc *doc = st->doc;
	struct ps_asof_stm *c = NULL;
	size_t i;
	int rc = 0, bad = 0;

	for (i = 0; i < n && rc == 0; i++) {
		ps_obj *o = NULL;
		if (i == 0 || e[i].key != e[i - 1].key) {
			rc = e[i].key > 0 && e[i].key <= PS_MAX_OBJNUM
			         ? load_objstm_as_of(doc, (uint32_t)e[i].key, sec, &c)
			         : ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
			                  "object %u: no object stream %lld", e[i].num,
			                  (long long)e[i].key);
			bad = rc;
		}
		st->n = 0;
		if (bad) {
			rc = bad;
		} else if (e[i].idx < (uint64_t)c->n && c->offs[2 * e[i].idx] == e[i].num &&
		           (rc = ps_parse_scan_refs_direct(
		                    c->data.data, c->data.len,
		                    (size_t)(c->first + c->offs[2 * e[i].idx + 1]),
		                    each_collect, st)) <= 0) {
			rc = each_report(st, e[i].num, rc, NULL);
			continue;
		} else { /* the parser's object or message */
			rc = objstm_member(doc, &c->data, c->offs, c->n, c->first, e[i].num,
			                   e[i].idx, e[i].key, &o);
		}
		rc = each_report(st, e[i].num, rc, o);
		ps_obj_free(o);
	}
	return rc;
}

int ps_doc_refs_as_of(ps_doc *doc, int sec, ps_refs_fn fn, void *arg)
{
	struct each st = { .doc = doc, .fn = fn, .arg = arg };
	struct each_ent *plain = NULL, *comp = NULL;
	size_t np = 0, nc = 0;
	pdfstamp_warn_fn warn = doc->ctx->warn;
	uint32_t num;
	int rc = 0;

	if (sec < 1 || sec > doc->xref.nsections)
		return ps_err(doc->ctx, PDFSTAMP_E_INTERNAL, "no revision %d to read", sec);
	if (doc->encrypted && !doc->authenticated)
		return ps_err(doc->ctx, PDFSTAMP_E_USAGE,
		              "the document is encrypted and not yet authenticated");
	for (num = ps_xref_next_slot(&doc->xref, 0); num;
	     num = ps_xref_next_slot(&doc->xref, num)) {
		struct each_ent **a;
		size_t *n;
		ps_xent x;
		if (!ps_xref_as_of(&doc->xref, num, sec, &x) || x.type == 0)
			continue;
		a = x.type == 1 ? &plain : &comp;
		n = x.type == 1 ? &np : &nc;
		if (ps_vec_grow((void **)a, *n, sizeof **a) < 0) {
			free(plain);
			free(comp);
			return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		(*a)[(*n)++] = (struct each_ent){ .key = x.off, .num = num,
		                                  .idx = x.type == 1 ? 0 : x.aux };
	}
	if (sort_each(plain, np) < 0 || sort_each(comp, nc) < 0) {
		free(plain);
		free(comp);
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	/* silent: most objects are never reached; a caller that reaches one
	 * FN was told could not be read loads it again for the message */
	doc->ctx->warn = NULL;
	rc = each_plain(&st, plain, np);
	if (rc == 0)
		rc = each_member(&st, sec, comp, nc);
	doc->ctx->warn = warn;
	free(st.refs);
	free(plain);
	free(comp);
	return rc;
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

/* Revision K of N, counted from the oldest, for messages. */
static int rev_no(const ps_doc *doc, int i)
{
	return doc->xref.nsections - i;
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
	const ps_xref *x = &doc->xref;
	const ps_obj *first_enc = NULL, *first_id0 = NULL;
	int i, oldest = -1;

	for (i = x->nsections - 1; i >= 0; i--) {
		const ps_obj *e = x->sections[i].enc;
		if (e && e->kind != PS_NULL) {
			oldest = i;
			first_enc = e;
			break;
		}
	}
	if (oldest < 0)
		return 0; /* not encrypted in any revision */
	for (i = oldest - 1; i >= 0; i--) {
		const ps_obj *e = x->sections[i].enc;
		if (!e || e->kind == PS_NULL)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d (cross-reference section at offset %lld) "
			              "drops the /Encrypt entry of the revisions before it: "
			              "the file was changed by someone without the password; "
			              "refusing it",
			              rev_no(doc, i), x->nsections, (long long)x->sections[i].off);
		if (!ps_obj_equal(e, first_enc, 0))
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d (cross-reference section at offset %lld) "
			              "points /Encrypt at another encryption dictionary than the "
			              "revisions before it; refusing it",
			              rev_no(doc, i), x->nsections, (long long)x->sections[i].off);
	}
	for (i = x->nsections - 1; i >= 0; i--) {
		const ps_obj *id0 = x->sections[i].id0;
		if (!id0)
			continue;
		if (!first_id0)
			first_id0 = id0;
		else if (!ps_obj_equal(id0, first_id0, 0))
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d (cross-reference section at offset %lld) "
			              "changes the first /ID string of the encrypted file; "
			              "refusing it",
			              rev_no(doc, i), x->nsections, (long long)x->sections[i].off);
	}
	return 0;
}

/* Every definition of the /Encrypt object in the chain must have the
 * content of the one in use (ENC): a newer revision may not replace it. */
static int check_enc_versions(ps_doc *doc, const ps_obj *enc)
{
	ps_ctx *ctx = doc->ctx;
	const ps_xref *x = &doc->xref;
	const ps_xent *cur;
	int i, rc;

	if ((rc = ps_xref_find(doc, doc->encrypt_num, &cur)) < 0)
		return rc;
	if (x->enc_versions_oom)
		return ps_err(ctx, PDFSTAMP_E_NOMEM,
		              "out of memory checking the revisions of the /Encrypt dictionary");
	for (i = 0; cur && i < x->nenc_versions; i++) {
		const ps_enc_version *v = &x->enc_versions[i];
		ps_obj *o = NULL;
		int same;
		if (v->off == cur->off)
			continue;
		if ((rc = ps_doc_parse_at(doc, v->off, doc->encrypt_num, &o, NULL)) < 0)
			return ps_err_wrap(ctx, rc,
			                   "an older definition of the /Encrypt dictionary "
			                   "(revision %d)", rev_no(doc, v->sec));
		same = ps_obj_equal(o, enc, 0);
		ps_obj_free(o);
		if (!same)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "revision %d of %d gives the /Encrypt dictionary (object %u) "
			              "other content than revision %d did: the file was changed by "
			              "someone without the password; refusing it",
			              rev_no(doc, cur->sec - 1), x->nsections, doc->encrypt_num,
			              rev_no(doc, v->sec));
	}
	return 0;
}

static int read_encrypt(ps_doc *doc)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *encref = ps_dict_get(doc->xref.trailer, "Encrypt"), *enc = NULL, *id;
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
		const ps_xent *e;
		if ((rc = ps_xref_find(doc, doc->encrypt_num, &e)) < 0)
			return rc;
		if (e && e->type == 2)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the /Encrypt dictionary (object %u) is inside an object "
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
	if (ps_dict_get(doc->xref.trailer, "AuthCode"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the file is protected by a PDF-MAC (ISO/TS 32004), which pdfstamp "
		              "does not support");
	/* the handler itself: sec.c parses the resolved dictionary; R2-R4 key
	 * derivation takes the first /ID element (ISO 32000-1 7.6.3.3) */
	id = ps_array_get(ps_dict_get(doc->xref.trailer, "ID"), 0);
	if (id && id->kind != PS_STR)
		id = NULL;
	if ((rc = ps_sec_new(ctx, enc, doc->encrypt_num, id ? id->u.str.p : NULL,
	                     id ? id->u.str.len : 0, &doc->sec)) < 0)
		return rc;
	doc->encrypt = ps_obj_copy(enc);
	if (!doc->encrypt)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

/* ---- opening, and the salvage open (note 6) ----------------------------------- */

/* A document not yet read: no file, nothing loaded. */
static ps_doc *doc_new(ps_ctx *ctx, const char *path)
{
	ps_doc *doc = calloc(1, sizeof *doc);

	if (!doc)
		return NULL;
	doc->ctx = ctx;
	doc->fd = -1;
	doc->recipient_index = -1;
	doc->objstm_data.secret = 1; /* decrypted object streams are plaintext */
	if (!(doc->path = strdup(path))) {
		free(doc);
		return NULL;
	}
	return doc;
}

/* What an open reads once the file is known: the chain (with
 * PDFSTAMP_OPEN_SALVAGE every entry of it, so that a damaged entry is
 * found now), then /Encrypt and the chain checks. */
static int load_chain(ps_doc *doc)
{
	int rc;

	if ((rc = ps_xref_load(doc)) < 0 ||
	    ((doc->open_flags & PDFSTAMP_OPEN_SALVAGE) && (rc = ps_xref_load_all(doc)) < 0) ||
	    (!(doc->open_flags & PS_OPEN_NEWEST_ONLY) && (rc = read_encrypt(doc)) < 0))
		return rc;
	return 0;
}

/* Damage that a salvage open looks past: the file's contents, not the
 * machine (an I/O error or no memory is never blamed on a revision). */
static int salvageable(int rc)
{
	return rc == PDFSTAMP_E_FORMAT || rc == PDFSTAMP_E_UNSUPPORTED;
}

/* The full open of *PDOC failed with RC0 (its message in the context):
 * opens the file as if it ended after the newest earlier revision end
 * whose chain loads (note 6).  On success *PDOC is that document (the
 * failed one closed, its descriptor taken over); else RC0 and its
 * message are restored, unless an attempt failed for a reason of the
 * machine, which is returned instead. */
static int salvage(ps_doc **pdoc, int rc0)
{
	ps_doc *full = *pdoc, *t;
	ps_ctx *ctx = full->ctx;
	char why[sizeof full->damaged_why];
	int64_t below = full->size, mark, end;
	int tries = 0, rc;

	snprintf(why, sizeof why, "%s", ctx->errmsg);
	while (tries < SALVAGE_MAX_TRIES) {
		if ((rc = ps_xref_prev_eof(full, below, &mark, &end)) <= 0) {
			if (rc < 0 && !salvageable(rc))
				return rc;
			break;
		}
		below = mark;
		if (end >= full->size)
			continue; /* the very end: what the full open read */
		tries++;
		if (!(t = doc_new(ctx, full->path)))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		t->fd = full->fd;
		t->size = end;
		t->mode = full->mode;
		t->open_flags = full->open_flags;
		if ((rc = load_chain(t)) == 0) {
			t->damaged_len = full->size - end;
			memcpy(t->damaged_why, why, sizeof why);
			full->fd = -1; /* now t's */
			pdfstamp_doc_close(full);
			*pdoc = t;
			return 0;
		}
		t->fd = -1; /* still full's */
		pdfstamp_doc_close(t);
		if (!salvageable(rc))
			return rc;
	}
	return ps_err(ctx, rc0, "%s", why);
}

/* An open that failed as malformed (RC) of a file with no "%PDF-" in its
 * first 1024 bytes, where readers look for the header (ISO 32000-2 7.5.2):
 * says "not a PDF" rather than what the cross-reference reader tripped
 * over.  Asked only once the open failed, so a file that opens reads
 * exactly what it did; if the header cannot be read, RC and its message
 * stand. */
static int not_a_pdf(ps_doc *doc, int rc)
{
	char why[sizeof doc->ctx->errmsg];
	ps_buf h = PS_BUF_INIT;

	if (rc != PDFSTAMP_E_FORMAT)
		return rc;
	memcpy(why, doc->ctx->errmsg, sizeof why);
	if (ps_doc_pread(doc, 0, 1024, &h) < 0)
		rc = ps_err(doc->ctx, rc, "%s", why);
	else if (!memmem(h.data, h.len, "%PDF-", 5))
		rc = ps_err(doc->ctx, rc, "not a PDF: no %%PDF header");
	ps_buf_free(&h);
	return rc;
}

/* The public entry takes only the public flags: the internal PS_OPEN_*
 * ones (doc.h) skip the journal and the older revisions, which only the
 * library's own checks of what it just wrote may do. */
int pdfstamp_doc_open(pdfstamp_ctx *ctx, pdfstamp_doc **out, const char *path, unsigned flags)
{
	if (out)
		*out = NULL;
	if (!ctx || !out || !path)
		return ctx ? ps_err(ctx, PDFSTAMP_E_USAGE, "pdfstamp_doc_open: NULL argument")
		           : PDFSTAMP_E_USAGE;
	if (flags & ~(unsigned)(PDFSTAMP_OPEN_WRITE | PDFSTAMP_OPEN_SALVAGE))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "pdfstamp_doc_open: unknown flags 0x%x",
		              flags);
	if ((flags & PDFSTAMP_OPEN_WRITE) && (flags & PDFSTAMP_OPEN_SALVAGE))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "pdfstamp_doc_open: PDFSTAMP_OPEN_SALVAGE is for reading only, not "
		              "with PDFSTAMP_OPEN_WRITE");
	return ps_doc_open(ctx, out, path, flags);
}

int ps_doc_open(ps_ctx *ctx, ps_doc **out, const char *path, unsigned flags)
{
	ps_doc *doc;
	struct stat st;
	int rc;

	*out = NULL;
	if (!(doc = doc_new(ctx, path)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	/* O_NONBLOCK: a FIFO or device given as input must not hang the
	 * open; it is refused below, before any read. */
	doc->fd = open(path, ((flags & PDFSTAMP_OPEN_WRITE) ? O_RDWR : O_RDONLY) |
	                     O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
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
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot open: not a regular file (%s)",
		            ps_io_file_kind(st.st_mode));
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
		 * of ours is recovered (journal.c), any other one fails the open. */
		if (!(flags & PS_OPEN_NO_RECOVER)) {
			int recovered = PDFSTAMP_RECOVER_NONE;
			if ((rc = ps_journal_recover(ctx, doc->fd, path, &recovered)) < 0)
				goto fail;
			if (recovered == PDFSTAMP_RECOVER_COMPLETED)
				ps_warn(ctx, "found the journal of an interrupted in-place update "
				        "that is whole in the file: "
				        "the update is kept, the journal removed");
			else if (recovered == PDFSTAMP_RECOVER_UNWRITTEN)
				ps_warn(ctx, "removed the journal of an interrupted in-place "
				        "update that had not changed the file");
			else if (recovered == PDFSTAMP_RECOVER_TORN)
				ps_warn(ctx, "rolled back a torn in-place update (interrupted "
				        "while it was written): the file is as it was before "
				        "it, the journal removed");
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
			ps_warn(ctx, "%s.pdfstamp-journal exists: an in-place update of this file "
			        "may have been interrupted; the file was read as it is and nothing "
			        "was changed ('pdfstamp recover %s' checks the journal and keeps "
			        "the update if it is whole)", path, path);
	}
	doc->size = (int64_t)st.st_size;
	doc->mode = st.st_mode;
	doc->open_flags = flags;
	if ((rc = load_chain(doc)) < 0 &&
	    (!(flags & PDFSTAMP_OPEN_SALVAGE) || !salvageable(rc) ||
	     (rc = salvage(&doc, rc)) < 0)) {
		rc = not_a_pdf(doc, rc);
		goto fail;
	}
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
	if (doc->pending && doc->pending_drop)
		doc->pending_drop(doc->pending); /* an update never committed: undone */
	cache_clear(doc);
	ps_obj_free(doc->encrypt);
	ps_sec_free(doc->sec);
	ps_buf_free(&doc->objstm_data);
	free(doc->objstm_offs);
	for (int k = 0; k < 2; k++) {
		ps_buf_free(&doc->asof_stm[k].data);
		free(doc->asof_stm[k].offs);
	}
	ps_xref_free(&doc->xref);
	free(doc->read_ranges);
	free(doc->path);
	if (doc->fd >= 0)
		close(doc->fd);
	free(doc);
}

int pdfstamp_doc_damaged_tail(const pdfstamp_doc *doc, int64_t *offset, int64_t *length, char *why,
                              size_t whylen)
{
	int damaged = doc && doc->damaged_len > 0;

	if (offset)
		*offset = damaged ? doc->size : 0;
	if (length)
		*length = damaged ? doc->damaged_len : 0;
	if (why && whylen)
		snprintf(why, whylen, "%s", damaged ? doc->damaged_why : "");
	return damaged;
}

int pdfstamp_doc_is_encrypted(const pdfstamp_doc *doc)
{
	return doc->encrypted;
}

/* ---- what other modules know of the document (doc.h) ------------------------------ */

void ps_doc_security(const ps_doc *doc, struct ps_doc_security *out)
{
	memset(out, 0, sizeof *out);
	out->sec = doc->encrypted ? doc->sec : NULL;
	out->encrypt_num = doc->encrypt_num;
	out->authenticated = doc->authenticated;
	out->perms = doc->perms;
	out->password_given = doc->password_given;
	out->recipient_index = doc->authenticated ? doc->recipient_index : -1;
	out->recipient = doc->authenticated ? doc->recipient : "";
}

int ps_doc_share_security(ps_doc *doc, const ps_doc *from)
{
	int rc;

	if (!from->encrypted)
		return 0;
	if ((rc = ps_sec_share(doc->ctx, from->sec, &doc->sec)) < 0)
		return rc;
	doc->encrypted = 1;
	doc->encrypt_num = from->encrypt_num;
	doc->authenticated = from->authenticated;
	return 0;
}

int ps_doc_cached_next(const ps_doc *doc, size_t *pos, uint32_t *num, const ps_obj **obj)
{
	for (; *pos < doc->capcache; (*pos)++) {
		const ps_cache_ent *e = &doc->cache[*pos];
		if (e->num) {
			*num = e->num;
			*obj = e->obj;
			(*pos)++;
			return 1;
		}
	}
	return 0;
}

void ps_doc_asof_cap(ps_doc *doc, int64_t cap)
{
	doc->asof_decoded = 0;
	doc->asof_cap = cap;
}

int ps_doc_asof_charge(ps_doc *doc, int64_t n)
{
	doc->asof_decoded += n;
	if (doc->asof_cap > 0 && doc->asof_decoded > doc->asof_cap)
		return ps_err(doc->ctx, PDFSTAMP_E_UNSUPPORTED,
		              "reading the older revisions would decode more than %lld bytes "
		              "(4 times the file size and 64 MiB): refused",
		              (long long)doc->asof_cap);
	return 0;
}

/* Permissions (issue 11): /P is not authenticated, /Perms is (it is
 * encrypted under the file key, Algorithm 10).  So after authentication
 * doc->perms holds the effective permissions, which every decision reads
 * (ps_preflight_update, rotate's "keep permissions", info); sec.c's
 * ps_sec_auth decides them, with FORCE as the public header says. */
int pdfstamp_doc_auth(pdfstamp_doc *doc, const char *password, size_t len, unsigned flags)
{
	int64_t perms = 0;
	int as = 0, rc;

	if (!doc->encrypted) {
		/* The caller expected encryption; a revision may have cut it off
		 * (an appended section without /Prev hides the chain): writers
		 * refuse to add anything in clear (ps_update_begin). */
		if (len > 0)
			doc->password_given = 1;
		return 0;
	}
	/* Objects cached before authentication (only /Encrypt) stay valid:
	 * they are never encrypted. */
	if ((rc = ps_sec_auth(doc->ctx, doc->sec, password, len, flags, &perms, &as)) < 0)
		return rc;
	doc->authenticated = as;
	doc->perms = perms;
	return 0;
}

int pdfstamp_doc_auth_key(pdfstamp_doc *doc, const struct pdfstamp_key *key, unsigned flags)
{
	struct ps_pubsec_who who;
	int rc;

	(void)flags; /* no flag applies: the envelope is authenticated by its own cipher */
	if (!key || key->version != PDFSTAMP_KEY_VERSION)
		return ps_err(doc->ctx, PDFSTAMP_E_USAGE,
		              "pdfstamp_key of an unknown version (use PDFSTAMP_KEY_INIT)");
	if (!doc->encrypted || !ps_sec_recipients(doc->sec))
		return ps_err(doc->ctx, PDFSTAMP_E_USAGE,
		              "the file is not encrypted to certificates (%s); a key does not "
		              "open it", doc->encrypted ? "it has a password" : "not encrypted");
	if ((rc = ps_pubsec_auth(doc->ctx, doc->sec, key, &who)) < 0)
		return rc;
	doc->authenticated = who.as;
	doc->perms = who.perms;
	doc->recipient_index = who.index;
	snprintf(doc->recipient, sizeof doc->recipient, "%s", who.subject);
	return 0;
}

int ps_doc_auth_seed(ps_doc *doc, const uint8_t *seed)
{
	int rc;

	if (!doc->encrypted)
		return ps_err(doc->ctx, PDFSTAMP_E_USAGE, "the document is not encrypted");
	if ((rc = ps_pubsec_auth_seed(doc->ctx, doc->sec, seed)) < 0)
		return rc;
	doc->authenticated = 2;
	doc->perms = -4; /* every permission: whoever holds the seed holds the key */
	return 0;
}

/* ---- a second update in one call (note 9) ------------------------------------ */

/* N, just read, is the file FROM's update made: SIZE bytes ending with
 * the revision whose cross-reference section is at STARTXREF, under the
 * same security handler. */
static int same_file(ps_doc *n, const ps_doc *from, int64_t size, int64_t startxref)
{
	const ps_obj *a = ps_array_get(ps_dict_get(n->xref.trailer, "ID"), 0);
	const ps_obj *b = ps_array_get(ps_dict_get(from->xref.trailer, "ID"), 0);

	if (n->size != size || n->xref.startxref != startxref)
		return ps_err(n->ctx, PDFSTAMP_E_IO, "the file changed after our update (its size "
		              "or last revision is not the one written); nothing more is added");
	if (n->encrypted != from->encrypted || n->encrypt_num != from->encrypt_num ||
	    (n->encrypted && !ps_obj_equal(n->encrypt, from->encrypt, 0)) ||
	    (n->encrypted && (!a || !b || !ps_obj_equal(a, b, 0))))
		return ps_err(n->ctx, PDFSTAMP_E_FORMAT, "the file read after our update has "
		              "another /Encrypt or ID[0]; nothing more is added");
	return 0;
}

/* What authentication gave FROM, now N's too (its handler aside). */
static void copy_auth(ps_doc *n, const ps_doc *from)
{
	n->authenticated = from->authenticated;
	n->perms = from->perms;
	n->password_given = from->password_given;
	n->recipient_index = from->recipient_index;
	memcpy(n->recipient, from->recipient, sizeof n->recipient);
}

int ps_doc_refresh(ps_doc *doc, int64_t size, int64_t startxref)
{
	struct pdfstamp_doc old;
	struct stat st;
	ps_doc *n;
	ps_sec *sec;
	ps_obj *enc;
	int rc;

	if (!doc->locked || doc->pending || doc->damaged_len)
		return ps_err(doc->ctx, PDFSTAMP_E_INTERNAL, "refresh of a document not opened "
		              "for writing, or with an update pending");
	if (fstat(doc->fd, &st) < 0)
		return ps_err(doc->ctx, PDFSTAMP_E_IO, "cannot stat: %s", strerror(errno));
	if (!(n = doc_new(doc->ctx, doc->path)))
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	n->fd = doc->fd;
	n->size = (int64_t)st.st_size;
	n->mode = st.st_mode;
	n->open_flags = doc->open_flags;
	if ((rc = load_chain(n)) < 0 || (rc = same_file(n, doc, size, startxref)) < 0) {
		n->fd = -1;
		pdfstamp_doc_close(n);
		return rc;
	}
	/* DOC becomes N, keeping its descriptor, lock and handler; N takes
	 * what DOC held (the old index, cache, unauthenticated handler) to
	 * close */
	old = *doc;
	*doc = *n;
	*n = old;
	sec = doc->sec;
	doc->sec = n->sec;
	n->sec = sec;
	enc = doc->encrypt;
	doc->encrypt = n->encrypt;
	n->encrypt = enc;
	copy_auth(doc, n);
	doc->locked = n->locked;
	n->locked = 0;
	n->fd = -1;
	pdfstamp_doc_close(n);
	return 0;
}

void ps_doc_set_written(ps_doc *doc, dev_t dev, ino_t ino)
{
	doc->written = 1;
	doc->written_dev = dev;
	doc->written_ino = ino;
}

int ps_doc_open_written(ps_doc *from, const char *path, int64_t size, int64_t startxref,
                        ps_doc **out)
{
	ps_doc *n = NULL;
	ps_sec *mine;
	struct stat st;
	int rc;

	*out = NULL;
	if ((rc = ps_doc_open(from->ctx, &n, path, PDFSTAMP_OPEN_WRITE | PS_OPEN_NO_RECOVER)) < 0)
		return rc;
	/* The file the commit wrote, not one renamed over it since (or a
	 * symbolic link put there): the content checks alone would take a
	 * copy, and the update would change a file it was not asked to. */
	if (fstat(n->fd, &st) < 0 || !from->written || st.st_dev != from->written_dev ||
	    st.st_ino != from->written_ino) {
		rc = ps_err(from->ctx, PDFSTAMP_E_IO, "%s is no longer the file our update wrote "
		            "(replaced since); nothing more is added", path);
		goto fail;
	}
	if ((rc = same_file(n, from, size, startxref)) < 0)
		goto fail;
	if (from->encrypted) {
		mine = n->sec;
		n->sec = NULL;
		if ((rc = ps_sec_share(n->ctx, from->sec, &n->sec)) < 0) {
			n->sec = mine;
			goto fail;
		}
		ps_sec_free(mine);
	}
	copy_auth(n, from);
	*out = n;
	return 0;
fail:
	pdfstamp_doc_close(n);
	return rc;
}

const char *pdfstamp_doc_security_handler(const pdfstamp_doc *doc)
{
	return doc && doc->encrypted ? ps_sec_handler(doc->sec) : NULL;
}

uint16_t ps_doc_gen(ps_doc *doc, uint32_t num)
{
	const ps_xent *e;

	/* asked only of objects already looked up, whose entry was read */
	if (ps_xref_find(doc, num, &e) < 0)
		return 0;
	return e && e->type == 1 ? (uint16_t)e->aux : 0;
}

/* ---- the catalog and the page tree ----------------------------------------- */

int ps_doc_catalog(ps_doc *doc, enum ps_catalog_need need, ps_obj **root, ps_obj **ref)
{
	ps_obj *r = ps_dict_get(doc->xref.trailer, "Root");
	int rc;

	*root = NULL;
	if (ref)
		*ref = r && r->kind == PS_REF ? r : NULL;
	if ((rc = ps_doc_resolve(doc, r, root)) < 0)
		return rc;
	if (need == PS_CATALOG_ANY ||
	    (*root && (*root)->kind == PS_DICT && (need == PS_CATALOG_DICT || r->kind == PS_REF)))
		return 0;
	return ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
	              need == PS_CATALOG_DICT ? "/Root is not a dictionary"
	                                      : "/Root is not an indirect dictionary");
}

int ps_doc_pages(ps_doc *doc, ps_obj **pages, ps_obj **ref, int64_t *count)
{
	ps_obj *root = NULL, *p, *node = NULL;
	int64_t n = -1;
	int rc;

	if ((rc = ps_doc_catalog(doc, PS_CATALOG_ANY, &root, NULL)) < 0)
		return rc;
	p = ps_dict_get(root, "Pages");
	if ((rc = ps_doc_resolve(doc, p, &node)) < 0)
		return rc;
	if (!node || node->kind != PS_DICT || ps_obj_int(ps_dict_get(node, "Count"), &n) < 0 ||
	    n < 0)
		return ps_err(doc->ctx, PDFSTAMP_E_FORMAT,
		              "the page tree root has no valid /Count");
	if (pages)
		*pages = node;
	if (ref)
		*ref = p;
	if (count)
		*count = n;
	return 0;
}
