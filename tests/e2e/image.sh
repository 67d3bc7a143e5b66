#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/image.sh - image stamps (`pdfstamp stamp --image`, image.c) in
# real readers.
#
# The images are written by tests/e2e/fixtures/images.py (PNG in several
# colour types, JPEG made of flat 8x8 blocks so that colours are exact):
#   - qpdf decrypts what was written: a JPEG's bytes unchanged with its
#     colour space (and /Decode [1 0 1 0 1 0 1 0] for Adobe CMYK), the RGB
#     samples and /SMask alpha of a PNG with transparency;
#   - pdf.js (when node and libjs-pdf are installed) decodes the JPEGs'
#     colours (Adobe CMYK not inverted) and a PNG's alpha from its /SMask;
#   - MuPDF (mutool draw) and poppler (pdftoppm) renders at 72 dpi: the
#     quadrant colours of RGB (baseline and progressive), gray and
#     inverted-CMYK JPEGs; a PNG disc with transparent corners stamped over
#     the RGB JPEG stamp shows the disc's colour in its middle and the
#     JPEG's quadrants (what lies under it) in its corners, for RGBA 8-bit,
#     RGBA 16-bit interlaced, palette + tRNS and gray + alpha;
#   - a missing image is a usage error (exit 2) naming it; nothing written.
# (The hostile images are in tests/e2e/malformed.sh.)

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdftoppm

IMG=$T/img
FIX=$TOP_SRCDIR/tests/e2e/fixtures/images.py
python3 "$FIX" valid "$IMG" >/dev/null || { fail "writing the test images"; finish; }
S=$TOP_SRCDIR/samples
PW=$S/user.pw
IN=$S/r6-table.pdf
RECT=100,100,300,300   # the 64 x 64 images fill it: 1 image pixel = 3.125 pt

# render PDF NAME: page 1 at 72 dpi by both readers: $T/NAME-mu.pnm, $T/NAME-pp.ppm
render() {
	run mutool draw -q -p "$(head -n 1 "$PW")" -r 72 -c rgb -o "$T/$2-mu.pnm" "$1" 1
	check_status 0 "$2: mutool draw renders page 1"
	run pdftoppm -upw "$(head -n 1 "$PW")" -r 72 -f 1 -l 1 -singlefile "$1" "$T/$2-pp"
	check_status 0 "$2: pdftoppm renders page 1"
}

# expect NAME DESC SPEC...: the pixels of both renders (images.py check-render)
expect() {
	local name=$1 desc=$2 r
	shift 2
	for r in mu.pnm pp.ppm; do
		if [ -s "$T/$name-$r" ]; then
			checker_feed "$FIX" check-render "$T/$name-$r" "$desc (${r%.*})" "$@"
		else
			fail "$desc (${r%.*}): no render"
		fi
	done
}

# the quadrants of the RGB JPEG in the stamp's rectangle (top-left, top-right,
# bottom-left, bottom-right; images.py RED GREEN BLUE YELLOW)
QUAD=(150,250=220,20,20 250,250=20,160,20 150,150=20,20,220 250,150=240,220,0)

# ---- JPEG: passed through, colours ------------------------------------------
for spec in "quad-rgb.jpg /DeviceRGB" "quad-rgb-progressive.jpg /DeviceRGB" "quad-gray.jpg /DeviceGray" \
	"quad-cmyk-adobe.jpg /DeviceCMYK"; do
	set -- $spec
	name=${1%.jpg}
	run "$PDFSTAMP" stamp --password-file "$PW" --image "$IMG/$1" --rect "$RECT" -o "$T/$name.pdf" "$IN"
	check_status 0 "$1: stamp --image"
	[ -f "$T/$name.pdf" ] || continue
	checker_feed "$FIX" check-objects "$T/$name.pdf" "$PW" "$IMG/$1" "$2"
	render "$T/$name.pdf" "$name"
done
expect quad-rgb "RGB JPEG quadrants" "${QUAD[@]}"
expect quad-rgb-progressive "progressive RGB JPEG quadrants" "${QUAD[@]}"
expect quad-gray "gray JPEG quadrants" 150,250=30,30,30 250,250=90,90,90 150,150=160,160,160 250,150=230,230,230
# cyan, magenta, yellow, black: stored inverted under the Adobe marker; the
# readers convert CMYK differently (MuPDF naively here, poppler through
# its profile), so the tolerance of 24 is widened by testing the
# channels that tell an inverted image from a right one
for r in mu.pnm pp.ppm; do
	f=$T/quad-cmyk-adobe-$r
	[ -s "$f" ] || { fail "CMYK (${r%.*}): no render"; continue; }
	python3 - "$f" "${r%.*}" "$FIX" >"$T/cmyk.out" <<'PY'
import sys
sys.path.insert(0, __import__("os").path.dirname(sys.argv[3]))
import images
w, h, px = images.read_pnm(sys.argv[1])
def at(x, y):
    k = ((h - 1 - y) * w + x) * 3
    return tuple(px[k:k + 3])
for (x, y), name, test in (((150, 250), "cyan", lambda r, g, b: r < 80 and g > 120 and b > 180),
                           ((250, 250), "magenta", lambda r, g, b: r > 180 and g < 80 and b > 80),
                           ((150, 150), "yellow", lambda r, g, b: r > 200 and g > 180 and b < 80),
                           ((250, 150), "black", lambda r, g, b: max(r, g, b) < 80)):
    c = at(x, y)
    print("%s\tAdobe CMYK JPEG (%s): the %s quadrant is %s\tgot %s" % ("OK" if test(*c) else "FAIL", sys.argv[2], name, name, c))
PY
	while IFS=$'\t' read -r v desc detail; do
		if [ "$v" = OK ]; then ok "$desc"; else fail "$desc" "$detail"; fi
	done <"$T/cmyk.out"
done

# ---- PNG with transparency over the JPEG stamp --------------------------------
if [ -f "$T/quad-rgb.pdf" ]; then
	for png in disc-rgba.png disc-rgba16-interlaced.png disc-palette-trns.png disc-gray-alpha.png; do
		name=${png%.png}
		run "$PDFSTAMP" stamp --password-file "$PW" --image "$IMG/$png" --rect "$RECT" -o "$T/$name.pdf" \
			"$T/quad-rgb.pdf"
		check_status 0 "$png: stamp --image over the JPEG stamp"
		[ -f "$T/$name.pdf" ] || continue
		[ "$png" = disc-rgba.png ] && checker_feed "$FIX" check-objects "$T/$name.pdf" "$PW" "$IMG/$png" /DeviceRGB
		render "$T/$name.pdf" "$name"
		mid=20,40,200
		[ "$png" = disc-gray-alpha.png ] && mid=60,60,60
		# the disc's middle (left and right of the centre, clear of the
		# quadrant edges); the corners (inside the rectangle, outside the
		# disc) show the JPEG's quadrants under them
		expect "$name" "$png: opaque middle and transparent corners" 180,200=$mid 220,200=$mid \
			105,295=220,20,20 295,295=20,160,20 105,105=20,20,220 295,105=240,220,0
	done
	# and the unstamped page still shows where there is no stamp at all
	expect disc-rgba "disc-rgba.png: outside the stamps" "320,320=page:$T/quad-rgb-mu.pnm"
else
	fail "no JPEG stamp to put the PNG stamps on"
fi

# ---- pdf.js: the samples it decodes (RGB JPEG, Adobe CMYK, PNG + /SMask) --------
PDFJS_BUILD=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}
if command -v node >/dev/null 2>&1 && [ -f "$PDFJS_BUILD" ]; then
	PJ=$TOP_SRCDIR/tests/e2e/fixtures/pdfjs-image.js
	# pdfjs NAME DESC SPEC...: the last image pdf.js paints on page 1 of $T/NAME.pdf
	pdfjs() {
		local name=$1 desc=$2
		shift 2
		if [ ! -f "$T/$name.pdf" ]; then
			fail "$desc (pdf.js): no output to open"
			return
		fi
		run env PDFJS="$PDFJS_BUILD" node "$PJ" "$T/$name.pdf" "$(head -n 1 "$PW")"
		check_status 0 "$desc: pdf.js opens the file and decodes its images"
		cp "$T/out" "$T/$name.pdfjs"
		checker_feed "$FIX" check-pdfjs "$T/$name.pdfjs" "$desc" "$@"
	}
	pdfjs quad-rgb "RGB JPEG" 16,16=220,20,20 48,16=20,160,20 16,48=20,20,220 48,48=240,220,0
	pdfjs quad-rgb-progressive "progressive RGB JPEG" 16,16=220,20,20 48,48=240,220,0
	# (pdf.js converts CMYK with its own polynomial: cyan 0,185,242 ...)
	pdfjs quad-cmyk-adobe "Adobe CMYK JPEG, not inverted" 16,16=0,180,240 48,16=240,40,150 \
		16,48=255,235,60 48,48=40,40,40
	pdfjs disc-rgba "PNG with transparency" 32,32=20,40,200,255 0,0=20,40,200,0
	pdfjs disc-palette-trns "palette PNG with tRNS" 32,32=20,40,200,255 0,0=255,255,255,0
else
	skip "pdf.js (node and $PDFJS_BUILD) is not installed"
fi

# ---- a missing image -----------------------------------------------------------
run "$PDFSTAMP" stamp --password-file "$PW" --image "$T/no-such.png" -o "$T/missing.pdf" "$IN"
check_status 2 "a missing image: usage error"
check_grep 'no-such\.png' "$T/err" "a missing image: the message names it"
check_true test ! -e "$T/missing.pdf" "a missing image: no output"

finish
