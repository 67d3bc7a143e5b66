#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make-tsp.sh - regenerate the RFC 3161 TimeStampResp files of
# tests/kat/tsp/, the seeds of fuzz/fuzz_tsp.c (fuzz/make-seeds.py puts
# them in that target's layout: flags, hash, nonce, reply).
#
# Usage: sh tests/kat/tsp/make-tsp.sh   (needs openssl >= 1.1 and python3)
#
# A throwaway PKI made here (as tests/e2e/pki.sh does): a self-signed CA
# (ca.pem, 100 years, the CA file fuzz_tsp.c embeds for its chain check)
# and a TSA certificate with the critical extended key usage timeStamping
# alone; its key is not kept.  The queries are built here in python, not
# by `openssl ts -query`, so that their hash and nonce are KNOWN: the hash
# is SHA-N of "pdfstamp fuzz_tsp N" and the nonce the 16 bytes
# 0x42 0x01 0x02 ... 0x0f (first byte in 1..127, as tsp.c makes them);
# fuzz/make-seeds.py computes the same.  Each query is then answered by
# `openssl ts -reply`:
#   reply-sha256.der   SHA-256 imprint, ESSCertID (SHA-1, RFC 2634)
#   reply-sha384.der   SHA-384 imprint, ESSCertIDv2 (SHA-256, RFC 5816)
#   reply-sha512.der   SHA-512 imprint, ESSCertIDv2 with SHA-512
#   reply-reject.der   a SHA-1 query, which this TSA does not accept:
#                      status rejection (2), badAlg, with a status text
#   reply-ess-chain.der  SHA-256 imprint, ESSCertID of the TSA and of the
#                      CA (ess_cert_id_chain): accepted
#   reply-no-nonce.der SHA-256 imprint, the query without a nonce, so the
#                      token has none: refused by tsp.c (note 4)
# The accepted ones pass `openssl ts -verify` here.  The CA certificate is
# also written into fuzz/fuzz_tsp.c (FZT_CA), which must match the replies.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp"

cat >ca.cnf <<'CNF'
[v3_ca]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[v3_tsa]
basicConstraints = CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -subj "/CN=pdfstamp fuzz_tsp CA" \
	-days 36500 -config ca.cnf -extensions v3_ca -out ca.pem 2>/dev/null
openssl req -new -newkey rsa:2048 -nodes -keyout tsa.key -subj "/CN=pdfstamp fuzz_tsp TSA" \
	-out tsa.csr 2>/dev/null
openssl x509 -req -in tsa.csr -CA ca.pem -CAkey ca.key -set_serial 0x1001 -days 36500 \
	-extfile ca.cnf -extensions v3_tsa -out tsa.pem 2>/dev/null

for ess in sha1 sha256 sha512 chain; do
	chain=no alg=$ess
	[ "$ess" = chain ] && chain=yes alg=sha1
	cat >"ts-$ess.cnf" <<CNF
[tsa]
default_tsa = tsa1
[tsa1]
dir = .
serial = ./tsaserial
crypto_device = builtin
signer_cert = ./tsa.pem
certs = ./ca.pem
signer_key = ./tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = $chain
ess_cert_id_alg = $alg
CNF
done
echo 01 >tsaserial

# The TimeStampReq of tsp.c note 1: version 1, messageImprint, nonce, certReq TRUE.
python3 - <<'PY'
import hashlib
OIDS = {"sha1": "2b0e03021a", "sha256": "608648016503040201",
        "sha384": "608648016503040202", "sha512": "608648016503040203"}
def tlv(tag, body):
    n = len(body)
    ln = bytes([n]) if n < 0x80 else bytes([0x81, n]) if n < 0x100 else bytes([0x82, n >> 8, n & 255])
    return bytes([tag]) + ln + body
nonce = bytes([0x42]) + bytes(range(1, 16))
for name in ("sha1", "sha256", "sha384", "sha512"):
    bits = {"sha1": 160}.get(name, int(name[3:]))
    h = hashlib.new(name, b"pdfstamp fuzz_tsp %d" % bits).digest()
    alg = tlv(0x30, tlv(0x06, bytes.fromhex(OIDS[name])) + b"\x05\x00")
    req = tlv(0x30, b"\x02\x01\x01" + tlv(0x30, alg + tlv(0x04, h)) + tlv(0x02, nonce) + b"\x01\x01\xff")
    open(name + ".tsq", "wb").write(req)
    if name == "sha256":
        req = tlv(0x30, b"\x02\x01\x01" + tlv(0x30, alg + tlv(0x04, h)) + b"\x01\x01\xff")
        open("sha256-nononce.tsq", "wb").write(req)
PY

reply() { # QUERY ESS OUT
	openssl ts -reply -config "ts-$2.cnf" -queryfile "$1.tsq" -out "$here/$3" 2>/dev/null
}
reply sha256 sha1 reply-sha256.der
reply sha384 sha256 reply-sha384.der
reply sha512 sha512 reply-sha512.der
reply sha1 sha1 reply-reject.der
reply sha256 chain reply-ess-chain.der
reply sha256-nononce sha1 reply-no-nonce.der
for q in sha256:sha256 sha384:sha384 sha512:sha512 sha256:ess-chain; do
	openssl ts -verify -queryfile "${q%%:*}.tsq" -in "$here/reply-${q#*:}.der" -CAfile ca.pem \
		-untrusted tsa.pem >/dev/null
done
cp ca.pem "$here/ca.pem"
# the CA the target embeds for its chain check
python3 - "$here/ca.pem" "$here/../../../fuzz/fuzz_tsp.c" <<'PY'
import re, sys
pem = open(sys.argv[1]).read().splitlines()
src = open(sys.argv[2]).read()
body = "\n".join('\t"%s\\n"' % l for l in pem) + ";"
src, n = re.subn(r'(static const char FZT_CA\[\] =\n)(\t"[^\n]*\n)*?\t"[^\n]*;', lambda m: m.group(1) + body, src)
assert n == 1
open(sys.argv[2], "w").write(src)
PY
echo "tests/kat/tsp: reply-*.der, ca.pem; fuzz/fuzz_tsp.c: its CA"
