"""Writes Stratum (Authenticator Pro) backups and expected.json (codes from otp_reference.py): backup.json (plain),
backup.authpro (Stratum's StrongBackupEncryption: "AUTHENTICATORPRO", 16-byte salt, 12-byte IV, AES-256-GCM under
Argon2id v0x13 with 3 passes, 64 MiB, 4 lanes) and backup_legacy.authpro (LegacyBackupEncryption:
"AuthenticatorPro", 20-byte salt, 16-byte IV, AES-256-CBC/PKCS#7 under PBKDF2-HMAC-SHA1 with 64,000 iterations).
Argon2id, PBKDF2 and AES from Python's cryptography (OpenSSL). Run: python3 make_stratum.py"""

import json
import os
import sys

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

PASSWORD = "stratum backup pw ✓"
TOKENS = [
    dict(issuer="GitHub", account="alice", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("stratum-github", 20), type=2, algo=0),
    dict(issuer="Bank", account="bob", kind="totp", algorithm="SHA512", digits=8, period=60,
         secret=secret("stratum-bank", 64), type=2, algo=2),
    dict(issuer="VPN", account="carol", kind="hotp", algorithm="SHA256", digits=6, counter=5,
         secret=secret("stratum-vpn", 32), type=1, algo=1),
    dict(issuer="Steam", account="gamer", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("stratum-steam", 20), type=4, algo=0),
]


def authenticator(token):
    return {"Type": token["type"], "Icon": "github", "Issuer": token["issuer"], "Username": token["account"],
            "Secret": b32(token["secret"]), "Pin": None, "Algorithm": token["algo"], "Digits": token["digits"],
            "Period": token.get("period", 30), "Counter": token.get("counter", 0), "CopyCount": 0, "Ranking": 0}


backup = {
    "Authenticators": [authenticator(token) for token in TOKENS] + [
        {"Type": 3, "Issuer": "mOTP", "Username": "old", "Secret": "abcdef0123456789", "Algorithm": 0, "Digits": 6,
         "Period": 10, "Counter": 0},
    ],
    "Categories": [{"Id": "c1", "Name": "Work", "Ranking": 0}],
    "AuthenticatorCategories": [{"CategoryId": "c1", "AuthenticatorSecret": b32(TOKENS[0]["secret"]), "Ranking": 0}],
    "CustomIcons": [],
}
plain = json.dumps(backup).encode()
with open(os.path.join(HERE, "backup.json"), "wb") as handle:
    handle.write(plain)

salt, iv = secret("stratum-salt", 16), secret("stratum-iv", 12)
key = Argon2id(salt=salt, length=32, iterations=1 if FLOOR else 3, lanes=1 if FLOOR else 4, memory_cost=8 if FLOOR else 65536).derive(PASSWORD.encode())
with open(os.path.join(HERE, "backup.authpro"), "wb") as handle:
    handle.write(b"AUTHENTICATORPRO" + salt + iv + AESGCM(key).encrypt(iv, plain, None))

salt, iv = secret("stratum-legacy-salt", 20), secret("stratum-legacy-iv", 16)
key = PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt, iterations=1 if FLOOR else 64000).derive(PASSWORD.encode())
padder = padding.PKCS7(128).padder()
encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
with open(os.path.join(HERE, "backup_legacy.authpro"), "wb") as handle:
    handle.write(b"AuthenticatorPro" + salt + iv + encryptor.update(padder.update(plain) + padder.finalize())
                 + encryptor.finalize())

write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    "items": [expected_item(token, ["Work"] if token is TOKENS[0] else []) for token in TOKENS],
    "problems": [{"entry": "mOTP (old)", "reason": "not supported"}],
})
