// @ts-check
// This browser's copy of a synced vault (FORMAT.md §8.9): what the server holds, as ciphertext only — the account's
// passphrase slot, every row's box, the newest manifest this browser verified, the feed cursor, and the auth key sealed
// under the vault's own key. Nothing decrypted is ever stored. Two stores with one interface: IndexedDB in the page, a
// Map in the node tests.
import { CofferError } from './bytes.js';

const DATABASE = 'coffer';
const VERSION = 1;

/**
 * A vault's record: `{ vault_id, email, kdf, salt, slot_id, wrapped_key, head, cursor, last_sync, device_id,
 * auth_box, conflicts }` (bytes as Uint8Array, `head` null before the first manifest). Rows: `{ vault_id, id, kind,
 * revision, updated_at, deleted, box }` with `box` null for a tombstone: `rows` holds the server's rows this browser
 * verified, `pending` the rows written here and not yet pushed, each with the server revision it replaces
 * (`base_revision`).
 *
 * `save(record, { rows, replaceRows, pending, settled })` writes, in one transaction, the record, the verified rows
 * (all of them replaced when `replaceRows`), the pending rows to keep, and drops the pending rows named in `settled`.
 *
 * @typedef {object} VaultRecord
 * @property {string} vault_id lower-case UUID text
 * @property {string} email normalised
 * @property {any} kdf the account's KDF as the server's JSON gave it (format.js's kdfFromWire reads it)
 * @property {Uint8Array} salt
 * @property {string} slot_id
 * @property {Uint8Array} wrapped_key
 * @property {Uint8Array | null} head
 * @property {number} cursor
 * @property {number | null} last_sync Unix ms
 * @property {Uint8Array} device_id
 * @property {Uint8Array | null} auth_box
 * @property {Conflict[]} conflicts
 * @property {PasskeySlot} [passkey]
 * @property {number} [full_check] when the whole feed was last read and checked (Unix ms; sync.js)
 *
 * @typedef {{ id: string, original_id: string, detected_at: number }} Conflict a conflict copy made here
 *
 * @typedef {object} PasskeySlot the master key wrapped under a passkey's PRF output (passkey.js)
 * @property {Uint8Array} credential_id
 * @property {string} rp_id
 * @property {Uint8Array} salt
 * @property {Uint8Array} wrapped_key
 * @property {number} failures
 * @property {number} created_at
 *
 * @typedef {object} StoredRow
 * @property {string} id
 * @property {string} kind
 * @property {number} revision
 * @property {number} updated_at
 * @property {boolean} deleted
 * @property {Uint8Array | null} box
 * @property {string} [vault_id] set by the store
 *
 * @typedef {StoredRow & { base_revision: number }} PendingRow
 *
 * @typedef {{ rows?: StoredRow[], replaceRows?: boolean, pending?: PendingRow[], settled?: string[] }} Changes
 *
 * @typedef {object} Store
 * @property {(email: string) => Promise<VaultRecord | null>} vaultByEmail
 * @property {() => Promise<VaultRecord[]>} vaults
 * @property {(vaultID: string) => Promise<StoredRow[]>} rows
 * @property {(vaultID: string) => Promise<PendingRow[]>} pending
 * @property {(vault: VaultRecord, changes?: Changes) => Promise<void>} save
 * @property {(vaultID: string) => Promise<void>} forget
 */
class VaultStore {
  /**
   * The record of the vault the normalised email opens here, or null.
   * @this {Store}
   * @param {string} email
   */
  async vaultByEmail(email) {
    return (await this.vaults()).find((vault) => vault.email === email) ?? null;
  }
}

/**
 * @template T
 * @param {IDBRequest<T>} idbRequest
 * @returns {Promise<T>}
 */
function request(idbRequest) {
  return new Promise((resolve, reject) => {
    idbRequest.onsuccess = () => resolve(idbRequest.result);
    idbRequest.onerror = () => reject(idbRequest.error);
  });
}

/**
 * A transaction's end; a refusal (storage full, the user cleared the site's data) is one plain error.
 * @param {IDBTransaction} transaction
 * @returns {Promise<void>}
 */
function done(transaction) {
  const refused = () => new CofferError('storage', 'this browser refused to store the change (is its storage full?); '
    + 'nothing of it was kept');
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(refused());
    transaction.onabort = () => reject(refused());
  });
}

/** @param {string} vaultID */
function range(vaultID) {
  return IDBKeyRange.bound([vaultID, ''], [vaultID, '\uffff']);
}

/** The page's store: IndexedDB database `coffer`, object stores `vaults` (by vault id), `rows` and `pending` (by vault id, id). */
export class IndexedStore extends VaultStore {
  /** @param {IDBDatabase} database */
  constructor(database) {
    super();
    this.database = database;
  }

  /** @param {IDBFactory} [factory] */
  static async open(factory = globalThis.indexedDB) {
    if (!factory) throw new CofferError('storage', 'this browser keeps no data for pages (IndexedDB is off)');
    const opening = factory.open(DATABASE, VERSION);
    opening.onupgradeneeded = () => {
      const database = opening.result;
      database.createObjectStore('vaults', { keyPath: 'vault_id' });
      database.createObjectStore('rows', { keyPath: ['vault_id', 'id'] });
      database.createObjectStore('pending', { keyPath: ['vault_id', 'id'] });
    };
    try {
      return new IndexedStore(await request(opening));
    } catch {
      throw new CofferError('storage', 'this browser refused to keep the vault (private mode, or storage is full)');
    }
  }

  /** @returns {Promise<VaultRecord[]>} */
  async vaults() {
    return request(this.database.transaction('vaults').objectStore('vaults').getAll());
  }

  /**
   * @param {string} vaultID
   * @returns {Promise<StoredRow[]>}
   */
  async rows(vaultID, kind = 'rows') {
    return request(this.database.transaction(kind).objectStore(kind).getAll(range(vaultID)));
  }

  /**
   * @param {string} vaultID
   * @returns {Promise<PendingRow[]>}
   */
  async pending(vaultID) {
    return /** @type {Promise<PendingRow[]>} */ (this.rows(vaultID, 'pending'));
  }

  /**
   * One transaction: a crash keeps the old state or the new.
   * @param {VaultRecord} vault
   * @param {Changes} changes
   */
  async save(vault, { rows = [], replaceRows = false, pending = [], settled = [] } = {}) {
    const transaction = this.database.transaction(['vaults', 'rows', 'pending'], 'readwrite');
    const finished = done(transaction);
    const rowStore = transaction.objectStore('rows');
    if (replaceRows) rowStore.delete(range(vault.vault_id));
    for (const row of rows) rowStore.put({ ...row, vault_id: vault.vault_id });
    const pendingStore = transaction.objectStore('pending');
    for (const id of settled) pendingStore.delete([vault.vault_id, id]);
    for (const row of pending) pendingStore.put({ ...row, vault_id: vault.vault_id });
    transaction.objectStore('vaults').put(vault);
    await finished;
  }

  /** @param {string} vaultID */
  async forget(vaultID) {
    const transaction = this.database.transaction(['vaults', 'rows', 'pending'], 'readwrite');
    const finished = done(transaction);
    transaction.objectStore('rows').delete(range(vaultID));
    transaction.objectStore('pending').delete(range(vaultID));
    transaction.objectStore('vaults').delete(vaultID);
    await finished;
  }
}

/** The same interface over Maps, with structured copies in and out as IndexedDB makes them. */
export class MemoryStore extends VaultStore {
  constructor() {
    super();
    /** @type {Map<string, VaultRecord>} */
    this.records = new Map();
    /** @type {Map<string, Map<string, StoredRow>>} */
    this.rowsByVault = new Map();
    /** @type {Map<string, Map<string, PendingRow>>} */
    this.pendingByVault = new Map();
  }

  async vaults() {
    return [...this.records.values()].map((vault) => structuredClone(vault));
  }

  /** @param {string} vaultID */
  async rows(vaultID) {
    return [...(this.rowsByVault.get(vaultID)?.values() ?? [])].map((row) => structuredClone(row));
  }

  /** @param {string} vaultID */
  async pending(vaultID) {
    return [...(this.pendingByVault.get(vaultID)?.values() ?? [])].map((row) => structuredClone(row));
  }

  /**
   * @param {VaultRecord} vault
   * @param {Changes} changes
   */
  async save(vault, { rows = [], replaceRows = false, pending = [], settled = [] } = {}) {
    const stored = replaceRows ? new Map() : new Map(this.rowsByVault.get(vault.vault_id) ?? []);
    for (const row of rows) stored.set(row.id, structuredClone({ ...row, vault_id: vault.vault_id }));
    const waiting = new Map(this.pendingByVault.get(vault.vault_id) ?? []);
    for (const id of settled) waiting.delete(id);
    for (const row of pending) waiting.set(row.id, structuredClone({ ...row, vault_id: vault.vault_id }));
    this.rowsByVault.set(vault.vault_id, stored);
    this.pendingByVault.set(vault.vault_id, waiting);
    this.records.set(vault.vault_id, structuredClone(vault));
  }

  /** @param {string} vaultID */
  async forget(vaultID) {
    this.records.delete(vaultID);
    this.rowsByVault.delete(vaultID);
    this.pendingByVault.delete(vaultID);
  }
}
