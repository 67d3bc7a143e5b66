/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x509sig.c - X.509 signatures: the algorithm an AlgorithmIdentifier names
 * (RSASSA-PSS parameters checked), whether a key signed some bytes, and
 * whether an issuer signed a certificate.  For the OCSP replies (ocsp.c),
 * CRLs and certificates (revoc.c) of `dss --fetch`.
 *
 * DESIGN NOTES
 *
 * Place: [content], below ocsp.c and revoc.c; mbedTLS only.
 *
 *  1. Verifying: the hash of the signed bytes (the DER of a tbs part, as
 *     it stands in the input) with the algorithm's hash, then
 *     mbedtls_pk_verify_ext with the key, which must be able to do the
 *     algorithm (an RSA key for PKCS#1 v1.5 and RSASSA-PSS, an EC key for
 *     ECDSA).  A certificate is signed by an issuer when its issuer Name
 *     equals, byte for byte, the issuer's subject Name and the issuer's
 *     key verifies its signature.
 *  2. Algorithms: those of mbedTLS's X.509 (PKCS#1 v1.5 with SHA-1/2,
 *     ECDSA) and RSASSA-PSS (RFC 4055 3.1): its parameters parsed by
 *     mbedTLS (mbedtls_x509_get_sig_alg; defaults SHA-1, MGF1-SHA-1, salt
 *     20), accepted only with the hash SHA-256, -384 or -512 and MGF1 over
 *     that same hash (a mismatch is refused with a message saying so), and
 *     verified with the salt length the parameters give.
 */
#include "config.h"

#include <string.h>

#include <mbedtls/md.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform.h>
#include <mbedtls/x509.h>

#include "x509sig.h"

/* Verifies SIG over TBS made with MD/PK (and OPTS, RSASSA-PSS) with KEY. */
int ps_x509sig_verify(mbedtls_pk_context *key, mbedtls_md_type_t md, mbedtls_pk_type_t pk,
                      const void *opts, const uint8_t *tbs, size_t tbslen, const uint8_t *sig,
                      size_t siglen)
{
	const mbedtls_md_info_t *mi = mbedtls_md_info_from_type(md);
	uint8_t h[MBEDTLS_MD_MAX_SIZE];

	if (!mi || mbedtls_md(mi, tbs, tbslen, h) != 0 || !mbedtls_pk_can_do(key, pk))
		return 0;
	return mbedtls_pk_verify_ext(pk, opts, key, md, h, mbedtls_md_get_size(mi), sig,
	                             siglen) == 0;
}

/* Note 2: NULL if the RSASSA-PSS parameters OPTS go with the hash MD,
 * else why not. */
const char *ps_x509sig_pss_why(mbedtls_md_type_t md, const mbedtls_pk_rsassa_pss_options *opts)
{
	if (md != MBEDTLS_MD_SHA256 && md != MBEDTLS_MD_SHA384 && md != MBEDTLS_MD_SHA512)
		return "its RSASSA-PSS hash is not SHA-256, SHA-384 or SHA-512";
	if (!opts || (mbedtls_md_type_t)opts->mgf1_hash_id != md)
		return "its RSASSA-PSS parameters name an MGF1 hash other than the signature's "
		       "hash";
	return NULL;
}

/* Note 2: the signature algorithm OID with PARAMS (an AlgorithmIdentifier's
 * parts): *MD, *PK and, for RSASSA-PSS, *PSS.  NULL, or why it is refused. */
const char *ps_x509sig_alg(const mbedtls_x509_buf *oid, const mbedtls_x509_buf *params,
                          mbedtls_md_type_t *md, mbedtls_pk_type_t *pk,
                          mbedtls_pk_rsassa_pss_options *pss)
{
	void *o = NULL;
	const char *why = NULL;

	memset(pss, 0, sizeof *pss);
	if (mbedtls_x509_get_sig_alg(oid, params, md, pk, &o) != 0) {
		if (o)
			mbedtls_free(o);
		return "its signature algorithm is not supported (or its parameters do not parse)";
	}
	if (*pk == MBEDTLS_PK_RSASSA_PSS) {
		if (o)
			*pss = *(const mbedtls_pk_rsassa_pss_options *)o;
		why = ps_x509sig_pss_why(*md, o);
	}
	if (o)
		mbedtls_free(o);
	return why;
}

/* Note 1: did ISSUER sign C? */
int ps_x509sig_signed_by(const mbedtls_x509_crt *c, mbedtls_x509_crt *issuer)
{
	return c->issuer_raw.len == issuer->subject_raw.len &&
	       memcmp(c->issuer_raw.p, issuer->subject_raw.p, c->issuer_raw.len) == 0 &&
	       (c->sig_pk != MBEDTLS_PK_RSASSA_PSS ||
	        !ps_x509sig_pss_why(c->sig_md, c->sig_opts)) &&
	       ps_x509sig_verify(&issuer->pk, c->sig_md, c->sig_pk, c->sig_opts, c->tbs.p,
	                         c->tbs.len, c->sig.p, c->sig.len);
}
