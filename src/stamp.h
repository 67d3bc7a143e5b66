/* SPDX-License-Identifier: Apache-2.0 */
/* stamp.h - internal: what stamp.c shares with the other modules: its
 * bounded page-tree walk (stamp.c note 1).  Conventions: ps.h. */
#ifndef PS_STAMP_H
#define PS_STAMP_H

#include "ps.h"
#include "doc.h"

/* Called for each page, in order: PAGE its 1-based number, NUM and GEN
 * its object, DICT the page dictionary (borrowed: the document's cache),
 * ANNOTS its /Annots resolved (a direct array, or the object an indirect
 * /Annots names; NULL when the page has none or names a missing object).
 * A non-zero return stops the walk and is returned. */
typedef int (*ps_stamp_page_fn)(void *arg, int64_t page, uint32_t num, uint16_t gen,
                                ps_obj *dict, ps_obj *annots);
/* Every page of DOC through the stamp's own walk (stamp.c note 1: bounded
 * by the file's objects and MAX_TREE_DEPTH, /Count checked), which reads
 * every page first; then FN for each.  0, FN's return, or an error. */
int ps_stamp_each_page(ps_doc *doc, ps_stamp_page_fn fn, void *arg);

#endif
