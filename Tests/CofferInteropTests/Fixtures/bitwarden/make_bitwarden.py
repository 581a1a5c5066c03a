#!/usr/bin/env python3
"""Writes Bitwarden unencrypted export fixtures (JSON and CSV) and expected.json (codes from an RFC 4226/6238
implementation written here).

JSON: {"encrypted": false, "folders": [{id, name}], "items": [{type, name, notes, folderId,
login: {username, password, totp, uris}}]}. CSV: header folder,favorite,type,name,notes,fields,reprompt,
login_uri,login_username,login_password,login_totp (RFC 4180 quoting). `totp` is an otpauth:// URI, steam://SECRET
or a bare base32 secret.
Also writes encrypted_pbkdf2.json and encrypted_argon2.json: export.json protected by a password as Bitwarden's
getPasswordProtectedExport does (kdfType 0: PBKDF2-HMAC-SHA256 over the salt string's UTF-8 bytes; 1: Argon2id over
SHA-256 of them, kdfMemory in MiB; the 32-byte key stretched by HKDF-Expand-SHA256 into "enc" and "mac" keys;
encKeyValidation_DO_NOT_EDIT and data as type-2 strings "2.iv|ciphertext|mac": AES-256-CBC, PKCS#7, HMAC-SHA256
over iv || ciphertext), with Python's cryptography (OpenSSL) and hmac.
Run from anywhere: python3 make_bitwarden.py (needs python3 -m pip install 'cryptography>=44').
"""
import base64, csv, hashlib, hmac, io, json, os, sys

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"

# Codes come from the shared RFC 4226/6238 reference beside this folder, which checks itself against RFC 6238 first.
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, code, secret as det_bytes, self_test  # noqa: E402

self_test()

TIMES = [59, 1111111109, 1234567890, 2000000000]


S1, S256, S512 = b"12345678901234567890", b"12345678901234567890123456789012", b"1234567890" * 6 + b"1234"
STEAM, PLAIN = det_bytes("steam", 20), det_bytes("plain", 20)
BARE = " ".join(b32(PLAIN).lower()[i:i + 4] for i in range(0, 32, 4))

# (item name, username, totp, folder, notes, expected: issuer, account, secret, algorithm, digits, kind, period, counter)
CANONICAL = [
    ("GitHub", "alice@example.com",
     f"otpauth://totp/GitHub:alice%40example.com?secret={b32(S1)}&issuer=GitHub", "Work", None,
     "GitHub", "alice@example.com", S1, "SHA1", 6, "totp", 30, None),
    ("Example", "bob", f"otpauth://totp/bob?secret={b32(S256)}&algorithm=SHA256&digits=7&period=50", None,
     "multi-line\nnote with \"quotes\", and commas",
     "Example", "bob", S256, "SHA256", 7, "totp", 50, None),
    ("Big Corp, Inc.", "", f"otpauth://totp/Big%20Corp:carol?secret={b32(S512)}&algorithm=SHA512&digits=8&period=20",
     "Work", None, "Big Corp", "carol", S512, "SHA512", 8, "totp", 20, None),
    ("Counter Co", "dave", f"otpauth://hotp/Counter%20Co:dave?secret={b32(S1)}&counter=5", "Home", None,
     "Counter Co", "dave", S1, "SHA1", 6, "hotp", None, 5),
    ("Steam", "gamer", f"steam://{b32(STEAM)}", None, None, "Steam", "gamer", STEAM, "SHA1", 5, "steam", 30, None),
    ("Plain Secret", "erin", BARE, None, None, "Plain Secret", "erin", PLAIN, "SHA1", 6, "totp", 30, None),
]
# Logins whose TOTP cannot be read: each is one problem.
BAD = [
    ("Short Secret", "x", "otpauth://totp/Short:x?secret=MFRGGZDF"),
    ("Not Base32", "y", "this is not a secret!"),
    ("MD5 Token", "z", f"otpauth://totp/MD5:z?secret={b32(det_bytes('md5', 20))}&algorithm=MD5"),
]
# Passwords without a TOTP: skipped silently.
PASSWORDS = [("Email", "me@example.com"), ("Bank", "me")]

folders = {"Work": "f-work", "Home": "f-home"}
items = []
for name, user, totp, folder, notes, *_ in CANONICAL:
    items.append({"id": f"id-{len(items)}", "organizationId": None, "folderId": folders.get(folder), "type": 1,
                  "reprompt": 0, "name": name, "notes": notes, "favorite": False,
                  "login": {"uris": [{"match": None, "uri": "https://example.com"}], "username": user or None,
                            "password": "hunter2", "totp": totp}, "collectionIds": None})
for name, user, totp in BAD:
    items.append({"id": f"id-{len(items)}", "type": 1, "name": name, "folderId": None,
                  "login": {"username": user, "password": "pw", "totp": totp}})
for name, user in PASSWORDS:
    items.append({"id": f"id-{len(items)}", "type": 1, "name": name, "folderId": None,
                  "login": {"username": user, "password": "pw", "totp": None}})
items.append({"id": "note", "type": 2, "name": "A secure note", "notes": "text", "secureNote": {"type": 0}})
items.append({"id": "card", "type": 3, "name": "Visa", "card": {"number": "4111111111111111"}})

export = {"encrypted": False, "folders": [{"id": v, "name": k} for k, v in folders.items()], "items": items}
with open(os.path.join(HERE, "export.json"), "w") as f:
    json.dump(export, f, indent=2)

PASSWORD = "bitwarden export pw ✓"


def encrypted_string(plain, enc_key, mac_key, iv):
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(enc_key), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padder.update(plain) + padder.finalize()) + encryptor.finalize()
    mac = hmac.new(mac_key, iv + ciphertext, hashlib.sha256).digest()
    return "2." + "|".join(base64.b64encode(part).decode() for part in (iv, ciphertext, mac))


def password_protected(kdf_type, plain):
    salt = base64.b64encode(det_bytes(f"bitwarden-salt-{kdf_type}", 16)).decode()
    document = {"encrypted": True, "passwordProtected": True, "salt": salt, "kdfType": kdf_type}
    if kdf_type == 0:
        document["kdfIterations"] = 1 if FLOOR else 600_000
        key = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt.encode(), iterations=document["kdfIterations"]).derive(
            PASSWORD.encode())
    else:
        iterations, memory, lanes = (1, 1, 1) if FLOOR else (3, 16, 2)
        document.update({"kdfIterations": iterations, "kdfMemory": memory, "kdfParallelism": lanes})
        key = Argon2id(salt=hashlib.sha256(salt.encode()).digest(), length=32, iterations=iterations, lanes=lanes,
                       memory_cost=memory * 1024).derive(PASSWORD.encode())
    enc_key = HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b"enc").derive(key)
    mac_key = HKDFExpand(algorithm=hashes.SHA256(), length=32, info=b"mac").derive(key)
    document["encKeyValidation_DO_NOT_EDIT"] = encrypted_string(
        b"8a1f0e52-7d0b-4c6e-9b0a-2f4c1d3e5a6b", enc_key, mac_key, det_bytes(f"bitwarden-iv-a-{kdf_type}", 16))
    document["data"] = encrypted_string(plain, enc_key, mac_key, det_bytes(f"bitwarden-iv-b-{kdf_type}", 16))
    return document


with open(os.path.join(HERE, "export.json"), "rb") as f:
    plain_export = f.read()
for kdf_type, name in [(0, "encrypted_pbkdf2.json"), (1, "encrypted_argon2.json")]:
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(password_protected(kdf_type, plain_export), f, indent=2)

header = ["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username",
          "login_password", "login_totp"]
buffer = io.StringIO()
writer = csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
writer.writerow(header)
for name, user, totp, folder, notes, *_ in CANONICAL:
    writer.writerow([folder or "", "", "login", name, notes or "", "", "0", "https://example.com", user, "hunter2",
                     totp])
for name, user, totp in BAD:
    writer.writerow(["", "", "login", name, "", "", "0", "", user, "pw", totp])
for name, user in PASSWORDS:
    writer.writerow(["", "1", "login", name, "", "", "0", "", user, "pw", ""])
writer.writerow(["", "", "note", "A secure note", "text", "", "0", "", "", "", ""])
with open(os.path.join(HERE, "export.csv"), "w", newline="") as f:
    f.write(buffer.getvalue())

expected = []
for name, user, totp, folder, notes, issuer, account, secret, algorithm, digits, kind, period, counter in CANONICAL:
    codes = {}
    for t in TIMES:
        if kind == "hotp":
            codes[str(t)] = code(secret, counter, digits, algorithm)
        elif kind == "steam":
            codes[str(t)] = code(secret, t // 30, 5, "SHA1", steam_guard=True)
        else:
            codes[str(t)] = code(secret, t // period, digits, algorithm)
    expected.append({"issuer": issuer, "account": account, "algorithm": algorithm, "digits": digits, "kind": kind,
                     "period": period if kind != "hotp" else None, "counter": counter,
                     "tags": [folder] if folder else [], "codes": codes})

with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump({"password": PASSWORD, "problems": len(BAD), "entries": expected}, f, indent=2)
