/* SPDX-License-Identifier: Apache-2.0 */
/*
 * passwd.c - obtaining passwords without ever taking them from argv.
 *
 * DESIGN NOTES
 *
 * Sources, exactly one per password (a second one is a usage error):
 *   --password-file FILE  first line of FILE ("-" = stdin)
 *   --password-fd N       first line read from descriptor N
 *   --password-env VAR    value of VAR; the value is wiped in the
 *                         environment and VAR unset once copied
 *   none                  a prompt on /dev/tty with echo off if stdin is a
 *                         terminal, else the empty password (many files
 *                         have an empty user password)
 * "First line" means: up to the first LF; one trailing CR before that LF is
 * dropped too (CRLF files); everything after the first LF is ignored.
 * Input is read one byte at a time with read(2), never through stdio, so no
 * unwiped copy is left in a FILE buffer and a pipe is not drained past the
 * first line.
 *
 * Invariants:
 *  1. A password lives only in struct cli_pw (CLI_PW_MAX + 1 bytes, mlock'ed
 *     when the system allows it) and in the one byte being read; both are
 *     wiped with cli_wipe() on every path, including errors.
 *  2. A password longer than CLI_PW_MAX bytes is an error, never truncated
 *     silently (the library applies the 127-byte rule of ISO 32000-2
 *     Algorithm 2.A itself, after SASLprep).
 *  3. The terminal is always restored: on success, on error, and when a
 *     signal arrives while echo is off.  The caught signal is then
 *     re-delivered with the original disposition in place (so ^C still
 *     kills the process and ^Z still stops it, after which the prompt
 *     starts again).
 *  4. Messages name the source ("--password-file pw.txt"), never the
 *     password.
 *  5. A source that cannot be read -- a file that is missing or cannot
 *     be opened or read, a descriptor that is not open, a variable that
 *     is not set -- is a usage error (exit 2), the one rule for every
 *     input an option names (README, Exit codes; pdfstamp(1) EXIT
 *     STATUS): the command line names something that is not there.
 *     Only the terminal's own failures (/dev/tty) are I/O errors.
 *
 * The only mutable static state in the program besides the last error
 * message (main.c note 5) is the array of caught signals below: a signal
 * handler can communicate in no other way.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

const struct cli_opt cli_pw_opts[] = {
	CLI_OPTION("password-file", CLI_OPT_PASSWORD_FILE, "FILE",
	           "read the password from the first line of FILE ('-' reads standard input)"),
	CLI_OPTION("password-fd", CLI_OPT_PASSWORD_FD, "N",
	           "read the password from file descriptor N"),
	CLI_OPTION("password-env", CLI_OPT_PASSWORD_ENV, "VAR",
	           "take the password from environment variable VAR"),
	CLI_NOTE("Without one of these the password is asked for on the terminal when "
	         "standard input is a terminal; otherwise the empty password is used."),
	CLI_END
};

const struct cli_opt cli_pw_section[] = {
	CLI_HEADING("Password options (passwords are never taken from the command line):"),
	CLI_INCLUDE(cli_pw_opts),
	CLI_END
};

#ifndef HAVE_EXPLICIT_BZERO
static void *(*const volatile wipe_memset)(void *, int, size_t) = memset;
#endif

/* Wipes N bytes at P in a way the compiler cannot drop. */
static void cli_wipe(void *p, size_t n)
{
	if (!p || !n)
		return;
#ifdef HAVE_EXPLICIT_BZERO
	explicit_bzero(p, n);
#else
	wipe_memset(p, 0, n);
#endif
}

static const char *src_name(enum cli_pw_kind kind)
{
	switch (kind) {
	case CLI_PW_FILE: return "--password-file";
	case CLI_PW_FD: return "--password-fd";
	case CLI_PW_ENV: return "--password-env";
	default: return "none";
	}
}

/* Parses a non-negative descriptor number strictly. */
static int parse_fd(const char *s, int *out)
{
	long v = 0;
	const char *p;

	if (!*s)
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (INT_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	*out = (int)v;
	return 0;
}

int cli_pw_src_set(struct cli_pw_src *src, enum cli_pw_kind kind,
                   const char *arg, const char *optname)
{
	if (!optname)
		optname = src_name(kind);
	if (src->kind != CLI_PW_NONE) {
		cli_error(NULL, "only one password source may be given (%s and %s)",
		          src->optname, optname);
		return CLI_EXIT_USAGE;
	}
	switch (kind) {
	case CLI_PW_FILE:
		if (!*arg) {
			cli_error(NULL, "%s needs a file name", optname);
			return CLI_EXIT_USAGE;
		}
		break;
	case CLI_PW_FD:
		if (parse_fd(arg, &src->fd) != 0) {
			cli_error(NULL, "%s: '%s' is not a file descriptor number",
			          optname, arg);
			return CLI_EXIT_USAGE;
		}
		break;
	case CLI_PW_ENV:
		if (!*arg || strchr(arg, '=')) {
			cli_error(NULL, "%s: '%s' is not a variable name",
			          optname, arg);
			return CLI_EXIT_USAGE;
		}
		break;
	default:
		cli_error(NULL, "internal error: bad password source");
		return CLI_EXIT_IO;
	}
	src->kind = kind;
	src->arg = arg;
	src->optname = optname;
	return 0;
}

int cli_pw_option(struct cli_pw_src *src, int opt, const char *arg)
{
	switch (opt) {
	case CLI_OPT_PASSWORD_FILE:
		return cli_pw_src_set(src, CLI_PW_FILE, arg, "--password-file");
	case CLI_OPT_PASSWORD_FD:
		return cli_pw_src_set(src, CLI_PW_FD, arg, "--password-fd");
	case CLI_OPT_PASSWORD_ENV:
		return cli_pw_src_set(src, CLI_PW_ENV, arg, "--password-env");
	default:
		return -1;
	}
}

void cli_pw_init(struct cli_pw *pw)
{
	memset(pw, 0, sizeof *pw);
	pw->locked = mlock(pw, sizeof *pw) == 0;
}

void cli_pw_clear(struct cli_pw *pw)
{
	int locked = pw->locked;

	cli_wipe(pw, sizeof *pw);
	if (locked)
		(void)munlock(pw, sizeof *pw);
}

/*
 * Reads the first line from FD into PW.  WHAT and FILE describe the source
 * for messages.  Returns 0 or an exit status.
 */
static int read_line(int fd, struct cli_pw *pw, const char *what,
                     const char *file)
{
	unsigned char c = 0;
	ssize_t r;
	size_t len = 0;
	int saw_lf = 0, err = 0;

	for (;;) {
		r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			break;
		}
		if (r == 0)
			break;
		if (c == '\n') {
			saw_lf = 1;
			break;
		}
		if (len > CLI_PW_MAX) {
			len++; /* too long; keep counting only to report it */
			break;
		}
		pw->buf[len++] = (char)c;
	}
	cli_wipe(&c, sizeof c);
	if (err) {
		cli_wipe(pw->buf, sizeof pw->buf);
		cli_error(file, "cannot read password from %s: %s", what,
		          strerror(err));
		return CLI_EXIT_USAGE; /* note 5 */
	}
	if (saw_lf && len > 0 && len <= CLI_PW_MAX + 1 && pw->buf[len - 1] == '\r')
		len--;
	if (len > CLI_PW_MAX) {
		cli_wipe(pw->buf, sizeof pw->buf);
		cli_error(file, "password from %s is longer than %d bytes", what,
		          CLI_PW_MAX);
		return CLI_EXIT_USAGE;
	}
	pw->len = len;
	pw->have = 1;
	return 0;
}

static int read_env(const char *var, const char *optname, struct cli_pw *pw)
{
	char *val = getenv(var);
	size_t len;

	if (!val) {
		cli_error(NULL, "%s: environment variable %s is not set", optname,
		          var);
		return CLI_EXIT_USAGE;
	}
	len = strlen(val);
	if (len > CLI_PW_MAX) {
		cli_error(NULL, "%s: the value of %s is longer than %d bytes",
		          optname, var, CLI_PW_MAX);
		return CLI_EXIT_USAGE;
	}
	memcpy(pw->buf, val, len);
	pw->len = len;
	pw->have = 1;
	/* Do not leave the password where child processes or a core dump
	 * would find it. */
	cli_wipe(val, len);
	(void)unsetenv(var);
	return 0;
}

static int read_source(const struct cli_pw_src *src, struct cli_pw *pw)
{
	int fd, rc;
	char what[64];

	switch (src->kind) {
	case CLI_PW_FILE:
		if (strcmp(src->arg, "-") == 0)
			return read_line(STDIN_FILENO, pw, "standard input", NULL);
		fd = open(src->arg, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			cli_error(src->arg, "cannot open password file: %s",
			          strerror(errno));
			return CLI_EXIT_USAGE; /* note 5 */
		}
		rc = read_line(fd, pw, "password file", src->arg);
		close(fd);
		return rc;
	case CLI_PW_FD:
		snprintf(what, sizeof what, "file descriptor %d", src->fd);
		return read_line(src->fd, pw, what, NULL);
	case CLI_PW_ENV:
		return read_env(src->arg, src->optname, pw);
	default:
		cli_error(NULL, "internal error: bad password source");
		return CLI_EXIT_IO;
	}
}

/* ---- terminal prompt ----------------------------------------------------- */

static volatile sig_atomic_t caught[NSIG];

static void on_signal(int sig)
{
	if (sig > 0 && sig < NSIG)
		caught[sig] = 1;
}

static const int prompt_signals[] = {
	SIGALRM, SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM,
	SIGTSTP, SIGTTIN, SIGTTOU
};
#define NPROMPT_SIGNALS (sizeof prompt_signals / sizeof prompt_signals[0])

static void write_all(int fd, const char *s, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/*
 * Reads one line from the terminal with echo off.  Returns 0, an exit
 * status, or -1 if it was stopped (SIGTSTP etc.) and should start again.
 */
static int prompt_once(int tty, const char *prompt, struct cli_pw *pw)
{
	struct sigaction sa, old[NPROMPT_SIGNALS];
	struct termios saved, noecho;
	unsigned char c = 0;
	size_t i, len = 0;
	ssize_t r;
	int rc = 0, interrupted = 0, restart = 0, err = 0;

	if (tcgetattr(tty, &saved) != 0) {
		cli_error("/dev/tty", "cannot read terminal settings: %s",
		          strerror(errno));
		return CLI_EXIT_IO;
	}
	for (i = 0; i < NPROMPT_SIGNALS; i++)
		caught[prompt_signals[i]] = 0;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = 0; /* no SA_RESTART: read() must return EINTR */
	for (i = 0; i < NPROMPT_SIGNALS; i++)
		(void)sigaction(prompt_signals[i], &sa, &old[i]);

	noecho = saved;
	noecho.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK);
	noecho.c_lflag |= ICANON;
	while (tcsetattr(tty, TCSAFLUSH, &noecho) != 0 && errno == EINTR)
		;
	write_all(tty, prompt, strlen(prompt));

	for (;;) {
		r = read(tty, &c, 1);
		if (r < 0 && errno == EINTR) {
			for (i = 0; i < NPROMPT_SIGNALS; i++)
				if (caught[prompt_signals[i]])
					interrupted = 1;
			if (interrupted)
				break;
			continue;
		}
		if (r < 0) {
			err = errno;
			break;
		}
		if (r == 0 || c == '\n' || c == '\r')
			break;
		if (len > CLI_PW_MAX) {
			len++;
			continue; /* keep draining the line, report below */
		}
		pw->buf[len++] = (char)c;
	}
	cli_wipe(&c, sizeof c);

	/* Restore the terminal first, then the signal dispositions. */
	while (tcsetattr(tty, TCSAFLUSH, &saved) != 0 && errno == EINTR)
		;
	write_all(tty, "\n", 1);
	for (i = 0; i < NPROMPT_SIGNALS; i++)
		(void)sigaction(prompt_signals[i], &old[i], NULL);

	if (interrupted || err || len > CLI_PW_MAX)
		cli_wipe(pw->buf, sizeof pw->buf);
	/* Re-deliver what we caught, with the original handlers in place. */
	for (i = 0; i < NPROMPT_SIGNALS; i++) {
		int sig = prompt_signals[i];

		if (!caught[sig])
			continue;
		caught[sig] = 0;
		(void)kill(getpid(), sig);
		if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			restart = 1;
	}
	if (interrupted) {
		if (restart)
			return -1;
		cli_error(NULL, "password prompt interrupted");
		return CLI_EXIT_IO;
	}
	if (err) {
		cli_error("/dev/tty", "cannot read password: %s", strerror(err));
		return CLI_EXIT_IO;
	}
	if (len > CLI_PW_MAX) {
		cli_error(NULL, "password is longer than %d bytes", CLI_PW_MAX);
		return CLI_EXIT_USAGE;
	}
	pw->len = len;
	pw->have = 1;
	pw->from_tty = 1;
	return rc;
}

static int prompt_tty(const char *prompt, struct cli_pw *pw)
{
	int tty, rc;

	tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (tty < 0) {
		cli_error("/dev/tty", "cannot open the terminal to ask for a password: %s",
		          strerror(errno));
		return CLI_EXIT_IO;
	}
	do {
		pw->len = 0;
		pw->have = 0;
		rc = prompt_once(tty, prompt, pw);
	} while (rc == -1);
	close(tty);
	return rc;
}

int cli_pw_prompt(struct cli_pw *pw, const char *prompt)
{
	return prompt_tty(prompt ? prompt : "Password: ", pw);
}

int cli_pw_get(const struct cli_pw_src *src, struct cli_pw *pw,
               const char *prompt)
{
	pw->len = 0;
	pw->have = 0;
	pw->from_tty = 0;
	pw->is_default = 0;
	if (src->kind != CLI_PW_NONE)
		return read_source(src, pw);
	if (isatty(STDIN_FILENO))
		return cli_pw_prompt(pw, prompt);
	pw->have = 1;
	pw->is_default = 1;
	return 0;
}

/* Compares without an early exit (the length is not secret here). */
static int same(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char d = 0;
	size_t i;

	if (alen != blen)
		return 0;
	for (i = 0; i < alen; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

int cli_pw_get_new(const struct cli_pw_src *src, struct cli_pw *pw,
                   const char *what)
{
	struct cli_pw again;
	char p1[128], p2[128];
	int rc;

	pw->len = 0;
	pw->have = 0;
	pw->from_tty = 0;
	pw->is_default = 0;
	if (src->kind != CLI_PW_NONE)
		return read_source(src, pw);
	if (!isatty(STDIN_FILENO)) {
		cli_error(NULL, "no source for the %s: give a password option "
		          "(standard input is not a terminal)", what);
		return CLI_EXIT_USAGE;
	}
	snprintf(p1, sizeof p1, "Enter %s: ", what);
	snprintf(p2, sizeof p2, "Repeat %s: ", what);
	rc = prompt_tty(p1, pw);
	if (rc != 0)
		return rc;
	cli_pw_init(&again);
	rc = prompt_tty(p2, &again);
	if (rc == 0 && !same(pw->buf, pw->len, again.buf, again.len)) {
		cli_error(NULL, "the two entries of the %s do not match", what);
		rc = CLI_EXIT_USAGE;
	}
	cli_pw_clear(&again);
	if (rc != 0) {
		cli_wipe(pw->buf, sizeof pw->buf);
		pw->len = 0;
		pw->have = 0;
	}
	return rc;
}
