/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - internal: one HTTP(S) request through libcurl, bounded (http.c;
 * conventions: ps.h).  Only commands asked to fetch call it (OCSP, CRL and
 * CA certificates for `dss --fetch`, RFC 3161 for `timestamp`); nothing
 * else in the library opens a socket. */
#ifndef PS_HTTP_H
#define PS_HTTP_H

#include "ps.h"

struct ps_http_req {
	const char *url;              /* http:// or https:// only (else PDFSTAMP_E_USAGE) */
	const char *content_type;     /* of BODY; NULL with BODY NULL: a GET */
	const uint8_t *body;          /* POST body, or NULL */
	size_t body_len;
	long timeout_ms;              /* total time; connecting gets at most this too */
	size_t max_bytes;             /* the reply body's cap: more is PDFSTAMP_E_FORMAT */
	const char *user;             /* HTTP basic authentication, or NULL */
	const char *password;         /* (wiped by the caller; never logged) */
	size_t password_len;
};

struct ps_http_resp {
	long status;                  /* HTTP status of the final reply, 0 if none */
	ps_buf body;                  /* the reply body (owned; ps_http_resp_free) */
	char content_type[128];       /* of the reply, "" if none */
	char final_url[1024];         /* after redirects (at most 3) */
};

/* Performs REQ.  0 with RESP filled for any HTTP reply whatever its
 * status (the caller judges it); PDFSTAMP_E_IO for a connection refused,
 * a timeout, a TLS failure or more than 3 redirects (the message names the
 * URL and what happened); PDFSTAMP_E_FORMAT for a reply over max_bytes;
 * PDFSTAMP_E_USAGE for a URL that is not http or https. */
int ps_http_fetch(ps_ctx *ctx, const struct ps_http_req *req, struct ps_http_resp *resp);
void ps_http_resp_free(struct ps_http_resp *resp);

#endif
