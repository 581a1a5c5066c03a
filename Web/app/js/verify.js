// @ts-check
// What the CLI's StateVerifier checks, done again in the browser before anything is shown (FORMAT.md §8.6): the head's
// tag and vault, its link to the newest head this browser verified, that the rows add up to its count and root, and
// that every live row opens under the items key with its own associated data.
import { CofferError, equal, uuidText } from './bytes.js';
import { aesKey, hmac, openBox } from './crypto.js';
import { PHOTO_KIND, fingerprint, itemAD, itemFromPlaintext, leaf, photoAD, stateRoot } from './format.js';
import { itemsKey, manifestKey, photosKey } from './keys.js';

const NOTHING = 'nothing was shown';

/**
 * @typedef {import('./format.js').Manifest} Manifest
 * @typedef {import('./format.js').LeafRow} LeafRow
 * @typedef {import('./format.js').Item} Item
 * @typedef {{ leaves: Map<string, Uint8Array>, items: Map<string, Item> }} Known what an earlier verification returned
 * @typedef {{ head: Manifest | null, fingerprint: string | null, items: Item[], leaves: Map<string, Uint8Array>,
 *   opened: Map<string, Item> }} State a verified state
 */

/**
 * @param {string} code
 * @param {string} message
 */
function refuse(code, message) {
  return new CofferError(code, `${message}; ${NOTHING}`);
}

/**
 * The manifest's tag verifies under `kMan` and it names this vault.
 * @param {Manifest} manifest
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} kMan
 */
async function authentic(manifest, vaultID, kMan) {
  if (!equal(manifest.vaultID, vaultID)) {
    throw refuse('other-vault', "the server's record of the vault's state belongs to another vault");
  }
  return equal(await hmac('SHA-256', kMan, manifest.body), manifest.tag);
}

/**
 * `head` extends `verified` through `chain` (the manifests after `verified`, oldest first, ending with `head`). A
 * manifest of the chain made under an older master key than the head's cannot be checked by its tag here (the browser
 * holds only the current key), and need not be: the hash links down from the authentic head pin its bytes.
 * @param {Manifest | null} verified
 * @param {Manifest} head
 * @param {Manifest[]} chain
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} kMan
 */
async function checkHistory(verified, head, chain, vaultID, kMan) {
  if (!verified) return;
  if (head.epoch < verified.epoch) {
    throw refuse('rolled-back', `the server shows an older state of the vault (epoch ${head.epoch}) than this browser `
      + `verified (epoch ${verified.epoch})`);
  }
  if (head.epoch === verified.epoch) {
    if (!equal(head.bytes, verified.bytes)) {
      throw refuse('forked', `the server shows a history of the vault that does not continue the one this browser `
        + `verified (epoch ${verified.epoch}): compare fingerprints with \`coffer sync status\``);
    }
    return;
  }
  for (const manifest of chain) {
    if (equal(manifest.bytes, head.bytes)) continue;
    if (!(await authentic(manifest, vaultID, kMan)) && manifest.keyEpoch >= head.keyEpoch) {
      throw refuse('forged-manifest', `the server's record of the vault's state (epoch ${manifest.epoch}) was not made `
        + "with this vault's key: the server forged or changed it");
    }
  }
  let previous = verified.hash;
  let epoch = verified.epoch;
  for (const manifest of chain) {
    if (manifest.epoch !== epoch + 1) {
      throw refuse('broken-chain', `the server's history of the vault has a missing or out-of-order step at epoch ${epoch + 1}`);
    }
    if (!equal(manifest.previous, previous)) {
      if (epoch === verified.epoch) {
        throw refuse('forked', `the server shows a history of the vault that does not continue the one this browser `
          + `verified (epoch ${verified.epoch}): compare fingerprints with \`coffer sync status\``);
      }
      throw refuse('broken-chain', `the server's history of the vault has a missing or out-of-order step at epoch ${manifest.epoch}`);
    }
    previous = manifest.hash;
    epoch = manifest.epoch;
  }
  if (epoch !== head.epoch || !chain.length || !equal(chain[chain.length - 1].bytes, head.bytes)) {
    throw refuse('broken-chain', `the server's history of the vault has a missing or out-of-order step at epoch ${epoch + 1}`);
  }
}

/**
 * The newest row of each id of a full read of the feed, without the server's own CardOnCue cards (§8.6).
 * @template {{ id: string, kind: string, revision: number }} Row
 * @param {Row[]} rows
 */
export function newestRows(rows) {
  /** @type {Map<string, Row>} */
  const byID = new Map();
  for (const row of rows) {
    if (row.kind.startsWith('cardoncue.')) continue;
    const known = byID.get(row.id);
    if (!known || row.revision >= known.revision) byID.set(row.id, row);
  }
  return [...byID.values()];
}

/**
 * Verifies a full read of the account and opens its items. Throws a CofferError naming the broken rule; returns
 * `{ head, fingerprint, items }`, where each item carries its id, kind, revision, `updated_at` and decoded content
 * (or `unsupported` for a kind this reader does not know).
 *
 * - `master`, `vaultID`: the unwrapped master key and the vault id (16 bytes each side).
 * - `account`: the commitment of the slot the server handed out at this login (§8.1).
 * - `head`: the last page's manifest (parsed) or null; `chain`: the manifests after `verified`, oldest first.
 * - `verified`: the newest head this browser verified before (parsed) or null.
 * - `known`: what an earlier verification returned (`{ leaves, items }`); a row marked `settled` (passed on unchanged
 *   from that verification, not read from the server again) takes its leaf and item from it instead of being hashed
 *   and opened again.
 *
 * Also returns `leaves` and `opened` (item by id) for the next call's `known`.
 *
 * @param {object} options
 * @param {Uint8Array} options.master
 * @param {Uint8Array} options.vaultID
 * @param {Uint8Array} options.account
 * @param {Manifest | null} options.head
 * @param {Manifest[]} [options.chain]
 * @param {LeafRow[]} options.rows
 * @param {Manifest | null} [options.verified]
 * @param {Known | null} [options.known]
 * @returns {Promise<State>}
 */
export async function verifyState({ master, vaultID, account, head, chain = [], rows, verified = null, known = null }) {
  const current = newestRows(rows);
  const kMan = await manifestKey(master, vaultID);
  if (!head) {
    if (verified) {
      throw refuse('head-missing', `the server holds no record of the vault's state although this browser verified epoch ${verified.epoch}`);
    }
    if (current.length) {
      throw refuse('head-missing', "the server shows items but no authenticated record of the vault's state (run `coffer sync` on a device)");
    }
    return { head: null, fingerprint: null, items: [], leaves: new Map(), opened: new Map() };
  }
  if (!(await authentic(head, vaultID, kMan))) {
    throw refuse('forged-manifest', `the server's record of the vault's state (epoch ${head.epoch}) was not made with `
      + "this vault's key: the server forged or changed it");
  }
  if (!equal(head.account, account)) {
    throw refuse('slot-reverted', "the server handed out an account passphrase slot other than the vault's current one "
      + '(an old passphrase’s?)');
  }
  await checkHistory(verified, head, chain, vaultID, kMan);

  // A reused row's leaf and item come from `known`, which holds them (the casts below say so).
  /** @type {(row: LeafRow) => boolean | undefined} */
  const reused = (row) => row.settled && known?.leaves.has(row.id);
  const leaves = await Promise.all(current.map(async (row) => /** @type {[Uint8Array, Uint8Array]} */ (
    [row.idBytes, reused(row) ? /** @type {Known} */ (known).leaves.get(row.id) : await leaf(row)])));
  if (leaves.length < head.count) {
    throw refuse('withheld', `the server withheld items: the vault's verified state holds ${head.count} rows, the `
      + `server's answer adds up to ${leaves.length}`);
  }
  const ik = await aesKey(await itemsKey(master, vaultID));
  const phk = await aesKey(await photosKey(master, vaultID));
  /** @type {(row: LeafRow) => Promise<Uint8Array>} a live row's box, opened */
  const open = async (row) => {
    const box = /** @type {Uint8Array} */ (row.boxBytes);
    try {
      // Card photo parts (§5b) are checked like every row; the page does not show photos.
      if (row.kind === PHOTO_KIND) return await openBox(phk, box, photoAD(vaultID, row.idBytes, row.revision, row.updated_at));
      return await openBox(ik, box, itemAD(vaultID, row.idBytes, row.kind, row.revision, row.updated_at));
    } catch {
      throw refuse('altered', `item ${uuidText(row.idBytes)} from the server does not open with this vault's key: it `
        + 'was altered or swapped');
    }
  };
  if (leaves.length !== head.count || !equal(await stateRoot(leaves), head.root)) {
    // The likeliest cause first: a box that does not open names its item.
    for (const row of current) if (!row.deleted) (await open(row)).fill(0);
    throw refuse('mismatch', "the items the server sent do not add up to the vault's authenticated state: it withheld "
      + 'or changed some');
  }

  /** @type {Item[]} */
  const items = [];
  /** @type {Map<string, Item>} */
  const opened = new Map();
  for (const row of current) {
    if (row.deleted) continue;
    if (reused(row) && (row.kind === PHOTO_KIND || /** @type {Known} */ (known).items.has(row.id))) {
      if (row.kind !== PHOTO_KIND) {
        const item = /** @type {Item} */ (/** @type {Known} */ (known).items.get(row.id));
        items.push(item);
        opened.set(row.id, item);
      }
      continue;
    }
    const plain = await open(row);
    if (row.kind === PHOTO_KIND) {
      plain.fill(0);
      continue;
    }
    const item = itemFromPlaintext(row, plain);
    items.push(item);
    opened.set(row.id, item);
  }
  const leafByID = new Map(current.map((row, index) => [row.id, leaves[index][1]]));
  return { head, fingerprint: fingerprint(head), items, leaves: leafByID, opened };
}
