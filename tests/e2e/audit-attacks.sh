#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/audit-attacks.sh - `pdfstamp audit` against hostile revisions
# appended after real signatures (issue 29), and legitimate work after
# signing that must stay "ok".
#
# Signed inputs, all with a real CMS (openssl makes it for the Java
# producers; no bcpkix needed) unless said, from fixtures/auditattacks.py's
# base (qpdf --preserve-unreferenced keeps its two unreachable objects):
#   ps-r6     poppler pdfsig, approval, AES-256 (qpdf R6)
#   pb1/2/3   PDFBox 2, certification P=1/2/3, unencrypted (/Reference and
#             /TransformParams indirect)
#   pba1/pba2 PDFBox 2, certification P=1/2, AES-128 (qpdf)
#   it-lock   iText 5, approval with a FieldMDP /Lock on Name, RC4-128
#   it1/it2   iText 5, certification P=1/2, RC4-128
#   mu1/mu2   MuPDF (fixtures/audit.js, a dummy CMS), P=1/2, AES-256
#   itvis     iText 5, a visible approval signature, unencrypted
# and, from the base's other shapes (unencrypted, signed as written):
#   dg0/1/2   PDFBox 2, approval, P=1, P=2 on "dangle" (X1's resources name
#             an object no revision defines)
#   ob1, xr1  PDFBox 2, P=1 on "objstm" and "xref" (the page content stream
#             typed /ObjStm, /XRef)
#   tp3       PDFBox 2, P=3 on "twopage"
# Hostile revisions: fixtures/auditattacks.py (raw appended updates; new
# strings and streams encrypted with the file key read by qpdf).  Every
# attack must give exit 6 and verdict "violation"; where the class says so,
# the forbidden change's kind is checked too.  pdfsig shows that the first
# signature still validates on each attack file of a real-CMS producer, and
# poppler draws the planted page of xref-repoint (and the forged text of
# the attacks where that is cheap to show).
#
# Run by hand against any binary:
#   PDFSTAMP=/path/to/pdfstamp TOP_SRCDIR=/path/to/src bash tests/e2e/audit-attacks.sh

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need pdfsig
need certutil
need mutool
need openssl

X=$TOP_SRCDIR/tests/e2e/fixtures/auditattacks.py
JS=$TOP_SRCDIR/tests/e2e/fixtures/audit.js
U=user-pw
O=owner-pw
UPW=$T/user.pw
echo "$U" >"$UPW"

# ---------------------------------------------------------------------------
# helpers

# pwopt FILE: the password option for an encrypted FILE, nothing for a
# plaintext one (pdfstamp warns, and its writers refuse, otherwise)
pwopt() { if grep -aq '/Encrypt' "$1"; then echo "--password-file=$UPW"; fi; }
audit() { run "$PDFSTAMP" audit --json $(pwopt "$1") "$1"; }
verdict() { jget "$T/out" 'd.get("verdict")' | tr -d '"'; }
fkinds() {
	jget "$T/out" '",".join(sorted({c["kind"] for r in d["revisions"] for c in r["changes"] if c["verdict"] == "forbidden"}))' | tr -d '"'
}
fobjects() {
	jget "$T/out" '",".join(str(o) for o in sorted({c["object"] for r in d["revisions"] for c in r["changes"] if c["verdict"] == "forbidden"}))' | tr -d '"'
}
# expect FILE STATUS VERDICT DESC
# audit_strict FILE: `pdfstamp audit --strict --json`, the line in $T/out
audit_strict() { run "$PDFSTAMP" audit --strict --json $(pwopt "$1") "$1"; }
expect() {
	audit "$1"
	check_status "$2" "$4: audit exit status"
	check_eq "$(verdict)" "$3" "$4: verdict $3"
	if [ "$(verdict)" != "$3" ]; then
		jget "$T/out" '[(c["object"], c["kind"], c["reason"]) for r in d["revisions"] for c in r["changes"] if c["verdict"] == "forbidden"][:6]' | sed 's/^/       forbidden: /'
	fi
}
# kind_has KIND DESC: the last audit lists a forbidden change of KIND
kind_has() {
	case ",$(fkinds)," in
	*",$1,"*) ok "$2: a forbidden change of kind $1" ;;
	*) fail "$2: a forbidden change of kind $1" "forbidden kinds: $(fkinds)" "$(head -c 400 "$T/err")" ;;
	esac
}
# the unencrypted inputs
plain_in() { case $1 in pb1 | pb2 | pb3 | dg? | ob1 | xr1 | tp3 | itvis) return 0 ;; esac; return 1; }
pw_of() { if plain_in "$1"; then echo -; else echo "$U"; fi; }
opw_of() { if plain_in "$1"; then echo -; else echo "$O"; fi; }
# real_cms NAME: made by a producer with a real CMS
real_cms() { case $1 in mu*) return 1 ;; esac; }
# sig_valid FILE DESC [N]: pdfsig (no certificate check) says signature N
# (default 1, the original one) is valid
sig_valid() {
	local n=${3:-1} what="the original signature still validates"
	[ "$n" = 1 ] || what="signature #$n validates"
	if pdfsig -nocert -upw "$U" "$1" 2>/dev/null | sed -n "/^Signature #$n:/,/^Signature #$((n + 1)):/p" |
		grep -q 'Signature Validation: Signature is Valid'; then
		ok "$2: pdfsig: $what"
	else
		fail "$2: pdfsig: $what" "$(pdfsig -nocert -upw "$U" "$1" 2>&1 | head -20)"
	fi
}
# reason_has TEXT DESC: a forbidden change of the last audit gives a reason
# containing TEXT
reason_has() {
	if jget "$T/out" '[c["reason"] or "" for r in d["revisions"] for c in r["changes"] if c["verdict"] == "forbidden"]' |
		grep -qF -- "$1"; then
		ok "$2: the reason says \"$1\""
	else
		fail "$2: the reason says \"$1\"" "$(jget "$T/out" '[c["reason"] for r in d["revisions"] for c in r["changes"] if c["verdict"] == "forbidden"][:4]')"
	fi
}
# shows TEXT DESC: poppler draws TEXT on the last attack file (the attack works)
shows() {
	if pdftotext -upw "$U" "$A" - 2>/dev/null | grep -qF -- "$1"; then
		ok "$2: poppler draws \"$1\""
	else
		fail "$2: poppler draws \"$1\"" "$(pdftotext -upw "$U" "$A" - 2>&1 | head -5)"
	fi
}
# attack NAME INPUT: appends attack NAME to $T/INPUT.pdf as $T/INPUT.NAME.pdf
attack() {
	A=$T/$2.$1.pdf
	if ! python3 "$X" "$1" "$T/$2.pdf" "$A" "$(pw_of "$2")" >"$T/gen.log" 2>&1; then
		fail "$2 + $1: making the attack file" "$(cat "$T/gen.log")"
		return 1
	fi
}
# violation NAME INPUT [KIND]: the attack is a violation (exit 6), naming KIND
violation() {
	attack "$1" "$2" || return 0
	expect "$A" 6 violation "[$CLASS] $2 + $1"
	[ -n "${3:-}" ] && kind_has "$3" "[$CLASS] $2 + $1"
	if real_cms "$2"; then sig_valid "$A" "[$CLASS] $2 + $1"; fi
	return 0
}
have() { [ -s "$T/$1.pdf" ]; }

# ---------------------------------------------------------------------------
# the base, in three encryption states (qpdf keeps the unreachable objects)
python3 "$X" base "$T/base.pdf"
qpdf --preserve-unreferenced --encrypt "$U" "$O" 256 -- "$T/base.pdf" "$T/r6.pdf"
qpdf --preserve-unreferenced --encrypt "$U" "$O" 128 --use-aes=y -- "$T/base.pdf" "$T/aes128.pdf"
qpdf --preserve-unreferenced --allow-weak-crypto --encrypt "$U" "$O" 128 --use-aes=n -- "$T/base.pdf" "$T/rc4.pdf"
qpdf --preserve-unreferenced "$T/base.pdf" "$T/plain.pdf"
qpdf --linearize --encrypt "$U" "$O" 256 -- "$T/base.pdf" "$T/lin-r6.pdf"
# the base's other shapes, signed as written (qpdf would drop the dangling
# reference and rewrite the typed content streams)
for sh in dangle objstm xref twopage; do python3 "$X" base "$T/base-$sh.pdf" $sh; done

# a self-signed signing key for openssl cms, and a TSA for openssl ts
openssl req -x509 -newkey rsa:2048 -nodes -subj "/CN=pdfstamp attack signer" -days 3 \
	-keyout "$T/key.pem" -out "$T/cert.pem" >"$T/openssl.log" 2>&1
# the attacker's own signature (auditattacks.py sigap) uses the same key
export AUDITATTACKS_CERT=$T/cert.pem AUDITATTACKS_KEY=$T/key.pem
openssl req -x509 -newkey rsa:2048 -nodes -subj "/CN=pdfstamp attack TSA" -days 3 \
	-addext "extendedKeyUsage=critical,timeStamping" \
	-keyout "$T/tsakey.pem" -out "$T/tsa.pem" >>"$T/openssl.log" 2>&1
echo 01 >"$T/tsaserial"
cat >"$T/tsa.cnf" <<EOF
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = $T/tsaserial
digests = sha256
default_policy = 1.2.3.4.1
ess_cert_id_alg = sha256
accuracy = secs:1
crypto_device = builtin
signer_digest = sha256
signer_cert = $T/tsa.pem
signer_key = $T/tsakey.pem
certs = $T/tsa.pem
EOF

# poppler pdfsig (a throwaway NSS database)
NSS=$T/nss
mkdir -p "$NSS"
head -c 256 /dev/urandom >"$T/noise"
certutil -N -d "sql:$NSS" --empty-password </dev/null >"$T/nss.log" 2>&1
certutil -S -x -d "sql:$NSS" -n attack -s "CN=pdfstamp attack pdfsig" -t "CT,C,C" -k rsa -g 2048 \
	-z "$T/noise" -v 12 --keyUsage digitalSignature,nonRepudiation </dev/null >>"$T/nss.log" 2>&1
# psign IN OUT: an approval signature by pdfsig (a new field each time)
psign() {
	if ! pdfsig -add-signature -nssdir "sql:$NSS" -nick attack -upw "$U" -reason "audit-attacks" \
		"$1" "$2" </dev/null >"$T/sign.log" 2>&1; then
		fail "pdfsig signs $(basename "$1")" "$(cat "$T/sign.log")"
		return 1
	fi
}
psign "$T/r6.pdf" "$T/ps-r6.pdf"

# PDFBox and iText (compiled once per run)
JARS=
for j in pdfbox2 fontbox2 commons-logging itext5 bcprov; do
	JARS=$JARS${JARS:+:}/usr/share/java/$j.jar
done
JAVA=no
if command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1 &&
	ls /usr/share/java/{pdfbox2,fontbox2,commons-logging,itext5,bcprov}.jar >/dev/null 2>&1; then
	if javac -nowarn -cp "$JARS" -d "$T/java" "$TOP_SRCDIR/tests/e2e/fixtures/AuditSign.java" >"$T/javac.log" 2>&1; then
		JAVA=yes
	else
		fail "javac AuditSign.java" "$(head -c 600 "$T/javac.log")"
	fi
fi
# j MODE ARGS...: runs AuditSign
j() {
	if ! java -cp "$JARS:$T/java" AuditSign "$@" >"$T/java.log" 2>&1; then
		fail "java AuditSign $1 $(basename "$2")" "$(head -c 600 "$T/java.log")"
		return 1
	fi
}
if [ $JAVA = yes ]; then
	for p in 1 2 3; do j pdfbox-sign "$T/plain.pdf" "$T/pb$p.pdf" - $p "$T/cert.pem" "$T/key.pem"; done
	for p in 1 2; do j pdfbox-sign "$T/aes128.pdf" "$T/pba$p.pdf" "$O" $p "$T/cert.pem" "$T/key.pem"; done
	j itext-sign "$T/rc4.pdf" "$T/it-lock.pdf" "$O" 0 Name "$T/cert.pem" "$T/key.pem"
	for p in 1 2; do j itext-sign "$T/rc4.pdf" "$T/it$p.pdf" "$O" $p - "$T/cert.pem" "$T/key.pem"; done
	j itext-sign "$T/plain.pdf" "$T/itvis.pdf" - -1 - "$T/cert.pem" "$T/key.pem"
	for p in 0 1 2; do j pdfbox-sign "$T/base-dangle.pdf" "$T/dg$p.pdf" - $p "$T/cert.pem" "$T/key.pem"; done
	j pdfbox-sign "$T/base-objstm.pdf" "$T/ob1.pdf" - 1 "$T/cert.pem" "$T/key.pem"
	j pdfbox-sign "$T/base-xref.pdf" "$T/xr1.pdf" - 1 "$T/cert.pem" "$T/key.pem"
	j pdfbox-sign "$T/base-twopage.pdf" "$T/tp3.pdf" - 3 "$T/cert.pem" "$T/key.pem"
else
	skip "PDFBox and iText producers: needs javac, java and /usr/share/java/{pdfbox2,fontbox2,commons-logging,itext5,bcprov}.jar"
fi

# MuPDF (audit.js: the signature structure with a dummy CMS; its
# /ByteRange set to end at the end of its revision)
for p in 1 2; do
	if mutool run "$JS" certify "$T/r6.pdf" "$U" "$T/mu$p.pdf" $p nolock >"$T/mu.log" 2>&1; then
		byterange "$T/mu$p.pdf"
	else
		fail "MuPDF certifies P=$p" "$(cat "$T/mu.log")"
	fi
done

# ---------------------------------------------------------------------------
# the signed inputs audit ok
for s in ps-r6 pb1 pb2 pb3 pba1 pba2 it-lock it1 it2 mu1 mu2 itvis dg0 dg1 dg2 ob1 xr1 tp3; do
	have "$s" || continue
	expect "$T/$s.pdf" 0 ok "signed input $s"
	if real_cms "$s"; then sig_valid "$T/$s.pdf" "signed input $s"; fi
done

# ---------------------------------------------------------------------------
# 1. the policy read as of the newest revision
CLASS=1
for s in pb1 pba1; do have $s && violation tp-p3 $s annotation; done
# iText and MuPDF write TransformParams direct: the new version is of the
# signature dictionary itself
for s in it1 mu1; do have $s && violation tp-p3 $s; done
have it-lock && violation lock-move it-lock form-field

# 2. an object's kind taken from its new version
CLASS=2
for s in ps-r6 it-lock pb1; do
	have $s || continue
	violation content-as-metadata $s page-content
	violation fontmap-as-metadata $s
	violation action-as-metadata $s
done
for s in pb1 pba1 it1; do have $s && violation resources-as-dss $s page-content; done
# a content stream typed as a container of the file's structure: a new
# version (with new text) and freeing it are page-content changes
if have ob1; then
	violation objstm-content ob1 page-content
	shows "Pay MALLORY" "[2] ob1 + objstm-content"
fi
have xr1 && violation free-content xr1 page-content

# 3. signing that signs nothing
CLASS=3
for s in pb2 it2 mu2; do have $s && violation sig-novalue $s annotation; done
for s in pb1 it1 mu1; do have $s && violation docts-zero $s; done

# 4. object identity
CLASS=4
for s in ps-r6 pb1 pba1 it-lock; do
	have $s || continue
	violation relist-gen $s
	violation planted-obj $s
	violation xref-repoint $s
	if pdftotext -upw "$U" "$A" - 2>/dev/null | grep -q "Planted content"; then
		ok "[4] $s + xref-repoint: poppler rebuilds its xref and draws the planted page"
	else
		fail "[4] $s + xref-repoint: poppler rebuilds its xref and draws the planted page" \
			"$(pdftotext -upw "$U" "$A" - 2>&1 | head -5)"
	fi
done
# a redefinition of the second page hidden in the data of a permitted new
# appearance stream, and a /Popup to a missing object that makes poppler
# rebuild its xref (and draw the planted page)
if have tp3; then
	violation hide-page2 tp3 damaged
	shows "Planted content" "[4] tp3 + hide-page2"
fi
# a new object under the number a signed form XObject's resources name
for s in dg0 dg1 dg2; do
	have $s || continue
	violation dangle-fill $s
	reason_has "a new object under a number the signed revision refers to" "[4] $s + dangle-fill"
	shows "FORGED CONTENT" "[4] $s + dangle-fill"
done

# 5. shadow attacks
CLASS=5
for s in pb2 pba2 it2 mu2; do
	have $s || continue
	violation hide-flip $s annotation
	violation overlay-flip $s annotation
	violation rect-flip $s annotation
	violation ap-flip $s annotation
done
for s in ps-r6 pb3 it-lock mu1; do
	have $s || continue
	violation repoint-unreachable $s page-content
	violation font-swap $s page-content
	violation xobject-swap $s page-content
done
# a new appearance of a locked field's widget, its /V left alone
if have it-lock; then
	violation lock-ap it-lock form-field
	reason_has "locked" "[5] it-lock + lock-ap"
	shows "FORGED VALUE" "[5] it-lock + lock-ap"
fi
# the visible approval signature's widget redrawn, in a revision closed by
# the attacker's own (valid) approval signature
if have itvis; then
	violation sigap itvis annotation
	sig_valid "$A" "[5] itvis + sigap" 2
fi

# 6. damaged revisions after a signature
CLASS=6
for s in ps-r6 pb1 it2; do
	have $s || continue
	violation broken-xref $s damaged
	violation bad-startxref $s damaged
done
# a permitted new appearance stream holding ~29,000 lines "1 0 obj" (once
# quadratic): the audit ends, and it is a violation
if have pb3; then
	for a in dos dos-junk; do
		attack $a pb3 || continue
		run timeout 60 "$PDFSTAMP" audit --json "$A"
		check_status 6 "[6] pb3 + $a: audit finishes (timeout 60)"
		check_eq "$(verdict)" violation "[6] pb3 + $a: verdict violation"
	done
fi

# ---------------------------------------------------------------------------
# legitimate work after signing: ok
CLASS=legit
# second approval signatures by pdfsig
for s in ps-r6 pb2 it-lock; do
	have $s || continue
	psign "$T/$s.pdf" "$T/$s.sig2.pdf" && expect "$T/$s.sig2.pdf" 0 ok "[legit] $s + a second approval signature (pdfsig)"
done
# a visible approval signature by iText after an approval signature
if have it-lock; then
	j itext-sign "$T/it-lock.pdf" "$T/it-lock.vis.pdf" "$O" -1 - "$T/cert.pem" "$T/key.pem" &&
		expect "$T/it-lock.vis.pdf" 0 ok "[legit] it-lock + a visible approval signature (iText)"
fi
# form filling: /V and the own widget's /AP only (auditattacks.py legit-fill)
for s in pb2 pba2 it2 mu2 pb3 ps-r6; do
	have $s || continue
	attack legit-fill $s && expect "$A" 0 ok "[legit] $s + Name's value and its widget's appearance"
done
# form filling of an unlocked field by iText (value + its widget's
# appearance; iText also rewrites /Info's /Producer and /ModDate)
for c in "pb2 Name" "pba2 Name" "it2 Name" "it-lock Other" "pb3 Name"; do
	set -- $c
	have $1 || continue
	j itext-fill "$T/$1.pdf" "$T/$1.fill.pdf" "$(opw_of "$1")" "$2" "filled after signing" &&
		expect "$T/$1.fill.pdf" 0 ok "[legit] $1 + iText fills the unlocked field $2"
done
# MuPDF: an annotation under P=3, a field value under P=2
if have pb3; then
	mutool run "$JS" annot "$T/pb3.pdf" - "$T/pb3.annot.pdf" >"$T/mu.log" 2>&1 &&
		expect "$T/pb3.annot.pdf" 0 ok "[legit] pb3 + a MuPDF annotation"
	# --strict (the certification attacks' countermeasures): a text note
	# stays permitted after P=3, a stamp that draws content does not
	if [ -s "$T/pb3.annot.pdf" ]; then
		audit_strict "$T/pb3.annot.pdf"
		check_status 0 "[strict] pb3 + a MuPDF /Text note: permitted"
	fi
	run "$PDFSTAMP" stamp -o "$T/pb3.stamp.pdf" "$T/pb3.pdf"
	check_status 0 "[legit] pb3: pdfstamp stamp (P=3 permits annotations)"
	expect "$T/pb3.stamp.pdf" 0 ok "[legit] pb3 + pdfstamp stamp"
	audit_strict "$T/pb3.stamp.pdf"
	check_status 6 "[strict] pb3 + pdfstamp stamp: a /Stamp after P=3 is a violation"
	check_grep 'P=3 certification \(the strict reading\)' "$T/out" "[strict] pb3 + pdfstamp stamp: the reason names the reading"
fi
if have mu2; then
	mutool run "$JS" fill "$T/mu2.pdf" "$U" "$T/mu2.fill.pdf" after >"$T/mu.log" 2>&1 &&
		expect "$T/mu2.fill.pdf" 0 ok "[legit] mu2 + MuPDF fills Name"
fi
# a DSS (pdfstamp dss) and a document timestamp (PDFBox) after P=1
certutil -L -d "sql:$NSS" -n attack -r >"$T/cert.der" 2>/dev/null
# (on pba1, AES-128, PDFBox 2 leaves the ciphertext of its encrypted
# /Contents placeholder after the CMS: not signed, and not looked at)
for s in pb1 pba1; do
	have $s || continue
	run "$PDFSTAMP" dss $(pwopt "$T/$s.pdf") --cert "$T/cert.der" -o "$T/$s.dss.pdf" "$T/$s.pdf"
	check_status 0 "[legit] $s: pdfstamp dss"
	[ "$RC" = 0 ] && expect "$T/$s.dss.pdf" 0 ok "[legit] $s + pdfstamp dss"
	if [ -s "$T/$s.dss.pdf" ] && j pdfbox-timestamp "$T/$s.dss.pdf" "$T/$s.dts.pdf" "$(opw_of $s)" \
		"$T/tsa.pem" "$T/tsakey.pem" "$T/tsa.cnf"; then
		expect "$T/$s.dts.pdf" 0 ok "[legit] $s + DSS + a document timestamp (PDFBox)"
		audit_strict "$T/$s.dts.pdf"
		check_status 6 "[strict] $s + DSS + a document timestamp: Acrobat's reading of P=1 forbids them"
		check_grep "the strict reading: Acrobat's" "$T/out" "[strict] $s + DSS + timestamp: the reason names the reading"
		check_eq "$(jget "$T/out" '[s["doc_timestamp"] for s in d["signatures"]]')" "[false, true]" \
			"[legit] $s + DSS + timestamp: the second signature is a document timestamp"
	fi
done
# pdfstamp stamp after an approval signature
run "$PDFSTAMP" stamp --password-file "$UPW" -o "$T/ps-r6.stamp.pdf" "$T/ps-r6.pdf"
check_status 0 "[legit] ps-r6: pdfstamp stamp"
expect "$T/ps-r6.stamp.pdf" 0 ok "[legit] ps-r6 + pdfstamp stamp"
# a signed linearized file (AES-256), and one more signature on it
psign "$T/lin-r6.pdf" "$T/lin-r6.signed.pdf" && expect "$T/lin-r6.signed.pdf" 0 ok "[legit] a linearized AES-256 file signed by pdfsig"
psign "$T/lin-r6.signed.pdf" "$T/lin-r6.sig2.pdf" &&
	expect "$T/lin-r6.sig2.pdf" 0 ok "[legit] the signed linearized file + a second signature"

# ---------------------------------------------------------------------------
# A signature outside the form field tree: poppler's pdfsig adds no field to
# an /AcroForm written directly in the catalog, only a widget on the page.
# pdfsig and viewers still show and validate it; audit must list it (not
# "unsigned") and judge the changes after it.
python3 - "$T/stray.pdf" <<'PY'
import sys
content = b"BT /F1 24 Tf 72 700 Td (Signed text) Tj ET"
objs = [b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
out, offs = bytearray(b"%PDF-1.7\n"), []
for i, o in enumerate(objs, 1):
    offs.append(len(out))
    out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
x = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offs)
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
open(sys.argv[1], "wb").write(out)
PY
if pdfsig -add-signature -nssdir "sql:$NSS" -nick attack "$T/stray.pdf" "$T/stray.signed.pdf" </dev/null \
	>"$T/sign.log" 2>&1; then
	expect "$T/stray.signed.pdf" 0 ok "[stray] pdfsig's signature with a direct /AcroForm"
	check_eq "$(jget "$T/out" 'len(d["signatures"])')" 1 "[stray] audit lists the signature (not 'unsigned')"
	python3 - "$T/stray.signed.pdf" "$T/stray.forged.pdf" <<'PY'
import re, sys
d = open(sys.argv[1], "rb").read()
sx = int(d[d.rfind(b"startxref") + 9:].split()[0])
size = int(re.findall(rb"/Size\s+(\d+)", d)[-1])
root = re.findall(rb"/Root\s+(\d+ \d+ R)", d)[-1]
c = b"BT /F1 24 Tf 72 700 Td (FORGED text) Tj ET"
out = bytearray(d if d.endswith(b"\n") else d + b"\n")
o = len(out)
out += b"4 0 obj\n<< /Length %d >>\nstream\n" % len(c) + c + b"\nendstream\nendobj\n"
x = len(out)
out += b"xref\n0 1\n0000000000 65535 f \n4 1\n%010d 00000 n \n" % o
out += b"trailer\n<< /Size %d /Root %s /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (size, root, sx, x)
open(sys.argv[2], "wb").write(out)
PY
	expect "$T/stray.forged.pdf" 6 violation "[stray] the signed page's content replaced"
	kind_has page-content "[stray] the signed page's content replaced"
	sig_valid "$T/stray.forged.pdf" "[stray] the signed page's content replaced"
else
	fail "[stray] pdfsig signs a file with a direct /AcroForm" "$(cat "$T/sign.log")"
fi

finish
