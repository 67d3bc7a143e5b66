/* SPDX-License-Identifier: Apache-2.0 */
/*
 * template.c - the stamp's templates: its text, its small line and its QR
 * code, with variables expanded per page (pdfstamp(1) TEMPLATES).
 *
 * DESIGN NOTES
 *
 *  1. Syntax.  A template is UTF-8 text in which {NAME} stands for a
 *     variable: {page}, {pages}, {date}, {date:FORMAT}, {file}, {author},
 *     {bates}.  "{{" is a literal '{' and "}}" a literal '}'; a '}' alone
 *     stands for itself (nothing can be mistaken for a variable without a
 *     '{').  Any other '{' is an error that names what follows it: an
 *     unknown variable, or a brace that is never closed.  FORMAT runs to
 *     the first '}' (it cannot hold one) and is given to strftime(3) in
 *     the C locale (date.c ps_time_format); {date} is {date:%Y-%m-%d %H:%M}.
 *     Templates are parsed once, before any file is written, so a typo is
 *     a usage error for every file alike.
 *  2. Values.  {page} and {pages} are decimal; {bates} is the prefix and
 *     the number zero-padded to its digits (a wider number is written in
 *     full); {file} is the base name of the path (after the last '/');
 *     {author} is at most 100 bytes of the author, cut between characters.
 *     A value never adds a line or a control character: control
 *     characters (and, in a file name, bytes that are not UTF-8) become
 *     '?', so a crafted file name cannot change the stamp's layout or
 *     break its text.
 *  3. What a template uses (ps_tmpl_uses) tells the stamp whether its
 *     text differs per page ({page}, {bates}) and whether it needs the
 *     page count or numbers: the stamp lays out one text per distinct
 *     expansion and shares everything else (stamp.c).
 * State: a ps_tmpl is immutable once parsed; expanding it only reads it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"
#include "text.h"

#define MAX_AUTHOR 100      /* bytes of {author} (note 2) */
#define MAX_TEMPLATE 65536  /* bytes of a template */
#define MAX_PARTS 4096      /* variables and literals in one template */

enum part_kind { P_LIT, P_PAGE, P_PAGES, P_DATE, P_FILE, P_AUTHOR, P_BATES };

typedef struct part {
	enum part_kind kind;
	size_t off, len;     /* P_LIT: the text, P_DATE: the format, in t->text */
} part;

struct ps_tmpl {
	char *text;          /* literals (unescaped) and date formats, NUL after each format */
	part *parts;
	size_t nparts;
	unsigned uses;
};

void ps_tmpl_free(ps_tmpl *t)
{
	if (!t)
		return;
	free(t->text);
	free(t->parts);
	free(t);
}

unsigned ps_tmpl_uses(const ps_tmpl *t)
{
	return t ? t->uses : 0;
}

static int add_part(ps_tmpl *t, enum part_kind k, size_t off, size_t len)
{
	if (k == P_LIT && t->nparts && t->parts[t->nparts - 1].kind == P_LIT &&
	    t->parts[t->nparts - 1].off + t->parts[t->nparts - 1].len == off) {
		t->parts[t->nparts - 1].len += len;
		return 0;
	}
	if (t->nparts >= MAX_PARTS)
		return -1;
	if (ps_vec_grow((void **)&t->parts, t->nparts, sizeof *t->parts) < 0)
		return -1;
	t->parts[t->nparts].kind = k;
	t->parts[t->nparts].off = off;
	t->parts[t->nparts].len = len;
	t->nparts++;
	return 0;
}

static const struct {
	const char *name;
	enum part_kind kind;
	unsigned uses;
} vars[] = {
	{"page", P_PAGE, PS_TMPL_PER_PAGE},
	{"pages", P_PAGES, PS_TMPL_PAGES},
	{"date", P_DATE, 0},
	{"file", P_FILE, 0},
	{"author", P_AUTHOR, 0},
	{"bates", P_BATES, PS_TMPL_PER_PAGE | PS_TMPL_BATES},
};

int ps_tmpl_parse(ps_ctx *ctx, const char *what, const char *src, ps_tmpl **out)
{
	ps_tmpl *t;
	size_t n = strlen(src), i = 0, w = 0, k;
	uint32_t cp;

	*out = NULL;
	if (n > MAX_TEMPLATE)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "%s is too long (at most %d bytes)", what,
		              MAX_TEMPLATE);
	for (k = 0; k < n;) {
		size_t l = ps_text_utf8_decode((const uint8_t *)src + k, n - k, &cp);
		if (!l)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "%s is not valid UTF-8", what);
		k += l;
	}
	if (!(t = calloc(1, sizeof *t)) || !(t->text = malloc(n + 1)))
		goto oom;
	while (i < n) {
		const char *name, *end;
		size_t nl;
		if (src[i] == '}') { /* "}}" is one brace, a lone one itself */
			t->text[w] = '}';
			if (add_part(t, P_LIT, w++, 1) < 0)
				goto oom_or_many;
			i += src[i + 1] == '}' ? 2 : 1;
			continue;
		}
		if (src[i] != '{') {
			size_t j = i;
			while (j < n && src[j] != '{' && src[j] != '}')
				j++;
			memcpy(t->text + w, src + i, j - i);
			if (add_part(t, P_LIT, w, j - i) < 0)
				goto oom_or_many;
			w += j - i;
			i = j;
			continue;
		}
		if (src[i + 1] == '{') {
			t->text[w] = '{';
			if (add_part(t, P_LIT, w++, 1) < 0)
				goto oom_or_many;
			i += 2;
			continue;
		}
		name = src + i + 1;
		if (!(end = strchr(name, '}'))) {
			ps_tmpl_free(t);
			return ps_err(ctx, PDFSTAMP_E_USAGE, "%s: a '{' at byte %zu is never "
			              "closed (write {{ for a brace)", what, i + 1);
		}
		nl = (size_t)(end - name);
		if (nl > 5 && memcmp(name, "date:", 5) == 0) {
			/* the format, NUL-terminated, among the literals */
			memcpy(t->text + w, name + 5, nl - 5);
			t->text[w + nl - 5] = '\0';
			if (add_part(t, P_DATE, w, nl - 5) < 0)
				goto oom_or_many;
			w += nl - 5 + 1;
			i += nl + 2;
			continue;
		}
		for (k = 0; k < sizeof vars / sizeof vars[0]; k++)
			if (strlen(vars[k].name) == nl && memcmp(vars[k].name, name, nl) == 0)
				break;
		if (k == sizeof vars / sizeof vars[0]) {
			ps_tmpl_free(t);
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "%s: unknown variable {%.*s} (known: {page} {pages} {date} "
			              "{date:FORMAT} {file} {author} {bates}; {{ is a brace)", what,
			              (int)(nl > 40 ? 40 : nl), name);
		}
		if (vars[k].kind == P_DATE) {
			static const char def[] = "%Y-%m-%d %H:%M";
			char *grown = realloc(t->text, n + 1 + w + sizeof def);
			/* the default format is longer than "{date}": room for it */
			if (!grown)
				goto oom;
			t->text = grown;
			memcpy(t->text + w, def, sizeof def);
			if (add_part(t, P_DATE, w, sizeof def - 1) < 0)
				goto oom_or_many;
			w += sizeof def;
		} else if (add_part(t, vars[k].kind, 0, 0) < 0) {
			goto oom_or_many;
		}
		t->uses |= vars[k].uses;
		i += nl + 2;
	}
	*out = t;
	return 0;
oom_or_many:
	if (t->nparts >= MAX_PARTS) {
		ps_tmpl_free(t);
		return ps_err(ctx, PDFSTAMP_E_USAGE, "%s has more than %d parts", what, MAX_PARTS);
	}
oom:
	ps_tmpl_free(t);
	return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
}

/* Appends S[0..N) with control characters, and with NOT_UTF8 bytes that
 * are not UTF-8, as '?' (note 2). */
static void put_value(ps_buf *out, const char *s, size_t n)
{
	size_t i = 0, l;
	uint32_t cp;

	while (i < n) {
		l = ps_text_utf8_decode((const uint8_t *)s + i, n - i, &cp);
		if (!l) {
			ps_buf_putc(out, '?');
			i++;
			continue;
		}
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			ps_buf_putc(out, '?');
		else
			ps_buf_append(out, s + i, l);
		i += l;
	}
}

int ps_tmpl_expand(ps_ctx *ctx, const ps_tmpl *t, const ps_tmpl_vars *v, ps_buf *out)
{
	size_t i;
	int rc;

	for (i = 0; i < t->nparts; i++) {
		const part *p = &t->parts[i];
		const char *s;
		size_t n;
		switch (p->kind) {
		case P_LIT:
			ps_buf_append(out, t->text + p->off, p->len);
			break;
		case P_PAGE:
			ps_buf_printf(out, "%" PRId64, v->page);
			break;
		case P_PAGES:
			ps_buf_printf(out, "%" PRId64, v->pages);
			break;
		case P_DATE:
			if ((rc = ps_time_format(ctx, &v->when, t->text + p->off, out)) < 0)
				return rc;
			break;
		case P_FILE:
			s = v->file ? v->file : "";
			if (strrchr(s, '/'))
				s = strrchr(s, '/') + 1;
			put_value(out, s, strlen(s));
			break;
		case P_AUTHOR:
			s = v->author ? v->author : "";
			n = strnlen(s, MAX_AUTHOR);
			if (s[n]) /* cut between characters */
				while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
					n--;
			put_value(out, s, n);
			break;
		case P_BATES:
			if (v->bates_prefix)
				put_value(out, v->bates_prefix, strlen(v->bates_prefix));
			ps_buf_printf(out, "%0*" PRId64, v->bates_digits, v->bates);
			break;
		}
	}
	return out->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}
