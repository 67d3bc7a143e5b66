/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c - pdfstamp entry point: global options, the command table,
 * messages and the exit status contract.
 *
 * DESIGN NOTES
 *
 *  1. `pdfstamp [--help|--version] COMMAND [options] FILE...`.  Global
 *     options stop at the first operand ("+" in the getopt string), which
 *     names the command; the command parses the rest itself.  They are a
 *     table of rows (main_opts) like every command's (opts.c), which gives
 *     the getopt table and the options part of --help.
 *  2. A table row whose `run` is NULL is a planned command: it is listed by
 *     --help and answers `pdfstamp CMD --help`, and anything else exits 1
 *     with "'CMD' is not implemented in this version".
 *  3. Exit statuses come from cli_exit_status() only (pdfstamp(1)).
 *  4. Core dumps are disabled at start: a crash while a password or file
 *     key is in memory must not write it to disk.  The process is also
 *     made non-dumpable (prctl PR_SET_DUMPABLE 0), first thing: other
 *     processes of the same user can then neither ptrace it nor read its
 *     /proc/PID/mem, environ or fds (issue 11).
 *  5. cli_error() keeps the last message it printed (cli_last_error): a
 *     failure found before any file was opened is reported once, on
 *     stderr, where it is found, and then, with --json, as the "error" of
 *     every file's failure line (cli_fail_early, driver.c).  It is kept
 *     per thread, as is the stream of cli_out() (the file's output buffer
 *     in a worker of --jobs, driver.c note 11): the one piece of mutable
 *     state besides passwd.c's caught signals; messages never hold a
 *     password (cli.h note 3), so neither does it.  A message goes to
 *     stderr as one line under the stream's lock.
 */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "cli.h"

/* The command table, NULL-terminated (cli.h note 1). */
static const struct cli_cmd *const cli_cmds[] = {
	&cli_cmd_info,
	&cli_cmd_stamp,
	&cli_cmd_stamps,
	&cli_cmd_unstamp,
	&cli_cmd_meta,
	&cli_cmd_dss,
	&cli_cmd_timestamp,
	&cli_cmd_rotate,
	&cli_cmd_encrypt,
	&cli_cmd_verify,
	&cli_cmd_audit,
	&cli_cmd_recover,
	NULL
};

/* The global options (note 1), in the table form of every command's. */
static const struct cli_opt main_opts[] = {
	CLI_HEADING("Options:"),
	CLI_OPTION_HELP,
	CLI_OPTION("version", 'V', NULL, "show the version and the AES engine and exit"),
	CLI_TEXT("Run 'pdfstamp COMMAND --help' for the options of a command.  Passwords "
	         "are never taken from the command line: see PASSWORDS in pdfstamp(1)."),
	CLI_TEXT("Exit status: 0 success, 1 I/O or internal error, 2 usage error, 3 wrong "
	         "password, 4 malformed or unsupported input, 5 not permitted, 6 a "
	         "signature's policy is violated (audit); with several files the highest."),
	CLI_END
};

int cli_exit_status(int err)
{
	switch (err) {
	case PDFSTAMP_OK:
		return CLI_EXIT_OK;
	case PDFSTAMP_E_USAGE:
		return CLI_EXIT_USAGE;
	case PDFSTAMP_E_PASSWORD:
		return CLI_EXIT_PASSWORD;
	case PDFSTAMP_E_FORMAT:
	case PDFSTAMP_E_UNSUPPORTED:
		return CLI_EXIT_FORMAT;
	case PDFSTAMP_E_PERM:
		return CLI_EXIT_PERM;
	case PDFSTAMP_E_IO:
	case PDFSTAMP_E_NOMEM:
	case PDFSTAMP_E_INTERNAL:
	default:
		return CLI_EXIT_IO;
	}
}

/* The order is the statuses' own: 6 (a signature's policy violated: audit)
 * > 5 (not permitted) > 4 (damaged) > 3 (password) > 2 (usage) > 1 (I/O)
 * > 0, so a run over many files reports a violation whatever else failed. */
int cli_worst(int a, int b)
{
	return a > b ? a : b;
}

/* Resets getopt so that a command can parse its own argv. */
static void cli_getopt_reset(void)
{
#ifdef __GLIBC__
	optind = 0; /* glibc: full re-initialisation, including GNU extensions */
#else
	optind = 1;
#if defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || \
	defined(__APPLE__)
	optreset = 1;
#endif
#endif
}

void cli_put_safe(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	int n;

	while (*p) {
		if (*p >= 0x20 && *p < 0x7f) {
			putc(*p++, f);
			continue;
		}
		n = cli_utf8_next(p, &cp);
		/* C1 controls (U+0080..U+009F) act as escapes on some terminals. */
		if (n > 1 && cp >= 0xa0) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		if (n < 1)
			n = 1;
		while (n-- > 0)
			fprintf(f, "\\x%02x", *p++);
	}
}

/* The last error message, "<what> (<file>)" (note 5), of this thread:
 * the driver's workers report their own files' failures. */
static _Thread_local char last_error[1024];

/* The current file's output buffer in a worker thread (driver.c note 11). */
static _Thread_local FILE *out_stream;

FILE *cli_out(void)
{
	return out_stream ? out_stream : stdout;
}

void cli_set_out(FILE *f)
{
	out_stream = f;
}

const char *cli_last_error(void)
{
	return last_error;
}

/* KEEP: remember the message as the last error. */
static void vmessage(const char *prefix, int keep, const char *file, const char *fmt,
                     va_list ap) CLI_PRINTF(4, 0);
static void vmessage(const char *prefix, int keep, const char *file, const char *fmt,
                     va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof msg, fmt, ap);
	/* a long message is cut, as on stderr */
	if (keep && snprintf(last_error, sizeof last_error, "%s%s%s%s", msg, file ? " (" : "",
	                     file ? file : "", file ? ")" : "") < 0)
		last_error[0] = '\0';
	flockfile(stderr); /* one line, whatever other threads print */
	fputs("pdfstamp: ", stderr);
	fputs(prefix, stderr);
	cli_put_safe(stderr, msg);
	if (file) {
		fputs(" (", stderr);
		cli_put_safe(stderr, file);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
	funlockfile(stderr);
}

void cli_error(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", 1, file, fmt, ap);
	va_end(ap);
}

void cli_warning(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", 0, file, fmt, ap);
	va_end(ap);
}

void cli_warn_cb(void *userdata, const char *message)
{
	struct cli_warn_target *t = userdata;

	t->count++;
	cli_warning(t->file, "%s", message);
}

int cli_lib_error(const pdfstamp_ctx *ctx, int err, const char *file)
{
	const char *msg = ctx ? pdfstamp_ctx_errmsg(ctx) : "";

	if (!msg || !*msg)
		msg = pdfstamp_strerror(err);
	cli_error(file, "%s", msg);
	return cli_exit_status(err);
}

int cli_usage_hint(const char *cmd)
{
	if (cmd)
		fprintf(stderr, "Try 'pdfstamp %s --help'.\n", cmd);
	else
		fputs("Try 'pdfstamp --help'.\n", stderr);
	return CLI_EXIT_USAGE;
}

/* Names that would give a password on the command line.  A prefix of
 * "password" of 4 letters or more counts too ("--pass"). */
static int is_password_name(const char *name, size_t n)
{
	static const char *const names[] = {
		"passwd", "pw", "upw", "opw", "user-password", "owner-password",
		"new-password", "new-user-password", "new-owner-password", NULL
	};
	size_t i;

	if (n >= 4 && n <= 8 && strncmp(name, "password", n) == 0)
		return 1;
	for (i = 0; names[i]; i++)
		if (strlen(names[i]) == n && strncmp(names[i], name, n) == 0)
			return 1;
	return 0;
}

/* The options of OPTS that NAME (N bytes) is a proper prefix of: their
 * count, the first in *FIRST, and whether all of them are password
 * sources ("...password-file", "-fd", "-env") of one family, in *SAME_PW. */
static int prefix_matches(const struct option *opts, const char *name, size_t n,
                          const struct option **first, int *same_pw)
{
	const struct option *o;
	const char *fam = NULL, *dash;
	size_t famlen = 0;
	int count = 0;

	*first = NULL;
	*same_pw = 1;
	for (o = opts; o && o->name; o++) {
		if (strlen(o->name) <= n || strncmp(o->name, name, n) != 0)
			continue;
		if (!count++)
			*first = o;
		dash = strrchr(o->name, '-');
		if (!dash || (size_t)(dash - o->name) < 8 ||
		    strncmp(dash - 8, "password", 8) != 0 ||
		    (strcmp(dash, "-file") != 0 && strcmp(dash, "-fd") != 0 &&
		     strcmp(dash, "-env") != 0)) {
			*same_pw = 0;
			continue;
		}
		if (!fam) {
			fam = o->name;
			famlen = (size_t)(dash - o->name);
		} else if ((size_t)(dash - o->name) != famlen ||
		           strncmp(fam, o->name, famlen) != 0) {
			*same_pw = 0;
		}
	}
	if (!count)
		*same_pw = 0;
	return count;
}

static int has_option(const struct option *opts, const char *name)
{
	const struct option *o;

	for (o = opts; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return 1;
	return 0;
}

/* The answer to a password on the command line: which options to use
 * instead (FAMILY "password", "new-user-password", ... or NULL: those
 * the command has) and why. */
static int password_pointer(const char *cmd, const char *shown, const char *family,
                            const struct option *opts)
{
	char srcs[256];

	if (!family && has_option(opts, "password-file"))
		family = "password";
	if (family)
		snprintf(srcs, sizeof srcs, "--%s-file FILE, --%s-fd N or --%s-env VAR",
		         family, family, family);
	else if (has_option(opts, "new-user-password-file"))
		snprintf(srcs, sizeof srcs, "--new-user-password-file/-fd/-env and "
		         "--new-owner-password-file/-fd/-env");
	else
		snprintf(srcs, sizeof srcs, "--password-file FILE, --password-fd N or "
		         "--password-env VAR (with a command that reads a password)");
	cli_error(NULL, "'%s' is not an option: passwords are never taken from the "
	          "command line, where other users can read them in the process "
	          "list and the shell history keeps them; use %s", shown, srcs);
	return cli_usage_hint(cmd);
}

int cli_bad_option(const char *cmd, int ret, const char *arg, int opt_char,
                   const struct option *opts)
{
	const struct option *match;
	char name[64], shown[80];
	size_t n;
	int nmatch, same_pw, is_long, has_value;

	n = arg && strncmp(arg, "--", 2) == 0 ? strcspn(arg + 2, "=") : 0;
	/* glibc sets optopt to 0 for an unknown or ambiguous long option, and
	 * to the option's id for a long option misused; a short option in a
	 * cluster ("-pi") may leave ARG at the previous argument. */
	is_long = n > 0;
	if (is_long && opt_char > 0 && opt_char < 256) {
		const struct option *o;

		nmatch = prefix_matches(opts, arg + 2, n, &match, &same_pw);
		is_long = nmatch == 1 && match->val == opt_char;
		for (o = opts; !is_long && o && o->name; o++)
			if (strlen(o->name) == n && strncmp(o->name, arg + 2, n) == 0 &&
			    o->val == opt_char)
				is_long = 1;
	}
	if (!is_long) {
		if (ret == ':')
			cli_error(NULL, "option '-%c' needs an argument", opt_char);
		else if (opt_char == 'p' || opt_char == 'P') {
			snprintf(shown, sizeof shown, "-%c", opt_char);
			return password_pointer(cmd, shown, NULL, opts);
		} else
			cli_error(NULL, "unknown option '-%c'", opt_char);
		return cli_usage_hint(cmd);
	}
	has_value = arg[2 + n] == '=';
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, arg + 2, n);
	name[n] = '\0';
	snprintf(shown, sizeof shown, "--%s%s", name, has_value ? "=..." : "");
	if (ret == ':') {
		cli_error(NULL, "option '--%s' needs an argument", name);
		return cli_usage_hint(cmd);
	}
	nmatch = prefix_matches(opts, name, n, &match, &same_pw);
	if (is_password_name(name, n)) {
		const char *fam = NULL;
		if (strncmp(name, "new-user-", 9) == 0)
			fam = "new-user-password";
		else if (strncmp(name, "new-owner-", 10) == 0)
			fam = "new-owner-password";
		return password_pointer(cmd, shown, fam, opts);
	}
	if (has_value && (has_option(opts, name) || nmatch == 1)) {
		/* getopt_long knew the option: only a value it does not take */
		cli_error(NULL, "option '--%s' takes no argument",
		          has_option(opts, name) ? name : match->name);
		return cli_usage_hint(cmd);
	}
	if (nmatch > 1 && same_pw) {
		/* e.g. --new-user-pass: it stops inside the word "password" of
		 * one family's sources (--password-f is merely ambiguous) */
		char fam[64];
		size_t fl = (size_t)(strrchr(match->name, '-') - match->name);

		if (n <= fl && n + 4 >= fl) {
			if (fl >= sizeof fam)
				fl = sizeof fam - 1;
			memcpy(fam, match->name, fl);
			fam[fl] = '\0';
			return password_pointer(cmd, shown, fam, opts);
		}
	}
	if (nmatch > 1) {
		char list[512];
		const struct option *o;
		size_t len = 0;

		list[0] = '\0';
		for (o = opts; o->name && len < sizeof list - 80; o++) {
			if (strlen(o->name) <= n || strncmp(o->name, name, n) != 0)
				continue;
			len += (size_t)snprintf(list + len, sizeof list - len, "%s--%s",
			                        len ? ", " : "", o->name);
		}
		cli_error(NULL, "option '--%s' is ambiguous; possibilities: %s", name, list);
		return cli_usage_hint(cmd);
	}
	cli_error(NULL, "unknown option '%s'", shown);
	return cli_usage_hint(cmd);
}

int cli_finish_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("stdout", "write error");
		return cli_worst(status, CLI_EXIT_IO);
	}
	return status;
}

static void usage(void)
{
	const struct cli_cmd *const *c;

	fputs("Usage: pdfstamp [--help | --version] COMMAND [OPTIONS] FILE...\n"
	      "\n"
	      "Reads encrypted PDF files (standard security handler: AES-256 R6 and R5,\n"
	      "AES-128 and RC4 R4, R3 and R2) and appends encrypted incremental updates\n"
	      "to them under their own handler, with a warning for a weak one (RC4, or\n"
	      "a key under 128 bits); 'rotate' rewrites any of them as AES-256 R6.\n"
	      "Public-key and unknown handlers are refused (exit status 4).\n"
	      "\n"
	      "Commands:\n", stdout);
	for (c = cli_cmds; *c; c++)
		printf("  %-8s %s%s\n", (*c)->name, (*c)->summary,
		       (*c)->run ? "" : " (not yet implemented)");
	cli_help_rows(main_opts);
}

static const struct cli_cmd *find_cmd(const char *name)
{
	const struct cli_cmd *const *c;

	for (c = cli_cmds; *c; c++)
		if (strcmp((*c)->name, name) == 0)
			return *c;
	return NULL;
}

/* A planned command: answers --help, refuses everything else. */
static int run_planned(const struct cli_cmd *c, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cli_help(c);
			fputs("\nThis command is not implemented in this version.\n", stdout);
			return cli_finish_stdout(CLI_EXIT_OK);
		}
	}
	cli_error(NULL, "'%s' is not implemented in this version", c->name);
	return CLI_EXIT_IO;
}

int main(int argc, char **argv)
{
	struct option opts[4];
	char shorts[8];
	const struct rlimit nocore = { 0, 0 };
	const struct cli_cmd *c;
	int opt;

	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)setrlimit(RLIMIT_CORE, &nocore);

	if (cli_opt_table(main_opts, "+", opts, sizeof opts / sizeof *opts, shorts,
	                  sizeof shorts) != 0) {
		cli_error(NULL, "internal error: the table of global options is too large");
		return CLI_EXIT_IO;
	}
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage();
			return cli_finish_stdout(CLI_EXIT_OK);
		case 'V':
			printf("pdfstamp %s (libpdfstamp %s, AES engine: %s)\n",
			       PACKAGE_VERSION, pdfstamp_version(),
			       pdfstamp_aes_engine());
			return cli_finish_stdout(CLI_EXIT_OK);
		default:
			return cli_bad_option(NULL, opt, argv[optind - 1], optopt, opts);
		}
	}
	if (optind >= argc) {
		cli_error(NULL, "no command given");
		return cli_usage_hint(NULL);
	}
	c = find_cmd(argv[optind]);
	if (!c) {
		cli_error(NULL, "unknown command '%s'", argv[optind]);
		return cli_usage_hint(NULL);
	}
	argc -= optind;
	argv += optind;
	cli_getopt_reset();
	if (!c->run)
		return run_planned(c, argc, argv);
	return c->run(argc, argv);
}
