#!/usr/bin/env python3
"""Makes a GPS track through San Francisco and what the on-cue logic should do along it:

  track.nmea           one $GPRMC and one $GPGGA sentence per fix (CRLF, XOR checksums), one fix a second from
                       2026-11-24 12:00:00 UTC; gpsfake replays it through a real gpsd.
  track.txt            the same fixes as `lat,lon` lines (7 decimals) after one `#` comment line.
  track_expected.json  the stores, the entries and the region refreshes along the track (rules below).

The walk starts about 450 m south-west of Costco SF, goes through Costco, leaves it eastwards with a few fixes
jittering around the edge of its circle (inside again but within radius + 50 m: no new entry), goes to Whole Foods,
then west to Kohl's, then back into Costco. Fixes are ~25 m apart within 300 m of a store and ~150 m apart elsewhere.

Rules for track_expected.json (haversine, R = 6,371,000 m, on the 7-decimal fixes of track.txt):
  - entries: a fix is inside a store when its distance <= the store's radius. An entry happens at the first fix
    inside while no visit of that store is open (at the start, no visit is open); the visit stays open until a fix is
    farther than radius + 50 m, after which a new entry is possible.
  - refreshes: fix 0; then every fix whose distance from the last refresh point is > max(500 m, the largest radius of
    the monitored set), the monitored set being every store within 50 km of that last refresh point. Fixes are 1 s
    apart, so the 6-hour rule never fires.
The script refuses to write a track with a fix within 0.5 m of any threshold, so rounding cannot change the answer.

No randomness (the jitter is a fixed list); the output is byte-for-byte reproducible.
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
R = 6_371_000.0
HYSTERESIS_M = 50.0
REFRESH_MIN_M = 500.0
MONITOR_RADIUS_M = 50_000.0
# Steps of 24 m and 148 m ("about 25 and 150"): no sum of them along a straight leg is exactly 500 m.
NEAR_M, NEAR_STEP, FAR_STEP = 300.0, 24.0, 148.0

STORES = [
    {"id": "loc_costco_001", "network": "costco", "lat": 37.7749, "lon": -122.4194, "radius": 100},
    {"id": "loc_whole-foods_001", "network": "whole-foods", "lat": 37.782, "lon": -122.4009, "radius": 80},
    {"id": "loc_kohls_001", "network": "kohls", "lat": 37.7816, "lon": -122.4501, "radius": 100},
]
COSTCO, WHOLE_FOODS, KOHLS = STORES


def hav(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * R * math.asin(math.sqrt(min(1.0, a)))


def destination(lat, lon, bearing_deg, dist_m):
    """Point `dist_m` from (lat, lon) along the initial bearing, on the sphere."""
    d = dist_m / R
    b = math.radians(bearing_deg)
    p1, l1 = math.radians(lat), math.radians(lon)
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(b))
    l2 = l1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(p1), math.cos(d) - math.sin(p1) * math.sin(p2))
    return math.degrees(p2), math.degrees(l2)


def bearing(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return (math.degrees(math.atan2(y, x)) + 360) % 360


def near_store(lat, lon):
    return min(hav(lat, lon, s["lat"], s["lon"]) for s in STORES) <= NEAR_M


def walk(a, b):
    """Fixes from a (excluded) to b (included) along the great circle, 25 m apart near a store, 150 m elsewhere."""
    out = []
    lat, lon = a
    while True:
        left = hav(lat, lon, b[0], b[1])
        look = destination(lat, lon, bearing(lat, lon, b[0], b[1]), min(FAR_STEP, left))
        step = NEAR_STEP if near_store(lat, lon) or near_store(*look) else FAR_STEP
        if left <= step * 1.2:
            out.append(b)
            return out
        lat, lon = destination(lat, lon, bearing(lat, lon, b[0], b[1]), step)
        out.append((lat, lon))


def at(store, bearing_deg, dist_m):
    return destination(store["lat"], store["lon"], bearing_deg, dist_m)


def build():
    c = (COSTCO["lat"], COSTCO["lon"])
    wf = (WHOLE_FOODS["lat"], WHOLE_FOODS["lon"])
    k = (KOHLS["lat"], KOHLS["lon"])
    start = at(COSTCO, 225, 450)
    fixes = [start]
    fixes += walk(start, c)
    fixes += [at(COSTCO, 10, 6), at(COSTCO, 200, 4)]  # standing inside
    out_bearing = bearing(*c, *wf)
    # Leaving east: 25 m steps to the edge, then ~10 m of jitter across it (inside again at 94 and 96 m, never
    # beyond 150 m), then on. Pairs are (distance from Costco's centre, bearing offset).
    for dist, off in ((25, 0), (50, 0), (75, 0), (97, 2), (106, -3), (94, 4), (109, -2), (96, -5), (112, 3),
                      (103, 6), (124, -4), (138, 0), (162, 0)):
        fixes.append(at(COSTCO, out_bearing + off, dist))
    fixes += walk(fixes[-1], wf)
    fixes += [at(WHOLE_FOODS, 90, 5), at(WHOLE_FOODS, 300, 7)]
    fixes += walk(fixes[-1], k)
    fixes += [at(KOHLS, 45, 6), at(KOHLS, 180, 9)]
    fixes += walk(fixes[-1], c)
    fixes += [at(COSTCO, 120, 5), at(COSTCO, 330, 8), at(COSTCO, 60, 3)]
    return [(round(lat, 7), round(lon, 7)) for lat, lon in fixes]


# MARK: - The expected answers

def entries_of(fixes, hysteresis=HYSTERESIS_M):
    open_visit = {s["id"]: False for s in STORES}
    entries = []
    for i, (lat, lon) in enumerate(fixes):
        for s in STORES:
            d = hav(lat, lon, s["lat"], s["lon"])
            if not open_visit[s["id"]] and d <= s["radius"]:
                open_visit[s["id"]] = True
                entries.append({"fix": i, "store": s["id"], "network": s["network"]})
            elif open_visit[s["id"]] and d > s["radius"] + hysteresis:
                open_visit[s["id"]] = False
    return entries


def refresh_threshold(lat, lon):
    monitored = [s for s in STORES if hav(lat, lon, s["lat"], s["lon"]) <= MONITOR_RADIUS_M]
    return max([REFRESH_MIN_M] + [s["radius"] for s in monitored])


def refreshes_of(fixes):
    out = [0]
    ref = fixes[0]
    threshold = refresh_threshold(*ref)
    for i, (lat, lon) in enumerate(fixes[1:], start=1):
        d = hav(lat, lon, *ref)
        assert abs(d - threshold) > 0.5, f"fix {i} is {d} m from the refresh point, too close to {threshold}"
        if d > threshold:
            out.append(i)
            ref = (lat, lon)
            threshold = refresh_threshold(*ref)
    return out


def check(fixes, entries, refreshes):
    assert len(fixes) < 250, len(fixes)
    for i, (lat, lon) in enumerate(fixes):
        for s in STORES:
            d = hav(lat, lon, s["lat"], s["lon"])
            for edge in (s["radius"], s["radius"] + HYSTERESIS_M):
                assert abs(d - edge) > 0.5, f"fix {i} is {d} m from {s['id']}, too close to {edge}"
    assert [e["network"] for e in entries] == ["costco", "whole-foods", "kohls", "costco"], entries
    assert len(refreshes) > 1
    assert max(hav(*f, *fixes[0]) for f in fixes) > 500
    # The jitter matters: without hysteresis Costco would be entered again on the way out.
    assert len(entries_of(fixes, hysteresis=0)) > len(entries)


# MARK: - NMEA

def checksum(body):
    x = 0
    for ch in body.encode("ascii"):
        x ^= ch
    return f"{x:02X}"


def sentence(body):
    return f"${body}*{checksum(body)}\r\n"


def nmea_coord(value, positive, negative, degree_digits):
    """ddmm.mmmmmm / dddmm.mmmmmm. Six decimals of minutes hold a 7-decimal degree value exactly
    (1e-7 degree = 6e-6 minute), so gpsd reports the fix of track.txt to within double rounding."""
    units = round(abs(value) * 10_000_000)  # the value in 1e-7 degrees, exactly
    degrees, rest = divmod(units, 10_000_000)
    micro_minutes = rest * 6  # rest * 60 / 1e7 minutes = rest * 6 millionths of a minute
    minutes, frac = divmod(micro_minutes, 1_000_000)
    return f"{degrees:0{degree_digits}d}{minutes:02d}.{frac:06d}", positive if value >= 0 else negative


def nmea(fixes):
    lines = []
    for i, (lat, lon) in enumerate(fixes):
        t = 12 * 3600 + i
        hhmmss = f"{t // 3600:02d}{t // 60 % 60:02d}{t % 60:02d}.00"
        la, ns = nmea_coord(lat, "N", "S", 2)
        lo, ew = nmea_coord(lon, "E", "W", 3)
        if i + 1 < len(fixes):
            speed_kn = hav(lat, lon, *fixes[i + 1]) / 0.514444  # metres per second (1 s to the next fix) in knots
            course = bearing(lat, lon, *fixes[i + 1])
        else:
            speed_kn, course = 0.0, 0.0
        lines.append(sentence(f"GPRMC,{hhmmss},A,{la},{ns},{lo},{ew},{speed_kn:.1f},{course:.1f},241126,,,A"))
        lines.append(sentence(f"GPGGA,{hhmmss},{la},{ns},{lo},{ew},1,08,0.9,16.0,M,-32.1,M,,"))
    return "".join(lines)


def main():
    fixes = build()
    entries = entries_of(fixes)
    refreshes = refreshes_of(fixes)
    check(fixes, entries, refreshes)
    with open(os.path.join(HERE, "track.nmea"), "w", newline="") as f:
        f.write(nmea(fixes))
    with open(os.path.join(HERE, "track.txt"), "w", newline="\n") as f:
        f.write("# lat,lon of each fix of track.nmea, one second apart from 2026-11-24T12:00:00Z (make_track.py)\n")
        for lat, lon in fixes:
            f.write(f"{lat:.7f},{lon:.7f}\n")
    expected = {"stores": STORES, "fix_count": len(fixes), "entries": entries, "refreshes": refreshes}
    with open(os.path.join(HERE, "track_expected.json"), "w") as f:
        f.write(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
