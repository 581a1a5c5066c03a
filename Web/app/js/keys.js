// @ts-check
// The account key schedule (FORMAT.md §8.1) and the keys below the master key (§2, §8.6).
import { CofferError, utf8 } from './bytes.js';
import { hkdf, openBox, pbkdf2, scrypt } from './crypto.js';
import { SLOT_PASSPHRASE, kdfEncoding, slotAD } from './format.js';

/** @typedef {import('./format.js').KDF} KDF */

/**
 * The UTF-8 bytes of the passphrase's NFC form, untrimmed; empty and NUL-holding passphrases are refused (§2).
 * @param {string} passphrase
 */
export function passphraseBytes(passphrase) {
  if (passphrase.length === 0) throw new CofferError('passphrase', 'the passphrase is empty');
  if (passphrase.includes('\0')) throw new CofferError('passphrase', 'the passphrase holds a NUL character');
  return utf8(passphrase.normalize('NFC'));
}

/**
 * `S = KDF(passphrase, salt)`; scrypt runs its ROMix in JavaScript (crypto.js), PBKDF2 natively.
 * @param {string} passphrase
 * @param {KDF} kdf
 * @param {Uint8Array} salt
 */
export function stretch(passphrase, kdf, salt) {
  const password = passphraseBytes(passphrase);
  return kdf.id === 1 ? pbkdf2(password, salt, kdf.iterations) : scrypt(password, salt, kdf.logN, kdf.r, kdf.p);
}

/**
 * One stretch, two keys: `KEK = HKDF(S, salt, "coffer/v1/kek/passphrase")`,
 * `auth = HKDF(S, salt, "coffer/v1/sync/auth")`.
 * @param {string} passphrase
 * @param {KDF} kdf
 * @param {Uint8Array} salt
 */
export async function accountKeys(passphrase, kdf, salt) {
  if (salt.length < 16 || salt.length > 64) throw new CofferError('kdf-bounds', 'the salt must be 16 to 64 bytes');
  const stretched = await stretch(passphrase, kdf, salt);
  const [kek, auth] = await Promise.all([
    hkdf(stretched, salt, utf8('coffer/v1/kek/passphrase')),
    hkdf(stretched, salt, utf8('coffer/v1/sync/auth')),
  ]);
  stretched.fill(0);
  return { kek, auth };
}

/**
 * The master key from a passphrase slot: the box opens only with the slot's own AD (vault id, type, KDF, salt).
 * @param {Uint8Array} kek
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} slotID
 * @param {KDF} kdf
 * @param {Uint8Array} salt
 * @param {Uint8Array} wrappedKey
 */
export async function unwrapMaster(kek, vaultID, slotID, kdf, salt, wrappedKey) {
  const master = await openBox(kek, wrappedKey, slotAD(vaultID, slotID, SLOT_PASSPHRASE, kdfEncoding(kdf), salt),
    'the passphrase slot');
  if (master.length !== 32) throw new CofferError('box', 'the passphrase slot does not hold a 32-byte key');
  return master;
}

/**
 * `PHK = HKDF(MK, vault_id, "coffer/v1/photos")`: the key of card photo parts (§5b).
 * @param {Uint8Array} master
 * @param {Uint8Array} vaultID
 */
export function photosKey(master, vaultID) {
  return hkdf(master, vaultID, utf8('coffer/v1/photos'));
}

/**
 * `IK = HKDF(MK, vault_id, "coffer/v1/items")`.
 * @param {Uint8Array} master
 * @param {Uint8Array} vaultID
 */
export function itemsKey(master, vaultID) {
  return hkdf(master, vaultID, utf8('coffer/v1/items'));
}

/**
 * `K_man = HKDF(MK, vault_id, "coffer/v1/manifest")`.
 * @param {Uint8Array} master
 * @param {Uint8Array} vaultID
 */
export function manifestKey(master, vaultID) {
  return hkdf(master, vaultID, utf8('coffer/v1/manifest'));
}

/**
 * `WK = HKDF(MK, vault_id, "coffer/v1/web/auth")`: seals the account's auth key in this browser's copy (§8.9).
 * @param {Uint8Array} master
 * @param {Uint8Array} vaultID
 */
export function webAuthKey(master, vaultID) {
  return hkdf(master, vaultID, utf8('coffer/v1/web/auth'));
}
