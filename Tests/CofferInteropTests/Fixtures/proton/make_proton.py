"""Writes export.json (a Proton Authenticator plaintext export: entries holding otpauth:// and steam:// URIs, plus
bad entries), encrypted.json (the same export protected by a password, as proton-pass-common's
export_entries_with_password writes it: Argon2id v0x13, 19456 KiB, 2 passes, 1 lane, of the password and a 16-byte
salt; AES-256-GCM with a 12-byte nonce and associated data "proton.authenticator.export.v1"; Argon2id and AES-GCM
from Python's cryptography, i.e. OpenSSL) and expected.json (codes from otp_reference.py).
Requires: python3 -m pip install 'cryptography>=44'. Run from anywhere: python3 make_proton.py"""

import base64
import json
import os
import sys
from urllib.parse import quote

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

TOKENS = [
    dict(issuer="GitHub", account="alice@example.com", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("proton-github", 20), notes="recovery codes in the safe"),
    dict(issuer="Example", account="bob", kind="totp", algorithm="SHA256", digits=8, period=20,
         secret=secret("proton-example", 32)),
    dict(issuer="Big Corp", account="carol", kind="totp", algorithm="SHA512", digits=7, period=50,
         secret=secret("proton-bigcorp", 64)),
    # steam://SECRET carries no name: the issuer is "Steam" and the account is the entry's name.
    dict(issuer="Steam", account="gamer", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("proton-steam", 20)),
]
t = TOKENS


def entry(number, uri, name, entry_type="Totp", note=None):
    return {"id": f"00000000-0000-4000-8000-{number:012d}",
            "content": {"uri": uri, "entry_type": entry_type, "name": name}, "note": note}


entries = [
    entry(1, f"otpauth://totp/GitHub:{quote('alice@example.com')}?secret={b32(t[0]['secret'])}&issuer=GitHub"
             "&algorithm=SHA1&digits=6&period=30", "GitHub", note=t[0]["notes"]),
    entry(2, f"otpauth://totp/Example:bob?secret={b32(t[1]['secret'])}&issuer=Example&algorithm=SHA256&digits=8"
             "&period=20", "Example"),
    entry(3, f"otpauth://totp/{quote('Big Corp')}:carol?secret={b32(t[2]['secret'])}&algorithm=SHA512&digits=7"
             "&period=50", "Big Corp"),
    entry(4, f"steam://{b32(t[3]['secret'])}", "gamer", entry_type="Steam"),
    entry(5, "otpauth://totp/Broken?secret=0189ABCD0189", "Broken"),
    entry(6, "https://example.com/", "NotOTP"),
    {"id": "7", "content": {"name": "NoURI", "entry_type": "Totp"}, "note": None},
    {"id": "8", "content": "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", "note": None},
]
problems = [
    {"entry": "Broken", "reason": "secret"},
    {"entry": "NotOTP", "reason": "scheme"},
    {"entry": "NoURI", "reason": "uri is missing"},
    {"entry": "entry 8", "reason": "content"},
]
with open(os.path.join(HERE, "export.json"), "w") as handle:
    json.dump({"version": 1, "entries": entries}, handle, indent=2)
    handle.write("\n")

PASSWORD = "proton export pw ✓"
salt, nonce = secret("proton-salt", 16), secret("proton-nonce", 12)
key = Argon2id(salt=salt, length=32, iterations=1 if FLOOR else 2, lanes=1, memory_cost=8 if FLOOR else 19 * 1024).derive(PASSWORD.encode())
with open(os.path.join(HERE, "export.json"), "rb") as handle:
    plain = handle.read()
sealed = nonce + AESGCM(key).encrypt(nonce, plain, b"proton.authenticator.export.v1")
with open(os.path.join(HERE, "encrypted.json"), "w") as handle:
    json.dump({"version": 1, "salt": base64.b64encode(salt).decode(), "content": base64.b64encode(sealed).decode()},
              handle)
    handle.write("\n")

write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    "items": [expected_item(token) for token in TOKENS],
    "problems": problems,
})
