/* SPDX-License-Identifier: Apache-2.0 */
/* image.h - internal: images for stamps: PNG (libspng) and JPEG (passed
 * through as /DCTDecode) (conventions: ps.h).  Only stamp.c uses it. */
#ifndef PS_IMAGE_H
#define PS_IMAGE_H

#include "ps.h"
#include "incr.h"

typedef struct ps_image ps_image;

/* Limits (image.c design notes).  Larger images are PDFSTAMP_E_UNSUPPORTED,
 * refused from their header, before any pixel buffer is allocated. */
#define PS_IMAGE_MAX_FILE   ((size_t)64 << 20)   /* bytes of the file or buffer */
#define PS_IMAGE_MAX_DIM    16384u               /* pixels in each dimension */
#define PS_IMAGE_MAX_PIXELS ((uint64_t)32 << 20)  /* width x height: a 128 MiB RGBA decode */
#define PS_IMAGE_MAX_CHUNK  ((size_t)4 << 20)    /* a compressed PNG ancillary chunk, inflated;
                                                  * twice that for all kept ancillary data */

/* Loads an image from PATH or, when PATH is NULL, from DATA/LEN (not
 * kept).  Sniffs the format; dimensions and decoded size are bounded.
 * Unreadable file: PDFSTAMP_E_USAGE; damaged, unsupported or too large
 * image: PDFSTAMP_E_FORMAT or PDFSTAMP_E_UNSUPPORTED, with a message naming
 * what is wrong.  Nothing is written. */
int ps_image_load(ps_ctx *ctx, const char *path, const uint8_t *data, size_t len, ps_image **out);
void ps_image_size(const ps_image *im, uint32_t *w, uint32_t *h);
/* The SHA-256 of the bytes the image was loaded from (the file's, or
 * DATA's): what names the image in a stamp's default ID (stampid.c). */
void ps_image_sha256(const ps_image *im, uint8_t out[32]);

/* Adds the image XObject (and its /SMask) to UP once; *NUM is the image.
 * A second call with the same UP returns the same number; with another
 * update the objects are added to that one anew.  The objects are
 * plaintext: the writer encrypts them like every new object. */
int ps_image_embed(ps_image *im, ps_update *up, uint32_t *num);

void ps_image_free(ps_image *im);

#endif
