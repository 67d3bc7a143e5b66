/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sec.c - the security handler: /Encrypt read and written, authentication,
 * the rules for which bytes are encrypted, the one string walker, stream
 * data, and the only door to the AES engine (aesmb.c).
 *
 * DESIGN NOTES
 *
 * References are to ISO 32000-2:2020.
 *
 *  1. What it owns (AES-256 here; the legacy kinds in note 8).  A ps_sec
 *     is built from an already-resolved /Encrypt
 *     dictionary (ps_sec_new; the document layer resolves and checks the
 *     revision chain, this module never calls it) or made new for a
 *     rewrite (ps_sec_new_r6).  It holds the parameters (ps_secparams:
 *     /V /R /P /O /U /OE /UE /Perms /EncryptMetadata, Table 21 and Table
 *     27), whether /StrF and /StmF are Identity (Table 20), the /Encrypt
 *     object's number, the authentication state and, once authenticated,
 *     the cipher state.  Key derivation is kdf.c's; nothing else sees a
 *     key or a key schedule.
 *  2. States: PARSED (ps_sec_new: parameters only; nothing can be
 *     decrypted) --ps_sec_auth--> AUTHENTICATED (user or owner; the cipher
 *     state exists).  ps_sec_new_r6 and ps_sec_share give AUTHENTICATED
 *     handlers.  A failed authentication leaves the state as it was.
 *  3. Key material.  The file key exists only as AES key schedules inside
 *     the handler's ps_cipher (wiped by ps_cipher_free); the raw key from
 *     Algorithm 2.A or from the OS is wiped as soon as the schedules are
 *     built.  ps_sec_share lends those schedules to a second handler (a
 *     writer's self-check reading its own output), so the key never needs
 *     to be kept: the borrower must not outlive the lender.
 *  4. What is encrypted (7.6.2): every string and stream of the file body,
 *     under AESV3 (7.6.3.1, Table 25: IV || AES-256-CBC of the PKCS#7-padded
 *     data), except
 *       - the /Encrypt dictionary's own strings (7.6.2; ps_sec_strings_encrypted
 *         by object number);
 *       - the chain's cross-reference streams (7.5.8.2), decided by object
 *         number by the document layer (ps_doc_is_xref_stream), which then
 *         does not ask: a stream that merely says /Type /XRef is encrypted;
 *       - the /Contents of signature dictionaries (12.8.1: the signature
 *         value is written in clear so the byte range can be hashed);
 *       - strings or streams whose crypt filter is Identity (/StrF, /StmF,
 *         or a /Crypt filter in the stream's /Filter, 7.4.10, 7.6.6);
 *       - metadata streams when /EncryptMetadata is false (Table 27, 7.6.6).
 *     Members of an object stream are encrypted with the stream as a whole,
 *     never again one by one: callers do not walk them.
 *  5. One walker (ps_sec_convert_strings) does decryption (reader),
 *     encryption (incremental writer) and re-encryption (rewrite), each side
 *     applying its own handler's rules; the per-object calls take the object
 *     number and generation although AESV3 ignores them, since the legacy
 *     handlers' per-object keys (Algorithm 1: ISO 32000-2 7.6.3.2, ISO
 *     32000-1 7.6.2) derive from them.
 *  6. AESV3 decryption is strict: the length must be 0 or 16 + a non-zero
 *     multiple of 16 and every pad byte must equal the pad length
 *     (pkcs7_bad, checked without a data-dependent branch); on failure
 *     nothing is appended and the scratch plaintext is wiped.  No input to
 *     decrypt/encrypt may point into the destination ps_buf: reserving
 *     space may move it.
 *  7. Batches: a rewrite prepares many objects (ps_sec_encrypt_prepare,
 *     ps_sec_reencrypt_prepare: plaintext laid out in place, fresh IVs)
 *     and runs them through the multi-lane engine at once
 *     (ps_sec_run_batch): 8 or 16 independent CBC chains in parallel,
 *     longest first, a lane refilled as its object ends (aesmb.c note 3).
 *     Only an AES-256 handler is written, so only AESV3 batches exist.
 *  8. Legacy handlers (ISO 32000-1 7.6.2-7.6.3; ISO 32000-2 7.6.3.2 and
 *     7.6.4.3.1-2 keep them as deprecated): /V 1 /R 2 and /V 2 /R 3 (RC4
 *     for everything, /Length 40-128 bits), /V 4 /R 4 with crypt filters
 *     (/CF: /CFM /V2 = RC4, /AESV2 = AES-128-CBC, /None; /StrF, /StmF and
 *     /EFF each name one, Identity by default; a stream may name its own
 *     with /Filter /Crypt /DecodeParms /Name, 7.4.10).  The cipher is
 *     chosen per string or stream by kind (CK_*): strings take /StrF's
 *     (kstr), streams their own /Crypt filter, else /EFF's for embedded
 *     files, else /StmF's (stream_kind).  RC4 and AESV2 use per-object
 *     keys (Algorithm 1, ps_kdf_object_key: MD5 of the file key, the
 *     object number's low 3 and the generation's low 2 bytes, + "sAlT" for
 *     AESV2), made for each call in a local and wiped after it.  RC4 has
 *     no IV and no padding (same length); AESV2 has AESV3's layout (IV ||
 *     CBC || PKCS#7) with AES-128 from mbedTLS directly (small objects,
 *     per-object keys: nothing for the multi-lane engine).  Because each
 *     object's key derives from it, the legacy file key (lkey, 5-16 bytes,
 *     from Algorithm 2 via kdf.c) is kept for the handler's life and
 *     wiped with it; ps_sec_share does not copy it: a borrower reads its
 *     lender's (legacy_key).  Passwords: Algorithms 6 and 7 (kdf.c).  There
 *     is no /Perms before R5, so perms_ok is 1 and the permissions are /P,
 *     R2's translated to R3+ bits (r2_perms).  A rewrite turns any legacy
 *     input into AES-256 R6: AESV2 (and AESV3) streams are re-encrypted in
 *     place (same length; ps_sec_reencrypt_in_place says when), RC4 ones
 *     go through ps_sec_decrypt_stream then ps_sec_encrypt_prepare.  An
 *     incremental update keeps the file's handler (/Encrypt, ID[0]).
 *     ps_sec_weak calls RC4, or a key under 128 bits, weak.
 *  9. The public-key handler (/Filter /Adobe.PubSec, 7.6.5; pubsec.c
 *     makes and opens its keys).  /SubFilter adbe.pkcs7.s3 and s4 are /V 1
 *     or 2 (RC4 with /Length, /Recipients in /Encrypt), s5 is /V 4 or 5
 *     with crypt filters whose dictionaries hold the /Recipients (7.6.5.2,
 *     Table 25); every filter in use must name the same array, as every
 *     producer writes one DefaultCryptFilter (else UNSUPPORTED: one key per
 *     filter is not built).  /EncryptMetadata false counts from /Encrypt
 *     or from that filter.  Objects are encrypted as by the standard
 *     handler of the same /V (7.6.5.1), so sp.r is set to that handler's
 *     class (3 RC4, 4 crypt filters with Algorithm 1, 6 AESV3) and the
 *     rest of this file does not tell the handlers apart; the /R written,
 *     if any, is kept for info only.  No password opens it (ps_sec_auth
 *     says so, PDFSTAMP_E_PASSWORD); ps_sec_auth_pubsec takes the key
 *     pubsec.c derived, and the recipient's permissions live in the
 *     document (doc.c), not in sp.p.  At most PUBSEC_MAX_RECIPIENTS
 *     strings are read, each kept as stored: the key hashes them.  A
 *     rewrite to certificates writes s5 /V 5 with one DefaultCryptFilter
 *     (AESV3) holding the new /Recipients (ps_sec_new_pubsec).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/aes.h>

#include "ps.h"
#include "cpu.h"
#include "sec_aes.h"
#include "pubsec.h"

struct ps_sec {
	ps_secparams sp;
	uint32_t enc_num;             /* the /Encrypt object, 0 if direct or new */
	int strf_identity, stmf_identity;
	int authenticated;            /* 0 parsed, 1 user, 2 owner (note 2) */
	int perms_ok;                 /* /Perms agreed with /P and /EncryptMetadata */
	char strf[32], stmf[32], cfm[32]; /* as pdfstamp_info reports them */
	ps_cipher c;                  /* ready once authenticated (note 3) */
	struct ps_sec *lender;        /* ps_sec_share: whose schedules C borrows */
	int loans;                    /* handlers borrowing this one's schedules */
	int kstr, kstm, keff;         /* cipher kinds of strings, streams,
	                               * embedded files (note 8) */
	int ncf;                      /* /CF, as read (V 4 and 5) */
	struct {
		char name[32], method[16];
		int kind;
	} cf[8];
	uint8_t lkey[16];             /* legacy file key, sp.length bytes; a borrower
	                                 uses its lender's (note 8) */
	/* the public-key handler (note 9) */
	int pubsec;                   /* /Filter /Adobe.PubSec */
	char subfilter[32];           /* adbe.pkcs7.s3, s4 or s5 */
	int pub_r;                    /* /R as written, 0 if absent (info only) */
	ps_obj *recips;               /* the /Recipients array whose strings make the
	                               * key (a copy, owned; NULL in a borrower) */
};

/* Cipher kinds (note 8). */
enum { CK_NONE = 0, CK_RC4, CK_AESV2, CK_AESV3 };

static int sec_crypt(ps_ctx *ctx, const ps_sec *s, int kind, uint32_t num, uint16_t gen,
                     const uint8_t *in, size_t n, ps_buf *out, int enc);
static int pkcs7_bad(const uint8_t *p, size_t m, uint8_t *pad);
/* The AESV3 layer's batch preparations (below, sec_aes.h's section). */
static int aesv3_prepare(ps_ctx *ctx, const uint8_t *in, size_t n, uint8_t *out, ps_aes_job *job);
static int aesv3_reencrypt_prepare(ps_ctx *ctx, const ps_cipher *old, uint8_t *buf, size_t n,
                                   ps_aes_job *job);

const char *pdfstamp_aes_engine(void)
{
	return ps_aes_engine_name(ps_aes_engine_best(ps_cpu_probe()));   /* no context */
}

/* ---- reading /Encrypt (7.6.4, Table 20, Table 21, Table 27) -------------------- */

static int pubsec_no_password(ps_ctx *ctx, const ps_sec *s);

static int name_is(const ps_obj *o, const char *n)
{
	return o && ps_obj_is_name(o, n);
}

static void copy_name(char *dst, size_t n, const ps_obj *o)
{
	dst[0] = 0;
	if (o && o->kind == PS_NAME)
		snprintf(dst, n, "%s", o->u.name.p);
}

static int copy_sec_string(ps_ctx *ctx, const ps_obj *enc, const char *key, uint8_t *dst, size_t n)
{
	ps_obj *s = ps_dict_get(enc, key);

	memset(dst, 0, n);
	if (!s || s->kind != PS_STR)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary has no /%s string",
		              key);
	/* ISO 32000-2 Table 27: fixed sizes.  A short value cannot hold its
	 * hash and salts, so the file is malformed; longer ones are read by
	 * their leading bytes, as qpdf does. */
	if (s->u.str.len < n)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "the /Encrypt dictionary's /%s is %zu bytes; it must be %zu", key,
		              s->u.str.len, n);
	if (s->u.str.len > n)
		ps_warn(ctx, "/Encrypt /%s is %zu bytes; using its first %zu", key, s->u.str.len,
		        n);
	memcpy(dst, s->u.str.p, n);
	return 0;
}

/* The kind of crypt filter NAME (/Identity or a /CF entry); -1 if undefined. */
static int cf_kind(const ps_sec *s, const char *name)
{
	int i;

	if (strcmp(name, "Identity") == 0)
		return CK_NONE;
	for (i = 0; i < s->ncf; i++)
		if (strcmp(s->cf[i].name, name) == 0)
			return s->cf[i].kind;
	return -1;
}

/* /CF (7.6.6, Table 25): each filter's /CFM, which must fit /V. */
static int parse_cf(ps_ctx *ctx, ps_sec *s, const ps_obj *cf, int v)
{
	size_t i;

	if (!cf)
		return 0;
	if (cf->kind != PS_DICT)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "/CF is not a dictionary");
	for (i = 0; i < cf->u.dict.len && s->ncf < (int)(sizeof s->cf / sizeof s->cf[0]); i++) {
		const ps_obj *f = cf->u.dict.ents[i].val, *m = ps_dict_get(f, "CFM");
		const char *mn = m && m->kind == PS_NAME ? m->u.name.p : "None";
		int k;

		if (!f || f->kind != PS_DICT)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "crypt filter /%s is not a dictionary",
			              cf->u.dict.ents[i].key);
		if (strcmp(mn, "None") == 0)
			k = CK_NONE;
		else if (strcmp(mn, "V2") == 0 && v == 4)
			k = CK_RC4;
		else if (strcmp(mn, "AESV2") == 0 && v == 4)
			k = CK_AESV2;
		else if (strcmp(mn, "AESV3") == 0 && v == 5)
			k = CK_AESV3;
		else
			k = -2;                /* refused when used (parse, stream_kind) */
		snprintf(s->cf[s->ncf].name, sizeof s->cf[0].name, "%s", cf->u.dict.ents[i].key);
		snprintf(s->cf[s->ncf].method, sizeof s->cf[0].method, "%s", mn);
		s->cf[s->ncf++].kind = k;
	}
	return 0;
}

/* /StrF and /StmF of a /V 4 or 5 dictionary, resolved to cipher kinds; the
 * /Crypt filters of STD (the standard handler) or of a public-key one
 * (note 9) alike. */
static int parse_filters(ps_ctx *ctx, ps_sec *s, const ps_obj *enc, int v)
{
	ps_obj *cf = ps_dict_get(enc, "CF"), *names[2], *fo;
	int k, kinds[2], rc;

	names[0] = ps_dict_get(enc, "StrF");
	names[1] = ps_dict_get(enc, "StmF");
	if (v >= 4 && (rc = parse_cf(ctx, s, cf, v)) < 0)
		return rc;
	/* StrF/StmF: Identity (their default) or a filter defined in /CF */
	for (k = 0; k < 2; k++) {
		kinds[k] = v < 4 ? CK_RC4 : CK_NONE;
		if (v < 4 || !names[k])
			continue;
		if (names[k]->kind != PS_NAME)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "/StrF or /StmF is not a name");
		if ((kinds[k] = cf_kind(s, names[k]->u.name.p)) == -1)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "crypt filter /%s is not defined in /CF", names[k]->u.name.p);
		if (kinds[k] < 0 || (v == 5 && kinds[k] != CK_AESV3 && kinds[k] != CK_NONE))
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			              "crypt filter /%s uses a method that is not supported with "
			              "/V %d (V2 and AESV2 need /V 4, AESV3 needs /V 5)",
			              names[k]->u.name.p, v);
	}
	s->kstr = kinds[0];
	s->kstm = kinds[1];
	/* /EFF (embedded file streams) defaults to /StmF */
	s->keff = s->kstm;
	fo = ps_dict_get(enc, "EFF");
	if (v == 4 && fo && fo->kind == PS_NAME && (s->keff = cf_kind(s, fo->u.name.p)) < 0)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "/EFF names crypt filter /%s, which /CF does not define or which is "
		              "not supported", fo->u.name.p);
	s->strf_identity = s->kstr == CK_NONE;
	s->stmf_identity = s->kstm == CK_NONE;
	/* what `info` reports: the names, and the method of the stream filter */
	copy_name(s->strf, sizeof s->strf, names[0]);
	copy_name(s->stmf, sizeof s->stmf, names[1]);
	copy_name(s->cfm, sizeof s->cfm,
	          ps_dict_get(ps_dict_get(cf, s->stmf[0] ? s->stmf : "StdCF"), "CFM"));
	if (v < 4)
		snprintf(s->cfm, sizeof s->cfm, "V2");
	return 0;
}

/* The most /Recipients strings read (PS_PUBSEC_MAX_RECIPIENTS): Acrobat
 * writes one per permission set, PDFBox and iText one per recipient. */
#define PUBSEC_MAX_RECIPIENTS PS_PUBSEC_MAX_RECIPIENTS

/* The public-key handler's dictionary (note 9; ISO 32000-2 7.6.5, Tables
 * 23 and 25). */
static int parse_pubsec(ps_ctx *ctx, ps_sec *s, const ps_obj *enc)
{
	ps_obj *sf = ps_dict_get(enc, "SubFilter"), *em, *eff, *rec = NULL;
	ps_obj *cf = ps_dict_get(enc, "CF");
	int64_t v = 0, r = 0, len = 40;
	const char *used[3];
	size_t i;
	int k, rc, s5;

	s->pubsec = 1;
	if (!sf || sf->kind != PS_NAME)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "no /SubFilter name");
	copy_name(s->subfilter, sizeof s->subfilter, sf);
	s5 = strcmp(s->subfilter, "adbe.pkcs7.s5") == 0;
	if (!s5 && strcmp(s->subfilter, "adbe.pkcs7.s4") != 0 &&
	    strcmp(s->subfilter, "adbe.pkcs7.s3") != 0)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "/SubFilter /%s is not supported (supported: adbe.pkcs7.s3, s4, s5)",
		              s->subfilter);
	ps_obj_int(ps_dict_get(enc, "V"), &v);
	if (ps_dict_get(enc, "R"))
		ps_obj_int(ps_dict_get(enc, "R"), &r);
	s->pub_r = r >= 0 && r <= INT32_MAX ? (int)r : 0;
	/* 7.6.5.2: s3 and s4 are /V 1 or 2 (RC4), s5 /V 4 or 5 (crypt filters) */
	if (s5 ? v != 4 && v != 5 : v != 1 && v != 2)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "/SubFilter /%s with /V %lld is not supported (%s)",
		              s->subfilter, (long long)v, s5 ? "s5 needs /V 4 or 5"
		                                              : "s3 and s4 need /V 1 or 2");
	if (v == 2 && ps_dict_get(enc, "Length") &&
	    (ps_obj_int(ps_dict_get(enc, "Length"), &len) < 0 || len < 40 || len > 128 || len % 8))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "/Length %lld is not a key length of 40 to 128 bits in steps of 8",
		              (long long)len);
	s->sp.v = (int)v;
	/* the cipher rules are those of the standard handler of the same /V
	 * (7.6.5.1): R stands for that class below (3: RC4 with a LENGTH-byte
	 * key, 4: crypt filters with Algorithm 1, 6: AESV3) */
	s->sp.r = v == 5 ? 6 : v == 4 ? 4 : 3;
	s->sp.length = v == 1 ? 5 : v == 2 ? (int)(len / 8) : v == 4 ? 16 : 32;
	s->sp.p = PS_P_NONE; /* the recipient's own permissions replace it (ps_sec_auth_pubsec) */
	if ((rc = parse_filters(ctx, s, enc, (int)v)) < 0)
		return rc;
	em = ps_dict_get(enc, "EncryptMetadata");
	s->sp.encrypt_metadata = v < 4 || !(em && em->kind == PS_BOOL && !em->u.b);
	if (!s5) {
		rec = ps_dict_get(enc, "Recipients");
	} else {
		/* Every filter in use must carry the same /Recipients: one file
		 * key serves all (the producers write one DefaultCryptFilter). */
		used[0] = s->strf;
		used[1] = s->stmf;
		used[2] = "";
		eff = ps_dict_get(enc, "EFF");
		if (eff && eff->kind == PS_NAME)
			used[2] = eff->u.name.p;
		for (k = 0; k < 3; k++) {
			ps_obj *f, *fr;
			if (!used[k][0] || strcmp(used[k], "Identity") == 0)
				continue;
			f = ps_dict_get(cf, used[k]);
			if (ps_obj_is_name(ps_dict_get(f, "CFM"), "None"))
				continue;
			fr = ps_dict_get(f, "Recipients");
			if (!fr)
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "crypt filter /%s has no /Recipients", used[k]);
			if (rec && rec != fr)
				return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
				              "crypt filters /%s and others have their own "
				              "/Recipients (one key per filter is not supported)",
				              used[k]);
			rec = fr;
			em = ps_dict_get(f, "EncryptMetadata");
			if (em && em->kind == PS_BOOL && !em->u.b)
				s->sp.encrypt_metadata = 0;
		}
	}
	if (!rec)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the public-key handler has no /Recipients");
	if (rec->kind == PS_STR) {
		/* a single string where an array belongs: read as one */
		ps_obj *a = ps_new_array();
		if (!a || ps_array_push(a, ps_obj_copy(rec)) < 0) {
			ps_obj_free(a);
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		s->recips = a;
	} else if (rec->kind != PS_ARRAY || ps_array_len(rec) == 0) {
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "/Recipients is not a non-empty array");
	} else if (ps_array_len(rec) > PUBSEC_MAX_RECIPIENTS) {
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "/Recipients has %zu entries; at most %d are read",
		              ps_array_len(rec), PUBSEC_MAX_RECIPIENTS);
	} else if (!(s->recips = ps_obj_copy(rec))) {
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	for (i = 0; i < ps_array_len(s->recips); i++)
		if (ps_array_get(s->recips, i)->kind != PS_STR)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "/Recipients entry %zu is not a string", i);
	return 0;
}

static int parse(ps_ctx *ctx, ps_sec *s, const ps_obj *enc)
{
	ps_obj *em, *fo;
	int64_t v = 0, r = 0, p = 0, len = 40;
	int rc, legacy;

	if (!enc || enc->kind != PS_DICT)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer's /Encrypt is not a dictionary");
	if (ps_dict_get(enc, "KDFSalt"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the file is protected by a PDF-MAC (ISO/TS 32004), which pdfstamp "
		              "does not support");
	fo = ps_dict_get(enc, "Filter");
	if (name_is(fo, "Adobe.PubSec")) {
		rc = parse_pubsec(ctx, s, enc);
		return rc == PDFSTAMP_E_FORMAT || rc == PDFSTAMP_E_UNSUPPORTED
		       ? ps_err_wrap(ctx, rc, "the public-key handler (/Adobe.PubSec)") : rc;
	}
	if (!name_is(fo, "Standard"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the security handler is /%s, not /Standard or /Adobe.PubSec "
		              "(custom handlers are not supported)",
		              fo && fo->kind == PS_NAME ? fo->u.name.p : "?");
	if (ps_dict_get(enc, "SubFilter"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the /Encrypt dictionary has a /SubFilter");
	ps_obj_int(ps_dict_get(enc, "V"), &v);
	ps_obj_int(ps_dict_get(enc, "R"), &r);
	/* ISO 32000-1 7.6.3 Tables 20-21: V 1 R 2, V 2 R 3, V 4 R 4; ISO 32000-2: V 5 R 5/6 */
	if (!((v == 1 && (r == 2 || r == 3)) || (v == 2 && (r == 2 || r == 3)) ||
	      (v == 4 && r == 4) || (v == 5 && (r == 5 || r == 6))))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the standard security handler with /V %lld /R %lld is not supported "
		              "(supported: /V 1 /R 2, /V 2 /R 3, /V 4 /R 4, /V 5 /R 5 or 6)",
		              (long long)v, (long long)r);
	legacy = r <= 4;
	if (ps_obj_int(ps_dict_get(enc, "P"), &p) < 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary has no /P");
	/* /P is a 32-bit signed value; some writers store it unsigned. */
	if (p > INT32_MAX && p <= (int64_t)UINT32_MAX)
		p -= (int64_t)1 << 32;
	if (p < INT32_MIN || p > INT32_MAX)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "/P is out of range");
	s->sp.v = (int)v;
	s->sp.r = (int)r;
	s->sp.p = p;
	/* /EncryptMetadata means something only from /V 4 on (Table 20): there
	 * Algorithm 2 (R4) or /Perms (R6) binds it to the key; in a V1/V2
	 * file nothing does, and anyone could add it to have metadata read
	 * or written in clear. */
	em = ps_dict_get(enc, "EncryptMetadata");
	s->sp.encrypt_metadata = v < 4 || !(em && em->kind == PS_BOOL && !em->u.b);
	/* the file key length (ISO 32000-1 Table 20 /Length; V 4: 128 bits) */
	if (v == 2 && ps_dict_get(enc, "Length") &&
	    (ps_obj_int(ps_dict_get(enc, "Length"), &len) < 0 || len < 40 || len > 128 || len % 8))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "/Length %lld is not a key length of 40 to 128 bits in steps of 8",
		              (long long)len);
	s->sp.length = v == 1 ? 5 : v == 2 ? (int)(len / 8) : v == 4 ? 16 : 32;
	if (r == 2)
		s->sp.length = 5; /* Algorithm 2 step h: n = 5 for R2, whatever /Length says */
	if ((rc = parse_filters(ctx, s, enc, (int)v)) < 0)
		return rc;
	if ((rc = copy_sec_string(ctx, enc, "O", s->sp.o, legacy ? 32 : 48)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "U", s->sp.u, legacy ? 32 : 48)) < 0)
		return rc;
	if (!legacy && ((rc = copy_sec_string(ctx, enc, "OE", s->sp.oe, 32)) < 0 ||
	                (rc = copy_sec_string(ctx, enc, "UE", s->sp.ue, 32)) < 0 ||
	                (rc = copy_sec_string(ctx, enc, "Perms", s->sp.perms, 16)) < 0))
		return rc;
	return 0;
}

int ps_sec_new(ps_ctx *ctx, const ps_obj *encdict, uint32_t enc_num, const uint8_t *id0,
               size_t id0len, ps_sec **out)
{
	ps_sec *s;
	int rc;

	*out = NULL;
	if (id0len > sizeof s->sp.id0)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the trailer's first /ID element is %zu bytes long", id0len);
	if (!(s = calloc(1, sizeof *s)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	s->enc_num = enc_num;
	if (id0len)
		memcpy(s->sp.id0, id0, id0len);
	s->sp.id0len = id0len;
	if ((rc = parse(ctx, s, encdict)) < 0) {
		ps_sec_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void ps_sec_free(ps_sec *s)
{
	if (!s)
		return;
	if (s->lender)
		s->lender->loans--;
	ps_cipher_free(&s->c);
	ps_obj_free(s->recips);
	ps_wipe(s, sizeof *s);
	free(s);
}

/* A handler a rewrite made (ps_sec_new_r6, ps_sec_new_pubsec): owner
 * state, and one AESV3 crypt filter NAME for strings and streams. */
static void made_aesv3(ps_sec *s, const char *name)
{
	s->authenticated = 2;
	s->perms_ok = 1;
	snprintf(s->strf, sizeof s->strf, "%s", name);
	snprintf(s->stmf, sizeof s->stmf, "%s", name);
	snprintf(s->cfm, sizeof s->cfm, "AESV3");
	s->kstr = s->kstm = s->keff = CK_AESV3;
	s->ncf = 1;
	snprintf(s->cf[0].name, sizeof s->cf[0].name, "%s", name);
	snprintf(s->cf[0].method, sizeof s->cf[0].method, "AESV3");
	s->cf[0].kind = CK_AESV3;
}

int ps_sec_new_r6(ps_ctx *ctx, const char *user_pw, size_t ulen, const char *owner_pw, size_t olen,
                  int64_t p, int encrypt_metadata, ps_sec **out)
{
	uint8_t key[32];
	ps_sec *s;
	int rc;

	*out = NULL;
	if (!(s = calloc(1, sizeof *s)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	s->sp.p = p;
	s->sp.encrypt_metadata = encrypt_metadata;
	s->sp.length = 32;
	if ((rc = ps_random_os(ctx, key, sizeof key)) < 0 || /* file key: the OS, never the DRBG */
	    (rc = ps_kdf_make(ctx, &s->sp, user_pw ? user_pw : "", ulen, owner_pw ? owner_pw : "",
	                      olen, key)) < 0 ||
	    (rc = ps_cipher_init(ctx, &s->c, key)) < 0) {
		ps_wipe(key, sizeof key);
		ps_sec_free(s);
		return rc;
	}
	ps_wipe(key, sizeof key);
	made_aesv3(s, "StdCF");
	*out = s;
	return 0;
}

int ps_sec_share(ps_ctx *ctx, ps_sec *src, ps_sec **out)
{
	ps_sec *s;
	int rc;

	*out = NULL;
	if (!src)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_share: bad arguments");
	if (!(s = calloc(1, sizeof *s)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	s->sp = src->sp;
	s->enc_num = src->enc_num;
	s->strf_identity = src->strf_identity;
	s->stmf_identity = src->stmf_identity;
	s->authenticated = src->authenticated;
	s->perms_ok = src->perms_ok;
	memcpy(s->strf, src->strf, sizeof s->strf);
	memcpy(s->stmf, src->stmf, sizeof s->stmf);
	memcpy(s->cfm, src->cfm, sizeof s->cfm);
	s->kstr = src->kstr;
	s->kstm = src->kstm;
	s->keff = src->keff;
	s->ncf = src->ncf;
	memcpy(s->cf, src->cf, sizeof s->cf);
	s->pubsec = src->pubsec;
	memcpy(s->subfilter, src->subfilter, sizeof s->subfilter);
	s->pub_r = src->pub_r;
	/* legacy: the key stays in the lender (legacy_key), only AESV3 has schedules */
	if (src->sp.r <= 4 && !src->authenticated) {
		ps_sec_free(s);
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "ps_sec_share: the handler is not authenticated");
	}
	if (src->sp.r >= 5 && (rc = ps_cipher_borrow(ctx, &s->c, &src->c)) < 0) {
		ps_sec_free(s);
		return rc;
	}
	s->lender = src;
	src->loans++;
	*out = s;
	return 0;
}

/* ---- authentication (7.6.4.3.3, Algorithms 2.A and 13) ---------------------------- */

int ps_sec_auth_key(ps_ctx *ctx, ps_sec *s, const uint8_t key[32], int as, int perms_ok)
{
	int rc;

	/* Re-keying a lender would leave its borrowers on wiped schedules. */
	if (s->loans > 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the security handler's key is lent; it cannot change");
	if (s->sp.r <= 4)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_auth_key: an AES-256 handler only");
	/* Objects read before (only /Encrypt) stay valid: never encrypted. */
	ps_cipher_free(&s->c);
	if ((rc = ps_cipher_init(ctx, &s->c, key)) < 0)
		return rc;
	s->authenticated = as;
	s->perms_ok = perms_ok;
	return 0;
}

static int pubsec_no_password(ps_ctx *ctx, const ps_sec *s)
{
	return ps_err(ctx, PDFSTAMP_E_PASSWORD,
	              "the file is encrypted to certificates (/Adobe.PubSec /%s), not with a "
	              "password: open it with a recipient's private key and certificate",
	              s->subfilter);
}

/* The public-key handler (note 9): KEY is the file key that pubsec.c
 * derived from a recipient's seed, N its length (sp.length bytes). */
int ps_sec_auth_pubsec(ps_ctx *ctx, ps_sec *s, const uint8_t *key, size_t n, int as)
{
	int rc;

	if (!s->pubsec || n != (size_t)s->sp.length)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_auth_pubsec: bad arguments");
	if (s->loans > 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the security handler's key is lent; it cannot change");
	if (s->sp.r <= 4) {
		memcpy(s->lkey, key, n);
	} else {
		ps_cipher_free(&s->c);
		if ((rc = ps_cipher_init(ctx, &s->c, key)) < 0) {
			s->authenticated = 0;   /* no cipher state left */
			return rc;
		}
	}
	s->authenticated = as;
	s->perms_ok = 1;   /* the permissions come from the envelope itself */
	return 0;
}

const ps_obj *ps_sec_recipients(const ps_sec *s)
{
	return s && s->pubsec ? s->recips : NULL;
}

const char *ps_sec_handler(const ps_sec *s)
{
	return !s ? NULL : s->pubsec ? "Adobe.PubSec" : "Standard";
}

int ps_sec_new_pubsec(ps_ctx *ctx, const uint8_t key[32], ps_obj *recips, int encrypt_metadata,
                      ps_sec **out)
{
	ps_sec *s;
	int rc;

	*out = NULL;
	if (!(s = calloc(1, sizeof *s))) {
		ps_obj_free(recips);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	s->recips = recips;
	s->pubsec = 1;
	snprintf(s->subfilter, sizeof s->subfilter, "adbe.pkcs7.s5");
	s->sp.v = 5;
	s->sp.r = 6;
	s->sp.p = PS_P_NONE;
	s->sp.length = 32;
	s->sp.encrypt_metadata = encrypt_metadata;
	if ((rc = ps_cipher_init(ctx, &s->c, key)) < 0) {
		ps_sec_free(s);
		return rc;
	}
	made_aesv3(s, "DefaultCryptFilter");
	*out = s;
	return 0;
}

/* R2 has no bits 9-12 (ISO 32000-1 Table 22): fill-forms, accessibility
 * extraction, assembly and high-quality printing follow annotate (6), copy
 * (5), modify (4) and print (3), as qpdf and pdf.js read them.  The
 * effective permissions say so in R3+ terms, so that checks and a rotation
 * to R6 keep their meaning. */
static int64_t r2_perms(int64_t p)
{
	uint32_t u = (uint32_t)p & ~(uint32_t)0xF00;

	u |= ((uint32_t)p & 0x20) << 3 | ((uint32_t)p & 0x10) << 5 | ((uint32_t)p & 0x8) << 7 |
	     ((uint32_t)p & 0x4) << 9;
	return (int64_t)(int32_t)u;
}

/* Permissions: /P is not authenticated, /Perms is (it is encrypted under
 * the file key, Algorithm 10), so *perms is
 *  - /P when /Perms agrees with it;
 *  - with FORCE the P that /Perms records when it is a well-formed block
 *    that disagrees (else refused);
 *  - with FORCE no optional permission (PS_P_NONE) when /Perms is no
 *    permissions block at all (else refused): nothing trustworthy grants any. */
int ps_sec_auth(ps_ctx *ctx, ps_sec *s, const char *pw, size_t len, unsigned flags, int64_t *perms,
                int *as)
{
	uint8_t key[32];
	int64_t genuine = 0, eff;
	int is_owner = 0, perms_ok = 0, pstate = PS_PERMS_GARBLED, rc;

	if (s->loans > 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "the security handler's key is lent; it cannot change");
	if (s->pubsec)
		return pubsec_no_password(ctx, s);
	if (s->sp.r <= 4) {
		/* Algorithms 7 then 6 (note 8); no /Perms before R5: /P is all there is */
		int owner = 0;
		if ((rc = ps_kdf_legacy_authenticate(ctx, &s->sp, pw, len, key, &owner)) == 0) {
			memcpy(s->lkey, key, (size_t)s->sp.length);
			s->authenticated = owner ? 2 : 1;
			s->perms_ok = 1;
			*perms = s->sp.r == 2 ? r2_perms(s->sp.p) : s->sp.p;
			*as = s->authenticated;
		}
		goto out;
	}
	rc = ps_kdf_authenticate(ctx, &s->sp, pw, len, key, &is_owner, &perms_ok);
	if (rc < 0)
		goto out;
	/* Algorithm 13 (7.6.4.4.12): what /Perms itself says */
	if ((rc = ps_kdf_read_perms(ctx, &s->sp, key, &genuine, &pstate)) < 0)
		goto out;
	eff = s->sp.p;
	if (pstate != PS_PERMS_OK) {
		if (!(flags & PDFSTAMP_AUTH_FORCE)) {
			rc = ps_err_hint(ctx, PDFSTAMP_HINT_AUTH_FORCE, PDFSTAMP_E_FORMAT,
			                 "/Perms does not match /P and /EncryptMetadata "
			                 "(Algorithm 13); the encryption dictionary may have been "
			                 "tampered with");
			goto out;
		}
		/* /EncryptMetadata is covered by /Perms too: with it in doubt,
		 * take the reading that encrypts new metadata. */
		s->sp.encrypt_metadata = 1;
		if (pstate == PS_PERMS_MISMATCH) {
			eff = genuine;
			if (genuine != s->sp.p)
				ps_warn(ctx, "/Perms does not match /P (Algorithm 13); continuing "
				        "(forced) with the permissions /Perms records (P=%lld), "
				        "not /P (%lld)", (long long)genuine, (long long)s->sp.p);
			else
				ps_warn(ctx, "/Perms does not match /EncryptMetadata "
				        "(Algorithm 13); continuing (forced)");
		} else {
			eff = PS_P_NONE;
			ps_warn(ctx, "/Perms is not a permissions block (Algorithm 13); "
			        "continuing (forced) with no optional permissions, "
			        "since /P cannot be trusted");
		}
	}
	if ((rc = ps_sec_auth_key(ctx, s, key, is_owner ? 2 : 1, perms_ok)) < 0)
		goto out;
	*perms = eff;
	*as = s->authenticated;
out:
	ps_wipe(key, sizeof key);
	return rc;
}

int ps_sec_check_password(ps_ctx *ctx, const ps_sec *s, const char *pw, size_t len, int *as)
{
	uint8_t k[32];
	int owner = 0, perms = 0, rc;

	*as = 0;
	if (s->pubsec)
		return pubsec_no_password(ctx, s);
	if (s->sp.r <= 4)
		rc = ps_kdf_legacy_authenticate(ctx, &s->sp, pw, len, k, &owner);
	else
		rc = ps_kdf_authenticate(ctx, &s->sp, pw, len, k, &owner, &perms);
	ps_wipe(k, sizeof k);
	if (rc == 0)
		*as = owner ? 2 : 1;
	return rc;
}

/* ---- what the handler says ------------------------------------------------------ */

const ps_secparams *ps_sec_params(const ps_sec *s)
{
	return &s->sp;
}

int ps_sec_encrypt_metadata(const ps_sec *s)
{
	return !s || s->sp.encrypt_metadata;
}

int ps_sec_perms_ok(const ps_sec *s)
{
	return s && s->perms_ok;
}

unsigned ps_sec_identity(const ps_sec *s)
{
	return s ? (s->strf_identity ? PS_SEC_STRF : 0) | (s->stmf_identity ? PS_SEC_STMF : 0) : 0;
}

int ps_sec_same_keystream(const ps_sec *s)
{
	return s && (s->kstr == CK_RC4 || s->kstm == CK_RC4 || s->keff == CK_RC4);
}

int ps_sec_weak(const ps_sec *s, char *why, size_t n)
{
	int bits = s ? s->sp.length * 8 : 0, rc4;

	if (n)
		why[0] = 0;
	if (!s || s->sp.r >= 5)
		return 0;
	rc4 = s->kstr == CK_RC4 || s->kstm == CK_RC4 || s->keff == CK_RC4;
	if (!rc4 && bits >= 128)
		return 0;
	if (n)
		snprintf(why, n, "%s %d-bit", rc4 ? "RC4" : "AES", bits);
	return 1;
}

int ps_sec_describe(ps_ctx *ctx, const ps_sec *s, struct pdfstamp_info *info)
{
	int i;

	snprintf(info->filter, sizeof info->filter, "%s", ps_sec_handler(s));
	info->v = s->sp.v;
	info->r = s->pubsec ? s->pub_r : s->sp.r;
	info->key_bits = s->sp.length * 8;
	snprintf(info->strf, sizeof info->strf, "%s", s->strf);
	snprintf(info->stmf, sizeof info->stmf, "%s", s->stmf);
	snprintf(info->cfm, sizeof info->cfm, "%s", s->cfm);
	info->encrypt_metadata = s->sp.encrypt_metadata;
	info->perms_valid = s->perms_ok;
	if (info->version < 2)
		return 0;
	ps_sec_weak(s, info->weak, sizeof info->weak);
	if (info->version >= 3 && s->pubsec) {
		snprintf(info->subfilter, sizeof info->subfilter, "%s", s->subfilter);
		info->envelopes = s->recips ? (int)ps_array_len(s->recips) : 0;
	}
	if (s->ncf == 0)
		return 0;
	if (!(info->crypt_filters = calloc((size_t)s->ncf, sizeof *info->crypt_filters)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < s->ncf; i++) {
		snprintf(info->crypt_filters[i].name, sizeof info->crypt_filters[i].name, "%s",
		         s->cf[i].name);
		snprintf(info->crypt_filters[i].method, sizeof info->crypt_filters[i].method, "%s",
		         s->cf[i].method);
	}
	info->ncrypt_filters = s->ncf;
	return 0;
}

/* ---- writing /Encrypt (7.6.4, Table 20, Table 21, Table 27) ----------------------- */

/* The public-key handler as ps_sec_new_pubsec makes it (note 9): s5, /V 5,
 * one crypt filter with AESV3 and the /Recipients (7.6.5, Tables 23, 25). */
static int write_pubsec_dict(ps_ctx *ctx, const ps_sec *s, ps_obj **out)
{
	ps_obj *d = ps_new_dict(), *cf = ps_new_dict(), *f = ps_new_dict(), *rec = NULL;
	int rc;

	if (s->sp.v != 5 || !s->recips) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "only an AES-256 public-key handler is written");
		goto fail;
	}
	if (!d || !cf || !f || !(rec = ps_obj_copy(s->recips)) ||
	    ps_dict_put_name(d, "Filter", "Adobe.PubSec") < 0 ||
	    ps_dict_put_name(d, "SubFilter", "adbe.pkcs7.s5") < 0 ||
	    ps_dict_put_int(d, "V", 5) < 0 || ps_dict_put_int(d, "Length", 256) < 0 ||
	    ps_dict_put_name(f, "AuthEvent", "DocOpen") < 0 ||
	    /* in bits here, as PDFBox reads a public-key filter's /Length */
	    ps_dict_put_name(f, "CFM", "AESV3") < 0 || ps_dict_put_int(f, "Length", 256) < 0 ||
	    (!s->sp.encrypt_metadata && (ps_dict_put_bool(f, "EncryptMetadata", 0) < 0 ||
	                                 ps_dict_put_bool(d, "EncryptMetadata", 0) < 0)))
		goto oom;
	for (size_t i = 0; i < ps_array_len(rec); i++)
		ps_array_get(rec, i)->u.str.hex = 1;
	rc = ps_dict_put(f, "Recipients", rec);
	rec = NULL;
	if (rc < 0)
		goto oom;
	rc = ps_dict_put(cf, "DefaultCryptFilter", f);
	f = NULL;
	if (rc < 0)
		goto oom;
	rc = ps_dict_put(d, "CF", cf);
	cf = NULL;
	if (rc < 0 || ps_dict_put_name(d, "StmF", "DefaultCryptFilter") < 0 ||
	    ps_dict_put_name(d, "StrF", "DefaultCryptFilter") < 0)
		goto oom;
	*out = d;
	return 0;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
fail:
	ps_obj_free(d);
	ps_obj_free(cf);
	ps_obj_free(f);
	ps_obj_free(rec);
	return rc;
}

int ps_sec_write_dict(ps_ctx *ctx, const ps_sec *s, ps_obj **out)
{
	static const char *const keys[5] = {"O", "U", "OE", "UE", "Perms"};
	const uint8_t *vals[5] = {s->sp.o, s->sp.u, s->sp.oe, s->sp.ue, s->sp.perms};
	static const size_t lens[5] = {48, 48, 32, 32, 16};
	ps_obj *d, *cf, *std;
	int rc, k;

	*out = NULL;
	if (s->pubsec)
		return write_pubsec_dict(ctx, s, out);
	d = ps_new_dict();
	cf = ps_new_dict();
	std = ps_new_dict();
	if (s->sp.v != 5 || s->sp.r != 6) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "only an AES-256 R6 handler writes /Encrypt");
		goto fail;
	}
	/* one crypt filter, StdCF, for strings and streams (7.6.5, Table 25) */
	if (!d || !cf || !std || ps_dict_put_name(d, "Filter", "Standard") < 0 ||
	    ps_dict_put_int(d, "V", 5) < 0 || ps_dict_put_int(d, "R", 6) < 0 ||
	    ps_dict_put_int(d, "Length", 256) < 0 ||
	    ps_dict_put_name(std, "AuthEvent", "DocOpen") < 0 ||
	    ps_dict_put_name(std, "CFM", "AESV3") < 0 || ps_dict_put_int(std, "Length", 32) < 0)
		goto oom;
	rc = ps_dict_put(cf, "StdCF", std);
	std = NULL;
	if (rc < 0)
		goto oom;
	rc = ps_dict_put(d, "CF", cf);
	cf = NULL;
	if (rc < 0 || ps_dict_put_name(d, "StmF", "StdCF") < 0 ||
	    ps_dict_put_name(d, "StrF", "StdCF") < 0 || ps_dict_put_int(d, "P", s->sp.p) < 0)
		goto oom;
	for (k = 0; k < 5; k++) {
		ps_obj *str = ps_new_str(vals[k], lens[k]);
		if (str)
			str->u.str.hex = 1;
		if (ps_dict_put(d, keys[k], str) < 0)
			goto oom;
	}
	if (!s->sp.encrypt_metadata && ps_dict_put_bool(d, "EncryptMetadata", 0) < 0)
		goto oom;
	*out = d;
	return 0;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
fail:
	ps_obj_free(d);
	ps_obj_free(cf);
	ps_obj_free(std);
	return rc;
}

/* ---- which bytes are encrypted (note 4) ------------------------------------------ */

/* The cipher kind of stream STM's data under S: its own /Crypt filter
 * (7.4.10: /DecodeParms /Name, Identity when absent) if it has one, else
 * /StmF.  -1 for a filter S does not define or cannot use. */
static int stream_kind(const ps_sec *s, const ps_obj *stm)
{
	ps_obj *f = ps_dict_get(stm, "Filter"), *parms = ps_dict_get(stm, "DecodeParms");
	size_t i, n = f && f->kind == PS_ARRAY ? ps_array_len(f) : 1;

	for (i = 0; i < n; i++) {
		ps_obj *fi = f && f->kind == PS_ARRAY ? ps_array_get(f, i) : f;
		ps_obj *pi = parms && parms->kind == PS_ARRAY ? ps_array_get(parms, i) : parms;
		if (ps_obj_is_name(fi, "Crypt")) {
			ps_obj *name = ps_dict_get(pi, "Name");
			if (!name || ps_obj_is_name(name, "Identity"))
				return CK_NONE;
			return name->kind == PS_NAME ? cf_kind(s, name->u.name.p) : -1;
		}
	}
	return ps_obj_is_name(ps_dict_get(stm, "Type"), "EmbeddedFile") ? s->keff : s->kstm;
}

int ps_sec_stream_encrypted(const ps_sec *s, const ps_obj *stm)
{
	if (!s || stream_kind(s, stm) == CK_NONE)
		return 0;
	if (ps_obj_is_name(ps_dict_get(stm, "Type"), "Metadata") && !s->sp.encrypt_metadata)
		return 0; /* Table 27 EncryptMetadata */
	return 1;
}

int ps_sec_strings_encrypted(const ps_sec *s, uint32_t num)
{
	return s && !s->strf_identity && (s->enc_num == 0 || num != s->enc_num);
}

int ps_sec_is_signature_dict(const ps_obj *d)
{
	ps_obj *type = ps_dict_get(d, "Type");
	ps_obj *contents = ps_dict_get(d, "Contents");
	ps_obj *br = ps_dict_get(d, "ByteRange");

	if (!contents || contents->kind != PS_STR || !br || br->kind != PS_ARRAY)
		return 0;
	return !type || ps_obj_is_name(type, "Sig") || ps_obj_is_name(type, "DocTimeStamp");
}

/* ---- the walker (note 5) ------------------------------------------------------- */

struct conv {
	ps_ctx *ctx;
	const ps_sec *from, *to;      /* NULL: that side is plaintext */
	uint32_t num;
	uint16_t gen;
	ps_buf a, b;                  /* plaintext (secret), ciphertext */
	int64_t count;
};

static int convert_string(void *ud, ps_obj *str, const ps_obj *parent, const char *key)
{
	struct conv *u = ud;
	const uint8_t *p = str->u.str.p;
	size_t n = str->u.str.len;
	int rc;

	if (parent && key && strcmp(key, "Contents") == 0 && ps_sec_is_signature_dict(parent))
		return 0;
	u->a.len = u->b.len = 0;
	if (u->from) {
		if ((rc = sec_crypt(u->ctx, u->from, u->from->kstr, u->num, u->gen, p, n, &u->a,
		                    0)) < 0)
			return u->to ? rc
			             : ps_err_wrap(u->ctx, rc,
			                           "cannot decrypt a string in object %u", u->num);
		p = u->a.data;
		n = u->a.len;
	}
	if (u->to) {
		if ((rc = sec_crypt(u->ctx, u->to, u->to->kstr, u->num, u->gen, p, n, &u->b,
		                    1)) < 0)
			return rc;
		p = u->b.data;
		n = u->b.len;
		str->u.str.hex = 1;
	}
	if (p == str->u.str.p)
		return 0;
	if (ps_str_set(str, p, n) < 0)
		return ps_err(u->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	u->count++;
	return 0;
}

int ps_sec_convert_strings(ps_ctx *ctx, const ps_sec *from, const ps_sec *to, uint32_t num,
                           uint16_t gen, ps_obj *o, int64_t *count)
{
	struct conv u = {.ctx = ctx, .num = num, .gen = gen, .a = PS_BUF_INIT, .b = PS_BUF_INIT};
	int rc;

	u.from = ps_sec_strings_encrypted(from, num) ? from : NULL;
	u.to = ps_sec_strings_encrypted(to, num) ? to : NULL;
	if (!u.from && !u.to)
		return 0;
	u.a.secret = 1;
	rc = ps_obj_walk_strings(o, convert_string, &u);
	ps_buf_free(&u.a);
	ps_buf_free(&u.b);
	if (count)
		*count += u.count;
	return rc;
}

/* ---- stream data and batches ------------------------------------------------------ */

/* ---- the legacy kinds: RC4 and AESV2 with per-object keys (note 8) ----------------- */

static const uint8_t *legacy_key(const ps_sec *s)
{
	while (s->lender)
		s = s->lender;
	return s->lkey;
}

/* AES-128-CBC of N bytes (whole blocks) at BUF in place, under KEY. */
static int aes128_cbc(ps_ctx *ctx, int mode, const uint8_t key[16], uint8_t iv[16], uint8_t *buf,
                      size_t n)
{
	mbedtls_aes_context a;
	int rc;

	mbedtls_aes_init(&a);
	rc = mode == MBEDTLS_AES_ENCRYPT ? mbedtls_aes_setkey_enc(&a, key, 128)
	                                 : mbedtls_aes_setkey_dec(&a, key, 128);
	if (rc == 0 && n)
		rc = mbedtls_aes_crypt_cbc(&a, mode, n, iv, buf, buf);
	mbedtls_aes_free(&a);            /* zeroizes the schedule */
	return rc ? ps_err(ctx, PDFSTAMP_E_INTERNAL, "AES-128 failed") : 0;
}

/* Decrypts (ENC 0) or encrypts N bytes at IN for object NUM GEN under a
 * legacy KIND, appending to OUT.  The object key is wiped on every path. */
static int legacy_crypt(ps_ctx *ctx, const ps_sec *s, int kind, uint32_t num, uint16_t gen,
                        const uint8_t *in, size_t n, ps_buf *out, int enc)
{
	uint8_t ok[16], iv[16], pad, *dst;
	size_t kl, m, full;
	int rc = 0;

	if (s->authenticated == 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the security handler is not authenticated");
	kl = ps_kdf_object_key(legacy_key(s), (size_t)s->sp.length, num, gen, kind == CK_AESV2, ok);
	if (kind == CK_RC4) {                       /* 7.6.3.2: no IV, no padding */
		if (ps_buf_reserve(out, n) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		if (n)
			ps_kdf_rc4(ok, kl, in, out->data + out->len, n);
		out->len += n;
	} else if (enc) {                           /* AESV2: IV || CBC(data || PKCS#7) */
		if (n > SIZE_MAX - 32 || ps_buf_reserve(out, PS_AESV3_LEN(n)) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory encrypting %zu bytes", n);
			goto out;
		}
		dst = out->data + out->len;
		full = n & ~(size_t)15;
		if ((rc = ps_random_iv(ctx, dst)) < 0)
			goto out;
		if (n)
			memmove(dst + 16, in, n);
		memset(dst + 16 + n, (int)(16 - (n - full)), 16 - (n - full));
		memcpy(iv, dst, 16);
		if ((rc = aes128_cbc(ctx, MBEDTLS_AES_ENCRYPT, ok, iv, dst + 16, full + 16)) < 0)
			goto out;
		out->len += PS_AESV3_LEN(n);
	} else if (n == 0 || n == 16) {             /* nothing, or an IV alone: empty */
	} else if (n < 32 || n % 16 != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
		            "AES data of %zu bytes is not an IV plus whole blocks", n);
	} else {
		m = n - 16;
		if (ps_buf_reserve(out, m) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory decrypting %zu bytes", n);
			goto out;
		}
		dst = out->data + out->len;
		memcpy(iv, in, 16);
		memcpy(dst, in + 16, m);
		if ((rc = aes128_cbc(ctx, MBEDTLS_AES_DECRYPT, ok, iv, dst, m)) < 0)
			goto out;
		if (pkcs7_bad(dst, m, &pad)) {
			ps_wipe(dst, m);
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "AES data has invalid padding");
			goto out;
		}
		ps_wipe(dst + m - pad, pad);
		out->len += m - pad;
	}
out:
	ps_wipe(ok, sizeof ok);
	ps_wipe(iv, sizeof iv);
	return rc;
}

static int sec_crypt(ps_ctx *ctx, const ps_sec *s, int kind, uint32_t num, uint16_t gen,
                     const uint8_t *in, size_t n, ps_buf *out, int enc)
{
	if (!s)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_%scrypt: no security handler",
		              enc ? "en" : "de");
	switch (kind) {
	case CK_AESV3: /* one key for every object (7.6.3.1): num and gen unused */
		return enc ? ps_aesv3_encrypt(ctx, &s->c, in, n, out)
		           : ps_aesv3_decrypt(ctx, &s->c, in, n, out);
	case CK_RC4:
	case CK_AESV2:
		return legacy_crypt(ctx, s, kind, num, gen, in, n, out, enc);
	case CK_NONE:
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "ps_sec_%scrypt: the data is not encrypted (Identity)",
		              enc ? "en" : "de");
	default:
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the data names a crypt filter that is not defined or not supported");
	}
}

/* Streams without a /Crypt filter of their own: /StmF, else (a stream that
 * named one while StmF is Identity) /StrF's kind (note 8). */
static int stm_kind(const ps_sec *s)
{
	return s && s->kstm != CK_NONE ? s->kstm : s ? s->kstr : CK_NONE;
}

int ps_sec_decrypt(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen, const uint8_t *in,
                   size_t n, ps_buf *out)
{
	return sec_crypt(ctx, s, stm_kind(s), num, gen, in, n, out, 0);
}

int ps_sec_decrypt_stream(ps_ctx *ctx, const ps_sec *s, const ps_obj *stm, uint32_t num,
                          uint16_t gen, const uint8_t *in, size_t n, ps_buf *out)
{
	int k = s ? stream_kind(s, stm) : CK_NONE;

	return sec_crypt(ctx, s, k == CK_NONE ? stm_kind(s) : k, num, gen, in, n, out, 0);
}

int ps_sec_encrypt(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen, const uint8_t *in,
                   size_t n, ps_buf *out)
{
	return sec_crypt(ctx, s, stm_kind(s), num, gen, in, n, out, 1);
}

size_t ps_sec_encrypted_len(const ps_sec *s, size_t n)
{
	return stm_kind(s) == CK_RC4 ? n : PS_AESV3_LEN(n);
}

static void job_from_aes(ps_sec_job *job, const ps_aes_job *aj)
{
	job->buf = aj->out;
	job->len = aj->len;
	memcpy(job->iv, aj->iv, 16);
}

int ps_sec_encrypt_prepare(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen,
                           const uint8_t *in, size_t n, uint8_t *out, ps_sec_job *job)
{
	ps_aes_job aj;
	int rc;

	(void)num;
	(void)gen;
	if (stm_kind(s) != CK_AESV3)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "ps_sec_encrypt_prepare: batches are for AES-256 handlers");
	if ((rc = aesv3_prepare(ctx, in, n, out, &aj)) < 0)
		return rc;
	job_from_aes(job, &aj);
	return 0;
}

int ps_sec_drop_crypt_filter(ps_ctx *ctx, ps_obj *stm)
{
	ps_obj *d = stm && stm->kind == PS_STREAM ? stm->u.stm.dict : NULL;
	ps_obj *f = ps_dict_get(d, "Filter"), *parms = ps_dict_get(d, "DecodeParms");
	size_t i, n = f && f->kind == PS_ARRAY ? ps_array_len(f) : 1;

	(void)ctx;
	/* 7.4.10 wants /Crypt first, but stream_kind honours it anywhere */
	for (i = 0; i < n; i++) {
		ps_obj *fi = f && f->kind == PS_ARRAY ? ps_array_get(f, i) : f;
		ps_obj *pi = parms && parms->kind == PS_ARRAY ? ps_array_get(parms, i) : parms;
		ps_obj *name = ps_dict_get(pi, "Name");

		if (!ps_obj_is_name(fi, "Crypt"))
			continue;
		if (!name || ps_obj_is_name(name, "Identity"))
			return 0;
		if (f->kind != PS_ARRAY || n <= 1) {
			ps_dict_del(d, "Filter");
			ps_dict_del(d, "DecodeParms");
			return 0;
		}
		ps_array_del(f, i);
		if (parms && parms->kind == PS_ARRAY) {
			if (i < ps_array_len(parms))
				ps_array_del(parms, i);
		} else if (parms) {
			ps_dict_del(d, "DecodeParms"); /* a single dictionary belonged to /Crypt */
		}
		return 0;
	}
	return 0;
}

int ps_sec_reencrypt_in_place(const ps_sec *from, const ps_sec *to, const ps_obj *stm)
{
	int k = from ? stream_kind(from, stm) : CK_NONE;

	return to && stm_kind(to) == CK_AESV3 && (k == CK_AESV3 || k == CK_AESV2) &&
	       k == stm_kind(from);
}

/* The end of an in-place re-encryption: BUF is IV || M bytes of decrypted,
 * padded plaintext; checks the padding (same plaintext length, so the same
 * pad under the new key), draws a new IV into BUF and fills JOB. */
static int reencrypt_finish(ps_ctx *ctx, uint8_t *buf, size_t m, ps_aes_job *job)
{
	uint8_t pad;
	int rc;

	if (pkcs7_bad(buf + 16, m, &pad)) {
		ps_wipe(buf + 16, m);
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "AES data has invalid padding");
	}
	if ((rc = ps_random_iv(ctx, buf)) < 0) {
		ps_wipe(buf + 16, m);
		return rc;
	}
	memcpy(job->iv, buf, 16);
	job->in = job->out = buf + 16;
	job->len = m;
	return 0;
}

/* AESV2 to AESV3 in place (note 8): the same layout, IV || blocks || pad. */
static int aesv2_reencrypt_prepare(ps_ctx *ctx, const ps_sec *from, uint32_t num, uint16_t gen,
                                   uint8_t *buf, size_t n, ps_aes_job *job)
{
	uint8_t ok[16], iv[16];
	size_t m = n - 16;
	int rc;

	if (n < 32 || n % 16 != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "AES data of %zu bytes is not an IV plus whole blocks", n);
	if (from->authenticated == 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the security handler is not authenticated");
	(void)ps_kdf_object_key(legacy_key(from), (size_t)from->sp.length, num, gen, 1, ok);
	memcpy(iv, buf, 16);
	rc = aes128_cbc(ctx, MBEDTLS_AES_DECRYPT, ok, iv, buf + 16, m);
	ps_wipe(ok, sizeof ok);
	ps_wipe(iv, sizeof iv);
	if (rc < 0)
		return rc;
	return reencrypt_finish(ctx, buf, m, job);
}

int ps_sec_reencrypt_prepare(ps_ctx *ctx, const ps_sec *from, const ps_sec *to, uint32_t num,
                             uint16_t gen, uint8_t *buf, size_t n, ps_sec_job *job)
{
	ps_aes_job aj;
	int rc;

	if (!from || !to || stm_kind(to) != CK_AESV3)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "ps_sec_reencrypt_prepare: no AES-256 handler to write");
	if (stm_kind(from) == CK_AESV2)
		rc = aesv2_reencrypt_prepare(ctx, from, num, gen, buf, n, &aj);
	else if (stm_kind(from) == CK_AESV3)
		rc = aesv3_reencrypt_prepare(ctx, &from->c, buf, n, &aj);
	else
		rc = ps_err(ctx, PDFSTAMP_E_USAGE,
		            "ps_sec_reencrypt_prepare: the data cannot be re-encrypted in place");
	if (rc < 0)
		return rc;
	job_from_aes(job, &aj);
	return 0;
}

int ps_sec_run_batch(ps_ctx *ctx, const ps_sec *s, ps_sec_job *jobs, size_t n)
{
	ps_aes_job *aj;
	size_t i;

	if (!s || !s->c.ready)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_run_batch: no cipher");
	if (n == 0)
		return 0;
	if (!(aj = malloc(n * sizeof *aj)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		aj[i].in = aj[i].out = jobs[i].buf;
		aj[i].len = jobs[i].len;
		memcpy(aj[i].iv, jobs[i].iv, 16);
	}
	ps_aes_cbc_encrypt_batch(ps_cipher_eng(&s->c), aj, n);
	for (i = 0; i < n; i++)
		memcpy(jobs[i].iv, aj[i].iv, 16);
	ps_wipe(aj, n * sizeof *aj);
	free(aj);
	return 0;
}

/* ---- the AESV3 layer (7.6.3.1, Table 25; sec_aes.h) --------------------------------- */

int ps_cipher_init(ps_ctx *ctx, ps_cipher *c, const uint8_t key[32])
{
	if (!c || !key)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_cipher_init: bad arguments");
	c->ready = 0;
	c->lent = NULL;
	if (ps_aes_engine_init(&c->eng, key, -1, ps_cpu_bits(ctx)) != 0) {
		ps_cipher_free(c);
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "cannot set the AES key");
	}
	c->ready = 1;
	return 0;
}

int ps_cipher_borrow(ps_ctx *ctx, ps_cipher *c, const ps_cipher *src)
{
	if (!c || !src || !src->ready || c == src)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_cipher_borrow: bad arguments");
	ps_cipher_free(c);
	c->lent = src->lent ? src->lent : src;   /* never a chain of loans */
	c->ready = 1;
	return 0;
}

void ps_cipher_free(ps_cipher *c)
{
	if (!c)
		return;
	if (c->lent)
		c->lent = NULL;              /* the lender wipes its own schedules */
	else if (c->ready)
		ps_aes_engine_free(&c->eng); /* wipes the round keys */
	c->ready = 0;
}

/* PKCS#7 (note 6): the last of the M decrypted bytes at P give the pad
 * length, 1..16, and that many bytes must all equal it.  Checked without a
 * data-dependent branch over the last block.  Returns 0 and *pad when the
 * padding is good. */
static int pkcs7_bad(const uint8_t *p, size_t m, uint8_t *pad)
{
	uint8_t last = p[m - 1], bad = (uint8_t)((last == 0) | (last > 16));
	size_t i;

	for (i = 0; i < 16; i++)
		bad |= (uint8_t)((uint8_t)(i < last) & (p[m - 1 - i] != last));
	*pad = last;
	return bad != 0;
}

int ps_aesv3_decrypt(ps_ctx *ctx, const ps_cipher *c, const uint8_t *in, size_t n, ps_buf *out)
{
	uint8_t iv[16], *dst, pad;
	size_t m;

	if (!c || !c->ready || !out || (!in && n))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_aesv3_decrypt: bad arguments");
	if (n == 0)
		return 0;
	if (n < 32 || n % 16 != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "AES data of %zu bytes is not an IV plus whole blocks", n);
	m = n - 16;
	if (ps_buf_reserve(out, m) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory decrypting %zu bytes", n);
	dst = out->data + out->len;
	memcpy(iv, in, 16);
	ps_aes_cbc_decrypt(ps_cipher_eng(c), iv, in + 16, dst, m); /* pipelined (aesmb.c) */
	ps_wipe(iv, sizeof iv);
	if (pkcs7_bad(dst, m, &pad)) {
		ps_wipe(dst, m);
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "AES data has invalid padding");
	}
	ps_wipe(dst + m - pad, pad);
	out->len += m - pad;
	return 0;
}

/* Lays out IN as AESV3 *plaintext* in OUT (IV from the pool, data, PKCS#7
 * pad: PS_AESV3_LEN(n) bytes at OUT) and fills JOB so that encrypting it in
 * place (ps_aes_cbc_encrypt_batch) completes the ciphertext.  For batching
 * many objects through the multi-lane engine. */
static int aesv3_prepare(ps_ctx *ctx, const uint8_t *in, size_t n, uint8_t *out, ps_aes_job *job)
{
	size_t full = n & ~(size_t)15, rem = n - full;
	int rc;

	if ((rc = ps_random_iv(ctx, out)) < 0)
		return rc;
	if (full && out + 16 != in)
		memmove(out + 16, in, full);
	if (rem)
		memmove(out + 16 + full, in + full, rem);
	memset(out + 16 + full + rem, (int)(16 - rem), 16 - rem); /* PKCS#7 */
	memcpy(job->iv, out, 16);
	job->in = job->out = out + 16;
	job->len = full + 16;
	return 0;
}

int ps_aesv3_encrypt(ps_ctx *ctx, const ps_cipher *c, const uint8_t *in, size_t n, ps_buf *out)
{
	ps_aes_job job;
	size_t total;
	uint8_t *dst;
	int rc;

	if (!c || !c->ready || !out || (!in && n))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_aesv3_encrypt: bad arguments");
	if (n > SIZE_MAX - 32)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "object too large to encrypt");
	total = PS_AESV3_LEN(n);
	if (ps_buf_reserve(out, total) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory encrypting %zu bytes", n);
	dst = out->data + out->len;
	if ((rc = aesv3_prepare(ctx, in, n, dst, &job)) < 0)
		return rc;
	ps_aes_cbc_encrypt_batch(ps_cipher_eng(c), &job, 1);
	ps_wipe(job.iv, sizeof job.iv);
	out->len += total;
	return 0;
}

/* Re-encryption without copies: BUF holds N bytes of AESV3 data under OLD;
 * decrypts it in place (padding checked), writes a fresh IV and fills JOB
 * so that encrypting it in place under the new key completes it.  The
 * plaintext exists only in BUF, between this call and the encryption. */
static int aesv3_reencrypt_prepare(ps_ctx *ctx, const ps_cipher *old, uint8_t *buf, size_t n,
                                   ps_aes_job *job)
{
	uint8_t iv[16];
	size_t m;

	if (!old || !old->ready)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "aesv3_reencrypt_prepare: bad arguments");
	if (n < 32 || n % 16 != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "AES data of %zu bytes is not an IV plus whole blocks", n);
	m = n - 16;
	memcpy(iv, buf, 16);
	ps_aes_cbc_decrypt(ps_cipher_eng(old), iv, buf + 16, buf + 16, m); /* in place */
	ps_wipe(iv, sizeof iv);
	return reencrypt_finish(ctx, buf, m, job);
}
