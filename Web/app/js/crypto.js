// @ts-check
// The primitives FORMAT.md names, from WebCrypto (the browser's or Node's `globalThis.crypto`): SHA-256, HMAC,
// HKDF-SHA256, PBKDF2-HMAC-SHA256 and AES-256-GCM. scrypt is not in WebCrypto: its two PBKDF2 passes are, and ROMix
// (RFC 7914 §5, Salsa20/8 BlockMix) is written out below.
import { CofferError } from './bytes.js';

const subtle = globalThis.crypto.subtle;

/** @param {Uint8Array} bytes */
export async function sha256(bytes) {
  return new Uint8Array(await subtle.digest('SHA-256', bytes));
}

/**
 * @param {string} hash `SHA-1`, `SHA-256` or `SHA-512`
 * @param {Uint8Array} key
 * @param {Uint8Array} message
 */
export async function hmac(hash, key, message) {
  const imported = await subtle.importKey('raw', key, { name: 'HMAC', hash }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', imported, message));
}

/**
 * HKDF-SHA256 (RFC 5869), 32 bytes unless told.
 * @param {Uint8Array} ikm
 * @param {Uint8Array} salt
 * @param {Uint8Array} info
 */
export async function hkdf(ikm, salt, info, length = 32) {
  const key = await subtle.importKey('raw', ikm, 'HKDF', false, ['deriveBits']);
  const bits = await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info }, key, length * 8);
  return new Uint8Array(bits);
}

/**
 * @param {Uint8Array} password
 * @param {Uint8Array} salt
 * @param {number} iterations
 */
export async function pbkdf2(password, salt, iterations, length = 32) {
  const key = await subtle.importKey('raw', password, 'PBKDF2', false, ['deriveBits']);
  const bits = await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, length * 8);
  return new Uint8Array(bits);
}

/**
 * A 32-byte key as a WebCrypto AES-GCM key, for opening many boxes under one key without importing it each time.
 * @param {Uint8Array} key
 */
export function aesKey(key) {
  return subtle.importKey('raw', key, 'AES-GCM', false, ['decrypt']);
}

/**
 * Opens `nonce (12) ‖ ciphertext ‖ tag (16)` under a 32-byte key (or one made by `aesKey`) with `ad`; a box that does
 * not open is refused.
 * @param {Uint8Array | CryptoKey} key
 * @param {Uint8Array} box
 * @param {Uint8Array} ad
 */
export async function openBox(key, box, ad, what = 'box') {
  if (box.length < 28) throw new CofferError('box', `${what} is too short`);
  const imported = key instanceof Uint8Array ? await aesKey(key) : key;
  try {
    const plain = await subtle.decrypt(
      { name: 'AES-GCM', iv: box.subarray(0, 12), additionalData: ad, tagLength: 128 }, imported, box.subarray(12));
    return new Uint8Array(plain);
  } catch {
    throw new CofferError('box', `${what} does not open`);
  }
}

/**
 * Seals `plain` under a 32-byte key with `ad`: `nonce (12, random) ‖ ciphertext ‖ tag (16)` (FORMAT.md §4).
 * @param {Uint8Array} key
 * @param {Uint8Array} plain
 * @param {Uint8Array} ad
 */
export async function sealBox(key, plain, ad) {
  const nonce = globalThis.crypto.getRandomValues(new Uint8Array(12));
  const imported = await subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt']);
  const sealed = new Uint8Array(await subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: ad, tagLength: 128 },
    imported, plain));
  const box = new Uint8Array(12 + sealed.length);
  box.set(nonce);
  box.set(sealed, 12);
  return box;
}

// scrypt (RFC 7914): B = PBKDF2(P, S, 1, 128·r·p); each 128·r-byte block through ROMix; DK = PBKDF2(P, B, 1, dkLen).

/** @param {Int32Array} b */
function salsa208(b) {
  const x = b.slice();
  /** @type {(a: number, n: number) => number} */
  const r = (a, n) => (a << n) | (a >>> (32 - n));
  for (let i = 0; i < 8; i += 2) {
    x[4] ^= r(x[0] + x[12], 7); x[8] ^= r(x[4] + x[0], 9); x[12] ^= r(x[8] + x[4], 13); x[0] ^= r(x[12] + x[8], 18);
    x[9] ^= r(x[5] + x[1], 7); x[13] ^= r(x[9] + x[5], 9); x[1] ^= r(x[13] + x[9], 13); x[5] ^= r(x[1] + x[13], 18);
    x[14] ^= r(x[10] + x[6], 7); x[2] ^= r(x[14] + x[10], 9); x[6] ^= r(x[2] + x[14], 13); x[10] ^= r(x[6] + x[2], 18);
    x[3] ^= r(x[15] + x[11], 7); x[7] ^= r(x[3] + x[15], 9); x[11] ^= r(x[7] + x[3], 13); x[15] ^= r(x[11] + x[7], 18);
    x[1] ^= r(x[0] + x[3], 7); x[2] ^= r(x[1] + x[0], 9); x[3] ^= r(x[2] + x[1], 13); x[0] ^= r(x[3] + x[2], 18);
    x[6] ^= r(x[5] + x[4], 7); x[7] ^= r(x[6] + x[5], 9); x[4] ^= r(x[7] + x[6], 13); x[5] ^= r(x[4] + x[7], 18);
    x[11] ^= r(x[10] + x[9], 7); x[8] ^= r(x[11] + x[10], 9); x[9] ^= r(x[8] + x[11], 13); x[10] ^= r(x[9] + x[8], 18);
    x[12] ^= r(x[15] + x[14], 7); x[13] ^= r(x[12] + x[15], 9); x[14] ^= r(x[13] + x[12], 13); x[15] ^= r(x[14] + x[13], 18);
  }
  for (let i = 0; i < 16; i++) b[i] = (b[i] + x[i]) | 0;
}

/**
 * BlockMix with Salsa20/8 on 2r 64-byte blocks (as 32-bit little-endian words) from `input` into `output`.
 * @param {Int32Array} input
 * @param {Int32Array} output
 * @param {number} r
 */
function blockMix(input, output, r) {
  const x = input.slice((2 * r - 1) * 16, 2 * r * 16);
  for (let i = 0; i < 2 * r; i++) {
    for (let j = 0; j < 16; j++) x[j] ^= input[i * 16 + j];
    salsa208(x);
    // Even blocks go to the first half, odd ones to the second (RFC 7914 §4).
    output.set(x, ((i & 1) * r + (i >> 1)) * 16);
  }
}

/**
 * @param {DataView} block
 * @param {number} r
 * @param {number} n
 */
function romix(block, r, n) {
  const words = 32 * r;
  const v = new Int32Array(words * n);
  let x = new Int32Array(words);
  let y = new Int32Array(words);
  for (let i = 0; i < words; i++) x[i] = block.getInt32(i * 4, true);
  for (let i = 0; i < n; i++) {
    v.set(x, i * words);
    blockMix(x, y, r);
    [x, y] = [y, x];
  }
  for (let i = 0; i < n; i++) {
    const j = x[(2 * r - 1) * 16] & (n - 1);
    for (let k = 0; k < words; k++) x[k] ^= v[j * words + k];
    blockMix(x, y, r);
    [x, y] = [y, x];
  }
  for (let i = 0; i < words; i++) block.setInt32(i * 4, x[i], true);
}

/**
 * scrypt(password, salt, N = 2^logN, r, p), 32 bytes unless told; bounds are the caller's (FORMAT.md §2).
 * @param {Uint8Array} password
 * @param {Uint8Array} salt
 * @param {number} logN
 * @param {number} r
 * @param {number} p
 */
export async function scrypt(password, salt, logN, r, p, length = 32) {
  const b = await pbkdf2(password, salt, 1, 128 * r * p);
  for (let i = 0; i < p; i++) romix(new DataView(b.buffer, i * 128 * r, 128 * r), r, 2 ** logN);
  return pbkdf2(password, b, 1, length);
}
