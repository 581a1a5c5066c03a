"""Writes Authenticator Plus exports ("Export as Text and HTML") and expected.json (codes from otp_reference.py):
password-protected ZIPs holding Accounts.txt (one otpauth:// URI per line, blank lines between) and Accounts.html.
backup.zip uses traditional PKWARE encryption (ZipCrypto: 12-byte header ending in the CRC's high byte, deflate);
nested.zip has the same two files inside a folder; backup_aes.zip uses WinZip AES (AE-2, AES-256: PBKDF2-HMAC-SHA1
with 1,000 iterations over a 16-byte salt giving the AES-CTR key, the HMAC-SHA1 key and a 2-byte password check;
CTR counter little-endian from 1; a 10-byte HMAC after the data; method 99 with the 0x9901 extra field; CRC 0).
The ZIPs are written here byte by byte (fixed times, salts and headers from secret()) so they do not change between
runs; AES, PBKDF2 and HMAC from Python's cryptography (OpenSSL). The password is ASCII: ZIP does not say how a
password's characters become bytes. Run: python3 make_authenticator-plus.py"""

import hashlib
import hmac
import os
import struct
import sys
import zlib
from urllib.parse import quote

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret, write_json  # noqa: E402

PASSWORD = "plus backup pw 42"
TOKENS = [
    dict(issuer="GitHub", account="alice", kind="totp", algorithm="SHA1", digits=6, period=30,
         secret=secret("plus-github", 20)),
    dict(issuer="Zürich Bank", account="anna", kind="totp", algorithm="SHA256", digits=8, period=60,
         secret=secret("plus-zurich", 32)),
    dict(issuer="Example", account="carol", kind="totp", algorithm="SHA512", digits=7, period=20,
         secret=secret("plus-example", 64)),
    dict(issuer="Counter", account="dave", kind="hotp", algorithm="SHA1", digits=6, counter=42,
         secret=secret("plus-counter", 20)),
    dict(issuer="Steam", account="gamer", kind="steam", algorithm="SHA1", digits=5,
         secret=secret("plus-steam", 20)),
]


def uri(token):
    label = quote(f"{token['issuer']}:{token['account']}", safe=":@")
    query = f"secret={b32(token['secret'])}&issuer={quote(token['issuer'])}"
    if token["kind"] == "steam":
        return f"otpauth://steam/{label}?{query}"
    if token["kind"] == "hotp":
        return f"otpauth://hotp/{label}?{query}&counter={token['counter']}"
    if (token["algorithm"], token["digits"], token["period"]) != ("SHA1", 6, 30):
        query += f"&algorithm={token['algorithm']}&digits={token['digits']}&period={token['period']}"
    return f"otpauth://totp/{label}?{query}"


lines = [uri(TOKENS[0]), uri(TOKENS[1]), "", uri(TOKENS[2]), uri(TOKENS[3]), "", uri(TOKENS[4]),
         # A type Coffer does not know: a problem, the rest imported.
         f"otpauth://yaotp/Old:frank?secret={b32(secret('plus-yaotp', 20))}&issuer=Old", ""]
ACCOUNTS_TXT = "\n".join(lines).encode()
ACCOUNTS_HTML = ("<html><body><table>" + "".join(
    f"<tr><td>{t['issuer']}</td><td>{t['account']}</td></tr>" for t in TOKENS) + "</table></body></html>").encode()

# ZipCrypto (APPNOTE 6.1): three CRC-32-driven keys.
CRC_TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
    CRC_TABLE.append(c)


def zipcrypto(data, password, header):
    keys = [0x12345678, 0x23456789, 0x34567890]

    def update(byte):
        keys[0] = CRC_TABLE[(keys[0] ^ byte) & 0xFF] ^ (keys[0] >> 8)
        keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        keys[2] = CRC_TABLE[(keys[2] ^ (keys[1] >> 24)) & 0xFF] ^ (keys[2] >> 8)

    for byte in password:
        update(byte)
    out = bytearray()
    for byte in header + data:
        temp = (keys[2] | 2) & 0xFFFF
        out.append(byte ^ (((temp * (temp ^ 1)) >> 8) & 0xFF))
        update(byte)
    return bytes(out)


def winzip_aes(data, password, salt):
    derived = PBKDF2HMAC(algorithm=hashes.SHA1(), length=66, salt=salt, iterations=1 if FLOOR else 1000).derive(password)
    key, mac_key, check = derived[:32], derived[32:64], derived[64:]
    blocks = (len(data) + 15) // 16
    counters = b"".join((n + 1).to_bytes(16, "little") for n in range(blocks))
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    stream = encryptor.update(counters) + encryptor.finalize()
    sealed = bytes(a ^ b for a, b in zip(data, stream))
    return salt + check + sealed + hmac.new(mac_key, sealed, hashlib.sha1).digest()[:10]


DOS_TIME, DOS_DATE = 0, (2024 - 1980) << 9 | 1 << 5 | 1  # 2024-01-01 00:00


def write_zip(path, files, aes=False):
    """files: (name, data or None for a folder). Every file is deflated and encrypted."""
    body, central = b"", b""
    for name, data in files:
        raw_name = name.encode()
        if data is None:
            flags, method, crc, stored, size, extra, version = 0, 0, 0, b"", 0, b"", 20
        else:
            compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
            deflated = compressor.compress(data) + compressor.flush()
            crc, size, flags = zlib.crc32(data), len(data), 1
            if aes:
                method, version, extra = 99, 51, struct.pack("<HHH2sBH", 0x9901, 7, 2, b"AE", 3, 8)
                stored = winzip_aes(deflated, PASSWORD.encode(), secret("plus-aes-salt-" + name, 16))
                crc = 0  # AE-2 leaves the CRC out
            else:
                method, version, extra = 8, 20, b""
                header = secret("plus-zipcrypto-" + name, 11) + bytes([crc >> 24])
                stored = zipcrypto(deflated, PASSWORD.encode(), header)
        fields = struct.pack("<HHHHHIIIHH", version, flags, method, DOS_TIME, DOS_DATE, crc, len(stored), size,
                             len(raw_name), len(extra))
        external = (0o40755 << 16 | 0x10) if data is None else 0o100644 << 16
        central += (b"PK\x01\x02" + struct.pack("<H", 3 << 8 | 63) + fields
                    + struct.pack("<HHHII", 0, 0, 0, external, len(body)) + raw_name + extra)
        body += b"PK\x03\x04" + fields + raw_name + extra + stored
    count = len(files)
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, count, count, len(central), len(body), 0)
    with open(os.path.join(HERE, path), "wb") as handle:
        handle.write(body + central + end)


FILES = [("Accounts.html", ACCOUNTS_HTML), ("Accounts.txt", ACCOUNTS_TXT)]
write_zip("backup.zip", FILES)
write_zip("nested.zip", [("Authenticator Plus/", None)] + [("Authenticator Plus/" + n, d) for n, d in FILES])
write_zip("backup_aes.zip", FILES, aes=True)

write_json(os.path.join(HERE, "expected.json"), {
    "password": PASSWORD,
    "items": [expected_item(token) for token in TOKENS],
    "problems": [{"entry": "Old (frank)", "reason": None}],
})
