#!/bin/bash
# tests/e2e/refs.sh - hostile references on the stamp, meta, verify and
# audit paths.
#
# Each input (tests/e2e/fixtures/refs.py) is an encrypted sample with one
# appended plaintext-only update whose page, page tree node, catalog or
# trailer names something it should not: a missing object (number 0, the
# first number the writer hands out, above /Size, above the 8,388,607 of
# ISO 32000-2 Annex C, above 2^31), a free entry, the /Encrypt dictionary,
# an xref stream, the page itself, another page, a content stream, a
# reference loop, a /Parent loop, a direct page in /Kids, /Kids with a
# million entries, a /Count the tree does not have, /AcroForm, /Fields and
# /Perms /DocMDP entries that name missing objects, /Encrypt or themselves.
#
# The rule (README, Exit codes): a reference to a missing object is the
# null object (ISO 32000-2 7.3.10), so the command proceeds as if the key
# were absent; anything else that cannot be right is malformed input, exit 4
# with a message that says what, and bad input loses nothing.  For every
# command on every input this asserts the exact exit status, and:
#   - on failure: the message class (an ERE), never "out of memory", "bad
#     update state" or a failed self-check (the symptoms before the fix:
#     exit 1, whose class is I/O or internal error), and no output file;
#   - on success: the output starts with the input's bytes, qpdf --check
#     finds no problem the input did not already have (the earlier bug
#     wrote an object numbered above /Size), pdfstamp verify accepts it,
#     and qpdf and MuPDF decrypt the new annotation on the page that was
#     stamped (tests/e2e/fixtures/e2e.py annot: /Subtype, /Contents, the
#     appearance's text), or the new Info and XMP values (meta);
#   - always: the input is byte for byte what it was (sha256).
# A second table checks what `stamp --page all` does with the same inputs.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need sha256sum

S=$TOP_SRCDIR/samples
F=$TOP_SRCDIR/tests/e2e/fixtures/refs.py
E=$TOP_SRCDIR/tests/e2e/fixtures/e2e.py
PW=$S/user.pw
C=$T/cases
W=$T/work
mkdir -p "$W"
if ! python3 "$F" make "$S" "$C" >"$T/make.log" 2>&1; then
	fail "refs.py makes the hostile inputs" "$(cat "$T/make.log")"
	finish
fi

# qwarn FILE: qpdf --check's warnings, without the file name, sorted.
qwarn() {
	qpdf --password-file="$PW" --check "$1" 2>&1 | grep '^WARNING' | sed 's/^WARNING: [^:]*: //' | sort -u
}

# expect CASE CMD EXIT ERE [CHECK-ARGS...]: runs CMD (stamp, all, meta,
# verify, audit or info) on a copy of CASE.pdf.  ERE must match stderr
# (a refusal's message, or a warning; "" for none).  On a stamp or meta
# success, CHECK-ARGS go to e2e.py's annot checker (stamp: PAGE
# key=value...) or are the Info key and value set (meta).
expect() {
	local name=$1 cmd=$2 want=$3 ere=$4 in=$W/in.pdf out=$W/out.pdf before desc a=()
	shift 4
	desc="$name: $cmd"
	cp "$C/$name.pdf" "$in" || { fail "$desc: cannot copy the input"; return; }
	before=$(sha256sum <"$in")
	rm -f "$out"
	case $cmd in
	stamp) a=(stamp --text APPROVED --password-file "$PW" -o "$out" "$in") ;;
	all) a=(stamp --page all --text APPROVED --password-file "$PW" -o "$out" "$in") ;;
	meta) a=(meta --set Title=Hostile-refs --xmp --password-file "$PW" -o "$out" "$in") ;;
	verify | audit) a=("$cmd" --password-file "$PW" "$in") ;;
	info) a=(info --json --password-file "$PW" "$in") ;;
	esac
	run timeout -k 5 60 "$PDFSTAMP" "${a[@]}"
	check_status "$want" "$desc"
	[ -n "$ere" ] && check_grep "$ere" "$T/err" "$desc: the message says /$ere/"
	check_no_grep 'out of memory|bad update state|self-check|neither an object of the file' "$T/err" \
		"$desc: no resource or internal error"
	if [ "$want" != 0 ]; then
		check_grep '^pdfstamp: ' "$T/err" "$desc: an error message"
		check_true test ! -e "$out" "$desc: no output file"
	elif [ "$cmd" = stamp ] || [ "$cmd" = all ] || [ "$cmd" = meta ]; then
		check_true cmp -s -n "$(stat -c %s "$in")" "$in" "$out" "$desc: the output starts with the input"
		# (qpdf --check takes minutes on a million /Kids: not there)
		[ "$name" = kids-million ] ||
			check_eq "$(comm -13 <(qwarn "$in") <(qwarn "$out") | head -3)" "" \
				"$desc: qpdf --check finds nothing new in the output"
		run "$PDFSTAMP" verify --password-file "$PW" "$out"
		check_status 0 "$desc: pdfstamp verify accepts the output"
		if [ "$cmd" = meta ]; then
			# the trailer's /Info, as qpdf decrypts it (the input's may
			# not have been a dictionary: nothing to compare with)
			local iref
			iref=$(qpdf --password-file="$PW" --show-object=trailer "$out" |
				sed -n 's|.*/Info \([0-9]*\) \([0-9]*\) R.*|\1,\2|p')
			check_grep '/Title \(Hostile-refs\)' <(qpdf --password-file="$PW" --show-object="$iref" "$out") \
				"$desc: the new /Info has the new /Title (qpdf)"
			checker_feed "$E" xmp "$out" "$PW" "$desc" Title=Hostile-refs
		else
			while [ $# -gt 0 ]; do
				# PAGE:COUNT (annotations on that page after the stamp);
				# --page all writes /Contents once, as an indirect string
				# (stamp.c note 8), which the checker's mutool step reads
				# only when direct
				checker_feed "$E" annot "$out" "$PW" "${1%%:*}" "$desc" count="${1#*:}" \
					text=APPROVED $([ "$cmd" = stamp ] && echo contents=APPROVED)
				shift
			done
		fi
	fi
	check_eq "$(sha256sum <"$in")" "$before" "$desc: the input is unchanged"
}

MISSING='names object [0-9]+, which does not exist; the page gets a new /Annots array'
NOTARRAY='/Annots is not an array'
RANGE='in reference out of range'

# ---- /Annots names a missing object: stamped, the page gets its own array.
# Before: 0 -> exit 1 "bad update state"; /Size and /Size+1 (numbers the
# update hands out) -> exit 1 "out of memory"; 255 and 8388607 -> exit 0
# with a new object numbered above the new /Size (qpdf warns); 8388608 and
# 2^31-1 -> exit 1, the self-check refusing our own xref section.
for c in annots-zero annots-size annots-size1 annots-above-size annots-max annots-over-max \
	annots-int-max annots-free; do
	expect "$c" stamp 0 "$MISSING" 1:1
	expect "$c" all 0 "$MISSING" 1:1 2:1
done
# /Annots null, or an object of the file whose value is a reference to a
# missing one: a new version of that object
expect annots-null stamp 0 "" 1:1
expect annots-chain-missing stamp 0 "" 1:1
# An array of the file named with another generation: the new version is
# written under the generation the page names, so that readers which
# match generations (qpdf, pdf.js) see it too (before: under the old
# generation, and qpdf saw no annotation).
expect annots-gen-mismatch stamp 0 "" 1:1
# Two pages share one indirect array: both annotations land in it.
# (page 2's view: the array's last annotation, the one checked, is its own)
expect annots-shared all 0 "" 2:2

# ---- numbers no object can have: a format error (exit 4), as verify says.
expect annots-2e31 stamp 4 "object number 2147483648 $RANGE"
expect annots-4e9 stamp 4 "object number 4000000000 $RANGE"
expect annots-4e9 verify 4 "$RANGE"
expect annots-gen-huge stamp 4 "generation 70000 $RANGE"
expect annots-negative stamp 4 'at offset [0-9]+'
expect kids-4e9 stamp 4 "$RANGE"
expect kids-4e9 info 4 "$RANGE"

# ---- /Annots names an object that is not an array: exit 4.
for c in annots-encrypt annots-self annots-stream annots-int annots-dict annots-xrefstm; do
	expect "$c" stamp 4 "$NOTARRAY"
done
expect annots-loop stamp 4 'reference chain too long'
# page 2's /Annots is page 1, which --page all has already given a new
# version (before: exit 1, "out of memory")
expect annots-other-page stamp 0 "" 1:1
expect annots-other-page all 4 "page object [0-9]+: $NOTARRAY"

# ---- the page tree
expect kids-zero all 0 ""     # (qpdf --json refuses the 0 0 R in /Kids, the input's too)
expect kids-missing stamp 0 ""
expect kids-xrefstm stamp 0 ""
expect kids-encrypt stamp 4 'is the /Encrypt dictionary'
expect kids-direct stamp 4 'a page of the page tree is not an indirect object'
# /Count 2, one page: page 2 is not a usage error (before: exit 2)
expect kids-count-lie stamp 0 ""
expect kids-count-lie all 4 'fewer pages than its /Count says: no page 2'
expect kids-million stamp 0 ""
expect kids-million all 4 'more nodes than the file has objects'
expect parent-self all 0 "" 1:1 2:1
expect parent-loop all 0 "" 1:1 2:1
expect parent-loop audit 0 ""
expect parent-loop verify 0 ""

# ---- /Info and /Metadata
for c in info-zero info-size info-above-size info-over-max; do
	expect "$c" meta 0 ""
done
# a trailer /Info that names a missing number the update would hand out
# must not come to name the stamp's objects (qpdf would warn)
expect info-size stamp 0 "" 1:1
expect info-stream meta 0 'not a dictionary; writing a new one'
expect info-xrefstm meta 0 'not a dictionary; writing a new one'
expect info-encrypt meta 4 'is the /Encrypt dictionary'
for c in metadata-zero metadata-size metadata-above-size metadata-over-max; do
	expect "$c" meta 0 ""
done
expect metadata-encrypt meta 4 '/Metadata is not a stream'
expect metadata-page meta 4 '/Metadata is not a stream'
expect metadata-stream meta 4 'XMP packet'
expect metadata-xrefstm meta 4 'XMP packet'

# ---- the signature policy's walk (policy.c) before every write: missing
# objects are null (no form, no certification); a field that is its own
# kid cannot be walked to the end, so no policy can be known: exit 4
expect acroform-missing stamp 0 "" 1:1
expect acroform-missing meta 0 ""
expect fields-missing stamp 0 "" 1:1
expect fields-encrypt stamp 0 "" 1:1
expect perms-docmdp-missing stamp 0 "" 1:1
# A /Perms /DocMDP or /AcroForm that names the number the writer would
# hand out first: that number is skipped, so the reference stays null (before:
# the stamp's first new object took it, and the stamped file then read as
# certified: a second stamp was refused with exit 5).
for c in perms-docmdp-size acroform-size; do
	expect "$c" stamp 0 "" 1:1
	cp "$W/out.pdf" "$W/once.pdf"
	run "$PDFSTAMP" stamp --password-file "$PW" -o "$W/twice.pdf" "$W/once.pdf"
	check_status 0 "$c: the stamped file takes a second stamp"
	run "$PDFSTAMP" audit --password-file "$PW" "$W/once.pdf"
	check_status 0 "$c: audit finds the stamped file unsigned"
	check_grep 'unsigned' "$T/out" "$c: audit says unsigned"
	run "$PDFSTAMP" meta --set Title=x --password-file "$PW" -o "$W/twice.pdf" "$C/$c.pdf"
	check_status 0 "$c: meta"
done
expect fields-loop stamp 4 'form field tree is nested too deeply'
expect fields-loop meta 4 'form field tree is nested too deeply'
expect fields-loop audit 4 'form field tree is nested too deeply'

# ---- verify and audit read every input that opens (nothing they follow
# is hostile here but the unparsable numbers above)
for c in annots-size annots-encrypt annots-loop annots-xrefstm kids-encrypt kids-million \
	info-encrypt metadata-xrefstm; do
	expect "$c" verify 0 ""
	expect "$c" audit 0 ""
done

finish
