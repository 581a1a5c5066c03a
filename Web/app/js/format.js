// docs/FORMAT.md read a second time, independently of the Swift code: associated data (§3), KDF parameters (§2),
// item content (§5), and the vault-state manifest with its leaves and root (§8.6).
import {
  CofferError, compareBytes, concat, crockford, equal, fromBase64, readU32, readU64, text, u32, u64, u8, utf8, uuidBytes,
} from './bytes.js';
import { sha256 } from './crypto.js';

/** `AD(label, f1, …, fn) = u32 len(label) ‖ label ‖ u32 len(f1) ‖ f1 ‖ …` (§3). */
export function associatedData(label, ...fields) {
  return concat(...[utf8(label), ...fields].flatMap((field) => [u32(field.length), field]));
}

export const SLOT_PASSPHRASE = 2;
export const BOX_FORMAT_VERSION = 1;

/** The slot AD: vault id, slot id, u8 type, kdf encoding (empty for device and recovery slots), salt. */
export function slotAD(vaultID, slotID, type, kdfEncoding, salt) {
  return associatedData('coffer/v1/slot', vaultID, slotID, u8(type), kdfEncoding, salt);
}

/** The item AD: vault id, item id, kind, u64 revision, u64 updated_at, u32 box format version. */
export function itemAD(vaultID, itemID, kind, revision, updatedAt) {
  return associatedData('coffer/v1/item', vaultID, itemID, utf8(kind), u64(revision), u64(updatedAt),
    u32(BOX_FORMAT_VERSION));
}

/** The kind of a card photo part's row (§5b). */
export const PHOTO_KIND = 'card_photo';

/** A photo part's AD: vault id, part id, u64 revision, u64 updated_at, u32 box format version (§3). */
export function photoAD(vaultID, partID, revision, updatedAt) {
  return associatedData('coffer/v1/photo', vaultID, partID, u64(revision), u64(updatedAt), u32(BOX_FORMAT_VERSION));
}

// §2: KDF parameters, their encoding and the bounds a reader applies before any work.

/** The KDF of a wire `kdf` object, checked against the accepted bounds (§2). */
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

/** The KDF of an on-disk `kdf` encoding (§2), with the same bounds as the wire's. */
export function kdfFromEncoding(bytes) {
  if (bytes.length === 5 && bytes[0] === 1) return kdfFromWire({ algorithm: 'pbkdf2-sha256', iterations: readU32(bytes, 1) });
  if (bytes.length === 10 && bytes[0] === 2) {
    return kdfFromWire({ algorithm: 'scrypt', log_n: bytes[1], r: readU32(bytes, 2), p: readU32(bytes, 6) });
  }
  throw new CofferError('kdf-bounds', 'unknown KDF');
}

/** The login floor (§8.1): Coffer's defaults, below which a device refuses to stretch or send anything. */
export function meetsLoginFloor(kdf) {
  return kdf.id === 1 ? kdf.iterations >= 600_000 : kdf.logN >= 15 && kdf.r >= 8;
}

/** `u8 1 ‖ u32 iterations` or `u8 2 ‖ u8 log2(N) ‖ u32 r ‖ u32 p`. */
export function kdfEncoding(kdf) {
  return kdf.id === 1 ? concat(u8(1), u32(kdf.iterations)) : concat(u8(2), u8(kdf.logN), u32(kdf.r), u32(kdf.p));
}

/** `SHA-256(AD("coffer/v1/account", kdf encoding, salt))`: what a manifest says the account slot is (§8.1). */
export function accountCommitment(kdf, salt) {
  return sha256(associatedData('coffer/v1/account', kdfEncoding(kdf), salt));
}

// §5: item content.

/** Splits `field*` into [tag, value] pairs; a length that runs past the end, or does not end, is malformed. */
export function readFields(bytes) {
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
  constructor(pairs) {
    this.pairs = pairs;
  }

  all(tag) {
    return this.pairs.filter(([t]) => t === tag).map(([, value]) => value);
  }

  last(tag) {
    const values = this.all(tag);
    return values.length ? values[values.length - 1] : undefined;
  }

  /** A copy: the caller may wipe the plaintext the fields were read from. */
  bytes(tag, name) {
    const value = this.last(tag);
    if (value === undefined) throw new CofferError('malformed', `missing ${name}`);
    return value.slice();
  }

  text(tag, name) {
    return text(this.bytes(tag, name), name);
  }

  optionalText(tag, name) {
    const value = this.last(tag);
    return value === undefined ? null : text(value, name);
  }

  texts(tag, name) {
    return this.all(tag).map((value) => text(value, name));
  }

  /** An int or time: exactly 8 bytes, big-endian. Times are signed (two's complement) Unix milliseconds. */
  integer(tag, name, { signed = false, optional = false } = {}) {
    const value = this.last(tag);
    if (value === undefined) {
      if (optional) return null;
      throw new CofferError('malformed', `missing ${name}`);
    }
    if (value.length !== 8) throw new CofferError('malformed', `${name} is not a 64-bit integer`);
    const raw = readU64(value, 0);
    const number = signed ? BigInt.asIntN(64, raw) : raw;
    if (number > BigInt(Number.MAX_SAFE_INTEGER) || number < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new CofferError('malformed', `${name} is out of range`);
    }
    return Number(number);
  }

  time(tag, name) {
    return this.integer(tag, name, { signed: true, optional: true });
  }

  flag(tag) {
    const value = this.last(tag);
    return value !== undefined && value.length === 1 && value[0] === 1;
  }

  oneOf(tag, name, allowed, { optional = false } = {}) {
    const value = optional ? this.optionalText(tag, name) : this.text(tag, name);
    if (value !== null && !allowed.includes(value)) throw new CofferError('malformed', `unknown ${name}`);
    return value;
  }
}

export const SYMBOLOGIES = ['qr', 'code128', 'gs1_128', 'ean13', 'ean8', 'upc_a', 'upc_e', 'code39', 'itf', 'itf14',
  'codabar', 'pdf417', 'aztec', 'datamatrix', 'gs1_datamatrix', 'code93'];

function readCard(f) {
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

const KIND_READERS = { card: readCard, otp: readOTP, credential: readCredential, signing_key: readSigningKey, note: readNote };
/** The highest tag each kind's reader knows (its fields run from 16 to it); tag 1 is known to all. */
const LAST_TAG = { card: 30, otp: 25, credential: 22, signing_key: 25, note: 20 };

/** The plaintext of an item box: `u8 version (1) ‖ field*`, read for `kind` (the one bound in the AD). */
export function decodeContent(kind, bytes) {
  if (bytes.length === 0) throw new CofferError('malformed', 'empty content');
  if (bytes[0] !== 1) throw new CofferError('malformed', `content version ${bytes[0]} is not one this reader knows`);
  const reader = KIND_READERS[kind];
  if (!reader) throw new CofferError('unknown-kind', `items of kind ${kind} are not known to this reader`);
  const fields = readFields(bytes.subarray(1));
  // Fields of a later version are kept as read, so that writing the item back here keeps them (content.js).
  const unknown = fields.pairs.filter(([tag]) => tag !== 1 && (tag < 16 || tag > LAST_TAG[kind]))
    .map(([tag, value]) => [tag, value.slice()]);
  return { ...reader(fields), created: fields.integer(1, 'created', { signed: true }), unknown };
}

/**
 * The item a row's opened box holds: `{ id, kind, revision, updated_at, content }`, or `unsupported` for a kind this
 * reader does not know. The plaintext is wiped.
 */
export function itemFromPlaintext(row, plain) {
  const item = { id: row.id, kind: row.kind, revision: row.revision, updated_at: row.updated_at };
  try {
    item.content = decodeContent(row.kind, plain);
  } catch (error) {
    if (error.code !== 'unknown-kind') throw error;
    item.unsupported = true;
  } finally {
    plain.fill(0);
  }
  return item;
}

// §8.6: leaves, root, manifests.

/** `SHA-256(AD("coffer/v1/leaf", id, kind, u64 revision, u64 updated_at, u8 deleted, box or empty))`. */
export function leaf(row) {
  return sha256(associatedData('coffer/v1/leaf', row.idBytes, utf8(row.kind), u64(row.revision), u64(row.updated_at),
    u8(row.deleted ? 1 : 0), row.boxBytes ?? new Uint8Array(0)));
}

/** `SHA-256(u32 15 ‖ "coffer/v1/state" ‖ leaves in the order of the ids' bytes)`; `leaves` is [[idBytes, leaf]]. */
export function stateRoot(leaves) {
  const sorted = [...leaves].sort(([a], [b]) => compareBytes(a, b));
  return sha256(concat(u32(15), utf8('coffer/v1/state'), ...sorted.map(([, value]) => value)));
}

export const MANIFEST_BYTES = 188;

/** Parses the 188 bytes of a manifest; the caller authenticates its tag. */
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

export function manifestFromBase64(value) {
  return parseManifest(fromBase64(value, 'manifest'));
}

/** `"<epoch>:" ‖ Crockford base32 of the first 10 bytes of SHA-256(manifest)`, in four groups of four. */
export function fingerprint(manifest) {
  const code = crockford(manifest.hash.subarray(0, 10));
  return `${manifest.epoch}:${code.match(/.{4}/g).join('-')}`;
}

/** A wire item (§8.2) with its id and box as bytes; malformed ids, kinds or numbers are refused. */
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
