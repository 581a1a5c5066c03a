"""Writes export.txt (an Ente Auth plaintext export: one otpauth:// URI per line with Ente's codeDisplay= and other
extras, plus bad lines) and expected.json (codes from otp_reference.py). Run from anywhere: python3 make_ente.py"""

import json
import os
import sys
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

TOKENS = [
    dict(issuer="GitHub", account="alice@example.com", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("ente-github", 20)),
    dict(issuer="Example", account="bob", kind="totp", algorithm="SHA256", digits=8, period=20,
         secret=secret("ente-example", 32)),
    dict(issuer="Mongo Atlas", account="Acc !@#444", kind="totp", algorithm="SHA512", digits=7, period=50,
         secret=secret("ente-mongo", 64)),
    dict(issuer="Counter", account="dave", kind="hotp", algorithm="SHA1", digits=6, counter=12,
         secret=secret("ente-counter", 20)),
    dict(issuer="Steam", account="gamer", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("ente-steam", 20)),
]
t = TOKENS


def display(tags, pinned=False):
    """Ente's codeDisplay JSON, percent-encoded as Ente writes it."""
    value = {"pinned": pinned, "trashed": False, "lastUsedAt": 0, "tapCount": 3, "tags": tags, "note": ""}
    return quote(json.dumps(value, separators=(",", ":")), safe=",:")


lines = [
    f"otpauth://totp/GitHub:{quote('alice@example.com')}?secret={b32(t[0]['secret'])}&issuer=GitHub"
    f"&algorithm=sha1&digits=6&period=30&codeDisplay={display(['work'], pinned=True)}",
    f"otpauth://totp/Example:bob?secret={b32(t[1]['secret'])}&issuer=Example&algorithm=sha256&digits=8"
    f"&period=20&codeDisplay={display([])}",
    # Ente's own test label: unencoded space and punctuation.
    f"otpauth://totp/Mongo Atlas:Acc !@#444?secret={b32(t[2]['secret'])}&issuer=Mongo%20Atlas&algorithm=sha512"
    "&digits=7&period=50",
    "",
    f"otpauth://hotp/Counter:dave?secret={b32(t[3]['secret'])}&issuer=Counter&algorithm=sha1&digits=6&counter=12"
    f"&codeDisplay={display(['a', 'b'])}",
    f"otpauth://steam/Steam:gamer?secret={b32(t[4]['secret'])}&issuer=Steam&algorithm=sha1&digits=5&period=30"
    f"&codeDisplay={display([])}",
    "otpauth://totp/Broken:x?secret=0189ABCD0189&codeDisplay=%7B%7D",
    "not a uri at all",
]
problem_lines = [7, 8]
with open(os.path.join(HERE, "export.txt"), "w") as handle:
    handle.write("\n".join(lines) + "\n")

write_json(os.path.join(HERE, "expected.json"), {
    "items": [expected_item(token) for token in TOKENS],
    "problemLines": problem_lines,
})
