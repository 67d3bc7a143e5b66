/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fetched.c - what a fetching call got from the network or its cache, as
 * the library tells it (pdfstamp_fetch_event), kept per file for the
 * output: `dss --fetch` and `timestamp --lta`.
 *
 * DESIGN NOTES
 *
 *  1. The list is the file's own (in its result), filled from the
 *     library's callback as replies come, failures included, so that a
 *     file that failed can say what was asked where.  No memory for an
 *     entry marks the list incomplete (oom) and drops the rest; the
 *     output never invents one.
 *  2. JSON: "fetched":[{"url":...,"what":...,"status":...,"bytes":...,
 *     "from_cache":...[,"error":...]}...].  Text (--verbose): one line per
 *     reply on stderr, names and URLs through cli_put_safe.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_fetched_clear(struct cli_fetched *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].url);
		free(l->v[i].error);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

void cli_fetched_add(void *ud, const struct pdfstamp_fetch_event *ev)
{
	struct cli_fetched *l = ud;
	struct cli_fetch_ent *nv, *f;

	if (l->oom || !(nv = realloc(l->v, (l->n + 1) * sizeof *l->v))) {
		l->oom = 1;
		return;
	}
	l->v = nv;
	f = &l->v[l->n];
	memset(f, 0, sizeof *f);
	f->what = ev->what;
	f->status = ev->status;
	f->bytes = ev->bytes;
	f->from_cache = ev->from_cache;
	f->url = strdup(ev->url ? ev->url : "");
	f->error = ev->error ? strdup(ev->error) : NULL;
	if (!f->url || (ev->error && !f->error)) {
		free(f->url);
		free(f->error);
		l->oom = 1;
		return;
	}
	l->n++;
}

void cli_fetched_json(struct cli_json *j, const struct cli_fetched *l)
{
	size_t i;

	cli_json_key(j, "fetched");
	cli_json_arr_begin(j);
	for (i = 0; i < l->n; i++) {
		cli_json_obj_begin(j);
		cli_json_key(j, "url");
		cli_json_str(j, l->v[i].url);
		cli_json_key(j, "what");
		cli_json_str(j, l->v[i].what);
		cli_json_key(j, "status");
		cli_json_int(j, l->v[i].status);
		cli_json_key(j, "bytes");
		cli_json_int(j, (int64_t)l->v[i].bytes);
		cli_json_key(j, "from_cache");
		cli_json_bool(j, l->v[i].from_cache);
		if (l->v[i].error) {
			cli_json_key(j, "error");
			cli_json_str(j, l->v[i].error);
		}
		cli_json_obj_end(j);
	}
	cli_json_arr_end(j);
}

void cli_fetched_text(const char *name, const struct cli_fetched *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		fputs("pdfstamp: ", stderr);
		cli_put_safe(stderr, name);
		fprintf(stderr, ": %s ", l->v[i].what);
		cli_put_safe(stderr, l->v[i].url);
		if (l->v[i].from_cache)
			fprintf(stderr, ": from the cache, %zu bytes\n", l->v[i].bytes);
		else
			fprintf(stderr, ": HTTP %ld, %zu bytes%s\n", l->v[i].status,
			        l->v[i].bytes, l->v[i].error ? " (not used)" : "");
	}
}
