/* SPDX-License-Identifier: Apache-2.0 */
/*
 * write_common.c - what the writing commands share besides the driver
 * (driver.c): their common options (a table of rows, with their help),
 * the --json members of an incremental update, and strict parsing of
 * option values.
 *
 * DESIGN NOTES
 *
 *  1. The options of cli_write_opts are recorded in a struct cli_run by
 *     cli_run_option, and cli_each_file() acts on them; stamp, meta and
 *     dss include the table, rotate and encrypt have rows of their own
 *     (another help) for the ones they share (-o, -i, -v, --json,
 *     --force).
 *  2. --json success line of an incremental update (stamp, meta):
 *       {"file","ok":true,"output","base_length","xref_offset",
 *        "bytes_appended","objects":[...],"weak_encryption"}
 *     with every object the update wrote, and the library's reason the
 *     file's security handler is weak ("RC4 40-bit"; null when it is not,
 *     issue 13: the same as the warning on stderr); the failure line is the
 *     driver's.  The keys are a stable interface (pdfstamp(1), JSON
 *     OUTPUT).
 *  3. Numbers on the command line are parsed with strtod/strtoll in the
 *     C locale (the program never calls setlocale), after checking that
 *     the text has only the characters of a decimal number, so "0x10",
 *     "inf", "nan", " 1" and "1e999" are all refused.
 *  4. --dry-run (stamp, meta, dss here; rotate and encrypt have their own
 *     row): the library's PDFSTAMP_WRITE_DRY_RUN (dryrun.c).  The driver
 *     opens every FILE read-only, in place too (no lock, no journal
 *     recovered: a pending journal draws the open's warning, and the
 *     success line says "journal_pending"), makes no group, and a --ledger
 *     is read (not created) to skip what a real run would skip but gets
 *     no line (ledger.c note 5).  Each FILE gets a line, -v or not:
 *       dry run: would append N bytes (K annotations) to FILE; nothing written
 *       dry run: would write OUT: the L bytes of FILE and N appended (K ...)
 *     and with --json its usual success line with "dry_run":true and
 *     "journal_pending" after "output".  -o - prints that line: there is
 *     no PDF on standard output then.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const struct cli_opt cli_write_opts[] = {
	CLI_HEADING("Output (exactly one of -o and --in-place):"),
	CLI_OPTION("output", 'o', "OUT",
	           "write the updated copy to OUT (only with one FILE); OUT is written to a "
	           "temporary file, synced and renamed, so it is never left half-written; '-' "
	           "writes standard output instead (not a terminal, not with --json or -v), "
	           "once the copy was built and checked in a nameless temporary file in "
	           "$TMPDIR (else the current directory)"),
	CLI_OPTION("in-place", 'i', NULL,
	           "append to each FILE itself (required with several FILEs); after a crash, "
	           "the next -i run or 'pdfstamp recover FILE' keeps a whole update"),
	CLI_HEADING("Other options:"),
	CLI_OPTION_JSON,
	CLI_OPTION("verbose", 'v', NULL, "print one line per updated FILE (not with --json)"),
	CLI_OPTION("allow-trailing-bytes", CLI_OPT_W_ALLOW_TRAILING, NULL,
	           "append even if bytes follow the last %%EOF"),
	CLI_OPTION("allow-identity", CLI_OPT_W_ALLOW_IDENTITY, NULL,
	           "append to an encrypted file whose string or stream filter is /Identity "
	           "(new text is then in clear)"),
	CLI_OPTION("force", CLI_OPT_W_FORCE, NULL,
	           "accept a /Perms entry that does not match /P (warns); the permissions "
	           "/Perms records then apply"),
	CLI_OPTION("dry-run", CLI_OPT_W_DRY_RUN, NULL,
	           "authenticate, run every check and build the update in memory, print what "
	           "would be appended, and write, create or lock nothing (no OUT, journal, "
	           "temporary file or ledger line)"),
	CLI_OPTION_HELP,
	CLI_END
};

const struct cli_opt cli_batch_opts[] = {
	CLI_HEADING("Many files:"),
	CLI_OPTION("files-from", CLI_OPT_W_FILES_FROM, "LIST",
	           "read more FILE names from LIST, one per line (empty lines are skipped; "
	           "'-' reads standard input)"),
	CLI_OPTION("jobs", CLI_OPT_B_JOBS, "N",
	           "work on N files at a time, each wholly by one job (default: the number "
	           "of online CPUs; in place, a job's second thread syncs one group of files "
	           "while its first prepares the next); a file's line is printed once it is "
	           "done (and its update durable)"),
	CLI_OPTION("ordered", CLI_OPT_B_ORDERED, NULL,
	           "print the files' lines in the order of the FILEs (default: as they finish)"),
	CLI_OPTION("shard", CLI_OPT_B_SHARD, "K/N",
	           "take only the FILEs whose name, as given, hashes to shard K of N (1 <= K <= "
	           "N): N runs with K = 1..N split any list between them, the same way on "
	           "every run and machine"),
	CLI_OPTION("ledger", CLI_OPT_B_LEDGER, "FILE",
	           "append a line to FILE for each finished FILE, synced before its output "
	           "line; skip the FILEs it lists as done by the same command and options, "
	           "unless their size changed since (then not touched: an error)"),
	CLI_END
};

void cli_update_res_init(void *res)
{
	const struct pdfstamp_result init = PDFSTAMP_RESULT_INIT;

	*(struct pdfstamp_result *)res = init;
}

void cli_update_res_clear(void *res)
{
	pdfstamp_result_clear(res);
}

/* --shard K/N.  0 or CLI_EXIT_USAGE (message printed). */
static int parse_shard(struct cli_run *w, const char *arg)
{
	const char *slash = strchr(arg, '/');
	int64_t k, n;
	char kbuf[24];

	if (w->shard_n) {
		cli_error(NULL, "--shard given twice");
		return CLI_EXIT_USAGE;
	}
	if (!slash || (size_t)(slash - arg) >= sizeof kbuf)
		goto bad;
	memcpy(kbuf, arg, (size_t)(slash - arg));
	kbuf[slash - arg] = '\0';
	if (cli_parse_int64(kbuf, &k) != 0 || cli_parse_int64(slash + 1, &n) != 0 || n < 1 ||
	    n > 1000000 || k < 1 || k > n)
		goto bad;
	w->shard_k = (uint32_t)k;
	w->shard_n = (uint32_t)n;
	return 0;
bad:
	cli_error(NULL, "--shard needs K/N with 1 <= K <= N <= 1000000 (e.g. 3/8)");
	return CLI_EXIT_USAGE;
}

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

int cli_run_option(struct cli_run *w, int opt, const char *arg)
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
	case CLI_OPT_B_JOBS: {
		int64_t n;
		if (cli_parse_int64(arg, &n) != 0 || n < 1 || n > 1024) {
			cli_error(NULL, "--jobs needs a number from 1 to 1024");
			return CLI_EXIT_USAGE;
		}
		w->jobs = (int)n;
		return 0;
	}
	case CLI_OPT_B_ORDERED:
		w->ordered = 1;
		return 0;
	case CLI_OPT_B_SHARD:
		return parse_shard(w, arg);
	case CLI_OPT_B_LEDGER:
		if (w->ledger) {
			cli_error(NULL, "--ledger given twice");
			return CLI_EXIT_USAGE;
		}
		if (!*arg) {
			cli_error(NULL, "--ledger needs a file name");
			return CLI_EXIT_USAGE;
		}
		w->ledger = arg;
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
	case CLI_OPT_W_DRY_RUN:
		w->dry_run = 1;
		return 0;
	case CLI_OPT_W_DATE:
		if (!*arg) {
			cli_error(NULL, "--date needs 'now' or an ISO 8601 date");
			return CLI_EXIT_USAGE;
		}
		w->date = arg; /* the library validates it (a usage error) */
		return 0;
	default: {
		int rc = cli_key_option(&w->key, opt, arg);
		return rc != -1 ? rc : cli_pw_option(&w->src, opt, arg);
	}
	}
}

/* ---- output ------------------------------------------------------------------ */

void cli_json_update(struct cli_json *j, const struct pdfstamp_result *res)
{
	int i;

	cli_json_key(j, "base_length");
	cli_json_int(j, res->base_length);
	cli_json_key(j, "xref_offset");
	cli_json_int(j, res->xref_offset);
	cli_json_key(j, "bytes_appended");
	cli_json_int(j, res->bytes_appended);
	cli_json_key(j, "objects");
	cli_json_arr_begin(j);
	for (i = 0; i < res->nobjects; i++)
		cli_json_int(j, res->objects[i]);
	cli_json_arr_end(j);
	cli_json_key(j, "weak_encryption");
	cli_json_weak(j, res->weak, sizeof res->weak);
}

/* ---- --dry-run (note 4) ------------------------------------------------------ */

void cli_json_dry_run(struct cli_json *j, const struct cli_file *f)
{
	int pending = 0;

	if (!f->run->dry_run)
		return;
	cli_json_key(j, "dry_run");
	cli_json_bool(j, 1);
	cli_json_key(j, "journal_pending");
	cli_json_bool(j, pdfstamp_journal_pending(f->ctx, f->name, &pending) == 0 && pending);
}

int cli_dry_run_update(const struct cli_file *f, const struct pdfstamp_result *res,
                       const char *what)
{
	FILE *o = cli_out();

	if (res->bytes_appended == 0) {
		fputs("dry run: nothing to add to ", o);
		cli_put_safe(o, f->name);
		fputs("; nothing would be written\n", o);
		return CLI_EXIT_OK;
	}
	fputs("dry run: would ", o);
	if (f->run->in_place) {
		fprintf(o, "append %" PRId64 " bytes (%d %s%s) to ", res->bytes_appended,
		        res->nobjects, what, res->nobjects == 1 ? "" : "s");
		cli_put_safe(o, f->name);
	} else {
		fputs("write ", o);
		if (strcmp(f->run->output, "-") == 0)
			fputs("standard output", o);
		else
			cli_put_safe(o, f->run->output);
		fprintf(o, ": the %" PRId64 " bytes of ", res->base_length);
		cli_put_safe(o, f->name);
		fprintf(o, " and %" PRId64 " appended (%d %s%s)", res->bytes_appended,
		        res->nobjects, what, res->nobjects == 1 ? "" : "s");
	}
	fputs("; nothing written\n", o);
	return CLI_EXIT_OK;
}
