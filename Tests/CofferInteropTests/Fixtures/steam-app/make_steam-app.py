"""Writes the Steam app's (before 3.0) files/Steamguard-<steamid> files and expected.json (codes from
otp_reference.py): Steamguard-76561190000000001 holds one account object; Steamguard-multi holds
{"accounts": {"<key>": account, ...}} with two accounts and a third whose shared_secret is null (a problem). The
token is shared_secret (base64 of 20 bytes): Steam Guard codes (HMAC-SHA1, 5 characters, 30 seconds), issuer
Steam, account account_name; uri is not read. The revocation code goes to the notes, as for SDA's maFiles.
Run: python3 make_steam-app.py"""

import base64
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

ACCOUNTS = [
    dict(name="gamer_one", steamid="76561190000000001", revocation="R13579", secret=secret("steamapp-one", 20)),
    dict(name="gamer_two", steamid="76561190000000002", revocation="R24680", secret=secret("steamapp-two", 20)),
]
BROKEN = dict(name="gamer_three", steamid="76561190000000003", revocation="R11111", secret=None)


def account(a):
    shared = base64.b64encode(a["secret"]).decode() if a["secret"] else None
    return {
        "steamid": a["steamid"], "shared_secret": shared, "serial_number": "9876543210123456789",
        "revocation_code": a["revocation"],
        "uri": f"otpauth://totp/Steam:{a['name']}?secret={b32(a['secret']) if a['secret'] else ''}&issuer=Steam",
        "server_time": "1700000000", "account_name": a["name"], "token_gid": "2a1b3c4d5e6f",
        "identity_secret": base64.b64encode(secret("steamapp-identity-" + a["name"], 20)).decode(),
        "secret_1": base64.b64encode(secret("steamapp-secret1-" + a["name"], 20)).decode(),
        "status": 1, "steamguard_scheme": "2",
    }


def write(path, value):
    with open(os.path.join(HERE, path), "w") as handle:
        # Android's org.json escapes "/" as "\/".
        handle.write(json.dumps(value, separators=(",", ":")).replace("/", "\\/"))


write("Steamguard-76561190000000001", account(ACCOUNTS[0]))
write("Steamguard-multi", {"accounts": {a["name"]: account(a) for a in ACCOUNTS + [BROKEN]}})


def expected(a):
    return dict(expected_item(dict(issuer="Steam", account=a["name"], kind="steam", algorithm="SHA1", digits=5,
                                   secret=a["secret"])), notes="Revocation code: " + a["revocation"])


write_json(os.path.join(HERE, "expected.json"), {
    # Steamguard-76561190000000001
    "items": [expected(ACCOUNTS[0])],
    # Steamguard-multi
    "multi_items": [expected(a) for a in ACCOUNTS],
    "multi_problems": [{"entry": "gamer_three", "reason": None}],
})
