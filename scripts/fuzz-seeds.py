#!/usr/bin/env python3
"""Writes seed inputs for one fuzz target into a directory, made from the committed test fixtures, so that each
fuzzing run starts from files the parsers accept instead of from nothing.

    scripts/fuzz-seeds.py FuzzImport|FuzzBarcode|FuzzItemContent|FuzzWire|FuzzAgentWire|FuzzScan|FuzzStellarXDR DIR

Each target's input starts with selector bytes (see the target's source); the seeds prepend them to the fixture.
"""
import hashlib
import os
import sqlite3
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "oracles"))

# Positions in ImportFormats.all (Sources/CofferInterop/Import.swift): byte 0 of a FuzzImport input.
IMPORTERS = {"aegis": 0, "2fas": 1, "andotp": 2, "google": 3, "bitwarden-json": 4, "bitwarden-csv": 5,
             "freeotp-plus": 6, "proton": 7, "ente": 8, "otpauth": 9, "catima": 10, "pkpass": 11, "coffer-json": 12,
             "keepass": 13, "steam": 14, "duo": 15, "fidme": 16, "stratum": 17, "authy": 18, "authenticator-plus": 19,
             "battlenet": 20, "freeotp": 21, "totp-authenticator": 22, "microsoft": 23, "vouchervault": 24,
             # Fixture folders of a second file type an importer reads.
             "google-db": 3, "steam-app": 14}

# A small plaintext export (docs/FORMAT.md §7), the one import format without a fixture file.
COFFER_JSON = b'''{"format": "coffer-export", "version": 1,
 "user": {"id": "6f1b6e7a-3c1d-4e55-9a40-0c0ffee00001", "email": null, "created_at": "2026-11-18T12:26:40Z"},
 "cards": [{"id": "00000000-0000-4000-8000-000000000000", "name": "Costco", "barcode_type": "code128",
   "payload": "111222333444", "payload_encoding": "utf-8", "tags": ["grocery"], "network_ids": ["costco"],
   "one_time": false, "metadata": {"k": "v"}, "created_at": "2026-11-18T12:26:40Z", "updated_at": "2026-11-18T12:26:40Z"},
  {"id": "00000000-0000-4000-8000-000000000001", "name": "Library", "payload": "L-998877", "payload_encoding": "utf-8",
   "tags": [], "network_ids": [], "one_time": false, "metadata": {}, "created_at": "2026-11-18T12:26:40Z",
   "updated_at": "2026-11-18T12:26:40Z"}],
 "otp": [{"id": "00000000-0000-4000-8000-000000000002", "issuer": "GitHub", "account": "alice",
   "uri": "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub&algorithm=SHA1&digits=6&period=30",
   "tags": [], "created_at": "2026-11-18T12:26:40Z"}],
 "credentials": [{"id": "00000000-0000-4000-8000-000000000005", "name": "OpenAI", "provider": "openai",
   "value": "sk-proj-0123", "tags": [], "created_at": "2026-11-18T12:26:40Z"}],
 "signing_keys": [],
 "notes": [{"id": "00000000-0000-4000-8000-000000000006", "name": "Bob", "template": "contact",
   "fields": [{"label": "Email", "value": "bob@example.com"}], "text": "Met", "tags": [], "created_at": "2026-11-18T12:26:40Z"}]}
'''

# One payload each symbology accepts, in Symbology.allCases order (Sources/CofferBarcode/Core.swift): byte 0 of a
# FuzzBarcode input. Bytes 1 and 2 (options, version and scale) vary over a few values.
BARCODE_PAYLOADS = [
    b"https://example.com/loyalty/card/42", b"LOYALTY-0042-98765432", b"\x1d0109501101530003", b"590123412345",
    b"96385074", b"036000291452", b"04252614", b"CODE-39 TEST", b"12345678", b"1540014128876", b"A40156B",
    b"PDF417 payload with text and 0123456789", b"Aztec payload 0123456789", b"DataMatrix payload",
    b"\x1d01095011015300031710123110ABC", b"Code 93: full ASCII\t42",
]


def fixture_seeds():
    fixtures = os.path.join(ROOT, "Tests", "CofferInteropTests", "Fixtures")
    for directory in sorted(os.listdir(fixtures)):
        path = os.path.join(fixtures, directory)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith(".py") or name == "expected.json":
                continue
            key = directory
            if directory == "bitwarden":
                key = "bitwarden-csv" if name.endswith(".csv") else "bitwarden-json"
            with open(os.path.join(path, name), "rb") as file:
                yield bytes([IMPORTERS[key]]) + file.read()
    yield bytes([IMPORTERS["coffer-json"]]) + COFFER_JSON
    yield from floor_seeds()
    yield from keepass_seeds()


# The fixture folders whose files are encrypted: their scripts write them again at the key-derivation floor of
# fuzzing builds (COFFER_FIXTURE_FLOOR=1, Sources/CofferInterop/FuzzingFloor.swift), under the passwords FuzzImport
# tries, so that fuzzing gets past the password to what is behind it in microseconds per input.
ENCRYPTED_FIXTURES = ["2fas", "aegis", "andotp", "authenticator-plus", "authy", "bitwarden", "ente", "freeotp", "proton",
                      "steam", "stratum"]


def floor_seeds():
    """Each encrypted fixture folder copied with otp_reference.py into a temporary tree and its make scripts run there
    at the floor (the committed fixtures are never touched); every file they write is a seed."""
    import shutil
    import subprocess
    import tempfile
    fixtures = os.path.join(ROOT, "Tests", "CofferInteropTests", "Fixtures")
    environment = dict(os.environ, COFFER_FIXTURE_FLOOR="1")
    with tempfile.TemporaryDirectory() as directory:
        shutil.copy(os.path.join(fixtures, "otp_reference.py"), directory)
        for name in ENCRYPTED_FIXTURES:
            folder = os.path.join(directory, name)
            shutil.copytree(os.path.join(fixtures, name), folder)
            for script in sorted(f for f in os.listdir(folder) if f.startswith("make_") and f.endswith(".py")):
                subprocess.run([sys.executable, os.path.join(folder, script)], check=True, capture_output=True,
                               env=environment)
            for file_name in sorted(os.listdir(folder)):
                if file_name.endswith(".py") or file_name == "expected.json" or file_name == "__pycache__":
                    continue
                key = name
                if name == "bitwarden":
                    key = "bitwarden-csv" if file_name.endswith(".csv") else "bitwarden-json"
                with open(os.path.join(folder, file_name), "rb") as file:
                    yield bytes([IMPORTERS[key]]) + file.read()


def keepass_seeds():
    """KeePass databases are not committed: the tests' writers (pykeepass and keepassxc-cli, through
    Tests/CofferInteropTests/Fixtures/keepass/make_keepass.py and Debian's /usr/bin/python3) make them here."""
    import subprocess
    import tempfile
    script = os.path.join(ROOT, "Tests", "CofferInteropTests", "Fixtures", "keepass", "make_keepass.py")
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run(["/usr/bin/python3", script, directory], check=True, capture_output=True,
                       env=dict(os.environ, COFFER_FIXTURE_FLOOR="1"))
        for name in sorted(os.listdir(directory)):
            if name.endswith(".kdbx"):
                with open(os.path.join(directory, name), "rb") as file:
                    yield bytes([IMPORTERS["keepass"]]) + file.read()


def barcode_seeds():
    for index, payload in enumerate(BARCODE_PAYLOADS):
        for flags, extra in [(0, 0), (0x41, 5), (0x9E, 2)]:
            yield bytes([index, flags, extra]) + payload


def item_content_seeds():
    """The plaintext of every item box of the golden vault (docs/FORMAT.md §4, §5), opened with its passphrase,
    after the kind's position in ItemKind.allCases."""
    from openssl_oracle import AESGCM, aad, hkdf, passphrase_kek
    kinds = ["card", "otp", "credential", "signing_key", "note"]
    db = sqlite3.connect(f"file:{os.path.join(ROOT, 'Tests/Vectors/vault/v1/vault.sqlite')}?mode=ro", uri=True)
    vault_id = db.execute("SELECT vault_id FROM vault").fetchone()[0]
    slot_id, kdf, salt, wrapped = db.execute("SELECT id, kdf, salt, wrapped_key FROM slot WHERE type = 2").fetchone()
    kek = passphrase_kek(kdf, salt, "golden passphrase v1")
    master = AESGCM(kek).decrypt(wrapped[:12], wrapped[12:], aad("coffer/v1/slot", [vault_id, slot_id, bytes([2]), kdf, salt]))
    items_key = hkdf(master, vault_id, b"coffer/v1/items")
    for item_id, kind, revision, updated_at, box in db.execute(
            "SELECT id, kind, revision, updated_at, box FROM item WHERE deleted = 0 ORDER BY id"):
        item_aad = aad("coffer/v1/item", [vault_id, item_id, kind.encode(), struct.pack(">Q", revision),
                                         struct.pack(">Q", updated_at), struct.pack(">I", 1)])
        yield bytes([kinds.index(kind)]) + AESGCM(items_key).decrypt(box[:12], box[12:], item_aad)
    # Card photos (§5b): the golden card content with its photo record, and the golden short part's plaintext
    # after 0xFF (FuzzItemContent's photo part selector).
    import json
    with open(os.path.join(ROOT, "Tests", "Vectors", "vault", "photo_v1.json")) as handle:
        photo = json.load(handle)
    yield bytes([kinds.index("card")]) + bytes.fromhex(photo["card_content"])
    photo_key = hkdf(bytes.fromhex(photo["master_key"]), bytes.fromhex(photo["vault_id"].replace("-", "")), b"coffer/v1/photos")
    part = photo["parts"][-1]
    box = bytes.fromhex(part["box"])
    part_aad = aad("coffer/v1/photo", [bytes.fromhex(photo["vault_id"].replace("-", "")), bytes.fromhex(part["id"].replace("-", "")),
                                       struct.pack(">Q", photo["revision"]), struct.pack(">Q", photo["updated_at"]), struct.pack(">I", 1)])
    yield bytes([0xFF]) + AESGCM(photo_key).decrypt(box[:12], box[12:], part_aad)


# One well-formed body of each type FuzzWire decodes, in the order of its `bodies` (Sources/FuzzWire), written from
# docs/FORMAT.md §8.2 and docs/openapi.yaml.
_SLOT = {"id": "6f1b6e7a-3c1d-4e55-9a40-0c0ffee00001", "kdf": {"algorithm": "pbkdf2-sha256", "iterations": 600000},
         "salt": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "wrapped_key": "AAAAAAAAAAAAAAAA" * 5}
_USER = {"id": "1", "email": "a@example.org", "created_at": "2026-11-18T12:26:40Z",
         "preferences": {"sync_enabled": True, "notification_radius_meters": 200}}
_ITEM = {"id": "00000000-0000-4000-8000-000000000001", "kind": "note", "revision": 2, "updated_at": 1795000000000,
         "deleted": False, "box": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"}
_TOMBSTONE = {"id": "00000000-0000-4000-8000-000000000002", "kind": "card", "revision": 3, "updated_at": 0, "deleted": True}
def _golden_manifests():
    import json
    path = os.path.join(ROOT, "Tests", "Vectors", "manifests", "manifest_v1.json")
    with open(path) as golden:
        return [entry["base64"] for entry in json.load(golden)["manifests"]]


_MANIFESTS = _golden_manifests()
WIRE_BODIES = [
    {"email": "a@example.org"},
    {"email": "a@example.org", "auth_key": "AAAA", "vault_id": _SLOT["id"], "slot": _SLOT},
    {"email": "a@example.org", "auth_key": "AAAA"},
    {"refresh_token": "eyJhbGciOiJFUzI1NiJ9.e30.sig"},
    {"auth_key": "AAAA", "new_auth_key": "BBBB", "slot": dict(_SLOT, kdf={"algorithm": "scrypt", "log_n": 15, "r": 8, "p": 1})},
    {"identity_token": "eyJ.e30.sig", "user_identifier": "u", "email": "a@example.org",
     "full_name": {"given_name": "Ada", "family_name": "L"}},
    {"items": [{"item": _ITEM, "base_revision": 1}, {"item": _TOMBSTONE, "base_revision": 2}], "base_epoch": 0,
     "chain": _MANIFESTS[:1], "manifest": _MANIFESTS[1]},
    {"kdf": {"algorithm": "pbkdf2-sha256", "iterations": 600000}, "salt": "AAECAwQFBgcICQoLDA0ODw=="},
    {"access_token": "a", "refresh_token": "r", "expires_in": 900, "token_type": "Bearer", "user": _USER,
     "vault_id": _SLOT["id"], "slot": _SLOT},
    {"user": _USER, "vault_id": _SLOT["id"], "item_count": 2, "stored_bytes": 100, "cursor": 7, "head_epoch": 2},
    {"cursor": 8, "accepted": 2},
    {"items": [_ITEM, _TOMBSTONE], "cursor": 9, "has_more": False, "head": _MANIFESTS[1]},
    {"error": "conflict", "message": "stale base revision", "details": {"conflicts": [_ITEM], "field": "items", "limit": 500}},
    {"manifests": _MANIFESTS, "has_more": False},
]


def wire_seeds():
    import base64
    import json
    for index, body in enumerate(WIRE_BODIES):
        yield bytes([index]) + json.dumps(body).encode()
    # The raw manifest target comes after the JSON bodies.
    for text in _MANIFESTS:
        yield bytes([len(WIRE_BODIES)]) + base64.b64decode(text)


def agent_wire_seeds():
    # docs/FORMAT.md §11: byte 0 even for a request, odd for an answer; then the body.
    def data(value):
        return len(value).to_bytes(4, "big") + value
    yield bytes([0, 1, 1])                                                   # status
    yield bytes([0, 1, 2]) + data(b"/v") + data(b"pass\x00\xff")            # unlock
    yield bytes([0, 1, 3, 0])                                                # lock all
    yield bytes([0, 1, 5]) + data(b"/v") + data(b"name") + b"\x01" + data(b"otp")  # find
    yield bytes([0, 1, 6]) + data(b"/v") + b"\x00" + (59000).to_bytes(8, "big")    # codes
    yield bytes([0, 1, 7]) + data(b"/v") + data(b"note") + data(b"\x01\x02")     # add
    yield bytes([1, 1, 1]) + (42).to_bytes(4, "big") + (600000).to_bytes(8, "big") + (1).to_bytes(8, "big") + b"\x07" \
        + (1).to_bytes(4, "big") + data(b"/v") + data(bytes(16)) + (1).to_bytes(8, "big") + (2).to_bytes(8, "big")
    yield bytes([1, 1, 3]) + (1).to_bytes(4, "big") + data(bytes(16)) + data(b"A") + data(b"123456") + (7).to_bytes(4, "big")
    yield bytes([1, 1, 4, 4]) + data(b"m") + (1).to_bytes(4, "big") + data(bytes(16)) + data(b"otp") + data(b"n")


def scan_seeds():
    """Pictures from the camera-photo generator (one of each symbology, shrunk so that each run takes
    milliseconds) as JPEG and PNG, zint's clean symbols, and grey pixels for the reader directly."""
    import io
    import subprocess
    import tempfile
    from PIL import Image
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "Tests", "oracles", "scan_photos.py"),
                        "--out", directory, "--per", "1", "--tiers", "clean,photo", "--no-zxing"],
                       check=True, capture_output=True)
        for name in sorted(os.listdir(directory)):
            if not name.endswith((".png", ".jpg")):
                continue
            with Image.open(os.path.join(directory, name)) as picture:
                grey = picture.convert("L")
                grey.thumbnail((240, 240))
                for kind, options in [("JPEG", {"quality": 70}), ("PNG", {})]:
                    out = io.BytesIO()
                    grey.save(out, kind, **options)
                    yield b"\x00" + out.getvalue()
                small = grey.resize((min(grey.width, 200), max(1, grey.height * min(grey.width, 200) // grey.width)))
                yield bytes([1, small.width - 1]) + small.tobytes()


def stellar_seeds():
    """Envelopes stellar-sdk builds (Tests/oracles/stellar_oracle.py): every operation, v0, v1 and fee bump."""
    import base64
    import json
    import subprocess
    oracle = os.path.join(os.path.dirname(__file__), "..", "Tests", "oracles", "stellar_oracle.py")
    answer = subprocess.run([sys.executable, oracle], input=json.dumps([{"op": "envelopes"}]), capture_output=True, text=True,
                            check=True)
    for entry in json.loads(answer.stdout)[0]:
        yield base64.b64decode(entry["envelope"])


SEEDS = {"FuzzImport": fixture_seeds, "FuzzBarcode": barcode_seeds, "FuzzItemContent": item_content_seeds,
         "FuzzWire": wire_seeds, "FuzzAgentWire": agent_wire_seeds, "FuzzScan": scan_seeds,
         "FuzzStellarXDR": stellar_seeds}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SEEDS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(SEEDS)} DIR")
    target, directory = sys.argv[1], sys.argv[2]
    os.makedirs(directory, exist_ok=True)
    count = 0
    for seed in SEEDS[target]():
        # Named by content, as libFuzzer names its corpus files, so reruns do not duplicate seeds.
        with open(os.path.join(directory, hashlib.sha1(seed).hexdigest()), "wb") as file:
            file.write(seed)
        count += 1
    print(f"fuzz-seeds: {count} seeds for {target}")


if __name__ == "__main__":
    main()
