#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
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
# The last tables: a writer never hands out a number that an object it
# reads names (incr.c note 6): `stamp --page all` whose page 2 or last
# page names /Size .. /Size+8 (on qpdf-made and pdfstamp-made bases, with
# a table or an xref stream appended), `meta --xmp` whose /Metadata stream
# does, `dss --vri` whose /VRI entry does.

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
# a base pdfstamp made (for the --page all cases below)
PSBASE=
if "$PDFSTAMP" encrypt --new-user-password-file "$PW" --new-owner-password-file "$S/owner.pw" \
	-o "$T/ps-base.pdf" "$S/plain-3page.pdf" >"$T/make.log" 2>&1; then
	PSBASE=$T/ps-base.pdf
else
	fail "pdfstamp encrypt makes a base" "$(cat "$T/make.log")"
fi
# a throwaway certificate (for the dss --vri case)
CERT=
if command -v openssl >/dev/null &&
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=refs -days 2 \
		-outform DER -out "$T/leaf.der" -keyout "$T/leaf.key" >"$T/make.log" 2>&1; then
	CERT=$T/leaf.der
fi
if ! python3 "$F" make "$S" "$C" ${PSBASE:+--base "$PSBASE"} ${CERT:+--cert "$CERT"} >"$T/make.log" 2>&1; then
	fail "refs.py makes the hostile inputs" "$(cat "$T/make.log")"
	finish
fi

# qwarn FILE: qpdf --check's warnings, without the file name, sorted.
qwarn() {
	qpdf --password-file="$PW" --check "$1" 2>&1 | grep '^WARNING' | sed 's/^WARNING: [^:]*: //' | sort -u
}

# expect CASE CMD EXIT ERE [CHECK-ARGS...]: runs CMD (stamp, all, page:N,
# meta, verify, audit or info) on a copy of CASE.pdf.  ERE must match stderr
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
	page:*) a=(stamp --page "${cmd#page:}" --text APPROVED --password-file "$PW" -o "$out" "$in") ;;
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
	elif [ "$cmd" = stamp ] || [ "$cmd" = all ] || [ "$cmd" = meta ] || [ "${cmd%%:*}" = page ]; then
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
					text=APPROVED $([ "$cmd" != all ] && echo contents=APPROVED)
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

# ---- stamp --page all reads every target page, with what it inherits and
# an indirect /Annots array, before it hands out its first number (stamp.c
# note 1, incr.c note 6).  In each input (refs.py page_cases) page 2 or
# the last page names the nine numbers /Size .. /Size+8 of the hostile
# file, all missing, in its /Contents, its /Annots array, an indirect
# /Annots array, nine keys (/Thumb ...), its /Resources, or an
# intermediate page tree node it inherits /Resources from; on r6-table
# (qpdf, a table section appended), r6-objstm (qpdf, an xref stream
# appended) and a file `pdfstamp encrypt` made (both forms).  Before: the
# stamp's first new objects took those numbers (only the objects read
# before the first one was handed out were looked at, and --page all read
# pages 2.. later), so page 2's /Contents drew the stamp's appearance and
# its /Thumb named the /C array; an indirect /Annots array captured even a
# one-page stamp's font and appearance.
# dangling NAME: the output of the last expect still names every one of
# those numbers where the input did (mutool show of the page, or of the
# array or node, HOLDER: qpdf drops a dictionary entry whose value is
# null), none of them is an object of the output (qpdf --show-xref), and
# page PAGE shows the stamp's text once (pdftotext: the annotation's
# appearance; a /Contents that names the appearance stream shows it twice).
dangling() {
	local name=$1 p h nums n o miss="" taken=""
	read -r p h nums <"$C/$name.nums"
	if [ "$h" != 0 ]; then
		o=" $(mutool show -p "$(head -1 "$PW")" "$W/out.pdf" "$h" 2>/dev/null | tr -s '[]<>\n' ' ') "
		for n in $nums; do
			case $o in *" $n 0 R "*) ;; *) miss="$miss $n" ;; esac
		done
		check_eq "$miss" "" "$name: object $h of the output still names $nums (mutool show)"
	fi
	o=" $(qpdf --password-file="$PW" --show-xref "$W/out.pdf" 2>/dev/null | sed -n 's|^\([0-9]*\)/.*|\1|p' | tr '\n' ' ') "
	for n in $nums; do
		case $o in *" $n "*) taken="$taken $n" ;; esac
	done
	check_eq "$taken" "" "$name: none of $nums is an object of the output (qpdf --show-xref)"
	if [ "$p" = 0 ]; then
		: # not a page
	elif command -v pdftotext >/dev/null; then
		check_eq "$(pdftotext -upw "$(head -1 "$PW")" -f "$p" -l "$p" "$W/out.pdf" - 2>/dev/null | grep -c APPROVED)" \
			1 "$name: page $p shows APPROVED once (pdftotext)"
	else
		skip "$name: pdftotext is not installed"
	fi
}
# landed NAME NPAGES: every page of the last output has the stamp as its
# last annotation (mutool show; for inputs whose /Contents arrays name
# missing objects, on which qpdf --json, and so e2e.py, exits 3)
landed() {
	local name=$1 n=$2 i pn last
	for ((i = 1; i <= n; i++)); do
		pn=$(mutool show -p "$(head -1 "$PW")" "$W/out.pdf" pages 2>/dev/null | sed -n "s|^page $i = \([0-9]*\) .*|\1|p")
		last=$(mutool show -p "$(head -1 "$PW")" "$W/out.pdf" "$pn/Annots" 2>/dev/null | grep -o '[0-9]* 0 R' | wc -l)
		check_eq "$(mutool show -p "$(head -1 "$PW")" "$W/out.pdf" "$pn/Annots/$last/Subtype" 2>/dev/null)" /Stamp \
			"$name: page $i's last annotation is a /Stamp (mutool show)"
		check_eq "$(mutool show -p "$(head -1 "$PW")" "$W/out.pdf" "$pn/Annots/$last/AP/N/Subtype" 2>/dev/null)" \
			/Form "$name: page $i's stamp has an appearance form (mutool show)"
	done
}
for base in tab:2 stm:3 ps-tab:3 ps-stm:3; do
	n=${base#*:}
	base=${base%:*}
	[ -e "$C/pages-$base-last-contents.pdf" ] || { skip "pages-$base: no pdfstamp-made base"; continue; }
	for where in p2 last; do
		[ "$where" = p2 ] && [ "$n" = 2 ] && continue
		p=$([ "$where" = p2 ] && echo 2 || echo "$n")
		for kind in contents annots annots-ind keys resources inherit; do
			c=pages-$base-$where-$kind
			[ -e "$C/$c.pdf" ] || continue
			counts=()
			for ((i = 1; i <= n; i++)); do
				if [ "$i" = "$p" ] && [ "${kind#annots}" != "$kind" ]; then
					counts+=("$i:10") # the nine dangling references and the stamp
				else
					counts+=("$i:1")
				fi
			done
			if [ "$kind" = contents ]; then
				expect "$c" all 0 ""
				landed "$c" "$n"
			else
				expect "$c" all 0 "" "${counts[@]}"
			fi
			dangling "$c"
		done
		# one page: the indirect /Annots array is read before the first
		# number too
		expect "pages-$base-$where-annots-ind" "page:$p" 0 "" "$p:10"
		dangling "pages-$base-$where-annots-ind"
	done
done
# page 2's /Contents names one of the nine numbers: the one the stamp's
# appearance stream would take made page 2 draw it (pdftotext)
for k in 0 1 2 3 4 5 6 7 8; do
	expect "pages-stm-p2-contents-k$k" all 0 ""
	landed "pages-stm-p2-contents-k$k" 3
	dangling "pages-stm-p2-contents-k$k"
done

# ---- meta --xmp reads the catalog's /Metadata stream before it hands out
# its first number (meta.c xmp_read): a direct trailer /Info (the new Info
# dictionary takes a new number) and a /Metadata stream whose dictionary
# names /Size .. /Size+8 (refs.py meta_case).  Before: the new Info took
# /Size (latent: the packet's new version drops that dictionary); read
# after the first number, the stream would make the commit refuse (incr.c
# note 6).
expect meta-xmp-size meta 0 ""
dangling meta-xmp-size

# ---- dss --vri reads the /VRI entries it extends before it hands out its
# first number (dss.c vri_read): an approval signature whose /Contents
# holds the certificate, and its /VRI entry, an indirect dictionary that
# names /Size .. /Size+8, all missing (refs.py dss_case).  Before: the new
# certificate stream took /Size, which the entry's /TS then named.
if [ -n "$CERT" ]; then
	cp "$C/dss-vri-size.pdf" "$W/in.pdf"
	rm -f "$W/out.pdf"
	run "$PDFSTAMP" dss --cert "$CERT" --vri --password-file "$PW" -o "$W/out.pdf" "$W/in.pdf"
	check_status 0 "dss-vri-size: dss --vri"
	check_no_grep 'out of memory|self-check|neither an object of the file|a number this update gave' "$T/err" \
		"dss-vri-size: no internal error"
	check_eq "$(comm -13 <(qwarn "$W/in.pdf") <(qwarn "$W/out.pdf") | head -3)" "" \
		"dss-vri-size: qpdf --check finds nothing new in the output"
	run "$PDFSTAMP" verify --password-file "$PW" "$W/out.pdf"
	check_status 0 "dss-vri-size: pdfstamp verify accepts the output"
	dangling dss-vri-size
	read -r _ h _ <"$C/dss-vri-size.nums"
	m=$(mutool show -p "$(head -1 "$PW")" "$W/out.pdf" "$h/Cert" 2>/dev/null | grep -o '[0-9]* 0 R' | head -1)
	mutool show -b -p "$(head -1 "$PW")" "$W/out.pdf" "${m%% *}" >"$W/cert.der" 2>/dev/null
	check_true cmp -s "$W/cert.der" "$CERT" "dss-vri-size: the /VRI entry's /Cert names the new stream, the certificate (mutool show -b)"
else
	skip "dss-vri-size: openssl is not installed"
fi

# ---- verify and audit read every input that opens (nothing they follow
# is hostile here but the unparsable numbers above)
for c in annots-size annots-encrypt annots-loop annots-xrefstm kids-encrypt kids-million \
	info-encrypt metadata-xrefstm; do
	expect "$c" verify 0 ""
	expect "$c" audit 0 ""
done

finish
