/* SPDX-License-Identifier: Apache-2.0 */
/*
 * extlib.c - the libraries only some calls need, opened when the first
 * such call is made: HarfBuzz, hb-subset, fontconfig and FriBidi for
 * text that needs an embedded font, libspng for a PNG image, libqrencode
 * for a QR code, GnuTLS for a PKCS#12 file (p12.c note 1), libcurl for
 * the commands that fetch (`dss --fetch`, `timestamp`; http.c).
 *
 * DESIGN NOTES
 *
 *  1. Why not link them.  Linked, they made every process load fourteen
 *     more shared objects (they bring GLib, FreeType, graphite2, libpng,
 *     brotli, expat and PCRE2 with them): 2.6-2.9 ms more for every
 *     command on the benchmark VMs (a program linked with them against one
 *     linked without, 60 runs each, 2026-12-02), a sixth of a stamp's 15
 *     ms, whatever it draws.  The default stamp (Helvetica-Bold, text in
 *     WinAnsiEncoding), JPEG images, and every other command need none.
 *     libcurl brings the most of all (OpenSSL, nghttp2, libssh2, LDAP,
 *     Kerberos, ...), and only a command asked to fetch needs it.
 *  2. The table.  One per process: like the dynamic linker's own tables,
 *     it is filled once per group and only read after, so it is not state
 *     of a context.  A group's flag, set (atomically) once the whole group
 *     is in, lets later calls through without the lock; until then the
 *     callers load under one mutex.  A group is loaded whole or not at
 *     all: each library by its soname (the runtime packages, Debian's
 *     libharfbuzz0b, libharfbuzz-subset0, libfontconfig1, libfribidi0,
 *     libspng0, libqrencode4 libgnutls30 and libcurl4, are named in debian/control, since
 *     dpkg-shlibdeps cannot see them), each function of extlib.h's lists
 *     by name, with the type of the header the library was built with
 *     (__typeof__).  The handles stay open for the life of the process.
 *  3. Callers.  ps_font_open (only for text the standard-14 font cannot
 *     draw, or a font asked for), ps_font_open_mem, the PNG loader and
 *     ps_qr_encode (qr.c) and ps_http_fetch (http.c) call ps_ext_need first; everything after works
 *     on objects those made, so their group is loaded.  A library that is
 *     missing or lacks a function fails that call with PDFSTAMP_E_IO (the
 *     installation's fault, not the input's: exit 1), naming it and
 *     dlerror's reason, before anything is written; the next call tries
 *     again (a failure may pass: too many open files), so a long-lived
 *     program does not keep it.
 *  4. Threads.  HarfBuzz, FriBidi, libspng, libqrencode and libcurl (one easy
 *     handle per request, CURLOPT_NOSIGNAL) work on objects
 *     the caller owns, one context's at a time (libqrencode is built
 *     thread-safe, with pthreads, as Debian's is).  fontconfig also keeps
 *     process-wide caches behind the configs it makes (its object and
 *     string tables), and ThreadSanitizer reports races in them when two
 *     threads choose a font at once (pdfstamp --jobs, issue 34); so
 *     font.c chooses fonts under a second process-wide lock
 *     (ps_ext_fc_enter), held only while fontconfig is asked, never while
 *     a font is subset or drawn.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "extlib.h"

struct group {
	atomic_int ok;          /* 1 once loaded: read without the lock */
	char why[256];          /* what failed last, under the lock */
};

static struct ps_ext table;   /* note 2: a group's entries written under
                               * the lock, before its flag */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER; /* note 4 */
static struct group text_group, png_group, qr_group, p12_group, http_group;

/* Opens SONAME into *H; 0, or -1 with G->why set. */
static int open_lib(struct group *g, const char *soname, void **h)
{
	const char *e;

	if ((*h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) != NULL)
		return 0;
	e = dlerror();
	snprintf(g->why, sizeof g->why, "%s cannot be loaded: %s", soname,
	         e ? e : "unknown reason");
	return -1;
}

/* Sets the function pointer at SLOT to NAME in H; 0, or -1 with G->why set. */
static int find(struct group *g, void *h, const char *soname, const char *name, void *slot,
                size_t size)
{
	void *p = dlsym(h, name);

	if (!p) {
		snprintf(g->why, sizeof g->why, "%s has no function %s", soname, name);
		return -1;
	}
	memcpy(slot, &p, size); /* POSIX: a function's address may travel in a void * */
	return 0;
}

/* Opens SONAME and finds the functions LIST names (an X-macro of extlib.h). */
#define LOAD(soname, list) \
	do { \
		void *h; \
		if (rc == 0 && (rc = open_lib(g, soname, &h)) == 0) { \
			const char *so = soname; \
			list(FIND) \
		} \
	} while (0)
#define FIND(name) \
	if (rc == 0) \
		rc = find(g, h, so, #name, &table.name, sizeof table.name);

static int load_text(struct group *g)
{
	int rc = 0;

	LOAD("libharfbuzz.so.0", PS_EXT_HB);
	LOAD("libharfbuzz-subset.so.0", PS_EXT_HBSUB);
	LOAD("libfontconfig.so.1", PS_EXT_FC);
	LOAD("libfribidi.so.0", PS_EXT_FRIBIDI);
	return rc;
}

static int load_png(struct group *g)
{
	int rc = 0;

	LOAD("libspng.so.0", PS_EXT_SPNG);
	return rc;
}

static int load_qr(struct group *g)
{
	int rc = 0;

	LOAD("libqrencode.so.4", PS_EXT_QRENC);
	return rc;
}

static int load_p12(struct group *g)
{
	int rc = 0;

	LOAD("libgnutls.so.30", PS_EXT_GNUTLS);
	return rc;
}

/* libcurl 7.88 (Debian 12, the OpenSSL flavour): curl_global_init once,
 * here, under the lock (it is not thread-safe in every build). */
static int load_http(struct group *g)
{
	int rc = 0;

	LOAD("libcurl.so.4", PS_EXT_CURL);
	if (rc == 0 && table.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(g->why, sizeof g->why, "libcurl.so.4: curl_global_init failed");
		rc = -1;
	}
	return rc;
}

/* The group of GROUP, its loader and what needs it (for the message). */
static struct group *group_of(int group, int (**load)(struct group *), const char **what)
{
	switch (group) {
	case PS_EXT_PNG:
		*load = load_png;
		*what = "a PNG image";
		return &png_group;
	case PS_EXT_QR:
		*load = load_qr;
		*what = "a QR code";
		return &qr_group;
	case PS_EXT_P12:
		*load = load_p12;
		*what = "a PKCS#12 file";
		return &p12_group;
	case PS_EXT_HTTP:
		*load = load_http;
		*what = "an HTTP request";
		return &http_group;
	default:
		*load = load_text;
		*what = "text in an embedded font";
		return &text_group;
	}
}

void ps_ext_fc_enter(void)
{
	pthread_mutex_lock(&fc_lock);
}

void ps_ext_fc_leave(void)
{
	pthread_mutex_unlock(&fc_lock);
}

int ps_ext_need(ps_ctx *ctx, int group)
{
	int (*load)(struct group *);
	const char *what;
	struct group *g = group_of(group, &load, &what);
	int rc = 0;

	if (atomic_load(&g->ok))
		return 0;
	pthread_mutex_lock(&lock);
	if (!atomic_load(&g->ok)) {
		if (load(g) == 0)
			atomic_store(&g->ok, 1);
		else
			rc = ps_err(ctx, PDFSTAMP_E_IO,
			            "%s needs a library that is not available: %s", what, g->why);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

const struct ps_ext *ps_ext_table(void)
{
	return &table;
}
