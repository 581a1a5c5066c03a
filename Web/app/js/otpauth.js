// @ts-check
// `otpauth://` and `steam://` URIs and bare base32 secrets, read by the rules of the CLI's parser
// (Sources/CofferOTP/OTPToken.swift, Base32.swift): the label split at its last colon, the issuer parameter first,
// known parameters at most once, Steam's fixed values, lenient base32. Errors name the rule, never the URI.
import { CofferError, fromBase64, text } from './bytes.js';

const MAXIMUM_URI = 4096;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const KNOWN = new Set(['secret', 'issuer', 'algorithm', 'digits', 'period', 'counter', 'encoder']);

/**
 * A token as a URI or a secret gives it (format.js's Token without tags and notes): `issuer` null when it names none,
 * `period` only for TOTP and Steam, `counter` only for HOTP.
 * @typedef {object} ParsedToken
 * @property {string | null} issuer
 * @property {string} account
 * @property {string} type `totp`, `hotp` or `steam`
 * @property {Uint8Array} secret
 * @property {string} algorithm `SHA1`, `SHA256` or `SHA512`
 * @property {number} digits
 * @property {number | null} period
 * @property {number | null} counter
 */

/**
 * A token of a Google Authenticator export: its issuer is text, empty when it has none.
 * @typedef {ParsedToken & { issuer: string }} ExportedToken
 */

/** @param {string} rule */
function refuse(rule) {
  return new CofferError('otpauth', `the token ${rule}`);
}

/**
 * Base32 as authenticators issue it: any case; spaces, tabs, line breaks and `-` ignored; `=` only at the end.
 * @param {string} value
 */
export function base32(value) {
  /** @type {number[]} */
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

/**
 * Percent-decoding to UTF-8 text; `+` is a space in query values only.
 * @param {string} value
 * @param {boolean} plusIsSpace
 */
function percentDecode(value, plusIsSpace) {
  /** @type {number[]} */
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

/**
 * @param {string} value
 * @param {string} rule
 */
function decimal(value, rule) {
  if (!/^[0-9]+$/.test(value) || value.length > 19) throw refuse(rule);
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw refuse(rule);
  return number;
}

/** @param {string} value */
function secretFrom(value) {
  if (!/[^ \t\n\r-]/.test(value)) throw refuse('has no secret');
  return base32(value);
}

/**
 * What the CLI's OTPParameters accepts: a secret of 10 to 1024 bytes, 6 to 8 digits, a period of 1 s to a day.
 * @param {Omit<ParsedToken, 'issuer' | 'account'>} token
 */
function checkParameters(token) {
  if (token.secret.length < 10) throw refuse('secret is shorter than 10 bytes (80 bits)');
  if (token.secret.length > 1024) throw refuse('secret is longer than 1024 bytes');
  if (token.type !== 'steam' && (token.digits < 6 || token.digits > 8)) throw refuse('digits are not 6 to 8');
  // Every TOTP token read here has its period (30 when the URI gives none).
  const period = /** @type {number} */ (token.period);
  if (token.type === 'totp' && (period < 1 || period > 86_400)) throw refuse('period is not 1 to 86,400 seconds');
}

/**
 * The label split at its last colon into issuer and account, both trimmed (an empty issuer is none).
 * @param {string} label
 * @returns {{ issuer: string | null, account: string }}
 */
export function splitLabel(label) {
  const at = label.lastIndexOf(':');
  if (at < 0) return { issuer: null, account: label.trim() };
  const issuer = label.slice(0, at).trim();
  return { issuer: issuer || null, account: label.slice(at + 1).trim() };
}

/**
 * A token from an `otpauth://` or `steam://` URI: `{ issuer, account, type, secret, algorithm, digits, period,
 * counter }` (issuer null when the URI names none).
 * @param {string} uri
 * @returns {ParsedToken}
 */
export function parseURI(uri) {
  if (new TextEncoder().encode(uri).length > MAXIMUM_URI) throw refuse(`URI is longer than ${MAXIMUM_URI} bytes`);
  const trimmed = uri.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, '');
  const scheme = trimmed.indexOf(':');
  if (scheme < 0 || trimmed.slice(scheme, scheme + 3) !== '://') throw refuse('URI is malformed');
  const rest = trimmed.slice(scheme + 3);
  switch (trimmed.slice(0, scheme).toLowerCase()) {
    case 'steam': {
      /** @type {ParsedToken} */
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
  /** @type {Map<string, string>} */
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
  const algorithm = algorithmName === undefined ? 'SHA1'
    : /** @type {Record<string, string | undefined>} */ ({ SHA1: 'SHA1', SHA256: 'SHA256', SHA512: 'SHA512' })[algorithmName.toUpperCase()];
  if (!algorithm) throw refuse('algorithm is not SHA1, SHA256 or SHA512');
  // `get` after `has`: the value is there.
  const digits = values.has('digits') ? decimal(/** @type {string} */ (values.get('digits')), 'digits are not a number') : null;
  const period = values.has('period') ? decimal(/** @type {string} */ (values.get('period')), 'period is not a number') : null;
  // The type, its digits and period, and the secret are set below, before the token is checked or returned.
  const token = /** @type {ParsedToken} */ ({ issuer: null, account: '', algorithm, digits, period, counter: null });
  if ((type === 'totp' && steamEncoder) || type === 'steam') {
    if (period !== null && period !== 30) throw refuse('period of a Steam token is not 30');
    if (algorithm !== 'SHA1') throw refuse('algorithm of a Steam token is not SHA1');
    if (digits !== null && digits !== 5) throw refuse('digits of a Steam token are not 5');
    Object.assign(token, { type: 'steam', digits: 5, period: 30 });
  } else if (type === 'totp') {
    Object.assign(token, { type: 'totp', digits: digits ?? 6, period: period ?? 30 });
  } else if (type === 'hotp' && !steamEncoder) {
    if (!values.has('counter')) throw refuse('is HOTP without a counter');
    Object.assign(token, { type: 'hotp', digits: digits ?? 6,
      counter: decimal(/** @type {string} */ (values.get('counter')), 'counter is not a number') });
  } else {
    throw refuse('type is not totp, hotp or steam');
  }
  if (!values.has('secret')) throw refuse('has no secret');
  token.secret = secretFrom(/** @type {string} */ (values.get('secret')));
  checkParameters(token);
  const label = splitLabel(percentDecode(labelText, false));
  const issuerParameter = values.get('issuer');
  token.issuer = (issuerParameter || label.issuer)?.trim() || null;
  token.account = label.account;
  if (token.account.includes(':')) throw refuse('account holds a colon');
  return token;
}

/**
 * A pasted token: an otpauth or steam URI, or a bare base32 secret (TOTP, SHA1, 6 digits, 30 s).
 * @param {string} pasted
 * @returns {ParsedToken}
 */
export function parseToken(pasted) {
  const value = pasted.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return parseURI(value);
  /** @type {ParsedToken} */
  const token = { issuer: null, account: '', type: 'totp', secret: secretFrom(value), algorithm: 'SHA1', digits: 6, period: 30, counter: null };
  checkParameters(token);
  return token;
}

// Google Authenticator's "Transfer accounts" QR codes, read by the rules of the CLI's importer
// (Sources/CofferInterop/GoogleAuthenticator.swift), checked on the same fixtures.

const MIGRATION_PREFIX = 'otpauth-migration://';
/** A QR code holds at most 2,953 bytes; twice that is not a migration code a camera read. */
const MAXIMUM_MIGRATION_URI = 8192;

/** @param {string | null | undefined} value */
export function isMigrationURI(value) {
  return (value ?? '').trim().toLowerCase().startsWith(MIGRATION_PREFIX);
}

/** The protobuf wire format, bounds-checked: only what MigrationPayload needs. Varints are BigInts (64 bits). */
class ProtobufReader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.position = 0;
  }

  get atEnd() {
    return this.position >= this.bytes.length;
  }

  varint() {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.position >= this.bytes.length) throw new Error('the protobuf data ends inside a field');
      const byte = this.bytes[this.position++];
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return BigInt.asUintN(64, value);
    }
    throw new Error('a protobuf varint is longer than 10 bytes');
  }

  /**
   * The next field as `[number, value]`: a BigInt, a byte array, or null for a skipped fixed-width value.
   * @returns {[bigint, bigint | Uint8Array | null]}
   */
  field() {
    const key = this.varint();
    const number = key >> 3n;
    if (number === 0n) throw new Error('a protobuf field number is 0');
    switch (Number(key & 7n)) {
      case 0: return [number, this.varint()];
      case 1: return [number, this.skip(8)];
      case 2: {
        const length = this.varint();
        if (length > BigInt(this.bytes.length - this.position)) throw new Error('the protobuf data ends inside a field');
        const start = this.position;
        this.position += Number(length);
        return [number, this.bytes.subarray(start, this.position)];
      }
      case 5: return [number, this.skip(4)];
      default: throw new Error('a protobuf field has an unsupported wire type');
    }
  }

  /** @param {number} count */
  skip(count) {
    if (this.bytes.length - this.position < count) throw new Error('the protobuf data ends inside a field');
    this.position += count;
    return null;
  }
}

/** @param {string} uri */
function migrationPayload(uri) {
  const question = uri.indexOf('?');
  if (question < 0) throw refuse('export has no data parameter');
  /** @type {string | null} */
  let value = null;
  for (const field of uri.slice(question + 1).split('&')) {
    if (!field.toLowerCase().startsWith('data=')) continue;
    if (value !== null) throw refuse('export has its data parameter more than once');
    value = field.slice(5);
  }
  if (!value) throw refuse('export has no data parameter');
  let decoded;
  try {
    decoded = percentDecode(value, false);
  } catch {
    throw refuse('export has a bad percent escape');
  }
  // A raw `+` is a base64 digit, and a space is a `+` that something form-decoded; URL-safe digits are allowed.
  let base64 = decoded.replaceAll(' ', '+').replaceAll('-', '+').replaceAll('_', '/');
  while (base64.length % 4 !== 0) base64 += '=';
  try {
    return fromBase64(base64);
  } catch {
    throw refuse('export data is not valid base64');
  }
}

/**
 * "issuer (account)", or whichever exists, or `fallback`: how an entry is named in a problem.
 * @param {string} issuer
 * @param {string} account
 * @param {string} fallback
 */
function entryName(issuer, account, fallback) {
  const [i, a] = [issuer.trim(), account.trim()];
  if (i && a) return `${i} (${a})`;
  return i || a || fallback;
}

/** @param {string | null | undefined} value */
function nonEmpty(value) {
  return value?.trim() || null;
}

/**
 * The importers' naming (OTPImportNaming, OTPImport.splitLabel): a whole label in the account is split; a missing
 * account is the issuer, and a missing issuer stays missing ('').
 * @param {string} issuerText
 * @param {string} accountText
 */
function importedNames(issuerText, accountText) {
  let issuer = nonEmpty(issuerText);
  let account = nonEmpty(accountText);
  if (!account) {
    if (issuer?.includes(':')) {
      const label = splitLabel(issuer);
      [issuer, account] = [label.issuer ?? nonEmpty(label.account), nonEmpty(label.account)];
    }
  } else if (account.includes(':')) {
    const label = splitLabel(account);
    if (!issuer) [issuer, account] = [label.issuer, nonEmpty(label.account)];
    else if (label.issuer?.toLowerCase() === issuer.toLowerCase()) account = nonEmpty(label.account);
  }
  return { issuer: issuer || '', account: account || issuer || '' };
}

/**
 * One OtpParameters message as a token, or the reason there is none (never quoting the secret).
 * @param {MigrationEntry} entry
 * @returns {ExportedToken | string}
 */
function migrationToken(entry) {
  if (entry.damage) return entry.damage;
  if (entry.secret.length === 0) return 'the secret is empty';
  // The enums' values are BigInts; an object's key is their decimal text.
  const algorithm = /** @type {Record<string, string | undefined>} */ ({ 0: 'SHA1', 1: 'SHA1', 2: 'SHA256', 3: 'SHA512' })[String(entry.algorithm)];
  if (entry.algorithm === 4n) return 'MD5 tokens are not supported';
  if (!algorithm) return `unknown algorithm ${entry.algorithm}`;
  const digits = /** @type {Record<string, number | undefined>} */ ({ 0: 6, 1: 6, 2: 8 })[String(entry.digits)];
  if (!digits) return `unknown digit count ${entry.digits}`;
  /** @type {string} */
  let type;
  let counter = null;
  if (entry.type === 0n || entry.type === 2n) type = 'totp';
  else if (entry.type === 1n) {
    type = 'hotp';
    if (BigInt.asIntN(64, entry.counter) < 0n) return 'the HOTP counter is negative';
    if (entry.counter > BigInt(Number.MAX_SAFE_INTEGER)) return 'the HOTP counter is larger than this app can count';
    counter = Number(entry.counter);
  } else return `unknown OTP type ${entry.type}`;
  // The format has no period: Google Authenticator's TOTP is always 30 seconds.
  const token = { type, secret: entry.secret, algorithm, digits, period: type === 'totp' ? 30 : null, counter };
  try {
    checkParameters(token);
  } catch (/** @type {any} */ error) {
    return error.message.replace(/^the token /, 'the ');
  }
  // An empty issuer with a name "issuer:account" is split; a name that repeats the issuer as its prefix loses it.
  const issuer = entry.issuer.trim();
  const parts = entry.name.split(':');
  /** @type {[string, string]} */
  let names = [issuer, entry.name];
  if (!issuer && parts.length === 2) names = /** @type {[string, string]} */ (parts);
  else if (issuer && parts.length === 2 && parts[0].trim() === issuer) names = [issuer, parts[1]];
  return { ...token, ...importedNames(...names) };
}

/**
 * A Google Authenticator export QR code (`otpauth-migration://offline?data=…`, base64 of a protobuf
 * MigrationPayload): `{ tokens, problems, batch }`. `tokens` are as `parseURI` gives them; `problems` are
 * `{ entry, reason }` for entries Coffer cannot hold (MD5, an empty secret, an unknown value) or damage after the
 * entries read; `batch` is `{ index, size }` (1-based) when the export spans several codes. Throws when the URI
 * itself is unreadable.
 * @param {string} uri
 */
export function parseMigration(uri) {
  if (new TextEncoder().encode(uri).length > MAXIMUM_MIGRATION_URI) {
    throw refuse(`export is longer than ${MAXIMUM_MIGRATION_URI} bytes`);
  }
  const trimmed = uri.trim();
  if (!isMigrationURI(trimmed)) throw refuse('export is not an otpauth-migration URI');
  const reader = new ProtobufReader(migrationPayload(trimmed));
  /** @type {MigrationEntry[]} */
  const entries = [];
  /** @type {{ size?: number, index?: number }} */
  const batch = {};
  /** @type {string | null} */
  let damage = null;
  try {
    while (!reader.atEnd) {
      const [number, value] = reader.field();
      if (number === 1n && value instanceof Uint8Array) entries.push(migrationEntry(value));
      // int32 fields: negative values arrive sign-extended to 64 bits.
      else if (number === 3n && typeof value === 'bigint') batch.size = Number(BigInt.asIntN(32, value));
      else if (number === 4n && typeof value === 'bigint') batch.index = Number(BigInt.asIntN(32, value));
    }
  } catch (/** @type {any} */ error) {
    damage = error.message;
  }
  /** @type {ExportedToken[]} */
  const tokens = [];
  /** @type {{ entry: string, reason: string }[]} */
  const problems = [];
  entries.forEach((entry, position) => {
    const read = migrationToken(entry);
    if (typeof read === 'string') {
      problems.push({ entry: entryName(entry.issuer, entry.name, `entry ${position + 1}`), reason: read });
    } else tokens.push(read);
  });
  if (damage) problems.push({ entry: 'export', reason: `the migration data is damaged after ${entries.length} entries: ${damage}` });
  const size = batch.size ?? 1;
  return { tokens, problems, batch: size > 1 ? { index: (batch.index ?? 0) + 1, size } : null };
}

/**
 * One OtpParameters message, its enums and counter as read (BigInts); `damage` names what stopped the reading.
 * @typedef {{ secret: Uint8Array, name: string, issuer: string, algorithm: bigint, digits: bigint, type: bigint,
 *   counter: bigint, damage: string | null }} MigrationEntry
 */

/** @param {Uint8Array} bytes */
function migrationEntry(bytes) {
  /** @type {MigrationEntry} */
  const entry = { secret: new Uint8Array(0), name: '', issuer: '', algorithm: 0n, digits: 0n, type: 0n, counter: 0n, damage: null };
  const reader = new ProtobufReader(bytes);
  const decoder = new TextDecoder();
  try {
    while (!reader.atEnd) {
      const [number, value] = reader.field();
      const isBytes = value instanceof Uint8Array;
      if (number === 1n && isBytes) entry.secret = Uint8Array.from(value);
      else if (number === 2n && isBytes) entry.name = decoder.decode(value);
      else if (number === 3n && isBytes) entry.issuer = decoder.decode(value);
      else if (typeof value === 'bigint' && number >= 4n && number <= 7n) {
        entry[/** @type {'algorithm' | 'digits' | 'type' | 'counter'} */ (['algorithm', 'digits', 'type', 'counter'][Number(number) - 4])] = value;
      }
    }
  } catch (/** @type {any} */ error) {
    entry.damage = error.message;
  }
  return entry;
}
