#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/sparse.sh - memory and output follow the objects present, not
# the highest object number (issue 11, "Amplification").
#
# A file of a few hundred bytes whose objects are numbered around 8,388,000
# (the highest number ISO 32000 allows is 8,388,607) once cost 133 MB for
# `info` and made `encrypt` write a 168 MB file: the cross-reference index
# and the rewrite's xref were dense arrays indexed by object number.  Here
# `info`, `verify`, `encrypt`, `rotate` and `stamp` must stay within a few
# MB of memory (peak RSS from /usr/bin/time) and write files of a few KB
# that qpdf accepts and reads back, in both xref forms: a classic table, and
# an xref stream with an object stream (whose members are carried over, so
# the rewrite writes an xref stream with /Index ranges).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need /usr/bin/time

MAX_RSS_KB=49152   # 48 MiB: the dense index alone took 131 MiB
MAX_OUT=16384      # the dense rewrite wrote 168 MB (table), 74 KB (xref stream)

python3 - "$T" <<'PY'
import sys
T = sys.argv[1]

def table_file(base):
    """Catalog, page tree and page at BASE..BASE+2; a classic table."""
    objs = [(base, b"<</Type/Catalog/Pages %d 0 R>>" % (base + 1)),
            (base + 1, b"<</Type/Pages/Kids[%d 0 R]/Count 1>>" % (base + 2)),
            (base + 2, b"<</Type/Page/Parent %d 0 R/MediaBox[0 0 612 792]>>" % (base + 1))]
    out = b"%PDF-1.7\n"
    offs = []
    for n, body in objs:
        offs.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    x = len(out)
    out += b"xref\n0 1\n0000000000 65535 f\r\n%d %d\n" % (base, len(objs))
    for o in offs:
        out += b"%010d 00000 n\r\n" % o
    out += b"trailer\n<</Size %d/Root %d 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (base + len(objs), base, x)
    return out

def stream_file(base):
    """Catalog, page tree and page in an object stream; an xref stream."""
    ostm, xnum = base + 100, base + 200
    members = [(base + 1, b"<</Type/Catalog/Pages %d 0 R>>" % (base + 2)),
               (base + 2, b"<</Type/Pages/Kids[%d 0 R]/Count 1>>" % (base + 3)),
               (base + 3, b"<</Type/Page/Parent %d 0 R/MediaBox[0 0 612 792]>>" % (base + 2))]
    body, head = b"", b""
    for n, m in members:
        head += b"%d %d " % (n, len(body))
        body += m + b"\n"
    data = head + b"\n" + body
    out = b"%PDF-1.7\n"
    ooff = len(out)
    out += b"%d 0 obj\n<</Type/ObjStm/N 3/First %d/Length %d>>\nstream\n" % (ostm, len(head) + 1, len(data))
    out += data + b"\nendstream\nendobj\n"
    xoff = len(out)
    rows = bytes([0]) + (0).to_bytes(4, "big") + (65535).to_bytes(2, "big")
    for i in range(3):
        rows += bytes([2]) + ostm.to_bytes(4, "big") + i.to_bytes(2, "big")
    rows += bytes([1]) + ooff.to_bytes(4, "big") + (0).to_bytes(2, "big")
    rows += bytes([1]) + xoff.to_bytes(4, "big") + (0).to_bytes(2, "big")
    out += (b"%d 0 obj\n<</Type/XRef/Size %d/Root %d 0 R/W[1 4 2]/Index[0 1 %d 3 %d 1 %d 1]/Length %d>>\nstream\n"
            % (xnum, xnum + 1, base + 1, base + 1, ostm, xnum, len(rows)))
    out += rows + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % xoff
    return out

open(T + "/hi-table.pdf", "wb").write(table_file(8388000))
open(T + "/hi-stream.pdf", "wb").write(stream_file(8388000))
PY
printf 'secret\n' >"$T/pw"

# rss CMD...: runs CMD under /usr/bin/time; status in $RC, peak RSS (KiB) in $RSS.
rss() {
	RC=0
	/usr/bin/time -o "$T/rss" -f %M "$@" >"$T/out" 2>"$T/err" || RC=$?
	RSS=$(tail -n 1 "$T/rss")
}

check_rss() {
	if [ "${RSS:-x}" -le "$MAX_RSS_KB" ] 2>/dev/null; then
		ok "$1: peak RSS ${RSS} KiB"
	else
		fail "$1: peak RSS ${RSS} KiB, more than $MAX_RSS_KB"
	fi
}

check_small() {
	local n
	n=$(stat -c %s "$1" 2>/dev/null || echo missing)
	if [ "$n" != missing ] && [ "$n" -le "$MAX_OUT" ]; then
		ok "$2: $n bytes"
	else
		fail "$2: $n bytes, more than $MAX_OUT"
	fi
}

for form in table stream; do
	IN=$T/hi-$form.pdf
	ENC=$T/enc-$form.pdf
	if [ $form = table ]; then CAT=8388000; LEAF=8388002; else CAT=8388001; LEAF=8388003; fi
	check_true [ "$(stat -c %s "$IN")" -lt 1024 ] "$form: the input is tiny"

	rss "$PDFSTAMP" info --json "$IN"
	check_status 0 "$form: info"
	check_rss "$form: info"
	check_eq "$(jget "$T/out" 'd["objects"]')" "$([ $form = table ] && echo 3 || echo 5)" "$form: info counts the objects in use"
	check_eq "$(jget "$T/out" 'd["pages"]')" "1" "$form: info reads the page tree"

	rss "$PDFSTAMP" verify "$IN"
	check_status 0 "$form: verify"
	check_rss "$form: verify"

	rss "$PDFSTAMP" encrypt --quiet --new-user-password-file "$T/pw" --new-owner-password-file "$T/pw" \
		-o "$ENC" "$IN"
	check_status 0 "$form: encrypt"
	check_rss "$form: encrypt"
	check_small "$ENC" "$form: encrypt writes a small file"
	run qpdf --password=secret --check "$ENC"
	check_status 0 "$form: qpdf --check accepts the encrypted file"
	run qpdf --password=secret --show-object=$CAT "$ENC"
	check_status 0 "$form: qpdf reads the catalog back"
	check_grep '/Type /Catalog' "$T/out" "$form: object $CAT is the catalog"
	run qpdf --password=secret --show-object=$LEAF "$ENC"
	check_grep '/Type /Page\b' "$T/out" "$form: qpdf reads page $LEAF back"
	run qpdf --password=secret --show-npages "$ENC"
	check_eq "$(cat "$T/out")" "1" "$form: qpdf counts one page"

	rss "$PDFSTAMP" rotate --quiet --password-file "$T/pw" --new-user-password-file "$T/pw" \
		--new-owner-password-file "$T/pw" -o "$T/rot-$form.pdf" "$ENC"
	check_status 0 "$form: rotate"
	check_rss "$form: rotate"
	check_small "$T/rot-$form.pdf" "$form: rotate writes a small file"
	run qpdf --password=secret --check "$T/rot-$form.pdf"
	check_status 0 "$form: qpdf --check accepts the rotated file"

	# The incremental writer numbers new objects above the highest in use.
	rss "$PDFSTAMP" stamp --password-file "$T/pw" -o "$T/st-$form.pdf" "$ENC"
	check_status 0 "$form: stamp"
	check_rss "$form: stamp"
	check_true [ $(( $(stat -c %s "$T/st-$form.pdf") - $(stat -c %s "$ENC") )) -le "$MAX_OUT" ] \
		"$form: stamp appends a small update"
	run qpdf --password=secret --check "$T/st-$form.pdf"
	check_status 0 "$form: qpdf --check accepts the stamped file"
	run "$PDFSTAMP" info --json --password-file "$T/pw" "$T/st-$form.pdf"
	check_status 0 "$form: info on the stamped file"
	check_eq "$(jget "$T/out" 'd["revisions"]')" "2" "$form: the stamp is a second revision"
done

finish
