/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stampid.c - stamp IDs: what a stamp is called, how its annotations carry
 * the name, and how a re-run finds the pages that already have it, so
 * that running the same stamp again never stamps a page twice.
 *
 * DESIGN NOTES
 *
 *  1. The format.  An ID is 1 to 32 characters of [A-Za-z0-9_-].  Every
 *     annotation pdfstamp_stamp writes has /NM (ISO 32000-2 12.5.2, Table
 *     166: the annotation name, a text string unique among the page's
 *     annotations) = ID "." N, N the decimal 1-based number of the page it
 *     was written on, without leading zeros, written as plain bytes (ASCII,
 *     which PDFDocEncoding and UTF-8 agree on), e.g. "Kx3_a9Qm2Z.12".  An
 *     /NM that does not match ^[A-Za-z0-9_-]{1,32}\.[1-9][0-9]{0,9}$ byte
 *     for byte carries no ID: older pdfstamp wrote 15 random characters
 *     (no '.'), other tools write what they like, and a UTF-16 /NM is not
 *     one of ours.  `pdfstamp stamps` and `unstamp` read the same format
 *     (ps_stampid_parse_nm).  With the default ID of 10 characters, /NM is
 *     at most 10 + 1 + 4 = 15 bytes up to page 9999: one AES block, as
 *     the random /NM was, so a one-page stamp's update keeps its size.
 *  2. The default ID (no ID given): the first 60 bits of the SHA-256 of a
 *     canonical serialisation of the options that define the stamp, as 10
 *     base64url characters (RFC 4648 section 5), so that an identical
 *     re-run gets the same ID and a different stamp another.  The
 *     serialisation starts with "pdfstamp-stamp-id" and its version (1);
 *     each field is its name, a NUL, a type and the value: a string as
 *     absent or its length (8 bytes, big-endian) and bytes; an integer as
 *     8 bytes big-endian; a real as the 8 bytes of its IEEE 754 binary64
 *     value, big-endian, -0 as 0 (so "0.5" and "0.50" agree).  Version 1
 *     has, in this order: text (NULL: "APPROVED" without an image), small,
 *     note (NULL: the text), icon (NULL: "Approved"), author, freetext,
 *     font, fonts (their count, then each), the image (the SHA-256 of its
 *     bytes, from a file or a buffer alike: never its path), has_rect and,
 *     only when it is set, rect; position, margin, offset, rotate,
 *     diagonal, scale, colour, opacity, image_opacity, qr, qr_level,
 *     bates_start, bates_prefix, bates_digits, and the date *as given*
 *     (NULL is "now", and "now" stays "now", so that a re-run a day later
 *     matches).  Not in it: the page selection (page, pages: `--pages 1`
 *     then `--pages all` stamps the other pages), file_name (one stamp,
 *     many files) and bates_offset (a batch's files differ in it).  A
 *     new option that changes what is drawn joins the list in a new
 *     version of the serialisation (which changes every default ID: a
 *     re-run across such an upgrade stamps again, unless --id is given).
 *     60 bits: two different stamps of a file collide with a probability
 *     of about n^2 / 2^61.
 *  3. A match.  For each selected page, before the update hands out its
 *     first number (incr.c note 6; so everything read here also counts
 *     for make_skip) and before anything is written, the page's /Annots
 *     (as stamp.c resolved it) is read entry by entry: a reference is
 *     looked up, a direct dictionary taken as it is, anything else (null,
 *     numbers, arrays, references to missing objects, objects that are
 *     not dictionaries) skipped.  /NM, direct or a reference (the shared
 *     /NM string object of earlier many-page stamps), must be a string
 *     whose decrypted bytes are exactly ID "." that page's number.  An
 *     entry that cannot be read (a damaged object, a string that does not
 *     decrypt: PDFSTAMP_E_FORMAT or _UNSUPPORTED) draws a warning and is
 *     not a match; I/O errors and out of memory end the call.  The subtype
 *     is not looked at: the name decides.  An /Annots of more than
 *     PS_STAMPID_MAX_ANNOTS entries is refused (FORMAT) rather than read
 *     for minutes; every entry costs one lookup, and the objects read stay
 *     in the document's cache, so the check costs O(annotations of the
 *     selected pages), nothing for pages without /Annots.
 *  4. What someone who can append a revision but not encrypt can do.  The
 *     /NM strings are encrypted, but nothing in a PDF authenticates them:
 *     AES-CBC without a MAC is malleable (flipping bits of the IV of a
 *     one-block string whose plaintext is known, e.g. our own /NM of a
 *     guessable default ID, gives any other one-block plaintext, padding
 *     included), and RC4 more so.  So such a party can make a page look
 *     already stamped (an annotation with /NM = ID.N, invisible if they
 *     like), and the next run leaves that page out: the page ends without
 *     the stamp.  They gain nothing by it: the same party can already
 *     take any stamp out of /Annots, or cover it, by appending a revision
 *     that needs no key at all (arrays of references and dictionaries
 *     without strings are plaintext).  Only a signature protects the
 *     revisions it covers, and `pdfstamp audit` reports what was appended
 *     after them.  The other direction (hiding our own stamp from the
 *     check, so that a page is stamped twice) needs them to change our
 *     annotation, which is the same power.  So the check trusts the file
 *     as far as the stamp itself can be trusted, and this is accepted
 *     rather than prevented; a caller who needs more signs the result.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "image.h"
#include "sha2.h"
#include "stampid.h"
#include "template.h"

#define ID_SERIAL_VERSION 1

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int id_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

int ps_stampid_valid(const char *id)
{
	size_t n;

	if (!id)
		return 0;
	for (n = 0; id[n]; n++)
		if (n >= PS_STAMPID_MAX || !id_char((unsigned char)id[n]))
			return 0;
	return n > 0;
}

/* ---- the default ID (note 2) ---------------------------------------------------- */

typedef ps_buf serial; /* the serialisation, hashed whole (a few hundred bytes) */

static void put_raw(serial *s, const void *p, size_t n)
{
	ps_buf_append(s, p, n);
}

static void put_u64(serial *s, uint64_t v)
{
	uint8_t b[8];
	int k;

	for (k = 0; k < 8; k++)
		b[k] = (uint8_t)(v >> (56 - 8 * k));
	put_raw(s, b, sizeof b);
}

static void put_field(serial *s, const char *name, char type)
{
	put_raw(s, name, strlen(name) + 1);
	put_raw(s, &type, 1);
}

static void put_str(serial *s, const char *name, const char *v)
{
	if (!v) {
		put_field(s, name, 'n');
		return;
	}
	put_field(s, name, 's');
	put_u64(s, (uint64_t)strlen(v));
	put_raw(s, v, strlen(v));
}

static void put_int(serial *s, const char *name, int64_t v)
{
	put_field(s, name, 'i');
	put_u64(s, (uint64_t)v);
}

static void put_real(serial *s, const char *name, double v)
{
	uint64_t bits;

	if (v == 0)
		v = 0; /* -0 as 0 */
	if (isnan(v))
		v = NAN;
	memcpy(&bits, &v, sizeof bits);
	put_field(s, name, 'd');
	put_u64(s, bits);
}

int ps_stampid_default(ps_ctx *ctx, const struct pdfstamp_stamp_opts *o,
                       const uint8_t *img_sha256, char id[PS_STAMPID_MAX + 1])
{
	static const char magic[] = "pdfstamp-stamp-id";
	const char *text = o->text ? o->text : img_sha256 ? NULL : "APPROVED";
	uint8_t h[32], v = ID_SERIAL_VERSION;
	serial s = PS_BUF_INIT;
	size_t i;
	int k, rc;

	put_raw(&s, magic, sizeof magic);
	put_raw(&s, &v, 1);
	put_str(&s, "text", text);
	put_str(&s, "small", o->small);
	put_str(&s, "note", o->note ? o->note : text ? text : "");
	put_str(&s, "icon", o->icon ? o->icon : "Approved");
	put_str(&s, "author", o->author);
	put_int(&s, "freetext", !!o->freetext);
	put_str(&s, "font", o->font);
	put_int(&s, "fonts", o->fonts ? (int64_t)o->nfonts : 0);
	for (i = 0; o->fonts && i < o->nfonts; i++)
		put_str(&s, "font", o->fonts[i]);
	put_field(&s, "image", img_sha256 ? 'h' : 'n');
	if (img_sha256)
		put_raw(&s, img_sha256, 32);
	put_int(&s, "has_rect", !!o->has_rect);
	for (k = 0; o->has_rect && k < 4; k++)
		put_real(&s, "rect", o->rect[k]);
	put_int(&s, "position", (int64_t)o->position);
	put_real(&s, "margin", o->margin);
	put_real(&s, "offset", o->offset[0]);
	put_real(&s, "offset", o->offset[1]);
	put_real(&s, "rotate", o->rotate);
	put_int(&s, "diagonal", !!o->diagonal);
	put_real(&s, "scale", o->scale);
	for (k = 0; k < 3; k++)
		put_real(&s, "color", o->color[k]);
	put_real(&s, "opacity", o->opacity);
	put_real(&s, "image_opacity", o->image_opacity);
	put_str(&s, "qr", o->qr);
	put_int(&s, "qr_level", (int64_t)o->qr_level);
	put_int(&s, "bates_start", o->bates_start);
	put_str(&s, "bates_prefix", o->bates_prefix);
	put_int(&s, "bates_digits", o->bates_digits);
	put_str(&s, "date", o->date ? o->date : "now");
	if (s.oom) {
		ps_buf_free(&s);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	rc = ps_sha256_hw(0, s.data, s.len, h);
	ps_buf_free(&s);
	if (rc != 0)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "SHA-256 failed");
	/* 60 bits, six at a time, most significant first */
	for (k = 0; k < PS_STAMPID_DEFAULT_LEN; k++) {
		int bit = 6 * k, byte = bit / 8, sh = bit % 8;
		unsigned w = ((unsigned)h[byte] << 8 | h[byte + 1]) >> (10 - sh);
		id[k] = b64url[w & 63];
	}
	id[PS_STAMPID_DEFAULT_LEN] = '\0';
	return 0;
}

int pdfstamp_stamp_id(pdfstamp_ctx *ctx, const struct pdfstamp_stamp_opts *opts,
                      char id[33])
{
	struct pdfstamp_stamp_opts cur = PDFSTAMP_STAMP_OPTS_INIT;
	ps_image *img = NULL;
	char *lit = NULL;
	uint8_t sha[32];
	int rc;

	if (!ctx)
		return PDFSTAMP_E_USAGE;
	if (!opts || !id || opts->version < 1 || opts->version > PDFSTAMP_STAMP_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "stamp options of an unknown version");
	/* an older, shorter struct: the rest keeps its defaults (as pdfstamp_stamp) */
	memcpy(&cur, opts, opts->version < 2 ? offsetof(struct pdfstamp_stamp_opts, font) :
	                   opts->version < 3 ? offsetof(struct pdfstamp_stamp_opts, pages) :
	                   sizeof cur);
	cur.version = PDFSTAMP_STAMP_OPTS_VERSION;
	if (cur.id) {
		if (!ps_stampid_valid(cur.id))
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "a stamp ID is 1 to 32 characters of A-Z, a-z, 0-9, _ and -");
		memcpy(id, cur.id, strlen(cur.id) + 1);
		return 0;
	}
	/* the text of those versions is literal: pdfstamp_stamp stamps it as
	 * the template ps_tmpl_literal makes, and that is what names it */
	if (opts->version < 3 && cur.text && (rc = ps_tmpl_literal(ctx, cur.text, &lit)) < 0)
		return rc;
	if (lit)
		cur.text = lit;
	if (cur.image || cur.image_data) {
		if (cur.image_data && !cur.image_len)
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the image is empty");
		else
			rc = ps_image_load(ctx, cur.image, cur.image ? NULL : cur.image_data,
			                   cur.image_len, &img);
		if (rc < 0) {
			free(lit);
			return rc;
		}
		ps_image_sha256(img, sha);
		ps_image_free(img);
	}
	rc = ps_stampid_default(ctx, &cur, cur.image || cur.image_data ? sha : NULL, id);
	free(lit);
	return rc;
}

/* ---- the name of each annotation (note 1) ------------------------------------------ */

size_t ps_stampid_nm(const char *id, int64_t page, char nm[PS_STAMPID_NM_MAX + 1])
{
	int n = snprintf(nm, PS_STAMPID_NM_MAX + 1, "%.32s.%lld", id, (long long)page);

	return n < 0 ? 0 : (size_t)n > PS_STAMPID_NM_MAX ? PS_STAMPID_NM_MAX : (size_t)n;
}

int ps_stampid_parse_nm(const uint8_t *p, size_t n, char id[PS_STAMPID_MAX + 1], int64_t *page)
{
	size_t i, dot;
	int64_t v = 0;

	for (dot = 0; dot < n && dot <= PS_STAMPID_MAX && id_char(p[dot]); dot++)
		;
	if (dot == 0 || dot > PS_STAMPID_MAX || dot >= n || p[dot] != '.' ||
	    n - dot - 1 < 1 || n - dot - 1 > 10 || p[dot + 1] == '0')
		return 0;
	for (i = dot + 1; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (p[i] - '0'); /* at most 10 digits: no overflow */
	}
	memcpy(id, p, dot);
	id[dot] = '\0';
	*page = v;
	return 1;
}

/* ---- the pages that have it (note 3) ------------------------------------------------- */

/* Resolves O; an unreadable object (FORMAT, UNSUPPORTED) is warned about
 * and *OUT left NULL.  0 or the error that ends the call. */
static int lenient_resolve(ps_doc *doc, ps_obj *o, int64_t page, ps_obj **out)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	int rc;

	*out = NULL;
	rc = ps_doc_resolve(doc, o, out);
	if (rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_UNSUPPORTED)
		return rc;
	*out = NULL;
	if (o && o->kind == PS_REF)
		ps_warn(ctx, "page %lld: object %u of its annotations cannot be read (%s); it is "
		        "not taken for a stamp", (long long)page, o->u.ref.num, ctx->errmsg);
	else
		ps_warn(ctx, "page %lld: an annotation cannot be read (%s); it is not taken "
		        "for a stamp", (long long)page, ctx->errmsg);
	ctx->errcode = 0; /* warned about, not an error of the call */
	ctx->errmsg[0] = '\0';
	ctx->errhint = PDFSTAMP_HINT_NONE;
	return 0;
}

int ps_stampid_on_page(ps_doc *doc, const ps_obj *annots, const char *id, int64_t page,
                       int *has)
{
	char nm[PS_STAMPID_NM_MAX + 1];
	size_t i, n, len;
	int rc;

	*has = 0;
	if (!annots || annots->kind != PS_ARRAY)
		return 0;
	n = ps_array_len(annots);
	if (n > PS_STAMPID_MAX_ANNOTS)
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_FORMAT,
		              "page %lld has %zu annotations, more than the %d that are checked "
		              "for a stamp", (long long)page, n, PS_STAMPID_MAX_ANNOTS);
	len = ps_stampid_nm(id, page, nm);
	for (i = 0; i < n; i++) {
		ps_obj *a = NULL, *s = NULL;
		if ((rc = lenient_resolve(doc, ps_array_get(annots, i), page, &a)) < 0)
			return rc;
		if (!a || a->kind != PS_DICT)
			continue;
		if ((rc = lenient_resolve(doc, ps_dict_get(a, "NM"), page, &s)) < 0)
			return rc;
		if (s && s->kind == PS_STR && s->u.str.len == len &&
		    memcmp(s->u.str.p, nm, len) == 0) {
			*has = 1;
			return 0;
		}
	}
	return 0;
}
