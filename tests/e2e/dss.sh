#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/dss.sh - `pdfstamp dss`: long-term validation data in /DSS and
# /VRI of signed, encrypted files (issue 15).
#
# 1. A throwaway PKI made with openssl in the run: a CA, a leaf it issued,
#    the CA's CRL, and an OCSP response for the leaf signed by the CA
#    (`openssl ocsp -index ... -respout`, no network).  The leaf and its key
#    go into a throwaway NSS database (the CA trusted), and poppler's
#    pdfsig signs qpdf's encrypted R6 files with it (table and xref-stream
#    forms; the table file twice, so two signatures need two /VRI keys), as
#    tests/e2e/signed.sh does.
# 2. `pdfstamp dss --cert leaf.pem --cert ca.der --crl crl.pem --ocsp
#    ocsp.der --vri`; then: pdfsig reports every signature valid over the
#    same byte ranges; pikepdf (with the password) finds /Certs, /CRLs and
#    /OCSPs streams whose decrypted bytes are the DER inputs, and /VRI keys
#    equal to the SHA-1 of each signature's /Contents computed here, each
#    entry pointing at those streams; qpdf --show-object --raw-stream-data
#    and `mutool show -b` decrypt each new stream to the same DER bytes; the
#    streams are not in the file in clear; qpdf --check, mutool draw and
#    pdf.js open the result; a second identical run writes nothing (exit 0,
#    "written":false, the file byte-identical); `pdfstamp audit` (when it
#    exists) calls the file permitted.
#    RC4-128 and AES-128 files (qpdf) get the same streams under their own
#    per-object keys (qpdf decrypts them to the DER inputs), RC4 with the
#    weak-handler warning.
# 3. Files certified with DocMDP P=1, 2 and 3 take a DSS update (ISO
#    32000-2 12.8.2.2.2), and audit agrees.
# 4. Bad inputs (a text file as --cert, a truncated DER certificate, a
#    certificate as --ocsp, a CRL as --cert, a private key, a missing file,
#    a directory) exit 4 or 2, leave the input byte-identical and write no
#    output.
# 5. A hostile /DSS naming one large compressible stream 50,000 times
#    finishes (each object decoded once); one that decodes past the cap
#    (4 x file size + 64 MiB) is refused with exit 4, nothing written.

. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/pki.sh"

need mutool
pike_need

e2e_inputs qpdf-r6-table qpdf-r6-xrefstream
U=$(head -n 1 "$UPW")
PKI_NICK=dss-signer

same() {
	if cmp -s "$1" "$2"; then ok "$3: the input is unchanged"; else fail "$3: the input is unchanged"; fi
}

# ---------------------------------------------------------------------------
# 1. The PKI (pki.sh, one tier) and the NSS database.
dss_pki() {
	pki_cnf
	pki_root ca "pdfstamp dss test CA"
	pki_issue ca v3_leaf leaf "pdfstamp dss test signer"
	pki_crl ca crl.pem crl.der
	pki_der leaf ca
	openssl ocsp -index ca.idx -CA ca.pem -rsigner ca.pem -rkey ca.key -issuer ca.pem -cert leaf.pem \
		-respout ocsp.der -ndays 1
	openssl ocsp -respin ocsp.der -resp_text -noverify | grep -q 'Cert Status: good'
	pki_p12 leaf ca
}
pki_make "making a CA, a leaf, a CRL and an OCSP response with openssl" dss_pki
ok "openssl made a CA, a leaf, a CRL and an OCSP response"
pki_nss "$K/leaf.p12" "pdfstamp dss test CA"

# The independent check of a DSS-extended file (pikepdf).
cat >"$T/chk.py" <<'PY'
import hashlib, sys
import pikepdf

path, pw, pki, label, expect_sigs = sys.argv[1:6]
def res(ok, desc, detail=""):
    print(("OK\t" if ok else "FAIL\t") + label + ": " + desc + ("\t" + str(detail) if not ok else ""))

der = {k: open(pki + "/" + k + ".der", "rb").read() for k in ("leaf", "ca", "crl", "ocsp")}
pdf = pikepdf.open(path, password=pw)
res(pdf.is_encrypted, "the output is encrypted")
dss = pdf.Root.get("/DSS")
res(dss is not None, "the catalog has /DSS")
if dss is None:
    sys.exit(0)
res(dss.is_indirect, "/DSS is an indirect object")
def streams(key):
    arr = dss.get(key)
    return [] if arr is None else [s for s in arr]
certs, crls, ocsps = streams("/Certs"), streams("/CRLs"), streams("/OCSPs")
got = lambda arr: [bytes(s.read_raw_bytes()) for s in arr]
res(got(certs) == [der["leaf"], der["ca"]], "/Certs decrypts to the leaf and the CA, in that order",
    [len(b) for b in got(certs)])
res(got(crls) == [der["crl"]], "/CRLs decrypts to the CRL")
res(got(ocsps) == [der["ocsp"]], "/OCSPs decrypts to the OCSP response")
res(all("/Filter" not in s for s in certs + crls + ocsps), "the new streams are unfiltered")
raw = open(path, "rb").read()
res(all(der[k] not in raw for k in der), "no DER input is in the file in clear")
# the signatures, from the field tree, and their VRI keys
keys = set()
for f in pdf.Root.AcroForm.Fields:
    if f.get("/FT") == "/Sig" and "/V" in f:
        keys.add(hashlib.sha1(bytes(f.V.Contents)).hexdigest().upper())
res(len(keys) == int(expect_sigs), "%s signature(s) found" % expect_sigs, len(keys))
vri = dss.get("/VRI")
res(vri is not None and set(k[1:] for k in vri.keys()) == keys,
    "the /VRI keys are the SHA-1 of each signature's /Contents", None if vri is None else list(vri.keys()))
if vri is not None:
    og = lambda arr: [o.objgen for o in arr]
    for k in keys:
        e = vri.get("/" + k)
        if e is None:
            continue
        res(og(e.get("/Cert", [])) == og(certs), "VRI %s.. lists both certificates" % k[:8])
        res(og(e.get("/CRL", [])) == og(crls), "VRI %s.. lists the CRL" % k[:8])
        res(og(e.get("/OCSP", [])) == og(ocsps), "VRI %s.. lists the OCSP response" % k[:8])
# the new stream numbers, for qpdf and mutool
print("#" + " ".join("%d:%s" % (s.objgen[0], n) for n, arr in (("leaf", certs[:1]), ("ca", certs[1:2]),
      ("crl", crls), ("ocsp", ocsps)) for s in arr))
PY

PDFJS=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}

# ===========================================================================
# 2. Signed files, then dss.
# ===========================================================================
for src in qpdf-r6-table qpdf-r6-xrefstream; do
	s=$T/$src.signed.pdf
	nsig=1
	if ! pki_sign "$D/$src.pdf" "$s" "dss e2e"; then
		fail "$src: pdfsig signs the encrypted file" "$(cat "$T/sign.log")"
		continue
	fi
	if [ "$src" = qpdf-r6-table ]; then
		# a second signature over the first
		mv "$s" "$T/once.pdf"
		if ! pki_sign "$T/once.pdf" "$s" "second" -new-signature-field-name Second; then
			fail "$src: pdfsig signs a second time" "$(cat "$T/sign.log")"
			continue
		fi
		nsig=2
	fi
	sigstate "$s" >"$T/sig0.txt"
	check_eq "$(grep -c 'Signature Validation: Signature is Valid\.' "$T/sig0.txt")" "$nsig" \
		"$src: pdfsig made $nsig valid signature(s)"
	cp "$s" "$T/orig.pdf"

	o=$T/$src.dss.pdf
	run "$PDFSTAMP" dss --json --password-file "$UPW" --cert "$K/leaf.pem" --cert "$K/ca.der" \
		--crl "$K/crl.pem" --ocsp "$K/ocsp.der" --vri -o "$o" "$s"
	check_status 0 "$src: dss"
	[ "$RC" = 0 ] || continue
	same "$s" "$T/orig.pdf" "$src: dss -o"
	check_eq "$(jget "$T/out" '[d["ok"], d["written"], len(d["objects"]), d["output"].endswith(".dss.pdf")]')" \
		"[true, true, 6, true]" "$src: the JSON line: written, 4 streams + /DSS + catalog"
	if cmp -s -n "$(stat -c %s "$s")" "$s" "$o"; then ok "$src: the signed bytes are intact"; else
		fail "$src: the signed bytes are intact"; fi
	sigstate "$o" >"$T/sig1.txt"
	check_eq "$(grep -c 'Signature Validation: Signature is Valid\.' "$T/sig1.txt")" "$nsig" \
		"$src: pdfsig still reports every signature valid"
	check_eq "$(grep 'Signed Ranges' "$T/sig1.txt")" "$(grep 'Signed Ranges' "$T/sig0.txt")" \
		"$src: the signed byte ranges are the same"
	pike_feed "$T/chk.py" "$o" "$U" "$K" "$src" "$nsig"
	nums=$(sed -n 's/^#//p' "$T/extra")
	check_ne "$nums" "" "$src: the checker named the new streams"
	for nk in $nums; do
		n=${nk%%:*}
		k=${nk#*:}
		qpdf --password-file="$UPW" --show-object="$n" --raw-stream-data "$o" >"$T/q.bin" 2>"$T/q.err"
		if cmp -s "$T/q.bin" "$K/$k.der"; then ok "$src: qpdf decrypts stream $n to $k.der"; else
			fail "$src: qpdf decrypts stream $n to $k.der" "$(head -c 300 "$T/q.err")"; fi
		mutool show -b -p "$U" "$o" "$n" >"$T/m.bin" 2>"$T/m.err"
		if cmp -s "$T/m.bin" "$K/$k.der"; then ok "$src: mutool decrypts stream $n to $k.der"; else
			fail "$src: mutool decrypts stream $n to $k.der" "$(head -c 300 "$T/m.err")"; fi
	done
	qcheck "$o" "$UPW" "$src dss"
	rm -f "$T/m.pgm"
	mutool draw -q -p "$U" -r 30 -o "$T/m.pgm" "$o" 1 2>"$T/m.err"
	if [ -s "$T/m.pgm" ]; then ok "$src: mutool draws page 1"; else fail "$src: mutool draws page 1" "$(head -c 300 "$T/m.err")"; fi
	if [ -f "$PDFJS" ] && command -v node >/dev/null; then
		if node "$TOP_SRCDIR/tests/e2e/fixtures/pdfjs-check.js" "$o" "$U" 1 >"$T/pj.json" 2>"$T/pj.err"; then
			ok "$src: pdf.js opens the result"
		else
			fail "$src: pdf.js opens the result" "$(head -c 300 "$T/pj.err")"
		fi
	else
		skip "$src: pdf.js (libjs-pdf, node) is not installed"
	fi

	# extending an existing /DSS: a first run adds the leaf alone, the second
	# run the rest (a new version of the indirect /DSS, the catalog left alone)
	if [ "$src" = qpdf-r6-table ]; then
		run "$PDFSTAMP" dss --json --password-file "$UPW" --cert "$K/leaf.der" -o "$T/step1.pdf" "$s"
		check_status 0 "$src: dss with the leaf alone"
		run "$PDFSTAMP" dss --json --password-file "$UPW" --cert "$K/leaf.pem" --cert "$K/ca.der" \
			--crl "$K/crl.pem" --ocsp "$K/ocsp.der" --vri -o "$T/step2.pdf" "$T/step1.pdf"
		check_status 0 "$src: dss with everything on top"
		check_eq "$(jget "$T/out" 'len(d["objects"])')" 4 "$src: the second update is 3 streams and the new /DSS"
		pike_feed "$T/chk.py" "$T/step2.pdf" "$U" "$K" "$src extended" "$nsig"
		sigstate "$T/step2.pdf" >"$T/sig2.txt"
		check_eq "$(grep -c 'Signature Validation: Signature is Valid\.' "$T/sig2.txt")" "$nsig" \
			"$src extended: pdfsig still reports every signature valid"
	fi

	# the same run again, in place: nothing new, nothing written
	cp "$o" "$T/again.pdf"
	run "$PDFSTAMP" dss --json --password-file "$UPW" --cert "$K/leaf.der" --cert "$K/ca.pem" \
		--crl "$K/crl.der" --ocsp "$K/ocsp.der" --vri -i "$T/again.pdf"
	check_status 0 "$src: a second identical run"
	check_eq "$(jget "$T/out" '[d["written"], d["objects"], d["bytes_appended"]]')" "[false, [], 0]" \
		"$src: the second run says it wrote nothing"
	same "$T/again.pdf" "$o" "$src: the second run"
	run "$PDFSTAMP" dss --password-file "$UPW" --cert "$K/leaf.der" -o "$T/again-out.pdf" "$o"
	check_status 0 "$src: dss -o with nothing new"
	check_grep 'nothing new to add' "$T/err" "$src: it says there was nothing new"
	check_true test ! -e "$T/again-out.pdf" "$src: and writes no output file"

	# pdfstamp audit, when it exists
	if "$PDFSTAMP" audit --help >/dev/null 2>&1; then
		run "$PDFSTAMP" audit --json --password-file "$UPW" "$o"
		check_status 0 "$src: pdfstamp audit"
		check_eq "$(jget "$T/out" '[d["verdict"], sorted({(c["kind"], c["verdict"]) for c in d["revisions"][-1]["changes"]}), len(d["revisions"][-1]["changes"])]')" \
			'["ok", [["dss", "permitted"]], 6]' "$src: audit calls each of the 6 objects of the DSS revision a permitted DSS change"
	else
		skip "$src: pdfstamp audit does not exist yet"
	fi
done

# ---------------------------------------------------------------------------
# The legacy handlers: RC4 and AES-128 files (qpdf) take the same streams,
# encrypted with their own per-object keys, with the weak-handler warning.
for h in "rc4-128:128 --use-aes=n" "aes-128:128 --use-aes=y"; do
	name=${h%%:*}
	# shellcheck disable=SC2086
	qpdf --allow-weak-crypto --encrypt "$U" "$(head -n 1 "$OPW")" ${h#*:} -- "$TOP_SRCDIR/samples/plain-2page.pdf" \
		"$T/$name.pdf" 2>"$T/q.err" || { fail "$name: qpdf makes the input" "$(cat "$T/q.err")"; continue; }
	run "$PDFSTAMP" dss --json --password-file "$UPW" --cert "$K/leaf.pem" --crl "$K/crl.der" --ocsp "$K/ocsp.der" \
		-o "$T/$name-dss.pdf" "$T/$name.pdf"
	check_status 0 "$name: dss"
	[ "$RC" = 0 ] || continue
	if [ "$name" = rc4-128 ]; then
		check_eq "$(jget "$T/out" 'd["weak_encryption"]')" '"RC4 128-bit"' "$name: the JSON says the handler is weak"
		check_grep 'warning: .*weak security handler' "$T/err" "$name: and so does stderr"
	fi
	k=0
	# the streams have the lowest new numbers, in input order; /DSS comes after
	for n in $(jget "$T/out" '" ".join(map(str, d["objects"][-4:-1]))' | tr -d '"'); do
		f=(leaf crl ocsp)
		qpdf --password-file="$UPW" --show-object="$n" --raw-stream-data "$T/$name-dss.pdf" >"$T/q.bin" 2>"$T/q.err"
		if cmp -s "$T/q.bin" "$K/${f[$k]}.der"; then ok "$name: qpdf decrypts stream $n to ${f[$k]}.der"; else
			fail "$name: qpdf decrypts stream $n to ${f[$k]}.der" "$(head -c 300 "$T/q.err")"; fi
		k=$((k + 1))
	done
	check_eq "$k" 3 "$name: three new streams"
	qcheck "$T/$name-dss.pdf" "$UPW" "$name dss"
done

# ===========================================================================
# 3. Certified files: ISO 32000-2 12.8.2.2.2 does not count an update that
#    only adds DSS data as a change, so even DocMDP P=1 allows it (the
#    pre-flight is policy.c's, shared with audit).  The fixture's PKCS#7 is a
#    dummy: no input belongs to it, so --vri warns and adds no entry.
# ===========================================================================
for p in 1 2 3; do
	python3 "$E" docmdp "$p" "$T/mdp$p-plain.pdf"
	qpdf --encrypt "$U" "$(head -n 1 "$OPW")" 256 -- "$T/mdp$p-plain.pdf" "$T/mdp$p.pdf"
	run "$PDFSTAMP" dss --json --password-file "$UPW" --cert "$K/leaf.der" --crl "$K/crl.der" --vri \
		-o "$T/mdp$p-out.pdf" "$T/mdp$p.pdf"
	check_status 0 "DocMDP P=$p: dss is allowed"
	check_grep 'warning: none of the inputs belongs to signature' "$T/err" "DocMDP P=$p: --vri says why it adds no entry"
	check_eq "$(jget "$T/out" 'len(d["objects"])')" 4 "DocMDP P=$p: 2 streams, /DSS and the catalog"
	if "$PDFSTAMP" audit --help >/dev/null 2>&1; then
		# the fixture's dummy signature does not cover its revision (audit
		# may say so); what matters here is the verdict on each change
		run "$PDFSTAMP" audit --json --password-file "$UPW" "$T/mdp$p-out.pdf"
		check_eq "$(jget "$T/out" '[d["forbidden"], sorted({(c["kind"], c["verdict"]) for c in d["revisions"][-1]["changes"]})]')" \
			'[0, [["dss", "permitted"]]]' "DocMDP P=$p: audit calls every change of the DSS update a permitted DSS change"
	fi
done

# ===========================================================================
# 4. Bad inputs: refused, nothing written.
# ===========================================================================
in=$T/qpdf-r6-table.signed.pdf
[ -f "$in" ] || in=$D/qpdf-r6-table.pdf
cp "$in" "$T/bad-in.pdf"
printf 'this is not a certificate\n' >"$T/text.pem"
head -c 500 "$K/leaf.der" >"$T/trunc.der"
bad() { # EXPECTED-EXIT ERE DESC ARGS...
	local want=$1 re=$2 desc=$3
	shift 3
	rm -f "$T/bad-out.pdf"
	run "$PDFSTAMP" dss --password-file "$UPW" "$@" -o "$T/bad-out.pdf" "$T/bad-in.pdf"
	check_status "$want" "$desc"
	check_grep "$re" "$T/err" "$desc: the message names the file and the reason"
	check_true test ! -e "$T/bad-out.pdf" "$desc: no output file"
	same "$T/bad-in.pdf" "$in" "$desc"
	run "$PDFSTAMP" dss --password-file "$UPW" "$@" -i "$T/bad-in.pdf"
	check_status "$want" "$desc (-i)"
	same "$T/bad-in.pdf" "$in" "$desc (-i)"
}
bad 4 'text\.pem: neither a DER certificate' "a text file as --cert" --cert "$T/text.pem"
bad 4 'trunc\.der: the DER certificate is truncated' "a truncated DER certificate" --cert "$K/ca.der" --cert "$T/trunc.der"
bad 4 'leaf\.der: not a usable OCSP response.*it is an X\.509 certificate' "a certificate as --ocsp" --ocsp "$K/leaf.der"
bad 4 'crl\.der: not an X\.509 certificate.*it is an X\.509 CRL' "a CRL as --cert" --cert "$K/crl.der"
bad 4 'leaf\.key: PEM block 1 is a PRIVATE KEY' "a private key as --cert" --cert "$K/leaf.key"
bad 2 'cannot open: .*nothere\.pem' "a missing file" --cert "$T/nothere.pem"
bad 2 'not a regular file .*pki' "a directory" --crl "$K"
run "$PDFSTAMP" dss --password-file "$UPW" -o "$T/bad-out.pdf" "$T/bad-in.pdf"
check_status 2 "no --cert, --ocsp or --crl"
check_grep 'nothing to add' "$T/err" "no input: the message says what is missing"

# ===========================================================================
# 5. A hostile existing /DSS (dss.c note 3): its /Certs, /OCSPs, /CRLs and
#    /VRI arrays name small FlateDecode streams of megabytes of zeros
#    50,000 times each (e2e.py dssbomb), encrypted by qpdf (R6, object
#    streams, so the file stays small).  (a) One 4 MiB stream: each object
#    is decoded once, the run succeeds and adds the three inputs.  (b)
#    Three 40 MiB streams: 120 MiB decoded is past the cap (4 times the
#    file size plus 64 MiB): exit 4 naming the cap, nothing written.
#    `timeout 120` only guards against a hang (exit 124 fails the status).
# ===========================================================================
bomb() { # N MB K NAME
	python3 "$E" dssbomb "$1" "$2" "$3" "$T/$4-plain.pdf" &&
		qpdf --object-streams=generate --encrypt "$U" "$(head -n 1 "$OPW")" 256 -- "$T/$4-plain.pdf" "$T/$4.pdf"
}
if bomb 50000 4 1 amp; then
	cp "$T/amp.pdf" "$T/amp-orig.pdf"
	check_true test "$(stat -c %s "$T/amp.pdf")" -lt 200000 "amplifier: the file is small ($(stat -c %s "$T/amp.pdf") bytes)"
	run timeout 120 "$PDFSTAMP" dss --json --password-file "$UPW" --cert "$K/leaf.pem" --crl "$K/crl.pem" \
		--ocsp "$K/ocsp.der" --vri -o "$T/amp-out.pdf" "$T/amp.pdf"
	check_status 0 "amplifier: dss finishes, each distinct stream decoded once"
	check_eq "$(jget "$T/out" '[d["written"], len(d["objects"])]')" "[true, 7]" \
		"amplifier: 3 new streams and new versions of /DSS's 3 arrays and /DSS"
	same "$T/amp.pdf" "$T/amp-orig.pdf" "amplifier: dss -o"
	qcheck "$T/amp-out.pdf" "$UPW" "amplifier dss"
	check_eq "$("$PIKE" -c 'import pikepdf,sys; d=pikepdf.open(sys.argv[1], password=sys.argv[2]).Root.DSS; print(*[len(d[k]) for k in ("/Certs","/OCSPs","/CRLs")])' "$T/amp-out.pdf" "$U" 2>&1)" \
		"50001 50001 50001" "amplifier: every existing entry is kept and each array gets its input"
else
	fail "amplifier: making the file (e2e.py dssbomb, qpdf)"
fi
if bomb 60 40 3 cap; then
	cp "$T/cap.pdf" "$T/cap-orig.pdf"
	rm -f "$T/cap-out.pdf"
	run timeout 120 "$PDFSTAMP" dss --password-file "$UPW" --cert "$K/leaf.pem" -o "$T/cap-out.pdf" "$T/cap.pdf"
	check_status 4 "past the cap: dss refuses"
	check_grep 'take more than [0-9]+ bytes to read and decode \(the cap: 4 times the file size plus 64 MiB\)' "$T/err" \
		"past the cap: the message names the cap"
	check_true test ! -e "$T/cap-out.pdf" "past the cap: no output file"
	same "$T/cap.pdf" "$T/cap-orig.pdf" "past the cap: dss -o"
	run timeout 120 "$PDFSTAMP" dss --password-file "$UPW" --cert "$K/leaf.pem" -i "$T/cap.pdf"
	check_status 4 "past the cap: dss -i refuses"
	same "$T/cap.pdf" "$T/cap-orig.pdf" "past the cap: dss -i"
	# one of the three streams alone is under the cap: the same file with
	# K=1 is taken (the cap is on the total, not on one stream)
	if bomb 60 40 1 under; then
		run timeout 120 "$PDFSTAMP" dss --password-file "$UPW" --cert "$K/leaf.pem" -o "$T/under-out.pdf" "$T/under.pdf"
		check_status 0 "one 40 MiB stream named 60 times: under the cap"
	fi
else
	fail "past the cap: making the file (e2e.py dssbomb, qpdf)"
fi

finish
