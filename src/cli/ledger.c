/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger.c - --ledger FILE: the record of a batch's finished files, so that
 * a killed run, started again with the same command, does each file once.
 *
 * DESIGN NOTES
 *
 *  1. The file.  One line per event, appended (O_APPEND, mode 0600, a
 *     regular file of this user: the ledger decides what is skipped, so
 *     one planted by someone else is refused):
 *       {"ledger":1,"options":"<16 hex>","name_hex":"<hex>","size":S,
 *        "dev":D,"ino":I,"state":"intent"|"done"|"failed"[,...]}
 *     options is the fingerprint of the command and the options that
 *     define the work (cli_run.fingerprint, opts.c note 6); name_hex the
 *     FILE as given, byte for byte; size, dev and ino the file's after the
 *     event.  The done line of an in-place update goes on with the members
 *     of its --json line ("file", "ok", "output", "base_length",
 *     "xref_offset", "bytes_appended", "objects", "weak_encryption"); a
 *     failed line with "exit", its exit status.  Lines that do not parse (a line
 *     torn by a crash, anything else) are ignored, and counted in a
 *     warning; a ledger that does not end with a line feed gets one
 *     before the first line of a run.
 *  2. What is skipped.  A FILE with a done line of the same options and
 *     the same size, device and inode now is skipped: its line says
 *     "skipped":"done in the ledger".  With another size or inode a
 *     writing command leaves it alone and reports it (exit 1: it changed
 *     since, and doing it again could add a second stamp); a reading
 *     command does it again.  Failed lines skip nothing.
 *  3. Exactly once, in place.  The done line of an in-place update is
 *     written and synced from the library's durable hook (write options
 *     version 3): after the update is durable and checked, before its
 *     journal is removed.  So an update whose journal is gone always has
 *     its done line.  An intent line (not synced) precedes the update.  A
 *     run that finds a FILE without a done line but with a journal runs
 *     recovery first: if recovery completes the update (the run was
 *     killed between the file's sync and the done line) and an intent
 *     line of the same options names the FILE at a smaller size, the
 *     update was this batch's: it is recorded as done and not made again
 *     ("skipped":"completed by recovery"); a FILE done whose journal is
 *     still there (killed after the done line) has it removed by recovery,
 *     which keeps the update.  Without such an intent line
 *     (a journal of another run, or an intent lost in a power failure)
 *     the FILE is reported and left alone (exit 1) rather than stamped a
 *     second time.  A journal whose update never reached the file is
 *     removed by recovery and the FILE is done as usual.
 *  4. Group commit.  Lines are written whole under the ledger's lock; a
 *     done line of a writing command then waits for a data sync that
 *     started after it was written: one worker syncs, the others wait
 *     for it, so files finishing together share one fdatasync.  Reading
 *     commands' lines are not synced (doing them again costs nothing but
 *     time).  A failed write or sync fails the file (an in-place update
 *     is then undone by the library).
 *  5. --dry-run (write_common.c note 4) reads the ledger and writes nothing
 *     to it.  The ledger is opened read-only, never created (a missing one
 *     is empty), and no line is appended, not even a line feed: a FILE
 *     done by the same options (--dry-run is outside the fingerprint) is
 *     skipped as a real run would skip it; one that changed since is
 *     reported the same way; one with a pending journal is not recovered
 *     (the read-only open warns).  No intent, done or failed line: a dry
 *     run has done nothing that a later run could skip.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

enum { ST_INTENT, ST_DONE };

struct entry {
	char *name;             /* the FILE as given */
	size_t len;
	int64_t size;
	uint64_t dev, ino;
	size_t seq;             /* line number: the last line wins */
};

struct set {
	struct entry *v;
	size_t n, cap;
};

struct cli_ledger {
	int fd;
	const char *path;
	uint64_t fp;            /* the run's options */
	int writes;             /* a writing command: done lines are synced */
	int dry;                /* --dry-run: read only (note 5) */
	struct set sets[2];     /* intent and done lines of this fingerprint */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t written, synced;
	int syncing, sync_errno;
};

/* ---- reading ----------------------------------------------------------------- */

static int lit(const char **p, const char *s)
{
	size_t n = strlen(s);

	if (strncmp(*p, s, n) != 0)
		return -1;
	*p += n;
	return 0;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A decimal number without sign, overflow checked. */
static int dec(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

/* Parses the fixed head of a ledger line (note 1) into E (name allocated)
 * and *FP, *STATE.  0, or -1 if it is not one. */
static int parse_line(const char *p, struct entry *e, uint64_t *fp, int *state)
{
	const char *h;
	uint64_t size;
	int k;

	if (lit(&p, "{\"ledger\":1,\"options\":\"") != 0)
		return -1;
	*fp = 0;
	for (k = 0; k < 16; k++, p++) {
		if (hexval(*p) < 0)
			return -1;
		*fp = *fp << 4 | (uint64_t)hexval(*p);
	}
	if (lit(&p, "\",\"name_hex\":\"") != 0)
		return -1;
	for (h = p; hexval(*p) >= 0; p++)
		;
	if ((p - h) % 2 || p == h || lit(&p, "\",\"size\":") != 0 || dec(&p, &size) != 0 ||
	    size > INT64_MAX || lit(&p, ",\"dev\":") != 0 || dec(&p, &e->dev) != 0 ||
	    lit(&p, ",\"ino\":") != 0 || dec(&p, &e->ino) != 0 || lit(&p, ",\"state\":\"") != 0)
		return -1;
	if (lit(&p, "intent\"") == 0)
		*state = ST_INTENT;
	else if (lit(&p, "done\"") == 0)
		*state = ST_DONE;
	else
		return 0 == lit(&p, "failed\"") ? 1 : -1; /* 1: a line that skips nothing */
	e->size = (int64_t)size;
	return 0;
}

/* Decodes the name of LINE (whose head parsed) into E->name. */
static int line_name(const char *line, struct entry *e)
{
	const char *h = strstr(line, "\"name_hex\":\"") + 12;
	size_t i, n = 0;

	while (hexval(h[n]) >= 0)
		n++;
	e->len = n / 2;
	if (!(e->name = malloc(e->len + 1)))
		return -1;
	for (i = 0; i < e->len; i++)
		e->name[i] = (char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
	e->name[e->len] = '\0';
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	if (c || x->len != y->len)
		return c ? c : x->len < y->len ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts S by name and keeps the last line of each name. */
static void set_finish(struct set *s)
{
	size_t i, k = 0;

	if (s->n)
		qsort(s->v, s->n, sizeof *s->v, cmp_entry);
	for (i = 0; i < s->n; i++) {
		if (i + 1 < s->n && s->v[i].len == s->v[i + 1].len &&
		    memcmp(s->v[i].name, s->v[i + 1].name, s->v[i].len) == 0) {
			free(s->v[i].name);
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

/* The entry of NAME in S (sorted by set_finish), or NULL. */
static const struct entry *set_find(const struct set *s, const char *name)
{
	size_t lo = 0, hi = s->n, len = strlen(name);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct entry *e = &s->v[mid];
		int c = memcmp(e->name, name, e->len < len ? e->len : len);

		if (!c && e->len == len)
			return e;
		if (c < 0 || (!c && e->len < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Reads the ledger's lines of this fingerprint.  0 or an exit status. */
static int load(struct cli_ledger *l, FILE *f, int *ends_lf)
{
	char *line = NULL;
	size_t cap = 0, seq = 0, bad = 0;
	ssize_t len;
	int rc = 0;

	*ends_lf = 1;
	while ((len = getline(&line, &cap, f)) >= 0) {
		struct entry e;
		uint64_t fp;
		int state, r;

		seq++;
		*ends_lf = len > 0 && line[len - 1] == '\n';
		memset(&e, 0, sizeof e);
		if (memchr(line, '\0', (size_t)len) ||
		    (r = parse_line(line, &e, &fp, &state)) < 0) {
			bad++;
			continue;
		}
		if (r == 1 || fp != l->fp)
			continue;
		struct set *s = &l->sets[state];
		if (s->n == s->cap) {
			size_t nc = s->cap ? 2 * s->cap : 256;
			struct entry *nv = nc > SIZE_MAX / sizeof *nv
			                           ? NULL
			                           : realloc(s->v, nc * sizeof *nv);
			if (!nv) {
				rc = -1;
				break;
			}
			s->v = nv;
			s->cap = nc;
		}
		e.seq = seq;
		if (line_name(line, &e) != 0) {
			rc = -1;
			break;
		}
		s->v[s->n++] = e;
	}
	free(line);
	if (rc == 0 && ferror(f)) {
		cli_error(l->path, "cannot read the ledger: %s", strerror(errno ? errno : EIO));
		return CLI_EXIT_USAGE;
	}
	if (rc != 0) {
		cli_error(NULL, "out of memory reading the ledger");
		return CLI_EXIT_IO;
	}
	if (bad)
		cli_warning(l->path, "%zu line%s of the ledger could not be read; ignored", bad,
		            bad == 1 ? "" : "s");
	set_finish(&l->sets[ST_INTENT]);
	set_finish(&l->sets[ST_DONE]);
	return 0;
}

/* ---- writing ----------------------------------------------------------------- */

/* Appends LINE (LEN bytes, one whole line) and, if SYNC, waits for a data
 * sync that covers it (note 4).  0 or -1 (message printed). */
static int append(struct cli_ledger *l, const char *line, size_t len, int sync)
{
	uint64_t mine;
	size_t off = 0;
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	while (off < len) {
		ssize_t k = write(l->fd, line + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			cli_error(l->path, "cannot write the ledger: %s",
			          strerror(k < 0 ? errno : ENOSPC));
			pthread_mutex_unlock(&l->lock);
			return -1;
		}
		off += (size_t)k;
	}
	mine = ++l->written;
	while (sync && l->synced < mine && rc == 0) {
		if (l->sync_errno) {
			rc = -1;
		} else if (!l->syncing) {
			uint64_t target = l->written;
			int r, e;

			l->syncing = 1;
			pthread_mutex_unlock(&l->lock);
			r = fdatasync(l->fd);
			e = errno;
			pthread_mutex_lock(&l->lock);
			l->syncing = 0;
			if (r == 0)
				l->synced = target;
			else
				l->sync_errno = e ? e : EIO; /* errseq: not reported twice */
			pthread_cond_broadcast(&l->cond);
		} else {
			pthread_cond_wait(&l->cond, &l->lock);
		}
	}
	if (rc != 0)
		cli_error(l->path, "cannot sync the ledger: %s", strerror(l->sync_errno));
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* Starts a line for NAME in state STATE (a stream; the caller ends it). */
static void line_head(FILE *m, const struct cli_ledger *l, const char *name,
                      const struct stat *st, const char *state)
{
	const unsigned char *p;

	fprintf(m, "{\"ledger\":1,\"options\":\"%016" PRIx64 "\",\"name_hex\":\"", l->fp);
	for (p = (const unsigned char *)name; *p; p++)
		fprintf(m, "%02x", *p);
	fprintf(m, "\",\"size\":%jd,\"dev\":%ju,\"ino\":%ju,\"state\":\"%s\"",
	        (intmax_t)st->st_size, (uintmax_t)st->st_dev, (uintmax_t)st->st_ino, state);
}

/* Writes one line: the head, then BODY (members, may be NULL).  0 or -1. */
static int put_line(struct cli_ledger *l, const char *name, const struct stat *st,
                    const char *state, const char *body, int sync)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc;

	if (!m) {
		cli_error(l->path, "out of memory");
		return -1;
	}
	line_head(m, l, name, st, state);
	if (body)
		fputs(body, m);
	fputs("}\n", m);
	if (fclose(m) != 0) {
		free(buf);
		cli_error(l->path, "out of memory");
		return -1;
	}
	rc = append(l, buf, len, sync);
	free(buf);
	return rc;
}

/* ---- the driver's calls -------------------------------------------------------- */

int cli_ledger_open(struct cli_ledger **out, const struct cli_run *run, int writes)
{
	struct cli_ledger *l;
	struct stat st;
	FILE *f;
	int rc, ends_lf = 1, created;

	*out = NULL;
	if (!(l = calloc(1, sizeof *l))) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_IO;
	}
	l->path = run->ledger;
	l->fp = run->fingerprint;
	l->writes = writes;
	l->dry = run->dry_run;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	created = lstat(l->path, &st) != 0 && errno == ENOENT;
	if (l->dry && created) { /* note 5: nothing to skip, nothing created */
		l->fd = -1;
		*out = l;
		return 0;
	}
	l->fd = l->dry ? open(l->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
	               : open(l->path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (l->fd < 0 || fstat(l->fd, &st) != 0) {
		cli_error(l->path, "cannot open the ledger: %s", strerror(errno));
		rc = CLI_EXIT_USAGE;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		cli_error(l->path, "the ledger must be a regular file of this user");
		rc = CLI_EXIT_USAGE;
		goto fail;
	}
	if (!(f = fdopen(dup(l->fd), "r"))) {
		cli_error(l->path, "cannot read the ledger: %s", strerror(errno));
		rc = CLI_EXIT_USAGE;
		goto fail;
	}
	rc = load(l, f, &ends_lf);
	fclose(f);
	if (rc != 0)
		goto fail;
	if (!ends_lf && !l->dry && append(l, "\n", 1, 0) != 0) {
		rc = CLI_EXIT_IO;
		goto fail;
	}
	if (created) { /* its name, durable before a line counts on it */
		char *copy = strdup(l->path);
		int dfd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		int bad = dfd < 0 || fsync(dfd) != 0;
		if (dfd >= 0)
			close(dfd);
		free(copy);
		if (bad) {
			cli_error(l->path, "cannot sync the ledger's directory: %s",
			          strerror(errno));
			rc = CLI_EXIT_IO;
			goto fail;
		}
	}
	*out = l;
	return 0;
fail:
	cli_ledger_close(l);
	return rc;
}

void cli_ledger_close(struct cli_ledger *l)
{
	int i;
	size_t k;

	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	for (i = 0; i < 2; i++) {
		for (k = 0; k < l->sets[i].n; k++)
			free(l->sets[i].v[k].name);
		free(l->sets[i].v);
	}
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}

/* The line of a FILE not done again: {"file","ok":true,"skipped":WHY}. */
static void skipped(const struct cli_run *run, const char *name, const char *why)
{
	struct cli_json j;

	if (run->json) {
		cli_json_ok_begin(&j, name);
		if (run->dry_run) {
			cli_json_key(&j, "dry_run");
			cli_json_bool(&j, 1);
		}
		cli_json_key(&j, "skipped");
		cli_json_str(&j, why);
		cli_json_line_end(&j, name);
	} else if (run->verbose) {
		fputs("skipped ", cli_out());
		cli_put_safe(cli_out(), name);
		fprintf(cli_out(), ": %s\n", why);
	}
}

static int refuse(const struct cli_run *run, const char *name, const char *msg)
{
	cli_error(name, "%s", msg);
	if (run->json)
		cli_json_failure(name, CLI_EXIT_IO, msg);
	return CLI_EXIT_IO;
}

int cli_ledger_skip(struct cli_ledger *l, pdfstamp_ctx *ctx, const struct cli_run *run,
                    const char *name, int *status)
{
	const struct entry *done = set_find(&l->sets[ST_DONE], name), *intent;
	struct stat st;
	int pending = 0, rec = 0;
	char msg[200];

	*status = 0;
	if (stat(name, &st) != 0)
		return 0; /* the open reports it */
	if (done) {
		if (st.st_size == done->size && (uint64_t)st.st_dev == done->dev &&
		    (uint64_t)st.st_ino == done->ino) {
			/* killed after the done line, before the journal went:
			 * recovery keeps the update and removes the journal */
			if (l->writes && run->in_place && !l->dry &&
			    pdfstamp_journal_pending(ctx, name, &pending) == 0 && pending &&
			    pdfstamp_recover(ctx, name, &rec) != 0) {
				*status = refuse(run, name, pdfstamp_ctx_errmsg(ctx));
				return 1;
			}
			skipped(run, name, "done in the ledger");
			return 1;
		}
		if (!l->writes)
			return 0;
		snprintf(msg, sizeof msg, "the ledger lists it as done, but it changed since (size "
		         "%jd, the ledger's %jd, or another inode); not touched",
		         (intmax_t)st.st_size, (intmax_t)done->size);
		*status = refuse(run, name, msg);
		return 1;
	}
	if (!l->writes || !run->in_place || l->dry)
		return 0;
	if (pdfstamp_journal_pending(ctx, name, &pending) != 0 || !pending)
		return 0; /* the open deals with it */
	if (pdfstamp_recover(ctx, name, &rec) != 0) {
		*status = refuse(run, name, pdfstamp_ctx_errmsg(ctx));
		return 1;
	}
	if (rec != PDFSTAMP_RECOVER_COMPLETED)
		return 0;
	intent = set_find(&l->sets[ST_INTENT], name);
	if (stat(name, &st) != 0 || !intent || intent->size >= st.st_size ||
	    intent->dev != (uint64_t)st.st_dev || intent->ino != (uint64_t)st.st_ino) {
		*status = refuse(run, name, "recovery completed an interrupted update that the "
		                 "ledger has no record of starting; not updated again (check it)");
		return 1;
	}
	if (put_line(l, name, &st, "done", ",\"recovered\":true", 1) != 0) {
		*status = CLI_EXIT_IO;
		return 1;
	}
	skipped(run, name, "completed by recovery");
	return 1;
}

/* The durable hook of an in-place update (note 3). */
static int on_durable(void *ud, const char *path, const struct pdfstamp_result *res)
{
	struct cli_ledger_call *c = ud;
	char *body = NULL;
	size_t len = 0;
	struct cli_json j;
	struct stat st;
	FILE *m, *old;
	int rc;

	(void)path;
	if (stat(c->f->name, &st) != 0) {
		cli_error(c->f->name, "cannot stat: %s", strerror(errno));
		return -1;
	}
	if (!(m = open_memstream(&body, &len)))
		return -1;
	old = cli_out();
	cli_set_out(m); /* the members of the file's --json line, from the result */
	cli_file_json_begin(&j, c->f);
	if (res)
		cli_json_update(&j, res);
	cli_json_obj_end(&j);
	cli_set_out(old == stdout ? NULL : old);
	if (fclose(m) != 0 || len < 2) {
		free(body);
		return -1;
	}
	/* ",\"file\"..." without the object's braces */
	body[len ? len - 1 : 0] = '\0';
	body[0] = ',';
	rc = put_line(c->l, c->f->name, &st, "done", body, 1);
	free(body);
	if (rc == 0)
		c->recorded = 1;
	return rc;
}

int cli_ledger_begin(struct cli_ledger *l, struct cli_ledger_call *c, struct cli_file *f)
{
	struct stat st;

	c->l = l;
	c->f = f;
	c->recorded = 0;
	if (!l->writes || !f->run->in_place || l->dry)
		return 0;
	if (stat(f->name, &st) != 0)
		return 0; /* the open reports it */
	if (put_line(l, f->name, &st, "intent", NULL, 0) != 0)
		return CLI_EXIT_IO;
	f->wopts.durable = on_durable;
	f->wopts.durable_ud = c;
	return 0;
}

int cli_ledger_end(struct cli_ledger_call *c, int status)
{
	struct stat st;
	char body[64];

	if (c->recorded || c->l->dry)
		return 0;
	if (stat(c->f->name, &st) != 0)
		memset(&st, 0, sizeof st);
	if (status == 0) /* a reading command, -o, or an update with nothing to add */
		return put_line(c->l, c->f->name, &st, "done", NULL, c->l->writes);
	snprintf(body, sizeof body, ",\"exit\":%d", status);
	return put_line(c->l, c->f->name, &st, "failed", body, 0);
}
