#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/ltv-pipeline.sh - PAdES B-LTA in one pipeline on an encrypted
# file opened with the user password (issue 31): sign with pdfsig ->
# `dss --fetch --vri` -> `timestamp` -> `dss --fetch` (the timestamp's
# own chain and revocation data).
#
# 1. A PKI made with openssl in the run: a root, an intermediate (AIA
#    caIssuers -> root.der, CRL DP -> root.crl), a signer and a TSA
#    certificate (critical EKU timeStamping) issued by the intermediate,
#    both with AIA caIssuers -> int.der, AIA ocsp and CRL DP -> int.crl,
#    and a delegated OCSP signer.  fixtures/ltvserve.py serves the
#    certificates and CRLs and forwards /ocsp to `openssl ocsp -port`;
#    fixtures/tsa.py is the TSA (`openssl ts -reply`); all on 127.0.0.1,
#    free ports, stopped on exit.
# 2. Each step exits 0 and appends to the previous file (its bytes are a
#    prefix); pdfsig validates the signature after every step; openssl ts
#    -verify accepts the token against its /ByteRange bytes with the root
#    as the only trust anchor; the last dss asks the OCSP responder about
#    the TSA certificate (the server's log) and its /DSS then holds the TSA
#    certificate (pikepdf) and an OCSP response that openssl verifies and
#    that calls the TSA certificate good; audit calls every
#    change after the signature permitted: dss, doc-timestamp, dss.
# 3. A second timestamp extends the archive and covers the first.
# 4. PDFBox opens each output with the user password and Bouncy Castle
#    verifies the signature and every timestamp (fixtures/SigCheck.java;
#    poppler 22's pdfsig cannot validate ETSI.RFC3161 timestamps).
# 5. The pipeline again from signatures made by PDFBox 2 and iText 5.
# 6. `timestamp --lta --vri` in one command, with -o and in place: two
#    revisions (the timestamp, then a DSS with the TSA's chain and an OCSP
#    response for the TSA certificate, and a /VRI entry keyed by the SHA-1
#    of the timestamp's /Contents); the /ByteRange ends where the DSS
#    revision begins; pdfsig, openssl ts -verify, pikepdf, PDFBox + Bouncy
#    Castle and audit judge it; --cache serves a second run; a failed fetch
#    (OCSP 500, CRL 404) and -o - leave the file byte-identical.

. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/pki.sh"

pike_need

e2e_inputs qpdf-r6-table qpdf-r5-table
U=$(head -n 1 "$UPW")
PKI_NICK=pipeline-signer
W=$T/www
mkdir -p "$W"
pki_start_http "$W" || { fail "the HTTP fixture listens" "$(cat "$T/http.err")"; finish; }
B=http://127.0.0.1:$HP

# ---------------------------------------------------------------------------
# 1. The PKI (pki.sh, a root and an intermediate naming $B), the OCSP
# responder, the TSA.
pipeline_pki() {
	pki_cnf "$B"
	pki_ts_cnf int.pem "sha256, sha384, sha512"
	pki_root root "pdfstamp pipeline root"
	pki_issue root v3_int int "pdfstamp pipeline int"
	pki_crl root root.crl.pem root.crl
	pki_issue int v3_leaf leaf "pdfstamp pipeline signer"
	pki_issue int v3_tsa tsa "pdfstamp pipeline TSA"
	pki_issue int v3_ocsp ocsp "pdfstamp pipeline OCSP"
	pki_crl int int.crl.pem int.crl
	pki_der root int leaf tsa
	pki_p12 leaf int
	cat int.pem tsa.pem >untrusted.pem
}
pki_make "making the PKI with openssl" pipeline_pki
cp "$K/root.der" "$K/int.der" "$K/root.crl" "$K/int.crl" "$W/"
ok "openssl made a root, an intermediate, a signer, a TSA and an OCSP signer"

pki_start_ocsp int ocsp || { fail "openssl ocsp listens"; finish; }
pki_start_tsa || { fail "the test TSA starts" "$(cat "$T/tsa.err")"; finish; }
TSA=$TSA/ok
pki_nss "$K/leaf.p12" "pipeline root" "$K/root.pem"

# pki_tsverify FILE N LABEL: the root the only anchor
PKI_TS_CAFILE=$K/root.pem
PKI_TS_UNTRUSTED=$K/untrusted.pem
step_ok() { # PREV NEXT LABEL
	check_status 0 "$3: exit 0"
	cmp_prefix "$1" "$2" "$3"
	sigstate "$2" >"$T/sig.txt"
	check_grep 'Signature is Valid' "$T/sig.txt" "$3: pdfsig still validates the signature"
}

# ---------------------------------------------------------------------------
# 2. The pipeline.
S=$T/signed.pdf
if ! pki_sign "$D/qpdf-r6-table.pdf" "$S" "pipeline"; then
	fail "pdfsig signs the encrypted file" "$(cat "$T/sign.log")"
	finish
fi
run "$PDFSTAMP" dss --fetch --vri --json --password-file "$UPW" -o "$T/lt.pdf" "$S"
step_ok "$S" "$T/lt.pdf" "dss --fetch --vri (B-LT)"
run "$PDFSTAMP" timestamp --tsa "$TSA" --tsa-ca "$K/root.pem" --json --password-file "$UPW" \
	-o "$T/ts.pdf" "$T/lt.pdf"
step_ok "$T/lt.pdf" "$T/ts.pdf" "timestamp"
check_eq "$(jget "$T/out" 'd["tsa"]')" '"CN=pdfstamp pipeline TSA"' "timestamp: the TSA is named"
pki_tsverify "$T/ts.pdf" 1 "timestamp"
: >"$T/http.log"
run "$PDFSTAMP" dss --fetch --json --password-file "$UPW" -o "$T/lta.pdf" "$T/ts.pdf"
step_ok "$T/ts.pdf" "$T/lta.pdf" "dss --fetch after the timestamp (B-LTA)"
cp "$T/out" "$T/lta.json"
check_grep 'POST /ocsp' "$T/http.log" "the last dss asks the OCSP responder (about the TSA certificate)"
pki_tsverify "$T/lta.pdf" 1 "the timestamp after the last dss"
cat >"$T/chk.py" <<'PY'
import sys
import pikepdf
path, pw, pki = sys.argv[1:4]
def res(ok, desc, detail=""):
    print(("OK\t" if ok else "FAIL\t") + desc + ("\t" + str(detail) if not ok else ""))
rd = lambda n: open(pki + "/" + n, "rb").read()
pdf = pikepdf.open(path, password=pw)
dss = pdf.Root.DSS
got = lambda k: [bytes(s.read_raw_bytes()) for s in dss.get(k, [])]
certs, ocsps = got("/Certs"), got("/OCSPs")
res(rd("tsa.der") in certs, "/DSS /Certs holds the TSA certificate")
res(all(rd(c + ".der") in certs for c in ("leaf", "int", "root")),
    "/DSS /Certs still holds the signer's chain")
res(len(ocsps) >= 2, "/DSS /OCSPs holds at least two responses", len(ocsps))
for i, o in enumerate(ocsps):
    open("%s/got%d.ocsp" % (pki, i), "wb").write(o)
PY
pike_feed "$T/chk.py" "$T/lta.pdf" "$U" "$K"
good=
for o in "$K"/got*.ocsp; do
	if openssl ocsp -respin "$o" -issuer "$K/int.pem" -cert "$K/tsa.pem" -VAfile "$K/ocsp.pem" \
		-CAfile "$K/root.pem" -no_nonce 2>/dev/null | grep -q 'tsa.pem: good'; then
		good=$o
	fi
done
if [ -n "$good" ]; then
	ok "openssl verifies an embedded OCSP response saying the TSA certificate is good"
else
	fail "openssl verifies an embedded OCSP response saying the TSA certificate is good"
fi
run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/lta.pdf"
check_eq "$(jget "$T/out" '[d["verdict"], d["forbidden"], [sorted({c["kind"] for c in r["changes"]}) for r in d["revisions"][1:]]]')" \
	'["ok", 0, [[], ["dss"], ["doc-timestamp"], ["dss"]]]' \
	"audit: ok; after the signature a DSS, a document timestamp and a DSS update, all permitted"

# ---------------------------------------------------------------------------
# 3. A later timestamp extends the archive.
run "$PDFSTAMP" timestamp --tsa "$TSA" --json --password-file "$UPW" -o "$T/lta2.pdf" "$T/lta.pdf"
step_ok "$T/lta.pdf" "$T/lta2.pdf" "a second timestamp"
pki_tsverify "$T/lta2.pdf" 1 "the second timestamp"
pki_tsverify "$T/lta2.pdf" 2 "the first timestamp, after the second"

# ---------------------------------------------------------------------------
# 4. An independent reader of the encrypted file: PDFBox opens it with the
# user password and Bouncy Castle checks every signature field against its
# /ByteRange (fixtures/SigCheck.java): the signature, and each timestamp's
# token (imprint and TSA signature), with /Contents read from the object as
# PDFBox decrypts it equal to the file's bytes; and PDFBox sees the DSS.
J=/usr/share/java
JARS=$J/pdfbox2.jar:$J/fontbox2.jar:$J/commons-logging.jar:$J/bcprov.jar:$J/bcpkix.jar:$J/bcutil.jar
if javac -nowarn -cp "$JARS" -d "$T/java" "$TOP_SRCDIR/tests/e2e/fixtures/SigCheck.java" \
	>"$T/javac.log" 2>&1; then
	for f in ts lta2; do
		if java -cp "$JARS:$T/java" SigCheck "$T/$f.pdf" "$U" >"$T/sc-$f.out" 2>&1; then
			ok "PDFBox opens $f.pdf with the user password"
		else
			fail "PDFBox opens $f.pdf with the user password" "$(head -c 600 "$T/sc-$f.out")"
		fi
	done
	check_eq "$(awk '$1 == "sig" { v = $4 " " $5; $1 = $2 = $3 = ""; print $5 == "ok" ? v : substr($0, 4) }' "$T/sc-ts.out")" \
		"$(printf 'adbe.pkcs7.detached ok\nETSI.RFC3161 ok')" \
		"PDFBox + Bouncy Castle: the signature and the timestamp verify (ts.pdf)"
	check_eq "$(awk '$1 == "sig" && $5 == "ok" { n++ } END { print n + 0 }' "$T/sc-lta2.out")" 3 \
		"PDFBox + Bouncy Castle: the signature and both timestamps verify (lta2.pdf)"
	check_eq "$(awk '$1 == "sig" && $3 == "DocTimeStamp" { n++ } END { print n + 0 }' \
		"$T/sc-lta2.out")" 2 "both timestamps are /Type /DocTimeStamp"
	check_grep '^dss certs [1-9][0-9]* ocsps [1-9]' "$T/sc-lta2.out" \
		"PDFBox reads the DSS's certificates and OCSP responses"

	# 5. The same pipeline from signatures by other producers: PDFBox 2 and
	# iText 5 sign the encrypted file (fixtures/AuditSign.java, the CMS by
	# openssl with the same signer), then dss --fetch --vri, timestamp and
	# dss --fetch with the user password; PDFBox + Bouncy Castle verify the
	# signature and the timestamp, and audit calls every step permitted.
	JARS5=$JARS:$J/itext5.jar
	O=$(head -n 1 "$OPW")
	if javac -nowarn -cp "$JARS5" -d "$T/java" "$TOP_SRCDIR/tests/e2e/fixtures/AuditSign.java" \
		>"$T/javac5.log" 2>&1; then
		for prod in pdfbox itext; do
			if [ $prod = pdfbox ]; then
				set -- pdfbox-sign "$D/qpdf-r6-table.pdf" "$T/$prod-s.pdf" "$O" 0 \
					"$K/leaf.pem" "$K/leaf.key"
			else   # iText 5 reads no R6: the R5 input
				set -- itext-sign "$D/qpdf-r5-table.pdf" "$T/$prod-s.pdf" "$O" 0 - \
					"$K/leaf.pem" "$K/leaf.key"
			fi
			if ! java -cp "$JARS5:$T/java" AuditSign "$@" >"$T/java5.log" 2>&1; then
				fail "$prod signs the encrypted file" "$(head -c 600 "$T/java5.log")"
				continue
			fi
			run "$PDFSTAMP" dss --fetch --vri --password-file "$UPW" -o "$T/$prod-lt.pdf" \
				"$T/$prod-s.pdf"
			check_status 0 "$prod: dss --fetch --vri"
			run "$PDFSTAMP" timestamp --tsa "$TSA" --tsa-ca "$K/root.pem" \
				--password-file "$UPW" -o "$T/$prod-ts.pdf" "$T/$prod-lt.pdf"
			check_status 0 "$prod: timestamp"
			run "$PDFSTAMP" dss --fetch --password-file "$UPW" -o "$T/$prod-lta.pdf" \
				"$T/$prod-ts.pdf"
			check_status 0 "$prod: dss --fetch after the timestamp"
			pki_tsverify "$T/$prod-lta.pdf" 1 "$prod"
			java -cp "$JARS:$T/java" SigCheck "$T/$prod-lta.pdf" "$U" >"$T/sc-$prod.out" 2>&1
			check_eq "$(awk '$1 == "sig" { v = $4 " " $5; $1 = $2 = $3 = ""; print $5 == "ok" ? v : substr($0, 4) }' "$T/sc-$prod.out")" \
				"$(printf 'adbe.pkcs7.detached ok\nETSI.RFC3161 ok')" \
				"$prod: PDFBox + Bouncy Castle verify the signature and the timestamp"
			run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/$prod-lta.pdf"
			check_eq "$(jget "$T/out" 'd["verdict"]')" '"ok"' "$prod: audit is ok"
		done
	else
		fail "javac AuditSign.java" "$(head -c 600 "$T/javac5.log")"
	fi
else
	fail "javac SigCheck.java (PDFBox, Bouncy Castle: bootstrap.sh installs them)" \
		"$(head -c 600 "$T/javac.log")"
fi

# ---------------------------------------------------------------------------
# 6. timestamp --lta: B-LTA in one command.
cat >"$T/lta.py" <<'PY'
import hashlib, re, sys
import pikepdf
path, pw, pki, base = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def res(ok, desc, detail=""):
    print(("OK\t" if ok else "FAIL\t") + desc + ("\t" + str(detail) if not ok else ""))
rd = lambda n: open(pki + "/" + n, "rb").read()
raw = open(path, "rb").read()
eofs = [m.end() for m in re.finditer(rb"%%EOF\r?\n?", raw) if m.start() >= base]
res(len(eofs) == 2, "two revisions after the input", len(eofs))
m = list(re.finditer(rb"/ByteRange\s*\[\s*0\s+(\d+)\s+(\d+)\s+(\d+)\s*\]", raw))[-1]
a, b, c = map(int, m.groups())
res(len(eofs) == 2 and b + c == eofs[0], "the timestamp's /ByteRange ends where the DSS "
    "revision begins", (b + c, eofs))
pdf = pikepdf.open(path, password=pw)
dss = pdf.Root.DSS
got = lambda k: [bytes(s.read_raw_bytes()) for s in dss.get(k, [])]
certs = got("/Certs")
res(rd("tsa.der") in certs, "/DSS /Certs holds the TSA certificate")
res(all(rd(x + ".der") in certs for x in ("int", "root")), "/DSS /Certs holds its chain")
ts = [f.V for f in pdf.Root.AcroForm.Fields if "/V" in f and f.V.get("/Type") == "/DocTimeStamp"]
res(len(ts) >= 1, "a document timestamp", len(ts))
# from the file's bytes: qpdf decrypts a /DocTimeStamp's /Contents (it
# exempts only /Type /Sig), so pikepdf's value is not the token
key = hashlib.sha1(bytes.fromhex(raw[a + 1:b - 1].decode())).hexdigest().upper()
vri = dss.get("/VRI", {})
if len(sys.argv) > 5:
    res("/" + key in vri, "/VRI has an entry keyed by the SHA-1 of the timestamp's /Contents",
        list(vri.keys()))
    if "/" + key in vri:
        e = vri["/" + key]
        res(len(e.get("/OCSP", [])) >= 1 and len(e.get("/Cert", [])) >= 1,
            "the timestamp's /VRI entry names its OCSP responses and certificates")
for i, o in enumerate(got("/OCSPs")):
    open("%s/lta%d.ocsp" % (pki, i), "wb").write(o)
PY
lta_check() { # FILE INPUT LABEL [vri]
	local o good=
	rm -f "$K"/lta*.ocsp
	pike_feed "$T/lta.py" "$1" "$U" "$K" "$(stat -c %s "$2")" \
		${4:+${4%unsigned}}
	for o in "$K"/lta*.ocsp; do
		if openssl ocsp -respin "$o" -issuer "$K/int.pem" -cert "$K/tsa.pem" \
			-VAfile "$K/ocsp.pem" -CAfile "$K/root.pem" -no_nonce 2>/dev/null |
			grep -q 'tsa.pem: good'; then
			good=$o
		fi
	done
	if [ -n "$good" ]; then
		ok "$3: openssl verifies the DSS's OCSP response for the TSA certificate"
	else
		fail "$3: openssl verifies the DSS's OCSP response for the TSA certificate"
	fi
	pki_tsverify "$1" 1 "$3"
	[ "${4:-}" = unsigned ] && return
	run "$PDFSTAMP" audit --json --password-file "$UPW" "$1"
	check_eq "$(jget "$T/out" '[d["verdict"], [sorted({c["kind"] for c in r["changes"]}) for r in d["revisions"][-2:]]]')" \
		'["ok", [["doc-timestamp"], ["dss"]]]' "$3: audit: ok; a timestamp, then a DSS update"
}
: >"$T/http.log"
run "$PDFSTAMP" timestamp --tsa "$TSA" --tsa-ca "$K/root.pem" --lta --vri --json \
	--password-file "$UPW" -o "$T/one.pdf" "$T/lt.pdf"
step_ok "$T/lt.pdf" "$T/one.pdf" "timestamp --lta -o"
check_eq "$(jget "$T/out" '[d["lta"]["written"], d["lta"]["certs"] >= 3, d["lta"]["ocsps"] >= 1, d["lta"]["xref_offset"] > d["xref_offset"], d["lta"]["base_length"] == d["base_length"] + d["bytes_appended"], "ocsp" in {f["what"] for f in d["lta"]["fetched"]}, all(f["status"] == 200 for f in d["lta"]["fetched"])]')" \
	'[true, true, true, true, true, true, true]' \
	"timestamp --lta: JSON tells the second update and what was fetched"
check_grep 'POST /ocsp' "$T/http.log" "timestamp --lta asks the OCSP responder"
lta_check "$T/one.pdf" "$T/lt.pdf" "timestamp --lta -o" vri
if [ -d "$T/java" ] && java -cp "$JARS:$T/java" SigCheck "$T/one.pdf" "$U" >"$T/sc-one.out" 2>&1; then
	check_eq "$(awk '$1 == "sig" { print $4, $5 }' "$T/sc-one.out")" \
		"$(printf 'adbe.pkcs7.detached ok\nETSI.RFC3161 ok')" \
		"timestamp --lta: PDFBox + Bouncy Castle verify the signature and the timestamp"
else
	fail "timestamp --lta: PDFBox opens the output" "$(head -c 600 "$T/sc-one.out" 2>/dev/null)"
fi

cp "$T/lt.pdf" "$T/inplace.pdf"
cp "$T/lt.pdf" "$T/inplace.before"
mkdir -p "$T/cache"
run "$PDFSTAMP" timestamp --tsa "$TSA" --lta --cache "$T/cache" --json --password-file "$UPW" \
	--in-place "$T/inplace.pdf"
step_ok "$T/inplace.before" "$T/inplace.pdf" "timestamp --lta --in-place"
check_eq "$(jget "$T/out" '[d["lta"]["written"], any(not f["from_cache"] for f in d["lta"]["fetched"])]')" \
	'[true, true]' "timestamp --lta --cache: the first run asks the network"
if [ -e "$T/inplace.pdf.pdfstamp-journal" ]; then
	fail "no journal is left after timestamp --lta"
fi
lta_check "$T/inplace.pdf" "$T/inplace.before" "timestamp --lta --in-place"
cp "$T/inplace.pdf" "$T/inplace2.before"
: >"$T/http.log"
run "$PDFSTAMP" timestamp --tsa "$TSA" --lta --cache "$T/cache" --json --password-file "$UPW" \
	--in-place "$T/inplace.pdf"
cp "$T/http.log" "$T/http2.log"   # before pdfsig, which asks the responder itself
step_ok "$T/inplace2.before" "$T/inplace.pdf" "a second timestamp --lta (archive extension)"
check_eq "$(jget "$T/out" '[len(d["lta"]["fetched"]) > 0, all(f["from_cache"] for f in d["lta"]["fetched"]), d["lta"]["written"]]')" \
	'[true, true, false]' \
	"timestamp --lta --cache: the second run takes every reply from the cache (and /DSS has them)"
check_eq "$(wc -l <"$T/http2.log")" 0 "the second run sends no request to the PKI's servers"
pki_tsverify "$T/inplace.pdf" 2 "the first --lta timestamp, under the second"

# AES-128 and RC4 (unsigned files: the timestamp's own chain only)
O=$(head -n 1 "$OPW")
qpdf --encrypt "$U" "$O" 128 --use-aes=y -- "$TOP_SRCDIR/samples/plain-2page.pdf" "$T/aes128.pdf"
qpdf --allow-weak-crypto --encrypt "$U" "$O" 128 --use-aes=n -- \
	"$TOP_SRCDIR/samples/plain-2page.pdf" "$T/rc4.pdf"
for f in aes128 rc4; do
	run "$PDFSTAMP" timestamp --tsa "$TSA" --lta --vri --password-file "$UPW" \
		-o "$T/$f-lta.pdf" "$T/$f.pdf"
	check_status 0 "$f: timestamp --lta: exit 0"
	cmp_prefix "$T/$f.pdf" "$T/$f-lta.pdf" "$f: timestamp --lta"
	lta_check "$T/$f-lta.pdf" "$T/$f.pdf" "$f: timestamp --lta" unsigned
	run qpdf --check --password="$U" "$T/$f-lta.pdf"
	check_grep 'No syntax or stream encoding errors' "$T/out" "$f: qpdf --check"
done

# a batch in place (group commit defers the second updates)
cp "$T/lt.pdf" "$T/b1.pdf"
cp "$T/lt.pdf" "$T/b2.pdf"
cp "$T/lt.pdf" "$T/b3.pdf"
run "$PDFSTAMP" timestamp --tsa "$TSA" --lta --cache "$T/cache" --jobs 2 --json \
	--password-file "$UPW" --ledger "$T/ledger" -i "$T/b1.pdf" "$T/b2.pdf" "$T/b3.pdf"
check_status 0 "timestamp --lta --jobs 2 --ledger over three files: exit 0"
check_eq "$(grep -c '"ok":true' "$T/out")" 3 "three success lines"
for f in b1 b2 b3; do
	lta_check "$T/$f.pdf" "$T/lt.pdf" "batch $f"
done
run "$PDFSTAMP" timestamp --tsa "$TSA" --lta --cache "$T/cache" --json \
	--password-file "$UPW" --ledger "$T/ledger" -i "$T/b1.pdf"
check_grep '"skipped":"done in the ledger"' "$T/out" "the ledger skips a file done with --lta"

# failures: the file is left byte-identical
cp "$T/lt.pdf" "$T/fail.pdf"
echo "ocsp500 crl404" >"$W/mode"
run "$PDFSTAMP" timestamp --tsa "$TSA" --lta --json --password-file "$UPW" --in-place "$T/fail.pdf"
check_status 1 "timestamp --lta with OCSP 500 and CRL 404: exit 1"
check_eq "$(jget "$T/out" '[d["ok"], sorted({(f["what"], f["status"]) for f in d["lta"]["fetched"] if f["what"] != "cert"})]')" \
	'[false, [["crl", 404], ["ocsp", 500]]]' \
	"the failure line's lta.fetched names the OCSP 500 and the CRL 404"
check_grep 'validation data' "$T/err" "the message says the validation data could not be had"
if cmp -s "$T/lt.pdf" "$T/fail.pdf"; then
	ok "the file is byte-identical after the failed fetch"
else
	fail "the file is byte-identical after the failed fetch"
fi
if [ -e "$T/fail.pdf.pdfstamp-journal" ]; then
	fail "no journal is left after the failed fetch"
fi
rm -f "$W/mode"
# the second update fails after the timestamp is durable: the timestamp
# stays, whole, the error says so, nothing of the second is left
if have_faults; then
	# the last fsync of a whole run is the second update's file sync
	cp "$T/lt.pdf" "$T/half.pdf"
	PDFSTAMP_FAULT=trace run "$PDFSTAMP_HOOKED" timestamp --tsa "$TSA" --lta \
		--password-file "$UPW" --in-place "$T/half.pdf"
	nsync=$(grep -c 'fault point fsync' "$T/err")
	cp "$T/lt.pdf" "$T/half.pdf"
	PDFSTAMP_FAULT=fail:fsync:$nsync run "$PDFSTAMP_HOOKED" timestamp --tsa "$TSA" --lta \
		--password-file "$UPW" --json --in-place "$T/half.pdf"
	check_status 1 "timestamp --lta, the second update failing: exit 1"
	check_grep "timestamp was appended and is complete, but its validation data was not added.*'pdfstamp dss --fetch' adds it later" \
		"$T/err" "the message says the timestamp stays and the data is missing"
	cmp_prefix "$T/lt.pdf" "$T/half.pdf" "the failed second update"
	check_eq "$(grep -c '%%EOF' "$T/half.pdf")" "$(($(grep -c '%%EOF' "$T/lt.pdf") + 1))" \
		"the file holds the timestamp's revision and nothing of the second"
	pki_tsverify "$T/half.pdf" 1 "the timestamp left by the failed second update"
	run "$PDFSTAMP" verify --password-file "$UPW" "$T/half.pdf"
	check_status 0 "pdfstamp verify accepts the file left by the failed second update"
	if [ -e "$T/half.pdf.pdfstamp-journal" ]; then
		fail "no journal is left after the failed second update"
	fi
fi
run "$PDFSTAMP" timestamp --tsa "$TSA" --lta --password-file "$UPW" -o - "$T/lt.pdf"
check_status 2 "timestamp --lta -o - (standard output): exit 2"
check_grep 'second update' "$T/err" "the message says why"
run "$PDFSTAMP" timestamp --tsa "$TSA" --vri --password-file "$UPW" -o "$T/x.pdf" "$T/lt.pdf"
check_status 2 "--vri without --lta: exit 2"
if [ -e "$T/x.pdf" ]; then
	fail "nothing is written for a usage error"
fi

finish
