// @ts-check
// The browser as a Coffer device (FORMAT.md §8.9): a copy of the synced vault kept here as ciphertext (store.js), opened
// with the passphrase without the network, verified on every open as a pull is (§8.6), and brought up to date from the
// server whenever it can be reached. Keys, the session's token and decrypted items live in this module's objects only.
import { CofferError, concat, equal, fromBase64, toBase64, uuidBytes, uuidText } from './bytes.js';
import { openBox, sealBox, sha256 } from './crypto.js';
import { accountCommitment, associatedData, kdfFromWire, parseManifest, photoAD, PHOTO_KIND } from './format.js';
import { accountKeys, photosKey, unwrapMaster, webAuthKey } from './keys.js';
import { unlockWithPasskey } from './passkey.js';
import { login, logout, normaliseEmail, prelogin } from './session.js';
import { openItem, pullDevice, pushDevice, readable, sealItem } from './sync.js';
import { verifyState } from './verify.js';

/**
 * @typedef {import('./format.js').Card} Card
 * @typedef {import('./format.js').Token} Token
 * @typedef {import('./format.js').Kept} Kept
 * @typedef {import('./format.js').Manifest} Manifest
 * @typedef {import('./content.js').Writable} Writable
 * @typedef {import('./store.js').Store} Store
 * @typedef {import('./store.js').VaultRecord} VaultRecord
 * @typedef {import('./store.js').StoredRow} StoredRow
 * @typedef {import('./store.js').PendingRow} PendingRow
 * @typedef {import('./verify.js').State} State
 * @typedef {Pick<Storage, 'getItem' | 'removeItem'>} LegacyStorage where the verified head was kept (the page's local
 *   storage)
 */

/**
 * @template [C=import('./format.js').Content]
 * @typedef {import('./format.js').Item<C>} Item
 */

/**
 * The legacy place of the verified head (§8.9, before this browser kept a copy of the vault), read once and dropped.
 * @param {string} vaultID
 */
export function legacyHeadKey(vaultID) {
  return `coffer.verified.${vaultID}`;
}

/**
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} account
 */
function authAD(vaultID, account) {
  return associatedData('coffer/v1/web-auth', vaultID, account);
}

/**
 * Opens the vault this browser keeps for `email`, or logs in and makes a copy of it. Without the network, only the
 * copy can be opened; with it, a passphrase that does not open the copy is tried against the server (it may have been
 * changed on another device). `progress(text)` tells the user what is happening.
 * @param {object} options
 * @param {string} [options.base] the server's address ('' for the one that served the page)
 * @param {string} options.email
 * @param {string} options.passphrase
 * @param {Store} options.store
 * @param {LegacyStorage | null} [options.legacy]
 * @param {(text: string) => void} [options.progress]
 * @param {() => number} [options.now]
 */
export async function unlock({ base = '', email, passphrase, store, legacy = null, progress = () => {}, now = Date.now }) {
  const normalised = normaliseEmail(email);
  const record = await store.vaultByEmail(normalised);
  if (record) {
    const kdf = kdfFromWire(record.kdf);
    progress(kdf.id === 2 ? 'Stretching the passphrase (scrypt, a few seconds)…' : 'Stretching the passphrase…');
    const { kek, auth } = await accountKeys(passphrase, kdf, record.salt);
    const vaultID = uuidBytes(record.vault_id);
    const master = await unwrapMaster(kek, vaultID, uuidBytes(record.slot_id), kdf, record.salt, record.wrapped_key)
      .catch(() => null);
    kek.fill(0);
    if (master) {
      progress('Opening this browser’s copy…');
      const device = await Device.open({ base, store, record, master, now });
      await device.keepAuth(auth);
      return device;
    }
    auth.fill(0);
    progress('Asking the server…');
  }
  return logIn({ base, email: normalised, passphrase, store, record, legacy, progress, now });
}

/**
 * Opens the vault this browser keeps for `email` with its passkey (passkey.js), without the passphrase.
 * @param {object} options
 * @param {string} [options.base]
 * @param {string} options.email
 * @param {Store} options.store
 * @param {import('./passkey.js').Credentials} options.credentials
 * @param {() => number} [options.now]
 */
export async function unlockByPasskey({ base = '', email, store, credentials, now = Date.now }) {
  const record = await store.vaultByEmail(normaliseEmail(email));
  if (!record?.passkey) throw new CofferError('no-passkey', 'this browser has no passkey for the vault: unlock with the passphrase');
  const master = await unlockWithPasskey(store, record, { credentials });
  return Device.open({ base, store, record, master, now });
}

/**
 * Whether this browser keeps a passkey for the vault of `email`.
 * @param {Store} store
 * @param {string} email
 */
export async function hasPasskey(store, email) {
  return Boolean((await store.vaultByEmail(normaliseEmail(email)))?.passkey);
}

/**
 * The first unlock in this browser, or one with a passphrase changed elsewhere: the server's slot and state.
 * @param {object} options
 * @param {string} options.base
 * @param {string} options.email normalised
 * @param {string} options.passphrase
 * @param {Store} options.store
 * @param {VaultRecord | null} options.record this browser's copy of the account's vault, if any
 * @param {LegacyStorage | null} options.legacy
 * @param {(text: string) => void} options.progress
 * @param {() => number} options.now
 */
async function logIn({ base, email, passphrase, store, record, legacy, progress, now }) {
  let parameters;
  try {
    progress('Asking the server how to stretch the passphrase…');
    parameters = await prelogin(base, email);
  } catch (/** @type {any} */ error) {
    if (error.code === 'transport' && record) {
      throw new CofferError('wrong-passphrase', 'wrong passphrase for this browser’s copy of the vault (the server '
        + 'cannot be reached to ask whether it changed)');
    }
    throw error;
  }
  const { kdf, wireKDF, salt } = parameters;
  progress(kdf.id === 2 ? 'Stretching the passphrase (scrypt, a few seconds)…' : 'Stretching the passphrase…');
  const { kek, auth } = await accountKeys(passphrase, kdf, salt);
  progress('Logging in…');
  const session = await login(base, email, auth);
  const token = session.access_token;
  try {
    const slot = session.slot;
    if (!slot || !session.vault_id) throw new CofferError('no-vault', 'this account has no synced vault yet');
    if (JSON.stringify(kdfFromWire(slot.kdf)) !== JSON.stringify(kdf) || toBase64(fromBase64(slot.salt, 'salt')) !== toBase64(salt)) {
      throw new CofferError('slot-changed', 'the server handed out a slot with other parameters than it asked to stretch with');
    }
    const vaultText = session.vault_id.toLowerCase();
    const vaultID = uuidBytes(vaultText);
    const wrapped = fromBase64(slot.wrapped_key, 'slot');
    const master = await unwrapMaster(kek, vaultID, uuidBytes(slot.id), kdf, salt, wrapped).catch(() => {
      throw new CofferError('slot', 'the passphrase slot the server handed out does not open: it was changed');
    });
    kek.fill(0);
    const known = record?.vault_id === vaultText ? record : null;
    const legacyHead = !known && legacy?.getItem(legacyHeadKey(vaultText));
    /** @type {VaultRecord} */
    const fresh = {
      vault_id: vaultText, email, kdf: wireKDF, salt, slot_id: slot.id.toLowerCase(), wrapped_key: wrapped,
      head: known?.head ?? (legacyHead ? fromBase64(legacyHead, 'stored manifest') : null),
      cursor: known?.cursor ?? 0, last_sync: known?.last_sync ?? null,
      device_id: known?.device_id ?? globalThis.crypto.getRandomValues(new Uint8Array(16)), auth_box: null,
      conflicts: known?.conflicts ?? [],
      // A passkey slot wraps the master key, which a passphrase change leaves as it is.
      ...(known?.passkey ? { passkey: known.passkey } : {}),
    };
    const device = new Device({ base, store, record: fresh, master, rows: known ? await store.rows(vaultText) : [],
      pending: known ? await store.pending(vaultText) : [], now });
    device.token = token;
    // The head must name the slot the server handed out at this login (§8.1).
    device.account = await accountCommitment(kdf, salt);
    progress('Fetching and verifying the vault…');
    await device.sync();
    await device.keepAuth(auth);
    legacy?.removeItem(legacyHeadKey(vaultText));
    return device;
  } catch (error) {
    await logout(base, token);
    throw error;
  }
}

/** An open vault: its items (decrypted, in memory), its stored copy, and the server session when there is one. */
export class Device {
  /**
   * @param {object} options
   * @param {string} options.base
   * @param {Store} options.store
   * @param {VaultRecord} options.record
   * @param {Uint8Array} options.master
   * @param {StoredRow[]} options.rows
   * @param {PendingRow[]} [options.pending]
   * @param {() => number} [options.now]
   */
  constructor({ base, store, record, master, rows, pending = [], now = Date.now }) {
    this.base = base;
    this.store = store;
    this.record = record;
    this.master = master;
    this.vaultID = uuidBytes(record.vault_id);
    /** @type {Map<string, StoredRow>} */
    this.rows = new Map(rows.map((row) => [row.id, row]));
    /** @type {Map<string, PendingRow>} */
    this.pending = new Map(pending.map((row) => [row.id, row]));
    /** @type {Item[]} */
    this.items = [];
    /** @type {Manifest | null} */
    this.head = null;
    /** @type {string | null} */
    this.fingerprint = null;
    /** @type {string | null} */
    this.token = null;
    /**
     * The commitment of the account slot (§8.1), set by `open` or the login before anything reads it.
     * @type {Uint8Array}
     */
    this.account = /** @type {any} */ (null);
    this.now = now;
    /**
     * The sync under way (`sync()`), which `lock()` waits for.
     * @type {Promise<void> | null}
     */
    this.busy = null;
    /** When the last push was answered (`performance.now()`, for the page's timings); 0 before the first. */
    this.pushedAt = 0;
  }

  /**
   * Opens the stored copy: its head must verify under this vault's key and its rows must add up to it.
   * @param {object} options
   * @param {string} options.base
   * @param {Store} options.store
   * @param {VaultRecord} options.record
   * @param {Uint8Array} options.master
   * @param {() => number} options.now
   */
  static async open({ base, store, record, master, now }) {
    const device = new Device({ base, store, record, master, rows: await store.rows(record.vault_id),
      pending: await store.pending(record.vault_id), now });
    device.account = await accountCommitment(kdfFromWire(record.kdf), record.salt);
    const head = record.head ? await parseManifest(record.head) : null;
    await device.show(await verifyState({ master, vaultID: device.vaultID, account: device.account, head, chain: [],
      rows: [...device.rows.values()].map(readable), verified: head }));
    return device;
  }

  get vaultText() {
    return this.record.vault_id;
  }

  /** When this browser last had the server's state (Unix ms), or null. */
  get lastSync() {
    return this.record.last_sync;
  }

  /** Rows written here and not yet pushed. */
  get waiting() {
    return this.pending.size;
  }

  /**
   * The items of a verified state, with what was written here on top.
   * @param {State} state
   */
  async show(state) {
    this.verified = { leaves: state.leaves, items: state.opened };
    const items = new Map(state.items.map((item) => [item.id, item]));
    for (const row of this.pending.values()) {
      if (row.kind === PHOTO_KIND) continue;
      if (row.deleted) items.delete(row.id);
      else items.set(row.id, await openItem(this, row));
    }
    this.items = [...items.values()];
    this.head = state.head;
    this.fingerprint = state.fingerprint;
  }

  /**
   * The revision a write of `id` gets, and the server revision it replaces.
   * @param {string} id
   */
  revisions(id) {
    const server = this.rows.get(id)?.revision ?? 0;
    const waiting = this.pending.get(id);
    return { revision: Math.max(server, waiting?.revision ?? 0) + 1, base: waiting?.base_revision ?? server };
  }

  /**
   * Seals `content` (checked by content.js) as `kind`, a new item unless `id` names one, and keeps it pending in the
   * store before it shows; pushing is the caller's next step. Returns the item's id.
   * @param {string} kind
   * @param {Writable} content
   * @param {string | null} [id]
   */
  async write(kind, content, id = null) {
    const itemID = id ?? globalThis.crypto.randomUUID();
    const existing = id ? this.items.find((item) => item.id === id) : null;
    if (id && (!existing || existing.kind !== kind)) throw new CofferError('no-item', 'that item is not in this vault');
    const created = existing?.content.created ?? this.now();
    const row = await sealItem(this, { id: itemID, kind, content: { ...content, created }, ...this.revisions(itemID) });
    await this.store.save(this.record, { pending: [row] });
    this.pending.set(itemID, row);
    const item = await openItem(this, row);
    this.items = [...this.items.filter((candidate) => candidate.id !== itemID), item];
    return itemID;
  }

  /**
   * Seals several new items of `kind` and keeps them pending in one store write: all of them, or none.
   * @param {string} kind
   * @param {Writable[]} contents
   */
  async writeAll(kind, contents) {
    const created = this.now();
    const rows = [];
    for (const content of contents) {
      const id = globalThis.crypto.randomUUID();
      rows.push(await sealItem(this, { id, kind, content: { ...content, created }, ...this.revisions(id) }));
    }
    await this.store.save(this.record, { pending: rows });
    const items = [];
    for (const row of rows) {
      this.pending.set(row.id, row);
      items.push(await openItem(this, row));
    }
    this.items = [...this.items, ...items];
    return rows.map((row) => row.id);
  }

  /**
   * Deletes an item (a tombstone, §4); a card's photo parts become tombstones with it (§5b).
   * @param {string} id
   */
  async remove(id) {
    const item = this.items.find((candidate) => candidate.id === id);
    if (!item) throw new CofferError('no-item', 'that item is not in this vault');
    const parts = (item.kind === 'card' ? /** @type {Card} */ (item.content).photos ?? [] : []).flatMap((photo) => photo.parts);
    const rows = [[id, item.kind], ...parts.map((part) => [uuidText(part), PHOTO_KIND])].map(([rowID, kind]) => (
      { id: rowID, kind, ...this.revisions(rowID), updated_at: this.now(), deleted: true, box: null }))
      .map(({ base, ...row }) => ({ ...row, base_revision: base }));
    await this.store.save(this.record, { pending: rows });
    for (const row of rows) this.pending.set(row.id, row);
    this.items = this.items.filter((candidate) => candidate.id !== id);
  }

  /**
   * An HOTP code: the counter is advanced and stored before the code of the current one is shown (§5).
   * @param {string} id
   */
  async nextHOTP(id) {
    const item = /** @type {Item<Token & Kept> | undefined} */ (this.items.find((candidate) => candidate.id === id));
    if (item?.kind !== 'otp' || item.content.type !== 'hotp') throw new CofferError('no-item', 'that is not an HOTP token');
    // An HOTP token has its counter (content.js, format.js).
    const counter = /** @type {number} */ (item.content.counter);
    if (!Number.isSafeInteger(counter + 1)) throw new CofferError('invalid', 'the HOTP counter is exhausted');
    await this.write('otp', { ...item.content, counter: counter + 1 }, id);
    return counter;
  }

  /**
   * A card's photo of `side` as `{ type, bytes }` (§5b): every part the card names must be a live row that opens under
   * the photo key with its AD and names this card, side, index and count, and the whole must have the recorded size
   * and SHA-256; anything else is damage, and nothing is returned.
   * @param {string} cardID
   * @param {string} side
   */
  async photo(cardID, side) {
    const card = /** @type {Item<Card> | undefined} */ (this.items.find((item) => item.id === cardID && item.kind === 'card'));
    const photo = card?.content.photos.find((candidate) => candidate.side === side);
    if (!photo) return null;
    const key = await photosKey(this.master, this.vaultID);
    const damaged = () => new CofferError('photo', `the ${side} photo of this card is damaged`);
    try {
      const parts = [];
      for (const [index, partID] of photo.parts.entries()) {
        const id = uuidText(partID);
        const row = this.pending.get(id) ?? this.rows.get(id);
        if (!row || row.deleted || row.kind !== PHOTO_KIND) throw damaged();
        // A live row has its box.
        const box = /** @type {Uint8Array} */ (row.box);
        const plain = await openBox(key, box, photoAD(this.vaultID, partID, row.revision, row.updated_at)).catch(() => {
          throw damaged();
        });
        const header = new DataView(plain.buffer, plain.byteOffset, 22);
        if (plain.length < 23 || plain[0] !== 1 || !equal(plain.subarray(1, 17), uuidBytes(cardID))
          || plain[17] !== (side === 'front' ? 1 : 2) || header.getUint16(18) !== index || header.getUint16(20) !== photo.parts.length) {
          throw damaged();
        }
        parts.push(plain.subarray(22));
      }
      const bytes = concat(...parts);
      if (bytes.length !== photo.size || !equal(await sha256(bytes), photo.digest)) throw damaged();
      return { type: photo.type, bytes };
    } finally {
      key.fill(0);
    }
  }

  /** Conflict copies made here: `[{ id, original_id, detected_at }]`. */
  get conflicts() {
    return this.record.conflicts ?? [];
  }

  /**
   * Keeps the auth key sealed under the vault's key, so a later unlock here can sync without the passphrase.
   * @param {Uint8Array} auth
   */
  async keepAuth(auth) {
    const key = await webAuthKey(this.master, this.vaultID);
    this.record.auth_box = await sealBox(key, auth, authAD(this.vaultID, this.account));
    key.fill(0);
    auth.fill(0);
    await this.store.save(this.record);
  }

  /** A session with the server, from the sealed auth key. */
  async session() {
    if (this.token) return this.token;
    if (!this.record.auth_box) throw new CofferError('no-session', 'unlock with the passphrase once to sync');
    const key = await webAuthKey(this.master, this.vaultID);
    const auth = await openBox(key, this.record.auth_box, authAD(this.vaultID, this.account), 'the stored auth key');
    key.fill(0);
    try {
      const session = await login(this.base, this.record.email, auth);
      if (session.vault_id?.toLowerCase() !== this.vaultText) {
        await logout(this.base, session.access_token);
        throw new CofferError('other-vault', 'the server now holds another vault for this account; nothing was changed here');
      }
      this.token = session.access_token;
      return /** @type {string} */ (this.token);
    } catch (/** @type {any} */ error) {
      if (error.code === 'wrong-passphrase') {
        throw new CofferError('passphrase-changed', 'the account’s passphrase was changed on another device: lock, '
          + 'then unlock with the new one');
      }
      throw error;
    } finally {
      auth.fill(0);
    }
  }

  /** Pushes what waits here and brings the copy up to date (sync.js), by the rules `coffer sync` follows. */
  sync() {
    if (this.closed) return Promise.reject(new CofferError('locked', 'the vault is locked'));
    // One sync at a time; lock() waits for it before it wipes the keys the sync is using.
    this.busy ??= (async () => {
      try {
        await this.syncOnce();
      } catch (/** @type {any} */ error) {
        // An access token lives 15 minutes: an expired one is replaced once.
        if (error.code !== 'unauthorized' || !this.token) throw error;
        this.token = null;
        await this.syncOnce();
      }
    })().finally(() => { this.busy = null; });
    return this.busy;
  }

  /** Throws once the vault is locked: a sync under way stops before its next request or write. */
  checkOpen() {
    if (this.closed) throw new CofferError('locked', 'the vault was locked');
  }

  /**
   * What waits here is pushed first when there is a verified head to build on (a write lands in one round trip; a
   * newer head there is a 409, answered with a pull and a merge), then the feed is read.
   */
  async syncOnce() {
    if (this.pending.size && this.record.head) await pushDevice(this);
    await pullDevice(this);
    if (this.pending.size) await pushDevice(this);
  }

  /** Forgets the keys and the items, and ends the server session. */
  async lock() {
    this.closed = true;
    if (this.busy) await this.busy.catch(() => {});
    this.master.fill(0);
    for (const item of /** @type {Item<Partial<Token & Card> | undefined>[]} */ (this.items)) {
      if (item.content?.secret) item.content.secret.fill(0);
      if (item.content?.payload) item.content.payload.fill(0);
    }
    this.items = [];
    const token = this.token;
    this.token = null;
    return logout(this.base, token);
  }
}
