#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
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
  fuzz_tsp              the TimeStampResp files of tests/kat/tsp/ with
                        the hash and nonce of their queries (fuzz_tsp.c's
                        layout), and a rejection
  fuzz_audit            signed-looking files (signed_revisions): a
                        /ByteRange over the first revision, then incremental
                        updates that add an annotation, change page content
                        or add a /DSS (table and xref-stream sections,
                        approval and DocMDP signatures, plaintext and RC4
                        with the user password "user"), and the samples
Deterministic; needs only python3.
"""
import hashlib
import os
import re
import struct
import sys
import zlib


def d_is_sample(path):
    return os.path.basename(os.path.dirname(path)) == "samples"


# ---- fuzz_audit: signed-looking files with later revisions -----------------

PAD = bytes.fromhex("28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a")


def rc4(key, data):
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) & 255
        s[i], s[j] = s[j], s[i]
    out = bytearray()
    i = j = 0
    for b in data:
        i = (i + 1) & 255
        j = (j + s[i]) & 255
        s[i], s[j] = s[j], s[i]
        out.append(b ^ s[(s[i] + s[j]) & 255])
    return bytes(out)


class Rc4Handler:
    """ISO 32000-2 7.6.4 (Algorithms 1-4): /V 1 /R 2, a 40-bit RC4 key."""
    def __init__(self, upw, opw, fid, p=-4):
        pad = lambda pw: (pw + PAD)[:32]
        self.o = rc4(hashlib.md5(pad(opw)).digest()[:5], pad(upw))
        self.key = hashlib.md5(pad(upw) + self.o + struct.pack("<i", p) + fid).digest()[:5]
        self.u = rc4(self.key, PAD)
        self.p = p

    def obj(self, num, gen, data):
        k = hashlib.md5(self.key + struct.pack("<I", num)[:3] + struct.pack("<H", gen)).digest()[:10]
        return rc4(k, data)

    def dict(self):
        return b"<< /Filter /Standard /V 1 /R 2 /Length 40 /P %d /O <%s> /U <%s> >>" % (
            self.p, self.o.hex().encode(), self.u.hex().encode())


def signed_revisions():
    """Files whose signature's /ByteRange covers revision 1 exactly, and
    later revisions (fuzz_audit).  Object bodies may hold the markers
    STREAM(...) for a stream (encrypted under its number when the file
    is) and STR(...) for a string; the signature's /Contents is never
    encrypted (7.6.2)."""
    fid = hashlib.md5(b"pdfstamp fuzz_audit").digest()

    def body(num, text, sec):
        def s_(m):
            raw = m.group(1)
            return b"<" + (sec.obj(num, 0, raw) if sec else raw).hex().encode() + b">"
        text = re.sub(rb"STR\(([^)]*)\)", s_, text)
        m = re.match(rb"STREAM\((.*)\)(<<.*>>)?$", text, re.S)
        if m:
            data = m.group(1)
            if sec:
                data = sec.obj(num, 0, data)
            return b"<< /Length %d %s>>\nstream\n%s\nendstream" % (len(data), (m.group(2) or b"<<>>")[2:-2], data)
        return text

    def table(offs, start_first):
        x = b"xref\n"
        nums = sorted(offs)
        if start_first:
            x += b"0 1\n0000000000 65535 f \n"
        for n in nums:
            x += b"%d 1\n%010d 00000 n \n" % (n, offs[n])
        return x

    def xref_stream(offs, num, size, prev, trailer_extra, xoff):
        ents = dict(offs)
        ents[num] = xoff
        nums = sorted(ents)
        rows = b"".join(b"\x01" + struct.pack(">IH", ents[n], 0) for n in nums)
        index = b" ".join(b"%d 1" % n for n in nums)
        return b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Index [%s] /Prev %d /Root 1 0 R %s" \
            b"/Length %d >>\nstream\n%s\nendstream\nendobj\n" % (
                num, max(size, num + 1), index, prev, trailer_extra, len(rows), rows)

    def build(rev1, updates, sig_num=8, sec=None, xstm=False, br_skew=0):
        trailer_extra = b"/ID [<%s> <%s>] " % (fid.hex().encode(), fid.hex().encode())
        encnum = None
        if sec:
            encnum = 20  # above every object of the updates
            trailer_extra += b"/Encrypt %d 0 R " % encnum
        pdf = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        offs = {}
        objs = dict(rev1)
        if encnum:
            objs[encnum] = sec.dict()
        for n in sorted(objs):
            offs[n] = len(pdf)
            pdf += b"%d 0 obj\n" % n + (objs[n] if n == encnum else body(n, objs[n], sec)) + b"\nendobj\n"
        size = max(objs) + 1
        x = len(pdf)
        pdf += table(offs, True) + b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
            size, trailer_extra, x)
        # the signature's /ByteRange: everything of revision 1 but /Contents
        c = pdf.index(b"/Contents <", offs[sig_num]) + len(b"/Contents ")
        e = pdf.index(b">", c) + 1
        br = b"[0 %d %d %d]" % (c, e, len(pdf) - e + br_skew)
        ph = b"[0 0000000000 0000000000 0000000000]"
        i = pdf.index(ph, offs[sig_num])
        pdf[i:i + len(ph)] = br.ljust(len(ph))
        prev = x
        for up in updates:
            offs = {}
            for n in sorted(up):
                offs[n] = len(pdf)
                pdf += b"%d 0 obj\n" % n + body(n, up[n], sec) + b"\nendobj\n"
            size = max(size, max(up) + 1)
            xo = len(pdf)
            if xstm:
                pdf += xref_stream(offs, size, size + 1, prev, trailer_extra, xo)
                size += 1
            else:
                pdf += table(offs, False) + b"trailer\n<< /Size %d /Root 1 0 R /Prev %d %s>>\n" % (
                    size, prev, trailer_extra)
            pdf += b"startxref\n%d\n%%%%EOF\n" % xo
            prev = xo
        return bytes(pdf)

    def base(docmdp=0):
        perms = b"/Perms << /DocMDP 8 0 R >> " if docmdp else b""
        ref = (b"/Reference [<< /Type /SigRef /TransformMethod /DocMDP /TransformParams "
               b"<< /Type /TransformParams /P %d /V /1.2 >> >>] " % docmdp) if docmdp else b""
        return {
            1: b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [7 0 R] /SigFlags 3 >> " + perms + b">>",
            2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> /Annots [7 0 R] >>",
            4: b"STREAM(BT /F1 24 Tf 72 700 Td (Signed) Tj ET)",
            5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            6: b"<< /Producer STR(make-seeds.py) >>",
            7: b"<< /Type /Annot /Subtype /Widget /FT /Sig /T STR(Sig1) /F 132 /Rect [0 0 0 0] /P 3 0 R "
               b"/V 8 0 R >>",
            8: b"<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached "
               b"/ByteRange [0 0000000000 0000000000 0000000000] /Contents <" + b"30" + b"00" * 255 + b"> "
               + ref + b"/M STR(D:20240101000000Z) >>",
        }

    page_annot = {
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
           b"/Resources << /Font << /F1 5 0 R >> >> /Annots [7 0 R 9 0 R] >>",
        9: b"<< /Type /Annot /Subtype /Text /Rect [100 100 120 120] /P 3 0 R /Contents STR(note) >>",
    }
    annot_edit = {9: b"<< /Type /Annot /Subtype /Text /Rect [200 200 220 220] /P 3 0 R /Contents STR(moved) >>"}
    content = {4: b"STREAM(BT /F1 24 Tf 72 700 Td (Changed) Tj ET)"}
    def dss(docmdp=0):
        return {1: b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [7 0 R] /SigFlags 3 >> %s/DSS 10 0 R >>"
                % (b"/Perms << /DocMDP 8 0 R >> " if docmdp else b""),
                10: b"<< /Certs [11 0 R] >>", 11: b"STREAM(0\x82\x01\x00)"}
    rc4h = Rc4Handler(b"user", b"owner", fid)
    return {
        "approval-annot": build(base(), [page_annot]),
        "approval-annot-then-edit": build(base(), [page_annot, annot_edit]),
        "approval-content": build(base(), [content]),
        "approval-dss-xrefstream": build(base(), [dss()], xstm=True),
        "approval-annot-content-xrefstream": build(base(), [page_annot, content], xstm=True),
        "docmdp1-annot": build(base(1), [page_annot]),
        "docmdp2-dss": build(base(2), [dss(2)]),
        "docmdp3-annot": build(base(3), [page_annot]),
        "byterange-short": build(base(), [page_annot], br_skew=-7),
        "rc4-approval-annot": build(base(), [page_annot], sec=rc4h),
        "rc4-approval-content": build(base(), [content], sec=rc4h),
        "rc4-docmdp1-dss-xrefstream": build(base(1), [dss(1)], sec=rc4h, xstm=True),
    }


def main():
    src, out = sys.argv[1], sys.argv[2]
    seeds = {t: {} for t in ("fuzz_parse", "fuzz_xref", "fuzz_security", "fuzz_objstm", "fuzz_incr", "fuzz_xmp",
                                "fuzz_image", "fuzz_font", "fuzz_audit", "fuzz_envelope", "fuzz_tsp")}

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
        if d_is_sample(f):
            add("fuzz_audit", data, base)
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

    for name, data in signed_revisions().items():
        add("fuzz_audit", data, name)

    # fuzz_envelope: the /Recipients envelopes of tests/kat/env/ (openssl
    # cms, PDFBox 2, iText 5; the fuzz-*.der ones for the target's key)
    p = os.path.join(src, "tests", "kat", "env")
    for f in sorted(os.listdir(p)) if os.path.isdir(p) else []:
        if f.endswith(".der") and not f.startswith("r3-"):
            add("fuzz_envelope", open(os.path.join(p, f), "rb").read(), f)

    # fuzz_tsp: the replies of `openssl ts -reply` in tests/kat/tsp/
    # (make-tsp.sh) with the hash and nonce of their queries, in
    # fuzz_tsp.c's layout [flags][hash, 64 bytes][nonce, 16 bytes][reply]:
    # each as is and with the CA flag (both reach the success path), with
    # another nonce and with another hash (refused); the rejection; a token
    # whose ESS attribute names the TSA and the CA (accepted, with the CA
    # file), and one without a nonce (refused).
    p = os.path.join(src, "tests", "kat", "tsp")
    nonce = bytes([0x42]) + bytes(range(1, 16))
    for i, bits in enumerate((256, 384, 512)):
        f = os.path.join(p, "reply-sha%d.der" % bits)
        if not os.path.exists(f):
            continue
        reply = open(f, "rb").read()
        h = hashlib.new("sha%d" % bits, b"pdfstamp fuzz_tsp %d" % bits).digest().ljust(64, b"\0")
        add("fuzz_tsp", bytes([i]) + h + nonce + reply, "sha%d" % bits)
        add("fuzz_tsp", bytes([4 | i]) + h + nonce + reply, "sha%d-ca" % bits)
        add("fuzz_tsp", bytes([i]) + h + nonce[:15] + b"\x00" + reply, "sha%d-other-nonce" % bits)
        add("fuzz_tsp", bytes([(i + 1) % 3]) + h + nonce + reply, "sha%d-other-hash" % bits)
    h = hashlib.sha256(b"pdfstamp fuzz_tsp 256").digest().ljust(64, b"\0")
    for f, name, head in (("reply-reject.der", "reject", bytes([0]) + bytes(64) + nonce),
                          ("reply-ess-chain.der", "ess-chain", bytes([4]) + h + nonce),
                          ("reply-no-nonce.der", "no-nonce", bytes([0]) + h + nonce)):
        f = os.path.join(p, f)
        if os.path.exists(f):
            add("fuzz_tsp", head + open(f, "rb").read(), name)

    for t, items in seeds.items():
        d = os.path.join(out, t)
        os.makedirs(d, exist_ok=True)
        for name, data in items.items():
            with open(os.path.join(d, name), "wb") as fh:
                fh.write(data)
    print("seeds: " + ", ".join("%s %d" % (t, len(v)) for t, v in seeds.items()))


if __name__ == "__main__":
    main()
