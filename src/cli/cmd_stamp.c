/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_stamp.c - `pdfstamp stamp [options] FILE...`: append a stamp
 * annotation to one page, the last page or every page of each FILE as one
 * encrypted incremental update.
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
 *  3. Strings (--text, --author, --note) must be valid UTF-8; the text may
 *     hold newlines (one line each).  The library shapes it in a font that
 *     covers it (the --font options in order, then fontconfig's fallback
 *     for the characters they lack, else Helvetica-Bold for WinAnsi text)
 *     and writes /Contents as UTF-16BE when it is not ASCII.  --font may
 *     be repeated (at most CLI_MAX_FONTS times): the first is the options'
 *     font, the others their fonts[].  --font and --image are passed on as
 *     they are: the library opens them (and refuses a file that is not a
 *     font or an image) before anything is written.
 *  4. Coordinates and the margin are bounded (|v| <= CLI_MAX_COORD) so
 *     the library never has to write absurd reals.
 *  5. The option table is in the order of --help, grouped (what the stamp
 *     is, its text, where it goes, its data, its look).  Options with the
 *     same first letter keep the order they had in the getopt table it
 *     replaced (opts.c note 2): --icon before --image, --freetext before
 *     --font, so `--i` and `--f` name their candidates as before.
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

enum {
	OPT_PAGE = CLI_OPT_CMD_BASE,
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
	OPT_IMAGE
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
	{ "top-right", PDFSTAMP_POS_TOP_RIGHT },
	{ "top-left", PDFSTAMP_POS_TOP_LEFT },
	{ "bottom-right", PDFSTAMP_POS_BOTTOM_RIGHT },
	{ "bottom-left", PDFSTAMP_POS_BOTTOM_LEFT },
	{ "center", PDFSTAMP_POS_CENTER },
	{ NULL, PDFSTAMP_POS_TOP_RIGHT }
};

/* Note 5: the order of the rows. */
static const struct cli_opt stamp_opts[] = {
	CLI_HEADING("Stamp options:"),
	CLI_OPTION("page", OPT_PAGE, "N|first|last|all", "the page to stamp (default 1)"),
	CLI_OPTION_LIST("icon", OPT_ICON, "NAME",
	                "the stamp's /Name (default Approved), one of:", icons),
	CLI_OPTION("image", OPT_IMAGE, "FILE",
	           "a PNG or JPEG image filling the stamp (aspect kept), under the text with "
	           "--text; without it the image alone, no frame, 150 pt on its longer side "
	           "unless --rect is given"),
	CLI_OPTION("text", OPT_TEXT, "STRING",
	           "visible text, UTF-8, any script (default APPROVED, none with --image); a "
	           "newline starts a new line, e.g. --text $'Approved\\nQA' in bash"),
	CLI_OPTION("freetext", OPT_FREETEXT, NULL, "a /FreeText annotation instead of a /Stamp"),
	CLI_OPTION("font", OPT_FONT, "FILE|FAMILY",
	           "draw the text in this font (a path, or a fontconfig family such as 'Noto "
	           "Sans'); repeat it for a fallback list, tried in order, then installed "
	           "fonts for characters none of them has; default: Helvetica-Bold for "
	           "WinAnsi text, else installed fonts (a subset of each font used is "
	           "embedded)"),
	CLI_OPTION("rect", OPT_RECT, "X1,Y1,X2,Y2",
	           "the rectangle in default user space (overrides --position)"),
	CLI_OPTION("position", OPT_POSITION, "WHERE",
	           "top-right (default), top-left, bottom-right, bottom-left or center, on the "
	           "page as shown (honouring /Rotate and the CropBox)"),
	CLI_OPTION("margin", OPT_MARGIN, "POINTS", "distance from the page edges (default 36)"),
	CLI_OPTION("author", OPT_AUTHOR, "STRING", "the annotation's author (/T)"),
	CLI_OPTION("note", OPT_NOTE, "STRING", "the popup text (/Contents; default: the text)"),
	CLI_OPTION("date", CLI_OPT_W_DATE, "now|DATE",
	           "the time stamp (/M, /CreationDate): 'now' (default) or ISO 8601, e.g. "
	           "2025-11-30T14:05:00+01:00"),
	CLI_OPTION("color", OPT_COLOR, "RRGGBB|R,G,B",
	           "hex, or three numbers from 0 to 1 (default 0.75,0.05,0.05)"),
	CLI_OPTION("opacity", OPT_OPACITY, "F", "0 < F <= 1 (default 1)"),
	CLI_INCLUDE(cli_write_opts),
	CLI_INCLUDE(cli_batch_opts),
	CLI_INCLUDE(cli_pw_section),
	CLI_END
};

static int cmd_stamp(int argc, char **argv);

const struct cli_cmd cli_cmd_stamp = {
	.name = "stamp",
	.run = cmd_stamp,
	.summary = "append a stamp annotation to a page as an encrypted incremental update",
	.synopsis = "[options] (-o OUT FILE | --in-place FILE...)",
	.about =
	"Appends a stamp annotation with its own appearance to a page of each\n"
	"FILE, as one encrypted incremental update: every existing byte (and so\n"
	"every existing signature) stays as it is.  Needs the annotation\n"
	"permission or the owner password.  New objects are encrypted under the\n"
	"file's own handler (AES-256, AES-128 or RC4); for RC4 or a key under 128\n"
	"bits a warning says the handler is weak and points to 'pdfstamp rotate'.\n",
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
	return bad_value("--position", "expected top-right, top-left, bottom-right, "
	                 "bottom-left or center");
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
};

static int call_stamp(struct cli_file *f, void *arg)
{
	struct stamp_cmd *c = arg;

	return pdfstamp_stamp(f->doc, &c->so, &f->wopts, f->res);
}

static int output_stamp(const struct cli_file *f, void *arg)
{
	const struct stamp_cmd *c = arg;
	const struct pdfstamp_result *res = f->res;
	struct cli_json j;
	int i;

	if (f->run->json) {
		cli_file_json_begin(&j, f);
		cli_json_update(&j, res);
		cli_json_line_end(&j, f->name);
		return CLI_EXIT_OK;
	}
	if (!f->run->verbose)
		return CLI_EXIT_OK;
	if (c->so.page == PDFSTAMP_PAGE_ALL)
		fprintf(cli_out(), "stamped %d pages of ", res->nobjects);
	else if (c->so.page == PDFSTAMP_PAGE_LAST)
		fputs("stamped the last page of ", cli_out());
	else
		fprintf(cli_out(), "stamped page %" PRId64 " of ", c->so.page);
	cli_put_safe(cli_out(), f->name);
	fprintf(cli_out(), ": annotation%s", res->nobjects == 1 ? "" : "s");
	for (i = 0; i < res->nobjects; i++)
		fprintf(cli_out(), "%s %" PRIu32 " 0 R", i ? "," : "", res->objects[i]);
	fprintf(cli_out(), ", %" PRId64 " bytes appended\n", res->bytes_appended);
	return CLI_EXIT_OK;
}

static const struct cli_ops stamp_ops = {
	.name = "stamp",
	.open = CLI_OPEN_UPDATE,
	.flags = CLI_FLUSH_LINES | CLI_BATCH,
	.hints = CLI_HINT(PDFSTAMP_HINT_ALLOW_TRAILING) | CLI_HINT(PDFSTAMP_HINT_ALLOW_IDENTITY) |
	         CLI_HINT(PDFSTAMP_HINT_AUTH_FORCE) | CLI_HINT(PDFSTAMP_HINT_FONT),
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
		return parse_page(optarg, &so->page);
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
	c.so.date = w.date;
	rc = cli_each_file(&stamp_ops, &w, argc - optind, argv + optind, &c);
	return rc;
}
