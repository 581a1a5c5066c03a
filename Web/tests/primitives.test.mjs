// The web reader's primitives against OpenSSL (Python's `cryptography`), and scrypt against RFC 7914's vectors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromHex, hex, utf8 } from '../app/js/bytes.js';
import { hkdf, openBox, pbkdf2, scrypt } from '../app/js/crypto.js';
import { associatedData, itemAD, slotAD } from '../app/js/format.js';
import { oracle } from './support.mjs';

test('HKDF-SHA256 and PBKDF2-HMAC-SHA256 equal OpenSSL', async () => {
  const cases = [
    { op: 'hkdf_sha256', ikm: '00'.repeat(32), salt: '11'.repeat(16), info: hex(utf8('coffer/v1/items')), length: 32 },
    { op: 'hkdf_sha256', ikm: 'ab'.repeat(20), salt: '', info: hex(utf8('coffer/v1/manifest')), length: 32 },
    { op: 'pbkdf2_sha256', password: hex(utf8('pässwörd')), salt: '5a'.repeat(32), iterations: 1000, length: 32 },
    { op: 'pbkdf2_sha256', password: hex(utf8('x')), salt: '01'.repeat(16), iterations: 1, length: 256 },
  ];
  const answers = oracle(cases);
  for (const [index, c] of cases.entries()) {
    const mine = c.op === 'hkdf_sha256'
      ? await hkdf(fromHex(c.ikm), fromHex(c.salt), fromHex(c.info), c.length)
      : await pbkdf2(fromHex(c.password), fromHex(c.salt), c.iterations, c.length);
    assert.equal(hex(mine), answers[index], c.op);
  }
});

test('scrypt (ROMix over PBKDF2) equals RFC 7914 §12 and OpenSSL', async () => {
  // RFC 7914 §12, second and third vectors (64 bytes).
  assert.equal(hex(await scrypt(utf8('password'), utf8('NaCl'), 10, 8, 16, 64)),
    'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640');
  const cases = [
    { op: 'scrypt', password: hex(utf8('golden passphrase v1')), salt: '5a'.repeat(32), n: 1 << 14, r: 8, p: 1, length: 32 },
    { op: 'scrypt', password: hex(utf8('é')), salt: '01'.repeat(16), n: 1 << 10, r: 3, p: 2, length: 32 },
  ];
  const answers = oracle(cases);
  for (const [index, c] of cases.entries()) {
    const mine = await scrypt(fromHex(c.password), fromHex(c.salt), Math.log2(c.n), c.r, c.p, c.length);
    assert.equal(hex(mine), answers[index]);
  }
});

test('associated data is laid out as FORMAT.md §3 writes it', () => {
  assert.equal(hex(associatedData('ab', Uint8Array.of(1, 2), new Uint8Array(0))), '000000026162000000020102' + '00000000');
  const vault = fromHex('6f1b6e7a3c1d4e559a400c0ffee00001');
  const item = fromHex('00000000000040008000000000000001');
  assert.equal(hex(itemAD(vault, item, 'card', 3, 1795000000000)), [
    '0000000e', hex(utf8('coffer/v1/item')), '00000010', hex(vault), '00000010', hex(item), '00000004', hex(utf8('card')),
    '00000008', '0000000000000003', '00000008', '000001a1ee565e00', '00000004', '00000001'].join(''));
  assert.equal(hex(slotAD(vault, item, 2, Uint8Array.of(1, 0, 9, 0x27, 0xc0), Uint8Array.of(7))), [
    '0000000e', hex(utf8('coffer/v1/slot')), '00000010', hex(vault), '00000010', hex(item), '00000001', '02',
    '00000005', '01000927c0', '00000001', '07'].join(''));
});

test('boxes sealed by OpenSSL open only with their key and associated data', async () => {
  const key = '42'.repeat(32);
  const ad = hex(associatedData('coffer/v1/item', Uint8Array.of(9)));
  const [box] = oracle([{ op: 'aesgcm_seal', key, nonce: '07'.repeat(12), plaintext: hex(utf8('payload')), aad: ad }]);
  assert.equal(hex(await openBox(fromHex(key), fromHex(box), fromHex(ad))), hex(utf8('payload')));
  await assert.rejects(openBox(fromHex(key), fromHex(box), fromHex(ad + '00')), { code: 'box' });
  await assert.rejects(openBox(fromHex('43'.repeat(32)), fromHex(box), fromHex(ad)), { code: 'box' });
});
