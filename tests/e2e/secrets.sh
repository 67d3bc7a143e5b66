#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/secrets.sh - no password, key or plaintext escapes (issue 7,
# "Secrets").
#
#  (a) argv: no command (stamp, meta, rotate, encrypt, verify, info)
#      accepts a password on the command line in any common spelling; each
#      is a usage error (2) and the value is not echoed.
#  (b) messages: a wrong password's error does not contain it, and no
#      stdout/stderr of any run here (successes with --json and -v,
#      failures, kills) contains any password of this script.
#  (c)-(f) memory, with a 200 MB archive (bench/make-archive) rotated with
#      all three passwords from --password-env, non-ASCII so that SASLprep
#      changes them (U+FB01 -> "fi").  A ptrace helper (PTRACE_SEIZE with
#      PTRACE_O_TRACEEXIT) interrupts the process once it has written
#      20 MB - past the password intake, the authentication and ps_kdf_make
#      - and stops it again at exit, before its memory goes away.  While
#      it runs: /proc/PID/environ (the initial environment block) and
#      /proc/PID/cmdline hold none of the passwords; /proc/PID/limits says
#      "Max core file size 0 0" (the CLI disables core dumps; the script
#      raises the soft limit first so that this is not vacuous); in every
#      writable or anonymous mapping each password's UTF-8 bytes occur at
#      most once - the CLI's own buffer, which it keeps for the next file
#      and the library's self-check, in an mlock'ed page - and never in
#      another encoding (UCS-4, UTF-16: stringprep's working copies).  At
#      exit: no trace of any password anywhere (all buffers wiped).
#  (d) files: a plaintext PDF with a canary in a content stream and in
#      strings, encrypted with qpdf (streams left uncompressed); stamp,
#      meta --xmp, rotate and encrypt with more canaries in --text, --note,
#      --author and --set.  No file in the output directory (outputs, and
#      whatever a kill -9 at after-write / before-rename leaves) contains a
#      canary, a password or a file key (qpdf --show-encryption-key), not
#      in the raw bytes and not inside any stream that inflates without
#      decryption; and qpdf decrypts each output back to text containing
#      its canaries, so they really were written.
# Controls keep the scanners honest: the file scan must find the canary in
# the plaintext source and inside a qpdf-compressed copy, and the memory
# scan must find an ordinary environment variable that nobody wipes.
# Runs in about 15 s (most of it making and rotating the archive); without
# ptrace permission the memory part is skipped, not failed.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf

S=$TOP_SRCDIR/samples
MA=${TOP_BUILDDIR:-}/bench/make-archive
H=$T/h.py
LOGS=$T/logs       # stdout/stderr of every pdfstamp run, scanned at the end
mkdir -p "$LOGS"
NLOG=0

cat >"$H" <<'PY'
import ctypes, json, os, re, signal, sys, time, zlib

def out(ok, desc, detail=""):
    detail = str(detail).replace("\t", " ").replace("\n", " | ")[:700]
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))

# ---- mkplain OUT CANARY: a plaintext PDF with the canary in a content
# stream and in strings (exact offsets, so no repair is needed).
def mkplain(path, canary):
    c = canary.encode()
    content = b"BT /F1 24 Tf 72 700 Td (" + c + b"-content) Tj ET\n"
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> /CanaryNote (" + c + b"-pagestring) >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Title (" + c + b"-title) /Producer (secrets.sh) >>",
    ]
    b = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offs = []
    for i, o in enumerate(objs, 1):
        offs.append(len(b))
        b += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    x = len(b)
    b += b"xref\n0 %d\n0000000000 65535 f\r\n" % (len(objs) + 1)
    for o in offs:
        b += b"%010d 00000 n\r\n" % o
    b += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
    open(path, "wb").write(b)

# ---- scan DIR NEEDLES.json: every regular file, raw and inflated streams.
def inflated(data):
    for m in re.finditer(rb"stream\r?\n", data):
        start = m.end()
        end = data.find(b"endstream", start)
        if end < 0:
            continue
        try:
            yield zlib.decompressobj().decompress(data[start:end], 1 << 26)
        except zlib.error:
            pass

def scan(d, needles):
    hits = []
    for root, _, files in os.walk(d):
        for f in sorted(files):
            p = os.path.join(root, f)
            if not os.path.isfile(p):
                continue
            data = open(p, "rb").read()
            for name, nd in needles.items():
                if nd in data:
                    hits.append("%s: %s (raw bytes)" % (f, name))
                elif any(nd in z for z in inflated(data)):
                    hits.append("%s: %s (in a stream that inflates without decryption)" % (f, name))
    return hits

def needles_from(spec):
    n = {}
    for name, v in json.load(open(spec)).items():
        n[name] = bytes.fromhex(v)
    return n

# ---- memscan SPEC -- CMD...: see the header of secrets.sh.
PTRACE_CONT, PTRACE_SEIZE, PTRACE_INTERRUPT = 7, 0x4206, 0x4207
PTRACE_O_TRACEEXIT, EVENT_EXIT, EVENT_STOP = 0x40, 6, 128

def memscan(spec, cmd):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]

    def ptrace(req, pid, data=0):
        if libc.ptrace(req, pid, None, ctypes.c_void_p(data)) < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))

    def proc(pid, what):
        try:
            with open("/proc/%d/%s" % (pid, what), "rb") as f:
                return f.read()
        except OSError:
            return b""

    def regions(pid):
        out, cur = [], None
        for line in proc(pid, "smaps").decode(errors="replace").splitlines():
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
            if m:
                cur = {"lo": int(m.group(1), 16), "hi": int(m.group(2), 16),
                       "perms": m.group(3), "name": m.group(4) or "[anon]", "locked": 0}
                out.append(cur)
            elif line.startswith("Locked:") and cur is not None:
                cur["locked"] = int(line.split()[1])
        return out

    def scanmem(pid):
        found = []
        fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
        try:
            for r in regions(pid):
                if "r" not in r["perms"] or r["name"] in ("[vvar]", "[vsyscall]", "[vdso]"):
                    continue
                # what a core dump would show: writable or anonymous memory
                if "w" not in r["perms"] and not r["name"].startswith("["):
                    continue
                # a sanitizer build's shadow memory (terabytes, reserved), not the program's data
                if r["hi"] - r["lo"] > 1 << 40:
                    continue
                data, pos = bytearray(), r["lo"]
                while pos < r["hi"]:
                    n = min(1 << 24, r["hi"] - pos)
                    try:
                        data += os.pread(fd, n, pos)
                    except OSError:
                        data += bytes(n)
                    pos += n
                for name, nd in needles.items():
                    i = data.find(nd)
                    while i >= 0:
                        found.append({"needle": name, "region": r["name"],
                                      "offset": i, "locked_kb": r["locked"]})
                        i = data.find(nd, i + 1)
        finally:
            os.close(fd)
        return found

    needles = {k: bytes.fromhex(v) for k, v in spec["needles"].items()}
    env = dict(os.environ)
    env.update(spec["env"])
    res = {"phases": {}, "exit": None}
    so = os.open(spec["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    se = os.open(spec["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    pid = os.fork()
    if pid == 0:
        os.dup2(so, 1)
        os.dup2(se, 2)
        try:
            os.execvpe(cmd[0], cmd, env)
        finally:
            os._exit(127)
    os.close(so)
    os.close(se)
    try:
        ptrace(PTRACE_SEIZE, pid, PTRACE_O_TRACEEXIT)
    except OSError as e:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return {"skip": "cannot ptrace the CLI: %s" % e}

    def inspect(phase):
        lim = re.search(rb"Max core file size\s+(\S+)\s+(\S+)", proc(pid, "limits"))
        res["phases"][phase] = {
            "found": scanmem(pid),
            "environ": sorted(k for k, nd in needles.items() if nd in proc(pid, "environ")),
            "cmdline": sorted(k for k, nd in needles.items() if nd in proc(pid, "cmdline")),
            "core": [x.decode() for x in lim.group(1, 2)] if lim else None,
        }

    interrupted = False
    deadline = time.time() + spec.get("timeout", 120)
    while True:
        wp, status = os.waitpid(pid, os.WNOHANG)
        if wp == pid:
            if os.WIFEXITED(status):
                res["exit"] = os.WEXITSTATUS(status)
                break
            if os.WIFSIGNALED(status):
                res["exit"] = -os.WTERMSIG(status)
                break
            ev, sig = status >> 16, os.WSTOPSIG(status)
            if ev == EVENT_STOP and interrupted and "running" not in res["phases"]:
                inspect("running")
            elif ev == EVENT_EXIT:
                inspect("exit")
            # event stops resume plainly; a signal stop gets its signal
            # back, except the SIGTRAP a traced execve raises
            ptrace(PTRACE_CONT, pid, 0 if ev or sig == signal.SIGTRAP else sig)
            continue
        if not interrupted:
            m = re.search(rb"wchar: (\d+)", proc(pid, "io"))
            if m and int(m.group(1)) >= spec["wchar"]:
                ptrace(PTRACE_INTERRUPT, pid)
                interrupted = True
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline = float("inf")
        time.sleep(0.002)
    return res

def memcheck(spec_path, cmd):
    spec = json.load(open(spec_path))
    res = memscan(spec, cmd)
    if "skip" in res:
        print("SKIP\t" + res["skip"])
        return
    out(res["exit"] == 0, "memory: the rotation succeeds", "exit %s" % res["exit"])
    run = res["phases"].get("running")
    out(run is not None, "memory: the process was inspected while rewriting",
        "it finished before writing %d bytes?" % spec["wchar"])
    ex = res["phases"].get("exit")
    out(ex is not None, "memory: the process was inspected at exit")
    pws = spec["passwords"]          # name -> {"utf8": [needle names], "other": [...]}
    for phase, ph in (("while rewriting", run), ("at exit", ex)):
        if ph:
            out(any(f["needle"] == "control" for f in ph["found"]),
                "memory %s: the scan sees an unwiped variable (control)" % phase)
    if run:
        out(run["environ"] == ["control"],
            "memory: no --password-env value is left in /proc/PID/environ (the control is)",
            "found: %s" % run["environ"])
        out(not run["cmdline"], "memory: /proc/PID/cmdline holds no password",
            "found: %s" % run["cmdline"])
        out(run["core"] == ["0", "0"], "memory: core dumps disabled (Max core file size 0 0)",
            "limits say %s (soft limit before the run: %s)" % (run["core"], spec["core_before"]))
        for pw, kinds in sorted(pws.items()):
            # the UTF-8 forms all contain the token: count the token's places
            hits = [f for f in run["found"] if f["needle"] == kinds["token"]]
            where = ", ".join("%s+%#x (locked %d kB)" % (f["region"], f["offset"], f["locked_kb"])
                              for f in hits)
            out(len(hits) <= 1, "memory while rewriting: %s occurs at most once (the CLI's buffer)" % pw,
                "%d copies: %s" % (len(hits), where))
            if spec["memlock_ok"] and hits:
                out(all(f["locked_kb"] > 0 for f in hits),
                    "memory while rewriting: the copy of %s is in mlock'ed memory" % pw, where)
            other = [f for f in run["found"] if f["needle"] in kinds["other"]]
            out(not other, "memory while rewriting: %s in no other encoding (UCS-4, UTF-16)" % pw,
                "; ".join("%s in %s+%#x" % (f["needle"], f["region"], f["offset"]) for f in other))
    if ex:
        for pw, kinds in sorted(pws.items()):
            names = set([kinds["token"]] + kinds["utf8"] + kinds["other"])
            hits = [f for f in ex["found"] if f["needle"] in names]
            out(not hits, "memory at exit: no trace of %s (wiped)" % pw,
                "; ".join("%s in %s+%#x" % (f["needle"], f["region"], f["offset"]) for f in hits))

def main():
    cmd = sys.argv[1]
    if cmd == "mkplain":
        mkplain(sys.argv[2], sys.argv[3])
    elif cmd == "scan":
        hits = scan(sys.argv[2], needles_from(sys.argv[3]))
        out(not hits, sys.argv[4], "; ".join(hits))
    elif cmd == "scan-control":
        # the scanner itself: it must see what it is shown (raw or inflated)
        hits = scan(sys.argv[2], needles_from(sys.argv[3]))
        want = sys.argv[5]
        out(any(want in h for h in hits), sys.argv[4], "hits: %s" % hits)
    elif cmd == "memcheck":
        memcheck(sys.argv[2], sys.argv[sys.argv.index("--") + 1:])
    elif cmd == "hex":
        sys.stdout.write(sys.argv[2].encode().hex())
    else:
        raise SystemExit("unknown helper command " + cmd)

main()
PY

# py ARGS...: runs the helper; its OK/FAIL/SKIP lines become assertions.
py() {
	local line rest prc=0
	python3 "$H" "$@" >"$T/py.out" 2>&1 || prc=$?
	while IFS= read -r line; do
		case $line in
		OK$'\t'*) ok "${line#OK$'\t'}" ;;
		FAIL$'\t'*)
			rest=${line#FAIL$'\t'}
			fail "${rest%%$'\t'*}" "${rest#*$'\t'}"
			;;
		SKIP$'\t'*) echo "skip - ${line#SKIP$'\t'}" ;;
		*) echo "       $line" ;;
		esac
	done <"$T/py.out"
	[ "$prc" = 0 ] || fail "helper $1 exited with status $prc"
}

# prun CMD...: run, keeping a copy of stdout/stderr for the final scan.
prun() {
	run "$@"
	NLOG=$((NLOG + 1))
	cp "$T/out" "$LOGS/$NLOG.out"
	cp "$T/err" "$LOGS/$NLOG.err"
}

tok() { python3 -c 'import secrets; print(secrets.token_hex(8))'; }

# Passwords of this run: random, so nothing stale can be mistaken for them.
U_PW=OldUser-$(tok)
O_PW=OldOwner-$(tok)
NU_PW=NewUser-$(tok)
NO_PW=NewOwner-$(tok)
WRONG_PW=WrongPw-$(tok)
ARGV_PW=ArgvPw-$(tok)
CANARY=PLAINTEXT-CANARY-$(tok)
PWD_DIR=$T/pw      # password files live outside the scanned directories
mkdir -p "$PWD_DIR"
printf '%s\n' "$U_PW" >"$PWD_DIR/u"
printf '%s\n' "$O_PW" >"$PWD_DIR/o"
printf '%s\n' "$NU_PW" >"$PWD_DIR/nu"
printf '%s\n' "$NO_PW" >"$PWD_DIR/no"
printf '%s\n' "$WRONG_PW" >"$PWD_DIR/wrong"
NEW=(--new-user-password-file "$PWD_DIR/nu" --new-owner-password-file "$PWD_DIR/no")

# ---------------------------------------------------------------------------
# (a) No password on the command line.
for cmd in stamp meta rotate encrypt verify info; do
	for opt in "--password=$ARGV_PW" "--user-password=$ARGV_PW" "--owner-password=$ARGV_PW" \
		"--new-user-password=$ARGV_PW" "--new-owner-password=$ARGV_PW" \
		"--new-password=$ARGV_PW" "--upw=$ARGV_PW" "--opw=$ARGV_PW" "--passwd=$ARGV_PW"; do
		prun "$PDFSTAMP" "$cmd" "$opt" -o "$T/argv-out.pdf" "$S/r6-table.pdf"
		check_status 2 "$cmd ${opt%%=*}=VALUE is a usage error"
	done
	for opt in -p -P -u -U -O --password --user-password --new-user-password \
		--new-owner-password --owner-password; do
		prun "$PDFSTAMP" "$cmd" "$opt" "$ARGV_PW" -o "$T/argv-out.pdf" "$S/r6-table.pdf"
		check_status 2 "$cmd $opt VALUE is a usage error"
	done
done
check_true test ! -e "$T/argv-out.pdf" "no output was written by any of the usage errors"
cat "$LOGS"/* >"$T/argv-logs"
check_no_grep "$ARGV_PW" "$T/argv-logs" "the value given on the command line is never echoed"

# A password too long to be one is refused without being shown.
LONG_PW=$(python3 -c 'import sys; print("LongPw-" + sys.argv[1] * 300)' "$(tok)")   # > CLI_PW_MAX
printf '%s\n' "$LONG_PW" >"$PWD_DIR/long"
prun "$PDFSTAMP" info --password-file "$PWD_DIR/long" "$S/r6-table.pdf"
check_status 2 "an over-long password is a usage error"
check_no_grep "${LONG_PW:0:40}" "$T/err" "an over-long password is not echoed"

# ---------------------------------------------------------------------------
# (d) setup: a plaintext PDF with canaries, encrypted by qpdf with the
# streams left uncompressed and without object streams, so that any
# plaintext that reaches an output would be visible in its raw bytes.
SRC=$T/src
W=$T/w
mkdir -p "$SRC" "$W"
python3 "$H" mkplain "$SRC/plain.pdf" "$CANARY"
if ! qpdf --check "$SRC/plain.pdf" >"$T/q.out" 2>&1; then
	fail "the canary PDF passes qpdf --check" "$(head -c 600 "$T/q.out")"
fi
if ! qpdf --compress-streams=n --object-streams=disable \
	--encrypt "$U_PW" "$O_PW" 256 -- "$SRC/plain.pdf" "$W/in.pdf" >"$T/q.out" 2>&1; then
	fail "qpdf encrypts the canary PDF" "$(head -c 600 "$T/q.out")"
	finish
fi
check_no_grep "$CANARY" "$W/in.pdf" "setup: the qpdf-encrypted input shows no canary"
cp "$SRC/plain.pdf" "$W/plain.pdf.src"   # removed again before the scans

# key FILE PWFILE: the file key as qpdf reports it (hex).
key() {
	qpdf --show-encryption-key --show-encryption --password-file="$2" "$1" 2>/dev/null |
		sed -n 's/^Encryption key = //p'
}
# decrypted FILE PWFILE OUT: qpdf's decrypted, uncompressed form.
decrypted() {
	qpdf --password-file="$2" --decrypt --stream-data=uncompress --object-streams=disable \
		"$1" "$3" >/dev/null 2>&1
	[ -s "$3" ]
}
# has_all FILE DESC CANARY-SUFFIX...: the decrypted text contains each canary.
has_all() {
	local f=$1 desc=$2 s missing=
	shift 2
	for s in "$@"; do
		grep -aq -- "$CANARY-$s" "$f" || missing="$missing $s"
	done
	check_eq "${missing# }" "" "$desc"
}

KEY_IN=$(key "$W/in.pdf" "$PWD_DIR/o")
check_ne "$KEY_IN" "" "setup: qpdf shows the input's file key"

# stamp -o, with --json and with -v; then --in-place on a copy.
prun "$PDFSTAMP" stamp --password-file "$PWD_DIR/u" --json --page all \
	--text "$CANARY-stamptext" --note "$CANARY-stampnote" --author "$CANARY-author" \
	-o "$W/stamped.pdf" "$W/in.pdf"
check_status 0 "stamp -o --json"
prun "$PDFSTAMP" stamp --password-file "$PWD_DIR/u" -v --text "$CANARY-stamptext2" \
	-o "$W/stamped-v.pdf" "$W/in.pdf"
check_status 0 "stamp -o -v"
cp "$W/in.pdf" "$W/inplace.pdf"
SECRETS_PW=$U_PW prun "$PDFSTAMP" stamp --password-env SECRETS_PW --json \
	--text "$CANARY-inplace" -i "$W/inplace.pdf"
check_status 0 "stamp --in-place --json, password from --password-env"
# meta -o --xmp (a new XMP stream holds the values too).
prun "$PDFSTAMP" meta --password-file "$PWD_DIR/u" --json --xmp \
	--set "Title=$CANARY-metatitle" --set "CanaryKey=$CANARY-metacustom" \
	-o "$W/meta.pdf" "$W/in.pdf"
check_status 0 "meta -o --xmp --json"
prun "$PDFSTAMP" meta --password-file "$PWD_DIR/u" -v --set "Subject=$CANARY-metasubject" \
	-o "$W/meta-v.pdf" "$W/in.pdf"
check_status 0 "meta -o -v"
# rotate and encrypt.
SECRETS_PW=$O_PW prun "$PDFSTAMP" rotate --password-env SECRETS_PW --json -q -j 2 "${NEW[@]}" \
	-o "$W/rotated.pdf" "$W/in.pdf"
check_status 0 "rotate -o --json"
prun "$PDFSTAMP" rotate --password-file "$PWD_DIR/o" -v -q "${NEW[@]}" -o "$W/rotated-v.pdf" "$W/in.pdf"
check_status 0 "rotate -o -v"
prun "$PDFSTAMP" encrypt --json -q "${NEW[@]}" -o "$W/encrypted.pdf" "$W/plain.pdf.src"
check_status 0 "encrypt -o --json"
prun "$PDFSTAMP" verify --password-file "$PWD_DIR/nu" --json "$W/rotated.pdf"
check_status 0 "verify --json of the rotated file"

# The canaries really were written: qpdf decrypts them back.
D=$T/dec
mkdir -p "$D"
if decrypted "$W/stamped.pdf" "$PWD_DIR/u" "$D/stamped.pdf"; then
	has_all "$D/stamped.pdf" "stamp: the decrypted output holds the input's and the stamp's canaries" \
		content title pagestring stamptext stampnote author
else
	fail "stamp: qpdf decrypts the output"
fi
if decrypted "$W/inplace.pdf" "$PWD_DIR/u" "$D/inplace.pdf"; then
	has_all "$D/inplace.pdf" "stamp --in-place: the decrypted file holds the canaries" content inplace
else
	fail "stamp --in-place: qpdf decrypts the file"
fi
if decrypted "$W/meta.pdf" "$PWD_DIR/u" "$D/meta.pdf"; then
	has_all "$D/meta.pdf" "meta: the decrypted output holds the new values (Info and XMP)" \
		content metatitle metacustom
	check_true test "$(grep -ac -- "$CANARY-metatitle" "$D/meta.pdf")" -ge 2 \
		"meta: the title is in the Info dictionary and in the XMP stream"
else
	fail "meta: qpdf decrypts the output"
fi
for f in rotated encrypted; do
	if decrypted "$W/$f.pdf" "$PWD_DIR/no" "$D/$f.pdf"; then
		has_all "$D/$f.pdf" "$f: the decrypted output holds the canaries" content title pagestring
	else
		fail "$f: qpdf decrypts the output with the new owner password"
	fi
done
KEY_ROT=$(key "$W/rotated.pdf" "$PWD_DIR/no")
KEY_ROTV=$(key "$W/rotated-v.pdf" "$PWD_DIR/no")
KEY_ENC=$(key "$W/encrypted.pdf" "$PWD_DIR/no")
check_ne "$KEY_ROT" "" "qpdf shows the rotated file's key"
check_ne "$KEY_ROT" "$KEY_IN" "rotate: a new file key"
check_eq "$(key "$W/stamped.pdf" "$PWD_DIR/o")" "$KEY_IN" "stamp keeps the file key"

# Kill -9 in the middle: whatever is left must not hold plaintext either.
K=$T/k
mkdir -p "$K"
cp "$W/in.pdf" "$K/in.pdf"
cp "$W/in.pdf" "$K/inplace.pdf"
if have_faults; then
PDFSTAMP_FAULT=kill:after-write prun "$PDFSTAMP_HOOKED" rotate --password-file "$PWD_DIR/o" -q "${NEW[@]}" \
	-o "$K/rotated.pdf" "$K/in.pdf"
check_eq "$RC" 137 "rotate killed at after-write"
PDFSTAMP_FAULT=kill:before-rename prun "$PDFSTAMP_HOOKED" meta --password-file "$PWD_DIR/u" --xmp \
	--set "Title=$CANARY-killedmeta" -o "$K/meta.pdf" "$K/in.pdf"
check_eq "$RC" 137 "meta -o killed before the rename"
PDFSTAMP_FAULT=kill:after-write prun "$PDFSTAMP_HOOKED" stamp --password-file "$PWD_DIR/u" \
	--text "$CANARY-killedstamp" -i "$K/inplace.pdf"
check_eq "$RC" 137 "stamp --in-place killed after the write (the update and its journal left)"
else
	skip "kill -9 in the middle of rotate, meta and stamp (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi

# The scans.  Needles: the canary, every password, every file key (raw and
# hex in both cases).
rm -f "$W/plain.pdf.src"
python3 - "$T/needles.json" "$CANARY" "$U_PW" "$O_PW" "$NU_PW" "$NO_PW" \
	"$KEY_IN" "$KEY_ROT" "$KEY_ROTV" "$KEY_ENC" <<'PY'
import json, sys
path, canary, *rest = sys.argv[1:]
pws, keys = rest[:4], [k for k in rest[4:] if k]
n = {"canary": canary.encode().hex(),
     "canary-utf16be": canary.encode("utf-16-be").hex()}
for i, p in enumerate(pws):
    n["password %d" % i] = p.encode().hex()
for i, k in enumerate(keys):
    n["key %d (bytes)" % i] = k.lower()
    n["key %d (hex)" % i] = k.lower().encode().hex()
    n["key %d (HEX)" % i] = k.upper().encode().hex()
json.dump(n, open(path, "w"))
PY
# Controls: the scanner finds the canary in the plaintext source (raw) and
# in a copy whose streams and strings qpdf compressed (object streams).
C=$T/control
mkdir -p "$C/raw" "$C/z"
cp "$SRC/plain.pdf" "$C/raw/"
qpdf --compress-streams=y --object-streams=generate "$SRC/plain.pdf" "$C/z/z.pdf" >/dev/null 2>&1
check_no_grep "$CANARY" "$C/z/z.pdf" "control: the compressed copy shows no canary in its raw bytes"
py scan-control "$C/raw" "$T/needles.json" "control: the scan finds the canary in plaintext" "canary (raw bytes)"
py scan-control "$C/z" "$T/needles.json" "control: the scan finds the canary in compressed streams" \
	"canary (in a stream that inflates"
py scan "$W" "$T/needles.json" "no canary, password or key in any output"
py scan "$K" "$T/needles.json" "no canary, password or key in what a kill -9 leaves"
# (A kill between linkat and rename leaves a named temporary file by design,
# io.c; faults.sh judges leftovers.  Here it only matters what they hold.)
echo "       scanned after the kills: $(cd "$K" && ls -A | tr '\n' ' ')"

# ---------------------------------------------------------------------------
# (b) A wrong password is not repeated in the message.
for cmd in info verify stamp meta rotate; do
	extra=()
	case $cmd in
	stamp) extra=(-o "$T/wrong-out.pdf") ;;
	meta) extra=(--set Title=x -o "$T/wrong-out.pdf") ;;
	rotate) extra=("${NEW[@]}" -o "$T/wrong-out.pdf") ;;
	esac
	prun "$PDFSTAMP" "$cmd" --password-file "$PWD_DIR/wrong" "${extra[@]}" "$W/in.pdf"
	check_status 3 "$cmd with a wrong password"
	check_no_grep "${WRONG_PW#WrongPw-}" "$T/err" "$cmd: the wrong password is not in the message"
	SECRETS_PW=$WRONG_PW prun "$PDFSTAMP" "$cmd" --password-env SECRETS_PW "${extra[@]}" "$W/in.pdf"
	check_status 3 "$cmd with a wrong password from --password-env"
done
check_true test ! -e "$T/wrong-out.pdf" "no output after a wrong password"

# ---------------------------------------------------------------------------
# (c) (e) (f) The process itself: environment, argv, core limit, memory.
# pdfstamp makes itself non-dumpable, so only root may read its memory and
# /proc files: as another user (a package build) these checks cannot run.
if [ "$(id -u)" != 0 ]; then
	echo "# (c) (e) (f) skipped: reading a non-dumpable process's memory needs root"
elif [ ! -x "$MA" ]; then
	fail "bench/make-archive is built (TOP_BUILDDIR=${TOP_BUILDDIR:-unset})"
else
	A=$T/a
	mkdir -p "$A"
	# U+FB01 (the "fi" ligature) becomes "fi" under SASLprep's NFKC; the new
	# user password is plain ASCII, the other two are not.
	MO_TOK=$(tok)
	MU_TOK=$(tok)
	MN_TOK=$(tok)
	M_OLD="MemOld-$MO_TOK-"$'\xef\xac\x81'"x"
	M_NU="MemNewUser-$MU_TOK-ascii"   # ASCII: SASLprep leaves it as it is
	M_NO="MemNewOwner-$MN_TOK-"$'\xef\xac\x81'"x"
	printf '%s\n' "MemUser-$(tok)" >"$PWD_DIR/mu"
	printf '%s\n' "$M_OLD" >"$PWD_DIR/mo"
	if ! "$MA" --quiet --pages 20 --small 20000 --large 20 --payload 200M \
		--user-password-file "$PWD_DIR/mu" --owner-password-file "$PWD_DIR/mo" \
		-o "$A/big.pdf" >"$T/ma.out" 2>&1; then
		fail "make-archive writes the 200 MB archive" "$(head -c 600 "$T/ma.out")"
	else
		# Make the core-limit check meaningful: raise our soft limit.
		ulimit -S -c unlimited 2>/dev/null || ulimit -S -c "$(ulimit -H -c)" 2>/dev/null || true
		memlock_ok=0
		ml=$(ulimit -l)
		if [ "$ml" = unlimited ] || [ "$ml" -ge 64 ]; then
			memlock_ok=1
		fi
		python3 - "$T/spec.json" "$M_OLD" "$M_NU" "$M_NO" "$MO_TOK" "$MU_TOK" "$MN_TOK" \
			"$LOGS/mem.out" "$LOGS/mem.err" "$(ulimit -c)" "$memlock_ok" "Control-$(tok)" <<'PY'
import json, sys
path, old, nu, no, to, tu, tn, so, se, core, ml, control = sys.argv[1:]
# the control: an ordinary variable nobody wipes, so the scans must see it
needles, pws = {"control": control.encode().hex()}, {}
for name, pw, t in (("the old owner password", old, to), ("the new user password", nu, tu),
                    ("the new owner password", no, tn)):
    k = name.split()[1] + "-" + name.split()[2]
    utf8 = {k + " raw": pw, k + " prepared": pw.replace("\ufb01", "fi")}
    other = {k + " token UCS-4LE": t.encode("utf-32-le"), k + " token UTF-16BE": t.encode("utf-16-be"),
             k + " token UTF-16LE": t.encode("utf-16-le")}
    for n, v in utf8.items():
        needles[n] = v.encode().hex()
    for n, v in other.items():
        needles[n] = v.hex()
    needles[k + " token"] = t.encode().hex()
    pws[name] = {"token": k + " token", "utf8": sorted(utf8), "other": sorted(other)}
json.dump({"needles": needles, "passwords": pws, "wchar": 20 << 20, "timeout": 120,
           "env": {"SECRETS_OLD": old, "SECRETS_NU": nu, "SECRETS_NO": no,
                   "SECRETS_CONTROL": control},
           "stdout": so, "stderr": se, "core_before": core, "memlock_ok": ml == "1"},
          open(path, "w"))
PY
		py memcheck "$T/spec.json" -- "$PDFSTAMP" rotate -j 1 -q --password-env SECRETS_OLD \
			--new-user-password-env SECRETS_NU --new-owner-password-env SECRETS_NO \
			-o "$A/rotated.pdf" "$A/big.pdf"
		# The output opens with the prepared new owner password.
		SECRETS_PW="MemNewOwner-$MN_TOK-fix" prun "$PDFSTAMP" info --json --password-env SECRETS_PW "$A/rotated.pdf"
		check_status 0 "memory: the rotated archive opens with the new owner password"
		check_eq "$(jget "$T/out" 'd["authenticated_as"]')" '"owner"' "memory: ... as owner"
		rm -f "$A/big.pdf" "$A/rotated.pdf"
	fi
fi

# ---------------------------------------------------------------------------
# (b) continued: no password of this script in any output of any run.
for p in "$U_PW" "$O_PW" "$NU_PW" "$NO_PW" "$WRONG_PW" "${M_OLD:-}" "${M_NU:-}" "${M_NO:-}"; do
	[ -n "$p" ] || continue
	# the random part is enough (and survives any re-encoding of the prefix)
	t=${p#*-}
	t=${t%%-*}
	if grep -rlaq -- "$t" "$LOGS"; then
		fail "no run printed the password ${p%%-*}-..." "in: $(grep -rla -- "$t" "$LOGS" | tr '\n' ' ')"
	else
		ok "no run printed the password ${p%%-*}-..."
	fi
done

finish
