// The committed format-v1 golden vault, read by the web reader: the same items as the Python reader finds, and every
// single-bit flip of a box, of a field of its associated data, or of the passphrase slot refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hex, utf8 } from '../app/js/bytes.js';
import { encodeContent } from '../app/js/content.js';
import { openBox } from '../app/js/crypto.js';
import { decodeContent, itemAD } from '../app/js/format.js';
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

/** Each value `n` becomes with one of its bits 0…52 flipped (integers a Number holds exactly). */
function numberFlips(n) {
  return Array.from({ length: 53 }, (_, bit) => Number(BigInt(n) ^ (1n << BigInt(bit))));
}

// The row's fields are changed and the box opened the way the app opens it (`itemAD` from the row), so a field the
// app's associated data left out would open here and fail the test; building the AD by hand would test only WebCrypto.
test('every single-bit flip of a row field the item AD binds (vault id, item id, kind, revision, updated_at) is refused', async () => {
  const item = rows.items.find((row) => row.kind === 'card');
  const overrides = [
    ...[...bitFlips(rows.vaultID)].map((vaultID) => ({ vaultID })),
    ...[...bitFlips(item.idBytes)].map((id) => ({ id })),
    ...['cart', 'Card', 'card ', 'otp', 'note', ''].map((kind) => ({ kind })),
    ...numberFlips(item.revision).map((revision) => ({ revision })),
    ...numberFlips(item.updated_at).map((updated_at) => ({ updated_at })),
  ];
  for (const override of overrides) {
    await assert.rejects(openItem(item, override), { code: 'box' }, JSON.stringify(Object.keys(override)));
  }
  assert.ok(overrides.length > 300, `${overrides.length} changes`);
  // The control: unchanged, it opens.
  assert.equal((await openItem(item)).name, 'Costco');
});

test('every single-bit flip of the passphrase slot (wrapped key, id, KDF, salt, vault id) is refused', async () => {
  const { slot, kdf, kek } = unlocked;
  for (const wrapped of bitFlips(slot.wrapped_key)) {
    await assert.rejects(unwrapMaster(kek, rows.vaultID, slot.id, kdf, slot.salt, wrapped), { code: 'box' });
  }
  // The header fields are bound as AD: even opened with the right KEK (a tampered header that kept the KDF's output),
  // a changed id, KDF, salt or vault id fails, through the app's own unwrap.
  const kdfChanges = kdf.id === 1
    ? numberFlips(kdf.iterations).filter((iterations) => iterations < 2 ** 32).map((iterations) => ({ ...kdf, iterations }))
    : [{ ...kdf, logN: kdf.logN ^ 1 }, { ...kdf, r: kdf.r ^ 1 }, { ...kdf, p: kdf.p ^ 1 }];
  const changes = [
    ...[...bitFlips(rows.vaultID)].map((vaultID) => [vaultID, slot.id, kdf, slot.salt]),
    ...[...bitFlips(slot.id)].map((id) => [rows.vaultID, id, kdf, slot.salt]),
    ...kdfChanges.map((changed) => [rows.vaultID, slot.id, changed, slot.salt]),
    ...[...bitFlips(slot.salt)].map((salt) => [rows.vaultID, slot.id, kdf, salt]),
  ];
  for (const [vaultID, id, changedKDF, salt] of changes) {
    await assert.rejects(unwrapMaster(kek, vaultID, id, changedKDF, salt, slot.wrapped_key), { code: 'box' });
  }
  assert.equal((await unwrapMaster(kek, rows.vaultID, slot.id, kdf, slot.salt, slot.wrapped_key)).length, 32);
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
