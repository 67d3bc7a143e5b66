/* SPDX-License-Identifier: Apache-2.0 */
/*
 * revoc.c - revocation data for a signature's certificates, fetched from
 * the places the certificates name (`pdfstamp dss --fetch`): the missing
 * issuers from Authority Information Access caIssuers, an OCSP response
 * from AIA ocsp, else a CRL from the CRL Distribution Points.  What it
 * returns goes into /DSS through dss.c (ISO 32000-2 12.8.4.3; ETSI EN
 * 319 142-1 5.4.2), which checks every item again as it checks the inputs
 * of `dss --cert/--ocsp/--crl`.
 *
 * DESIGN NOTES
 *
 * Place: [content], above http.c, netcache.c, ocsp.c and x509sig.c, below
 * dss.c.  It uses mbedTLS (X.509, ASN.1); nothing of it reaches ps.h.
 * Trust is not judged here: a root is whatever self-issued certificate
 * ends a chain, and the validator decides whether it trusts it.  What is
 * checked is that each piece of data is what was asked for, from whom it
 * should come.
 *
 *  1. Certificates.  The CMS SignedData of /Contents (RFC 5652 5.1, as
 *     sigcms.c parses it: BER from NSS included, the zero padding after it
 *     ignored): every certificate of its [0] certificates set, at most
 *     MAX_CERTS per session.  Each
 *     certificate whose issuer (by Name, byte for byte) is missing and
 *     that is not self-issued gets it from its AIA caIssuers http(s) URLs
 *     (RFC 5280 4.2.2.1; a DER certificate, or PEM), accepted only when
 *     its subject is that issuer Name and its key verifies the
 *     certificate's signature (x509sig.c); repeated for the new certificate (at most
 *     MAX_DEPTH steps).  New certificates are items of the result.
 *  2. Which certificates get revocation data: every one whose issuer is
 *     known and that is not self-issued, once per session (by its DER).
 *     A certificate without an OCSP or CRL URL gets nothing (a warning).
 *  3. OCSP (RFC 6960): the request and the checks of its reply are
 *     ocsp.c's (its notes 1-3); here, for each AIA ocsp http(s) URL in
 *     order until one is accepted, the request (a 16-byte random nonce,
 *     none when a cache is used: a cached reply could not echo it) is
 *     POSTed as application/ocsp-request, and the reply must be HTTP 200
 *     and pass ocsp.c's checks.  certStatus good is accepted; revoked is
 *     PDFSTAMP_E_FORMAT naming the certificate and the revocation time
 *     (never hidden, never written); anything refused is a failure of
 *     this source.
 * 3a. The delegated responder (RFC 6960 4.2.2.2).  When a certificate of
 *     the reply's certs signed it, that certificate is validation data
 *     too (a PAdES validator needs it to check the reply): it joins the
 *     session's pool and the items (so /DSS /Certs, and through dss.c
 *     note 5d the signature's /VRI /Cert).  Its own revocation status is
 *     then handled as any certificate's (note 2), unless it carries
 *     id-pkix-ocsp-nocheck (1.3.6.1.5.5.7.48.1.5, 4.2.2.2.1): the CA says
 *     a client can trust it for its lifetime, so no data is fetched for
 *     it.  Without nocheck, a reply about the responder signed by that
 *     same responder proves nothing and ocsp.c refuses it (its note 3; a
 *     failure of that source, as any refused reply): its CRL is taken
 *     instead, or the command fails saying why.  Each certificate is handled once per
 *     session, so chains of responders end.
 * 3b. Signatures (OCSP replies, CRLs, certificates) are checked by
 *     x509sig.c (its notes: RSASSA-PSS with SHA-256/384/512 and MGF1 over
 *     the same hash, a mismatch refused saying so).
 *  4. CRL (RFC 5280 5).  GET of each http(s) fullName URI of the CRL
 *     Distribution Points, in order, until one is accepted: HTTP 200, a
 *     DER CRL (or PEM) whose issuer Name is the certificate's issuer and
 *     whose signature verifies with the issuer's key.  A CRL listing the
 *     certificate's serial is PDFSTAMP_E_FORMAT (revoked), as in note 3.
 *  5. Order and failures.  OCSP first when there is a URL; any failure of
 *     it (network, HTTP status, a reply that is not what was asked) is a
 *     warning, and the CRL is tried; if that fails too (or there is none),
 *     the command fails with the last message, before anything is
 *     written.  A revocation is never a failure of a source: it ends the
 *     command at once.
 *  6. Bounds.  Replies at most MAX_REPLY bytes (http.c enforces it), the
 *     timeout of the options (default 10 s) per request, at most
 *     MAX_REQUESTS requests per session (a hostile CMS may carry 256
 *     certificates, each naming 8 URLs of each kind: past the cap the
 *     session fails, whatever source asked, so the time a file can cost
 *     is bounded by MAX_REQUESTS timeouts), and --offline
 *     (or the cache alone): no socket, a miss is a failure of that source.
 *     Every reply goes through the same checks whether it came from the
 *     network or from the cache (netcache.c), and only accepted replies
 *     are put in the cache; a cached reply that fails them (out of date by
 *     now, damaged) is asked for again (not with offline, where it is a
 *     failure of its source).  OCSP responses whose nextUpdate has passed
 *     and CRLs past their nextUpdate are refused.
 *  7. What was fetched is told to the caller's callback (URL, HTTP status,
 *     bytes, from the cache or not) as it happens, failures included: a
 *     request that failed at once (network, HTTP status, offline) with
 *     its message, a reply that came once it is checked, with "refused:"
 *     and the reason when the checks (notes 1, 3, 4) refused it,
 *     or when it says revoked.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/asn1.h>
#include <mbedtls/base64.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crl.h>
#include <mbedtls/x509_crt.h>

#include "ps.h"
#include "der.h"
#include "http.h"
#include "netcache.h"
#include "ocsp.h"
#include "revoc.h"
#include "sigcms.h"
#include "x509sig.h"

#define MAX_CERTS 256                 /* certificates in one session (note 1) */
#define MAX_DEPTH 8                   /* caIssuers steps for one chain */
#define MAX_URLS 8                    /* URLs of one kind read from a certificate */
#define MAX_REPLY ((size_t)16 << 20)  /* bytes of one reply (note 6) */
#define MAX_REQUESTS 128              /* requests sent in one session (note 6) */
#define DEFAULT_TIMEOUT_MS 10000L

#define OID_AIA "\x2B\x06\x01\x05\x05\x07\x01\x01"         /* 1.3.6.1.5.5.7.1.1 */
#define OID_AD_OCSP "\x2B\x06\x01\x05\x05\x07\x30\x01"     /* 1.3.6.1.5.5.7.48.1 */
#define OID_AD_CAISSUERS "\x2B\x06\x01\x05\x05\x07\x30\x02" /* 1.3.6.1.5.5.7.48.2 */
#define OID_CRLDP "\x55\x1D\x1F"                           /* 2.5.29.31 */
#define OID_OCSP_NOCHECK "\x2B\x06\x01\x05\x05\x07\x30\x01\x05" /* 1.3.6.1.5.5.7.48.1.5 */

struct cert {
	mbedtls_x509_crt c;
	int done;                     /* revocation data handled (note 2) */
};

struct ps_revoc {
	ps_ctx *ctx;
	long timeout_ms;
	const char *cache;
	int offline;
	pdfstamp_fetch_fn cb;
	void *ud;
	struct cert **certs;          /* the session's pool (note 1) */
	size_t ncerts;
	int lock;                     /* the cache entry asked about (netcache.c note 4), or -1 */
	int fresh;                    /* the next get asks the network even with a cache (note 6) */
	int requests;                 /* sent so far (note 6: at most MAX_REQUESTS) */
	int capped;                   /* MAX_REQUESTS reached: the session stops */
	struct ps_revoc_item *items;  /* this call's output */
	size_t nitems;
	struct {                      /* the reply got but not yet told (note 7) */
		long status;
		size_t bytes;
		int cached;
	} got;
};

/* ---- small helpers ------------------------------------------------------------ */

static int oid_is(const uint8_t *p, size_t len, const char *oid, size_t olen)
{
	return len == olen && memcmp(p, oid, olen) == 0;
}

static int same(const mbedtls_x509_buf *a, const mbedtls_x509_buf *b)
{
	return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static int self_issued(const mbedtls_x509_crt *c)
{
	return same(&c->issuer_raw, &c->subject_raw);
}

/* A short name of C for messages: its subject CN (or the whole subject). */
static void cert_name(const mbedtls_x509_crt *c, char *buf, size_t n)
{
	if (mbedtls_x509_dn_gets(buf, n, &c->subject) < 0)
		snprintf(buf, n, "(a certificate)");
}

static int push_item(ps_revoc *r, int kind, const uint8_t *der, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy || ps_vec_grow((void **)&r->items, r->nitems, sizeof *r->items) < 0) {
		free(copy);
		return ps_err(r->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	memcpy(copy, der, len);
	r->items[r->nitems].kind = kind;
	r->items[r->nitems].der = copy;
	r->items[r->nitems].len = len;
	r->nitems++;
	return 0;
}

/* The certificate of the pool with DER bytes DER, or NULL. */
static struct cert *pool_find(ps_revoc *r, const uint8_t *der, size_t len)
{
	size_t i;

	for (i = 0; i < r->ncerts; i++)
		if (r->certs[i]->c.raw.len == len && memcmp(r->certs[i]->c.raw.p, der, len) == 0)
			return r->certs[i];
	return NULL;
}

/* Adds the DER certificate to the pool (once).  0, 1 if it is new, or
 * FORMAT if it does not parse (WHAT names it). */
static int pool_add(ps_revoc *r, const uint8_t *der, size_t len, const char *what,
                    struct cert **out)
{
	struct cert *c;
	int rc;

	if ((c = pool_find(r, der, len)) != NULL) {
		if (out)
			*out = c;
		return 0;
	}
	if (r->ncerts >= MAX_CERTS)
		return ps_err(r->ctx, PDFSTAMP_E_UNSUPPORTED, "more than %d certificates",
		              MAX_CERTS);
	if (!(c = calloc(1, sizeof *c)) ||
	    ps_vec_grow((void **)&r->certs, r->ncerts, sizeof *r->certs) < 0) {
		free(c);
		return ps_err(r->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	mbedtls_x509_crt_init(&c->c);
	if ((rc = mbedtls_x509_crt_parse_der(&c->c, der, len)) != 0 || c->c.raw.len != len) {
		mbedtls_x509_crt_free(&c->c);
		free(c);
		return ps_err(r->ctx, PDFSTAMP_E_FORMAT, "%s is not an X.509 certificate", what);
	}
	r->certs[r->ncerts++] = c;
	if (out)
		*out = c;
	return 1;
}

/* The pool's certificate whose subject is C's issuer and that signed C. */
static struct cert *pool_issuer(ps_revoc *r, const mbedtls_x509_crt *c)
{
	size_t i;

	for (i = 0; i < r->ncerts; i++)
		if (&r->certs[i]->c != c && ps_x509sig_signed_by(c, &r->certs[i]->c))
			return r->certs[i];
	return NULL;
}

/* ---- extensions (notes 1-4) ------------------------------------------------------ */

/* The value (OCTET STRING content) of C's extension OID, or -1. */
static int ext_value(const mbedtls_x509_crt *c, const char *oid, size_t olen, const uint8_t **v,
                     size_t *vlen)
{
	return ps_der_cert_ext(&c->v3_ext, oid, olen, v, vlen, NULL);
}

/* Copies an http(s) URI of LEN bytes at P into URLS[*N] (bounded). */
static void add_url(const uint8_t *p, size_t len, char urls[][512], int *n)
{
	if (*n >= MAX_URLS || len >= 512 || len < 8)
		return;
	if (strncmp((const char *)p, "http://", 7) != 0 && strncmp((const char *)p, "https://", 8))
		return;
	if (memchr(p, 0, len))
		return;
	memcpy(urls[*n], p, len);
	urls[*n][len] = 0;
	(*n)++;
}

/* The AIA URLs of METHOD (OID_AD_OCSP or OID_AD_CAISSUERS) of C. */
static int aia_urls(const mbedtls_x509_crt *c, const char *method, char urls[][512])
{
	const uint8_t *p, *end;
	size_t len;
	int n = 0;

	if (ext_value(c, OID_AIA, sizeof OID_AIA - 1, &p, &len) != 0)
		return 0;
	end = p + len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return 0;
	end = p + len;
	while (p < end) {
		const uint8_t *aend;
		size_t olen;
		int m;
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			return n;
		aend = p + len;
		if (ps_der_tag(&p, aend, MBEDTLS_ASN1_OID, &olen) != 0)
			return n;
		m = oid_is(p, olen, method, strlen(method));
		p += olen;
		if (m && ps_der_tag(&p, aend, MBEDTLS_ASN1_CONTEXT_SPECIFIC | 6, &len) == 0)
			add_url(p, len, urls, &n);
		p = aend;
	}
	return n;
}

/* The fullName URIs of C's CRL Distribution Points. */
static int crldp_urls(const mbedtls_x509_crt *c, char urls[][512])
{
	const uint8_t *p, *end;
	size_t len;
	int n = 0;

	if (ext_value(c, OID_CRLDP, sizeof OID_CRLDP - 1, &p, &len) != 0)
		return 0;
	end = p + len;
	if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
		return 0;
	end = p + len;
	while (p < end) {
		const uint8_t *dend, *q, *fend;
		if (ps_der_tag(&p, end, PS_DER_SEQ, &len) != 0)
			return n;
		dend = p + len;
		q = p;
		p = dend;
		/* distributionPoint [0] { fullName [0] GeneralNames } */
		if (ps_der_tag(&q, dend, PS_DER_CTX_C(0), &len) != 0 ||
		    ps_der_tag(&q, dend, PS_DER_CTX_C(0), &len) != 0)
			continue;
		fend = q + len;
		while (q < fend) {
			int tag = *q;
			const uint8_t *v = q;
			if (tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 6) &&
			    ps_der_tag(&v, fend, tag, &len) == 0)
				add_url(v, len, urls, &n);
			if (ps_der_skip(&q, fend, &tag) != 0)
				break;
		}
	}
	return n;
}

/* ---- fetching (notes 6, 7) ------------------------------------------------------- */

static void tell(ps_revoc *r, const char *url, const char *what, long status, size_t bytes,
                 int cached, const char *error)
{
	struct pdfstamp_fetch_event ev;

	if (!r->cb)
		return;
	memset(&ev, 0, sizeof ev);
	ev.url = url;
	ev.what = what;
	ev.status = status;
	ev.bytes = bytes;
	ev.from_cache = cached;
	ev.error = error;
	r->cb(r->ud, &ev);
}

/* GET (BODY NULL) or POST URL; *CACHED says whether OUT came from the cache.
 * 0 (the reply to be told by settle once checked), or an error with the
 * message set (and told). */
static int get(ps_revoc *r, const char *url, const char *what, const char *ctype,
               const uint8_t *body, size_t blen, ps_buf *out, int *cached)
{
	struct ps_http_req q;
	struct ps_http_resp resp;
	int rc, hit = 0;

	*cached = 0;
	ps_buf_reset(out);
	ps_netcache_unlock(&r->lock); /* the previous question's */
	if (r->cache && (rc = ps_netcache_lock(r->ctx, r->cache, url, body, blen, &r->lock)) < 0)
		return rc;
	if (r->cache && !r->fresh) {
		if ((rc = ps_netcache_get(r->ctx, r->cache, url, body, blen, MAX_REPLY, out,
		                          &hit)) < 0)
			return rc;
		if (hit) {
			*cached = 1;
			r->got.status = 0;
			r->got.bytes = out->len;
			r->got.cached = 1;
			return 0;
		}
	}
	if (r->offline) {
		rc = ps_err(r->ctx, PDFSTAMP_E_IO, "%s: not in the cache, and offline", url);
		tell(r, url, what, 0, 0, 0, pdfstamp_ctx_errmsg(r->ctx));
		return rc;
	}
	if (r->requests >= MAX_REQUESTS) {
		r->capped = 1;
		rc = ps_err(r->ctx, PDFSTAMP_E_FORMAT, "more than %d requests for one file's "
		            "validation data (its signatures name that many certificates and "
		            "URLs); stopped", MAX_REQUESTS);
		tell(r, url, what, 0, 0, 0, pdfstamp_ctx_errmsg(r->ctx));
		return rc;
	}
	r->requests++;
	memset(&q, 0, sizeof q);
	q.url = url;
	q.content_type = body ? ctype : NULL;
	q.body = body;
	q.body_len = blen;
	q.timeout_ms = r->timeout_ms;
	q.max_bytes = MAX_REPLY;
	if ((rc = ps_http_fetch(r->ctx, &q, &resp)) < 0) {
		tell(r, url, what, 0, 0, 0, pdfstamp_ctx_errmsg(r->ctx));
		return rc;
	}
	if (resp.status != 200) {
		rc = ps_err(r->ctx, PDFSTAMP_E_IO, "%s: HTTP status %ld", url, resp.status);
		tell(r, url, what, resp.status, resp.body.len, 0, pdfstamp_ctx_errmsg(r->ctx));
		ps_http_resp_free(&resp);
		return rc;
	}
	if (resp.body.len == 0) {
		rc = ps_err(r->ctx, PDFSTAMP_E_FORMAT, "%s: an empty reply", url);
		tell(r, url, what, resp.status, 0, 0, pdfstamp_ctx_errmsg(r->ctx));
		ps_http_resp_free(&resp);
		return rc;
	}
	r->got.status = resp.status;
	r->got.bytes = resp.body.len;
	r->got.cached = 0;
	ps_buf_append(out, resp.body.data, resp.body.len);
	ps_http_resp_free(&resp);
	if (out->oom)
		return ps_err(r->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

/* Note 7: tells the reply get returned for URL, with WHY (not NULL) when
 * its checks refused it, or REVOKED when it says so. */
static void settle(ps_revoc *r, const char *url, const char *what, const char *why, int revoked)
{
	char msg[300];

	if (why)
		snprintf(msg, sizeof msg, "refused: %s", why);
	tell(r, url, what, r->got.status, r->got.bytes, r->got.cached,
	     why ? msg : revoked ? "the certificate is revoked" : NULL);
}

static void keep(ps_revoc *r, const char *url, const uint8_t *body, size_t blen, const ps_buf *b,
                 int cached)
{
	if (r->cache && !cached &&
	    ps_netcache_put(r->ctx, r->cache, url, body, blen, b->data, b->len) < 0)
		ps_warn(r->ctx, "%s", pdfstamp_ctx_errmsg(r->ctx));
	ps_netcache_unlock(&r->lock);
}

/* DER, or the first PEM block labelled LABEL decoded into TMP. */
static int der_of(ps_buf *b, const char *label, ps_buf *tmp)
{
	char begin[64], endl[64];
	const uint8_t *s, *e;
	size_t olen = 0;

	if (b->len && b->data[0] == 0x30)
		return 0;
	snprintf(begin, sizeof begin, "-----BEGIN %s-----", label);
	snprintf(endl, sizeof endl, "-----END %s-----", label);
	s = memmem(b->data, b->len, begin, strlen(begin));
	if (!s)
		return -1;
	s += strlen(begin);
	e = memmem(s, (size_t)(b->data + b->len - s), endl, strlen(endl));
	if (!e)
		return -1;
	ps_buf_reset(tmp);
	{
		size_t k;
		for (k = 0; s + k < e; k++)
			if (s[k] != '\r' && s[k] != '\n' && s[k] != ' ' && s[k] != '\t')
				ps_buf_putc(tmp, s[k]);
	}
	if (tmp->oom || mbedtls_base64_decode(NULL, 0, &olen, tmp->data, tmp->len) ==
	                        MBEDTLS_ERR_BASE64_INVALID_CHARACTER || olen == 0)
		return -1;
	{
		uint8_t *d = malloc(olen);
		if (!d || mbedtls_base64_decode(d, olen, &olen, tmp->data, tmp->len) != 0) {
			free(d);
			return -1;
		}
		ps_buf_reset(b);
		ps_buf_append(b, d, olen);
		free(d);
	}
	return b->oom ? -1 : 0;
}

/* ---- chain completion (note 1) ----------------------------------------------------- */

static int complete_chain(ps_revoc *r, struct cert *c0)
{
	char urls[MAX_URLS][512], name[256];
	ps_buf b = PS_BUF_INIT, tmp = PS_BUF_INIT;
	struct cert *c = c0, *n;
	int depth, i, nu, rc = 0, cached;

	for (depth = 0; depth < MAX_DEPTH && !self_issued(&c->c) && !pool_issuer(r, &c->c);
	     depth++) {
		nu = aia_urls(&c->c, OID_AD_CAISSUERS, urls);
		cert_name(&c->c, name, sizeof name);
		n = NULL;
		for (i = 0; i < nu && !n; i++) {
			if ((rc = get(r, urls[i], "cert", NULL, NULL, 0, &b, &cached)) < 0) {
				r->fresh = 0;
				if (rc == PDFSTAMP_E_NOMEM || r->capped)
					goto out;
				ps_warn(r->ctx, "%s", pdfstamp_ctx_errmsg(r->ctx));
				rc = 0;
				continue;
			}
			{
				mbedtls_x509_crt t;
				int good;
				mbedtls_x509_crt_init(&t);
				good = der_of(&b, "CERTIFICATE", &tmp) == 0 &&
				       mbedtls_x509_crt_parse_der(&t, b.data, b.len) == 0 &&
				       t.raw.len == b.len && ps_x509sig_signed_by(&c->c, &t);
				mbedtls_x509_crt_free(&t);
				settle(r, urls[i], "cert",
				       good ? NULL : "not the issuer's certificate", 0);
				if (!good && cached && !r->offline) {
					r->fresh = 1; /* note 6 */
					i--;
					continue;
				}
				r->fresh = 0;
				if (!good) {
					ps_warn(r->ctx, "%s: not the certificate that issued %s",
					        urls[i], name);
					continue;
				}
			}
			if ((rc = pool_add(r, b.data, b.len, urls[i], &n)) < 0)
				goto out;
			keep(r, urls[i], NULL, 0, &b, cached);
			if (rc == 1 && (rc = push_item(r, PDFSTAMP_DSS_CERT, b.data, b.len)) < 0)
				goto out;
			rc = 0;
		}
		if (!n) {
			if (nu)
				ps_warn(r->ctx, "the issuer of %s could not be fetched", name);
			break;
		}
		c = n;
	}
out:
	ps_buf_free(&b);
	ps_buf_free(&tmp);
	return rc;
}

/* ---- OCSP (note 3) ---------------------------------------------------------------- */

/* Note 3a: the delegated responder's certificate DER[0..LEN) of an
 * accepted reply joins the pool and the items (once); with
 * id-pkix-ocsp-nocheck it needs no revocation data of its own. */
static int responder(ps_revoc *r, const uint8_t *der, size_t len)
{
	struct cert *rc_cert = NULL;
	const uint8_t *v;
	size_t vlen;
	int rc;

	if ((rc = pool_add(r, der, len, "the OCSP responder's certificate", &rc_cert)) < 0)
		return rc;
	if (rc == 1 && (rc = push_item(r, PDFSTAMP_DSS_CERT, der, len)) < 0)
		return rc;
	if (ext_value(&rc_cert->c, OID_OCSP_NOCHECK, sizeof OID_OCSP_NOCHECK - 1, &v, &vlen) == 0)
		rc_cert->done = 1;
	return 0;
}

/* Note 3: *GOT 1 with the reply among the items, -1 when it says revoked
 * (then the error is set), 0 when none was accepted (the last reason set
 * as the error, returned). */
static int try_ocsp(ps_revoc *r, struct cert *c, struct cert *iss, const char *name, int *got)
{
	char urls[MAX_URLS][512], when[48] = "";
	ps_buf id = PS_BUF_INIT, req = PS_BUF_INIT, b = PS_BUF_INIT;
	uint8_t nonce[16];
	const char *why;
	const uint8_t *rder;
	size_t rlen;
	int i, nu, rc = 0, cached, v;

	*got = 0;
	nu = aia_urls(&c->c, OID_AD_OCSP, urls);
	if (!nu)
		return 0;
	if (!r->cache && (rc = ps_random(r->ctx, nonce, sizeof nonce)) < 0)
		return rc;
	if (ps_ocsp_certid(&c->c, &iss->c, &id) < 0 ||
	    ps_ocsp_request(&id, r->cache ? NULL : nonce, &req) < 0) {
		rc = ps_err(r->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nu && !*got; i++) {
		if ((rc = get(r, urls[i], "ocsp", "application/ocsp-request", req.data, req.len, &b,
		              &cached)) < 0) {
			r->fresh = 0;
			if (rc == PDFSTAMP_E_NOMEM)
				goto out;
			rc = ps_err_wrap(r->ctx, rc, "OCSP for %s", name);
			ps_warn(r->ctx, "%s", pdfstamp_ctx_errmsg(r->ctx));
			continue;
		}
		v = ps_ocsp_check(&b, &id, r->cache ? NULL : nonce, &c->c.raw, &iss->c, when,
		               sizeof when, &why, &rder, &rlen);
		settle(r, urls[i], "ocsp", v < 0 ? why : NULL, v == 1);
		if (v == 1) {
			rc = ps_err(r->ctx, PDFSTAMP_E_FORMAT,
			            "%s is revoked (OCSP, %s: revocationTime %s)", name, urls[i],
			            when[0] ? when : "?");
			*got = -1;
			goto out;
		}
		if (v < 0 && cached && !r->offline) {
			r->fresh = 1; /* note 6: a cached reply no longer good, asked again */
			i--;
			continue;
		}
		r->fresh = 0;
		if (v < 0) {
			rc = ps_err(r->ctx, PDFSTAMP_E_FORMAT, "OCSP for %s: %s: %s", name, urls[i],
			            why);
			ps_warn(r->ctx, "%s", pdfstamp_ctx_errmsg(r->ctx));
			continue;
		}
		if (rder && (rc = responder(r, rder, rlen)) < 0)
			goto out;
		keep(r, urls[i], req.data, req.len, &b, cached);
		if ((rc = push_item(r, PDFSTAMP_DSS_OCSP, b.data, b.len)) < 0)
			goto out;
		*got = 1;
		rc = 0;
	}
out:
	ps_buf_free(&id);
	ps_buf_free(&req);
	ps_buf_free(&b);
	return rc;
}

int ps_revoc_ocsp_check(ps_ctx *ctx, const uint8_t *reply, size_t n, const uint8_t *cert,
                        size_t certlen, const uint8_t *iss, size_t isslen,
                        const uint8_t *nonce)
{
	mbedtls_x509_crt c, i;
	ps_buf id = PS_BUF_INIT, b = PS_BUF_INIT;
	char when[48] = "";
	const char *why = "out of memory";
	const uint8_t *rder;
	size_t rlen;
	int rc;

	mbedtls_x509_crt_init(&c);
	mbedtls_x509_crt_init(&i);
	if (mbedtls_x509_crt_parse_der(&c, cert, certlen) != 0 ||
	    mbedtls_x509_crt_parse_der(&i, iss, isslen) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "a certificate does not parse");
		goto out;
	}
	ps_buf_append(&b, reply, n);
	if (b.oom || ps_ocsp_certid(&c, &i, &id) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "no CertID");
		goto out;
	}
	rc = ps_ocsp_check(&b, &id, nonce, &c.raw, &i, when, sizeof when, &why, &rder, &rlen);
	if (rc < 0)
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "OCSP: %s", why);
out:
	mbedtls_x509_crt_free(&c);
	mbedtls_x509_crt_free(&i);
	ps_buf_free(&id);
	ps_buf_free(&b);
	return rc;
}

/* ---- CRL (note 4) ------------------------------------------------------------------ */

/* Note 4: *GOT as for try_ocsp. */
static int try_crl(ps_revoc *r, struct cert *c, struct cert *iss, const char *name, int *got)
{
	char urls[MAX_URLS][512];
	ps_buf b = PS_BUF_INIT, tmp = PS_BUF_INIT;
	int i, nu, rc = 0, cached;

	*got = 0;
	nu = crldp_urls(&c->c, urls);
	for (i = 0; i < nu && !*got; i++) {
		mbedtls_x509_crl crl;
		const mbedtls_x509_crl_entry *e;
		const char *why = NULL;
		char when[48] = "";
		int revoked = 0;
		if ((rc = get(r, urls[i], "crl", NULL, NULL, 0, &b, &cached)) < 0) {
			r->fresh = 0;
			if (rc == PDFSTAMP_E_NOMEM)
				goto out;
			rc = ps_err_wrap(r->ctx, rc, "CRL for %s", name);
			ps_warn(r->ctx, "%s", pdfstamp_ctx_errmsg(r->ctx));
			continue;
		}
		mbedtls_x509_crl_init(&crl);
		if (der_of(&b, "X509 CRL", &tmp) < 0 ||
		    mbedtls_x509_crl_parse_der(&crl, b.data, b.len) != 0 || crl.raw.len != b.len)
			why = "not a DER or PEM X.509 CRL";
		else if (!same(&crl.issuer_raw, &iss->c.subject_raw))
			why = "its issuer is not the certificate's issuer";
		else if (crl.sig_pk == MBEDTLS_PK_RSASSA_PSS &&
		         (why = ps_x509sig_pss_why(crl.sig_md, crl.sig_opts)) != NULL)
			; /* note 3b */
		else if (!ps_x509sig_verify(&iss->c.pk, crl.sig_md, crl.sig_pk, crl.sig_opts,
		                            crl.tbs.p, crl.tbs.len, crl.sig.p, crl.sig.len))
			why = "its signature does not verify with the issuer's key";
		else if (crl.next_update.year && mbedtls_x509_time_is_past(&crl.next_update))
			why = "it is out of date (its nextUpdate has passed)";
		for (e = &crl.entry; !why && e && e->raw.p; e = e->next)
			if (e->serial.len == c->c.serial.len &&
			    memcmp(e->serial.p, c->c.serial.p, e->serial.len) == 0) {
				revoked = 1;
				snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02dZ",
				         e->revocation_date.year, e->revocation_date.mon,
				         e->revocation_date.day, e->revocation_date.hour,
				         e->revocation_date.min, e->revocation_date.sec);
				break;
			}
		mbedtls_x509_crl_free(&crl);
		settle(r, urls[i], "crl", why, revoked);
		if (revoked) {
			rc = ps_err(r->ctx, PDFSTAMP_E_FORMAT, "%s is revoked (CRL %s: since %s)",
			            name, urls[i], when);
			*got = -1;
			goto out;
		}
		if (why && cached && !r->offline) {
			r->fresh = 1; /* note 6 */
			i--;
			continue;
		}
		r->fresh = 0;
		if (why) {
			rc = ps_err(r->ctx, PDFSTAMP_E_FORMAT, "CRL for %s: %s: %s", name, urls[i],
			            why);
			ps_warn(r->ctx, "%s", pdfstamp_ctx_errmsg(r->ctx));
			continue;
		}
		keep(r, urls[i], NULL, 0, &b, cached);
		if ((rc = push_item(r, PDFSTAMP_DSS_CRL, b.data, b.len)) < 0)
			goto out;
		*got = 1;
		rc = 0;
	}
out:
	ps_buf_free(&b);
	ps_buf_free(&tmp);
	return rc;
}

/* ---- the session --------------------------------------------------------------------- */

/* The certificates of the CMS SignedData at the start of P[0..N) (parsed
 * by sigcms.c, BER included). */
static int cms_certs(ps_revoc *r, const uint8_t *p, size_t n)
{
	const uint8_t *cend;
	int tag, rc, k = 0;
	char what[48];

	if (ps_sigcms_certs(p, n, &p, &cend) != 0)
		return ps_err(r->ctx, PDFSTAMP_E_FORMAT, "the signature's /Contents is not a CMS "
		              "SignedData that parses");
	while (p && p < cend) {
		const uint8_t *c0 = p;
		if (ps_der_skip(&p, cend, &tag) != 0 || p > cend)
			return ps_err(r->ctx, PDFSTAMP_E_FORMAT, "the signature's CMS certificates "
			              "do not parse");
		if (tag != PS_DER_SEQ)
			continue; /* other certificate formats */
		snprintf(what, sizeof what, "certificate %d of the CMS", ++k);
		if ((rc = pool_add(r, c0, (size_t)(p - c0), what, NULL)) < 0)
			return rc;
	}
	return 0;
}

int ps_revoc_new(ps_ctx *ctx, const struct pdfstamp_dss_opts *o, ps_revoc **out)
{
	ps_revoc *r = calloc(1, sizeof *r);

	*out = NULL;
	if (!r)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	r->ctx = ctx;
	r->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	r->cache = o->cache_dir;
	r->offline = o->offline;
	r->lock = -1;
	r->cb = o->on_fetch;
	r->ud = o->on_fetch_userdata;
	*out = r;
	return 0;
}

void ps_revoc_free(ps_revoc *r)
{
	size_t i;

	if (!r)
		return;
	ps_netcache_unlock(&r->lock);
	for (i = 0; i < r->ncerts; i++) {
		mbedtls_x509_crt_free(&r->certs[i]->c);
		free(r->certs[i]);
	}
	free(r->certs);
	for (i = 0; i < r->nitems; i++)
		free(r->items[i].der);
	free(r->items);
	free(r);
}

int ps_revoc_collect(ps_revoc *r, const uint8_t *contents, size_t n,
                     struct ps_revoc_item **items, size_t *nitems)
{
	char name[256], urls[MAX_URLS][512];
	size_t i, first = r->ncerts;
	int rc, got;

	r->items = NULL;
	r->nitems = 0;
	*items = NULL;
	*nitems = 0;
	if ((rc = cms_certs(r, contents, n)) < 0)
		goto fail;
	for (i = first; i < r->ncerts; i++) /* the CMS's own certificates */
		if ((rc = push_item(r, PDFSTAMP_DSS_CERT, r->certs[i]->c.raw.p,
		                    r->certs[i]->c.raw.len)) < 0)
			goto fail;
	for (i = first; i < r->ncerts; i++) /* grows as issuers are fetched */
		if ((rc = complete_chain(r, r->certs[i])) < 0)
			goto fail;
	for (i = 0; i < r->ncerts; i++) {
		struct cert *c = r->certs[i], *iss;
		if (c->done || self_issued(&c->c))
			continue;
		c->done = 1;
		cert_name(&c->c, name, sizeof name);
		if (!(iss = pool_issuer(r, &c->c))) {
			ps_warn(r->ctx, "no issuer of %s: no revocation data for it", name);
			continue;
		}
		rc = try_ocsp(r, c, iss, name, &got);
		if (got < 0 || rc == PDFSTAMP_E_NOMEM)
			goto fail;
		if (got)
			continue;
		{
			/* note 5: the OCSP failure's code, both reasons */
			int had = rc;
			char why1[256];
			snprintf(why1, sizeof why1, "%s",
			         had < 0 ? pdfstamp_ctx_errmsg(r->ctx) : "");
			rc = try_crl(r, c, iss, name, &got);
			if (got > 0)
				continue;
			if (got < 0 || rc == PDFSTAMP_E_NOMEM)
				goto fail;
			if (had < 0 && rc < 0) {
				char why2[256];
				snprintf(why2, sizeof why2, "%s", pdfstamp_ctx_errmsg(r->ctx));
				rc = ps_err(r->ctx, had, "%s; and %s", why1, why2);
				goto fail;
			}
			if (had < 0 || rc < 0) {
				if (had < 0)
					rc = ps_err(r->ctx, had, "%s", why1);
				goto fail;
			}
		}
		if (aia_urls(&c->c, OID_AD_OCSP, urls) == 0 && crldp_urls(&c->c, urls) == 0)
			ps_warn(r->ctx, "%s names no OCSP responder and no CRL: no revocation data "
			        "for it", name);
		else {
			rc = ps_err(r->ctx, PDFSTAMP_E_IO, "no revocation data could be had for %s",
			            name);
			goto fail;
		}
	}
	ps_netcache_unlock(&r->lock);
	*items = r->items;
	*nitems = r->nitems;
	r->items = NULL;
	r->nitems = 0;
	return 0;
fail:
	ps_netcache_unlock(&r->lock);
	for (i = 0; i < r->nitems; i++)
		free(r->items[i].der);
	free(r->items);
	r->items = NULL;
	r->nitems = 0;
	return rc;
}
