"""Writes TOTP Authenticator (Binary Boxes, com.authenticator.authservice2) fixtures and expected.json (codes from
otp_reference.py). A backup is base64 text (no newline) of AES-256-CBC with a zero IV and PKCS#7, the key being
SHA-256 of the UTF-8 password; the plaintext is a JSON object of one member whose name is the JSON text of the
entry array and whose value is the backup time as a string. backup.encrypt uses PASSWORD, backup_default.encrypt
the app's password when the user sets none, "TotpAuthenticator". preferences.xml is the app's
shared_prefs/TOTP_Authenticator_Preferences.xml: the same array unencrypted as STATIC_TOTP_CODES_LIST. An entry's
key is written in `base` 16 (upper-case hex), 32 or 64; digits and period are strings, and Coffer honours them
(Aegis ignores them); codes are HMAC-SHA1. An entry with base 10 is a problem. SHA-256 and AES from Python's
hashlib and cryptography (OpenSSL). Run: python3 make_totp-authenticator.py"""

import base64
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

PASSWORD = "totp authenticator pw ✓"
DEFAULT_PASSWORD = "TotpAuthenticator"


def totp(issuer, account, digits, period, label, length, base):
    return dict(issuer=issuer, account=account, kind="totp", algorithm="SHA1", digits=digits, period=period,
                secret=secret(label, length), base=base)


TOKENS = [
    totp("GitHub", "alice", 6, 30, "totpauth-github", 20, 32),
    totp("Zürich Bank", "anna", 8, 60, "totpauth-zurich", 16, 16),
    totp("Example", "carol", 7, 20, "totpauth-example", 32, 64),
    totp("Gitlab", "dave", 6, 30, "totpauth-gitlab", 10, 16),
]


def key_text(token):
    data = token["secret"]
    return {16: data.hex().upper(), 32: b32(data), 64: base64.b64encode(data).decode()}[token["base"]]


def entry(issuer, name, key, base, digits, period):
    return {"accountHeaderLabel": "", "allowNotifications": False, "base": base, "digits": str(digits),
            "fileName": "", "iconLabel": "", "iconPath": "", "isFavorite": False, "isSelected": False,
            "isWidgetActive": False, "issuer": issuer, "key": key, "name": name, "period": str(period),
            "setIconFromDrawable": True, "source": 0, "timeRemaining": 0, "totpCode": "", "widgetId": 0}


ENTRIES = [entry(t["issuer"], t["account"], key_text(t), t["base"], t["digits"], t["period"]) for t in TOKENS]
# A base the app never writes: a problem, the other entries still import.
ENTRIES.insert(2, entry("Legacy", "frank", "1234567890123456789012", 10, 6, 30))
ARRAY = json.dumps(ENTRIES, ensure_ascii=False, separators=(",", ":"))


def backup(path, password):
    plain = json.dumps({ARRAY: "1700000000"}, ensure_ascii=False, separators=(",", ":")).encode()
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(hashlib.sha256(password.encode()).digest()), modes.CBC(bytes(16))).encryptor()
    sealed = encryptor.update(padder.update(plain) + padder.finalize()) + encryptor.finalize()
    with open(os.path.join(HERE, path), "w") as handle:
        handle.write(base64.b64encode(sealed).decode())


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


backup("backup.encrypt", PASSWORD)
backup("backup_default.encrypt", DEFAULT_PASSWORD)
with open(os.path.join(HERE, "preferences.xml"), "w", encoding="utf-8") as handle:
    handle.write("\n".join([
        "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>", "<map>",
        '    <int name="RATE_US_COUNTER" value="3" />',
        '    <boolean name="FIRST_ACCOUNT_ADDED_BACKUP" value="true" />',
        f'    <string name="STATIC_TOTP_CODES_LIST">{escape(ARRAY)}</string>',
        '    <string name="SORT_ACCOUNT_BY">CUSTOM</string>',
        f'    <string name="DEFAULT_ENCRYPTION_KEY">{escape(PASSWORD)}</string>',
        "</map>", ""]))

write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    "default_password": DEFAULT_PASSWORD,
    "items": [expected_item(token) for token in TOKENS],
    "problems": [{"entry": "Legacy (frank)", "reason": None}],
})
