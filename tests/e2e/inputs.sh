#!/bin/bash
# tests/e2e/inputs.sh - inputs, the first hour of a newcomer (issue 30).
#
#  1. One rule for inputs that cannot be read: anything an option names
#     (--password-file, -fd, -env, the new passwords' sources, --files-from,
#     --image, --font, dss --cert/--ocsp/--crl) that cannot be read is a
#     usage error, exit 2, its message naming it, nothing written; a FILE
#     operand that cannot be opened stays that file's I/O error, exit 1.

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
	"$PDFSTAMP" stamp --password-file "$UPW" --image "$W/missing.png" -o "$W/out.pdf" "$W/in.pdf"
unreadable "stamp --font missing" "cannot open the font.*missing\.ttf" \
	"$PDFSTAMP" stamp --password-file "$UPW" --font "$W/missing.ttf" -o "$W/out.pdf" "$W/in.pdf"
for o in cert ocsp crl; do
	unreadable "dss --$o missing" "cannot open.*missing\.der" \
		"$PDFSTAMP" dss --password-file "$OPW" --$o "$W/missing.der" -o "$W/out.pdf" "$W/in.pdf"
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

finish
