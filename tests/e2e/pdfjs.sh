#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pdfjs.sh - pdf.js (a fourth, independent reader: Debian's libjs-pdf under
# node) opens every stamped or updated output with the original password and
# sees the new annotation (decrypted /Contents and /T, an appearance stream
# that adds drawing operators to the page) and the new /Info title.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need qpdf
need node
need mutool
PDFJS=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}
[ -f "$PDFJS" ] || { echo "SKIP: pdf.js ($PDFJS) is not installed (Debian: libjs-pdf)"; exit 77; }
CHECK="$TOP_SRCDIR/tests/e2e/fixtures/pdfjs-check.js"
SRC="$TOP_SRCDIR/samples/plain-3page.pdf"
printf 'user pw\n' >"$T/u.pw"
printf 'owner pw\n' >"$T/o.pw"

# inputs made here, by qpdf and by MuPDF
qpdf --encrypt 'user pw' 'owner pw' 256 -- "$SRC" "$T/r6.pdf"
qpdf --object-streams=generate --encrypt 'user pw' 'owner pw' 256 -- "$SRC" "$T/r6-objstm.pdf"
qpdf --encrypt 'user pw' 'owner pw' 256 --force-R5 -- "$SRC" "$T/r5.pdf" 2>/dev/null
qpdf --linearize --encrypt 'user pw' 'owner pw' 256 -- "$SRC" "$T/r6-lin.pdf"
mutool clean -E aes-256 -U 'user pw' -O 'owner pw' "$SRC" "$T/mupdf.pdf"

pj() { # FILE PAGE -> $T/pj.json
	node "$CHECK" "$1" 'user pw' "$2" >"$T/pj.json" 2>"$T/pj.err"
}

for f in r6 r6-objstm r5 r6-lin mupdf; do
	in="$T/$f.pdf"
	pj "$in" 2
	check_status 0 "pdf.js opens the $f input" "$(cat "$T/pj.err")"
	base_ops=$(jget "$T/pj.json" 'd["ops"]')
	run "$PDFSTAMP" stamp --page 2 --text "APPROVED $f" --note "Geprüft ($f)" --author "Zoë $f" \
		--password-file "$T/u.pw" -o "$T/$f-stamped.pdf" "$in"
	check_status 0 "$f: stamp"
	pj "$T/$f-stamped.pdf" 2
	check_status 0 "$f: pdf.js opens the stamped file with the user password" "$(cat "$T/pj.err")"
	check_eq "$(jget "$T/pj.json" '[a["subtype"] for a in d["annots"]]')" '["Stamp"]' "$f: pdf.js finds one stamp"
	check_eq "$(jget "$T/pj.json" 'd["annots"][0]["contents"]')" "$(js "Geprüft ($f)")" "$f: pdf.js decrypts /Contents"
	check_eq "$(jget "$T/pj.json" 'd["annots"][0]["title"]')" "$(js "Zoë $f")" "$f: pdf.js decrypts /T"
	check_eq "$(jget "$T/pj.json" 'd["annots"][0]["hasAppearance"]')" true "$f: pdf.js sees the appearance stream"
	check_eq "$(jget "$T/pj.json" "d['ops'] > $base_ops")" true "$f: the appearance adds drawing operators"
	run "$PDFSTAMP" meta --set "Title=Titel $f ✓" --xmp --password-file "$T/u.pw" -o "$T/$f-meta.pdf" "$T/$f-stamped.pdf"
	check_status 0 "$f: meta on the stamped file"
	pj "$T/$f-meta.pdf" 2
	check_status 0 "$f: pdf.js opens the updated file" "$(cat "$T/pj.err")"
	check_eq "$(jget "$T/pj.json" 'd["title"]')" "$(js "Titel $f ✓")" "$f: pdf.js reads the new /Info title"
	check_eq "$(jget "$T/pj.json" 'len(d["annots"])')" 1 "$f: the stamp is still there after meta"
	# the wrong password is refused by pdf.js too: the file is really encrypted
	node "$CHECK" "$T/$f-meta.pdf" 'not it' 1 >/dev/null 2>&1
	check_eq "$?" 1 "$f: pdf.js refuses a wrong password"
done

# a rotated key: pdf.js opens the output with the new password only
printf 'new user\n' >"$T/nu.pw"
printf 'new owner\n' >"$T/no.pw"
run "$PDFSTAMP" rotate -q --password-file "$T/o.pw" --new-user-password-file "$T/nu.pw" \
	--new-owner-password-file "$T/no.pw" -o "$T/rotated.pdf" "$T/r6-stamped.pdf"
check_status 0 "rotate"
node "$CHECK" "$T/rotated.pdf" 'new user' 2 >"$T/pj.json" 2>"$T/pj.err"
check_status 0 "pdf.js opens the rotated file with the new password" "$(cat "$T/pj.err")"
check_eq "$(jget "$T/pj.json" 'd["annots"][0]["contents"]')" "$(js "Geprüft (r6)")" "pdf.js decrypts the stamp after rotation"
node "$CHECK" "$T/rotated.pdf" 'user pw' 1 >/dev/null 2>&1
check_eq "$?" 1 "pdf.js refuses the old password after rotation"
finish
