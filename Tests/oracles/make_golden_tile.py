"""Writes Tests/Vectors/places/golden_tile_v1.bin from docs/FORMAT.md §9.3 alone (no code shared with Coffer): one network, two
locations, padded to the 16 KiB class. PlaceTile must decode it to the values below and encode those values to
exactly these bytes."""

import struct
from pathlib import Path

networks = [("costco", "Costco", "Q715583", ["Costco", "Costco Wholesale"], ["membership", "grocery"], 100, 0, False)]
locations = [
    # id, name, address, phone, hours, lat, lon, radius, network index
    ("loc_costco_001", "Costco San Francisco", "1450 Harrison St", "(415) 555-0101", "Mo-Sa 10:00-20:30",
     37.7749, -122.4194, 0, 0),
    ("loc_costco_002", "Costco South SF", "", "", "", 37.6526, -122.4079, 150, 0),
]

strings = bytearray()
network_records = bytearray()
for ident, name, qid, canonical, tags, radius, category, large in networks:
    text = "\x1f".join([ident, name, qid, "\x1e".join(canonical), "\x1e".join(tags)]).encode()
    network_records += struct.pack("<IIIBBH", len(strings), len(text), radius, category, 1 if large else 0, 0)
    strings += text
location_records = bytearray()
for ident, name, address, phone, hours, lat, lon, radius, network in locations:
    text = "\x1f".join([ident, name, address, phone, hours]).encode()
    location_records += struct.pack("<iiIIII", round(lat * 1e7), round(lon * 1e7), radius, network, len(strings), len(text))
    strings += text

content = 48 + len(network_records) + len(location_records) + len(strings)
size = 16 * 1024
while size < content:
    size *= 2
header = b"CFPT" + bytes([1, 1, 0, 0]) + b"9q8y".ljust(12, b"\0")
header += struct.pack("<IqIIII", 50000, 1795521600000, len(networks), len(locations), len(strings), content)
assert len(header) == 48
tile = header + network_records + location_records + strings
tile += bytes(size - len(tile))
(Path(__file__).parent.parent / "Vectors" / "places" / "golden_tile_v1.bin").write_bytes(tile)
print(len(tile), content)
