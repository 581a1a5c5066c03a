#!/usr/bin/python3
"""Independent stream ciphers and KDF for KeePassCryptoTests: PyCryptodome (Debian python3-pycryptodome, which
pykeepass uses; run with /usr/bin/python3) for Salsa20, ChaCha20 and AES, sharing no code with Coffer.

Reads one JSON array of requests on stdin and prints one JSON array of hex answers."""

import hashlib
import json
import sys

from Cryptodome.Cipher import AES, ChaCha20, Salsa20


def answer(request):
    key = bytes.fromhex(request["key"])
    nonce = bytes.fromhex(request.get("nonce", ""))
    data = bytes.fromhex(request.get("data", ""))
    if request["op"] == "salsa20":
        return Salsa20.new(key=key, nonce=nonce).encrypt(data)
    if request["op"] == "chacha20":
        cipher = ChaCha20.new(key=key, nonce=nonce)
        cipher.seek(64 * request.get("counter", 0))
        return cipher.encrypt(data)
    if request["op"] == "aes-kdf":
        # KeePass's AES-KDF written out round by round: AES-256-ECB of each half, then SHA-256.
        ecb = AES.new(key, AES.MODE_ECB)
        for _ in range(request["rounds"]):
            data = ecb.encrypt(data)
        return hashlib.sha256(data).digest()
    if request["op"] == "aes-cbc-encrypt":
        pad = 16 - len(data) % 16
        return AES.new(key, AES.MODE_CBC, iv=nonce).encrypt(data + bytes([pad]) * pad)
    raise ValueError(request["op"])


print(json.dumps([answer(request).hex() for request in json.load(sys.stdin)]))
