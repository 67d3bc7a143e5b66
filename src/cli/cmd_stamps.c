/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_stamps.c - `pdfstamp stamps [--json] [password options] FILE...`:
 * list the stamp and free-text annotations of each FILE.
 *
 * DESIGN NOTES
 *
 *  1. Per file: opened read-only and authenticated by the driver
 *     (CLI_OPEN_READ; the user password suffices), then
 *     pdfstamp_stamps_list.  The file is only read.
 *  2. Text output: one header line per file, then one line per stamp:
 *     page, object, subtype, revision, whether a signature covers it
 *     ("yes", "no", "?" when unknown), ID ("-" if none), date,
 *     author, text, the ID and date columns as wide as their longest
 *     entry; every string from the file through cli_put_safe.
 *  3. --json: one line per file, {"file","ok":true,"pages","revisions",
 *     "signatures","skipped","stamps":[{"page","object","generation",
 *     "subtype","rect","contents","author","date","nm","id","revision",
 *     "revision_end","signed"}]} (pdfstamp(1) JSON OUTPUT); absent values
 *     are null.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_opt stamps_opts[] = {
	CLI_HEADING("Options:"),
	CLI_OPTION_JSON,
	CLI_OPTION("force", CLI_OPT_W_FORCE, NULL,
	           "accept a /Perms entry that does not match /P (warns)"),
	CLI_OPTION_HELP,
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_stamps(int argc, char **argv);

const struct cli_cmd cli_cmd_stamps = {
	.name = "stamps",
	.run = cmd_stamps,
	.summary = "list the stamp and free-text annotations, their IDs and revisions",
	.synopsis = "[--json] [password options] FILE...",
	.about =
	"Lists the /Stamp and /FreeText annotations of every page of each FILE,\n"
	"whichever program wrote them: page, object, rectangle, text, author,\n"
	"date, the stamp ID of its /NM, the revision that added it (1 = the\n"
	"original file) and whether a signature covers that revision.  The file\n"
	"is only read; the user password suffices.\n",
	.opts = stamps_opts
};

static void res_init(void *res)
{
	struct pdfstamp_stamps init = PDFSTAMP_STAMPS_INIT;

	*(struct pdfstamp_stamps *)res = init;
}

static void res_clear(void *res)
{
	pdfstamp_stamps_clear(res);
}

static int call_stamps(struct cli_file *f, void *arg)
{
	(void)arg;
	return pdfstamp_stamps_list(f->doc, f->res);
}

static void json_str_or_null(struct cli_json *j, const char *s)
{
	if (s && *s)
		cli_json_str(j, s);
	else
		cli_json_null(j);
}

static void print_json(const struct cli_file *f, const struct pdfstamp_stamps *l)
{
	struct cli_json j;
	int64_t i;
	int k;

	cli_json_ok_begin(&j, f->name);
	cli_json_key(&j, "pages");
	cli_json_int(&j, l->pages);
	cli_json_key(&j, "revisions");
	cli_json_int(&j, l->revisions);
	cli_json_key(&j, "signatures");
	if (l->nsigs >= 0)
		cli_json_int(&j, l->nsigs);
	else
		cli_json_null(&j);
	cli_json_key(&j, "skipped");
	cli_json_int(&j, l->skipped);
	cli_json_key(&j, "stamps");
	cli_json_arr_begin(&j);
	for (i = 0; i < l->nstamps; i++) {
		const struct pdfstamp_stamp_info *s = &l->stamps[i];
		cli_json_obj_begin(&j);
		cli_json_key(&j, "page");
		cli_json_int(&j, s->page);
		cli_json_key(&j, "object");
		if (s->objnum)
			cli_json_int(&j, s->objnum);
		else
			cli_json_null(&j);
		cli_json_key(&j, "generation");
		cli_json_int(&j, s->generation);
		cli_json_key(&j, "subtype");
		cli_json_str(&j, s->subtype);
		cli_json_key(&j, "rect");
		if (s->has_rect) {
			cli_json_arr_begin(&j);
			for (k = 0; k < 4; k++)
				cli_json_double(&j, s->rect[k], 3);
			cli_json_arr_end(&j);
		} else {
			cli_json_null(&j);
		}
		cli_json_key(&j, "contents");
		cli_json_str(&j, s->contents ? s->contents : "");
		cli_json_key(&j, "author");
		json_str_or_null(&j, s->author);
		cli_json_key(&j, "date");
		json_str_or_null(&j, s->date);
		cli_json_key(&j, "nm");
		json_str_or_null(&j, s->nm);
		cli_json_key(&j, "id");
		json_str_or_null(&j, s->id);
		cli_json_key(&j, "revision");
		if (s->revision > 0)
			cli_json_int(&j, s->revision);
		else
			cli_json_null(&j);
		cli_json_key(&j, "revision_end");
		if (s->revision_end > 0)
			cli_json_int(&j, s->revision_end);
		else
			cli_json_null(&j);
		cli_json_key(&j, "signed");
		if (s->signed_revision >= 0)
			cli_json_bool(&j, s->signed_revision);
		else
			cli_json_null(&j);
		cli_json_obj_end(&j);
	}
	cli_json_arr_end(&j);
	cli_json_line_end(&j, f->name);
}

static void print_text(const struct cli_file *f, const struct pdfstamp_stamps *l)
{
	FILE *o = cli_out();
	int64_t i;
	int wid = 2, wdate = 4;

	cli_put_safe(o, f->name);
	fprintf(o, ": %" PRId64 " stamp%s on %" PRId64 " page%s, %d revision%s", l->nstamps,
	        l->nstamps == 1 ? "" : "s", l->pages, l->pages == 1 ? "" : "s", l->revisions,
	        l->revisions == 1 ? "" : "s");
	if (l->skipped)
		fprintf(o, ", %" PRId64 " annotation%s unreadable", l->skipped,
		        l->skipped == 1 ? "" : "s");
	fputc('\n', o);
	if (!l->nstamps)
		return;
	/* the ID and date columns as wide as their longest entry (note 2) */
	for (i = 0; i < l->nstamps; i++) {
		int n = (int)strlen(l->stamps[i].id), d = (int)strlen(l->stamps[i].date);
		wid = n > wid ? n : wid;
		wdate = d > wdate ? d : wdate;
	}
	fprintf(o, "page  object  type      rev  signed  %-*s  %-*s  author / text\n", wid, "id",
	        wdate, "date");
	for (i = 0; i < l->nstamps; i++) {
		const struct pdfstamp_stamp_info *s = &l->stamps[i];
		char obj[32], rev[16];
		snprintf(obj, sizeof obj, s->objnum ? "%" PRId64 : "-", s->objnum);
		snprintf(rev, sizeof rev, s->revision ? "%d" : "-", s->revision);
		/* the ID is [A-Za-z0-9_-] and the date ISO 8601: both safe */
		fprintf(o, "%-5" PRId64 " %-7s %-9s %-4s %-7s %-*s  %-*s  ", s->page, obj,
		        s->subtype, rev,
		        s->signed_revision > 0 ? "yes" : s->signed_revision < 0 ? "?" : "no", wid,
		        *s->id ? s->id : "-", wdate, *s->date ? s->date : "-");
		if (s->author && *s->author) {
			cli_put_safe(o, s->author);
			fputs(" / ", o);
		}
		cli_put_safe(o, s->contents ? s->contents : "");
		fputc('\n', o);
	}
}

static int output_stamps(const struct cli_file *f, void *arg)
{
	(void)arg;
	if (f->run->json)
		print_json(f, f->res);
	else
		print_text(f, f->res);
	return CLI_EXIT_OK;
}

static const struct cli_ops stamps_ops = {
	.name = "stamps",
	.open = CLI_OPEN_READ,
	.flags = CLI_BLANK_BETWEEN | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE),
	.call = call_stamps,
	.output = output_stamps,
	.res_size = sizeof(struct pdfstamp_stamps),
	.res_init = res_init,
	.res_clear = res_clear
};

static int cmd_stamps(int argc, char **argv)
{
	struct cli_run o;
	int rc;

	memset(&o, 0, sizeof o);
	if (cli_parse(&cli_cmd_stamps, argc, argv, &o, NULL, NULL, &rc))
		return rc;
	return cli_each_file(&stamps_ops, &o, argc - optind, argv + optind, NULL);
}
