/* rewrite.h - internal: the full rewrite (conventions: ps.h). */
#ifndef PS_REWRITE_H
#define PS_REWRITE_H

#include "ps.h"

/* ---- rewrite.c ------------------------------------------------------------------ */

/* Its entry points are public (pdfstamp.h); the choice of the output's
 * xref form is xrefw.h's ps_xrefw_form. */

/* ---- rwcheck.c: the self-check (rewrite.c design note 5) ------------------------ */

/* Checks the rewritten file at PATH against its input DOC before it
 * replaces anything (rwcheck.c note 1): opened with the new OWNER password
 * (OWNER_LEN bytes), verified, its live objects those of DOC less its
 * /Encrypt and DROPPED (NDROPPED numbers, sorted) plus ENC_NUM (the new
 * /Encrypt) and its own xref stream, its page tree the input's.  0, or
 * PDFSTAMP_E_FORMAT if the input is damaged, else PDFSTAMP_E_INTERNAL
 * (rwcheck.c note 2). */
int ps_rewrite_check(ps_doc *doc, const char *path, const char *owner, size_t owner_len,
                     const uint32_t *dropped, size_t ndropped, uint32_t enc_num);

#endif
