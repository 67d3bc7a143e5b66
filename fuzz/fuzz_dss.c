/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_dss.c - libFuzzer target for the inputs of `pdfstamp dss` (dss.c):
 * the PEM splitter, the DER framing, mbedTLS's X.509 and CRL parsers, the
 * OCSP response reader, duplicate detection and the /VRI closure.
 *
 * Input layout:
 *   byte 0     bits 0-1: the kind (0 or 3 certificate, 1 OCSP response,
 *              2 CRL); bit 2: the rest is given twice (duplicates)
 *   then       the input's bytes; they also stand in for a signature's
 *              /Contents in ps_dss_belongs.
 *
 * Oracles: ps_dss_load never crashes and fails only with FORMAT or NOMEM,
 * always with a message.  On success every item has DER bytes, every
 * offset and CertID lies inside them, a second copy is marked as a
 * duplicate of the first, and each item's DER loads again as a DER input
 * of its kind (a fixed point: what PEM splitting yields is what a DER
 * input accepts).  ps_dss_belongs and ps_dss_vri_key never crash, and the
 * key is 40 uppercase hexadecimal digits.
 */
#include "fuzz.h"
#include "dss.h"

static void fzd_check_items(ps_ctx *ctx, const ps_dss_items *s, int twice)
{
	size_t i, k;

	for (i = 0; i < s->n; i++) {
		const ps_dss_item *it = &s->v[i];
		if (!it->der || it->len == 0)
			fz_bug(ctx, "an item without DER bytes");
		if (it->iss_off + it->iss_len > it->len || it->sub_off + it->sub_len > it->len ||
		    it->ser_off + it->ser_len > it->len)
			fz_bug(ctx, "an item's Name or serial lies outside its DER");
		for (k = 0; k < it->nids; k++) {
			const ps_dss_certid *id = &it->ids[k];
			if (id->name_hash < it->der || id->name_hash + id->name_hash_len > it->der + it->len ||
			    id->serial < it->der || id->serial + id->serial_len > it->der + it->len)
				fz_bug(ctx, "a CertID lies outside its OCSP response");
		}
		if (it->dup_of >= (long)i)
			fz_bug(ctx, "a duplicate of a later item");
		if (twice && i >= s->n / 2 && it->dup_of < 0)
			fz_bug(ctx, "the second copy of an input is not a duplicate");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pdfstamp_dss_input in[2];
	struct pdfstamp_dss_opts o = PDFSTAMP_DSS_OPTS_INIT;
	ps_dss_items s;
	ps_ctx *ctx = NULL;
	char key[41];
	size_t i;
	int kind, twice, rc;

	if (size < 1 || size > FZ_MAX_INPUT)
		return 0;
	kind = (data[0] & 3) == 1 ? PDFSTAMP_DSS_OCSP : (data[0] & 3) == 2 ? PDFSTAMP_DSS_CRL : PDFSTAMP_DSS_CERT;
	twice = (data[0] & 4) != 0;
	if (pdfstamp_ctx_new(&ctx) != 0)
		return 0;
	in[0].kind = in[1].kind = kind;
	in[0].name = in[1].name = "fuzz";
	in[0].data = in[1].data = data + 1;
	in[0].len = in[1].len = size - 1;
	o.inputs = in;
	o.ninputs = twice ? 2 : 1;
	rc = ps_dss_load(ctx, &o, &s);
	if (rc < 0) {
		if (rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_NOMEM)
			fz_bug(ctx, "unexpected error code from ps_dss_load");
		if (pdfstamp_ctx_errmsg(ctx)[0] == 0)
			fz_bug(ctx, "a failure without a message");
		if (s.n != 0)
			fz_bug(ctx, "items left after a failure");
	} else {
		fzd_check_items(ctx, &s, twice);
		for (i = 0; i < s.n; i++) {
			struct pdfstamp_dss_input again = {kind, "again", s.v[i].der, s.v[i].len};
			struct pdfstamp_dss_opts o2 = PDFSTAMP_DSS_OPTS_INIT;
			ps_dss_items s2;
			o2.inputs = &again;
			o2.ninputs = 1;
			rc = ps_dss_load(ctx, &o2, &s2);
			if (rc == PDFSTAMP_E_FORMAT)
				fz_bug(ctx, "an item's own DER does not load again");
			ps_dss_items_free(&s2);
		}
		ps_dss_belongs(&s, data + 1, size - 1);
	}
	if (ps_dss_vri_key(data, size, key) != 0 || strlen(key) != 40 || strspn(key, "0123456789ABCDEF") != 40)
		fz_bug(ctx, "a bad /VRI key");
	ps_dss_items_free(&s);
	pdfstamp_ctx_free(ctx);
	return 0;
}
