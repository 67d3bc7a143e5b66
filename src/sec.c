/*
 * sec.c - the security handler: /Encrypt read and written, authentication,
 * the rules for which bytes are encrypted, the one string walker, stream
 * data, and the only door to the AES engine (aesmb.c).
 *
 * DESIGN NOTES
 *
 * References are to ISO 32000-2:2020.
 *
 *  1. What it owns.  A ps_sec is built from an already-resolved /Encrypt
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
 *     (ps_sec_run_batch): 8 or 16 independent CBC chains in parallel.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "sec_aes.h"

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
};

const char *pdfstamp_aes_engine(void)
{
	return ps_aes_engine_name(ps_aes_engine_best());
}

/* ---- reading /Encrypt (7.6.4, Table 20, Table 21, Table 27) -------------------- */

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
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary has no /%s string", key);
	/* ISO 32000-2 Table 27: fixed sizes.  A short value cannot hold its
	 * hash and salts, so the file is malformed; longer ones are read by
	 * their leading bytes, as qpdf does. */
	if (s->u.str.len < n)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the /Encrypt dictionary's /%s is %zu bytes; it must be %zu",
		              key, s->u.str.len, n);
	if (s->u.str.len > n)
		ps_warn(ctx, "/Encrypt /%s is %zu bytes; using its first %zu", key, s->u.str.len, n);
	memcpy(dst, s->u.str.p, n);
	return 0;
}

static int parse(ps_ctx *ctx, ps_sec *s, const ps_obj *enc)
{
	ps_obj *cf, *stdcf, *strf, *stmf, *em, *names[2];
	int64_t v = 0, r = 0, p = 0;
	int k, rc;

	if (!enc || enc->kind != PS_DICT)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "the trailer's /Encrypt is not a dictionary");
	if (ps_dict_get(enc, "KDFSalt"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "the file is protected by a PDF-MAC (ISO/TS 32004), which pdfstamp does not support");
	if (!name_is(ps_dict_get(enc, "Filter"), "Standard"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "security handler is not /Standard (public-key or custom handlers are not supported)");
	if (ps_dict_get(enc, "SubFilter"))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "the /Encrypt dictionary has a /SubFilter");
	ps_obj_int(ps_dict_get(enc, "V"), &v);
	ps_obj_int(ps_dict_get(enc, "R"), &r);
	if (v != 5 || (r != 5 && r != 6))
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
		              "encryption /V %lld /R %lld is not supported (only AES-256: /V 5 with /R 5 or /R 6)",
		              (long long)v, (long long)r);
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
	em = ps_dict_get(enc, "EncryptMetadata");
	s->sp.encrypt_metadata = !(em && em->kind == PS_BOOL && !em->u.b);
	cf = ps_dict_get(enc, "CF");
	names[0] = strf = ps_dict_get(enc, "StrF");
	names[1] = stmf = ps_dict_get(enc, "StmF");
	s->strf_identity = !strf || name_is(strf, "Identity");
	s->stmf_identity = !stmf || name_is(stmf, "Identity");
	/* Every crypt filter named by StrF/StmF must exist with /CFM /AESV3. */
	for (k = 0; k < 2; k++) {
		if (!names[k] || name_is(names[k], "Identity"))
			continue;
		if (names[k]->kind != PS_NAME)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "/StrF or /StmF is not a name");
		stdcf = ps_dict_get(cf, names[k]->u.name.p);
		if (!stdcf || stdcf->kind != PS_DICT)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "crypt filter /%s is not defined in /CF",
			              names[k]->u.name.p);
		if (!name_is(ps_dict_get(stdcf, "CFM"), "AESV3"))
			return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			              "crypt filter /%s does not use /AESV3", names[k]->u.name.p);
	}
	if ((rc = copy_sec_string(ctx, enc, "O", s->sp.o, 48)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "U", s->sp.u, 48)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "OE", s->sp.oe, 32)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "UE", s->sp.ue, 32)) < 0 ||
	    (rc = copy_sec_string(ctx, enc, "Perms", s->sp.perms, 16)) < 0)
		return rc;
	/* what `info` reports: the names, and the method of the stream filter */
	copy_name(s->strf, sizeof s->strf, strf);
	copy_name(s->stmf, sizeof s->stmf, stmf);
	copy_name(s->cfm, sizeof s->cfm, ps_dict_get(ps_dict_get(cf, s->stmf[0] ? s->stmf : "StdCF"), "CFM"));
	return 0;
}

int ps_sec_new(ps_ctx *ctx, const ps_obj *encdict, uint32_t enc_num, ps_sec **out)
{
	ps_sec *s;
	int rc;

	*out = NULL;
	if (!(s = calloc(1, sizeof *s)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	s->enc_num = enc_num;
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
	ps_wipe(s, sizeof *s);
	free(s);
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
	if ((rc = ps_random_os(ctx, key, sizeof key)) < 0 || /* file key: the OS, never the DRBG */
	    (rc = ps_kdf_make(ctx, &s->sp, user_pw ? user_pw : "", ulen, owner_pw ? owner_pw : "", olen, key)) < 0 ||
	    (rc = ps_cipher_init(ctx, &s->c, key)) < 0) {
		ps_wipe(key, sizeof key);
		ps_sec_free(s);
		return rc;
	}
	ps_wipe(key, sizeof key);
	s->authenticated = 2;
	s->perms_ok = 1;
	snprintf(s->strf, sizeof s->strf, "StdCF");
	snprintf(s->stmf, sizeof s->stmf, "StdCF");
	snprintf(s->cfm, sizeof s->cfm, "AESV3");
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
	if ((rc = ps_cipher_borrow(ctx, &s->c, &src->c)) < 0) {
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
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the security handler's key is lent; it cannot change");
	/* Objects read before (only /Encrypt) stay valid: never encrypted. */
	ps_cipher_free(&s->c);
	if ((rc = ps_cipher_init(ctx, &s->c, key)) < 0)
		return rc;
	s->authenticated = as;
	s->perms_ok = perms_ok;
	return 0;
}

/* Permissions: /P is not authenticated, /Perms is (it is encrypted under
 * the file key, Algorithm 10), so *perms is
 *  - /P when /Perms agrees with it;
 *  - with FORCE the P that /Perms records when it is a well-formed block
 *    that disagrees (else refused);
 *  - with FORCE no optional permission (PS_P_NONE) when /Perms is no
 *    permissions block at all (else refused): nothing trustworthy grants any. */
int ps_sec_auth(ps_ctx *ctx, ps_sec *s, const char *pw, size_t len, unsigned flags, int64_t *perms, int *as)
{
	uint8_t key[32];
	int64_t genuine = 0, eff;
	int is_owner = 0, perms_ok = 0, pstate = PS_PERMS_GARBLED, rc;

	if (s->loans > 0)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the security handler's key is lent; it cannot change");
	rc = ps_kdf_authenticate(ctx, &s->sp, pw, len, key, &is_owner, &perms_ok);
	if (rc < 0)
		goto out;
	/* Algorithm 13 (7.6.4.4.12): what /Perms itself says */
	if ((rc = ps_kdf_read_perms(ctx, &s->sp, key, &genuine, &pstate)) < 0)
		goto out;
	eff = s->sp.p;
	if (pstate != PS_PERMS_OK) {
		if (!(flags & PDFSTAMP_AUTH_FORCE)) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT,
			            "/Perms does not match /P and /EncryptMetadata (Algorithm 13); the "
			            "encryption dictionary may have been tampered with (--force overrides)");
			goto out;
		}
		/* /EncryptMetadata is covered by /Perms too: with it in doubt,
		 * take the reading that encrypts new metadata. */
		s->sp.encrypt_metadata = 1;
		if (pstate == PS_PERMS_MISMATCH) {
			eff = genuine;
			if (genuine != s->sp.p)
				ps_warn(ctx, "/Perms does not match /P (Algorithm 13); continuing (forced) with the "
				        "permissions /Perms records (P=%lld), not /P (%lld)",
				        (long long)genuine, (long long)s->sp.p);
			else
				ps_warn(ctx, "/Perms does not match /EncryptMetadata (Algorithm 13); continuing (forced)");
		} else {
			eff = PS_P_NONE;
			ps_warn(ctx, "/Perms is not a permissions block (Algorithm 13); continuing (forced) "
			        "with no optional permissions, since /P cannot be trusted");
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

void ps_sec_describe(const ps_sec *s, struct pdfstamp_info *info)
{
	snprintf(info->filter, sizeof info->filter, "Standard");
	info->v = s->sp.v;
	info->r = s->sp.r;
	info->key_bits = 256;
	snprintf(info->strf, sizeof info->strf, "%s", s->strf);
	snprintf(info->stmf, sizeof info->stmf, "%s", s->stmf);
	snprintf(info->cfm, sizeof info->cfm, "%s", s->cfm);
	info->encrypt_metadata = s->sp.encrypt_metadata;
	info->perms_valid = s->perms_ok;
}

/* ---- writing /Encrypt (7.6.4, Table 20, Table 21, Table 27) ----------------------- */

int ps_sec_write_dict(ps_ctx *ctx, const ps_sec *s, ps_obj **out)
{
	static const char *const keys[5] = {"O", "U", "OE", "UE", "Perms"};
	const uint8_t *vals[5] = {s->sp.o, s->sp.u, s->sp.oe, s->sp.ue, s->sp.perms};
	static const size_t lens[5] = {48, 48, 32, 32, 16};
	ps_obj *d = ps_new_dict(), *cf = ps_new_dict(), *std = ps_new_dict();
	int rc, k;

	*out = NULL;
	if (s->sp.v != 5 || s->sp.r != 6) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "only an AES-256 R6 handler writes /Encrypt");
		goto fail;
	}
	/* one crypt filter, StdCF, for strings and streams (7.6.5, Table 25) */
	if (!d || !cf || !std || ps_dict_put_name(d, "Filter", "Standard") < 0 || ps_dict_put_int(d, "V", 5) < 0 ||
	    ps_dict_put_int(d, "R", 6) < 0 || ps_dict_put_int(d, "Length", 256) < 0 ||
	    ps_dict_put_name(std, "AuthEvent", "DocOpen") < 0 || ps_dict_put_name(std, "CFM", "AESV3") < 0 ||
	    ps_dict_put_int(std, "Length", 32) < 0)
		goto oom;
	rc = ps_dict_put(cf, "StdCF", std);
	std = NULL;
	if (rc < 0)
		goto oom;
	rc = ps_dict_put(d, "CF", cf);
	cf = NULL;
	if (rc < 0 || ps_dict_put_name(d, "StmF", "StdCF") < 0 || ps_dict_put_name(d, "StrF", "StdCF") < 0 ||
	    ps_dict_put_int(d, "P", s->sp.p) < 0)
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

/* Does this stream carry its own /Crypt filter, and is it Identity? */
static int crypt_filter_identity(const ps_obj *stm, int *has_crypt)
{
	ps_obj *f = ps_dict_get(stm, "Filter"), *parms = ps_dict_get(stm, "DecodeParms");
	size_t i, n = f && f->kind == PS_ARRAY ? ps_array_len(f) : 1;

	*has_crypt = 0;
	for (i = 0; i < n; i++) {
		ps_obj *fi = f && f->kind == PS_ARRAY ? ps_array_get(f, i) : f;
		ps_obj *pi = parms && parms->kind == PS_ARRAY ? ps_array_get(parms, i) : parms;
		if (ps_obj_is_name(fi, "Crypt")) {
			ps_obj *name = ps_dict_get(pi, "Name");
			*has_crypt = 1;
			return !name || ps_obj_is_name(name, "Identity");
		}
	}
	return 0;
}

int ps_sec_stream_encrypted(const ps_sec *s, const ps_obj *stm)
{
	int has_crypt, identity;

	if (!s)
		return 0;
	identity = crypt_filter_identity(stm, &has_crypt);
	if (identity || (s->stmf_identity && !has_crypt))
		return 0;
	if (ps_obj_is_name(ps_dict_get(stm, "Type"), "Metadata") && !s->sp.encrypt_metadata)
		return 0; /* Table 27 EncryptMetadata */
	return 1;
}

int ps_sec_strings_encrypted(const ps_sec *s, uint32_t num)
{
	return s && !s->strf_identity && (s->enc_num == 0 || num != s->enc_num);
}

int ps_is_signature_dict(const ps_obj *d)
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

	if (parent && key && strcmp(key, "Contents") == 0 && ps_is_signature_dict(parent))
		return 0;
	u->a.len = u->b.len = 0;
	if (u->from) {
		if ((rc = ps_sec_decrypt(u->ctx, u->from, u->num, u->gen, p, n, &u->a)) < 0)
			return u->to ? rc : ps_err_wrap(u->ctx, rc, "cannot decrypt a string in object %u", u->num);
		p = u->a.data;
		n = u->a.len;
	}
	if (u->to) {
		if ((rc = ps_sec_encrypt(u->ctx, u->to, u->num, u->gen, p, n, &u->b)) < 0)
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

int ps_sec_convert_strings(ps_ctx *ctx, const ps_sec *from, const ps_sec *to, uint32_t num, uint16_t gen,
                           ps_obj *o, int64_t *count)
{
	struct conv u = {ctx, NULL, NULL, num, gen, PS_BUF_INIT, PS_BUF_INIT, 0};
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

int ps_sec_decrypt(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen, const uint8_t *in, size_t n,
                   ps_buf *out)
{
	(void)num; /* AESV3: one key for every object (7.6.3.1) */
	(void)gen;
	if (!s)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_decrypt: no security handler");
	return ps_aesv3_decrypt(ctx, &s->c, in, n, out);
}

int ps_sec_encrypt(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen, const uint8_t *in, size_t n,
                   ps_buf *out)
{
	(void)num;
	(void)gen;
	if (!s)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_encrypt: no security handler");
	return ps_aesv3_encrypt(ctx, &s->c, in, n, out);
}

size_t ps_sec_encrypted_len(const ps_sec *s, size_t n)
{
	(void)s;
	return PS_AESV3_LEN(n);
}

static void job_from_aes(ps_sec_job *job, const ps_aes_job *aj)
{
	job->buf = aj->out;
	job->len = aj->len;
	memcpy(job->iv, aj->iv, 16);
}

int ps_sec_encrypt_prepare(ps_ctx *ctx, const ps_sec *s, uint32_t num, uint16_t gen, const uint8_t *in,
                           size_t n, uint8_t *out, ps_sec_job *job)
{
	ps_aes_job aj;
	int rc;

	(void)s;
	(void)num;
	(void)gen;
	if ((rc = ps_aesv3_prepare(ctx, in, n, out, &aj)) < 0)
		return rc;
	job_from_aes(job, &aj);
	return 0;
}

int ps_sec_reencrypt_prepare(ps_ctx *ctx, const ps_sec *from, const ps_sec *to, uint32_t num, uint16_t gen,
                             uint8_t *buf, size_t n, ps_sec_job *job)
{
	ps_aes_job aj;
	int rc;

	(void)to;
	(void)num;
	(void)gen;
	if (!from)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_sec_reencrypt_prepare: no security handler");
	if ((rc = ps_aesv3_reencrypt_prepare(ctx, &from->c, buf, n, &aj)) < 0)
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
	if (ps_aes_engine_init(&c->eng, key, -1) != 0) {
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

int ps_aesv3_prepare(ps_ctx *ctx, const uint8_t *in, size_t n, uint8_t *out, ps_aes_job *job)
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
	if ((rc = ps_aesv3_prepare(ctx, in, n, dst, &job)) < 0)
		return rc;
	ps_aes_cbc_encrypt_batch(ps_cipher_eng(c), &job, 1);
	ps_wipe(job.iv, sizeof job.iv);
	out->len += total;
	return 0;
}

int ps_aesv3_reencrypt_prepare(ps_ctx *ctx, const ps_cipher *old, uint8_t *buf, size_t n, ps_aes_job *job)
{
	uint8_t iv[16], pad;
	size_t m;
	int rc;

	if (!old || !old->ready)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "ps_aesv3_reencrypt_prepare: bad arguments");
	if (n < 32 || n % 16 != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "AES data of %zu bytes is not an IV plus whole blocks", n);
	m = n - 16;
	memcpy(iv, buf, 16);
	ps_aes_cbc_decrypt(ps_cipher_eng(old), iv, buf + 16, buf + 16, m); /* in place */
	ps_wipe(iv, sizeof iv);
	if (pkcs7_bad(buf + 16, m, &pad)) {
		ps_wipe(buf + 16, m);
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "AES data has invalid padding");
	}
	/* Same plaintext length, so the same pad: only the IV is new. */
	if ((rc = ps_random_iv(ctx, buf)) < 0) {
		ps_wipe(buf + 16, m);
		return rc;
	}
	memcpy(job->iv, buf, 16);
	job->in = job->out = buf + 16;
	job->len = m;
	return 0;
}
