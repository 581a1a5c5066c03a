// The browser's writer against the CLI, through a real coffer-server: what the page's code writes (sealed boxes,
// manifests, pushes) the CLI pulls, verifies with its own Swift verifier and shows field for field; what the CLI writes
// the page reads; writes made at once on both sides merge by the CLI's rules (conflict copies, HOTP counters by
// maximum). The page's modules run in node against the server with its ordinary fetch.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { concat, fromBase64, toBase64, u64, utf8 } from '../app/js/bytes.js';
import { hmac } from '../app/js/crypto.js';
import { parseManifest } from '../app/js/format.js';
import { manifestKey } from '../app/js/keys.js';
import { checkCard, checkCredential, checkNote, checkOTP } from '../app/js/content.js';
import { unlock } from '../app/js/device.js';
import { currentCode } from '../app/js/otp.js';
import { parseMigration, parseToken } from '../app/js/otpauth.js';
import { MemoryStore } from '../app/js/store.js';
import { FULL_CHECK_INTERVAL_MS } from '../app/js/sync.js';
import { binary } from './support.mjs';

const PASSPHRASE = 'writer oracle vault Kv7 quartz';
const SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const drawable = () => {};
let server;
let base;
let email;
let coffer;

function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

before(async () => {
  const home = mkdtempSync(join(tmpdir(), 'coffer-web-writer-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(binary('coffer-server'), ['--data', join(home, 'server'), '--port', String(port)],
    { env: { PATH: '/usr/bin:/bin', SWIFT_BACKTRACE: 'enable=no', COFFER_LOG: 'error' }, stdio: 'ignore' });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      if (i > 300) throw new Error('coffer-server did not start');
      await new Promise((resolve) => { setTimeout(resolve, 100); });
    }
  }
  const env = { HOME: home, XDG_DATA_HOME: join(home, 'data'), PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', NO_COLOR: '1',
    SWIFT_BACKTRACE: 'enable=no', TZ: 'UTC' };
  coffer = (args, input = '') => execFileSync(binary('coffer'), args, { env, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
  coffer(['init']);
  coffer(['add', 'card', 'Costco', '--symbology', 'code128', '--tag', 'grocery'], '111222333444\n');
  coffer(['add', 'otp'], `otpauth://hotp/Duo:alice?secret=${SECRET}&issuer=Duo&counter=5\n`);
  email = `writer-${process.pid}@example.org`;
  coffer(['sync', 'register', '--server', base, '--email', email], `${PASSPHRASE}\n`);
});

after(() => server?.kill());

const show = (name) => JSON.parse(coffer(['show', name, '--json']));
const byName = (device, name) => device.items.find((item) => (item.content.name ?? item.content.issuer) === name);

async function browser(store = new MemoryStore()) {
  return unlock({ base, email, passphrase: PASSPHRASE, store });
}

test('what the page writes, the CLI verifies and shows field for field', async () => {
  const device = await browser();
  const ean = checkCard({ name: '  Grocer ', symbology: 'ean13', payload: utf8('400638133393'), payload_charset: 'utf-8',
    card_number: null, tags: ['food', 'Food', 'food'], network_ids: ['Costco'], valid_from: null,
    valid_to: Date.UTC(2099, 0, 31, 23, 59, 59), one_time: true, used_at: null, archived_at: null, notes: 'by the till',
    metadata: { tier: 'gold' } }, drawable);
  await device.write('card', ean);
  const token = parseToken(`otpauth://totp/ACME%20Co:ada@example.org?secret=${SECRET}&issuer=ACME%20Co&algorithm=SHA256&digits=8&period=60`);
  await device.write('otp', checkOTP({ ...token, tags: ['work'], notes: null }));
  // A link without an issuer: the token keeps none (FORMAT.md 1.11), and the CLI names it by its account.
  await device.write('otp', checkOTP({ ...parseToken(`otpauth://totp/solo%40example.org?secret=${SECRET}`), tags: [], notes: null }));
  await device.write('credential', checkCredential({ name: 'Vendor', provider: 'vendor', value: 'sk-live-writer-1',
    tags: [], notes: null, username: 'ada', url: 'https://vendor.example' }));
  await device.write('note', checkNote({ name: 'Bob', template: 'contact', fields: [{ label: 'Phone', value: '+1 555 0100' }],
    text: 'Met at the café', tags: [] }));
  assert.equal(device.waiting, 5);
  await device.sync();
  assert.equal(device.waiting, 0);

  coffer(['sync']);
  const grocer = show('Grocer');
  assert.deepEqual({ name: grocer.name, symbology: grocer.symbology, payload: grocer.payload, tags: grocer.tags,
    networks: grocer.networks, one_time: grocer.one_time, valid_to: grocer.valid_to, notes: grocer.notes },
  { name: 'Grocer', symbology: 'ean13', payload: '400638133393', tags: ['food', 'Food'], networks: ['costco'], one_time: true,
    valid_to: '2099-01-31T23:59:59Z', notes: 'by the till' });
  const acme = show('ACME');
  assert.deepEqual([acme.issuer, acme.account, acme.algorithm, acme.digits, acme.period, acme.tags],
    ['ACME Co', 'ada@example.org', 'SHA256', 8, 60, ['work']]);
  assert.match(coffer(['code', 'ACME']), /^\d{8}\n$/);
  const solo = show('solo@example.org');
  assert.deepEqual([solo.name, solo.issuer, solo.account], ['solo@example.org', undefined, 'solo@example.org']);
  const vendor = show('Vendor');
  assert.deepEqual([vendor.provider, vendor.username, vendor.url], ['vendor', 'ada', 'https://vendor.example']);
  assert.match(coffer(['show', 'Bob']), /Met at the café/);
  assert.match(coffer(['sync', 'status']), /Verified|verified/);
});

test('a scanned Google Authenticator export: the page adds every token in one write, and the CLI shows each', async () => {
  const device = await browser();
  const exportFile = new URL('../../Tests/CofferInteropTests/Fixtures/google/export.txt', import.meta.url);
  const lines = readFileSync(exportFile, 'utf8').split('\n').filter((line) => line.startsWith('otpauth-migration:'));
  const tokens = lines.flatMap((line) => parseMigration(line).tokens).map((token) => checkOTP({ ...token, notes: null, tags: ['google'] }));
  const before = device.items.length;
  const ids = await device.writeAll('otp', tokens);
  assert.equal(ids.length, 5);
  assert.equal(device.items.length, before + 5);
  assert.equal(device.waiting, 5);
  await device.sync();
  coffer(['sync']);
  const listed = JSON.parse(coffer(['list', '--kind', 'otp', '--tag', 'google', '--json']));
  assert.deepEqual(listed.map((item) => [item.issuer, item.account, item.type, item.algorithm, item.digits]).sort(),
    [['Big Corp', 'dave', 'totp', 'SHA512', 8], ['Counter Inc', 'erin', 'hotp', 'SHA1', 6], ['Example', 'bob', 'totp', 'SHA256', 8],
      ['GitHub', 'alice@example.com', 'totp', 'SHA1', 6], ['Split Co', 'carol', 'totp', 'SHA1', 6]]);
  // The page's code for each is the CLI's (HOTP: the CLI's next code is the stored counter's).
  for (const item of listed.filter((entry) => entry.type === 'totp')) {
    const token = device.items.find((candidate) => candidate.id === item.id);
    const cli = coffer(['code', item.id]).trim();
    const now = Date.now();
    assert.ok([(await currentCode(token.content, now)).code, (await currentCode(token.content, now - 30_000)).code].includes(cli));
  }
});

test('what the CLI writes the page reads; the page marks used, archives and deletes, and the CLI follows', async () => {
  const device = await browser();
  coffer(['edit', 'Costco', '--add-tag', 'bulk'], '');
  coffer(['add', 'card', 'Return', '--symbology', 'qr', '--one-time'], 'https://example.com/r/9\n');
  // A photo of two parts (FORMAT.md §5b), which a deletion here must take with the card.
  const photo = join(mkdtempSync(join(tmpdir(), 'coffer-web-photo-')), 'front.png');
  writeFileSync(photo, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(69992, 7)]));
  coffer(['add', 'card', 'Photo card', '--symbology', 'qr'], 'photo\n');
  coffer(['edit', 'Photo card', '--photo', 'front', photo]);
  coffer(['sync']);
  await device.sync();
  assert.deepEqual(byName(device, 'Costco').content.tags.sort(), ['bulk', 'grocery']);
  const ret = byName(device, 'Return');
  await device.write('card', checkCard({ ...ret.content, used_at: Date.now() }, drawable), ret.id);
  const costco = byName(device, 'Costco');
  await device.write('card', checkCard({ ...costco.content, archived_at: Date.now() }, drawable), costco.id);
  await device.remove(byName(device, 'Bob').id);
  const parts = byName(device, 'Photo card').content.photos[0].parts;
  assert.equal(parts.length, 2);
  await device.remove(byName(device, 'Photo card').id);
  await device.sync();
  const partRows = [...device.rows.values()].filter((row) => row.kind === 'card_photo');
  assert.deepEqual(partRows.map((row) => row.deleted), [true, true], 'the parts are tombstones with the card');
  coffer(['sync']);
  assert.match(coffer(['list', '--kind', 'card']), /Return\s+Used/);
  assert.doesNotMatch(coffer(['list', '--kind', 'card']), /Costco/);
  assert.match(coffer(['list', '--kind', 'card', '--archived']), /Costco/);
  assert.doesNotMatch(coffer(['list']), /Bob|Photo card/);
});

test('an edit made on both sides at once: the CLI’s stands, the page’s becomes a conflict copy both see', async () => {
  const device = await browser();
  const grocer = byName(device, 'Grocer');
  coffer(['edit', 'Grocer', '--name', 'Grocer (CLI)'], '');
  coffer(['sync']);
  await device.write('card', checkCard({ ...grocer.content, name: 'Grocer (web)' }, drawable), grocer.id);
  await device.sync();
  const names = device.items.filter((item) => item.kind === 'card').map((item) => item.content.name);
  assert.ok(names.includes('Grocer (CLI)') && names.includes('Grocer (web)'), names.join(', '));
  assert.equal(device.conflicts.length, 1);
  assert.equal(device.conflicts[0].original_id, grocer.id);
  coffer(['sync']);
  const listed = coffer(['list', '--kind', 'card']);
  assert.match(listed, /Grocer \(CLI\)/);
  assert.match(listed, /Grocer \(web\)/);
});

test('HOTP counters advanced on both sides merge by maximum, and no code is shown twice', async () => {
  const device = await browser();
  const duo = byName(device, 'Duo');
  const cliCodes = [coffer(['code', 'Duo']).trim()];
  coffer(['sync']);
  const first = await device.nextHOTP(duo.id);
  const second = await device.nextHOTP(duo.id);
  const third = await device.nextHOTP(duo.id);
  assert.deepEqual([first, second, third], [5, 6, 7], 'the page used counters 5, 6, 7 before it synced');
  await device.sync();
  assert.equal(byName(device, 'Duo').content.counter, 8, 'max(8 here, 6 there)');
  coffer(['sync']);
  cliCodes.push(coffer(['code', 'Duo']).trim());
  const expected = execFileSync('oathtool', ['--hotp', '-c', '8', Buffer.from('12345678901234567890').toString('hex')]).toString().trim();
  assert.equal(cliCodes[1], expected, 'the CLI goes on from counter 8');
});

test('a copy of the page’s state opens offline with its pending writes, and pushes them when the server answers', async () => {
  const store = new MemoryStore();
  const device = await browser(store);
  const realFetch = globalThis.fetch;
  globalThis.fetch = async () => { throw new TypeError('Failed to fetch'); };
  try {
    await device.write('credential', checkCredential({ name: 'Offline key', provider: null, value: 'sk-offline-2',
      tags: [], notes: null, username: null, url: null }));
    await assert.rejects(device.sync(), { code: 'transport' });
    await device.lock();
    const reopened = await unlock({ base, email, passphrase: PASSPHRASE, store });
    assert.ok(byName(reopened, 'Offline key'), 'the pending write is shown offline');
    assert.equal(reopened.waiting, 1);
    globalThis.fetch = realFetch;
    await reopened.sync();
    assert.equal(reopened.waiting, 0);
  } finally {
    globalThis.fetch = realFetch;
  }
  coffer(['sync']);
  assert.equal(show('Offline key').provider, undefined);
});

/** The server's whole feed, as it is. */
async function realFeed(device) {
  return (await fetch(`${base}/v1/sync/changes?since=0&limit=1000`, { headers: { Authorization: `Bearer ${device.token}` } })).json();
}

/** Answers of the real server, changed as a hostile one would: `edit(page, url)` rewrites a page of the feed. */
function hostile(edit) {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (url, request) => {
    const answer = await realFetch(url, request);
    if (!String(url).includes('/v1/sync/changes') || !answer.ok) return answer;
    const page = await edit(await answer.json(), realFetch);
    return new Response(JSON.stringify(page), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
  return () => { globalThis.fetch = realFetch; };
}

test('after the page has written, each lie of a server (forged tombstone, swapped boxes, rollback, fork, replay, dropped row) is refused and nothing is applied or stored', async () => {
  const store = new MemoryStore();
  const device = await browser(store);
  let recorded = null;
  const stopRecording = hostile((page) => { recorded = page; return page; });
  await device.sync();
  stopRecording();
  await device.write('credential', checkCredential({ name: 'Hostile canary', provider: null, value: 'sk-hostile-3',
    tags: [], notes: null, username: null, url: null }));
  await device.sync();
  const [before] = await store.vaults();
  const full = async (page, realFetch) => {
    // A page read from 0: the server's whole state (the device asks from its cursor; a lie there retries from 0).
    const whole = await (await realFetch(`${base}/v1/sync/changes?since=0&limit=1000`, { headers: { Authorization: `Bearer ${device.token}` } })).json();
    return { ...whole, cursor: page.cursor };
  };
  const mine = () => whole.items.find((item) => item.id === byName(device, 'Hostile canary').id);
  let whole = null;
  const lies = {
    'forged tombstone': async (page, realFetch) => {
      whole = await full(page, realFetch);
      Object.assign(mine(), { deleted: true, box: undefined, revision: mine().revision + 1 });
      return whole;
    },
    'swapped boxes': async (page, realFetch) => {
      whole = await full(page, realFetch);
      const live = whole.items.filter((item) => !item.deleted && item.kind !== 'card_photo');
      [live[0].box, live[1].box] = [live[1].box, live[0].box];
      return whole;
    },
    rollback: async () => recorded,
    fork: async (page, realFetch) => {
      // Another history of the next epoch, made by a holder of the vault's key: the server shows it to this device.
      whole = await full(page, realFetch);
      const head = await parseManifest(fromBase64(whole.head));
      const body = concat(head.body.subarray(0, 20), u64(head.epoch + 1), new Uint8Array(32).fill(7), head.body.subarray(60));
      whole.head = toBase64(concat(body, await hmac('SHA-256', await manifestKey(device.master, device.vaultID), body)));
      return whole;
    },
  };
  const expected = { 'forged tombstone': /mismatch|forged/, 'swapped boxes': /altered/,
    rollback: /rolled-back/, fork: /forked|broken-chain/ };
  for (const [lie, edit] of Object.entries(lies)) {
    const stop = hostile(edit);
    try {
      await assert.rejects(device.sync(), (error) => expected[lie].test(error.code) || assert.fail(`${lie}: ${error.code} ${error.message}`), `${lie} was not refused`);
    } finally {
      stop();
    }
    const [after] = await store.vaults();
    assert.deepEqual([after.head, after.cursor], [before.head, before.cursor], `${lie}: nothing stored`);
    assert.ok(byName(device, 'Hostile canary'), `${lie}: nothing applied`);
  }
  // A row the page wrote, replayed at its first revision to a new browser after the page edited it: refused.
  const canary = byName(device, 'Hostile canary');
  const firstRevision = (await realFeed(device)).items.find((item) => item.id === canary.id);
  await device.write('credential', checkCredential({ ...canary.content, value: 'sk-hostile-4' }), canary.id);
  await device.sync();
  const replay = hostile(async (page) => ({ ...page, items: page.items.map((item) => (item.id === canary.id ? firstRevision : item)) }));
  try {
    await assert.rejects(browser(new MemoryStore()), (error) => ['mismatch', 'altered'].includes(error.code) || assert.fail(error.code));
  } finally {
    replay();
  }

  // A row the page wrote, dropped from the feed a new browser reads: withheld, and that browser keeps nothing.
  const fresh = new MemoryStore();
  const stop = hostile(async (page) => ({ ...page, items: page.items.filter((item) => item.id !== byName(device, 'Hostile canary').id) }));
  try {
    await assert.rejects(browser(fresh), { code: 'withheld' });
  } finally {
    stop();
  }
  assert.deepEqual(await fresh.vaults(), []);
  await device.sync();
});

test('a row the server dropped is caught by a linked browser: when the CLI moves the head, and a week after the last whole read', async () => {
  const store = new MemoryStore();
  const device = await browser(store);
  await device.write('credential', checkCredential({ name: 'Dropped canary', provider: null, value: 'sk-dropped-5',
    tags: [], notes: null, username: null, url: null }));
  await device.sync();
  const dropped = byName(device, 'Dropped canary').id;
  // The server loses the row: a read from 0 no longer shows it; a read from the cursor never would have.
  const stop = hostile(async (page) => ({ ...page, items: page.items.filter((item) => item.id !== dropped) }));
  try {
    await device.sync();
    coffer(['add', 'card', 'Moves the head', '--symbology', 'qr'], 'head\n');
    coffer(['sync']);
    const [before] = await store.vaults();
    await assert.rejects(device.sync(), { code: 'withheld' });
    const [after] = await store.vaults();
    assert.deepEqual([after.head, after.cursor], [before.head, before.cursor], 'nothing stored');
  } finally {
    stop();
  }
  // The head is now the browser's own: a sync reads from its cursor until the last whole read is a week old.
  await device.sync();
  const restore = hostile(async (page) => ({ ...page, items: page.items.filter((item) => item.id !== dropped) }));
  try {
    await device.sync();
    device.record.full_check = device.now() - FULL_CHECK_INTERVAL_MS;
    await assert.rejects(device.sync(), { code: 'withheld' });
  } finally {
    restore();
  }
  await device.sync();
});

test('Lock during a sync: the sync stops or finishes, and only then are the keys wiped (no manifest made with a wiped key)', async () => {
  for (let round = 0; round < 3; round++) {
    const device = await browser();
    await device.write('credential', checkCredential({ name: `Locked mid-sync ${round}`, provider: null,
      value: `sk-locked-${round}`, tags: [], notes: null, username: null, url: null }));
    const syncing = device.sync();
    await new Promise((resolve) => { setTimeout(resolve, round * 15); });
    const locked = device.lock();
    const outcome = await Promise.allSettled([syncing]);
    await locked;
    assert.ok(device.master.every((byte) => byte === 0), 'the key is wiped once the sync has stopped');
    assert.ok(outcome[0].status === 'fulfilled' || outcome[0].reason.code === 'locked', String(outcome[0].reason?.code));
    await assert.rejects(device.sync(), { code: 'locked' });
    coffer(['sync']);
  }
});
