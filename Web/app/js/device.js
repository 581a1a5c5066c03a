// The browser as a Coffer device (FORMAT.md §8.9): a copy of the synced vault kept here as ciphertext (store.js), opened
// with the passphrase without the network, verified on every open as a pull is (§8.6), and brought up to date from the
// server whenever it can be reached. Keys, the session's token and decrypted items live in this module's objects only.
import { CofferError, fromBase64, toBase64, uuidBytes } from './bytes.js';
import { openBox, sealBox } from './crypto.js';
import { accountCommitment, associatedData, kdfFromWire, parseManifest } from './format.js';
import { accountKeys, unwrapMaster, webAuthKey } from './keys.js';
import { login, logout, manifestsAfter, normaliseEmail, prelogin, pull } from './session.js';
import { verifyState } from './verify.js';

/** The legacy place of the verified head (§8.9, before this browser kept a copy of the vault), read once and dropped. */
export function legacyHeadKey(vaultID) {
  return `coffer.verified.${vaultID}`;
}

function authAD(vaultID, account) {
  return associatedData('coffer/v1/web-auth', vaultID, account);
}

/** A stored row (§8.9) with the byte forms the verifier reads. */
function readable(row) {
  return { ...row, idBytes: uuidBytes(row.id), boxBytes: row.deleted ? null : row.box };
}

/** A verified wire row as it is stored. */
function storable(row) {
  return { id: row.id, kind: row.kind, revision: row.revision, updated_at: row.updated_at, deleted: row.deleted,
    box: row.boxBytes };
}

/**
 * Opens the vault this browser keeps for `email`, or logs in and makes a copy of it. Without the network, only the
 * copy can be opened; with it, a passphrase that does not open the copy is tried against the server (it may have been
 * changed on another device). `progress(text)` tells the user what is happening.
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

/** The first unlock in this browser, or one with a passphrase changed elsewhere: the server's slot and state. */
async function logIn({ base, email, passphrase, store, record, legacy, progress, now }) {
  let parameters;
  try {
    progress('Asking the server how to stretch the passphrase…');
    parameters = await prelogin(base, email);
  } catch (error) {
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
    const fresh = {
      vault_id: vaultText, email, kdf: wireKDF, salt, slot_id: slot.id.toLowerCase(), wrapped_key: wrapped,
      head: known?.head ?? (legacyHead ? fromBase64(legacyHead, 'stored manifest') : null),
      cursor: known?.cursor ?? 0, last_sync: known?.last_sync ?? null,
      device_id: known?.device_id ?? globalThis.crypto.getRandomValues(new Uint8Array(16)), auth_box: null,
    };
    const device = new Device({ base, store, record: fresh, master, rows: known ? await store.rows(vaultText) : [], now });
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
  constructor({ base, store, record, master, rows, now = Date.now }) {
    this.base = base;
    this.store = store;
    this.record = record;
    this.master = master;
    this.vaultID = uuidBytes(record.vault_id);
    this.rows = new Map(rows.map((row) => [row.id, row]));
    this.items = [];
    this.head = null;
    this.fingerprint = null;
    this.token = null;
    this.account = null;
    this.now = now;
  }

  /** Opens the stored copy: its head must verify under this vault's key and its rows must add up to it. */
  static async open({ base, store, record, master, now }) {
    const device = new Device({ base, store, record, master, rows: await store.rows(record.vault_id), now });
    device.account = await accountCommitment(kdfFromWire(record.kdf), record.salt);
    const head = record.head ? await parseManifest(record.head) : null;
    device.apply(await verifyState({ master, vaultID: device.vaultID, account: device.account, head, chain: [],
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

  apply(state) {
    this.items = state.items;
    this.head = state.head;
    this.fingerprint = state.fingerprint;
  }

  /** Keeps the auth key sealed under the vault's key, so a later unlock here can sync without the passphrase. */
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
      return this.token;
    } catch (error) {
      if (error.code === 'wrong-passphrase') {
        throw new CofferError('passphrase-changed', 'the account’s passphrase was changed on another device: lock, '
          + 'then unlock with the new one');
      }
      throw error;
    } finally {
      auth.fill(0);
    }
  }

  /**
   * Brings the copy up to date (§8.6): the feed after the stored cursor, verified with the stored rows against the
   * server's head and its link to the head verified here, then stored in one transaction. A read from a cursor that
   * does not add up is tried once more from the start (a server restored with its feed numbered anew).
   */
  async sync() {
    try {
      await this.syncOnce();
    } catch (error) {
      // An access token lives 15 minutes: an expired one is replaced once.
      if (error.code !== 'unauthorized' || !this.token) throw error;
      this.token = null;
      await this.syncOnce();
    }
  }

  async syncOnce() {
    const token = await this.session();
    const verified = this.record.head ? await parseManifest(this.record.head) : null;
    let state;
    let read;
    let full = this.record.cursor === 0;
    for (;;) {
      read = await pull(this.base, token, full ? 0 : this.record.cursor);
      const chain = verified && read.head && read.head.epoch > verified.epoch
        ? await manifestsAfter(this.base, token, verified.epoch) : [];
      const merged = new Map(full ? [] : [...this.rows].map(([id, row]) => [id, readable(row)]));
      for (const row of read.rows) {
        const known = merged.get(row.id);
        if (!known || row.revision >= known.revision) merged.set(row.id, row);
      }
      try {
        state = await verifyState({ master: this.master, vaultID: this.vaultID, account: this.account, head: read.head,
          chain, rows: [...merged.values()], verified });
        this.rows = new Map([...merged].map(([id, row]) => [id, storable(row)]));
        break;
      } catch (error) {
        if (full || !['withheld', 'mismatch'].includes(error.code)) throw error;
        full = true;
      }
    }
    this.apply(state);
    Object.assign(this.record, { head: state.head?.bytes ?? this.record.head, cursor: read.cursor, last_sync: this.now() });
    await this.store.save(this.record, [...this.rows.values()], { replaceRows: full });
  }

  /** Forgets the keys and the items, and ends the server session. */
  lock() {
    this.master.fill(0);
    for (const item of this.items) {
      if (item.content?.secret) item.content.secret.fill(0);
      if (item.content?.payload) item.content.payload.fill(0);
    }
    this.items = [];
    const token = this.token;
    this.token = null;
    return logout(this.base, token);
  }
}
