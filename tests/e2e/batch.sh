#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/batch.sh - many files at a time (issue 34): --jobs, --ordered,
# --shard and --ledger.
#
#   A. --jobs: every file gets exactly one whole line, the exit status is
#      the worst one, each good file one more revision that qpdf reads,
#      and the same work with --jobs 1 and --jobs 4 gives the same lines.
#   B. --ordered prints in the order of the files, whatever finishes first.
#   C. --shard K/N: N runs take every file exactly once, the same way twice.
#   D. Usage errors of the four options (exit 2, nothing touched).
#   E. --ledger: a second run skips what the first did, without touching
#      it; other options do the work again; a file changed since is
#      refused; a ledger of another user or behind a symbolic link is
#      refused; unreadable lines are warned about and ignored.
#   F. Killed runs (the PDFSTAMP_FAULT hook, at each phase of an in-place
#      update, two workers) run again with the same command: every file
#      ends with exactly one stamp, no journal left, every file has its
#      done line, and qpdf --check passes.
#   G. A journal the ledger has no intent for (another run's update) is
#      completed by recovery and the file is reported, not stamped again.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf

e2e_inputs qpdf-r6-table
SRC=$D/qpdf-r6-table.pdf

# revs FILE: the number of cross-reference sections (startxref keywords).
revs() { python3 -c 'import sys; print(open(sys.argv[1], "rb").read().count(b"startxref"))' "$1"; }
BASE=$(revs "$SRC")

# fresh DIR N: DIR with N copies f01.pdf ... of the input.
fresh() {
	rm -rf "$1" && mkdir -p "$1"
	for i in $(seq -w 1 "$2"); do cp "$SRC" "$1/f$i.pdf"; done
}

# ---------------------------------------------------------------------------
# A. --jobs
# ---------------------------------------------------------------------------
W=$T/a
fresh "$W" 12
head -c 1500 "$SRC" >"$W/trunc.pdf"
ls "$W"/f*.pdf >"$T/list"
printf '%s\n' "$W/trunc.pdf" "$W/missing.pdf" >>"$T/list"
run "$PDFSTAMP" stamp -i --json --jobs 3 --password-file "$UPW" --files-from "$T/list"
check_status 4 "--jobs 3: the worst status (a truncated file, 4; a missing one, 1)"
checker_feed /dev/stdin "$T/out" "$T/list" <<'PY'
import json, sys
def res(ok, desc, detail=""):
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == ""
objs = [json.loads(l) for l in lines[:-1]]
want = [l for l in open(sys.argv[2]).read().split("\n") if l]
res(sorted(o["file"] for o in objs) == sorted(want), "--jobs 3: one line per file, each whole JSON",
    "%d lines for %d files" % (len(objs), len(want)))
bad = {o["file"]: o.get("exit") for o in objs if not o["ok"]}
res(bad == {want[-2]: 4, want[-1]: 1}, "--jobs 3: the two failures with their statuses", str(bad))
PY
n=0
for f in "$W"/f*.pdf; do
	[ "$(revs "$f")" = $((BASE + 1)) ] && qpdf --check --password-file="$UPW" "$f" >/dev/null 2>&1 &&
		n=$((n + 1))
done
check_eq "$n" 12 "--jobs 3: every good file has one more revision, and qpdf --check passes"

run "$PDFSTAMP" info --json --ordered --jobs 1 --password-file "$UPW" "$W"/f*.pdf
check_status 0 "info --jobs 1"
cp "$T/out" "$T/info1"
run "$PDFSTAMP" info --json --ordered --jobs 4 --password-file "$UPW" "$W"/f*.pdf
check_status 0 "info --jobs 4"
check_true cmp -s "$T/out" "$T/info1" "info: --jobs 4 --ordered prints what --jobs 1 prints"
run "$PDFSTAMP" verify --json --jobs 2 --password-file "$UPW" "$W"/f*.pdf
check_status 0 "verify --jobs 2 of the stamped files"
check_eq "$(grep -c '"ok":true' "$T/out")" 12 "verify --jobs 2: twelve reports"

# ---------------------------------------------------------------------------
# B. --ordered: the first file is the largest, so it finishes last
# ---------------------------------------------------------------------------
W=$T/b
mkdir -p "$W"
GEN=$TOP_BUILDDIR/bench/make-archive
printf 'user\n' >"$T/gen.pw"
"$GEN" --quiet --pages 40 --large 40 --payload 40M -o "$W/f1.pdf" &&
	for i in 2 3 4 5 6; do "$GEN" --quiet --pages 2 -o "$W/f$i.pdf" || exit 1; done ||
	fail "make-archive"
ls "$W"/f*.pdf >"$T/list"
run "$PDFSTAMP" verify --json --jobs 3 --password-file "$T/gen.pw" --files-from "$T/list"
check_status 0 "verify --jobs 3"
check_ne "$(jget "$T/out" 'd["file"]' 1)" "\"$W/f1.pdf\"" \
	"without --ordered: the large first file is not printed first"
run "$PDFSTAMP" verify --json --ordered --jobs 3 --password-file "$T/gen.pw" --files-from "$T/list"
check_eq "$(python3 -c 'import json,sys; print([json.loads(l)["file"] for l in open(sys.argv[1])])' \
	"$T/out")" "$(python3 -c 'import sys; print(open(sys.argv[1]).read().split())' "$T/list")" \
	"--ordered: the lines in the order of the files"

# ---------------------------------------------------------------------------
# C. --shard
# ---------------------------------------------------------------------------
W=$T/c
fresh "$W" 40
for k in 1 2 3; do
	run "$PDFSTAMP" info --json --ordered --shard "$k/3" --password-file "$UPW" "$W"/f*.pdf
	check_status 0 "--shard $k/3"
	python3 -c 'import json,sys; [print(json.loads(l)["file"]) for l in open(sys.argv[1])]' \
		"$T/out" >"$T/shard$k"
done
run "$PDFSTAMP" info --json --ordered --shard 2/3 --password-file "$UPW" "$W"/f*.pdf
python3 -c 'import json,sys; [print(json.loads(l)["file"]) for l in open(sys.argv[1])]' \
	"$T/out" >"$T/shard2b"
check_true cmp -s "$T/shard2" "$T/shard2b" "--shard: the same shard twice takes the same files"
check_eq "$(cat "$T/shard1" "$T/shard2" "$T/shard3" | sort | uniq | wc -l)" 40 \
	"--shard: three shards take all 40 files"
check_eq "$(cat "$T/shard1" "$T/shard2" "$T/shard3" | wc -l)" 40 "--shard: each file once"
check_true test -s "$T/shard1" -a -s "$T/shard2" -a -s "$T/shard3" "--shard: no shard is empty"

# ---------------------------------------------------------------------------
# D. usage errors
# ---------------------------------------------------------------------------
W=$T/d
fresh "$W" 1
cp "$W/f1.pdf" "$T/d.orig"
for bad in "--jobs 0" "--jobs 1025" "--jobs x" "--shard 0/3" "--shard 4/3" "--shard 1/0" \
	"--shard 3" "--shard 1/2/3"; do
	# shellcheck disable=SC2086
	run "$PDFSTAMP" stamp -i --password-file "$UPW" $bad "$W/f1.pdf"
	check_status 2 "stamp $bad: a usage error"
done
check_true cmp -s "$W/f1.pdf" "$T/d.orig" "usage errors: the file is untouched"

# ---------------------------------------------------------------------------
# E. --ledger
# ---------------------------------------------------------------------------
W=$T/e
L=$T/ledger
fresh "$W" 6
run "$PDFSTAMP" stamp -i --json --jobs 2 --ledger "$L" --password-file "$UPW" "$W"/f*.pdf
check_status 0 "ledger: first run"
check_eq "$(stat -c %a "$L")" 600 "ledger: mode 0600"
check_eq "$(grep -c '"state":"done"' "$L")" 6 "ledger: six done lines"
check_eq "$(grep -c '"state":"intent"' "$L")" 6 "ledger: six intent lines"
for f in "$W"/f*.pdf; do cp "$f" "$f.after1"; done
run "$PDFSTAMP" stamp -i --json --jobs 2 --ledger "$L" --password-file "$UPW" "$W"/f*.pdf
check_status 0 "ledger: second run"
check_eq "$(grep -c '"skipped":"done in the ledger"' "$T/out")" 6 "ledger: every file skipped"
n=0
for f in "$W"/f*.pdf; do cmp -s "$f" "$f.after1" && n=$((n + 1)); done
check_eq "$n" 6 "ledger: skipped files are untouched"
run "$PDFSTAMP" stamp -i --json --ledger "$L" --text OTHER --password-file "$UPW" "$W/f1.pdf"
check_status 0 "ledger: other options"
check_eq "$(revs "$W/f1.pdf")" $((BASE + 2)) "ledger: other options do the work again"
run "$PDFSTAMP" stamp -i --json --ledger "$L" --password-file "$UPW" -v "$W/f2.pdf"
check_grep '"skipped"' "$T/out" "ledger: --json and -v are not part of the fingerprint"
printf '%%comment\n' >>"$W/f3.pdf"
cp "$W/f3.pdf" "$T/f3.changed"
run "$PDFSTAMP" stamp -i --json --ledger "$L" --password-file "$UPW" "$W/f3.pdf"
check_status 1 "ledger: a file changed since its done line is refused"
check_grep 'changed since' "$T/err" "ledger: the refusal says why"
check_true cmp -s "$W/f3.pdf" "$T/f3.changed" "ledger: the changed file is untouched"
run "$PDFSTAMP" info --json --ledger "$T/info-ledger" --password-file "$UPW" "$W/f3.pdf"
run "$PDFSTAMP" info --json --ledger "$T/info-ledger" --password-file "$UPW" "$W/f3.pdf"
check_grep '"skipped":"done in the ledger"' "$T/out" "ledger: info skips a file it read"
printf 'garbage\n{"ledger":1,"options":"zz"}\n' >>"$L"
run "$PDFSTAMP" stamp -i --json --ledger "$L" --password-file "$UPW" "$W/f4.pdf"
check_status 0 "ledger: unreadable lines are ignored"
check_grep '2 lines of the ledger could not be read' "$T/err" "ledger: ... with a warning"
ln -s "$L" "$T/ledger-link"
run "$PDFSTAMP" stamp -i --ledger "$T/ledger-link" --password-file "$UPW" "$W/f5.pdf"
check_status 2 "ledger: a symbolic link is refused"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp "$L" "$T/ledger-nobody"
	chown nobody "$T/ledger-nobody"
	run "$PDFSTAMP" stamp -i --ledger "$T/ledger-nobody" --password-file "$UPW" "$W/f5.pdf"
	check_status 2 "ledger: a ledger of another user is refused"
	check_grep 'regular file of this user' "$T/err" "ledger: ... saying why"
else
	skip "ledger of another user (needs root to make one)"
fi

# ---------------------------------------------------------------------------
# F. killed runs, run again
# ---------------------------------------------------------------------------
if have_faults; then
	for pt in after-journal after-write after-fsync fsync; do
		W=$T/f-$pt
		L=$T/ledger-$pt
		fresh "$W" 8
		RC=0
		PDFSTAMP_FAULT="kill:$pt:5" "$PDFSTAMP_HOOKED" stamp -i --json --jobs 2 --ledger "$L" \
			--password-file "$UPW" "$W"/f*.pdf >"$T/out" 2>"$T/err" || RC=$?
		check_eq "$RC" 137 "kill at $pt: killed"
		run "$PDFSTAMP" stamp -i --json --jobs 2 --ledger "$L" --password-file "$UPW" "$W"/f*.pdf
		check_status 0 "kill at $pt: the same command again"
		n=0
		for f in "$W"/f*.pdf; do
			[ "$(revs "$f")" = $((BASE + 1)) ] &&
				qpdf --check --password-file="$UPW" "$f" >/dev/null 2>&1 && n=$((n + 1))
		done
		check_eq "$n" 8 "kill at $pt: every file stamped exactly once, qpdf --check passes"
		check_eq "$(find "$W" -name '*.pdfstamp-journal' | wc -l)" 0 "kill at $pt: no journal left"
		checker_feed /dev/stdin "$L" "$W" <<'PY'
import json, os, sys
def res(ok, desc, detail=""):
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))
done = set()
for l in open(sys.argv[1], "rb").read().split(b"\n"):
    try:
        d = json.loads(l)
    except ValueError:
        continue
    if d.get("state") == "done":
        done.add(bytes.fromhex(d["name_hex"]).decode())
want = {os.path.join(sys.argv[2], x) for x in os.listdir(sys.argv[2]) if x.endswith(".pdf")}
res(done == want, "the ledger has a done line for every file", str(sorted(want - done)))
PY
	done
else
	skip "killed runs (no tests/pdfstamp-fault)"
fi

# ---------------------------------------------------------------------------
# G. a journal of another run
# ---------------------------------------------------------------------------
if have_faults; then
	W=$T/g
	fresh "$W" 1
	RC=0
	PDFSTAMP_FAULT="kill:after-fsync:1" "$PDFSTAMP_HOOKED" stamp -i --password-file "$UPW" \
		"$W/f1.pdf" >/dev/null 2>&1 || RC=$?
	check_eq "$RC" 137 "foreign journal: a run without a ledger killed after its fsync"
	run "$PDFSTAMP" stamp -i --json --ledger "$T/ledger-g" --password-file "$UPW" "$W/f1.pdf"
	check_status 1 "foreign journal: the file is reported"
	check_grep 'no record of starting' "$T/err" "foreign journal: ... saying why"
	check_eq "$(revs "$W/f1.pdf")" $((BASE + 1)) "foreign journal: completed, not stamped again"
fi

finish
