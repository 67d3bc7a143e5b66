/*
 * main.c - pdfstamp entry point: global options, the command table,
 * messages and the exit status contract.
 *
 * DESIGN NOTES
 *
 *  1. `pdfstamp [--help|--version] COMMAND [options] FILE...`.  Global
 *     options stop at the first operand ("+" in the getopt string), which
 *     names the command; the command parses the rest itself.
 *  2. A table row whose `run` is NULL is a planned command: it is listed by
 *     --help and answers `pdfstamp CMD --help`, and anything else exits 1
 *     with "'CMD' is not implemented in this version".
 *  3. Exit statuses come from cli_exit_status() only (pdfstamp(1)).
 *  4. Core dumps are disabled at start: a crash while a password or file
 *     key is in memory must not write it to disk.  The process is also
 *     made non-dumpable (prctl PR_SET_DUMPABLE 0), first thing: other
 *     processes of the same user can then neither ptrace it nor read its
 *     /proc/PID/mem, environ or fds (issue 11).
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

const struct cli_cmd cli_cmds[] = {
	{ "info", cmd_info,
	  "show encryption, permissions and structure of PDF files",
	  "[--json] [--force] [password options] FILE..." },
	{ "stamp", cmd_stamp,
	  "append a stamp annotation to a page as an encrypted incremental update",
	  "[--page N|first|last|all] [--text STR] [--icon NAME]\n"
	  "\t[--rect X1,Y1,X2,Y2 | --position POS] [password options]\n"
	  "\t(-o OUT FILE | --in-place FILE...)" },
	{ "meta", cmd_meta,
	  "change document metadata (Info dictionary, XMP) incrementally",
	  "[--set KEY=VALUE]... [--unset KEY]... [--xmp] [password options]\n"
	  "\t(-o OUT FILE | --in-place FILE...)" },
	{ "rotate", cmd_rotate,
	  "rotate passwords and the file key with a full rewrite",
	  "[--permissions LIST] [-j N] [--force] [password options]\n"
	  "\t[new password options] (-o OUT FILE | --in-place FILE...)" },
	{ "encrypt", cmd_encrypt,
	  "encrypt a plaintext PDF with AES-256 (R6)",
	  "[--permissions LIST] [-j N] [--force] [new password options]\n"
	  "\t(-o OUT FILE | --in-place FILE...)" },
	{ "verify", cmd_verify,
	  "check that every object parses and every string and stream decrypts",
	  "[--json] [-q] [password options] FILE..." },
	{ "recover", cmd_recover,
	  "roll back an in-place update interrupted by a crash (checks its journal)",
	  "[--json] FILE..." },
	{ NULL, NULL, NULL, NULL }
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

int cli_worst(int a, int b)
{
	return a > b ? a : b;
}

void cli_getopt_reset(void)
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

static void vmessage(const char *prefix, const char *file, const char *fmt,
                     va_list ap) CLI_PRINTF(3, 0);
static void vmessage(const char *prefix, const char *file, const char *fmt,
                     va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof msg, fmt, ap);
	fputs("pdfstamp: ", stderr);
	fputs(prefix, stderr);
	cli_put_safe(stderr, msg);
	if (file) {
		fputs(" (", stderr);
		cli_put_safe(stderr, file);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
}

void cli_error(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", file, fmt, ap);
	va_end(ap);
}

void cli_warning(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", file, fmt, ap);
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

int cli_bad_option(const char *cmd, int ret, const char *arg, int opt_char)
{
	char name[64];
	size_t n;

	/* glibc sets optopt to a long option's id, so decide by the text. */
	if (!arg || strncmp(arg, "--", 2) != 0) {
		if (ret == ':')
			cli_error(NULL, "option '-%c' needs an argument", opt_char);
		else
			cli_error(NULL, "unknown option '-%c'", opt_char);
	} else {
		n = arg ? strcspn(arg, "=") : 0;
		if (n >= sizeof name)
			n = sizeof name - 1;
		memcpy(name, arg ? arg : "", n);
		name[n] = '\0';
		if (ret == ':')
			cli_error(NULL, "option '%s' needs an argument", name);
		else if (arg && arg[n] == '=')
			cli_error(NULL, "unknown option '%s=...'", name);
		else
			cli_error(NULL, "unknown option '%s'", name);
	}
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

static void usage(FILE *f)
{
	const struct cli_cmd *c;

	fputs("Usage: pdfstamp [--help | --version] COMMAND [OPTIONS] FILE...\n"
	      "\n"
	      "Reads AES-256 encrypted PDF files (standard security handler, R6 and R5)\n"
	      "and appends encrypted incremental updates to them.\n"
	      "\n"
	      "Commands:\n", f);
	for (c = cli_cmds; c->name; c++)
		fprintf(f, "  %-8s %s%s\n", c->name, c->summary,
		        c->run ? "" : " (not yet implemented)");
	fputs("\n"
	      "Options:\n"
	      "  -h, --help     show this help and exit\n"
	      "  -V, --version  show the version and the AES engine and exit\n"
	      "\n"
	      "Run 'pdfstamp COMMAND --help' for the options of a command.  Passwords\n"
	      "are never taken from the command line: see PASSWORDS in pdfstamp(1).\n"
	      "\n"
	      "Exit status: 0 success, 1 I/O or internal error, 2 usage error,\n"
	      "3 wrong password, 4 malformed or unsupported input, 5 not permitted.\n",
	      f);
}

static const struct cli_cmd *find_cmd(const char *name)
{
	const struct cli_cmd *c;

	for (c = cli_cmds; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
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
			printf("Usage: pdfstamp %s %s\n\n%s.\n\n"
			       "This command is not implemented in this version.\n",
			       c->name, c->synopsis, c->summary);
			return cli_finish_stdout(CLI_EXIT_OK);
		}
	}
	cli_error(NULL, "'%s' is not implemented in this version", c->name);
	return CLI_EXIT_IO;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct rlimit nocore = { 0, 0 };
	const struct cli_cmd *c;
	int opt;

	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)setrlimit(RLIMIT_CORE, &nocore);

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return cli_finish_stdout(CLI_EXIT_OK);
		case 'V':
			printf("pdfstamp %s (libpdfstamp %s, AES engine: %s)\n",
			       PACKAGE_VERSION, pdfstamp_version(),
			       pdfstamp_aes_engine());
			return cli_finish_stdout(CLI_EXIT_OK);
		default:
			return cli_bad_option(NULL, opt, argv[optind - 1], optopt);
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
