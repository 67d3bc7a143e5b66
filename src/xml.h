/* SPDX-License-Identifier: Apache-2.0 */
/* xml.h - internal: the small, strict XML tokenizer behind the XMP editor
 * (xml.c; conventions: ps.h).  Only xmp.c includes it. */
#ifndef PS_XML_H
#define PS_XML_H

#include "ps.h"

#define NS_XML "http://www.w3.org/XML/1998/namespace"

#define XML_MAX_DEPTH 256
#define XML_MAX_DECLS 256       /* bounds the cost of prefix lookups */
#define XML_MAX_ATTRS 1024      /* per element: bounds the duplicate check */

/* ---- xml.c: the parsed packet ------------------------------------------------
 * Every position is a byte offset into xdoc.s, which is borrowed (the
 * caller keeps the packet alive and unchanged while the xdoc is used);
 * a URI points into the packet, or at a constant for the "xml" prefix. */

typedef struct xattr {
	size_t ws;              /* start of the white space before the name */
	size_t q0, q1;          /* qualified name */
	size_t v0, v1;          /* value; v1 is the closing quote */
	const uint8_t *uri;     /* namespace, NULL for none */
	size_t urilen;
	int is_decl;            /* xmlns or xmlns:P */
} xattr;

typedef struct xdecl {
	size_t p0, p1;          /* prefix; empty for the default namespace */
	const uint8_t *uri;
	size_t urilen;          /* 0: undeclares (xmlns="") */
} xdecl;

typedef struct xelem {
	size_t s0, s1;          /* start tag "<" .. just after ">" */
	size_t e0, e1;          /* end tag; both s1 for an empty-element tag */
	size_t q0, q1;          /* qualified name */
	size_t local;           /* start of the local part */
	size_t attr_end;        /* end of the last attribute (or the name) */
	const uint8_t *uri;
	size_t urilen;
	int parent;             /* -1 at top level */
	int selfclose;
	size_t a0, na;          /* attributes */
	size_t d0, nd;          /* namespace declarations */
	size_t nchild;          /* child elements */
} xelem;

typedef struct xdoc {
	const uint8_t *s;
	size_t n;
	xelem *el;
	size_t nel;             /* arrays grown by ps_vec_grow */
	xattr *at;
	size_t nat;
	xdecl *dc;
	size_t ndc;
} xdoc;

/* Declarations an editor is about to add (not yet in the packet), attached
 * to an element of the parsed packet; ps_xml_lookup sees them first. */
typedef struct pdecl {
	int elem;
	char prefix[32];
	const char *uri;
} pdecl;
/* Tokenizes the whole packet S[0..N) into D (xml.c note 1); any departure
 * from well-formedness that we can see is PDFSTAMP_E_UNSUPPORTED.  D is
 * set up also on failure: free it with ps_xml_free either way. */
int ps_xml_parse(ps_ctx *ctx, const uint8_t *s, size_t n, xdoc *d);
void ps_xml_free(xdoc *d);

/* Looks the prefix P[0..PLEN) up in scope at element I (its own
 * declarations included), the NPD pending declarations PD first.  Returns
 * 1 and the URI if bound, 0 if not (or undeclared with xmlns:P=""). */
int ps_xml_lookup(const xdoc *d, const pdecl *pd, size_t npd, int i,
                  const uint8_t *p, size_t plen, const uint8_t **uri, size_t *urilen);
/* The element or (prefixed) attribute is {URI}LOCAL. */
int ps_xml_el_is(const xdoc *d, const xelem *e, const char *uri, const char *local);
int ps_xml_attr_is(const xdoc *d, const xattr *a, const char *uri, const char *local);

/* Small helpers shared with the editor. */
int ps_xml_is_ws(uint8_t c);                                 /* XML 1.0 S */
int ps_xml_span_is(const uint8_t *p, size_t n, const char *s);
/* PDFSTAMP_E_UNSUPPORTED: "XMP packet not understood: WHAT (at byte AT)". */
int ps_xml_bad(ps_ctx *ctx, const char *what, size_t at);

#endif
