#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/faults.sh - crash and fault tests of the incremental writer.
#
# PDFSTAMP_FAULT (tests only; see src/io.h and pdfstamp(1); read only by
# tests/pdfstamp-fault, $PDFSTAMP_HOOKED, which runs the faulted commands;
# the installed CLI, $PDFSTAMP, runs the others) makes one step fail with an
# I/O error (fail:write, fail:fsync, fail:rename) or SIGKILLs the process at
# a point (kill:after-journal, kill:after-write, kill:after-fsync for
# --in-place; kill:before-rename for -o).  In every case the input must be
# byte-identical to a saved copy afterwards, with no journal or temporary
# file left and the documented exit status - except for an in-place append
# killed after its write: the update is whole in the file (the page cache
# outlives the process), and `pdfstamp recover` (read-only commands only
# report the journal and change nothing) must keep it and say so (roll
# forward, src/journal.c): then the input's bytes come first, followed by
# exactly one new revision that qpdf and `pdfstamp verify` read.  Also a
# real ENOSPC on a tiny tmpfs (when this user may mount one), a wrong
# password (3), no annotation permission (5), and a journal that does not
# belong to the file (never touched).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need_faults

need python3
need qpdf

e2e_inputs qpdf-r6-table qpdf-r6-xrefstream
W=$T/work          # the directory the files under test live in
mkdir -p "$W"

# same FILE ORIG DESC
same() {
	if cmp -s "$1" "$2"; then
		ok "$3: the input is byte-identical to the saved copy"
	else
		fail "$3: the input is byte-identical to the saved copy" \
			"size $(size_of "$1") vs $(size_of "$2"): $(cmp "$1" "$2" 2>&1)"
	fi
}
# clean DIR DESC: no journal and no temporary file in DIR
clean() {
	local left
	left=$(cd "$1" && ls -A | grep -E '\.pdfstamp-|^\.pdfstamp-' | tr '\n' ' ')
	check_eq "$left" "" "$2: no journal or temporary file left"
}
# fault_run FAULT CMD ARGS...: runs pdfstamp with PDFSTAMP_FAULT set.
fault_run() {
	local f=$1
	shift
	RC=0
	PDFSTAMP_FAULT=$f "$PDFSTAMP_HOOKED" "$@" >"$T/out" 2>"$T/err" </dev/null || RC=$?
}

# ===========================================================================
# Part 1: --in-place
# ===========================================================================
for src in qpdf-r6-table qpdf-r6-xrefstream; do
	for cmd in stamp meta; do
		case $cmd in
		stamp) args=(stamp --password-file "$UPW" --note "fault test" -i) ;;
		meta) args=(meta --password-file "$UPW" --set "Title=fault test" --xmp -i) ;;
		esac
		for fault in kill:after-journal kill:after-write kill:after-fsync fail:write fail:fsync; do
			name="$src $cmd -i $fault"
			f=$W/doc.pdf
			cp "$D/$src.pdf" "$f"
			cp "$D/$src.pdf" "$T/orig.pdf"
			fault_run "$fault" "${args[@]}" "$f"
			case $fault in
			kill:*)
				check_eq "$RC" 137 "$name: killed by SIGKILL"
				check_true test -e "$f.pdfstamp-journal" "$name: the journal is left behind"
				if [ "$fault" != kill:after-journal ]; then
					check_true test "$(size_of "$f")" -gt "$(size_of "$T/orig.pdf")" \
						"$name: the killed run left appended bytes"
				fi
				# Read-only commands report the journal and change nothing.
				cp "$f" "$T/killed.pdf"
				run "$PDFSTAMP" info --json --password-file "$UPW" "$f"
				check_status 0 "$name: the next 'pdfstamp info' opens the file"
				check_grep '^pdfstamp: warning: .*pdfstamp recover' "$T/err" \
					"$name: info warns about the journal"
				check_eq "$(jget "$T/out" 'd["journal_pending"]')" true "$name: info --json: journal_pending"
				same "$f" "$T/killed.pdf" "$name: info changes nothing"
				# `pdfstamp recover` keeps a whole update, or removes only
				# the journal of one that never reached the file.
				run "$PDFSTAMP" recover --json "$f"
				check_status 0 "$name: 'pdfstamp recover' succeeds"
				if [ "$fault" = kill:after-journal ]; then
					check_eq "$(jget "$T/out" 'd["action"]')" '"removed_journal"' \
						"$name: recover removes only the journal"
					same "$f" "$T/orig.pdf" "$name"
				else
					check_eq "$(jget "$T/out" 'd["action"]')" '"completed"' \
						"$name: recover keeps the whole update"
					same "$f" "$T/killed.pdf" "$name: recover changes no byte"
					if cmp -s -n "$(size_of "$T/orig.pdf")" "$T/orig.pdf" "$f"; then
						ok "$name: the original bytes come first"
					else
						fail "$name: the original bytes come first"
					fi
					qcheck "$f" "$UPW" "$name: the kept update"
					run "$PDFSTAMP" info --json --password-file "$UPW" "$T/orig.pdf"
					r0=$(jget "$T/out" 'd["revisions"]')
					run "$PDFSTAMP" info --json --password-file "$UPW" "$f"
					check_eq "$(jget "$T/out" 'd["revisions"]')" "$((r0 + 1))" "$name: exactly one new revision"
					run "$PDFSTAMP" verify -q --password-file "$UPW" "$f"
					check_status 0 "$name: pdfstamp verify passes on the kept update"
				fi
				;;
			fail:*)
				check_status 1 "$name: an I/O error"
				check_grep '^pdfstamp: .*doc\.pdf' "$T/err" "$name: the error names the file"
				same "$f" "$T/orig.pdf" "$name"
				;;
			esac
			clean "$W" "$name"
			# and the file can still be updated
			run "$PDFSTAMP" "${args[@]}" "$f"
			check_status 0 "$name: a later run succeeds"
			qcheck "$f" "$UPW" "$name: later run"
			rm -f "$W"/* "$W"/.pdfstamp-* 2>/dev/null
		done
	done
done

# A killed in-place append is also completed by the next `stamp` itself.
f=$W/doc.pdf
cp "$D/qpdf-r6-table.pdf" "$f"
cp "$f" "$T/orig.pdf"
fault_run kill:after-write stamp --password-file "$UPW" --text FIRST -i "$f"
check_eq "$RC" 137 "kill:after-write, then stamp: killed"
cp "$f" "$T/killed.pdf"
run "$PDFSTAMP" stamp --json --password-file "$UPW" --text SECOND -i "$f"
check_status 0 "kill:after-write, then stamp: the next stamp succeeds"
check_grep '^pdfstamp: warning: .*update is kept' "$T/err" "kill:after-write, then stamp: the kept update is reported"
check_eq "$(jget "$T/out" 'd["base_length"]')" "$(size_of "$T/killed.pdf")" \
	"kill:after-write, then stamp: the new revision starts after the kept one"
if cmp -s -n "$(size_of "$T/killed.pdf")" "$T/killed.pdf" "$f"; then
	ok "kill:after-write, then stamp: the kept update's bytes are intact"
else
	fail "kill:after-write, then stamp: the kept update's bytes are intact"
fi
if cmp -s -n "$(size_of "$T/orig.pdf")" "$T/orig.pdf" "$f"; then
	ok "kill:after-write, then stamp: the original bytes are intact"
else
	fail "kill:after-write, then stamp: the original bytes are intact"
fi
qcheck "$f" "$UPW" "kill:after-write, then stamp"
run "$PDFSTAMP" info --json --password-file "$UPW" "$f"
check_eq "$(jget "$T/out" 'd["revisions"]')" 3 "kill:after-write, then stamp: the kept revision and the new one"
clean "$W" "kill:after-write, then stamp"
rm -f "$W"/*

# A journal that does not belong to the file is never acted on
# (tests/e2e/journal.sh has the hostile ones).
cp "$D/qpdf-r6-table.pdf" "$f"
cp "$f" "$T/orig.pdf"
printf 'not a journal\n' >"$f.pdfstamp-journal"
chmod 600 "$f.pdfstamp-journal"
run "$PDFSTAMP" info --password-file "$UPW" "$f"
check_status 0 "a foreign journal: info reads the file as it is"
check_grep '^pdfstamp: warning: .*journal' "$T/err" "a foreign journal: info warns"
run "$PDFSTAMP" recover "$f"
check_status 4 "a foreign journal: recover refuses to guess"
run "$PDFSTAMP" stamp --password-file "$UPW" -i "$f"
check_status 4 "a foreign journal: stamp -i refuses to start"
same "$f" "$T/orig.pdf" "a foreign journal"
check_true test -e "$f.pdfstamp-journal" "a foreign journal is left for a human"
rm -f "$W"/*

# ===========================================================================
# Part 2: -o OUT
# ===========================================================================
for cmd in stamp meta; do
	case $cmd in
	stamp) args=(stamp --password-file "$UPW") ;;
	meta) args=(meta --password-file "$UPW" --set "Title=fault test") ;;
	esac
	for fault in kill:after-write kill:before-rename fail:write fail:fsync fail:rename; do
		name="$cmd -o $fault"
		f=$W/doc.pdf
		cp "$D/qpdf-r6-table.pdf" "$f"
		cp "$f" "$T/orig.pdf"
		fault_run "$fault" "${args[@]}" -o "$W/out.pdf" "$f"
		case $fault in
		kill:*) check_eq "$RC" 137 "$name: killed by SIGKILL" ;;
		fail:*) check_status 1 "$name: an I/O error" ;;
		esac
		same "$f" "$T/orig.pdf" "$name"
		check_true test ! -e "$W/out.pdf" "$name: no output file"
		case $fault in
		kill:before-rename)
			# The output is written as an unnamed file (O_TMPFILE) and only
			# named just before the rename, so this is the one kill that may
			# leave a hidden ".pdfstamp-*" file (documented in src/io.c).  It
			# must be a complete copy and no more readable than the input.
			for t in "$W"/.pdfstamp-*; do
				[ -e "$t" ] || continue
				check_eq "$(( 0$(stat -c %a "$t") & ~0$(stat -c %a "$f") ))" 0 \
					"$name: the leftover temporary file is no more readable than the input"
				if cmp -s -n "$(size_of "$f")" "$f" "$t"; then
					ok "$name: the leftover temporary file is a complete copy"
				else
					fail "$name: the leftover temporary file is a complete copy"
				fi
				rm -f "$t"
			done
			;;
		*) clean "$W" "$name" ;;
		esac
		# an existing output is not clobbered by a failed run
		printf 'previous contents\n' >"$W/out.pdf"
		fault_run "$fault" "${args[@]}" -o "$W/out.pdf" "$f"
		check_eq "$(cat "$W/out.pdf")" "previous contents" "$name: an existing output file is left alone"
		rm -f "$W"/* "$W"/.pdfstamp-*
	done
done

# ===========================================================================
# Part 3: a full disk (a real ENOSPC on a tiny tmpfs)
# ===========================================================================
M=$T/full
mkdir -p "$M"
if mount -t tmpfs -o size=200k tmpfs "$M" 2>"$T/mount.err"; then
	trap 'umount "$M" 2>/dev/null; rm -rf "$T"' EXIT
	for mode in in-place out; do
		name="ENOSPC ($mode)"
		f=$M/doc.pdf
		cp "$D/qpdf-r6-xrefstream.pdf" "$f"
		cp "$f" "$T/orig.pdf"
		dd if=/dev/zero of="$M/filler" bs=4096 >/dev/null 2>&1 || true
		# one free page: enough for a journal, not for a 3-page stamp
		truncate -s -4096 "$M/filler"
		if [ $mode = in-place ]; then
			run "$PDFSTAMP" stamp --password-file "$UPW" --page all -i "$f"
		else
			run "$PDFSTAMP" stamp --password-file "$UPW" --page all -o "$M/out.pdf" "$f"
			check_true test ! -e "$M/out.pdf" "$name: no output file"
		fi
		check_status 1 "$name: an I/O error"
		check_grep 'space|ENOSPC' "$T/err" "$name: the message says the disk is full"
		same "$f" "$T/orig.pdf" "$name"
		clean "$M" "$name"
		rm -f "$M"/* "$M"/.pdfstamp-*
	done
	umount "$M" || fail "umount the tmpfs"
else
	echo "SKIP: cannot mount a tmpfs here ($(head -c 200 "$T/mount.err")): no real ENOSPC test"
fi

# ===========================================================================
# Part 4: wrong password, no permission
# ===========================================================================
f=$W/doc.pdf
cp "$D/qpdf-r6-table.pdf" "$f"
cp "$f" "$T/orig.pdf"
printf 'not the password\n' >"$T/wrong.pw"
for cmd in "stamp -i" "meta --set Title=x -i"; do
	run "$PDFSTAMP" $cmd --password-file "$T/wrong.pw" "$f"
	check_status 3 "$cmd with a wrong password"
	check_no_grep 'not the password' "$T/err" "$cmd: the password is not echoed"
	same "$f" "$T/orig.pdf" "$cmd with a wrong password"
	clean "$W" "$cmd with a wrong password"
done
run "$PDFSTAMP" stamp --password-file "$T/wrong.pw" -o "$W/out.pdf" "$f"
check_status 3 "stamp -o with a wrong password"
check_true test ! -e "$W/out.pdf" "stamp -o with a wrong password: no output"

qpdf --encrypt "$(head -n1 "$UPW")" "$(head -n1 "$OPW")" 256 --annotate=n --modify=none -- \
	"$TOP_SRCDIR/samples/plain-2page.pdf" "$f"
cp "$f" "$T/orig.pdf"
run "$PDFSTAMP" stamp --password-file "$UPW" -i "$f"
check_status 5 "stamp without the annotation permission"
same "$f" "$T/orig.pdf" "stamp without the annotation permission"
run "$PDFSTAMP" meta --password-file "$UPW" --set Title=x -i "$f"
check_status 5 "meta without the modify permission"
same "$f" "$T/orig.pdf" "meta without the modify permission"
clean "$W" "no permission"

# a read-only file: an I/O error, nothing changed
cp "$D/qpdf-r6-table.pdf" "$W/ro.pdf"
chmod 444 "$W/ro.pdf"
cp "$W/ro.pdf" "$T/orig.pdf"
if [ "$(id -u)" != 0 ]; then
	run "$PDFSTAMP" stamp --password-file "$UPW" -i "$W/ro.pdf"
	check_status 1 "stamp -i on a read-only file"
	same "$W/ro.pdf" "$T/orig.pdf" "stamp -i on a read-only file"
fi

finish
