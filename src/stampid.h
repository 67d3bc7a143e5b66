/* SPDX-License-Identifier: Apache-2.0 */
/* stampid.h - internal: stamp IDs, the /NM of each stamp annotation and
 * the search for a page's stamp of an ID (stampid.c; conventions: ps.h). */
#ifndef PS_STAMPID_H
#define PS_STAMPID_H

#include "ps.h"
#include "doc.h"

#define PS_STAMPID_MAX 32          /* characters of an ID */
#define PS_STAMPID_DEFAULT_LEN 10  /* of a default ID */
#define PS_STAMPID_NM_MAX (PS_STAMPID_MAX + 1 + 10) /* ID "." page, without the NUL */
#define PS_STAMPID_MAX_ANNOTS 100000 /* entries of one page's /Annots that are read */

/* 1 if ID is 1 to PS_STAMPID_MAX characters of [A-Za-z0-9_-], else 0. */
int ps_stampid_valid(const char *id);

/* The default ID of the stamp O (note 2): PS_STAMPID_DEFAULT_LEN base64url
 * characters and a NUL into ID.  IMG_SHA256 is the SHA-256 of the image's
 * bytes (NULL: the stamp has no image).  0 or PDFSTAMP_E_* (message set). */
int ps_stampid_default(ps_ctx *ctx, const struct pdfstamp_stamp_opts *o,
                       const uint8_t *img_sha256, char id[PS_STAMPID_MAX + 1]);

/* The /NM of the stamp ID on page PAGE (1-based): ID "." PAGE, NUL
 * terminated; its length. */
size_t ps_stampid_nm(const char *id, int64_t page, char nm[PS_STAMPID_NM_MAX + 1]);

/* Splits the bytes P[0..N) of an /NM (note 1): 1 and ID, *PAGE when it is
 * ID "." PAGE, else 0 (an /NM that carries no ID; ID and *PAGE are not
 * written).  stamps.c reads every /NM with it. */
int ps_stampid_parse_nm(const uint8_t *p, size_t n, char id[PS_STAMPID_MAX + 1], int64_t *page);

/* *HAS = 1 if ANNOTS (a page's /Annots, resolved; NULL or not an array:
 * none) holds an annotation whose /NM is ID "." PAGE (note 3).  Entries
 * that cannot be read are warned about and are not a match.  0, or
 * PDFSTAMP_E_NOMEM, PDFSTAMP_E_IO, PDFSTAMP_E_FORMAT for an /Annots of
 * more than PS_STAMPID_MAX_ANNOTS entries (message set). */
int ps_stampid_on_page(ps_doc *doc, const ps_obj *annots, const char *id, int64_t page,
                       int *has);

#endif
