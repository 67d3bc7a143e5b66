#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/legacy.sh - legacy security handlers (issue 13): RC4 40-128 and
# AES-128 files (/V 1, 2, 4; /R 2, 3, 4) from several producers.
#
# The corpus is made in the run, from samples/plain-2page.pdf and
# plain-3page.pdf:
#   qpdf     40-bit (R2), 128-bit RC4 (R3), RC4 through crypt filters
#            (--force-V4), AES-128 (R4); object streams, linearized,
#            cleartext metadata, an empty user password, annotations
#            denied (R2 and R4)
#   MuPDF    mutool clean -E rc4-40 | rc4-128 | aes-128, and a second
#            revision appended by MuPDF itself (mutool run, incremental save)
#   pikepdf  R2, R3, R4 RC4 (cleartext metadata), R4 AES, annotations
#            denied (skipped without python3-pikepdf)
#   PDFBox 2 and iText 5 (tests/e2e/fixtures/LegacyEnc.java, compiled here;
#            skipped without a JDK and Debian's jars)
# For every file and both passwords (the user password is "none" for an
# empty one):
#  (a) info --json: V, R, key bits, the method of the stream and string
#      crypt filters, encrypt_metadata, which password matched, all as
#      qpdf --json reports them; "weak_encryption" names RC4 / short keys
#      and is null for AES-128; verify exits 0;
#  (b) stamp -o: exit 0 (exit 5 with the user password where annotations
#      are denied, nothing written); a weak-handler warning on stderr that
#      points to rotate for RC4 or keys under 128 bits and none for AES-128,
#      the same in --json's "weak_encryption"; the output starts with the
#      input's bytes, keeps /Encrypt and ID[0] (fixtures/e2e.py trailer),
#      qpdf --show-encryption is unchanged; qpdf and mutool show decrypt the
#      annotation's /Contents and the appearance stream shows the text
#      (e2e.py annot); MuPDF and poppler render the page; pdf.js lists the
#      stamp with its /Contents; verify exits 0;
#      a second stamp in place (owner password) makes a third revision;
#  (c) meta --set Title=... -o: the same warning and prefix checks; qpdf and
#      mutool show decrypt the new /Info /Title (e2e.py info), pdfinfo and
#      pdf.js read it, pdftotext reads the same text as before.
# Then rotate (owner password) of every file: qpdf reports /V 5 /R 6
# AES-256, the new passwords open it and the old ones do not, permissions
# are carried over and every page's text is unchanged (pdftotext).
# Last, crafted files (an /Encrypt edited in a qpdf output): /Filter
# /Adobe.PubSec, an unknown /Filter, /V 3, /R 7: info, stamp, meta and
# rotate exit 4 naming the handler, and write nothing.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdftotext
need pdfinfo
need pdftoppm
need cmp

S=$TOP_SRCDIR/samples
P2=$S/plain-2page.pdf
P3=$S/plain-3page.pdf
E=$TOP_SRCDIR/tests/e2e/fixtures/e2e.py
L=$TOP_SRCDIR/tests/e2e/fixtures/legacy.py
C=$T/corpus
mkdir -p "$C"
U=legacy-user
O=legacy-owner
UPW=$T/user.pw
OPW=$T/owner.pw
NU=$T/new-user.pw
NO=$T/new-owner.pw
printf '%s\n' "$U" >"$UPW"
printf '%s\n' "$O" >"$OPW"
printf 'rotated-user\n' >"$NU"
printf 'rotated-owner\n' >"$NO"
LIST=$T/corpus.txt
: >"$LIST"

STAMPTEXT=LEGACY-OK
NOTE='Geprüft – legacy ✓'

# mk NAME FLAGS CMD...: runs a producer that writes $C/NAME.pdf and lists
# the file.  FLAGS: "-", or a comma list of empty (empty user password),
# noannot (annotations denied).
mk() {
	local name=$1 flags=$2 rc=0 req
	shift 2
	"$@" >"$T/mk.log" 2>&1 || rc=$?
	# qpdf: exit 3 = warnings; --requires-password: 0 = encrypted, 3 = with
	# an empty user password, 2 = not encrypted
	[ "$rc" = 3 ] && [ "$1" = qpdf ] && rc=0
	req=0
	[ -s "$C/$name.pdf" ] && { qpdf --requires-password "$C/$name.pdf" >/dev/null 2>&1 || req=$?; }
	if [ "$rc" = 0 ] && [ -s "$C/$name.pdf" ] && { [ "$req" = 0 ] || [ "$req" = 3 ]; }; then
		printf '%s %s\n' "$name" "$flags" >>"$LIST"
		ok "producer: $name"
	else
		fail "producer: $name (exit $rc)" "$(head -c 400 "$T/mk.log")"
	fi
}

# ===========================================================================
# The corpus
# ===========================================================================

# qpdf
# (qpdf 11 writes RC4 only with --allow-weak-crypto; older ones lack the option)
WEAK=()
qpdf --help=--allow-weak-crypto >/dev/null 2>&1 && WEAK=(--allow-weak-crypto)
q() { local n=$1 f=$2 in=$3; shift 3; mk "$n" "$f" qpdf "${WEAK[@]}" "$@" -- "$in" "$C/$n.pdf"; }
q qpdf-r2-rc4-40 - "$P2" --encrypt "$U" "$O" 40
q qpdf-r3-rc4-128 - "$P2" --encrypt "$U" "$O" 128 --use-aes=n
q qpdf-r4-rc4-cf - "$P3" --encrypt "$U" "$O" 128 --use-aes=n --force-V4
q qpdf-r4-aes-128 - "$P2" --encrypt "$U" "$O" 128 --use-aes=y
q qpdf-r3-objstm - "$P3" --object-streams=generate --encrypt "$U" "$O" 128 --use-aes=n
q qpdf-r4-aes-objstm - "$P3" --object-streams=generate --encrypt "$U" "$O" 128 --use-aes=y
q qpdf-r3-lin - "$P3" --linearize --encrypt "$U" "$O" 128 --use-aes=n
q qpdf-r4-aes-lin - "$P3" --linearize --encrypt "$U" "$O" 128 --use-aes=y
q qpdf-r4-clearmeta - "$P2" --encrypt "$U" "$O" 128 --use-aes=y --cleartext-metadata
q qpdf-r2-empty-user empty "$P2" --encrypt "" "$O" 40
q qpdf-r4-empty-user empty "$P3" --encrypt "" "$O" 128 --use-aes=y
q qpdf-r2-noannot noannot "$P2" --encrypt "$U" "$O" 40 --annotate=n
q qpdf-r4-noannot noannot "$P2" --encrypt "$U" "$O" 128 --use-aes=y --annotate=n

# MuPDF
for h in rc4-40 rc4-128 aes-128; do
	in=$P2
	[ $h = aes-128 ] && in=$P3
	mk "mupdf-$h" - mutool clean -E "$h" -U "$U" -O "$O" "$in" "$C/mupdf-$h.pdf"
done
# A second revision written by MuPDF: /Info /Title changed, saved
# incrementally (its new string encrypted under the file's RC4 key).
cat >"$T/incr.js" <<'JS'
var doc = new PDFDocument(scriptArgs[0]);
if (!doc.authenticatePassword(scriptArgs[1])) throw new Error("password");
doc.getTrailer().get("Info").put("Title", doc.newString("Second revision"));
doc.save(scriptArgs[0], "incremental");
JS
if [ -s "$C/mupdf-rc4-128.pdf" ]; then
	cp "$C/mupdf-rc4-128.pdf" "$C/mupdf-rc4-128-2rev.pdf"
	mk mupdf-rc4-128-2rev - mutool run "$T/incr.js" "$C/mupdf-rc4-128-2rev.pdf" "$O"
	check_eq "$(grep -ac startxref "$C/mupdf-rc4-128-2rev.pdf")" 2 "mupdf-rc4-128-2rev: two revisions"
fi

# pikepdf: Debian's python3-pikepdf may sit in the system python3 only.
PIKE=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import pikepdf' >/dev/null 2>&1; then
		PIKE=$py
		break
	fi
done
if [ -n "$PIKE" ]; then
	mk pikepdf-r2 - "$PIKE" "$L" pike "$P2" "$C/pikepdf-r2.pdf" "$U" "$O" 2 n
	mk pikepdf-r3 - "$PIKE" "$L" pike "$P3" "$C/pikepdf-r3.pdf" "$U" "$O" 3 n
	mk pikepdf-r4-rc4 - "$PIKE" "$L" pike "$P2" "$C/pikepdf-r4-rc4.pdf" "$U" "$O" 4 n
	mk pikepdf-r4-aes - "$PIKE" "$L" pike "$P3" "$C/pikepdf-r4-aes.pdf" "$U" "$O" 4 y
	mk pikepdf-r3-noannot noannot "$PIKE" "$L" pike "$P2" "$C/pikepdf-r3-noannot.pdf" "$U" "$O" 3 n n
else
	skip "pikepdf producer: python3-pikepdf is not installed (./bootstrap.sh --deps-only)"
fi

# PDFBox 2 and iText 5 (Debian jars), through a small Java program.
JARS=
for j in pdfbox2 fontbox2 commons-logging itext5 bcprov; do
	[ -f "/usr/share/java/$j.jar" ] && JARS=$JARS${JARS:+:}/usr/share/java/$j.jar
done
if command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1 &&
	[ "$(echo "$JARS" | tr ':' '\n' | grep -c .)" = 5 ]; then
	mkdir -p "$T/java"
	if javac -nowarn -cp "$JARS" -d "$T/java" "$TOP_SRCDIR/tests/e2e/fixtures/LegacyEnc.java" >"$T/javac.log" 2>&1; then
		for lib in pdfbox itext; do
			for h in rc4-40 rc4-128 aes-128; do
				in=$P2
				[ $h = rc4-128 ] && in=$P3
				mk "$lib-$h" - java -cp "$JARS:$T/java" LegacyEnc "$lib" "$in" "$C/$lib-$h.pdf" "$U" "$O" "$h"
			done
		done
	else
		fail "javac LegacyEnc.java" "$(head -c 600 "$T/javac.log")"
	fi
else
	skip "PDFBox and iText producers: needs javac, java and /usr/share/java/{pdfbox2,fontbox2,commons-logging,itext5,bcprov}.jar (default-jdk-headless libpdfbox2-java libitext5-java libbcprov-java)"
fi

echo "# corpus: $(cut -d' ' -f1 "$LIST" | tr '\n' ' ')"

# ===========================================================================
# Helpers
# ===========================================================================

# weak_stderr DESC WEAK(yes|no) ERRFILE: the weak-handler warning on stderr.
weak_stderr() {
	if [ "$2" = yes ]; then
		check_grep '[Ww]eak|RC4|[0-9]+-bit' "$3" "$1: stderr warns of the weak handler"
		check_grep 'rotate' "$3" "$1: the warning points to pdfstamp rotate"
	else
		check_no_grep '[Ww]eak|RC4' "$3" "$1: no weak-handler warning for AES-128"
	fi
}

# pdf.js (Debian's libjs-pdf) as a fourth reader, where installed
PJ=
PDFJS=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}
if command -v node >/dev/null 2>&1 && [ -f "$PDFJS" ]; then
	PJ=$TOP_SRCDIR/tests/e2e/fixtures/pdfjs-check.js
	export PDFJS
else
	skip "pdf.js checks: needs node and libjs-pdf"
fi
# pj DESC FILE PASSWORD EXPR EXPECTED: a value of what pdf.js sees on page 1
pj() {
	if ! node "$PJ" "$2" "$3" 1 >"$T/pj.json" 2>"$T/pj.err"; then
		fail "$1: pdf.js opens the file" "$(head -c 300 "$T/pj.err")"
		return
	fi
	check_eq "$(jget "$T/pj.json" "$4")" "$5" "$1 (pdf.js)"
}

# ===========================================================================
# Every file, both passwords: info, verify, stamp, meta
# ===========================================================================

while read -r name flags; do
	f=$C/$name.pdf
	weak=$(python3 "$L" isweak "$f" "$OPW")
	case $weak in
	yes | no) ;;
	*) fail "$name: qpdf reads the handler (owner password)"; continue ;;
	esac
	# /P bit 6 (annotate) for stamp, bit 4 (modify) for meta, with the
	# user password
	can_annot=$(python3 "$L" perm "$f" "$OPW" 6)
	can_modify=$(python3 "$L" perm "$f" "$OPW" 4)
	if [ "$flags" != "${flags#*noannot}" ]; then
		check_eq "$can_annot" no "$name: the producer cleared the annotation permission"
	fi
	for leg in user owner; do
		pwf=$UPW
		[ $leg = owner ] && pwf=$OPW
		[ $leg = user ] && [ "$flags" != "${flags#*empty}" ] && pwf=
		pwopt=()
		[ -n "$pwf" ] && pwopt=(--password-file "$pwf")
		pw=$(head -n 1 "${pwf:-/dev/null}")
		ppw=-upw # poppler takes the owner password only as -opw
		[ $leg = owner ] && ppw=-opw
		# pdf.js, where it opens the input itself with this password (it
		# refuses some passwords of PDFBox's R3 40-bit file that qpdf,
		# poppler and MuPDF accept)
		pjleg=$PJ
		if [ -n "$PJ" ] && ! node "$PJ" "$f" "$pw" 1 >/dev/null 2>&1; then
			pjleg=
			skip "$n: pdf.js cannot open the input itself with this password"
		fi
		n="$name ($leg)"

		# (a) info and verify
		run "$PDFSTAMP" info --json "${pwopt[@]}" "$f" </dev/null
		check_status 0 "$n: info --json"
		if [ "$RC" = 0 ]; then
			cp "$T/out" "$T/$name.$leg.info.json"
			checker_feed "$L" info "$n" "$T/$name.$leg.info.json" "$f" "$pwf"
		fi
		run "$PDFSTAMP" info "${pwopt[@]}" "$f" </dev/null
		check_status 0 "$n: info (text)"
		if [ "$weak" = yes ]; then
			check_grep '^Weak handler: +RC4 [0-9]+-bit' "$T/out" "$n: info (text) shows the weak handler"
		else
			check_no_grep '[Ww]eak' "$T/out" "$n: info (text) says nothing of a weak handler"
		fi
		run "$PDFSTAMP" verify "${pwopt[@]}" "$f" </dev/null
		check_status 0 "$n: verify"

		# (b) stamp
		o=$T/$name.$leg.stamp.pdf
		run "$PDFSTAMP" stamp --json "${pwopt[@]}" --text "$STAMPTEXT" --note "$NOTE" -o "$o" "$f" </dev/null
		if [ $leg = user ] && [ "$can_annot" = no ]; then
			check_status 5 "$n: stamp without the annotation permission"
			check_grep 'annot|permi' "$T/err" "$n: the refusal says why"
			check_true test ! -e "$o" "$n: refused stamp: no output file"
		else
			check_status 0 "$n: stamp -o"
		fi
		if [ "$RC" = 0 ]; then
			cp "$T/out" "$T/$name.$leg.stamp.json"
			cp "$T/err" "$T/$name.$leg.stamp.err"
			weak_stderr "$n: stamp" "$weak" "$T/$name.$leg.stamp.err"
			checker_feed "$L" weak "$n: stamp" "$T/$name.$leg.stamp.json" "$f" "$OPW"
			cmp_prefix "$f" "$o" "$n: stamp"
			checker_feed "$E" trailer "$f" "$o" "$n: stamp"
			check_eq "$(showenc "$o" "$OPW")" "$(showenc "$f" "$OPW")" "$n: stamp: qpdf --show-encryption unchanged"
			checker_feed "$E" annot "$o" "$pwf" 1 "$n: stamp" objects="$(objs_of "$T/$name.$leg.stamp.json")" \
				subtype=Stamp contents="$NOTE" text="$STAMPTEXT" count=1
			run mutool draw -q ${pw:+-p "$pw"} -r 36 -o "$T/mu.png" "$o" 1
			check_status 0 "$n: stamp: mutool draw renders page 1"
			check_no_grep -i 'error|warning' "$T/err" "$n: stamp: mutool draw says nothing"
			run pdftoppm "$ppw" "$pw" -r 36 -f 1 -l 1 -png -singlefile "$o" "$T/pp"
			check_status 0 "$n: stamp: pdftoppm renders page 1"
			run "$PDFSTAMP" verify "${pwopt[@]}" "$o" </dev/null
			check_status 0 "$n: stamp: verify the output"
			if [ -n "$pjleg" ]; then
				pj "$n: stamp: pdf.js lists the stamp and decrypts /Contents" "$o" "$pw" \
					'[(a["subtype"], a["contents"], a["hasAppearance"]) for a in d["annots"]]' \
					"[[\"Stamp\", $(js "$NOTE"), true]]"
			fi
			if [ $leg = owner ]; then
				# a third revision, in place
				cp "$o" "$T/s2.pdf"
				run "$PDFSTAMP" stamp --json "${pwopt[@]}" --text SECOND -i "$T/s2.pdf" </dev/null
				check_status 0 "$n: a second stamp, in place"
				if [ "$RC" = 0 ]; then
					cmp_prefix "$o" "$T/s2.pdf" "$n: second stamp"
					checker_feed "$E" trailer "$o" "$T/s2.pdf" "$n: second stamp"
					checker_feed "$E" annot "$T/s2.pdf" "$pwf" 1 "$n: second stamp" \
						objects="$(objs_of "$T/out")" subtype=Stamp text=SECOND count=2
				fi
			fi
		fi

		# (c) meta
		o=$T/$name.$leg.meta.pdf
		title="Prüfbericht $name"
		run "$PDFSTAMP" meta --json "${pwopt[@]}" --set "Title=$title" -o "$o" "$f" </dev/null
		if [ $leg = user ] && [ "$can_modify" = no ]; then
			check_status 5 "$n: meta without the modify permission"
			check_grep 'modif|permi' "$T/err" "$n: the refusal says why"
			check_true test ! -e "$o" "$n: refused meta: no output file"
		else
			check_status 0 "$n: meta --set Title -o"
		fi
		if [ "$RC" = 0 ]; then
			cp "$T/out" "$T/$name.$leg.meta.json"
			cp "$T/err" "$T/$name.$leg.meta.err"
			weak_stderr "$n: meta" "$weak" "$T/$name.$leg.meta.err"
			checker_feed "$L" weak "$n: meta" "$T/$name.$leg.meta.json" "$f" "$OPW"
			cmp_prefix "$f" "$o" "$n: meta"
			checker_feed "$E" trailer "$f" "$o" "$n: meta"
			checker_feed "$E" info "$o" "$pwf" "$f" "$n: meta" "Title=$title"
			t=$(pdfinfo -enc UTF-8 "$ppw" "$pw" "$o" 2>/dev/null | sed -n 's/^Title: *//p')
			check_eq "$t" "$title" "$n: meta: pdfinfo reads the new title"
			[ -n "$pjleg" ] && pj "$n: meta: pdf.js reads the new title" "$o" "$pw" 'd["title"]' "$(js "$title")"
			pdftotext "$ppw" "$pw" "$f" "$T/t0.txt" 2>/dev/null || rm -f "$T/t0.txt"
			pdftotext "$ppw" "$pw" "$o" "$T/t1.txt" 2>/dev/null || rm -f "$T/t1.txt"
			if [ -s "$T/t0.txt" ] && cmp -s "$T/t0.txt" "$T/t1.txt"; then
				ok "$n: meta: pdftotext reads the same text"
			else
				fail "$n: meta: pdftotext reads the same text" "$(diff "$T/t0.txt" "$T/t1.txt" 2>&1 | head -5)"
			fi
		fi
	done
done <"$LIST"

# ===========================================================================
# rotate: every file becomes /V 5 /R 6 AES-256
# ===========================================================================

while read -r name flags; do
	f=$C/$name.pdf
	o=$T/$name.rot.pdf
	oldu=$UPW
	[ "$flags" != "${flags#*empty}" ] && oldu=
	run "$PDFSTAMP" rotate --password-file "$OPW" --new-user-password-file "$NU" \
		--new-owner-password-file "$NO" -o "$o" "$f" </dev/null
	check_status 0 "$name: rotate -o"
	[ "$RC" = 0 ] || continue
	checker_feed "$L" rotated "$name: rotate" "$f" "$o" "$oldu" "$OPW" "$NU" "$NO"
	run "$PDFSTAMP" info --json --password-file "$NU" "$o"
	check_eq "$(jget "$T/out" '[d["encryption"]["v"], d["encryption"]["r"], d["encryption"]["key_bits"]]')" \
		'[5, 6, 256]' "$name: rotate: pdfstamp info reads /V 5 /R 6, 256 bits"
	check_eq "$(jget "$T/out" 'd.get("weak_encryption", "<missing>")')" null \
		"$name: rotate: the result is not weak"
	run "$PDFSTAMP" verify --password-file "$NU" "$o"
	check_status 0 "$name: rotate: verify the output"
done <"$LIST"

# craft NAME BASE OLD NEW: an /Encrypt edited in a qpdf output.
craft() {
	if [ -s "$C/$2.pdf" ] && python3 "$L" patch "$C/$2.pdf" "$T/$1.pdf" "$3" "$4" >"$T/mk.log" 2>&1; then
		return 0
	fi
	fail "crafting $1 from $2" "$(head -c 400 "$T/mk.log")"
	return 1
}

# ===========================================================================
# RC4 has no IV: a new version of an object under its old number and
# generation would be encrypted with the old version's key stream (old XOR
# new ciphertext = old XOR new plaintext).  meta gives the new /Info and XMP
# packet new numbers on RC4 files, and keeps them on AES ones.
# ===========================================================================

# refnum FILE PWFILE WHAT: the object number qpdf shows for the trailer's
# /Info (WHAT=Info) or the catalog's /Metadata (WHAT=Metadata).
refnum() {
	local root
	if [ "$3" = Info ]; then
		qpdf --password-file="$2" --show-object=trailer "$1" 2>/dev/null | sed -n 's|.*/Info \([0-9]*\) 0 R.*|\1|p'
		return
	fi
	root=$(qpdf --password-file="$2" --show-object=trailer "$1" 2>/dev/null | sed -n 's|.*/Root \([0-9]*\) 0 R.*|\1|p')
	qpdf --password-file="$2" --show-object="$root" "$1" 2>/dev/null | sed -n 's|.*/Metadata \([0-9]*\) 0 R.*|\1|p'
}

for base in qpdf-r3-rc4-128 qpdf-r4-aes-128; do
	f=$C/$base.pdf
	[ -s "$f" ] || continue
	o=$T/$base.xmp.pdf
	run "$PDFSTAMP" meta --password-file "$OPW" --xmp --set "Title=key stream check" -o "$o" "$f"
	check_status 0 "$base: meta --xmp"
	i0=$(refnum "$f" "$OPW" Info)
	i1=$(refnum "$o" "$OPW" Info)
	m1=$(refnum "$o" "$OPW" Metadata)
	check_ne "$i1" "" "$base: the output has an /Info object"
	check_ne "$m1" "" "$base: the output has an XMP packet"
	case $base in
	*rc4*)
		check_ne "$i1" "$i0" "$base: RC4: the new /Info has a new object number (no key stream reuse)"
		if [ -n "$(refnum "$f" "$OPW" Metadata)" ]; then
			check_ne "$m1" "$(refnum "$f" "$OPW" Metadata)" "$base: RC4: the new XMP packet has a new object number"
		fi
		;;
	*)
		check_eq "$i1" "$i0" "$base: AES: /Info keeps its object number (a fresh IV each time)"
		;;
	esac
	check_grep 'key stream check' <(qpdf --password-file="$OPW" --show-object="$m1" --filtered-stream-data "$o" 2>/dev/null) \
		"$base: qpdf decrypts the new XMP packet"
	# and again, now that a packet exists
	run "$PDFSTAMP" meta --password-file "$OPW" --xmp --set "Title=second key stream check" -o "$o.2" "$o"
	check_status 0 "$base: meta --xmp on a file with a packet"
	m2=$(refnum "$o.2" "$OPW" Metadata)
	case $base in
	*rc4*) check_ne "$m2" "$m1" "$base: RC4: the updated XMP packet has a new object number" ;;
	*) check_eq "$m2" "$m1" "$base: AES: the updated XMP packet keeps its object number" ;;
	esac
	check_grep 'second key stream check' <(qpdf --password-file="$OPW" --show-object="$m2" --filtered-stream-data \
		"$o.2" 2>/dev/null) "$base: qpdf decrypts the updated XMP packet"
done

# /EncryptMetadata false means nothing in a /V 2 file (Table 20) and no key
# binds it there: added by anyone, it must not make meta write the new XMP
# packet in clear, nor make rotate copy RC4 ciphertext as clear metadata.
if craft v2-nometa qpdf-r3-rc4-128 "/V 2" "/V 2 /EncryptMetadata false"; then
	f=$T/v2-nometa.pdf
	run "$PDFSTAMP" meta --password-file "$OPW" --xmp --set "Title=CLEARTEXT-CANARY" -o "$T/v2-nometa.meta.pdf" "$f"
	check_status 0 "v2-nometa: meta --xmp"
	check_true test "$(grep -ac CLEARTEXT-CANARY "$T/v2-nometa.meta.pdf")" = 0 \
		"v2-nometa: the new title is nowhere in clear"
	run "$PDFSTAMP" rotate --password-file "$OPW" --new-user-password-file "$NU" --new-owner-password-file "$NO" \
		-o "$T/v2-nometa.rot.pdf" "$T/v2-nometa.meta.pdf"
	check_status 0 "v2-nometa: rotate"
	m=$(refnum "$T/v2-nometa.rot.pdf" "$NO" Metadata)
	check_grep 'CLEARTEXT-CANARY' <(qpdf --password-file="$NO" --show-object="$m" --filtered-stream-data \
		"$T/v2-nometa.rot.pdf" 2>/dev/null) "v2-nometa: rotate: qpdf reads the XMP packet of the output"
fi

# ===========================================================================
# Refusals: public-key and unknown handlers
# ===========================================================================

while IFS='|' read -r name base old new pattern; do
	craft "$name" "$base" "$old" "$new" || continue
	f=$T/$name.pdf
	cp "$f" "$T/$name.orig"
	for cmd in info stamp meta rotate; do
		o=$T/$name.$cmd.out.pdf
		case $cmd in
		info) args=() ;;
		stamp) args=(-o "$o") ;;
		meta) args=(--set Title=x -o "$o") ;;
		rotate) args=(--new-user-password-file "$NU" --new-owner-password-file "$NO" -o "$o") ;;
		esac
		run "$PDFSTAMP" "$cmd" --password-file "$OPW" "${args[@]}" "$f" </dev/null
		check_status 4 "$name: $cmd is refused as unsupported"
		check_grep "$pattern" "$T/err" "$name: $cmd: the message names the handler"
		check_true test ! -e "$o" "$name: $cmd: nothing written"
	done
	run "$PDFSTAMP" stamp --password-file "$OPW" -i "$f" </dev/null
	check_status 4 "$name: stamp --in-place is refused"
	check_true cmp -s "$f" "$T/$name.orig" "$name: stamp --in-place: the file is unchanged"
	check_true test ! -e "$f.pdfstamp-journal" "$name: stamp --in-place: no journal left"
	run "$PDFSTAMP" info --json --password-file "$OPW" "$f" </dev/null
	check_eq "$(jget "$T/out" '[d["ok"], d["exit"]]')" '[false, 4]' "$name: info --json: the failure line, exit 4"
done <<'EOF'
pubsec|qpdf-r4-aes-128|/Filter /Standard|/Filter /Adobe.PubSec /SubFilter /adbe.pkcs7.s5|Adobe\.PubSec
unknown-filter|qpdf-r3-rc4-128|/Filter /Standard|/Filter /FooSec|FooSec
v3|qpdf-r3-rc4-128|/V 2|/V 3|V ?3|V=3
r7|qpdf-r4-aes-128|/R 4|/R 7|R ?7|R=7
EOF

finish
