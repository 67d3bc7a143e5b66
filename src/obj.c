/* SPDX-License-Identifier: Apache-2.0 */
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
 *     The parser's constructors (ps_new_str_take, ps_arena_name_room),
 *     which take bytes it decoded, rely on it for these two properties.
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
 *     (OBJ_INL set; ps_arena_name_room, ps_arena_real_text, ps_new_name): one
 *     malloc per parsed name instead of two.  Only obj.c frees these
 *     fields or replaces them, and it looks at the flags; other code only
 *     reads them, so for every caller nothing changed.
 *  8. Dictionary keys: the common names of ISO 32000-2 (keytab below, in
 *     read-only memory) are not copied; a key spelled like one of them
 *     points into the table (ps_dict_key_dup), any other key is its own
 *     malloc'd copy.  Keys are only read outside this file and parse.c,
 *     and both free them with ps_dict_key_free, which leaves the table's
 *     pointers alone: a parsed dictionary costs one allocation less per
 *     entry, with the same bytes in every key (issue 16).
 *  9. The arena (ps_arena): the rewrite and its self-check parse each
 *     object, change it a little and free it at once, millions of small
 *     objects (integers of /Widths arrays, references of /Kids); their
 *     parser allocates them from an arena's chunks instead (OBJ_ARENA on
 *     the object, OBJ_ABUF when its items, entries or string bytes lie
 *     there too).  Such a tree keeps every rule above: ps_obj_free walks
 *     it and frees what was malloc'd later (a value put, an array grown:
 *     an OBJ_ABUF buffer is first copied out to malloc, ps_str_set copies
 *     a longer string out) and leaves the arena's memory alone; keys are
 *     never in the arena (shared or malloc'd, note 8).  The arena's owner
 *     frees every tree before ps_arena_reset (rewrite.c run_batch,
 *     rwcheck.c chk_run); under AddressSanitizer the memory of a reset
 *     arena is poisoned, so a tree that outlived it shows at once.
 *     Objects for anyone else (the document's cache, the CLI) never come
 *     from an arena.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"

#if defined(__SANITIZE_ADDRESS__)
#define PS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PS_ASAN 1
#endif
#endif
#ifdef PS_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ARENA_POISON(p, n) ((void)(p), (void)(n))
#define ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* ps_obj.flags (notes 7 and 9) */
#define OBJ_INL   1     /* u.name.p or u.real.text follows the object itself */
#define OBJ_ARENA 2     /* the object lies in an arena: never free()d */
#define OBJ_ABUF  4     /* its items, entries or string bytes lie in the arena */

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

/* ---- dictionary keys (note 8) ---------------------------------------------------- */

/* The shared keys, grouped by length, in byte order within a group;
 * keygrp[L] is the group of length L: its first byte in keytab and its
 * count (each key takes L + 1 bytes there).  Generated; tests/check_obj.c
 * checks the layout. */
#define KEY_MAXLEN 17
static const char keytab[1806] =
	"A\0D\0E\0F\0H\0I\0K\0M\0N\0O\0P\0Q\0R\0S\0T\0U\0V\0W\0AP\0AS\0BM\0C0\0C1\0CA\0CF\0CS\0"
	"DA\0DR\0DW\0EF\0FT\0Ff\0Ft\0IC\0ID\0LC\0LJ\0LW\0MK\0ML\0NM\0OE\0On\0Pg\0RC\0SA\0TK\0UE\0"
	"UF\0W2\0ca\0AIS\0Alt\0Ann\0App\0CFM\0IRT\0Obj\0Off\0Opt\0Sig\0URI\0BBox\0Cert\0Desc\0"
	"Dest\0Font\0Info\0Kern\0Kids\0Lang\0Last\0Mask\0Name\0Next\0Nums\0OCGs\0Open\0Prev\0"
	"Rect\0Root\0Size\0StmF\0StrF\0Tabs\0Type\0Count\0Dests\0First\0Flags\0Gamma\0Group\0"
	"Index\0Names\0Pages\0Perms\0Popup\0Print\0Range\0SMask\0StemH\0StemV\0Title\0Usage\0"
	"Width\0XStep\0YStep\0Action\0Annots\0ArtBox\0Ascent\0Author\0Border\0Bounds\0CIDSet\0"
	"Colors\0Coords\0Decode\0Domain\0Encode\0Extend\0Fields\0Filter\0Height\0Intent\0Length\0"
	"Limits\0Marked\0Matrix\0Params\0Parent\0Reason\0Rotate\0Widths\0Columns\0Creator\0"
	"CropBox\0Descent\0Encrypt\0Extends\0Leading\0ModDate\0Pattern\0Private\0ProcSet\0"
	"RoleMap\0Shading\0Subject\0Subtype\0Threads\0Trapped\0TrimBox\0Version\0XHeight\0"
	"XObject\0XRefStm\0AcroForm\0AvgWidth\0BaseFont\0BleedBox\0CheckSum\0ClassMap\0Contents\0"
	"Encoding\0FontBBox\0FontFile\0FontName\0FormType\0Function\0Keywords\0LastChar\0"
	"Location\0MarkInfo\0MaxWidth\0MediaBox\0Metadata\0Ordering\0Outlines\0PageMode\0"
	"Producer\0Registry\0SigFlags\0Alternate\0AuthEvent\0ByteRange\0CapHeight\0DeviceRGB\0"
	"ExtGState\0FirstChar\0FontFile2\0FontFile3\0Functions\0ImageMask\0PaintType\0PieceInfo\0"
	"Predictor\0Reference\0Resources\0SubFilter\0Threshold\0ToUnicode\0ActualText\0"
	"Background\0BlackPoint\0ColorSpace\0Extensions\0FontFamily\0JavaScript\0OpenAction\0"
	"PageLabels\0PageLayout\0ParentTree\0Prop_Build\0Properties\0QuadPoints\0Quadpoints\0"
	"Supplement\0TilingType\0WhitePoint\0BaseVersion\0CIDToGIDMap\0ContactInfo\0DecodeParms\0"
	"EarlyChange\0Interpolate\0ItalicAngle\0ShadingType\0CreationDate\0DocTimeStamp\0"
	"LastModified\0MissingWidth\0OCProperties\0StructParent\0CIDSystemInfo\0EmbeddedFiles\0"
	"StructParents\0ContentsLength\0ExtensionLevel\0FontDescriptor\0StructTreeRoot\0"
	"DescendantFonts\0EncryptMetadata\0NeedAppearances\0BitsPerComponent\0VerticalPosition\0"
	"ParentTreeNextKey\0ViewerPreferences";
static const struct { uint16_t off, n; } keygrp[KEY_MAXLEN + 1] = {
	{0, 0}, {0, 18}, {36, 33}, {135, 11}, {179, 24}, {299, 21},
	{425, 27}, {614, 22}, {790, 26}, {1024, 19}, {1214, 18}, {1412, 8},
	{1508, 6}, {1586, 3}, {1628, 4}, {1688, 3}, {1736, 2}, {1770, 2},
};

/* The shared copy of S[0..N), or NULL if S is not in the table. */
static char *key_shared(const char *s, size_t n)
{
	const char *k, *end;

	if (n == 0 || n > KEY_MAXLEN)
		return NULL;
	k = keytab + keygrp[n].off;
	for (end = k + (size_t)keygrp[n].n * (n + 1); k < end; k += n + 1)
		if (k[0] == s[0] && memcmp(k, s, n) == 0)
			return (char *)k;   /* never written: keys are only read (note 8) */
	return NULL;
}

char *ps_dict_key_dup(const char *s, size_t n)
{
	char *k = key_shared(s, n);

	return k ? k : (char *)dup_bytes(s, n);
}

void ps_dict_key_free(char *key)
{
	if ((uintptr_t)key - (uintptr_t)keytab >= sizeof keytab)
		free(key);
}

int ps_dict_key_is_shared(const char *key)
{
	return (uintptr_t)key - (uintptr_t)keytab < sizeof keytab;
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
	o->flags = OBJ_INL;
	*extra = (char *)(o + 1);
	return o;
}

/* ---- the arena (note 9) ------------------------------------------------------------ */

#define ARENA_CHUNK 65536               /* bytes per chunk */
#define ARENA_BIG (ARENA_CHUNK / 4)     /* larger requests get a block of their own */
#define ARENA_KEEP 16                   /* chunks kept by a reset (1 MB) */

typedef union arena_chunk {
	union arena_chunk *next;            /* the data follows, aligned like malloc's */
	max_align_t align;
} arena_chunk;

struct ps_arena {
	arena_chunk *chunks;    /* in order of use; ps_arena_reset keeps ARENA_KEEP */
	arena_chunk *cur;       /* the one being filled, NULL before the first */
	size_t used;            /* bytes of cur in use */
	arena_chunk *big;       /* blocks over ARENA_BIG, freed by ps_arena_reset */
};

ps_arena *ps_arena_new(void)
{
	ps_arena *a = malloc(sizeof *a);

	if (a)
		memset(a, 0, sizeof *a);
	return a;
}

/* N bytes aligned like malloc's, NULL on OOM. */
static void *arena_alloc(ps_arena *a, size_t n)
{
	const size_t al = _Alignof(max_align_t);
	arena_chunk *c;
	void *p;

	if (n > ARENA_BIG) {
		if (n > SIZE_MAX - sizeof *c || !(c = malloc(sizeof *c + n)))
			return NULL;
		c->next = a->big;
		a->big = c;
		return c + 1;
	}
	n = (n + al - 1) & ~(al - 1);
	if (!a->cur || a->used + n > ARENA_CHUNK) {
		c = a->cur ? a->cur->next : a->chunks;
		if (!c) {
			if (!(c = malloc(sizeof *c + ARENA_CHUNK)))
				return NULL;
			c->next = NULL;
			ARENA_POISON(c + 1, ARENA_CHUNK);
			if (a->cur)
				a->cur->next = c;
			else
				a->chunks = c;
		}
		a->cur = c;
		a->used = 0;
	}
	p = (char *)(a->cur + 1) + a->used;
	a->used += n;
	ARENA_UNPOISON(p, n);
	return p;
}

void ps_arena_reset(ps_arena *a)
{
	arena_chunk *c;
	size_t n;

	if (!a)
		return;
	while ((c = a->big) != NULL) {
		a->big = c->next;
		free(c);
	}
	for (c = a->chunks, n = 0; c; c = c->next) {
		ARENA_POISON(c + 1, ARENA_CHUNK);
		if (++n == ARENA_KEEP) { /* what one huge object took goes back */
			arena_chunk *rest = c->next;
			c->next = NULL;
			while ((c = rest) != NULL) {
				rest = c->next;
				ARENA_UNPOISON(c + 1, ARENA_CHUNK);
				free(c);
			}
			break;
		}
	}
	a->cur = NULL;
	a->used = 0;
}

void ps_arena_free(ps_arena *a)
{
	arena_chunk *c;

	if (!a)
		return;
	ps_arena_reset(a);
	while ((c = a->chunks) != NULL) {
		a->chunks = c->next;
		ARENA_UNPOISON(c + 1, ARENA_CHUNK);
		free(c);
	}
	free(a);
}

ps_obj *ps_arena_obj(ps_arena *a, ps_kind kind)
{
	ps_obj *o;

	if (!a)
		return obj_alloc(kind);
	o = arena_alloc(a, sizeof *o);
	if (o) {
		memset(o, 0, sizeof *o);
		o->kind = kind;
		o->flags = OBJ_ARENA;
	}
	return o;
}

/* obj_alloc_extra in arena A (or malloc). */
static ps_obj *arena_extra(ps_arena *a, ps_kind kind, size_t n, char **extra)
{
	ps_obj *o;

	if (!a)
		return obj_alloc_extra(kind, n, extra);
	if (n > SIZE_MAX - sizeof *o - 1)
		return NULL;
	o = arena_alloc(a, sizeof *o + n + 1);
	if (!o)
		return NULL;
	memset(o, 0, sizeof *o);
	o->kind = kind;
	o->flags = OBJ_ARENA | OBJ_INL;
	*extra = (char *)(o + 1);
	return o;
}

int ps_arena_adopt(ps_arena *a, ps_obj *o, void **p, const void *src, size_t n, size_t elem)
{
	if (!a)
		return ps_vec_adopt(p, src, n, elem);
	*p = NULL;
	if (n == 0)
		return 0;
	if (elem == 0 || n > SIZE_MAX / elem || !(*p = arena_alloc(a, n * elem)))
		return -1;
	memcpy(*p, src, n * elem);
	o->flags |= OBJ_ABUF;
	return 0;
}

ps_obj *ps_arena_str(ps_arena *a, const void *p, size_t n, int hex)
{
	ps_obj *o;
	char *b;

	if (!a) {
		o = ps_new_str(p, n);
		if (o)
			o->u.str.hex = hex;
		return o;
	}
	if (!p && n)
		return NULL;
	o = arena_extra(a, PS_STR, n, &b);
	if (!o)
		return NULL;
	o->flags = OBJ_ARENA | OBJ_ABUF;
	if (n)
		memcpy(b, p, n);
	b[n] = 0;
	o->u.str.p = (uint8_t *)b;
	o->u.str.len = n;
	o->u.str.hex = hex;
	return o;
}

/* Before the items or entries of O grow: an OBJ_ABUF buffer P of N
 * elements copied out to malloc (the capacity ps_vec_grow implies).
 * 0 or -1 on OOM (O unchanged). */
static int abuf_out(ps_obj *o, void **p, size_t n, size_t elem)
{
	void *np;

	if (!(o->flags & OBJ_ABUF))
		return 0;
	if (ps_vec_adopt(&np, *p, n, elem) < 0)
		return -1;
	*p = np;
	o->flags &= ~OBJ_ABUF;
	return 0;
}

ps_obj *ps_arena_name_room(ps_arena *a, size_t n)
{
	char *p;
	ps_obj *o = arena_extra(a, PS_NAME, n, &p);

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
	o = ps_arena_name_room(NULL, n);
	if (o) {
		memcpy(o->u.name.p, name, n + 1);
		o->u.name.len = n;
	}
	return o;
}

ps_obj *ps_arena_real_text(ps_arena *a, double v, const char *text, size_t n)
{
	char *p;
	ps_obj *o = arena_extra(a, PS_REAL, n, &p);

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
		if (!(o->flags & OBJ_INL))
			free(o->u.real.text);
		break;
	case PS_STR:
		if (!(o->flags & OBJ_ABUF))
			free(o->u.str.p);
		break;
	case PS_NAME:
		if (!(o->flags & OBJ_INL))
			free(o->u.name.p);
		break;
	case PS_ARRAY:
		for (i = 0; i < o->u.arr.len; i++)
			obj_free(o->u.arr.items[i]);
		if (!(o->flags & OBJ_ABUF))
			free(o->u.arr.items);
		break;
	case PS_DICT:
		for (i = 0; i < o->u.dict.len; i++) {
			ps_dict_key_free(o->u.dict.ents[i].key);
			obj_free(o->u.dict.ents[i].val);
		}
		if (!(o->flags & OBJ_ABUF))
			free(o->u.dict.ents);
		break;
	case PS_STREAM:
		obj_free(o->u.stm.dict);
		free(o->u.stm.data);
		break;
	default:
		break;
	}
	if (!(o->flags & OBJ_ARENA))
		free(o);
}

void ps_obj_free(ps_obj *o)
{
	obj_free(o);
}

static int each_ref(const ps_obj *o, int (*fn)(void *, uint32_t), void *arg, int depth)
{
	size_t i;
	int rc = 0;

	if (!o || depth > PS_MAX_DEPTH + 1) /* deeper than the parser builds */
		return 0;
	switch (o->kind) {
	case PS_REF:
		return fn(arg, o->u.ref.num);
	case PS_ARRAY:
		for (i = 0; i < o->u.arr.len && rc == 0; i++)
			rc = each_ref(o->u.arr.items[i], fn, arg, depth + 1);
		return rc;
	case PS_DICT:
		for (i = 0; i < o->u.dict.len && rc == 0; i++)
			rc = each_ref(o->u.dict.ents[i].val, fn, arg, depth + 1);
		return rc;
	case PS_STREAM:
		return each_ref(o->u.stm.dict, fn, arg, depth + 1);
	default:
		return 0;
	}
}

int ps_obj_each_ref(const ps_obj *o, int (*fn)(void *, uint32_t), void *arg)
{
	return each_ref(o, fn, arg, 0);
}

int ps_array_push(ps_obj *arr, ps_obj *item)
{
	if (!item)
		return PDFSTAMP_E_NOMEM;
	if (!arr || arr->kind != PS_ARRAY) {
		ps_obj_free(item);
		return PDFSTAMP_E_USAGE;
	}
	if (abuf_out(arr, (void **)&arr->u.arr.items, arr->u.arr.len,
	             sizeof *arr->u.arr.items) < 0 ||
	    ps_vec_grow((void **)&arr->u.arr.items, arr->u.arr.len, sizeof *arr->u.arr.items) < 0) {
		ps_obj_free(item);
		return PDFSTAMP_E_NOMEM;
	}
	arr->u.arr.items[arr->u.arr.len++] = item;
	return 0;
}

/* The allocation stays as it was: ps_vec_grow's capacity for a shorter
 * array is never larger, so later pushes still fit. */
int ps_array_del(ps_obj *arr, size_t i)
{
	if (!arr || arr->kind != PS_ARRAY || i >= arr->u.arr.len)
		return PDFSTAMP_E_USAGE;
	ps_obj_free(arr->u.arr.items[i]);
	memmove(arr->u.arr.items + i, arr->u.arr.items + i + 1,
	        (arr->u.arr.len - i - 1) * sizeof *arr->u.arr.items);
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
	if (abuf_out(d, (void **)&d->u.dict.ents, d->u.dict.len, sizeof *d->u.dict.ents) < 0 ||
	    ps_vec_grow((void **)&d->u.dict.ents, d->u.dict.len, sizeof *d->u.dict.ents) < 0) {
		ps_dict_key_free(key);
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
	k = ps_dict_key_dup(key, strlen(key));
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
			ps_dict_key_free(d->u.dict.ents[i].key);
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
			return ps_arena_real_text(NULL, o->u.real.v, o->u.real.text,
			                          strlen(o->u.real.text));
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
			char *k = ps_dict_key_dup(o->u.dict.ents[i].key,
			                          strlen(o->u.dict.ents[i].key));
			ps_obj *v = ps_obj_copy(o->u.dict.ents[i].val);

			if (!k || !v) {
				ps_dict_key_free(k);
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
			if ((rc = walk(o->u.dict.ents[i].val, fn, ud, o,
			               o->u.dict.ents[i].key)) != 0)
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
	if (n <= str->u.str.len) {
		/* not longer (a decryption): in place, the allocation holds
		 * len + 1 >= n + 1 bytes; P may point into it */
		if (n)
			memmove(str->u.str.p, p, n);
		str->u.str.p[n] = 0;
		str->u.str.len = n;
		return 0;
	}
	np = malloc(n + 1);
	if (!np)
		return PDFSTAMP_E_NOMEM;
	if (n)
		memcpy(np, p, n);
	np[n] = 0;
	if (!(str->flags & OBJ_ABUF))
		free(str->u.str.p);
	str->flags &= ~OBJ_ABUF;
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
	case PS_STR: return a->u.str.len == b->u.str.len &&
	                    memcmp(a->u.str.p, b->u.str.p, a->u.str.len) == 0;
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
