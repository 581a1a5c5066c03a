#!/usr/bin/env python3
"""Makes the Catima fixtures with Python's zipfile, following Catima's export format (CatimaExporter.java,
docs/EXPORT_FORMAT.md): catima.csv version 2 in a zip with card images, the bare version-1 CSV, and hostile zips for
ZipArchive. The images are made here: PNGs by the writer below (zlib), a JPEG by Pillow.
Run from this directory: python3 make_catima.py"""
import io
import struct
import zipfile
import zlib

from PIL import Image

CRLF = "\r\n"


def v2_csv():
    groups = ["Health", "Food, Drink"]
    header = ("_id,store,note,validfrom,expiry,balance,balancetype,cardid,barcodeid,barcodetype,barcodeencoding,"
              "headercolor,starstatus,lastused,archive")
    cards = [
        # Milliseconds (what Catima writes), UTF-8, a group.
        '1,Pharmacy,,1601510400000,1893456000000,0,,4006381333931,,EAN_13,UTF-8,-10902850,0,1766674620,0',
        # Seconds (as in Catima's own test file), barcodeid differs from cardid, empty encoding = ISO-8859-1
        # holding a Latin-1 character, a multi-line note with a blank line inside quotes, two groups.
        '2,Café Ünter,"Line one\r\n\r\nLine ""three""",,1618053234,12.50,EUR,1234 5678,CAFÉ-5678,QR_CODE,,,1,0,0',
        # No barcode: text-only card.
        '3,Library,,,,0,,L-998877,,,,,0,0,0',
        # A type Coffer cannot draw.
        '4,Cinema,,,,0,,123456,,CODE_93,ISO-8859-1,,0,0,0',
        '5,Gym,,,,0,,ABC-123,,CODE_128,ISO-8859-1,,0,0,0',
        '6,Bakery,,,,0,,036000291452,,UPC_A,,,0,0,0',
    ]
    links = ["1,Health", "2,Health", '2,"Food, Drink"']
    lines = ["2", "", "_id"] + ['"Food, Drink"' if g == "Food, Drink" else g for g in groups] + [""]
    lines += [header] + cards + ["", "cardId,groupId"] + links
    return CRLF.join(lines) + CRLF


def v1_csv():
    lines = [
        "_id,store,note,cardid,barcodetype,headercolor,headertextcolor,starstatus",
        "1,Old Store,An old note,12345678,CODE_39,-1,-16777216,0",
        "2,Text Only,,987,,,,0",
    ]
    return "\n".join(lines) + "\n"


def png(width, height, level=9):
    """An RGB PNG of a fixed gradient; level 0 keeps the pixels in stored deflate blocks (a large file)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes((x + y) % 256 for x in range(width * 3)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, level))
            + chunk(b"IEND", b""))


def jpeg(width, height):
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 60)).save(buffer, "JPEG", quality=80)
    return buffer.getvalue()


def images():
    """Catima's card_<id>_<side>.png entries: card 1 has a PNG front and a JPEG back (Catima names every image
    .png); card 2's front is not an image; card 5's back is a PNG over 2 MiB; card 6 has an icon."""
    return [
        ("card_1_front.png", png(64, 40)),
        ("card_1_back.png", jpeg(48, 30)),
        ("card_2_front.png", b"GIF89a" + bytes(64)),
        ("card_5_back.png", png(900, 800, level=0)),
        ("card_6_icon.png", png(16, 16)),
    ]


def write_zip(path, entries, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in entries:
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, compress_type=compression)


def main():
    csv = v2_csv().encode("utf-8")
    write_zip("catima_v2.zip", [("catima.csv", csv)] + images())
    write_zip("catima_v2_stored.zip", [("catima.csv", csv)], zipfile.ZIP_STORED)
    with open("catima_v1.csv", "wb") as handle:
        handle.write(v1_csv().encode("utf-8"))

    # Hostile: 100 MiB of zeros deflates to about 100 KB and honestly declares its size (over the 64 MiB cap).
    write_zip("bomb_declared.zip", [("catima.csv", b"\0" * (100 << 20))])
    # Hostile: 8 MiB of zeros whose headers claim 100 bytes: inflating must stop at the claimed size.
    buffer = io.BytesIO()
    write_zip(buffer, [("catima.csv", b"\0" * (8 << 20))])
    data = bytearray(buffer.getvalue())
    local = 0
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, local + 22, 100)
    struct.pack_into("<I", data, central + 24, 100)
    with open("bomb_understated.zip", "wb") as handle:
        handle.write(data)
    # Hostile names.
    write_zip("traversal.zip", [("../catima.csv", csv)])
    write_zip("absolute.zip", [("/tmp/catima.csv", csv)])


if __name__ == "__main__":
    main()
