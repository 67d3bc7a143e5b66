/* SPDX-License-Identifier: Apache-2.0 */
/* netcache.h - internal: the --cache DIR of fetched replies, by URL and
 * request (netcache.c; conventions: ps.h). */
#ifndef PS_NETCACHE_H
#define PS_NETCACHE_H

#include "ps.h"

/* The reply kept for URL and the request body REQ[0..REQLEN) in DIR: 0
 * with *HIT 1 and OUT filled (at most MAX bytes), or *HIT 0 when there is
 * none (or only one that is not ours to trust: note 2); NOMEM, or IO for
 * a DIR that cannot be opened. */
int ps_netcache_get(ps_ctx *ctx, const char *dir, const char *url, const uint8_t *req,
                    size_t reqlen, size_t max, ps_buf *out, int *hit);
/* Keeps DATA[0..LEN) as that reply, atomically (note 3).  0 or IO. */
int ps_netcache_put(ps_ctx *ctx, const char *dir, const char *url, const uint8_t *req,
                    size_t reqlen, const uint8_t *data, size_t len);

/* Takes the lock of URL and REQ's entry in DIR (note 4): *FD is the
 * locked descriptor to hand to ps_netcache_unlock, or -1 when there is no
 * lock to take (a lock file that is not ours: a planted one).  0, or IO
 * for a DIR that cannot be opened. */
int ps_netcache_lock(ps_ctx *ctx, const char *dir, const char *url, const uint8_t *req,
                     size_t reqlen, int *fd);
/* Releases *FD (if not -1) and sets it to -1. */
void ps_netcache_unlock(int *fd);

#endif
