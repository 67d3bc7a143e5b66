/*
 * make-archive.c - writes AES-256 (R6) encrypted "scanned archive" PDFs of a
 * requested shape, fast, for the benchmark harness and the test suite.
 *
 * DESIGN NOTES
 *
 *  1. Shape.  The reference shape (--scale 1) is a real loan archive:
 *     2,000 pages, 400,000 small encrypted objects (~200 bytes: the pages'
 *     content streams, then private dicts with a short string and short
 *     streams, alternating) and 12,000 large image streams carrying
 *     1,710 MB (10^6) of payload.  Without --scale the shape is the
 *     reference's per-page proportions times --pages; explicit options
 *     override either.
 *  2. Object numbers are fixed before anything is written (struct layout),
 *     so every reference is known up front and the file is produced in one
 *     forward pass: 1 catalog, 2 Info, 3 Encrypt, 4 the /PSGenIndex array,
 *     then the page tree (root first), pages, content streams, images,
 *     small extras, index chunk arrays, object streams, the sparse-gap
 *     stream and the xref stream.  Every number 1..Size-1 is in use.
 *  3. Crypto.  A random 32-byte file key; /U /UE /O /OE /Perms from
 *     ps_kdf_make (ISO 32000-2 Algorithms 8, 9, 10).  Every string and
 *     stream is AESV3 (7.6.3.1, Table 25): a fresh IV from the context's
 *     DRBG pool, AES-256-CBC, PKCS#7 padding, /Length = encrypted length,
 *     direct.  Exempt: the Encrypt dictionary, /ID, the xref stream, and
 *     strings inside object streams (the object stream is encrypted as a
 *     whole, after Flate).  Large payloads are encrypted chunk by chunk
 *     straight into the output buffer (CBC chaining carried in the IV), so
 *     memory stays bounded whatever a stream's size.
 *  4. The payload is xorshift64* output, not DRBG output: it only has to
 *     look like incompressible scan data.  --seed makes it and the shape's
 *     small random choices reproducible; keys, salts and IVs are always
 *     fresh (so two runs never give identical files).
 *  5. Output: one 4 MiB buffer, pwrite at tracked 64-bit offsets.  The
 *     sparse gap stream's data is never written: the offset just jumps, so
 *     the file has a hole of zeros there.  Zeros are not AES data, so that
 *     stream carries a /Crypt filter naming /Identity (7.4.10, 7.6.5) and
 *     readers take it as plaintext.
 *  6. Object streams (--objstm, xref stream only) hold the small dicts,
 *     100 each; the catalog, Encrypt, page tree, pages, Info and the index
 *     arrays stay outside (ISO 32000-2 7.5.7).
 *  7. Passwords come from files only (first line), never argv, and are
 *     wiped with the file key and the cipher state before exit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ps.h"
#include "sec_aes.h"

#define PROG "make-archive"

#define REF_PAGES 2000
#define REF_SMALL 400000
#define REF_LARGE 12000
#define REF_PAYLOAD 1710000000.0   /* 1,710 MB */

#define OUTBUF_SIZE (4u << 20)
#define PAYLOAD_CHUNK (1u << 20)  /* multiple of 16 */
#define OBJSTM_N 100
#define INDEX_CHUNK 1000
#define TREE_FANOUT 32
#define MAX_LEVELS 8
#define TABLE_MAX_OFFSET 9999999999LL

struct opts {
	const char *out;
	const char *upw_file, *opw_file;
	int64_t pages, small, large, payload, gap, perms;
	int have_pages, have_small, have_large, have_payload;
	double scale;
	int have_scale;
	int xref_stream, objstm, quiet;
	uint64_t seed;
	int have_seed;
};

/* Object numbers (note 2). */
struct layout {
	int64_t pages, small, large, nextra, nchunk, nobjstm, ndicts;
	int nlevels;                    /* levels above the pages (>= 1) */
	int64_t cnt[MAX_LEVELS];        /* cnt[0] pages, cnt[k] nodes of level k */
	uint32_t lvl_base[MAX_LEVELS];  /* first number of level k (k >= 1) */
	uint32_t page0, content0, image0, extra0, chunk0, objstm0, gap, xref;
	uint32_t size;
	int64_t img_w, img_h, per_image;
};

struct gen {
	ps_ctx *ctx;
	const struct opts *o;
	struct layout L;
	int fd;
	uint8_t *buf;
	size_t len;
	int64_t off;                    /* file offset of buf[0] */
	int64_t *xoff;                  /* type 1: offset; type 2: object stream number */
	uint16_t *xidx;                 /* type 2: index in the object stream */
	uint8_t *xtype;
	uint8_t key[32];
	ps_cipher cipher;
	uint64_t rng;
	ps_buf ob;                      /* object text being built */
	ps_buf enc;                     /* scratch ciphertext */
	ps_buf pt;                      /* scratch plaintext */
	ps_buf osm_hdr, osm_body;       /* the object stream being filled */
	int64_t osm_count;
	uint32_t osm_num;
	uint8_t id[16];
	int64_t payload_written;
};

/* ---- helpers -------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64* (Vigna); the state is never zero. */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static void rng_fill(uint64_t *s, uint8_t *p, size_t n)
{
	uint64_t v;

	while (n >= 8) {
		v = rng_next(s);
		memcpy(p, &v, 8);
		p += 8;
		n -= 8;
	}
	if (n) {
		v = rng_next(s);
		memcpy(p, &v, n);
	}
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void put_hex(ps_buf *b, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;
	uint8_t *d;

	if (ps_buf_reserve(b, 2 * n + 2) < 0)
		return;
	d = b->data + b->len;
	*d++ = '<';
	for (i = 0; i < n; i++) {
		*d++ = (uint8_t)hx[p[i] >> 4];
		*d++ = (uint8_t)hx[p[i] & 15];
	}
	*d++ = '>';
	b->len += 2 * n + 2;
}

/* A non-negative decimal count. */
static int parse_count(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* A byte size: integer or decimal, optional suffix k/K, M, G, T (powers of
 * 1024, so 4.5G is 4.5 GiB).  At most 2^50. */
static int parse_size(const char *s, int64_t *out)
{
	char *end;
	double v, mul = 1;

	if (!s || ((*s < '0' || *s > '9') && *s != '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'M': mul = 1024.0 * 1024; end++; break;
	case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: return -1;
	}
	if (mul > 1 && !strcmp(end, "iB"))   /* tolerate "MiB" */
		end += 2;
	if (*end)
		return -1;
	v *= mul;
	if (v > 1125899906842624.0)
		return -1;
	*out = (int64_t)llround(v);
	return 0;
}

/* First line of a password file (no EOL), at most 4095 bytes. */
static int read_password(ps_ctx *ctx, const char *path, char *pw, size_t cap, size_t *len)
{
	FILE *f;
	size_t n;

	f = fopen(path, "rb");
	if (!f)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot open password file %s: %s", path, strerror(errno));
	n = fread(pw, 1, cap - 1, f);
	if (ferror(f)) {
		fclose(f);
		ps_wipe(pw, cap);
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot read password file %s", path);
	}
	fclose(f);
	pw[n] = '\0';
	*len = strcspn(pw, "\r\n");
	ps_wipe(pw + *len, n - *len);
	pw[*len] = '\0';
	return 0;
}

/* ---- output --------------------------------------------------------------- */

static int64_t pos(const struct gen *g)
{
	return g->off + (int64_t)g->len;
}

static int out_flush(struct gen *g)
{
	size_t done = 0;
	ssize_t w;

	while (done < g->len) {
		w = pwrite(g->fd, g->buf + done, g->len - done, (off_t)(g->off + (int64_t)done));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return ps_err(g->ctx, PDFSTAMP_E_IO, "write failed at offset %" PRId64 ": %s",
			              g->off + (int64_t)done, strerror(errno));
		}
		done += (size_t)w;
	}
	g->off += (int64_t)g->len;
	g->len = 0;
	return 0;
}

/* N contiguous free bytes in the buffer (N <= OUTBUF_SIZE); the caller
 * fills them and adds N to g->len. */
static int out_space(struct gen *g, size_t n, uint8_t **p)
{
	int rc;

	if (g->len + n > OUTBUF_SIZE && (rc = out_flush(g)) < 0)
		return rc;
	*p = g->buf + g->len;
	return 0;
}

static int out_write(struct gen *g, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint8_t *d;
	size_t k;
	int rc;

	while (n) {
		k = n < OUTBUF_SIZE ? n : OUTBUF_SIZE;
		if ((rc = out_space(g, k, &d)) < 0)
			return rc;
		memcpy(d, s, k);
		g->len += k;
		s += k;
		n -= k;
	}
	return 0;
}

/* Writes and resets g->ob. */
static int out_ob(struct gen *g)
{
	int rc;

	if (g->ob.oom)
		return ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory building an object");
	rc = out_write(g, g->ob.data, g->ob.len);
	ps_buf_reset(&g->ob);
	return rc;
}

/* Starts object NUM in g->ob (which must be empty) at the current offset. */
static void begin_obj(struct gen *g, uint32_t num)
{
	g->xoff[num] = pos(g);
	g->xtype[num] = 1;
	ps_buf_printf(&g->ob, "%" PRIu32 " 0 obj\n", num);
}

/* Appends the AESV3 encryption of P as a hex string to g->ob. */
static int put_enc_str(struct gen *g, const void *p, size_t n)
{
	int rc;

	ps_buf_reset(&g->enc);
	if ((rc = ps_aesv3_encrypt(g->ctx, &g->cipher, p, n, &g->enc)) < 0)
		return rc;
	put_hex(&g->ob, g->enc.data, g->enc.len);
	return 0;
}

/* Object NUM: a stream with dictionary entries EXTRA (may be "") whose
 * plaintext is P; encrypted as AESV3 (ISO 32000-2 7.6.3.1, Table 25). */
static int put_small_stream(struct gen *g, uint32_t num, const char *extra, const void *p, size_t n)
{
	int rc;

	ps_buf_reset(&g->enc);
	if ((rc = ps_aesv3_encrypt(g->ctx, &g->cipher, p, n, &g->enc)) < 0)
		return rc;
	begin_obj(g, num);
	ps_buf_printf(&g->ob, "<<%s /Length %zu >>\nstream\n", extra, g->enc.len);
	ps_buf_append(&g->ob, g->enc.data, g->enc.len);
	ps_buf_puts(&g->ob, "\nendstream\nendobj\n");
	return out_ob(g);
}

/* ---- layout ----------------------------------------------------------------- */

static int make_layout(ps_ctx *ctx, const struct opts *o, struct layout *L)
{
	int64_t per, w, total;
	uint32_t next;
	int k;

	memset(L, 0, sizeof *L);
	L->pages = o->pages;
	L->small = o->small;
	L->large = o->large;
	if (L->pages < 1)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "--pages must be at least 1");
	if (L->small < L->pages)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "--small (%" PRId64 ") must be at least --pages (%" PRId64
		              "): each page's content stream is a small object", L->small, L->pages);
	if (L->pages > PS_MAX_OBJNUM || L->small > PS_MAX_OBJNUM || L->large > PS_MAX_OBJNUM)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "too many objects (at most %d)", PS_MAX_OBJNUM);
	L->nextra = L->small - L->pages;
	L->ndicts = (L->nextra + 1) / 2;           /* extras alternate dict, stream */
	L->nchunk = L->nextra > INDEX_CHUNK ? (L->nextra + INDEX_CHUNK - 1) / INDEX_CHUNK : 0;
	L->nobjstm = o->objstm ? (L->ndicts + OBJSTM_N - 1) / OBJSTM_N : 0;

	/* Image geometry: Width * Height == bytes of each image (DeviceGray, 8
	 * bits), Width 1000 or a divisor near it, else rounded to 1000s. */
	if (L->large > 0) {
		per = o->payload / L->large;
		if (per < 1)
			per = 1;
		if (per <= 1000) {
			L->img_w = per;
			L->img_h = 1;
		} else {
			L->img_w = 0;
			for (w = 1000; w >= 500 && !L->img_w; w--)
				if (per % w == 0)
					L->img_w = w;
			for (w = 1001; w <= 2000 && !L->img_w; w++)
				if (per % w == 0)
					L->img_w = w;
			if (!L->img_w) {
				L->img_w = 1000;
				per -= per % 1000;
			}
			L->img_h = per / L->img_w;
		}
		L->per_image = L->img_w * L->img_h;
	}

	/* Page tree levels, bottom-up: cnt[0] pages, each level groups 32. */
	L->cnt[0] = L->pages;
	k = 0;
	do {
		if (k + 1 >= MAX_LEVELS)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "page tree too deep");
		L->cnt[k + 1] = (L->cnt[k] + TREE_FANOUT - 1) / TREE_FANOUT;
		k++;
	} while (L->cnt[k] > 1);
	L->nlevels = k;

	total = 4 + L->pages * 2 + L->large + L->nextra + L->nchunk + L->nobjstm +
	        (o->gap > 0) + (o->xref_stream != 0);
	for (k = 1; k <= L->nlevels; k++)
		total += L->cnt[k];
	if (total + 1 > PS_MAX_OBJNUM)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "%" PRId64 " objects is more than the %d a PDF may hold",
		              total, PS_MAX_OBJNUM);

	/* Classic entries have 10 digits: refuse early what cannot fit. */
	if (!o->xref_stream && o->gap + L->per_image * L->large + (L->small + 64) * 512 > TABLE_MAX_OFFSET)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "offsets would pass 9,999,999,999, which a classic xref table cannot "
		              "hold; use --xref stream");

	next = 5;
	for (k = L->nlevels; k >= 1; k--) {      /* root first */
		L->lvl_base[k] = next;
		next += (uint32_t)L->cnt[k];
	}
	L->page0 = next;    next += (uint32_t)L->pages;
	L->content0 = next; next += (uint32_t)L->pages;
	L->image0 = next;   next += (uint32_t)L->large;
	L->extra0 = next;   next += (uint32_t)L->nextra;
	L->chunk0 = next;   next += (uint32_t)L->nchunk;
	L->objstm0 = next;  next += (uint32_t)L->nobjstm;
	if (o->gap > 0)
		L->gap = next++;
	if (o->xref_stream)
		L->xref = next++;
	L->size = next;
	return 0;
}

static uint32_t node_num(const struct layout *L, int level, int64_t j)
{
	if (level == 0)
		return L->page0 + (uint32_t)j;
	return L->lvl_base[level] + (uint32_t)j;
}

/* ---- objects ------------------------------------------------------------------ */

static int put_catalog(struct gen *g)
{
	const struct layout *L = &g->L;

	begin_obj(g, 1);
	ps_buf_printf(&g->ob,
	              "<< /Type /Catalog /Pages %" PRIu32 " 0 R /PSGenIndex 4 0 R",
	              node_num(L, L->nlevels, 0));
	if (L->gap)
		ps_buf_printf(&g->ob, " /PSGenGap %" PRIu32 " 0 R", L->gap);
	ps_buf_puts(&g->ob, " /Extensions << /ADBE << /BaseVersion /1.7 /ExtensionLevel 8 >> >> >>\nendobj\n");
	return out_ob(g);
}

/* The hole: a stream whose data is never written (note 5). */
static int put_gap(struct gen *g)
{
	int rc;

	begin_obj(g, g->L.gap);
	ps_buf_printf(&g->ob,
	              "<< /Length %" PRId64 " /Filter /Crypt /DecodeParms "
	              "<< /Type /CryptFilterDecodeParms /Name /Identity >> >>\nstream\n",
	              g->o->gap);
	if ((rc = out_ob(g)) < 0 || (rc = out_flush(g)) < 0)
		return rc;
	g->off += g->o->gap;
	ps_buf_puts(&g->ob, "\nendstream\nendobj\n");
	return out_ob(g);
}

static int put_info(struct gen *g)
{
	char t[160];
	int rc, n;

	begin_obj(g, 2);
	ps_buf_puts(&g->ob, "<< /Title ");
	n = snprintf(t, sizeof t, "Scanned archive: %" PRId64 " pages, %" PRId64 " images", g->L.pages,
	             g->L.large);
	if ((rc = put_enc_str(g, t, (size_t)n)) < 0)
		return rc;
	ps_buf_puts(&g->ob, " /Producer ");
	n = snprintf(t, sizeof t, "pdfstamp bench/make-archive %s", PACKAGE_VERSION);
	if ((rc = put_enc_str(g, t, (size_t)n)) < 0)
		return rc;
	ps_buf_puts(&g->ob, " /CreationDate ");
	if ((rc = put_enc_str(g, "D:20240101000000Z", 17)) < 0)
		return rc;
	ps_buf_puts(&g->ob, " >>\nendobj\n");
	return out_ob(g);
}

/* The Encrypt dictionary: never encrypted, strings as hex (ISO 32000-2 7.6.2; Algorithms 8-10, 7.6.4.4). */
static int put_encrypt(struct gen *g, const ps_secparams *sp)
{
	begin_obj(g, 3);
	ps_buf_printf(&g->ob,
	              "<< /Filter /Standard /V 5 /R 6 /Length 256 /CF << /StdCF << /AuthEvent /DocOpen "
	              "/CFM /AESV3 /Length 32 >> >> /StmF /StdCF /StrF /StdCF /P %" PRId64 " /O ",
	              sp->p);
	put_hex(&g->ob, sp->o, 48);
	ps_buf_puts(&g->ob, " /U ");
	put_hex(&g->ob, sp->u, 48);
	ps_buf_puts(&g->ob, " /OE ");
	put_hex(&g->ob, sp->oe, 32);
	ps_buf_puts(&g->ob, " /UE ");
	put_hex(&g->ob, sp->ue, 32);
	ps_buf_puts(&g->ob, " /Perms ");
	put_hex(&g->ob, sp->perms, 16);
	ps_buf_puts(&g->ob, " >>\nendobj\n");
	return out_ob(g);
}

static int put_tree(struct gen *g)
{
	const struct layout *L = &g->L;
	int64_t j, c, span, lo, hi;
	int k, rc;

	for (k = L->nlevels; k >= 1; k--) {
		span = 1;
		for (c = 0; c < k; c++)
			span *= TREE_FANOUT;
		for (j = 0; j < L->cnt[k]; j++) {
			lo = j * TREE_FANOUT;
			hi = lo + TREE_FANOUT < L->cnt[k - 1] ? lo + TREE_FANOUT : L->cnt[k - 1];
			begin_obj(g, node_num(L, k, j));
			ps_buf_puts(&g->ob, "<< /Type /Pages /Kids [");
			for (c = lo; c < hi; c++)
				ps_buf_printf(&g->ob, "%s%" PRIu32 " 0 R", c > lo ? " " : "",
				              node_num(L, k - 1, c));
			/* pages under node j of level k: [j*32^k, min((j+1)*32^k, P)) */
			hi = (j + 1) * span < L->pages ? (j + 1) * span : L->pages;
			ps_buf_printf(&g->ob, "] /Count %" PRId64, hi - j * span);
			if (k < L->nlevels)
				ps_buf_printf(&g->ob, " /Parent %" PRIu32 " 0 R", node_num(L, k + 1, j / TREE_FANOUT));
			ps_buf_puts(&g->ob, " >>\nendobj\n");
			if ((rc = out_ob(g)) < 0)
				return rc;
		}
	}
	return 0;
}

/* Image j (0-based) as object image0 + j, payload encrypted in chunks. */

/* CBC-encrypts one chunk of a stream, carrying the chain value in IV. */
static void encrypt_chunk(struct gen *g, uint8_t iv[16], const uint8_t *in, uint8_t *out, size_t n)
{
	ps_aes_job job;

	job.in = in;
	job.out = out;
	job.len = n;
	memcpy(job.iv, iv, 16);
	ps_aes_cbc_encrypt_batch(&g->cipher.eng, &job, 1);
	memcpy(iv, job.iv, 16);
	ps_wipe(job.iv, sizeof job.iv);
}

static int put_image(struct gen *g, int64_t j)
{
	const struct layout *L = &g->L;
	int64_t left = L->per_image;
	uint8_t iv[16], last[16], *p;
	size_t c, r;
	int rc;

	begin_obj(g, L->image0 + (uint32_t)j);
	ps_buf_printf(&g->ob,
	              "<< /Type /XObject /Subtype /Image /Width %" PRId64 " /Height %" PRId64
	              " /ColorSpace /DeviceGray /BitsPerComponent 8 /Length %" PRId64 " >>\nstream\n",
	              L->img_w, L->img_h, 16 + (left / 16 + 1) * 16);
	if ((rc = out_ob(g)) < 0)
		return rc;
	/* AESV3: IV || CBC(payload || PKCS#7 pad), the chaining value carried
	 * from chunk to chunk in iv. */
	if ((rc = ps_random_iv(g->ctx, iv)) < 0 || (rc = out_write(g, iv, 16)) < 0)
		goto out;
	while (left >= 16) {
		c = left > PAYLOAD_CHUNK ? PAYLOAD_CHUNK : (size_t)(left & ~(int64_t)15);
		if ((rc = out_space(g, c, &p)) < 0)
			goto out;
		rng_fill(&g->rng, p, c);
		encrypt_chunk(g, iv, p, p, c);
		g->len += c;
		left -= (int64_t)c;
	}
	r = (size_t)left;
	rng_fill(&g->rng, last, r);
	memset(last + r, (int)(16 - r), 16 - r);
	if ((rc = out_space(g, 16, &p)) < 0)
		goto out;
	encrypt_chunk(g, iv, last, p, 16);
	g->len += 16;
	g->payload_written += L->per_image;
	rc = out_write(g, "\nendstream\nendobj\n", 18);
out:
	ps_wipe(iv, sizeof iv);
	ps_wipe(last, sizeof last);
	return rc;
}

/* Images shown on page I: j = I, I+P, I+2P, ... (or I itself if fewer
 * images than pages, or image I mod large for the pages after them). */
static int64_t page_images(const struct layout *L, int64_t i, int64_t *first, int64_t *step)
{
	if (L->large == 0)
		return 0;
	if (L->large < L->pages) {
		*first = i % L->large;
		*step = 0;
		return 1;
	}
	*first = i;
	*step = L->pages;
	return (L->large - i + L->pages - 1) / L->pages;
}

static int put_page(struct gen *g, int64_t i)
{
	const struct layout *L = &g->L;
	int64_t first = 0, step = 0, n, k;
	double slot, w, h;
	int rc;

	n = page_images(L, i, &first, &step);
	begin_obj(g, L->page0 + (uint32_t)i);
	ps_buf_printf(&g->ob, "<< /Type /Page /Parent %" PRIu32 " 0 R /MediaBox [0 0 612 792] /Resources <<",
	              node_num(L, 1, i / TREE_FANOUT));
	if (n > 0) {
		ps_buf_puts(&g->ob, " /XObject <<");
		for (k = 0; k < n; k++)
			ps_buf_printf(&g->ob, " /Im%" PRId64 " %" PRIu32 " 0 R", k,
			              L->image0 + (uint32_t)(first + k * step));
		ps_buf_puts(&g->ob, " >>");
	}
	ps_buf_printf(&g->ob, " >> /Contents %" PRIu32 " 0 R >>\nendobj\n", L->content0 + (uint32_t)i);
	if ((rc = out_ob(g)) < 0)
		return rc;

	/* The content stream: each image in a horizontal band, aspect kept. */
	ps_buf_reset(&g->pt);
	ps_buf_printf(&g->pt, "%% make-archive page %" PRId64 " of %" PRId64 "\n", i + 1, L->pages);
	if (n == 0)
		ps_buf_puts(&g->pt, "0.75 g 36 36 540 720 re f\n");
	slot = 720.0 / (double)(n ? n : 1);
	for (k = 0; k < n; k++) {
		w = 576;
		h = 576.0 * (double)L->img_h / (double)L->img_w;
		if (h > slot) {
			w = w * slot / h;
			h = slot;
		}
		ps_buf_printf(&g->pt, "q %.3f 0 0 %.3f 18 %.3f cm /Im%" PRId64 " Do Q\n", w, h,
		              756.0 - (double)k * slot - h, k);
	}
	if (g->pt.oom)
		return ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if ((rc = put_small_stream(g, L->content0 + (uint32_t)i, "", g->pt.data, g->pt.len)) < 0)
		return rc;
	if (L->large >= L->pages) {
		for (k = 0; k < n; k++)
			if ((rc = put_image(g, first + k * step)) < 0)
				return rc;
	} else if (i < L->large) {
		if ((rc = put_image(g, i)) < 0)
			return rc;
	}
	return 0;
}

/* Filler text of N bytes (printable, varied) into g->pt after a prefix. */
static void filler(struct gen *g, size_t n)
{
	static const char words[] = "loan ledger scan folio deed lien escrow title page copy ";
	size_t i, start = (size_t)(rng_next(&g->rng) % (sizeof words - 1));

	for (i = 0; i < n; i++)
		ps_buf_putc(&g->pt, words[(start + i) % (sizeof words - 1)]);
}

static int flush_objstm(struct gen *g)
{
	ps_buf z = PS_BUF_INIT;
	int rc;

	if (g->osm_count == 0)
		return 0;
	ps_buf_append(&g->osm_hdr, g->osm_body.data, g->osm_body.len);
	if (g->osm_hdr.oom) {
		rc = ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory building an object stream");
		goto out;
	}
	/* Filters first (Flate), then AESV3 over the result (ISO 32000-2 7.6.3.1). */
	if ((rc = ps_deflate(g->ctx, g->osm_hdr.data, g->osm_hdr.len, 6, &z)) < 0)
		goto out;
	ps_buf_reset(&g->enc);
	if ((rc = ps_aesv3_encrypt(g->ctx, &g->cipher, z.data, z.len, &g->enc)) < 0)
		goto out;
	begin_obj(g, g->osm_num);
	ps_buf_printf(&g->ob, "<< /Type /ObjStm /N %" PRId64 " /First %zu /Filter /FlateDecode /Length %zu >>\nstream\n",
	              g->osm_count, g->osm_hdr.len - g->osm_body.len, g->enc.len);
	ps_buf_append(&g->ob, g->enc.data, g->enc.len);
	ps_buf_puts(&g->ob, "\nendstream\nendobj\n");
	rc = out_ob(g);
	g->osm_count = 0;
	ps_buf_reset(&g->osm_hdr);
	ps_buf_reset(&g->osm_body);
out:
	ps_buf_free(&z);
	return rc;
}

/* Small extra E: even E a dict with a short encrypted string, odd E a
 * short encrypted stream. */
static int put_extra(struct gen *g, int64_t e)
{
	const struct layout *L = &g->L;
	uint32_t num = L->extra0 + (uint32_t)e;
	char extra[48];
	size_t n;
	int64_t d;
	int rc;

	ps_buf_reset(&g->pt);
	ps_buf_printf(&g->pt, "record %" PRId64 ": ", e);
	if (e % 2 == 1) {
		filler(g, 150 + (size_t)(rng_next(&g->rng) % 50) - g->pt.len);
		ps_buf_putc(&g->pt, '\n');
		if (g->pt.oom)
			return ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		snprintf(extra, sizeof extra, " /PSGenN %" PRId64, e);
		return put_small_stream(g, num, extra, g->pt.data, g->pt.len);
	}
	n = 60 + (size_t)(rng_next(&g->rng) % 60);
	filler(g, n > g->pt.len ? n - g->pt.len : 0);
	if (g->pt.oom)
		return ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (!g->o->objstm) {
		begin_obj(g, num);
		ps_buf_puts(&g->ob, "<< /PSGen ");
		if ((rc = put_enc_str(g, g->pt.data, g->pt.len)) < 0)
			return rc;
		ps_buf_printf(&g->ob, " /PSGenN %" PRId64 " >>\nendobj\n", e);
		return out_ob(g);
	}
	/* In an object stream: plaintext strings, the container is encrypted. */
	d = e / 2;
	if (g->osm_count == 0)
		g->osm_num = L->objstm0 + (uint32_t)(d / OBJSTM_N);
	ps_buf_printf(&g->osm_hdr, "%" PRIu32 " %zu ", num, g->osm_body.len);
	ps_buf_puts(&g->osm_body, "<< /PSGen ");
	put_hex(&g->osm_body, g->pt.data, g->pt.len);
	ps_buf_printf(&g->osm_body, " /PSGenN %" PRId64 " >>\n", e);
	g->xtype[num] = 2;
	g->xoff[num] = g->osm_num;
	g->xidx[num] = (uint16_t)g->osm_count;
	g->osm_count++;
	if (g->osm_count == OBJSTM_N || d == L->ndicts - 1)
		return flush_objstm(g);
	return 0;
}

/* /PSGenIndex (object 4): the extras' references, in chunk arrays of 1000
 * under a top array when there are many. */
static int put_index(struct gen *g)
{
	const struct layout *L = &g->L;
	int64_t c, e, hi;
	int rc;

	for (c = 0; c < L->nchunk; c++) {
		begin_obj(g, L->chunk0 + (uint32_t)c);
		ps_buf_putc(&g->ob, '[');
		hi = (c + 1) * INDEX_CHUNK < L->nextra ? (c + 1) * INDEX_CHUNK : L->nextra;
		for (e = c * INDEX_CHUNK; e < hi; e++)
			ps_buf_printf(&g->ob, "%s%" PRIu32 " 0 R", e % 16 ? " " : "\n",
			              L->extra0 + (uint32_t)e);
		ps_buf_puts(&g->ob, "\n]\nendobj\n");
		if ((rc = out_ob(g)) < 0)
			return rc;
	}
	begin_obj(g, 4);
	ps_buf_putc(&g->ob, '[');
	if (L->nchunk) {
		for (c = 0; c < L->nchunk; c++)
			ps_buf_printf(&g->ob, "%s%" PRIu32 " 0 R", c % 16 ? " " : "\n", L->chunk0 + (uint32_t)c);
	} else {
		for (e = 0; e < L->nextra; e++)
			ps_buf_printf(&g->ob, "%s%" PRIu32 " 0 R", e % 16 ? " " : "\n", L->extra0 + (uint32_t)e);
	}
	ps_buf_puts(&g->ob, "\n]\nendobj\n");
	return out_ob(g);
}

static void put_trailer_keys(struct gen *g)
{
	ps_buf_printf(&g->ob, "/Size %" PRIu32 " /Root 1 0 R /Info 2 0 R /Encrypt 3 0 R /ID [", g->L.size);
	put_hex(&g->ob, g->id, 16);
	put_hex(&g->ob, g->id, 16);
	ps_buf_putc(&g->ob, ']');
}

/* Classic table (ISO 32000-2 7.5.4): one subsection, 20-byte entries. */
static int put_xref_table(struct gen *g)
{
	int64_t start = pos(g);
	char ent[21];
	uint32_t i;
	int rc;

	for (i = 1; i < g->L.size; i++)
		if (g->xoff[i] > TABLE_MAX_OFFSET)
			return ps_err(g->ctx, PDFSTAMP_E_USAGE,
			              "offset %" PRId64 " does not fit a classic xref table; use --xref stream",
			              g->xoff[i]);
	ps_buf_printf(&g->ob, "xref\n0 %" PRIu32 "\n0000000000 65535 f\r\n", g->L.size);
	if ((rc = out_ob(g)) < 0)
		return rc;
	for (i = 1; i < g->L.size; i++) {
		snprintf(ent, sizeof ent, "%010" PRId64 " 00000 n\r\n", g->xoff[i]);
		if ((rc = out_write(g, ent, 20)) < 0)
			return rc;
	}
	ps_buf_puts(&g->ob, "trailer\n<< ");
	put_trailer_keys(g);
	ps_buf_printf(&g->ob, " >>\nstartxref\n%" PRId64 "\n%%%%EOF\n", start);
	return out_ob(g);
}

/* Xref stream (ISO 32000-2 7.5.8): never encrypted, W [1 w 2] with w sized
 * from the largest offset, an entry for itself. */
static int put_xref_stream(struct gen *g)
{
	const struct layout *L = &g->L;
	int64_t start = pos(g), maxv = 0;
	ps_buf raw = PS_BUF_INIT, z = PS_BUF_INIT;
	uint8_t *d;
	uint32_t i;
	int w = 1, k, rc;

	g->xtype[L->xref] = 1;
	g->xoff[L->xref] = start;
	for (i = 1; i < L->size; i++)
		if (g->xoff[i] > maxv)
			maxv = g->xoff[i];
	while (w < 8 && (maxv >> (8 * w)) != 0)
		w++;
	if (ps_buf_reserve(&raw, (size_t)L->size * (size_t)(w + 3)) < 0) {
		rc = ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory for the xref stream");
		goto out;
	}
	d = raw.data;
	for (i = 0; i < L->size; i++) {
		uint64_t f2 = i ? (uint64_t)g->xoff[i] : 0;
		unsigned f3 = i ? g->xidx[i] : 65535;

		*d++ = i ? g->xtype[i] : 0;
		for (k = w - 1; k >= 0; k--)
			*d++ = (uint8_t)(f2 >> (8 * k));
		*d++ = (uint8_t)(f3 >> 8);
		*d++ = (uint8_t)f3;
	}
	raw.len = (size_t)(d - raw.data);
	if ((rc = ps_deflate(g->ctx, raw.data, raw.len, 6, &z)) < 0)
		goto out;
	begin_obj(g, L->xref);
	ps_buf_printf(&g->ob, "<< /Type /XRef /W [1 %d 2] ", w);
	put_trailer_keys(g);
	ps_buf_printf(&g->ob, " /Filter /FlateDecode /Length %zu >>\nstream\n", z.len);
	ps_buf_append(&g->ob, z.data, z.len);
	ps_buf_printf(&g->ob, "\nendstream\nendobj\nstartxref\n%" PRId64 "\n%%%%EOF\n", start);
	rc = out_ob(g);
out:
	ps_buf_free(&raw);
	ps_buf_free(&z);
	return rc;
}

static int generate(struct gen *g, const ps_secparams *sp)
{
	const struct layout *L = &g->L;
	static const uint8_t header[] = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n";
	int64_t i, e, elo, ehi;
	int rc;

	if ((rc = out_write(g, header, sizeof header - 1)) < 0 ||
	    (rc = put_catalog(g)) < 0)
		return rc;
	if (L->gap && (rc = put_gap(g)) < 0)
		return rc;
	if ((rc = put_info(g)) < 0 ||
	    (rc = put_encrypt(g, sp)) < 0 ||
	    (rc = put_tree(g)) < 0)
		return rc;
	/* Pages interleaved with their images and a share of the extras. */
	for (i = 0; i < L->pages; i++) {
		if ((rc = put_page(g, i)) < 0)
			return rc;
		elo = L->nextra * i / L->pages;
		ehi = L->nextra * (i + 1) / L->pages;
		for (e = elo; e < ehi; e++)
			if ((rc = put_extra(g, e)) < 0)
				return rc;
	}
	if ((rc = flush_objstm(g)) < 0 || (rc = put_index(g)) < 0)
		return rc;
	rc = g->o->xref_stream ? put_xref_stream(g) : put_xref_table(g);
	if (rc < 0)
		return rc;
	if ((rc = out_flush(g)) < 0)
		return rc;
	if (ftruncate(g->fd, (off_t)g->off) != 0)
		return ps_err(g->ctx, PDFSTAMP_E_IO, "cannot set the file size: %s", strerror(errno));
	/* Self-check: every number 1..Size-1 got an entry. */
	for (i = 1; i < (int64_t)L->size; i++)
		if (!g->xtype[i])
			return ps_err(g->ctx, PDFSTAMP_E_INTERNAL, "object %" PRId64 " was never written", i);
	return 0;
}

/* ---- command line --------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: " PROG " -o OUT [options]\n"
	      "Writes an AES-256 (R6) encrypted \"scanned archive\" PDF of the requested shape.\n"
	      "\n"
	      "Shape (the reference, --scale 1: 2000 pages, 400000 small objects, 12000 large\n"
	      "image streams carrying 1710 MB; without --scale the reference's per-page\n"
	      "proportions times --pages; explicit options override):\n"
	      "  -o, --output OUT          the file to write (required)\n"
	      "      --pages N             pages (default 10)\n"
	      "      --small N             small encrypted objects (~200 bytes), the pages'\n"
	      "                            content streams included, so N >= pages\n"
	      "      --large N             large image streams (DeviceGray, 8 bits)\n"
	      "      --payload BYTES       total payload of the large streams, split evenly;\n"
	      "                            suffixes k, M, G, T are powers of 1024\n"
	      "      --scale F             multiply the reference shape by F\n"
	      "Structure:\n"
	      "      --xref table|stream   cross-reference form (default table)\n"
	      "      --objstm              put the small dicts in object streams of 100\n"
	      "                            (needs --xref stream)\n"
	      "      --sparse-gap BYTES    add early a stream of BYTES zeros left as a hole in\n"
	      "                            the file (/Crypt /Identity), pushing later offsets up\n"
	      "Encryption:\n"
	      "      --user-password-file F   first line of F is the user password (default \"user\")\n"
	      "      --owner-password-file F  first line of F is the owner password (default \"owner\")\n"
	      "      --permissions P       the /P value (default -4)\n"
	      "Other:\n"
	      "      --seed N              seed of the payload generator (keys and IVs stay random)\n"
	      "      --quiet               no summary line on stderr\n"
	      "  -h, --help                this text\n", f);
}

enum { O_PAGES = 256, O_SMALL, O_LARGE, O_PAYLOAD, O_SCALE, O_XREF, O_OBJSTM, O_UPW, O_OPW,
       O_PERMS, O_GAP, O_SEED, O_QUIET };

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pages", required_argument, NULL, O_PAGES },
		{ "small", required_argument, NULL, O_SMALL },
		{ "large", required_argument, NULL, O_LARGE },
		{ "payload", required_argument, NULL, O_PAYLOAD },
		{ "scale", required_argument, NULL, O_SCALE },
		{ "xref", required_argument, NULL, O_XREF },
		{ "objstm", no_argument, NULL, O_OBJSTM },
		{ "user-password-file", required_argument, NULL, O_UPW },
		{ "owner-password-file", required_argument, NULL, O_OPW },
		{ "permissions", required_argument, NULL, O_PERMS },
		{ "sparse-gap", required_argument, NULL, O_GAP },
		{ "seed", required_argument, NULL, O_SEED },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, bad, li = 0;
	int64_t v;
	char *end;
	double scale;

	memset(o, 0, sizeof *o);
	o->perms = -4;
	while ((c = getopt_long(argc, argv, "o:h", lo, &li)) != -1) {
		bad = 0;
		switch (c) {
		case 'o': o->out = optarg; break;
		case O_PAGES: bad = parse_count(optarg, &o->pages); o->have_pages = 1; break;
		case O_SMALL: bad = parse_count(optarg, &o->small); o->have_small = 1; break;
		case O_LARGE: bad = parse_count(optarg, &o->large); o->have_large = 1; break;
		case O_PAYLOAD: bad = parse_size(optarg, &o->payload); o->have_payload = 1; break;
		case O_GAP: bad = parse_size(optarg, &o->gap); break;
		case O_SCALE:
			errno = 0;
			scale = strtod(optarg, &end);
			bad = errno || end == optarg || *end || !isfinite(scale) || scale <= 0 || scale > 20;
			o->scale = scale;
			o->have_scale = 1;
			break;
		case O_XREF:
			if (!strcmp(optarg, "table"))
				o->xref_stream = 0;
			else if (!strcmp(optarg, "stream"))
				o->xref_stream = 1;
			else
				bad = 1;
			break;
		case O_OBJSTM: o->objstm = 1; break;
		case O_UPW: o->upw_file = optarg; break;
		case O_OPW: o->opw_file = optarg; break;
		case O_PERMS:
			errno = 0;
			v = strtoll(optarg, &end, 10);
			bad = errno || end == optarg || *end || v < INT32_MIN || v > (int64_t)UINT32_MAX;
			o->perms = v;
			break;
		case O_SEED:
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			bad = errno || end == optarg || *end || *optarg == '-';
			o->have_seed = 1;
			break;
		case O_QUIET: o->quiet = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
		if (bad) {
			fprintf(stderr, PROG ": bad value for --%s: '%s'\n", lo[li].name, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!o->out) {
		fprintf(stderr, PROG ": -o OUT is required (see --help)\n");
		return -1;
	}
	if (o->objstm && !o->xref_stream) {
		fprintf(stderr, PROG ": --objstm needs --xref stream\n");
		return -1;
	}
	/* Note 1: the shape. */
	if (!o->have_scale) {
		if (!o->have_pages)
			o->pages = 10;
		scale = (double)o->pages / REF_PAGES;
	} else {
		scale = o->scale;
		if (!o->have_pages)
			o->pages = llround(REF_PAGES * scale) > 0 ? llround(REF_PAGES * scale) : 1;
	}
	if (!o->have_small) {
		o->small = llround(REF_SMALL * scale);
		if (o->small < o->pages)
			o->small = o->pages;
	}
	if (!o->have_large)
		o->large = llround(REF_LARGE * scale);
	if (!o->have_payload)
		o->payload = llround(REF_PAYLOAD * scale);
	if (!o->have_seed)
		o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct gen g;
	ps_secparams sp;
	char upw[4096], opw[4096];
	size_t ulen = 4, olen = 5;
	double t0 = now_sec();
	int rc, created = 0;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	memset(&g, 0, sizeof g);
	memset(&sp, 0, sizeof sp);
	g.fd = -1;
	g.o = &o;
	memcpy(upw, "user", 5);
	memcpy(opw, "owner", 6);
	if ((rc = pdfstamp_ctx_new(&g.ctx)) < 0) {
		fprintf(stderr, PROG ": %s\n", pdfstamp_strerror(rc));
		return 1;
	}
	if ((rc = make_layout(g.ctx, &o, &g.L)) < 0)
		goto out;
	if ((o.upw_file && (rc = read_password(g.ctx, o.upw_file, upw, sizeof upw, &ulen)) < 0) ||
	    (o.opw_file && (rc = read_password(g.ctx, o.opw_file, opw, sizeof opw, &olen)) < 0))
		goto out;

	/* The file key, then /U /UE /O /OE /Perms (Algorithms 8, 9, 10). */
	sp.p = o.perms;
	sp.encrypt_metadata = 1;
	if ((rc = ps_random(g.ctx, g.key, sizeof g.key)) < 0 ||
	    (rc = ps_kdf_make(g.ctx, &sp, upw, ulen, opw, olen, g.key)) < 0 ||
	    (rc = ps_cipher_init(g.ctx, &g.cipher, g.key)) < 0 ||
	    (rc = ps_random(g.ctx, g.id, sizeof g.id)) < 0)
		goto out;
	ps_wipe(upw, sizeof upw);
	ps_wipe(opw, sizeof opw);

	g.rng = o.seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
	if (!g.rng)
		g.rng = 1;
	g.buf = malloc(OUTBUF_SIZE);
	g.xoff = calloc(g.L.size, sizeof *g.xoff);
	g.xidx = calloc(g.L.size, sizeof *g.xidx);
	g.xtype = calloc(g.L.size, sizeof *g.xtype);
	if (!g.buf || !g.xoff || !g.xidx || !g.xtype) {
		rc = ps_err(g.ctx, PDFSTAMP_E_NOMEM, "out of memory");
		goto out;
	}
	g.fd = open(o.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (g.fd < 0) {
		rc = ps_err(g.ctx, PDFSTAMP_E_IO, "cannot create %s: %s", o.out, strerror(errno));
		goto out;
	}
	created = 1;
	if ((rc = generate(&g, &sp)) < 0)
		goto out;
	if (close(g.fd) != 0) {
		g.fd = -1;
		rc = ps_err(g.ctx, PDFSTAMP_E_IO, "cannot close %s: %s", o.out, strerror(errno));
		goto out;
	}
	g.fd = -1;
	if (!o.quiet)
		fprintf(stderr, PROG ": %s: %" PRIu32 " objects (%" PRId64 " pages, %" PRId64
		        " small, %" PRId64 " large, %s xref%s), payload %.1f MB, file %.1f MB, %.2f s\n",
		        o.out, g.L.size - 1, g.L.pages, g.L.small, g.L.large,
		        o.xref_stream ? "stream" : "table", o.objstm ? " + object streams" : "",
		        g.payload_written / 1e6, g.off / 1e6, now_sec() - t0);
out:
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", pdfstamp_ctx_errmsg(g.ctx));
	if (g.fd >= 0)
		close(g.fd);
	if (rc < 0 && created)
		unlink(o.out);
	ps_wipe(upw, sizeof upw);
	ps_wipe(opw, sizeof opw);
	ps_wipe(g.key, sizeof g.key);
	ps_wipe(&sp, sizeof sp);
	ps_cipher_free(&g.cipher);
	ps_buf_free(&g.ob);
	ps_buf_free(&g.enc);
	ps_buf_free(&g.pt);
	ps_buf_free(&g.osm_hdr);
	ps_buf_free(&g.osm_body);
	free(g.buf);
	free(g.xoff);
	free(g.xidx);
	free(g.xtype);
	pdfstamp_ctx_free(g.ctx);
	if (rc == PDFSTAMP_E_USAGE)
		return 2;
	return rc < 0 ? 1 : 0;
}
