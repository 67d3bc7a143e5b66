#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/newcomer.sh - the command-line rough edges of issue 17.
#
#  1. A password on the command line (--password X, --password=X, --pass,
#     -p, for every command) is answered with a pointer to --password-file,
#     -fd and -env and why, exit 2, without echoing the value; unambiguous
#     long-option prefixes work and ambiguous ones name their candidates.
#  2. Errors about the output name the output path, not only the input.
#  3. An input that cannot be opened (missing, a directory, a FIFO) is an
#     I/O error, exit 1, for every command.
#  4. -o - writes the PDF to standard output (stamp, meta, rotate, encrypt):
#     checked, byte-for-byte a valid file, nothing left in $TMPDIR or the
#     current directory (also after a kill), refused on a terminal, with
#     --json or -v, and when standard output is the input itself.
#  5. info's bytes_read counts distinct bytes: never more than the file.
#  6. rotate --help has one heading for the current password; info explains
#     the extract permission that every PDF 2.0 writer sets.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need cmp

S=$TOP_SRCDIR/samples
IN=$S/r6-table.pdf
UPW=$S/user.pw
OPW=$S/owner.pw
W=$T/work
TMP=$T/tmp
mkdir -p "$W" "$TMP"
# Everything runs in $W: a pdfstamp that took -o - for a file name (before
# issue 17) leaves its "-" there, not in the caller's directory.
cd "$W" || exit 99
TOP_SRCDIR=$(cd "$TOP_SRCDIR" && pwd)
printf 'new-user\n' >"$T/nu.pw"
printf 'new-owner\n' >"$T/no.pw"
NEW=(--new-user-password-file "$T/nu.pw" --new-owner-password-file "$T/no.pw")

# nothing_left DIR DESC: DIR holds no temporary file of ours.
nothing_left() {
	local extra
	extra=$(ls -A "$1" | grep -E '^\.pdfstamp-|^-$' || true)
	check_eq "$extra" "" "$2"
}

# ===========================================================================
# 1. passwords on the command line, and option prefixes
# ===========================================================================
for cmd in info verify stamp meta rotate encrypt; do
	case $cmd in
	stamp | rotate | encrypt) extra=(-o "$W/argv.pdf") ;;
	meta) extra=(--set Title=x -o "$W/argv.pdf") ;;
	*) extra=() ;;
	esac
	for opt in "--password s3cr3t-value" "--password=s3cr3t-value" "--pass s3cr3t-value" \
		"-p s3cr3t-value" "--passw=s3cr3t-value"; do
		# shellcheck disable=SC2086
		run "$PDFSTAMP" "$cmd" $opt "${extra[@]}" "$IN"
		check_status 2 "$cmd ${opt%% *}: a password on the command line"
		if [ "$cmd" = encrypt ]; then
			check_grep "new-user-password-file" "$T/err" "$cmd ${opt%% *}: points at the new-password options"
		else
			check_grep "--password-file.*--password-fd.*--password-env" "$T/err" \
				"$cmd ${opt%% *}: points at --password-file, -fd, -env"
		fi
		check_grep "process list|shell history" "$T/err" "$cmd ${opt%% *}: says why"
		check_no_grep "s3cr3t-value" "$T/err" "$cmd ${opt%% *}: the value is not echoed"
		check_no_grep "unknown option" "$T/err" "$cmd ${opt%% *}: not just 'unknown option'"
	done
done
check_true test ! -e "$W/argv.pdf" "no output from any of them"
run "$PDFSTAMP" rotate --new-user-pass s3cr3t-value --new-owner-password-file "$T/no.pw" \
	--password-file "$OPW" -o "$W/argv.pdf" "$IN"
check_status 2 "rotate --new-user-pass VALUE"
check_grep "--new-user-password-file" "$T/err" "rotate --new-user-pass: points at --new-user-password-file"
run "$PDFSTAMP" --password s3cr3t-value info "$IN"
check_status 2 "pdfstamp --password VALUE (before the command)"
check_grep "--password-file" "$T/err" "a global --password: points at --password-file"

# Prefixes: unambiguous ones work, as the man page says; ambiguous ones name
# what they could be.
run "$PDFSTAMP" info --js --password-fi "$UPW" "$IN"
check_status 0 "info --js --password-fi: unambiguous prefixes work"
check_eq "$(jget "$T/out" 'd["authenticated_as"]')" '"user"' "--password-fi read the password file"
run "$PDFSTAMP" info --password-e PDFSTAMP_NO_SUCH_VAR "$IN"
check_status 2 "--password-e is --password-env"
check_grep "PDFSTAMP_NO_SUCH_VAR is not set" "$T/err" "--password-e: the message of --password-env"
run "$PDFSTAMP" info --password-f "$UPW" "$IN"
check_status 2 "--password-f is ambiguous"
check_grep "ambiguous.*--password-file.*--password-fd" "$T/err" "--password-f: names --password-file and --password-fd"
check_no_grep "unknown option" "$T/err" "--password-f: not 'unknown option'"
run "$PDFSTAMP" stamp --password-file "$UPW" --p 1 -o "$W/x.pdf" "$IN"
check_status 2 "stamp --p is ambiguous (--page, --position, ...)"
check_grep "ambiguous.*--page.*--position" "$T/err" "stamp --p: names --page and --position"
check_true test ! -e "$W/x.pdf" "stamp --p: no output"
run "$PDFSTAMP" info --json=yes "$IN"
check_status 2 "info --json=yes"
check_grep "'--json' takes no argument" "$T/err" "--json=yes: takes no argument"
run "$PDFSTAMP" info --no-such-option "$IN"
check_status 2 "an unknown option"
check_grep "unknown option '--no-such-option'" "$T/err" "an unknown option is called that"
for s in man/pdfstamp.1; do
	check_grep "ambiguous" "$TOP_SRCDIR/$s" "$s: says what an ambiguous prefix does"
done

# ===========================================================================
# 2. output errors name the output
# ===========================================================================
run "$PDFSTAMP" stamp --password-file "$UPW" -o "$W/nodir/out.pdf" "$IN"
check_status 1 "stamp -o into a missing directory"
check_grep "$W/nodir" "$T/err" "stamp -o nodir/out.pdf: the message names the output's directory"
check_grep "nodir/out\.pdf" "$T/err" "stamp -o nodir/out.pdf: the message names the output"
mkdir "$W/adir"
run "$PDFSTAMP" stamp --password-file "$UPW" -o "$W/adir" "$IN"
check_status 1 "stamp -o a directory"
check_grep "$W/adir.*[Ii]s a directory" "$T/err" "stamp -o adir: the message names adir"
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEW[@]}" -o "$W/adir" "$IN"
check_status 1 "rotate -o a directory"
check_grep "$W/adir.*[Ii]s a directory" "$T/err" "rotate -o adir: the message names adir"
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEW[@]}" -o "$W/nodir/out.pdf" "$IN"
check_status 1 "rotate -o into a missing directory"
check_grep "nodir/out\.pdf" "$T/err" "rotate -o nodir/out.pdf: the message names the output"
check_eq "$(ls -A "$W/adir")" "" "nothing was written into adir"
mkfifo "$W/out-fifo"
run timeout 20 "$PDFSTAMP" stamp --password-file "$UPW" -o "$W/out-fifo" "$IN"
check_status 1 "stamp -o a FIFO"
check_grep "$W/out-fifo.*not a regular file \(a FIFO" "$T/err" "stamp -o FIFO: the message names the FIFO"
check_true test -p "$W/out-fifo" "stamp -o FIFO: the FIFO is not replaced by a file"
nothing_left "$W" "no temporary file next to the outputs"

# ===========================================================================
# 3. an input that cannot be opened is an I/O error (1)
# ===========================================================================
mkfifo "$W/fifo.pdf"
for what in missing adir fifo; do
	case $what in
	missing) f=$W/missing.pdf ;;
	adir) f=$W/adir ;;
	fifo) f=$W/fifo.pdf ;;
	esac
	for c in "info" "verify -q" "stamp -o $W/o.pdf" "stamp -i" "meta --set Title=x -i" \
		"rotate ${NEW[*]} -o $W/o.pdf" "encrypt ${NEW[*]} -i" "recover"; do
		case $c in
		recover | encrypt*) pw=() ;;
		*) pw=(--password-file "$OPW") ;;
		esac
		# shellcheck disable=SC2086
		run timeout 20 "$PDFSTAMP" $c "${pw[@]}" "$f"
		check_status 1 "${c%% *} on a $what input"
	done
done
check_true test ! -e "$W/o.pdf" "no output for inputs that cannot be opened"
run "$PDFSTAMP" info --password-file "$UPW" "$W/adir"
check_grep "not a regular file \(a directory\)" "$T/err" "info adir: says it is a directory"
check_grep '^\| 1 \|.*(missing|cannot be opened)' "$TOP_SRCDIR/README.md" "README: a file that cannot be opened is under 1"
check_no_grep '^\| 2 \|.*missing file' "$TOP_SRCDIR/README.md" "README: 'missing file' is not under 2"

# ===========================================================================
# 4. -o - writes standard output
# ===========================================================================
SIZE=$(stat -c %s "$IN")
(cd "$W" && TMPDIR=$TMP "$PDFSTAMP" stamp --password-file "$UPW" -o - "$IN" >"$T/stamped.pdf" 2>"$T/err")
RC=$?
check_status 0 "stamp -o - >file"
check_true cmp -s -n "$SIZE" "$IN" "$T/stamped.pdf" "stamp -o -: the output starts with the input's bytes"
run "$PDFSTAMP" info --json --password-file "$UPW" "$T/stamped.pdf"
check_status 0 "stamp -o -: the output opens"
check_eq "$(jget "$T/out" 'd["revisions"]')" 2 "stamp -o -: one revision was appended"
run "$PDFSTAMP" verify -q --password-file "$UPW" "$T/stamped.pdf"
check_status 0 "stamp -o -: the output verifies"
check_true test ! -e "$W/-" "stamp -o -: no file named '-'"
nothing_left "$W" "stamp -o -: nothing left in the current directory"
nothing_left "$TMP" "stamp -o -: nothing left in TMPDIR"

# a pipe, and meta
(cd "$W" && TMPDIR=$TMP "$PDFSTAMP" meta --password-file "$UPW" --set Title=Piped -o - "$IN" |
	cat >"$T/meta.pdf")
run "$PDFSTAMP" verify -q --password-file "$UPW" "$T/meta.pdf"
check_status 0 "meta -o - | cat: the output verifies"
check_true cmp -s -n "$SIZE" "$IN" "$T/meta.pdf" "meta -o -: the output starts with the input's bytes"

# rotate and encrypt; TMPDIR unset: the current directory
(cd "$W" && env -u TMPDIR "$PDFSTAMP" rotate --password-file "$OPW" "${NEW[@]}" -o - "$IN" >"$T/rotated.pdf" 2>"$T/err")
RC=$?
check_status 0 "rotate -o - (no TMPDIR)"
run "$PDFSTAMP" verify -q --password-file "$T/no.pw" "$T/rotated.pdf"
check_status 0 "rotate -o -: the output opens with the new owner password and verifies"
nothing_left "$W" "rotate -o -: nothing left in the current directory"
(cd "$W" && TMPDIR=$TMP "$PDFSTAMP" encrypt "${NEW[@]}" -o - "$S/plain-2page.pdf" >"$T/encrypted.pdf" 2>"$T/err")
RC=$?
check_status 0 "encrypt -o -"
run "$PDFSTAMP" info --json --password-file "$T/nu.pw" "$T/encrypted.pdf"
check_eq "$(jget "$T/out" 'd["encryption"]["r"]')" 6 "encrypt -o -: an R6 file"
nothing_left "$TMP" "encrypt -o -: nothing left in TMPDIR"

# failures leave nothing behind either, even a kill after the temp file was
# written: write 1 is the update into the temporary file, write 2 the copy
# to standard output.
if have_faults; then
for fault in fail:write fail:write:2 kill:after-write; do
	(cd "$W" && TMPDIR=$TMP PDFSTAMP_FAULT=$fault "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -o - "$IN" \
		>"$T/faulted.pdf" 2>"$T/err")
	RC=$?
	check_ne "$RC" 0 "stamp -o - with $fault fails"
	nothing_left "$TMP" "stamp -o - with $fault: nothing left in TMPDIR"
	nothing_left "$W" "stamp -o - with $fault: nothing left in the current directory"
done
(cd "$W" && TMPDIR=$TMP PDFSTAMP_FAULT=kill:after-write "$PDFSTAMP_HOOKED" rotate --password-file "$OPW" "${NEW[@]}" \
	-o - "$IN" >"$T/faulted.pdf" 2>"$T/err")
RC=$?
check_ne "$RC" 0 "rotate -o - killed after writing"
nothing_left "$TMP" "rotate -o - killed: nothing left in TMPDIR"
else
	skip "-o -: injected failures and kills leave nothing behind (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi
(cd "$W" && TMPDIR=$TMP "$PDFSTAMP" stamp --password-file "$OPW.wrong" -o - "$IN" >"$T/faulted.pdf" 2>"$T/err")
RC=$?
check_status 2 "stamp -o - with a missing password file (a usage error)"
check_eq "$(stat -c %s "$T/faulted.pdf")" 0 "stamp -o -: nothing on stdout after a failure"

# refused: --json, -v, a terminal, the input itself
run "$PDFSTAMP" stamp --password-file "$UPW" --json -o - "$IN"
check_status 2 "stamp --json -o -"
check_eq "$(stat -c %s "$T/out")" 0 "stamp --json -o -: nothing on stdout"
run "$PDFSTAMP" rotate --password-file "$OPW" "${NEW[@]}" -v -o - "$IN"
check_status 2 "rotate -v -o -"
cp "$IN" "$W/self.pdf"
RC=0
"$PDFSTAMP" stamp --password-file "$UPW" -o - "$W/self.pdf" >>"$W/self.pdf" 2>"$T/err" || RC=$?
check_status 2 "stamp -o - >>input"
check_grep "input file itself" "$T/err" "stamp -o - >>input: says why"
check_true cmp -s "$IN" "$W/self.pdf" "stamp -o - >>input: the input is unchanged"
cat >"$T/on-a-tty.py" <<'PY'
import os, pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave,
                   stderr=subprocess.PIPE)
os.close(slave)
out = b""
try:
    while True:
        b = os.read(master, 4096)
        if not b:
            break
        out += b
except OSError:
    pass
sys.stderr.buffer.write(p.stderr)
print("%d %d" % (p.returncode, len(out)))
PY
for cmd in "stamp" "meta --set Title=x" "rotate ${NEW[*]}"; do
	# shellcheck disable=SC2086
	run python3 "$T/on-a-tty.py" "$PDFSTAMP" $cmd --password-file "$OPW" -o - "$IN"
	check_eq "$(cat "$T/out")" "2 0" "${cmd%% *} -o - on a terminal: exit 2, nothing written"
	check_grep "terminal" "$T/err" "${cmd%% *} -o - on a terminal: says why"
done
run "$PDFSTAMP" stamp --help
check_grep "standard output" "$T/out" "stamp --help documents -o -"
run "$PDFSTAMP" rotate --help
check_grep "standard output" "$T/out" "rotate --help documents -o -"

# ===========================================================================
# 5. bytes_read: distinct bytes, never more than the file holds
# ===========================================================================
for f in r6-table r6-objstm r5-table r6-empty-user; do
	pw=(--password-file "$UPW")
	[ $f = r6-empty-user ] && pw=()
	run "$PDFSTAMP" info --json "${pw[@]}" "$S/$f.pdf"
	check_status 0 "info $f"
	check_eq "$(jget "$T/out" 'd["bytes_read"] <= d["file_size"] and d["bytes_read"] > 0')" true \
		"info $f: bytes_read ($(jget "$T/out" 'd["bytes_read"]')) <= file_size ($(jget "$T/out" 'd["file_size"]'))"
done
run "$PDFSTAMP" info --password-file "$UPW" "$IN"
check_grep "^Bytes read: +[0-9]+ distinct bytes of $SIZE$" "$T/out" "info text: bytes read of the file size"
check_grep "distinct bytes" "$TOP_SRCDIR/man/pdfstamp.1" "the man page says bytes_read counts distinct bytes"

# ===========================================================================
# 6. rotate --help headings; what 'extract' means in info
# ===========================================================================
run "$PDFSTAMP" rotate --help
check_eq "$(grep -cE '^(Current password|Password options)' "$T/out")" 1 "rotate --help: one heading for the current password"
run "$PDFSTAMP" info --help
check_eq "$(grep -c '^Password options' "$T/out")" 1 "info --help: its password heading is still there"
run "$PDFSTAMP" encrypt "${NEW[@]}" --permissions print,copy -o "$W/perm.pdf" "$S/plain-2page.pdf"
check_status 0 "encrypt --permissions print,copy"
run "$PDFSTAMP" info --password-file "$T/nu.pw" "$W/perm.pdf"
check_grep "^Allowed: +print, copy, extract$" "$T/out" "info: print, copy and extract allowed"
check_grep "extract is bit 10" "$T/out" "info: explains extract"
check_grep "writers always set it" "$T/out" "info: says why extract is set"
run "$PDFSTAMP" info --password-file "$T/no.pw" "$W/perm.pdf"
check_grep "extract is bit 10" "$T/out" "info (owner): explains extract too"

finish
