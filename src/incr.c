/*
 * incr.c - the incremental writer: one appended revision per transaction.
 *
 * DESIGN NOTES
 *
 * States:   OPEN --commit ok--> DONE
 *             \--any failure--> FAILED   (free is valid in every state)
 *
 * Invariants:
 *  1. Append only (ISO 32000-2 7.5.6).  The first L bytes of the input
 *     (L = its length when the document was opened) are never written: with
 *     -o they are copied, in place they are left alone and only bytes from
 *     offset L on are written.
 *  2. New objects are plaintext in memory and encrypted only while being
 *     serialised: strings per /StrF, streams per /StmF, each with a fresh
 *     IV from the context's pool (AESV3, 7.6.3.1: IV || AES-256-CBC ||
 *     PKCS#7 pad), /Length = encrypted length.  Nothing encrypted is ever
 *     decrypted back into a file; no plaintext reaches any file.
 *  3. The new section has the form of the newest one (spec-facts 3.2): a
 *     classic table after a table or hybrid section (no /XRefStm carried),
 *     an xref stream after a stream, with /W sized from the largest offset
 *     and an entry for the xref stream itself.  The trailer carries every
 *     previous key (same /Encrypt, /Root, ID[0]) and sets /Prev, /Size and
 *     a fresh ID[1].
 *  4. Durability.  -o: an unnamed temp file in the target's directory
 *     (io.c) <- copy of L bytes + section, verify, fsync, chmod, rename,
 *     fsync dir.
 *     In place (under the exclusive lock taken at open): journal file
 *     "FILE.pdfstamp-journal" holding L and a SHA-256 of the 4 KiB before L
 *     is written and fsynced first; then one pwrite at L, fsync, verify,
 *     and only then the journal is removed.  Any failure truncates back to
 *     L.  A crash leaves the journal, and the next open (or
 *     pdfstamp_recover) truncates the file back to L: the original bytes.
 *  5. Before the commit reports success the output is re-opened, the new
 *     startxref must point at the new section, and every new object is
 *     looked up, decrypted and compared with what we meant to write.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mbedtls/sha256.h>

#include "ps.h"

#define JOURNAL_SUFFIX ".pdfstamp-journal"
#define JOURNAL_MAGIC "pdfstamp-journal 1"
#define JOURNAL_HASHSPAN 4096
#define MAX_TABLE_OFFSET INT64_C(9999999999)

/* ---- small I/O helpers -------------------------------------------------------- */

/* Copies the first LEN bytes of SRC to DST (both at offset 0). */
static int copy_prefix(ps_ctx *ctx, int src, int dst, int64_t len)
{
	loff_t in = 0, out = 0;
	uint8_t *buf = NULL;

	while (in < len) {
		ssize_t k = copy_file_range(src, &in, dst, &out, (size_t)(len - in > (1 << 30) ? (1 << 30) : len - in), 0);
		if (k > 0)
			continue;
		if (k == 0)
			return ps_err(ctx, PDFSTAMP_E_IO, "the input shrank while it was being copied");
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP && errno != EINVAL)
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot copy the input: %s", strerror(errno));
		break; /* fall back to read/write */
	}
	while (in < len) {
		ssize_t k, want = (ssize_t)(len - in > (1 << 20) ? (1 << 20) : len - in);
		if (!buf && !(buf = malloc(1 << 20)))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		k = pread(src, buf, (size_t)want, in);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			free(buf);
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot read the input: %s", k < 0 ? strerror(errno) : "short file");
		}
		if (ps_write_all(ctx, dst, buf, (size_t)k, out, "the output") < 0) {
			free(buf);
			return PDFSTAMP_E_IO;
		}
		in += k;
		out += k;
	}
	free(buf);
	return 0;
}

/* ---- the journal of in-place appends ------------------------------------------ */

static char *journal_path(const char *path)
{
	size_t n = strlen(path);
	char *j = malloc(n + sizeof JOURNAL_SUFFIX);

	if (j) {
		memcpy(j, path, n);
		memcpy(j + n, JOURNAL_SUFFIX, sizeof JOURNAL_SUFFIX);
	}
	return j;
}

/* SHA-256 of the JOURNAL_HASHSPAN bytes before L, hex. */
static int tail_hash(ps_ctx *ctx, int fd, int64_t l, char hex[65])
{
	uint8_t buf[JOURNAL_HASHSPAN], h[32];
	int64_t start = l > JOURNAL_HASHSPAN ? l - JOURNAL_HASHSPAN : 0;
	size_t n = (size_t)(l - start), got = 0;
	int i;

	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, start + (int64_t)got);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			return ps_err(ctx, PDFSTAMP_E_IO, "cannot read the file: %s", k < 0 ? strerror(errno) : "short file");
		}
		got += (size_t)k;
	}
	mbedtls_sha256_ret(buf, n, h, 0);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
	return 0;
}

/* The journal's path and directory, computed before anything is written
 * so that nothing after the point of no return needs to allocate. */
struct journal {
	char *path, *dir;
};

static int journal_names(ps_ctx *ctx, const char *file, struct journal *j)
{
	char *copy;

	j->path = journal_path(file);
	copy = j->path ? strdup(j->path) : NULL;
	j->dir = copy ? strdup(dirname(copy)) : NULL;
	free(copy);
	if (!j->dir) {
		free(j->path);
		j->path = NULL;
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	return 0;
}

static void journal_names_free(struct journal *j)
{
	free(j->path);
	free(j->dir);
}

static int journal_write(ps_ctx *ctx, const struct journal *j, int fd, int64_t l)
{
	char hex[65], text[160];
	int jfd = -1, rc, n;

	if ((rc = tail_hash(ctx, fd, l, hex)) < 0)
		return rc;
	n = snprintf(text, sizeof text, JOURNAL_MAGIC "\n%" PRId64 "\n%s\n", l, hex);
	jfd = open(j->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (jfd < 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot create the journal %s: %s", j->path, strerror(errno));
	if ((rc = ps_write_all(ctx, jfd, (const uint8_t *)text, (size_t)n, 0, "the journal")) < 0 ||
	    (rc = ps_sync_fd(ctx, jfd, "the journal")) < 0 || (rc = ps_sync_dir(ctx, j->dir)) < 0)
		unlink(j->path);
	close(jfd);
	return rc;
}

/* Removes the journal; allocates nothing. */
static int journal_remove(ps_ctx *ctx, const struct journal *j)
{
	if (unlink(j->path) < 0 && errno != ENOENT)
		return ps_err(ctx, PDFSTAMP_E_IO, "cannot remove the journal %s: %s", j->path, strerror(errno));
	return ps_sync_dir(ctx, j->dir);
}

int pdfstamp_recover(pdfstamp_ctx *ctx, const char *path, int *recovered)
{
	struct journal j = {NULL, NULL};
	char *jp, text[200], hex[65], want[65];
	int jfd = -1, fd = -1, rc = 0;
	ssize_t n;
	int64_t l;
	struct stat st;

	*recovered = 0;
	if ((rc = journal_names(ctx, path, &j)) < 0)
		return rc;
	jp = j.path;
	jfd = open(jp, O_RDONLY | O_CLOEXEC);
	if (jfd < 0) {
		if (errno != ENOENT)
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot read the journal %s: %s", jp, strerror(errno));
		goto out;
	}
	n = read(jfd, text, sizeof text - 1);
	if (n < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot read the journal %s: %s", jp, strerror(errno));
		goto out;
	}
	text[n] = 0;
	if (sscanf(text, JOURNAL_MAGIC "\n%" SCNd64 "\n%64s\n", &l, want) != 2 || l < 0) {
		/* A journal torn before its fsync: the append had not started. */
		if (strncmp(text, JOURNAL_MAGIC, (size_t)n < sizeof JOURNAL_MAGIC - 1 ? (size_t)n : sizeof JOURNAL_MAGIC - 1) == 0) {
			rc = journal_remove(ctx, &j);
			if (rc == 0)
				ps_warn(ctx, "removed the incomplete journal %s of an interrupted update "
				        "(it stopped before changing the file)", jp);
			goto out;
		}
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "%s is not a pdfstamp journal; remove it by hand", jp);
		goto out;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "an interrupted update must be rolled back, but the file cannot be opened for writing: %s",
		            strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "the file is locked by another process");
		goto out;
	}
	if (fstat(fd, &st) < 0 || (int64_t)st.st_size < l) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "journal %s says the file had %" PRId64 " bytes, but it is shorter; "
		            "not touching it", jp, l);
		goto out;
	}
	if ((rc = tail_hash(ctx, fd, l, hex)) < 0)
		goto out;
	if (strcmp(hex, want) != 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "journal %s does not match the file; not touching it", jp);
		goto out;
	}
	if ((int64_t)st.st_size > l) {
		if (ftruncate(fd, (off_t)l) < 0 || fsync(fd) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "cannot roll back the interrupted update: %s", strerror(errno));
			goto out;
		}
		*recovered = 1;
	}
	close(jfd);
	jfd = -1;
	rc = journal_remove(ctx, &j);
	if (rc == 0)
		*recovered = 1;
out:
	if (jfd >= 0)
		close(jfd);
	if (fd >= 0)
		close(fd);
	journal_names_free(&j);
	return rc;
}

/* ---- transaction ---------------------------------------------------------------- */

int ps_update_begin(ps_doc *doc, const struct pdfstamp_write_opts *w, ps_update *up)
{
	ps_ctx *ctx = doc->ctx;
	uint32_t i, hi = 0;

	memset(up, 0, sizeof *up);
	up->doc = doc;
	up->state = PS_UP_FAILED;
	if (!w || w->version != PDFSTAMP_WRITE_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "write options of an unknown version");
	if (!(w->flags & PDFSTAMP_WRITE_IN_PLACE) == !w->output)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "give either an output file or in-place mode");
	if ((w->flags & PDFSTAMP_WRITE_IN_PLACE) && !doc->locked)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "in-place updates need a document opened for writing");
	if (doc->encrypted && !doc->authenticated)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the document is not authenticated");
	if (doc->trailing > 0 && !(w->flags & PDFSTAMP_WRITE_ALLOW_TRAILING))
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "%lld bytes follow the last %%%%EOF; refusing to append after them "
		              "(--allow-trailing-bytes keeps them and appends anyway)", (long long)doc->trailing);
	up->base_len = doc->size;
	for (i = doc->nxref; i-- > 1;) {
		if (doc->xref[i].type != 0) {
			hi = i;
			break;
		}
	}
	if (doc->size_key > PS_MAX_OBJNUM || hi >= PS_MAX_OBJNUM)
		return ps_err(ctx, PDFSTAMP_E_UNSUPPORTED, "no object numbers left for new objects");
	up->next_num = (uint32_t)doc->size_key > hi + 1 ? (uint32_t)doc->size_key : hi + 1;
	up->trailer_set = ps_new_dict();
	if (!up->trailer_set)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	up->state = PS_UP_OPEN;
	return 0;
}

uint32_t ps_update_alloc(ps_update *up)
{
	if (up->next_num > PS_MAX_OBJNUM) {
		ps_err(up->doc->ctx, PDFSTAMP_E_UNSUPPORTED, "no object numbers left for new objects");
		return 0;
	}
	return up->next_num++;
}

int ps_update_put(ps_update *up, uint32_t num, uint16_t gen, ps_obj *obj)
{
	size_t i;

	if (up->state != PS_UP_OPEN || !obj || num == 0) {
		ps_obj_free(obj);
		return ps_err(up->doc->ctx, obj ? PDFSTAMP_E_INTERNAL : PDFSTAMP_E_NOMEM,
		              obj ? "bad update state" : "out of memory");
	}
	if (up->doc->encrypt_num && num == up->doc->encrypt_num) {
		/* The page tree, /Annots, /Root or /Info of a damaged file names the
		 * encryption dictionary, which is never encrypted and must not be
		 * replaced (found by fuzz_incr). */
		ps_obj_free(obj);
		return ps_err(up->doc->ctx, PDFSTAMP_E_FORMAT,
		              "object %u, which this update would have to replace, is the /Encrypt dictionary: "
		              "the file is damaged", num);
	}
	for (i = 0; i < up->nobjs; i++) {
		if (up->objs[i].num == num) {
			/* Callers edit a pending object in place; a second put means one
			 * object plays two roles in a damaged file (meta on a file whose
			 * /Info is its /Root: replacing would free what the first
			 * role's caller still uses; found by replaying fuzz corpora). */
			ps_obj_free(obj);
			return ps_err(up->doc->ctx, PDFSTAMP_E_FORMAT,
			              "object %u would be replaced twice by this update: the file uses it for two "
			              "different things (e.g. as both /Root and /Info)", num);
		}
	}
	if (up->nobjs == up->cap) {
		size_t ncap = up->cap ? up->cap * 2 : 8;
		ps_newobj *n = realloc(up->objs, ncap * sizeof *n);
		if (!n) {
			ps_obj_free(obj);
			return ps_err(up->doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		up->objs = n;
		up->cap = ncap;
	}
	up->objs[up->nobjs].num = num;
	up->objs[up->nobjs].gen = gen;
	up->objs[up->nobjs].obj = obj;
	up->nobjs++;
	return 0;
}

int ps_update_set_trailer(ps_update *up, const char *key, ps_obj *val)
{
	int rc = ps_dict_put(up->trailer_set, key, val);

	return rc < 0 ? ps_err(up->doc->ctx, rc, "out of memory") : 0;
}

void ps_update_free(ps_update *up)
{
	size_t i;

	if (!up)
		return;
	for (i = 0; i < up->nobjs; i++)
		ps_obj_free(up->objs[i].obj);
	free(up->objs);
	ps_obj_free(up->trailer_set);
	memset(up, 0, sizeof *up);
}

/* ---- serialisation ---------------------------------------------------------------- */

struct enc_ud {
	ps_doc *doc;
	ps_buf tmp;
};

static int encrypt_string(void *ud_, ps_obj *str, const ps_obj *parent, const char *key)
{
	struct enc_ud *ud = ud_;
	int rc;

	if (parent && key && strcmp(key, "Contents") == 0 && ps_is_signature_dict(parent))
		return 0;
	ud->tmp.len = 0;
	if ((rc = ps_aesv3_encrypt(ud->doc->ctx, &ud->doc->cipher, str->u.str.p, str->u.str.len, &ud->tmp)) < 0)
		return rc;
	if (ps_str_set(str, ud->tmp.data, ud->tmp.len) < 0)
		return ps_err(ud->doc->ctx, PDFSTAMP_E_NOMEM, "out of memory");
	str->u.str.hex = 1;
	return 0;
}

/* Appends "num gen obj ... endobj" for one new object. */
static int emit_object(ps_update *up, const ps_newobj *no, ps_buf *out)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	struct enc_ud ud = {doc, PS_BUF_INIT};
	ps_buf data = PS_BUF_INIT;
	ps_obj *copy = ps_obj_copy(no->obj);
	int rc = 0;

	if (!copy)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (doc->encrypted && !doc->strf_identity) {
		if ((rc = ps_obj_walk_strings(copy, encrypt_string, &ud)) < 0)
			goto out;
	}
	ps_buf_printf(out, "%u %u obj\n", no->num, no->gen);
	if (copy->kind == PS_STREAM) {
		if (ps_stream_needs_crypt(doc->encrypted, doc->stmf_identity, doc->sp.encrypt_metadata, copy)) {
			if ((rc = ps_aesv3_encrypt(ctx, &doc->cipher, copy->u.stm.data, copy->u.stm.len, &data)) < 0)
				goto out;
		} else {
			ps_buf_append(&data, copy->u.stm.data, copy->u.stm.len);
		}
		if ((rc = ps_dict_put(copy->u.stm.dict, "Length", ps_new_int((int64_t)data.len))) < 0) {
			rc = ps_err(ctx, rc, "out of memory");
			goto out;
		}
		ps_serialize(out, copy);
		ps_buf_puts(out, "\nstream\r\n");
		ps_buf_append(out, data.data, data.len);
		ps_buf_puts(out, "\nendstream\nendobj\n");
	} else {
		ps_serialize(out, copy);
		ps_buf_puts(out, "\nendobj\n");
	}
	if (out->oom || data.oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_buf_free(&ud.tmp);
	ps_buf_free(&data);
	ps_obj_free(copy);
	return rc;
}

static int cmp_newobj(const void *a, const void *b)
{
	const ps_newobj *x = a, *y = b;

	return x->num < y->num ? -1 : x->num > y->num;
}

/* The new trailer: every key of the newest one but the section-specific
 * ones, then /Prev, /Size, /ID and what the caller set (spec-facts 3.1). */
static int build_trailer(ps_update *up, uint32_t size, int for_stream, ps_obj **out)
{
	static const char *const drop[] = {"Prev", "XRefStm", "DocChecksum", "Type", "W", "Index", "Filter",
	                                   "DecodeParms", "Length", "Size", "ID"};
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	ps_obj *t = ps_obj_copy(doc->trailer), *id, *old_id, *id0;
	uint8_t rnd[16];
	size_t k;
	int rc = 0;

	if (!t)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (k = 0; k < sizeof drop / sizeof drop[0]; k++)
		ps_dict_del(t, drop[k]);
	if ((rc = ps_random(ctx, rnd, sizeof rnd)) < 0)
		goto fail;
	old_id = ps_dict_get(doc->trailer, "ID");
	id0 = ps_array_get(old_id, 0);
	id = ps_new_array();
	if (!id)
		goto oom;
	if (id0 && id0->kind == PS_STR) {
		rc = ps_array_push(id, ps_obj_copy(id0));
	} else {
		/* No usable /ID: both halves new (required when /Encrypt is present). */
		rc = ps_array_push(id, ps_new_str(rnd, sizeof rnd));
		if (rc == 0 && (rc = ps_random(ctx, rnd, sizeof rnd)) < 0) {
			ps_obj_free(id);
			goto fail;
		}
	}
	if (rc == 0)
		rc = ps_array_push(id, ps_new_str(rnd, sizeof rnd));
	if (rc < 0) {
		ps_obj_free(id);
		goto oom;
	}
	ps_array_get(id, 0)->u.str.hex = 1;
	ps_array_get(id, 1)->u.str.hex = 1;
	if ((rc = ps_dict_put(t, "ID", id)) < 0) /* owns id from here, also on failure */
		goto oom;
	if (for_stream && (rc = ps_dict_put(t, "Type", ps_new_name("XRef"))) < 0)
		goto oom;
	if ((rc = ps_dict_put(t, "Size", ps_new_int(size))) < 0 ||
	    (rc = ps_dict_put(t, "Prev", ps_new_int(doc->startxref))) < 0)
		goto oom;
	for (k = 0; k < up->trailer_set->u.dict.len; k++) {
		ps_dict_ent *e = &up->trailer_set->u.dict.ents[k];
		if ((rc = ps_dict_put(t, e->key, ps_obj_copy(e->val))) < 0)
			goto oom;
	}
	*out = t;
	return 0;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
fail:
	ps_obj_free(t);
	return rc;
}

static int bytes_for(uint64_t v)
{
	int n = 1;

	while (v >>= 8)
		n++;
	return n;
}

/* Serialises the whole section into OUT; OFFS[i] receives the offset of
 * object i (objs sorted by number). */
static int build_section(ps_update *up, int lead_eol, ps_buf *out, int64_t *xref_off)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	int stream_form = doc->sections[0].kind == PDFSTAMP_XREF_STREAM;
	int64_t *offs = NULL;
	ps_obj *trailer = NULL;
	uint32_t size, xnum = 0;
	size_t i, j;
	int rc = 0;

	if (up->nobjs == 0)
		return ps_err(ctx, PDFSTAMP_E_INTERNAL, "an update with no objects");
	qsort(up->objs, up->nobjs, sizeof *up->objs, cmp_newobj);
	if (stream_form && (xnum = ps_update_alloc(up)) == 0)
		return ctx->errcode;
	offs = calloc(up->nobjs + 1, sizeof *offs);
	if (!offs)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (lead_eol)
		ps_buf_putc(out, '\n');
	for (i = 0; i < up->nobjs; i++) {
		offs[i] = up->base_len + (int64_t)out->len;
		if ((rc = emit_object(up, &up->objs[i], out)) < 0)
			goto out;
	}
	size = up->next_num > (uint32_t)doc->size_key ? up->next_num : (uint32_t)doc->size_key;
	*xref_off = up->base_len + (int64_t)out->len;
	if ((rc = build_trailer(up, size, stream_form, &trailer)) < 0)
		goto out;
	if (!stream_form) {
		if (*xref_off > MAX_TABLE_OFFSET) {
			rc = ps_err(ctx, PDFSTAMP_E_UNSUPPORTED,
			            "offsets past 9,999,999,999 bytes do not fit a classic xref table");
			goto out;
		}
		ps_buf_puts(out, "xref\n");
		for (i = 0; i < up->nobjs; i = j) {
			for (j = i + 1; j < up->nobjs && up->objs[j].num == up->objs[j - 1].num + 1; j++)
				;
			ps_buf_printf(out, "%u %zu\n", up->objs[i].num, j - i);
			for (; i < j; i++)
				ps_buf_printf(out, "%010" PRId64 " %05u n\r\n", offs[i], up->objs[i].gen);
		}
		ps_buf_puts(out, "trailer\n");
		ps_serialize(out, trailer);
		ps_buf_printf(out, "\nstartxref\n%" PRId64 "\n%%%%EOF\n", *xref_off);
	} else {
		/* The xref stream lists the new objects and itself (pdf-issues#523). */
		ps_buf rows = PS_BUF_INIT, z = PS_BUF_INIT;
		ps_obj *index = ps_new_array(), *w = ps_new_array();
		ps_newobj self = {xnum, 0, NULL};
		int wo = bytes_for((uint64_t)*xref_off);
		size_t n = up->nobjs + 1;

		offs[up->nobjs] = *xref_off;
		rc = (!index || !w) ? PDFSTAMP_E_NOMEM : 0;
		if (rc == 0)
			rc = ps_array_push(w, ps_new_int(1));
		if (rc == 0)
			rc = ps_array_push(w, ps_new_int(wo));
		if (rc == 0)
			rc = ps_array_push(w, ps_new_int(2));
		/* xnum is the highest number, so it extends or follows the list. */
		for (i = 0; rc == 0 && i < n; i = j) {
			const ps_newobj *oi = i < up->nobjs ? &up->objs[i] : &self;
			for (j = i + 1; j < n; j++) {
				const ps_newobj *oj = j < up->nobjs ? &up->objs[j] : &self;
				const ps_newobj *op = j - 1 < up->nobjs ? &up->objs[j - 1] : &self;
				if (oj->num != op->num + 1)
					break;
			}
			rc = ps_array_push(index, ps_new_int(oi->num));
			if (rc == 0)
				rc = ps_array_push(index, ps_new_int((int64_t)(j - i)));
		}
		for (i = 0; rc == 0 && i < n; i++) {
			uint16_t gen = i < up->nobjs ? up->objs[i].gen : 0;
			int b;
			ps_buf_putc(&rows, 1);
			for (b = wo - 1; b >= 0; b--)
				ps_buf_putc(&rows, (int)((uint64_t)offs[i] >> (8 * b)) & 0xff);
			ps_buf_putc(&rows, gen >> 8);
			ps_buf_putc(&rows, gen & 0xff);
		}
		if (rc == 0 && rows.oom)
			rc = PDFSTAMP_E_NOMEM;
		if (rc == 0)
			rc = ps_deflate(ctx, rows.data, rows.len, 6, &z);
		if (rc == 0) {
			rc = ps_dict_put(trailer, "W", w); /* the dict owns them now */
			w = NULL;
		}
		if (rc == 0) {
			rc = ps_dict_put(trailer, "Index", index);
			index = NULL;
		}
		if (rc == 0)
			rc = ps_dict_put(trailer, "Filter", ps_new_name("FlateDecode"));
		if (rc == 0)
			rc = ps_dict_put(trailer, "Length", ps_new_int((int64_t)z.len));
		if (rc == 0) {
			ps_buf_printf(out, "%u 0 obj\n", xnum);
			ps_serialize(out, trailer);
			ps_buf_puts(out, "\nstream\r\n");
			ps_buf_append(out, z.data, z.len);
			ps_buf_printf(out, "\nendstream\nendobj\nstartxref\n%" PRId64 "\n%%%%EOF\n", *xref_off);
		}
		ps_obj_free(index);
		ps_obj_free(w);
		ps_buf_free(&rows);
		ps_buf_free(&z);
		if (rc < 0) {
			if (rc == PDFSTAMP_E_NOMEM)
				rc = ps_err(ctx, rc, "out of memory building the xref stream");
			goto out;
		}
	}
	if (out->oom)
		rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(trailer);
	free(offs);
	return rc;
}

/* ---- verification (invariant 5) --------------------------------------------- */

static int obj_equal(const ps_obj *a, const ps_obj *b, int skip_length)
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
			if (!obj_equal(a->u.arr.items[i], b->u.arr.items[i], 0))
				return 0;
		return 1;
	case PS_DICT: {
		size_t na = 0, nb = 0;
		for (i = 0; i < a->u.dict.len; i++) {
			const char *k = a->u.dict.ents[i].key;
			if (skip_length && strcmp(k, "Length") == 0)
				continue;
			na++;
			if (!obj_equal(a->u.dict.ents[i].val, ps_dict_get(b, k), 0))
				return 0;
		}
		for (i = 0; i < b->u.dict.len; i++)
			if (!(skip_length && strcmp(b->u.dict.ents[i].key, "Length") == 0))
				nb++;
		return na == nb;
	}
	case PS_STREAM:
		return obj_equal(a->u.stm.dict, b->u.stm.dict, 1);
	}
	return 0;
}

static int verify_output(ps_update *up, const char *path, int64_t xref_off)
{
	ps_ctx *ctx = up->doc->ctx;
	ps_doc *v = NULL;
	ps_buf data = PS_BUF_INIT;
	const ps_obj *id0;
	size_t i;
	int rc;

	data.secret = 1;
	/* Only the new section is read back; the security state is the
	 * original's (checked below: its /Encrypt is referenced unchanged). */
	if ((rc = pdfstamp_doc_open(ctx, &v, path, PS_OPEN_NO_RECOVER | PS_OPEN_NEWEST_ONLY)) < 0)
		goto out;
	if (v->startxref != xref_off || v->sections[0].prev != up->doc->startxref) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: the new revision is not the file's newest");
		goto out;
	}
	/* The security state may be carried over only because the new trailer
	 * references the same /Encrypt (and keeps ID[0], which R2-4 keys
	 * depend on and readers compare), and ps_update_put never replaces
	 * the /Encrypt object: this stands in for re-running the password,
	 * which the library does not keep. */
	id0 = ps_array_get(ps_dict_get(up->doc->trailer, "ID"), 0);
	if (id0 && id0->kind != PS_STR)
		id0 = NULL; /* unusable: the writer made a new /ID (build_trailer) */
	if (!obj_equal(ps_dict_get(v->trailer, "Encrypt"), ps_dict_get(up->doc->trailer, "Encrypt"), 0) ||
	    (id0 && !obj_equal(ps_array_get(ps_dict_get(v->trailer, "ID"), 0), id0, 0))) {
		rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: the new trailer changes /Encrypt or ID[0]");
		goto out;
	}
	if (up->doc->encrypted) {
		v->encrypted = 1;
		v->encrypt_num = up->doc->encrypt_num;
		v->sp = up->doc->sp;
		v->strf_identity = up->doc->strf_identity;
		v->stmf_identity = up->doc->stmf_identity;
		if ((rc = ps_doc_auth_key(v, up->doc->key, up->doc->authenticated)) < 0)
			goto out;
	}
	for (i = 0; i < up->nobjs; i++) {
		ps_newobj *no = &up->objs[i];
		ps_obj *got = NULL;
		if ((rc = ps_doc_lookup(v, no->num, &got)) < 0)
			goto out;
		if (!obj_equal(no->obj, got, 0)) {
			rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: object %u does not read back as written", no->num);
			goto out;
		}
		if (no->obj->kind == PS_STREAM) {
			if ((rc = ps_doc_stream_data(v, no->num, got, 0, &data)) < 0)
				goto out;
			if (data.len != no->obj->u.stm.len || memcmp(data.data, no->obj->u.stm.data, data.len) != 0) {
				rc = ps_err(ctx, PDFSTAMP_E_INTERNAL, "self-check: stream %u does not decrypt to what was written",
				            no->num);
				goto out;
			}
		}
	}
out:
	if (rc < 0 && ctx->errcode != PDFSTAMP_E_INTERNAL)
		rc = ps_err_wrap(ctx, PDFSTAMP_E_INTERNAL, "self-check of the output failed");
	ps_buf_free(&data);
	pdfstamp_doc_close(v);
	return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

static int last_byte_is_eol(ps_doc *doc, int *yes)
{
	ps_buf b = PS_BUF_INIT;
	int rc = ps_doc_pread(doc, doc->size - 1, 1, &b);

	*yes = rc == 0 && b.len == 1 && (b.data[0] == '\n' || b.data[0] == '\r');
	ps_buf_free(&b);
	return rc;
}

static int commit_to_new_file(ps_update *up, const char *output, const ps_buf *sec, int64_t xref_off)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	ps_outfile of;
	struct stat st;
	int rc;

	if ((rc = ps_outfile_open(ctx, &of, output)) < 0)
		return rc;
	if (fstat(doc->fd, &st) < 0 || (int64_t)st.st_size != up->base_len) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "the input changed size since it was opened");
		goto out;
	}
	if ((rc = copy_prefix(ctx, doc->fd, of.fd, up->base_len)) < 0 ||
	    (rc = ps_write_all(ctx, of.fd, sec->data, sec->len, up->base_len, "the output")) < 0)
		goto out;
	ps_fault("after-write");
	if ((rc = verify_output(up, ps_outfile_path(&of), xref_off)) < 0)
		goto out;
	rc = ps_outfile_commit(ctx, &of, doc->mode);
out:
	ps_outfile_free(&of);
	return rc;
}

static int commit_in_place(ps_update *up, const ps_buf *sec, int64_t xref_off)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	struct journal j;
	struct stat st;
	int rc;

	if (fstat(doc->fd, &st) < 0 || (int64_t)st.st_size != up->base_len)
		return ps_err(ctx, PDFSTAMP_E_IO, "the file changed size since it was opened");
	if ((rc = journal_names(ctx, doc->path, &j)) < 0)
		return rc;
	if ((rc = journal_write(ctx, &j, doc->fd, up->base_len)) < 0)
		goto out;
	ps_fault("after-journal");
	if ((rc = ps_write_all(ctx, doc->fd, sec->data, sec->len, up->base_len, "the update")) < 0)
		goto rollback;
	ps_fault("after-write");
	if ((rc = ps_sync_fd(ctx, doc->fd, "the file")) < 0)
		goto rollback;
	ps_fault("after-fsync");
	if ((rc = verify_output(up, doc->path, xref_off)) < 0)
		goto rollback;
	/* The commit point is the journal's removal.  If it cannot be removed
	 * the update is undone now (and otherwise by the next open). */
	if ((rc = journal_remove(ctx, &j)) < 0)
		goto rollback;
	goto out;
rollback:
	{
		char msg[256];
		int code = ctx->errcode;
		memcpy(msg, ctx->errmsg, sizeof msg);
		if (ftruncate(doc->fd, (off_t)up->base_len) < 0 || fsync(doc->fd) < 0) {
			rc = ps_err(ctx, PDFSTAMP_E_IO, "%s; and the rollback failed (%s): the journal %s"
			            " is kept so that the next run restores the file", msg, strerror(errno), j.path);
			goto out;
		}
		journal_remove(ctx, &j);
		rc = ps_err(ctx, code, "%s", msg);
	}
out:
	journal_names_free(&j);
	return rc;
}

int ps_update_commit(ps_update *up, const struct pdfstamp_write_opts *w, struct pdfstamp_result *res)
{
	ps_doc *doc = up->doc;
	ps_buf sec = PS_BUF_INIT;
	int64_t xref_off = 0;
	int eol, rc;

	if (up->state != PS_UP_OPEN)
		return ps_err(doc->ctx, PDFSTAMP_E_INTERNAL, "bad update state");
	up->state = PS_UP_FAILED;
	if ((rc = last_byte_is_eol(doc, &eol)) < 0 || (rc = build_section(up, !eol, &sec, &xref_off)) < 0)
		goto out;
	if (w->flags & PDFSTAMP_WRITE_IN_PLACE)
		rc = commit_in_place(up, &sec, xref_off);
	else
		rc = commit_to_new_file(up, w->output, &sec, xref_off);
	if (rc < 0)
		goto out;
	up->state = PS_UP_DONE;
	if (res) {
		res->base_length = up->base_len;
		res->xref_offset = xref_off;
		res->bytes_appended = (int64_t)sec.len;
	}
out:
	ps_buf_free(&sec);
	return rc;
}
