"""JSON documents and how Python's json module reads them, for JSONValueTests.

Prints one JSON object: {"documents": [{"text": hex, "reading": canonical-or-null}, ...]}. The canonical form names
each value's kind the way Coffer's JSONValue keeps them apart: n, t/f, i:<int64>, u:<uint64>, d:<IEEE bits>,
s:<hex of UTF-8>, [..] and {..} with sorted keys. A number equal to a whole number that fits 64 bits is i or u
(12, 12.0 and 1e1 alike); any other is d. A document Python refuses, or reads to an infinity, NaN or a lone
surrogate, has null.
"""
import json
import math
import random
import struct
import sys

INT64 = range(-(1 << 63), 1 << 63)
UINT64 = range(0, 1 << 64)


def number(value):
    if isinstance(value, float):
        if value.is_integer():
            whole = int(value)
            if whole in INT64:
                return "i:%d" % whole
            if whole in UINT64:
                return "u:%d" % whole
        return "d:%d" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if value in INT64:
        return "i:%d" % value
    if value in UINT64:
        return "u:%d" % value
    return number(float(value))


def canonical(value):
    if value is None:
        return "n"
    if value is True:
        return "t"
    if value is False:
        return "f"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, str):
        return "s:" + value.encode("utf-8").hex()
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    return "{" + ",".join(canonical(key) + "=" + canonical(value[key]) for key in sorted(value)) + "}"


def refuse(_):
    raise ValueError("not finite")


def reading(text):
    try:
        value = json.loads(text.decode("utf-8"), parse_constant=refuse)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    try:
        rendered = canonical(value)
    except UnicodeEncodeError:
        # Python keeps a lone surrogate escape ("\ud800"); no Swift string can hold one, and JSONValue refuses it.
        return None
    # Python reads 1e400 as an infinity; JSONValue refuses a number beyond a double's range.
    if "d:%d" % struct.unpack("<Q", struct.pack("<d", math.inf))[0] in rendered or \
            "d:%d" % struct.unpack("<Q", struct.pack("<d", -math.inf))[0] in rendered:
        return None
    return rendered


def random_string(rng):
    pieces = []
    for _ in range(rng.randrange(0, 8)):
        kind = rng.randrange(6)
        if kind == 0:
            pieces.append(rng.choice(["a", "Z", " ", "~", "é", "東", "🙂", "\u2028", "\x7f"]))
        elif kind == 1:
            pieces.append(rng.choice(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]))
        elif kind == 2:
            pieces.append("\\u%04x" % rng.choice([0x41, 0xe9, 0x2028, 0x0, 0x1f, 0xfffd, 0x7ff, 0x800]))
        elif kind == 3:
            high, low = 0xD800 + rng.randrange(0x400), 0xDC00 + rng.randrange(0x400)
            pieces.append("\\u%04X\\u%04x" % (high, low))
        else:
            pieces.append(rng.choice(["key", "name", "lat", "x" * rng.randrange(1, 40)]))
    return '"' + "".join(pieces) + '"'


def random_number(rng):
    return rng.choice([
        "0", "-0", "1", "-1", "12", "12.0", "1e2", "1E+2", "1e-2", "-0.0", "0.1", "3.141592653589793",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "1e19", "1.8446744073709552e19", "4.9e-324", "1.7976931348623157e308",
        "123456789012345678901234567890", "2.5e-8", "%d" % rng.randrange(-10**6, 10**6),
        "%.17g" % rng.uniform(-180, 180), "%de%d" % (rng.randrange(1, 99), rng.randrange(-30, 30)),
    ])


def random_value(rng, depth):
    kind = rng.randrange(9 if depth < 6 else 6)
    if kind == 0:
        return rng.choice(["true", "false", "null"])
    if kind in (1, 2):
        return random_number(rng)
    if kind in (3, 4, 5):
        return random_string(rng)
    space = rng.choice(["", " ", "\n", "\t", "\r\n  "])
    if kind in (6, 7):
        items = [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
        return "[" + space + ("," + space).join(items) + space + "]"
    members = [random_string(rng) + space + ":" + space + random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    return "{" + space + ("," + space).join(members) + space + "}"


MALFORMED = [
    "", " ", "[", "]", "{", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{1:1}", "[1 2]", "01", "-", "+1",
    "1.", ".5", "1e", "1e+", "--1", "0x10", "NaN", "Infinity", "-Infinity", "tru", "nul", "True", "'a'", "\"open",
    "\"bad \\x escape\"", "\"\\u12\"", "\"\\uD800\"", "\"\\uDC00\"", "\"\\uD800\\u0041\"", "\"tab\there\"",
    "\"new\nline\"", "[1] [2]", "{} x", "1e400", "-1e400", "[1e309]", "\"\\ud83d\"",
]


def main():
    rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 8259)
    texts = [random_value(rng, 0).encode("utf-8") for _ in range(1500)]
    texts += [text.encode("utf-8") for text in MALFORMED]
    texts += [b"\xff", b"\"\xc3\x28\"", b"\"\xed\xa0\x80\"", b"[\"\xf0\x9f\x99\x82\"]", b"\"\xe2\x82\"", b"[1]\x00"]
    texts += [b"[" * 100 + b"]" * 100]
    documents = [{"text": text.hex(), "reading": reading(text)} for text in texts]
    json.dump({"documents": documents}, sys.stdout)


main()
