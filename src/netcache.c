/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netcache.c - the cache of fetched replies (`dss --fetch --cache DIR`), so
 * that a batch of files signed with the same certificates asks each
 * responder once.
 *
 * DESIGN NOTES
 *
 *  1. Keys.  A reply is kept in DIR under the lowercase hexadecimal SHA-256
 *     of the URL, a NUL byte and the request body (the OCSP request for a
 *     POST, nothing for a GET), with the suffix ".der": the same question
 *     to the same place.  Only replies the caller checked and accepted are
 *     put (revoc.c), and the caller checks what it gets again, exactly as
 *     a fetched reply, so a damaged or planted file is refused, never
 *     trusted.
 *  2. The directory may be shared, or writable by others.  DIR itself is
 *     opened with O_DIRECTORY (a symlink to a directory is the caller's
 *     choice, as with any path it names); every file in it is opened with
 *     openat and O_NOFOLLOW, without blocking, and read only when it is a
 *     regular file owned by the effective user: a symlink, a FIFO or
 *     another user's file planted there is a miss, never followed.
 *  3. Writes are atomic: a new file ".tmp.<key>.<random>" created with
 *     O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, written, fsync'ed, then
 *     renamed over the key (renameat replaces a symlink planted under the
 *     key, it does not follow it).  A failure removes the temporary file;
 *     a cache that cannot be written is a warning, not a failure (the reply
 *     was fetched and is used).
 *  4. Asking once.  Files of a batch run side by side (--jobs) and ask
 *     the same questions: the caller holds the entry's lock, flock(2) on
 *     "<key>.lock" (created mode 0600, O_NOFOLLOW, used only when it is a
 *     regular file of ours), from looking the entry up until it has put
 *     the reply (or given up), so the second asker waits and then finds
 *     the first one's reply.  flock locks are per open file description:
 *     they hold between threads of one process too.  A lock file planted
 *     by someone else is not used (no lock, never a wait on a stranger).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps.h"
#include "cpu.h"
#include "netcache.h"
#include "sha2.h"

/* Note 1: the file name of URL and REQ, "<64 hex>.der".  0 or -1. */
static int key_name(ps_ctx *ctx, const char *url, const uint8_t *req, size_t reqlen,
                    char name[80])
{
	static const char hex[] = "0123456789abcdef";
	ps_buf k = PS_BUF_INIT;
	uint8_t h[32];
	int i, rc;

	ps_buf_append(&k, url, strlen(url) + 1);
	ps_buf_append(&k, req, reqlen);
	rc = k.oom ? -1 : ps_sha256_hw(!!(ps_cpu_bits(ctx) & PS_CPU_SHA), k.data, k.len, h);
	ps_buf_free(&k);
	if (rc != 0)
		return -1;
	for (i = 0; i < 32; i++) {
		name[2 * i] = hex[h[i] >> 4];
		name[2 * i + 1] = hex[h[i] & 15];
	}
	memcpy(name + 64, ".der", 5);
	return 0;
}

static int open_dir(ps_ctx *ctx, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return ps_err(ctx, PDFSTAMP_E_IO, "cache directory %s: %s", dir, strerror(errno));
	return fd;
}

int ps_netcache_get(ps_ctx *ctx, const char *dir, const char *url, const uint8_t *req,
                    size_t reqlen, size_t max, ps_buf *out, int *hit)
{
	char name[80];
	struct stat st;
	int dfd, fd;
	ssize_t r;

	*hit = 0;
	if (key_name(ctx, url, req, reqlen, name) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory (or SHA-256 failed)");
	if ((dfd = open_dir(ctx, dir)) < 0)
		return dfd;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	close(dfd);
	if (fd < 0)
		return 0; /* a miss, or a symlink (ELOOP): note 2 */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size <= 0 || (uint64_t)st.st_size > (uint64_t)max) {
		close(fd);
		return 0;
	}
	ps_buf_reset(out);
	if (ps_buf_reserve(out, (size_t)st.st_size) < 0) {
		close(fd);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	while (out->len < (size_t)st.st_size) {
		r = read(fd, out->data + out->len, (size_t)st.st_size - out->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		out->len += (size_t)r;
	}
	close(fd);
	if (out->len != (size_t)st.st_size) {
		ps_buf_reset(out);
		return 0;
	}
	*hit = 1;
	return 0;
}

int ps_netcache_put(ps_ctx *ctx, const char *dir, const char *url, const uint8_t *req,
                    size_t reqlen, const uint8_t *data, size_t len)
{
	char name[80], tmp[128];
	uint8_t rnd[8];
	size_t done = 0;
	int dfd, fd, rc = 0;
	ssize_t w;

	if (key_name(ctx, url, req, reqlen, name) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory (or SHA-256 failed)");
	if ((rc = ps_random(ctx, rnd, sizeof rnd)) < 0)
		return rc;
	snprintf(tmp, sizeof tmp, ".tmp.%.16s.%02x%02x%02x%02x%02x%02x%02x%02x", name, rnd[0],
	         rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	if ((dfd = open_dir(ctx, dir)) < 0)
		return dfd;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cache directory %s: cannot create a file: %s",
		            dir, strerror(errno));
		close(dfd);
		return rc;
	}
	errno = 0;
	while (done < len) {
		w = write(fd, data + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (done == len && fsync(fd) == 0)
		rc = 1;
	if (close(fd) < 0)
		rc = 0;
	if (rc != 1 || renameat(dfd, tmp, dfd, name) < 0) {
		rc = ps_err(ctx, PDFSTAMP_E_IO, "cache directory %s: cannot write %s: %s", dir,
		            name, errno ? strerror(errno) : "short write");
		unlinkat(dfd, tmp, 0);
	} else {
		rc = 0;
		fsync(dfd);
	}
	close(dfd);
	return rc;
}

int ps_netcache_lock(ps_ctx *ctx, const char *dir, const char *url, const uint8_t *req,
                     size_t reqlen, int *fd)
{
	char name[80];
	struct stat st;
	int dfd;

	*fd = -1;
	if (key_name(ctx, url, req, reqlen, name) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory (or SHA-256 failed)");
	memcpy(name + 64, ".lock", 6);
	if ((dfd = open_dir(ctx, dir)) < 0)
		return dfd;
	*fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
	             0600);
	close(dfd);
	if (*fd < 0)
		return 0;
	if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(*fd);
		*fd = -1;
		return 0;
	}
	while (flock(*fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(*fd);
			*fd = -1;
			return 0;
		}
	}
	return 0;
}

void ps_netcache_unlock(int *fd)
{
	if (*fd >= 0) {
		flock(*fd, LOCK_UN);
		close(*fd);
	}
	*fd = -1;
}
