// Vaults written by the CLI in this test, read by the web reader: the same items the Python reader finds, for a
// PBKDF2 vault and a scrypt one (whose stretch runs the page's own ROMix).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hex } from '../app/js/bytes.js';
import { encodeContent } from '../app/js/content.js';
import { openBox } from '../app/js/crypto.js';
import { PHOTO_KIND, decodeContent, itemAD, photoAD } from '../app/js/format.js';
import { itemsKey, photosKey } from '../app/js/keys.js';
import { binary, oracle, pythonShape, unlockFile, vaultRows } from './support.mjs';

function writeVault(flags) {
  const home = mkdtempSync(join(tmpdir(), 'coffer-web-cli-'));
  const env = { HOME: home, XDG_DATA_HOME: join(home, 'data'), PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', NO_COLOR: '1',
    SWIFT_BACKTRACE: 'enable=no' };
  const coffer = (args, input = '') => execFileSync(binary('coffer'), args, { env, input });
  const passphrase = 'cli passphrase für das Web';
  coffer(['init', '--passphrase', ...flags], `${passphrase}\n${passphrase}\n`);
  coffer(['add', 'card', 'Costco', '--symbology', 'code128', '--tag', 'grocery', '--network', 'costco', '--valid-to', '2099-01-31'], '111222333\n');
  coffer(['add', 'card', 'Library', '--symbology', 'pdf417', '--charset', 'iso-8859-1'], 'M\u00fcller 42\n');
  coffer(['add', 'card', 'Amazon return', '--symbology', 'qr', '--one-time'], 'https://example.com/r/1\n');
  coffer(['add', 'otp'], 'otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub&algorithm=SHA256&digits=8\n');
  coffer(['add', 'credential', 'OpenAI', '--provider', 'openai'], 'sk-proj-cli-written\n');
  coffer(['add', 'note', 'Bob'], 'Met at the café\n');
  coffer(['rm', 'Amazon return', '--purge', '--yes']);
  // A front photo of 70,000 bytes: two parts (FORMAT.md §5b), which the page checks and does not show.
  const photo = join(home, 'front.png');
  writeFileSync(photo, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(69992, 7)]));
  coffer(['edit', 'Costco', '--photo', 'front', photo]);
  return { path: join(home, 'data/coffer/vault/vault.sqlite'), passphrase };
}

for (const [label, flags] of [['PBKDF2', []], ['scrypt', ['--scrypt']]]) {
  test(`a ${label} vault written by the CLI reads as the Python reader reads it`, async () => {
    const { path, passphrase } = writeVault(flags);
    const rows = vaultRows(path);
    const { master, kdf } = await unlockFile(rows, passphrase);
    assert.equal(kdf.id, label === 'scrypt' ? 2 : 1);
    const ik = await itemsKey(master, rows.vaultID);
    const phk = await photosKey(master, rows.vaultID);
    const mine = [];
    let parts = 0;
    for (const item of rows.items.filter((row) => !row.deleted)) {
      if (item.kind === PHOTO_KIND) {
        const part = await openBox(phk, item.boxBytes, photoAD(rows.vaultID, item.idBytes, item.revision, item.updated_at));
        assert.equal(part[0], 1);
        parts += 1;
        continue;
      }
      const plain = await openBox(ik, item.boxBytes, itemAD(rows.vaultID, item.idBytes, item.kind, item.revision, item.updated_at));
      const { unknown, photos, ...content } = decodeContent(item.kind, plain);
      assert.deepEqual(unknown, []);
      // The web writer writes it back byte for byte: the same fields in the CLI's order, photos included.
      assert.equal(hex(encodeContent(item.kind, { ...content, unknown, photos })), hex(plain), `${item.kind} ${item.id}`);
      if (item.kind === 'card' && content.name === 'Costco') assert.equal(photos[0].size, 70000);
      mine.push({ id: item.id, kind: item.kind, content: pythonShape(content) });
    }
    assert.equal(parts, 2);
    const [python] = oracle([{ op: 'read_vault', path, secret_kind: 'passphrase', secret: passphrase }]);
    // This reader skips a card's photo record (tag 30), which the Python reader joins.
    assert.equal(python.items.find((item) => item.content.name === 'Costco').content.photos[0].size, 70000);
    for (const item of python.items) delete item.content.photos;
    assert.deepEqual(mine, python.items.map(({ id, kind, content }) => ({ id, kind, content })));
    assert.deepEqual(mine.map((item) => item.content.name ?? item.content.issuer).sort(), ['Bob', 'Costco', 'GitHub', 'Library', 'OpenAI']);
    assert.equal(rows.items.filter((row) => row.deleted).length, 1);
  });
}
