#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/malformed/make-corpus.py [OUTDIR] - regenerates the hostile-input corpus.

Builds two valid bases and derives every file of INDEX from them:
  plain  a 2-page plaintext PDF written byte by byte here (classic table)
  r6     the same, encrypted by qpdf with AES-256 /R 6 (user password
         "user", owner "owner"), re-serialised here with a fresh table
  ostm   a plaintext variant whose catalog, page tree and first page live
         in an object stream, indexed by an uncompressed xref stream
         written here (so /W, /Index, /N and /First can be bent at will)
Each derived file is written to OUTDIR (default: this directory) and listed
in OUTDIR/INDEX as

    NAME <TAB> INFO-EXIT <TAB> STAMP-EXIT <TAB> PASSWORD <TAB> DESCRIPTION

where the exits are pdfstamp(1)'s documented statuses (0 ok, 3 wrong
password, 4 malformed or unsupported) for `pdfstamp info --json` and
`pdfstamp stamp -o OUT` with the password PASSWORD ("user" or "wrong"; "none"
for plaintext files, which get no password option: writers refuse to write
to a file that is not encrypted when a password was given).
Reading is lazy: `info` reports the page count from /Count and never walks
the page tree, so a cycle there is found (exit 4) when `stamp` looks for
page 1; long /O /U /UE /OE /Perms are truncated (as qpdf does), short ones
are malformed.  A leading "xfail:" on an exit marks a known library bug in that command
(a wrong exit or a garbled message; see the report of the session that
made the corpus); tests/e2e/malformed.sh reports those as XFAIL, never as
a pass, and fails once they are fixed (XPASS) so that the mark is removed.  The files are committed, so the test does not need qpdf or openssl;
this script needs both (qpdf to encrypt, openssl for AES blocks with bad
padding).  The encrypted files change on every run (fresh salts and keys).
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else HERE
HEADER = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
ENTRIES = []   # (name, info, stamp, pw, desc)


def emit(name, data, info, stamp, desc, pw="user"):
    assert "\t" not in desc and "\n" not in desc
    if pw == "user" and b"/Encrypt" not in data:
        pw = "none"  # no password option: writers refuse one for a plaintext file
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    ENTRIES.append((name, str(info), str(stamp), pw, desc))


# ---- a minimal PDF writer ---------------------------------------------------

def build(objs, trailer, header=HEADER, size=None):
    """objs: list of (num, body).  Returns (bytes, {num: offset}, xref offset)."""
    out = bytearray(header)
    offs = {}
    for num, body in objs:
        offs[num] = len(out)
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    top = max(offs) + 1 if offs else 1
    out += b"xref\n0 %d\n" % top
    out += b"0000000000 65535 f\r\n"
    for n in range(1, top):
        if n in offs:
            out += b"%010d 00000 n\r\n" % offs[n]
        else:
            out += b"0000000000 00000 f\r\n"
    t = trailer if size is None else trailer.replace(b"/Size SIZE", b"/Size %d" % size)
    out += b"trailer\n" + t.replace(b"/Size SIZE", b"/Size %d" % top) + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out), offs, xref


def stream(d, data):
    return b"<< " + d + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


CONTENT = b"BT /F1 24 Tf 72 700 Td (Hello) Tj ET"
FONT = b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"


def plain_objs(catalog_extra=b"", kids=b"[3 0 R 5 0 R]", count=b"2"):
    return [
        (1, b"<< /Type /Catalog /Pages 2 0 R /Lang (en-US)" + catalog_extra + b" >>"),
        (2, b"<< /Type /Pages /Kids " + kids + b" /Count " + count + b" >>"),
        (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources " + FONT + b" >>"),
        (4, stream(b"", CONTENT)),
        (5, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources " + FONT + b" >>"),
        (6, b"<< /Title (Malformed-corpus base) /Producer (make-corpus.py) >>"),
    ]


PTRAILER = b"<< /Size SIZE /Root 1 0 R /Info 6 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>] >>"


def plain(**kw):
    return build(plain_objs(**kw), PTRAILER)


# ---- the encrypted base -------------------------------------------------------

def make_r6(tmp):
    src = os.path.join(tmp, "plain.pdf")
    dst = os.path.join(tmp, "r6.pdf")
    open(src, "wb").write(plain()[0])
    subprocess.run(["qpdf", "--object-streams=disable", "--encrypt", "user", "owner", "256", "--",
                    src, dst], check=True)
    data = open(dst, "rb").read()
    objs = [(int(m.group(1)), m.group(2)) for m in
            re.finditer(rb"(?m)^(\d+) 0 obj\n(.*?)\nendobj\n", data, re.S)]
    t = re.search(rb"trailer\s*(<<.*?>>)\s*startxref", data, re.S).group(1)
    key = subprocess.run(["qpdf", "--password=user", "--show-encryption-key", "--show-encryption", dst],
                         check=True, stdout=subprocess.PIPE).stdout.decode()
    fkey = re.search(r"Encryption key = ([0-9a-f]{64})", key).group(1)
    return objs, t, fkey


def aes_cbc_raw(key_hex, iv, data):
    """AES-256-CBC without padding (data already a multiple of 16)."""
    return subprocess.run(["openssl", "enc", "-aes-256-cbc", "-nopad", "-K", key_hex, "-iv", iv.hex()],
                          input=data, stdout=subprocess.PIPE, check=True).stdout


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".pdf") or f in ("INDEX", "user.pw", "owner.pw", "wrong.pw"):
            os.unlink(os.path.join(OUT, f))
    open(os.path.join(OUT, "user.pw"), "w").write("user\n")
    open(os.path.join(OUT, "owner.pw"), "w").write("owner\n")   # rotate in malformed.sh
    open(os.path.join(OUT, "wrong.pw"), "w").write("not-the-password\n")

    base, offs, xref = plain()
    emit("plain-base.pdf", base, 0, 0, "valid plaintext base")

    with tempfile.TemporaryDirectory() as tmp:
        eobjs, etrailer, fkey = make_r6(tmp)
    enc_num = int(re.search(rb"/Encrypt (\d+) 0 R", etrailer).group(1))
    root_num = int(re.search(rb"/Root (\d+) 0 R", etrailer).group(1))
    etr = re.sub(rb"/Size \d+", b"/Size SIZE", etrailer)

    def r6(edit=None, trailer=None):
        objs = [(n, edit(n, b) if edit else b) for n, b in eobjs]
        return build(objs, trailer if trailer is not None else etr)

    def on(num, fn):
        return lambda n, b: fn(b) if n == num else b

    r6base, r6offs, r6xref = r6()
    emit("r6-base.pdf", r6base, 0, 0, "valid AES-256 R6 base (qpdf), user password 'user'")
    emit("r6-wrong-password.pdf", r6base, 3, 3, "valid R6 file opened with a wrong password", pw="wrong")

    # ---- truncations at every structural point --------------------------------
    d = r6base
    cuts = [
        ("empty", 0, "empty file"),
        ("header-only", len(HEADER), "only the %PDF header"),
        ("mid-object", r6offs[root_num] + 12, "cut inside the catalog object"),
        ("before-xref", r6xref, "cut just before the xref keyword"),
        ("mid-xref", r6xref + 40, "cut inside the xref table"),
        ("before-trailer", d.index(b"trailer", r6xref), "cut just before the trailer keyword"),
        ("mid-trailer", d.index(b"trailer", r6xref) + 30, "cut inside the trailer dictionary"),
        ("before-startxref", d.rindex(b"startxref"), "cut just before startxref"),
        ("after-startxref", d.rindex(b"startxref") + 10, "startxref without its number"),
        ("mid-startxref-number", d.rindex(b"%%EOF") - 3, "cut inside the startxref number"),
        ("mid-stream", r6base.index(b"stream\n") + 12, "cut inside the first stream's data"),
    ]
    for tag, at, desc in cuts:
        emit("trunc-%s.pdf" % tag, d[:at], 4, 4, "truncated: " + desc)

    # ---- startxref pointing anywhere --------------------------------------------
    def with_startxref(data, value):
        i = data.rindex(b"startxref")
        return data[:i] + b"startxref\n" + value + b"\n%%EOF\n"
    for tag, val, desc in [
        ("zero", b"0", "startxref 0 (the header)"),
        ("past-eof", b"%d" % (len(d) + 1000), "startxref past the end of the file"),
        ("negative", b"-12", "negative startxref"),
        ("mid-object", b"%d" % (r6offs[root_num] + 5), "startxref into the middle of an object"),
        ("at-trailer", b"%d" % d.index(b"trailer", r6xref), "startxref at the trailer keyword"),
        ("overflow", b"99999999999999999999999", "startxref overflows 64 bits"),
        ("off-by-one", b"%d" % (r6xref + 1), "startxref one byte into the xref keyword"),
        ("garbage", b"12abc", "startxref is not a number"),
    ]:
        emit("startxref-%s.pdf" % tag, with_startxref(d, val), 4, 4, desc)

    # ---- /Prev loops and long chains ----------------------------------------------
    def append_sections(data, n, prev_of, entry_obj=None):
        """Appends N empty update sections; prev_of(i, last, off) gives /Prev."""
        out = bytearray(data)
        sec = []
        last = r6xref
        tr = re.sub(rb"/Size \d+", b"/Size %d" % (max(n for n, _ in eobjs) + 1), etrailer)[2:-2]
        for i in range(n):
            off = len(out)
            prev = prev_of(i, last, off)
            t = tr  # every entry of the previous trailer (7.5.6): a legal chain
            out += b"xref\n0 1\n0000000000 65535 f\r\ntrailer\n<<" + t + b" /Prev %d >>\n" % prev
            sec.append(off)
            last = off
        out += b"startxref\n%d\n%%%%EOF\n" % last
        return bytes(out)
    emit("prev-self-loop.pdf", append_sections(d, 1, lambda i, last, off: off), 4, 4,
         "/Prev points at its own section")
    emit("prev-zero.pdf", append_sections(d, 1, lambda i, last, off: 0), 4, 4,
         "/Prev points at offset 0 (the header, not a section)")

    def two_cycle(data):
        # Sections A and B with A -> B -> A.
        tr = re.sub(rb"/Size \d+", b"/Size %d" % (max(n for n, _ in eobjs) + 1), etrailer)[2:-2]
        out = bytearray(data)
        a = len(out)
        sa = b"xref\n0 1\n0000000000 65535 f\r\ntrailer\n<<" + tr + b" /Prev %010d >>\n"
        b = a + len(sa % 0)
        out += sa % b
        out += b"xref\n0 1\n0000000000 65535 f\r\ntrailer\n<<" + tr + b" /Prev %010d >>\n" % a
        out += b"startxref\n%d\n%%%%EOF\n" % b
        return bytes(out)
    emit("prev-cycle.pdf", two_cycle(d), 4, 4, "/Prev chain A -> B -> A")
    emit("prev-chain-1000.pdf", append_sections(d, 1000, lambda i, last, off: last), 0, 0,
         "1000 valid empty update sections (a long but legal /Prev chain)")
    emit("prev-chain-5000.pdf", append_sections(d, 5000, lambda i, last, off: last), 4, 4,
         "5000 chained sections, beyond the /Prev depth guard")
    emit("prev-past-eof.pdf", append_sections(d, 1, lambda i, last, off: len(d) * 10), 4, 4,
         "/Prev past the end of the file")
    emit("prev-negative.pdf", append_sections(d, 1, lambda i, last, off: -1), 4, 4, "negative /Prev")
    emit("prev-mid-object.pdf", append_sections(d, 1, lambda i, last, off: r6offs[root_num] + 3), 4, 4,
         "/Prev into the middle of an object")

    # ---- xref entries ------------------------------------------------------------------
    def set_entry(data, xoff, num, entry):
        start = data.index(b"\n", data.index(b"\n", xoff) + 1) + 1 + num * 20
        return data[:start] + entry + data[start + 20:]
    emit("xref-entry-past-eof.pdf", set_entry(d, r6xref, root_num, b"%010d 00000 n\r\n" % (len(d) + 5000)), 4, 4,
         "the catalog's xref entry points past the end of the file")
    emit("xref-entry-mid-token.pdf", set_entry(d, r6xref, root_num, b"%010d 00000 n\r\n" % (r6offs[root_num] + 2)), 4, 4,
         "the catalog's xref entry points into the middle of a token")
    other = [n for n, _ in eobjs if n != root_num][0]
    emit("xref-entry-wrong-object.pdf", set_entry(d, r6xref, root_num, b"%010d 00000 n\r\n" % r6offs[other]), 4, 4,
         "the catalog's xref entry points at another object")
    emit("xref-entry-garbage.pdf", set_entry(d, r6xref, root_num, b"00000x0017 00000 n\r\n"), 4, 4,
         "an xref entry with a non-digit offset")
    emit("xref-entry-bad-type.pdf", set_entry(d, r6xref, root_num, b"%010d 00000 q\r\n" % r6offs[root_num]), 4, 4,
         "an xref entry whose type is neither n nor f")
    emit("xref-count-too-big.pdf", d.replace(b"xref\n0 %d\n" % (max(r6offs) + 1), b"xref\n0 %d\n" % 900000, 1), 4, 4,
         "the subsection claims 900000 entries, far more than present")
    emit("xref-start-huge.pdf", d.replace(b"xref\n0 %d\n" % (max(r6offs) + 1), b"xref\n9223372036854775807 %d\n" % (max(r6offs) + 1), 1), 4, 4,
         "a subsection starting at object 2^63-1")

    # ---- huge or absurd /Size ------------------------------------------------------
    emit("size-huge.pdf", r6(trailer=etr.replace(b"/Size SIZE", b"/Size 2147483647"))[0], 0, 4,
         "trailer /Size 2^31-1: readable, but no new object number fits")
    emit("size-overflow.pdf", r6(trailer=etr.replace(b"/Size SIZE", b"/Size 99999999999999999999999"))[0], 4, 4,
         "trailer /Size overflows 64 bits")
    emit("size-negative.pdf", r6(trailer=etr.replace(b"/Size SIZE", b"/Size -7"))[0], 4, 4, "negative trailer /Size")

    # ---- missing or broken /Root and page tree ----------------------------------------
    emit("root-missing.pdf", r6(trailer=re.sub(rb"/Root \d+ 0 R", b"", etr))[0], 4, 4, "the trailer has no /Root")
    emit("root-not-dict.pdf", r6(trailer=re.sub(rb"/Root \d+ 0 R", b"/Root 42", etr))[0], 4, 4, "/Root is an integer")
    emit("root-dangling.pdf", r6(trailer=re.sub(rb"/Root \d+ 0 R", b"/Root 999 0 R", etr))[0], 4, 4,
         "/Root names an object that does not exist")
    pg = plain_objs
    emit("pages-cycle-self.pdf", build(pg(kids=b"[2 0 R]", count=b"1"), PTRAILER)[0], 0, 4,
         "plaintext: the page tree root lists itself as its only kid")
    emit("pages-count-negative.pdf", build(pg(count=b"-2"), PTRAILER)[0], 4, 4, "plaintext: /Count -2")
    emit("pages-missing.pdf", build([(1, b"<< /Type /Catalog >>")] + pg()[1:], PTRAILER)[0], 4, 4,
         "plaintext: the catalog has no /Pages")

    # Encrypted page-tree cycle: re-encryption is not needed, the tree is plaintext syntax.
    pages_num = int(re.search(rb"/Pages (\d+) 0 R", dict(eobjs)[root_num]).group(1))
    emit("r6-pages-cycle.pdf", r6(on(pages_num, lambda b: re.sub(rb"/Kids \[[^\]]*\]", b"/Kids [%d 0 R]" % pages_num, b).replace(b"/Count 2", b"/Count 1")))[0], 0, 4,
         "R6: the page tree root is its own kid (cycle)")
    page1 = int(re.search(rb"/Kids \[ ?(\d+) 0 R", dict(eobjs)[pages_num]).group(1))
    emit("r6-pages-cycle-deep.pdf", r6(on(page1, lambda b: b.replace(b"/Type /Page", b"/Type /Pages /Count 1 /Kids [%d 0 R]" % pages_num, 1)))[0], 0, 4,
         "R6: the first kid is an intermediate node whose kid is the root again")

    # ---- the /Encrypt dictionary -----------------------------------------------------------
    encbody = dict(eobjs)[enc_num]

    def enc_edit(fn):
        return r6(on(enc_num, fn))[0]

    def hexkey(key):
        m = re.search(rb"/" + key + rb" <([0-9a-f]*)>", encbody)
        return m.group(1)

    def set_hex(key, value):
        return lambda b: re.sub(rb"/" + key + rb" <[0-9a-f]*>", b"/" + key + b" <" + value + b">", b)
    u, o, ue, oe, perms = (hexkey(k) for k in (b"U", b"O", b"UE", b"OE", b"Perms"))
    emit("enc-u-short.pdf", enc_edit(set_hex(b"U", u[:64])), "4", "4", "/U is 32 bytes instead of 48")
    emit("enc-u-empty.pdf", enc_edit(set_hex(b"U", b"")), "4", "4", "/U is empty")
    emit("enc-u-long.pdf", enc_edit(set_hex(b"U", u + b"00" * 79)), 0, 0,
         "/U is 127 bytes (48 real + zero padding, as some writers do): accepted")
    emit("enc-u-missing.pdf", enc_edit(lambda b: re.sub(rb"/U <[0-9a-f]*>", b"", b)), 4, 4, "/U is missing")
    emit("enc-u-not-string.pdf", enc_edit(lambda b: re.sub(rb"/U <[0-9a-f]*>", b"/U 12", b)), 4, 4,
         "/U is an integer")
    emit("enc-o-short.pdf", enc_edit(set_hex(b"O", o[:40])), "4", "4", "/O is 20 bytes instead of 48")
    emit("enc-o-long.pdf", enc_edit(set_hex(b"O", o + b"00" * 79)), 0, 0, "/O is 127 bytes (zero padded): accepted")
    emit("enc-ue-short.pdf", enc_edit(set_hex(b"UE", ue[:32])), 4, 4, "/UE is 16 bytes instead of 32")
    emit("enc-ue-long.pdf", enc_edit(set_hex(b"UE", ue + b"ab" * 16)), 0, 0, "/UE is 48 bytes instead of 32: truncated, accepted")
    emit("enc-oe-short.pdf", enc_edit(set_hex(b"OE", oe[:10])), "4", "4", "/OE is 5 bytes instead of 32")
    emit("enc-perms-short.pdf", enc_edit(set_hex(b"Perms", perms[:16])), 4, 4, "/Perms is 8 bytes instead of 16")
    emit("enc-perms-long.pdf", enc_edit(set_hex(b"Perms", perms + b"cd" * 16)), 0, 0, "/Perms is 32 bytes instead of 16: truncated, accepted")
    emit("enc-perms-tampered.pdf", enc_edit(lambda b: re.sub(rb"/P -?\d+", b"/P -3904", b)), 4, 4,
         "/P changed so that /Perms no longer matches (Algorithm 13)")
    emit("enc-cfm-unknown.pdf", enc_edit(lambda b: b.replace(b"/CFM /AESV3", b"/CFM /AESV9")), 4, 4, "unknown /CFM /AESV9")
    emit("enc-cfm-rc4.pdf", enc_edit(lambda b: b.replace(b"/CFM /AESV3", b"/CFM /V2")), 4, 4, "/CFM /V2 (RC4) with /V 5")
    emit("enc-cf-missing.pdf", enc_edit(lambda b: re.sub(rb"/CF << /StdCF << .*? >> >>", b"", b)), 4, 4,
         "/StmF /StdCF without a /CF dictionary")
    emit("enc-stmf-undefined.pdf", enc_edit(lambda b: b.replace(b"/StmF /StdCF", b"/StmF /Nope")), 4, 4,
         "/StmF names a crypt filter that /CF does not define")
    emit("enc-v4.pdf", enc_edit(lambda b: b.replace(b"/V 5", b"/V 4").replace(b"/R 6", b"/R 4").replace(b"/CFM /AESV3", b"/CFM /AESV2")), 3, 3,
         "/V 4 /R 4 /AESV2 (AES-128) with R6 /O and /U: no password matches")
    emit("enc-r7.pdf", enc_edit(lambda b: b.replace(b"/R 6", b"/R 7")), 4, 4, "/V 5 /R 7: unsupported")
    emit("enc-r99.pdf", enc_edit(lambda b: b.replace(b"/R 6", b"/R 99")), 4, 4, "/R 99")
    emit("enc-v1-r2.pdf", enc_edit(lambda b: b.replace(b"/V 5", b"/V 1").replace(b"/R 6", b"/R 2")), 3, 3, "/V 1 /R 2 (RC4-40) with R6 /O and /U: no password matches")
    emit("enc-pubsec.pdf", enc_edit(lambda b: b.replace(b"/Filter /Standard", b"/Filter /Adobe.PubSec")), 4, 4,
         "/Filter /Adobe.PubSec without /SubFilter or /Recipients: malformed, exit 4 (issue 33; pubsec/ has the rest)")
    emit("enc-p-missing.pdf", enc_edit(lambda b: re.sub(rb"/P -?\d+", b"", b)), 4, 4, "/Encrypt without /P")
    emit("enc-p-huge.pdf", enc_edit(lambda b: re.sub(rb"/P -?\d+", b"/P 99999999999", b)), 4, 4, "/P out of the 32-bit range")
    emit("enc-not-dict.pdf", r6(trailer=re.sub(rb"/Encrypt \d+ 0 R", b"/Encrypt 5", etr))[0], 4, 4, "/Encrypt is an integer")
    emit("enc-dangling.pdf", r6(trailer=re.sub(rb"/Encrypt \d+ 0 R", b"/Encrypt 999 0 R", etr))[0], 4, 4,
         "/Encrypt names a missing object")
    emit("enc-self-ref.pdf", r6(on(enc_num, lambda b: b"%d 0 R" % enc_num))[0], 4, 4, "/Encrypt object is a reference to itself")

    # ---- AES data --------------------------------------------------------------------------------
    cat = dict(eobjs)[root_num]
    lang = re.search(rb"/Lang <([0-9a-f]*)>", cat)

    def set_lang(hexval):
        return r6(on(root_num, lambda b: b.replace(lang.group(0), b"/Lang <" + hexval + b">")))[0]
    emit("aes-short-8.pdf", set_lang(b"00112233445566aa"), "4", "4", "an encrypted string of 8 bytes (shorter than the IV)")
    emit("aes-iv-only.pdf", set_lang(b"00" * 16), "4", "4", "an encrypted string that is only an IV")
    emit("aes-not-block.pdf", set_lang(lang.group(1) + b"abcdef"), "4", "4", "an encrypted string whose length is not a multiple of 16")
    iv = bytes(range(16))
    emit("aes-bad-padding.pdf", set_lang((iv + aes_cbc_raw(fkey, iv, b"en-US" + b"\x00" * 10 + b"\x07")).hex().encode()), "4", "4",
         "an encrypted string with invalid PKCS#7 padding (correct key)")
    emit("aes-zero-padding.pdf", set_lang((iv + aes_cbc_raw(fkey, iv, b"en-US" + b"\x00" * 11)).hex().encode()), "4", "4",
         "an encrypted string with a zero padding byte (correct key)")
    emit("aes-empty-string.pdf", set_lang(b""), 0, 0, "an empty encrypted string decrypts to empty")

    # ---- nesting, names, strings (plaintext catalog) ----------------------------------------
    emit("nest-array-deep.pdf", plain(catalog_extra=b" /X " + b"[" * 100000 + b"]" * 100000)[0], 4, 4,
         "100000 nested arrays in the catalog")
    emit("nest-dict-deep.pdf", plain(catalog_extra=b" /X " + b"<< /A " * 5000 + b"1" + b" >>" * 5000)[0], 4, 4,
         "5000 nested dictionaries in the catalog")
    emit("nest-array-unclosed.pdf", plain(catalog_extra=b" /X " + b"[" * 50)[0], 4, 4, "50 unclosed arrays in the catalog")
    emit("nest-ok-60.pdf", plain(catalog_extra=b" /X " + b"[" * 60 + b"]" * 60)[0], 0, 0,
         "60 nested arrays: within the nesting limit")
    emit("long-name.pdf", plain(catalog_extra=b" /" + b"N" * 200000 + b" 1")[0], 0, 0,
         "a 200000-byte name key in the catalog")
    emit("long-string.pdf", plain(catalog_extra=b" /S (" + b"x" * 300000 + b")")[0], 0, 0,
         "a 300000-byte literal string in the catalog")
    emit("string-unterminated.pdf", plain(catalog_extra=b" /S (" + b"(" * 300)[0], 4, 4,
         "an unterminated nested literal string")
    emit("hexstring-bad.pdf", plain(catalog_extra=b" /S <12zz34>")[0], 4, 4, "a hex string with non-hex digits")

    # ---- object streams and xref streams (plaintext) --------------------------------------------
    def ostm(n=None, first=None, header=None, members=None, xs_w=b"[1 4 2]", xs_index=None, xs_entries=None,
             ostm_dict_extra=b"", length=None, filt=False, extra_entries=None, xs_length=None):
        members = members or [(1, b"<< /Type /Catalog /Pages 2 0 R >>"),
                              (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
                              (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>")]
        body = b""
        pairs = []
        for num, text in members:
            pairs.append(b"%d %d" % (num, len(body)))
            body += text + b" "
        hdr = header if header is not None else b" ".join(pairs) + b" "
        content = hdr + body
        if filt:
            content = zlib.compress(content)
        out = bytearray(HEADER)
        off4 = len(out)
        out += b"4 0 obj\n" + stream(b"", CONTENT) + b"\nendobj\n"
        off5 = len(out)
        d = b"/Type /ObjStm /N %d /First %d" % (len(members) if n is None else n, len(hdr) if first is None else first)
        d += ostm_dict_extra + (b" /Filter /FlateDecode" if filt else b"")
        s = stream(d, content)
        if length is not None:
            s = re.sub(rb"/Length \d+", b"/Length " + length, s, count=1)
        out += b"5 0 obj\n" + s + b"\nendobj\n"
        off6 = len(out)
        ents = xs_entries
        if ents is None:
            ents = [(0, 0, 65535), (2, 5, 0), (2, 5, 1), (2, 5, 2), (1, off4, 0), (1, off5, 0), (1, off6, 0)]
            ents += extra_entries or []
        raw = b"".join(struct.pack(">BIH", *e) for e in ents)
        dd = b"/Type /XRef /Size %d /W %s /Root 1 0 R" % (len(ents), xs_w)
        if xs_index is not None:
            dd += b" /Index " + xs_index
        xs = stream(dd, raw)
        if xs_length is not None:
            xs = re.sub(rb"/Length \d+", b"/Length " + xs_length, xs, count=1)
        out += b"6 0 obj\n" + xs + b"\nendobj\nstartxref\n%d\n%%%%EOF\n" % off6
        return bytes(out)
    emit("ostm-base.pdf", ostm(), 0, 0, "valid plaintext object stream + xref stream base")
    emit("ostm-flate-base.pdf", ostm(filt=True), 0, 0, "valid plaintext, deflated object stream")
    emit("ostm-n-too-big.pdf", ostm(n=50), 4, 4, "object stream /N 50 with 3 objects")
    emit("ostm-n-huge.pdf", ostm(n=2147483647), 4, 4, "object stream /N 2^31-1")
    emit("ostm-n-negative.pdf", ostm(n=-1), 4, 4, "object stream /N -1")
    emit("ostm-n-zero.pdf", ostm(n=0), 4, 4, "object stream /N 0 while the xref places objects in it")
    emit("ostm-first-past-end.pdf", ostm(first=100000), 4, 4, "object stream /First past its data")
    emit("ostm-first-zero.pdf", ostm(first=0), 4, 4, "object stream /First 0 (inside the header)")
    emit("ostm-first-negative.pdf", ostm(first=-8), 4, 4, "object stream /First -8")
    emit("ostm-header-garbage.pdf", ostm(header=b"1 0 2 x 3 zz "), 4, 4, "object stream header with non-numbers")
    emit("ostm-wrong-numbers.pdf", ostm(header=b"7 0 8 34 9 78 "), 4, 4,
         "the object stream's header names other objects than the xref says")
    emit("ostm-offsets-decreasing.pdf", ostm(header=b"1 60 2 30 3 0 "), 4, 4, "member offsets out of order / overlapping")
    emit("ostm-length-huge.pdf", ostm(length=b"99999999"), 4, 4, "object stream /Length far past the end of the file")
    emit("ostm-length-negative.pdf", ostm(length=b"-5"), 4, 4, "object stream /Length -5")
    emit("ostm-length-self-ref.pdf", ostm(length=b"5 0 R"), 4, 4, "object stream /Length is a reference to the stream itself")
    emit("ostm-self-contained.pdf", ostm_self(ostm), 4, 4, "the catalog lives in object stream 7, which says it lives in itself")
    emit("ostm-nested.pdf", ostm_nested(ostm), 4, 4, "the catalog's object stream is itself a compressed object")
    emit("ostm-bomb.pdf", ostm_bomb(), 4, 4, "a deflated object stream that inflates to 100 MB of zeros")
    emit("xrefstm-w-zero.pdf", ostm(xs_w=b"[0 0 0]"), 4, 4, "xref stream /W [0 0 0]")
    emit("xrefstm-w-huge.pdf", ostm(xs_w=b"[1 99 2]"), 4, 4, "xref stream /W [1 99 2]")
    emit("xrefstm-w-negative.pdf", ostm(xs_w=b"[1 -4 2]"), 4, 4, "xref stream /W with a negative width")
    emit("xrefstm-w-short.pdf", ostm(xs_w=b"[1 4]"), 4, 4, "xref stream /W with two elements")
    emit("xrefstm-w-overflow.pdf", ostm(xs_w=b"[1 4 99999999999999999999]"), 4, 4, "xref stream /W overflows")
    emit("xrefstm-index-huge.pdf", ostm(xs_index=b"[0 2147483647]"), 4, 4, "xref stream /Index [0 2^31-1]")
    emit("xrefstm-index-odd.pdf", ostm(xs_index=b"[0 7 9]"), 4, 4, "xref stream /Index with an odd number of elements")
    emit("xrefstm-index-negative.pdf", ostm(xs_index=b"[-3 7]"), 4, 4, "xref stream /Index starting at -3")
    emit("xrefstm-index-beyond-max.pdf", ostm(xs_index=b"[8388600 7]"), 4, 4, "xref stream /Index above the highest object number")
    emit("xrefstm-length-short.pdf", ostm(xs_length=b"3"), 4, 4, "xref stream /Length shorter than its entries")

    # ---- misc ------------------------------------------------------------------------------------
    emit("not-a-pdf.pdf", bytes((i * 37 + 11) % 256 for i in range(4096)), 4, 4, "4 KB of pseudo-random bytes")
    emit("trailing-garbage.pdf", r6base + b"garbage after the end\n" * 4, 0, 4,
         "bytes after the last %%EOF: reported by info, refused by stamp")
    emit("info-is-root.pdf", build(plain_objs(), PTRAILER.replace(b"/Info 6 0 R", b"/Info 1 0 R"))[0], 0, 0,
         "the trailer's /Info is the catalog (meta --xmp must refuse it; it freed memory still in use)")

    with open(os.path.join(OUT, "INDEX"), "w") as f:
        f.write("# tests/malformed/INDEX - generated by make-corpus.py; see its docstring.\n")
        f.write("# name\tinfo-exit\tstamp-exit\tpassword\tdescription\n")
        for e in ENTRIES:
            f.write("\t".join(e) + "\n")
    print("%d files" % len(ENTRIES))


def ostm_self(ostm):
    """Objects 1-3 are in object stream 7, and 7 itself is listed as type 2 in stream 7."""
    ents = [(0, 0, 65535), (2, 7, 0), (2, 7, 1), (2, 7, 2), (1, 0, 0), (0, 0, 0), (0, 0, 0), (2, 7, 3)]
    return _fix_entries(ostm, ents)


def ostm_nested(ostm):
    """Objects 1-3 are in stream 5, and stream 5 is listed as compressed inside stream 1."""
    ents = [(0, 0, 65535), (2, 5, 0), (2, 5, 1), (2, 5, 2), None, (2, 1, 0), None]
    return _fix_entries(ostm, ents)


def _fix_entries(ostm, ents):
    data = ostm()
    off4 = data.index(b"4 0 obj")
    off6 = data.index(b"6 0 obj")
    full = []
    for i, e in enumerate(ents):
        if e is None:
            e = (1, off4 if i == 4 else off6, 0)
        elif e == (1, 0, 0):
            e = (1, off4, 0)
        full.append(e)
    if len(full) < 7:
        full += [(1, off6, 0)]
    return ostm(xs_entries=full)


def ostm_bomb():
    members = b"1 0 2 33 3 80 "
    body = members + b"<< /Type /Catalog /Pages 2 0 R >> " + b"\0" * (100 << 20)
    comp = zlib.compress(body, 9)
    out = bytearray(HEADER)
    off5 = len(out)
    out += b"5 0 obj\n" + stream(b"/Type /ObjStm /N 3 /First %d /Filter /FlateDecode" % len(members), comp) + b"\nendobj\n"
    off6 = len(out)
    ents = [(0, 0, 65535), (2, 5, 0), (2, 5, 1), (2, 5, 2), (0, 0, 0), (1, off5, 0), (1, off6, 0)]
    raw = b"".join(struct.pack(">BIH", *e) for e in ents)
    out += b"6 0 obj\n" + stream(b"/Type /XRef /Size 7 /W [1 4 2] /Root 1 0 R", raw) + b"\nendobj\nstartxref\n%d\n%%%%EOF\n" % off6
    return bytes(out)


if __name__ == "__main__":
    main()
