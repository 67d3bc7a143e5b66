#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/gen.sh - end-to-end tests of bench/make-archive, the generator of
# encrypted "scanned archive" PDFs used by the benchmark harness.
#
# Three small shapes are generated into a temporary directory:
#   A  classic xref table, custom passwords from files, restricted /P;
#   B  xref stream with object streams, more images than pages (extras are
#      attached round-robin) and a two-level page tree;
#   C  xref stream with a 4.5 GiB sparse gap, so later offsets pass 4 GiB.
# Every expectation comes from the options given and from an independent
# reader (qpdf, and MuPDF when installed): qpdf --check, page counts, the
# in-use entries of qpdf --show-xref against the generator's own summary,
# and a census of the decrypted objects (qpdf --json) against the shape:
# images, their Width*Height against their decoded length, small objects,
# page tree /Count values, reachability of the small objects through
# /PSGenIndex, and that no plaintext marker is visible in the raw file.
# Then `pdfstamp info --json` must report the same page and object counts.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need qpdf
need python3

: "${TOP_BUILDDIR:?TOP_BUILDDIR must name the build tree}"
GEN=$TOP_BUILDDIR/bench/make-archive
if [ ! -x "$GEN" ]; then
	echo "SKIP: $GEN is not built"
	exit 77
fi

UPW='alpha beta'
OPW='gamma-Ωmega'
printf '%s\n' "$UPW" >"$T/upw"
printf '%s\n' "$OPW" >"$T/opw"
printf '%s\n' "user" >"$T/default-upw"

# census FILE PASSWORD: one line of JSON facts about the decrypted file.
cat >"$T/census.py" <<'PY'
import json, re, subprocess, sys

path, pw = sys.argv[1], sys.argv[2]
d = json.loads(subprocess.run(["qpdf", "--json", "--json-key=qpdf", "--password=" + pw, path],
                              check=True, stdout=subprocess.PIPE).stdout)
objs = d["qpdf"][1]
trailer = objs["trailer"]["value"]

def ref(v):
    m = re.fullmatch(r"(\d+) 0 R", v) if isinstance(v, str) else None
    return "obj:%s 0 R" % m.group(1) if m else None

def dct(key):
    o = objs[key]
    return o["value"] if "value" in o else o["stream"]["dict"]

images, contents, extras, pages = {}, set(), set(), 0
count_errors = []

def walk(key, parent):
    """Leaves under a /Pages node, checking /Count and /Parent."""
    global pages
    o = dct(key)
    if parent and o.get("/Parent") != parent.replace("obj:", ""):
        count_errors.append("%s has /Parent %s" % (key, o.get("/Parent")))
    if o.get("/Type") == "/Page":
        pages += 1
        contents.add(ref(o["/Contents"]))
        for v in o.get("/Resources", {}).get("/XObject", {}).values():
            images[ref(v)] = dct(ref(v))
        return 1
    n = sum(walk(ref(k), key) for k in o["/Kids"])
    if o.get("/Count") != n:
        count_errors.append("%s: /Count %s, %d leaves" % (key, o.get("/Count"), n))
    return n

root = dct(ref(trailer["/Root"]))
walk(ref(root["/Pages"]), None)

def collect(v):
    for item in (dct(ref(v)) if ref(v) else v):
        r = ref(item)
        o = dct(r)
        if isinstance(o, list):
            collect(item)
        else:
            extras.add(r)

collect(root["/PSGenIndex"])
dicts = [k for k in extras if "value" in objs[k] and "/PSGen" in objs[k]["value"]]
streams = [k for k in extras if "stream" in objs[k]]
strings_ok = all(objs[k]["value"]["/PSGen"].startswith("u:record ") for k in dicts)
one_image = sorted(images)[0] if images else None
print(json.dumps({
    "pages": pages, "images": len(images), "contents": len(contents),
    "dicts": len(dicts), "streams": len(streams), "small": len(contents) + len(extras),
    "tree_errors": count_errors, "strings_decrypt": strings_ok,
    "image_wh": [images[one_image]["/Width"], images[one_image]["/Height"]] if one_image else None,
    "image_num": one_image.split(":")[1].split()[0] if one_image else None,
    "gap": ref(root.get("/PSGenGap")),
    "encrypt": dct(ref(trailer["/Encrypt"])).get("/P"),
}))
PY

# summary_objects ERRFILE: the object count in the generator's summary line.
summary_objects() {
	sed -n 's/.*: \([0-9][0-9]*\) objects (.*/\1/p' "$1" | head -1
}

# xref_inuse FILE PASSWORD: in-use entries listed by qpdf --show-xref.
xref_inuse() {
	qpdf --password="$2" --show-xref "$1" 2>/dev/null | grep -Ec '^[0-9]+/[0-9]+: (uncompressed|compressed);'
}

# pdfstamp_counts FILE PWFILE EXP_PAGES EXP_OBJECTS NAME
pdfstamp_counts() {
	if [ ! -x "$PDFSTAMP" ] || ! "$PDFSTAMP" info --help >/dev/null 2>&1; then
		echo "# pdfstamp info is not available; skipping its counts for $5"
		return
	fi
	run "$PDFSTAMP" info --json --password-file "$2" "$1"
	check_status 0 "$5: pdfstamp info"
	check_eq "$(jget "$T/out" 'd["pages"]')" "$3" "$5: pdfstamp info pages"
	check_eq "$(jget "$T/out" 'd["objects"]')" "$4" "$5: pdfstamp info objects"
}

# ---- A: table, password files, restricted permissions ---------------------
A=$T/a.pdf
run "$GEN" -o "$A" --pages 5 --small 200 --large 5 --payload 2M \
	--user-password-file "$T/upw" --owner-password-file "$T/opw" --permissions -3904 --seed 11
check_status 0 "A: generate (table)"
check_eq "$(wc -c <"$T/out")" "0" "A: nothing on stdout"
check_grep '^make-archive: .*: [0-9]+ objects \(5 pages, 200 small, 5 large, table xref\)' "$T/err" \
	"A: one-line summary on stderr"
NA=$(summary_objects "$T/err")
check_grep '^%PDF-1\.7$' <(head -1 "$A") "A: header"
run qpdf --check --password="$UPW" "$A"
check_status 0 "A: qpdf --check with the user password"
check_grep 'Supplied password is user password' "$T/out" "A: qpdf authenticates as user"
check_grep '^P = -3904$' "$T/out" "A: /P from --permissions"
check_grep 'stream encryption method: AESv3' "$T/out" "A: AESV3 streams"
run qpdf --check --password="$OPW" "$A"
check_status 0 "A: qpdf --check with the owner password (non-ASCII)"
check_grep 'Supplied password is owner password' "$T/out" "A: qpdf authenticates as owner"
run qpdf --check --password=user "$A"
check_status 2 "A: the default password is not accepted when a file gave another"
check_eq "$(qpdf --password="$UPW" --show-npages "$A")" "5" "A: qpdf page count"
check_eq "$(xref_inuse "$A" "$UPW")" "$NA" "A: qpdf in-use objects = summary count"
check_no_grep 'compressed; stream' <(qpdf --password="$UPW" --show-xref "$A") "A: no compressed objects"
python3 "$T/census.py" "$A" "$UPW" >"$T/ca.json" 2>"$T/census.err"
check_eq "$(jget "$T/ca.json" 'd["images"]')" "5" "A: 5 images reachable from pages"
check_eq "$(jget "$T/ca.json" 'd["small"]')" "200" "A: 200 small objects (contents + indexed extras)"
check_eq "$(jget "$T/ca.json" 'd["contents"]')" "5" "A: one content stream per page"
check_eq "$(jget "$T/ca.json" 'd["dicts"] - d["streams"] in (0, 1)')" "true" "A: extras alternate dicts and streams"
check_eq "$(jget "$T/ca.json" 'd["tree_errors"]')" "[]" "A: page tree /Count and /Parent"
check_eq "$(jget "$T/ca.json" 'd["strings_decrypt"]')" "true" "A: small strings decrypt to their text"
# Width*Height equals the decoded (decrypted) length of the image.
IMG=$(jget "$T/ca.json" 'd["image_num"]' | tr -d '"')
WH=$(jget "$T/ca.json" 'd["image_wh"][0] * d["image_wh"][1]')
check_eq "$(qpdf --password="$UPW" --show-object="$IMG" --filtered-stream-data "$A" | wc -c)" "$WH" \
	"A: image Width*Height = its decrypted length"
# /Length is the encrypted length: IV + the data padded to whole blocks
# with 1..16 bytes of PKCS#7 (ISO 32000-2 7.6.3.1, Table 25).
ELEN=$(qpdf --password="$UPW" --show-object="$IMG" "$A" | sed -n 's/.*\/Length \([0-9]*\).*/\1/p')
check_eq "$ELEN" "$((16 + (WH / 16 + 1) * 16))" "A: image /Length is IV + PKCS#7-padded ciphertext"
check_no_grep 'record [0-9]+:|make-archive page' <(tr -c '[:print:]' '\n' <"$A") \
	"A: no plaintext of strings or streams in the raw file"
if command -v mutool >/dev/null 2>&1; then
	run mutool draw -p "$UPW" -o "$T/a.png" "$A" 1
	check_status 0 "A: mutool draw renders page 1"
	check_true test -s "$T/a.png" "A: mutool wrote a PNG"
fi
pdfstamp_counts "$A" "$T/upw" 5 "$NA" "A"

# ---- B: xref stream + object streams, more images than pages ----------------
B=$T/b.pdf
run "$GEN" -o "$B" --pages 33 --small 300 --large 40 --payload 1M --xref stream --objstm --quiet
check_status 0 "B: generate (stream + objstm)"
check_eq "$(wc -c <"$T/err")" "0" "B: --quiet prints nothing"
run "$GEN" -o "$T/b2.pdf" --pages 33 --small 300 --large 40 --payload 1M --xref stream --objstm
NB=$(summary_objects "$T/err")
run qpdf --check --password=user "$B"
check_status 0 "B: qpdf --check"
check_eq "$(qpdf --password=user --show-npages "$B")" "33" "B: qpdf page count"
check_eq "$(xref_inuse "$B" user)" "$NB" "B: qpdf in-use objects = summary count of an identical shape"
python3 "$T/census.py" "$B" user >"$T/cb.json" 2>"$T/census.err"
check_eq "$(jget "$T/cb.json" 'd["images"]')" "40" "B: all 40 images attached to pages"
check_eq "$(jget "$T/cb.json" 'd["small"]')" "300" "B: 300 small objects"
check_eq "$(jget "$T/cb.json" 'd["tree_errors"]')" "[]" "B: two-level page tree /Count and /Parent"
check_eq "$(jget "$T/cb.json" 'd["strings_decrypt"]')" "true" "B: strings in object streams read back"
NDICT=$(jget "$T/cb.json" 'd["dicts"]')
check_eq "$(qpdf --password=user --show-xref "$B" | grep -c ': compressed;')" "$NDICT" \
	"B: every small dict (and nothing else) is in an object stream"
check_grep '/W \[1 [0-9]+ 2\]' <(tr -c '[:print:]' '\n' <"$B") "B: xref stream /W [1 w 2]"
pdfstamp_counts "$B" "$T/default-upw" 33 "$NB" "B"

# ---- C: a sparse gap pushes offsets past 4 GiB -------------------------------
C=$T/c.pdf
run "$GEN" -o "$C" --pages 3 --small 30 --large 3 --payload 300k --xref stream --sparse-gap 4.5G
check_status 0 "C: generate (sparse gap 4.5G)"
NC=$(summary_objects "$T/err")
SIZE=$(stat -c %s "$C")
check_eq "$(( SIZE > 4831838208 ))" "1" "C: file is larger than the 4.5 GiB gap"
check_eq "$(( $(stat -c %b "$C") * $(stat -c %B "$C") < 64 * 1048576 ))" "1" "C: file is sparse (< 64 MiB on disk)"
qpdf --password=user --show-xref "$C" >"$T/cx" 2>&1
HI=$(awk '/offset = / { if ($NF + 0 > 4294967296) n++ } END { print n + 0 }' "$T/cx")
check_true test "$HI" -gt 0 "C: qpdf --show-xref lists offsets above 4 GiB ($HI)"
check_eq "$(grep -Ec '^[0-9]+/[0-9]+: (uncompressed|compressed);' "$T/cx")" "$NC" "C: qpdf in-use objects = summary count"
check_grep '/W \[1 5 2\]' <(tail -c 4096 "$C" | tr -c '[:print:]' '\n') "C: 5-byte offsets in /W"
check_eq "$(qpdf --password=user --show-npages "$C")" "3" "C: qpdf page count"
GAPOBJ=$(qpdf --password=user --show-object=1 "$C" | sed -n 's/.*PSGenGap \([0-9]*\) 0 R.*/\1/p')
check_grep '/Filter /Crypt' <(qpdf --password=user --show-object="$GAPOBJ" "$C") "C: gap stream uses a /Crypt filter"
check_grep '/Name /Identity' <(qpdf --password=user --show-object="$GAPOBJ" "$C") "C: gap stream is /Identity"
pdfstamp_counts "$C" "$T/default-upw" 3 "$NC" "C"
rm -f "$C"

# ---- D: the scan shape: one /FlateDecode scan a page, annotations, fonts -------
D=$T/d.pdf
run "$GEN" -o "$D" --shape scan --pages 9 --image-kb 64 --seed 5
check_status 0 "D: generate (scan shape, table)"
check_grep '^make-archive: .*: [0-9]+ objects \(9 pages, 1834 small, 9 large, table xref\) scan shape, .*flate\)' \
	"$T/err" "D: summary: 2,000-page proportions times 9 pages, one image a page"
ND=$(summary_objects "$T/err")
run qpdf --check --password=user "$D"
check_status 0 "D: qpdf --check (it decodes every /FlateDecode image)"
check_grep 'No syntax or stream encoding errors' "$T/out" "D: no stream encoding errors"
check_eq "$(xref_inuse "$D" user)" "$ND" "D: qpdf in-use objects = summary count"
python3 "$T/census.py" "$D" user >"$T/cd.json" 2>"$T/census.err"
check_eq "$(jget "$T/cd.json" 'd["images"]')" "9" "D: one image a page"
check_eq "$(jget "$T/cd.json" 'd["small"]')" "1834" "D: 1834 small objects (contents + indexed extras)"
check_eq "$(jget "$T/cd.json" 'd["tree_errors"]')" "[]" "D: page tree /Count and /Parent"
check_eq "$(jget "$T/cd.json" 'd["strings_decrypt"]')" "true" "D: record strings decrypt to their text"
IMG=$(jget "$T/cd.json" 'd["image_num"]' | tr -d '"')
WH=$(jget "$T/cd.json" 'd["image_wh"][0] * d["image_wh"][1]')
check_grep '/Filter /FlateDecode' <(qpdf --password=user --show-object="$IMG" "$D") "D: images are /FlateDecode"
check_eq "$(qpdf --password=user --show-object="$IMG" --filtered-stream-data "$D" | wc -c)" "$WH" \
	"D: image Width*Height = its decoded length"
# --image-kb sizes the stream: a zlib header, 5 bytes a stored block of at
# most 65,535 bytes, the pixels, the Adler-32 (RFC 1950, RFC 1951 3.2.4).
RAW=$(qpdf --password=user --show-object="$IMG" --raw-stream-data "$D" | wc -c)
check_eq "$RAW" "$((2 + 5 * ((WH + 65534) / 65535) + WH + 4))" "D: stream = zlib framing of stored blocks"
check_true test "$RAW" -le 65536 "D: the stream is at most --image-kb 64 KiB ($RAW)"
check_eq "$(( $(qpdf --password=user --show-object="$IMG" --raw-stream-data "$D" | gzip -c | wc -c) > RAW ))" "1" \
	"D: the image stream does not compress"
PG=$(qpdf --password=user --show-pages "$D" | sed -n 's/^page 1: \([0-9]*\) 0 R.*/\1/p')
qpdf --password=user --show-object="$PG" "$D" >"$T/dpage"
check_eq "$(grep -o '/Annots \[[^]]*\]' "$T/dpage" | grep -o ' 0 R' | wc -l)" "4" "D: page 1 lists 4 annotations"
check_grep '/Font << /F0 [0-9]+ 0 R /F1 [0-9]+ 0 R >>' "$T/dpage" "D: page 1 has 2 fonts"
ANN=$(sed -n 's/.*\/Annots \[ \([0-9]*\) 0 R.*/\1/p' "$T/dpage")
qpdf --password=user --show-object="$ANN" "$D" >"$T/dann"
check_grep '/Subtype /Text' "$T/dann" "D: an annotation is /Text"
check_grep '/Contents \(record [0-9]+: ' "$T/dann" "D: its /Contents decrypts"
check_grep "/P $PG 0 R" "$T/dann" "D: its /P is the page"
AP=$(sed -n 's/.*\/AP << \/N \([0-9]*\) 0 R.*/\1/p' "$T/dann")
check_grep '/Subtype /Form' <(qpdf --password=user --show-object="$AP" "$D") "D: its /AP /N is a form XObject"
if command -v pdffonts >/dev/null 2>&1; then
	check_eq "$(pdffonts -upw user -f 1 -l 1 "$D" | grep -c 'GlyphLessFont *TrueType *WinAnsi *no *no *yes')" "2" \
		"D: pdffonts: 2 fonts on page 1, with /ToUnicode"
fi
if command -v pdftotext >/dev/null 2>&1; then
	check_grep '(loan|ledger|scan|folio|deed|lien|escrow|title|page|copy)' \
		<(pdftotext -upw user -f 1 -l 1 "$D" - 2>/dev/null) "D: pdftotext reads the invisible OCR text"
fi
check_no_grep 'record [0-9]+:|make-archive page|begincmap' <(tr -c '[:print:]' '\n' <"$D") \
	"D: no plaintext of strings or streams in the raw file"
if command -v mutool >/dev/null 2>&1; then
	run mutool draw -p user -r 20 -o "$T/d.png" "$D" 1
	check_status 0 "D: mutool draw renders page 1"
fi
pdfstamp_counts "$D" "$T/default-upw" 9 "$ND" "D"
if [ -x "$PDFSTAMP" ]; then
	run "$PDFSTAMP" stamp -i --password-file "$T/default-upw" "$D"
	check_status 0 "D: pdfstamp stamps page 1 in place"
	check_eq "$(qpdf --password=user --show-object="$PG" "$D" | grep -o '/Annots \[[^]]*\]' | grep -o ' 0 R' | wc -l)" \
		"5" "D: the stamp joins the 4 annotations of page 1"
fi
D2=$T/d2.pdf
run "$GEN" -o "$D2" --shape scan --pages 9 --image-kb 64 --xref stream --objstm
check_status 0 "D2: generate (scan shape, xref stream + object streams)"
run qpdf --check --password=user "$D2"
check_status 0 "D2: qpdf --check"
# 1825 extras, 5 of every 8 are dicts (annotation, 2 records, font, descriptor)
check_eq "$(qpdf --password=user --show-xref "$D2" | grep -c ': compressed;')" "$((1825 / 8 * 5 + 1))" \
	"D2: every small dict (and nothing else) is in an object stream"
rm -f "$D" "$D2"

# ---- usage errors ------------------------------------------------------------
run "$GEN" --pages 3
check_status 2 "usage: -o is required"
run "$GEN" -o "$T/x.pdf" --pages 10 --small 5
check_status 2 "usage: --small below --pages"
check_true test ! -e "$T/x.pdf" "usage: nothing written on a usage error"
run "$GEN" -o "$T/x.pdf" --objstm
check_status 2 "usage: --objstm needs --xref stream"
run "$GEN" -o "$T/x.pdf" --payload 12Q
check_status 2 "usage: bad size suffix"
run "$GEN" -o "$T/x.pdf" --pages 2 --small 2 --large 1 --payload 1k --sparse-gap 9.5G
check_status 2 "usage: offsets past 10^10 need --xref stream"
check_true test ! -e "$T/x.pdf" "usage: the partial file is removed"
run "$GEN" -o "$T/x.pdf" --shape scan --image-kb 100 --payload 1M
check_status 2 "usage: --image-kb with --payload"
run "$GEN" -o "$T/x.pdf" --shape scanned
check_status 2 "usage: unknown --shape"
run "$GEN" -o "$T/x.pdf" --image-filter dct
check_status 2 "usage: unknown --image-filter"
run "$GEN" --help
check_status 0 "--help"
check_grep '--sparse-gap' "$T/out" "--help lists the options"
check_grep '--shape reference[|]scan' "$T/out" "--help documents the shapes"
check_grep '--image-kb N' "$T/out" "--help documents the image size knob"

finish
