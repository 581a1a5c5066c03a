// Near me's geometry and tiles against Tests/oracles/places_oracle.py (PyPI haversine, pygeohash) and the golden tile
// written from FORMAT.md §9.3 by Tests/oracles/make_golden_tile.py.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { distance, geohash, nearest, parseTile } from '../app/js/places.js';
import { root } from './support.mjs';

function places(mode, request) {
  return JSON.parse(execFileSync('python3', [join(root, 'Tests/oracles/places_oracle.py'), mode], { input: JSON.stringify(request) }));
}

const points = [[37.7749, -122.4194], [-33.8688, 151.2093], [90, 0], [-90, 179.9999999], [45, 180], [0, -180], [51.5, -0.12]];

test('geohash cells and haversine distances equal the places oracle', () => {
  const cells = places('geohash', { encode: points.map(([lat, lon]) => [lat, lon, 4]) }).encode;
  assert.deepEqual(points.map(([lat, lon]) => geohash({ lat, lon }, 4)), cells);
  const pairs = points.flatMap((a) => points.map((b) => [...a, ...b]));
  const expected = places('distance', { pairs }).haversine;
  for (const [index, [a1, o1, a2, o2]] of pairs.entries()) {
    assert.ok(Math.abs(distance({ lat: a1, lon: o1 }, { lat: a2, lon: o2 }) - expected[index]) < 1e-6, `pair ${index}`);
  }
});

test('the golden tile reads as written, and a tile of another cell or with a bad count is refused', () => {
  const bytes = new Uint8Array(readFileSync(join(root, 'Tests/Vectors/places/golden_tile_v1.bin')));
  const cell = String.fromCharCode(...bytes.subarray(8, 20)).replace(/\0+$/, '');
  const tile = parseTile(bytes, cell);
  assert.deepEqual(tile.networks, ['costco']);
  assert.deepEqual(tile.locations, [{ lat: 37.7749, lon: -122.4194, network: 'costco' }, { lat: 37.6526, lon: -122.4079, network: 'costco' }]);
  assert.throws(() => parseTile(bytes, 'zzzz'), { code: 'tile' });
  const broken = bytes.slice();
  broken[32] = 9;
  assert.throws(() => parseTile(broken, cell), { code: 'tile' });
  for (let i = 0; i < 48; i++) {
    const flipped = bytes.slice();
    flipped[i] ^= 0x40;
    if (i >= 24 && i < 32) continue; // the places version: informational
    assert.throws(() => parseTile(flipped, cell), { code: 'tile' }, `header byte ${i}`);
  }
});

test('cards are placed at their nearest store or own place within 50 km, others left out', () => {
  const bytes = new Uint8Array(readFileSync(join(root, 'Tests/Vectors/places/golden_tile_v1.bin')));
  const tile = parseTile(bytes, String.fromCharCode(...bytes.subarray(8, 20)).replace(/\0+$/, ''));
  const card = (id, networks, metadata = {}) => ({ id, content: { network_ids: networks, metadata } });
  const here = { lat: 37.66, lon: -122.41 };
  const found = nearest([card('a', ['costco']), card('b', [], { location_1: '37.6601,-122.4101' }), card('c', ['ikea']),
    card('d', [], { location_1: '48.85,2.35' })], here, tile);
  assert.deepEqual([...found.keys()].sort(), ['a', 'b']);
  assert.ok(Math.abs(found.get('a') - distance(here, { lat: 37.6526, lon: -122.4079 })) < 1e-9);
  assert.ok(found.get('b') < 20);
});
