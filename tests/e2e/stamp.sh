#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/stamp.sh - end-to-end and interoperability tests of `pdfstamp stamp`.
#
# The inputs are encrypted inside the run (tests/e2e/fixtures/e2e.py inputs):
# qpdf R6 with a classic table, with an xref stream and object streams, R5,
# linearized (table and stream), an empty user password, a hybrid-reference
# file, a page with /Rotate 90, a page tree with inherited /MediaBox,
# /CropBox and /Rotate, and MuPDF R6 (plain and linearized).  For each one,
# after `pdfstamp stamp -o`:
#  (a) the output starts with the exact bytes of the input;
#  (b) qpdf --check passes without warnings, qpdf --show-encryption is
#      unchanged, and the new trailer is right (read from the raw bytes);
#  (c) MuPDF and poppler render the page with the password and the stamp's
#      pixels appear inside its /Rect, at the expected corner of the page as
#      shown, and nowhere else (against a render of the input);
#  (d) qpdf and `mutool show` find the annotation on the page and decrypt
#      /Subtype, /Contents (UTF-16BE when not ASCII), /T, /M; qpdf decodes
#      the appearance stream, which shows the text;
#  (e) a second stamp (--in-place) makes three revisions that qpdf accepts.
# Then the options (--page, --position, --rect, --freetext, --icon,
# --color, --json, -v), several files with one bad one, --files-from -,
# and the annotation permission.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdftoppm

e2e_inputs

# ---------------------------------------------------------------------------
# Helpers

# pyfeed ARGS...: the checker's OK/FAIL lines as assertions (lib.sh).
pyfeed() { checker_feed "$E" "$@"; }

pw_of() { head -n 1 "$1"; }

# render FILE PWFILE PAGE OUTBASE: OUTBASE.mu.pgm (MuPDF), OUTBASE.pp.pgm (poppler)
render() {
	local f=$1 pw p=$3 o=$4
	pw=$(pw_of "$2")
	rm -f "$o.mu.pgm" "$o.pp.pgm"
	mutool draw -q -p "$pw" -r 50 -c gray -o "$o.mu.pgm" "$f" "$p" 2>"$o.mu.err" || true
	pdftoppm -upw "$pw" -r 50 -gray -cropbox -f "$p" -l "$p" -singlefile "$f" "$o.pp" 2>"$o.pp.err" || true
	[ -s "$o.mu.pgm" ] || fail "mutool draw renders page $p of $(basename "$f")" "$(head -c 300 "$o.mu.err")"
	[ -s "$o.pp.pgm" ] || fail "pdftoppm renders page $p of $(basename "$f")" "$(head -c 300 "$o.pp.err")"
}

# no_plaintext IN OUT DESC STR...: none of STR appears in the appended bytes.
no_plaintext() {
	local in=$1 outf=$2 desc=$3 s
	shift 3
	tail -c +"$(($(size_of "$in") + 1))" "$outf" >"$T/appended.bin"
	for s in "$@"; do
		if LC_ALL=C grep -aqF -- "$s" "$T/appended.bin"; then
			fail "$desc: '$s' does not appear in plaintext in the appended bytes"
		else
			ok "$desc: '$s' does not appear in plaintext in the appended bytes"
		fi
	done
}

# pixels NAME BEFORE-BASE AFTER-BASE RECTJSON CORNER MARGIN: both renderers.
pixels() {
	local k
	for k in mu pp; do
		if [ -s "$2.$k.pgm" ] && [ -s "$3.$k.pgm" ]; then
			pyfeed pixels "$2.$k.pgm" "$3.$k.pgm" "$4" "$5" "$6" "$1 ($k)"
		fi
	done
}

# json_result NAME IN OUT JSONFILE [LINE]: the --json line of a successful stamp.
json_result() {
	local name=$1 in=$2 o=$3 j=$4 l=${5:-1}
	check_eq "$(jget "$j" 'd["ok"]' "$l")" true "$name: --json ok"
	check_eq "$(jget "$j" '[d["file"], d["output"]]' "$l")" \
		"$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$in" "$o")" "$name: --json file and output"
	check_eq "$(jget "$j" 'd["base_length"]' "$l")" "$(size_of "$in")" "$name: --json base_length is the input's size"
	check_eq "$(jget "$j" 'd["base_length"] + d["bytes_appended"]' "$l")" "$(size_of "$o")" \
		"$name: --json base_length + bytes_appended is the output's size"
	check_eq "$(jget "$j" 'd["xref_offset"]' "$l")" "$(last_startxref "$o")" "$name: --json xref_offset is the new startxref"
	check_eq "$(jget "$j" 'isinstance(d["objects"], list) and len(d["objects"]) >= 1' "$l")" true \
		"$name: --json lists the annotation objects"
	check_eq "$(jget "$j" 'd["bytes_appended"] < 8192' "$l")" true "$name: fewer than 8 KiB appended"
}

# ===========================================================================
# Part 1: every input form, full checks (a)-(e)
# ===========================================================================

AUTHOR='Zoë Ŕeviewer'
NOTE='Geprüft – ok ✓ (see ticket #42)'
DATE=2024-05-06T07:08:09Z
while read -r name f pw _ _; do
	text=APPROVED
	case $name in qpdf-r6-table | mupdf-r6) text='GEPRÜFT' ;; esac
	o=$T/$name.s1.pdf
	run "$PDFSTAMP" stamp --json $(pwargs "$pw") --text "$text" --author "$AUTHOR" --note "$NOTE" \
		--date "$DATE" -o "$o" "$f" </dev/null
	check_status 0 "$name: stamp -o"
	[ "$RC" = 0 ] || continue
	cp "$T/out" "$T/$name.json"
	json_result "$name" "$f" "$o" "$T/$name.json"
	# (a)
	cmp_prefix "$f" "$o" "$name"
	# (b)
	qcheck "$o" "$pw" "$name"
	check_eq "$(showenc "$o" "$pw")" "$(showenc "$f" "$pw")" "$name: qpdf --show-encryption unchanged"
	pyfeed trailer "$f" "$o" "$name"
	no_plaintext "$f" "$o" "$name" "$NOTE" "eviewer" "Geprüft" "$text" " Tj ET"
	# (d)
	RECT_OUT=$T/$name.rect.json pyfeed annot "$o" "$pw" 1 "$name" objects="$(objs_of "$T/$name.json")" \
		subtype=Stamp contents="$NOTE" author="$AUTHOR" text="$text" date=20240506070809 count=1
	# (c)
	render "$f" "$pw" 1 "$T/$name.r0"
	render "$o" "$pw" 1 "$T/$name.r1"
	pixels "$name" "$T/$name.r0" "$T/$name.r1" "$T/$name.rect.json" top-right 36
	pyfeed upright "$o" "$pw" 1 "$text" "$name"
	# (e) a second stamp, in place, on a copy
	cp "$o" "$T/$name.s2.pdf"
	run "$PDFSTAMP" stamp --json $(pwargs "$pw") --text SECOND --author B -i "$T/$name.s2.pdf" </dev/null
	check_status 0 "$name: second stamp --in-place"
	[ "$RC" = 0 ] || continue
	cp "$T/out" "$T/$name.json2"
	cmp_prefix "$o" "$T/$name.s2.pdf" "$name (2nd)"
	check_eq "$(jget "$T/$name.json2" 'd["output"]')" "$(jget "$T/$name.json2" 'd["file"]')" \
		"$name: --in-place output is the file itself"
	qcheck "$T/$name.s2.pdf" "$pw" "$name (2nd)"
	run "$PDFSTAMP" info --json $(pwargs "$pw") "$T/$name.s2.pdf" </dev/null
	revs=$(jget "$T/out" 'd["revisions"]')
	base_revs=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import e2e; print(len(e2e.sections(open(sys.argv[2],"rb").read())))' \
		"$TOP_SRCDIR/tests/e2e/fixtures" "$f")
	check_eq "$revs" "$((base_revs + 2))" "$name: two stamps add two revisions (pdfstamp info)"
	pyfeed trailer "$o" "$T/$name.s2.pdf" "$name (2nd)"
	pyfeed annot "$T/$name.s2.pdf" "$pw" 1 "$name (2nd)" objects="$(objs_of "$T/$name.json2")" \
		subtype=Stamp contents=SECOND author=B text=SECOND count=2
done <"$D/inputs.txt"

# ===========================================================================
# Part 2: options
# ===========================================================================
F2=$D/qpdf-r6-table.pdf         # 2 pages, classic table
F3=$D/qpdf-r6-xrefstream.pdf    # 3 pages, xref stream

# annots_per_page FILE PWFILE: "n1 n2 n3" (qpdf)
annots_per_page() {
	qpdf --password-file="$2" --json --json-key=qpdf --json-key=pages "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin); o = d["qpdf"][1]
def v(x):
    while isinstance(x, str) and x.endswith(" R"):
        x = o["obj:" + x]["value"]
    return x
print(" ".join(str(len(v(v(p["object"]).get("/Annots", [])) or [])) for p in d["pages"]))'
}

for sel in last all 2 first; do
	o=$T/page-$sel.pdf
	run "$PDFSTAMP" stamp --json --password-file "$UPW" --page "$sel" -o "$o" "$F3"
	check_status 0 "--page $sel"
	[ "$RC" = 0 ] || continue
	case $sel in
	last) want="0 0 1" ;; all) want="1 1 1" ;; 2) want="0 1 0" ;; first) want="1 0 0" ;;
	esac
	check_eq "$(annots_per_page "$o" "$UPW")" "$want" "--page $sel: annotations per page (qpdf)"
	check_eq "$(jget "$T/out" 'len(d["objects"])')" "$((${want// /+}))" \
		"--page $sel: --json lists one annotation per stamped page"
	qcheck "$o" "$UPW" "--page $sel"
done
# the stamp of --page all is drawn on page 3 (MuPDF)
render "$F3" "$UPW" 3 "$T/p3.r0"
render "$T/page-all.pdf" "$UPW" 3 "$T/p3.r1"
RECT_OUT=$T/p3.rect.json pyfeed annot "$T/page-all.pdf" "$UPW" 3 "--page all, page 3" subtype=Stamp text=APPROVED
pixels "--page all, page 3" "$T/p3.r0" "$T/p3.r1" "$T/p3.rect.json" top-right 36

for sel in 4 0 -1 x; do
	rm -f "$T/bad-page.pdf"
	run "$PDFSTAMP" stamp --password-file "$UPW" --page "$sel" -o "$T/bad-page.pdf" "$F3"
	check_status 2 "--page $sel is a usage error"
	check_true test ! -e "$T/bad-page.pdf" "--page $sel: no output file"
done

# --position and --margin, on the 2-page table file (page 1 = 612x792)
render "$F2" "$UPW" 1 "$T/pos.r0"
for pos in top-left top-right bottom-left bottom-right center; do
	o=$T/pos-$pos.pdf
	run "$PDFSTAMP" stamp --json --password-file "$UPW" --position "$pos" --margin 20 -o "$o" "$F2"
	check_status 0 "--position $pos"
	[ "$RC" = 0 ] || continue
	RECT_OUT=$T/pos-$pos.json pyfeed annot "$o" "$UPW" 1 "--position $pos" objects="$(objs_of "$T/out")" text=APPROVED
	render "$o" "$UPW" 1 "$T/pos-$pos.r1"
	pixels "--position $pos" "$T/pos.r0" "$T/pos-$pos.r1" "$T/pos-$pos.json" "$pos" 20
done
run "$PDFSTAMP" stamp --password-file "$UPW" --position middle -o "$T/x.pdf" "$F2"
check_status 2 "--position middle is a usage error"

# rotated page (qpdf --rotate=+90:1) and inherited boxes with /Rotate 90 on
# page 2: every position must be where the reader sees it.
for case in "qpdf-rotated 1" "inherited 2"; do
	set -- $case
	f=$D/$1.pdf
	render "$f" "$UPW" "$2" "$T/$1.p$2.r0"
	for pos in bottom-left top-right; do
		o=$T/$1-$pos.pdf
		run "$PDFSTAMP" stamp --json --password-file "$UPW" --page "$2" --position "$pos" -o "$o" "$f"
		check_status 0 "$1 page $2: --position $pos"
		[ "$RC" = 0 ] || continue
		RECT_OUT=$T/$1-$pos.json pyfeed annot "$o" "$UPW" "$2" "$1 page $2 $pos" objects="$(objs_of "$T/out")" text=APPROVED
		render "$o" "$UPW" "$2" "$T/$1-$pos.r1"
		pixels "$1 page $2 $pos" "$T/$1.p$2.r0" "$T/$1-$pos.r1" "$T/$1-$pos.json" "$pos" 36
		pyfeed upright "$o" "$UPW" "$2" APPROVED "$1 page $2 $pos"
	done
done

# --rect, --icon, --color, --freetext, --opacity
o=$T/rect.pdf
run "$PDFSTAMP" stamp --json --password-file "$UPW" --rect 100,200,300,260 --icon Final --color 0000ff \
	--text FINAL -o "$o" "$F2"
check_status 0 "--rect --icon --color"
if [ "$RC" = 0 ]; then
	RECT_OUT=$T/rect.json pyfeed annot "$o" "$UPW" 1 "--rect" objects="$(objs_of "$T/out")" rect=100,200,300,260 \
		icon=Final text=FINAL color=0,0,1
	render "$o" "$UPW" 1 "$T/rect.r1"
	pixels "--rect" "$T/pos.r0" "$T/rect.r1" "$T/rect.json" rect 0
	n=$(jget "$T/out" 'd["objects"][0]')
	ap=$(qpdf --password-file="$UPW" --show-object="$n" "$o" | sed -n 's|.*/N \([0-9]* [0-9]* R\).*|\1|p' | head -1)
	qpdf --password-file="$UPW" --show-object="${ap%% *}" --filtered-stream-data "$o" >"$T/rect.ap" 2>&1
	check_grep '(^|[^0-9.])0 0 1 (RG|rg)' "$T/rect.ap" "--color 0000ff: the appearance draws in blue"
fi
for bad in 1,2,3 300,200,100,260 a,b,c,d 1,2,3,4,5; do
	run "$PDFSTAMP" stamp --password-file "$UPW" --rect "$bad" -o "$T/x.pdf" "$F2"
	check_status 2 "--rect $bad is rejected"
done
for bad in "--opacity 0" "--opacity 1.5" "--color 12345" "--color 2,0,0" "--icon NoSuchIcon" "--date yesterday" "--margin -3"; do
	run "$PDFSTAMP" stamp --password-file "$UPW" $bad -o "$T/x.pdf" "$F2"
	check_status 2 "$bad is rejected"
done

o=$T/freetext.pdf
run "$PDFSTAMP" stamp --json --password-file "$UPW" --freetext --text 'Reviewed' --opacity 0.5 -o "$o" "$F3"
check_status 0 "--freetext --opacity"
if [ "$RC" = 0 ]; then
	qcheck "$o" "$UPW" "--freetext"
	RECT_OUT=$T/ft.json pyfeed annot "$o" "$UPW" 1 "--freetext" objects="$(objs_of "$T/out")" subtype=FreeText \
		text=Reviewed contents=Reviewed
	render "$F3" "$UPW" 1 "$T/ft.r0"
	render "$o" "$UPW" 1 "$T/ft.r1"
	pixels "--freetext" "$T/ft.r0" "$T/ft.r1" "$T/ft.json" top-right 36
fi

# -v: one line on stdout; without -v and --json: nothing on stdout
run "$PDFSTAMP" stamp -v --password-file "$UPW" -o "$T/verbose.pdf" "$F2"
check_status 0 "-v"
check_grep '^stamped page 1 of .*: annotation [0-9]+ 0 R, [0-9]+ bytes appended' "$T/out" "-v names the annotation and the size"
run "$PDFSTAMP" stamp --password-file "$UPW" -o "$T/quiet.pdf" "$F2"
check_status 0 "stamp without -v"
check_eq "$(size_of "$T/out")" 0 "stamp without -v prints nothing on stdout"

# output mode errors
run "$PDFSTAMP" stamp --password-file "$UPW" "$F2"
check_status 2 "neither -o nor --in-place"
run "$PDFSTAMP" stamp --password-file "$UPW" -i -o "$T/x.pdf" "$F2"
check_status 2 "-o together with --in-place"
run "$PDFSTAMP" stamp --password-file "$UPW" -o "$T/x.pdf" "$F2" "$F3"
check_status 2 "-o with two files"

# ===========================================================================
# Part 3: several files, one of them bad; --files-from -
# ===========================================================================
mkdir -p "$T/many"
cp "$F2" "$T/many/a.pdf"
cp "$F3" "$T/many/b.pdf"
head -c 1000 "$F2" >"$T/many/bad.pdf"
cp "$D/qpdf-r5-table.pdf" "$T/many/c.pdf"
for x in a b bad c; do cp "$T/many/$x.pdf" "$T/many/$x.orig"; done
run "$PDFSTAMP" stamp --json --ordered --password-file "$UPW" -i "$T/many/a.pdf" "$T/many/b.pdf" \
	"$T/many/bad.pdf" "$T/many/c.pdf"
check_status 4 "several files with a truncated one: the worst status"
check_eq "$(wc -l <"$T/out" | tr -d ' ')" 4 "several files: one JSON line per file"
check_eq "$(jget "$T/out" '[d["ok"], d.get("exit")]' 3)" '[false, 4]' "several files: the bad one fails with 4"
check_eq "$(jget "$T/out" 'd["file"].endswith("bad.pdf") and len(d["error"]) > 0' 3)" true \
	"several files: the failure names the file and the reason"
check_grep 'bad\.pdf\)$' "$T/err" "several files: the error on stderr names the file"
cmp -s "$T/many/bad.pdf" "$T/many/bad.orig" && ok "several files: the bad file is unchanged" ||
	fail "several files: the bad file is unchanged"
i=0
for x in a b c; do
	i=$((i + 1))
	[ $i = 3 ] && i=4
	check_eq "$(jget "$T/out" 'd["ok"]' $i)" true "several files: $x.pdf stamped (--json)"
	cmp_prefix "$T/many/$x.orig" "$T/many/$x.pdf" "several files: $x.pdf"
	qcheck "$T/many/$x.pdf" "$UPW" "several files: $x.pdf"
done

mkdir -p "$T/ff"
cp "$F2" "$T/ff/one.pdf"
cp "$F3" "$T/ff/two with space.pdf"
printf '%s\n' "$T/ff/one.pdf" "$T/ff/two with space.pdf" >"$T/ff/list"
PDFSTAMP_TEST_PW=$(pw_of "$UPW")
export PDFSTAMP_TEST_PW
RC=0
"$PDFSTAMP" stamp --json --password-env PDFSTAMP_TEST_PW -i --files-from - <"$T/ff/list" >"$T/out" 2>"$T/err" || RC=$?
check_status 0 "--files-from - (paths on stdin, one with a space)"
check_eq "$(wc -l <"$T/out" | tr -d ' ')" 2 "--files-from -: one JSON line per file"
check_eq "$(jget "$T/out" 'd["ok"]' 2)" true "--files-from -: the second file is stamped"
for x in one "two with space"; do
	check_eq "$(annots_per_page "$T/ff/$x.pdf" "$UPW" | cut -d' ' -f1)" 1 "--files-from -: '$x.pdf' has the stamp (qpdf)"
done
printf '%s\n' "$T/ff/one.pdf" >"$T/ff/list1"
# another stamp (the same one would be skipped: idempotent.sh)
run "$PDFSTAMP" stamp --text AGAIN --password-env PDFSTAMP_TEST_PW -i --files-from "$T/ff/list1"
check_status 0 "--files-from FILE"
check_eq "$(annots_per_page "$T/ff/one.pdf" "$UPW" | cut -d' ' -f1)" 2 "--files-from FILE: stamped again"
run "$PDFSTAMP" stamp --password-env PDFSTAMP_TEST_PW -i --files-from "$T/ff/no-such-list"
check_status 2 "--files-from a missing list (an input an option names: a usage error)"
unset PDFSTAMP_TEST_PW

# ===========================================================================
# Part 4: the annotation permission
# ===========================================================================
qpdf --encrypt "$(pw_of "$UPW")" "$(pw_of "$OPW")" 256 --annotate=n --modify=none -- \
	"$TOP_SRCDIR/samples/plain-2page.pdf" "$T/noannot.pdf"
cp "$T/noannot.pdf" "$T/noannot.orig"
run "$PDFSTAMP" info --json --password-file "$UPW" "$T/noannot.pdf"
check_eq "$(jget "$T/out" 'd["encryption"]["permissions"]["annotate"]')" false "the fixture forbids annotations"
run "$PDFSTAMP" stamp --password-file "$UPW" -i "$T/noannot.pdf"
check_status 5 "stamp without the annotation permission (user password, in place)"
check_grep 'annot|permi' "$T/err" "the refusal says why"
cmp -s "$T/noannot.pdf" "$T/noannot.orig" && ok "refused stamp: the file is unchanged" ||
	fail "refused stamp: the file is unchanged"
check_true test ! -e "$T/noannot.pdf.pdfstamp-journal" "refused stamp: no journal left"
run "$PDFSTAMP" stamp --password-file "$UPW" -o "$T/noannot-out.pdf" "$T/noannot.pdf"
check_status 5 "stamp without the annotation permission (-o)"
check_true test ! -e "$T/noannot-out.pdf" "refused stamp: no output file"
run "$PDFSTAMP" stamp --json --password-file "$OPW" -o "$T/noannot-owner.pdf" "$T/noannot.pdf"
check_status 0 "the owner password may stamp"
if [ "$RC" = 0 ]; then
	qcheck "$T/noannot-owner.pdf" "$UPW" "owner stamp"
	check_eq "$(showenc "$T/noannot-owner.pdf" "$OPW")" "$(showenc "$T/noannot.pdf" "$OPW")" \
		"owner stamp: permissions unchanged"
	pyfeed annot "$T/noannot-owner.pdf" "$UPW" 1 "owner stamp" objects="$(objs_of "$T/out")" text=APPROVED
fi

finish
