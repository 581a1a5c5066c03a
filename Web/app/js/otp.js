// @ts-check
// TOTP (RFC 6238) and Steam Guard codes from a token's decoded content (FORMAT.md §5, kind otp), with WebCrypto's
// HMAC, and HOTP codes for a counter the device has written past first (§5).
import { hmac } from './crypto.js';

/** @typedef {import('./format.js').Token} Token */

/** @type {Record<string, string>} */
const HASHES = { SHA1: 'SHA-1', SHA256: 'SHA-256', SHA512: 'SHA-512' };
const STEAM = '23456789BCDFGHJKMNPQRTVWXY';

/**
 * @param {Token} token
 * @param {number} counter
 */
async function truncated(token, counter) {
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(counter));
  const mac = await hmac(HASHES[token.algorithm], token.secret, message);
  const offset = mac[mac.length - 1] & 0x0f;
  return ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
}

/**
 * Whether a token's code follows the clock (TOTP and Steam); an HOTP code is counted (`hotpCode`).
 * @param {Token} token
 */
export function timeBased(token) {
  return token.type === 'totp' || token.type === 'steam';
}

/**
 * The HOTP code of `counter` (RFC 4226), for a counter the device has already moved past (§5).
 * @param {Token} token
 * @param {number} counter
 */
export async function hotpCode(token, counter) {
  return String((await truncated(token, counter)) % 10 ** token.digits).padStart(token.digits, '0');
}

/**
 * The code at `nowMs` and the seconds it has left: `{ code, remaining, period }`.
 * @param {Token} token a TOTP or Steam token (`timeBased`)
 * @param {number} nowMs
 */
export async function currentCode(token, nowMs) {
  // A TOTP token always has its period (content.js, format.js).
  const period = token.type === 'steam' ? 30 : /** @type {number} */ (token.period);
  const seconds = Math.floor(nowMs / 1000);
  const counter = Math.floor(seconds / period);
  let value = await truncated(token, counter);
  let code = '';
  if (token.type === 'steam') {
    for (let i = 0; i < 5; i++) {
      code += STEAM[value % STEAM.length];
      value = Math.floor(value / STEAM.length);
    }
  } else {
    code = String(value % 10 ** token.digits).padStart(token.digits, '0');
  }
  return { code, remaining: period - (seconds % period), period };
}
