/* SPDX-License-Identifier: Apache-2.0 */
/*
 * p12.c - a PKCS#12 file (RFC 7292) read into the DER of its private key
 * (PKCS#8, unencrypted) and of the certificate that goes with it, for the
 * public-key security handler (ISO 32000-2 7.6.5: the recipient's key
 * that opens its envelope).  rkey.c is the only caller.
 *
 * DESIGN NOTES
 *
 *  1. Why GnuTLS.  A PKCS#12 file is a MAC over a list of bags, each bag
 *     list in clear or encrypted, each key bag shrouded, with a password
 *     scheme per bag.  What the producers write: OpenSSL 3 by default
 *     PBES2 (PBKDF2 with HMAC-SHA-256, AES-256-CBC) for the key and the
 *     certificates and an HMAC-SHA-256 MAC; `openssl pkcs12 -legacy`, older
 *     OpenSSL, Windows and Java pbeWithSHAAnd3-KeyTripleDES-CBC for the
 *     key and pbeWithSHAAnd40BitRC2-CBC for the certificates, with a
 *     SHA-1 MAC.  mbedTLS 2.28 (the library's crypto) reads neither whole:
 *     its PBES2 knows DES and 3DES only and it has no RC2.  A parser of our
 *     own over its primitives would be a second PKCS#12 reader to keep
 *     right against every producer.  GnuTLS (Debian's libgnutls30, in
 *     every Debian release, kept by its upstream and fuzzed by OSS-Fuzz,
 *     its PKCS#12 parser among the targets) reads all of them, checks the
 *     MAC and picks the certificate whose public key is the key's
 *     (gnutls_pkcs12_simple_parse).  It is opened with dlopen on the first
 *     PKCS#12 file (extlib.c, group PS_EXT_P12), like the stamp's
 *     libraries: linked, it would load GnuTLS and its eight dependencies
 *     into every process, for a file most runs never see.  Missing, it
 *     fails the call with PDFSTAMP_E_IO naming it (extlib.c note 3).
 *  2. The steps.  Import (DER only: "not a PKCS#12 file" when it does not
 *     parse, PDFSTAMP_E_USAGE), the MAC (its iteration count first, note
 *     4; then checked: a mismatch is the wrong password; a file without a
 *     MAC, `-nomac`, goes on: the decryption judges the password), then
 *     the bags decrypted and the key with its certificate taken.  The MAC
 *     comes first because a file whose bags are not encrypted (-keypbe
 *     NONE -certpbe NONE) parses with any password; only its MAC says the
 *     password is wrong.
 *  3. Passwords.  PASSWORD is PWLEN bytes of UTF-8; GnuTLS takes a C
 *     string (and makes the BMPString of RFC 7292 B.1 itself), so it is
 *     copied, NUL-terminated, into a secret buffer, and a password with a
 *     NUL byte in it is refused (PDFSTAMP_E_USAGE: no PKCS#12 password can
 *     hold one).  No password (NULL) is the empty one, as OpenSSL writes
 *     it for `-passout pass:`: the BMPString of "" (its terminator alone).
 *  4. Limits.  Every byte is hostile: the size is the caller's (rkey.c
 *     reads at most what its files may hold), the parsing GnuTLS's; a MAC
 *     iteration count above PS_P12_MAX_ITER (a file made to take minutes)
 *     is refused as unsupported.  The bags' own iteration counts are not
 *     visible before GnuTLS decrypts them, so a file made slow there is
 *     slow (a limit named in pdfstamp(1)).
 *  5. Wiping.  The key leaves GnuTLS as DER in a buffer GnuTLS allocated;
 *     it is copied into KEY (secret: wiped when freed) and wiped before it
 *     is freed.  GnuTLS allocates with the C library's malloc (its
 *     gnutls_malloc is malloc since 3.3: the memory functions can no longer
 *     be replaced), so its buffers are freed with free(): gnutls_free is a
 *     variable holding a function pointer in some versions and a function
 *     in others, which one dlsym'ed address cannot tell apart.  The key's
 *     own copies inside GnuTLS are its to wipe (gnutls_x509_privkey_deinit
 *     clears the key's numbers; the decrypted bags are freed by
 *     gnutls_pkcs12_simple_parse without that guarantee: a limit of the
 *     library, named in pdfstamp(1)).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "extlib.h"
#include "p12.h"

/* Note 4: ten times what any producer we know uses by default (Java's
 * keytool 10000; OpenSSL 2048; OWASP's PBKDF2 advice, 600000, is for
 * password storage, not for files). */
#define PS_P12_MAX_ITER 1000000u

/* Note 5: DATUM's bytes wiped and freed. */
static void free_datum(gnutls_datum_t *d)
{
	if (d->data) {
		ps_wipe(d->data, d->size);
		free(d->data);
	}
	d->data = NULL;
	d->size = 0;
}

/* A GnuTLS error while decrypting or reading the bags, as ours. */
static int bag_error(ps_ctx *ctx, int rc)
{
	switch (rc) {
	case GNUTLS_E_DECRYPTION_FAILED:
		return ps_err(ctx, PDFSTAMP_E_PASSWORD,
		              "the PKCS#12 file does not decrypt with the password given");
	case GNUTLS_E_UNKNOWN_CIPHER_TYPE:
	case GNUTLS_E_UNKNOWN_HASH_ALGORITHM:
	case GNUTLS_E_UNKNOWN_ALGORITHM:
	case GNUTLS_E_UNKNOWN_PK_ALGORITHM:
	case GNUTLS_E_UNIMPLEMENTED_FEATURE:
	case GNUTLS_E_INSUFFICIENT_SECURITY:
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the PKCS#12 file uses what pdfstamp "
		              "cannot read: %s", PS_X(gnutls_strerror)(rc));
	case GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE:
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the PKCS#12 file holds no private key "
		              "with its certificate");
	case GNUTLS_E_MEMORY_ERROR:
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory reading the PKCS#12 file");
	default:
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the PKCS#12 file cannot be read: %s",
		              PS_X(gnutls_strerror)(rc));
	}
}

/* Note 2: the MAC of P12 under PW.  0 or an error. */
static int check_mac(ps_ctx *ctx, gnutls_pkcs12_t p12, const char *pw)
{
	unsigned mac = 0, iter = 0;
	char *oid = NULL;
	int rc = PS_X(gnutls_pkcs12_mac_info)(p12, &mac, NULL, NULL, &iter, &oid);

	/* the OID asked for and freed here: GnuTLS 3.7 leaks it when the
	 * digest is unknown and the caller does not take it (note 5: free) */
	if (rc == GNUTLS_E_UNKNOWN_HASH_ALGORITHM)
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the PKCS#12 file's MAC uses a digest "
		            "pdfstamp cannot compute (OID %.64s)", oid ? oid : "?");
	else if (rc >= 0 && iter > PS_P12_MAX_ITER)
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the PKCS#12 file's MAC asks for %u "
		            "iterations, more than the %u pdfstamp runs", iter, PS_P12_MAX_ITER);
	else
		rc = 0;
	free(oid);
	if (rc < 0)
		return rc;
	rc = PS_X(gnutls_pkcs12_verify_mac)(p12, pw);
	if (rc == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND)
		return 0; /* no macData (-nomac): the decryption judges the password */
	if (rc == GNUTLS_E_MAC_VERIFY_FAILED)
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the PKCS#12 file's password is wrong "
		              "(its MAC does not match)");
	if (rc < 0)
		return bag_error(ctx, rc);
	return 0;
}

/* Note 2: the key and its certificate out of an imported P12. */
static int take(ps_ctx *ctx, gnutls_pkcs12_t p12, const char *pw, ps_buf *key, ps_buf *cert)
{
	gnutls_x509_privkey_t k = NULL;
	gnutls_x509_crt_t *chain = NULL;
	unsigned nchain = 0, i;
	gnutls_datum_t kd = {NULL, 0}, cd = {NULL, 0};
	int rc;

	rc = PS_X(gnutls_pkcs12_simple_parse)(p12, pw, &k, &chain, &nchain, NULL, NULL, NULL,
	                                      0);
	if (rc < 0) {
		rc = bag_error(ctx, rc);
		goto out;
	}
	if (!k || nchain == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the PKCS#12 file holds %s",
		            k ? "no certificate for its private key" : "no private key");
		goto out;
	}
	/* chain[0] is the certificate of the key (simple_parse matches them
	 * by public key); the rest, its issuers, are not needed */
	if ((rc = PS_X(gnutls_x509_privkey_export2_pkcs8)(k, GNUTLS_X509_FMT_DER, NULL,
	                                                  GNUTLS_PKCS_PLAIN, &kd)) < 0 ||
	    (rc = PS_X(gnutls_x509_crt_export2)(chain[0], GNUTLS_X509_FMT_DER, &cd)) < 0) {
		rc = bag_error(ctx, rc);
		goto out;
	}
	key->secret = 1;
	ps_buf_append(key, kd.data, kd.size);
	ps_buf_append(cert, cd.data, cd.size);
	rc = key->oom || cert->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
out:
	free_datum(&kd);
	free_datum(&cd);
	if (k)
		PS_X(gnutls_x509_privkey_deinit)(k);
	for (i = 0; i < nchain; i++)
		PS_X(gnutls_x509_crt_deinit)(chain[i]);
	free(chain); /* note 5 */
	return rc;
}

int ps_p12_parse(ps_ctx *ctx, const uint8_t *p12, size_t n, const char *password, size_t pwlen,
                 ps_buf *key, ps_buf *cert)
{
	ps_buf pw = PS_BUF_INIT;
	gnutls_pkcs12_t p = NULL;
	gnutls_datum_t d;
	int rc;

	if (!p12 || n == 0 || n > UINT32_MAX)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the PKCS#12 file is %s",
		              n == 0 ? "empty" : "too large");
	if (password && memchr(password, '\0', pwlen))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the PKCS#12 file's password has a NUL byte "
		              "in it");
	if ((rc = ps_ext_need(ctx, PS_EXT_P12)) < 0)
		return rc;
	pw.secret = 1; /* note 3 */
	if (password)
		ps_buf_append(&pw, password, pwlen);
	ps_buf_putc(&pw, '\0');
	if (pw.oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if (PS_X(gnutls_pkcs12_init)(&p) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	d.data = (unsigned char *)p12;
	d.size = (unsigned)n;
	if (PS_X(gnutls_pkcs12_import)(p, &d, GNUTLS_X509_FMT_DER, 0) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "not a PKCS#12 file (it does not parse as "
		            "DER PFX)");
		goto out;
	}
	if ((rc = check_mac(ctx, p, (const char *)pw.data)) == 0)
		rc = take(ctx, p, (const char *)pw.data, key, cert);
out:
	if (p)
		PS_X(gnutls_pkcs12_deinit)(p);
	ps_buf_free(&pw);
	return rc;
}
