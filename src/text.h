/* SPDX-License-Identifier: Apache-2.0 */
/* text.h - internal: text strings (conventions: ps.h). */
#ifndef PS_TEXT_H
#define PS_TEXT_H

#include "ps.h"

/* ---- text.c: text strings ------------------------------------------------- */

/* A PDF text string from UTF-8: printable ASCII stays single-byte, anything
 * else becomes UTF-16BE with a BOM (ISO 32000-2 7.9.2.2).  Invalid UTF-8 is
 * a USAGE error.  *out is a new PS_STR. */
int ps_text_from_utf8(ps_ctx *ctx, const char *s, size_t len, ps_obj **out);
/* UTF-8 from a PDF text string (UTF-16BE or UTF-8 with BOM, else
 * PDFDocEncoding), appended to OUT. */
int ps_text_to_utf8(ps_ctx *ctx, const uint8_t *p, size_t len, ps_buf *out);
/* The WinAnsiEncoding code of character C (LF passes as 10), -1 if
 * WinAnsi lacks it (font.c decides with it whether Helvetica will do). */
int ps_text_winansi_code(uint32_t c);
/* Decodes one scalar value of strict UTF-8 (note atop text.c) from P
 * (N > 0 bytes): the bytes used, 0 for an invalid sequence. */
size_t ps_text_utf8_decode(const uint8_t *p, size_t n, uint32_t *cp);

/* PDFDocEncoding bytes for UTF-8 S (legacy passwords), at most MAX of them
 * in OUT; -1 when S is not UTF-8 or has a character PDFDocEncoding lacks. */
int ps_text_pdfdoc_from_utf8(const char *s, size_t len, uint8_t *out, size_t max, size_t *outlen);

#endif
