#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/recipes.sh - the README's batch recipes, as written there (issue
# 34; slow tier).
#
# Each ```sh block of README.md that starts with "# recipe: NAME" is copied
# out and run in a directory of its own over a fresh archive of 150 copies
# of an encrypted sample (in two folders), with `pdfstamp` on PATH and the
# password in ./pw:
#   - run once: exit 0, every file stamped exactly once (one more
#     revision, qpdf --check passes), stamp.jsonl one success line per file;
#   - killed half way (SIGKILL to the whole process group, by timeout) and
#     run again as written: the same, every file exactly once, and the
#     lines of both runs name every file, none twice as stamped.
# The first recipe also runs over 10,000 files, killed three times and run
# to the end: every file exactly once, the ledger complete (issue 34's goal).
# The Slurm recipe cannot be submitted here (no cluster): its sbatch
# script is copied out and its command run for every task of its array,
# with SLURM_ARRAY_TASK_ID set as Slurm would, and killed half way then
# run again for a few tasks; the union must stamp every file once.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need parallel
need xargs
need timeout

e2e_inputs qpdf-r6-table
SRC=$D/qpdf-r6-table.pdf
NFILES=150
BIN=$T/bin
mkdir -p "$BIN"
ln -s "$PDFSTAMP" "$BIN/pdfstamp"
export PATH="$BIN:$PATH"
BASE=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().count(b"startxref"))' "$SRC")

# The recipes, one file each: $T/recipe-NAME.sh.
python3 - "$TOP_SRCDIR/README.md" "$T" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
n = 0
for block in re.findall(r"```sh\n(.*?)```", text, re.S):
    m = re.match(r"# recipe: (.+)\n", block)
    if m:
        name = re.sub(r"\W+", "-", m.group(1).strip()).strip("-").lower()
        open("%s/recipe-%s.sh" % (sys.argv[2], name), "w").write(block)
        n += 1
print(n)
PY
check_eq "$(ls "$T"/recipe-*.sh | wc -l)" 4 "README: four batch recipes found"

# crash DIR: SIGKILL to every process still working in DIR (GNU parallel
# puts its jobs in process groups of their own, which outlive it), as a
# crash of the machine would end them.
crash() {
	local p
	for p in /proc/[0-9]*; do
		case "$(readlink "$p/cwd" 2>/dev/null)" in
		"$1" | "$1"/*) kill -KILL "${p#/proc/}" 2>/dev/null ;;
		esac
	done
	sleep 0.2
}

# archive DIR: DIR/archive with NFILES copies of the sample, DIR/pw.
archive() {
	rm -rf "$1" && mkdir -p "$1/archive/a" "$1/archive/b c"
	for i in $(seq 1 $NFILES); do
		if [ $((i % 2)) = 0 ]; then cp "$SRC" "$1/archive/a/f$i.pdf"; else cp "$SRC" "$1/archive/b c/f$i.pdf"; fi
	done
	cp "$UPW" "$1/pw"
}

# once_each DIR WHAT: every file of DIR/archive stamped exactly once, and
# DIR/stamp.jsonl (if FILES is given: the files named) has one ok line per file.
once_each() {
	checker_feed /dev/stdin "$1" "$BASE" "$UPW" <<'PY'
import glob, json, os, subprocess, sys
d, base, pw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def res(ok, desc, detail=""):
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))
files = sorted(glob.glob(os.path.join(d, "archive", "*", "*.pdf")))
wrong = [f for f in files if open(f, "rb").read().count(b"startxref") != base + 1]
res(len(files) > 0 and not wrong, "every file stamped exactly once", "%d of %d: %s" % (len(wrong), len(files), wrong[:3]))
bad = [f for f in files[::10] if subprocess.run(["qpdf", "--check", "--password-file=" + pw, f],
                                                capture_output=True).returncode != 0]
res(not bad, "qpdf --check passes (every 10th file)", str(bad))
lines = []
for name in glob.glob(os.path.join(d, "stamp*.jsonl")):
    lines += [json.loads(l) for l in open(name) if l.strip()]
path = lambda o: os.path.abspath(os.path.join(d, o["file"]))
stamped = [path(o) for o in lines if o["ok"] and "skipped" not in o]
named = {path(o) for o in lines if o["ok"]}
want = {os.path.abspath(f) for f in files}
res(len(stamped) == len(set(stamped)) and named == want,
    "the JSON lines name every file, none twice as stamped",
    "%d stamped lines (%d files), %d of %d files named" % (len(stamped), len(set(stamped)),
                                                         len(named & want), len(want)))
res(all(o["ok"] for o in lines), "no failure line", str([o for o in lines if not o["ok"]][:2]))
PY
}

for r in one-process-all-cores-resumable gnu-parallel-4-processes-of-1-thread-one-shard-and-ledger-each \
	xargs-the-same-with-any-file-name-nul-separated-as-operands; do
	S=$T/recipe-$r.sh
	if [ ! -f "$S" ]; then
		fail "recipe $r is in the README"
		continue
	fi
	W=$T/run-$r
	archive "$W"
	RC=0
	(cd "$W" && bash -e "$S") >"$T/out" 2>"$T/err" || RC=$?
	check_eq "$RC" 0 "$r: runs as written"
	once_each "$W"
	# Killed half way, run again (the first run's lines are kept: a
	# pipeline appends them somewhere; here the second run writes its own).
	archive "$W"
	RC=0
	(cd "$W" && timeout -s KILL 0.25 bash -e "$S") >/dev/null 2>&1 || RC=$?
	crash "$W"
	n=$(python3 -c 'import glob,sys; print(sum(open(f,"rb").read().count(b"startxref") > int(sys.argv[1]) for f in glob.glob(sys.argv[2] + "/archive/*/*.pdf")))' "$BASE" "$W")
	for f in "$W"/stamp*.jsonl; do [ -f "$f" ] && mv "$f" "$f.killed"; done
	RC=0
	(cd "$W" && bash -e "$S") >"$T/out" 2>"$T/err" || RC=$?
	check_eq "$RC" 0 "$r: killed after $n of $NFILES files, run again as written"
	for f in "$W"/stamp*.jsonl.killed; do [ -f "$f" ] && cat "$f" >>"${f%.killed}"; done
	once_each "$W"
done

# The issue's goal (34): a batch of 10,000 files killed three times and run
# again with the same command: every file stamped exactly once, the ledger
# complete (a done line for every file), no journal left.
if [ -f "$T/recipe-one-process-all-cores-resumable.sh" ]; then
	W=$T/run-10000
	rm -rf "$W" && mkdir -p "$W/archive/x"
	python3 - "$SRC" "$W/archive/x" <<'PY'
import os, shutil, sys
for i in range(10000):
    shutil.copyfile(sys.argv[1], os.path.join(sys.argv[2], "f%05d.pdf" % i))
PY
	cp "$UPW" "$W/pw"
	S=$T/recipe-one-process-all-cores-resumable.sh
	for t in 2 5 9; do
		(cd "$W" && timeout -s KILL "$t" bash -e "$S") >/dev/null 2>&1 || true
		crash "$W"
		for f in "$W"/stamp*.jsonl; do [ -f "$f" ] && cat "$f" >>"$W/killed.lines"; done
	done
	RC=0
	(cd "$W" && bash -e "$S") >"$T/out" 2>"$T/err" || RC=$?
	check_eq "$RC" 0 "10,000 files: killed three times, then run to the end"
	checker_feed /dev/stdin "$W" "$BASE" <<'PY'
import glob, json, os, sys
d, base = sys.argv[1], int(sys.argv[2])
def res(ok, desc, detail=""):
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))
files = sorted(glob.glob(os.path.join(d, "archive", "x", "*.pdf")))
wrong = [f for f in files if open(f, "rb").read().count(b"startxref") != base + 1]
res(len(files) == 10000 and not wrong, "10,000 files: every file stamped exactly once",
    "%d of %d wrong: %s" % (len(wrong), len(files), wrong[:3]))
done = set()
for l in open(os.path.join(d, "stamp.ledger"), "rb").read().split(b"\n"):
    try:
        o = json.loads(l)
    except ValueError:
        continue
    if o.get("state") == "done":
        done.add(os.path.abspath(os.path.join(d, bytes.fromhex(o["name_hex"]).decode())))
res(done == {os.path.abspath(f) for f in files}, "10,000 files: the ledger has a done line for each",
    "%d done lines" % len(done))
res(not glob.glob(os.path.join(d, "archive", "x", "*.pdfstamp-journal")), "10,000 files: no journal left")
PY
fi

# Slurm: the sbatch script's command for every task of the array.
S=$T/recipe-slurm.sh
python3 - "$S" "$T/stamp.sbatch" <<'PY'
import re, sys
m = re.search(r"<<'EOF'\n(.*?)\nEOF\n", open(sys.argv[1]).read(), re.S)
open(sys.argv[2], "w").write(m.group(1) + "\n")
PY
check_grep '^#SBATCH --array=1-100$' "$T/stamp.sbatch" "Slurm: the script's array is 1-100"
W=$T/run-slurm
archive "$W"
mkdir -p "$W/home"
cp "$UPW" "$W/home/archive.pw"
(cd "$W" && find "$PWD/archive" -name '*.pdf' >files.list)
fails=0
for task in 1 2 3; do # killed half way first
	(cd "$W" && HOME=$W/home SLURM_ARRAY_TASK_ID=$task timeout -s KILL 0.05 bash "$T/stamp.sbatch") \
		>/dev/null 2>&1 || true
	crash "$W"
done
for task in $(seq 1 100); do
	(cd "$W" && HOME=$W/home SLURM_ARRAY_TASK_ID=$task bash "$T/stamp.sbatch") \
		>"$W/stamp-$task.jsonl" 2>>"$T/err" || fails=$((fails + 1))
done
check_eq "$fails" 0 "Slurm: all 100 tasks exit 0"
once_each "$W"

finish
