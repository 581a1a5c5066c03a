#!/usr/bin/env python3
"""libsodium itself (Debian libsodium23, through ctypes), as the reference for SodiumSecretStreamTests: HChaCha20,
Poly1305 and crypto_secretstream_xchacha20poly1305 sealing. No code is shared with Coffer.

Reads one JSON array of requests on stdin and prints one JSON array of hex answers."""

import ctypes
import json
import sys

sodium = ctypes.CDLL("libsodium.so.23")
assert sodium.sodium_init() >= 0


def answer(request):
    key = bytes.fromhex(request["key"])
    data = bytes.fromhex(request.get("data", ""))
    if request["op"] == "hchacha20":
        out = ctypes.create_string_buffer(32)
        assert sodium.crypto_core_hchacha20(out, data, key, None) == 0
        return out.raw
    if request["op"] == "poly1305":
        out = ctypes.create_string_buffer(16)
        assert sodium.crypto_onetimeauth_poly1305(out, data, ctypes.c_ulonglong(len(data)), key) == 0
        return out.raw
    if request["op"] == "secretstream":
        # Header, then the one sealed message, tagged as asked (0 message, 3 final).
        state = ctypes.create_string_buffer(sodium.crypto_secretstream_xchacha20poly1305_statebytes())
        header = ctypes.create_string_buffer(24)
        assert sodium.crypto_secretstream_xchacha20poly1305_init_push(state, header, key) == 0
        sealed = ctypes.create_string_buffer(len(data) + 17)
        length = ctypes.c_ulonglong()
        assert sodium.crypto_secretstream_xchacha20poly1305_push(
            state, sealed, ctypes.byref(length), data, ctypes.c_ulonglong(len(data)), None, ctypes.c_ulonglong(0),
            ctypes.c_ubyte(request["tag"])) == 0
        return header.raw + sealed.raw[:length.value]
    raise ValueError(request["op"])


print(json.dumps([answer(request).hex() for request in json.load(sys.stdin)]))
