#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/pubsec.sh - files encrypted to certificates (/Filter
# /Adobe.PubSec, ISO 32000-2 7.6.5; issue 33), judged by PDFBox and iText.
#
# A PKI made here by openssl: a CA and recipients alice (RSA 2048, PKCS#8
# PEM key, also as a PKCS#12 file), bob (RSA 4096, PKCS#1 DER key, DER
# certificate), carol (RSA 2048, encrypted PKCS#8 key), dave (issued by the
# same CA, never a recipient), erin and frank (the recipients rotate
# writes).  A corpus made here by tests/e2e/fixtures/PubSec.java from
# samples/plain-{2,3}page.pdf: PDFBox 2 and iText 5, 1 and 3 recipients,
# RC4-128 (s4), AES-128 and AES-256 (s5), metadata encrypted or not (iText
# only: PDFBox 2 cannot write that), permissions per recipient (all, print
# only, all but modify and annotate).  Both producers envelope the seed
# with RC2-CBC content encryption.
#
# Part 1, the corpus itself (the readers are checked, not pdfstamp): each
# file opens in PDFBox and in iText with each recipient's key, shows the
# handler, sub-filter, method and metadata flag it was made with, the
# permissions meant for that recipient and the pages' text of its source,
# and refuses dave's key and alice's certificate with dave's key (the
# checker exits 3 for them, and does not open a copy whose envelope was
# damaged here); the envelopes of both producers are RC2-CBC.
# Part 2, pdfstamp, through the CLI interface of issue 33 (--key, --cert,
# --p12, --key-password-file, --recipient, --recipient-permissions,
# --to-password); this part fails, never skips, while pdfstamp cannot:
#  - info --json with each recipient's key: handler, subfilter, recipients,
#    envelopes, recipient_index and recipient as PDFBox sees them, the
#    recipient's permission bits; verify and audit exit 0;
#  - no key: exit 3 with the documented message; a non-recipient's key, a
#    key that does not fit its certificate: exit 3; nothing written;
#  - stamp with a recipient allowed to annotate: exit 0, the input's bytes
#    kept; PDFBox and iText with ANOTHER recipient's key read the stamp's
#    /Contents, PDFBox decodes its appearance and renders page 1 otherwise
#    than before; the page text is unchanged; a recipient without annotate
#    permission: exit 5, nothing written;
#  - meta --set Title --xmp: PDFBox and iText with another key read the
#    title, PDFBox the XMP; the new XMP stream is in clear exactly when the
#    file has /EncryptMetadata false;
#  - rotate --recipient erin --recipient-permissions print --recipient
#    frank: /adbe.pkcs7.s5 AESV3 with AES-256-CBC envelopes; opens in PDFBox
#    and iText with erin's and frank's keys (erin with print only), not with
#    alice's or bob's; every page's text kept; pdfstamp info with frank's;
#  - rotate --to-password: R6 that qpdf --check passes with the new
#    password, text kept (pdftotext); rotate as a recipient without every
#    permission: exit 5, nothing written;
#  - encrypt --recipient of a plaintext file and rotate --recipient of a
#    password (R6) file: PDFBox opens them with the new key only.
# The hostile files of tests/malformed/pubsec/ are run by malformed.sh;
# here both readers check that its valid ones (made by make-pubsec.py, not by
# a Java library) open with key.pem and not with other-key.pem.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need openssl
need qpdf
need pdftotext
need cmp

S=$TOP_SRCDIR/samples
JARS=
missing=
for j in pdfbox2 fontbox2 commons-logging itext5 bcprov bcpkix bcutil; do
	if [ -f "/usr/share/java/$j.jar" ]; then
		JARS=$JARS${JARS:+:}/usr/share/java/$j.jar
	else
		missing="$missing $j.jar"
	fi
done
# The Java producers and readers are this test's corpus and judges: without
# them the whole script is skipped (exit 77, shown as SKIP in make check's
# summary, as for any test tool missing, e.g. in a .deb build whose
# Build-Depends lack them); ./bootstrap.sh --deps-only installs them.  With
# them, whatever pdfstamp cannot do fails.
need java
need javac
if [ -n "$missing" ]; then
	echo "SKIP: /usr/share/java/{$missing } missing (default-jdk-headless libpdfbox2-java" \
		"libitext5-java libbcprov-java libbcpkix-java libbcutil-java: ./bootstrap.sh --deps-only)"
	exit 77
fi
mkdir -p "$T/java"
if ! javac -nowarn -cp "$JARS" -d "$T/java" "$TOP_SRCDIR/tests/e2e/fixtures/PubSec.java" \
	>"$T/javac.log" 2>&1; then
	fail "javac PubSec.java" "$(head -c 600 "$T/javac.log")"
	finish
fi

# ---- the PKI ----------------------------------------------------------------
K=$T/pki
mkdir -p "$K"
ossl() {
	if ! openssl "$@" >>"$K/openssl.log" 2>&1; then
		fail "openssl $1 (making the PKI)" "$(tail -c 600 "$K/openssl.log")"
		finish
	fi
}
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$K/ca.key" -out "$K/ca.pem" \
	-subj "/O=pdfstamp test/CN=Test CA" -days 30 -sha256
serial=4096
for n in alice bob carol dave erin frank; do
	bits=2048
	[ $n = bob ] && bits=4096
	ossl genpkey -algorithm RSA -pkeyopt "rsa_keygen_bits:$bits" -out "$K/$n.key"
	ossl req -new -key "$K/$n.key" -subj "/O=pdfstamp test/CN=$n" -out "$K/$n.csr"
	serial=$((serial + 1))
	ossl x509 -req -in "$K/$n.csr" -CA "$K/ca.pem" -CAkey "$K/ca.key" -set_serial "$serial" \
		-days 30 -sha256 -out "$K/$n.pem"
done
# the other key and certificate forms that --key, --cert and --p12 take
ossl rsa -in "$K/bob.key" -traditional -outform DER -out "$K/bob.key.der"
ossl x509 -in "$K/bob.pem" -outform DER -out "$K/bob.der"
printf 'carol key pw\n' >"$K/carol.pw"
ossl pkcs8 -topk8 -in "$K/carol.key" -v2 aes-256-cbc -passout "file:$K/carol.pw" \
	-out "$K/carol.enc.pem"
printf 'p12 pw\n' >"$K/p12.pw"
ossl pkcs12 -export -inkey "$K/alice.key" -in "$K/alice.pem" -passout "file:$K/p12.pw" \
	-out "$K/alice.p12"
printf 'new user\n' >"$K/new-u.pw"
printf 'new owner\n' >"$K/new-o.pw"
grep -q 'BEGIN ENCRYPTED PRIVATE KEY' "$K/carol.enc.pem" ||
	fail "carol's key is an encrypted PKCS#8 key"

# kopts NAME: the key options of recipient NAME, in the array KO; each
# recipient in another form of key material.
kopts() {
	case $1 in
	alice) KO=(--key "$K/alice.key" --cert "$K/alice.pem") ;;
	alice-p12) KO=(--p12 "$K/alice.p12" --key-password-file "$K/p12.pw") ;;
	bob) KO=(--key "$K/bob.key.der" --cert "$K/bob.der") ;;
	carol) KO=(--key "$K/carol.enc.pem" --key-password-file "$K/carol.pw" --cert "$K/carol.pem") ;;
	*) KO=(--key "$K/$1.key" --cert "$K/$1.pem") ;;
	esac
}

# ---- the Java runs, batched (one JVM per phase) -----------------------------
Q=$T/queue
: >"$Q"
# q OUTFILE ARGS...: queues one PubSec run.
q() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$Q"
}
# jrun: runs the queue.
jrun() {
	java -cp "$JARS:$T/java" PubSec batch <"$Q" >"$T/jbatch.log" 2>&1 ||
		fail "java PubSec batch" "$(head -c 600 "$T/jbatch.log")"
	: >"$Q"
}
# qdump OUTFILE LIB PDF NAME [render]: queues a dump as recipient NAME
# (KEYNAME may be CERTNAME/KEYNAME: that certificate with that key).
qdump() {
	local c=${4%/*} k=${4#*/}
	q "$1" dump "$2" "$3" "$K/$c.pem" "$K/$k.key" ${5:+"$5"}
}
# jrc OUTFILE: a dump's exit status; jv OUTFILE KEY: its first value.
jrc() { cat "$1.rc" 2>/dev/null || echo none; }
jv() { awk -F'\t' -v k="$2" '$1 == k { print $2; exit }' "$1" 2>/dev/null; }
# jtext OUTFILE: every page's text, one line a page.
jtext() { awk -F'\t' '$1 == "text" { print $2 "\t" $3 }' "$1" 2>/dev/null; }
# jopened DESC OUTFILE: the dump opened the file.
jopened() {
	if [ "$(jrc "$2")" = 0 ]; then
		ok "$1"
	else
		fail "$1 (exit $(jrc "$2"))" "$(head -c 400 "$2.err" 2>/dev/null)"
	fi
}
# jrefused DESC OUTFILE: the key could not open it (exit 3).
jrefused() {
	if [ "$(jrc "$2")" = 3 ]; then
		ok "$1"
	else
		fail "$1 (exit $(jrc "$2"), expected 3)" "$(head -c 400 "$2" "$2.err" 2>/dev/null)"
	fi
}

# Permissions: P values and the bits both producers carry over (3-6, 9-12).
P_all=-4
P_print=-3900
P_noannot=-44
lowbits() {
	case ${1:-} in
	-[0-9]* | [0-9]*) echo $(($1 & 0xF3C)) ;;
	*) echo "none (${1:-empty})" ;;
	esac
}

# ---- the corpus -----------------------------------------------------------------
# name lib method meta source recipient=perm...
CORPUS="pdfbox-rc4-1 pdfbox rc4-128 meta plain-2page alice=all
pdfbox-aes128-3 pdfbox aes-128 meta plain-3page alice=all bob=print carol=noannot
pdfbox-aes256-3 pdfbox aes-256 meta plain-2page alice=all bob=all carol=print
pdfbox-aes256-4096 pdfbox aes-256 meta plain-3page bob=all
itext-rc4-3 itext rc4-128 meta plain-3page alice=all bob=noannot carol=all
itext-aes128-nometa itext aes-128 nometa plain-2page alice=all
itext-aes256-3 itext aes-256 meta plain-2page carol=all alice=all bob=print
itext-aes256-3-nometa itext aes-256 nometa plain-3page alice=noannot bob=all carol=all"
C=$T/corpus
J=$T/j
mkdir -p "$C" "$J"
while read -r name lib method meta src rs; do
	args=()
	for r in $rs; do
		v=P_${r#*=}
		args+=("$K/${r%=*}.pem=${!v}")
	done
	q "$J/enc-$name" encrypt "$lib" "$S/$src.pdf" "$C/$name.pdf" "$method" "$meta" "${args[@]}"
done <<<"$CORPUS"
# the sources' text as PDFBox and iText read them (any key: not encrypted)
for src in plain-2page plain-3page; do
	qdump "$J/src-pdfbox-$src" pdfbox "$S/$src.pdf" alice render
	qdump "$J/src-itext-$src" itext "$S/$src.pdf" alice
done
# the committed files of tests/malformed/pubsec/ (make-pubsec.py) that are
# valid: both readers open them with key.pem, and not with other-key.pem
MP=$TOP_SRCDIR/tests/malformed/pubsec
for b in base base-nometa oaep cms-cipher-camellia; do
	for lb in pdfbox itext; do
		q "$J/mp-$lb-$b" dump "$lb" "$MP/$b.pdf" "$MP/cert.pem" "$MP/key.pem"
		q "$J/mp-$lb-$b-other" dump "$lb" "$MP/$b.pdf" "$MP/other-cert.pem" "$MP/other-key.pem"
	done
done
jrun
for b in base base-nometa oaep cms-cipher-camellia; do
	for lb in pdfbox itext; do
		jopened "malformed/pubsec/$b.pdf: $lb opens it with key.pem" "$J/mp-$lb-$b"
		check_eq "$(jtext "$J/mp-$lb-$b")" "1	Encrypted to a certificate" \
			"malformed/pubsec/$b.pdf: $lb reads its text"
		jrefused "malformed/pubsec/$b.pdf: $lb refuses other-key.pem" "$J/mp-$lb-$b-other"
	done
done
while read -r name lib method meta src rs; do
	if [ "$(jrc "$J/enc-$name")" = 0 ] && [ -s "$C/$name.pdf" ]; then
		ok "corpus: $lib writes $name"
	else
		fail "corpus: $lib writes $name" "$(head -c 600 "$J/enc-$name.err")"
	fi
done <<<"$CORPUS"

# ---- part 1: the corpus opens in both readers with each key and no other ----
while read -r name lib method meta src rs; do
	f=$C/$name.pdf
	first=${rs%%=*}
	for r in $rs; do
		n=${r%=*}
		qdump "$J/c-pdfbox-$name-$n" pdfbox "$f" "$n"
		qdump "$J/c-itext-$name-$n" itext "$f" "$n"
	done
	for lb in pdfbox itext; do
		qdump "$J/c-$lb-$name-dave" "$lb" "$f" dave
		qdump "$J/c-$lb-$name-wrongkey" "$lb" "$f" "$first/dave"
	done
	# the checker itself: a damaged envelope is not "opened"
	python3 - "$f" "$T/$name-damaged.pdf" <<'PY'
import re, sys
d = bytearray(open(sys.argv[1], "rb").read())
# the enveloped key of the first RecipientInfo: flip bytes in its middle
m = re.search(rb"/Recipients\s*\[\s*[(<]", d)
i = m.end() + 300
for k in range(i, i + 16):
    if d[k] not in b"()\\<>":
        d[k] ^= 0x20 if chr(d[k]).isalnum() and d[k] < 0x80 else 0
open(sys.argv[2], "wb").write(d)
PY
	qdump "$J/c-pdfbox-$name-damaged" pdfbox "$T/$name-damaged.pdf" "$first"
done <<<"$CORPUS"
jrun

while read -r name lib method meta src rs; do
	sub=adbe.pkcs7.s5
	cfm=AESV2
	case $method in
	rc4-128) [ $lib = pdfbox ] && sub=adbe.pkcs7.s4 && cfm=-
		[ $lib = itext ] && sub=adbe.pkcs7.s4 && cfm=- ;;
	aes-256) cfm=AESV3 ;;
	esac
	em=true
	[ $meta = nometa ] && em=false
	nr=$(echo $rs | wc -w)
	i=0
	for r in $rs; do
		n=${r%=*}
		v=P_${r#*=}
		o=$J/c-pdfbox-$name-$n
		jopened "$name: PDFBox opens it with $n's key" "$o"
		check_eq "$(jv "$o" filter) $(jv "$o" subfilter) $(jv "$o" cfm)" "Adobe.PubSec $sub $cfm" \
			"$name: PDFBox with $n: handler, sub-filter and method as made"
		check_eq "$(jv "$o" encrypt_metadata)" "$em" "$name: PDFBox with $n: EncryptMetadata $em"
		check_eq "$(jv "$o" envelopes)/$(jv "$o" recipient_infos)/$(jv "$o" recipient_index)" \
			"$nr/$nr/$i" "$name: PDFBox with $n: envelopes/RecipientInfos/index"
		p=$(jv "$o" permissions)
		check_eq "$(lowbits "${p:-0}")" "$(lowbits "${!v}")" \
			"$name: PDFBox with $n: the permissions meant for $n (${r#*=})"
		check_eq "$(jtext "$o")" "$(jtext "$J/src-pdfbox-$src")" "$name: PDFBox with $n: every page's text"
		o=$J/c-itext-$name-$n
		jopened "$name: iText opens it with $n's key" "$o"
		check_eq "$(jv "$o" encrypt_metadata)" "$em" "$name: iText with $n: metadata encrypted: $em"
		check_eq "$(jtext "$o")" "$(jtext "$J/src-itext-$src")" "$name: iText with $n: every page's text"
		i=$((i + 1))
	done
	for lb in pdfbox itext; do
		jrefused "$name: $lb refuses dave's key (not a recipient)" "$J/c-$lb-$name-dave"
		jrefused "$name: $lb refuses ${rs%%=*}'s certificate with dave's key" "$J/c-$lb-$name-wrongkey"
	done
	rc=$(jrc "$J/c-pdfbox-$name-damaged")
	check_true test "$rc" != 0 "$name: the checker does not open a damaged envelope (exit $rc)"
	for c in $(awk -F'\t' '$1 == "cipher" { print $3 }' "$J/c-pdfbox-$name-${rs%%=*}"); do
		check_eq "$c" 1.2.840.113549.3.2 "$name: the producer's envelope cipher is RC2-CBC"
	done
done <<<"$CORPUS"

# ---- part 2: pdfstamp -----------------------------------------------------------
# expected values for info, from PDFBox's view of the file
jfield() {
	jget "$1" "(d.get('encryption') or {}).get('$2', d.get('$2', '<absent: $2>'))"
}
W=$T/w
mkdir -p "$W"
NOTE="pubsec stamp"
while read -r name lib method meta src rs; do
	f=$C/$name.pdf
	[ -s "$f" ] || continue
	before=$(sha256sum <"$f")
	recips=()
	for r in $rs; do recips+=("${r%=*}"); done
	nr=${#recips[@]}
	# info, verify and audit with each recipient's key
	i=0
	for r in $rs; do
		n=${r%=*}
		v=P_${r#*=}
		kopts "$n"
		run "$PDFSTAMP" info --json "${KO[@]}" "$f"
		check_status 0 "$name: info with $n's key"
		cp "$T/out" "$T/info.json"
		o=$J/c-pdfbox-$name-$n
		check_eq "$(jfield "$T/info.json" filter)" '"Adobe.PubSec"' "$name: info with $n: the handler (filter)"
		check_eq "$(jfield "$T/info.json" subfilter)" "\"$(jv "$o" subfilter)\"" \
			"$name: info with $n: subfilter as PDFBox reads it"
		check_eq "$(jfield "$T/info.json" recipients)/$(jfield "$T/info.json" envelopes)" \
			"$(jv "$o" recipient_infos)/$(jv "$o" envelopes)" "$name: info with $n: recipients/envelopes"
		check_eq "$(jfield "$T/info.json" recipient_index)" "$i" "$name: info with $n: recipient_index"
		check_grep "CN ?= ?$n\b" <(jfield "$T/info.json" recipient) "$name: info with $n: recipient names $n"
		pp=$(jfield "$T/info.json" p)
		case $pp in -* | [0-9]*) ;; *) pp=0 ;; esac
		check_eq "$(lowbits "$pp")" "$(lowbits "${!v}")" "$name: info with $n: $n's permissions (p)"
		run "$PDFSTAMP" verify "${KO[@]}" "$f"
		check_status 0 "$name: verify with $n's key"
		run "$PDFSTAMP" audit "${KO[@]}" "$f"
		check_status 0 "$name: audit with $n's key"
		i=$((i + 1))
	done
	# refusals: exit 3, nothing written
	run "$PDFSTAMP" info "$f"
	check_status 3 "$name: info without a key"
	check_grep 'encrypted to certificates' "$T/err" "$name: the message says the file is encrypted to certificates"
	check_grep '--key' "$T/err" "$name: the message names --key"
	kopts dave
	run "$PDFSTAMP" info "${KO[@]}" "$f"
	check_status 3 "$name: info with dave's key (not a recipient)"
	check_grep 'dave' "$T/err" "$name: the refusal names the certificate that was tried (dave)"
	rm -f "$W/x.pdf"
	run "$PDFSTAMP" stamp -o "$W/x.pdf" "${KO[@]}" "$f"
	check_status 3 "$name: stamp with dave's key"
	check_true test ! -e "$W/x.pdf" "$name: the refused stamp wrote nothing"
	run "$PDFSTAMP" info --key "$K/dave.key" --cert "$K/${recips[0]}.pem" "$f"
	check_status 3 "$name: info with ${recips[0]}'s certificate and dave's key"

	# key material that cannot serve: a wrong key password, a missing key
	# file, a PKCS#12 file with a wrong password
	printf 'not the key password\n' >"$T/badkey.pw"
	case " ${recips[*]} " in
	*" carol "*)
		run "$PDFSTAMP" info --key "$K/carol.enc.pem" --key-password-file "$T/badkey.pw" \
			--cert "$K/carol.pem" "$f"
		check_status 3 "$name: info with carol's key and a wrong key password"
		run "$PDFSTAMP" info --key "$K/no-such.key" --cert "$K/carol.pem" "$f"
		check_status 2 "$name: info with a key file that does not exist"
		;;
	esac
	case " ${recips[*]} " in
	*" alice "*)
		run "$PDFSTAMP" info --p12 "$K/alice.p12" --key-password-file "$T/badkey.pw" "$f"
		check_status 3 "$name: info with alice's PKCS#12 file and a wrong password"
		;;
	esac

	# stamp: the first recipient allowed to annotate stamps, another reads
	st=
	nost=
	for r in $rs; do
		case ${r#*=} in
		all) [ -z "$st" ] && st=${r%=*} ;;
		*) [ -z "$nost" ] && nost=${r%=*} ;;
		esac
	done
	rd=$st
	for x in "${recips[@]}"; do [ "$x" != "$st" ] && rd=$x && break; done
	kopts "$st"
	out=$W/$name-stamped.pdf
	run "$PDFSTAMP" stamp --text "$NOTE $name" -o "$out" "${KO[@]}" "$f"
	check_status 0 "$name: stamp with $st's key"
	if [ "$RC" = 0 ]; then
		cmp_prefix "$f" "$out" "$name: stamp"
		qdump "$J/s-pdfbox-$name" pdfbox "$out" "$rd" render
		qdump "$J/s-itext-$name" itext "$out" "$rd"
	fi
	if [ -n "$nost" ]; then
		kopts "$nost"
		rm -f "$W/x.pdf"
		run "$PDFSTAMP" stamp --text "$NOTE" -o "$W/x.pdf" "${KO[@]}" "$f"
		check_status 5 "$name: stamp with $nost's key (annotations not permitted)"
		check_true test ! -e "$W/x.pdf" "$name: the refused stamp wrote nothing"
	fi
	qdump "$J/o-pdfbox-$name" pdfbox "$f" "$rd" render

	# meta: Title and XMP, read back with another recipient's key
	kopts "$st"
	mout=$W/$name-meta.pdf
	run "$PDFSTAMP" meta --set "Title=Pubsec title $name" --xmp -o "$mout" "${KO[@]}" "$f"
	check_status 0 "$name: meta with $st's key"
	if [ "$RC" = 0 ]; then
		cmp_prefix "$f" "$mout" "$name: meta"
		qdump "$J/m-pdfbox-$name" pdfbox "$mout" "$rd"
		qdump "$J/m-itext-$name" itext "$mout" "$rd"
		tail -c +$(($(size_of "$f") + 1)) "$mout" >"$T/appended"
		if [ "$meta" = nometa ]; then
			check_grep 'xmpmeta' "$T/appended" "$name: the new XMP stream is in clear (EncryptMetadata false)"
		else
			check_no_grep 'xmpmeta' "$T/appended" "$name: the new XMP stream is encrypted"
			check_no_grep "Pubsec title" "$T/appended" "$name: the new title is encrypted"
		fi
	fi

	[ "$(sha256sum <"$f")" = "$before" ] || fail "$name: the input was modified"
done <<<"$CORPUS"
jrun

while read -r name lib method meta src rs; do
	[ -s "$C/$name.pdf" ] || continue
	o=$J/s-pdfbox-$name
	if [ -f "$o.rc" ]; then
		jopened "$name: PDFBox opens the stamped file with another recipient's key" "$o"
		check_grep "^annot	1	Stamp	[^	]*	$NOTE $name\$" "$o" \
			"$name: PDFBox (another key) decrypts the stamp's /Contents"
		check_grep "^ap	1	[^	]*	yes" "$o" "$name: PDFBox (another key) decodes the stamp's appearance"
		check_ne "$(awk -F'\t' '$1 == "render" && $2 == 1 { print $3 }' "$o")" \
			"$(awk -F'\t' '$1 == "render" && $2 == 1 { print $3 }' "$J/o-pdfbox-$name")" \
			"$name: PDFBox renders the stamped page 1 otherwise than the input's"
		check_eq "$(jtext "$o")" "$(jtext "$J/o-pdfbox-$name")" "$name: the page text is unchanged"
		o=$J/s-itext-$name
		jopened "$name: iText opens the stamped file with another recipient's key" "$o"
		check_grep "^annot	1	Stamp	[^	]*	$NOTE $name\$" "$o" \
			"$name: iText (another key) decrypts the stamp's /Contents"
	fi
	o=$J/m-pdfbox-$name
	if [ -f "$o.rc" ]; then
		jopened "$name: PDFBox opens the meta output with another recipient's key" "$o"
		check_grep "^info	Title	Pubsec title $name\$" "$o" "$name: PDFBox (another key) reads the new Title"
		check_grep "^xmp	[0-9]+	.*(xpacket|xmpmeta)" "$o" "$name: PDFBox (another key) reads the new XMP"
		o=$J/m-itext-$name
		jopened "$name: iText opens the meta output with another recipient's key" "$o"
		check_grep "^info	Title	Pubsec title $name\$" "$o" "$name: iText (another key) reads the new Title"
	fi
done <<<"$CORPUS"

# ---- rotate and encrypt -------------------------------------------------------
ROT="pdfbox-rc4-1 alice plain-2page
pdfbox-aes128-3 alice-p12 plain-3page
itext-aes256-3-nometa carol plain-3page
itext-rc4-3 carol plain-3page"
while read -r name who src; do
	f=$C/$name.pdf
	kopts "$who"
	out=$W/$name-rot.pdf
	run "$PDFSTAMP" rotate --recipient "$K/erin.pem" --recipient-permissions print \
		--recipient "$K/frank.pem" -o "$out" "${KO[@]}" "$f"
	check_status 0 "$name: rotate --recipient erin (print) --recipient frank, as $who"
	if [ "$RC" = 0 ]; then
		for n in erin frank alice bob; do
			for lb in pdfbox itext; do
				qdump "$J/r-$lb-$name-$n" "$lb" "$out" "$n"
			done
		done
		kopts frank
		run "$PDFSTAMP" info --json "${KO[@]}" "$out"
		check_status 0 "$name: pdfstamp info of the rotated file with frank's key"
		kopts alice
		run "$PDFSTAMP" info "${KO[@]}" "$out"
		check_status 3 "$name: pdfstamp info of the rotated file with alice's key (no longer a recipient)"
	fi
	kopts "$who"
	out=$W/$name-pw.pdf
	run "$PDFSTAMP" rotate --to-password --new-user-password-file "$K/new-u.pw" \
		--new-owner-password-file "$K/new-o.pw" -o "$out" "${KO[@]}" "$f"
	check_status 0 "$name: rotate --to-password, as $who"
	if [ "$RC" = 0 ]; then
		qcheck "$out" "$K/new-u.pw" "$name: rotate --to-password"
		check_grep '^R = 6$' <(showenc "$out" "$K/new-u.pw") "$name: the password file is R6"
		opens "$out" "$K/new-u.pw" user "$name: the new user password opens it"
		pdftotext -upw "new user" "$out" "$T/pw.txt" 2>/dev/null
		pdftotext "$S/$src.pdf" "$T/src.txt"
		check_true cmp -s "$T/pw.txt" "$T/src.txt" "$name: rotate --to-password keeps every page's text"
	fi
done <<<"$ROT"

# a recipient without every permission is not the owner: rotate refuses
# (exit 5, as for a user password), nothing written
kopts bob
rm -f "$W/x.pdf"
run "$PDFSTAMP" rotate --recipient "$K/erin.pem" -o "$W/x.pdf" "${KO[@]}" "$C/pdfbox-aes128-3.pdf"
check_status 5 "pdfbox-aes128-3: rotate as bob (print only) is refused"
check_true test ! -e "$W/x.pdf" "pdfbox-aes128-3: the refused rotate wrote nothing"

# a plaintext file encrypted to a recipient; a password file rotated to one
out=$W/encrypt-recipient.pdf
run "$PDFSTAMP" encrypt --recipient "$K/alice.pem" -o "$out" "$S/plain-2page.pdf"
check_status 0 "encrypt --recipient alice of a plaintext file"
if [ "$RC" = 0 ]; then
	qdump "$J/e-alice" pdfbox "$out" alice
	qdump "$J/e-dave" pdfbox "$out" dave
fi
out=$W/r6-recipient.pdf
run "$PDFSTAMP" rotate --password-file "$S/owner.pw" --recipient "$K/erin.pem" -o "$out" "$S/r6-table.pdf"
check_status 0 "rotate --recipient erin of a password (R6) file"
if [ "$RC" = 0 ]; then
	qdump "$J/e6-erin" pdfbox "$out" erin
	qdump "$J/e6-alice" pdfbox "$out" alice
	qpdf --password-file="$S/owner.pw" --decrypt "$S/r6-table.pdf" "$T/r6-plain.pdf" 2>/dev/null
	qdump "$J/e6-src" pdfbox "$T/r6-plain.pdf" alice
fi
jrun

while read -r name who src; do
	[ -f "$J/r-pdfbox-$name-erin.rc" ] || continue
	for n in erin frank; do
		for lb in pdfbox itext; do
			o=$J/r-$lb-$name-$n
			jopened "$name rotated: $lb opens it with $n's key" "$o"
			check_eq "$(jtext "$o")" "$(jtext "$J/src-$lb-$src")" "$name rotated: $lb with $n: every page's text kept"
		done
		o=$J/r-pdfbox-$name-$n
		check_eq "$(jv "$o" subfilter) $(jv "$o" cfm)" "adbe.pkcs7.s5 AESV3" \
			"$name rotated: /adbe.pkcs7.s5 with AESV3 (PDFBox with $n)"
		check_eq "$(awk -F'\t' '$1 == "cipher" { print $3 }' "$o" | sort -u)" 2.16.840.1.101.3.4.1.42 \
			"$name rotated: every envelope is AES-256-CBC"
	done
	# --recipient-permissions print: print, and bit 10 (extract for
	# accessibility), which pdfstamp_parse_permissions always sets (pdfstamp(1))
	check_eq "$(lowbits "$(jv "$J/r-pdfbox-$name-erin" permissions)")" "$(lowbits $((P_print | 512)))" \
		"$name rotated: erin may only print (--recipient-permissions print)"
	check_eq "$(lowbits "$(jv "$J/r-pdfbox-$name-frank" permissions)")" "$(lowbits $P_all)" \
		"$name rotated: frank has every permission (the default: all, from the input's owner)"
	for n in alice bob; do
		for lb in pdfbox itext; do
			jrefused "$name rotated: $lb refuses $n's key (an old recipient)" "$J/r-$lb-$name-$n"
		done
	done
done <<<"$ROT"
if [ -f "$J/e-alice.rc" ]; then
	jopened "encrypt --recipient: PDFBox opens it with alice's key" "$J/e-alice"
	check_eq "$(jtext "$J/e-alice")" "$(jtext "$J/src-pdfbox-plain-2page")" "encrypt --recipient: text kept"
	jrefused "encrypt --recipient: PDFBox refuses dave's key" "$J/e-dave"
fi
if [ -f "$J/e6-erin.rc" ]; then
	jopened "R6 to --recipient: PDFBox opens it with erin's key" "$J/e6-erin"
	check_eq "$(jtext "$J/e6-erin")" "$(jtext "$J/e6-src")" "R6 to --recipient: text kept"
	jrefused "R6 to --recipient: PDFBox refuses alice's key" "$J/e6-alice"
fi

finish
