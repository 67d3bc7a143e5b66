/* SPDX-License-Identifier: Apache-2.0 */
/*
 * driver.c - the one per-file driver of the pdfstamp commands:
 * cli_each_file() and what it owns (the context and its warnings, the
 * password of the files, the list of files, the output mode, --json
 * failure lines, the worst exit status).
 *
 * DESIGN NOTES
 *
 *  1. A command parses its options, then calls cli_each_file() with a
 *     struct cli_ops: how its files are opened (enum cli_open), its
 *     library call and its output.  Everything between is here, once; a
 *     command never loops over files, opens a context or prints a failure
 *     line itself.  Its own result (a struct pdfstamp_info, a
 *     pdfstamp_result, rewrite statistics, ...) lives in its own state
 *     (ARG), filled by its call and printed by its output.
 *  2. Everything about the command line is checked before the first file
 *     is touched, so a usage error never leaves some files updated and
 *     others not.  Writing commands (CLI_OPEN_UPDATE, CLI_OPEN_PLAIN) take
 *     exactly one of -o OUT and --in-place; -o takes exactly one input;
 *     several inputs (operands plus --files-from lines) need --in-place.
 *     The order of the checks is part of the interface (the first failing
 *     one is the message): -o with -i, neither, no input, the command's
 *     own check (ops->check, only once those and the count of operands for
 *     -o are right), -o - with --json/-v or a terminal, --files-from -
 *     with a password read from stdin, reading --files-from, '-' among the
 *     files (note 10), the count for -o again.
 *  3. In place, a document is opened with PDFSTAMP_OPEN_WRITE (an
 *     exclusive, non-blocking lock held until it is closed); for -o it is
 *     opened read-only and the library writes OUT through a temporary
 *     file, fsync and rename.  Durability, the journal and the check of
 *     the written revision are the library's; the CLI adds no I/O of its
 *     own to the PDF files.  The document is closed (the lock released)
 *     only after the call finished, and before the output is printed.
 *     --dry-run opens read-only in either mode and makes no group (note
 *     13): write_common.c note 4.
 *  4. Files are independent: one file's failure is reported on stderr and,
 *     with --json, as the failure line {"file","ok":false,"exit":N,
 *     "error":"message"} (json.c), and the next file still goes ahead; the
 *     exit status is the worst one (cli_worst).  When the command's call
 *     (or its update's commit) failed, its ops->failed may add members to
 *     that line from the file's result (dss --fetch: what was fetched),
 *     or lines on stderr without --json.  The message is the one
 *     the authentication gave, else the context's, else the library's
 *     text for the code.  A failure before the first file (the command
 *     line, the command's own checks and preparation, such as dss's
 *     inputs) fails every file: with --json each FILE named gets its
 *     failure line, with the message on stderr (cli_fail_early), so a
 *     pipeline that reads the lines loses no file silently.  The list of
 *     --files-from is read for that unless it is standard input and that
 *     is a terminal (it would wait) or a password source (the password
 *     would become a "file").  The library's messages name no option:
 *     when the context's carries a hint (pdfstamp_ctx_errhint: a refusal
 *     that --force, --allow-trailing-bytes or --allow-identity lifts, a
 *     font that --font can give) and the command has that option
 *     (ops->hints), what the option does follows in parentheses, on stderr
 *     and in the --json line alike.
 *  5. The password is read once, when the first encrypted file needs it,
 *     and reused; without a password option the empty password is tried
 *     first and, on a terminal, the user is asked once.  A failed intake
 *     is not retried (stdin, for one, has been consumed).  Commands that
 *     ask for more passwords (rotate) ask for this one first (ask_first).
 *  6. --files-from and a password read from standard input cannot share
 *     it: that is a usage error, not a race over who reads which line.
 *  7. -o - writes the PDF to standard output: the library builds and
 *     checks it in a temporary file that never has a name and then copies
 *     it to descriptor 1 (PDFSTAMP_WRITE_TO_FD).  Nothing else may go
 *     there, so --json and -v are usage errors with it, and so is a
 *     terminal as stdout.
 *  8. Lines on stdout reach a pipe (xargs, parallel, jq) one file at a
 *     time where the command asks for it (CLI_FLUSH_*); stdout is flushed
 *     and checked for a write error at the end (cli_finish_stdout).
 *  9. An input an option names that cannot be read is a usage error
 *     (exit 2), here the --files-from list as the password sources
 *     (passwd.c note 5), dss's inputs (cmd_dss.c) and the stamp's font
 *     and image (the library's PDFSTAMP_E_USAGE); a FILE operand that
 *     cannot be opened is the file's I/O error (exit 1).
 * 10. A FILE is read by name, through the library, which needs a regular
 *     file it can seek in and lock: "-" (an operand or a --files-from
 *     line) does not stand for standard input here and is refused, a
 *     usage error naming the way out (./- for a file named "-"), rather
 *     than reported as a missing file called "-".
 * 11. Workers (--jobs N; commands with CLI_BATCH, else one).  N threads,
 *     the calling one among them, each with a context of its own, take
 *     the next file of the list under the batch's lock and do all of it:
 *     open, authentication, the call, closing, output.  A file's output
 *     (cli_out(): its lines, its --json failure line) goes to a buffer of
 *     its own and is written to stdout whole, under the lock, once the
 *     file is done (for an in-place update: durable, journal removed):
 *     as files finish, or with --ordered once every earlier file is
 *     printed.  A command's state (ARG) is shared and only read; what a
 *     file's call returns lives in f->res (ops->res_size, per worker).
 *     Messages go to stderr as whole lines as they come.  The password is
 *     obtained under the batch's auth_lock until it is known (note 5), so
 *     that it is read or asked for once; then workers authenticate in
 *     parallel.  Progress bars are off with more than one worker.
 * 13. Groups (in-place updates of several files).  A worker takes up to
 *     CLI_GROUP files at a time (no more than its share of those left, so
 *     that the workers end together) and begins each with
 *     PDFSTAMP_WRITE_DEFER: opened, locked, authenticated, its update
 *     built, the file untouched.  Its committer thread then finishes the
 *     group: every journal written, synced and linked
 *     (pdfstamp_doc_journal), then each update committed
 *     (pdfstamp_doc_commit: the journals' directory synced once for the
 *     group, the update written, synced and checked, the ledger's line,
 *     the journal removed), each file closed and its output printed.
 *     Meanwhile the worker begins the next group, in its other lane (a
 *     context of its own: a context is used by one thread at a time), so
 *     the key derivation of one group runs while the syncs of the last one
 *     wait for the disk; it hands a group over only once the committer is
 *     done with the one before.  A file costs two fsyncs (its journal,
 *     itself) and a group one more (the directory), and nothing is less
 *     durable: every update is written only after its journal's name is.
 *     A worker of other commands takes one file at a time, alone.
 * 12. --shard K/N keeps, in their order, the files whose name hashes to
 *     K - 1 modulo N (FNV-1a over the bytes as given, SplitMix64's
 *     finaliser): stable across runs, machines and versions, so N runs
 *     over one list take every file once.  --ledger is ledger.c's.
 * 14. Files encrypted to certificates (keyopt.c): a FILE whose handler is
 *     Adobe.PubSec is authenticated with the key options' material
 *     (cli_key_auth), never with a password; without key options it fails
 *     with exit 3, saying which options to give.  The key options are
 *     checked with the command line (cli_key_check, after the checks
 *     above), their files read once before the first FILE, and wiped at
 *     the end.  A command that asks for the password first (ask_first)
 *     does not when key options were given: its files are meant to be
 *     opened with the key.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ---- the password of the files (note 5) ----------------------------------- */

struct cli_auth {
	const struct cli_pw_src *src;
	unsigned flags;         /* PDFSTAMP_AUTH_* */
	const char *prompt;
	struct cli_pw pw;       /* mlock'ed where it is: do not copy the struct */
	struct cli_key key;     /* the key options' material (note 14) */
	int asked;              /* pw holds the answer of a prompt */
	int pw_failed;          /* exit status of a failed intake */
};

static void auth_init(struct cli_auth *a, const struct cli_pw_src *src,
                      unsigned flags, const char *prompt)
{
	a->src = src;
	a->flags = flags;
	a->prompt = prompt;
	a->asked = 0;
	a->pw_failed = 0;
	cli_pw_init(&a->pw);
}

/* Without a password option and with a terminal on stdin: asks now rather
 * than after the empty password failed.  0 or an exit status. */
static int auth_ask_now(struct cli_auth *a)
{
	int rc;

	if (a->src->kind != CLI_PW_NONE || a->asked || a->pw_failed ||
	    !isatty(STDIN_FILENO))
		return 0;
	rc = cli_pw_prompt(&a->pw, a->prompt);
	if (rc != 0)
		return a->pw_failed = rc;
	a->asked = 1;
	return 0;
}

/* Returns 0 or a PDFSTAMP_E_* code (ctx message set) or, when the password
 * could not be obtained, 1 with *STATUS set. */
static int auth_try(struct cli_auth *a, pdfstamp_doc *doc, int *status)
{
	int rc;

	if (a->pw_failed) {
		*status = a->pw_failed;
		return 1;
	}
	if (a->src->kind != CLI_PW_NONE) {
		if (!a->pw.have) {
			rc = cli_pw_get(a->src, &a->pw, a->prompt);
			if (rc != 0) {
				*status = a->pw_failed = rc;
				return 1;
			}
		}
		return pdfstamp_doc_auth(doc, a->pw.buf, a->pw.len, a->flags);
	}
	if (!a->asked) {
		rc = pdfstamp_doc_auth(doc, "", 0, a->flags);
		if (rc != PDFSTAMP_E_PASSWORD || !isatty(STDIN_FILENO))
			return rc;
		rc = cli_pw_prompt(&a->pw, a->prompt);
		if (rc != 0) {
			*status = a->pw_failed = rc;
			return 1;
		}
		a->asked = 1;
		return pdfstamp_doc_auth(doc, a->pw.buf, a->pw.len, a->flags);
	}
	/* Later files: the answer, then the empty password (files with an
	 * empty user password). */
	rc = pdfstamp_doc_auth(doc, a->pw.buf, a->pw.len, a->flags);
	if (rc == PDFSTAMP_E_PASSWORD && a->pw.len != 0)
		rc = pdfstamp_doc_auth(doc, "", 0, a->flags);
	return rc;
}

/* Authenticates DOC.  Returns 0, or an exit status with *MSG set to a
 * message, or to NULL when the message is the context's. */
static int auth_doc(struct cli_auth *a, pdfstamp_doc *doc, const char **msg)
{
	int status = 0, rc;

	*msg = NULL;
	rc = auth_try(a, doc, &status);
	if (rc == 1) {
		*msg = "no password available; not opened";
		return status;
	}
	if (rc == PDFSTAMP_E_PASSWORD && a->src->kind == CLI_PW_NONE && !a->asked)
		/* Only the empty password was tried: say how to give one. */
		*msg = "the file needs a password; give --password-file, "
		       "--password-fd or --password-env";
	return cli_exit_status(rc);
}

/* ---- the list of files ------------------------------------------------------- */

struct file_list {
	char **v;
	size_t n, cap;
};

static int list_add(struct file_list *l, const char *s, size_t len)
{
	char *copy;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		char **nv;

		if (ncap > SIZE_MAX / sizeof *nv || ncap < l->cap)
			return -1;
		nv = realloc(l->v, ncap * sizeof *nv);
		if (!nv)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, s, len);
	copy[len] = '\0';
	l->v[l->n++] = copy;
	return 0;
}

static void list_free(struct file_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* Reads --files-from NAME: one path per line, the LF removed (nothing
 * else: a path may end in a space or a CR), empty lines skipped.  Returns
 * 0 or an exit status (message printed unless QUIET). */
static int read_files_from(const char *name, struct file_list *l, int quiet)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uintmax_t lineno = 0;
	int rc = 0, is_stdin = strcmp(name, "-") == 0;

	f = is_stdin ? stdin : fopen(name, "r");
	if (!f) {
		if (!quiet)
			cli_error(name, "cannot open the --files-from list: %s", strerror(errno));
		return CLI_EXIT_USAGE; /* note 9 */
	}
	errno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			len--;
		if (len == 0)
			continue;
		if (memchr(line, '\0', (size_t)len)) {
			if (!quiet)
				cli_error(is_stdin ? "standard input" : name,
				          "--files-from: line %ju contains a NUL byte", lineno);
			rc = CLI_EXIT_USAGE;
			break;
		}
		if (list_add(l, line, (size_t)len) != 0) {
			if (!quiet)
				cli_error(NULL, "out of memory");
			rc = CLI_EXIT_IO;
			break;
		}
		errno = 0;
	}
	if (rc == 0 && ferror(f)) {
		if (!quiet)
			cli_error(is_stdin ? "standard input" : name,
			          "cannot read the --files-from list: %s",
			          strerror(errno ? errno : EIO));
		rc = CLI_EXIT_USAGE; /* note 9 */
	}
	free(line);
	if (!is_stdin)
		fclose(f);
	return rc;
}

/* The shard of NAME among N (note 12): FNV-1a over its bytes, mixed by
 * SplitMix64's finaliser, modulo N; 0-based. */
static uint32_t shard_of(const char *name, uint32_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++) {
		h ^= *p;
		h *= UINT64_C(0x100000001b3);
	}
	h ^= h >> 30;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	h ^= h >> 27;
	h *= UINT64_C(0x94d049bb133111eb);
	h ^= h >> 31;
	return (uint32_t)(h % n);
}

/* Keeps the files of shard RUN->shard_k of RUN->shard_n, in their order. */
static void shard(const struct cli_run *run, struct file_list *l)
{
	size_t i, k = 0;

	for (i = 0; i < l->n; i++) {
		if (shard_of(l->v[i], run->shard_n) == run->shard_k - 1)
			l->v[k++] = l->v[i];
		else
			free(l->v[i]);
	}
	l->n = k;
}

/* 1 if the password source reads standard input. */
static int pw_uses_stdin(const struct cli_pw_src *src)
{
	return (src->kind == CLI_PW_FILE && strcmp(src->arg, "-") == 0) ||
	       (src->kind == CLI_PW_FD && src->fd == STDIN_FILENO);
}

/* ---- the command line (note 2) ------------------------------------------------ */

static int writes(const struct cli_ops *ops)
{
	return ops->open == CLI_OPEN_UPDATE || ops->open == CLI_OPEN_PLAIN;
}

/* Checks the command line and fills FILES.  Returns 0 or an exit status
 * (message printed); *LISTED is set once the --files-from list was read
 * (or tried), so that FILES is all a failure line can name (note 4). */
static int make_list(const struct cli_ops *ops, const struct cli_run *run,
                     int nops, char **operands, struct file_list *files,
                     int *listed, void *arg)
{
	size_t k;
	int i, rc;

	*listed = 0;
	for (i = 0; i < nops; i++) {
		if (list_add(files, operands[i], strlen(operands[i])) != 0) {
			cli_error(NULL, "out of memory");
			return CLI_EXIT_IO;
		}
	}

	if (writes(ops) && run->output && run->in_place) {
		cli_error(NULL, "-o and --in-place exclude each other");
		return cli_usage_hint(ops->name);
	}
	if (writes(ops) && !run->output && !run->in_place) {
		cli_error(NULL, "give -o OUT (one file) or --in-place");
		return cli_usage_hint(ops->name);
	}
	if (nops <= 0 && !run->files_from) {
		cli_error(NULL, "no input file");
		return cli_usage_hint(ops->name);
	}
	if (ops->check && !(run->output && !run->files_from && nops != 1) &&
	    (rc = ops->check(arg)) != 0)
		return rc;
	if (writes(ops) && run->output && strcmp(run->output, "-") == 0 && !run->dry_run) {
		/* Note 7: the PDF is all that goes to standard output. */
		if (run->json || run->verbose) {
			cli_error(NULL, "-o - writes the PDF to standard output, so %s "
			          "cannot print there too", run->json ? "--json" : "-v");
			return cli_usage_hint(ops->name);
		}
		if (isatty(STDOUT_FILENO)) {
			cli_error(NULL, "-o - would write the PDF to the terminal; redirect "
			          "standard output to a file or a pipe, or give -o FILE");
			return cli_usage_hint(ops->name);
		}
	}
	if (run->files_from && strcmp(run->files_from, "-") == 0 &&
	    pw_uses_stdin(&run->src)) {
		cli_error(NULL, "--files-from - and %s both read standard input",
		          run->src.optname);
		return cli_usage_hint(ops->name);
	}
	if (cli_key_check(run) != 0) /* note 14 */
		return cli_usage_hint(ops->name);
	*listed = 1;
	if (run->files_from && (rc = read_files_from(run->files_from, files, 0)) != 0)
		return rc;
	for (k = 0; k < files->n; k++) {
		if (strcmp(files->v[k], "-") == 0) {
			/* note 10 */
			cli_error(NULL, "standard input ('-') is not an input here: give each FILE "
			          "by its name (./- for a file named '-')");
			return cli_usage_hint(ops->name);
		}
	}
	if (writes(ops) && run->output && files->n != 1) {
		cli_error(NULL, "-o needs exactly one input file (%zu given); "
		          "use --in-place for several", files->n);
		return cli_usage_hint(ops->name);
	}
	return 0;
}

/* Note 4: with --json, the failure line of every file of FILES for a
 * failure found before the first file was opened; the --files-from list
 * is added first unless LISTED. */
static void fail_all(const struct cli_run *run, struct file_list *files, int listed,
                     int status)
{
	const char *ff = run->files_from;
	int stdin_ok = !isatty(STDIN_FILENO) && !run->pw_stdin && !pw_uses_stdin(&run->src);
	size_t k;

	if (!run->json || status == 0 ||
	    (run->output && strcmp(run->output, "-") == 0 && !run->dry_run))
		return; /* -o -: standard output is the PDF's alone (note 7) */
	if (!listed && ff && (strcmp(ff, "-") != 0 || stdin_ok))
		(void)read_files_from(ff, files, 1); /* what it holds, if anything */
	for (k = 0; k < files->n; k++)
		cli_json_failure(files->v[k], status, cli_last_error());
	fflush(stdout);
}

int cli_fail_early(const struct cli_run *run, int nops, char **operands, int status)
{
	struct file_list files;
	int i;

	memset(&files, 0, sizeof files);
	for (i = 0; i < nops && run->json && status != 0; i++)
		if (list_add(&files, operands[i], strlen(operands[i])) != 0)
			break;
	fail_all(run, &files, 0, status);
	list_free(&files);
	return status;
}

/* ---- one file ------------------------------------------------------------------ */

/* What every worker shares (note 11).  LOCK guards NEXT, the slots and
 * the printing; AUTH_LOCK the password's intake (note 5). */
struct batch {
	const struct cli_ops *ops;
	const struct cli_run *run;
	void *arg;
	const struct file_list *files;
	struct cli_auth auth;
	pthread_mutex_t auth_lock;
	pthread_mutex_t lock;
	size_t next;            /* the next file to take */
	struct slot *slots;     /* one per file */
	size_t next_print;      /* --ordered: the first file not printed yet */
	size_t printed;         /* files whose output was printed */
	int status;             /* the worst exit status so far */
	int quiet;              /* several files at a time: no progress bars */
	struct cli_ledger *ledger;
	pdfstamp_group *group;  /* the workers' shared directory syncs */
	size_t group_size;      /* files a worker takes at a time at most (note 13) */
	size_t nworkers;
};

/* The most files a worker holds at a time (note 13). */
#define CLI_GROUP 16

/* One file's outcome until it is printed. */
struct slot {
	char *out;              /* its output (cli_out() while it ran) */
	size_t len;
	int done;
};

/* One worker: its context and warnings. */
struct driver {
	struct batch *b;
	pdfstamp_ctx *ctx;
	struct cli_warn_target warn;
};

/* 1 once the password needs no more intake: it was read, asked for, or
 * failed, or only the empty password can be tried (note 5). */
static int auth_ready(const struct cli_auth *a)
{
	if (a->pw_failed)
		return 1;
	if (a->src->kind != CLI_PW_NONE)
		return a->pw.have;
	return a->asked || !isatty(STDIN_FILENO);
}

/* auth_doc for a worker: under the batch's auth_lock until the password
 * is known, so that it is read or asked for once; then, read-only, in
 * parallel. */
static int auth_shared(struct batch *b, pdfstamp_doc *doc, const char **msg)
{
	int status;

	pthread_mutex_lock(&b->auth_lock);
	if (auth_ready(&b->auth)) {
		pthread_mutex_unlock(&b->auth_lock);
		return auth_doc(&b->auth, doc, msg);
	}
	status = auth_doc(&b->auth, doc, msg);
	pthread_mutex_unlock(&b->auth_lock);
	return status;
}

/* What the option of a library hint does (note 4), or NULL. */
static const char *hint_text(int hint)
{
	switch (hint) {
	case PDFSTAMP_HINT_ALLOW_TRAILING:
		return "--allow-trailing-bytes keeps them and appends anyway";
	case PDFSTAMP_HINT_ALLOW_IDENTITY: return "--allow-identity writes them so anyway";
	case PDFSTAMP_HINT_REWRITE_FORCE: return "--force to do it anyway";
	case PDFSTAMP_HINT_AUTH_FORCE: return "--force overrides";
	case PDFSTAMP_HINT_FONT: return "give one with --font";
	case PDFSTAMP_HINT_DSS_LATER: return "'pdfstamp dss --fetch' adds it later";
	default: return NULL;
	}
}

/* Reports a failure of FILE (note 4) and returns STATUS; CALLED is FILE's
 * cli_file when its call ran (then ops->failed adds to the report). */
static int fail_called(const struct driver *d, const char *file, int status, const char *msg,
                       int rc, const struct cli_file *called)
{
	char full[512];

	if (!msg || !*msg) {
		int hint = pdfstamp_ctx_errhint(d->ctx);
		const char *h = hint_text(hint);
		msg = pdfstamp_ctx_errmsg(d->ctx);
		if (msg && *msg && h && (d->b->ops->hints & CLI_HINT(hint))) {
			snprintf(full, sizeof full, "%s (%s)", msg, h);
			msg = full;
		}
	}
	if (!msg || !*msg)
		msg = rc < 0 ? pdfstamp_strerror(rc) : "cannot authenticate";
	cli_error(file, "%s", msg);
	if (called && d->b->ops->failed) {
		struct cli_json j;
		if (!d->b->run->json) {
			d->b->ops->failed(called, NULL, d->b->arg);
			return status;
		}
		cli_json_fail_begin(&j, file, status, msg);
		d->b->ops->failed(called, &j, d->b->arg);
		cli_json_line_end(&j, file);
	} else if (d->b->run->json) {
		cli_json_failure(file, status, msg);
	}
	return status;
}

static int fail(const struct driver *d, const char *file, int status, const char *msg, int rc)
{
	return fail_called(d, file, status, msg, rc, NULL);
}

/* Opens and authenticates F per ops->open.  0, or the failure reported and
 * its exit status returned. */
static int open_file(struct driver *d, struct cli_file *f)
{
	const struct cli_ops *ops = d->b->ops;
	const struct cli_run *run = d->b->run;
	const char *msg = NULL, *h;
	int rc, status = 0, encrypted, key = cli_key_given(&run->key);

	/* a dry run opens read-only, in place too (write_common.c note 4) */
	rc = pdfstamp_doc_open(d->ctx, &f->doc, f->name,
	                       writes(ops) ? (run->in_place && !run->dry_run ? PDFSTAMP_OPEN_WRITE
	                                                                       : 0)
	                                   : ops->open_flags);
	if (rc != 0)
		return fail(d, f->name, cli_exit_status(rc), NULL, rc);
	encrypted = pdfstamp_doc_is_encrypted(f->doc);
	if (ops->open == CLI_OPEN_READ && !encrypted && run->src.kind != CLI_PW_NONE)
		cli_warning(f->name, "a password was given, but the file is not encrypted "
		            "(anything added to it is in clear)");
	if (ops->open == CLI_OPEN_READ && !encrypted && key)
		cli_warning(f->name, "a key was given, but the file is not encrypted");
	h = encrypted ? pdfstamp_doc_security_handler(f->doc) : NULL;
	if (((ops->open == CLI_OPEN_READ || ops->open == CLI_OPEN_UPDATE) && h &&
	     strcmp(h, "Adobe.PubSec") == 0) ||
	    (ops->open == CLI_OPEN_UPDATE && !encrypted && key && run->src.kind == CLI_PW_NONE))
		status = cli_key_auth(&d->b->auth.key, f->doc, d->b->auth.flags, &msg);
	else if ((ops->open == CLI_OPEN_READ && encrypted) ||
	         (ops->open == CLI_OPEN_UPDATE && (encrypted || run->src.kind != CLI_PW_NONE)))
		status = auth_shared(d->b, f->doc, &msg);
	if (status != 0)
		return fail(d, f->name, status, msg, 0);
	return 0;
}

/* Sets F's output mode (writing commands). */
static void output_mode(const struct cli_run *run, struct cli_file *f)
{
	struct pdfstamp_write_opts init = PDFSTAMP_WRITE_OPTS_INIT;

	f->wopts = init;
	if (run->in_place) {
		f->wopts.flags |= PDFSTAMP_WRITE_IN_PLACE;
		f->output = f->name;
	} else if (strcmp(run->output, "-") == 0) {
		f->wopts.flags |= PDFSTAMP_WRITE_TO_FD;
		f->wopts.output_fd = STDOUT_FILENO;
		f->output = run->output;
	} else {
		f->wopts.output = run->output;
		f->output = run->output;
	}
	if (run->allow_trailing)
		f->wopts.flags |= PDFSTAMP_WRITE_ALLOW_TRAILING;
	if (run->allow_identity)
		f->wopts.flags |= PDFSTAMP_WRITE_ALLOW_IDENTITY;
	if (run->dry_run)
		f->wopts.flags |= PDFSTAMP_WRITE_DRY_RUN;
}

/* One file in a worker's hands (note 13). */
struct work {
	size_t k;               /* its index in the list */
	struct cli_file f;
	struct cli_ledger_call lc;
	void *res;              /* ops->res_size bytes of the worker's */
	FILE *mem;              /* its output (cli_out() while it is worked on) */
	char *out;
	size_t len;
	int status;
	int open;               /* called; still to finish (commit, close, output) */
};

/* Up to the call: the ledger, open, authentication, the command's call
 * (deferred for a group, note 13).  Sets w->open when the rest is to
 * follow, else w->status. */
static void begin_file(struct driver *d, struct work *w, int defer)
{
	const struct cli_ops *ops = d->b->ops;
	struct cli_file *f = &w->f;
	int rc;

	memset(f, 0, sizeof *f);
	f->name = d->b->files->v[w->k];
	f->run = d->b->run;
	f->ctx = d->ctx;
	f->res = w->res;
	f->quiet = d->b->quiet;
	f->index = w->k;
	d->warn.file = f->name;
	w->status = 0;
	w->open = 0;
	if (d->b->ledger && cli_ledger_skip(d->b->ledger, d->ctx, f->run, f->name, &w->status))
		return;
	if (writes(ops))
		output_mode(d->b->run, f);
	if (defer)
		f->wopts.flags |= PDFSTAMP_WRITE_DEFER;
	if (d->b->ledger && (w->status = cli_ledger_begin(d->b->ledger, &w->lc, f)) != 0) {
		w->status = fail(d, f->name, w->status, "cannot write the ledger", 0);
		return;
	}
	if (ops->open != CLI_OPEN_NONE && (w->status = open_file(d, f)) != 0) {
		pdfstamp_doc_close(f->doc);
		f->doc = NULL;
	} else if ((rc = ops->call(f, d->b->arg)) != 0) {
		/* Closing releases the lock only after the library has finished
		 * (update synced and journal removed, or rolled back). */
		pdfstamp_doc_close(f->doc);
		f->doc = NULL;
		w->status = fail_called(d, f->name, cli_exit_status(rc), f->why, rc, f);
	} else {
		w->open = 1;
		return;
	}
	if (d->b->ledger && cli_ledger_end(&w->lc, w->status) != 0)
		w->status = cli_worst(w->status, CLI_EXIT_IO);
}

/* The rest: a deferred update committed (written, synced, checked), the
 * document closed, the output. */
static void finish_file(struct driver *d, struct work *w)
{
	struct cli_file *f = &w->f;
	int rc;

	d->warn.file = f->name;
	rc = pdfstamp_doc_commit(f->doc);
	pdfstamp_doc_close(f->doc);
	f->doc = NULL;
	w->open = 0;
	if (rc != 0)
		w->status = fail_called(d, f->name, cli_exit_status(rc), NULL, rc, f);
	else
		w->status = d->b->ops->output(f, d->b->arg);
	if (d->b->ledger && cli_ledger_end(&w->lc, w->status) != 0)
		w->status = cli_worst(w->status, CLI_EXIT_IO);
}

/* Writes what can be written now of the slots, under b->lock (note 11). */
static void print_ready(struct batch *b, size_t k)
{
	const struct cli_ops *ops = b->ops;
	size_t i = b->run->ordered ? b->next_print : k;

	for (; i < b->files->n && b->slots[i].done == 1;
	     i = b->run->ordered ? i + 1 : b->files->n) {
		if ((ops->flags & CLI_BLANK_BETWEEN) && !b->run->json && b->printed > 0)
			putchar('\n');
		if (b->slots[i].len)
			fwrite(b->slots[i].out, 1, b->slots[i].len, stdout);
		free(b->slots[i].out);
		b->slots[i].out = NULL;
		b->slots[i].done = 2;
		b->printed++;
		if (b->run->ordered)
			b->next_print = i + 1;
		if ((ops->flags & CLI_FLUSH_ALWAYS) ||
		    ((ops->flags & CLI_FLUSH_LINES) && (b->run->json || b->run->verbose)))
			fflush(stdout);
	}
}

/* Takes up to N files for W, no more than a fair share of those left
 * (note 13); returns how many. */
static size_t take(struct batch *b, struct work *w, size_t n)
{
	size_t i, share;

	pthread_mutex_lock(&b->lock);
	share = (b->files->n - b->next) / b->nworkers;
	if (n > share)
		n = share ? share : 1;
	for (i = 0; i < n && b->next < b->files->n; i++)
		w[i].k = b->next++;
	pthread_mutex_unlock(&b->lock);
	return i;
}

/* Runs STEP on W with its output stream as cli_out(). */
static void with_out(struct driver *d, struct work *w, void (*step)(struct driver *, struct work *))
{
	cli_set_out(w->mem);
	step(d, w);
	cli_set_out(NULL);
}

static void begin_deferred(struct driver *d, struct work *w)
{
	begin_file(d, w, 1);
}

static void begin_now(struct driver *d, struct work *w)
{
	begin_file(d, w, 0);
}

/* The journal of a deferred update (note 13); a failure ends the file. */
static void journal_file(struct driver *d, struct work *w)
{
	int rc;

	d->warn.file = w->f.name;
	if ((rc = pdfstamp_doc_journal(w->f.doc)) == 0)
		return;
	pdfstamp_doc_close(w->f.doc);
	w->f.doc = NULL;
	w->open = 0;
	w->status = fail_called(d, w->f.name, cli_exit_status(rc), NULL, rc, &w->f);
	if (d->b->ledger && cli_ledger_end(&w->lc, w->status) != 0)
		w->status = cli_worst(w->status, CLI_EXIT_IO);
}

/* Prepares the N files of W in lane D: each begun, its result ready. */
static void begin_group(struct driver *d, struct work *w, size_t n, char *res, int defer)
{
	const struct cli_ops *ops = d->b->ops;
	size_t i;

	for (i = 0; i < n; i++) {
		w[i].res = res ? res + i * ops->res_size : NULL;
		if (w[i].res) {
			memset(w[i].res, 0, ops->res_size);
			if (ops->res_init)
				ops->res_init(w[i].res);
		}
		w[i].out = NULL;
		w[i].len = 0;
		w[i].open = 0;
		if (!(w[i].mem = open_memstream(&w[i].out, &w[i].len))) {
			cli_error(d->b->files->v[w[i].k], "out of memory");
			w[i].status = CLI_EXIT_IO;
			continue;
		}
		with_out(d, &w[i], defer ? begin_deferred : begin_now);
	}
}

/* Ends the N files of W begun in lane D: the journals of the group first
 * (their directory synced once, by the first commit), then each commit,
 * close and output, each file's output printed once it is done. */
static void finish_group(struct driver *d, struct work *w, size_t n)
{
	struct batch *b = d->b;
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i].open)
			with_out(d, &w[i], journal_file);
	for (i = 0; i < n; i++) {
		if (w[i].open)
			with_out(d, &w[i], finish_file);
		if (w[i].mem && fclose(w[i].mem) != 0) {
			cli_error(b->files->v[w[i].k], "out of memory");
			w[i].status = cli_worst(w[i].status, CLI_EXIT_IO);
		}
		if (w[i].res && b->ops->res_clear)
			b->ops->res_clear(w[i].res);
		pthread_mutex_lock(&b->lock);
		b->slots[w[i].k].out = w[i].mem ? w[i].out : NULL;
		b->slots[w[i].k].len = w[i].mem ? w[i].len : 0;
		b->slots[w[i].k].done = 1;
		b->status = cli_worst(b->status, w[i].status);
		print_ready(b, w[i].k);
		pthread_mutex_unlock(&b->lock);
		w[i].mem = NULL;
	}
}

/* A worker (notes 11, 13): two lanes (contexts) and, for groups, a
 * committer thread that finishes one lane's group while the worker
 * prepares the next group in the other lane. */
struct worker {
	struct batch *b;
	struct driver lane[2];
	struct work w[2][CLI_GROUP];
	char *res[2];
	pthread_t committer;
	int has_committer;
	pthread_mutex_t m;
	pthread_cond_t c;
	int handed;             /* lane whose group the committer is to finish, or -1 */
	size_t nhanded;
	int stop;
};

static void *committer(void *arg)
{
	struct worker *k = arg;
	int lane;

	pthread_mutex_lock(&k->m);
	for (;;) {
		while (k->handed < 0 && !k->stop)
			pthread_cond_wait(&k->c, &k->m);
		if (k->handed < 0)
			break;
		lane = k->handed;
		pthread_mutex_unlock(&k->m);
		finish_group(&k->lane[lane], k->w[lane], k->nhanded);
		pthread_mutex_lock(&k->m);
		k->handed = -1;
		pthread_cond_broadcast(&k->c);
	}
	pthread_mutex_unlock(&k->m);
	return NULL;
}

/* Waits until the committer is idle (LANE's group, if it had one, done). */
static void committer_idle(struct worker *k)
{
	pthread_mutex_lock(&k->m);
	while (k->handed >= 0)
		pthread_cond_wait(&k->c, &k->m);
	pthread_mutex_unlock(&k->m);
}

static void *worker(void *arg)
{
	struct worker *k = arg;
	struct batch *b = k->b;
	size_t n, g = b->group_size;
	int lane = 0, i;

	for (i = 0; i < (g > 1 ? 2 : 1); i++) {
		if (b->ops->res_size && !(k->res[i] = calloc(g, b->ops->res_size))) {
			cli_error(NULL, "out of memory");
			pthread_mutex_lock(&b->lock);
			b->status = cli_worst(b->status, CLI_EXIT_IO);
			pthread_mutex_unlock(&b->lock);
			goto out;
		}
	}
	k->handed = -1;
	k->has_committer = g > 1 && pthread_create(&k->committer, NULL, committer, k) == 0;
	while ((n = take(b, k->w[lane], g)) > 0) {
		begin_group(&k->lane[lane], k->w[lane], n, k->res[lane], g > 1);
		if (!k->has_committer) {
			finish_group(&k->lane[lane], k->w[lane], n);
			continue;
		}
		committer_idle(k); /* the other lane's group is done */
		pthread_mutex_lock(&k->m);
		k->handed = lane;
		k->nhanded = n;
		pthread_cond_broadcast(&k->c);
		pthread_mutex_unlock(&k->m);
		lane ^= 1;
	}
	if (k->has_committer) {
		committer_idle(k);
		pthread_mutex_lock(&k->m);
		k->stop = 1;
		pthread_cond_broadcast(&k->c);
		pthread_mutex_unlock(&k->m);
		pthread_join(k->committer, NULL);
	}
out:
	free(k->res[0]);
	free(k->res[1]);
	return NULL;
}

/* The number of workers (note 11): --jobs, else the online CPUs; never
 * more than the files; 1 for a command without CLI_BATCH. */
static int count_workers(const struct cli_ops *ops, const struct cli_run *run, size_t nfiles)
{
	long n = run->jobs;

	if (!(ops->flags & CLI_BATCH))
		return 1;
	if (n <= 0) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n < 1)
			n = 1;
		if (n > 64)
			n = 64;
	}
	return (size_t)n > nfiles ? (int)nfiles : (int)n;
}

/* Runs the workers; returns the worst status.  The calling thread is the
 * first worker. */
static int run_workers(struct batch *b, int nworkers)
{
	struct worker *k = calloc((size_t)nworkers, sizeof *k);
	pthread_t *t = calloc((size_t)nworkers, sizeof *t);
	int i, j, started = 0, made = 0, rc, lanes = b->group_size > 1 ? 2 : 1;

	if (!k || !t) {
		free(k);
		free(t);
		cli_error(NULL, "out of memory");
		return CLI_EXIT_IO;
	}
	for (i = 0; i < nworkers; i++, made++) {
		k[i].b = b;
		pthread_mutex_init(&k[i].m, NULL);
		pthread_cond_init(&k[i].c, NULL);
		for (j = 0; j < lanes; j++) {
			struct driver *d = &k[i].lane[j];
			d->b = b;
			if ((rc = pdfstamp_ctx_new(&d->ctx)) != 0)
				break;
			pdfstamp_ctx_set_warn(d->ctx, cli_warn_cb, &d->warn);
			pdfstamp_ctx_set_group(d->ctx, b->group);
		}
		if (j < lanes) {
			b->status = cli_worst(b->status, cli_lib_error(NULL, rc, NULL));
			made++;
			break;
		}
	}
	nworkers = i;
	b->nworkers = nworkers > 0 ? (size_t)nworkers : 1;
	for (i = 1; i < nworkers; i++) {
		if (pthread_create(&t[i], NULL, worker, &k[i]) != 0)
			break; /* the others take its share */
		started = i;
	}
	if (nworkers > 0)
		worker(&k[0]);
	for (i = 1; i <= started; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < made; i++) {
		pdfstamp_ctx_free(k[i].lane[0].ctx);
		pdfstamp_ctx_free(k[i].lane[1].ctx);
		pthread_mutex_destroy(&k[i].m);
		pthread_cond_destroy(&k[i].c);
	}
	if (nworkers == 0 || b->next < b->files->n) {
		/* no context could be made: the files not taken fail */
		for (; b->next < b->files->n; b->next++)
			if (b->run->json)
				cli_json_failure(b->files->v[b->next], CLI_EXIT_IO,
				                 cli_last_error());
	}
	free(k);
	free(t);
	return b->status;
}

int cli_each_file(const struct cli_ops *ops, struct cli_run *run, int nops,
                  char **operands, void *arg)
{
	struct file_list files;
	struct batch b;
	int rc, listed;

	memset(&files, 0, sizeof files);
	rc = make_list(ops, run, nops, operands, &files, &listed, arg);
	if (rc == 0 && run->shard_n)
		shard(run, &files);
	if (rc != 0 || files.n == 0) {
		/* an empty --files-from list: nothing to do */
		fail_all(run, &files, listed, rc);
		list_free(&files);
		return rc;
	}
	memset(&b, 0, sizeof b);
	b.ops = ops;
	b.run = run;
	b.arg = arg;
	b.files = &files;
	pthread_mutex_init(&b.lock, NULL);
	pthread_mutex_init(&b.auth_lock, NULL);
	auth_init(&b.auth, &run->src, run->force ? PDFSTAMP_AUTH_FORCE : 0, ops->prompt);
	rc = cli_key_load(&b.auth.key, &run->key); /* note 14 */
	if (rc == 0 && ops->ask_first && !cli_key_given(&run->key))
		rc = auth_ask_now(&b.auth);
	if (rc == 0 && ops->prepare)
		rc = ops->prepare(arg);
	if (rc == 0 && run->ledger)
		rc = cli_ledger_open(&b.ledger, run, writes(ops));
	if (rc == 0 && !(b.slots = calloc(files.n, sizeof *b.slots))) {
		cli_error(NULL, "out of memory");
		rc = CLI_EXIT_IO;
	}
	if (rc == 0) {
		int n = count_workers(ops, run, files.n);
		b.quiet = n > 1;
		b.group_size = writes(ops) && run->in_place && !run->dry_run &&
		                       (ops->flags & CLI_BATCH) && files.n > 1 ? CLI_GROUP : 1;
		if ((n > 1 || b.group_size > 1) && run->in_place && !run->dry_run &&
		    (rc = pdfstamp_group_new(&b.group)) != 0)
			rc = cli_lib_error(NULL, rc, NULL);
		else
			rc = run_workers(&b, n);
		pdfstamp_group_free(b.group);
	} else {
		fail_all(run, &files, 1, rc);
	}
	cli_ledger_close(b.ledger);
	free(b.slots);
	pthread_mutex_destroy(&b.lock);
	pthread_mutex_destroy(&b.auth_lock);
	cli_pw_clear(&b.auth.pw);
	cli_key_clear(&b.auth.key);
	list_free(&files);
	return cli_finish_stdout(rc);
}

void cli_file_json_begin(struct cli_json *j, const struct cli_file *f)
{
	cli_json_ok_begin(j, f->name);
	if (f->output) {
		cli_json_key(j, "output");
		cli_json_str(j, f->output);
	}
	cli_json_dry_run(j, f);
}
