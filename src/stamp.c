/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stamp.c - the approval stamp: the pages, the annotations and their
 * shared appearance.
 *
 * DESIGN NOTES
 *
 *  1. Only the objects on the path to the target pages are read: the page
 *     tree is walked depth first and a subtree that lies wholly before the
 *     first target page is skipped by its /Count (ISO 32000-2 7.7.3.2), so
 *     one page costs O(depth) lookups and every page O(pages).  Inherited
 *     attributes (7.7.3.4) come down the walk.  Kid visits are bounded by
 *     the number of objects in the file (each node of a sound tree is one
 *     object in one /Kids array), depth by MAX_TREE_DEPTH, so a cyclic tree
 *     or a DAG of shared nodes under a lying /Count costs no more than a
 *     sound tree of that file's size.
 *     Two phases.  walk_pages collects every target page (a ps_page: its
 *     number, its dictionary, borrowed from the document's cache, which
 *     keeps every object until the document is closed, its box and
 *     rotation, and its indirect /Annots array resolved) and writes
 *     nothing; only then does the update hand out its first number and
 *     stamp the pages in order.  So every object whose references decide
 *     what is written is read before the first ps_update_alloc, which
 *     skips every number those objects name (incr.c note 6): a page 2
 *     whose /Contents names /Size+5, a reference to a missing object,
 *     stays null rather than drawing the stamp's appearance.  Memory is
 *     O(pages) for `--page all`.
 *  2. What is written (ISO 32000-2 12.5, 7.5.6): per page, the annotation
 *     and a new version of the page (same number and generation, every
 *     other key copied, references to missing objects too: they stay
 *     null, note 1) or, when /Annots is an indirect array, a new
 *     version of that array only (an /Annots that names a missing or
 *     free object is the null object, ISO 32000-2 7.3.10: the page gets
 *     an array of its own; only objects of the file get new versions).
 *     Per update, once: the fonts (font.c: a standard-14 dictionary, or
 *     for each font of the set that draws something the Type 0 font with
 *     its subset, descriptor, widths and ToUnicode CMap), the image
 *     XObject (image.c, with its /SMask), and one appearance form XObject
 *     per distinct (box size, /Rotate): `--page all` on same-size pages
 *     references one appearance.  Nothing else changes.
 *  3. Everything that can be refused is refused before the update begins:
 *     the options, the font (ps_font_open: coverage, a file that is not a
 *     font) and the image (ps_image_load), then the policy (policy.c notes
 *     1 and 3).  Nothing is written for a bad font, image or text.
 *  4. The appearance is a real form XObject (/AP /N, 12.5.5) with its own
 *     /Resources (/Font /F1 ... /Fn as ps_font_embed fills it, /XObject
 *     /Im1, /ExtGState /GS0) so that every
 *     viewer draws the same thing; its /BBox is the stamp's size as the
 *     reader sees it and /Matrix turns it with the page's /Rotate, so the
 *     stamp reads upright on rotated pages.
 *  5. Layout, in the form's own (visual) coordinates: a double frame whose
 *     line width is lw = min(w, h) / 24 (outer line 0..lw, inner line
 *     2 lw..3 lw from the edge) and, inset 6 lw from the sides and 4.5 lw
 *     from the top and bottom, the content: the text's lines (UTF-8 split
 *     at '\n', each shaped by font.c and centred) over a small line with
 *     the author and date.  The
 *     content is laid out at its natural size (main lines 22 pt, small
 *     line 8 pt) from the inked extents font.c measures (ps_line ascent
 *     and descent: accents, ascenders and descenders included): lines are
 *     stacked at a uniform pitch of (max ascent - min descent) + 0.25 em,
 *     so no two lines' ink overlaps.  It is then scaled uniformly to fit
 *     the area inside the inset, never clipped: every glyph's ink stays
 *     1.5 lw (3 lw at the sides) clear of the inner frame line.  Without --rect the box is the
 *     natural content plus the inset (solved for lw, which depends on the
 *     box), shrunk as a whole on pages too small for it.
 *  6. An image fills the area inside the inner frame (3 lw from the edge)
 *     with its aspect ratio kept, centred, under the frame and the text.
 *     An image without text is the stamp alone: no frame, no text, the
 *     image filling the whole box; without --rect that box has the
 *     image's aspect ratio and its longer side is IMG_SIDE (150 pt).
 *  7. Every number the stamp writes, in its dictionaries and in the
 *     content stream, is rounded to 1/1000 of a unit and then formatted by
 *     the serializer's ps_serialize_real, so both always show the same
 *     digits; the appearance cache compares those rounded sizes.
 *  8. Size per page (the goal: about 500 bytes for each page of a
 *     `--page all`, the page's own copy included).  Every encrypted
 *     string costs its IV and padding, written in hex: /NM is 15 random
 *     characters (90 bits) so that it fits one AES block, and when one
 *     update stamps several pages the strings every annotation repeats
 *     (/Contents, /T, the date of /M and /CreationDate, and /NM, which
 *     ISO 32000-2 Table 166 wants unique among the annotations of a page
 *     only, and each page gets one annotation of the update) are written
 *     once, as indirect string objects (7.3.10) that each annotation
 *     references, and so is the /C array.  A single-page stamp keeps them
 *     direct.  The optional /Type /Annot (Table 166) is left out: readers
 *     know an annotation by its place in /Annots and its /Subtype.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "policy.h"
#include "font.h"
#include "image.h"

#define MAX_TREE_DEPTH 64

#define FS_MAIN 22.0    /* natural size of the main lines */
#define FS_SMALL 8.0    /* of the author and date line */
#define LINE_GAP 0.25   /* between main lines, in em of FS_MAIN */
#define GAP 6.0         /* between the main lines and the small line */
#define FRAME_DIV 24.0  /* lw = min(w, h) / FRAME_DIV */
#define INSET_X 6.0     /* content inset from the box's sides, in lw (note 5) */
#define INSET_Y 4.5     /* from its top and bottom */
#define INNER 3.0       /* the inner edge of the inner frame line, in lw */
#define IMG_SIDE 150.0  /* longer side of an image-only stamp without --rect */

/* Every number the stamp writes is rounded to 1/1000 (note 7). */
static double milli(double v)
{
	return llround(v * 1000.0) / 1000.0;
}

/* ---- the page tree --------------------------------------------------------- */

typedef struct ps_page {
	uint32_t num;
	uint16_t gen;
	ps_obj *dict;          /* borrowed: the document's cache, which keeps every
	                        * object it parsed until the document is closed */
	ps_obj *annots;        /* an indirect /Annots resolved (borrowed), NULL if the
	                        * page has none, a direct one or one naming a missing
	                        * object (annots_missing) */
	int annots_missing;
	double box[4];         /* visible box: CropBox or MediaBox, normalised */
	int rotate;            /* 0, 90, 180, 270 */
} ps_page;

/* The target pages, in order (note 1). */
typedef struct page_list {
	ps_page *v;
	size_t n;
} page_list;

/* Inherited attributes (7.7.3.4) as the walk brings them down. */
typedef struct inherit {
	double media[4], crop[4];
	int64_t rot;
	unsigned char have_media, have_crop, have_rot;
} inherit;

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

/* Overrides what NODE itself sets (the nearest node wins). */
static int inherit_from(ps_doc *doc, ps_obj *node, inherit *in)
{
	double r[4];
	int rc;

	if ((rc = get_rect(doc, ps_dict_get(node, "MediaBox"), r)) < 0)
		return rc;
	if (rc == 0) {
		memcpy(in->media, r, sizeof r);
		in->have_media = 1;
	}
	if ((rc = get_rect(doc, ps_dict_get(node, "CropBox"), r)) < 0)
		return rc;
	if (rc == 0) {
		memcpy(in->crop, r, sizeof r);
		in->have_crop = 1;
	}
	if (ps_dict_get(node, "Rotate")) {
		ps_obj *ro = NULL;
		if ((rc = ps_doc_resolve(doc, ps_dict_get(node, "Rotate"), &ro)) < 0)
			return rc;
		if (ps_obj_int(ro, &in->rot) == 0)
			in->have_rot = 1;
	}
	return 0;
}

static int make_page(ps_ctx *ctx, ps_obj *ref, ps_obj *dict, const inherit *in, ps_page *pg)
{
	int64_t rot = in->have_rot ? in->rot : 0;

	if (!ref || ref->kind != PS_REF) /* its new version needs a number
	                                  * (7.7.3.2, Table 30 /Kids) */
		return ps_err(ctx, PDFSTAMP_E_FORMAT,
		              "a page of the page tree is not an indirect object");
	pg->num = ref->u.ref.num;
	pg->gen = ref->u.ref.gen;
	pg->dict = dict;
	if (!in->have_media) {
		/* US Letter, as most readers assume */
		static const double letter[4] = {0, 0, 612, 792};
		memcpy(pg->box, letter, sizeof pg->box);
		ps_warn(ctx, "page has no /MediaBox; assuming US Letter");
	} else {
		memcpy(pg->box, in->media, sizeof pg->box);
	}
	if (in->have_crop) {
		/* the visible area is the intersection */
		double b[4];
		b[0] = fmax(in->crop[0], pg->box[0]);
		b[1] = fmax(in->crop[1], pg->box[1]);
		b[2] = fmin(in->crop[2], pg->box[2]);
		b[3] = fmin(in->crop[3], pg->box[3]);
		if (b[0] < b[2] && b[1] < b[3])
			memcpy(pg->box, b, sizeof b);
	}
	rot %= 360;
	if (rot < 0)
		rot += 360;
	if (rot % 90 != 0)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "page /Rotate is not a multiple of 90");
	pg->rotate = (int)rot;
	return 0;
}

/* What link_annotation will need of the page's /Annots (note 2), read
 * while the pages are collected: before the update hands out its first
 * number, so that incr.c's make_skip sees every number those objects name
 * (incr.c note 6).  A reference to a missing or free object is the null
 * object (ISO 32000-2 7.3.10): the page then gets an array of its own. */
static int page_annots(ps_doc *doc, ps_page *pg)
{
	ps_obj *annots = ps_dict_get(pg->dict, "Annots"), *target = NULL;
	int rc;

	if (!annots || annots->kind != PS_REF)
		return 0;
	if ((rc = ps_doc_lookup(doc, annots->u.ref.num, &target)) < 0)
		return rc;
	if (!target) {
		ps_warn(ps_doc_ctx(doc), "page object %u: /Annots names object %u, which does not "
		        "exist; the page gets a new /Annots array", pg->num, annots->u.ref.num);
		pg->annots_missing = 1;
		return 0;
	}
	return ps_doc_resolve(doc, target, &pg->annots);
}

/* Appends the page REF/DICT, with the attributes IN brings down, to PL. */
static int collect_page(ps_doc *doc, ps_obj *ref, ps_obj *dict, const inherit *in, page_list *pl)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_page pg;
	int rc;

	memset(&pg, 0, sizeof pg);
	if ((rc = make_page(ctx, ref, dict, in, &pg)) < 0 || (rc = page_annots(doc, &pg)) < 0)
		return rc;
	if (ps_vec_grow((void **)&pl->v, pl->n, sizeof *pl->v) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	pl->v[pl->n++] = pg;
	return 0;
}

/* Collects pages FIRST..LAST (1-based) into PL, in order (note 1).  It
 * writes nothing and hands out no number: every object a page's stamp
 * depends on is read here (incr.c note 6). */
static int walk_pages(ps_doc *doc, int64_t first, int64_t last, page_list *pl)
{
	struct frame {
		ps_obj *kids;      /* borrowed */
		size_t k;
		inherit in;
	} st[MAX_TREE_DEPTH];
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_obj *root = NULL, *rref = NULL, *kids = NULL;
	struct ps_xref_info xi;
	int64_t idx = 1, budget;
	int depth = 0, rc;
	inherit in;

	memset(&in, 0, sizeof in);
	if ((rc = ps_doc_pages(doc, &root, &rref, NULL)) < 0)
		return rc;
	if (!root || root->kind != PS_DICT)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "a page tree node is not a dictionary");
	if ((rc = inherit_from(doc, root, &in)) < 0 ||
	    (rc = ps_doc_resolve(doc, ps_dict_get(root, "Kids"), &kids)) < 0)
		return rc;
	if (!kids || !ps_dict_get(root, "Kids")) { /* the root is the page */
		if (first != 1 || last != 1)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the page tree's /Count does not match its pages");
		return collect_page(doc, rref, root, &in, pl);
	}
	if (kids->kind != PS_ARRAY)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "/Kids is not an array");
	/* each node of a sound tree is an object of the file that stands in
	 * one /Kids array: no more kids than objects are ever visited, whatever
	 * the /Count entries claim (a DAG of shared nodes is a tree of 2^depth) */
	ps_xref_info(ps_doc_xref(doc), &xi);
	budget = (int64_t)(xi.mentioned < PS_MAX_OBJNUM ? xi.mentioned : PS_MAX_OBJNUM) +
	         MAX_TREE_DEPTH;
	st[0].kids = kids;
	st[0].k = 0;
	st[0].in = in;
	depth = 1;
	while (depth > 0) {
		struct frame *f = &st[depth - 1];
		ps_obj *kid = NULL, *kref, *sub = NULL;
		int64_t count;

		if (f->k >= ps_array_len(f->kids)) {
			depth--;
			continue;
		}
		kref = ps_array_get(f->kids, f->k++);
		if (--budget < 0)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the page tree has more nodes than the file has objects "
			              "(shared nodes or a cycle)");
		if ((rc = ps_doc_resolve(doc, kref, &kid)) < 0)
			return rc;
		if (!kid || kid->kind != PS_DICT)
			continue;
		if (ps_dict_get(kid, "Kids")) {
			if (ps_obj_int(ps_dict_get(kid, "Count"), &count) < 0 || count < 0)
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "a page tree node has no valid /Count");
			if (count < first - idx + 1 && idx <= first) { /* wholly before FIRST */
				idx += count;
				continue;
			}
		} else if (idx < first) { /* a page before FIRST */
			idx++;
			continue;
		}
		in = f->in;
		if ((rc = inherit_from(doc, kid, &in)) < 0)
			return rc;
		if (ps_dict_get(kid, "Kids")) {
			if ((rc = ps_doc_resolve(doc, ps_dict_get(kid, "Kids"), &sub)) < 0)
				return rc;
			if (sub) {
				if (sub->kind != PS_ARRAY)
					return ps_err(ctx, PDFSTAMP_E_FORMAT,
					              "/Kids is not an array");
				if (depth >= MAX_TREE_DEPTH)
					return ps_err(ctx, PDFSTAMP_E_FORMAT,
					              "the page tree is too deep or has a cycle");
				st[depth].kids = sub;
				st[depth].k = 0;
				st[depth].in = in;
				depth++;
				continue;
			}
		}
		/* a leaf */
		if (idx >= first && (rc = collect_page(doc, kref, kid, &in, pl)) < 0)
			return rc;
		if (++idx > last)
			return 0;
	}
	/* the caller asked for pages within the root's /Count: the tree lied */
	return ps_err(ctx, PDFSTAMP_E_FORMAT,
	              "the page tree has fewer pages than its /Count says: no page %lld",
	              (long long)idx);
}

/* ---- the job: what every page of one call shares ------------------------------ */

typedef struct ap_entry {
	double w, h;          /* the box, rounded (note 7) */
	int rotate;
	uint32_t num;
} ap_entry;

typedef struct stamp_job stamp_job;

struct stamp_job {
	const struct pdfstamp_stamp_opts *o;
	const char *text;     /* NULL: an image alone (note 6) */
	const char *contents; /* /Contents: the note, else the text (none if empty) */
	char date[32];        /* /M and /CreationDate */
	ps_font *font;
	ps_line *lines;       /* the main lines, top first */
	size_t nlines;
	ps_line small;        /* author and date */
	double cw, ch;        /* natural content size (note 5) */
	double pitch, asc, desc, small_base;
	ps_image *img;
	uint32_t iw, ih;
	uint32_t img_num;
	uint32_t contents_num, author_num, date_num, nm_num; /* shared strings
	                                                      * (note 8), 0: direct */
	uint32_t color_num;   /* the shared /C array (note 8), 0: direct */
	ap_entry *aps;
	size_t naps;
	struct pdfstamp_result *res;
};

static void job_free(stamp_job *j)
{
	size_t i;

	for (i = 0; i < j->nlines; i++)
		ps_font_line_free(&j->lines[i]);
	free(j->lines);
	ps_font_line_free(&j->small);
	ps_font_free(j->font);
	ps_image_free(j->img);
	free(j->aps);
}

/* Opens the font for every line and shapes them (note 3): before anything
 * is written. */
static int job_text(ps_ctx *ctx, stamp_job *j, const char *small_txt)
{
	const char *p, *nl;
	ps_buf all = PS_BUF_INIT;
	double a = 0, d = 0, wmax = 0;
	size_t i, n = 1;
	int rc;

	ps_buf_puts(&all, j->text);
	ps_buf_putc(&all, '\n');
	ps_buf_puts(&all, small_txt);
	ps_buf_putc(&all, '\0');
	if (all.oom) {
		ps_buf_free(&all);
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	/* refuses text that is too long or not UTF-8 before anything else */
	rc = ps_font_open(ctx, j->o->font, j->o->fonts, j->o->nfonts, (const char *)all.data,
	                  &j->font);
	ps_buf_free(&all);
	if (rc < 0)
		return rc;
	for (p = j->text; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	if (!(j->lines = calloc(n, sizeof *j->lines)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	for (p = j->text, i = 0; i < n; i++, p = nl + 1) {
		size_t len;
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		len = (size_t)(nl - p);
		if (len && p[len - 1] == '\r') /* CR LF from a file */
			len--;
		if ((rc = ps_font_shape(j->font, p, len, &j->lines[i])) < 0)
			return rc;
		j->nlines = i + 1;
		a = fmax(a, j->lines[i].ascent);
		d = fmin(d, j->lines[i].descent);
		wmax = fmax(wmax, j->lines[i].width * FS_MAIN / 1000);
	}
	if ((rc = ps_font_shape(j->font, small_txt, strlen(small_txt), &j->small)) < 0)
		return rc;
	/* note 5: uniform pitch from the inked extents of all lines */
	j->asc = a * FS_MAIN / 1000;
	j->desc = d * FS_MAIN / 1000;
	j->pitch = j->asc - j->desc + LINE_GAP * FS_MAIN;
	j->small_base = -fmin(j->small.descent, 0) * FS_SMALL / 1000;
	j->ch = (fmax(j->small.ascent, 0) - fmin(j->small.descent, 0)) * FS_SMALL / 1000 + GAP +
	        (double)(n - 1) * j->pitch + j->asc - j->desc;
	j->cw = fmax(wmax, j->small.width * FS_SMALL / 1000);
	if (!(j->cw >= 1))
		j->cw = 1;
	if (!(j->ch >= 1))
		j->ch = 1;
	return 0;
}

/* ---- geometry and the appearance ------------------------------------------------ */

struct stamp_geom {
	double w, h;          /* the box (visual size) */
	double lw;            /* frame line width */
	double s;             /* scale of the content (1 = natural) */
};

/* The box for the content at its natural size (note 5) or image (note 6). */
static void natural_box(const stamp_job *j, struct stamp_geom *g)
{
	/* the insets of both sides, per unit of min(w, h) */
	double kx = 2 * INSET_X / FRAME_DIV, ky = 2 * INSET_Y / FRAME_DIV;

	if (!j->text) {
		double iw = j->iw, ih = j->ih;
		g->w = iw >= ih ? IMG_SIDE : fmax(IMG_SIDE * iw / ih, 1);
		g->h = iw >= ih ? fmax(IMG_SIDE * ih / iw, 1) : IMG_SIDE;
		return;
	}
	/* w = cw + kx min(w, h), h = ch + ky min(w, h) */
	g->h = j->ch / (1 - ky);
	g->w = j->cw + kx * g->h;
	if (g->w < g->h) {
		g->w = j->cw / (1 - kx);
		g->h = j->ch + ky * g->w;
	}
}

/* Frame width and content scale for a box of W x H. */
static void fit_box(const stamp_job *j, double w, double h, struct stamp_geom *g)
{
	g->w = milli(w);
	g->h = milli(h);
	g->lw = fmin(g->w, g->h) / FRAME_DIV;
	g->s = j->text ? fmin((g->w - 2 * INSET_X * g->lw) / j->cw,
	                      (g->h - 2 * INSET_Y * g->lw) / j->ch)
	               : 1;
}

static void put_nums(ps_buf *b, const double *v, size_t n, const char *op)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ps_serialize_real(b, milli(v[i]));
		ps_buf_putc(b, ' ');
	}
	ps_buf_puts(b, op);
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

/* << /NAME << /KEY N 0 R >> >> entries of the resources. */
static int put_res_ref(ps_obj *res, const char *cat, const char *key, uint32_t num)
{
	ps_obj *d = ps_new_dict();

	if (!d || ps_dict_put_ref(d, key, num, 0) < 0) {
		ps_obj_free(d);
		return PDFSTAMP_E_NOMEM;
	}
	return ps_dict_put(res, cat, d);
}

/* The content stream of the appearance (notes 5 and 6). */
static int appearance_content(stamp_job *j, const struct stamp_geom *g, ps_buf *c)
{
	const struct pdfstamp_stamp_opts *o = j->o;
	double lw = g->lw, v[6];
	size_t i;
	int rc;

	ps_buf_puts(c, "q\n");
	if (o->opacity < 1)
		ps_buf_puts(c, "/GS0 gs\n");
	if (j->img) {
		/* the image keeps its aspect, centred in the inner area */
		double in = j->text ? INNER * lw : 0, aw = g->w - 2 * in, ah = g->h - 2 * in;
		double sc = fmin(aw / j->iw, ah / j->ih);
		v[0] = j->iw * sc;
		v[1] = v[2] = 0;
		v[3] = j->ih * sc;
		v[4] = in + (aw - v[0]) / 2;
		v[5] = in + (ah - v[3]) / 2;
		ps_buf_puts(c, "q ");
		put_nums(c, v, 6, "cm /Im1 Do Q\n");
	}
	if (!j->text)
		goto done;
	put_nums(c, o->color, 3, "RG ");
	put_nums(c, o->color, 3, "rg\n");
	put_nums(c, &lw, 1, "w\n");
	v[0] = v[1] = lw / 2;
	v[2] = g->w - lw;
	v[3] = g->h - lw;
	put_nums(c, v, 4, "re S\n");
	v[0] = v[1] = lw * 2.5;
	v[2] = g->w - 5 * lw;
	v[3] = g->h - 5 * lw;
	put_nums(c, v, 4, "re S\n");
	{
		/* the content at its natural size, scaled by s and centred */
		double s = g->s, ox = (g->w - j->cw * s) / 2, oy = (g->h - j->ch * s) / 2;
		double top = j->small_base + (fmax(j->small.ascent, 0)) * FS_SMALL / 1000 + GAP -
		             j->desc + (double)(j->nlines - 1) * j->pitch;
		for (i = 0; i < j->nlines; i++) {
			const ps_line *l = &j->lines[i];
			double x = (j->cw - l->width * FS_MAIN / 1000) / 2,
			       y = top - (double)i * j->pitch;
			if (l->n &&
			    (rc = ps_font_show(j->font, l, milli(FS_MAIN * s), milli(ox + x * s),
			                       milli(oy + y * s), c)) < 0)
				return rc;
		}
		if (j->small.n &&
		    (rc = ps_font_show(j->font, &j->small, milli(FS_SMALL * s),
		                       milli(ox +
		                             (j->cw - j->small.width * FS_SMALL / 1000) / 2 * s),
		                       milli(oy + j->small_base * s), c)) < 0)
			return rc;
	}
done:
	ps_buf_puts(c, "Q\n");
	return 0;
}

/* The appearance for a box of G's size on a page turned by ROTATE: the
 * one already written for that size and rotation, or a new one (note 2). */
static int appearance(ps_update *up, stamp_job *j, const struct stamp_geom *g, int rotate,
                      uint32_t *num)
{
	static const double rot[4][6] = {{1, 0, 0, 1, 0, 0}, {0, 1, -1, 0, 0, 0},
	                                 {-1, 0, 0, -1, 0, 0}, {0, -1, 1, 0, 0, 0}};
	ps_ctx *ctx = ps_doc_ctx(up->doc);
	const struct pdfstamp_stamp_opts *o = j->o;
	ps_buf c = PS_BUF_INIT;
	ps_obj *d = NULL, *res = NULL, *stm, *fonts = NULL;
	double bbox[4] = {0, 0, g->w, g->h};
	uint8_t *data;
	size_t i, dlen;
	int rc;

	for (i = 0; i < j->naps; i++) {
		if (j->aps[i].w == g->w && j->aps[i].h == g->h && j->aps[i].rotate == rotate) {
			*num = j->aps[i].num;
			return 0;
		}
	}
	if (ps_vec_grow((void **)&j->aps, j->naps, sizeof *j->aps) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	/* the shared objects, once per update */
	if (j->text && (!(fonts = ps_new_dict()) || (rc = ps_font_embed(j->font, up, fonts)) < 0)) {
		ps_obj_free(fonts);
		return fonts ? rc : ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	}
	if (j->img && !j->img_num && (rc = ps_image_embed(j->img, up, &j->img_num)) < 0)
		return rc;
	if ((rc = appearance_content(j, g, &c)) < 0) {
		ps_buf_free(&c);
		ps_obj_free(fonts);
		return rc;
	}
	if (c.oom || !(res = ps_new_dict()))
		goto oom;
	rc = fonts ? ps_dict_put(res, "Font", fonts) : 0;  /* takes FONTS */
	fonts = NULL;
	if (rc < 0 ||
	    (j->img && put_res_ref(res, "XObject", "Im1", j->img_num) < 0))
		goto oom;
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
	if (!d || ps_dict_put_name(d, "Type", "XObject") < 0 ||
	    ps_dict_put_name(d, "Subtype", "Form") < 0 || ps_dict_put_int(d, "FormType", 1) < 0 ||
	    ps_dict_put(d, "BBox", real_array(bbox, 4)) < 0)
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
	if (!(*num = ps_update_alloc(up))) {
		ps_obj_free(stm);
		return ctx->errcode;
	}
	if ((rc = ps_update_put(up, *num, 0, stm)) < 0)
		return rc;
	j->aps[j->naps].w = g->w;
	j->aps[j->naps].h = g->h;
	j->aps[j->naps].rotate = rotate;
	j->aps[j->naps].num = *num;
	j->naps++;
	return 0;
oom:
	ps_obj_free(fonts);
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

/* D's KEY: the text string UTF8, or a reference to the shared string
 * object NUM that holds it (note 8). */
static int put_text(ps_ctx *ctx, ps_obj *d, const char *key, const char *utf8, uint32_t num)
{
	ps_obj *s = NULL;
	int rc;

	if (num)
		return ps_dict_put_ref(d, key, num, 0) < 0
		       ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
	if ((rc = ps_text_from_utf8(ctx, utf8, strlen(utf8), &s)) < 0)
		return rc;
	if ((rc = ps_dict_put(d, key, s)) < 0)
		return ps_err(ctx, rc, "out of memory");
	return 0;
}

/* The annotation's /NM: 15 random characters, 90 bits in one AES block
 * (note 8). */
static int random_nm(ps_ctx *ctx, char nm[16])
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	uint8_t rnd[15];
	int rc, k;

	if ((rc = ps_random(ctx, rnd, sizeof rnd)) < 0)
		return rc;
	for (k = 0; k < 15; k++)
		nm[k] = b64[rnd[k] & 63];
	nm[15] = '\0';
	return 0;
}

/* A string shared by the annotations of a many-page stamp (note 8). */
static int shared_text(ps_update *up, const char *utf8, uint32_t *num)
{
	ps_obj *s = NULL;
	int rc;

	if ((rc = ps_text_from_utf8(ps_doc_ctx(up->doc), utf8, strlen(utf8), &s)) < 0)
		return rc;
	if (!(*num = ps_update_alloc(up))) {
		ps_obj_free(s);
		return ps_doc_ctx(up->doc)->errcode;
	}
	return ps_update_put(up, *num, 0, s);
}

/* The /C array shared by the annotations of a many-page stamp (note 8). */
static int shared_color(ps_update *up, const double color[3], uint32_t *num)
{
	ps_obj *c = real_array(color, 3);

	if (!c)
		return ps_err(ps_doc_ctx(up->doc), PDFSTAMP_E_NOMEM, "out of memory");
	if (!(*num = ps_update_alloc(up))) {
		ps_obj_free(c);
		return ps_doc_ctx(up->doc)->errcode;
	}
	return ps_update_put(up, *num, 0, c);
}

/* Adds REF to the page's annotations (design note 2). */
static int link_annotation(ps_update *up, const ps_page *pg, uint32_t annot)
{
	ps_doc *doc = up->doc;
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_obj *annots = ps_dict_get(pg->dict, "Annots"), *arr, *page;
	size_t i;
	int rc;

	/* Only an object of the file gets a new version.  A reference to a
	 * missing or free object is the null object (ISO 32000-2 7.3.10): the
	 * page then gets an array of its own.  (Such a number may be one this
	 * update hands out, or lie above any the file can have: never write
	 * it.)  page_annots read it all before the first number was handed
	 * out. */
	if (pg->annots_missing)
		annots = NULL;
	if (annots && annots->kind == PS_REF) {
		uint32_t anum = annots->u.ref.num;
		/* a version of that array may already be pending (shared arrays;
		 * or, in a damaged file, another page named as /Annots) */
		for (i = 0; i < up->nobjs; i++) {
			if (up->objs[i].num != anum)
				continue;
			if (up->objs[i].obj->kind != PS_ARRAY)
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "page object %u: /Annots is not an array", pg->num);
			return ps_array_push(up->objs[i].obj, ps_new_ref(annot, 0)) < 0 ?
			       ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
		}
		arr = pg->annots;
		if (arr && arr->kind != PS_ARRAY)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "page object %u: /Annots is not an array", pg->num);
		arr = arr ? ps_obj_copy(arr) : ps_new_array();
		if (!arr || ps_array_push(arr, ps_new_ref(annot, 0)) < 0) {
			ps_obj_free(arr);
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		}
		/* under the number and generation the page names, as the page's
		 * own new version is (make_page) */
		return ps_update_put(up, anum, annots->u.ref.gen, arr);
	}
	if (annots && annots->kind != PS_ARRAY && annots->kind != PS_NULL)
		return ps_err(ctx, PDFSTAMP_E_FORMAT, "page object %u: /Annots is not an array",
		              pg->num);
	for (i = 0; i < up->nobjs; i++) {
		if (up->objs[i].num == pg->num) {
			page = up->objs[i].obj;
			if (page->kind != PS_DICT) /* another role in a damaged file */
				return ps_err(ctx, PDFSTAMP_E_FORMAT,
				              "page object %u is not a dictionary", pg->num);
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

static int stamp_page(ps_update *up, stamp_job *j, int64_t index, const ps_page *pg)
{
	const struct pdfstamp_stamp_opts *o = j->o;
	ps_doc *doc = up->doc;
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct stamp_geom g;
	char nm[16];
	double rect[4];
	ps_obj *annot = NULL, *apd = NULL;
	uint32_t annot_num, ap_num;
	int rc, swap;

	swap = pg->rotate == 90 || pg->rotate == 270;
	if (o->has_rect) {
		double fw, fh;
		memcpy(rect, o->rect, sizeof rect);
		fw = swap ? rect[3] - rect[1] : rect[2] - rect[0];
		fh = swap ? rect[2] - rect[0] : rect[3] - rect[1];
		if (!(fw > 0 && fh > 0) || !isfinite(fw + fh))
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "the stamp rectangle (rect) must be finite, "
			              "with x1 < x2 and y1 < y2");
		fit_box(j, fw, fh, &g);
		if (rect[0] < pg->box[0] || rect[1] < pg->box[1] || rect[2] > pg->box[2] ||
		    rect[3] > pg->box[3])
			ps_warn(ctx, "the stamp rectangle on page %lld reaches outside the visible "
			        "page [%g %g %g %g]; part of it will not show", (long long)index,
			        pg->box[0], pg->box[1], pg->box[2], pg->box[3]);
	} else {
		double pw = swap ? pg->box[3] - pg->box[1] : pg->box[2] - pg->box[0];
		double ph = swap ? pg->box[2] - pg->box[0] : pg->box[3] - pg->box[1];
		double m = o->margin, x, y, s = 1;
		natural_box(j, &g);
		if (g.w > pw - 2 * m || g.h > ph - 2 * m) { /* shrink to fit small pages */
			s = fmin((pw - 2 * m) / g.w, (ph - 2 * m) / g.h);
			if (!(s > 0.05))
				return ps_err(ctx, PDFSTAMP_E_USAGE,
				              "the page is too small for the stamp "
				              "with this margin");
		}
		fit_box(j, g.w * s, g.h * s, &g);
		switch (o->position) {
		case PDFSTAMP_POS_TOP_LEFT: x = m; y = ph - m - g.h; break;
		case PDFSTAMP_POS_BOTTOM_RIGHT: x = pw - m - g.w; y = m; break;
		case PDFSTAMP_POS_BOTTOM_LEFT: x = m; y = m; break;
		case PDFSTAMP_POS_CENTER: x = (pw - g.w) / 2; y = (ph - g.h) / 2; break;
		default: x = pw - m - g.w; y = ph - m - g.h; break;
		}
		visual_to_user(pg, x, y, g.w, g.h, rect);
	}
	if ((rc = appearance(up, j, &g, pg->rotate, &ap_num)) < 0)
		return rc;
	if (!(annot_num = ps_update_alloc(up)))
		return ctx->errcode;
	if (!j->nm_num && (rc = random_nm(ctx, nm)) < 0)
		return rc;
	annot = ps_new_dict();
	apd = ps_new_dict();
	if (!annot || !apd)
		goto oom;
	if (ps_dict_put_name(annot, "Subtype", o->freetext ? "FreeText" : "Stamp") < 0 ||
	    ps_dict_put(annot, "Rect", real_array(rect, 4)) < 0 ||
	    ps_dict_put_int(annot, "F", 4 | 128) < 0 || /* Print | Locked (Table 167) */
	    ps_dict_put_ref(annot, "P", pg->num, pg->gen) < 0)
		goto oom;
	if ((rc = put_text(ctx, annot, "NM", nm, j->nm_num)) < 0)
		goto out;
	if ((rc = put_text(ctx, annot, "M", j->date, j->date_num)) < 0 ||
	    (rc = put_text(ctx, annot, "CreationDate", j->date, j->date_num)) < 0)
		goto out;
	if (j->color_num ? ps_dict_put_ref(annot, "C", j->color_num, 0) < 0 :
	                   ps_dict_put(annot, "C", real_array(o->color, 3)) < 0)
		goto oom;
	if (*j->contents &&
	    (rc = put_text(ctx, annot, "Contents", j->contents, j->contents_num)) < 0)
		goto out;
	if (o->author && (rc = put_text(ctx, annot, "T", o->author, j->author_num)) < 0)
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
	if ((rc = link_annotation(up, pg, annot_num)) < 0)
		goto out;
	rc = ps_result_add_object(ctx, j->res, annot_num);
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_obj_free(annot);
	ps_obj_free(apd);
	return rc;
}

int pdfstamp_stamp(pdfstamp_doc *doc, const struct pdfstamp_stamp_opts *o,
                   const struct pdfstamp_write_opts *w, struct pdfstamp_result *res)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_update up;
	ps_time when;
	stamp_job j;
	page_list pl = {NULL, 0};
	char nm[16];
	int64_t npages, first, last;
	size_t i;
	int rc, k;

	if ((rc = ps_result_begin(ctx, res)) < 0)
		return rc;
	if (!o || o->version < 1 || o->version > PDFSTAMP_STAMP_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "stamp options of an unknown version");
	if (o->version < PDFSTAMP_STAMP_OPTS_VERSION) {
		/* version 1 ends before font, version 2 before pages: the
		 * rest keeps its defaults */
		struct pdfstamp_stamp_opts cur = PDFSTAMP_STAMP_OPTS_INIT;
		memcpy(&cur, o, o->version < 2 ? offsetof(struct pdfstamp_stamp_opts, font)
		                               : offsetof(struct pdfstamp_stamp_opts, pages));
		cur.version = PDFSTAMP_STAMP_OPTS_VERSION;
		return pdfstamp_stamp(doc, &cur, w, res);
	}
	if (o->pages || o->offset[0] || o->offset[1] || o->rotate || o->diagonal || o->scale ||
	    o->image_opacity >= 0 || o->small || o->file_name || o->bates_start != 1 ||
	    o->bates_offset || o->bates_prefix || o->bates_digits != 6 || o->qr ||
	    o->qr_level != PDFSTAMP_QR_M || o->id || o->position > PDFSTAMP_POS_CENTER)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "stamp options of version 3 are being built");
	if (!(o->opacity > 0 && o->opacity <= 1) || o->margin < 0 || !isfinite(o->margin))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "opacity must be in (0, 1] and the margin non-negative");
	for (k = 0; k < 3; k++)
		if (!(o->color[k] >= 0 && o->color[k] <= 1))
			return ps_err(ctx, PDFSTAMP_E_USAGE, "colour components must be in [0, 1]");
	if (o->image_data && !o->image_len)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the image is empty");
	if ((rc = ps_time_parse(ctx, o->date ? o->date : "now", &when)) < 0)
		return rc;
	memset(&up, 0, sizeof up);
	memset(&j, 0, sizeof j);
	j.o = o;
	j.res = res;
	j.text = o->text ? o->text : (o->image || o->image_data) ? NULL : "APPROVED";
	j.contents = o->note ? o->note : j.text ? j.text : "";
	ps_time_pdf(&when, j.date);
	/* note 3: the image and the font before anything is written */
	if ((o->image || o->image_data) &&
	    (rc = ps_image_load(ctx, o->image, o->image ? NULL : o->image_data, o->image_len,
	                        &j.img)) < 0)
		goto out;
	if (j.img) {
		ps_image_size(j.img, &j.iw, &j.ih);
		if (!j.iw || !j.ih) {
			rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the image has no pixels");
			goto out;
		}
	}
	if (j.text) {
		char iso[32], line2[160];
		int alen = 0;
		/* at most 100 bytes of the author, cut between characters */
		if (o->author) {
			alen = (int)strnlen(o->author, 100);
			if (o->author[alen])
				while (alen > 0 && ((unsigned char)o->author[alen] & 0xC0) == 0x80)
					alen--;
		}
		ps_time_iso(&when, iso);
		snprintf(line2, sizeof line2, "%.*s%s%.10s %.5s", alen, o->author ? o->author : "",
		         o->author ? "  " : "", iso, iso + 11);
		if ((rc = job_text(ctx, &j, line2)) < 0)
			goto out;
	}
	if ((rc = ps_update_begin(doc, w, &up)) < 0)
		goto out;
	if ((rc = ps_preflight_update(doc, PS_UPDATE_ANNOTATION)) < 0 ||
	    (rc = ps_doc_pages(doc, NULL, NULL, &npages)) < 0)
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
		rc = ps_err(ctx, PDFSTAMP_E_USAGE,
		            "page %lld does not exist (the document has %lld)", (long long)o->page,
		            (long long)npages);
		goto out;
	}
	/* every target page first, then the first number (note 1; incr.c
	 * note 6) */
	if ((rc = walk_pages(doc, first, last, &pl)) < 0)
		goto out;
	if (first != last &&
	    ((rc = random_nm(ctx, nm)) < 0 || (rc = shared_text(&up, nm, &j.nm_num)) < 0 ||
	     (rc = shared_color(&up, o->color, &j.color_num)) < 0 ||
	     (rc = shared_text(&up, j.date, &j.date_num)) < 0 ||
	     (*j.contents && (rc = shared_text(&up, j.contents, &j.contents_num)) < 0) ||
	     (o->author && (rc = shared_text(&up, o->author, &j.author_num)) < 0)))
		goto out;
	for (i = 0; i < pl.n; i++)
		if ((rc = stamp_page(&up, &j, first + (int64_t)i, &pl.v[i])) < 0)
			goto out;
	rc = ps_update_commit(&up, w, res);
out:
	free(pl.v);
	ps_update_free(&up);
	job_free(&j);
	return rc;
}
