/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pdfgen.h - small PDF files written byte by byte for the unit suites
 * (check_doc, check_incr): objects at recorded offsets, a classic section
 * or an uncompressed xref stream listing exactly the entries given, so the
 * reader is tested against bytes the library did not write.
 */
#ifndef PDFGEN_H
#define PDFGEN_H

#include "ps.h"

#define PG_MAX 64

typedef struct pg_ent {
	uint32_t num;
	int type;          /* 0 free, 1 in use, 2 compressed */
	uint64_t f2;       /* offset, object stream number, or next free */
	uint32_t f3;       /* generation, or index in the object stream */
} pg_ent;

typedef struct pg {
	ps_buf b;
	int64_t off[PG_MAX];   /* where "N G obj" starts */
	uint16_t gen[PG_MAX];
} pg;

/* Header (PDF 1.7 and a binary comment line). */
void pg_start(pg *p);
/* "NUM GEN obj\n<BODY>\nendobj\n" (BODY printf-style). */
void pg_obj(pg *p, uint32_t num, uint16_t gen, const char *fmt, ...) PS_PRINTF(4, 5);
/* A stream object with DICT's keys plus /Length. */
void pg_stream(pg *p, uint32_t num, const char *dict, const void *data, size_t n);
/* The in-use entry of object NUM as recorded. */
pg_ent pg_used(const pg *p, uint32_t num);
/* A classic section (one subsection per run) of ENTS, "trailer" TRAILER,
 * startxref, %%EOF.  Returns the section's offset. */
int64_t pg_table(pg *p, const pg_ent *ents, size_t n, const char *trailer);
/* Object XNUM: an unfiltered xref stream, /W [1 4 2], /Index per run,
 * DICT_EXTRA added to its dictionary (/Size, /Root, /Prev ...), which must
 * list XNUM itself among ENTS (f2 0 there is replaced by its offset).
 * Returns the stream's offset. */
int64_t pg_xref_stream(pg *p, uint32_t xnum, pg_ent *ents, size_t n, const char *dict_extra);
/* Writes the file DIR/NAME and frees the buffer; returns the path (static
 * storage, overwritten by the next call). */
const char *pg_save(pg *p, const char *dir, const char *name);
/* A fresh directory under /tmp (static storage), and its removal. */
const char *pg_tmpdir(const char *tag);
void pg_rmdir(const char *dir);
/* The whole file PATH (malloc'ed, *N bytes). */
uint8_t *pg_slurp(const char *path, size_t *n);
/* A classic section of objects 0 .. N-1, N - 1 the highest written (those
 * not written are free entries), trailer << /Size N /Root 1 0 R
 * TRAILER_EXTRA >>.  Returns the section's offset. */
int64_t pg_table_all(pg *p, const char *trailer_extra);
/* pg_table_all, then pg_save (check_policy, check_rewrite). */
const char *pg_save_table(pg *p, const char *trailer_extra, const char *dir, const char *name);
/* A signature dictionary's placeholder /ByteRange, and the setting of the
 * first one at or after FROM to end at P's current end (the end of the
 * revision just written: the signature covers its revision). */
#define PG_SIG_BR "/ByteRange[0 0000000000 0000000000 0000000000]"
void pg_set_byterange(pg *p, size_t from);

#endif
