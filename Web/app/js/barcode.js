// Barcodes drawn by Coffer's own encoder (Sources/CofferBarcode) compiled to WebAssembly by scripts/build-wasm.sh.
// `load` instantiates it once; `encode` returns the module grid that the native renderers draw, quiet zone included.
import { CofferError, text, utf8 } from './bytes.js';

/**
 * The exports of one of the app's Embedded Swift modules (the encoder here; the reader, scan.js), from `source` (a
 * Response, for streaming, or the module's bytes).
 */
export async function load(source) {
  const imports = { env: { random: (pointer, count) => globalThis.crypto.getRandomValues(new Uint8Array(memory().buffer, pointer, count)) } };
  let instance;
  const memory = () => instance.exports.memory;
  const result = source instanceof Uint8Array || source instanceof ArrayBuffer
    ? await WebAssembly.instantiate(source, imports)
    : await WebAssembly.instantiateStreaming(source, imports);
  instance = result.instance;
  return instance.exports;
}

function copyIn(exports, bytes) {
  const pointer = exports.coffer_alloc(bytes.length);
  new Uint8Array(exports.memory.buffer, pointer, bytes.length).set(bytes);
  return pointer;
}

/**
 * `{ width, height, modules }` (one byte per module, row-major, 1 dark) for `payload` as `symbology` (the vault's
 * name), labelled UTF-8 when `charset` is `utf-8` as the native `Card.barcode()` does; a refusal throws its reason.
 */
export function encode(exports, symbology, payload, charset) {
  const name = utf8(symbology);
  const namePointer = copyIn(exports, name);
  const payloadPointer = copyIn(exports, payload);
  try {
    const status = exports.coffer_barcode(namePointer, name.length, payloadPointer, payload.length, charset === 'utf-8' ? 1 : 0);
    const answer = new Uint8Array(exports.memory.buffer, exports.coffer_answer(), exports.coffer_answer_count()).slice();
    if (status !== 0) throw new CofferError('barcode', `the barcode cannot be drawn: ${text(answer)}`);
    return { width: exports.coffer_answer_width(), height: exports.coffer_answer_height(), modules: answer };
  } finally {
    exports.coffer_free(namePointer);
    release(exports, payloadPointer, payload.length);
  }
}

/** Frees a copy of a payload after wiping it: the module's memory outlives a lock. */
function release(exports, pointer, length) {
  new Uint8Array(exports.memory.buffer, pointer, length).fill(0);
  exports.coffer_free(pointer);
}

/**
 * The digits an EAN-13, EAN-8, UPC-A or UPC-E symbol carries for `payload`, check digit included (the number printed
 * under the bars), as the native `Symbology.digitsWithCheckDigit`; null for other symbologies or without the encoder.
 */
export function digits(exports, symbology, payload) {
  if (!exports || !['ean13', 'ean8', 'upc_a', 'upc_e'].includes(symbology)) return null;
  const name = utf8(symbology);
  const namePointer = copyIn(exports, name);
  const payloadPointer = copyIn(exports, payload);
  try {
    if (exports.coffer_digits(namePointer, name.length, payloadPointer, payload.length) !== 0) return null;
    return text(new Uint8Array(exports.memory.buffer, exports.coffer_answer(), exports.coffer_answer_count()).slice());
  } finally {
    exports.coffer_free(namePointer);
    release(exports, payloadPointer, payload.length);
  }
}
