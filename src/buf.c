/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buf.c - growable byte buffer.
 *
 * Appends never fail loudly: an allocation failure sets the sticky `oom`
 * flag and later appends become no-ops, so a builder can emit many pieces
 * and check once (the SQLite StrAccum / curl dynbuf pattern).  A `secret`
 * buffer wipes its old storage whenever it grows and when it is freed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ps.h"

/* Bulk buffers (ps_buf_bulk_alloc).  Where memory is fresh, its first touch
 * dominates a streaming pass: on the 2-vCPU VMs of the benchmarks
 * (bench/results, 2026-12-02) a 4 KB page costs ~15 us when a program
 * first writes it and ~6 us more when the kernel first copies into it (a
 * pread), against ~0.4 us to copy its bytes; filling 64 MB of fresh 4 KB
 * pages took 290-350 ms, of 2 MB pages 18-125 ms.  So buffers of 1 MB and
 * more (256 faults at least) are whole 2 MB pages, on a 2 MB boundary, and
 * ask for huge pages (the kernel uses one only for a whole aligned 2 MB of
 * the mapping: the size is rounded up, which the resident set then shows);
 * smaller ones are plain malloc.  posix_memalign, not mmap: one allocator,
 * and the allocation-failure test (tests/check_alloc.c) sees it.  A ps_buf
 * that grows to 1 MB moves to such a buffer (ps_buf_reserve), so every
 * large buffer -- an xref table being written, a stream decrypted -- is
 * filled at that cost, not only the readers'. */
#define BULK_PAGE ((size_t)2 << 20)
#define BULK_MIN ((size_t)1 << 20)

/* Note in ps.h: the runs of BASE already in order are counted in one
 * pass and merged pairwise (a natural merge sort: O(n log runs)
 * comparisons, O(n) for an ordered array), through a buffer in bulk: a
 * whole file's table at 10 bytes or more per object is past 1 MB from
 * 100,000 objects on, where qsort's own buffer would be fresh 4 KB pages.
 * Up to SORT_STACK_RUNS run starts are kept on the stack; without memory
 * for the merge, qsort. */
#define SORT_STACK_RUNS 64

static void merge_runs(const char *src, char *dst, size_t elem, const size_t *rb, size_t nr,
                       int (*cmp)(const void *, const void *))
{
	size_t r;

	for (r = 0; r < nr; r += 2) { /* runs r and r + 1 (when there is one) into dst */
		size_t i = rb[r], m = rb[r + 1], e = r + 2 <= nr ? rb[r + 2] : m, j = m, o = rb[r];

		while (i < m && j < e)
			if (cmp(src + j * elem, src + i * elem) < 0)
				memcpy(dst + o++ * elem, src + j++ * elem, elem);
			else
				memcpy(dst + o++ * elem, src + i++ * elem, elem);
		memcpy(dst + o * elem, src + i * elem, (m - i) * elem);
		o += m - i;
		memcpy(dst + o * elem, src + j * elem, (e - j) * elem);
	}
}

/* What ps_buf_bulk_alloc(N) gives: N, or whole huge pages; 0 on overflow. */
static size_t bulk_size(size_t n)
{
	if (n < BULK_MIN)
		return n;
	if (n > SIZE_MAX - BULK_PAGE)
		return 0;
	return (n + BULK_PAGE - 1) & ~(BULK_PAGE - 1);
}

void *ps_buf_bulk_alloc(size_t n)
{
	void *p;

	if (n < BULK_MIN)
		return malloc(n);
	if (!(n = bulk_size(n)))
		return NULL;
	if (posix_memalign(&p, BULK_PAGE, n) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, n, MADV_HUGEPAGE); /* a hint: its failure changes nothing */
#endif
	return p;
}

void ps_vec_sort(void *base, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	size_t rb0[SORT_STACK_RUNS + 1], *rb = rb0, nr = 1, i, k;
	char *a = base, *t, *src, *dst;

	if (n < 2 || elem == 0)
		return;
	for (i = 1; i < n; i++)
		nr += cmp(a + (i - 1) * elem, a + i * elem) > 0;
	if (nr == 1)
		return;
	if (n > SIZE_MAX / elem || !(t = ps_buf_bulk_alloc(n * elem)))
		goto fallback;
	if (nr > SORT_STACK_RUNS && !(rb = malloc((nr + 1) * sizeof *rb))) {
		free(t);
		goto fallback;
	}
	for (i = 1, k = nr, nr = 1, rb[0] = 0; i < n; i++)
		if (cmp(a + (i - 1) * elem, a + i * elem) > 0) {
			if (nr == k) { /* a comparator that answers otherwise the second time */
				if (rb != rb0)
					free(rb);
				free(t);
				goto fallback;
			}
			rb[nr++] = i;
		}
	rb[nr] = n; /* runs: [rb[k], rb[k + 1]) for k < nr */
	src = a;
	dst = t;
	while (nr > 1) {
		merge_runs(src, dst, elem, rb, nr, cmp);
		for (k = 0; 2 * k < nr; k++) /* the merged runs start where every other run did */
			rb[k] = rb[2 * k];
		nr = (nr + 1) / 2;
		rb[nr] = n;
		src = dst;
		dst = src == a ? t : a;
	}
	if (src != a)
		memcpy(a, src, n * elem);
	if (rb != rb0)
		free(rb);
	free(t);
	return;
fallback:
	qsort(base, n, elem, cmp);
}

int ps_vec_grow(void **p, size_t n, size_t elem)
{
	size_t ncap;
	void *np;

	/* Capacity 4, 8, 16, ...: grow when N is 0 or a power of two >= 4. */
	if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
		return 0;
	ncap = n ? n * 2 : 4;
	if (ncap < n || elem == 0 || ncap > SIZE_MAX / elem)
		return -1;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -1;
	*p = np;
	return 0;
}

int ps_vec_adopt(void **p, const void *src, size_t n, size_t elem)
{
	size_t cap = 4;

	*p = NULL;
	if (n == 0)
		return 0;
	/* the capacity ps_vec_grow would have reached for N elements */
	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			return -1;
		cap *= 2;
	}
	if (elem == 0 || cap > SIZE_MAX / elem || !(*p = malloc(cap * elem)))
		return -1;
	memcpy(*p, src, n * elem);
	return 0;
}

int ps_buf_reserve(ps_buf *b, size_t extra)
{
	size_t need, ncap;
	uint8_t *p;

	if (b->oom)
		return -1;
	if (extra > SIZE_MAX - b->len)
		goto fail;
	need = b->len + extra;
	if (need <= b->cap)
		return 0;
	/* a first reservation past 64 KB is a buffer sized for one read (a
	 * segment, a stream): its size, not the next power of two */
	ncap = b->cap ? b->cap : need > ((size_t)64 << 10) ? need : 64;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2) {
			ncap = need;
			break;
		}
		ncap *= 2;
	}
	if (ncap >= BULK_MIN && !(ncap = bulk_size(ncap)))
		goto fail;
	if (b->secret || ncap >= BULK_MIN) { /* a fresh buffer: wiped, or in bulk (note) */
		p = ps_buf_bulk_alloc(ncap);
		if (!p)
			goto fail;
		if (b->len)
			memcpy(p, b->data, b->len);
		if (b->data) {
			if (b->secret)
				ps_wipe(b->data, b->cap);
			free(b->data);
		}
	} else {
		p = realloc(b->data, ncap);
		if (!p)
			goto fail;
	}
	b->data = p;
	b->cap = ncap;
	return 0;
fail:
	b->oom = 1;
	return -1;
}

/* ps_buf_append and ps_buf_putc are inline in ps.h; they come here only
 * when the capacity does not suffice (or N is 0, or the buffer is oom). */
void ps_buf_append_slow(ps_buf *b, const void *p, size_t n)
{
	if (n == 0 || ps_buf_reserve(b, n) < 0)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void ps_buf_puts(ps_buf *b, const char *s)
{
	ps_buf_append(b, s, strlen(s));
}

void ps_buf_printf(ps_buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[128];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if ((size_t)n < sizeof small) {
		ps_buf_append(b, small, (size_t)n);
		return;
	}
	if (ps_buf_reserve(b, (size_t)n + 1) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void ps_buf_reset(ps_buf *b)
{
	if (b->secret && b->data)
		ps_wipe(b->data, b->len);
	b->len = 0;
}

void ps_buf_free(ps_buf *b)
{
	if (!b)
		return;
	if (b->data) {
		if (b->secret)
			ps_wipe(b->data, b->cap);
		free(b->data);
	}
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

uint8_t *ps_buf_detach(ps_buf *b, size_t *len)
{
	uint8_t *p;

	if (b->oom) {
		ps_buf_free(b);
		return NULL;
	}
	p = b->data;
	if (!p)
		p = malloc(1); /* an empty but valid allocation */
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
