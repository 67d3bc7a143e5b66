/* SPDX-License-Identifier: Apache-2.0 */
/* wipe.h - internal: the one helper the AES engine needs from the library.
 * Kept apart from ps.h so that aesmb.c depends on nothing else. */
#ifndef PS_WIPE_H
#define PS_WIPE_H

#include <stddef.h>

/* Overwrites N bytes at P with zeros in a way the compiler may not drop
 * (ctx.c); for key material and plaintext on every path. */
void ps_wipe(void *p, size_t n);

#endif
