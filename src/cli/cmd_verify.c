/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_verify.c - `pdfstamp verify [--json] [-q] [password options] FILE...`:
 * read and decrypt every live object, string and stream of each FILE.
 *
 * DESIGN NOTES
 *
 *  1. Per file: pdfstamp_doc_open and authentication by the driver
 *     (driver.c, CLI_OPEN_READ: the password is read once and reused),
 *     then pdfstamp_verify, which checks /Perms, that every cross-reference
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

struct verify_cmd {
	int quiet;
};

static const struct cli_opt verify_opts[] = {
	CLI_HEADING("Options:"),
	CLI_OPTION_JSON,
	CLI_OPTION("quiet", 'q', NULL,
	           "no progress bar (it is shown only on a terminal, for files over 4 MB)"),
	CLI_OPTION_HELP,
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_verify(int argc, char **argv);

const struct cli_cmd cli_cmd_verify = {
	.name = "verify",
	.run = cmd_verify,
	.summary = "check that every object parses and every string and stream decrypts",
	.synopsis = "[--json] [-q] [password options] FILE...",
	.about =
	"Checks each FILE completely: every cross-reference entry points at its\n"
	"object, every live object parses, every string and stream decrypts\n"
	"with valid padding, and /Perms matches /P.  Prints a report per FILE;\n"
	"exits with status 4 if anything failed.  The user password suffices.\n",
	.opts = verify_opts
};

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

	cli_put_safe(cli_out(), file);
	fprintf(cli_out(),
	        ": %" PRId64 " objects, %" PRId64 " streams, %" PRId64 " strings checked: ",
	        rep->objects, rep->streams, rep->strings);
	if (rep->faults == 0) {
		fputs("OK\n", cli_out());
		return;
	}
	fault_text(rep, first, sizeof first);
	fprintf(cli_out(), "%" PRId64 " fault%s; first: ", rep->faults,
	        rep->faults == 1 ? "" : "s");
	cli_put_safe(cli_out(), first);
	fputc('\n', cli_out());
}

static int call_verify(struct cli_file *f, void *arg)
{
	const struct verify_cmd *c = arg;
	struct pdfstamp_verify_report *rep = f->res;
	struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	struct cli_progress bar;
	int rc;

	rep->version = PDFSTAMP_VERIFY_REPORT_VERSION;
	cli_progress_init(&bar, "verifying", c->quiet || f->quiet);
	vo.progress = cli_progress_cb;
	vo.progress_ud = &bar;
	rc = pdfstamp_verify(f->doc, &vo, rep);
	cli_progress_end(&bar);
	/* Faults are findings about the file's objects (the output reports
	 * them), not a failed call. */
	return rc == PDFSTAMP_E_FORMAT && rep->faults > 0 ? 0 : rc;
}

static int output_verify(const struct cli_file *f, void *arg)
{
	const struct pdfstamp_verify_report *rep = f->res;

	(void)arg;
	if (rep->faults)
		cli_error(f->name, "%s", pdfstamp_ctx_errmsg(f->ctx));
	if (f->run->json)
		json_report(f->name, rep, pdfstamp_ctx_errmsg(f->ctx));
	else
		text_report(f->name, rep);
	return rep->faults ? CLI_EXIT_FORMAT : CLI_EXIT_OK;
}

static const struct cli_ops verify_ops = {
	.name = "verify",
	.open = CLI_OPEN_READ,
	.flags = CLI_FLUSH_ALWAYS | CLI_BATCH,
	.call = call_verify,
	.output = output_verify,
	.res_size = sizeof(struct pdfstamp_verify_report)
};

static int verify_option(void *arg, int id, char *optarg)
{
	struct verify_cmd *c = arg;

	(void)optarg;
	if (id != 'q')
		return -1;
	c->quiet = 1;
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	struct verify_cmd c;
	struct cli_run o;
	int rc;

	memset(&c, 0, sizeof c);
	memset(&o, 0, sizeof o);
	o.force = 1; /* note 2 */
	if (cli_parse(&cli_cmd_verify, argc, argv, &o, verify_option, &c, &rc))
		return rc;
	return cli_each_file(&verify_ops, &o, argc - optind, argv + optind, &c);
}
