/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_recover.c - `pdfstamp recover [--json] FILE...`
 *
 * DESIGN NOTES
 *
 *  1. Per file (the driver's loop, CLI_OPEN_NONE: nothing is opened for
 *     it, no password asked for): pdfstamp_recover, which takes the writers' lock on FILE
 *     first and then checks FILE.pdfstamp-journal (owner, mode, device and
 *     inode, and the length and hash of the bytes the interrupted update
 *     appended; see pdfstamp.h).  The CLI adds no I/O of its own.
 *  2. Exit status per file: 0 when there was nothing to do or the update
 *     was completed (kept, whole), a torn one rolled back (the file cut
 *     back to its length before the update) or only its journal removed,
 *     4 for a journal the
 *     library refuses (it is left alone, the message says why), 1 for I/O
 *     errors, a file locked by another process and a FILE that cannot be
 *     opened or is not a regular file.  The worst one is returned
 *     (cli_worst).
 *  3. --json prints exactly one line per FILE:
 *       {"file","ok":true,"action":"none"|"completed"|"removed_journal"
 *        |"rolled_back_torn"}
 *     ("rolled_back" was the action of versions that undid a whole
 *     update; it is no longer printed.)
 *       {"file","ok":false,"exit":N,"error":"message"}
 *     (stable keys, pdfstamp(1) JSON OUTPUT).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct recover_cmd {
	int recovered;   /* of the last file: PDFSTAMP_RECOVER_* */
};

static const struct cli_opt recover_opts[] = {
	CLI_HEADING("Options:"),
	CLI_OPTION_JSON,
	CLI_OPTION_HELP,
	CLI_TEXT("Exit status: 0 nothing to do or recovered, 1 I/O error, the file is "
	         "locked, cannot be opened or is not a regular file, 2 usage error, 4 a "
	         "journal that cannot be trusted (left alone)."),
	CLI_END
};

static int cmd_recover(int argc, char **argv);

const struct cli_cmd cli_cmd_recover = {
	.name = "recover",
	.run = cmd_recover,
	.summary = "finish an in-place update interrupted by a crash (checks its journal)",
	.synopsis = "[--json] FILE...",
	.about =
	"Finishes an in-place update of each FILE that was interrupted by a\n"
	"crash, using its journal FILE.pdfstamp-journal.  The file is locked\n"
	"first.  The journal is trusted only if it is a regular file of this\n"
	"user with mode 0600, written for this very file (device and inode).\n"
	"If the bytes after the length it records are exactly the ones the\n"
	"interrupted update appended (length and SHA-256), the update is whole:\n"
	"it is kept (synced) and the journal removed; if the file still has\n"
	"that length, only the journal is removed.  If it holds a torn part of\n"
	"the update (each byte the journal's copy of it, or zero), the file is\n"
	"truncated back to that length and synced, and the journal removed.\n"
	"FILE is never written.  Any other journal (other or more bytes, a torn\n"
	"update under a version 3 journal) is left alone and reported\n"
	"(exit 4).  Read-only commands (info, verify,\n"
	"the input of -o) never do this: they only warn that a journal exists.\n"
	"No password is needed.\n",
	.opts = recover_opts
};

static const char *action_name(int recovered)
{
	switch (recovered) {
	case PDFSTAMP_RECOVER_COMPLETED: return "completed";
	case PDFSTAMP_RECOVER_UNWRITTEN: return "removed_journal";
	case PDFSTAMP_RECOVER_TORN: return "rolled_back_torn";
	default: return "none";
	}
}

static const char *action_text(int recovered)
{
	switch (recovered) {
	case PDFSTAMP_RECOVER_COMPLETED:
		return "completed an interrupted update: it is whole in the file and kept; "
		       "journal removed";
	case PDFSTAMP_RECOVER_UNWRITTEN:
		return "removed the journal of an interrupted update that had not changed the file";
	case PDFSTAMP_RECOVER_TORN:
		return "rolled back a torn update: its part in the file was cut off, the file is "
		       "as before it; journal removed";
	default:
		return "no journal, nothing to do";
	}
}

static int call_recover(struct cli_file *f, void *arg)
{
	struct recover_cmd *c = arg;

	c->recovered = PDFSTAMP_RECOVER_NONE;
	return pdfstamp_recover(f->ctx, f->name, &c->recovered);
}

static int output_recover(const struct cli_file *f, void *arg)
{
	const struct recover_cmd *c = arg;
	struct cli_json j;

	if (f->run->json) {
		cli_file_json_begin(&j, f);
		cli_json_key(&j, "action");
		cli_json_str(&j, action_name(c->recovered));
		cli_json_line_end(&j, f->name);
	} else {
		cli_put_safe(cli_out(), f->name);
		fprintf(cli_out(), ": %s\n", action_text(c->recovered));
	}
	return CLI_EXIT_OK;
}

static const struct cli_ops recover_ops = {
	.name = "recover",
	.open = CLI_OPEN_NONE,
	.flags = CLI_FLUSH_LINES,
	.call = call_recover,
	.output = output_recover
};

static int cmd_recover(int argc, char **argv)
{
	struct recover_cmd c = { PDFSTAMP_RECOVER_NONE };
	struct cli_run o;
	int rc;

	memset(&o, 0, sizeof o);
	if (cli_parse(&cli_cmd_recover, argc, argv, &o, NULL, NULL, &rc))
		return rc;
	return cli_each_file(&recover_ops, &o, argc - optind, argv + optind, &c);
}
