/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c - one bounded HTTP(S) request through libcurl, for the commands
 * that are asked to fetch (`dss --fetch`: OCSP, CRLs, CA certificates;
 * `timestamp`: RFC 3161).  Nothing else in the library opens a socket.
 *
 * DESIGN NOTES
 *
 * Place: [content], above extlib.c, which opens libcurl (libcurl.so.4,
 * Debian's OpenSSL flavour) on the first request of the process, so that a
 * stamp never loads it (extlib.c note 1).  curl_global_init runs there,
 * once, under extlib's lock.
 *
 *  1. What may be asked.  The URL comes from certificates, that is from
 *     anyone: it must start with http:// or https:// (any case), be at most
 *     MAX_URL bytes of printable ASCII without spaces, and libcurl is told
 *     the same (CURLOPT_PROTOCOLS_STR and CURLOPT_REDIR_PROTOCOLS_STR
 *     "http,https"), so no redirect leads to file://, ftp://, ldap://,
 *     gopher://, smb:// or anything else libcurl was built with.  Any other
 *     URL is PDFSTAMP_E_USAGE, without loading libcurl.
 *  2. Bounds.  At most 3 redirects (CURLOPT_MAXREDIRS; a fourth is
 *     PDFSTAMP_E_IO); connecting and the whole request each at most
 *     timeout_ms (CURLOPT_CONNECTTIMEOUT_MS, CURLOPT_TIMEOUT_MS); the
 *     reply's body at most max_bytes, enforced in the write callback
 *     whatever Content-Length says (a larger Content-Length stops it
 *     earlier: CURLOPT_MAXFILESIZE_LARGE), PDFSTAMP_E_FORMAT.  No content
 *     decoding is asked for (no Accept-Encoding), so the cap is on the
 *     bytes as they come.
 *  3. No surprises from the environment.  libcurl reads no ~/.netrc
 *     unless told (CURLOPT_NETRC is set to CURL_NETRC_IGNORED all the
 *     same) and never a curlrc (that is the curl tool's).  Proxies are
 *     libcurl's usual environment variables, documented in pdfstamp(1):
 *     http_proxy (lowercase only: libcurl ignores HTTP_PROXY, the
 *     "httpoxy" rule), HTTPS_PROXY or https_proxy, ALL_PROXY or all_proxy,
 *     NO_PROXY or no_proxy.  TLS peers and host names are verified with
 *     the system's CA store (libcurl's defaults, never turned off).
 *  4. Signals and threads.  CURLOPT_NOSIGNAL: no SIGALRM for DNS
 *     timeouts, so a threaded caller (--jobs) is safe; each request has
 *     its own easy handle, made and cleaned up here.
 *  5. Credentials.  Basic authentication only when the caller gives a
 *     user; the password is copied NUL-terminated into a buffer wiped
 *     before it is freed, sent only to the URL's own host (libcurl does
 *     not send it on to another host after a redirect unless
 *     CURLOPT_UNRESTRICTED_AUTH, which is never set), never in a message.
 *  6. Results.  Any HTTP reply is 0 and the caller judges the status and
 *     the body; a connection refused, a timeout, a TLS failure, too many
 *     redirects or any other transfer failure is PDFSTAMP_E_IO naming the
 *     URL (as asked, without a password: URLs with user information are
 *     refused by note 1's check of '@') and libcurl's reason.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ps.h"
#include "extlib.h"
#include "http.h"

#define MAX_URL 2048          /* bytes of a URL (note 1) */
#define MAX_REDIRS 3L         /* note 2 */

/* Note 1: http:// or https://, printable ASCII, no spaces, no user
 * information.  1 if acceptable. */
static int url_ok(const char *u)
{
	size_t i, n, host;

	if (!u)
		return 0;
	n = strnlen(u, MAX_URL + 1);
	if (n > MAX_URL)
		return 0;
	if (n > 7 && strncasecmp(u, "http://", 7) == 0)
		host = 7;
	else if (n > 8 && strncasecmp(u, "https://", 8) == 0)
		host = 8;
	else
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)u[i] <= 0x20 || (unsigned char)u[i] >= 0x7f)
			return 0;
	/* user information (before the first '/', '?' or '#' after the scheme) */
	for (i = host; i < n && u[i] != '/' && u[i] != '?' && u[i] != '#'; i++)
		if (u[i] == '@')
			return 0;
	return i > host; /* a host */
}

struct sink {
	ps_buf *body;
	size_t max;
	int over;                     /* the cap was passed */
};

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n;

	if (nmemb && size > SIZE_MAX / nmemb)
		n = SIZE_MAX;
	else
		n = size * nmemb;
	if (n > s->max - s->body->len) {
		s->over = 1;
		return 0; /* less than given: libcurl stops with CURLE_WRITE_ERROR */
	}
	ps_buf_append(s->body, p, n);
	return s->body->oom ? 0 : n;
}

void ps_http_resp_free(struct ps_http_resp *resp)
{
	if (!resp)
		return;
	ps_buf_free(&resp->body);
	resp->status = 0;
	resp->content_type[0] = 0;
	resp->final_url[0] = 0;
}

int ps_http_fetch(ps_ctx *ctx, const struct ps_http_req *req, struct ps_http_resp *resp)
{
	char errbuf[CURL_ERROR_SIZE] = "", ctype[160];
	struct curl_slist *hdrs = NULL, *h;
	struct sink sink;
	char *pw = NULL;
	CURL *c = NULL;
	CURLcode cc = CURLE_OK;
	long status = 0, t;
	char *info = NULL;
	int rc = 0;

	if (!resp)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "no HTTP reply to fill");
	memset(resp, 0, sizeof *resp);
	if (!req || !url_ok(req->url))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "not an http:// or https:// URL of printable ASCII without user "
		              "information, at most %d bytes: %.200s", MAX_URL,
		              req && req->url ? req->url : "(none)");
	if ((req->body && !req->content_type) || (!req->body && req->body_len) ||
	    req->max_bytes == 0 || req->timeout_ms <= 0 ||
	    (req->password && !req->user) || req->body_len > (size_t)LONG_MAX)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "bad HTTP request for %s", req->url);
	if ((rc = ps_ext_need(ctx, PS_EXT_HTTP)) < 0)
		return rc;
	if (!(c = PS_X(curl_easy_init)()))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "%s: libcurl cannot make a handle", req->url);
	sink.body = &resp->body;
	sink.max = req->max_bytes;
	sink.over = 0;
	t = req->timeout_ms;
#define SET(opt, val) \
	if (cc == CURLE_OK) \
		cc = PS_X(curl_easy_setopt)(c, opt, val)
	SET(CURLOPT_URL, req->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 1L);
	SET(CURLOPT_MAXREDIRS, MAX_REDIRS);
	SET(CURLOPT_CONNECTTIMEOUT_MS, t);
	SET(CURLOPT_TIMEOUT_MS, t);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(req->max_bytes > (size_t)INT64_MAX
	                                            ? INT64_MAX : (int64_t)req->max_bytes));
	SET(CURLOPT_WRITEFUNCTION, on_data);
	SET(CURLOPT_WRITEDATA, &sink);
	SET(CURLOPT_ERRORBUFFER, errbuf);
	SET(CURLOPT_USERAGENT, "pdfstamp/" PACKAGE_VERSION);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	if (req->body) {
		snprintf(ctype, sizeof ctype, "Content-Type: %.128s", req->content_type);
		if (!(h = PS_X(curl_slist_append)(hdrs, ctype)) ||
		    !(hdrs = h, h = PS_X(curl_slist_append)(hdrs, "Expect:"))) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		hdrs = h;
		SET(CURLOPT_POST, 1L);
		SET(CURLOPT_POSTFIELDS, (const char *)req->body);
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		SET(CURLOPT_HTTPHEADER, hdrs);
	} else {
		SET(CURLOPT_HTTPGET, 1L);
	}
	if (req->user) {
		pw = calloc(1, req->password_len + 1);
		if (!pw) {
			rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
			goto out;
		}
		if (req->password_len)
			memcpy(pw, req->password, req->password_len);
		SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		SET(CURLOPT_USERNAME, req->user);
		SET(CURLOPT_PASSWORD, pw);
	}
#undef SET
	if (cc != CURLE_OK) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "%s: libcurl refuses an option: %s", req->url,
		            PS_X(curl_easy_strerror)(cc));
		goto out;
	}
	cc = PS_X(curl_easy_perform)(c);
	if (PS_X(curl_easy_getinfo)(c, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK)
		resp->status = status;
	if (sink.over || cc == CURLE_FILESIZE_EXCEEDED) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s: the reply is larger than %zu bytes",
		            req->url, req->max_bytes);
		goto out;
	}
	if (resp->body.oom) {
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	if (cc != CURLE_OK) {
		const char *why = errbuf[0] ? errbuf : PS_X(curl_easy_strerror)(cc);
		if (cc == CURLE_TOO_MANY_REDIRECTS)
			rc = ps_err(ctx, PDFSTAMP_E_IO, "%s: more than %ld redirects", req->url,
			            MAX_REDIRS);
		else if (cc == CURLE_OPERATION_TIMEDOUT)
			rc = ps_err(ctx, PDFSTAMP_E_IO, "%s: no complete reply within %ld ms (%s)",
			            req->url, t, why);
		else
			rc = ps_err(ctx, PDFSTAMP_E_IO, "%s: %s", req->url, why);
		goto out;
	}
	info = NULL;
	if (PS_X(curl_easy_getinfo)(c, CURLINFO_CONTENT_TYPE, &info) == CURLE_OK && info)
		snprintf(resp->content_type, sizeof resp->content_type, "%s", info);
	info = NULL;
	if (PS_X(curl_easy_getinfo)(c, CURLINFO_EFFECTIVE_URL, &info) == CURLE_OK && info)
		snprintf(resp->final_url, sizeof resp->final_url, "%s", info);
	else
		snprintf(resp->final_url, sizeof resp->final_url, "%s", req->url);
out:
	if (c)
		PS_X(curl_easy_cleanup)(c);
	if (hdrs)
		PS_X(curl_slist_free_all)(hdrs);
	if (pw) {
		ps_wipe(pw, req->password_len);
		free(pw);
	}
	if (rc < 0)
		ps_http_resp_free(resp);
	return rc;
}
