"""Writes Google Authenticator "Transfer accounts" fixtures, encoding the MigrationPayload protobuf by hand (schema:
Aegis app/src/main/proto/google_auth.proto) so the Swift parser is checked against an independent writer.

export.txt   two QR codes (batch 1 and 2 of 2, negative batch_id as a 10-byte varint), with unknown fields, defaults,
             an "issuer:account" name, an MD5 entry and an empty secret (both problems), one raw '+' in data
missing.txt  batches 1 and 3 of 3 only: "batch 2 of 3 missing"
expected.json  the items each file must give, with codes from otp_reference.py, and the expected problems."""

import base64
import os
import sys
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import expected_item, secret, write_json  # noqa: E402

ALGORITHM = {None: 0, "SHA1": 1, "SHA256": 2, "SHA512": 3, "MD5": 4}
DIGITS = {None: 0, 6: 1, 8: 2}
TYPE = {None: 0, "hotp": 1, "totp": 2}


def varint(value):
    value &= (1 << 64) - 1  # negative int32/int64 are sign-extended to 64 bits: ten bytes on the wire
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def length_delimited(field, data):
    return key(field, 2) + varint(len(data)) + data


def varint_field(field, value):
    return key(field, 0) + varint(value)


def otp_parameters(raw_secret, name, issuer, algorithm, digits, otp_type, counter=None, unknown=False):
    out = length_delimited(1, raw_secret) + length_delimited(2, name.encode())
    if issuer is not None:
        out += length_delimited(3, issuer.encode())
    if unknown:  # fields a newer Google Authenticator might add: fixed64, fixed32 and a string
        out += key(20, 1) + bytes(8) + key(21, 5) + bytes(4) + length_delimited(22, b"future")
    if ALGORITHM[algorithm]:
        out += varint_field(4, ALGORITHM[algorithm])
    if DIGITS[digits]:
        out += varint_field(5, DIGITS[digits])
    if TYPE[otp_type]:
        out += varint_field(6, TYPE[otp_type])
    if counter is not None:
        out += varint_field(7, counter)
    return out


def payload(entries, batch_size, batch_index, batch_id):
    out = b"".join(length_delimited(1, entry) for entry in entries)
    out += varint_field(2, 1) + varint_field(3, batch_size) + varint_field(4, batch_index) + varint_field(5, batch_id)
    out += varint_field(99, 7)  # unknown top-level field
    return out


def uri(data, raw_plus=False):
    text = base64.b64encode(data).decode()
    if raw_plus:  # as some QR scanners hand it over: '/' and '=' escaped, '+' left raw
        return "otpauth-migration://offline?data=" + text.replace("/", "%2F").replace("=", "%3D")
    return "otpauth-migration://offline?data=" + quote(text, safe="")


T = [
    dict(issuer="GitHub", account="alice@example.com", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("google-github", 20)),
    dict(issuer="Example", account="bob", kind="totp", algorithm="SHA256", digits=8, period=30,
         secret=secret("google-example", 32)),
    # Every enum UNSPECIFIED, issuer empty, name "Issuer:account": SHA1, 6 digits, TOTP 30 s, split name.
    dict(issuer="Split Co", account="carol", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("google-split", 20)),
    dict(issuer="Big Corp", account="dave", kind="totp", algorithm="SHA512", digits=8, period=30,
         secret=secret("google-bigcorp", 64)),
    dict(issuer="Counter Inc", account="erin", kind="hotp", algorithm="SHA1", digits=6, counter=7,
         secret=secret("google-hotp", 20)),
]

batch_one = [
    otp_parameters(T[0]["secret"], T[0]["account"], T[0]["issuer"], "SHA1", 6, "totp"),
    otp_parameters(T[1]["secret"], T[1]["account"], T[1]["issuer"], "SHA256", 8, "totp", unknown=True),
    otp_parameters(T[2]["secret"], "Split Co:carol", "", None, None, None),
]
batch_two = [
    otp_parameters(T[3]["secret"], T[3]["account"], T[3]["issuer"], "SHA512", 8, "totp"),
    otp_parameters(T[4]["secret"], T[4]["account"], T[4]["issuer"], "SHA1", 6, "hotp", counter=7),
    otp_parameters(secret("google-md5", 20), "frank", "Old MD5", "MD5", 6, "totp"),
    otp_parameters(b"", "grace", "Empty Secret", "SHA1", 6, "totp"),
]
BATCH_ID = -1320898453

line_one = uri(payload(batch_one, 2, 0, BATCH_ID))
# Pick the raw-'+' form for the second QR code and make sure it really has a '+' to get wrong.
line_two = uri(payload(batch_two, 2, 1, BATCH_ID), raw_plus=True)
assert "+" in line_two, "choose other secrets: the second payload's base64 has no '+'"
assert varint(BATCH_ID)[-1] == 0x01 and len(varint(BATCH_ID)) == 10

with open(os.path.join(HERE, "export.txt"), "w") as handle:
    handle.write("# Google Authenticator export, one line per QR code\n\n" + line_one + "\n" + line_two + "\n")

missing_entries = [otp_parameters(T[0]["secret"], T[0]["account"], T[0]["issuer"], "SHA1", 6, "totp")]
with open(os.path.join(HERE, "missing.txt"), "w") as handle:
    handle.write(uri(payload(missing_entries, 3, 0, 42)) + "\n")
    handle.write(uri(payload([missing_entries[0]], 3, 2, 42)) + "\n")

write_json(os.path.join(HERE, "expected.json"), {
    "export": {
        "items": [expected_item(token) for token in T],
        "problems": [
            {"entry": "Old MD5 (frank)", "reason": "MD5"},
            {"entry": "Empty Secret (grace)", "reason": "empty"},
        ],
    },
    "missing": {"itemCount": 2, "problems": [{"entry": "export", "reason": "batch 2 of 3 missing"}]},
})
