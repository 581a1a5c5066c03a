#!/usr/bin/env python3
"""Camera-like photos of barcodes for the reader's tests and benches, drawn by independent encoders (zint, and
qrencode for every other QR code), and what zxing-cpp (the anchor) reads from each saved file.

Run:
  python3 Tests/oracles/scan_photos.py --out DIR [--seed 1] [--per 40] [--tiers clean,photo,hard]
      [--symbologies ean13,qr,...] [--no-zxing]
      [--y4m FILE [--frames-per-image 5] [--size 1280x720] [--y4m-per 1]]

Everything is deterministic (given the same zint, qrencode and Pillow/libjpeg): each payload and each image has its
own numpy Generator (PCG64) seeded from (seed, symbology, index, tier), so adding or leaving out a symbology or a
tier changes no other file.

For each symbology and each of --per payloads:
  - the payload is drawn (EAN/UPC with right check digits, loyalty numbers, Code 39 upper case, ITF digits,
    Codabar A...B, GS1 element strings, otpauth:// and other texts, now and then UTF-8 for QR);
  - the symbol is drawn by zint (QR: zint for even indexes, qrencode for odd ones) and the clean render must read
    back with zxing-cpp to the expected bytes; if it does not, the payload is recorded in "skipped" and another is
    drawn for the same index (up to 5 times);
  - one image per tier:
      clean  flat 8-bit grey PNG, axis-aligned, 2-4 px a module, quiet zone (10 modules for 1D, 4 for 2D);
      photo  the symbol on a printed card (bands, text, logo; bars of 1D codes other than EAN/UPC 18-40% as tall as
             the symbol is wide) on a cluttered desk (texture, paper with text, lines), the card covering 20-80% of a
             640x480 or 1280x720 frame (uniform, narrowed so that modules are 1.5-8 px where the symbol allows);
             3-D tilt <= 25 deg under a pinhole camera; rotation any angle for 2D (PDF417 included), within
             +-30 deg for 1D (15% of these also turned 180 deg); Gaussian blur sigma 0.3-1.5 (mostly sharp);
             light gradient, vignette, white balance, sensor noise; JPEG quality 60-95;
      hard   as photo with tilt <= 40 deg, motion blur 3-10 px plus Gaussian sigma 0.3-1.0, a glare spot on every
             image (60% of them over the symbol), stronger gradient and vignette, more noise, JPEG quality 35-70.

Output: DIR/<symbology>-<tier>-<index:03>.png (clean) or .jpg, and DIR/manifest.json:
  {"seed": 1, "per": 40, "generator": "scan_photos.py v1", "zxing_version": "3.1.1",
   "images": [{"file": "qr-photo-007.jpg", "tier": "photo", "symbology": "qr", "payload_hex": "...",
               "width": 640, "height": 480, "encoder": "zint" | "qrencode",
               "scene": {"module_px", "rotation", "tilt", "coverage", "gradient", "vignette", "exposure",
                         "glare": {"x", "y", "radius", "amplitude"} (hard), "motion_px" (hard), "blur_sigma",
                         "noise", "jpeg_quality"}   (clean: {"module_px"} only),
               "zxing": {"reads": [{"format": "QRCode", "aim": "]Q1", "payload_hex": "...", "correct": true}],
                         "ms": 3.1}}],
   "skipped": [{"symbology", "index", "attempt", "data", "payload_hex", "reads" | "error"}],
   "y4m": {"file", "width", "height", "fps", "frames": [{"first", "count", "image"}]}   (only with --y4m)}
reads[].format is zxing-cpp's BarcodeFormat name, aim its symbology identifier, payload_hex its raw bytes.
"zxing" is left out with --no-zxing (clean renders are still checked with zxing-cpp).

payload_hex is what Coffer stores: EAN/UPC all digits with the check digit (UPC-E: 8 digits, number system and
check digit included); Code 39 without * and without a check character; Codabar with its start/stop letters; ITF
digits; GS1 as the element string without a leading FNC1 and with 0x1D after each variable-length field that is not
the last; 2D symbols their raw bytes.

zxing-cpp anchor: each saved file is read back as Coffer will (Pillow, convert("L")), then one
zxingcpp.read_barcodes(array) call with default options is timed (perf_counter, ms). A read is correct when its
format maps to the image's symbology and its bytes, normalised, equal payload_hex. Formats: GS1-128 is Code128
with AIM ]C1 (plain Code 128 any other), GS1 DataMatrix is DataMatrix with ]d2; ITF-14 is reported as ITF.
Normalisation needed with zxing-cpp 3.1.1 defaults: UPC-A is reported as EAN13 with a leading 0 (dropped); UPC-E as
the 13-digit expanded number (both sides compared as 12-digit UPC-A). Kept for other versions and options, not
triggered by 3.1.1: Codabar read without start/stop letters is compared without them; a "]C1"/"]d2" prefix or a
leading 0x1D is dropped for GS1 (result.bytes carries neither).

--y4m writes a raw YUV4MPEG2 video (C420jpeg, 10 fps) of the first --y4m-per photo-tier images of each symbology,
each letterboxed to --size (scaled to fit, black bars) and held for --frames-per-image frames, for Chromium's
--use-file-for-fake-video-capture.
"""
import argparse
import colorsys
import importlib.metadata
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

import zxingcpp

CARD_PX_PER_MODULE = 4  # symbols are printed on the card at 4 px a module, then projected into the frame
CARD_ASPECT = 85.6 / 54.0  # ID-1 card
TIER_CODES = {"payload": 0, "clean": 1, "photo": 2, "hard": 3, "card": 4}  # random streams


# ---------------------------------------------------------------- randomness

def generator(seed, symbology, index, stream, attempt=0):
    """One PCG64 stream for (seed, symbology, index, stream); crc32 keeps it stable across runs and Pythons."""
    words = [seed, zlib.crc32(symbology.encode()), index, TIER_CODES[stream], attempt]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def pick(rng, items):
    return items[int(rng.integers(len(items)))]


def digits(rng, count):
    return "".join(str(d) for d in rng.integers(0, 10, count))


def chars(rng, alphabet, count):
    return "".join(alphabet[i] for i in rng.integers(0, len(alphabet), count))


# ---------------------------------------------------------------- check digits

def gs1_check(body):
    """GS1 mod-10 check digit (EAN, UPC, ITF-14, GTIN, SSCC): weights 3,1,3,... from the right."""
    total = sum(int(c) * (3 if i % 2 == 0 else 1) for i, c in enumerate(reversed(body)))
    return str((10 - total % 10) % 10)


def luhn_check(body):
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def upce_to_upca(upce):
    """8-digit UPC-E (number system, 6 digits, check) -> 12-digit UPC-A."""
    ns, d, check = upce[0], upce[1:7], upce[7]
    last = d[5]
    if last in "012":
        body = d[0:2] + last + "0000" + d[2:5]
    elif last == "3":
        body = d[0:3] + "00000" + d[3:5]
    elif last == "4":
        body = d[0:4] + "00000" + d[4]
    else:
        body = d[0:5] + "0000" + last
    return ns + body + check


# ---------------------------------------------------------------- payloads: (encoder data, expected bytes)

def ean13_payload(rng):
    prefixes = ["20", "21", "24", "29", "400", "401", "425", "590", "760", "978", "979", "30", "50", "87", "80"]
    prefix = pick(rng, prefixes)  # in-store/loyalty (2x), countries, books
    body = prefix + digits(rng, 12 - len(prefix))
    return body, (body + gs1_check(body)).encode()


def ean8_payload(rng):
    body = pick(rng, ["2", "4", "5", "9", "7"]) + digits(rng, 6)
    return body, (body + gs1_check(body)).encode()


def upca_payload(rng):
    body = pick(rng, ["0", "0", "1", "2", "4", "4", "5", "6", "7", "8"]) + digits(rng, 10)
    return body, (body + gs1_check(body)).encode()


def upce_payload(rng):
    ns, last = pick(rng, ["0", "0", "1"]), int(rng.integers(10))
    d = [int(x) for x in rng.integers(0, 10, 5)]
    if last == 3:
        d[2] = int(rng.integers(3, 10))  # keeps the number the one canonical UPC-E of its UPC-A
    elif last == 4:
        d[3] = int(rng.integers(1, 10))
    elif last >= 5:
        d[4] = int(rng.integers(1, 10))
    seven = ns + "".join(map(str, d)) + str(last)
    upca = upce_to_upca(seven + "0")[:11]
    return seven, (seven + gs1_check(upca)).encode()


def code128_payload(rng):
    kind = int(rng.integers(5))
    if kind == 0:  # payment-style loyalty number with a Luhn digit
        body = pick(rng, ["6", "60", "627", "7"]) + digits(rng, int(rng.integers(14, 18)))
        text = body + luhn_check(body)
    elif kind == 1:
        text = pick(rng, ["CM", "LP", "BX", "HV"]) + digits(rng, int(rng.integers(6, 11)))
    elif kind == 2:
        text = pick(rng, ["Member-", "gym/", "Card ", "id:"]) + digits(rng, int(rng.integers(4, 8)))
    elif kind == 3:
        text = chars(rng, "abcdefghijkmnpqrstuvwxyz23456789", int(rng.integers(6, 12)))
    else:
        text = pick(rng, ["Library ", "Bib#", "Pool "]) + chars(rng, "ABCDEFGHJKLMNPQRSTUVWXYZ", 2) + digits(rng, 5)
    return text, text.encode()


def gs1_elements(rng, long=False):
    """A GS1 element string as [(AI, value)]."""
    gtin13 = digits(rng, 12)
    gtin = "0" + gtin13 + gs1_check("0" + gtin13) if rng.random() < 0.6 else \
        (lambda b: b + gs1_check(b))(str(int(rng.integers(1, 9))) + digits(rng, 12))
    date = "%02d%02d%02d" % (int(rng.integers(24, 31)), int(rng.integers(1, 13)), int(rng.integers(1, 29)))
    lot = chars(rng, "ABCDEFGHJKLMNPRSTUVWXYZ0123456789", int(rng.integers(3, 9)))
    serial = chars(rng, "0123456789ABCDEFX-", int(rng.integers(4, 11))).strip("-") or "1"
    kind = int(rng.integers(6 if long else 5))
    if kind == 0:
        return [("01", gtin), ("17", date), ("10", lot)]
    if kind == 1:
        return [("01", gtin), ("21", serial)]
    if kind == 2:
        body = str(int(rng.integers(10))) + digits(rng, 16)
        return [("00", body + gs1_check(body))]
    if kind == 3:
        return [("01", gtin), ("3103", "%06d" % int(rng.integers(1, 30000))), ("15", date)]
    if kind == 4:
        return [("01", gtin), ("10", lot), ("21", serial)]
    return [("01", gtin), ("11", date), ("17", date), ("10", lot), ("21", serial)]


FIXED_LENGTH_AIS = {"00", "01", "11", "15", "17", "3103"}


def gs1_payload(elements):
    """zint's bracketed form, and the element string as Coffer stores it (0x1D ends variable fields but the last)."""
    data = "".join("[%s]%s" % (ai, value) for ai, value in elements)
    out = b""
    for i, (ai, value) in enumerate(elements):
        out += (ai + value).encode()
        if ai not in FIXED_LENGTH_AIS and i < len(elements) - 1:
            out += b"\x1d"
    return data, out


def gs1_128_payload(rng):
    return gs1_payload(gs1_elements(rng))


def gs1_datamatrix_payload(rng):
    return gs1_payload(gs1_elements(rng, long=True))


def code39_payload(rng):
    kind = int(rng.integers(4))
    if kind == 0:
        text = pick(rng, ["MEMBER ", "LIB-", "CARD.", "ID "]) + digits(rng, int(rng.integers(4, 8)))
    elif kind == 1:
        text = chars(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", int(rng.integers(5, 11)))
    elif kind == 2:
        text = digits(rng, int(rng.integers(6, 12)))
    else:
        text = chars(rng, "ABCDEFGHJKLMNPQRSTUVWXYZ", 3) + pick(rng, ["-", ".", "/", "$"]) + digits(rng, 5)
    return text, text.encode()


def itf_payload(rng):
    text = digits(rng, int(pick(rng, [6, 8, 10, 10, 12, 12, 16, 18, 20])))
    return text, text.encode()


def itf14_payload(rng):
    body = str(int(rng.integers(1, 9))) + digits(rng, 12)
    return body, (body + gs1_check(body)).encode()


def codabar_payload(rng):
    start, stop = ("A", "B") if rng.random() < 0.6 else (pick(rng, list("ABCD")), pick(rng, list("ABCD")))
    body = digits(rng, int(rng.integers(6, 14)))
    if rng.random() < 0.25:
        cut = int(rng.integers(2, len(body) - 1))
        body = body[:cut] + pick(rng, ["-", "$", ".", ":"]) + body[cut:]
    text = start + body + stop
    return text, text.encode()


BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
ISSUERS = ["GitHub", "Proton", "Coffer", "Example%20Bank", "Fastmail", "Nextcloud", "Mastodon", "AWS"]
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
DOMAINS = ["example.org", "example.com", "vault.example.net", "coffer.app", "tickets.example"]
UTF8_TEXTS = ["Café Zürich — Schlüssel %d", "Ключ от шкафа %d", "東京 会員番号 %d", "Naïve façade № %d",
              "Ελληνικά %d €", "łódź gęś %d"]


def otpauth_text(rng):
    issuer, name = pick(rng, ISSUERS), pick(rng, NAMES)
    secret = chars(rng, BASE32, int(pick(rng, [16, 26, 32])))
    text = "otpauth://totp/%s:%s%%40%s?secret=%s&issuer=%s" % (issuer, name, pick(rng, DOMAINS), secret, issuer)
    if rng.random() < 0.3:
        text += pick(rng, ["&digits=8", "&period=60", "&algorithm=SHA256"])
    return text


def boarding_text(rng):
    """A short IATA BCBP-like line (fixed-width fields), as on boarding passes."""
    name = (pick(rng, ["DOE/JANE", "MULLER/ANNA", "ROSSI/LUCA", "SMITH/JOHN MR"]) + " " * 20)[:20]
    code = chars(rng, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 6)
    route = pick(rng, ["ZRHLHR", "GVAAMS", "FRAJFK", "CDGBCN", "VIEOSL"])
    carrier = pick(rng, ["LX ", "LH ", "AF ", "KL "])
    flight = "%04d" % int(rng.integers(1, 9999))
    return "M1%sE%s %s%s%s %03dY%03dC%04d 100" % (name, code, route, carrier, flight, int(rng.integers(1, 366)),
                                                  int(rng.integers(1, 40)), int(rng.integers(1, 300)))


def text_2d(rng, kinds):
    kind = pick(rng, kinds)
    if kind == "otpauth":
        text = otpauth_text(rng)
    elif kind == "url":
        text = "https://%s/%s/%s" % (pick(rng, DOMAINS), pick(rng, ["c", "m", "t", "join"]),
                                     chars(rng, "abcdefghijkmnopqrstuvwxyz0123456789", int(rng.integers(6, 14))))
    elif kind == "wifi":
        password = chars(rng, "abcdefghjkmnpqrstuvwxyzABCDEFGH23456789", int(rng.integers(8, 17)))
        text = "WIFI:T:WPA;S:%s;P:%s;;" % (pick(rng, ["Home", "Office-5G", "Cafe Guest", "Lab"]), password)
    elif kind == "boarding":
        text = boarding_text(rng)
    elif kind == "utf8":
        return (pick(rng, UTF8_TEXTS) % int(rng.integers(10, 10000))).encode()
    else:
        text = pick(rng, ["Locker %d PIN %04d", "Member %d since %d", "Room %d code %d", "Ticket %d seat %d"]) % \
            (int(rng.integers(1, 500)), int(rng.integers(0, 10000)))
    return text.encode()


def qr_payload(rng):
    raw = text_2d(rng, ["otpauth", "otpauth", "url", "wifi", "text", "utf8"])
    return raw, raw


def aztec_payload(rng):
    raw = text_2d(rng, ["otpauth", "url", "boarding", "boarding", "text"])
    return raw, raw


def pdf417_payload(rng):
    raw = text_2d(rng, ["boarding", "boarding", "url", "text", "text"])
    return raw, raw


def datamatrix_payload(rng):
    raw = text_2d(rng, ["otpauth", "url", "text", "text"])
    return raw, raw


# ---------------------------------------------------------------- symbologies

class Symbology:
    def __init__(self, name, zint, payload, formats, two_d=False, gs1=False, retail=False):
        self.name, self.zint, self.payload, self.formats = name, zint, payload, formats
        self.two_d, self.gs1, self.retail = two_d, gs1, retail


SYMBOLOGIES = [
    Symbology("ean13", "EANX", ean13_payload, {"EAN13"}, retail=True),
    Symbology("ean8", "EANX", ean8_payload, {"EAN8"}, retail=True),
    Symbology("upc_a", "UPCA", upca_payload, {"UPCA", "EAN13"}, retail=True),
    Symbology("upc_e", "UPCE", upce_payload, {"UPCE"}, retail=True),
    Symbology("code128", "CODE128", code128_payload, {"Code128"}),
    Symbology("gs1_128", "GS1_128", gs1_128_payload, {"Code128"}, gs1=True),
    Symbology("code39", "CODE39", code39_payload, {"Code39", "Code39Std"}),
    Symbology("itf", "C25INTER", itf_payload, {"ITF"}),
    Symbology("itf14", "ITF14", itf14_payload, {"ITF", "ITF14"}),
    Symbology("codabar", "CODABAR", codabar_payload, {"Codabar"}),
    Symbology("qr", "QRCODE", qr_payload, {"QRCode"}, two_d=True),
    Symbology("pdf417", "PDF417", pdf417_payload, {"PDF417"}, two_d=True),
    Symbology("aztec", "AZTEC", aztec_payload, {"Aztec"}, two_d=True),
    Symbology("datamatrix", "DATAMATRIX", datamatrix_payload, {"DataMatrix"}, two_d=True),
    Symbology("gs1_datamatrix", "DATAMATRIX", gs1_datamatrix_payload, {"DataMatrix"}, two_d=True, gs1=True),
]
BY_NAME = {s.name: s for s in SYMBOLOGIES}


# ---------------------------------------------------------------- normalisation of zxing-cpp's reads

def comparable(symbology, payload):
    """Coffer's payload in the form reads are compared in (UPC-E: its 12-digit UPC-A)."""
    if symbology.name == "upc_e" and len(payload) == 8:
        return upce_to_upca(payload.decode()).encode()
    return payload


def normalise(symbology, fmt, aim, raw):
    """zxing-cpp's bytes in the comparable form for this symbology, or None when the format cannot be it."""
    if fmt not in symbology.formats:
        return None
    if symbology.gs1 != (aim in ("]C1", "]d2")) and symbology.name in ("code128", "gs1_128", "datamatrix",
                                                                        "gs1_datamatrix"):
        return None
    if symbology.name == "upc_a" and fmt == "EAN13":
        return raw[1:] if len(raw) == 13 and raw[:1] == b"0" else None
    if symbology.name == "upc_e":
        if len(raw) == 13 and raw[:1] == b"0":
            return raw[1:]
        return upce_to_upca(raw.decode()).encode() if len(raw) == 8 else raw
    if symbology.gs1:
        for prefix in (b"]C1", b"]d2", b"\x1d"):
            if raw.startswith(prefix):
                raw = raw[len(prefix):]
    return raw


def is_correct(symbology, payload, fmt, aim, raw):
    got = normalise(symbology, fmt, aim, raw)
    if got is None:
        return False
    want = comparable(symbology, payload)
    if symbology.name == "codabar" and got[:1] not in (b"A", b"B", b"C", b"D"):
        want = want[1:-1]  # read without start/stop letters
    return got == want


def zxing_reads(symbology, payload, gray):
    """Times one default read_barcodes call on an 8-bit grey array; returns (reads, ms)."""
    started = time.perf_counter()
    results = zxingcpp.read_barcodes(gray)
    ms = (time.perf_counter() - started) * 1000.0
    reads = []
    for r in results:
        fmt, aim, raw = r.format.name, r.symbology_identifier, bytes(r.bytes)
        reads.append({"format": fmt, "aim": aim, "payload_hex": raw.hex(),
                      "correct": is_correct(symbology, payload, fmt, aim, raw)})
    return reads, ms


# ---------------------------------------------------------------- encoders

def load_gray(path):
    """A PNG as 8-bit grey, transparency flattened on white."""
    image = Image.open(path)
    if image.mode in ("P", "PA", "LA", "RGBA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba)
    return image.convert("L")


def encoder_options(symbology, index, rng):
    """Per-payload options shared by the clean and the card render (so both draw the same symbol)."""
    if symbology.name == "qr":
        level = pick(rng, ["L", "M", "M", "Q", "H"])
        if index % 2:
            return "qrencode", {"level": level}
        return "zint", {"args": ["--secure=%d" % ("LMQH".index(level) + 1)]}
    args = []
    if symbology.name == "pdf417":
        args.append("--cols=%d" % int(rng.integers(2, 6)))
    if symbology.name == "aztec":
        args.append("--secure=%d" % int(rng.integers(1, 5)))
    if symbology.name == "gs1_datamatrix":
        args.append("--gs1")
    return "zint", {"args": args}


def card_options(symbology, options, clean, px, rng):
    """The card render's options: for 1D codes other than EAN/UPC, bars 18-40% as tall as the symbol is wide."""
    if symbology.two_d or symbology.retail:
        return options
    modules = clean.width // px - 2 * quiet_modules(symbology)
    height = int(round(modules * rng.uniform(0.18, 0.4)))
    return dict(options, args=options["args"] + ["--height=%d" % height])


def render(symbology, data, encoder, options, px_per_module, directory):
    """The symbol, no quiet zone added, as an 8-bit grey image at px_per_module."""
    path = os.path.join(directory, "symbol.png")
    if encoder == "qrencode":
        raw = data if isinstance(data, bytes) else data.encode()
        cmd = ["qrencode", "-o", path, "-s", str(px_per_module), "-m", "0", "-l", options["level"]]
        if any(b >= 0x80 for b in raw):
            cmd.append("-8")
        subprocess.run(cmd, input=raw, check=True, capture_output=True)  # the data on stdin, byte for byte
    else:
        text = data.decode() if isinstance(data, bytes) else data
        cmd = ["zint", "-b", symbology.zint, "--scale=%g" % (px_per_module / 2.0), "-o", path] + options["args"]
        if isinstance(data, bytes) and any(b >= 0x80 for b in data):
            cmd.append("--binary")  # raw UTF-8 bytes in byte mode, no Latin-1 or Kanji conversion
        subprocess.run(cmd + ["--data=" + text], check=True, capture_output=True)
    return load_gray(path)


def quiet_modules(symbology):
    return 4 if symbology.two_d else 10


def clean_image(symbology, symbol, px_per_module):
    margin = quiet_modules(symbology) * px_per_module
    out = Image.new("L", (symbol.width + 2 * margin, symbol.height + 2 * margin), 255)
    out.paste(symbol, (margin, margin))
    return out


# ---------------------------------------------------------------- card and desk

_FONTS = {}


def font(size):
    size = max(8, int(size))
    if size not in _FONTS:
        _FONTS[size] = ImageFont.load_default(size=size)
    return _FONTS[size]


def hsv_colour(rng, sat, val):
    r, g, b = colorsys.hsv_to_rgb(rng.random(), rng.uniform(*sat), rng.uniform(*val))
    return int(r * 255), int(g * 255), int(b * 255)


BRANDS = ["BEAN & CO", "FitHub", "City Library", "MegaMart", "Green Grocer", "PetWorld", "Cinema+", "BookNook",
          "SwimClub", "AirMiles", "Pharma 24", "HomeStore"]


def label_image(rng, symbol, size, quiet):
    """The symbol printed on a white label with its quiet zone (ink not quite black, paper not quite white)."""
    paper = np.array([rng.integers(232, 256)] * 3, dtype=np.float32) - rng.uniform(0, 8, 3).astype(np.float32)
    ink = np.array(pick(rng, [(20, 20, 22), (10, 15, 50), (35, 30, 30), (0, 0, 0)]), dtype=np.float32)
    a = np.asarray(symbol, dtype=np.float32)[..., None] / 255.0
    pixels = ink + (paper - ink) * a
    label = Image.new("RGB", size, tuple(int(v) for v in paper))
    label.paste(Image.fromarray(pixels.clip(0, 255).astype(np.uint8)), (quiet, quiet))
    return label


def draw_card_art(rng, width, height):
    base = hsv_colour(rng, (0.2, 0.9), (0.35, 0.95))
    card = Image.new("RGB", (width, height), base)
    draw = ImageDraw.Draw(card)
    for _ in range(int(rng.integers(1, 4))):  # bands and swooshes
        colour = hsv_colour(rng, (0.1, 1.0), (0.2, 1.0))
        y0, y1 = sorted(rng.uniform(-0.2, 1.2, 2) * height)
        skew = rng.uniform(-0.4, 0.4) * height
        draw.polygon([(0, y0), (width, y0 + skew), (width, y1 + skew), (0, y1)], fill=colour)
    logo = hsv_colour(rng, (0.5, 1.0), (0.5, 1.0))
    cx, cy, r = rng.uniform(0.08, 0.25) * width, rng.uniform(0.12, 0.3) * height, rng.uniform(0.05, 0.1) * height
    for _ in range(int(rng.integers(1, 4))):
        dx, dy = rng.uniform(-r, r, 2)
        draw.ellipse([cx + dx - r, cy + dy - r, cx + dx + r, cy + dy + r], fill=logo)
    ink = (255, 255, 255) if sum(base) < 380 else (20, 20, 30)
    draw.text((cx + 1.6 * r, cy - 0.5 * r), pick(rng, BRANDS), fill=ink, font=font(0.1 * height))
    small = font(0.045 * height)
    for i in range(int(rng.integers(1, 4))):
        valid = "Valid thru %02d/%02d" % (int(rng.integers(1, 13)), int(rng.integers(26, 32)))
        line = pick(rng, ["MEMBER", "GOLD", valid,
                          pick(rng, NAMES).upper() + " " + chars(rng, "ABCDEFGHIJKLMNOPRSTUVWZ", 1) + ".",
                          "No. " + digits(rng, 8), "www." + pick(rng, DOMAINS)])
        draw.text((0.06 * width, (0.42 + 0.07 * i) * height), line, fill=ink, font=small)
    return card


def card_layout(rng, symbology, symbol_size, frame_area):
    """The card's size and the label's box (symbol and quiet zone) on it, in card px (4 px a module). Long symbols
    take more of the card, so that the card still fits in 80% of the frame with modules of 1.5 px."""
    quiet = (quiet_modules(symbology) + rng.uniform(0, 3)) * CARD_PX_PER_MODULE
    lw, lh = symbol_size[0] + 2 * quiet, symbol_size[1] + 2 * quiet
    square = symbology.two_d and symbology.name != "pdf417"
    if square:
        fit_w, fit_h = rng.uniform(0.3, 0.55), rng.uniform(0.45, 0.8)
    else:
        fit_w, fit_h = rng.uniform(0.55, 0.9), rng.uniform(0.3, 0.6)
    widest = math.sqrt(0.8 * frame_area * CARD_ASPECT) * CARD_PX_PER_MODULE / 1.5
    width = max(lw / fit_w, lh / fit_h * CARD_ASPECT)
    if width > widest:
        width = max(widest, lw / 0.97, lh / 0.9 * CARD_ASPECT)
    height = width / CARD_ASPECT
    if square:
        x, y = rng.uniform(0.5, 0.95) * (width - lw), rng.uniform(0.15, 0.9) * (height - lh)
    else:
        x, y = rng.uniform(0.1, 0.9) * (width - lw), rng.uniform(0.55, 0.95) * (height - lh)
    return (width, height), (x, y, x + lw, y + lh), quiet


def draw_card(rng, symbol, size, label_box, quiet, k):
    """The card drawn at k times its layout size (the symbol box-filtered down), RGBA with rounded corners."""
    width, height = max(2, int(round(size[0] * k))), max(2, int(round(size[1] * k)))
    card = draw_card_art(rng, width, height)
    if k < 1:
        symbol = symbol.resize((max(1, int(round(symbol.width * k))), max(1, int(round(symbol.height * k)))), Image.BOX)
    x0, y0, x1, y1 = (int(round(v * k)) for v in label_box)
    label = label_image(rng, symbol, (x1 - x0, y1 - y0), int(round(quiet * k)))
    card.paste(label, (x0, y0))
    card = card.convert("RGBA")
    mask = Image.new("L", card.size, 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, width - 1, height - 1], radius=int(0.06 * height), fill=255)
    card.putalpha(mask)
    return card


DESKS = [(120, 85, 55), (150, 110, 70), (90, 90, 95), (200, 195, 185), (35, 35, 40), (60, 80, 110), (170, 170, 160)]


def smooth_noise(rng, width, height, cell):
    small = rng.standard_normal((height // cell + 2, width // cell + 2)).astype(np.float32)
    image = Image.fromarray(((small * 40) + 128).clip(0, 255).astype(np.uint8))
    return (np.asarray(image.resize((width, height), Image.BICUBIC), dtype=np.float32) - 128) / 40


def draw_desk(rng, width, height):
    """A desk with clutter, drawn at half size and enlarged (it is out of focus behind the card)."""
    w, h = width // 2, height // 2
    base = np.array(pick(rng, DESKS), dtype=np.float32) + rng.uniform(-15, 15, 3).astype(np.float32)
    shade = smooth_noise(rng, w, h, int(rng.integers(20, 80))) * rng.uniform(4, 14)
    if rng.random() < 0.4:  # wood grain
        angle, freq = rng.uniform(0, math.pi), rng.uniform(0.06, 0.24)
        ys, xs = (a.astype(np.float32) for a in np.ogrid[0:h, 0:w])
        warp = smooth_noise(rng, w, h, 30) * 1.2
        shade += np.sin((xs * math.cos(angle) + ys * math.sin(angle)) * freq + warp) * rng.uniform(4, 12)
    shade += rng.standard_normal((h, w), dtype=np.float32) * rng.uniform(1, 5)  # texture
    desk = Image.fromarray((base + shade[..., None]).clip(0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(desk)
    for _ in range(int(rng.integers(0, 3))):  # sheets of paper with text
        add_sheet(rng, desk, w, h)
    for _ in range(int(rng.integers(1, 5))):  # pens, cables
        x0, y0, x1, y1 = rng.uniform(0, 1, 4) * [w, h, w, h]
        draw.line([(x0, y0), (x1, y1)], fill=hsv_colour(rng, (0, 1), (0.1, 0.9)), width=int(rng.integers(1, 6)))
    if rng.random() < 0.4:  # a mug ring
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.05, 0.15) * w
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=hsv_colour(rng, (0, 0.5), (0.2, 0.6)),
                     width=int(rng.integers(1, 4)))
    return desk.resize((width, height), Image.BILINEAR)


def add_sheet(rng, desk, width, height):
    sw, sh = int(rng.uniform(0.2, 0.5) * width), int(rng.uniform(0.2, 0.6) * height)
    sheet = Image.new("RGB", (sw, sh), tuple(int(v) for v in rng.integers(215, 250, 3)))
    draw = ImageDraw.Draw(sheet)
    size = rng.uniform(10, 18) * width / 640 + 5
    lines = ["TOTAL %d.%02d" % (int(rng.integers(1, 99)), int(rng.integers(100))), "Thank you!", "Receipt 00%d" %
             int(rng.integers(1000)), "Meeting notes", "- call bank", "- renew card", "VAT 7.7%", "Table 12"]
    y = size
    while y < sh - size:
        draw.text((size, y), pick(rng, lines), fill=(40, 40, 50), font=font(size))
        y += size * 1.6
    mask = Image.new("L", sheet.size, 255)
    angle = rng.uniform(0, 360)
    sheet, mask = sheet.rotate(angle, expand=True), mask.rotate(angle, expand=True)
    desk.paste(sheet, (int(rng.uniform(-0.2, 0.9) * width), int(rng.uniform(-0.2, 0.9) * height)), mask)


# ---------------------------------------------------------------- geometry

def perspective_coefficients(frame_quad, card_quad):
    """Pillow PERSPECTIVE data (a..h) mapping output (frame) points to input (card) points."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(frame_quad, card_quad):
        rows.append([x, y, 1, 0, 0, 0, -x * u, -y * u])
        rows.append([0, 0, 0, x, y, 1, -x * v, -y * v])
        rhs += [u, v]
    return np.linalg.solve(np.array(rows, dtype=np.float64), np.array(rhs, dtype=np.float64)).tolist()


def camera(points, rotation, tilt, tilt_axis, focal):
    """Card-plane points (frame px, centred on the card) -> image points relative to the card centre's image."""
    c, s = math.cos(rotation), math.sin(rotation)
    p = points @ np.array([[c, s], [-s, c]])
    ax, ay = math.cos(tilt_axis), math.sin(tilt_axis)
    k = np.array([[0, 0, ay], [0, 0, -ax], [-ay, ax, 0]])  # Rodrigues: rotation by tilt about (ax, ay, 0)
    r = np.eye(3) + math.sin(tilt) * k + (1 - math.cos(tilt)) * (k @ k)
    q = np.column_stack([p, np.zeros(len(p))]) @ r.T
    return focal * q[:, :2] / (focal + q[:, 2:3])


def corners(x0, y0, x1, y1):
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


def place(rng, frame_w, frame_h, card_size, label_box, scale, pose):
    """Chooses the card's scale and position so the label stays in the frame; returns (scale, card quad, label quad)."""
    cw, ch = card_size
    centre = np.array([cw / 2, ch / 2])
    for _ in range(40):
        card_q = camera((corners(0, 0, cw, ch) - centre) * scale, *pose)
        label_q = camera((corners(*label_box) - centre) * scale, *pose)
        lo = np.maximum(4 - label_q.min(0), 0 - card_q.min(0))
        hi = np.minimum([frame_w - 4, frame_h - 4] - label_q.max(0), [frame_w, frame_h] - card_q.max(0))
        if np.any(lo > hi):  # the whole card cannot fit: keep only the label inside
            lo, hi = 4 - label_q.min(0), [frame_w - 4, frame_h - 4] - label_q.max(0)
        if np.all(lo <= hi):
            shift = lo + rng.random(2) * (hi - lo)
            return scale, card_q + shift, label_q + shift
        scale *= 0.93
    raise RuntimeError("label does not fit in the frame")


# ---------------------------------------------------------------- camera effects

TIERS = {
    "photo": {"tilt": 25, "blur": (0.3, 1.5), "motion": None, "glare": 0.0, "gradient": (0.0, 0.35),
              "vignette": (0.0, 0.3), "noise": (1.5, 5.0), "jpeg": (60, 95), "exposure": (0.75, 1.1)},
    "hard": {"tilt": 40, "blur": (0.3, 1.0), "motion": (3.0, 10.0), "glare": 1.0, "gradient": (0.25, 0.6),
             "vignette": (0.2, 0.5), "noise": (3.0, 8.0), "jpeg": (35, 70), "exposure": (0.6, 1.1)},
}


def project_card(card, frame_quad, frame_size, pad):
    """The card (premultiplied RGBa, drawn at about the frame's scale at its centre, so the bilinear projection only
    has to shrink it by the foreshortening) projected into the frame: (RGBa image of its bounding box plus pad, the
    box's origin)."""
    fw, fh = frame_size
    x0, y0 = (max(0, int(v) - pad) for v in np.floor(frame_quad.min(0)))
    x1, y1 = (min(limit, int(v) + pad) for v, limit in zip(np.ceil(frame_quad.max(0)), (fw, fh)))
    coeffs = perspective_coefficients(frame_quad - [x0, y0], corners(0, 0, card.width, card.height))
    return card.transform((x1 - x0, y1 - y0), Image.PERSPECTIVE, coeffs, Image.BILINEAR), (x0, y0)


def motion_blur(layer, length, angle):
    """Mean of the (premultiplied) layer shifted along a line of the given length (px) and angle."""
    pixels = np.asarray(layer)
    steps = max(2, int(math.ceil(length)) + 1)
    pad = int(math.ceil(length / 2)) + 1
    padded = np.pad(pixels, ((pad, pad), (pad, pad), (0, 0)))
    h, w = pixels.shape[:2]
    total = np.zeros(pixels.shape, dtype=np.uint16)
    for t in np.linspace(-length / 2, length / 2, steps):
        dx, dy = int(round(t * math.cos(angle))), int(round(t * math.sin(angle)))
        total += padded[pad + dy:pad + dy + h, pad + dx:pad + dx + w]
    total += steps // 2
    return Image.frombytes("RGBa", layer.size, (total // steps).astype(np.uint8).tobytes())


def composite(rng, desk, layer, origin):
    """Float pixels of the card layer over the desk, with a soft shadow under the card."""
    fw = desk.width
    x, y = origin
    alpha = layer.getchannel(3)
    small = alpha.reduce(4).filter(ImageFilter.GaussianBlur(rng.uniform(1, 3) * fw / 1280))
    dx, dy = (int(v) for v in rng.uniform(-8, 8, 2) * fw / 1280)
    strength = rng.uniform(0.2, 0.5)
    shadow = ImageChops.offset(small.resize(alpha.size, Image.BILINEAR), dx, dy)
    shadow = shadow.point([int(v * strength) for v in range(256)])
    desk.paste((0, 0, 0), (x, y, x + alpha.width, y + alpha.height), shadow)
    frame = desk.convert("RGBA")
    frame.alpha_composite(layer.convert("RGBA"), dest=(x, y))
    return np.asarray(frame.convert("RGB"), dtype=np.float32)


def upsample(field, width, height):
    return np.asarray(Image.fromarray(field.astype(np.float32)).resize((width, height), Image.BILINEAR))


def lighting(rng, pixels, tier, label_quad, scene):
    """Exposure, white balance, a light gradient, vignette and (hard) a glare spot; fields computed on an 8x coarser
    grid and enlarged; in place on float pixels 0..255 (not clipped)."""
    h, w = pixels.shape[:2]
    ys, xs = np.mgrid[0:h // 8 + 1, 0:w // 8 + 1].astype(np.float32) * 8
    nx, ny = (xs - w / 2) / (w / 2), (ys - h / 2) / (h / 2)
    gradient, angle = rng.uniform(*tier["gradient"]), rng.uniform(0, 2 * math.pi)
    vignette = rng.uniform(*tier["vignette"])
    gain = 1 + gradient * (nx * math.cos(angle) + ny * math.sin(angle)) / 1.4
    gain *= 1 - vignette * (nx * nx + ny * ny) / 2
    exposure = rng.uniform(*tier["exposure"])
    balance = rng.uniform(0.88, 1.1, 3).astype(np.float32) * exposure
    scene.update(gradient=round(gradient, 3), vignette=round(vignette, 3), exposure=round(exposure, 3))
    gain = upsample(gain[:-1, :-1], w, h)
    pixels *= gain[..., None]
    pixels *= balance
    if tier["glare"] and rng.random() < tier["glare"]:
        lo, hi = label_quad.min(0), label_quad.max(0)
        if rng.random() < 0.6:  # on the symbol
            gx, gy = lo + rng.random(2) * (hi - lo)
        else:
            gx, gy = rng.uniform(0, w), rng.uniform(0, h)
        radius = rng.uniform(0.03, 0.09) * math.hypot(w, h)
        amplitude = rng.uniform(60, 190)
        spot = amplitude * np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * radius * radius))
        pixels += upsample(spot[:-1, :-1], w, h)[..., None]
        scene.update(glare={"x": round(float(gx), 1), "y": round(float(gy), 1), "radius": round(radius, 1),
                            "amplitude": round(amplitude, 1)})


_NOISE = {}


def sensor_noise(rng, width, height):
    """Unit Gaussian noise for a frame: a window at a random offset into one fixed bank (drawing 2.7 million normals
    per frame would be a third of the frame's cost)."""
    if "bank" not in _NOISE:
        bank_rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([0x5CA7, 1])))
        _NOISE["bank"] = bank_rng.standard_normal((720 + 97, 1280 + 131, 3), dtype=np.float32)
    bank = _NOISE["bank"]
    y, x = int(rng.integers(0, bank.shape[0] - height + 1)), int(rng.integers(0, bank.shape[1] - width + 1))
    return bank[y:y + height, x:x + width]


def covering(rng, area, low=0.2, high=0.8, smallest=1.5, largest=8.0):
    """The card's share of the frame: uniform in [low, high], narrowed so that modules stay 1.5-8 px."""
    per_module = (1 / CARD_PX_PER_MODULE) ** 2 * area  # coverage at 1 px a module
    lo, hi = max(low, smallest ** 2 * per_module), min(high, largest ** 2 * per_module)
    if lo > hi:  # a long symbol needs more than 80% for 1.5 px modules, or a small one less than 20% for 8 px
        return lo if lo > high else low
    return rng.uniform(lo, hi)


def photo_image(rng, symbology, symbol, tier_name):
    """One camera frame of the symbol on a card; returns (RGB image, JPEG quality, scene parameters)."""
    tier = TIERS[tier_name]
    fw, fh = (640, 480) if rng.random() < 0.5 else (1280, 720)
    size, label_box, quiet = card_layout(rng, symbology, symbol.size, fw * fh)
    area = size[0] * size[1] / (fw * fh)  # card area / frame area at scale 1
    coverage = covering(rng, area)
    scale = max(math.sqrt(coverage / area), 1.5 / CARD_PX_PER_MODULE)
    if symbology.two_d:
        rotation = rng.uniform(0, 360)
    else:
        rotation = rng.uniform(-30, 30) + (180 if rng.random() < 0.15 else 0)
    tilt, axis = rng.uniform(0, tier["tilt"]), rng.uniform(0, 2 * math.pi)
    focal = rng.uniform(0.8, 1.4) * fw
    pose = (math.radians(rotation), math.radians(tilt), axis, focal)
    scale, card_quad, label_quad = place(rng, fw, fh, size, label_box, scale, pose)
    module_px = scale * CARD_PX_PER_MODULE
    scene = {"module_px": round(module_px, 2), "rotation": round(rotation % 360, 1), "tilt": round(tilt, 1),
             "coverage": round(area * scale * scale, 3)}
    card = draw_card(rng, symbol, size, label_box, quiet, min(1.0, scale))
    low, high = tier["blur"]
    sigma = low + (high - low) * rng.random() ** 2  # mostly in focus
    motion = (rng.uniform(*tier["motion"]), rng.uniform(0, math.pi)) if tier["motion"] else None
    card = card.convert("RGBa").filter(ImageFilter.GaussianBlur(sigma * card.width / size[0] / scale))  # focus
    layer, origin = project_card(card, card_quad, (fw, fh), pad=24 + int(3 * sigma + (motion or (0,))[0]))
    if motion:
        layer = motion_blur(layer, *motion)
        scene["motion_px"] = round(motion[0], 2)
    pixels = composite(rng, draw_desk(rng, fw, fh), layer, origin)
    lighting(rng, pixels, tier, label_quad, scene)
    noise = rng.uniform(*tier["noise"])
    pixels += sensor_noise(rng, fw, fh) * noise
    quality = int(rng.integers(tier["jpeg"][0], tier["jpeg"][1] + 1))
    scene.update(blur_sigma=round(sigma, 2), noise=round(noise, 2), jpeg_quality=quality)
    return Image.fromarray(pixels.clip(0, 255).astype(np.uint8)), quality, scene


# ---------------------------------------------------------------- the set

def draw_payload(args, symbology, index, directory, skipped):
    """A payload whose clean render zxing-cpp reads back: (data, payload, encoder, options, clean, px) or None."""
    for attempt in range(5):
        rng = generator(args.seed, symbology.name, index, "payload", attempt)
        data, payload = symbology.payload(rng)
        encoder, options = encoder_options(symbology, index, rng)
        px = int(rng.integers(2, 5))
        try:
            clean = clean_image(symbology, render(symbology, data, encoder, options, px, directory), px)
        except subprocess.CalledProcessError as error:
            skipped.append({"symbology": symbology.name, "index": index, "attempt": attempt, "data": str(data),
                            "payload_hex": payload.hex(), "error": error.stderr.decode(errors="replace").strip()})
            continue
        reads, _ = zxing_reads(symbology, payload, np.asarray(clean))
        if any(r["correct"] for r in reads):
            return data, payload, encoder, options, clean, px
        skipped.append({"symbology": symbology.name, "index": index, "attempt": attempt, "data": str(data),
                        "payload_hex": payload.hex(), "reads": reads})
    return None


def build(args):
    os.makedirs(args.out, exist_ok=True)
    images, skipped = [], []
    with tempfile.TemporaryDirectory() as directory:
        for name in args.symbologies:
            symbology = BY_NAME[name]
            for index in range(args.per):
                drawn = draw_payload(args, symbology, index, directory, skipped)
                if drawn is None:
                    continue
                data, payload, encoder, options, clean, px = drawn
                card_symbol = None
                for tier in args.tiers:
                    entry = {"file": "%s-%s-%03d.%s" % (name, tier, index, "png" if tier == "clean" else "jpg"),
                             "tier": tier, "symbology": name, "payload_hex": payload.hex(), "encoder": encoder}
                    if tier == "clean":
                        clean.save(os.path.join(args.out, entry["file"]), optimize=False)
                        entry["scene"] = {"module_px": px}
                        size = clean.size
                    else:
                        if card_symbol is None:
                            rng = generator(args.seed, name, index, "card")
                            card = card_options(symbology, options, clean, px, rng)
                            card_symbol = render(symbology, data, encoder, card, CARD_PX_PER_MODULE, directory)
                        rng = generator(args.seed, name, index, tier)
                        image, quality, entry["scene"] = photo_image(rng, symbology, card_symbol, tier)
                        image.save(os.path.join(args.out, entry["file"]), quality=quality)
                        size = image.size
                    entry["width"], entry["height"] = size
                    images.append(entry)
    return images, skipped


def zxing_version():
    try:
        return importlib.metadata.version("zxing-cpp")
    except importlib.metadata.PackageNotFoundError:
        return None


def anchor(args, images):
    """zxing-cpp on each saved file, read as Coffer reads it (Pillow, 8-bit luminance)."""
    for entry in images:
        gray = np.asarray(Image.open(os.path.join(args.out, entry["file"])).convert("L"))
        payload = bytes.fromhex(entry["payload_hex"])
        reads, ms = zxing_reads(BY_NAME[entry["symbology"]], payload, gray)
        entry["zxing"] = {"reads": reads, "ms": round(ms, 2)}


def summary(args, images):
    """Per symbology x tier: images read correctly / total, wrong reads, median ms."""
    cells = {}
    for entry in images:
        cell = cells.setdefault((entry["symbology"], entry["tier"]), {"ok": 0, "n": 0, "wrong": 0, "ms": []})
        reads = entry["zxing"]["reads"]
        cell["n"] += 1
        cell["ok"] += any(r["correct"] for r in reads)
        cell["wrong"] += sum(not r["correct"] for r in reads)
        cell["ms"].append(entry["zxing"]["ms"])
    lines = ["%-15s" % "symbology" + "".join("%-25s" % t for t in args.tiers)]
    totals = {t: {"ok": 0, "n": 0, "wrong": 0, "ms": []} for t in args.tiers}
    for name in args.symbologies:
        row = "%-15s" % name
        for tier in args.tiers:
            cell = cells.get((name, tier))
            if not cell:
                row += "%-25s" % "-"
                continue
            for key in ("ok", "n", "wrong"):
                totals[tier][key] += cell[key]
            totals[tier]["ms"] += cell["ms"]
            median = statistics.median(cell["ms"])
            row += "%-25s" % ("%d/%d w%d %.1fms" % (cell["ok"], cell["n"], cell["wrong"], median))
        lines.append(row)
    row = "%-15s" % "total"
    for tier in args.tiers:
        t = totals[tier]
        if t["n"]:
            row += "%-25s" % ("%d/%d=%.0f%% w%d %.1fms" % (t["ok"], t["n"], 100.0 * t["ok"] / t["n"], t["wrong"],
                                                         statistics.median(t["ms"])))
    lines.append(row)
    return "\n".join(lines)


# ---------------------------------------------------------------- Y4M

def letterbox(image, width, height):
    scale = min(width / image.width, height / image.height)
    size = (max(2, int(round(image.width * scale))), max(2, int(round(image.height * scale))))
    canvas = Image.new("RGB", (width, height), (0, 0, 0))
    canvas.paste(image.convert("RGB").resize(size, Image.BILINEAR), ((width - size[0]) // 2, (height - size[1]) // 2))
    return canvas


def write_y4m(args, images):
    """YUV4MPEG2 4:2:0 (JPEG full range) video of photo-tier images, each held for --frames-per-image frames."""
    width, height = args.size
    chosen, counts = [], {}
    for entry in images:
        if entry["tier"] == "photo" and counts.get(entry["symbology"], 0) < args.y4m_per:
            counts[entry["symbology"]] = counts.get(entry["symbology"], 0) + 1
            chosen.append(entry)
    frames = []
    with open(args.y4m, "wb") as out:
        out.write(b"YUV4MPEG2 W%d H%d F10:1 Ip A1:1 C420jpeg\n" % (width, height))
        for i, entry in enumerate(chosen):
            ycbcr = letterbox(Image.open(os.path.join(args.out, entry["file"])), width, height).convert("YCbCr")
            y, cb, cr = ycbcr.split()
            half = (width // 2, height // 2)
            planes = y.tobytes() + cb.resize(half, Image.BOX).tobytes() + cr.resize(half, Image.BOX).tobytes()
            for _ in range(args.frames_per_image):
                out.write(b"FRAME\n" + planes)
            frames.append({"first": i * args.frames_per_image, "count": args.frames_per_image, "image": entry["file"]})
    return {"file": os.path.relpath(args.y4m, args.out), "width": width, "height": height, "fps": 10, "frames": frames}


# ---------------------------------------------------------------- main

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per", type=int, default=40)
    parser.add_argument("--tiers", default="clean,photo,hard")
    parser.add_argument("--symbologies", default=",".join(s.name for s in SYMBOLOGIES))
    parser.add_argument("--no-zxing", action="store_true", help="skip the zxing-cpp anchor run")
    parser.add_argument("--anchor-only", action="store_true",
                        help="generate nothing: run zxing-cpp again over the set in --out and rewrite its manifest "
                             "(coffer-bench scan does this, so both readers are timed in the same run)")
    parser.add_argument("--y4m", help="also write this Y4M video of photo-tier images")
    parser.add_argument("--frames-per-image", type=int, default=5)
    parser.add_argument("--size", default="1280x720", help="Y4M frame size, WxH (even)")
    parser.add_argument("--y4m-per", type=int, default=1, help="photo images per symbology in the Y4M")
    args = parser.parse_args(argv)
    args.tiers = [t for t in args.tiers.split(",") if t]
    args.symbologies = [s for s in args.symbologies.split(",") if s]
    for tier in args.tiers:
        if tier not in ("clean", "photo", "hard"):
            parser.error("unknown tier %r" % tier)
    for name in args.symbologies:
        if name not in BY_NAME:
            parser.error("unknown symbology %r (known: %s)" % (name, ", ".join(BY_NAME)))
    width, height = (int(v) for v in args.size.lower().split("x"))
    if width % 2 or height % 2:
        parser.error("--size must be even")
    args.size = (width, height)
    if args.y4m and "photo" not in args.tiers:
        parser.error("--y4m needs the photo tier")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.anchor_only:
        path = os.path.join(args.out, "manifest.json")
        with open(path) as handle:
            manifest = json.load(handle)
        anchor(args, manifest["images"])
        manifest["zxing_version"] = zxing_version()
        with open(path, "w") as out:
            json.dump(manifest, out, indent=1)
        return
    started = time.perf_counter()
    images, skipped = build(args)
    built = time.perf_counter() - started
    manifest = {"seed": args.seed, "per": args.per, "generator": "scan_photos.py v1",
                "zxing_version": zxing_version(), "images": images, "skipped": skipped}
    if args.y4m:
        manifest["y4m"] = write_y4m(args, images)
    started = time.perf_counter()
    if not args.no_zxing:
        anchor(args, images)
    anchored = time.perf_counter() - started
    with open(os.path.join(args.out, "manifest.json"), "w") as out:
        json.dump(manifest, out, indent=1)
    total = sum(os.path.getsize(os.path.join(args.out, e["file"])) for e in images)
    print("%d images, %.1f MB, built in %.1f s, %s, %d payloads skipped"
          % (len(images), total / 1e6, built, "no anchor run" if args.no_zxing else "anchor run %.1f s" % anchored,
             len(skipped)))
    for skip in skipped:
        print("  skipped %s #%d.%d %r" % (skip["symbology"], skip["index"], skip["attempt"], skip["data"]))
    if not args.no_zxing:
        print(summary(args, images))


if __name__ == "__main__":
    main()
