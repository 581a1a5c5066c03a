// @ts-check
// Item content written in the browser (FORMAT.md §5), with the rules the CLI's model applies before it seals anything
// (Sources/CofferModel): names trimmed and bounded, tags de-duplicated, card payloads drawable, token parameters in
// range. Fields are written in the CLI's order, and fields this writer does not know (a later version's) are kept
// as they were read, so an edit here never drops what another device wrote.
import { CofferError, concat, u64, u8, utf8 } from './bytes.js';
import { SYMBOLOGIES } from './format.js';

/**
 * @typedef {import('./format.js').Card} Card
 * @typedef {import('./format.js').Token} Token
 * @typedef {import('./format.js').Credential} Credential
 * @typedef {import('./format.js').Note} Note
 * @typedef {import('./format.js').Field} Field
 */

/**
 * Content as a form gives it: its kind's fields, and the fields this reader does not know kept from the item read;
 * `created` when the item exists (the device stamps a new one).
 * @template C
 * @typedef {C & { unknown: Field[], created?: number }} Draft
 */

/**
 * Content this page writes (every kind but signing keys, which only the CLI makes); the device stamps `created`.
 * @typedef {(Card | Token | Credential | Note) & { unknown?: Field[], created?: number }} Writable
 */

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Characters as Swift counts them (grapheme clusters).
 * @param {string} text
 */
function length(text) {
  let count = 0;
  for (const _ of graphemes.segment(text)) count++;
  return count;
}

/**
 * @param {string} field
 * @param {string} rule
 */
function invalid(field, rule) {
  return new CofferError('invalid', `${field} ${rule}`);
}

/**
 * A required name: trimmed, 1 to `limit` characters, no control characters.
 * @param {unknown} value
 */
export function name(value, field = 'name', limit = 200) {
  const trimmed = String(value ?? '').trim();
  if (!trimmed) throw invalid(field, 'is empty');
  if (length(trimmed) > limit) throw invalid(field, `is longer than ${limit} characters`);
  if (/\p{Cc}/u.test(trimmed)) throw invalid(field, 'holds a control character');
  return trimmed;
}

/**
 * @param {string | null | undefined} value
 * @param {string} field
 * @param {number} limit
 */
function optionalText(value, field, limit) {
  if (value === null || value === undefined || value === '') return null;
  if (length(value) > limit) throw invalid(field, `is longer than ${limit} characters`);
  return value;
}

/**
 * Tags and network ids: trimmed, de-duplicated in order, at most 50 of 64 characters (networks lower-cased).
 * @param {Iterable<unknown> | null | undefined} values
 * @param {string} field
 */
export function labels(values, field, { lowercase = false } = {}) {
  /** @type {string[]} */
  const result = [];
  for (const value of values ?? []) {
    let label = name(value, field, 64);
    if (lowercase) label = label.toLowerCase();
    if (!result.includes(label)) result.push(label);
  }
  if (result.length > 50) throw invalid(field, 'hold more than 50 entries');
  return result;
}

class FieldWriter {
  /** @param {number} [version] */
  constructor(version) {
    /** @type {Uint8Array[]} */
    this.parts = version === undefined ? [] : [u8(version)];
  }

  /**
   * @param {number} tag
   * @param {Uint8Array} value
   */
  bytes(tag, value) {
    const header = [tag];
    let remaining = value.length;
    do {
      const low = remaining & 0x7f;
      remaining = Math.floor(remaining / 128);
      header.push(remaining ? low | 0x80 : low);
    } while (remaining);
    this.parts.push(Uint8Array.from(header), value);
  }

  /**
   * @param {number} tag
   * @param {string | null | undefined} value
   */
  text(tag, value) {
    if (value !== null && value !== undefined) this.bytes(tag, utf8(value));
  }

  /**
   * @param {number} tag
   * @param {string[]} values
   */
  texts(tag, values) {
    for (const value of values) this.text(tag, value);
  }

  /**
   * @param {number} tag
   * @param {number} value
   */
  integer(tag, value) {
    this.bytes(tag, u64(BigInt.asUintN(64, BigInt(value))));
  }

  /**
   * @param {number} tag
   * @param {number | null | undefined} value
   */
  time(tag, value) {
    if (value !== null && value !== undefined) this.integer(tag, value);
  }

  /**
   * @param {number} tag
   * @param {boolean} value
   */
  flag(tag, value) {
    if (value) this.bytes(tag, u8(1));
  }

  /**
   * @param {number} tag
   * @param {(writer: FieldWriter) => void} build
   */
  group(tag, build) {
    const nested = new FieldWriter();
    build(nested);
    this.bytes(tag, nested.done());
  }

  done() {
    return concat(...this.parts);
  }
}

/**
 * Bytes of a text payload in its charset; ISO-8859-1 holds only U+0000–U+00FF.
 * @param {string} text
 * @param {string} charset
 */
export function payloadBytes(text, charset) {
  if (charset === 'utf-8') return utf8(text);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0xff) throw invalid('payload', 'holds a character ISO-8859-1 cannot carry');
    bytes[i] = code;
  }
  return bytes;
}

const strictUTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A card checked as the CLI checks it. `drawable(symbology, payload, charset)` throws when the encoder refuses the
 * payload (the page passes its WebAssembly encoder).
 * @param {Draft<Card>} card
 * @param {(symbology: string, payload: Uint8Array, charset: string) => void} drawable
 * @returns {Draft<Card>}
 */
export function checkCard(card, drawable) {
  const checked = { ...card, name: name(card.name) };
  if (checked.symbology !== null && !SYMBOLOGIES.includes(checked.symbology)) throw invalid('symbology', 'is not known');
  if (!['utf-8', 'iso-8859-1', 'binary'].includes(checked.payload_charset)) throw invalid('payload charset', 'is not known');
  if (!checked.payload?.length) throw invalid('payload', 'is empty');
  if (checked.payload.length > 4096) throw invalid('payload', 'is longer than 4096 bytes');
  if (checked.payload_charset === 'utf-8') {
    try {
      strictUTF8.decode(checked.payload);
    } catch {
      throw invalid('payload', 'is not valid UTF-8 (use the binary charset)');
    }
  }
  checked.card_number = optionalText(card.card_number, 'card number', 200);
  checked.tags = labels(card.tags, 'tags');
  checked.network_ids = labels(card.network_ids, 'networks', { lowercase: true });
  if (checked.valid_from !== null && checked.valid_to !== null && checked.valid_to < checked.valid_from) {
    throw invalid('validity', 'ends before it starts');
  }
  if (checked.used_at !== null && !checked.one_time) throw invalid('used', 'applies only to a one-time card');
  checked.notes = optionalText(card.notes, 'notes', 65_536);
  const metadata = Object.entries(card.metadata ?? {});
  if (metadata.length > 64) throw invalid('metadata', 'holds more than 64 entries');
  if (metadata.some(([key, value]) => length(key) > 128 || length(value) > 1024)) throw invalid('metadata', 'is too long');
  if (checked.symbology) {
    try {
      drawable(checked.symbology, checked.payload, checked.payload_charset);
    } catch (/** @type {any} */ error) {
      throw invalid('payload', `cannot be drawn: ${String(error.message).replace(/^the barcode cannot be drawn: /, '')}`);
    }
  }
  return checked;
}

const OTP_ALGORITHMS = ['SHA1', 'SHA256', 'SHA512'];

/**
 * A token checked as the CLI's OTPParameters and OTPItem check it.
 * @param {Draft<Token>} token
 * @returns {Draft<Token>}
 */
export function checkOTP(token) {
  // An empty issuer is none (FORMAT.md revision 1.11): the account names the token.
  const issuer = String(token.issuer ?? '').trim() ? name(token.issuer, 'issuer', 100) : '';
  const checked = { ...token, issuer, account: name(token.account, 'account', 200) };
  if (!['totp', 'hotp', 'steam'].includes(checked.type)) throw invalid('token type', 'is not known');
  if (!OTP_ALGORITHMS.includes(checked.algorithm)) throw invalid('algorithm', 'is not SHA1, SHA256 or SHA512');
  if (!(checked.secret?.length >= 10)) throw invalid('secret', 'is shorter than 10 bytes (80 bits)');
  if (checked.secret.length > 1024) throw invalid('secret', 'is longer than 1024 bytes');
  if (checked.type === 'steam') {
    if (checked.algorithm !== 'SHA1' || checked.digits !== 5) throw invalid('Steam token', 'is SHA1 with 5 characters');
    checked.period = null;
    checked.counter = null;
  } else if (!Number.isInteger(checked.digits) || checked.digits < 6 || checked.digits > 8) {
    throw invalid('digits', 'must be 6 to 8');
  }
  if (checked.type === 'totp') {
    const period = /** @type {number} */ (checked.period);
    if (!Number.isInteger(period) || period < 1 || period > 86_400) throw invalid('period', 'must be 1 to 86,400 seconds');
    checked.counter = null;
  }
  if (checked.type === 'hotp') {
    const counter = /** @type {number} */ (checked.counter);
    if (!Number.isSafeInteger(counter) || counter < 0) throw invalid('counter', 'must be a whole number from 0');
    checked.period = null;
  }
  checked.tags = labels(token.tags, 'tags');
  checked.notes = optionalText(token.notes, 'notes', 65_536);
  return checked;
}

/**
 * @param {Draft<Credential>} credential
 * @returns {Draft<Credential>}
 */
export function checkCredential(credential) {
  const checked = { ...credential, name: name(credential.name) };
  checked.provider = credential.provider ? name(credential.provider, 'provider', 100) : null;
  if (!credential.value) throw invalid('value', 'is empty');
  if (utf8(credential.value).length > 65_536) throw invalid('value', 'is longer than 65,536 bytes');
  checked.tags = labels(credential.tags, 'tags');
  checked.notes = optionalText(credential.notes, 'notes', 65_536);
  checked.username = optionalText(credential.username, 'username', 1024);
  checked.url = optionalText(credential.url, 'url', 4096);
  return checked;
}

/**
 * @param {Draft<Note>} note
 * @returns {Draft<Note>}
 */
export function checkNote(note) {
  const checked = { ...note, name: name(note.name) };
  if (!['free', 'contact', 'kyc'].includes(checked.template)) throw invalid('template', 'is not known');
  if (note.fields.length > 200) throw invalid('fields', 'are more than 200');
  checked.fields = note.fields.map((field) => {
    if (length(field.value) > 8192) throw invalid('field value', 'is longer than 8192 characters');
    return { label: name(field.label, 'field label', 100), value: field.value };
  });
  checked.text = optionalText(note.text, 'text', 65_536);
  checked.tags = labels(note.tags, 'tags');
  if (!checked.fields.length && checked.text === null) throw invalid('note', 'needs fields or text');
  return checked;
}

/**
 * @param {FieldWriter} f
 * @param {Card} card
 */
function writeCard(f, card) {
  f.text(16, card.name);
  f.text(17, card.symbology);
  f.bytes(18, card.payload);
  f.text(19, card.payload_charset);
  f.text(20, card.card_number);
  f.texts(21, card.tags);
  f.texts(22, card.network_ids);
  f.time(23, card.valid_from);
  f.time(24, card.valid_to);
  f.flag(25, card.one_time);
  f.time(26, card.used_at);
  f.time(27, card.archived_at);
  f.text(28, card.notes);
  // Sorted by key's UTF-16 code units, as Swift sorts these ASCII-in-practice keys by Unicode scalars.
  for (const key of Object.keys(card.metadata ?? {}).sort()) {
    f.group(29, (entry) => {
      entry.text(1, key);
      entry.text(2, card.metadata[key]);
    });
  }
  for (const photo of card.photos ?? []) {
    f.group(30, (entry) => {
      entry.text(1, photo.side);
      entry.text(2, photo.type);
      entry.integer(3, photo.size);
      entry.bytes(4, photo.digest);
      for (const part of photo.parts) entry.bytes(5, part);
    });
  }
}

/**
 * @param {FieldWriter} f
 * @param {Token} token checked: a TOTP token has its period, an HOTP token its counter
 */
function writeOTP(f, token) {
  if (token.issuer) f.text(16, token.issuer);
  f.text(17, token.account);
  f.text(18, token.type);
  if (token.type === 'totp') f.integer(22, /** @type {number} */ (token.period));
  if (token.type === 'hotp') f.integer(23, /** @type {number} */ (token.counter));
  f.bytes(19, token.secret);
  f.text(20, token.algorithm);
  f.integer(21, token.digits);
  f.texts(24, token.tags);
  f.text(25, token.notes);
}

/**
 * @param {FieldWriter} f
 * @param {Credential} credential
 */
function writeCredential(f, credential) {
  f.text(16, credential.name);
  f.text(17, credential.provider);
  f.text(18, credential.value);
  f.texts(19, credential.tags);
  f.text(20, credential.notes);
  f.text(21, credential.username);
  f.text(22, credential.url);
}

/**
 * @param {FieldWriter} f
 * @param {Note} note
 */
function writeNote(f, note) {
  f.text(16, note.name);
  f.text(17, note.template);
  for (const field of note.fields) {
    f.group(18, (entry) => {
      entry.text(1, field.label);
      entry.text(2, field.value);
    });
  }
  f.text(19, note.text);
  f.texts(20, note.tags);
}

/**
 * Each kind's writer; `encodeContent` hands each the content of its own kind.
 * @type {Record<string, (f: FieldWriter, content: any) => void>}
 */
const WRITERS = { card: writeCard, otp: writeOTP, credential: writeCredential, note: writeNote };

/**
 * `u8 1 ‖ field*` for checked content of `kind`: tag 1 (created), the kind's fields, then the fields the reader did
 * not know (`content.unknown`, as read).
 * @param {string} kind
 * @param {Writable & { created: number }} content
 */
export function encodeContent(kind, content) {
  const write = WRITERS[kind];
  if (!write) throw new CofferError('unknown-kind', `items of kind ${kind} cannot be written here`);
  const f = new FieldWriter(1);
  f.time(1, content.created);
  write(f, content);
  for (const [tag, value] of content.unknown ?? []) f.bytes(tag, value);
  return f.done();
}
