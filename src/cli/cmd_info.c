/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_info.c - `pdfstamp info [--json] [--force] [password options] FILE...`
 *
 * DESIGN NOTES
 *
 *  1. Per file, through the driver (driver.c, CLI_OPEN_READ):
 *     pdfstamp_doc_open (trailer and cross-reference data only),
 *     authentication if the file is encrypted; then here
 *     pdfstamp_journal_pending and pdfstamp_doc_info, and the report.
 *     One file's failure is reported and the next file is still processed;
 *     the exit status is the worst one.  Text reports are separated by an
 *     empty line.
 *  2. The password is the driver's: obtained once, when the first
 *     encrypted file needs it, and reused for the rest.
 *  3. --json prints exactly one line per FILE: the report object, which
 *     starts {"file":...,"ok":true, or, if the file failed, the failure line
 *     every command prints, {"file","ok":false,"exit":N,"error":"message"}
 *     (json.c).  Key names are a stable interface documented in pdfstamp(1)
 *     under JSON OUTPUT; add keys, never rename or remove them.  (Up to
 *     0.1.0 a failure was {"file","error":{"exit_status","message"}}: the
 *     one exception, as "error" had to become the string all commands use.)
 *  4. Permission names come from the library (pdfstamp_perm_name), asked
 *     for bits 1 to 32 in turn (next_perm).
 *  5. Legacy handlers (issue 13): "encryption" lists every /CF entry as
 *     "crypt_filters":[{"name","method"}] (empty for /V 1 and 2, which
 *     have none), and the top-level "weak_encryption" is the library's
 *     reason the handler is weak ("RC4 40-bit") or null, as in the stamp
 *     and meta lines.  The text report adds a "CF methods:" line for
 *     /V 4 and a "Weak handler:" line, so an AES-256 file's text report is
 *     as before.
 *  6. Certificate encryption (issue 33): "encryption" has "subfilter",
 *     "recipients" (RecipientInfos), "envelopes" (/Recipients strings),
 *     "recipient_index" (0-based) and "recipient" (the certificate's
 *     subject), null or 0 for the standard handler; "authenticated_as" is
 *     "recipient".  The text report says "Recipients:" and names the
 *     certificate on the "Opened with:" line.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The result of one file. */
struct info_res {
	struct pdfstamp_info in;
	int journal;               /* its journal is pending */
};

static const struct cli_opt info_opts[] = {
	CLI_HEADING("Options:"),
	CLI_OPTION_JSON,
	CLI_OPTION("force", CLI_OPT_W_FORCE, NULL,
	           "accept a /Perms entry that does not match /P (warns) and report the "
	           "permissions /Perms records"),
	CLI_OPTION_HELP,
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_info(int argc, char **argv);

const struct cli_cmd cli_cmd_info = {
	.name = "info",
	.run = cmd_info,
	.summary = "show encryption, permissions and structure of PDF files",
	.synopsis = "[--json] [--force] [password options] FILE...",
	.about =
	"Shows the encryption, permissions and structure of each FILE: security\n"
	"handler revision, key length, crypt filters, whether the password given\n"
	"is the user or the owner password, permissions by name, revisions and\n"
	"the cross-reference form of each, object and page counts, signatures,\n"
	"and bytes after the last %%EOF.  Only the trailer, the cross-reference\n"
	"data and the few objects reported on are read.\n",
	.opts = info_opts
};

static const char *xref_kind_name(enum pdfstamp_xref_kind k)
{
	switch (k) {
	case PDFSTAMP_XREF_TABLE: return "table";
	case PDFSTAMP_XREF_STREAM: return "stream";
	case PDFSTAMP_XREF_HYBRID: return "hybrid";
	default: return "unknown";
	}
}

/* How the file was opened; a file encrypted to certificates is opened by
 * a recipient (note 6), whatever its permissions. */
static const char *auth_name(const struct pdfstamp_info *in, int a)
{
	if (a && in->subfilter[0])
		return "recipient";
	switch (a) {
	case 1: return "user";
	case 2: return "owner";
	default: return "none";
	}
}

/* Bit BIT (1-based, ISO 32000-2 Table 22) of the 32-bit /P value. */
static int perm_bit(int64_t p, int bit)
{
	uint32_t u = (uint32_t)(p & 0xffffffff);

	return bit >= 1 && bit <= 32 && ((u >> (bit - 1)) & 1u);
}

/* The next named permission bit after *BIT (start at 0), its name; NULL
 * after the last. */
static const char *next_perm(int *bit)
{
	const char *name = NULL;

	while (!name && ++*bit <= 32)
		name = pdfstamp_perm_name(*bit);
	return name;
}


/* Copies a fixed-size char field of the library's struct so that the copy
 * is NUL-terminated even if the field is not. */
static void field(char *dst, size_t dn, const char *src, size_t sn)
{
	size_t n = strnlen(src, sn);

	if (n > dn - 1)
		n = dn - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}
#define FIELD(dst, src) field((dst), sizeof(dst), (src), sizeof(src))

/* A string field of the info, or null when empty. */
static void json_str_or_null(struct cli_json *j, const char *v, size_t n)
{
	char s[sizeof ((struct pdfstamp_info *)0)->recipient];

	if (!v[0]) {
		cli_json_null(j);
		return;
	}
	field(s, sizeof s, v, n);
	cli_json_str(j, s);
}

static void print_json(const char *file, const struct pdfstamp_info *in, int journal)
{
	const char *pn;
	int bit;
	struct cli_json j;
	char s[64];
	int i;

	cli_json_ok_begin(&j, file);
	cli_json_key(&j, "file_size");
	cli_json_int(&j, in->file_size);
	cli_json_key(&j, "encrypted");
	cli_json_bool(&j, in->encrypted);
	cli_json_key(&j, "encryption");
	if (in->encrypted) {
		cli_json_obj_begin(&j);
		cli_json_key(&j, "filter");
		FIELD(s, in->filter);
		cli_json_str(&j, s);
		cli_json_key(&j, "v");
		cli_json_int(&j, in->v);
		cli_json_key(&j, "r");
		cli_json_int(&j, in->r);
		cli_json_key(&j, "key_bits");
		cli_json_int(&j, in->key_bits);
		cli_json_key(&j, "stream_filter");
		FIELD(s, in->stmf);
		cli_json_str(&j, s);
		cli_json_key(&j, "string_filter");
		FIELD(s, in->strf);
		cli_json_str(&j, s);
		cli_json_key(&j, "method");
		FIELD(s, in->cfm);
		cli_json_str(&j, s);
		cli_json_key(&j, "crypt_filters");
		cli_json_arr_begin(&j);
		for (i = 0; i < in->ncrypt_filters; i++) {
			cli_json_obj_begin(&j);
			cli_json_key(&j, "name");
			FIELD(s, in->crypt_filters[i].name);
			cli_json_str(&j, s);
			cli_json_key(&j, "method");
			FIELD(s, in->crypt_filters[i].method);
			cli_json_str(&j, s);
			cli_json_obj_end(&j);
		}
		cli_json_arr_end(&j);
		cli_json_key(&j, "subfilter");
		json_str_or_null(&j, in->subfilter, sizeof in->subfilter);
		cli_json_key(&j, "recipients");
		cli_json_int(&j, in->recipients);
		cli_json_key(&j, "envelopes");
		cli_json_int(&j, in->envelopes);
		cli_json_key(&j, "recipient_index");
		if (in->recipient_index >= 0)
			cli_json_int(&j, in->recipient_index);
		else
			cli_json_null(&j);
		cli_json_key(&j, "recipient");
		json_str_or_null(&j, in->recipient, sizeof in->recipient);
		cli_json_key(&j, "encrypt_metadata");
		cli_json_bool(&j, in->encrypt_metadata);
		cli_json_key(&j, "perms_valid");
		cli_json_bool(&j, in->perms_valid);
		cli_json_key(&j, "p");
		cli_json_int(&j, in->p);
		cli_json_key(&j, "permissions");
		cli_json_obj_begin(&j);
		for (bit = 0; (pn = next_perm(&bit)) != NULL;) {
			cli_json_key(&j, pn);
			cli_json_bool(&j, perm_bit(in->p, bit));
		}
		cli_json_obj_end(&j);
		cli_json_obj_end(&j);
	} else {
		cli_json_null(&j);
	}
	cli_json_key(&j, "weak_encryption");
	cli_json_weak(&j, in->weak, sizeof in->weak);
	cli_json_key(&j, "authenticated_as");
	cli_json_str(&j, auth_name(in, in->authenticated_as));
	cli_json_key(&j, "revisions");
	cli_json_int(&j, in->revisions);
	cli_json_key(&j, "xref_kinds");
	cli_json_arr_begin(&j);
	for (i = 0; i < in->revisions; i++)
		cli_json_str(&j, xref_kind_name(in->xref_kinds[i]));
	cli_json_arr_end(&j);
	cli_json_key(&j, "last_xref");
	cli_json_str(&j, in->last_is_stream ? "stream" : "table");
	cli_json_key(&j, "objects");
	cli_json_int(&j, in->objects);
	cli_json_key(&j, "size");
	cli_json_int(&j, in->size);
	cli_json_key(&j, "pages");
	cli_json_int(&j, in->pages);
	cli_json_key(&j, "trailing_bytes");
	cli_json_int(&j, in->has_trailing_bytes ? in->trailing_bytes : 0);
	cli_json_key(&j, "signatures");
	cli_json_arr_begin(&j);
	for (i = 0; i < in->nsigs; i++) {
		cli_json_obj_begin(&j);
		cli_json_key(&j, "object");
		cli_json_int(&j, in->sigs[i].objnum);
		cli_json_key(&j, "docmdp");
		cli_json_int(&j, in->sigs[i].docmdp);
		cli_json_key(&j, "subfilter");
		FIELD(s, in->sigs[i].subfilter);
		cli_json_str(&j, s);
		cli_json_obj_end(&j);
	}
	cli_json_arr_end(&j);
	cli_json_key(&j, "bytes_read");
	cli_json_int(&j, in->bytes_read);
	cli_json_key(&j, "aes_engine");
	cli_json_str(&j, pdfstamp_aes_engine());
	cli_json_key(&j, "journal_pending");
	cli_json_bool(&j, journal);
	cli_json_line_end(&j, file);
}

static void put_field(const char *label, const char *value)
{
	fprintf(cli_out(), "%-16s ", label);
	cli_put_safe(cli_out(), value);
	fputc('\n', cli_out());
}

static void print_text(const char *file, const struct pdfstamp_info *in, int journal)
{
	const char *pn;
	int bit;
	char s[64], t[64], u[64];
	int i, any;

	put_field("File:", file);
	fprintf(cli_out(), "%-16s %" PRId64 " bytes\n", "File size:", in->file_size);
	if (in->encrypted) {
		FIELD(s, in->filter);
		fprintf(cli_out(), "%-16s yes, /", "Encrypted:");
		cli_put_safe(cli_out(), s);
		if (in->subfilter[0]) {
			FIELD(t, in->subfilter);
			fprintf(cli_out(), " /");
			cli_put_safe(cli_out(), t);
			fprintf(cli_out(), " V %d, %d-bit key\n", in->v, in->key_bits);
			fprintf(cli_out(), "%-16s %d in %d envelope%s\n", "Recipients:",
			        in->recipients, in->envelopes, in->envelopes == 1 ? "" : "s");
		} else {
			fprintf(cli_out(), " V %d R %d, %d-bit key\n", in->v, in->r, in->key_bits);
		}
		FIELD(s, in->stmf);
		FIELD(t, in->strf);
		FIELD(u, in->cfm);
		if (in->v < 4) {
			/* /V 1 and 2 have no crypt filters: RC4 for everything */
			fprintf(cli_out(), "%-16s none (/V %d: RC4 for strings and streams)\n",
			       "Crypt filters:", in->v);
		} else {
			fprintf(cli_out(), "%-16s streams /", "Crypt filters:");
			cli_put_safe(cli_out(), s);
			fputs(", strings /", cli_out());
			cli_put_safe(cli_out(), t);
			fputs(", method /", cli_out());
			cli_put_safe(cli_out(), u);
			fputc('\n', cli_out());
		}
		if (in->v == 4 && in->ncrypt_filters > 0) {
			fprintf(cli_out(), "%-16s", "CF methods:");
			for (i = 0; i < in->ncrypt_filters; i++) {
				FIELD(s, in->crypt_filters[i].name);
				FIELD(t, in->crypt_filters[i].method);
				fputs(i ? ", /" : " /", cli_out());
				cli_put_safe(cli_out(), s);
				fputc(' ', cli_out());
				cli_put_safe(cli_out(), t);
			}
			fputc('\n', cli_out());
		}
		if (in->weak[0]) {
			FIELD(s, in->weak);
			fprintf(cli_out(), "%-16s ", "Weak handler:");
			cli_put_safe(cli_out(), s);
			fputs(" (pdfstamp rotate upgrades the file to AES-256)\n", cli_out());
		}
		fprintf(cli_out(), "%-16s %s\n", "Metadata:",
		       in->encrypt_metadata ? "encrypted" : "not encrypted");
		if (in->subfilter[0])
			fprintf(cli_out(), "%-16s none (each recipient's permissions are in its "
			        "envelope)\n", "Perms check:");
		else if (in->r < 5)
			fprintf(cli_out(), "%-16s none (/R %d has no /Perms)\n",
			        "Perms check:", in->r);
		else
			fprintf(cli_out(), "%-16s %s\n", "Perms check:",
			       in->perms_valid ? "valid" : "INVALID (/Perms does not match)");
		if (in->subfilter[0] && in->recipient_index >= 0) {
			char r[sizeof in->recipient];
			FIELD(r, in->recipient);
			fprintf(cli_out(), "%-16s the key of ", "Opened with:");
			cli_put_safe(cli_out(), r);
			fprintf(cli_out(), " (envelope %d)\n", in->recipient_index + 1);
		} else {
			fprintf(cli_out(), "%-16s %s password\n", "Opened with:",
			        auth_name(in, in->authenticated_as));
		}
		fprintf(cli_out(), "%-16s %" PRId64 "\n", "P:", in->p);
		fprintf(cli_out(), "%-16s", "Allowed:");
		any = 0;
		for (bit = 0; (pn = next_perm(&bit)) != NULL;) {
			if (!perm_bit(in->p, bit))
				continue;
			fprintf(cli_out(), "%s%s", any ? ", " : " ", pn);
			any = 1;
		}
		fprintf(cli_out(), "%s\n", any ? "" : " nothing");
		/* Bit 10 is on in nearly every file, whatever was asked for
		 * (rotate --permissions print,copy gives it too): say why. */
		if (perm_bit(in->p, 10))
			fprintf(cli_out(),
			        "%-16s (extract is bit 10, extraction for accessibility: PDF 2.0\n"
			        "%-16s deprecates it, writers always set it and readers ignore "
			        "it;\n"
			        "%-16s ISO 32000-2 Table 22)\n",
			        "", "", "");
		fprintf(cli_out(), "%-16s", "Denied:");
		any = 0;
		for (bit = 0; (pn = next_perm(&bit)) != NULL;) {
			if (perm_bit(in->p, bit))
				continue;
			fprintf(cli_out(), "%s%s", any ? ", " : " ", pn);
			any = 1;
		}
		fprintf(cli_out(), "%s\n", any ? "" : " nothing");
		if (in->authenticated_as == 2 && !in->subfilter[0])
			fprintf(cli_out(), "%-16s the owner password grants every permission\n",
			        "");
	} else {
		fprintf(cli_out(), "%-16s no\n", "Encrypted:");
	}
	fprintf(cli_out(), "%-16s %d (newest first:", "Revisions:", in->revisions);
	for (i = 0; i < in->revisions; i++)
		fprintf(cli_out(), "%s %s", i ? "," : "", xref_kind_name(in->xref_kinds[i]));
	fprintf(cli_out(), ")\n");
	fprintf(cli_out(), "%-16s %s\n", "Last xref:", in->last_is_stream ? "stream" : "table");
	fprintf(cli_out(), "%-16s %" PRId64 " in use (trailer /Size %" PRId64 ")\n",
	       "Objects:", in->objects, in->size);
	fprintf(cli_out(), "%-16s %" PRId64 "\n", "Pages:", in->pages);
	fprintf(cli_out(), "%-16s %" PRId64 "\n", "Trailing bytes:",
	       in->has_trailing_bytes ? in->trailing_bytes : 0);
	if (in->nsigs == 0)
		fprintf(cli_out(), "%-16s none\n", "Signatures:");
	for (i = 0; i < in->nsigs; i++) {
		FIELD(s, in->sigs[i].subfilter);
		fprintf(cli_out(), "%-16s object %" PRId64 ", ", i ? "" : "Signatures:",
		       in->sigs[i].objnum);
		cli_put_safe(cli_out(), s[0] ? s : "(no /SubFilter)");
		if (in->sigs[i].docmdp)
			fprintf(cli_out(), ", certification (DocMDP P=%d)\n", in->sigs[i].docmdp);
		else
			fprintf(cli_out(), ", approval\n");
	}
	fprintf(cli_out(), "%-16s %" PRId64 " distinct bytes of %" PRId64 "\n", "Bytes read:",
	       in->bytes_read, in->file_size);
	fprintf(cli_out(), "%-16s %s\n", "AES engine:", pdfstamp_aes_engine());
	if (journal)
		fprintf(cli_out(),
		        "%-16s pending: an in-place update was interrupted or the journal is "
		        "foreign;\n"
		        "%-16s this report shows the file as it is (see 'pdfstamp recover')\n",
		        "Journal:", "");
}

static void res_init(void *res)
{
	const struct pdfstamp_info init = PDFSTAMP_INFO_INIT;

	((struct info_res *)res)->in = init;
}

static void res_clear(void *res)
{
	pdfstamp_info_clear(&((struct info_res *)res)->in);
}

static int call_info(struct cli_file *f, void *arg)
{
	struct info_res *r = f->res;
	int rc;

	(void)arg;
	/* Read-only: a journal is reported (the library warns), never acted on. */
	rc = pdfstamp_journal_pending(f->ctx, f->name, &r->journal);
	if (rc == 0)
		rc = pdfstamp_doc_info(f->doc, &r->in);
	return rc;
}

static int output_info(const struct cli_file *f, void *arg)
{
	const struct info_res *r = f->res;

	(void)arg;
	if (f->run->json)
		print_json(f->name, &r->in, r->journal);
	else
		print_text(f->name, &r->in, r->journal);
	return CLI_EXIT_OK;
}

static const struct cli_ops info_ops = {
	.name = "info",
	.open = CLI_OPEN_READ,
	.flags = CLI_BLANK_BETWEEN | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE),
	.call = call_info,
	.output = output_info,
	.res_size = sizeof(struct info_res),
	.res_init = res_init,
	.res_clear = res_clear
};

static int cmd_info(int argc, char **argv)
{
	struct cli_run o;
	int rc;

	memset(&o, 0, sizeof o);
	if (cli_parse(&cli_cmd_info, argc, argv, &o, NULL, NULL, &rc))
		return rc;
	return cli_each_file(&info_ops, &o, argc - optind, argv + optind, NULL);
}
