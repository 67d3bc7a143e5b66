/* SPDX-License-Identifier: Apache-2.0 */
/* xmp.h - internal: XMP packets (conventions: ps.h). */
#ifndef PS_XMP_H
#define PS_XMP_H

#include "ps.h"

/* ---- xmp.c: XMP metadata packets ------------------------------------------- */

typedef struct ps_meta_kv {
	const char *key;     /* Info key: Title, Author, Subject, Keywords, Creator,
	                        Producer, or a custom key */
	const char *value;   /* UTF-8; NULL = remove */
} ps_meta_kv;

/* Rewrites an XMP packet (OLD may be NULL or empty: a fresh packet is made)
 * so that it agrees with the Info changes in KV and carries MODDATE
 * (xmp:ModifyDate and xmp:MetadataDate) in ISO form.  Title -> dc:title
 * (x-default), Author -> dc:creator (seq), Subject -> dc:description,
 * Keywords -> pdf:Keywords, Producer -> pdf:Producer, Creator ->
 * xmp:CreatorTool; custom keys -> pdfx:<Key>.  Everything else in the
 * packet is preserved byte for byte where possible.  Values are XML-escaped.
 * The result is appended to OUT. */
int ps_xmp_update(ps_ctx *ctx, const uint8_t *old, size_t oldlen,
                  const ps_meta_kv *kv, size_t nkv, const char *moddate_iso, ps_buf *out);

#endif
