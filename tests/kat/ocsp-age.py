# SPDX-License-Identifier: Apache-2.0
"""tests/kat/ocsp-age.py - OCSP replies of a given age, for tests/check_revoc.c.

Usage: ocsp-age.py CA.pem CA.key LEAF.pem DAYS OUT [NEXT_DAYS]

Writes to OUT a successful basic OCSP reply, signed by the CA (SHA-256,
PKCS#1 v1.5), saying LEAF is good, with thisUpdate DAYS days ago and a
nextUpdate NEXT_DAYS days from now, or none.  `openssl ocsp` always sets
thisUpdate to now, hence python3-cryptography (Debian: python3-cryptography).
"""
import datetime
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp

ca_pem, ca_key, leaf_pem, days, out = sys.argv[1:6]
nxt = sys.argv[6] if len(sys.argv) > 6 else None
ca = x509.load_pem_x509_certificate(open(ca_pem, "rb").read())
key = serialization.load_pem_private_key(open(ca_key, "rb").read(), password=None)
leaf = x509.load_pem_x509_certificate(open(leaf_pem, "rb").read())
now = datetime.datetime.utcnow().replace(microsecond=0)
b = ocsp.OCSPResponseBuilder().add_response(
    cert=leaf, issuer=ca, algorithm=hashes.SHA1(), cert_status=ocsp.OCSPCertStatus.GOOD,
    this_update=now - datetime.timedelta(days=float(days)),
    next_update=None if nxt is None else now + datetime.timedelta(days=float(nxt)),
    revocation_time=None, revocation_reason=None)
b = b.responder_id(ocsp.OCSPResponderEncoding.HASH, ca)
r = b.sign(key, hashes.SHA256())
open(out, "wb").write(r.public_bytes(serialization.Encoding.DER))
