/* SPDX-License-Identifier: Apache-2.0 */
/*
 * make-archive.c - writes AES-256 (R6) encrypted "scanned archive" PDFs of a
 * requested shape, fast, for the benchmark harness and the test suite.
 *
 * DESIGN NOTES
 *
 *  1. Shapes.  The reference shape (--shape reference, --scale 1) is a
 *     real loan archive: 2,000 pages, 400,000 small encrypted objects
 *     (~200 bytes: the pages' content streams, then private dicts with a
 *     short string and short streams, alternating) and 12,000 large image
 *     streams carrying 1,710 MB (10^6) of payload.  The scan shape
 *     (--shape scan) is a scanned loan file: 2,000 pages, each one full-page
 *     grey scan of --image-kb KiB (default 776: 1.6 GB of images, a 1.75 GB
 *     file at --scale 1) under /FlateDecode, and 407,500 small objects in a
 *     cycle of eight that a scanned file carries: an annotation (/Text, four encrypted
 *     strings, /P, /AP) and its appearance stream, a record dict with a
 *     string and a record stream, a font, its descriptor and its
 *     /ToUnicode CMap, a second record dict (note 8).  Without --scale the
 *     shape is the chosen one's per-page proportions times --pages;
 *     explicit options override either.
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
 *  8. Scan shape details.  Each page lists, of the small objects written
 *     after it, up to 4 annotations in /Annots and up to 2 fonts in
 *     /Resources /Font; its content stream paints the image over the page
 *     and sets a few lines of invisible OCR text (3 Tr, ISO 32000-2 9.3.6)
 *     in the first font.  An annotation's /AP and a font's /FontDescriptor
 *     and /ToUnicode point at the next objects of the cycle (omitted when
 *     the cycle is cut by the end of the extras).  All small objects stay
 *     reachable from /PSGenIndex as in the reference shape.
 *  9. Image filters (--image-filter; default none for the reference shape,
 *     flate for scan).  flate is a valid zlib stream (RFC 1950) of stored
 *     deflate blocks (RFC 1951 3.2.4: BFINAL/BTYPE 00, LEN, NLEN, at most
 *     65,535 bytes each) with the Adler-32 of the pixels: every reader
 *     decodes it (to noise), and it is as incompressible as a JPEG.  The
 *     stream's plaintext is 2 + 5 x blocks + pixels + 4 bytes; that is what
 *     is encrypted and counted as payload.
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

#include <zlib.h>

#include "ps.h"
#include "sec_aes.h"

#define PROG "make-archive"

#define REF_PAGES 2000
#define REF_SMALL 400000
#define REF_LARGE 12000
#define REF_PAYLOAD 1710000000.0   /* 1,710 MB */
#define SCAN_PAGES 2000              /* the scan shape (note 1): one image a page */
#define SCAN_SMALL 407500
#define SCAN_IMAGE_KB 776
#define SCAN_CYCLE 8                 /* kinds of small extras (note 1) */
#define SCAN_ANNOTS 4                /* at most, per page (note 8) */
#define SCAN_FONTS 2
#define STORED_MAX 65535             /* RFC 1951 3.2.4 */

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
	int scan;                       /* --shape scan */
	int64_t image_kb;               /* --image-kb, 0 = from the payload */
	int flate;                      /* --image-filter flate (note 9) */
	int have_filter;
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
	int64_t enc_image;              /* stream plaintext of one image (note 9) */
	int scan, flate;
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
	ps_buf dt;                      /* dict text of a small extra */
	ps_buf osm_hdr, osm_body;       /* the object stream being filled */
	int64_t osm_count;
	int64_t dicts_done;             /* small dicts emitted so far */
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

/* Kinds of the scan shape's small extras, in cycle order (note 1). */
enum { K_ANNOT, K_AP, K_RECDICT, K_RECSTREAM, K_FONT, K_FONTDESC, K_TOUNICODE, K_RECDICT2 };

static int extra_is_dict(const struct layout *L, int64_t e)
{
	int k;

	if (!L->scan)
		return e % 2 == 0;
	k = (int)(e % SCAN_CYCLE);
	return k != K_AP && k != K_RECSTREAM && k != K_TOUNICODE;
}

/* Bytes of a flate image's stream for PIXELS bytes of pixels (note 9). */
static int64_t stored_size(int64_t pixels)
{
	int64_t blocks = pixels ? (pixels + STORED_MAX - 1) / STORED_MAX : 1;

	return 2 + 5 * blocks + pixels + 4;
}

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
	L->scan = o->scan;
	L->flate = o->flate;
	if (!L->scan) {
		L->ndicts = (L->nextra + 1) / 2;    /* extras alternate dict, stream */
	} else {
		L->ndicts = L->nextra / SCAN_CYCLE * 5;
		for (w = L->nextra - L->nextra % SCAN_CYCLE; w < L->nextra; w++)
			L->ndicts += extra_is_dict(L, w);
	}
	L->nchunk = L->nextra > INDEX_CHUNK ? (L->nextra + INDEX_CHUNK - 1) / INDEX_CHUNK : 0;
	L->nobjstm = o->objstm ? (L->ndicts + OBJSTM_N - 1) / OBJSTM_N : 0;

	/* Image geometry: Width * Height == bytes of each image (DeviceGray, 8
	 * bits).  Scan: the aspect of a letter page (8.5 x 11), Width rounded.
	 * Reference: Width 1000 or a divisor near it, else rounded to 1000s. */
	if (L->large > 0) {
		per = o->image_kb ? o->image_kb * 1024 : o->payload / L->large;
		if (o->image_kb && o->flate)       /* the stream, not the pixels, is N KiB */
			per -= stored_size(per) - per;
		if (per < 1)
			per = 1;
		if (L->scan) {
			L->img_w = llround(sqrt((double)per * 8.5 / 11.0));
			if (L->img_w < 1)
				L->img_w = 1;
			L->img_h = per / L->img_w > 0 ? per / L->img_w : 1;
		} else if (per <= 1000) {
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
		L->enc_image = L->flate ? stored_size(L->per_image) : L->per_image;
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
	if (!o->xref_stream && o->gap + L->enc_image * L->large + (L->small + 64) * 512 > TABLE_MAX_OFFSET)
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
	n = snprintf(t, sizeof t, "Scanned %s: %" PRId64 " pages, %" PRId64 " images",
	             g->L.scan ? "loan file" : "archive", g->L.pages, g->L.large);
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

/* The plaintext of one image stream, produced piece by piece: raw pixels,
 * or (note 9) a zlib stream of stored blocks around them. */
struct imgsrc {
	int flate;
	int64_t pixels_left;            /* pixels not yet produced */
	uint32_t blk_left;              /* pixels left in the current block */
	uint8_t pend[8];                /* header/trailer bytes not yet produced */
	int npend, ipend;
	int done;                       /* Adler-32 trailer queued */
	uLong adler;
};

static void img_produce(struct gen *g, struct imgsrc *s, uint8_t *p, size_t n)
{
	size_t k;
	uint32_t len;

	if (!s->flate) {
		rng_fill(&g->rng, p, n);
		s->pixels_left -= (int64_t)n;
		return;
	}
	while (n) {
		if (s->ipend < s->npend) {
			k = (size_t)(s->npend - s->ipend) < n ? (size_t)(s->npend - s->ipend) : n;
			memcpy(p, s->pend + s->ipend, k);
			s->ipend += (int)k;
		} else if (s->blk_left) {
			k = s->blk_left < n ? s->blk_left : n;
			rng_fill(&g->rng, p, k);
			s->adler = adler32(s->adler, p, (uInt)k);
			s->blk_left -= (uint32_t)k;
			s->pixels_left -= (int64_t)k;
		} else if (s->pixels_left > 0) {
			/* RFC 1951 3.2.4: BFINAL, BTYPE 00, then LEN and NLEN (LE). */
			len = s->pixels_left > STORED_MAX ? STORED_MAX : (uint32_t)s->pixels_left;
			s->pend[0] = s->pixels_left == len;
			s->pend[1] = (uint8_t)len;
			s->pend[2] = (uint8_t)(len >> 8);
			s->pend[3] = (uint8_t)~len;
			s->pend[4] = (uint8_t)(~len >> 8);
			s->npend = 5;
			s->ipend = 0;
			s->blk_left = len;
			continue;
		} else if (!s->done) {
			s->pend[0] = (uint8_t)(s->adler >> 24);   /* RFC 1950: big-endian */
			s->pend[1] = (uint8_t)(s->adler >> 16);
			s->pend[2] = (uint8_t)(s->adler >> 8);
			s->pend[3] = (uint8_t)s->adler;
			s->npend = 4;
			s->ipend = 0;
			s->done = 1;
			continue;
		} else {
			break;                  /* never: the caller asks for enc_image bytes */
		}
		p += k;
		n -= k;
	}
}

static int put_image(struct gen *g, int64_t j)
{
	const struct layout *L = &g->L;
	int64_t left = L->enc_image;
	struct imgsrc src;
	uint8_t iv[16], last[16], *p;
	size_t c, r;
	int rc;

	memset(&src, 0, sizeof src);
	src.flate = L->flate;
	src.pixels_left = L->per_image;
	if (src.flate) {
		src.adler = adler32(0L, Z_NULL, 0);
		src.pend[0] = 0x78;             /* CMF: deflate, 32K window */
		src.pend[1] = 0x01;             /* FLG: fastest, FCHECK (0x7801 % 31 == 0) */
		src.npend = 2;
	}
	begin_obj(g, L->image0 + (uint32_t)j);
	ps_buf_printf(&g->ob,
	              "<< /Type /XObject /Subtype /Image /Width %" PRId64 " /Height %" PRId64
	              " /ColorSpace /DeviceGray /BitsPerComponent 8%s /Length %" PRId64 " >>\nstream\n",
	              L->img_w, L->img_h, src.flate ? " /Filter /FlateDecode" : "",
	              16 + (left / 16 + 1) * 16);
	if ((rc = out_ob(g)) < 0)
		return rc;
	/* AESV3: IV || CBC(data || PKCS#7 pad), the chaining value carried
	 * from chunk to chunk in iv. */
	if ((rc = ps_random_iv(g->ctx, iv)) < 0 || (rc = out_write(g, iv, 16)) < 0)
		goto out;
	while (left >= 16) {
		c = left > PAYLOAD_CHUNK ? PAYLOAD_CHUNK : (size_t)(left & ~(int64_t)15);
		if ((rc = out_space(g, c, &p)) < 0)
			goto out;
		img_produce(g, &src, p, c);
		encrypt_chunk(g, iv, p, p, c);
		g->len += c;
		left -= (int64_t)c;
	}
	r = (size_t)left;
	img_produce(g, &src, last, r);
	memset(last + r, (int)(16 - r), 16 - r);
	if ((rc = out_space(g, 16, &p)) < 0)
		goto out;
	encrypt_chunk(g, iv, last, p, 16);
	g->len += 16;
	g->payload_written += L->enc_image;
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

/* The extras written after page I: [*lo, *hi). */
static void page_extras(const struct layout *L, int64_t i, int64_t *lo, int64_t *hi)
{
	*lo = L->nextra * i / L->pages;
	*hi = L->nextra * (i + 1) / L->pages;
}

/* Scan shape (note 8): up to MAX extras of kind KIND among page I's, as
 * object numbers in OUT; returns how many. */
static int scan_refs(const struct layout *L, int64_t i, int kind, int max, uint32_t *out)
{
	int64_t lo, hi, e;
	int n = 0;

	page_extras(L, i, &lo, &hi);
	for (e = lo + ((kind - lo % SCAN_CYCLE) + SCAN_CYCLE) % SCAN_CYCLE; e < hi && n < max; e += SCAN_CYCLE)
		out[n++] = L->extra0 + (uint32_t)e;
	return n;
}

static void filler(struct gen *g, size_t n);

static int put_page(struct gen *g, int64_t i)
{
	const struct layout *L = &g->L;
	int64_t first = 0, step = 0, n, k;
	uint32_t annots[SCAN_ANNOTS], fonts[SCAN_FONTS];
	int na = 0, nf = 0, t;
	double slot, w, h;
	int rc;

	n = page_images(L, i, &first, &step);
	if (L->scan) {
		na = scan_refs(L, i, K_ANNOT, SCAN_ANNOTS, annots);
		nf = scan_refs(L, i, K_FONT, SCAN_FONTS, fonts);
	}
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
	if (nf > 0) {
		ps_buf_puts(&g->ob, " /Font <<");
		for (t = 0; t < nf; t++)
			ps_buf_printf(&g->ob, " /F%d %" PRIu32 " 0 R", t, fonts[t]);
		ps_buf_puts(&g->ob, " >>");
	}
	ps_buf_puts(&g->ob, " >>");
	if (na > 0) {
		ps_buf_puts(&g->ob, " /Annots [");
		for (t = 0; t < na; t++)
			ps_buf_printf(&g->ob, "%s%" PRIu32 " 0 R", t ? " " : "", annots[t]);
		ps_buf_puts(&g->ob, "]");
	}
	ps_buf_printf(&g->ob, " /Contents %" PRIu32 " 0 R >>\nendobj\n", L->content0 + (uint32_t)i);
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
	if (nf > 0) {   /* invisible OCR text over the scan (note 8) */
		ps_buf_puts(&g->pt, "BT 3 Tr /F0 9 Tf 11 TL 36 740 Td\n");
		for (t = 3 + (int)(rng_next(&g->rng) % 3); t > 0; t--) {
			ps_buf_putc(&g->pt, '(');
			filler(g, 40 + (size_t)(rng_next(&g->rng) % 40));
			ps_buf_puts(&g->pt, ") Tj T*\n");
		}
		ps_buf_puts(&g->pt, "ET\n");
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

/* Appends string P to the dict text g->dt: AESV3-encrypted hex in a
 * direct object, plaintext hex inside an object stream (which is
 * encrypted as a whole, ISO 32000-2 7.6.3.1). */
static int dict_str(struct gen *g, const void *p, size_t n)
{
	int rc;

	if (g->o->objstm) {
		put_hex(&g->dt, p, n);
		return 0;
	}
	ps_buf_reset(&g->enc);
	if ((rc = ps_aesv3_encrypt(g->ctx, &g->cipher, p, n, &g->enc)) < 0)
		return rc;
	put_hex(&g->dt, g->enc.data, g->enc.len);
	return 0;
}

/* Emits the dict text g->dt as object NUM: directly, or into the object
 * stream being filled (note 6), which is flushed when full or when this
 * was the last small dict. */
static int emit_dict(struct gen *g, uint32_t num)
{
	const struct layout *L = &g->L;
	int64_t d = g->dicts_done++;
	int rc;

	if (g->dt.oom)
		return ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory building object %" PRIu32, num);
	if (!g->o->objstm) {
		begin_obj(g, num);
		ps_buf_append(&g->ob, g->dt.data, g->dt.len);
		ps_buf_puts(&g->ob, "\nendobj\n");
		rc = out_ob(g);
		ps_buf_reset(&g->dt);
		return rc;
	}
	if (g->osm_count == 0)
		g->osm_num = L->objstm0 + (uint32_t)(d / OBJSTM_N);
	ps_buf_printf(&g->osm_hdr, "%" PRIu32 " %zu ", num, g->osm_body.len);
	ps_buf_append(&g->osm_body, g->dt.data, g->dt.len);
	ps_buf_putc(&g->osm_body, '\n');
	ps_buf_reset(&g->dt);
	g->xtype[num] = 2;
	g->xoff[num] = g->osm_num;
	g->xidx[num] = (uint16_t)g->osm_count;
	g->osm_count++;
	if (g->osm_count == OBJSTM_N || d == L->ndicts - 1)
		return flush_objstm(g);
	return 0;
}

/* A "record E: ..." text of about N bytes into g->pt. */
static int record_text(struct gen *g, int64_t e, size_t n, int eol)
{
	ps_buf_reset(&g->pt);
	ps_buf_printf(&g->pt, "record %" PRId64 ": ", e);
	filler(g, n > g->pt.len ? n - g->pt.len : 0);
	if (eol)
		ps_buf_putc(&g->pt, '\n');
	if (g->pt.oom)
		return ps_err(g->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

/* Scan-shape extra E of page I (notes 1 and 8). */
static int put_scan_extra(struct gen *g, int64_t e, int64_t i)
{
	static const char tounicode[] =
		"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
		"/CMapName /PSGen-WinAnsi-UCS def /CMapType 2 def\n"
		"1 begincodespacerange <00> <FF> endcodespacerange\n"
		"1 beginbfrange <20> <7E> <0020> endbfrange\n"
		"endcmap CMapName currentdict /CMap defineresource pop end end\n";
	static const char ap[] = "q 1 0.85 0.3 rg 0 0 20 20 re f 0 G 0.5 w 2 2 16 16 re S Q\n";
	const struct layout *L = &g->L;
	uint32_t num = L->extra0 + (uint32_t)e;
	char t[96], extra[96];
	int64_t x, y;
	int rc, k, n;

	switch (e % SCAN_CYCLE) {
	case K_ANNOT:
		if ((rc = record_text(g, e, 40 + (size_t)(rng_next(&g->rng) % 80), 0)) < 0)
			return rc;
		x = 36 + (int64_t)(rng_next(&g->rng) % 520);
		y = 36 + (int64_t)(rng_next(&g->rng) % 700);
		ps_buf_printf(&g->dt, "<< /Type /Annot /Subtype /Text /Rect [%" PRId64 " %" PRId64 " %" PRId64
		              " %" PRId64 "] /F 4 /P %" PRIu32 " 0 R /Contents ", x, y, x + 20, y + 20,
		              L->page0 + (uint32_t)i);
		if ((rc = dict_str(g, g->pt.data, g->pt.len)) < 0)
			return rc;
		n = snprintf(t, sizeof t, "reviewer %02u", (unsigned)(rng_next(&g->rng) % 40));
		ps_buf_puts(&g->dt, " /T ");
		if ((rc = dict_str(g, t, (size_t)n)) < 0)
			return rc;
		n = snprintf(t, sizeof t, "D:2024%02u%02u120000Z", (unsigned)(1 + e % 12), (unsigned)(1 + e % 28));
		ps_buf_puts(&g->dt, " /M ");
		if ((rc = dict_str(g, t, (size_t)n)) < 0)
			return rc;
		n = snprintf(t, sizeof t, "annot-%" PRId64, e);
		ps_buf_puts(&g->dt, " /NM ");
		if ((rc = dict_str(g, t, (size_t)n)) < 0)
			return rc;
		if (e + 1 < L->nextra)
			ps_buf_printf(&g->dt, " /AP << /N %" PRIu32 " 0 R >>", num + 1);
		ps_buf_printf(&g->dt, " /PSGenN %" PRId64 " >>", e);
		return emit_dict(g, num);
	case K_AP:
		snprintf(extra, sizeof extra, " /Type /XObject /Subtype /Form /BBox [0 0 20 20] /PSGenN %" PRId64, e);
		return put_small_stream(g, num, extra, ap, sizeof ap - 1);
	case K_RECDICT:
	case K_RECDICT2:
		if ((rc = record_text(g, e, 60 + (size_t)(rng_next(&g->rng) % 60), 0)) < 0)
			return rc;
		ps_buf_puts(&g->dt, "<< /PSGen ");
		if ((rc = dict_str(g, g->pt.data, g->pt.len)) < 0)
			return rc;
		ps_buf_printf(&g->dt, " /PSGenN %" PRId64 " >>", e);
		return emit_dict(g, num);
	case K_RECSTREAM:
		if ((rc = record_text(g, e, 150 + (size_t)(rng_next(&g->rng) % 50), 1)) < 0)
			return rc;
		snprintf(extra, sizeof extra, " /PSGenN %" PRId64, e);
		return put_small_stream(g, num, extra, g->pt.data, g->pt.len);
	case K_FONT:
		ps_buf_puts(&g->dt, "<< /Type /Font /Subtype /TrueType /BaseFont /GlyphLessFont "
		            "/Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 126 /Widths [");
		for (k = 32; k <= 126; k++)
			ps_buf_puts(&g->dt, k > 32 ? " 500" : "500");
		ps_buf_putc(&g->dt, ']');
		if (e + 1 < L->nextra)
			ps_buf_printf(&g->dt, " /FontDescriptor %" PRIu32 " 0 R", num + 1);
		if (e + 2 < L->nextra)
			ps_buf_printf(&g->dt, " /ToUnicode %" PRIu32 " 0 R", num + 2);
		ps_buf_printf(&g->dt, " /PSGenN %" PRId64 " >>", e);
		return emit_dict(g, num);
	case K_FONTDESC:
		ps_buf_printf(&g->dt, "<< /Type /FontDescriptor /FontName /GlyphLessFont /Flags 32 "
		              "/FontBBox [0 -200 500 800] /ItalicAngle 0 /Ascent 800 /Descent -200 "
		              "/CapHeight 700 /StemV 80 /PSGenN %" PRId64 " >>", e);
		return emit_dict(g, num);
	default:  /* K_TOUNICODE */
		snprintf(extra, sizeof extra, " /PSGenN %" PRId64, e);
		return put_small_stream(g, num, extra, tounicode, sizeof tounicode - 1);
	}
}

/* Small extra E (written after page I): reference shape, even E a dict
 * with a short encrypted string, odd E a short encrypted stream; scan
 * shape, the cycle of note 1. */
static int put_extra(struct gen *g, int64_t e, int64_t i)
{
	uint32_t num = g->L.extra0 + (uint32_t)e;
	char extra[48];
	int rc;

	if (g->L.scan)
		return put_scan_extra(g, e, i);
	if (e % 2 == 1) {
		if ((rc = record_text(g, e, 150 + (size_t)(rng_next(&g->rng) % 50), 1)) < 0)
			return rc;
		snprintf(extra, sizeof extra, " /PSGenN %" PRId64, e);
		return put_small_stream(g, num, extra, g->pt.data, g->pt.len);
	}
	if ((rc = record_text(g, e, 60 + (size_t)(rng_next(&g->rng) % 60), 0)) < 0)
		return rc;
	ps_buf_puts(&g->dt, "<< /PSGen ");
	if ((rc = dict_str(g, g->pt.data, g->pt.len)) < 0)
		return rc;
	ps_buf_printf(&g->dt, " /PSGenN %" PRId64 " >>", e);
	return emit_dict(g, num);
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
		page_extras(L, i, &elo, &ehi);
		for (e = elo; e < ehi; e++)
			if ((rc = put_extra(g, e, i)) < 0)
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
	      "Shape (without --scale the chosen shape's per-page proportions times --pages;\n"
	      "explicit options override):\n"
	      "  -o, --output OUT          the file to write (required)\n"
	      "      --shape reference|scan\n"
	      "                            reference (default), at --scale 1: 2000 pages,\n"
	      "                            400000 small objects, 12000 image streams carrying\n"
	      "                            1710 MB (~412,000 objects, 1.8 GB; 0.1: 183 MB).\n"
	      "                            scan, a scanned loan file, at --scale 1: 2000 pages,\n"
	      "                            one full-page image each (/FlateDecode, --image-kb,\n"
	      "                            default 776 KiB), 407500 small objects (annotations\n"
	      "                            with strings and appearance streams, fonts,\n"
	      "                            descriptors, ToUnicode CMaps, records) (~412,000\n"
	      "                            objects, 1.75 GB; 0.1: ~41,000 objects, 175 MB)\n"
	      "      --pages N             pages (default 10)\n"
	      "      --small N             small encrypted objects (~200 bytes), the pages'\n"
	      "                            content streams included, so N >= pages\n"
	      "      --large N             large image streams (DeviceGray, 8 bits)\n"
	      "      --payload BYTES       total payload of the large streams, split evenly;\n"
	      "                            suffixes k, M, G, T are powers of 1024\n"
	      "      --image-kb N          each image stream N KiB instead (the image size knob;\n"
	      "                            not with --payload)\n"
	      "      --image-filter none|flate\n"
	      "                            none: raw pixels (reference default); flate: a valid\n"
	      "                            zlib stream of stored blocks, incompressible like a\n"
	      "                            JPEG, decodes to noise (scan default)\n"
	      "      --scale F             multiply the chosen shape by F\n"
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
       O_PERMS, O_GAP, O_SEED, O_QUIET, O_SHAPE, O_IMAGE_KB, O_FILTER };

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
		{ "shape", required_argument, NULL, O_SHAPE },
		{ "image-kb", required_argument, NULL, O_IMAGE_KB },
		{ "image-filter", required_argument, NULL, O_FILTER },
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
		case O_SHAPE:
			if (!strcmp(optarg, "reference"))
				o->scan = 0;
			else if (!strcmp(optarg, "scan"))
				o->scan = 1;
			else
				bad = 1;
			break;
		case O_IMAGE_KB:
			bad = parse_count(optarg, &o->image_kb) || o->image_kb < 1 || o->image_kb > (1 << 22);
			break;
		case O_FILTER:
			if (!strcmp(optarg, "none"))
				o->flate = 0;
			else if (!strcmp(optarg, "flate"))
				o->flate = 1;
			else
				bad = 1;
			o->have_filter = 1;
			break;
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
	if (o->image_kb && o->have_payload) {
		fprintf(stderr, PROG ": --image-kb and --payload both size the images; give one\n");
		return -1;
	}
	/* Note 1: the shape. */
	if (!o->have_scale) {
		if (!o->have_pages)
			o->pages = 10;
		scale = (double)o->pages / (o->scan ? SCAN_PAGES : REF_PAGES);
	} else {
		scale = o->scale;
		v = llround((o->scan ? SCAN_PAGES : REF_PAGES) * scale);
		if (!o->have_pages)
			o->pages = v > 0 ? v : 1;
	}
	if (!o->have_small) {
		o->small = llround((o->scan ? SCAN_SMALL : REF_SMALL) * scale);
		if (o->small < o->pages)
			o->small = o->pages;
	}
	if (!o->have_large)
		o->large = o->scan ? o->pages : llround(REF_LARGE * scale);
	if (!o->have_filter)
		o->flate = o->scan;
	if (o->scan && !o->have_payload && !o->image_kb)
		o->image_kb = SCAN_IMAGE_KB;
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
		        " small, %" PRId64 " large, %s xref%s)%s, payload %.1f MB (%" PRId64 " bytes an image%s),"
		        " file %.1f MB, %.2f s\n",
		        o.out, g.L.size - 1, g.L.pages, g.L.small, g.L.large,
		        o.xref_stream ? "stream" : "table", o.objstm ? " + object streams" : "",
		        o.scan ? " scan shape" : "", g.payload_written / 1e6, g.L.enc_image,
		        g.L.flate ? ", flate" : "", g.off / 1e6, now_sec() - t0);
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
	ps_buf_free(&g.dt);
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
