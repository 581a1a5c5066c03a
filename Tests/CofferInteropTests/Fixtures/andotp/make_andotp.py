#!/usr/bin/env python3
"""Writes the andOTP backup fixtures and expected.json (codes from an RFC 4226/6238 implementation written here).

Formats (andOTP BackupHelper / EncryptionHelper / Constants):
- plain: a JSON array of entries {secret, issuer, label, digits, type, algorithm, period | counter, tags, ...};
- encrypted (.json.aes): 4-byte big-endian PBKDF2 iteration count, 12-byte salt, 12-byte IV, AES-256-GCM
  ciphertext and 16-byte tag; key = PBKDF2-HMAC-SHA1(password, salt, iterations, 32 bytes);
- old encrypted: 12-byte IV, ciphertext, tag; key = SHA-256(password).
Requires: python3 -m pip install cryptography
Run from anywhere: python3 make_andotp.py
"""
import hashlib, json, os, struct, sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA1
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"

# Codes come from the shared RFC 4226/6238 reference beside this folder, which checks itself against RFC 6238 first.
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, code, secret as det_bytes, self_test  # noqa: E402

self_test()

PASSWORD = "andOTP backup pw"
ITERATIONS = 1 if FLOOR else 150_000
TIMES = [59, 1111111109, 1234567890, 2000000000]


# (issuer, label, secret, algorithm, digits, type, period, counter, tags, expected issuer, expected account)
CANONICAL = [
    ("GitHub", "alice@example.com", b"12345678901234567890", "SHA1", 6, "TOTP", 30, None, ["Work"],
     "GitHub", "alice@example.com"),
    ("Example", "bob", b"12345678901234567890123456789012", "SHA256", 7, "TOTP", 50, None, [], "Example", "bob"),
    ("Big Corp", "carol", b"1234567890" * 6 + b"1234", "SHA512", 8, "TOTP", 20, None, ["Work", "Finance"],
     "Big Corp", "carol"),
    ("Counter Co", "dave", b"12345678901234567890", "SHA1", 6, "HOTP", None, 5, ["Home"], "Counter Co", "dave"),
    ("Steam", "gamer", det_bytes("steam", 20), "SHA1", 5, "STEAM", 30, None, [], "Steam", "gamer"),
    # Old andOTP entries have no issuer field; the label holds "Issuer - account".
    (None, "Legacy Bank - erin", det_bytes("legacy", 16), "SHA1", 6, "TOTP", 30, None, [], "Legacy Bank", "erin"),
    # Older andOTP versions kept an otpauth label whole ("Issuer:account", as in Aegis's andotp_encrypted_old.bin):
    # split by the Key URI rules, at the last colon, the prefix giving the issuer when there is none, and dropped
    # when it repeats the issuer; a prefix that is not the issuer is kept in the account.
    (None, "Airbnb:Elijah", det_bytes("airbnb", 20), "SHA1", 6, "TOTP", 30, None, [], "Airbnb", "Elijah"),
    ("Airbnb", "airbnb: Frank", det_bytes("frank", 20), "SHA1", 6, "TOTP", 30, None, [], "Airbnb", "Frank"),
    ("Big Corp", "carol:admin", det_bytes("carol-admin", 20), "SHA1", 6, "TOTP", 30, None, [], "Big Corp",
     "carol:admin"),
]


def entry(issuer, label, secret, algorithm, digits, kind, period, counter, tags):
    e = {"secret": b32(secret), "label": label, "digits": digits, "type": kind, "algorithm": algorithm,
         "thumbnail": "Default", "last_used": 1700000000000, "used_frequency": 0, "tags": tags}
    if issuer is not None:
        e["issuer"] = issuer
    if period is not None:
        e["period"] = period
    if counter is not None:
        e["counter"] = counter
    return e


entries = [entry(*row[:9]) for row in CANONICAL]
entries.append({"secret": "", "issuer": "Empty Secret", "label": "x", "digits": 6, "type": "TOTP",
                "algorithm": "SHA1", "period": 30, "tags": []})
entries.append({"secret": b32(det_bytes("motp", 20)), "issuer": "Unknown Type", "label": "y", "digits": 6,
                "type": "MOTP", "algorithm": "SHA1", "period": 30, "tags": []})
entries.append({"secret": b32(det_bytes("period", 20)), "issuer": "Bad Period", "label": "z", "digits": 6,
                "type": "TOTP", "algorithm": "SHA1", "period": "thirty", "tags": []})
entries.append(42)

plain = json.dumps(entries, indent=2).encode()
with open(os.path.join(HERE, "plain.json"), "wb") as f:
    f.write(plain)

salt, iv = det_bytes("salt", 12), det_bytes("iv", 12)
key = PBKDF2HMAC(algorithm=SHA1(), length=32, salt=salt, iterations=ITERATIONS).derive(PASSWORD.encode())
with open(os.path.join(HERE, "encrypted.json.aes"), "wb") as f:
    f.write(struct.pack(">I", ITERATIONS) + salt + iv + AESGCM(key).encrypt(iv, plain, None))

old_iv = det_bytes("old-iv", 12)
old_key = hashlib.sha256(PASSWORD.encode()).digest()
with open(os.path.join(HERE, "old-format.json.aes"), "wb") as f:
    f.write(old_iv + AESGCM(old_key).encrypt(old_iv, plain, None))

expected = []
for issuer, label, secret, algorithm, digits, kind, period, counter, tags, exp_issuer, exp_account in CANONICAL:
    kind = kind.lower()
    codes = {}
    for t in TIMES:
        if kind == "hotp":
            codes[str(t)] = code(secret, counter, digits, algorithm)
        elif kind == "steam":
            codes[str(t)] = code(secret, t // 30, 5, "SHA1", steam_guard=True)
        else:
            codes[str(t)] = code(secret, t // period, digits, algorithm)
    expected.append({"issuer": exp_issuer, "account": exp_account, "algorithm": algorithm, "digits": digits,
                     "kind": kind, "period": period if kind != "hotp" else None, "counter": counter, "tags": tags,
                     "codes": codes})

with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump({"password": PASSWORD, "problems": 4, "entries": expected}, f, indent=2)
