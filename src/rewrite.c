/*
 * rewrite.c - full rewrite: key rotation (`rotate`), encryption of a
 * plaintext file (`encrypt`) and whole-file verification (`verify`).
 *
 * DESIGN NOTES
 *
 * Why a rewrite: an incremental update that swaps /Encrypt leaves the old
 * /UE and /OE in the file, and they still unwrap the same key with the old
 * password (spec-facts 1.8).  Rotation therefore draws a new random file
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
 *     of a classic entry: ps_rewrite_xref_form), else a classic table.
 *  4. Each worker has its own context (DRBG and IV pool); the AES key
 *     schedules are built once and only read by the workers (mbedTLS
 *     contexts are not copied: 2.28 keeps a pointer into itself).
 *  5. Crash safety: the output is an unnamed temp file in the target's
 *     directory (io.c), holding only ciphertext; it is verified before it
 *     is fsynced and renamed over the target: re-opened with the new owner
 *     password, every object decrypted, one section, its live object
 *     numbers exactly the input's less what note 3 drops plus the new
 *     /Encrypt and xref stream, /Root a dictionary and the page tree walked
 *     (each node once: cycles stop it) to the input's page count.  Any
 *     failure leaves the target as it was and no temp file behind.
 *     In place (-i), the target is the file a symbolic link leads to (the
 *     link stays) and keeps its owner and group where permitted; a file
 *     with other hard links is refused, since a rename would leave the
 *     other names with the old key (io.c ps_outfile_open_inplace).
 *     To a descriptor (PDFSTAMP_WRITE_TO_FD, `-o -`): the same temp file,
 *     in $TMPDIR, never named; verified the same way, then copied out.
 *  6. New /U /UE /O /OE /Perms come from Algorithms 8, 9 and 10
 *     (ps_sec_make); R5 inputs come out as R6.
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

/* ---- permissions ------------------------------------------------------------ */

int pdfstamp_parse_permissions(pdfstamp_ctx *ctx, const char *list, int64_t *p)
{
	/* Table 22: bits 1-2 zero; 7-8 and 13-32 one for R >= 3; bit 10 one. */
	uint32_t v = 0xFFFFF0C0u | (1u << 9);
	const char *s = list;

	if (strcmp(list, "all") == 0) {
		*p = -4;
		return 0;
	}
	if (strcmp(list, "none") != 0) {
		while (*s) {
			const char *e = strchr(s, ',');
			size_t n = e ? (size_t)(e - s) : strlen(s);
			int i, found = 0;
			for (i = 0; pdfstamp_perm_names[i].name; i++) {
				if (strlen(pdfstamp_perm_names[i].name) == n &&
				    strncmp(pdfstamp_perm_names[i].name, s, n) == 0) {
					v |= 1u << (pdfstamp_perm_names[i].bit - 1);
					found = 1;
				}
			}
			if (!found)
				return ps_err(ctx, PDFSTAMP_E_USAGE,
				              "unknown permission '%.*s' (use print, modify, copy, annotate, fill-forms, "
				              "extract, assemble, print-high, all or none)", (int)(n > 40 ? 40 : n), s);
			s += n;
			if (*s == ',')
				s++;
		}
	}
	*p = (int64_t)(int32_t)v;
	return 0;
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
	ps_aes_job job;
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
	ps_cipher newc;
	ps_secparams nsp;
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

struct str_ud {
	struct rw *rw;
	ps_ctx *wctx;
	int decrypt, encrypt;
	ps_buf a, b;
	int64_t count;
};

/* Re-encrypts one string in place (design note 3 for the exemptions). */
static int restring(void *ud_, ps_obj *str, const ps_obj *parent, const char *key)
{
	struct str_ud *u = ud_;
	const uint8_t *p = str->u.str.p;
	size_t n = str->u.str.len;
	int rc;

	if (parent && key && strcmp(key, "Contents") == 0 && ps_is_signature_dict(parent))
		return 0;
	u->a.len = u->b.len = 0;
	if (u->decrypt) {
		if ((rc = ps_aesv3_decrypt(u->wctx, &u->rw->doc->cipher, p, n, &u->a)) < 0)
			return rc;
		p = u->a.data;
		n = u->a.len;
	}
	if (u->encrypt) {
		if ((rc = ps_aesv3_encrypt(u->wctx, &u->rw->newc, p, n, &u->b)) < 0)
			return rc;
		p = u->b.data;
		n = u->b.len;
		str->u.str.hex = 1;
	}
	if (p == str->u.str.p)
		return 0;
	if (ps_str_set(str, p, n) < 0)
		return ps_err(u->wctx, PDFSTAMP_E_NOMEM, "out of memory");
	u->count++;
	return 0;
}

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
	struct str_ud su = {rw, wctx, 0, 1, PS_BUF_INIT, PS_BUF_INIT, 0};
	ps_buf plain = PS_BUF_INIT;
	const ps_buf *src = &j->raw;
	double aes = 0;
	int64_t payload = 0;
	int rc = 0;

	su.a.secret = plain.secret = j->data.secret = 1;
	su.decrypt = doc->encrypted && !doc->strf_identity && !j->plain_strings;
	if (j->extensions && (rc = add_extensions(wctx, j->obj)) < 0)
		goto out;
	if ((rc = ps_obj_walk_strings(j->obj, restring, &su)) < 0)
		goto out;
	if (j->obj->kind == PS_STREAM) {
		int was = ps_stream_needs_crypt(doc->encrypted, doc->stmf_identity, doc->sp.encrypt_metadata, j->obj);
		payload = (int64_t)j->raw.len;
		j->encrypt = ps_stream_needs_crypt(1, 0, rw->nsp.encrypt_metadata, j->obj);
		j->payload = &j->raw;
		if (was && j->encrypt && j->raw.len > 0) {
			/* the common case: old ciphertext to new, in place */
			double t0 = now_seconds();
			rc = ps_aesv3_reencrypt_prepare(wctx, &doc->cipher, j->raw.data, j->raw.len, &j->job);
			aes = now_seconds() - t0;
			if (rc < 0)
				goto out;
		} else {
			if (was) {
				double t0 = now_seconds();
				rc = ps_aesv3_decrypt(wctx, &doc->cipher, src->data, src->len, &plain);
				aes = now_seconds() - t0;
				if (rc < 0)
					goto out;
				src = &plain;
			}
			j->payload = &j->data;
			if (j->encrypt) {
				if (ps_buf_reserve(&j->data, PS_AESV3_LEN(src->len)) < 0) {
					rc = ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
					goto out;
				}
				if ((rc = ps_aesv3_prepare(wctx, src->data, src->len, j->data.data, &j->job)) < 0)
					goto out;
				j->data.len = PS_AESV3_LEN(src->len);
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
	rw->strings += su.count;
	pthread_mutex_unlock(&rw->mu);
out:
	if (rc < 0 && wctx->errcode == rc)
		ps_err_wrap(wctx, rc, "object %u", j->num);
	ps_buf_free(&su.a);
	ps_buf_free(&su.b);
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
	ps_aes_job *jobs = NULL;
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
		ps_aes_cbc_encrypt_batch(ps_cipher_eng(&rw->newc), jobs, n);
		for (i = 0; i < b->n; i++)
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

/* The output's cross-reference entries after object 0, ascending: the
 * objects written (rw->offs) and, in an xref stream, the members of object
 * streams carried over (type 2, as in the input).  Numbers in neither are
 * left out: the subsections cover only the ranges in use, so the section
 * follows the objects present, not the highest number. */
struct xout {
	const struct rw *rw;
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

static void xout_start(struct xout *x, const struct rw *rw, int members)
{
	x->rw = rw;
	x->a = 0;
	x->b = members ? next_member(rw->doc, 0) : 0;
}

/* The next entry's number (0 at the end), type and fields 2 and 3. */
static uint32_t xout_next(struct xout *x, int *type, uint64_t *f2, uint32_t *f3)
{
	const struct rw *rw = x->rw;
	uint32_t na = x->a < rw->noffs ? rw->offs[x->a].num : 0, num = x->b;
	const ps_xent *e;

	if (na != 0 && (num == 0 || na <= num)) {
		const struct rw_off *o = &rw->offs[x->a++];
		if (num == na) /* the catalog, taken out of its object stream */
			x->b = next_member(rw->doc, num);
		*type = 1;
		*f2 = (uint64_t)o->off;
		*f3 = o->gen;
		return na;
	}
	if (num == 0)
		return 0;
	e = ps_xref_get(rw->doc, num);
	*type = 2;
	*f2 = (uint64_t)e->off;
	*f3 = e->aux;
	x->b = next_member(rw->doc, num);
	return num;
}

static int write_xref(struct rw *rw, uint32_t enc_num, const uint8_t id[16], int stream_form)
{
	ps_doc *doc = rw->doc;
	ps_ctx *ctx = rw->ctx;
	uint32_t size = enc_num + 1, num, first, count, f3;
	uint64_t f2;
	int64_t xoff = rw->woff;
	ps_obj *t = ps_new_dict(), *ida = ps_new_array(), *index = NULL, *v;
	ps_buf b = PS_BUF_INIT, z = PS_BUF_INIT;
	struct xout x;
	int rc = 0, type;

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
	if (!stream_form) {
		/* A subsection per run of numbers in use; object 0 heads an empty
		 * free list (7.5.4).  Z holds the current run's entries. */
		ps_buf_puts(&b, "xref\n");
		ps_buf_puts(&z, "0000000000 65535 f\r\n");
		first = 0;
		count = 1;
		xout_start(&x, rw, 0);
		for (;;) {
			num = xout_next(&x, &type, &f2, &f3);
			if (num == 0 || num != first + count) {
				ps_buf_printf(&b, "%u %u\n", first, count);
				ps_buf_append(&b, z.data, z.len);
				if (num == 0)
					break;
				z.len = 0;
				first = num;
				count = 0;
			}
			ps_buf_printf(&z, "%010" PRIu64 " %05u n\r\n", f2, f3);
			count++;
		}
		ps_buf_puts(&b, "trailer\n");
		ps_serialize(&b, t);
		ps_buf_printf(&b, "\nstartxref\n%" PRId64 "\n%%%%EOF\n", xoff);
	} else {
		int w2 = 1, w3 = 2, k;
		uint32_t self = size - 1;
		ps_obj *w = ps_new_array();
		if (!w || !(index = ps_new_array())) {
			ps_obj_free(w);
			goto oom;
		}
		if ((rc = record_off(rw, self, 0)) < 0) { /* at xoff */
			ps_obj_free(w);
			goto out;
		}
		while (w2 < 8 && (xoff >> (8 * w2)) != 0)
			w2++;
		xout_start(&x, rw, 1);
		while (xout_next(&x, &type, &f2, &f3) != 0) {
			while (w2 < 8 && (f2 >> (8 * w2)) != 0)
				w2++;
			while (w3 < 4 && (f3 >> (8 * w3)) != 0)
				w3++;
		}
		/* rows: object 0, then a run per range in use (/Index) */
		ps_buf_putc(&z, 0);
		for (k = w2 - 1; k >= 0; k--)
			ps_buf_putc(&z, 0);
		for (k = w3 - 1; k >= 0; k--)
			ps_buf_putc(&z, (int)(UINT32_C(65535) >> (8 * k)) & 0xff);
		first = 0;
		count = 1;
		xout_start(&x, rw, 1);
		for (;;) {
			num = xout_next(&x, &type, &f2, &f3);
			if (num == 0 || num != first + count) {
				if (ps_array_push(index, ps_new_int(first)) < 0 || ps_array_push(index, ps_new_int(count)) < 0) {
					ps_obj_free(w);
					goto oom;
				}
				if (num == 0)
					break;
				first = num;
				count = 0;
			}
			ps_buf_putc(&z, type);
			for (k = w2 - 1; k >= 0; k--)
				ps_buf_putc(&z, (int)(f2 >> (8 * k)) & 0xff);
			for (k = w3 - 1; k >= 0; k--)
				ps_buf_putc(&z, (int)(f3 >> (8 * k)) & 0xff);
			count++;
		}
		if (ps_array_push(w, ps_new_int(1)) < 0 || ps_array_push(w, ps_new_int(w2)) < 0 ||
		    ps_array_push(w, ps_new_int(w3)) < 0) {
			ps_obj_free(w);
			goto oom;
		}
		if (ps_dict_put(t, "W", w) < 0) /* t owns w, also on failure */
			goto oom;
		/* /Index only when the runs are not the default [0 Size] */
		if (ps_array_len(index) != 2 || count != size) {
			rc = ps_dict_put(t, "Index", index);
			index = NULL; /* t owns it, also on failure */
			if (rc < 0)
				goto oom;
		}
		{
			ps_buf zz = PS_BUF_INIT;
			if (z.oom)
				goto oom;
			if ((rc = ps_deflate(ctx, z.data, z.len, 6, &zz)) < 0) {
				ps_buf_free(&zz);
				goto out;
			}
			if (ps_dict_put(t, "Type", ps_new_name("XRef")) < 0 ||
			    ps_dict_put(t, "Filter", ps_new_name("FlateDecode")) < 0 ||
			    ps_dict_put(t, "Length", ps_new_int((int64_t)zz.len)) < 0) {
				ps_buf_free(&zz);
				goto oom;
			}
			ps_buf_printf(&b, "%u 0 obj\n", self);
			ps_serialize(&b, t);
			ps_buf_puts(&b, "\nstream\r\n");
			ps_buf_append(&b, zz.data, zz.len);
			ps_buf_printf(&b, "\nendstream\nendobj\nstartxref\n%" PRId64 "\n%%%%EOF\n", xoff);
			ps_buf_free(&zz);
		}
	}
	if (b.oom || z.oom)
		goto oom;
	rc = wput(rw, b.data, b.len);
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(t);
	ps_obj_free(ida);
	ps_obj_free(index);
	ps_buf_free(&b);
	ps_buf_free(&z);
	return rc;
}

static int encrypt_dict(struct rw *rw, uint32_t num)
{
	static const char *const keys[5] = {"O", "U", "OE", "UE", "Perms"};
	const uint8_t *vals[5] = {rw->nsp.o, rw->nsp.u, rw->nsp.oe, rw->nsp.ue, rw->nsp.perms};
	static const size_t lens[5] = {48, 48, 32, 32, 16};
	ps_obj *d = ps_new_dict(), *cf = ps_new_dict(), *std = ps_new_dict();
	ps_buf b = PS_BUF_INIT;
	int rc = 0, k;

	if (!d || !cf || !std || ps_dict_put(d, "Filter", ps_new_name("Standard")) < 0 ||
	    ps_dict_put(d, "V", ps_new_int(5)) < 0 || ps_dict_put(d, "R", ps_new_int(6)) < 0 ||
	    ps_dict_put(d, "Length", ps_new_int(256)) < 0 ||
	    ps_dict_put(std, "AuthEvent", ps_new_name("DocOpen")) < 0 ||
	    ps_dict_put(std, "CFM", ps_new_name("AESV3")) < 0 || ps_dict_put(std, "Length", ps_new_int(32)) < 0)
		goto oom;
	rc = ps_dict_put(cf, "StdCF", std);
	std = NULL;
	if (rc < 0)
		goto oom;
	rc = ps_dict_put(d, "CF", cf);
	cf = NULL;
	if (rc < 0 || ps_dict_put(d, "StmF", ps_new_name("StdCF")) < 0 ||
	    ps_dict_put(d, "StrF", ps_new_name("StdCF")) < 0 || ps_dict_put(d, "P", ps_new_int(rw->nsp.p)) < 0)
		goto oom;
	for (k = 0; k < 5; k++) {
		ps_obj *s = ps_new_str(vals[k], lens[k]);
		if (s)
			s->u.str.hex = 1;
		if (ps_dict_put(d, keys[k], s) < 0)
			goto oom;
	}
	if (!rw->nsp.encrypt_metadata && ps_dict_put(d, "EncryptMetadata", ps_new_bool(0)) < 0)
		goto oom;
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
	ps_obj_free(cf);
	ps_obj_free(std);
	ps_buf_free(&b);
	return rc;
}

/* ---- the whole rewrite ------------------------------------------------------------ */

static int check_signatures(ps_doc *doc, unsigned flags)
{
	struct pdfstamp_info *info = calloc(1, sizeof *info);
	ps_obj *root = NULL, *acro = NULL, *sf = NULL;
	int64_t sigflags = 0;
	int rc;

	if (!info)
		return ps_err(doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if ((rc = ps_doc_signatures(doc, info)) < 0)
		goto out;
	if ((rc = ps_doc_resolve(doc, ps_dict_get(doc->trailer, "Root"), &root)) < 0 ||
	    (rc = ps_doc_resolve(doc, ps_dict_get(root, "AcroForm"), &acro)) < 0 ||
	    (rc = ps_doc_resolve(doc, ps_dict_get(acro, "SigFlags"), &sf)) < 0)
		goto out;
	ps_obj_int(sf, &sigflags);
	if ((info->nsigs > 0 || (sigflags & 2)) && !(flags & PDFSTAMP_REWRITE_FORCE))
		rc = ps_err(doc->ctx, PDFSTAMP_E_PERM,
		            "the document %s; a full rewrite invalidates every signature (--force to do it anyway)",
		            info->nsigs > 0 ? "is signed" : "is marked append-only (/SigFlags AppendOnly)");
	else if (info->nsigs > 0)
		ps_warn(doc->ctx, "rewriting a signed document: its %d signature(s) will no longer validate", info->nsigs);
out:
	free(info);
	return rc;
}

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

int ps_rewrite_xref_form(int has_compressed, int64_t xref_offset)
{
	/* Every object lies before the xref, so XREF_OFFSET bounds them all;
	 * a classic entry has ten digits for the offset (7.5.4). */
	return has_compressed || xref_offset > PS_MAX_TABLE_OFFSET;
}

/* Self-check, part 2 (design note 5): the output's live objects are
 * exactly the input's, less the old /Encrypt and what design note 3 drops,
 * plus the new /Encrypt and the output's own xref stream. */
static int check_live_objects(struct rw *rw, ps_doc *v, uint32_t enc_num)
{
	ps_doc *doc = rw->doc;
	uint32_t a, b, num, self = 0;

	if (v->nsections != 1)
		return ps_err(rw->ctx, PDFSTAMP_E_INTERNAL, "self-check: the output has %d cross-reference sections",
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
		want = (in && num != doc->encrypt_num && !is_dropped(rw, num)) || num == enc_num || num == self;
		if (want != got)
			return ps_err(rw->ctx, PDFSTAMP_E_INTERNAL, "self-check: object %u is %s the output", num,
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

/* The page tree of D from /Root: the number of pages, or in WHY the first
 * thing that stops the walk (a node reached twice, which catches cycles,
 * a kid that is not an indirect dictionary, an object that cannot be
 * read).  Objects are loaded uncached and freed at once, and every node is
 * visited at most once, so the walk is bounded by the file.  ROOT_OK says
 * whether /Root resolved to a dictionary.  Returns 0 or PDFSTAMP_E_NOMEM. */
static int walk_pages(ps_doc *d, int *root_ok, int64_t *pages, char *why, size_t whylen)
{
	ps_obj *r = ps_dict_get(d->trailer, "Root"), *node = NULL, *kids, *p;
	struct numset seen = {NULL, 0, 0};
	uint32_t *stack = NULL, num;
	size_t sp = 0, cap = 0, i;
	int rc = 0, k;

	*root_ok = 0;
	*pages = 0;
	why[0] = 0;
	if (r && r->kind == PS_REF && (k = ps_doc_load(d, r->u.ref.num, &node)) == PDFSTAMP_E_NOMEM)
		goto oom;
	if (!r || r->kind != PS_REF || !node || node->kind != PS_DICT) {
		snprintf(why, whylen, "/Root is not an indirect dictionary");
		goto out;
	}
	*root_ok = 1;
	if (numset_add(&seen, r->u.ref.num) < 0)
		goto oom;
	p = ps_dict_get(node, "Pages");
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

/* Self-check, part 3: the output's /Root resolves, and its page tree has
 * the input's pages (when the input's page tree can be walked at all). */
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

static int rewrite(ps_doc *doc, const struct pdfstamp_rewrite_opts *o, struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = doc->ctx;
	struct rw rw;
	struct rw_batch *b = NULL;
	uint8_t key[32], id[16];
	char ver[16], hdr[64];
	uint32_t num, enc_num, root_num = 0, maxnum = 0;
	int stream_form = 0, rc, i, started = 0;
	double t0 = now_seconds();
	size_t batch_bytes = 0;
	ps_doc *v = NULL;
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
	if ((rc = check_signatures(doc, o->flags)) < 0)
		return rc;
	{
		/* A file without a catalog is refused, not rewritten: the
		 * self-check requires the output's /Root (note 5). */
		ps_obj *r = ps_dict_get(doc->trailer, "Root"), *cat = NULL;
		if (r && r->kind == PS_REF && (rc = ps_doc_resolve(doc, r, &cat)) < 0)
			return rc;
		if (!cat || cat->kind != PS_DICT)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "the document has no catalog (/Root is not an indirect dictionary)");
	}
	/* new key and security parameters (Alg. 8, 9, 10) */
	rw.nsp.p = o->set_permissions ? o->permissions : (doc->encrypted ? doc->perms : -4);
	rw.nsp.encrypt_metadata = doc->encrypted ? doc->sp.encrypt_metadata : 1;
	if ((rc = ps_random_os(ctx, key, sizeof key)) < 0 || /* file key: the OS, never the DRBG */
	    (rc = ps_sec_make(ctx, &rw.nsp, o->user_password ? o->user_password : "", o->user_len,
	                      o->owner_password ? o->owner_password : "", o->owner_len, key)) < 0 ||
	    (rc = ps_cipher_init(ctx, &rw.newc, key)) < 0)
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
	{
		ps_obj *r = ps_dict_get(doc->trailer, "Root");
		if (r && r->kind == PS_REF)
			root_num = r->u.ref.num;
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
	stream_form = ps_rewrite_xref_form(stream_form, rw.woff);
	if ((rc = write_xref(&rw, enc_num, id, stream_form)) < 0 || (rc = wflush(&rw)) < 0)
		goto out;
	if (o->progress)
		o->progress(o->progress_ud, doc->size, doc->size);
	ps_fault("after-write");
	/* verify with the new password before anything is renamed (note 5) */
	{
		struct pdfstamp_verify_report rep, in;
		char why[sizeof ctx->errmsg];
		if ((rc = pdfstamp_doc_open(ctx, &v, ps_outfile_path(&rw.of), PS_OPEN_NO_RECOVER)) < 0 ||
		    (rc = pdfstamp_doc_auth(v, o->owner_password ? o->owner_password : "", o->owner_len, 0)) < 0 ||
		    (rc = pdfstamp_verify(v, &rep, NULL, NULL)) < 0) {
			/* Members of object streams other than the catalog are carried
			 * over inside their stream without being parsed, so damage there
			 * shows up only now.  If the input has it too (only on this
			 * failure path is the input verified), it is the input's fault. */
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
		if ((rc = check_live_objects(&rw, v, enc_num)) < 0 || (rc = check_page_trees(doc, v)) < 0)
			goto out;
	}
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
	pdfstamp_doc_close(v);
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
	ps_cipher_free(&rw.newc);
	ps_wipe(key, sizeof key);
	ps_wipe(&rw.nsp, sizeof rw.nsp);
	return rc;
}

/* Version 1 has no output_fd: PDFSTAMP_WRITE_TO_FD needs version 2. */
static int check_opts(ps_ctx *ctx, const struct pdfstamp_rewrite_opts *o)
{
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

	if (st)
		memset(st, 0, sizeof *st);
	if ((rc = check_opts(ctx, o)) < 0)
		return rc;
	if (!doc->encrypted)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not encrypted; use encrypt");
	if (!doc->authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	if (doc->authenticated == 1) {
		/* the user password is enough only when the owner password is empty */
		uint8_t k[32];
		int owner = 0, perms = 0;
		rc = ps_sec_authenticate(ctx, &doc->sp, "", 0, k, &owner, &perms);
		ps_wipe(k, sizeof k);
		if (rc < 0 || !owner)
			return ps_err(ctx, PDFSTAMP_E_PERM, "rotating the key needs the owner password");
	}
	return rewrite(doc, o, st);
}

int pdfstamp_encrypt(pdfstamp_doc *doc, const struct pdfstamp_rewrite_opts *o, struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = doc->ctx;
	int rc;

	if (st)
		memset(st, 0, sizeof *st);
	if ((rc = check_opts(ctx, o)) < 0)
		return rc;
	if (doc->encrypted)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is already encrypted; use rotate to change its key");
	return rewrite(doc, o, st);
}

/* ---- verify ------------------------------------------------------------------------ */

static int count_string(void *ud, ps_obj *str, const ps_obj *parent, const char *key)
{
	(*(int64_t *)ud)++;
	return 0;
}

int pdfstamp_verify(pdfstamp_doc *doc, struct pdfstamp_verify_report *r, pdfstamp_progress_fn progress,
                    void *ud)
{
	ps_ctx *ctx = doc->ctx;
	ps_buf data = PS_BUF_INIT;
	uint32_t num;
	int rc;

	memset(r, 0, sizeof *r);
	data.secret = 1;
	if (doc->encrypted && !doc->authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	if (doc->encrypted && !doc->perms_ok && doc->authenticated) {
		r->faults++;
		snprintf(r->first_fault, sizeof r->first_fault, "/Perms does not match /P and /EncryptMetadata");
	}
	for (num = ps_xref_next(doc, 0); num != 0; num = ps_xref_next(doc, num)) {
		const ps_xent *e = ps_xref_get(doc, num);
		ps_obj *o = NULL;

		/* load (uncached) decrypts every string; memory stays flat */
		rc = ps_doc_load(doc, num, &o);
		if (rc == 0 && o) {
			r->objects++;
			ps_obj_walk_strings(o, count_string, &r->strings);
			if (o->kind == PS_STREAM) {
				r->streams++;
				rc = ps_doc_stream_data(doc, num, o, 0, &data);
			}
		}
		ps_obj_free(o);
		if (rc < 0) {
			if (!r->faults++) {
				r->first_fault_object = num;
				snprintf(r->first_fault, sizeof r->first_fault, "%s", ctx->errmsg);
			}
		}
		if (progress && e->type == 1 && (num & 1023) == 0)
			progress(ud, e->off, doc->size);
	}
	ps_buf_free(&data);
	if (progress)
		progress(ud, doc->size, doc->size);
	if (r->faults)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "%lld object(s) failed verification; first: %s",
		              (long long)r->faults, r->first_fault);
	return 0;
}
