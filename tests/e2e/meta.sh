#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/meta.sh - end-to-end and interoperability tests of `pdfstamp meta`.
#
# The same encrypted inputs as stamp.sh (tests/e2e/fixtures/e2e.py inputs).
# For each one, after `pdfstamp meta --set ... --unset ... --xmp -o`:
#  (a) the output starts with the exact bytes of the input;
#  (b) qpdf --check passes, qpdf --show-encryption is unchanged, the new
#      trailer is right (raw bytes);
#  (c) MuPDF still renders page 1, pixel for pixel as before;
#  (d) qpdf and `mutool show` decrypt the new Info dictionary to the values
#      given (non-ASCII ones as UTF-16BE), keep every other key, and have a
#      new /ModDate; poppler's pdfinfo shows the title; qpdf decodes the XMP
#      stream, whose dc:title, dc:creator and xmp:ModifyDate agree;
#      nothing new is in plaintext in the appended bytes;
#  (e) a second meta (--in-place) makes one more revision.
# Then /EncryptMetadata false (the XMP stream stays plaintext), the modify
# permission, and usage errors.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdfinfo

e2e_inputs

# pyfeed ARGS...: the checker's OK/FAIL lines as assertions (lib.sh).
pyfeed() { checker_feed "$E" "$@"; }
pw_of() { head -n 1 "$1"; }
# appended IN OUT: the bytes OUT has after IN's length, in $T/appended.bin
appended() { tail -c +"$(($(size_of "$1") + 1))" "$2" >"$T/appended.bin"; }
no_plaintext() {
	local desc=$1 s
	shift
	for s in "$@"; do
		if LC_ALL=C grep -aqF -- "$s" "$T/appended.bin"; then
			fail "$desc: '$s' does not appear in plaintext in the appended bytes"
		else
			ok "$desc: '$s' does not appear in plaintext in the appended bytes"
		fi
	done
}
info_ref() {
	qpdf --password-file="$2" --show-object=trailer "$1" | sed -n 's|.*/Info \([0-9]*\) [0-9]* R.*|\1|p'
}
mudraw() { mutool draw -q -p "$(pw_of "$2")" -r 40 -c gray -o "$3" "$1" 1 2>/dev/null; }

# ===========================================================================
# Part 1: every input form
# ===========================================================================
TITLE='Quarterly report – Q3 “final” ✓'
AUTHOR='Zoë Åberg'
SUBJECT='Plain ASCII subject (with parens)'
DATE=2024-05-06T07:08:09Z
while read -r name f pw _ _; do
	o=$T/$name.m1.pdf
	run "$PDFSTAMP" meta --json $(pwargs "$pw") --set "Title=$TITLE" --set "Author=$AUTHOR" \
		--set "Subject=$SUBJECT" --set "Ticket=REQ 4711" --unset Producer --xmp --date "$DATE" \
		-o "$o" "$f" </dev/null
	check_status 0 "$name: meta -o"
	[ "$RC" = 0 ] || continue
	cp "$T/out" "$T/$name.json"
	check_eq "$(jget "$T/out" 'd["ok"]')" true "$name: --json ok"
	check_eq "$(jget "$T/out" 'd["base_length"] + d["bytes_appended"]')" "$(size_of "$o")" \
		"$name: --json base_length + bytes_appended is the output's size"
	check_eq "$(jget "$T/out" 'd["base_length"]')" "$(size_of "$f")" "$name: --json base_length is the input's size"
	check_eq "$(jget "$T/out" 'd["xref_offset"]')" "$(last_startxref "$o")" "$name: --json xref_offset is the new startxref"
	check_eq "$(jget "$T/out" 'd["objects"]')" "[$(info_ref "$o" "$pw")]" "$name: --json objects is the trailer's /Info"
	# (a), (b)
	cmp_prefix "$f" "$o" "$name"
	qcheck "$o" "$pw" "$name"
	check_eq "$(showenc "$o" "$pw")" "$(showenc "$f" "$pw")" "$name: qpdf --show-encryption unchanged"
	pyfeed trailer "$f" "$o" "$name"
	# (d)
	pyfeed info "$o" "$pw" "$f" "$name" "Title=$TITLE" "Author=$AUTHOR" "Subject=$SUBJECT" "Ticket=REQ 4711" -Producer
	moddate=$(sed -n 's/^#MODDATE\t//p' "$T/extra")
	check_eq "${moddate:0:16}" "D:20240506070809" "$name: --date sets /ModDate"
	pyfeed xmp "$o" "$pw" "$name" "Title=$TITLE" "Author=$AUTHOR" "Subject=$SUBJECT" "ModDate=$moddate"
	pdfinfo -upw "$(pw_of "$pw")" "$o" >"$T/pdfinfo.out" 2>&1
	check_grep "^Title: +$TITLE\$" "$T/pdfinfo.out" "$name: pdfinfo (poppler) shows the new title"
	check_grep "^Author: +$AUTHOR\$" "$T/pdfinfo.out" "$name: pdfinfo (poppler) shows the new author"
	check_no_grep '^Producer:' "$T/pdfinfo.out" "$name: pdfinfo (poppler) shows no producer"
	pdfinfo -upw "$(pw_of "$pw")" -meta "$o" >"$T/pdfinfo.meta" 2>&1
	check_grep 'Quarterly report' "$T/pdfinfo.meta" "$name: pdfinfo -meta (poppler) reads the new XMP"
	appended "$f" "$o"
	no_plaintext "$name" "Quarterly" "REQ 4711" "with parens" "xmpmeta" "rdf:"
	# (c)
	mudraw "$f" "$pw" "$T/$name.r0.pgm"
	mudraw "$o" "$pw" "$T/$name.r1.pgm"
	if [ -s "$T/$name.r0.pgm" ] && cmp -s "$T/$name.r0.pgm" "$T/$name.r1.pgm"; then
		ok "$name: MuPDF renders page 1 exactly as before"
	else
		fail "$name: MuPDF renders page 1 exactly as before"
	fi
	# (e)
	cp "$o" "$T/$name.m2.pdf"
	run "$PDFSTAMP" meta --json $(pwargs "$pw") --set "Title=Second" --xmp -i "$T/$name.m2.pdf" </dev/null
	check_status 0 "$name: second meta --in-place"
	[ "$RC" = 0 ] || continue
	cmp_prefix "$o" "$T/$name.m2.pdf" "$name (2nd)"
	qcheck "$T/$name.m2.pdf" "$pw" "$name (2nd)"
	pyfeed trailer "$o" "$T/$name.m2.pdf" "$name (2nd)"
	pyfeed info "$T/$name.m2.pdf" "$pw" "$o" "$name (2nd)" "Title=Second"
	pyfeed xmp "$T/$name.m2.pdf" "$pw" "$name (2nd)" "Title=Second" "Author=$AUTHOR"
	run "$PDFSTAMP" info --json $(pwargs "$pw") "$T/$name.m2.pdf" </dev/null
	check_eq "$(jget "$T/out" 'd["revisions"]')" \
		"$(($(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import e2e; print(len(e2e.sections(open(sys.argv[2],"rb").read())))' "$TOP_SRCDIR/tests/e2e/fixtures" "$f") + 2))" \
		"$name: two updates add two revisions (pdfstamp info)"
done <"$D/inputs.txt"

# ===========================================================================
# Part 2: /EncryptMetadata false, a stamp after a meta, a file without XMP
# ===========================================================================
qpdf --encrypt "$(pw_of "$UPW")" "$(pw_of "$OPW")" 256 --cleartext-metadata -- \
	"$TOP_SRCDIR/samples/plain-3page.pdf" "$T/clear.pdf"
run "$PDFSTAMP" meta --password-file "$UPW" --set "Title=Clear XMP title" --xmp -o "$T/clear-m.pdf" "$T/clear.pdf"
check_status 0 "/EncryptMetadata false: meta --xmp"
if [ "$RC" = 0 ]; then
	qcheck "$T/clear-m.pdf" "$UPW" "/EncryptMetadata false"
	pyfeed info "$T/clear-m.pdf" "$UPW" "$T/clear.pdf" "/EncryptMetadata false" "Title=Clear XMP title"
	pyfeed xmp "$T/clear-m.pdf" "$UPW" "/EncryptMetadata false" "Title=Clear XMP title"
	appended "$T/clear.pdf" "$T/clear-m.pdf"
	check_grep 'Clear XMP title' "$T/appended.bin" "/EncryptMetadata false: the new XMP stream is plaintext"
	check_true test "$(grep -ac '/Title' "$T/appended.bin")" -le 1 "/EncryptMetadata false: (only the XMP holds the title)"
	# Not checked with MuPDF or poppler: both decrypt the catalog's /Metadata
	# even with /EncryptMetadata false (unless it has a /Crypt Identity
	# filter), so they already fail on qpdf's own unmodified output.
fi

f=$D/qpdf-r6-table.pdf  # plain-2page has no XMP stream: --xmp creates one
run "$PDFSTAMP" meta --json --password-file "$UPW" --set "Keywords=alpha, beta" --xmp -o "$T/newxmp.pdf" "$f"
check_status 0 "meta --xmp on a file without XMP"
if [ "$RC" = 0 ]; then
	qcheck "$T/newxmp.pdf" "$UPW" "new XMP"
	pyfeed xmp "$T/newxmp.pdf" "$UPW" "new XMP" "Keywords=alpha, beta" "Title=pdfstamp sample"
	run "$PDFSTAMP" stamp --json --password-file "$UPW" -o "$T/newxmp-s.pdf" "$T/newxmp.pdf"
	check_status 0 "stamp after meta"
	qcheck "$T/newxmp-s.pdf" "$UPW" "stamp after meta"
	pyfeed info "$T/newxmp-s.pdf" "$UPW" "$T/newxmp.pdf" "stamp after meta: Info kept"
fi
run "$PDFSTAMP" meta --json --password-file "$UPW" --set "Title=No XMP touched" -o "$T/noxmp.pdf" "$f"
check_status 0 "meta without --xmp"
if [ "$RC" = 0 ]; then
	qpdf --password-file="$UPW" --show-object=1 "$T/noxmp.pdf" >"$T/cat.txt" 2>&1
	check_no_grep '/Metadata' "$T/cat.txt" "meta without --xmp does not add an XMP stream"
fi

# ===========================================================================
# Part 3: the modify permission and usage errors
# ===========================================================================
qpdf --encrypt "$(pw_of "$UPW")" "$(pw_of "$OPW")" 256 --modify=none -- \
	"$TOP_SRCDIR/samples/plain-2page.pdf" "$T/nomod.pdf"
cp "$T/nomod.pdf" "$T/nomod.orig"
run "$PDFSTAMP" meta --password-file "$UPW" --set Title=x -i "$T/nomod.pdf"
check_status 5 "meta without the modify permission (user password)"
check_grep 'modif|permi' "$T/err" "meta refusal says why"
cmp -s "$T/nomod.pdf" "$T/nomod.orig" && ok "refused meta: the file is unchanged" || fail "refused meta: the file is unchanged"
check_eq "$(ls -A "$T" | grep -c 'pdfstamp-')" 0 "refused meta: no journal or temp file"
run "$PDFSTAMP" meta --password-file "$OPW" --set Title=Owner -o "$T/nomod-owner.pdf" "$T/nomod.pdf"
check_status 0 "meta with the owner password"
[ "$RC" = 0 ] && pyfeed info "$T/nomod-owner.pdf" "$UPW" "$T/nomod.pdf" "owner meta" "Title=Owner"

f=$D/qpdf-r6-table.pdf
for args in "" "--set Title" "--set =x" "--set ModDate=D:2020" "--set Bad/Key=x" "--unset" "--date someday --set Title=x"; do
	run "$PDFSTAMP" meta --password-file "$UPW" $args -o "$T/x.pdf" "$f"
	check_status 2 "meta ${args:-without --set}: usage error"
	check_true test ! -e "$T/x.pdf" "meta ${args:-without --set}: no output"
done

finish
