/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rkey.c - a recipient's key material for the public-key security handler
 * (ISO 32000-2 7.6.5): the private key and its certificate that open a
 * /Recipients envelope, and the certificates an envelope is made for.
 *
 * DESIGN NOTES
 *
 * Place: [crypto], beside envelope.c (its one user) and p12.c (PKCS#12,
 * which it calls for struct pdfstamp_key's p12 bytes).  One of the modules
 * that use mbedTLS (pk, X.509, PEM, PKCS#5, cipher): nothing of it reaches
 * ps.h.
 *
 *  1. Forms of the private key (struct pdfstamp_key.key): PEM (any bytes
 *     holding "-----BEGIN ") or DER; PKCS#8 PrivateKeyInfo, PKCS#8
 *     EncryptedPrivateKeyInfo (RFC 5958 3), PKCS#1 RSAPrivateKey, and the
 *     traditional encrypted PEM of OpenSSL (Proc-Type/DEK-Info headers).
 *     mbedTLS 2.28 reads all of these except an EncryptedPrivateKeyInfo
 *     under PBES2 with AES (RFC 8018 6.2, A.4, B.2.5), which is what
 *     `openssl pkcs8 -topk8` and `openssl genpkey -aes256` write since
 *     OpenSSL 1.1 (its PBES2 knows DES and 3DES only): PBES2 is decrypted
 *     here (note 2) and the PrivateKeyInfo handed to mbedTLS; everything
 *     else goes to mbedtls_pk_parse_key as it is.
 *  2. PBES2: keyDerivationFunc PBKDF2 (salt OCTET STRING, iterationCount
 *     1..MAX_ITER, keyLength optional and then equal to the cipher's, prf
 *     hmacWithSHA1/224/256/384/512, default SHA-1), encryptionScheme
 *     aes128-CBC, aes192-CBC, aes256-CBC (IV of 16 bytes) or des-ede3-cbc
 *     (8 bytes).  A padding that does not check, or a result that is not
 *     a PrivateKeyInfo, means a wrong password (PDFSTAMP_E_PASSWORD), as
 *     mbedTLS itself reports it.  Anything else is UNSUPPORTED, named.
 *     An EncryptedPrivateKeyInfo under the PKCS#12 PBE schemes (RFC 7292
 *     C) that mbedTLS fails to read with a password is a wrong password
 *     too (mbedTLS 2.28 reports a format error when the wrong key's
 *     padding happens to check); under any other scheme, UNSUPPORTED.
 *     MAX_ITER bounds the work a key file can ask for.
 *  3. Secrets: every copy of the key's bytes (the caller's PEM with a NUL
 *     added, base64-decoded DER, the PBES2 plaintext and derived key, the
 *     PKCS#12 file's key) lives in a ps_buf marked secret or in mbedTLS
 *     contexts that zeroize when freed (mbedtls_pem_free, mbedtls_pk_free,
 *     mbedtls_cipher_free), and is freed on every path before return.  The
 *     parsed key lives in the ps_rkey until ps_rkey_free (mbedTLS wipes
 *     the RSA numbers).
 *  4. Checks: the key is RSA (the only key transport the handler knows:
 *     envelope.c), the certificate parses (the first one of a PEM file),
 *     its key is RSA, and mbedtls_pk_check_pair says key and certificate
 *     belong together; otherwise the message names which of them failed.
 *     Nothing about the certificate's validity (dates, chain, usage) is
 *     judged: it only names the RecipientInfo to open.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <mbedtls/asn1.h>
#include <mbedtls/cipher.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/pkcs5.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "der.h"
#include "p12.h"
#include "rkey.h"

#define MAX_ITER 10000000L   /* note 2: PBKDF2 iterations at most */

struct ps_rkey {
	mbedtls_pk_context pk;
	mbedtls_x509_crt crt;
	char subject[256];
};

struct ps_rcert {
	mbedtls_x509_crt crt;
};

/* RFC 8018 A.2, A.4, B.1.2, B.2.2, B.2.5 */
static const uint8_t OID_PBES2[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D};
static const uint8_t OID_PBKDF2[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C};
static const uint8_t OID_AES128_CBC[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x02};
static const uint8_t OID_AES192_CBC[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x16};
static const uint8_t OID_AES256_CBC[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2A};
static const uint8_t OID_DES_EDE3_CBC[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x03, 0x07};
/* RFC 7292 C: pkcs-12PbeIds, 1.2.840.113549.1.12.1 (one more arc names the scheme) */
static const uint8_t OID_PKCS12_PBE[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x0C, 0x01};

#define OID_IS(p, n, oid) ((n) == sizeof(oid) && memcmp((p), (oid), (n)) == 0)

/* The dotted form of the OID content P (N bytes), for messages. */
static const char *oid_str(char *buf, size_t size, const uint8_t *p, size_t n)
{
	mbedtls_asn1_buf b = {MBEDTLS_ASN1_OID, n, (unsigned char *)p};

	if (mbedtls_oid_get_numeric_string(buf, size, &b) < 0)
		snprintf(buf, size, "(an unreadable OID)");
	return buf;
}

static int is_pem(const uint8_t *p, size_t n)
{
	static const char tag[] = "-----BEGIN ";
	size_t i;

	for (i = 0; n >= sizeof tag - 1 && i <= n - (sizeof tag - 1); i++)
		if (memcmp(p + i, tag, sizeof tag - 1) == 0)
			return 1;
	return 0;
}

/* P (N bytes) with a NUL after it, in the secret buffer B (mbedTLS's PEM
 * readers need the NUL).  0 or PDFSTAMP_E_NOMEM. */
static int with_nul(ps_ctx *ctx, ps_buf *b, const uint8_t *p, size_t n)
{
	b->secret = 1;
	ps_buf_append(b, p, n);
	ps_buf_putc(b, 0);
	return b->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}

/* ---- note 2: PBES2 ----------------------------------------------------------- */

/* Whether DER is an EncryptedPrivateKeyInfo: SEQUENCE { AlgorithmIdentifier,
 * OCTET STRING }; *ALG and *ALEN receive the algorithm's OID. */
static int is_encrypted_pkcs8(const uint8_t *der, size_t n, const uint8_t **alg, size_t *alen)
{
	const uint8_t *p = der, *end = der + n, *aend;
	size_t len;

	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return 0;
	end = p + len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return 0;
	aend = p + len;
	if (ps_der_tag(&p, aend, MBEDTLS_ASN1_OID, alen) != 0)
		return 0;
	*alg = p;
	p = aend;
	return ps_der_tag(&p, end, MBEDTLS_ASN1_OCTET_STRING, &len) == 0;
}

/* Decrypts the EncryptedPrivateKeyInfo DER (N bytes, PBES2) with PW into
 * OUT (a secret buffer): the PrivateKeyInfo DER. */
static int pbes2_decrypt(ps_ctx *ctx, const uint8_t *der, size_t n, const char *pw, size_t pwlen,
                         ps_buf *out)
{
	const uint8_t *p = der, *end = der + n, *salt, *iv, *enc, *q, *qend;
	size_t len, salt_len, iv_len, enc_len, olen = 0, fin = 0;
	mbedtls_md_type_t md = MBEDTLS_MD_SHA1;
	mbedtls_cipher_type_t ct;
	const mbedtls_cipher_info_t *ci;
	mbedtls_md_context_t mdc;
	mbedtls_cipher_context_t cc;
	uint8_t key[32];
	unsigned keylen;
	long iter = 0, klen = -1;
	char ob[64];
	int rc, r;

	/* EncryptedPrivateKeyInfo { { PBES2, PBES2-params }, encryptedData } */
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0 ||
	    ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		goto bad;
	qend = p + len;
	if (ps_der_tag(&p, qend, MBEDTLS_ASN1_OID, &len) != 0)
		goto bad;
	p += len;
	/* PBES2-params { keyDerivationFunc, encryptionScheme } */
	if (ps_der_tag(&p, qend, PS_DER_SEQ, &len) != 0)
		goto bad;
	/* keyDerivationFunc { id-PBKDF2, PBKDF2-params } */
	if (ps_der_tag(&p, qend, PS_DER_SEQ, &len) != 0)
		goto bad;
	q = p;
	p += len;
	qend = p;
	if (ps_der_tag(&q, qend, MBEDTLS_ASN1_OID, &len) != 0)
		goto bad;
	if (!OID_IS(q, len, OID_PBKDF2))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key: key derivation %s "
		              "(only PBKDF2)", oid_str(ob, sizeof ob, q, len));
	q += len;
	/* PBKDF2-params { salt OCTET STRING, iterationCount, keyLength?, prf? } */
	if (ps_der_tag(&q, qend, PS_DER_SEQ, &len) != 0)
		goto bad;
	qend = q + len;
	if (ps_der_tag(&q, qend, MBEDTLS_ASN1_OCTET_STRING, &salt_len) != 0)
		goto bad;
	salt = q;
	q += salt_len;
	{
		unsigned char *u = (unsigned char *)q;
		int v;
		if (mbedtls_asn1_get_int(&u, qend, &v) != 0 || v < 1 || v > MAX_ITER)
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key: a PBKDF2 "
			              "iteration count that is not 1 to %ld", MAX_ITER);
		iter = v;
		if (u < qend && *u == MBEDTLS_ASN1_INTEGER) {
			if (mbedtls_asn1_get_int(&u, qend, &v) != 0 || v < 1 || v > 64)
				goto bad;
			klen = v;
		}
		q = u;
	}
	if (q < qend) {
		mbedtls_asn1_buf ob_md = {MBEDTLS_ASN1_OID, 0, NULL};
		const uint8_t *aend;
		if (ps_der_tag(&q, qend, PS_DER_SEQ, &len) != 0)
			goto bad;
		aend = q + len;
		if (ps_der_tag(&q, aend, MBEDTLS_ASN1_OID, &len) != 0)
			goto bad;
		ob_md.len = len;
		ob_md.p = (unsigned char *)q;
		if (mbedtls_oid_get_md_hmac(&ob_md, &md) != 0)
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key: PBKDF2 "
			              "with the pseudo-random function %s",
			              oid_str(ob, sizeof ob, q, len));
	}
	/* encryptionScheme { OID, IV } */
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		goto bad;
	qend = p + len;
	if (ps_der_tag(&p, qend, MBEDTLS_ASN1_OID, &len) != 0)
		goto bad;
	if (OID_IS(p, len, OID_AES128_CBC))
		ct = MBEDTLS_CIPHER_AES_128_CBC;
	else if (OID_IS(p, len, OID_AES192_CBC))
		ct = MBEDTLS_CIPHER_AES_192_CBC;
	else if (OID_IS(p, len, OID_AES256_CBC))
		ct = MBEDTLS_CIPHER_AES_256_CBC;
	else if (OID_IS(p, len, OID_DES_EDE3_CBC))
		ct = MBEDTLS_CIPHER_DES_EDE3_CBC;
	else
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key is encrypted with %s "
		              "(known: AES-CBC, DES-EDE3-CBC)", oid_str(ob, sizeof ob, p, len));
	p += len;
	if (ps_der_tag(&p, qend, MBEDTLS_ASN1_OCTET_STRING, &iv_len) != 0)
		goto bad;
	iv = p;
	p = qend;
	ci = mbedtls_cipher_info_from_type(ct);
	if (!ci || iv_len != ci->iv_size)
		goto bad;
	keylen = ci->key_bitlen / 8;
	if (klen >= 0 && (unsigned long)klen != keylen)
		goto bad;
	if (ps_der_tag(&p, end, MBEDTLS_ASN1_OCTET_STRING, &enc_len) != 0 || enc_len == 0 ||
	    enc_len % ci->block_size != 0)
		goto bad;
	enc = p;

	mbedtls_md_init(&mdc);
	rc = mbedtls_md_setup(&mdc, mbedtls_md_info_from_type(md), 1);
	if (rc == 0)
		rc = mbedtls_pkcs5_pbkdf2_hmac(&mdc, (const unsigned char *)pw, pwlen, salt,
		                               salt_len, (unsigned)iter, keylen, key);
	mbedtls_md_free(&mdc);
	if (rc != 0) {
		ps_wipe(key, sizeof key);
		return ps_err(ctx, rc == MBEDTLS_ERR_MD_ALLOC_FAILED ? PDFSTAMP_E_NOMEM :
		              PDFSTAMP_E_INTERNAL, "the private key: PBKDF2 failed (-0x%04x)",
		              (unsigned)-rc);
	}
	out->secret = 1;
	if (ps_buf_reserve(out, enc_len + 32) != 0) {
		ps_wipe(key, sizeof key);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	mbedtls_cipher_init(&cc);
	r = mbedtls_cipher_setup(&cc, ci);
	if (r == 0)
		r = mbedtls_cipher_setkey(&cc, key, (int)ci->key_bitlen, MBEDTLS_DECRYPT);
	if (r == 0)
		r = mbedtls_cipher_set_padding_mode(&cc, MBEDTLS_PADDING_PKCS7);
	if (r == 0)
		r = mbedtls_cipher_set_iv(&cc, iv, iv_len);
	if (r == 0)
		r = mbedtls_cipher_reset(&cc);
	if (r == 0)
		r = mbedtls_cipher_update(&cc, enc, enc_len, out->data, &olen);
	if (r == 0)
		r = mbedtls_cipher_finish(&cc, out->data + olen, &fin);
	mbedtls_cipher_free(&cc);
	ps_wipe(key, sizeof key);
	if (r == MBEDTLS_ERR_CIPHER_INVALID_PADDING)
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key's password is wrong");
	if (r != 0)
		return ps_err(ctx, r == MBEDTLS_ERR_CIPHER_ALLOC_FAILED ? PDFSTAMP_E_NOMEM :
		              PDFSTAMP_E_INTERNAL, "the private key: decryption failed (-0x%04x)",
		              (unsigned)-r);
	out->len = olen + fin;
	return 0;
bad:
	return ps_err(ctx, PDFSTAMP_E_USAGE, "the private key: a damaged PBES2 "
	              "EncryptedPrivateKeyInfo");
}

/* ---- note 1: the private key ------------------------------------------------- */

/* mbedTLS's verdict on a key, as our code and message. */
static int pk_error(ps_ctx *ctx, int rc)
{
	if (rc == MBEDTLS_ERR_PK_PASSWORD_REQUIRED)
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key is encrypted and no "
		              "password was given");
	if (rc == MBEDTLS_ERR_PK_PASSWORD_MISMATCH)
		return ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key's password is wrong");
	if (rc == MBEDTLS_ERR_PK_ALLOC_FAILED)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (rc == MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE || rc == MBEDTLS_ERR_PK_UNKNOWN_PK_ALG)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key: a format or "
		              "algorithm this build of mbedTLS does not read (-0x%04x)",
		              (unsigned)-rc);
	return ps_err(ctx, PDFSTAMP_E_USAGE, "the private key does not parse (PEM or DER, "
	              "PKCS#8 or PKCS#1; mbedTLS -0x%04x)", (unsigned)-rc);
}

/* 1 if P (N bytes) is exactly one DER SEQUENCE. */
static int whole_der(const uint8_t *p, size_t n)
{
	const uint8_t *q = p;
	size_t len;

	return ps_der_tag(&q, p + n, PS_DER_SEQ, &len) == 0 && q + len == p + n;
}

/* Parses DER (no PEM) into PK, decrypting a PBES2 EncryptedPrivateKeyInfo here. */
static int parse_der_key(ps_ctx *ctx, mbedtls_pk_context *pk, const uint8_t *der, size_t n,
                         const char *pw, size_t pwlen)
{
	const uint8_t *alg;
	size_t alen;
	ps_buf plain = PS_BUF_INIT;
	int rc;

	if (is_encrypted_pkcs8(der, n, &alg, &alen)) {
		if (!pw)
			return pk_error(ctx, MBEDTLS_ERR_PK_PASSWORD_REQUIRED);
		if (OID_IS(alg, alen, OID_PBES2)) {
			rc = pbes2_decrypt(ctx, der, n, pw, pwlen, &plain);
			if (rc == 0) {
				rc = mbedtls_pk_parse_key(pk, plain.data, plain.len, NULL, 0);
				/* a plaintext that is a whole DER SEQUENCE was decrypted
				 * with the right password: its key is one mbedTLS does
				 * not take (Ed25519, ...); anything else is a wrong
				 * password that happened to leave valid padding */
				if (rc != 0)
					rc = whole_der(plain.data, plain.len)
					     ? ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
					              "the private key's type is not supported "
					              "(mbedTLS -0x%04x); an RSA key is needed",
					              (unsigned)-rc)
					     : ps_err(ctx, PDFSTAMP_E_PASSWORD,
					              "the private key's password is wrong");
			}
			ps_buf_free(&plain);
			return rc;
		}
	}
	rc = mbedtls_pk_parse_key(pk, der, n, (const unsigned char *)pw, pw ? pwlen : 0);
	if (rc != 0 && pw && is_encrypted_pkcs8(der, n, &alg, &alen)) {
		char ob[64];
		/* mbedTLS reports a wrong password of the PKCS#12 PBE schemes as
		 * a format error when the padding happens to check */
		if (alen == sizeof OID_PKCS12_PBE + 1 &&
		    memcmp(alg, OID_PKCS12_PBE, sizeof OID_PKCS12_PBE) == 0)
			return pk_error(ctx, MBEDTLS_ERR_PK_PASSWORD_MISMATCH);
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key is encrypted with %s "
		              "(known: PBES2 with AES or 3DES, the PKCS#12 PBE schemes)",
		              oid_str(ob, sizeof ob, alg, alen));
	}
	return rc == 0 ? 0 : pk_error(ctx, rc);
}

static int parse_key(ps_ctx *ctx, mbedtls_pk_context *pk, const uint8_t *key, size_t n,
                     const char *pw, size_t pwlen)
{
	static const char beg[] = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
	static const char fin[] = "-----END ENCRYPTED PRIVATE KEY-----";
	ps_buf z = PS_BUF_INIT;
	mbedtls_pem_context pem;
	size_t used;
	int rc;

	if (!is_pem(key, n))
		return parse_der_key(ctx, pk, key, n, pw, pwlen);
	rc = with_nul(ctx, &z, key, n);
	if (rc != 0)
		return rc;
	mbedtls_pem_init(&pem);
	rc = mbedtls_pem_read_buffer(&pem, beg, fin, z.data, NULL, 0, &used);
	if (rc == 0) {
		rc = parse_der_key(ctx, pk, pem.buf, pem.buflen, pw, pwlen);
	} else if (rc == MBEDTLS_ERR_PEM_NO_HEADER_FOOTER_PRESENT) {
		rc = mbedtls_pk_parse_key(pk, z.data, z.len, (const unsigned char *)pw,
		                          pw ? pwlen : 0);
		/* OpenSSL's traditional encrypted PEM ("Proc-Type: 4,ENCRYPTED"):
		 * mbedTLS tells a wrong password only by a guess on the decrypted
		 * bytes, so with a password any failure to parse is that */
		if (rc != 0 && pw && memmem(z.data, z.len, "Proc-Type: 4,ENCRYPTED", 22))
			rc = ps_err(ctx, PDFSTAMP_E_PASSWORD,
			            "the private key's password is wrong");
		else
			rc = rc == 0 ? 0 : pk_error(ctx, rc);
	} else {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the private key: a damaged PEM block "
		            "(mbedTLS -0x%04x)", (unsigned)-rc);
	}
	mbedtls_pem_free(&pem);
	ps_buf_free(&z);
	return rc;
}

/* ---- certificates ------------------------------------------------------------ */

/* Parses the certificate P (PEM or DER; WHAT names it) into CRT: its key must be RSA. */
static int parse_cert(ps_ctx *ctx, mbedtls_x509_crt *crt, const uint8_t *p, size_t n,
                      const char *what)
{
	ps_buf z = PS_BUF_INIT;
	int rc;

	if (!p || n == 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "%s is missing", what);
	if (is_pem(p, n)) {
		rc = with_nul(ctx, &z, p, n);
		if (rc != 0)
			return rc;
		rc = mbedtls_x509_crt_parse(crt, z.data, z.len);
		ps_buf_free(&z);
		/* a positive count: some blocks of the file did not parse */
		if (rc > 0 && crt->raw.p)
			rc = 0;
	} else {
		rc = mbedtls_x509_crt_parse_der(crt, p, n);
	}
	if (rc == MBEDTLS_ERR_X509_ALLOC_FAILED)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (rc != 0 || !crt->raw.p)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "%s does not parse as an X.509 certificate "
		              "(PEM or DER; mbedTLS -0x%04x)", what, rc < 0 ? (unsigned)-rc : 0u);
	if (mbedtls_pk_get_type(&crt->pk) != MBEDTLS_PK_RSA)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "%s holds a %s key; only RSA keys "
		              "are supported", what, mbedtls_pk_get_name(&crt->pk));
	return 0;
}

int ps_rkey_load(ps_ctx *ctx, const struct pdfstamp_key *k, ps_rkey **out)
{
	ps_rkey *r;
	ps_buf kb = PS_BUF_INIT, cb = PS_BUF_INIT;
	const uint8_t *key, *cert;
	size_t key_len, cert_len;
	int rc;

	*out = NULL;
	if (!k || k->version != PDFSTAMP_KEY_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "a struct pdfstamp_key of an unknown version");
	r = calloc(1, sizeof *r);
	if (!r)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	mbedtls_pk_init(&r->pk);
	mbedtls_x509_crt_init(&r->crt);
	kb.secret = 1;
	if (k->p12) {
		rc = ps_p12_parse(ctx, k->p12, k->p12_len, k->password, k->password_len, &kb, &cb);
		if (rc != 0)
			goto fail;
		key = kb.data;
		key_len = kb.len;
		cert = cb.data;
		cert_len = cb.len;
	} else {
		key = k->key;
		key_len = k->key_len;
		cert = k->cert;
		cert_len = k->cert_len;
	}
	if (!key || key_len == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the private key is missing");
		goto fail;
	}
	rc = parse_cert(ctx, &r->crt, cert, cert_len, "the certificate");
	if (rc != 0)
		goto fail;
	rc = parse_key(ctx, &r->pk, key, key_len, k->p12 ? NULL : k->password,
	               k->p12 ? 0 : k->password_len);
	if (rc != 0)
		goto fail;
	if (mbedtls_pk_get_type(&r->pk) != MBEDTLS_PK_RSA) {
		rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the private key is a %s key; only RSA "
		            "keys are supported", mbedtls_pk_get_name(&r->pk));
		goto fail;
	}
	if (mbedtls_pk_check_pair(&r->crt.pk, &r->pk) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_PASSWORD, "the private key does not match the "
		            "certificate");
		goto fail;
	}
	if (mbedtls_x509_dn_gets(r->subject, sizeof r->subject, &r->crt.subject) < 0)
		snprintf(r->subject, sizeof r->subject, "(a subject too long to print)");
	ps_buf_free(&kb);
	ps_buf_free(&cb);
	*out = r;
	return 0;
fail:
	ps_buf_free(&kb);
	ps_buf_free(&cb);
	ps_rkey_free(r);
	return rc;
}

void ps_rkey_free(ps_rkey *k)
{
	if (!k)
		return;
	mbedtls_pk_free(&k->pk);
	mbedtls_x509_crt_free(&k->crt);
	ps_wipe(k, sizeof *k);
	free(k);
}

const mbedtls_pk_context *ps_rkey_pk(const ps_rkey *k)
{
	return &k->pk;
}

const mbedtls_x509_crt *ps_rkey_cert(const ps_rkey *k)
{
	return &k->crt;
}

const char *ps_rkey_subject(const ps_rkey *k)
{
	return k->subject;
}

int ps_rcert_load(ps_ctx *ctx, const uint8_t *der, size_t n, ps_rcert **out)
{
	ps_rcert *c;
	int rc;

	*out = NULL;
	c = calloc(1, sizeof *c);
	if (!c)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	mbedtls_x509_crt_init(&c->crt);
	rc = parse_cert(ctx, &c->crt, der, n, "the recipient's certificate");
	if (rc != 0) {
		ps_rcert_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void ps_rcert_free(ps_rcert *c)
{
	if (!c)
		return;
	mbedtls_x509_crt_free(&c->crt);
	free(c);
}

const mbedtls_x509_crt *ps_rcert_crt(const ps_rcert *c)
{
	return &c->crt;
}
