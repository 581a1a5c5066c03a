// Manifests (FORMAT.md §8.6) against the golden vectors written by Tests/oracles/make_manifest_golden.py, and the
// state verifier against the ways a server can lie: each refused with its own rule, nothing returned.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { concat, fromBase64, fromHex, hex, toBase64, u32, u64, utf8, uuidBytes } from '../app/js/bytes.js';
import { hmac, sha256 } from '../app/js/crypto.js';
import {
  accountCommitment, fingerprint, itemAD, kdfFromWire, leaf, manifestFromBase64, parseManifest, photoAD, rowFromWire,
  stateRoot,
} from '../app/js/format.js';
import { itemsKey, manifestKey, photosKey } from '../app/js/keys.js';
import { verifyState } from '../app/js/verify.js';
import { bitFlips, root } from './support.mjs';

const golden = JSON.parse(readFileSync(join(root, 'Tests/Vectors/manifests/manifest_v1.json'), 'utf8'));
const goldenVaultID = uuidBytes(golden.vault_id);

function wireRow(row) {
  return rowFromWire({ ...row, box: row.box === null ? undefined : toBase64(fromHex(row.box)) });
}

test('the golden manifests parse, hash, link and verify as written', async () => {
  const kMan = await manifestKey(fromHex(golden.master_key), goldenVaultID);
  assert.equal(hex(kMan), golden.manifest_key);
  assert.equal(hex(await accountCommitment(kdfFromWire(golden.kdf), fromHex(golden.salt))), golden.account);
  let previous = new Uint8Array(32);
  for (const vector of golden.manifests) {
    const manifest = await manifestFromBase64(vector.base64);
    assert.equal(hex(manifest.bytes), vector.manifest);
    assert.equal(manifest.epoch, vector.epoch);
    assert.equal(manifest.count, vector.count);
    assert.equal(manifest.madeAt, vector.made_at);
    assert.equal(manifest.keyEpoch, golden.key_epoch);
    assert.equal(hex(manifest.device), golden.device.replaceAll('-', ''));
    assert.equal(hex(manifest.hash), vector.hash);
    assert.equal(fingerprint(manifest), vector.fingerprint);
    assert.equal(hex(manifest.previous), hex(previous));
    assert.equal(hex(await hmac('SHA-256', kMan, manifest.body)), vector.tag);
    const rows = vector.rows.map(wireRow);
    for (const row of rows) assert.equal(hex(await leaf(row)), vector.leaves[row.id]);
    assert.equal(hex(await stateRoot(await Promise.all(rows.map(async (row) => [row.idBytes, await leaf(row)])))), vector.root);
    previous = manifest.hash;
    for (const flipped of bitFlips(manifest.bytes)) {
      const parsed = await parseManifest(flipped).catch(() => null);
      if (parsed) assert.notEqual(hex(await hmac('SHA-256', kMan, parsed.body)), hex(parsed.tag));
    }
  }
});

// A small synced state made here, as a device would push it: real boxes under a master key, manifests of FORMAT.md.

const vaultID = fromHex('0f1e2d3c4b5a49788695a4b3c2d1e0f0');
const master = fromHex('11'.repeat(32));
const kdf = kdfFromWire({ algorithm: 'pbkdf2-sha256', iterations: 600000 });
const account = await accountCommitment(kdf, fromHex('5a'.repeat(32)));

async function seal(row, content) {
  const key = await crypto.subtle.importKey('raw', await itemsKey(master, vaultID), 'AES-GCM', false, ['encrypt']);
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const ad = itemAD(vaultID, uuidBytes(row.id), row.kind, row.revision, row.updated_at);
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: ad }, key, content));
  return { ...row, deleted: false, box: toBase64(concat(nonce, sealed)) };
}

function cardContent(name) {
  return Uint8Array.from([1, 1, 8, ...u64(1), 16, name.length, ...utf8(name), 18, 1, 0x31, 19, 5, ...utf8('utf-8')]);
}

async function manifest(epoch, previous, rows, { key = master, keyEpoch = 1, accountBytes = account, vault = vaultID } = {}) {
  const parsed = rows.map(rowFromWire);
  const rootBytes = await stateRoot(await Promise.all(parsed.map(async (row) => [row.idBytes, await leaf(row)])));
  const body = concat(utf8('CFM1'), vault, u64(epoch), previous, rootBytes, u32(parsed.length), new Uint8Array(16),
    u64(1767225600000), u32(keyEpoch), accountBytes);
  return parseManifest(concat(body, await hmac('SHA-256', await manifestKey(key, vault), body)));
}

const a = await seal({ id: '00000000-0000-4000-8000-000000000001', kind: 'card', revision: 1, updated_at: 1000 }, cardContent('Gym'));
const b = await seal({ id: '00000000-0000-4000-8000-000000000002', kind: 'card', revision: 1, updated_at: 1000 }, cardContent('Zoo'));
const b2 = await seal({ ...b, revision: 2, updated_at: 2000 }, cardContent('Zoo 2'));
const m1 = await manifest(1, new Uint8Array(32), [a, b]);
const m2 = await manifest(2, m1.hash, [a, b2]);

function verify(head, wire, extra = {}) {
  return verifyState({ master, vaultID, account, head, rows: wire.map(rowFromWire), ...extra });
}

test('an honest state verifies and opens; a newer one extends the verified head', async () => {
  const first = await verify(m1, [a, b]);
  assert.deepEqual(first.items.map((item) => item.content.name).sort(), ['Gym', 'Zoo']);
  const second = await verify(m2, [a, b, b2], { verified: m1, chain: [m2] });
  assert.deepEqual(second.items.map((item) => item.content.name).sort(), ['Gym', 'Zoo 2']);
  assert.match(second.fingerprint, /^2:[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
});

test('each lie of a server is refused with its rule', async () => {
  const rejects = (promise, code) => assert.rejects(promise, (error) => error.code === code && /nothing was shown/.test(error.message), code);
  await rejects(verify(m1, [a, b], { verified: m2 }), 'rolled-back');
  await rejects(verify(m1, [a]), 'withheld');
  await rejects(verify(m2, [a, b]), 'mismatch');
  const tampered = { ...b, box: toBase64(fromBase64(b.box).map((byte, i) => (i === 20 ? byte ^ 1 : byte))) };
  const forgedRoot = await manifest(1, new Uint8Array(32), [a, tampered]);
  await rejects(verify(forgedRoot, [a, tampered]), 'altered');
  await rejects(verify(await manifest(1, new Uint8Array(32), [a, b], { key: fromHex('22'.repeat(32)) }), [a, b]), 'forged-manifest');
  await rejects(verify(await manifest(1, new Uint8Array(32), [a, b], { accountBytes: new Uint8Array(32) }), [a, b]), 'slot-reverted');
  await rejects(verify(await manifest(2, new Uint8Array(32), [a, b2]), [a, b2], { verified: m1, chain: [] }), 'broken-chain');
  const other = await manifest(2, new Uint8Array(32), [a, b2]);
  await rejects(verify(other, [a, b2], { verified: m1, chain: [other] }), 'forked');
  await rejects(verify(await manifest(2, m1.hash, [a, b]), [a, b], { verified: m2, chain: [] }), 'forked');
  await rejects(verify(null, [a, b]), 'head-missing');
  await rejects(verify(await manifest(1, new Uint8Array(32), [a, b], { vault: fromHex('33'.repeat(16)) }), [a, b]), 'other-vault');
  assert.equal(hex(await sha256(m1.bytes)), hex(m1.hash));
});

test('a card photo part (FORMAT.md §5b) verifies under the photo key and is not shown; one under another key is refused', async () => {
  const row = { id: '00000000-0000-4000-8000-0000000000a1', kind: 'card_photo', revision: 1, updated_at: 1000 };
  const plaintext = concat(Uint8Array.from([1]), uuidBytes(a.id), Uint8Array.from([1, 0, 0, 0, 1]), Uint8Array.from([0x89, 0x50]));
  const sealWith = async (rawKey) => {
    const key = await crypto.subtle.importKey('raw', rawKey, 'AES-GCM', false, ['encrypt']);
    const nonce = crypto.getRandomValues(new Uint8Array(12));
    const ad = photoAD(vaultID, uuidBytes(row.id), row.revision, row.updated_at);
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: ad }, key, plaintext));
    return { ...row, deleted: false, box: toBase64(concat(nonce, sealed)) };
  };
  const part = await sealWith(await photosKey(master, vaultID));
  const state = await verify(await manifest(1, new Uint8Array(32), [a, part]), [a, part]);
  assert.deepEqual(state.items.map((item) => item.kind), ['card']);
  const wrong = await sealWith(await itemsKey(master, vaultID));
  await assert.rejects(verify(await manifest(1, new Uint8Array(32), [a, wrong]), [a, wrong]), (error) => error.code === 'altered');
});
