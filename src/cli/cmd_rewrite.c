/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_rewrite.c - `pdfstamp rotate` and `pdfstamp encrypt`: a full rewrite
 * of each FILE with a new random file key and new passwords (AES-256, R6).
 *
 * DESIGN NOTES
 *
 *  1. Both commands are one set of options and one library call
 *     (pdfstamp_rotate or pdfstamp_encrypt) with its statistics; the
 *     output mode, the loop over files, the current password and the
 *     --json framing are the driver's (driver.c, struct cli_ops: rotate
 *     authenticates, encrypt does not).  Their option tables share every
 *     row but the current password's three and the help of --permissions
 *     and --force (rewrite_output, rewrite_tail).
 *  2. Passwords.  rotate authenticates with the current password (the
 *     standard options; the library wants the owner password, or the user
 *     password when the owner password is empty).  The new user and owner
 *     passwords have their own three sources each
 *     (--new-user-password-file/-fd/-env, --new-owner-password-...);
 *     without one they are asked for twice on the terminal, and without a
 *     terminal that is a usage error: there is no default new password.
 *     An empty new password is accepted when it is given explicitly.
 *     On a terminal the order of the prompts is: current password, new
 *     user password (twice), new owner password (twice), all before the
 *     first file is touched.
 *  3. Two sources that would read the same descriptor (standard input via
 *     '-' or fd 0, or the same fd N) or consume the same variable are a
 *     usage error, decided before anything is read.
 *  4. encrypt does not authenticate: an encrypted input reaches the
 *     library, which refuses it (exit 2) with a pointer to rotate.
 *  5. The passwords live in struct cli_pw buffers (mlock'ed, wiped on
 *     every path); the library copies nothing it does not wipe.
 *  6. The progress bar (progress.c) is the library's progress callback;
 *     it is cleared before any message is printed after the call.
 *  7. --json success line: {"file","ok","output","objects","streams",
 *     "strings","payload_bytes","crypto_seconds","decrypt_seconds",
 *     "encrypt_seconds","seconds","bytes_written","jobs"}; failure lines
 *     are the driver's.
 *  8. --dry-run: PDFSTAMP_WRITE_DRY_RUN (dryrun.c note 2): the whole pass
 *     runs with the output discarded, so the figures are the real run's
 *     and bytes_written the size the new file would have; nothing is
 *     created, locked or renamed (the driver opens read-only:
 *     write_common.c note 4).  The text line is printed with or without
 *     -v; the --json line has "dry_run":true and "journal_pending".
 *  9. Certificates: --recipient CERT (repeatable; read whole when parsed,
 *     at most 1 MB each) and --recipient-permissions LIST (the --recipient
 *     before it) become the rewrite options' recipients: the output is
 *     encrypted to them (rewrite.c note 15) and no new password is read
 *     (giving one too is a usage error).  rotate of a FILE encrypted to
 *     certificates needs --recipient or, for passwords, --to-password:
 *     without either it is refused (exit 2) before anything is written.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_JOBS 64

enum {
	OPT_NEW_USER_FILE = CLI_OPT_CMD_BASE,
	OPT_NEW_USER_FD,
	OPT_NEW_USER_ENV,
	OPT_NEW_OWNER_FILE,
	OPT_NEW_OWNER_FD,
	OPT_NEW_OWNER_ENV,
	OPT_PERMISSIONS,
	OPT_RECIPIENT,
	OPT_RECIPIENT_PERMS,
	OPT_TO_PASSWORD
};

#define MAX_RECIPIENTS 256
#define MAX_CERT_BYTES ((size_t)1 << 20)

struct rewrite_cmd {
	int encrypt;                 /* encrypt, else rotate */
	const char *name;            /* "rotate" or "encrypt" */
	struct cli_run w;
	struct cli_pw_src nu_src, no_src;
	struct cli_pw nu, no;        /* the new user and owner passwords */
	int quiet;
	int jobs;                    /* 0 = the library's default */
	int set_permissions;
	int64_t permissions;
	struct pdfstamp_rewrite_stats st; /* of the last file */
	struct pdfstamp_recipient recips[MAX_RECIPIENTS]; /* note 9 */
	size_t nrecips;
	int to_password;             /* rotate --to-password */
};

/* ---- the option tables ---------------------------------------------------------- */

static const struct cli_opt rewrite_output[] = {
	CLI_HEADING("Output (exactly one of -o and --in-place):"),
	CLI_OPTION("output", 'o', "OUT",
	           "write the new file to OUT (only with one FILE); '-' writes it to standard "
	           "output (not a terminal)"),
	CLI_OPTION("in-place", 'i', NULL,
	           "replace each FILE (required with several FILEs); its mode bits, and owner "
	           "and group where permitted, are kept; a symbolic link is followed (the file "
	           "it leads to is replaced, the link stays); a file with several hard links is "
	           "refused (exit 4)"),
	CLI_HEADING("New passwords (never taken from the command line; each needs one source, "
	            "else it is asked for twice on the terminal; without a terminal that is a "
	            "usage error):"),
	CLI_OPTION("new-user-password-file", OPT_NEW_USER_FILE, "FILE",
	           "the new user password: the first line of FILE ('-' = stdin)"),
	CLI_OPTION("new-user-password-fd", OPT_NEW_USER_FD, "N",
	           "the new user password: the first line read from descriptor N"),
	CLI_OPTION("new-user-password-env", OPT_NEW_USER_ENV, "VAR",
	           "the new user password: the value of VAR (then unset)"),
	CLI_OPTION("new-owner-password-file", OPT_NEW_OWNER_FILE, "FILE",
	           "the same for the new owner password"),
	CLI_OPTION("new-owner-password-fd", OPT_NEW_OWNER_FD, "N",
	           "the same for the new owner password"),
	CLI_OPTION("new-owner-password-env", OPT_NEW_OWNER_ENV, "VAR",
	           "the same for the new owner password"),
	CLI_NOTE("An empty password is accepted when given explicitly (an empty line)."),
	CLI_HEADING("Or to certificates (the public-key handler, adbe.pkcs7.s5 with AES-256):"),
	CLI_OPTION("recipient", OPT_RECIPIENT, "CERT",
	           "encrypt to the X.509 certificate CERT (PEM or DER, an RSA key), instead of "
	           "to passwords; repeat for each recipient (at most 256)"),
	CLI_OPTION("recipient-permissions", OPT_RECIPIENT_PERMS, "LIST",
	           "the permissions of the --recipient just before (default: --permissions, "
	           "else those in force)"),
	CLI_HEADING("Other options:"),
	CLI_END
};

#define PERMISSIONS_HELP \
	"the permissions of the new file: a comma list of print, modify, copy, annotate, " \
	"fill-forms, extract, assemble, print-high, or 'all' or 'none'"
#define JOBS_HELP "encrypt with N threads (default: the number of CPUs)"
#define FORCE_HELP "rewrite signed or append-only files (their signatures no longer validate)"

static const struct cli_opt rewrite_tail[] = {
	CLI_OPTION("quiet", 'q', NULL,
	           "no progress bar (it is shown only on a terminal, for files over 4 MB)"),
	CLI_OPTION_JSON,
	CLI_OPTION("verbose", 'v', NULL, "print one line per written FILE (not with --json)"),
	CLI_OPTION("dry-run", CLI_OPT_W_DRY_RUN, NULL,
	           "authenticate, run every check and the whole re-encryption with the output "
	           "discarded, print the size the new file would have, and create, lock or "
	           "replace nothing"),
	CLI_OPTION_HELP,
	CLI_END
};

/* The order of the rows keeps that of the getopt tables before issue 30
 * for options that share a first letter (opts.c note 2): --jobs before
 * --json, --permissions before --password-*, the new user password's
 * options before the new owner password's. */
static const struct cli_opt rotate_opts[] = {
	CLI_INCLUDE(rewrite_output),
	CLI_OPTION("to-password", OPT_TO_PASSWORD, NULL,
	           "a FILE encrypted to certificates gets the new passwords (AES-256, R6); "
	           "needed for such a FILE without --recipient"),
	CLI_OPTION("permissions", OPT_PERMISSIONS, "LIST",
	           PERMISSIONS_HELP " (default: keep those of FILE)"),
	CLI_OPTION("jobs", 'j', "N", JOBS_HELP),
	CLI_OPTION("force", CLI_OPT_W_FORCE, NULL,
	           FORCE_HELP "; also accept a /Perms entry that does not match /P (the new "
	           "file keeps the permissions /Perms records, not those of /P)"),
	CLI_INCLUDE(rewrite_tail),
	CLI_HEADING("Current password (never taken from the command line):"),
	CLI_INCLUDE(cli_pw_opts),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static const struct cli_opt encrypt_opts[] = {
	CLI_INCLUDE(rewrite_output),
	CLI_OPTION("permissions", OPT_PERMISSIONS, "LIST", PERMISSIONS_HELP " (default: all)"),
	CLI_OPTION("jobs", 'j', "N", JOBS_HELP),
	CLI_OPTION("force", CLI_OPT_W_FORCE, NULL, FORCE_HELP),
	CLI_INCLUDE(rewrite_tail),
	CLI_END
};

#define REWRITE_ABOUT \
	"The output is written to a temporary file in the target's directory,\n" \
	"synced, re-opened with the new owner password and checked (every object,\n" \
	"the object numbers in use, the page tree), then renamed over the target;\n" \
	"on any failure the target is left as it was.  A full rewrite invalidates\n" \
	"every signature, so signed files and files marked append-only are\n" \
	"refused (exit 5) without --force.\n"

static int cmd_rotate(int argc, char **argv);
static int cmd_encrypt(int argc, char **argv);

const struct cli_cmd cli_cmd_rotate = {
	.name = "rotate",
	.run = cmd_rotate,
	.summary = "rotate passwords and the file key with a full rewrite",
	.synopsis = "[options] [password options]\n(-o OUT FILE | --in-place FILE...)",
	.about =
	"Replaces the passwords and the file key of each encrypted FILE: a new\n"
	"random file key, new user and owner passwords, every string and stream\n"
	"re-encrypted (stream data is not recompressed), written as one clean\n"
	"revision; old revisions, which the old passwords would still open, are\n"
	"dropped.  Needs the owner password (or the user password when the owner\n"
	"password is empty).  The output is always AES-256 revision 6: an R5\n"
	"input is upgraded, and so is an RC4 or AES-128 one (R2 to R4), which\n"
	"is how a file leaves a weak handler.  The permissions are kept unless\n"
	"--permissions is given.\n"
	"\n"
	"With --recipient the new file is encrypted to certificates instead\n"
	"(/Adobe.PubSec, adbe.pkcs7.s5, AES-256): a new seed and file key, one\n"
	"envelope per recipient.  A FILE encrypted to certificates is opened with\n"
	"a recipient's key (--key and --cert, or --p12) granted every permission,\n"
	"and gets new recipients (--recipient) or passwords (--to-password).\n"
	"\n"
	REWRITE_ABOUT,
	.opts = rotate_opts
};

const struct cli_cmd cli_cmd_encrypt = {
	.name = "encrypt",
	.run = cmd_encrypt,
	.summary = "encrypt a plaintext PDF with AES-256 (R6)",
	.synopsis = "[options] (-o OUT FILE | --in-place FILE...)",
	.about =
	"Encrypts each plaintext FILE with AES-256 (security handler revision 6):\n"
	"a new random file key, the new user and owner passwords, every string\n"
	"and stream encrypted, written as one clean revision.  An encrypted FILE\n"
	"is refused; use 'pdfstamp rotate' to change its passwords.  With\n"
	"--recipient the file is encrypted to certificates instead (/Adobe.PubSec,\n"
	"adbe.pkcs7.s5, AES-256), one envelope per recipient.\n"
	"\n"
	REWRITE_ABOUT,
	.opts = encrypt_opts
};

static int bad_value(const struct rewrite_cmd *c, const char *opt, const char *what)
{
	cli_error(NULL, "%s: %s", opt, what);
	return cli_usage_hint(c->name);
}

/* ---- password sources ----------------------------------------------------------- */

/* Describes what SRC reads for the conflict check: *FD is the descriptor
 * it reads (-1: none, i.e. a named file), *VAR the variable. */
static void src_reads(const struct cli_pw_src *src, int *fd, const char **var)
{
	*fd = -1;
	*var = NULL;
	if (src->kind == CLI_PW_FILE && strcmp(src->arg, "-") == 0)
		*fd = STDIN_FILENO;
	else if (src->kind == CLI_PW_FD)
		*fd = src->fd;
	else if (src->kind == CLI_PW_ENV)
		*var = src->arg;
}

/* Note 3 (cli_ops.check).  Returns 0 or CLI_EXIT_USAGE. */
static int check_sources(void *arg)
{
	const struct rewrite_cmd *c = arg;
	const struct cli_pw_src *s[3] = { &c->w.src, &c->nu_src, &c->no_src };
	int i, k, fi, fk;
	const char *vi, *vk;

	for (i = 0; i < 3; i++) {
		if (s[i]->kind == CLI_PW_NONE)
			continue;
		src_reads(s[i], &fi, &vi);
		for (k = i + 1; k < 3; k++) {
			if (s[k]->kind == CLI_PW_NONE)
				continue;
			src_reads(s[k], &fk, &vk);
			if ((fi >= 0 && fi == fk) || (vi && vk && strcmp(vi, vk) == 0)) {
				cli_error(NULL, "%s and %s would read the same %s; give each "
				          "password its own source", s[i]->optname,
				          s[k]->optname, vi ? "variable" : "input");
				return cli_usage_hint(c->name);
			}
		}
	}
	if (c->nrecips > 0) {   /* note 9 */
		if (c->nu_src.kind != CLI_PW_NONE || c->no_src.kind != CLI_PW_NONE ||
		    c->to_password) {
			cli_error(NULL, "--recipient encrypts to certificates: no new password "
			          "(--new-*-password-*, --to-password) goes with it");
			return cli_usage_hint(c->name);
		}
		return 0;
	}
	if ((c->nu_src.kind == CLI_PW_NONE || c->no_src.kind == CLI_PW_NONE) &&
	    !isatty(STDIN_FILENO)) {
		cli_error(NULL, "no source for the new %s password: give --new-%s-password-file, "
		          "-fd or -env (standard input is not a terminal)",
		          c->nu_src.kind == CLI_PW_NONE ? "user" : "owner",
		          c->nu_src.kind == CLI_PW_NONE ? "user" : "owner");
		return cli_usage_hint(c->name);
	}
	return 0;
}

/* cli_ops.prepare: reads the new passwords (after the current one was
 * asked for, before the first file). */
static int read_new_passwords(void *arg)
{
	struct rewrite_cmd *c = arg;
	int rc;

	if (c->nrecips > 0)
		return 0;
	rc = cli_pw_get_new(&c->nu_src, &c->nu, "new user password");
	if (rc == 0)
		rc = cli_pw_get_new(&c->no_src, &c->no, "new owner password");
	if (rc != 0)
		return rc;
	if (c->no.len == 0)
		cli_warning(NULL, "the new owner password is empty: anyone can open "
		            "the file with full rights");
	else if (c->no.len == c->nu.len && memcmp(c->no.buf, c->nu.buf, c->nu.len) == 0)
		cli_warning(NULL, "the new owner password is the user password: "
		            "whoever opens the file has full rights");
	return 0;
}

/* ---- the library call and its output ------------------------------------------- */

static int call_rewrite(struct cli_file *f, void *arg)
{
	struct rewrite_cmd *c = arg;
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct cli_progress bar;
	const char *h;
	int rc;

	memset(&c->st, 0, sizeof c->st);
	c->st.version = PDFSTAMP_REWRITE_STATS_VERSION;
	o.output = f->wopts.output;
	o.flags = f->wopts.flags &
	          (PDFSTAMP_WRITE_IN_PLACE | PDFSTAMP_WRITE_TO_FD | PDFSTAMP_WRITE_DRY_RUN);
	o.output_fd = f->wopts.output_fd;
	if (c->w.force)
		o.flags |= PDFSTAMP_REWRITE_FORCE;
	if (c->nrecips == 0) {   /* note 9: recipients or passwords */
		o.user_password = c->nu.buf;
		o.user_len = c->nu.len;
		o.owner_password = c->no.buf;
		o.owner_len = c->no.len;
	}
	o.set_permissions = c->set_permissions;
	o.permissions = c->permissions;
	o.jobs = c->jobs;
	o.recipients = c->recips;
	o.nrecipients = c->nrecips;
	if (!c->encrypt && c->nrecips == 0 && !c->to_password &&
	    (h = pdfstamp_doc_security_handler(f->doc)) && strcmp(h, "Adobe.PubSec") == 0) {
		snprintf(f->why, sizeof f->why, "the file is encrypted to certificates: give "
		         "--recipient CERT (new recipients) or --to-password (new passwords)");
		return PDFSTAMP_E_USAGE;
	}
	cli_progress_init(&bar, c->encrypt ? "encrypting" : "rotating", c->quiet);
	o.progress = cli_progress_cb;
	o.progress_ud = &bar;
	if (c->encrypt)
		rc = pdfstamp_encrypt(f->doc, &o, &c->st);
	else
		rc = pdfstamp_rotate(f->doc, &o, &c->st);
	cli_progress_end(&bar);
	return rc;
}

static void json_rewrite(const struct cli_file *f, const struct pdfstamp_rewrite_stats *s)
{
	struct cli_json j;

	cli_file_json_begin(&j, f);
	cli_json_key(&j, "objects");
	cli_json_int(&j, s->objects);
	cli_json_key(&j, "streams");
	cli_json_int(&j, s->streams);
	cli_json_key(&j, "strings");
	cli_json_int(&j, s->strings);
	cli_json_key(&j, "payload_bytes");
	cli_json_int(&j, s->payload_bytes);
	cli_json_key(&j, "crypto_seconds");
	cli_json_double(&j, s->crypto_seconds, 6);
	cli_json_key(&j, "decrypt_seconds");
	cli_json_double(&j, s->decrypt_seconds, 6);
	cli_json_key(&j, "encrypt_seconds");
	cli_json_double(&j, s->encrypt_seconds, 6);
	cli_json_key(&j, "seconds");
	cli_json_double(&j, s->seconds, 6);
	cli_json_key(&j, "bytes_written");
	cli_json_int(&j, s->bytes_written);
	cli_json_key(&j, "jobs");
	cli_json_int(&j, s->jobs);
	cli_json_line_end(&j, f->name);
}

static int output_rewrite(const struct cli_file *f, void *arg)
{
	const struct rewrite_cmd *c = arg;
	const struct pdfstamp_rewrite_stats *s = &c->st;

	if (f->run->json) {
		json_rewrite(f, s);
		return CLI_EXIT_OK;
	}
	if (f->run->dry_run) {
		fputs("dry run: would ", cli_out());
		if (f->run->in_place) {
			fputs("replace ", cli_out());
			cli_put_safe(cli_out(), f->name);
			fputs(" with", cli_out());
		} else {
			fputs("write", cli_out());
		}
		fprintf(cli_out(), " %" PRId64 " bytes (%" PRId64 " objects, %" PRId64 " streams, "
		        "%" PRId64 " strings)", s->bytes_written, s->objects, s->streams,
		        s->strings);
		if (!f->run->in_place) {
			fputs(" to ", cli_out());
			if (strcmp(f->run->output, "-") == 0)
				fputs("standard output", cli_out());
			else
				cli_put_safe(cli_out(), f->run->output);
		}
		fputs("; nothing written\n", cli_out());
		return CLI_EXIT_OK;
	}
	if (!f->run->verbose)
		return CLI_EXIT_OK;
	fputs(c->encrypt ? "encrypted " : "rotated ", cli_out());
	cli_put_safe(cli_out(), f->name);
	if (!f->run->in_place) {
		fputs(" -> ", cli_out());
		cli_put_safe(cli_out(), f->run->output);
	}
	fprintf(cli_out(), ": %" PRId64 " objects, %" PRId64 " streams, %" PRId64 " strings; "
	       "%.1f MB written in %.2f s",
	       s->objects, s->streams, s->strings, (double)s->bytes_written / 1e6,
	       s->seconds);
	if (s->encrypt_seconds > 0)
		fprintf(cli_out(), " (AES encrypt %.1f MB/s, %s; %d job%s)",
		       (double)s->payload_bytes / 1e6 / s->encrypt_seconds, pdfstamp_aes_engine(),
		       s->jobs, s->jobs == 1 ? "" : "s");
	fputc('\n', cli_out());
	return CLI_EXIT_OK;
}

static const struct cli_ops rotate_ops = {
	.name = "rotate",
	.open = CLI_OPEN_UPDATE,
	.flags = CLI_FLUSH_LINES,
	.hints = CLI_HINT(PDFSTAMP_HINT_REWRITE_FORCE) | CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE),
	.prompt = "Current password: ",
	.ask_first = 1,
	.check = check_sources,
	.prepare = read_new_passwords,
	.call = call_rewrite,
	.output = output_rewrite
};

static const struct cli_ops encrypt_ops = {
	.name = "encrypt",
	.open = CLI_OPEN_PLAIN,  /* note 4 */
	.flags = CLI_FLUSH_LINES,
	.hints = CLI_HINT(PDFSTAMP_HINT_REWRITE_FORCE),
	.check = check_sources,
	.prepare = read_new_passwords,
	.call = call_rewrite,
	.output = output_rewrite
};

/* ---- command line ------------------------------------------------------------------ */

/* LIST into *P for option OPT; --permissions also sets set_permissions. */
static int parse_permissions(struct rewrite_cmd *c, const char *list, int64_t *p,
                             const char *opt)
{
	pdfstamp_ctx *ctx = NULL;
	int rc;

	if (!*list)
		return bad_value(c, opt, "the list is empty (use 'none' for no permissions)");
	rc = pdfstamp_ctx_new(&ctx);
	if (rc != 0)
		return cli_lib_error(NULL, rc, NULL);
	rc = pdfstamp_parse_permissions(ctx, list, p);
	if (rc != 0) {
		rc = bad_value(c, opt, pdfstamp_ctx_errmsg(ctx));
		pdfstamp_ctx_free(ctx);
		return rc;
	}
	pdfstamp_ctx_free(ctx);
	if (p == &c->permissions)
		c->set_permissions = 1;
	return 0;
}

static int rewrite_option(void *arg, int id, char *optarg)
{
	struct rewrite_cmd *c = arg;
	int64_t jobs;

	switch (id) {
	case 'q':
		c->quiet = 1;
		return 0;
	case 'j':
		if (cli_parse_int64(optarg, &jobs) != 0 || jobs < 1 || jobs > MAX_JOBS)
			return bad_value(c, "-j/--jobs", "expected a number of threads "
			                 "from 1 to 64");
		c->jobs = (int)jobs;
		return 0;
	case OPT_PERMISSIONS:
		return parse_permissions(c, optarg, &c->permissions, "--permissions");
	case OPT_RECIPIENT: {
		uint8_t *buf;
		size_t len;
		int rc;
		if (c->nrecips == MAX_RECIPIENTS)
			return bad_value(c, "--recipient", "at most 256 recipients");
		if ((rc = cli_read_input(optarg, MAX_CERT_BYTES, 0, &buf, &len)) != 0)
			return rc;
		c->recips[c->nrecips].cert = buf;
		c->recips[c->nrecips++].cert_len = len;
		return 0;
	}
	case OPT_RECIPIENT_PERMS:
		if (c->nrecips == 0)
			return bad_value(c, "--recipient-permissions",
			                 "give it after the --recipient it applies to");
		if (c->recips[c->nrecips - 1].set_permissions)
			return bad_value(c, "--recipient-permissions",
			                 "given twice for one --recipient");
		c->recips[c->nrecips - 1].set_permissions = 1;
		return parse_permissions(c, optarg, &c->recips[c->nrecips - 1].permissions,
		                         "--recipient-permissions");
	case OPT_TO_PASSWORD:
		c->to_password = 1;
		return 0;
	case OPT_NEW_USER_FILE:
		return cli_pw_src_set(&c->nu_src, CLI_PW_FILE, optarg, "--new-user-password-file");
	case OPT_NEW_USER_FD:
		return cli_pw_src_set(&c->nu_src, CLI_PW_FD, optarg, "--new-user-password-fd");
	case OPT_NEW_USER_ENV:
		return cli_pw_src_set(&c->nu_src, CLI_PW_ENV, optarg, "--new-user-password-env");
	case OPT_NEW_OWNER_FILE:
		return cli_pw_src_set(&c->no_src, CLI_PW_FILE, optarg, "--new-owner-password-file");
	case OPT_NEW_OWNER_FD:
		return cli_pw_src_set(&c->no_src, CLI_PW_FD, optarg, "--new-owner-password-fd");
	case OPT_NEW_OWNER_ENV:
		return cli_pw_src_set(&c->no_src, CLI_PW_ENV, optarg, "--new-owner-password-env");
	default:
		return -1;
	}
}

static int run_cmd(struct rewrite_cmd *c, int argc, char **argv)
{
	int rc;

	if (cli_parse(c->encrypt ? &cli_cmd_encrypt : &cli_cmd_rotate, argc, argv, &c->w,
	              rewrite_option, c, &rc))
		return rc;
	return cli_each_file(c->encrypt ? &encrypt_ops : &rotate_ops, &c->w,
	                     argc - optind, argv + optind, c);
}

static int cmd_rewrite(int encrypt, int argc, char **argv)
{
	static struct rewrite_cmd c;   /* the recipient table is too large for the stack */
	int rc;

	memset(&c, 0, sizeof c);
	c.encrypt = encrypt;
	c.name = encrypt ? "encrypt" : "rotate";
	cli_pw_init(&c.nu);
	cli_pw_init(&c.no);
	rc = run_cmd(&c, argc, argv);
	cli_pw_clear(&c.nu);
	cli_pw_clear(&c.no);
	for (size_t i = 0; i < c.nrecips; i++)
		cli_free_input((uint8_t *)c.recips[i].cert, c.recips[i].cert_len, 0);
	return rc;
}

static int cmd_rotate(int argc, char **argv)
{
	return cmd_rewrite(0, argc, argv);
}

static int cmd_encrypt(int argc, char **argv)
{
	return cmd_rewrite(1, argc, argv);
}
