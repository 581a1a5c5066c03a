"""Writes Steam Desktop Authenticator fixtures and expected.json (codes from otp_reference.py):
plain.maFile (one account), maFiles.zip (SDA's maFiles folder: manifest.json and two plain maFiles),
maFiles_encrypted.zip (the same folder encrypted as SDA's FileEncryptor does: PBKDF2-HMAC-SHA1, 50,000 iterations,
8-byte salt, 32-byte key; AES-256-CBC with PKCS#7 and a 16-byte IV; the maFile holds the base64 ciphertext; salt
and IV in the manifest entry), and encrypted.maFile (one encrypted maFile alone, which cannot be opened).
PBKDF2 and AES from Python's cryptography (OpenSSL). Run: python3 make_steam.py"""

import base64
import json
import os
import sys
import zipfile

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import expected_item, secret, write_json  # noqa: E402

PASSWORD = "steam desktop pw ✓"
ACCOUNTS = [
    dict(name="gamer_one", steamid=76561198000000001, revocation="R12345",
         secret=secret("steam-one", 20)),
    dict(name="gamer_two", steamid=76561198000000002, revocation="R67890",
         secret=secret("steam-two", 20)),
]


def mafile(account):
    return json.dumps({
        "shared_secret": base64.b64encode(account["secret"]).decode(),
        "serial_number": "1234567890", "revocation_code": account["revocation"],
        "uri": "otpauth://totp/Steam:" + account["name"] + "?secret=SEEBELOW&issuer=Steam",
        "server_time": 1700000000, "account_name": account["name"], "token_gid": "abc",
        "identity_secret": base64.b64encode(secret("identity-" + account["name"], 20)).decode(),
        "secret_1": base64.b64encode(b"x" * 20).decode(), "status": 1, "device_id": "android:0000",
        "fully_enrolled": True, "Session": {"SessionID": "s", "SteamID": account["steamid"]},
    }).encode()


def encrypt(plain, salt, iv, password=PASSWORD):
    key = PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt, iterations=1 if FLOOR else 50000).derive(password.encode())
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return base64.b64encode(encryptor.update(padder.update(plain) + padder.finalize()) + encryptor.finalize())


def folder(path, encrypted):
    entries = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for account in ACCOUNTS:
            name = f"{account['steamid']}.maFile"
            data = mafile(account)
            entry = {"filename": name, "steamid": account["steamid"], "encryption_iv": None, "encryption_salt": None}
            if encrypted:
                salt, iv = secret("salt-" + name, 8), secret("iv-" + name, 16)
                data = encrypt(data, salt, iv)
                entry.update(encryption_iv=base64.b64encode(iv).decode(), encryption_salt=base64.b64encode(salt).decode())
            archive.writestr(zipfile.ZipInfo("maFiles/" + name, (2024, 1, 1, 0, 0, 0)), data)
            entries.append(entry)
        if encrypted:
            # A maFile sealed under another password, after the ones the password opens: a problem, not a wrong
            # password for the whole folder.
            name, salt, iv = "76561198000000004.maFile", secret("salt-other", 8), secret("iv-other", 16)
            archive.writestr(zipfile.ZipInfo("maFiles/" + name, (2024, 1, 1, 0, 0, 0)),
                             encrypt(mafile(dict(ACCOUNTS[0], name="other")), salt, iv, "another password"))
            entries.append({"filename": name, "steamid": 76561198000000004,
                            "encryption_iv": base64.b64encode(iv).decode(),
                            "encryption_salt": base64.b64encode(salt).decode()})
        # A manifest entry whose maFile is missing: one problem, the rest imported.
        entries.append({"filename": "76561198000000003.maFile", "steamid": 76561198000000003,
                        "encryption_iv": None, "encryption_salt": None})
        manifest = {"encrypted": encrypted, "first_run": False, "entries": entries, "periodic_checking": False}
        archive.writestr(zipfile.ZipInfo("maFiles/manifest.json", (2024, 1, 1, 0, 0, 0)), json.dumps(manifest))


with open(os.path.join(HERE, "plain.maFile"), "wb") as handle:
    handle.write(mafile(ACCOUNTS[0]))
with open(os.path.join(HERE, "encrypted.maFile"), "wb") as handle:
    handle.write(encrypt(mafile(ACCOUNTS[0]), secret("alone-salt", 8), secret("alone-iv", 16)))
folder(os.path.join(HERE, "maFiles.zip"), encrypted=False)
folder(os.path.join(HERE, "maFiles_encrypted.zip"), encrypted=True)


def expected(account):
    item = expected_item(dict(issuer="Steam", account=account["name"], kind="steam", algorithm="SHA1", digits=5,
                              secret=account["secret"]))
    item["notes"] = "Revocation code: " + account["revocation"]
    return item


write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    "items": [expected(account) for account in ACCOUNTS],
    "problems": [{"entry": "76561198000000003.maFile", "reason": "missing"}],
    "encrypted_problems": [{"entry": "76561198000000004.maFile", "reason": "does not decrypt"},
                           {"entry": "76561198000000003.maFile", "reason": "missing"}],
})
