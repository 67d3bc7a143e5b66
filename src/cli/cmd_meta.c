/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_meta.c - `pdfstamp meta [options] FILE...`: write a new version of
 * the document information dictionary (and, with --xmp, of the XMP
 * metadata stream) of each FILE as one encrypted incremental update.
 *
 * DESIGN NOTES
 *
 *  1. --set KEY=VALUE and --unset KEY become pdfstamp_meta_items in the
 *     order given (a later item for the same key wins, as the library
 *     applies them in order).  KEY=VALUE is split at the first '=', so a
 *     value may contain '='; an empty value sets an empty string, which
 *     is not the same as --unset.
 *  2. Keys and values must be valid UTF-8 here; whether a key is an
 *     acceptable Info key (a PDF name, not ModDate or CreationDate) is the
 *     library's decision, and its PDFSTAMP_E_USAGE maps to exit 2.
 *  3. At least one --set, --unset or --xmp is required: an update that
 *     changes only ModDate is not what anyone asks for by accident.
 *  4. The items array is sized by argc (each item needs an option), so it
 *     is allocated once and cannot overflow.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_SET = CLI_OPT_CMD_BASE,
	OPT_UNSET,
	OPT_XMP
};

static const struct cli_opt meta_opts[] = {
	CLI_HEADING("Metadata options (at least one --set, --unset or --xmp):"),
	CLI_OPTION("set", OPT_SET, "KEY=VALUE",
	           "set entry KEY (Title, Author, Subject, Keywords, Creator, Producer or a "
	           "custom key) to VALUE (UTF-8; may be empty); repeatable"),
	CLI_OPTION("unset", OPT_UNSET, "KEY", "remove entry KEY; repeatable"),
	CLI_OPTION("xmp", OPT_XMP, NULL, "also update (or create) the XMP /Metadata stream"),
	CLI_OPTION("date", CLI_OPT_W_DATE, "now|DATE",
	           "the new ModDate: 'now' (default) or ISO 8601, e.g. 2025-11-30T14:05:00Z"),
	CLI_INCLUDE(cli_write_opts),
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_meta(int argc, char **argv);

const struct cli_cmd cli_cmd_meta = {
	.name = "meta",
	.run = cmd_meta,
	.summary = "change document metadata (Info dictionary, XMP) incrementally",
	.synopsis = "[options] (-o OUT FILE | --in-place FILE...)",
	.about =
	"Writes a new version of the document information dictionary of each\n"
	"FILE (and with --xmp of its XMP metadata stream) as one encrypted\n"
	"incremental update; ModDate is set too.  Every existing byte stays as\n"
	"it is.  Needs the modify permission or the owner password.  New objects\n"
	"are encrypted under the file's own handler (AES-256, AES-128 or RC4);\n"
	"for RC4 or a key under 128 bits a warning says the handler is weak and\n"
	"points to 'pdfstamp rotate'.\n",
	.opts = meta_opts
};

struct meta_args {
	struct pdfstamp_meta_opts mo;
	struct pdfstamp_meta_item *items;
};

static int call_meta(struct cli_file *f, void *arg)
{
	struct meta_args *m = arg;

	return pdfstamp_meta(f->doc, &m->mo, &f->wopts, f->res);
}

static int output_meta(const struct cli_file *f, void *arg)
{
	const struct pdfstamp_result *res = f->res;
	struct cli_json j;

	(void)arg;

	if (f->run->json) {
		cli_file_json_begin(&j, f);
		cli_json_update(&j, res);
		cli_json_line_end(&j, f->name);
	} else if (f->run->dry_run) {
		return cli_dry_run_update(f, res, "Info object");
	} else if (f->run->verbose) {
		fputs("updated the metadata of ", cli_out());
		cli_put_safe(cli_out(), f->name);
		if (res->nobjects > 0)
			fprintf(cli_out(), ": Info object %" PRIu32, res->objects[0]);
		fprintf(cli_out(), ", %" PRId64 " bytes appended\n", res->bytes_appended);
	}
	return CLI_EXIT_OK;
}

static const struct cli_ops meta_ops = {
	.name = "meta",
	.open = CLI_OPEN_UPDATE,
	.flags = CLI_FLUSH_LINES | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_ALLOW_TRAILING) | CLI_HINT(PDFSTAMP_HINT_ALLOW_IDENTITY) |
	         CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE),
	.call = call_meta,
	.output = output_meta,
	CLI_UPDATE_RES
};

/* Checks and adds one item; VALUE NULL removes KEY. */
static int add_item(struct meta_args *m, size_t cap, const char *opt,
                    const char *key, const char *value)
{
	if (!*key) {
		cli_error(NULL, "%s: the key is empty", opt);
		return cli_usage_hint("meta");
	}
	if (!cli_utf8_valid(key) || (value && !cli_utf8_valid(value))) {
		cli_error(NULL, "%s: not valid UTF-8", opt);
		return cli_usage_hint("meta");
	}
	if (m->mo.nitems >= cap) {
		cli_error(NULL, "internal error: too many metadata items");
		return CLI_EXIT_IO;
	}
	m->items[m->mo.nitems].key = key;
	m->items[m->mo.nitems].value = value;
	m->mo.nitems++;
	return 0;
}

struct meta_parse {
	struct meta_args *m;
	size_t cap;
};

static int meta_option(void *arg, int id, char *optarg)
{
	struct meta_parse *p = arg;
	char *eq;

	switch (id) {
	case OPT_SET:
		/* Split at the first '=' in argv itself: the value
		 * starts after it, the key is terminated there. */
		eq = strchr(optarg, '=');
		if (!eq) {
			cli_error(NULL, "--set: expected KEY=VALUE");
			return cli_usage_hint("meta");
		}
		*eq = '\0';
		return add_item(p->m, p->cap, "--set", optarg, eq + 1);
	case OPT_UNSET:
		if (strchr(optarg, '=')) {
			cli_error(NULL, "--unset: expected a KEY without '='");
			return cli_usage_hint("meta");
		}
		return add_item(p->m, p->cap, "--unset", optarg, NULL);
	case OPT_XMP:
		p->m->mo.xmp = 1;
		return 0;
	default:
		return -1;
	}
}

static int cmd_meta(int argc, char **argv)
{
	const struct pdfstamp_meta_opts init = PDFSTAMP_META_OPTS_INIT;
	struct meta_args m;
	struct meta_parse p;
	struct cli_run w;
	int rc = 0;

	memset(&w, 0, sizeof w);
	m.mo = init;
	p.m = &m;
	p.cap = argc > 0 ? (size_t)argc : 1;
	m.items = calloc(p.cap, sizeof *m.items);
	if (!m.items) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_IO;
	}
	m.mo.items = m.items;
	if (!cli_parse(&cli_cmd_meta, argc, argv, &w, meta_option, &p, &rc)) {
		if (m.mo.nitems == 0 && !m.mo.xmp) {
			cli_error(NULL, "nothing to change: give --set, --unset or --xmp");
			rc = cli_fail_early(&w, argc - optind, argv + optind,
			                    cli_usage_hint("meta"));
		} else {
			m.mo.date = w.date;
			rc = cli_each_file(&meta_ops, &w, argc - optind, argv + optind, &m);
		}
	}
	free(m.items);
	return rc;
}
