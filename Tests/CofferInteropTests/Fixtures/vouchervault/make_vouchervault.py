"""Writes Voucher Vault exports (a JSON array of vouchers, as Catima's VoucherVaultImporter reads them) and
expected.json. Voucher fields: uuid, description (the card name), code (the payload), codeType (CODE128, CODE39,
EAN13, PDF417, QR or TEXT for no barcode), expires ("yyyy-MM-dd'T'HH:mm:ss.SSS" in UTC, or null), removeOnceExpired,
balance (a number or null; read only when balanceMilliunits is absent), balanceMilliunits (thousandths, or null
meaning 0) and color (GREY, BLUE, GREEN, ORANGE, PURPLE, RED, YELLOW). The currency is always USD.
vouchervault.json has one voucher per code type and colour; unknown_type.json has a codeType of AZTEC2, which fails
the whole import. In expected.json a balance is a decimal string, with currency USD, and null when it is 0.
Run: python3 make_vouchervault.py"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from otp_reference import secret, write_json  # noqa: E402

COLOURS = {"GREY": "#888888", "BLUE": "#0000FF", "GREEN": "#00FF00", "ORANGE": "#FFA500", "PURPLE": "#800080",
           "RED": "#FF0000", "YELLOW": "#FFFF00"}
SYMBOLOGIES = {"CODE128": "code128", "CODE39": "code39", "EAN13": "ean13", "PDF417": "pdf417", "QR": "qr",
               "TEXT": None}


def uuid(label):
    h = secret("vouchervault-" + label, 16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def voucher(name, code, code_type, colour, expires=None, **balance):
    """balance: balanceMilliunits=… and/or balance=…, as the voucher has them (absent keys stay absent)."""
    value = {"uuid": uuid(name), "description": name, "code": code, "codeType": code_type, "expires": expires,
             "removeOnceExpired": expires is not None}
    if "balance" in balance:
        value["balance"] = balance["balance"]
    if "balanceMilliunits" in balance:
        value["balanceMilliunits"] = balance["balanceMilliunits"]
    value["color"] = colour
    return value


VOUCHERS = [
    # (voucher, validTo, balance)
    (voucher("Clothes Store", "123456", "CODE128", "GREY", balance=None), None, None),
    (voucher("Department Store", "DEPT-26846363", "CODE39", "PURPLE", "2021-03-26T00:00:00.000",
             balance=None, balanceMilliunits=3500), "2021-03-26T00:00:00Z", "3.5"),
    (voucher("Grocer", "4006381333931", "EAN13", "GREEN", "2030-12-31T00:00:00.000", balance=12.25),
     "2030-12-31T00:00:00Z", "12.25"),
    (voucher("Zürich Café", "ZC-0042-7781", "PDF417", "RED", "2027-06-15T13:45:30.000", balanceMilliunits=None),
     "2027-06-15T13:45:30Z", None),
    (voucher("Cinema", "https://example.com/v/7f3a", "QR", "ORANGE", balance=5.0, balanceMilliunits=20010),
     None, "20.01"),
    (voucher("Book Token", "GIFT-2024-XYZ", "TEXT", "YELLOW", balanceMilliunits=1000), None, "1"),
    (voucher("Garden Centre", "GC998877", "CODE128", "BLUE", "2026-01-01T23:59:59.000"),
     "2026-01-01T23:59:59Z", None),
]


def write(path, value):
    with open(os.path.join(HERE, path), "w", encoding="utf-8") as handle:
        json.dump(value, handle, ensure_ascii=False, indent=2)
        handle.write("\n")


write("vouchervault.json", [v for v, _, _ in VOUCHERS])
write("unknown_type.json", [VOUCHERS[0][0], voucher("Arcade", "ARC-1", "AZTEC2", "BLUE")])

write_json(os.path.join(HERE, "expected.json"), {
    "cards": [{"name": v["description"], "payload": v["code"], "symbology": SYMBOLOGIES[v["codeType"]],
               "validTo": valid_to, "balance": balance, "currency": "USD" if balance else None,
               "colour": COLOURS[v["color"]]} for v, valid_to, balance in VOUCHERS],
    "fails": ["unknown_type.json"],
})
