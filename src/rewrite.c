/*
 * rewrite.c - full rewrite: key rotation (`rotate`) and encryption of a
 * plaintext file (`encrypt`).  Whole-file verification is verify.c; the
 * signature policy checked first is policy.c (ps_policy_rewrite).
 *
 * DESIGN NOTES
 *
 * Why a rewrite: an incremental update that swaps /Encrypt leaves the old
 * /UE and /OE in the file, and they still unwrap the same key with the old
 * password (Algorithm 2.A steps e-f, ISO 32000-2 7.6.4.3.3).  Rotation therefore draws a new random file
 * key and re-encrypts every string and stream: one clean revision.
 *
 * Pipeline (one pass over the file, memory bounded by the window):
 *
 *   reader (this thread)      workers (-j N)            writer (this thread)
 *   parse object, read raw -> decrypt old / encrypt  -> write in object order,
 *   stream bytes, in batches  new, serialise           record offsets
 *
 *  1. Objects are parsed with ps_doc_parse_at (owned, never cached), so
 *     memory does not grow with the object count; at most WINDOW batches
 *     are in flight.
 *  2. Stream data is not inflated: its raw bytes are decrypted with the old
 *     key and encrypted with the new one.  Object streams are re-encrypted
 *     as a whole and their members keep their (stream, index) entries; the
 *     output then has an xref stream, else a classic table.  Either lists
 *     only the numbers in use (subsections, /Index ranges), from offsets
 *     kept per object written (rw->offs): neither the memory nor the
 *     output follows the highest object number (issue 11).
 *  3. Never encrypted (old or new): the /Encrypt dictionary (rewritten from
 *     scratch), xref streams (dropped: a new xref is written), signature
 *     /Contents, Identity crypt filters, metadata with EncryptMetadata
 *     false.  Dropped, decided by object number before anything is read:
 *     the old /Encrypt object, the chain's own xref streams (the sections'
 *     streams and hybrid /XRefStm streams: ps_doc_is_xref_stream) and the
 *     linearization dictionary (its offsets would be wrong; only the real
 *     one: find_linearization).  Never by content: an ordinary stream that
 *     says /Type /XRef, or a catalog with a /Linearized key, is content
 *     like any other and is kept (and encrypted) -- issue 11.
 *     The output's xref is a stream when members of object streams are
 *     carried over or an offset passes 9,999,999,999 bytes (the ten digits
 *     of a classic entry: ps_xrefw_form), else a classic table; xrefw.c
 *     writes either.
 *  4. Each worker has its own context (DRBG and IV pool); the old and the
 *     new security handler (sec.c: the only user of the AES engine, and of
 *     the key schedules it builds once) are only read by the workers.
 *     Strings go through sec.c's one walker, stream bytes through its
 *     batch interface (prepare, then one multi-lane run per batch).
 *  5. Crash safety: the output is an unnamed temp file in the target's
 *     directory (io.c), holding only ciphertext; it is verified before it
 *     is fsynced and renamed over the target (the self-check, rwcheck.c:
 *     re-opened with the new owner password, every object decrypted, one
 *     section, its live object numbers exactly the input's less what note
 *     3 drops plus the new /Encrypt and xref stream, /Root a dictionary and
 *     the page tree walked, each node once, to the input's page count).
 *     Any failure leaves the target as it was and no temp file behind.
 *     In place (-i), the target is the file a symbolic link leads to (the
 *     link stays) and keeps its owner and group where permitted; a file
 *     with other hard links is refused, since a rename would leave the
 *     other names with the old key (io.c ps_outfile_open_inplace).
 *     To a descriptor (PDFSTAMP_WRITE_TO_FD, `-o -`): the same temp file,
 *     in $TMPDIR, never named; verified the same way, then copied out.
 *  6. New /U /UE /O /OE /Perms come from Algorithms 8, 9 and 10
 *     (ps_sec_new_r6, which also writes the /Encrypt dictionary:
 *     ps_sec_write_dict); R5 inputs come out as R6.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ps.h"
#include "xrefw.h"
#include "policy.h"

#define BATCH_OBJECTS 256
#define BATCH_BYTES ((size_t)8 << 20)
#define WBUF_SIZE ((size_t)4 << 20)
#define WBUF_DIRECT ((size_t)256 << 10)

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- jobs and batches ----------------------------------------------------------- */

struct rw_job {
	uint32_t num;
	uint16_t gen;
	ps_obj *obj;           /* owned; strings as in the file unless plain_strings */
	int plain_strings;     /* strings already decrypted (object came from an object stream) */
	int extensions;        /* the catalog: add the ADBE extension level 8 */
	ps_buf raw;            /* stream bytes as in the file */
	ps_buf data;           /* stream bytes for the output when they cannot be transformed in raw */
	ps_buf *payload;       /* &raw or &data: the stream bytes to write, NULL for non-streams */
	int plaintext;         /* payload holds plaintext waiting for the batch encryption */
	int encrypt;           /* data waits for the batch's multi-lane encryption */
	ps_sec_job job;
	ps_buf out;            /* serialised result */
};

struct rw_batch {
	struct rw_job *jobs;
	size_t n;
	int state;             /* 0 queued, 1 taken, 2 done */
	int rc;
	char err[256];
};

/* Where the output has object NUM (generation GEN). */
struct rw_off {
	uint32_t num;
	uint16_t gen;
	int64_t off;
};

struct rw {
	ps_doc *doc;
	ps_ctx *ctx;
	ps_sec *nsec;                  /* the new handler (its own key schedules) */
	struct rw_off *offs;           /* objects written, ascending by number (the write order) */
	size_t noffs, capoffs;
	uint32_t *dropped;             /* sorted: xref streams and the linearization dictionary */
	size_t ndropped;
	/* pool */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct rw_batch **win;         /* ring of batches in flight, in file order */
	size_t wcap, whead, wcount;
	int stop;
	int nthreads;
	pthread_t *threads;
	/* stats, under mu */
	int64_t streams, strings, payload;
	double dec_seconds, enc_seconds;
	/* writer */
	ps_outfile of;
	int64_t woff;
	ps_buf wbuf;
};

static int add_extensions(ps_ctx *wctx, ps_obj *cat)
{
	ps_obj *ext = ps_dict_get(cat, "Extensions"), *adbe = ps_new_dict();

	if (!adbe || ps_dict_put(adbe, "BaseVersion", ps_new_name("1.7")) < 0 ||
	    ps_dict_put(adbe, "ExtensionLevel", ps_new_int(8)) < 0) {
		ps_obj_free(adbe);
		return ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	if (!ext || ext->kind != PS_DICT) {
		ext = ps_new_dict();
		if (!ext || ps_dict_put(cat, "Extensions", ext) < 0) {
			ps_obj_free(adbe);
			return ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
	}
	return ps_dict_put(ext, "ADBE", adbe) < 0 ? ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}

/* The worker's part, phase 1: strings from the old key to the new one;
 * stream bytes decrypted (pipelined) and laid out as AESV3 plaintext for
 * the batch's multi-lane encryption. */
static int prepare(struct rw *rw, ps_ctx *wctx, struct rw_job *j)
{
	ps_doc *doc = rw->doc;
	ps_buf plain = PS_BUF_INIT;
	const ps_buf *src = &j->raw;
	double aes = 0;
	int64_t payload = 0, nstrings = 0;
	int rc = 0;

	plain.secret = j->data.secret = 1;
	if (j->extensions && (rc = add_extensions(wctx, j->obj)) < 0)
		goto out;
	/* strings: old handler to new (design note 3 for the exemptions) */
	if ((rc = ps_sec_convert_strings(wctx, j->plain_strings ? NULL : doc->sec, rw->nsec, j->num, j->gen, j->obj,
	                                 &nstrings)) < 0)
		goto out;
	if (j->obj->kind == PS_STREAM) {
		int was = ps_sec_stream_encrypted(doc->sec, j->obj);
		/* in place needs IV + at least one block (an AESV2 IV alone reads
		 * as empty data: the decrypt path takes it) */
		int in_place = was && j->raw.len >= 32 && ps_sec_reencrypt_in_place(doc->sec, rw->nsec, j->obj);
		payload = (int64_t)j->raw.len;
		j->payload = &j->raw;
		if (was && !in_place) {
			double t0 = now_seconds();
			rc = ps_sec_decrypt_stream(wctx, doc->sec, j->obj, j->num, j->gen, src->data, src->len,
			                           &plain);
			aes = now_seconds() - t0;
			if (rc < 0)
				goto out;
			src = &plain;
		}
		/* decrypted with the input's own crypt filter, if it names one:
		 * the output defines only its /StmF (7.4.10) */
		if ((rc = ps_sec_drop_crypt_filter(wctx, j->obj)) < 0)
			goto out;
		j->encrypt = ps_sec_stream_encrypted(rw->nsec, j->obj);
		if (in_place && !j->encrypt) {
			rc = ps_err(wctx, PDFSTAMP_E_INTERNAL, "a stream encrypted in the input would be written in clear");
			goto out;
		}
		if (in_place) {
			/* the common case: old ciphertext to new, in place */
			double t0 = now_seconds();
			rc = ps_sec_reencrypt_prepare(wctx, doc->sec, rw->nsec, j->num, j->gen, j->raw.data, j->raw.len,
			                              &j->job);
			aes = now_seconds() - t0;
			if (rc < 0)
				goto out;
		} else {
			j->payload = &j->data;
			if (j->encrypt) {
				size_t elen = ps_sec_encrypted_len(rw->nsec, src->len);
				if (ps_buf_reserve(&j->data, elen) < 0) {
					rc = ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
					goto out;
				}
				if ((rc = ps_sec_encrypt_prepare(wctx, rw->nsec, j->num, j->gen, src->data, src->len,
				                                 j->data.data, &j->job)) < 0)
					goto out;
				j->data.len = elen;
			} else {
				ps_buf_append(&j->data, src->data, src->len);
			}
		}
		j->plaintext = j->encrypt;
		if (j->payload->oom ||
		    ps_dict_put(j->obj->u.stm.dict, "Length", ps_new_int((int64_t)j->payload->len)) < 0) {
			rc = ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		pthread_mutex_lock(&rw->mu);
		rw->payload += payload;
		rw->streams++;
		rw->dec_seconds += aes;
		pthread_mutex_unlock(&rw->mu);
	}
	pthread_mutex_lock(&rw->mu);
	rw->strings += nstrings;
	pthread_mutex_unlock(&rw->mu);
out:
	if (rc < 0 && wctx->errcode == rc)
		ps_err_wrap(wctx, rc, "object %u", j->num);
	ps_buf_free(&plain);
	if (j->payload != &j->raw)
		ps_buf_free(&j->raw);
	return rc;
}

/* Phase 3: "N G obj <<dict>>" (and "stream") into j->out; the writer
 * appends the payload, once it is ciphertext, without copying it again. */
static int finish(ps_ctx *wctx, struct rw_job *j)
{
	ps_buf_printf(&j->out, "%u %u obj\n", j->num, j->gen);
	ps_serialize(&j->out, j->obj);
	ps_buf_puts(&j->out, j->obj->kind == PS_STREAM ? "\nstream\r\n" : "\nendobj\n");
	ps_obj_free(j->obj);
	j->obj = NULL;
	return j->out.oom ? ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}

/* A batch: prepare every object, encrypt all its streams in one call to
 * the multi-lane engine (independent CBC chains, 8 or 16 at a time), then
 * serialise.  Only ciphertext leaves this function. */
static int run_batch(struct rw *rw, ps_ctx *wctx, struct rw_batch *b)
{
	ps_sec_job *jobs = NULL;
	size_t i, n = 0;
	double t0;
	int rc = 0;

	for (i = 0; i < b->n && rc == 0; i++)
		rc = prepare(rw, wctx, &b->jobs[i]);
	if (rc == 0 && !(jobs = malloc((b->n ? b->n : 1) * sizeof *jobs)))
		rc = ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (rc == 0) {
		for (i = 0; i < b->n; i++)
			if (b->jobs[i].plaintext)
				jobs[n++] = b->jobs[i].job;
		t0 = now_seconds();
		rc = ps_sec_run_batch(wctx, rw->nsec, jobs, n);
		for (i = 0; i < b->n && rc == 0; i++)
			b->jobs[i].plaintext = 0;
		pthread_mutex_lock(&rw->mu);
		rw->enc_seconds += now_seconds() - t0;
		pthread_mutex_unlock(&rw->mu);
		ps_wipe(jobs, n * sizeof *jobs);
	}
	for (i = 0; i < b->n && rc == 0; i++)
		rc = finish(wctx, &b->jobs[i]);
	free(jobs);
	if (rc < 0)
		snprintf(b->err, sizeof b->err, "%s", wctx->errmsg);
	return rc;
}

static void *worker(void *arg)
{
	struct rw *rw = arg;
	ps_ctx *wctx = NULL;

	if (pdfstamp_ctx_new(&wctx) < 0)
		wctx = NULL;
	pthread_mutex_lock(&rw->mu);
	for (;;) {
		struct rw_batch *b = NULL;
		size_t i;
		for (i = 0; i < rw->wcount; i++) {
			struct rw_batch *c = rw->win[(rw->whead + i) % rw->wcap];
			if (c->state == 0) {
				b = c;
				break;
			}
		}
		if (!b) {
			if (rw->stop)
				break;
			pthread_cond_wait(&rw->cv, &rw->mu);
			continue;
		}
		b->state = 1;
		pthread_mutex_unlock(&rw->mu);
		if (wctx)
			b->rc = run_batch(rw, wctx, b);
		else {
			b->rc = PDFSTAMP_E_NOMEM;
			snprintf(b->err, sizeof b->err, "out of memory");
		}
		pthread_mutex_lock(&rw->mu);
		b->state = 2;
		pthread_cond_broadcast(&rw->cv);
	}
	pthread_mutex_unlock(&rw->mu);
	pdfstamp_ctx_free(wctx);
	return NULL;
}

static void batch_free(struct rw_batch *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++) {
		if (b->jobs[i].plaintext && b->jobs[i].payload) /* a failed batch: no plaintext left behind */
			ps_wipe(b->jobs[i].payload->data, b->jobs[i].payload->len);
		ps_obj_free(b->jobs[i].obj);
		ps_buf_free(&b->jobs[i].raw);
		ps_buf_free(&b->jobs[i].data);
		ps_buf_free(&b->jobs[i].out);
	}
	free(b->jobs);
	free(b);
}

/* ---- the writer ---------------------------------------------------------------- */

static int wflush(struct rw *rw)
{
	int rc = 0;

	if (rw->wbuf.len) {
		rc = ps_write_all(rw->ctx, rw->of.fd, rw->wbuf.data, rw->wbuf.len, rw->woff - (int64_t)rw->wbuf.len,
		                  "the output");
		rw->wbuf.len = 0;
	}
	return rc;
}

static int wput(struct rw *rw, const void *p, size_t n)
{
	if (n < WBUF_DIRECT && rw->wbuf.len + n > WBUF_SIZE) {
		int rc = wflush(rw);
		if (rc < 0)
			return rc;
	}
	if (n >= WBUF_DIRECT) { /* large payloads skip the buffer copy */
		int rc = wflush(rw);
		if (rc == 0)
			rc = ps_write_all(rw->ctx, rw->of.fd, p, n, rw->woff, "the output");
		rw->woff += (int64_t)n;
		return rc;
	}
	ps_buf_append(&rw->wbuf, p, n);
	rw->woff += (int64_t)n;
	return rw->wbuf.oom ? ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}

/* Notes that object NUM starts at the current output offset.  Objects are
 * written in ascending order, so rw->offs stays sorted and has one entry
 * per object written (sized for every object of the input, plus two). */
static int record_off(struct rw *rw, uint32_t num, uint16_t gen)
{
	if (rw->noffs == rw->capoffs || (rw->noffs > 0 && rw->offs[rw->noffs - 1].num >= num))
		return ps_err(rw->ctx, PDFSTAMP_E_INTERNAL, "object %u is written out of order", num);
	rw->offs[rw->noffs].num = num;
	rw->offs[rw->noffs].gen = gen;
	rw->offs[rw->noffs].off = rw->woff;
	rw->noffs++;
	return 0;
}

static int write_batch(struct rw *rw, struct rw_batch *b)
{
	size_t i;
	int rc;

	if (b->rc < 0)
		return ps_err(rw->ctx, b->rc, "%s", b->err);
	for (i = 0; i < b->n; i++) {
		struct rw_job *j = &b->jobs[i];
		if ((rc = record_off(rw, j->num, j->gen)) < 0 || (rc = wput(rw, j->out.data, j->out.len)) < 0)
			return rc;
		if (j->payload && ((rc = wput(rw, j->payload->data, j->payload->len)) < 0 ||
		                   (rc = wput(rw, "\nendstream\nendobj\n", 18)) < 0))
			return rc;
	}
	return 0;
}

/* Waits for the oldest batch in flight and writes it. */
static int drain_one(struct rw *rw)
{
	struct rw_batch *b;
	int rc;

	pthread_mutex_lock(&rw->mu);
	b = rw->win[rw->whead];
	while (b->state != 2)
		pthread_cond_wait(&rw->cv, &rw->mu);
	rw->whead = (rw->whead + 1) % rw->wcap;
	rw->wcount--;
	pthread_mutex_unlock(&rw->mu);
	rc = write_batch(rw, b);
	batch_free(b);
	return rc;
}

static int submit(struct rw *rw, struct rw_batch *b)
{
	int rc;

	if (rw->nthreads == 0) { /* -j 1: no threads, same code path */
		b->rc = run_batch(rw, rw->ctx, b);
		rc = write_batch(rw, b);
		batch_free(b);
		return rc;
	}
	while (rw->wcount == rw->wcap)
		if ((rc = drain_one(rw)) < 0) {
			batch_free(b);
			return rc;
		}
	pthread_mutex_lock(&rw->mu);
	rw->win[(rw->whead + rw->wcount) % rw->wcap] = b;
	rw->wcount++;
	pthread_cond_broadcast(&rw->cv);
	pthread_mutex_unlock(&rw->mu);
	return 0;
}

/* ---- the reader ---------------------------------------------------------------- */

/* Is NUM dropped (design note 3)?  rw->dropped is sorted. */
static int is_dropped(const struct rw *rw, uint32_t num)
{
	size_t lo = 0, hi = rw->ndropped;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rw->dropped[mid] == num)
			return 1;
		if (rw->dropped[mid] < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The linearization parameter dictionary (ISO 32000-2 Annex F.2), if the
 * file has one: the live object at the lowest offset, preceded only by the
 * header and comments, within the first 1024 bytes, a dictionary (not a
 * stream) whose /Linearized is a number, and not the catalog (not /Root,
 * no /Type /Catalog, no /Pages).  Anything else carrying a /Linearized key
 * is content and is kept.  *out is its number or 0. */
static int find_linearization(ps_doc *doc, uint32_t root_num, uint32_t *out)
{
	uint32_t num, first = 0;
	int64_t off = INT64_MAX;
	ps_buf head = PS_BUF_INIT;
	ps_obj *o = NULL, *lin;
	double v;
	int rc = 0;

	*out = 0;
	for (num = ps_xref_next(doc, 0); num != 0; num = ps_xref_next(doc, num)) {
		const ps_xent *e = ps_xref_get(doc, num);
		if (e->type == 1 && e->off < off) {
			off = e->off;
			first = num;
		}
	}
	if (first == 0 || first == root_num || off > 1024)
		return 0;
	if ((rc = ps_doc_pread(doc, 0, (size_t)off, &head)) < 0)
		goto out;
	if ((int64_t)head.len != off || head.len < 5 || memcmp(head.data, "%PDF-", 5) != 0 ||
	    ps_skip_ws(head.data, head.len, 0) != head.len)
		goto out;
	if ((rc = ps_doc_parse_at(doc, off, first, &o, NULL)) < 0) {
		rc = 0; /* not a linearization dictionary; the rewrite reports it */
		goto out;
	}
	lin = ps_dict_get(o, "Linearized");
	if (o->kind == PS_DICT && lin && ps_obj_num(lin, &v) == 0 && !ps_obj_is_name(ps_dict_get(o, "Type"), "Catalog") &&
	    !ps_dict_get(o, "Pages"))
		*out = first;
out:
	ps_obj_free(o);
	ps_buf_free(&head);
	return rc;
}

/* What the rewrite leaves out (design note 3): the chain's own xref
 * streams (ps_doc_is_xref_stream: by section, never by /Type) and the
 * linearization dictionary.  Fills rw->dropped, sorted. */
static int find_dropped(struct rw *rw, uint32_t root_num)
{
	ps_doc *doc = rw->doc;
	uint32_t lin;
	size_t n = 0;
	int i, rc;

	if ((rc = find_linearization(doc, root_num, &lin)) < 0)
		return rc;
	rw->dropped = malloc(((size_t)doc->nsections * 2 + 1) * sizeof *rw->dropped);
	if (!rw->dropped)
		return ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < doc->nsections; i++) {
		uint32_t c[2] = {doc->sections[i].stream_num, doc->sections[i].xrefstm_num};
		int k;
		for (k = 0; k < 2; k++)
			if (c[k] != 0 && c[k] != root_num && ps_doc_is_xref_stream(doc, c[k]))
				rw->dropped[n++] = c[k];
	}
	if (lin)
		rw->dropped[n++] = lin;
	qsort(rw->dropped, n, sizeof *rw->dropped, cmp_u32);
	rw->ndropped = 0;
	for (i = 0; (size_t)i < n; i++) /* unique */
		if (rw->ndropped == 0 || rw->dropped[rw->ndropped - 1] != rw->dropped[i])
			rw->dropped[rw->ndropped++] = rw->dropped[i];
	return 0;
}

static int read_job(struct rw *rw, uint32_t num, int root, struct rw_job *j, int *skip)
{
	ps_doc *doc = rw->doc;
	const ps_xent *e = ps_xref_get(doc, num);
	int64_t len;
	int rc;

	*skip = 0;
	memset(j, 0, sizeof *j);
	if (!e)
		return ps_err(rw->ctx, PDFSTAMP_E_INTERNAL, "object %u is not in use", num);
	j->num = num;
	j->raw.secret = 0; /* raw bytes are ciphertext (or the plaintext input's own bytes) */
	if (is_dropped(rw, num)) {
		*skip = 1;
		return 0;
	}
	if (e->type == 1) {
		j->gen = (uint16_t)e->aux;
		if ((rc = ps_doc_parse_at(doc, e->off, num, &j->obj, NULL)) < 0)
			return rc;
		if (j->obj->kind == PS_STREAM) {
			if ((rc = ps_doc_stream_length(doc, j->obj, &len)) < 0 ||
			    (rc = ps_doc_pread(doc, j->obj->u.stm.off, (size_t)len, &j->raw)) < 0)
				return rc;
			if ((int64_t)j->raw.len != len)
				return ps_err(rw->ctx, PDFSTAMP_E_FORMAT, "stream of object %u is truncated", num);
		}
	} else {
		/* Only the catalog is taken out of its object stream: an encrypted
		 * file's catalog must not be compressed (pdf-issues#439). */
		ps_obj *o = NULL;
		if ((rc = ps_doc_lookup(doc, num, &o)) < 0)
			return rc;
		if (!o || !(j->obj = ps_obj_copy(o)))
			return ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		j->plain_strings = 1;
	}
	j->extensions = root && j->obj->kind == PS_DICT;
	return 0;
}

/* ---- the cross-reference section and trailer --------------------------------------- */

/* The output's cross-reference entries, ascending (a ps_xrefw_src for
 * xrefw.c): object 0, the head of an empty free list (7.5.4); the objects
 * written (rw->offs); and, in an xref stream, the members of object streams
 * carried over (type 2, as in the input).  Numbers in none are left out:
 * the subsections cover only the ranges in use, so the section follows the
 * objects present, not the highest number. */
struct xout {
	const struct rw *rw;
	int members;          /* list the carried-over members (xref stream) */
	int head;             /* object 0 is still to come */
	size_t a;             /* next entry of rw->offs */
	uint32_t b;           /* next carried-over member, 0 if none */
};

static uint32_t next_member(const ps_doc *doc, uint32_t after)
{
	uint32_t n;

	for (n = ps_xref_next(doc, after); n != 0; n = ps_xref_next(doc, n))
		if (ps_xref_get(doc, n)->type == 2 && n != doc->encrypt_num)
			return n;
	return 0;
}

static void xout_start(void *ud)
{
	struct xout *x = ud;

	x->head = 1;
	x->a = 0;
	x->b = x->members ? next_member(x->rw->doc, 0) : 0;
}

static int xout_next(void *ud, ps_xrefw_ent *e)
{
	struct xout *x = ud;
	const struct rw *rw = x->rw;
	uint32_t na = x->a < rw->noffs ? rw->offs[x->a].num : 0, num = x->b;
	const ps_xent *xe;

	if (x->head) {
		x->head = 0;
		e->num = 0;
		e->type = 0;
		e->f2 = 0;
		e->f3 = 65535;
		return 1;
	}
	if (na != 0 && (num == 0 || na <= num)) {
		const struct rw_off *o = &rw->offs[x->a++];
		if (num == na) /* the catalog, taken out of its object stream */
			x->b = next_member(rw->doc, num);
		e->num = na;
		e->type = 1;
		e->f2 = (uint64_t)o->off;
		e->f3 = o->gen;
		return 1;
	}
	if (num == 0)
		return 0;
	xe = ps_xref_get(rw->doc, num);
	e->num = num;
	e->type = 2;
	e->f2 = (uint64_t)xe->off;
	e->f3 = xe->aux;
	x->b = next_member(rw->doc, num);
	return 1;
}

/* The trailer, then the section (xrefw.c) at the current output offset. */
static int write_xref(struct rw *rw, uint32_t enc_num, const uint8_t id[16], int stream_form)
{
	ps_doc *doc = rw->doc;
	ps_ctx *ctx = rw->ctx;
	uint32_t size = enc_num + 1;
	int64_t xoff = rw->woff;
	ps_obj *t = ps_new_dict(), *ida = ps_new_array(), *v;
	ps_buf b = PS_BUF_INIT;
	struct xout x = {rw, stream_form, 1, 0, 0};
	ps_xrefw_src src = {xout_start, xout_next, &x};
	int rc = 0;

	if (!t || !ida)
		goto oom;
	if (stream_form)
		size++; /* the xref stream itself */
	if ((v = ps_dict_get(doc->trailer, "Root")) && ps_dict_put(t, "Root", ps_obj_copy(v)) < 0)
		goto oom;
	if ((v = ps_dict_get(doc->trailer, "Info")) && v->kind == PS_REF && ps_dict_put(t, "Info", ps_obj_copy(v)) < 0)
		goto oom;
	if (ps_dict_put(t, "Encrypt", ps_new_ref(enc_num, 0)) < 0 || ps_array_push(ida, ps_new_str(id, 16)) < 0 ||
	    ps_array_push(ida, ps_new_str(id, 16)) < 0)
		goto oom;
	ps_array_get(ida, 0)->u.str.hex = ps_array_get(ida, 1)->u.str.hex = 1;
	rc = ps_dict_put(t, "ID", ida);
	ida = NULL;
	if (rc < 0 || ps_dict_put(t, "Size", ps_new_int(size)) < 0)
		goto oom;
	/* the xref stream is the last object, at xoff */
	if (stream_form && (rc = record_off(rw, size - 1, 0)) < 0)
		goto out;
	if ((rc = ps_xrefw_write(ctx, &src, t, stream_form, size - 1, xoff, &b)) == 0)
		rc = wput(rw, b.data, b.len);
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(t);
	ps_obj_free(ida);
	ps_buf_free(&b);
	return rc;
}

static int encrypt_dict(struct rw *rw, uint32_t num)
{
	ps_obj *d = NULL;
	ps_buf b = PS_BUF_INIT;
	int rc;

	if ((rc = ps_sec_write_dict(rw->ctx, rw->nsec, &d)) < 0)
		return rc;
	if ((rc = record_off(rw, num, 0)) < 0)
		goto out;
	ps_buf_printf(&b, "%u 0 obj\n", num);
	ps_serialize(&b, d);
	ps_buf_puts(&b, "\nendobj\n");
	if (b.oom)
		goto oom;
	rc = wput(rw, b.data, b.len);
	goto out;
oom:
	rc = ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(d);
	ps_buf_free(&b);
	return rc;
}

/* ---- the whole rewrite ------------------------------------------------------------ */

static int header_version(ps_doc *doc, char out[16])
{
	ps_buf h = PS_BUF_INIT;
	int rc = ps_doc_pread(doc, 0, 16, &h);

	snprintf(out, 16, "1.7");
	if (rc == 0 && h.len >= 8 && memcmp(h.data, "%PDF-", 5) == 0 && h.data[5] >= '1' && h.data[5] <= '9' &&
	    h.data[6] == '.' && h.data[7] >= '0' && h.data[7] <= '9' && (h.data[5] > '1' || h.data[7] >= '7'))
		snprintf(out, 16, "%c.%c", h.data[5], h.data[7]);
	ps_buf_free(&h);
	return rc;
}

static int rewrite(ps_doc *doc, const struct pdfstamp_rewrite_opts *o, struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = doc->ctx;
	struct rw rw;
	struct rw_batch *b = NULL;
	uint8_t id[16];
	char ver[16], hdr[64];
	uint32_t num, enc_num, root_num = 0, maxnum = 0;
	int stream_form = 0, rc, i, started = 0;
	double t0 = now_seconds();
	size_t batch_bytes = 0;
	const char *target = o->output ? o->output : doc->path;
	int to_fd = (o->flags & PDFSTAMP_WRITE_TO_FD) != 0; /* version >= 2: checked by the callers */

	memset(&rw, 0, sizeof rw);
	rw.doc = doc;
	rw.ctx = ctx;
	rw.of.fd = -1;
	if (!!(o->flags & PDFSTAMP_WRITE_IN_PLACE) + to_fd + !!o->output != 1)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "give exactly one of an output file, an output descriptor and "
		              "in-place mode");
	if (to_fd && (rc = ps_check_out_fd(ctx, o->output_fd, doc->fd)) < 0)
		return rc;
	if ((rc = ps_policy_rewrite(doc, o->flags)) < 0)
		return rc;
	{
		/* A file without a catalog is refused, not rewritten: the
		 * self-check requires the output's /Root (note 5). */
		ps_obj *r = NULL, *cat = NULL;
		if ((rc = ps_doc_catalog(doc, PS_CATALOG_ANY, &cat, &r)) < 0)
			return rc;
		if (!r || !cat || cat->kind != PS_DICT)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "the document has no catalog (/Root is not an indirect dictionary)");
		root_num = r->u.ref.num;
	}
	/* new key and security parameters (Alg. 8, 9, 10) */
	if ((rc = ps_sec_new_r6(ctx, o->user_password, o->user_len, o->owner_password, o->owner_len,
	                        o->set_permissions ? o->permissions : ps_doc_kept_p(doc),
	                        ps_sec_encrypt_metadata(doc->sec), &rw.nsec)) < 0)
		goto out;
	if ((rc = ps_random(ctx, id, sizeof id)) < 0 || (rc = header_version(doc, ver)) < 0)
		goto out;
	/* which object numbers are live; is there any object stream? */
	for (num = ps_xref_next(doc, 0); num != 0; num = ps_xref_next(doc, num)) {
		if (num != doc->encrypt_num) {
			maxnum = num;
			if (ps_xref_get(doc, num)->type == 2)
				stream_form = 1;
		}
	}
	if (maxnum >= PS_MAX_OBJNUM - 2) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "no object number left for the new /Encrypt");
		goto out;
	}
	enc_num = maxnum + 1;
	/* one offset per object written: at most the objects in use, the new
	 * /Encrypt and the xref stream */
	rw.capoffs = (size_t)doc->xref_used + 2;
	rw.offs = malloc(rw.capoffs * sizeof *rw.offs);
	if (!rw.offs) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = find_dropped(&rw, root_num)) < 0)
		goto out;
	/* the pool */
	rw.nthreads = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (rw.nthreads < 1)
		rw.nthreads = 1;
	if (rw.nthreads > 64)
		rw.nthreads = 64;
	if (st)
		st->jobs = rw.nthreads;
	if (rw.nthreads == 1)
		rw.nthreads = 0;
	pthread_mutex_init(&rw.mu, NULL);
	pthread_cond_init(&rw.cv, NULL);
	started = 1;
	rw.wcap = (size_t)(rw.nthreads ? 2 * rw.nthreads + 2 : 1);
	rw.win = calloc(rw.wcap, sizeof *rw.win);
	rw.threads = calloc((size_t)(rw.nthreads ? rw.nthreads : 1), sizeof *rw.threads);
	if (!rw.win || !rw.threads) {
		rw.nthreads = 0; /* none started: nothing to join */
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < rw.nthreads; i++) {
		if (pthread_create(&rw.threads[i], NULL, worker, &rw) != 0) {
			rw.nthreads = i;
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "cannot start worker threads");
			goto out;
		}
	}
	/* In place: the file itself, wherever symbolic links lead, with its
	 * owner; a file with other hard links is refused (io.c). */
	rc = (o->flags & PDFSTAMP_WRITE_IN_PLACE) ? ps_outfile_open_inplace(ctx, &rw.of, doc->path, doc->fd)
	     : to_fd                              ? ps_outfile_open_fd(ctx, &rw.of)
	                                          : ps_outfile_open(ctx, &rw.of, target);
	if (rc < 0)
		goto out;
	snprintf(hdr, sizeof hdr, "%%PDF-%s\n%%\xe2\xe3\xcf\xd3\n", ver);
	if ((rc = wput(&rw, hdr, strlen(hdr))) < 0)
		goto out;
	/* read, transform, write */
	for (num = ps_xref_next(doc, 0); num != 0 && num <= maxnum; num = ps_xref_next(doc, num)) {
		struct rw_job *j;
		int skip;
		const ps_xent *e = ps_xref_get(doc, num);

		if (num == doc->encrypt_num || (e->type == 2 && num != root_num))
			continue;
		if (!b) {
			b = calloc(1, sizeof *b);
			if (!b || !(b->jobs = calloc(BATCH_OBJECTS, sizeof *b->jobs))) {
				free(b);
				b = NULL;
				rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
				goto out;
			}
			batch_bytes = 0;
		}
		j = &b->jobs[b->n];
		rc = read_job(&rw, num, num == root_num, j, &skip);
		if (rc < 0 || skip) {
			ps_obj_free(j->obj);
			ps_buf_free(&j->raw);
			memset(j, 0, sizeof *j);
			if (rc < 0)
				goto out;
			continue;
		}
		b->n++;
		batch_bytes += j->raw.len;
		if (b->n == BATCH_OBJECTS || batch_bytes >= BATCH_BYTES) {
			rc = submit(&rw, b);
			b = NULL;
			if (rc < 0)
				goto out;
			if (o->progress && e->type == 1)
				o->progress(o->progress_ud, e->off, doc->size);
		}
	}
	if (b) {
		rc = submit(&rw, b);
		b = NULL;
		if (rc < 0)
			goto out;
	}
	while (rw.wcount > 0)
		if ((rc = drain_one(&rw)) < 0)
			goto out;
	if ((rc = encrypt_dict(&rw, enc_num)) < 0)
		goto out;
	/* The xref form: a stream when members of object streams are carried
	 * over, or when an offset would not fit a classic table's ten digits
	 * (every object lies below the xref, so its offset is the largest). */
	stream_form = ps_xrefw_form(stream_form, rw.woff);
	if ((rc = write_xref(&rw, enc_num, id, stream_form)) < 0 || (rc = wflush(&rw)) < 0)
		goto out;
	if (o->progress)
		o->progress(o->progress_ud, doc->size, doc->size);
	ps_fault("after-write");
	/* verify with the new password before anything is renamed (note 5) */
	if ((rc = ps_rewrite_check(doc, ps_outfile_path(&rw.of), o->owner_password ? o->owner_password : "",
	                           o->owner_len, rw.dropped, rw.ndropped, enc_num)) < 0)
		goto out;
	if ((rc = to_fd ? ps_outfile_copy_out(ctx, &rw.of, o->output_fd) : ps_outfile_commit(ctx, &rw.of, doc->mode)) < 0)
		goto out;
	if (st) {
		st->objects = (int64_t)rw.noffs;
		st->streams = rw.streams;
		st->strings = rw.strings;
		st->payload_bytes = rw.payload;
		st->decrypt_seconds = rw.dec_seconds;
		st->encrypt_seconds = rw.enc_seconds;
		st->crypto_seconds = rw.dec_seconds + rw.enc_seconds;
		st->bytes_written = rw.woff;
		st->seconds = now_seconds() - t0;
	}
out:
	if (started) {
		pthread_mutex_lock(&rw.mu);
		rw.stop = 1;
		pthread_cond_broadcast(&rw.cv);
		pthread_mutex_unlock(&rw.mu);
		for (i = 0; i < rw.nthreads; i++)
			pthread_join(rw.threads[i], NULL);
		while (rw.wcount > 0) {
			batch_free(rw.win[rw.whead]);
			rw.whead = (rw.whead + 1) % rw.wcap;
			rw.wcount--;
		}
		pthread_mutex_destroy(&rw.mu);
		pthread_cond_destroy(&rw.cv);
	}
	batch_free(b);
	free(rw.win);
	free(rw.threads);
	free(rw.offs);
	free(rw.dropped);
	ps_buf_free(&rw.wbuf);
	ps_outfile_free(&rw.of);
	ps_sec_free(rw.nsec);
	return rc;
}

/* Checks the versions of the options and of ST (may be NULL), which it
 * zeroes.  Version 1 of the options has no output_fd: PDFSTAMP_WRITE_TO_FD
 * needs version 2. */
static int check_opts(ps_ctx *ctx, const struct pdfstamp_rewrite_opts *o, struct pdfstamp_rewrite_stats *st)
{
	if (st) {
		if (st->version != PDFSTAMP_REWRITE_STATS_VERSION)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "rewrite statistics of an unknown version");
		memset(st, 0, sizeof *st);
		st->version = PDFSTAMP_REWRITE_STATS_VERSION;
	}
	if (!o || o->version < 1 || o->version > PDFSTAMP_REWRITE_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "rewrite options of an unknown version");
	if ((o->flags & PDFSTAMP_WRITE_TO_FD) && o->version < 2)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "PDFSTAMP_WRITE_TO_FD needs version 2 of the rewrite options");
	return 0;
}

int pdfstamp_rotate(pdfstamp_doc *doc, const struct pdfstamp_rewrite_opts *o, struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = doc->ctx;
	int rc;

	if ((rc = check_opts(ctx, o, st)) < 0)
		return rc;
	if (!doc->encrypted)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not encrypted; use encrypt");
	if (!doc->authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	if (doc->authenticated == 1) {
		/* the user password is enough only when the owner password is empty */
		int as = 0;
		rc = ps_sec_check_password(ctx, doc->sec, "", 0, &as);
		if (rc < 0 || as != 2)
			return ps_err(ctx, PDFSTAMP_E_PERM, "rotating the key needs the owner password");
	}
	return rewrite(doc, o, st);
}

int pdfstamp_encrypt(pdfstamp_doc *doc, const struct pdfstamp_rewrite_opts *o, struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = doc->ctx;
	int rc;

	if ((rc = check_opts(ctx, o, st)) < 0)
		return rc;
	if (doc->encrypted)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is already encrypted; use rotate to change its key");
	return rewrite(doc, o, st);
}
