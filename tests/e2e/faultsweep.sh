#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/faultsweep.sh - every write, fsync and rename of every writing
# command fails in turn, and the process is killed at each of them and at
# each named phase.
#
# PDFSTAMP_FAULT=trace makes pdfstamp print each fault point it reaches
# ("pdfstamp: fault point write 3").  For each command below one traced
# run lists the points; then, for every point P reached K times and every
# k <= K, the command runs again with fail:P:k (write, fsync and rename
# only: the phases are not I/O calls) and with kill:P:k.  Every run must
#   - end with the documented status: 1 (I/O error, with a message naming
#     the file) for a failure, SIGKILL (137) for a kill;
#   - leave the input byte-identical to a saved copy; except that an
#     in-place append killed after its write has reached the file (the
#     page cache outlives the process) is kept by `pdfstamp recover` (roll
#     forward, src/journal.c), which must say "completed": then the file
#     is the input followed by one whole revision (qpdf --check and
#     `pdfstamp verify` pass), and a kill before the write leaves the
#     input byte-identical once recover has removed the journal;
#   - leave no output file for -o, and no journal or temporary file, except
#     the one documented case: a kill at the rename of a new file may leave
#     a complete hidden ".pdfstamp-XXXXXX" file, never readable by more
#     users than the input (src/io.c).
# The input itself passes qpdf --check, so byte-identical means readable.
# The hook exists only in the test programs (tests/fault.c, src/io.h): the
# traced and faulted runs are tests/pdfstamp-fault's ($PDFSTAMP_HOOKED);
# recover and verify are the installed CLI's ($PDFSTAMP).
#
# The input has three 700 KB streams, so that a rewrite writes in several
# pieces (one pwritev per MB listed: io.c note "Gathered writes").

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need_faults

need python3
need qpdf

W=$T/work
mkdir -p "$W"
UPW=$T/user.pw
OPW=$T/owner.pw
printf 'sweep-user\n' >"$UPW"
printf 'sweep-owner\n' >"$OPW"
printf 'sweep-new-user\n' >"$T/nu.pw"
printf 'sweep-new-owner\n' >"$T/no.pw"
NEWPW=(--new-user-password-file "$T/nu.pw" --new-owner-password-file "$T/no.pw")

python3 - "$TOP_SRCDIR/tests/e2e/fixtures" "$T/plain.pdf" <<'PY'
import random, sys
sys.path.insert(0, sys.argv[1])
from e2e import stream, write_pdf
rnd = random.Random(7)
objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>"}
kids = []
for i in range(3):
    c, d, p = 3 + 3 * i, 4 + 3 * i, 5 + 3 * i
    objs[c] = stream(b"BT /F1 12 Tf 72 720 Td (page %d) Tj ET" % (i + 1))
    objs[d] = stream(bytes(rnd.getrandbits(8) for _ in range(700 * 1024)))
    objs[p] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
               b" /Resources << >> /PieceInfo << /Sweep << /Private %d 0 R >> >> >>" % (c, d))
    kids.append(p)
objs[2] = b"<< /Type /Pages /Count 3 /Kids [%s] >>" % b" ".join(b"%d 0 R" % k for k in kids)
write_pdf(sys.argv[2], objs)
PY
if ! qpdf --encrypt sweep-user sweep-owner 256 -- "$T/plain.pdf" "$T/enc.pdf" 2>"$T/qpdf.err"; then
	fail "qpdf encrypts the sweep input" "$(cat "$T/qpdf.err")"
	finish
fi

# leftovers DIR: names of journal and temporary files in DIR
leftovers() { (cd "$1" && ls -A | grep -E '\.pdfstamp-' | tr '\n' ' '); }

# sweep NAME MODE INPUT ARGS...: MODE is "i" (the command gets FILE last and
# changes it in place) or "o" (the command gets -o OUT FILE).
sweep() {
	local name=$1 mode=$2 input=$3 f=$W/doc.pdf out=$W/out.pdf
	local pts p k n fault bad runs=0 left kept=0
	shift 3
	local -a cmd=("$@")
	if [ "$mode" = o ]; then cmd+=(-o "$out"); fi
	cmd+=("$f")

	cp "$input" "$f"
	run env PDFSTAMP_FAULT=trace "$PDFSTAMP_HOOKED" "${cmd[@]}" </dev/null
	check_status 0 "$name: the traced run succeeds"
	# "point count" pairs: the highest count seen of each point
	pts=$(sed -n 's/^pdfstamp: fault point \([a-z-]*\) \([0-9]*\)$/\1 \2/p' "$T/err" |
		sort -k1,1 -k2,2n | awk '{n[$1] = $2} END {for (p in n) print p, n[p]}' | sort)
	check_true test -n "$pts" "$name: the traced run reaches fault points"
	check_grep '^write ' <(printf '%s\n' "$pts") "$name: the traced run writes through the fault points"
	rm -f "$W"/* "$W"/.pdfstamp-* 2>/dev/null

	bad=0
	while read -r p n; do
		[ -n "$p" ] || continue
		for k in $(seq 1 "$n"); do
			for fault in "fail:$p:$k" "kill:$p:$k"; do
				case $fault in fail:write:* | fail:fsync:* | fail:rename:*) ;; fail:*) continue ;; esac
				runs=$((runs + 1))
				cp "$input" "$f"
				RC=0
				PDFSTAMP_FAULT=$fault "$PDFSTAMP_HOOKED" "${cmd[@]}" >"$T/out" 2>"$T/err" </dev/null || RC=$?
				case $fault in
				fail:*)
					if [ "$RC" != 1 ] || ! grep -q '^pdfstamp: .*doc\.pdf' "$T/err"; then
						fail "$name $fault: exit 1 with a message naming the file" \
							"exit $RC: $(head -c 300 "$T/err")"
						bad=$((bad + 1))
					fi
					;;
				kill:*)
					if [ "$RC" != 137 ]; then
						fail "$name $fault: killed (137)" "exit $RC: $(head -c 300 "$T/err")"
						bad=$((bad + 1))
					fi
					if [ -e "$f.pdfstamp-journal" ]; then
						RC=0
						"$PDFSTAMP" recover "$f" >"$T/out" 2>"$T/err" </dev/null || RC=$?
						if [ "$RC" != 0 ] || ! grep -Eq '(completed|removed the journal)' "$T/out"; then
							fail "$name $fault: recover completes the append or removes its journal" \
								"exit $RC: $(head -c 300 "$T/err")"
							bad=$((bad + 1))
						elif grep -q 'completed' "$T/out"; then
							# the whole update is kept: the input, then one revision
							kept=$((kept + 1))
							if ! cmp -s -n "$(stat -c %s "$input")" "$f" "$input" ||
								[ "$(stat -c %s "$f")" -le "$(stat -c %s "$input")" ] ||
								! qpdf --password-file="$UPW" --check "$f" >/dev/null 2>&1 ||
								! "$PDFSTAMP" verify -q --password-file "$UPW" "$f" >/dev/null 2>&1; then
								fail "$name $fault: the kept update follows the input's bytes and reads"
								bad=$((bad + 1))
							fi
							cp "$input" "$f" # for the checks below
						fi
					fi
					;;
				esac
				if ! cmp -s "$f" "$input"; then
					fail "$name $fault: the input is byte-identical" "$(cmp "$f" "$input" 2>&1)"
					bad=$((bad + 1))
				fi
				if [ "$mode" = o ] && [ -e "$out" ]; then
					fail "$name $fault: no output file"
					bad=$((bad + 1))
				fi
				left=$(leftovers "$W")
				if [ -n "$left" ]; then
					case $fault in
					kill:rename:* | kill:before-rename:*)
						for t in "$W"/.pdfstamp-*; do
							[ -e "$t" ] || continue
							case $t in *-journal) fail "$name $fault: a journal is left" ; bad=$((bad + 1)) ;; esac
							if [ $(( 0$(stat -c %a "$t") & ~0$(stat -c %a "$input") )) != 0 ]; then
								fail "$name $fault: a leftover temporary file is more readable than the input"
								bad=$((bad + 1))
							fi
						done
						;;
					*)
						fail "$name $fault: no journal or temporary file left" "$left"
						bad=$((bad + 1))
						;;
					esac
				fi
				rm -f "$W"/* "$W"/.pdfstamp-* 2>/dev/null
			done
		done
	done <<<"$pts"
	check_eq "$bad" 0 "$name: $runs injected failures and kills, every one safe ($kept kept whole by recover)"
	case $name in
	"stamp -i" | "meta -i")
		# fsync:2 (the file's), after-write and after-fsync
		check_true test "$kept" -ge 3 "$name: kills after the write leave a whole update, kept ($kept)" ;;
	esac
	check_true test "$runs" -ge 4 "$name: at least four points swept ($runs)"
}

sweep "stamp -i" i "$T/enc.pdf" stamp --password-file "$UPW" --page all -i
sweep "stamp -o" o "$T/enc.pdf" stamp --password-file "$UPW" --page all
sweep "meta -i" i "$T/enc.pdf" meta --password-file "$UPW" --set "Title=sweep" --xmp -i
sweep "meta -o" o "$T/enc.pdf" meta --password-file "$UPW" --set "Title=sweep" --xmp
sweep "rotate -i" i "$T/enc.pdf" rotate --password-file "$OPW" "${NEWPW[@]}" -i
sweep "rotate -o" o "$T/enc.pdf" rotate --password-file "$OPW" "${NEWPW[@]}"
sweep "encrypt -i" i "$T/plain.pdf" encrypt "${NEWPW[@]}" -i
sweep "encrypt -o" o "$T/plain.pdf" encrypt "${NEWPW[@]}"

# sweep_group NAME ARGS...: the same over three files updated in place by
# one command (a group: their journals written and linked, one directory
# sync, then each update; src/cli/driver.c note 13).  After every failure or
# kill, and `pdfstamp recover` of each journal left, each file is either
# byte-identical to the input or the input followed by one whole revision
# that reads; a failure exits 1; nothing is left behind.
sweep_group() {
	local name=$1 pts p k n fault bad=0 runs=0 kept=0 i f
	shift
	local -a cmd=("$@" "$W/d1.pdf" "$W/d2.pdf" "$W/d3.pdf")
	for i in 1 2 3; do cp "$T/enc.pdf" "$W/d$i.pdf"; done
	run env PDFSTAMP_FAULT=trace "$PDFSTAMP_HOOKED" "${cmd[@]}" </dev/null
	check_status 0 "$name: the traced run succeeds"
	check_eq "$(grep -c '^pdfstamp: fault point after-journal' "$T/err")" 3 \
		"$name: the traced run updates three files"
	pts=$(sed -n 's/^pdfstamp: fault point \([a-z-]*\) \([0-9]*\)$/\1 \2/p' "$T/err" |
		sort -k1,1 -k2,2n | awk '{n[$1] = $2} END {for (p in n) print p, n[p]}' | sort)
	rm -f "$W"/* "$W"/.pdfstamp-* 2>/dev/null
	while read -r p n; do
		[ -n "$p" ] || continue
		for k in $(seq 1 "$n"); do
			for fault in "fail:$p:$k" "kill:$p:$k"; do
				case $fault in fail:write:* | fail:fsync:*) ;; fail:*) continue ;; esac
				runs=$((runs + 1))
				for i in 1 2 3; do cp "$T/enc.pdf" "$W/d$i.pdf"; done
				RC=0
				PDFSTAMP_FAULT=$fault "$PDFSTAMP_HOOKED" "${cmd[@]}" >"$T/out" 2>"$T/err" </dev/null || RC=$?
				case $fault in
				fail:*) [ "$RC" = 1 ] || { fail "$name $fault: exit 1" "exit $RC"; bad=$((bad + 1)); } ;;
				kill:*) [ "$RC" = 137 ] || { fail "$name $fault: killed" "exit $RC"; bad=$((bad + 1)); } ;;
				esac
				for i in 1 2 3; do
					f=$W/d$i.pdf
					if [ -e "$f.pdfstamp-journal" ] &&
						! "$PDFSTAMP" recover "$f" >/dev/null 2>&1 </dev/null; then
						fail "$name $fault: recover of d$i.pdf"
						bad=$((bad + 1))
					fi
					if cmp -s "$f" "$T/enc.pdf"; then
						continue
					elif cmp -s -n "$(stat -c %s "$T/enc.pdf")" "$f" "$T/enc.pdf" &&
						[ "$(revs "$f")" = $(($(revs "$T/enc.pdf") + 1)) ] &&
						qpdf --password-file="$UPW" --check "$f" >/dev/null 2>&1; then
						kept=$((kept + 1))
					else
						fail "$name $fault: d$i.pdf is the input, or the input and one whole revision"
						bad=$((bad + 1))
					fi
				done
				if [ -n "$(leftovers "$W")" ]; then
					fail "$name $fault: no journal or temporary file left" "$(leftovers "$W")"
					bad=$((bad + 1))
				fi
				rm -f "$W"/* "$W"/.pdfstamp-* 2>/dev/null
			done
		done
	done <<<"$pts"
	check_eq "$bad" 0 "$name: $runs injected failures and kills over three files, every one safe ($kept files updated whole)"
	check_true test "$runs" -ge 20 "$name: at least twenty points swept ($runs)"
}
revs() { python3 -c 'import sys; print(open(sys.argv[1], "rb").read().count(b"startxref"))' "$1"; }

sweep_group "stamp -i, three files, one worker" stamp --password-file "$UPW" --jobs 1 -i
sweep_group "meta -i, three files, two workers" meta --password-file "$UPW" --set "Title=sweep" --jobs 2 -i

# The rewrites really did write in several pieces (else "every write" of a
# rewrite would be one write): the 2.1 MB input's objects go out in two
# gathered writes (one pwritev per MB listed, and the rest of the batch:
# io.c note "Gathered writes"), then the xref.
cp "$T/enc.pdf" "$W/doc.pdf"
run env PDFSTAMP_FAULT=trace "$PDFSTAMP_HOOKED" rotate --password-file "$OPW" "${NEWPW[@]}" -i "$W/doc.pdf" </dev/null
check_true test "$(grep -c '^pdfstamp: fault point write ' "$T/err")" -ge 3 \
	"rotate writes the 2.1 MB input in at least three pieces"
# The input is a valid file, so "byte-identical" above means "readable".
run qpdf --password=sweep-user --check "$T/enc.pdf"
check_status 0 "the sweep input passes qpdf --check"
rm -f "$W"/*

# A malformed fault spec never fires (so a typo cannot pass as a fault test).
for spec in fail:write:0 fail:write:x fail:write: fail:writes kill:nowhere; do
	cp "$T/enc.pdf" "$W/doc.pdf"
	run env PDFSTAMP_FAULT="$spec" "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$W/doc.pdf"
	check_status 0 "PDFSTAMP_FAULT=$spec does not fire"
done

finish
