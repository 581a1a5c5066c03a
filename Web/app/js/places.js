// @ts-check
// Near me (FORMAT.md §9): the position stays in this page. The server is asked only for the public, padded tile of
// the position's geohash-4 cell (§9.3), as `coffer places` does; each usable card is placed at the nearest of its
// networks' stores, or of its own places (`location_N` metadata), within 50 km, by haversine distance (§9.1, §9.2).
import { CofferError } from './bytes.js';

const RADIUS = 6_371_000;
export const SEARCH_RADIUS = 50_000;
const GEOHASH = '0123456789bcdefghjkmnpqrstuvwxyz';

/**
 * @typedef {{ lat: number, lon: number }} Point degrees
 * @typedef {import('./format.js').Card} Card
 * @typedef {ReturnType<typeof parseTile>} Tile
 */

/**
 * Coordinates as every reader rounds them (§9.1).
 * @param {number} value
 */
export function rounded(value) {
  return Math.round(value * 1e7) / 1e7;
}

/**
 * Haversine on a sphere of 6,371,000 m (§9.1).
 * @param {Point} a
 * @param {Point} b
 */
export function distance(a, b) {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * The geohash of a point (§9.1: longitude bit first; longitude 180 is −180; latitude 90 in the top row).
 * @param {Point} point
 * @param {number} precision
 */
export function geohash(point, precision) {
  let [south, north, west, east] = [-90, 90, -180, 180];
  const lon = point.lon === 180 ? -180 : point.lon;
  let cell = '';
  let bits = 0;
  let value = 0;
  let even = true;
  while (cell.length < precision) {
    if (even) {
      const middle = (west + east) / 2;
      value = value * 2 + (lon >= middle ? 1 : 0);
      if (lon >= middle) west = middle; else east = middle;
    } else {
      const middle = (south + north) / 2;
      value = value * 2 + (point.lat >= middle ? 1 : 0);
      if (point.lat >= middle) south = middle; else north = middle;
    }
    even = !even;
    if (++bits === 5) {
      cell += GEOHASH[value];
      bits = 0;
      value = 0;
    }
  }
  return cell;
}

/** @param {string} rule */
function tileError(rule) {
  return new CofferError('tile', `the server's places tile is malformed (${rule}); nothing was used`);
}

/**
 * @param {Uint8Array} bytes
 * @param {number} offset
 */
function readI32LE(bytes, offset) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(offset, true);
}

/**
 * @param {Uint8Array} bytes
 * @param {number} offset
 */
function readU32LE(bytes, offset) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset, true);
}

/**
 * A tile (§9.3), checked before anything is used: `{ networks: [id], locations: [{ lat, lon, network }] }`.
 * `cell` is the cell asked for; a tile of another cell or kind is refused.
 * @param {Uint8Array} bytes
 * @param {string} cell
 */
export function parseTile(bytes, cell) {
  if (bytes.length < 48 || bytes.length > 256 << 20) throw tileError('size');
  if (String.fromCharCode(...bytes.subarray(0, 4)) !== 'CFPT' || bytes[4] !== 1) throw tileError('magic or version');
  if (bytes[5] !== 1 || bytes[6] !== 0 || bytes[7] !== 0) throw tileError('kind');
  const named = String.fromCharCode(...bytes.subarray(8, 20)).replace(/\0+$/, '');
  if (named !== cell) throw tileError('another cell');
  if (readU32LE(bytes, 20) !== SEARCH_RADIUS) throw tileError('halo radius');
  const [n, l, s, c] = [32, 36, 40, 44].map((offset) => readU32LE(bytes, offset));
  if (c !== 48 + 16 * n + 24 * l + s || c > bytes.length) throw tileError('counts');
  const strings = bytes.subarray(48 + 16 * n + 24 * l, c);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  /** @type {(offset: number, length: number) => string} */
  const string = (offset, length) => {
    if (offset + length > s) throw tileError('string range');
    try {
      return decoder.decode(strings.subarray(offset, offset + length));
    } catch {
      throw tileError('string encoding');
    }
  };
  const networks = [];
  for (let i = 0; i < n; i++) {
    const at = 48 + 16 * i;
    networks.push(string(readU32LE(bytes, at), readU32LE(bytes, at + 4)).split('\x1f')[0]);
  }
  const locations = [];
  for (let i = 0; i < l; i++) {
    const at = 48 + 16 * n + 24 * i;
    const lat = readI32LE(bytes, at) / 1e7;
    const lon = readI32LE(bytes, at + 4) / 1e7;
    const network = readU32LE(bytes, at + 12);
    if (Math.abs(lat) > 90 || Math.abs(lon) > 180 || network >= n) throw tileError('location');
    string(readU32LE(bytes, at + 16), readU32LE(bytes, at + 20));
    locations.push({ lat: rounded(lat), lon: rounded(lon), network: networks[network] });
  }
  return { networks, locations };
}

/**
 * A card's own places: `location_N = "lat,lon"` metadata, in N's order (§9.2).
 * @param {Card} card
 */
export function ownPlaces(card) {
  return Object.keys(card.metadata)
    .filter((key) => key.startsWith('location_'))
    .sort((a, b) => (Number(a.slice(9)) || Infinity) - (Number(b.slice(9)) || Infinity))
    .map((key) => card.metadata[key].split(','))
    .filter((parts) => parts.length === 2 && parts.every((part) => part.trim() !== '' && Number.isFinite(Number(part))))
    .map(([lat, lon]) => ({ lat: rounded(Number(lat)), lon: rounded(Number(lon)) }))
    .filter((point) => Math.abs(point.lat) <= 90 && Math.abs(point.lon) <= 180);
}

/**
 * For each card (`{ id, content }`), the distance to its nearest store or own place within 50 km of `position`.
 * @param {{ id: string, content: Card }[]} cards
 * @param {Point} position
 * @param {Tile} tile
 */
export function nearest(cards, position, tile) {
  /** @type {Map<string, number>} */
  const result = new Map();
  for (const { id, content } of cards) {
    const networks = new Set(content.network_ids);
    const places = [...tile.locations.filter((location) => networks.has(location.network)), ...ownPlaces(content)];
    const best = Math.min(...places.map((place) => distance(position, place)));
    if (best <= SEARCH_RADIUS) result.set(id, best);
  }
  return result;
}

/**
 * Calls `moved(position)` whenever the device has moved more than 200 m from the last call; returns a stop function.
 * @param {(position: Point) => void} moved
 */
export function watchMoves(moved) {
  /** @type {Point | null} */
  let last = null;
  const id = navigator.geolocation?.watchPosition((found) => {
    const position = { lat: rounded(found.coords.latitude), lon: rounded(found.coords.longitude) };
    if (last && distance(last, position) <= 200) return;
    last = position;
    moved(position);
  }, () => {}, { enableHighAccuracy: false, maximumAge: 60_000 });
  return () => { if (id !== undefined) navigator.geolocation.clearWatch(id); };
}

/** @returns {Promise<Point>} */
function currentPosition() {
  return new Promise((resolve, reject) => {
    if (!navigator.geolocation) {
      reject(new CofferError('position', 'this browser gives no position (it needs HTTPS)'));
      return;
    }
    navigator.geolocation.getCurrentPosition(
      (found) => resolve({ lat: rounded(found.coords.latitude), lon: rounded(found.coords.longitude) }),
      () => reject(new CofferError('position', 'no position: allow location for this page to sort cards by store')),
      { enableHighAccuracy: false, maximumAge: 60_000, timeout: 20_000 });
  });
}

/**
 * The position now, the tile of its cell from the server (the only thing asked), and the cards' distances.
 * @param {{ id: string, content: Card }[]} cards
 * @param {{ base?: string, progress?: (message: string) => void }} options
 */
export async function nearestStores(cards, { base = '', progress = () => {} } = {}) {
  const position = await currentPosition();
  const cell = geohash(position, 4);
  progress('Fetching the public places of this area…');
  const response = await fetch(`${base}/v1/places/tiles/${cell}`, { credentials: 'omit', referrerPolicy: 'no-referrer' })
    .catch(() => { throw new CofferError('transport', 'cannot reach the server'); });
  if (response.status === 404) return new Map();
  if (!response.ok) throw new CofferError('server', `the server refused the places tile (${response.status})`);
  const tile = parseTile(new Uint8Array(await response.arrayBuffer()), cell);
  return nearest(cards, position, tile);
}
