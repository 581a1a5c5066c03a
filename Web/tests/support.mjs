// Shared by the node tests: the repository's paths, the outside oracles (Python's `cryptography` and `sqlite3`), and
// opening a vault file with the web reader.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fromHex, hex } from '../app/js/bytes.js';
import { kdfFromEncoding, SLOT_PASSPHRASE } from '../app/js/format.js';
import { accountKeys, unwrapMaster } from '../app/js/keys.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const goldenVault = join(root, 'Tests/Vectors/vault/v1/vault.sqlite');
export const goldenPassphrase = 'golden passphrase v1';

/** Answers from Tests/oracles/openssl_oracle.py (OpenSSL through Python's `cryptography`). */
export function oracle(requests) {
  const out = execFileSync('python3', [join(root, 'Tests/oracles/openssl_oracle.py')], {
    input: JSON.stringify(requests), maxBuffer: 64 << 20,
  });
  return JSON.parse(out);
}

/** The rows of a vault file, bytes as Uint8Array. */
export function vaultRows(path) {
  const dump = JSON.parse(execFileSync('python3', [join(root, 'Web/tests/vault_rows.py'), path]));
  return {
    vaultID: fromHex(dump.vault_id),
    slots: dump.slots.map((slot) => ({ ...slot, id: fromHex(slot.id), kdf: fromHex(slot.kdf), salt: fromHex(slot.salt),
      wrapped_key: fromHex(slot.wrapped_key) })),
    items: dump.items.map((item) => ({ ...item, idBytes: fromHex(item.id), boxBytes: item.box ? fromHex(item.box) : null })),
  };
}

/** The master key of a vault file through its passphrase slot, and the KEK that opened it. */
export async function unlockFile(rows, passphrase) {
  const slot = rows.slots.find((candidate) => candidate.type === SLOT_PASSPHRASE);
  const kdf = kdfFromEncoding(slot.kdf);
  const { kek } = await accountKeys(passphrase, kdf, slot.salt);
  return { slot, kdf, kek, master: await unwrapMaster(kek, rows.vaultID, slot.id, kdf, slot.salt, slot.wrapped_key) };
}

/** Content as the Python reader prints it: byte strings in hex. */
export function pythonShape(value) {
  if (value instanceof Uint8Array) return hex(value);
  if (Array.isArray(value)) return value.map(pythonShape);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, pythonShape(v)]));
  return value;
}

/** The built `coffer` and `coffer-server` binaries (COFFER_BIN / COFFER_SERVER_BIN, else .build/debug). */
export function binary(name) {
  const override = process.env[name === 'coffer' ? 'COFFER_BIN' : 'COFFER_SERVER_BIN'];
  const path = override ?? join(root, '.build/debug', name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run swift build first`);
  return path;
}

/** Every single-bit flip of `bytes`, one copy each. */
export function* bitFlips(bytes) {
  for (let i = 0; i < bytes.length * 8; i++) {
    const copy = bytes.slice();
    copy[i >> 3] ^= 1 << (i & 7);
    yield copy;
  }
}
