#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/rotate.sh - end-to-end tests of `pdfstamp rotate`, `encrypt` and
# `verify` (issue 4).
#
# Inputs are made in the run by qpdf and MuPDF (tests/e2e/fixtures/e2e.py
# inputs: R6 with a table, an xref stream and object streams, R5,
# linearized, an empty user password, a hybrid-reference file, MuPDF R6
# plain and linearized), plus non-ASCII passwords and an 8 MB archive
# (bench/make-archive).  Every expectation comes from qpdf, MuPDF, poppler
# or the raw bytes, never from libpdfstamp:
#  (a) the output opens with the new user and owner passwords (qpdf says
#      which one it is), not with the old ones, and `qpdf --check` passes;
#  (b) `qpdf --show-encryption`: R 6, AESv3 everywhere, /P kept or as asked;
#  (c) the decrypted content is the input's: `qpdf --decrypt --qdf
#      --object-streams=disable --deterministic-id` of both agree once /ID
#      and the catalog's /Extensions are set aside, and object by object
#      (qpdf --json, raw stream data after decryption, same numbers) only
#      the old /Encrypt, xref streams and the linearization dictionary are
#      gone, the new /Encrypt added, the catalog gets ADBE extension level
#      8, and the trailer a new /ID; `pdftotext` gives the same text;
#  (d) one clean revision (one startxref, no /Prev);
# then encrypt, signatures (exit 5 without --force), faults (injected and a
# real ENOSPC: the target is byte-identical, no temp file left), --in-place
# (new inode, mode kept), verify on good and corrupted files, the progress
# bar under a pseudo-terminal, the terminal prompts, -j 1 / -j 2, --json and
# usage errors.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdftotext

e2e_inputs
EMPTY=$D/empty.pw
NU=$T/new-user.pw
NO=$T/new-owner.pw
printf 'fresh user 1\n' >"$NU"
printf 'fresh owner 1\n' >"$NO"
NEWPW=(--new-user-password-file "$NU" --new-owner-password-file "$NO")

# ---------------------------------------------------------------------------
# The independent checker (qpdf and raw bytes only).
C=$T/check.py
cat >"$C" <<'PY'
import base64, json, os, re, subprocess, sys

def out(ok, desc, detail=""):
    detail = str(detail).replace("\t", " ").replace("\n", " | ")[:600]
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))

def qpdf(args, pw):
    p = subprocess.run(["qpdf", "--password-file=" + pw] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (0, 3):
        raise RuntimeError("qpdf %s: exit %d: %s" % (" ".join(args), p.returncode,
                           p.stderr.decode(errors="replace")[:300]))
    return p.stdout

def qdf(path, pw):
    """Decrypted, uncompressed QDF; returns (body, /Extensions blocks, /ID)."""
    data = qpdf(["--decrypt", "--qdf", "--object-streams=disable",
                 "--deterministic-id", path, "-"], pw)
    body, ext, ids = [], [], []
    lines = data.split(b"\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        if l == b"xref":              # offsets legitimately differ
            while i < len(lines) and not lines[i].startswith(b"trailer"):
                i += 1
            continue
        if l == b"startxref":
            break
        m = re.match(rb"\s*/ID \[<([0-9a-f]*)><([0-9a-f]*)>\]$", l)
        if m:
            ids.append(m.group(1))
            i += 1
            continue
        if l == b"  /Extensions <<":  # top level: only a catalog has one
            j = i + 1
            while j < len(lines) and lines[j] != b"  >>":
                j += 1
            ext.append(b"\n".join(lines[i:j + 1]))
            i = j + 1
            continue
        body.append(l)
        i += 1
    return b"\n".join(body), ext, ids

def qjson(path, pw):
    d = json.loads(qpdf(["--json=2", "--json-key=qpdf", "--json-stream-data=inline",
                         "--decode-level=none", path], pw))
    return d["qpdf"][1]

def ref(v):
    m = re.fullmatch(r"(\d+) (\d+) R", v) if isinstance(v, str) else None
    return "obj:%s %s R" % m.groups() if m else None

def kind(o):
    if "stream" in o:
        dct = o["stream"]["dict"]
        if dct.get("/Type") == "/XRef":
            return "xref"
        return "stream"
    v = o.get("value")
    if isinstance(v, dict) and "/Linearized" in v:
        return "lin"
    return "value"

def perm_p(path, pw):
    s = subprocess.run(["qpdf", "--password-file=" + pw, "--show-encryption", path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
    m = re.search(r"^P = (-?\d+)$", s, re.M)
    return int(m.group(1)) if m else None

def same(name, inp, inpw, outp, outpw, p_expect):
    # (c) QDF of both, object numbers included ("%% Original object ID").
    a, b = qdf(inp, inpw), qdf(outp, outpw)
    if a[0] == b[0]:
        out(True, "%s: decrypted QDF identical to the input's" % name)
    else:
        import difflib
        d = list(difflib.unified_diff(a[0].decode("latin1").split("\n"),
                 b[0].decode("latin1").split("\n"), lineterm="", n=0))[2:12]
        out(False, "%s: decrypted QDF identical to the input's" % name, " / ".join(d))
    out(len(b[1]) == 1 and b"/ADBE <<" in b[1][0] and b"/BaseVersion /1.7" in b[1][0]
        and b"/ExtensionLevel 8" in b[1][0],
        "%s: the catalog declares ADBE extension level 8" % name, b[1])
    out(len(a[2]) == 1 and len(b[2]) == 1 and a[2][0] != b[2][0],
        "%s: a new first /ID element" % name, (a[2], b[2]))
    # (c) object by object, raw (decrypted, not decoded) stream data.
    ij, oj = qjson(inp, inpw), qjson(outp, outpw)
    it, ot = ij["trailer"]["value"], oj["trailer"]["value"]
    # MuPDF writes /Encrypt as a direct dictionary in the trailer.
    ienc, oenc = ref(it.get("/Encrypt")), ref(ot.get("/Encrypt"))
    ie = ij[ienc]["value"] if ienc in ij else it.get("/Encrypt")
    out(isinstance(ie, dict) and oenc in oj,
        "%s: the input has /Encrypt, the output an indirect one" % name, (ienc, oenc))
    if oenc not in oj or not isinstance(ie, dict):
        return
    e = oj[oenc]["value"]
    want = {"/Filter": "/Standard", "/V": 5, "/R": 6, "/Length": 256, "/StmF": "/StdCF",
            "/StrF": "/StdCF"}
    bad = {k: e.get(k) for k, v in want.items() if e.get(k) != v}
    cf = e.get("/CF", {}).get("/StdCF", {})
    lens = {k: len(e.get(k, "b:")) - 2 for k in ("/O", "/U", "/OE", "/UE", "/Perms")}
    out(not bad and cf.get("/CFM") == "/AESV3" and
        lens == {"/O": 96, "/U": 96, "/OE": 64, "/UE": 64, "/Perms": 32},
        "%s: the new /Encrypt is V 5 R 6 AESV3 with 48/48/32/32/16-byte entries" % name, (bad, cf, lens))
    if p_expect == "keep":
        p_expect = ie.get("/P")
    out(e.get("/P") == int(p_expect), "%s: /P is %s" % (name, p_expect), e.get("/P"))
    out(e.get("/EncryptMetadata", True) == ie.get("/EncryptMetadata", True),
        "%s: /EncryptMetadata kept" % name, (ie.get("/EncryptMetadata"), e.get("/EncryptMetadata")))
    root = ref(it.get("/Root"))
    out(ot.get("/Root") == it.get("/Root") and ot.get("/Info") == it.get("/Info") and
        "/Prev" not in ot and "/XRefStm" not in ot,
        "%s: trailer keeps /Root and /Info, has no /Prev or /XRefStm" % name, ot)
    ids = ot.get("/ID", [])
    out(len(ids) == 2 and ids[0] != it.get("/ID", [None])[0],
        "%s: the trailer has a new /ID pair" % name, (it.get("/ID"), ids))
    problems, nstreams = [], 0
    for k, o in ij.items():
        if not k.startswith("obj:") or k == ienc:
            continue
        kd = kind(o)
        if kd in ("xref", "lin"):
            if k in oj and kind(oj[k]) == kd and k != oenc:
                problems.append("%s (%s) was kept" % (k, kd))
            continue
        if k not in oj:
            problems.append("%s is missing" % k)
            continue
        p, q = o, oj[k]
        if "stream" in p:
            if "stream" not in q:
                problems.append("%s is no longer a stream" % k)
                continue
            pd = dict(p["stream"]["dict"]); qd = dict(q["stream"]["dict"])
            pd.pop("/Length", None); qd.pop("/Length", None)
            if pd != qd:
                problems.append("%s: stream dictionary differs: %s / %s" % (k, pd, qd))
            if p["stream"].get("data") != q["stream"].get("data"):
                problems.append("%s: stream data differs" % k)
            nstreams += 1
        else:
            pv, qv = p.get("value"), q.get("value")
            if k == root and isinstance(pv, dict) and isinstance(qv, dict):
                pv, qv = dict(pv), dict(qv)
                pe, qe = dict(pv.pop("/Extensions", {})), dict(qv.pop("/Extensions", {}))
                if qe.pop("/ADBE", None) != {"/BaseVersion": "/1.7", "/ExtensionLevel": 8}:
                    problems.append("catalog: no ADBE extension level 8")
                pe.pop("/ADBE", None)
                if pe != qe:
                    problems.append("catalog: other /Extensions changed")
            if pv != qv:
                problems.append("%s differs: %s / %s" % (k, str(pv)[:120], str(qv)[:120]))
    for k, o in oj.items():
        if k.startswith("obj:") and k != oenc and k not in ij and kind(o) != "xref":
            problems.append("%s is new" % k)
    out(not problems and nstreams > 0,
        "%s: object by object the same (%d streams, raw data), only /Encrypt, xref streams "
        "and linearization dropped" % (name, nstreams), "; ".join(problems[:5]))

def qdfsame(name, a, apw, b, bpw):
    x, y = qdf(a, apw), qdf(b, bpw)
    out(x[0] == y[0], "%s: decrypted QDF identical to the input's" % name)
    out(len(y[1]) == 1 and b"/ExtensionLevel 8" in y[1][0],
        "%s: the catalog declares ADBE extension level 8" % name, y[1])

def onerev(name, path):
    d = open(path, "rb").read()
    n = len(re.findall(rb"startxref", d))
    out(n == 1 and d.count(b"%%EOF") == 1 and b"/Prev" not in d and d.startswith(b"%PDF-"),
        "%s: one clean revision (one startxref and %%%%EOF, no /Prev)" % name, n)

def corrupt(inp, outp, pw):
    """Flips the high bit of the last byte of the second-to-last ciphertext
    block of the first plain (table) stream object: the padding byte of the
    decrypted data changes, so it cannot be valid.  Prints the object number."""
    xref = qpdf(["--show-xref", inp], pw).decode()
    data = bytearray(open(inp, "rb").read())
    for m in re.finditer(r"^(\d+)/(\d+): uncompressed; offset = (\d+)$", xref, re.M):
        num, off = int(m.group(1)), int(m.group(3))
        head = bytes(data[off:off + 4096])
        # the object's own dictionary: up to its "stream" keyword, which
        # must come before its "endobj" (else it is not a stream)
        st, eo = head.find(b"stream"), head.find(b"endobj")
        if st < 0 or (0 <= eo < st):
            continue
        h = re.match(rb"%d\s+%s\s+obj\s*(<<.*>>)\s*$" % (num, m.group(2).encode()), head[:st], re.S)
        eol = re.match(rb"stream(\r\n|\n)", head[st:])
        if not h or not eol or b"/XRef" in h.group(1):
            continue
        ln = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", h.group(1))
        if not ln or int(ln.group(1)) < 32:
            continue
        start = off + st + eol.end()
        pos = start + int(ln.group(1)) - 17
        data[pos] ^= 0x80
        open(outp, "wb").write(data)
        print(num)
        return
    sys.exit("no stream object with a direct /Length found")

def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    try:
        if cmd == "same":
            same(*a)
        elif cmd == "qdfsame":
            qdfsame(*a)
        elif cmd == "onerev":
            onerev(*a)
        elif cmd == "corrupt":
            corrupt(*a)
        elif cmd == "p":
            print(perm_p(*a))
        else:
            sys.exit("unknown command " + cmd)
    except RuntimeError as e:
        out(False, "%s %s" % (cmd, a[0] if a else ""), e)

main()
PY

# pyfeed ARGS...: the checker's OK/FAIL lines as assertions (lib.sh).
pyfeed() { checker_feed "$C" "$@"; }

# pwopt PWFILE: the pdfstamp password option (none for the empty password).
pwopt() {
	case $1 in
	*/empty.pw) ;;
	*) printf '%s\n' --password-file "$1" ;;
	esac
}

# refuses FILE PWFILE DESC: qpdf rejects the password.
refuses() {
	local rc=0
	qpdf --password-file="$2" --check "$1" >"$T/q.out" 2>&1 || rc=$?
	if [ $rc = 2 ] && grep -q 'invalid password' "$T/q.out"; then
		ok "$3"
	else
		fail "$3 (qpdf exit $rc)" "$(head -c 300 "$T/q.out")"
	fi
}

# r6_aes FILE PWFILE DESC: (b) revision 6, AESv3 for everything.
r6_aes() {
	showenc "$1" "$2" >"$T/enc.txt"
	if grep -qx 'R = 6' "$T/enc.txt" && [ "$(grep -c ': AESv3$' "$T/enc.txt")" = 3 ]; then
		ok "$3: qpdf shows R 6 with AESv3 (256-bit) for streams, strings and files"
	else
		fail "$3: qpdf shows R 6 with AESv3" "$(head -c 600 "$T/enc.txt")"
	fi
}

# sametext IN INPW OUT OUTPW DESC: pdftotext output identical.
sametext() {
	pdftotext -upw "$(head -n 1 "$2")" "$1" "$T/a.txt" 2>/dev/null
	pdftotext -upw "$(head -n 1 "$4")" "$3" "$T/b.txt" 2>/dev/null
	if [ -s "$T/a.txt" ] && cmp -s "$T/a.txt" "$T/b.txt"; then
		ok "$5: pdftotext gives the same text"
	else
		fail "$5: pdftotext gives the same text" "$(diff "$T/a.txt" "$T/b.txt" 2>&1 | head -5)"
	fi
}

# no_temp DIR DESC: no .pdfstamp-* file is left in DIR.
no_temp() {
	local left
	left=$(find "$1" -maxdepth 1 -name '.pdfstamp-*' | head -3)
	check_eq "$left" "" "$2: no temporary file left"
	# one leftover must not fail the later checks too
	find "$1" -maxdepth 1 -name '.pdfstamp-*' -delete
}

# unchanged FILE COPY DESC
unchanged() {
	if cmp -s "$1" "$2"; then
		ok "$3: the target is byte-identical"
	else
		fail "$3: the target is byte-identical" "$(cmp "$1" "$2" 2>&1)"
	fi
}

# ---------------------------------------------------------------------------
# Rotate every input: (a)-(d).

while read -r name f pw _pages _kind; do
	o=$T/rot-$name.pdf
	cp "$f" "$T/saved.pdf"
	run "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" -o "$o" "$f"
	check_status 0 "$name: rotate"
	[ -s "$o" ] || continue
	unchanged "$f" "$T/saved.pdf" "$name: -o leaves the input alone"
	opens "$o" "$NU" user "$name: the new user password opens the output as the user"
	opens "$o" "$NO" owner "$name: the new owner password opens the output as the owner"
	refuses "$o" "$pw" "$name: the old user password no longer opens it"
	refuses "$o" "$OPW" "$name: the old owner password no longer opens it"
	qcheck "$o" "$NU" "$name"
	r6_aes "$o" "$NU" "$name"
	pyfeed same "$name" "$f" "$OPW" "$o" "$NO" keep
	pyfeed onerev "$name" "$o"
	sametext "$f" "$pw" "$o" "$NU" "$name"
	run "$PDFSTAMP" verify --password-file "$NU" "$o"
	check_status 0 "$name: verify accepts the output"
	run "$PDFSTAMP" verify $(pwopt "$pw") "$f"
	check_status 0 "$name: verify accepts the qpdf/MuPDF input"
done <"$D/inputs.txt"

# Several revisions (an incremental stamp on top): one clean revision out,
# with the newest version of every object.
"$PDFSTAMP" stamp --password-file "$OPW" -o "$T/stamped.pdf" "$D/qpdf-r6-table.pdf"
check_eq "$(grep -ac startxref "$T/stamped.pdf")" 2 "the stamped input has two revisions"
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" -o "$T/stamped-rot.pdf" "$T/stamped.pdf"
check_status 0 "rotate a file with two revisions"
pyfeed onerev stamped "$T/stamped-rot.pdf"
pyfeed same stamped "$T/stamped.pdf" "$OPW" "$T/stamped-rot.pdf" "$NO" keep
qcheck "$T/stamped-rot.pdf" "$NU" "stamped"

# The input was R5 (so the R6 output above is an upgrade).
check_grep '^R = 5$' <(showenc "$D/qpdf-r5-table.pdf" "$OPW") "qpdf-r5-table: the input is R5"

# Restricted permissions are kept; --permissions sets them.
S=$TOP_SRCDIR/samples
run "$PDFSTAMP" rotate --password-file "$S/owner.pw" "${NEWPW[@]}" -o "$T/rot-restricted.pdf" "$S/r6-empty-user.pdf"
check_status 0 "rotate a file with restricted permissions"
P_IN=$(python3 "$C" p "$S/r6-empty-user.pdf" "$S/owner.pw")
check_ne "$P_IN" "-4" "the restricted sample's /P is not 'everything'"
check_eq "$(python3 "$C" p "$T/rot-restricted.pdf" "$NO")" "$P_IN" "the restricted /P is kept"

# /P of a permission list per ISO 32000-2 Table 22: bits 7, 8, 13-32 and
# (PDF 2.0) 10 set; print 3, modify 4, copy 5, annotate 6, fill-forms 9,
# extract 10, assemble 11, print-high 12.
expect_p() {
	python3 - "$1" <<'PY'
import sys
bits = {"print": 3, "modify": 4, "copy": 5, "annotate": 6, "fill-forms": 9,
        "extract": 10, "assemble": 11, "print-high": 12}
v = 0xFFFFF000 | (1 << 6) | (1 << 7) | (1 << 9)
if sys.argv[1] == "all":
    v = 0xFFFFFFFC
elif sys.argv[1] != "none":
    for n in sys.argv[1].split(","):
        v |= 1 << (bits[n] - 1)
print(v - (1 << 32) if v >= 1 << 31 else v)
PY
}
for perms in print,copy,annotate none all modify,fill-forms,assemble,print-high,print; do
	o=$T/perm.pdf
	run "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" --permissions "$perms" -o "$o" "$D/qpdf-r6-table.pdf"
	check_status 0 "rotate --permissions $perms"
	check_eq "$(python3 "$C" p "$o" "$NU")" "$(expect_p "$perms")" "--permissions $perms: qpdf reports the /P of Table 22"
done
o=$T/perm.pdf
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" --permissions print,copy,annotate -o "$o" "$D/qpdf-r6-table.pdf"
showenc "$o" "$NU" >"$T/enc.txt"
for l in 'print low resolution: allowed' 'print high resolution: not allowed' \
	'extract for any purpose: allowed' 'modify annotations: allowed' \
	'modify document assembly: not allowed' 'modify other: not allowed'; do
	check_grep "^$l\$" "$T/enc.txt" "--permissions print,copy,annotate: qpdf says '$l'"
done
pyfeed same perm-list "$D/qpdf-r6-table.pdf" "$OPW" "$o" "$NO" "$(expect_p print,copy,annotate)"

# Non-ASCII passwords, old and new.
printf 'p\xc3\xa4ssw\xc3\xb6rd-\xc3\xbc\n' >"$T/na-user.pw"      # pässwörd-ü
printf '\xce\xa9mega-\xe6\x89\x80\xe6\x9c\x89\xe8\x80\x85\n' >"$T/na-owner.pw"  # Ωmega-所有者
printf 'n\xc3\xa9u-\xd0\xbf\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c\n' >"$T/na-nu.pw" # néu-пароль
printf '\xe6\x96\xb0-\xc3\xb8wner\n' >"$T/na-no.pw"                # 新-øwner
qpdf --encrypt "$(head -n1 "$T/na-user.pw")" "$(head -n1 "$T/na-owner.pw")" 256 -- \
	"$S/plain-3page.pdf" "$T/na.pdf"
opens "$T/na.pdf" "$T/na-owner.pw" owner "non-ASCII input: qpdf made it with the owner password"
run "$PDFSTAMP" rotate --password-file "$T/na-owner.pw" --new-user-password-file "$T/na-nu.pw" \
	--new-owner-password-file "$T/na-no.pw" -o "$T/na-rot.pdf" "$T/na.pdf"
check_status 0 "rotate with non-ASCII passwords"
opens "$T/na-rot.pdf" "$T/na-nu.pw" user "non-ASCII: qpdf opens the output with the new user password"
opens "$T/na-rot.pdf" "$T/na-no.pw" owner "non-ASCII: qpdf opens the output with the new owner password"
refuses "$T/na-rot.pdf" "$T/na-user.pw" "non-ASCII: not with the old user password"
if mutool draw -q -p "$(head -n1 "$T/na-nu.pw")" -F txt -o "$T/na.txt" "$T/na-rot.pdf" 1 2>"$T/mu.err" &&
	[ -s "$T/na.txt" ]; then
	ok "non-ASCII: MuPDF opens the output with the new user password"
else
	fail "non-ASCII: MuPDF opens the output with the new user password" "$(head -c 300 "$T/mu.err")"
fi
pyfeed same non-ascii "$T/na.pdf" "$T/na-owner.pw" "$T/na-rot.pdf" "$T/na-no.pw" keep

# An explicitly empty new user password.
run "$PDFSTAMP" rotate --password-file "$OPW" --new-user-password-file "$EMPTY" \
	--new-owner-password-file "$NO" -o "$T/rot-empty.pdf" "$D/qpdf-r6-table.pdf"
check_status 0 "rotate to an empty user password"
opens "$T/rot-empty.pdf" "$EMPTY" user "the empty new user password opens the output"
opens "$T/rot-empty.pdf" "$NO" owner "the owner password still opens it as the owner"

# Owner password needed, unless it is empty.
run "$PDFSTAMP" rotate --password-file "$D/user.pw" "${NEWPW[@]}" -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
check_status 5 "rotate with the user password only"
check_grep 'owner password' "$T/err" "rotate with the user password only: message"
check_true test ! -e "$T/x.pdf" "rotate with the user password only: no output"
qpdf --encrypt 'only user' '' 256 --allow-insecure -- "$S/plain-2page.pdf" "$T/noowner.pdf"
printf 'only user\n' >"$T/ou.pw"
run "$PDFSTAMP" rotate --password-file "$T/ou.pw" "${NEWPW[@]}" -o "$T/noowner-rot.pdf" "$T/noowner.pdf"
check_status 0 "the user password suffices when the owner password is empty"
opens "$T/noowner-rot.pdf" "$NO" owner "rotated file with a formerly empty owner password"

# ---------------------------------------------------------------------------
# encrypt

PLAIN=$S/plain-3page.pdf
run "$PDFSTAMP" encrypt "${NEWPW[@]}" --permissions print,copy -o "$T/enc.pdf" "$PLAIN"
check_status 0 "encrypt a plaintext file"
qcheck "$T/enc.pdf" "$NU" "encrypt"
r6_aes "$T/enc.pdf" "$NU" "encrypt"
opens "$T/enc.pdf" "$NU" user "encrypt: qpdf opens it with the user password"
opens "$T/enc.pdf" "$NO" owner "encrypt: qpdf opens it with the owner password"
check_eq "$(python3 "$C" p "$T/enc.pdf" "$NU")" "$(expect_p print,copy)" "encrypt --permissions print,copy: /P"
if mutool draw -q -p "$(head -n1 "$NU")" -F txt -o "$T/enc.txt" "$T/enc.pdf" 2>"$T/mu.err" && [ -s "$T/enc.txt" ]; then
	ok "encrypt: mutool draw opens it with the user password"
else
	fail "encrypt: mutool draw opens it with the user password" "$(head -c 300 "$T/mu.err")"
fi
if mutool draw -q -p wrong -F txt -o "$T/enc2.txt" "$T/enc.pdf" >/dev/null 2>&1; then
	fail "encrypt: mutool draw refuses a wrong password"
else
	ok "encrypt: mutool draw refuses a wrong password"
fi
printf '\n' >"$T/plain.pw"
sametext "$PLAIN" "$T/plain.pw" "$T/enc.pdf" "$NU" "encrypt"
# The decrypted QDF of the output is the plaintext's but for the catalog's
# extension entry and the /ID (the checker's normalisation).
pyfeed qdfsame encrypt "$PLAIN" "$T/plain.pw" "$T/enc.pdf" "$NU"
pyfeed onerev encrypt "$T/enc.pdf"
title=$(grep -ao '/Title *([^)]*)' "$PLAIN" | head -n 1 | sed 's/^\/Title *(\(.*\))$/\1/')
check_ne "$title" "" "the plaintext sample has a /Title in clear"
if [ -n "$title" ] && grep -aqF -- "$title" "$T/enc.pdf"; then
	fail "encrypt: the /Title '$title' does not appear in clear in the output"
else
	ok "encrypt: the /Title does not appear in clear in the output"
fi
run "$PDFSTAMP" encrypt "${NEWPW[@]}" -o "$T/enc-all.pdf" "$PLAIN"
check_eq "$(python3 "$C" p "$T/enc-all.pdf" "$NU")" -4 "encrypt: all permissions by default"

run "$PDFSTAMP" encrypt "${NEWPW[@]}" -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
check_status 2 "encrypt refuses an encrypted file"
check_grep 'rotate' "$T/err" "encrypt of an encrypted file points to rotate"
run "$PDFSTAMP" rotate "${NEWPW[@]}" -o "$T/x.pdf" "$PLAIN"
check_status 2 "rotate refuses a plaintext file"
check_grep 'encrypt' "$T/err" "rotate of a plaintext file points to encrypt"
check_true test ! -e "$T/x.pdf" "refused files: no output"

# ---------------------------------------------------------------------------
# Signatures: a full rewrite invalidates them.

python3 "$E" docmdp 2 "$T/signed-plain.pdf"
qpdf --encrypt 'user pw' 'owner pw' 256 -- "$T/signed-plain.pdf" "$T/signed.pdf"
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" -o "$T/x.pdf" "$T/signed.pdf"
check_status 5 "rotate refuses a signed file"
check_grep '[-][-]force' "$T/err" "rotate of a signed file: the message mentions --force"
check_true test ! -e "$T/x.pdf" "rotate of a signed file: no output"
run "$PDFSTAMP" encrypt "${NEWPW[@]}" -o "$T/x.pdf" "$T/signed-plain.pdf"
check_status 5 "encrypt refuses a signed file"
run "$PDFSTAMP" rotate --force --password-file "$OPW" "${NEWPW[@]}" -o "$T/signed-rot.pdf" "$T/signed.pdf"
check_status 0 "rotate --force rewrites a signed file"
check_grep 'signature' "$T/err" "rotate --force: warns about the signatures"
qcheck "$T/signed-rot.pdf" "$NU" "signed, rotated with --force"
pyfeed same signed "$T/signed.pdf" "$OPW" "$T/signed-rot.pdf" "$NO" keep
run "$PDFSTAMP" encrypt --force "${NEWPW[@]}" -o "$T/signed-enc.pdf" "$T/signed-plain.pdf"
check_status 0 "encrypt --force encrypts a signed file"
# A signature's /Contents is never encrypted (ISO 32000-2 7.6.2).
python3 - "$T/signed-plain.pdf" "$T/signed-enc.pdf" >"$T/sigc.txt" <<'PY'
import re, sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
blob = re.search(rb"/Contents\s*<(30(?:00){1023})>", a).group(1)
print("clear" if re.search(rb"<" + blob + rb">", b, re.I) else "missing")
PY
check_eq "$(cat "$T/sigc.txt")" clear "encrypt --force: the signature's /Contents stays in clear"
# AppendOnly without a signature.
python3 - "$T/appendonly.pdf" <<'PY'
import sys
objs = [b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] /SigFlags 2 >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"]
pdf = bytearray(b"%PDF-1.7\n")
offs = []
for i, o in enumerate(objs, 1):
    offs.append(len(pdf))
    pdf += b"%d 0 obj\n%s\nendobj\n" % (i, o)
x = len(pdf)
pdf += b"xref\n0 4\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offs)
pdf += b"trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % x
open(sys.argv[1], "wb").write(pdf)
PY
run "$PDFSTAMP" encrypt "${NEWPW[@]}" -o "$T/x.pdf" "$T/appendonly.pdf"
check_status 5 "encrypt refuses a file with /SigFlags AppendOnly"
check_grep '[Aa]ppend-?[Oo]nly' "$T/err" "AppendOnly: message"
run "$PDFSTAMP" encrypt --force "${NEWPW[@]}" -o "$T/x.pdf" "$T/appendonly.pdf"
check_status 0 "encrypt --force with /SigFlags AppendOnly"
rm -f "$T/x.pdf"

# ---------------------------------------------------------------------------
# Crash safety: injected faults, a real ENOSPC, a wrong password.

F=$T/faults
mkdir -p "$F"
if have_faults; then
for fault in fail:write fail:fsync fail:rename kill:after-write; do
	cp "$D/qpdf-r6-table.pdf" "$F/t.pdf"
	cp "$F/t.pdf" "$T/saved.pdf"
	run env PDFSTAMP_FAULT="$fault" "$PDFSTAMP_HOOKED" rotate --password-file "$OPW" "${NEWPW[@]}" -i "$F/t.pdf"
	case $fault in
	kill:*) check_status 137 "rotate -i with $fault (SIGKILL)" ;;
	*) check_status 1 "rotate -i with $fault" ;;
	esac
	unchanged "$F/t.pdf" "$T/saved.pdf" "$fault (-i)"
	no_temp "$F" "$fault (-i)"
	# -o over an existing file
	cp "$S/r6-table.pdf" "$F/out.pdf"
	run env PDFSTAMP_FAULT="$fault" "$PDFSTAMP_HOOKED" rotate --password-file "$OPW" "${NEWPW[@]}" -o "$F/out.pdf" "$F/t.pdf"
	check_ne "$RC" 0 "rotate -o with $fault fails"
	unchanged "$F/out.pdf" "$S/r6-table.pdf" "$fault (-o over an existing file)"
	no_temp "$F" "$fault (-o)"
done
# the injection points exist: without the fault the same command works
cp "$D/qpdf-r6-table.pdf" "$F/t.pdf"
run env PDFSTAMP_FAULT=fail:nothing "$PDFSTAMP_HOOKED" rotate --password-file "$OPW" "${NEWPW[@]}" -i "$F/t.pdf"
check_status 0 "rotate -i with an unused fault name"
# The self-check compares what each stream decrypts to with what was
# encrypted (rwcheck.c note 8): corrupt:plaintext flips a bit of every
# stream's plaintext after the rewrite summed it, which CBC decrypts with
# sound padding; without the sums the corrupted file replaced the target.
for form in qpdf-r6-table qpdf-r6-xrefstream; do
	cp "$D/$form.pdf" "$F/t.pdf"
	cp "$F/t.pdf" "$T/saved.pdf"
	run env PDFSTAMP_FAULT=corrupt:plaintext "$PDFSTAMP_HOOKED" rotate --password-file "$OPW" "${NEWPW[@]}" -i "$F/t.pdf"
	check_status 1 "$form: rotate -i whose stream plaintext went wrong fails"
	check_grep 'self-check.*decrypts to other bytes than the rewrite encrypted' "$T/err" \
		"$form: the self-check names it"
	unchanged "$F/t.pdf" "$T/saved.pdf" "$form: corrupt:plaintext (-i)"
	no_temp "$F" "$form: corrupt:plaintext (-i)"
done
run env PDFSTAMP_FAULT=corrupt:plaintext "$PDFSTAMP_HOOKED" encrypt "${NEWPW[@]}" -o "$F/enc.pdf" "$S/plain-3page.pdf"
check_status 1 "encrypt whose stream plaintext went wrong fails"
check_grep 'decrypts to other bytes than the rewrite encrypted' "$T/err" "encrypt: the self-check names it"
check_true test ! -e "$F/enc.pdf" "encrypt: no output after corrupt:plaintext"
no_temp "$F" "encrypt: corrupt:plaintext"
else
	skip "rotate: injected write/fsync/rename failures and kills (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi

cp "$D/qpdf-r6-table.pdf" "$F/t.pdf"
cp "$F/t.pdf" "$T/saved.pdf"
printf 'wrong\n' >"$T/wrong.pw"
run "$PDFSTAMP" rotate --password-file "$T/wrong.pw" "${NEWPW[@]}" -i "$F/t.pdf"
check_status 3 "rotate -i with a wrong password"
unchanged "$F/t.pdf" "$T/saved.pdf" "wrong password"
no_temp "$F" "wrong password"

# A real ENOSPC: the input fits on a small tmpfs, the copy does not.
M=$T/mnt
mkdir -p "$M"
"$TOP_BUILDDIR/bench/make-archive" --quiet --pages 2 --small 20 --large 2 --payload 600k -o "$T/mid.pdf"
printf 'user\n' >"$T/au.pw"
printf 'owner\n' >"$T/ao.pw"
if mount -t tmpfs -o size=1m tmpfs "$M" 2>"$T/mount.err"; then
	trap 'umount "$M" 2>/dev/null; rm -rf "$T"' EXIT
	cp "$T/mid.pdf" "$M/t.pdf"
	run "$PDFSTAMP" rotate --password-file "$T/ao.pw" "${NEWPW[@]}" -i "$M/t.pdf"
	check_status 1 "rotate -i on a full file system"
	check_grep 'No space left on device' "$T/err" "ENOSPC: message"
	unchanged "$M/t.pdf" "$T/mid.pdf" "ENOSPC"
	no_temp "$M" "ENOSPC"
	umount "$M"
else
	echo "SKIP: cannot mount a tmpfs here ($(head -c 200 "$T/mount.err")): no real ENOSPC test"
fi

# --in-place replaces the file: a new inode, the mode bits kept.
cp "$D/qpdf-r6-table.pdf" "$F/ip.pdf"
chmod 640 "$F/ip.pdf"
ino=$(stat -c %i "$F/ip.pdf")
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" --in-place "$F/ip.pdf"
check_status 0 "rotate --in-place"
check_ne "$(stat -c %i "$F/ip.pdf")" "$ino" "--in-place: the file was replaced (new inode)"
check_eq "$(stat -c %a "$F/ip.pdf")" 640 "--in-place: mode 640 kept"
opens "$F/ip.pdf" "$NO" owner "--in-place: the file has the new owner password"
no_temp "$F" "--in-place"
chmod 604 "$F/t.pdf"
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" -o "$F/mode.pdf" "$F/t.pdf"
check_eq "$(stat -c %a "$F/mode.pdf")" 604 "-o: the output gets the input's mode bits"

# ---------------------------------------------------------------------------
# verify

G=$T/rot-qpdf-r6-table.pdf
N=$(python3 "$C" corrupt "$G" "$T/bad.pdf" "$NU")
check_ne "$N" "" "made a copy with a damaged stream ciphertext (object $N)"
run "$PDFSTAMP" verify --password-file "$NU" "$T/bad.pdf"
check_status 4 "verify finds the damaged stream"
check_grep 'fault' "$T/out" "verify: the report counts the fault"
run "$PDFSTAMP" verify --json --ordered --password-file "$NU" "$G" "$T/bad.pdf"
check_status 4 "verify of a good and a bad file: the worst status"
check_eq "$(jget "$T/out" 'sorted(d)' 1)" \
	'["faults", "file", "first_fault", "first_fault_object", "objects", "ok", "streams", "strings"]' \
	"verify --json: keys"
check_eq "$(jget "$T/out" '[d["ok"], d["faults"], d["first_fault"]]' 1)" '[true, 0, null]' "verify --json: the good file"
check_eq "$(jget "$T/out" '[d["ok"], d["faults"], d["first_fault_object"]]' 2)" "[false, 1, $N]" \
	"verify --json: the bad file, the damaged object"
check_eq "$(jget "$T/out" 'd["objects"] > 0 and d["streams"] > 0 and d["strings"] > 0' 1)" true \
	"verify --json: counts objects, streams and strings"
run "$PDFSTAMP" verify --password-file "$T/wrong.pw" "$G"
check_status 3 "verify with a wrong password"
run "$PDFSTAMP" verify "$PLAIN"
check_status 0 "verify of a plaintext file"

# ---------------------------------------------------------------------------
# A larger file: -j 1 and -j 2, the progress bar.

A=$T/archive.pdf
"$TOP_BUILDDIR/bench/make-archive" --quiet --pages 5 --small 200 --large 5 --payload 8M -o "$A"
for j in 1 2; do
	run "$PDFSTAMP" rotate --json -q -j "$j" --password-file "$T/ao.pw" "${NEWPW[@]}" -o "$T/arch-j$j.pdf" "$A"
	check_status 0 "rotate -j $j of an 8 MB archive"
	check_eq "$(jget "$T/out" 'd["jobs"]')" "$j" "rotate -j $j: --json reports the jobs"
	cp "$T/out" "$T/arch-j$j.json"
	run "$PDFSTAMP" verify --password-file "$NU" "$T/arch-j$j.pdf"
	check_status 0 "verify of the -j $j output"
	qcheck "$T/arch-j$j.pdf" "$NU" "-j $j"
done
pyfeed same archive-j1 "$A" "$T/ao.pw" "$T/arch-j1.pdf" "$NO" keep
pyfeed same archive-j2 "$A" "$T/ao.pw" "$T/arch-j2.pdf" "$NO" keep
# The writeback starts while the output is written (rewrite.c note 9):
# under strace, sync_file_range(SYNC_FILE_RANGE_WRITE) calls on the output
# (made by io.c's writeback thread) cover it in order from byte 0, the
# first 4 MB at least before the rest is written, and normally all of it
# (the last range may come after the fsync on a loaded machine: the fsync
# writes it anyway); the same thread flushes it with fdatasync each time
# it has started the writeback of 32 MB more (io.c note "Data syncs on
# the way"); the output then has one fsync, made by the writeback
# thread (it runs during the self-check), then the rename.  A
# temporary file only copied to standard output (-o -) gets none.
# The input is a 40 MB archive: the writer posts a range every 4 MB and
# the writeback thread takes whatever has been posted when it runs, so
# on a loaded machine (parallel tests, two vCPUs) the posts of a small
# file can all arrive before it first runs; ten leave it room, and the
# output passes 32 MB, so that at least one data sync is due.
# The self-check reads that output back into its buffers and never maps it
# (rwcheck.c note 4; check_rewrite's output_never_mapped).
# (LeakSanitizer cannot run under ptrace: a sanitizer build leaves leak
# checking to the runs above.)
"$TOP_BUILDDIR/bench/make-archive" --quiet --pages 5 --small 200 --large 10 --payload 40M -o "$T/archive-wb.pdf"
if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true >/dev/null 2>&1; then
	NOLSAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	RC=0
	ASAN_OPTIONS="$NOLSAN" strace -f -qq -o "$T/wb.strace" -e trace=sync_file_range,fsync,fdatasync,rename,renameat,renameat2,mmap,openat \
		"$PDFSTAMP" rotate -q --password-file "$T/ao.pw" "${NEWPW[@]}" -o "$T/arch-wb.pdf" "$T/archive-wb.pdf" \
		>"$T/out" 2>"$T/err" || RC=$?
	check_status 0 "rotate of a 40 MB archive under strace"
	checker_feed /dev/stdin "$T/wb.strace" "$(stat -c %s "$T/arch-wb.pdf")" <<'PY'
import re, sys
path, size = sys.argv[1], int(sys.argv[2])
def res(ok, desc, detail=""):
    print(("OK\t%s" if ok else "FAIL\t%s\t" + detail.replace("\t", " ")) % desc)
# strace -f splits a call that another thread's call interrupts into
# "<unfinished ...>" and "<... NAME resumed>" lines: join them (a split
# openat(O_TMPFILE) once made this read as "no O_TMPFILE here").
ev, pending = [], {}
for line in open(path, encoding="utf-8", errors="replace"):
    line = line.rstrip("\n")
    m = re.match(r"(\d+)\s+(.*?)\s*<unfinished \.\.\.>$", line)
    if m:
        pending[m.group(1)] = m.group(2)
        continue
    m = re.match(r"(\d+)\s+<\.\.\. \w+ resumed>(.*)$", line)
    if m and m.group(1) in pending:
        line = m.group(1) + " " + pending.pop(m.group(1)) + m.group(2)
    m = re.match(r"(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)", line)
    if m:
        ev.append((m.group(2), [a.strip() for a in m.group(3).split(",")], int(m.group(4)), m.group(1)))
sfr = [e for e in ev if e[0] == "sync_file_range"]
res(len(sfr) >= 2, "writeback: sync_file_range called during the rotate", "%d calls" % len(sfr))
res(all(e[1][3] == "SYNC_FILE_RANGE_WRITE" and e[2] == 0 for e in sfr),
    "writeback: SYNC_FILE_RANGE_WRITE alone (it waits for nothing)", str(sfr[:3]))
fd = sfr[0][1][0] if sfr else None
pos = 0
for e in sfr:
    if e[1][0] != fd or int(e[1][1]) != pos:
        break
    pos += int(e[1][2])
ranges = sum(int(e[1][2]) for e in sfr)
res(pos == ranges and 4 << 20 <= pos <= size,
    "writeback: the ranges cover the output (%d bytes) in order from byte 0" % size, "covered %d of %d" % (pos, ranges))
res(len(sfr) >= 2 and int(sfr[-1][1][1]) > 0, "writeback: started before the output was complete")
if pos != size:
    print("# writeback: the last %d bytes were left to the fsync" % (size - pos))
syncs = [i for i, e in enumerate(ev) if e[0] == "fsync" and e[1][0] == fd]
ren = [i for i, e in enumerate(ev) if e[0].startswith("rename")]
res(len(syncs) == 1 and len(ren) == 1 and syncs[0] < ren[0],
    "writeback: then one fsync of the output, then the rename",
    str([e for e in ev if e[0] not in ("mmap", "openat")][-4:]))
# the data syncs on the way: by the writeback thread, before the fsync,
# each once the writeback of 32 MB more has been started, and all succeed
ds = [i for i, e in enumerate(ev) if e[0] == "fdatasync" and e[1][0] == fd]
started, last, spaced = 0, 0, True
for i, e in enumerate(ev):
    if e[0] == "sync_file_range" and e[1][0] == fd:
        started += int(e[1][2])
    elif i in ds:
        spaced = spaced and started - last >= 32 << 20
        last = started
res(len(ds) >= 1 and len(syncs) == 1 and all(i < syncs[0] and ev[i][3] == sfr[0][3] and ev[i][2] == 0 for i in ds),
    "writeback: fdatasync of the output on the way, by the writeback thread, before the fsync",
    str([(ev[i][0], ev[i][3], ev[i][2]) for i in ds]))
res(spaced and len(ds) <= size // (32 << 20), "writeback: a data sync per 32 MB started, no more",
    "%d data syncs for %d bytes" % (len(ds), size))
# note 9: the fsync runs on the writeback thread while the main thread
# re-opens the output for the self-check; the rename (main thread) waits
res(len(syncs) == 1 and len(ren) == 1 and ev[syncs[0]][3] != ev[ren[0]][3],
    "writeback: the fsync is the writeback thread's, not the thread that checks and renames",
    str([(e[0], e[3]) for e in ev if e[0] in ("fsync", "fdatasync") or e[0].startswith("rename")]))
maps = [i for i, e in enumerate(ev) if e[0] == "mmap" and len(e[1]) == 6 and e[1][1] == str(size) and
        e[1][2] == "PROT_READ" and e[1][3] == "MAP_SHARED" and e[2] != -1]
res(not maps, "self-check: the command reads its output back, it does not map it", str(maps))
PY
	RC=0
	ASAN_OPTIONS="$NOLSAN" strace -f -qq -o "$T/wb2.strace" -e trace=sync_file_range,fdatasync \
		"$PDFSTAMP" rotate -q --password-file "$T/ao.pw" "${NEWPW[@]}" -o - "$T/archive-wb.pdf" \
		>"$T/arch-stdout.pdf" 2>"$T/err" || RC=$?
	check_status 0 "rotate -o - of the 40 MB archive under strace"
	check_no_grep 'sync_file_range\(' "$T/wb2.strace" "writeback: none for a temporary file copied to standard output"
	check_no_grep 'fdatasync\(' "$T/wb2.strace" "writeback: no data sync of a temporary file copied to standard output"
else
	skip "the writeback of rotate (strace is absent or cannot trace here)"
fi
# A data sync on the way that fails (io.c note "Data syncs on the way":
# the next fsync would not report the error again) fails the rotate with
# exit 1, naming the call; a kill there, like any kill, leaves the target
# as it was and nothing else behind.
if have_faults; then
	for fault in fail:datasync:1 kill:datasync:1; do
		cp "$T/archive-wb.pdf" "$F/big.pdf"
		run env PDFSTAMP_FAULT="$fault" "$PDFSTAMP_HOOKED" rotate -q --password-file "$T/ao.pw" "${NEWPW[@]}" -i "$F/big.pdf"
		case $fault in
		kill:*) check_status 137 "rotate -i of 40 MB with $fault (SIGKILL)" ;;
		*)
			check_status 1 "rotate -i of 40 MB with $fault"
			check_grep 'cannot fdatasync .*injected fault' "$T/err" "$fault: the message names the data sync"
			;;
		esac
		unchanged "$F/big.pdf" "$T/archive-wb.pdf" "$fault (-i)"
		no_temp "$F" "$fault (-i)"
	done
	run env PDFSTAMP_FAULT=trace "$PDFSTAMP_HOOKED" rotate -q --password-file "$T/ao.pw" "${NEWPW[@]}" -o "$F/big2.pdf" \
		"$T/archive-wb.pdf"
	check_status 0 "rotate -o of 40 MB, traced"
	check_grep '^pdfstamp: fault point datasync 1$' "$T/err" "the rotate of 40 MB reaches a data sync"
	check_no_grep '^pdfstamp: fault point datasync 2$' "$T/err" "and only one (one per 32 MB)"
	rm -f "$F/big.pdf" "$F/big2.pdf"
fi
# Memory follows one object, not a batch (rewrite.c note 11): a hostile
# file of 8 arrays of a million integers each (16 MB; each array parses
# to ~50 MB of objects) is encrypted, then rotated, on one thread; the
# peak RSS of each run stays under 128 MB (about 90 MB here: one tree and
# the batch's bytes; two trees would be ~140 MB), where keeping a batch's
# parsed trees until it was written took 460 MB.  (A sanitizer build keeps
# freed memory in quarantine: none here, so that RSS means the same.)
# (Both files of this and the next test, one page and the BODIES.)
python3 - "$T/huge-plain.pdf" "$T/grow-plain.pdf" "$T/spill-plain.pdf" <<'PY'
import sys
def write(path, bodies):
    f = open(path, "wb"); offs = {}
    f.write(b"%PDF-1.7\n")
    def obj(n, body):
        offs[n] = f.tell(); f.write(b"%d 0 obj\n%s\nendobj\n" % (n, body))
    refs = b" ".join(b"%d 0 R" % n for n in range(4, 4 + len(bodies)))
    obj(1, b"<< /Type /Catalog /Pages 2 0 R /Big [%s] >>" % refs)
    obj(2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
    obj(3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>")
    for n, body in enumerate(bodies, 4):
        obj(n, body)
    n = 4 + len(bodies)
    x = f.tell()
    f.write(b"xref\n0 %d\n0000000000 65535 f \n" % n + b"".join(b"%010d 00000 n \n" % offs[k] for k in range(1, n)))
    f.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (n, x))
write(sys.argv[1], [b"[" + b"7 " * 1000000 + b"]"] * 8)
write(sys.argv[2], [b"[" + b"()" * 1100000 + b"]"])
write(sys.argv[3], [b"[" + b"()" * 300000 + b" (endstream)]"] * 4)
PY
# peak RSS (KB) of a command: "STATUS KB"
maxrss() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:]).returncode
print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
read -r RC KB < <(maxrss "$PDFSTAMP" encrypt -q -j 1 "${NEWPW[@]}" -o "$T/huge.pdf" "$T/huge-plain.pdf" 2>"$T/err")
check_status 0 "encrypt of 8 arrays of a million integers"
check_true test "$KB" -lt 131072 "encrypt of huge arrays: peak RSS $KB KB < 128 MB"
read -r RC KB < <(maxrss "$PDFSTAMP" rotate -q -j 1 --password-file "$NO" "${NEWPW[@]}" -o "$T/huge-rot.pdf" \
	"$T/huge.pdf" 2>"$T/err")
check_status 0 "rotate of 8 arrays of a million integers"
check_true test "$KB" -lt 131072 "rotate of huge arrays: peak RSS $KB KB < 128 MB"
rm -f "$T/huge-plain.pdf" "$T/huge.pdf" "$T/huge-rot.pdf"
# An object that encryption would grow past what any reader of ours takes
# (64 MB: 1.1 million empty strings, each 66 bytes of hex ciphertext) is
# refused by name (exit 4) before anything is renamed, not left to fail
# the self-check as an internal error.
RC=0
"$PDFSTAMP" encrypt -q "${NEWPW[@]}" -o "$T/grow.pdf" "$T/grow-plain.pdf" >"$T/out" 2>"$T/err" || RC=$?
check_status 4 "encrypt of an object that would grow past 64 MB"
check_grep 'object 4 would take [0-9]* bytes once encrypted, more than the 64 MB' "$T/err" \
	"the object that would grow too large is named"
check_true test ! -e "$T/grow.pdf" "no output for an object that would grow too large"
rm -f "$T/grow-plain.pdf"
# Serialised headers past BATCH_OUT (16 MB) send the rest of a batch the
# careful way, one object at a time (rewrite.c note 11): four objects of
# 300,000 empty strings (20 MB each once encrypted; the last bytes say
# "endstream", which once fooled a guess about streams) rotate, pass the
# self-check, and qpdf reads the last one's strings back.
RC=0
"$PDFSTAMP" encrypt -q -j 2 "${NEWPW[@]}" -o "$T/spill.pdf" "$T/spill-plain.pdf" >"$T/out" 2>"$T/err" || RC=$?
check_status 0 "encrypt of four objects that grow to 20 MB each"
RC=0
"$PDFSTAMP" rotate -q -j 2 --password-file "$NO" "${NEWPW[@]}" -o "$T/spill-rot.pdf" "$T/spill.pdf" >"$T/out" 2>"$T/err" ||
	RC=$?
check_status 0 "rotate of four objects that grow to 20 MB each"
qpdf --password-file="$NO" --show-object=7 "$T/spill-rot.pdf" >"$T/spill.txt" 2>"$T/err"
check_eq "$(grep -o '()' "$T/spill.txt" | wc -l)" 300000 "qpdf decrypts the last spilled object: 300,000 empty strings"
check_grep '(endstream)' "$T/spill.txt" "qpdf decrypts the last spilled object: and its last string"
rm -f "$T/spill-plain.pdf" "$T/spill.pdf" "$T/spill-rot.pdf"
# Every AES engine (issue 6): the portable mbedTLS path and the multi-lane
# kernels give outputs that decrypt to the same content (their ciphertexts
# differ only by the IVs).  A kernel the CPU lacks falls back, which the
# engine name in `info` shows.
for eng in mbedtls aesni vaes; do
	run env PDFSTAMP_AES=$eng "$PDFSTAMP" rotate -q --password-file "$T/ao.pw" "${NEWPW[@]}" -o "$T/arch-$eng.pdf" "$A"
	check_status 0 "rotate with PDFSTAMP_AES=$eng"
	run env PDFSTAMP_AES=$eng "$PDFSTAMP" verify --password-file "$NU" "$T/arch-$eng.pdf"
	check_status 0 "verify with PDFSTAMP_AES=$eng"
	pyfeed same "archive-$eng" "$A" "$T/ao.pw" "$T/arch-$eng.pdf" "$NO" keep
done
run env PDFSTAMP_AES=mbedtls "$PDFSTAMP" info --json --password-file "$NU" "$T/arch-vaes.pdf"
check_eq "$(jget "$T/out" 'd["aes_engine"]')" '"mbedtls"' "PDFSTAMP_AES=mbedtls selects mbedTLS"
J=$T/arch-j2.json
check_eq "$(jget "$J" 'sorted(d)')" \
	'["bytes_written", "crypto_seconds", "decrypt_seconds", "encrypt_seconds", "file", "jobs", "objects", "ok", "output", "payload_bytes", "seconds", "streams", "strings"]' \
	"rotate --json: keys"
check_eq "$(jget "$J" '[d["ok"], d["output"]]')" "[true, \"$T/arch-j2.pdf\"]" "rotate --json: ok and output"
check_eq "$(jget "$J" 'd["bytes_written"]')" "$(stat -c %s "$T/arch-j2.pdf")" "rotate --json: bytes_written is the output's size"
check_eq "$(jget "$J" 'd["payload_bytes"] >= 8 * 2**20 and d["streams"] >= 5 and d["objects"] >= 210')" true \
	"rotate --json: the payload and object counts cover the archive"
check_eq "$(jget "$J" '0 < d["crypto_seconds"] and 0 < d["seconds"] and 0 < d["encrypt_seconds"] and abs(d["decrypt_seconds"] + d["encrypt_seconds"] - d["crypto_seconds"]) < 1e-5')" true "rotate --json: times"
run "$PDFSTAMP" rotate --json --password-file "$T/wrong.pw" "${NEWPW[@]}" -o "$T/x.pdf" "$A"
check_eq "$(jget "$T/out" '[sorted(d), d["ok"], d["exit"]]')" '[["error", "exit", "file", "ok"], false, 3]' \
	"rotate --json: a failure line"

# The progress bar: only on a terminal, for files over 4 MB, not with -q.
PTY=$T/ptyrun.py
cat >"$PTY" <<'PY'
import os, pty, select, sys
out = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
buf = b""
while True:
    try:
        r, _, _ = select.select([fd], [], [], 60)
        if not r:
            break
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    buf += d
_, st = os.waitpid(pid, 0)
open(out, "wb").write(buf)
sys.exit(os.waitstatus_to_exitcode(st))
PY
BAR='[0-9]+% \[[#.]+\] [0-9.]+/[0-9.]+ MB [0-9.]+ MB/s'
rc=0
python3 "$PTY" "$T/tty.out" "$PDFSTAMP" rotate -j 1 --password-file "$T/ao.pw" "${NEWPW[@]}" -o "$T/x.pdf" "$A" || rc=$?
check_eq "$rc" 0 "rotate under a pseudo-terminal"
check_true grep -aEq "$BAR" "$T/tty.out" "progress: a bar is drawn on a terminal"
check_true grep -aEq '100% \[#+\]' "$T/tty.out" "progress: the bar reaches 100%"
check_eq "$(tr -cd '\r' <"$T/tty.out" | wc -c | awk '{print ($1 >= 3)}')" 1 \
	"progress: the line is redrawn with carriage returns"
check_true grep -aEq $'\r *\r$' "$T/tty.out" "progress: the bar is cleared at the end"
rc=0
python3 "$PTY" "$T/tty-q.out" "$PDFSTAMP" rotate -q --password-file "$T/ao.pw" "${NEWPW[@]}" -o "$T/x.pdf" "$A" || rc=$?
check_eq "$rc:$(grep -acE "$BAR" "$T/tty-q.out")" 0:0 "progress: -q silences the bar"
rc=0
python3 "$PTY" "$T/tty-s.out" "$PDFSTAMP" rotate --password-file "$OPW" "${NEWPW[@]}" -o "$T/x.pdf" "$D/qpdf-r6-table.pdf" || rc=$?
check_eq "$rc:$(grep -acE "$BAR" "$T/tty-s.out")" 0:0 "progress: no bar for a small file"
rc=0
python3 "$PTY" "$T/tty-v.out" "$PDFSTAMP" verify --password-file "$NU" "$T/arch-j1.pdf" || rc=$?
check_eq "$rc" 0 "verify under a pseudo-terminal"
check_true grep -aEq "verifying +$BAR" "$T/tty-v.out" "progress: verify draws a bar too"
run "$PDFSTAMP" rotate --password-file "$T/ao.pw" "${NEWPW[@]}" -o "$T/x.pdf" "$A"
check_status 0 "rotate with stderr to a file"
check_no_grep 'MB/s' "$T/err" "progress: no bar when stderr is not a terminal"
check_eq "$(tr -cd '\r' <"$T/err" | wc -c)" 0 "progress: no carriage return when stderr is not a terminal"

# Terminal prompts: the current password, then each new one twice.
DIALOG=$T/dialog.py
cat >"$DIALOG" <<'PY'
import os, pty, select, sys
answers = [(p.encode(), a.encode()) for p, a in zip(sys.argv[1:7:2], sys.argv[2:8:2])]
cmd = sys.argv[7:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
buf, seen = b"", 0
while True:
    try:
        r, _, _ = select.select([fd], [], [], 30)
        if not r:
            break
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    buf += d
    while seen < len(answers) and answers[seen][0] in buf:
        buf = buf.split(answers[seen][0], 1)[1]
        os.write(fd, answers[seen][1] + b"\n")
        seen += 1
_, st = os.waitpid(pid, 0)
print("answered %d" % seen)
sys.stdout.flush()
sys.exit(os.waitstatus_to_exitcode(st))
PY
rc=0
python3 "$DIALOG" 'Current password: ' 'owner pw' 'Enter new user password: ' 'typed user' \
	'Repeat new user password: ' 'typed user' \
	"$PDFSTAMP" rotate --new-owner-password-file "$NO" -o "$T/typed.pdf" "$D/qpdf-r6-table.pdf" \
	>"$T/dialog.out" 2>&1 || rc=$?
check_eq "$rc:$(grep -c 'answered 3' "$T/dialog.out")" 0:1 "prompts: current and new user password (twice) on the terminal"
printf 'typed user\n' >"$T/typed.pw"
opens "$T/typed.pdf" "$T/typed.pw" user "prompts: the typed user password opens the output"
rc=0
python3 "$DIALOG" 'Current password: ' 'owner pw' 'Enter new owner password: ' 'one' \
	'Repeat new owner password: ' 'two' \
	"$PDFSTAMP" rotate --new-user-password-file "$NU" -o "$T/x2.pdf" "$D/qpdf-r6-table.pdf" \
	>"$T/dialog.out" 2>&1 || rc=$?
check_eq "$rc" 2 "prompts: two different entries are a usage error"
check_true test ! -e "$T/x2.pdf" "prompts: no output after a mismatch"

# ---------------------------------------------------------------------------
# Usage errors (exit 2) and help.

rm -f "$T/x.pdf"
usage() {
	local desc=$1
	shift
	run "$PDFSTAMP" "$@" </dev/null
	check_status 2 "$desc"
}
usage "rotate without a new user password source and no terminal" \
	rotate --password-file "$OPW" --new-owner-password-file "$NO" -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
check_grep 'new user password' "$T/err" "rotate without a new password source: message"
usage "rotate with two passwords from standard input" \
	rotate --password-file - --new-user-password-file - --new-owner-password-file "$NO" -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
usage "rotate with two passwords from the same descriptor" \
	rotate --password-file "$OPW" --new-user-password-fd 5 --new-owner-password-fd 5 -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
usage "rotate with an unknown permission" \
	rotate --password-file "$OPW" "${NEWPW[@]}" --permissions print,fly -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
usage "rotate -j 0" rotate --password-file "$OPW" "${NEWPW[@]}" -j 0 -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
usage "rotate with -o and --in-place" rotate --password-file "$OPW" "${NEWPW[@]}" -i -o "$T/x.pdf" "$D/qpdf-r6-table.pdf"
usage "rotate without -o or --in-place" rotate --password-file "$OPW" "${NEWPW[@]}" "$D/qpdf-r6-table.pdf"
usage "rotate -o with two files" rotate --password-file "$OPW" "${NEWPW[@]}" -o "$T/x.pdf" "$D/qpdf-r6-table.pdf" "$PLAIN"
usage "encrypt takes no current password" encrypt --password-file "$OPW" "${NEWPW[@]}" -o "$T/x.pdf" "$PLAIN"
usage "verify without a file" verify
check_true test ! -e "$T/x.pdf" "usage errors write nothing"
for c in rotate encrypt verify; do
	run "$PDFSTAMP" "$c" --help
	check_status 0 "$c --help"
	check_no_grep 'not implemented' "$T/out" "$c --help: implemented"
done
run "$PDFSTAMP" rotate --help
for o in --new-user-password-file --new-owner-password-env --permissions --jobs --force --quiet --json --password-fd; do
	check_grep "[-]${o#-}" "$T/out" "rotate --help mentions $o"
done
check_grep 'rotate' "$TOP_SRCDIR/man/pdfstamp.1" "the man page documents rotate"
check_no_grep 'rotate, encrypt, verify \(not yet implemented\)' "$TOP_SRCDIR/man/pdfstamp.1" \
	"the man page no longer calls rotate unimplemented"

finish
