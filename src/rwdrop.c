/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rwdrop.c - what the full rewrite drops (rewrite.c design note 3): the
 * chain's own xref streams (the sections' streams and hybrid /XRefStm
 * streams: ps_doc_is_xref_stream) and the linearization dictionary,
 * decided by object number before anything is read.  The rewrite leaves
 * them out, and its self-check (rwcheck.c note 1c) expects them gone.
 *
 * DESIGN NOTES
 *
 *  1. Only the real linearization dictionary is dropped (find_linearization:
 *     the first object, within the first 1024 bytes, a dictionary whose
 *     /Linearized is a number, not the catalog); anything else carrying a
 *     /Linearized key is content and is kept.
 *  State: none; the list is the caller's.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int ps_rwdrop_has(const uint32_t *dropped, size_t ndropped, uint32_t num)
{
	size_t lo = 0, hi = ndropped;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dropped[mid] == num)
			return 1;
		if (dropped[mid] < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* The linearization parameter dictionary (ISO 32000-2 Annex F.2), if the
 * file has one: the live object at the lowest offset, preceded only by the
 * header and comments, within the first 1024 bytes, a dictionary (not a
 * stream) whose /Linearized is a number, and not the catalog (not /Root,
 * no /Type /Catalog, no /Pages).  Anything else carrying a /Linearized key
 * is content and is kept.  *out is its number or 0. */
static int find_linearization(ps_doc *doc, uint32_t root_num, uint32_t *out)
{
	uint32_t num, first = 0;
	int64_t off = INT64_MAX;
	ps_buf head = PS_BUF_INIT;
	ps_obj *o = NULL, *lin;
	double v;
	int rc = 0;
	const ps_xref *x = ps_doc_xref(doc);

	*out = 0;
	for (num = ps_xref_next(x, 0); num != 0; num = ps_xref_next(x, num)) {
		const ps_xent *e = ps_xref_get(x, num);
		if (e->type == 1 && e->off < off) {
			off = e->off;
			first = num;
		}
	}
	if (first == 0 || first == root_num || off > 1024)
		return 0;
	if ((rc = ps_doc_pread(doc, 0, (size_t)off, &head)) < 0)
		goto out;
	if ((int64_t)head.len != off || head.len < 5 || memcmp(head.data, "%PDF-", 5) != 0 ||
	    ps_parse_skip_ws(head.data, head.len, 0) != head.len)
		goto out;
	if ((rc = ps_doc_parse_at(doc, off, first, &o, NULL)) < 0) {
		rc = 0; /* not a linearization dictionary; the rewrite reports it */
		goto out;
	}
	lin = ps_dict_get(o, "Linearized");
	if (o->kind == PS_DICT && lin && ps_obj_num(lin, &v) == 0 &&
	    !ps_obj_is_name(ps_dict_get(o, "Type"), "Catalog") && !ps_dict_get(o, "Pages"))
		*out = first;
out:
	ps_obj_free(o);
	ps_buf_free(&head);
	return rc;
}

int ps_rwdrop_list(ps_doc *doc, uint32_t root_num, uint32_t **out, size_t *nout)
{
	const ps_section *secs;
	uint32_t lin, *d;
	size_t n = 0;
	int i, nsec, rc;

	*out = NULL;
	*nout = 0;
	if ((rc = find_linearization(doc, root_num, &lin)) < 0)
		return rc;
	secs = ps_xref_sections(ps_doc_xref(doc), &nsec);
	if (!(d = malloc(((size_t)nsec * 2 + 1) * sizeof *d)))
		return ps_err(ps_doc_ctx(doc), PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < nsec; i++) {
		uint32_t c[2] = {secs[i].stream_num, secs[i].xrefstm_num};
		int k;
		for (k = 0; k < 2; k++)
			if (c[k] != 0 && c[k] != root_num && ps_doc_is_xref_stream(doc, c[k]))
				d[n++] = c[k];
	}
	if (lin)
		d[n++] = lin;
	qsort(d, n, sizeof *d, cmp_u32);
	for (i = 0; (size_t)i < n; i++) /* unique */
		if (*nout == 0 || d[*nout - 1] != d[i])
			d[(*nout)++] = d[i];
	*out = d;
	return 0;
}
