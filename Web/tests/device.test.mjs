// The browser as a device (FORMAT.md §8.9): the first unlock copies the vault into the store as ciphertext only; later
// unlocks open that copy with no network; a sync reads the feed after the stored cursor; and what the device verified
// survives a restart, so a server that rolls it back, forks it or changes the stored copy is refused. A stand-in
// server (a stubbed fetch) holds a state made as a device pushes it: real boxes, a real passphrase slot, manifests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concat, toBase64, u32, u64, utf8, uuidBytes } from '../app/js/bytes.js';
import { hmac, sealBox } from '../app/js/crypto.js';
import { accountCommitment, itemAD, kdfEncoding, kdfFromWire, leaf, parseManifest, rowFromWire, slotAD, SLOT_PASSPHRASE, stateRoot } from '../app/js/format.js';
import { accountKeys, itemsKey, manifestKey } from '../app/js/keys.js';
import { Device, unlock } from '../app/js/device.js';
import { MemoryStore } from '../app/js/store.js';

const EMAIL = 'ada@example.org';
const PASSPHRASE = 'device test passphrase 7';
const VAULT = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0';
const vaultID = uuidBytes(VAULT);
const master = crypto.getRandomValues(new Uint8Array(32));
const wireKDF = { algorithm: 'pbkdf2-sha256', iterations: 600_000 };

function cardContent(name) {
  return concat(Uint8Array.from([1, 1, 8]), u64(1), Uint8Array.from([16, name.length]), utf8(name),
    Uint8Array.from([18, 1, 0x31, 19, 5]), utf8('utf-8'));
}

/** An account as `coffer sync register` leaves it: a passphrase slot, an auth key, the rows and manifests pushed. */
class StandInServer {
  constructor() {
    this.rows = [];
    this.manifests = [];
    this.sequence = 0;
    this.calls = [];
    this.offline = false;
    this.served = null;
  }

  async setPassphrase(passphrase) {
    this.salt = crypto.getRandomValues(new Uint8Array(32));
    const kdf = kdfFromWire(wireKDF);
    const { kek, auth } = await accountKeys(passphrase, kdf, this.salt);
    this.auth = toBase64(auth);
    this.slotID = crypto.randomUUID();
    this.wrapped = await sealBox(kek, master, slotAD(vaultID, uuidBytes(this.slotID), SLOT_PASSPHRASE, kdfEncoding(kdf), this.salt));
    this.account = await accountCommitment(kdf, this.salt);
  }

  /** Stores rows and the manifest of the state after them, as a push does. */
  async push(changes) {
    for (const change of changes) {
      const ad = itemAD(vaultID, uuidBytes(change.id), 'card', change.revision, change.updated_at);
      const box = change.deleted ? undefined : toBase64(await sealBox(await itemsKey(master, vaultID), cardContent(change.name), ad));
      this.rows.push({ id: change.id, kind: 'card', revision: change.revision, updated_at: change.updated_at,
        deleted: Boolean(change.deleted), box, sequence: ++this.sequence });
    }
    const latest = new Map();
    for (const row of this.rows) latest.set(row.id, row);
    const parsed = [...latest.values()].map(rowFromWire);
    const previous = this.manifests.length ? this.manifests.at(-1).hash : new Uint8Array(32);
    const root = await stateRoot(await Promise.all(parsed.map(async (row) => [row.idBytes, await leaf(row)])));
    const body = concat(utf8('CFM1'), vaultID, u64(this.manifests.length + 1), previous, root, u32(parsed.length),
      new Uint8Array(16), u64(1767225600000), u32(1), this.account);
    const manifest = await parseManifest(concat(body, await hmac('SHA-256', await manifestKey(master, vaultID), body)));
    manifest.sequence = this.sequence;
    this.manifests.push(manifest);
  }

  /** What the server shows: everything, or only what it held at `epoch` (a restore, or a rollback). */
  view() {
    const epoch = this.served ?? this.manifests.length;
    const head = this.manifests[epoch - 1];
    return { head, rows: this.rows.filter((row) => row.sequence <= head.sequence), manifests: this.manifests.slice(0, epoch) };
  }

  answer(url, request) {
    this.calls.push(url);
    const body = request?.body ? JSON.parse(request.body) : null;
    const json = (status, value) => new Response(JSON.stringify(value), { status, headers: { 'Content-Type': 'application/json' } });
    const path = new URL(url, 'http://server').pathname;
    const query = new URL(url, 'http://server').searchParams;
    if (path === '/v1/auth/prelogin') return json(200, { kdf: wireKDF, salt: toBase64(this.salt) });
    if (path === '/v1/auth/login') {
      if (body.email !== EMAIL || body.auth_key !== this.auth) return json(401, { error: 'unauthorized' });
      this.logins = (this.logins ?? 0) + 1;
      return json(200, { access_token: `token-${this.logins}`, vault_id: VAULT,
        slot: { id: this.slotID, kdf: wireKDF, salt: toBase64(this.salt), wrapped_key: toBase64(this.wrapped) } });
    }
    if (path === '/v1/auth/logout') return json(204, {});
    if (request?.headers?.Authorization !== `Bearer token-${this.logins}`) return json(401, { error: 'unauthorized' });
    const { head, rows, manifests } = this.view();
    if (path === '/v1/sync/changes') {
      const since = Number(query.get('since'));
      const items = rows.filter((row) => row.sequence > since).map(({ sequence, ...row }) => row);
      return json(200, { items, cursor: Math.max(since, head.sequence), has_more: false, head: toBase64(head.bytes) });
    }
    if (path === '/v1/sync/manifests') {
      const after = Number(query.get('after'));
      return json(200, { manifests: manifests.filter((m) => m.epoch > after).map((m) => toBase64(m.bytes)), has_more: false });
    }
    return json(404, { error: 'not_found' });
  }

  install() {
    globalThis.fetch = async (url, request) => {
      if (this.offline) throw new TypeError('Failed to fetch');
      return this.answer(url, request);
    };
  }
}

const names = (device) => device.items.map((item) => item.content.name).sort();

async function setUp() {
  const server = new StandInServer();
  await server.setPassphrase(PASSPHRASE);
  await server.push([{ id: '00000000-0000-4000-8000-000000000001', name: 'Gym', revision: 1, updated_at: 1000 },
    { id: '00000000-0000-4000-8000-000000000002', name: 'Zoo', revision: 1, updated_at: 1000 }]);
  server.install();
  const store = new MemoryStore();
  const device = await unlock({ email: ` ${EMAIL.toUpperCase()} `, passphrase: PASSPHRASE, store });
  return { server, store, device };
}

test('the first unlock copies the vault as ciphertext: slot, boxes, verified head, cursor, and a sealed auth key', async () => {
  const { server, store, device } = await setUp();
  assert.deepEqual(names(device), ['Gym', 'Zoo']);
  const [record] = await store.vaults();
  assert.equal(record.email, EMAIL);
  assert.equal(record.cursor, 2);
  assert.deepEqual(record.head, server.manifests[0].bytes);
  assert.equal((await store.rows(VAULT)).length, 2);
  const everything = JSON.stringify([await store.vaults(), await store.rows(VAULT)], (key, value) =>
    (value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value));
  for (const secret of ['Gym', 'Zoo', PASSPHRASE, server.auth, Buffer.from(master).toString('latin1')]) {
    assert.ok(!everything.includes(secret), 'nothing decrypted is stored');
  }
  await device.lock();
  assert.ok(master.some((byte) => byte !== 0), 'the test key is the test’s own copy');
});

test('offline, the copy opens with the passphrase and not without it; nothing is asked of the network', async () => {
  const { server, store } = await setUp();
  server.offline = true;
  server.calls.length = 0;
  const device = await unlock({ email: EMAIL, passphrase: PASSPHRASE, store });
  assert.deepEqual(names(device), ['Gym', 'Zoo']);
  assert.equal(device.token, null);
  await assert.rejects(device.sync(), { code: 'transport' });
  await assert.rejects(unlock({ email: EMAIL, passphrase: 'not it', store }), { code: 'wrong-passphrase' });
  assert.deepEqual(await store.vaults().then((v) => v[0].cursor), 2, 'a failed sync changes nothing');
});

test('a sync reads only the feed after the stored cursor, and stores what it verified', async () => {
  const { server, store, device } = await setUp();
  await server.push([{ id: '00000000-0000-4000-8000-000000000002', name: 'Zoo 2', revision: 2, updated_at: 2000 },
    { id: '00000000-0000-4000-8000-000000000003', name: 'Pool', revision: 1, updated_at: 2000 }]);
  server.calls.length = 0;
  await device.sync();
  assert.deepEqual(names(device), ['Gym', 'Pool', 'Zoo 2']);
  assert.ok(server.calls.includes('/v1/sync/changes?since=2&limit=1000'), server.calls.join(' '));
  assert.ok(server.calls.includes('/v1/sync/manifests?after=1&limit=1000'));
  const [record] = await store.vaults();
  assert.equal(record.cursor, 4);
  assert.deepEqual(record.head, server.manifests[1].bytes);
  // Offline after a restart, the copy holds the newer state.
  server.offline = true;
  assert.deepEqual(names(await unlock({ email: EMAIL, passphrase: PASSPHRASE, store })), ['Gym', 'Pool', 'Zoo 2']);
});

test('after a restart, a server that rolls the device back or forks it is refused, and the copy is kept', async () => {
  const { server, store, device } = await setUp();
  await server.push([{ id: '00000000-0000-4000-8000-000000000003', name: 'Pool', revision: 1, updated_at: 2000 }]);
  await device.sync();
  await device.lock();
  // The app restarts; the server shows epoch 1 again, with the cursor of then.
  server.served = 1;
  const reopened = await unlock({ email: EMAIL, passphrase: PASSPHRASE, store });
  assert.deepEqual(names(reopened), ['Gym', 'Pool', 'Zoo'], 'the stored state opens');
  await assert.rejects(reopened.sync(), (error) => error.code === 'rolled-back' && /older state/.test(error.message));
  // A fork: another history of epoch 2.
  server.served = null;
  server.manifests.pop();
  server.rows.pop();
  await server.push([{ id: '00000000-0000-4000-8000-000000000004', name: 'Other', revision: 1, updated_at: 3000 }]);
  await assert.rejects(reopened.sync(), { code: 'forked' });
  const [record] = await store.vaults();
  assert.equal(record.cursor, 3);
  assert.deepEqual(names(await Device.open({ base: '', store, record, master: master.slice() })), ['Gym', 'Pool', 'Zoo']);
});

test('a stored copy changed behind the app’s back does not open', async () => {
  const { store } = await setUp();
  const [record] = await store.vaults();
  const rows = await store.rows(VAULT);
  rows[0].box[20] ^= 1;
  await store.save(record, { rows: [rows[0]] });
  await assert.rejects(Device.open({ base: '', store, record, master: master.slice() }), { code: 'altered' });
  rows[0].box[20] ^= 1;
  await store.save(record, { rows: [rows[0]] });
  await store.save({ ...record, head: record.head.map((byte, i) => (i === 30 ? byte ^ 1 : byte)) });
  await assert.rejects(Device.open({ base: '', store, record: (await store.vaults())[0], master: master.slice() }),
    { code: 'forged-manifest' });
});

test('a passphrase changed on another device: the old one still opens the copy but cannot sync; the new one takes over', async () => {
  const { server, store } = await setUp();
  await server.setPassphrase('the new passphrase 8');
  await server.push([]);
  const old = await unlock({ email: EMAIL, passphrase: PASSPHRASE, store });
  await assert.rejects(old.sync(), { code: 'passphrase-changed' });
  const renewed = await unlock({ email: EMAIL, passphrase: 'the new passphrase 8', store });
  assert.deepEqual(names(renewed), ['Gym', 'Zoo']);
  const [record] = await store.vaults();
  assert.equal(record.slot_id, server.slotID);
  assert.deepEqual(record.head, server.manifests[1].bytes);
  server.offline = true;
  assert.deepEqual(names(await unlock({ email: EMAIL, passphrase: 'the new passphrase 8', store })), ['Gym', 'Zoo']);
  await assert.rejects(unlock({ email: EMAIL, passphrase: PASSPHRASE, store }), { code: 'wrong-passphrase' });
});

test('a head kept by the earlier page (localStorage) is taken as verified at the first unlock, then dropped', async () => {
  const server = new StandInServer();
  await server.setPassphrase(PASSPHRASE);
  await server.push([{ id: '00000000-0000-4000-8000-000000000001', name: 'Gym', revision: 1, updated_at: 1000 }]);
  await server.push([{ id: '00000000-0000-4000-8000-000000000002', name: 'Zoo', revision: 1, updated_at: 1000 }]);
  server.install();
  const legacy = new Map([[`coffer.verified.${VAULT}`, toBase64(server.manifests[1].bytes)]]);
  const storage = { getItem: (key) => legacy.get(key) ?? null, removeItem: (key) => legacy.delete(key) };
  server.served = 1;
  await assert.rejects(unlock({ email: EMAIL, passphrase: PASSPHRASE, store: new MemoryStore(), legacy: storage }),
    { code: 'rolled-back' });
  server.served = null;
  const store = new MemoryStore();
  await unlock({ email: EMAIL, passphrase: PASSPHRASE, store, legacy: storage });
  assert.equal(legacy.size, 0);
  assert.deepEqual((await store.vaults())[0].head, server.manifests[1].bytes);
});

test('an expired access token is replaced by one more login from the sealed auth key, once', async () => {
  const { server, device } = await setUp();
  await server.push([{ id: '00000000-0000-4000-8000-000000000003', name: 'Pool', revision: 1, updated_at: 2000 }]);
  server.logins += 1;
  server.calls.length = 0;
  await device.sync();
  assert.deepEqual(names(device), ['Gym', 'Pool', 'Zoo']);
  assert.equal(server.calls.filter((url) => url === '/v1/auth/login').length, 1);
  server.auth = 'changed';
  server.logins += 1;
  await assert.rejects(device.sync(), { code: 'passphrase-changed' });
});

/** A WebAuthn authenticator as the page sees one: PRF output = HMAC-SHA256(its secret, salt), or no PRF at all. */
function authenticator({ prf = true } = {}) {
  const state = { secret: crypto.getRandomValues(new Uint8Array(32)), refuse: false, calls: [] };
  const answer = async (id, salt) => {
    const output = prf ? new Uint8Array(await crypto.subtle.sign('HMAC',
      await crypto.subtle.importKey('raw', state.secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']), salt)) : null;
    return { rawId: id.buffer.slice(0), getClientExtensionResults: () => ({ prf: prf ? { enabled: true, results: { first: output.buffer } } : { enabled: false } }) };
  };
  state.credentials = {
    create: async ({ publicKey }) => {
      state.calls.push(['create', publicKey.rp.id, publicKey.authenticatorSelection.userVerification]);
      state.id = crypto.getRandomValues(new Uint8Array(16));
      const made = await answer(state.id, publicKey.extensions.prf.eval.first);
      return { ...made, getClientExtensionResults: () => ({ prf: { enabled: prf } }) };
    },
    get: async ({ publicKey }) => {
      state.calls.push(['get', publicKey.rpId, publicKey.userVerification]);
      if (state.refuse) throw new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError');
      return answer(state.id, publicKey.extensions.prf.eval.first);
    },
  };
  return state;
}

test('a passkey with PRF unlocks the copy offline; five failures remove it; one without PRF is refused', async () => {
  const { server, store, device } = await setUp();
  const { addPasskey } = await import('../app/js/passkey.js');
  const { unlockByPasskey } = await import('../app/js/device.js');
  await assert.rejects(addPasskey(device, { credentials: authenticator().credentials, hostname: '127.0.0.1' }), { code: 'passkey-host' });
  await assert.rejects(addPasskey(device, { credentials: authenticator({ prf: false }).credentials, hostname: 'localhost' }),
    { code: 'passkey-no-prf' });
  const key = authenticator();
  await addPasskey(device, { credentials: key.credentials, hostname: 'localhost' });
  assert.deepEqual(key.calls.map(([call, rp, verification]) => [call, rp, verification]),
    [['create', 'localhost', 'required'], ['get', 'localhost', 'required']]);
  const [record] = await store.vaults();
  assert.equal(record.passkey.wrapped_key.length, 60);
  assert.ok(!Buffer.from(record.passkey.wrapped_key).includes(Buffer.from(master)), 'the slot holds no plaintext key');
  server.offline = true;
  assert.deepEqual(names(await unlockByPasskey({ email: EMAIL, store, credentials: key.credentials })), ['Gym', 'Zoo']);

  // Four refusals, then a success: the count starts again.
  key.refuse = true;
  for (let i = 0; i < 4; i++) await assert.rejects(unlockByPasskey({ email: EMAIL, store, credentials: key.credentials }), { code: 'passkey-refused' });
  assert.equal((await store.vaults())[0].passkey.failures, 4);
  key.refuse = false;
  await unlockByPasskey({ email: EMAIL, store, credentials: key.credentials });
  assert.equal((await store.vaults())[0].passkey.failures, 0);
  // Another authenticator's answer does not open the slot, and counts; the fifth failure removes the slot.
  const secret = key.secret;
  key.secret = crypto.getRandomValues(new Uint8Array(32));
  for (let i = 0; i < 4; i++) await assert.rejects(unlockByPasskey({ email: EMAIL, store, credentials: key.credentials }), { code: 'passkey-refused' });
  key.secret = secret;
  key.refuse = true;
  await assert.rejects(unlockByPasskey({ email: EMAIL, store, credentials: key.credentials }), { code: 'passkey-removed' });
  assert.equal((await store.vaults())[0].passkey, undefined);
  key.refuse = false;
  await assert.rejects(unlockByPasskey({ email: EMAIL, store, credentials: key.credentials }), { code: 'no-passkey' });
  assert.deepEqual(names(await unlock({ email: EMAIL, passphrase: PASSPHRASE, store })), ['Gym', 'Zoo'], 'the passphrase still opens it');
});
