/*
 * stamp.c - the approval stamp: page lookup, the annotation and its
 * appearance stream.
 *
 * DESIGN NOTES
 *
 *  1. Only the objects on the path to the target page are read: the page
 *     tree is descended by /Count (ISO 32000-2 7.7.3.2), so finding page N
 *     costs O(depth) lookups whatever the page count.
 *  2. What is written (ISO 32000-2 12.5, 7.5.6): the annotation, its
 *     appearance form XObject, and a new version of the page (same number and
 *     generation, every other key copied) or, when /Annots is an indirect
 *     array, a new version of that array only.  Nothing else changes.
 *  3. The appearance is a real form XObject (/AP /N) with its own
 *     /Resources (Helvetica-Bold, WinAnsiEncoding) so that every viewer
 *     draws the same thing; its /BBox is the stamp's size as the reader
 *     sees it and /Matrix turns it with the page's /Rotate, so the stamp
 *     reads upright on rotated pages.
 *  4. Policy first: ps_policy_check (policy.c, its notes 1 and 3) refuses
 *     what the annotation permission (P bit 6) or a DocMDP certification
 *     forbids before anything is built.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "policy.h"

#define MAX_TREE_DEPTH 64

/* Advance widths of Helvetica-Bold for codes 32..126 (from the metrics of
 * its metric-compatible clone URW Nimbus Sans Bold, fonts-urw-base35). */
static const short helvb_widths[95] = {
	278, 333, 474, 556, 556, 889, 722, 278, 333, 333, 389, 584, 278, 333, 278, 278,
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
	975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
	278, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
	611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584
};

/* Width in text-space units (1/1000 em) of WinAnsi bytes; codes outside
 * ASCII are approximated by an average capital width. */
static double text_width(const uint8_t *s, size_t n)
{
	double w = 0;
	size_t i;

	for (i = 0; i < n; i++)
		w += (s[i] >= 32 && s[i] <= 126) ? helvb_widths[s[i] - 32] : 667;
	return w;
}

/* ---- the page tree --------------------------------------------------------- */

typedef struct ps_page {
	uint32_t num;
	uint16_t gen;
	ps_obj *dict;          /* borrowed */
	double box[4];         /* visible box: CropBox or MediaBox, normalised */
	int rotate;            /* 0, 90, 180, 270 */
} ps_page;

static int get_rect(ps_doc *doc, ps_obj *o, double r[4])
{
	ps_obj *a = NULL;
	double t;
	int i, rc;

	if ((rc = ps_doc_resolve(doc, o, &a)) < 0)
		return rc;
	if (!a || a->kind != PS_ARRAY || ps_array_len(a) != 4)
		return 1;
	for (i = 0; i < 4; i++) {
		ps_obj *e = NULL;
		if ((rc = ps_doc_resolve(doc, ps_array_get(a, (size_t)i), &e)) < 0)
			return rc;
		if (ps_obj_num(e, &r[i]) < 0 || !isfinite(r[i]))
			return 1;
	}
	if (r[0] > r[2]) {
		t = r[0]; r[0] = r[2]; r[2] = t;
	}
	if (r[1] > r[3]) {
		t = r[1]; r[1] = r[3]; r[3] = t;
	}
	return 0;
}

/* Finds page INDEX (1-based) by descending the tree by /Count. */
static int find_page(ps_doc *doc, int64_t index, ps_page *pg)
{
	ps_ctx *ctx = doc->ctx;
	ps_obj *node = NULL, *chain[MAX_TREE_DEPTH];
	ps_obj *ref;
	int depth = 0, rc, i, have_media = 0, have_crop = 0, have_rot = 0;
	double media[4], crop[4];
	int64_t rot = 0;

	if ((rc = ps_doc_pages(doc, &node, &ref, NULL)) < 0)
		return rc;
	for (;;) {
		ps_obj *kids;
		size_t k, n;
		int found = 0;

		if (!node || node->kind != PS_DICT)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "a page tree node is not a dictionary");
		if (depth >= MAX_TREE_DEPTH)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "the page tree is too deep or has a cycle");
		chain[depth++] = node;
		kids = NULL;
		if ((rc = ps_doc_resolve(doc, ps_dict_get(node, "Kids"), &kids)) < 0)
			return rc;
		if (!kids || !ps_dict_get(node, "Kids")) {
			/* a leaf */
			if (index != 1 || !ref || ref->kind != PS_REF)
				return ps_err(ctx, PDFSTAMP_E_FORMAT, "the page tree's /Count does not match its pages");
			pg->num = ref->u.ref.num;
			pg->gen = ref->u.ref.gen;
			pg->dict = node;
			break;
		}
		if (kids->kind != PS_ARRAY)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "/Kids is not an array");
		n = ps_array_len(kids);
		for (k = 0; k < n; k++) {
			ps_obj *kid = NULL, *kref = ps_array_get(kids, k);
			int64_t count = 1;
			if ((rc = ps_doc_resolve(doc, kref, &kid)) < 0)
				return rc;
			if (!kid || kid->kind != PS_DICT)
				continue;
			if (ps_dict_get(kid, "Kids")) {
				if (ps_obj_int(ps_dict_get(kid, "Count"), &count) < 0 || count < 0)
					return ps_err(ctx, PDFSTAMP_E_FORMAT, "a page tree node has no valid /Count");
			}
			if (index <= count) {
				node = kid;
				ref = kref;
				found = 1;
				break;
			}
			index -= count;
		}
		if (!found)
			return ps_err(ctx, PDFSTAMP_E_USAGE, "the document has fewer pages than asked for");
	}
	/* Inherited attributes (7.7.3.4): the nearest node that has them. */
	for (i = depth - 1; i >= 0; i--) {
		if (!have_media && get_rect(doc, ps_dict_get(chain[i], "MediaBox"), media) == 0)
			have_media = 1;
		if (!have_crop && get_rect(doc, ps_dict_get(chain[i], "CropBox"), crop) == 0)
			have_crop = 1;
		if (!have_rot && ps_dict_get(chain[i], "Rotate")) {
			ps_obj *r = NULL;
			if ((rc = ps_doc_resolve(doc, ps_dict_get(chain[i], "Rotate"), &r)) < 0)
				return rc;
			if (ps_obj_int(r, &rot) == 0)
				have_rot = 1;
		}
	}
	if (!have_media) {
		media[0] = media[1] = 0;
		media[2] = 612;
		media[3] = 792; /* US Letter, as most readers assume */
		ps_warn(ctx, "page has no /MediaBox; assuming US Letter");
	}
	if (have_crop) {
		/* the visible area is the intersection */
		pg->box[0] = fmax(crop[0], media[0]);
		pg->box[1] = fmax(crop[1], media[1]);
		pg->box[2] = fmin(crop[2], media[2]);
		pg->box[3] = fmin(crop[3], media[3]);
		if (pg->box[0] >= pg->box[2] || pg->box[1] >= pg->box[3])
			memcpy(pg->box, media, sizeof pg->box);
	} else {
		memcpy(pg->box, media, sizeof pg->box);
	}
	rot %= 360;
	if (rot < 0)
		rot += 360;
	if (rot % 90 != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "page /Rotate is not a multiple of 90");
	pg->rotate = (int)rot;
	return 0;
}

/* ---- building the annotation ------------------------------------------------ */

/* Every number the stamp writes, in its dictionaries and in the content
 * stream, is rounded to 1/1000 of a unit and then formatted by the
 * serializer's ps_buf_put_real, so both always show the same digits. */
static double milli(double v)
{
	return llround(v * 1000.0) / 1000.0;
}

static ps_obj *real_array(const double *v, size_t n)
{
	ps_obj *a = ps_new_array();
	size_t i;

	for (i = 0; a && i < n; i++) {
		if (ps_array_push(a, ps_new_real(milli(v[i]))) < 0) {
			ps_obj_free(a);
			return NULL;
		}
	}
	return a;
}

/* Escapes WinAnsi bytes for a literal string in a content stream. */
static void put_pdf_string(ps_buf *b, const uint8_t *s, size_t n)
{
	size_t i;

	ps_buf_putc(b, '(');
	for (i = 0; i < n; i++) {
		if (s[i] == '(' || s[i] == ')' || s[i] == '\\')
			ps_buf_putc(b, '\\');
		if (s[i] < 32 || s[i] >= 127)
			ps_buf_printf(b, "\\%03o", s[i]);
		else
			ps_buf_putc(b, s[i]);
	}
	ps_buf_putc(b, ')');
}

/* Layout of the appearance, in the form's own (visual) coordinates: a
 * double frame around the main text (Helvetica-Bold 22 pt) over a small
 * line with the author and date (8 pt).  The natural size follows the
 * text; a requested size scales the content uniformly and centres it. */
#define FS_MAIN 22.0
#define FS_SMALL 8.0
#define PAD_X 14.0
#define PAD_Y 9.0
#define GAP 6.0

struct stamp_geom {
	double w, h;            /* the box (visual size) */
	double nat_w, nat_h;    /* natural size of the content */
	double s;               /* scale of the content inside the box */
};

static void stamp_geometry(const ps_buf *main_txt, const ps_buf *small_txt, const double *fit,
                           struct stamp_geom *g)
{
	double w1 = text_width(main_txt->data, main_txt->len) / 1000.0 * FS_MAIN;
	double w2 = text_width(small_txt->data, small_txt->len) / 1000.0 * FS_SMALL;

	g->nat_w = fmax(w1, w2) + 2 * PAD_X;
	g->nat_h = PAD_Y + FS_SMALL + GAP + FS_MAIN * 0.72 + PAD_Y;
	if (fit) {
		g->w = fit[0];
		g->h = fit[1];
		g->s = fmin(g->w / g->nat_w, g->h / g->nat_h);
	} else {
		g->w = g->nat_w;
		g->h = g->nat_h;
		g->s = 1;
	}
}

static void put_nums(ps_buf *b, const double *v, size_t n, const char *op)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ps_buf_put_real(b, milli(v[i]));
		ps_buf_putc(b, ' ');
	}
	ps_buf_puts(b, op);
}

static void put_line(ps_buf *c, const ps_buf *t, double fs, double x, double y)
{
	double v[2] = {x, y};

	ps_buf_puts(c, "BT /F1 ");
	ps_buf_put_real(c, milli(fs));
	ps_buf_puts(c, " Tf ");
	put_nums(c, v, 2, "Td ");
	put_pdf_string(c, t->data, t->len);
	ps_buf_puts(c, " Tj ET\n");
}

static int build_appearance(ps_ctx *ctx, const struct pdfstamp_stamp_opts *o, const ps_buf *main_txt,
                            const ps_buf *small_txt, const struct stamp_geom *g, int rotate, ps_obj **out)
{
	static const double rot[4][6] = {{1, 0, 0, 1, 0, 0}, {0, 1, -1, 0, 0, 0},
	                                 {-1, 0, 0, -1, 0, 0}, {0, -1, 1, 0, 0, 0}};
	ps_buf c = PS_BUF_INIT;
	ps_obj *d = NULL, *res = NULL, *stm;
	double bbox[4] = {0, 0, g->w, g->h};
	double lw = fmin(g->w, g->h) / 24, v[6];
	uint8_t *data;
	size_t dlen;
	int rc;

	ps_buf_puts(&c, "q\n");
	if (o->opacity < 1)
		ps_buf_puts(&c, "/GS0 gs\n");
	put_nums(&c, o->color, 3, "RG ");
	put_nums(&c, o->color, 3, "rg\n");
	put_nums(&c, &lw, 1, "w\n");
	v[0] = v[1] = lw / 2;
	v[2] = g->w - lw;
	v[3] = g->h - lw;
	put_nums(&c, v, 4, "re S\n");
	v[0] = v[1] = lw * 2.5;
	v[2] = g->w - 5 * lw;
	v[3] = g->h - 5 * lw;
	put_nums(&c, v, 4, "re S\n");
	/* the content at its natural size, scaled and centred in the box */
	v[0] = v[3] = g->s;
	v[1] = v[2] = 0;
	v[4] = (g->w - g->nat_w * g->s) / 2;
	v[5] = (g->h - g->nat_h * g->s) / 2;
	put_nums(&c, v, 6, "cm\n");
	put_line(&c, main_txt, FS_MAIN,
	         (g->nat_w - text_width(main_txt->data, main_txt->len) / 1000.0 * FS_MAIN) / 2,
	         PAD_Y + FS_SMALL + GAP);
	put_line(&c, small_txt, FS_SMALL,
	         (g->nat_w - text_width(small_txt->data, small_txt->len) / 1000.0 * FS_SMALL) / 2, PAD_Y);
	ps_buf_puts(&c, "Q\n");
	if (c.oom)
		goto oom;

	/* << /Font << /F1 Helvetica-Bold >> [/ExtGState << /GS0 >>] >> */
	{
		ps_obj *fonts = ps_new_dict(), *f = ps_new_dict();
		res = ps_new_dict();
		if (!res || !fonts || !f ||
		    ps_dict_put_name(f, "Type", "Font") < 0 || ps_dict_put_name(f, "Subtype", "Type1") < 0 ||
		    ps_dict_put_name(f, "BaseFont", "Helvetica-Bold") < 0 ||
		    ps_dict_put_name(f, "Encoding", "WinAnsiEncoding") < 0) {
			ps_obj_free(fonts);
			ps_obj_free(f);
			goto oom;
		}
		if (ps_dict_put(fonts, "F1", f) < 0) {
			ps_obj_free(fonts);
			goto oom;
		}
		if (ps_dict_put(res, "Font", fonts) < 0)
			goto oom;
	}
	if (o->opacity < 1) {
		ps_obj *gs = ps_new_dict(), *gs0 = ps_new_dict();
		if (!gs || !gs0 || ps_dict_put_name(gs0, "Type", "ExtGState") < 0 ||
		    ps_dict_put_real(gs0, "CA", o->opacity) < 0 ||
		    ps_dict_put_real(gs0, "ca", o->opacity) < 0) {
			ps_obj_free(gs);
			ps_obj_free(gs0);
			goto oom;
		}
		if (ps_dict_put(gs, "GS0", gs0) < 0) {
			ps_obj_free(gs);
			goto oom;
		}
		if (ps_dict_put(res, "ExtGState", gs) < 0)
			goto oom;
	}
	d = ps_new_dict();
	if (!d || ps_dict_put_name(d, "Type", "XObject") < 0 || ps_dict_put_name(d, "Subtype", "Form") < 0 ||
	    ps_dict_put_int(d, "FormType", 1) < 0 || ps_dict_put(d, "BBox", real_array(bbox, 4)) < 0)
		goto oom;
	/* turn the form counter-clockwise by /Rotate so that it reads upright
	 * (the viewer maps the transformed BBox onto /Rect, 12.5.5) */
	if (rotate && ps_dict_put(d, "Matrix", real_array(rot[rotate / 90], 6)) < 0)
		goto oom;
	rc = ps_dict_put(d, "Resources", res);
	res = NULL;
	if (rc < 0)
		goto oom;
	data = ps_buf_detach(&c, &dlen);
	stm = ps_new_stream(d, data, dlen); /* owns d and data, also on failure */
	d = NULL;
	if (!stm)
		goto oom;
	*out = stm;
	return 0;
oom:
	ps_obj_free(d);
	ps_obj_free(res);
	ps_buf_free(&c);
	return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
}

/* Maps a rectangle given in the page's visual frame (origin at the bottom
 * left of the page as displayed) to default user space. */
static void visual_to_user(const ps_page *pg, double x, double y, double w, double h, double r[4])
{
	const double *b = pg->box;

	switch (pg->rotate) {
	case 90:
		r[0] = b[2] - (y + h); r[2] = b[2] - y;
		r[1] = b[1] + x;       r[3] = b[1] + x + w;
		break;
	case 180:
		r[0] = b[2] - x - w;   r[2] = b[2] - x;
		r[1] = b[3] - y - h;   r[3] = b[3] - y;
		break;
	case 270:
		r[0] = b[0] + y;       r[2] = b[0] + y + h;
		r[1] = b[3] - x - w;   r[3] = b[3] - x;
		break;
	default:
		r[0] = b[0] + x;       r[2] = b[0] + x + w;
		r[1] = b[1] + y;       r[3] = b[1] + y + h;
		break;
	}
}

static int put_text(ps_ctx *ctx, ps_obj *d, const char *key, const char *utf8)
{
	ps_obj *s = NULL;
	int rc;

	if ((rc = ps_text_from_utf8(ctx, utf8, strlen(utf8), &s)) < 0)
		return rc;
	if ((rc = ps_dict_put(d, key, s)) < 0)
		return ps_err(ctx, rc, "out of memory");
	return 0;
}

/* Adds REF to the page's annotations (design note 2). */
static int link_annotation(ps_update *up, const ps_page *pg, uint32_t annot)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	ps_obj *annots = ps_dict_get(pg->dict, "Annots"), *arr = NULL, *page;
	size_t i;
	int rc;

	if (annots && annots->kind == PS_REF) {
		uint32_t anum = annots->u.ref.num;
		/* a version of that array may already be pending (shared arrays) */
		for (i = 0; i < up->nobjs; i++)
			if (up->objs[i].num == anum)
				return ps_array_push(up->objs[i].obj, ps_new_ref(annot, 0)) < 0 ?
				       ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
		if ((rc = ps_doc_resolve(doc, annots, &arr)) < 0)
			return rc;
		if (arr && arr->kind != PS_ARRAY)
			return ps_err(ctx, PDFSTAMP_E_FORMAT, "page object %u: /Annots is not an array", pg->num);
		arr = arr ? ps_obj_copy(arr) : ps_new_array();
		if (!arr || ps_array_push(arr, ps_new_ref(annot, 0)) < 0) {
			ps_obj_free(arr);
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		return ps_update_put(up, anum, ps_doc_gen(doc, anum), arr);
	}
	if (annots && annots->kind != PS_ARRAY && annots->kind != PS_NULL)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "page object %u: /Annots is not an array", pg->num);
	for (i = 0; i < up->nobjs; i++) {
		if (up->objs[i].num == pg->num) {
			page = up->objs[i].obj;
			goto have_page;
		}
	}
	page = ps_obj_copy(pg->dict);
	if ((rc = ps_update_put(up, pg->num, pg->gen, page)) < 0)
		return rc; /* NOMEM for a failed copy; put freed PAGE */
have_page:
	arr = ps_dict_get(page, "Annots");
	if (!arr || arr->kind != PS_ARRAY) {
		if (ps_dict_put(page, "Annots", ps_new_array()) < 0)
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		arr = ps_dict_get(page, "Annots");
	}
	if (ps_array_push(arr, ps_new_ref(annot, 0)) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	return 0;
}

static int stamp_page(ps_update *up, const struct pdfstamp_stamp_opts *o, int64_t index, const ps_time *when,
                      struct pdfstamp_result *res)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = doc->ctx;
	ps_page pg;
	ps_buf txt = PS_BUF_INIT, small = PS_BUF_INIT;
	struct stamp_geom g;
	const char *text = o->text ? o->text : "APPROVED";
	char date[32], nm[64];
	double rect[4], fit[2];
	ps_obj *ap = NULL, *annot = NULL, *apd = NULL;
	uint32_t annot_num, ap_num;
	uint8_t rnd[16];
	int rc, k, swap;

	memset(&pg, 0, sizeof pg);
	if ((rc = find_page(doc, index, &pg)) < 0)
		return rc;
	if ((rc = ps_text_to_winansi(ctx, text, strlen(text), &txt)) < 0)
		goto out;
	swap = pg.rotate == 90 || pg.rotate == 270;
	ps_time_pdf(when, date);
	{
		char iso[32], line2[160];
		ps_time_iso(when, iso);
		snprintf(line2, sizeof line2, "%.100s%s%.10s %.5s", o->author ? o->author : "",
		         o->author ? "  " : "", iso, iso + 11);
		if ((rc = ps_text_to_winansi(ctx, line2, strlen(line2), &small)) < 0)
			goto out;
	}
	if (o->has_rect) {
		memcpy(rect, o->rect, sizeof rect);
		fit[0] = swap ? rect[3] - rect[1] : rect[2] - rect[0];
		fit[1] = swap ? rect[2] - rect[0] : rect[3] - rect[1];
		if (!(fit[0] > 0 && fit[1] > 0) || !isfinite(fit[0] + fit[1])) {
			rc = ps_err(ctx, PDFSTAMP_E_USAGE, "--rect must be x1,y1,x2,y2 with x1 < x2 and y1 < y2");
			goto out;
		}
		stamp_geometry(&txt, &small, fit, &g);
		if (rect[0] < pg.box[0] || rect[1] < pg.box[1] || rect[2] > pg.box[2] || rect[3] > pg.box[3])
			ps_warn(ctx, "the stamp rectangle on page %lld reaches outside the visible page "
			        "[%g %g %g %g]; part of it will not show", (long long)index,
			        pg.box[0], pg.box[1], pg.box[2], pg.box[3]);
	} else {
		double pw = swap ? pg.box[3] - pg.box[1] : pg.box[2] - pg.box[0];
		double ph = swap ? pg.box[2] - pg.box[0] : pg.box[3] - pg.box[1];
		double m = o->margin, x, y;
		stamp_geometry(&txt, &small, NULL, &g);
		if (g.w > pw - 2 * m || g.h > ph - 2 * m) { /* shrink to fit small pages */
			double s = fmin((pw - 2 * m) / g.w, (ph - 2 * m) / g.h);
			if (!(s > 0.05)) {
				rc = ps_err(ctx, PDFSTAMP_E_USAGE, "the page is too small for the stamp with this margin");
				goto out;
			}
			fit[0] = g.w * s;
			fit[1] = g.h * s;
			stamp_geometry(&txt, &small, fit, &g);
		}
		switch (o->position) {
		case PDFSTAMP_POS_TOP_LEFT: x = m; y = ph - m - g.h; break;
		case PDFSTAMP_POS_BOTTOM_RIGHT: x = pw - m - g.w; y = m; break;
		case PDFSTAMP_POS_BOTTOM_LEFT: x = m; y = m; break;
		case PDFSTAMP_POS_CENTER: x = (pw - g.w) / 2; y = (ph - g.h) / 2; break;
		default: x = pw - m - g.w; y = ph - m - g.h; break;
		}
		visual_to_user(&pg, x, y, g.w, g.h, rect);
	}
	if ((rc = build_appearance(ctx, o, &txt, &small, &g, pg.rotate, &ap)) < 0)
		goto out;
	if (!(ap_num = ps_update_alloc(up)) || !(annot_num = ps_update_alloc(up))) {
		rc = ctx->errcode;
		goto out;
	}
	rc = ps_update_put(up, ap_num, 0, ap);
	ap = NULL;
	if (rc < 0)
		goto out;
	if ((rc = ps_random(ctx, rnd, sizeof rnd)) < 0)
		goto out;
	snprintf(nm, sizeof nm, "pdfstamp-");
	for (k = 0; k < 16; k++)
		snprintf(nm + 9 + 2 * k, 3, "%02x", rnd[k]);
	annot = ps_new_dict();
	apd = ps_new_dict();
	if (!annot || !apd)
		goto oom;
	if (ps_dict_put_name(annot, "Type", "Annot") < 0 ||
	    ps_dict_put_name(annot, "Subtype", o->freetext ? "FreeText" : "Stamp") < 0 ||
	    ps_dict_put(annot, "Rect", real_array(rect, 4)) < 0 ||
	    ps_dict_put_int(annot, "F", 4 | 128) < 0 || /* Print | Locked (Table 167) */
	    ps_dict_put_ref(annot, "P", pg.num, pg.gen) < 0 ||
	    ps_dict_put_str(annot, "NM", nm, strlen(nm)) < 0 ||
	    ps_dict_put_str(annot, "M", date, strlen(date)) < 0 ||
	    ps_dict_put_str(annot, "CreationDate", date, strlen(date)) < 0 ||
	    ps_dict_put(annot, "C", real_array(o->color, 3)) < 0)
		goto oom;
	if ((rc = put_text(ctx, annot, "Contents", o->note ? o->note : text)) < 0)
		goto out;
	if (o->author && (rc = put_text(ctx, annot, "T", o->author)) < 0)
		goto out;
	if (!o->freetext) {
		if (ps_dict_put_name(annot, "Name", o->icon ? o->icon : "Approved") < 0)
			goto oom;
	} else {
		/* /DA is required for FreeText (Table 174); /Helv is the name
		 * readers know for Helvetica.  /AP still decides the looks. */
		ps_buf db = PS_BUF_INIT;
		double fs = FS_MAIN * g.s;
		ps_buf_puts(&db, "/Helv ");
		put_nums(&db, &fs, 1, "Tf ");
		put_nums(&db, o->color, 3, "rg");
		rc = db.oom ? PDFSTAMP_E_NOMEM : ps_dict_put_str(annot, "DA", db.data, db.len);
		ps_buf_free(&db);
		if (rc < 0)
			goto oom;
	}
	if (o->opacity < 1 && ps_dict_put_real(annot, "CA", o->opacity) < 0)
		goto oom;
	if (ps_dict_put_ref(apd, "N", ap_num, 0) < 0)
		goto oom;
	rc = ps_dict_put(annot, "AP", apd);
	apd = NULL;
	if (rc < 0)
		goto oom;
	rc = ps_update_put(up, annot_num, 0, annot);
	annot = NULL;
	if (rc < 0)
		goto out;
	if ((rc = link_annotation(up, &pg, annot_num)) < 0)
		goto out;
	rc = ps_result_add_object(ctx, res, annot_num);
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(ap);
	ps_obj_free(annot);
	ps_obj_free(apd);
	ps_buf_free(&txt);
	ps_buf_free(&small);
	return rc;
}

int pdfstamp_stamp(pdfstamp_doc *doc, const struct pdfstamp_stamp_opts *o,
                   const struct pdfstamp_write_opts *w, struct pdfstamp_result *res)
{
	ps_ctx *ctx = doc->ctx;
	ps_update up;
	ps_time when;
	int64_t npages, first, last, i;
	int rc, k;

	if ((rc = ps_result_begin(ctx, res)) < 0)
		return rc;
	if (!o || o->version != PDFSTAMP_STAMP_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "stamp options of an unknown version");
	if (!(o->opacity > 0 && o->opacity <= 1) || o->margin < 0 || !isfinite(o->margin))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "opacity must be in (0, 1] and the margin non-negative");
	for (k = 0; k < 3; k++)
		if (!(o->color[k] >= 0 && o->color[k] <= 1))
			return ps_err(ctx, PDFSTAMP_E_USAGE, "colour components must be in [0, 1]");
	if ((rc = ps_time_parse(ctx, o->date ? o->date : "now", &when)) < 0)
		return rc;
	if ((rc = ps_update_begin(doc, w, &up)) < 0)
		goto out;
	if ((rc = ps_policy_check(doc, PS_UPDATE_ANNOTATION)) < 0 || (rc = ps_doc_pages(doc, NULL, NULL, &npages)) < 0)
		goto out;
	if (npages == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the document has no pages");
		goto out;
	}
	if (o->page == PDFSTAMP_PAGE_ALL) {
		first = 1;
		last = npages;
	} else if (o->page == PDFSTAMP_PAGE_LAST) {
		first = last = npages;
	} else if (o->page >= 1 && o->page <= npages) {
		first = last = o->page;
	} else {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "page %lld does not exist (the document has %lld)",
		            (long long)o->page, (long long)npages);
		goto out;
	}
	for (i = first; i <= last; i++)
		if ((rc = stamp_page(&up, o, i, &when, res)) < 0)
			goto out;
	rc = ps_update_commit(&up, w, res);
out:
	ps_update_free(&up);
	return rc;
}
