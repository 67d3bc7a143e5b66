/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_revoc.c - libFuzzer target for what `pdfstamp dss --fetch` reads
 * (revoc.c): a signature's /Contents (its CMS certificates, their AIA and
 * CRL distribution point extensions, the CertIDs and OCSP requests made
 * from them) and OCSP replies (ocsp.c, x509sig.c: RSASSA-PSS parameters,
 * delegated responders).  No socket is opened: the session is
 * offline without a cache, so every request fails as "not in the cache".
 *
 * Input layout:
 *   byte 0     bit 0 clear: the rest is a /Contents for ps_revoc_collect
 *              bit 0 set:   the rest is [u16 LE certificate length]
 *              [certificate DER] [u16 LE issuer length] [issuer DER]
 *              [OCSP reply], for ps_revoc_ocsp_check (bit 1: with a
 *              nonce of 16 zero bytes)
 *
 * Oracles: never a crash; ps_revoc_collect returns 0 or FORMAT, IO,
 * UNSUPPORTED or NOMEM, always with a message, and on success every item
 * is a certificate, OCSP response or CRL with DER bytes;
 * ps_revoc_ocsp_check returns 0, 1 or FORMAT (with a message).
 */
#include "fuzz.h"
#include "revoc.h"

static size_t fzr_u16(const uint8_t *p)
{
	return (size_t)p[0] | (size_t)p[1] << 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ps_ctx *ctx = NULL;
	int rc;

	if (size < 1 || size > FZ_MAX_INPUT)
		return 0;
	if (pdfstamp_ctx_new(&ctx) != 0)
		return 0;
	if (!(data[0] & 1)) {
		struct pdfstamp_dss_opts o = PDFSTAMP_DSS_OPTS_INIT;
		struct ps_revoc_item *items = NULL;
		size_t n = 0, i;
		ps_revoc *r = NULL;
		o.fetch = 1;
		o.offline = 1; /* no socket, no cache */
		if (ps_revoc_new(ctx, &o, &r) == 0) {
			rc = ps_revoc_collect(r, data + 1, size - 1, &items, &n);
			if (rc != 0 && rc != PDFSTAMP_E_FORMAT && rc != PDFSTAMP_E_IO &&
			    rc != PDFSTAMP_E_UNSUPPORTED && rc != PDFSTAMP_E_NOMEM)
				fz_bug(ctx, "ps_revoc_collect: an unexpected error code");
			if (rc != 0 && !pdfstamp_ctx_errmsg(ctx)[0])
				fz_bug(ctx, "ps_revoc_collect: an error without a message");
			for (i = 0; i < n; i++) {
				if (!items[i].der || !items[i].len ||
				    (items[i].kind != PDFSTAMP_DSS_CERT && items[i].kind != PDFSTAMP_DSS_OCSP &&
				     items[i].kind != PDFSTAMP_DSS_CRL))
					fz_bug(ctx, "ps_revoc_collect: a bad item");
				free(items[i].der);
			}
			free(items);
		}
		ps_revoc_free(r);
	} else {
		static const uint8_t zero[16];
		const uint8_t *p = data + 1, *end = data + size, *c, *i;
		size_t cl, il;
		if (end - p >= 2 && (cl = fzr_u16(p)) <= (size_t)(end - p - 2)) {
			c = p + 2;
			p = c + cl;
			if (end - p >= 2 && (il = fzr_u16(p)) <= (size_t)(end - p - 2)) {
				i = p + 2;
				p = i + il;
				rc = ps_revoc_ocsp_check(ctx, p, (size_t)(end - p), c, cl, i, il,
				                         data[0] & 2 ? zero : NULL);
				if (rc != 0 && rc != 1 && rc != PDFSTAMP_E_FORMAT)
					fz_bug(ctx, "ps_revoc_ocsp_check: an unexpected result");
				if (rc < 0 && !pdfstamp_ctx_errmsg(ctx)[0])
					fz_bug(ctx, "ps_revoc_ocsp_check: an error without a message");
			}
		}
	}
	pdfstamp_ctx_free(ctx);
	return 0;
}
