#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/e2e/unicode.sh - stamps in any script and with images (issue 14),
# checked with independent readers on qpdf-made R6 inputs.
#
# For each text (Latin with accents, Cyrillic, Greek, CJK, Arabic,
# Devanagari, two lines):
#  (a) MuPDF (mutool draw -F txt, annotations drawn) and poppler (pdftotext)
#      give the characters back: compared after NFC normalisation with the
#      white space removed.  Arabic is compared after NFKC (a reader may
#      return presentation forms) and may come back in either order (a
#      reader that sorts by position and does not run the bidi algorithm
#      returns it reversed).
#  (b) MuPDF and poppler renders (PNG, read here with zlib) show the stamp's
#      colour inside the annotation's /Rect and nowhere outside it;
#  (c) pdf.js opens the file and lists the annotation, with an appearance;
#  (d) qpdf decrypts every object of the update; the font program starts
#      with a TrueType/OpenType/CFF header, the ToUnicode CMap maps to every
#      code point of the text, the appearance has the text operators, the
#      font name has a subset tag; pdffonts lists it embedded and subset;
#  (e) the layout: MuPDF's character boxes (stext) lie inside the inner
#      frame, and the rows of the inner frame's lines in the render hold
#      no other ink of the stamp colour than the frame itself.
# Mixed scripts (issue 32): '承認 / موافق / स्वीकृत / Approved' on an R6 file
# with object streams: MuPDF and poppler give the text back (white space
# and format characters aside, the Arabic word either way round as in
# (a)); the one appearance's /Resources /Font holds /F1 ... /Fn, each named
# by a Tf of its content, each a different font, a Type 0 font with a
# subset tag and exactly one font program that qpdf decrypts to a font
# header; the update writes exactly those fonts.  A text per page
# ({page}) shares the fonts, written once.  --font twice keeps its order
# (DejaVu Sans, Noto Sans Devanagari, then Noto Sans CJK for the Han); a
# font given that draws nothing is not embedded; the issue's
# example (Noto Sans Egyptian Hieroglyphs, the date's digits from another
# font); a private-use character no font has (U+E000) is refused, exit
# 2, naming it and the fonts tried, the file unchanged.
# Then budgets (a short CJK stamp adds <= 64 KB; --page all shares one
# appearance and one font, and one appearance per rotation on turned
# pages), a long text fitted into a small --rect, PNG with transparency and
# RGB JPEG images in both renderers, hostile fonts and images (exit 2 or 4,
# nothing written), and a page-tree DAG under a lying /Count (refused).
# (The Arabic line of (a) is drawn in logical order, font.c note 4; either
# order is still accepted since poppler returns it in visual order.)
# Last, the libraries of these stamps are opened only when a stamp needs
# them (src/extlib.c), and one that cannot be loaded fails with exit 1.

. "$TOP_SRCDIR/tests/e2e/lib.sh"

need python3
need qpdf
need mutool
need pdftoppm
need pdftotext
need pdffonts

e2e_inputs qpdf-r6-table qpdf-r6-xrefstream
F2=$D/qpdf-r6-table.pdf         # 2 pages, classic table
F3=$D/qpdf-r6-xrefstream.pdf    # 3 pages, xref stream and object streams
PW=$(head -n 1 "$UPW")
COLOR=C00080                    # (192, 0, 128): in no sample page
C=$T/uc.py

cat >"$C" <<'PY'
import json, os, re, struct, subprocess, sys, unicodedata, zlib

PW = os.environ["PW"]
PWF = os.environ["UPW"]
COL = (192, 0, 128)


def out(ok, desc, detail=""):
    desc = desc.replace("\t", " ")
    if ok:
        print("OK\t" + desc)
    else:
        print("FAIL\t" + desc + "\t" + str(detail)[:600].replace("\n", " ").replace("\t", " "))
    return ok


def qpdf(args, check=True):
    p = subprocess.run(["qpdf", "--password-file=" + PWF] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode not in (0, 3):
        raise RuntimeError("qpdf %s: %s" % (" ".join(args), p.stderr.decode("latin-1")[:300]))
    return p.stdout


def qjson(path):
    d = json.loads(qpdf(["--json", "--json-key=qpdf", "--json-key=pages", path]))
    return d["qpdf"][1], [p["object"] for p in d["pages"]]


def val(objs, x):
    n = 0
    while isinstance(x, str) and x.endswith(" R") and n < 32:
        e = objs.get("obj:" + x)
        if e is None:
            return None
        x = e.get("value", e.get("stream", {}).get("dict"))
        n += 1
    return x


def qstr(v):
    """A qpdf JSON string as text."""
    if not isinstance(v, str):
        return None
    if v.startswith("u:"):
        return v[2:]
    if v.startswith("b:"):
        b = bytes.fromhex(v[2:])
        return b[2:].decode("utf-16-be") if b[:2] == b"\xfe\xff" else b.decode("latin-1")
    return v


def new_objects(inp, outp):
    """Numbers of the objects the update wrote (raw bytes after the input)."""
    base = os.path.getsize(inp)
    data = open(outp, "rb").read()[base:]
    return sorted({int(m.group(1)) for m in re.finditer(rb"(?m)^(\d+) 0 obj\b", data)})


def annots(path, page):
    objs, pages = qjson(path)
    pg = val(objs, pages[page - 1])
    res = []
    for ref in val(objs, pg.get("/Annots")) or []:
        a = val(objs, ref)
        if isinstance(a, dict) and a.get("/Subtype") in ("/Stamp", "/FreeText"):
            res.append((ref, a))
    return objs, pg, res


def norm(s, form="NFC"):
    return re.sub(r"\s+", "", unicodedata.normalize(form, s))


def chk_text(name, outp, page, want, arabic):
    """(a) both extractors give WANT back."""
    runs = [("MuPDF", ["mutool", "draw", "-q", "-p", PW, "-F", "txt", "-o", "-", outp, str(page)]),
            ("poppler", ["pdftotext", "-upw", PW, "-f", str(page), "-l", str(page), "-enc", "UTF-8", outp, "-"])]
    for who, cmd in runs:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        got = p.stdout.decode("utf-8", "replace")
        form = "NFKC" if arabic else "NFC"
        g, w = norm(got, form), norm(want, form)
        ok = w in g or (arabic and w[::-1] in g)
        out(p.returncode == 0 and ok, "%s: %s's text extraction gives back %r" % (name, who, want), got[-300:])


def read_png(path):
    """An 8-bit RGB PNG (what both renderers write with -c rgb / -png) ->
    (w, h, rows of RGB bytes).  MuPDF writes filter 0 and poppler mostly
    filter 2 (Up), both done a whole row at a time; the rest bytewise."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat, w = 8, [], 0
    while i < len(data):
        n, t = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if t == b"IHDR":
            w, h, bd, ct, _, _, il = struct.unpack(">IIBBBBB", body[:13])
            assert bd == 8 and ct == 2 and il == 0, (bd, ct, il)
        elif t == b"IDAT":
            idat.append(body)
        i += 12 + n
    raw = zlib.decompress(b"".join(idat))
    stride, bpp = w * 3, 3
    m7 = int.from_bytes(b"\x7f" * stride, "big")
    m8 = int.from_bytes(b"\x80" * stride, "big")
    rows, prev, pos = [], bytes(stride), 0
    for _ in range(h):
        f = raw[pos]
        line = raw[pos + 1:pos + 1 + stride]
        pos += 1 + stride
        if f == 2:
            x, y = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            line = (((x & m7) + (y & m7)) ^ ((x ^ y) & m8)).to_bytes(stride, "big")
        elif f != 0:
            line = bytearray(line)
            for k in range(stride):
                a = line[k - bpp] if k >= bpp else 0
                b = prev[k]
                c = prev[k - bpp] if k >= bpp else 0
                if f == 1:
                    line[k] = (line[k] + a) & 255
                elif f == 3:
                    line[k] = (line[k] + (a + b) // 2) & 255
                elif f == 4:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    line[k] = (line[k] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = bytes(line)
        rows.append(line)
        prev = line
    return w, h, rows


def band(lo, hi):
    return b"[" + re.escape(bytes([max(lo, 0)])) + b"-" + re.escape(bytes([min(hi, 255)])) + b"]"


def colour_re(c, tol):
    """Pixels within TOL of colour C, found by a regular expression over a
    row of RGB bytes (matches at multiples of 3 only)."""
    return re.compile(b"(?=" + b"".join(band(v - tol, v + tol) for v in c) + b")", re.S)


def xs_of(rx, row):
    return [m.start() // 3 for m in rx.finditer(row) if m.start() % 3 == 0]


def pixel(rows, x, y):
    return tuple(rows[y][3 * x:3 * x + 3])


def render(outp, page, dpi, base):
    """MuPDF and poppler PNG renders of PAGE: {who: path}."""
    res = {}
    mu = base + ".mu.png"
    subprocess.run(["mutool", "draw", "-q", "-p", PW, "-r", str(dpi), "-c", "rgb", "-o", mu, outp, str(page)],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    subprocess.run(["pdftoppm", "-upw", PW, "-r", str(dpi), "-png", "-f", str(page), "-l", str(page),
                    "-singlefile", outp, base + ".pp"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for who, p in (("MuPDF", mu), ("poppler", base + ".pp.png")):
        if os.path.exists(p):
            res[who] = p
        else:
            out(False, "%s renders the page" % who, p)
    return res


def near(p, c, tol):
    return all(abs(p[k] - c[k]) <= tol for k in range(3))


def to_px(rect, mbox, dpi):
    s = dpi / 72.0
    return (int((rect[0] - mbox[0]) * s), int((mbox[3] - rect[3]) * s),
            int((rect[2] - mbox[0]) * s + 0.999), int((mbox[3] - rect[1]) * s + 0.999))


def chk_pixels(name, outp, page, dpi=100):
    """(b) the stamp colour inside the /Rect, none of it outside."""
    objs, pg, ann = annots(outp, page)
    mbox = val(objs, pg.get("/MediaBox"))
    rect = ann[-1][1]["/Rect"]
    x0, y0, x1, y1 = to_px(rect, mbox, dpi)
    for who, path in render(outp, page, dpi, os.path.join(os.environ["T"], "px")).items():
        w, h, rows = read_png(path)
        inside = outside = 0
        rx = colour_re(COL, 24)
        for y in range(h):
            for x in xs_of(rx, rows[y]):
                if x0 - 2 <= x <= x1 + 2 and y0 - 2 <= y <= y1 + 2:
                    inside += 1
                else:
                    outside += 1
        out(inside > 50, "%s: %s draws the stamp colour inside the /Rect" % (name, who), "%d pixels" % inside)
        out(outside == 0, "%s: %s draws none of it outside the /Rect" % (name, who), "%d pixels" % outside)


def chk_layout(name, outp, page):
    """(e) every character box lies inside the inner frame (MuPDF stext),
    and the frame lines' rows hold only frame ink (render)."""
    import xml.etree.ElementTree as ET
    objs, pg, ann = annots(outp, page)
    mbox = val(objs, pg.get("/MediaBox"))
    rect = ann[-1][1]["/Rect"]
    w, h = rect[2] - rect[0], rect[3] - rect[1]
    lw = min(w, h) / 24
    # the inner frame's inner edge, in the page's top-down coordinates
    ix0, ix1 = rect[0] + 3 * lw, rect[2] - 3 * lw
    iy0, iy1 = (mbox[3] - rect[3]) + 3 * lw, (mbox[3] - rect[1]) - 3 * lw
    p = subprocess.run(["mutool", "draw", "-q", "-p", PW, "-F", "stext", "-o", "-", outp, str(page)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    root = ET.fromstring(p.stdout)
    bad, n = [], 0
    for ch in root.iter("char"):
        q = [float(v) for v in ch.get("quad", "").split()] or None
        if not q:
            continue
        xs, ys = q[0::2], q[1::2]
        if not (rect[0] - 1 <= min(xs) and max(xs) <= rect[2] + 1 and mbox[3] - rect[3] - 1 <= min(ys)
                and max(ys) <= mbox[3] - rect[1] + 1):
            continue  # page text
        n += 1
        # MuPDF's quads span the font's ascender/descender box, not the ink:
        # the ink check is the render below; here the glyph origins
        x, y = float(ch.get("x", xs[0])), float(ch.get("y", ys[0]))
        if not (ix0 <= x <= ix1 and iy0 <= y <= iy1):
            bad.append((ch.get("c"), x, y))
    out(n > 0 and not bad, "%s: every glyph of the stamp starts inside its inner frame (MuPDF stext)" % name,
        "%d chars, outside: %s; frame %s" % (n, bad[:5], (ix0, iy0, ix1, iy1)))
    dpi = 150
    rx = re.compile(b"(?=" + band(102, 255) + band(0, 90) + band(38, 218) + b")", re.S)  # the colour, anti-aliased
    for who, path in render(outp, page, dpi, os.path.join(os.environ["T"], "lay")).items():
        W, H, rows = read_png(path)
        s = dpi / 72.0
        # rows strictly between the inner frame line and the outer one, and
        # the band just inside the inner frame line (its clearance): no
        # stamp-coloured pixel may be there except in the frame columns
        fx0, fx1 = int((ix0 - mbox[0]) * s) + 2, int((ix1 - mbox[0]) * s) - 2
        top = int(iy0 * s)
        bot = int(iy1 * s)
        clear = max(1, int(0.8 * lw * s))
        hits = 0
        for y in list(range(top + 2, top + 2 + clear)) + list(range(bot - 1 - clear, bot - 1)):
            if 0 <= y < H:
                hits += len([x for x in xs_of(rx, rows[y]) if fx0 <= x < fx1])
        out(hits == 0, "%s: %s shows no ink of the text in the clearance inside the inner frame" % (name, who),
            "%d pixels in rows %d..%d and %d..%d" % (hits, top + 2, top + 1 + clear, bot - 1 - clear, bot - 2))


def cmap_codepoints(data):
    """Every code point a ToUnicode CMap maps to."""
    cps = set()
    txt = data.decode("latin-1")
    for block in re.findall(r"beginbfchar(.*?)endbfchar", txt, re.S):
        for src, dst in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            cps.update(utf16(dst))
    for block in re.findall(r"beginbfrange(.*?)endbfrange", txt, re.S):
        for lo, hi, rest in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(\[[^\]]*\]|<[0-9A-Fa-f]+>)", block):
            if rest.startswith("["):
                for dst in re.findall(r"<([0-9A-Fa-f]+)>", rest):
                    cps.update(utf16(dst))
            else:
                d = utf16(rest[1:-1])
                for k in range(int(hi, 16) - int(lo, 16) + 1):
                    cps.update(d[:-1] + [d[-1] + k] if d else [])
    return cps


def utf16(h):
    b = bytes.fromhex(h)
    return [ord(c) for c in b.decode("utf-16-be", "replace")]


def chk_objects(name, inp, outp, want, embedded):
    """(d) every new object decrypts; the font, CMap and appearance are
    what was meant."""
    nums = new_objects(inp, outp)
    objs, _, _ = annots(outp, 1)
    bad = []
    for n in nums:
        p = subprocess.run(["qpdf", "--password-file=" + PWF, "--show-object=%d" % n, "--filtered-stream-data", outp],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode not in (0, 3) or b"error" in p.stderr.lower():
            bad.append((n, p.stderr[:100]))
    out(nums and not bad, "%s: qpdf decrypts each of the %d new objects" % (name, len(nums)), bad)
    fonts = [(n, val(objs, "%d 0 R" % n)) for n in nums]
    fonts = [(n, d) for n, d in fonts if isinstance(d, dict) and d.get("/Type") == "/Font"]
    type0 = [(n, d) for n, d in fonts if d.get("/Subtype") == "/Type0"]
    if not embedded:
        out(len(fonts) == 1 and fonts[0][1].get("/BaseFont") == "/Helvetica-Bold" and not type0,
            "%s: the WinAnsi text uses the standard-14 Helvetica-Bold, nothing embedded" % name, fonts)
        return
    if not out(len(type0) == 1, "%s: one Type 0 font in the update" % name, fonts):
        return
    n0, t0 = type0[0]
    out(re.match(r"^/[A-Z]{6}\+", t0.get("/BaseFont", "")) is not None,
        "%s: the font name has a subset tag" % name, t0.get("/BaseFont"))
    out(t0.get("/Encoding") == "/Identity-H", "%s: Identity-H" % name, t0.get("/Encoding"))
    desc = val(objs, (val(objs, t0.get("/DescendantFonts")) or [None])[0])
    fd = val(objs, (desc or {}).get("/FontDescriptor")) or {}
    out(desc and desc.get("/Subtype") in ("/CIDFontType2", "/CIDFontType0") and "/W" in desc,
        "%s: a CIDFontType2/0 descendant with widths" % name, desc)
    ff = fd.get("/FontFile2") or fd.get("/FontFile3")
    if out(isinstance(ff, str), "%s: the descriptor has an embedded font program" % name, fd):
        prog = qpdf(["--show-object=" + ff, "--filtered-stream-data", outp])
        ok = prog[:4] in (b"\x00\x01\x00\x00", b"true", b"OTTO") or (fd.get("/FontFile3") and prog[:1] == b"\x01")
        out(ok, "%s: the font program decrypts to a TrueType/OpenType/CFF header" % name, prog[:8])
    tu = t0.get("/ToUnicode")
    if out(isinstance(tu, str), "%s: a ToUnicode CMap" % name, t0):
        cps = cmap_codepoints(qpdf(["--show-object=" + tu, "--filtered-stream-data", outp]))
        need = {ord(c) for c in unicodedata.normalize("NFC", want) if not c.isspace()}
        out(need <= cps, "%s: ToUnicode maps to every code point of the text" % name,
            "missing %s" % sorted("U+%04X" % c for c in need - cps))


def chk_appearance(name, outp, page, ops):
    objs, _, ann = annots(outp, page)
    ref = ann[-1][1].get("/AP", {}).get("/N")
    data = qpdf(["--show-object=" + ref, "--filtered-stream-data", outp]).decode("latin-1")
    miss = [o for o in ops.split(",") if not re.search(r"(^|\s)%s(\s|$)" % re.escape(o), data)]
    out(not miss, "%s: the appearance content has the operators %s" % (name, ops), "missing %s in %r" % (miss, data[:300]))


def chk_forms(name, inp, outp, nforms, nfonts):
    nums = new_objects(inp, outp)
    objs, _, _ = annots(outp, 1)
    forms = fonts = 0
    for n in nums:
        d = val(objs, "%d 0 R" % n)
        if isinstance(d, dict) and d.get("/Subtype") == "/Form":
            forms += 1
        if isinstance(d, dict) and d.get("/Type") == "/Font" and d.get("/Subtype") in ("/Type0", "/Type1"):
            fonts += 1
    out(forms == nforms, "%s: the update has %d appearance form XObject(s)" % (name, nforms), forms)
    out(fonts == nfonts, "%s: the update has %d font(s)" % (name, nfonts), fonts)


def chk_mixed_text(name, outp, page, want):
    """Issue 32: both extractors give the mixed-script text back; white
    space and format characters (poppler wraps Arabic in U+202B..U+202C)
    removed, NFKC (presentation forms); the Arabic words either way round,
    as in (a): a reader that sorts by position returns them reversed."""
    runs = [("MuPDF", ["mutool", "draw", "-q", "-p", PW, "-F", "txt", "-o", "-", outp, str(page)]),
            ("poppler", ["pdftotext", "-upw", PW, "-f", str(page), "-l", str(page), "-enc", "UTF-8", outp, "-"])]
    strip = lambda s: "".join(c for c in norm(s, "NFKC") if unicodedata.category(c) != "Cf")
    w = strip(want)
    cands = {w, re.sub("[\u0600-\u06ff]+", lambda m: m.group(0)[::-1], w)}
    for who, cmd in runs:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        got = strip(p.stdout.decode("utf-8", "replace"))
        out(p.returncode == 0 and any(c in got for c in cands),
            "%s: %s's text extraction gives back %r" % (name, who, want), got[-300:])


def chk_fontset(name, inp, outp, page, nmin, names):
    """Issue 32: one appearance whose /Resources /Font has one entry per
    font used (each named by a Tf of the content, each a different font),
    every font a Type 0 font with a subset tag and exactly one embedded
    font program; the update adds exactly these fonts; NAMES (a|b|...)
    are substrings of the fonts' names, in the order of the resources."""
    objs, _, ann = annots(outp, page)
    out(len(ann) == 1, "%s: one stamp annotation on the page" % name, len(ann))
    ap = ann[-1][1].get("/AP", {})
    n = ap.get("/N")
    out(isinstance(n, str) and set(ap) == {"/N"}, "%s: one appearance (/AP /N, a single stream)" % name, ap)
    form = objs.get("obj:" + n, {}).get("stream", {}).get("dict", {})
    res = val(objs, form.get("/Resources")) or {}
    fonts = val(objs, res.get("/Font")) or {}
    keys = sorted(fonts, key=lambda k: int(k[2:]) if re.match(r"^/F\d+$", k) else 0)
    out(len(keys) >= nmin and keys == ["/F%d" % (i + 1) for i in range(len(keys))],
        "%s: /Resources /Font has /F1 ... /Fn, n >= %d" % (name, nmin), keys)
    data = qpdf(["--show-object=" + n, "--filtered-stream-data", outp]).decode("latin-1")
    used = sorted(set(re.findall(r"(/F\d+)\s+[\d.]+\s+Tf\b", data)), key=lambda k: int(k[2:]))
    out(used == keys, "%s: every font of the resources is used (Tf) and every Tf names one" % name,
        "Tf %s, resources %s" % (used, keys))
    bases, progs = [], []
    for k in keys:
        t0 = val(objs, fonts[k]) or {}
        base = t0.get("/BaseFont", "")
        desc = val(objs, (val(objs, t0.get("/DescendantFonts")) or [None])[0]) or {}
        fd = val(objs, desc.get("/FontDescriptor")) or {}
        ff = [x for x in ("/FontFile", "/FontFile2", "/FontFile3") if x in fd]
        out(t0.get("/Subtype") == "/Type0" and re.match(r"^/[A-Z]{6}\+", base) is not None and len(ff) == 1,
            "%s: %s is a Type 0 font with a subset tag and one font program (%s)" % (name, k, ff), (base, ff))
        bases.append(base[8:])
        progs.append(fd.get(ff[0]) if ff else None)
        if ff:
            prog = qpdf(["--show-object=" + fd[ff[0]], "--filtered-stream-data", outp])
            ok = prog[:4] in (b"\x00\x01\x00\x00", b"true", b"OTTO") or (ff[0] == "/FontFile3" and prog[:1] == b"\x01")
            out(ok, "%s: %s's font program decrypts to a TrueType/OpenType/CFF header" % (name, k), prog[:8])
    out(len(set(bases)) == len(bases) and len(set(progs)) == len(progs),
        "%s: one subset per font (no font twice)" % name, bases)
    if names:
        want = names.split("|")
        out(len(want) == len(bases) and all(w in b for w, b in zip(want, bases)),
            "%s: the fonts are %s, in that order" % (name, want), bases)
    nums = new_objects(inp, outp)
    vals = [(x, val(objs, "%d 0 R" % x)) for x in nums]
    t0s = [x for x, d in vals if isinstance(d, dict) and d.get("/Subtype") == "/Type0"]
    out(len(t0s) == len(keys), "%s: the update writes exactly these %d fonts" % (name, len(keys)), t0s)


def chk_image(name, outp, page, kind):
    """The PNG's opaque centre and transparent corners; the JPEG's colours."""
    objs, pg, ann = annots(outp, page)
    mbox = val(objs, pg.get("/MediaBox"))
    rect = ann[-1][1]["/Rect"]
    dpi = 100
    x0, y0, x1, y1 = to_px(rect, mbox, dpi)
    for who, path in render(outp, page, dpi, os.path.join(os.environ["T"], "im")).items():
        w, h, rows = read_png(path)
        px = lambda fx, fy: pixel(rows, int(x0 + (x1 - x0) * fx), int(y0 + (y1 - y0) * fy))
        if kind == "png":
            c = px(0.5, 0.5)
            out(near(c, (0, 200, 0), 30), "%s: %s shows the PNG's opaque centre" % (name, who), c)
            corners = [px(fx, fy) for fx in (0.06, 0.94) for fy in (0.06, 0.94)]
            out(all(near(k, (255, 255, 255), 8) for k in corners),
                "%s: %s shows the page through the transparent corners" % (name, who), corners)
        else:
            l, r = px(0.25, 0.5), px(0.75, 0.5)
            out(near(l, (230, 120, 20), 40) and near(r, (20, 60, 220), 40),
                "%s: %s shows the JPEG's colours" % (name, who), (l, r))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        if cmd == "text":
            chk_text(args[0], args[1], int(args[2]), args[3], args[4] == "1")
        elif cmd == "pixels":
            chk_pixels(args[0], args[1], int(args[2]))
        elif cmd == "layout":
            chk_layout(args[0], args[1], int(args[2]))
        elif cmd == "objects":
            chk_objects(args[0], args[1], args[2], args[3], args[4] == "1")
        elif cmd == "appearance":
            chk_appearance(args[0], args[1], int(args[2]), args[3])
        elif cmd == "forms":
            chk_forms(args[0], args[1], args[2], int(args[3]), int(args[4]))
        elif cmd == "image":
            chk_image(args[0], args[1], int(args[2]), args[3])
        elif cmd == "mixedtext":
            chk_mixed_text(args[0], args[1], int(args[2]), args[3])
        elif cmd == "fontset":
            chk_fontset(args[0], args[1], args[2], int(args[3]), int(args[4]), args[5])
        elif cmd == "mkpng":
            # 64x48 RGBA: opaque green centre, transparent corners
            w, h = 64, 48
            raw = b""
            for y in range(h):
                raw += b"\0"
                for x in range(w):
                    corner = (x < 16 or x >= 48) and (y < 12 or y >= 36)
                    raw += bytes((0, 200, 0, 0 if corner else 255))
            chunk = lambda t, b: struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b))
            png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)) + \
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
            open(args[0], "wb").write(png)
            # the same with huge dimensions (a valid CRC, no pixels behind it)
            big = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 6, 0, 0, 0)) + \
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
            open(args[1], "wb").write(big)
            out(True, "made a 64x48 RGBA PNG with transparent corners, and one that claims 100000x100000")
        elif cmd == "mkppm":
            # 80x40: orange left half, blue right half
            w, h = 80, 40
            px = b"".join(bytes((230, 120, 20)) if x < w // 2 else bytes((20, 60, 220)) for y in range(h) for x in range(w))
            open(args[0], "wb").write(b"P6\n%d %d\n255\n" % (w, h) + px)
            out(True, "made an 80x40 RGB picture for cjpeg")
        elif cmd == "budget":
            d = json.loads(open(args[1]).read())
            out(d["bytes_appended"] <= int(args[2]), "%s: %d bytes appended (<= %s)" % (args[0], d["bytes_appended"], args[2]))
        else:
            out(False, "unknown check " + cmd)
    except Exception as e:
        import traceback
        out(False, "%s: checker %s" % (args[0] if args else "?", cmd), traceback.format_exc()[-500:])


main()
PY

export PW UPW T
uc() { checker_feed "$C" "$@"; }

# stamp NAME IN OUT TEXT [OPTIONS...]: stamp page 1 of IN into OUT, --json in $T/NAME.json
stamp() {
	local name=$1 in=$2 o=$3 text=$4
	shift 4
	[ -n "$text" ] && set -- --text "$text" "$@"
	run "$PDFSTAMP" stamp --json --password-file "$UPW" --color "$COLOR" --date 2026-12-01T10:00:00Z \
		"$@" -o "$o" "$in"
	check_status 0 "$name: stamp"
	cp "$T/out" "$T/$name.json"
}

# ===========================================================================
# Part 1: scripts
# ===========================================================================
TWO=$'Geprüft\nQA – Team Ω'
while IFS='|' read -r name text embedded arabic; do
	o=$T/$name.pdf
	[ "$name" = two-lines ] && text=$TWO
	stamp "$name" "$F2" "$o" "$text"
	[ "$RC" = 0 ] || continue
	uc text "$name" "$o" 1 "$text" "$arabic"
	uc pixels "$name" "$o" 1
	uc layout "$name" "$o" 1
	uc objects "$name" "$F2" "$o" "$text" "$embedded"
	uc appearance "$name" "$o" 1 "BT,Tf,ET,re,S"
	if [ "$embedded" = 1 ]; then
		pdffonts -upw "$PW" "$o" >"$T/pf.txt" 2>&1
		check_grep '^[A-Z]{6}\+[^ ]+ +CID (TrueType|Type 0C?).* yes +yes +yes' "$T/pf.txt" \
			"$name: pdffonts lists the font embedded and subset (emb yes, sub yes, a subset tag)"
	fi
	if [ "$name" = cjk ]; then
		uc budget "$name" "$T/$name.json" 65536
	fi
	if [ "$name" = latin ]; then
		# the same text without a font module choice: Latin-1 costs what it did
		uc budget "$name" "$T/$name.json" 1600
	fi
done <<'EOF'
latin|Genehmigt ÄÖÜ|0|0
cyrillic|Одобрено|1|0
greek|Εγκρίθηκε|1|0
cjk|承認済み|1|0
arabic|موافق عليه|1|1
devanagari|स्वीकृत|1|0
two-lines|-|1|0
EOF

# the text in a font given by family and by file
run "$PDFSTAMP" stamp --password-file "$UPW" --text 'Одобрено' --font 'DejaVu Sans' -o "$T/fam.pdf" "$F2"
check_status 0 "--font FAMILY"
pdffonts -upw "$PW" "$T/fam.pdf" >"$T/pf.txt" 2>&1
check_grep '^[A-Z]{6}\+DejaVuSans' "$T/pf.txt" "--font 'DejaVu Sans': that font is embedded"
FONTFILE=$(fc-match -f '%{file}' 'DejaVu Sans' 2>/dev/null)
if [ -f "$FONTFILE" ]; then
	run "$PDFSTAMP" stamp --password-file "$UPW" --text 'Latin, embedded' --font "$FONTFILE" -o "$T/file.pdf" "$F2"
	check_status 0 "--font FILE"
	pdffonts -upw "$PW" "$T/file.pdf" >"$T/pf.txt" 2>&1
	check_grep '^[A-Z]{6}\+DejaVuSans.* yes +yes +yes' "$T/pf.txt" "--font FILE: that font is embedded even for Latin text"
else
	skip "--font FILE: fc-match finds no DejaVu Sans file"
fi

# ---------------------------------------------------------------------------
# Mixed scripts (issue 32): a set of fonts, fontconfig's fallback per
# character, one subset per font, all in one appearance
# ---------------------------------------------------------------------------
MIX='承認 / موافق / स्वीकृत / Approved'
stamp mixed "$F3" "$T/mixed.pdf" "$MIX"
if [ "$RC" = 0 ]; then
	uc mixedtext "mixed scripts" "$T/mixed.pdf" 1 "$MIX"
	uc fontset "mixed scripts" "$F3" "$T/mixed.pdf" 1 3 ''
	uc pixels "mixed scripts" "$T/mixed.pdf" 1
	uc layout "mixed scripts" "$T/mixed.pdf" 1
	pdffonts -upw "$PW" "$T/mixed.pdf" >"$T/pf.txt" 2>&1
	n=$(grep -cE '^[A-Z]{6}\+[^ ]+ +CID (TrueType|Type 0C?).* yes +yes +yes' "$T/pf.txt")
	check_true test "$n" -ge 3 "mixed scripts: pdffonts lists at least three fonts, embedded and subset ($n)"
	check_grep '^[A-Z]{6}\+NotoSansCJK' "$T/pf.txt" "mixed scripts: the Han in Noto Sans CJK"
	check_grep '^[A-Z]{6}\+NotoSansDevanagari' "$T/pf.txt" "mixed scripts: the Devanagari in Noto Sans Devanagari"
fi
# a text per page ({page}): every page's appearance names the same fonts,
# written once
stamp mixed-pages "$F3" "$T/mixed-pages.pdf" "$MIX {page}" --page all
if [ "$RC" = 0 ]; then
	for pg in 1 3; do
		uc mixedtext "mixed scripts per page, page $pg" "$T/mixed-pages.pdf" $pg "$MIX $pg"
		uc fontset "mixed scripts per page, page $pg" "$F3" "$T/mixed-pages.pdf" $pg 3 ''
	done
fi
# --font repeated: a fallback list in order, installed fonts for the rest
stamp fontlist "$F2" "$T/fontlist.pdf" 'Approved स्वीकृत 承認' --font 'DejaVu Sans' --font 'Noto Sans Devanagari'
if [ "$RC" = 0 ]; then
	uc mixedtext "--font twice" "$T/fontlist.pdf" 1 'Approved स्वीकृत 承認'
	uc fontset "--font twice" "$F2" "$T/fontlist.pdf" 1 3 'DejaVuSans|NotoSansDevanagari|NotoSansCJK'
fi
# the issue's example: the date line's digits from a fallback font; and
# the same font given for text it has none of is not embedded
if fc-list : family | grep -q 'Noto Sans Egyptian Hieroglyphs'; then
	stamp unused "$F2" "$T/unused.pdf" '承認' --font 'Noto Sans Egyptian Hieroglyphs'
	[ "$RC" = 0 ] && uc fontset "--font that lacks every character" "$F2" "$T/unused.pdf" 1 1 'NotoSansCJK'

	stamp hiero "$F2" "$T/hiero.pdf" '𓀀' --font 'Noto Sans Egyptian Hieroglyphs'
	if [ "$RC" = 0 ]; then
		uc fontset "hieroglyph" "$F2" "$T/hiero.pdf" 1 2 'NotoSansEgyptianHieroglyphs|'
		uc mixedtext "hieroglyph" "$T/hiero.pdf" 1 '𓀀'
		uc mixedtext "hieroglyph, the date line" "$T/hiero.pdf" 1 '2026-12-01 10:00'
	fi
else
	skip "Noto Sans Egyptian Hieroglyphs (fonts-noto-core) is not installed"
fi
# a character no installed font has (private use): refused before anything
# is written, naming the first one as U+XXXX and itself, and the fonts tried
cp "$F2" "$T/victim.pdf"
run "$PDFSTAMP" stamp -i --password-file "$UPW" --text "$MIX "$'\xee\x80\x80 \xee\x80\x81' "$T/victim.pdf"
check_status 2 "U+E000: refused"
check_grep "no installed font covers U\+E000 '"$'\xee\x80\x80'"'" "$T/err" "U+E000: the message names U+E000 and the character"
check_true cmp -s "$F2" "$T/victim.pdf" "U+E000: the file is unchanged"
printf 'this is not a font\n' >"$T/notafont.ttf"
run "$PDFSTAMP" stamp -i --password-file "$UPW" --font 'DejaVu Sans' --font "$T/notafont.ttf" --text 'ok' "$T/victim.pdf"
check_status 4 "a text file as the second --font: refused as malformed"
run "$PDFSTAMP" stamp -i --password-file "$UPW" --font 'DejaVu Sans' --font 'Noto Sans' --text "a"$'\xee\x80\x80' "$T/victim.pdf"
check_status 2 "U+E000 with --font twice: refused"
check_grep "no font covers U\+E000 .*tried 'DejaVu Sans', 'Noto Sans', then every installed font" "$T/err" \
	"U+E000 with --font twice: the message names the fonts tried"
check_true cmp -s "$F2" "$T/victim.pdf" "U+E000 with --font twice: the file is unchanged"

# pdf.js lists the annotation (tests/e2e/pdfjs.sh)
PDFJS=${PDFJS:-/usr/share/javascript/pdf/build/pdf.js}
if command -v node >/dev/null 2>&1 && [ -f "$PDFJS" ]; then
	for name in cyrillic cjk arabic devanagari two-lines mixed; do
		node "$TOP_SRCDIR/tests/e2e/fixtures/pdfjs-check.js" "$T/$name.pdf" "$PW" 1 >"$T/pj.json" 2>"$T/pj.err"
		check_eq "$(jget "$T/pj.json" '[(a["subtype"], a["hasAppearance"]) for a in d["annots"]]')" \
			'[["Stamp", true]]' "$name: pdf.js lists the stamp with its appearance"
	done
else
	skip "pdf.js (node and libjs-pdf) is not installed"
fi

# ===========================================================================
# Part 2: sharing and budgets
# ===========================================================================
pages=()
for k in $(seq 1 20); do pages+=("$TOP_SRCDIR/samples/plain-3page.pdf"); done
qpdf --empty --pages "${pages[@]}" -- "$T/p60-plain.pdf"
qpdf --encrypt "$PW" 'owner pw' 256 -- "$T/p60-plain.pdf" "$T/p60.pdf"
run "$PDFSTAMP" stamp --json --page all --password-file "$UPW" --text '承認済み' -o "$T/p60-cjk.pdf" "$T/p60.pdf"
check_status 0 "--page all on 60 pages, CJK"
check_eq "$(jget "$T/out" 'len(d["objects"])')" 60 "--page all: the JSON lists all 60 annotations"
uc forms "--page all (60 pages)" "$T/p60.pdf" "$T/p60-cjk.pdf" 1 1
uc budget "--page all (60 pages, CJK)" "$T/out" 65536
run "$PDFSTAMP" stamp --json --page all --password-file "$UPW" -o "$T/p60-lat.pdf" "$T/p60.pdf"
check_status 0 "--page all on 60 pages, Latin"
uc forms "--page all (60 pages, Latin)" "$T/p60.pdf" "$T/p60-lat.pdf" 1 1
uc text "--page all, page 60" "$T/p60-cjk.pdf" 60 '承認済み' 0
# one appearance per (size, rotation): six pages of one size turned by
# 0, 90, 180, 270, 90 and 0 degrees share four forms
qpdf --empty --pages "$TOP_SRCDIR/samples/plain-3page.pdf" "$TOP_SRCDIR/samples/plain-3page.pdf" -- "$T/p6-plain.pdf"
qpdf "$T/p6-plain.pdf" --rotate=+90:2,5 --rotate=+180:3 --rotate=+270:4 "$T/p6-rot.pdf"
qpdf --encrypt "$PW" 'owner pw' 256 -- "$T/p6-rot.pdf" "$T/p6.pdf"
run "$PDFSTAMP" stamp --page all --password-file "$UPW" --text 'Одобрено' -o "$T/p6-out.pdf" "$T/p6.pdf"
check_status 0 "--page all on pages turned four ways"
uc forms "--page all (four rotations)" "$T/p6.pdf" "$T/p6-out.pdf" 4 1
for k in 2 3 4; do
	uc text "--page all, turned page $k" "$T/p6-out.pdf" "$k" 'Одобрено' 0
done

# a long text in a small --rect is reduced to fit, never clipped
run "$PDFSTAMP" stamp --password-file "$UPW" --rect 300,300,400,340 --text "$TWO, a longer line that must shrink" \
	-o "$T/small-rect.pdf" "$F2"
check_status 0 "a long text in a small --rect"
[ "$RC" = 0 ] && uc layout "small --rect" "$T/small-rect.pdf" 1

# ===========================================================================
# Part 3: images
# ===========================================================================
uc mkpng "$T/seal.png" "$T/huge.png"
stamp png "$F2" "$T/png.pdf" '' --image "$T/seal.png"
[ "$RC" = 0 ] && uc image png "$T/png.pdf" 1 png
[ "$RC" = 0 ] && uc appearance png "$T/png.pdf" 1 "Do,cm"
run "$PDFSTAMP" stamp --password-file "$UPW" --image "$T/seal.png" --text 'Geprüft' --color "$COLOR" -o "$T/png-text.pdf" "$F2"
check_status 0 "png + text: stamp"
[ "$RC" = 0 ] && uc appearance "png + text" "$T/png-text.pdf" 1 "Do,BT,Tf,ET"
[ "$RC" = 0 ] && uc text "png + text" "$T/png-text.pdf" 1 'Geprüft' 0
if command -v cjpeg >/dev/null 2>&1; then
	uc mkppm "$T/photo.ppm"
	cjpeg -quality 95 "$T/photo.ppm" >"$T/photo.jpg"
	stamp jpeg "$F2" "$T/jpeg.pdf" '' --image "$T/photo.jpg"
	[ "$RC" = 0 ] && uc image jpeg "$T/jpeg.pdf" 1 jpeg
	head -c 300 "$T/photo.jpg" >"$T/trunc.jpg"
else
	skip "RGB JPEG: cjpeg (libjpeg-turbo-progs) is not installed"
	printf '\377\330\377\340\000\020JFIF\000' >"$T/trunc.jpg"
fi

# ===========================================================================
# Part 4: hostile fonts and images: a clear error, nothing written
# ===========================================================================
head -c 100 "$T/seal.png" >"$T/trunc.png"
printf 'this is not an image\n' >"$T/text.png"
printf 'this is not a font\n' >"$T/text.ttf"
while IFS='|' read -r what opt arg; do
	cp "$F2" "$T/victim.pdf"
	rm -f "$T/never.pdf"
	run "$PDFSTAMP" stamp --password-file "$UPW" $opt "$arg" -o "$T/never.pdf" "$T/victim.pdf"
	if [ "$RC" = 2 ] || [ "$RC" = 4 ]; then ok "$what: refused (exit $RC)"; else fail "$what: refused with exit 2 or 4" "exit $RC: $(cat "$T/err")"; fi
	check_grep '^pdfstamp: .+' "$T/err" "$what: a message says why"
	check_true test ! -e "$T/never.pdf" "$what: no output file"
	run "$PDFSTAMP" stamp --password-file "$UPW" $opt "$arg" -i "$T/victim.pdf"
	check_true cmp -s "$F2" "$T/victim.pdf" "$what: -i leaves the input byte-identical"
done <<EOF
truncated PNG|--image|$T/trunc.png
truncated JPEG|--image|$T/trunc.jpg
PNG of 100000 x 100000 pixels|--image|$T/huge.png
a text file as --image|--image|$T/text.png
a text file as --font|--font|$T/text.ttf
a missing image file|--image|$T/nonexistent.png
an unknown font family|--font|No Such Family Xyz
EOF
run "$PDFSTAMP" stamp --password-file "$UPW" --text 'Գ ᚠ '$'\xee\x80\x80' --font 'DejaVu Sans' -o "$T/never.pdf" "$F2"
check_status 2 "--font with a family that lacks characters no installed font has either"
check_true test ! -e "$T/never.pdf" "a character no font has: no output file"

# the page walk (stamp.c note 1): a DAG of 40 shared levels (2^40 leaves)
# under a lying /Count is refused at once, not walked for hours
python3 - "$T/dag.pdf" <<'PYEOF'
import sys
objs = [b"<< /Type /Catalog /Pages 2 0 R >>"]
objs += [b"<< /Type /Pages /Kids [%d 0 R %d 0 R] /Count 1000000000000 /MediaBox [0 0 612 792] >>" % (k + 3, k + 3)
         for k in range(40)]
objs += [b"<< /Type /Page /Parent 2 0 R >>"]
out, offs = bytearray(b"%PDF-1.7\n"), []
for n, body in enumerate(objs, 1):
    offs.append(len(out))
    out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
x = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offs)
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
open(sys.argv[1], "wb").write(out)
PYEOF
for pg in last all; do
	rm -f "$T/never.pdf"
	run timeout 20 "$PDFSTAMP" stamp --page "$pg" -o "$T/never.pdf" "$T/dag.pdf"
	check_status 4 "--page $pg on a page-tree DAG with a lying /Count: refused quickly"
	check_true test ! -e "$T/never.pdf" "--page $pg on a page-tree DAG: no output file"
done

# src/extlib.c: HarfBuzz, fontconfig, FriBidi and libspng are opened only
# when a stamp needs them (LD_DEBUG=files: every object the dynamic linker
# loads, and who asked); one that cannot be loaded fails that stamp alone,
# exit 1, naming it, with nothing written
run env LD_DEBUG=files "$PDFSTAMP" stamp --password-file "$UPW" --text 'Approved' -o "$T/lazy-lat.pdf" "$F2"
check_status 0 "lazy libraries: a Latin stamp"
check_grep 'file=libpdfstamp\.so\.0' "$T/err" "lazy libraries: LD_DEBUG=files lists what is loaded"
check_no_grep 'file=lib(harfbuzz|harfbuzz-subset|fontconfig|fribidi|spng|glib-2\.0|freetype)\.so' "$T/err" \
	"lazy libraries: a Latin stamp loads none of them (nor GLib, FreeType)"
run env LD_DEBUG=files "$PDFSTAMP" stamp --password-file "$UPW" --text 'Одобрено' -o "$T/lazy-cyr.pdf" "$F2"
check_status 0 "lazy libraries: a Cyrillic stamp"
for so in libharfbuzz libharfbuzz-subset libfontconfig libfribidi; do
	check_grep "file=$so\\.so\\.[0-9]+ .*dynamically loaded by .*libpdfstamp" "$T/err" \
		"lazy libraries: a Cyrillic stamp opens $so"
done
check_no_grep 'file=libspng' "$T/err" "lazy libraries: a stamp without a PNG does not open libspng"
run env LD_DEBUG=files "$PDFSTAMP" stamp --password-file "$UPW" --image "$T/seal.png" -o "$T/lazy-png.pdf" "$F2"
check_status 0 "lazy libraries: a PNG stamp"
check_grep 'file=libspng\.so\.[0-9]+ .*dynamically loaded' "$T/err" "lazy libraries: a PNG stamp opens libspng"
mkdir -p "$T/badlib"
for so in libspng.so.0 libharfbuzz.so.0; do
	printf 'not a shared object\n' >"$T/badlib/$so"
done
BADENV=(env "LD_LIBRARY_PATH=$T/badlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
cp "$F2" "$T/keep.pdf"
run "${BADENV[@]}" "$PDFSTAMP" stamp -i --password-file "$UPW" --image "$T/seal.png" "$T/keep.pdf"
check_status 1 "lazy libraries: a PNG stamp when libspng cannot be loaded"
check_grep 'a PNG image needs a library that is not available: libspng\.so\.0 cannot be loaded' "$T/err" \
	"lazy libraries: the message names libspng"
check_true cmp -s "$F2" "$T/keep.pdf" "lazy libraries: the file is unchanged"
run "${BADENV[@]}" "$PDFSTAMP" stamp --password-file "$UPW" --text 'Одобрено' -o "$T/never-cyr.pdf" "$F2"
check_status 1 "lazy libraries: a Cyrillic stamp when HarfBuzz cannot be loaded"
check_grep 'text in an embedded font needs a library that is not available: libharfbuzz\.so\.0' "$T/err" \
	"lazy libraries: the message names HarfBuzz"
check_true test ! -e "$T/never-cyr.pdf" "lazy libraries: no output file"
run "${BADENV[@]}" "$PDFSTAMP" stamp -i --password-file "$UPW" --text 'Approved' "$T/keep.pdf"
check_status 0 "lazy libraries: a Latin stamp needs neither"

finish
