// @ts-check
// Passkey unlock (FORMAT.md §8.9): a passkey's WebAuthn PRF output, which the authenticator gives only after the user's
// face, fingerprint or PIN, wraps the vault's master key in a slot kept in this browser's copy. Five failed passkey
// unlocks remove the slot, and the passphrase is needed again. `credentials` is `navigator.credentials` in the page
// and a stand-in authenticator in the node tests.
import { CofferError, equal, utf8, uuidBytes } from './bytes.js';
import { hkdf, openBox, sealBox } from './crypto.js';
import { associatedData } from './format.js';

/**
 * `navigator.credentials`, or the tests' stand-in authenticator.
 * @typedef {Pick<CredentialsContainer, 'create' | 'get'>} Credentials
 * @typedef {import('./device.js').Device} Device
 * @typedef {import('./store.js').Store} Store
 * @typedef {import('./store.js').VaultRecord} VaultRecord
 */

/** Failed passkey unlocks after which the passkey slot is removed. */
export const PASSKEY_TRIES = 5;

/**
 * @param {Uint8Array} vaultID
 * @param {Uint8Array} credentialID
 */
function passkeyAD(vaultID, credentialID) {
  return associatedData('coffer/v1/web-passkey', vaultID, credentialID);
}

/**
 * `KEK = HKDF(PRF output, salt, "coffer/v1/kek/passkey")`.
 * @param {Uint8Array} prf
 * @param {Uint8Array} salt
 */
function passkeyKEK(prf, salt) {
  return hkdf(prf, salt, utf8('coffer/v1/kek/passkey'));
}

/**
 * WebAuthn refuses an IP address as a relying party: the page must be reached by a name (or `localhost`).
 * @param {string} hostname
 */
export function relyingParty(hostname) {
  if (/^[0-9.]+$/.test(hostname) || hostname.includes(':') || hostname.startsWith('[')) {
    throw new CofferError('passkey-host', 'passkeys need the server’s name in the address, not an IP address');
  }
  return hostname;
}

/** @param {PublicKeyCredential | null | undefined} credential */
function prfOutput(credential) {
  const results = credential?.getClientExtensionResults?.().prf;
  const first = results?.results?.first;
  return first ? new Uint8Array(first.slice(0)) : null;
}

/** @param {unknown} error */
function refused(error) {
  if (error instanceof CofferError) return error;
  return new CofferError('passkey-refused', 'the passkey was not used (cancelled, or not recognised)');
}

/**
 * Makes a passkey for `device` and keeps the master key wrapped under its PRF output in the stored record. Needs an
 * authenticator with the PRF extension (most platform passkeys; Chromium's virtual ones with `hasPrf`).
 * @param {Device} device
 * @param {{ credentials: Credentials, hostname: string, now?: () => number }} options
 */
export async function addPasskey(device, { credentials, hostname, now = Date.now }) {
  const rpId = relyingParty(hostname);
  const salt = globalThis.crypto.getRandomValues(new Uint8Array(32));
  /** @type {PublicKeyCredential | null} */
  let created;
  try {
    // A `publicKey` request answers with a PublicKeyCredential.
    created = /** @type {PublicKeyCredential | null} */ (await credentials.create({ publicKey: {
      rp: { id: rpId, name: 'Coffer' },
      user: { id: globalThis.crypto.getRandomValues(new Uint8Array(16)), name: device.record.email, displayName: device.record.email },
      challenge: globalThis.crypto.getRandomValues(new Uint8Array(32)),
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }, { type: 'public-key', alg: -257 }],
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      extensions: { prf: { eval: { first: salt } } },
    } }));
  } catch (error) {
    throw refused(error);
  }
  if (!created?.getClientExtensionResults?.().prf?.enabled) {
    throw new CofferError('passkey-no-prf', 'this passkey cannot unlock Coffer: its authenticator has no PRF extension');
  }
  const credentialID = new Uint8Array(created.rawId.slice(0));
  // Some authenticators give the PRF output only when the passkey is used, not when it is made.
  const prf = prfOutput(created) ?? await evaluate(credentials, rpId, credentialID, salt);
  const kek = await passkeyKEK(prf, salt);
  prf.fill(0);
  const wrapped = await sealBox(kek, device.master, passkeyAD(device.vaultID, credentialID));
  kek.fill(0);
  device.record.passkey = { credential_id: credentialID, rp_id: rpId, salt, wrapped_key: wrapped, failures: 0, created_at: now() };
  await device.store.save(device.record);
}

/**
 * @param {Credentials} credentials
 * @param {string} rpId
 * @param {Uint8Array} credentialID
 * @param {Uint8Array} salt
 */
async function evaluate(credentials, rpId, credentialID, salt) {
  /** @type {PublicKeyCredential | null} */
  let asserted;
  try {
    asserted = /** @type {PublicKeyCredential | null} */ (await credentials.get({ publicKey: {
      rpId,
      challenge: globalThis.crypto.getRandomValues(new Uint8Array(32)),
      allowCredentials: [{ type: 'public-key', id: credentialID }],
      userVerification: 'required',
      extensions: { prf: { eval: { first: salt } } },
    } }));
  } catch (error) {
    throw refused(error);
  }
  if (asserted?.rawId && !equal(new Uint8Array(asserted.rawId.slice(0)), credentialID)) {
    throw new CofferError('passkey-refused', 'another passkey answered');
  }
  const prf = prfOutput(asserted);
  if (!prf) throw new CofferError('passkey-no-prf', 'this passkey cannot unlock Coffer: its authenticator has no PRF extension');
  return prf;
}

/**
 * The master key from the record's passkey slot. A refusal or an output that does not open the slot is counted in the
 * store; the fifth removes the slot.
 * @param {Store} store
 * @param {VaultRecord} record
 * @param {{ credentials: Credentials }} options
 */
export async function unlockWithPasskey(store, record, { credentials }) {
  const slot = record.passkey;
  if (!slot) throw new CofferError('no-passkey', 'this browser has no passkey for the vault: unlock with the passphrase');
  try {
    const prf = await evaluate(credentials, slot.rp_id, slot.credential_id, slot.salt);
    const kek = await passkeyKEK(prf, slot.salt);
    prf.fill(0);
    const master = await openBox(kek, slot.wrapped_key, passkeyAD(uuidBytes(record.vault_id), slot.credential_id), 'the passkey slot')
      .catch(() => { throw new CofferError('passkey-refused', 'the passkey’s answer does not open the vault'); });
    kek.fill(0);
    if (slot.failures) {
      slot.failures = 0;
      await store.save(record);
    }
    return master;
  } catch (error) {
    slot.failures = (slot.failures ?? 0) + 1;
    if (slot.failures >= PASSKEY_TRIES) {
      delete record.passkey;
      await store.save(record);
      throw new CofferError('passkey-removed', `${PASSKEY_TRIES} failed passkey unlocks: the passkey was removed from this `
        + 'browser; unlock with the passphrase');
    }
    await store.save(record);
    throw error;
  }
}

/**
 * Removes the passkey slot (the passkey itself stays in the authenticator, where the user may delete it).
 * @param {Device} device
 */
export async function removePasskey(device) {
  delete device.record.passkey;
  await device.store.save(device.record);
}
