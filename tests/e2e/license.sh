#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/license.sh - the project's licence is stated where a reader
# and a packager look for it (issue 30): LICENSE holds the Apache License
# 2.0, every source file of the tree names it in an SPDX line among its
# first three lines, and debian/copyright gives it to every file but the
# test fonts, whose own licences it states, and lists only files that
# exist.
#
# Source files: under src/, tests/, fuzz/, bench/, man/, debian/ and .ci/
# (where the tree has them: make distcheck's tarball has no .ci/), those
# named *.c, *.h, *.cc, *.sh, *.py, *.java, *.js, *.in, man pages, and the
# scripts and build files named below; data (PDF, fonts, images, JSON,
# corpora) carries no comment and is not counted.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3

python3 - "$TOP_SRCDIR" >"$T/py.out" 2>&1 <<'PY'
import fnmatch, os, re, sys

top = sys.argv[1]
TAG = "SPDX-License-Identifier: Apache-2.0"
SKIP_DIRS = {".git", ".libs", ".deps", "autom4te.cache", "_build", "build", "regress"}
NAMED = {".ci/run", "bench/run", "debian/rules", "Makefile.am", "configure.ac", "bootstrap.sh",
         "tests/e2e/layers"}

def check(cond, what, why=""):
    print(("OK " if cond else "FAIL ") + what + ("" if cond or not why else ": " + why))

def is_source(rel):
    base = os.path.basename(rel)
    if rel in NAMED:
        return True
    if re.search(r"^man/.*\.[1-9]$", rel):
        return True
    return base.endswith((".c", ".h", ".cc", ".sh", ".py", ".java", ".js", ".in")) and base != "Makefile.in"

sources = [r for r in NAMED if os.path.isfile(os.path.join(top, r))]
for sub in ("src", "tests", "fuzz", "bench", "man", "debian", ".ci", "samples"):
    for root, dirs, files in os.walk(os.path.join(top, sub)):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), top)
            if rel not in NAMED and is_source(rel):
                sources.append(rel)
missing = []
for rel in sorted(set(sources)):
    with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as fh:
        head = [fh.readline() for _ in range(3)]
    if not any(TAG in l for l in head):
        missing.append(rel)
check(len(sources) > 100, "found the tree's source files (%d)" % len(sources))
check(not missing, "every source file names Apache-2.0 in an SPDX line atop it",
      "%d without: %s" % (len(missing), ", ".join(missing[:8])))

lic = open(os.path.join(top, "LICENSE"), encoding="utf-8").read() if os.path.isfile(os.path.join(top, "LICENSE")) else ""
check("Apache License" in lic and "Version 2.0, January 2004" in lic and "END OF TERMS AND CONDITIONS" in lic,
      "LICENSE holds the Apache License 2.0")
common = "/usr/share/common-licenses/Apache-2.0"
if lic and os.path.isfile(common):
    check(lic == open(common, encoding="utf-8").read(), "LICENSE is the text Debian ships (%s)" % common)

cp = os.path.join(top, "debian/copyright")
check(os.path.isfile(cp), "debian/copyright is in the tree (make dist ships it)")
if os.path.isfile(cp):
    paras = [p for p in open(cp, encoding="utf-8").read().split("\n\n") if p.strip()]
    files = []
    for p in paras:
        m = re.search(r"^Files:((?:.*\n?)(?:^\s+\S.*\n?)*)", p, re.M)
        if m:
            lm = re.search(r"^License: *(\S+)", p, re.M)
            files.append((m.group(1).split(), lm.group(1) if lm else None))
    check(files and files[0] == (["*"], "Apache-2.0"), "debian/copyright: Files: * is Apache-2.0")
    # a licence's text: the lines that follow its "License:" line, in a
    # paragraph of its own or in the Files paragraph that uses it
    named_lic = {m.group(1) for p in paras for m in re.finditer(r"^License: *(\S+)\n(?: .*\n?){5,}", p, re.M)}
    used = {l for _, l in files}
    check(used <= named_lic, "debian/copyright: each licence it names has its text",
          "no text: " + ", ".join(sorted(used - named_lic)))
    every = []
    for root, dirs, fs in os.walk(top):
        dirs[:] = [d for d in dirs if d not in {".git", "_build", "build", "autom4te.cache"}]
        every += [os.path.relpath(os.path.join(root, f), top) for f in fs]
    dead = [pat for pats, _ in files[1:] for pat in pats if not fnmatch.filter(every, pat)]
    check(not dead, "debian/copyright names only files that exist", "no match: " + ", ".join(dead))
    fonts = [f for f in every if f.startswith("tests/malformed/fonts/") and f.endswith((".ttf", ".otf"))]
    made_from = {f for f in fonts if re.search(r"(dejavu|noto)|truncated|table-past|no-outlines|upem|cff-", f)}
    covered = {f for f in made_from for pats, _ in files[1:] for pat in pats if fnmatch.fnmatch(f, pat)}
    check(made_from and covered == made_from,
          "debian/copyright states the licence of every font made from DejaVu or Noto",
          "not stated: " + ", ".join(sorted(made_from - covered)))
PY
checks_from $? "$T/py.out"

finish
