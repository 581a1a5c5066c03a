"""Independent reference for the interop fixtures: RFC 4226 HOTP, RFC 6238 TOTP and Steam Guard codes, written
from the RFCs with Python's hmac/hashlib (no code shared with Coffer). Imported by the make_*.py scripts."""

import base64
import hashlib
import hmac
import json

TIMES = [59, 1111111109, 1234567890, 2000000000, 20000000000]
STEAM_ALPHABET = "23456789BCDFGHJKMNPQRTVWXY"
HASHES = {"SHA1": hashlib.sha1, "SHA256": hashlib.sha256, "SHA512": hashlib.sha512}


def truncate(secret, counter, algorithm):
    digest = hmac.new(secret, counter.to_bytes(8, "big"), HASHES[algorithm]).digest()
    offset = digest[-1] & 0x0F
    return int.from_bytes(digest[offset:offset + 4], "big") & 0x7FFFFFFF


def hotp(secret, counter, digits, algorithm):
    return str(truncate(secret, counter, algorithm) % 10 ** digits).zfill(digits)


def steam(secret, counter):
    value = truncate(secret, counter, "SHA1")
    chars = []
    for _ in range(5):
        chars.append(STEAM_ALPHABET[value % len(STEAM_ALPHABET)])
        value //= len(STEAM_ALPHABET)
    return "".join(chars)


def code(secret, counter, digits, algorithm, steam_guard=False):
    """One code: Steam's five characters when `steam_guard`, otherwise HOTP with `digits` digits."""
    return steam(secret, counter) if steam_guard else hotp(secret, counter, digits, algorithm)


def codes(token):
    """Codes of `token` (a dict: secret bytes, kind, algorithm, digits, period/counter) at every time in TIMES.
    HOTP codes use the stored counter whatever the time, as Coffer's generator does."""
    result = []
    for time in TIMES:
        if token["kind"] == "hotp":
            result.append(hotp(token["secret"], token["counter"], token["digits"], token["algorithm"]))
        elif token["kind"] == "steam":
            result.append(steam(token["secret"], time // 30))
        else:
            result.append(hotp(token["secret"], time // token["period"], token["digits"], token["algorithm"]))
    return result


def b32(secret):
    return base64.b32encode(secret).decode().rstrip("=")


def secret(label, length):
    """A fixed, reproducible secret of `length` bytes (fixtures must not change between runs)."""
    out = b""
    block = 0
    while len(out) < length:
        out += hashlib.sha256(f"{label}/{block}".encode()).digest()
        block += 1
    return out[:length]


def expected_item(token, tags=()):
    item = {
        "issuer": token["issuer"], "account": token["account"], "kind": token["kind"],
        "algorithm": token["algorithm"], "digits": token["digits"], "tags": list(tags),
        "secret": b32(token["secret"]), "times": TIMES, "codes": codes(token),
    }
    if token["kind"] == "totp":
        item["period"] = token["period"]
    if token["kind"] == "hotp":
        item["counter"] = token["counter"]
    if token.get("notes"):
        item["notes"] = token["notes"]
    return item


def write_json(path, value):
    with open(path, "w") as handle:
        json.dump(value, handle, indent=2, sort_keys=True)
        handle.write("\n")


def self_test():
    """RFC 6238 Appendix B and RFC 4226 Appendix D, so a broken reference cannot produce fixtures."""
    assert hotp(b"12345678901234567890", 0, 6, "SHA1") == "755224"
    assert hotp(b"12345678901234567890", 9, 6, "SHA1") == "520489"
    assert hotp(b"12345678901234567890", 59 // 30, 8, "SHA1") == "94287082"
    assert hotp(b"12345678901234567890123456789012", 1111111109 // 30, 8, "SHA256") == "68084774"
    assert hotp(b"1234567890" * 6 + b"1234", 20000000000 // 30, 8, "SHA512") == "47863826"
    # KeePassXC testSteamTotp (real device codes).
    steam_key = base64.b32decode("63BEDWCQZKTQWPESARIERL5DTTQFCJTK")
    assert steam(steam_key, 1511200518 // 30) == "FR8RV"
    assert steam(steam_key, 1511200714 // 30) == "9P3VP"


self_test()
