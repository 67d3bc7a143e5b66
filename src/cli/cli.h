/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h - shared declarations of the pdfstamp command-line tool.
 *
 * DESIGN NOTES
 *
 * The tool is thin: every PDF decision is made by libpdfstamp; the CLI
 * parses options, obtains passwords, prints results and maps library error
 * codes to exit statuses.
 *
 *  1. Commands live in a table (main.c, cli_cmds[]).  Adding a command is
 *     one row there plus a cmd_NAME.c defining its struct cli_cmd (name,
 *     summary, synopsis, description and option table, declared at the
 *     end of this header) and `static int cmd_NAME(int argc, char **argv)`,
 *     the file listed in Makefile.am.  A command receives argv with argv[0]
 *     = its own name, parses it with cli_parse() (opts.c: getopt_long driven
 *     by its option table, which is also its --help), and returns an exit
 *     status (CLI_EXIT_*), never calls exit() itself.  A command that
 *     works on files hands them to cli_each_file() (driver.c) with a
 *     struct cli_ops: its library call and its output; the loop, the
 *     context, passwords, --json failure lines and the exit status are
 *     the driver's.
 *  2. Exit statuses are a documented contract (pdfstamp(1) EXIT STATUS).
 *     With several FILE arguments the status is the worst (highest) one.
 *  3. Messages go to stderr as "pdfstamp: <what> (<file>)".  They never
 *     contain a password or key material.
 *  4. Passwords are never taken from argv (there is no such option; one
 *     that looks like it, --password or -p, is answered with a pointer to
 *     the password options by cli_bad_option()).  They live in a struct
 *     cli_pw, wiped by cli_pw_clear() on every path.
 *  5. Text that came from a PDF or from the command line is printed through
 *     cli_put_safe() (text) or the JSON writer (escaped), never raw, so a
 *     crafted file name or PDF string cannot drive the terminal.
 */
#ifndef PDFSTAMP_CLI_H
#define PDFSTAMP_CLI_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "pdfstamp.h"

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* ---- exit statuses (pdfstamp(1) EXIT STATUS) ---------------------------- */

enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_IO = 1,        /* I/O error or internal error */
	CLI_EXIT_USAGE = 2,     /* bad command line */
	CLI_EXIT_PASSWORD = 3,  /* wrong password */
	CLI_EXIT_FORMAT = 4,    /* malformed or unsupported input */
	CLI_EXIT_PERM = 5,      /* operation not permitted */
	CLI_EXIT_VIOLATION = 6  /* audit: a signature's policy is violated (a
	                         * finding, no library code) */
};

/* Maps a PDFSTAMP_E_* code (or 0) to an exit status. */
int cli_exit_status(int err);
/* The worse of two exit statuses (the higher one). */
int cli_worst(int a, int b);

struct option;
struct cli_run;

/* ---- option tables (opts.c) ----------------------------------------------- */

/*
 * Every command describes its options in one array of rows, ended by
 * CLI_END: the one source of its getopt_long table, of its --help and of
 * what pdfstamp(1) must document (tests/e2e/options.sh).  A row is an
 * option, a heading, a note or another table included at that place (the
 * password options, the output options of the writing commands).
 */
enum cli_row {
	CLI_ROW_END = 0,
	CLI_ROW_OPT,       /* an option */
	CLI_ROW_HEADING,   /* a heading, after an empty line */
	CLI_ROW_NOTE,      /* a paragraph under the options, indented */
	CLI_ROW_TEXT,      /* a paragraph of its own, after an empty line */
	CLI_ROW_INCLUDE    /* the rows of another table */
};

#define CLI_OPT_HIDDEN 0x1 /* parsed but neither in --help nor in pdfstamp(1) */

struct cli_opt {
	enum cli_row row;
	const char *name;            /* long name without "--"; NULL: -ID only */
	int id;                      /* getopt_long's value; a letter is also -ID */
	const char *arg;             /* the argument's name, NULL if it takes none */
	const char *help;            /* --help text, wrapped when printed; the
	                                text of a heading, note or paragraph */
	const char *const *values;   /* NULL-terminated, listed after the help */
	const struct cli_opt *table; /* CLI_ROW_INCLUDE */
	unsigned flags;              /* CLI_OPT_HIDDEN */
};

#define CLI_OPTION(n, i, a, h) \
	{ .row = CLI_ROW_OPT, .name = (n), .id = (i), .arg = (a), .help = (h) }
#define CLI_OPTION_LIST(n, i, a, h, v) \
	{ .row = CLI_ROW_OPT, .name = (n), .id = (i), .arg = (a), .help = (h), .values = (v) }
#define CLI_HIDDEN(n, i, a) \
	{ .row = CLI_ROW_OPT, .name = (n), .id = (i), .arg = (a), .flags = CLI_OPT_HIDDEN }
#define CLI_HEADING(t) { .row = CLI_ROW_HEADING, .help = (t) }
#define CLI_NOTE(t) { .row = CLI_ROW_NOTE, .help = (t) }
#define CLI_TEXT(t) { .row = CLI_ROW_TEXT, .help = (t) }
#define CLI_INCLUDE(t) { .row = CLI_ROW_INCLUDE, .table = (t) }
#define CLI_END { .row = CLI_ROW_END }

/* Rows every command has (their ids are the driver's, cli_run_option). */
#define CLI_OPTION_HELP CLI_OPTION("help", 'h', NULL, "show this help and exit")
#define CLI_OPTION_JSON CLI_OPTION("json", CLI_OPT_W_JSON, NULL, \
	"print one JSON object per FILE on one line each (keys: see JSON OUTPUT in pdfstamp(1))")

/* A command: its row of the command table and everything its --help says. */
struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv); /* NULL: not implemented yet */
	const char *summary;               /* one line for pdfstamp --help */
	const char *synopsis;              /* after "Usage: pdfstamp NAME "; a
	                                      '\n' starts a further line */
	const char *about;                 /* the description (lines, each
	                                      ending in '\n') */
	const struct cli_opt *opts;        /* the option table */
};

/* What a command's own options do: called by cli_parse for every option
 * but --help, ID its getopt_long value, OPTARG its argument or NULL.
 * Returns 0, an exit status (message printed), or -1 when the option is
 * one of the driver's (cli_run_option records it). */
typedef int (*cli_opt_fn)(void *arg, int id, char *optarg);

/* Parses ARGV (ARGV[0] is the command's name) with getopt_long by CMD's
 * table; FN (may be NULL) gets the command's own options, cli_run_option
 * the rest, into RUN.  Returns 0 when the command goes on (its operands
 * are ARGV + optind), else 1 with *STATUS the exit status: --help was
 * printed (0), or an error was reported (on stderr and, with --json, as
 * the failure line of every FILE named: cli_fail_early). */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli_run *run,
              cli_opt_fn fn, void *arg, int *status);
/* Builds the getopt_long table of ROWS (hidden options included) in LO
 * (room for NLO entries with the terminator) and the short option string,
 * PREFIX first, in SHORTS (NSHORTS bytes).  Returns 0, or -1 if either
 * is too small. */
int cli_opt_table(const struct cli_opt *rows, const char *prefix, struct option *lo,
                  size_t nlo, char *shorts, size_t nshorts);
/* Prints CMD's --help on stdout: usage, description, options. */
void cli_help(const struct cli_cmd *cmd);
/* Prints the rows of ROWS as --help does (pdfstamp --help). */
void cli_help_rows(const struct cli_opt *rows);

/* ---- messages (main.c) -------------------------------------------------- */

/* "pdfstamp: <fmt...> (<file>)" on stderr; FILE may be NULL. */
void cli_error(const char *file, const char *fmt, ...) CLI_PRINTF(2, 3);
/* The last message of cli_error, as "<what> (<file>)" or "<what>"; "" if
 * none yet (main.c note 5). */
const char *cli_last_error(void);
/* "pdfstamp: warning: <fmt...> (<file>)" on stderr; FILE may be NULL. */
void cli_warning(const char *file, const char *fmt, ...) CLI_PRINTF(2, 3);
/* A pdfstamp_warn_fn for pdfstamp_ctx_set_warn; USERDATA is a
 * struct cli_warn_target. */
struct cli_warn_target {
	const char *file;   /* current file, updated by the command */
	unsigned count;     /* warnings reported so far */
};
void cli_warn_cb(void *userdata, const char *message);
/* Reports a failed library call for FILE and returns its exit status.
 * Uses the context's message, falling back to pdfstamp_strerror(). */
int cli_lib_error(const pdfstamp_ctx *ctx, int err, const char *file);
/* Where a command's output for the current file goes: standard output,
 * or, in the driver's worker threads, the file's buffer, written whole
 * once the file is done (driver.c note 11).  Every command prints its
 * results there, never to stdout by name. */
FILE *cli_out(void);
/* Sets this thread's output stream (NULL: stdout again); the driver's. */
void cli_set_out(FILE *f);
/* Writes S to F with control characters and invalid UTF-8 shown as \xNN
 * (for text output and messages). */
void cli_put_safe(FILE *f, const char *s);
/* Reports a getopt failure ('?' or ':' from getopt_long with opterr = 0)
 * for CMD (NULL: the global options) and returns CLI_EXIT_USAGE.  ARG is
 * argv[optind - 1], OPT_CHAR optopt, OPTS the command's getopt_long table.
 * Only the option's name is shown, never a value given with "=" (which
 * could be a password typed by mistake).  An ambiguous prefix is reported
 * with its candidates; an option that looks like it would take a password
 * itself (--password, --pass, -p, ...) gets a pointer to the password
 * options and why argv is no place for a password. */
int cli_bad_option(const char *cmd, int ret, const char *arg, int opt_char,
                   const struct option *opts);
/* "Try 'pdfstamp CMD --help'." on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_hint(const char *cmd);
/* Flushes stdout and reports a write error (e.g. a full disk); returns
 * STATUS or CLI_EXIT_IO. */
int cli_finish_stdout(int status);

/* ---- small input files (readfile.c) -------------------------------------- */

/* Reads the regular file NAME whole (at most MAX bytes) into *BUF (*LEN
 * bytes; free it with cli_free_input).  SECRET: the buffer is locked and
 * wiped when freed.  0 or an exit status, message printed (readfile.c
 * note 2). */
int cli_read_input(const char *name, size_t max, int secret, uint8_t **buf, size_t *len);
/* Frees what cli_read_input gave (LEN as it returned), wiped if SECRET. */
void cli_free_input(uint8_t *buf, size_t len, int secret);

/* ---- passwords (passwd.c) ----------------------------------------------- */

#define CLI_PW_MAX 4096 /* bytes; longer input is an error */

enum cli_pw_kind {
	CLI_PW_NONE = 0,  /* not given: tty prompt, else the empty password */
	CLI_PW_FILE,      /* --password-file FILE ("-" = stdin) */
	CLI_PW_FD,        /* --password-fd N */
	CLI_PW_ENV        /* --password-env VAR */
};

/* Where a password comes from.  Zero-initialise; set from options with
 * cli_pw_src_set().  OPTNAME is the option's spelling for messages. */
struct cli_pw_src {
	enum cli_pw_kind kind;
	const char *arg;        /* file name or variable name */
	int fd;
	const char *optname;
};

/* A password.  Keep it in automatic or locked storage and always call
 * cli_pw_clear(); the buffer is wiped there. */
struct cli_pw {
	char buf[CLI_PW_MAX + 1];
	size_t len;
	int have;               /* buf holds a password (maybe empty) */
	int from_tty;           /* typed at the prompt */
	int is_default;         /* no source, not a tty: the empty password */
	int locked;             /* mlock() succeeded */
};

/* Long option ids for the standard password options (cli_pw_opts), which
 * cli_pw_option() records. */
enum {
	CLI_OPT_PASSWORD_FILE = 0x1000,
	CLI_OPT_PASSWORD_FD,
	CLI_OPT_PASSWORD_ENV,
	CLI_OPT_CMD_BASE = 0x1100  /* first id free for a command's own options */
};

/* The rows of the standard password options (--password-file, -fd, -env)
 * and their note; cli_pw_section: the same under the heading "Password
 * options" (rotate has a heading of its own). */
extern const struct cli_opt cli_pw_opts[];
extern const struct cli_opt cli_pw_section[];

/* Sets SRC from one option; only one source is allowed.  Returns 0 or
 * CLI_EXIT_USAGE (message printed). */
int cli_pw_src_set(struct cli_pw_src *src, enum cli_pw_kind kind,
                   const char *arg, const char *optname);
/* If OPT is one of the CLI_OPT_PASSWORD_* ids, records it in SRC and
 * returns 0 or CLI_EXIT_USAGE; returns -1 if OPT is not a password option. */
int cli_pw_option(struct cli_pw_src *src, int opt, const char *arg);

/* Prepares PW (zeroes it, tries to mlock it).  Call before cli_pw_get*. */
void cli_pw_init(struct cli_pw *pw);
/* Reads an existing password from SRC into PW.  With no source: prompts
 * with PROMPT on /dev/tty with echo off if stdin is a terminal, otherwise
 * yields the empty password (is_default set).  Returns 0, CLI_EXIT_USAGE
 * (a source that cannot be read, or a password that is too long) or
 * CLI_EXIT_IO (the terminal failed), message printed. */
int cli_pw_get(const struct cli_pw_src *src, struct cli_pw *pw,
               const char *prompt);
/* Prompts on the terminal regardless of stdin (used after the empty
 * password failed for a file opened without a source). */
int cli_pw_prompt(struct cli_pw *pw, const char *prompt);
/* Reads a new password: from SRC if given, else from the terminal, asked
 * twice and compared (WHAT names it, e.g. "new user password").  There is
 * no default: without a source and a terminal it is a usage error. */
int cli_pw_get_new(const struct cli_pw_src *src, struct cli_pw *pw,
                   const char *what);
/* Wipes and unlocks PW. */
void cli_pw_clear(struct cli_pw *pw);

/* ---- the recipient's key (keyopt.c) ------------------------------------- */

/* Long option ids of the key options (cli_key_opts), which cli_run_option
 * records in cli_run.key. */
enum {
	CLI_OPT_KEY = 0x1010,
	CLI_OPT_CERT,
	CLI_OPT_P12,
	CLI_OPT_KEY_PASSWORD_FILE,
	CLI_OPT_KEY_PASSWORD_FD,
	CLI_OPT_KEY_PASSWORD_ENV
};

/* The most bytes a --key, --cert or --p12 file may have. */
#define CLI_KEY_MAX ((size_t)1 << 20)

/* Where the key material comes from: file names (never the material
 * itself: keyopt.c note 1) and the key password's source. */
struct cli_key_src {
	const char *key, *cert, *p12;  /* --key, --cert, --p12, or NULL */
	struct cli_pw_src pw;          /* --key-password-file, -fd, -env */
	const char *cert_name;         /* the certificate's option, set before parsing
	                                  when it is not --cert (dss: --key-cert) */
};

/* The rows of the key options under their heading (every command that
 * authenticates files includes it after its password options); dss's,
 * whose --cert is its own, spell the certificate's --key-cert. */
extern const struct cli_opt cli_key_section[];
extern const struct cli_opt cli_key_section_dss[];

/* If OPT is one of the CLI_OPT_KEY* ids, records it in SRC and returns 0
 * or CLI_EXIT_USAGE (message printed); -1 if OPT is not a key option. */
int cli_key_option(struct cli_key_src *src, int opt, const char *arg);
/* 1 if --key, --cert or --p12 was given. */
int cli_key_given(const struct cli_key_src *src);

/* The key material, read once for all files (cli_each_file).  Keep it in
 * place (its password is mlock'ed there) and always call cli_key_clear. */
struct cli_key {
	const struct cli_key_src *src;
	uint8_t *key, *cert, *p12;     /* the files' bytes; key and p12 locked and
	                                  wiped when freed */
	size_t key_len, cert_len, p12_len;
	struct cli_pw pw;              /* the key password, once read or asked for */
	int asked;                     /* pw holds the answer of a prompt */
	int failed;                    /* exit status of a failed password intake */
	int lock_ok;                   /* lock was made */
	pthread_mutex_t lock;          /* the intake of pw (driver.c note 11) */
};

/* ---- JSON writer and UTF-8 (json.c) ------------------------------------- */

/* Decodes one UTF-8 sequence at S (NUL-terminated).  Returns its length
 * (1..4) and stores the code point, or returns 0 if the bytes at S are not
 * a valid, shortest-form sequence of a Unicode scalar value. */
int cli_utf8_next(const unsigned char *s, uint32_t *cp);

#define CLI_JSON_MAX_DEPTH 16

/* A tiny streaming writer for one-line JSON.  Nesting beyond
 * CLI_JSON_MAX_DEPTH or mismatched begin/end calls set `bad`. */
struct cli_json {
	FILE *f;
	int depth;
	int bad;
	unsigned char first[CLI_JSON_MAX_DEPTH]; /* no member written yet */
	unsigned char after_key;                 /* a key was just written */
};

void cli_json_obj_begin(struct cli_json *j);
void cli_json_obj_end(struct cli_json *j);
void cli_json_arr_begin(struct cli_json *j);
void cli_json_arr_end(struct cli_json *j);
void cli_json_key(struct cli_json *j, const char *key);
/* S is UTF-8; control characters and every non-ASCII character are
 * written as \uXXXX escapes (surrogate pairs above U+FFFF); each byte
 * that is not part of valid UTF-8 becomes U+FFFD. */
void cli_json_str(struct cli_json *j, const char *s);
void cli_json_int(struct cli_json *j, int64_t v);
void cli_json_bool(struct cli_json *j, int v);
void cli_json_null(struct cli_json *j);
/* "weak_encryption": the library's WEAK field (N bytes, e.g. "RC4 40-bit")
 * as a string, or null when it is empty (issue 13; info, stamp, meta). */
void cli_json_weak(struct cli_json *j, const char *weak, size_t n);
/* A finite number with DECIMALS digits after the point (0..9); NaN and
 * infinities (which JSON cannot carry) are written as null. */
void cli_json_double(struct cli_json *j, double v, int decimals);
/* The one shape of every command's --json lines (on stdout).  A success
 * starts {"file":FILE,"ok":true and a failure {"file":FILE,"ok":false,
 * "exit":STATUS,"error":MSG (MSG NULL or empty: "failed"); the caller may
 * add members, then ends the line with cli_json_line_end (which reports
 * an unbalanced structure, naming FILE). */
void cli_json_ok_begin(struct cli_json *j, const char *file);
void cli_json_fail_begin(struct cli_json *j, const char *file, int status,
                         const char *msg);
void cli_json_line_end(struct cli_json *j, const char *file);
/* A whole failure line: {"file":FILE,"ok":false,"exit":STATUS,"error":MSG}. */
void cli_json_failure(const char *file, int status, const char *msg);

/* ---- the per-file driver (driver.c) ------------------------------------- */

/*
 * Every command that works on FILE operands runs through cli_each_file():
 * it owns the context, the warnings, the password of the files (struct
 * cli_auth), the list of files (operands, --files-from), the output mode
 * of the writing commands (-o, -i), the --json failure line and the worst
 * exit status.  A command supplies a struct cli_ops (how its files are
 * opened, its library call and its output) and its own state (ARG).
 */

/* How the driver opens and authenticates each file. */
enum cli_open {
	CLI_OPEN_READ = 0, /* read-only; an encrypted file is authenticated, a
	                      password given for a plaintext one draws a
	                      warning (info, verify) */
	CLI_OPEN_UPDATE,   /* a writing command (-o OUT or --in-place, which
	                      opens with PDFSTAMP_OPEN_WRITE): an encrypted file,
	                      or any file when a password was given, is
	                      authenticated, so the library refuses to write in
	                      clear to what was meant to be encrypted (stamp,
	                      meta, rotate) */
	CLI_OPEN_PLAIN,    /* a writing command that never authenticates: an
	                      encrypted input reaches the library, which refuses
	                      it (encrypt) */
	CLI_OPEN_NONE      /* not opened: the call gets the name alone (recover) */
};

/* A bit of cli_ops.hints. */
#define CLI_HINT(h) (1u << (h))

/* Flags of struct cli_ops. */
#define CLI_FLUSH_ALWAYS 0x1  /* flush stdout after every file */
#define CLI_FLUSH_LINES 0x2   /* ... when --json or -v print a line per file */
#define CLI_BLANK_BETWEEN 0x4 /* without --json, an empty line between files */
#define CLI_BATCH 0x8         /* --jobs, --ordered, --shard, --ledger
                                 (cli_batch_opts) */

/* The command line the driver acts on.  Zero-initialise; the options of
 * cli_write_opts (and the password options) are recorded by
 * cli_run_option(). */
struct cli_run {
	const char *output;     /* -o OUT */
	int in_place;           /* -i */
	int json;               /* --json */
	int verbose;            /* -v (ignored with --json) */
	int force;              /* --force: PDFSTAMP_AUTH_FORCE */
	int allow_trailing;     /* --allow-trailing-bytes */
	int allow_identity;     /* --allow-identity */
	const char *date;       /* --date, NULL = "now" */
	const char *files_from; /* --files-from FILE ("-" = stdin) */
	int jobs;               /* --jobs N; 0: the number of online CPUs */
	int ordered;            /* --ordered */
	uint32_t shard_k, shard_n; /* --shard K/N (1 <= K <= N); N 0: all */
	const char *ledger;     /* --ledger FILE */
	int dry_run;            /* --dry-run (write_common.c note 4) */
	uint64_t fingerprint;   /* of the options that define the work (cli_parse:
	                           not the batch, output or password options) */
	struct cli_pw_src src;  /* password options */
	struct cli_key_src key; /* key options (keyopt.c) */
	int pw_stdin;           /* how many password options (the new ones and the
	                           key's too) read standard input: set by cli_parse */
};

/* One file, as the driver hands it to a command. */
struct cli_file {
	const char *name;       /* the FILE operand (or --files-from line) */
	const char *output;     /* writing commands: FILE itself with -i, or OUT */
	const struct cli_run *run;
	pdfstamp_ctx *ctx;      /* its message explains a failed call */
	pdfstamp_doc *doc;      /* opened, authenticated; NULL with CLI_OPEN_NONE */
	struct pdfstamp_write_opts wopts; /* writing commands: the output mode
	                                     and -o/-i/--allow-* as flags */
	void *res;              /* the command's result for this file: ops->res_size
	                           bytes, zeroed, then ops->res_init (if any) */
	int quiet;              /* no progress bar: several files at a time */
	size_t index;           /* its place in the list of files, from 0 */
	char why[256];          /* a failed call's own message, else empty: the
	                           context's is reported */
	int unchanged;          /* set by a writing command's call that succeeded without
	                           writing (stamp: every page already stamped): --ledger
	                           records it done without a sync */
};

/* What a command supplies.  Everything but call and output may be 0. */
struct cli_ops {
	const char *name;       /* "info", ...: messages, the help hint */
	enum cli_open open;
	unsigned open_flags;    /* PDFSTAMP_OPEN_* added when a file is opened
	                           read-only (audit: PDFSTAMP_OPEN_SALVAGE) */
	unsigned flags;         /* CLI_FLUSH_*, CLI_BLANK_BETWEEN */
	unsigned hints;         /* CLI_HINT(PDFSTAMP_HINT_*) of each library hint
	                           the command has an option for: the driver
	                           names the option after such a failure's
	                           message (driver.c note 4) */
	const char *prompt;     /* for the password (NULL: "Password: ") */
	int ask_first;          /* on a terminal, ask for the password before
	                           the first file (commands that ask for more
	                           passwords) */
	/* The command's own checks of the command line, before anything is
	 * read: run after the driver's checks of the output mode and of the
	 * operands (-o with -i, neither, no input) and before its others
	 * (-o -, --files-from), but not when -o came with a count of operands
	 * other than one (the driver's message comes first).  0 or an exit
	 * status (message printed). */
	int (*check)(void *arg);
	/* Called once before the first file, after the password was asked
	 * for (ask_first): 0 or an exit status (message printed). */
	int (*prepare)(void *arg);
	/* The library call on F: 0, or a PDFSTAMP_E_* code with the context's
	 * message set (the driver reports it and goes on with the next file). */
	int (*call)(struct cli_file *f, void *arg);
	/* Prints the result of a successful call (the document is closed by
	 * now) to cli_out(); returns the file's exit status. */
	int (*output)(const struct cli_file *f, void *arg);
	/* After a failed call (or the failed commit of its update), what the
	 * command has to say of F's result: with --json (J not NULL) members
	 * added to the failure line, else lines on stderr (-v).  May be 0. */
	void (*failed)(const struct cli_file *f, struct cli_json *j, void *arg);
	/* The per-file result (f->res): its size, and what prepares and
	 * releases it (either may be NULL).  ARG is shared by every file and,
	 * with --jobs, by threads: call and output only read it. */
	size_t res_size;
	void (*res_init)(void *res);
	void (*res_clear)(void *res);
};

/* Checks the command line (output mode, operands, --files-from), then
 * opens, authenticates and hands each file in turn to OPS; one file's
 * failure is reported (stderr and, with --json, the failure line) and does
 * not stop the others.  Returns the worst exit status, stdout flushed. */
int cli_each_file(const struct cli_ops *ops, struct cli_run *run, int nops,
                  char **operands, void *arg);
/* With RUN->json and a failure STATUS found before any file was opened (a
 * usage error, an input that cannot be read, ...): prints the failure line
 * of every FILE the command line names (OPERANDS, then the --files-from
 * list, read here quietly unless it is standard input and that is a
 * terminal or a password source), its "error" the message on stderr
 * (cli_last_error).  Returns STATUS. */
int cli_fail_early(const struct cli_run *run, int nops, char **operands, int status);
/* The key options' checks of RUN (keyopt.c note 2): 0 or CLI_EXIT_USAGE,
 * message printed.  Run by cli_each_file with its own checks. */
int cli_key_check(const struct cli_run *run);
/* Prepares K for SRC and reads its files.  0 or an exit status (message
 * printed: a file that cannot be read is a usage error). */
int cli_key_load(struct cli_key *k, const struct cli_key_src *src);
/* Authenticates DOC with K (pdfstamp_doc_auth_key): 0, or an exit status
 * with *MSG set to a message, or NULL when the context's is the one. */
int cli_key_auth(struct cli_key *k, pdfstamp_doc *doc, unsigned flags, const char **msg);
void cli_key_clear(struct cli_key *k);
/* Starts F's --json success line: {"file":...,"ok":true and, for a
 * writing command, "output". */
void cli_file_json_begin(struct cli_json *j, const struct cli_file *f);

/* ---- --ledger (ledger.c) ---------------------------------------------------- */

struct cli_ledger;
/* One file's dealings with the ledger, on the driver's stack. */
struct cli_ledger_call {
	struct cli_ledger *l;
	const struct cli_file *f;
	int recorded;           /* its done line is written and synced */
};
/* Opens RUN->ledger and reads the lines of RUN's fingerprint; WRITES: the
 * command writes files.  0 or an exit status (message printed). */
int cli_ledger_open(struct cli_ledger **l, const struct cli_run *run, int writes);
void cli_ledger_close(struct cli_ledger *l);
/* Before NAME is opened: 1 if it is not to be done (skipped, its line
 * printed, *STATUS 0; or refused, reported, *STATUS its exit status),
 * else 0 (ledger.c notes 2 and 3). */
int cli_ledger_skip(struct cli_ledger *l, pdfstamp_ctx *ctx, const struct cli_run *run,
                    const char *name, int *status);
/* After F's output mode is set: the intent line and the durable hook of
 * an in-place update.  0 or an exit status. */
int cli_ledger_begin(struct cli_ledger *l, struct cli_ledger_call *c, struct cli_file *f);
/* After F's call and output (exit status STATUS): its line, unless the
 * hook wrote it.  0 or -1 (message printed). */
int cli_ledger_end(struct cli_ledger_call *c, int status);

/* ---- progress bar (progress.c) ------------------------------------------ */

/*
 * A one-line bar on stderr, redrawn with \r: percent, MB done and total,
 * MB/s, time left.  Only when stderr is a terminal, the work is larger than
 * CLI_PROGRESS_MIN_BYTES and the command was not given --quiet; redrawn at
 * most about ten times a second; cli_progress_end() clears the line.
 */
#define CLI_PROGRESS_MIN_BYTES INT64_C(4000000)

struct cli_progress {
	int enabled;            /* may draw at all */
	int shown;              /* a bar is on the screen */
	const char *label;      /* e.g. "rotating" (ASCII) */
	double t0, last;        /* start, last redraw (monotonic seconds) */
	int64_t done;           /* highest value reported */
	int width;              /* columns drawn last time */
};

void cli_progress_init(struct cli_progress *p, const char *label, int quiet);
/* A pdfstamp_progress_fn; USERDATA is a struct cli_progress. */
void cli_progress_cb(void *userdata, int64_t done, int64_t total);
/* Clears the bar (call before printing anything else to stderr). */
void cli_progress_end(struct cli_progress *p);

/* ---- options of the writing commands (write_common.c) ------------------- */

/*
 * stamp, meta and dss include cli_write_opts in their option table: the
 * output mode (-o, -i), --files-from, --json, -v, --allow-trailing-bytes,
 * --allow-identity, --force and --help; each has its own --date row.
 * rotate and encrypt have rows of their own with the same ids.
 */
enum {
	CLI_OPT_W_JSON = 0x1080,
	CLI_OPT_W_FILES_FROM,
	CLI_OPT_W_ALLOW_TRAILING,
	CLI_OPT_W_FORCE,
	CLI_OPT_W_DATE,
	CLI_OPT_W_ALLOW_IDENTITY,
	CLI_OPT_B_JOBS,
	CLI_OPT_B_ORDERED,
	CLI_OPT_B_SHARD,
	CLI_OPT_B_LEDGER,
	CLI_OPT_W_DRY_RUN
};

extern const struct cli_opt cli_write_opts[];
/* The options of work over many files, which cli_run_option records:
 * --files-from, --jobs, --ordered, --shard, --ledger (stamp, meta, dss,
 * info, verify, audit; CLI_BATCH). */
extern const struct cli_opt cli_batch_opts[];

/* If OPT is one of the driver's options ('o', 'i', 'v', CLI_OPT_W_*, the
 * password options), records it in RUN and returns 0 (or CLI_EXIT_USAGE
 * with a message); returns -1 if OPT is not one of them. */
int cli_run_option(struct cli_run *run, int opt, const char *arg);
/* The per-file result of stamp, meta and dss (struct cli_ops): a struct
 * pdfstamp_result, PDFSTAMP_RESULT_INIT, released by pdfstamp_result_clear. */
void cli_update_res_init(void *res);
void cli_update_res_clear(void *res);
#define CLI_UPDATE_RES .res_size = sizeof(struct pdfstamp_result), \
	.res_init = cli_update_res_init, .res_clear = cli_update_res_clear
/* The members of an incremental update's --json success line after
 * "output": base_length, xref_offset, bytes_appended, objects. */
void cli_json_update(struct cli_json *j, const struct pdfstamp_result *res);
/* --dry-run (write_common.c note 4): the text line of an incremental
 * update that was only built, RES's objects called WHAT ("annotation");
 * returns CLI_EXIT_OK. */
int cli_dry_run_update(const struct cli_file *f, const struct pdfstamp_result *res,
                       const char *what);
/* The dry-run members of a --json success line ("dry_run":true and
 * "journal_pending"); nothing without --dry-run. */
void cli_json_dry_run(struct cli_json *j, const struct cli_file *f);

/* What a fetching call got (fetched.c): the file's list, filled by
 * cli_fetched_add as the library's pdfstamp_fetch_fn (userdata: the
 * list), printed as the JSON "fetched" array or as --verbose lines. */
struct cli_fetch_ent {
	char *url, *error;
	const char *what;             /* a literal of the library's */
	long status;
	size_t bytes;
	int from_cache;
};
struct cli_fetched {
	struct cli_fetch_ent *v;
	size_t n;
	int oom;                      /* an entry was lost: the list is incomplete */
};
void cli_fetched_add(void *list, const struct pdfstamp_fetch_event *ev);
void cli_fetched_clear(struct cli_fetched *list);
void cli_fetched_json(struct cli_json *j, const struct cli_fetched *list);
void cli_fetched_text(const char *name, const struct cli_fetched *list);

/* Strict, locale-independent number parsing for option values.  Each
 * returns 0, or -1 if S is not entirely one number of the kind asked
 * (no leading space, no hex, no inf/nan; overflow is an error). */
int cli_parse_double(const char *s, double *out);
/* Exactly N such numbers separated by single commas ("1,2.5,3"). */
int cli_parse_doubles(const char *s, double *out, int n);
/* A decimal integer >= 0 without sign. */
int cli_parse_int64(const char *s, int64_t *out);
/* Returns 1 if S is valid UTF-8 (cli_utf8_next on every sequence). */
int cli_utf8_valid(const char *s);

/* ---- commands ----------------------------------------------------------- */

extern const struct cli_cmd cli_cmd_info, cli_cmd_stamp, cli_cmd_meta, cli_cmd_dss,
	cli_cmd_rotate, cli_cmd_encrypt, cli_cmd_verify, cli_cmd_audit, cli_cmd_recover,
	cli_cmd_stamps, cli_cmd_unstamp, cli_cmd_timestamp;

#endif
