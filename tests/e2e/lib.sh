# SPDX-License-Identifier: Apache-2.0
# tests/e2e/lib.sh - helpers shared by the end-to-end scripts (bash).
#
# Source it first thing:   . "$TOP_SRCDIR/tests/e2e/lib.sh"
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT, or by hand):
#   PDFSTAMP    the pdfstamp binary to test
#   PDFSTAMP_HOOKED  the same CLI with the PDFSTAMP_FAULT test hook
#               (tests/pdfstamp-fault, which make check builds), for the
#               crash and fault cases
#   TOP_SRCDIR  the source tree (samples/, man/)
# Provides:
#   $T          a private temporary directory, removed on exit
#   run CMD...  runs CMD; stdout in $T/out, stderr in $T/err, status in $RC
#   ok/fail/check_* assertions that count passes and failures
#   need CMD    skip the whole script (exit 77) if CMD is missing
#   have_faults true if $PDFSTAMP_HOOKED is there (always under make check)
#   need_faults skip the whole script (exit 77) without it (a run by hand)
#   skip DESC   counts and prints a case left out (shown by finish)
#   jget FILE EXPR   a value from a one-line JSON file, printed as JSON
#   qcheck, qcheck_linearized, opens, cmp_prefix, sigstate ...
#               assertions and helpers that several scripts share (below,
#               each with its own comment)
#   finish      prints "N passed, N failed" and exits 0 or 1
# Each assertion prints one "ok - ..." or "FAIL - ..." line, so the .log
# file of a run explains itself.

set -u
export LC_ALL=C

: "${PDFSTAMP:?PDFSTAMP must name the pdfstamp binary}"
: "${TOP_SRCDIR:?TOP_SRCDIR must name the source tree}"

T_PASS=0
T_FAIL=0
T_SKIP=0
RC=0
T=$(mktemp -d "${TMPDIR:-/tmp}/pdfstamp-e2e.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

ok() {
	T_PASS=$((T_PASS + 1))
	printf 'ok - %s\n' "$1"
}

fail() {
	T_FAIL=$((T_FAIL + 1))
	printf 'FAIL - %s\n' "$1"
	shift
	while [ $# -gt 0 ]; do
		printf '       %s\n' "$1"
		shift
	done
}

need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "SKIP: $1 is not installed"
		exit 77
	fi
}

have_faults() {
	[ -n "${PDFSTAMP_HOOKED:-}" ] && [ -x "$PDFSTAMP_HOOKED" ]
}

need_faults() {
	if ! have_faults; then
		echo "SKIP: PDFSTAMP_HOOKED does not name the CLI with the PDFSTAMP_FAULT hook (tests/pdfstamp-fault)"
		exit 77
	fi
}

skip() {
	T_SKIP=$((T_SKIP + 1))
	printf 'skip - %s\n' "$1"
}

# run CMD...: never fails itself; see $RC, $T/out, $T/err.
run() {
	RC=0
	"$@" >"$T/out" 2>"$T/err" || RC=$?
}

# check_status EXPECTED DESC: the last run's exit status.
check_status() {
	if [ "$RC" = "$1" ]; then
		ok "$2 (exit $RC)"
	else
		fail "$2: exit $RC, expected $1" "stderr: $(head -c 600 "$T/err")"
	fi
}

# check_eq ACTUAL EXPECTED DESC
check_eq() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		fail "$3" "got:      $1" "expected: $2"
	fi
}

# check_ne ACTUAL UNEXPECTED DESC
check_ne() {
	if [ "$1" != "$2" ]; then
		ok "$3"
	else
		fail "$3" "got the unexpected value: $1"
	fi
}

# check_grep ERE FILE DESC: FILE has a line matching ERE.
check_grep() {
	if grep -Eq -- "$1" "$2"; then
		ok "$3"
	else
		fail "$3" "no line of $(basename "$2") matches /$1/:" "$(head -c 600 "$2")"
	fi
}

# check_no_grep ERE FILE DESC: no line of FILE matches ERE.
check_no_grep() {
	if grep -Eq -- "$1" "$2"; then
		fail "$3" "unexpected match of /$1/:" "$(grep -E -- "$1" "$2" | head -3)"
	else
		ok "$3"
	fi
}

# check_true CONDITION-COMMAND... DESC (last argument): runs the command.
check_true() {
	local desc=${!#}
	local n=$(($# - 1))
	if "${@:1:$n}"; then
		ok "$desc"
	else
		fail "$desc"
	fi
}

# jget FILE EXPR: evaluates EXPR (Python, with the parsed JSON as d) on the
# LINE-th line of FILE (default: the first) and prints the result as JSON.
# Prints "<error: ...>" (which never equals a JSON value) on any failure.
jget() {
	python3 - "$@" <<'PY'
import json, sys
path, expr = sys.argv[1], sys.argv[2]
line = int(sys.argv[3]) if len(sys.argv) > 3 else 1
try:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    d = json.loads(lines[line - 1])
    print(json.dumps(eval(expr, {"d": d}), sort_keys=True))
except Exception as e:
    print("<error: %s: %s>" % (type(e).__name__, e))
PY
}

# e2e_inputs [NAME...]: the encrypted inputs of fixtures/e2e.py (made by qpdf
# and MuPDF during the run) in $D, with $UPW and $OPW (password files); all
# of them, or only the named ones.  Sets $E to the checker.
e2e_inputs() {
	E=$TOP_SRCDIR/tests/e2e/fixtures/e2e.py
	D=$T/in
	mkdir -p "$D"
	if ! python3 "$E" inputs "$TOP_SRCDIR/samples" "$D" "$@" >"$T/inputs.log" 2>&1; then
		fail "making the test inputs with qpdf and MuPDF" "$(cat "$T/inputs.log")"
		finish
	fi
	UPW=$D/user.pw
	OPW=$D/owner.pw
}

# checker_feed SCRIPT ARGS...: runs a python3 checker that prints
# "OK<TAB>desc" / "FAIL<TAB>desc<TAB>detail" lines and counts them as
# assertions; "#..." lines are kept in $T/extra; a checker that prints no
# result at all is a failure.
checker_feed() {
	local script=$1 line desc detail n=0
	shift
	: >"$T/extra"
	while IFS= read -r line; do
		case $line in
		OK$'\t'*) ok "${line#OK$'\t'}"; n=$((n + 1)) ;;
		FAIL$'\t'*)
			n=$((n + 1))
			desc=${line#FAIL$'\t'}
			detail=${desc#*$'\t'}
			desc=${desc%%$'\t'*}
			fail "$desc" "$detail"
			;;
		'#'*) printf '%s\n' "$line" >>"$T/extra" ;;
		*) fail "checker output: $line" ;;
		esac
	done < <(python3 "$script" "$@" 2>&1)
	[ $n -gt 0 ] || fail "checker '$1' printed no result for: ${*:2}"
}

# checks_from STATUS FILE: a checker's exit STATUS and its output FILE, of
# "OK what" and "FAIL what: why" lines (layout.sh, license.sh), shown and
# counted; any other line is shown only.
checks_from() {
	local line
	cat "$2"
	check_eq "$1" 0 "the checker ran"
	while IFS= read -r line; do
		case $line in
		"OK "*) ok "${line#OK }" ;;
		"FAIL "*) fail "${line#FAIL }" ;;
		esac
	done <"$2"
}

# ---- helpers shared by several scripts ---------------------------------------

# size_of FILE: its size in bytes.
size_of() { stat -c %s "$1"; }

# js STRING: the JSON form of a UTF-8 string, as jget prints it.
js() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }

# pwargs PWFILE: "--password-file PWFILE", one word a line, or nothing for
# an empty.pw (e2e_inputs' files without a user password).
pwargs() {
	case $1 in
	*/empty.pw) ;;
	*) printf '%s\n' --password-file "$1" ;;
	esac
}

# last_startxref FILE: the offset of the last startxref.
last_startxref() { python3 -c 'import re,sys; print(re.findall(rb"startxref\s+(\d+)", open(sys.argv[1],"rb").read())[-1].decode())' "$1"; }

# objs_of JSONFILE [LINE]: the "objects" of a --json line, comma-separated.
objs_of() { jget "$1" '",".join(str(n) for n in d["objects"])' "${2:-1}" | tr -d '"'; }

# showenc FILE PWFILE: what qpdf --show-encryption says about FILE.
showenc() { qpdf --password-file="$2" --show-encryption "$1" 2>&1; }

# qcheck FILE PWFILE DESC: qpdf --check passes without warnings.
qcheck() {
	local rc=0
	qpdf --password-file="$2" --check "$1" >"$T/qcheck.out" 2>&1 || rc=$?
	if [ $rc = 0 ] && grep -q 'No syntax or stream encoding errors' "$T/qcheck.out"; then
		ok "$3: qpdf --check passes"
	else
		fail "$3: qpdf --check passes (exit $rc)" "$(head -c 600 "$T/qcheck.out")"
	fi
}

# qcheck_linearized FILE PWFILE DESC: qpdf --check finds no error.  Its
# warnings about linearization data are expected for a catalog with a
# /Linearized key (qpdf warns about such an input too) and accepted.
qcheck_linearized() {
	local rc=0
	qpdf --password-file="$2" --check "$1" >"$T/qcheck.out" 2>&1 || rc=$?
	if { [ $rc = 0 ] && grep -q 'No syntax or stream encoding errors' "$T/qcheck.out"; } ||
		{ [ $rc = 3 ] && ! grep 'WARNING' "$T/qcheck.out" | grep -qv 'linearization'; }; then
		ok "$3: qpdf --check passes"
	else
		fail "$3: qpdf --check passes (exit $rc)" "$(head -c 600 "$T/qcheck.out")"
	fi
}

# opens FILE PWFILE user|owner DESC: qpdf takes the password as that one.
opens() {
	local s
	s=$(qpdf --password-file="$2" --show-encryption "$1" 2>&1)
	if printf '%s\n' "$s" | grep -q "^Supplied password is $3 password"; then
		ok "$4"
	else
		fail "$4" "$(printf '%s' "$s" | head -c 300)"
	fi
}

# cmp_prefix IN OUT DESC: OUT is IN's exact bytes followed by more.
cmp_prefix() {
	if cmp -s -n "$(size_of "$1")" "$1" "$2" && [ "$(size_of "$2")" -gt "$(size_of "$1")" ]; then
		ok "$3: the output starts with the exact bytes of the input"
	else
		fail "$3: the output starts with the exact bytes of the input" "$(cmp -n "$(size_of "$1")" "$1" "$2" 2>&1)"
	fi
}

# sigstate FILE: pdfsig's verdict lines for FILE's signatures (the NSS
# database $NSS, the user password $U).
sigstate() {
	pdfsig -nssdir "sql:$NSS" -upw "$U" "$1" 2>/dev/null | grep -E 'Signature Validation|Signed Ranges|Signature #'
}

# byterange FILE: the placeholder /ByteRange [0 9999999 9999999 9999999] of
# the newest revision (MuPDF's signatures, fixtures/audit.js) made to end at
# the end of the file (that revision's %%EOF and EOL).
byterange() {
	python3 - "$1" <<'PY'
import re, sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
m = list(re.finditer(rb"/ByteRange\s*\[\s*0\s+9999999\s+9999999\s+9999999\s*\]", d))[-1]
a = m.start(); b = a + 1
new = (b"/ByteRange [0 %d %d %d]" % (a, b, len(d) - b)).ljust(m.end() - m.start(), b" ")
assert len(new) == m.end() - m.start()
d[m.start():m.end()] = new
open(p, "wb").write(d)
PY
}

# finish: the summary line and the exit status for the test driver.
finish() {
	if [ "$T_SKIP" -ne 0 ]; then
		printf '%d passed, %d failed, %d skipped\n' "$T_PASS" "$T_FAIL" "$T_SKIP"
	else
		printf '%d passed, %d failed\n' "$T_PASS" "$T_FAIL"
	fi
	if [ "$T_FAIL" -ne 0 ]; then
		exit 1
	fi
	exit 0
}
