#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/perms.sh - /P is not authenticated, /Perms is (issue 11,
# "--force and permissions").
#
# qpdf encrypts a sample with no annotate and no modify permission.  Then:
#  (a) "grant": /P is edited (same length) to -4, i.e. everything allowed,
#      so /Perms (Algorithm 13) no longer matches.  Without --force every
#      command refuses (exit 4).  With --force the genuine permissions, the
#      ones /Perms records, decide: `stamp` and `meta` with the user
#      password exit 5 and write nothing; `info` reports perms_valid false
#      and the effective permissions (no annotate); `rotate --force` with
#      the owner password keeps the genuine /P, as qpdf --show-encryption
#      of the output says.  The owner password may still stamp.
#  (b) "garbled": one byte of /Perms changed, so it decrypts to no
#      permissions block at all.  With --force nothing trustworthy grants a
#      permission: the user gets none (stamp exits 5, info lists none), and
#      rotate keeps none.
# The expectations come from qpdf (the P it wrote, --show-encryption of the
# rotated file) and the exit statuses of pdfstamp(1).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf

S=$TOP_SRCDIR/samples
U=$T/u.pw
O=$T/o.pw
NU=$T/nu.pw
NO=$T/no.pw
printf 'perm user\n' >"$U"
printf 'perm owner\n' >"$O"
printf 'new user\n' >"$NU"
printf 'new owner\n' >"$NO"

run qpdf --encrypt "perm user" "perm owner" 256 --annotate=n --modify=none -- \
	"$S/plain-2page.pdf" "$T/restricted.pdf"
check_status 0 "qpdf makes a file without the annotate and modify permissions"
GENUINE=$(qpdf --password="perm owner" --show-encryption "$T/restricted.pdf" | sed -n 's/^P = //p')
check_ne "$GENUINE" "" "qpdf reports the genuine /P ($GENUINE)"

# edit FILE OUT MODE: "grant" rewrites /P as -4 (padded to the same length,
# so no offset moves); "garble" flips one hex digit of /Perms.
python3 - "$T/restricted.pdf" "$T/grant.pdf" grant <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
m = re.search(rb"/P (-?\d+)", b)
new = b"/P -4".ljust(len(m.group(0)))
open(sys.argv[2], "wb").write(b[:m.start()] + new + b[m.end():])
PY
python3 - "$T/restricted.pdf" "$T/garble.pdf" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
m = re.search(rb"/Perms <([0-9a-fA-F]{32})>", b)
h = bytearray(m.group(1))
h[0] = ord("0") if h[0] != ord("0") else ord("1")
open(sys.argv[2], "wb").write(b[:m.start(1)] + bytes(h) + b[m.end(1):])
PY
check_true grep -aq '/P -4 ' "$T/grant.pdf" "the grant copy says /P -4"
check_true cmp -s <(qpdf --password="perm owner" --show-encryption "$T/grant.pdf" 2>/dev/null | sed -n 's/^P = //p') <(echo -4) \
	"qpdf reads the grant copy's /P as -4"

# perms_json FILE: the permissions object of `info --json` with --force
perms_of() {
	jget "$T/out" 'sorted(k for k, v in d["encryption"]["permissions"].items() if v)'
}

for f in grant garble; do
	IN=$T/$f.pdf

	# ---- without --force: refused -------------------------------------
	run "$PDFSTAMP" stamp --password-file "$U" -o "$T/$f-noforce.pdf" "$IN"
	check_status 4 "$f: stamp without --force is refused"
	check_true test ! -e "$T/$f-noforce.pdf" "$f: nothing written without --force"

	# ---- info: effective permissions, perms_valid false ----------------
	run "$PDFSTAMP" info --json --force --password-file "$U" "$IN"
	check_status 0 "$f: info --force"
	check_eq "$(jget "$T/out" 'd["encryption"]["perms_valid"]')" false "$f: info says perms_valid false"
	check_eq "$(jget "$T/out" 'd["encryption"]["permissions"]["annotate"]')" false \
		"$f: info reports no annotate permission"
	check_eq "$(jget "$T/out" 'd["encryption"]["permissions"]["modify"]')" false \
		"$f: info reports no modify permission"
	check_grep '/Perms' "$T/err" "$f: info warns about /Perms"

	# ---- the user password may not stamp or edit metadata -------------
	run "$PDFSTAMP" stamp --force --password-file "$U" -o "$T/$f-stamp.pdf" "$IN"
	check_status 5 "$f: stamp --force with the user password is not permitted"
	check_true test ! -e "$T/$f-stamp.pdf" "$f: stamp wrote nothing"
	cp "$IN" "$T/$f-inplace.pdf"
	run "$PDFSTAMP" stamp --force --password-file "$U" --in-place "$T/$f-inplace.pdf"
	check_status 5 "$f: stamp --force --in-place with the user password is not permitted"
	check_true cmp -s "$IN" "$T/$f-inplace.pdf" "$f: the in-place target is unchanged"
	run "$PDFSTAMP" meta --force --password-file "$U" --set Title=x -o "$T/$f-meta.pdf" "$IN"
	check_status 5 "$f: meta --force with the user password is not permitted"
	check_true test ! -e "$T/$f-meta.pdf" "$f: meta wrote nothing"

	# ---- the owner password is not bound by permissions ---------------
	run "$PDFSTAMP" stamp --force --password-file "$O" -o "$T/$f-owner.pdf" "$IN"
	check_status 0 "$f: stamp --force with the owner password"
done

# info: the grant copy's effective permissions are the genuine ones
run "$PDFSTAMP" info --json --force --password-file "$U" "$T/grant.pdf"
check_eq "$(jget "$T/out" 'd["encryption"]["p"]')" "$GENUINE" "grant: info reports P $GENUINE (from /Perms), not -4"
check_eq "$(perms_of)" '["copy", "extract", "print", "print-high"]' "grant: the genuine permission list"
run "$PDFSTAMP" info --json --force --password-file "$U" "$T/garble.pdf"
# bit 10 (extract for accessibility) stays set, as with --permissions none:
# ISO 32000-2 Table 22 has writers set it and readers ignore it
check_eq "$(perms_of)" '["extract"]' "garble: no optional permission (as --permissions none)"

# ---- rotate --force keeps the genuine permissions ----------------------
# show_p FILE: /P of FILE as qpdf reads it with the new owner password
show_p() {
	qpdf --password="new owner" --show-encryption "$1" | sed -n 's/^P = //p'
}
run "$PDFSTAMP" rotate --force --password-file "$O" --new-user-password-file "$NU" \
	--new-owner-password-file "$NO" -o "$T/grant-rot.pdf" "$T/grant.pdf"
check_status 0 "grant: rotate --force with the owner password"
check_eq "$(show_p "$T/grant-rot.pdf")" "$GENUINE" "grant: the rotated file keeps the genuine /P (qpdf)"
check_true sh -c "qpdf --password='new owner' --show-encryption '$T/grant-rot.pdf' | grep -q 'modify annotations: not allowed'" \
	"grant: qpdf says the rotated file does not allow annotations"

run "$PDFSTAMP" rotate --force --password-file "$O" --new-user-password-file "$NU" \
	--new-owner-password-file "$NO" -o "$T/garble-rot.pdf" "$T/garble.pdf"
check_status 0 "garble: rotate --force with the owner password"
check_eq "$(show_p "$T/garble-rot.pdf")" "-3392" "garble: the rotated file grants nothing (/P -3392)"

# an explicit --permissions still wins (the owner decides)
run "$PDFSTAMP" rotate --force --permissions all --password-file "$O" --new-user-password-file "$NU" \
	--new-owner-password-file "$NO" -o "$T/grant-all.pdf" "$T/grant.pdf"
check_status 0 "grant: rotate --force --permissions all"
check_eq "$(show_p "$T/grant-all.pdf")" "-4" "grant: --permissions all gives /P -4"

# ---- an honest file is unaffected -------------------------------------
run "$PDFSTAMP" info --json --password-file "$U" "$T/restricted.pdf"
check_eq "$(jget "$T/out" 'd["encryption"]["perms_valid"]')" true "restricted: perms_valid true"
check_eq "$(jget "$T/out" 'd["encryption"]["p"]')" "$GENUINE" "restricted: P as written"
check_eq "$(wc -c <"$T/err")" 0 "restricted: no warning"

finish
