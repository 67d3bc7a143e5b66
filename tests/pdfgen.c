/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pdfgen.c - see pdfgen.h.
 */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pdfgen.h"

void pg_start(pg *p)
{
	memset(p, 0, sizeof *p);
	ps_buf_puts(&p->b, "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n");
}

void pg_obj(pg *p, uint32_t num, uint16_t gen, const char *fmt, ...)
{
	char body[4096];
	va_list ap;

	ck_assert_uint_lt(num, PG_MAX);
	va_start(ap, fmt);
	ck_assert_int_lt(vsnprintf(body, sizeof body, fmt, ap), (int)sizeof body);
	va_end(ap);
	p->off[num] = (int64_t)p->b.len;
	p->gen[num] = gen;
	ps_buf_printf(&p->b, "%u %u obj\n%s\nendobj\n", num, gen, body);
}

void pg_stream(pg *p, uint32_t num, const char *dict, const void *data, size_t n)
{
	ck_assert_uint_lt(num, PG_MAX);
	p->off[num] = (int64_t)p->b.len;
	p->gen[num] = 0;
	ps_buf_printf(&p->b, "%u 0 obj\n<<%s/Length %zu>>\nstream\n", num, dict, n);
	ps_buf_append(&p->b, data, n);
	ps_buf_puts(&p->b, "\nendstream\nendobj\n");
}

pg_ent pg_used(const pg *p, uint32_t num)
{
	pg_ent e = {num, 1, (uint64_t)p->off[num], p->gen[num]};

	return e;
}

/* The end of the run of consecutive numbers that starts at ENTS[I]. */
static size_t run_end(const pg_ent *ents, size_t n, size_t i)
{
	size_t j;

	for (j = i + 1; j < n && ents[j].num == ents[j - 1].num + 1; j++)
		;
	return j;
}

int64_t pg_table(pg *p, const pg_ent *ents, size_t n, const char *trailer)
{
	int64_t x = (int64_t)p->b.len;
	size_t i, j;

	ps_buf_puts(&p->b, "xref\n");
	for (i = 0; i < n; i = j) {
		j = run_end(ents, n, i);
		ps_buf_printf(&p->b, "%u %zu\n", ents[i].num, j - i);
		for (; i < j; i++)
			ps_buf_printf(&p->b, "%010llu %05u %c\r\n", (unsigned long long)ents[i].f2, ents[i].f3,
			              ents[i].type ? 'n' : 'f');
	}
	ps_buf_printf(&p->b, "trailer\n%s\nstartxref\n%lld\n%%%%EOF\n", trailer, (long long)x);
	return x;
}

int64_t pg_xref_stream(pg *p, uint32_t xnum, pg_ent *ents, size_t n, const char *dict_extra)
{
	int64_t x = (int64_t)p->b.len;
	ps_buf rows = PS_BUF_INIT, dict = PS_BUF_INIT;
	size_t i, j;
	int k;

	ps_buf_puts(&dict, "/Type/XRef/W[1 4 2]/Index[");
	for (i = 0; i < n; i = j) {
		j = run_end(ents, n, i);
		ps_buf_printf(&dict, "%s%u %zu", i ? " " : "", ents[i].num, j - i);
	}
	ps_buf_printf(&dict, "]%s", dict_extra);
	for (i = 0; i < n; i++) {
		if (ents[i].num == xnum)
			ents[i].f2 = (uint64_t)x;
		ps_buf_putc(&rows, ents[i].type);
		for (k = 3; k >= 0; k--)
			ps_buf_putc(&rows, (int)(ents[i].f2 >> (8 * k)) & 0xff);
		ps_buf_putc(&rows, (int)(ents[i].f3 >> 8) & 0xff);
		ps_buf_putc(&rows, (int)ents[i].f3 & 0xff);
	}
	ps_buf_putc(&dict, 0);
	ck_assert(!rows.oom && !dict.oom);
	pg_stream(p, xnum, (const char *)dict.data, rows.data, rows.len);
	ps_buf_printf(&p->b, "startxref\n%lld\n%%%%EOF\n", (long long)x);
	ps_buf_free(&rows);
	ps_buf_free(&dict);
	return x;
}

const char *pg_save(pg *p, const char *dir, const char *name)
{
	static char path[512];
	FILE *f;

	ck_assert(!p->b.oom);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p->b.data, 1, p->b.len, f), p->b.len);
	ck_assert_int_eq(fclose(f), 0);
	ps_buf_free(&p->b);
	return path;
}

const char *pg_tmpdir(const char *tag)
{
	static char dir[128];

	snprintf(dir, sizeof dir, "/tmp/%s-XXXXXX", tag);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

void pg_rmdir(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

uint8_t *pg_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *d;
	long len;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_ge(len, 0);
	rewind(f);
	d = malloc((size_t)len + 1);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(fread(d, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return d;
}

int64_t pg_table_all(pg *p, const char *trailer_extra)
{
	pg_ent ents[PG_MAX];
	char trailer[512];
	uint32_t i, n = PG_MAX;

	while (n > 1 && !p->off[n - 1])
		n--;
	for (i = 0; i < n; i++) {
		pg_ent free_ent = {i, 0, 0, i ? 0 : 65535};
		ents[i] = i && p->off[i] ? pg_used(p, i) : free_ent;
	}
	ck_assert_int_lt(snprintf(trailer, sizeof trailer, "<</Size %u/Root 1 0 R%s>>", n, trailer_extra),
	                 (int)sizeof trailer);
	return pg_table(p, ents, n, trailer);
}

const char *pg_save_table(pg *p, const char *trailer_extra, const char *dir, const char *name)
{
	pg_table_all(p, trailer_extra);
	return pg_save(p, dir, name);
}

void pg_set_byterange(pg *p, size_t from)
{
	static const char ph[] = "/ByteRange[0 ";
	char tmp[64];
	size_t i, n = sizeof ph - 1;

	ck_assert(!p->b.oom);
	for (i = from; i + n <= p->b.len && memcmp(p->b.data + i, ph, n) != 0; i++)
		;
	ck_assert_uint_le(i + sizeof PG_SIG_BR - 1, p->b.len);
	/* a hole of ten bytes, as the placeholders were written: what matters
	 * to the readers is where the range ends */
	snprintf(tmp, sizeof tmp, "%010lld %010lld %010lld", 10LL, 20LL, (long long)p->b.len - 20);
	memcpy(p->b.data + i + n, tmp, strlen(tmp));
}
