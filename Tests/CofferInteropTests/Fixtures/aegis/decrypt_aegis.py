"""Outside oracle for AegisTests: decrypts an Aegis vault (docs/vault.md) with Python `cryptography` and prints the
content JSON. Usage: python3 decrypt_aegis.py PASSWORD < vault.json"""

import base64
import json
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

vault = json.load(sys.stdin)
password = sys.argv[1].encode()
header = vault["header"]
master_key = None
for slot in header["slots"]:
    if slot["type"] != 1:
        continue
    derived = Scrypt(salt=bytes.fromhex(slot["salt"]), length=32, n=slot["n"], r=slot["r"], p=slot["p"]).derive(password)
    params = slot["key_params"]
    master_key = AESGCM(derived).decrypt(
        bytes.fromhex(params["nonce"]), bytes.fromhex(slot["key"]) + bytes.fromhex(params["tag"]), None)
    break
params = header["params"]
content = AESGCM(master_key).decrypt(
    bytes.fromhex(params["nonce"]), base64.b64decode(vault["db"]) + bytes.fromhex(params["tag"]), None)
print(json.dumps({"content": json.loads(content), "slots": header["slots"], "params": params}))
