#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/options.sh - one table per option (issue 30).
#
# Each command's options are one table (src/cli/opts.c) from which its
# getopt_long table and its --help are made.  This script checks that
# table, through --help, against the rest:
#   1. pdfstamp(1) documents exactly the options of each command's --help
#      (long and short forms) with the same argument names (case aside):
#      the tagged list entries (.It Fl ...) of the command's section and of
#      the sections it refers to for the rest (the options of stamp and
#      meta, PASSWORDS and CERTIFICATE-ENCRYPTED FILES, rotate's for
#      encrypt); -h/--help of a command is
#      the global entry, and the global options are DESCRIPTION's list;
#   2. every option a synopsis of the man page names (SYNOPSIS and the
#      command's section) is in its command's --help;
#   3. every option of --help parses as that option (never "unknown" or
#      "ambiguous"), in its long and short form: the getopt table and the
#      help are the same table;
#   4. no line of any --help is longer than 79 columns, and no source of
#      the tool lists options outside the tables (no struct option array,
#      no getopt_long call but the two that read the tables).

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3

MAN=$TOP_SRCDIR/man/pdfstamp.1
CMDS="info stamp stamps unstamp meta dss timestamp rotate encrypt verify audit recover"

run "$PDFSTAMP" --help
check_status 0 "pdfstamp --help"
cp "$T/out" "$T/help-main.txt"
for c in $CMDS; do
	run "$PDFSTAMP" "$c" --help
	check_status 0 "$c --help"
	cp "$T/out" "$T/help-$c.txt"
done

cat >"$T/check.py" <<'PY'
import re, sys

man_path, helpdir, cmds = sys.argv[1], sys.argv[2], sys.argv[3].split()
man = open(man_path, encoding="utf-8").read().split("\n")

def result(ok, desc, detail=""):
    print(("OK\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))

# ---- the man page ------------------------------------------------------------
def sections():
    """{title: [lines]} for every .Sh and .Ss."""
    out, cur = {}, None
    for line in man:
        m = re.match(r"^\.S[hs] (.*)$", line)
        if m:
            cur = m.group(1).strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out

MACROS = {"Ar", "Cm", "Ns", "No", "Li", "Op", "Oo", "Oc", "Pq", "Ql", "Ic", "Sq", "Dq"}

def fl_options(tokens):
    """[(option, argument)] of the Fl entries in an mdoc line's tokens."""
    out, i = [], 0
    while i < len(tokens):
        if tokens[i] != "Fl" or i + 1 >= len(tokens):
            i += 1
            continue
        name = tokens[i + 1].replace("\\-", "-")
        i += 2
        arg = []
        while i < len(tokens) and tokens[i] not in (",", "Fl"):
            if tokens[i] not in MACROS:
                arg.append(tokens[i])
            i += 1
        out.append(("-" + name, "".join(arg).lower()))
    return out

def it_options(lines):
    """The options of the .It Fl entries of LINES."""
    opts = set()
    for line in lines:
        if line.startswith(".It Fl "):
            opts |= set(fl_options(line.split()[1:]))
    return opts

def synopsis_names(lines):
    """Option names in .Op/.Fl lines up to the first .Pp."""
    names = set()
    for line in lines:
        if line.startswith(".Pp"):
            break
        if line.startswith((".Op ", ".Fl ")):
            names |= {o for o, _ in fl_options(line.split())}
    return names

# ---- --help --------------------------------------------------------------------
def help_options(path):
    opts, lines = set(), open(path, encoding="utf-8").read().split("\n")
    for line in lines:
        m = re.match(r"^  (?:-(\w), |    )--([\w-]+)(?: (\S+))?(?:  |$)", line)
        if m:
            arg = (m.group(3) or "").lower()
            if m.group(1):
                opts.add(("-" + m.group(1), arg))
            opts.add(("--" + m.group(2), arg))
            continue
        m = re.match(r"^  -(\w)(?: (\S+))?(?:  |$)", line)
        if m:
            opts.add(("-" + m.group(1), (m.group(2) or "").lower()))
    return opts, lines

S = sections()
refer = {
    "info": ["pdfstamp info", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "stamp": ["pdfstamp stamp", "Options of stamp and meta", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "stamps": ["pdfstamp stamps", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "unstamp": ["pdfstamp unstamp", "Options of stamp and meta", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES",
                "Options for many files"],
    "meta": ["pdfstamp meta", "Options of stamp and meta", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "dss": ["pdfstamp dss", "Options of stamp and meta", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "timestamp": ["pdfstamp timestamp", "Options of stamp and meta", "PASSWORDS",
                  "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "rotate": ["pdfstamp rotate", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES"],
    "encrypt": ["pdfstamp encrypt", "pdfstamp rotate"],
    "verify": ["pdfstamp verify", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "audit": ["pdfstamp audit", "PASSWORDS", "CERTIFICATE-ENCRYPTED FILES", "Options for many files"],
    "recover": ["pdfstamp recover"],
}
missing = [t for ts in refer.values() for t in ts if t not in S]
result(not missing, "the man page has the sections the commands refer to", str(missing))
result(any(re.search(r"Ar command Fl \\-help", l) for l in S.get("DESCRIPTION", [])),
       "the man page says that 'pdfstamp COMMAND --help' describes a command's options")

glob = it_options(S.get("DESCRIPTION", []))
h, lines = help_options("%s/help-main.txt" % helpdir)
result(h == glob, "global options: --help and DESCRIPTION's list agree",
       "only in --help: %s; only in the man page: %s" % (sorted(h - glob), sorted(glob - h)))
result(("--help", "") in glob and ("-h", "") in glob, "the man page documents -h, --help")

# the SYNOPSIS: one block per ".Nm" line, its command the ".Cm" after it
syn, cur = {}, None
for line in S.get("SYNOPSIS", []):
    if line.startswith(".Nm"):
        cur = None
    elif line.startswith(".Cm ") and cur is None:
        cur = line.split()[1]
        syn.setdefault(cur, set())
    elif cur:
        syn[cur] |= {o for o, _ in fl_options(line.split())}

for c in cmds:
    h, lines = help_options("%s/help-%s.txt" % (helpdir, c))
    h -= {("-h", ""), ("--help", "")}
    m = set()
    for t in refer[c]:
        m |= it_options(S.get(t, []))
    if c == "encrypt":  # rotate's section: its current password is PASSWORDS',
        # and --to-password is rotate's own (a plaintext input has no handler)
        m = {o for o in m if not o[0].startswith("--password") and o[0] != "--to-password"}
    result(len(h) > 0, "%s --help lists options" % c)
    result(h == m, "%s: --help and pdfstamp(1) document the same options, same arguments" % c,
           "only in --help: %s; only in the man page: %s" % (sorted(h - m), sorted(m - h)))
    names = {o for o, _ in h} | {"-h", "--help"}
    own = synopsis_names(S.get("pdfstamp " + c, []))
    result(own and own <= names, "%s: the options of its man synopsis are in --help" % c,
           str(sorted(own - names)))
    result(syn.get(c) is not None and syn[c] <= names,
           "%s: the options of SYNOPSIS are in --help" % c, str(sorted(syn.get(c, set()) - names)))
    long_lines = [l for l in lines if len(l) > 79]
    result(not long_lines, "%s --help: no line over 79 columns" % c, str(long_lines[:2]))
    for o, a in sorted(h):
        print("#%s\t%s\t%s" % (c, o, a))
PY
checker_feed "$T/check.py" "$MAN" "$T" "$CMDS"

# 3. every option of --help parses as itself: after it, --help is reached
#    (exit 0) or its value is refused, never as an unknown option.
n=0
while IFS=$'\t' read -r c o a; do
	c=${c#\#}
	if [ -n "$a" ]; then
		run "$PDFSTAMP" "$c" "$o" 1 --help
	else
		run "$PDFSTAMP" "$c" "$o" --help
	fi
	if grep -qE "unknown option|ambiguous|needs an argument|takes no argument" "$T/err"; then
		fail "$c $o: parses as an option of $c" "$(cat "$T/err")"
	fi
	n=$((n + 1))
done <"$T/extra"
check_true test "$n" -ge 80 "every option of every --help parses as that option ($n)"

# 4. nothing lists options outside the tables
check_eq "$(grep -lE 'struct option [a-z_]+\[\] *=' "$TOP_SRCDIR"/src/cli/*.c | tr '\n' ' ')" "" \
	"no getopt_long table written by hand in src/cli"
check_eq "$(grep -l 'getopt_long(' "$TOP_SRCDIR"/src/cli/*.c | xargs -n1 basename | sort |
	tr '\n' ' ')" "main.c opts.c " \
	"getopt_long is called only where the tables are read (main.c, opts.c)"
check_eq "$(grep -l '"Usage:' "$TOP_SRCDIR"/src/cli/cmd_*.c | tr '\n' ' ')" "" \
	"no command prints a help text of its own"

finish
