/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c - a tiny streaming JSON writer (one value per line) and a strict
 * UTF-8 decoder.
 *
 * DESIGN NOTES
 *
 *  1. Output is pure ASCII: every byte >= 0x80 is either part of a valid
 *     UTF-8 sequence, written as \uXXXX (a surrogate pair above U+FFFF, RFC
 *     8259 section 7), or replaced by \ufffd.  Control characters use the
 *     short escapes where JSON has them, else \u00XX; DEL is escaped too.
 *     So a file name or PDF string can never break the one-line framing.
 *  2. The writer tracks nesting with a small stack of "first member" flags
 *     and inserts commas itself; an unbalanced sequence of calls sets `bad`
 *     (checked by cli_json_end) rather than producing invalid output
 *     silently.
 *  3. UTF-8 decoding is strict (RFC 3629): no overlong forms, no surrogate
 *     code points, nothing above U+10FFFF, no truncated sequences.
 *  4. Every command's --json line starts the same way, written only here:
 *     {"file":F,"ok":true,...} for a file that succeeded and
 *     {"file":F,"ok":false,"exit":N,"error":"message",...} for one that
 *     failed (cli_json_ok_begin, cli_json_fail_begin, cli_json_failure),
 *     so `jq 'select(.ok | not)'` picks exactly the failures of any
 *     command.  verify adds its report's members to either shape.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_utf8_next(const unsigned char *s, uint32_t *cp)
{
	uint32_t c, min;
	int n, i;

	c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0; /* continuation byte, 0xc0/0xc1 or 0xf5..0xff */
	}
	for (i = 1; i < n; i++) {
		/* A NUL terminator fails this test, so we never read past it. */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static void cli_json_init(struct cli_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->bad = 0;
	j->first[0] = 1;
	j->after_key = 0;
}

/* Writes the separator before a value (or a key) at the current level. */
static void sep(struct cli_json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (!j->first[j->depth])
		putc(',', j->f);
	j->first[j->depth] = 0;
}

static void begin(struct cli_json *j, int ch)
{
	sep(j);
	putc(ch, j->f);
	if (j->depth + 1 >= CLI_JSON_MAX_DEPTH) {
		j->bad = 1;
		return;
	}
	j->depth++;
	j->first[j->depth] = 1;
}

static void end(struct cli_json *j, int ch)
{
	if (j->depth == 0 || j->after_key)
		j->bad = 1;
	else
		j->depth--;
	putc(ch, j->f);
}

void cli_json_obj_begin(struct cli_json *j)
{
	begin(j, '{');
}

void cli_json_obj_end(struct cli_json *j)
{
	end(j, '}');
}

void cli_json_arr_begin(struct cli_json *j)
{
	begin(j, '[');
}

void cli_json_arr_end(struct cli_json *j)
{
	end(j, ']');
}

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	int n;

	putc('"', f);
	while (*p) {
		switch (*p) {
		case '"': fputs("\\\"", f); p++; continue;
		case '\\': fputs("\\\\", f); p++; continue;
		case '\b': fputs("\\b", f); p++; continue;
		case '\f': fputs("\\f", f); p++; continue;
		case '\n': fputs("\\n", f); p++; continue;
		case '\r': fputs("\\r", f); p++; continue;
		case '\t': fputs("\\t", f); p++; continue;
		default: break;
		}
		if (*p >= 0x20 && *p < 0x7f) {
			putc(*p++, f);
			continue;
		}
		n = cli_utf8_next(p, &cp);
		if (n == 0) {
			cp = 0xfffd; /* an invalid byte; resynchronise on the next */
			n = 1;
		}
		p += n;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			fprintf(f, "\\u%04x\\u%04x", (unsigned)(0xd800 + (cp >> 10)),
			        (unsigned)(0xdc00 + (cp & 0x3ff)));
		} else {
			fprintf(f, "\\u%04x", (unsigned)cp);
		}
	}
	putc('"', f);
}

void cli_json_key(struct cli_json *j, const char *key)
{
	if (j->after_key || j->depth == 0)
		j->bad = 1;
	sep(j);
	put_string(j->f, key);
	putc(':', j->f);
	j->after_key = 1;
}

void cli_json_str(struct cli_json *j, const char *s)
{
	sep(j);
	put_string(j->f, s);
}

void cli_json_int(struct cli_json *j, int64_t v)
{
	sep(j);
	fprintf(j->f, "%" PRId64, v);
}

void cli_json_bool(struct cli_json *j, int v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void cli_json_null(struct cli_json *j)
{
	sep(j);
	fputs("null", j->f);
}

void cli_json_weak(struct cli_json *j, const char *weak, size_t n)
{
	char s[64];
	size_t len = strnlen(weak, n);

	if (len == 0) {
		cli_json_null(j);
		return;
	}
	if (len > sizeof s - 1)
		len = sizeof s - 1;
	memcpy(s, weak, len);
	s[len] = '\0';
	cli_json_str(j, s);
}

void cli_json_double(struct cli_json *j, double v, int decimals)
{
	sep(j);
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	/* The program never calls setlocale, so the point is '.'. */
	if (isfinite(v))
		fprintf(j->f, "%.*f", decimals, v);
	else
		fputs("null", j->f);
}

/* Ends the line.  Returns 0, or -1 if the structure was unbalanced. */
static int cli_json_end(struct cli_json *j)
{
	putc('\n', j->f);
	if (j->depth != 0 || j->after_key)
		j->bad = 1;
	return j->bad ? -1 : 0;
}

/* ---- the line shapes every command shares (pdfstamp(1), JSON OUTPUT) ---- */

void cli_json_ok_begin(struct cli_json *j, const char *file)
{
	cli_json_init(j, cli_out());
	cli_json_obj_begin(j);
	cli_json_key(j, "file");
	cli_json_str(j, file);
	cli_json_key(j, "ok");
	cli_json_bool(j, 1);
}

void cli_json_fail_begin(struct cli_json *j, const char *file, int status,
                         const char *msg)
{
	cli_json_init(j, cli_out());
	cli_json_obj_begin(j);
	cli_json_key(j, "file");
	cli_json_str(j, file);
	cli_json_key(j, "ok");
	cli_json_bool(j, 0);
	cli_json_key(j, "exit");
	cli_json_int(j, status);
	cli_json_key(j, "error");
	cli_json_str(j, msg && *msg ? msg : "failed");
}

void cli_json_line_end(struct cli_json *j, const char *file)
{
	cli_json_obj_end(j);
	if (cli_json_end(j) != 0)
		cli_error(file, "internal error: unbalanced JSON output");
}

void cli_json_failure(const char *file, int status, const char *msg)
{
	struct cli_json j;

	cli_json_fail_begin(&j, file, status, msg);
	cli_json_line_end(&j, file);
}
