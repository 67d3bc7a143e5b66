/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_dss.c - `pdfstamp dss [--cert F]... [--ocsp F]... [--crl F]... [--vri]
 * [--fetch [--cache DIR] [--offline] [--timeout S]] FILE...`: add
 * certificates, OCSP responses and CRLs (given, or fetched for the file's
 * signatures) to the Document Security Store of each FILE as one
 * encrypted incremental update.
 *
 * DESIGN NOTES
 *
 *  1. The files given with --cert, --ocsp and --crl are read whole here
 *     (regular files only, opened without blocking, at most
 *     PDFSTAMP_DSS_MAX_INPUT bytes), in the order given, before any PDF is
 *     opened (the driver's prepare step); the library then checks them
 *     once (pdfstamp_dss_check), so a bad input refuses the whole run and
 *     nothing is written.  A file that cannot be read is a usage error
 *     (exit 2); one that is too large or not what its option says is bad
 *     content (exit 4, the library's PDFSTAMP_E_FORMAT).
 *  2. What is valid, what "already there" means and what a /VRI entry
 *     holds are the library's decisions (dss.c design notes).
 *  3. When there is nothing new to add, the library writes nothing (not
 *     even OUT): the command says so on stderr, or in the JSON line with
 *     "written":false and an empty "objects" list; the exit status is 0.
 *  4. --fetch: the library fetches (dss.c note 8, revoc.c); each reply it
 *     reports (pdfstamp_fetch_event) is kept in the file's own result
 *     (struct dss_res, so that --jobs threads share nothing; fetched.c)
 *     and printed as the JSON line's "fetched" array, or with --verbose
 *     one line each on stderr; for a file that failed too (the failure
 *     line carries "fetched", the driver's ops->failed), so that the
 *     request that failed is named with its URL and HTTP status.  A failure to fetch is the
 *     library's error: the network exits 1 (PDFSTAMP_E_IO), a reply that
 *     is not what was asked or a revoked certificate exits 4
 *     (PDFSTAMP_E_FORMAT); nothing is written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

enum {
	OPT_CERT = CLI_OPT_CMD_BASE,
	OPT_OCSP,
	OPT_CRL,
	OPT_VRI,
	OPT_FETCH,
	OPT_CACHE,
	OPT_OFFLINE,
	OPT_TIMEOUT
};

static const struct cli_opt dss_opts[] = {
	CLI_HEADING("DSS options (at least one --cert, --ocsp, --crl or --fetch):"),
	CLI_OPTION("cert", OPT_CERT, "FILE",
	           "X.509 certificate(s): DER, or PEM with one or more CERTIFICATE blocks; "
	           "repeatable"),
	CLI_OPTION("ocsp", OPT_OCSP, "FILE",
	           "a DER OCSP response (RFC 6960; successful, basic); repeatable"),
	CLI_OPTION("crl", OPT_CRL, "FILE",
	           "X.509 CRL(s): DER, or PEM with X509 CRL blocks; repeatable"),
	CLI_OPTION("vri", OPT_VRI, NULL,
	           "also add a /VRI entry per signature, keyed by the SHA-1 of its /Contents, "
	           "listing the given data that belongs to it (see pdfstamp(1))"),
	CLI_OPTION("fetch", OPT_FETCH, NULL,
	           "fetch the validation data of every signature and document timestamp: "
	           "missing issuers (AIA caIssuers), OCSP responses (AIA ocsp), else CRLs (CRL "
	           "distribution points), each checked against its issuer (see pdfstamp(1))"),
	CLI_OPTION("cache", OPT_CACHE, "DIR",
	           "with --fetch: keep accepted replies in DIR and use them instead of asking "
	           "again"),
	CLI_OPTION("offline", OPT_OFFLINE, NULL,
	           "with --fetch: never open a socket; replies come from --cache only"),
	CLI_OPTION("timeout", OPT_TIMEOUT, "SECONDS",
	           "with --fetch: seconds for one request, connecting included (default 10)"),
	/* parsed only to be refused: dss adds no date */
	CLI_HIDDEN("date", CLI_OPT_W_DATE, "DATE"),
	CLI_TEXT("A file that cannot be read exits with 2; one that is not what its option "
	         "says (checked with mbedTLS) exits with 4; nothing is written then."),
	CLI_INCLUDE(cli_write_opts),
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section_dss),
	CLI_END
};

static int cmd_dss(int argc, char **argv);

const struct cli_cmd cli_cmd_dss = {
	.name = "dss",
	.run = cmd_dss,
	.summary = "add certificates, OCSP responses and CRLs to /DSS (long-term validation)",
	.synopsis = "[--cert FILE]... [--ocsp FILE]... [--crl FILE]... [--vri]\n"
	            "[--fetch [--cache DIR] [--offline] [--timeout SECONDS]]\n"
	            "[options] (-o OUT FILE | --in-place FILE...)",
	.about =
	"Adds long-term validation data to the Document Security Store (/DSS) of\n"
	"each FILE as one encrypted incremental update: each certificate, OCSP\n"
	"response and CRL becomes a new unfiltered stream holding its DER bytes,\n"
	"encrypted under the file's own handler, listed in /Certs, /OCSPs or\n"
	"/CRLs.  Existing entries are kept; data already there (the same DER\n"
	"bytes) is not added again.  If nothing is new, nothing is written (not\n"
	"even OUT).  Every existing byte stays as it is, so signatures stay\n"
	"valid.  Nothing is fetched from the network unless --fetch is given.\n",
	.opts = dss_opts
};

struct dss_args {
	struct pdfstamp_dss_opts opts;   /* on_fetch set per file (call_dss) */
	struct pdfstamp_dss_input *inputs;
	uint8_t **bufs;               /* the files' bytes, opts.ninputs of them */
};

/* Reads NAME whole into *BUF (note 1).  0 or an exit status (message
 * printed). */
static int read_input(const char *name, uint8_t **buf, size_t *len)
{
	return cli_read_input(name, PDFSTAMP_DSS_MAX_INPUT, 0, buf, len);
}

/* One file's result: the update's, and what was fetched (note 4). */
struct dss_res {
	struct pdfstamp_result r;     /* first: the driver reads it as the update's */
	struct cli_fetched fetched;
};

static void dss_res_init(void *p)
{
	struct dss_res *d = p;

	cli_update_res_init(&d->r);
	memset(&d->fetched, 0, sizeof d->fetched);
}

static void dss_res_clear(void *p)
{
	struct dss_res *d = p;

	cli_update_res_clear(&d->r);
	cli_fetched_clear(&d->fetched);
}

static int check_dss(void *arg)
{
	struct dss_args *a = arg;

	if (a->opts.ninputs == 0 && !a->opts.fetch) {
		cli_error(NULL, "nothing to add: give --cert, --ocsp, --crl or --fetch");
		return cli_usage_hint("dss");
	}
	if (!a->opts.fetch && (a->opts.cache_dir || a->opts.offline || a->opts.timeout_ms)) {
		cli_error(NULL, "--cache, --offline and --timeout go with --fetch");
		return cli_usage_hint("dss");
	}
	return 0;
}

/* Note 1: every input read and checked before the first PDF. */
static int prepare_dss(void *arg)
{
	struct dss_args *a = arg;
	pdfstamp_ctx *ctx = NULL;
	size_t i;
	int rc;

	if (a->opts.ninputs == 0)
		return 0; /* --fetch alone */
	for (i = 0; i < a->opts.ninputs; i++) {
		if ((rc = read_input(a->inputs[i].name, &a->bufs[i], &a->inputs[i].len)) != 0)
			return rc;
		a->inputs[i].data = a->bufs[i];
	}
	if ((rc = pdfstamp_ctx_new(&ctx)) != 0)
		return cli_lib_error(NULL, rc, NULL);
	rc = pdfstamp_dss_check(ctx, &a->opts);
	if (rc != 0)
		rc = cli_lib_error(ctx, rc, NULL);
	pdfstamp_ctx_free(ctx);
	return rc;
}

static int call_dss(struct cli_file *f, void *arg)
{
	struct dss_args *a = arg;
	struct pdfstamp_dss_opts o = a->opts;

	o.on_fetch = cli_fetched_add;
	o.on_fetch_userdata = &((struct dss_res *)f->res)->fetched;
	return pdfstamp_dss(f->doc, &o, &f->wopts, f->res);
}

static int output_dss(const struct cli_file *f, void *arg)
{
	const struct pdfstamp_result *res = f->res;
	const struct dss_res *d = f->res;
	const struct dss_args *a = arg;
	int written = res->nobjects > 0;
	struct cli_json j;

	if (f->run->json) {
		cli_file_json_begin(&j, f);
		cli_json_key(&j, "written");
		cli_json_bool(&j, written);
		cli_json_update(&j, res);
		if (a->opts.fetch)
			cli_fetched_json(&j, &d->fetched);
		cli_json_line_end(&j, f->name);
		return CLI_EXIT_OK;
	}
	if (f->run->verbose)
		cli_fetched_text(f->name, &d->fetched);
	if (f->run->dry_run) {
		return cli_dry_run_update(f, res, "new object");
	} else if (!written) {
		cli_warning(f->name,
		            "nothing new to add: every item is in /DSS already; nothing written");
	} else if (f->run->verbose) {
		fputs("added long-term validation data to ", cli_out());
		cli_put_safe(cli_out(), f->name);
		fprintf(cli_out(), ": %d objects, %" PRId64 " bytes appended\n", res->nobjects,
		       res->bytes_appended);
	}
	return CLI_EXIT_OK;
}

/* Note 4: a failed file's fetches too (the failure line's "fetched", or
 * with --verbose the lines on stderr). */
static void failed_dss(const struct cli_file *f, struct cli_json *j, void *arg)
{
	const struct dss_res *d = f->res;
	const struct dss_args *a = arg;

	if (!a->opts.fetch)
		return;
	if (j)
		cli_fetched_json(j, &d->fetched);
	else if (f->run->verbose)
		cli_fetched_text(f->name, &d->fetched);
}

static const struct cli_ops dss_ops = {
	.name = "dss",
	.open = CLI_OPEN_UPDATE,
	.flags = CLI_FLUSH_LINES | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_ALLOW_TRAILING) | CLI_HINT(PDFSTAMP_HINT_ALLOW_IDENTITY) |
	         CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE),
	.check = check_dss,
	.prepare = prepare_dss,
	.call = call_dss,
	.output = output_dss,
	.failed = failed_dss,
	.res_size = sizeof(struct dss_res),
	.res_init = dss_res_init,
	.res_clear = dss_res_clear
};

struct dss_parse {
	struct dss_args *a;
	size_t cap;
};

static int dss_option(void *arg, int id, char *optarg)
{
	struct dss_parse *p = arg;
	struct dss_args *a = p->a;

	switch (id) {
	case OPT_CERT:
	case OPT_OCSP:
	case OPT_CRL:
		if (!*optarg) {
			cli_error(NULL, "--%s needs a file name",
			          id == OPT_CERT ? "cert" : id == OPT_OCSP ? "ocsp" : "crl");
			return cli_usage_hint("dss");
		}
		if (a->opts.ninputs >= p->cap || a->opts.ninputs >= PDFSTAMP_DSS_MAX_INPUTS) {
			cli_error(NULL, "too many inputs");
			return cli_usage_hint("dss");
		}
		a->inputs[a->opts.ninputs].kind = id == OPT_CERT ? PDFSTAMP_DSS_CERT
		                                  : id == OPT_OCSP ? PDFSTAMP_DSS_OCSP
		                                  : PDFSTAMP_DSS_CRL;
		a->inputs[a->opts.ninputs].name = optarg;
		a->opts.ninputs++;
		return 0;
	case OPT_VRI:
		a->opts.vri = 1;
		return 0;
	case OPT_FETCH:
		a->opts.fetch = 1;
		return 0;
	case OPT_OFFLINE:
		a->opts.offline = 1;
		return 0;
	case OPT_CACHE:
		if (!*optarg) {
			cli_error(NULL, "--cache needs a directory");
			return cli_usage_hint("dss");
		}
		a->opts.cache_dir = optarg;
		return 0;
	case OPT_TIMEOUT: {
		double sec;
		if (cli_parse_double(optarg, &sec) != 0 || !(sec > 0) || sec > 3600) {
			cli_error(NULL, "--timeout: '%s' is not a number of seconds in (0, 3600]",
			          optarg);
			return cli_usage_hint("dss");
		}
		a->opts.timeout_ms = (long)(sec * 1000 + 0.5);
		if (a->opts.timeout_ms < 1)
			a->opts.timeout_ms = 1;
		return 0;
	}
	default:
		return -1;
	}
}

static int cmd_dss(int argc, char **argv)
{
	const struct pdfstamp_dss_opts init = PDFSTAMP_DSS_OPTS_INIT;
	struct dss_args a;
	struct dss_parse p;
	struct cli_run w;
	size_t i;
	int rc = 0;

	memset(&w, 0, sizeof w);
	w.key.cert_name = "--key-cert"; /* its --cert is the DSS's (keyopt.c note 1) */
	a.opts = init;
	p.a = &a;
	p.cap = argc > 0 ? (size_t)argc : 1;
	a.inputs = calloc(p.cap, sizeof *a.inputs);
	a.bufs = calloc(p.cap, sizeof *a.bufs);
	if (!a.inputs || !a.bufs) {
		free(a.inputs);
		free(a.bufs);
		cli_error(NULL, "out of memory");
		return CLI_EXIT_IO;
	}
	a.opts.inputs = a.inputs;
	if (!cli_parse(&cli_cmd_dss, argc, argv, &w, dss_option, &p, &rc)) {
		if (w.date) {
			cli_error(NULL, "--date does not apply to dss (it adds no date)");
			rc = cli_fail_early(&w, argc - optind, argv + optind,
			                    cli_usage_hint("dss"));
		} else {
			rc = cli_each_file(&dss_ops, &w, argc - optind, argv + optind, &a);
		}
	}
	for (i = 0; i < a.opts.ninputs; i++)
		free(a.bufs[i]);
	free(a.bufs);
	free(a.inputs);
	return rc;
}
