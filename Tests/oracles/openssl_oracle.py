#!/usr/bin/env python3
"""Independent implementations Coffer's tests compare against: OpenSSL through Python's `cryptography` and
`hashlib`, plus a reader of Coffer's vault format written from docs/FORMAT.md alone.

Reads one JSON array of requests on stdin and prints one JSON array of answers. Every byte string is hex.
"""
import base64
import binascii
import datetime
import hashlib
import hmac
import json
import sqlite3
import struct
import sys
import urllib.parse

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


def text(values):
    return values[-1].decode() if values else None


def integer(values):
    if not values:
        return None
    assert len(values[-1]) == 8, "int fields are 8 bytes"
    return struct.unpack(">Q", values[-1])[0]


def time(values):
    if not values:
        return None
    assert len(values[-1]) == 8, "time fields are 8 bytes"
    return struct.unpack(">q", values[-1])[0]


def texts(values):
    return [value.decode() for value in values]


def raw(values):
    return values[-1].hex() if values else None


# FORMAT.md §5, one decoder per kind: every field of the table, by its tag, with optional fields as None.
def read_card(f):
    metadata = {}
    for entry in f.get(29, []):
        group = read_fields(entry)
        metadata[text(group[1])] = text(group[2])
    photos = []
    for entry in f.get(30, []):
        group = read_fields(entry)
        assert all(len(part) == 16 for part in group.get(5, [])), "photo part ids are 16 bytes"
        photos.append({"side": text(group[1]), "type": text(group[2]), "size": integer(group[3]),
                       "sha256": raw(group[4]), "parts": [part.hex() for part in group.get(5, [])]})
    card = {"name": text(f[16]), "symbology": text(f.get(17)), "payload": raw(f[18]), "payload_charset": text(f[19]),
            "card_number": text(f.get(20)), "tags": texts(f.get(21, [])), "network_ids": texts(f.get(22, [])),
            "valid_from": time(f.get(23)), "valid_to": time(f.get(24)), "one_time": f.get(25) == [b"\x01"],
            "used_at": time(f.get(26)), "archived_at": time(f.get(27)), "notes": text(f.get(28)), "metadata": metadata}
    if photos:
        card["photos"] = photos
    return card


def read_otp(f):
    # Tag 16 is left out for a token without an issuer (FORMAT.md revision 1.11): its issuer is then empty.
    return {"issuer": text(f[16]) if 16 in f else "", "account": text(f[17]), "type": text(f[18]), "secret": raw(f[19]),
            "algorithm": text(f[20]), "digits": integer(f[21]), "period": integer(f.get(22)),
            "counter": integer(f.get(23)), "tags": texts(f.get(24, [])), "notes": text(f.get(25))}


def read_credential(f):
    return {"name": text(f[16]), "provider": text(f.get(17)), "value": text(f[18]), "tags": texts(f.get(19, [])),
            "notes": text(f.get(20)), "username": text(f.get(21)), "url": text(f.get(22))}


def read_signing_key(f):
    return {"name": text(f[16]), "flavor": text(f[17]), "public_key": raw(f[18]), "pin_salt": raw(f[19]),
            "pin_box": raw(f[20]), "bound_vault_id": raw(f[21]), "device_secret_id": raw(f[22]),
            "failed_attempts": integer(f[23]), "tags": texts(f.get(24, [])), "notes": text(f.get(25))}


def read_note(f):
    fields = []
    for entry in f.get(18, []):
        group = read_fields(entry)
        fields.append({"label": text(group[1]), "value": text(group[2])})
    return {"name": text(f[16]), "template": text(f[17]), "fields": fields, "text": text(f.get(19)),
            "tags": texts(f.get(20, []))}


KIND_READERS = {"card": read_card, "otp": read_otp, "credential": read_credential, "signing_key": read_signing_key,
                "note": read_note}


def read_content(kind, plaintext):
    assert plaintext[0] == 1, "content version 1"
    fields = read_fields(plaintext[1:])
    content = KIND_READERS[kind](fields)
    content["created"] = time(fields[1])
    return content


def open_pin_box(content, vault_id, item_id, pin, device_secret):
    """The signing key's seed (FORMAT.md §2 PIN-held items, §3 PIN box)."""
    salt = bytes.fromhex(content["pin_salt"])
    stretched = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, 210000, 32)
    pin_key = hkdf(stretched + device_secret, salt, b"coffer/v1/pin")
    box = bytes.fromhex(content["pin_box"])
    return AESGCM(pin_key).decrypt(box[:12], box[12:], aad("coffer/v1/pin-box", [vault_id, item_id])).hex()


def passphrase_kek(kdf, salt, passphrase):
    """KDF parameters (FORMAT.md §2): 1 = PBKDF2-HMAC-SHA256, 2 = scrypt."""
    if kdf[0] == 1:
        assert len(kdf) == 5
        (iterations,) = struct.unpack(">I", kdf[1:5])
        stretched = hashlib.pbkdf2_hmac("sha256", passphrase.encode(), salt, iterations, 32)
    elif kdf[0] == 2:
        assert len(kdf) == 10
        log_n = kdf[1]
        r, p = struct.unpack(">II", kdf[2:10])
        stretched = Scrypt(salt=salt, length=32, n=1 << log_n, r=r, p=p).derive(passphrase.encode())
    else:
        raise ValueError(f"unknown KDF {kdf[0]}")
    return hkdf(stretched, salt, b"coffer/v1/kek/passphrase")


def read_vault(path, secret_kind, secret, pin=None, pin_device_secret=None):
    """Opens a Coffer vault file following docs/FORMAT.md and returns its decrypted item contents; with a PIN and
    device secret, also each signing key's seed."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    vault_id, fmt = db.execute("SELECT vault_id, format_version FROM vault").fetchone()
    assert fmt == 1
    master, kdf_ids = unlock(db, "slot", vault_id, secret_kind, secret)
    items_key = hkdf(master, vault_id, b"coffer/v1/items")
    photo_key = hkdf(master, vault_id, b"coffer/v1/photos")
    items = []
    for item_id, kind, revision, updated_at, box in db.execute(
            "SELECT id, kind, revision, updated_at, box FROM item WHERE deleted = 0"):
        if kind == "card_photo":
            open_photo_part(photo_key, vault_id, item_id, revision, updated_at, box)
            continue
        content = open_item(items_key, vault_id, item_id, kind, revision, updated_at, box)
        if kind == "card":
            for photo in content.get("photos", []):
                photo["image"] = join_photo(db, photo_key, vault_id, item_id, photo).hex()
        if kind == "signing_key" and pin is not None:
            content["seed"] = open_pin_box(content, bytes.fromhex(content["bound_vault_id"]), item_id, pin,
                                           bytes.fromhex(pin_device_secret))
        items.append({"id": item_id.hex(), "kind": kind, "revision": revision, "updated_at": updated_at,
                      "content": content})
    return {"vault_id": vault_id.hex(), "passphrase_kdfs": kdf_ids, "items": items,
            "device_labels": read_device_labels(db, master, vault_id)}


def open_photo_part(photo_key, vault_id, part_id, revision, updated_at, box):
    """A photo part box (FORMAT.md §3, §5b): u8 version, card id, u8 side, u16 index, u16 count, image bytes."""
    part_aad = aad("coffer/v1/photo", [vault_id, part_id, struct.pack(">Q", revision), struct.pack(">Q", updated_at),
                                      struct.pack(">I", 1)])
    plain = AESGCM(photo_key).decrypt(box[:12], box[12:], part_aad)
    assert plain[0] == 1, "photo part version 1"
    index, count = struct.unpack(">HH", plain[18:22])
    assert plain[17] in (1, 2) and index < count and 0 < len(plain) - 22 <= 60 * 1024, "photo part header"
    return {"card_id": plain[1:17], "side": {1: "front", 2: "back"}[plain[17]], "index": index, "count": count,
            "bytes": plain[22:]}


def join_photo(db, key, vault_id, card_id, photo):
    """The image a card's photo record names: its parts in order, each naming this card, side and place, and the
    whole of the recorded size and SHA-256."""
    image = b""
    for index, part_id in enumerate(photo["parts"]):
        row = db.execute("SELECT revision, updated_at, box FROM item WHERE id = ? AND deleted = 0 AND kind = ?",
                         (bytes.fromhex(part_id), "card_photo")).fetchone()
        assert row is not None, "a photo part is missing"
        part = open_photo_part(key, vault_id, bytes.fromhex(part_id), *row)
        assert part["card_id"] == card_id and part["side"] == photo["side"], "a part of another card or side"
        assert part["index"] == index and part["count"] == len(photo["parts"]), "a part out of place"
        image += part["bytes"]
    assert len(image) == photo["size"] and hashlib.sha256(image).hexdigest() == photo["sha256"], "photo digest"
    return image


def read_device_labels(db, master, vault_id):
    """Each device slot's sealed label (FORMAT.md §4, migration v7-slot-labels): created_at, key store, name."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'slot_label'").fetchone():
        return []
    key = hkdf(master, vault_id, b"coffer/v1/slot-label")
    labels = []
    for slot_id, box in db.execute("SELECT slot_id, box FROM slot_label WHERE slot_id IN (SELECT id FROM slot)"):
        plain = AESGCM(key).decrypt(box[:12], box[12:], aad("coffer/v1/slot-label", [vault_id, slot_id]))
        created, store_length = struct.unpack(">QI", plain[:12])
        labels.append({"slot_id": slot_id.hex(), "created_at": created,
                       "keystore": plain[12:12 + store_length].decode(), "name": plain[12 + store_length:].decode()})
    return sorted(labels, key=lambda label: label["name"])


def open_item(items_key, vault_id, item_id, kind, revision, updated_at, box):
    item_aad = aad("coffer/v1/item", [vault_id, item_id, kind.encode(), struct.pack(">Q", revision),
                                     struct.pack(">Q", updated_at), struct.pack(">I", 1)])
    return read_content(kind, AESGCM(items_key).decrypt(box[:12], box[12:], item_aad))


def unlock(db, table, vault_id, secret_kind, secret):
    """The master key from the first slot of `table` (`slot`, or a prepared rotation's `sync_rotation_slot`) that the
    secret opens, and the KDF ids of the passphrase slots tried."""
    master = None
    kdf_ids = []
    for slot_id, slot_type, kdf, salt, wrapped in db.execute(f"SELECT id, type, kdf, salt, wrapped_key FROM {table}"):
        if slot_type == 2 and secret_kind == "passphrase":
            kek = passphrase_kek(kdf, salt, secret)
            kdf_ids.append(kdf[0])
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
    return master, kdf_ids


def read_prepared_rotation(path, passphrase):
    """A master-key rotation prepared in a synced vault (docs/FORMAT.md §8.8): the new key from `master_box` under
    the current one, the staged rows opened under it, the new recovery code, and whether the prepared passphrase slot
    opens to the same new key."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (vault_id,) = db.execute("SELECT vault_id FROM vault").fetchone()
    master, _ = unlock(db, "slot", vault_id, "passphrase", passphrase)
    rotation_id, key_epoch, master_box, recovery_box = db.execute(
        "SELECT id, key_epoch, master_box, recovery_box FROM sync_rotation").fetchone()

    def rotation_aad(field):
        return aad("coffer/v1/rotation", [vault_id, rotation_id, field, struct.pack(">Q", key_epoch)])

    new_master = AESGCM(hkdf(master, vault_id, b"coffer/v1/rotation")).decrypt(
        master_box[:12], master_box[12:], rotation_aad(b"master"))
    recovery = None
    if recovery_box is not None:
        recovery = AESGCM(hkdf(new_master, vault_id, b"coffer/v1/rotation")).decrypt(
            recovery_box[:12], recovery_box[12:], rotation_aad(b"recovery")).decode()
    items_key = hkdf(new_master, vault_id, b"coffer/v1/items")
    items = []
    for item_id, kind, revision, updated_at, box in db.execute(
            "SELECT id, kind, revision, updated_at, box FROM sync_rotation_item WHERE deleted = 0"):
        items.append({"id": item_id.hex(), "revision": revision,
                      "content": open_item(items_key, vault_id, item_id, kind, revision, updated_at, box)})
    slot_master, _ = unlock(db, "sync_rotation_slot", vault_id, "passphrase", passphrase)
    return {"key_epoch": key_epoch, "items": items, "recovery_code": recovery,
            "new_master_differs": new_master != master, "passphrase_slot_opens": slot_master == new_master,
            "new_master": new_master.hex()}


def local_state_values(db, vault_id, master):
    """A reader of this vault's local state (docs/FORMAT.md §4): the value stored under a logical name, or None."""
    seal_key = hkdf(master, vault_id, b"coffer/v1/local")
    name_key = hkdf(master, vault_id, b"coffer/v1/local-names")

    def value(logical):
        row_name = hmac.new(name_key, logical.encode(), hashlib.sha256).digest()
        row = db.execute("SELECT box FROM local_state WHERE name = ?", (row_name,)).fetchone()
        if row is None:
            return None
        box = row[0]
        plain = AESGCM(seal_key).decrypt(box[:12], box[12:], aad("coffer/v1/local-box", [vault_id, row_name, struct.pack(">I", 1)]))
        (name_length,) = struct.unpack(">I", plain[:4])
        assert plain[4:4 + name_length] == logical.encode()
        return plain[4 + name_length:]

    return value, name_key


class Fields:
    """Big-endian fields of a local-state value read in order; `string` is a `str` (u16 length, UTF-8)."""

    def __init__(self, data, at):
        self.data, self.at = data, at

    def take(self, count):
        chunk = self.data[self.at:self.at + count]
        assert len(chunk) == count, "overrun"
        self.at += count
        return chunk

    def unpack(self, layout):
        return struct.unpack(layout, self.take(struct.calcsize(layout)))

    def string(self):
        (length,) = self.unpack(">H")
        return self.take(length).decode()

    def at_end(self):
        return self.at == len(self.data)


def read_catalogue(path, passphrase):
    """The catalogue of a vault (docs/FORMAT.md §4, local state `catalogue`): its entries, and for each live item
    whether its entry's clear columns are the row's own (a current entry) — read with the passphrase, from the spec."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (vault_id,) = db.execute("SELECT vault_id FROM vault").fetchone()
    master, _ = unlock(db, "slot", vault_id, "passphrase", passphrase)
    value = local_state_values(db, vault_id, master)[0]("catalogue")
    if value is None:
        return None
    assert value[0] == 1
    fields = Fields(value, 1)
    changes, count = fields.unpack(">QI")
    rows = {item_id.hex(): (kind, revision, updated_at) for item_id, kind, revision, updated_at in db.execute(
        "SELECT id, kind, revision, updated_at FROM item WHERE deleted = 0")}
    entries = []
    for _ in range(count):
        item_id = fields.take(16).hex()
        revision, updated_at, created_at = fields.unpack(">QqQ")
        kind = fields.string()
        shown = fields.string()
        (n,) = fields.unpack(">H")
        names = [[fields.string(), fields.string()] for _ in range(n)]
        entries.append({"id": item_id, "kind": kind, "name": shown, "names": names,
                        "current": rows.get(item_id) == (kind, revision, updated_at)})
    assert fields.at_end(), "trailing bytes"
    (current_changes,) = db.execute("SELECT count FROM item_changes").fetchone()
    return {"entries": entries, "live": sorted(rows), "changes_current": changes == current_changes}


def read_catalogue_buckets(path, passphrase):
    """The catalogue's name buckets (docs/FORMAT.md §4, local state `catalogue-buckets` and `catalogue-bucket-<k>`),
    read from the spec: the head's bucket count and whether its count of item writes is current, and every record
    with the bucket it is stored in and the bucket the keyed hash of its folded name says."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (vault_id,) = db.execute("SELECT vault_id FROM vault").fetchone()
    master, _ = unlock(db, "slot", vault_id, "passphrase", passphrase)
    value, name_key = local_state_values(db, vault_id, master)
    head = value("catalogue-buckets")
    if head is None:
        return None
    assert len(head) == 11 and head[0] == 1
    changes, count = struct.unpack(">QH", head[1:])
    (current_changes,) = db.execute("SELECT count FROM item_changes").fetchone()
    records = []
    for index in range(count):
        bucket = value(f"catalogue-bucket-{index}")
        assert bucket[0] == 1
        fields = Fields(bucket, 1)
        bucket_changes, n = fields.unpack(">QI")
        assert bucket_changes == changes
        for _ in range(n):
            item_id = fields.take(16).hex()
            kind, name, folded = fields.string(), fields.string(), fields.string()
            mac = hmac.new(name_key, b"coffer/v1/catalogue-bucket\x00" + folded.encode(), hashlib.sha256).digest()
            records.append({"id": item_id, "kind": kind, "name": name, "folded": folded, "bucket": index,
                            "hashed_bucket": int.from_bytes(mac[:4], "big") % count})
        assert fields.at_end(), "trailing bytes"
    return {"count": count, "changes_current": changes == current_changes, "records": records}


def iso_ms(value):
    """An ISO 8601 UTC time of the export (FORMAT.md §7) as Unix milliseconds."""
    assert value.endswith("Z"), "export times are UTC"
    moment = datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp()) * 1000


def optional(entry, key, convert=lambda value: value):
    value = entry.get(key)
    return None if value is None else convert(value)


def exact_keys(entry, required, optional_keys=()):
    keys = set(entry)
    assert set(required) <= keys, f"missing {sorted(set(required) - keys)}"
    assert keys <= set(required) | set(optional_keys), f"unknown {sorted(keys - set(required) - set(optional_keys))}"


def export_payload(card):
    encoding = card["payload_encoding"]
    if encoding == "base64":
        return base64.b64decode(card["payload"], validate=True).hex()
    return card["payload"].encode({"utf-8": "utf-8", "iso-8859-1": "latin-1"}[encoding]).hex()


def export_otp(entry):
    """The token's parameters from its otpauth:// URI (Key Uri Format): type, label, secret and code parameters."""
    uri = urllib.parse.urlsplit(entry["uri"])
    assert uri.scheme == "otpauth"
    query = urllib.parse.parse_qs(uri.query, strict_parsing=True)
    single = {key: values[0] for key, values in query.items() if len(values) == 1}
    assert len(single) == len(query), "a parameter given twice"
    label = urllib.parse.unquote(uri.path[1:])
    issuer, _, account = label.rpartition(":")
    assert account == entry["account"] and issuer == entry["issuer"] == single.get("issuer", "")
    secret = single["secret"]
    return {"issuer": entry["issuer"], "account": entry["account"], "type": uri.netloc,
            "secret": base64.b32decode(secret + "=" * (-len(secret) % 8)).hex(),
            "algorithm": single.get("algorithm"), "digits": optional(single, "digits", int),
            "period": optional(single, "period", int), "counter": optional(single, "counter", int),
            "tags": entry["tags"], "notes": entry.get("notes"), "created": iso_ms(entry["created_at"])}


def read_export(path):
    """Coffer's plaintext JSON export (FORMAT.md §7), read with Python's json module: each section's entries with
    the fields of the vault reader where the export carries them."""
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    exact_keys(document, ["format", "version", "user", "cards", "otp", "credentials", "signing_keys", "notes"])
    assert document["format"] == "coffer-export" and document["version"] == 1
    exact_keys(document["user"], ["id", "email", "created_at"])
    items = []
    for card in document["cards"]:
        exact_keys(card, ["id", "name", "payload", "payload_encoding", "tags", "network_ids",
                          "one_time", "metadata", "created_at", "updated_at"],
                   ["barcode_type", "card_number", "valid_from", "valid_to", "used_at", "archived_at", "notes", "photos"])
        assert isinstance(card["one_time"], bool)
        charset = {"base64": "binary"}.get(card["payload_encoding"], card["payload_encoding"])
        photos = []
        for photo in card.get("photos", []):
            exact_keys(photo, ["side", "type", "data"])
            image = base64.b64decode(photo["data"], validate=True)
            magic = "image/png" if image.startswith(b"\x89PNG\r\n\x1a\n") else "image/jpeg" if image.startswith(b"\xff\xd8\xff") else None
            assert photo["side"] in ("front", "back") and photo["type"] == magic and 0 < len(image) <= 2 * 1024 * 1024
            photos.append({"side": photo["side"], "type": photo["type"], "size": len(image), "image": image.hex()})
        content = {
            "name": card["name"], "symbology": card.get("barcode_type"), "payload": export_payload(card),
            "payload_charset": charset, "card_number": card.get("card_number"), "tags": card["tags"],
            "network_ids": card["network_ids"], "valid_from": optional(card, "valid_from", iso_ms),
            "valid_to": optional(card, "valid_to", iso_ms), "one_time": card["one_time"],
            "used_at": optional(card, "used_at", iso_ms), "archived_at": optional(card, "archived_at", iso_ms),
            "notes": card.get("notes"), "metadata": card["metadata"], "created": iso_ms(card["created_at"])}
        if photos:
            content["photos"] = photos
        items.append({"id": card["id"], "kind": "card", "content": content})
    for token in document["otp"]:
        exact_keys(token, ["id", "issuer", "account", "uri", "tags", "created_at"], ["notes"])
        items.append({"id": token["id"], "kind": "otp", "content": export_otp(token)})
    for credential in document["credentials"]:
        exact_keys(credential, ["id", "name", "value", "tags", "created_at"], ["provider", "notes", "username", "url"])
        items.append({"id": credential["id"], "kind": "credential", "content": {
            "name": credential["name"], "provider": credential.get("provider"), "value": credential["value"],
            "tags": credential["tags"], "notes": credential.get("notes"), "username": credential.get("username"),
            "url": credential.get("url"), "created": iso_ms(credential["created_at"])}})
    for key in document["signing_keys"]:
        exact_keys(key, ["id", "name", "algorithm", "flavor", "public_key"])
        assert key["algorithm"] == "ed25519"
        items.append({"id": key["id"], "kind": "signing_key", "content": {
            "name": key["name"], "flavor": key["flavor"], "public_key": key["public_key"]}})
    for note in document["notes"]:
        exact_keys(note, ["id", "name", "template", "fields", "tags", "created_at"], ["text"])
        for field in note["fields"]:
            exact_keys(field, ["label", "value"])
        items.append({"id": note["id"], "kind": "note", "content": {
            "name": note["name"], "template": note["template"], "fields": note["fields"], "text": note.get("text"),
            "tags": note["tags"], "created": iso_ms(note["created_at"])}})
    return {"vault_id": document["user"]["id"], "items": items}


def answer(request):
    op = request["op"]
    if op == "pbkdf2_sha256":
        kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=request["length"], salt=h(request["salt"]),
                         iterations=request["iterations"])
        return kdf.derive(h(request["password"])).hex()
    if op == "scrypt":
        return Scrypt(salt=h(request["salt"]), length=request["length"], n=request["n"], r=request["r"],
                      p=request["p"]).derive(h(request["password"])).hex()
    if op == "argon2id":
        # OpenSSL's own Argon2 (bundled with cryptography >= 44): not libargon2, which Coffer links.
        from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
        return Argon2id(salt=h(request["salt"]), length=request["length"], iterations=request["iterations"],
                        lanes=request["lanes"], memory_cost=request["memory_kib"], ad=h(request["ad"]) or None,
                        secret=h(request["secret"]) or None).derive(h(request["password"])).hex()
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
        return read_vault(request["path"], request["secret_kind"], request["secret"], request.get("pin"),
                          request.get("pin_device_secret"))
    if op == "read_prepared_rotation":
        return read_prepared_rotation(request["path"], request["passphrase"])
    if op == "vault_keys":
        # The master key and the items key a passphrase opens: what a canary scan looks for after an agent session.
        db = sqlite3.connect(f"file:{request['path']}?mode=ro", uri=True)
        vault_id = db.execute("SELECT vault_id FROM vault").fetchone()[0]
        master, _ = unlock(db, "slot", vault_id, "passphrase", request["passphrase"])
        return {"master": master.hex(), "items_key": hkdf(master, vault_id, b"coffer/v1/items").hex()}
    if op == "read_catalogue":
        return read_catalogue(request["path"], request["passphrase"])
    if op == "read_catalogue_buckets":
        return read_catalogue_buckets(request["path"], request["passphrase"])
    if op == "read_content":
        return read_content(request["kind"], h(request["content"]))
    if op == "read_export":
        return read_export(request["path"])
    if op == "refresh_retry":
        # docs/FORMAT.md §8.2 and §8.3: the retry key's wire text, the digest the server keeps, the key store entry.
        key, token = h(request["key"]), request["token"].encode()
        assert len(key) == 32
        return {"wire": base64.urlsafe_b64encode(key).rstrip(b"=").decode(), "digest": hashlib.sha256(key).hexdigest(),
                "entry": (b"\x01" + key + token).hex(), "idle_entry": token.hex()}
    raise ValueError(f"unknown op {op}")


def main():
    requests = json.load(sys.stdin)
    json.dump([answer(r) for r in requests], sys.stdout)


if __name__ == "__main__":
    main()
