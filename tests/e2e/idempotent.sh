#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/idempotent.sh - re-runs never stamp twice (issue 32, stamp IDs;
# pdfstamp(1) "Stamp IDs", src/stampid.c).
#
# Every annotation's /NM is read back by qpdf (which decrypts it with the
# password: an independent reader), never by pdfstamp itself.
#   A. The same stamp again writes nothing: exit 0, "skipped":"already
#      stamped", the file's SHA-256 and mtime unchanged, no journal, and
#      (under strace, when it can trace) no fsync or fdatasync at all.
#   B. --page 1 then --page all (and --pages 1 then --pages all) stamps
#      only the other pages: every page
#      ends with exactly one annotation, whose /NM is ID.PAGE; the JSON
#      counts pages_stamped and pages_already.
#   C. Other options make another ID and new stamps; --date now is the
#      default spelled out (same ID); a fixed date is another stamp.
#   D. --id: the ID given decides (other text, same ID: skipped); a bad ID
#      is a usage error that leaves the file alone.
#   E. A batch (--jobs 2, --page all) killed at fault points chosen at
#      random (the PDFSTAMP_FAULT hook) and run again, without a ledger,
#      ends with exactly one stamp per page per file; a third run changes
#      no file (hashes and mtimes).  With --ledger, the skipped files are
#      done ("unchanged":true).
#   F. Hostile /Annots (appended by someone without the key): null,
#      numbers, strings, arrays, references to missing objects, an
#      annotation whose /NM does not decrypt, one whose /NM names a missing
#      object: the page is still stamped, with warnings, and a re-run
#      finds the stamp.  A page with more than 100,000 annotations is
#      refused (exit 4), the file unchanged.
#   G. {bates} and {page} across re-runs: --page 1, then --page all: each
#      page has its own number once, as in one run (pdftotext).  ({bates}
#      counts the selected pages, so a run over another selection numbers
#      by that one: pdfstamp(1) Stamp IDs.)
#   H. A skipped file needs no permission: the pre-flight comes after the
#      test, so a re-run with a password that may not annotate is exit 0.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf

e2e_inputs qpdf-r6-table qpdf-r6-xrefstream
W=$T/w
mkdir -p "$W"

# nms FILE: one line per page, "PAGE NM1,NM2,..." (each annotation's /NM as
# qpdf decrypts it, "-" for one without), in page order.
nms() {
	qpdf --password-file="$UPW" --json --json-key=pages --json-key=qpdf "$1" 2>/dev/null |
	python3 -c '
import json, sys
d = json.load(sys.stdin)
objs = d["qpdf"][1]
def get(v):
    while isinstance(v, str) and v.endswith(" R") and ("obj:" + v) in objs:
        v = objs["obj:" + v].get("value")
    return v
for p in d["pages"]:
    page = get(p["object"])
    annots = get(page.get("/Annots")) or []
    out = []
    for a in annots:
        a = get(a)
        nm = get(a.get("/NM")) if isinstance(a, dict) else None
        out.append(nm[2:] if isinstance(nm, str) and nm.startswith("u:") else "-")
    print(p["pageposfrom1"], ",".join(out))
'
}

# state FILE: its SHA-256 and its mtime to the nanosecond.
state() { printf '%s %s\n' "$(sha256sum <"$1" | cut -d' ' -f1)" "$(stat -c %y "$1")"; }

# ===========================================================================
# A. the same stamp again
# ===========================================================================
F=$W/a.pdf
cp "$D/qpdf-r6-table.pdf" "$F"
run "$PDFSTAMP" stamp -i --json --password-file "$UPW" "$F"
check_status 0 "A: first stamp"
ID=$(jget "$T/out" 'd["id"]' | tr -d '"')
check_true python3 -c 'import re,sys; sys.exit(not re.fullmatch(r"[A-Za-z0-9_-]{10}", sys.argv[1]))' "$ID" \
	"A: the default ID is 10 base64url characters ($ID)"
check_eq "$(jget "$T/out" '[d["pages_stamped"], d["pages_already"]]')" "[1, 0]" "A: one page stamped"
check_eq "$(nms "$F" | sed -n 1p)" "1 $ID.1" "A: qpdf reads /NM = ID.1 on page 1"
before=$(state "$F")
run "$PDFSTAMP" stamp -i --json --password-file "$UPW" "$F"
check_status 0 "A: the same stamp again: exit 0"
check_eq "$(jget "$T/out" 'd["skipped"]')" '"already stamped"' "A: --json says skipped, already stamped"
check_eq "$(jget "$T/out" '[d["id"], d["pages_stamped"], d["pages_already"], d["ok"]]')" \
	"[\"$ID\", 0, 1, true]" "A: the same ID, nothing stamped, one page already"
check_eq "$(state "$F")" "$before" "A: SHA-256 and mtime unchanged"
check_eq "$(ls -A "$W" | grep -c pdfstamp-)" 0 "A: no journal or temporary file"
run "$PDFSTAMP" stamp -i -v --password-file "$UPW" "$F"
check_grep "^skipped .*a\.pdf: already stamped \(ID $ID, 1 page\)" "$T/out" "A: -v says skipped"
run "$PDFSTAMP" stamp -o "$W/a-out.pdf" --json --password-file "$UPW" "$F"
check_status 0 "A: -o with every page stamped: exit 0"
check_true test ! -e "$W/a-out.pdf" "A: -o with every page stamped writes no output file"
check_eq "$(ls -A "$W" | grep -c pdfstamp-)" 0 "A: -o skipped: no temporary file left"
if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true >/dev/null 2>&1; then
	RC=0
	strace -f -qq -o "$T/strace" -e trace=fsync,fdatasync,sync,syncfs,sync_file_range,msync,openat \
		"$PDFSTAMP" stamp -i --json --password-file "$UPW" "$F" >"$T/out" 2>"$T/err" || RC=$?
	check_status 0 "A: the re-run under strace"
	check_eq "$(grep -cE '^[0-9]+ +(fsync|fdatasync|sync|syncfs|sync_file_range|msync)\(' "$T/strace")" 0 \
		"A: strace: the skipped file costs no fsync"
	# (the libtool wrapper's shell opens /dev/null for its redirections)
	grep -E 'openat\(.*(O_CREAT|O_TMPFILE)' "$T/strace" | grep -v '"/dev/null"' >"$T/creat" || true
	check_eq "$(cat "$T/creat")" "" "A: strace: nothing is created"
	check_eq "$(state "$F")" "$before" "A: still unchanged"
else
	skip "A: no fsync under strace (strace is absent or cannot trace here)"
fi

# ===========================================================================
# B. --page 1, then --page all
# ===========================================================================
F=$W/b.pdf
cp "$D/qpdf-r6-xrefstream.pdf" "$F"
run "$PDFSTAMP" stamp -i --json --page 1 --password-file "$UPW" "$F"
check_status 0 "B: --page 1"
ID=$(jget "$T/out" 'd["id"]' | tr -d '"')
run "$PDFSTAMP" stamp -i --json --page all --password-file "$UPW" "$F"
check_status 0 "B: --page all"
check_eq "$(jget "$T/out" '[d["id"], d["pages_stamped"], d["pages_already"], len(d["objects"])]')" \
	"[\"$ID\", 2, 1, 2]" "B: the same ID; two pages stamped, one already"
check_eq "$(nms "$F" | tr '\n' ' ')" "1 $ID.1 2 $ID.2 3 $ID.3 " \
	"B: qpdf: every page has exactly one annotation, /NM ID.PAGE"
before=$(state "$F")
for sel in all last 2; do
	run "$PDFSTAMP" stamp -i --json --page "$sel" --password-file "$UPW" "$F"
	check_eq "$(jget "$T/out" 'd.get("skipped")')" '"already stamped"' "B: --page $sel again: skipped"
done
check_eq "$(state "$F")" "$before" "B: nothing written by the re-runs"
# the same with --pages: 1, then all
F=$W/b2.pdf
cp "$D/qpdf-r6-xrefstream.pdf" "$F"
run "$PDFSTAMP" stamp -i --json --pages 1 --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" '[d["id"], d["pages_stamped"]]')" "[\"$ID\", 1]" \
	"B: --pages 1: the same ID as --page 1 (the selection is not part of it)"
run "$PDFSTAMP" stamp -i --json --pages all --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" '[d["pages_stamped"], d["pages_already"]]')" "[2, 1]" \
	"B: then --pages all: the two others"
run "$PDFSTAMP" stamp -i --json --pages 'all,!2' --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" '[d.get("skipped"), d["pages_already"]]')" '["already stamped", 2]' \
	"B: --pages all,!2 again: skipped"
check_eq "$(nms "$F" | tr '\n' ' ')" "1 $ID.1 2 $ID.2 3 $ID.3 " "B: --pages: one stamp per page (qpdf)"

# ===========================================================================
# C. other options, another ID
# ===========================================================================
run "$PDFSTAMP" stamp -i --json --page all --date now --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" '[d.get("skipped"), d["id"]]')" "[\"already stamped\", \"$ID\"]" \
	"C: --date now is the default: the same ID"
run "$PDFSTAMP" stamp -i --json --page all --text PAID --password-file "$UPW" "$F"
check_status 0 "C: --text PAID"
ID2=$(jget "$T/out" 'd["id"]' | tr -d '"')
check_ne "$ID2" "$ID" "C: another text, another ID"
check_eq "$(jget "$T/out" '[d["pages_stamped"], d["pages_already"]]')" "[3, 0]" "C: all pages stamped"
run "$PDFSTAMP" stamp -i --json --page all --date 2026-01-02 --password-file "$UPW" "$F"
ID3=$(jget "$T/out" 'd["id"]' | tr -d '"')
check_eq "$(jget "$T/out" 'd["pages_stamped"]')" 3 "C: a fixed date is another stamp"
check_eq "$(nms "$F" | tr '\n' ' ')" \
	"1 $ID.1,$ID2.1,$ID3.1 2 $ID.2,$ID2.2,$ID3.2 3 $ID.3,$ID2.3,$ID3.3 " \
	"C: qpdf: three stamps per page, one of each ID"
run "$PDFSTAMP" stamp -i --json --page all --date 2026-01-02 --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" 'd.get("skipped")')" '"already stamped"' "C: the fixed date again: skipped"

# ===========================================================================
# D. --id
# ===========================================================================
F=$W/d.pdf
cp "$D/qpdf-r6-xrefstream.pdf" "$F"
run "$PDFSTAMP" stamp -i --json --page 2 --id batch_7-A --password-file "$UPW" "$F"
check_status 0 "D: --id batch_7-A"
check_eq "$(jget "$T/out" 'd["id"]')" '"batch_7-A"' "D: the JSON reports the ID given"
check_eq "$(nms "$F" | tr '\n' ' ')" "1  2 batch_7-A.2 3  " "D: qpdf: /NM batch_7-A.2 on page 2 only"
run "$PDFSTAMP" stamp -i --json --page all --id batch_7-A --text OTHER --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" '[d["pages_stamped"], d["pages_already"]]')" "[2, 1]" \
	"D: the ID decides, not the text: pages 1 and 3 only"
before=$(state "$F")
for bad in "" "a.b" "a b" "123456789012345678901234567890123" "caf$(printf '\303\251')"; do
	run "$PDFSTAMP" stamp -i --id "$bad" --password-file "$UPW" "$F"
	check_status 2 "D: --id '$bad' is a usage error"
done
check_eq "$(state "$F")" "$before" "D: the file is untouched by the refusals"

# ===========================================================================
# E. a batch killed at random fault points, run again
# ===========================================================================
# check_batch DIR DESC: every page of every file has exactly one annotation
# and its /NM is $BID.PAGE
check_batch() {
	local f n=0 bad=""
	for f in "$1"/f*.pdf; do
		if [ "$(nms "$f" | tr '\n' ' ')" = "1 $BID.1 2 $BID.2 3 $BID.3 " ]; then
			n=$((n + 1))
		else
			bad="$bad $(basename "$f"): $(nms "$f" | tr '\n' ' ')"
		fi
	done
	check_eq "$n" 6 "$2: every page of the six files has exactly one stamp of the ID$bad"
}
run "$PDFSTAMP" stamp -o "$T/e-probe.pdf" --json --page all --note batch --password-file "$UPW" \
	"$D/qpdf-r6-xrefstream.pdf"
BID=$(jget "$T/out" 'd["id"]' | tr -d '"')
if have_faults; then
	for pt in after-journal after-write after-fsync fsync; do
		E_W=$T/e-$pt
		rm -rf "$E_W" && mkdir -p "$E_W"
		for i in 1 2 3 4 5 6; do cp "$D/qpdf-r6-xrefstream.pdf" "$E_W/f$i.pdf"; done
		k=$((RANDOM % 6 + 1))
		RC=0
		PDFSTAMP_FAULT="kill:$pt:$k" "$PDFSTAMP_HOOKED" stamp -i --json --jobs 2 --page all \
			--note batch --password-file "$UPW" "$E_W"/f*.pdf >"$T/out" 2>"$T/err" || RC=$?
		check_eq "$RC" 137 "E: killed at $pt:$k"
		run "$PDFSTAMP" stamp -i --json --jobs 2 --page all --note batch --password-file "$UPW" \
			"$E_W"/f*.pdf
		check_status 0 "E: $pt:$k: the same command again"
		check_batch "$E_W" "E: $pt:$k"
		check_eq "$(find "$E_W" -name '*.pdfstamp-*' | wc -l)" 0 "E: $pt:$k: no journal left"
		for f in "$E_W"/f*.pdf; do state "$f"; done >"$T/e-before"
		run "$PDFSTAMP" stamp -i --json --jobs 2 --page all --note batch --password-file "$UPW" \
			"$E_W"/f*.pdf
		check_status 0 "E: $pt:$k: a third run"
		check_eq "$(grep -c '"skipped":"already stamped"' "$T/out")" 6 "E: $pt:$k: every file skipped"
		for f in "$E_W"/f*.pdf; do state "$f"; done >"$T/e-after"
		check_true cmp -s "$T/e-before" "$T/e-after" "E: $pt:$k: hashes and mtimes unchanged"
	done
	# with a ledger: killed, run again; then a run without the ledger's
	# knowledge of the files (a new ledger) skips them as stamped
	E_W=$T/e-ledger
	rm -rf "$E_W" && mkdir -p "$E_W"
	for i in 1 2 3 4 5 6; do cp "$D/qpdf-r6-xrefstream.pdf" "$E_W/f$i.pdf"; done
	k=$((RANDOM % 6 + 1))
	RC=0
	PDFSTAMP_FAULT="kill:after-fsync:$k" "$PDFSTAMP_HOOKED" stamp -i --json --jobs 2 --page all \
		--note batch --ledger "$T/ledger" --password-file "$UPW" "$E_W"/f*.pdf >"$T/out" 2>"$T/err" ||
		RC=$?
	check_eq "$RC" 137 "E: ledger: killed at after-fsync:$k"
	run "$PDFSTAMP" stamp -i --json --jobs 2 --page all --note batch --ledger "$T/ledger" \
		--password-file "$UPW" "$E_W"/f*.pdf
	check_status 0 "E: ledger: the same command again"
	check_batch "$E_W" "E: ledger"
	for f in "$E_W"/f*.pdf; do state "$f"; done >"$T/e-before"
	run "$PDFSTAMP" stamp -i --json --jobs 2 --page all --note batch --ledger "$T/ledger2" \
		--password-file "$UPW" "$E_W"/f*.pdf
	check_eq "$(grep -c '"skipped":"already stamped"' "$T/out")" 6 "E: a new ledger: every file skipped"
	check_eq "$(grep -c '"state":"done".*"unchanged":true' "$T/ledger2")" 6 \
		"E: ... and recorded as done, unchanged"
	for f in "$E_W"/f*.pdf; do state "$f"; done >"$T/e-after"
	check_true cmp -s "$T/e-before" "$T/e-after" "E: a new ledger: hashes and mtimes unchanged"
	run "$PDFSTAMP" stamp -i --json --jobs 2 --page all --note batch --ledger "$T/ledger2" \
		--password-file "$UPW" "$E_W"/f*.pdf
	check_eq "$(grep -c '"skipped":"done in the ledger"' "$T/out")" 6 \
		"E: a second run with that ledger skips them without opening them"
else
	skip "E: killed batches (no tests/pdfstamp-fault)"
fi

# ===========================================================================
# F. hostile /Annots
# ===========================================================================
F=$W/f.pdf
python3 - "$TOP_SRCDIR/tests/e2e/fixtures" "$D/qpdf-r6-table.pdf" "$F" "$W/huge.pdf" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
from attack import append, last_trailer, obj_body
data = open(sys.argv[2], "rb").read()
trailer, _ = last_trailer(data)
size = int(re.search(rb"/Size\s+(\d+)", trailer).group(1))
root = int(re.search(rb"/Root\s+(\d+)", trailer).group(1))
pages = int(re.search(rb"/Pages\s+(\d+)", obj_body(data, root)).group(1))
kids = [int(k) for k in re.findall(rb"(\d+)\s+0\s+R", re.search(rb"/Kids\s*\[([^\]]*)\]",
        obj_body(data, pages)).group(1))]
n = size
objs = {
    n: b"<< /Subtype /Text /Rect [0 0 1 1] /NM <0102030405> >>",  # does not decrypt
    n + 1: b"42",
    n + 2: b"<< /Subtype /Text /Rect [0 0 1 1] /NM 99999 0 R >>",  # a missing object
    n + 3: b"<< /Subtype /Text /Rect [0 0 1 1] /NM %d 0 R >>" % (n + 4),
    n + 4: b"<0011223344556677>",  # half a block: does not decrypt
    n + 5: b"[" + b" null" * 100001 + b" ]",
}
def with_annots(num, annots):
    body = obj_body(data, num)
    body = re.sub(rb"/Annots\s*(\[[^\]]*\]|\d+\s+\d+\s+R)", b"", body)
    assert body.endswith(b">>")
    return body[:-2] + b" /Annots " + annots + b" >>"
# (no string directly in the page: one that does not decrypt makes the
# page itself unreadable, which is refused, exit 4, as any damaged page)
objs[kids[0]] = with_annots(kids[0], b"[null 7 /S [1 2] << /NM /N >> %d 0 R %d 0 R %d 0 R "
                            b"%d 0 R 99998 0 R]" % (n, n + 1, n + 2, n + 3))
t = re.sub(rb"/Size\s+\d+", b"/Size %d" % (n + 6), trailer)
t = re.sub(rb"/Prev\s+\d+", b"", t)
open(sys.argv[3], "wb").write(append(data, {k: v for k, v in objs.items() if k != n + 5}, t))
huge = dict(objs)
huge[kids[0]] = with_annots(kids[0], b"%d 0 R" % (n + 5))
open(sys.argv[4], "wb").write(append(data, huge, t))
PY
run "$PDFSTAMP" stamp -i --json --password-file "$UPW" "$F"
check_status 0 "F: a page whose /Annots holds junk is stamped"
check_grep 'cannot be read' "$T/err" "F: ... with a warning for the entries that cannot be read"
HID=$(jget "$T/out" 'd["id"]' | tr -d '"')
nms "$F" >"$T/nms"
check_grep "^1 .*,$HID\.1\$" "$T/nms" "F: qpdf: the stamp is the last of page 1's annotations"
before=$(state "$F")
run "$PDFSTAMP" stamp -i --json --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" '[d.get("skipped"), d["pages_already"]]')" '["already stamped", 1]' \
	"F: a re-run finds the stamp behind the junk"
check_eq "$(state "$F")" "$before" "F: ... and writes nothing"
before=$(state "$W/huge.pdf")
run "$PDFSTAMP" stamp -i --json --password-file "$UPW" "$W/huge.pdf"
check_status 4 "F: a page with 100,001 annotations is refused"
check_grep 'more than the 100000' "$T/err" "F: ... saying why"
check_eq "$(state "$W/huge.pdf")" "$before" "F: ... the file unchanged"

# ===========================================================================
# G. per-page text and {bates} across re-runs: the pages stamped later get
#    the numbers they would have had in one run (poppler extracts them)
# ===========================================================================
if command -v pdftotext >/dev/null 2>&1; then
	F=$W/g.pdf
	cp "$D/qpdf-r6-xrefstream.pdf" "$F"
	run "$PDFSTAMP" stamp -i --json --page 1 --text 'B{bates} P{page}' --no-date \
		--password-file "$UPW" "$F"
	check_status 0 "G: {bates} on page 1"
	run "$PDFSTAMP" stamp -i --json --page all --text 'B{bates} P{page}' --no-date \
		--password-file "$UPW" "$F"
	check_eq "$(jget "$T/out" '[d["pages_stamped"], d["pages_already"], d["bates_first"], d["bates_last"]]')" \
		"[2, 1, 1, 3]" "G: then all pages: two stamped, one already; the file has numbers 1 to 3"
	got=""
	for p in 1 2 3; do
		got="$got $(pdftotext -upw "$(head -n 1 "$UPW")" -f $p -l $p "$F" - 2>/dev/null |
			grep -oE 'B[0-9]+ P[0-9]+' | tr '\n' ' ')"
	done
	check_eq "$got" " B000001 P1  B000002 P2  B000003 P3 " \
		"G: pdftotext: each page has its own number once (page 1's from the first run)"
	run "$PDFSTAMP" stamp -i --json --page all --text 'B{bates} P{page}' --no-date \
		--password-file "$UPW" "$F"
	check_eq "$(jget "$T/out" '[d.get("skipped"), d["bates_first"], d["bates_last"]]')" \
		'["already stamped", 1, 3]' "G: a third run skips and still reports the file's numbers"
else
	skip "G: {bates} across re-runs (no pdftotext)"
fi

# ===========================================================================
# H. a file that needs nothing written needs no permission: stamped with
#    the owner password, then run again with the empty user password of a
#    file that permits no annotations (P bit 6 clear): skipped, exit 0;
#    a new stamp with that password is still refused (exit 5)
# ===========================================================================
F=$W/h.pdf
cp "$TOP_SRCDIR/samples/r6-empty-user.pdf" "$F"
run "$PDFSTAMP" stamp -i --json --password-file "$TOP_SRCDIR/samples/owner.pw" "$F"
check_status 0 "H: stamped with the owner password"
before=$(state "$F")
run "$PDFSTAMP" stamp -i --json "$F"
check_status 0 "H: the same stamp with the empty user password (no annotate permission)"
check_eq "$(jget "$T/out" 'd.get("skipped")')" '"already stamped"' "H: ... is skipped"
check_eq "$(state "$F")" "$before" "H: ... and writes nothing"
run "$PDFSTAMP" stamp -i --json --text OTHER "$F"
check_status 5 "H: another stamp with that password is refused"
check_eq "$(state "$F")" "$before" "H: ... the file unchanged"

finish
