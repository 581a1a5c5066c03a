// @ts-check
// Byte helpers for the web vault's reader of docs/FORMAT.md. Every value that crosses the wire or enters a box is a
// Uint8Array; strings become bytes only through the strict UTF-8 coder below.

/** A reader or verifier refusal. `code` is stable (tests and the app match on it); `message` never holds a secret. */
export class CofferError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'CofferError';
    this.code = code;
  }
}

const strictUTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoderUTF8 = new TextEncoder();

/** @param {string} text */
export function utf8(text) {
  return encoderUTF8.encode(text);
}

/**
 * UTF-8 text of `bytes`; invalid UTF-8 is refused rather than replaced.
 * @param {Uint8Array} bytes
 */
export function text(bytes, what = 'text') {
  try {
    return strictUTF8.decode(bytes);
  } catch {
    throw new CofferError('malformed', `${what} is not UTF-8`);
  }
}

/** @param {Uint8Array[]} parts */
export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** @param {number} value */
export function u8(value) {
  return Uint8Array.of(value);
}

/** @param {number} value */
export function u32(value) {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value);
  return out;
}

/**
 * A u64 big-endian from a non-negative safe integer or a BigInt.
 * @param {number | bigint} value
 */
export function u64(value) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value));
  return out;
}

/**
 * @param {Uint8Array} bytes
 * @param {number} offset
 */
export function readU32(bytes, offset) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset);
}

/**
 * @param {Uint8Array} bytes
 * @param {number} offset
 */
export function readU64(bytes, offset) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset);
}

/** @param {ArrayLike<number>} bytes */
export function hex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** @param {string} value */
export function fromHex(value) {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(value)) throw new CofferError('malformed', 'not hex');
  const out = new Uint8Array(value.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(value.substr(i * 2, 2), 16);
  return out;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUES = new Map(Array.from(BASE64, (c, i) => [c, i]));

/**
 * Standard base64 with padding (FORMAT.md §8.2); anything else is refused.
 * @param {unknown} value
 */
export function fromBase64(value, what = 'base64') {
  if (typeof value !== 'string' || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)) {
    throw new CofferError('malformed', `${what} is not base64`);
  }
  const body = value.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((body.length * 6) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const c of body) {
    // Every character is one of BASE64's: the pattern above let only those through.
    buffer = (buffer << 6) | /** @type {number} */ (BASE64_VALUES.get(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (buffer >> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) throw new CofferError('malformed', `${what} is not canonical base64`);
  return out;
}

/** @param {Uint8Array} bytes */
export function toBase64(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += BASE64[(n >> 18) & 63] + BASE64[(n >> 12) & 63];
    out += i + 1 < bytes.length ? BASE64[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.length ? BASE64[n & 63] : '=';
  }
  return out;
}

/**
 * The 16 raw bytes of a hyphenated UUID (the wire's text form; FORMAT.md binds the bytes).
 * @param {unknown} value
 */
export function uuidBytes(value) {
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value)) {
    throw new CofferError('malformed', 'not a UUID');
  }
  return fromHex(value.replaceAll('-', ''));
}

/** @param {Uint8Array} bytes */
export function uuidText(bytes) {
  const h = hex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Equality without an early exit, for tags and commitments.
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 */
export function equal(a, b) {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

/**
 * Orders byte strings as FORMAT.md §8.6 orders leaves: by the ids' bytes.
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 */
export function compareBytes(a, b) {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Crockford base32, 5 bits a character, most significant first (FORMAT.md §2, §8.6).
 * @param {Uint8Array} bytes
 */
export function crockford(bytes) {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += CROCKFORD[(buffer << (5 - bits)) & 31];
  return out;
}
