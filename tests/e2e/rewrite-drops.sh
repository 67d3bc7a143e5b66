#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/rewrite-drops.sh - what a full rewrite (`rotate`, `encrypt`)
# keeps and where it writes (issue 11, "Trust boundaries"):
#  1. Objects are dropped by number, never by content: a catalog with a
#     /Linearized key, another dictionary with one and a plain stream that
#     says /Type /XRef all survive (the stream encrypted); only the chain's
#     own xref streams and the real linearization dictionary of a linearized
#     file go.  Expectations come from qpdf, MuPDF and the raw bytes.
#     (qpdf 11 does not decrypt a stream typed /XRef when it reads, so the
#     stream's content is compared with `mutool show -b`, which does.)
#  2. --in-place on a symbolic link rotates the file the link leads to (the
#     link stays, owner, group and mode are kept); on a file with several
#     hard links it is refused (exit 4), every name untouched; -o over an
#     existing symbolic link replaces the link itself; stamp -i writes
#     into the file itself, so links of either kind see the update.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool

S=$TOP_SRCDIR/samples
NU=$T/new-user.pw
NO=$T/new-owner.pw
printf 'fresh user 2\n' >"$NU"
printf 'fresh owner 2\n' >"$NO"
printf 'user pw\n' >"$T/u.pw"
printf 'owner pw\n' >"$T/o.pw"
NEWPW=(--new-user-password-file "$NU" --new-owner-password-file "$NO")

# no_temp DIR DESC: no .pdfstamp-* file is left in DIR.
no_temp() {
	check_eq "$(find "$1" -maxdepth 1 -name '.pdfstamp-*' | head -3)" "" "$2: no temporary file left"
}

# mshow FILE PWFILE PATH...: mutool show (decrypted); empty on failure.
# mstream FILE PWFILE N: the decrypted, decoded data of stream N.
mshow() {
	local f=$1 pw=$2
	shift 2
	mutool show -p "$(head -n 1 "$pw")" "$f" "$@" 2>/dev/null
}
mstream() { mutool show -p "$(head -n 1 "$2")" -b "$1" "$3" 2>/dev/null; }

# xref_typed FILE PWFILE: the numbers of the streams whose /Type is /XRef, as
# qpdf lists them (one per line), except the file's own newest xref stream
# (the object at the last startxref).
xref_typed() {
	qpdf --password-file="$2" --json=2 --json-key=qpdf --decode-level=none "$1" 2>/dev/null | python3 -c '
import json, re, sys
data = open(sys.argv[1], "rb").read()
x = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
m = re.match(rb"\s*(\d+)\s+\d+\s+obj", data[x:x + 64])
own = int(m.group(1)) if m else None
d = json.load(sys.stdin)["qpdf"][1]
for k, o in sorted(d.items()):
    n = int(k.split()[0][4:]) if k.startswith("obj:") else None
    if n is not None and n != own and "stream" in o and o["stream"]["dict"].get("/Type") == "/XRef":
        print(n)' "$1"
}

# ---------------------------------------------------------------------------
# 1. Dropped by number, not by content.

# plain.pdf: 1 the catalog, with /Linearized 1 and the first object of the
# file (exactly where a linearization dictionary would be); 4 a plain stream
# typed /XRef; 6 another dictionary with /Linearized, referenced from the
# catalog.  Classic table: the file has no xref stream at all.
SECRET=SECRET-XREF-TEXT-4711
python3 - "$T/plain.pdf" "$SECRET" <<'PY'
import sys
data = (b"not a cross-reference stream: %s " % sys.argv[2].encode()) * 4
content = b"BT /F1 12 Tf 20 100 Td (Hello page) Tj ET"
objs = [b"<< /Type /Catalog /Pages 2 0 R /Linearized 1 /MyData 4 0 R /MyNote 6 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 5 0 R "
        b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
        b"<< /Type /XRef /Size 3 /W [1 2 1] /Length %d >>\nstream\n" % len(data) + data + b"\nendstream",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Linearized 2 /Note (kept as content) >>"]
pdf = bytearray(b"%PDF-1.7\n")
offs = []
for i, o in enumerate(objs, 1):
    offs.append(len(pdf))
    pdf += b"%d 0 obj\n%s\nendobj\n" % (i, o)
x = len(pdf)
n = len(objs) + 1
pdf += b"xref\n0 %d\n0000000000 65535 f \n" % n + b"".join(b"%010d 00000 n \n" % o for o in offs)
pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (n, x)
open(sys.argv[1], "wb").write(pdf)
PY
mutool show -b "$T/plain.pdf" 4 >"$T/data4.in" 2>/dev/null
check_true grep -q "$SECRET" "$T/data4.in" "plain input: MuPDF reads the /XRef-typed stream 4"

# keeps_content OUT PWFILE N DESC: object N of OUT (the /XRef-typed stream)
# decrypts to the input's data, and the catalog, object 6 and the page are there.
keeps_content() {
	local out=$1 pw=$2 n=$3 desc=$4
	check_eq "$(mshow "$out" "$pw" trailer/Root/Type)" "/Catalog" "$desc: /Root is the catalog"
	check_eq "$(mshow "$out" "$pw" trailer/Root/Linearized)" "1" "$desc: the catalog keeps its /Linearized key"
	check_eq "$(qpdf --password-file="$pw" --show-npages "$out" 2>&1)" 1 "$desc: qpdf counts 1 page"
	check_eq "$(mshow "$out" "$pw" trailer/Root/MyNote/Note)" "(kept as content)" \
		"$desc: another dictionary with /Linearized is kept"
	mstream "$out" "$pw" "$n" >"$T/data.out"
	if [ -s "$T/data.out" ] && cmp -s "$T/data.out" "$T/data4.in"; then
		ok "$desc: the /XRef-typed stream $n is kept, MuPDF decrypts it to the input's data"
	else
		fail "$desc: the /XRef-typed stream $n is kept, MuPDF decrypts it to the input's data" \
			"$(head -c 200 "$T/data.out")"
	fi
}

run "$PDFSTAMP" encrypt "${NEWPW[@]}" -o "$T/enc.pdf" "$T/plain.pdf"
check_status 0 "encrypt a file whose catalog has /Linearized and with a stream typed /XRef"
qcheck_linearized "$T/enc.pdf" "$NU" "encrypt"
keeps_content "$T/enc.pdf" "$NU" 4 "encrypt -o"
check_true test "$(grep -ac "$SECRET" "$T/enc.pdf")" = 0 "encrypt: the /XRef-typed stream is encrypted (its text is not in the file)"

cp "$T/plain.pdf" "$T/ip.pdf"
run "$PDFSTAMP" encrypt "${NEWPW[@]}" -i "$T/ip.pdf"
check_status 0 "encrypt -i of the same file"
qcheck_linearized "$T/ip.pdf" "$NU" "encrypt -i"
keeps_content "$T/ip.pdf" "$NU" 4 "encrypt -i"

# The same content encrypted by qpdf (which renumbers, and encrypts the
# /XRef-typed stream), as a table and with object and xref streams.
for os in disable generate; do
	q=$T/q-$os.pdf
	qpdf --object-streams=$os --encrypt 'user pw' 'owner pw' 256 -- "$T/plain.pdf" "$q" 2>/dev/null
	n=$(xref_typed "$q" "$T/o.pw" | while read -r k; do
		mstream "$q" "$T/o.pw" "$k" | cmp -s - "$T/data4.in" && echo "$k"; done | head -n 1)
	check_ne "$n" "" "qpdf ($os object streams): the /XRef-typed stream is an object of its own"
	[ -n "$n" ] || continue
	cp "$q" "$T/qi.pdf"
	run "$PDFSTAMP" rotate --password-file "$T/o.pw" "${NEWPW[@]}" -i "$T/qi.pdf"
	check_status 0 "rotate -i of the qpdf file ($os object streams)"
	qcheck_linearized "$T/qi.pdf" "$NU" "rotate -i ($os object streams)"
	opens "$T/qi.pdf" "$NO" owner "rotate -i ($os object streams): the new owner password opens it"
	keeps_content "$T/qi.pdf" "$NU" "$n" "rotate -i ($os object streams)"
	# only the chain's own xref streams went: qpdf lists exactly the one
	# typed stream, and its content is the input's
	check_eq "$(xref_typed "$T/qi.pdf" "$NO" | tr '\n' ' ')" "$n " \
		"rotate -i ($os object streams): the only stream typed /XRef left is object $n"
done

# A real linearized file: its linearization dictionary (the first object)
# and both xref sections' streams are dropped, everything else is kept.
for os in disable generate; do
	l=$T/lin-$os.pdf
	qpdf --linearize --object-streams=$os --encrypt 'user pw' 'owner pw' 256 -- "$S/plain-3page.pdf" "$l"
	check_grep '^File is linearized' <(qpdf --password-file="$T/o.pw" --check "$l" 2>&1) \
		"linearized ($os): qpdf made a linearized file"
	lin=$(head -c 1024 "$l" | LC_ALL=C grep -ao '^[0-9]* 0 obj' | head -n 1 | cut -d' ' -f1)
	check_eq "$(mshow "$l" "$T/o.pw" "$lin/Linearized")" 1 "linearized ($os): object $lin is the linearization dictionary"
	[ $os = generate ] && check_eq "$(xref_typed "$l" "$T/o.pw" | wc -l)" 1 \
		"linearized ($os): the input has a second xref stream (the main section's)"
	run "$PDFSTAMP" rotate --password-file "$T/o.pw" "${NEWPW[@]}" -o "$T/lin-rot.pdf" "$l"
	check_status 0 "linearized ($os): rotate"
	qcheck_linearized "$T/lin-rot.pdf" "$NU" "linearized ($os)"
	check_eq "$(mshow "$T/lin-rot.pdf" "$NU" "$lin")" "$(printf '%s 0 obj\nnull\nendobj' "$lin")" \
		"linearized ($os): the linearization dictionary (object $lin) is dropped"
	check_eq "$(qpdf --password-file="$NU" --show-npages "$T/lin-rot.pdf" 2>&1)" 3 "linearized ($os): 3 pages"
	check_eq "$(xref_typed "$T/lin-rot.pdf" "$NU" | wc -l)" 0 \
		"linearized ($os): no xref stream of the input is left (only the output's own)"
	pdftotext -upw "user pw" "$l" "$T/a.txt" 2>/dev/null
	pdftotext -upw "$(head -n 1 "$NU")" "$T/lin-rot.pdf" "$T/b.txt" 2>/dev/null
	check_true cmp -s "$T/a.txt" "$T/b.txt" "linearized ($os): pdftotext gives the same text"
done

# ---------------------------------------------------------------------------
# 2. Links.

L=$T/links
mkdir -p "$L/real"
cp "$S/r6-table.pdf" "$L/real/doc.pdf"
chmod 640 "$L/real/doc.pdf"
ROOT=0
if [ "$(id -u)" = 0 ]; then
	ROOT=1
	chown 1234:2345 "$L/real/doc.pdf"
fi
ln -s real/doc.pdf "$L/link.pdf"
ln -s link.pdf "$L/link2.pdf"
run "$PDFSTAMP" rotate --password-file "$S/owner.pw" "${NEWPW[@]}" -i "$L/link2.pdf"
check_status 0 "rotate -i through two symbolic links"
check_true test -L "$L/link.pdf" "symlink: link.pdf is still a symbolic link"
check_true test -L "$L/link2.pdf" "symlink: link2.pdf is still a symbolic link"
check_eq "$(readlink "$L/link.pdf")" real/doc.pdf "symlink: it still points at real/doc.pdf"
opens "$L/real/doc.pdf" "$NO" owner "symlink: the file the links lead to has the new owner password"
check_true test "$(qpdf --password-file="$S/owner.pw" --check "$L/real/doc.pdf" >/dev/null 2>&1; echo $?)" = 2 \
	"symlink: the old owner password no longer opens it"
check_eq "$(stat -c %a "$L/real/doc.pdf")" 640 "symlink: mode 640 kept"
if [ $ROOT = 1 ]; then
	check_eq "$(stat -c %u:%g "$L/real/doc.pdf")" 1234:2345 "symlink: owner and group kept"
else
	echo "SKIP: not root: owner and group cannot be set up"
fi
no_temp "$L" "symlink (the link's directory)"
no_temp "$L/real" "symlink (the target's directory)"

# encrypt -i through a link
cp "$T/plain.pdf" "$L/real/plain.pdf"
ln -s real/plain.pdf "$L/plain-link.pdf"
run "$PDFSTAMP" encrypt "${NEWPW[@]}" -i "$L/plain-link.pdf"
check_status 0 "encrypt -i through a symbolic link"
check_true test -L "$L/plain-link.pdf" "encrypt symlink: still a symbolic link"
opens "$L/real/plain.pdf" "$NO" owner "encrypt symlink: the target is encrypted"

# Hard links: refused, every name untouched.
cp "$S/r6-table.pdf" "$L/h1.pdf"
ln "$L/h1.pdf" "$L/h2.pdf"
run "$PDFSTAMP" rotate --password-file "$S/owner.pw" "${NEWPW[@]}" -i "$L/h1.pdf"
check_status 4 "rotate -i of a file with two hard links is refused"
check_grep 'hard links' "$T/err" "hard link: the message says why"
check_grep 'h1\.pdf' "$T/err" "hard link: the message names the file"
check_true cmp -s "$L/h1.pdf" "$S/r6-table.pdf" "hard link: h1.pdf untouched"
check_eq "$(stat -c %h:%i "$L/h1.pdf")" "2:$(stat -c %i "$L/h2.pdf")" "hard link: still one inode with two names"
cp "$T/plain.pdf" "$L/p1.pdf"
ln "$L/p1.pdf" "$L/p2.pdf"
run "$PDFSTAMP" encrypt "${NEWPW[@]}" -i "$L/p1.pdf"
check_status 4 "encrypt -i of a file with two hard links is refused"
check_true cmp -s "$L/p2.pdf" "$T/plain.pdf" "hard link: p2.pdf untouched (not encrypted)"
no_temp "$L" "hard links"

# Not permitted to keep the group (another user rotating a file whose
# group it is not in): done anyway, with a warning.
if [ $ROOT = 1 ] && command -v setpriv >/dev/null 2>&1 &&
	! setpriv --reuid=65534 --regid=65534 --clear-groups "$PDFSTAMP" --version >/dev/null 2>&1; then
	skip "group not permitted: nobody cannot run $PDFSTAMP (the build tree is inside a private directory)"
elif [ $ROOT = 1 ] && command -v setpriv >/dev/null 2>&1; then
	N=$T/nobody
	mkdir -m 0777 "$N"
	cp "$S/r6-table.pdf" "$N/d.pdf"
	cp "$S/owner.pw" "$NU" "$NO" "$N/"
	chown 65534:0 "$N/d.pdf"
	chmod 644 "$N/d.pdf" "$N"/*.pw
	ln -s d.pdf "$N/l.pdf"
	chmod 0755 "$T"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$PDFSTAMP" rotate --password-file "$N/owner.pw" \
		--new-user-password-file "$N/new-user.pw" --new-owner-password-file "$N/new-owner.pw" -i "$N/l.pdf"
	check_status 0 "rotate -i of a file whose group may not be kept"
	check_grep 'warning: .*old owner and group' "$T/err" "group not permitted: a warning"
	check_eq "$(stat -c %u:%g "$N/d.pdf")" 65534:65534 "group not permitted: the new file has the caller's group"
	opens "$N/d.pdf" "$NO" owner "group not permitted: rotated"
else
	echo "SKIP: not root or no setpriv: the not-permitted owner case"
fi

# -o over an existing symbolic link replaces the link, not what it points at.
cp "$S/r6-table.pdf" "$L/victim.pdf"
ln -s victim.pdf "$L/out-link.pdf"
run "$PDFSTAMP" rotate --password-file "$S/owner.pw" "${NEWPW[@]}" -o "$L/out-link.pdf" "$S/r6-table.pdf"
check_status 0 "rotate -o over a symbolic link"
check_true test ! -L "$L/out-link.pdf" "-o: the link is replaced by the new file"
check_true cmp -s "$L/victim.pdf" "$S/r6-table.pdf" "-o: the file the link pointed at is untouched"

# stamp -i appends to the file itself: both hard links and the link's
# target see the update, no link is replaced.
cp "$S/r6-table.pdf" "$L/s1.pdf"
ln "$L/s1.pdf" "$L/s2.pdf"
ln -s s1.pdf "$L/s-link.pdf"
run "$PDFSTAMP" stamp --password-file "$S/owner.pw" -i "$L/s-link.pdf"
check_status 0 "stamp -i through a symbolic link to a file with two hard links"
check_true test -L "$L/s-link.pdf" "stamp -i: the link stays"
check_eq "$(stat -c %h "$L/s1.pdf"):$(grep -ac startxref "$L/s2.pdf")" "2:2" \
	"stamp -i: one inode, and the other hard link has the new revision too"

finish
