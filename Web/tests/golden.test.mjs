// The committed format-v1 golden vault, read by the web reader: the same items as the Python reader finds, and every
// single-bit flip of a box, of a field of its associated data, or of the passphrase slot refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hex, u32, u64, utf8 } from '../app/js/bytes.js';
import { encodeContent } from '../app/js/content.js';
import { openBox } from '../app/js/crypto.js';
import { associatedData, decodeContent, itemAD, kdfEncoding, SLOT_PASSPHRASE } from '../app/js/format.js';
import { itemsKey, unwrapMaster } from '../app/js/keys.js';
import { bitFlips, goldenPassphrase, goldenVault, oracle, pythonShape, unlockFile, vaultRows } from './support.mjs';

const rows = vaultRows(goldenVault);
const unlocked = await unlockFile(rows, goldenPassphrase);
const ik = await itemsKey(unlocked.master, rows.vaultID);

async function openItem(item, overrides = {}) {
  const f = { vaultID: rows.vaultID, id: item.idBytes, kind: item.kind, revision: item.revision,
    updated_at: item.updated_at, box: item.boxBytes, ...overrides };
  return decodeContent(item.kind, await openBox(ik, f.box, itemAD(f.vaultID, f.id, f.kind, f.revision, f.updated_at)));
}

test('every item of the golden vault reads as the Python reader reads it', async () => {
  const [python] = oracle([{ op: 'read_vault', path: goldenVault, secret_kind: 'passphrase', secret: goldenPassphrase }]);
  const mine = [];
  for (const item of rows.items.filter((row) => !row.deleted)) {
    const { unknown, photos, ...content } = await openItem(item);
    assert.deepEqual([unknown, photos ?? []], [[], []], 'format 1.0 has no fields past its own and no photos');
    mine.push({ id: item.id, kind: item.kind, content: pythonShape(content) });
  }
  const theirs = python.items.map(({ id, kind, content }) => ({ id, kind, content }));
  assert.equal(mine.length, 8);
  assert.deepEqual(mine, theirs);
  const costco = mine.find((item) => item.content.name === 'Costco').content;
  assert.equal(Buffer.from(costco.payload, 'hex').toString(), '111222333444');
  assert.equal(costco.symbology, 'code128');
});

test('the web writer writes every item of the golden vault back byte for byte (signing keys are the CLI’s)', async () => {
  let written = 0;
  for (const item of rows.items.filter((row) => !row.deleted && row.kind !== 'signing_key')) {
    const plain = await openBox(ik, item.boxBytes, itemAD(rows.vaultID, item.idBytes, item.kind, item.revision, item.updated_at));
    assert.equal(hex(encodeContent(item.kind, decodeContent(item.kind, plain))), hex(plain), `${item.kind} ${item.id}`);
    written += 1;
  }
  assert.equal(written, 7);
});

test('the wrong passphrase does not open the slot', async () => {
  await assert.rejects(unlockFile(rows, 'golden passphrase v2'), { code: 'box' });
});

test('every single-bit flip of every item box is refused', async () => {
  let flips = 0;
  for (const item of rows.items.filter((row) => !row.deleted)) {
    for (const box of bitFlips(item.boxBytes)) {
      await assert.rejects(openItem(item, { box }), { code: 'box' });
      flips++;
    }
  }
  assert.ok(flips > 8000, `${flips} flips`);
});

test('every single-bit flip of an item AD field (vault id, item id, kind, revision, updated_at, box version) is refused', async () => {
  const item = rows.items.find((row) => row.kind === 'card');
  const fields = [rows.vaultID, item.idBytes, utf8(item.kind), u64(item.revision), u64(item.updated_at), u32(1)];
  for (const [index, field] of fields.entries()) {
    for (const flipped of bitFlips(field)) {
      const ad = associatedData('coffer/v1/item', ...fields.map((f, i) => (i === index ? flipped : f)));
      await assert.rejects(openBox(ik, item.boxBytes, ad), { code: 'box' }, `field ${index}`);
    }
  }
});

test('every single-bit flip of the passphrase slot (wrapped key, id, type, KDF, salt, vault id) is refused', async () => {
  const { slot, kdf, kek } = unlocked;
  for (const wrapped of bitFlips(slot.wrapped_key)) {
    await assert.rejects(unwrapMaster(kek, rows.vaultID, slot.id, kdf, slot.salt, wrapped), { code: 'box' });
  }
  // The header fields are bound as AD: even opened with the right KEK (a tampered header that kept the KDF's output),
  // a changed id, type, KDF encoding, salt or vault id fails.
  const fields = [rows.vaultID, slot.id, Uint8Array.of(SLOT_PASSPHRASE), kdfEncoding(kdf), slot.salt];
  for (const [index, field] of fields.entries()) {
    for (const flipped of bitFlips(field)) {
      const ad = associatedData('coffer/v1/slot', ...fields.map((f, i) => (i === index ? flipped : f)));
      await assert.rejects(openBox(kek, slot.wrapped_key, ad), { code: 'box' }, `slot field ${index}`);
    }
  }
});

test('item content: unknown tags are skipped, overruns and later versions refused', () => {
  const name = [16, 3, ...utf8('Gym')];
  const base = [1, 1, 8, 0, 0, 0, 0, 0, 0, 0, 1, ...name, 18, 1, 0x31, 19, 5, ...utf8('utf-8')];
  assert.equal(decodeContent('card', Uint8Array.from([...base, 99, 2, 7, 7])).name, 'Gym');
  assert.throws(() => decodeContent('card', Uint8Array.from([...base, 99, 5, 7])), /runs past the end/);
  assert.throws(() => decodeContent('card', Uint8Array.from([...base, 99, 0x80])), /truncated/);
  assert.throws(() => decodeContent('card', Uint8Array.from([2, ...base.slice(1)])), /version 2/);
  assert.throws(() => decodeContent('card', Uint8Array.from(base.slice(0, 11))), /missing name/);
  assert.throws(() => decodeContent('card', Uint8Array.from([...base, 17, 3, ...utf8('xyz')])), /unknown symbology/);
  assert.throws(() => decodeContent('card', Uint8Array.from([...base.slice(0, 11), 16, 1, 0xff, ...base.slice(16)])), /not UTF-8/);
});
