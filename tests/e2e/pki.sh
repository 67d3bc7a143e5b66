# SPDX-License-Identifier: Apache-2.0
# tests/e2e/pki.sh - the throwaway PKI of the signature scripts (dss.sh,
# timestamp.sh, ltv-fetch.sh, ltv-pipeline.sh): openssl's CA configuration
# and certificates, the NSS database pdfsig signs with, the servers on
# 127.0.0.1 (fixtures/ltvserve.py, `openssl ocsp -port`, fixtures/tsa.py)
# and the openssl check of a document timestamp's token.  One place to
# change; what differs between the scripts (a one-tier CA or a root and an
# intermediate, subjects, nicknames, extra certificates) are arguments.
#
# Source it after lib.sh:   . "$TOP_SRCDIR/tests/e2e/pki.sh"
# Sourcing it skips the script (exit 77) without python3, qpdf, pdfsig,
# certutil, pk12util or openssl; sets K=$T/pki (created, every PKI file
# goes there) and an EXIT trap that stops the servers started here and
# removes $T.  The script sets U (the user password) and PKI_NICK (the
# signer's nickname: the PKCS#12 friendly name, pdfsig's -nick).
#
# The PKI (openssl).  pki_make runs a function of the script that calls the
# others; they write into the current directory, $K:
#   pki_make DESC FUNC  runs FUNC in $K under set -e, its output in
#                       $T/pki.log; if anything fails: fail DESC (with the
#                       log's tail) and finish
#   pki_cnf [URL]       $K/ca.cnf, openssl ca's configuration (its
#                       database: $IDX, which pki_issue and pki_crl set)
#                       with the extension sections v3_ca (a root), v3_int
#                       (an intermediate), v3_leaf (a signer), v3_tsa
#                       (critical EKU timeStamping) and v3_ocsp (EKU
#                       OCSPSigning); and $K/serial, $K/crlnumber.  With
#                       URL, the HTTP fixture's (so it is started first):
#                       v3_int names URL/root.der (AIA caIssuers) and
#                       URL/root.crl (CRL DP), v3_leaf and v3_tsa name
#                       URL/int.der, URL/ocsp and URL/int.crl.  A script
#                       appends sections of its own (cat >>"$K/ca.cnf").
#   pki_ts_cnf CERTS DIGESTS  $K/ts.cnf, `openssl ts -reply`'s section
#                       tsa1 (signer tsa.pem/tsa.key, the tokens carrying
#                       CERTS, accepting DIGESTS), and $K/tsaserial
#   pki_root NAME CN    a self-signed CA "/CN=CN": NAME.key, NAME.pem and
#                       its empty database NAME.idx
#   pki_issue CA EXT NAME CN  a key and a certificate "/CN=CN" that CA
#                       issues with the section EXT: NAME.key, NAME.csr,
#                       NAME.pem, recorded in CA.idx (created if need be:
#                       the index `openssl ocsp -index` reads)
#   pki_crl CA PEM DER [openssl ca options]  CA's CRL, in PEM and in DER
#   pki_der NAME...     NAME.der of each NAME.pem
#   pki_p12 NAME CHAIN  NAME.p12 (password p12): NAME.key, NAME.pem and
#                       CHAIN.pem, the friendly name $PKI_NICK
# After pki_make:
#   pki_nss P12 ANCHOR [PEM]  the NSS database $NSS=$T/nss (no password)
#                       with P12's key and certificates and the anchor
#                       ANCHOR trusted (CT,C,C): the certificate PEM
#                       imported under that nickname, or without PEM the
#                       CA certificate P12 carries (its nickname: its CN);
#                       on failure: fail and finish
#   pki_sign IN OUT REASON [pdfsig options]  pdfsig signs IN into OUT with
#                       $PKI_NICK of $NSS, the user password $U; its output
#                       in $T/sign.log; the status is pdfsig's
#
# The servers (each on a free port of 127.0.0.1; no proxy is used):
#   pki_free_port       prints a port of 127.0.0.1 that was free (bound,
#                       then closed)
#   pki_start_http WWW  fixtures/ltvserve.py serving WWW, its requests
#                       logged to $T/http.log, /ocsp forwarded to
#                       $OCSP_PORT (chosen on the first call); on the port
#                       of the last start if any (the certificates name
#                       it), which it sets in HP; non-zero if it does not
#                       listen (stderr in $T/http.err)
#   pki_start_ocsp CA SIGNER [openssl ocsp options]  `openssl ocsp -port
#                       $OCSP_PORT` for the certificates of CA.idx, signed
#                       by SIGNER.pem/.key, its log $T/ocsp.log; sets
#                       OCSP_PID; non-zero if it does not get ready
#   pki_start_tsa       fixtures/tsa.py on $K (ts.cnf; requests.log), sets
#                       TSA=http://127.0.0.1:PORT; non-zero if it does not
#                       listen (stderr in $T/tsa.err)
#   pki_stop_all        stops every server started here
#
# The document timestamp check:
#   pki_tsverify FILE N LABEL  the token of the Nth-from-last /ByteRange of
#                       FILE (1: the newest), read from the raw bytes,
#                       verified by `openssl ts -verify` against the bytes
#                       the /ByteRange names, the anchor $PKI_TS_CAFILE,
#                       the untrusted certificates $PKI_TS_UNTRUSTED; with
#                       PKI_TS_CHECK_END=1 and N=1, also that the
#                       /ByteRange ends at the end of the file
#
# pikepdf (Debian's python3-pikepdf may sit in the system python3 only):
#   pike_need           sets PIKE to a python3 with pikepdf, or skips the
#                       script (exit 77)
#   pike_feed CHECKER ARGS...  checker_feed (lib.sh) with that python3

need python3
need qpdf
need pdfsig
need certutil
need pk12util
need openssl

K=$T/pki
mkdir -p "$K"
PKI_PIDS=()
OCSP_PORT=
HP=
trap 'pki_stop_all; rm -rf "$T"' EXIT

# ---------------------------------------------------------------------------
# The PKI

pki_make() {
	local desc=$1
	shift
	# not in a condition: there set -e would be ignored in the subshell
	(
		set -e
		cd "$K"
		# ca.cnf's database: pki_issue and pki_crl name the CA's; openssl
		# req and x509 read the file too and want a value
		export IDX=unused.idx
		"$@"
	) >"$T/pki.log" 2>&1
	local rc=$?
	[ "$rc" = 0 ] && return 0
	fail "$desc" "$(tail -c 1200 "$T/pki.log")"
	finish
}

pki_cnf() {
	local url=${1:-} aia= leafaia=
	if [ -n "$url" ]; then
		aia="authorityInfoAccess = caIssuers;URI:$url/root.der
crlDistributionPoints = URI:$url/root.crl"
		leafaia="authorityInfoAccess = caIssuers;URI:$url/int.der,OCSP;URI:$url/ocsp
crlDistributionPoints = URI:$url/int.crl"
	fi
	cat >"$K/ca.cnf" <<EOF
[ca]
default_ca = tca
[tca]
dir = .
database = \$ENV::IDX
new_certs_dir = .
serial = serial
crlnumber = crlnumber
default_md = sha256
default_days = 30
default_crl_days = 30
policy = any
unique_subject = no
[any]
commonName = supplied
[v3_ca]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[v3_int]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
$aia
[v3_leaf]
basicConstraints = CA:false
keyUsage = critical,digitalSignature,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
$leafaia
[v3_tsa]
basicConstraints = CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
$leafaia
[v3_ocsp]
basicConstraints = CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,OCSPSigning
EOF
	echo 1000 >"$K/serial"
	echo 01 >"$K/crlnumber"
}

pki_ts_cnf() {
	cat >"$K/ts.cnf" <<EOF
[tsa]
default_tsa = tsa1
[tsa1]
dir = .
serial = ./tsaserial
crypto_device = builtin
signer_cert = ./tsa.pem
certs = ./$1
signer_key = ./tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = $2
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
EOF
	echo 01 >"$K/tsaserial"
}

pki_root() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -subj "/CN=$2" \
		-days 30 -config ca.cnf -extensions v3_ca &&
		: >"$1.idx"
}

pki_issue() {
	: >>"$1.idx"
	openssl req -newkey rsa:2048 -nodes -keyout "$3.key" -out "$3.csr" -subj "/CN=$4" &&
		IDX=$1.idx openssl ca -batch -config ca.cnf -cert "$1.pem" -keyfile "$1.key" -extensions "$2" \
			-in "$3.csr" -out "$3.pem" -notext
}

pki_crl() {
	local ca=$1 pem=$2 der=$3
	shift 3
	: >>"$ca.idx"
	IDX=$ca.idx openssl ca -batch -config ca.cnf -cert "$ca.pem" -keyfile "$ca.key" -gencrl "$@" \
		-out "$pem" &&
		openssl crl -in "$pem" -outform DER -out "$der"
}

pki_der() {
	local c
	for c in "$@"; do
		openssl x509 -in "$c.pem" -outform DER -out "$c.der" || return 1
	done
}

pki_p12() {
	openssl pkcs12 -export -in "$1.pem" -inkey "$1.key" -certfile "$2.pem" -out "$1.p12" \
		-passout pass:p12 -name "$PKI_NICK"
}

pki_nss() {
	local trust
	NSS=$T/nss
	mkdir -p "$NSS"
	if [ $# -gt 2 ]; then
		trust=(-A -i "$3")
	else
		trust=(-M)
	fi
	if ! certutil -N -d "sql:$NSS" --empty-password >"$T/nss.log" 2>&1 ||
		! pk12util -i "$1" -d "sql:$NSS" -W p12 -K '' >>"$T/nss.log" 2>&1 ||
		! certutil "${trust[@]}" -d "sql:$NSS" -n "$2" -t "CT,C,C" >>"$T/nss.log" 2>&1; then
		fail "importing the signer into a throwaway NSS database" "$(cat "$T/nss.log")"
		finish
	fi
}

pki_sign() {
	local in=$1 out=$2 reason=$3
	shift 3
	pdfsig -add-signature -nssdir "sql:$NSS" -nick "$PKI_NICK" -upw "$U" -reason "$reason" "$@" \
		"$in" "$out" >"$T/sign.log" 2>&1
}

# ---------------------------------------------------------------------------
# The servers

# a server on 127.0.0.1: no proxy may stand between
pki_no_proxy() {
	unset http_proxy https_proxy HTTPS_PROXY ALL_PROXY all_proxy
	export NO_PROXY='*' no_proxy='*'
}

pki_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pki_start_http() {
	pki_no_proxy
	[ -n "$OCSP_PORT" ] || OCSP_PORT=$(pki_free_port)
	rm -f "$T/http.port"
	python3 "$TOP_SRCDIR/tests/e2e/fixtures/ltvserve.py" "$1" "$T/http.port" "$T/http.log" "$OCSP_PORT" \
		"${HP:-0}" 2>"$T/http.err" &
	PKI_PIDS+=($!)
	for _ in $(seq 50); do [ -s "$T/http.port" ] && break; sleep 0.1; done
	HP=$(cat "$T/http.port" 2>/dev/null)
	[ -n "$HP" ]
}

pki_start_ocsp() {
	local ca=$1 signer=$2
	shift 2
	(cd "$K" && exec openssl ocsp -index "$ca.idx" -port "$OCSP_PORT" -CA "$ca.pem" \
		-rsigner "$signer.pem" -rkey "$signer.key" -nmin 10 -ignore_err "$@") >"$T/ocsp.log" 2>&1 &
	OCSP_PID=$!
	PKI_PIDS+=($!)
	# ready once it says so (a probing connection would hang the
	# one-at-a-time responder)
	for _ in $(seq 50); do
		grep -q 'waiting for OCSP client connections' "$T/ocsp.log" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

pki_start_tsa() {
	pki_no_proxy
	rm -f "$T/tsa.port"
	python3 "$TOP_SRCDIR/tests/e2e/fixtures/tsa.py" "$K" "$T/tsa.port" 2>"$T/tsa.err" &
	PKI_PIDS+=($!)
	for _ in $(seq 100); do [ -s "$T/tsa.port" ] && break; sleep 0.05; done
	[ -s "$T/tsa.port" ] || return 1
	TSA=http://127.0.0.1:$(cat "$T/tsa.port")
}

pki_stop_all() {
	local p
	for p in "${PKI_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	PKI_PIDS=()
}

# ---------------------------------------------------------------------------
# The document timestamp check

pki_tsverify() {
	local f=$1 n=$2 label=$3 ends
	[ -f "$T/split.py" ] || cat >"$T/split.py" <<'PY'
import re, sys
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = open(path, "rb").read()
m = list(re.finditer(rb"/ByteRange\s*\[\s*0\s+(\d+)\s+(\d+)\s+(\d+)\s*\]", d))[-n]
a, b, c = map(int, m.groups())
assert d[a:a+1] == b"<" and d[b-1:b] == b">", "the gap is not the hex string"
open(out + ".data", "wb").write(d[:a] + d[b:b + c])
open(out + ".tok", "wb").write(bytes.fromhex(d[a + 1:b - 1].decode()))
print("%d %d" % (b + c, len(d)))
PY
	if ! ends=$(python3 "$T/split.py" "$f" "$n" "$T/tsv" 2>&1); then
		fail "$label: the /ByteRange gap is the /Contents hex string" "$ends"
		return
	fi
	if [ "${PKI_TS_CHECK_END:-0}" = 1 ] && [ "$n" = 1 ]; then
		check_eq "${ends% *}" "${ends#* }" "$label: the newest /ByteRange ends at the end of the file"
	fi
	run openssl ts -verify -data "$T/tsv.data" -in "$T/tsv.tok" -token_in -CAfile "$PKI_TS_CAFILE" \
		-untrusted "$PKI_TS_UNTRUSTED"
	check_grep '^Verification: OK' "$T/out" "$label: openssl ts -verify of the token against its /ByteRange bytes"
}

# ---------------------------------------------------------------------------
# pikepdf

pike_need() {
	local py
	PIKE=
	for py in python3 /usr/bin/python3; do
		if "$py" -c 'import pikepdf' >/dev/null 2>&1; then
			PIKE=$py
			break
		fi
	done
	[ -n "$PIKE" ] || { echo "SKIP: pikepdf is not installed (Debian: python3-pikepdf)"; exit 77; }
	mkdir -p "$T/pikebin"
	printf '#!/bin/sh\nexec %s "$@"\n' "$PIKE" >"$T/pikebin/python3"
	chmod +x "$T/pikebin/python3"
}

pike_feed() {
	PATH="$T/pikebin:$PATH" checker_feed "$@"
}
