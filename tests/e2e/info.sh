#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/info.sh - end-to-end tests of the CLI contract and `pdfstamp info`.
#
# Part 1 checks the command line itself (usage errors, help, the command
# table, that no option can carry a password, the man page).  Part 2 encrypts
# files with qpdf (and MuPDF) inside the run and checks that
# `pdfstamp info --json` agrees with what qpdf reports about the same file:
# qpdf --json (R, V, key bits, P, permissions, which password matched),
# the /Encrypt dictionary (EncryptMetadata), qpdf --show-npages, and the
# in-use entries of qpdf --show-xref; the revision chain and xref forms are
# read straight from the file's plaintext trailers by a small parser below.
# Then the error paths: wrong password (3), truncated or non-PDF input (4),
# missing file (1), and several files (worst status wins).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf

S=$TOP_SRCDIR/samples
PLAIN2=$S/plain-2page.pdf
PLAIN3=$S/plain-3page.pdf

# ---------------------------------------------------------------------------
# Helper: expectations from independent sources (qpdf, raw file bytes), and
# a comparison that prints OK/FAIL lines for the shell to count.
cat >"$T/h.py" <<'PY'
import json, os, re, subprocess, sys

NAMES = {3: "print", 4: "modify", 5: "copy", 6: "annotate", 9: "fill-forms",
         10: "extract", 11: "assemble", 12: "print-high"}
# qpdf --json capability for each of our names (same bit, see qpdf manual).
QPDF_CAP = {"print": "printlow", "modify": "modifyother", "copy": "extract",
            "annotate": "modifyannotations", "fill-forms": "modifyforms",
            "extract": "accessibility", "assemble": "modifyassembly",
            "print-high": "printhigh"}

def qpdf(args, pwfile):
    cmd = ["qpdf"] + (["--password-file=" + pwfile] if pwfile else []) + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (0, 3):  # 3 = succeeded with warnings
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                p.stderr.decode(errors="replace")))
    return p.stdout.decode("latin-1")

def chain(path):
    """Follows startxref and /Prev through the plaintext trailers."""
    data = open(path, "rb").read()
    m = list(re.finditer(rb"startxref\s+(\d+)", data))
    off = int(m[-1].group(1))
    kinds, seen, size = [], set(), None
    while off is not None and off not in seen and len(kinds) < 100:
        seen.add(off)
        rest = data[off:].lstrip(b" \t\r\n\f\0")
        if rest.startswith(b"xref"):
            t = rest.find(b"trailer")
            e = rest.find(b"startxref", t)
            d = rest[t:e if e > 0 else None]
            kinds.append("hybrid" if b"/XRefStm" in d else "table")
        else:
            d = rest[:rest.find(b"stream")]
            kinds.append("stream")
        if size is None:
            size = int(re.search(rb"/Size\s+(\d+)", d).group(1))
        p = re.search(rb"/Prev\s+(\d+)", d)
        off = int(p.group(1)) if p else None
    return kinds, size

def expect(path, pwfile):
    e = {"file_size": os.path.getsize(path)}
    enc = json.loads(qpdf(["--json", "--json-key=encrypt", path], pwfile))["encrypt"]
    e["encrypted"] = enc["encrypted"]
    if enc["encrypted"]:
        par, cap = enc["parameters"], enc["capabilities"]
        trailer = qpdf(["--show-object=trailer", path], pwfile)
        ref = re.search(r"/Encrypt (\d+) 0 R", trailer)
        # MuPDF writes the /Encrypt dictionary directly into the trailer.
        edict = qpdf(["--show-object=" + ref.group(1), path], pwfile) if ref else trailer
        p = par["P"]
        perms = {}
        for bit, name in NAMES.items():
            perms[name] = bool((p & 0xffffffff) >> (bit - 1) & 1)
            if perms[name] != bool(cap[QPDF_CAP[name]]):
                raise RuntimeError("qpdf capability %s disagrees with P bit %d"
                                   % (QPDF_CAP[name], bit))
        e["encryption"] = {
            "filter": re.search(r"/Filter /(\w+)", edict).group(1),
            "v": par["V"], "r": par["R"], "key_bits": par["bits"], "p": p,
            "method": {"AESv3": "AESV3"}.get(par["streammethod"], par["streammethod"]),
            "encrypt_metadata": "/EncryptMetadata false" not in edict,
            "perms_valid": True, "permissions": perms}
        e["authenticated_as"] = ("owner" if enc["ownerpasswordmatched"] else
                                 "user" if enc["userpasswordmatched"] else "none")
    else:
        e["encryption"] = None
        e["authenticated_as"] = "none"
    e["pages"] = int(qpdf(["--show-npages", path], pwfile))
    xref = qpdf(["--show-xref", path], pwfile)
    e["objects"] = len(re.findall(r"^\d+/\d+: (?:uncompressed|compressed);", xref, re.M))
    kinds, size = chain(path)
    e["revisions"], e["xref_kinds"], e["size"] = len(kinds), kinds, size
    e["last_xref"] = "stream" if kinds[0] == "stream" else "table"
    data = open(path, "rb").read()
    tail = data[data.rfind(b"%%EOF") + 5:]
    e["trailing_bytes"] = 0 if tail.strip(b"\r\n") == b"" else None
    return e

def compare(name, actual, exp, prefix=""):
    for k, v in exp.items():
        if v is None and k == "trailing_bytes":
            continue
        a = actual.get(k, "<missing>") if isinstance(actual, dict) else "<not an object>"
        if isinstance(v, dict) and isinstance(a, dict):
            compare(name, a, v, prefix + k + ".")
        elif a == v:
            print("OK\t%s: %s%s = %s" % (name, prefix, k, json.dumps(v)))
        else:
            print("FAIL\t%s: %s%s\tgot %s, expected %s"
                  % (name, prefix, k, json.dumps(a), json.dumps(v)))

cmd = sys.argv[1]
if cmd == "check":      # check NAME ACTUAL.json FILE PWFILE|""
    name, actual_path, path, pwfile = sys.argv[2:6]
    try:
        exp = expect(path, pwfile or None)
    except Exception as ex:
        print("FAIL\t%s: expectations from qpdf\t%s" % (name, ex))
        sys.exit(0)
    try:
        lines = open(actual_path, encoding="utf-8").read().splitlines()
        actual = json.loads(lines[0])
        if len(lines) != 1:
            print("FAIL\t%s: one JSON line per file\tgot %d lines" % (name, len(lines)))
    except Exception as ex:
        print("FAIL\t%s: JSON output parses\t%s" % (name, ex))
        sys.exit(0)
    compare(name, actual, exp)
    for k in ("stream_filter", "string_filter"):
        if exp["encrypted"]:
            v = actual.get("encryption", {}).get(k)
            print("%s\t%s: encryption.%s names a crypt filter\tgot %s"
                  % ("OK" if isinstance(v, str) and v else "FAIL", name, k, json.dumps(v)))
    # issue 13: every /CF entry with its method; AES-256 is never weak
    if exp["encrypted"]:
        e_ = actual.get("encryption", {})
        cf = e_.get("crypt_filters")
        ok_ = isinstance(cf, list) and any(isinstance(x, dict) and x.get("name") == e_.get("stream_filter")
                                           and x.get("method") == e_.get("method") for x in cf)
        print("%s\t%s: encryption.crypt_filters lists the stream filter and its method\tgot %s"
              % ("OK" if ok_ else "FAIL", name, json.dumps(cf)))
    w = actual.get("weak_encryption", "<missing>")
    print("%s\t%s: weak_encryption is null\tgot %s" % ("OK" if w is None else "FAIL", name, json.dumps(w)))
    br = actual.get("bytes_read")
    print("%s\t%s: bytes_read is a positive number\tgot %s"
          % ("OK" if isinstance(br, int) and br > 0 else "FAIL", name, json.dumps(br)))
elif cmd == "bigpdf":   # bigpdf OUT: nested page tree and a large stream
    out = sys.argv[2]
    objs = {}
    npages, nkids = 300, 3
    objs[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    first_mid, first_page = 3, 3 + nkids
    objs[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % (first_mid + i) for i in range(nkids)), npages)
    blob = os.urandom(3 * 1024 * 1024)
    img = first_page + 2 * npages
    per = npages // nkids
    for i in range(nkids):
        kids = [first_page + 2 * (i * per + j) for j in range(per)]
        objs[first_mid + i] = b"<< /Type /Pages /Parent 2 0 R /Kids [%s] /Count %d >>" % (
            b" ".join(b"%d 0 R" % k for k in kids), per)
        for j, k in enumerate(kids):
            body = b"q 64 0 0 64 100 100 cm /Im0 Do Q"
            objs[k] = (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 200 200] "
                       b"/Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>"
                       % (first_mid + i, img, k + 1))
            objs[k + 1] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(body), body)
    objs[img] = (b"<< /Type /XObject /Subtype /Image /Width 1024 /Height 1024 "
                 b"/ColorSpace /DeviceRGB /BitsPerComponent 8 /Length %d >>\nstream\n"
                 % len(blob)) + blob + b"\nendstream"
    size = img + 1
    pdf = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offs = {}
    for n in range(1, size):
        offs[n] = len(pdf)
        pdf += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
    x = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for n in range(1, size):
        pdf += b"%010d 00000 n \n" % offs[n]
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, x)
    open(out, "wb").write(pdf)
elif cmd == "replace":  # replace FILE OLD NEW: exactly one occurrence, same length
    path, old, new = sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
    data = open(path, "rb").read()
    assert len(old) == len(new) and data.count(old) == 1, "pattern not unique"
    open(path, "wb").write(data.replace(old, new))
PY

# check_info NAME FILE PWFILE|"": pdfstamp info --json against qpdf.
check_info() {
	local name=$1 f=$2 pw=$3 line status desc detail
	if [ -n "$pw" ]; then
		run "$PDFSTAMP" info --json --password-file "$pw" "$f"
	else
		run "$PDFSTAMP" info --json "$f" </dev/null
	fi
	check_status 0 "$name: pdfstamp info --json"
	cp "$T/out" "$T/$name.json"
	[ "$RC" = 0 ] || return 0
	while IFS= read -r line; do
		status=${line%%$'\t'*}
		desc=${line#*$'\t'}
		detail=
		case $desc in *$'\t'*) detail=${desc#*$'\t'}; desc=${desc%%$'\t'*} ;; esac
		if [ "$status" = OK ]; then
			ok "$desc"
		else
			fail "$desc" "$detail"
		fi
	done < <(python3 "$T/h.py" check "$name" "$T/$name.json" "$f" "$pw")
}

# ===========================================================================
# Part 1: the command line
# ===========================================================================

run "$PDFSTAMP" --help
check_status 0 "--help"
for c in info stamp meta rotate encrypt verify; do
	check_grep "^  $c " "$T/out" "--help lists command '$c'"
done
cp "$T/out" "$T/help.txt"

run "$PDFSTAMP" --version
check_status 0 "--version"
check_grep '^pdfstamp [0-9]+\.[0-9]+\.[0-9]+ .*AES engine: [a-z]' "$T/out" \
	"--version names the version and the AES engine"

run "$PDFSTAMP"
check_status 2 "no command"
check_grep '^pdfstamp: ' "$T/err" "no command: message on stderr"
run "$PDFSTAMP" frobnicate "$PLAIN2"
check_status 2 "unknown command"
check_grep "^pdfstamp: unknown command 'frobnicate'" "$T/err" "unknown command: message"
run "$PDFSTAMP" --frobnicate
check_status 2 "unknown global option"
run "$PDFSTAMP" info
check_status 2 "info without a file"
run "$PDFSTAMP" info --frobnicate "$PLAIN2"
check_status 2 "info with an unknown option"
run "$PDFSTAMP" info --password-file
check_status 2 "--password-file without its argument"
run "$PDFSTAMP" info --password-fd x3 "$PLAIN2"
check_status 2 "--password-fd with a non-number"
run "$PDFSTAMP" info --password-env 'A=B' "$PLAIN2"
check_status 2 "--password-env with a bad variable name"

# A password can never be given on the command line: every spelling that
# other tools accept is a usage error, and the value is not echoed back.
for opt in --password=hunter2 --user-password=hunter2 --owner-password=hunter2 \
	--upw=hunter2 --passwd=hunter2; do
	run "$PDFSTAMP" info "$opt" "$PLAIN2"
	check_status 2 "info $opt is rejected"
	check_no_grep hunter2 "$T/err" "info $opt: the value is not echoed"
done
for opt in -p -P -u -U -O; do
	run "$PDFSTAMP" info "$opt" hunter2 "$PLAIN2"
	check_status 2 "info $opt VALUE is rejected"
done
run "$PDFSTAMP" info --password hunter2 "$PLAIN2"
check_status 2 "info --password VALUE is rejected"

run "$PDFSTAMP" info --password-file "$S/user.pw" --password-env HOME "$PLAIN2"
check_status 2 "two password sources"
check_grep 'only one password source' "$T/err" "two password sources: message"
run "$PDFSTAMP" info --password-fd 0 --password-fd 0 "$PLAIN2"
check_status 2 "the same password option twice"

run "$PDFSTAMP" info --help
check_status 0 "info --help"
for o in --json --force --password-file --password-fd --password-env; do
	check_grep "$o" "$T/out" "info --help mentions $o"
done
check_no_grep '--password[= ]' "$T/out" "info --help offers no option taking a password value"
cp "$T/out" "$T/info-help.txt"

# rotate, encrypt and verify are implemented (tested in rotate.sh): --help
# works and says nothing of "not implemented"; rotate and encrypt refuse to
# guess the output mode (usage error), verify checks a plaintext file.
for c in rotate encrypt verify; do
	run "$PDFSTAMP" "$c" --help
	check_status 0 "$c --help"
	check_no_grep 'not implemented' "$T/out" "$c --help: implemented"
	run "$PDFSTAMP" "$c" "$PLAIN2"
	if [ "$c" = verify ]; then
		check_status 0 "verify of a plaintext file"
	else
		check_status 2 "$c without -o or --in-place"
		check_grep 'give -o OUT' "$T/err" "$c without -o or --in-place: message"
	fi
	check_no_grep 'not implemented' "$T/err" "$c: implemented"
done
# stamp and meta are implemented (tested in stamp.sh): --help works, and
# without -o or --in-place they refuse to guess (usage error).
for c in stamp meta; do
	run "$PDFSTAMP" "$c" --help
	check_status 0 "$c --help"
	check_no_grep 'not implemented' "$T/out" "$c --help: implemented"
	if [ "$c" = meta ]; then
		run "$PDFSTAMP" meta --set Title=x "$PLAIN2"
	else
		run "$PDFSTAMP" stamp "$PLAIN2"
	fi
	check_status 2 "$c without -o or --in-place"
	check_grep 'give -o OUT' "$T/err" "$c without -o or --in-place: message"
done

# The man page documents every command, the info options and each exit status.
MAN=$TOP_SRCDIR/man/pdfstamp.1
for c in info stamp meta rotate encrypt verify; do
	check_grep "^\\.Cm $c|^\\.Ss pdfstamp .*$c" "$MAN" "man page describes '$c'"
done
for o in json force password-file password-fd password-env; do
	check_grep "^\\.(It|Op) Fl \\\\-$o" "$MAN" "man page documents --$o"
done
for k in file file_size encrypted encryption filter key_bits stream_filter \
	string_filter method crypt_filters weak_encryption encrypt_metadata perms_valid permissions \
	authenticated_as revisions xref_kinds last_xref objects size pages \
	trailing_bytes signatures docmdp subfilter bytes_read aes_engine ok exit error; do
	check_grep "^\\.It Li ($k|.* $k)( |,|\$)|^\\.Li $k\$" "$MAN" "man page documents JSON key '$k'"
done
if command -v mandoc >/dev/null 2>&1; then
	run mandoc -T lint -W warning "$MAN"
	check_status 0 "mandoc -T lint is clean"
	run mandoc -T lint -W warning "$TOP_SRCDIR/man/libpdfstamp.3"
	check_status 0 "mandoc -T lint is clean for libpdfstamp(3)"
fi

# ===========================================================================
# Part 2: info against qpdf
# ===========================================================================

printf 'sample-user\n' >"$T/user.pw"
printf 'sample-owner\n' >"$T/owner.pw"
printf 'wrong-password\n' >"$T/wrong.pw"
printf 'p\xc3\xa4ssw\xc3\xb6rd\n' >"$T/utf8.pw"   # "pässwörd" in UTF-8
printf 'owner-\xc3\xa4\n' >"$T/utf8-owner.pw"
: >"$T/empty.pw"

# encrypt OUT IN USER OWNER [qpdf options...]: --object-streams and
# --linearize are general qpdf options; the rest are encryption options.
encrypt() {
	local out=$1 in=$2 u=$3 o=$4 a
	local -a gen=() enc=()
	shift 4
	for a in "$@"; do
		case $a in
		--object-streams=* | --linearize) gen+=("$a") ;;
		*) enc+=("$a") ;;
		esac
	done
	if ! qpdf "${gen[@]}" --encrypt "$u" "$o" 256 "${enc[@]}" -- "$in" "$out"; then
		fail "qpdf could not make $(basename "$out")"
		return 1
	fi
}

encrypt "$T/r6.pdf" "$PLAIN2" sample-user sample-owner --object-streams=disable
encrypt "$T/r6-objstm.pdf" "$PLAIN3" sample-user sample-owner --object-streams=generate
encrypt "$T/r5.pdf" "$PLAIN2" sample-user sample-owner --force-R5
encrypt "$T/r5-objstm.pdf" "$PLAIN3" sample-user sample-owner --force-R5 --object-streams=generate
encrypt "$T/r6-lin.pdf" "$PLAIN3" sample-user sample-owner --linearize
encrypt "$T/r6-empty.pdf" "$PLAIN3" "" sample-owner --print=low --modify=none --extract=n
encrypt "$T/r6-utf8.pdf" "$PLAIN2" "$(printf 'p\xc3\xa4ssw\xc3\xb6rd')" \
	"$(printf 'owner-\xc3\xa4')"
encrypt "$T/r6-clearmeta.pdf" "$PLAIN3" sample-user sample-owner --cleartext-metadata
encrypt "$T/r6-restricted.pdf" "$PLAIN2" sample-user sample-owner \
	--print=none --modify=annotate --extract=n
encrypt "$T/r6-sameuo.pdf" "$PLAIN2" same same

check_info r6-user "$T/r6.pdf" "$T/user.pw"
check_info r6-owner "$T/r6.pdf" "$T/owner.pw"
check_info r6-objstm "$T/r6-objstm.pdf" "$T/user.pw"
check_info r6-objstm-owner "$T/r6-objstm.pdf" "$T/owner.pw"
check_info r5-user "$T/r5.pdf" "$T/user.pw"
check_info r5-owner "$T/r5.pdf" "$T/owner.pw"
check_info r5-objstm "$T/r5-objstm.pdf" "$T/user.pw"
check_info r6-linearized "$T/r6-lin.pdf" "$T/user.pw"
check_info r6-empty-user "$T/r6-empty.pdf" "$T/empty.pw"
check_info r6-empty-user-nopw "$T/r6-empty.pdf" ""
check_info r6-empty-user-owner "$T/r6-empty.pdf" "$T/owner.pw"
check_info r6-utf8-user "$T/r6-utf8.pdf" "$T/utf8.pw"
check_info r6-utf8-owner "$T/r6-utf8.pdf" "$T/utf8-owner.pw"
check_info r6-clearmeta "$T/r6-clearmeta.pdf" "$T/user.pw"
check_info r6-restricted "$T/r6-restricted.pdf" "$T/user.pw"
check_info plaintext "$PLAIN3" ""

check_eq "$(jget "$T/r6-linearized.json" 'd["revisions"] >= 2')" true \
	"linearized: at least two cross-reference sections"
check_eq "$(jget "$T/r6-objstm.json" 'd["last_xref"]')" '"stream"' \
	"object streams: the last section is an xref stream"
check_eq "$(jget "$T/r6-user.json" 'd["last_xref"]')" '"table"' \
	"classic file: the last section is a table"
check_eq "$(jget "$T/r6-clearmeta.json" 'd["encryption"]["encrypt_metadata"]')" false \
	"--cleartext-metadata: encrypt_metadata is false"
check_eq "$(jget "$T/r6-restricted.json" 'd["encryption"]["permissions"]["annotate"]')" true \
	"restricted: annotate allowed"
check_eq "$(jget "$T/r6-restricted.json" 'd["encryption"]["permissions"]["print"]')" false \
	"restricted: print denied"

# User and owner password are the same: reported as owner (ISO 32000-2 7.6.4.3.3, Algorithm 2.A checks the owner first).
if [ -f "$T/r6-sameuo.pdf" ]; then
	printf 'same\n' >"$T/same.pw"
	run "$PDFSTAMP" info --json --password-file "$T/same.pw" "$T/r6-sameuo.pdf"
	check_status 0 "user = owner password"
	check_eq "$(jget "$T/out" 'd["authenticated_as"]')" '"owner"' \
		"user = owner password: reported as owner"
fi

# The shipped samples.
for f in r6-table r6-objstm r5-table; do
	check_info "sample-$f" "$S/$f.pdf" "$S/user.pw"
done
check_info sample-r6-empty-user "$S/r6-empty-user.pdf" ""

# Another producer: MuPDF.
if command -v mutool >/dev/null 2>&1; then
	if mutool clean -E aes-256 -U sample-user -O sample-owner "$PLAIN3" \
		"$T/mupdf.pdf" >/dev/null 2>&1; then
		check_info mupdf-user "$T/mupdf.pdf" "$T/user.pw"
		check_info mupdf-owner "$T/mupdf.pdf" "$T/owner.pw"
	else
		fail "mutool clean -E aes-256 could not make a file"
	fi
fi

# Nested page tree, 300 pages, a 3 MiB image: counts are right and the
# payload is not read.
python3 "$T/h.py" bigpdf "$T/big-plain.pdf"
encrypt "$T/big.pdf" "$T/big-plain.pdf" sample-user sample-owner --object-streams=generate
check_info big "$T/big.pdf" "$T/user.pw"
check_eq "$(jget "$T/big.json" 'd["pages"]')" 300 "big: 300 pages in a nested page tree"
check_eq "$(jget "$T/big.json" 'd["bytes_read"] < 256 * 1024')" true \
	"big: reads under 256 KiB of a $(($(wc -c <"$T/big.pdf") / 1024)) KiB file"

# Password sources with the library: descriptor, environment, stdin, CRLF.
run "$PDFSTAMP" info --json --password-fd 3 "$T/r6.pdf" 3<"$T/user.pw"
check_status 0 "--password-fd"
check_eq "$(jget "$T/out" 'd["authenticated_as"]')" '"user"' "--password-fd: user"
run env PDFSTAMP_TEST_PW=sample-owner "$PDFSTAMP" info --json \
	--password-env PDFSTAMP_TEST_PW "$T/r6.pdf"
check_status 0 "--password-env"
check_eq "$(jget "$T/out" 'd["authenticated_as"]')" '"owner"' "--password-env: owner"
run "$PDFSTAMP" info --json --ordered --password-file - "$T/r6.pdf" "$T/r5.pdf" \
	< <(printf 'sample-user\r\nsample-owner\n')
check_status 0 "--password-file - with CRLF, two files"
check_eq "$(jget "$T/out" '[d["authenticated_as"]]')" '["user"]' \
	"--password-file -: first line without its CR/LF"
check_eq "$(jget "$T/out" 'd["encryption"]["r"]' 2)" 5 \
	"--password-file -: the password is reused for the second file"
run env -u PDFSTAMP_UNSET_VAR "$PDFSTAMP" info --password-env PDFSTAMP_UNSET_VAR "$T/r6.pdf"
check_status 2 "--password-env naming an unset variable"
head -c 5000 /dev/zero | tr '\0' a >"$T/long.pw"
run "$PDFSTAMP" info --password-file "$T/long.pw" "$T/r6.pdf"
check_status 2 "a password longer than 4096 bytes is refused"

# The terminal prompt (a pseudo-terminal stands in for the user): echo is
# off while asking, the answer is used for every file, echo comes back, and
# after ^C at the prompt the terminal is restored and the process dies of
# SIGINT.
cat >"$T/ptyrun.py" <<'PY'
import os, pty, select, signal, sys, termios, time
exe, mode = sys.argv[1], sys.argv[2]
files = sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    # A shell without job control starts background commands with SIGINT
    # ignored, and exec keeps that; the test needs the default, as at a
    # terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execv(exe, [exe, "info", "--json", "--ordered"] + files)
out = b""
def drain(t):
    global out
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                d = os.read(fd, 65536)
            except OSError:
                return
            if not d:
                return
            out += d
            if mode == "answer" and out.count(b"\n") >= 1 + len(files):
                return
        elif b"Password: " in out and mode == "wait":
            return
end = time.time() + 10
while (b"Password: " not in out and out.count(b"\n") < len(files)
       and time.time() < end):
    drain(0.1)
echo_at_prompt = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
if mode == "answer" and b"Password: " in out:
    os.write(fd, b"sample-owner\n")
    drain(10)
else:
    os.kill(pid, signal.SIGINT)
    drain(1)
echo_after = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
_, st = os.waitpid(pid, 0)
print("prompted=%s echo_at_prompt=%s echo_after=%s leaked=%s status=%s"
      % (b"Password: " in out, echo_at_prompt, echo_after,
         b"sample-owner" in out, os.waitstatus_to_exitcode(st)))
sys.stdout.flush()
os.write(1, b"".join(l + b"\n" for l in out.replace(b"\r", b"").split(b"\n") if l.startswith(b"{")))
PY
run python3 "$T/ptyrun.py" "$PDFSTAMP" answer "$T/r6.pdf" "$T/r5.pdf"
check_grep '^prompted=True echo_at_prompt=False echo_after=True leaked=False status=0$' "$T/out" \
	"terminal prompt: no echo, restored, password not shown, exit 0"
sed -n '2p' "$T/out" >"$T/pty1.json"
sed -n '3p' "$T/out" >"$T/pty2.json"
check_eq "$(jget "$T/pty1.json" 'd["authenticated_as"]')" '"owner"' "terminal prompt: the answer is used"
check_eq "$(jget "$T/pty2.json" '[d["authenticated_as"], d["encryption"]["r"]]')" '["owner", 5]' \
	"terminal prompt: asked once, reused for the second file"
run python3 "$T/ptyrun.py" "$PDFSTAMP" interrupt "$T/r6.pdf"
check_grep '^prompted=True echo_at_prompt=False echo_after=True leaked=False status=-2$' "$T/out" \
	"terminal prompt: ^C restores echo and kills with SIGINT"
run python3 "$T/ptyrun.py" "$PDFSTAMP" answer "$T/r6-empty.pdf"
check_grep '^prompted=False ' "$T/out" "an empty user password needs no prompt"

# ---------------------------------------------------------------------------
# Error paths.
run "$PDFSTAMP" info --json --password-file "$T/wrong.pw" "$T/r6.pdf"
check_status 3 "wrong password (R6)"
check_grep "^pdfstamp: .*\\($T/r6.pdf\\)\$" "$T/err" "wrong password: 'pdfstamp: ... (file)'"
check_no_grep 'wrong-password' "$T/err" "wrong password: the password is not echoed"
check_eq "$(jget "$T/out" '[d["ok"], d["exit"], sorted(d)]')" '[false, 3, ["error", "exit", "file", "ok"]]' \
	"wrong password: the JSON failure line"
run "$PDFSTAMP" info --password-file "$T/wrong.pw" "$T/r5.pdf"
check_status 3 "wrong password (R5)"
run "$PDFSTAMP" info "$T/r6.pdf" </dev/null
check_status 3 "no password for a file that needs one"
run "$PDFSTAMP" info --password-file "$T/user.pw" "$T/r6-utf8.pdf"
check_status 3 "a different password for a non-ASCII one"

head -c 300 "$T/r6.pdf" >"$T/trunc.pdf"
run "$PDFSTAMP" info --password-file "$T/user.pw" "$T/trunc.pdf"
check_status 4 "truncated file (300 bytes)"
check_grep "\\($T/trunc.pdf\\)\$" "$T/err" "truncated file: message names the file"
: >"$T/empty.pdf"
run "$PDFSTAMP" info "$T/empty.pdf"
check_status 4 "empty file"
head -c 4096 /dev/urandom >"$T/random.pdf"
run "$PDFSTAMP" info "$T/random.pdf"
check_status 4 "random bytes"
run "$PDFSTAMP" info "$T/does-not-exist.pdf"
check_status 1 "missing file"

# /P changed without updating /Perms: refused unless --force.
cp "$T/r6.pdf" "$T/tampered.pdf"
if python3 "$T/h.py" replace "$T/tampered.pdf" '/P -4 ' '/P -8 '; then
	run "$PDFSTAMP" info --password-file "$T/user.pw" "$T/tampered.pdf"
	check_status 4 "/Perms does not match /P"
	run "$PDFSTAMP" info --json --force --password-file "$T/user.pw" "$T/tampered.pdf"
	check_status 0 "/Perms mismatch with --force"
	check_eq "$(jget "$T/out" 'd["encryption"]["perms_valid"]')" false \
		"--force: perms_valid is false"
	check_grep '^pdfstamp: warning: .*\(.*tampered.pdf\)$' "$T/err" \
		"--force: a warning names the file"
else
	fail "could not find '/P -4 ' in the qpdf output to tamper with"
fi

# Bytes after %%EOF are reported.
cp "$T/r6.pdf" "$T/trailing.pdf"
printf 'JUNK-AFTER-EOF' >>"$T/trailing.pdf"
run "$PDFSTAMP" info --json --password-file "$T/user.pw" "$T/trailing.pdf"
check_status 0 "trailing garbage after %%EOF still opens"
check_eq "$(jget "$T/out" 'd["trailing_bytes"] >= 14')" true "trailing garbage is reported"

# Several files: each reported, worst status wins, one JSON line each.
run "$PDFSTAMP" info --json --ordered --password-file "$T/user.pw" "$T/r6.pdf" "$T/trunc.pdf" \
	"$T/does-not-exist.pdf" "$T/r5.pdf"
check_status 4 "several files: the worst status"
check_eq "$(wc -l <"$T/out" | tr -d ' ')" 4 "several files: one JSON line per file"
check_eq "$(jget "$T/out" 'd["pages"]' 1)" 2 "several files: the first is reported"
check_eq "$(jget "$T/out" 'd["exit"]' 2)" 4 "several files: the truncated one fails with 4"
check_eq "$(jget "$T/out" 'd["exit"]' 3)" 1 "several files: the missing one fails with 1"
check_eq "$(jget "$T/out" 'd["encryption"]["r"]' 4)" 5 "several files: the last is still reported"

# Text output.
run "$PDFSTAMP" info --password-file "$T/owner.pw" "$T/r6.pdf"
check_status 0 "text output"
check_grep '^Pages: +2$' "$T/out" "text output: page count"
check_grep 'owner' "$T/out" "text output: owner password"

# A JSON file name with characters that need escaping.
odd=$T/$(printf 'odd "n\xc3\xa4me"\tx.pdf')
cp "$PLAIN2" "$odd"
run "$PDFSTAMP" info --json "$odd"
check_status 0 "a file name that needs escaping"
check_eq "$(jget "$T/out" 'd["file"]')" "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$odd")" \
	"the file name round-trips through JSON"
check_eq "$(LC_ALL=C grep -c '[^ -~]' "$T/out")" 0 "JSON output is printable ASCII"

finish
