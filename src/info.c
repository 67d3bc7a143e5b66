/* SPDX-License-Identifier: Apache-2.0 */
/*
 * info.c - the facts `pdfstamp info` reports about a document
 * (pdfstamp_doc_info) and the release of what a report holds.
 *
 * DESIGN NOTES
 *
 *  1. Place: above doc.c (the cross-reference chain, the security state,
 *     lookups, the catalog and page tree: ps_doc_catalog, ps_doc_pages) and
 *     policy.c (the signatures and DocMDP levels: ps_policy_signatures).  It is
 *     not part of doc.c because the signatures are policy, and policy.c
 *     sits above doc.c: the report is the one reader of both.
 *  2. Of an encrypted document that is not authenticated only what needs
 *     no object is reported (the chain, /Encrypt, sizes): no object is read
 *     without the key, so bytes_read shows that the payload was not touched.
 *  3. The page count is the page tree root's /Count (ISO 32000-2 7.7.3.2);
 *     the tree itself is not walked.
 *  4. The lists (xref_kinds, sigs) are owned by INFO: allocated here,
 *     released by pdfstamp_info_clear, which a filling call runs first.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "pubsec.h"
#include "policy.h"

void pdfstamp_info_clear(struct pdfstamp_info *info)
{
	unsigned version;

	if (!info)
		return;
	version = info->version;
	free(info->xref_kinds);
	free(info->sigs);
	if (version >= 2)
		free(info->crypt_filters);
	/* a version-1 struct ends before ncrypt_filters */
	memset(info, 0,
	       version >= 3 ? sizeof *info
	       : version == 2 ? offsetof(struct pdfstamp_info, subfilter)
	                      : offsetof(struct pdfstamp_info, ncrypt_filters));
	info->version = version;
	if (version >= 3)
		info->recipient_index = -1;
}

int pdfstamp_doc_info(pdfstamp_doc *doc, struct pdfstamp_info *info)
{
	ps_obj *root = NULL, *pages = NULL;
	const ps_xref *x = ps_doc_xref(doc);
	struct ps_doc_security ds;
	const ps_section *secs;
	struct ps_xref_info xi;
	int i, nsec, rc;

	if (!info || info->version < 1 || info->version > PDFSTAMP_INFO_VERSION)
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_USAGE,
		              "pdfstamp_info of an unknown version (use PDFSTAMP_INFO_INIT)");
	pdfstamp_info_clear(info);
	info->file_size = ps_doc_size(doc);
	ps_doc_security(doc, &ds);
	info->encrypted = ds.sec != NULL;
	if (ds.sec) {
		if ((rc = ps_sec_describe(ps_doc_ctx(doc), ds.sec, info)) < 0)
			return rc;
		info->authenticated_as = ds.authenticated;
		info->p = ds.perms;
		if (info->version >= 3 && ps_sec_recipients(ds.sec)) {
			/* a damaged envelope counts as none here; auth names it */
			rc = ps_pubsec_count(ps_doc_ctx(doc), ds.sec);
			if (rc == PDFSTAMP_E_NOMEM)
				return rc;
			info->recipients = rc > 0 ? rc : 0;
			info->recipient_index = ds.recipient_index;
			snprintf(info->recipient, sizeof info->recipient, "%s", ds.recipient);
		}
	}
	secs = ps_xref_sections(x, &nsec);
	info->revisions = nsec;
	info->xref_kinds = calloc((size_t)nsec, sizeof *info->xref_kinds);
	if (!info->xref_kinds)
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < nsec; i++)
		info->xref_kinds[i] = secs[i].kind;
	info->last_is_stream = secs[0].kind == PDFSTAMP_XREF_STREAM;
	if ((rc = ps_xref_load_all(doc)) < 0)
		return rc;
	ps_xref_info(x, &xi);
	info->objects = xi.used;
	info->size = xi.size_key;
	info->has_trailing_bytes = xi.trailing > 0;
	info->trailing_bytes = xi.trailing;
	if (ds.sec && !ds.authenticated)
		goto done;
	if ((rc = ps_doc_catalog(doc, PS_CATALOG_DICT, &root, NULL)) < 0 ||
	    (rc = ps_doc_pages(doc, &pages, NULL, &info->pages)) < 0)
		return rc;
	if ((rc = ps_policy_signatures(doc, info)) < 0)
		return rc;
done:
	info->bytes_read = ps_doc_bytes_read(doc);
	return 0;
}
