"""Writes Microsoft Authenticator's database (databases/PhoneFactor, SQLite as Room makes it) and expected.json (codes
from otp_reference.py), with Python's sqlite3. Table accounts, NOT NULL columns as the app has them; the importer
uses name (the issuer), username (the account), oath_secret_key and account_type: 0 is a third-party TOTP account
(base32 secret, 6 digits), 1 a Microsoft personal account (base64 secret, 8 digits), both HMAC-SHA1 every 30
seconds; 2 is a work or school account with no OTP secret, skipped without a problem. A TOTP row whose secret
is only in encrypted_oath_secret_key (sealed by the phone's keystore) cannot be imported: a problem.
Run: python3 make_microsoft.py"""

import base64
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

GITHUB = dict(issuer="GitHub", account="alice@example.com", kind="totp", algorithm="SHA1", digits=6, period=30,
              secret=secret("ms-github", 20))
ZURICH = dict(issuer="Zürich Bank", account="anna", kind="totp", algorithm="SHA1", digits=6, period=30,
              secret=secret("ms-zurich", 10))
PERSONAL = dict(issuer="Microsoft", account="bob@outlook.com", kind="totp", algorithm="SHA1", digits=8, period=30,
                secret=secret("ms-personal", 20))

COLUMNS = ["_id", "group_key", "name", "username", "paws_url", "oath_secret_key", "oath_enabled", "account_type",
           "account_capability", "ux_position", "encrypted_oath_secret_key", "identity_provider", "tenant_id",
           "object_id", "cid", "is_totp_code_shown", "mfa_pin_encryption_key_alias"]
NUMBERS = {"oath_enabled", "account_type", "account_capability", "ux_position", "is_totp_code_shown"}
ROWS = [  # name, username, oath_secret_key, account_type, encrypted_oath_secret_key
    ("GitHub", "alice@example.com", b32(GITHUB["secret"]), 0, ""),
    # Lower case with spaces, as typed in by hand.
    ("Zürich Bank", "anna", " ".join(b32(ZURICH["secret"]).lower()[i:i + 4] for i in range(0, 16, 4)), 0, ""),
    ("Microsoft", "bob@outlook.com", base64.b64encode(PERSONAL["secret"]).decode(), 1, ""),
    ("Contoso", "carol@contoso.com", "", 2, ""),
    ("Legacy", "frank", "", 0, base64.b64encode(secret("ms-sealed", 48)).decode()),
]

path = os.path.join(HERE, "PhoneFactor")
if os.path.exists(path):
    os.remove(path)
db = sqlite3.connect(path)
db.execute("CREATE TABLE android_metadata (locale TEXT)")
db.execute("INSERT INTO android_metadata VALUES ('en_US')")
db.execute("CREATE TABLE `accounts` (`_id` INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, " + ", ".join(
    f"`{c}` {'INTEGER' if c in NUMBERS else 'TEXT'} NOT NULL" for c in COLUMNS[1:]) + ")")
for number, (name, username, oath, kind, sealed) in enumerate(ROWS, 1):
    work = kind == 2
    values = [number, f"{number:08x}-0000-4000-8000-000000000000", name, username,
              "https://login.microsoftonline.com/" if work else "", oath, 0 if work else 1, kind,
              1 if work else 0, number, sealed, "https://sts.windows.net/" if work else "",
              "11111111-2222-4333-8444-555555555555" if work else "", "", "", 0, ""]
    db.execute(f"INSERT INTO accounts ({','.join(COLUMNS)}) VALUES ({','.join('?' * len(values))})", values)
db.commit()
db.close()

write_json(os.path.join(HERE, "expected.json"), {
    "items": [expected_item(t) for t in (GITHUB, ZURICH, PERSONAL)],
    "problems": [{"entry": "Legacy (frank)", "reason": None}],
})
