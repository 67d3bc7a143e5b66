/* SPDX-License-Identifier: Apache-2.0 */
/*
 * readfile.c - small input files named on the command line (certificates,
 * OCSP responses, CRLs, keys) read whole, bounded.
 *
 * DESIGN NOTES
 *
 *  1. The file is opened without blocking (a FIFO does not hang us) and
 *     must be a regular file no larger than the caller's bound; it is read
 *     to its end, and a file that grows past its size while it is read is
 *     refused, so the bound holds whatever happens to it meanwhile.
 *  2. A missing, unreadable or non-regular file is a usage error (exit 2:
 *     the command line names something that is not there, passwd.c note
 *     5); one over the bound is a format error (exit 4).
 *  3. With SECRET the buffer is mlock'ed where the system allows it and
 *     every byte read is wiped by cli_free_input, also on errors: private
 *     keys never stay in freed memory.  The buffer is one byte longer than
 *     the file's size (the read that finds a growing file), which
 *     cli_free_input wipes too.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

void cli_free_input(uint8_t *buf, size_t len, int secret)
{
	if (!buf)
		return;
	if (secret) {   /* the buffer is LEN + 1 bytes or more (the read's bound) */
		explicit_bzero(buf, len + 1);
		(void)munlock(buf, len + 1);
	}
	free(buf);
}

int cli_read_input(const char *name, size_t max, int secret, uint8_t **buf, size_t *len)
{
	struct stat st;
	size_t got = 0, cap;
	ssize_t r;
	int fd, rc = 0;

	*buf = NULL;
	*len = 0;
	fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		cli_error(name, "cannot open: %s", strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_error(name, "not a regular file");
		close(fd);
		return CLI_EXIT_USAGE;
	}
	if (st.st_size > (off_t)max) {
		cli_error(name, "larger than %zu bytes", max);
		close(fd);
		return CLI_EXIT_FORMAT;
	}
	cap = (size_t)st.st_size + 1;
	if (!(*buf = malloc(cap))) {
		cli_error(NULL, "out of memory");
		close(fd);
		return CLI_EXIT_IO;
	}
	if (secret)
		(void)mlock(*buf, cap);
	/* the size may change while we read: never more than the bound */
	while (got < cap && (r = read(fd, *buf + got, cap - got)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			cli_error(name, "cannot read: %s", strerror(errno));
			rc = CLI_EXIT_USAGE;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (rc == 0 && got > (size_t)st.st_size) {
		cli_error(name, "the file grew while it was read");
		rc = CLI_EXIT_USAGE;
	}
	if (rc != 0) {
		cli_free_input(*buf, cap - 1, secret);   /* the whole buffer: note 3 */
		*buf = NULL;
		return rc;
	}
	*len = got;
	return 0;
}
