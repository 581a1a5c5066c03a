#!/usr/bin/env python3
"""Writes the 2FAS backup fixtures and expected.json (codes from an RFC 4226/6238 implementation written here).

Format (2fas-android BackupContent / BackupCipherImpl): a JSON object with schemaVersion 1-4, `groups` [{id, name}]
in the clear and either `services` [...] or `servicesEncrypted` = base64(ciphertext||tag):base64(salt):base64(iv),
AES-256-GCM under PBKDF2-HMAC-SHA256(password, salt, 10,000 iterations, 32 bytes), 256-byte salt, 12-byte IV.
Requires: python3 -m pip install cryptography
Run from anywhere: python3 make_2fas.py
"""
import base64, json, os, sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"

# Codes come from the shared RFC 4226/6238 reference beside this folder, which checks itself against RFC 6238 first.
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, code, secret as det_bytes, self_test  # noqa: E402

self_test()

PASSWORD = "correct horse 2fas"
TIMES = [59, 1111111109, 1234567890, 2000000000]


# (service name, issuer, account, secret, algorithm, digits, tokenType, period, counter, group)
CANONICAL = [
    ("GitHub", "GitHub", "alice@example.com", b"12345678901234567890", "SHA1", 6, "TOTP", 30, None, "g-work"),
    ("Example 256", "Example", "bob", b"12345678901234567890123456789012", "SHA256", 7, "TOTP", 50, None, None),
    ("Big Corp", "Big Corp", "carol", b"1234567890" * 6 + b"1234", "SHA512", 8, "TOTP", 20, None, "g-work"),
    ("Counter Co", "Counter Co", "dave", b"12345678901234567890", "SHA1", 6, "HOTP", 30, 5, "g-home"),
    ("Steam", "Steam", "gamer", det_bytes("steam", 20), "SHA1", 5, "STEAM", 30, None, None),
    # No otp.issuer: the service name becomes the issuer; account comes from the label after its colon.
    ("NoIssuer Inc", None, None, det_bytes("noissuer", 16), "SHA1", 6, "TOTP", 30, None, None),
]


def service(name, issuer, account, secret, algorithm, digits, token_type, period, counter, group, position):
    otp = {"link": "", "label": f"{name}:erin" if account is None else f"{issuer}:{account}",
           "digits": digits, "period": period, "algorithm": algorithm, "tokenType": token_type, "source": "Link"}
    if issuer is not None:
        otp["issuer"] = issuer
    if account is not None:
        otp["account"] = account
    if counter is not None:
        otp["counter"] = counter
    entry = {"name": name, "secret": b32(secret), "updatedAt": 1700000000000, "serviceTypeID": None,
             "otp": otp, "order": {"position": position}, "badge": None, "icon": None}
    if group is not None:
        entry["groupId"] = group
    return entry


services = [service(*row, position=i) for i, row in enumerate(CANONICAL)]
# Bad entries: each must become one problem, not stop the import.
services.append({"name": "Bad Secret", "secret": "NOT*BASE32!", "otp": {"issuer": "Bad Secret", "account": "x",
                 "tokenType": "TOTP"}})
services.append({"name": "MD5 Token", "secret": b32(det_bytes("md5", 20)), "otp": {"issuer": "MD5 Token",
                 "account": "y", "algorithm": "MD5", "tokenType": "TOTP"}})
services.append({"name": "Wrong Types", "secret": b32(det_bytes("types", 20)), "otp": {"issuer": "Wrong Types",
                 "account": "z", "digits": "six", "tokenType": "TOTP"}})
services.append({"name": "HOTP No Counter", "secret": b32(det_bytes("nocounter", 20)),
                 "otp": {"issuer": "HOTP No Counter", "account": "w", "tokenType": "HOTP"}})
services.append("not an object")

groups = [{"id": "g-work", "name": "Work", "isExpanded": True, "updatedAt": 0},
          {"id": "g-home", "name": "Home", "isExpanded": False, "updatedAt": 0}]

common = {"groups": groups, "updatedAt": 1700000000000, "schemaVersion": 4, "appVersionCode": 5000000,
          "appVersionName": "5.0.0", "appOrigin": "android"}

with open(os.path.join(HERE, "plain.2fas"), "w") as f:
    json.dump(dict(common, services=services), f, indent=2)

# Schema version 1 style: no groups, no tokenType, plain TOTP only.
v1 = {"schemaVersion": 1, "services": [{"name": "Legacy", "secret": b32(b"12345678901234567890"),
      "otp": {"issuer": "Legacy", "account": "old@example.com", "digits": 6, "period": 30, "algorithm": "SHA1"}}]}
with open(os.path.join(HERE, "v1.2fas"), "w") as f:
    json.dump(v1, f, indent=2)

salt = det_bytes("salt", 256)
key = PBKDF2HMAC(algorithm=SHA256(), length=32, salt=salt, iterations=1 if FLOOR else 10_000).derive(PASSWORD.encode())
iv_services, iv_reference = det_bytes("iv-services", 12), det_bytes("iv-reference", 12)
services_ct = AESGCM(key).encrypt(iv_services, json.dumps(services).encode(), None)
reference_ct = AESGCM(key).encrypt(iv_reference, b"reference-text-of-the-fixture", None)


def join(ct, iv):
    return ":".join(base64.b64encode(part).decode() for part in (ct, salt, iv))


with open(os.path.join(HERE, "encrypted.2fas"), "w") as f:
    json.dump(dict(common, services=[], servicesEncrypted=join(services_ct, iv_services),
                   reference=join(reference_ct, iv_reference)), f, indent=2)

expected = []
for name, issuer, account, secret, algorithm, digits, token_type, period, counter, group in CANONICAL:
    kind = token_type.lower()
    codes = {}
    for t in TIMES:
        if kind == "hotp":
            codes[str(t)] = code(secret, counter, digits, algorithm)
        elif kind == "steam":
            codes[str(t)] = code(secret, t // 30, 5, "SHA1", steam_guard=True)
        else:
            codes[str(t)] = code(secret, t // period, digits, algorithm)
    expected.append({"issuer": issuer or name, "account": account or "erin", "algorithm": algorithm,
                     "digits": digits, "kind": kind, "period": period if kind != "hotp" else None,
                     "counter": counter, "tags": [{"g-work": "Work", "g-home": "Home"}[group]] if group else [],
                     "codes": codes})

with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump({"password": PASSWORD, "problems": 5, "entries": expected,
               "v1": {"issuer": "Legacy", "account": "old@example.com",
                      "codes": {str(t): code(b"12345678901234567890", t // 30, 6, "SHA1") for t in TIMES}}},
              f, indent=2)
