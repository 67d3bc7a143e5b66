/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pubsec.c - the public-key security handler's keys (ISO 32000-2 7.6.5):
 * a recipient's envelope opened into the file key, and new envelopes made
 * for a rewrite to certificates.
 *
 * DESIGN NOTES
 *
 *  1. Split of concerns.  sec.c reads and writes the /Adobe.PubSec
 *     dictionary (sec.c note 9) and owns the cipher state; envelope.c reads
 *     and writes one CMS EnvelopedData; rkey.c loads key material.  This
 *     file joins them: it walks the /Recipients strings, derives the file
 *     key and hands it to sec.c, and back for a rewrite.
 *  2. Authentication (7.6.5.3, Table 24 and the algorithm after it): each
 *     /Recipients string is an EnvelopedData; the one with a RecipientInfo
 *     naming the certificate (issuer and serial number, or subject key
 *     identifier) is opened with the private key.  Its content must be
 *     exactly 24 bytes: the 20-byte seed and the recipient's permissions,
 *     4 bytes big-endian (as PDFBox and iText write and read them).
 *     File key = the first Length/8 bytes of SHA-1 (SHA-256 for /V 5,
 *     AESV3) over the seed, every /Recipients string as stored and in
 *     order, and 0xFFFFFFFF when metadata is not encrypted.
 *  3. Outcomes of the walk: an envelope that opens ends it; a RecipientInfo
 *     that names the certificate but does not open with the key ends it
 *     with PDFSTAMP_E_PASSWORD (the key does not belong to that
 *     certificate); a damaged or unsupported envelope is remembered and
 *     the walk goes on (another one may be ours, and its key covers the
 *     damaged bytes as stored).  With no match: the first damaged or
 *     unsupported envelope's error if there was one, else
 *     PDFSTAMP_E_PASSWORD naming the certificate and what was tried.
 *  4. Permissions: the envelope's 4 bytes are the recipient's permissions,
 *     the bits of Table 22 plus, in ISO 32000-1 Table 24, bit 2: "permits
 *     change of encryption and enables all other permissions".
 *     Producers differ in the bits Table 22 reserves (PDFBox clears bits
 *     7, 8 and 13-32 and sets bit 1, iText sets them), so those are read
 *     as an R3+ /P has them (1, and 0 for bits 1-2): a rotation to
 *     passwords then writes a /P and /Perms every reader agrees on.  A
 *     recipient is owner-equivalent (authenticated as 2: it may rotate)
 *     with bit 2 (then every permission is in force), and also with every
 *     permission of Table 22 (bits 3-6 and 9-12), as PDFBox's
 *     isOwnerPermission says: PDFBox and iText cannot write bit 2, and a
 *     recipient who may print, copy, extract and change everything holds
 *     the document's content in every form already.  That second rule is
 *     a deliberate choice beyond the letter of Table 24 (pdfstamp(1)).
 *     Written envelopes (note 5) carry bit 2 for a recipient granted
 *     every permission, so that other readers see the same right.
 *  5. Writing (ps_pubsec_new): a fresh 20-byte seed from the OS, one
 *     envelope per recipient (as PDFBox and iText write them) holding the
 *     seed and that recipient's permissions, AES-256-CBC content
 *     encryption (envelope.c), and the AESV3 file key from note 2's hash.
 *     Contents and key are wiped; the seed goes to the caller, whose
 *     self-check opens the output with it (ps_pubsec_auth_seed: the key
 *     derived again from the /Recipients strings as written), and who
 *     wipes it.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>

#include "ps.h"
#include "envelope.h"
#include "pubsec.h"
#include "rkey.h"

#define SEED_LEN PS_PUBSEC_SEED
/* Table 22: print, modify, copy, annotate, fill, extract, assemble, print-hq */
#define OWNER_BITS 0xF3Cu
/* Table 22: bits 7, 8 and 13-32 are 1 (bits 1 and 2 are 0) */
#define RESERVED_ONES 0xFFFFF0C0u
/* ISO 32000-1 Table 24 (public-key permissions), bit 2: "permits change of
 * encryption and enables all other permissions" */
#define CHANGE_ENCRYPTION 0x2u

/* Note 2: the file key from SEED and the /Recipients strings of RECIPS. */
static int derive(ps_ctx *ctx, const uint8_t seed[SEED_LEN], const ps_obj *recips, int sha256,
                  int encrypt_metadata, uint8_t *key, size_t keylen)
{
	static const uint8_t ff[4] = {0xff, 0xff, 0xff, 0xff};
	const mbedtls_md_info_t *md =
	        mbedtls_md_info_from_type(sha256 ? MBEDTLS_MD_SHA256 : MBEDTLS_MD_SHA1);
	uint8_t h[32];
	mbedtls_md_context_t c;
	size_t i;
	int bad;

	if (!md || keylen > (size_t)mbedtls_md_get_size(md))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "pubsec: bad key length");
	mbedtls_md_init(&c);
	bad = mbedtls_md_setup(&c, md, 0) != 0 || mbedtls_md_starts(&c) != 0 ||
	      mbedtls_md_update(&c, seed, SEED_LEN) != 0;
	for (i = 0; !bad && i < ps_array_len(recips); i++) {
		const ps_obj *s = ps_array_get(recips, i);
		bad = mbedtls_md_update(&c, s->u.str.p, s->u.str.len) != 0;
	}
	if (!bad && !encrypt_metadata)
		bad = mbedtls_md_update(&c, ff, sizeof ff) != 0;
	if (!bad)
		bad = mbedtls_md_finish(&c, h) != 0;
	mbedtls_md_free(&c);
	if (!bad)
		memcpy(key, h, keylen);
	ps_wipe(h, sizeof h);
	return bad ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory (hash)") : 0;
}

int ps_pubsec_auth(ps_ctx *ctx, ps_sec *sec, const struct pdfstamp_key *k,
                   struct ps_pubsec_who *who)
{
	const ps_obj *recips = ps_sec_recipients(sec);
	const ps_secparams *sp = ps_sec_params(sec);
	uint8_t content[PS_ENV_CONTENT_MAX], key[32];
	char first[sizeof ctx->errmsg] = "";
	size_t first_i = 0;
	ps_rkey *rk = NULL;
	size_t i, clen = 0;
	int rc, first_rc = 0, nri, found = -1;
	size_t total = 0;
	uint32_t p;

	memset(who, 0, sizeof *who);
	who->index = -1;
	if (!recips)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the file is not encrypted to certificates; give its password");
	if ((rc = ps_rkey_load(ctx, k, &rk)) < 0)
		return rc;
	for (i = 0; i < ps_array_len(recips) && found < 0; i++) {
		const ps_obj *s = ps_array_get(recips, i);
		nri = 0;
		rc = ps_env_open(ctx, rk, s->u.str.p, s->u.str.len, content, &clen, &nri);
		total += (size_t)(nri > 0 ? nri : 0);
		if (rc == 1) {
			found = (int)i;
		} else if (rc == PDFSTAMP_E_PASSWORD || rc == PDFSTAMP_E_NOMEM ||
		           rc == PDFSTAMP_E_IO) {
			goto out;
		} else if (rc < 0 && !first_rc) {
			first_rc = rc;
			first_i = i;
			memcpy(first, ctx->errmsg, sizeof first);
		}
	}
	if (found < 0) {
		if (first_rc)
			rc = ps_err(ctx, first_rc, "envelope %zu of %zu: %s", first_i + 1,
			            ps_array_len(recips), first);
		else
			rc = ps_err(ctx, PDFSTAMP_E_PASSWORD,
			            "no recipient of the file is the certificate %s "
			            "(%zu envelope%s, %zu RecipientInfo%s tried)",
			            ps_rkey_subject(rk), ps_array_len(recips),
			            ps_array_len(recips) == 1 ? "" : "s", total,
			            total == 1 ? "" : "s");
		goto out;
	}
	if (clen != SEED_LEN + 4) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "/Recipients entry %d holds %zu bytes; a 20-byte seed and 4 permission "
		            "bytes are expected (ISO 32000-2 7.6.5.3)", found, clen);
		goto out;
	}
	p = (uint32_t)content[20] << 24 | (uint32_t)content[21] << 16 |
	    (uint32_t)content[22] << 8 | content[23];
	if ((rc = derive(ctx, content, recips, sp->v == 5, sp->encrypt_metadata, key,
	                 (size_t)sp->length)) < 0)
		goto out;
	/* note 4: the bits Table 22 reserves read as R3+ writers set them */
	who->perms = (int64_t)(int32_t)((p | RESERVED_ONES) & ~(uint32_t)3);
	who->as = (p & CHANGE_ENCRYPTION) || (p & OWNER_BITS) == OWNER_BITS ? 2 : 1;
	if (p & CHANGE_ENCRYPTION)   /* Table 24: it enables all other permissions */
		who->perms = -4;
	if ((rc = ps_sec_auth_pubsec(ctx, sec, key, (size_t)sp->length, who->as)) < 0)
		goto out;
	who->index = found;
	snprintf(who->subject, sizeof who->subject, "%s", ps_rkey_subject(rk));
out:
	ps_wipe(content, sizeof content);
	ps_wipe(key, sizeof key);
	ps_rkey_free(rk);
	return rc < 0 ? rc : 0;
}

int ps_pubsec_count(ps_ctx *ctx, const ps_sec *sec)
{
	const ps_obj *recips = ps_sec_recipients(sec);
	size_t i;
	int n = 0, c;

	for (i = 0; recips && i < ps_array_len(recips); i++) {
		const ps_obj *s = ps_array_get(recips, i);
		if ((c = ps_env_count(ctx, s->u.str.p, s->u.str.len)) < 0)
			return c;
		n = c > INT_MAX - n ? INT_MAX : n + c;   /* saturates: a hostile count */
	}
	return n;
}

int ps_pubsec_auth_seed(ps_ctx *ctx, ps_sec *sec, const uint8_t seed[PS_PUBSEC_SEED])
{
	const ps_obj *recips = ps_sec_recipients(sec);
	const ps_secparams *sp = ps_sec_params(sec);
	uint8_t key[32];
	int rc;

	if (!recips)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "ps_pubsec_auth_seed: not a public-key handler");
	if ((rc = derive(ctx, seed, recips, sp->v == 5, sp->encrypt_metadata, key,
	                 (size_t)sp->length)) == 0)
		rc = ps_sec_auth_pubsec(ctx, sec, key, (size_t)sp->length, 2);
	ps_wipe(key, sizeof key);
	return rc;
}

int ps_pubsec_new(ps_ctx *ctx, const struct pdfstamp_recipient *r, size_t n, int64_t perms,
                  int encrypt_metadata, uint8_t seed[PS_PUBSEC_SEED], ps_sec **out)
{
	uint8_t content[SEED_LEN + 4], key[32];
	ps_obj *recips = ps_new_array();
	ps_buf env = {0};
	size_t i;
	int rc = 0;

	*out = NULL;
	if (!recips)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if ((rc = ps_random_os(ctx, content, SEED_LEN)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		ps_rcert *c = NULL;
		uint32_t p = (uint32_t)(r[i].set_permissions ? r[i].permissions : perms);

		/* note 4: every permission also grants the change of encryption */
		if ((p & OWNER_BITS) == OWNER_BITS)
			p |= CHANGE_ENCRYPTION;
		const ps_rcert *one[1];
		ps_obj *str;

		content[20] = (uint8_t)(p >> 24);
		content[21] = (uint8_t)(p >> 16);
		content[22] = (uint8_t)(p >> 8);
		content[23] = (uint8_t)p;
		if ((rc = ps_rcert_load(ctx, r[i].cert, r[i].cert_len, &c)) < 0) {
			rc = ps_err_wrap(ctx, rc, "recipient %zu", i + 1);
			goto out;
		}
		one[0] = c;
		ps_buf_reset(&env);
		rc = ps_env_make(ctx, one, 1, content, sizeof content, &env);
		ps_rcert_free(c);
		if (rc < 0)
			goto out;
		if (env.oom) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		if (!(str = ps_new_str(env.data, env.len)) || ps_array_push(recips, str) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
	}
	if ((rc = derive(ctx, content, recips, 1, encrypt_metadata, key, sizeof key)) < 0)
		goto out;
	rc = ps_sec_new_pubsec(ctx, key, recips, encrypt_metadata, out);
	recips = NULL;
	if (rc == 0)
		memcpy(seed, content, SEED_LEN);
out:
	ps_wipe(content, sizeof content);
	ps_wipe(key, sizeof key);
	ps_buf_free(&env);
	ps_obj_free(recips);
	return rc;
}
