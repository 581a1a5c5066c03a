#!/usr/bin/env python3
"""Makes unsigned .pkpass fixtures with Python's zipfile, following Apple's pass.json reference (Pass,
Pass.Barcodes, Pass.Locations). Coffer does not check the signature, so manifest.json and signature are
placeholders. Run from this directory: python3 make_pkpass.py"""
import json
import zipfile


def write_pass(path, pass_json):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("pass.json", (2024, 1, 1, 0, 0, 0)), json.dumps(pass_json, indent=2))
        archive.writestr(zipfile.ZipInfo("manifest.json", (2024, 1, 1, 0, 0, 0)), "{}")
        archive.writestr(zipfile.ZipInfo("signature", (2024, 1, 1, 0, 0, 0)), b"")
        archive.writestr(zipfile.ZipInfo("icon.png", (2024, 1, 1, 0, 0, 0)), b"\x89PNG not really")


BASE = {
    "formatVersion": 1,
    "passTypeIdentifier": "pass.example.coffer",
    "serialNumber": "0001",
    "teamIdentifier": "ABCDE12345",
}


def main():
    write_pass("store_card.pkpass", dict(BASE, **{
        "organizationName": "Coffee Club",
        "description": "Coffee Club membership",
        "expirationDate": "2027-06-30T23:59:59+02:00",
        "locations": [{"latitude": 52.5200, "longitude": 13.4050}, {"latitude": -33.8688, "longitude": 151.2093,
                                                                      "relevantText": "Near the shop"}],
        # An unknown (future) format first: the reader takes the first one it knows.
        "barcodes": [
            {"format": "PKBarcodeFormatFuture", "message": "ignored", "messageEncoding": "iso-8859-1"},
            {"format": "PKBarcodeFormatQR", "message": "MEMBER-0042-Zoë", "messageEncoding": "utf-8",
             "altText": "0042"},
        ],
        "storeCard": {"primaryFields": [{"key": "balance", "label": "Balance", "value": "€12"}]},
    }))
    write_pass("legacy_barcode.pkpass", dict(BASE, **{
        "description": "Boarding pass",
        "barcode": {"format": "PKBarcodeFormatPDF417", "message": "M1DOE/JANE EABC123", "messageEncoding":
                    "iso-8859-1"},
        "boardingPass": {"transitType": "PKTransitTypeAir"},
    }))
    write_pass("code128.pkpass", dict(BASE, **{
        "organizationName": "Hardware Store",
        "description": "Loyalty",
        "barcodes": [{"format": "PKBarcodeFormatCode128", "message": "HW-778899", "messageEncoding": "iso-8859-1"}],
    }))
    write_pass("no_barcode.pkpass", dict(BASE, **{"organizationName": "Museum", "description": "Ticket"}))
    with zipfile.ZipFile("no_pass_json.pkpass", "w") as archive:
        archive.writestr("manifest.json", "{}")
    with zipfile.ZipFile("bad_json.pkpass", "w") as archive:
        archive.writestr("pass.json", "{\"organizationName\": ")
    with zipfile.ZipFile("wrong_types.pkpass", "w") as archive:
        archive.writestr("pass.json", json.dumps({"organizationName": 7, "description": ["x"],
                                                  "barcodes": "nope"}))
    # A .pkpasses bundle (several passes shared at once): a zip of .pkpass files, one of them damaged.
    with zipfile.ZipFile("bundle.pkpasses", "w", zipfile.ZIP_STORED) as bundle:
        for name in ["store_card.pkpass", "code128.pkpass", "no_barcode.pkpass", "bad_json.pkpass"]:
            with open(name, "rb") as inner:
                bundle.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), inner.read())


if __name__ == "__main__":
    main()
