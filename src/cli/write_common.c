/*
 * write_common.c - what the writing commands share besides the driver
 * (driver.c): their common options and help text, the --json members of
 * an incremental update, and strict parsing of option values.
 *
 * DESIGN NOTES
 *
 *  1. The options of CLI_WRITE_LONGOPTS are recorded in a struct cli_run,
 *     which cli_each_file() acts on; stamp and meta list them all, rotate
 *     and encrypt the ones they share (-o, -i, -v, --json, --force).
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
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char cli_write_help[] =
	"Output (exactly one of -o and --in-place):\n"
	"  -o, --output OUT      write the updated copy to OUT (only with one FILE);\n"
	"                        OUT is written to a temporary file, synced and\n"
	"                        renamed, so it is never left half-written;\n"
	"                        '-' writes standard output instead (not a\n"
	"                        terminal, not with --json or -v), once the copy\n"
	"                        was built and checked in a nameless temporary\n"
	"                        file in $TMPDIR (else the current directory)\n"
	"  -i, --in-place        append to each FILE itself (required with several\n"
	"                        FILEs); after a crash, the next -i run or\n"
	"                        'pdfstamp recover FILE' keeps a whole update\n"
	"\n"
	"Other options:\n"
	"      --files-from LIST read more FILE names from LIST, one per line\n"
	"                        (empty lines are skipped; '-' reads standard input)\n"
	"      --json            print one JSON object per FILE on one line each\n"
	"                        (keys: see JSON OUTPUT in pdfstamp(1))\n"
	"  -v, --verbose         print one line per updated FILE (not with --json)\n"
	"      --allow-trailing-bytes\n"
	"                        append even if bytes follow the last %%EOF\n"
	"      --allow-identity  append to an encrypted file whose string or stream\n"
	"                        filter is /Identity (new text is then in clear)\n"
	"      --force           accept a /Perms entry that does not match /P (warns);\n"
	"                        the permissions /Perms records then apply\n"
	"  -h, --help            show this help and exit\n"
	"\n";

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

int cli_common_option(struct cli_run *run, const char *cmd, int opt, char **argv,
                      const struct option *opts)
{
	int rc;

	if (opt == ':' || opt == '?')
		return cli_bad_option(cmd, opt, argv[optind - 1], optopt, opts);
	if ((rc = cli_run_option(run, opt, optarg)) < 0) {
		cli_error(NULL, "internal error: option %d", opt);
		return CLI_EXIT_IO;
	}
	return rc;
}

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
	case CLI_OPT_W_ALLOW_TRAILING:
		w->allow_trailing = 1;
		return 0;
	case CLI_OPT_W_ALLOW_IDENTITY:
		w->allow_identity = 1;
		return 0;
	case CLI_OPT_W_FORCE:
		w->force = 1;
		return 0;
	case CLI_OPT_W_DATE:
		if (!*arg) {
			cli_error(NULL, "--date needs 'now' or an ISO 8601 date");
			return CLI_EXIT_USAGE;
		}
		w->date = arg; /* the library validates it (a usage error) */
		return 0;
	default:
		return cli_pw_option(&w->src, opt, arg);
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
