/* SPDX-License-Identifier: Apache-2.0 */
/*
 * opts.c - one table per command: its options parsed, its --help printed.
 *
 * DESIGN NOTES
 *
 *  1. A command's options are one array of struct cli_opt (cli.h): per
 *     option its long name, its getopt_long value (a letter is also the
 *     short option), the name of its argument and its help; headings,
 *     notes and the shared tables (cli_pw_opts, cli_write_opts) are rows
 *     of the same array.  From it come the getopt_long table and the short
 *     option string (cli_opt_table), the --help text (cli_help) and so,
 *     through --help, the check that pdfstamp(1) documents the same
 *     options with the same argument names (tests/e2e/options.sh).
 *     Nothing else lists a command's options.
 *  2. The rows are in the order of --help, which is also the order of the
 *     getopt_long table.  That order shows in one message: the candidates
 *     of an ambiguous prefix, in table order (cli_bad_option).  Options
 *     that share a first letter keep the order they had before the
 *     tables (issue 30), so that no such message changed.
 *  3. Parsing is getopt_long's (GNU permutation, unambiguous prefixes,
 *     "--"), its failures reported by cli_bad_option; cli_parse hands the
 *     command's own options to the command, the rest to cli_run_option.
 *  4. A failed command line still gives, with --json, a failure line per
 *     FILE it names (cli_fail_early, driver.c note 4): since getopt_long
 *     stopped at the error, the arguments are read again here, leniently
 *     and with the same table (which options take an argument), to the
 *     end: the operands, --json, --files-from, -o - (after which standard
 *     output is the PDF's alone) and whether a password option reads
 *     standard input (then a list there is not read).  Password options
 *     are known by their names, "...password-file" and "...password-fd",
 *     as cli_bad_option knows them.
 *  5. --help: a heading after an empty line; an option on a line of its
 *     own, "  -o, --output OUT" or "      --json", its help from the
 *     column after the widest such line of the command (up to
 *     HELP_MAX_LEFT; a wider one has its help start on the next line),
 *     word-wrapped to HELP_WIDTH columns; notes indented by two columns.
 *  6. The fingerprint (cli_run.fingerprint, --ledger): FNV-1a over the
 *     command's name and, in the order given, each option's long name and
 *     argument, except those that change nothing done to a file (the batch
 *     options, --json, -v, -q, the password and the key options).  Long names, not
 *     getopt values, so that a later version with other tables reads the
 *     same ledger the same way.
 */
#include "config.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define HELP_WIDTH 79    /* no line of --help is longer */
#define HELP_MAX_LEFT 26 /* an option wider than this has its help below it */
#define MAX_OPTS 64      /* options of one command, the terminator included */
#define MAX_DEPTH 4      /* tables included in tables */

/* ---- walking a table ------------------------------------------------------ */

typedef void (*row_fn)(const struct cli_opt *o, void *arg);

/* Calls FN for every row of ROWS, included tables in their place. */
static void each_row(const struct cli_opt *rows, row_fn fn, void *arg, int depth)
{
	const struct cli_opt *o;

	for (o = rows; o && o->row != CLI_ROW_END; o++) {
		if (o->row == CLI_ROW_INCLUDE) {
			if (depth < MAX_DEPTH)
				each_row(o->table, fn, arg, depth + 1);
		} else {
			fn(o, arg);
		}
	}
}

static int has_short(const struct cli_opt *o)
{
	return o->id > 0 && o->id < 0x80;
}

/* ---- the getopt_long table (note 1) ------------------------------------- */

struct build {
	struct option *lo;
	size_t nlo, n;
	char *shorts;
	size_t nshorts, ns;
	int full;
};

static void build_row(const struct cli_opt *o, void *arg)
{
	struct build *b = arg;

	if (o->row != CLI_ROW_OPT)
		return;
	if (o->name) {
		if (b->n + 1 >= b->nlo) {
			b->full = 1;
			return;
		}
		b->lo[b->n].name = o->name;
		b->lo[b->n].has_arg = o->arg ? required_argument : no_argument;
		b->lo[b->n].flag = NULL;
		b->lo[b->n].val = o->id;
		b->n++;
	}
	if (has_short(o)) {
		if (b->ns + 3 > b->nshorts) {
			b->full = 1;
			return;
		}
		b->shorts[b->ns++] = (char)o->id;
		if (o->arg)
			b->shorts[b->ns++] = ':';
	}
}

int cli_opt_table(const struct cli_opt *rows, const char *prefix, struct option *lo,
                  size_t nlo, char *shorts, size_t nshorts)
{
	struct build b;

	memset(&b, 0, sizeof b);
	b.lo = lo;
	b.nlo = nlo;
	b.shorts = shorts;
	b.nshorts = nshorts;
	b.ns = strlen(prefix);
	if (nlo < 1 || b.ns + 1 > nshorts)
		return -1;
	memcpy(shorts, prefix, b.ns);
	each_row(rows, build_row, &b, 0);
	memset(&lo[b.n < nlo ? b.n : nlo - 1], 0, sizeof *lo);
	shorts[b.ns < nshorts ? b.ns : nshorts - 1] = '\0';
	return b.full ? -1 : 0;
}

/* ---- --help (note 5) -------------------------------------------------------- */

/* "  -o, --output OUT", "      --json" or "  -o OUT" into BUF; its length. */
static int left_part(const struct cli_opt *o, char *buf, size_t n)
{
	int k;

	if (o->name)
		k = snprintf(buf, n, "  %c%c%c --%s%s%s", has_short(o) ? '-' : ' ',
		             has_short(o) ? o->id : ' ', has_short(o) ? ',' : ' ', o->name,
		             o->arg ? " " : "", o->arg ? o->arg : "");
	else
		k = snprintf(buf, n, "  -%c%s%s", o->id, o->arg ? " " : "", o->arg ? o->arg : "");
	return k < 0 ? 0 : k;
}

static void widest_row(const struct cli_opt *o, void *arg)
{
	int *w = arg, k;
	char buf[128];

	if (o->row != CLI_ROW_OPT || (o->flags & CLI_OPT_HIDDEN))
		return;
	k = left_part(o, buf, sizeof buf);
	if (k <= HELP_MAX_LEFT && k > *w)
		*w = k;
}

/* Writes TEXT word-wrapped: the current line is at column *COL, lines
 * after it start at column IND; a '\n' in TEXT ends a line.  Spaces
 * between words are kept as they are (two after a full stop) unless a
 * line ends there. */
static void wrap(const char *text, int *col, int ind)
{
	const char *p = text, *w;
	size_t sp, len;

	while (*p) {
		for (sp = 0; p[sp] == ' '; sp++)
			;
		w = p + sp;
		if (*w == '\n') {
			printf("\n%*s", ind, "");
			*col = ind;
			p = w + 1;
			continue;
		}
		if (!*w)
			break;
		len = strcspn(w, " \n");
		if (*col > ind && *col + (int)(sp + len) > HELP_WIDTH) {
			printf("\n%*s", ind, "");
			*col = ind;
		} else if (*col > ind) {
			printf("%*s", (int)sp, "");
			*col += (int)sp;
		}
		fwrite(w, 1, len, stdout);
		*col += (int)len;
		p = w + len;
	}
}

static void help_row(const struct cli_opt *o, void *arg)
{
	int width = *(const int *)arg, col, k, i;
	char left[128];

	switch (o->row) {
	case CLI_ROW_HEADING:
	case CLI_ROW_TEXT:
		putchar('\n');
		col = 0;
		wrap(o->help, &col, 0);
		putchar('\n');
		return;
	case CLI_ROW_NOTE:
		fputs("  ", stdout);
		col = 2;
		wrap(o->help, &col, 2);
		putchar('\n');
		return;
	case CLI_ROW_OPT:
		break;
	default:
		return;
	}
	if (o->flags & CLI_OPT_HIDDEN)
		return;
	k = left_part(o, left, sizeof left);
	fputs(left, stdout);
	if (k > width)
		printf("\n%*s", width + 2, "");
	else
		printf("%*s", width + 2 - k, "");
	col = width + 2;
	wrap(o->help ? o->help : "", &col, width + 2);
	for (i = 0; o->values && o->values[i]; i++) {
		/* "one of: A, B, C": a value and its comma stay on one line */
		snprintf(left, sizeof left, " %s%s", o->values[i], o->values[i + 1] ? "," : "");
		wrap(left, &col, width + 2);
	}
	putchar('\n');
}

void cli_help_rows(const struct cli_opt *rows)
{
	int width = 0;

	each_row(rows, widest_row, &width, 0);
	each_row(rows, help_row, &width, 0);
}

void cli_help(const struct cli_cmd *cmd)
{
	const char *s = cmd->synopsis, *nl;

	printf("Usage: pdfstamp %s ", cmd->name);
	while ((nl = strchr(s, '\n')) != NULL) {
		printf("%.*s\n       ", (int)(nl - s), s);
		s = nl + 1;
	}
	printf("%s\n\n%s", s, cmd->about);
	cli_help_rows(cmd->opts);
}

/* ---- parsing (notes 3 and 4) ---------------------------------------------- */

/* Whether option NAME given VAL reads a password from standard input. */
static int pw_from_stdin(const char *name, const char *val)
{
	size_t n = strlen(name);

	if (!val)
		return 0;
	if (n >= 13 && strcmp(name + n - 13, "password-file") == 0)
		return strcmp(val, "-") == 0;
	if (n >= 11 && strcmp(name + n - 11, "password-fd") == 0)
		return *val && strspn(val, "0") == strlen(val);
	return 0;
}

/* The long option of LO that ARG ("name" or "name=value") means: an exact
 * match or the only one it is a prefix of; NULL if none. */
static const struct option *long_match(const struct option *lo, const char *arg)
{
	const struct option *o, *found = NULL;
	size_t n = strcspn(arg, "=");
	int count = 0;

	for (o = lo; o->name; o++) {
		if (strncmp(o->name, arg, n) != 0)
			continue;
		if (strlen(o->name) == n)
			return o;
		found = o;
		count++;
	}
	return count == 1 ? found : NULL;
}

/* Note 4: the --json failure lines of a command line that failed with
 * STATUS.  ARGV as getopt_long left it (permuted, nothing lost). */
static int fail_lines(const struct option *lo, const char *shorts, int argc, char **argv,
                      int status)
{
	struct cli_run run;
	const struct option *o;
	const char *a, *p, *s, *val;
	char **ops;
	int i, nops = 0, literal = 0;

	memset(&run, 0, sizeof run);
	if (!(ops = calloc((size_t)argc + 1, sizeof *ops)))
		return status;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (literal || a[0] != '-' || a[1] == '\0') {
			ops[nops++] = argv[i];
			continue;
		}
		if (strcmp(a, "--") == 0) {
			literal = 1;
			continue;
		}
		if (a[1] == '-') {
			if (!(o = long_match(lo, a + 2)))
				continue; /* unknown: taken to have no argument */
			val = strchr(a, '=') ? strchr(a, '=') + 1 : NULL;
			if (o->has_arg == required_argument && !val && i + 1 < argc)
				val = argv[++i];
			if (o->val == CLI_OPT_W_JSON)
				run.json = 1;
			else if (o->val == CLI_OPT_W_FILES_FROM && val)
				run.files_from = val;
			else if (o->val == 'o' && val)
				run.output = val;
			run.pw_stdin |= pw_from_stdin(o->name, val);
			continue;
		}
		for (p = a + 1; *p; p++) {
			if (*p == ':' || !(s = strchr(shorts, *p)) || s[1] != ':')
				continue;
			val = p[1] ? p + 1 : i + 1 < argc ? argv[++i] : NULL;
			if (*p == 'o' && val)
				run.output = val;
			break;
		}
	}
	status = cli_fail_early(&run, nops, ops, status);
	free(ops);
	return status;
}

/* ---- the fingerprint of the work (note 6) ------------------------------------ */

/* FNV-1a, 64 bits, over N bytes at P from H. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* Options that do not change what is done to a file. */
static int outside_fingerprint(int opt)
{
	switch (opt) {
	case 'v': case 'q': case CLI_OPT_W_JSON: case CLI_OPT_W_FILES_FROM:
	case CLI_OPT_B_JOBS: case CLI_OPT_B_ORDERED: case CLI_OPT_B_SHARD: case CLI_OPT_B_LEDGER:
	case CLI_OPT_W_DRY_RUN: /* a dry run looks up what the real run would skip */
	case CLI_OPT_PASSWORD_FILE: case CLI_OPT_PASSWORD_FD: case CLI_OPT_PASSWORD_ENV:
	case CLI_OPT_KEY: case CLI_OPT_CERT: case CLI_OPT_P12: case CLI_OPT_KEY_PASSWORD_FILE:
	case CLI_OPT_KEY_PASSWORD_FD: case CLI_OPT_KEY_PASSWORD_ENV:
		return 1;
	default:
		return 0;
	}
}

/* Adds option OPT (its long name from LO, else its letter) and its
 * argument ARG to the fingerprint H. */
static uint64_t fingerprint_add(uint64_t h, const struct option *lo, int opt, const char *arg)
{
	const char *name = NULL;
	char letter[2] = {(char)opt, '\0'};
	int i;

	for (i = 0; lo[i].name; i++) {
		if (lo[i].val == opt) {
			name = lo[i].name;
			break;
		}
	}
	if (!name)
		name = letter;
	h = fnv1a(h, name, strlen(name) + 1);
	return arg ? fnv1a(h, arg, strlen(arg) + 1) : fnv1a(h, "", 1);
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli_run *run,
              cli_opt_fn fn, void *arg, int *status)
{
	struct option lo[MAX_OPTS];
	char shorts[2 * MAX_OPTS + 2];
	int opt, rc, li = -1;

	if (cli_opt_table(cmd->opts, ":", lo, MAX_OPTS, shorts, sizeof shorts) != 0) {
		cli_error(NULL, "internal error: the option table of '%s' is too large", cmd->name);
		*status = CLI_EXIT_IO;
		return 1;
	}
	opterr = 0;
	run->fingerprint = fnv1a(UINT64_C(0xcbf29ce484222325), cmd->name, strlen(cmd->name) + 1);
	while ((opt = getopt_long(argc, argv, shorts, lo, &li)) != -1) {
		if (opt == 'h') {
			cli_help(cmd);
			*status = cli_finish_stdout(CLI_EXIT_OK);
			return 1;
		}
		if (opt == ':' || opt == '?')
			rc = cli_bad_option(cmd->name, opt, argv[optind - 1], optopt, lo);
		else if ((rc = fn ? fn(arg, opt, optarg) : -1) < 0 &&
		         (rc = cli_run_option(run, opt, optarg)) < 0) {
			cli_error(NULL, "internal error: option %d", opt);
			rc = CLI_EXIT_IO;
		}
		if (rc != 0) {
			*status = fail_lines(lo, shorts, argc, argv, rc);
			return 1;
		}
		if (li >= 0 && pw_from_stdin(lo[li].name, optarg))
			run->pw_stdin++;
		if (!outside_fingerprint(opt))
			run->fingerprint = fingerprint_add(run->fingerprint, lo, opt, optarg);
		li = -1;
	}
	*status = 0;
	return 0;
}
