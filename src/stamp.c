/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stamp.c - the approval stamp: the pages, the annotations and their
 * shared appearance.
 *
 * DESIGN NOTES
 *
 *  1. Only the objects on the path to the target pages are read: the
 *     selection (pagesel.c: sorted runs of pages, for `--pages` or the
 *     one-page `--page`) is resolved against the root's /Count, then the
 *     page tree is walked depth first in page order; a subtree that holds
 *     no selected page, by its /Count (ISO 32000-2 7.7.3.2), is skipped
 *     unread below its node, and the walk stops after the last selected
 *     page, so nothing after it is read.  One page costs O(depth) lookups,
 *     every page O(pages); a damaged subtree outside the selection does
 *     not stop the stamp.  Inherited attributes (7.7.3.4) come down the
 *     walk.  Kid visits are bounded by
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
 *     1 and 3).  Nothing is written for a bad font, image, text or QR
 *     code (a string too long for its level: qr.c note 2).
 *  4. The appearance is a real form XObject (/AP /N, 12.5.5) with its own
 *     /Resources (/Font /F1 ... /Fn as ps_font_embed fills it, /XObject
 *     /Im1, /ExtGState /GS0 and /GS1) so that every viewer draws the same
 *     thing; its /BBox is the stamp's
 *     size as the reader sees it, before any turn, and /Matrix turns it by
 *     the stamp's angle plus the page's /Rotate (note 9), so the stamp
 *     reads as asked on rotated pages.
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
 *     string costs its IV and padding, written in hex: /NM is the stamp's
 *     ID "." the page number (stampid.c note 1), 15 bytes with a default
 *     ID up to page 9999, so that it fits one AES block; it differs per
 *     page and is direct in each annotation.  When one update stamps
 *     several pages the strings every annotation repeats (/Contents, /T,
 *     the date of /M and /CreationDate) are written once, as indirect
 *     string objects (7.3.10) that each annotation references, and so is
 *     the /C array.  A single-page stamp keeps them direct.  The
 *     optional /Type /Annot (Table 166) is left out: readers know an
 *     annotation by its place in /Annots and its /Subtype.
 *  9. Placement (without a rect), all in the page's visual frame: the page
 *     as shown, pw x ph, origin at its bottom left (the visible box turned
 *     by /Rotate; visual_to_user maps back).  The box w x h is the natural
 *     one (note 5, 6) or, with scale, w = scale * pw and h by the natural
 *     aspect.  The turn: rotate degrees counter-clockwise, or with
 *     diagonal atan2(ph, pw), the angle of the diagonal from bottom left
 *     to top right; c and s, its cosine and sine, are rounded to 1/1000
 *     (note 7), exact at the right angles.  The turned box's bounding box
 *     is bw = |c| w + |s| h by bh = |s| w + |c| h; when it does not fit
 *     the page less the margins the box is shrunk (both sides alike,
 *     never below 1/20: PDFSTAMP_E_USAGE).  The bounding box is put at the
 *     anchor (a corner, the middle of an edge, the centre: margin from the
 *     edges it touches, centred on the others), moved by offset, and
 *     mapped to user space: that is /Rect.  /Matrix is [a b -b a 0 0],
 *     (a, b) = (c, s) turned by /Rotate in exact quarter turns, so the
 *     form's /BBox transformed by /Matrix has exactly that bounding box
 *     (up to the 1/1000 of /Rect) and the viewer's map onto /Rect
 *     (ISO 32000-2 12.5.5, the algorithm of appearance streams) is a
 *     translation: no distortion.  The turn is about the box's centre,
 *     which is the bounding box's.  Without a turn on an upright page no
 *     /Matrix is written, as before; appearances are shared by (box,
 *     matrix).  A box that reaches off the page (an offset) is a
 *     warning, not an error.  With a rect the rect is the place: offset,
 *     rotate, diagonal and scale are refused with it.
 * 10. Opacity: opacity is that of the frame and the text (/GS0),
 *     image_opacity that of the image (/GS1, around the image only), each
 *     a constant alpha for strokes and fills (11.6.4.4).  When they are
 *     equal (image_opacity negative, the default) one /GS0 covers the
 *     whole content as before; when both are 1 there is no /ExtGState and
 *     no gs operator, so a plain stamp's bytes do not change.  The
 *     annotation's /CA (opacity, when below 1) is informational: a reader
 *     uses the appearance stream's own transparency (12.5.6.2), which
 *     MuPDF and poppler do.
 * 11. Templates (template.c).  The text and the small line (default
 *     "{author}  {date}", spaces at its ends dropped: a plain stamp draws
 *     exactly what it did before templates) are parsed before anything
 *     else and expanded once the target pages are known: once for the
 *     whole stamp, or once per page when they use {page} or {bates}.  The
 *     font is opened for what is drawn (the first text, then each
 *     character the others add, once), and every text is shaped; the box
 *     and the line pitch come from the largest of them, so every page's
 *     stamp has one size and its text is centred in it.  A per-page text
 *     gets an appearance per page (the cache key includes the text),
 *     deflated (they are many: deflated()); the
 *     font, the image and the shared strings stay shared, and /Contents
 *     is each page's own text unless a note was given.  {bates} of the
 *     k-th selected page (from 0) is bates_start + bates_offset + k, so a
 *     page's number depends only on the selection and the batch's earlier
 *     files, never on what an earlier run stamped.  Options of version 1
 *     and 2 had no templates: their text is made literal (braces doubled).
 * 12. A QR code (opts qr, qr.c) is drawn in the appearance as vector
 *     paths on its own white square, the quiet zone included.  With text,
 *     the square stands left of the text as part of the content (note 5):
 *     its natural side is the text's natural height, but at least
 *     PS_QR_MIN_MODULE (1.5 pt) a module, the box growing to hold it, and
 *     it scales and turns with the text.  Without text (qr given, text
 *     NULL) it is the stamp alone: no frame, the square filling the box,
 *     centred (without a rect, QR_SIDE or 1.5 pt a module, whichever is
 *     larger).  An image and a QR code without text are refused (which
 *     would be the stamp?).  A module under 1.5 pt (a small rect, scale or
 *     page) is warned of once per appearance.  The appearance of a stamp
 *     with a QR code is deflated (ISO 32000-2 7.4.4): its runs take a
 *     third (1.3 KB for a 60-character URL), the other stamps' appearances
 *     stay as they were.  The string is a template (note 11), expanded
 *     and encoded once the target pages are known, before the update's
 *     first object (a string too long for its level is refused then,
 *     note 3); a QR code that differs per page ({page}, {bates}) is
 *     encoded per page, and the square is sized for the one with the most
 *     modules.
 * 13. Re-runs (stampid.c).  Once the target pages are collected, and
 *     before the texts are expanded and the first number is handed out,
 *     the pages that already have an annotation of the stamp's ID are
 *     marked (mark_stamped) and are not stamped; they keep their place in
 *     the selection, so {bates} and a per-page text of the others are what
 *     they would have been in one run.  If every page is marked the call
 *     ends there with result->skipped: the update was begun
 *     (ps_update_begin checks the write options and the file, in memory
 *     only) but is dropped; no file is created, written or synced, and a
 *     deferred call (PDFSTAMP_WRITE_DEFER) leaves nothing pending.  The
 *     open took the lock, as for any call.  The pre-flight (permissions,
 *     the signatures' policies) comes after that test: a file that needs
 *     nothing written is skipped with exit 0 even where a later signature
 *     would now refuse a stamp, so a re-run of a batch ends cleanly.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "policy.h"
#include "flate.h"
#include "font.h"
#include "image.h"
#include "qr.h"
#include "stamp.h"
#include "stampid.h"
#include "template.h"
#include "pagesel.h"

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
#define QR_SIDE 72.0    /* least side of a QR-only stamp without a rect (note 12) */
#define MAX_OFFSET 1.0e7 /* points: |offset|, as the CLI's coordinates */
#define MAX_SCALE 10.0  /* of the page's width */
#define PI 3.14159265358979323846

#define DEFAULT_SMALL "{author}  {date}" /* the small line's template (note 11) */
#define MAX_BATES 999999999999999999LL   /* {bates}: start and offset, each */
#define MAX_BATES_DIGITS 18
#define MAX_BATES_PREFIX 64

/* Every number the stamp writes is rounded to 1/1000 (note 7). */
static double milli(double v)
{
	return llround(v * 1000.0) / 1000.0;
}

/* ---- the page tree --------------------------------------------------------- */

typedef struct ps_page {
	uint32_t num;
	uint16_t gen;
	int64_t index;         /* its page number, from 1 */
	int already;           /* it has a stamp of this ID: not stamped (note 13) */
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

/* Collects the pages SEL selects into PL, in order (note 1).  It writes
 * nothing and hands out no number: every object a page's stamp depends on
 * is read here (incr.c note 6). */
static int walk_pages(ps_doc *doc, const ps_pagesel *sel, page_list *pl)
{
	struct frame {
		ps_obj *kids;      /* borrowed */
		size_t k;
		inherit in;
	} st[MAX_TREE_DEPTH];
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_obj *root = NULL, *rref = NULL, *kids = NULL;
	struct ps_xref_info xi;
	int64_t idx = 1, budget, last = ps_pagesel_last(sel);
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
		if (last != 1)
			return ps_err(ctx, PDFSTAMP_E_FORMAT,
			              "the page tree's /Count does not match its pages");
		if ((rc = collect_page(doc, rref, root, &in, pl)) < 0)
			return rc;
		pl->v[pl->n - 1].index = 1;
		return 0;
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
			/* no selected page in idx..idx+count-1: skipped unread
			 * (idx <= last, so next is not 0, and idx + count
			 * cannot overflow) */
			if (ps_pagesel_next(sel, idx) - idx >= count) {
				idx += count;
				continue;
			}
		} else if (!ps_pagesel_has(sel, idx)) { /* a page not selected */
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
		if ((rc = collect_page(doc, kref, kid, &in, pl)) < 0)
			return rc;
		pl->v[pl->n - 1].index = idx;
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
	double ma, mb;        /* its /Matrix (note 9) */
	size_t text;          /* which of the job's texts */
	uint32_t num;
} ap_entry;

typedef struct stamp_job stamp_job;

/* One expansion of the text and the small line (note 11). */
typedef struct stamp_text {
	char *contents;       /* the main lines' text, for /Contents (owned) */
	ps_line *lines;       /* the main lines, top first (the job's nlines) */
	ps_line small;        /* the small line (n == 0: none) */
	ps_qr *qr;            /* the QR code (note 12), NULL: none */
} stamp_text;

struct stamp_job {
	const struct pdfstamp_stamp_opts *o;
	const char *text;     /* the text's template; NULL: an image alone (note 6) */
	const char *note;     /* /Contents: the note, else the text's expansion (none if empty) */
	char date[32];        /* /M and /CreationDate */
	ps_time when;
	ps_tmpl *tmain, *tsmall, *tqr; /* the templates (note 11) */
	unsigned uses;        /* PS_TMPL_* of both */
	int64_t npages;       /* {pages} */
	int64_t bates0;       /* the number of the first selected page ({bates}) */
	ps_font *font;
	stamp_text *texts;    /* one per page with a per-page template, else one */
	size_t ntexts;
	size_t nlines;        /* main lines of every text */
	double cw, ch;        /* natural content size, the largest text's (note 5) */
	double pitch, asc, desc, small_asc, small_base, top;
	ps_image *img;
	uint32_t iw, ih;
	ps_qr *qr;            /* the texts' QR code with the most modules (borrowed; note 12),
	                       * NULL: none */
	double qw;            /* its square's natural side */
	uint32_t img_num;
	uint32_t contents_num, author_num, date_num; /* shared strings (note 8), 0: direct */
	char id[PS_STAMPID_MAX + 1]; /* the stamp's ID (stampid.c) */
	int64_t already;      /* selected pages that have a stamp of this ID (note 13) */
	uint32_t color_num;   /* the shared /C array (note 8), 0: direct */
	ap_entry *aps;
	size_t naps;
	struct pdfstamp_result *res;
};

static void job_free(stamp_job *j)
{
	size_t i, k;

	for (k = 0; j->texts && k < j->ntexts; k++) {
		for (i = 0; j->texts[k].lines && i < j->nlines; i++)
			ps_font_line_free(&j->texts[k].lines[i]);
		free(j->texts[k].lines);
		ps_font_line_free(&j->texts[k].small);
		free(j->texts[k].contents);
		ps_qr_free(j->texts[k].qr);
	}
	free(j->texts);
	ps_tmpl_free(j->tmain);
	ps_tmpl_free(j->tsmall);
	ps_tmpl_free(j->tqr);
	ps_font_free(j->font);
	ps_image_free(j->img);
	free(j->aps);
}

/* The templates' values on the IDX-th selected page, page number PAGE. */
static void page_vars(const stamp_job *j, size_t idx, int64_t page, ps_tmpl_vars *v)
{
	const struct pdfstamp_stamp_opts *o = j->o;

	memset(v, 0, sizeof *v);
	v->page = page;
	v->pages = j->npages;
	v->when = j->when;
	v->file = o->file_name;
	v->author = o->author;
	v->bates = j->bates0 + (int64_t)idx;
	v->bates_prefix = o->bates_prefix;
	v->bates_digits = o->bates_digits;
}

/* Appends the small line of V to OUT without the spaces at its ends (the
 * default "{author}  {date}" without an author is the date alone). */
static int expand_small(ps_ctx *ctx, const stamp_job *j, const ps_tmpl_vars *v, ps_buf *out)
{
	size_t from = out->len, a, b;
	int rc;

	if ((rc = ps_tmpl_expand(ctx, j->tsmall, v, out)) < 0)
		return rc;
	for (a = from; a < out->len && out->data[a] == ' '; a++)
		;
	for (b = out->len; b > a && out->data[b - 1] == ' '; b--)
		;
	memmove(out->data + from, out->data + a, b - a);
	out->len = from + (b - a);
	return 0;
}

/* Shapes the text of T: MAIN (lines split at '\n') and SMALL. */
static int shape_text(ps_font *font, const char *main_s, size_t main_len, const char *small_s,
                      size_t small_len, size_t nlines, stamp_text *t)
{
	const char *p = main_s, *end = main_s + main_len, *nl;
	size_t i;
	int rc;

	for (i = 0; i < nlines; i++, p = nl + 1) {
		size_t len;
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		len = (size_t)(nl - p);
		if (len && p[len - 1] == '\r') /* CR LF from a file */
			len--;
		if ((rc = ps_font_shape(font, p, len, &t->lines[i])) < 0)
			return rc;
	}
	return ps_font_shape(font, small_s, small_len, &t->small);
}

/* COVER: what the font must cover (ps_font_open) of the texts in ALL
 * (NUL-terminated), the first of which ends before FROM: that text as it
 * is (so a stamp of one text asks for what it always did), then the
 * characters of the others it lacks, once each (note 11: 2,000 pages of
 * "Page {page}" add the digits, not 2,000 lines). */
static int cover_text(ps_ctx *ctx, const stamp_job *j, const ps_buf *all, size_t from,
                      ps_buf *cover)
{
	const uint8_t *p = all->data;
	size_t n = all->len - 1, i = 0, l;
	uint8_t *seen_bmp = NULL; /* a bit per BMP character */
	uint32_t cp, *astral = NULL;
	size_t nastral = 0, k;

	if (j->ntexts <= 1) {
		ps_buf_append(cover, all->data, all->len);
		return cover->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
	}
	if (!(seen_bmp = calloc(65536 / 8, 1)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	ps_buf_append(cover, p, from - 1); /* the first text, without its last '\n' */
	ps_buf_putc(cover, '\n');
	for (i = 0; i < n; i += l) {
		int fresh;
		l = ps_text_utf8_decode(p + i, n - i, &cp);
		if (!l) { /* the font refuses it below */
			ps_buf_append(cover, p + i, 1);
			l = 1;
			continue;
		}
		if (cp == '\n')
			continue;
		if (cp < 65536) {
			fresh = !(seen_bmp[cp / 8] & (1u << (cp % 8)));
			seen_bmp[cp / 8] |= (uint8_t)(1u << (cp % 8));
		} else {
			for (k = 0; k < nastral && astral[k] != cp; k++)
				;
			fresh = k == nastral;
			if (fresh) {
				if (ps_vec_grow((void **)&astral, nastral, sizeof *astral) < 0)
					cover->oom = 1;
				else
					astral[nastral++] = cp;
			}
		}
		if (fresh && i >= from)
			ps_buf_append(cover, p + i, l);
	}
	ps_buf_putc(cover, '\0');
	free(seen_bmp);
	free(astral);
	return cover->oom ? ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory") : 0;
}

/* Expands the text's templates for every text of the job, opens the one
 * font for all of it and shapes it (notes 3, 5 and 11): before anything
 * is written. */
static int job_text(ps_ctx *ctx, stamp_job *j, const page_list *pl)
{
	ps_buf all = PS_BUF_INIT;  /* every text: main '\n' small '\n' ... */
	ps_buf cover = PS_BUF_INIT; /* what the font must cover */
	size_t *mo = NULL, *so = NULL; /* where each text's main and small start in ALL */
	double a = 0, d = 0, wmax = 0, sa = 0, sd = 0, swmax = 0;
	size_t i, k, n = 1;
	int rc = 0, has_small = 0;
	const char *p;

	for (p = j->text; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	j->nlines = n;
	if (!(mo = calloc(j->ntexts + 1, sizeof *mo)) || !(so = calloc(j->ntexts, sizeof *so)))
		goto oom;
	for (k = 0; k < j->ntexts; k++) {
		ps_tmpl_vars v;
		page_vars(j, k, pl->v[k].index, &v);
		mo[k] = all.len;
		if ((rc = ps_tmpl_expand(ctx, j->tmain, &v, &all)) < 0)
			goto out;
		ps_buf_putc(&all, '\n');
		so[k] = all.len;
		if ((rc = expand_small(ctx, j, &v, &all)) < 0)
			goto out;
		if (all.len > so[k])
			has_small = 1;
		ps_buf_putc(&all, '\n');
	}
	mo[j->ntexts] = all.len;
	all.len--; /* the last newline: the text ends with the small line as before */
	ps_buf_putc(&all, '\0');
	if (all.oom)
		goto oom;
	/* refuses text that is too long or not UTF-8 before anything else */
	if ((rc = cover_text(ctx, j, &all, mo[1], &cover)) < 0 ||
	    (rc = ps_font_open(ctx, j->o->font, j->o->fonts, j->o->nfonts,
	                       (const char *)cover.data, &j->font)) < 0)
		goto out;
	for (k = 0; k < j->ntexts; k++) {
		stamp_text *t = &j->texts[k];
		const char *base = (const char *)all.data;
		if (!(t->lines = calloc(n, sizeof *t->lines)) ||
		    !(t->contents = strndup(base + mo[k], so[k] - 1 - mo[k])))
			goto oom;
		if ((rc = shape_text(j->font, base + mo[k], so[k] - 1 - mo[k], base + so[k],
		                     mo[k + 1] - 1 - so[k], n, t)) < 0)
			goto out;
		for (i = 0; i < n; i++) {
			a = fmax(a, t->lines[i].ascent);
			d = fmin(d, t->lines[i].descent);
			wmax = fmax(wmax, t->lines[i].width * FS_MAIN / 1000);
		}
		sa = fmax(sa, t->small.ascent);
		sd = fmin(sd, t->small.descent);
		swmax = fmax(swmax, t->small.width * FS_SMALL / 1000);
	}
	/* note 5: uniform pitch from the inked extents of all lines */
	j->asc = a * FS_MAIN / 1000;
	j->desc = d * FS_MAIN / 1000;
	j->pitch = j->asc - j->desc + LINE_GAP * FS_MAIN;
	j->ch = (double)(n - 1) * j->pitch + j->asc - j->desc;
	if (has_small) {
		j->small_asc = fmax(sa, 0) * FS_SMALL / 1000;
		j->small_base = -fmin(sd, 0) * FS_SMALL / 1000;
		j->ch += j->small_asc + j->small_base + GAP;
		j->top = j->small_base + j->small_asc + GAP;
	}
	j->top += -j->desc + (double)(n - 1) * j->pitch; /* the first main line's baseline */
	j->cw = fmax(wmax, swmax);
	if (!(j->cw >= 1))
		j->cw = 1;
	if (!(j->ch >= 1))
		j->ch = 1;
	goto out;
oom:
	rc = ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
out:
	ps_buf_free(&all);
	ps_buf_free(&cover);
	free(mo);
	free(so);
	return rc;
}

/* Encodes the QR code of every text of the job (notes 3, 11 and 12). */
static int job_qr(ps_ctx *ctx, stamp_job *j, const page_list *pl)
{
	ps_buf str = PS_BUF_INIT;
	size_t k;
	int rc = 0;

	for (k = 0; k < j->ntexts && rc == 0; k++) {
		ps_tmpl_vars v;
		ps_qr **q = &j->texts[k].qr;
		page_vars(j, k, pl->v[k].index, &v);
		ps_buf_reset(&str);
		if ((rc = ps_tmpl_expand(ctx, j->tqr, &v, &str)) < 0 ||
		    (rc = ps_qr_encode(ctx, str.data ? (const char *)str.data : "", str.len,
		                       j->o->qr_level, q)) < 0)
			break;
		if (!j->qr || ps_qr_modules(*q) > ps_qr_modules(j->qr))
			j->qr = *q;
	}
	ps_buf_free(&str);
	return rc;
}

/* Every text of the job (note 11): one per selected page when a template
 * differs per page, else one; then their QR codes and their text. */
static int job_texts(ps_ctx *ctx, stamp_job *j, const page_list *pl)
{
	int rc;

	j->ntexts = j->uses & PS_TMPL_PER_PAGE ? pl->n : 1;
	if (!(j->texts = calloc(j->ntexts, sizeof *j->texts)))
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	if (j->tqr && (rc = job_qr(ctx, j, pl)) < 0)
		return rc;
	return j->text ? job_text(ctx, j, pl) : 0;
}

/* The QR code's natural side (note 12), once the text is measured. */
static void job_qr_side(stamp_job *j)
{
	double least = ps_qr_modules(j->qr) * PS_QR_MIN_MODULE;

	j->qw = j->text ? fmax(j->ch, least) : fmax(QR_SIDE, least);
}

/* ---- geometry and the appearance ------------------------------------------------ */

struct stamp_geom {
	double w, h;          /* the box (visual size), before the turn */
	double lw;            /* frame line width */
	double s;             /* scale of the content (1 = natural) */
	double ma, mb;        /* the appearance's /Matrix [ma mb -mb ma 0 0] (note 9): the
	                       * turn on the page as shown plus the page's /Rotate */
};

/* The content's natural width and height: the text and, left of it, the
 * QR code's square (notes 5 and 12). */
static double content_w(const stamp_job *j)
{
	return j->cw + j->qw;
}

static double content_h(const stamp_job *j)
{
	return fmax(j->ch, j->qw);
}

/* The box for the content at its natural size (note 5), image (note 6) or
 * QR code (note 12). */
static void natural_box(const stamp_job *j, struct stamp_geom *g)
{
	/* the insets of both sides, per unit of min(w, h) */
	double kx = 2 * INSET_X / FRAME_DIV, ky = 2 * INSET_Y / FRAME_DIV;

	if (!j->text && j->qr) {
		g->w = g->h = j->qw;
		return;
	}
	if (!j->text) {
		double iw = j->iw, ih = j->ih;
		g->w = iw >= ih ? IMG_SIDE : fmax(IMG_SIDE * iw / ih, 1);
		g->h = iw >= ih ? fmax(IMG_SIDE * ih / iw, 1) : IMG_SIDE;
		return;
	}
	/* w = cw + kx min(w, h), h = ch + ky min(w, h) */
	g->h = content_h(j) / (1 - ky);
	g->w = content_w(j) + kx * g->h;
	if (g->w < g->h) {
		g->w = content_w(j) / (1 - kx);
		g->h = content_h(j) + ky * g->w;
	}
}

/* Frame width and content scale for a box of W x H. */
static void fit_box(const stamp_job *j, double w, double h, struct stamp_geom *g)
{
	g->w = milli(w);
	g->h = milli(h);
	g->lw = fmin(g->w, g->h) / FRAME_DIV;
	g->s = j->text ? fmin((g->w - 2 * INSET_X * g->lw) / content_w(j),
	                      (g->h - 2 * INSET_Y * g->lw) / content_h(j))
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

/* The image's opacity (note 10). */
static double image_opacity(const struct pdfstamp_stamp_opts *o)
{
	return o->image_opacity < 0 ? o->opacity : o->image_opacity;
}

/* Does the image get an opacity of its own (note 10)? */
static int own_image_gs(const stamp_job *j)
{
	return j->img && image_opacity(j->o) != j->o->opacity;
}

/* Is /GS0 set: for everything, or for the frame and the text (note 10)? */
static int uses_gs0(const stamp_job *j)
{
	return j->o->opacity < 1 && (j->text || !own_image_gs(j));
}

/* The image keeps its aspect, centred in the inner area (note 6). */
static void put_image(const stamp_job *j, const struct stamp_geom *g, ps_buf *c)
{
	double in = j->text ? INNER * g->lw : 0, aw = g->w - 2 * in, ah = g->h - 2 * in;
	double sc = fmin(aw / j->iw, ah / j->ih), v[6];

	v[0] = j->iw * sc;
	v[1] = v[2] = 0;
	v[3] = j->ih * sc;
	v[4] = in + (aw - v[0]) / 2;
	v[5] = in + (ah - v[3]) / 2;
	ps_buf_puts(c, "q ");
	put_nums(c, v, 6, "cm /Im1 Do Q\n");
}

/* The QR code's square in a box of G (note 12): lower left X, Y and SIDE. */
static void qr_square(const stamp_job *j, const struct stamp_geom *g, double *x, double *y,
                      double *side)
{
	*side = j->text ? j->qw * g->s : fmin(g->w, g->h);
	*x = j->text ? (g->w - content_w(j) * g->s) / 2 : (g->w - *side) / 2;
	*y = (g->h - *side) / 2;
}

/* The content stream of the appearance (notes 5, 6 and 12). */
static int appearance_content(stamp_job *j, const stamp_text *t, const struct stamp_geom *g,
                              ps_buf *c)
{
	const struct pdfstamp_stamp_opts *o = j->o;
	double lw = g->lw, v[6];
	size_t i;
	int rc;

	ps_buf_puts(c, "q\n");
	if (own_image_gs(j)) {
		/* note 10: the image under its own opacity, then the rest's */
		if (image_opacity(o) < 1) {
			ps_buf_puts(c, "q /GS1 gs\n");
			put_image(j, g, c);
			ps_buf_puts(c, "Q\n");
		} else {
			put_image(j, g, c);
		}
	}
	if (uses_gs0(j))
		ps_buf_puts(c, "/GS0 gs\n");
	if (j->img && !own_image_gs(j))
		put_image(j, g, c);
	if (t && t->qr) {
		qr_square(j, g, &v[0], &v[1], &v[2]);
		ps_qr_draw(t->qr, v[0], v[1], v[2], c);
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
		double s = g->s, ox = (g->w - content_w(j) * s) / 2 + j->qw * s,
		       oy = (g->h - j->ch * s) / 2;
		for (i = 0; i < j->nlines; i++) {
			const ps_line *l = &t->lines[i];
			double x = (j->cw - l->width * FS_MAIN / 1000) / 2,
			       y = j->top - (double)i * j->pitch;
			if (l->n &&
			    (rc = ps_font_show(j->font, l, milli(FS_MAIN * s), milli(ox + x * s),
			                       milli(oy + y * s), c)) < 0)
				return rc;
		}
		if (t->small.n &&
		    (rc = ps_font_show(j->font, &t->small, milli(FS_SMALL * s),
		                       milli(ox +
		                             (j->cw - t->small.width * FS_SMALL / 1000) / 2 * s),
		                       milli(oy + j->small_base * s), c)) < 0)
			return rc;
	}
done:
	ps_buf_puts(c, "Q\n");
	return 0;
}

/* An /ExtGState entry NAME with constant opacity A for strokes and fills. */
static int put_gs(ps_obj *gs, const char *name, double a)
{
	ps_obj *e = ps_new_dict();

	if (!e || ps_dict_put_name(e, "Type", "ExtGState") < 0 ||
	    ps_dict_put_real(e, "CA", a) < 0 || ps_dict_put_real(e, "ca", a) < 0) {
		ps_obj_free(e);
		return PDFSTAMP_E_NOMEM;
	}
	return ps_dict_put(gs, name, e);
}

/* Whether the appearances are deflated: a QR code's runs deflate to about
 * a third (note 12), and a text per page makes an appearance per page,
 * each about 45 bytes smaller deflated (note 11: 2,000 pages of "Page
 * {page} of {pages}" append 1.86 MB instead of 1.94); a plain stamp's
 * single appearance stays as it was. */
static int deflated(const stamp_job *j)
{
	return j->qr || j->ntexts > 1;
}

/* The appearance of text TEXT for a box of G's size turned by G's matrix:
 * the one already written for them, or a new one (notes 2 and 11). */
static int appearance(ps_update *up, stamp_job *j, size_t text, const struct stamp_geom *g,
                      uint32_t *num)
{
	ps_ctx *ctx = ps_doc_ctx(up->doc);
	const struct pdfstamp_stamp_opts *o = j->o;
	ps_buf c = PS_BUF_INIT;
	ps_obj *d = NULL, *res = NULL, *stm, *fonts = NULL;
	double bbox[4] = {0, 0, g->w, g->h}, mat[6] = {g->ma, g->mb, -g->mb, g->ma, 0, 0};
	double io = image_opacity(o);
	uint8_t *data;
	size_t i, dlen;
	int rc;

	for (i = 0; i < j->naps; i++) {
		if (j->aps[i].w == g->w && j->aps[i].h == g->h && j->aps[i].ma == g->ma &&
		    j->aps[i].mb == g->mb && j->aps[i].text == text) {
			*num = j->aps[i].num;
			return 0;
		}
	}
	if (ps_vec_grow((void **)&j->aps, j->naps, sizeof *j->aps) < 0)
		return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
	/* the shared objects, once per update; the fonts' entries per form */
	if (j->text) {
		if (!(fonts = ps_new_dict()))
			return ps_err(ctx, PDFSTAMP_E_NOMEM, "out of memory");
		if ((rc = ps_font_embed(j->font, up, fonts)) < 0) {
			ps_obj_free(fonts);
			return rc;
		}
	}
	if (j->img && !j->img_num && (rc = ps_image_embed(j->img, up, &j->img_num)) < 0) {
		ps_obj_free(fonts);
		return rc;
	}
	if (j->qr) {
		double qx, qy, side, m;
		qr_square(j, g, &qx, &qy, &side);
		/* 1 % below: what fit_box's rounding of the box takes off */
		if ((m = side / ps_qr_modules(j->qr)) < PS_QR_MIN_MODULE * 0.99)
			ps_warn(ctx, "the QR code's modules are %.2f pt wide in a stamp of %g x %g "
			        "pt, under the %.1f pt that scan at 150 dpi: a larger stamp "
			        "rectangle helps", m, g->w, g->h, PS_QR_MIN_MODULE);
	}
	if ((rc = appearance_content(j, j->texts ? &j->texts[text] : NULL, g, &c)) < 0) {
		ps_buf_free(&c);
		ps_obj_free(fonts);
		return rc;
	}
	if (c.oom)
		goto oom;
	if (deflated(j)) { /* notes 11 and 12 */
		ps_buf z = PS_BUF_INIT;
		rc = ps_deflate(ctx, c.data, c.len, 9, &z);
		ps_buf_free(&c);
		c = z;
		if (rc < 0) {
			ps_buf_free(&c);
			ps_obj_free(fonts);
			return rc;
		}
	}
	if (!(res = ps_new_dict()))
		goto oom;
	rc = fonts ? ps_dict_put(res, "Font", fonts) : 0;  /* takes FONTS */
	fonts = NULL;
	if (rc < 0 ||
	    (j->img && put_res_ref(res, "XObject", "Im1", j->img_num) < 0))
		goto oom;
	/* note 10: /GS0 for all or the frame and text, /GS1 for the image */
	if (uses_gs0(j) || (own_image_gs(j) && io < 1)) {
		ps_obj *gs = ps_new_dict();
		if (!gs || (uses_gs0(j) && put_gs(gs, "GS0", o->opacity) < 0) ||
		    (own_image_gs(j) && io < 1 && put_gs(gs, "GS1", io) < 0)) {
			ps_obj_free(gs);
			goto oom;
		}
		if (ps_dict_put(res, "ExtGState", gs) < 0)
			goto oom;
	}
	d = ps_new_dict();
	if (!d || ps_dict_put_name(d, "Type", "XObject") < 0 ||
	    ps_dict_put_name(d, "Subtype", "Form") < 0 || ps_dict_put_int(d, "FormType", 1) < 0 ||
	    ps_dict_put(d, "BBox", real_array(bbox, 4)) < 0 ||
	    (deflated(j) && ps_dict_put_name(d, "Filter", "FlateDecode") < 0))
		goto oom;
	/* turn the form counter-clockwise by the stamp's angle plus /Rotate so
	 * that it reads as asked on the page as shown (note 9; the viewer maps
	 * the transformed BBox onto /Rect, 12.5.5) */
	if ((g->ma != 1 || g->mb != 0) && ps_dict_put(d, "Matrix", real_array(mat, 6)) < 0)
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
	j->aps[j->naps].ma = g->ma;
	j->aps[j->naps].mb = g->mb;
	j->aps[j->naps].text = text;
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

/* The /Contents of the K-th selected page's annotation. */
static const char *contents(const stamp_job *j, size_t k)
{
	return j->note ? j->note : j->texts[j->ntexts > 1 ? k : 0].contents;
}

/* G's /Matrix for a stamp turned DEG degrees counter-clockwise on the page
 * as shown, on a page with /Rotate ROTATE (note 9); with ROTATE 0, the
 * turn on the page as shown. */
static void turn(double deg, int rotate, struct stamp_geom *g)
{
	double c, s, t;
	int q;

	deg = fmod(deg, 360);
	if (deg < 0)
		deg += 360;
	if (fmod(deg, 90) == 0) { /* exact: no rounding error at the right angles */
		q = (int)(deg / 90) & 3;
		c = q == 0 ? 1 : q == 2 ? -1 : 0;
		s = q == 1 ? 1 : q == 3 ? -1 : 0;
	} else {
		c = milli(cos(deg * PI / 180));
		s = milli(sin(deg * PI / 180));
	}
	/* plus /Rotate, counter-clockwise in user space: exact quarter turns
	 * of the rounded pair, so |ma| and |mb| are |c| and |s| */
	for (q = rotate / 90; q > 0; q--) {
		t = c;
		c = -s;
		s = t;
	}
	g->ma = c + 0.0; /* no negative zero */
	g->mb = s + 0.0;
}

/* Places the stamp on page PG as the options say (note 9): G is its box
 * and matrix, RECT the annotation's /Rect (default user space). */
static int place(ps_ctx *ctx, stamp_job *j, int64_t index, const ps_page *pg,
                 struct stamp_geom *g, double rect[4])
{
	const struct pdfstamp_stamp_opts *o = j->o;
	int swap = pg->rotate == 90 || pg->rotate == 270;
	double pw = swap ? pg->box[3] - pg->box[1] : pg->box[2] - pg->box[0];
	double ph = swap ? pg->box[2] - pg->box[0] : pg->box[3] - pg->box[1];
	double m = o->margin, deg, x, y, s = 1, bw, bh, ac, as;

	deg = o->diagonal ? atan2(ph, pw) * 180 / PI : o->rotate;
	natural_box(j, g);
	if (o->scale > 0) {
		double k = o->scale * pw / g->w;
		g->w *= k;
		g->h *= k;
	}
	turn(deg, 0, g); /* the turn on the page as shown */
	ac = fabs(g->ma);
	as = fabs(g->mb);
	bw = ac * g->w + as * g->h;
	bh = as * g->w + ac * g->h;
	if (bw > pw - 2 * m || bh > ph - 2 * m) { /* shrink to fit small pages */
		s = fmin((pw - 2 * m) / bw, (ph - 2 * m) / bh);
		if (!(s > 0.05))
			return ps_err(ctx, PDFSTAMP_E_USAGE,
			              "page %lld is too small for the stamp with this margin",
			              (long long)index);
	}
	fit_box(j, g->w * s, g->h * s, g);
	/* the bounding box of the turned form as the viewer computes it
	 * (12.5.5), from the rounded numbers that are written */
	bw = milli(ac * g->w + as * g->h);
	bh = milli(as * g->w + ac * g->h);
	switch (o->position) {
	case PDFSTAMP_POS_TOP_LEFT: case PDFSTAMP_POS_LEFT: case PDFSTAMP_POS_BOTTOM_LEFT:
		x = m;
		break;
	case PDFSTAMP_POS_TOP: case PDFSTAMP_POS_CENTER: case PDFSTAMP_POS_BOTTOM:
		x = (pw - bw) / 2;
		break;
	default:
		x = pw - m - bw;
		break;
	}
	switch (o->position) {
	case PDFSTAMP_POS_BOTTOM_LEFT: case PDFSTAMP_POS_BOTTOM: case PDFSTAMP_POS_BOTTOM_RIGHT:
		y = m;
		break;
	case PDFSTAMP_POS_LEFT: case PDFSTAMP_POS_CENTER: case PDFSTAMP_POS_RIGHT:
		y = (ph - bh) / 2;
		break;
	default:
		y = ph - m - bh;
		break;
	}
	x += o->offset[0];
	y += o->offset[1];
	if (x < -0.01 || y < -0.01 || x + bw > pw + 0.01 || y + bh > ph + 0.01)
		ps_warn(ctx, "the stamp on page %lld reaches outside the page as shown (%g x %g); "
		        "part of it will not show", (long long)index, pw, ph);
	visual_to_user(pg, x, y, bw, bh, rect);
	turn(deg, pg->rotate, g);
	return 0;
}

static int stamp_page(ps_update *up, stamp_job *j, size_t k, const ps_page *pg)
{
	const struct pdfstamp_stamp_opts *o = j->o;
	ps_doc *doc = up->doc;
	ps_ctx *ctx = ps_doc_ctx(doc);
	struct stamp_geom g;
	char nm[PS_STAMPID_NM_MAX + 1];
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
		turn(0, pg->rotate, &g);
		if (rect[0] < pg->box[0] || rect[1] < pg->box[1] || rect[2] > pg->box[2] ||
		    rect[3] > pg->box[3])
			ps_warn(ctx, "the stamp rectangle on page %lld reaches outside the visible "
			        "page [%g %g %g %g]; part of it will not show",
			        (long long)pg->index,
			        pg->box[0], pg->box[1], pg->box[2], pg->box[3]);
	} else if ((rc = place(ctx, j, pg->index, pg, &g, rect)) < 0) {
		return rc;
	}
	if ((rc = appearance(up, j, j->ntexts > 1 ? k : 0, &g, &ap_num)) < 0)
		return rc;
	if (!(annot_num = ps_update_alloc(up)))
		return ctx->errcode;
	ps_stampid_nm(j->id, pg->index, nm); /* stampid.c note 1 */
	annot = ps_new_dict();
	apd = ps_new_dict();
	if (!annot || !apd)
		goto oom;
	if (ps_dict_put_name(annot, "Subtype", o->freetext ? "FreeText" : "Stamp") < 0 ||
	    ps_dict_put(annot, "Rect", real_array(rect, 4)) < 0 ||
	    ps_dict_put_int(annot, "F", 4 | 128) < 0 || /* Print | Locked (Table 167) */
	    ps_dict_put_ref(annot, "P", pg->num, pg->gen) < 0)
		goto oom;
	if ((rc = put_text(ctx, annot, "NM", nm, 0)) < 0)
		goto out;
	if ((rc = put_text(ctx, annot, "M", j->date, j->date_num)) < 0 ||
	    (rc = put_text(ctx, annot, "CreationDate", j->date, j->date_num)) < 0)
		goto out;
	if (j->color_num ? ps_dict_put_ref(annot, "C", j->color_num, 0) < 0 :
	                   ps_dict_put(annot, "C", real_array(o->color, 3)) < 0)
		goto oom;
	if (*contents(j, k) &&
	    (rc = put_text(ctx, annot, "Contents", contents(j, k), j->contents_num)) < 0)
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

/* The stamp's templates (note 11): parsed, and the Bates options checked. */
static int job_templates(ps_ctx *ctx, stamp_job *j)
{
	const struct pdfstamp_stamp_opts *o = j->o;
	int rc;

	if (o->bates_digits < 1 || o->bates_digits > MAX_BATES_DIGITS || o->bates_start < 0 ||
	    o->bates_offset < 0 || o->bates_start > MAX_BATES || o->bates_offset > MAX_BATES)
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "Bates numbers start from 0 to %lld with 1 to %d digits",
		              (long long)MAX_BATES, MAX_BATES_DIGITS);
	if (o->bates_prefix && strlen(o->bates_prefix) > MAX_BATES_PREFIX)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the Bates prefix is longer than %d bytes",
		              MAX_BATES_PREFIX);
	if (o->qr) {
		if ((rc = ps_tmpl_parse(ctx, "the QR code", o->qr, &j->tqr)) < 0)
			return rc;
		j->uses |= ps_tmpl_uses(j->tqr);
	}
	if (!j->text)
		return 0;
	if ((rc = ps_tmpl_parse(ctx, "the text", j->text, &j->tmain)) < 0 ||
	    (rc = ps_tmpl_parse(ctx, "the small line", o->small ? o->small : DEFAULT_SMALL,
	                        &j->tsmall)) < 0)
		return rc;
	j->uses |= ps_tmpl_uses(j->tmain) | ps_tmpl_uses(j->tsmall);
	return 0;
}

int pdfstamp_stamp_uses(pdfstamp_ctx *ctx, const struct pdfstamp_stamp_opts *o, unsigned *uses)
{
	stamp_job j;
	int rc;

	*uses = 0;
	if (!o || o->version < 1 || o->version > PDFSTAMP_STAMP_OPTS_VERSION)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "stamp options of an unknown version");
	memset(&j, 0, sizeof j);
	j.o = o;
	if (o->version < 3) { /* no templates then */
		*uses = 0;
		return 0;
	}
	j.text = o->text ? o->text : (o->image || o->image_data || o->qr) ? NULL : "APPROVED";
	rc = job_templates(ctx, &j);
	if (rc == 0 && (j.uses & PS_TMPL_BATES))
		*uses |= PDFSTAMP_USES_BATES;
	if (rc == 0 && (j.uses & PS_TMPL_PER_PAGE))
		*uses |= PDFSTAMP_USES_PER_PAGE;
	job_free(&j);
	return rc;
}

/* The placement options (note 9). */
static int check_place(ps_ctx *ctx, const struct pdfstamp_stamp_opts *o)
{
	if ((unsigned)o->position > (unsigned)PDFSTAMP_POS_RIGHT)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "unknown stamp position %d", (int)o->position);
	if (!(fabs(o->offset[0]) <= MAX_OFFSET && fabs(o->offset[1]) <= MAX_OFFSET))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the offset must be at most %g points",
		              MAX_OFFSET);
	if (!isfinite(o->rotate))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the rotation must be a finite angle");
	if (!(o->scale >= 0 && o->scale <= MAX_SCALE))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the scale must be 0 (natural size) or in "
		              "(0, %g]", MAX_SCALE);
	if (!(o->image_opacity < 0 || (o->image_opacity > 0 && o->image_opacity <= 1)))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the image opacity must be in (0, 1], or "
		              "negative for the opacity");
	if (o->has_rect && (o->offset[0] || o->offset[1] || o->rotate || o->diagonal || o->scale))
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the offset, rotation and scale place a "
		              "stamp that has no rectangle given");
	return 0;
}

/* Note 13: marks the pages of PL that already have a stamp of J's ID
 * (stampid.c note 3), counting them in j->already.  Before the first
 * number is handed out: what it reads counts for make_skip. */
static int mark_stamped(stamp_job *j, ps_doc *doc, page_list *pl)
{
	size_t i;
	int rc;

	for (i = 0; i < pl->n; i++) {
		ps_page *pg = &pl->v[i];
		if ((rc = ps_stampid_on_page(doc, pg->annots_missing ? NULL :
		                             pg->annots ? pg->annots :
		                             ps_dict_get(pg->dict, "Annots"),
		                             j->id, pg->index, &pg->already)) < 0)
			return rc;
		j->already += pg->already;
	}
	return 0;
}

int pdfstamp_stamp(pdfstamp_doc *doc, const struct pdfstamp_stamp_opts *o,
                   const struct pdfstamp_write_opts *w, struct pdfstamp_result *res)
{
	ps_ctx *ctx = ps_doc_ctx(doc);
	ps_update up;
	stamp_job j;
	page_list pl = {NULL, 0};
	ps_pagesel sel = {NULL, 0, 0};
	int64_t npages;
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
		char *lit = NULL;
		memcpy(&cur, o, o->version < 2 ? offsetof(struct pdfstamp_stamp_opts, font)
		                               : offsetof(struct pdfstamp_stamp_opts, pages));
		cur.version = PDFSTAMP_STAMP_OPTS_VERSION;
		/* text that was literal then stays literal (note 11) */
		if (o->text && (rc = ps_tmpl_literal(ctx, o->text, &lit)) < 0)
			return rc;
		if (lit)
			cur.text = lit;
		rc = pdfstamp_stamp(doc, &cur, w, res);
		free(lit);
		return rc;
	}
	if ((rc = check_place(ctx, o)) < 0)
		return rc;
	if (!(o->opacity > 0 && o->opacity <= 1) || o->margin < 0 || !isfinite(o->margin))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "opacity must be in (0, 1] and the margin non-negative");
	for (k = 0; k < 3; k++)
		if (!(o->color[k] >= 0 && o->color[k] <= 1))
			return ps_err(ctx, PDFSTAMP_E_USAGE, "colour components must be in [0, 1]");
	if (o->image_data && !o->image_len)
		return ps_err(ctx, PDFSTAMP_E_USAGE, "the image is empty");
	if (o->id && !ps_stampid_valid(o->id))
		return ps_err(ctx, PDFSTAMP_E_USAGE,
		              "a stamp ID is 1 to 32 characters of A-Z, a-z, 0-9, _ and -");
	memset(&up, 0, sizeof up);
	memset(&j, 0, sizeof j);
	if ((rc = ps_time_parse(ctx, o->date ? o->date : "now", &j.when)) < 0)
		return rc;
	j.o = o;
	j.res = res;
	j.text = o->text ? o->text : (o->image || o->image_data || o->qr) ? NULL : "APPROVED";
	j.note = o->note ? o->note : j.text ? NULL : "";
	ps_time_pdf(&j.when, j.date);
	/* note 3: the templates, the image and the font before anything is
	 * written */
	if ((rc = job_templates(ctx, &j)) < 0)
		goto out;
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
	if (o->id) {
		memcpy(j.id, o->id, strlen(o->id) + 1);
	} else {
		uint8_t sha[32];
		if (j.img)
			ps_image_sha256(j.img, sha);
		if ((rc = ps_stampid_default(ctx, o, j.img ? sha : NULL, j.id)) < 0)
			goto out;
	}
	if (o->qr && j.img && !j.text) {
		rc = ps_err(ctx, PDFSTAMP_E_USAGE, "a QR code and an image need text to go with "
		            "them (the QR code stands beside the text, the image under it)");
		goto out;
	}
	if ((rc = ps_update_begin(doc, w, &up)) < 0)
		goto out;
	if ((rc = ps_doc_pages(doc, NULL, NULL, &npages)) < 0)
		goto out;
	if (npages == 0) {
		rc = ps_err(ctx, PDFSTAMP_E_FORMAT, "the document has no pages");
		goto out;
	}
	if ((rc = o->pages ? ps_pagesel_parse(ctx, o->pages, npages, &sel)
	                   : ps_pagesel_page(ctx, o->page, npages, &sel)) < 0)
		goto out;
	/* every target page first, then the first number (note 1; incr.c
	 * note 6) */
	if ((rc = walk_pages(doc, &sel, &pl)) < 0 || (rc = mark_stamped(&j, doc, &pl)) < 0)
		goto out;
	j.npages = npages;
	j.bates0 = o->bates_start + o->bates_offset; /* each at most MAX_BATES */
	if (res && res->version >= 3) {
		memcpy(res->id, j.id, sizeof res->id);
		res->pages_already = j.already;
		res->pages_stamped = (int64_t)pl.n - j.already;
		if (j.uses & PS_TMPL_BATES) {
			res->has_bates = 1;
			res->bates_first = j.bates0;
			res->bates_last = j.bates0 + (int64_t)pl.n - 1;
		}
	}
	if (j.already == (int64_t)pl.n) { /* note 13: nothing created, written or synced */
		if (res && res->version >= 3)
			res->skipped = 1;
		rc = 0;
		goto out;
	}
	/* a skipped file needs no permission: nothing is written (note 13) */
	if ((rc = ps_preflight_update(doc, PS_UPDATE_ANNOTATION)) < 0 ||
	    ((j.text || j.tqr) && (rc = job_texts(ctx, &j, &pl)) < 0))
		goto out;
	if (j.qr)
		job_qr_side(&j);
	if ((int64_t)pl.n - j.already > 1 &&
	    ((rc = shared_color(&up, o->color, &j.color_num)) < 0 ||
	     (rc = shared_text(&up, j.date, &j.date_num)) < 0 ||
	     (*contents(&j, 0) && j.ntexts <= 1 &&
	      (rc = shared_text(&up, contents(&j, 0), &j.contents_num)) < 0) ||
	     (o->author && (rc = shared_text(&up, o->author, &j.author_num)) < 0)))
		goto out;
	for (i = 0; i < pl.n; i++)
		if (!pl.v[i].already && (rc = stamp_page(&up, &j, i, &pl.v[i])) < 0)
			goto out;
	rc = ps_update_commit(&up, w, res);
out:
	free(pl.v);
	ps_pagesel_free(&sel);
	ps_update_free(&up);
	job_free(&j);
	return rc;
}

/* stamp.h: the walk for the modules that read every page (stamps.c). */
int ps_stamp_each_page(ps_doc *doc, ps_stamp_page_fn fn, void *arg)
{
	page_list pl = {NULL, 0};
	ps_pagesel sel;
	int64_t npages;
	size_t i;
	int rc;

	memset(&sel, 0, sizeof sel);
	if ((rc = ps_doc_pages(doc, NULL, NULL, &npages)) < 0)
		return rc;
	if (npages > 0 &&
	    (rc = ps_pagesel_page(ps_doc_ctx(doc), PDFSTAMP_PAGE_ALL, npages, &sel)) == 0 &&
	    (rc = walk_pages(doc, &sel, &pl)) == 0) {
		for (i = 0; i < pl.n && rc == 0; i++) {
			const ps_page *pg = &pl.v[i];
			ps_obj *a = ps_dict_get(pg->dict, "Annots");
			if (pg->annots_missing)
				a = NULL;
			else if (a && a->kind == PS_REF)
				a = pg->annots;
			rc = fn(arg, pg->index, pg->num, pg->gen, pg->dict, a);
		}
	}
	free(pl.v);
	ps_pagesel_free(&sel);
	return rc;
}
