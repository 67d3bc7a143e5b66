#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/qr.sh - QR codes in stamps (`pdfstamp stamp --qr`, src/qr.c).
#
# What a phone would do, with zbar (zbarimg --raw) as the phone:
#   - a URL of 60 characters, and UTF-8 strings that are not ASCII (a
#     short German one, which zbar reads as Shift JIS unless the code
#     says UTF-8, and one of Latin, CJK and Arabic), stamped alone and
#     beside the text on an AES-256 sample and on an RC4-128 file made by
#     qpdf, are rendered at 150 dpi by poppler (pdftoppm) and MuPDF
#     (mutool draw), and zbarimg must read back exactly the string;
#   - so must it at each error-correction level, with --page all on
#     every page of the RC4 file (one shared appearance), in a --rect
#     that is not square, on a page turned by /Rotate 90 (upright, as
#     zbar reports), turned by --rotate 30, scaled by --scale 0.5, and at
#     a level's very limit (version 40);
#   - what qpdf decrypts is vector: the update adds no image XObject, the
#     appearance draws the code as rectangles filled once on a white
#     square, with modules of at least 1.5 pt, left of the text; it is
#     deflated (the stamp of the URL appends under 2.5 KB); pdf.js, when
#     installed, finds those rectangles and paints no image;
#   - the string is a template: {file} and {page} give each page of a
#     --page all its own code, {bates} and {{ expand as in the text, and
#     an unknown variable is a usage error;
#   - a string one byte too long for its level is refused (exit 2, the
#     limit named) with the file unchanged (same hash) and no output file;
#     a bad --qr-level, an empty --qr, and --qr with --image but no
#     --text are usage errors;
#   - libqrencode is opened only for a QR code (LD_DEBUG=files), and one
#     that cannot be loaded fails the stamp with exit 1, nothing written.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need qpdf
need mutool
need pdftoppm
need zbarimg
need python3

S=$TOP_SRCDIR/samples
PW=$S/user.pw
UP=$(head -n 1 "$PW")
AES=$S/r6-table.pdf
RC4=$T/rc4.pdf
WEAK=()
qpdf --help=--allow-weak-crypto >/dev/null 2>&1 && WEAK=(--allow-weak-crypto)
run qpdf "${WEAK[@]}" --encrypt "$UP" "$(head -n 1 "$S/owner.pw")" 128 --use-aes=n -- \
	"$S/plain-3page.pdf" "$RC4"
[ "$RC" = 0 ] || [ "$RC" = 3 ] || { fail "qpdf writes an RC4-128 file" "$(cat "$T/err")"; finish; }
qpdf --password-file="$PW" --show-encryption "$RC4" >"$T/enc" 2>&1
check_grep '^R = 3$' "$T/enc" "the RC4 input is RC4-128 (R 3, which has no AES)"

URL='https://dms.example.org/approve?file=report-2026.pdf&page=12'
SHORT='Größe geprüft'
MIXED='Genehmigt: Größe – 承認 / موافق'
check_eq "${#URL}" 60 "the URL has 60 characters"

# decode PDF PAGE NAME: page PAGE at 150 dpi by poppler and MuPDF, each read
# by zbarimg; sets DEC_PP and DEC_MU (what zbarimg read, or <none>)
decode() {
	local pdf=$1 page=$2 name=$3
	DEC_PP='<none>'
	DEC_MU='<none>'
	if pdftoppm -upw "$UP" -r 150 -f "$page" -l "$page" -singlefile "$pdf" "$T/$name-pp" \
		2>/dev/null; then
		DEC_PP=$(zbarimg --raw -q "$T/$name-pp.ppm" 2>/dev/null) || DEC_PP='<none>'
	fi
	if mutool draw -q -p "$UP" -r 150 -o "$T/$name-mu.png" "$pdf" "$page" 2>/dev/null; then
		DEC_MU=$(zbarimg --raw -q "$T/$name-mu.png" 2>/dev/null) || DEC_MU='<none>'
	fi
	rm -f "$T/$name-pp.ppm" "$T/$name-mu.png"
}

# reads PDF PAGE NAME STRING DESC: both renders read back as STRING
reads() {
	decode "$1" "$2" "$3"
	check_eq "$DEC_PP" "$4" "$5: zbarimg reads it from poppler's 150 dpi render"
	check_eq "$DEC_MU" "$4" "$5: zbarimg reads it from MuPDF's 150 dpi render"
}

# stamp NAME ARGS...: pdfstamp stamp ARGS -o $T/NAME.pdf, exit 0 expected
stamp() {
	local name=$1
	shift
	run "$PDFSTAMP" stamp --password-file "$PW" "$@" -o "$T/$name.pdf"
	check_status 0 "$name: stamp"
}

# ---- alone and beside the text, on AES-256 and RC4 --------------------------
n=0
for in in aes rc4; do
	f=$AES
	[ $in = rc4 ] && f=$RC4
	for str in "$URL" "$SHORT" "$MIXED"; do
		n=$((n + 1))
		stamp "$in-alone-$n" --qr "$str" "$f"
		reads "$T/$in-alone-$n.pdf" 1 "$in-alone-$n" "$str" "$in, QR alone, string $n"
		stamp "$in-text-$n" --text APPROVED --qr "$str" "$f"
		reads "$T/$in-text-$n.pdf" 1 "$in-text-$n" "$str" "$in, QR beside the text, string $n"
	done
done
# beside the text, the text is still there for both readers
run pdftotext -upw "$UP" -f 1 -l 1 "$T/rc4-text-4.pdf" -
check_grep 'APPROVED' "$T/out" "poppler extracts the text beside the QR code (RC4)"
run mutool draw -q -p "$UP" -F txt "$T/aes-text-1.pdf" 1
check_grep 'APPROVED' "$T/out" "MuPDF extracts the text beside the QR code (AES-256)"

# ---- every level; --page all; a --rect that is not square --------------------
for lv in L M Q H; do
	stamp "level-$lv" --qr-level "$lv" --text "Level $lv" --qr "$MIXED" "$AES"
	reads "$T/level-$lv.pdf" 1 "level-$lv" "$MIXED" "level $lv"
done
stamp all-pages --page all --position bottom-left --qr "$URL" "$RC4"
for p in 1 2 3; do
	reads "$T/all-pages.pdf" "$p" "all-$p" "$URL" "--page all on RC4, page $p"
done
stamp rect --rect 300,500,500,600 --qr "$URL" "$AES"
reads "$T/rect.pdf" 1 rect "$URL" "a --rect of 200 x 100 pt"
# (small modules scan badly, but the stamp says so)
run "$PDFSTAMP" stamp --password-file "$PW" --rect 100,100,130,130 --qr "$URL" -o "$T/tiny.pdf" "$AES"
check_status 0 "a --rect of 30 pt: stamped"
check_grep 'warning: the QR code.s modules are 0\.[0-9]+ pt wide.*1\.5 pt' "$T/err" \
	"a --rect of 30 pt: a warning names the module size"

# on a page turned by /Rotate 90 the code stands upright as the page is shown
# (zbar says which way up it found it)
run qpdf --rotate=+90:1 --encrypt "$UP" "$(head -n 1 "$S/owner.pw")" 256 -- "$S/plain-2page.pdf" \
	"$T/rot.pdf"
check_status 0 "qpdf writes an AES-256 file with page 1 turned by 90 degrees"
stamp rotated --text APPROVED --qr "$URL" "$T/rot.pdf"
reads "$T/rotated.pdf" 1 rotated "$URL" "/Rotate 90"
pdftoppm -upw "$UP" -r 150 -f 1 -l 1 -singlefile "$T/rotated.pdf" "$T/rot-pp" 2>/dev/null
mutool draw -q -p "$UP" -r 150 -o "$T/rot-mu.png" "$T/rotated.pdf" 1 2>/dev/null
pdftoppm -upw "$UP" -r 150 -f 1 -l 1 -singlefile "$T/aes-text-1.pdf" "$T/unturned" 2>/dev/null
for r in rot-pp.ppm rot-mu.png unturned.ppm; do
	check_eq "$(zbarimg --xml -q "$T/$r" 2>/dev/null | grep -o "orientation='[A-Z]*'")" \
		"orientation='UP'" "$r: zbar finds the code upright"
done

# turned with the stamp (--rotate), and scaled with it (--scale)
stamp turned --text APPROVED --qr "$URL" --rotate 30 --position center "$AES"
reads "$T/turned.pdf" 1 turned "$URL" "--rotate 30"
stamp scaled --text APPROVED --qr "$URL" --scale 0.5 --position bottom "$RC4"
reads "$T/scaled.pdf" 1 scaled "$URL" "--scale 0.5 on RC4"

# ---- at the limit: version 40 -------------------------------------------------
BIG=$(python3 -c 'import sys; print(("https://dms.example.org/" * 60)[:1273])')
stamp limit-H --qr-level H --qr "$BIG" "$AES"
reads "$T/limit-H.pdf" 1 limit-H "$BIG" "1273 bytes at level H (version 40, the limit)"

# ---- vector, white square, modules, place ----------------------------------
# the appearance is deflated: the 60-character URL alone costs under 2.5 KB
# (its runs are 3.8 KB as written; a plain stamp is 1.4 KB)
run "$PDFSTAMP" stamp --password-file "$PW" --json --qr "$URL" -o "$T/size.pdf" "$AES"
check_status 0 "size: stamp --json"
b=$(jget "$T/out" 'd["bytes_appended"]')
check_true test "$b" -lt 2500 "size: a QR stamp of the URL appends $b bytes, under 2500"
cat >"$T/check.py" <<'PY'
import base64, json, re, subprocess, sys

pdf, pw, base, mode = sys.argv[1:5]

def objects(path):
    out = subprocess.run(["qpdf", "--password-file=" + pw, "--json=2", "--json-stream-data=inline",
                          "--decode-level=generalized", path, "-"], capture_output=True, check=False)
    return json.loads(out.stdout)["qpdf"][1]

def say(ok, desc, detail=""):
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))

new, old = objects(pdf), objects(base)
added = {k: v for k, v in new.items() if k.startswith("obj:") and old.get(k) != v}
images = [k for k, v in added.items() if isinstance(v, dict) and "stream" in v
          and v["stream"]["dict"].get("/Subtype") == "/Image"]
say(not images, "%s: the update adds no image XObject" % mode, " ".join(images))
forms = [v["stream"] for v in added.values() if isinstance(v, dict) and "stream" in v
         and v["stream"]["dict"].get("/Subtype") == "/Form"]
say(len(forms) == 1, "%s: one appearance form" % mode, str(len(forms)))
if not forms:
    sys.exit(0)
form = forms[0]
res = form["dict"].get("/Resources", {})
say("/XObject" not in res, "%s: the appearance uses no XObject" % mode, str(res))
data = base64.b64decode(form.get("data", "")).decode("latin-1")
say(" Do" not in data, "%s: the appearance paints no XObject (Do)" % mode)
m = re.search(r"q ([0-9.]+) 0 0 ([0-9.]+) ([0-9.-]+) ([0-9.-]+) cm\n1 g 0 0 (\d+) (\d+) re f\n0 g\n"
              r"((?:\d+ \d+ \d+ 1 re[ \n])+)f Q\n", data)
say(m is not None, "%s: the code is a white square, then rectangles filled once" % mode,
    data[:300])
if not m:
    sys.exit(0)
mod, n = float(m.group(1)), int(m.group(5))
runs = [tuple(map(int, r.split()[:3])) for r in re.findall(r"\d+ \d+ \d+ 1 re", m.group(7))]
say(mod >= 1.5, "%s: modules of at least 1.5 pt" % mode, str(mod))
print("#runs %d" % len(runs))
# the quiet zone: 4 light modules on every side
inside = all(4 <= x and x + w <= n - 4 and 4 <= y < n - 4 for x, y, w in runs)
say(inside, "%s: no dark module in the quiet zone of 4 modules" % mode)
# upright, not mirrored (zbar reads a mirrored code, a phone may not): the
# finder patterns' outer rows are runs of exactly 7 (a light separator
# beside them) at the top left, top right and bottom left, not bottom right
fin = {(4, n - 5, 7), (n - 11, n - 5, 7), (4, 4, 7)}
say(fin <= set(runs) and (n - 11, 4, 7) not in runs,
    "%s: finder patterns top left, top right and bottom left" % mode)
# horizontal runs are merged: no run ends where another of its row begins
ends = {(x + w, y) for x, y, w in runs}
say(not any((x, y) in ends for x, y, w in runs), "%s: horizontal runs are merged" % mode)
bbox = form["dict"]["/BBox"]
x0, y0, side = float(m.group(3)), float(m.group(4)), mod * n
if mode == "alone":
    say(abs(side - min(bbox[2], bbox[3])) < 0.01 * n and "BT" not in data and " S\n" not in data,
        "alone: the code fills the box, no text, no frame", "%s %s" % (side, bbox))
else:
    tx = [float(v) for v in re.findall(r"BT /F1 [0-9.]+ Tf ([0-9.]+) [0-9.]+ Td", data)]
    say(tx and x0 + side <= min(tx) + 0.01, "text: the code stands left of the text",
        "%s + %s vs %s" % (x0, side, tx))
    say(y0 > 0 and y0 + side < bbox[3], "text: the code lies inside the box", "%s %s" % (y0, bbox))
PY
checker_feed "$T/check.py" "$T/aes-alone-1.pdf" "$PW" "$AES" alone
RUNS=$(sed -n 's/^#runs //p' "$T/extra")
checker_feed "$T/check.py" "$T/rc4-text-4.pdf" "$PW" "$RC4" text

# pdf.js (a third reader, when installed) decrypts and inflates the same
# appearance: one rectangle more than the runs (the white square) over the
# page's own, and no image painted
PDFJS=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}
if command -v node >/dev/null 2>&1 && [ -f "$PDFJS" ] && [ -n "$RUNS" ]; then
	cat >"$T/pj.js" <<'JS'
"use strict";
const fs = require("fs");
const pdfjsLib = require(process.env.PDFJS);
(async () => {
  const data = new Uint8Array(fs.readFileSync(process.argv[2]));
  const doc = await pdfjsLib.getDocument({ data, password: process.argv[3], isEvalSupported: false,
                                            verbosity: 0 }).promise;
  const page = await doc.getPage(1);
  const mode = pdfjsLib.AnnotationMode ? pdfjsLib.AnnotationMode.ENABLE : 1;
  const ops = await page.getOperatorList({ annotationMode: mode });
  const O = pdfjsLib.OPS;
  let rects = 0, images = 0;
  ops.fnArray.forEach((fn, i) => {
    if (fn === O.constructPath)
      rects += ops.argsArray[i][0].filter(x => x === O.rectangle).length;
    if (fn === O.paintImageXObject || fn === O.paintInlineImageXObject ||
        fn === O.paintImageMaskXObject)
      images++;
  });
  console.log(rects + " " + images);
})().catch(e => { console.error("pdfjs: " + (e && e.message)); process.exit(1); });
JS
	base=$(PDFJS=$PDFJS node "$T/pj.js" "$AES" "$UP" 2>"$T/pj.err")
	got=$(PDFJS=$PDFJS node "$T/pj.js" "$T/aes-alone-1.pdf" "$UP" 2>>"$T/pj.err")
	check_eq "$got" "$((${base% *} + 1 + RUNS)) 0" \
		"pdf.js: the QR stamp adds the white square and $RUNS runs as rectangles, no image"
else
	skip "pdf.js (node and libjs-pdf) is not installed"
fi

# ---- refusals: nothing written -----------------------------------------------
mkdir -p "$T/k"
cp "$AES" "$T/k/keep.pdf"
H0=$(sha256sum <"$T/k/keep.pdf")
LONG=$(head -c 2332 /dev/zero | tr '\0' a)
run "$PDFSTAMP" stamp -i --password-file "$PW" --qr "$LONG" "$T/k/keep.pdf"
check_status 2 "2332 bytes at level M: refused"
check_grep '2332 bytes; a QR code of level M holds at most 2331 bytes' "$T/err" \
	"2332 bytes at level M: the message names the limit"
check_eq "$(sha256sum <"$T/k/keep.pdf")" "$H0" "2332 bytes at level M: the file is unchanged"
check_eq "$(ls -A "$T/k")" keep.pdf "2332 bytes at level M: nothing else in its directory"
run "$PDFSTAMP" stamp --dry-run --password-file "$PW" --qr "$LONG" -o "$T/never.pdf" "$AES"
check_status 2 "2332 bytes at level M: --dry-run refuses it as the real run does"
check_true test ! -e "$T/never.pdf" "2332 bytes at level M, --dry-run: no output file"
stamp limit-M --qr "${LONG:1}" "$AES"
check_true test -s "$T/limit-M.pdf" "2331 bytes at level M: stamped"
LONGU="é$(head -c 1271 /dev/zero | tr '\0' a)"
run "$PDFSTAMP" stamp --password-file "$PW" --qr-level H --qr "$LONGU" -o "$T/never.pdf" "$AES"
check_status 2 "1273 bytes of UTF-8 (not ASCII) at level H: refused"
check_grep 'holds at most 1272 bytes of UTF-8' "$T/err" "1273 bytes of UTF-8 at level H: the limit is 1272"
check_true test ! -e "$T/never.pdf" "1273 bytes of UTF-8 at level H: no output file"
run "$PDFSTAMP" stamp --password-file "$PW" --qr-level X --qr a -o "$T/never.pdf" "$AES"
check_status 2 "--qr-level X"
run "$PDFSTAMP" stamp --password-file "$PW" --qr '' -o "$T/never.pdf" "$AES"
check_status 2 "--qr ''"
python3 - "$T/seal.png" <<'PY'
import struct, sys, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
raw = b"\0\0\xff\0\xff\0"
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
                              + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
run "$PDFSTAMP" stamp --password-file "$PW" --image "$T/seal.png" --qr "$URL" -o "$T/never.pdf" "$AES"
check_status 2 "--qr and --image without --text: refused"
check_grep 'a QR code and an image need text' "$T/err" "--qr and --image without --text: the message says why"
check_true test ! -e "$T/never.pdf" "--qr and --image without --text: no output file"
stamp image-text --image "$T/seal.png" --text 'SEALED' --qr "$URL" "$AES"
reads "$T/image-text.pdf" 1 image-text "$URL" "--qr over --image with --text"

# ---- the string is a template: a code per page, {file}, {bates} ----------------
stamp per-page --page all --text 'P{page}' --qr 'https://dms.example.org/{file}/p{page}' "$RC4"
for p in 1 2 3; do
	reads "$T/per-page.pdf" $p "per-page-$p" "https://dms.example.org/rc4.pdf/p$p" \
		"--qr with {file} and {page}, page $p (RC4)"
done
stamp qr-bates --page all --qr 'Doc {bates} {{x}}' --bates-prefix ACME- --bates-start 7 "$AES"
reads "$T/qr-bates.pdf" 2 qr-bates-2 "Doc ACME-000008 {x}" "--qr with {bates} and {{x}}, page 2"
run "$PDFSTAMP" stamp --password-file "$PW" --qr 'x{pag}' -o "$T/never2.pdf" "$AES"
check_status 2 "--qr with an unknown variable: refused"
check_grep 'the QR code: unknown variable \{pag\}' "$T/err" "--qr 'x{pag}': the message names it"

# ---- libqrencode is opened only for a QR code ---------------------------------
run env LD_DEBUG=files "$PDFSTAMP" stamp --password-file "$PW" -o "$T/lazy-plain.pdf" "$AES"
check_status 0 "lazy libqrencode: a plain stamp"
check_grep 'file=libpdfstamp\.so\.0' "$T/err" "lazy libqrencode: LD_DEBUG=files lists what is loaded"
check_no_grep 'file=libqrencode' "$T/err" "lazy libqrencode: a plain stamp does not open it"
run env LD_DEBUG=files "$PDFSTAMP" stamp --password-file "$PW" --qr "$URL" -o "$T/lazy-qr.pdf" "$AES"
check_status 0 "lazy libqrencode: a QR stamp"
check_grep 'file=libqrencode\.so\.4 .*dynamically loaded by .*libpdfstamp' "$T/err" \
	"lazy libqrencode: a QR stamp opens it"
mkdir -p "$T/badlib"
printf 'not a shared object\n' >"$T/badlib/libqrencode.so.4"
cp "$AES" "$T/keep2.pdf"
run env "LD_LIBRARY_PATH=$T/badlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$PDFSTAMP" stamp -i --password-file "$PW" --qr "$URL" "$T/keep2.pdf"
check_status 1 "lazy libqrencode: a QR stamp when it cannot be loaded"
check_grep 'a QR code needs a library that is not available: libqrencode\.so\.4 cannot be loaded' \
	"$T/err" "lazy libqrencode: the message names it"
check_true cmp -s "$AES" "$T/keep2.pdf" "lazy libqrencode: the file is unchanged"

finish
