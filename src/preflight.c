/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preflight.c - the writers' pre-flight: may this incremental update be
 * written to this document (ps_preflight_update; policy.h)?
 *
 * DESIGN NOTES
 *
 * Place: above policy.c (the permission bits, the signatures of the newest
 * field tree, the rule table) and audit.c (the signed revisions' view);
 * below the writers that ask it (stamp.c, meta.c, dss.c).  It only reads.
 *
 *  1. In this order: the P bit (policy.c note 1; unless owner): annotations
 *     bit 6, metadata and DSS bit 4; an unknown policy refuses; then the
 *     kind of change the update makes (annotation, metadata, dss) against
 *     every signature's level and the certification of /Root /Perms
 *     /DocMDP, through the one rule table (pdfstamp_policy_allows): a change
 *     it forbids is refused before anything is written, exactly where
 *     `audit` would report a violation.  Allowed annotations and metadata
 *     under a signature are warned about; DSS is not.  Refusals are
 *     PDFSTAMP_E_PERM (exit 5), the unknown policy PDFSTAMP_E_UNSUPPORTED.
 *  2. The signed view.  With one revision, the newest field tree is what
 *     was signed.  With more, a later revision (written by anyone) could
 *     redefine a signature's /TransformParams, a /Lock or /Perms, or take
 *     a signature out of the tree: then the levels are read by
 *     pdfstamp_audit, each as of the revision its signature covers
 *     (audit.c note 2), and both views must permit the update.  That
 *     costs the audit's walk once per update, only on files that already
 *     have later revisions.
 *  3. Already broken.  A document that a later revision has already
 *     changed in a way a signature forbids (audit's verdict "violation")
 *     gets nothing more: whatever this update is, `audit` would report a
 *     violation after it, and an approval stamp on a tampered document is
 *     worse than none.  The refusal names the first forbidden change.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "ps.h"
#include "policy.h"

static const char *level_name(int docmdp)
{
	static const char *const n[] = {"an approval signature", "DocMDP P=1 (no changes allowed)",
	                                "DocMDP P=2 (form filling and signing only)",
	                                "DocMDP P=3 (form filling, signing and annotations only)"};
	return n[docmdp >= 0 && docmdp <= 3 ? docmdp : 0];
}

/* REP: pdfstamp_audit of DOC, to judge an update by the signed revisions:
 * 1, or 0 when DOC has one revision and no signature (REP left empty; the
 * audit would find nothing), or an error. */
static int signed_revisions(ps_doc *doc, struct pdfstamp_audit_report *rep)
{
	int nsec, rc;

	ps_xref_sections(ps_doc_xref(doc), &nsec);
	if (nsec == 1) { /* the field tree's signatures are all there are */
		struct pdfstamp_info *info = calloc(1, sizeof *info);
		int n;
		if (!info)
			return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
		rc = ps_policy_signatures(doc, info);
		n = info->nsigs;
		free(info->sigs);
		free(info);
		if (rc < 0 || n == 0)
			return rc;
	}
	if ((rc = pdfstamp_audit(doc, rep)) < 0)
		return ps_err_wrap(ps_doc_ctx(doc), rc,
		                   "cannot tell what the document's signatures permit; refusing "
		                   "to change the file");
	return 1;
}

/* The policies of the signed revisions (pdfstamp_audit, every signature
 * found in any revision, each read as of the revision it covers) against
 * CHANGE: note 2. */
static int signed_view(ps_doc *doc, int change, const char *what)
{
	struct pdfstamp_audit_report rep = PDFSTAMP_AUDIT_REPORT_INIT;
	int i, rc;

	if ((rc = signed_revisions(doc, &rep)) <= 0)
		goto out;
	/* already violated (note 3): name the first forbidden change */
	for (i = 0; i < rep.nrevisions; i++) {
		int k;
		for (k = 0; k < rep.revisions[i].nchanges; k++) {
			const struct pdfstamp_audit_change *c = &rep.revisions[i].changes[k];
			if (!c->forbidden)
				continue;
			rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_PERM,
			            "the document already breaks signature object %lld: "
			            "revision %d %s object %lld (%s%s%s), so %s is refused",
			            c->signature >= 0 && c->signature < rep.nsigs
			                ? (long long)rep.sigs[c->signature].objnum : -1LL,
			            i + 1,
			            c->action == PDFSTAMP_CHANGE_ADDED ? "added"
			            : c->action == PDFSTAMP_CHANGE_FREED ? "freed" : "changed",
			            (long long)c->object, pdfstamp_change_kind_name(c->kind),
			            c->reason[0] ? ": " : "", c->reason, what);
			goto out;
		}
	}
	for (i = 0; i < rep.nsigs; i++) {
		int p = rep.sigs[i].docmdp;
		if (!pdfstamp_policy_allows(p, change, 1)) {
			rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_PERM,
			            "signature object %lld is %s as signed; %s breaks it",
			            (long long)rep.sigs[i].objnum, level_name(p), what);
			goto out;
		}
	}
	rc = 0;
out:
	pdfstamp_audit_clear(&rep);
	return rc;
}

int ps_preflight_update(ps_doc *doc, enum ps_update_kind kind)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct pdfstamp_info *info;
	int annot = kind == PS_UPDATE_ANNOTATION || kind == PS_UPDATE_UNSTAMP;
	int change = annot ? PDFSTAMP_CHANGE_ANNOTATION
	             : kind == PS_UPDATE_DSS ? PDFSTAMP_CHANGE_DSS
	             : kind == PS_UPDATE_TIMESTAMP ? PDFSTAMP_CHANGE_DOC_TIMESTAMP
	             : PDFSTAMP_CHANGE_METADATA;
	const char *what = kind == PS_UPDATE_ANNOTATION ? "adding annotations"
	                   : kind == PS_UPDATE_UNSTAMP ? "removing annotations"
	                   : kind == PS_UPDATE_DSS ? "adding validation data (/DSS)"
	                   : kind == PS_UPDATE_TIMESTAMP ? "adding a document timestamp"
	                   : "changing metadata";
	int i, nsec, rc;

	{
		int bit = annot ? PS_PERM_ANNOTATE : PS_PERM_MODIFY;
		struct ps_doc_security ds;
		ps_doc_security(doc, &ds);
		if (!ps_policy_permits(doc, bit))
			return ps_err(ctx, PDFSTAMP_E_PERM,
			              "the document does not permit %s (permission bit %d is "
			              "clear); %s", annot ? what : "modifying it", bit,
			              ps_sec_recipients(ds.sec)
			              ? "a recipient granted it is needed"
			              : "the owner password is needed");
	}
	info = calloc(1, sizeof *info);
	if (!info)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if ((rc = ps_policy_signatures(doc, info)) < 0)
		goto out;
	/* The certification, from /Root /Perms /DocMDP (12.8.4.1), wherever its
	 * field is in the tree. */
	if (info->docmdp && !pdfstamp_policy_allows(info->docmdp, change, 1)) {
		rc = ps_err(ctx, PDFSTAMP_E_PERM,
		            "the document is certified with %s; %s breaks the certification",
		            level_name(info->docmdp), what);
		goto out;
	}
	if (info->sigs_incomplete) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		            "the form field tree is nested too deeply (or /Perms /DocMDP is "
		            "not a signature) to know every signature's policy; refusing to "
		            "change the file");
		goto out;
	}
	/* later revisions exist: each signature's policy as of the revision
	 * it covers (audit.c), so that a later revision cannot raise it */
	ps_xref_sections(ps_doc_xref(doc), &nsec);
	if (nsec > 1 && (rc = signed_view(doc, change, what)) < 0)
		goto out;
	for (i = 0; i < info->nsigs; i++) {
		int p = info->sigs[i].docmdp;
		if (!pdfstamp_policy_allows(p, change, 1)) {
			rc = ps_err(ctx, PDFSTAMP_E_PERM,
			            "signature object %lld is %s; %s breaks it",
			            (long long)info->sigs[i].objnum,
			            p ? level_name(p) : "an approval signature", what);
			goto out;
		}
		if (change == PDFSTAMP_CHANGE_DSS || change == PDFSTAMP_CHANGE_DOC_TIMESTAMP)
			continue; /* not a change to the document (note 3, a) */
		if (p == 3 || p == 2)
			ps_warn(ctx, "the document is certified with DocMDP P=%d; strict "
			        "validators may report the update as a modification", p);
		else
			ps_warn(ctx, "signature object %lld stays valid (its bytes are untouched), "
			        "but strict validators report %s %s as a modification",
			        (long long)info->sigs[i].objnum,
			        kind == PS_UPDATE_UNSTAMP ? "removed" : "added",
			        annot ? "annotations" : "metadata");
	}
out:
	free(info->sigs); /* ps_policy_signatures' list (info.c, above, owns pdfstamp_info_clear) */
	free(info);
	return rc;
}


int ps_preflight_removal(ps_doc *doc, int revision)
{
	struct pdfstamp_audit_report rep = PDFSTAMP_AUDIT_REPORT_INIT;
	int i, rc;

	if ((rc = signed_revisions(doc, &rep)) <= 0)
		goto out;
	for (i = 0; i < rep.nsigs; i++) {
		const struct pdfstamp_audit_sig *g = &rep.sigs[i];
		if (g->docmdp == 0 && (!g->revision || g->revision >= revision)) {
			rc = ps_err(ps_doc_ctx(doc), PDFSTAMP_E_PERM,
			            "an annotation to remove (added in revision %d) was there "
			            "when approval signature object %lld was made (revision %d); "
			            "removing it changes what the signer saw", revision,
			            (long long)g->objnum, g->revision);
			goto out;
		}
	}
	rc = 0;
out:
	pdfstamp_audit_clear(&rep);
	return rc;
}
