#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/signed.sh - stamping signed and certified encrypted documents.
#
# 1. Approval signatures.  A throwaway NSS database with a self-signed
#    certificate is made in the run, and poppler's pdfsig signs files that
#    are already encrypted (qpdf R6, table and xref stream forms; pdfsig
#    -upw writes a valid encrypted incremental signature, so no plaintext
#    detour is needed).  After `pdfstamp stamp` (and `meta`) pdfsig, given
#    the password, must still report "Signature is Valid." over the same
#    byte range, pdfstamp must warn that strict validators report added
#    annotations, and qpdf must find the stamp.
# 2. Certification (DocMDP).  pdfsig cannot certify, so the structure is
#    written by tests/e2e/fixtures/e2e.py docmdp (a signature dictionary with
#    a DocMDP /Reference, referenced from /Perms /DocMDP and from an
#    /AcroForm signature field; the PKCS#7 blob is a dummy - pdfstamp's
#    policy reads only the structure) and encrypted with qpdf.  P=1 and P=2
#    refuse a stamp with exit 5 (the input untouched), P=3 allows it with a
#    warning; meta is refused by every level (metadata is none of the
#    changes ISO 32000-2 Table 257 permits; policy.c note 3).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need pdfsig
need certutil

e2e_inputs qpdf-r6-table qpdf-r6-xrefstream
U=$(head -n 1 "$UPW")

# pyfeed ARGS...: the checker's OK/FAIL lines as assertions (lib.sh).
pyfeed() { checker_feed "$E" "$@"; }
same() {
	if cmp -s "$1" "$2"; then ok "$3: the input is unchanged"; else fail "$3: the input is unchanged"; fi
}

# ---------------------------------------------------------------------------
# A throwaway NSS database and a self-signed signing certificate.
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
# Part 1: approval signatures made by pdfsig on encrypted files
# ===========================================================================
for src in qpdf-r6-table qpdf-r6-xrefstream; do
	s=$T/$src.signed.pdf
	if ! pdfsig -add-signature -nssdir "sql:$NSS" -nick pdfstamp-test -upw "$U" -reason "e2e test" \
		"$D/$src.pdf" "$s" >"$T/sign.log" 2>&1; then
		fail "$src: pdfsig signs the encrypted file" "$(cat "$T/sign.log")"
		continue
	fi
	sigstate "$s" >"$T/sig0.txt"
	check_grep 'Signature Validation: Signature is Valid\.' "$T/sig0.txt" "$src: pdfsig made a valid signature"
	run "$PDFSTAMP" info --json --password-file "$UPW" "$s"
	check_eq "$(jget "$T/out" '[x["docmdp"] for x in d["signatures"]]')" "[0]" \
		"$src: pdfstamp info sees one approval signature"

	o=$T/$src.stamped.pdf
	run "$PDFSTAMP" stamp --json --password-file "$UPW" --note "stamped after signing" -o "$o" "$s"
	check_status 0 "$src signed: stamp"
	[ "$RC" = 0 ] || continue
	check_grep '^pdfstamp: warning: .*(strict|validator)' "$T/err" "$src signed: a warning about strict validators"
	cp "$T/out" "$T/stamp.json"
	if cmp -s -n "$(size_of "$s")" "$s" "$o"; then ok "$src signed: the signed bytes are intact"; else
		fail "$src signed: the signed bytes are intact"; fi
	qcheck "$o" "$UPW" "$src signed+stamped"
	sigstate "$o" >"$T/sig1.txt"
	check_grep 'Signature Validation: Signature is Valid\.' "$T/sig1.txt" \
		"$src signed+stamped: pdfsig still reports the signature valid"
	check_eq "$(grep 'Signed Ranges' "$T/sig1.txt")" "$(grep 'Signed Ranges' "$T/sig0.txt")" \
		"$src signed+stamped: the signed byte ranges are the same"
	pyfeed annot "$o" "$UPW" 1 "$src signed+stamped" objects="$(jget "$T/stamp.json" '",".join(map(str, d["objects"]))' | tr -d '"')" \
		subtype=Stamp contents="stamped after signing" text=APPROVED

	# then meta in place
	cp "$o" "$T/$src.meta.pdf"
	run "$PDFSTAMP" meta --password-file "$UPW" --set "Title=signed, stamped, retitled" --xmp -i "$T/$src.meta.pdf"
	check_status 0 "$src signed+stamped: meta -i"
	qcheck "$T/$src.meta.pdf" "$UPW" "$src signed+stamped+meta"
	sigstate "$T/$src.meta.pdf" >"$T/sig2.txt"
	check_grep 'Signature Validation: Signature is Valid\.' "$T/sig2.txt" \
		"$src signed+stamped+meta: pdfsig still reports the signature valid"
done

# ===========================================================================
# Part 2: certification signatures (DocMDP)
# ===========================================================================
for p in 1 2 3; do
	python3 "$E" docmdp "$p" "$T/mdp$p-plain.pdf"
	qpdf --encrypt "$U" "$(head -n 1 "$OPW")" 256 -- "$T/mdp$p-plain.pdf" "$T/mdp$p.pdf"
	cp "$T/mdp$p.pdf" "$T/mdp$p.orig"
	run "$PDFSTAMP" info --json --password-file "$UPW" "$T/mdp$p.pdf"
	check_eq "$(jget "$T/out" '[x["docmdp"] for x in d["signatures"]]')" "[$p]" \
		"DocMDP P=$p fixture: pdfstamp info sees the certification"
	for pw in "$UPW" "$OPW"; do
		who=$(basename "$pw" .pw)
		run "$PDFSTAMP" stamp --password-file "$pw" -i "$T/mdp$p.pdf"
		if [ "$p" = 3 ]; then
			check_status 0 "DocMDP P=3: stamp is allowed ($who password)"
			check_grep '^pdfstamp: warning: .*(DocMDP|certif)' "$T/err" "DocMDP P=3: with a warning ($who password)"
			qcheck "$T/mdp$p.pdf" "$UPW" "DocMDP P=3 stamped"
			cp "$T/mdp$p.orig" "$T/mdp$p.pdf"
		else
			check_status 5 "DocMDP P=$p: stamp is refused ($who password)"
			check_grep 'DocMDP|certif' "$T/err" "DocMDP P=$p: the refusal says why ($who password)"
			same "$T/mdp$p.pdf" "$T/mdp$p.orig" "DocMDP P=$p refused stamp ($who password)"
		fi
	done
	run "$PDFSTAMP" stamp --password-file "$UPW" -o "$T/mdp$p-out.pdf" "$T/mdp$p.pdf"
	if [ "$p" = 3 ]; then
		check_status 0 "DocMDP P=3: stamp -o"
	else
		check_status 5 "DocMDP P=$p: stamp -o is refused"
		check_true test ! -e "$T/mdp$p-out.pdf" "DocMDP P=$p: no output file"
	fi
	# Metadata is none of Table 257's permitted changes at any level, so
	# the pre-flight refuses it as `audit` would call it a violation (issue 15).
	run "$PDFSTAMP" meta --password-file "$UPW" --set Title=changed -i "$T/mdp$p.pdf"
	check_status 5 "DocMDP P=$p: meta is refused"
	same "$T/mdp$p.pdf" "$T/mdp$p.orig" "DocMDP P=$p refused meta"
	[ -e "$T/mdp$p.pdf.pdfstamp-journal" ] && fail "DocMDP P=$p: a journal was left" || ok "DocMDP P=$p: no journal left"
done

finish
