/* SPDX-License-Identifier: Apache-2.0 */
/* policy.h - internal: permissions and signature policy (conventions: ps.h; design: policy.c). */
#ifndef PS_POLICY_H
#define PS_POLICY_H

#include "ps.h"
#include "doc.h"

/* ---- policy.c: what a document lets us do ----------------------------------- */

/* The permission bits of /P that have names (ISO 32000-2 Table 22),
 * numbered from 1 as the table numbers them. */
#define PS_PERM_PRINT 3
#define PS_PERM_MODIFY 4
#define PS_PERM_COPY 5
#define PS_PERM_ANNOTATE 6
#define PS_PERM_FILL_FORMS 9
#define PS_PERM_EXTRACT 10
#define PS_PERM_ASSEMBLE 11
#define PS_PERM_PRINT_HIGH 12

/* Does DOC grant permission BIT (1..32)?  1 for a plaintext document and
 * for one opened with the owner password, else bit BIT of the effective
 * permissions (pdfstamp_doc_auth); 0 for an encrypted document that is not
 * authenticated.  The only reader of doc->perms but pdfstamp_doc_info. */
int ps_policy_permits(const ps_doc *doc, int bit);
/* The /P a full rewrite keeps when no new permissions are asked for: the
 * effective permissions of an encrypted input, every permission (-4) for a
 * plaintext one. */
int64_t ps_policy_kept_p(const ps_doc *doc);

/* Appends the signatures found through /AcroForm to info->sigs and sets
 * info->docmdp and info->sigs_incomplete (design note 2). */
int ps_policy_signatures(ps_doc *doc, struct pdfstamp_info *info);

/* The walk behind ps_policy_signatures (and pdfstamp_audit): calls FN for
 * every signature field with a signature dictionary as /V, in field tree
 * order, with the field, the signature (both borrowed), the signature's
 * object number (0 if direct), its DocMDP level (0 approval) and the
 * field's fully qualified name (UTF-8, 12.7.4.2).  *DOCMDP receives the
 * level of /Root /Perms /DocMDP; *INCOMPLETE is set where the tree cannot
 * be walked whole (design note 2).  FN returns 0 or an error, which stops
 * the walk. */
typedef int (*ps_sig_field_fn)(void *ud, ps_obj *field, uint32_t fnum, ps_obj *sig, uint32_t snum,
                               int level, const char *name);
int ps_policy_sig_fields(ps_doc *doc, int *docmdp, int *incomplete, ps_sig_field_fn fn, void *ud);

/* What an incremental update is about to add (ps_preflight_update). */
enum ps_update_kind {
	PS_UPDATE_METADATA = 0,       /* meta: /Info and the XMP packet: P bit 4 */
	PS_UPDATE_ANNOTATION = 1,     /* stamp: an annotation: P bit 6 */
	PS_UPDATE_DSS = 2,            /* dss: the catalog's /DSS (policy.c note 3) */
	PS_UPDATE_UNSTAMP = 3,        /* unstamp: annotations taken out of /Annots: judged as
	                                 PS_UPDATE_ANNOTATION, then ps_preflight_removal */
	PS_UPDATE_TIMESTAMP = 4       /* timestamp: a document timestamp, judged as PS_UPDATE_DSS
	                                 (P bit 4, every DocMDP level: ISO 32000-2 12.8.2.2) */
};
/* The pre-flight of stamp, meta and dss: refuses an update that the
 * permissions (P bit 6 for annotations, bit 4 otherwise, unless owner) or
 * a signature's policy (the rule table, pdfstamp_policy_allows: what
 * `audit` would call a violation) forbid, or whose signature policy cannot
 * be known; warns where signatures will be reported as modified (design
 * notes 3 and 3b).  PS_UPDATE_DSS is allowed under every DocMDP level. */
int ps_preflight_update(ps_doc *doc, enum ps_update_kind kind);
/* After ps_preflight_update(PS_UPDATE_UNSTAMP): refuses (PDFSTAMP_E_PERM)
 * to remove annotations the oldest of which was added in REVISION (1 = the
 * original file, as pdfstamp_audit numbers them; 1 when unknown) if an
 * approval signature (or document timestamp) was made in that revision or
 * a later one: audit forbids removing an annotation that existed when an
 * approval signature was made (audit.c note 5: it changes what the
 * signer saw).  Certifications were judged by ps_preflight_update
 * (P=3 permits removal, ISO 32000-2 12.8.2.2). */
int ps_preflight_removal(ps_doc *doc, int revision);
/* The pre-flight of a full rewrite (rotate, encrypt): refuses a signed or
 * AppendOnly document unless FLAGS has PDFSTAMP_REWRITE_FORCE, and then
 * warns that the signatures will no longer validate (design note 4). */
int ps_policy_rewrite(ps_doc *doc, unsigned flags);

#endif
