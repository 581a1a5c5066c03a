"""Writes FreeOTP fixtures and expected.json (codes from otp_reference.py).

tokens.xml: FreeOTP 1.x's shared_prefs/tokens.xml, a <map> of strings: tokenOrder (JSON array of token ids) and one
string per token, named "issuer:label", holding the token JSON (algo, counter, digits, issuerExt, issuerInt, label,
period, secret as signed Java bytes, type). A TOTP token whose issuerExt is "Steam" gives Steam codes; counters are
imported as stored.

externalBackup.xml: FreeOTP 2's backup, a Java-serialised java.util.HashMap<String,String> (ObjectOutputStream:
class description with fields loadFactor and threshold, capacity and size, then key and value strings in modified
UTF-8, in the order Java's HashMap iterates them). "masterKey" is JSON: PBKDF2withHmacSHA512 of the password
(mSalt 32 bytes, mIterations, 32-byte key) opens mEncryptedKey, the 32-byte master key sealed with AES-256-GCM
(AAD "AES", mParameters DER 30 11 04 0C <nonce> 02 01 10). Each token is "<uuid>" = {"key": "<AES-GCM box JSON>"}
(its secret sealed under the master key, AAD = mToken "HmacSHA1"...) and "<uuid>-token" = the token JSON without
the secret. The app writes mIterations 100,000; these files carry 1,000 to keep the tests fast.
externalBackup_sha1.xml: the same tokens as the oldest apps wrote them: PBKDF2withHmacSHA1, the master key's
mParameters a bare OCTET STRING (04 0C <nonce>), and a HashMap class description with loadFactor only.

One label holds a character beyond the BMP, which modified UTF-8 writes as two 3-byte surrogates. PBKDF2 and AES-GCM
from Python's cryptography (OpenSSL). Run: python3 make_freeotp.py"""

import json
import os
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import expected_item, secret, write_json  # noqa: E402

PASSWORD = "freeotp backup pw ✓"
ITERATIONS = 1 if FLOOR else 1000
TOKENS = [
    dict(issuer="GitHub", account="alice", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("freeotp1-github", 20)),
    dict(issuer="Zürich Bank", account="anna 🔑", kind="totp", algorithm="SHA256", digits=8, period=60,
         secret=secret("freeotp1-zurich", 32)),
    dict(issuer="Example", account="carol", kind="totp", algorithm="SHA512", digits=7, period=15,
         secret=secret("freeotp1-example", 64)),
    dict(issuer="Counter", account="dave", kind="hotp", algorithm="SHA1", digits=6, counter=9,
         secret=secret("freeotp1-counter", 10)),
    dict(issuer="Steam", account="gamer", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("freeotp1-steam", 20)),
]
# Type MOTP: FreeOTP never made one, Coffer cannot use one.
UNSUPPORTED = dict(issuer="Legacy", account="frank", kind="motp", algorithm="SHA1", digits=6, period=10,
                   secret=secret("freeotp1-motp", 16))
# Its sealed secret fails GCM authentication (one byte flipped): FreeOTP 2 backups can be damaged.
DAMAGED = dict(issuer="Damaged", account="gina", kind="totp", algorithm="SHA1", digits=6, period=30,
               secret=secret("freeotp1-damaged", 20))


def signed(data):
    return [b - 256 if b > 127 else b for b in data]


def token_json(token, with_secret):
    value = {"algo": token["algorithm"], "digits": token["digits"], "issuerExt": token["issuer"],
             "issuerInt": token["issuer"], "label": token["account"]}
    if token["kind"] == "hotp":
        value["counter"] = token["counter"]
    else:
        value["period"] = token.get("period", 30)
    if with_secret:
        value.update(counter=token.get("counter", 0), secret=signed(token["secret"]))
    value["type"] = {"steam": "TOTP"}.get(token["kind"], token["kind"].upper())
    return value


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


# FreeOTP 1.x tokens.xml
v1 = TOKENS + [UNSUPPORTED]
ids = [f"{t['issuer']}:{t['account']}" for t in v1]
lines = ["<?xml version='1.0' encoding='utf-8' standalone='yes' ?>", "<map>",
         f'    <string name="tokenOrder">{escape(compact(ids))}</string>']
lines += [f'    <string name="{escape(i)}">{escape(compact(token_json(t, True)))}</string>' for i, t in zip(ids, v1)]
with open(os.path.join(HERE, "tokens.xml"), "w", encoding="utf-8") as handle:
    handle.write("\n".join(lines + ["</map>", ""]))


# FreeOTP 2 backup
def der_nonce(nonce, bare=False):
    octets = bytes([0x04, len(nonce)]) + nonce
    return octets if bare else bytes([0x30, len(octets) + 3]) + octets + bytes([0x02, 0x01, 0x10])


def box(key, plain, token, label, bare=False):
    nonce = secret("freeotp2-nonce-" + label, 12)
    return {"mCipher": "AES/GCM/NoPadding", "mCipherText": signed(AESGCM(key).encrypt(nonce, plain, token.encode())),
            "mParameters": signed(der_nonce(nonce, bare)), "mToken": token}


def uuid(label):
    h = secret("freeotp2-uuid-" + label, 16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def java_hash(text):
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h ^ (h >> 16)


def modified_utf8(text):
    out = bytearray()
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        c = int.from_bytes(units[i:i + 2], "big")
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes([0xC0 | c >> 6, 0x80 | c & 0x3F])
        else:
            out += bytes([0xE0 | c >> 12, 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F])
    return bytes(out)


def java_hashmap(pairs, fields):
    """ObjectOutputStream bytes of a java.util.HashMap<String,String> holding `pairs` (insertion order)."""
    capacity = 16
    while len(pairs) > capacity * 3 // 4:
        capacity *= 2
    order = sorted(range(len(pairs)), key=lambda i: (java_hash(pairs[i][0]) & (capacity - 1), i))
    out = b"\xac\xed\x00\x05\x73\x72" + struct.pack(">H", 17) + b"java.util.HashMap"
    out += struct.pack(">q", 362498820763181265) + b"\x03" + struct.pack(">H", len(fields))
    for name in fields:
        out += (b"F" if name == "loadFactor" else b"I") + struct.pack(">H", len(name)) + name.encode()
    out += b"\x78\x70" + struct.pack(">f", 0.75)
    if "threshold" in fields:
        out += struct.pack(">i", capacity * 3 // 4)
    out += b"\x77\x08" + struct.pack(">ii", capacity, len(pairs))
    for i in order:
        for text in pairs[i]:
            data = modified_utf8(text)
            out += b"\x74" + struct.pack(">H", len(data)) + data
    return out + b"\x78"


def backup(path, kdf, fields, bare):
    master = secret("freeotp2-master-key", 32)
    salt = secret("freeotp2-salt-" + kdf, 32)
    hash_algorithm = hashes.SHA512() if kdf.endswith("SHA512") else hashes.SHA1()
    pass_key = PBKDF2HMAC(algorithm=hash_algorithm, length=32, salt=salt, iterations=ITERATIONS) \
        .derive(PASSWORD.encode())
    pairs = []
    for token in TOKENS + [UNSUPPORTED, DAMAGED]:
        label = token["issuer"] + token["account"]
        sealed = box(master, token["secret"], "Hmac" + token["algorithm"], label)
        if token is DAMAGED:
            sealed["mCipherText"][3] = sealed["mCipherText"][3] ^ 1
        pairs.append((uuid(label) + "-token", compact(token_json(token, False))))
        pairs.append((uuid(label), compact({"key": compact(sealed)})))
    pairs.insert(6, ("masterKey", compact({"mAlgorithm": kdf, "mEncryptedKey": box(pass_key, master, "AES", kdf, bare),
                                           "mIterations": ITERATIONS, "mSalt": signed(salt)})))
    with open(os.path.join(HERE, path), "wb") as handle:
        handle.write(java_hashmap(pairs, fields))


backup("externalBackup.xml", "PBKDF2withHmacSHA512", ["loadFactor", "threshold"], bare=False)
backup("externalBackup_sha1.xml", "PBKDF2withHmacSHA1", ["loadFactor"], bare=True)

write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    # tokens.xml
    "items": [expected_item(token) for token in TOKENS],
    "problems": [{"entry": "Legacy (frank)", "reason": None}],
    # externalBackup.xml and externalBackup_sha1.xml
    "backup_problems": [{"entry": "Damaged (gina)", "reason": None}, {"entry": "Legacy (frank)", "reason": None}],
})
