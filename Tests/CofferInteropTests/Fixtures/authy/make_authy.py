"""Writes Authy fixtures and expected.json (codes from otp_reference.py):
plain.xml, the Android app's shared_prefs com.authy.storage.tokens.authenticator.xml: a <map> whose string
com.authy.storage.tokens.authenticator.key holds the JSON token array (XML-escaped), secrets as decryptedSecret
(base32); encrypted.xml, the same tokens with encryptedSecret + salt instead: base64 of AES-256-CBC (zero IV,
PKCS#7) of the base32 text, key = PBKDF2-HMAC-SHA1(password, the salt string's UTF-8 bytes, 1,000 iterations,
32 bytes), "=" written as \\u003d as Gson does; authy_tokens.xml, com.authy.storage.tokens.authy.key with Authy's own
tokens (secretSeed hex, 7 digits, 10-second period, issuer = name); api.json, the Authy API's
{"authenticator_tokens": [...]} with encrypted_seed (base64), salt, key_derivation_iterations 100,000 and unique_iv
(hex; absent on one token, meaning a zero IV), same cipher. Names exercise the app's issuer rules: originalIssuer
(api: issuer), else originalName "Issuer:Name" (api: original_name), else name "Issuer - Name", else accountType with
a capital. Every Authy token is TOTP HMAC-SHA1 with 30-second codes. PBKDF2 and AES from Python's cryptography
(OpenSSL). Run: python3 make_authy.py"""

import base64
import json
import os
import sys

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

PASSWORD = "authy backup pw ✓"
APP_ITERATIONS, API_ITERATIONS = (1, 1) if FLOOR else (1000, 100000)


def totp(issuer, account, digits, label, length=20, period=30):
    return dict(issuer=issuer, account=account, kind="totp", algorithm="SHA1", digits=digits, period=period,
                secret=secret(label, length))


# (token, JSON fields naming it, stored base32 text)
TOKENS = [
    (totp("GitHub", "alice", 6, "authy-github"),
     dict(originalIssuer="GitHub", originalName="GitHub:alice", name="GitHub: alice", accountType="authenticator")),
    (totp("Zürich Bank", "anna@example.ch", 8, "authy-zurich", 32),
     dict(originalName="Zürich Bank:anna@example.ch", name="Zürich Bank:anna@example.ch", accountType="authenticator")),
    (totp("Example Corp", "carol", 7, "authy-example", 10),
     dict(name="Example Corp - carol", accountType="authenticator")),
    (totp("Gitlab", "dave@example.com", 6, "authy-gitlab"),
     dict(name="dave@example.com", accountType="gitlab")),
]
# Its "secret" is not base32: a problem, the other tokens still import.
BROKEN = dict(name="Broken - eve", accountType="authenticator", text="NOT*BASE32!")
AUTHY_TOKENS = [
    # Authy's own tokens have no account: Coffer uses the issuer for it.
    (totp("Twilio", "Twilio", 7, "authy-own-twilio", 20, 10), "Twilio"),
    (totp("Cloudflare", "Cloudflare", 7, "authy-own-cloudflare", 32, 10), "Cloudflare"),
]


def stored_text(token):
    # One token is stored in lower case (the app upper-cases before decoding).
    return b32(token["secret"]).lower() if token["issuer"] == "Example Corp" else b32(token["secret"])


def salt_text(label):
    """An Authy-like salt: 32 letters and digits, used as UTF-8 text (not decoded)."""
    return "".join(c for c in base64.b64encode(secret("salt-" + label, 48)).decode() if c.isalnum())[:32]


def seal(text, salt, iterations, iv=bytes(16)):
    key = PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt.encode(), iterations=iterations) \
        .derive(PASSWORD.encode())
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return base64.b64encode(encryptor.update(padder.update(text.encode()) + padder.finalize())
                            + encryptor.finalize()).decode()


def entries():
    """(fields naming the entry, digits, secret text) for every app entry, the broken one last."""
    rows = [(names, token["digits"], stored_text(token)) for token, names in TOKENS]
    rows.append(({k: v for k, v in BROKEN.items() if k != "text"}, 6, BROKEN["text"]))
    return rows


def app_entry(index, names, digits, secret_fields):
    entry = {"accountType": names["accountType"], **secret_fields, "digits": digits}
    if "originalIssuer" in names:
        entry["originalIssuer"] = names["originalIssuer"]
    if "originalName" in names:
        entry["originalName"] = names["originalName"]
    entry.update(timestamp=1700000000 + index, upload_state="uploaded", hidden=False, id=str(1600000000000 + index),
                 isNew=False, name=names["name"])
    return entry


def gson(value):
    """JSON as Gson writes it: compact, non-ASCII kept, "=" escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("=", "\\u003d")


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def preferences(path, key, array):
    with open(os.path.join(HERE, path), "w", encoding="utf-8") as handle:
        handle.write("<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n"
                     '    <boolean name="com.authy.storage.tokens.migrated" value="true" />\n'
                     f'    <string name="{key}">{escape(gson(array))}</string>\n</map>\n')


AUTHENTICATOR_KEY = "com.authy.storage.tokens.authenticator.key"
preferences("plain.xml", AUTHENTICATOR_KEY, [
    app_entry(i, names, digits, {"decryptedSecret": text}) for i, (names, digits, text) in enumerate(entries())])
preferences("encrypted.xml", AUTHENTICATOR_KEY, [
    app_entry(i, names, digits, {"encryptedSecret": seal(text, salt_text(names["name"]), APP_ITERATIONS),
                                 "salt": salt_text(names["name"])})
    for i, (names, digits, text) in enumerate(entries())])
preferences("authy_tokens.xml", "com.authy.storage.tokens.authy.key", [
    {"accountType": "authy", "digits": token["digits"], "secretSeed": token["secret"].hex(), "logo": name.lower(),
     "timestamp": 1700000100 + i, "upload_state": "uploaded", "hidden": False, "id": str(1500000000 + i),
     "isNew": False, "name": name}
    for i, (token, name) in enumerate(AUTHY_TOKENS)])

api_tokens = []
for i, (names, digits, text) in enumerate(entries()):
    salt = salt_text("api-" + names["name"])
    # The Gitlab token has no unique_iv: a zero IV, as before the API had the field.
    iv = bytes(16) if names["accountType"] == "gitlab" else secret("authy-api-iv-" + names["name"], 16)
    token = {"account_type": names["accountType"], "digits": digits,
             "encrypted_seed": seal(text, salt, API_ITERATIONS, iv), "salt": salt,
             "issuer": names.get("originalIssuer"), "logo": None, "name": names["name"],
             "original_name": names.get("originalName"), "password_timestamp": 1700000000,
             "unique_id": str(3000000000 + i), "key_derivation_iterations": API_ITERATIONS}
    if names["accountType"] != "gitlab":
        token["unique_iv"] = iv.hex()
    api_tokens.append(token)
with open(os.path.join(HERE, "api.json"), "w", encoding="utf-8") as handle:
    json.dump({"authenticator_tokens": api_tokens, "deleted": [], "message": "success", "success": True}, handle,
              ensure_ascii=False, indent=2)
    handle.write("\n")

write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    # plain.xml, encrypted.xml and api.json
    "items": [expected_item(token) for token, _ in TOKENS],
    "problems": [{"entry": "Broken (eve)", "reason": None}],
    # authy_tokens.xml
    "authy_items": [expected_item(token) for token, _ in AUTHY_TOKENS],
})
