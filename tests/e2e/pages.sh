#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/pages.sh - `pdfstamp stamp --pages EXPR` (issue 32), checked with
# readers that are not ours.
#
# The input (tests/e2e/fixtures/pages.py tree, encrypted by qpdf with
# AES-256 and a user password) has 12 pages in a three-level page tree,
# with /Rotate 90, 180 and an inherited 270, an offset CropBox on page 3
# and an inherited one on pages 9-12, and a landscape page.  For several
# expressions, after `pdfstamp stamp --pages EXPR -o`:
#  (a) qpdf (--json=2 with the password) and MuPDF (mutool run) find a
#      /Stamp annotation on exactly the pages pdfstamp(1)'s rules select;
#  (b) poppler (pdftoppm) and MuPDF (mutool draw) render ink changes on
#      exactly those pages, every other page identical to the input's;
#  (c) qpdf --check accepts the output.
# Then the errors (a page beyond the count, an empty selection, garbage
# refused before any file is opened, --page with --pages), the page tree
# read only as far as the selection needs (a damaged subtree outside the
# selection does not stop the stamp; inside it, or in a node whose /Count
# the walk needs to skip a subtree, it does), a /Count of 2^31 over three
# pages, and 2,000 pages:
# --pages all stamps them all and takes no longer than --page all.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdftoppm

FX=$TOP_SRCDIR/tests/e2e/fixtures/pages.py
PW=$T/user.pw
echo 'pages-user' >"$PW"

# mk NAME [DAMAGE]: $T/NAME.pdf, the 12-page tree encrypted by qpdf.
mk() {
	python3 "$FX" tree "$T/$1-plain.pdf" ${2:+"$2"} &&
		qpdf --encrypt pages-user pages-owner 256 -- "$T/$1-plain.pdf" "$T/$1.pdf" ||
		fail "making the input $1"
}

# renders FILE BASE: every page by poppler (BASE.pp-NN.pgm) and MuPDF
# (BASE.mu-N.pgm), at 20 dpi, gray, the visible (crop) box.
renders() {
	pdftoppm -upw pages-user -r 20 -gray -cropbox "$1" "$2.pp" 2>"$T/render.err" ||
		fail "pdftoppm renders $(basename "$1")" "$(head -c 300 "$T/render.err")"
	mutool draw -q -p pages-user -r 20 -c gray -o "$2.mu-%d.pgm" "$1" 2>"$T/render.err" ||
		fail "mutool draw renders $(basename "$1")" "$(head -c 300 "$T/render.err")"
}

mk tree
renders "$T/tree.pdf" "$T/before"
check_eq "$(python3 "$FX" qpdf-annots "$T/tree.pdf" pages-user)" "" \
	"the input has no stamp annotation (qpdf)"

# ---------------------------------------------------------------------------
# (a)-(c): expressions and the pages they select on 12 pages

n=0
while IFS='|' read -r -u 3 expr want; do
	n=$((n + 1))
	o=$T/out$n.pdf
	run "$PDFSTAMP" stamp --pages "$expr" --password-file "$PW" -o "$o" "$T/tree.pdf"
	check_status 0 "--pages '$expr'"
	[ "$RC" = 0 ] || continue
	check_eq "$(python3 "$FX" qpdf-annots "$o" pages-user)" "$want" \
		"--pages '$expr': qpdf finds the stamp on pages $want"
	check_eq "$(python3 "$FX" mupdf-annots "$o" pages-user)" "$want" \
		"--pages '$expr': MuPDF finds the stamp on pages $want"
	renders "$o" "$T/after$n"
	check_eq "$(python3 "$FX" inked "$T/before.pp" "$T/after$n.pp" 12)" "$want" \
		"--pages '$expr': poppler draws new ink on pages $want only"
	check_eq "$(python3 "$FX" inked "$T/before.mu" "$T/after$n.mu" 12)" "$want" \
		"--pages '$expr': MuPDF draws new ink on pages $want only"
	run qpdf --password=pages-user --check "$o"
	check_status 0 "--pages '$expr': qpdf --check"
	rm -f "$T"/after$n.*
done </dev/null 3<<'EOF'
1-3,7|1,2,3,7
all,!1|2,3,4,5,6,7,8,9,10,11,12
-1|12
odd,!1-6,4|4,7,9,11
!2-11|1,12
8-5, 2 ,even,!10-|2,4,5,6,7,8
EOF

# the verbose line says how many pages
run "$PDFSTAMP" stamp --pages 'first,-2' -v --password-file "$PW" -o "$T/v.pdf" "$T/tree.pdf"
check_grep '^stamped 2 pages of ' "$T/out" "-v: 'stamped 2 pages of ...'"

# ---------------------------------------------------------------------------
# Errors

run "$PDFSTAMP" stamp --pages 1-20 --password-file "$PW" -o "$T/e1.pdf" "$T/tree.pdf"
check_status 2 "--pages 1-20 on 12 pages is a usage error"
check_grep 'page 20 does not exist \(the document has 12\)' "$T/err" \
	"--pages 1-20: the message names the page count"
check_true test ! -e "$T/e1.pdf" "--pages 1-20: no output file"

run "$PDFSTAMP" stamp --pages 'all,!1-12' --password-file "$PW" -o "$T/e2.pdf" "$T/tree.pdf"
check_status 2 "an empty selection is a usage error"
check_grep 'selects no page of the 12' "$T/err" "an empty selection: 'selects no page of the 12'"

run "$PDFSTAMP" stamp --pages -13 --password-file "$PW" -o "$T/e3.pdf" "$T/tree.pdf"
check_status 2 "--pages -13 on 12 pages is a usage error"
check_grep 'page -13 .*the document has 12' "$T/err" "--pages -13: the message names the page count"

# refused before any file is opened: the file does not exist
for bad in '1,,2' '0' 'x' '1-2-3' '99999999999999999999' ''; do
	run "$PDFSTAMP" stamp --pages "$bad" --password-file "$PW" -o "$T/e4.pdf" "$T/missing.pdf"
	check_status 2 "--pages '$bad' is refused before any file is opened"
	check_grep '^pdfstamp: --pages: page selection' "$T/err" "--pages '$bad': the message says why"
done

run "$PDFSTAMP" stamp --page 2 --pages 3 --password-file "$PW" -o "$T/e5.pdf" "$T/tree.pdf"
check_status 2 "--page with --pages is a usage error"
run "$PDFSTAMP" stamp --pages 3 --page 2 --password-file "$PW" -o "$T/e5.pdf" "$T/tree.pdf"
check_status 2 "--pages with --page is a usage error"
check_true test ! -e "$T/e5.pdf" "--page with --pages: no output file"

# --page keeps its meaning: the one-page form
run "$PDFSTAMP" stamp --page last --password-file "$PW" -o "$T/p.pdf" "$T/tree.pdf"
check_status 0 "--page last"
check_eq "$(python3 "$FX" qpdf-annots "$T/p.pdf" pages-user)" "12" "--page last stamps page 12 (qpdf)"
run "$PDFSTAMP" stamp --page 13 --password-file "$PW" -o "$T/p13.pdf" "$T/tree.pdf"
check_status 2 "--page 13 on 12 pages"
check_grep 'page 13 does not exist \(the document has 12\)' "$T/err" "--page 13: as before"

# ---------------------------------------------------------------------------
# The page tree is read only as far as the selection needs: B1 (pages 5-6)
# has no /Count, C (pages 9-12) has a /Kids that is not an array.

mk b1 b1
mk tail tail
while IFS='|' read -r -u 3 name expr status want; do
	run "$PDFSTAMP" stamp --pages "$expr" --password-file "$PW" -o "$T/d.pdf" "$T/$name.pdf"
	check_status "$status" "damaged subtree ($name), --pages '$expr'"
	if [ "$status" = 0 ] && [ "$RC" = 0 ]; then
		check_eq "$(python3 "$FX" qpdf-annots "$T/d.pdf" pages-user)" "$want" \
			"damaged subtree ($name), --pages '$expr': qpdf finds the stamp on $want"
	fi
	rm -f "$T/d.pdf"
done </dev/null 3<<'EOF'
b1|1-4|0|1,2,3,4
b1|3,9-|0|3,9,10,11,12
b1|7-8|4|
b1|5|4|
b1|all|4|
tail|3|0|3
tail|1-8,!2|0|1,3,4,5,6,7,8
tail|-1|4|
tail|odd|4|
EOF

# A root whose /Count says 2^31 over 3 pages: the selection stays small,
# pages that exist are stamped, the lie is found where the walk needs it.
python3 "$FX" huge "$T/huge-plain.pdf" &&
	qpdf --encrypt pages-user pages-owner 256 -- "$T/huge-plain.pdf" "$T/huge.pdf" ||
	fail "making the input with /Count 2^31"
run "$PDFSTAMP" stamp --pages 'odd,2,!3-' --password-file "$PW" -o "$T/h.pdf" "$T/huge.pdf"
check_status 0 "/Count 2^31, --pages 'odd,2,!3-'"
check_eq "$(python3 "$FX" qpdf-annots "$T/h.pdf" pages-user)" "1,2" \
	"/Count 2^31, --pages 'odd,2,!3-': qpdf finds the stamp on pages 1,2"
for e in all -1 'all,!2-2147483647'; do
	run "$PDFSTAMP" stamp --pages "$e" --password-file "$PW" -o "$T/h2.pdf" "$T/huge.pdf"
	check_status 4 "/Count 2^31 over 3 pages, --pages '$e': malformed"
	check_grep 'fewer pages than its /Count' "$T/err" "/Count 2^31, --pages '$e': the message"
done

# ---------------------------------------------------------------------------
# 2,000 pages: --pages stamps them all, and is not slower than --page all

python3 "$FX" big "$T/big-plain.pdf" 2000 &&
	qpdf --encrypt pages-user pages-owner 256 -- "$T/big-plain.pdf" "$T/big.pdf" ||
	fail "making the 2,000-page input"
run "$PDFSTAMP" stamp --pages 'all' --password-file "$PW" -o "$T/big-all.pdf" "$T/big.pdf"
check_status 0 "--pages all on 2,000 pages"
check_eq "$(python3 "$FX" qpdf-annots "$T/big-all.pdf" pages-user | tr ',' '\n' | wc -l)" 2000 \
	"--pages all: qpdf finds 2,000 stamped pages"
run "$PDFSTAMP" stamp --pages 'odd,!1-1990' --password-file "$PW" -o "$T/big-odd.pdf" "$T/big.pdf"
check_eq "$(python3 "$FX" qpdf-annots "$T/big-odd.pdf" pages-user)" "1991,1993,1995,1997,1999" \
	"--pages 'odd,!1-1990' on 2,000 pages (qpdf)"
# best of five runs each, in milliseconds
best() {
	local i s e t b=999999
	for i in 1 2 3 4 5; do
		s=$(date +%s%N)
		"$PDFSTAMP" stamp "$@" --password-file "$PW" -o "$T/big-t.pdf" "$T/big.pdf" \
			>/dev/null 2>&1 || echo FAILED
		e=$(date +%s%N)
		t=$(((e - s) / 1000000))
		[ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
t_page=$(best --page all)
t_pages=$(best --pages all)
t_expr=$(best --pages '1-1000,1001-,!7,7')
echo "# 2,000 pages, best of 5: --page all ${t_page} ms, --pages all ${t_pages} ms," \
	"--pages 1-1000,1001-,!7,7 ${t_expr} ms"
check_true test "$t_pages" -le $((t_page * 3 / 2 + 50)) \
	"--pages all (${t_pages} ms) is not slower than --page all (${t_page} ms)"
check_true test "$t_expr" -le $((t_page * 3 / 2 + 50)) \
	"--pages 1-1000,1001-,!7,7 (${t_expr} ms) is not slower than --page all (${t_page} ms)"

finish
