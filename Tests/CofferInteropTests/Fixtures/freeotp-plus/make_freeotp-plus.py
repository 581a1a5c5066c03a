"""Writes export.json (a FreeOTP+ JSON export: tokens with signed-byte secrets, plus bad entries) and expected.json
(what Coffer must import, codes from otp_reference.py). Run from anywhere: python3 make_freeotp-plus.py"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import expected_item, secret, write_json  # noqa: E402

TOKENS = [
    dict(issuer="GitHub", account="alice@example.com", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("freeotp-github", 20)),
    dict(issuer="Example", account="bob", kind="totp", algorithm="SHA256", digits=8, period=20,
         secret=secret("freeotp-example", 32)),
    dict(issuer="Big Corp", account="carol", kind="totp", algorithm="SHA512", digits=7, period=50,
         secret=secret("freeotp-bigcorp", 64)),
    dict(issuer="Counter", account="dave", kind="hotp", algorithm="SHA1", digits=6, counter=7,
         secret=secret("freeotp-counter", 20)),
    # FreeOTP+ shows Steam Guard codes for a TOTP token whose issuer is exactly "Steam" (TokenCodeUtil.kt).
    dict(issuer="Steam", account="gamer", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("freeotp-steam", 20)),
    # No issuerExt: Coffer keeps no issuer (the label is the account).
    dict(issuer="", account="erin", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("freeotp-erin", 20)),
]


def signed(data):
    """Java's view of the key: bytes as signed values -128...127."""
    return [b - 256 if b > 127 else b for b in data]


def token_json(token, issuer_ext):
    return {
        "algo": token["algorithm"], "counter": token.get("counter", 0), "digits": token["digits"],
        "issuerExt": issuer_ext, "issuerInt": issuer_ext, "label": token["account"],
        "period": token.get("period", 30), "secret": signed(token["secret"]), "type": token["kind"].upper(),
    }


tokens = [token_json(t, t["issuer"]) for t in TOKENS[:5]]
tokens[4]["type"] = "TOTP"
erin = token_json(TOKENS[5], "")
del erin["issuerExt"]
tokens.append(erin)
good = secret("freeotp-bad", 20)
bad = [
    # (entry name in the problem, reason phrase, token)
    ("Bad Byte (x)", "signed byte", dict(token_json(dict(TOKENS[0], secret=good), "Bad Byte"), label="x",
                                         secret=signed(good)[:-1] + [200])),
    ("MD5 (y)", "algorithm", dict(token_json(dict(TOKENS[0], secret=good), "MD5"), label="y", algo="MD5")),
    ("NoCounter (z)", "counter is not", dict(token_json(dict(TOKENS[3], secret=good), "NoCounter"), label="z",
                                           counter=-1)),
    ("StringSecret (w)", "not an array", dict(token_json(dict(TOKENS[0], secret=good), "StringSecret"), label="w",
                                            secret="JBSWY3DPEHPK3PXP")),
    ("entry 11", "not a JSON object", 42),
]
tokens += [b[2] for b in bad]
document = {"tokens": tokens, "tokenOrder": [f"{t['issuer'] or t['account']}:{t['account']}" for t in TOKENS]}
with open(os.path.join(HERE, "export.json"), "w") as handle:
    json.dump(document, handle, indent=2)
    handle.write("\n")

write_json(os.path.join(HERE, "expected.json"), {
    "items": [expected_item(token) for token in TOKENS],
    "problems": [{"entry": b[0], "reason": b[1]} for b in bad],
})
