"""Writes KeePass databases into OUTDIR with two writers that share no code with Coffer, and OUTDIR/expected.json
(the entries each must import as, with codes from otp_reference.py). Run by KeePassTests at test time, so no
database is committed:

- pykeepass (Debian python3-pykeepass; run it with /usr/bin/python3): KDBX 4 with AES-256 or ChaCha20, Argon2d,
  Argon2id or AES-KDF, gzip on or off; entries with an `otp` otpauth:// URI, KeePassXC's `TOTP Seed`/`TOTP Settings`
  (Steam too), KeePass's `TimeOtp-*`, a history, the recycle bin, a protected custom field and a note-only entry.
- keepassxc-cli (Debian keepassxc): `db-create` (KDBX 3.1, AES-KDF, Salsa20 inner stream) and `add` with user name,
  URL, notes and a password typed on stdin; and `add` onto pykeepass's Argon2 database, which KeePassXC rewrites
  whole as KDBX 4 (its own XML, gzip, ChaCha20 inner stream and HMAC blocks).
- key files: KeePassXC's XML 2.0 key file with a password and alone; pykeepass with an XML 1.0, a hex, a 32-byte and
  a hashed key file (any other file), each database holding an entry with two attached files.

Usage: /usr/bin/python3 make_keepass.py OUTDIR"""

import base64
import copy
import json
import os
import subprocess
import sys

from pykeepass import create_database
from pykeepass.kdbx_parsing.kdbx4 import kdf_uuids

HERE = os.path.dirname(os.path.abspath(__file__))
# scripts/fuzz-seeds.py runs a copy of this script with COFFER_FIXTURE_FLOOR=1: the same files at the key-derivation
# floor of fuzzing builds (Sources/CofferInterop/FuzzingFloor.swift), so fuzzing gets past the password at once.
FLOOR = os.environ.get("COFFER_FIXTURE_FLOOR") == "1"
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import b32, expected_item, secret  # noqa: E402

OUT = sys.argv[1]
PASSWORD = "keepass fixture pw ✓"
# Cheap KDF settings so the tests run in seconds; the format is the same at any cost.
ARGON_MEMORY = 1024 * 1024
ARGON_ITERATIONS = 2
AES_ROUNDS = 16 if FLOOR else 1000

GITHUB = dict(issuer="GitHub", account="alice", kind="totp", algorithm="SHA1", digits=6, period=30,
              secret=secret("keepass-github", 20))
LEGACY = dict(issuer="Legacy Bank", account="bob", kind="totp", algorithm="SHA1", digits=8, period=45,
              secret=secret("keepass-legacy", 20))
STEAM = dict(issuer="Steam", account="gamer", kind="steam", algorithm="SHA1", digits=5, secret=secret("keepass-steam", 20))
KEEPASS = dict(issuer="Native", account="carol", kind="totp", algorithm="SHA256", digits=7, period=60,
               secret=secret("keepass-native", 32))


def pykeepass_database(name, cipher="aes256", kdf="argon2", compression=True):
    path = os.path.join(OUT, name)
    kp = create_database(path, password=PASSWORD)
    header = kp.kdbx.header.value.dynamic_header
    header.cipher_id.data = cipher
    if cipher == "chacha20":
        header.encryption_iv.data = secret("keepass-iv-" + name, 12)
    header.compression_flags.data.compression = compression
    parameters = header.kdf_parameters.data.dict
    if kdf == "aeskdf":
        rounds = copy.deepcopy(parameters["I"])
        rounds.key, rounds.value = "R", AES_ROUNDS
        seed = copy.deepcopy(parameters["S"])
        seed.value = secret("keepass-aes-seed", 32)
        uuid = copy.deepcopy(parameters["$UUID"])
        uuid.value = kdf_uuids["aeskdf"]
        # construct ends the list at the item whose next_byte is 0.
        uuid.next_byte, rounds.next_byte, seed.next_byte = rounds.type, seed.type, 0
        parameters.clear()
        parameters.update({"$UUID": uuid, "R": rounds, "S": seed})
    else:
        parameters["$UUID"].value = kdf_uuids[kdf]
        parameters["M"].value = ARGON_MEMORY
        parameters["I"].value = ARGON_ITERATIONS
    # The header is rebuilt from its values, not copied from the template.
    del kp.kdbx.header.data
    return kp, path


def pykeepass_entries(kp):
    work = kp.add_group(kp.root_group, "Work")
    github = kp.add_entry(work, "GitHub", "alice", "gh pass ✓ 1", url="https://github.com/login",
                          notes="first line\nsecond line")
    github.otp = f"otpauth://totp/GitHub:alice?secret={b32(GITHUB['secret'])}&issuer=GitHub"
    github.set_custom_property("Recovery hint", "in the safe")
    github.set_custom_property("PIN", "4321")
    protect(github, "Password", "PIN")
    github.save_history()
    github.password = "gh pass ✓ 2"
    protect(github, "Password")

    legacy = kp.add_entry(kp.root_group, "Legacy Bank", "bob", "bank pass")
    legacy.set_custom_property("TOTP Seed", b32(LEGACY["secret"]))
    legacy.set_custom_property("TOTP Settings", "45;8")
    protect(legacy, "Password", "TOTP Seed")

    steam = kp.add_entry(kp.root_group, "Steam", "gamer", "")
    steam.set_custom_property("TOTP Seed", b32(STEAM["secret"]))
    steam.set_custom_property("TOTP Settings", "30;S")

    native = kp.add_entry(work, "Native", "carol", "")
    native.set_custom_property("TimeOtp-Secret-Base32", b32(KEEPASS["secret"]))
    native.set_custom_property("TimeOtp-Length", "7")
    native.set_custom_property("TimeOtp-Period", "60")
    native.set_custom_property("TimeOtp-Algorithm", "HMAC-SHA-256")

    kp.add_entry(kp.root_group, "Door codes", "", "", notes="front 1234")
    broken = kp.add_entry(kp.root_group, "Broken", "dave", "")
    broken.otp = "otpauth://totp/Broken?secret=0189"
    gone = kp.add_entry(kp.root_group, "Deleted", "eve", "deleted pass")
    kp.trash_entry(gone)
    kp.save()


def protect(entry, *keys):
    """Marks fields protected, as KeePass marks passwords: pykeepass then hides them with the inner stream."""
    for key in keys:
        for value in entry._element.xpath(f'String[Key="{key}"]/Value'):
            value.set("Protected", "True")


def expected_pykeepass():
    problems = [{"entry": "GitHub", "reason": "PIN"}, {"entry": "Broken", "reason": "secret"}]
    return {
        "credentials": [
            {"name": "GitHub", "provider": "github.com", "value": "gh pass ✓ 2", "tags": ["Work"], "username": "alice",
             "url": "https://github.com/login", "notes": "Recovery hint: in the safe\n\nfirst line\nsecond line"},
            {"name": "Legacy Bank", "provider": None, "value": "bank pass", "tags": [], "username": "bob", "url": None,
             "notes": None},
        ],
        "otp": [expected_item(GITHUB, ["Work"]), expected_item(LEGACY), expected_item(STEAM),
                expected_item(KEEPASS, ["Work"])],
        "notes": [{"name": "Door codes", "text": "front 1234"}],
        "problems": problems,
    }


def keepassxc(*arguments, stdin):
    subprocess.run(["keepassxc-cli", *arguments], input=stdin.encode(), check=True, capture_output=True)


# Pictures attached to an entry become a card's photos (issue 32): a PNG front, a JPEG back, and a text file that is
# named as left out. Only the first bytes decide the type, as Coffer's photo check reads them.
GYM_FRONT = b"\x89PNG\r\n\x1a\n" + secret("keepass-gym-front", 200)
GYM_BACK = b"\xff\xd8\xff\xe0" + secret("keepass-gym-back", 150)


def keepassxc_entries(path):
    keepassxc("add", "-q", "-u", "frank", "--url", "https://mail.example.org/", "--notes", "webmail", "-p", path,
              "Mail", stdin=f"{PASSWORD}\nmail pass ✓\n")
    keepassxc("mkdir", "-q", path, "Servers", stdin=f"{PASSWORD}\n")
    keepassxc("add", "-q", "-u", "root", "-p", path, "Servers/Router", stdin=f"{PASSWORD}\nrouter pass\n")
    keepassxc("add", "-q", "-u", "99887766", "--notes", "front desk", path, "Gym card", stdin=f"{PASSWORD}\n")
    for name, content in [("front.png", GYM_FRONT), ("back.jpg", GYM_BACK), ("readme.txt", b"opening hours\n")]:
        attached = os.path.join(OUT, "attachment-" + name)
        with open(attached, "wb") as handle:
            handle.write(content)
        keepassxc("attachment-import", "-q", path, "Gym card", name, attached, stdin=f"{PASSWORD}\n")


def expected_keepassxc(extra=None):
    expected = {
        "credentials": [
            {"name": "Mail", "provider": "mail.example.org", "value": "mail pass ✓", "tags": [], "username": "frank",
             "url": "https://mail.example.org/", "notes": "webmail"},
            {"name": "Router", "provider": None, "value": "router pass", "tags": ["Servers"], "username": "root",
             "url": None, "notes": None},
        ],
        "otp": [], "notes": [], "problems": [{"entry": "Gym card", "reason": "\"readme.txt\" is not a PNG or JPEG picture"}],
        "cards": [{"name": "Gym card", "number": "99887766", "notes": "front desk", "tags": [],
                   "front": GYM_FRONT.hex(), "back": GYM_BACK.hex()}],
    }
    for key, value in (extra or {}).items():
        expected[key] = value + expected[key]
    return expected


databases = []
for name, cipher, kdf, compression in [
    ("pykeepass_aes_argon2d.kdbx", "aes256", "argon2", True),
    ("pykeepass_chacha20_argon2id.kdbx", "chacha20", "argon2id", True),
    ("pykeepass_aes_aeskdf_plain.kdbx", "aes256", "aeskdf", False),
]:
    kp, path = pykeepass_database(name, cipher, kdf, compression)
    pykeepass_entries(kp)
    databases.append({"file": name, "writer": "pykeepass", "version": 4, **expected_pykeepass()})

# KeePassXC's own database: db-create writes KDBX 3.1 with AES-KDF (rounds from a 100 ms benchmark, its shortest).
path = os.path.join(OUT, "keepassxc_kdbx3.kdbx")
keepassxc("db-create", "-q", "-p", "-t", "100", path, stdin=f"{PASSWORD}\n{PASSWORD}\n")
keepassxc_entries(path)
databases.append({"file": "keepassxc_kdbx3.kdbx", "writer": "keepassxc-cli", "version": 3, **expected_keepassxc()})

# KeePassXC rewriting an Argon2d database: KDBX 4, every byte from KeePassXC's writer.
kp, path = pykeepass_database("keepassxc_kdbx4.kdbx")
kp.add_entry(kp.root_group, "Seed", "", "").otp = (
    f"otpauth://totp/Example:grace?secret={b32(GITHUB['secret'])}&issuer=Example")
kp.save()
keepassxc_entries(path)
grace = dict(GITHUB, issuer="Example", account="grace")
databases.append({"file": "keepassxc_kdbx4.kdbx", "writer": "keepassxc-cli", "version": 4,
                  **expected_keepassxc({"otp": [expected_item(grace)]})})


# Key files (issue 32). KeePassXC writes its own XML 2.0 key file (hex, with a hash of the key) for a database opened
# with a password and the key file, and for one opened with the key file alone. pykeepass opens databases with the
# other kinds KeePass reads: XML 1.0 (base64), 64 hex digits, 32 raw bytes, and any other file (its SHA-256).
# One entry carries five attachments: two pictures Coffer keeps as a card's photos, a third picture, a text file and
# a reference to a file the database lacks, each named as left out.
keyfile_databases = []


def kdbx_version(path):
    with open(path, "rb") as handle:
        header = handle.read(12)
    return int.from_bytes(header[10:12], "little")


key = os.path.join(OUT, "keepassxc.keyx")
path = os.path.join(OUT, "keepassxc_keyfile.kdbx")
keepassxc("db-create", "-q", "-p", "-t", "100", "--set-key-file", key, path, stdin=f"{PASSWORD}\n{PASSWORD}\n")
keepassxc("add", "-q", "-u", "frank", "-p", "--key-file", key, path, "Mail", stdin=f"{PASSWORD}\nmail pass ✓\n")
mail = {"name": "Mail", "provider": None, "value": "mail pass ✓", "tags": [], "username": "frank", "url": None,
        "notes": None}
keyfile_databases.append({"file": "keepassxc_keyfile.kdbx", "keyfile": "keepassxc.keyx", "password": PASSWORD,
                          "writer": "keepassxc-cli", "version": kdbx_version(path), "credentials": [mail],
                          "problems": []})

key = os.path.join(OUT, "keepassxc_only.keyx")
path = os.path.join(OUT, "keepassxc_keyfile_only.kdbx")
keepassxc("db-create", "-q", "-t", "100", "--set-key-file", key, path, stdin="")
keepassxc("add", "-q", "--no-password", "--key-file", key, "-u", "root", "-p", path, "Router", stdin="router pass\n")
router = {"name": "Router", "provider": None, "value": "router pass", "tags": [], "username": "root", "url": None,
          "notes": None}
keyfile_databases.append({"file": "keepassxc_keyfile_only.kdbx", "keyfile": "keepassxc_only.keyx", "password": None,
                          "writer": "keepassxc-cli", "version": kdbx_version(path), "credentials": [router],
                          "problems": []})

KEY_BYTES = secret("keepass-keyfile", 32)
KEY_FILES = {
    "xml1.key": ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<KeyFile><Meta><Version>1.00</Version></Meta><Key><Data>"
                 + base64.b64encode(KEY_BYTES).decode() + "</Data></Key></KeyFile>\n").encode(),
    "hex.key": KEY_BYTES.hex().upper().encode(),
    "raw.key": KEY_BYTES,
    "photo.jpg": b"\xff\xd8\xff\xe0" + secret("keepass-keyfile-photo", 300),
}
for index, (key_name, content) in enumerate(KEY_FILES.items()):
    key = os.path.join(OUT, key_name)
    with open(key, "wb") as handle:
        handle.write(content)
    name = f"pykeepass_keyfile_{index}.kdbx"
    path = os.path.join(OUT, name)
    kp = create_database(path, password=PASSWORD, keyfile=key)
    header = kp.kdbx.header.value.dynamic_header
    parameters = header.kdf_parameters.data.dict
    parameters["M"].value = ARGON_MEMORY
    parameters["I"].value = ARGON_ITERATIONS
    del kp.kdbx.header.data
    scans = kp.add_entry(kp.root_group, "Scans", "zoe", "scan pass")
    scans.add_attachment(kp.add_binary(b"\x89PNG\r\n\x1a\n" + secret("keepass-attachment", 64)), "card.png")
    scans.add_attachment(kp.add_binary(b"plain text notes"), "notes.txt")
    scans.add_attachment(kp.add_binary(b"\xff\xd8\xff" + secret("keepass-attachment-2", 64)), "back.jpg")
    scans.add_attachment(kp.add_binary(b"\x89PNG\r\n\x1a\n" + secret("keepass-attachment-3", 64)), "third.png")
    # An attachment whose file the database does not hold.
    scans.add_attachment(99, "lost.png")
    kp.save()
    credential = {"name": "Scans", "provider": None, "value": "scan pass", "tags": [], "username": "zoe", "url": None,
                  "notes": None}
    keyfile_databases.append({"file": name, "keyfile": key_name, "password": PASSWORD, "writer": "pykeepass",
                              "version": 4, "credentials": [credential],
                              "problems": [{"entry": "Scans", "reason": "\"notes.txt\" is not a PNG or JPEG picture"},
                                           {"entry": "Scans", "reason": "\"third.png\" was left out (a card keeps a front and a back photo)"},
                                           {"entry": "Scans", "reason": "\"lost.png\" is missing from the database"}]})

with open(os.path.join(OUT, "expected.json"), "w") as handle:
    json.dump({"password": PASSWORD, "argon_memory": ARGON_MEMORY, "databases": databases,
               "keyfile_databases": keyfile_databases}, handle, indent=2, sort_keys=True)
