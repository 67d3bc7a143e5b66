#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/audit.sh - `pdfstamp audit`: what changed after each signature of
# an encrypted file, and is it permitted (issue 15).
#
# Inputs, all encrypted (qpdf R6) and made in the run:
#  - approval signatures by poppler's pdfsig (a throwaway NSS database, as
#    signed.sh), on qpdf's table and xref-stream inputs;
#  - certifications (DocMDP P=1/2/3) and an approval signature with a
#    FieldMDP lock, written by MuPDF (fixtures/audit.js certify: the
#    signature structure of ISO 32000-2 12.8, a dummy PKCS#7 blob) as an
#    encrypted incremental update of a one-page file with a text field;
#    its /ByteRange is then set to end at that revision's end, as a signer
#    does (audit reads the structure, not the cryptography);
#  - later revisions by MuPDF (audit.js: an annotation, a field value, a
#    replaced page content stream, an added page, a /DSS; each saved
#    incrementally, MuPDF encrypting the new objects with the file key),
#    and by pdfstamp itself (stamp, meta, dss).
# Each case checks the exit status (0 ok, 6 violation), the verdict and,
# for a violation, that the JSON lists the offending object as forbidden
# (the object number is read independently with qpdf).  The files of
# signed.sh are audited too (its DocMDP fixtures carry a dummy /ByteRange
# [0 0 0 0] that signs no byte: a violation, covers_revision false).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need pdfsig
need certutil
need mutool

e2e_inputs qpdf-r6-table qpdf-r6-xrefstream
U=$(head -n 1 "$UPW")
O=$(head -n 1 "$OPW")
JS=$TOP_SRCDIR/tests/e2e/fixtures/audit.js

# ---------------------------------------------------------------------------
# helpers

# audit FILE: runs `pdfstamp audit --json`, the line in $T/out
audit() { run "$PDFSTAMP" audit --json --password-file "$UPW" "$1"; }
verdict() { jget "$T/out" 'd["verdict"]' | tr -d '"'; }
# forbidden_objects: the objects the JSON lists as forbidden, sorted, comma-separated
forbidden() {
	jget "$T/out" '",".join(str(o) for o in sorted({c["object"] for r in d["revisions"] for c in r["changes"] if c["verdict"] == "forbidden"}))' | tr -d '"'
}
kinds() {
	jget "$T/out" '",".join(sorted({c["kind"] for r in d["revisions"] for c in r["changes"] if c["verdict"] == "forbidden"}))' | tr -d '"'
}
# expect FILE STATUS VERDICT DESC
expect() {
	audit "$1"
	check_status "$2" "$4: audit exit status"
	check_eq "$(verdict)" "$3" "$4: verdict $3"
}
# mu ACTION IN OUT [ARGS...]: a revision written by MuPDF
mu() {
	local act=$1 in=$2 out=$3
	shift 3
	if ! mutool run "$JS" "$act" "$in" "$U" "$out" "$@" >"$T/mu.log" 2>&1; then
		fail "MuPDF $act on $(basename "$in")" "$(cat "$T/mu.log")"
		return 1
	fi
}
# Object numbers read with qpdf (independent of pdfstamp): page 1, and the
# form field of full name NAME.
qpage() { qpdf --password-file="$UPW" --show-pages "$1" | sed -n 's/^page 1: \([0-9]*\) .*/\1/p'; }
qfield() {
	qpdf --password-file="$UPW" --json --json-key=acroform "$1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
print([f['object'] for f in d['acroform']['fields'] if f['fullname'] == sys.argv[1]][0].split()[0])" "$2"
}

# ---------------------------------------------------------------------------
# The base: one page, a text field Name, /Info; encrypted by qpdf.
python3 - "$T/base-plain.pdf" <<'PY'
import sys
def stream(body):
    return b"<< /Length %d >>\nstream\n" % len(body) + body + b"\nendstream"
objs = {
 1: b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R] /DA (/Helv 0 Tf 0 g) >> >>",
 2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
 3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
    b"/Resources << /Font << /F1 5 0 R >> >> /Annots [6 0 R] >>",
 4: stream(b"BT /F1 24 Tf 72 700 Td (Signed content) Tj ET"),
 5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
 6: b"<< /Type /Annot /Subtype /Widget /FT /Tx /T (Name) /V (before) /Rect [72 600 300 630] /P 3 0 R /F 4 >>",
 7: b"<< /Title (audit fixture) /Producer (tests/e2e/audit.sh) >>",
}
out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
offs = {}
for n in sorted(objs):
    offs[n] = len(out)
    out += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
x = len(out)
out += b"xref\n0 8\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % offs[n] for n in range(1, 8))
out += b"trailer\n<< /Size 8 /Root 1 0 R /Info 7 0 R >>\nstartxref\n%d\n%%%%EOF\n" % x
open(sys.argv[1], "wb").write(out)
PY
qpdf --encrypt "$U" "$O" 256 -- "$T/base-plain.pdf" "$T/base.pdf"

expect "$T/base.pdf" 0 unsigned "unsigned file"
check_eq "$(jget "$T/out" 'len(d["revisions"])')" 1 "unsigned file: one revision listed"

# ---------------------------------------------------------------------------
# Certifications P=1/2/3 and an approval with a FieldMDP lock (MuPDF)
for p in 1 2 3; do
	mu certify "$T/base.pdf" "$T/c$p.pdf" "$p" nolock && byterange "$T/c$p.pdf"
	expect "$T/c$p.pdf" 0 ok "DocMDP P=$p certification, nothing after it"
	check_eq "$(jget "$T/out" '[(s["docmdp"], s["revision"], s["covers_revision"]) for s in d["signatures"]]')" \
		"[[$p, 2, true]]" "DocMDP P=$p: docmdp, revision 2, covers it exactly"
done
mu certify "$T/base.pdf" "$T/lock.pdf" 0 lock && byterange "$T/lock.pdf"
expect "$T/lock.pdf" 0 ok "approval signature with a FieldMDP lock"
check_eq "$(jget "$T/out" '[(s["docmdp"], s["fieldmdp"], s["locked_fields"]) for s in d["signatures"]]')" \
	'[[null, "Include", ["Name"]]]' "FieldMDP lock: Include [Name]"
mu certify "$T/base.pdf" "$T/appr.pdf" 0 nolock && byterange "$T/appr.pdf"

# ---------------------------------------------------------------------------
# An annotation added by MuPDF: P=1 violation, P=3 ok
mu annot "$T/c1.pdf" "$T/c1-annot.pdf"
expect "$T/c1-annot.pdf" 6 violation "P=1 + MuPDF annotation"
pageobj=$(qpage "$T/c1-annot.pdf")
case ",$(forbidden)," in
*",$pageobj,"*) ok "P=1 + annotation: the JSON lists the page (object $pageobj) as forbidden" ;;
*) fail "P=1 + annotation: the JSON lists the page (object $pageobj) as forbidden" "$(cat "$T/out")" ;;
esac
check_eq "$(kinds)" annotation "P=1 + annotation: the forbidden changes are annotations"
run "$PDFSTAMP" audit --password-file "$UPW" "$T/c1-annot.pdf"
check_status 6 "P=1 + annotation: text output, exit 6"
check_grep "forbidden: revision 3 modified object $pageobj \(annotation\) breaks signature 'Certification'" "$T/out" \
	"P=1 + annotation: the text names the object and the signature"
mu annot "$T/c3.pdf" "$T/c3-annot.pdf"
expect "$T/c3-annot.pdf" 0 ok "P=3 + MuPDF annotation"
check_eq "$(jget "$T/out" '[c["kind"] for c in d["revisions"][2]["changes"]].count("annotation") >= 2')" true \
	"P=3 + annotation: the changes are listed as annotations"

# A form field value: P=2 ok, P=1 violation, a FieldMDP lock violation, an
# approval without a lock ok
mu fill "$T/c2.pdf" "$T/c2-fill.pdf" after
expect "$T/c2-fill.pdf" 0 ok "P=2 + form field value"
check_eq "$(jget "$T/out" '[(c["kind"], c["field"]) for c in d["revisions"][2]["changes"]]')" '[["form-field", "Name"]]' \
	"P=2 + form field value: one form-field change of Name"
mu fill "$T/c1.pdf" "$T/c1-fill.pdf" after
expect "$T/c1-fill.pdf" 6 violation "P=1 + form field value"
mu fill "$T/lock.pdf" "$T/lock-fill.pdf" after
expect "$T/lock-fill.pdf" 6 violation "FieldMDP lock on Name + its value changed"
fieldobj=$(qfield "$T/lock-fill.pdf" Name)
check_eq "$(forbidden)" "$fieldobj" "FieldMDP lock: the JSON lists the field (object $fieldobj)"
mu fill "$T/appr.pdf" "$T/appr-fill.pdf" after
expect "$T/appr-fill.pdf" 0 ok "approval signature + form field value"

# A /DSS after a P=1 certification: not a change (ISO 32000-2 Table 257;
# ETSI EN 319 142-1 5.4.2.3)
mu dss "$T/c1.pdf" "$T/c1-dss.pdf"
expect "$T/c1-dss.pdf" 0 ok "P=1 + a DSS written by MuPDF"
check_eq "$(jget "$T/out" 'sorted({c["kind"] for c in d["revisions"][2]["changes"]})')" '["dss"]' \
	"P=1 + DSS: every change is a DSS change"

# ---------------------------------------------------------------------------
# Approval signatures by pdfsig, then content changes by MuPDF
NSS=$T/nss
mkdir -p "$NSS"
head -c 256 /dev/urandom >"$T/noise"
if ! certutil -N -d "sql:$NSS" --empty-password </dev/null >"$T/nss.log" 2>&1 ||
	! certutil -S -x -d "sql:$NSS" -n pdfstamp-test -s "CN=pdfstamp audit signer" -t "CT,C,C" \
		-k rsa -g 2048 -z "$T/noise" -v 12 --keyUsage digitalSignature,nonRepudiation \
		</dev/null >>"$T/nss.log" 2>&1; then
	fail "making a throwaway NSS database" "$(cat "$T/nss.log")"
	finish
fi
for src in qpdf-r6-table qpdf-r6-xrefstream; do
	s=$T/$src.signed.pdf
	if ! pdfsig -add-signature -nssdir "sql:$NSS" -nick pdfstamp-test -upw "$U" -reason "audit test" \
		"$D/$src.pdf" "$s" </dev/null >"$T/sign.log" 2>&1; then
		fail "$src: pdfsig signs the encrypted file" "$(cat "$T/sign.log")"
		continue
	fi
	expect "$s" 0 ok "$src signed by pdfsig"
	check_eq "$(jget "$T/out" '[(s["docmdp"], s["covers_revision"], s["revision"]) for s in d["signatures"]]')" \
		"[[null, true, $(jget "$T/out" 'len(d["revisions"])')]]" "$src signed: approval, covers the newest revision exactly"

	mu content "$s" "$T/$src.content.pdf"
	expect "$T/$src.content.pdf" 6 violation "$src signed + page content replaced"
	check_eq "$(kinds)" page-content "$src signed + content: the forbidden change is page content"
	pageobj=$(qpage "$T/$src.content.pdf")
	check_eq "$(forbidden)" "$pageobj" "$src signed + content: the JSON lists the page whose /Contents changed (object $pageobj, qpdf)"
	# the pre-flight refuses to add to a document already violated, and
	# names the change (preflight.c note 3); nothing is written
	for cmd in stamp meta; do
		extra=
		[ "$cmd" = meta ] && extra="--set Title=x"
		cp "$T/$src.content.pdf" "$T/$src.before.pdf"
		run "$PDFSTAMP" "$cmd" $extra --password-file "$UPW" -i "$T/$src.content.pdf"
		check_status 5 "$src signed + content: $cmd is refused"
		check_grep "already breaks signature object .*changed object $pageobj [(]page-content" "$T/err" \
			"$src signed + content: $cmd names the forbidden change"
		check_true cmp -s "$T/$src.content.pdf" "$T/$src.before.pdf" "$src signed + content: $cmd left the file unchanged"
	done

	mu addpage "$s" "$T/$src.page.pdf"
	expect "$T/$src.page.pdf" 6 violation "$src signed + page added"
	check_grep '"kind":"page-tree","action":"modified","verdict":"forbidden"' "$T/out" \
		"$src signed + page added: the page tree change is forbidden"

	mu annot "$s" "$T/$src.annot.pdf"
	expect "$T/$src.annot.pdf" 0 ok "$src signed + MuPDF annotation (approval allows it)"

	# pdfstamp's own updates after an approval signature: allowed, and audit agrees
	run "$PDFSTAMP" stamp --password-file "$UPW" -o "$T/$src.stamp.pdf" "$s"
	check_status 0 "$src signed: stamp"
	expect "$T/$src.stamp.pdf" 0 ok "$src signed + pdfstamp stamp"
	# --extract-revision: the bytes the signature covers, byte for byte
	rev=$(jget "$T/out" 'd["signatures"][0]["revision"]')
	run "$PDFSTAMP" audit --password-file "$UPW" --extract-revision "$rev" -o "$T/$src.view.pdf" "$T/$src.stamp.pdf"
	check_status 0 "$src signed + stamp: --extract-revision $rev"
	if cmp -s "$T/$src.view.pdf" "$s"; then ok "$src: the extracted revision is the signed file, byte for byte"
	else fail "$src: the extracted revision is the signed file, byte for byte"; fi
	pdfsig -upw "$U" "$T/$src.view.pdf" >"$T/vsig.out" 2>&1 || true
	check_grep 'Signature is Valid' "$T/vsig.out" "$src: pdfsig validates the extracted revision"
	check_grep 'Total document signed' "$T/vsig.out" "$src: pdfsig: the signature covers the whole extracted file"
	cp "$T/$src.stamp.pdf" "$T/$src.keep.pdf"
	run "$PDFSTAMP" audit --password-file "$UPW" --extract-revision 1 -o "$T/$src.stamp.pdf" "$T/$src.stamp.pdf"
	check_status 2 "$src: --extract-revision onto the input itself is refused"
	check_true cmp -s "$T/$src.stamp.pdf" "$T/$src.keep.pdf" "$src: the input is unchanged after the refusal"
	run "$PDFSTAMP" audit --password-file "$UPW" --extract-revision 99 -o "$T/$src.none.pdf" "$T/$src.stamp.pdf"
	check_status 2 "$src: --extract-revision past the newest revision is refused"
	check_true test ! -e "$T/$src.none.pdf" "$src: nothing written for a revision that does not exist"
	cp "$T/$src.stamp.pdf" "$T/$src.meta.pdf"
	run "$PDFSTAMP" meta --password-file "$UPW" --set Title=retitled --xmp -i "$T/$src.meta.pdf"
	check_status 0 "$src signed + stamp: meta"
	expect "$T/$src.meta.pdf" 0 ok "$src signed + pdfstamp stamp + meta"
	check_eq "$(jget "$T/out" 'sorted({c["kind"] for c in d["revisions"][-1]["changes"]} - {"other"})')" '["metadata"]' \
		"$src signed + meta: the meta revision is metadata"
done

# ---------------------------------------------------------------------------
# The pre-flight agrees with audit: what stamp/meta/dss accept audits ok,
# what they refuse (exit 5) audit calls a violation when done by others.
for f in c1 c2 c3 lock; do
	for cmd in stamp meta; do
		if [ "$cmd" = meta ]; then args=(--set Title=x); else args=(); fi
		run "$PDFSTAMP" "$cmd" --password-file "$UPW" "${args[@]}" -o "$T/$f.$cmd.pdf" "$T/$f.pdf"
		st=$RC
		if [ "$st" = 0 ]; then
			expect "$T/$f.$cmd.pdf" 0 ok "$f: $cmd accepted, audit agrees"
		else
			check_eq "$st" 5 "$f: $cmd refused with exit 5"
			check_true test ! -e "$T/$f.$cmd.pdf" "$f: refused $cmd wrote nothing"
		fi
		case "$f.$cmd" in
		c3.stamp | lock.stamp | lock.meta) check_eq "$st" 0 "$f: $cmd is allowed" ;;
		*) check_eq "$st" 5 "$f: $cmd is refused" ;;
		esac
	done
done
if "$PDFSTAMP" dss --help >/dev/null 2>&1; then
	# a self-signed certificate in DER, from the NSS database above
	certutil -L -d "sql:$NSS" -n pdfstamp-test -r >"$T/cert.der" 2>/dev/null
	for f in c1 c2 c3; do
		run "$PDFSTAMP" dss --password-file "$UPW" --cert "$T/cert.der" -o "$T/$f.dss.pdf" "$T/$f.pdf"
		check_status 0 "$f: pdfstamp dss is allowed"
		[ "$RC" = 0 ] && expect "$T/$f.dss.pdf" 0 ok "$f + pdfstamp dss"
	done
else
	skip "pdfstamp dss is not built"
fi

# ---------------------------------------------------------------------------
# signed.sh's certified fixtures (a dummy /ByteRange [0 0 0 0]: no byte signed)
for p in 1 3; do
	python3 "$E" docmdp "$p" "$T/mdp$p-plain.pdf"
	qpdf --encrypt "$U" "$O" 256 -- "$T/mdp$p-plain.pdf" "$T/mdp$p.pdf"
	expect "$T/mdp$p.pdf" 6 violation "signed.sh's DocMDP P=$p fixture (ByteRange [0 0 0 0])"
	check_eq "$(jget "$T/out" '[s["covers_revision"] for s in d["signatures"]]')" "[false]" \
		"signed.sh's DocMDP P=$p fixture: covers_revision false"
done

# A damaged file: exit 4; several files: the worst status (6 over 4 and 0)
head -c 1000 "$T/c1.pdf" >"$T/cut.pdf"
run "$PDFSTAMP" audit --password-file "$UPW" "$T/cut.pdf"
check_status 4 "a truncated file"
run "$PDFSTAMP" audit --json --ordered --password-file "$UPW" "$T/c1.pdf" "$T/cut.pdf" "$T/c1-annot.pdf"
check_status 6 "three files: the worst status"
check_eq "$(jget "$T/out" 'd["ok"]' 2),$(jget "$T/out" 'd["exit"]' 2)" "false,4" "three files: the damaged one's line"
check_eq "$(jget "$T/out" 'd["verdict"]' 3)" '"violation"' "three files: the violation's line"

finish
