/* SPDX-License-Identifier: Apache-2.0 */
/* template.h - internal: the stamp's templates (template.c; conventions: ps.h). */
#ifndef PS_TEMPLATE_H
#define PS_TEMPLATE_H

#include "ps.h"
#include "date.h"

/* What a template uses (ps_tmpl_uses): a variable that differs from page to
 * page, {pages}, {bates}. */
#define PS_TMPL_PER_PAGE 0x1
#define PS_TMPL_PAGES 0x2
#define PS_TMPL_BATES 0x4

typedef struct ps_tmpl ps_tmpl;

/* The values of the variables for one page. */
typedef struct ps_tmpl_vars {
	int64_t page, pages;     /* {page}, {pages} */
	ps_time when;            /* {date}, {date:FORMAT} */
	const char *file;        /* {file}: a path, of which the base name is used (NULL: "") */
	const char *author;      /* {author} (NULL: "") */
	int64_t bates;           /* {bates}: the number, */
	const char *bates_prefix; /* its prefix (NULL: none) */
	int bates_digits;        /* and its width, zero-padded (1..18) */
} ps_tmpl_vars;

/* Parses SRC (UTF-8, checked) into *OUT.  WHAT names it in messages ("the
 * text").  A syntax error or an unknown variable is PDFSTAMP_E_USAGE. */
int ps_tmpl_parse(ps_ctx *ctx, const char *what, const char *src, ps_tmpl **out);
void ps_tmpl_free(ps_tmpl *t);
/* PS_TMPL_* bits of what T uses (0 for NULL). */
unsigned ps_tmpl_uses(const ps_tmpl *t);
/* Appends T expanded with V to OUT (not NUL-terminated).  Fails only for a
 * date format whose result is too long or a number that overflows. */
int ps_tmpl_expand(ps_ctx *ctx, const ps_tmpl *t, const ps_tmpl_vars *v, ps_buf *out);

#endif
