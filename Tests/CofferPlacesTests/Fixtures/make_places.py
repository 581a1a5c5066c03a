#!/usr/bin/env python3
"""Makes the places-import fixtures in this folder and `expected.json`, what an importer should produce from each
good file (rules in README.md, "Mapping rules").

The data is made up (around San Francisco, anchored on CardOnCue's sample stores). `expected.json` is computed by
parsing the files this script has just written, with the rules written out again below, independently of Coffer.
Polygon centroids are computed exactly with rational arithmetic before rounding to 7 decimals, and the script
refuses to write a coordinate that lies within 1e-6 of a rounding tie, so a double-precision importer rounds the same.

Run from anywhere: python3 make_places.py   (no arguments; no randomness; output is byte-for-byte reproducible)
"""
import csv
import io
import json
import math
import os
import re
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, text, newline="\n"):
    data = text.replace("\n", newline) if newline != "\n" else text
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data.encode("utf-8"))


def write_bytes(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# MARK: - Networks CSV (CardOnCue operator format)

NETWORK_HEADER = "id,name,canonical_names,category,is_large_area,default_radius_meters,tags"

# id, name, canonical_names, category, is_large_area (as written), default radius, tags, wikidata.
# Whole Foods' tags use `,` inside the quotes, the other separator CardOnCue's importer allows; sfpl leaves
# canonical_names and tags empty (defaults: [name] and []). The booleans use several accepted spellings.
NETWORKS = [
    ("costco", "Costco", '"Costco|Costco Wholesale"', "grocery", "false", "100", '"membership|grocery"', "Q715583"),
    ("whole-foods", "Whole Foods Market", '"Whole Foods|Whole Foods Market"', "grocery", "FALSE", "80",
     '"grocery,organic"', "Q99900101"),
    ("kohls", "Kohl's", '"Kohl\'s"', "retail", "no", "100", '"retail|amazon-returns"', "Q99900102"),
    ("sfpl", "San Francisco Public Library", "", "library", "0", "50", "", "Q99900103"),
    ("disneyland", "Disneyland", '"Disneyland|Disneyland Park"', "entertainment", "True", "2000",
     '"theme-park|large-venue"', "Q99900104"),
]


def networks_csv(with_wikidata):
    lines = [NETWORK_HEADER + (",wikidata" if with_wikidata else "")]
    for row in NETWORKS:
        fields = list(row[:7]) + ([row[7]] if with_wikidata else [])
        lines.append(",".join(fields))
    return "\n".join(lines) + "\n"


# MARK: - Locations CSVs (one per network): name,address,lat,lon,radius,phone
# Empty radius = the network's default; empty phone/address = none. Phones use the fictional 555-01xx range.

LOCATIONS = {
    "costco": [
        ("Costco San Francisco", "1450 Harrison St, San Francisco, CA 94103", "37.7749", "-122.4194", "",
         "(415) 555-0101"),
        ("Costco South San Francisco", "470 Gateway Blvd, South San Francisco, CA 94080", "37.6526", "-122.4079",
         "150", ""),
        ("Costco Richmond", "4801 Central Ave, Richmond, CA 94804", "37.9009", "-122.3067", "", "(510) 555-0102"),
        ("Costco San Leandro", "1900 Davis St, San Leandro, CA 94577", "37.7104", "-122.1895", "120",
         "(510) 555-0103"),
        ("Costco Redwood City", "", "37.4989", "-122.2371", "", ""),
    ],
    "whole-foods": [
        ("Whole Foods Market SoMa", "399 4th St, San Francisco, CA 94107", "37.782", "-122.4009", "",
         "(415) 555-0111"),
        ("Whole Foods Market Market St", "2001 Market St, San Francisco, CA 94114", "37.7685", "-122.4269", "60",
         "(415) 555-0112"),
        ("Whole Foods Market, Pacific Heights", "1765 California St, San Francisco, CA 94109", "37.7905",
         "-122.4236", "", ""),
        ("Whole Foods Market Noe Valley", "3950 24th St, San Francisco, CA 94114", "37.7515", "-122.4313", "",
         "(415) 555-0114"),
    ],
    "kohls": [
        ("Kohl's San Francisco", "1200 Geary Blvd, San Francisco, CA 94115", "37.7816", "-122.4501", "",
         "(415) 555-0121"),
        ("Kohl's Daly City", "\"Serramonte Center\", Daly City, CA 94015", "37.6905", "-122.4713", "",
         "(650) 555-0122"),
        ("Kohl's San Leandro", "15555 Hesperian Blvd, San Leandro, CA 94579", "37.6899", "-122.1378", "90", ""),
    ],
    "sfpl": [
        ("Main Library", "100 Larkin St, San Francisco, CA 94102", "37.779", "-122.4153", "", "(415) 555-0131"),
        ("Mission Branch", "300 Bartlett St, San Francisco, CA 94110", "37.7502", "-122.4196", "", ""),
        ("Richmond Branch", "351 9th Ave, San Francisco, CA 94118", "37.7813", "-122.4669", "40",
         "(415) 555-0133"),
        ("Sunset Branch", "1305 18th Ave, San Francisco, CA 94122", "37.7635", "-122.4757", "", ""),
        ("Biblioteca Excelsior — Excelsior Branch", "4400 Mission St, San Francisco, CA 94112", "37.7253",
         "-122.4331", "", "(415) 555-0135"),
        ("North Beach Branch", "850 Columbus Ave, San Francisco, CA 94133", "37.8015", "-122.4134", "75", ""),
    ],
}

LOCATION_HEADER = ["name", "address", "lat", "lon", "radius", "phone"]


def locations_csv(rows, header=LOCATION_HEADER):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")  # quotes only fields that need it (commas, quotes)
    w.writerow(header)
    for row in rows:
        w.writerow(row)
    return buf.getvalue()


# MARK: - GeoJSON (All the Places-like)

COSTCO = ("Costco", "Q715583")
WHOLE_FOODS = ("Whole Foods Market", "Q99900101")
KOHLS = ("Kohl's", "Q99900102")
TRADER = ("TRADER JOE'S", "Q99900105")  # all caps and an apostrophe: slug "trader-joe-s"
CAFE = ("Café Réveil", "Q99900106")  # non-ASCII letters are not a-z: slug "caf-r-veil"


def feature(props, geometry, fid=None):
    f = {"type": "Feature"}
    if fid is not None:
        f["id"] = fid
    f["properties"] = props
    f["geometry"] = geometry
    return f


def atp_props(b, ref=None, name=None, housenumber=None, street=None, city=None, postcode=None, state=None,
              phone=None, hours=None, **more):
    """All the Places-style properties in a fixed order; None means the key is absent."""
    p = {}
    if ref is not None:
        p["ref"] = ref
    if b is not None:
        p["brand"] = b[0]
        if b[1] is not None:
            p["brand:wikidata"] = b[1]
    for key, value in (("name", name), ("addr:housenumber", housenumber), ("addr:street", street),
                       ("addr:city", city), ("addr:postcode", postcode), ("addr:state", state), ("phone", phone),
                       ("opening_hours", hours)):
        if value is not None:
            p[key] = value
    p.update(more)
    return p


def point(lat, lon):
    return {"type": "Point", "coordinates": [lon, lat]}


def ring(*lat_lon):
    """A closed ring from (lat, lon) corners, in GeoJSON's [lon, lat] order."""
    pts = [[lon, lat] for lat, lon in lat_lon]
    return pts + [pts[0]]


HOURS_COSTCO = "Mo-Fr 10:00-20:30; Sa 09:30-18:00; Su 10:00-18:00"
HOURS_WF = "Mo-Su 08:00-22:00"
HOURS_KOHLS = "Mo-Sa 09:00-21:00; Su 10:00-20:00"

STORES_GEOJSON = {
    "type": "FeatureCollection",
    "dataset_attributes": {"@spider": "made_up_for_coffer_tests", "spider:collection_time": "2026-11-01T00:00:00"},
    "features": [
        feature(atp_props(COSTCO, ref="144", name="Costco San Francisco", housenumber="1450", street="Harrison St",
                          city="San Francisco", postcode="94103", state="CA", phone="+1 415-555-0144",
                          hours=HOURS_COSTCO), point(37.7749, -122.4194), fid="a1c9e0f1"),
        # Polygon (a warehouse footprint), no hole.
        feature(atp_props(COSTCO, ref="1012", name="Costco South San Francisco", housenumber="470",
                          street="Gateway Blvd", city="South San Francisco", postcode="94080", state="CA",
                          hours=HOURS_COSTCO),
                {"type": "Polygon", "coordinates": [ring((37.6521, -122.4086), (37.6521, -122.4071),
                                                         (37.6532, -122.4069), (37.6533, -122.4085))]}),
        feature(atp_props(WHOLE_FOODS, ref="10234", name="Whole Foods Market SoMa", phone="+1 415-555-0111",
                          hours=HOURS_WF, **{"addr:full": "399 4th St, San Francisco, CA 94107"},
                          housenumber="399", street="4th St"), point(37.782, -122.4009)),
        # Polygon with a hole (a courtyard); the hole is ignored for the centroid.
        feature(atp_props(WHOLE_FOODS, ref="10510", name="Whole Foods Market Market St", housenumber="2001",
                          street="Market St", city="San Francisco", postcode="94114", state="CA",
                          phone="+1 415-555-0112", hours=HOURS_WF),
                {"type": "Polygon", "coordinates": [
                    ring((37.7681, -122.4275), (37.7681, -122.4262), (37.7689, -122.4262), (37.7690, -122.4276)),
                    ring((37.7684, -122.4271), (37.7686, -122.4271), (37.7686, -122.4266), (37.7684, -122.4266)),
                ]}),
        # No ref: the location id comes from the feature's id.
        feature(atp_props(WHOLE_FOODS, name="Whole Foods Market Noe Valley", street="24th St",
                          city="San Francisco", state="CA", hours=HOURS_WF), point(37.7515, -122.4313),
                fid="wfm-noe-valley"),
        feature(atp_props(KOHLS, ref="1455", name="Kohl's San Francisco", housenumber="1200", street="Geary Blvd",
                          city="San Francisco", postcode="94115", state="CA", phone="+1 415-555-0121",
                          hours=HOURS_KOHLS), point(37.7816, -122.4501)),
        # MultiPolygon: a main building and a smaller garden-centre annex.
        feature(atp_props(KOHLS, ref="1180", name="Kohl's Daly City", city="Daly City", postcode="94015",
                          state="CA", hours=HOURS_KOHLS),
                {"type": "MultiPolygon", "coordinates": [
                    [ring((37.6901, -122.4719), (37.6901, -122.4707), (37.6910, -122.4707), (37.6910, -122.4719))],
                    [ring((37.6897, -122.4705), (37.6897, -122.4701), (37.6900, -122.4702))],
                ]}),
        # No name (name = brand), no address, no phone, no hours.
        feature(atp_props(KOHLS, ref="1777"), point(37.6899, -122.1378)),
        # phone absent, contact:phone present.
        feature(atp_props(TRADER, ref="236", name="Trader Joe's Masonic Ave", housenumber="3", street="Masonic Ave",
                          city="San Francisco", postcode="94118", state="CA", hours="Mo-Su 08:00-21:00",
                          **{"contact:phone": "+1 415-555-0236"}), point(37.7835, -122.4466)),
        feature(atp_props(CAFE, ref="7", name="Café Réveil", street="Valencia St", city="San Francisco",
                          phone="+1 415-555-0107"), point(37.7621, -122.4216)),
        # Skipped: no brand:wikidata.
        feature(atp_props(("Corner Market", None), ref="1", name="Corner Market", city="San Francisco"),
                point(37.7702, -122.4442)),
        # Skipped: null geometry (All the Places writes these when a spider finds no coordinates).
        feature(atp_props(COSTCO, ref="999", name="Costco Online Only"), None),
        # Skipped: same ref as an earlier Whole Foods feature, so the same location id.
        feature(atp_props(WHOLE_FOODS, ref="10234", name="Whole Foods Market SoMa (duplicate)"),
                point(37.7822, -122.4011)),
    ],
}


# MARK: - GeoJSON sequence (osmium export -a type,id -f geojsonseq, no --geometry-types)
# osmium writes nodes, then ways (closed ways as LineStrings too), then the areas assembled from closed ways and
# multipolygon relations (as MultiPolygons, with the way's @type/@id).

def osm_props(kind, oid, b, name, shop):
    p = {"@type": kind, "@id": oid}
    if b is not None:
        p["brand"] = b[0]
        p["brand:wikidata"] = b[1]
    if name is not None:
        p["name"] = name
    if shop is not None:
        p["shop"] = shop
    return p


def lonlat(*lat_lon):
    return [[lon, lat] for lat, lon in lat_lon]


WAY_2001 = ring((37.7745, -122.4200), (37.7745, -122.4188), (37.7753, -122.4188), (37.7753, -122.4200))
WAY_2002 = ring((37.7816, -122.4013), (37.7816, -122.4004), (37.7823, -122.4004), (37.7824, -122.4012),
                (37.7820, -122.4015))
WAY_2004 = lonlat((37.7810, -122.4510), (37.7812, -122.4500), (37.7818, -122.4495))  # open: a mis-drawn outline
# Collinear, zero area. Dyadic coordinates (k/128 of a degree) make every product exact in binary floating point, so
# any shoelace implementation gets exactly 0 and falls back to the mean of the distinct positions.
WAY_2005 = ring((37.75, -122.4375), (37.7578125, -122.4296875), (37.765625, -122.421875))

SEQ_RECORDS = [
    feature(osm_props("node", 1001, COSTCO, "Costco", "wholesale"), point(37.7749, -122.4194)),
    feature(osm_props("node", 1002, WHOLE_FOODS, "Whole Foods Market", "supermarket"), point(37.782, -122.4009)),
    feature(osm_props("node", 1003, KOHLS, "Kohl's", "department_store"), point(37.7816, -122.4501)),
    feature(osm_props("node", 1004, TRADER, None, "supermarket"), point(37.7835, -122.4466)),
    feature(osm_props("way", 2001, COSTCO, "Costco Harrison St", "wholesale"),
            {"type": "LineString", "coordinates": WAY_2001}),
    feature(osm_props("way", 2002, WHOLE_FOODS, "Whole Foods Market 4th St", "supermarket"),
            {"type": "LineString", "coordinates": WAY_2002}),
    feature(osm_props("way", 2004, KOHLS, "Kohl's", "department_store"),
            {"type": "LineString", "coordinates": WAY_2004}),
    feature(osm_props("way", 2005, WHOLE_FOODS, "Whole Foods Market kiosk", "supermarket"),
            {"type": "LineString", "coordinates": WAY_2005}),
    feature(osm_props("way", 3001, None, "Valencia Street", None) | {"highway": "residential"},
            {"type": "LineString", "coordinates": lonlat((37.7600, -122.4215), (37.7650, -122.4219))}),
    feature(osm_props("way", 2001, COSTCO, "Costco Harrison St", "wholesale"),
            {"type": "MultiPolygon", "coordinates": [[WAY_2001]]}),
    feature(osm_props("way", 2002, WHOLE_FOODS, "Whole Foods Market 4th St", "supermarket"),
            {"type": "MultiPolygon", "coordinates": [[WAY_2002]]}),
]


def geojsonseq(records, rs):
    out = b""
    for r in records:
        text = json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        out += (b"\x1e" if rs else b"") + text + b"\n"
    return out


# MARK: - Overpass API JSON (out center;)

OVERPASS = {
    "version": 0.6,
    "generator": "Overpass API 0.7.62 (made up for Coffer's tests)",
    "osm3s": {"timestamp_osm_base": "2026-11-01T00:00:00Z",
              "copyright": "Made-up data in the shape of OpenStreetMap data (ODbL)."},
    "elements": [
        {"type": "node", "id": 101, "lat": 37.7749, "lon": -122.4194,
         "tags": {"brand": "Costco", "brand:wikidata": "Q715583", "name": "Costco", "shop": "wholesale",
                  "addr:housenumber": "1450", "addr:street": "Harrison St", "addr:city": "San Francisco",
                  "addr:state": "CA", "addr:postcode": "94103", "opening_hours": HOURS_COSTCO}},
        {"type": "node", "id": 102, "lat": 37.782, "lon": -122.4009,
         "tags": {"brand": "Whole Foods Market", "brand:wikidata": "Q99900101", "name": "Whole Foods Market",
                  "shop": "supermarket", "addr:full": "399 4th St, San Francisco, CA 94107",
                  "contact:phone": "+1 415-555-0111", "opening_hours": HOURS_WF}},
        {"type": "node", "id": 103, "lat": 37.7708, "lon": -122.4461},  # no tags: a bare node, skipped
        {"type": "node", "id": 104, "lat": 37.7702, "lon": -122.4442,
         "tags": {"shop": "convenience", "name": "Corner Market"}},  # no brand:wikidata, skipped
        {"type": "way", "id": 201, "center": {"lat": 37.7816, "lon": -122.4501},
         "nodes": [9001, 9002, 9003, 9004, 9001],
         "tags": {"brand": "Kohl's", "brand:wikidata": "Q99900102", "name": "Kohl's", "shop": "department_store",
                  "building": "retail", "addr:city": "San Francisco", "addr:state": "CA",
                  "phone": "+1 415-555-0121", "opening_hours": HOURS_KOHLS}},
        {"type": "way", "id": 202, "center": {"lat": 37.6526, "lon": -122.4079},
         "nodes": [9011, 9012, 9013, 9014, 9011],
         "tags": {"brand": "Costco", "brand:wikidata": "Q715583", "shop": "wholesale", "building": "retail",
                  "addr:street": "Gateway Blvd", "addr:city": "South San Francisco"}},
        {"type": "relation", "id": 301, "center": {"lat": 37.7905, "lon": -122.4236},
         "members": [{"type": "way", "ref": 9101, "role": "outer"}, {"type": "way", "ref": 9102, "role": "inner"}],
         "tags": {"type": "multipolygon", "brand": "Whole Foods Market", "brand:wikidata": "Q99900101",
                  "name": "Whole Foods Market Pacific Heights", "shop": "supermarket",
                  "addr:housenumber": "1765", "addr:street": "California St", "addr:postcode": "94109"}},
        {"type": "node", "id": 105, "lat": 37.7835, "lon": -122.4466,
         "tags": {"brand": "TRADER JOE'S", "brand:wikidata": "Q99900105", "name": "Trader Joe's",
                  "shop": "supermarket", "opening_hours": "Mo-Su 08:00-21:00"}},
    ],
}


# MARK: - Bad inputs (one problem each)

def bad_files():
    costco = LOCATIONS["costco"]
    rows = [list(r) for r in costco]

    def with_row(i, col, value):
        r = [list(x) for x in rows]
        r[i][LOCATION_HEADER.index(col)] = value
        return locations_csv(r)

    write("bad_lat.csv", with_row(2, "lat", "91.5"))  # third data row (line 4)
    write("bad_nan.csv", with_row(1, "lat", "NaN"))
    write("bad_lon.csv", with_row(3, "lon", "-180.5"))
    write("bad_radius.csv", with_row(1, "radius", "-5"))
    write("bad_columns.csv", locations_csv([[r[0], r[1], r[2], r[4], r[5]] for r in rows],
                                           header=["name", "address", "lat", "radius", "phone"]))
    dup = networks_csv(False).splitlines()
    dup.append("costco,Costco Business Center,\"Costco Business Center\",grocery,false,150,\"membership\"")
    write("bad_networks_dup.csv", "\n".join(dup) + "\n")
    # An opening quote that is never closed: the rest of the file would be one field.
    text = locations_csv(rows).splitlines()
    text[2] = '"Costco South San Francisco,470 Gateway Blvd,37.6526,-122.4079,150,'
    write("bad_quote.csv", "\n".join(text) + "\n")

    fc = {"type": "FeatureCollection", "features": [
        feature(atp_props(COSTCO, ref="144", name="Costco San Francisco"), point(37.7749, -122.4194)),
        feature(atp_props(COSTCO, ref="145", name="Costco North Pole"), point(95.0, -122.4194)),
    ]}
    write("bad_feature.geojson", json.dumps(fc, indent=1) + "\n")
    full = json.dumps(STORES_GEOJSON, indent=1, ensure_ascii=False)
    write("bad_json.geojson", full[:len(full) // 2])  # cut mid-document, no newline
    fc = {"type": "FeatureCollection", "features": [
        feature(atp_props(COSTCO, ref="144", name="Costco San Francisco"), point(37.7749, -122.4194)),
        feature(atp_props(KOHLS, ref="1455", name="Kohl's San Francisco"),
                {"type": "Polygon", "coordinates": [[[-122.4501, 37.7816], [-122.4495, 37.7820]]]}),
    ]}
    write("bad_geometry.geojson", json.dumps(fc, indent=1) + "\n")


# MARK: - The reference importer (rules in README.md)

TRUE_WORDS = {"true", "1", "yes"}
FALSE_WORDS = {"false", "0", "no"}


def split_list(text):
    """`|`-separated, or `,`-separated when the field holds no `|`; parts trimmed, empty parts dropped."""
    sep = "|" if "|" in text else ","
    return [p.strip() for p in text.split(sep) if p.strip()]


def parse_bool(text):
    t = text.strip().lower()
    if t in TRUE_WORDS:
        return True
    if t in FALSE_WORDS:
        return False
    raise ValueError(text)


def read_csv(name):
    with open(os.path.join(HERE, name), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, strict=True))


def import_networks_csv(name):
    nets = []
    for row in read_csv(name):
        nets.append({
            "id": row["id"],
            "name": row["name"],
            "wikidata": (row.get("wikidata") or None),
            "canonical_names": split_list(row["canonical_names"]) or [row["name"]],
            "category": row["category"],
            "is_large_area": parse_bool(row["is_large_area"]),
            "default_radius_meters": int(row["default_radius_meters"]),
            "tags": split_list(row["tags"]),
        })
    return {"networks": sorted(nets, key=lambda n: n["id"]), "locations": [], "skipped": 0, "skip_reasons": []}


def import_locations_csv(name, network):
    locs = []
    for number, row in enumerate(read_csv(name), start=1):
        locs.append({
            "id": f"loc_{network}_{number:03d}",
            "network_id": network,
            "name": row["name"],
            "address": row["address"] or None,
            "lat": rnd(float(row["lat"])),
            "lon": rnd(float(row["lon"])),
            "radius_meters": int(row["radius"]) if row["radius"] else None,
            "phone": row["phone"] or None,
            "hours": None,
        })
    return {"networks": [], "locations": sorted(locs, key=lambda l: l["id"]), "skipped": 0, "skip_reasons": []}


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def rnd(x):
    """round(x, 7), refusing values whose 8th decimal sits within 1e-6 of a rounding tie (see the docstring)."""
    scaled = x * 1e7
    frac = abs(scaled - math.floor(scaled) - 0.5)
    assert frac > 1e-6, f"{x!r} is too close to a rounding tie"
    return round(x, 7)


def ring_area_centroid(positions):
    """Signed shoelace area (in square degrees, lon as x, lat as y) and centroid (lat, lon) of a closed ring, exact.
    A zero-area ring's centroid is the mean of its distinct positions."""
    pts = [(Fraction(lon), Fraction(lat)) for lon, lat in positions]
    if pts[0] != pts[-1]:
        pts.append(pts[0])
    a2 = Fraction(0)
    cx = Fraction(0)
    cy = Fraction(0)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        cross = x0 * y1 - x1 * y0
        a2 += cross
        cx += (x0 + x1) * cross
        cy += (y0 + y1) * cross
    if a2 == 0:
        distinct = []
        for p in pts:
            if p not in distinct:
                distinct.append(p)
        return Fraction(0), (sum(p[1] for p in distinct) / len(distinct), sum(p[0] for p in distinct) / len(distinct))
    return a2 / 2, (cy / (3 * a2), cx / (3 * a2))


def geometry_point(geometry):
    """(lat, lon) for a geometry, or a skip reason string."""
    if geometry is None:
        return "no geometry"
    kind = geometry["type"]
    coords = geometry.get("coordinates")
    if kind == "Point":
        return (Fraction(coords[1]), Fraction(coords[0]))
    if kind == "Polygon":
        return ring_area_centroid(coords[0])[1]
    if kind == "MultiPolygon":
        parts = [ring_area_centroid(polygon[0]) for polygon in coords]
        total = sum(abs(a) for a, _ in parts)
        return (sum(abs(a) * c[0] for a, c in parts) / total, sum(abs(a) * c[1] for a, c in parts) / total)
    if kind == "LineString" and len(coords) >= 4 and coords[0] == coords[-1]:
        return ring_area_centroid(coords)[1]
    return "not a point or an area"


def address_of(p):
    if p.get("addr:full"):
        return p["addr:full"]
    street = f"{p.get('addr:housenumber', '')} {p.get('addr:street', '')}".strip()
    parts = [street, p.get("addr:city", ""), p.get("addr:state", ""), p.get("addr:postcode", "")]
    parts = [x for x in parts if x]
    return ", ".join(parts) if parts else None


def import_features(records):
    """records: (properties, geometry-or-(lat, lon), location id function). Returns the expected.json entry."""
    networks = {}
    locations = {}
    from_line = set()  # location ids whose current record is a closed LineString
    reasons = []
    for index, (p, geometry, make_id) in enumerate(records):
        if not p.get("brand:wikidata"):
            reasons.append({"record": index, "reason": "no brand:wikidata"})
            continue
        where = geometry if isinstance(geometry, tuple) else geometry_point(geometry)
        if isinstance(where, str):
            reasons.append({"record": index, "reason": where})
            continue
        net_id = slug(p["brand"])
        loc_id = make_id(p, net_id)
        is_polygon = isinstance(geometry, dict) and geometry["type"] in ("Polygon", "MultiPolygon")
        if loc_id in locations:
            if is_polygon and loc_id in from_line:
                reasons.append({"record": locations[loc_id]["_record"],
                                "reason": "closed LineString replaced by the polygon of the same id"})
                from_line.discard(loc_id)
            else:
                reasons.append({"record": index, "reason": "duplicate of an earlier record"})
                continue
        if p["brand:wikidata"] not in networks:
            networks[p["brand:wikidata"]] = {
                "id": net_id, "name": p["brand"], "wikidata": p["brand:wikidata"], "canonical_names": [p["brand"]],
                "category": "other", "is_large_area": False, "default_radius_meters": 100, "tags": []}
        if isinstance(geometry, dict) and geometry["type"] == "LineString":
            from_line.add(loc_id)
        locations[loc_id] = {
            "id": loc_id, "network_id": net_id, "name": p.get("name") or p["brand"], "address": address_of(p),
            "lat": rnd(float(where[0])), "lon": rnd(float(where[1])), "radius_meters": None,
            "phone": p.get("phone") or p.get("contact:phone") or None, "hours": p.get("opening_hours") or None,
            "_record": index}
    locs = sorted(locations.values(), key=lambda l: l["id"])
    for l in locs:
        del l["_record"]
    reasons.sort(key=lambda r: r["record"])
    assert len(reasons) + len(locs) == len(records)
    return {"networks": sorted(networks.values(), key=lambda n: n["id"]), "locations": locs,
            "skipped": len(reasons), "skip_reasons": reasons}


def atp_id(feature_obj):
    def make(p, net):
        if "ref" in p:
            return f"{net}:{p['ref']}"
        return f"{net}:{feature_obj['id']}"
    return make


def import_geojson(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        fc = json.load(f)
    return import_features([(f["properties"], f["geometry"], atp_id(f)) for f in fc["features"]])


def import_geojsonseq(name):
    with open(os.path.join(HERE, name), "rb") as f:
        data = f.read()
    records = []
    for line in data.split(b"\n"):
        line = line.lstrip(b"\x1e").strip()
        if line:
            r = json.loads(line)
            records.append((r["properties"], r["geometry"],
                            lambda p, net: f"osm:{p['@type']}/{p['@id']}"))
    return import_features(records)


def import_overpass(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        doc = json.load(f)
    records = []
    for e in doc["elements"]:
        where = (Fraction(e["lat"]), Fraction(e["lon"])) if "lat" in e else (
            (Fraction(e["center"]["lat"]), Fraction(e["center"]["lon"])) if "center" in e else None)
        records.append((e.get("tags", {}), where, lambda p, net, e=e: f"osm:{e['type']}/{e['id']}"))
    return import_features(records)


# MARK: - Checks that each bad file has its one problem and the good files none

def csv_problems(name, kind):
    """The problems a strict importer must report for a CSV (empty list = none); kind is "networks" or "locations"."""
    try:
        with open(os.path.join(HERE, name), newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f, strict=True))
    except csv.Error:
        return ["unterminated quote"]
    header, body = rows[0], rows[1:]
    want = NETWORK_HEADER.split(",") if kind == "networks" else LOCATION_HEADER
    if [h for h in want if h not in header]:
        return ["missing column"]
    problems = []
    if any(len(r) != len(header) for r in body):
        problems.append("wrong field count")
    table = [dict(zip(header, r)) for r in body]
    if kind == "networks":
        ids = [r["id"] for r in table]
        if len(set(ids)) != len(ids):
            problems.append("duplicate network id")
        return problems
    for r in table:
        lat, lon = float(r["lat"]), float(r["lon"])
        if math.isnan(lat) or math.isnan(lon):
            problems.append("coordinate not a number")
        elif not -90 <= lat <= 90:
            problems.append("latitude out of range")
        elif not -180 <= lon <= 180:
            problems.append("longitude out of range")
        if r["radius"] and int(r["radius"]) <= 0:
            problems.append("radius not positive")
    return problems


def geojson_problems(name):
    try:
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            fc = json.load(f)
    except json.JSONDecodeError:
        return ["not JSON"]
    problems = []
    for f in fc["features"]:
        g = f["geometry"]
        if g is None:
            continue
        if g["type"] == "Point":
            lon, lat = g["coordinates"]
            if not (-90 <= lat <= 90 and -180 <= lon <= 180):
                problems.append("coordinate out of range")
        rings = {"Polygon": lambda c: c, "MultiPolygon": lambda c: [r for poly in c for r in poly]}.get(
            g["type"], lambda c: [])(g["coordinates"])
        if any(len(r) < 4 or r[0] != r[-1] for r in rings):
            problems.append("ring not closed or too short")
    return problems


def check_problems():
    for name in ("networks.csv", "networks_wikidata.csv"):
        assert csv_problems(name, "networks") == [], name
    for network in LOCATIONS:
        assert csv_problems(f"{network}.csv", "locations") == [], network
    assert geojson_problems("stores.geojson") == []
    for name, kind, problem in (("bad_lat.csv", "locations", "latitude out of range"),
                                ("bad_nan.csv", "locations", "coordinate not a number"),
                                ("bad_lon.csv", "locations", "longitude out of range"),
                                ("bad_columns.csv", "locations", "missing column"),
                                ("bad_networks_dup.csv", "networks", "duplicate network id"),
                                ("bad_radius.csv", "locations", "radius not positive"),
                                ("bad_quote.csv", "locations", "unterminated quote")):
        assert csv_problems(name, kind) == [problem], (name, csv_problems(name, kind))
    for name, problem in (("bad_feature.geojson", "coordinate out of range"), ("bad_json.geojson", "not JSON"),
                          ("bad_geometry.geojson", "ring not closed or too short")):
        assert geojson_problems(name) == [problem], (name, geojson_problems(name))


# MARK: - Main

def main():
    write("networks.csv", networks_csv(False))
    write("networks_wikidata.csv", networks_csv(True))
    for network, rows in LOCATIONS.items():
        # sfpl.csv uses CRLF line endings (RFC 4180's), the others LF.
        write(f"{network}.csv", locations_csv(rows), newline="\r\n" if network == "sfpl" else "\n")
    write("stores.geojson", json.dumps(STORES_GEOJSON, indent=1, ensure_ascii=False) + "\n")
    write_bytes("stores.geojsonseq", geojsonseq(SEQ_RECORDS, rs=True))
    write_bytes("stores_nors.geojsonseq", geojsonseq(SEQ_RECORDS, rs=False))
    write("overpass.json", json.dumps(OVERPASS, indent=1, ensure_ascii=False) + "\n")
    bad_files()

    expected = {
        "networks.csv": import_networks_csv("networks.csv"),
        "networks_wikidata.csv": import_networks_csv("networks_wikidata.csv"),
    }
    for network in LOCATIONS:
        expected[f"{network}.csv"] = import_locations_csv(f"{network}.csv", network)
    expected["stores.geojson"] = import_geojson("stores.geojson")
    expected["stores.geojsonseq"] = import_geojsonseq("stores.geojsonseq")
    expected["stores_nors.geojsonseq"] = import_geojsonseq("stores_nors.geojsonseq")
    expected["overpass.json"] = import_overpass("overpass.json")
    assert expected["stores.geojsonseq"] == expected["stores_nors.geojsonseq"]
    write("expected.json", json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    check_problems()


if __name__ == "__main__":
    main()
