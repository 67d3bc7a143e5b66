/*
 * obj.c - the PDF object model: constructors, containers, typed dictionary
 * helpers, deep copy, comparison and the string walk.  The lexer and
 * parser are in parse.c, the serializer in serialize.c (all declared in
 * obj.h).
 *
 * DESIGN NOTES
 *
 * Object model and ownership:
 *  1. Every ps_obj is a separate heap allocation owned by exactly one
 *     parent (array slot, dictionary entry, stream) or by the caller.
 *     ps_obj_free() frees the whole tree; there is no sharing and no
 *     reference counting, so ps_obj_copy() is a deep copy.
 *  2. Containers take ownership of what they are given, also on failure
 *     (the item is freed).  Passing a NULL item is treated as the caller's
 *     allocation failure and gives PDFSTAMP_E_NOMEM, so that
 *     ps_dict_put(d, "K", ps_new_int(1)) needs a single check.  The typed
 *     helpers (ps_dict_put_name/int/real/bool/ref/str) are exactly that
 *     call, one per kind.
 *  3. u.str.p is always allocated (also for an empty string) and carries a
 *     NUL after the len bytes, for the caller's convenience; the bytes
 *     themselves may contain NULs.  u.name.p and dictionary keys are
 *     NUL-terminated and can never contain a NUL (the parser rejects #00).
 *     The *_take constructors, which adopt buffers the parser decoded,
 *     rely on the caller for these two properties.
 *  4. Dictionaries keep file order.  Duplicate keys in parsed input: the
 *     LAST value wins and takes the place of the FIRST occurrence (parse.c
 *     warns); ps_dict_put() likewise replaces in place.  A key whose value
 *     is null is kept as a PS_NULL entry (not dropped), so a
 *     parse/serialize round trip is exact.
 *  5. Lookups (ps_dict_get, ps_array_get) borrow; they are linear scans,
 *     which is right for the small dictionaries of PDF.
 *  6. ps_obj_equal compares values, not spellings: an integer equals the
 *     real of the same value, reals compare to within 1e-4, dictionaries
 *     ignore key order and a stream compares by its dictionary.
 *  7. A name's bytes and a real's text may share the object's allocation
 *     (inl set; ps_new_name_room, ps_new_real_text, ps_new_name): one
 *     malloc per parsed name instead of two.  Only obj.c frees these
 *     fields or replaces them, and it looks at inl; other code only reads
 *     them, so for every caller nothing changed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ps.h"

/* ======================================================================
 * Object model
 * ====================================================================== */

static ps_obj *obj_alloc(ps_kind kind)
{
	ps_obj *o = malloc(sizeof *o);

	if (o) {
		memset(o, 0, sizeof *o);    /* a fixed size: inlined stores, unlike calloc */
		o->kind = kind;
	}
	return o;
}

ps_obj *ps_new_null(void)
{
	return obj_alloc(PS_NULL);
}

ps_obj *ps_new_bool(int b)
{
	ps_obj *o = obj_alloc(PS_BOOL);

	if (o)
		o->u.b = b ? 1 : 0;
	return o;
}

ps_obj *ps_new_int(int64_t i)
{
	ps_obj *o = obj_alloc(PS_INT);

	if (o)
		o->u.i = i;
	return o;
}

ps_obj *ps_new_real(double v)
{
	ps_obj *o = obj_alloc(PS_REAL);

	if (o) {
		o->u.real.v = v;
		o->u.real.text = NULL;
	}
	return o;
}

/* Copies N bytes plus a terminating NUL; NULL on OOM. */
static uint8_t *dup_bytes(const void *p, size_t n)
{
	uint8_t *d;

	if (n == SIZE_MAX)
		return NULL;
	d = malloc(n + 1);
	if (!d)
		return NULL;
	if (n)
		memcpy(d, p, n);
	d[n] = 0;
	return d;
}

ps_obj *ps_new_str(const void *p, size_t len)
{
	if (!p && len)
		return NULL;
	return ps_new_str_take(dup_bytes(p, len), len, 0);
}

/* An object of KIND with N + 1 more bytes after it (note 7), which *EXTRA
 * receives; NULL on OOM. */
static ps_obj *obj_alloc_extra(ps_kind kind, size_t n, char **extra)
{
	ps_obj *o;

	if (n > SIZE_MAX - sizeof *o - 1)
		return NULL;
	o = malloc(sizeof *o + n + 1);
	if (!o)
		return NULL;
	memset(o, 0, sizeof *o);
	o->kind = kind;
	o->inl = 1;
	*extra = (char *)(o + 1);
	return o;
}

ps_obj *ps_new_name_room(size_t n)
{
	char *p;
	ps_obj *o = obj_alloc_extra(PS_NAME, n, &p);

	if (o) {
		p[0] = 0;
		o->u.name.p = p;
		o->u.name.len = 0;
	}
	return o;
}

ps_obj *ps_new_name(const char *name)
{
	size_t n;
	ps_obj *o;

	if (!name)
		return NULL;
	n = strlen(name);
	o = ps_new_name_room(n);
	if (o) {
		memcpy(o->u.name.p, name, n + 1);
		o->u.name.len = n;
	}
	return o;
}

ps_obj *ps_new_real_text(double v, const char *text, size_t n)
{
	char *p;
	ps_obj *o = obj_alloc_extra(PS_REAL, n, &p);

	if (!o)
		return NULL;
	if (n)
		memcpy(p, text, n);
	p[n] = 0;
	o->u.real.v = v;
	o->u.real.text = p;
	return o;
}

/* An object of KIND to adopt P, or NULL with P freed (a NULL P is the
 * caller's allocation failure). */
static ps_obj *obj_adopt(ps_kind kind, void *p)
{
	ps_obj *o = p ? obj_alloc(kind) : NULL;

	if (!o)
		free(p);
	return o;
}

ps_obj *ps_new_name_take(char *p, size_t n)
{
	ps_obj *o = obj_adopt(PS_NAME, p);

	if (o) {
		o->u.name.p = p;
		o->u.name.len = n;
	}
	return o;
}

ps_obj *ps_new_str_take(uint8_t *p, size_t n, int hex)
{
	ps_obj *o = obj_adopt(PS_STR, p);

	if (o) {
		o->u.str.p = p;
		o->u.str.len = n;
		o->u.str.hex = hex;
	}
	return o;
}

ps_obj *ps_new_array(void)
{
	return obj_alloc(PS_ARRAY);
}

ps_obj *ps_new_dict(void)
{
	return obj_alloc(PS_DICT);
}

ps_obj *ps_new_ref(uint32_t num, uint16_t gen)
{
	ps_obj *o = obj_alloc(PS_REF);

	if (o) {
		o->u.ref.num = num;
		o->u.ref.gen = gen;
	}
	return o;
}

ps_obj *ps_new_stream(ps_obj *dict, uint8_t *data, size_t len)
{
	ps_obj *o;

	if (!dict || dict->kind != PS_DICT)
		goto fail;
	o = obj_alloc(PS_STREAM);
	if (!o)
		goto fail;
	o->u.stm.dict = dict;
	o->u.stm.off = -1;
	o->u.stm.data = data;
	o->u.stm.len = data ? len : 0;
	return o;
fail:
	ps_obj_free(dict);
	free(data);
	return NULL;
}

/* The recursion stays inside this file (no call through the PLT). */
static void obj_free(ps_obj *o)
{
	size_t i;

	if (!o)
		return;
	switch (o->kind) {
	case PS_REAL:
		if (!o->inl)
			free(o->u.real.text);
		break;
	case PS_STR:
		free(o->u.str.p);
		break;
	case PS_NAME:
		if (!o->inl)
			free(o->u.name.p);
		break;
	case PS_ARRAY:
		for (i = 0; i < o->u.arr.len; i++)
			obj_free(o->u.arr.items[i]);
		free(o->u.arr.items);
		break;
	case PS_DICT:
		for (i = 0; i < o->u.dict.len; i++) {
			free(o->u.dict.ents[i].key);
			obj_free(o->u.dict.ents[i].val);
		}
		free(o->u.dict.ents);
		break;
	case PS_STREAM:
		obj_free(o->u.stm.dict);
		free(o->u.stm.data);
		break;
	default:
		break;
	}
	free(o);
}

void ps_obj_free(ps_obj *o)
{
	obj_free(o);
}

int ps_array_push(ps_obj *arr, ps_obj *item)
{
	if (!item)
		return PDFSTAMP_E_NOMEM;
	if (!arr || arr->kind != PS_ARRAY) {
		ps_obj_free(item);
		return PDFSTAMP_E_USAGE;
	}
	if (ps_array_grow((void **)&arr->u.arr.items, arr->u.arr.len, sizeof *arr->u.arr.items) < 0) {
		ps_obj_free(item);
		return PDFSTAMP_E_NOMEM;
	}
	arr->u.arr.items[arr->u.arr.len++] = item;
	return 0;
}

/* The allocation stays as it was: ps_array_grow's capacity for a shorter
 * array is never larger, so later pushes still fit. */
int ps_array_del(ps_obj *arr, size_t i)
{
	if (!arr || arr->kind != PS_ARRAY || i >= arr->u.arr.len)
		return PDFSTAMP_E_USAGE;
	ps_obj_free(arr->u.arr.items[i]);
	memmove(arr->u.arr.items + i, arr->u.arr.items + i + 1, (arr->u.arr.len - i - 1) * sizeof *arr->u.arr.items);
	arr->u.arr.len--;
	return 0;
}

/* The dictionary of a PS_DICT or of a PS_STREAM; NULL otherwise. */
static ps_obj *dict_of(const ps_obj *o)
{
	if (!o)
		return NULL;
	if (o->kind == PS_DICT)
		return (ps_obj *)o;
	if (o->kind == PS_STREAM && o->u.stm.dict && o->u.stm.dict->kind == PS_DICT)
		return o->u.stm.dict;
	return NULL;
}

int ps_dict_append_take(ps_obj *d, char *key, ps_obj *val)
{
	if (ps_array_grow((void **)&d->u.dict.ents, d->u.dict.len, sizeof *d->u.dict.ents) < 0) {
		free(key);
		ps_obj_free(val);
		return PDFSTAMP_E_NOMEM;
	}
	d->u.dict.ents[d->u.dict.len].key = key;
	d->u.dict.ents[d->u.dict.len].val = val;
	d->u.dict.len++;
	return 0;
}

int ps_dict_put(ps_obj *dict, const char *key, ps_obj *val)
{
	ps_obj *d = dict_of(dict);
	char *k;
	size_t i;

	if (!val)
		return PDFSTAMP_E_NOMEM;
	if (!d || !key) {
		ps_obj_free(val);
		return PDFSTAMP_E_USAGE;
	}
	for (i = 0; i < d->u.dict.len; i++) {
		if (strcmp(d->u.dict.ents[i].key, key) == 0) {
			if (d->u.dict.ents[i].val != val)
				ps_obj_free(d->u.dict.ents[i].val);
			d->u.dict.ents[i].val = val;
			return 0;
		}
	}
	k = (char *)dup_bytes(key, strlen(key));
	if (!k) {
		ps_obj_free(val);
		return PDFSTAMP_E_NOMEM;
	}
	return ps_dict_append_take(d, k, val);
}

/* Typed helpers: a NULL from the constructor reaches ps_dict_put as the
 * caller's allocation failure (note 2), so each is one line. */
int ps_dict_put_name(ps_obj *dict, const char *key, const char *name)
{
	return ps_dict_put(dict, key, ps_new_name(name));
}

int ps_dict_put_int(ps_obj *dict, const char *key, int64_t i)
{
	return ps_dict_put(dict, key, ps_new_int(i));
}

int ps_dict_put_real(ps_obj *dict, const char *key, double v)
{
	return ps_dict_put(dict, key, ps_new_real(v));
}

int ps_dict_put_bool(ps_obj *dict, const char *key, int b)
{
	return ps_dict_put(dict, key, ps_new_bool(b));
}

int ps_dict_put_ref(ps_obj *dict, const char *key, uint32_t num, uint16_t gen)
{
	return ps_dict_put(dict, key, ps_new_ref(num, gen));
}

int ps_dict_put_str(ps_obj *dict, const char *key, const void *p, size_t n)
{
	return ps_dict_put(dict, key, ps_new_str(p, n));
}

int ps_dict_del(ps_obj *dict, const char *key)
{
	ps_obj *d = dict_of(dict);
	size_t i;

	if (!d || !key)
		return 0;
	for (i = 0; i < d->u.dict.len; i++) {
		if (strcmp(d->u.dict.ents[i].key, key) == 0) {
			free(d->u.dict.ents[i].key);
			ps_obj_free(d->u.dict.ents[i].val);
			memmove(&d->u.dict.ents[i], &d->u.dict.ents[i + 1],
			        (d->u.dict.len - i - 1) * sizeof *d->u.dict.ents);
			d->u.dict.len--;
			return 0;
		}
	}
	return 0;
}

ps_obj *ps_dict_get(const ps_obj *dict, const char *key)
{
	const ps_obj *d = dict_of(dict);
	size_t i;

	if (!d || !key)
		return NULL;
	/* the first byte decides most comparisons without a call */
	for (i = 0; i < d->u.dict.len; i++)
		if (d->u.dict.ents[i].key[0] == key[0] && strcmp(d->u.dict.ents[i].key, key) == 0)
			return d->u.dict.ents[i].val;
	return NULL;
}

ps_obj *ps_array_get(const ps_obj *arr, size_t i)
{
	if (!arr || arr->kind != PS_ARRAY || i >= arr->u.arr.len)
		return NULL;
	return arr->u.arr.items[i];
}

size_t ps_array_len(const ps_obj *arr)
{
	if (!arr || arr->kind != PS_ARRAY)
		return 0;
	return arr->u.arr.len;
}

int ps_obj_is_name(const ps_obj *o, const char *name)
{
	return o && name && o->kind == PS_NAME && strcmp(o->u.name.p, name) == 0;
}

int ps_obj_int(const ps_obj *o, int64_t *out)
{
	if (!o || o->kind != PS_INT)
		return -1;
	*out = o->u.i;
	return 0;
}

int ps_obj_num(const ps_obj *o, double *out)
{
	if (!o)
		return -1;
	if (o->kind == PS_INT) {
		*out = (double)o->u.i;
		return 0;
	}
	if (o->kind == PS_REAL) {
		*out = o->u.real.v;
		return 0;
	}
	return -1;
}

ps_obj *ps_obj_copy(const ps_obj *o)
{
	ps_obj *c;
	size_t i;

	if (!o)
		return NULL;
	switch (o->kind) {
	case PS_NULL:
		return ps_new_null();
	case PS_BOOL:
		return ps_new_bool(o->u.b);
	case PS_INT:
		return ps_new_int(o->u.i);
	case PS_REAL:
		if (o->u.real.text)
			return ps_new_real_text(o->u.real.v, o->u.real.text, strlen(o->u.real.text));
		return ps_new_real(o->u.real.v);
	case PS_STR:
		c = ps_new_str(o->u.str.p, o->u.str.len);
		if (c)
			c->u.str.hex = o->u.str.hex;
		return c;
	case PS_NAME:
		return ps_new_name(o->u.name.p);
	case PS_ARRAY:
		c = ps_new_array();
		if (!c)
			return NULL;
		for (i = 0; i < o->u.arr.len; i++) {
			if (ps_array_push(c, ps_obj_copy(o->u.arr.items[i])) < 0) {
				ps_obj_free(c);
				return NULL;
			}
		}
		return c;
	case PS_DICT:
		c = ps_new_dict();
		if (!c)
			return NULL;
		for (i = 0; i < o->u.dict.len; i++) {
			char *k = (char *)dup_bytes(o->u.dict.ents[i].key, strlen(o->u.dict.ents[i].key));
			ps_obj *v = ps_obj_copy(o->u.dict.ents[i].val);

			if (!k || !v) {
				free(k);
				ps_obj_free(v);
				ps_obj_free(c);
				return NULL;
			}
			if (ps_dict_append_take(c, k, v) < 0) {
				ps_obj_free(c);
				return NULL;
			}
		}
		return c;
	case PS_REF:
		return ps_new_ref(o->u.ref.num, o->u.ref.gen);
	case PS_STREAM: {
		ps_obj *d = ps_obj_copy(o->u.stm.dict);
		uint8_t *data = NULL;

		if (!d)
			return NULL;
		if (o->u.stm.data) {
			data = dup_bytes(o->u.stm.data, o->u.stm.len);
			if (!data) {
				ps_obj_free(d);
				return NULL;
			}
		}
		c = ps_new_stream(d, data, o->u.stm.len);
		if (c)
			c->u.stm.off = o->u.stm.off;
		return c;
	}
	}
	return NULL;
}

/* ---- string walk --------------------------------------------------------------- */

static int walk(ps_obj *o, ps_str_fn fn, void *ud, const ps_obj *pd, const char *key)
{
	size_t i;
	int rc;

	if (!o)
		return 0;
	switch (o->kind) {
	case PS_STR:
		return fn(ud, o, pd, key);
	case PS_ARRAY:
		for (i = 0; i < o->u.arr.len; i++)
			if ((rc = walk(o->u.arr.items[i], fn, ud, pd, key)) != 0)
				return rc;
		return 0;
	case PS_DICT:
		for (i = 0; i < o->u.dict.len; i++)
			if ((rc = walk(o->u.dict.ents[i].val, fn, ud, o, o->u.dict.ents[i].key)) != 0)
				return rc;
		return 0;
	case PS_STREAM:
		return walk(o->u.stm.dict, fn, ud, NULL, NULL);
	default:
		return 0;
	}
}

/* PARENT_DICT and KEY name the nearest enclosing dictionary and the key
 * under which the string sits, directly or inside (nested) arrays; both
 * are NULL for a string that is not inside a dictionary. */
int ps_obj_walk_strings(ps_obj *o, ps_str_fn fn, void *ud)
{
	return walk(o, fn, ud, NULL, NULL);
}

int ps_str_set(ps_obj *str, const void *p, size_t n)
{
	uint8_t *np;

	if (!str || str->kind != PS_STR || n == SIZE_MAX)
		return PDFSTAMP_E_USAGE;
	np = malloc(n + 1);
	if (!np)
		return PDFSTAMP_E_NOMEM;
	if (n)
		memcpy(np, p, n);
	np[n] = 0;
	free(str->u.str.p);
	str->u.str.p = np;
	str->u.str.len = n;
	return 0;
}

/* ---- comparison ---------------------------------------------------------------- */

int ps_obj_equal(const ps_obj *a, const ps_obj *b, int skip_length)
{
	size_t i;

	if (!a || !b)
		return a == b;
	if (a->kind != b->kind) {
		/* integers and reals may round-trip into each other */
		double x, y;
		if (ps_obj_num(a, &x) == 0 && ps_obj_num(b, &y) == 0)
			return x == y;
		return 0;
	}
	switch (a->kind) {
	case PS_NULL: return 1;
	case PS_BOOL: return !a->u.b == !b->u.b;
	case PS_INT: return a->u.i == b->u.i;
	case PS_REAL: return a->u.real.v == b->u.real.v ||
	                     (a->u.real.v - b->u.real.v < 1e-4 && b->u.real.v - a->u.real.v < 1e-4);
	case PS_STR: return a->u.str.len == b->u.str.len && memcmp(a->u.str.p, b->u.str.p, a->u.str.len) == 0;
	case PS_NAME: return strcmp(a->u.name.p, b->u.name.p) == 0;
	case PS_REF: return a->u.ref.num == b->u.ref.num && a->u.ref.gen == b->u.ref.gen;
	case PS_ARRAY:
		if (a->u.arr.len != b->u.arr.len)
			return 0;
		for (i = 0; i < a->u.arr.len; i++)
			if (!ps_obj_equal(a->u.arr.items[i], b->u.arr.items[i], 0))
				return 0;
		return 1;
	case PS_DICT: {
		size_t na = 0, nb = 0;
		for (i = 0; i < a->u.dict.len; i++) {
			const char *k = a->u.dict.ents[i].key;
			if (skip_length && strcmp(k, "Length") == 0)
				continue;
			na++;
			if (!ps_obj_equal(a->u.dict.ents[i].val, ps_dict_get(b, k), 0))
				return 0;
		}
		for (i = 0; i < b->u.dict.len; i++)
			if (!(skip_length && strcmp(b->u.dict.ents[i].key, "Length") == 0))
				nb++;
		return na == nb;
	}
	case PS_STREAM:
		return ps_obj_equal(a->u.stm.dict, b->u.stm.dict, 1);
	}
	return 0;
}
