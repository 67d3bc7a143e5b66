#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make-samples.sh - regenerate the sample PDFs in this directory.
#
# The plaintext sources are written by hand below (a few objects with exact
# byte offsets), then normalised by qpdf; every encrypted sample is made from
# them by qpdf.  The passwords are in README.md and in the *.pw files.
# Encryption draws fresh random salts, IVs and file keys, so every run gives
# different bytes; the structure (revision, xref form, pages, permissions) is
# what stays the same.
#
# Usage: samples/make-samples.sh        (needs qpdf >= 10; run from anywhere)
set -euo pipefail
export LC_ALL=C   # ${#s} must count bytes, not characters

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v qpdf >/dev/null || { echo "make-samples.sh: qpdf is required" >&2; exit 1; }

USER_PW=sample-user
OWNER_PW=sample-owner

# mkpdf OUT NPAGES TITLE [XMP]: a minimal PDF 1.7 with NPAGES pages of
# Helvetica text, an /Info dictionary and, if XMP is "xmp", an XMP metadata
# stream.  Object numbers: 1 catalog, 2 page tree, 3 font, 4 info,
# 5 metadata (if any), then one page and one content stream per page.
mkpdf() {
	local out=$1 npages=$2 title=$3 xmp=${4:-}
	local -a objs=()
	local kids="" n first=5 i s body xmpdata meta=""

	if [ "$xmp" = xmp ]; then
		first=6
		meta=" /Metadata 5 0 R"
	fi
	for ((i = 0; i < npages; i++)); do
		kids="$kids $((first + 2 * i)) 0 R"
	done
	objs[1]="<< /Type /Catalog /Pages 2 0 R$meta >>"
	objs[2]="<< /Type /Pages /Kids [$kids ] /Count $npages >>"
	objs[3]="<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
	objs[4]="<< /Title ($title) /Author (pdfstamp samples) /Producer (make-samples.sh) /CreationDate (D:20240101000000Z) >>"
	if [ "$xmp" = xmp ]; then
		xmpdata='<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">'"$title"'</rdf:li></rdf:Alt></dc:title>
<xmp:CreateDate>2024-01-01T00:00:00Z</xmp:CreateDate>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>'
		objs[5]="<< /Type /Metadata /Subtype /XML /Length ${#xmpdata} >>
stream
$xmpdata
endstream"
	fi
	for ((i = 0; i < npages; i++)); do
		n=$((first + 2 * i))
		s="BT /F1 36 Tf 72 700 Td ($title) Tj ET
BT /F1 18 Tf 72 650 Td (Page $((i + 1)) of $npages) Tj ET
0 0 1 RG 4 w 60 60 492 672 re S"
		objs[n]="<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents $((n + 1)) 0 R >>"
		objs[n + 1]="<< /Length ${#s} >>
stream
$s
endstream"
	done

	local size off
	size=$((first + 2 * npages))
	local -a offs=()
	body=$'%PDF-1.7\n%\xe2\xe3\xcf\xd3\n'
	for ((n = 1; n < size; n++)); do
		offs[n]=${#body}
		body+="$n 0 obj
${objs[n]}
endobj
"
	done
	off=${#body}
	body+="xref
0 $size
0000000000 65535 f 
"
	for ((n = 1; n < size; n++)); do
		body+=$(printf '%010d 00000 n \n' "${offs[n]}")
		body+=$'\n'
	done
	body+="trailer
<< /Size $size /Root 1 0 R /Info 4 0 R >>
startxref
$off
%%EOF
"
	printf '%s' "$body" >"$out"
}

# qpdf exits 3 on warnings, so with set -e a hand-written file that qpdf
# had to repair stops the script.
q() {
	qpdf "$@"
}

mkpdf "$tmp/two.pdf" 2 "pdfstamp sample"
mkpdf "$tmp/three.pdf" 3 "pdfstamp sample three" xmp
q --check "$tmp/two.pdf" >/dev/null
q --check "$tmp/three.pdf" >/dev/null

# Plaintext sources (normalised, classic xref tables).
q --object-streams=disable "$tmp/two.pdf" plain-2page.pdf
q --object-streams=disable "$tmp/three.pdf" plain-3page.pdf

# R6, classic xref table.
q --object-streams=disable --encrypt "$USER_PW" "$OWNER_PW" 256 -- \
	plain-2page.pdf r6-table.pdf
# R6, xref stream with object streams.
q --object-streams=generate --encrypt "$USER_PW" "$OWNER_PW" 256 -- \
	plain-3page.pdf r6-objstm.pdf
# R5 (deprecated, read support only), classic xref table.
q --object-streams=disable --encrypt "$USER_PW" "$OWNER_PW" 256 --force-R5 -- \
	plain-2page.pdf r5-table.pdf
# R6 with an empty user password and restricted permissions: anyone can
# open it; printing is low resolution only and modification is denied.
q --object-streams=disable --encrypt "" "$OWNER_PW" 256 \
	--print=low --modify=none --extract=n -- \
	plain-3page.pdf r6-empty-user.pdf

printf '%s\n' "$USER_PW" >user.pw
printf '%s\n' "$OWNER_PW" >owner.pw

for f in r6-table.pdf r6-objstm.pdf r5-table.pdf; do
	q --check --password="$USER_PW" "$f" >/dev/null
done
q --check r6-empty-user.pdf >/dev/null
ls -l plain-*.pdf r[56]-*.pdf
