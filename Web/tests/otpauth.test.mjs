// The page's otpauth reader against the CLI's: each URI is added with `coffer add otp` (with --issuer, as the page's
// form fills an issuer a URI lacks) and read back from the vault by the Python reader; the page must read the same
// token, or refuse exactly the URIs the CLI refuses. Then the page's content of that token must be the CLI's bytes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hex } from '../app/js/bytes.js';
import { currentCode, hotpCode } from '../app/js/otp.js';
import { base32, parseMigration, parseToken, parseURI } from '../app/js/otpauth.js';
import { binary, oracle } from './support.mjs';

const SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const URIS = [
  `otpauth://totp/GitHub:alice@example.com?secret=${SECRET}&issuer=GitHub`,
  `otpauth://totp/ACME%20Co:john.doe@email.com?secret=${SECRET}&issuer=ACME%20Co&algorithm=SHA256&digits=8&period=60`,
  `otpauth://TOTP/Foo:%20Bar:alice?SECRET=${SECRET.toLowerCase()}`,
  `otpauth://totp/Label%3Aonly?secret=${SECRET}&issuer=Air+Canada`,
  `otpauth://hotp/Duo:alice?secret=${SECRET}&issuer=Duo&counter=5`,
  `otpauth://totp/Steam:gabe?secret=${SECRET}&issuer=Steam&encoder=steam`,
  `otpauth://steam/Valve:gabe?secret=${SECRET}`,
  `otpauth://totp/x:y?secret=${SECRET.slice(0, 16)}%3D%3D%3D%3D&issuer=X&image=https%3A%2F%2Fexample.com%2Fi.png`,
  `otpauth://totp/a:b?secret=GEZD GNBV-GY3T QOJQ GEZDGNBVGY3TQOJQ&issuer=Spaced`,
  `otpauth://totp/Issuer:caf%C3%A9?secret=${SECRET}&issuer=Issu%C3%A9r`,
  // Refused by both:
  `otpauth://totp/a:b?secret=${SECRET}&issuer=A&issuer=B`,
  `otpauth://totp/a:b?issuer=A`,
  `otpauth://hotp/a:b?secret=${SECRET}&issuer=A`,
  `otpauth://totp/a:b?secret=${SECRET}&algorithm=MD5`,
  `otpauth://totp/a:b?secret=${SECRET}&digits=9`,
  `otpauth://totp/a:b?secret=${SECRET}&digits=x`,
  `otpauth://totp/a:b?secret=GEZDGNBV`,
  `otpauth://totp/a:b?secret=GEZ1GNBVGY3TQOJQ`,
  `otpauth://totp/a:b?secret=${SECRET}=A`,
  `otpauth://xotp/a:b?secret=${SECRET}`,
  `otpauth://totp/Steam:gabe?secret=${SECRET}&encoder=steam&period=60`,
  `otpauth://totp/a%ZZ:b?secret=${SECRET}`,
  `https://example.com/?secret=${SECRET}`,
];

function cli() {
  const home = mkdtempSync(join(tmpdir(), 'coffer-web-otp-'));
  const env = { HOME: home, XDG_DATA_HOME: join(home, 'data'), PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', NO_COLOR: '1',
    SWIFT_BACKTRACE: 'enable=no' };
  const passphrase = 'otpauth oracle vault Kv7 quartz';
  execFileSync(binary('coffer'), ['init', '--passphrase'], { env, input: `${passphrase}\n${passphrase}\n` });
  return {
    path: join(home, 'data/coffer/vault/vault.sqlite'), passphrase,
    add: (uri) => {
      try {
        return execFileSync(binary('coffer'), ['add', 'otp', '--issuer', 'Fallback'], { env, input: `${uri}\n`, stdio: 'pipe' })
          .toString().trim();
      } catch {
        return null;
      }
    },
  };
}

test('every URI reads as the CLI reads it, and the CLI’s refusals are the page’s', () => {
  const vault = cli();
  const added = URIS.map((uri) => vault.add(uri));
  const [read] = oracle([{ op: 'read_vault', path: vault.path, secret_kind: 'passphrase', secret: vault.passphrase }]);
  const byID = new Map(read.items.map((item) => [item.id, item.content]));
  let accepted = 0;
  URIS.forEach((uri, index) => {
    let mine;
    try {
      mine = parseURI(uri);
    } catch (error) {
      assert.equal(error.code, 'otpauth');
      assert.ok(!error.message.includes(SECRET.slice(0, 8)), 'an error never quotes the secret');
      mine = null;
    }
    const theirs = added[index] && byID.get(added[index].replaceAll('-', ''));
    assert.equal(Boolean(mine), Boolean(theirs), `${uri}: the page ${mine ? 'accepts' : 'refuses'}, the CLI ${theirs ? 'accepts' : 'refuses'}`);
    if (!theirs) return;
    accepted += 1;
    assert.deepEqual({ issuer: mine.issuer ?? 'Fallback', account: mine.account, type: mine.type, secret: hex(mine.secret),
      algorithm: mine.algorithm, digits: mine.digits, period: mine.type === 'totp' ? mine.period : null,
      counter: mine.counter }, { issuer: theirs.issuer, account: theirs.account, type: theirs.type, secret: theirs.secret,
      algorithm: theirs.algorithm, digits: theirs.digits, period: theirs.period, counter: theirs.counter }, uri);
  });
  assert.equal(accepted, 10);
});

test('a bare secret is a TOTP token; base32 is lenient where authenticators are, strict elsewhere', () => {
  assert.deepEqual({ ...parseToken(` ${SECRET.toLowerCase()} `), secret: null },
    { issuer: null, account: '', type: 'totp', secret: null, algorithm: 'SHA1', digits: 6, period: 30, counter: null });
  assert.equal(Buffer.from(base32('GEZD-GNBV GY3T\tQOJQ====')).toString(), '1234567890');
  assert.equal(hex(base32('6G2NUZHN6QCF7KDAV')), hex(base32('6G2NUZHN6QCF7KDA')));
  for (const bad of ['GEZ1', 'GEZD=A', 'GEZDÄ', '   ']) assert.throws(() => parseToken(bad), { code: 'otpauth' }, bad);
  assert.throws(() => parseURI(`otpauth://totp/a:b?secret=${'A'.repeat(4100)}`), /longer than 4096 bytes/);
});

// Google Authenticator exports: the fixtures the CLI's importer is tested on (written by an independent protobuf
// encoder, Tests/CofferInteropTests/Fixtures/google/make_google.py), with the codes otp_reference.py computed.
const GOOGLE = new URL('../../Tests/CofferInteropTests/Fixtures/google/', import.meta.url);

function migrationLines(name) {
  return readFileSync(new URL(name, GOOGLE), 'utf8').split('\n').filter((line) => line.startsWith('otpauth-migration:'));
}

test('a Google Authenticator export reads as the CLI’s importer reads it: every token, its codes, its problems', async () => {
  const expected = JSON.parse(readFileSync(new URL('expected.json', GOOGLE), 'utf8'));
  const reads = migrationLines('export.txt').map(parseMigration);
  const tokens = reads.flatMap((read) => read.tokens);
  assert.equal(tokens.length, expected.export.items.length);
  for (const [token, item] of tokens.map((token, index) => [token, expected.export.items[index]])) {
    assert.deepEqual({ issuer: token.issuer, account: token.account, type: token.type, algorithm: token.algorithm,
      digits: token.digits, secret: token.secret },
    { issuer: item.issuer, account: item.account, type: item.kind, algorithm: item.algorithm, digits: item.digits,
      secret: base32(item.secret) });
    if (item.kind === 'hotp') assert.equal(token.counter, item.counter);
    else assert.equal(token.period, item.period);
    for (const [index, time] of item.times.entries()) {
      const code = item.kind === 'hotp' ? await hotpCode(token, item.counter) : (await currentCode(token, time * 1000)).code;
      assert.equal(code, item.codes[index], `${token.issuer} at ${time}`);
    }
  }
  const problems = reads.flatMap((read) => read.problems);
  assert.equal(problems.length, expected.export.problems.length);
  expected.export.problems.forEach((problem, index) => {
    assert.equal(problems[index].entry, problem.entry);
    assert.match(problems[index].reason, new RegExp(problem.reason, 'i'));
  });
  assert.deepEqual(reads.map((read) => read.batch), [{ index: 1, size: 2 }, { index: 2, size: 2 }]);
  assert.deepEqual(migrationLines('missing.txt').map((line) => parseMigration(line).batch), [{ index: 1, size: 3 }, { index: 3, size: 3 }]);
});

test('a damaged or hostile export is one clear error, or keeps what it read before the damage', () => {
  const [line] = migrationLines('export.txt');
  const data = decodeURIComponent(line.split('data=')[1]);
  const bytes = Buffer.from(data, 'base64');
  const uri = (payload) => `otpauth-migration://offline?data=${encodeURIComponent(Buffer.from(payload).toString('base64'))}`;
  // Cut inside the second entry: the first is kept, the damage is reported.
  const cut = parseMigration(uri(bytes.subarray(0, 60)));
  assert.equal(cut.tokens.length, 1);
  assert.match(cut.problems.at(-1).reason, /damaged after 1 entries: the protobuf data ends inside a field/);
  // A field length far past the end, an overlong varint, a group: nothing is read and nothing throws.
  for (const payload of [[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f], [0x08, ...Array(11).fill(0xff)], [0x0b, 0x0c]]) {
    const read = parseMigration(uri(payload));
    assert.equal(read.tokens.length, 0);
    assert.equal(read.problems.length, 1);
  }
  const refused = [
    'otpauth-migration://offline', 'otpauth-migration://offline?data=', 'otpauth-migration://offline?data=AAAA&data=AAAA',
    'otpauth-migration://offline?data=%ZZ', 'otpauth-migration://offline?data=!!!!', `otpauth-migration://offline?data=${'A'.repeat(9000)}`,
    'otpauth://totp/a:b?secret=GEZDGNBVGY3TQOJQ',
  ];
  for (const text of refused) {
    assert.throws(() => parseMigration(text), (error) => error.code === 'otpauth' && !error.message.includes('AAAA'), text);
  }
  // A space where a form decoder turned `+` into one, and URL-safe digits, still read.
  assert.equal(parseMigration(line.replaceAll('%2B', ' ')).tokens.length, parseMigration(line).tokens.length);
});
