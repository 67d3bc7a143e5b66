/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rewrite.c - full rewrite: key rotation (`rotate`) and encryption of a
 * plaintext file (`encrypt`).  Whole-file verification is verify.c; the
 * signature policy checked first is policy.c (ps_policy_rewrite).
 *
 * DESIGN NOTES
 *
 * Why a rewrite: an incremental update that swaps /Encrypt leaves the old
 * /UE and /OE in the file, and they still unwrap the same key with the old
 * password (Algorithm 2.A steps e-f, ISO 32000-2 7.6.4.3.3).  Rotation
 * therefore draws a new random file key and re-encrypts every string and
 * stream: one clean revision.
 *
 * Pipeline (one pass over the file, memory bounded by the window):
 *
 *   reader (this thread)      workers (-j N)            writer (this thread)
 *   read segments, parse   -> decrypt old / encrypt  -> write in file order,
 *   objects, in batches       new, serialise           record offsets
 *
 *  1. Objects are parsed from the segments of the sequential reader (note
 *     7; ps_doc_parse_at for the few it cannot serve), owned and never
 *     cached, so memory does not grow with the object count; at most
 *     rw->wcap batches (and the one being filled) are in flight.
 *  2. Stream data is not inflated: its raw bytes are decrypted with the old
 *     key and encrypted with the new one.  Object streams are re-encrypted
 *     as a whole and their members keep their (stream, index) entries; the
 *     output then has an xref stream, else a classic table.  Either lists
 *     only the numbers in use (subsections, /Index ranges), from offsets
 *     kept per object written (rw->offs, rwxref.c): neither the memory nor the
 *     output follows the highest object number (issue 11).
 *  3. Never encrypted (old or new): the /Encrypt dictionary (rewritten from
 *     scratch), xref streams (dropped: a new xref is written), signature
 *     /Contents, Identity crypt filters, metadata with EncryptMetadata
 *     false.  Dropped, decided by object number before anything is read:
 *     the old /Encrypt object, the chain's own xref streams (the sections'
 *     streams and hybrid /XRefStm streams: ps_doc_is_xref_stream) and the
 *     linearization dictionary (its offsets would be wrong; only the real
 *     one: rwdrop.c ps_rwdrop_list).  Never by content: an ordinary stream that
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
 *  7. Sequential I/O.  The input is read in file order, in segments of
 *     about 4 MB (seqread.c, the reader shared with the self-check), one
 *     pread each.  Each object is parsed from its bytes there, and its
 *     stream data is decrypted, re-encrypted and written in place (zero
 *     copies); a segment goes when the last job in it has been written
 *     (reference counts, this thread only).  What a segment cannot serve
 *     is read on its own (read_job; careful_job, in its turn so that the
 *     output order holds, when a worker cannot parse it).  rw->offs, in
 *     file order, is sorted by number at the end (ps_rwoffs_sort, which catches
 *     an object written twice).  Writes (io.c ps_wstream): a batch's
 *     headers and payloads (in their segment) are listed, not copied, and
 *     written by one pwritev per MB, all before the batch goes.  The main
 *     thread writes batch K while the workers parse and encrypt the next ones
 *     (the window: note 10) and runs a batch no worker has taken rather
 *     than wait (drain_one): reading, writing and encrypting overlap on two
 *     vCPUs without another thread.
 *  8. Batches for the lanes.  The engine takes a batch's jobs longest
 *     first and refills a lane as soon as its job ends (aesmb.c note 3),
 *     so a batch keeps all LANES lanes busy while its stream bytes are at
 *     least LANES times its largest stream.  A batch is closed only once
 *     bytes >= LANES * largest (and >= BATCH_MIN), or at BATCH_OBJECTS
 *     objects or BATCH_MAX bytes: up to 16 images run side by side, small
 *     objects filling the lanes around them; only an object over BATCH_MAX
 *     / LANES (4 MB) can run with idle lanes beside it (one CBC chain is
 *     serial anyway).
 *  9. The final fsync overlaps the work: the output's writer (io.c
 *     ps_wstream) starts the writeback of every 4 MB written, and of the
 *     rest once the xref is out (sync_file_range, from a thread of io.c's
 *     own: a full disk queue never stalls the writer), and flushes it with
 *     fdatasync every 32 MB, so the disk writes run during the encryption.
 *     The fsync itself, the only durability point, starts on that thread
 *     (ps_wstream_sync_start) and runs during the self-check, which only
 *     reads; the rename (note 5) waits for both, so a failed check or sync
 *     still replaces nothing.  A temporary file only copied to a descriptor
 *     (`-o -`) is never synced, so it gets no writeback either.
 * 10. Memory is mostly the stream bytes of the batches in flight and of
 *     the one being filled, and a batch holds LANES times its largest
 *     stream (note 8: 12 MB for 776 KB scans).  So the window (at most a
 *     batch per worker plus two) also keeps its stream bytes under
 *     INFLIGHT_MAX: once a batch is submitted (in memory already, the
 *     workers' to take), the reader writes out the oldest batches until
 *     the window is under it again or holds that batch alone, and only
 *     then reads on.  Large batches thus come two at
 *     a time (one encrypted or written, one filled), small ones up to the
 *     count.  Segment buffers are reused (seqread.c note 2).
 * 11. One object's tree at a time.  A worker parses an object, converts
 *     its strings, lays out its stream for the batch encryption and
 *     serialises its dictionary at once (run_batch), while the tree is in
 *     the cache; the tree then goes, and its memory -- from the thread's
 *     arena (obj.c note 9) -- serves the next object.  So a batch keeps its
 *     source bytes and their serialised headers, never its parsed trees:
 *     a hostile file of huge arrays costs one object's tree per thread, not
 *     a batch's worth (~20 times the batch's bytes).  The headers can grow
 *     too (an empty string becomes 66 bytes of hex ciphertext, whatever
 *     the object's kind), so once a batch's serialised headers pass
 *     BATCH_OUT (16 MB; an ordinary batch has a few MB at most) the rest
 *     of it goes the careful way: the writer reads, converts and writes
 *     those objects one at a time and lets each go before the next
 *     (write_batch).  An object whose header would exceed what a reader
 *     takes (PS_OBJ_MAX, input.h) is refused by name.
 * 12. The plaintext is summed.  Just before the engine encrypts a stream
 *     (run_batch, careful_job), the sum of its plaintext (rwcheck.c
 *     ps_rwcheck_sum) goes with the job into its row of rw->offs; the
 *     self-check then requires every stream of the output to decrypt to
 *     bytes of that sum, and every summed stream to be there (rwcheck.c
 *     note 8).  Else a stream whose middle blocks went wrong here would
 *     pass the self-check (its CBC padding still sound) and replace the
 *     target.  A test build shows it with PDFSTAMP_FAULT=corrupt:plaintext
 *     (io.h): the first bit of each stream of 16+ bytes, once summed.
 * 13. Memory is reused, not fresh (a fresh page costs far more than its
 *     bytes: buf.c): nothing is allocated per object once the window is
 *     full.  A batch serialises its headers into its one buffer (hdr; a
 *     job keeps offset and length), keeps the engine's job list (sj), and
 *     once written goes to rw->spare for the next one (this thread only);
 *     a careful job's header goes through the writer's chdr.  The reader's
 *     segment buffers go on to the self-check (rw->pool, rwcheck.c note 6).
 * 14. Dry run (PDFSTAMP_WRITE_DRY_RUN; dryrun.c note 2).  Everything above
 *     runs, the policy and the catalog first, but the output is judged
 *     (dryrun.c note 4), not opened: the writer has no file (fd -1) and
 *     only counts, so bytes_written is the size the output would have.
 *     No temporary file, sync, self-check or rename (commit is skipped).
 * 15. To certificates (rewrite options version 3, recipients): the new
 *     handler is the public-key one (pubsec.c note 5: adbe.pkcs7.s5,
 *     AESV3, one envelope per recipient) instead of R6; everything else
 *     is the same engine.  The self-check cannot use a recipient's private
 *     key, so it opens the output with the seed (rw->seed, wiped at the
 *     end), deriving the key again from the /Recipients as written.  A
 *     certificate-encrypted input is rotated by a recipient granted every
 *     permission (pubsec.c note 4), the public-key counterpart of the
 *     owner password; to passwords or to new recipients alike.
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
#include "cpu.h"
#include "xrefw.h"
#include "policy.h"
#include "seqread.h"
#include "dryrun.h"
#include "pubsec.h"

#define BATCH_OBJECTS 8192             /* note 8: a batch's limits */
#define BATCH_MIN ((size_t)4 << 20)
#define BATCH_MAX ((size_t)64 << 20)
#define BATCH_OUT ((size_t)16 << 20)   /* note 11 */
#define LANES 16                       /* the widest kernel of the AES engine */
#define INFLIGHT_MAX ((size_t)16 << 20) /* note 10: stream bytes in the window */

/* Seconds on CLK: CLOCK_MONOTONIC for the run; the AES phases take the
 * CPU time of the calling thread (cpu_seconds), so that a worker waiting
 * for the CPU (two threads on one core) does not count as time in AES. */
static double clock_seconds(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
#define cpu_seconds() clock_seconds(CLOCK_THREAD_CPUTIME_ID)

/* ---- jobs and batches ----------------------------------------------------------- */

struct rw_job {
	uint32_t num;
	uint16_t gen;
	ps_obj *obj;           /* owned; strings as in the file unless plain_strings */
	int plain_strings;     /* strings already decrypted (object came from an object stream) */
	int extensions;        /* the catalog: add the ADBE extension level 8 */
	int root;              /* the catalog */
	ps_seq_obj so;         /* where the reader found it; so.seg (one reference) holds
	                        * its bytes until the worker parses it (note 7) */
	int careful;           /* it could not be parsed from so.seg: the writer reads it */
	uint8_t *src;          /* stream bytes as in the file: in so.seg, else raw.data */
	size_t srclen;
	ps_buf raw;            /* stream bytes read on their own (objects outside any segment) */
	ps_buf data;           /* stream bytes for the output when they cannot
	                        * be transformed in place */
	uint8_t *pay;          /* the stream bytes to write (src or
	                        * data.data), NULL for non-streams */
	size_t paylen;
	int plaintext;         /* pay holds plaintext waiting for the batch encryption */
	int reenc;             /* in place: old ciphertext to plaintext, batched (reenc_all) */
	int encrypt;           /* data waits for the batch's multi-lane encryption */
	int summed;            /* SUM is its stream's plaintext's (note 12) */
	uint64_t sum;
	ps_sec_job job;
	size_t hoff, hlen;     /* its serialised header: in its batch's hdr, or the
	                        * writer's chdr when careful (note 13) */
};

struct rw_batch {
	struct rw_job *jobs;
	size_t n;
	size_t cap;            /* jobs allocated (grows to BATCH_OBJECTS) */
	size_t bytes, maxlen;  /* stream bytes, and the largest stream (note 8) */
	ps_buf hdr;            /* the jobs' serialised headers, back to back (note 13) */
	ps_sec_job *sj;        /* the engine's view of the jobs (run_batch), room for cap */
	int state;             /* 0 queued, 1 taken, 2 done */
	int rc;
	char err[256];
	struct rw_batch *next; /* on rw->spare */
};

struct rw {
	ps_doc *doc;
	const ps_xref *xref;           /* its index, loaded whole */
	struct ps_doc_security ds;     /* its security state: the old handler (NULL: plaintext) */
	ps_ctx *ctx;
	unsigned cpu;                  /* ps_cpu_bits: the plaintext sum's kernel */
	ps_sec *nsec;                  /* the new handler (its own key schedules) */
	int to_certs;                  /* nsec is a public-key handler (note 15) */
	uint8_t seed[PS_PUBSEC_SEED];  /* its seed, for the self-check (wiped) */
	ps_rwoffs offs;                /* objects written (rwxref.c: file order,
	                                * then sorted by number) */
	uint32_t *dropped;             /* sorted: xref streams and the linearization dictionary */
	size_t ndropped;
	/* pool */
	pthread_mutex_t mu;
	pthread_mutex_t wmu;           /* serialises warnings (fwd_warn) */
	pdfstamp_warn_fn warn;         /* the caller's warning callback, restored at the end */
	void *warn_ud;
	pthread_cond_t cv;
	struct rw_batch **win;         /* ring of batches in flight, in file order */
	size_t wcap, whead, wcount;
	size_t inflight;               /* their stream bytes (note 10; this thread only) */
	int stop;
	int nthreads;
	pthread_t *threads;
	/* stats, under mu */
	int64_t streams, strings, payload;
	double dec_seconds, enc_seconds;
	/* writer */
	ps_outfile of;
	ps_wstream w;                  /* the output's writer (io.c; note 9) */
	ps_buf chdr;                   /* a careful job's header (note 13) */
	ps_arena *ar;                  /* this thread's parses (note 11; NULL: malloc) */
	struct rw_batch *spare;        /* batches written, for reuse (note 13; this thread only) */
	struct ps_segpool *pool;       /* the reader's segment buffers, for
	                                * the self-check (note 13) */
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
	return ps_dict_put(ext, "ADBE", adbe) < 0 ? ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory")
	                                          : 0;
}

/* What a batch adds to the statistics, added once per batch (under rw->mu). */
struct rw_tally {
	int64_t streams, strings, payload;
	double dec;
};

static void tally_add(struct rw *rw, const struct rw_tally *t)
{
	pthread_mutex_lock(&rw->mu);
	rw->streams += t->streams;
	rw->strings += t->strings;
	rw->payload += t->payload;
	rw->dec_seconds += t->dec;
	pthread_mutex_unlock(&rw->mu);
}

/* The worker's part, phase 1: strings from the old key to the new one;
 * stream bytes decrypted (pipelined) and laid out as AESV3 plaintext for
 * the batch's multi-lane encryption; in place (the common case) the
 * decryption is left to reenc_all, timed once per batch. */
static int prepare(struct rw *rw, ps_ctx *wctx, struct rw_job *j, struct rw_tally *t)
{
	ps_sec *osec = rw->ds.sec;
	ps_buf plain = PS_BUF_INIT;
	const uint8_t *src = j->src;
	size_t srclen = j->srclen;
	double aes = 0;
	int64_t payload = 0, nstrings = 0;
	int rc = 0;

	plain.secret = j->data.secret = 1;
	if (j->extensions && (rc = add_extensions(wctx, j->obj)) < 0)
		goto out;
	/* strings: old handler to new (design note 3 for the exemptions) */
	if ((rc = ps_sec_convert_strings(wctx, j->plain_strings ? NULL : osec, rw->nsec, j->num,
	                                 j->gen, j->obj, &nstrings)) < 0)
		goto out;
	if (j->obj->kind == PS_STREAM) {
		int was = ps_sec_stream_encrypted(osec, j->obj);
		/* in place needs IV + at least one block (an AESV2 IV alone reads
		 * as empty data: the decrypt path takes it) */
		int in_place = was && srclen >= 32 &&
		               ps_sec_reencrypt_in_place(osec, rw->nsec, j->obj);
		payload = (int64_t)srclen;
		j->pay = j->src;
		j->paylen = srclen;
		if (was && !in_place) {
			double t0 = cpu_seconds();
			rc = ps_sec_decrypt_stream(wctx, osec, j->obj, j->num, j->gen, src, srclen,
			                           &plain);
			aes = cpu_seconds() - t0;
			if (rc < 0)
				goto out;
			src = plain.data;
			srclen = plain.len;
		}
		/* decrypted with the input's own crypt filter, if it names one:
		 * the output defines only its /StmF (7.4.10) */
		if ((rc = ps_sec_drop_crypt_filter(wctx, j->obj)) < 0)
			goto out;
		j->encrypt = ps_sec_stream_encrypted(rw->nsec, j->obj);
		if (in_place && !j->encrypt) {
			rc = ps_err(wctx, PDFSTAMP_E_INTERNAL,
			            "a stream encrypted in the input would be written in clear");
			goto out;
		}
		if (in_place) {
			j->reenc = 1; /* the common case: old ciphertext to new, in place */
		} else {
			j->pay = NULL;
			if (j->encrypt) {
				size_t elen = ps_sec_encrypted_len(rw->nsec, srclen);
				if (ps_buf_reserve(&j->data, elen) < 0) {
					rc = ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
					goto out;
				}
				if ((rc = ps_sec_encrypt_prepare(wctx, rw->nsec, j->num, j->gen,
				                                 src, srclen, j->data.data,
				                                 &j->job)) < 0)
					goto out;
				j->data.len = elen;
			} else {
				ps_buf_append(&j->data, src, srclen);
			}
			if (j->data.oom) {
				rc = ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
				goto out;
			}
			j->pay = j->data.data;
			j->paylen = j->data.len;
		}
		/* from here on PAY holds plaintext until the batch encryption
		 * (batch_clear wipes it if that never comes) */
		j->plaintext = j->encrypt;
		if (ps_dict_put(j->obj->u.stm.dict, "Length", ps_new_int((int64_t)j->paylen)) < 0) {
			rc = ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		t->payload += payload;
		t->streams++;
		t->dec += aes;
	}
	t->strings += nstrings;
out:
	if (rc < 0 && wctx->errcode == rc)
		ps_err_wrap(wctx, rc, "object %u", j->num);
	ps_buf_free(&plain);
	if (j->pay != j->raw.data)
		ps_buf_free(&j->raw);
	return rc;
}

/* Phase 2 of the in-place jobs among JOBS[0..N): the old ciphertext
 * decrypted in place, ready for the multi-lane encryption (one CPU-time
 * reading for them all). */
static int reenc_all(struct rw *rw, ps_ctx *wctx, struct rw_job *jobs, size_t n, struct rw_tally *t)
{
	double t0 = cpu_seconds();
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		struct rw_job *j = &jobs[i];
		if (!j->reenc)
			continue;
		j->reenc = 0;
		if ((rc = ps_sec_reencrypt_prepare(wctx, rw->ds.sec, rw->nsec, j->num, j->gen,
		                                   j->src, j->srclen, &j->job)) < 0 &&
		    wctx->errcode == rc)
			ps_err_wrap(wctx, rc, "object %u", j->num);
	}
	t->dec += cpu_seconds() - t0;
	return rc;
}

/* Right after prepare (note 11): "N G obj <<dict>>" (and "stream")
 * appended to HDR (note 13), the tree freed; the writer appends the
 * payload, once it is ciphertext, without copying it again. */
static int finish(ps_ctx *wctx, struct rw_job *j, ps_buf *hdr)
{
	j->hoff = hdr->len;
	ps_serialize_obj_header(hdr, j->num, j->gen);
	ps_serialize(hdr, j->obj);
	ps_buf_puts(hdr, j->obj->kind == PS_STREAM ? "\nstream\r\n" : "\nendobj\n");
	ps_obj_free(j->obj);
	j->obj = NULL;
	if (hdr->oom)
		return ps_err(wctx, PDFSTAMP_E_NOMEM, "out of memory");
	j->hlen = hdr->len - j->hoff;
	/* encrypted strings grow (an empty one to 66 bytes): no reader of
	 * ours, the self-check first, would take more than PS_OBJ_MAX */
	if (j->hlen > PS_OBJ_MAX)
		return ps_err(wctx, PDFSTAMP_E_UNSUPPORTED,
		              "object %u would take %zu bytes once encrypted, more than the %zu MB "
		              "an object may have", j->num, j->hlen, PS_OBJ_MAX >> 20);
	return 0;
}

/* Note 12: the sum of J's stream plaintext, its job's bytes less their
 * PKCS#7 padding (ISO 32000-2 7.6.3.1), taken just before the engine
 * encrypts them; the self-check's decryption of the output must match. */
static void sum_job(const struct rw *rw, struct rw_job *j)
{
	const ps_sec_job *s = &j->job;
	size_t pad = s->len ? s->buf[s->len - 1] : 0;

	j->sum = ps_rwcheck_sum(rw->cpu, s->buf, pad <= s->len ? s->len - pad : 0);
	j->summed = 1;
	if (ps_fault_corrupt("plaintext") && s->len > 16)
		s->buf[0] ^= 1; /* a test build's way to show the self-check catching it */
}

/* A batch: each object prepared and its header serialised in one go
 * (note 11: its tree, from AR, is gone before the next is parsed), then
 * all its streams encrypted in one call to the multi-lane engine
 * (independent CBC chains, 8 or 16 at a time).  Only ciphertext leaves
 * this function. */
static int run_batch(struct rw *rw, ps_ctx *wctx, ps_arena *ar, struct rw_batch *b)
{
	struct rw_tally t = {0};
	size_t i, n = 0;
	double t0;
	int rc = 0;

	for (i = 0; i < b->n && rc == 0; i++) {
		struct rw_job *j = &b->jobs[i];
		if (b->hdr.len > BATCH_OUT) { /* note 11: the rest one at a time, by the writer */
			j->careful = 1;
			continue;
		}
		if (!j->obj) { /* from the reader's segment (note 7) */
			ps_seq_parse(wctx, ar, &j->so, &j->obj, &j->src, &j->srclen);
			if (!j->obj) {
				j->careful = 1;
				ps_arena_reset(ar);
				continue;
			}
			j->extensions = j->root && j->obj->kind == PS_DICT;
		}
		if ((rc = prepare(rw, wctx, j, &t)) == 0)
			rc = finish(wctx, j, &b->hdr);
		ps_obj_free(j->obj); /* (finish's, or the failed prepare's) before the reset */
		j->obj = NULL;
		ps_arena_reset(ar);
	}
	if (rc == 0)
		rc = reenc_all(rw, wctx, b->jobs, b->n, &t);
	tally_add(rw, &t);
	if (rc == 0) {
		for (i = 0; i < b->n; i++)
			if (b->jobs[i].plaintext) {
				sum_job(rw, &b->jobs[i]);
				b->sj[n++] = b->jobs[i].job;
			}
		t0 = cpu_seconds();
		rc = ps_sec_run_batch(wctx, rw->nsec, b->sj, n);
		for (i = 0; i < b->n && rc == 0; i++)
			b->jobs[i].plaintext = 0;
		pthread_mutex_lock(&rw->mu);
		rw->enc_seconds += cpu_seconds() - t0;
		pthread_mutex_unlock(&rw->mu);
		ps_wipe(b->sj, n * sizeof *b->sj);
	}
	if (rc < 0)
		snprintf(b->err, sizeof b->err, "%s", wctx->errmsg);
	return rc;
}

/* Warnings of every thread of the rewrite (the workers parse and convert
 * too) reach the caller's callback one at a time. */
static void fwd_warn(void *ud, const char *msg)
{
	struct rw *rw = ud;

	pthread_mutex_lock(&rw->wmu);
	if (rw->warn)
		rw->warn(rw->warn_ud, msg);
	pthread_mutex_unlock(&rw->wmu);
}

static void *worker(void *arg)
{
	struct rw *rw = arg;
	ps_ctx *wctx = NULL;
	ps_arena *ar = ps_arena_new(); /* NULL: the same objects from malloc */

	if (pdfstamp_ctx_new(&wctx) < 0)
		wctx = NULL;
	if (wctx) {
		wctx->warn = fwd_warn;
		wctx->warn_ud = rw;
	}
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
			b->rc = run_batch(rw, wctx, ar, b);
		else {
			b->rc = PDFSTAMP_E_NOMEM;
			snprintf(b->err, sizeof b->err, "out of memory");
		}
		pthread_mutex_lock(&rw->mu);
		b->state = 2;
		pthread_cond_broadcast(&rw->cv);
	}
	pthread_mutex_unlock(&rw->mu);
	ps_arena_free(ar);
	pdfstamp_ctx_free(wctx);
	return NULL;
}

/* B's jobs let go (their segments, trees, buffers), B itself kept. */
static void batch_clear(struct rw_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (b->jobs[i].plaintext && b->jobs[i].pay) /* a failed batch:
		                                             * no plaintext left behind */
			ps_wipe(b->jobs[i].pay, b->jobs[i].paylen);
		ps_seq_seg_release(b->jobs[i].so.seg);
		ps_obj_free(b->jobs[i].obj);
		ps_buf_free(&b->jobs[i].raw);
		ps_buf_free(&b->jobs[i].data);
	}
	b->n = 0;
}

static void batch_free(struct rw_batch *b)
{
	if (!b)
		return;
	batch_clear(b);
	ps_buf_free(&b->hdr);
	free(b->sj);
	free(b->jobs);
	free(b);
}

/* Note 13: a batch written (or failed) goes to rw->spare for the next
 * one, its arrays and header buffer with it. */
static void batch_done(struct rw *rw, struct rw_batch *b)
{
	if (!b)
		return;
	batch_clear(b);
	if (b->hdr.oom)
		ps_buf_free(&b->hdr); /* and clears the flag */
	ps_buf_reset(&b->hdr);
	b->bytes = b->maxlen = 0;
	b->state = 0;
	b->rc = 0;
	b->err[0] = 0;
	b->next = rw->spare;
	rw->spare = b;
}

/* ---- the writer ---------------------------------------------------------------- */

/* Object NUM starts at the current output offset (rwxref.c note 1); J,
 * if not NULL, its job (the sum of its stream's plaintext: note 12). */
static int record_off(struct rw *rw, uint32_t num, uint16_t gen, const struct rw_job *j)
{
	int rc = ps_rwoffs_add(rw->ctx, &rw->offs, num, gen, rw->w.off);

	if (rc == 0 && j && j->summed) {
		rw->offs.v[rw->offs.n - 1].summed = 1;
		rw->offs.v[rw->offs.n - 1].sum = j->sum;
	}
	return rc;
}

static void job_clear(struct rw_job *j);
static int read_job(struct rw *rw, uint32_t num, int root, struct rw_job *j, int *skip);

/* A job the worker could not parse from its segment: read, transformed
 * and serialised here, the careful way (note 7). */
static int careful_job(struct rw *rw, struct rw_job *j)
{
	struct rw_tally t = {0};
	uint32_t num = j->num;
	int root = j->root, skip, rc;

	job_clear(j);
	if ((rc = read_job(rw, num, root, j, &skip)) < 0 ||
	    (rc = prepare(rw, rw->ctx, j, &t)) < 0 || (rc = reenc_all(rw, rw->ctx, j, 1, &t)) < 0)
		return rc;
	tally_add(rw, &t);
	if (j->plaintext) {
		sum_job(rw, j);
		if ((rc = ps_sec_run_batch(rw->ctx, rw->nsec, &j->job, 1)) < 0)
			return rc;
	}
	j->plaintext = 0;
	return finish(rw->ctx, j, &rw->chdr);
}

static int write_batch(struct rw *rw, struct rw_batch *b)
{
	size_t i;
	int rc;

	if (b->rc < 0)
		return ps_err(rw->ctx, b->rc, "%s", b->err);
	for (i = 0; i < b->n; i++) {
		struct rw_job *j = &b->jobs[i];
		int careful = j->careful; /* careful_job starts the job afresh */
		if (careful && (rc = careful_job(rw, j)) < 0)
			return rc;
		if ((rc = record_off(rw, j->num, j->gen, j)) < 0 ||
		    (rc = ps_wstream_put_ref(&rw->w,
		                             (careful ? rw->chdr.data : b->hdr.data) + j->hoff,
		                             j->hlen)) < 0)
			return rc;
		if (j->pay && ((rc = ps_wstream_put_ref(&rw->w, j->pay, j->paylen)) < 0 ||
		               (rc = ps_wstream_put_ref(&rw->w, "\nendstream\nendobj\n", 18)) < 0))
			return rc;
		if (careful) { /* written now, so that each goes before the next (note 11) */
			if ((rc = ps_wstream_drain(&rw->w)) < 0)
				return rc;
			ps_buf_reset(&rw->chdr);
			ps_buf_free(&j->data);
			ps_buf_free(&j->raw);
			j->pay = NULL;
		}
	}
	return ps_wstream_drain(&rw->w); /* before the batch, which holds the pieces, goes */
}

/* Waits for the oldest batch in flight and writes it; meanwhile runs any
 * batch no worker has taken yet, rather than wait idle (a worker that
 * lost its CPU must not stall the pipeline). */
static int drain_one(struct rw *rw)
{
	struct rw_batch *b;
	int rc;

	pthread_mutex_lock(&rw->mu);
	b = rw->win[rw->whead];
	while (b->state != 2) {
		struct rw_batch *q = NULL;
		size_t i;
		for (i = 0; i < rw->wcount && !q; i++)
			if (rw->win[(rw->whead + i) % rw->wcap]->state == 0)
				q = rw->win[(rw->whead + i) % rw->wcap];
		if (!q) {
			pthread_cond_wait(&rw->cv, &rw->mu);
			continue;
		}
		q->state = 1; /* no worker has taken it yet: the writer runs it */
		pthread_mutex_unlock(&rw->mu);
		q->rc = run_batch(rw, rw->ctx, rw->ar, q);
		pthread_mutex_lock(&rw->mu);
		q->state = 2;
		pthread_cond_broadcast(&rw->cv);
	}
	rw->whead = (rw->whead + 1) % rw->wcap;
	rw->wcount--;
	pthread_mutex_unlock(&rw->mu);
	rw->inflight -= b->bytes;
	rc = write_batch(rw, b);
	batch_done(rw, b);
	return rc;
}

static int submit(struct rw *rw, struct rw_batch *b)
{
	int rc;

	if (rw->nthreads == 0) { /* -j 1: no threads, same code path */
		b->rc = run_batch(rw, rw->ctx, rw->ar, b);
		rc = write_batch(rw, b);
		batch_done(rw, b);
		return rc;
	}
	while (rw->wcount == rw->wcap)
		if ((rc = drain_one(rw)) < 0) {
			batch_done(rw, b);
			return rc;
		}
	rw->inflight += b->bytes;
	pthread_mutex_lock(&rw->mu);
	rw->win[(rw->whead + rw->wcount) % rw->wcap] = b;
	rw->wcount++;
	pthread_cond_broadcast(&rw->cv);
	pthread_mutex_unlock(&rw->mu);
	/* note 10: B is already in memory and now the workers' to take; the
	 * reader reads no more until the window is back under INFLIGHT_MAX
	 * (or holds B alone) */
	while (rw->wcount > 1 && rw->inflight > INFLIGHT_MAX)
		if ((rc = drain_one(rw)) < 0)
			return rc;
	return 0;
}

/* ---- the reader ---------------------------------------------------------------- */

/* Is NUM dropped (design note 3)? */
static int is_dropped(const struct rw *rw, uint32_t num)
{
	return ps_rwdrop_has(rw->dropped, rw->ndropped, num);
}

static int read_job_at(struct rw *rw, uint32_t num, int root, struct rw_job *j, int *skip)
{
	ps_doc *doc = rw->doc;
	const ps_xent *e = ps_xref_get(rw->xref, num);
	int64_t len;
	int rc;

	*skip = 0;
	memset(j, 0, sizeof *j);
	if (!e)
		return ps_err(rw->ctx, PDFSTAMP_E_INTERNAL, "not in use");
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
				return ps_err(rw->ctx, PDFSTAMP_E_FORMAT,
				              "its stream is truncated");
			j->src = j->raw.data;
			j->srclen = j->raw.len;
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

/* Object NUM read on its own (outside any segment, or the careful way):
 * its errors name it. */
static int read_job(struct rw *rw, uint32_t num, int root, struct rw_job *j, int *skip)
{
	int rc = read_job_at(rw, num, root, j, skip);

	if (rc < 0 && rw->ctx->errcode == rc)
		ps_err_wrap(rw->ctx, rc, "object %u", num);
	return rc;
}

static void job_clear(struct rw_job *j)
{
	ps_seq_seg_release(j->so.seg);
	ps_obj_free(j->obj);
	ps_buf_free(&j->raw);
	memset(j, 0, sizeof *j);
}

/* ---- the sequential reader (note 7) ----------------------------------------------- */

/* Skipped by the reader: the old /Encrypt, members of object streams
 * (never listed) and what note 3 drops. */
static int skip_num(void *ud, uint32_t num)
{
	const struct rw *rw = ud;

	return num == rw->ds.encrypt_num || is_dropped(rw, num);
}

/* The job just filled in *BP joins its batch; a batch is complete (and
 * handed to the workers) once it is big enough to keep every lane busy
 * (note 8). */
static int batch_add(struct rw *rw, struct rw_batch **bp, int64_t off,
                     const struct pdfstamp_rewrite_opts *o)
{
	struct rw_batch *b = *bp;
	struct rw_job *j = &b->jobs[b->n++];
	size_t len = !j->obj || j->obj->kind == PS_STREAM ? j->srclen : 0; /* unparsed: its bytes */
	int rc, body = ps_xref_type(rw->xref, j->num) == 1;

	b->bytes += len;
	if (len > b->maxlen)
		b->maxlen = len;
	if (b->n < BATCH_OBJECTS && b->bytes < BATCH_MAX &&
	    (b->bytes < BATCH_MIN || b->bytes / LANES < b->maxlen))
		return 0;
	*bp = NULL;
	if ((rc = submit(rw, b)) < 0)
		return rc;
	if (o->progress && body)
		o->progress(o->progress_ud, off, ps_doc_size(rw->doc));
	return 0;
}

/* Makes *BP (if none) a batch with room for one more job.  The job array
 * grows by doubling: a batch of a few large objects stays small. */
static int batch_new(struct rw *rw, struct rw_batch **bp)
{
	struct rw_batch *b = *bp;

	if (!b && rw->spare) { /* note 13 */
		b = rw->spare;
		rw->spare = b->next;
		b->next = NULL;
		*bp = b;
	}
	if (!b) {
		if (!(b = calloc(1, sizeof *b)))
			return ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		*bp = b;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct rw_job *nj = realloc(b->jobs, cap * sizeof *nj);
		ps_sec_job *ns;
		if (!nj)
			return ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		b->jobs = nj;
		if (!(ns = realloc(b->sj, cap * sizeof *ns)))
			return ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		b->sj = ns;
		b->cap = cap;
	}
	return 0;
}

/* Every object, in file order: the catalog first when it must come out
 * of its object stream, then the body, segment by segment (note 7). */
static int read_all(struct rw *rw, uint32_t root_num, const struct pdfstamp_rewrite_opts *o)
{
	ps_doc *doc = rw->doc;
	struct rw_batch *b = NULL;
	ps_seqread r;
	ps_seq_obj so;
	int rc, skip, root2 = root_num != rw->ds.encrypt_num &&
	                      ps_xref_type(rw->xref, root_num) == 2;

	if ((rc = ps_seq_open(&r, doc, NULL, skip_num, rw)) < 0)
		goto out;
	rw->pool = ps_seq_pool(&r); /* for the self-check (rwcheck.c note 6) */
	for (;;) {
		struct rw_job *j;
		if (root2) {
			memset(&so, 0, sizeof so);
			so.num = root_num;
			root2 = 0;
		} else if ((rc = ps_seq_next(&r, &so)) != 1) {
			break;
		}
		if ((rc = batch_new(rw, &b)) < 0) {
			ps_seq_seg_release(so.seg);
			goto out;
		}
		j = &b->jobs[b->n];
		memset(j, 0, sizeof *j);
		skip = 0;
		if (so.seg) { /* parsed by the worker */
			j->so = so;
			j->num = so.num;
			j->gen = (uint16_t)ps_xref_get(rw->xref, so.num)->aux;
			j->root = so.num == root_num;
			j->srclen = so.end > so.off ? (size_t)(so.end - so.off) : 0;
		} else if ((rc = read_job(rw, so.num, so.num == root_num, j, &skip)) < 0) {
			job_clear(j);
			goto out;
		}
		if (!skip && (rc = batch_add(rw, &b, ps_xref_get(rw->xref, so.num)->off, o)) < 0)
			goto out;
	}
	if (rc == 0 && b) {
		rc = submit(rw, b);
		b = NULL;
	}
out:
	ps_seq_close(&r);
	batch_done(rw, b);
	return rc;
}

/* ---- the new /Encrypt, the trailer and the section ---------------------------------- */

/* The trailer, then the section (rwxref.c) at the current output offset. */
static int write_xref(struct rw *rw, uint32_t enc_num, const uint8_t id[16], int stream_form)
{
	ps_buf b = PS_BUF_INIT;
	int rc = ps_rwxref_write(rw->ctx, rw->doc, &rw->offs, enc_num, id, stream_form, rw->w.off,
	                         &b);

	if (rc == 0)
		rc = ps_wstream_put(&rw->w, b.data, b.len);
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
	if ((rc = record_off(rw, num, 0, NULL)) < 0)
		goto out;
	ps_buf_printf(&b, "%u 0 obj\n", num);
	ps_serialize(&b, d);
	ps_buf_puts(&b, "\nendobj\n");
	if (b.oom)
		goto oom;
	rc = ps_wstream_put(&rw->w, b.data, b.len);
	goto out;
oom:
	rc = ps_err(rw->ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(d);
	ps_buf_free(&b);
	return rc;
}

/* ---- the whole rewrite ------------------------------------------------------------ */

/* The written output, F the input's file: the fsync started (note 9),
 * the self-check with the new password (note 5), then the rename over the
 * target or the copy to the descriptor. */
static int commit(struct rw *rw, const struct pdfstamp_rewrite_opts *o,
                  const struct ps_doc_file *f, uint32_t enc_num, size_t nsorted)
{
	ps_ctx *ctx = rw->ctx;
	int to_fd = (o->flags & PDFSTAMP_WRITE_TO_FD) != 0, rc;
	ps_rwcheck chk;

	ps_fault("after-write");
	if (!to_fd) /* note 9: the fsync runs during the self-check */
		ps_wstream_sync_start(&rw->w);
	chk = (ps_rwcheck){.path = ps_outfile_path(&rw->of),
	                   .owner = o->owner_password ? o->owner_password : "",
	                   .owner_len = o->owner_len,
	                   .seed = rw->to_certs ? rw->seed : NULL,
	                   .dropped = rw->dropped,
	                   .ndropped = rw->ndropped,
	                   .enc_num = enc_num,
	                   .jobs = rw->nthreads ? rw->nthreads : 1,
	                   .sums = rw->offs.v,
	                   .nsums = nsorted,
	                   .pool = rw->pool};
	if ((rc = ps_rwcheck_run(rw->doc, &chk)) < 0)
		return rc;
	if (to_fd)
		return ps_outfile_copy_out(ctx, &rw->of, o->output_fd);
	if ((rc = ps_wstream_sync_wait(&rw->w)) < 0)
		return rc;
	return ps_outfile_commit(ctx, &rw->of, f->mode, 1);
}

static int rewrite(ps_doc *doc, const struct pdfstamp_rewrite_opts *o,
                   struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct rw rw;
	struct ps_xref_info xi;
	uint8_t id[16];
	char ver[16], hdr[64];
	uint32_t num, enc_num, root_num = 0, maxnum = 0;
	int stream_form = 0, rc, i, started = 0;
	size_t nsorted = 0;
	double t0 = clock_seconds(CLOCK_MONOTONIC);
	struct ps_doc_file f;
	const char *target;
	int to_fd = (o->flags & PDFSTAMP_WRITE_TO_FD) != 0; /* version >= 2:
	                                                     * checked by the callers */
	int dry = (o->flags & PDFSTAMP_WRITE_DRY_RUN) != 0; /* note 14 */

	memset(&rw, 0, sizeof rw);
	ps_doc_file(doc, &f);
	target = o->output ? o->output : f.path;
	rw.doc = doc;
	rw.xref = ps_doc_xref(doc);
	ps_doc_security(doc, &rw.ds);
	rw.ctx = ctx;
	rw.cpu = ps_cpu_bits(ctx);
	rw.of.fd = -1;
	if (!!(o->flags & PDFSTAMP_WRITE_IN_PLACE) + to_fd + !!o->output != 1)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "give exactly one of an output file, an output descriptor and "
		              "in-place mode");
	if (to_fd && (rc = dry ? ps_dryrun_to_fd(ctx, o->output_fd, f.fd)
	                       : ps_io_check_out_fd(ctx, o->output_fd, f.fd)) < 0)
		return rc;
	if ((rc = ps_policy_rewrite(doc, o->flags)) < 0 || (rc = ps_xref_load_all(doc)) < 0)
		return rc;
	{
		/* A file without a catalog is refused, not rewritten: the
		 * self-check requires the output's /Root (note 5). */
		ps_obj *r = NULL, *cat = NULL;
		if ((rc = ps_doc_catalog(doc, PS_CATALOG_ANY, &cat, &r)) < 0)
			return rc;
		if (!r || !cat || cat->kind != PS_DICT)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the document has no catalog "
			              "(/Root is not an indirect dictionary)");
		root_num = r->u.ref.num;
	}
	/* new key and security parameters (Alg. 8, 9, 10) */
	rw.to_certs = o->version >= 3 && o->nrecipients > 0;
	if (rw.to_certs)   /* note 15 */
		rc = ps_pubsec_new(ctx, o->recipients, o->nrecipients,
		                   o->set_permissions ? o->permissions : ps_policy_kept_p(doc),
		                   ps_sec_encrypt_metadata(rw.ds.sec), rw.seed, &rw.nsec);
	else
		rc = ps_sec_new_r6(ctx, o->user_password, o->user_len, o->owner_password,
		                   o->owner_len,
		                   o->set_permissions ? o->permissions : ps_policy_kept_p(doc),
		                   ps_sec_encrypt_metadata(rw.ds.sec), &rw.nsec);
	if (rc < 0)
		goto out;
	if ((rc = ps_random(ctx, id, sizeof id)) < 0 || (rc = ps_doc_header_version(doc, ver)) < 0)
		goto out;
	/* which object numbers are live; is there any object stream? */
	for (num = ps_xref_next(rw.xref, 0); num != 0; num = ps_xref_next(rw.xref, num)) {
		if (num != rw.ds.encrypt_num) {
			maxnum = num;
			if (ps_xref_get(rw.xref, num)->type == 2)
				stream_form = 1;
		}
	}
	if (maxnum >= PS_MAX_OBJNUM - 2) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		            "no object number left for the new /Encrypt");
		goto out;
	}
	enc_num = maxnum + 1;
	/* one offset per object written: at most the objects in use, the new
	 * /Encrypt and the xref stream */
	ps_xref_info(rw.xref, &xi);
	if ((rc = ps_rwoffs_init(ctx, &rw.offs, (size_t)xi.used + 2)) < 0)
		goto out;
	if ((rc = ps_rwdrop_list(doc, root_num, &rw.dropped, &rw.ndropped)) < 0)
		goto out;
	rw.ar = ps_arena_new(); /* NULL: the same objects from malloc */
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
	pthread_mutex_init(&rw.wmu, NULL);
	rw.warn = ctx->warn;
	rw.warn_ud = ctx->warn_ud;
	ctx->warn = fwd_warn;
	ctx->warn_ud = &rw;
	pthread_cond_init(&rw.cv, NULL);
	started = 1;
	rw.wcap = (size_t)(rw.nthreads ? rw.nthreads + 2 : 1);
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
	if (dry) /* note 14: judged, not opened; the writer counts */
		rc = (o->flags & PDFSTAMP_WRITE_IN_PLACE) ? ps_dryrun_replace(ctx, f.path, f.fd)
		     : to_fd ? 0 : ps_dryrun_new_file(ctx, target);
	else
		rc = (o->flags & PDFSTAMP_WRITE_IN_PLACE)
		     ? ps_outfile_open_inplace(ctx, &rw.of, f.path, f.fd)
		     : to_fd ? ps_outfile_open_fd(ctx, &rw.of)
		             : ps_outfile_open(ctx, &rw.of, target);
	if (rc < 0)
		goto out;
	/* note 9: a temporary file only copied out is never synced: no writeback */
	ps_wstream_init(&rw.w, ctx, rw.of.fd, !to_fd && !dry, "the output");
	snprintf(hdr, sizeof hdr, "%%PDF-%s\n%%\xe2\xe3\xcf\xd3\n", ver);
	if ((rc = ps_wstream_put(&rw.w, hdr, strlen(hdr))) < 0)
		goto out;
	/* read, transform, write (notes 7 and 8) */
	if ((rc = read_all(&rw, root_num, o)) < 0)
		goto out;
	while (rw.wcount > 0)
		if ((rc = drain_one(&rw)) < 0)
			goto out;
	if ((rc = ps_rwoffs_sort(ctx, &rw.offs)) < 0 || (rc = encrypt_dict(&rw, enc_num)) < 0)
		goto out;
	nsorted = rw.offs.n; /* the new /Encrypt, the highest number yet, came last */
	/* The xref form: a stream when members of object streams are carried
	 * over, or when an offset would not fit a classic table's ten digits
	 * (every object lies below the xref, so its offset is the largest). */
	stream_form = ps_xrefw_form(stream_form, rw.w.off);
	if ((rc = write_xref(&rw, enc_num, id, stream_form)) < 0 ||
	    (rc = ps_wstream_flush(&rw.w)) < 0)
		goto out;
	if (o->progress)
		o->progress(o->progress_ud, ps_doc_size(doc), ps_doc_size(doc));
	if (!dry && (rc = commit(&rw, o, &f, enc_num, nsorted)) < 0)
		goto out;
	if (st) {
		st->objects = (int64_t)rw.offs.n;
		st->streams = rw.streams;
		st->strings = rw.strings;
		st->payload_bytes = rw.payload;
		st->decrypt_seconds = rw.dec_seconds;
		st->encrypt_seconds = rw.enc_seconds;
		st->crypto_seconds = rw.dec_seconds + rw.enc_seconds;
		st->bytes_written = rw.w.off;
		st->seconds = clock_seconds(CLOCK_MONOTONIC) - t0;
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
		ctx->warn = rw.warn;
		ctx->warn_ud = rw.warn_ud;
		pthread_mutex_destroy(&rw.mu);
		pthread_mutex_destroy(&rw.wmu);
		pthread_cond_destroy(&rw.cv);
	}
	while (rw.spare) {
		struct rw_batch *b = rw.spare;
		rw.spare = b->next;
		batch_free(b);
	}
	ps_buf_free(&rw.chdr);
	ps_seq_pool_unref(rw.pool);
	free(rw.win);
	free(rw.threads);
	ps_rwoffs_free(&rw.offs);
	free(rw.dropped);
	ps_wstream_free(&rw.w);
	ps_outfile_free(&rw.of);
	ps_sec_free(rw.nsec);
	ps_wipe(rw.seed, sizeof rw.seed);
	ps_arena_free(rw.ar);
	return rc;
}

/* Checks the versions of the options and of ST (may be NULL), which it
 * zeroes.  Version 1 of the options has no output_fd: PDFSTAMP_WRITE_TO_FD
 * needs version 2. */
static int check_opts(ps_ctx *ctx, const struct pdfstamp_rewrite_opts *o,
                      struct pdfstamp_rewrite_stats *st)
{
	if (st) {
		if (st->version != PDFSTAMP_REWRITE_STATS_VERSION)
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "rewrite statistics of an unknown version");
		memset(st, 0, sizeof *st);
		st->version = PDFSTAMP_REWRITE_STATS_VERSION;
	}
	if (!o || o->version < 1 || o->version > PDFSTAMP_REWRITE_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "rewrite options of an unknown version");
	if ((o->flags & PDFSTAMP_WRITE_TO_FD) && o->version < 2)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "PDFSTAMP_WRITE_TO_FD needs version 2 of the rewrite options");
	if (o->version >= 3 && o->nrecipients > 0) {   /* note 15 */
		if (!o->recipients || o->nrecipients > PS_PUBSEC_MAX_RECIPIENTS)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "give 1 to %d recipients",
			              PS_PUBSEC_MAX_RECIPIENTS);
		if (o->user_password || o->owner_password)
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "encrypt to recipients or to passwords, not both");
	}
	return 0;
}

int pdfstamp_rotate(pdfstamp_doc *doc, const struct pdfstamp_rewrite_opts *o,
                    struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct ps_doc_security ds;
	int rc;

	if ((rc = check_opts(ctx, o, st)) < 0)
		return rc;
	ps_doc_security(doc, &ds);
	if (!ds.sec)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not encrypted; use encrypt");
	if (!ds.authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	if (ds.authenticated == 1 && ps_sec_recipients(ds.sec))
		return ps_err(ctx, PDFSTAMP_E_PERM,
		              "rotating the key needs a recipient granted every permission "
		              "(this recipient's permissions are P=%lld)", (long long)ds.perms);
	if (ds.authenticated == 1) {
		/* the user password is enough only when the owner password is empty */
		int as = 0;
		rc = ps_sec_check_password(ctx, ds.sec, "", 0, &as);
		if (rc < 0 || as != 2)
			return ps_err(ctx, PDFSTAMP_E_PERM,
			              "rotating the key needs the owner password");
	}
	return rewrite(doc, o, st);
}

int pdfstamp_encrypt(pdfstamp_doc *doc, const struct pdfstamp_rewrite_opts *o,
                     struct pdfstamp_rewrite_stats *st)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	int rc;

	if ((rc = check_opts(ctx, o, st)) < 0)
		return rc;
	if (pdfstamp_doc_is_encrypted(doc))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the document is already encrypted; use rotate to change its key");
	return rewrite(doc, o, st);
}
