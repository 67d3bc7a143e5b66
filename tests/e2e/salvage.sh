#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/salvage.sh - a file whose newest revision cannot be read:
# `audit` opens it as the prefix that can (PDFSTAMP_OPEN_SALVAGE), the
# other commands refuse it as before (exit 4).
#
# Input: samples/plain-2page.pdf encrypted by qpdf (AES-256, R6), a second
# revision appended by `pdfstamp stamp`, and that revision then damaged
# (its startxref at garbage; its /Prev into the header) or followed by
# junk that only looks like a section.  What audit reports about the
# damage is audit.c's; here: it is not exit 4, and its bytes_read stays
# within the readable prefix.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf

S=$TOP_SRCDIR/samples
qpdf --encrypt u o 256 -- "$S/plain-2page.pdf" "$T/enc.pdf" || { fail "qpdf --encrypt"; finish; }
printf 'u\n' >"$T/pw"
run "$PDFSTAMP" stamp --password-file "$T/pw" -o "$T/two.pdf" "$T/enc.pdf"
check_status 0 "stamp adds a second revision"
BASE=$(stat -c %s "$T/enc.pdf")

# damage KIND: $T/bad.pdf from two.pdf
damage() {
	python3 - "$T/two.pdf" "$T/bad.pdf" "$1" <<'PY'
import re, sys
src, dst, kind = sys.argv[1], sys.argv[2], sys.argv[3]
d = open(src, "rb").read()
i = d.rfind(b"startxref")
if kind == "startxref":
    d = d[:i] + b"startxref\n17\n%%EOF\n"
elif kind == "prev":
    j = d.rfind(b"/Prev", 0, i)
    m = re.match(rb"/Prev\s+(\d+)", d[j:])
    d = d[:j] + b"/Prev " + b"9".rjust(len(m.group(1)), b" ") + d[j + m.end():]
open(dst, "wb").write(d)
PY
}

for kind in startxref prev; do
	damage $kind
	run "$PDFSTAMP" info --password-file "$T/pw" "$T/bad.pdf"
	check_status 4 "$kind: info refuses the file as before"
	run "$PDFSTAMP" stamp --password-file "$T/pw" -o "$T/out.pdf" "$T/bad.pdf"
	check_status 4 "$kind: stamp refuses the file as before"
	check_true test ! -e "$T/out.pdf" "$kind: no output"
	run "$PDFSTAMP" audit --json --password-file "$T/pw" "$T/bad.pdf"
	check_ne "$RC" 4 "$kind: audit reads the prefix (exit $RC, not 4)"
	check_eq "$(jget "$T/out" 'len(d["revisions"])')" 1 "$kind: audit sees the readable revision"
	check_eq "$(jget "$T/out" 'd["bytes_read"] <= '"$BASE")" true \
		"$kind: audit reads nothing past the prefix ($BASE bytes)"
done

# A broken first (only) revision: audit fails as before, with the message.
python3 - "$T/enc.pdf" "$T/first.pdf" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
i = d.rfind(b"startxref")
open(sys.argv[2], "wb").write(d[:i] + b"startxref\n17\n%%EOF\n")
PY
run "$PDFSTAMP" audit --password-file "$T/pw" "$T/first.pdf"
check_status 4 "a broken only revision: audit refuses it"
run "$PDFSTAMP" info --password-file "$T/pw" "$T/first.pdf"
cp "$T/err" "$T/err.info"
run "$PDFSTAMP" audit --password-file "$T/pw" "$T/first.pdf"
check_eq "$(cat "$T/err")" "$(cat "$T/err.info")" "... with the message info gives"

finish
