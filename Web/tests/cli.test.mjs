// Vaults written by the CLI in this test, read by the web reader: the same items the Python reader finds, for a
// PBKDF2 vault and a scrypt one (whose stretch runs the page's own ROMix).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openBox } from '../app/js/crypto.js';
import { decodeContent, itemAD } from '../app/js/format.js';
import { itemsKey } from '../app/js/keys.js';
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
  return { path: join(home, 'data/coffer/vault/vault.sqlite'), passphrase };
}

for (const [label, flags] of [['PBKDF2', []], ['scrypt', ['--scrypt']]]) {
  test(`a ${label} vault written by the CLI reads as the Python reader reads it`, async () => {
    const { path, passphrase } = writeVault(flags);
    const rows = vaultRows(path);
    const { master, kdf } = await unlockFile(rows, passphrase);
    assert.equal(kdf.id, label === 'scrypt' ? 2 : 1);
    const ik = await itemsKey(master, rows.vaultID);
    const mine = [];
    for (const item of rows.items.filter((row) => !row.deleted)) {
      const plain = await openBox(ik, item.boxBytes, itemAD(rows.vaultID, item.idBytes, item.kind, item.revision, item.updated_at));
      mine.push({ id: item.id, kind: item.kind, content: pythonShape(decodeContent(item.kind, plain)) });
    }
    const [python] = oracle([{ op: 'read_vault', path, secret_kind: 'passphrase', secret: passphrase }]);
    assert.deepEqual(mine, python.items.map(({ id, kind, content }) => ({ id, kind, content })));
    assert.deepEqual(mine.map((item) => item.content.name ?? item.content.issuer).sort(), ['Bob', 'Costco', 'GitHub', 'Library', 'OpenAI']);
    assert.equal(rows.items.filter((row) => row.deleted).length, 1);
  });
}
