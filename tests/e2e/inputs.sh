#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/inputs.sh - inputs, the first hour of a newcomer (issue 30).
#
#  1. One rule for inputs that cannot be read: anything an option names
#     (--password-file, -fd, -env, the new passwords' sources, --files-from,
#     --image, --font, dss --cert/--ocsp/--crl) that cannot be read is a
#     usage error, exit 2, its message naming it, nothing written; a FILE
#     operand that cannot be opened stays that file's I/O error, exit 1.
#  2. With --json every failure has its line on stdout: a failure found
#     before any file is opened (a bad option value wherever --json is, an
#     unknown option, a missing argument, dss's inputs, the driver's and
#     the commands' own checks) fails every FILE named, operands and the
#     --files-from list (also on stdin), each line {"file","ok":false,
#     "exit","error"} with the message printed on stderr; never with -o -,
#     and a list on stdin is not read when stdin also gives a password.
#  3. "-" as a FILE (an operand or a --files-from line) is refused by every
#     command, exit 2, with a message that says standard input is not an
#     input here; ./- names a file called "-", which is never touched by
#     the refusal.
#  4. A file that is not a PDF (text, random bytes, an empty file) says so,
#     "not a PDF: no %PDF header", exit 4, for every command that reads
#     one; a damaged PDF keeps the reader's own message.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need cmp

S=$TOP_SRCDIR/samples
UPW=$S/user.pw
OPW=$S/owner.pw
W=$T/work
mkdir -p "$W" "$W/adir"
cp "$S/r6-table.pdf" "$W/in.pdf"
printf 'new-user\n' >"$T/nu.pw"
printf 'new-owner\n' >"$T/no.pw"
NEW=(--new-user-password-file "$T/nu.pw" --new-owner-password-file "$T/no.pw")
unset PDFSTAMP_NOT_SET

# unreadable DESC ERE CMD...: CMD exits 2 with a message matching ERE, and
# neither changes in.pdf nor writes $W/out.pdf.
unreadable() {
	local desc=$1 ere=$2
	shift 2
	rm -f "$W/out.pdf"
	run "$@"
	check_status 2 "$desc: a usage error"
	check_grep "^pdfstamp: .*$ere" "$T/err" "$desc: the message names it"
	check_true test ! -e "$W/out.pdf" "$desc: nothing written"
	check_true cmp -s "$S/r6-table.pdf" "$W/in.pdf" "$desc: the input is unchanged"
}

# ===========================================================================
# 1. inputs an option names: exit 2
# ===========================================================================
for cmd in info verify stamp; do
	case $cmd in
	stamp) out=(-o "$W/out.pdf") ;;
	*) out=() ;;
	esac
	unreadable "$cmd --password-file missing" "cannot open password file.*missing\.pw" \
		"$PDFSTAMP" "$cmd" --password-file "$W/missing.pw" "${out[@]}" "$W/in.pdf"
	unreadable "$cmd --password-file a directory" "cannot read password.*adir" \
		"$PDFSTAMP" "$cmd" --password-file "$W/adir" "${out[@]}" "$W/in.pdf"
	unreadable "$cmd --password-fd 9 (not open)" "file descriptor 9" \
		"$PDFSTAMP" "$cmd" --password-fd 9 "${out[@]}" "$W/in.pdf"
	unreadable "$cmd --password-env of a variable not set" "PDFSTAMP_NOT_SET is not set" \
		"$PDFSTAMP" "$cmd" --password-env PDFSTAMP_NOT_SET "${out[@]}" "$W/in.pdf"
done
unreadable "rotate --new-user-password-file missing" "cannot open password file.*missing\.pw" \
	"$PDFSTAMP" rotate --password-file "$OPW" --new-user-password-file "$W/missing.pw" \
	--new-owner-password-file "$T/no.pw" -o "$W/out.pdf" "$W/in.pdf"
unreadable "rotate --new-owner-password-fd 9 (not open)" "file descriptor 9" \
	"$PDFSTAMP" rotate --password-file "$OPW" --new-user-password-file "$T/nu.pw" \
	--new-owner-password-fd 9 -o "$W/out.pdf" "$W/in.pdf"
unreadable "encrypt --new-user-password-env of a variable not set" "PDFSTAMP_NOT_SET is not set" \
	"$PDFSTAMP" encrypt --new-user-password-env PDFSTAMP_NOT_SET \
	--new-owner-password-file "$T/no.pw" -o "$W/out.pdf" "$S/plain-2page.pdf"
unreadable "--files-from missing" "cannot open the --files-from list.*missing\.list" \
	"$PDFSTAMP" stamp --password-file "$UPW" -i --files-from "$W/missing.list"
unreadable "--files-from a directory" "cannot read the --files-from list.*adir" \
	"$PDFSTAMP" stamp --password-file "$UPW" -i --files-from "$W/adir"
unreadable "stamp --image missing" "cannot open the image.*missing\.png" \
	"$PDFSTAMP" stamp --password-file "$UPW" --image "$W/missing.png" \
	-o "$W/out.pdf" "$W/in.pdf"
unreadable "stamp --font missing" "cannot open the font.*missing\.ttf" \
	"$PDFSTAMP" stamp --password-file "$UPW" --font "$W/missing.ttf" -o "$W/out.pdf" "$W/in.pdf"
for o in cert ocsp crl; do
	unreadable "dss --$o missing" "cannot open.*missing\.der" \
		"$PDFSTAMP" dss --password-file "$OPW" --$o "$W/missing.der" \
		-o "$W/out.pdf" "$W/in.pdf"
done
unreadable "dss --cert a directory" "not a regular file.*adir" \
	"$PDFSTAMP" dss --password-file "$OPW" --cert "$W/adir" -o "$W/out.pdf" "$W/in.pdf"

# A FILE operand that cannot be opened is that file's I/O error (exit 1);
# the files after it still go ahead.
run "$PDFSTAMP" info --password-file "$UPW" "$W/missing.pdf" "$W/in.pdf"
check_status 1 "info of a missing FILE: an I/O error"
check_grep "^Encrypted: +yes" "$T/out" "info of a missing FILE: the next file is still reported"

# The rule is written down once, in the README's exit codes and the man page.
check_grep "^One rule for inputs that cannot be read" "$TOP_SRCDIR/README.md" \
	"README: the rule for inputs that cannot be read"
check_grep "^Inputs that cannot be read follow one rule" "$TOP_SRCDIR/man/pdfstamp.1" \
	"pdfstamp(1): the rule for inputs that cannot be read"

# ===========================================================================
# 2. --json: every failure has its line
# ===========================================================================
cp "$S/r6-table.pdf" "$W/b.pdf"
printf 'this is not a certificate\n' >"$W/text.der"
printf '%s\n' "$W/l1.pdf" "$W/l2.pdf" >"$W/files.list"

# failure_lines DESC STATUS FILE...: the last run exited STATUS and printed
# exactly one failure line per FILE, in that order, with the message of
# stderr as "error".
failure_lines() {
	local desc=$1 status=$2
	shift 2
	check_status "$status" "$desc"
	checker_feed "$T/lines.py" "$desc" "$status" "$T/out" "$T/err" "$@"
}
cat >"$T/lines.py" <<'PY'
import json, sys
desc, status, out, err = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
files = sys.argv[5:]

def result(ok, what, detail):
    print("OK\t%s: %s" % (desc, what) if ok else "FAIL\t%s: %s\t%s" % (desc, what, detail))

lines = [l for l in open(out, encoding="utf-8").read().split("\n") if l]
msgs = [l[len("pdfstamp: "):] for l in open(err, encoding="utf-8").read().split("\n")
        if l.startswith("pdfstamp: ")]
try:
    recs = [json.loads(l) for l in lines]
except ValueError as e:
    result(False, "JSON lines", "%s: %s" % (e, lines))
    sys.exit(0)
result([r.get("file") for r in recs] == files, "a line per file named", lines)
result(all(list(r) == ["file", "ok", "exit", "error"] and r["ok"] is False and
           r["exit"] == status for r in recs), "each a failure line, exit %d" % status, recs)
result(bool(msgs) and all(r["error"] == msgs[0] for r in recs),
       "the error is the message on stderr", "%s / %s" % (recs, msgs))
PY

run "$PDFSTAMP" stamp --password-file "$UPW" -i --json --color purple "$W/in.pdf" "$W/b.pdf"
failure_lines "stamp --json --color purple" 2 "$W/in.pdf" "$W/b.pdf"
check_grep "^pdfstamp: --color: expected RRGGBB" "$T/err" \
	"stamp --color purple: the message says what is wrong"
run "$PDFSTAMP" stamp --password-file "$UPW" -i --color purple "$W/in.pdf" --json "$W/b.pdf"
failure_lines "stamp --color purple with --json after it" 2 "$W/in.pdf" "$W/b.pdf"
run "$PDFSTAMP" stamp --password-file "$UPW" -i --js --colo=purple -- "$W/in.pdf" -x
failure_lines "stamp --js --colo=purple -- FILE -x (prefixes, '--')" 2 "$W/in.pdf" -x
run "$PDFSTAMP" stamp --password-file "$UPW" -i --json --files-from "$W/files.list" \
	--page 0 "$W/in.pdf"
failure_lines "stamp --page 0 with --files-from: the list's files too" 2 \
	"$W/in.pdf" "$W/l1.pdf" "$W/l2.pdf"
printf '%s\n' "$W/s1.pdf" "$W/s2.pdf" |
	"$PDFSTAMP" stamp --password-file "$UPW" -i --json --files-from - --opacity 2 \
	>"$T/out" 2>"$T/err"
RC=$?
failure_lines "stamp --opacity 2 with --files-from -: the files on stdin too" 2 \
	"$W/s1.pdf" "$W/s2.pdf"
printf 'pw-on-stdin\n' |
	"$PDFSTAMP" stamp --password-fd 0 -i --json --files-from - --opacity 2 "$W/in.pdf" \
	>"$T/out" 2>"$T/err"
RC=$?
failure_lines "--files-from - with --password-fd 0: stdin is not read as a list" 2 "$W/in.pdf"
check_no_grep "pw-on-stdin" "$T/out" \
	"--files-from - with --password-fd 0: the password is never printed"
run "$PDFSTAMP" info --json --frobnicate "$W/in.pdf" "$W/b.pdf"
failure_lines "info --json with an unknown option" 2 "$W/in.pdf" "$W/b.pdf"
run "$PDFSTAMP" verify --json "$W/in.pdf" --password-file
failure_lines "verify --json, an option without its argument" 2 "$W/in.pdf"
run "$PDFSTAMP" rotate --json -j 99 -i "$W/in.pdf"
failure_lines "rotate --json -j 99" 2 "$W/in.pdf"
run "$PDFSTAMP" stamp --password-file "$UPW" --json -o "$W/out.pdf" -i "$W/in.pdf"
failure_lines "stamp --json -o with -i (the driver's check)" 2 "$W/in.pdf"
run "$PDFSTAMP" meta --password-file "$OPW" --json -i "$W/in.pdf" "$W/b.pdf"
failure_lines "meta --json with nothing to change" 2 "$W/in.pdf" "$W/b.pdf"
run "$PDFSTAMP" audit --password-file "$UPW" --json --extract-revision 1 "$W/in.pdf"
failure_lines "audit --json --extract-revision without -o" 2 "$W/in.pdf"
run "$PDFSTAMP" dss --password-file "$OPW" --json --date now --cert "$W/text.der" -i "$W/in.pdf"
failure_lines "dss --json --date" 2 "$W/in.pdf"
run "$PDFSTAMP" dss --password-file "$OPW" --json --cert "$W/missing.der" -i "$W/in.pdf" "$W/b.pdf"
failure_lines "dss --json with a --cert that cannot be read" 2 "$W/in.pdf" "$W/b.pdf"
run "$PDFSTAMP" dss --password-file "$OPW" --json --cert "$W/text.der" -i "$W/in.pdf" "$W/b.pdf"
failure_lines "dss --json with a --cert that is no certificate" 4 "$W/in.pdf" "$W/b.pdf"
run "$PDFSTAMP" rotate --password-file "$OPW" --json --new-user-password-file "$W/missing.pw" \
	--new-owner-password-file "$T/no.pw" -i "$W/in.pdf"
failure_lines "rotate --json with a new password file that cannot be read" 2 "$W/in.pdf"
check_true cmp -s "$S/r6-table.pdf" "$W/in.pdf" "--json failures: the input is unchanged"
# -o -: standard output is the PDF's alone, even for a failure line
run "$PDFSTAMP" stamp --password-file "$UPW" --json --color purple -o - "$W/in.pdf"
check_status 2 "stamp --json -o - --color purple"
check_eq "$(stat -c %s "$T/out")" 0 "stamp --json -o -: nothing on stdout, no failure line either"
# without --json nothing is printed on stdout
run "$PDFSTAMP" stamp --password-file "$UPW" -i --color purple "$W/in.pdf"
check_eq "$(stat -c %s "$T/out")" 0 "stamp --color purple without --json: nothing on stdout"

# ===========================================================================
# 3. "-" as FILE
# ===========================================================================
mkdir -p "$W/dash"
cp "$S/plain-2page.pdf" "$W/dash/-"
cp "$S/r6-table.pdf" "$W/dash/in.pdf"
for cmd in info verify audit recover "stamp -o out.pdf" "stamp -i" "meta --set Title=x -i" \
	"dss --cert c.der -i" "rotate -i ${NEW[*]}" "encrypt -i ${NEW[*]}"; do
	# shellcheck disable=SC2086
	(cd "$W/dash" && "$PDFSTAMP" $cmd - >"$T/out" 2>"$T/err")
	RC=$?
	check_status 2 "${cmd%% *} -: refused"
	check_grep "standard input \('-'\) is not an input here" "$T/err" \
		"${cmd%% *} -: says standard input is not an input here"
	check_true cmp -s "$S/plain-2page.pdf" "$W/dash/-" \
		"${cmd%% *} -: the file named '-' is not touched"
	check_true test ! -e "$W/dash/out.pdf" "${cmd%% *} -: nothing written"
done
printf '%s\n' "$W/dash/in.pdf" - >"$W/dash/list"
(cd "$W/dash" && "$PDFSTAMP" stamp --password-file "$UPW" -i --files-from list >"$T/out" 2>"$T/err")
RC=$?
check_status 2 "a --files-from line '-': refused"
check_grep "standard input \('-'\) is not an input here" "$T/err" \
	"a --files-from line '-': says why"
check_true cmp -s "$S/r6-table.pdf" "$W/dash/in.pdf" \
	"a --files-from line '-': no file of the list is updated"
(cd "$W/dash" && "$PDFSTAMP" info --json ./- >"$T/out" 2>"$T/err")
RC=$?
check_status 0 "info ./-: a file named '-' is read by that name"
check_eq "$(jget "$T/out" 'd["file"]')" '"./-"' "info ./-: its line names it"
(cd "$W/dash" && "$PDFSTAMP" info --json in.pdf - >"$T/out" 2>"$T/err")
RC=$?
check_status 2 "info --json FILE -"
check_eq "$(jget "$T/out" 'd["file"]' 2)" '"-"' "info --json FILE -: '-' gets its failure line"

# ===========================================================================
# 4. not a PDF
# ===========================================================================
printf 'Dear reader,\nthis is a letter.\nstartxref\nsoon\n%%%%EOF\n' >"$W/letter.pdf"
head -c 3000 /dev/urandom | tr -d '%' >"$W/random.pdf"
: >"$W/empty.pdf"
for f in letter random empty; do
	for cmd in info verify audit "stamp -o out.pdf" "meta --set Title=x -o out.pdf" \
		"rotate -o out.pdf ${NEW[*]}" "encrypt -o out.pdf ${NEW[*]}"; do
		# shellcheck disable=SC2086
		(cd "$W" && "$PDFSTAMP" $cmd "$f.pdf" >"$T/out" 2>"$T/err")
		RC=$?
		check_status 4 "${cmd%% *} $f.pdf: malformed input"
		check_grep "^pdfstamp: not a PDF: no %PDF header \($f\.pdf\)$" "$T/err" \
			"${cmd%% *} $f.pdf: says it is not a PDF"
	done
done
run "$PDFSTAMP" info --json "$W/letter.pdf"
check_eq "$(jget "$T/out" 'd["error"]')" '"not a PDF: no %PDF header"' \
	"info --json: the error of a text file"
# a PDF cut short still says what is wrong with it
head -c 900 "$S/plain-2page.pdf" >"$W/cut.pdf"
run "$PDFSTAMP" info "$W/cut.pdf"
check_status 4 "a truncated PDF: malformed input"
check_no_grep "no %PDF header" "$T/err" \
	"a truncated PDF: the reader's own message, not 'no %PDF header'"
check_grep "^pdfstamp: .+" "$T/err" "a truncated PDF: a message"

finish
