#!/usr/bin/env python3
"""Prints the rows of a Coffer vault file (docs/FORMAT.md §4) as JSON, byte strings in hex, for the web vault's
JavaScript reader to open: Node 20 has no SQLite, and this script does no cryptography."""
import json
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
(vault_id,) = db.execute("SELECT vault_id FROM vault").fetchone()
slots = [{"id": i.hex(), "type": t, "kdf": (k or b"").hex(), "salt": s.hex(), "wrapped_key": w.hex()}
         for i, t, k, s, w in db.execute("SELECT id, type, kdf, salt, wrapped_key FROM slot")]
items = [{"id": i.hex(), "kind": k, "revision": r, "updated_at": u, "deleted": bool(d), "box": b.hex() if b else None}
         for i, k, r, u, d, b in db.execute("SELECT id, kind, revision, updated_at, deleted, box FROM item")]
json.dump({"vault_id": vault_id.hex(), "slots": slots, "items": items}, sys.stdout)
