#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/place.sh - where `pdfstamp stamp` puts the stamp: the nine
# --position anchors, --offset, --rotate DEG|diagonal, --scale, and
# --opacity / --image-opacity (issue 32), on the page as shown.
#
# The input (tests/e2e/fixtures/place.py make, encrypted by qpdf, AES-256)
# has four pages with /Rotate 0, 90, 180 and 270 and a CropBox offset from
# the MediaBox.  Each case stamps all four pages in one update and
# place.py check renders them with MuPDF and poppler at 72 dpi (a pixel is
# a point) and compares against a render of the input: the bounding box of
# the stamp's ink must be where a model of the placement written in the
# checker puts it, within 3 pixels; a turned stamp's top corner must be
# where a counter-clockwise turn puts it; /Rect (qpdf --show-object with
# the password) must be the model's bounding box in default user space,
# /BBox the model's size and /Matrix a pure rotation by the angle plus
# /Rotate.  pdf.js (when installed) reads the turned stamps' /Rect and
# appearance as qpdf does.  Then: the opacities, read back as pixel colours of both
# renderers; a plain stamp writes what it wrote before these options (no
# /Matrix at /Rotate 0, today's quarter turn at /Rotate 90, no /ExtGState,
# the same size as with the options at their defaults given); usage errors.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdftoppm

PY=$TOP_SRCDIR/tests/e2e/fixtures/place.py
UPW=$T/user.pw
printf 'user pw\n' >"$UPW"
python3 "$PY" make "$T/plain.pdf"
IN=$T/in.pdf
qpdf --encrypt 'user pw' 'owner pw' 256 -- "$T/plain.pdf" "$IN" || {
	fail "qpdf encrypts the fixture"
	finish
}
python3 "$PY" render "$IN" "$UPW" "$T/before"

COMMON=(--password-file "$UPW" --page all --color 0000ff --text PLACED --date 2024-05-06T07:08:09Z)

# place NAME "STAMP OPTIONS" MODEL-KEY=VALUE...: stamp, then check every page.
n=0
place() {
	local name=$1 opts=$2 o
	shift 2
	n=$((n + 1))
	o=$T/c$n.pdf
	LAST=$o
	# shellcheck disable=SC2086
	run "$PDFSTAMP" stamp --json "${COMMON[@]}" $opts -o "$o" "$IN"
	check_status 0 "$name: stamp $opts"
	[ "$RC" = 0 ] || return
	cp "$T/out" "$o.json"
	checker_feed "$PY" check "$o" "$UPW" "$o.json" "$T/before" "$name" natural="$T/natural" "$@"
}

# The default (top-right) first: it records the natural size the others
# are computed from.
place "default" "" save=1
for pos in top-left top left center right bottom-left bottom bottom-right; do
	place "$pos" "--position $pos" position=$pos
done
place "centre" "--position centre" position=center
place "top-left offset" "--position top-left --offset 20,-30" position=top-left offset=20,-30
place "center offset" "--position center --offset -50,40.5" position=center offset=-50,40.5
place "bottom-right offset" "--position bottom-right --offset -10,15 --margin 10" \
	position=bottom-right offset=-10,15 margin=10
place "rotate 30" "--position center --rotate 30" position=center rotate=30
place "rotate 30 top-left" "--position top-left --rotate 30" position=top-left rotate=30
place "rotate -120 right" "--position right --rotate -120" position=right rotate=-120
place "diagonal" "--rotate diagonal --position center" position=center rotate=diagonal
DIAG=$LAST
place "diagonal bottom-left" "--rotate diagonal --position bottom-left --offset 5,5" \
	position=bottom-left rotate=diagonal offset=5,5
place "scale" "--scale 0.5 --position top" position=top scale=0.5
place "scale diagonal" "--scale 0.7 --rotate diagonal --position center" \
	position=center scale=0.7 rotate=diagonal
place "scale shrunk" "--scale 1 --position bottom --rotate 30" position=bottom scale=1 rotate=30

# An offset off the page: a warning, and the stamp goes where asked.
place "offset off the page" "--position top-right --offset 100,0" position=top-right offset=100,0
check_grep 'reaches outside the page as shown' "$T/err" "an offset off the page warns"

# pdf.js, a third reader (Debian's libjs-pdf, when installed): the turned
# stamps of the diagonal case have an appearance and the /Rect qpdf reads.
PDFJS=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}
diag=$DIAG
if command -v node >/dev/null 2>&1 && [ -f "$PDFJS" ] && [ -f "$diag" ]; then
	for p in 1 2 3 4; do
		node "$TOP_SRCDIR/tests/e2e/fixtures/pdfjs-check.js" "$diag" 'user pw' "$p" >"$T/pj.json" 2>"$T/pj.err"
		a=$(jget "$diag.json" "d[\"objects\"][$((p - 1))]")
		want=$(qpdf --password-file="$UPW" --show-object="$a" "$diag" |
			python3 -c 'import re, sys; print([round(float(v), 1) for v in re.search(r"/Rect \[([^]]*)\]", sys.stdin.read()).group(1).split()])')
		check_eq "$(jget "$T/pj.json" '[round(v, 1) for v in d["annots"][0]["rect"]] if d["annots"][0]["hasAppearance"] else None')" \
			"$want" "diagonal, page $p: pdf.js reads the appearance and qpdf's /Rect"
	done
else
	skip "pdf.js (node and $PDFJS) for the turned stamps"
fi

# ---------------------------------------------------------------------------
# Opacities, as pixel colours: the image (red) and the frame (blue) of a
# stamp in a rectangle of page 1 (/Rotate 0), so the pixels are known.
python3 - "$T/red.png" <<'PY'
import struct, sys, zlib
w, h = 40, 20
raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))
def ch(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + ch(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                              + ch(b"IDAT", zlib.compress(raw)) + ch(b"IEND", b""))
PY
# pixel PPM X Y: "R G B"
pixel() {
	python3 - "$@" <<'PY'
import re, sys
d = open(sys.argv[1], "rb").read()
m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", d)
w, o = int(m.group(1)), m.end()
x, y = int(sys.argv[2]), int(sys.argv[3])
print(" ".join(str(v) for v in d[o + 3 * (y * w + x):o + 3 * (y * w + x) + 3]))
PY
}
# near "R G B" "R G B": within 6 levels each
near() {
	python3 -c 'import sys; a, b = [list(map(int, s.split())) for s in sys.argv[1:3]]; sys.exit(0 if all(abs(p - q) <= 6 for p, q in zip(a, b)) else 1)' "$1" "$2"
}
# The rectangle 200,300,400,400 is at pixels 160..360 x 360..460 of the
# crop box; the image (150 x 75 pt, centred) covers x 185..335, the text
# X its middle: (200, 410) is image, (162, 410) the outer frame line.
while IFS='|' read -r opts img frame; do
	o=$T/op.pdf
	# shellcheck disable=SC2086
	run "$PDFSTAMP" stamp --password-file "$UPW" --image "$T/red.png" --text X --color 0000ff \
		--rect 200,300,400,400 $opts -o "$o" "$IN"
	check_status 0 "stamp --image $opts"
	[ "$RC" = 0 ] || continue
	mutool draw -q -p 'user pw' -r 72 -c rgb -o "$T/op.mu.ppm" "$o" 1 2>/dev/null
	pdftoppm -upw 'user pw' -r 72 -f 1 -l 1 -singlefile -cropbox "$o" "$T/op.pp"
	for k in mu pp; do
		got=$(pixel "$T/op.$k.ppm" 200 410)
		if near "$got" "${img//,/ }"; then ok "$opts ($k): the image is drawn at ${img//,/ }"
		else fail "$opts ($k): the image is drawn at ${img//,/ }" "got $got"; fi
		got=$(pixel "$T/op.$k.ppm" 162 410)
		if near "$got" "${frame//,/ }"; then ok "$opts ($k): the frame is drawn at ${frame//,/ }"
		else fail "$opts ($k): the frame is drawn at ${frame//,/ }" "got $got"; fi
	done
done <<'EOF'
--opacity 1|255,0,0|0,0,255
--opacity 0.5|255,128,128|128,128,255
--opacity 0.5 --image-opacity 1|255,0,0|128,128,255
--image-opacity 0.3|255,179,179|0,0,255
--opacity 0.6 --image-opacity 0.6|255,102,102|102,102,255
EOF

# ---------------------------------------------------------------------------
# A plain stamp writes what it wrote before: no /Matrix on the upright
# page, today's quarter turn on the /Rotate 90 page, no /ExtGState and no
# gs operator, and the same size as with the new options at their
# defaults given (the recorded size of main before issue 32 is the same:
# 1441 bytes for page 1 of this fixture on qpdf 11.3).
run "$PDFSTAMP" stamp --json "${COMMON[@]}" -o "$T/plain-out.pdf" "$IN"
check_status 0 "plain stamp"
cp "$T/out" "$T/plain.json"
run "$PDFSTAMP" stamp --json "${COMMON[@]}" --position top-right --offset 0,0 --rotate 0 \
	-o "$T/plain-defaults.pdf" "$IN"
check_status 0 "plain stamp with the placement defaults given"
check_eq "$(jget "$T/out" 'd["bytes_appended"]')" "$(jget "$T/plain.json" 'd["bytes_appended"]')" \
	"the placement defaults given change nothing (same update size)"
for i in 0 1; do
	a=$(jget "$T/plain.json" "d[\"objects\"][$i]")
	ap=$(qpdf --password-file="$UPW" --show-object="$a" "$T/plain-out.pdf" | sed -n 's|.*/N \([0-9]*\) 0 R.*|\1|p')
	qpdf --password-file="$UPW" --show-object="$ap" "$T/plain-out.pdf" >"$T/ap$i.dict"
	qpdf --password-file="$UPW" --show-object="$ap" --filtered-stream-data "$T/plain-out.pdf" >"$T/ap$i.data"
	check_no_grep '/ExtGState' "$T/ap$i.dict" "plain stamp, page $((i + 1)): no /ExtGState"
	check_no_grep ' gs' "$T/ap$i.data" "plain stamp, page $((i + 1)): no gs operator"
done
check_no_grep '/Matrix' "$T/ap0.dict" "plain stamp on the upright page: no /Matrix"
check_grep '/Matrix \[ 0 1 -1 0 0 0 \]' "$T/ap1.dict" "plain stamp on the /Rotate 90 page: /Matrix [0 1 -1 0 0 0]"

# ---------------------------------------------------------------------------
# Usage errors (exit 2), nothing written.
for bad in "--rotate sideways" "--rotate 1e9" "--scale 0" "--scale -1" "--scale 11" "--offset 1" \
	"--offset 1,2,3" "--offset 1e8,0" "--image-opacity 0" "--image-opacity 1.5" \
	"--position middle" "--position Top" "--rect 100,100,300,200 --rotate 30" \
	"--rect 100,100,300,200 --scale 0.5" "--rect 100,100,300,200 --offset 1,1" \
	"--rotate diagonal --rect 100,100,300,200"; do
	# shellcheck disable=SC2086
	run "$PDFSTAMP" stamp --password-file "$UPW" $bad -o "$T/bad.pdf" "$IN"
	check_status 2 "$bad is a usage error"
	check_true test ! -e "$T/bad.pdf" "$bad: nothing written"
done
# too small even shrunk: a usage error naming the page
run "$PDFSTAMP" stamp --password-file "$UPW" --margin 269 --rotate 45 -o "$T/bad.pdf" "$IN"
check_status 2 "a page too small for the turned stamp even shrunk"
check_grep 'page 1 is too small' "$T/err" "the message names the page"

finish
