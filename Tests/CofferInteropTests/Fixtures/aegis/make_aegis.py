"""Writes Aegis vault fixtures following beemdevelopment/Aegis docs/vault.md, encrypted with Python `cryptography`
(Scrypt + AESGCM), and expected.json with codes at fixed times from otp_reference.py.

encrypted_v3.json  password "coffer test passphrase", scrypt N=2^15 r=8 p=1, content version 3 with groups; also a
                   biometric slot (skipped by importers) and motp/yandex/broken entries (problems)
encrypted_v1.json  same password, content version 1 (like Aegis' own aegis_encrypted.json)
plain_v2.json      plaintext (slots and params null), content version 2 with per-entry "group" names"""

import base64
import json
import os
import sys
import uuid

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

PASSWORD = "coffer test passphrase"


def fixed_bytes(label, length):
    return secret("aegis-bytes-" + label, length)


def fixed_uuid(label):
    return str(uuid.UUID(bytes=fixed_bytes("uuid-" + label, 16), version=4))


T = [
    dict(issuer="GitHub", account="alice@example.com", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("aegis-github", 20), tags=["Work"], notes="recovery codes in the safe"),
    dict(issuer="Example", account="bob", kind="totp", algorithm="SHA256", digits=8, period=20,
         secret=secret("aegis-example", 32), tags=["Work", "Personal"]),
    dict(issuer="Big Corp", account="carol", kind="totp", algorithm="SHA512", digits=7, period=50,
         secret=secret("aegis-bigcorp", 64), tags=[]),
    dict(issuer="Counter Inc", account="dave", kind="hotp", algorithm="SHA256", digits=6, counter=42,
         secret=secret("aegis-hotp", 32), tags=["Personal"]),
    dict(issuer="Steam", account="erin", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("aegis-steam", 20), tags=[]),
    # No issuer in the vault: Coffer keeps none (the name is the account).
    dict(issuer="", account="frank", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("aegis-noissuer", 20), tags=[]),
]
GROUPS = {"Work": fixed_uuid("group-work"), "Personal": fixed_uuid("group-personal")}


def entry(token, version):
    info = {"secret": b32(token["secret"]), "algo": token["algorithm"], "digits": token["digits"]}
    if token["kind"] == "hotp":
        info["counter"] = token["counter"]
    else:
        info["period"] = token.get("period", 30)
    issuer = token["issuer"]
    value = {"type": token["kind"], "uuid": fixed_uuid(token["account"]), "name": token["account"], "issuer": issuer,
             "note": token.get("notes", ""), "favorite": False, "icon": None, "info": info}
    if version >= 3:
        value["groups"] = [GROUPS[tag] for tag in token["tags"]]
    else:
        value["group"] = token["tags"][0] if token["tags"] else None
    return value


UNSUPPORTED = [
    {"type": "motp", "uuid": fixed_uuid("motp"), "name": "grace", "issuer": "mOTP Co", "note": "", "icon": None,
     "info": {"secret": "4MKSV7XGEWM4Q", "algo": "MD5", "digits": 6, "period": 10, "pin": "1234"}},
    {"type": "yandex", "uuid": fixed_uuid("yandex"), "name": "heidi", "issuer": "Yandex", "note": "", "icon": None,
     "info": {"secret": b32(secret("aegis-yandex", 16)), "algo": "SHA256", "digits": 8, "period": 30, "pin": "5239"}},
    {"type": "totp", "uuid": fixed_uuid("broken"), "name": "ivan", "issuer": "Broken", "note": "", "icon": None,
     "info": {"secret": "not base32!", "algo": "SHA1", "digits": 6, "period": 30}},
    {"type": "totp", "uuid": fixed_uuid("strdigits"), "name": "judy", "issuer": "Wrong Types", "note": "",
     "icon": None, "info": {"secret": b32(secret("aegis-types", 20)), "algo": "SHA1", "digits": "6", "period": 30}},
]
PROBLEMS = [
    {"entry": "mOTP Co (grace)", "reason": "unsupported type"},
    {"entry": "Yandex (heidi)", "reason": "unsupported type"},
    {"entry": "Broken (ivan)", "reason": "base32"},
    {"entry": "Wrong Types (judy)", "reason": "digits"},
]


def content(version, with_problems):
    value = {"version": version, "entries": [entry(token, version) for token in T]}
    if with_problems:
        value["entries"] += UNSUPPORTED
    if version >= 3:
        value["groups"] = [{"uuid": GROUPS[name], "name": name} for name in ["Work", "Personal"]]
    return value


def hexs(data):
    return data.hex()


def encrypted_vault(plaintext, label):
    master_key = fixed_bytes(label + "-master", 32)
    salt = fixed_bytes(label + "-salt", 32)
    slot_nonce = fixed_bytes(label + "-slot-nonce", 12)
    db_nonce = fixed_bytes(label + "-db-nonce", 12)
    n, r = (2, 1) if FLOOR else (2 ** 15, 8)
    derived = Scrypt(salt=salt, length=32, n=n, r=r, p=1).derive(PASSWORD.encode())
    wrapped = AESGCM(derived).encrypt(slot_nonce, master_key, None)  # ciphertext || 16-byte tag, no AAD
    sealed = AESGCM(master_key).encrypt(db_nonce, json.dumps(plaintext).encode(), None)
    biometric_key = AESGCM(fixed_bytes(label + "-keystore", 32)).encrypt(fixed_bytes(label + "-bio", 12), master_key, None)
    slots = [
        {"type": 2, "uuid": fixed_uuid(label + "-bio"), "key": hexs(biometric_key[:-16]),
         "key_params": {"nonce": hexs(fixed_bytes(label + "-bio", 12)), "tag": hexs(biometric_key[-16:])}},
        {"type": 1, "uuid": fixed_uuid(label + "-password"), "key": hexs(wrapped[:-16]),
         "key_params": {"nonce": hexs(slot_nonce), "tag": hexs(wrapped[-16:])},
         "n": n, "r": r, "p": 1, "salt": hexs(salt), "repaired": True, "is_backup": False},
    ]
    return {"version": 1,
            "header": {"slots": slots, "params": {"nonce": hexs(db_nonce), "tag": hexs(sealed[-16:])}},
            "db": base64.b64encode(sealed[:-16]).decode()}


def dump(name, value):
    with open(os.path.join(HERE, name), "w") as handle:
        json.dump(value, handle, indent=4)
        handle.write("\n")


dump("encrypted_v3.json", encrypted_vault(content(3, True), "v3"))
dump("encrypted_v1.json", encrypted_vault(content(1, False), "v1"))
dump("plain_v2.json", {"version": 1, "header": {"slots": None, "params": None}, "db": content(2, True)})

full = [expected_item(token, token["tags"]) for token in T]
first_tag_only = [expected_item(token, token["tags"][:1]) for token in T]
write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    "encrypted_v3": {"items": full, "problems": PROBLEMS},
    "encrypted_v1": {"items": first_tag_only, "problems": []},
    "plain_v2": {"items": first_tag_only, "problems": PROBLEMS},
})
