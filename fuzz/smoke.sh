#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# fuzz/smoke.sh SRCDIR BUILDDIR TARGET... - the `make fuzz-smoke` run.
#
# Makes the seed corpora (fuzz/make-seeds.py) in BUILDDIR/fuzz/corpus/, then
# runs each libFuzzer target for FUZZ_SECONDS (default 60) on its corpus
# plus the kept crashers of SRCDIR/fuzz/regress/<target>/.  New corpus
# entries stay in the build tree; a crash writes
# BUILDDIR/fuzz/artifacts/<target>-crash-* and fails the run.  Memory is
# capped at 2 GB per target and each input at 10 s.  FUZZ_JOBS (default 1)
# targets run at a time, each a single process for its FUZZ_SECONDS (so
# two jobs on two cores give each target the core it has alone); each
# target's lines are printed when it ends.
set -u
src=$1 build=$2
shift 2
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
corpus=$build/fuzz/corpus
arts=$build/fuzz/artifacts
mkdir -p "$corpus" "$arts"
"${PYTHON3:-python3}" "$src/fuzz/make-seeds.py" "$src" "$corpus" || exit 1

# one TARGET: runs it and prints its lines in one piece; non-zero on a crash.
one() {
	local t=$1 name out rc=0
	local -a dirs
	name=$(basename "$t")
	mkdir -p "$corpus/$name"
	dirs=("$corpus/$name")
	[ -d "$src/fuzz/regress/$name" ] && dirs+=("$src/fuzz/regress/$name")
	"$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$arts/$name-" "${dirs[@]}" >"$build/fuzz/$name.log" 2>&1 || rc=1
	if [ $rc = 0 ]; then
		out=$(grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$build/fuzz/$name.log" | tail -2)
	else
		out="FAIL - $name crashed; see $build/fuzz/$name.log and $arts/"$'\n'
		out+=$(grep -E -A25 '^==[0-9]+==ERROR|fuzz: library bug|^SUMMARY' "$build/fuzz/$name.log" | head -60)
	fi
	printf '== %s: %ss\n%s\n' "$name" "$secs" "$out"
	return $rc
}

status=0 running=0
for t in "$@"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n || status=1
		running=$((running - 1))
	fi
	one "$t" &
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	wait -n || status=1
	running=$((running - 1))
done
exit $status
