#!/usr/bin/env python3
"""Writes Tests/Vectors/vault/photo_v1.json: a card photo sealed as docs/FORMAT.md §2, §3 and §5b say,
with Python's hashlib, zlib and `cryptography` alone, never with Coffer's code. The image is a real PNG made here
(stored deflate blocks of a fixed pattern), cut into parts of 60 KiB; the card's content (§5, tag 30) names them.

The Swift tests seal the same parts with the same nonces and must get the same boxes (by SHA-256; the last, short
box in full), open them, and read and write the card content byte for byte.

Run: python3 Tests/oracles/make_photo_golden.py  (deterministic: every input is fixed below)
"""
import hashlib
import json
import os
import struct
import zlib

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

PART_BYTES = 60 * 1024


def field(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def ad(label: str, *fields: bytes) -> bytes:
    return field(label.encode()) + b"".join(field(f) for f in fields)


def uuid_bytes(text: str) -> bytes:
    return bytes.fromhex(text.replace("-", ""))


def tlv(tag: int, value: bytes) -> bytes:
    out, length = bytes([tag]), len(value)
    while True:
        low = length & 0x7F
        length >>= 7
        out += bytes([low | (0x80 if length else 0)])
        if not length:
            return out + value


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes((x * 7 + y * 13) % 251 for x in range(width * 3)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0)) + chunk(b"IEND", b"")


def main():
    master_key = bytes(range(32))
    vault_id = uuid_bytes("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
    card_id = uuid_bytes("c0ffee00-0000-4000-8000-00000000ca7d")
    part_ids = [uuid_bytes("00000000-0000-4000-8000-0000000000a1"), uuid_bytes("00000000-0000-4000-8000-0000000000a2")]
    revision, updated_at, created = 1, 1_767_225_600_000, 1_767_225_600_000
    image = png(140, 150)
    assert PART_BYTES < len(image) <= 2 * PART_BYTES

    photo_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=vault_id, info=b"coffer/v1/photos").derive(master_key)
    count = 2
    parts = []
    for index in range(count):
        body = image[index * PART_BYTES:(index + 1) * PART_BYTES]
        plaintext = bytes([1]) + card_id + bytes([1]) + struct.pack(">HH", index, count) + body
        nonce = bytes([0xA0 + index]) * 12
        aad = ad("coffer/v1/photo", vault_id, part_ids[index], struct.pack(">Q", revision), struct.pack(">Q", updated_at),
                 struct.pack(">I", 1))
        box = nonce + AESGCM(photo_key).encrypt(nonce, plaintext, aad)
        parts.append({"id": str_uuid(part_ids[index]), "nonce": nonce.hex(), "box_sha256": hashlib.sha256(box).hexdigest(),
                      "box": box.hex() if index == count - 1 else None})

    photo = (tlv(1, b"front") + tlv(2, b"image/png") + tlv(3, struct.pack(">Q", len(image)))
             + tlv(4, hashlib.sha256(image).digest()) + b"".join(tlv(5, part) for part in part_ids))
    content = (bytes([1]) + tlv(1, struct.pack(">q", created)) + tlv(16, b"Costco") + tlv(17, b"code128")
               + tlv(18, b"111222333") + tlv(19, b"utf-8") + tlv(30, photo))

    golden = {
        "comment": "Written by Tests/oracles/make_photo_golden.py from docs/FORMAT.md alone; do not edit.",
        "master_key": master_key.hex(), "vault_id": str_uuid(vault_id), "card_id": str_uuid(card_id),
        "side": "front", "type": "image/png", "revision": revision, "updated_at": updated_at,
        "image": image.hex(), "image_sha256": hashlib.sha256(image).hexdigest(), "parts": parts,
        "card_content": content.hex(),
    }
    path = os.path.join(os.path.dirname(__file__), "..", "Vectors", "vault", "photo_v1.json")
    with open(path, "w") as out:
        json.dump(golden, out, indent=1, sort_keys=True)
        out.write("\n")


def str_uuid(raw: bytes) -> str:
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


if __name__ == "__main__":
    main()
