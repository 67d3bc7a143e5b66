/*
 * cmd_verify.c - `pdfstamp verify [--json] [-q] [password options] FILE...`:
 * read and decrypt every live object, string and stream of each FILE.
 *
 * DESIGN NOTES
 *
 *  1. Per file: pdfstamp_doc_open, authentication (struct cli_auth, as for
 *     info and stamp: the password is read once and reused), then
 *     pdfstamp_verify, which checks /Perms, that every cross-reference
 *     entry points at its object, and decrypts every string and stream
 *     (padding included).  The file is only read.
 *  2. Authentication always passes PDFSTAMP_AUTH_FORCE: a /Perms mismatch
 *     is one of the faults verify reports (exit 4), not a reason to stop
 *     before looking at the objects.
 *  3. Result: a report line on stdout per file; a file with faults also
 *     gets the library's message on stderr and exit status 4.  With
 *     several files the exit status is the worst one.
 *  4. --json: one line per file, {"file","ok":true,"objects","streams",
 *     "strings","faults","first_fault","first_fault_object"} (the last
 *     two null without faults); with faults "ok" is false and "exit" (4)
 *     and "error" (the message on stderr) follow it, as in the failure
 *     line of every command, {"file","ok":false,"exit","error"}, which a
 *     file that could not be opened or authenticated gets (json.c).
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_JSON = CLI_OPT_CMD_BASE
};

struct verify_run {
	int json;
	int quiet;
	struct cli_pw_src src;
	pdfstamp_ctx *ctx;
	struct cli_warn_target warn;
	struct cli_auth auth;
};

static void help(void)
{
	printf("Usage: pdfstamp verify [--json] [-q] [password options] FILE...\n"
	       "\n"
	       "Checks each FILE completely: every cross-reference entry points at its\n"
	       "object, every live object parses, every string and stream decrypts\n"
	       "with valid padding, and /Perms matches /P.  Prints a report per FILE;\n"
	       "exits with status 4 if anything failed.  The user password suffices.\n"
	       "\n"
	       "Options:\n"
	       "      --json     print one JSON object per FILE on one line each\n"
	       "                 (keys: see JSON OUTPUT in pdfstamp(1))\n"
	       "  -q, --quiet    no progress bar (it is shown only on a terminal, for\n"
	       "                 files over 4 MB)\n"
	       "  -h, --help     show this help and exit\n"
	       "\n"
	       "%s", cli_pw_help);
}

/* Copies the report's message so that it is NUL-terminated for sure. */
static void fault_text(const struct pdfstamp_verify_report *rep, char *buf, size_t n)
{
	size_t k = strnlen(rep->first_fault, sizeof rep->first_fault);

	if (k > n - 1)
		k = n - 1;
	memcpy(buf, rep->first_fault, k);
	buf[k] = '\0';
}

/* MSG: the message printed on stderr for a file with faults. */
static void json_report(const char *file, const struct pdfstamp_verify_report *rep,
                        const char *msg)
{
	struct cli_json j;
	char first[sizeof rep->first_fault + 1];

	fault_text(rep, first, sizeof first);
	if (rep->faults)
		cli_json_fail_begin(&j, file, CLI_EXIT_FORMAT,
		                    msg && *msg ? msg : first);
	else
		cli_json_ok_begin(&j, file);
	cli_json_key(&j, "objects");
	cli_json_int(&j, rep->objects);
	cli_json_key(&j, "streams");
	cli_json_int(&j, rep->streams);
	cli_json_key(&j, "strings");
	cli_json_int(&j, rep->strings);
	cli_json_key(&j, "faults");
	cli_json_int(&j, rep->faults);
	cli_json_key(&j, "first_fault");
	if (rep->faults)
		cli_json_str(&j, first);
	else
		cli_json_null(&j);
	cli_json_key(&j, "first_fault_object");
	if (rep->faults && rep->first_fault_object > 0)
		cli_json_int(&j, rep->first_fault_object);
	else
		cli_json_null(&j);
	cli_json_line_end(&j, file);
}

static void text_report(const char *file, const struct pdfstamp_verify_report *rep)
{
	char first[sizeof rep->first_fault + 1];

	cli_put_safe(stdout, file);
	printf(": %" PRId64 " objects, %" PRId64 " streams, %" PRId64 " strings checked: ",
	       rep->objects, rep->streams, rep->strings);
	if (rep->faults == 0) {
		puts("OK");
		return;
	}
	fault_text(rep, first, sizeof first);
	printf("%" PRId64 " fault%s; first: ", rep->faults, rep->faults == 1 ? "" : "s");
	cli_put_safe(stdout, first);
	putchar('\n');
}

static int fail(struct verify_run *r, const char *file, int status, const char *msg)
{
	if (!msg || !*msg)
		msg = "failed";
	cli_error(file, "%s", msg);
	if (r->json)
		cli_json_failure(file, status, msg);
	return status;
}

static int verify_file(struct verify_run *r, const char *file)
{
	struct pdfstamp_verify_report rep;
	struct cli_progress bar;
	pdfstamp_doc *doc = NULL;
	const char *msg = NULL;
	int rc, status;

	r->warn.file = file;
	rc = pdfstamp_doc_open(r->ctx, &doc, file, 0);
	if (rc != 0) {
		status = fail(r, file, cli_exit_status(rc), pdfstamp_ctx_errmsg(r->ctx));
		pdfstamp_doc_close(doc);
		return status;
	}
	if (!pdfstamp_doc_is_encrypted(doc))
		cli_auth_note_plain(&r->auth, file);
	if (pdfstamp_doc_is_encrypted(doc)) {
		status = cli_auth_doc(&r->auth, doc, &msg);
		if (status != 0) {
			status = fail(r, file, status, msg ? msg : pdfstamp_ctx_errmsg(r->ctx));
			pdfstamp_doc_close(doc);
			return status;
		}
	}
	memset(&rep, 0, sizeof rep);
	cli_progress_init(&bar, "verifying", r->quiet);
	rc = pdfstamp_verify(doc, &rep, cli_progress_cb, &bar);
	cli_progress_end(&bar);
	if (rc != 0 && !(rc == PDFSTAMP_E_FORMAT && rep.faults > 0)) {
		/* not a finding about the file's objects: the call failed */
		status = fail(r, file, cli_exit_status(rc), pdfstamp_ctx_errmsg(r->ctx));
		pdfstamp_doc_close(doc);
		return status;
	}
	status = rep.faults ? CLI_EXIT_FORMAT : CLI_EXIT_OK;
	if (rep.faults)
		cli_error(file, "%s", pdfstamp_ctx_errmsg(r->ctx));
	if (r->json)
		json_report(file, &rep, pdfstamp_ctx_errmsg(r->ctx));
	else
		text_report(file, &rep);
	pdfstamp_doc_close(doc);
	return status;
}

int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		CLI_PW_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct verify_run r;
	int opt, rc, i, status = CLI_EXIT_OK;

	memset(&r, 0, sizeof r);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_JSON:
			r.json = 1;
			break;
		case 'q':
			r.quiet = 1;
			break;
		case 'h':
			help();
			return cli_finish_stdout(CLI_EXIT_OK);
		case ':':
		case '?':
			return cli_bad_option("verify", opt, argv[optind - 1], optopt, opts);
		default:
			rc = cli_pw_option(&r.src, opt, optarg);
			if (rc < 0) {
				cli_error(NULL, "internal error: option %d", opt);
				return CLI_EXIT_IO;
			}
			if (rc != 0)
				return rc;
			break;
		}
	}
	if (optind >= argc) {
		cli_error(NULL, "no input file");
		return cli_usage_hint("verify");
	}
	rc = pdfstamp_ctx_new(&r.ctx);
	if (rc != 0)
		return cli_lib_error(NULL, rc, NULL);
	pdfstamp_ctx_set_warn(r.ctx, cli_warn_cb, &r.warn);
	cli_auth_init(&r.auth, &r.src, PDFSTAMP_AUTH_FORCE, NULL);
	for (i = optind; i < argc; i++) {
		status = cli_worst(status, verify_file(&r, argv[i]));
		fflush(stdout);
	}
	cli_auth_clear(&r.auth);
	pdfstamp_ctx_free(r.ctx);
	return cli_finish_stdout(status);
}
