#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/keyopts.sh - the key options of files encrypted to certificates
# (issue 33): --key, --cert, --p12, --key-password-file/-fd/-env, on every
# command that opens files (keyopt.c, driver.c note 14, pdfstamp(1)
# CERTIFICATE-ENCRYPTED FILES).
#
# A PKI made here with openssl: a CA, recipients A and B (RSA 2048) and C
# (a stranger); A's key as PKCS#8 PEM, encrypted PKCS#8 PEM and DER,
# PKCS#1 PEM; PKCS#12 files of A by `openssl pkcs12 -export` with OpenSSL
# 3's defaults and with -legacy.  A sample is encrypted to A and B
# (`pdfstamp encrypt --recipient`).  Then:
#  (a) without key options: exit 3 and the message that names them; with
#      each form of A's key (and B's) every reading command opens it, info
#      naming the recipient that opened it;
#  (b) the key password from a file, a descriptor and the environment, the
#      prompt never taken without a terminal; wrong ones exit 3 without
#      echoing them; a stranger's key, or A's key with B's certificate,
#      exit 3;
#  (c) the combinations refused before anything is read (exit 2), a key
#      file that is missing (2) or over 1 MB (4), a key password on argv;
#  (d) writing commands: stamp with A's PKCS#12 file, and what it wrote read
#      back by an independent reader: openssl opens B's envelope in the
#      /Recipients (openssl cms -decrypt), the file key is derived from it
#      (ISO 32000-2 7.6.5.3: SHA-256 of seed and /Recipients), and the new
#      annotation's /T decrypted with openssl enc is the --author given;
#      dss with its own --cert and --key-cert; rotate --to-password with
#      the key, the output checked by qpdf with the new password; a key for
#      a plaintext file: writing commands refuse (2), info warns;
#  (e) several files with --jobs and one key password read once;
#  (f) on a terminal (a pty made by Python): "Key password:" asked once for
#      an encrypted key or a PKCS#12 file, for every file of the run, never
#      for a key in clear; a wrong answer exits 3.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need openssl
need qpdf

S=$TOP_SRCDIR/samples
cd "$T" || exit 99

# ---- the PKI ----------------------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -subj "/CN=keyopts CA" \
	-days 3650 2>/dev/null
for r in A B C; do
	openssl req -newkey rsa:2048 -nodes -keyout "$r.key" -out "$r.csr" \
		-subj "/CN=Recipient $r/O=keyopts" 2>/dev/null
	openssl x509 -req -in "$r.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$r.crt" \
		-days 3650 2>/dev/null
done
printf 'key pass A\n' >kpw
printf 'p12 pass A\n' >ppw
printf 'wrong pass\n' >wpw
openssl pkcs8 -topk8 -in A.key -passout file:kpw -v2 aes-256-cbc -out A-enc.pem
openssl pkcs8 -topk8 -in A.key -passout file:kpw -v2 aes-256-cbc -outform DER -out A-enc.der
openssl rsa -in A.key -traditional -out A-pkcs1.pem 2>/dev/null
openssl pkcs12 -export -inkey A.key -in A.crt -certfile ca.crt -out A.p12 -passout file:ppw
openssl pkcs12 -export -legacy -inkey A.key -in A.crt -out A-legacy.p12 -passout file:ppw
check_true grep -q "BEGIN ENCRYPTED PRIVATE KEY" A-enc.pem "openssl made the PKI and key forms"
check_true grep -q "BEGIN RSA PRIVATE KEY" A-pkcs1.pem "A's key as PKCS#1 PEM"

run "$PDFSTAMP" encrypt --recipient A.crt --recipient B.crt -o pub.pdf "$S/plain-2page.pdf"
check_status 0 "encrypt to A and B"
cp pub.pdf pub.orig

MSG="the file is encrypted to certificates; give --key and --cert, or --p12"

# ---- (a) opening --------------------------------------------------------------------
for c in info verify audit stamps; do
	run "$PDFSTAMP" "$c" pub.pdf </dev/null
	check_status 3 "$c without key options"
	check_grep "$MSG" "$T/err" "$c without key options: the message names them"
done
run "$PDFSTAMP" info --json --password-file kpw pub.pdf
check_status 3 "a password does not open a file encrypted to certificates"
check_eq "$(jget "$T/out" '[d["exit"], d["error"]]')" "[3, \"$MSG\"]" \
	"--json failure line: exit 3 and the message"

# info: who opened the file
info_as() { # info_as DESC RECIPIENT-INDEX CN ARGS...
	local desc=$1 idx=$2 cn=$3
	shift 3
	run "$PDFSTAMP" info --json "$@" pub.pdf
	check_status 0 "info with $desc"
	check_eq "$(jget "$T/out" '[d["encryption"]["filter"], d["encryption"]["recipient_index"],
	                           d["authenticated_as"]]')" \
		"[\"Adobe.PubSec\", $idx, \"recipient\"]" "info with $desc: opened as recipient $idx"
	check_eq "$(jget "$T/out" 'd["encryption"]["recipient"]')" "\"CN=$cn, O=keyopts\"" \
		"info with $desc: names CN=$cn"
}
info_as "A's PKCS#8 PEM key" 0 "Recipient A" --key A.key --cert A.crt
info_as "B's key" 1 "Recipient B" --key B.key --cert B.crt
info_as "A's PKCS#1 PEM key" 0 "Recipient A" --key A-pkcs1.pem --cert A.crt
info_as "A's encrypted PEM key (--key-password-file)" 0 "Recipient A" --key A-enc.pem \
	--cert A.crt --key-password-file kpw
info_as "A's encrypted DER key (--key-password-fd)" 0 "Recipient A" --key A-enc.der \
	--cert A.crt --key-password-fd 3 3<kpw
info_as "A's PKCS#12 file, -legacy (--key-password-file -)" 0 "Recipient A" \
	--p12 A-legacy.p12 --key-password-file - <ppw
info_as "A's key, the reading commands' stdin not a terminal" 0 "Recipient A" \
	--key A.key --cert A.crt </dev/null
export KPW_A="p12 pass A"
info_as "A's PKCS#12 file, OpenSSL 3 defaults (--key-password-env)" 0 "Recipient A" \
	--p12 A.p12 --key-password-env KPW_A
for c in verify audit stamps; do
	run "$PDFSTAMP" "$c" --p12 A.p12 --key-password-file ppw pub.pdf
	check_status 0 "$c with A's PKCS#12 file"
done

# ---- (b) wrong keys and passwords ------------------------------------------------------
run "$PDFSTAMP" info --key A-enc.pem --cert A.crt pub.pdf </dev/null
check_status 3 "an encrypted key without a password, stdin not a terminal: no prompt"
run "$PDFSTAMP" info --key A-enc.pem --cert A.crt --key-password-file wpw pub.pdf
check_status 3 "an encrypted key with a wrong password"
run "$PDFSTAMP" info --p12 A.p12 --key-password-file wpw pub.pdf
check_status 3 "a PKCS#12 file with a wrong password"
check_grep "PKCS#12" "$T/err" "a wrong PKCS#12 password: the message says so"
check_no_grep "wrong pass|p12 pass" "$T/err" "a wrong PKCS#12 password: no password echoed"
# OpenSSL's traditional encrypted PEM: mbedTLS tells a wrong password only
# by a guess on the decrypted bytes, so every wrong password must still be 3
openssl rsa -in A.key -traditional -aes128 -passout file:kpw -out A-trad.pem 2>/dev/null
check_true grep -q "Proc-Type: 4,ENCRYPTED" A-trad.pem "A's key as traditional encrypted PEM"
run "$PDFSTAMP" info --key A-trad.pem --cert A.crt --key-password-file kpw pub.pdf
check_status 0 "a traditional encrypted PEM key with its password"
bad=
for i in $(seq 1 60); do
	printf 'wrong %s\n' "$i" >wpw$i
	"$PDFSTAMP" info --key A-trad.pem --cert A.crt --key-password-file wpw$i pub.pdf \
		>/dev/null 2>&1
	st=$?
	[ "$st" = 3 ] || bad="$bad $i:$st"
done
check_eq "$bad" "" "60 wrong passwords of a traditional encrypted PEM key: each exit 3"
# an encrypted key of a type mbedTLS does not take, with the right password:
# unsupported (4), not a wrong password
openssl genpkey -algorithm ed25519 -aes256 -pass file:kpw -out ed.pem 2>/dev/null
run "$PDFSTAMP" info --key ed.pem --cert A.crt --key-password-file kpw pub.pdf
check_status 4 "an encrypted Ed25519 key with its password: unsupported, not a wrong password"
run "$PDFSTAMP" info --key C.key --cert C.crt pub.pdf
check_status 3 "a stranger's key (no envelope for C)"
run "$PDFSTAMP" info --key A.key --cert B.crt pub.pdf
check_status 3 "A's key with B's certificate"
run "$PDFSTAMP" info --key-password-env UNSET_KEY_PW_VAR --key A-enc.pem --cert A.crt pub.pdf
check_status 2 "--key-password-env naming a variable that is not set"
check_grep "^pdfstamp: --key-password-env: environment variable UNSET_KEY_PW_VAR is not set" \
	"$T/err" "the unset variable's message names --key-password-env"

# ---- (c) the command line ---------------------------------------------------------------
usage() { # usage DESC PATTERN ARGS...
	local desc=$1 pat=$2
	shift 2
	run "$PDFSTAMP" "$@"
	check_status 2 "$desc"
	check_grep "$pat" "$T/err" "$desc: the message"
}
usage "--p12 with --key" "--p12 holds the key" info --p12 A.p12 --key A.key pub.pdf
usage "--p12 with --cert" "--p12 holds the key" info --cert A.crt --p12 A.p12 pub.pdf
usage "--key without --cert" "--key needs --cert too" info --key A.key pub.pdf
usage "--cert without --key" "--cert needs --key too" stamp -i --cert A.crt pub.pdf
usage "a key password without a key" "--key-password-file is the password of a key" \
	info --key-password-file kpw pub.pdf
usage "--key twice" "--key given twice" info --key A.key --key B.key --cert A.crt pub.pdf
usage "a missing key file" "cannot open" info --key missing.key --cert A.crt pub.pdf
usage "two password options on stdin" "read standard input" \
	info --password-file - --p12 A.p12 --key-password-file - pub.pdf
usage "--files-from - and the key password on stdin" "both read standard input" \
	info --files-from - --p12 A.p12 --key-password-fd 0 pub.pdf
usage "a key password on the command line" "--key-password-file FILE" \
	info --p12 A.p12 --key-password=secret pub.pdf
check_no_grep "secret" "$T/err" "the key password given on argv is not echoed"
usage "--key-pass" "--key-password-file FILE" info --p12 A.p12 --key-pass x pub.pdf
head -c 1048577 /dev/zero >big.key
run "$PDFSTAMP" info --key big.key --cert A.crt pub.pdf
check_status 4 "a key file over 1 MB"
check_eq "$(cmp pub.pdf pub.orig && echo same)" "same" "no refusal changed the file"

# ---- (d) writing commands ------------------------------------------------------------------
run "$PDFSTAMP" stamp --p12 A.p12 --key-password-file ppw --author "Key Canary 42" \
	-o stamped.pdf pub.pdf
check_status 0 "stamp with A's PKCS#12 file"
run "$PDFSTAMP" verify --key B.key --cert B.crt stamped.pdf
check_status 0 "the stamped file verifies with B's key"
# The independent reader: B's envelope opened by openssl, the file key
# derived, the new /T decrypted by openssl.
cat >reader.py <<'PY'
import hashlib, re, subprocess, sys
path, base, key, crt = sys.argv[1:5]
d = open(path, "rb").read()
n = len(open(base, "rb").read())
enc = d[d.rfind(b"/Recipients"):]
recips = [bytes.fromhex(h.decode()) for h in
          re.findall(rb"<([0-9A-Fa-f\s]+)>", enc[:enc.find(b"]")])]
seed = None
for r in recips:
    open("env.der", "wb").write(r)
    p = subprocess.run(["openssl", "cms", "-decrypt", "-inform", "DER", "-in", "env.der",
                        "-recip", crt, "-inkey", key, "-binary"], capture_output=True)
    if p.returncode == 0 and len(p.stdout) == 24:
        seed = p.stdout[:20]
if seed is None:
    sys.exit("no envelope opened")
meta = b"/EncryptMetadata false" in enc[:4000]
fk = hashlib.sha256(seed + b"".join(recips) + (b"\xff" * 4 if meta else b"")).digest()
m = re.search(rb"/T <([0-9A-Fa-f]+)>", d[n:])
ct = bytes.fromhex(m.group(1).decode())
p = subprocess.run(["openssl", "enc", "-d", "-aes-256-cbc", "-K", fk.hex(), "-iv",
                    ct[:16].hex()], input=ct[16:], capture_output=True, check=True)
print(p.stdout.decode("utf-8", "replace"))
PY
run python3 reader.py stamped.pdf pub.pdf B.key B.crt
check_status 0 "openssl opens B's envelope of the stamped file"
check_eq "$(cat "$T/out")" "Key Canary 42" \
	"the new annotation's /T, decrypted with the key from B's envelope, is the --author"

run "$PDFSTAMP" dss --cert ca.crt --key A.key -o dss.pdf pub.pdf
check_status 2 "dss: --key without --key-cert (its --cert is the DSS's)"
check_grep "--key needs --key-cert too" "$T/err" "dss: the message names --key-cert"
run "$PDFSTAMP" dss --cert ca.crt -o dss.pdf pub.pdf </dev/null
check_status 3 "dss without key options"
check_grep "give --key and --key-cert, or --p12" "$T/err" "dss: the message names --key-cert"
run "$PDFSTAMP" dss --json --cert ca.crt --key A.key --key-cert A.crt -o dss.pdf pub.pdf
check_status 0 "dss --cert with --key and --key-cert"
check_eq "$(jget "$T/out" 'len(d["objects"]) >= 2')" "true" "dss added its objects"

printf 'new user\n' >nu
printf 'new owner\n' >no
run "$PDFSTAMP" rotate --to-password --key A-enc.der --cert A.crt --key-password-file kpw \
	--new-user-password-file nu --new-owner-password-file no -o rotated.pdf pub.pdf
check_status 0 "rotate --to-password with A's encrypted DER key"
run qpdf --password="new owner" --check rotated.pdf
check_status 0 "qpdf checks the rotated file with the new owner password"

run "$PDFSTAMP" stamp --key A.key --cert A.crt -o plain-out.pdf "$S/plain-2page.pdf"
check_status 2 "stamp with a key, for a plaintext file: refused"
check_true test ! -e plain-out.pdf "nothing written for the plaintext file"
run "$PDFSTAMP" info --key A.key --cert A.crt "$S/plain-2page.pdf"
check_status 0 "info with a key, for a plaintext file"
check_grep "warning: a key was given, but the file is not encrypted" "$T/err" \
	"info warns that the key was not needed"
run "$PDFSTAMP" info --key A.key --cert A.crt --password-file "$S/user.pw" "$S/r6-table.pdf"
check_status 0 "a file with a password opens with it, key options or not"

# ---- (e) many files, one key password ----------------------------------------------------------
for i in 1 2 3 4; do cp pub.orig "m$i.pdf"; done
run "$PDFSTAMP" stamp -i --jobs 4 --json --key A-enc.pem --cert A.crt --key-password-fd 3 \
	m1.pdf m2.pdf m3.pdf m4.pdf 3<kpw
check_status 0 "stamp -i --jobs 4 of four files, the key password read once from a descriptor"
check_eq "$(grep -c '"ok":true' "$T/out")" "4" "four files stamped"

# ---- (f) the prompt ------------------------------------------------------------------------
openssl pkcs8 -topk8 -in A.key -passout pass:tty-pass -v2 aes-256-cbc -out A-tty.pem
cat >onpty.py <<'PY'
import os, pty, select, signal, sys, time
answer, args = sys.argv[1].encode() + b"\n", sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(args[0], args)
out, sent, end = b"", False, time.time() + 30
while True:
    left = end - time.time()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        os.kill(pid, signal.SIGKILL)  # waits for a second answer, say
        break
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b:
        break
    out += b
    if b"password:" in out and not sent:
        os.write(fd, answer)
        sent = True
_, st = os.waitpid(pid, 0)
status = os.WEXITSTATUS(st) if os.WIFEXITED(st) else "killed"
print(status, out.count(b"Key password:"), out.count(b"Opened with:"))
PY
tty_case() { # tty_case DESC ANSWER "STATUS PROMPTS OPENED" ARGS...
	local desc=$1 answer=$2 want=$3
	shift 3
	run python3 onpty.py "$answer" "$PDFSTAMP" info "$@"
	check_eq "$(cat "$T/out")" "$want" "on a terminal: $desc (status, prompts, files opened)"
}
tty_case "an encrypted key" tty-pass "0 1 1" --key A-tty.pem --cert A.crt pub.pdf
tty_case "a PKCS#12 file, two files, one prompt" "p12 pass A" "0 1 2" --p12 A.p12 pub.pdf \
	stamped.pdf
tty_case "a key in clear: no prompt" x "0 0 1" --key A.key --cert A.crt pub.pdf
tty_case "a wrong answer" nope "3 1 0" --p12 A.p12 pub.pdf

finish
