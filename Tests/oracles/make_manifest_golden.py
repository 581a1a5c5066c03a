#!/usr/bin/env python3
"""Writes Tests/Vectors/manifests/manifest_v1.json: vault-state manifests computed from docs/FORMAT.md §8.6
alone, with Python's hashlib/hmac and `cryptography`'s HKDF, never with Coffer's code. The Swift tests must produce
the same leaves, roots, manifest bytes, tags and fingerprints, and parse these bytes back.

Run: python3 Tests/oracles/make_manifest_golden.py  (deterministic: every input is fixed below)
"""
import base64
import hashlib
import hmac
import json
import os
import struct

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


def field(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def ad(label: str, *fields: bytes) -> bytes:
    return field(label.encode()) + b"".join(field(f) for f in fields)


def uuid_bytes(text: str) -> bytes:
    return bytes.fromhex(text.replace("-", ""))


def leaf(row: dict) -> bytes:
    box = bytes.fromhex(row["box"]) if row["box"] is not None else b""
    return hashlib.sha256(ad(
        "coffer/v1/leaf", uuid_bytes(row["id"]), row["kind"].encode(), struct.pack(">Q", row["revision"]),
        struct.pack(">Q", row["updated_at"]), bytes([1 if row["deleted"] else 0]), box)).digest()


def root(rows: list) -> bytes:
    digest = hashlib.sha256(field(b"coffer/v1/state"))
    for row in sorted(rows, key=lambda r: uuid_bytes(r["id"])):
        digest.update(leaf(row))
    return digest.digest()


def kdf_encoding(kdf: dict) -> bytes:
    if kdf["algorithm"] == "pbkdf2-sha256":
        return bytes([1]) + struct.pack(">I", kdf["iterations"])
    return bytes([2, kdf["log_n"]]) + struct.pack(">II", kdf["r"], kdf["p"])


def account(kdf: dict, salt: bytes) -> bytes:
    return hashlib.sha256(ad("coffer/v1/account", kdf_encoding(kdf), salt)).digest()


def manifest_key(master_key: bytes, vault_id: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=vault_id, info=b"coffer/v1/manifest").derive(master_key)


def body(vault_id, epoch, previous, state_root, count, device, made_at, key_epoch, account_commitment) -> bytes:
    return (b"CFM1" + vault_id + struct.pack(">Q", epoch) + previous + state_root + struct.pack(">I", count) + device
            + struct.pack(">Q", made_at) + struct.pack(">I", key_epoch) + account_commitment)


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def fingerprint(epoch: int, manifest: bytes) -> str:
    digest = hashlib.sha256(manifest).digest()[:10]
    bits = int.from_bytes(digest, "big")
    chars = "".join(CROCKFORD[(bits >> (5 * (15 - i))) & 31] for i in range(16))
    return f"{epoch}:" + "-".join(chars[i:i + 4] for i in range(0, 16, 4))


def main() -> None:
    master_key = bytes(range(32))
    vault_id = uuid_bytes("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0")
    device = uuid_bytes("a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e6")
    kdf = {"algorithm": "pbkdf2-sha256", "iterations": 600000}
    salt = bytes([0x5A] * 32)
    commitment = account(kdf, salt)
    key = manifest_key(master_key, vault_id)

    rows_epoch1 = [
        {"id": "ffffffff-0000-4000-8000-000000000001", "kind": "card", "revision": 1, "updated_at": 1767225600000,
         "deleted": False, "box": "00" * 12 + "c0ffee" + "11" * 16},
        {"id": "00000000-0000-4000-8000-000000000002", "kind": "otp", "revision": 3, "updated_at": 1767225600123,
         "deleted": False, "box": "01" * 12 + "beef" + "22" * 16},
        {"id": "7fffffff-ffff-4fff-bfff-ffffffffffff", "kind": "note", "revision": 2, "updated_at": 1767225700000,
         "deleted": True, "box": None},
    ]
    rows_epoch2 = rows_epoch1[:1] + [
        {**rows_epoch1[1], "revision": 4, "updated_at": 1767225800000, "box": "02" * 12 + "cafe" + "33" * 16},
    ] + rows_epoch1[2:] + [
        {"id": "80000000-0000-4000-8000-000000000000", "kind": "credential", "revision": 1,
         "updated_at": 1767225800001, "deleted": False, "box": "03" * 12 + "abcd" + "44" * 16},
    ]

    manifests = []
    previous = bytes(32)
    for epoch, rows, made_at in [(1, rows_epoch1, 1767225601000), (2, rows_epoch2, 1767225801000)]:
        state_root = root(rows)
        manifest_body = body(vault_id, epoch, previous, state_root, len(rows), device, made_at, 1, commitment)
        tag = hmac.new(key, manifest_body, hashlib.sha256).digest()
        manifest = manifest_body + tag
        manifests.append({
            "epoch": epoch, "rows": rows, "made_at": made_at,
            "leaves": {row["id"]: leaf(row).hex() for row in rows},
            "root": state_root.hex(), "count": len(rows), "tag": tag.hex(), "manifest": manifest.hex(),
            "base64": base64.b64encode(manifest).decode(), "hash": hashlib.sha256(manifest).hexdigest(),
            "fingerprint": fingerprint(epoch, manifest),
        })
        previous = hashlib.sha256(manifest).digest()

    golden = {
        "comment": "written by Tests/oracles/make_manifest_golden.py from docs/FORMAT.md §8.6",
        "master_key": master_key.hex(), "vault_id": "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0",
        "device": "a1a2a3a4-b1b2-4c1c-8d1d-e1e2e3e4e5e6", "key_epoch": 1,
        "kdf": kdf, "salt": salt.hex(), "account": commitment.hex(), "manifest_key": key.hex(),
        "manifests": manifests,
    }
    path = os.path.join(os.path.dirname(__file__), "..", "Vectors", "manifests", "manifest_v1.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as out:
        json.dump(golden, out, indent=2, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main()
