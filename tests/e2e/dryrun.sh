#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/dryrun.sh - --dry-run of stamp, meta, dss, rotate and encrypt
# (issue 32; pdfstamp(1) DRY RUNS, src/dryrun.c).
#
# Inputs: samples/r6-table.pdf and r6-objstm.pdf (AES-256, a table and an
# xref stream), an RC4-128 and an AES-128 copy of plain-2page.pdf made by
# qpdf, and plain-3page.pdf for encrypt.  For each command and input:
#  A. --dry-run -i and --dry-run -o OUT (and --json): exit 0, a line that
#     says "dry run", "dry_run":true; the input's SHA-256, size and mtime
#     unchanged; OUT not created; nothing new in the directory or in
#     $TMPDIR (no journal, no temporary file);
#  B. the real run then: -o OUT is exactly base + bytes_appended bytes
#     (stamp, meta, dss; also xref_offset and the objects equal the dry
#     run's), an in-place run appends exactly bytes_appended, and rotate /
#     encrypt write exactly the bytes_written the dry run reported (the
#     documented bound is 0: the size is counted, not estimated); qpdf
#     decrypts the real output (so the dry run measured a valid file);
#  C. no lock: with another process holding the writers' flock on the
#     file (flock(1)), the dry run -i succeeds where the real run is
#     refused (exit 1, "locked");
#  D. under strace: no open with O_CREAT, O_WRONLY, O_RDWR or O_TMPFILE,
#     no flock, no fsync/fdatasync/sync_file_range, no rename, link,
#     unlink or truncate (skipped without a working strace);
#  E. refusals are the real run's, status and message: a wrong password
#     (3), DocMDP P=1 (5), the user password without the annotate/modify
#     permission (5), rotate with the user password (5), encrypt of an
#     encrypted file (2), -o into a directory or a missing one (1), bytes
#     after %%EOF (4), rotate -i of a file with two hard links (4); the
#     files unchanged;
#  F. a pending journal is reported (warning, "journal_pending":true) and
#     left as it was; -o - prints the line and no PDF;
#  G. --jobs 2 over three files, and --ledger: a missing ledger is not
#     created, a ledger with a done line skips that file ("skipped",
#     "dry_run":true) and is not written.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need openssl
need flock
need sha256sum

S=$TOP_SRCDIR/samples
OPW=$S/owner.pw
UPW=$S/user.pw
W=$T/w
TD=$T/tmp
mkdir -p "$W" "$TD"
export TMPDIR=$TD
DATE=2026-01-01T00:00:00Z
printf 'new-user\n' >"$T/nu.pw"
printf 'new-owner\n' >"$T/no.pw"
printf 'wrong\n' >"$T/wrong.pw"
NEWPW="--new-user-password-file $T/nu.pw --new-owner-password-file $T/no.pw"

# Inputs.
cp "$S/r6-table.pdf" "$T/aes256.pdf"
cp "$S/r6-objstm.pdf" "$T/aes256-objstm.pdf"
# (qpdf 11 writes RC4 only with --allow-weak-crypto; older ones lack the option)
WEAK=()
qpdf --help=--allow-weak-crypto >/dev/null 2>&1 && WEAK=(--allow-weak-crypto)
qpdf "${WEAK[@]}" --encrypt "$(head -n 1 "$UPW")" "$(head -n 1 "$OPW")" 128 --use-aes=n -- \
	"$S/plain-2page.pdf" "$T/rc4.pdf"
qpdf --encrypt "$(head -n 1 "$UPW")" "$(head -n 1 "$OPW")" 128 --use-aes=y -- \
	"$S/plain-2page.pdf" "$T/aes128.pdf"
check_grep '^R = 3$' <(qpdf --password-file="$OPW" --show-encryption "$T/rc4.pdf" 2>&1) \
	"qpdf made the RC4-128 input"
check_grep 'stream encryption method: AESv2' \
	<(qpdf --password-file="$OPW" --show-encryption "$T/aes128.pdf" 2>&1) \
	"qpdf made the AES-128 input"
cp "$S/plain-3page.pdf" "$T/plain.pdf"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/c.key" -out "$T/c.pem" -days 2 \
	-subj "/CN=pdfstamp dry-run test" >/dev/null 2>&1
check_true test -s "$T/c.pem" "a certificate for dss made with openssl"

# The arguments of each command (after the command's name), the password
# option included.
args_of() {
	case $1 in
	stamp) echo "--date $DATE --text DRY-RUN --password-file $OPW" ;;
	meta) echo "--date $DATE --set Title=Dry --xmp --password-file $OPW" ;;
	dss) echo "--cert $T/c.pem --password-file $OPW" ;;
	rotate) echo "$NEWPW --password-file $OPW" ;;
	encrypt) echo "$NEWPW" ;;
	esac
}

# state FILE: what must not change: hash, size, mtime (ns), the listing of
# its directory and of $TMPDIR (names, with hidden ones).
state() {
	sha256sum "$1" | cut -d' ' -f1
	stat -c '%s %y %Y' "$1"
	ls -A "$(dirname "$1")"
	echo "--- tmp"
	ls -A "$TD"
}

same_state() { # FILE SAVED DESC
	if [ "$(state "$1")" = "$(cat "$2")" ]; then
		ok "$3"
	else
		fail "$3" "before: $(tr '\n' ' ' <"$2")" "after:  $(state "$1" | tr '\n' ' ')"
	fi
}

# ===========================================================================
# A, B: every command on every input
# ===========================================================================
for cmd in stamp meta dss rotate encrypt; do
	if [ "$cmd" = encrypt ]; then inputs="plain"; else inputs="aes256 aes256-objstm rc4 aes128"; fi
	for in in $inputs; do
		n="$cmd/$in"
		rm -rf "$W" && mkdir -p "$W"
		f=$W/$in.pdf
		cp "$T/$in.pdf" "$f"
		touch -d '2020-02-02 02:02:02.123456789' "$f"
		state "$f" >"$T/saved"
		# shellcheck disable=SC2046
		run "$PDFSTAMP" "$cmd" --dry-run $(args_of "$cmd") -i "$f"
		check_status 0 "$n: --dry-run -i"
		check_grep '^dry run: would .*; nothing written$' "$T/out" "$n: --dry-run -i says what it would write"
		same_state "$f" "$T/saved" "$n: --dry-run -i: input bytes, size, mtime, directory and TMPDIR unchanged"
		# shellcheck disable=SC2046
		run "$PDFSTAMP" "$cmd" --dry-run --json $(args_of "$cmd") -i "$f"
		check_status 0 "$n: --dry-run --json -i"
		cp "$T/out" "$T/dry-i.json"
		check_eq "$(jget "$T/dry-i.json" 'd["dry_run"]')" true "$n: the --json line has \"dry_run\":true"
		check_eq "$(jget "$T/dry-i.json" 'd["journal_pending"]')" false "$n: no journal pending"
		# shellcheck disable=SC2046
		run "$PDFSTAMP" "$cmd" --dry-run --json $(args_of "$cmd") -o "$W/out.pdf" "$f"
		check_status 0 "$n: --dry-run --json -o OUT"
		cp "$T/out" "$T/dry-o.json"
		check_true test ! -e "$W/out.pdf" "$n: --dry-run -o OUT does not create OUT"
		same_state "$f" "$T/saved" "$n: --dry-run -o: input, directory and TMPDIR unchanged"
		# B: the real run
		# shellcheck disable=SC2046
		run "$PDFSTAMP" "$cmd" --json $(args_of "$cmd") -o "$W/out.pdf" "$f"
		check_status 0 "$n: the real run -o OUT"
		cp "$T/out" "$T/real-o.json"
		if [ "$cmd" = rotate ] || [ "$cmd" = encrypt ]; then
			check_eq "$(size_of "$W/out.pdf")" "$(jget "$T/dry-o.json" 'd["bytes_written"]')" \
				"$n: the dry run's bytes_written is the size of the real output (exact)"
			check_eq "$(jget "$T/dry-i.json" 'd["bytes_written"]')" \
				"$(jget "$T/dry-o.json" 'd["bytes_written"]')" "$n: the same size in place"
			for k in objects streams strings payload_bytes; do
				check_eq "$(jget "$T/dry-o.json" "d[\"$k\"]")" "$(jget "$T/real-o.json" "d[\"$k\"]")" \
					"$n: $k as in the real run"
			done
			qpw=$T/no.pw
		else
			check_eq "$(( $(size_of "$W/out.pdf") - $(size_of "$f") ))" \
				"$(jget "$T/dry-o.json" 'd["bytes_appended"]')" \
				"$n: the real run -o appends exactly the dry run's bytes_appended"
			for k in base_length xref_offset bytes_appended objects; do
				check_eq "$(jget "$T/dry-o.json" "d[\"$k\"]")" "$(jget "$T/real-o.json" "d[\"$k\"]")" \
					"$n: $k as in the real run"
			done
			check_eq "$(jget "$T/dry-i.json" 'd["bytes_appended"]')" \
				"$(jget "$T/dry-o.json" 'd["bytes_appended"]')" "$n: the same bytes in place"
			qpw=$OPW
		fi
		if qpdf --password-file="$qpw" --check "$W/out.pdf" >"$T/qpdf.txt" 2>&1; then
			ok "$n: qpdf --check decrypts the real output"
		else
			fail "$n: qpdf --check decrypts the real output" "$(head -5 "$T/qpdf.txt")"
		fi
		# the real run in place appends (or rewrites to) the same size
		before=$(size_of "$f")
		# shellcheck disable=SC2046
		run "$PDFSTAMP" "$cmd" $(args_of "$cmd") -i "$f"
		check_status 0 "$n: the real run -i"
		if [ "$cmd" = rotate ] || [ "$cmd" = encrypt ]; then
			check_eq "$(size_of "$f")" "$(jget "$T/dry-i.json" 'd["bytes_written"]')" \
				"$n: the real run -i writes the dry run's bytes_written"
		else
			check_eq "$(( $(size_of "$f") - before ))" "$(jget "$T/dry-i.json" 'd["bytes_appended"]')" \
				"$n: the real run -i appends exactly the dry run's bytes_appended"
		fi
	done
done

# ===========================================================================
# C: no lock is taken (another process holds it)
# ===========================================================================
rm -rf "$W" && mkdir -p "$W"
cp "$T/aes256.pdf" "$W/locked.pdf"
# the writers' lock (flock(2)) on an open file description of this shell
exec 9<"$W/locked.pdf"
RC=0
flock -x -n 9 || RC=$?
check_status 0 "C: this shell holds the writers' lock on the file"
state "$W/locked.pdf" >"$T/saved"
for cmd in stamp meta dss rotate; do
	# shellcheck disable=SC2046
	run "$PDFSTAMP" "$cmd" $(args_of "$cmd") -i "$W/locked.pdf"
	check_status 1 "C $cmd: the real run -i is refused while another process holds the lock"
	check_grep 'locked' "$T/err" "C $cmd: ... because of the lock"
	# shellcheck disable=SC2046
	run "$PDFSTAMP" "$cmd" --dry-run $(args_of "$cmd") -i "$W/locked.pdf"
	check_status 0 "C $cmd: --dry-run -i needs no lock"
done
same_state "$W/locked.pdf" "$T/saved" "C: the locked file unchanged"
exec 9<&-

# ===========================================================================
# D: under strace, no call that creates, locks, syncs or changes a file
# ===========================================================================
if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true >/dev/null 2>&1; then
	CALLS=open,openat,openat2,creat,flock,fsync,fdatasync,sync,syncfs,sync_file_range,msync
	CALLS=$CALLS,rename,renameat,renameat2,link,linkat,unlink,unlinkat,truncate,ftruncate
	CALLS=$CALLS,mkdir,mkdirat,fchmod,fchmodat,utimensat
	# The calls of the pdfstamp program (from its last execve: $PDFSTAMP
	# may be libtool's wrapper script, whose shell opens /dev/null to
	# write) and of the processes it starts.
	cat >"$T/bad.py" <<'PY'
import re, sys
path, desc = sys.argv[1], sys.argv[2]
lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
start = None
for i, line in enumerate(lines):
    m = re.match(r'(\d+) +execve\("([^"]*)"', line)
    if m and re.search(r'(^|/)(lt-)?pdfstamp$', m.group(2)) and " = 0" in line:
        start, pid0 = i, m.group(1)
if start is None:
    print("FAIL\t%s: the trace shows the program's execve\t%s" % (desc, lines[:3]))
    sys.exit(0)
scope, bad = {pid0}, []
for line in lines[start + 1:]:
    m = re.match(r'(\d+) +(\w+)\((.*)', line)
    if not m or m.group(1) not in scope:
        continue
    pid, call, rest = m.groups()
    r = re.search(r'= (\d+)$', line)
    if call in ("clone", "clone3", "fork", "vfork"):
        if r:
            scope.add(r.group(1))
    elif call in ("open", "openat", "openat2", "creat"):
        if call == "creat" or re.search(r'O_CREAT|O_WRONLY|O_RDWR|O_TMPFILE|O_TRUNC', rest):
            bad.append(line)
    elif call != "execve":
        bad.append(line)
print(("OK\t%s: no open for writing, flock, sync, rename, link, unlink, truncate or chmod "
       "(%d lines traced)" % (desc, len(lines) - start)) if not bad else
      "FAIL\t%s: no open for writing, flock, sync, ...\t%s" % (desc, " | ".join(bad[:4])))
PY
	rm -rf "$W" && mkdir -p "$W"
	for cmd in stamp meta dss rotate encrypt; do
		if [ "$cmd" = encrypt ]; then in=plain; else in=rc4; fi
		cp "$T/$in.pdf" "$W/s.pdf"
		for mode in "-i" "-o $W/out.pdf" "-o -"; do
			RC=0
			# shellcheck disable=SC2046,SC2086
			strace -f -qq -o "$T/strace" -e trace=execve,clone,clone3,fork,vfork,$CALLS \
				"$PDFSTAMP" "$cmd" --dry-run $(args_of "$cmd") $mode "$W/s.pdf" \
				>"$T/out" 2>"$T/err" || RC=$?
			check_status 0 "D $cmd $mode: --dry-run under strace"
			checker_feed "$T/bad.py" "$T/strace" "D $cmd $mode"
			check_true test ! -e "$W/out.pdf" "D $cmd $mode: no output"
		done
	done
	check_grep '^dry run: would write .*standard output' "$T/out" "D: -o - prints the dry run's line"
else
	skip "D: strace is absent or cannot trace here"
fi

# ===========================================================================
# E: refusals are the real run's
# ===========================================================================
python3 "$TOP_SRCDIR/tests/e2e/fixtures/e2e.py" docmdp 1 "$T/mdp1-plain.pdf"
qpdf --encrypt "$(head -n 1 "$UPW")" "$(head -n 1 "$OPW")" 256 -- "$T/mdp1-plain.pdf" "$T/mdp1.pdf"
qpdf --encrypt "$(head -n 1 "$UPW")" "$(head -n 1 "$OPW")" 256 --annotate=n --modify-other=n -- \
	"$S/plain-2page.pdf" "$T/noperm.pdf"
# same_refusal STATUS DESC CMD ARGS...: the real run and the dry run fail
# with STATUS and the same message, and the file (the last argument) and
# its directory stay as they were.
same_refusal() {
	local want=$1 desc=$2 file=${!#}
	shift 2
	state "$file" >"$T/saved"
	run "$PDFSTAMP" "$@"
	check_status "$want" "E $desc: the real run"
	cp "$T/err" "$T/err-real"
	run "$PDFSTAMP" "$1" --dry-run "${@:2}"
	check_status "$want" "E $desc: --dry-run"
	check_eq "$(cat "$T/err")" "$(cat "$T/err-real")" "E $desc: the same message"
	same_state "$file" "$T/saved" "E $desc: the file unchanged"
}
rm -rf "$W" && mkdir -p "$W"
for in in aes256 rc4 aes128; do
	cp "$T/$in.pdf" "$W/$in.pdf"
	for cmd in stamp meta dss; do
		# shellcheck disable=SC2046
		same_refusal 3 "$cmd/$in wrong password" "$cmd" $(args_of "$cmd" | sed "s|$OPW|$T/wrong.pw|") \
			-i "$W/$in.pdf"
	done
	same_refusal 3 "rotate/$in wrong password" rotate $NEWPW --password-file "$T/wrong.pw" \
		-o "$W/out.pdf" "$W/$in.pdf"
	same_refusal 5 "rotate/$in with the user password" rotate $NEWPW --password-file "$UPW" \
		-i "$W/$in.pdf"
	same_refusal 2 "encrypt/$in of an encrypted file" encrypt $NEWPW -o "$W/out.pdf" "$W/$in.pdf"
	same_refusal 1 "stamp/$in -o into a directory" stamp --password-file "$OPW" -o "$W" \
		"$W/$in.pdf"
done
cp "$T/mdp1.pdf" "$W/mdp1.pdf"
same_refusal 5 "stamp DocMDP P=1" stamp --date "$DATE" --password-file "$OPW" -i "$W/mdp1.pdf"
same_refusal 5 "meta DocMDP P=1" meta --set Title=x --password-file "$OPW" -o "$W/out.pdf" \
	"$W/mdp1.pdf"
same_refusal 5 "rotate DocMDP P=1 (signed, no --force)" rotate $NEWPW --password-file "$OPW" \
	-i "$W/mdp1.pdf"
cp "$T/noperm.pdf" "$W/noperm.pdf"
same_refusal 5 "stamp with the user password, annotate denied" stamp --password-file "$UPW" \
	-i "$W/noperm.pdf"
same_refusal 5 "meta with the user password, modify denied" meta --set Title=x \
	--password-file "$UPW" -i "$W/noperm.pdf"
cp "$T/aes256.pdf" "$W/trail.pdf"
printf 'junk after the end\n' >>"$W/trail.pdf"
same_refusal 4 "stamp with bytes after %%EOF" stamp --date "$DATE" --password-file "$OPW" \
	-i "$W/trail.pdf"
same_refusal 1 "meta -o into a missing directory" meta --set Title=x --password-file "$OPW" \
	-o "$W/no/such/out.pdf" "$W/aes256.pdf"
cp "$T/aes256.pdf" "$W/linked.pdf"
ln "$W/linked.pdf" "$W/second-name.pdf"
same_refusal 4 "rotate -i of a file with two hard links" rotate $NEWPW --password-file "$OPW" \
	-i "$W/linked.pdf"
check_true test ! -e "$W/out.pdf" "E: no output after any refusal"

# ===========================================================================
# F: a pending journal is reported, not acted on; -o -
# ===========================================================================
rm -rf "$W" && mkdir -p "$W"
cp "$T/aes256.pdf" "$W/j.pdf"
printf 'not a journal\n' >"$W/j.pdf.pdfstamp-journal"
chmod 600 "$W/j.pdf.pdfstamp-journal"
state "$W/j.pdf" >"$T/saved"
sha256sum "$W/j.pdf.pdfstamp-journal" >"$T/jsum"
run "$PDFSTAMP" stamp --dry-run --json --date "$DATE" --password-file "$OPW" -i "$W/j.pdf"
check_status 0 "F: --dry-run -i with a journal pending"
check_eq "$(jget "$T/out" 'd["journal_pending"]')" true "F: \"journal_pending\":true"
check_grep 'pdfstamp-journal exists' "$T/err" "F: the open's warning names the journal"
same_state "$W/j.pdf" "$T/saved" "F: the file and its directory unchanged"
check_true sha256sum -c --quiet "$T/jsum" "F: the journal left as it was"
run "$PDFSTAMP" stamp --date "$DATE" --password-file "$OPW" -i "$W/j.pdf"
check_status 4 "F: the real run -i refuses the planted journal (recovery)"
run "$PDFSTAMP" meta --dry-run --set Title=x --date "$DATE" --password-file "$OPW" -o - "$W/j.pdf"
check_status 0 "F: --dry-run -o -"
check_grep '^dry run: would write standard output: the [0-9]+ bytes of .* and [0-9]+ appended' \
	"$T/out" "F: -o - prints the dry run's line"
check_no_grep '%PDF' "$T/out" "F: -o - prints no PDF"

# ===========================================================================
# G: --jobs and --ledger
# ===========================================================================
rm -rf "$W" && mkdir -p "$W"
for i in 1 2 3; do cp "$T/rc4.pdf" "$W/b$i.pdf"; done
state "$W/b1.pdf" >"$T/saved"
run "$PDFSTAMP" stamp --dry-run --json --jobs 2 --ordered --date "$DATE" --password-file "$OPW" \
	-i "$W/b1.pdf" "$W/b2.pdf" "$W/b3.pdf"
check_status 0 "G: --dry-run --jobs 2 over three files"
check_eq "$(grep -c '"dry_run":true' "$T/out")" 3 "G: three dry-run lines"
same_state "$W/b1.pdf" "$T/saved" "G: the files and their directory unchanged"
run "$PDFSTAMP" stamp --dry-run --json --ledger "$T/ledger" --date "$DATE" --password-file "$OPW" \
	-i "$W/b1.pdf" "$W/b2.pdf"
check_status 0 "G: --dry-run --ledger with no ledger yet"
check_true test ! -e "$T/ledger" "G: the dry run does not create the ledger"
run "$PDFSTAMP" stamp --json --ledger "$T/ledger" --date "$DATE" --password-file "$OPW" \
	-i "$W/b1.pdf"
check_status 0 "G: a real run records b1.pdf in the ledger"
sha256sum "$T/ledger" >"$T/lsum"
state "$W/b2.pdf" >"$T/saved"
run "$PDFSTAMP" stamp --dry-run --json --ledger "$T/ledger" --date "$DATE" --password-file "$OPW" \
	-i "$W/b1.pdf" "$W/b2.pdf"
check_status 0 "G: --dry-run with the ledger"
check_eq "$(jget "$T/out" '[d.get("skipped"), d.get("dry_run")]' 1)" '["done in the ledger", true]' \
	"G: the file the ledger lists as done is skipped, as the real run would"
check_eq "$(jget "$T/out" '[d.get("skipped"), d.get("dry_run")]' 2)" '[null, true]' \
	"G: the other file is measured"
check_true sha256sum -c --quiet "$T/lsum" "G: the dry run writes no ledger line"
same_state "$W/b2.pdf" "$T/saved" "G: b2.pdf unchanged"

finish
