#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/stamps.sh - `pdfstamp stamps` and `pdfstamp unstamp` (issue 32)
# against independent readers.
#
# 1. An encrypted file (qpdf R6) with stamps from several revisions and two
#    producers: pdfstamp's own (KEEP on every page, REMOVE ME on page 2),
#    MuPDF's (fixtures/stamps.js: a later revision that gives REMOVE ME the
#    /NM Kx3_a9Qm2Z.2), an approval signature by poppler's pdfsig, then
#    pdfstamp's LATE on page 1 (given the /NM late_id.1 by MuPDF), MuPDF's
#    /FreeText late_id.3 and a /Stamp other-id.2.  `stamps --json` must list
#    what MuPDF (stamps.js list) and pdf.js (fixtures/pdfjs-stamps.js) list:
#    page, object, subtype, contents, author; each stamp's revision must be
#    the one whose step added it and its revision_end that step's file size
#    (a later revision that only changed an annotation does not move it),
#    and "signed" true exactly for the revisions pdfsig's signature covers.
# 2. `unstamp --id Kx3_a9Qm2Z` is refused (the stamp was there when the
#    approval signature was made: audit would call its removal a
#    violation); `unstamp --id late_id` removes both stamps of that ID:
#    neither MuPDF nor pdf.js lists them any more, poppler renders pages 1
#    and 3 as the signed revision (pdftoppm), qpdf --check passes, the
#    signature stays valid over the same byte range (pdfsig), audit says
#    ok, and a second run writes nothing; without the annotation permission
#    the user password is refused, the owner password allowed.
# 3. Certifications (fixtures/audit.js certify, after a stamp with an ID):
#    P=2 refuses the removal (exit 5) with the file unchanged (sha256, -i
#    and -o); P=3 allows it, and audit judges that revision ok; a removal
#    under P=2 written by MuPDF is a violation for audit.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdfsig
need certutil
need pdftoppm
need node
PDFJS=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}
[ -f "$PDFJS" ] || { echo "SKIP: pdf.js ($PDFJS) is not installed (Debian: libjs-pdf)"; exit 77; }

SRC=$TOP_SRCDIR/samples/plain-3page.pdf
JS=$TOP_SRCDIR/tests/e2e/fixtures/stamps.js
AJS=$TOP_SRCDIR/tests/e2e/fixtures/audit.js
PJ=$TOP_SRCDIR/tests/e2e/fixtures/pdfjs-stamps.js
U='user pw'
printf '%s\n' "$U" >"$T/u.pw"
printf 'owner pw\n' >"$T/o.pw"
UPW=$T/u.pw

# mu ACTION IN OUT ARGS...: a revision written by MuPDF
mu() {
	local act=$1 in=$2 out=$3
	shift 3
	if ! mutool run "$JS" "$act" "$in" "$U" "$out" "$@" >"$T/mu.log" 2>&1; then
		fail "MuPDF $act on $(basename "$in")" "$(cat "$T/mu.log")"
		return 1
	fi
}
# the three listings, as PAGE<TAB>OBJECT<TAB>SUBTYPE<TAB>CONTENTS<TAB>AUTHOR lines
ours() {
	"$PDFSTAMP" stamps --json --password-file "$UPW" "$1" >"$T/ours.json" 2>"$T/ours.err" &&
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["stamps"]:
    print("\t".join(str(x) for x in (s["page"], s["object"], s["subtype"], s["contents"], s["author"] or "")))
' "$T/ours.json"
}
mupdf() { mutool run "$JS" list "$1" "$U" | cut -f 1-3,5-6; }
pdfjs() { node "$PJ" "$1" "$U"; }
# same_list FILE DESC: the three readers list the same stamps
same_list() {
	ours "$1" >"$T/l-ours.txt"
	mupdf "$1" >"$T/l-mu.txt"
	pdfjs "$1" >"$T/l-pj.txt"
	check_true test -s "$T/l-ours.txt" "$2: pdfstamp lists stamps"
	if cmp -s "$T/l-ours.txt" "$T/l-mu.txt"; then ok "$2: stamps lists what MuPDF lists"; else
		fail "$2: stamps lists what MuPDF lists" "$(diff "$T/l-ours.txt" "$T/l-mu.txt")"; fi
	if cmp -s "$T/l-ours.txt" "$T/l-pj.txt"; then ok "$2: stamps lists what pdf.js lists"; else
		fail "$2: stamps lists what pdf.js lists" "$(diff "$T/l-ours.txt" "$T/l-pj.txt")"; fi
}
# field FILE EXPR: a value of stamps' JSON line for FILE's stamps
sj() { jget "$T/ours.json" "$1"; }
render() { pdftoppm -r 50 -f "$2" -l "$2" -opw 'owner pw' "$1" "$T/r" && cat "$T"/r-*.ppm && rm -f "$T"/r-*.ppm; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------------------
# A throwaway NSS database and a self-signed signing certificate (signed.sh)
NSS=$T/nss
mkdir -p "$NSS"
head -c 256 /dev/urandom >"$T/noise"
if ! certutil -N -d "sql:$NSS" --empty-password >"$T/nss.log" 2>&1 ||
	! certutil -S -x -d "sql:$NSS" -n pdfstamp-test -s "CN=pdfstamp test signer" -t "CT,C,C" \
		-k rsa -g 2048 -z "$T/noise" -v 12 --keyUsage digitalSignature,nonRepudiation \
		>>"$T/nss.log" 2>&1; then
	fail "making a throwaway NSS database" "$(cat "$T/nss.log")"
	finish
fi

# ===========================================================================
# Part 1: the file, revision by revision
# ===========================================================================
qpdf --encrypt "$U" 'owner pw' 256 -- "$SRC" "$T/r1.pdf"
run "$PDFSTAMP" stamps --json --password-file "$UPW" "$T/r1.pdf"
check_status 0 "stamps on a file without stamps"
check_eq "$(jget "$T/out" '[d["stamps"], d["pages"], d["revisions"], d["signatures"]]')" "[[], 3, 1, 0]" \
	"no stamps, 3 pages, 1 revision, no signature"

run "$PDFSTAMP" stamp --page all --text KEEP --author Alice --password-file "$UPW" -o "$T/r2.pdf" "$T/r1.pdf"
check_status 0 "r2: pdfstamp stamps every page"
run "$PDFSTAMP" stamp --page 2 --text "REMOVE ME" --note "remove me" --author Dave \
	--password-file "$UPW" --json -o "$T/r3.pdf" "$T/r2.pdf"
check_status 0 "r3: pdfstamp stamps page 2"
B=$(objs_of "$T/out")
mu setnm "$T/r3.pdf" "$T/r4.pdf" "$B" "Kx3_a9Qm2Z.2"
if ! pdfsig -add-signature -nssdir "sql:$NSS" -nick pdfstamp-test -upw "$U" -reason "e2e test" \
	"$T/r4.pdf" "$T/r5.pdf" >"$T/sign.log" 2>&1; then
	fail "r5: pdfsig signs the file" "$(cat "$T/sign.log")"
	finish
fi
run "$PDFSTAMP" stamp --page 1 --text LATE --author Erin --password-file "$UPW" --json \
	-o "$T/r6.pdf" "$T/r5.pdf"
check_status 0 "r6: pdfstamp stamps page 1 after the signature"
L=$(objs_of "$T/out")
mu setnm "$T/r6.pdf" "$T/r7.pdf" "$L" "late_id.1"
mu add "$T/r7.pdf" "$T/r8.pdf" 3 FreeText "late_id.3" "free text by MuPDF" "Carol"
mu add "$T/r8.pdf" "$T/r9.pdf" 2 Stamp "other-id.2" "Geprüft von MuPDF" "Zoë"
F=$T/r9.pdf
sigstate "$F" >"$T/sig0.txt"
check_grep 'Signature Validation: Signature is Valid\.' "$T/sig0.txt" "r9: pdfsig's signature is valid"

same_list "$F" "r9"
run "$PDFSTAMP" stamps --json --password-file "$UPW" "$F"
check_status 0 "stamps --json on r9"
cp "$T/out" "$T/ours.json"
cp "$T/out" "$T/r9.json"
check_eq "$(sj '[d["revisions"], d["signatures"], d["skipped"], len(d["stamps"])]')" "[9, 1, 0, 7]" \
	"r9: 9 revisions, 1 signature, 7 stamps"
# expected: page, subtype, id, revision (the step that added it), signed
check_eq "$(sj '[[s["page"], s["subtype"], s["id"], s["revision"], s["signed"]] for s in d["stamps"]]')" \
	'[[1, "Stamp", null, 2, true], [1, "Stamp", "late_id", 6, false], [2, "Stamp", null, 2, true], [2, "Stamp", "Kx3_a9Qm2Z", 3, true], [2, "Stamp", "other-id", 9, false], [3, "Stamp", null, 2, true], [3, "FreeText", "late_id", 8, false]]' \
	"r9: page, subtype, ID, revision and signature of each stamp"
check_eq "$(sj '[s["revision_end"] for s in d["stamps"]]')" \
	"[$(size_of "$T/r2.pdf"), $(size_of "$T/r6.pdf"), $(size_of "$T/r2.pdf"), $(size_of "$T/r3.pdf"), $(size_of "$T/r9.pdf"), $(size_of "$T/r2.pdf"), $(size_of "$T/r8.pdf")]" \
	"r9: each stamp's revision ends where the step that added it ended"
check_eq "$(sj '[d["stamps"][3][k] for k in ("nm", "contents", "author", "object")]')" \
	"[\"Kx3_a9Qm2Z.2\", \"remove me\", \"Dave\", $B]" "r9: /NM, /Contents, /T of the stamp MuPDF renamed"
check_eq "$(sj '[d["stamps"][4]["date"], d["stamps"][4]["rect"]]')" \
	'["2026-01-02T03:04:05+01:00", [300.0, 400.0, 450.0, 460.0]]' "r9: MuPDF's /M as ISO 8601, its /Rect"
run "$PDFSTAMP" stamps --password-file "$UPW" "$F"
check_status 0 "stamps (text) on r9"
check_grep '/r9\.pdf: 7 stamps on 3 pages, 9 revisions$' "$T/out" "r9: the text header"
check_grep '^2 +[0-9]+ +Stamp +3 +yes +Kx3_a9Qm2Z +' "$T/out" "r9: the text row of the renamed stamp"
check_grep 'Zoë / Geprüft von MuPDF$' "$T/out" "r9: author and text in UTF-8"

# ===========================================================================
# Part 2: unstamp
# ===========================================================================
# a stamp that was there when the approval signature was made: refused, as
# audit would call its removal a violation (audit.c note 5)
h=$(sha "$F")
run "$PDFSTAMP" unstamp --id Kx3_a9Qm2Z --password-file "$T/o.pw" -i "$F"
check_status 5 "unstamp of a stamp older than an approval signature: refused"
check_grep 'approval signature object [0-9]+ was made' "$T/err" "the refusal names the approval signature"
check_eq "$(sha "$F")" "$h" "refused: the file is unchanged (sha256)"

run "$PDFSTAMP" unstamp --id late_id --json --password-file "$UPW" -o "$T/u.pdf" "$F"
check_status 0 "unstamp --id late_id"
check_eq "$(jget "$T/out" '[d["removed"], d["base_length"], "skipped" in d]')" "[2, $(size_of "$F"), false]" \
	"unstamp: two stamps removed, appended after the input"
check_eq "$(objs_of "$T/out")" "$(jget "$T/r9.json" '",".join(str(s["object"]) for s in d["stamps"] if s["id"] == "late_id")' | tr -d '"')" \
	"unstamp: the objects removed are the stamps of the ID"
cmp_prefix "$F" "$T/u.pdf" "unstamp"
same_list "$T/u.pdf" "unstamped"
check_eq "$(cut -f 2,3 "$T/l-mu.txt" | tr '\t\n' ' ')" \
	"$(jget "$T/r9.json" '" ".join("%s %s" % (s["object"], s["subtype"]) for s in d["stamps"] if s["id"] != "late_id")' | tr -d '"') " \
	"unstamped: MuPDF lists r9's stamps but those of the ID"
check_no_grep 'late_id' "$T/ours.json" "unstamped: stamps lists no stamp of the ID"
check_no_grep 'LATE|free text by MuPDF' "$T/l-pj.txt" "unstamped: pdf.js lists neither removed stamp"
qcheck "$T/u.pdf" "$UPW" "unstamped"
sigstate "$T/u.pdf" >"$T/sig1.txt"
check_grep 'Signature Validation: Signature is Valid\.' "$T/sig1.txt" "unstamped: pdfsig still reports the signature valid"
check_eq "$(grep 'Signed Ranges' "$T/sig1.txt")" "$(grep 'Signed Ranges' "$T/sig0.txt")" \
	"unstamped: the signed byte ranges are the same"
# poppler: the pages look as before the removed stamps were added
render "$T/r6.pdf" 1 >"$T/p1-with.ppm"
render "$T/r5.pdf" 1 >"$T/p1-before.ppm"
render "$T/u.pdf" 1 >"$T/p1-after.ppm"
if cmp -s "$T/p1-with.ppm" "$T/p1-before.ppm"; then fail "poppler draws LATE on page 1 before unstamp"; else
	ok "poppler draws LATE on page 1 before unstamp"; fi
check_true cmp -s "$T/p1-after.ppm" "$T/p1-before.ppm" "poppler: page 1 after unstamp renders as before the stamp"
render "$T/r5.pdf" 3 >"$T/p3-before.ppm"
render "$T/u.pdf" 3 >"$T/p3-after.ppm"
check_true cmp -s "$T/p3-after.ppm" "$T/p3-before.ppm" \
	"poppler: page 3 after unstamp renders as before MuPDF's free text"
run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/u.pdf"
check_status 0 "unstamped: audit exit status"
check_eq "$(jget "$T/out" 'd["verdict"]')" '"ok"' "unstamped: audit says ok (after an approval signature)"
# nothing left to remove: exit 0, nothing written
h=$(sha "$T/u.pdf")
run "$PDFSTAMP" unstamp --id late_id --password-file "$UPW" -i "$T/u.pdf"
check_status 0 "unstamp again: exit 0"
check_grep 'no stamp with ID late_id: nothing to remove, nothing written' "$T/err" "unstamp again: the message"
check_eq "$(sha "$T/u.pdf")" "$h" "unstamp again: the file is unchanged"
run "$PDFSTAMP" unstamp --id late_id --password-file "$UPW" --json -o "$T/u2.pdf" "$T/u.pdf"
check_eq "$(jget "$T/out" '[d["removed"], d["skipped"], d["bytes_appended"]]')" '[0, "no such stamp", 0]' \
	"unstamp again --json: removed 0, skipped"
check_true test ! -e "$T/u2.pdf" "unstamp again -o: no output written"
run "$PDFSTAMP" unstamp --id 'bad.id' --password-file "$UPW" -o "$T/u2.pdf" "$T/u.pdf"
check_status 2 "unstamp --id with a dot: usage error"
run "$PDFSTAMP" unstamp --password-file "$UPW" -o "$T/u2.pdf" "$T/u.pdf"
check_status 2 "unstamp without --id: usage error"
# the user password without the annotation permission: refused
qpdf --encrypt "$U" 'owner pw' 256 --modify-other=n --annotate=n -- "$SRC" "$T/noannot0.pdf"
run "$PDFSTAMP" stamp --page 1 --password-file "$T/o.pw" --json -o "$T/noannot1.pdf" "$T/noannot0.pdf"
check_status 0 "no-annotate file: stamped with the owner password"
mu setnm "$T/noannot1.pdf" "$T/noannot.pdf" "$(objs_of "$T/out")" "perm_1.1"
h=$(sha "$T/noannot.pdf")
run "$PDFSTAMP" unstamp --id perm_1 --password-file "$UPW" -i "$T/noannot.pdf"
check_status 5 "no annotation permission, user password: unstamp refused"
check_eq "$(sha "$T/noannot.pdf")" "$h" "no annotation permission: the file is unchanged"
run "$PDFSTAMP" unstamp --id perm_1 --password-file "$T/o.pw" -o "$T/noannot-u.pdf" "$T/noannot.pdf"
check_status 0 "no annotation permission, owner password: unstamp allowed"

# Hostile entries, appended without the password (fixture below): on page 1
# an annotation whose strings do not decrypt, a reference to a missing
# object, a number, a name and a direct stamp; on page 2 an indirect /Annots
# of 150000 entries, a direct free text first.  Listed: the two direct
# ones; skipped: the four bad entries and the 50000 past the limit.
cat >"$T/hostile.py" <<'PY'
import re, subprocess, sys
src, out, pw = sys.argv[1:4]
d = open(src, "rb").read()
q = lambda *a: subprocess.run(["qpdf", "--password=" + pw] + list(a) + [src], capture_output=True,
                              check=True).stdout
pages = [int(x) for x in re.findall(rb"^page \d+: (\d+) 0 R", q("--show-pages"), re.M)]
tr = d[d.rfind(b"trailer"):]
size = int(re.search(rb"/Size (\d+)", tr).group(1))
keep = b" ".join(re.search(rb"(/%s (?:\d+ \d+ R|\[[^\]]*\]))" % k, tr).group(1)
                 for k in (b"Root", b"Info", b"ID", b"Encrypt"))
prev = int(re.findall(rb"startxref\s+(\d+)", d)[-1])
A, ARR = size, size + 1
page = lambda n: q("--show-object=%d" % n).strip()[:-2]
objs = {
    pages[0]: page(pages[0]) + b" /Annots [%d 0 R 999999 0 R 5 /Foo << /Subtype /Stamp "
              b"/Rect [10 10 50 50] >>] >>" % A,
    A: b"<< /Subtype /Stamp /NM <0011223344> /Contents <0011> /Rect [0 0 1 1] >>",
    pages[1]: page(pages[1]) + b" /Annots %d 0 R >>" % ARR,
    ARR: b"[<< /Subtype /FreeText /Rect [1 2 3 4] >> " + b"null " * 149999 + b"]",
}
body, offs = bytearray(b"\n"), {}
for n in sorted(objs):
    offs[n] = len(d) + len(body)
    body += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
x = len(d) + len(body)
body += b"xref\n" + b"".join(b"%d 1\n%010d 00000 n \n" % (n, offs[n]) for n in sorted(objs))
body += b"trailer\n<< /Size %d /Prev %d %s >>\nstartxref\n%d\n%%%%EOF\n" % (size + 2, prev, keep, x)
open(out, "wb").write(d + body)
PY
python3 "$T/hostile.py" "$T/r1.pdf" "$T/hostile.pdf" "$U"
run "$PDFSTAMP" stamps --json --password-file "$UPW" "$T/hostile.pdf"
check_status 0 "hostile entries: stamps succeeds"
check_eq "$(jget "$T/out" '[d["skipped"], [(s["page"], s["object"], s["subtype"], s["revision"], s["signed"]) for s in d["stamps"]]]')" \
	'[50004, [[1, null, "Stamp", null, false], [2, null, "FreeText", null, false]]]' \
	"hostile entries: the direct stamps listed, the bad entries and the excess skipped"
check_grep 'page 2: /Annots has 150000 entries; only the first 100000 are read' "$T/err" \
	"hostile entries: the excess is warned about"
check_eq "$(grep -c 'cannot be read; skipped' "$T/err")" 4 "hostile entries: a warning per bad entry"
run "$PDFSTAMP" unstamp --id x --password-file "$UPW" -o "$T/hostile-u.pdf" "$T/hostile.pdf"
check_status 0 "hostile entries: unstamp finds nothing to remove"

# Shared structure (a plaintext file, no password): pages 1 and 2 share an
# indirect /Annots array and page 3 is page 1 again (a shared page tree
# node); the ID has an indirect stamp and a direct free text in the array.
# Each is removed once, and the array gets one new version.
cat >"$T/shared.py" <<'PY'
import sys
objs = {
 1: b"<< /Type /Catalog /Pages 2 0 R >>",
 2: b"<< /Type /Pages /Kids [3 0 R 4 0 R 3 0 R] /Count 3 >>",
 3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots 10 0 R >>",
 4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots 10 0 R >>",
 5: b"<< /Type /Annot /Subtype /Stamp /Rect [10 10 60 40] /NM (sh_id.1) /Contents (A) >>",
 6: b"<< /Type /Annot /Subtype /Stamp /Rect [70 10 120 40] /NM (other.1) /Contents (B) >>",
 10: b"[5 0 R 6 0 R << /Type /Annot /Subtype /FreeText /Rect [10 50 60 80] /NM (sh_id.2) "
     b"/Contents (C) /DA (/Helv 10 Tf) >>]",
}
out, offs = bytearray(b"%PDF-1.7\n"), {}
for n in sorted(objs):
    offs[n] = len(out)
    out += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
x = len(out)
out += b"xref\n0 11\n0000000000 65535 f \n"
for n in range(1, 11):
    out += b"%010d 00000 n \n" % offs[n] if n in offs else b"0000000000 65535 f \n"
out += b"trailer\n<< /Size 11 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % x
open(sys.argv[1], "wb").write(out)
PY
python3 "$T/shared.py" "$T/shared.pdf"
run "$PDFSTAMP" stamps --json "$T/shared.pdf"
check_eq "$(jget "$T/out" '[(s["page"], s["object"], s["id"]) for s in d["stamps"]]')" \
	'[[1, 5, "sh_id"], [1, 6, "other"], [1, null, "sh_id"], [2, 5, "sh_id"], [2, 6, "other"], [2, null, "sh_id"], [3, 5, "sh_id"], [3, 6, "other"], [3, null, "sh_id"]]' \
	"shared structure: every page lists the shared array's stamps"
run "$PDFSTAMP" unstamp --id sh_id --json -o "$T/shared-u.pdf" "$T/shared.pdf"
check_status 0 "shared structure: unstamp"
check_eq "$(jget "$T/out" '[d["removed"], d["objects"]]')" '[2, [5, 0]]' \
	"shared structure: each stamp of the ID removed once"
check_eq "$(qpdf --show-object=10 "$T/shared-u.pdf" 2>/dev/null)" '[ 6 0 R ]' \
	"shared structure: qpdf reads the new version of the shared array"
check_eq "$(mutool run "$JS" list "$T/shared-u.pdf" "" | cut -f 1,2 | tr '\t\n' ' ')" '1 6 2 6 3 6 ' \
	"shared structure: MuPDF lists the other stamp on every page, nothing else"

# ===========================================================================
# Part 3: certifications
# ===========================================================================
run "$PDFSTAMP" stamp --page 1 --text CERTIFIED --password-file "$UPW" --json -o "$T/c0.pdf" "$T/r1.pdf"
C=$(objs_of "$T/out")
mu setnm "$T/c0.pdf" "$T/c1.pdf" "$C" "mdp_id.1" && mu form "$T/c1.pdf" "$T/c2.pdf"
for p in 2 3; do
	if ! mutool run "$AJS" certify "$T/c2.pdf" "$U" "$T/p$p.pdf" "$p" nolock >"$T/mu.log" 2>&1; then
		fail "MuPDF certifies with P=$p" "$(cat "$T/mu.log")"
		continue
	fi
	byterange "$T/p$p.pdf"
	run "$PDFSTAMP" stamps --json --password-file "$UPW" "$T/p$p.pdf"
	check_eq "$(jget "$T/out" '[(s["id"], s["revision"], s["signed"]) for s in d["stamps"]]')" \
		'[["mdp_id", 2, true]]' "P=$p: the stamp, its revision, covered by the certification"
done
h=$(sha "$T/p2.pdf")
run "$PDFSTAMP" unstamp --id mdp_id --password-file "$UPW" -i "$T/p2.pdf"
check_status 5 "P=2: unstamp -i refused"
check_grep 'DocMDP P=2' "$T/err" "P=2: the refusal names the certification"
check_eq "$(sha "$T/p2.pdf")" "$h" "P=2: the file is unchanged (sha256)"
run "$PDFSTAMP" unstamp --id mdp_id --password-file "$UPW" -o "$T/p2-u.pdf" "$T/p2.pdf"
check_status 5 "P=2: unstamp -o refused"
check_true test ! -e "$T/p2-u.pdf" "P=2: no output written"
# the same removal written by MuPDF: audit calls it a violation
mu drop "$T/p2.pdf" "$T/p2-mu.pdf" "mdp_id."
run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/p2-mu.pdf"
check_status 6 "P=2 + annotation removed by MuPDF: audit exit status"
check_eq "$(jget "$T/out" 'd["verdict"]')" '"violation"' "P=2 + annotation removed: audit says violation"

run "$PDFSTAMP" unstamp --id mdp_id --password-file "$UPW" -o "$T/p3-u.pdf" "$T/p3.pdf"
check_status 0 "P=3: unstamp allowed"
check_grep '^pdfstamp: warning: ' "$T/err" "P=3: unstamp warns"
run "$PDFSTAMP" stamps --json --password-file "$UPW" "$T/p3-u.pdf"
check_eq "$(jget "$T/out" 'd["stamps"]')" '[]' "P=3: the stamp is gone"
check_eq "$(mutool run "$JS" list "$T/p3-u.pdf" "$U" | wc -l)" 0 "P=3: MuPDF lists no stamp"
run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/p3-u.pdf"
check_status 0 "P=3 + unstamp: audit exit status"
check_eq "$(jget "$T/out" 'd["verdict"]')" '"ok"' "P=3 + unstamp: audit says ok"
check_eq "$(jget "$T/out" 'sorted({c["kind"] for r in d["revisions"] for c in r["changes"]})')" '["annotation"]' \
	"P=3 + unstamp: the changes are annotation changes"

finish
