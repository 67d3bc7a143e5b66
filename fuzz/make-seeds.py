#!/usr/bin/env python3
"""fuzz/make-seeds.py SRCDIR OUTDIR - seed corpora for the libFuzzer targets.

Writes OUTDIR/<target>/<name> for every target in fuzz/ from the files in
SRCDIR/samples/ and SRCDIR/tests/malformed/, plus a few hand-made inputs
that reach the deeper branches quickly:
  fuzz_xref, fuzz_incr  whole files (samples and the malformed corpus)
  fuzz_parse            every "N G obj ... endobj" cut out of those files,
                        and syntax snippets
  fuzz_security         the /Encrypt parameters of the encrypted samples
                        in the layout fuzz_security.c documents, with their
                        passwords (and round-trip variants)
  fuzz_objstm           object-stream contents in fuzz_objstm.c's layout
  fuzz_xmp              XMP packets in the styles of Adobe, Acrobat 5 and
                        others (and refused ones), in fuzz_xmp.c's layout
  fuzz_image            the test images of tests/e2e/fixtures/images.py
                        and the hostile ones of tests/malformed/images/
  fuzz_font             the font files of tests/malformed/fonts/ (small
                        subsets of real fonts and damaged ones)
Deterministic; needs only python3.
"""
import hashlib
import os
import re
import struct
import sys
import zlib


def main():
    src, out = sys.argv[1], sys.argv[2]
    seeds = {t: {} for t in ("fuzz_parse", "fuzz_xref", "fuzz_security", "fuzz_objstm", "fuzz_incr", "fuzz_xmp",
                                "fuzz_image", "fuzz_font")}

    def add(target, data, name=None):
        name = name or hashlib.sha1(data).hexdigest()[:16]
        seeds[target][name] = data

    files = []
    for d in ("samples", "tests/malformed"):
        p = os.path.join(src, d)
        if os.path.isdir(p):
            files += [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith(".pdf")]
    for f in files:
        data = open(f, "rb").read()
        if len(data) > 1 << 20:
            continue
        base = os.path.basename(os.path.dirname(f)) + "-" + os.path.basename(f)
        add("fuzz_xref", data, base)
        add("fuzz_incr", data, base)
        for m in re.finditer(rb"\d+ \d+ obj\b.*?endobj", data, re.S):
            add("fuzz_parse", m.group(0)[:65536])

    for s in (b"<< /A [1 2.5 -3 +4 .5 -.002] /B (a\\(b\\)c\\n\\101) /C <48656c6c6f> /D#20x true >>",
              b"[ null false 1 0 R 12 65535 R /Name#23 (\\\n) ]", b"1 0 obj << /Length 5 >> stream\r\nhello\nendstream endobj",
              b"7 0 obj 42 endobj", b"%comment\n<< /K << /K << /K [ [ [ ] ] ] >> >> >>",
              b"(\xfe\xff\x00A\x00B)", b"<< /Type /Page /Rect [0 0 612.0 792] /Dup 1 /Dup 2 >>",
              b"[" * 70 + b"]" * 70, b"/" + b"x" * 300, b"(" + b"\\" * 9 + b")"):
        add("fuzz_parse", s)

    pws = {"r6-table.pdf": (b"sample-user", b"sample-owner"), "r6-objstm.pdf": (b"sample-user", b"sample-owner"),
           "r5-table.pdf": (b"sample-user", b"sample-owner"), "r6-empty-user.pdf": (b"", b"sample-owner")}
    for name, (upw, opw) in pws.items():
        p = os.path.join(src, "samples", name)
        if not os.path.exists(p):
            continue
        data = open(p, "rb").read()
        enc = re.search(rb"<<[^\n]*/Filter /Standard[^\n]*>>", data)
        if not enc:
            continue
        d = enc.group(0)

        def hexval(key, n):
            m = re.search(rb"/" + key + rb" <([0-9a-fA-F]*)>", d)
            v = bytes.fromhex(m.group(1).decode()) if m else b""
            return (v + b"\0" * n)[:n]
        r = int(re.search(rb"/R (\d+)", d).group(1))
        p_ = int(re.search(rb"/P (-?\d+)", d).group(1))
        em = 0 if b"/EncryptMetadata false" in d else 8
        flags = (0 if r == 6 else 4) | em
        body = struct.pack(">i", p_) + hexval(b"O", 48) + hexval(b"U", 48) + hexval(b"OE", 32) + \
            hexval(b"UE", 32) + hexval(b"Perms", 16)
        add("fuzz_security", bytes([flags]) + body + upw, name + "-user")
        add("fuzz_security", bytes([flags]) + body + opw, name + "-owner")
        add("fuzz_security", bytes([flags]) + body + b"wrong", name + "-wrong")
        add("fuzz_security", bytes([flags | 0x80]) + body + upw + b"\0" + opw, name + "-make")
    add("fuzz_security", bytes([0x80]) + b"\xff\xff\xff\xfc" + b"\x11" * 176 + "pässwörd\0Ωmega".encode(), "make-utf8")

    def objstm(members, flate=False, n=None, first=None, drop_n=False):
        hdr = b""
        body = b""
        offs = []
        for num, text in members:
            offs.append((num, len(body)))
            body += text + b"\n"
        hdr = b" ".join(b"%d %d" % o for o in offs) + b"\n"
        f = len(hdr) if first is None else first
        nn = len(members) if n is None else n
        flags = (nn & 0x1f) | (0x20 if drop_n else 0) | (0x40 if flate else 0)
        return bytes([flags, f >> 8, f & 0xff]) + hdr + body
    members = [(5, b"<< /Type /Annot /Subtype /Text >>"), (6, b"[1 2 3 (x)]"), (7, b"42"), (8, b"/Name"),
               (9, b"<< /Nested << /Deep [ 5 0 R ] >> >>"), (10, b"(string)"), (11, b"3.14"), (12, b"null")]
    add("fuzz_objstm", objstm(members), "eight")
    add("fuzz_objstm", objstm(members, flate=True), "eight-flate")
    add("fuzz_objstm", objstm(members[:2], n=31), "wrong-n")
    add("fuzz_objstm", objstm(members[:3], first=2), "wrong-first")
    add("fuzz_objstm", objstm(members[:3], drop_n=True), "no-n")
    add("fuzz_objstm", objstm([(3, b"<< /Type /ObjStm >>"), (5, b"3 0 R")]), "self")

    # fuzz_xmp: [touch, remove] value NUL custom-key NUL packet
    rdf = b"http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    head = b"<?xpacket begin='\xef\xbb\xbf' id='W5M0MpCehiHzreSzNTczkc9d'?>\n<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n"
    tail = b"</x:xmpmeta>\n" + b" " * 64 + b"\n<?xpacket end='w'?>"
    packets = {
        "elements": head + b"<rdf:RDF xmlns:rdf='" + rdf + b"'><rdf:Description rdf:about=''"
        b" xmlns:dc='http://purl.org/dc/elements/1.1/' xmlns:xmp='http://ns.adobe.com/xap/1.0/'"
        b" xmlns:pdf='http://ns.adobe.com/pdf/1.3/'>\n"
        b"<dc:title><rdf:Alt><rdf:li xml:lang='x-default'>Old &amp; title</rdf:li>"
        b"<rdf:li xml:lang='fr'>Titre</rdf:li></rdf:Alt></dc:title>\n"
        b"<dc:creator><rdf:Seq><rdf:li>A</rdf:li><rdf:li>B</rdf:li></rdf:Seq></dc:creator>\n"
        b"<!-- <dc:title> in a comment --><xmp:ModifyDate>2001-01-01T00:00:00Z</xmp:ModifyDate>\n"
        b"<pdf:Producer><![CDATA[cdata <producer>]]></pdf:Producer>\n"
        b"</rdf:Description></rdf:RDF>\n" + tail,
        "attributes": head + b"<rdf:RDF xmlns:rdf='" + rdf + b"'>"
        b"<rdf:Description rdf:about='u' xmlns:pdf='http://ns.adobe.com/pdf/1.3/' pdf:Keywords='k&#38;k'"
        b" pdf:Producer=\"P\"/>\n<rdf:Description rdf:about='u' xmlns:xap='http://ns.adobe.com/xap/1.0/'"
        b" xap:CreatorTool='tool'/></rdf:RDF>\n" + tail,
        "no-description": head + b"<rdf:RDF xmlns:rdf='" + rdf + b"'></rdf:RDF>\n" + tail,
        "duplicates": head + b"<rdf:RDF xmlns:rdf='" + rdf + b"'><rdf:Description xmlns:pdf='http://ns.adobe.com/pdf/1.3/'>"
        b"<pdf:Keywords>a</pdf:Keywords><pdf:Keywords>b</pdf:Keywords></rdf:Description>"
        b"<rdf:Description xmlns:p2='http://ns.adobe.com/pdf/1.3/' p2:Keywords='c'/></rdf:RDF>" + tail,
        "doctype": b"<!DOCTYPE x [<!ENTITY e 'x'>]>" + head + b"<rdf:RDF xmlns:rdf='" + rdf + b"'/>" + tail,
        "utf16": b"\xfe\xff\x00<\x00?",
        "empty": b"",
    }
    for name, pkt in packets.items():
        add("fuzz_xmp", b"\xff\x00" + "caf\u00e9 & <b>".encode() + b"\0Department\0" + pkt, "set-" + name)
        add("fuzz_xmp", b"\x7f\x2a" + b"v\0Custom\0" + pkt, "remove-" + name)

    # fuzz_image: the valid test images of tests/e2e/fixtures/images.py and
    # the hostile ones of tests/malformed/images/
    sys.path.insert(0, os.path.join(src, "tests", "e2e", "fixtures"))
    import images
    for name, data in images.valid().items():
        add("fuzz_image", data, "valid-" + name)
    p = os.path.join(src, "tests", "malformed", "images")
    if os.path.isdir(p):
        for f in sorted(os.listdir(p)):
            if f != "README":
                add("fuzz_image", open(os.path.join(p, f), "rb").read(), "hostile-" + f)

    # fuzz_font: the font corpus, as files (fuzz_font.c reads the text
    # choice from the input's length)
    p = os.path.join(src, "tests", "malformed", "fonts")
    for f in sorted(os.listdir(p)) if os.path.isdir(p) else []:
        if f.endswith((".ttf", ".otf", ".ttc")):
            add("fuzz_font", open(os.path.join(p, f), "rb").read(), f)

    for t, items in seeds.items():
        d = os.path.join(out, t)
        os.makedirs(d, exist_ok=True)
        for name, data in items.items():
            with open(os.path.join(d, name), "wb") as fh:
                fh.write(data)
    print("seeds: " + ", ".join("%s %d" % (t, len(v)) for t, v in seeds.items()))


if __name__ == "__main__":
    main()
