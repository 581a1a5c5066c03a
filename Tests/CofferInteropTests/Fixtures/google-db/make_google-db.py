"""Writes the Google Authenticator app's database (≤ 5.10: databases/databases, SQLite) and expected.json (codes from
otp_reference.py), with Python's sqlite3. databases: table accounts(_id, email, secret, counter, type, provider,
issuer, original_name) and android_metadata; type 0 is TOTP and 1 HOTP (counter column), always HMAC-SHA1, 6 digits,
30 seconds; the secret is base32 (spaces and dashes dropped, case ignored); the account is email, or its part after
the colon when email is "Issuer:Name"; the issuer is the issuer column. A row of type 2 is a problem.
databases_encrypted: the same table with an isencrypted column; a row with isencrypted 1 cannot be imported (a
problem). Run: python3 make_google-db.py"""

import base64
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402


def token(issuer, account, label, length=20, counter=None):
    value = dict(issuer=issuer, account=account, algorithm="SHA1", digits=6, secret=secret(label, length))
    return dict(value, kind="hotp", counter=counter) if counter is not None else dict(value, kind="totp", period=30)


def spaced(secret_bytes):
    """The secret in lower case, in groups of four, with a dash: the importer drops spaces and dashes."""
    text = b32(secret_bytes).lower()
    groups = [text[i:i + 4] for i in range(0, len(text), 4)]
    return " ".join(groups[:2]) + "-" + " ".join(groups[2:])


GITHUB = token("GitHub", "alice@example.com", "gdb-github")
ZURICH = token("Zürich Bank", "anna", "gdb-zurich", 16)
COUNTER = token("Counter", "dave", "gdb-counter", 20, counter=17)
# No issuer column: Coffer keeps no issuer.
PLAIN = token("", "bob@example.org", "gdb-plain", 10)
SPACED = token("Example", "carol", "gdb-spaced", 20)

ROWS = [  # email, secret, counter, type, issuer, original_name
    ("alice@example.com", b32(GITHUB["secret"]), 0, 0, "GitHub", "GitHub:alice@example.com"),
    ("Zürich Bank:anna", b32(ZURICH["secret"]), 0, 0, "Zürich Bank", "Zürich Bank:anna"),
    ("Counter:dave", b32(COUNTER["secret"]), 17, 1, "Counter", "Counter:dave"),
    ("bob@example.org", b32(PLAIN["secret"]), 0, 0, None, None),
    ("Example:carol", spaced(SPACED["secret"]), 0, 0, "Example", None),
    ("Legacy:frank", b32(secret("gdb-legacy", 20)), 0, 2, "Legacy", "Legacy:frank"),
]


def database(path, rows, encrypted_column):
    path = os.path.join(HERE, path)
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE android_metadata (locale TEXT)")
    db.execute("INSERT INTO android_metadata VALUES ('en_US')")
    extra = ", isencrypted INTEGER DEFAULT 0" if encrypted_column else ""
    db.execute("CREATE TABLE accounts (_id INTEGER PRIMARY KEY, email TEXT NOT NULL, secret TEXT NOT NULL, "
               "counter INTEGER DEFAULT 0, type INTEGER, provider INTEGER DEFAULT 0, issuer TEXT DEFAULT NULL, "
               f"original_name TEXT DEFAULT NULL{extra})")
    for number, row in enumerate(rows, 1):
        email, secret_text, counter, kind, issuer, original = row[:6]
        values = [number, email, secret_text, counter, kind, 0, issuer, original] + list(row[6:])
        db.execute(f"INSERT INTO accounts VALUES ({','.join('?' * len(values))})", values)
    db.commit()
    db.close()


database("databases", ROWS, encrypted_column=False)
database("databases_encrypted", [
    ROWS[0] + (0,), ROWS[1] + (0,),
    # Sealed by a key kept in the phone's keystore: there is no way to open it.
    ("Vault:erin", base64.b64encode(secret("gdb-sealed", 48)).decode(), 0, 0, "Vault", "Vault:erin", 1),
], encrypted_column=True)

write_json(os.path.join(HERE, "expected.json"), {
    # databases
    "items": [expected_item(t) for t in (GITHUB, ZURICH, COUNTER, PLAIN, SPACED)],
    "problems": [{"entry": "Legacy (frank)", "reason": None}],
    # databases_encrypted
    "encrypted_items": [expected_item(t) for t in (GITHUB, ZURICH)],
    "encrypted_problems": [{"entry": "Vault (erin)", "reason": None}],
})
