// `otpauth://` and `steam://` URIs and bare base32 secrets, read by the rules of the CLI's parser
// (Sources/CofferOTP/OTPToken.swift, Base32.swift): the label split at its last colon, the issuer parameter first,
// known parameters at most once, Steam's fixed values, lenient base32. Errors name the rule, never the URI.
import { CofferError, text } from './bytes.js';

const MAXIMUM_URI = 4096;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const KNOWN = new Set(['secret', 'issuer', 'algorithm', 'digits', 'period', 'counter', 'encoder']);

function refuse(rule) {
  return new CofferError('otpauth', `the token ${rule}`);
}

/** Base32 as authenticators issue it: any case; spaces, tabs, line breaks and `-` ignored; `=` only at the end. */
export function base32(value) {
  const out = [];
  let buffer = 0;
  let bits = 0;
  let padding = false;
  for (const c of value) {
    if (' \t\n\r-'.includes(c)) continue;
    if (c === '=') {
      padding = true;
      continue;
    }
    const digit = ALPHABET.indexOf(c.toUpperCase());
    if (digit < 0 || c.length !== 1 || c.charCodeAt(0) > 0x7f) throw refuse('secret is not base32 (A–Z and 2–7)');
    if (padding) throw refuse('secret continues after = padding');
    buffer = ((buffer << 5) | digit) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((buffer >> bits) & 0xff);
    }
  }
  return Uint8Array.from(out);
}

/** Percent-decoding to UTF-8 text; `+` is a space in query values only. */
function percentDecode(value, plusIsSpace) {
  const bytes = [];
  const source = new TextEncoder().encode(value);
  for (let i = 0; i < source.length; i++) {
    const byte = source[i];
    if (byte === 0x25) {
      const hex = String.fromCharCode(source[i + 1] ?? 0, source[i + 2] ?? 0);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw refuse('URI is malformed');
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(plusIsSpace && byte === 0x2b ? 0x20 : byte);
    }
  }
  try {
    return text(Uint8Array.from(bytes));
  } catch {
    throw refuse('URI is malformed');
  }
}

function decimal(value, rule) {
  if (!/^[0-9]+$/.test(value) || value.length > 19) throw refuse(rule);
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw refuse(rule);
  return number;
}

function secretFrom(value) {
  if (!/[^ \t\n\r-]/.test(value)) throw refuse('has no secret');
  return base32(value);
}

/** What the CLI's OTPParameters accepts: a secret of 10 to 1024 bytes, 6 to 8 digits, a period of 1 s to a day. */
function checkParameters(token) {
  if (token.secret.length < 10) throw refuse('secret is shorter than 10 bytes (80 bits)');
  if (token.secret.length > 1024) throw refuse('secret is longer than 1024 bytes');
  if (token.type !== 'steam' && (token.digits < 6 || token.digits > 8)) throw refuse('digits are not 6 to 8');
  if (token.type === 'totp' && (token.period < 1 || token.period > 86_400)) throw refuse('period is not 1 to 86,400 seconds');
}

/** The label split at its last colon into issuer and account, both trimmed (an empty issuer is none). */
export function splitLabel(label) {
  const at = label.lastIndexOf(':');
  if (at < 0) return { issuer: null, account: label.trim() };
  const issuer = label.slice(0, at).trim();
  return { issuer: issuer || null, account: label.slice(at + 1).trim() };
}

/**
 * A token from an `otpauth://` or `steam://` URI: `{ issuer, account, type, secret, algorithm, digits, period,
 * counter }` (issuer null when the URI names none).
 */
export function parseURI(uri) {
  if (new TextEncoder().encode(uri).length > MAXIMUM_URI) throw refuse(`URI is longer than ${MAXIMUM_URI} bytes`);
  const trimmed = uri.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, '');
  const scheme = trimmed.indexOf(':');
  if (scheme < 0 || trimmed.slice(scheme, scheme + 3) !== '://') throw refuse('URI is malformed');
  const rest = trimmed.slice(scheme + 3);
  switch (trimmed.slice(0, scheme).toLowerCase()) {
    case 'steam': {
      const token = { issuer: null, account: '', type: 'steam', secret: secretFrom(rest), algorithm: 'SHA1', digits: 5, period: 30, counter: null };
      checkParameters(token);
      return token;
    }
    case 'otpauth':
      break;
    default:
      throw refuse('URI is neither otpauth:// nor steam://');
  }
  const question = rest.indexOf('?');
  const path = question < 0 ? rest : rest.slice(0, question);
  const query = question < 0 ? '' : rest.slice(question + 1);
  const slash = path.indexOf('/');
  const type = (slash < 0 ? path : path.slice(0, slash)).toLowerCase();
  const labelText = slash < 0 ? '' : path.slice(slash + 1);
  const values = new Map();
  for (const field of query.split('&').filter(Boolean)) {
    const equals = field.indexOf('=');
    const key = percentDecode(equals < 0 ? field : field.slice(0, equals), true).toLowerCase();
    if (!KNOWN.has(key)) continue;
    if (values.has(key)) throw refuse(`URI gives ${key} twice`);
    values.set(key, percentDecode(equals < 0 ? '' : field.slice(equals + 1), true));
  }
  const steamEncoder = values.get('encoder')?.toLowerCase() === 'steam';
  const algorithmName = values.get('algorithm');
  const algorithm = algorithmName === undefined ? 'SHA1' : { SHA1: 'SHA1', SHA256: 'SHA256', SHA512: 'SHA512' }[algorithmName.toUpperCase()];
  if (!algorithm) throw refuse('algorithm is not SHA1, SHA256 or SHA512');
  const digits = values.has('digits') ? decimal(values.get('digits'), 'digits are not a number') : null;
  const period = values.has('period') ? decimal(values.get('period'), 'period is not a number') : null;
  const token = { issuer: null, account: '', algorithm, digits, period, counter: null };
  if ((type === 'totp' && steamEncoder) || type === 'steam') {
    if (period !== null && period !== 30) throw refuse('period of a Steam token is not 30');
    if (algorithm !== 'SHA1') throw refuse('algorithm of a Steam token is not SHA1');
    if (digits !== null && digits !== 5) throw refuse('digits of a Steam token are not 5');
    Object.assign(token, { type: 'steam', digits: 5, period: 30 });
  } else if (type === 'totp') {
    Object.assign(token, { type: 'totp', digits: digits ?? 6, period: period ?? 30 });
  } else if (type === 'hotp' && !steamEncoder) {
    if (!values.has('counter')) throw refuse('is HOTP without a counter');
    Object.assign(token, { type: 'hotp', digits: digits ?? 6, counter: decimal(values.get('counter'), 'counter is not a number') });
  } else {
    throw refuse('type is not totp, hotp or steam');
  }
  if (!values.has('secret')) throw refuse('has no secret');
  token.secret = secretFrom(values.get('secret'));
  checkParameters(token);
  const label = splitLabel(percentDecode(labelText, false));
  const issuerParameter = values.get('issuer');
  token.issuer = (issuerParameter || label.issuer)?.trim() || null;
  token.account = label.account;
  if (token.account.includes(':')) throw refuse('account holds a colon');
  return token;
}

/** A pasted token: an otpauth or steam URI, or a bare base32 secret (TOTP, SHA1, 6 digits, 30 s). */
export function parseToken(pasted) {
  const value = pasted.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return parseURI(value);
  const token = { issuer: null, account: '', type: 'totp', secret: secretFrom(value), algorithm: 'SHA1', digits: 6, period: 30, counter: null };
  checkParameters(token);
  return token;
}
