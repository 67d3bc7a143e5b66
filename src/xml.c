/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xml.c - a small, strict XML tokenizer for XMP packets.
 *
 * DESIGN NOTES
 *
 * What it owns: turning a packet into an xdoc (xml.h), a flat table of
 * elements, attributes and namespace declarations recorded as byte spans
 * of the original packet, with every element and prefixed attribute
 * resolved to its namespace URI.  It never copies or changes the packet;
 * the XMP editor (xmp.c) expresses its edits as splices over the same
 * bytes, and re-parses its output with this tokenizer.
 *
 *  1. One pass over the packet: elements, attributes, comments, PIs and
 *     CDATA are recognised; a DOCTYPE (any other "<!") is refused, so no
 *     entity can be declared or expanded.  Character and entity
 *     references are left as they are in the spans.
 *  2. Well-formedness that can be seen is checked, and any departure is
 *     PDFSTAMP_E_UNSUPPORTED (never a guess): tags balance, attribute
 *     values are quoted and contain no '<', an attribute appears once per
 *     tag (XML 1.0 3.1), qualified names have at most one colon, not first
 *     or last (Namespaces in XML 1.0, 4), every prefix is declared, no
 *     prefix is bound to the empty name.  Text outside elements is not
 *     judged.
 *  3. Namespaces: the declarations of a tag apply to the tag itself; a
 *     prefix is looked up from the element outwards through its parents'
 *     declarations, after the caller's pending declarations (pdecl); the
 *     "xml" prefix is always bound to NS_XML.
 *  4. Limits (hostile input): nesting depth XML_MAX_DEPTH and
 *     XML_MAX_DECLS namespace declarations in the packet, so a prefix
 *     lookup costs at most depth + declarations steps; XML_MAX_ATTRS per
 *     element bounds the quadratic duplicate-attribute check.  Everything
 *     else is linear in the packet size.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xml.h"

void ps_xml_free(xdoc *d)
{
	free(d->el);
	free(d->at);
	free(d->dc);
	memset(d, 0, sizeof *d);
}

int ps_xml_is_ws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_namec(uint8_t c)
{
	return !ps_xml_is_ws(c) && !strchr("<>/=\"'?!&;", c) && c != 0;
}

int ps_xml_span_is(const uint8_t *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

/* Position of NEEDLE at or after POS, or N. */
static size_t find(const uint8_t *s, size_t n, size_t pos, const char *needle)
{
	size_t k = strlen(needle);

	while (pos + k <= n) {
		const uint8_t *q = memchr(s + pos, needle[0], n - pos - k + 1);

		if (!q)
			break;
		pos = (size_t)(q - s);
		if (memcmp(q, needle, k) == 0)
			return pos;
		pos++;
	}
	return n;
}

/* Looks PREFIX up in scope at element I (its own declarations included),
 * our pending declarations first.  Returns 1 and the URI if bound. */
int ps_xml_lookup(const xdoc *d, const pdecl *pd, size_t npd, int i,
                  const uint8_t *p, size_t plen, const uint8_t **uri, size_t *urilen)
{
	size_t k;

	if (ps_xml_span_is(p, plen, "xml")) {
		*uri = (const uint8_t *)NS_XML;
		*urilen = strlen(NS_XML);
		return 1;
	}
	for (; i >= 0; i = d->el[i].parent) {
		const xelem *e = &d->el[i];

		for (k = npd; k-- > 0;)
			if (pd[k].elem == i && ps_xml_span_is(p, plen, pd[k].prefix)) {
				*uri = (const uint8_t *)pd[k].uri;
				*urilen = strlen(pd[k].uri);
				return 1;
			}
		for (k = e->d0; k < e->d0 + e->nd; k++) {
			const xdecl *x = &d->dc[k];

			if (x->p1 - x->p0 == plen && memcmp(d->s + x->p0, p, plen) == 0) {
				if (!x->urilen)
					return 0;
				*uri = x->uri;
				*urilen = x->urilen;
				return 1;
			}
		}
	}
	return 0;
}

int ps_xml_bad(ps_ctx *ctx, const char *what, size_t at)
{
	return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
	              "XMP packet not understood: %s (at byte %zu)", what, at);
}

static size_t scan_name(const uint8_t *s, size_t n, size_t pos)
{
	while (pos < n && is_namec(s[pos]))
		pos++;
	return pos;
}

/* Namespaces in XML 1.0, 4: at most one colon, not first or last; names
 * do not start with a digit, '-' or '.'. */
static int qname_ok(const uint8_t *q, size_t n)
{
	const uint8_t *c = memchr(q, ':', n);

	if (!n || (q[0] >= '0' && q[0] <= '9') || q[0] == '-' || q[0] == '.')
		return 0;
	if (!c)
		return 1;
	if (c == q || c == q + n - 1 || memchr(c + 1, ':', (size_t)(q + n - c - 1)))
		return 0;
	c++;
	return !((*c >= '0' && *c <= '9') || *c == '-' || *c == '.');
}

static int parse_start_tag(ps_ctx *ctx, xdoc *d, size_t *pos, int cur, int *selfclose)
{
	const uint8_t *s = d->s;
	size_t n = d->n, p = *pos + 1, ws, k, colon;
	xelem *e;
	int idx;

	if (ps_vec_grow((void **)&d->el, d->nel, sizeof *d->el))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	idx = (int)d->nel;
	e = &d->el[d->nel++];
	memset(e, 0, sizeof *e);
	e->s0 = *pos;
	e->q0 = p;
	p = scan_name(s, n, p);
	e->q1 = p;
	if (e->q1 == e->q0)
		return ps_xml_bad(ctx, "bad element name", e->q0);
	e->attr_end = p;
	e->parent = cur;
	e->a0 = d->nat;
	e->d0 = d->ndc;
	for (;;) {
		xattr *a;
		uint8_t quote;

		ws = p;
		while (p < n && ps_xml_is_ws(s[p]))
			p++;
		if (p >= n)
			return ps_xml_bad(ctx, "unterminated start tag", e->s0);
		if (s[p] == '>') {
			p++;
			break;
		}
		if (s[p] == '/') {
			if (p + 1 >= n || s[p + 1] != '>')
				return ps_xml_bad(ctx, "stray '/' in a start tag", p);
			*selfclose = 1;
			p += 2;
			break;
		}
		if (ws == p)
			return ps_xml_bad(ctx, "attributes not separated by white space", p);
		if (ps_vec_grow((void **)&d->at, d->nat, sizeof *d->at))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		a = &d->at[d->nat++];
		memset(a, 0, sizeof *a);
		a->ws = ws;
		a->q0 = p;
		p = scan_name(s, n, p);
		a->q1 = p;
		if (a->q1 == a->q0)
			return ps_xml_bad(ctx, "bad attribute name", p);
		while (p < n && ps_xml_is_ws(s[p]))
			p++;
		if (p >= n || s[p] != '=')
			return ps_xml_bad(ctx, "attribute without '='", p);
		p++;
		while (p < n && ps_xml_is_ws(s[p]))
			p++;
		if (p >= n || (s[p] != '"' && s[p] != '\''))
			return ps_xml_bad(ctx, "attribute value not quoted", p);
		quote = s[p++];
		a->v0 = p;
		while (p < n && s[p] != quote) {
			if (s[p] == '<')
				return ps_xml_bad(ctx, "'<' in an attribute value", p);
			p++;
		}
		if (p >= n)
			return ps_xml_bad(ctx, "unterminated attribute value", a->v0);
		a->v1 = p++;
		e->attr_end = p;
		e->na++;
	}
	e->s1 = p;
	e->selfclose = *selfclose;
	if (*selfclose)
		e->e0 = e->e1 = p;

	/* An attribute may appear once per tag (XML 1.0 3.1); the check is
	 * quadratic, hence the bound. */
	if (e->na > XML_MAX_ATTRS)
		return ps_xml_bad(ctx, "too many attributes on one element", e->s0);
	for (k = e->a0 + 1; k < e->a0 + e->na; k++) {
		size_t j, qn = d->at[k].q1 - d->at[k].q0;
		for (j = e->a0; j < k; j++)
			if (d->at[j].q1 - d->at[j].q0 == qn &&
			    memcmp(s + d->at[j].q0, s + d->at[k].q0, qn) == 0)
				return ps_xml_bad(ctx, "an attribute repeated on one element",
				                  d->at[k].q0);
	}
	/* Namespace declarations first: they apply to the tag they are on. */
	for (k = e->a0; k < e->a0 + e->na; k++) {
		xattr *a = &d->at[k];
		xdecl *x;
		size_t qn = a->q1 - a->q0;

		if (!qname_ok(s + a->q0, qn))
			return ps_xml_bad(ctx, "bad qualified name", a->q0);
		if (!(ps_xml_span_is(s + a->q0, qn, "xmlns") ||
		      (qn > 6 && memcmp(s + a->q0, "xmlns:", 6) == 0)))
			continue;
		/* Namespaces in XML 1.0: a prefix cannot be bound to the empty
		 * name (1.1's "undeclaring" is not something we edit around). */
		if (qn > 5 && a->v1 == a->v0)
			return ps_xml_bad(ctx, "a namespace prefix bound to an empty name", a->q0);
		a->is_decl = 1;
		if (d->ndc >= XML_MAX_DECLS)
			return ps_xml_bad(ctx, "too many namespace declarations", a->q0);
		if (ps_vec_grow((void **)&d->dc, d->ndc, sizeof *d->dc))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		x = &d->dc[d->ndc++];
		x->p0 = qn > 5 ? a->q0 + 6 : a->q0;
		x->p1 = qn > 5 ? a->q1 : a->q0;
		x->uri = s + a->v0;
		x->urilen = a->v1 - a->v0;
		e->nd++;
	}
	/* The element's name, then its other attributes. */
	{
		const uint8_t *c = memchr(s + e->q0, ':', e->q1 - e->q0);

		colon = c ? (size_t)(c - s) : e->q0;
		e->local = c ? colon + 1 : e->q0;
		if (!qname_ok(s + e->q0, e->q1 - e->q0))
			return ps_xml_bad(ctx, "bad qualified name", e->q0);
		if (!ps_xml_lookup(d, NULL, 0, idx, s + e->q0, colon - e->q0, &e->uri,
		                   &e->urilen)) {
			if (c)
				return ps_xml_bad(ctx, "undeclared namespace prefix", e->q0);
			e->uri = NULL;
		}
	}
	for (k = e->a0; k < e->a0 + e->na; k++) {
		xattr *a = &d->at[k];
		const uint8_t *c;

		if (a->is_decl)
			continue;
		c = memchr(s + a->q0, ':', a->q1 - a->q0);
		a->uri = NULL;
		if (c && !ps_xml_lookup(d, NULL, 0, idx, s + a->q0, (size_t)(c - s) - a->q0,
		                 &a->uri, &a->urilen))
			return ps_xml_bad(ctx, "undeclared namespace prefix", a->q0);
	}
	*pos = p;
	return idx;
}

/* Tokenizes the whole packet; any departure from well-formedness that we
 * can see is UNSUPPORTED. */
int ps_xml_parse(ps_ctx *ctx, const uint8_t *s, size_t n, xdoc *d)
{
	size_t pos = 0, depth = 0;
	int cur = -1, rc;

	memset(d, 0, sizeof *d);
	d->s = s;
	d->n = n;
	while (pos < n) {
		size_t q;

		if (s[pos] != '<') {
			const uint8_t *lt = memchr(s + pos, '<', n - pos);

			pos = lt ? (size_t)(lt - s) : n;
			continue;
		}
		if (n - pos >= 4 && memcmp(s + pos, "<!--", 4) == 0) {
			q = find(s, n, pos + 4, "-->");
			if (q >= n)
				return ps_xml_bad(ctx, "unterminated comment", pos);
			pos = q + 3;
		} else if (n - pos >= 2 && s[pos + 1] == '?') {
			q = find(s, n, pos + 2, "?>");
			if (q >= n)
				return ps_xml_bad(ctx, "unterminated processing instruction", pos);
			pos = q + 2;
		} else if (n - pos >= 9 && memcmp(s + pos, "<![CDATA[", 9) == 0) {
			if (cur < 0)
				return ps_xml_bad(ctx, "CDATA outside an element", pos);
			q = find(s, n, pos + 9, "]]>");
			if (q >= n)
				return ps_xml_bad(ctx, "unterminated CDATA section", pos);
			pos = q + 3;
		} else if (n - pos >= 2 && s[pos + 1] == '!') {
			return ps_xml_bad(ctx, "DTD declarations are not allowed in XMP", pos);
		} else if (n - pos >= 2 && s[pos + 1] == '/') {
			xelem *e;
			size_t q0 = pos + 2, q1 = scan_name(s, n, pos + 2);

			if (cur < 0)
				return ps_xml_bad(ctx, "end tag without a start tag", pos);
			e = &d->el[cur];
			if (q1 - q0 != e->q1 - e->q0 || memcmp(s + q0, s + e->q0, q1 - q0) != 0)
				return ps_xml_bad(ctx, "mismatched end tag", pos);
			q = q1;
			while (q < n && ps_xml_is_ws(s[q]))
				q++;
			if (q >= n || s[q] != '>')
				return ps_xml_bad(ctx, "unterminated end tag", pos);
			e->e0 = pos;
			e->e1 = q + 1;
			pos = q + 1;
			cur = e->parent;
			depth--;
		} else {
			int selfclose = 0;

			rc = parse_start_tag(ctx, d, &pos, cur, &selfclose);
			if (rc < 0)
				return rc;
			if (cur >= 0)
				d->el[cur].nchild++;
			if (!selfclose) {
				if (++depth > XML_MAX_DEPTH)
					return ps_xml_bad(ctx, "elements nested too deeply", pos);
				cur = rc;
			}
		}
	}
	if (cur >= 0)
		return ps_xml_bad(ctx, "unclosed element", d->el[cur].s0);
	return 0;
}

int ps_xml_el_is(const xdoc *d, const xelem *e, const char *uri, const char *local)
{
	return e->uri && ps_xml_span_is(e->uri, e->urilen, uri) &&
	       ps_xml_span_is(d->s + e->local, e->q1 - e->local, local);
}

int ps_xml_attr_is(const xdoc *d, const xattr *a, const char *uri, const char *local)
{
	const uint8_t *c;

	if (!a->uri || !ps_xml_span_is(a->uri, a->urilen, uri))
		return 0;
	c = memchr(d->s + a->q0, ':', a->q1 - a->q0);
	return c && ps_xml_span_is(c + 1, (size_t)(d->s + a->q1 - (c + 1)), local);
}

