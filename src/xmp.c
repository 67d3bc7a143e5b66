/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xmp.c - a textual editor for XMP metadata packets.
 *
 * DESIGN NOTES
 *
 * No XML library: the packet is scanned once by the small, strict
 * tokenizer of xml.c (elements, attributes, comments, PIs, CDATA; a
 * DOCTYPE is refused) that records byte spans and resolves namespace
 * prefixes, so properties are matched by namespace URI and local name,
 * never by prefix ("xap:" and "xmp:" are the same thing).  Edits are then
 * expressed as splices (offset, length, replacement) over the original
 * bytes and applied in one pass, so everything we do not touch is
 * preserved byte for byte, including the xpacket wrapper and its padding.
 *
 * Invariants:
 *  1. Splices never overlap; they may touch.  Equal offsets keep creation
 *     order.  A violation is an INTERNAL error, never silent output.
 *  2. Every name we write uses a prefix that is bound, at that point, to the
 *     intended URI: an existing binding in scope, or a new xmlns:P that we
 *     add to the enclosing rdf:Description after checking that P is not
 *     bound to anything else there (that would re-bind existing content).
 *  3. Every value we write is checked to be UTF-8 made only of characters
 *     XML 1.0 allows, and escaped (& < > in text; also " ' TAB LF CR in
 *     attributes; CR everywhere, to survive end-of-line normalisation).
 *  4. The output is re-parsed before it is returned; if our own edit made it
 *     unreadable we fail with INTERNAL instead of writing it.
 *  5. Anything we cannot understand (not well-formed, an undeclared or
 *     malformed namespace prefix, no rdf:RDF, UTF-16 encoding, a DTD) is
 *     PDFSTAMP_E_UNSUPPORTED: we never guess.  Bytes we do not edit are
 *     not judged beyond that (odd text outside the root is kept as is).
 *
 * Edit rules, per property (XMP Specification Part 1, 7.9 RDF forms):
 *  - Occurrences are looked for in every rdf:Description directly under the
 *    first rdf:RDF, as an attribute (simple values only) or a child element.
 *  - Setting: the first usable occurrence is updated in place (an
 *    attribute's value, a simple element's text, or the x-default rdf:li of
 *    a language alternative; other rdf:li are kept), other occurrences
 *    (duplicates, which XMP forbids) are removed; with none, a new element
 *    is appended to the first rdf:Description that already has the schema's
 *    namespace in scope (older writers use one description per schema),
 *    else to the first rdf:Description.  dc:creator is rewritten as a
 *    one-item rdf:Seq (Info has a single Author string).
 *  - Removing deletes every occurrence (element or attribute).
 *  - A packet without an rdf:Description gets one (rdf:about="").
 *  - Fresh packets are a standard UTF-8 xpacket with 2000 bytes of padding;
 *    they are made by editing a skeleton with the same code.
 *  - Info keys without an XMP twin here: ModDate (MODDATE is used),
 *    CreationDate, Trapped; custom keys that are not ASCII XML names are
 *    skipped with a warning.
 *
 * Limits (hostile input): those of the tokenizer (xml.c note 4).  A packet
 * is edited only with XMP_DECL_HEADROOM declarations to spare under
 * XML_MAX_DECLS (room for the few an edit adds: dc, xmp, pdf, pdfx), and
 * the result must have as many to spare, so that it can be edited again.
 * Everything else is linear in the packet size per property edited.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "xml.h"

#define NS_RDF "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
#define NS_DC "http://purl.org/dc/elements/1.1/"
#define NS_XMP "http://ns.adobe.com/xap/1.0/"
#define NS_PDF "http://ns.adobe.com/pdf/1.3/"
#define NS_PDFX "http://ns.adobe.com/pdfx/1.3/"

#define XMP_DECL_HEADROOM 8     /* declarations an edit may add */
#define MAX_INDENT 64

/* ---- the RDF skeleton ------------------------------------------------------ */

static int find_rdf(const xdoc *d)
{
	size_t i;

	for (i = 0; i < d->nel; i++)
		if (ps_xml_el_is(d, &d->el[i], NS_RDF, "RDF"))
			return (int)i;
	return -1;
}

static int is_desc(const xdoc *d, int rdf, size_t i)
{
	return d->el[i].parent == rdf && ps_xml_el_is(d, &d->el[i], NS_RDF, "Description");
}

/* ---- values ---------------------------------------------------------------- */

/* Strict UTF-8 whose every character is an XML 1.0 Char. */
static int xml_text_ok(const char *v)
{
	const uint8_t *p = (const uint8_t *)v;

	while (*p) {
		uint32_t c = *p, min;
		size_t need, i;

		if (c < 0x80) {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
				return 0;
			p++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			need = 1, c &= 0x1F, min = 0x80;
		} else if (c >= 0xE0 && c <= 0xEF) {
			need = 2, c &= 0x0F, min = 0x800;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3, c &= 0x07, min = 0x10000;
		} else {
			return 0;
		}
		for (i = 1; i <= need; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return 0;   /* also stops at the terminating NUL */
			c = (c << 6) | (p[i] & 0x3F);
		}
		if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) ||
		    c == 0xFFFE || c == 0xFFFF)
			return 0;
		p += need + 1;
	}
	return 1;
}

static void put_escaped(ps_buf *b, const char *v, int attr)
{
	for (; *v; v++) {
		switch (*v) {
		case '&': ps_buf_puts(b, "&amp;"); break;
		case '<': ps_buf_puts(b, "&lt;"); break;
		case '>': ps_buf_puts(b, "&gt;"); break;
		case '\r': ps_buf_puts(b, "&#xD;"); break;
		case '"': ps_buf_puts(b, attr ? "&quot;" : "\""); break;
		case '\'': ps_buf_puts(b, attr ? "&apos;" : "'"); break;
		case '\t': ps_buf_puts(b, attr ? "&#x9;" : "\t"); break;
		case '\n': ps_buf_puts(b, attr ? "&#xA;" : "\n"); break;
		default: ps_buf_putc(b, *v); break;
		}
	}
}

/* ---- the editor ------------------------------------------------------------ */

typedef struct splice {
	size_t off, len;        /* replaced bytes of the input */
	size_t t0, t1;          /* replacement, in the pool */
	size_t seq;
} splice;

typedef struct editor {
	ps_ctx *ctx;
	xdoc *d;
	int rdf;                /* the rdf:RDF element */
	int target;             /* the first rdf:Description */
	splice *sp;
	size_t nsp;
	ps_buf pool;
	pdecl *pd;
	size_t npd;
	ps_buf ins;             /* text of new elements */
	struct newel {
		int desc;       /* the rdf:Description that receives it */
		size_t t0, t1;  /* in ins */
	} *ne;
	size_t nne;
} editor;

enum { K_SIMPLE, K_ALT, K_SEQ };

typedef struct prop {
	const char *uri, *prefix, *local;
	int kind;
} prop;

static int add_splice(editor *ed, size_t off, size_t len, size_t t0)
{
	splice *s;

	if (ps_vec_grow((void **)&ed->sp, ed->nsp, sizeof *ed->sp))
		return ps_err(ed->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	s = &ed->sp[ed->nsp];
	s->off = off;
	s->len = len;
	s->t0 = t0;
	s->t1 = ed->pool.len;
	s->seq = ed->nsp++;
	return 0;
}

/* White space between the start of the line and POS, if that is all there
 * is (returns 1); else empty (returns 0). */
static int indent_at(const xdoc *d, size_t pos, size_t *i0, size_t *i1)
{
	size_t p = pos;

	while (p > 0 && (d->s[p - 1] == ' ' || d->s[p - 1] == '\t'))
		p--;
	if ((p == 0 || d->s[p - 1] == '\n' || d->s[p - 1] == '\r') && pos - p <= MAX_INDENT) {
		*i0 = p;
		*i1 = pos;
		return 1;
	}
	*i0 = *i1 = pos;
	return 0;
}

typedef struct indent {
	char s[MAX_INDENT + 8];
	size_t n;
} indent;

static void indent_of(const xdoc *d, size_t pos, indent *in)
{
	size_t i0, i1;

	indent_at(d, pos, &i0, &i1);
	memcpy(in->s, d->s + i0, i1 - i0);
	in->n = i1 - i0;
}

/* Indentation for a new child of element E: that of its first child that
 * starts a line, or E's own plus three spaces. */
static void child_indent_of(const xdoc *d, int e, indent *in)
{
	size_t i, i0, i1;

	for (i = (size_t)e + 1; i < d->nel && d->el[i].s0 < d->el[e].e0; i++) {
		if (d->el[i].parent == e && indent_at(d, d->el[i].s0, &i0, &i1)) {
			memcpy(in->s, d->s + i0, i1 - i0);
			in->n = i1 - i0;
			return;
		}
	}
	indent_of(d, d->el[e].s0, in);
	memcpy(in->s + in->n, "   ", 3);
	in->n += 3;
}

static void put_indent(ps_buf *b, const indent *in, size_t extra)
{
	ps_buf_append(b, in->s, in->n);
	while (extra--)
		ps_buf_putc(b, ' ');
}

/* Is URI bound, in scope at element E, to a prefix usable for element
 * names ("" = the default namespace)?  Then 1 and the prefix in OUT. */
static int find_bound(const editor *ed, int e, const char *uri, char out[32])
{
	const xdoc *d = ed->d;
	const uint8_t *u;
	size_t ul, k;
	int i;

	/* Existing bindings: ours on E, then the packet's, innermost first,
	 * skipping any that a closer declaration shadows. */
	for (i = e; i >= 0; i = d->el[i].parent) {
		for (k = ed->npd; k-- > 0;)
			if (ed->pd[k].elem == i && strcmp(ed->pd[k].uri, uri) == 0) {
				memcpy(out, ed->pd[k].prefix, 32);
				return 1;
			}
		for (k = d->el[i].d0; k < d->el[i].d0 + d->el[i].nd; k++) {
			const xdecl *x = &d->dc[k];
			size_t pl = x->p1 - x->p0;

			if (!ps_xml_span_is(x->uri, x->urilen, uri) || pl >= 32)
				continue;
			if (!ps_xml_lookup(d, ed->pd, ed->npd, e, d->s + x->p0, pl, &u, &ul) ||
			    !ps_xml_span_is(u, ul, uri))
				continue;
			memcpy(out, d->s + x->p0, pl);
			out[pl] = 0;
			return 1;
		}
	}
	return 0;
}

/* A prefix bound to URI at element E for element names, declaring PREF (or
 * PREF1, PREF2, ...) on E if needed. */
static int ensure_prefix(editor *ed, int e, const char *uri, const char *pref, char out[32])
{
	const xdoc *d = ed->d;
	const uint8_t *u;
	size_t ul;
	int n;

	if (find_bound(ed, e, uri, out))
		return 0;
	for (n = 0; n < 100; n++) {
		pdecl *p;

		if (n)
			snprintf(out, 32, "%s%d", pref, n);
		else
			snprintf(out, 32, "%s", pref);
		if (ps_xml_lookup(d, ed->pd, ed->npd, e, (const uint8_t *)out, strlen(out), &u,
		                  &ul))
			continue;
		if (ps_vec_grow((void **)&ed->pd, ed->npd, sizeof *ed->pd))
			return ps_err(ed->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		p = &ed->pd[ed->npd++];
		p->elem = e;
		memcpy(p->prefix, out, 32);
		p->uri = uri;
		return 0;
	}
	return ps_err(ed->ctx, PDFSTAMP_E_UNSUPPORTED,
	              "XMP packet: no free namespace prefix for %s", uri);
}

static void put_qname(ps_buf *b, const char *prefix, const char *local)
{
	if (*prefix) {
		ps_buf_puts(b, prefix);
		ps_buf_putc(b, ':');
	}
	ps_buf_puts(b, local);
}

/* The whole property element: <Q>value</Q>, or with an rdf:Alt / rdf:Seq.
 * QNAME is written as given; IND is the element's own indentation. */
static int put_property(editor *ed, ps_buf *b, int desc, const prop *pr,
                        const uint8_t *qname, size_t qlen, const indent *ind, const char *value)
{
	char r[32];
	int rc;

	ps_buf_putc(b, '<');
	ps_buf_append(b, qname, qlen);
	ps_buf_putc(b, '>');
	if (pr->kind == K_SIMPLE) {
		put_escaped(b, value, 0);
	} else {
		rc = ensure_prefix(ed, desc, NS_RDF, "rdf", r);
		if (rc)
			return rc;
		ps_buf_putc(b, '\n');
		put_indent(b, ind, 3);
		ps_buf_putc(b, '<');
		put_qname(b, r, pr->kind == K_ALT ? "Alt" : "Seq");
		ps_buf_puts(b, ">\n");
		put_indent(b, ind, 6);
		ps_buf_putc(b, '<');
		put_qname(b, r, "li");
		if (pr->kind == K_ALT)
			ps_buf_puts(b, " xml:lang=\"x-default\"");
		ps_buf_putc(b, '>');
		put_escaped(b, value, 0);
		ps_buf_puts(b, "</");
		put_qname(b, r, "li");
		ps_buf_puts(b, ">\n");
		put_indent(b, ind, 3);
		ps_buf_puts(b, "</");
		put_qname(b, r, pr->kind == K_ALT ? "Alt" : "Seq");
		ps_buf_puts(b, ">\n");
		put_indent(b, ind, 0);
	}
	ps_buf_puts(b, "</");
	ps_buf_append(b, qname, qlen);
	ps_buf_putc(b, '>');
	return 0;
}

static int del_element(editor *ed, int i)
{
	const xelem *e = &ed->d->el[i];
	size_t from = e->s0, floor = ed->d->el[e->parent].s1;

	while (from > floor && ps_xml_is_ws(ed->d->s[from - 1]))
		from--;
	return add_splice(ed, from, e->e1 - from, ed->pool.len);
}

/* Replaces the content of a childless element, or regenerates it. */
static int set_text_element(editor *ed, int i, const char *value, int lang_li)
{
	const xelem *e = &ed->d->el[i];
	size_t t0 = ed->pool.len;

	if (!e->selfclose && e->nchild == 0) {
		put_escaped(&ed->pool, value, 0);
		return add_splice(ed, e->s1, e->e0 - e->s1, t0);
	}
	ps_buf_putc(&ed->pool, '<');
	ps_buf_append(&ed->pool, ed->d->s + e->q0, e->q1 - e->q0);
	if (lang_li)
		ps_buf_puts(&ed->pool, " xml:lang=\"x-default\"");
	ps_buf_putc(&ed->pool, '>');
	put_escaped(&ed->pool, value, 0);
	ps_buf_puts(&ed->pool, "</");
	ps_buf_append(&ed->pool, ed->d->s + e->q0, e->q1 - e->q0);
	ps_buf_putc(&ed->pool, '>');
	return add_splice(ed, e->s0, e->e1 - e->s0, t0);
}

static int is_x_default(const xdoc *d, const xattr *a)
{
	static const char xd[] = "x-default";
	size_t k;

	if (!ps_xml_attr_is(d, a, NS_XML, "lang") || a->v1 - a->v0 != sizeof xd - 1)
		return 0;
	for (k = 0; k < sizeof xd - 1; k++) {
		uint8_t c = d->s[a->v0 + k];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if (c != (uint8_t)xd[k])
			return 0;
	}
	return 1;
}

/* Language alternative: update the x-default item, keep the others. */
static int set_alt(editor *ed, int desc, int i, const prop *pr, const char *value)
{
	const xdoc *d = ed->d;
	const xelem *e = &d->el[i];
	size_t j, k, t0;
	int alt = -1;

	for (j = (size_t)i + 1; j < d->nel && d->el[j].s0 < e->e0; j++)
		if (d->el[j].parent == i && ps_xml_el_is(d, &d->el[j], NS_RDF, "Alt") &&
		    !d->el[j].selfclose) {
			alt = (int)j;
			break;
		}
	if (alt < 0 || e->nchild != 1) {
		indent ind;
		int rc;

		indent_of(d, e->s0, &ind);
		t0 = ed->pool.len;
		rc = put_property(ed, &ed->pool, desc, pr, d->s + e->q0, e->q1 - e->q0, &ind,
		                  value);
		return rc ? rc : add_splice(ed, e->s0, e->e1 - e->s0, t0);
	}
	for (j = (size_t)alt + 1; j < d->nel && d->el[j].s0 < d->el[alt].e0; j++) {
		const xelem *li = &d->el[j];

		if (li->parent != alt || !ps_xml_el_is(d, li, NS_RDF, "li"))
			continue;
		for (k = li->a0; k < li->a0 + li->na; k++)
			if (is_x_default(d, &d->at[k]))
				return set_text_element(ed, (int)j, value, 1);
	}
	/* No x-default item: it goes first (XMP Part 1, 8.2.2.4). */
	{
		const xelem *a = &d->el[alt];
		const uint8_t *c = memchr(d->s + a->q0, ':', a->q1 - a->q0);
		size_t plen = c ? (size_t)(c - (d->s + a->q0)) : 0;
		indent ind;

		indent_of(d, a->s0, &ind);
		t0 = ed->pool.len;
		ps_buf_putc(&ed->pool, '\n');
		put_indent(&ed->pool, &ind, 3);
		ps_buf_putc(&ed->pool, '<');
		ps_buf_append(&ed->pool, d->s + a->q0, plen + (c ? 1 : 0));
		ps_buf_puts(&ed->pool, "li xml:lang=\"x-default\">");
		put_escaped(&ed->pool, value, 0);
		ps_buf_puts(&ed->pool, "</");
		ps_buf_append(&ed->pool, d->s + a->q0, plen + (c ? 1 : 0));
		ps_buf_puts(&ed->pool, "li>");
		return add_splice(ed, a->s1, 0, t0);
	}
}

static int update_prop(editor *ed, const prop *pr, const char *value)
{
	const xdoc *d = ed->d;
	size_t i, k;
	int kept = 0, rc;

	for (i = 0; i < d->nel; i++) {
		const xelem *desc;

		if (!is_desc(d, ed->rdf, i))
			continue;
		desc = &d->el[i];
		for (k = desc->a0; k < desc->a0 + desc->na; k++) {
			const xattr *a = &d->at[k];
			size_t t0 = ed->pool.len;

			if (a->is_decl || !ps_xml_attr_is(d, a, pr->uri, pr->local))
				continue;
			if (value && !kept && pr->kind == K_SIMPLE) {
				put_escaped(&ed->pool, value, 1);
				rc = add_splice(ed, a->v0, a->v1 - a->v0, t0);
				kept = 1;
			} else {
				rc = add_splice(ed, a->ws, a->v1 + 1 - a->ws, t0);
			}
			if (rc)
				return rc;
		}
		for (k = i + 1; k < d->nel && d->el[k].s0 < desc->e0; k++) {
			const xelem *e = &d->el[k];

			if (e->parent != (int)i || !ps_xml_el_is(d, e, pr->uri, pr->local))
				continue;
			if (value && !kept) {
				kept = 1;
				if (pr->kind == K_SIMPLE) {
					rc = set_text_element(ed, (int)k, value, 0);
				} else if (pr->kind == K_ALT) {
					rc = set_alt(ed, (int)i, (int)k, pr, value);
				} else {
					size_t t0 = ed->pool.len;
					indent ind;

					indent_of(d, e->s0, &ind);
					rc = put_property(ed, &ed->pool, (int)i, pr, d->s + e->q0,
					                  e->q1 - e->q0, &ind, value);
					if (!rc)
						rc = add_splice(ed, e->s0, e->e1 - e->s0, t0);
				}
			} else {
				rc = del_element(ed, (int)k);
			}
			if (rc)
				return rc;
		}
	}
	if (value && !kept) {
		char p[32], qn[128];
		size_t t0 = ed->ins.len;
		int tg = ed->target, qlen;
		indent ind;

		/* Prefer a description that already has the schema in scope
		 * (one description per schema in older packets). */
		for (i = 0; i < d->nel; i++)
			if (is_desc(d, ed->rdf, i) && find_bound(ed, (int)i, pr->uri, p)) {
				tg = (int)i;
				break;
			}
		rc = ensure_prefix(ed, tg, pr->uri, pr->prefix, p);
		if (rc)
			return rc;
		qlen = snprintf(qn, sizeof qn, "%s%s%s", p, *p ? ":" : "", pr->local);
		if (qlen < 0 || (size_t)qlen >= sizeof qn)
			return ps_err(ed->ctx, PDFSTAMP_E_INTERNAL, "XMP: name too long");
		child_indent_of(d, tg, &ind);
		ps_buf_putc(&ed->ins, '\n');
		put_indent(&ed->ins, &ind, 0);
		rc = put_property(ed, &ed->ins, tg, pr, (const uint8_t *)qn, (size_t)qlen, &ind,
		                  value);
		if (rc)
			return rc;
		if (ps_vec_grow((void **)&ed->ne, ed->nne, sizeof *ed->ne))
			return ps_err(ed->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		ed->ne[ed->nne].desc = tg;
		ed->ne[ed->nne].t0 = t0;
		ed->ne[ed->nne].t1 = ed->ins.len;
		ed->nne++;
	}
	return 0;
}

static int cmp_splice(const void *a, const void *b)
{
	const splice *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* New elements for description T: one splice before its end tag, or one
 * that turns "/>" into ">" + content + end tag. */
static int finish_desc(editor *ed, int t, size_t from)
{
	const xdoc *d = ed->d;
	const xelem *e = &d->el[t];
	size_t t0 = ed->pool.len, k, p;
	indent ind;

	if (e->selfclose)
		ps_buf_putc(&ed->pool, '>');
	for (k = from; k < ed->nne; k++)
		if (ed->ne[k].desc == t)
			ps_buf_append(&ed->pool, ed->ins.data + ed->ne[k].t0,
			              ed->ne[k].t1 - ed->ne[k].t0);
	if (e->selfclose) {
		indent_of(d, e->s0, &ind);
		ps_buf_putc(&ed->pool, '\n');
		put_indent(&ed->pool, &ind, 0);
		ps_buf_puts(&ed->pool, "</");
		ps_buf_append(&ed->pool, d->s + e->q0, e->q1 - e->q0);
		ps_buf_putc(&ed->pool, '>');
		return add_splice(ed, e->s1 - 2, 2, t0);
	}
	p = e->e0;
	while (p > e->s1 && ps_xml_is_ws(d->s[p - 1]))
		p--;
	return add_splice(ed, p, 0, t0);
}

/* Turns the pending declarations and new elements into splices. */
static int finish(editor *ed)
{
	const xdoc *d = ed->d;
	size_t k, j, t0;
	indent ind;
	int rc;

	for (k = 0; k < ed->npd; k++) {
		const xelem *e = &d->el[ed->pd[k].elem];

		t0 = ed->pool.len;
		if (memchr(d->s + e->s0, '\n', e->s1 - e->s0)) {
			/* the tag already spans lines: one declaration per line,
			 * aligned with the last attribute if that starts a line */
			const xattr *last = e->na ? &d->at[e->a0 + e->na - 1] : NULL;
			size_t extra = 0, i0, i1;

			if (last && indent_at(d, last->q0, &i0, &i1)) {
				indent_of(d, last->q0, &ind);
			} else {
				indent_of(d, e->s0, &ind);
				extra = 4;
			}
			ps_buf_putc(&ed->pool, '\n');
			put_indent(&ed->pool, &ind, extra);
		} else {
			ps_buf_putc(&ed->pool, ' ');
		}
		ps_buf_printf(&ed->pool, "xmlns:%s=\"%s\"", ed->pd[k].prefix, ed->pd[k].uri);
		rc = add_splice(ed, e->attr_end, 0, t0);
		if (rc)
			return rc;
	}
	for (k = 0; k < ed->nne; k++) {
		for (j = 0; j < k; j++)
			if (ed->ne[j].desc == ed->ne[k].desc)
				break;
		if (j < k)
			continue;       /* that description is done */
		rc = finish_desc(ed, ed->ne[k].desc, k);
		if (rc)
			return rc;
	}
	return 0;
}

static int apply(editor *ed, ps_buf *out)
{
	const xdoc *d = ed->d;
	size_t pos = 0, k;

	if (ed->pool.oom || ed->ins.oom)
		return ps_err(ed->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (ed->nsp)
		qsort(ed->sp, ed->nsp, sizeof *ed->sp, cmp_splice);
	for (k = 0; k < ed->nsp; k++) {
		const splice *s = &ed->sp[k];

		if (s->off < pos || s->off + s->len > d->n)
			return ps_err(ed->ctx, PDFSTAMP_E_INTERNAL,
			              "XMP edit: overlapping changes");
		ps_buf_append(out, d->s + pos, s->off - pos);
		if (s->t1 > s->t0)
			ps_buf_append(out, ed->pool.data + s->t0, s->t1 - s->t0);
		pos = s->off + s->len;
	}
	ps_buf_append(out, d->s + pos, d->n - pos);
	return 0;
}

/* ---- entry point ------------------------------------------------------------ */

static const struct {
	const char *key;
	prop p;
} info_map[] = {
	{"Title", {NS_DC, "dc", "title", K_ALT}},
	{"Author", {NS_DC, "dc", "creator", K_SEQ}},
	{"Subject", {NS_DC, "dc", "description", K_ALT}},
	{"Keywords", {NS_PDF, "pdf", "Keywords", K_SIMPLE}},
	{"Producer", {NS_PDF, "pdf", "Producer", K_SIMPLE}},
	{"Creator", {NS_XMP, "xmp", "CreatorTool", K_SIMPLE}},
};

/* Info keys that have no direct XMP twin here: the dates are written from
 * MODDATE (ModDate) or stay untouched (CreationDate, PDF date syntax),
 * Trapped is a name, not text. */
static const char *const not_mirrored[] = {"ModDate", "CreationDate", "Trapped"};

static int is_ascii_ncname(const char *s)
{
	size_t i;

	if (!s[0] || strlen(s) > 64)
		return 0;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')
			continue;
		if (i > 0 && ((c >= '0' && c <= '9') || c == '-' || c == '.'))
			continue;
		return 0;
	}
	return 1;
}

static const char skeleton_head[] =
	"<?xpacket begin=\"\xEF\xBB\xBF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
	"<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n"
	" <rdf:RDF xmlns:rdf=\"" NS_RDF "\">\n"
	"  <rdf:Description rdf:about=\"\">\n"
	"  </rdf:Description>\n"
	" </rdf:RDF>\n"
	"</x:xmpmeta>\n";
static const char skeleton_tail[] = "<?xpacket end=\"w\"?>";

static int edit(ps_ctx *ctx, const uint8_t *s, size_t n, const ps_meta_kv *kv, size_t nkv,
                const char *moddate, ps_buf *out)
{
	editor ed;
	xdoc d;
	size_t i, j;
	int rc;

	memset(&ed, 0, sizeof ed);
	ed.ctx = ctx;
	ed.d = &d;
	rc = ps_xml_parse(ctx, s, n, &d);
	if (rc)
		goto out;
	/* Leave room for the few declarations an edit adds (dc, xmp, pdf,
	 * pdfx), or the re-parse of invariant 4 fails (found by fuzz_xmp). */
	if (d.ndc > XML_MAX_DECLS - XMP_DECL_HEADROOM) {
		rc = ps_xml_bad(ctx, "too many namespace declarations", 0);
		goto out;
	}
	ed.rdf = find_rdf(&d);
	ed.target = -1;
	if (ed.rdf < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		            "XMP packet not understood: no rdf:RDF element");
		goto out;
	}
	for (i = 0; i < d.nel; i++)
		if (is_desc(&d, ed.rdf, i)) {
			ed.target = (int)i;
			break;
		}
	if (ed.target < 0) {
		rc = PS_E_NEEDMORE;     /* the caller adds an rdf:Description first */
		goto out;
	}
	for (i = 0; i < nkv; i++) {
		const prop *pr = NULL;
		prop custom;

		for (j = i + 1; j < nkv; j++)
			if (strcmp(kv[i].key, kv[j].key) == 0)
				break;
		if (j < nkv)
			continue;       /* a later entry for the same key wins */
		for (j = 0; j < sizeof not_mirrored / sizeof *not_mirrored; j++)
			if (strcmp(kv[i].key, not_mirrored[j]) == 0)
				break;
		if (j < sizeof not_mirrored / sizeof *not_mirrored)
			continue;
		for (j = 0; j < sizeof info_map / sizeof *info_map; j++)
			if (strcmp(kv[i].key, info_map[j].key) == 0)
				pr = &info_map[j].p;
		if (!pr) {
			if (!is_ascii_ncname(kv[i].key)) {
				/* The key may come from a decrypted /Info: not echoed. */
				ps_warn(ctx, "XMP: Info key number %zu is not a valid XML name; "
				        "not mirrored in XMP", i + 1);
				continue;
			}
			custom.uri = NS_PDFX;
			custom.prefix = "pdfx";
			custom.local = kv[i].key;
			custom.kind = K_SIMPLE;
			pr = &custom;
		}
		rc = update_prop(&ed, pr, kv[i].value);
		if (rc)
			goto out;
	}
	if (moddate) {
		static const prop dates[2] = {
			{NS_XMP, "xmp", "ModifyDate", K_SIMPLE},
			{NS_XMP, "xmp", "MetadataDate", K_SIMPLE},
		};

		for (i = 0; i < 2; i++) {
			rc = update_prop(&ed, &dates[i], moddate);
			if (rc)
				goto out;
		}
	}
	rc = finish(&ed);
	if (!rc)
		rc = apply(&ed, out);
out:
	ps_xml_free(&d);
	free(ed.sp);
	free(ed.pd);
	ps_buf_free(&ed.pool);
	ps_buf_free(&ed.ins);
	free(ed.ne);
	return rc;
}

/* Inserts an empty rdf:Description (rdf:about="") into the rdf:RDF. */
static int add_description(ps_ctx *ctx, const uint8_t *s, size_t n, ps_buf *out)
{
	xdoc d;
	const xelem *r;
	const uint8_t *c;
	size_t p, plen;
	int rc, rdf;
	indent ind;
	ps_buf desc = PS_BUF_INIT;

	rc = ps_xml_parse(ctx, s, n, &d);
	if (rc)
		goto out;
	rdf = find_rdf(&d);
	if (rdf < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "XMP: rdf:RDF vanished");
		goto out;
	}
	r = &d.el[rdf];
	indent_of(&d, r->s0, &ind);
	c = memchr(s + r->q0, ':', r->q1 - r->q0);
	plen = c ? (size_t)(c - (s + r->q0)) : 0;
	ps_buf_putc(&desc, '\n');
	put_indent(&desc, &ind, 1);
	if (c) {
		ps_buf_putc(&desc, '<');
		ps_buf_append(&desc, s + r->q0, plen + 1);
		ps_buf_puts(&desc, "Description ");
		ps_buf_append(&desc, s + r->q0, plen + 1);
		ps_buf_puts(&desc, "about=\"\">\n");
		put_indent(&desc, &ind, 1);
		ps_buf_puts(&desc, "</");
		ps_buf_append(&desc, s + r->q0, plen + 1);
		ps_buf_puts(&desc, "Description>");
	} else {
		/* rdf:RDF in the default namespace: bind rdf: locally */
		ps_buf_puts(&desc, "<Description xmlns:rdf=\"" NS_RDF "\" rdf:about=\"\">\n");
		put_indent(&desc, &ind, 1);
		ps_buf_puts(&desc, "</Description>");
	}
	if (r->selfclose) {
		ps_buf_append(out, s, r->s1 - 2);
		ps_buf_putc(out, '>');
		ps_buf_append(out, desc.data, desc.len);
		ps_buf_putc(out, '\n');
		put_indent(out, &ind, 0);
		ps_buf_puts(out, "</");
		ps_buf_append(out, s + r->q0, r->q1 - r->q0);
		ps_buf_putc(out, '>');
		ps_buf_append(out, s + r->s1, n - r->s1);
	} else {
		p = r->e0;
		while (p > r->s1 && ps_xml_is_ws(s[p - 1]))
			p--;
		ps_buf_append(out, s, p);
		ps_buf_append(out, desc.data, desc.len);
		ps_buf_append(out, s + p, n - p);
	}
	if (desc.oom || out->oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_buf_free(&desc);
	ps_xml_free(&d);
	return rc;
}

int ps_xmp_update(ps_ctx *ctx, const uint8_t *old, size_t oldlen,
                  const ps_meta_kv *kv, size_t nkv, const char *moddate_iso, ps_buf *out)
{
	ps_buf src = PS_BUF_INIT, res = PS_BUF_INIT;
	const uint8_t *s = old;
	size_t n = oldlen, i, ndc;
	int rc;
	xdoc chk;

	if ((!old && oldlen) || (!kv && nkv) || !out)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_xmp_update: bad arguments");
	for (i = 0; i < nkv; i++) {
		if (!kv[i].key)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "XMP: NULL key");
		if (kv[i].value && !xml_text_ok(kv[i].value))
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "value of %s is not valid UTF-8 or holds a character XML "
			              "cannot carry", kv[i].key);
	}
	if (moddate_iso && !xml_text_ok(moddate_iso))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "XMP: bad modification date");

	for (i = 0; i < n && ps_xml_is_ws(s[i]); i++)
		;
	if (i == n) {
		/* A fresh packet: the skeleton, edited like any other. */
		ps_buf_puts(&src, skeleton_head);
		for (i = 0; i < 20; i++)
			ps_buf_printf(&src, "%99s\n", "");
		ps_buf_puts(&src, skeleton_tail);
		if (src.oom) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		s = src.data;
		n = src.len;
	} else if ((n >= 2 && ((s[0] == 0xFE && s[1] == 0xFF) || (s[0] == 0xFF && s[1] == 0xFE))) ||
	           memchr(s, 0, n)) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		            "XMP packet is not UTF-8 (UTF-16/32 packets are not supported)");
		goto out;
	}

	rc = edit(ctx, s, n, kv, nkv, moddate_iso, &res);
	if (rc == PS_E_NEEDMORE) {
		ps_buf_reset(&src);
		if (s == src.data) {
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL,
			            "XMP skeleton without rdf:Description");
			goto out;
		}
		rc = add_description(ctx, s, n, &src);
		if (rc)
			goto out;
		ps_buf_reset(&res);
		rc = edit(ctx, src.data, src.len, kv, nkv, moddate_iso, &res);
		if (rc == PS_E_NEEDMORE)
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "XMP: rdf:Description not added");
	}
	if (rc)
		goto out;
	if (res.oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	/* Invariant 4: our output must parse and still have its rdf:RDF. */
	rc = ps_xml_parse(ctx, res.data, res.len, &chk);
	if (!rc && find_rdf(&chk) < 0)
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "no rdf:RDF element");
	ndc = chk.ndc;
	ps_xml_free(&chk);
	if (rc) {
		rc = rc == PDFSTAMP_E_NOMEM ? rc
		                            : ps_err_wrap(ctx, PDFSTAMP_E_INTERNAL,
		                                          "XMP edit produced an unreadable packet");
		goto out;
	}
	/* The result must be editable again (edit's own input limit). */
	if (ndc > XML_MAX_DECLS - XMP_DECL_HEADROOM) {
		rc = ps_xml_bad(ctx, "too many namespace declarations", 0);
		goto out;
	}
	ps_buf_append(out, res.data, res.len);
	if (out->oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_buf_free(&src);
	ps_buf_free(&res);
	return rc;
}
