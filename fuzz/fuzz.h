/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz.h - helpers shared by the libFuzzer targets in fuzz/ (and by
 * tests/check_fuzzregress.c, which compiles every target into one program
 * to replay fuzz/regress/ in normal builds).
 *
 * Design notes:
 *  - Everything here is static: each target includes this header once and
 *    the replay program includes all targets, so nothing may clash.
 *  - Inputs that need a file (pdfstamp_doc_open takes a path) are written
 *    to an anonymous memfd and opened as /proc/self/fd/N: no disk I/O, no
 *    clean-up, nothing left behind if the fuzzer dies.
 *  - The R6 key derivation (Algorithm 2.B) costs about a millisecond; the
 *    whole-file targets memoise ps_kdf_authenticate on (the security
 *    parameters, the password) so that mutations that do not touch
 *    /Encrypt stay fast.  fuzz_security calls it unmemoised.  The memo is
 *    a pure function cache, so runs stay deterministic.
 *  - A library bug that is not a crash (a self-check reporting
 *    PDFSTAMP_E_INTERNAL, an oracle mismatch) calls fz_bug(), which prints
 *    the context's message and aborts, so libFuzzer keeps the input.
 */
#ifndef PS_FUZZ_H
#define PS_FUZZ_H

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ps.h"
/* fz_doc_auth below is the harness's copy of pdfstamp_doc_auth and sets
 * the outcome as doc.c does: the one use of the reader's fields here. */
#include "docpriv.h"

#define FZ_MAX_INPUT (1u << 20)   /* larger inputs are ignored */

static inline void fz_bug(ps_ctx *ctx, const char *what)
{
	fprintf(stderr, "fuzz: library bug: %s: %s\n", what, ctx ? pdfstamp_ctx_errmsg(ctx) : "");
	abort();
}

/* An anonymous file holding DATA; PATH receives a name that open() accepts.
 * Returns the descriptor (the caller closes it) or -1. */
static inline int fz_memfile(const uint8_t *data, size_t n, char path[64])
{
	int fd = memfd_create("pdfstamp-fuzz", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < n) {
		ssize_t w = write(fd, data + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

/* ---- memoised authentication -------------------------------------------- */

#define FZ_MEMO 64

struct fz_memo_ent {
	int used;
	ps_secparams sp;
	char pw[32];
	size_t pwlen;
	int rc, is_owner, perms_ok;
	uint8_t key[32];
};

static struct fz_memo_ent fz_memo[FZ_MEMO];
static unsigned fz_memo_next;

static inline int fz_sec_auth(ps_ctx *ctx, const ps_secparams *sp, const char *pw, size_t pwlen,
                       uint8_t key[32], int *is_owner, int *perms_ok)
{
	struct fz_memo_ent *e;
	unsigned i;

	if (pwlen < sizeof fz_memo[0].pw) {
		for (i = 0; i < FZ_MEMO; i++) {
			e = &fz_memo[i];
			if (e->used && e->pwlen == pwlen && memcmp(e->pw, pw, pwlen) == 0 &&
			    memcmp(&e->sp, sp, sizeof *sp) == 0) {
				memcpy(key, e->key, 32);
				*is_owner = e->is_owner;
				*perms_ok = e->perms_ok;
				if (e->rc < 0)
					ps_err(ctx, e->rc, "(memoised) authentication failed");
				return e->rc;
			}
		}
	}
	memset(key, 0, 32);
	*is_owner = *perms_ok = 0;
	i = fz_memo_next++ % FZ_MEMO;
	e = &fz_memo[i];
	e->rc = ps_kdf_authenticate(ctx, sp, pw, pwlen, e->key, &e->is_owner, &e->perms_ok);
	if (e->rc < 0)
		memset(e->key, 0, 32);
	if (pwlen < sizeof e->pw) {
		e->used = 1;
		memcpy(&e->sp, sp, sizeof *sp);
		memcpy(e->pw, pw, pwlen);
		e->pwlen = pwlen;
	} else {
		e->used = 0;
	}
	memcpy(key, e->key, 32);
	*is_owner = e->is_owner;
	*perms_ok = e->perms_ok;
	return e->rc;
}

/* What pdfstamp_doc_auth does, with the memo in front of the key
 * derivation.  Tries each password of the fuzzing convention ("", "user",
 * and the samples' "sample-user"); returns 0 once one is accepted. */
static inline int fz_doc_auth(ps_doc *doc)
{
	static const char *const pws[] = {"", "user", "sample-user"};
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct ps_doc_security ds;
	uint8_t key[32];
	int is_owner, perms_ok, rc = PDFSTAMP_E_PASSWORD;
	size_t i;

	ps_doc_security(doc, &ds);
	if (!ds.sec)
		return 0;
	for (i = 0; i < sizeof pws / sizeof pws[0]; i++) {
		rc = fz_sec_auth(ctx, ps_sec_params(ds.sec), pws[i], strlen(pws[i]), key, &is_owner, &perms_ok);
		if (rc == PDFSTAMP_E_PASSWORD)
			continue;
		if (rc < 0)
			break;
		/* Like PDFSTAMP_AUTH_FORCE: a /Perms mismatch is not fatal here. */
		rc = ps_sec_auth_key(ctx, ds.sec, key, is_owner ? 2 : 1, perms_ok);
		if (rc == 0)
			doc->authenticated = is_owner ? 2 : 1; /* the one field set here (docpriv.h) */
		break;
	}
	ps_wipe(key, sizeof key);
	return rc;
}

#endif
