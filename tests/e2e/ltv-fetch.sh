#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/ltv-fetch.sh - `pdfstamp dss --fetch` (issue 31): the validation
# data of a signed, encrypted file fetched from the places its certificates
# name, on 127.0.0.1 only.
#
# 1. A PKI made with openssl in the run: a root, an intermediate (AIA
#    caIssuers -> root.der, CRL DP -> root.crl), a signer (AIA caIssuers ->
#    int.der, AIA ocsp -> /ocsp, CRL DP -> int.crl) and a delegated OCSP
#    signer (id-kp-OCSPSigning) of the intermediate.  fixtures/ltvserve.py
#    serves the certificates and CRLs and forwards /ocsp to `openssl ocsp
#    -port`; both on free ports, stopped on exit.  pdfsig signs qpdf's
#    encrypted R6 file with the signer (NSS; the CMS carries the signer and
#    the intermediate, not the root).
# 2. `dss --fetch --vri --json`: pdfsig still validates the signature over
#    the same ranges; pikepdf (with the user password) finds in /DSS exactly
#    the signer, the intermediate and the root fetched from caIssuers, one
#    OCSP response and the root's CRL, byte for byte what openssl served
#    (`openssl ocsp -respin` verifies the embedded response against the
#    intermediate and says good, and names the delegated responder), and a
#    /VRI entry keyed by the SHA-1 of the /Contents; qpdf decrypts the new
#    streams to the same bytes; the JSON line lists each request.
#    qpdf's RC4-128 and AES-128 files, signed by pdfsig, in one batch with a
#    cache: each reply fetched once for both files (the cache entry's lock).
#    A document timestamp (PDFBox, fixtures/AuditSign.java, a TSA
#    certificate of the intermediate): the TSA certificate and its OCSP
#    response are added too, a /VRI key for each, and audit says ok.
# 3. --cache: a first run fills the cache; with both servers stopped, a
#    second run with --cache on a fresh copy succeeds with every reply
#    "from_cache" and adds the same data; --offline without a cache fails.
#    With the servers back: http_proxy is used, HTTP_PROXY is not, NO_PROXY
#    wins; damaged cache entries are fetched again and mended.
# 4. Failure modes, each exiting non-zero with a clear message and leaving
#    the file byte-identical (-i): connection refused, HTTP 500 and 404,
#    garbage, an oversized reply, a response for another certificate,
#    `unauthorized`, a replayed nonce, a responder without id-kp-OCSPSigning,
#    a CRL of another issuer or with a spoilt signature, 4 redirects, a
#    redirect to file://, a timeout (--timeout 1), a revoked signer
#    (reported); 3 redirects are followed.
#    The delegated responder: with id-pkix-ocsp-nocheck (the main runs) its
#    certificate is in /DSS and /VRI and nothing is fetched for it; a second
#    responder without it gets the intermediate's CRL, its reply about
#    itself being refused (no proof), and without that CRL the file fails.

. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/pki.sh"

pike_need

e2e_inputs qpdf-r6-table
U=$(head -n 1 "$UPW")
PKI_NICK=ltv-signer
W=$T/www
mkdir -p "$W"
pki_start_http "$W" || { fail "the HTTP fixture listens" "$(cat "$T/http.err")"; finish; }
B=http://127.0.0.1:$HP

# ---------------------------------------------------------------------------
# 1. The PKI (pki.sh, a root and an intermediate naming $B), and the
# certificates of this script's own: the TSA (for PDFBox) without key
# identifiers, the delegated responders with and without
# id-pkix-ocsp-nocheck, each naming where its status is.
ltv_pki() {
	pki_cnf "$B"
	cat >>ca.cnf <<EOF
[v3_tsa_nokeyid]
basicConstraints = CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
authorityInfoAccess = caIssuers;URI:$B/int.der,OCSP;URI:$B/ocsp
crlDistributionPoints = URI:$B/int.crl
[v3_ocsp_nocheck]
basicConstraints = CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,OCSPSigning
noCheck = ignored
authorityInfoAccess = caIssuers;URI:$B/int.der,OCSP;URI:$B/ocsp
crlDistributionPoints = URI:$B/int.crl
[v3_ocsp_aia]
basicConstraints = CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,OCSPSigning
authorityInfoAccess = caIssuers;URI:$B/int.der,OCSP;URI:$B/ocsp
crlDistributionPoints = URI:$B/int.crl
EOF
	pki_root root "pdfstamp ltv root"
	pki_issue root v3_int int "pdfstamp ltv intermediate"
	pki_crl root root.crl.pem root.crl
	pki_issue int v3_leaf leaf "pdfstamp ltv signer"
	pki_issue int v3_tsa_nokeyid tsa "pdfstamp ltv TSA"
	pki_issue int v3_ocsp_nocheck ocsp "pdfstamp ltv OCSP"
	# the same without id-pkix-ocsp-nocheck: its status is to be fetched
	pki_issue int v3_ocsp_aia ocsp2 "pdfstamp ltv OCSP 2"
	pki_crl int int.crl.pem int.crl
	# a responder the intermediate issued without id-kp-OCSPSigning
	pki_issue int v3_leaf rogue "pdfstamp ltv rogue"
	pki_der tsa root int leaf ocsp ocsp2
	# canned replies for the failure cases: the OCSP signer's own status
	# (another certificate), unauthorized, and the signer revoked
	openssl ocsp -index int.idx -CA int.pem -rsigner ocsp.pem -rkey ocsp.key -issuer int.pem \
		-cert ocsp.pem -respout other.ocsp -ndays 1 -no_nonce
	# a good reply for the signer, but to an earlier request (its nonce)
	openssl ocsp -index int.idx -CA int.pem -rsigner ocsp.pem -rkey ocsp.key -issuer int.pem \
		-cert leaf.pem -respout replay.ocsp -ndays 1
	printf '\x30\x03\x0a\x01\x06' >unauth.ocsp
	cp int.idx revoked.idx
	sed -i '/CN=pdfstamp ltv signer/s/^V\t\([0-9Z]*\)\t\t/R\t\1\t260101000000Z\t/' revoked.idx
	grep -q '^R' revoked.idx
	openssl ocsp -index revoked.idx -CA int.pem -rsigner ocsp.pem -rkey ocsp.key -issuer int.pem \
		-cert leaf.pem -respout revoked.ocsp -ndays 1 -no_nonce
	openssl ocsp -index int.idx -CA int.pem -rsigner rogue.pem -rkey rogue.key -issuer int.pem \
		-cert leaf.pem -respout rogue.ocsp -ndays 1 -no_nonce
	# the signer's CRL, but issued (and signed) by the root
	pki_crl root wrongissuer.crl.pem wrongissuer.crl
	# RSASSA-PSS (RFC 4055): an OCSP reply and a CRL, and each with an MGF1
	# hash (SHA-512) other than the signature's (SHA-256)
	P='-rsigopt rsa_padding_mode:pss'
	openssl ocsp -index int.idx -CA int.pem -rsigner ocsp.pem -rkey ocsp.key -issuer int.pem \
		-cert leaf.pem -respout pss.ocsp -ndays 1 -no_nonce $P
	openssl ocsp -index int.idx -CA int.pem -rsigner ocsp.pem -rkey ocsp.key -issuer int.pem \
		-cert leaf.pem -respout pssmgf.ocsp -ndays 1 -no_nonce $P -rsigopt rsa_mgf1_md:sha512
	P='-sigopt rsa_padding_mode:pss'
	pki_crl int pss.crl.pem pss.crl $P
	pki_crl int pssmgf.crl.pem pssmgf.crl $P -sigopt rsa_mgf1_md:sha512
	openssl ocsp -respin pssmgf.ocsp -resp_text -noverify | grep -q 'mgf1 with sha512'
	openssl crl -in pssmgf.crl -inform DER -noout -text | grep -q 'mgf1 with sha512'
	# the intermediate's CRL with its signature spoilt (last byte flipped)
	python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[-1] ^= 1; open(sys.argv[2], "wb").write(d)' \
		int.crl badsig.crl
	pki_p12 leaf int
}
pki_make "making the PKI with openssl" ltv_pki
cp "$K/root.der" "$K/int.der" "$K/root.crl" "$K/int.crl" "$K/other.ocsp" "$K/unauth.ocsp" \
	"$K/revoked.ocsp" "$K/replay.ocsp" "$K/rogue.ocsp" \
	"$K/wrongissuer.crl" "$K/badsig.crl" "$K/pss.ocsp" "$K/pssmgf.ocsp" "$K/pss.crl" \
	"$K/pssmgf.crl" "$W/"
ok "openssl made a root, an intermediate, a signer and a delegated OCSP signer"
openssl x509 -in "$K/ocsp.pem" -noout -text >"$T/ocsp.txt" 2>&1
openssl x509 -in "$K/ocsp2.pem" -noout -text >"$T/ocsp2.txt" 2>&1
check_grep 'OCSP No Check' "$T/ocsp.txt" "the first delegated responder has id-pkix-ocsp-nocheck"
check_no_grep 'OCSP No Check' "$T/ocsp2.txt" "the second has not"

pki_start_ocsp int ocsp || { fail "openssl ocsp listens" "$(cat "$T/ocsp.log")"; finish; }
pki_nss "$K/leaf.p12" "ltv root" "$K/root.pem"
S=$T/signed.pdf
if ! pki_sign "$D/qpdf-r6-table.pdf" "$S" "ltv e2e"; then
	fail "pdfsig signs the encrypted file" "$(cat "$T/sign.log")"
	finish
fi
sigstate "$S" >"$T/sig0.txt"
check_grep 'Signature is Valid' "$T/sig0.txt" "pdfsig made a valid signature"

# The independent check of the result (pikepdf): /DSS holds exactly EXPECTED.
cat >"$T/chk.py" <<'PY'
import hashlib, sys
import pikepdf

path, pw, pki, label = sys.argv[1:5]
# the responder that signed the OCSP reply: "ocsp" (nocheck: no data for
# it) or "ocsp2" (without: the intermediate's CRL for it)
resp = sys.argv[5] if len(sys.argv) > 5 else "ocsp"
def res(ok, desc, detail=""):
    print(("OK\t" if ok else "FAIL\t") + label + ": " + desc + ("\t" + str(detail) if not ok else ""))
rd = lambda n: open(pki + "/" + n, "rb").read()
pdf = pikepdf.open(path, password=pw)
dss = pdf.Root.get("/DSS")
res(dss is not None, "the catalog has /DSS")
if dss is None:
    sys.exit(0)
got = lambda k: [bytes(s.read_raw_bytes()) for s in dss.get(k, [])]
certs, ocsps, crls = got("/Certs"), got("/OCSPs"), got("/CRLs")
want = [rd("leaf.der"), rd("int.der"), rd("root.der"), rd(resp + ".der")]
res(sorted(certs) == sorted(want) and len(certs) == 4,
    "/Certs holds exactly the signer, the intermediate, the root and the OCSP responder " + resp,
    [len(c) for c in certs])
wcrl = [rd("root.crl")] + ([rd("int.crl")] if resp == "ocsp2" else [])
res(sorted(crls) == sorted(wcrl) and len(crls) == len(wcrl),
    "/CRLs holds exactly the root's CRL (for the intermediate)" +
    (" and the intermediate's (for the responder without nocheck)" if resp == "ocsp2" else ""),
    [len(c) for c in crls])
res(len(ocsps) == 1, "/OCSPs holds one OCSP response (for the signer)", len(ocsps))
for i, o in enumerate(ocsps):
    open(pki + "/got%d.ocsp" % i, "wb").write(o)
raw = open(path, "rb").read()
res(all(x not in raw for x in want + crls + ocsps), "nothing fetched is in the file in clear")
keys = set()
for f in pdf.Root.AcroForm.Fields:
    if f.get("/FT") == "/Sig" and "/V" in f:
        keys.add(hashlib.sha1(bytes(f.V.Contents)).hexdigest().upper())
vri = dss.get("/VRI")
res(vri is not None and set(k[1:] for k in vri.keys()) == keys and len(keys) == 1,
    "/VRI has the one key of the signature's /Contents")
if vri is not None and keys:
    e = vri.get("/" + next(iter(keys)))
    n = lambda k: len(e.get(k, [])) if e is not None else -1
    res((n("/Cert"), n("/OCSP"), n("/CRL")) == (4, 1, len(wcrl)), "its entry lists 4 "
        "certificates (the responder's too), the OCSP response and the CRLs",
        (n("/Cert"), n("/OCSP"), n("/CRL")))
print("#" + " ".join("%d" % s.objgen[0] for k in ("/Certs", "/OCSPs", "/CRLs") for s in dss.get(k, [])))
PY
pikecheck() { pike_feed "$T/chk.py" "$@"; }

# ===========================================================================
# 2. dss --fetch --vri
# ===========================================================================
O=$T/fetched.pdf
: >"$T/http.log"
run "$PDFSTAMP" dss --fetch --vri --json --password-file "$UPW" -o "$O" "$S"
check_status 0 "dss --fetch --vri"
cp "$T/out" "$T/fetch.json"
check_eq "$(jget "$T/fetch.json" '[d["written"], sorted((f["what"], f["status"], f["from_cache"], f["url"].rsplit("/", 1)[1]) for f in d["fetched"])]')" \
	'[true, [["cert", 200, false, "root.der"], ["crl", 200, false, "root.crl"], ["ocsp", 200, false, "ocsp"]]]' \
	"the JSON line lists the root from caIssuers, the OCSP response and the root's CRL"
check_eq "$(jget "$T/fetch.json" '[f.get("error") for f in d["fetched"] if f.get("error")]')" "[]" \
	"no request failed"
check_eq "$(jget "$T/fetch.json" 'all(f["bytes"] > 0 for f in d["fetched"])')" true \
	"the JSON line gives each reply's size"
check_eq "$(sort "$T/http.log" | tr '\n' ' ')" "GET /root.crl GET /root.der POST /ocsp " \
	"the server saw exactly those three requests"
if cmp -s -n "$(size_of "$S")" "$S" "$O"; then ok "the signed bytes are intact"; else
	fail "the signed bytes are intact"; fi
sigstate "$O" >"$T/sig1.txt"
check_grep 'Signature is Valid' "$T/sig1.txt" "pdfsig still validates the signature"
check_eq "$(grep 'Signed Ranges' "$T/sig1.txt")" "$(grep 'Signed Ranges' "$T/sig0.txt")" \
	"the signed byte ranges are the same"
pikecheck "$O" "$U" "$K" "fetched"
if openssl ocsp -respin "$K/got0.ocsp" -issuer "$K/int.pem" -VAfile "$K/ocsp.pem" \
	-CAfile "$K/root.pem" -cert "$K/leaf.pem" -no_nonce -resp_text >"$T/ossl.txt" 2>&1 &&
	grep -q 'leaf.pem: good' "$T/ossl.txt" && grep -q 'Response verify OK' "$T/ossl.txt" &&
	grep -q 'OCSP Nonce' "$T/ossl.txt" &&
	grep -q 'Responder Id: CN = pdfstamp ltv OCSP' "$T/ossl.txt"; then
	ok "openssl verifies the embedded OCSP response: good, from the delegated responder"
else
	fail "openssl verifies the embedded OCSP response" "$(grep -v '^  ' "$T/ossl.txt" | head -c 600)"
fi
for n in $(sed -n 's/^#//p' "$T/extra"); do
	qpdf --password-file="$UPW" --show-object="$n" --raw-stream-data "$O" >"$T/q.bin" 2>/dev/null
	if cmp -s "$T/q.bin" "$K/leaf.der" || cmp -s "$T/q.bin" "$K/int.der" ||
		cmp -s "$T/q.bin" "$K/root.der" || cmp -s "$T/q.bin" "$K/root.crl" ||
		cmp -s "$T/q.bin" "$K/ocsp.der" ||
		cmp -s "$T/q.bin" "$K/got0.ocsp"; then
		ok "qpdf decrypts stream $n to what was fetched"
	else
		fail "qpdf decrypts stream $n to what was fetched"
	fi
done
qcheck "$O" "$UPW" "the fetched file"
run "$PDFSTAMP" dss --fetch --verbose --password-file "$UPW" -o "$T/verbose.pdf" "$S"
check_status 0 "dss --fetch --verbose"
check_grep "^pdfstamp: .*signed.pdf: ocsp $B/ocsp: HTTP 200, [0-9]+ bytes$" "$T/err" \
	"--verbose: a line on stderr for each reply"

# The legacy handlers (qpdf's RC4-128 and AES-128 files, signed by pdfsig
# with the user password), in one batch sharing a cache: the second file
# asks nothing.
C0=$T/cache0
mkdir -p "$C0"
L=()
for h in "rc4-128:128 --use-aes=n" "aes-128:128 --use-aes=y"; do
	name=${h%%:*}
	# shellcheck disable=SC2086
	qpdf --allow-weak-crypto --encrypt "$U" "$(head -n 1 "$OPW")" ${h#*:} -- \
		"$TOP_SRCDIR/samples/plain-2page.pdf" "$T/$name.pdf" 2>"$T/q.err" ||
		{ fail "$name: qpdf makes the input" "$(cat "$T/q.err")"; continue; }
	if ! pki_sign "$T/$name.pdf" "$T/$name.signed.pdf" "ltv $name"; then
		fail "$name: pdfsig signs the file" "$(cat "$T/sign.log")"
		continue
	fi
	cp "$T/$name.signed.pdf" "$T/$name.orig.pdf"
	L+=("$T/$name.signed.pdf")
done
: >"$T/http.log"
run "$PDFSTAMP" dss --fetch --vri --json --cache "$C0" --password-file "$UPW" -i "${L[@]}"
check_status 0 "dss --fetch --cache -i on the RC4-128 and AES-128 files"
check_eq "$(wc -l <"$T/http.log")" 3 "the servers saw 3 requests for the two files"
# the two files run side by side (--jobs): whichever asks first fetches,
# the other waits on the cache entry's lock and reads it
check_eq "$(python3 -c 'import json, sys
f = [x for l in open(sys.argv[1]) for x in json.loads(l)["fetched"]]
print(sorted((x["url"].rsplit("/", 1)[1], x["from_cache"]) for x in f))' "$T/out")" \
	"[('ocsp', False), ('ocsp', True), ('root.crl', False), ('root.crl', True), ('root.der', False), ('root.der', True)]" \
	"each reply was fetched once and read from the cache for the other file"
for f in "${L[@]}"; do
	name=$(basename "$f" .signed.pdf)
	if cmp -s -n "$(size_of "$T/$name.orig.pdf")" "$T/$name.orig.pdf" "$f"; then
		ok "$name: the signed bytes are intact"; else fail "$name: the signed bytes are intact"; fi
	sigstate "$f" >"$T/sigl.txt"
	check_grep 'Signature is Valid' "$T/sigl.txt" "$name: pdfsig still validates the signature"
	pikecheck "$f" "$U" "$K" "$name"
	qcheck "$f" "$UPW" "$name"
done

# A document timestamp (PDFBox, the token from `openssl ts -reply` with a
# TSA certificate of the intermediate) over the signed file: --fetch covers
# it too, adding the TSA certificate and an OCSP response for it, and a
# /VRI entry of its own.
JARS=
for j in pdfbox2 fontbox2 commons-logging itext5 bcprov; do
	JARS=$JARS${JARS:+:}/usr/share/java/$j.jar
done
if command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1 &&
	ls /usr/share/java/{pdfbox2,fontbox2,commons-logging,itext5,bcprov}.jar >/dev/null 2>&1; then
	echo 01 >"$K/tsaserial"
	cat >"$K/tsa.cnf" <<EOF
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = $K/tsaserial
digests = sha256
default_policy = 1.2.3.4.1
ess_cert_id_alg = sha256
accuracy = secs:1
crypto_device = builtin
signer_digest = sha256
signer_cert = $K/tsa.pem
signer_key = $K/tsa.key
certs = $K/tsa.pem
EOF
	if ! javac -nowarn -cp "$JARS" -d "$T/java" "$TOP_SRCDIR/tests/e2e/fixtures/AuditSign.java" \
		>"$T/javac.log" 2>&1; then
		fail "javac AuditSign.java" "$(head -c 600 "$T/javac.log")"
	elif ! java -cp "$JARS:$T/java" AuditSign pdfbox-timestamp "$S" "$T/dts.pdf" "$(head -n 1 "$OPW")" \
		"$K/tsa.pem" "$K/tsa.key" "$K/tsa.cnf" >"$T/java.log" 2>&1; then
		fail "PDFBox adds a document timestamp" "$(head -c 600 "$T/java.log")"
	else
		: >"$T/http.log"
		run "$PDFSTAMP" dss --fetch --vri --json --password-file "$UPW" -o "$T/dts-dss.pdf" "$T/dts.pdf"
		check_status 0 "dss --fetch --vri on a signed file with a document timestamp"
		check_eq "$(grep -c '^POST /ocsp' "$T/http.log")" 2 \
			"two OCSP requests: the signer's and the TSA's"
		"$PIKE" - "$T/dts-dss.pdf" "$U" "$K" >"$T/dts.chk" 2>&1 <<'PY'
import hashlib, sys
import pikepdf
path, pw, pki = sys.argv[1:4]
rd = lambda n: open(pki + "/" + n, "rb").read()
pdf = pikepdf.open(path, password=pw)
dss = pdf.Root.DSS
certs = sorted(bytes(s.read_raw_bytes()) for s in dss.Certs)
print("certs", certs == sorted(rd(n) for n in ("leaf.der", "int.der", "root.der", "tsa.der",
                                                "ocsp.der")))
print("ocsps", len(dss.OCSPs))
print("crls", [bytes(s.read_raw_bytes()) for s in dss.CRLs] == [rd("root.crl")])
print("types", sorted(str(f.V.get("/Type")) for f in pdf.Root.AcroForm.Fields
                      if f.get("/FT") == "/Sig" and "/V" in f))
# the /VRI keys: SHA-1 of each /Contents string as stored, from the file's
# bytes (qpdf "decrypts" the /Contents of a /DocTimeStamp, which ISO
# 32000-2 7.6.2 leaves unencrypted, and PDFBox leaves its encrypted
# placeholder's tail there: pikepdf's bytes are not the stored ones)
raw = open(path, "rb").read()
import re
keys = {hashlib.sha1(bytes.fromhex(m.group(1).decode())).hexdigest().upper()
        for m in re.finditer(rb"/Contents\s*<([0-9A-Fa-f\s]+)>", raw)}
print("vri", sorted(k[1:] for k in dss.VRI.keys()) == sorted(keys) and len(keys) == 2)
PY
		check_eq "$(tr '\n' ' ' <"$T/dts.chk")" \
			"certs True ocsps 2 crls True types ['/DocTimeStamp', '/Sig'] vri True " \
			"/DSS: the chain, the TSA and responder certificates, 2 OCSP responses, the root's CRL; a /VRI key each"
		# poppler's pdfsig does not validate ETSI.RFC3161 timestamps:
		# the signature only, and audit for the timestamp's digest
		sigstate "$T/dts-dss.pdf" >"$T/sigd.txt"
		check_eq "$(grep -c 'Signature is Valid' "$T/sigd.txt")" 1 \
			"pdfsig still validates the signature under the timestamp and the DSS"
		run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/dts-dss.pdf"
		check_eq "$(jget "$T/out" '[d["verdict"], [s["doc_timestamp"] for s in d["signatures"]]]')" \
			'["ok", [false, true]]' "audit: the timestamp is one, and the DSS update after it is ok"
	fi
else
	skip "a document timestamp: needs javac, java and the PDFBox jars"
fi

# libcurl is opened only when a request is made (extlib.c): not by a
# stamp, nor by dss without --fetch; one that cannot be loaded fails the
# command, the file unchanged
run env LD_DEBUG=files "$PDFSTAMP" stamp --password-file "$UPW" -o "$T/lazy-stamp.pdf" "$S"
check_status 0 "lazy libcurl: a stamp"
check_grep 'file=libpdfstamp\.so\.0' "$T/err" "lazy libcurl: LD_DEBUG=files lists what is loaded"
check_no_grep 'file=libcurl' "$T/err" "lazy libcurl: a stamp does not open it"
run env LD_DEBUG=files "$PDFSTAMP" dss --fetch --password-file "$UPW" -o "$T/lazy-dss.pdf" "$S"
check_grep 'file=libcurl\.so\.4 .*dynamically loaded by .*libpdfstamp' "$T/err" \
	"lazy libcurl: dss --fetch opens it"
mkdir -p "$T/badlib"
printf 'not a shared object\n' >"$T/badlib/libcurl.so.4"
cp "$S" "$T/keep.pdf"
run env "LD_LIBRARY_PATH=$T/badlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$PDFSTAMP" dss --fetch --password-file "$UPW" -i "$T/keep.pdf"
check_status 1 "lazy libcurl: dss --fetch when it cannot be loaded"
check_grep 'an HTTP request needs a library that is not available: libcurl\.so\.4 cannot be loaded' \
	"$T/err" "lazy libcurl: the message names it"
check_true cmp -s "$S" "$T/keep.pdf" "lazy libcurl: the file is unchanged"

# ===========================================================================
# 3. --cache and --offline
# ===========================================================================
C=$T/cache
mkdir -p "$C"
run "$PDFSTAMP" dss --fetch --vri --json --cache "$C" --password-file "$UPW" -o "$T/c1.pdf" "$S"
check_status 0 "dss --fetch --cache (filling it)"
check_eq "$(ls "$C" | grep -c '\.der$')" 3 "the cache holds the three replies"
check_eq "$(find "$C" -type f ! -perm 600 | wc -l)" 0 "the cache files are mode 0600"
# a planted symlink under another key is never followed
ln -s /etc/passwd "$C/$(printf '%064d' 0).der"
pki_stop_all
run "$PDFSTAMP" dss --fetch --vri --json --cache "$C" --password-file "$UPW" -o "$T/c2.pdf" "$S"
check_status 0 "dss --fetch --cache with both servers stopped"
check_eq "$(jget "$T/out" '[len(d["fetched"]), all(f["from_cache"] and f["status"] == 0 for f in d["fetched"])]')" \
	"[3, true]" "every reply came from the cache, no request sent"
pikecheck "$T/c2.pdf" "$U" "$K" "from the cache"
run "$PDFSTAMP" dss --fetch --offline --password-file "$UPW" -o "$T/c3.pdf" "$S"
check_ne "$RC" 0 "dss --fetch --offline without a cache fails"
check_grep 'offline' "$T/err" "the message says the reply is not in the cache, offline"
check_true test ! -e "$T/c3.pdf" "no output written offline"
run "$PDFSTAMP" dss --cache "$C" --cert "$K/leaf.der" --password-file "$UPW" -o "$T/c4.pdf" "$S"
check_status 2 "--cache without --fetch is a usage error"

# ===========================================================================
# 4. Failure modes: the file byte-identical, a clear message
# ===========================================================================
pki_start_http "$W"
B2=http://127.0.0.1:$HP
if [ "$B2" != "$B" ]; then
	# the certificates name the old port: serve there again
	skip "failure modes: the HTTP fixture came back on another port ($B2, not $B)"
	finish
fi
pki_start_ocsp int ocsp || { fail "openssl ocsp listens again"; finish; }
# the proxy variables, as libcurl reads them: http_proxy is used (the
# fixture sees absolute URIs), HTTP_PROXY (uppercase) is not, NO_PROXY wins
: >"$T/http.log"
run env -u NO_PROXY -u no_proxy http_proxy="$B" "$PDFSTAMP" dss --fetch --password-file "$UPW" \
	-o "$T/p1.pdf" "$S"
check_status 0 "dss --fetch through http_proxy"
check_eq "$(grep -c " $B/" "$T/http.log")" 3 "the three requests went through the proxy"
: >"$T/http.log"
run env -u NO_PROXY -u no_proxy HTTP_PROXY=http://127.0.0.1:9 "$PDFSTAMP" dss --fetch \
	--password-file "$UPW" -o "$T/p2.pdf" "$S"
check_status 0 "HTTP_PROXY (uppercase) is ignored, as libcurl does"
check_eq "$(grep -c " /" "$T/http.log")" 3 "the three requests went straight to the server"
run env NO_PROXY='*' http_proxy=http://127.0.0.1:9 "$PDFSTAMP" dss --fetch --password-file "$UPW" \
	-o "$T/p3.pdf" "$S"
check_status 0 "NO_PROXY=* bypasses http_proxy"

# a cache whose entries went bad (here: damaged) is asked again, and mended
for f in "$C"/*.der; do printf 'not DER any more\n' >"$f"; done
run "$PDFSTAMP" dss --fetch --json --cache "$C" --password-file "$UPW" -o "$T/c5.pdf" "$S"
check_status 0 "dss --fetch --cache with damaged cache entries"
check_eq "$(jget "$T/out" 'sorted((f["url"].rsplit("/", 1)[1], f["from_cache"]) for f in d["fetched"])')" \
	'[["ocsp", false], ["ocsp", true], ["root.crl", false], ["root.crl", true], ["root.der", false], ["root.der", true]]' \
	"each damaged entry was read, refused and fetched again"
run "$PDFSTAMP" dss --fetch --json --cache "$C" --password-file "$UPW" -o "$T/c6.pdf" "$S"
check_eq "$(jget "$T/out" '[f["from_cache"] for f in d["fetched"]]')" '[true, true, true]' \
	"the cache was mended: a next run reads it only"

failcase() { # MODE EXPECTED-STATUS ERE DESC [extra dss options]
	local mode=$1 want=$2 ere=$3 desc=$4
	shift 4
	printf '%s\n' "$mode" >"$W/mode"
	cp "$S" "$T/f.pdf"
	run "$PDFSTAMP" dss --fetch "$@" --password-file "$UPW" -i "$T/f.pdf"
	check_status "$want" "$desc"
	check_grep "$ere" "$T/err" "$desc: the message says why"
	if cmp -s "$S" "$T/f.pdf"; then ok "$desc: the file is byte-identical"; else
		fail "$desc: the file is byte-identical"; fi
}
failcase "ocsp500 crl404" 1 'HTTP status 500.*HTTP status 404' "OCSP 500, CRL 404"
failcase "ocsp404 crl404" 1 'HTTP status 404' "OCSP 404, CRL 404"
failcase "ocspgarbage crl404" 4 'not an OCSPResponse' "a garbage OCSP reply"
failcase "ocspbig crl404" 4 'larger than 16777216 bytes' "an oversized OCSP reply"
failcase "ocspfile:other.ocsp crl404" 4 'no SingleResponse for the certificate asked' \
	"an OCSP response for another certificate"
failcase "ocspfile:unauth.ocsp crl404" 4 'unauthorized' "OCSP unauthorized"
failcase "ocspfile:replay.ocsp crl404" 4 'nonce is not the one sent' "a replayed OCSP reply"
failcase "ocspfile:rogue.ocsp crl404" 4 'signed neither by the issuer nor by a responder' \
	"an OCSP reply signed by a certificate without id-kp-OCSPSigning"
failcase "ocsp500 crlfile:wrongissuer.crl" 1 "its issuer is not the certificate's issuer" \
	"OCSP 500 and a CRL of another issuer"
failcase "ocsp500 crlfile:badsig.crl" 1 "signature does not verify with the issuer's key" \
	"OCSP 500 and a CRL whose signature is spoilt"
failcase "ocspredirect:4 crl404" 1 'more than 3 redirects' "4 redirects"
failcase "ocspfileredirect crl404" 1 'Protocol "file" not supported' "a redirect to file://"
printf 'ocspredirect:3\n' >"$W/mode"
run "$PDFSTAMP" dss --fetch --json --password-file "$UPW" -o "$T/redir.pdf" "$S"
check_status 0 "3 redirects are followed"
check_eq "$(jget "$T/out" '[f["status"] for f in d["fetched"] if f["what"] == "ocsp"]')" "[200]" \
	"the OCSP reply came after the redirects"
# a failed file's JSON line lists what was fetched, the requests that
# failed with their URL, HTTP status and reason (the file still unchanged)
jfail() { # MODE EXPECTED-STATUS EXPECTED-FETCHED DESC
	printf '%s\n' "$1" >"$W/mode"
	cp "$S" "$T/f.pdf"
	run "$PDFSTAMP" dss --fetch --json --password-file "$UPW" -i "$T/f.pdf"
	check_status "$2" "$4 (--json)"
	check_eq "$(jget "$T/out" '[d["ok"], d["exit"], sorted(d) == ["error", "exit", "fetched", "file", "ok"],
		[[f["what"], f["url"].rsplit("/", 1)[1], f["status"], f["from_cache"], f.get("error", "")]
		 for f in d["fetched"]]]')" "$3" "$4: the failure line's fetched array"
	check_true cmp -s "$S" "$T/f.pdf" "$4 (--json): the file is byte-identical"
}
jfail "ocsp404 crl404" 1 \
	'[false, 1, true, [["cert", "root.der", 200, false, ""], ["crl", "root.crl", 200, false, ""], ["ocsp", "ocsp", 404, false, "'"$B"'/ocsp: HTTP status 404"], ["crl", "int.crl", 404, false, "'"$B"'/int.crl: HTTP status 404"]]]' \
	"OCSP 404, CRL 404"
jfail "ocspfile:unauth.ocsp crl404" 4 \
	'[false, 4, true, [["cert", "root.der", 200, false, ""], ["crl", "root.crl", 200, false, ""], ["ocsp", "ocsp", 200, false, "refused: responseStatus unauthorized (6)"], ["crl", "int.crl", 404, false, "'"$B"'/int.crl: HTTP status 404"]]]' \
	"OCSP unauthorized, CRL 404"
jfail "ocspfile:revoked.ocsp" 4 \
	'[false, 4, true, [["cert", "root.der", 200, false, ""], ["crl", "root.crl", 200, false, ""], ["ocsp", "ocsp", 200, false, "the certificate is revoked"]]]' \
	"a revoked signer"
run "$PDFSTAMP" dss --fetch --verbose --password-file "$UPW" -i "$T/f.pdf"
check_grep "^pdfstamp: .*f.pdf: ocsp $B/ocsp: HTTP 200, [0-9]+ bytes \(not used\)$" "$T/err" \
	"--verbose: a failed file's replies are listed too"
failcase "ocspfile:revoked.ocsp" 4 'pdfstamp ltv signer is revoked .*2026' "a revoked signer"
failcase "ocspslow crl404" 1 'no complete reply within 1000 ms' "a timeout" --timeout 1
# a reply for another certificate with a good CRL: the CRL is used
printf 'ocspfile:other.ocsp\n' >"$W/mode"
run "$PDFSTAMP" dss --fetch --json --password-file "$UPW" -o "$T/crl.pdf" "$S"
check_status 0 "OCSP refused, the CRL taken instead"
check_eq "$(jget "$T/out" 'sorted(f["url"].rsplit("/", 1)[1] for f in d["fetched"])')" \
	'["int.crl", "ocsp", "root.crl", "root.der"]' "the signer's CRL was fetched after the OCSP failure"
: >"$W/mode"

# RSASSA-PSS: an OCSP reply (from the delegated responder) and a CRL are
# accepted and embedded as served; an MGF1 hash other than the
# signature's is refused, saying so
printf 'ocspfile:pss.ocsp crl404\n' >"$W/mode"
run "$PDFSTAMP" dss --fetch --json --password-file "$UPW" -o "$T/pss1.pdf" "$S"
check_status 0 "an RSASSA-PSS OCSP reply"
check_eq "$("$PIKE" -c 'import sys, pikepdf
d = pikepdf.open(sys.argv[1], password=sys.argv[2]).Root.DSS
print([bytes(s.read_raw_bytes()) == open(sys.argv[3], "rb").read() for s in d.OCSPs])' \
	"$T/pss1.pdf" "$U" "$K/pss.ocsp" 2>&1)" "[True]" "/DSS holds the PSS reply as served"
printf 'ocsp500 crlfile:pss.crl\n' >"$W/mode"
run "$PDFSTAMP" dss --fetch --json --password-file "$UPW" -o "$T/pss2.pdf" "$S"
check_status 0 "an RSASSA-PSS CRL"
check_eq "$("$PIKE" -c 'import sys, pikepdf
d = pikepdf.open(sys.argv[1], password=sys.argv[2]).Root.DSS
r = lambda n: open(n, "rb").read()
print(sorted(bytes(s.read_raw_bytes()) for s in d.CRLs) == sorted([r(sys.argv[3]), r(sys.argv[4])]))' \
	"$T/pss2.pdf" "$U" "$K/pss.crl" "$K/root.crl" 2>&1)" "True" \
	"/DSS holds the PSS CRL as served (and the root's)"
failcase "ocspfile:pssmgf.ocsp crl404" 4 'RSASSA-PSS parameters name an MGF1 hash other than' \
	"an RSASSA-PSS OCSP reply with another MGF1 hash"
failcase "ocsp500 crlfile:pssmgf.crl" 1 'CRL for .*RSASSA-PSS parameters name an MGF1 hash' \
	"an RSASSA-PSS CRL with another MGF1 hash"
: >"$W/mode"

# The delegated responder without id-pkix-ocsp-nocheck (ocsp2, whose AIA
# names the same /ocsp): its certificate goes into /DSS, and its own status
# comes from the intermediate's CRL, since the responder's reply about
# itself (signed by itself) proves nothing (RFC 6960 4.2.2.2.1)
kill "$OCSP_PID" 2>/dev/null
wait "$OCSP_PID" 2>/dev/null
pki_start_ocsp int ocsp2 || { fail "openssl ocsp listens with the second responder"; finish; }
: >"$T/http.log"
run "$PDFSTAMP" dss --fetch --vri --json --password-file "$UPW" -o "$T/r2.pdf" "$S"
check_status 0 "dss --fetch --vri, a responder without nocheck"
check_eq "$(sort "$T/http.log" | tr '\n' ' ')" \
	"GET /int.crl GET /root.crl GET /root.der POST /ocsp POST /ocsp " \
	"the responder's own status was asked by OCSP, then from the intermediate's CRL"
check_grep "OCSP for CN=pdfstamp ltv OCSP 2: .*signed by the responder it is about: no proof" "$T/err" \
	"a warning says the responder's reply about itself was refused"
pikecheck "$T/r2.pdf" "$U" "$K" "responder without nocheck" ocsp2
sigstate "$T/r2.pdf" >"$T/sigr2.txt"
check_grep 'Signature is Valid' "$T/sigr2.txt" "responder without nocheck: pdfsig still validates"
failcase "crl404" 4 'OCSP for CN=pdfstamp ltv OCSP 2: .*no proof.*; and CRL .*HTTP status 404' \
	"a responder without nocheck and no CRL for it"
: >"$W/mode"
kill "$OCSP_PID" 2>/dev/null
wait "$OCSP_PID" 2>/dev/null
pki_start_ocsp int ocsp || { fail "openssl ocsp listens with the first responder again"; finish; }

pki_stop_all
failcase "" 1 'Could not connect|Couldn.t connect|Connection refused' "connection refused"

finish
