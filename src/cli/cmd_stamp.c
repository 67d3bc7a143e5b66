/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_stamp.c - `pdfstamp stamp [options] FILE...`: append a stamp
 * annotation to the selected pages of each FILE as one encrypted
 * incremental update.
 *
 * DESIGN NOTES
 *
 *  1. This file only turns options into a struct pdfstamp_stamp_opts and
 *     prints the result; the output mode, files, passwords and failures
 *     are the driver's (driver.c), the PDF work is pdfstamp_stamp()'s.
 *  2. Every option value is checked here, before any file is opened, so a
 *     typo is a usage error (exit 2) for all files alike.  The library
 *     checks the same limits again (and the date, which only it parses);
 *     its PDFSTAMP_E_USAGE also maps to exit 2.
 *  3. Strings (--text, --author, --note, --qr) must be valid UTF-8; the text may
 *     hold newlines (one line each).  The library shapes it in a font that
 *     covers it (the --font options in order, then fontconfig's fallback
 *     for the characters they lack, else Helvetica-Bold for WinAnsi text)
 *     and writes /Contents as UTF-16BE when it is not ASCII.  --font may
 *     be repeated (at most CLI_MAX_FONTS times): the first is the options'
 *     font, the others their fonts[].  --font and --image are passed on as
 *     they are: the library opens them (and refuses a file that is not a
 *     font or an image) before anything is written.
 *  4. --pages EXPR is checked once, before any file is opened, by the
 *     library's own parser (pdfstamp_pages_check without a page count:
 *     the syntax and the numbers); a page beyond a file's count is that
 *     file's usage error.  --page is its one-page form; both at once is a
 *     usage error.
 *  5. Coordinates and the margin are bounded (|v| <= CLI_MAX_COORD) so
 *     the library never has to write absurd reals.
 *  6. Bates numbering ({bates} in a template) continues across the files
 *     in the order given: each file's first number is the start plus the
 *     pages the files before it selected (stamped now or by an earlier run
 *     with the same ID).  So the files are stamped one at a time (--jobs
 *     is 1), every file is opened on every run (--ledger, which skips
 *     files, and --shard, which sees part of the list, are usage errors),
 *     and once a file fails before its pages were counted the rest of the
 *     batch is not stamped (exit 1): their numbers are unknown.  The state
 *     of the count is the only part of the command's state a call
 *     changes; with one worker nothing else reads it.
 *  7. The option table is in the order of --help, grouped (what the stamp
 *     is, its text, where it goes, its data, its look).  Options with the
 *     same first letter keep the order they had in the getopt table it
 *     replaced (opts.c note 2): --icon before --image, --freetext before
 *     --font, so `--i` and `--f` name their candidates as before.
 *  6. Placement (pdfstamp(1) Placement): the nine --position names are the
 *     grid of the page as shown, and `centre` the one alias (`center` is
 *     what --help shows); `middle` stays an error, as it was.  --rect is
 *     the stamp's place itself, so --offset, --rotate and --scale with
 *     --rect are a usage error rather than silently ignored (--position
 *     with --rect is ignored, as it always was).
 *  7. Stamp IDs (--id; the default is the library's, pdfstamp_stamp_id):
 *     a file whose selected pages all carry the ID is reported as skipped,
 *     "already stamped", exit 0; it counts as unchanged for --ledger
 *     (cli_file.unchanged: its done line needs no sync).
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

#define CLI_MAX_COORD 1.0e7 /* points; pages are at most 14400 units wide */
#define CLI_MAX_ANGLE 1.0e6 /* degrees */

enum {
	OPT_PAGE = CLI_OPT_CMD_BASE,
	OPT_PAGES,
	OPT_TEXT,
	OPT_ICON,
	OPT_RECT,
	OPT_POSITION,
	OPT_MARGIN,
	OPT_AUTHOR,
	OPT_NOTE,
	OPT_COLOR,
	OPT_OPACITY,
	OPT_FREETEXT,
	OPT_FONT,
	OPT_IMAGE,
	OPT_SMALL,
	OPT_NO_DATE,
	OPT_BATES_START,
	OPT_BATES_PREFIX,
	OPT_BATES_DIGITS,
	OPT_OFFSET,
	OPT_ROTATE,
	OPT_SCALE,
	OPT_IMAGE_OPACITY,
	OPT_QR,
	OPT_QR_LEVEL,
	OPT_ID
};

/* The standard stamp names (ISO 32000-2 12.5.6.12). */
static const char *const icons[] = {
	"Approved", "Experimental", "NotApproved", "AsIs", "Expired",
	"NotForPublicRelease", "Confidential", "Final", "Sold",
	"Departmental", "ForComment", "TopSecret", "Draft", "ForPublicRelease",
	NULL
};

static const struct {
	const char *name;
	enum pdfstamp_position pos;
} positions[] = {
	{ "top-left", PDFSTAMP_POS_TOP_LEFT },
	{ "top", PDFSTAMP_POS_TOP },
	{ "top-right", PDFSTAMP_POS_TOP_RIGHT },
	{ "left", PDFSTAMP_POS_LEFT },
	{ "center", PDFSTAMP_POS_CENTER },
	{ "right", PDFSTAMP_POS_RIGHT },
	{ "bottom-left", PDFSTAMP_POS_BOTTOM_LEFT },
	{ "bottom", PDFSTAMP_POS_BOTTOM },
	{ "bottom-right", PDFSTAMP_POS_BOTTOM_RIGHT },
	{ "centre", PDFSTAMP_POS_CENTER }, /* the one alias (note 6) */
	{ NULL, PDFSTAMP_POS_TOP_RIGHT }
};

/* Note 7: the order of the rows. */
static const struct cli_opt stamp_opts[] = {
	CLI_HEADING("Stamp options:"),
	CLI_OPTION("page", OPT_PAGE, "N|first|last|all", "the page to stamp (default 1)"),
	CLI_OPTION("pages", OPT_PAGES, "EXPR",
	           "the pages to stamp, e.g. 1-3,7 or 5- or -1 (the last) or odd or all,!1: "
	           "comma-separated N, N-M, N-, -N, first, last, all, odd, even, !ITEM to "
	           "exclude; a page beyond the end is an error (instead of --page)"),
	CLI_OPTION_LIST("icon", OPT_ICON, "NAME",
	                "the stamp's /Name (default Approved), one of:", icons),
	CLI_OPTION("image", OPT_IMAGE, "FILE",
	           "a PNG or JPEG image filling the stamp (aspect kept), under the text with "
	           "--text; without it the image alone, no frame, 150 pt on its longer side "
	           "unless --rect is given"),
	CLI_OPTION("text", OPT_TEXT, "TEMPLATE",
	           "visible text, UTF-8, any script (default APPROVED, none with --image or "
	           "--qr); a newline starts a new line, e.g. --text $'Approved\\nQA' in bash; "
	           "variables: {page} {pages} {date} {date:FORMAT} {file} {author} {bates}, "
	           "{{ and }} for braces"),
	CLI_OPTION("small-line", OPT_SMALL, "TEMPLATE",
	           "the small line under the text (default '{author}  {date}', spaces at its "
	           "ends dropped; '' for none)"),
	CLI_OPTION("no-date", OPT_NO_DATE, NULL, "the small line without the date: --small-line "
	           "'{author}'"),
	CLI_OPTION("qr", OPT_QR, "TEMPLATE",
	           "a QR code of TEMPLATE (UTF-8, as bytes; variables as in --text), drawn as "
	           "vector paths in black on "
	           "white: left of the text with --text, else alone filling the stamp (72 pt "
	           "unless --rect is given); at least 1.5 pt a module, so that it scans at "
	           "150 dpi"),
	CLI_OPTION("qr-level", OPT_QR_LEVEL, "L|M|Q|H",
	           "its error correction: about 7, 15 (default M), 25 or 30 per cent may be "
	           "lost; at most 2953, 2331, 1663 or 1273 bytes (one less when not ASCII)"),
	CLI_OPTION("freetext", OPT_FREETEXT, NULL, "a /FreeText annotation instead of a /Stamp"),
	CLI_OPTION("font", OPT_FONT, "FILE|FAMILY",
	           "draw the text in this font (a path, or a fontconfig family such as 'Noto "
	           "Sans'); repeat it for a fallback list, tried in order, then installed "
	           "fonts for characters none of them has; default: Helvetica-Bold for "
	           "WinAnsi text, else installed fonts (a subset of each font used is "
	           "embedded)"),
	CLI_OPTION("rect", OPT_RECT, "X1,Y1,X2,Y2",
	           "the rectangle in default user space (overrides --position; not with "
	           "--offset, --rotate or --scale)"),
	CLI_OPTION("position", OPT_POSITION, "WHERE",
	           "top-left, top, top-right (default), left, center (or centre), right, "
	           "bottom-left, bottom or bottom-right, on the page as shown (honouring "
	           "/Rotate and the CropBox)"),
	CLI_OPTION("margin", OPT_MARGIN, "POINTS", "distance from the page edges (default 36)"),
	CLI_OPTION("offset", OPT_OFFSET, "DX,DY",
	           "points added to the position, x right and y up on the page as shown"),
	CLI_OPTION("rotate", OPT_ROTATE, "DEG|diagonal",
	           "turn the stamp DEG degrees counter-clockwise about its centre, or along the "
	           "page's diagonal from bottom left to top right"),
	CLI_OPTION("scale", OPT_SCALE, "F",
	           "the stamp's width (before --rotate) is F times the page's width, 0 < F <= "
	           "10 (default: its natural size)"),
	CLI_OPTION("author", OPT_AUTHOR, "STRING", "the annotation's author (/T)"),
	CLI_OPTION("note", OPT_NOTE, "STRING", "the popup text (/Contents; default: the text)"),
	CLI_OPTION("date", CLI_OPT_W_DATE, "now|DATE",
	           "the time stamp (/M, /CreationDate): 'now' (default) or ISO 8601, e.g. "
	           "2025-11-30T14:05:00+01:00"),
	CLI_OPTION("color", OPT_COLOR, "RRGGBB|R,G,B",
	           "hex, or three numbers from 0 to 1 (default 0.75,0.05,0.05)"),
	CLI_OPTION("opacity", OPT_OPACITY, "F",
	           "of the frame and text, and of the image unless --image-opacity is given, "
	           "0 < F <= 1 (default 1)"),
	CLI_OPTION("image-opacity", OPT_IMAGE_OPACITY, "F",
	           "of the image, 0 < F <= 1 (default: --opacity)"),
	CLI_OPTION("id", OPT_ID, "ID",
	           "the stamp's ID, 1 to 32 of A-Z a-z 0-9 _ -, recorded in each annotation "
	           "(/NM ID.PAGE); pages that already carry it are not stamped again, and a "
	           "file whose pages all do is skipped, unchanged (default: a hash of the "
	           "options that define the stamp, so an identical re-run matches; see Stamp "
	           "IDs in pdfstamp(1))"),
	CLI_HEADING("Bates numbers ({bates}):"),
	CLI_OPTION("bates-start", OPT_BATES_START, "N",
	           "the first number of the batch (default 1); the numbers continue across "
	           "the selected pages of the files in the order given, one file at a time"),
	CLI_OPTION("bates-prefix", OPT_BATES_PREFIX, "STRING", "written before each number"),
	CLI_OPTION("bates-digits", OPT_BATES_DIGITS, "D",
	           "zero-padded to D digits, 1 to 18 (default 6)"),
	CLI_INCLUDE(cli_write_opts),
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_INCLUDE(cli_key_section),
	CLI_END
};

static int cmd_stamp(int argc, char **argv);

const struct cli_cmd cli_cmd_stamp = {
	.name = "stamp",
	.run = cmd_stamp,
	.summary = "append a stamp annotation to a page as an encrypted incremental update",
	.synopsis = "[options] (-o OUT FILE | --in-place FILE...)",
	.about =
	"Appends a stamp annotation with its own appearance to a page (--page)\n"
	"or to the selected pages (--pages) of each FILE, as one encrypted\n"
	"incremental update: every existing byte (and so every existing\n"
	"signature) stays as it is.  Needs the annotation permission or the\n"
	"owner password.  New objects are encrypted under the file's own handler\n"
	"(AES-256, AES-128 or RC4); for RC4 or a key under 128 bits a warning\n"
	"says the handler is weak and points to 'pdfstamp rotate'.\n",
	.opts = stamp_opts
};

static int bad_value(const char *opt, const char *what)
{
	cli_error(NULL, "%s: %s", opt, what);
	return cli_usage_hint("stamp");
}

static int parse_page(const char *s, int64_t *page)
{
	int64_t v;

	if (strcmp(s, "first") == 0) {
		*page = 1;
		return 0;
	}
	if (strcmp(s, "last") == 0) {
		*page = PDFSTAMP_PAGE_LAST;
		return 0;
	}
	if (strcmp(s, "all") == 0) {
		*page = PDFSTAMP_PAGE_ALL;
		return 0;
	}
	if (cli_parse_int64(s, &v) != 0 || v < 1)
		return bad_value("--page", "expected a page number from 1, "
		                 "'first', 'last' or 'all'");
	*page = v;
	return 0;
}

/* Note 4. */
static int parse_pages(const char *s, const char **pages)
{
	pdfstamp_ctx *ctx = NULL;
	int rc;

	rc = pdfstamp_ctx_new(&ctx);
	if (rc != 0)
		return cli_lib_error(NULL, rc, NULL);
	rc = pdfstamp_pages_check(ctx, s, 0, NULL);
	if (rc != 0)
		rc = bad_value("--pages", pdfstamp_ctx_errmsg(ctx));
	else
		*pages = s;
	pdfstamp_ctx_free(ctx);
	return rc;
}

static int parse_rect(const char *s, double r[4])
{
	int i;

	if (cli_parse_doubles(s, r, 4) != 0)
		return bad_value("--rect", "expected four numbers X1,Y1,X2,Y2");
	for (i = 0; i < 4; i++)
		if (fabs(r[i]) > CLI_MAX_COORD)
			return bad_value("--rect", "a coordinate is out of range");
	if (!(r[0] < r[2] && r[1] < r[3]))
		return bad_value("--rect", "need X1 < X2 and Y1 < Y2");
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_color(const char *s, double c[3])
{
	int i, hi, lo;

	if (strchr(s, ',')) {
		if (cli_parse_doubles(s, c, 3) != 0)
			return bad_value("--color", "expected RRGGBB or three numbers R,G,B");
		for (i = 0; i < 3; i++)
			if (!(c[i] >= 0 && c[i] <= 1))
				return bad_value("--color", "components must be from 0 to 1");
		return 0;
	}
	if (s[0] == '#')
		s++;
	if (strlen(s) != 6)
		return bad_value("--color", "expected RRGGBB or three numbers R,G,B");
	for (i = 0; i < 3; i++) {
		hi = hexval((unsigned char)s[2 * i]);
		lo = hexval((unsigned char)s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return bad_value("--color", "expected RRGGBB or three numbers R,G,B");
		c[i] = (hi * 16 + lo) / 255.0;
	}
	return 0;
}

static int parse_icon(const char *s, const char **icon)
{
	int i;

	for (i = 0; icons[i]; i++) {
		if (strcasecmp(s, icons[i]) == 0) {
			*icon = icons[i];
			return 0;
		}
	}
	cli_error(NULL, "--icon: unknown stamp name '%s' (see 'pdfstamp stamp --help')", s);
	return cli_usage_hint("stamp");
}

static int parse_position(const char *s, enum pdfstamp_position *pos)
{
	int i;

	for (i = 0; positions[i].name; i++) {
		if (strcmp(s, positions[i].name) == 0) {
			*pos = positions[i].pos;
			return 0;
		}
	}
	return bad_value("--position", "expected top-left, top, top-right, left, center, "
	                 "right, bottom-left, bottom or bottom-right");
}

static int parse_offset(const char *s, double d[2])
{
	if (cli_parse_doubles(s, d, 2) != 0)
		return bad_value("--offset", "expected two numbers DX,DY (points)");
	if (!(fabs(d[0]) <= CLI_MAX_COORD && fabs(d[1]) <= CLI_MAX_COORD))
		return bad_value("--offset", "a distance is out of range");
	return 0;
}

static int parse_rotate(const char *s, struct pdfstamp_stamp_opts *so)
{
	if (strcmp(s, "diagonal") == 0) {
		so->diagonal = 1;
		so->rotate = 0;
		return 0;
	}
	if (cli_parse_double(s, &so->rotate) != 0 || !(fabs(so->rotate) <= CLI_MAX_ANGLE))
		return bad_value("--rotate", "expected an angle in degrees or 'diagonal'");
	so->diagonal = 0;
	return 0;
}

/* Three options that --rect leaves nothing to do for (note 6). */
static int check_rect(const struct pdfstamp_stamp_opts *so)
{
	if (so->has_rect && (so->offset[0] || so->offset[1] || so->rotate || so->diagonal ||
	                     so->scale)) {
		cli_error(NULL, "--rect is the stamp's place: --offset, --rotate and --scale "
		          "apply only without it");
		return cli_usage_hint("stamp");
	}
	return 0;
}

static int parse_qr_level(const char *s, enum pdfstamp_qr_level *level)
{
	static const char *const names[] = {"L", "M", "Q", "H"};
	int i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, names[i]) == 0) {
			*level = (enum pdfstamp_qr_level)i;
			return 0;
		}
	}
	return bad_value("--qr-level", "expected L, M, Q or H");
}

static int utf8_arg(const char *opt, const char *s, const char **dst)
{
	if (!cli_utf8_valid(s))
		return bad_value(opt, "not valid UTF-8");
	*dst = s;
	return 0;
}

#define CLI_MAX_FONTS 16   /* --font options (the library takes at most 24 fonts) */

struct stamp_cmd {
	struct pdfstamp_stamp_opts so;
	const char *fonts[CLI_MAX_FONTS - 1];   /* the second and later --font (note 3) */
	struct cli_run *run;
	int no_date;
	unsigned uses;         /* PDFSTAMP_USES_* of the templates */
	/* Bates numbering across the files (note 6) */
	size_t next;           /* the index of the file expected next */
	int64_t taken;         /* numbers the files before it took */
	const char *failed;    /* the file after which the count is unknown */
	int page_given;
};

static int call_stamp(struct cli_file *f, void *arg)
{
	struct stamp_cmd *c = arg;
	struct pdfstamp_stamp_opts so = c->so;
	struct pdfstamp_result *res = f->res;
	int rc;

	so.file_name = f->name;
	if (!(c->uses & PDFSTAMP_USES_BATES)) {
		rc = pdfstamp_stamp(f->doc, &so, &f->wopts, res);
		f->unchanged = rc == 0 && res->skipped; /* note 7 */
		return rc;
	}
	if (!c->failed && f->index != c->next) /* a file before it failed to open */
		c->failed = "an earlier file";
	if (c->failed) {
		snprintf(f->why, sizeof f->why, "not stamped: %s of the batch failed, so the "
		         "Bates numbers of this file are unknown", c->failed);
		return PDFSTAMP_E_IO;
	}
	so.bates_offset = c->taken;
	if ((rc = pdfstamp_stamp(f->doc, &so, &f->wopts, res)) != 0) {
		c->failed = "the file before it";
		return rc;
	}
	f->unchanged = res->skipped; /* note 7 */
	c->taken += res->pages_stamped + res->pages_already;
	c->next = f->index + 1;
	return 0;
}

/* The members of note 7 in the --json line. */
static void json_id(struct cli_json *j, const struct pdfstamp_result *res)
{
	cli_json_key(j, "id");
	cli_json_str(j, res->id);
	cli_json_key(j, "pages_stamped");
	cli_json_int(j, res->pages_stamped);
	cli_json_key(j, "pages_already");
	cli_json_int(j, res->pages_already);
}

/* Note 6, and the templates checked before any file is opened. */
static int check_stamp(void *arg)
{
	struct stamp_cmd *c = arg;
	pdfstamp_ctx *ctx = NULL;
	int rc;

	if (pdfstamp_ctx_new(&ctx) != 0) {
		cli_error(NULL, "out of memory");
		return CLI_EXIT_IO;
	}
	rc = pdfstamp_stamp_uses(ctx, &c->so, &c->uses);
	if (rc != 0) {
		cli_error(NULL, "%s", pdfstamp_ctx_errmsg(ctx));
		pdfstamp_ctx_free(ctx);
		return cli_usage_hint("stamp");
	}
	pdfstamp_ctx_free(ctx);
	if (!(c->uses & PDFSTAMP_USES_BATES))
		return 0;
	if (c->run->ledger || c->run->shard_n) {
		cli_error(NULL, "{bates} numbers every file of the list on every run: it cannot "
		          "be used with %s (a re-run skips the pages already stamped with the "
		          "same stamp and keeps their numbers)",
		          c->run->ledger ? "--ledger" : "--shard");
		return cli_usage_hint("stamp");
	}
	c->run->jobs = 1;
	return 0;
}

static int output_stamp(const struct cli_file *f, void *arg)
{
	const struct stamp_cmd *c = arg;
	const struct pdfstamp_result *res = f->res;
	struct cli_json j;
	int i;

	if (f->run->json) {
		cli_file_json_begin(&j, f);
		if (res->skipped) {
			cli_json_key(&j, "skipped");
			cli_json_str(&j, "already stamped");
		} else {
			cli_json_update(&j, res);
		}
		if (res->has_bates) {
			cli_json_key(&j, "bates_first");
			cli_json_int(&j, res->bates_first);
			cli_json_key(&j, "bates_last");
			cli_json_int(&j, res->bates_last);
		}
		json_id(&j, res);
		cli_json_line_end(&j, f->name);
		return CLI_EXIT_OK;
	}
	if (f->run->dry_run && !res->skipped)
		return cli_dry_run_update(f, res, "annotation");
	if (!f->run->verbose && !f->run->dry_run)
		return CLI_EXIT_OK;
	if (res->skipped) {
		fputs(f->run->dry_run ? "dry run: skipped " : "skipped ", cli_out());
		cli_put_safe(cli_out(), f->name);
		fprintf(cli_out(), ": already stamped (ID %s, %" PRId64 " page%s)\n", res->id,
		        res->pages_already, res->pages_already == 1 ? "" : "s");
		return CLI_EXIT_OK;
	}
	if (c->so.pages || c->so.page == PDFSTAMP_PAGE_ALL)
		fprintf(cli_out(), "stamped %" PRId64 " page%s of ", res->pages_stamped,
		        res->pages_stamped == 1 ? "" : "s");
	else if (c->so.page == PDFSTAMP_PAGE_LAST)
		fputs("stamped the last page of ", cli_out());
	else
		fprintf(cli_out(), "stamped page %" PRId64 " of ", c->so.page);
	cli_put_safe(cli_out(), f->name);
	fprintf(cli_out(), ": annotation%s", res->nobjects == 1 ? "" : "s");
	for (i = 0; i < res->nobjects; i++)
		fprintf(cli_out(), "%s %" PRIu32 " 0 R", i ? "," : "", res->objects[i]);
	fprintf(cli_out(), ", %" PRId64 " bytes appended (ID %s", res->bytes_appended, res->id);
	if (res->pages_already)
		fprintf(cli_out(), "; %" PRId64 " page%s already stamped", res->pages_already,
		        res->pages_already == 1 ? "" : "s");
	fputs(")\n", cli_out());
	return CLI_EXIT_OK;
}

static const struct cli_ops stamp_ops = {
	.name = "stamp",
	.open = CLI_OPEN_UPDATE,
	.flags = CLI_FLUSH_LINES | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_ALLOW_TRAILING) | CLI_HINT(PDFSTAMP_HINT_ALLOW_IDENTITY) |
	         CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE) | CLI_HINT(PDFSTAMP_HINT_FONT),
	.check = check_stamp,
	.call = call_stamp,
	.output = output_stamp,
	CLI_UPDATE_RES
};

static int stamp_option(void *arg, int id, char *optarg)
{
	struct stamp_cmd *c = arg;
	struct pdfstamp_stamp_opts *so = &c->so;
	int rc = 0;

	switch (id) {
	case OPT_PAGE:
		if (so->pages)
			return bad_value("--page", "give --page or --pages, not both");
		c->page_given = 1;
		return parse_page(optarg, &so->page);
	case OPT_PAGES:
		if (c->page_given)
			return bad_value("--pages", "give --page or --pages, not both");
		return parse_pages(optarg, &so->pages);
	case OPT_TEXT:
		rc = utf8_arg("--text", optarg, &so->text);
		if (rc == 0 && !*optarg)
			rc = bad_value("--text", "the text is empty");
		return rc;
	case OPT_ICON:
		return parse_icon(optarg, &so->icon);
	case OPT_RECT:
		rc = parse_rect(optarg, so->rect);
		so->has_rect = rc == 0;
		return rc;
	case OPT_POSITION:
		return parse_position(optarg, &so->position);
	case OPT_MARGIN:
		if (cli_parse_double(optarg, &so->margin) != 0 ||
		    !(so->margin >= 0 && so->margin <= CLI_MAX_COORD))
			rc = bad_value("--margin", "expected a number of points >= 0");
		return rc;
	case OPT_AUTHOR:
		return utf8_arg("--author", optarg, &so->author);
	case OPT_NOTE:
		return utf8_arg("--note", optarg, &so->note);
	case OPT_COLOR:
		return parse_color(optarg, so->color);
	case OPT_OPACITY:
		if (cli_parse_double(optarg, &so->opacity) != 0 ||
		    !(so->opacity > 0 && so->opacity <= 1))
			rc = bad_value("--opacity", "expected a number with 0 < F <= 1");
		return rc;
	case OPT_OFFSET:
		return parse_offset(optarg, so->offset);
	case OPT_ROTATE:
		return parse_rotate(optarg, so);
	case OPT_SCALE:
		if (cli_parse_double(optarg, &so->scale) != 0 ||
		    !(so->scale > 0 && so->scale <= 10))
			rc = bad_value("--scale", "expected a number with 0 < F <= 10");
		return rc;
	case OPT_IMAGE_OPACITY:
		if (cli_parse_double(optarg, &so->image_opacity) != 0 ||
		    !(so->image_opacity > 0 && so->image_opacity <= 1))
			rc = bad_value("--image-opacity", "expected a number with 0 < F <= 1");
		return rc;
	case OPT_FREETEXT:
		so->freetext = 1;
		return 0;
	case OPT_FONT:
		if (!*optarg)
			return bad_value("--font", "expected a font file or a font family");
		if (!so->font) {
			so->font = optarg;
		} else if (so->nfonts < CLI_MAX_FONTS - 1) {
			c->fonts[so->nfonts++] = optarg;
			so->fonts = c->fonts;
		} else {
			rc = bad_value("--font", "at most 16 fonts");
		}
		return rc;
	case OPT_IMAGE:
		so->image = optarg;
		if (!*optarg)
			rc = bad_value("--image", "expected a PNG or JPEG file");
		return rc;
	case OPT_SMALL:
		return utf8_arg("--small-line", optarg, &so->small);
	case OPT_NO_DATE:
		((struct stamp_cmd *)arg)->no_date = 1;
		return 0;
	case OPT_BATES_START:
		if (cli_parse_int64(optarg, &so->bates_start) != 0 || so->bates_start < 0 ||
		    so->bates_start > INT64_C(999999999999999999))
			rc = bad_value("--bates-start", "expected a number from 0 to 10^18 - 1");
		return rc;
	case OPT_BATES_PREFIX:
		rc = utf8_arg("--bates-prefix", optarg, &so->bates_prefix);
		if (rc == 0 && strlen(optarg) > 64)
			rc = bad_value("--bates-prefix", "at most 64 bytes");
		return rc;
	case OPT_BATES_DIGITS: {
		int64_t d;
		if (cli_parse_int64(optarg, &d) != 0 || d < 1 || d > 18)
			return bad_value("--bates-digits", "expected a number from 1 to 18");
		so->bates_digits = (int)d;
		return 0;
	}
	case OPT_QR:
		rc = utf8_arg("--qr", optarg, &so->qr);
		if (rc == 0 && !*optarg)
			rc = bad_value("--qr", "the string is empty");
		return rc;
	case OPT_QR_LEVEL:
		return parse_qr_level(optarg, &so->qr_level);
	case OPT_ID:
		so->id = optarg;
		if (strlen(optarg) < 1 || strlen(optarg) > 32 ||
		    strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                   "0123456789_-") != strlen(optarg))
			rc = bad_value("--id",
			               "expected 1 to 32 characters of A-Z, a-z, 0-9, _ and -");
		return rc;
	default:
		return -1;
	}
}

static int cmd_stamp(int argc, char **argv)
{
	const struct pdfstamp_stamp_opts so_init = PDFSTAMP_STAMP_OPTS_INIT;
	struct stamp_cmd c;
	struct cli_run w;
	int rc;

	memset(&w, 0, sizeof w);
	memset(&c, 0, sizeof c);
	c.so = so_init;
	if (cli_parse(&cli_cmd_stamp, argc, argv, &w, stamp_option, &c, &rc))
		return rc;
	if ((rc = check_rect(&c.so)) != 0)
		return rc;
	c.so.date = w.date;
	c.run = &w;
	if (c.no_date) {
		if (c.so.small)
			return cli_fail_early(&w, argc - optind, argv + optind,
			                      bad_value("--no-date", "--small-line says what the "
			                                "small line is: give one of them"));
		c.so.small = "{author}";
	}
	rc = cli_each_file(&stamp_ops, &w, argc - optind, argv + optind, &c);
	return rc;
}
