/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_timestamp.c - `pdfstamp timestamp --tsa URL [--hash ALG] [--reserve
 * BYTES] [--tsa-ca FILE] [--tsa-user USER --tsa-password-file F|-fd N|-env
 * VAR] FILE...`: a document timestamp (RFC 3161) appended to each FILE as
 * one encrypted incremental update (pdfstamp_timestamp).
 *
 * DESIGN NOTES
 *
 *  1. The TSA's password never comes from argv: only from a file, a
 *     descriptor or an environment variable (the password options' rules,
 *     passwd.c), read once before the first file (prepare), kept in locked
 *     storage and wiped at the end.  It may not share standard input with
 *     the document's password.
 *  2. What is sent, what is checked and when the file is written are the
 *     library's (timestamp.c, tsp.c): a failure leaves the file as it was
 *     and maps to the exit status of its code: 1 for a TSA that cannot be
 *     reached or answers with an HTTP error, 4 for a reply that is not a
 *     valid token for this request or a token larger than --reserve.
 *  3. --lta [--vri] [--cache DIR] (timestamp.c note 6): the validation
 *     data of the token's chain, fetched before anything is written, then
 *     a second update.  The file's result keeps both updates' results and
 *     what was fetched (fetched.c); --timeout bounds every request, the
 *     TSA's and the fetches; a failed file's line has "lta":{"fetched":[...]}
 *     too (ops->failed).  Exit statuses are those of `dss --fetch` for
 *     the fetching; a failure of the second update after the timestamp is
 *     durable exits with its own status and says the timestamp stays.
 *  4. Without --reserve, the first file's placeholder size (its probe's)
 *     is the reserve_hint of the files after it (timestamp.c note 4): one
 *     request per file instead of two, and two again only for a file
 *     whose token outgrows it.  The size is shared by the workers through
 *     an atomic in the command's state, the only thing in it they write.
 */
#include "config.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum {
	OPT_TSA = CLI_OPT_CMD_BASE,
	OPT_HASH,
	OPT_RESERVE,
	OPT_TSA_CA,
	OPT_TSA_USER,
	OPT_TSA_PW_FILE,
	OPT_TSA_PW_FD,
	OPT_TSA_PW_ENV,
	OPT_TIMEOUT,
	OPT_LTA,
	OPT_VRI,
	OPT_CACHE
};

static const struct cli_opt timestamp_opts[] = {
	CLI_HEADING("Timestamp options (--tsa is required):"),
	CLI_OPTION("tsa", OPT_TSA, "URL",
	           "the time-stamping authority (RFC 3161 over HTTP): http:// or https://"),
	CLI_OPTION("hash", OPT_HASH, "ALG",
	           "the hash of the signed bytes sent to the TSA: sha256 (default), sha384 or "
	           "sha512"),
	CLI_OPTION("reserve", OPT_RESERVE, "BYTES",
	           "bytes kept for the token in /Contents (64 to 524288; default: sized from "
	           "a first request to the TSA, once per run: later files take the first's "
	           "size)"),
	CLI_OPTION("tsa-ca", OPT_TSA_CA, "FILE",
	           "CA certificates (PEM or DER) the TSA's certificate must chain to "
	           "(default: not checked)"),
	CLI_OPTION("tsa-user", OPT_TSA_USER, "USER",
	           "HTTP basic authentication at the TSA; its password from one of:"),
	CLI_OPTION("tsa-password-file", OPT_TSA_PW_FILE, "FILE",
	           "the first line of FILE (\"-\": standard input)"),
	CLI_OPTION("tsa-password-fd", OPT_TSA_PW_FD, "N",
	           "the first line read from descriptor N"),
	CLI_OPTION("tsa-password-env", OPT_TSA_PW_ENV, "VAR",
	           "the value of VAR (then unset)"),
	CLI_OPTION("timeout", OPT_TIMEOUT, "S",
	           "seconds each request (to the TSA, and with --lta each fetch) may take "
	           "(1 to 600; default 10)"),
	CLI_OPTION("lta", OPT_LTA, NULL,
	           "PAdES B-LTA: fetch the validation data of the timestamp's own chain "
	           "(as dss --fetch) before writing, and add it to /DSS in a second update"),
	CLI_OPTION("vri", OPT_VRI, NULL,
	           "with --lta: also a /VRI entry for the timestamp"),
	CLI_OPTION("cache", OPT_CACHE, "DIR",
	           "with --lta: keep accepted replies in DIR and use them instead of asking "
	           "again (as dss --cache)"),
	/* parsed only to be refused: the time is the TSA's */
	CLI_HIDDEN("date", CLI_OPT_W_DATE, "DATE"),
	CLI_TEXT("A TSA that cannot be reached or answers with an HTTP error exits with 1; "
	         "a reply that is not a valid token for the request, or a token larger than "
	         "--reserve, exits with 4; with --lta, a fetch that fails exits as dss "
	         "--fetch does.  The file is then left as it was."),
	CLI_INCLUDE(cli_write_opts),
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_timestamp(int argc, char **argv);

const struct cli_cmd cli_cmd_timestamp = {
	.name = "timestamp",
	.run = cmd_timestamp,
	.summary = "append an RFC 3161 document timestamp (PAdES B-LTA)",
	.synopsis = "--tsa URL [--hash ALG] [--reserve BYTES]\n"
	            "[--tsa-ca FILE] [--tsa-user USER --tsa-password-file FILE]\n"
	            "[--lta [--vri] [--cache DIR]]\n"
	            "[options] (-o OUT FILE | --in-place FILE...)",
	.about =
	"Appends a document timestamp (ISO 32000-2 12.8.5) to each FILE as one\n"
	"encrypted incremental update: an invisible signature field whose\n"
	"/DocTimeStamp dictionary (/SubFilter /ETSI.RFC3161) holds, in its\n"
	"/Contents, the RFC 3161 token of the TSA over the hash of the rest of the\n"
	"file.  The update is built and hashed, the token asked for and checked\n"
	"(status, nonce, hash, its signature, the TSA certificate it carries)\n"
	"before anything is written; any failure leaves the file as it was.\n"
	"Needs the modify permission (or the owner password); allowed on\n"
	"certified files at every level.\n",
	.opts = timestamp_opts
};

struct ts_args {
	struct pdfstamp_timestamp_opts opts;
	struct pdfstamp_dss_opts lta;    /* note 3: used when lta_on */
	int lta_on;
	atomic_size_t hint;              /* note 4 */
	struct cli_pw_src pw_src;
	struct cli_pw *pw;
	const struct cli_run *run;
};

struct ts_res {
	struct pdfstamp_result res;   /* first: the driver's update helpers read it */
	struct pdfstamp_timestamp_info info;
	struct pdfstamp_result lta_res;  /* note 3: the second update's */
	struct cli_fetched fetched;
};

static void ts_res_init(void *r)
{
	const struct pdfstamp_result ri = PDFSTAMP_RESULT_INIT;
	const struct pdfstamp_timestamp_info ii = PDFSTAMP_TIMESTAMP_INFO_INIT;
	struct ts_res *t = r;

	t->res = ri;
	t->info = ii;
	t->lta_res = ri;
	memset(&t->fetched, 0, sizeof t->fetched);
}

static void ts_res_clear(void *r)
{
	struct ts_res *t = r;

	pdfstamp_result_clear(&t->res);
	pdfstamp_result_clear(&t->lta_res);
	cli_fetched_clear(&t->fetched);
}

static int check_timestamp(void *arg)
{
	struct ts_args *a = arg;

	if (!a->opts.tsa_url) {
		cli_error(NULL, "give the time-stamping authority with --tsa URL");
		return cli_usage_hint("timestamp");
	}
	if (!a->opts.tsa_user != (a->pw_src.kind == CLI_PW_NONE)) {
		cli_error(NULL, "%s", a->opts.tsa_user
		          ? "--tsa-user needs --tsa-password-file, -fd or -env"
		          : "a TSA password needs --tsa-user");
		return cli_usage_hint("timestamp");
	}
	if (a->pw_src.kind != CLI_PW_NONE && a->run->src.kind != CLI_PW_NONE &&
	    ((a->pw_src.kind == CLI_PW_FILE && strcmp(a->pw_src.arg, "-") == 0) ||
	     (a->pw_src.kind == CLI_PW_FD && a->pw_src.fd == STDIN_FILENO)) &&
	    ((a->run->src.kind == CLI_PW_FILE && strcmp(a->run->src.arg, "-") == 0) ||
	     (a->run->src.kind == CLI_PW_FD && a->run->src.fd == STDIN_FILENO))) {
		cli_error(NULL, "the TSA password and the document password cannot both come "
		          "from standard input");
		return cli_usage_hint("timestamp");
	}
	if (!a->lta_on && (a->lta.vri || a->lta.cache_dir)) {
		cli_error(NULL, "--vri and --cache go with --lta");
		return cli_usage_hint("timestamp");
	}
	if (a->lta_on && a->run->output && strcmp(a->run->output, "-") == 0) {
		cli_error(NULL, "--lta appends a second update, which standard output cannot "
		          "take: write to a file (-o) or in place");
		return cli_usage_hint("timestamp");
	}
	return 0;
}

/* Note 1. */
static int prepare_timestamp(void *arg)
{
	struct ts_args *a = arg;
	int rc;

	if (a->pw_src.kind == CLI_PW_NONE)
		return 0;
	if ((rc = cli_pw_get(&a->pw_src, a->pw, "TSA password: ")) != 0)
		return rc;
	a->opts.tsa_password = a->pw->buf;
	a->opts.tsa_password_len = a->pw->len;
	return 0;
}

static int call_timestamp(struct cli_file *f, void *arg)
{
	struct ts_args *a = arg;
	struct ts_res *r = f->res;
	struct pdfstamp_timestamp_opts o = a->opts;
	struct pdfstamp_dss_opts d = a->lta;
	int rc;

	if (!o.reserve)   /* note 4 */
		o.reserve_hint = atomic_load(&a->hint);
	if (a->lta_on) {   /* note 3 */
		d.timeout_ms = o.timeout_ms;
		d.on_fetch = cli_fetched_add;
		d.on_fetch_userdata = &r->fetched;
		o.lta = &d;
		r->info.lta_result = &r->lta_res;
	}
	rc = pdfstamp_timestamp(f->doc, &o, &f->wopts, &r->res, &r->info);
	if (rc == 0 && !o.reserve && !f->run->dry_run)
		atomic_store(&a->hint, r->info.reserve);
	return rc;
}

/* Note 3: "lta":{"written":...,<the update's members>,"certs":...,"ocsps":...,
 * "crls":...,"fetched":[...]} */
static void json_lta(struct cli_json *j, const struct ts_res *r)
{
	cli_json_key(j, "lta");
	cli_json_obj_begin(j);
	cli_json_key(j, "written");
	cli_json_bool(j, r->lta_res.nobjects > 0);
	cli_json_update(j, &r->lta_res);
	cli_json_key(j, "certs");
	cli_json_int(j, r->info.lta_certs);
	cli_json_key(j, "ocsps");
	cli_json_int(j, r->info.lta_ocsps);
	cli_json_key(j, "crls");
	cli_json_int(j, r->info.lta_crls);
	cli_fetched_json(j, &r->fetched);
	cli_json_obj_end(j);
}

static int output_timestamp(const struct cli_file *f, void *arg)
{
	const struct ts_res *r = f->res;
	const struct ts_args *a = arg;
	struct cli_json j;

	if (f->run->json) {
		cli_file_json_begin(&j, f);
		cli_json_update(&j, &r->res);
		cli_json_key(&j, "tsa_url");
		cli_json_str(&j, a->opts.tsa_url);
		if (!f->run->dry_run) {
			cli_json_key(&j, "time");
			cli_json_str(&j, r->info.gen_time);
			cli_json_key(&j, "tsa");
			cli_json_str(&j, r->info.tsa);
			cli_json_key(&j, "serial");
			cli_json_str(&j, r->info.serial);
			cli_json_key(&j, "token_bytes");
			cli_json_int(&j, (int64_t)r->info.token_len);
			cli_json_key(&j, "requests");
			cli_json_int(&j, r->info.requests);
			cli_json_key(&j, "http_status");
			cli_json_int(&j, r->info.http_status);
			cli_json_key(&j, "bytes_hashed");
			cli_json_int(&j, r->info.bytes_hashed);
		}
		cli_json_key(&j, "reserve");
		cli_json_int(&j, (int64_t)r->info.reserve);
		cli_json_key(&j, "signature_object");
		cli_json_int(&j, r->info.sig_obj);
		if (a->lta_on && !f->run->dry_run)
			json_lta(&j, r);
		cli_json_line_end(&j, f->name);
	} else if (f->run->dry_run) {
		return cli_dry_run_update(f, &r->res, "new object");
	} else if (f->run->verbose) {
		fputs("time-stamped ", cli_out());
		cli_put_safe(cli_out(), f->name);
		fputs(" at ", cli_out());
		cli_put_safe(cli_out(), r->info.gen_time);
		fputs(" by ", cli_out());
		cli_put_safe(cli_out(), r->info.tsa);
		fprintf(cli_out(), ": token %zu of %zu bytes, %" PRId64 " bytes appended\n",
		        r->info.token_len, r->info.reserve, r->res.bytes_appended);
		if (a->lta_on) {
			cli_fetched_text(f->name, &r->fetched);
			fprintf(cli_out(), "  its validation data: %d certificates, %d OCSP "
			        "responses, %d CRLs; %d objects, %" PRId64 " bytes appended\n",
			        r->info.lta_certs, r->info.lta_ocsps, r->info.lta_crls,
			        r->lta_res.nobjects, r->lta_res.bytes_appended);
		}
	}
	return CLI_EXIT_OK;
}

/* Note 3: a failed file's fetches too ("lta":{"fetched":[...]} on its
 * failure line, or with --verbose the lines on stderr). */
static void failed_timestamp(const struct cli_file *f, struct cli_json *j, void *arg)
{
	const struct ts_res *r = f->res;
	const struct ts_args *a = arg;

	if (!a->lta_on)
		return;
	if (j) {
		cli_json_key(j, "lta");
		cli_json_obj_begin(j);
		cli_fetched_json(j, &r->fetched);
		cli_json_obj_end(j);
	} else if (f->run->verbose) {
		cli_fetched_text(f->name, &r->fetched);
	}
}

static const struct cli_ops timestamp_ops = {
	.name = "timestamp",
	.open = CLI_OPEN_UPDATE,
	.flags = CLI_FLUSH_LINES | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_ALLOW_TRAILING) | CLI_HINT(PDFSTAMP_HINT_ALLOW_IDENTITY) |
	         CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE) | CLI_HINT(PDFSTAMP_HINT_DSS_LATER),
	.check = check_timestamp,
	.prepare = prepare_timestamp,
	.call = call_timestamp,
	.output = output_timestamp,
	.failed = failed_timestamp,
	.res_size = sizeof(struct ts_res),
	.res_init = ts_res_init,
	.res_clear = ts_res_clear
};

static int timestamp_option(void *arg, int id, char *optarg)
{
	struct ts_args *a = arg;
	int64_t n;

	switch (id) {
	case OPT_TSA:
		a->opts.tsa_url = optarg;
		return 0;
	case OPT_HASH:
		if (strcmp(optarg, "sha256") == 0)
			a->opts.hash_bits = 256;
		else if (strcmp(optarg, "sha384") == 0)
			a->opts.hash_bits = 384;
		else if (strcmp(optarg, "sha512") == 0)
			a->opts.hash_bits = 512;
		else {
			cli_error(NULL, "--hash: '%s' is not sha256, sha384 or sha512", optarg);
			return cli_usage_hint("timestamp");
		}
		return 0;
	case OPT_RESERVE:
		if (cli_parse_int64(optarg, &n) != 0 || n < 64 || n > 524288) {
			cli_error(NULL,
			          "--reserve: '%s' is not a number of bytes from 64 to 524288",
			          optarg);
			return cli_usage_hint("timestamp");
		}
		a->opts.reserve = (size_t)n;
		return 0;
	case OPT_TSA_CA:
		a->opts.tsa_ca = optarg;
		return 0;
	case OPT_TSA_USER:
		a->opts.tsa_user = optarg;
		return 0;
	case OPT_TSA_PW_FILE:
		return cli_pw_src_set(&a->pw_src, CLI_PW_FILE, optarg, "--tsa-password-file");
	case OPT_TSA_PW_FD:
		return cli_pw_src_set(&a->pw_src, CLI_PW_FD, optarg, "--tsa-password-fd");
	case OPT_TSA_PW_ENV:
		return cli_pw_src_set(&a->pw_src, CLI_PW_ENV, optarg, "--tsa-password-env");
	case OPT_TIMEOUT:
		if (cli_parse_int64(optarg, &n) != 0 || n < 1 || n > 600) {
			cli_error(NULL, "--timeout: '%s' is not a number of seconds from 1 to 600",
			          optarg);
			return cli_usage_hint("timestamp");
		}
		a->opts.timeout_ms = (long)n * 1000;
		return 0;
	case OPT_LTA:
		a->lta_on = 1;
		a->lta.fetch = 1;
		return 0;
	case OPT_VRI:
		a->lta.vri = 1;
		return 0;
	case OPT_CACHE:
		a->lta.cache_dir = optarg;
		return 0;
	default:
		return -1;
	}
}

static int cmd_timestamp(int argc, char **argv)
{
	const struct pdfstamp_timestamp_opts init = PDFSTAMP_TIMESTAMP_OPTS_INIT;
	const struct pdfstamp_dss_opts dinit = PDFSTAMP_DSS_OPTS_INIT;
	struct ts_args a;
	struct cli_run w;
	struct cli_pw *pw = malloc(sizeof *pw);
	int rc = 0;

	if (!pw) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_IO;
	}
	cli_pw_init(pw);
	memset(&w, 0, sizeof w);
	memset(&a, 0, sizeof a);
	atomic_init(&a.hint, 0);
	a.opts = init;
	a.lta = dinit;
	a.pw = pw;
	a.run = &w;
	if (!cli_parse(&cli_cmd_timestamp, argc, argv, &w, timestamp_option, &a, &rc)) {
		if (w.date) {
			cli_error(NULL,
			          "--date does not apply to timestamp (the time is the TSA's)");
			rc = cli_fail_early(&w, argc - optind, argv + optind,
			                    cli_usage_hint("timestamp"));
		} else {
			rc = cli_each_file(&timestamp_ops, &w, argc - optind, argv + optind, &a);
		}
	}
	cli_pw_clear(pw);
	free(pw);
	return rc;
}
