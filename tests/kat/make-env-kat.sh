#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make-env-kat.sh - regenerate the CMS EnvelopedData known-answer files of
# tests/kat/env/ (the /Recipients envelopes of the public-key security
# handler, issue 33) that tests/check_envelope.c reads.
#
# Usage: sh tests/kat/make-env-kat.sh
#   needs openssl >= 3 (with its legacy provider, for RC2) on PATH; with
#   javac, java and Debian's jars (libpdfbox2-java, libitext5-java,
#   libbcprov-java) it also writes the envelopes PDFBox 2 and iText 5 make
#   (tests/kat/PubEnv.java), else it keeps the committed ones.
#
# What it writes (every file committed; the test only reads them):
#   r1, r2: RSA-2048 and RSA-4096 keys (PKCS#8 PEM, unencrypted) with
#     self-signed certificates (r1 has a subjectKeyIdentifier; openssl
#     adds one by default); r3: RSA-2048 with its key in every form
#     rkey.c reads (r3-*.key: encrypted PKCS#8 PEM with openssl's default
#     PBES2 AES-256-CBC/HMAC-SHA256, encrypted PKCS#8 DER with PBES2
#     DES-EDE3-CBC, PKCS#8 under the PKCS#12 PBE with 3DES, traditional
#     PKCS#1 PEM encrypted with AES-128, plain PKCS#1 DER), password in
#     r3.pass; ec: a P-256 key and certificate (refused: not RSA); fuzz:
#     the RSA-1024 key of fuzz/fuzz_envelope.c (kept once made).
#   content.bin: 24 bytes, a 20-byte seed and 4 permission bytes.
#   <case>.der: `openssl cms -encrypt` of content.bin (the case names the
#     cipher, key transport, recipient identifier and recipients; the
#     fuzz-*.der ones are for the fuzz key: seeds of fuzz_envelope;
#     *stream.der are BER with indefinite lengths, openssl cms -stream), and
#     pdfbox-N.der / itext-N.der (to r1 and r2) with pdfbox.bin /
#     itext.bin, their content as `openssl cms -decrypt` reads it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out="$here/env"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$out"
cd "$out"
legacy="-provider legacy -provider default"

cert() { # NAME KEYFILE CN
	openssl req -x509 -new -key "$2" -out "$1.crt" -subj "/O=pdfstamp test/CN=$3" \
		-days 36500 -set_serial "0x$(openssl rand -hex 8)" 2>/dev/null
}
# The keys and certificates are made once and kept (delete them to make
# new ones); the envelopes are made anew on every run.
if [ ! -f r1.key ]; then
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out r1.key 2>/dev/null
	cert r1 r1.key "recipient one"
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:4096 -out r2.key 2>/dev/null
	cert r2 r2.key "recipient two"
	printf 'key-pass' >r3.pass
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/r3.key" 2>/dev/null
	cert r3 "$tmp/r3.key" "recipient three"
	openssl pkcs8 -topk8 -in "$tmp/r3.key" -passout file:r3.pass -out r3-pbes2-aes.key
	openssl pkcs8 -topk8 -in "$tmp/r3.key" -passout file:r3.pass -v2 des3 -outform DER \
		-out r3-pbes2-des3.der
	openssl pkcs8 -topk8 -in "$tmp/r3.key" -passout file:r3.pass -v1 PBE-SHA1-3DES \
		-out r3-pkcs12pbe.key
	openssl rsa -in "$tmp/r3.key" -traditional -aes128 -passout file:r3.pass \
		-out r3-pkcs1-aes.key 2>/dev/null
	openssl rsa -in "$tmp/r3.key" -traditional -outform DER -out r3-pkcs1.der 2>/dev/null
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.key 2>/dev/null
	cert ec ec.key "ec recipient"
fi

# fuzz: RSA-1024 (fast to open), embedded in fuzz/fuzz_envelope.c
if [ ! -f fuzz.key ] || [ ! -f fuzz.crt ]; then
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out fuzz.key 2>/dev/null
	cert fuzz fuzz.key "fuzz recipient"
	echo "make-env-kat: a new fuzz key: paste fuzz.key and fuzz.crt into fuzz/fuzz_envelope.c" >&2
fi

# the seed (20 bytes) and the permissions -3904 (0xFFFFF0C0) big-endian
printf '000102030405060708090a0b0c0d0e0f10111213fffff0c0' | xxd -r -p >content.bin

enc() { # NAME [openssl options...] -- CERT...
	n=$1
	shift
	openssl cms -encrypt -binary -outform DER -in content.bin -out "$n.der" $legacy "$@"
}
enc aes128 -aes-128-cbc r1.crt
enc aes192 -aes-192-cbc r1.crt
enc aes256 -aes-256-cbc r1.crt
enc des3 -des-ede3-cbc r1.crt
enc rc2-128 -rc2-cbc r1.crt
enc rc2-64 -rc2-64-cbc r1.crt
enc rc2-40 -rc2-40-cbc r1.crt
enc des -des-cbc r1.crt
enc rc4 -rc4 r1.crt
enc oaep -aes-256-cbc -recip r1.crt -keyopt rsa_padding_mode:oaep
enc oaep256 -aes-256-cbc -recip r1.crt -keyopt rsa_padding_mode:oaep \
	-keyopt rsa_oaep_md:sha256 -keyopt rsa_mgf1_md:sha256
enc keyid -aes-128-cbc -keyid r1.crt
enc multi -aes-256-cbc r1.crt r2.crt r3.crt
enc r2-only -aes-256-cbc r2.crt
enc multi-rc2 -rc2-cbc r3.crt r1.crt
# BER: indefinite lengths and a chunked encryptedContent
enc stream -aes-256-cbc -stream r2.crt r1.crt

enc fuzz-aes128 -aes-128-cbc fuzz.crt
enc fuzz-des3 -des-ede3-cbc fuzz.crt
enc fuzz-rc2 -rc2-cbc fuzz.crt
enc fuzz-oaep -aes-256-cbc -recip fuzz.crt -keyopt rsa_padding_mode:oaep \
	-keyopt rsa_oaep_md:sha256 -keyopt rsa_mgf1_md:sha256
enc fuzz-keyid -aes-256-cbc -keyid r2.crt fuzz.crt
enc fuzz-stream -rc2-cbc -stream fuzz.crt

# Each must decrypt again with openssl (the cases are what we think they are).
for n in aes128 aes192 aes256 des3 rc2-128 rc2-64 rc2-40 des rc4 oaep oaep256 keyid multi \
	multi-rc2 stream; do
	openssl cms -decrypt -inform DER -in "$n.der" -recip r1.crt -inkey r1.key $legacy \
		-out "$tmp/got" && cmp "$tmp/got" content.bin
done
for n in fuzz-aes128 fuzz-des3 fuzz-rc2 fuzz-oaep fuzz-keyid fuzz-stream; do
	openssl cms -decrypt -inform DER -in "$n.der" -recip fuzz.crt -inkey fuzz.key $legacy \
		-out "$tmp/got" && cmp "$tmp/got" content.bin
done

# PDFBox 2 and iText 5: what they write into /Recipients, for r1 and r2
jars=""
for j in pdfbox2 fontbox2 itext5 bcprov bcpkix commons-logging; do
	[ -f "/usr/share/java/$j.jar" ] && jars="$jars:/usr/share/java/$j.jar"
done
if command -v javac >/dev/null && [ -n "$jars" ] &&
	javac -nowarn -cp "$jars" -d "$tmp" "$here/PubEnv.java" 2>"$tmp/javac.log"; then
	for lib in pdfbox itext; do
		java -cp "$jars:$tmp" PubEnv "$lib" "$lib" -3904 r1.crt r2.crt >/dev/null
		openssl cms -decrypt -inform DER -in "$lib-0.der" -recip r1.crt -inkey r1.key \
			$legacy -out "$lib.bin"
		openssl cms -decrypt -inform DER -in "$lib-1.der" -recip r2.crt -inkey r2.key \
			$legacy -out "$tmp/got" && cmp "$tmp/got" "$lib.bin"
	done
else
	echo "make-env-kat: no javac or jars: the PDFBox and iText envelopes are kept" >&2
fi
echo "make-env-kat: wrote $out ($(openssl version))"
