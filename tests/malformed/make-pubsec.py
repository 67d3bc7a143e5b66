#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/malformed/make-pubsec.py [OUTDIR] - the hostile files encrypted to certificates.

Regenerates tests/malformed/pubsec/ (issue 33): a recipient's key pair
(key.pem, PKCS#8; cert.pem, self-signed RSA 2048), a certificate that is
not a recipient (other-cert.pem, other-key.pem), a valid base encrypted to
cert.pem by this script, and files derived from it whose /Recipients,
envelopes or seeds are hostile.  Every envelope is a real CMS EnvelopedData
made by `openssl cms -encrypt` (then bent here where the case needs it), and
the file key is derived as ISO 32000-2 7.6.5.3 says: SHA-256 over the
20-byte seed, every /Recipients string as stored, and FF FF FF FF when
/EncryptMetadata is false; the one content stream is AES-256-CBC under
that key (/adbe.pkcs7.s5, /CFM /AESV3).  So a file whose only damage is
the one named opens in a reader that ignores that damage (base.pdf opens
in PDFBox and iText with key.pem: tests/e2e/pubsec.sh's PubSec.java can
check it).

OUTDIR/INDEX lists the files as tests/malformed/INDEX does:

    NAME <TAB> INFO-EXIT <TAB> STAMP-EXIT <TAB> CREDENTIAL <TAB> DESCRIPTION

CREDENTIAL is "key" (tests/e2e/malformed.sh gives --key key.pem --cert
cert.pem), "other" (other-key.pem and other-cert.pem) or "user" (the
password file ../user.pw, no key).  The files are committed, so the test
needs neither openssl nor this script; this script needs openssl.  Every
run makes new keys, seeds and files.
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "pubsec")
HEADER = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
ENTRIES = []
TMP = None


def emit(name, data, info, stamp, desc, cred="key"):
    assert "\t" not in desc and "\n" not in desc
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    ENTRIES.append((name, str(info), str(stamp), cred, desc))


def ossl(*args, data=None):
    return subprocess.run(["openssl"] + list(args), input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=True).stdout


def envelope(content, cert, cipher="-aes256", extra=()):
    """A CMS EnvelopedData (DER) of CONTENT for the certificate CERT."""
    src = os.path.join(TMP, "content.bin")
    with open(src, "wb") as f:
        f.write(content)
    return ossl("cms", "-encrypt", "-binary", cipher, "-in", src, "-outform", "DER",
                "-recip", os.path.join(OUT, cert), *extra)


def aes256(key, iv, data):
    return iv + ossl("enc", "-aes-256-cbc", "-K", key.hex(), "-iv", iv.hex(), data=data)


def pdf(recipients, seed, encrypt_metadata=True, cf_extra=b"", subfilter=b"/adbe.pkcs7.s5",
        recipients_obj=None, hash_strings=None):
    """A one-page file encrypted to the /Recipients strings RECIPIENTS (bytes
    each) with the file key derived from SEED.  RECIPIENTS_OBJ replaces the
    written /Recipients value; HASH_STRINGS the strings the key is derived
    from (default: RECIPIENTS)."""
    h = hashlib.sha256(seed)
    for r in (recipients if hash_strings is None else hash_strings):
        h.update(r)
    if not encrypt_metadata:
        h.update(b"\xff\xff\xff\xff")
    key = h.digest()
    content = b"BT /F1 24 Tf 72 700 Td (Encrypted to a certificate) Tj ET\n"
    enc_content = aes256(key, os.urandom(16), content)
    if recipients_obj is None:
        recipients_obj = b"[" + b"".join(b"<" + r.hex().encode() + b">" for r in recipients) + b"]"
    em = b"" if encrypt_metadata else b" /EncryptMetadata false"
    objs = [
        (1, b"<< /Type /Catalog /Pages 2 0 R >>"),
        (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
            b" /Resources << /Font << /F1 5 0 R >> >> >>"),
        (4, b"<< /Length %d >>\nstream\n" % len(enc_content) + enc_content + b"\nendstream"),
        (5, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
        (6, b"<< /Filter /Adobe.PubSec /SubFilter " + subfilter + b" /V 5 /Length 256"
            b" /CF << /DefaultCryptFilter << /CFM /AESV3 /Length 256 /Recipients " + recipients_obj
            + em + cf_extra + b" >> >> /StmF /DefaultCryptFilter /StrF /DefaultCryptFilter >>"),
    ]
    out = bytearray(HEADER)
    offs = {}
    for num, body in objs:
        offs[num] = len(out)
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 7\n0000000000 65535 f\r\n"
    for n in range(1, 7):
        out += b"%010d 00000 n\r\n" % offs[n]
    fid = os.urandom(16).hex().encode()
    out += (b"trailer\n<< /Size 7 /Root 1 0 R /Encrypt 6 0 R /ID [<" + fid + b"> <" + fid + b">] >>\n"
            b"startxref\n%d\n%%%%EOF\n" % xref)
    return bytes(out)


def der_len(b, i):
    """The length at B[I] and where the value starts."""
    n = b[i]
    if n < 0x80:
        return n, i + 1
    k = n & 0x7F
    return int.from_bytes(b[i + 1:i + 1 + k], "big"), i + 1 + k


def tlv(tag, value):
    n = len(value)
    if n < 0x80:
        return bytes([tag, n]) + value
    k = (n.bit_length() + 7) // 8
    return bytes([tag, 0x80 | k]) + n.to_bytes(k, "big") + value


def children(b):
    """The (tag, value) TLVs one after another in B."""
    out, i = [], 0
    while i < len(b):
        tag = b[i]
        ln, start = der_len(b, i + 1)
        out.append((tag, b[start:start + ln]))
        i = start + ln
    return out


def main():
    global TMP
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".pdf") or f.endswith(".pem") or f == "INDEX":
            os.unlink(os.path.join(OUT, f))
    with tempfile.TemporaryDirectory() as TMP:
        for who, cn in (("", "pubsec recipient"), ("other-", "pubsec stranger")):
            ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                 os.path.join(OUT, who + "key.pem"), "-out", os.path.join(OUT, who + "cert.pem"),
                 "-subj", "/O=pdfstamp test/CN=" + cn, "-days", "36500")
        perms = b"\xff\xff\xff\xfc"
        seed = os.urandom(20)
        good = envelope(seed + perms, "cert.pem")
        assert good[4:15] == bytes.fromhex("06092a864886f70d010703"), "ContentInfo envelopedData"

        emit("base.pdf", pdf([good], seed), 0, 0,
             "valid base: /adbe.pkcs7.s5 AESV3, one recipient (AES-256-CBC envelope)")
        emit("base-nometa.pdf", pdf([good], seed, encrypt_metadata=False), 0, 0,
             "valid: /EncryptMetadata false in the crypt filter (FF FF FF FF in the key)")
        emit("oaep.pdf", pdf([envelope(seed + perms, "cert.pem", extra=(
             "-keyopt", "rsa_padding_mode:oaep"))], seed), 0, 0,
             "valid: the seed's key transport is RSA-OAEP")
        emit("wrong-recipient.pdf", pdf([envelope(seed + perms, "other-cert.pem")], seed), 3, 3,
             "encrypted to another certificate only: no matching recipient")
        emit("base-other-key.pdf", pdf([good], seed), 3, 3,
             "valid, opened with a key that is not a recipient's", cred="other")
        emit("base-password.pdf", pdf([good], seed), 3, 3,
             "a password given, no key: the file is encrypted to certificates", cred="user")

        # damaged /Recipients DER
        emit("der-truncated.pdf", pdf([good[:len(good) // 2]], seed), 4, 4,
             "/Recipients: the envelope's DER cut in half")
        bad = bytearray(good)
        bad[1:4] = b"\x84\x7f\xff"
        emit("der-length-huge.pdf", pdf([bytes(bad)], seed), 4, 4,
             "/Recipients: the outer DER length claims 2 GB")
        bad = bytearray(good)
        bad[0] = 0x31
        emit("der-not-sequence.pdf", pdf([bytes(bad)], seed), 4, 4,
             "/Recipients: the ContentInfo is a SET, not a SEQUENCE")
        emit("der-trailing.pdf", pdf([good + b"\x00" * 7], seed), 4, 4,
             "/Recipients: bytes after the envelope's DER")
        emit("der-garbage.pdf", pdf([os.urandom(300)], seed), 4, 4,
             "/Recipients: 300 random bytes")
        emit("der-empty.pdf", pdf([b""], seed), 4, 4, "/Recipients: an empty string")
        nest = b"\x30\x80" * 5000
        emit("der-deep.pdf", pdf([b"\x30\x82" + len(nest).to_bytes(2, "big") + nest], seed), 4, 4,
             "/Recipients: 5000 nested indefinite-length SEQUENCEs")
        emit("recipients-not-array.pdf", pdf([good], seed, recipients_obj=b"42"), 4, 4,
             "/Recipients is a number")
        emit("recipients-not-string.pdf", pdf([good], seed, recipients_obj=b"[/Name 42]"), 4, 4,
             "/Recipients holds a name and a number, no string")
        emit("recipients-empty.pdf", pdf([good], seed, recipients_obj=b"[]"), 4, 4,
             "/Recipients is an empty array")
        emit("recipients-missing.pdf", pdf([good], seed, recipients_obj=b"null"), 4, 4,
             "/Recipients is null in the crypt filter")
        # a huge recipient list: the real recipient first, then 70,000 strings
        # (the file key hashes them all, so only a cap on their number refuses it)
        many = [good] + [b"\x30\x00"] * 70000
        emit("recipients-huge.pdf", pdf(many, seed), 4, 4,
             "/Recipients: the recipient's string then 70,000 more (beyond any sane count)")
        # the wrong CMS content type: id-data, id-signedData
        for oid_last, what in ((1, "data"), (2, "signedData")):
            bad = bytearray(good)
            bad[14] = oid_last
            emit("cms-content-%s.pdf" % what.lower(), pdf([bytes(bad)], seed), 4, 4,
                 "the envelope's ContentInfo says id-%s, not envelopedData" % what)
        # an unsupported key transport: the RecipientInfo's rsaEncryption OID
        # made RSASSA-PSS (same length); the content cipher Camellia-256-CBC
        rsa = bytes.fromhex("06092a864886f70d0101010500")
        assert good.count(rsa) == 1
        emit("cms-keytrans-unknown.pdf",
             pdf([good.replace(rsa, bytes.fromhex("06092a864886f70d01010a0500"))], seed), 4, 4,
             "the key transport algorithm is RSASSA-PSS (not a key transport)")
        emit("cms-cipher-camellia.pdf",
             pdf([envelope(seed + perms, "cert.pem", cipher="-camellia256")], seed), 4, 4,
             "the envelope's content cipher is Camellia-256-CBC (unsupported)")
        # the EncryptedContentInfo without its content (detached), DER rebuilt
        ci = children(children(good)[0][1])              # contentType, [0]
        env = children(children(ci[1][1])[0][1])  # version, recipientInfos, encryptedContentInfo
        eci = children(env[-1][1])
        assert eci[-1][0] == 0x80, "encryptedContent [0] IMPLICIT"
        env[-1] = (0x30, b"".join(tlv(t, v) for t, v in eci[:-1]))
        ed = tlv(0x30, b"".join(tlv(t, v) for t, v in env))
        detached = tlv(0x30, tlv(*ci[0]) + tlv(0xA0, ed))
        emit("cms-no-content.pdf", pdf([detached], seed), 4, 4,
             "the envelope's encryptedContent is absent (a detached EnvelopedData)")
        # seeds of the wrong length
        for n, what in ((23, "23 bytes (3 short of seed and permissions)"),
                        (20, "20 bytes: a seed without permissions"),
                        (100, "100 bytes"), (0, "empty")):
            emit("seed-%d.pdf" % n, pdf([envelope(os.urandom(n), "cert.pem")], seed), 4, 4,
                 "the enveloped seed is %s" % what)
        # a sub-filter pdfstamp does not write nor read
        emit("subfilter-unknown.pdf", pdf([good], seed, subfilter=b"/adbe.pkcs7.s9"), 4, 4,
             "/SubFilter /adbe.pkcs7.s9")

    with open(os.path.join(OUT, "INDEX"), "w") as f:
        f.write("# tests/malformed/pubsec/INDEX - generated by ../make-pubsec.py; see its docstring.\n")
        f.write("# name\tinfo-exit\tstamp-exit\tcredential\tdescription\n")
        for e in ENTRIES:
            f.write("\t".join(e) + "\n")


if __name__ == "__main__":
    main()
