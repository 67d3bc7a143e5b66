#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/hardening.sh - process hardening and new-password warnings
# (issue 11, "Hardening").
#
#  (a) The CLI makes itself non-dumpable (prctl PR_SET_DUMPABLE 0) first
#      thing.  The observable: the kernel then gives the files under
#      /proc/PID (status, environ, mem...) to root instead of the process's
#      user (proc(5), "/proc/pid"), which is what keeps the user's other
#      processes from reading them or attaching with ptrace.  pdfstamp runs
#      as an unprivileged user (setpriv to nobody when the test runs as
#      root), blocked reading its password from a descriptor nobody writes
#      to; /proc/PID/status must then be owned by uid 0 while the process's
#      uid is not 0.  Control: an ordinary process (sleep) of the same user
#      keeps its own uid there, so the test is not vacuous.
#  (b) A new password that SASLprep changes (U+00AD SOFT HYPHEN maps to
#      nothing, U+FF21 FULLWIDTH A becomes "A") gives a warning for
#      rotate and encrypt, which names the password (user/owner) but never
#      contains it; qpdf, which does no SASLprep, opens the output with the
#      prepared form and not with the typed one, as the warning says.
#      ASCII passwords give no such warning.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf

S=$TOP_SRCDIR/samples

# ---- (a) non-dumpable -----------------------------------------------------
AS=()
RUNUID=$(id -u)
if [ "$RUNUID" = 0 ]; then
	if command -v setpriv >/dev/null 2>&1 &&
		setpriv --reuid=65534 --regid=65534 --clear-groups "$PDFSTAMP" --version >/dev/null 2>&1; then
		AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		RUNUID=65534
	else
		# no setpriv, or the build tree is not reachable for nobody
		# (a clone inside a 0700 directory)
		RUNUID=
	fi
fi

# wait_blocked PID: waits (10 s at most) until PID is pdfstamp itself (not
# setpriv, nor libtool's wrapper script, whose $(...) also reads pipes) and
# sleeps in a pipe read, i.e. waits for its password.
wait_blocked() {
	local i argv0
	for i in $(seq 100); do
		argv0=$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | head -n 1)
		case ${argv0##*/} in
		'' | bash | sh | dash | setpriv) ;;
		*)
			case $(cat "/proc/$1/wchan" 2>/dev/null) in
			*pipe*) return 0 ;;
			esac
			;;
		esac
		sleep 0.1
	done
	return 1
}

if [ "$(id -u)" != 0 ]; then
	# the test watches pdfstamp's /proc files, which a non-dumpable process
	# keeps from every user but root
	echo "# (a) skipped: needs root to watch another process's /proc files"
elif [ -z "$RUNUID" ]; then
	echo "# (a) skipped: running as root without setpriv, or nobody cannot run $PDFSTAMP"
else
	chmod 711 "$T"
	mkdir "$T/pub"
	chmod 755 "$T/pub"
	cp "$S/r6-table.pdf" "$T/pub/in.pdf"
	chmod 644 "$T/pub/in.pdf"
	mkfifo "$T/pwfifo"
	exec 7<>"$T/pwfifo"   # a pipe that stays open and empty: reads block

	# control: an ordinary process of the same user owns its /proc files
	"${AS[@]}" sleep 30 &
	CPID=$!
	sleep 0.3
	check_eq "$(stat -c %u "/proc/$CPID/status")" "$RUNUID" \
		"control: /proc/PID/status of a dumpable process belongs to uid $RUNUID"
	kill "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null

	"${AS[@]}" "$PDFSTAMP" info --password-fd 7 "$T/pub/in.pdf" >"$T/a.out" 2>"$T/a.err" &
	PPID_=$!
	if wait_blocked "$PPID_"; then
		ok "pdfstamp waits for its password (pid $PPID_)"
		check_eq "$(awk '/^Uid:/ {print $2}' "/proc/$PPID_/status")" "$RUNUID" \
			"pdfstamp runs as uid $RUNUID"
		check_eq "$(stat -c %u "/proc/$PPID_/status")" 0 \
			"pdfstamp is not dumpable: /proc/PID/status belongs to root"
		check_eq "$(stat -c %u "/proc/$PPID_/environ")" 0 \
			"pdfstamp is not dumpable: /proc/PID/environ belongs to root"
	else
		fail "pdfstamp did not block reading its password" "$(cat "$T/a.err")"
	fi
	kill "$PPID_" 2>/dev/null
	wait "$PPID_" 2>/dev/null
	exec 7>&-
fi

# ---- (b) SASLprep changes a new password ------------------------------------
NU=$T/nu.pw
NO=$T/no.pw
printf 'Kx\xc2\xadQz7\n' >"$NU"          # Kx<SOFT HYPHEN>Qz7 -> KxQz7
printf '\xef\xbc\xa1wq9\n' >"$NO"        # <FULLWIDTH A>wq9 -> Awq9

# no_password_in FILE WHAT: none of the typed or prepared forms is in FILE
no_password_in() {
	local f=$1 what=$2 p
	for p in 'KxQz7' 'Qz7' 'Awq9' 'wq9' "$(printf 'Kx\xc2\xad')" "$(printf '\xef\xbc\xa1')"; do
		if grep -aqF -- "$p" "$f"; then
			fail "$what: a password appears in the output" "$(grep -aF -- "$p" "$f" | head -2)"
			return
		fi
	done
	ok "$what: no password in stdout or stderr"
}

run "$PDFSTAMP" rotate --password-file "$S/owner.pw" --new-user-password-file "$NU" \
	--new-owner-password-file "$NO" -o "$T/rot.pdf" "$S/r6-table.pdf"
check_status 0 "rotate to passwords that SASLprep changes"
check_grep 'SASLprep.*new user password' "$T/err" "rotate warns that SASLprep changes the new user password"
check_grep 'SASLprep.*new owner password' "$T/err" "rotate warns that SASLprep changes the new owner password"
cat "$T/out" "$T/err" >"$T/both"
no_password_in "$T/both" "rotate"

# the warning is true: qpdf opens the output only with the prepared forms
# (--show-encryption exits 0 either way; its first line tells)
run qpdf --password=KxQz7 --show-encryption "$T/rot.pdf"
check_grep '^Supplied password is user password' "$T/out" "qpdf opens the rotated file with the prepared user password"
run qpdf --password=Awq9 --show-encryption "$T/rot.pdf"
check_grep '^Supplied password is owner password' "$T/out" "qpdf opens the rotated file with the prepared owner password"
run qpdf "--password=$(printf 'Kx\xc2\xadQz7')" --show-encryption "$T/rot.pdf"
check_grep '^Incorrect password' "$T/out" "qpdf does not accept the user password as typed"
run qpdf "--password=$(printf '\xef\xbc\xa1wq9')" --show-encryption "$T/rot.pdf"
check_grep '^Incorrect password' "$T/out" "qpdf does not accept the owner password as typed"
run "$PDFSTAMP" info --password-file "$NU" "$T/rot.pdf"
check_status 0 "pdfstamp opens it with the user password as typed (it applies SASLprep)"

run "$PDFSTAMP" encrypt --new-user-password-file "$NU" --new-owner-password-file "$NO" \
	-o "$T/enc.pdf" "$S/plain-2page.pdf"
check_status 0 "encrypt with passwords that SASLprep changes"
check_grep 'SASLprep.*new user password' "$T/err" "encrypt warns about the new user password"
cat "$T/out" "$T/err" >"$T/both"
no_password_in "$T/both" "encrypt"

printf 'plain user\n' >"$T/pu.pw"
printf 'plain owner\n' >"$T/po.pw"
run "$PDFSTAMP" rotate --password-file "$S/owner.pw" --new-user-password-file "$T/pu.pw" \
	--new-owner-password-file "$T/po.pw" -o "$T/rot2.pdf" "$S/r6-table.pdf"
check_status 0 "rotate to ASCII passwords"
check_no_grep 'SASLprep' "$T/err" "ASCII passwords: no SASLprep warning"

finish
