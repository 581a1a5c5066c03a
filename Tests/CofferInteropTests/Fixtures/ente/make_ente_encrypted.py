"""Writes encrypted.json: export.txt sealed as Ente Auth's encrypted export (version 1) with libsodium itself,
through ctypes (Debian libsodium23): crypto_pwhash (Argon2id v0x13) of the password, then one message tagged FINAL
in a crypto_secretstream_xchacha20poly1305 stream. The salt is fixed (libsodium draws the header); the cost
is low (8 MiB, 2 passes) so the tests run fast. Adds "password" to expected.json. Run after make_ente.py."""

import base64
import ctypes
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
PASSWORD = "ente export pw ✓"
MEM_LIMIT, OPS_LIMIT = (8 << 10, 1) if FLOOR else (8 << 20, 2)

sodium = ctypes.CDLL("libsodium.so.23")
assert sodium.sodium_init() >= 0
salt = bytes(range(16))
key = ctypes.create_string_buffer(32)
password = PASSWORD.encode()
assert sodium.crypto_pwhash(key, ctypes.c_ulonglong(32), password, ctypes.c_ulonglong(len(password)), salt,
                            ctypes.c_ulonglong(OPS_LIMIT), ctypes.c_size_t(MEM_LIMIT),
                            sodium.crypto_pwhash_alg_argon2id13()) == 0
with open(os.path.join(HERE, "export.txt"), "rb") as handle:
    plain = handle.read()
state = ctypes.create_string_buffer(sodium.crypto_secretstream_xchacha20poly1305_statebytes())
header = ctypes.create_string_buffer(sodium.crypto_secretstream_xchacha20poly1305_headerbytes())
assert sodium.crypto_secretstream_xchacha20poly1305_init_push(state, header, key) == 0
sealed = ctypes.create_string_buffer(len(plain) + sodium.crypto_secretstream_xchacha20poly1305_abytes())
sealed_length = ctypes.c_ulonglong()
assert sodium.crypto_secretstream_xchacha20poly1305_push(
    state, sealed, ctypes.byref(sealed_length), plain, ctypes.c_ulonglong(len(plain)), None, ctypes.c_ulonglong(0),
    ctypes.c_ubyte(sodium.crypto_secretstream_xchacha20poly1305_tag_final())) == 0
b64 = lambda data: base64.b64encode(data).decode()
with open(os.path.join(HERE, "encrypted.json"), "w") as handle:
    json.dump({"version": 1, "kdfParams": {"memLimit": MEM_LIMIT, "opsLimit": OPS_LIMIT, "salt": b64(salt)},
               "encryptedData": b64(sealed.raw[:sealed_length.value]), "encryptionNonce": b64(header.raw)},
              handle, indent=2)
    handle.write("\n")
with open(os.path.join(HERE, "expected.json")) as handle:
    expected = json.load(handle)
expected["password"] = PASSWORD
with open(os.path.join(HERE, "expected.json"), "w") as handle:
    json.dump(expected, handle, indent=2, sort_keys=True)
    handle.write("\n")
