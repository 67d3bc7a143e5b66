/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_audit.c - `pdfstamp audit [--json] [password options] FILE...`: what
 * changed after each signature of each FILE, and is it permitted.
 *
 * DESIGN NOTES
 *
 *  1. Per file: opened and authenticated by the driver (CLI_OPEN_READ;
 *     the user password suffices) with PDFSTAMP_OPEN_SALVAGE: a file whose
 *     newest revisions cannot be read opens as the prefix that can (its
 *     damaged tail: pdfstamp_doc_damaged_tail), then pdfstamp_audit
 *     (audit.c), which only reads.  The report is owned by this command's state and cleared
 *     before each file.
 *  2. Exit status: 0 when every change after every signature is permitted
 *     and for an unsigned file; 6 (CLI_EXIT_VIOLATION) when a signature's
 *     policy is violated (a damaged later revision included): a finding in
 *     the report, not a failed call; 4 when the file or a signed revision
 *     cannot be read (the library's FORMAT/UNSUPPORTED).  With several
 *     files the worst (highest) status wins, so one violation shows in
 *     the status of a whole run (pdfstamp(1) EXIT STATUS).
 *  3. Text output: one line per file with the verdict, a line per
 *     signature, and a line per forbidden change naming the object, its
 *     kind and the signature it breaks.
 *  4. --json: one line per file: {"file","ok","verdict","signatures":
 *     [{"field","object","revision","covers_revision","docmdp",
 *     "fieldmdp","locked_fields","doc_timestamp","subfilter","violated"}],
 *     "revisions":[{"revision","offset","xref","added","modified","freed",
 *     "audited","changes":[{"object","generation","kind","action",
 *     "verdict","signature","field","reason"}]}],"forbidden","bytes_read"}; a violation has
 *     "ok":false with "exit":6 and "error", as every failure line.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct audit_cmd {
	unsigned flags;              /* PDFSTAMP_AUDIT_* */
	int extract;                 /* --extract-revision N, 0 if not given */
	const char *out;             /* -o FILE with it */
};

/* The result of one file. */
struct audit_res {
	struct pdfstamp_audit_report rep;
	int64_t extracted;           /* the bytes written */
};

#define OPT_EXTRACT CLI_OPT_CMD_BASE
#define OPT_STRICT (CLI_OPT_CMD_BASE + 1)

static const struct cli_opt audit_opts[] = {
	CLI_HEADING("Options:"),
	CLI_OPTION_JSON,
	CLI_OPTION("strict", OPT_STRICT, NULL,
	           "the stricter reading of certifications: after P=3 only text notes may be "
	           "added, none over a signature's widget; after P=1 a DSS or document "
	           "timestamp is a change too (Acrobat's reading; without it ISO 32000-2 and "
	           "its errata)"),
	CLI_OPTION("extract-revision", OPT_EXTRACT, "N",
	           "write the first N revisions of FILE (1 = the oldest, as the report numbers "
	           "them) to OUT instead: the bytes a signature of revision N signs, still "
	           "encrypted (\"view signed version\"); OUT must not be FILE"),
	CLI_OPTION(NULL, 'o', "OUT", "the file --extract-revision writes (replaced atomically)"),
	CLI_OPTION_HELP,
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_audit(int argc, char **argv);

const struct cli_cmd cli_cmd_audit = {
	.name = "audit",
	.run = cmd_audit,
	.summary = "what changed after each signature, and does its policy permit it",
	.synopsis = "[--json] [--strict] [password options] FILE...\n"
	            "pdfstamp audit --extract-revision N -o OUT [password options] FILE",
	.about =
	"Lists the revisions and signatures of each FILE and classifies every\n"
	"change made after each signature (annotation, form field, signature,\n"
	"DSS, document timestamp, metadata, page content, page tree, catalog,\n"
	"encryption, damaged, other) by comparing the decrypted objects of the\n"
	"revisions.  A change is forbidden by a certification's DocMDP level\n"
	"(P=1 nothing, P=2 form filling and signing, P=3 also annotations; DSS\n"
	"and document timestamps are allowed at every level unless --strict),\n"
	"by a FieldMDP lock, or, for any signature, when it changes page\n"
	"content, the page tree, an existing annotation or other visible\n"
	"content that existed when the signature was made.  Policies\n"
	"and what each object is are read from the revision each signature\n"
	"covers, never from a later one; damage after a signature (unlisted\n"
	"objects, unreadable revisions) is a 'damaged' change.\n"
	"Exit status: 0 every change permitted (or no signature), 6 a\n"
	"signature's policy is violated, 4 a file (or a signed revision of\n"
	"it) that cannot be read.  The user password suffices; nothing is\n"
	"written.\n",
	.opts = audit_opts
};

static const char *verdict_name(int v)
{
	return v == PDFSTAMP_AUDIT_VIOLATION ? "violation"
	       : v == PDFSTAMP_AUDIT_UNSIGNED ? "unsigned" : "ok";
}

static const char *action_name(int a)
{
	return a == PDFSTAMP_CHANGE_ADDED ? "added"
	       : a == PDFSTAMP_CHANGE_FREED ? "freed" : "modified";
}

static const char *fieldmdp_name(int f)
{
	return f == PDFSTAMP_FIELDMDP_ALL ? "All" : f == PDFSTAMP_FIELDMDP_INCLUDE ? "Include"
	       : f == PDFSTAMP_FIELDMDP_EXCLUDE ? "Exclude" : NULL;
}

static const char *xref_name(enum pdfstamp_xref_kind k)
{
	return k == PDFSTAMP_XREF_STREAM ? "stream"
	       : k == PDFSTAMP_XREF_HYBRID ? "hybrid" : "table";
}

static const char *kind_name(int k)
{
	const char *n = pdfstamp_change_kind_name(k);

	return n ? n : "other";
}

static void json_report(const char *file, const struct pdfstamp_audit_report *r)
{
	struct cli_json j;
	int i, k;

	if (r->verdict == PDFSTAMP_AUDIT_VIOLATION)
		cli_json_fail_begin(&j, file, CLI_EXIT_VIOLATION,
		                    "a signature's policy is violated");
	else
		cli_json_ok_begin(&j, file);
	cli_json_key(&j, "verdict");
	cli_json_str(&j, verdict_name(r->verdict));
	cli_json_key(&j, "signatures");
	cli_json_arr_begin(&j);
	for (i = 0; i < r->nsigs; i++) {
		const struct pdfstamp_audit_sig *s = &r->sigs[i];
		cli_json_obj_begin(&j);
		cli_json_key(&j, "field");
		cli_json_str(&j, s->field);
		cli_json_key(&j, "object");
		if (s->objnum)
			cli_json_int(&j, s->objnum);
		else
			cli_json_null(&j);
		cli_json_key(&j, "revision");
		cli_json_int(&j, s->revision);
		cli_json_key(&j, "covers_revision");
		cli_json_bool(&j, s->covers_revision);
		cli_json_key(&j, "docmdp");
		if (s->docmdp)
			cli_json_int(&j, s->docmdp);
		else
			cli_json_null(&j);
		cli_json_key(&j, "fieldmdp");
		if (fieldmdp_name(s->fieldmdp))
			cli_json_str(&j, fieldmdp_name(s->fieldmdp));
		else
			cli_json_null(&j);
		cli_json_key(&j, "locked_fields");
		cli_json_arr_begin(&j);
		for (k = 0; k < s->nfields; k++)
			cli_json_str(&j, s->fields[k]);
		cli_json_arr_end(&j);
		cli_json_key(&j, "doc_timestamp");
		cli_json_bool(&j, s->doc_timestamp);
		cli_json_key(&j, "subfilter");
		cli_json_str(&j, s->subfilter);
		cli_json_key(&j, "violated");
		cli_json_bool(&j, s->violated);
		cli_json_obj_end(&j);
	}
	cli_json_arr_end(&j);
	cli_json_key(&j, "revisions");
	cli_json_arr_begin(&j);
	for (i = 0; i < r->nrevisions; i++) {
		const struct pdfstamp_audit_revision *v = &r->revisions[i];
		cli_json_obj_begin(&j);
		cli_json_key(&j, "revision");
		cli_json_int(&j, i + 1);
		cli_json_key(&j, "offset");
		cli_json_int(&j, v->offset);
		cli_json_key(&j, "xref");
		cli_json_str(&j, xref_name(v->xref));
		cli_json_key(&j, "added");
		cli_json_int(&j, v->added);
		cli_json_key(&j, "modified");
		cli_json_int(&j, v->modified);
		cli_json_key(&j, "freed");
		cli_json_int(&j, v->freed);
		cli_json_key(&j, "audited");
		cli_json_bool(&j, v->audited);
		cli_json_key(&j, "changes");
		cli_json_arr_begin(&j);
		for (k = 0; k < v->nchanges; k++) {
			const struct pdfstamp_audit_change *c = &v->changes[k];
			cli_json_obj_begin(&j);
			cli_json_key(&j, "object");
			cli_json_int(&j, c->object);
			cli_json_key(&j, "generation");
			cli_json_int(&j, c->generation);
			cli_json_key(&j, "kind");
			cli_json_str(&j, kind_name(c->kind));
			cli_json_key(&j, "action");
			cli_json_str(&j, action_name(c->action));
			cli_json_key(&j, "verdict");
			cli_json_str(&j, c->forbidden ? "forbidden" : "permitted");
			cli_json_key(&j, "signature");
			if (c->signature >= 0 && c->signature < r->nsigs)
				cli_json_str(&j, r->sigs[c->signature].field);
			else
				cli_json_null(&j);
			cli_json_key(&j, "field");
			if (c->field[0])
				cli_json_str(&j, c->field);
			else
				cli_json_null(&j);
			cli_json_key(&j, "reason");
			if (c->reason[0])
				cli_json_str(&j, c->reason);
			else
				cli_json_null(&j);
			cli_json_obj_end(&j);
		}
		cli_json_arr_end(&j);
		cli_json_obj_end(&j);
	}
	cli_json_arr_end(&j);
	cli_json_key(&j, "forbidden");
	cli_json_int(&j, r->forbidden);
	cli_json_key(&j, "bytes_read");
	cli_json_int(&j, r->bytes_read);
	cli_json_line_end(&j, file);
}

static void text_report(const char *file, const struct pdfstamp_audit_report *r)
{
	int i, k;

	cli_put_safe(cli_out(), file);
	fprintf(cli_out(), ": %s (%d revision%s, %d signature%s", verdict_name(r->verdict),
	        r->nrevisions, r->nrevisions == 1 ? "" : "s", r->nsigs, r->nsigs == 1 ? "" : "s");
	if (r->forbidden)
		fprintf(cli_out(), ", %" PRId64 " forbidden change%s", r->forbidden,
		       r->forbidden == 1 ? "" : "s");
	fputs(")\n", cli_out());
	for (i = 0; i < r->nsigs; i++) {
		const struct pdfstamp_audit_sig *s = &r->sigs[i];
		fprintf(cli_out(), "  signature '");
		cli_put_safe(cli_out(), s->field);
		fprintf(cli_out(), "' (object %" PRId64 "): revision %d%s, %s", s->objnum,
		        s->revision,
		        s->covers_revision ? "" : " (does not end at that revision's end)",
		        s->doc_timestamp ? "document timestamp"
		        : s->docmdp      ? "certification"
		                         : "approval");
		if (s->docmdp)
			fprintf(cli_out(), " DocMDP P=%d", s->docmdp);
		if (fieldmdp_name(s->fieldmdp))
			fprintf(cli_out(), ", FieldMDP %s", fieldmdp_name(s->fieldmdp));
		fprintf(cli_out(), "%s\n", s->violated ? ": VIOLATED" : "");
	}
	for (i = 0; i < r->nrevisions; i++) {
		const struct pdfstamp_audit_revision *v = &r->revisions[i];
		for (k = 0; k < v->nchanges; k++) {
			const struct pdfstamp_audit_change *c = &v->changes[k];
			if (!c->forbidden)
				continue;
			fprintf(cli_out(), "  forbidden: revision %d %s object %" PRId64 " (%s",
			        i + 1, action_name(c->action), c->object, kind_name(c->kind));
			if (c->field[0]) {
				fprintf(cli_out(), " '");
				cli_put_safe(cli_out(), c->field);
				fputc('\'', cli_out());
			}
			fprintf(cli_out(), ") breaks signature '");
			if (c->signature >= 0 && c->signature < r->nsigs)
				cli_put_safe(cli_out(), r->sigs[c->signature].field);
			fputc('\'', cli_out());
			if (c->reason[0]) {
				fprintf(cli_out(), ": ");
				cli_put_safe(cli_out(), c->reason);
			}
			fputc('\n', cli_out());
		}
	}
}

static void res_clear(void *res)
{
	pdfstamp_audit_clear(&((struct audit_res *)res)->rep);
}

static int call_audit(struct cli_file *f, void *arg)
{
	const struct audit_cmd *c = arg;
	struct audit_res *r = f->res;

	r->rep.version = PDFSTAMP_AUDIT_REPORT_VERSION;
	r->rep.flags = c->flags;
	if (c->extract)
		return pdfstamp_audit_extract(f->doc, c->extract, c->out, &r->extracted);
	return pdfstamp_audit(f->doc, &r->rep);
}

static int output_audit(const struct cli_file *f, void *arg)
{
	const struct audit_cmd *c = arg;
	const struct audit_res *r = f->res;

	if (c->extract) {
		if (f->run->json) {
			struct cli_json j;
			cli_json_ok_begin(&j, f->name);
			cli_json_key(&j, "revision");
			cli_json_int(&j, c->extract);
			cli_json_key(&j, "output");
			cli_json_str(&j, c->out);
			cli_json_key(&j, "bytes");
			cli_json_int(&j, r->extracted);
			cli_json_line_end(&j, f->name);
		} else {
			fprintf(cli_out(), "revision %d of ", c->extract);
			cli_put_safe(cli_out(), f->name);
			fprintf(cli_out(), " (%" PRId64 " bytes) written to ", r->extracted);
			cli_put_safe(cli_out(), c->out);
			fputc('\n', cli_out());
		}
		return CLI_EXIT_OK;
	}
	if (f->run->json)
		json_report(f->name, &r->rep);
	else
		text_report(f->name, &r->rep);
	return r->rep.verdict == PDFSTAMP_AUDIT_VIOLATION ? CLI_EXIT_VIOLATION : CLI_EXIT_OK;
}

static const struct cli_ops audit_ops = {
	.name = "audit",
	.open = CLI_OPEN_READ,
	.open_flags = PDFSTAMP_OPEN_SALVAGE,
	.flags = CLI_FLUSH_ALWAYS | CLI_BATCH,
	.call = call_audit,
	.output = output_audit,
	.res_size = sizeof(struct audit_res),
	.res_clear = res_clear
};

static int audit_option(void *arg, int id, char *optarg)
{
	struct audit_cmd *c = arg;
	int64_t n;

	switch (id) {
	case 'o':
		c->out = optarg;
		return 0;
	case OPT_STRICT:
		c->flags |= PDFSTAMP_AUDIT_STRICT;
		return 0;
	case OPT_EXTRACT:
		if (cli_parse_int64(optarg, &n) < 0 || n < 1 || n > 4096) {
			cli_error(NULL, "audit: --extract-revision takes a revision number from 1 "
			          "(the oldest)");
			return cli_usage_hint("audit");
		}
		c->extract = (int)n;
		return 0;
	default:
		return -1;
	}
}

static int cmd_audit(int argc, char **argv)
{
	struct audit_cmd c;
	struct cli_run o;
	int rc;

	memset(&c, 0, sizeof c);
	memset(&o, 0, sizeof o);
	if (cli_parse(&cli_cmd_audit, argc, argv, &o, audit_option, &c, &rc))
		return rc;
	if (!c.extract != !c.out || (c.extract && argc - optind != 1)) {
		cli_error(NULL,
		          "audit: --extract-revision N and -o OUT go together, with one FILE");
		return cli_fail_early(&o, argc - optind, argv + optind, cli_usage_hint("audit"));
	}
	return cli_each_file(&audit_ops, &o, argc - optind, argv + optind, &c);
}
