/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_unstamp.c - `pdfstamp unstamp --id ID [options] FILE...`: remove the
 * stamps of one ID from each FILE as one encrypted incremental update.
 *
 * DESIGN NOTES
 *
 *  1. Only --id is this command's; the output mode, files, passwords and
 *     failures are the driver's (driver.c, CLI_OPEN_UPDATE), the PDF work
 *     pdfstamp_unstamp's.  The ID is checked here (1 to 32 of
 *     [A-Za-z0-9_-]: a usage error, exit 2, before any file is read).
 *  2. A FILE without a stamp of that ID is not an error: nothing is
 *     written (no -o output either), "nothing to remove" is said on
 *     stderr (not with --json, whose line has "removed":0 and
 *     "skipped":"no such stamp"), and its exit status is 0, as for a
 *     re-run of stamp that finds every page stamped: running the same
 *     unstamp twice, or over a batch where some files lack the stamp,
 *     succeeds.  `pdfstamp stamps` tells whether a file has it.
 *  3. --json: the update's line (cli_json_update) and "removed", the
 *     number of annotations taken out of /Annots ("objects" lists them).
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_ID = CLI_OPT_CMD_BASE
};

static const struct cli_opt unstamp_opts[] = {
	CLI_HEADING("Unstamp options:"),
	CLI_OPTION("id", OPT_ID, "ID",
	           "remove the stamps whose /NM carries this stamp ID (1 to 32 of A-Z a-z 0-9 _ "
	           "-; see 'pdfstamp stamps'); required"),
	CLI_INCLUDE(cli_write_opts),
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_unstamp(int argc, char **argv);

const struct cli_cmd cli_cmd_unstamp = {
	.name = "unstamp",
	.run = cmd_unstamp,
	.summary = "remove the stamps of one ID incrementally",
	.synopsis = "--id ID [options] (-o OUT FILE | --in-place FILE...)",
	.about =
	"Removes every stamp and free-text annotation whose stamp ID is ID from\n"
	"the pages of each FILE, as one encrypted incremental update: the pages\n"
	"(or their /Annots arrays) get new versions without them, every existing\n"
	"byte stays as it is, so signatures of earlier revisions stay valid.\n"
	"Needs the annotation permission or the owner password, and is refused\n"
	"(exit 5) where a certification forbids changing annotations (DocMDP\n"
	"P=1 or P=2).  A FILE without such a stamp is left alone (exit 0).\n",
	.opts = unstamp_opts
};

struct unstamp_cmd {
	struct pdfstamp_unstamp_opts uo;
};

static int call_unstamp(struct cli_file *f, void *arg)
{
	struct unstamp_cmd *c = arg;

	return pdfstamp_unstamp(f->doc, &c->uo, &f->wopts, f->res);
}

static int output_unstamp(const struct cli_file *f, void *arg)
{
	const struct unstamp_cmd *c = arg;
	const struct pdfstamp_result *res = f->res;
	struct cli_json j;
	int i;

	if (f->run->json) {
		cli_file_json_begin(&j, f);
		cli_json_update(&j, res);
		cli_json_key(&j, "removed");
		cli_json_int(&j, res->nobjects);
		if (res->skipped) {
			cli_json_key(&j, "skipped");
			cli_json_str(&j, "no such stamp");
		}
		cli_json_line_end(&j, f->name);
		return CLI_EXIT_OK;
	}
	if (res->skipped) {
		/* one write, as cli_error's lines (several files at a time);
		 * the ID is [A-Za-z0-9_-] (checked), the name is not */
		char *msg = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&msg, &len);
		if (m) {
			fprintf(m, "pdfstamp: no stamp with ID %s: nothing to remove, nothing "
			        "written (", c->uo.id);
			cli_put_safe(m, f->name);
			fputs(")\n", m);
			if (fclose(m) == 0)
				fputs(msg, stderr);
			free(msg);
		}
		return CLI_EXIT_OK;
	}
	if (!f->run->verbose)
		return CLI_EXIT_OK;
	fprintf(cli_out(), "removed %d stamp%s from ", res->nobjects,
	        res->nobjects == 1 ? "" : "s");
	cli_put_safe(cli_out(), f->name);
	fputc(':', cli_out());
	for (i = 0; i < res->nobjects; i++)
		fprintf(cli_out(), "%s %" PRIu32 " 0 R", i ? "," : "", res->objects[i]);
	fprintf(cli_out(), ", %" PRId64 " bytes appended\n", res->bytes_appended);
	return CLI_EXIT_OK;
}

static const struct cli_ops unstamp_ops = {
	.name = "unstamp",
	.open = CLI_OPEN_UPDATE,
	.flags = CLI_FLUSH_LINES | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_ALLOW_TRAILING) | CLI_HINT(PDFSTAMP_HINT_ALLOW_IDENTITY) |
	         CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE),
	.call = call_unstamp,
	.output = output_unstamp,
	CLI_UPDATE_RES
};

static int unstamp_option(void *arg, int id, char *optarg)
{
	struct unstamp_cmd *c = arg;
	size_t n, k;

	if (id != OPT_ID)
		return -1;
	n = strlen(optarg);
	for (k = 0; k < n; k++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
		            optarg[k]))
			break;
	if (n == 0 || n > 32 || k != n) {
		cli_error(NULL, "--id: expected 1 to 32 of the characters A-Z a-z 0-9 _ -");
		return cli_usage_hint("unstamp");
	}
	c->uo.id = optarg;
	return 0;
}

static int cmd_unstamp(int argc, char **argv)
{
	const struct pdfstamp_unstamp_opts init = PDFSTAMP_UNSTAMP_OPTS_INIT;
	struct unstamp_cmd c;
	struct cli_run w;
	int rc;

	memset(&w, 0, sizeof w);
	c.uo = init;
	if (cli_parse(&cli_cmd_unstamp, argc, argv, &w, unstamp_option, &c, &rc))
		return rc;
	if (!c.uo.id) {
		cli_error(NULL, "give the stamp ID to remove: --id ID");
		return cli_fail_early(&w, argc - optind, argv + optind, cli_usage_hint("unstamp"));
	}
	return cli_each_file(&unstamp_ops, &w, argc - optind, argv + optind, &c);
}
