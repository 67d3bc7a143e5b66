/*
 * fuzz_parse.c - libFuzzer target for the lexer and object parser.
 *
 * The input is a window of PDF syntax.  It is parsed as a sequence of
 * direct objects (ps_parse_obj) and, from offset 0, as one indirect object
 * (ps_parse_indirect).  Oracles besides the sanitizers:
 *  - a failed parse returns FORMAT or NEEDMORE (or NOMEM) and no object;
 *    a successful one advances *pos inside the window;
 *  - serialize -> parse -> serialize is a fixed point (ps_serialize output
 *    must always be valid PDF syntax that parses back to the same object),
 *    and ps_obj_copy serializes identically to the original;
 *  - a stream's data offset lies inside the window.
 */
#include "fuzz.h"

#define FZ_PARSE_MAX_OBJS 64

static int fzp_count_str(void *ud, ps_obj *str, const ps_obj *parent, const char *key)
{
	(void)str;
	(void)parent;
	(void)key;
	(*(size_t *)ud)++;
	return 0;
}

static void fzp_roundtrip(ps_ctx *ctx, const ps_obj *o)
{
	ps_buf a = PS_BUF_INIT, b = PS_BUF_INIT, c = PS_BUF_INIT;
	ps_obj *o2 = NULL, *cp;
	size_t pos = 0, nstr = 0;
	int rc;

	ps_serialize(&a, o);
	if (a.oom)
		goto out;
	/* A bare number at the end of a window is "need more" (it might be
	 * the start of "N G R"); a delimiter after it settles that. */
	ps_buf_puts(&a, "\n]");
	if (a.oom)
		goto out;
	rc = ps_parse_obj(ctx, a.data, a.len, &pos, &o2);
	if (rc == PDFSTAMP_E_NOMEM)
		goto out;
	if (rc < 0) {
		fprintf(stderr, "serialized: %.*s\n", (int)(a.len < 2000 ? a.len : 2000), (const char *)a.data);
		fz_bug(ctx, "the serializer's output does not parse");
	}
	ps_serialize(&b, o2);
	if (b.oom)
		goto out;
	if (b.len != a.len - 2 || memcmp(a.data, b.data, b.len) != 0) {
		fprintf(stderr, "first:  %.*s\nsecond: %.*s\n", (int)(a.len < 2000 ? a.len : 2000),
		        (const char *)a.data, (int)(b.len < 2000 ? b.len : 2000), (const char *)b.data);
		fz_bug(ctx, "serialize/parse/serialize is not a fixed point");
	}
	cp = ps_obj_copy(o);
	if (cp) {
		ps_serialize(&c, cp);
		if (!c.oom && (c.len != b.len || memcmp(c.data, b.data, b.len) != 0))
			fz_bug(ctx, "ps_obj_copy differs from the original");
		ps_obj_walk_strings(cp, fzp_count_str, &nstr);
		ps_obj_free(cp);
	}
out:
	ps_obj_free(o2);
	ps_buf_free(&a);
	ps_buf_free(&b);
	ps_buf_free(&c);
}

static void fzp_check_fail(ps_ctx *ctx, int rc, const ps_obj *o)
{
	if (o)
		fz_bug(ctx, "an object was returned with an error");
	if (rc != PDFSTAMP_E_FORMAT && rc != PS_E_NEEDMORE && rc != PDFSTAMP_E_NOMEM)
		fz_bug(ctx, "unexpected error code from the parser");
	if (rc != PS_E_NEEDMORE && pdfstamp_ctx_errmsg(ctx)[0] == 0)
		fz_bug(ctx, "an error without a message");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const int64_t base = 1000;
	ps_ctx *ctx;
	size_t pos = 0;
	uint32_t num = 0;
	uint16_t gen = 0;
	ps_obj *o;
	int i, rc;

	if (size > FZ_MAX_INPUT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	for (i = 0; i < FZ_PARSE_MAX_OBJS && pos < size; i++) {
		size_t before = pos;
		o = NULL;
		rc = ps_parse_obj(ctx, data, size, &pos, &o);
		if (rc < 0) {
			fzp_check_fail(ctx, rc, o);
			break;
		}
		if (!o || pos <= before || pos > size)
			fz_bug(ctx, "ps_parse_obj succeeded without an object or without advancing");
		fzp_roundtrip(ctx, o);
		ps_obj_free(o);
	}

	o = NULL;
	rc = ps_parse_indirect(ctx, data, size, 0, base, &num, &gen, &o);
	if (rc < 0) {
		fzp_check_fail(ctx, rc, o);
	} else {
		if (!o)
			fz_bug(ctx, "ps_parse_indirect succeeded without an object");
		if (o->kind == PS_STREAM) {
			if (o->u.stm.off < base || o->u.stm.off > base + (int64_t)size)
				fz_bug(ctx, "stream data offset outside the window");
			if (!o->u.stm.dict || o->u.stm.dict->kind != PS_DICT)
				fz_bug(ctx, "stream without a dictionary");
			fzp_roundtrip(ctx, o->u.stm.dict);
		} else {
			fzp_roundtrip(ctx, o);
		}
		ps_obj_free(o);
	}
	pdfstamp_ctx_free(ctx);
	return 0;
}
