/*
 * cmd_recover.c - `pdfstamp recover [--json] FILE...`
 *
 * DESIGN NOTES
 *
 *  1. Per file: pdfstamp_recover, which takes the writers' lock on FILE
 *     first and then checks FILE.pdfstamp-journal (owner, mode, device and
 *     inode, and the length and hash of the bytes the interrupted update
 *     appended; see pdfstamp.h).  The CLI adds no I/O of its own.
 *  2. Exit status per file: 0 when there was nothing to do or the update
 *     was rolled back (or only its journal removed), 4 for a journal the
 *     library refuses (it is left alone, the message says why), 1 for I/O
 *     errors, a file locked by another process and a FILE that cannot be
 *     opened or is not a regular file.  The worst one is returned
 *     (cli_worst).
 *  3. --json prints exactly one line per FILE:
 *       {"file","ok":true,"action":"none"|"rolled_back"|"removed_journal"}
 *       {"file","ok":false,"exit":N,"error":"message"}
 *     (stable keys, pdfstamp(1) JSON OUTPUT).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_JSON = CLI_OPT_CMD_BASE
};

static void help(void)
{
	printf("Usage: pdfstamp recover [--json] FILE...\n"
	       "\n"
	       "Rolls back an in-place update of each FILE that was interrupted by a\n"
	       "crash, using its journal FILE.pdfstamp-journal.  The file is locked\n"
	       "first.  The journal is trusted only if it is a regular file of this\n"
	       "user with mode 0600, written for this very file (device and inode),\n"
	       "and the bytes after the length it records are exactly the ones the\n"
	       "interrupted update appended (length and SHA-256); only then is FILE\n"
	       "truncated back and the journal removed.  Any other journal is left\n"
	       "alone and reported (exit 4).  Read-only commands (info, verify, the\n"
	       "input of -o) never do this: they only warn that a journal exists.\n"
	       "No password is needed.\n"
	       "\n"
	       "Options:\n"
	       "      --json     print one JSON object per FILE on one line each\n"
	       "                 (keys: see JSON OUTPUT in pdfstamp(1))\n"
	       "  -h, --help     show this help and exit\n"
	       "\n"
	       "Exit status: 0 nothing to do or rolled back, 1 I/O error, the file is\n"
	       "locked, cannot be opened or is not a regular file, 2 usage error, 4 a\n"
	       "journal that cannot be trusted (left alone).\n");
}

static const char *action_name(int recovered)
{
	switch (recovered) {
	case PDFSTAMP_RECOVER_ROLLED_BACK: return "rolled_back";
	case PDFSTAMP_RECOVER_UNWRITTEN: return "removed_journal";
	default: return "none";
	}
}

static const char *action_text(int recovered)
{
	switch (recovered) {
	case PDFSTAMP_RECOVER_ROLLED_BACK:
		return "rolled back an interrupted update; the file is as it was before it";
	case PDFSTAMP_RECOVER_UNWRITTEN:
		return "removed the journal of an interrupted update that had not changed the file";
	default:
		return "no journal, nothing to do";
	}
}

/* Processes one file; returns its exit status. */
static int recover_file(pdfstamp_ctx *ctx, int json, const char *file)
{
	struct cli_json j;
	int recovered = PDFSTAMP_RECOVER_NONE, rc, status;
	const char *msg;

	rc = pdfstamp_recover(ctx, file, &recovered);
	if (rc != 0) {
		status = cli_exit_status(rc);
		msg = pdfstamp_ctx_errmsg(ctx);
		if (!msg || !*msg)
			msg = pdfstamp_strerror(rc);
		cli_error(file, "%s", msg);
		if (json)
			cli_json_failure(file, status, msg);
		return status;
	}
	if (json) {
		cli_json_ok_begin(&j, file);
		cli_json_key(&j, "action");
		cli_json_str(&j, action_name(recovered));
		cli_json_line_end(&j, file);
	} else {
		cli_put_safe(stdout, file);
		printf(": %s\n", action_text(recovered));
	}
	return CLI_EXIT_OK;
}

int cmd_recover(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cli_warn_target warn = { NULL, 0 };
	pdfstamp_ctx *ctx;
	int opt, rc, i, json = 0, status = CLI_EXIT_OK;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_JSON:
			json = 1;
			break;
		case 'h':
			help();
			return cli_finish_stdout(CLI_EXIT_OK);
		default:
			return cli_bad_option("recover", opt, argv[optind - 1], optopt, opts);
		}
	}
	if (optind >= argc) {
		cli_error(NULL, "no input file");
		return cli_usage_hint("recover");
	}
	rc = pdfstamp_ctx_new(&ctx);
	if (rc != 0)
		return cli_lib_error(NULL, rc, NULL);
	pdfstamp_ctx_set_warn(ctx, cli_warn_cb, &warn);
	for (i = optind; i < argc; i++) {
		warn.file = argv[i];
		status = cli_worst(status, recover_file(ctx, json, argv[i]));
		if (json)
			fflush(stdout);
	}
	pdfstamp_ctx_free(ctx);
	return cli_finish_stdout(status);
}
