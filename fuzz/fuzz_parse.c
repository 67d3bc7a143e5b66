/* SPDX-License-Identifier: Apache-2.0 */
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
 *  - a stream's data offset lies inside the window;
 *  - parsed into an arena (obj.c note 9), the indirect object gives the
 *    same result, message and serialization, and survives being changed
 *    (strings made longer and shorter, keys put and deleted, items
 *    pushed) and freed before the arena is reset;
 *  - the references-only scan (ps_parse_scan_refs) answers 0, 1 or NEEDMORE,
 *    and when it and the parser both read the indirect object, the header
 *    numbers agree and every reference the parser built is among the
 *    scan's (it may report more, never fewer: audit's reference graph);
 *    likewise ps_parse_scan_refs_direct against the first direct object.
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

static int fzp_grow_str(void *ud, ps_obj *str, const ps_obj *parent, const char *key)
{
	static const uint8_t x[40] = {0};

	(void)ud;
	(void)parent;
	(void)key;
	ps_str_set(str, x, str->u.str.len % 3 ? sizeof x : 0);
	return 0;
}

/* The arena's oracle: ps_parse_indirect_in against the malloc parse (RC,
 * the message, the serialization SER of the malloc'd object, if any). */
static void fzp_arena(ps_ctx *ctx, const uint8_t *data, size_t size, int64_t base, int rc, const char *msg,
                      const ps_buf *ser)
{
	ps_arena *ar = ps_arena_new();
	ps_buf b = PS_BUF_INIT;
	ps_obj *o = NULL, *d;
	uint32_t num;
	uint16_t gen;
	int rc2, k;

	if (!ar)
		return;
	for (k = 0; k < 2; k++) {   /* twice: the second time in reused chunks */
		rc2 = ps_parse_indirect_in(ctx, ar, data, size, 0, base, &num, &gen, &o);
		if (rc2 == PDFSTAMP_E_NOMEM || rc == PDFSTAMP_E_NOMEM)
			break;
		if (rc2 != rc || (rc < 0 && strcmp(msg, pdfstamp_ctx_errmsg(ctx)) != 0))
			fz_bug(ctx, "the arena's parse differs from the malloc one");
		if (rc2 < 0)
			break;
		d = o->kind == PS_STREAM ? o->u.stm.dict : o;
		b.len = 0;
		ps_serialize(&b, d);
		if (!b.oom && !ser->oom && (b.len != ser->len || memcmp(b.data, ser->data, b.len) != 0))
			fz_bug(ctx, "the arena's object serializes differently");
		ps_obj_walk_strings(o, fzp_grow_str, NULL);
		ps_dict_put_int(o, "Length", 5);
		ps_dict_put_int(o, "NewKey", 6);
		ps_dict_del(o, "Type");
		ps_array_push(o, ps_new_int(7));
		ps_array_push(o, ps_new_str("x", 1));
		ps_obj_free(o);
		o = NULL;
		ps_arena_reset(ar);
	}
	ps_buf_free(&b);
	ps_arena_free(ar);
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

#define FZP_MAX_REFS 4096

struct fzp_refs {
	uint32_t v[FZP_MAX_REFS];
	size_t n;
	int over;
};

static int fzp_ref(void *ud, uint32_t num)
{
	struct fzp_refs *r = ud;

	if (r->n == FZP_MAX_REFS)
		r->over = 1;
	else
		r->v[r->n++] = num;
	return 0;
}

static int fzp_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The scan against the parser's object O (NULL: the parse failed); the
 * indirect scan (ps_parse_scan_refs) or, DIRECT, the member's. */
static void fzp_scan(ps_ctx *ctx, const uint8_t *data, size_t size, const ps_obj *o, uint32_t num, int direct)
{
	static struct fzp_refs s, p;
	uint32_t snum = 0;
	size_t i, j;
	int rc;

	s.n = p.n = 0;
	s.over = p.over = 0;
	rc = direct ? ps_parse_scan_refs_direct(data, size, 0, fzp_ref, &s)
	            : ps_parse_scan_refs(data, size, &snum, fzp_ref, &s);
	if (rc != 0 && rc != 1 && (rc != PS_E_NEEDMORE || direct))
		fz_bug(ctx, "ps_parse_scan_refs answered something else than 0, 1 or NEEDMORE");
	if (rc != 0 || !o || s.over)
		return;
	if (!direct && snum != num)
		fz_bug(ctx, "ps_parse_scan_refs read another object number than the parser");
	ps_obj_each_ref(o, fzp_ref, &p);
	if (p.over)
		return;
	qsort(s.v, s.n, sizeof s.v[0], fzp_cmp_u32);
	qsort(p.v, p.n, sizeof p.v[0], fzp_cmp_u32);
	for (i = j = 0; i < p.n; i++, j++) { /* P a sub-multiset of S */
		while (j < s.n && s.v[j] < p.v[i])
			j++;
		if (j >= s.n || s.v[j] != p.v[i])
			fz_bug(ctx, "ps_parse_scan_refs missed a reference the parser built");
	}
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
	ps_buf ser = PS_BUF_INIT;
	char msg[512] = "";
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
		if (i == 0)
			fzp_scan(ctx, data, size, o, 0, 1);
		fzp_roundtrip(ctx, o);
		ps_obj_free(o);
	}

	o = NULL;
	rc = ps_parse_indirect(ctx, data, size, 0, base, &num, &gen, &o);
	if (rc < 0) {
		fzp_check_fail(ctx, rc, o);
		snprintf(msg, sizeof msg, "%s", pdfstamp_ctx_errmsg(ctx));
		fzp_arena(ctx, data, size, base, rc, msg, &ser);
		fzp_scan(ctx, data, size, NULL, 0, 0);
	} else {
		fzp_scan(ctx, data, size, o, num, 0);
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
		ps_serialize(&ser, o->kind == PS_STREAM ? o->u.stm.dict : o);
		ps_obj_free(o);
		fzp_arena(ctx, data, size, base, rc, msg, &ser);
	}
	ps_buf_free(&ser);
	pdfstamp_ctx_free(ctx);
	return 0;
}
