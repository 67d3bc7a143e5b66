/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_objstm.c - libFuzzer target for object streams.
 *
 * A small plaintext PDF is built around the input: a catalog, an empty
 * page tree, object stream 3 whose content is the input, and an xref
 * stream (object 4) that places objects 5..12 at indexes 0..7 of stream 3,
 * object 13 inside "object stream" 13 (itself), object 14 inside object
 * 5 (a compressed object used as a container) and object 15 at index
 * 65535 of stream 3.  Every object 1..15 is then looked up.
 * Input layout: byte 0: bits 0-4 give /N, bit 5 drops /N, bit 6 deflates
 * the content (/Filter /FlateDecode); bytes 1-2: /First (big-endian);
 * the rest: the stream's content, e.g. "5 0 6 7 <<>> [1 2]".
 * Oracles: the sanitizers, no PDFSTAMP_E_INTERNAL, messages on errors.
 */
#include "fuzz.h"

#define FZO_NOBJ 16
#define FZO_MAX_CONTENT (256u * 1024)

static void fzo_entry(ps_buf *b, int type, int64_t f2, unsigned f3)
{
	uint8_t e[7];

	e[0] = (uint8_t)type;
	e[1] = (uint8_t)(f2 >> 24);
	e[2] = (uint8_t)(f2 >> 16);
	e[3] = (uint8_t)(f2 >> 8);
	e[4] = (uint8_t)f2;
	e[5] = (uint8_t)(f3 >> 8);
	e[6] = (uint8_t)f3;
	ps_buf_append(b, e, sizeof e);
}

static int fzo_build(ps_ctx *ctx, const uint8_t *data, size_t size, ps_buf *pdf)
{
	ps_buf z = PS_BUF_INIT, xs = PS_BUF_INIT;
	const uint8_t *content = size > 3 ? data + 3 : (const uint8_t *)"";
	size_t clen = size > 3 ? size - 3 : 0;
	unsigned flags = size > 0 ? data[0] : 0;
	unsigned first = (size > 1 ? (unsigned)data[1] << 8 : 0) | (size > 2 ? data[2] : 0);
	int64_t off[5];
	unsigned i;
	int rc = 0;

	if (flags & 0x40) {
		if (ps_deflate(ctx, content, clen, 6, &z) < 0) {
			rc = -1;
			goto out;
		}
		content = z.data;
		clen = z.len;
	}
	ps_buf_puts(pdf, "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n");
	off[1] = (int64_t)pdf->len;
	ps_buf_puts(pdf, "1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n");
	off[2] = (int64_t)pdf->len;
	ps_buf_puts(pdf, "2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n");
	off[3] = (int64_t)pdf->len;
	ps_buf_puts(pdf, "3 0 obj\n<< /Type /ObjStm");
	if (!(flags & 0x20))
		ps_buf_printf(pdf, " /N %u", flags & 0x1f);
	ps_buf_printf(pdf, " /First %u /Length %zu%s >>\nstream\n", first, clen,
	              (flags & 0x40) ? " /Filter /FlateDecode" : "");
	ps_buf_append(pdf, content, clen);
	ps_buf_puts(pdf, "\nendstream\nendobj\n");
	off[4] = (int64_t)pdf->len;
	fzo_entry(&xs, 0, 0, 65535);
	for (i = 1; i <= 4; i++)
		fzo_entry(&xs, 1, off[i], 0);
	for (i = 5; i <= 12; i++)
		fzo_entry(&xs, 2, 3, i - 5);
	fzo_entry(&xs, 2, 13, 0);
	fzo_entry(&xs, 2, 5, 0);
	fzo_entry(&xs, 2, 3, 65535);
	ps_buf_printf(pdf, "4 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %zu >>\nstream\n",
	              FZO_NOBJ, xs.len);
	if (!xs.oom)
		ps_buf_append(pdf, xs.data, xs.len);
	ps_buf_printf(pdf, "\nendstream\nendobj\nstartxref\n%lld\n%%%%EOF\n", (long long)off[4]);
	if (pdf->oom || xs.oom)
		rc = -1;
out:
	ps_buf_free(&z);
	ps_buf_free(&xs);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ps_buf pdf = PS_BUF_INIT, sd = PS_BUF_INIT;
	char path[64];
	ps_ctx *ctx;
	ps_doc *doc = NULL;
	uint32_t num;
	int fd = -1, rc;

	if (size > FZO_MAX_CONTENT || pdfstamp_ctx_new(&ctx) < 0)
		return 0;
	if (fzo_build(ctx, data, size, &pdf) < 0)
		goto out;
	fd = fz_memfile(pdf.data, pdf.len, path);
	if (fd < 0)
		goto out;
	rc = pdfstamp_doc_open(ctx, &doc, path, 0);
	if (rc < 0) {
		/* The frame is valid; only lookups may fail. */
		fprintf(stderr, "template: %s\n", pdfstamp_ctx_errmsg(ctx));
		fz_bug(ctx, "the object-stream template does not open");
	}
	for (num = 1; num < FZO_NOBJ; num++) {
		ps_obj *o = NULL;
		rc = ps_doc_lookup(doc, num, &o);
		if (rc == PDFSTAMP_E_INTERNAL)
			fz_bug(ctx, "ps_doc_lookup");
		if (rc < 0 && pdfstamp_ctx_errmsg(ctx)[0] == 0)
			fz_bug(ctx, "an error without a message");
		if (rc == 0 && o && o->kind == PS_STREAM) {
			ps_buf_reset(&sd);
			rc = ps_doc_stream_data(doc, num, o, 1, &sd);
			if (rc == PDFSTAMP_E_INTERNAL)
				fz_bug(ctx, "ps_doc_stream_data");
		}
	}
out:
	pdfstamp_doc_close(doc);
	if (fd >= 0)
		close(fd);
	ps_buf_free(&pdf);
	ps_buf_free(&sd);
	pdfstamp_ctx_free(ctx);
	return 0;
}
