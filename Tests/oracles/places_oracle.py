#!/usr/bin/env python3
"""Independent reference for Coffer's places code (on cue): distances, geohash cells, nearest regions, halo tiles.

Shares no code with Coffer. It leans on third-party libraries where one exists (PyPI `haversine`, `geographiclib`,
`pygeohash`) and otherwise on short formulas written here with Python's `math` module.

Usage: places_oracle.py MODE < request.json > answer.json
Modes (each reads one JSON object on stdin and writes one JSON object on stdout):

  distance    {"pairs": [[lat1, lon1, lat2, lon2], ...]}
              -> {"haversine": [m, ...], "geodesic": [m, ...]}
              haversine: PyPI `haversine` rescaled to a sphere of R = 6,371,000 m; geodesic: WGS84 (GeographicLib).
              A pair the libraries reject (latitude outside ±90, longitude outside ±180, NaN) gives null.
  geohash     {"encode": [[lat, lon, precision], ...], "decode": ["ezs42", ...], "neighbours": ["ezs42", ...]}
              -> {"encode": [...], "decode": [[south, north, west, east], ...], "neighbours": [{"n", "ne", ...}, ...]}
              Any key may be absent (so is its answer). Invalid input (bad character, precision outside 1...12,
              coordinate out of range or NaN) gives null for that entry. Geohash input is case-insensitive.
  regions     {"locations": [{"id", "network", "lat", "lon", "radius"}], "positions": [[lat, lon], ...],
               "user_networks": [...], "radius_m": 50000, "max": 20}
              -> {"regions": [[id, ...], ...], "distances": [[m, ...], ...]}   (one list per position)
  halo        {"cells": ["9q8y", ...], "radius_m": 50000} -> {"boxes": [[[south, north, west, east], ...], ...]}
              (a box split at ±180 lists the part ending at 180 first, then the part starting at -180)
  near_cell   {"cell": "9q8y", "points": [[lat, lon], ...], "radius_m": 50000} -> {"within": [bool, ...],
              "distances": [m, ...]}: within radius_m of any point of the cell's rectangle (exact minimum distance).
              Batch form: {"cells": [...], "points": [[[lat, lon], ...], ...]} -> lists of lists.
  selftest    checks the published vectors and cross-checks the modes; exits 1 on any failure.

Coffer's rules at the edges of the geohash grid, applied around pygeohash where it differs:
  - longitude 180 is the same meridian as -180 and is encoded as -180 (pygeohash 3.5.1 puts 180 in the easternmost
    column: encode(45, 180, 4) = "zbpb", where Coffer says "b000");
  - latitude 90 belongs to the top row (pygeohash agrees: encode(90, 0, 4) = "upbp");
  - east/west neighbours wrap across the antimeridian (pygeohash agrees: get_adjacent("xczb", "right") = "81b0");
  - a top-row cell has no n/ne/nw neighbour and a bottom-row cell no s/se/sw neighbour: JSON null (pygeohash raises
    ValueError there, which this script turns into null).
"""
import importlib
import json
import math
import random
import sys

import haversine as haversine_lib
import numpy as np
import pygeohash
from geographiclib.geodesic import Geodesic
from pygeohash.bounding_box import get_bounding_box
from pygeohash.neighbor import get_adjacent

R = 6_371_000.0  # Coffer's (and CardOnCue's) sphere, metres

# The PyPI `haversine` package (2.9.0 here) uses the mean Earth radius R1 = 6,371.0088 km (IUGG), not 6,371 km; its
# metres result is rescaled by 6,371,000 / 6,371,008.8 (a 1.4 ppm change). The radius is read from the installed
# module so a future version with another constant is still rescaled correctly; selftest checks the value.
_HAVERSINE_MODULE = importlib.import_module("haversine.haversine")
HAVERSINE_LIB_RADIUS_M = _HAVERSINE_MODULE.get_avg_earth_radius(haversine_lib.Unit.METERS)

GEOHASH_ALPHABET = "0123456789bcdefghjkmnpqrstuvwxyz"


# MARK: - Distances

def lib_haversine_m(lat1, lon1, lat2, lon2):
    """Great-circle distance on R = 6,371,000 m through the PyPI `haversine` library."""
    d = haversine_lib.haversine((lat1, lon1), (lat2, lon2), unit=haversine_lib.Unit.METERS)
    return d * R / HAVERSINE_LIB_RADIUS_M


def math_haversine_m(lat1, lon1, lat2, lon2):
    """a = sin²(Δφ/2) + cos φ1 cos φ2 sin²(Δλ/2), d = 2R·asin(√a), with Python's math module."""
    p1 = math.radians(lat1)
    p2 = math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R * math.asin(math.sqrt(min(1.0, a)))


def geodesic_m(lat1, lon1, lat2, lon2):
    return Geodesic.WGS84.Inverse(lat1, lon1, lat2, lon2)["s12"]


def _finite_coords(*values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def mode_distance(req):
    hav, geo = [], []
    for pair in req.get("pairs", []):
        lat1, lon1, lat2, lon2 = pair
        if not _finite_coords(lat1, lon1, lat2, lon2) or max(abs(lat1), abs(lat2)) > 90 or max(abs(lon1), abs(lon2)) > 180:
            hav.append(None)
            geo.append(None)
            continue
        hav.append(lib_haversine_m(lat1, lon1, lat2, lon2))
        geo.append(geodesic_m(lat1, lon1, lat2, lon2))
    return {"haversine": hav, "geodesic": geo}


# MARK: - Geohash

def gh_encode(lat, lon, precision):
    """pygeohash.encode with Coffer's rule that longitude 180 is -180. None for invalid input."""
    if isinstance(precision, float) and precision.is_integer():
        precision = int(precision)  # JSON writers may send 5 as 5.0
    if not _finite_coords(lat, lon) or isinstance(precision, bool) or not isinstance(precision, int):
        return None
    if not (1 <= precision <= 12) or abs(lat) > 90 or abs(lon) > 180:
        return None
    if lon == 180:
        lon = -180.0
    return pygeohash.encode(float(lat), float(lon), precision)


def _valid_geohash(cell):
    return isinstance(cell, str) and 1 <= len(cell) <= 12 and all(c in GEOHASH_ALPHABET for c in cell.lower())


def gh_box(cell):
    """[south, north, west, east] of a cell, from pygeohash's bounding box. None for an invalid geohash."""
    if not _valid_geohash(cell):
        return None
    b = get_bounding_box(cell.lower())
    return [b.min_lat, b.max_lat, b.min_lon, b.max_lon]


def _adjacent(cell, direction):
    if cell is None:
        return None
    try:
        return get_adjacent(cell, direction)
    except ValueError:  # pygeohash raises beyond a pole
        return None


def gh_neighbours(cell):
    if not _valid_geohash(cell):
        return None
    cell = cell.lower()
    n = _adjacent(cell, "top")
    s = _adjacent(cell, "bottom")
    return {
        "n": n,
        "ne": _adjacent(n, "right"),
        "e": _adjacent(cell, "right"),
        "se": _adjacent(s, "right"),
        "s": s,
        "sw": _adjacent(s, "left"),
        "w": _adjacent(cell, "left"),
        "nw": _adjacent(n, "left"),
    }


def gh_neighbours_by_shift(cell):
    """Second, library-independent route to the neighbours (used by selftest): decode the box, move its centre by one
    cell height/width, wrap longitude into [-180, 180), and re-encode; nothing beyond a pole."""
    s, n, w, e = gh_box(cell)
    clat, clon = (s + n) / 2, (w + e) / 2
    h, wd = n - s, e - w
    out = {}
    for key, dy, dx in (("n", 1, 0), ("ne", 1, 1), ("e", 0, 1), ("se", -1, 1),
                        ("s", -1, 0), ("sw", -1, -1), ("w", 0, -1), ("nw", 1, -1)):
        lat = clat + dy * h
        if abs(lat) > 90:
            out[key] = None
            continue
        lon = (clon + dx * wd + 180.0) % 360.0 - 180.0
        out[key] = gh_encode(lat, lon, len(cell))
    return out


def mode_geohash(req):
    out = {}
    if "encode" in req:
        out["encode"] = [gh_encode(lat, lon, p) for lat, lon, p in req["encode"]]
    if "decode" in req:
        out["decode"] = [gh_box(c) for c in req["decode"]]
    if "neighbours" in req:
        out["neighbours"] = [gh_neighbours(c) for c in req["neighbours"]]
    return out


# MARK: - Regions (brute force)

_MARGIN_M = 1e-3  # numpy and math agree to ~1e-8 m here; the margin only widens the set re-checked with math


def mode_regions(req):
    """Every location within radius_m (math-module haversine), ordered by (priority, distance, id as UTF-8 bytes),
    priority 1 for the user's networks else 2, cut to `max`.

    numpy computes all distances at once as a pre-filter; the final membership test and ordering use the
    math-module distance only. The pre-filter keeps everything within radius_m + 1 mm, and for each priority group
    it re-checks, in numpy order, locations until `max` have been taken plus every one within 1 mm of the last taken,
    so a numpy rounding difference can never change the answer.
    """
    locs = req["locations"]
    radius_m = float(req.get("radius_m", 50000))
    limit = int(req.get("max", 20))
    user = set(req.get("user_networks", []))
    ids = [l["id"] for l in locs]
    lat = np.radians(np.array([l["lat"] for l in locs], dtype=float))
    lon = np.radians(np.array([l["lon"] for l in locs], dtype=float))
    prio = np.array([1 if l["network"] in user else 2 for l in locs], dtype=int)
    cos_lat = np.cos(lat)
    regions, distances = [], []
    for plat, plon in req["positions"]:
        p1 = math.radians(plat)
        a = np.sin((lat - p1) / 2) ** 2 + math.cos(p1) * cos_lat * np.sin((lon - math.radians(plon)) / 2) ** 2
        d_np = 2 * R * np.arcsin(np.sqrt(np.minimum(1.0, a)))
        cand = np.nonzero(d_np <= radius_m + _MARGIN_M)[0]
        chosen = []  # (priority, exact distance, id bytes, id)
        for group in (1, 2):
            if len(chosen) >= limit:
                break
            g = cand[prio[cand] == group]
            g = g[np.argsort(d_np[g], kind="stable")]
            cutoff = None
            for i in g:
                if cutoff is not None and d_np[i] > cutoff:
                    break
                d = math_haversine_m(locs[i]["lat"], locs[i]["lon"], plat, plon)
                if d <= radius_m:
                    chosen.append((group, d, ids[i].encode("utf-8"), ids[i]))
                    if len(chosen) >= limit and cutoff is None:
                        cutoff = d_np[i] + _MARGIN_M
        chosen.sort(key=lambda t: (t[0], t[1], t[2]))
        chosen = chosen[:limit]
        regions.append([t[3] for t in chosen])
        distances.append([t[1] for t in chosen])
    return {"regions": regions, "distances": distances}


def regions_naive(req):
    """The same answer in plain Python, used by selftest to check mode_regions' shortcut."""
    user = set(req.get("user_networks", []))
    out = []
    for plat, plon in req["positions"]:
        rows = []
        for l in req["locations"]:
            d = math_haversine_m(l["lat"], l["lon"], plat, plon)
            if d <= req["radius_m"]:
                rows.append((1 if l["network"] in user else 2, d, l["id"].encode("utf-8"), l["id"]))
        rows.sort(key=lambda t: (t[0], t[1], t[2]))
        out.append([t[3] for t in rows[:req["max"]]])
    return out


def mode_regions_nearest(req):
    """Coffer's choice on Linux, where no OS caps the regions: the nearest location of every user network within
    radius_m is kept first (the nearest `max` of those when there are more networks), the set then filled by
    (priority, distance, id as UTF-8 bytes) and ordered so. Plain Python over every location; math-module distance.
    """
    user = set(req.get("user_networks", []))
    limit = int(req.get("max", 20))
    radius_m = float(req.get("radius_m", 50000))
    out = []
    for plat, plon in req["positions"]:
        rows = []
        for l in req["locations"]:
            d = math_haversine_m(l["lat"], l["lon"], plat, plon)
            if d <= radius_m:
                rows.append((1 if l["network"] in user else 2, d, l["id"].encode("utf-8"), l["id"], l["network"]))
        rows.sort(key=lambda t: (t[0], t[1], t[2]))
        nearest = {}
        for row in rows:
            if row[0] == 1 and row[4] not in nearest:
                nearest[row[4]] = row
        kept = sorted(nearest.values(), key=lambda t: (t[1], t[2]))[:limit]
        taken = {t[3] for t in kept}
        for row in rows:
            if len(kept) >= limit:
                break
            if row[3] not in taken:
                kept.append(row)
                taken.add(row[3])
        kept.sort(key=lambda t: (t[0], t[1], t[2]))
        out.append([t[3] for t in kept])
    return {"regions": out}


# MARK: - Halo tiles

def halo_boxes(cell, radius_m):
    """Bounding box(es) of every point within radius_m of any point of the cell.

    Δlat = degrees(δ), δ = radius_m / R. Δlon = degrees(asin(sin δ / cos φp)) with φp the cell edge nearer the pole:
    the widest longitude reach of a circle of radius δ centred at latitude φ is asin(sin δ / cos φ), growing with |φ|.
    If |φp| + Δlat ≥ 90 the circle may contain a pole: the whole ring of longitudes. A box that crosses ±180 is split
    in two, listed in eastward order across the antimeridian: first the part ending at 180, then the part starting
    at -180 (the order Coffer's tests compare in).
    """
    s, n, w, e = gh_box(cell)
    delta = radius_m / R
    dlat = math.degrees(delta)
    phi_p = max(abs(s), abs(n))
    south, north = max(-90.0, s - dlat), min(90.0, n + dlat)
    if phi_p + dlat >= 90:
        return [[south, north, -180.0, 180.0]]
    dlon = math.degrees(math.asin(math.sin(delta) / math.cos(math.radians(phi_p))))
    west, east = w - dlon, e + dlon
    if east - west >= 360:
        return [[south, north, -180.0, 180.0]]
    if west < -180:
        return [[south, north, west + 360.0, 180.0], [south, north, -180.0, east]]
    if east > 180:
        return [[south, north, west, 180.0], [south, north, -180.0, east - 360.0]]
    return [[south, north, west, east]]


def mode_halo(req):
    radius_m = float(req.get("radius_m", 50000))
    return {"boxes": [halo_boxes(c, radius_m) for c in req["cells"]]}


# MARK: - Distance from a point to a cell

def _wrap180(x):
    return (x + 180.0) % 360.0 - 180.0


def min_distance_to_box(plat, plon, s, n, w, e, samples=2000):
    """Smallest haversine distance (R = 6,371,000 m) from a point to any point of the rectangle [s, n] × [w, e].

    How exact: exact up to floating-point rounding (about 1e-8 m at these scales); the answer is computed with the
    math module only.
      - Inside the rectangle (longitude compared modulo 360): 0.
      - Otherwise the minimum lies on the boundary.
      - Parallel edges (latitude s or n): cos d = sin φP sin φ0 + cos φP cos φ0 cos Δλ falls as |Δλ| grows, so the
        nearest point of such an edge is the one whose longitude is nearest the point's (wrap-aware), taken exactly.
        As a cross-check, `samples` + 1 evenly spaced points along each parallel edge are measured too (numpy); if one
        of them were nearer than the answer by more than 1 µm, the script stops with an error instead of answering.
      - Meridian edges (longitude w or e) are arcs of a great circle: the foot of the perpendicular is at
        φ* = atan(tan φP / cos Δλ) when |Δλ| < 90° (else the nearer pole), and the distance along the arc has a single
        minimum, so clamping φ* to [s, n] and also trying both ends is exact.
    """
    if s <= plat <= n and (plon - w) % 360.0 <= (e - w):
        return 0.0
    best = math.inf

    def consider(lat, lon):
        nonlocal best
        best = min(best, math_haversine_m(plat, plon, lat, lon))

    # Parallel edges: nearest longitude inside [w, e], wrap-aware.
    rel = (plon - w) % 360.0  # eastward offset of the point from the west edge, in [0, 360)
    width = e - w
    if rel <= width:
        nearest_lon = w + rel
    else:
        nearest_lon = e if (rel - width) <= (360.0 - rel) else w
    for lat0 in (s, n):
        consider(lat0, nearest_lon)
    # Meridian edges.
    for lon0 in (w, e):
        dl = math.radians(_wrap180(plon - lon0))
        if abs(dl) < math.pi / 2:
            foot = math.degrees(math.atan(math.tan(math.radians(plat)) / math.cos(dl)))
        else:
            foot = 90.0 if plat >= 0 else -90.0
        consider(min(n, max(s, foot)), lon0)
        consider(s, lon0)
        consider(n, lon0)
    if samples:
        lons = np.radians(w + width * np.arange(samples + 1) / samples)
        p1 = math.radians(plat)
        for lat0 in (s, n):
            p2 = math.radians(lat0)
            a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * np.sin((lons - math.radians(plon)) / 2) ** 2
            sampled = float(np.min(2 * R * np.arcsin(np.sqrt(np.minimum(1.0, a)))))
            if sampled < best - 1e-6:
                raise RuntimeError(f"sampling found a point nearer than the exact minimum for ({plat}, {plon})")
    return best


def mode_near_cell(req):
    """One cell ("cell", "points") or, to save interpreter start-ups, many ("cells", "points" as one list per cell,
    answered as lists of lists)."""
    radius_m = float(req.get("radius_m", 50000))

    def one(cell, points):
        s, n, w, e = gh_box(cell)
        dists = [min_distance_to_box(lat, lon, s, n, w, e) for lat, lon in points]
        return [d <= radius_m for d in dists], dists

    if "cells" in req:
        answers = [one(c, p) for c, p in zip(req["cells"], req["points"])]
        return {"within": [a[0] for a in answers], "distances": [a[1] for a in answers]}
    within, dists = one(req["cell"], req["points"])
    return {"within": within, "distances": dists}


# MARK: - Self-test

def selftest():
    failures = []

    def check(label, ok):
        if not ok:
            failures.append(label)
        print(("ok   " if ok else "FAIL ") + label)

    check("haversine library radius is 6,371,008.8 m", abs(HAVERSINE_LIB_RADIUS_M - 6371008.8) < 1e-6)
    # Published distances from Costco SF (on-cue.md §5).
    for (lat, lon), want in (((37.7790, -122.4153), 581.112), ((37.7820, -122.4009), 1807.445),
                             ((37.7816, -122.4501), 2799.100)):
        d1 = lib_haversine_m(37.7749, -122.4194, lat, lon)
        d2 = math_haversine_m(37.7749, -122.4194, lat, lon)
        check(f"haversine Costco -> ({lat}, {lon}) = {want} m", abs(d1 - want) < 5e-4 and abs(d1 - d2) < 1e-6)
    check("geodesic one degree of longitude at the equator = 111,319.49 m",
          abs(geodesic_m(0, 0, 0, 1) - 111319.4908) < 1e-3)

    check("encode (42.6, -5.6, 5) = ezs42", gh_encode(42.6, -5.6, 5) == "ezs42")
    check("box of ezs42", gh_box("ezs42") == [42.5830078125, 42.626953125, -5.625, -5.5810546875])
    want = {"n": "ezs48", "ne": "ezs49", "e": "ezs43", "se": "ezs41", "s": "ezs40", "sw": "ezefp", "w": "ezefr",
            "nw": "ezefx"}
    check("neighbours of ezs42", gh_neighbours("ezs42") == want)
    s, n, w, e = gh_box("u4pruydqqvj")
    check("u4pruydqqvj centre (57.64911, 10.40744)",
          round((s + n) / 2, 5) == 57.64911 and round((w + e) / 2, 5) == 10.40744)
    check("encode (52.205, 0.119, 7) = u120fxw", gh_encode(52.205, 0.119, 7) == "u120fxw")
    check("gcpv east = u10j", gh_neighbours("gcpv")["e"] == "u10j")
    check("xczb east = 81b0", gh_neighbours("xczb")["e"] == "81b0")
    check("81b0 west = xczb", gh_neighbours("81b0")["w"] == "xczb")
    nb = gh_neighbours("upzp")
    check("upzp has no n/ne/nw", nb["n"] is None and nb["ne"] is None and nb["nw"] is None and nb["s"] is not None)
    nb = gh_neighbours("h000")
    check("h000 has no s/se/sw", nb["s"] is None and nb["se"] is None and nb["sw"] is None and nb["n"] is not None)
    check("San Francisco is in 9q8y", gh_encode(37.7749, -122.4194, 4) == "9q8y")
    check("longitude 180 encodes as -180", gh_encode(45.0, 180.0, 4) == gh_encode(45.0, -180.0, 4) == "b000"
          and gh_encode(0.0, 180.0, 4) == "8000")
    check("latitude 90 is the top row", gh_encode(90.0, 0.0, 4) == "upbp" and gh_neighbours("upbp")["n"] is None)
    check("invalid input gives null", gh_encode(91.0, 0.0, 5) is None and gh_encode(0.0, 0.0, 13) is None
          and gh_box("ezs4a") is None and gh_neighbours("") is None)

    rng = random.Random(20261124)
    agree = True
    for _ in range(3000):
        p = rng.randint(1, 8)
        cell = gh_encode(rng.uniform(-90, 90), rng.uniform(-180, 180), p)
        if gh_neighbours(cell) != gh_neighbours_by_shift(cell):
            agree = False
            print("  neighbours disagree for", cell)
            break
    for cell in ("xczb", "81b0", "upzp", "h000", "zzzz", "pbpb", "0000", "bpbp"):
        agree = agree and gh_neighbours(cell) == gh_neighbours_by_shift(cell)
    check("pygeohash neighbours = decode/shift/encode neighbours (3,000 random cells + edge cells)", agree)

    # Regions: the numpy shortcut agrees with plain Python, including ties and the radius edge.
    locs = []
    for i in range(400):
        locs.append({"id": f"l{i:03d}", "network": rng.choice(["a", "b", "c"]),
                     "lat": 37.7 + rng.uniform(-0.6, 0.6), "lon": -122.4 + rng.uniform(-0.6, 0.6), "radius": 100})
    locs.append({"id": "tie-b", "network": "a", "lat": 37.8, "lon": -122.4, "radius": 100})
    locs.append({"id": "tie-a", "network": "a", "lat": 37.8, "lon": -122.4, "radius": 100})
    locs.append({"id": "é-utf8", "network": "b", "lat": 37.8, "lon": -122.4, "radius": 100})
    locs.append({"id": "z-ascii", "network": "b", "lat": 37.8, "lon": -122.4, "radius": 100})
    positions = [[37.8, -122.4]] + [[37.7 + rng.uniform(-0.5, 0.5), -122.4 + rng.uniform(-0.5, 0.5)]
                                    for _ in range(60)]
    ok = True
    for user, radius, limit in ((["a"], 50000, 20), (["b", "c"], 20000, 5), ([], 30000, 20), (["a"], 50000, 1000)):
        req = {"locations": locs, "positions": positions, "user_networks": user, "radius_m": radius, "max": limit}
        ok = ok and mode_regions(req)["regions"] == regions_naive(req)
    req = {"locations": locs, "positions": [[37.8, -122.4]], "user_networks": ["a"], "radius_m": 10, "max": 20}
    ok = ok and mode_regions(req)["regions"] == [["tie-a", "tie-b", "z-ascii", "é-utf8"]]
    check("regions: numpy shortcut = plain Python; ties by UTF-8 id", ok)

    # Halo: SF's cell, and every point near a cell lies in its halo.
    b = halo_boxes("9q8y", 50000)
    check("halo of 9q8y is one box widened by 0.44966° in latitude",
          len(b) == 1 and abs((gh_box("9q8y")[0] - b[0][0]) - 0.44966) < 1e-5)
    check("halo of upzp is the whole ring", halo_boxes("upzp", 50000)[0][2:] == [-180.0, 180.0])
    b = halo_boxes("xczb", 50000)
    check("halo of xczb splits at the antimeridian, the part ending at 180 first",
          len(b) == 2 and b[0][3] == 180.0 and b[1][2] == -180.0 and b[0][2] > 179 and b[1][3] < -179)
    check("precision 5.0 is taken as 5", gh_encode(42.6, -5.6, 5.0) == "ezs42" and gh_encode(42.6, -5.6, 5.5) is None)
    ok = True
    for cell in ("9q8y", "xczb", "81b0", "gcpv", "u4pr", "s000", "upzp", "r3gx"):
        s, n, w, e = gh_box(cell)
        boxes = halo_boxes(cell, 50000)
        for _ in range(300):
            lat = rng.uniform(max(-90, s - 0.6), min(90, n + 0.6))
            lon = _wrap180(rng.uniform(w - 1.5, e + 1.5))
            if min_distance_to_box(lat, lon, s, n, w, e, samples=50) <= 50000:
                ok = ok and any(bs <= lat <= bn and bw <= lon <= be for bs, bn, bw, be in boxes)
    check("every point within 50 km of a cell lies in the cell's halo", ok)

    # near_cell: the exact minimum against a dense grid over the whole rectangle.
    ok = True
    for cell in ("9q8y", "xczb", "upzp", "gcpv"):
        s, n, w, e = gh_box(cell)
        grid = [(s + (n - s) * i / 60, w + (e - w) * j / 60) for i in range(61) for j in range(61)]
        for _ in range(40):
            lat = max(-90.0, min(90.0, rng.uniform(s - 0.5, n + 0.5)))
            lon = _wrap180(rng.uniform(w - 0.8, e + 0.8))
            exact = min_distance_to_box(lat, lon, s, n, w, e)
            dense = min(math_haversine_m(lat, lon, a, c) for a, c in grid)
            # The grid can only be farther; its spacing is at most ~1/60 of the cell (≈ 650 m for a geohash-4 cell).
            ok = ok and exact <= dense + 1e-6 and dense - exact < 700
    check("near_cell minimum <= dense-grid minimum, and close to it", ok)

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


MODES = {"distance": mode_distance, "geohash": mode_geohash, "regions": mode_regions,
         "regions_nearest": mode_regions_nearest, "halo": mode_halo, "near_cell": mode_near_cell}


def main(argv):
    if len(argv) < 2 or argv[1] not in list(MODES) + ["selftest"]:
        sys.stderr.write("usage: places_oracle.py {" + "|".join(list(MODES) + ["selftest"]) + "} < request.json\n")
        return 2
    if argv[1] == "selftest":
        return selftest()
    req = json.load(sys.stdin)
    json.dump(MODES[argv[1]](req), sys.stdout, ensure_ascii=False, allow_nan=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
