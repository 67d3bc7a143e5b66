/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_xmp.c - libFuzzer target for the XMP packet editor (xmp.c, on the
 * XML tokenizer of xml.c), which `pdfstamp meta --xmp` runs over the
 * /Metadata stream of a hostile file.
 *
 * Input layout:
 *   byte 0     which properties to touch: bit k for key k of the list below
 *   byte 1     bit k set: remove key k instead of setting it;
 *              bit 7: no modification date
 *   then       the value (up to the first NUL, at most 256 bytes: any bytes,
 *              valid UTF-8 or not), then the name of the custom key (up to
 *              the next NUL, at most 64 bytes), then the old packet (the
 *              rest; empty means "no packet": a fresh one is made).
 * Keys: Title, Author, Subject, Keywords, Creator, Producer, the custom
 * key, and Trapped (not mirrored in XMP).
 *
 * Oracles: ps_xmp_update never crashes and fails only with UNSUPPORTED,
 * USAGE (a value XML cannot carry) or NOMEM, always with a message; never
 * INTERNAL (its own re-parse of the result failed).  A successful result
 * is a fixed point: the same update applied to it succeeds and gives the
 * same bytes up to XML white space (indentation may settle on the second
 * pass).
 */
#include "fuzz.h"

#define FZM_MAX_VALUE 256
#define FZM_MAX_KEY 64

/* The first NUL-terminated field of at most MAX bytes at *P (*N left),
 * copied to OUT (MAX + 1 bytes); advances past it and its NUL. */
static void fzm_field(const uint8_t **p, size_t *n, char *out, size_t max)
{
	const uint8_t *nul = memchr(*p, 0, *n);
	size_t len = nul ? (size_t)(nul - *p) : *n;
	size_t take = len < max ? len : max;

	memcpy(out, *p, take);
	out[take] = 0;
	len += nul ? 1 : 0;
	*p += len;
	*n -= len;
}

static void fzm_check_rc(ps_ctx *ctx, int rc, const char *what)
{
	if (rc == PDFSTAMP_E_INTERNAL)
		fz_bug(ctx, what);
	if (rc != PDFSTAMP_E_UNSUPPORTED && rc != PDFSTAMP_E_USAGE && rc != PDFSTAMP_E_NOMEM)
		fz_bug(ctx, "unexpected error code from ps_xmp_update");
	if (pdfstamp_ctx_errmsg(ctx)[0] == 0)
		fz_bug(ctx, "an error without a message");
}

/* Equal once XML white space is dropped: a replaced element is indented
 * from its context, which the first pass may have changed (a cosmetic
 * difference; found by this target, accepted). */
static int fzm_same_but_space(const ps_buf *a, const ps_buf *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (i < a->len && strchr(" \t\r\n", a->data[i]) && a->data[i])
			i++;
		while (j < b->len && strchr(" \t\r\n", b->data[j]) && b->data[j])
			j++;
		if (i == a->len || j == b->len)
			return i == a->len && j == b->len;
		if (a->data[i++] != b->data[j++])
			return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[8] = {"Title", "Author", "Subject", "Keywords",
	                                    "Creator", "Producer", NULL, "Trapped"};
	char value[FZM_MAX_VALUE + 1], custom[FZM_MAX_KEY + 1];
	ps_meta_kv kv[8];
	ps_buf out1 = PS_BUF_INIT, out2 = PS_BUF_INIT;
	const uint8_t *p = data;
	size_t n = size, nkv = 0;
	const char *date;
	uint8_t touch, remove;
	ps_ctx *ctx;
	int k, rc;

	if (size < 2 || size > FZ_MAX_INPUT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	touch = p[0];
	remove = p[1];
	p += 2;
	n -= 2;
	fzm_field(&p, &n, value, FZM_MAX_VALUE);
	fzm_field(&p, &n, custom, FZM_MAX_KEY);
	date = (remove & 0x80) ? NULL : "2024-05-06T07:08:09+02:00";
	for (k = 0; k < 8; k++) {
		if (!(touch & (1u << k)))
			continue;
		kv[nkv].key = keys[k] ? keys[k] : custom;
		kv[nkv].value = (remove & (1u << k)) && k != 7 ? NULL : value;
		nkv++;
	}

	rc = ps_xmp_update(ctx, n ? p : NULL, n, kv, nkv, date, &out1);
	if (rc < 0) {
		fzm_check_rc(ctx, rc, "ps_xmp_update (its own result does not re-parse)");
		goto done;
	}
	if (out1.oom)
		goto done;
	rc = ps_xmp_update(ctx, out1.data, out1.len, kv, nkv, date, &out2);
	if (rc == PDFSTAMP_E_NOMEM || out2.oom)
		goto done;
	if (rc < 0)
		fz_bug(ctx, "ps_xmp_update refuses its own result");
	if (!fzm_same_but_space(&out1, &out2))
		fz_bug(ctx, "the same update applied twice changes the packet again");
done:
	ps_buf_free(&out1);
	ps_buf_free(&out2);
	pdfstamp_ctx_free(ctx);
	return 0;
}
