// @ts-check
// Pull, merge and push for the browser device, by the CLI's rules (FORMAT.md §8.2, §8.4, §8.6): a pull is verified
// before anything is kept; a row written here that the server changed meanwhile merges (HOTP counters by maximum) or
// becomes a conflict copy; a push carries the manifest of the state it makes, and a 409 is answered by a verified pull
// and another push. Nothing a 409 claims is applied.
import { CofferError, concat, equal, toBase64, u32, u64, utf8, uuidBytes, uuidText } from './bytes.js';
import { hmac, openBox, sealBox } from './crypto.js';
import { encodeContent } from './content.js';
import { fingerprint, itemAD, itemFromPlaintext, leaf, parseManifest, PHOTO_KIND, rowFromWire, stateRoot } from './format.js';
import { itemsKey, manifestKey } from './keys.js';
import { call, manifestsAfter, pull } from './session.js';
import { verifyState } from './verify.js';

/** At most this many rows, and this many bytes of boxes, in one push (§8.2). */
const PUSH_ITEMS = 500;
const PUSH_BYTES = 5 * 1024 * 1024;
const PUSH_ATTEMPTS = 5;

/**
 * @typedef {import('./device.js').Device} Device
 * @typedef {import('./format.js').Token} Token
 * @typedef {import('./format.js').Kept} Kept
 * @typedef {import('./format.js').Manifest} Manifest
 * @typedef {import('./format.js').LeafRow} LeafRow
 * @typedef {import('./content.js').Writable} Writable
 * @typedef {import('./store.js').StoredRow} StoredRow
 * @typedef {import('./store.js').PendingRow} PendingRow
 * @typedef {import('./store.js').Conflict} Conflict
 * @typedef {import('./verify.js').State} State
 */

/**
 * @template [C=import('./format.js').Content]
 * @typedef {import('./format.js').Item<C>} Item
 */

/**
 * A stored row (§8.9) with the byte forms the verifier reads.
 * @param {StoredRow} row
 */
export function readable(row) {
  return { ...row, idBytes: uuidBytes(row.id), boxBytes: row.deleted ? null : row.box };
}

/**
 * A verified wire row as it is stored.
 * @param {Pick<LeafRow, 'id' | 'kind' | 'revision' | 'updated_at' | 'deleted' | 'boxBytes'>} row
 * @returns {StoredRow}
 */
export function storable(row) {
  return { id: row.id, kind: row.kind, revision: row.revision, updated_at: row.updated_at, deleted: row.deleted,
    box: row.boxBytes ?? null };
}

/**
 * Seals `content` of `kind` as item `id` at `revision` (§3, §4): the row to keep pending.
 * @param {Device} device
 * @param {{ id: string, kind: string, content: Writable & { created: number }, revision: number, base: number }} item
 * @returns {Promise<PendingRow>}
 */
export async function sealItem(device, { id, kind, content, revision, base }) {
  const updatedAt = device.now();
  const key = await itemsKey(device.master, device.vaultID);
  const box = await sealBox(key, encodeContent(kind, content), itemAD(device.vaultID, uuidBytes(id), kind, revision, updatedAt));
  key.fill(0);
  return { id, kind, revision, updated_at: updatedAt, deleted: false, box, base_revision: base };
}

/**
 * Opens a row of this vault's items (not a photo part) to `{ id, kind, revision, updated_at, content }`.
 * @param {Device} device
 * @param {{ id: string, kind: string, revision: number, updated_at: number, box: Uint8Array | null }} row a live row
 */
export async function openItem(device, row) {
  const key = await itemsKey(device.master, device.vaultID);
  const plain = await openBox(key, /** @type {Uint8Array} */ (row.box),
    itemAD(device.vaultID, uuidBytes(row.id), row.kind, row.revision, row.updated_at));
  key.fill(0);
  return itemFromPlaintext(row, plain);
}

/**
 * The rows written here, settled against the verified server rows (§8.4). Returns `{ keep, settled, conflicts }`:
 * pending rows to store (replacing theirs), ids whose pending row is dropped, and conflict copies made.
 * @param {Device} device
 * @param {Map<string, LeafRow>} serverRows
 */
async function merge(device, serverRows) {
  /** @type {PendingRow[]} */
  const keep = [];
  /** @type {string[]} */
  const settled = [];
  /** @type {Conflict[]} */
  const conflicts = [];
  for (const mine of device.pending.values()) {
    const theirs = serverRows.get(mine.id);
    if ((theirs?.revision ?? 0) === mine.base_revision) continue;
    // The row written here is dropped; a merged row of the same id in `keep` replaces it.
    settled.push(mine.id);
    // A push whose answer was lost: the server holds exactly this row.
    // Neither is deleted by the time the boxes are compared: both have a box.
    if (theirs && theirs.revision === mine.revision && theirs.updated_at === mine.updated_at
      && theirs.deleted === mine.deleted && (mine.deleted || equal(/** @type {Uint8Array} */ (theirs.boxBytes), /** @type {Uint8Array} */ (mine.box)))) continue;
    // A deletion here loses to an edit there (nothing is lost); a photo part is never edited.
    if (mine.deleted || mine.kind === PHOTO_KIND) continue;
    const local = await openItem(device, mine);
    if (theirs && !theirs.deleted && theirs.kind === 'otp' && mine.kind === 'otp') {
      const remote = /** @type {Item<Token & Kept>} */ (await openItem(device, readableAsStored(theirs)));
      const token = /** @type {Token & Kept} */ (local.content);
      if (token.type === 'hotp' && remote.content.type === 'hotp' && equal(token.secret, remote.content.secret)) {
        // HOTP tokens have their counters.
        const content = { ...remote.content, counter: Math.max(/** @type {number} */ (token.counter), /** @type {number} */ (remote.content.counter)) };
        keep.push(await sealItem(device, { id: mine.id, kind: 'otp', content, revision: Math.max(mine.revision, theirs.revision) + 1,
          base: theirs.revision }));
        continue;
      }
    }
    // Otherwise the server's row stands and what was written here is kept as a new item (same creation time).
    const copy = globalThis.crypto.randomUUID();
    // A row written here holds a kind this page writes (never a signing key).
    const content = /** @type {Writable & Kept} */ (local.kind === 'card' ? { ...local.content, photos: [] } : local.content);
    keep.push(await sealItem(device, { id: copy, kind: mine.kind, content, revision: 1, base: 0 }));
    conflicts.push({ id: copy, original_id: mine.id, detected_at: device.now() });
  }
  return { keep, settled, conflicts };
}

/** @param {LeafRow} row */
function readableAsStored(row) {
  return { id: row.id, kind: row.kind, revision: row.revision, updated_at: row.updated_at, box: row.boxBytes };
}

/** The longest a browser pulls from its cursor without the whole set checked, when the head does not move (§8.6). */
export const FULL_CHECK_INTERVAL_MS = 7 * 86_400_000;

/**
 * Pulls (§8.6): the feed after the stored cursor, verified with the stored rows against the server's head and its
 * link to the verified head; then merged with what waits here, and all of it stored in one transaction. A read from a
 * cursor that does not add up is tried once more from the start (a server restored with its feed numbered anew).
 * A read from the cursor cannot see a row the server lost without a change, so the whole feed is read and checked
 * when another device moved the head, and when the last whole check is a week old.
 * @param {Device} device
 */
export async function pullDevice(device) {
  const token = await device.session();
  const verified = device.record.head ? await parseManifest(device.record.head) : null;
  /** @type {State} */
  let state;
  /** @type {{ rows: LeafRow[], cursor: number, head: Manifest | null }} */
  let read;
  /** @type {Map<string, LeafRow>} */
  let merged;
  const checked = device.record.full_check ?? 0;
  let full = device.record.cursor === 0 || checked > device.now() || device.now() - checked >= FULL_CHECK_INTERVAL_MS;
  for (;;) {
    read = await pull(device.base, token, full ? 0 : device.record.cursor);
    const chain = verified && read.head && read.head.epoch > verified.epoch
      ? await manifestsAfter(device.base, token, verified.epoch) : [];
    if (!full && chain.some((manifest) => !equal(manifest.device, device.record.device_id))) {
      full = true;
      continue;
    }
    // Rows kept from the last verification are `settled`: their leaves and items are reused, not computed again.
    merged = new Map(full ? [] : [...device.rows].map(([id, row]) => /** @type {[string, LeafRow]} */ ([id, { ...readable(row), settled: true }])));
    for (const row of read.rows) {
      const known = merged.get(row.id);
      if (!known || row.revision >= known.revision) merged.set(row.id, row);
    }
    try {
      state = await verifyState({ master: device.master, vaultID: device.vaultID, account: device.account, head: read.head,
        chain, rows: [...merged.values()], verified, known: device.verified });
      break;
    } catch (/** @type {any} */ error) {
      if (full || !['withheld', 'mismatch'].includes(error.code)) throw error;
      full = true;
    }
  }
  device.checkOpen();
  const { keep, settled, conflicts } = await merge(device, merged);
  device.rows = new Map([...merged].map(([id, row]) => [id, storable(row)]));
  for (const id of settled) device.pending.delete(id);
  for (const row of keep) device.pending.set(row.id, row);
  Object.assign(device.record, { head: state.head?.bytes ?? device.record.head, cursor: read.cursor, last_sync: device.now(),
    conflicts: [...(device.record.conflicts ?? []), ...conflicts] });
  if (full) device.record.full_check = device.now();
  await device.store.save(device.record, { rows: [...device.rows.values()], replaceRows: full, pending: keep, settled });
  await device.show(state);
}

/**
 * The manifest of epoch V + 1 (§8.6): the verified rows' leaves with `pushed` replacing theirs.
 * @param {Device} device
 * @param {Manifest} verified
 * @param {PendingRow[]} pushed
 */
async function nextManifest(device, verified, pushed) {
  /** @type {Map<string, [Uint8Array, Uint8Array]>} */
  const leaves = new Map();
  for (const row of device.rows.values()) {
    leaves.set(row.id, [uuidBytes(row.id), device.verified?.leaves.get(row.id) ?? await leaf(readable(row))]);
  }
  for (const row of pushed) leaves.set(row.id, [uuidBytes(row.id), await leaf(readable(row))]);
  const body = concat(utf8('CFM1'), device.vaultID, u64(verified.epoch + 1), verified.hash, await stateRoot([...leaves.values()]),
    u32(leaves.size), device.record.device_id, u64(device.now()), u32(verified.keyEpoch), device.account);
  const key = await manifestKey(device.master, device.vaultID);
  const manifest = await parseManifest(concat(body, await hmac('SHA-256', key, body)));
  key.fill(0);
  return { manifest, leaves };
}

/**
 * The next batch to push: a card before its dropped photo parts, at most 500 rows and 5 MiB of boxes.
 * @param {Map<string, PendingRow>} pending
 */
function batch(pending) {
  const ordered = [...pending.values()].sort((a, b) => Number(a.kind === PHOTO_KIND) - Number(b.kind === PHOTO_KIND));
  /** @type {PendingRow[]} */
  const chosen = [];
  let bytes = 0;
  for (const row of ordered) {
    const size = row.box?.length ?? 0;
    if (chosen.length === PUSH_ITEMS || (chosen.length && bytes + size > PUSH_BYTES)) break;
    chosen.push(row);
    bytes += size;
  }
  return chosen;
}

/**
 * Pushes what waits here, batch by batch, each with the manifest of the state it makes (§8.2). A newer head or a
 * stale base revision (409) is answered with a verified pull, a merge and another push, five times at most; the
 * rows a 409 claims must then be in the verified state at a revision at least as high.
 * @param {Device} device
 */
export async function pushDevice(device) {
  let attempts = 0;
  while (device.pending.size) {
    if (!device.record.head) {
      throw new CofferError('no-head', 'the account has no verified state to write on: run `coffer sync` on a device first');
    }
    const token = await device.session();
    const verified = await parseManifest(device.record.head);
    const rows = batch(device.pending);
    const { manifest, leaves } = await nextManifest(device, verified, rows);
    const items = rows.map((row) => ({
      item: { id: row.id, kind: row.kind, revision: row.revision, updated_at: row.updated_at, deleted: row.deleted,
        ...(row.deleted ? {} : { box: toBase64(/** @type {Uint8Array} */ (row.box)) }) },
      base_revision: row.base_revision,
    }));
    let answer;
    device.checkOpen();
    try {
      answer = await call(device.base, '/v1/sync/push', { method: 'POST', token,
        body: { items, base_epoch: verified.epoch, manifest: toBase64(manifest.bytes) } });
    } catch (/** @type {any} */ error) {
      const code = error.answer?.error;
      if (error.status !== 409 || !['conflict', 'stale_head'].includes(code)) throw error;
      attempts += 1;
      if (attempts > PUSH_ATTEMPTS) throw new CofferError('conflicts', 'other devices keep changing the vault: try again later');
      await pullDevice(device);
      for (const claimed of error.answer?.details?.conflicts ?? []) {
        const row = rowFromWire(claimed);
        if (row.kind.startsWith('cardoncue.')) continue;
        if (!((device.rows.get(row.id)?.revision ?? -1) >= row.revision)) {
          throw new CofferError('unverified-conflict', `the server claimed a revision of item ${uuidText(row.idBytes)} that no `
            + 'device made; nothing was changed here');
        }
      }
      continue;
    }
    if (!Number.isSafeInteger(answer.cursor)) throw new CofferError('malformed', 'the server sent a push answer this version does not understand');
    for (const row of rows) {
      device.rows.set(row.id, storable({ ...row, boxBytes: row.box }));
      device.pending.delete(row.id);
      device.verified?.leaves.set(row.id, /** @type {[Uint8Array, Uint8Array]} */ (leaves.get(row.id))[1]);
      device.verified?.items.delete(row.id);
    }
    Object.assign(device.record, { head: manifest.bytes, cursor: answer.cursor, last_sync: device.now() });
    await device.store.save(device.record, { rows: rows.map((row) => /** @type {StoredRow} */ (device.rows.get(row.id))),
      settled: rows.map((row) => row.id) });
    device.head = manifest;
    device.fingerprint = fingerprint(manifest);
    device.pushedAt = performance.now();
  }
}
