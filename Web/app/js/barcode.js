// @ts-check
// Barcodes drawn by Coffer's own encoder (Sources/CofferBarcode) compiled to WebAssembly by scripts/build-wasm.sh.
// `load` instantiates it once; `encode` returns the module grid that the native renderers draw, quiet zone included.
import { CofferError, text, utf8 } from './bytes.js';

/**
 * The encoder's exports (Web/wasm/BarcodeExports.swift): pointers into `memory`, counts in bytes; the answer (a grid,
 * digits or a reason) stays in the module until the next call.
 * @typedef {object} EncoderExports
 * @property {WebAssembly.Memory} memory
 * @property {(count: number) => number} coffer_alloc
 * @property {(pointer: number) => void} coffer_free
 * @property {(name: number, nameCount: number, payload: number, payloadCount: number, utf8: number) => number}
 *   coffer_barcode 0, or a refusal whose reason is the answer
 * @property {(name: number, nameCount: number, payload: number, payloadCount: number) => number} coffer_digits
 * @property {() => number} coffer_answer
 * @property {() => number} coffer_answer_count
 * @property {() => number} coffer_answer_width
 * @property {() => number} coffer_answer_height
 */

/**
 * The exports of one of the app's Embedded Swift modules (the encoder here; the reader, scan.js), from `source` (a
 * Response, for streaming, or the module's bytes). `Exports` describes them: the encoder's unless told.
 * @template [Exports=EncoderExports]
 * @param {Uint8Array | ArrayBuffer | Response | PromiseLike<Response>} source
 * @returns {Promise<Exports>}
 */
export async function load(source) {
  const imports = {
    env: {
      /** @type {(pointer: number, count: number) => Uint8Array} */
      random: (pointer, count) => globalThis.crypto.getRandomValues(new Uint8Array(memory().buffer, pointer, count)),
    },
  };
  /** @type {WebAssembly.Instance} */
  let instance;
  const memory = () => /** @type {WebAssembly.Memory} */ (instance.exports.memory);
  const result = source instanceof Uint8Array || source instanceof ArrayBuffer
    ? await WebAssembly.instantiate(source, imports)
    : await WebAssembly.instantiateStreaming(source, imports);
  instance = result.instance;
  return /** @type {Exports} */ (/** @type {unknown} */ (instance.exports));
}

/**
 * @param {{ memory: WebAssembly.Memory, coffer_alloc: (count: number) => number }} exports
 * @param {Uint8Array} bytes
 */
function copyIn(exports, bytes) {
  const pointer = exports.coffer_alloc(bytes.length);
  new Uint8Array(exports.memory.buffer, pointer, bytes.length).set(bytes);
  return pointer;
}

/**
 * `{ width, height, modules }` (one byte per module, row-major, 1 dark) for `payload` as `symbology` (the vault's
 * name), labelled UTF-8 when `charset` is `utf-8` as the native `Card.barcode()` does; a refusal throws its reason.
 * @param {EncoderExports} exports
 * @param {string} symbology
 * @param {Uint8Array} payload
 * @param {string} charset
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

/**
 * Frees a copy of a payload after wiping it: the module's memory outlives a lock.
 * @param {EncoderExports} exports
 * @param {number} pointer
 * @param {number} length
 */
function release(exports, pointer, length) {
  new Uint8Array(exports.memory.buffer, pointer, length).fill(0);
  exports.coffer_free(pointer);
}

/**
 * The digits an EAN-13, EAN-8, UPC-A or UPC-E symbol carries for `payload`, check digit included (the number printed
 * under the bars), as the native `Symbology.digitsWithCheckDigit`; null for other symbologies or without the encoder.
 * @param {EncoderExports | null} exports
 * @param {string} symbology
 * @param {Uint8Array} payload
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
