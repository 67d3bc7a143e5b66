#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/journal.sh - journals are input: a planted, stale, foreign or
# special-file journal never costs data, and a FIFO never hangs a command.
#
# An attacker who may create files next to FILE (a shared or sticky
# directory) but has no password plants FILE.pdfstamp-journal:
#   A. a version-1 journal "length 0, SHA-256 of the empty string": info,
#      verify and stamp -o (whose input must stay untouched) leave FILE
#      byte-identical; they warn, naming 'pdfstamp recover', and info
#      --json says journal_pending;
#   B. a version-1 journal "length = the size before someone's stamp, hash
#      of that prefix": info keeps the stamp; recover and stamp -i refuse;
#   C. a version-3 journal that matches FILE exactly (device, inode, length,
#      hash of the appended stamp) but is not 0600, belongs to another uid,
#      or was written for another inode (FILE replaced by a copy): refused
#      (exit 4), FILE unchanged; the same journal with the right owner and
#      mode is the control case: the whole stamp is kept (completed), only
#      the journal goes, and so for a version-2 journal (read as version 3);
#      recovery never removes a byte of FILE;
#   D. a genuine crash journal that went stale because more bytes were
#      appended afterwards, or whose bytes were changed: refused, FILE and
#      the journal unchanged; a torn update (a kill -9 during the write, or
#      a power failure before the file's fsync, made here by cutting the
#      file after a kill:after-write): `recover` cuts it back (version-4
#      journal: rolled_back_torn, FILE byte-identical to the original,
#      journal gone, qpdf reads it), and so does a plain re-run of stamp -i,
#      which then stamps (one revision more, qpdf --check); a torn update
#      with a byte changed, and one under a version-3 journal (no copy of
#      the update), are refused and left alone;
#   E. a symbolic link at the journal's name: refused;
#   F. a FIFO at the journal's name, and a FIFO as FILE (also inside a
#      --files-from batch): every command returns within `timeout 10`;
#   G. an empty or torn journal: refused, stamp -i says so;
#   H. genuine crash journals (PDFSTAMP_FAULT): a kill after the write
#      leaves the whole update, which `pdfstamp recover` and `stamp -i`
#      keep (completed; qpdf reads it), a kill before it only the journal;
#      read-only commands report them without touching the file;
#   I. recover takes the writers' lock first: a locked file is exit 1;
#   K. a stamp -i costs exactly 3 fsync/fdatasync calls per file (journal,
#      directory, file), and each --json line comes after its file's
#      fsync, with no journal left (strace; skipped without it).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need timeout

e2e_inputs qpdf-r6-table
W=$T/w
mkdir -p "$W"
F=$W/doc.pdf
J=$F.pdfstamp-journal
TO=(timeout 10)

sha_of() { sha256sum | cut -d' ' -f1; }
# same FILE ORIG DESC
same() {
	if cmp -s "$1" "$2"; then
		ok "$3: the file is byte-identical"
	else
		fail "$3: the file is byte-identical" "size $(size_of "$1") vs $(size_of "$2")"
	fi
}
fresh() {
	rm -rf "$W" && mkdir -p "$W"
	cp "$D/qpdf-r6-table.pdf" "$F"
}
# v1 FILE L: the old journal format, for L and the hash of the 4 KiB before L
v1() {
	local start=$(($2 > 4096 ? $2 - 4096 : 0))
	printf 'pdfstamp-journal 1\n%s\n%s\n' "$2" \
		"$(head -c "$2" "$1" | tail -c "$(($2 - start))" | sha_of)" >"$1.pdfstamp-journal"
	chmod 600 "$1.pdfstamp-journal"
}
# v3 FILE L [JOURNAL [VERSION]]: a version-3 (or VERSION) journal that
# matches FILE exactly: its device and inode, L, and the length and hash of
# the bytes after L
v3() {
	python3 - "$1" "$2" "${3:-$1.pdfstamp-journal}" "${4:-3}" <<'PY'
import hashlib, os, sys
f, l, j, v = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
b = open(f, "rb").read()
st = os.stat(f)
h = lambda x: hashlib.sha256(x).hexdigest()
t = ("pdfstamp-journal %s\nfile %d %d\nlength %d\nappended %d %s\nbefore %s\n"
     % (v, st.st_dev, st.st_ino, l, len(b) - l, h(b[l:]), h(b[max(0, l - 4096):l])))
fd = os.open(j, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, t.encode())
os.close(fd)
os.chmod(j, 0o600)
PY
}
pr() { run "${TO[@]}" "$PDFSTAMP" "$@"; }
not_hung() { check_ne "$RC" 124 "$1: returns (no hang)"; }

ORIG=$T/orig.pdf
cp "$D/qpdf-r6-table.pdf" "$ORIG"
L0=$(size_of "$ORIG")

# ===========================================================================
# A. length 0 + SHA-256 of nothing: read-only commands never truncate
# ===========================================================================
fresh
v1 "$F" 0
cp "$J" "$T/j.saved"
pr info --password-file "$UPW" "$F"
check_status 0 "A: info with a planted empty-hash journal"
check_grep "^pdfstamp: warning: .*pdfstamp recover" "$T/err" "A: info warns and names 'pdfstamp recover'"
same "$F" "$ORIG" "A: info"
pr info --json --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" 'd["journal_pending"]')" true "A: info --json: journal_pending is true"
check_eq "$(jget "$T/out" 'd["file_size"]')" "$L0" "A: info --json reports the file as it is"
same "$F" "$ORIG" "A: info --json"
pr verify -q --password-file "$UPW" "$F"
check_status 0 "A: verify with a planted journal"
check_grep "^pdfstamp: warning: .*pdfstamp recover" "$T/err" "A: verify warns"
same "$F" "$ORIG" "A: verify"
pr stamp --password-file "$UPW" -o "$W/out.pdf" "$F"
check_status 0 "A: stamp -o with a planted journal on its input"
same "$F" "$ORIG" "A: stamp -o (the input)"
if cmp -s -n "$L0" "$ORIG" "$W/out.pdf" && [ "$(size_of "$W/out.pdf")" -gt "$L0" ]; then
	ok "A: stamp -o: the output is the input plus an update"
else
	fail "A: stamp -o: the output is the input plus an update"
fi
check_true cmp -s "$J" "$T/j.saved" "A: the planted journal is left where it was"
pr recover "$F"
check_status 4 "A: recover refuses an old-format journal"
check_grep 'journal' "$T/err" "A: recover says why"
same "$F" "$ORIG" "A: recover"
pr stamp --password-file "$UPW" -i "$F"
check_status 4 "A: stamp -i refuses to start next to it"
same "$F" "$ORIG" "A: stamp -i"
# the same attack with a file of 0 bytes length in version 3 form, but 0644
rm -f "$J"
v3 "$F" 0
chmod 644 "$J"
pr info --password-file "$UPW" "$F"
check_status 0 "A: info with a version-3 journal of length 0"
same "$F" "$ORIG" "A: info, version-3 journal of length 0"
pr recover "$F"
check_status 4 "A: recover refuses a journal with mode 0644"
check_grep 'mode 0644' "$T/err" "A: recover names the mode"
same "$F" "$ORIG" "A: recover, mode 0644"

# ===========================================================================
# B. someone's stamp, and a journal whose length is the size before it
# ===========================================================================
fresh
run "$PDFSTAMP" stamp --password-file "$UPW" --text SOMEONE -i "$F"
check_status 0 "B: someone stamps the file"
cp "$F" "$T/stamped.pdf"
v1 "$F" "$L0"
pr info --json --password-file "$UPW" "$F"
check_status 0 "B: info with a prefix-hash journal"
check_eq "$(jget "$T/out" 'd["revisions"]')" 2 "B: info still sees the stamp's revision"
same "$F" "$T/stamped.pdf" "B: info"
pr recover "$F"
check_status 4 "B: recover refuses it"
same "$F" "$T/stamped.pdf" "B: recover"
pr stamp --password-file "$UPW" -i "$F"
check_status 4 "B: stamp -i refuses it"
same "$F" "$T/stamped.pdf" "B: stamp -i"

# ===========================================================================
# C. a version-3 journal matching the stamp exactly: owner, mode and inode
#    are checked, and even a journal that passes them removes nothing
# ===========================================================================
rm -f "$J"
v3 "$F" "$L0"
chmod 640 "$J"
pr recover "$F"
check_status 4 "C: recover refuses a journal with mode 0640"
same "$F" "$T/stamped.pdf" "C: mode 0640"
chmod 600 "$J"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$J"
	pr recover "$F"
	check_status 4 "C: recover refuses a journal of another uid"
	check_grep 'uid 65534' "$T/err" "C: the message names the owner"
	same "$F" "$T/stamped.pdf" "C: another uid"
	pr stamp --password-file "$UPW" -i "$F"
	check_status 4 "C: stamp -i refuses a journal of another uid"
	same "$F" "$T/stamped.pdf" "C: stamp -i, another uid"
	chown "$(id -u)" "$J"
else
	echo "# C: a journal of another uid: skipped (chown needs root)"
fi
ln "$J" "$W/second-link"
pr recover "$F"
check_status 4 "C: recover refuses a journal with two links"
same "$F" "$T/stamped.pdf" "C: two links"
rm -f "$W/second-link"
# bound to another inode: the file was replaced by a copy
cp "$F" "$W/copy.pdf" && mv "$W/copy.pdf" "$F"
pr recover "$F"
check_status 4 "C: recover refuses a journal written for another inode"
check_grep 'another file' "$T/err" "C: the message says so"
same "$F" "$T/stamped.pdf" "C: another inode"
# control: the same journal for this inode is believed (it could be ours):
# the update it names is whole, so it is kept and only the journal goes
rm -f "$J"
v3 "$F" "$L0"
pr recover --json "$F"
check_status 0 "C: a journal that matches in every respect completes the update"
check_eq "$(jget "$T/out" 'd["action"]')" '"completed"' "C: recover --json: action completed"
same "$F" "$T/stamped.pdf" "C: control: the stamp is kept"
check_true test ! -e "$J" "C: control: the journal is removed"
# a version-2 journal (the same text) is read as version 3: kept too
v3 "$F" "$L0" "$J" 2
pr recover --json "$F"
check_status 0 "C: a version-2 journal that matches completes the update"
check_eq "$(jget "$T/out" 'd["action"]')" '"completed"' "C: version 2: action completed"
same "$F" "$T/stamped.pdf" "C: version 2: the stamp is kept"
check_true test ! -e "$J" "C: version 2: the journal is removed"
# a version-3 journal whose L is the size before the stamp and whose
# length is the size after it (the stamp of a pdfstamp that synced the
# file, then crashed): the file at L+N is kept whatever a planted journal
# claims, and the file at L (the stamp cut off by someone) is not touched
v3 "$F" "$L0"
truncate -s "$L0" "$F"
pr recover --json "$F"
check_status 0 "C: the file at the journal's length: only the journal goes"
check_eq "$(jget "$T/out" 'd["action"]')" '"removed_journal"' "C: action removed_journal"
same "$F" "$ORIG" "C: the file at L is unchanged"
check_true test ! -e "$J" "C: removed_journal: the journal is removed"

# ===========================================================================
# D. a stale crash journal, and bytes another tool appended since
# ===========================================================================
if have_faults; then
fresh
PDFSTAMP_FAULT=kill:after-write run "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$F"
check_eq "$RC" 137 "D: stamp -i killed after its write"
check_true test -e "$J" "D: the journal is left"
printf '%% appended by another tool\n' >>"$F"
cp "$F" "$T/d.pdf"
pr info --password-file "$UPW" "$F"
check_ne "$RC" 124 "D: info returns"
same "$F" "$T/d.pdf" "D: info"
pr recover "$F"
check_status 4 "D: recover refuses a journal that no longer matches the file's size"
check_grep 'is whole, but [0-9]+ more bytes were appended' "$T/err" "D: the message says what is there"
same "$F" "$T/d.pdf" "D: recover"
check_true test -e "$J" "D: the journal is left for a human"
pr stamp --password-file "$UPW" -i "$F"
check_status 4 "D: stamp -i refuses"
same "$F" "$T/d.pdf" "D: stamp -i"
# the torn update's bytes were changed (same size): refused too
fresh
PDFSTAMP_FAULT=kill:after-write run "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$F"
printf 'X' | dd of="$F" bs=1 seek=$((L0 + 20)) conv=notrunc 2>/dev/null
cp "$F" "$T/d2.pdf"
pr recover "$F"
check_status 4 "D: recover refuses when the appended bytes differ from the recorded hash"
same "$F" "$T/d2.pdf" "D: changed bytes"
check_true test -e "$J" "D: changed bytes: the journal is left"
# a torn update (the file between L and L+N), as a kill -9 during the
# pwrite leaves (Linux stops a write at a page boundary when a fatal signal
# is pending): the version-4 journal holds a copy of the update, so the
# bytes after L are known to be a prefix of ours, and are cut off
fresh
PDFSTAMP_FAULT=kill:after-write run "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$F"
check_eq "$RC" 137 "D: stamp -i killed after its write (torn case)"
check_grep '^pdfstamp-journal 4$' <(head -n 1 "$J") "D: the journal is version 4"
LN=$(size_of "$F")
cp "$F" "$T/whole.pdf"
cp -p "$J" "$T/journal"
for cut in $((L0 + 1)) $(((L0 + LN) / 2)) $((LN - 1)); do
	head -c "$cut" "$T/whole.pdf" >"$F" # same inode: the journal stays bound to it
	cp -p "$T/journal" "$J"
	pr recover --json "$F"
	check_status 0 "D: recover rolls back a torn update ($((cut - L0)) of $((LN - L0)) bytes)"
	check_eq "$(jget "$T/out" 'd["action"]')" '"rolled_back_torn"' \
		"D: torn ($((cut - L0))): action rolled_back_torn"
	same "$F" "$ORIG" "D: torn ($((cut - L0))): cut back to the original"
	check_true test ! -e "$J" "D: torn ($((cut - L0))): the journal is removed"
done
run qpdf --password-file="$UPW" --check "$F"
check_status 0 "D: qpdf --check reads the file rolled back"
head -c $(((L0 + LN) / 2)) "$T/whole.pdf" >"$F"
cp -p "$T/journal" "$J"
pr recover "$F"
check_grep 'rolled back a torn update' "$T/out" "D: recover's text output says so"
# a plain re-run of the stamp rolls back, then stamps
head -c $(((L0 + LN) / 2)) "$T/whole.pdf" >"$F"
cp -p "$T/journal" "$J"
pr stamp --json --password-file "$UPW" -i "$F"
check_status 0 "D: stamp -i next to a torn update rolls it back and stamps"
check_grep '^pdfstamp: warning: .*rolled back a torn' "$T/err" "D: stamp -i reports the rollback"
check_eq "$(jget "$T/out" 'd["base_length"]')" "$L0" "D: the new revision starts at the original's end"
check_true test ! -e "$J" "D: stamp -i: no journal left"
if cmp -s -n "$L0" "$ORIG" "$F"; then ok "D: stamp -i: the original bytes come first"
else fail "D: stamp -i: the original bytes come first"; fi
run qpdf --password-file="$UPW" --check "$F"
check_status 0 "D: qpdf --check reads the original and the new stamp"
pr info --json --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" 'd["revisions"]')" 2 "D: the original and one update"
# a torn update with one byte that is neither ours nor zero: left alone
head -c $(((L0 + LN) / 2)) "$T/whole.pdf" >"$F"
printf 'X' | dd of="$F" bs=1 seek=$((L0 + 20)) conv=notrunc 2>/dev/null
cp -p "$T/journal" "$J"
cp "$F" "$T/d3.pdf"
pr recover "$F"
check_status 4 "D: recover refuses a torn update with a changed byte"
same "$F" "$T/d3.pdf" "D: torn, changed byte"
check_true test -e "$J" "D: torn, changed byte: the journal is left"
# a version-3 journal (the record alone, as older versions wrote): nothing
# proves that the bytes after L are ours, so they are left alone
head -c $(((L0 + LN) / 2)) "$T/whole.pdf" >"$F"
cp -p "$T/journal" "$J"
python3 - "$J" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    b = f.read()
    n = 0
    for _ in range(5):
        n = b.index(b"\n", n) + 1
    f.truncate(n)
    f.seek(17)
    f.write(b"3")
PY
check_grep '^pdfstamp-journal 3$' <(head -n 1 "$J") "D: the journal is now version 3"
cp "$F" "$T/d3.pdf"
pr recover "$F"
check_status 4 "D: recover refuses a torn update under a version-3 journal"
check_grep 'torn' "$T/err" "D: torn, version 3: the message says so"
same "$F" "$T/d3.pdf" "D: torn, version 3"
check_true test -e "$J" "D: torn, version 3: the journal is left"
pr stamp --password-file "$UPW" -i "$F"
check_status 4 "D: stamp -i refuses next to a torn update under a version-3 journal"
same "$F" "$T/d3.pdf" "D: stamp -i, torn, version 3"
else
	skip "D: stale crash journals (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi

# ===========================================================================
# E. a symbolic link at the journal's name
# ===========================================================================
fresh
run "$PDFSTAMP" stamp --password-file "$UPW" -i "$F"
cp "$F" "$T/stamped.pdf"
v3 "$F" "$L0" "$W/real-journal"
ln -s real-journal "$J"
pr recover "$F"
check_status 4 "E: recover refuses a symbolic link"
check_grep 'symbolic link' "$T/err" "E: the message says so"
same "$F" "$T/stamped.pdf" "E: recover"
check_true test -L "$J" "E: the link is left alone"
rm -f "$J" "$W/real-journal"
printf 'pdfstamp-journal 1\n0\n%s\n' "$(printf '' | sha_of)" >"$W/real-journal"
ln -s real-journal "$J"
pr info --password-file "$UPW" "$F"
check_status 0 "E: info with a symlinked empty-hash journal"
same "$F" "$T/stamped.pdf" "E: info"

# ===========================================================================
# F. FIFOs
# ===========================================================================
fresh
mkfifo "$J"
pr info --password-file "$UPW" "$F"
not_hung "F: info, FIFO journal"
check_status 0 "F: info with a FIFO at the journal's name"
same "$F" "$ORIG" "F: info"
pr verify -q --password-file "$UPW" "$F"
not_hung "F: verify, FIFO journal"
pr stamp --password-file "$UPW" -o "$W/out.pdf" "$F"
not_hung "F: stamp -o, FIFO journal"
check_status 0 "F: stamp -o with a FIFO journal"
pr recover "$F"
not_hung "F: recover, FIFO journal"
check_status 4 "F: recover refuses a FIFO journal"
pr stamp --password-file "$UPW" -i "$F"
not_hung "F: stamp -i, FIFO journal"
check_status 4 "F: stamp -i refuses a FIFO journal"
same "$F" "$ORIG" "F: after every command"
check_true test -p "$J" "F: the FIFO is left alone"
rm -f "$J"
mkfifo "$W/fifo.pdf"
for c in "info" "verify -q" "stamp -o $W/o2.pdf" "stamp -i" "meta --set Title=x -i" "recover"; do
	case $c in recover) pr $c "$W/fifo.pdf" ;; *) pr $c --password-file "$UPW" "$W/fifo.pdf" ;; esac
	not_hung "F: $c on a FIFO"
	check_status 1 "F: $c refuses a FIFO as input (an I/O error)"
	check_grep 'not a regular file' "$T/err" "F: $c says why"
done
printf '%s\n%s\n' "$W/fifo.pdf" "$F" >"$W/list"
pr stamp --password-file "$UPW" -i --json --files-from "$W/list"
not_hung "F: a --files-from batch with a FIFO"
check_status 1 "F: the batch reports the FIFO (an I/O error)"
check_eq "$(jget "$T/out" 'd["ok"]' 2)" true "F: the batch still stamps the next file"

# ===========================================================================
# G. empty and torn journals
# ===========================================================================
fresh
: >"$J"
chmod 600 "$J"
pr recover "$F"
check_status 4 "G: recover refuses an empty journal"
same "$F" "$ORIG" "G: empty"
check_true test -e "$J" "G: the empty journal is left for a human"
pr stamp --password-file "$UPW" -i "$F"
check_status 4 "G: stamp -i refuses next to an empty journal"
check_grep 'journal' "$T/err" "G: stamp -i names the journal"
rm -f "$J"
v3 "$F" 0
head -c 40 "$J" >"$T/torn" && cat "$T/torn" >"$J"
pr recover "$F"
check_status 4 "G: recover refuses a torn journal"
same "$F" "$ORIG" "G: torn"

# ===========================================================================
# H. genuine crash journals are still recovered
# ===========================================================================
if have_faults; then
fresh
PDFSTAMP_FAULT=kill:after-write run "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$F"
check_eq "$RC" 137 "H: stamp -i killed after its write"
check_eq "$(stat -c %a "$J")" 600 "H: the journal has mode 0600"
cp "$F" "$T/killed.pdf"
check_true test "$(size_of "$F")" -gt "$L0" "H: the killed run's update is in the file"
pr info --json --password-file "$UPW" "$F"
check_status 0 "H: info on the file with its journal"
check_eq "$(jget "$T/out" 'd["journal_pending"]')" true "H: info reports the pending journal"
same "$F" "$T/killed.pdf" "H: info leaves the file alone"
pr recover --json "$F"
check_status 0 "H: recover completes the crashed update"
check_eq "$(jget "$T/out" 'd["action"]')" '"completed"' "H: action completed"
same "$F" "$T/killed.pdf" "H: recover keeps the whole update"
check_true test ! -e "$J" "H: the journal is removed"
if cmp -s -n "$L0" "$ORIG" "$F"; then ok "H: the original bytes come first"; else fail "H: the original bytes come first"; fi
run qpdf --password-file="$UPW" --check "$F"
check_status 0 "H: qpdf --check reads the kept update"
pr info --json --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" 'd["revisions"]')" 2 "H: the kept update is one more revision"
run "$PDFSTAMP" verify -q --password-file "$UPW" "$F"
check_status 0 "H: pdfstamp verify passes on the kept update"
pr recover "$F"
check_status 0 "H: a second recover has nothing to do"
check_grep 'nothing to do' "$T/out" "H: and says so"
same "$F" "$T/killed.pdf" "H: a second recover changes nothing"
else
	skip "H: genuine crash journals recovered (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi
if have_faults; then
fresh
PDFSTAMP_FAULT=kill:after-journal run "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$F"
check_eq "$RC" 137 "H: stamp -i killed after its journal"
pr recover --json "$F"
check_status 0 "H: recover after a kill before the write"
check_eq "$(jget "$T/out" 'd["action"]')" '"removed_journal"' "H: action removed_journal"
same "$F" "$ORIG" "H: kill before the write"
PDFSTAMP_FAULT=kill:after-fsync run "$PDFSTAMP_HOOKED" meta --password-file "$UPW" --set Title=x -i "$F"
check_eq "$RC" 137 "H: meta -i killed after its fsync"
LM=$(size_of "$F")
pr stamp --json --password-file "$UPW" -i "$F"
check_status 0 "H: the next stamp -i completes the killed update, then stamps"
check_grep '^pdfstamp: warning: .*update is kept' "$T/err" "H: stamp -i reports the kept update"
check_eq "$(jget "$T/out" 'd["base_length"]')" "$LM" "H: the new revision starts after the kept one"
check_true test ! -e "$J" "H: no journal left"
pr info --json --password-file "$UPW" "$F"
check_eq "$(jget "$T/out" 'd["revisions"]')" 3 "H: the original, the kept meta update and the stamp"
run qpdf --password-file="$UPW" --check "$F"
check_status 0 "H: qpdf --check reads all three revisions"
else
	skip "H: kills after the journal and after the fsync (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi
pr recover "$W/missing.pdf"
check_status 1 "H: recover on a missing file is an I/O error"

# ===========================================================================
# I. recover takes the writers' lock first
# ===========================================================================
if have_faults; then
if command -v flock >/dev/null 2>&1; then
	fresh
	PDFSTAMP_FAULT=kill:after-write run "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$F"
	cp "$F" "$T/torn.pdf"
	flock -x "$F" sleep 5 &
	LP=$!
	sleep 0.5
	pr recover "$F"
	check_status 1 "I: recover on a locked file"
	check_grep 'locked' "$T/err" "I: the message says the file is locked"
	same "$F" "$T/torn.pdf" "I: locked"
	kill "$LP" 2>/dev/null
	wait "$LP" 2>/dev/null
fi
else
	skip "I: recover takes the lock (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi

# ===========================================================================
# Documentation: --help and the man page
# ===========================================================================
run "$PDFSTAMP" --help
check_grep '^  recover ' "$T/out" "pdfstamp --help lists recover"
run "$PDFSTAMP" recover --help
check_status 0 "pdfstamp recover --help"
check_grep 'Usage: pdfstamp recover' "$T/out" "recover --help shows the usage"
run "$PDFSTAMP" recover
check_status 2 "recover without a file is a usage error"
# ===========================================================================
# J. a document reached through a symbolic link: its journal is next to the
#    file itself, so every name of it finds the same one
# ===========================================================================
if have_faults; then
fresh
mkdir -p "$W/links"
ln -s "$F" "$W/links/doc.pdf"
PDFSTAMP_FAULT=kill:after-write run "$PDFSTAMP_HOOKED" stamp --password-file "$UPW" -i "$W/links/doc.pdf"
check_eq "$RC" 137 "J: stamp -i through a link, killed after its write"
check_true test -e "$J" "J: the journal is next to the real file"
check_true test ! -e "$W/links/doc.pdf.pdfstamp-journal" "J: no journal next to the link"
pr info --password-file "$UPW" "$W/links/doc.pdf"
check_grep 'recover' "$T/err" "J: info through the link reports the journal"
cp "$F" "$T/j-killed.pdf"
pr recover --json "$F"
check_status 0 "J: recover by the real name completes the update"
check_eq "$(jget "$T/out" 'd["action"]')" '"completed"' "J: action completed"
same "$F" "$T/j-killed.pdf" "J: recover keeps it"
check_true test ! -e "$J" "J: the journal is removed"
else
	skip "J: journal next to the real file (needs tests/pdfstamp-fault: PDFSTAMP_HOOKED)"
fi

# ===========================================================================
# K. the syncs of stamp -i over three files, one worker (a group, issue 34):
#    exactly 2 fsync/fdatasync calls per file (its journal, the file) and
#    one for the group (the directory, after every journal of the group is
#    linked and before any update is written), no other sync call, and each
#    --json line printed only after its file's fsync, the journal unlinked
#    after it
# ===========================================================================
if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true >/dev/null 2>&1; then
	rm -rf "$W" && mkdir -p "$W"
	for i in 1 2 3; do cp "$D/qpdf-r6-table.pdf" "$W/k$i.pdf"; done
	printf '%s\n' "$W/k1.pdf" "$W/k2.pdf" "$W/k3.pdf" >"$T/klist"
	RC=0
	strace -f -qq -s 80 -o "$T/strace" \
		-e trace=fsync,fdatasync,sync,syncfs,sync_file_range,msync,write,linkat,unlink,unlinkat \
		"$PDFSTAMP" stamp --json --jobs 1 --password-file "$UPW" -i --files-from "$T/klist" \
		>"$T/out" 2>"$T/err" || RC=$?
	check_status 0 "K: stamp -i --json of three files under strace"
	checker_feed /dev/stdin "$T/strace" 3 <<'PY'
import re, sys
path, nfiles = sys.argv[1], int(sys.argv[2])
def res(ok, desc, detail=""):
    print(("OK\t%s" if ok else "FAIL\t%s\t" + detail.replace("\t", " ")) % desc)
ev = []  # (kind, text) in order
for line in open(path, encoding="utf-8", errors="replace"):
    m = re.match(r"\d+\s+(\w+)\((.*)", line)
    if not m or "<unfinished" in line:
        continue
    call, rest = m.group(1), m.group(2)
    if call in ("fsync", "fdatasync"):
        ev.append(("sync", line.strip()))
    elif call in ("sync", "syncfs", "sync_file_range", "msync"):
        ev.append(("othersync", line.strip()))
    elif call == "write" and rest.startswith('1, "{\\"file\\"'):
        ev.append(("json", line.strip()))
    elif call == "linkat" and "pdfstamp-journal" in rest:
        ev.append(("link", line.strip()))
    elif call in ("unlink", "unlinkat") and "pdfstamp-journal\"" in rest:
        ev.append(("unlink", line.strip()))
kinds = [k for k, _ in ev]
res(kinds.count("othersync") == 0, "K: no sync, syncfs, sync_file_range or msync",
    "; ".join(t for k, t in ev if k == "othersync"))
res(kinds.count("sync") == 2 * nfiles + 1,
    "K: %d fsync/fdatasync calls for %d files in one group" % (2 * nfiles + 1, nfiles),
    "got %d" % kinds.count("sync"))
res(kinds.count("json") == nfiles, "K: %d JSON lines, one write each" % nfiles, "got %d" % kinds.count("json"))
# per file its journal's fsync and link; the directory's fsync; then per
# file its fsync, the journal's unlink, then its JSON line
want = ["sync", "link"] * nfiles + ["sync"] + ["sync", "unlink", "json"] * nfiles
res(kinds == want, "K: journals synced and linked, one directory fsync, then per file: fsync, "
    "unlink, its JSON line", " ".join(kinds))
PY
	check_true test -z "$(ls -A "$W" | grep -E 'pdfstamp-' || true)" "K: no journal or temporary file left"
	for i in 1 2 3; do
		check_eq "$(jget "$T/out" 'd["ok"]' "$i")" true "K: file $i stamped"
	done
else
	skip "K: the fsyncs of stamp -i counted (strace is absent or cannot trace here)"
fi

MAN=$TOP_SRCDIR/man/pdfstamp.1
check_grep '^\.Ss pdfstamp recover' "$MAN" "the man page describes recover"
check_grep '^\.Ss Journals and shared directories' "$MAN" "SECURITY CONSIDERATIONS covers journals"
for k in journal_pending action; do
	check_grep "^\\.It Li $k\$|^\\.Li $k( |\$)" "$MAN" "the man page documents JSON key '$k'"
done

finish
