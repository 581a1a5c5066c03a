#!/usr/bin/env python3
"""Independent implementations Coffer's tests compare against: OpenSSL through Python's `cryptography` and
`hashlib`, plus a reader of Coffer's vault format written from docs/FORMAT.md alone.

Reads one JSON array of requests on stdin and prints one JSON array of answers. Every byte string is hex.
"""
import base64
import binascii
import hashlib
import json
import sqlite3
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt


def h(value):
    return bytes.fromhex(value)


def hkdf(ikm, salt, info, length=32):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def aad(label, fields):
    out = b""
    for field in [label.encode()] + fields:
        out += struct.pack(">I", len(field)) + field
    return out


def strkey_encode(version, payload):
    raw = bytes([version]) + payload
    crc = binascii.crc_hqx(raw, 0)
    return base64.b32encode(raw + struct.pack("<H", crc)).decode().rstrip("=")


def read_fields(data):
    """Tag-length-value fields (FORMAT.md §5): one-byte tag, LEB128 length, value."""
    fields, i = {}, 0
    while i < len(data):
        tag, length, shift = data[i], 0, 0
        i += 1
        while True:
            byte = data[i]
            i += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        assert i + length <= len(data), "field runs past the end"
        fields.setdefault(tag, []).append(data[i:i + length])
        i += length
    return fields


def read_content(plaintext):
    assert plaintext[0] == 1, "content version 1"
    fields = read_fields(plaintext[1:])
    return {
        "v": plaintext[0],
        "createdAt": struct.unpack(">q", fields[1][-1])[0],
        "name": fields[16][-1].decode(),
        "fields": {str(tag): [v.hex() for v in values] for tag, values in fields.items()},
    }


def read_vault(path, secret_kind, secret):
    """Opens a Coffer vault file following docs/FORMAT.md and returns its decrypted item contents."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    vault_id, fmt = db.execute("SELECT vault_id, format_version FROM vault").fetchone()
    assert fmt == 1
    master = None
    for slot_id, slot_type, kdf, salt, wrapped in db.execute("SELECT id, type, kdf, salt, wrapped_key FROM slot"):
        if slot_type == 2 and secret_kind == "passphrase":
            assert kdf[0] == 1, "oracle reads PBKDF2 slots"
            (iterations,) = struct.unpack(">I", kdf[1:5])
            stretched = hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, iterations, 32)
            kek = hkdf(stretched, salt, b"coffer/v1/kek/passphrase")
        elif slot_type == 3 and secret_kind == "recovery":
            alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
            bits = "".join(format(alphabet.index(c), "05b") for c in secret.replace("-", "").upper())
            code = int(bits, 2).to_bytes(20, "big")
            kek = hkdf(code, salt, b"coffer/v1/kek/recovery")
        else:
            continue
        slot_aad = aad("coffer/v1/slot", [vault_id, slot_id, bytes([slot_type]), kdf or b"", salt])
        master = AESGCM(kek).decrypt(wrapped[:12], wrapped[12:], slot_aad)
    assert master is not None, "no slot opened"
    items_key = hkdf(master, vault_id, b"coffer/v1/items")
    items = []
    for item_id, kind, revision, updated_at, box in db.execute(
            "SELECT id, kind, revision, updated_at, box FROM item WHERE deleted = 0"):
        item_aad = aad("coffer/v1/item", [vault_id, item_id, kind.encode(), struct.pack(">Q", revision),
                                         struct.pack(">Q", updated_at), struct.pack(">I", 1)])
        content = read_content(AESGCM(items_key).decrypt(box[:12], box[12:], item_aad))
        items.append({"id": item_id.hex(), "kind": kind, "content": content})
    return {"vault_id": vault_id.hex(), "items": items}


def answer(request):
    op = request["op"]
    if op == "pbkdf2_sha256":
        kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=request["length"], salt=h(request["salt"]),
                         iterations=request["iterations"])
        return kdf.derive(h(request["password"])).hex()
    if op == "scrypt":
        return Scrypt(salt=h(request["salt"]), length=request["length"], n=request["n"], r=request["r"],
                      p=request["p"]).derive(h(request["password"])).hex()
    if op == "hkdf_sha256":
        return hkdf(h(request["ikm"]), h(request["salt"]), h(request["info"]), request["length"]).hex()
    if op == "aesgcm_seal":
        nonce = h(request["nonce"])
        return (nonce + AESGCM(h(request["key"])).encrypt(nonce, h(request["plaintext"]), h(request["aad"]))).hex()
    if op == "aesgcm_open":
        box = h(request["box"])
        try:
            return AESGCM(h(request["key"])).decrypt(box[:12], box[12:], h(request["aad"])).hex()
        except Exception:
            return None
    if op == "ed25519_public":
        key = Ed25519PrivateKey.from_private_bytes(h(request["seed"]))
        return key.public_key().public_bytes_raw().hex()
    if op == "ed25519_verify":
        try:
            Ed25519PublicKey.from_public_bytes(h(request["public"])).verify(h(request["signature"]), h(request["message"]))
            return True
        except Exception:
            return False
    if op == "stellar_public_from_seed":
        raw = base64.b32decode(request["seed"] + "=" * (-len(request["seed"]) % 8))
        assert raw[0] == 18 << 3 and struct.unpack("<H", raw[33:35])[0] == binascii.crc_hqx(raw[:33], 0)
        public = Ed25519PrivateKey.from_private_bytes(raw[1:33]).public_key().public_bytes_raw()
        return strkey_encode(6 << 3, public)
    if op == "stellar_seed_from_bytes":
        return strkey_encode(18 << 3, h(request["seed"]))
    if op == "read_vault":
        return read_vault(request["path"], request["secret_kind"], request["secret"])
    raise ValueError(f"unknown op {op}")


def main():
    requests = json.load(sys.stdin)
    json.dump([answer(r) for r in requests], sys.stdout)


if __name__ == "__main__":
    main()
