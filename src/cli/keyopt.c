/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keyopt.c - the recipient's key for files encrypted to certificates
 * (/Filter /Adobe.PubSec, ISO 32000-2 7.6.5): the key options, their
 * files read once, and the authentication of such a file with them
 * (pdfstamp_doc_auth_key).
 *
 * DESIGN NOTES
 *
 *  1. Key material is never taken from argv.  --key, --cert and --p12 name
 *     files; the password of an encrypted key or of the PKCS#12 file comes
 *     from --key-password-file, -fd or -env, read as document passwords
 *     are (passwd.c: the first line, at most CLI_PW_MAX bytes, the variable
 *     wiped and unset), or is asked for on the terminal (note 4).  A value
 *     on the command line that looks like a password ("--key-password=...")
 *     is answered by cli_bad_option with these options.  dss has a --cert
 *     of its own (certificates for the DSS): there the recipient's
 *     certificate is --key-cert (cli_key_section_dss, cli_key_src.cert_name),
 *     and its messages say so.
 *  2. Checked before any file is touched (driver.c note 2): --p12 excludes
 *     --key and --cert; --key and --cert go together (the certificate
 *     picks the RecipientInfo, by issuer and serial number or subject key
 *     identifier; the key alone cannot); a key password needs a key or a
 *     PKCS#12 file; no two options read standard input (the document
 *     password, a new password, the key password, --files-from -).  Each
 *     option is given at most once.
 *  3. The files are read whole, once, before the first FILE (a file that
 *     cannot be read is a usage error, exit 2; one over CLI_KEY_MAX bytes a
 *     format error, exit 4: readfile.c), the key and the PKCS#12 file into
 *     locked buffers wiped when freed; they are handed to the library as
 *     bytes (struct pdfstamp_key), which parses them for each FILE and
 *     wipes its own copies (rkey.h).  The key password is read when the
 *     first file encrypted to certificates needs it, like the document
 *     password (driver.c note 5), so that a batch without such files never
 *     reads it.  Everything is wiped by cli_key_clear, on every path.
 *  4. Without a key password option the key is tried without a password;
 *     when that fails as a wrong password (PDFSTAMP_E_PASSWORD), standard
 *     input is a terminal and the key may be encrypted (a PKCS#12 file, a
 *     PEM key marked ENCRYPTED, a DER key that is an EncryptedPrivateKeyInfo),
 *     "Key password: " is asked once for the whole run and the file tried
 *     again.  The same code also means "no RecipientInfo names the
 *     certificate" and "the key does not fit its certificate"; the
 *     library's message says which, and is the one reported.
 *  5. Workers (driver.c note 11) share one struct cli_key: its lock guards
 *     the password's intake only (the first worker reads or asks, the
 *     others wait, then use it); the key's bytes are only read.
 *  6. Which handler: the driver calls cli_key_auth for a FILE whose handler
 *     is Adobe.PubSec, and, for a writing command given key options, for a
 *     plaintext FILE too, which the library refuses (a key does not open
 *     it): as with a password (driver.c, CLI_OPEN_UPDATE), nothing is
 *     written in clear to what was meant to be encrypted.  A FILE with the
 *     standard handler is opened with the password, key options or not.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "cli.h"

#define KEY_HEADING CLI_HEADING("Key options, for files encrypted to certificates (key " \
	"material is never taken from the command line):")
#define KEY_ROW CLI_OPTION("key", CLI_OPT_KEY, "FILE", "the recipient's private key: PEM or " \
	"DER, PKCS#8 (encrypted or not) or PKCS#1 RSA")
#define CERT_HELP "its certificate (PEM or DER), which picks the recipient in the file"

static const struct cli_opt key_password_rows[] = {
	CLI_OPTION("key-password-file", CLI_OPT_KEY_PASSWORD_FILE, "FILE",
	           "read the password of the key or PKCS#12 file from the first line of FILE "
	           "('-' reads standard input)"),
	CLI_OPTION("key-password-fd", CLI_OPT_KEY_PASSWORD_FD, "N",
	           "read it from file descriptor N"),
	CLI_OPTION("key-password-env", CLI_OPT_KEY_PASSWORD_ENV, "VAR",
	           "take it from environment variable VAR"),
	CLI_NOTE("Without one of these the key is tried without a password, then, when standard "
	         "input is a terminal and the key is encrypted, the password is asked for."),
	CLI_END
};

const struct cli_opt cli_key_section[] = {
	KEY_HEADING,
	KEY_ROW,
	CLI_OPTION("cert", CLI_OPT_CERT, "FILE", CERT_HELP),
	CLI_OPTION("p12", CLI_OPT_P12, "FILE",
	           "a PKCS#12 file holding both, instead of --key and --cert"),
	CLI_INCLUDE(key_password_rows),
	CLI_END
};

const struct cli_opt cli_key_section_dss[] = {
	KEY_HEADING,
	KEY_ROW,
	CLI_OPTION("key-cert", CLI_OPT_CERT, "FILE", CERT_HELP " (dss's --cert adds to the DSS)"),
	CLI_OPTION("p12", CLI_OPT_P12, "FILE",
	           "a PKCS#12 file holding both, instead of --key and --key-cert"),
	CLI_INCLUDE(key_password_rows),
	CLI_END
};

/* The spelling of the certificate's option (dss: --key-cert). */
static const char *cert_name(const struct cli_key_src *src)
{
	return src->cert_name ? src->cert_name : "--cert";
}

/* Records file option NAME (its value ARG) in *SLOT: once, not empty. */
static int set_file(const char **slot, const char *name, const char *arg)
{
	if (*slot) {
		cli_error(NULL, "%s given twice", name);
		return CLI_EXIT_USAGE;
	}
	if (!*arg) {
		cli_error(NULL, "%s needs a file name", name);
		return CLI_EXIT_USAGE;
	}
	*slot = arg;
	return 0;
}

int cli_key_option(struct cli_key_src *src, int opt, const char *arg)
{
	switch (opt) {
	case CLI_OPT_KEY:
		return set_file(&src->key, "--key", arg);
	case CLI_OPT_CERT:
		return set_file(&src->cert, cert_name(src), arg);
	case CLI_OPT_P12:
		return set_file(&src->p12, "--p12", arg);
	case CLI_OPT_KEY_PASSWORD_FILE:
		return cli_pw_src_set(&src->pw, CLI_PW_FILE, arg, "--key-password-file");
	case CLI_OPT_KEY_PASSWORD_FD:
		return cli_pw_src_set(&src->pw, CLI_PW_FD, arg, "--key-password-fd");
	case CLI_OPT_KEY_PASSWORD_ENV:
		return cli_pw_src_set(&src->pw, CLI_PW_ENV, arg, "--key-password-env");
	default:
		return -1;
	}
}

int cli_key_given(const struct cli_key_src *src)
{
	return src->key || src->cert || src->p12;
}

/* 1 if password source SRC reads standard input. */
static int reads_stdin(const struct cli_pw_src *src)
{
	return (src->kind == CLI_PW_FILE && strcmp(src->arg, "-") == 0) ||
	       (src->kind == CLI_PW_FD && src->fd == STDIN_FILENO);
}

int cli_key_check(const struct cli_run *run)
{
	const struct cli_key_src *k = &run->key;

	const char *cn = cert_name(k);

	if (k->p12 && (k->key || k->cert)) {
		cli_error(NULL, "--p12 holds the key and its certificate: give it instead of "
		          "--key and %s, not with them", cn);
		return CLI_EXIT_USAGE;
	}
	if (!k->p12 && (!k->key != !k->cert)) {
		cli_error(NULL, "%s needs %s too (the certificate picks the recipient, the key "
		          "opens its envelope)", k->key ? "--key" : cn, k->key ? cn : "--key");
		return CLI_EXIT_USAGE;
	}
	if (k->pw.kind != CLI_PW_NONE && !k->key && !k->p12) {
		cli_error(NULL, "%s is the password of a key: give --key and %s, or --p12",
		          k->pw.optname, cn);
		return CLI_EXIT_USAGE;
	}
	if (reads_stdin(&k->pw) && run->files_from && strcmp(run->files_from, "-") == 0) {
		cli_error(NULL, "--files-from - and %s both read standard input", k->pw.optname);
		return CLI_EXIT_USAGE;
	}
	if (run->pw_stdin > 1) {
		cli_error(NULL, "two password options read standard input; give one of them "
		          "another source");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int cli_key_load(struct cli_key *k, const struct cli_key_src *src)
{
	int rc = 0;

	memset(k, 0, sizeof *k);
	k->src = src;
	cli_pw_init(&k->pw);
	if (pthread_mutex_init(&k->lock, NULL) != 0) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_IO;
	}
	k->lock_ok = 1;
	if (src->p12)
		rc = cli_read_input(src->p12, CLI_KEY_MAX, 1, &k->p12, &k->p12_len);
	if (rc == 0 && src->key)
		rc = cli_read_input(src->key, CLI_KEY_MAX, 1, &k->key, &k->key_len);
	if (rc == 0 && src->cert)
		rc = cli_read_input(src->cert, CLI_KEY_MAX, 0, &k->cert, &k->cert_len);
	return rc;
}

void cli_key_clear(struct cli_key *k)
{
	/* cli_read_input's buffers are LEN + 1 bytes: all of them wiped */
	cli_free_input(k->key, k->key_len, 1);
	cli_free_input(k->p12, k->p12_len, 1);
	cli_free_input(k->cert, k->cert_len, 0);
	k->key = k->p12 = k->cert = NULL;
	k->key_len = k->p12_len = k->cert_len = 0;
	cli_pw_clear(&k->pw);
	if (k->lock_ok)
		pthread_mutex_destroy(&k->lock);
	k->lock_ok = 0;
}

/* Note 4: whether the key may need a password. */
static int maybe_encrypted(const struct cli_key *k)
{
	const uint8_t *p = k->key;
	size_t n = k->key_len, i;

	if (k->p12)
		return 1;
	if (n >= 11 && memcmp(p, "-----BEGIN ", 11) == 0) {
		for (i = 0; i + 9 <= n; i++)
			if (memcmp(p + i, "ENCRYPTED", 9) == 0)
				return 1;
		return 0;
	}
	/* DER: an EncryptedPrivateKeyInfo starts SEQUENCE { SEQUENCE (the
	 * algorithm), a PrivateKeyInfo or RSAPrivateKey SEQUENCE { INTEGER */
	if (n < 4 || p[0] != 0x30)
		return 0;
	i = p[1] < 0x80 ? 2 : 2 + (size_t)(p[1] & 0x7f);
	return i < n && p[i] == 0x30;
}

/* Under K's lock: the key password from its source, once (note 3).
 * 0 or an exit status. */
static int intake(struct cli_key *k)
{
	int rc;

	pthread_mutex_lock(&k->lock);
	if (!k->failed && k->src->pw.kind != CLI_PW_NONE && !k->pw.have &&
	    (rc = cli_pw_get(&k->src->pw, &k->pw, NULL)) != 0)
		k->failed = rc;
	rc = k->failed;
	pthread_mutex_unlock(&k->lock);
	return rc;
}

/* Note 4: asks for the key password once.  Returns 1 if there is an
 * answer to try, 0 if not, or an exit status (negative of it, so as not
 * to be taken for 1) with k->failed set. */
static int ask(struct cli_key *k)
{
	int rc = 0;

	pthread_mutex_lock(&k->lock);
	if (!k->asked && !k->failed) {
		if ((rc = cli_pw_prompt(&k->pw, "Key password: ")) != 0)
			k->failed = rc;
		else
			k->asked = 1;
	}
	rc = k->failed ? -k->failed : k->asked;
	pthread_mutex_unlock(&k->lock);
	return rc;
}

/* DOC with K's material and, when there is one, its password. */
static int try_key(struct cli_key *k, pdfstamp_doc *doc, unsigned flags)
{
	struct pdfstamp_key pk = PDFSTAMP_KEY_INIT;
	int have;

	pthread_mutex_lock(&k->lock);
	have = k->pw.have; /* the buffer is not written again once it is set */
	pthread_mutex_unlock(&k->lock);
	pk.key = k->key;
	pk.key_len = k->key_len;
	pk.cert = k->cert;
	pk.cert_len = k->cert_len;
	pk.p12 = k->p12;
	pk.p12_len = k->p12_len;
	if (have) {
		pk.password = k->pw.buf;
		pk.password_len = k->pw.len;
	}
	return pdfstamp_doc_auth_key(doc, &pk, flags);
}

int cli_key_auth(struct cli_key *k, pdfstamp_doc *doc, unsigned flags, const char **msg)
{
	int rc;

	*msg = NULL;
	if (!cli_key_given(k->src)) {
		*msg = k->src->cert_name ? "the file is encrypted to certificates; give --key and "
		                           "--key-cert, or --p12"
		                         : "the file is encrypted to certificates; give --key and "
		                           "--cert, or --p12";
		return CLI_EXIT_PASSWORD;
	}
	if ((rc = intake(k)) != 0) {
		*msg = "no key password available; not opened";
		return rc;
	}
	rc = try_key(k, doc, flags);
	if (rc == PDFSTAMP_E_PASSWORD && k->src->pw.kind == CLI_PW_NONE &&
	    isatty(STDIN_FILENO) && maybe_encrypted(k)) {
		int a = ask(k);

		if (a < 0) {
			*msg = "no key password available; not opened";
			return -a;
		}
		if (a == 1)
			rc = try_key(k, doc, flags);
	}
	return cli_exit_status(rc);
}
