"""Writes accounts.json as Duo Mobile keeps third-party accounts (files/duokit/accounts.json, the file Aegis's
DuoImporter reads): TOTP and HOTP accounts, a Duo push account (no otpGenerator) and a bad secret; and expected.json
with codes from otp_reference.py. Run: python3 make_duo.py"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

TOTP = dict(issuer="Dropbox", account="Dropbox", kind="totp", algorithm="SHA1", digits=6, period=30,
            secret=secret("duo-dropbox", 20))
HOTP = dict(issuer="VPN", account="ann", kind="hotp", algorithm="SHA1", digits=6, counter=7,
            secret=secret("duo-vpn", 20))
accounts = [
    {"name": "Dropbox", "accountType": "OtpAccount", "otpGenerator": {"otpSecret": b32(TOTP["secret"])}},
    {"name": "VPN:ann", "accountType": "OtpAccount", "otpGenerator": {"otpSecret": b32(HOTP["secret"]), "counter": 7}},
    {"name": "Example University", "accountType": "DuoAccount", "pkey": "DPXXXXXXXXXXXXXXXXXX"},
    {"name": "Broken", "otpGenerator": {"otpSecret": "0189!!"}},
]
with open(os.path.join(HERE, "accounts.json"), "w") as handle:
    json.dump(accounts, handle, indent=2)
    handle.write("\n")
write_json(os.path.join(HERE, "expected.json"), {
    "items": [expected_item(TOTP), expected_item(HOTP)],
    "problems": [{"entry": "Example University", "reason": "push"}, {"entry": "Broken", "reason": "base32"}],
})
