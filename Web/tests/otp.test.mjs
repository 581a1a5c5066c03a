// TOTP and Steam codes of the web vault against oathtool (TOTP, every algorithm and length) and, for Steam, the
// alphabet applied to the RFC 4226 value from Python's hmac.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { hex, utf8 } from '../app/js/bytes.js';
import { currentCode } from '../app/js/otp.js';

function oathtool(args) {
  return execFileSync('oathtool', args, { encoding: 'utf8' }).trim();
}

test('TOTP codes equal oathtool for SHA1, SHA256 and SHA512, 6 to 8 digits, several periods and times', async () => {
  const secret = utf8('12345678901234567890');
  for (const [algorithm, digits, period] of [['SHA1', 6, 30], ['SHA256', 8, 30], ['SHA512', 7, 60], ['SHA1', 8, 15]]) {
    for (const seconds of [59, 1111111109, 1234567890, 2000000000, 20000000000]) {
      const mine = await currentCode({ type: 'totp', secret, algorithm, digits, period }, seconds * 1000);
      const theirs = oathtool(['--totp=' + algorithm.toLowerCase(), '-d', String(digits), '-s', `${period}s`,
        '-N', `@${seconds}`, hex(secret)]);
      assert.equal(mine.code, theirs, `${algorithm} ${digits} ${period} ${seconds}`);
      assert.equal(mine.remaining, period - (seconds % period));
    }
  }
});

test('Steam codes: the alphabet over the RFC 4226 value Python\'s hmac computes for the same counter', async () => {
  const secret = new Uint8Array(20).fill(0x42);
  for (const seconds of [1795000000, 1795000031, 2000000000]) {
    const mine = await currentCode({ type: 'steam', secret, algorithm: 'SHA1', digits: 5 }, seconds * 1000);
    // oathtool prints at most 8 digits of the 31-bit value; Python's hmac gives all of it.
    let value = Number(execFileSync('python3', ['-c', `import hmac, struct
mac = hmac.digest(bytes.fromhex("${hex(secret)}"), struct.pack(">Q", ${Math.floor(seconds / 30)}), "sha1")
o = mac[-1] & 15
print(struct.unpack(">I", mac[o:o + 4])[0] & 0x7FFFFFFF)`], { encoding: 'utf8' }));
    let expected = '';
    for (let i = 0; i < 5; i++) {
      expected += '23456789BCDFGHJKMNPQRTVWXY'[value % 26];
      value = Math.floor(value / 26);
    }
    assert.equal(mine.code, expected);
    assert.match(mine.code, /^[23456789BCDFGHJKMNPQRTVWXY]{5}$/);
  }
});
