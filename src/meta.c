/* SPDX-License-Identifier: Apache-2.0 */
/*
 * meta.c - document metadata as an incremental update.
 *
 * DESIGN NOTES
 *
 *  1. /Info: if the trailer's /Info is an indirect dictionary, a new
 *     version of that object (same number and generation) is written; if it
 *     is direct or missing, a new Info object is made and the new trailer
 *     points at it (ISO 32000-2 14.3.3, 7.5.6).  Every key not named is
 *     copied.  /ModDate is always set; its strings are encrypted like any
 *     others.
 *  2. XMP (--xmp): the catalog's /Metadata stream gets a new version with
 *     the same keys (minus filters, as we write it uncompressed) and the
 *     packet rewritten by ps_xmp_update(); with /EncryptMetadata false it
 *     stays plaintext (sec.c decides per stream, ps_sec_stream_encrypted,
 *     when incr.c writes it; 14.3.2, Table 21).  A file without XMP
 *     gets a new stream and a new version of the catalog that points at
 *     it.  ModDate in /Info and xmp:ModifyDate carry the same instant.
 *  3. The catalog, when rewritten, is a plain indirect object (never in an
 *     object stream: ISO 32000-2 7.5.7, as corrected by pdf-issues#439).
 *  4. Everything read is read before the first new number is handed out
 *     (incr.c note 6): /Info, then with --xmp the catalog, its /Metadata
 *     stream and the old packet (xmp_read).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "policy.h"


static int valid_key(const char *k)
{
	const unsigned char *p = (const unsigned char *)k;

	if (!*p)
		return 0;
	for (; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || strchr("()<>[]{}/%#", *p))
			return 0;
	return 1;
}

/* The Info text entries that a fresh XMP packet must mirror (design note
 * 2): every string of the new Info dictionary but the dates. */
static int info_to_kv(ps_ctx *ctx, const ps_obj *info, ps_meta_kv **kv, size_t *n, char ***vals)
{
	size_t i, k = 0;

	*kv = calloc(info->u.dict.len + 1, sizeof **kv);
	*vals = calloc(info->u.dict.len + 1, sizeof **vals);
	if (!*kv || !*vals)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < info->u.dict.len; i++) {
		const ps_dict_ent *e = &info->u.dict.ents[i];
		ps_buf u = PS_BUF_INIT;
		int rc;
		if (e->val->kind != PS_STR || !strcmp(e->key, "ModDate") ||
		    !strcmp(e->key, "CreationDate"))
			continue;
		if ((rc = ps_text_to_utf8(ctx, e->val->u.str.p, e->val->u.str.len, &u)) < 0) {
			ps_buf_free(&u);
			return rc;
		}
		ps_buf_putc(&u, 0);
		if (u.oom)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		(*vals)[k] = (char *)ps_buf_detach(&u, NULL);
		(*kv)[k].key = e->key;
		(*kv)[k].value = (*vals)[k];
		k++;
	}
	*n = k;
	return 0;
}

/* What update_xmp reads of the file: the catalog, its /Metadata stream
 * and the old packet, read before the update hands out its first number
 * (incr.c note 6: a new number is never one these objects name). */
struct xmp_src {
	ps_obj *root, *rref;  /* the catalog and the trailer's reference to it (borrowed) */
	ps_obj *mref, *md;    /* its /Metadata reference and stream (borrowed), md NULL if none */
	ps_buf old;           /* the old packet, decoded (secret) */
};

static int xmp_read(ps_doc *doc, struct xmp_src *x)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	int rc;

	memset(x, 0, sizeof *x);
	x->old.secret = 1;
	if ((rc = ps_doc_catalog(doc, PS_CATALOG_INDIRECT, &x->root, &x->rref)) < 0)
		return rc;
	x->mref = ps_dict_get(x->root, "Metadata");
	if (x->mref && x->mref->kind == PS_REF) {
		if ((rc = ps_doc_resolve(doc, x->mref, &x->md)) < 0)
			return rc;
		if (x->md && x->md->kind != PS_STREAM)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the catalog's /Metadata is not a stream");
	}
	if (x->md && (rc = ps_doc_stream_data(doc, x->mref->u.ref.num, x->md, 1, &x->old)) < 0)
		return rc;
	return 0;
}

static int update_xmp(ps_update *up, const struct pdfstamp_meta_opts *o, const struct xmp_src *x,
                      const ps_obj *ninfo, const char *iso)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct ps_doc_security ds;
	ps_obj *root = x->root, *rref = x->rref, *mref = x->mref, *md = x->md, *dict = NULL, *stm,
	       *cat;
	ps_buf out = PS_BUF_INIT;
	ps_meta_kv *kv = NULL;
	size_t nkv = 0;
	char **vals = NULL;
	uint32_t num;
	uint16_t gen = 0;
	uint8_t *data;
	size_t i, dlen;
	int rc;

	if (md) {
		/* an existing packet: apply the same changes as to /Info */
		nkv = o->nitems;
		kv = calloc(nkv ? nkv : 1, sizeof *kv);
		if (!kv)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		for (i = 0; i < nkv; i++) {
			kv[i].key = o->items[i].key;
			kv[i].value = o->items[i].value;
		}
	} else if ((rc = info_to_kv(ctx, ninfo, &kv, &nkv, &vals)) < 0) {
		goto out;
	}
	out.secret = 1;
	/* The new stream's dictionary is of our own making, never a copy of
	 * the old one: a newer revision may have retyped that (/Type /XRef) or
	 * given it an /Identity crypt filter to have our packet written in
	 * clear (issue 11). */
	dict = ps_new_dict();
	if (!dict || ps_dict_put_name(dict, "Type", "Metadata") < 0 ||
	    ps_dict_put_name(dict, "Subtype", "XML") < 0)
		goto oom;
	ps_doc_security(doc, &ds);
	if (md && !ps_sec_same_keystream(ds.sec)) {
		num = mref->u.ref.num;
		gen = mref->u.ref.gen;
	} else {
		/* no packet yet, or RC4: a new packet under the old number
		 * would reuse the old one's key stream */
		if (!(num = ps_update_alloc(up))) {
			rc = ctx->errcode;
			goto out;
		}
		/* the catalog must point at the new stream */
		cat = ps_obj_copy(root);
		if (!cat || ps_dict_put_ref(cat, "Metadata", num, 0) < 0) {
			ps_obj_free(cat);
			goto oom;
		}
		if ((rc = ps_update_put(up, rref->u.ref.num, rref->u.ref.gen, cat)) < 0)
			goto out;
	}
	if ((rc = ps_xmp_update(ctx, x->old.data, x->old.len, kv, nkv, iso, &out)) < 0)
		goto out;
	if (ds.sec && !ps_sec_encrypt_metadata(ds.sec)) {
		/* Plaintext metadata (EncryptMetadata false).  Saying so with an
		 * Identity crypt filter (7.6.6) lets readers that ignore
		 * EncryptMetadata (MuPDF, poppler) read it too. */
		ps_obj *f = ps_new_array(), *p = ps_new_array(), *pd = ps_new_dict();
		if (!f || !p || !pd || ps_array_push(f, ps_new_name("Crypt")) < 0 ||
		    ps_dict_put_name(pd, "Type", "CryptFilterDecodeParms") < 0 ||
		    ps_dict_put_name(pd, "Name", "Identity") < 0) {
			ps_obj_free(f);
			ps_obj_free(p);
			ps_obj_free(pd);
			goto oom;
		}
		rc = ps_array_push(p, pd);
		if (rc == 0)
			rc = ps_dict_put(dict, "Filter", f);
		else
			ps_obj_free(f);
		if (rc == 0)
			rc = ps_dict_put(dict, "DecodeParms", p);
		else
			ps_obj_free(p);
		if (rc < 0)
			goto oom;
	}
	data = ps_buf_detach(&out, &dlen);
	if (!data)
		goto oom;
	stm = ps_new_stream(dict, data, dlen);
	dict = NULL;
	if (!stm)
		goto oom;
	rc = ps_update_put(up, num, gen, stm);
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(dict);
	ps_buf_free(&out);
	free(kv);
	for (i = 0; vals && vals[i]; i++)
		free(vals[i]);
	free(vals);
	return rc;
}

int pdfstamp_meta(pdfstamp_doc *doc, const struct pdfstamp_meta_opts *o,
                  const struct pdfstamp_write_opts *w, struct pdfstamp_result *res)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct ps_doc_security ds;
	ps_update up;
	ps_time when;
	ps_obj *iref, *info = NULL, *ninfo = NULL, *ninfo_written = NULL;
	struct xmp_src x;
	char pdfdate[32], iso[32];
	uint32_t num;
	uint16_t gen;
	size_t i;
	int rc;

	if ((rc = ps_result_begin(ctx, res)) < 0)
		return rc;
	if (!o || o->version != PDFSTAMP_META_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "metadata options of an unknown version");
	for (i = 0; i < o->nitems; i++) {
		if (!o->items[i].key || !valid_key(o->items[i].key))
			return ps_err(ctx, PDFSTAMP_E_USAGE, "'%s' is not a valid Info key",
			              o->items[i].key ? o->items[i].key : "");
		if (strcmp(o->items[i].key, "ModDate") == 0 ||
		    strcmp(o->items[i].key, "CreationDate") == 0 ||
		    strcmp(o->items[i].key, "Trapped") == 0)
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "/%s is not a text key; pdfstamp sets ModDate itself",
			              o->items[i].key);
	}
	if ((rc = ps_time_parse(ctx, o->date ? o->date : "now", &when)) < 0)
		return rc;
	memset(&x, 0, sizeof x);
	ps_time_pdf(&when, pdfdate);
	ps_time_iso(&when, iso);
	if ((rc = ps_update_begin(doc, w, &up)) < 0)
		goto out;
	if ((rc = ps_preflight_update(doc, PS_UPDATE_METADATA)) < 0)
		goto out;
	iref = ps_dict_get(ps_xref_trailer(ps_doc_xref(doc)), "Info");
	if ((rc = ps_doc_resolve(doc, iref, &info)) < 0)
		goto out;
	if (info && info->kind != PS_DICT) {
		ps_warn(ctx, "the trailer's /Info is not a dictionary; writing a new one");
		info = NULL;
	}
	/* everything that is read, before the first number (incr.c note 6) */
	if (o->xmp && (rc = xmp_read(doc, &x)) < 0)
		goto out;
	ninfo = info ? ps_obj_copy(info) : ps_new_dict();
	if (!ninfo)
		goto oom;
	for (i = 0; i < o->nitems; i++) {
		if (!o->items[i].value) {
			ps_dict_del(ninfo, o->items[i].key);
		} else {
			ps_obj *s = NULL;
			if ((rc = ps_text_from_utf8(ctx, o->items[i].value,
			                            strlen(o->items[i].value), &s)) < 0)
				goto out;
			if (ps_dict_put(ninfo, o->items[i].key, s) < 0)
				goto oom;
		}
	}
	if (ps_dict_put_str(ninfo, "ModDate", pdfdate, strlen(pdfdate)) < 0)
		goto oom;
	ps_doc_security(doc, &ds);
	if (info && iref->kind == PS_REF && !ps_sec_same_keystream(ds.sec)) {
		num = iref->u.ref.num;
		gen = iref->u.ref.gen;
	} else {
		/* no /Info object yet, or RC4 (see update_xmp) */
		if (!(num = ps_update_alloc(&up))) {
			rc = ctx->errcode;
			goto out;
		}
		gen = 0;
		if ((rc = ps_update_set_trailer(&up, "Info", ps_new_ref(num, 0))) < 0)
			goto out;
	}
	ninfo_written = ninfo; /* owned by the update from here on */
	rc = ps_update_put(&up, num, gen, ninfo);
	ninfo = NULL;
	if (rc < 0)
		goto out;
	if ((rc = ps_result_add_object(ctx, res, num)) < 0)
		goto out;
	if (o->xmp && (rc = update_xmp(&up, o, &x, ninfo_written, iso)) < 0)
		goto out;
	rc = ps_update_commit(&up, w, res);
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(ninfo);
	ps_buf_free(&x.old);
	ps_update_free(&up);
	return rc;
}
