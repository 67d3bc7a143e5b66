#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make-p12.sh - regenerate the PKCS#12 files in this directory with
# `openssl pkcs12 -export` (OpenSSL 3), for tests/check_p12.c (src/p12.c).
#
# Usage: sh tests/kat/p12/make-p12.sh     (needs OpenSSL 3 on PATH, with its
#                                         legacy provider for -legacy)
#
# A test CA, an intermediate CA and a recipient's RSA 2048 key and certificate (made here too:
# nothing secret), then one PKCS#12 file per way producers write them:
#   default.p12   OpenSSL 3's defaults: PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC)
#                 for key and certificates, HMAC-SHA256 MAC; password p12-secret
#   legacy.p12    -legacy: 3DES key bag, RC2-40 certificate bag, SHA-1 MAC
#   chain.p12     the CAs' certificates too, the intermediate's (which issued
#                 the recipient's) first (-certfile): the key's must be picked
#   nomac.p12     -nomac: no MAC, the decryption judges the password
#   plain.p12     -keypbe NONE -certpbe NONE: bags in clear, only the MAC
#                 knows the password
#   empty.p12     the empty password (-passout pass:)
#   utf8.p12      a non-ASCII password, "pässwörd ключ" (UTF-8)
#   certonly.p12  -nokeys: a certificate and no key
#   keyonly.p12   -nocerts: a key and no certificate
#   sha512.p12    -macalg sha512 -iter 10000
#   bigiter.p12   -iter 2000000: more MAC iterations than p12.c runs
# and the answers: key.der (the key as unencrypted PKCS#8 DER) and
# cert.der (its certificate, DER).  The output files are committed; the
# unit tests only read them.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/ca.key" -out ca.pem \
	-subj "/CN=pdfstamp test CA" -days 36500 2>/dev/null
printf 'basicConstraints=critical,CA:true\nkeyUsage=keyCertSign\n' > "$tmp/ca.ext"
openssl req -newkey rsa:2048 -nodes -keyout "$tmp/inter.key" -out "$tmp/inter.csr" \
	-subj "/CN=pdfstamp test intermediate CA" 2>/dev/null
openssl x509 -req -in "$tmp/inter.csr" -CA ca.pem -CAkey "$tmp/ca.key" -CAcreateserial \
	-CAserial "$tmp/ca.srl" -extfile "$tmp/ca.ext" -out inter.pem -days 36500 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout key.pem -out "$tmp/r.csr" \
	-subj "/CN=Recipient One/O=pdfstamp tests" 2>/dev/null
openssl x509 -req -in "$tmp/r.csr" -CA inter.pem -CAkey "$tmp/inter.key" -CAcreateserial \
	-CAserial "$tmp/inter.srl" -out cert.pem -days 36500 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in key.pem -outform DER -out key.der
openssl x509 -in cert.pem -outform DER -out cert.der

x() { openssl pkcs12 -export -inkey key.pem -in cert.pem "$@"; }
x -out default.p12 -passout pass:p12-secret
x -legacy -out legacy.p12 -passout pass:p12-secret
cat inter.pem ca.pem > "$tmp/cas.pem"
x -certfile "$tmp/cas.pem" -out chain.p12 -passout pass:p12-secret
x -nomac -out nomac.p12 -passout pass:p12-secret
x -keypbe NONE -certpbe NONE -out plain.p12 -passout pass:p12-secret
x -out empty.p12 -passout pass:
x -out utf8.p12 -passout "pass:pässwörd ключ"
x -macalg sha512 -iter 10000 -out sha512.p12 -passout pass:p12-secret
x -iter 2000000 -out bigiter.p12 -passout pass:p12-secret
openssl pkcs12 -export -nokeys -in cert.pem -out certonly.p12 -passout pass:p12-secret
openssl pkcs12 -export -nocerts -inkey key.pem -out keyonly.p12 -passout pass:p12-secret
openssl version > openssl-version.txt
