#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/template.sh - the stamp's templates and Bates numbers (issue 32):
#   - {page}, {pages}, {file}, {date:FORMAT}: the text MuPDF (mutool draw -F
#     txt) and poppler (pdftotext) extract from each page of AES-256 and
#     AES-128 files is the expected string, and so is the /Contents qpdf
#     decrypts;
#   - {bates} continues across a 3-file batch in the order given (JSON
#     bates_first/bates_last and the extracted labels), even with --jobs
#     4, and restarts only when asked; a file that fails stops the
#     numbering of the files after it (exit 1, nothing written to them);
#     --ledger and --shard are refused with it;
#   - {{ and }} are braces; an unknown variable or an unclosed brace is a
#     usage error before any file is touched; --small-line, --no-date;
#   - a per-page text on 5 pages embeds one font subset, and 2,000 pages
#     with {page} append at most 2 MB (the time is printed, not judged).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need qpdf
need mutool
need pdftotext

S=$TOP_SRCDIR/samples
UPW=$S/user.pw
OPW=$S/owner.pw
U=$(head -n 1 "$UPW")
O=$(head -n 1 "$OPW")
WHEN=2026-03-01T09:05:07+01:00

# mkpdf N OUT [BITS]: N pages (copies of plain-2page.pdf's), encrypted with
# qpdf (AES-256 R6, or AES-128 with BITS 128) under the samples' passwords.
mkpdf() {
	local n=$1 out=$2 bits=${3:-256} i args=()
	for ((i = 0; i < (n + 1) / 2; i++)); do
		args+=("$S/plain-2page.pdf")
	done
	qpdf --empty --pages "${args[@]}" -- "$T/plain.tmp" &&
	qpdf "$T/plain.tmp" --pages . 1-$n -- "$T/plain2.tmp" &&
	if [ "$bits" = 128 ]; then
		qpdf --encrypt "$U" "$O" 128 --use-aes=y -- "$T/plain2.tmp" "$out"
	else
		qpdf --encrypt "$U" "$O" 256 -- "$T/plain2.tmp" "$out"
	fi
}

# page_text READER FILE PAGE: the page's text, one line per line, trimmed.
page_text() {
	case $1 in
	mu) mutool draw -q -p "$U" -F txt -o - "$2" "$3" 2>/dev/null ;;
	pp) pdftotext -q -upw "$U" -f "$3" -l "$3" "$2" - 2>/dev/null ;;
	esac | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}

# has_line READER FILE PAGE LINE DESC
has_line() {
	if page_text "$1" "$2" "$3" | grep -qxF -- "$4"; then
		ok "$5"
	else
		fail "$5" "page $3 ($1): $(page_text "$1" "$2" "$3" | tr '\n' '|' | head -c 400)"
	fi
}

# ---- {page}, {pages}, {file}, {date:...} on every page -------------------------
for bits in 256 128; do
	f=$T/report-$bits.pdf
	mkpdf 5 "$f" "$bits" || { fail "making the $bits-bit input"; finish; }
	run "$PDFSTAMP" stamp --password-file "$OPW" --page all --date "$WHEN" \
		--text 'Stamp {page}/{pages}' --small-line '{file} {date:%d %B %Y}' \
		--json -i "$f"
	check_status 0 "AES-$bits: --page all with {page}/{pages}"
	for p in 1 2 3 4 5; do
		for r in mu pp; do
			has_line $r "$f" $p "Stamp $p/5" "AES-$bits page $p ($r): the text says Stamp $p/5"
			has_line $r "$f" $p "report-$bits.pdf 01 March 2026" \
				"AES-$bits page $p ($r): {file} and {date:%d %B %Y}"
		done
	done
	# what qpdf decrypts: each annotation's /Contents is its page's text
	objs=$(objs_of "$T/out")
	k=0
	for n in ${objs//,/ }; do
		k=$((k + 1))
		qpdf --password-file="$UPW" --show-object="$n" "$f" >"$T/obj" 2>&1
		c=$(python3 - "$T/obj" <<'PY'
import re, sys
d = open(sys.argv[1], "rb").read().decode("latin-1")
m = re.search(r"/Contents (\d+) 0 R", d)
if m:
    print("INDIRECT")
else:
    m = re.search(r"/Contents \(((?:\\.|[^\\)])*)\)", d) or re.search(r"/Contents <([0-9a-fA-F]*)>", d)
    s = m.group(1) if m else ""
    print(bytes.fromhex(s).decode("utf-16-be" if s.lower().startswith("feff") else "latin-1").lstrip("\ufeff") if m and re.fullmatch(r"[0-9a-fA-F]*", s) else s)
PY
)
		check_eq "$c" "Stamp $k/5" "AES-$bits: qpdf decrypts /Contents of annotation $k as its page's text"
	done
done

# ---- Bates numbers across a batch ---------------------------------------------
mkpdf 5 "$T/a.pdf" && mkpdf 2 "$T/b.pdf" && mkpdf 3 "$T/c.pdf" || fail "making the batch"
cp "$T/a.pdf" "$T/a0.pdf"; cp "$T/b.pdf" "$T/b0.pdf"; cp "$T/c.pdf" "$T/c0.pdf"
run "$PDFSTAMP" stamp --password-file "$OPW" --page all --text '{bates}' --no-date \
	--bates-start 1000 --bates-prefix ACME- --bates-digits 7 --jobs 4 --json \
	-i "$T/a.pdf" "$T/b.pdf" "$T/c.pdf"
check_status 0 "a Bates batch of three files with --jobs 4"
cp "$T/out" "$T/bates.json"
check_eq "$(jget "$T/bates.json" 'd["bates_first"], d["bates_last"]' 1)" "[1000, 1004]" \
	"file 1 (5 pages) got 1000 to 1004"
check_eq "$(jget "$T/bates.json" 'd["bates_first"], d["bates_last"]' 2)" "[1005, 1006]" \
	"file 2 (2 pages) got 1005 to 1006"
check_eq "$(jget "$T/bates.json" 'd["bates_first"], d["bates_last"]' 3)" "[1007, 1009]" \
	"file 3 (3 pages) got 1007 to 1009"
n=1000
for spec in a:5 b:2 c:3; do
	x=${spec%:*}
	for ((p = 1; p <= ${spec#*:}; p++)); do
		for r in mu pp; do
			has_line $r "$T/$x.pdf" $p "ACME-000$n" "$x.pdf page $p ($r): ACME-000$n"
		done
		n=$((n + 1))
	done
done
# no date line with --no-date
page_text mu "$T/a.pdf" 1 >"$T/t"
check_no_grep '20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]' "$T/t" "--no-date: no date is drawn"

# a new batch restarts at --bates-start (default 1)
cp "$T/b0.pdf" "$T/b1.pdf"
run "$PDFSTAMP" stamp --password-file "$OPW" --page all --text 'No. {bates}' --json -i "$T/b1.pdf"
check_eq "$(jget "$T/out" 'd["bates_first"], d["bates_last"]')" "[1, 2]" \
	"a new batch starts at 1 by default"
has_line mu "$T/b1.pdf" 2 "No. 000002" "the default prefix is none and 6 digits"

# a file that fails stops the numbering of the files after it
cp "$T/a0.pdf" "$T/a2.pdf"; cp "$T/c0.pdf" "$T/c2.pdf"
printf '%%PDF-1.7\ngarbage\n' >"$T/bad.pdf"
sha_c=$(sha256sum <"$T/c2.pdf")
run "$PDFSTAMP" stamp --password-file "$OPW" --page all --text '{bates}' --json \
	-i "$T/a2.pdf" "$T/bad.pdf" "$T/c2.pdf"
check_status 4 "a damaged file in the middle of a Bates batch: the worst status"
check_eq "$(jget "$T/out" 'd["ok"], d.get("bates_last")' 1)" "[true, 5]" \
	"the file before it is stamped (1 to 5)"
check_eq "$(jget "$T/out" 'd["ok"], d["exit"]' 3)" "[false, 1]" \
	"the file after it is not stamped (exit 1)"
check_grep 'Bates numbers of this file are unknown' "$T/err" "the message says why"
check_eq "$(sha256sum <"$T/c2.pdf")" "$sha_c" "the file after it is unchanged"

# --ledger and --shard cannot number every file
for opt in "--ledger $T/ledger" "--shard 1/2"; do
	cp "$T/c0.pdf" "$T/c3.pdf"
	# shellcheck disable=SC2086
	run "$PDFSTAMP" stamp --password-file "$OPW" --text '{bates}' $opt -i "$T/c3.pdf"
	check_status 2 "{bates} with ${opt%% *} is a usage error"
	check_true cmp -s "$T/c0.pdf" "$T/c3.pdf" "{bates} with ${opt%% *}: nothing written"
done

# ---- syntax ------------------------------------------------------------------------
cp "$T/c0.pdf" "$T/e.pdf"
run "$PDFSTAMP" stamp --password-file "$OPW" --text 'Ref {{page}} {page}}}' -i "$T/e.pdf"
check_status 0 "{{ and }} are braces"
has_line mu "$T/e.pdf" 1 "Ref {page} 1}" "mutool: {{page}} {page}}} is drawn as {page} 1}"
has_line pp "$T/e.pdf" 1 "Ref {page} 1}" "pdftotext: the same"
for bad in '{pag}' 'Total {pages' '{date:}' '{ page}'; do
	cp "$T/c0.pdf" "$T/e2.pdf"
	run "$PDFSTAMP" stamp --password-file "$OPW" --text "$bad" --json -i "$T/e2.pdf"
	check_status 2 "--text '$bad' is a usage error"
	check_true cmp -s "$T/c0.pdf" "$T/e2.pdf" "--text '$bad': nothing written"
	check_grep '"ok":false' "$T/out" "--text '$bad': a --json failure line"
done
run "$PDFSTAMP" stamp --password-file "$OPW" --text '{pag}' -i "$T/e2.pdf"
check_grep 'unknown variable \{pag\}' "$T/err" "the message names the unknown variable"
run "$PDFSTAMP" stamp --password-file "$OPW" --no-date --small-line x -i "$T/e2.pdf"
check_status 2 "--no-date with --small-line is a usage error"
cp "$T/c0.pdf" "$T/e3.pdf"
run "$PDFSTAMP" stamp --password-file "$OPW" --date "$WHEN" --author 'QA' -i "$T/e3.pdf"
has_line mu "$T/e3.pdf" 1 "QA  2026-03-01 09:05" "the default small line: author and date"
cp "$T/c0.pdf" "$T/e4.pdf"
run "$PDFSTAMP" stamp --password-file "$OPW" --date "$WHEN" -i "$T/e4.pdf"
has_line pp "$T/e4.pdf" 1 "2026-03-01 09:05" "without an author the date alone"

# ---- a per-page text shares one font subset ----------------------------------------
cp "$T/a0.pdf" "$T/cjk.pdf"
run "$PDFSTAMP" stamp --password-file "$OPW" --page all --text $'\xe6\x89\xbf\xe8\xaa\x8d {page}' \
	-i "$T/cjk.pdf"
check_status 0 "a CJK text with {page} on 5 pages"
qpdf --password-file="$UPW" --json "$T/cjk.pdf" >"$T/cjk.json" 2>/dev/null
check_eq "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
objs = d["qpdf"][1]
ff = sum(1 for v in objs.values() if isinstance(v, dict) and "value" in v
         and isinstance(v["value"], dict)
         and any(k in v["value"] for k in ("/FontFile", "/FontFile2", "/FontFile3")))
print(ff)' "$T/cjk.json")" 1 "five per-page appearances embed one font subset"
for p in 1 5; do
	has_line mu "$T/cjk.pdf" $p $'\xe6\x89\xbf\xe8\xaa\x8d '$p "CJK page $p (mutool)"
done

# ---- 2,000 pages with {page} ------------------------------------------------------
mkpdf 2000 "$T/big.pdf" || fail "making 2,000 pages"
start=$(date +%s%N)
run "$PDFSTAMP" stamp --password-file "$OPW" --page all --text 'Page {page} of {pages}' \
	--json -i "$T/big.pdf"
end=$(date +%s%N)
check_status 0 "2,000 pages with {page}"
bytes=$(jget "$T/out" 'd["bytes_appended"]')
check_true test "$bytes" -le 2000000 "2,000 pages append at most 2 MB ($bytes bytes)"
echo "# 2,000 pages with {page}: $bytes bytes in $(((end - start) / 1000000)) ms (not judged here)"
has_line pp "$T/big.pdf" 1999 "Page 1999 of 2000" "page 1,999 says Page 1999 of 2000 (pdftotext)"
qcheck "$T/big.pdf" "$UPW" "qpdf --check of the 2,000-page file"

finish
