/*
 * write_common.c - what `pdfstamp stamp` and `pdfstamp meta` share: the
 * output mode, the list of files, password intake, the per-file loop, the
 * result output and strict parsing of option values.
 *
 * DESIGN NOTES
 *
 *  1. Output mode: exactly one of -o OUT and --in-place.  -o takes exactly
 *     one input; several inputs (operands plus --files-from lines) need
 *     --in-place.  Everything about the command line is checked before
 *     the first file is touched, so a usage error never leaves some files
 *     updated and others not.
 *  2. In place, a document is opened with PDFSTAMP_OPEN_WRITE (an
 *     exclusive, non-blocking lock held until it is closed); for -o it is
 *     opened read-only and the library writes OUT through a temporary
 *     file, fsync and rename.  Durability, the journal and the check of
 *     the written revision are the library's (incr.c); the CLI adds no
 *     I/O of its own to the PDF files.
 *  3. Files are independent: one file's failure is reported (stderr, and
 *     a JSON line with --json) and the next file still goes ahead; the
 *     exit status is the worst one (cli_worst).
 *  4. The password is read once, when the first encrypted file needs it,
 *     and reused; without a password option the empty password is tried
 *     first and, on a terminal, the user is asked once (as in cmd_info.c).
 *     A failed intake is not retried (stdin, for one, has been consumed).
 *     struct cli_auth holds this logic for every command that opens
 *     encrypted files (also verify).  The rewriting commands (rotate,
 *     encrypt) reuse the loop through the hooks of struct cli_write:
 *     no_auth, an early prompt, a prepare step for their own passwords
 *     and their own --json members.
 *  5. --files-from and a password read from standard input cannot share
 *     it: that is a usage error, not a race over who reads which line.
 *  6. --json prints exactly one line per file, in order:
 *       {"file","ok":true,"output","base_length","xref_offset",
 *        "bytes_appended","objects":[...]}
 *       {"file","ok":false,"exit":N,"error":"message"}
 *     The keys are a stable interface (pdfstamp(1), JSON OUTPUT).
 *  7. Numbers on the command line are parsed with strtod/strtoll in the
 *     C locale (the program never calls setlocale), after checking that
 *     the text has only the characters of a decimal number, so "0x10",
 *     "inf", "nan", " 1" and "1e999" are all refused.
 *  8. -o - writes the PDF to standard output: the library builds and
 *     checks it in a temporary file that never has a name (in $TMPDIR,
 *     else the current directory) and then copies it to descriptor 1
 *     (PDFSTAMP_WRITE_TO_FD).  Nothing else may go there, so --json and
 *     -v are usage errors with it, and so is a terminal as stdout.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char cli_write_help[] =
	"Output (exactly one of -o and --in-place):\n"
	"  -o, --output OUT      write the updated copy to OUT (only with one FILE);\n"
	"                        OUT is written to a temporary file, synced and\n"
	"                        renamed, so it is never left half-written;\n"
	"                        '-' writes standard output instead (not a\n"
	"                        terminal, not with --json or -v), once the copy\n"
	"                        was built and checked in a nameless temporary\n"
	"                        file in $TMPDIR (else the current directory)\n"
	"  -i, --in-place        append to each FILE itself (required with several\n"
	"                        FILEs); a crash is rolled back by the next -i run\n"
	"                        or 'pdfstamp recover FILE'\n"
	"\n"
	"Other options:\n"
	"      --files-from LIST read more FILE names from LIST, one per line\n"
	"                        (empty lines are skipped; '-' reads standard input)\n"
	"      --json            print one JSON object per FILE on one line each\n"
	"                        (keys: see JSON OUTPUT in pdfstamp(1))\n"
	"  -v, --verbose         print one line per updated FILE (not with --json)\n"
	"      --allow-trailing-bytes\n"
	"                        append even if bytes follow the last %%EOF\n"
	"      --allow-identity  append to an encrypted file whose string or stream\n"
	"                        filter is /Identity (new text is then in clear)\n"
	"      --force           accept a /Perms entry that does not match /P (warns);\n"
	"                        the permissions /Perms records then apply\n"
	"  -h, --help            show this help and exit\n"
	"\n";

/* ---- strict number parsing ------------------------------------------------ */

/* Parses one decimal number at S; sets *END after it.  Returns 0 or -1. */
static int parse_one(const char *s, double *out, const char **end)
{
	const char *p = s;
	char *e;
	double v;
	int digits = 0;

	/* [sign] digits [. digits] [e [sign] digits], nothing else. */
	if (*p == '+' || *p == '-')
		p++;
	while (*p >= '0' && *p <= '9') {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits++;
		}
	}
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	errno = 0;
	v = strtod(s, &e);
	/* strtod must have read exactly what we scanned (C locale: '.'). */
	if (e != p || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
		return -1;
	*out = v;
	*end = p;
	return 0;
}

int cli_parse_doubles(const char *s, double *out, int n)
{
	const char *p = s;
	int i;

	for (i = 0; i < n; i++) {
		if (parse_one(p, &out[i], &p) != 0)
			return -1;
		if (i + 1 < n) {
			if (*p != ',')
				return -1;
			p++;
		}
	}
	return *p == '\0' ? 0 : -1;
}

int cli_parse_double(const char *s, double *out)
{
	return cli_parse_doubles(s, out, 1);
}

int cli_parse_int64(const char *s, int64_t *out)
{
	const char *p;
	char *e;
	long long v;

	if (!(*s >= '0' && *s <= '9'))
		return -1; /* no sign, no space: strtoll would accept both */
	for (p = s; *p; p++)
		if (!(*p >= '0' && *p <= '9'))
			return -1;
	errno = 0;
	v = strtoll(s, &e, 10);
	if (errno == ERANGE || *e != '\0' || v < 0 || v > INT64_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int cli_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	int n;

	while (*p) {
		n = cli_utf8_next(p, &cp);
		if (n < 1)
			return 0;
		p += n;
	}
	return 1;
}

/* ---- options ---------------------------------------------------------------- */

int cli_write_option(struct cli_write *w, int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		if (w->output) {
			cli_error(NULL, "-o/--output given twice");
			return CLI_EXIT_USAGE;
		}
		if (!*arg) {
			cli_error(NULL, "-o/--output needs a file name");
			return CLI_EXIT_USAGE;
		}
		w->output = arg;
		return 0;
	case 'i':
		w->in_place = 1;
		return 0;
	case 'v':
		w->verbose = 1;
		return 0;
	case CLI_OPT_W_JSON:
		w->json = 1;
		return 0;
	case CLI_OPT_W_FILES_FROM:
		if (w->files_from) {
			cli_error(NULL, "--files-from given twice");
			return CLI_EXIT_USAGE;
		}
		if (!*arg) {
			cli_error(NULL, "--files-from needs a file name");
			return CLI_EXIT_USAGE;
		}
		w->files_from = arg;
		return 0;
	case CLI_OPT_W_ALLOW_TRAILING:
		w->allow_trailing = 1;
		return 0;
	case CLI_OPT_W_ALLOW_IDENTITY:
		w->allow_identity = 1;
		return 0;
	case CLI_OPT_W_FORCE:
		w->force = 1;
		return 0;
	case CLI_OPT_W_DATE:
		if (!*arg) {
			cli_error(NULL, "--date needs 'now' or an ISO 8601 date");
			return CLI_EXIT_USAGE;
		}
		w->date = arg; /* the library validates it (a usage error) */
		return 0;
	default:
		return cli_pw_option(&w->src, opt, arg);
	}
}

/* ---- the list of files ---------------------------------------------------- */

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
 * 0 or an exit status (message printed). */
static int read_files_from(const char *name, struct file_list *l)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uintmax_t lineno = 0;
	int rc = 0, is_stdin = strcmp(name, "-") == 0;

	f = is_stdin ? stdin : fopen(name, "r");
	if (!f) {
		cli_error(name, "cannot open the --files-from list: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	errno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			len--;
		if (len == 0)
			continue;
		if (memchr(line, '\0', (size_t)len)) {
			cli_error(is_stdin ? "standard input" : name,
			          "--files-from: line %ju contains a NUL byte", lineno);
			rc = CLI_EXIT_USAGE;
			break;
		}
		if (list_add(l, line, (size_t)len) != 0) {
			cli_error(NULL, "out of memory");
			rc = CLI_EXIT_IO;
			break;
		}
		errno = 0;
	}
	if (rc == 0 && ferror(f)) {
		cli_error(is_stdin ? "standard input" : name,
		          "cannot read the --files-from list: %s",
		          strerror(errno ? errno : EIO));
		rc = CLI_EXIT_IO;
	}
	free(line);
	if (!is_stdin)
		fclose(f);
	return rc;
}

/* ---- authentication ----------------------------------------------------------- */

void cli_auth_init(struct cli_auth *a, const struct cli_pw_src *src,
                   unsigned flags, const char *prompt)
{
	a->src = src;
	a->flags = flags;
	a->prompt = prompt;
	a->asked = 0;
	a->pw_failed = 0;
	cli_pw_init(&a->pw);
}

void cli_auth_clear(struct cli_auth *a)
{
	cli_pw_clear(&a->pw);
}

int cli_auth_ask_now(struct cli_auth *a)
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

int cli_auth_doc(struct cli_auth *a, pdfstamp_doc *doc, const char **msg)
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

void cli_auth_note_plain(const struct cli_auth *a, const char *file)
{
	if (a->src->kind != CLI_PW_NONE)
		cli_warning(file, "a password was given, but the file is not encrypted (anything added to it "
		            "is in clear)");
}

/* ---- one file ----------------------------------------------------------------- */

struct write_run {
	struct cli_write *w;
	pdfstamp_ctx *ctx;
	struct cli_warn_target warn;
	struct cli_auth auth;
};

static void json_result(const struct cli_write *w, const char *file,
                        const char *output, const struct pdfstamp_result *res,
                        void *arg)
{
	struct cli_json j;
	int i, n = res->nobjects;

	if (n < 0)
		n = 0;
	if (n > PDFSTAMP_MAX_RESULT_OBJECTS)
		n = PDFSTAMP_MAX_RESULT_OBJECTS;
	cli_json_ok_begin(&j, file);
	cli_json_key(&j, "output");
	cli_json_str(&j, output);
	if (w->json_ok) {
		w->json_ok(&j, res, arg);
		cli_json_line_end(&j, file);
		return;
	}
	cli_json_key(&j, "base_length");
	cli_json_int(&j, res->base_length);
	cli_json_key(&j, "xref_offset");
	cli_json_int(&j, res->xref_offset);
	cli_json_key(&j, "bytes_appended");
	cli_json_int(&j, res->bytes_appended);
	cli_json_key(&j, "objects");
	cli_json_arr_begin(&j);
	for (i = 0; i < n; i++)
		cli_json_int(&j, res->objects[i]);
	cli_json_arr_end(&j);
	cli_json_line_end(&j, file);
}

/* Reports a failure of FILE with exit status STATUS and message MSG. */
static int fail(struct write_run *r, const char *file, int status, const char *msg)
{
	cli_error(file, "%s", msg);
	if (r->w->json)
		cli_json_failure(file, status, msg);
	return status;
}

/* Processes one file; returns its exit status. */
static int write_file(struct write_run *r, const char *file, cli_write_fn op,
                      cli_write_say_fn say, void *arg)
{
	struct pdfstamp_write_opts wopts = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res;
	pdfstamp_doc *doc = NULL;
	const char *msg;
	int rc, status = 0;

	r->warn.file = file;
	memset(&res, 0, sizeof res);
	rc = pdfstamp_doc_open(r->ctx, &doc, file,
	                       r->w->in_place ? PDFSTAMP_OPEN_WRITE : 0);
	/* A plaintext file with a password option: the library is told, and
	 * refuses to write to it (a revision may have cut off the encryption). */
	if (rc == 0 && (pdfstamp_doc_is_encrypted(doc) || r->auth.src->kind != CLI_PW_NONE) && !r->w->no_auth) {
		status = cli_auth_doc(&r->auth, doc, &msg);
		if (status != 0) {
			if (!msg)
				msg = pdfstamp_ctx_errmsg(r->ctx);
			if (!msg || !*msg)
				msg = "cannot authenticate";
			fail(r, file, status, msg);
			pdfstamp_doc_close(doc);
			return status;
		}
	}
	if (rc == 0) {
		if (r->w->in_place) {
			wopts.flags |= PDFSTAMP_WRITE_IN_PLACE;
		} else if (strcmp(r->w->output, "-") == 0) {
			wopts.flags |= PDFSTAMP_WRITE_TO_FD;
			wopts.output_fd = STDOUT_FILENO;
		} else {
			wopts.output = r->w->output;
		}
		if (r->w->allow_trailing)
			wopts.flags |= PDFSTAMP_WRITE_ALLOW_TRAILING;
		if (r->w->allow_identity)
			wopts.flags |= PDFSTAMP_WRITE_ALLOW_IDENTITY;
		rc = op(doc, &wopts, &res, arg);
	}
	/* Closing releases the lock only after the library has finished
	 * (journal removed, or rolled back). */
	if (rc != 0) {
		msg = pdfstamp_ctx_errmsg(r->ctx);
		if (!msg || !*msg)
			msg = pdfstamp_strerror(rc);
		status = cli_exit_status(rc);
		fail(r, file, status, msg);
		pdfstamp_doc_close(doc);
		return status;
	}
	pdfstamp_doc_close(doc);
	if (r->w->json)
		json_result(r->w, file, r->w->in_place ? file : r->w->output,
		            &res, arg);
	else if (r->w->verbose && say)
		say(file, &res, arg);
	return CLI_EXIT_OK;
}

/* 1 if the password source reads standard input. */
static int pw_uses_stdin(const struct cli_pw_src *src)
{
	return (src->kind == CLI_PW_FILE && strcmp(src->arg, "-") == 0) ||
	       (src->kind == CLI_PW_FD && src->fd == STDIN_FILENO);
}

int cli_write_run(struct cli_write *w, int nops, char **ops, cli_write_fn op,
                  cli_write_say_fn say, void *arg)
{
	struct file_list files;
	struct write_run r;
	int i, rc, status = CLI_EXIT_OK;
	size_t k;

	memset(&files, 0, sizeof files);
	if (w->output && w->in_place) {
		cli_error(NULL, "-o and --in-place exclude each other");
		return cli_usage_hint(w->cmd);
	}
	if (!w->output && !w->in_place) {
		cli_error(NULL, "give -o OUT (one file) or --in-place");
		return cli_usage_hint(w->cmd);
	}
	if (nops <= 0 && !w->files_from) {
		cli_error(NULL, "no input file");
		return cli_usage_hint(w->cmd);
	}
	if (w->output && strcmp(w->output, "-") == 0) {
		/* Note 8: the PDF is all that goes to standard output. */
		if (w->json || w->verbose) {
			cli_error(NULL, "-o - writes the PDF to standard output, so %s "
			          "cannot print there too", w->json ? "--json" : "-v");
			return cli_usage_hint(w->cmd);
		}
		if (isatty(STDOUT_FILENO)) {
			cli_error(NULL, "-o - would write the PDF to the terminal; redirect "
			          "standard output to a file or a pipe, or give -o FILE");
			return cli_usage_hint(w->cmd);
		}
	}
	if (w->files_from && strcmp(w->files_from, "-") == 0 &&
	    pw_uses_stdin(&w->src)) {
		cli_error(NULL, "--files-from - and %s both read standard input",
		          w->src.optname);
		return cli_usage_hint(w->cmd);
	}
	for (i = 0; i < nops; i++) {
		if (list_add(&files, ops[i], strlen(ops[i])) != 0) {
			list_free(&files);
			cli_error(NULL, "out of memory");
			return CLI_EXIT_IO;
		}
	}
	if (w->files_from) {
		rc = read_files_from(w->files_from, &files);
		if (rc != 0) {
			list_free(&files);
			return rc;
		}
	}
	if (w->output && files.n != 1) {
		cli_error(NULL, "-o needs exactly one input file (%zu given); "
		          "use --in-place for several", files.n);
		list_free(&files);
		return cli_usage_hint(w->cmd);
	}
	if (files.n == 0) {
		list_free(&files);
		return CLI_EXIT_OK; /* an empty --files-from list: nothing to do */
	}

	memset(&r, 0, sizeof r);
	r.w = w;
	cli_auth_init(&r.auth, &w->src, w->force ? PDFSTAMP_AUTH_FORCE : 0,
	              w->pw_prompt);
	rc = 0;
	if (w->pw_ask_first)
		rc = cli_auth_ask_now(&r.auth);
	if (rc == 0 && w->prepare)
		rc = w->prepare(arg);
	if (rc != 0) {
		cli_auth_clear(&r.auth);
		list_free(&files);
		return rc;
	}
	rc = pdfstamp_ctx_new(&r.ctx);
	if (rc != 0) {
		cli_auth_clear(&r.auth);
		list_free(&files);
		return cli_lib_error(NULL, rc, NULL);
	}
	pdfstamp_ctx_set_warn(r.ctx, cli_warn_cb, &r.warn);
	for (k = 0; k < files.n; k++) {
		status = cli_worst(status, write_file(&r, files.v[k], op, say, arg));
		/* Lines reach a pipe (xargs, parallel, jq) one file at a time. */
		if (w->json || w->verbose)
			fflush(stdout);
	}
	pdfstamp_ctx_free(r.ctx);
	cli_auth_clear(&r.auth);
	list_free(&files);
	return cli_finish_stdout(status);
}
