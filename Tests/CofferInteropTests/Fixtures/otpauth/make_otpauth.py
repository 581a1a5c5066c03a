"""Writes list.txt (an otpauth URI list with comments, blank lines and bad lines) and expected.json (what Coffer must
import, with codes at fixed times from otp_reference.py). Run from anywhere: python3 make_otpauth.py"""

import os
import sys
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

TOKENS = [
    dict(issuer="GitHub", account="alice@example.com", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("otpauth-github", 20)),
    dict(issuer="Example", account="bob", kind="totp", algorithm="SHA256", digits=8, period=20,
         secret=secret("otpauth-example", 32)),
    dict(issuer="Big Corp", account="carol", kind="totp", algorithm="SHA512", digits=7, period=50,
         secret=secret("otpauth-bigcorp", 64)),
    # No issuer anywhere: Coffer keeps none.
    dict(issuer="", account="Dave", kind="hotp", algorithm="SHA1", digits=6, counter=42,
         secret=secret("otpauth-dave", 20)),
    dict(issuer="Steam", account="erin", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("otpauth-steam-erin", 20)),
    # A bare steam:// URI has no name at all: Coffer calls it "Steam".
    dict(issuer="Steam", account="Steam", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("otpauth-steam-bare", 20)),
]

t = TOKENS
lines = [
    "# exported by make_otpauth.py",
    f"otpauth://totp/GitHub:alice%40example.com?secret={b32(t[0]['secret'])}&issuer=GitHub",
    "",
    f"otpauth://totp/Example:bob?secret={b32(t[1]['secret'])}&algorithm=SHA256&digits=8&period=20",
    # Lower-case secret, encoded colon and spaces in the label, lower-case algorithm name.
    f"  otpauth://totp/{quote('Big Corp: carol', safe='')}?secret={b32(t[2]['secret']).lower()}"
    "&algorithm=sha512&digits=7&period=50  ",
    "otpauth://totp/Broken?secret=0189ABCD0189ABCD",  # not base32
    f"otpauth://hotp/Dave?secret={b32(t[3]['secret'])}&counter=42",
    "otpauth://totp/NoSecret?issuer=Nothing",  # secret missing
    "   # an indented comment",
    f"otpauth://steam/Steam:erin?secret={b32(t[4]['secret'])}",
    "https://example.com/not-an-otp-uri",
    "otpauth://totp/Short?secret=AAAAAAAA",  # 5-byte secret, too short
    f"steam://{b32(t[5]['secret'])}",
    "otpauth://hotp/NoCounter?secret=JBSWY3DPEHPK3PXPJBSWY3DP",  # HOTP without counter
]
problem_lines = [6, 8, 11, 12, 14]

with open(os.path.join(HERE, "list.txt"), "w") as handle:
    handle.write("\r\n".join(lines[:4]) + "\n" + "\n".join(lines[4:]) + "\n")

write_json(os.path.join(HERE, "expected.json"), {
    "items": [expected_item(token) for token in TOKENS],
    "problemLines": problem_lines,
})
