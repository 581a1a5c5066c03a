#!/usr/bin/env node
// Encodes barcodes with the WebAssembly build of CofferBarcode through the web vault's own loader (app/js/barcode.js),
// for the Swift tests that compare it with the native encoder. Usage: node wasm_encode.mjs WASM < requests.json, where
// each request is {"symbology", "payload" (hex), "charset"}; prints [{"width", "height", "modules" (hex), "digits"} |
// {"error"}], `digits` being what the page prints under an EAN or UPC symbol (null for others).
import { readFileSync } from 'node:fs';
import { fromHex, hex } from '../app/js/bytes.js';
import { digits, encode, load } from '../app/js/barcode.js';

// Node 18 (Debian 12's) has WebCrypto only as a module; the loader seeds Swift's hashing from `globalThis.crypto`.
globalThis.crypto ??= (await import('node:crypto')).webcrypto;
const exports = await load(readFileSync(process.argv[2]));
const requests = JSON.parse(readFileSync(0, 'utf8'));
const answers = requests.map(({ symbology, payload, charset }) => {
  try {
    const started = performance.now();
    const grid = encode(exports, symbology, fromHex(payload), charset);
    const ms = performance.now() - started;
    return { width: grid.width, height: grid.height, modules: hex(grid.modules), ms,
      digits: digits(exports, symbology, fromHex(payload)) };
  } catch (error) {
    return { error: error.message };
  }
});
process.stdout.write(JSON.stringify(answers));
