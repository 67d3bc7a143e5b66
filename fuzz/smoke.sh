#!/bin/bash
# fuzz/smoke.sh SRCDIR BUILDDIR TARGET... - the `make fuzz-smoke` run.
#
# Makes the seed corpora (fuzz/make-seeds.py) in BUILDDIR/fuzz/corpus/, then
# runs each libFuzzer target for FUZZ_SECONDS (default 60) on its corpus
# plus the kept crashers of SRCDIR/fuzz/regress/<target>/.  New corpus
# entries stay in the build tree; a crash writes
# BUILDDIR/fuzz/artifacts/<target>-crash-* and fails the run.  Memory is
# capped at 2 GB per target and each input at 10 s.
set -u
src=$1 build=$2
shift 2
secs=${FUZZ_SECONDS:-60}
corpus=$build/fuzz/corpus
arts=$build/fuzz/artifacts
mkdir -p "$corpus" "$arts"
"${PYTHON3:-python3}" "$src/fuzz/make-seeds.py" "$src" "$corpus" || exit 1
status=0
for t in "$@"; do
	name=$(basename "$t")
	mkdir -p "$corpus/$name"
	dirs=("$corpus/$name")
	[ -d "$src/fuzz/regress/$name" ] && dirs+=("$src/fuzz/regress/$name")
	echo "== $name: ${secs}s"
	if "$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$arts/$name-" "${dirs[@]}" >"$build/fuzz/$name.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$build/fuzz/$name.log" | tail -2
	else
		status=1
		echo "FAIL - $name crashed; see $build/fuzz/$name.log and $arts/"
		grep -E -A25 '^==[0-9]+==ERROR|fuzz: library bug|^SUMMARY' "$build/fuzz/$name.log" | head -60
	fi
done
exit $status
