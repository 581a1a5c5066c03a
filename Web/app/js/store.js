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
 */
class VaultStore {
  /** The record of the vault the normalised email opens here, or null. */
  async vaultByEmail(email) {
    return (await this.vaults()).find((vault) => vault.email === email) ?? null;
  }
}

function request(idbRequest) {
  return new Promise((resolve, reject) => {
    idbRequest.onsuccess = () => resolve(idbRequest.result);
    idbRequest.onerror = () => reject(idbRequest.error);
  });
}

/** A transaction's end; a refusal (storage full, the user cleared the site's data) is one plain error. */
function done(transaction) {
  const refused = () => new CofferError('storage', 'this browser refused to store the change (is its storage full?); '
    + 'nothing of it was kept');
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(refused());
    transaction.onabort = () => reject(refused());
  });
}

function range(vaultID) {
  return IDBKeyRange.bound([vaultID, ''], [vaultID, '\uffff']);
}

/** The page's store: IndexedDB database `coffer`, object stores `vaults` (by vault id), `rows` and `pending` (by vault id, id). */
export class IndexedStore extends VaultStore {
  constructor(database) {
    super();
    this.database = database;
  }

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

  async vaults() {
    return request(this.database.transaction('vaults').objectStore('vaults').getAll());
  }

  async rows(vaultID, kind = 'rows') {
    return request(this.database.transaction(kind).objectStore(kind).getAll(range(vaultID)));
  }

  async pending(vaultID) {
    return this.rows(vaultID, 'pending');
  }

  /** One transaction: a crash keeps the old state or the new. */
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
    this.records = new Map();
    this.rowsByVault = new Map();
    this.pendingByVault = new Map();
  }

  async vaults() {
    return [...this.records.values()].map((vault) => structuredClone(vault));
  }

  async rows(vaultID) {
    return [...(this.rowsByVault.get(vaultID)?.values() ?? [])].map((row) => structuredClone(row));
  }

  async pending(vaultID) {
    return [...(this.pendingByVault.get(vaultID)?.values() ?? [])].map((row) => structuredClone(row));
  }

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

  async forget(vaultID) {
    this.records.delete(vaultID);
    this.rowsByVault.delete(vaultID);
    this.pendingByVault.delete(vaultID);
  }
}
