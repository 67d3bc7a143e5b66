#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/timestamp.sh - `pdfstamp timestamp`: RFC 3161 document
# timestamps (ISO 32000-2 12.8.5) on signed, encrypted files (issue 31).
#
# 1. A throwaway PKI made with openssl in the run: a CA, a signer (into an
#    NSS database, for pdfsig), a TSA certificate with the critical
#    extended key usage timeStamping; a second CA the TSA does not chain
#    to.  A TSA on 127.0.0.1 (fixtures/tsa.py, a free port, stopped on
#    exit) answers with `openssl ts -reply`, or misbehaves by URL path.
# 2. pdfsig signs qpdf's AES-256 file; `pdfstamp timestamp -o` adds a
#    document timestamp; then: the output starts with the signed file's
#    bytes; the last /ByteRange covers the whole file but the /Contents hex
#    string, and `openssl ts -verify` of the token read from the raw bytes
#    against those bytes (CA file, TSA certificate) says OK; pdfsig still
#    validates the first signature and lists DocTimeStamp1 signed by the
#    TSA over the total document; qpdf --check passes; the field name is
#    encrypted (not in the file in clear) and qpdf decrypts it; audit says
#    ok with a document timestamp; the JSON names the TSA, the time, two
#    requests (the size probe) and the TSA saw two queries.  A second
#    timestamp in place (--reserve, one request, sha512) covers the first:
#    openssl verifies both, each over its own range.
# 3. AES-128 and RC4 files, and --hash sha384: openssl verifies the token.
# 4. A file certified with DocMDP P=1 takes a timestamp, and audit calls
#    the change a permitted doc-timestamp (a token audit cannot verify
#    would make it an annotation: forbidden).
# 5. HTTP basic authentication: the password from a file, never argv;
#    a wrong one fails (HTTP 401).
# 6. Failures, each in place, each leaving the file byte-identical and no
#    journal: a wrong nonce, a wrong imprint, status rejection (its text
#    shown), a token whose signature does not verify, a token carrying
#    another certificate of the TSA's key (same issuer and serial: only the
#    ESS signing-certificate attribute tells), a truncated reply, a
#    placeholder too small, connection refused, a timeout, HTTP
#    404 and 500, a garbage reply, an oversized reply, --tsa-ca of another
#    CA.  A dry run sends nothing.  (A TSA certificate without the timeStamping usage is not tested
#    here: `openssl ts -reply` refuses to sign with one.)
# 7. A batch without --reserve: one size probe for the batch, and a token
#    that outgrows it rebuilt once (tsa.py /grow).
#
# Notes on the independent readers on Debian 12: pdfsig (poppler 22.12)
# cannot validate ETSI.RFC3161 signatures ("Unable to validate this type
# of signature"), and poppler, qpdf and MuPDF all decrypt the /Contents of
# a /Type /DocTimeStamp dictionary in an encrypted file (they exempt /Type
# /Sig only, though ISO 32000-2 7.6.2 exempts every signature dictionary's
# /Contents), so the token is read from the raw bytes here.

. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/pki.sh"

e2e_inputs qpdf-r6-table qpdf-r6-xrefstream
U=$(head -n 1 "$UPW")
O=$(head -n 1 "$OPW")
PKI_NICK=ts-signer

# ---------------------------------------------------------------------------
# 1. The PKI (pki.sh, one tier), the NSS database, the TSA.
ts_pki() {
	pki_cnf
	pki_ts_cnf ca.pem "sha1, sha256, sha384, sha512"
	# tsa_big (tsa.py /grow): tsa1 whose tokens carry big.pem's certificates
	sed -n '/^\[tsa1\]/,$p' ts.cnf |
		sed 's/^\[tsa1\]/[tsa_big]/; s|^certs = ./ca.pem|certs = ./big.pem|' >>ts.cnf
	pki_root ca "pdfstamp ts test CA"
	pki_issue ca v3_tsa tsa "pdfstamp test TSA"
	# the same key, issuer and serial number in another certificate (dates)
	openssl x509 -req -in tsa.csr -CA ca.pem -CAkey ca.key \
		-set_serial "0x$(openssl x509 -in tsa.pem -noout -serial | cut -d= -f2)" -days 29 \
		-extfile ca.cnf -extensions v3_tsa -out tsa2.pem
	pki_der tsa tsa2
	[ "$(wc -c <tsa.der)" = "$(wc -c <tsa2.der)" ]
	pki_issue ca v3_leaf leaf "pdfstamp ts test signer"
	pki_p12 leaf ca
	mkdir -p other
	pki_root other/ca "another CA"
	# tsa_big's tokens: the CA and four more certificates (tsa.py /grow)
	cp ca.pem big.pem
	for i in 1 2 3 4; do
		openssl req -x509 -newkey rsa:4096 -nodes -keyout pad.key -subj "/CN=padding $i" \
			-days 30 >>big.pem
	done
}
pki_make "making a CA, a TSA and a signer with openssl" ts_pki
ok "openssl made a CA, a TSA certificate and a signer"
pki_nss "$K/leaf.p12" "pdfstamp ts test CA"

pki_start_tsa || { fail "the test TSA starts" "$(cat "$T/tsa.err")"; finish; }
ok "the test TSA listens on ${TSA#http://}"
nreq() { [ -f "$K/requests.log" ] && wc -l <"$K/requests.log" || echo 0; }

# pki_tsverify FILE N LABEL: the token verified against the CA, the
# newest /ByteRange ending at the end of the file
PKI_TS_CAFILE=$K/ca.pem
PKI_TS_UNTRUSTED=$K/tsa.pem
PKI_TS_CHECK_END=1

same() {
	if cmp -s "$1" "$2"; then ok "$3: the file is byte-identical"; else fail "$3: the file is byte-identical"; fi
}

# ---------------------------------------------------------------------------
# 2. A signed AES-256 file.
S=$T/signed.pdf
if ! pki_sign "$D/qpdf-r6-table.pdf" "$S" "ts e2e"; then
	fail "pdfsig signs the encrypted file" "$(cat "$T/sign.log")"
	finish
fi
n0=$(nreq)
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --json --password-file "$UPW" -o "$T/ts.pdf" "$S"
check_status 0 "timestamp -o: exit 0"
cp "$T/out" "$T/ts.json"
check_eq "$(jget "$T/out" '[d["tsa"], d["requests"], d["http_status"], len(d["time"]) >= 15]')" \
	'["CN=pdfstamp test TSA", 2, 200, true]' "the JSON names the TSA, two requests (size probe), HTTP 200, a time"
check_eq "$(($(nreq) - n0))" 2 "the TSA saw two queries"
check_grep 'application/timestamp-query' "$K/requests.log" "the queries are sent as application/timestamp-query"
cmp_prefix "$S" "$T/ts.pdf" "timestamp"
pki_tsverify "$T/ts.pdf" 1 "timestamp"
sigstate "$T/ts.pdf" >"$T/sig.txt"
check_eq "$(grep -c 'Signature is Valid' "$T/sig.txt")" 1 "pdfsig: the first signature is still valid"
pdfsig -nssdir "sql:$NSS" -upw "$U" "$T/ts.pdf" >"$T/sig2.txt" 2>/dev/null
check_grep 'Signature Field Name: DocTimeStamp1' "$T/sig2.txt" "pdfsig lists the document timestamp field"
check_eq "$(grep -c 'Total document signed' "$T/sig2.txt")" 1 "pdfsig: the timestamp covers the total document"
qcheck "$T/ts.pdf" "$UPW" "timestamp"
if grep -aq 'DocTimeStamp1' "$T/ts.pdf"; then
	fail "the field name is not in the file in clear"
else
	ok "the field name is not in the file in clear"
fi
sobj=$(jget "$T/ts.json" 'd["signature_object"]')
fobj=$(jget "$T/ts.json" '[n for n in d["objects"] if n > d["signature_object"]][0]')
check_grep '/T \(DocTimeStamp1\)' <(qpdf --password="$U" --show-object="$fobj" "$T/ts.pdf" 2>&1) \
	"qpdf decrypts the field's /T"
check_grep "/V $sobj 0 R" <(qpdf --password="$U" --show-object="$fobj" "$T/ts.pdf" 2>&1) \
	"the field's /V is the /DocTimeStamp dictionary"
check_grep '/SubFilter /ETSI.RFC3161' <(qpdf --password="$U" --show-object="$sobj" "$T/ts.pdf" 2>&1) \
	"the dictionary is /SubFilter /ETSI.RFC3161"
run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/ts.pdf"
check_eq "$(jget "$T/out" '[d["verdict"], sorted(s["doc_timestamp"] for s in d["signatures"])]')" \
	'["ok", [false, true]]' "audit: ok, one signature and one document timestamp"

# a second timestamp, in place, over the first
cp "$T/ts.pdf" "$T/ts2.pdf"
n0=$(nreq)
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --hash sha512 --reserve 6000 --json --password-file "$UPW" \
	-i "$T/ts2.pdf"
check_status 0 "a second timestamp in place: exit 0"
check_eq "$(($(nreq) - n0)) $(jget "$T/out" 'd["requests"]')" "1 1" "--reserve: one request"
cmp_prefix "$T/ts.pdf" "$T/ts2.pdf" "the second timestamp"
pki_tsverify "$T/ts2.pdf" 1 "the second timestamp (sha512)"
pki_tsverify "$T/ts2.pdf" 2 "the first timestamp, after the second"
pdfsig -nssdir "sql:$NSS" -upw "$U" "$T/ts2.pdf" >"$T/sig2.txt" 2>/dev/null
check_grep 'Signature Field Name: DocTimeStamp2' "$T/sig2.txt" "the second field is DocTimeStamp2"
check_eq "$(grep -c 'Signature is Valid' "$T/sig2.txt")" 1 "pdfsig: the first signature is still valid after two"
[ -e "$T/ts2.pdf.pdfstamp-journal" ] && fail "no journal is left" || ok "no journal is left"

# A file encrypted to certificates (issue 33): timestamped with a
# recipient's key; the update appends, /Encrypt and its envelopes are the
# input's bytes, the token verifies, and the new objects decrypt (verify
# and audit with the other recipient's key).
(cd "$K" && for r in ra rb; do
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$r.key" -out "$r.crt" \
		-subj "/CN=timestamp recipient $r" -days 3650 2>/dev/null
done)
run "$PDFSTAMP" encrypt --recipient "$K/ra.crt" --recipient "$K/rb.crt" -o "$T/pub.pdf" \
	"$TOP_SRCDIR/samples/plain-2page.pdf"
check_status 0 "encrypted to two certificates"
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --key "$K/ra.key" --cert "$K/ra.crt" \
	-o "$T/pub-ts.pdf" "$T/pub.pdf"
check_status 0 "a file encrypted to certificates, with a recipient's key: exit 0"
check_true cmp -s -n "$(size_of "$T/pub.pdf")" "$T/pub.pdf" "$T/pub-ts.pdf" \
	"encrypted to certificates: the input's bytes are a prefix of the output"
pki_tsverify "$T/pub-ts.pdf" 1 "encrypted to certificates"
run "$PDFSTAMP" verify --key "$K/rb.key" --cert "$K/rb.crt" "$T/pub-ts.pdf"
check_status 0 "encrypted to certificates: every object decrypts with the other recipient's key"
run "$PDFSTAMP" audit --json --key "$K/rb.key" --cert "$K/rb.crt" "$T/pub-ts.pdf"
check_eq "$(jget "$T/out" 'd["verdict"]')" '"ok"' "encrypted to certificates: audit is ok"

# A plaintext file: there pdfsig reads the token (poppler decrypts a
# /DocTimeStamp's /Contents in encrypted files: see the notes above).
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" -o "$T/plain-ts.pdf" "$TOP_SRCDIR/samples/plain-2page.pdf"
check_status 0 "a plaintext file: exit 0"
pki_tsverify "$T/plain-ts.pdf" 1 "a plaintext file"
pdfsig "$T/plain-ts.pdf" >"$T/sig3.txt" 2>/dev/null
check_grep 'Signer full Distinguished Name: CN=pdfstamp test TSA' "$T/sig3.txt" \
	"a plaintext file: pdfsig names the TSA as the timestamp's signer"
check_grep 'Signing Hash Algorithm: SHA-256' "$T/sig3.txt" "a plaintext file: pdfsig reads SHA-256"

# ---------------------------------------------------------------------------
# 3. AES-128 and RC4, --hash sha384.
qpdf --encrypt "$U" "$O" 128 --use-aes=y -- "$TOP_SRCDIR/samples/plain-2page.pdf" "$T/aes128.pdf"
qpdf --allow-weak-crypto --encrypt "$U" "$O" 128 --use-aes=n -- "$TOP_SRCDIR/samples/plain-2page.pdf" \
	"$T/rc4.pdf"
for f in aes128 rc4; do
	run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --hash sha384 --password-file "$UPW" -o "$T/$f-ts.pdf" \
		"$T/$f.pdf"
	check_status 0 "$f: exit 0"
	pki_tsverify "$T/$f-ts.pdf" 1 "$f (sha384)"
	qcheck "$T/$f-ts.pdf" "$UPW" "$f"
done

# an xref-stream file (object streams), twice in place
cp "$D/qpdf-r6-xrefstream.pdf" "$T/xs.pdf"
for i in 1 2; do
	run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --reserve 6000 --password-file "$UPW" -i "$T/xs.pdf"
	check_status 0 "xref stream, timestamp $i: exit 0"
	pki_tsverify "$T/xs.pdf" 1 "xref stream, timestamp $i"
done
pki_tsverify "$T/xs.pdf" 2 "xref stream, the first timestamp after the second"
qcheck "$T/xs.pdf" "$UPW" "xref stream"
pdfsig -upw "$U" "$T/xs.pdf" >"$T/sig4.txt" 2>/dev/null
check_eq "$(grep -o 'Signature Field Name: .*' "$T/sig4.txt" | tr '\n' ' ')" \
	"Signature Field Name: DocTimeStamp1 Signature Field Name: DocTimeStamp2 " \
	"xref stream: pdfsig lists DocTimeStamp1 and DocTimeStamp2"

# a batch in place, side by side
for i in 1 2 3; do cp "$S" "$T/batch$i.pdf"; done
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --reserve 6000 --jobs 3 --json --password-file "$UPW" \
	-i "$T/batch1.pdf" "$T/batch2.pdf" "$T/batch3.pdf"
check_status 0 "--jobs 3 -i on three files: exit 0"
check_eq "$(grep -c '"ok":true' "$T/out")" 3 "--jobs 3: three success lines"
for i in 1 2 3; do pki_tsverify "$T/batch$i.pdf" 1 "--jobs 3, file $i"; done

# ---------------------------------------------------------------------------
# 4. DocMDP P=1: a document timestamp is no change (ISO 32000-2 12.8.2.2).
python3 "$E" docmdp 1 "$T/mdp1-plain.pdf"
qpdf --encrypt "$U" "$O" 256 -- "$T/mdp1-plain.pdf" "$T/mdp1.pdf"
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --password-file "$UPW" -o "$T/mdp1-ts.pdf" "$T/mdp1.pdf"
check_status 0 "DocMDP P=1: timestamp is allowed"
run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/mdp1-ts.pdf"
check_eq "$(jget "$T/out" '[d["forbidden"], sorted({(c["kind"], c["verdict"]) for c in d["revisions"][-1]["changes"]})]')" \
	'[0, [["doc-timestamp", "permitted"]]]' \
	"DocMDP P=1: audit calls the update a permitted document timestamp (its token verified)"

# ---------------------------------------------------------------------------
# 5. Basic authentication, the password never on the command line.
printf 'sesame\n' >"$T/tsa.pw"
cp "$S" "$T/auth.pdf"
run "$PDFSTAMP" timestamp --tsa "$TSA/user:sesame" --tsa-user user --tsa-password-file "$T/tsa.pw" \
	--reserve 6000 --password-file "$UPW" -i "$T/auth.pdf"
check_status 0 "basic authentication: exit 0"
pki_tsverify "$T/auth.pdf" 1 "basic authentication"
cp "$S" "$T/auth2.pdf"
run "$PDFSTAMP" timestamp --tsa "$TSA/user:other" --tsa-user user --tsa-password-file "$T/tsa.pw" \
	--reserve 6000 --password-file "$UPW" -i "$T/auth2.pdf"
check_status 1 "a wrong TSA password: exit 1"
check_grep 'HTTP 401' "$T/err" "a wrong TSA password: HTTP 401 named"
same "$S" "$T/auth2.pdf" "a wrong TSA password"
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --tsa-user user --password-file "$UPW" -i "$T/auth2.pdf"
check_status 2 "--tsa-user without a password source: exit 2"

# ---------------------------------------------------------------------------
# 6. Failures: the file byte-identical, no journal.
fails() {
	local want=$1 re=$2 label=$3
	shift 3
	cp "$S" "$T/f.pdf"
	run "$PDFSTAMP" timestamp --password-file "$UPW" "$@" -i "$T/f.pdf"
	check_status "$want" "$label: exit $want"
	check_grep "$re" "$T/err" "$label: the message says why"
	same "$S" "$T/f.pdf" "$label"
	[ -e "$T/f.pdf.pdfstamp-journal" ] && fail "$label: no journal is left" || ok "$label: no journal is left"
}
fails 4 'nonce is not the one sent' "a wrong nonce" --tsa "$TSA/nonce" --reserve 6000
fails 4 'messageImprint is not the hash' "a wrong imprint" --tsa "$TSA/imprint" --reserve 6000
fails 4 'the signature does not verify with the signer' "a token whose signature is broken" \
	--tsa "$TSA/badsig" --reserve 6000
fails 4 'ESS signing-certificate attribute names another certificate' \
	"a token carrying another certificate of the TSA's key" --tsa "$TSA/esscert" --reserve 6000
fails 4 'not a TimeStampResp' "a truncated reply" --tsa "$TSA/trunc" --reserve 6000
fails 4 'status 2 \(rejection\): "test rejection"' "status rejection" --tsa "$TSA/reject"
fails 4 'does not fit the /Contents placeholder' "a placeholder too small" --tsa "$TSA/ok" --reserve 64
fails 4 'does not chain to' "--tsa-ca of another CA" --tsa "$TSA/ok" --tsa-ca "$K/other/ca.pem"
fails 4 'not a TimeStampResp' "a garbage reply" --tsa "$TSA/garbage"
fails 4 '.' "an oversized reply" --tsa "$TSA/big"
fails 1 'HTTP 404' "HTTP 404" --tsa "$TSA/404"
fails 1 'HTTP 500' "HTTP 500" --tsa "$TSA/500"
fails 1 '.' "a timeout" --tsa "$TSA/slow" --timeout 1 --reserve 6000
# a port nobody listens on: bind one, then close it
FREE=$(pki_free_port)
fails 1 '.' "connection refused" --tsa "http://127.0.0.1:$FREE/ok"
fails 2 'http:// or https://' "a TSA URL that is not http" --tsa "file:///etc/passwd"
# with -o, a failure creates no output
run "$PDFSTAMP" timestamp --tsa "$TSA/nonce" --reserve 6000 --password-file "$UPW" -o "$T/never.pdf" "$S"
check_status 4 "-o with a wrong nonce: exit 4"
[ -e "$T/never.pdf" ] && fail "-o with a wrong nonce: no output file" || ok "-o with a wrong nonce: no output file"
# a dry run sends nothing and writes nothing
cp "$S" "$T/dry.pdf"
n0=$(nreq)
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --dry-run --json --password-file "$UPW" -i "$T/dry.pdf"
check_status 0 "--dry-run: exit 0"
check_eq "$(($(nreq) - n0))" 0 "--dry-run: no request to the TSA"
same "$S" "$T/dry.pdf" "--dry-run"
check_eq "$(jget "$T/out" '[d["reserve"], d["bytes_appended"] > 16384]')" '[8192, true]' \
	"--dry-run: the placeholder it assumes, and the bytes the update would append"
# --tsa-ca of the right CA passes
cp "$S" "$T/ca.pdf"
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --tsa-ca "$K/ca.pem" --password-file "$UPW" -i "$T/ca.pdf"
check_status 0 "--tsa-ca of the TSA's CA: exit 0"

# ---------------------------------------------------------------------------
# 7. A batch without --reserve probes once: the first file's placeholder
# is the next files' (one request each); a token that outgrows it (tsa.py
# /grow: from the third reply on, four more certificates) makes that file's
# update be built again, sized from that token, before anything is written.
for i in 1 2 3; do cp "$S" "$T/batch$i.pdf"; done
n0=$(nreq)
run "$PDFSTAMP" timestamp --tsa "$TSA/ok" --jobs 1 --ordered --json --password-file "$UPW" \
	-i "$T/batch1.pdf" "$T/batch2.pdf" "$T/batch3.pdf"
check_status 0 "a batch of three without --reserve: exit 0"
check_eq "$(python3 -c 'import json,sys; print([json.loads(l)["requests"] for l in open(sys.argv[1])])' "$T/out")" \
	'[2, 1, 1]' "the first file probes, the next two take its size: one request each"
check_eq "$(($(nreq) - n0))" 4 "the TSA saw four queries for three files"
check_eq "$(python3 -c 'import json,sys; print(len({json.loads(l)["reserve"] for l in open(sys.argv[1])}))' "$T/out")" \
	1 "the three placeholders have the same size"
for i in 1 2 3; do pki_tsverify "$T/batch$i.pdf" 1 "batch file $i"; done
for i in 1 2; do cp "$S" "$T/grow$i.pdf"; done
n0=$(nreq)
run "$PDFSTAMP" timestamp --tsa "$TSA/grow" --jobs 1 --ordered --json --password-file "$UPW" \
	-i "$T/grow1.pdf" "$T/grow2.pdf"
check_status 0 "a token that outgrows the first file's placeholder: exit 0"
check_eq "$(python3 -c '
import json, sys
a, b = [json.loads(l) for l in open(sys.argv[1])]
print([a["requests"], b["requests"], b["reserve"] > a["reserve"], b["token_bytes"] > a["reserve"]])' "$T/out")" \
	'[2, 2, True, True]' "the second file's update was built again with a larger placeholder"
check_eq "$(($(nreq) - n0))" 4 "the TSA saw four queries"
check_eq "$(grep -c '%%EOF' "$T/grow2.pdf")" "$(($(grep -c '%%EOF' "$S") + 1))" \
	"the grown file got one revision, not two"
pki_tsverify "$T/grow2.pdf" 1 "the grown file"
finish
