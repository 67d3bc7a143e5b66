#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/json.sh - the one shape of every command's --json lines, and the
# README kept in step with the program (issue 17).
#
# Every command with --json (info, stamp, meta, rotate, encrypt, verify,
# recover) is run once on a file that succeeds and on files that fail.
# Each line must parse as JSON and start with "file" and "ok"; a success has
# "ok":true and neither "exit" nor "error"; a failure has "ok":false, a
# number "exit" (1..5) and a non-empty string "error" (and only those keys,
# except verify's report for a file with faults); the process exits with
# the worst "exit".  So `select(.ok | not)` picks exactly the failures:
# checked in Python on every command, and with the README's own jq recipe
# (copied out of README.md) when jq is installed.  Last, every command that
# `pdfstamp --help` lists appears in the README's synopsis.
# Needs only python3 and the shipped samples.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3

S=$TOP_SRCDIR/samples
README=$TOP_SRCDIR/README.md

# check.py OUT RC KIND...: OUT holds one line per KIND ("ok", "fail" or
# "fault": verify's failure line with its report), in order; RC is the
# process's exit status.
cat >"$T/check.py" <<'PY'
import json, sys

out, rc, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
name = out.rsplit("/", 1)[-1]

def res(good, desc, detail=""):
    print("%s\t%s: %s\t%s" % ("OK" if good else "FAIL", name, desc, detail))

text = open(out, encoding="ascii").read()
lines = text.split("\n")
if lines and lines[-1] == "":
    lines.pop()
res(len(lines) == len(kinds), "one line per file",
    "%d lines for %d files" % (len(lines), len(kinds)))
objs = []
for i, line in enumerate(lines):
    try:
        d = json.loads(line)
    except ValueError as e:
        res(False, "line %d parses as JSON" % (i + 1), "%s: %r" % (e, line[:200]))
        continue
    objs.append(d)
    kind = kinds[i] if i < len(kinds) else "?"
    keys = list(d)
    res(keys[:2] == ["file", "ok"], "line %d starts with file, ok" % (i + 1), keys)
    if kind == "ok":
        res(d.get("ok") is True and "exit" not in d and "error" not in d,
            "line %d is a success line" % (i + 1), line[:300])
    else:
        e, m = d.get("exit"), d.get("error")
        res(d.get("ok") is False and type(e) is int and 1 <= e <= 5
            and isinstance(m, str) and m != "",
            "line %d is a failure line (ok false, exit, error)" % (i + 1), line[:300])
        if kind == "fail":
            res(sorted(d) == ["error", "exit", "file", "ok"],
                "line %d has exactly file, ok, exit, error" % (i + 1), sorted(d))
        else:
            res(keys[:4] == ["file", "ok", "exit", "error"] and e == 4 and
                d.get("faults", 0) > 0,
                "line %d: verify's faults with exit 4 and error first" % (i + 1),
                line[:300])
# jq's select(.ok | not): false, null and a missing key all select.
picked = [i for i, d in enumerate(objs) if not d.get("ok")]
want = [i for i, k in enumerate(kinds) if k != "ok"]
res(picked == want, "select(.ok | not) picks exactly the failures",
    "picked lines %s, failures %s" % (picked, want))
worst = max([d.get("exit", 0) for d in objs] + [0])
res(rc == worst, "the exit status is the worst exit of the lines",
    "exit %d, worst line %d" % (rc, worst))
PY

ALL=$T/all.jsonl
: >"$ALL"
: >"$T/failed.expected"

# jcheck NAME KIND...: checks $T/out of the last run; keeps it in $ALL.
jcheck() {
	local name=$1 k i=0
	shift
	cp "$T/out" "$T/$name.jsonl"
	checker_feed "$T/check.py" "$T/$name.jsonl" "$RC" "$@"
	cat "$T/out" >>"$ALL"
	for k in "$@"; do
		i=$((i + 1))
		if [ "$k" != ok ]; then
			python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[int(sys.argv[2])-1])["file"])' \
				"$T/out" "$i" >>"$T/failed.expected"
		fi
	done
}

cp "$S/r6-table.pdf" "$T/enc.pdf"
cp "$S/plain-2page.pdf" "$T/plain.pdf"
head -c 3000 /dev/urandom >"$T/garbage.pdf"
printf 'not the password\n' >"$T/wrong.pw"
printf 'json-user\n' >"$T/nu.pw"
printf 'json-owner\n' >"$T/no.pw"
NEWPW=(--new-user-password-file "$T/nu.pw" --new-owner-password-file "$T/no.pw")
# /P edited without /Perms: verify counts a fault (exit 4), stamp and meta
# refuse it (exit 4).
cp "$S/r6-table.pdf" "$T/tampered.pdf"
python3 - "$T/tampered.pdf" <<'PY' || fail "could not tamper with /P of r6-table.pdf"
import sys
p = sys.argv[1]
d = open(p, "rb").read()
assert d.count(b"/P -4 ") == 1
open(p, "wb").write(d.replace(b"/P -4 ", b"/P -8 "))
PY

# info: a file, a missing one, a wrong password is tested in info.sh.
run "$PDFSTAMP" info --json --ordered --password-file "$S/user.pw" "$T/enc.pdf" "$T/missing.pdf" "$T/garbage.pdf"
jcheck info ok fail fail

# verify: a good file, one with a fault, one that cannot be opened.
run "$PDFSTAMP" verify --json --ordered --password-file "$S/user.pw" "$T/enc.pdf" "$T/tampered.pdf" "$T/garbage.pdf"
jcheck verify ok fault fail
check_eq "$(python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read().split("\n")[1])
print("pdfstamp: %s (%s)" % (d["error"], d["file"]) in open(sys.argv[2]).read().split("\n"))' \
	"$T/verify.jsonl" "$T/err")" True \
	"verify: error is the message on stderr for the file with faults"

# stamp and meta: -i on a good copy, the tampered file and garbage.
cp "$T/tampered.pdf" "$T/tampered-stamp.pdf"
run "$PDFSTAMP" stamp -i --json --ordered --password-file "$S/user.pw" "$T/enc.pdf" \
	"$T/tampered-stamp.pdf" "$T/garbage.pdf"
jcheck stamp ok fail fail
run "$PDFSTAMP" meta -i --json --ordered --set Title=json --password-file "$S/owner.pw" "$T/enc.pdf" "$T/garbage.pdf"
jcheck meta ok fail

# The library's messages name no option (issue 30); the command adds the
# one that lifts the refusal (pdfstamp_ctx_errhint), on stderr and in the
# --json line alike, and only when it has that option: audit has no --force.
hint_check() { # HINT DESC: the last run's message ends in " (HINT)", on stderr and in the --json line
	check_grep "\\($1\\) \\(.*\\)\$" "$T/err" "$2: stderr names the option"
	check_eq "$(python3 -c 'import json, sys
print(json.loads(open(sys.argv[1]).readline())["error"].endswith(" (%s)" % sys.argv[2]))' "$T/out" "$1")" \
		True "$2: the --json error names it too"
}
cp "$T/tampered.pdf" "$T/tampered-hint.pdf"
run "$PDFSTAMP" stamp -i --json --password-file "$S/user.pw" "$T/tampered-hint.pdf"
check_status 4 "stamp of a /Perms mismatch"
hint_check "--force overrides" "stamp of a /Perms mismatch"
run "$PDFSTAMP" audit --json --password-file "$S/user.pw" "$T/tampered.pdf"
check_status 4 "audit of a /Perms mismatch"
check_grep 'tampered with \(.*tampered.pdf\)$' "$T/err" "audit of a /Perms mismatch: the library's message"
check_no_grep '[-][-]force' "$T/err" "audit of a /Perms mismatch: no --force, which audit does not have"
cp "$T/enc.pdf" "$T/trailing.pdf"
printf 'JUNK-AFTER-EOF' >>"$T/trailing.pdf"
run "$PDFSTAMP" stamp --json --password-file "$S/user.pw" -o "$T/trailing-out.pdf" "$T/trailing.pdf"
check_status 4 "stamp after trailing bytes"
check_grep 'follow the last %%EOF; refusing to append after them \(' "$T/err" \
	"stamp after trailing bytes: the library's message"
hint_check "--allow-trailing-bytes keeps them and appends anyway" "stamp after trailing bytes"
run "$PDFSTAMP" stamp --json --text "$(printf 'ok \364\217\277\275')" -o "$T/nofont-out.pdf" "$T/plain.pdf"
check_status 2 "stamp of a character no font has (U+10FFFD)"
hint_check "give one with --font" "stamp of a character no font has"

# rotate: the owner password; the second file does not open.
cp "$S/r6-table.pdf" "$T/rot.pdf"
run "$PDFSTAMP" rotate -i --json -q --password-file "$S/owner.pw" "${NEWPW[@]}" "$T/rot.pdf" "$T/garbage.pdf"
jcheck rotate ok fail
# A wrong password: the same shape, exit 3.
run "$PDFSTAMP" rotate --json -q --password-file "$T/wrong.pw" "${NEWPW[@]}" -o "$T/rot2.pdf" "$S/r6-table.pdf"
jcheck rotate-wrong fail
check_eq "$(jget "$T/rotate-wrong.jsonl" 'd["exit"]')" 3 "rotate with a wrong password: exit 3 in the line"

# encrypt: a plaintext file; an encrypted one is refused (use rotate).
cp "$S/r6-table.pdf" "$T/enc2.pdf"
run "$PDFSTAMP" encrypt -i --json -q "${NEWPW[@]}" "$T/plain.pdf" "$T/enc2.pdf"
jcheck encrypt ok fail

# recover: nothing to do; a journal it does not trust (left alone).
cp "$S/r6-table.pdf" "$T/rec.pdf"
cp "$S/r6-table.pdf" "$T/rec-foreign.pdf"
head -c 200 /dev/urandom >"$T/rec-foreign.pdf.pdfstamp-journal"
chmod 600 "$T/rec-foreign.pdf.pdfstamp-journal"
run "$PDFSTAMP" recover --json "$T/rec.pdf" "$T/rec-foreign.pdf"
jcheck recover ok fail
check_true test -f "$T/rec-foreign.pdf.pdfstamp-journal" "recover: the foreign journal is left alone"

# No line of any command has the old object-valued "error" of info.
check_eq "$(python3 -c '
import json, sys
print(sum(isinstance(json.loads(l).get("error"), dict) for l in open(sys.argv[1]) if l.strip()))' "$ALL")" 0 \
	"no line has an object as error (the old info shape)"

# ---------------------------------------------------------------------------
# Lists are whole (the library's result structs hold them with no fixed
# cap since issue 12): 70 stamped pages list 70 objects, and 66 revisions
# 66 cross-reference kinds (both stopped at 64 before).
if command -v qpdf >/dev/null 2>&1; then
	pages=()
	for i in $(seq 35); do pages+=("$S/plain-2page.pdf"); done
	qpdf --empty --pages "${pages[@]}" -- "$T/p70.pdf"
	run "$PDFSTAMP" stamp --json --page all -o "$T/p70-out.pdf" "$T/p70.pdf"
	check_status 0 "stamp --page all on 70 pages"
	check_eq "$(jget "$T/out" 'len(d["objects"])')" 70 "stamp --json: all 70 annotations in objects"
else
	skip "qpdf is not installed: 70-page stamp"
fi
cp "$S/plain-2page.pdf" "$T/revs.pdf"
for i in $(seq 65); do
	"$PDFSTAMP" meta -i --set "Title=rev $i" "$T/revs.pdf" || break
done
run "$PDFSTAMP" info --json "$T/revs.pdf"
check_eq "$(jget "$T/out" '[d["revisions"], len(d["xref_kinds"])]')" "[66, 66]" \
	"info --json: one xref kind per revision beyond 64"
run "$PDFSTAMP" info "$T/revs.pdf"
check_no_grep ', \.\.\.)' "$T/out" "info: every revision's kind is listed"

# ---------------------------------------------------------------------------
# The README's recipe, as written there, over the lines of all commands.
if command -v jq >/dev/null 2>&1; then
	mkdir -p "$T/jq"
	cp "$ALL" "$T/jq/stamp.jsonl"
	grep -E "^jq -r 'select\\(\\.ok \\| not\\)" "$README" >"$T/recipes"
	check_eq "$(wc -l <"$T/recipes" | tr -d ' ')" 2 "README: the two jq recipes are found"
	n=0
	while IFS= read -r recipe; do
		n=$((n + 1))
		(cd "$T/jq" && bash -c "$recipe") >"$T/recipe$n.out" 2>"$T/recipe$n.err"
		check_eq "$?" 0 "README recipe $n runs: $recipe"
	done <"$T/recipes"
	# 1: exit TAB file TAB error, one line per failure, no nulls.
	check_eq "$(wc -l <"$T/recipe1.out" | tr -d ' ')" "$(wc -l <"$T/failed.expected" | tr -d ' ')" \
		"README recipe 1: one line per failure"
	check_no_grep 'null' "$T/recipe1.out" "README recipe 1: exit, file and error are all there"
	check_eq "$(grep -cvE $'^[1-5]\t[^\t]+\t[^\t]+$' "$T/recipe1.out")" 0 \
		"README recipe 1: every line is exit TAB file TAB error"
	# 2: the retry list holds exactly the failed files.
	check_eq "$(cat "$T/jq/retry.list" 2>/dev/null)" "$(cat "$T/failed.expected")" \
		"README recipe 2: retry.list lists exactly the failed files"
else
	echo "# jq is not installed: the README's recipe itself is not run (Python checked the same)"
fi

# ---------------------------------------------------------------------------
# The README's synopsis lists every command of `pdfstamp --help`, and
# nothing else.
run "$PDFSTAMP" --help
check_status 0 "--help"
cat >"$T/synopsis.py" <<'PY'
import re, sys
help_text = open(sys.argv[1]).read()
readme = open(sys.argv[2], encoding="utf-8").read()
cmds = re.findall(r"^  ([a-z]+) ", help_text.split("Commands:\n", 1)[1].split("\n\n", 1)[0], re.M)
usage = readme.split("\n## Usage\n", 1)[1]
block = usage.split("```\n", 2)[1]
listed = re.findall(r"^pdfstamp ([a-z]+)\b", block, re.M)
print("%s\tpdfstamp --help lists commands\t%s" % ("OK" if len(cmds) >= 7 else "FAIL", cmds))
for c in cmds:
    print("%s\tREADME synopsis lists '%s'\t%s" % ("OK" if c in listed else "FAIL", c, listed))
extra = [c for c in listed if c not in cmds]
print("%s\tREADME synopsis lists no other command\t%s" % ("FAIL" if extra else "OK", extra))
PY
checker_feed "$T/synopsis.py" "$T/out" "$README"

finish
