/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_alloc.c - every allocation of the library can fail, and the public
 * calls then return an error, leak nothing and leave the files alone.
 *
 * HOW IT WORKS
 *
 * The binary is linked with -Wl,--wrap=malloc,calloc,realloc,strdup,
 * posix_memalign,free
 * (Makefile.am): every call to those functions made from the library's
 * object files (and from this file, and from the statically linked Check)
 * lands in the __wrap_* functions below, which call the real allocator
 * through __real_*.  Calls made inside shared libraries (mbedTLS, zlib,
 * libidn, libc itself) are not wrapped.  Under --enable-sanitizers
 * __real_malloc is ASan's malloc, so both checks run together.
 *
 * While a scenario is "armed" the wrappers
 *  - number every allocation attempt (malloc, calloc, realloc, strdup,
 *    posix_memalign) and
 *    fail the Nth one by returning NULL (exactly one; later ones succeed);
 *  - keep every pointer they handed out in a small open-addressing hash set
 *    (with the allocation's number), and drop it again when it is freed or
 *    reallocated.  Frees of pointers the set never saw (memory allocated
 *    before arming, or inside libidn and freed by the library) are ignored.
 * One mutex serialises the wrappers: the rewrite runs worker threads.
 *
 * A scenario is one function running a whole public call sequence (context,
 * open, auth, the operation, close, free) on copies of the samples in a
 * private directory (on /dev/shm when available: the writes fsync).  For
 * each scenario the harness
 *  1. runs it once without failures: it must succeed, leak nothing, and
 *     this gives K, its number of allocations;
 *  2. for N = 1..K (the first allocation from each distinct call stack and
 *     every STRIDE-th one, or every N with CHECK_ALLOC_FULL=1) runs it
 *     again in a forked child with allocation N failing, and requires: a
 *     negative return code whose context message is non-empty and whose
 *     context error code agrees; no crash (signal or sanitizer exit); the
 *     live set back to empty after the context is freed; the input
 *     byte-identical; no output, temp or journal file left in the
 *     directory.  A success despite the failure (a worker thread that
 *     could not get a context while the other did all the work) passes
 *     only if the written file opens and pdfstamp_verify accepts it.
 * Each N runs in its own child so that one crash does not hide the others;
 * the test fails with the list of misbehaving N (first few in detail).
 * About 45 s for the whole suite (also under --enable-sanitizers).
 *
 * Debugging one case:
 *   CHECK_ALLOC_ONLY=stamp-o CHECK_ALLOC_N=123 CHECK_ALLOC_TRACE=45 \
 *       CK_FORK=no tests/check_alloc
 * runs only failure point 123 of scenario stamp-o and prints a backtrace
 * (backtrace_symbols_fd; resolve with addr2line -e tests/check_alloc) at
 * the failed allocation and at allocation 45 (e.g. one reported leaked).
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "pdfstamp.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "tests"
#endif

#define STRIDE 16   /* besides every new call stack, every STRIDE-th N */

/* ---- the allocation hooks ------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
int __real_posix_memalign(void **p, size_t align, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void __wrap_free(void *p);

#define TOMB ((void *)1)

struct slot {
	void *p;        /* NULL empty, TOMB deleted */
	long seq;       /* number of the allocation that made it */
};

static struct {
	pthread_mutex_t mu;
	int armed;
	long count;     /* allocation attempts while armed */
	long fail_at;   /* fail this attempt (1-based); 0 never */
	int injected;   /* the failure was injected */
	long trace_at;  /* print a backtrace at this attempt */
	struct slot *tab;
	size_t cap, used, live;
	int table_oom;  /* the set could not grow: results are void */
	int record;     /* record the call stack of every allocation */
	uint32_t *sites;        /* sites[seq - 1]: hash of the call stack */
	size_t nsites, capsites;
} A = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, NULL, 0, 0 };

static size_t slot_hash(const void *p, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)p >> 4;

	h *= UINT64_C(0x9E3779B97F4A7C15);
	return (size_t)(h >> 32) & (cap - 1);
}

static void set_insert_raw(struct slot *tab, size_t cap, void *p, long seq)
{
	size_t i = slot_hash(p, cap);

	while (tab[i].p && tab[i].p != TOMB)
		i = (i + 1) & (cap - 1);
	tab[i].p = p;
	tab[i].seq = seq;
}

/* Called with the mutex held. */
static void set_insert(void *p, long seq)
{
	if ((A.used + 1) * 2 > A.cap) {
		size_t ncap = A.cap ? A.cap : 4096, i;
		struct slot *nt;

		while ((A.live + 1) * 4 > ncap)
			ncap *= 2;
		nt = __real_calloc(ncap, sizeof *nt);
		if (!nt) {
			A.table_oom = 1;
			return;
		}
		for (i = 0; i < A.cap; i++)
			if (A.tab[i].p && A.tab[i].p != TOMB)
				set_insert_raw(nt, ncap, A.tab[i].p, A.tab[i].seq);
		__real_free(A.tab);
		A.tab = nt;
		A.cap = ncap;
		A.used = A.live;
	}
	set_insert_raw(A.tab, A.cap, p, seq);
	A.used++;
	A.live++;
}

/* Called with the mutex held; returns 1 if P was in the set. */
static int set_remove(void *p)
{
	size_t i;

	if (!A.cap || !p)
		return 0;
	for (i = slot_hash(p, A.cap); A.tab[i].p; i = (i + 1) & (A.cap - 1)) {
		if (A.tab[i].p == p) {
			A.tab[i].p = TOMB;
			A.live--;
			return 1;
		}
	}
	return 0;
}

static void trace_here(const char *what, long seq)
{
	void *frames[48];
	char line[96];
	int n, len;

	len = snprintf(line, sizeof line, "---- backtrace at allocation %ld (%s)\n", seq, what);
	if (write(2, line, (size_t)len) < 0)
		return;
	n = backtrace(frames, 48);
	backtrace_symbols_fd(frames, n, 2);
}

/* Called with the mutex held: remembers where allocation SEQ came from. */
static void record_site(long seq)
{
	void *frames[24];
	uint32_t h = 2166136261u;
	int n, i;
	size_t b;

	if ((size_t)seq > A.capsites) {
		size_t ncap = A.capsites ? 2 * A.capsites : 4096;
		uint32_t *ns = __real_realloc(A.sites, ncap * sizeof *ns);

		if (!ns) {
			A.table_oom = 1;
			return;
		}
		A.sites = ns;
		A.capsites = ncap;
	}
	n = backtrace(frames, 24);
	for (i = 0; i < n; i++) {
		uintptr_t a = (uintptr_t)frames[i];

		for (b = 0; b < sizeof a; b++) {
			h ^= (uint32_t)(a & 0xff);
			h *= 16777619u;
			a >>= 8;
		}
	}
	A.sites[seq - 1] = h;
	if ((size_t)seq > A.nsites)
		A.nsites = (size_t)seq;
}

/*
 * Called with the mutex held before an allocation.  Returns -1 (fail it),
 * 0 (not armed: do not track) or the allocation's number.
 */
static long hook_enter(void)
{
	long seq;

	if (!A.armed)
		return 0;
	seq = ++A.count;
	if (A.record)
		record_site(seq);
	if (seq == A.trace_at)
		trace_here("traced", seq);
	if (seq == A.fail_at) {
		A.injected = 1;
		if (A.trace_at)
			trace_here("failed", seq);
		return -1;
	}
	return seq;
}

void *__wrap_malloc(size_t n)
{
	void *p = NULL;
	long seq;

	pthread_mutex_lock(&A.mu);
	seq = hook_enter();
	if (seq >= 0) {
		p = __real_malloc(n);
		if (p && seq > 0)
			set_insert(p, seq);
	}
	pthread_mutex_unlock(&A.mu);
	return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
	void *p = NULL;
	long seq;

	pthread_mutex_lock(&A.mu);
	seq = hook_enter();
	if (seq >= 0) {
		p = __real_calloc(n, m);
		if (p && seq > 0)
			set_insert(p, seq);
	}
	pthread_mutex_unlock(&A.mu);
	return p;
}

char *__wrap_strdup(const char *s)
{
	char *p = NULL;
	long seq;

	pthread_mutex_lock(&A.mu);
	seq = hook_enter();
	if (seq >= 0) {
		p = __real_strdup(s);
		if (p && seq > 0)
			set_insert(p, seq);
	}
	pthread_mutex_unlock(&A.mu);
	return p;
}

/* ps_buf_bulk_alloc's (buf.c): the reader's segment buffers. */
int __wrap_posix_memalign(void **out, size_t align, size_t n)
{
	long seq;
	int rc = ENOMEM;

	pthread_mutex_lock(&A.mu);
	seq = hook_enter();
	if (seq >= 0) {
		rc = __real_posix_memalign(out, align, n);
		if (rc == 0 && seq > 0)
			set_insert(*out, seq);
	}
	pthread_mutex_unlock(&A.mu);
	return rc;
}

/*
 * The new block is tracked if the old one was (or there was none and we are
 * armed).  The lock is held across the real call so that no other thread
 * can be handed the old address before it leaves the set.
 */
void *__wrap_realloc(void *old, size_t n)
{
	void *p = NULL;
	long seq;
	int tracked;

	pthread_mutex_lock(&A.mu);
	seq = hook_enter();
	if (seq >= 0) {
		p = __real_realloc(old, n);
		if (p || n == 0) {
			tracked = set_remove(old);
			if (p && (tracked || (!old && seq > 0)))
				set_insert(p, seq > 0 ? seq : 0);
		}
	}
	pthread_mutex_unlock(&A.mu);
	return p;
}

void __wrap_free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&A.mu);
	(void)set_remove(p);
	__real_free(p);
	pthread_mutex_unlock(&A.mu);
}

static void arm(long fail_at, long trace_at)
{
	pthread_mutex_lock(&A.mu);
	A.record = fail_at == 0;
	A.nsites = 0;
	A.count = 0;
	A.fail_at = fail_at;
	A.trace_at = trace_at;
	A.injected = 0;
	A.armed = 1;
	pthread_mutex_unlock(&A.mu);
}

static void disarm(void)
{
	pthread_mutex_lock(&A.mu);
	A.armed = 0;
	pthread_mutex_unlock(&A.mu);
}

/* Appends the numbers of up to MAX leaked allocations to OUT. */
static void leaked_list(char *out, size_t outsz, int max)
{
	size_t i, len = strlen(out);
	int n = 0;

	pthread_mutex_lock(&A.mu);
	for (i = 0; i < A.cap && n < max; i++) {
		if (A.tab[i].p && A.tab[i].p != TOMB) {
			len += (size_t)snprintf(out + len, len < outsz ? outsz - len : 0,
			                        "%s#%ld", n ? "," : "", A.tab[i].seq);
			if (len >= outsz)
				break;
			n++;
		}
	}
	pthread_mutex_unlock(&A.mu);
}

/* ---- files ----------------------------------------------------------------- */

struct blob {
	uint8_t *p;
	size_t n;
};

/* "gen:idstamps": a plaintext file made here, two pages with stamps of ID
 * "gone" (an indirect one on page 1, a direct one in page 2's indirect
 * /Annots array) and one of another ID: what pdfstamp_unstamp removes. */
static int gen_idstamps(struct blob *b)
{
	static const char *const objs[] = {
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots [5 0 R 6 0 R] >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots 7 0 R >>",
		"<< /Subtype /Stamp /Rect [1 1 9 9] /NM (gone.1) /Contents (a) /M (D:20260101Z) >>",
		"<< /Subtype /Stamp /Rect [1 1 9 9] /NM (kept.1) /T (t) >>",
		"[<< /Subtype /FreeText /Rect [1 1 9 9] /NM (gone.2) /DA (/Helv 9 Tf) >>]",
	};
	char *buf = malloc(4096);
	long offs[8];
	int len, i;

	if (!buf)
		return -1;
	len = snprintf(buf, 4096, "%%PDF-1.7\n");
	for (i = 0; i < 7; i++) {
		offs[i] = len;
		len += snprintf(buf + len, 4096 - (size_t)len, "%d 0 obj\n%s\nendobj\n", i + 1,
		                objs[i]);
	}
	offs[7] = len;
	len += snprintf(buf + len, 4096 - (size_t)len, "xref\n0 8\n0000000000 65535 f \n");
	for (i = 0; i < 7; i++)
		len += snprintf(buf + len, 4096 - (size_t)len, "%010ld 00000 n \n", offs[i]);
	len += snprintf(buf + len, 4096 - (size_t)len,
	                "trailer\n<< /Size 8 /Root 1 0 R >>\nstartxref\n%ld\n%%%%EOF\n", offs[7]);
	b->p = (uint8_t *)buf;
	b->n = (size_t)len;
	return 0;
}

static int read_file(const char *path, struct blob *b)
{
	struct stat st;
	ssize_t r;
	size_t got = 0;
	int fd;

	b->p = NULL;
	b->n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_size < 0) {
		close(fd);
		return -1;
	}
	b->n = (size_t)st.st_size;
	b->p = malloc(b->n ? b->n : 1);
	if (!b->p) {
		close(fd);
		return -1;
	}
	while (got < b->n) {
		r = read(fd, b->p + got, b->n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	return got == b->n ? 0 : -1;
}

static int write_file(const char *path, const struct blob *b)
{
	size_t done = 0;
	ssize_t w;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (done < b->n) {
		w = write(fd, b->p + done, b->n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	return close(fd) == 0 && done == b->n ? 0 : -1;
}

/* Line 1 of samples/NAME, without its line break. */
static void read_pw(const char *name, char *out, size_t outsz)
{
	char path[1024];
	struct blob b;
	size_t n;

	snprintf(path, sizeof path, "%s/../samples/%s", TEST_SRCDIR, name);
	ck_assert_msg(read_file(path, &b) == 0, "cannot read %s", path);
	for (n = 0; n < b.n && b.p[n] != '\n' && b.p[n] != '\r'; n++)
		;
	ck_assert(n < outsz);
	memcpy(out, b.p, n);
	out[n] = '\0';
	free(b.p);
}

/* ---- scenarios ------------------------------------------------------------ */

struct sc {
	const char *dir;
	char in[1024];       /* the input copy */
	char out[1024];      /* the output path (may not exist) */
	char upw[128], opw[128];
	char msg[256];       /* context message of the failure */
	int errcode;         /* pdfstamp_ctx_errcode at the failure */
	struct blob key, cert; /* PW_KEY: the recipient's key and certificate (read unarmed) */
};

typedef int (*op_fn)(struct sc *s, pdfstamp_doc *doc);

/* A file encrypted to certificates (PW_KEY): opened with the key. */
static int auth_key(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_key k = PDFSTAMP_KEY_INIT;

	k.key = s->key.p;
	k.key_len = s->key.n;
	k.cert = s->cert.p;
	k.cert_len = s->cert.n;
	return pdfstamp_doc_auth_key(doc, &k, 0);
}

/*
 * The common frame: context, open (FLAGS), auth (PW, or none for a
 * plaintext file), OP, close, free.  Returns the first failure's code with
 * its message and context code saved in S.
 */
static int frame(struct sc *s, unsigned flags, const char *pw, int with_key, op_fn op)
{
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	int rc;

	s->msg[0] = '\0';
	s->errcode = 0;
	rc = pdfstamp_ctx_new(&ctx);
	if (rc != 0) {
		/* No context, so no message: only "out of memory" makes sense. */
		if (rc == PDFSTAMP_E_NOMEM && !ctx) {
			snprintf(s->msg, sizeof s->msg, "(pdfstamp_ctx_new)");
			s->errcode = rc;
		}
		return rc;
	}
	rc = pdfstamp_doc_open(ctx, &doc, s->in, flags);
	if (rc == 0 && pw)
		rc = pdfstamp_doc_auth(doc, pw, strlen(pw), 0);
	if (rc == 0 && with_key)
		rc = auth_key(s, doc);
	if (rc == 0)
		rc = op(s, doc);
	if (rc != 0) {
		snprintf(s->msg, sizeof s->msg, "%s", pdfstamp_ctx_errmsg(ctx));
		s->errcode = pdfstamp_ctx_errcode(ctx);
	}
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
	return rc;
}

static int op_info(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_info info = PDFSTAMP_INFO_INIT;
	int rc;

	(void)s;
	rc = pdfstamp_doc_info(doc, &info);
	pdfstamp_info_clear(&info);
	return rc;
}

static int op_stamp(struct sc *s, pdfstamp_doc *doc, unsigned wflags)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.page = PDFSTAMP_PAGE_ALL;
	o.text = "Gepr\xc3\xbc" "ft \xe2\x9c\x93";   /* non-ASCII: UTF-16 and WinAnsi paths */
	o.author = "check_alloc";
	o.note = "allocation failure test";
	o.date = "2024-05-06T07:08:09+02:00";
	w.flags = wflags;
	if (!(wflags & PDFSTAMP_WRITE_IN_PLACE))
		w.output = s->out;
	rc = pdfstamp_stamp(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

static int op_stamp_o(struct sc *s, pdfstamp_doc *doc)
{
	return op_stamp(s, doc, 0);
}

static int op_stamp_in_place(struct sc *s, pdfstamp_doc *doc)
{
	return op_stamp(s, doc, PDFSTAMP_WRITE_IN_PLACE);
}

/* A page expression (pagesel.c): the parser, its sweep and its runs. */
static int op_stamp_pages(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.pages = "1-,!2,even,!-2,2";
	o.date = "2024-05-06T07:08:09+02:00";
	w.output = s->out;
	rc = pdfstamp_stamp(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

/* Text no WinAnsi font holds, so a font file is subset and embedded
 * (font.c, fontpdf.c). */
static int op_stamp_font(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.text = "\xce\x95\xce\xbb\xce\xad\xce\xb3\xcf\x87\xce\xb8\xce\xb7\xce\xba\xce\xb5 \xd0\x9f\xd1\x80\xd0\xbe"
	         "\xd0\xb2\xd0\xb5\xd1\x80\xd0\xb5\xd0\xbd\xd0\xbe";   /* Greek and Cyrillic */
	o.font = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
	o.date = "2024-05-06T07:08:09+02:00";
	w.output = s->out;
	rc = pdfstamp_stamp(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

/* Issue 32: a set of two fonts given as files (no fontconfig), each
 * drawing a run: two subsets in the one appearance. */
static int op_stamp_fonts(struct sc *s, pdfstamp_doc *doc)
{
	static const char *const more[] = {
		"/usr/share/fonts/truetype/noto/NotoSansDevanagari-Bold.ttf"};
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.text = "Approved \xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xb5\xe0\xa5\x80\xe0\xa4\x95\xe0\xa5\x83"
	         "\xe0\xa4\xa4";   /* Latin, Devanagari */
	o.font = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
	o.fonts = more;
	o.nfonts = 1;
	o.date = "2024-05-06T07:08:09+02:00";
	w.output = s->out;
	rc = pdfstamp_stamp(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

/* A QR code beside the text on every page (qr.c; libqrencode's own
 * allocations are not counted: a shared library), its appearance deflated
 * (stamp.c note 12). */
static int op_stamp_qr(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.page = PDFSTAMP_PAGE_ALL;
	o.text = "APPROVED";
	o.qr = "https://dms.example.org/approve?file=report-2026.pdf&page=12";
	o.qr_level = PDFSTAMP_QR_Q;
	o.date = "2024-05-06T07:08:09+02:00";
	w.output = s->out;
	rc = pdfstamp_stamp(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

/* A PNG chunk of type T and N bytes at D, appended at P; returns the end. */
static uint8_t *png_chunk(uint8_t *p, const char *t, const uint8_t *d, size_t n)
{
	uLong crc;
	int i;

	for (i = 3; i >= 0; i--)
		*p++ = (uint8_t)(n >> (8 * i));
	memcpy(p, t, 4);
	if (n)
		memcpy(p + 4, d, n);
	crc = crc32(crc32(0, NULL, 0), p, (uInt)(n + 4));
	p += n + 4;
	for (i = 3; i >= 0; i--)
		*p++ = (uint8_t)(crc >> (8 * i));
	return p;
}

/* A 16 x 16 RGBA PNG (alpha: a soft mask, image.c) drawn in the stamp.
 * Built in static storage with zlib's own allocator, so that the test's
 * counted allocations are the library's alone. */
static int op_stamp_image(struct sc *s, pdfstamp_doc *doc)
{
	static const uint8_t ihdr[13] = {0, 0, 0, 16, 0, 0, 0, 16, 8, 6, 0, 0, 0};
	static uint8_t raw[16 * 65], z[2048], png[4096];
	struct pdfstamp_stamp_opts o = PDFSTAMP_STAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	uLongf zlen = sizeof z;
	uint8_t *p = png;
	size_t i;
	int rc;

	for (i = 0; i < sizeof raw; i++)
		raw[i] = i % 65 == 0 ? 0 : (uint8_t)(i * 7);
	if (compress(z, &zlen, raw, sizeof raw) != Z_OK)
		return -1;
	memcpy(p, "\x89PNG\r\n\x1a\n", 8);
	p = png_chunk(p + 8, "IHDR", ihdr, sizeof ihdr);
	p = png_chunk(p, "IDAT", z, zlen);
	p = png_chunk(p, "IEND", NULL, 0);
	o.text = "APPROVED";
	o.image_data = png;
	o.image_len = (size_t)(p - png);
	o.date = "2024-05-06T07:08:09+02:00";
	w.output = s->out;
	rc = pdfstamp_stamp(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

static int op_meta(struct sc *s, pdfstamp_doc *doc)
{
	static const struct pdfstamp_meta_item items[] = {
		{ "Title", "Allocation \xc3\xa9preuve" },
		{ "Author", "check_alloc" },
		{ "Keywords", "a, b & <c>" },
		{ "Checked", "yes" },
		{ "Subject", NULL },
	};
	struct pdfstamp_meta_opts o = PDFSTAMP_META_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.items = items;
	o.nitems = sizeof items / sizeof items[0];
	o.xmp = 1;
	o.date = "2024-05-06T07:08:09Z";
	w.output = s->out;
	rc = pdfstamp_meta(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

static int op_rewrite(struct sc *s, pdfstamp_doc *doc, int jobs, int encrypt, unsigned flags)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_rewrite_stats st = PDFSTAMP_REWRITE_STATS_INIT;

	o.output = s->out;
	o.user_password = "new-user-\xc3\xa4";
	o.user_len = strlen(o.user_password);
	o.owner_password = "new-owner";
	o.owner_len = strlen(o.owner_password);
	o.jobs = jobs;
	o.flags = flags;
	return encrypt ? pdfstamp_encrypt(doc, &o, &st) : pdfstamp_rotate(doc, &o, &st);
}

static int op_rotate1(struct sc *s, pdfstamp_doc *doc)
{
	return op_rewrite(s, doc, 1, 0, 0);
}

static int op_rotate2(struct sc *s, pdfstamp_doc *doc)
{
	return op_rewrite(s, doc, 2, 0, 0);
}

static int op_encrypt(struct sc *s, pdfstamp_doc *doc)
{
	return op_rewrite(s, doc, 1, 1, 0);
}

/* Rotation of a file encrypted to certificates to its own recipient
 * again (pubsec.c note 5: seed, envelope, key; the seed self-check). */
static int op_rotate_recipient(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_rewrite_opts o = PDFSTAMP_REWRITE_OPTS_INIT;
	struct pdfstamp_rewrite_stats st = PDFSTAMP_REWRITE_STATS_INIT;
	struct pdfstamp_recipient r = {NULL, 0, 1, -3904};

	r.cert = s->cert.p;
	r.cert_len = s->cert.n;
	o.output = s->out;
	o.recipients = &r;
	o.nrecipients = 1;
	o.jobs = 1;
	return pdfstamp_rotate(doc, &o, &st);
}

static int op_verify(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT;
	const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;

	(void)s;
	return pdfstamp_verify(doc, &vo, &rep);
}

/* The stamp list: every page walked, every /Annots entry read, the
 * revisions placed and the signatures asked of pdfstamp_audit. */
static int op_stamps(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_stamps l = PDFSTAMP_STAMPS_INIT;
	int rc;

	(void)s;
	rc = pdfstamp_stamps_list(doc, &l);
	pdfstamp_stamps_clear(&l);
	return rc;
}

/* unstamp of ID "gone" (gen:idstamps): two stamps removed, a page and an
 * array rewritten. */
static int op_unstamp(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_unstamp_opts o = PDFSTAMP_UNSTAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.id = "gone";
	w.output = s->out;
	rc = pdfstamp_unstamp(doc, &o, &w, &res);
	if (rc == 0 && res.nobjects != 2)
		rc = PDFSTAMP_E_INTERNAL; /* the clean run must remove both */
	pdfstamp_result_clear(&res);
	return rc;
}

/* unstamp of an ID the file lacks: the whole walk, nothing written. */
static int op_unstamp_absent(struct sc *s, pdfstamp_doc *doc)
{
	struct pdfstamp_unstamp_opts o = PDFSTAMP_UNSTAMP_OPTS_INIT;
	struct pdfstamp_write_opts w = PDFSTAMP_WRITE_OPTS_INIT;
	struct pdfstamp_result res = PDFSTAMP_RESULT_INIT;
	int rc;

	o.id = "absent";
	w.output = s->out;
	rc = pdfstamp_unstamp(doc, &o, &w, &res);
	pdfstamp_result_clear(&res);
	return rc;
}

enum pw_kind { PW_NONE, PW_USER, PW_OWNER, PW_KEY };

struct scenario {
	const char *name;
	const char *sample;
	enum pw_kind pw;
	unsigned open_flags;
	int writes_output;   /* s->out must exist after a clean run */
	int grows_input;     /* in place: the input must change after a clean run */
	int is_rewrite;      /* the output opens with "new-owner" (PW_KEY: with the key) */
	op_fn op;
};

static const struct scenario scenarios[] = {
	{ "info-r6-table", "r6-table.pdf", PW_USER, 0, 0, 0, 0, op_info },
	{ "info-r6-objstm", "r6-objstm.pdf", PW_OWNER, 0, 0, 0, 0, op_info },
	{ "info-r5", "r5-table.pdf", PW_USER, 0, 0, 0, 0, op_info },
	{ "stamp-o", "r6-table.pdf", PW_USER, 0, 1, 0, 0, op_stamp_o },
	{ "stamp-o-objstm", "r6-objstm.pdf", PW_OWNER, 0, 1, 0, 0, op_stamp_o },
	{ "stamp-in-place", "r6-objstm.pdf", PW_USER, PDFSTAMP_OPEN_WRITE, 0, 1, 0, op_stamp_in_place },
	{ "stamp-pages", "r6-table.pdf", PW_USER, 0, 1, 0, 0, op_stamp_pages },
	{ "stamp-font", "r6-table.pdf", PW_USER, 0, 1, 0, 0, op_stamp_font },
	{ "stamp-fonts", "r6-table.pdf", PW_USER, 0, 1, 0, 0, op_stamp_fonts },
	{ "stamp-image", "r6-objstm.pdf", PW_USER, 0, 1, 0, 0, op_stamp_image },
	{ "stamp-qr", "r6-objstm.pdf", PW_USER, 0, 1, 0, 0, op_stamp_qr },
	{ "meta-xmp", "r6-objstm.pdf", PW_USER, 0, 1, 0, 0, op_meta },
	{ "meta-xmp-new", "r6-table.pdf", PW_OWNER, 0, 1, 0, 0, op_meta },
	{ "rotate-jobs1", "r6-objstm.pdf", PW_OWNER, 0, 1, 0, 1, op_rotate1 },
	{ "rotate-jobs2", "r6-table.pdf", PW_OWNER, 0, 1, 0, 1, op_rotate2 },
	{ "encrypt", "plain-3page.pdf", PW_NONE, 0, 1, 0, 1, op_encrypt },
	{ "verify", "r6-objstm.pdf", PW_USER, 0, 0, 0, 0, op_verify },
	{ "stamps", "r6-objstm.pdf", PW_USER, 0, 0, 0, 0, op_stamps },
	{ "unstamp-absent", "r6-table.pdf", PW_USER, 0, 0, 0, 0, op_unstamp_absent },
	{ "unstamp", "gen:idstamps", PW_NONE, 0, 1, 0, 0, op_unstamp },
	{ "stamps-idstamps", "gen:idstamps", PW_NONE, 0, 0, 0, 0, op_stamps },
	/* encrypted to certificates (tests/malformed/pubsec: key.pem, cert.pem) */
	{ "info-pubsec", "pubsec:base.pdf", PW_KEY, 0, 0, 0, 0, op_info },
	{ "stamp-pubsec", "pubsec:base-nometa.pdf", PW_KEY, 0, 1, 0, 0, op_stamp_o },
	{ "rotate-pubsec", "pubsec:base.pdf", PW_KEY, 0, 1, 0, 1, op_rotate_recipient },
	{ "to-password", "pubsec:oaep.pdf", PW_KEY, 0, 1, 0, 1, op_rotate1 },
};
#define NSCENARIOS ((int)(sizeof scenarios / sizeof scenarios[0]))

/* ---- one run in a child ------------------------------------------------------ */

struct report {
	long count;          /* allocations made */
	int injected;        /* the Nth allocation was failed */
	int rc;
	char problems[900];  /* "" if all is well */
};

static void problem(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct report *r, const char *fmt, ...)
{
	size_t len = strlen(r->problems);
	va_list ap;

	if (len + 3 >= sizeof r->problems)
		return;
	if (len)
		len += (size_t)snprintf(r->problems + len, sizeof r->problems - len, "; ");
	va_start(ap, fmt);
	vsnprintf(r->problems + len, sizeof r->problems - len, fmt, ap);
	va_end(ap);
}

/* Everything in the directory but the input and the output: temp files,
 * journals. */
static void check_dir(struct report *r, const struct sc *s)
{
	const char *base = strrchr(s->in, '/') + 1;
	const char *obase = strrchr(s->out, '/') + 1;
	struct dirent *de;
	DIR *d = opendir(s->dir);

	if (!d) {
		problem(r, "cannot list %s", s->dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(de->d_name, base))
			continue;
		if (!strcmp(de->d_name, obase))
			continue;   /* judged by the caller */
		problem(r, "left behind: %s", de->d_name);
	}
	closedir(d);
}

/*
 * A run that succeeded although an allocation failed (a worker thread whose
 * context could not be made while the other one did all the work, say) is
 * acceptable only if its result is complete: the written file opens with
 * the password it should have and every object in it decrypts and checks
 * out (pdfstamp_verify).  A read-only scenario has nothing to show, so a
 * success there is reported.  Runs unarmed.
 */
static void validate(struct report *r, const struct scenario *sc, struct sc *s,
                     const char *pw)
{
	const char *path = sc->writes_output ? s->out : s->in;
	struct pdfstamp_verify_report rep = PDFSTAMP_VERIFY_REPORT_INIT;
	const struct pdfstamp_verify_opts vo = PDFSTAMP_VERIFY_OPTS_INIT;
	pdfstamp_ctx *ctx = NULL;
	pdfstamp_doc *doc = NULL;
	int rc;

	if (!sc->writes_output && !sc->grows_input) {
		problem(r, "returned 0 although an allocation failed: what did it skip?");
		return;
	}
	if (sc->is_rewrite && sc->op != op_rotate_recipient)
		pw = "new-owner";
	rc = pdfstamp_ctx_new(&ctx);
	if (rc == 0)
		rc = pdfstamp_doc_open(ctx, &doc, path, 0);
	if (rc == 0 && pw)
		rc = pdfstamp_doc_auth(doc, pw, strlen(pw), 0);
	if (rc == 0 && !pw && sc->pw == PW_KEY)
		rc = auth_key(s, doc);
	if (rc == 0)
		rc = pdfstamp_verify(doc, &vo, &rep);
	if (rc != 0)
		problem(r, "returned 0 although an allocation failed, and its result does "
		        "not verify: %d (%s)", rc, ctx ? pdfstamp_ctx_errmsg(ctx) : "");
	pdfstamp_doc_close(doc);
	pdfstamp_ctx_free(ctx);
}

static void run_child(const struct scenario *sc, struct sc *s, const struct blob *orig,
                      long fail_at, long trace_at, struct report *r)
{
	const char *pw = sc->pw == PW_USER ? s->upw : sc->pw == PW_OWNER ? s->opw : NULL;
	struct blob now;
	char leaks[200] = "";
	int rc;

	memset(r, 0, sizeof *r);
	arm(fail_at, trace_at);
	rc = frame(s, sc->open_flags, pw, sc->pw == PW_KEY, sc->op);
	disarm();
	r->count = A.count;
	r->injected = A.injected;
	r->rc = rc;

	if (A.table_oom)
		problem(r, "harness: pointer set out of memory");
	if (A.live) {
		leaked_list(leaks, sizeof leaks, 8);
		problem(r, "leaked %zu block(s): allocations %s", A.live, leaks);
	}
	if (fail_at == 0 || !r->injected) {
		/* A clean run. */
		if (rc != 0)
			problem(r, "failed without an injected failure: %d (%s)", rc, s->msg);
		if (rc == 0 && sc->writes_output && access(s->out, F_OK) != 0)
			problem(r, "no output written");
		if (rc == 0 && sc->grows_input) {
			if (read_file(s->in, &now) != 0 || now.n <= orig->n ||
			    memcmp(now.p, orig->p, orig->n) != 0)
				problem(r, "the in-place update did not append to the input");
			free(now.p);
		}
		return;
	}
	if (rc >= 0) {
		validate(r, sc, s, pw);
	} else {
		if (!s->msg[0])
			problem(r, "error %d (%s) with an empty context message", rc,
			        pdfstamp_strerror(rc));
		else if (s->errcode != rc)
			problem(r, "returned %d but the context code is %d (%s)", rc,
			        s->errcode, s->msg);
	}
	if (rc < 0 || !sc->grows_input) {
		if (read_file(s->in, &now) != 0)
			problem(r, "input unreadable afterwards");
		else if (now.n != orig->n || memcmp(now.p, orig->p, orig->n) != 0)
			problem(r, "%s, but the input was modified (%zu -> %zu bytes)",
			        rc < 0 ? "the call failed" : "a copy was written",
			        orig->n, now.n);
		free(now.p);
	}
	check_dir(r, s);
	if (rc < 0 && sc->writes_output && access(s->out, F_OK) == 0)
		problem(r, "the call failed (%d: %s), but the output exists", rc, s->msg);
}

static int read_all(int fd, void *p, size_t n)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		k = read(fd, (char *)p + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	size_t done = 0;
	ssize_t k;

	while (done < n) {
		k = write(fd, (const char *)p + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

/*
 * Forks, runs one failure point, collects the child's report or its death.
 * For the clean run (FAIL_AT 0) *SITES receives the call-stack hash of
 * every allocation (malloc'ed, r->count entries).
 */
static void run_point(const struct scenario *sc, struct sc *s, const struct blob *orig,
                      long fail_at, long trace_at, struct report *r, uint32_t **sites)
{
	int fds[2], status = 0, got;
	size_t nsites = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct report cr;

		close(fds[0]);
		run_child(sc, s, orig, fail_at, trace_at, &cr);
		nsites = fail_at == 0 ? A.nsites : 0;
		if (write_all(fds[1], &cr, sizeof cr) != 0 ||
		    write_all(fds[1], &nsites, sizeof nsites) != 0 ||
		    (nsites && write_all(fds[1], A.sites, nsites * sizeof *A.sites) != 0))
			_exit(120);
		_exit(0);
	}
	close(fds[1]);
	memset(r, 0, sizeof *r);
	got = read_all(fds[0], r, sizeof *r) == 0 && read_all(fds[0], &nsites, sizeof nsites) == 0;
	if (got && sites) {
		*sites = calloc(nsites + 1, sizeof **sites);
		ck_assert(*sites != NULL);
		got = read_all(fds[0], *sites, nsites * sizeof **sites) == 0;
		if ((long)nsites != r->count)
			got = 0;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		memset(r, 0, sizeof *r);
		r->injected = 1;
		problem(r, "crashed with signal %d (%s)", WTERMSIG(status),
		        strsignal(WTERMSIG(status)));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !got) {
		memset(r, 0, sizeof *r);
		r->injected = 1;
		problem(r, "child exited with status %d (a sanitizer report is above?)",
		        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

/*
 * Which failure points to test: every allocation whose call stack (return
 * addresses, hashed) has not been seen before, so every site fails at least
 * once from every caller, and every STRIDE-th one besides (later uses of a
 * site: a growing buffer that already holds data fails differently).
 * CHECK_ALLOC_FULL=1 tests every N.
 */
static int want_point(const uint32_t *sites, long n, uint8_t *seen_count,
                      uint32_t *seen_hash, size_t seen_cap)
{
	uint32_t h = sites[n - 1];
	size_t i = (h * 2654435761u) & (seen_cap - 1);

	while (seen_count[i] && seen_hash[i] != h)
		i = (i + 1) & (seen_cap - 1);
	seen_hash[i] = h;
	if (seen_count[i] < 1) {
		seen_count[i]++;
		return 1;
	}
	return n % STRIDE == 0;
}

/* Puts the directory back: only a fresh copy of the input. */
static void reset_dir(struct sc *s, const struct blob *orig)
{
	const char *base = strrchr(s->in, '/') + 1;
	char path[2048];
	struct dirent *de;
	DIR *d = opendir(s->dir);

	ck_assert(d != NULL);
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, base))
			continue;
		snprintf(path, sizeof path, "%s/%s", s->dir, de->d_name);
		(void)unlink(path);
	}
	closedir(d);
	ck_assert_int_eq(write_file(s->in, orig), 0);
}

static long env_long(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return 0;
	errno = 0;
	x = strtol(v, &end, 10);
	ck_assert_msg(!errno && !*end && x >= 0, "%s is not a number", name);
	return x;
}

static char *make_dir(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	char *d = malloc(1024);

	ck_assert(d != NULL);
	snprintf(d, 1024, "%s/check_alloc-XXXXXX", base && *base ? base : "/tmp");
	ck_assert_msg(mkdtemp(d) != NULL, "mkdtemp %s: %s", d, strerror(errno));
	return d;
}

static void remove_dir(const char *dir)
{
	char path[2048];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			(void)unlink(path);
		}
		closedir(d);
	}
	(void)rmdir(dir);
}

/*
 * Library bugs found by this suite and not fixed yet.  An entry only adds a
 * note to the failure message: the test still FAILS until the bug is fixed
 * (then delete the entry).  N drifts when the library's allocations change,
 * so the ranges are a guide, not a filter.
 */
static const struct known {
	const char *scenario;
	long from, to;
	const char *what;
} known_bugs[] = {
	/* none known: every bug this suite found is fixed (keep the table for the next) */
	{ NULL, 0, 0, NULL }
};

static const char *known_bug(const char *scenario, long n)
{
	const struct known *k;

	for (k = known_bugs; k->scenario; k++)
		if (!strcmp(k->scenario, scenario) && n >= k->from && n <= k->to)
			return k->what;
	return NULL;
}

START_TEST(test_scenario)
{
	const struct scenario *sc = &scenarios[_i];
	const char *only = getenv("CHECK_ALLOC_ONLY");
	long only_n = env_long("CHECK_ALLOC_N"), trace = env_long("CHECK_ALLOC_TRACE");
	int full = env_long("CHECK_ALLOC_FULL") != 0;
	char detail[3000] = "";
	char path[1024];
	struct report r;
	struct blob orig;
	struct sc s;
	long k, n, tested = 0, bad = 0, first_bad = 0;
	size_t dlen = 0, seen_cap;
	uint32_t *sites = NULL, *seen_hash;
	uint8_t *seen_count;
	char *dir;

	if (only && *only && strcmp(only, sc->name) != 0)
		return;
	memset(&s, 0, sizeof s);
	read_pw("user.pw", s.upw, sizeof s.upw);
	read_pw("owner.pw", s.opw, sizeof s.opw);
	if (strncmp(sc->sample, "pubsec:", 7) == 0) {
		snprintf(path, sizeof path, "%s/malformed/pubsec/key.pem", TEST_SRCDIR);
		ck_assert_msg(read_file(path, &s.key) == 0, "cannot read %s", path);
		snprintf(path, sizeof path, "%s/malformed/pubsec/cert.pem", TEST_SRCDIR);
		ck_assert_msg(read_file(path, &s.cert) == 0, "cannot read %s", path);
		snprintf(path, sizeof path, "%s/malformed/pubsec/%s", TEST_SRCDIR, sc->sample + 7);
	} else {
		snprintf(path, sizeof path, "%s/../samples/%s", TEST_SRCDIR, sc->sample);
	}
	if (strcmp(sc->sample, "gen:idstamps") == 0)
		ck_assert(gen_idstamps(&orig) == 0);
	else
		ck_assert_msg(read_file(path, &orig) == 0, "cannot read %s", path);
	dir = make_dir();
	s.dir = dir;
	snprintf(s.in, sizeof s.in, "%s/%s", dir,
	         strchr(sc->sample, ':') ? strchr(sc->sample, ':') + 1 : sc->sample);
	snprintf(s.out, sizeof s.out, "%s/output.pdf", dir);
	ck_assert_int_eq(write_file(s.in, &orig), 0);
	/* The clean run: success, no leak, the number of allocations and
	 * where each one comes from. */
	run_point(sc, &s, &orig, 0, only_n ? 0 : trace, &r, &sites);
	if (r.problems[0] || r.count <= 0)
		remove_dir(dir);
	ck_assert_msg(!r.problems[0], "%s: clean run: %s", sc->name, r.problems);
	ck_assert_msg(r.count > 0, "%s: no allocation seen: is the binary linked with --wrap?",
	              sc->name);
	k = r.count;
	reset_dir(&s, &orig);
	for (seen_cap = 64; seen_cap < 2 * (size_t)k; seen_cap *= 2)
		;
	seen_count = calloc(seen_cap, 1);
	seen_hash = calloc(seen_cap, sizeof *seen_hash);
	ck_assert(seen_count && seen_hash);

	for (n = only_n ? only_n : 1; n <= (only_n ? only_n : k); n++) {
		/* Evaluated for every N: it counts the occurrences of each stack. */
		int want = n > k || want_point(sites, n, seen_count, seen_hash, seen_cap);

		if (!full && !only_n && !want && n != k)
			continue;
		run_point(sc, &s, &orig, n, trace, &r, NULL);
		tested++;
		if (r.problems[0]) {
			const char *note = known_bug(sc->name, n);

			bad++;
			if (!first_bad)
				first_bad = n;
			if (dlen < sizeof detail - 1)
				dlen += (size_t)snprintf(detail + dlen, sizeof detail - dlen,
				                         "\n  N=%ld: %s%s%s%s", n, r.problems,
				                         note ? " [known bug: " : "", note ? note : "",
				                         note ? "]" : "");
			if (dlen >= sizeof detail)
				dlen = sizeof detail - 1;
			fprintf(stderr, "check_alloc: %s N=%ld: %s%s%s%s\n", sc->name, n, r.problems,
			        note ? " [known bug: " : "", note ? note : "", note ? "]" : "");
		}
		if (r.problems[0] || r.rc == 0 || sc->open_flags & PDFSTAMP_OPEN_WRITE)
			reset_dir(&s, &orig);
	}
	free(seen_count);
	free(seen_hash);
	free(sites);
	fprintf(stderr, "check_alloc: %-16s %6ld allocations, %6ld failure points tested, %ld bad\n",
	        sc->name, k, tested, bad);
	remove_dir(dir);
	free(dir);
	free(s.key.p);
	free(s.cert.p);
	free(orig.p);
	ck_assert_msg(bad == 0, "%s: %ld of %ld failure points misbehaved (first N=%ld):%s",
	              sc->name, bad, tested, first_bad, detail);
}
END_TEST

static Suite *alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc = tcase_create("fail-every-allocation");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, test_scenario, 0, NSCENARIOS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	void *f[2];
	int failed;

	/* backtrace() loads libgcc_s on its first use, which allocates: do it
	 * now, not inside the wrappers with their mutex held. */
	(void)backtrace(f, 2);
	sr = srunner_create(alloc_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
