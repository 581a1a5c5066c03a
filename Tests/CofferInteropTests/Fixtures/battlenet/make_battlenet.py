"""Writes the Battle.net app's com.blizzard.messenger.authenticator_preferences.xml (Android shared_prefs) and
expected.json (codes from otp_reference.py): authenticator_preferences.xml holds
com.blizzard.messenger.AUTHENTICATOR_DEVICE_SECRET (the secret as 40 lower-case hex digits) and
…AUTHENTICATOR_SERIAL ("EU-1234-5678-9012"), each stored as the hex of its ASCII bytes XOR a fixed 57-byte mask
(credentials encryption type MASK); no_secret.xml lacks the secret, so importing it must fail. Codes: TOTP
HMAC-SHA1, 8 digits, 30 seconds, issuer Battle.net, account the serial. Run: python3 make_battlenet.py"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import expected_item, secret, write_json  # noqa: E402

MASK = bytes.fromhex("398e27fc50276a656065b0e525f4c06c04c61075286b8e7aeda59da9813b5dd6c80d2fb38068773fa59ba47c17ca6c"
                     "6479015c1d5b8b8f6b9a")
PREFIX = "com.blizzard.messenger."
SERIAL = "EU-1234-5678-9012"
TOKEN = dict(issuer="Battle.net", account=SERIAL, kind="totp", algorithm="SHA1", digits=8, period=30,
             secret=secret("battlenet-device", 20))


def masked(text):
    return bytes(a ^ b for a, b in zip(text.encode(), MASK)).hex()


def preferences(path, with_secret):
    lines = ["<?xml version='1.0' encoding='utf-8' standalone='yes' ?>", "<map>",
             f'    <string name="{PREFIX}AUTHENTICATOR_CREDENTIALS_ENCRYPTION_TYPE">MASK</string>',
             f'    <string name="{PREFIX}AUTHENTICATOR_BGS_REGION_CODE">EU</string>',
             f'    <long name="{PREFIX}AUTHENTICATOR_CLOCK_OFFSET" value="-412" />',
             f'    <string name="{PREFIX}AUTHENTICATOR_SERIAL">{masked(SERIAL)}</string>',
             f'    <boolean name="{PREFIX}AUTHENTICATOR_ENABLED" value="true" />']
    if with_secret:
        device_secret = masked(TOKEN["secret"].hex())
        lines.insert(3, f'    <string name="{PREFIX}AUTHENTICATOR_DEVICE_SECRET">{device_secret}</string>')
    with open(os.path.join(HERE, path), "w") as handle:
        handle.write("\n".join(lines + ["</map>", ""]))


preferences("authenticator_preferences.xml", with_secret=True)
preferences("no_secret.xml", with_secret=False)
write_json(os.path.join(HERE, "expected.json"), {
    "items": [expected_item(TOKEN)],
    "fails": ["no_secret.xml"],
})
