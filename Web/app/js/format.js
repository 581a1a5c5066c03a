// @ts-check
// docs/FORMAT.md read a second time, independently of the Swift code: associated data (§3), KDF parameters (§2),
// item content (§5), and the vault-state manifest with its leaves and root (§8.6).
import {
  CofferError, compareBytes, concat, crockford, equal, fromBase64, readU32, readU64, text, u32, u64, u8, utf8, uuidBytes,
} from './bytes.js';
import { sha256 } from './crypto.js';

/**
 * KDF parameters as a reader holds them (§2), checked against the accepted bounds.
 * @typedef {{ id: 1, iterations: number } | { id: 2, logN: number, r: number, p: number }} KDF
 */

/**
 * A field of item content (§5): its tag and its value.
 * @typedef {[number, Uint8Array]} Field
 */

/**
 * A card (§5, kind card). The time fields are Unix milliseconds.
 * @typedef {object} Card
 * @property {string} name
 * @property {string | null} symbology one of SYMBOLOGIES, or null for a card shown by its number
 * @property {Uint8Array} payload
 * @property {string} payload_charset `utf-8`, `iso-8859-1` or `binary`
 * @property {string | null} card_number
 * @property {string[]} tags
 * @property {string[]} network_ids
 * @property {number | null} valid_from
 * @property {number | null} valid_to
 * @property {boolean} one_time
 * @property {number | null} used_at
 * @property {number | null} archived_at
 * @property {string | null} notes
 * @property {Record<string, string>} metadata
 * @property {CardPhoto[]} photos
 */

/**
 * A card photo's record (§5b): its parts are rows of their own, named by their 16-byte ids.
 * @typedef {{ side: string, type: string, size: number, digest: Uint8Array, parts: Uint8Array[] }} CardPhoto
 */

/**
 * A one-time-password token (§5, kind otp): `period` only for TOTP, `counter` only for HOTP.
 * @typedef {object} Token
 * @property {string} issuer empty when the token names none
 * @property {string} account
 * @property {string} type `totp`, `hotp` or `steam`
 * @property {Uint8Array} secret
 * @property {string} algorithm `SHA1`, `SHA256` or `SHA512`
 * @property {number} digits
 * @property {number | null} period
 * @property {number | null} counter
 * @property {string[]} tags
 * @property {string | null} notes
 */

/**
 * A credential (§5, kind credential).
 * @typedef {object} Credential
 * @property {string} name
 * @property {string | null} provider
 * @property {string} value
 * @property {string[]} tags
 * @property {string | null} notes
 * @property {string | null} username
 * @property {string | null} url
 */

/**
 * A signing key (§5, kind signing_key): only the CLI can use it; the page lists it.
 * @typedef {object} SigningKey
 * @property {string} name
 * @property {string} flavor
 * @property {Uint8Array} public_key
 * @property {Uint8Array} pin_salt
 * @property {Uint8Array} pin_box
 * @property {Uint8Array} bound_vault_id
 * @property {Uint8Array} device_secret_id
 * @property {number} failed_attempts
 * @property {string[]} tags
 * @property {string | null} notes
 */

/**
 * A note (§5, kind note).
 * @typedef {object} Note
 * @property {string} name
 * @property {string} template `free`, `contact` or `kyc`
 * @property {{ label: string, value: string }[]} fields
 * @property {string | null} text
 * @property {string[]} tags
 */

/**
 * What every decoded content carries besides its kind's fields: its creation time, and the fields this reader does
 * not know, kept as read.
 * @typedef {{ created: number, unknown: Field[] }} Kept
 */

/** @typedef {(Card | Token | Credential | SigningKey | Note) & Kept} Content */

/**
 * An item as the page holds it: `content` of its kind, absent when `unsupported` (a kind this reader does not know).
 * @template [C=Content]
 * @typedef {{ id: string, kind: string, revision: number, updated_at: number, content: C, unsupported?: boolean }} Item
 */

/**
 * A row as the verifier and the leaf read it (§8.6): its id and box as bytes, the box null for a tombstone. `settled`
 * marks a row passed on unchanged from an earlier verification.
 * @typedef {object} LeafRow
 * @property {string} id
 * @property {Uint8Array} idBytes
 * @property {string} kind
 * @property {number} revision
 * @property {number} updated_at
 * @property {boolean} deleted
 * @property {Uint8Array | null} boxBytes
 * @property {boolean} [settled]
 */

/**
 * `AD(label, f1, …, fn) = u32 len(label) ‖ label ‖ u32 len(f1) ‖ f1 ‖ …` (§3).
 * @param {string} label
 * @param {Uint8Array[]} fields
 */
export function associatedData(label, ...fields) {
  return concat(...[utf8(label), ...fields].flatMap((field) => [u32(field.length), field]));
}

export const SLOT_PASSPHRASE = 2;
export const BOX_FORMAT_VERSION = 1;

/**
 * The slot AD: vault id, slot id, u8 type, kdf encoding (empty for device and recovery slots), salt.
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} slotID
 * @param {number} type
 * @param {Uint8Array} kdfEncoding
 * @param {Uint8Array} salt
 */
export function slotAD(vaultID, slotID, type, kdfEncoding, salt) {
  return associatedData('coffer/v1/slot', vaultID, slotID, u8(type), kdfEncoding, salt);
}

/**
 * The item AD: vault id, item id, kind, u64 revision, u64 updated_at, u32 box format version.
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} itemID
 * @param {string} kind
 * @param {number} revision
 * @param {number} updatedAt
 */
export function itemAD(vaultID, itemID, kind, revision, updatedAt) {
  return associatedData('coffer/v1/item', vaultID, itemID, utf8(kind), u64(revision), u64(updatedAt),
    u32(BOX_FORMAT_VERSION));
}

/** The kind of a card photo part's row (§5b). */
export const PHOTO_KIND = 'card_photo';

/**
 * A photo part's AD: vault id, part id, u64 revision, u64 updated_at, u32 box format version (§3).
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} partID
 * @param {number} revision
 * @param {number} updatedAt
 */
export function photoAD(vaultID, partID, revision, updatedAt) {
  return associatedData('coffer/v1/photo', vaultID, partID, u64(revision), u64(updatedAt), u32(BOX_FORMAT_VERSION));
}

// §2: KDF parameters, their encoding and the bounds a reader applies before any work.

/**
 * The KDF of a wire `kdf` object, checked against the accepted bounds (§2).
 * @param {any} kdf the server's (or the stored record's) JSON object, not yet checked
 * @returns {KDF}
 */
export function kdfFromWire(kdf) {
  if (kdf?.algorithm === 'pbkdf2-sha256' && Number.isInteger(kdf.iterations)) {
    if (kdf.iterations < 210_000 || kdf.iterations > 10_000_000) {
      throw new CofferError('kdf-bounds', 'PBKDF2 iterations must be 210,000 to 10,000,000');
    }
    return { id: 1, iterations: kdf.iterations };
  }
  if (kdf?.algorithm === 'scrypt' && [kdf.log_n, kdf.r, kdf.p].every(Number.isInteger)) {
    const { log_n: logN, r, p } = kdf;
    if (logN < 14 || logN > 20 || r < 1 || r > 32 || p < 1 || p > 16 || 128 * r * 2 ** logN > 2 ** 30) {
      throw new CofferError('kdf-bounds', 'scrypt parameters are outside log2(N) 14–20, r 1–32, p 1–16, 1 GiB');
    }
    return { id: 2, logN, r, p };
  }
  throw new CofferError('kdf-bounds', 'unknown KDF');
}

/**
 * The KDF of an on-disk `kdf` encoding (§2), with the same bounds as the wire's.
 * @param {Uint8Array} bytes
 */
export function kdfFromEncoding(bytes) {
  if (bytes.length === 5 && bytes[0] === 1) return kdfFromWire({ algorithm: 'pbkdf2-sha256', iterations: readU32(bytes, 1) });
  if (bytes.length === 10 && bytes[0] === 2) {
    return kdfFromWire({ algorithm: 'scrypt', log_n: bytes[1], r: readU32(bytes, 2), p: readU32(bytes, 6) });
  }
  throw new CofferError('kdf-bounds', 'unknown KDF');
}

/**
 * The login floor (§8.1): Coffer's defaults, below which a device refuses to stretch or send anything.
 * @param {KDF} kdf
 */
export function meetsLoginFloor(kdf) {
  return kdf.id === 1 ? kdf.iterations >= 600_000 : kdf.logN >= 15 && kdf.r >= 8;
}

/**
 * `u8 1 ‖ u32 iterations` or `u8 2 ‖ u8 log2(N) ‖ u32 r ‖ u32 p`.
 * @param {KDF} kdf
 */
export function kdfEncoding(kdf) {
  return kdf.id === 1 ? concat(u8(1), u32(kdf.iterations)) : concat(u8(2), u8(kdf.logN), u32(kdf.r), u32(kdf.p));
}

/**
 * `SHA-256(AD("coffer/v1/account", kdf encoding, salt))`: what a manifest says the account slot is (§8.1).
 * @param {KDF} kdf
 * @param {Uint8Array} salt
 */
export function accountCommitment(kdf, salt) {
  return sha256(associatedData('coffer/v1/account', kdfEncoding(kdf), salt));
}

// §5: item content.

/**
 * Splits `field*` into [tag, value] pairs; a length that runs past the end, or does not end, is malformed.
 * @param {Uint8Array} bytes
 */
export function readFields(bytes) {
  /** @type {Field[]} */
  const fields = [];
  let i = 0;
  while (i < bytes.length) {
    const tag = bytes[i++];
    let length = 0;
    let scale = 1;
    for (;;) {
      if (i >= bytes.length || scale > 2 ** 56) throw new CofferError('malformed', 'truncated field length');
      const byte = bytes[i++];
      length += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 128;
    }
    if (length > bytes.length - i) throw new CofferError('malformed', 'field runs past the end');
    fields.push([tag, bytes.subarray(i, i + length)]);
    i += length;
  }
  return new Fields(fields);
}

class Fields {
  /** @param {Field[]} pairs */
  constructor(pairs) {
    this.pairs = pairs;
  }

  /** @param {number} tag */
  all(tag) {
    return this.pairs.filter(([t]) => t === tag).map(([, value]) => value);
  }

  /** @param {number} tag */
  last(tag) {
    const values = this.all(tag);
    return values.length ? values[values.length - 1] : undefined;
  }

  /**
   * A copy: the caller may wipe the plaintext the fields were read from.
   * @param {number} tag
   * @param {string} name
   */
  bytes(tag, name) {
    const value = this.last(tag);
    if (value === undefined) throw new CofferError('malformed', `missing ${name}`);
    return value.slice();
  }

  /**
   * @param {number} tag
   * @param {string} name
   */
  text(tag, name) {
    return text(this.bytes(tag, name), name);
  }

  /**
   * @param {number} tag
   * @param {string} name
   */
  optionalText(tag, name) {
    const value = this.last(tag);
    return value === undefined ? null : text(value, name);
  }

  /**
   * @param {number} tag
   * @param {string} name
   */
  texts(tag, name) {
    return this.all(tag).map((value) => text(value, name));
  }

  /**
   * An int or time: exactly 8 bytes, big-endian. Times are signed (two's complement) Unix milliseconds. Null for a
   * missing `optional` one.
   * @template {boolean} [Optional=false]
   * @param {number} tag
   * @param {string} name
   * @param {{ signed?: boolean, optional?: Optional }} options
   * @returns {Optional extends true ? number | null : number}
   */
  integer(tag, name, { signed = false, optional = /** @type {Optional} */ (false) } = {}) {
    const value = this.last(tag);
    if (value === undefined) {
      if (optional) return /** @type {Optional extends true ? number | null : number} */ (null);
      throw new CofferError('malformed', `missing ${name}`);
    }
    if (value.length !== 8) throw new CofferError('malformed', `${name} is not a 64-bit integer`);
    const raw = readU64(value, 0);
    const number = signed ? BigInt.asIntN(64, raw) : raw;
    if (number > BigInt(Number.MAX_SAFE_INTEGER) || number < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new CofferError('malformed', `${name} is out of range`);
    }
    return /** @type {Optional extends true ? number | null : number} */ (Number(number));
  }

  /**
   * @param {number} tag
   * @param {string} name
   */
  time(tag, name) {
    return this.integer(tag, name, { signed: true, optional: true });
  }

  /** @param {number} tag */
  flag(tag) {
    const value = this.last(tag);
    return value !== undefined && value.length === 1 && value[0] === 1;
  }

  /**
   * The text of one of `allowed`; null for a missing `optional` one.
   * @template {boolean} [Optional=false]
   * @param {number} tag
   * @param {string} name
   * @param {string[]} allowed
   * @param {{ optional?: Optional }} options
   * @returns {Optional extends true ? string | null : string}
   */
  oneOf(tag, name, allowed, { optional = /** @type {Optional} */ (false) } = {}) {
    const value = optional ? this.optionalText(tag, name) : this.text(tag, name);
    if (value !== null && !allowed.includes(value)) throw new CofferError('malformed', `unknown ${name}`);
    return /** @type {Optional extends true ? string | null : string} */ (value);
  }
}

export const SYMBOLOGIES = ['qr', 'code128', 'gs1_128', 'ean13', 'ean8', 'upc_a', 'upc_e', 'code39', 'itf', 'itf14',
  'codabar', 'pdf417', 'aztec', 'datamatrix', 'gs1_datamatrix', 'code93'];

/**
 * @param {Fields} f
 * @returns {Card}
 */
function readCard(f) {
  /** @type {Record<string, string>} */
  const metadata = {};
  for (const entry of f.all(29)) {
    const group = readFields(entry);
    metadata[group.text(1, 'metadata key')] = group.text(2, 'metadata value');
  }
  return {
    name: f.text(16, 'name'),
    symbology: f.oneOf(17, 'symbology', SYMBOLOGIES, { optional: true }),
    payload: f.bytes(18, 'payload'),
    payload_charset: f.oneOf(19, 'payload charset', ['utf-8', 'iso-8859-1', 'binary']),
    card_number: f.optionalText(20, 'card number'),
    tags: f.texts(21, 'tag'),
    network_ids: f.texts(22, 'network'),
    valid_from: f.time(23, 'valid-from'),
    valid_to: f.time(24, 'valid-to'),
    one_time: f.flag(25),
    used_at: f.time(26, 'used-at'),
    archived_at: f.time(27, 'archived-at'),
    notes: f.optionalText(28, 'notes'),
    metadata,
    photos: f.all(30).map((entry) => {
      const group = readFields(entry);
      const parts = group.all(5).map((part) => {
        if (part.length !== 16) throw new CofferError('malformed', 'a photo part id is not 16 bytes');
        return part.slice();
      });
      return { side: group.oneOf(1, 'photo side', ['front', 'back']), type: group.oneOf(2, 'photo type', ['image/png', 'image/jpeg']),
        size: group.integer(3, 'photo size'), digest: group.bytes(4, 'photo digest'), parts };
    }),
  };
}

/**
 * @param {Fields} f
 * @returns {Token}
 */
function readOTP(f) {
  return {
    issuer: f.optionalText(16, 'issuer') ?? '',
    account: f.text(17, 'account'),
    type: f.oneOf(18, 'type', ['totp', 'hotp', 'steam']),
    secret: f.bytes(19, 'secret'),
    algorithm: f.oneOf(20, 'algorithm', ['SHA1', 'SHA256', 'SHA512']),
    digits: f.integer(21, 'digits'),
    period: f.integer(22, 'period', { optional: true }),
    counter: f.integer(23, 'counter', { optional: true }),
    tags: f.texts(24, 'tag'),
    notes: f.optionalText(25, 'notes'),
  };
}

/**
 * @param {Fields} f
 * @returns {Credential}
 */
function readCredential(f) {
  return {
    name: f.text(16, 'name'),
    provider: f.optionalText(17, 'provider'),
    value: f.text(18, 'value'),
    tags: f.texts(19, 'tag'),
    notes: f.optionalText(20, 'notes'),
    // Format revision 1.3: the account the value belongs to and where it is used (from password managers).
    username: f.optionalText(21, 'username'),
    url: f.optionalText(22, 'url'),
  };
}

/**
 * @param {Fields} f
 * @returns {SigningKey}
 */
function readSigningKey(f) {
  return {
    name: f.text(16, 'name'),
    flavor: f.oneOf(17, 'flavor', ['ed25519', 'stellar']),
    public_key: f.bytes(18, 'public key'),
    pin_salt: f.bytes(19, 'PIN salt'),
    pin_box: f.bytes(20, 'PIN box'),
    bound_vault_id: f.bytes(21, 'bound vault id'),
    device_secret_id: f.bytes(22, 'device secret id'),
    failed_attempts: f.integer(23, 'failed attempts'),
    tags: f.texts(24, 'tag'),
    notes: f.optionalText(25, 'notes'),
  };
}

/**
 * @param {Fields} f
 * @returns {Note}
 */
function readNote(f) {
  return {
    name: f.text(16, 'name'),
    template: f.oneOf(17, 'template', ['free', 'contact', 'kyc']),
    fields: f.all(18).map((entry) => {
      const group = readFields(entry);
      return { label: group.text(1, 'field label'), value: group.text(2, 'field value') };
    }),
    text: f.optionalText(19, 'text'),
    tags: f.texts(20, 'tag'),
  };
}

/** @type {Record<string, (f: Fields) => Card | Token | Credential | SigningKey | Note>} */
const KIND_READERS = { card: readCard, otp: readOTP, credential: readCredential, signing_key: readSigningKey, note: readNote };
/**
 * The highest tag each kind's reader knows (its fields run from 16 to it); tag 1 is known to all.
 * @type {Record<string, number>}
 */
const LAST_TAG = { card: 30, otp: 25, credential: 22, signing_key: 25, note: 20 };

/**
 * The plaintext of an item box: `u8 version (1) ‖ field*`, read for `kind` (the one bound in the AD).
 * @param {string} kind
 * @param {Uint8Array} bytes
 * @returns {Content}
 */
export function decodeContent(kind, bytes) {
  if (bytes.length === 0) throw new CofferError('malformed', 'empty content');
  if (bytes[0] !== 1) throw new CofferError('malformed', `content version ${bytes[0]} is not one this reader knows`);
  const reader = KIND_READERS[kind];
  if (!reader) throw new CofferError('unknown-kind', `items of kind ${kind} are not known to this reader`);
  const fields = readFields(bytes.subarray(1));
  // Fields of a later version are kept as read, so that writing the item back here keeps them (content.js).
  const unknown = fields.pairs.filter(([tag]) => tag !== 1 && (tag < 16 || tag > LAST_TAG[kind]))
    .map(([tag, value]) => /** @type {Field} */ ([tag, value.slice()]));
  return { ...reader(fields), created: fields.integer(1, 'created', { signed: true }), unknown };
}

/**
 * The item a row's opened box holds: `{ id, kind, revision, updated_at, content }`, or `unsupported` for a kind this
 * reader does not know. The plaintext is wiped.
 * @param {{ id: string, kind: string, revision: number, updated_at: number }} row
 * @param {Uint8Array} plain
 * @returns {Item}
 */
export function itemFromPlaintext(row, plain) {
  // `content` is set below, or the item is `unsupported` and has none.
  const item = /** @type {Item} */ ({ id: row.id, kind: row.kind, revision: row.revision, updated_at: row.updated_at });
  try {
    item.content = decodeContent(row.kind, plain);
  } catch (/** @type {any} */ error) {
    if (error.code !== 'unknown-kind') throw error;
    item.unsupported = true;
  } finally {
    plain.fill(0);
  }
  return item;
}

// §8.6: leaves, root, manifests.

/**
 * `SHA-256(AD("coffer/v1/leaf", id, kind, u64 revision, u64 updated_at, u8 deleted, box or empty))`.
 * @param {LeafRow} row
 */
export function leaf(row) {
  return sha256(associatedData('coffer/v1/leaf', row.idBytes, utf8(row.kind), u64(row.revision), u64(row.updated_at),
    u8(row.deleted ? 1 : 0), row.boxBytes ?? new Uint8Array(0)));
}

/**
 * `SHA-256(u32 15 ‖ "coffer/v1/state" ‖ leaves in the order of the ids' bytes)`; `leaves` is [[idBytes, leaf]].
 * @param {[Uint8Array, Uint8Array][]} leaves
 */
export function stateRoot(leaves) {
  const sorted = [...leaves].sort(([a], [b]) => compareBytes(a, b));
  return sha256(concat(u32(15), utf8('coffer/v1/state'), ...sorted.map(([, value]) => value)));
}

export const MANIFEST_BYTES = 188;

/** @typedef {Awaited<ReturnType<typeof parseManifest>>} Manifest */

/**
 * Parses the 188 bytes of a manifest; the caller authenticates its tag.
 * @param {Uint8Array} bytes
 */
export async function parseManifest(bytes) {
  if (bytes.length !== MANIFEST_BYTES || !equal(bytes.subarray(0, 4), utf8('CFM1'))) {
    throw new CofferError('malformed-manifest', 'the server sent a record of the vault state that is not a manifest');
  }
  const epoch = readU64(bytes, 20);
  const madeAt = readU64(bytes, 112);
  return {
    bytes,
    body: bytes.subarray(0, 156),
    vaultID: bytes.subarray(4, 20),
    epoch: Number(epoch),
    previous: bytes.subarray(28, 60),
    root: bytes.subarray(60, 92),
    count: readU32(bytes, 92),
    device: bytes.subarray(96, 112),
    madeAt: Number(BigInt.asIntN(64, madeAt)),
    keyEpoch: readU32(bytes, 120),
    account: bytes.subarray(124, 156),
    tag: bytes.subarray(156, 188),
    hash: await sha256(bytes),
  };
}

/** @param {unknown} value */
export function manifestFromBase64(value) {
  return parseManifest(fromBase64(value, 'manifest'));
}

/**
 * `"<epoch>:" ‖ Crockford base32 of the first 10 bytes of SHA-256(manifest)`, in four groups of four.
 * @param {Manifest} manifest
 */
export function fingerprint(manifest) {
  const code = crockford(manifest.hash.subarray(0, 10));
  // 10 bytes are 16 characters: four groups, always.
  return `${manifest.epoch}:${/** @type {RegExpMatchArray} */ (code.match(/.{4}/g)).join('-')}`;
}

/**
 * A wire item (§8.2) with its id and box as bytes; malformed ids, kinds or numbers are refused.
 * @param {any} item the server's JSON object, not yet checked
 * @returns {LeafRow}
 */
export function rowFromWire(item) {
  if (typeof item?.kind !== 'string' || !Number.isSafeInteger(item.revision) || item.revision < 1
    || !Number.isSafeInteger(item.updated_at) || item.updated_at < 0 || typeof item.deleted !== 'boolean') {
    throw new CofferError('malformed', 'the server sent an item this version does not understand');
  }
  if (item.deleted !== (item.box === undefined || item.box === null)) {
    throw new CofferError('malformed', 'the server sent an item whose box does not match its deleted flag');
  }
  return {
    id: item.id.toLowerCase(),
    idBytes: uuidBytes(item.id),
    kind: item.kind,
    revision: item.revision,
    updated_at: item.updated_at,
    deleted: item.deleted,
    boxBytes: item.deleted ? null : fromBase64(item.box, 'box'),
  };
}
