/* SPDX-License-Identifier: Apache-2.0 */
/* input.h - internal: reading a document's input file (conventions: ps.h). */
#ifndef PS_INPUT_H
#define PS_INPUT_H

#include "ps.h"

/* ---- input.c: the input file of a document ------------------------------------- */

/* What every module may know of the document's file (the fields are the
 * reader's: docpriv.h).  None of these fails. */
/* Its context (the one it was opened with): errors and warnings go there. */
ps_ctx *ps_doc_ctx(const ps_doc *doc);
/* Where reading stops: the file's size at open, or after a salvage open
 * the end of the last revision that loads (doc.c note 6).  Every read is
 * bounded by it (input.c note 1). */
int64_t ps_doc_size(const ps_doc *doc);
/* The file behind the document, for the writers: */
struct ps_doc_file {
	int fd;                       /* its descriptor, the document's (callers never close it) */
	const char *path;             /* as opened (borrowed, as long as the document) */
	mode_t mode;                  /* its permission bits at open (a replacement keeps them) */
	int locked;                   /* the exclusive lock of PDFSTAMP_OPEN_WRITE is held */
};
void ps_doc_file(const ps_doc *doc, struct ps_doc_file *out);
/* The update a writer left pending on the document (PDFSTAMP_WRITE_DEFER,
 * incr.c), or NULL; setting one hands it over: closing the document calls
 * DROP(P) if it is still there. */
void *ps_doc_pending(const ps_doc *doc);
void ps_doc_set_pending(ps_doc *doc, void *p, void (*drop)(void *p));

/* Reads up to LEN bytes at OFF into OUT (replacing its contents); fewer
 * only at end of file.  Counts bytes_read (distinct bytes, note 2). */
int ps_doc_pread(ps_doc *doc, int64_t off, size_t len, ps_buf *out);
/* The distinct bytes read so far (note 2): what the reports give as
 * bytes_read, never more than the size. */
int64_t ps_doc_bytes_read(const ps_doc *doc);
/* "1.7", or the header's version when it is a later one ("%PDF-2.0"): what
 * a full rewrite writes in its own header (OUT holds 16 bytes). */
int ps_doc_header_version(ps_doc *doc, char out[16]);
/* Parses the indirect object at OFF without decrypting (used for xref
 * streams and by lookup).  Owned result.  EXPECT_NUM 0 accepts any object
 * number; NUM_OUT (may be NULL) receives the number found. */
int ps_doc_parse_at(ps_doc *doc, int64_t off, uint32_t expect_num, ps_obj **out, uint32_t *num_out);
/* The most bytes ps_doc_parse_at reads for one object (input.c note 3):
 * an object, or a stream's dictionary, that needs more is refused. */
#define PS_OBJ_MAX ((size_t)64 << 20)

#endif
