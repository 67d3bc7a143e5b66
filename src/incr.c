/* SPDX-License-Identifier: Apache-2.0 */
/*
 * incr.c - the incremental writer: one appended revision per transaction.
 *
 * DESIGN NOTES
 *
 * States:   OPEN --commit ok--> DONE
 *             \--any failure--> FAILED   (free is valid in every state)
 *
 * Invariants:
 *  1. Append only (ISO 32000-2 7.5.6).  The first L bytes of the input
 *     (L = its length when the document was opened) are never written: with
 *     -o they are copied, in place they are left alone and only bytes from
 *     offset L on are written.
 *  2. New objects are plaintext in memory and encrypted only while being
 *     serialised, by the document's security handler (sec.c, whose rules
 *     decide what is encrypted: ps_sec_convert_strings for strings,
 *     ps_sec_stream_encrypted and ps_sec_encrypt for stream data), each
 *     with a fresh IV from the context's pool (AESV3, 7.6.3.1: IV ||
 *     AES-256-CBC || PKCS#7 pad), /Length = encrypted length.  Nothing encrypted is ever
 *     decrypted back into a file; no plaintext reaches any file.
 *  3. The new section has the form of the newest one (ISO 32000-2 7.5.6,
 *     7.5.8.4): a classic table after a table or hybrid section (no
 *     /XRefStm carried), an xref stream after a stream, with /W sized from
 *     the largest offset and an entry for the xref stream itself; xrefw.c
 *     writes it.  The trailer (build_trailer) carries every previous key
 *     (same /Encrypt, /Root, ID[0]) and sets /Prev, /Size and a fresh ID[1].
 *  4. Durability.  -o: an unnamed temp file in the target's directory
 *     (io.c) <- copy of L bytes + section, verify, fsync, chmod, rename,
 *     fsync dir.  To a descriptor (PDFSTAMP_WRITE_TO_FD, `-o -`): the same
 *     file in $TMPDIR, never named, verified, then copied to it.
 *     In place (under the exclusive lock taken at open), 3 fsyncs: the
 *     section is built in memory; then the journal "FILE.pdfstamp-journal"
 *     (version 3: FILE's device and inode, L, and the length and SHA-256
 *     of the section; journal.c) is written, fsynced, linked into place
 *     and the directory fsynced; then one pwrite at L and the file's
 *     fsync (from then on a crash keeps the update), verify, the caller's
 *     durable hook (write options version 3: its record of the update,
 *     made while the journal still guards it), and the journal is
 *     unlinked without a directory fsync: the update is done, and only
 *     then reported.  Any failure up to the end of the hook truncates
 *     back to L (ps_journal_rollback, through io.c's
 *     ps_io_truncate_fd).  A crash leaves the journal; the next writing
 *     open (PDFSTAMP_OPEN_WRITE, under its lock) or pdfstamp_recover
 *     rolls forward: if the journal is ours and the bytes after L are
 *     exactly the section it records, the update is kept and only the
 *     journal removed; at L, only the journal goes; a torn append (a
 *     prefix of the section, which the version-4 journal holds a copy
 *     of) is cut back to L.  Read-only opens never act on a journal
 *     (they warn that one exists): a journal is input that anyone with
 *     write access to the directory could have planted.
 *  5. Before the commit reports success the output is re-opened, the new
 *     startxref must point at the new section, and every new object is
 *     looked up, decrypted and compared with what we meant to write.
 *  6. Numbers (7.5.4, 7.3.10): an update writes new versions of objects
 *     in use in the file, and new objects under numbers ps_update_alloc
 *     handed out, all above every number a section mentions; nothing
 *     else (ps_update_put: INTERNAL), so /Size stays one more than the
 *     highest number.  A reference to a missing object is the null
 *     object, never a place to write to, and stays null: a new number is
 *     never one that the carried-over trailer or an object read before
 *     the first ps_update_alloc names (make_skip, over the document's
 *     cache, which keeps every object looked up).  Otherwise anyone who
 *     can append a revision (no password needed: dictionaries without
 *     strings are plaintext) has a page's /Contents name /Size+5 and gets
 *     the stamp's appearance drawn as that page's content.
 *     The callers' rule: every object whose references decide what is
 *     written, or that is copied into a new version, is read before the
 *     first ps_update_alloc.  stamp.c collects every target page (with
 *     what it inherits and an indirect /Annots array) first, meta.c reads
 *     the catalog and its /Metadata stream first (xmp_read), dss.c the
 *     catalog, /DSS and its arrays (match_existing) and the signatures'
 *     /VRI entries (vri_read) first; the signature policy's walk precedes
 *     every update.  The second line of defence (check_no_capture, at the
 *     start of the commit, O(objects read)): an object in the cache that
 *     names a number this update handed out and did not skip was read
 *     too late and a new object has captured that reference: INTERNAL,
 *     nothing written.  Objects the update never reads are not looked at
 *     (reading them all would end the lazy stamp): a page that is not a
 *     target, or an object that a page names (its /Resources dictionary
 *     when indirect, a form XObject), may still name a new number;
 *     only a full read of the file closes that.
 *  7. Dry run (PDFSTAMP_WRITE_DRY_RUN; dryrun.c): begin runs every check
 *     above and the output's pre-flights (dryrun.c note 4) on a document
 *     that may be read-only, even in place; commit builds the section
 *     exactly as in note 2 and fills the result from it, then stops: no
 *     output, temporary file, journal, write or fsync, and no durable
 *     hook.  bytes_appended is the section's length, the bytes a real
 *     commit would append.
 *  8. The seal (ps_update.seal, set by the caller; timestamp.c): after
 *     the section is built and before anything is opened, journalled or
 *     written, the caller may change bytes of the section in place (never
 *     its length) and the new objects in memory to match (note 5 compares
 *     them).  A document timestamp's /ByteRange and token are known only
 *     once the section's bytes are, and written by this one path: its
 *     failure (the network, the TSA) fails the commit with nothing
 *     written.  Not called in a dry run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "io.h"
#include "journal.h"
#include "dryrun.h"
#include "xrefw.h"

/* ---- transaction ---------------------------------------------------------------- */

int ps_update_begin(ps_doc *doc, const struct pdfstamp_write_opts *w, ps_update *up)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct ps_xref_info xi;
	struct ps_doc_file f;
	int64_t damaged;
	uint32_t hi;
	unsigned idf;
	char why[64];
	int dry = w && (w->flags & PDFSTAMP_WRITE_DRY_RUN);

	memset(up, 0, sizeof *up);
	up->doc = doc;
	ps_doc_security(doc, &up->ds);
	ps_doc_file(doc, &f);
	up->state = PS_UP_FAILED;
	if (!w || w->version < 1 || w->version > PDFSTAMP_WRITE_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "write options of an unknown version");
	if ((w->flags & PDFSTAMP_WRITE_TO_FD) && w->version < 2)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "PDFSTAMP_WRITE_TO_FD needs version 2 of the write options");
	if (ps_doc_pending(doc))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "an update of this document is pending (pdfstamp_doc_commit)");
	if (w->version >= 3 && (w->flags & PDFSTAMP_WRITE_DEFER) &&
	    !(w->flags & PDFSTAMP_WRITE_IN_PLACE))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "PDFSTAMP_WRITE_DEFER needs in-place mode");
	if (dry && w->version >= 3 && (w->flags & PDFSTAMP_WRITE_DEFER))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "PDFSTAMP_WRITE_DRY_RUN and PDFSTAMP_WRITE_DEFER exclude each other");
	if (!!(w->flags & PDFSTAMP_WRITE_IN_PLACE) + !!(w->flags & PDFSTAMP_WRITE_TO_FD) +
	    !!w->output != 1)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "give exactly one of an output file, an output descriptor and "
		              "in-place mode");
	if (w->flags & PDFSTAMP_WRITE_TO_FD) {
		int rc = dry ? ps_dryrun_to_fd(ctx, w->output_fd, f.fd)
		             : ps_io_check_out_fd(ctx, w->output_fd, f.fd);
		if (rc < 0)
			return rc;
	}
	if (pdfstamp_doc_damaged_tail(doc, NULL, &damaged, NULL, 0))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the document was salvaged (its last %lld bytes cannot be read); "
		              "refusing to append to it", (long long)damaged);
	/* a dry run takes a read-only document (dryrun.c note 3) */
	if ((w->flags & PDFSTAMP_WRITE_IN_PLACE) && !f.locked && !dry)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "in-place updates need a document opened for writing");
	if (up->ds.sec && !up->ds.authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	ps_xref_info(ps_doc_xref(doc), &xi);
	if (xi.trailing > 0 && !(w->flags & PDFSTAMP_WRITE_ALLOW_TRAILING))
		return ps_err_hint(ctx, PDFSTAMP_HINT_ALLOW_TRAILING, PDFSTAMP_E_FORMAT,
		                   "%lld bytes follow the last %%%%EOF; refusing to append "
		                   "after them", (long long)xi.trailing);
	if (!up->ds.sec && up->ds.password_given)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "a password was given, but the file is not encrypted (its newest "
		              "revision may have cut off the encrypted ones); refusing to write in "
		              "clear (give no password for plaintext files)");
	if (up->ds.sec && (idf = ps_sec_identity(up->ds.sec)) != 0 &&
	    !(w->flags & PDFSTAMP_WRITE_ALLOW_IDENTITY))
		return ps_err_hint(ctx, PDFSTAMP_HINT_ALLOW_IDENTITY, PDFSTAMP_E_UNSUPPORTED,
		                   "the file is encrypted, but its %s filter is /Identity: new %s "
		                   "would be written in clear",
		                   (idf & PS_SEC_STRF)
		                       ? ((idf & PS_SEC_STMF) ? "string and stream" : "string")
		                       : "stream",
		                   (idf & PS_SEC_STRF)
		                       ? ((idf & PS_SEC_STMF) ? "strings and streams" : "strings")
		                       : "streams");
	if (up->ds.sec && ps_sec_weak(up->ds.sec, why, sizeof why))
		ps_warn(ctx, "the file uses a weak security handler (%s); `pdfstamp rotate` "
		        "upgrades it to AES-256", why);
	if (dry) { /* what opening the output would meet (dryrun.c note 4) */
		int rc = (w->flags & PDFSTAMP_WRITE_IN_PLACE) ? ps_dryrun_append(ctx, f.path)
		         : w->output ? ps_dryrun_new_file(ctx, w->output) : 0;
		if (rc < 0)
			return rc;
	}
	up->base_len = ps_doc_size(doc);
	/* above every number a section mentions (read without loading the
	 * entries: the bound >= the highest number in use + 1) */
	hi = xi.bound ? xi.bound - 1 : 0;
	if (hi >= PS_MAX_OBJNUM && ps_xref_load_all(doc) == 0) {
		ps_xref_info(ps_doc_xref(doc), &xi);
		hi = xi.max; /* free entries listed up to the limit: the numbers in use decide */
	}
	if (xi.size_key > PS_MAX_OBJNUM || hi >= PS_MAX_OBJNUM)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "no object numbers left for new objects");
	up->next_num = (uint32_t)xi.size_key > hi + 1 ? (uint32_t)xi.size_key : hi + 1;
	up->first_num = up->next_num;
	up->trailer_set = ps_new_dict();
	if (!up->trailer_set)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	up->state = PS_UP_OPEN;
	return 0;
}

/* Adds to up->skip the numbers at or above first_num that O names. */
static void note_refs(ps_update *up, const ps_obj *o, int depth, int *oom)
{
	size_t k;

	if (!o || depth > 256 || *oom)
		return;
	switch (o->kind) {
	case PS_REF:
		if (o->u.ref.num >= up->first_num && o->u.ref.num <= PS_MAX_OBJNUM) {
			if (ps_vec_grow((void **)&up->skip, up->nskip, sizeof *up->skip) < 0) {
				*oom = 1;
				return;
			}
			up->skip[up->nskip++] = o->u.ref.num;
		}
		break;
	case PS_ARRAY:
		for (k = 0; k < o->u.arr.len; k++)
			note_refs(up, o->u.arr.items[k], depth + 1, oom);
		break;
	case PS_DICT:
		for (k = 0; k < o->u.dict.len; k++)
			note_refs(up, o->u.dict.ents[k].val, depth + 1, oom);
		break;
	case PS_STREAM:
		note_refs(up, o->u.stm.dict, depth + 1, oom);
		break;
	default:
		break;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Note 6: the numbers the trailer (carried over by build_trailer) and
 * every object read so far (the catalog, the policy's objects, the page
 * tree down to the page) name above every number in use: references to
 * missing objects, which a new object under that number would capture
 * (a dangling /Perms /DocMDP would certify the file, a dangling /Info
 * show the stamp's strings). */
static int make_skip(ps_update *up)
{
	ps_doc *doc = up->doc;
	size_t i, pos = 0, n = 0;
	const ps_obj *o;
	uint32_t num;
	int oom = 0;

	up->skip_ready = 1;
	note_refs(up, ps_xref_trailer(ps_doc_xref(doc)), 0, &oom);
	while (!oom && ps_doc_cached_next(doc, &pos, &num, &o))
		note_refs(up, o, 0, &oom);
	if (oom)
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
	if (up->nskip)
		qsort(up->skip, up->nskip, sizeof *up->skip, cmp_u32);
	for (i = 0; i < up->nskip; i++)
		if (n == 0 || up->skip[n - 1] != up->skip[i])
			up->skip[n++] = up->skip[i];
	up->nskip = n;
	return 0;
}

static int skipped(const ps_update *up, uint32_t num)
{
	return up->nskip && bsearch(&num, up->skip, up->nskip, sizeof *up->skip, cmp_u32) != NULL;
}

uint32_t ps_update_alloc(ps_update *up)
{
	if (!up->skip_ready && make_skip(up) < 0)
		return 0;
	while (up->next_num <= PS_MAX_OBJNUM && skipped(up, up->next_num))
		up->next_num++;
	if (up->next_num > PS_MAX_OBJNUM) {
		ps_err(ps_doc_ctx(up->doc), PDFSTAMP_E_UNSUPPORTED,
		       "no object numbers left for new objects");
		return 0;
	}
	return up->next_num++;
}

/* The first number O names that this update handed out (0 if none): a
 * reference to a missing object that one of its new objects captured. */
static uint32_t captured(const ps_update *up, const ps_obj *o, int depth)
{
	uint32_t n = 0;
	size_t k;

	if (!o || depth > 256)
		return 0;
	switch (o->kind) {
	case PS_REF:
		if (o->u.ref.num >= up->first_num && o->u.ref.num < up->next_num &&
		    !skipped(up, o->u.ref.num))
			return o->u.ref.num;
		break;
	case PS_ARRAY:
		for (k = 0; k < o->u.arr.len && !n; k++)
			n = captured(up, o->u.arr.items[k], depth + 1);
		break;
	case PS_DICT:
		for (k = 0; k < o->u.dict.len && !n; k++)
			n = captured(up, o->u.dict.ents[k].val, depth + 1);
		break;
	case PS_STREAM:
		n = captured(up, o->u.stm.dict, depth + 1);
		break;
	default:
		break;
	}
	return n;
}

/* Note 6, the second line of defence: every object of the file read
 * during the update (all of them are in the document's cache) still names
 * none of the numbers it handed out.  One that does was read after the
 * first ps_update_alloc, against the callers' rule: refused, nothing is
 * written. */
static int check_no_capture(ps_update *up)
{
	ps_doc *doc = up->doc;
	const ps_obj *o;
	uint32_t num, n;
	size_t pos = 0;

	if (!up->skip_ready || up->next_num == up->first_num)
		return 0;
	while (ps_doc_cached_next(doc, &pos, &num, &o)) {
		if ((n = captured(up, o, 0)) != 0)
			return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_INTERNAL,
			              "object %u of the file names object %u, a number this update "
			              "gave to one of its new objects (it was read after the first "
			              "number was handed out); nothing written", num, n);
	}
	return 0;
}

/* Is NUM an object of the file (type 1 or 2 in the merged index)?  Its
 * entry was read when the caller looked the object up. */
static int is_in_use(ps_doc *doc, uint32_t num)
{
	const ps_xent *e = NULL;

	return ps_xref_find(doc, num, &e) == 0 && e != NULL;
}

int ps_update_put(ps_update *up, uint32_t num, uint16_t gen, ps_obj *obj)
{
	size_t i;

	if (up->state != PS_UP_OPEN || !obj || num == 0) {
		ps_obj_free(obj);
		return ps_err(ps_doc_ctx(up->doc), obj ? PDFSTAMP_E_INTERNAL : PDFSTAMP_E_NOMEM,
		              obj ? "bad update state" : "out of memory");
	}
	if (up->ds.encrypt_num && num == up->ds.encrypt_num) {
		/* The page tree, /Annots, /Root or /Info of a damaged file names the
		 * encryption dictionary, which is never encrypted and must not be
		 * replaced (found by fuzz_incr). */
		ps_obj_free(obj);
		return ps_err(ps_doc_ctx(up->doc), PDFSTAMP_E_FORMAT,
		              "object %u, which this update would have to replace, is the /Encrypt "
		              "dictionary: the file is damaged", num);
	}
	if (num >= up->next_num || (num < up->first_num && !is_in_use(up->doc, num)) ||
	    (num >= up->first_num && skipped(up, num))) {
		/* A new version of an object the file does not have would name a
		 * number this update did not allocate: above /Size, or one of its
		 * own new objects (7.3.10, 7.5.6; the callers resolve a reference
		 * to a missing object to null first). */
		ps_obj_free(obj);
		return ps_err(ps_doc_ctx(up->doc), PDFSTAMP_E_INTERNAL,
		              "object %u is neither an object of the file nor a new one of "
		              "this update", num);
	}
	for (i = 0; i < up->nobjs; i++) {
		if (up->objs[i].num == num) {
			/* Callers edit a pending object in place; a second put means one
			 * object plays two roles in a damaged file (meta on a file whose
			 * /Info is its /Root: replacing would free what the first
			 * role's caller still uses; found by replaying fuzz corpora). */
			ps_obj_free(obj);
			return ps_err(ps_doc_ctx(up->doc), PDFSTAMP_E_FORMAT,
			              "object %u would be replaced twice by this update: "
			              "the file uses it for two different things (e.g. as both "
			              "/Root and /Info)", num);
		}
	}
	if (up->nobjs == up->cap) {
		size_t ncap = up->cap ? up->cap * 2 : 8;
		ps_newobj *n = realloc(up->objs, ncap * sizeof *n);
		if (!n) {
			ps_obj_free(obj);
			return ps_err(ps_doc_ctx(up->doc), PDFSTAMP_E_NOMEM, "out of memory");
		}
		up->objs = n;
		up->cap = ncap;
	}
	up->objs[up->nobjs].num = num;
	up->objs[up->nobjs].gen = gen;
	up->objs[up->nobjs].obj = obj;
	up->nobjs++;
	return 0;
}

int ps_update_set_trailer(ps_update *up, const char *key, ps_obj *val)
{
	int rc = ps_dict_put(up->trailer_set, key, val);

	return rc < 0 ? ps_err(ps_doc_ctx(up->doc), rc, "out of memory") : 0;
}

void ps_update_free(ps_update *up)
{
	size_t i;

	if (!up)
		return;
	for (i = 0; i < up->nobjs; i++)
		ps_obj_free(up->objs[i].obj);
	free(up->objs);
	free(up->skip);
	ps_obj_free(up->trailer_set);
	memset(up, 0, sizeof *up);
}

/* ---- serialisation ---------------------------------------------------------------- */

/* Appends "num gen obj ... endobj" for one new object. */
static int emit_object(ps_update *up, const ps_newobj *no, ps_buf *out)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_buf data = PS_BUF_INIT;
	ps_obj *copy = ps_obj_copy(no->obj);
	int rc = 0;

	if (!copy)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	/* strings and stream data under the document's handler (sec.c) */
	if ((rc = ps_sec_convert_strings(ctx, NULL, up->ds.sec, no->num, no->gen, copy, NULL)) < 0)
		goto out;
	ps_buf_printf(out, "%u %u obj\n", no->num, no->gen);
	if (copy->kind == PS_STREAM) {
		if (ps_sec_stream_encrypted(up->ds.sec, copy)) {
			if ((rc = ps_sec_encrypt(ctx, up->ds.sec, no->num, no->gen,
			                         copy->u.stm.data, copy->u.stm.len, &data)) < 0)
				goto out;
		} else {
			ps_buf_append(&data, copy->u.stm.data, copy->u.stm.len);
		}
		if ((rc = ps_dict_put(copy->u.stm.dict, "Length",
		                      ps_new_int((int64_t)data.len))) < 0) {
			rc = ps_err(ctx, rc, "out of memory");
			goto out;
		}
		ps_serialize(out, copy);
		ps_buf_puts(out, "\nstream\r\n");
		ps_buf_append(out, data.data, data.len);
		ps_buf_puts(out, "\nendstream\nendobj\n");
	} else {
		ps_serialize(out, copy);
		ps_buf_puts(out, "\nendobj\n");
	}
	if (out->oom || data.oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_buf_free(&data);
	ps_obj_free(copy);
	return rc;
}

static int cmp_newobj(const void *a, const void *b)
{
	const ps_newobj *x = a, *y = b;

	return x->num < y->num ? -1 : x->num > y->num;
}

/* The new trailer: every key of the newest one but the section-specific
 * ones, then /Prev, /Size, /ID and what the caller set (ISO 32000-2 7.5.6,
 * 7.5.5 Table 15). */
static int build_trailer(ps_update *up, uint32_t size, int for_stream, ps_obj **out)
{
	static const char *const drop[] = {"Prev", "XRefStm", "DocChecksum", "Type", "W", "Index",
	                                   "Filter", "DecodeParms", "Length", "Size", "ID"};
	ps_doc *doc = up->doc;
	ps_ctx *ctx = ps_doc_ctx(doc);
	const ps_xref *x = ps_doc_xref(doc);
	const ps_obj *old_id, *id0;
	ps_obj *t = ps_obj_copy(ps_xref_trailer(x)), *id;
	struct ps_xref_info xi;
	uint8_t rnd[16];
	size_t k;
	int rc = 0;

	if (!t)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (k = 0; k < sizeof drop / sizeof drop[0]; k++)
		ps_dict_del(t, drop[k]);
	if ((rc = ps_random(ctx, rnd, sizeof rnd)) < 0)
		goto fail;
	old_id = ps_dict_get(ps_xref_trailer(x), "ID");
	id0 = ps_array_get(old_id, 0);
	id = ps_new_array();
	if (!id)
		goto oom;
	if (id0 && id0->kind == PS_STR) {
		rc = ps_array_push(id, ps_obj_copy(id0));
	} else {
		/* No usable /ID: both halves new (required when /Encrypt is present). */
		rc = ps_array_push(id, ps_new_str(rnd, sizeof rnd));
		if (rc == 0 && (rc = ps_random(ctx, rnd, sizeof rnd)) < 0) {
			ps_obj_free(id);
			goto fail;
		}
	}
	if (rc == 0)
		rc = ps_array_push(id, ps_new_str(rnd, sizeof rnd));
	if (rc < 0) {
		ps_obj_free(id);
		goto oom;
	}
	ps_array_get(id, 0)->u.str.hex = 1;
	ps_array_get(id, 1)->u.str.hex = 1;
	if ((rc = ps_dict_put(t, "ID", id)) < 0) /* owns id from here, also on failure */
		goto oom;
	if (for_stream && (rc = ps_dict_put(t, "Type", ps_new_name("XRef"))) < 0)
		goto oom;
	ps_xref_info(x, &xi);
	if ((rc = ps_dict_put(t, "Size", ps_new_int(size))) < 0 ||
	    (rc = ps_dict_put(t, "Prev", ps_new_int(xi.startxref))) < 0)
		goto oom;
	for (k = 0; k < up->trailer_set->u.dict.len; k++) {
		ps_dict_ent *e = &up->trailer_set->u.dict.ents[k];
		if ((rc = ps_dict_put(t, e->key, ps_obj_copy(e->val))) < 0)
			goto oom;
	}
	*out = t;
	return 0;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
fail:
	ps_obj_free(t);
	return rc;
}

/* Serialises the new objects and, after them, the section (xrefw.c) into
 * OUT, whose first byte lands at up->base_len; *XREF_OFF receives the
 * section's offset. */
static int build_section(ps_update *up, int lead_eol, ps_buf *out, int64_t *xref_off)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = ps_doc_ctx(doc);
	const ps_xref *x = ps_doc_xref(doc);
	int nsec, stream_form = ps_xref_sections(x, &nsec)[0].kind == PDFSTAMP_XREF_STREAM;
	struct ps_xref_info xi;
	ps_xrefw_ent *ents = NULL;
	ps_xrefw_array arr;
	ps_xrefw_src src;
	ps_obj *trailer = NULL;
	uint32_t size, xnum = 0;
	size_t i, n;
	int rc = 0;

	if (up->nobjs == 0)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "an update with no objects");
	qsort(up->objs, up->nobjs, sizeof *up->objs, cmp_newobj);
	if (stream_form && (xnum = ps_update_alloc(up)) == 0)
		return ctx->errcode;
	ents = calloc(up->nobjs + 1, sizeof *ents);
	if (!ents)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (lead_eol)
		ps_buf_putc(out, '\n');
	for (i = 0; i < up->nobjs; i++) {
		ents[i].num = up->objs[i].num;
		ents[i].type = 1;
		ents[i].f2 = (uint64_t)(up->base_len + (int64_t)out->len);
		ents[i].f3 = up->objs[i].gen;
		if ((rc = emit_object(up, &up->objs[i], out)) < 0)
			goto out;
	}
	ps_xref_info(x, &xi);
	size = up->next_num > (uint32_t)xi.size_key ? up->next_num : (uint32_t)xi.size_key;
	*xref_off = up->base_len + (int64_t)out->len;
	n = up->nobjs;
	if (stream_form) {
		/* The xref stream lists itself too (ISO 32000-2 7.5.8); xnum is
		 * the highest number, so it extends or follows the list. */
		ents[n].num = xnum;
		ents[n].type = 1;
		ents[n].f2 = (uint64_t)*xref_off;
		n++;
	}
	if ((rc = build_trailer(up, size, stream_form, &trailer)) < 0)
		goto out;
	ps_xrefw_src_array(&src, &arr, ents, n);
	rc = ps_xrefw_write(ctx, &src, trailer, stream_form, xnum, *xref_off, out);
out:
	ps_obj_free(trailer);
	free(ents);
	return rc;
}

/* ---- verification (invariant 5) --------------------------------------------- */

static int verify_output(ps_update *up, const char *path, int64_t xref_off)
{
	ps_ctx *ctx = ps_doc_ctx(up->doc);
	ps_doc *v = NULL;
	ps_buf data = PS_BUF_INIT;
	const ps_obj *id0, *vt, *t = ps_xref_trailer(ps_doc_xref(up->doc));
	struct ps_xref_info vi, xi;
	size_t i;
	int rc, nsec;

	data.secret = 1;
	/* Only the new section is read back; the security state is the
	 * original's (checked below: its /Encrypt is referenced unchanged). */
	if ((rc = ps_doc_open(ctx, &v, path, PS_OPEN_NO_RECOVER | PS_OPEN_NEWEST_ONLY)) < 0)
		goto out;
	ps_xref_info(ps_doc_xref(v), &vi);
	ps_xref_info(ps_doc_xref(up->doc), &xi);
	if (vi.startxref != xref_off ||
	    ps_xref_sections(ps_doc_xref(v), &nsec)[0].prev != xi.startxref) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
		            "self-check: the new revision is not the file's newest");
		goto out;
	}
	/* The security state may be carried over only because the new trailer
	 * references the same /Encrypt (and keeps ID[0], which R2-4 keys
	 * depend on and readers compare), and ps_update_put never replaces
	 * the /Encrypt object: this stands in for re-running the password,
	 * which the library does not keep. */
	id0 = ps_array_get(ps_dict_get(t, "ID"), 0);
	if (id0 && id0->kind != PS_STR)
		id0 = NULL; /* unusable: the writer made a new /ID (build_trailer) */
	vt = ps_xref_trailer(ps_doc_xref(v));
	if (!ps_obj_equal(ps_dict_get(vt, "Encrypt"), ps_dict_get(t, "Encrypt"), 0) ||
	    (id0 && !ps_obj_equal(ps_array_get(ps_dict_get(vt, "ID"), 0), id0, 0))) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
		            "self-check: the new trailer changes /Encrypt or ID[0]");
		goto out;
	}
	/* the original's handler, its key schedules borrowed */
	if ((rc = ps_doc_share_security(v, up->doc)) < 0)
		goto out;
	for (i = 0; i < up->nobjs; i++) {
		ps_newobj *no = &up->objs[i];
		ps_obj *got = NULL;
		if ((rc = ps_doc_lookup(v, no->num, &got)) < 0)
			goto out;
		if (!ps_obj_equal(no->obj, got, 0)) {
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
			            "self-check: object %u does not read back as written", no->num);
			goto out;
		}
		if (no->obj->kind == PS_STREAM) {
			if ((rc = ps_doc_stream_data(v, no->num, got, 0, &data)) < 0)
				goto out;
			if (data.len != no->obj->u.stm.len ||
			    memcmp(data.data, no->obj->u.stm.data, data.len) != 0) {
				rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
				            "self-check: stream %u does not decrypt to what "
				            "was written", no->num);
				goto out;
			}
		}
	}
out:
	if (rc < 0 && ctx->errcode != PDFSTAMP_E_INTERNAL)
		rc = ps_err_wrap(ctx, PDFSTAMP_E_INTERNAL, "self-check of the output failed");
	ps_buf_free(&data);
	pdfstamp_doc_close(v);
	return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

static int last_byte_is_eol(ps_doc *doc, int *yes)
{
	ps_buf b = PS_BUF_INIT;
	int rc = ps_doc_pread(doc, ps_doc_size(doc) - 1, 1, &b);

	*yes = rc == 0 && b.len == 1 && (b.data[0] == '\n' || b.data[0] == '\r');
	ps_buf_free(&b);
	return rc;
}

/* OUTPUT is a path, or NULL to copy the checked file to OUT_FD. */
static int commit_to_new_file(ps_update *up, const char *output, int out_fd, const ps_buf *sec,
                              int64_t xref_off)
{
	ps_ctx *ctx = ps_doc_ctx(up->doc);
	struct ps_doc_file f;
	ps_outfile of;
	struct stat st;
	int rc;

	ps_doc_file(up->doc, &f);
	if ((rc = output ? ps_outfile_open(ctx, &of, output) : ps_outfile_open_fd(ctx, &of)) < 0)
		return rc;
	if (fstat(f.fd, &st) < 0 || (int64_t)st.st_size != up->base_len) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "the input changed size since it was opened");
		goto out;
	}
	if ((rc = ps_io_copy_prefix(ctx, f.fd, of.fd, up->base_len)) < 0 ||
	    (rc = ps_io_write_all(ctx, of.fd, sec->data, sec->len, up->base_len, "the output")) < 0)
		goto out;
	ps_fault("after-write");
	if ((rc = verify_output(up, ps_outfile_path(&of), xref_off)) < 0)
		goto out;
	if (fstat(of.fd, &st) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot stat the output: %s", strerror(errno));
		goto out;
	}
	rc = output ? ps_outfile_commit(ctx, &of, f.mode, 0)
	            : ps_outfile_copy_out(ctx, &of, out_fd);
	/* the inode now under OUTPUT (doc.c note 9: a second update opens it) */
	if (rc == 0 && output)
		ps_doc_set_written(up->doc, st.st_dev, st.st_ino);
out:
	ps_outfile_free(&of);
	return rc;
}

/* In place, the first phase: the journal of SEC written, synced and linked
 * (its name not yet durable).  On failure nothing is left. */
static int in_place_prepare(ps_update *up, const ps_buf *sec, ps_journal *j)
{
	ps_ctx *ctx = ps_doc_ctx(up->doc);
	struct ps_doc_file f;
	struct stat st;
	int rc;

	ps_doc_file(up->doc, &f);
	if (fstat(f.fd, &st) < 0 || (int64_t)st.st_size != up->base_len)
		return ps_err(ctx, PDFSTAMP_E_IO, "the file changed size since it was opened");
	if ((rc = ps_journal_begin(ctx, j, f.path)) < 0)
		return rc;
	/* The journal records the section (length, hash and, up to 64 MiB,
	 * the bytes) before a byte of it reaches the file: recovery keeps
	 * exactly this update, whole, or finds the file untouched, or cuts a
	 * torn one back (journal.c). */
	if ((rc = ps_journal_write(ctx, j, f.fd, &st, up->base_len, sec)) < 0)
		ps_journal_end(j);
	return rc;
}

/* In place, the second phase: the journal's name made durable (a
 * directory sync a group shares), the update written and synced, checked,
 * recorded by the caller's hook, the journal removed; any failure before
 * the end of the hook undoes it.  Ends J. */
static int in_place_finish(ps_update *up, const ps_buf *sec, int64_t xref_off, ps_journal *j,
                           const struct pdfstamp_write_opts *w,
                           const struct pdfstamp_result *res)
{
	ps_ctx *ctx = ps_doc_ctx(up->doc);
	struct ps_doc_file f;
	int rc;

	ps_doc_file(up->doc, &f);
	if ((rc = ps_journal_durable(ctx, j)) < 0)
		goto rollback;
	ps_fault("after-journal");
	if ((rc = ps_io_write_all(ctx, f.fd, sec->data, sec->len, up->base_len, "the update")) < 0)
		goto rollback;
	ps_fault("after-write");
	if ((rc = ps_io_sync_fd(ctx, f.fd, "the file")) < 0)
		goto rollback;
	/* Durable: from here a crash keeps the update (journal.c); only a
	 * failed check or hook below still undoes it, in this process. */
	ps_fault("after-fsync");
	if ((rc = verify_output(up, f.path, xref_off)) < 0)
		goto rollback;
	/* The caller's record of the update, while the journal still guards
	 * it (pdfstamp.h, write options version 3). */
	if (w->version >= 3 && w->durable && w->durable(w->durable_ud, f.path, res) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO,
		            "the update was undone: its record could not be made");
		goto rollback;
	}
	/* A journal that cannot be removed is removed by the next recovery,
	 * which keeps the same whole update: the update stands. */
	if (ps_journal_remove(ctx, j) < 0)
		ps_warn(ctx, "%s; the update is complete and synced, and the next in-place update "
		        "or 'pdfstamp recover' removes the journal", ctx->errmsg);
	rc = 0;
	goto out;
rollback:
	rc = ps_journal_rollback(ctx, j, f.fd, up->base_len);
out:
	ps_journal_end(j);
	return rc;
}

/* An in-place update between its phases (PDFSTAMP_WRITE_DEFER): built and
 * journaled, not written; its document owns it until pdfstamp_doc_commit
 * or close. */
struct pending {
	ps_update up;
	ps_buf sec;
	int64_t xref_off;
	ps_journal j;
	int journaled;          /* J written, synced and linked */
	struct pdfstamp_write_opts w;
	struct pdfstamp_result *res;
};

static void pending_free(struct pending *p)
{
	ps_update_free(&p->up);
	ps_buf_free(&p->sec);
	free(p);
}

/* Closing a document with its update pending: the update is dropped. */
static void pending_drop(void *v)
{
	struct pending *p = v;
	ps_ctx *ctx = ps_doc_ctx(p->up.doc);
	struct ps_doc_file f;
	char msg[sizeof ctx->errmsg];
	int code = ctx->errcode;

	if (p->journaled) {
		ps_doc_file(p->up.doc, &f);
		memcpy(msg, ctx->errmsg, sizeof msg); /* the caller's last message stays */
		ps_journal_rollback(ctx, &p->j, f.fd, p->up.base_len);
		memcpy(ctx->errmsg, msg, sizeof msg);
		ctx->errcode = code;
		ps_journal_end(&p->j);
	}
	pending_free(p);
}

int pdfstamp_doc_journal(pdfstamp_doc *doc)
{
	struct pending *p;
	int rc;

	if (!doc || !(p = ps_doc_pending(doc)) || p->journaled)
		return 0;
	if ((rc = in_place_prepare(&p->up, &p->sec, &p->j)) < 0) {
		ps_doc_set_pending(doc, NULL, NULL); /* nothing was written */
		pending_free(p);
		return rc;
	}
	p->journaled = 1;
	return 0;
}

int pdfstamp_doc_commit(pdfstamp_doc *doc)
{
	struct pending *p;
	int rc;

	if (!doc || !ps_doc_pending(doc))
		return 0;
	if ((rc = pdfstamp_doc_journal(doc)) < 0)
		return rc;
	p = ps_doc_pending(doc);
	ps_doc_set_pending(doc, NULL, NULL);
	rc = in_place_finish(&p->up, &p->sec, p->xref_off, &p->j, &p->w, p->res);
	pending_free(p);
	return rc;
}

void pdfstamp_result_clear(struct pdfstamp_result *res)
{
	unsigned version;

	if (!res)
		return;
	version = res->version;
	free(res->objects);
	/* a version-1 struct ends before weak, a version-2 one before skipped */
	memset(res, 0, version >= 3 ? sizeof *res :
	               version == 2 ? offsetof(struct pdfstamp_result, skipped) :
	               offsetof(struct pdfstamp_result, weak));
	res->version = version;
}

int ps_result_begin(ps_ctx *ctx, struct pdfstamp_result *res)
{
	if (res && (res->version < 1 || res->version > PDFSTAMP_RESULT_VERSION))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "pdfstamp_result of an unknown version (use PDFSTAMP_RESULT_INIT)");
	pdfstamp_result_clear(res);
	return 0;
}

void ps_result_unchanged(ps_doc *doc, struct pdfstamp_result *res)
{
	struct ps_xref_info xi;
	struct ps_doc_security ds;

	if (!res)
		return;
	ps_xref_info(ps_doc_xref(doc), &xi);
	ps_doc_security(doc, &ds);
	res->base_length = ps_doc_size(doc);
	res->xref_offset = xi.startxref;
	if (res->version >= 2)
		ps_sec_weak(ds.sec, res->weak, sizeof res->weak);
}

int ps_result_add_object(ps_ctx *ctx, struct pdfstamp_result *res, uint32_t num)
{
	if (!res)
		return 0;
	if (ps_vec_grow((void **)&res->objects, (size_t)res->nobjects, sizeof *res->objects) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	res->objects[res->nobjects++] = num;
	return 0;
}

int ps_update_commit(ps_update *up, const struct pdfstamp_write_opts *w,
                     struct pdfstamp_result *res)
{
	ps_doc *doc = up->doc;
	ps_buf sec = PS_BUF_INIT;
	int64_t xref_off = 0;
	int eol, rc;

	if (up->state != PS_UP_OPEN)
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_INTERNAL, "bad update state");
	up->state = PS_UP_FAILED;
	if ((rc = check_no_capture(up)) < 0 || (rc = last_byte_is_eol(doc, &eol)) < 0 ||
	    (rc = build_section(up, !eol, &sec, &xref_off)) < 0)
		goto out;
	if (up->seal && !(w->flags & PDFSTAMP_WRITE_DRY_RUN)) {
		size_t len = sec.len;
		if ((rc = up->seal(up->seal_ud, up, &sec)) < 0)
			goto out;
		if (sec.len != len) {
			rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_INTERNAL,
			            "a seal changed a length");
			goto out;
		}
	}
	if (res) { /* before the commit: its durable hook sees them */
		res->base_length = up->base_len;
		res->xref_offset = xref_off;
		res->bytes_appended = (int64_t)sec.len;
		if (res->version >= 2)
			ps_sec_weak(up->ds.sec, res->weak, sizeof res->weak);
	}
	if (w->flags & PDFSTAMP_WRITE_DRY_RUN) {
		/* built, encrypted and measured; nothing opened or written (note 7) */
		rc = 0;
	} else if ((w->flags & PDFSTAMP_WRITE_IN_PLACE) && w->version >= 3 &&
	           (w->flags & PDFSTAMP_WRITE_DEFER)) {
		struct pending *p = calloc(1, sizeof *p);

		if (!p) {
			rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		/* the update moves to the document, nothing written yet */
		up->state = PS_UP_DONE;
		p->up = *up;
		memset(up, 0, sizeof *up);
		p->sec = sec;
		p->xref_off = xref_off;
		p->w = *w;
		p->res = res;
		ps_doc_set_pending(doc, p, pending_drop);
		return 0;
	} else if (w->flags & PDFSTAMP_WRITE_IN_PLACE) {
		ps_journal j;

		if ((rc = in_place_prepare(up, &sec, &j)) == 0)
			rc = in_place_finish(up, &sec, xref_off, &j, w, res);
	} else
		rc = commit_to_new_file(up, w->output,
		                        (w->flags & PDFSTAMP_WRITE_TO_FD) ? w->output_fd : -1, &sec,
		                        xref_off);
	if (rc < 0)
		goto out;
	up->state = PS_UP_DONE;
out:
	ps_buf_free(&sec);
	return rc;
}
