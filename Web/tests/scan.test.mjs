// The web vault's barcode reader: coffer-scan.wasm (Sources/CofferScan, built by scripts/build-wasm.sh) reads back
// what the web vault's encoder draws, for every symbology, through the page's own loader (app/js/scan.js); its
// answer is parsed strictly; a picture of noise gives nothing; luminance is weighted as the CLI's PNG decoder does.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { utf8 } from '../app/js/bytes.js';
import { encode, load } from '../app/js/barcode.js';
import { loadReader, luminance, parseAnswer, scanPixels } from '../app/js/scan.js';
import { root } from './support.mjs';

globalThis.crypto ??= (await import('node:crypto')).webcrypto;
const encoder = await load(readFileSync(join(root, 'Web/app/coffer-barcode.wasm')));
const reader = await loadReader(readFileSync(join(root, 'Web/app/coffer-scan.wasm')));

/** The encoder's module grid drawn at `scale` pixels a module, black on white, with `margin` white pixels around. */
function render(grid, scale = 3, margin = 12) {
  const width = grid.width * scale + 2 * margin;
  const height = grid.height * scale + 2 * margin;
  const grey = new Uint8Array(width * height).fill(255);
  for (let y = 0; y < grid.height * scale; y++) {
    for (let x = 0; x < grid.width * scale; x++) {
      if (grid.modules[Math.floor(y / scale) * grid.width + Math.floor(x / scale)]) grey[(y + margin) * width + x + margin] = 0;
    }
  }
  return { grey, width, height };
}

// What the card holds, and what the reader gives back (EAN and UPC with their check digit, as the CLI stores them).
const CASES = [
  ['qr', 'otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub', null],
  ['code128', 'COFFER-LOYALTY-0042', null],
  ['gs1_128', '010950110153000310ABC', null],
  ['ean13', '400638133393', '4006381333931'],
  ['ean8', '9638507', '96385074'],
  ['upc_a', '03600029145', '036000291452'],
  ['upc_e', '0425261', '04252614'],
  ['code39', 'COFFER-42', null],
  ['itf', '12345678', null],
  ['itf14', '1234567890123', '12345678901231'],
  ['codabar', 'A40156B', null],
  ['pdf417', 'Coffer PDF417 member 0042', null],
  ['aztec', 'Coffer Aztec boarding pass 0042', null],
  ['datamatrix', 'Coffer Data Matrix 0042', null],
  ['gs1_datamatrix', '0109501101530003\u001d10ABC', null],
];

test('every symbology the encoder draws is read back, payload byte for byte', () => {
  for (const [symbology, payload, read] of CASES) {
    const grid = encode(encoder, symbology, utf8(payload), 'utf-8');
    const { grey, width, height } = render(grid);
    const { found, refused } = scanPixels(reader, grey, width, height, false);
    assert.deepEqual(refused, [], symbology);
    assert.equal(found.length, 1, `${symbology}: ${JSON.stringify(found)}`);
    assert.equal(found[0].symbology, symbology);
    assert.deepEqual([...found[0].payload], [...utf8(read ?? payload)], symbology);
  }
});

test('a camera frame stops at its first symbol; a photo gives every symbol in it', () => {
  const first = render(encode(encoder, 'qr', utf8('first'), 'utf-8'), 3, 12);
  const second = render(encode(encoder, 'datamatrix', utf8('second'), 'utf-8'), 3, 12);
  const width = first.width + second.width;
  const height = Math.max(first.height, second.height);
  const grey = new Uint8Array(width * height).fill(255);
  for (let y = 0; y < height; y++) {
    if (y < first.height) grey.set(first.grey.subarray(y * first.width, (y + 1) * first.width), y * width);
    if (y < second.height) grey.set(second.grey.subarray(y * second.width, (y + 1) * second.width), y * width + first.width);
  }
  assert.equal(scanPixels(reader, grey, width, height, false).found.length, 2);
  assert.equal(scanPixels(reader, grey, width, height, true).found.length, 1);
});

test('noise, a blank picture and a picture of no size give nothing, and no size is refused', () => {
  let state = 7;
  const noise = new Uint8Array(640 * 480).map(() => (state = (state * 1103515245 + 12345) >>> 0) >>> 24);
  assert.deepEqual(scanPixels(reader, noise, 640, 480, false), { found: [], refused: [] });
  assert.deepEqual(scanPixels(reader, new Uint8Array(320 * 240).fill(255), 320, 240, true), { found: [], refused: [] });
  assert.throws(() => scanPixels(reader, new Uint8Array(1), 0, 1, false), /no pixels/);
});

test('the answer is parsed strictly: records in order, and nothing missing or left over', () => {
  // 'qr' carrying 'hi', then an 'aztec' part whose name claims more bytes than there are.
  const overrun = new Uint8Array([0, 2, 113, 114, 2, 0, 0, 0, 104, 105, 1, 12, 97, 122, 116, 101, 99, 2, 0, 0, 0]);
  assert.throws(() => parseAnswer(overrun, 2), /malformed/);
  const good = new Uint8Array([0, 2, 113, 114, 2, 0, 0, 0, 104, 105, 1, 5, 97, 122, 116, 101, 99, 2, 0, 0, 0]);
  assert.deepEqual(parseAnswer(good, 2), {
    found: [{ symbology: 'qr', payload: new Uint8Array([104, 105]) }],
    refused: [{ symbology: 'aztec', index: 2, total: null }],
  });
  assert.throws(() => parseAnswer(good, 1), /malformed/);
  assert.throws(() => parseAnswer(good.subarray(0, good.length - 1), 2), /malformed/);
  assert.throws(() => parseAnswer(new Uint8Array([9, 0]), 1), /malformed/);
});

test('luminance weighs red, green and blue as the CLI does, and reads transparency as white', () => {
  const rgba = new Uint8Array([255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 10, 20, 30, 255, 0, 0, 0, 0, 0, 0, 0, 128]);
  assert.deepEqual([...luminance(rgba)], [76, 150, 29, 18, 255, 127]);
});
