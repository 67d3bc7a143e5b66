/* SPDX-License-Identifier: Apache-2.0 */
/* sigcms.h - internal: whether a signature's CMS really signs its
 * /ByteRange bytes (sigcms.c; conventions: ps.h, design notes atop
 * sigcms.c).  Certificate trust is not judged here. */
#ifndef PS_SIGCMS_H
#define PS_SIGCMS_H

#include "ps.h"

/* The most /Contents bytes (decoded) looked at: signers pad to a few KB,
 * a CMS with a long chain and revocation data stays far below. */
#define PS_SIGCMS_MAX_CONTENTS ((size_t)1 << 20)

/* What was found: filled even when invalid, as far as parsed. */
struct ps_sigcms {
	int parsed;         /* /Contents holds a CMS ContentInfo SignedData that parses */
	int digest_ok;      /* the digest over the /ByteRange bytes matches */
	int signature_ok;   /* the SignerInfo signature verifies with the signer certificate in
	                     * the CMS: 1, 0, or -1 not checked (no certificate found, an
	                     * algorithm mbedTLS lacks, or the CMS did not get that far) */
	int timestamp;      /* the content is an RFC 3161 TSTInfo (id-ct-TSTInfo) */
	char why[160];      /* why not valid, or why the signature was not checked; empty
	                     * when digest_ok and signature_ok are 1 */
};

/* SIG: a signature dictionary as loaded by doc.c (parsed, strings
 * decrypted: /Contents of a signature dictionary is never encrypted,
 * ISO 32000-2 7.6.2 and 12.8.1, see sec.c).  Reads the /ByteRange bytes
 * of DOC through ps_doc_pread in bounded chunks (never the whole range in
 * memory) and hashes them.  Returns 0 with OUT filled whatever the
 * signature's state (digest_ok 0 and OUT->why for anything invalid); a
 * negative PDFSTAMP_E_* code only for I/O errors and out of memory. */
int ps_sigcms_check(ps_doc *doc, const ps_obj *sig, struct ps_sigcms *out);

/* Spans into a time-stamp token (ps_sigcms_token), or NULL/0. */
struct ps_sigcms_token {
	const uint8_t *tstinfo;     /* the TSTInfo DER (the eContent octets) */
	size_t tstinfo_len;
	const uint8_t *signer;      /* the certificate that verified the signature */
	size_t signer_len;
	const uint8_t *certs, *certs_end;   /* SignedData.certificates' content */
	const uint8_t *attrs;       /* signerInfos[0].signedAttrs TLV ([0] IMPLICIT) */
	size_t attrs_len;
};

/* An RFC 3161 TimeStampToken TOK[0..N) on its own (for tsp.c): the CMS as
 * note 2, eContentType id-ct-TSTInfo, signedAttrs whose messageDigest is
 * the hash of the TSTInfo (note 3c), the signature verified with the
 * signer certificate the CMS carries (note 4).  0 with OUT filled
 * (digest_ok, signature_ok, why as ps_sigcms_check) and T's spans; a
 * negative code only for out of memory. */
int ps_sigcms_token(ps_ctx *ctx, const uint8_t *tok, size_t n, struct ps_sigcms *out,
                    struct ps_sigcms_token *t);
/* The next certificate (a SEQUENCE among the CertificateChoices) at *P
 * before END: 1 with *CERT and *LEN set and *P past it, 0 at the end. */
int ps_sigcms_next_cert(const uint8_t **p, const uint8_t *end, const uint8_t **cert, size_t *len);

/* The certificates of the CMS SignedData at the start of CONTENTS[0..N)
 * (a signature's /Contents, BER as note 2 of sigcms.c accepts it, the
 * padding after it ignored): *CERTS..*CERTS_END is the content of its
 * [0] certificates (NULL, NULL if it has none).  0, or -1 if the CMS does
 * not parse. */
int ps_sigcms_certs(const uint8_t *contents, size_t n, const uint8_t **certs,
                    const uint8_t **certs_end);

#endif
