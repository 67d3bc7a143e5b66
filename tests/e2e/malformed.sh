#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/malformed.sh - the hostile-input corpus (tests/malformed/).
#
# For every file listed in tests/malformed/INDEX (made by make-corpus.py)
# this runs, on a private copy,
#     pdfstamp info --json --password-file PW FILE
#     pdfstamp stamp -o OUT --password-file PW FILE
#     pdfstamp verify --password-file PW FILE
#     pdfstamp stamps --json --password-file PW FILE
#     pdfstamp unstamp --id absent_id -o OUT --password-file PW FILE
#     pdfstamp meta --set ... --xmp -o OUT --password-file PW FILE
#     pdfstamp rotate -o OUT ... FILE   (encrypt -o OUT for a plaintext FILE)
# (no --password-file where INDEX says "none": the plaintext files, since
# writers refuse a password for a file that is not encrypted), and the same
# for every file of tests/malformed/pubsec/INDEX (files encrypted to
# certificates, made by make-pubsec.py; issue 33) with the key options
# --key key.pem --cert cert.pem where it says "key", other-key.pem and
# other-cert.pem where it says "other", and rotate --to-password as the
# rewrite
# and, for every image of tests/malformed/images/,
#     pdfstamp stamp --image IMAGE -o OUT --password-file user.pw r6-base.pdf
# (exit 4, nothing written), and for every font of tests/malformed/fonts/INDEX,
#     pdfstamp stamp --font FONT --text TEXT -o OUT --password-file user.pw r6-base.pdf
# (the exit its outcome there implies);
# under a memory limit (ulimit -v 1 GB; with an ASan build, whose shadow
# memory needs a huge address space, ASan's hard_rss_limit_mb instead) and
# `timeout 20`, and asserts for each command:
#   - the exit status documented in INDEX (0 ok, 3 wrong password,
#     4 malformed or unsupported) for info and stamp; one of the documented
#     statuses other than 1 (I/O or internal error) and 2 (usage) for
#     verify, meta and the rewrite; a rewritten output verifies with its new
#     password, and a meta output verifies if its input did;
#   - no crash: no signal or timeout (exit >= 124) and no sanitizer report;
#   - on failure, a non-empty message on stderr starting with "pdfstamp: "
#     that does not repeat itself (a garbled-message heuristic);
#   - the input is byte-identical afterwards (sha256);
#   - after a failed stamp, OUT does not exist; after a successful one it
#     starts with the input's exact bytes; no other file (temp, journal)
#     is left in the directory.
# An exit written "xfail:N" in INDEX is a known library bug: any problem is
# printed as XFAIL (not counted as a pass), a match as a failure (XPASS:
# update INDEX).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need sha256sum
need timeout

M=$TOP_SRCDIR/tests/malformed
INDEX=$M/INDEX
if [ ! -f "$INDEX" ]; then
	echo "SKIP: $INDEX is missing"
	exit 77
fi

T_XFAIL=0
LIMIT_KB=$((1024 * 1024))
# An ASan binary cannot run under ulimit -v; use ASan's own RSS cap there.
if (ulimit -v "$LIMIT_KB" && "$PDFSTAMP" --version) >/dev/null 2>&1; then
	use_ulimit=1
else
	use_ulimit=0
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=1024:detect_leaks=1"
	echo "# ulimit -v breaks this binary (sanitizers?): memory capped by ASan's hard_rss_limit_mb"
fi
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1"

# limited CMD...: like run, under the memory and time limits.
limited() {
	RC=0
	if [ "$use_ulimit" = 1 ]; then
		(ulimit -v "$LIMIT_KB"; exec timeout -k 5 20 "$@") >"$T/out" 2>"$T/err" || RC=$?
	else
		timeout -k 5 20 "$@" >"$T/out" 2>"$T/err" || RC=$?
	fi
}

# verdict NAME WHAT EXPECTED: checks the last limited run.  EXPECTED is an
# exit status or several, as in 0|3|4.
verdict() {
	local name=$1 what=$2 want=$3 xfail=0 problems=()
	case $want in
	xfail:*) xfail=1; want=${want#xfail:} ;;
	esac
	if [ "$RC" -ge 124 ]; then
		problems+=("crashed, timed out or was killed (exit $RC)")
	fi
	if grep -Eq 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|Sanitizer' "$T/err"; then
		problems+=("sanitizer report")
	fi
	case "|$want|" in
	*"|$RC|"*) ;;
	*) problems+=("exit $RC, expected $want") ;;
	esac
	if [ "$RC" != 0 ] && [ "$RC" -lt 124 ]; then
		if [ ! -s "$T/err" ]; then
			problems+=("no message on stderr")
		elif ! head -n 1 "$T/err" | grep -q '^pdfstamp: .'; then
			problems+=("stderr does not start with 'pdfstamp: '")
		elif grep -v '^pdfstamp: warning:' "$T/err" | head -n 1 | grep -Eq '(.{16,}).*\1'; then
			problems+=("garbled message (a clause repeated)")
		fi
	fi
	if [ "$xfail" = 1 ]; then
		if [ ${#problems[@]} -gt 0 ]; then
			T_XFAIL=$((T_XFAIL + 1))
			printf 'XFAIL - %s %s: known library bug: %s\n' "$name" "$what" "${problems[*]}"
			printf '        stderr: %s\n' "$(head -c 300 "$T/err" | tr '\n' ' ')"
		else
			fail "$name $what: XPASS (exit $RC as documented): remove 'xfail:' from INDEX"
		fi
		return
	fi
	if [ ${#problems[@]} -eq 0 ]; then
		ok "$name $what (exit $RC)"
	else
		fail "$name $what: ${problems[*]}" "stderr: $(head -c 600 "$T/err")"
	fi
}

NEWU=$T/new-u.pw
NEWO=$T/new-o.pw
printf 'rotated-user\n' >"$NEWU"
printf 'rotated-owner\n' >"$NEWO"
count=0
rotated=0
while IFS=$'\t' read -r name info_exit stamp_exit pw desc; do
	case $name in
	'#'* | '') continue ;;
	esac
	count=$((count + 1))
	f=$T/in.pdf
	out=$T/out.pdf
	cp "$M/$name" "$f" || { fail "$name: cannot copy"; continue; }
	before=$(sha256sum <"$f")
	# "none": a plaintext file, given no password option (writers refuse
	# to write to a file that is not encrypted when a password was given)
	case $pw in
	none) pwo=() ;;
	key) pwo=(--key "$M/pubsec/key.pem" --cert "$M/pubsec/cert.pem") ;;
	other) pwo=(--key "$M/pubsec/other-key.pem" --cert "$M/pubsec/other-cert.pem") ;;
	*) pwo=(--password-file "$M/$pw.pw") ;;
	esac

	limited "$PDFSTAMP" info --json "${pwo[@]}" "$f"
	verdict "$name" info "$info_exit"

	rm -f "$out"
	limited "$PDFSTAMP" stamp -o "$out" "${pwo[@]}" "$f"
	verdict "$name" stamp "$stamp_exit"
	if [ "$RC" = 0 ]; then
		size=$(stat -c %s "$f")
		if [ -f "$out" ] && cmp -s -n "$size" "$f" "$out"; then
			ok "$name: the stamped output starts with the input's bytes"
		else
			fail "$name: the stamped output is missing or does not start with the input"
		fi
	elif [ -e "$out" ]; then
		fail "$name: a failed stamp left its output file behind"
	fi
	# stamps and unstamp (issue 32): every page's /Annots read; documented
	# statuses only, and unstamp of an ID the file lacks writes nothing
	limited "$PDFSTAMP" stamps --json "${pwo[@]}" "$f"
	verdict "$name" stamps "0|3|4"
	rm -f "$out"
	limited "$PDFSTAMP" unstamp --id absent_id -o "$out" "${pwo[@]}" "$f"
	verdict "$name" unstamp "0|3|4|5"
	[ -e "$out" ] && fail "$name: unstamp of an absent ID wrote an output file"
	# verify and the full rewrite (rotate, or encrypt for a plaintext file)
	# have no per-file expectation in INDEX: each must end with one of its
	# documented statuses, safely; a rewritten output must verify with its
	# new password.
	limited "$PDFSTAMP" verify "${pwo[@]}" "$f"
	verdict "$name" verify "0|3|4"
	input_verified=$RC
	rm -f "$out"
	limited "$PDFSTAMP" meta --set "Title=a <b> & c" --set "Ticket=T-1" --xmp -o "$out" \
		"${pwo[@]}" "$f"
	verdict "$name" meta "0|3|4|5"
	if [ "$RC" = 0 ] && [ "$input_verified" = 0 ]; then
		# (an update keeps the damage an input already had)
		limited "$PDFSTAMP" verify "${pwo[@]}" "$out"
		verdict "$name" "verify of the meta output" 0
	elif [ "$RC" != 0 ] && [ -e "$out" ]; then
		fail "$name: a failed meta left its output file behind"
	fi
	rm -f "$out"
	opw=(--password-file "$M/owner.pw")
	[ "$pw" = wrong ] && opw=("${pwo[@]}")
	[ "$pw" = none ] && opw=()
	# a file encrypted to certificates becomes a password file
	case $pw in key | other) opw=("${pwo[@]}" --to-password) ;; esac
	what=rotate
	limited "$PDFSTAMP" rotate "${opw[@]}" --new-user-password-file "$NEWU" \
		--new-owner-password-file "$NEWO" -o "$out" "$f"
	if [ "$RC" = 2 ] && grep -q 'is not encrypted; use encrypt' "$T/err"; then
		what=encrypt
		limited "$PDFSTAMP" encrypt --new-user-password-file "$NEWU" \
			--new-owner-password-file "$NEWO" -o "$out" "$f"
	fi
	verdict "$name" "$what" "0|3|4|5"
	if [ "$RC" = 0 ]; then
		rotated=$((rotated + 1))
		limited "$PDFSTAMP" verify --password-file "$NEWU" "$out"
		verdict "$name" "verify of the $what output" 0
	elif [ -e "$out" ]; then
		fail "$name: a failed $what left its output file behind"
	fi
	rm -f "$out"

	extra=$(ls -A "$T" | grep -vxE 'in\.pdf|out\.pdf|out|err|new-[uo]\.pw' || true)
	if [ -n "$extra" ]; then
		fail "$name: files left behind in the output directory" "$extra"
		(cd "$T" && rm -rf -- $extra)
	fi

	after=$(sha256sum <"$f")
	if [ "$before" != "$after" ]; then
		fail "$name: the input was modified"
	fi
done < <(cat "$INDEX"; sed -e '/^#/d' -e 's|^|pubsec/|' "$M/pubsec/INDEX")

# The hostile images (tests/malformed/images/, made by
# tests/e2e/fixtures/images.py): `stamp --image` on the valid R6 base must
# refuse each with exit 4 and a message naming it, under the same limits,
# and write nothing.
nimg=0
for img in "$M"/images/*; do
	name=images/$(basename "$img")
	[ "$name" = images/README ] && continue
	nimg=$((nimg + 1))
	cp "$M/r6-base.pdf" "$T/in.pdf" || { fail "$name: cannot copy the base"; continue; }
	before=$(sha256sum <"$T/in.pdf")
	rm -f "$T/out.pdf"
	limited "$PDFSTAMP" stamp --image "$img" -o "$T/out.pdf" --password-file "$M/user.pw" "$T/in.pdf"
	verdict "$name" "stamp --image" 4
	if [ "$RC" != 0 ] && ! grep -qF -- "$(basename "$img")" "$T/err"; then
		fail "$name: the message does not name the image" "stderr: $(head -c 300 "$T/err")"
	fi
	[ -e "$T/out.pdf" ] && fail "$name: a refused image left an output file behind"
	[ "$(sha256sum <"$T/in.pdf")" = "$before" ] || fail "$name: the input was modified"
done
check_true test "$nimg" -ge 20 "the image corpus has $nimg files (at least 20 expected)"

# The font corpus (tests/malformed/fonts/INDEX): `stamp --font` with the
# listed text: ok -> 0, a damaged font (open:FORMAT, embed:FORMAT) -> 4, a
# font without the text's characters (open:USAGE) -> 2; a refusal writes
# nothing and names the font file when opening it failed.
nfont=0
while IFS=$'\t' read -r fname ftext outcome desc; do
	case $fname in '#'* | '') continue ;; esac
	nfont=$((nfont + 1))
	name="fonts/$fname ($outcome)"
	case $outcome in
	ok) want=0 ;; open:USAGE) want=2 ;; *) want=4 ;;
	esac
	cp "$M/r6-base.pdf" "$T/in.pdf" || { fail "$name: cannot copy the base"; continue; }
	before=$(sha256sum <"$T/in.pdf")
	rm -f "$T/out.pdf"
	limited "$PDFSTAMP" stamp --font "$M/fonts/$fname" --text "$ftext" -o "$T/out.pdf" \
		--password-file "$M/user.pw" "$T/in.pdf"
	verdict "$name" "stamp --font" "$want"
	if [ "$RC" = 0 ]; then
		cmp -s -n "$(stat -c %s "$T/in.pdf")" "$T/in.pdf" "$T/out.pdf" ||
			fail "$name: the stamped output does not start with the input"
	else
		[ -e "$T/out.pdf" ] && fail "$name: a refused font left an output file behind"
		case $outcome in
		open:*) grep -qF -- "$fname" "$T/err" ||
			fail "$name: the message does not name the font" "stderr: $(head -c 300 "$T/err")" ;;
		esac
	fi
	[ "$(sha256sum <"$T/in.pdf")" = "$before" ] || fail "$name: the input was modified"
	rm -f "$T/out.pdf"
done <"$M/fonts/INDEX"
check_true test "$nfont" -ge 14 "the font corpus has $nfont entries (at least 14 expected)"

if [ "$count" -lt 60 ]; then
	fail "the corpus has only $count files (at least 60 expected)"
fi
# The rewrites are not all refusals: the valid bases and the files whose
# damage is outside what a rewrite reads get rewritten.
check_true test "$rotated" -ge 2 "rotate or encrypt succeeded on some of the corpus ($rotated files)"
echo "# $count files, $rotated rewritten, $T_XFAIL known library bugs (XFAIL)"
finish
