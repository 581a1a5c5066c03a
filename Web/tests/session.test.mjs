// The login's own refusals, against a stand-in server (a stubbed fetch): the CLI's KDF floor before anything is
// stretched or sent, a slot whose parameters differ from the pre-login's, a slot that does not open, a wrong passphrase.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromHex, hex, toBase64, utf8 } from '../app/js/bytes.js';
import { unlock } from '../app/js/device.js';
import { MemoryStore } from '../app/js/store.js';
import { oracle } from './support.mjs';

function server(answers) {
  const calls = [];
  globalThis.fetch = async (url, request) => {
    calls.push(url);
    const answer = answers[url];
    if (!answer) return new Response('{}', { status: 404 });
    const [status, body] = typeof answer === 'function' ? answer(JSON.parse(request.body ?? 'null')) : answer;
    return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  };
  return calls;
}

const salt = toBase64(new Uint8Array(32).fill(0x5a));
const store = new MemoryStore();

test('PBKDF2 below 600,000 iterations or scrypt below 2^15 is refused before anything is stretched or sent', async () => {
  for (const kdf of [{ algorithm: 'pbkdf2-sha256', iterations: 599_999 }, { algorithm: 'scrypt', log_n: 14, r: 8, p: 1 },
    { algorithm: 'scrypt', log_n: 15, r: 4, p: 1 }]) {
    const calls = server({ '/v1/auth/prelogin': [200, { kdf, salt }] });
    await assert.rejects(unlock({ email: 'a@example.org', passphrase: 'x', store }), { code: 'weak-kdf' });
    assert.deepEqual(calls, ['/v1/auth/prelogin']);
  }
  const calls = server({ '/v1/auth/prelogin': [200, { kdf: { algorithm: 'pbkdf2-sha256', iterations: 100 }, salt }] });
  await assert.rejects(unlock({ email: 'a@example.org', passphrase: 'x', store }), { code: 'kdf-bounds' });
  assert.deepEqual(calls, ['/v1/auth/prelogin']);
});

const kdf = { algorithm: 'pbkdf2-sha256', iterations: 600_000 };
const slot = { id: '00000000-0000-4000-8000-000000000009', kdf, salt, wrapped_key: toBase64(new Uint8Array(60).fill(7)) };
const session = (overrides) => [200, { access_token: 't', refresh_token: 'r', expires_in: 900, token_type: 'Bearer',
  user: {}, vault_id: '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0', slot: { ...slot, ...overrides } }];

test('a wrong passphrase, a slot with other parameters, and a slot that does not open are each refused', async () => {
  server({ '/v1/auth/prelogin': [200, { kdf, salt }], '/v1/auth/login': [401, { error: 'invalid_credentials' }] });
  await assert.rejects(unlock({ email: 'a@example.org', passphrase: 'x', store }), { code: 'wrong-passphrase' });

  let calls = server({ '/v1/auth/prelogin': [200, { kdf, salt }], '/v1/auth/login': session({ kdf: { ...kdf, iterations: 700_000 } }),
    '/v1/auth/logout': [204, {}] });
  await assert.rejects(unlock({ email: 'a@example.org', passphrase: 'x', store }), { code: 'slot-changed' });
  assert.equal(calls.at(-1), '/v1/auth/logout', 'the session is ended');

  calls = server({ '/v1/auth/prelogin': [200, { kdf, salt }], '/v1/auth/login': session({}), '/v1/auth/logout': [204, {}] });
  await assert.rejects(unlock({ email: 'a@example.org', passphrase: 'x', store }), { code: 'slot' });
  assert.ok(!calls.some((url) => url.startsWith('/v1/sync')), 'nothing is pulled with a slot that does not open');
});

test('the auth key sent is HKDF(S, salt, "coffer/v1/sync/auth"), never the passphrase', async () => {
  let sent = null;
  server({ '/v1/auth/prelogin': [200, { kdf, salt }], '/v1/auth/login': (body) => { sent = body; return [401, {}]; } });
  await assert.rejects(unlock({ email: ' A@Example.org ', passphrase: 'correct horse', store }));
  assert.equal(sent.email, 'a@example.org');
  const [stretched] = oracle([{ op: 'pbkdf2_sha256', password: hex(utf8('correct horse')), salt: '5a'.repeat(32),
    iterations: 600_000, length: 32 }]);
  const [auth] = oracle([{ op: 'hkdf_sha256', ikm: stretched, salt: '5a'.repeat(32), info: hex(utf8('coffer/v1/sync/auth')), length: 32 }]);
  assert.equal(sent.auth_key, toBase64(fromHex(auth)));
  assert.ok(!JSON.stringify(sent).includes('correct horse'));
});
