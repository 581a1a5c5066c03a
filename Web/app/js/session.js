// Logging in and pulling, as `coffer sync login` does (FORMAT.md §8.1, §8.6), against the server that served the page.
// Tokens and keys live in this module's objects only; the one thing kept in browser storage is the newest manifest
// this browser verified (ciphertext-free bytes the server already holds), so that a rollback is caught next time.
import { CofferError, fromBase64, toBase64, uuidBytes } from './bytes.js';
import { accountCommitment, kdfFromWire, manifestFromBase64, meetsLoginFloor, rowFromWire } from './format.js';
import { accountKeys, unwrapMaster } from './keys.js';
import { verifyState } from './verify.js';

const PAGE = 1000;

/** A JSON call to the sync API; an error answer becomes a CofferError with the server's code. */
async function call(base, path, { method = 'GET', token, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(base + path, { method, headers, body: body && JSON.stringify(body), cache: 'no-store',
      credentials: 'omit', referrerPolicy: 'no-referrer' });
  } catch {
    throw new CofferError('transport', 'cannot reach the server');
  }
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401 && path === '/v1/auth/login') {
      throw new CofferError('wrong-passphrase', 'wrong email or passphrase');
    }
    if (response.status === 429) throw new CofferError('rate-limited', 'too many attempts: wait a few minutes');
    throw new CofferError('server', `the server refused (${response.status} ${String(answer?.error ?? 'error').slice(0, 40)})`);
  }
  if (answer === null) throw new CofferError('malformed', 'the server sent an answer this version does not understand');
  return answer;
}

/** Where the newest verified manifest of a vault is kept between visits. */
export function verifiedHeadKey(vaultID) {
  return `coffer.verified.${vaultID}`;
}

/**
 * Logs in and verifies the vault: `{ items, fingerprint, head, vaultID, lock() }`. `storage` is where the verified
 * head is kept (localStorage in the page); `progress(text)` tells the user what is happening.
 */
export async function unlock({ base = '', email, passphrase, storage, progress = () => {} }) {
  const normalised = email.trim().toLowerCase().normalize('NFC');
  progress('Asking the server how to stretch the passphrase…');
  const prelogin = await call(base, '/v1/auth/prelogin', { method: 'POST', body: { email: normalised } });
  const kdf = kdfFromWire(prelogin.kdf);
  if (!meetsLoginFloor(kdf)) {
    throw new CofferError('weak-kdf', 'the server asks for weaker passphrase stretching than Coffer\'s defaults; nothing '
      + 'was sent (an account made that way opens only in the CLI, with --allow-weak-kdf)');
  }
  const salt = fromBase64(prelogin.salt, 'salt');
  progress(kdf.id === 2 ? 'Stretching the passphrase (scrypt, a few seconds)…' : 'Stretching the passphrase…');
  const { kek, auth } = await accountKeys(passphrase, kdf, salt);
  progress('Logging in…');
  const session = await call(base, '/v1/auth/login', { method: 'POST', body: { email: normalised, auth_key: toBase64(auth) } });
  auth.fill(0);
  const token = session.access_token;
  try {
    const slot = session.slot;
    if (!slot || !session.vault_id) throw new CofferError('no-vault', 'this account has no synced vault yet');
    const slotKDF = kdfFromWire(slot.kdf);
    const slotSalt = fromBase64(slot.salt, 'salt');
    if (JSON.stringify(slotKDF) !== JSON.stringify(kdf) || toBase64(slotSalt) !== toBase64(salt)) {
      throw new CofferError('slot-changed', 'the server handed out a slot with other parameters than it asked to stretch with');
    }
    const vaultID = uuidBytes(session.vault_id);
    const master = await unwrapMaster(kek, vaultID, uuidBytes(slot.id), kdf, salt, fromBase64(slot.wrapped_key, 'slot'))
      .catch(() => {
        throw new CofferError('slot', 'the passphrase slot the server handed out does not open: it was changed');
      });
    kek.fill(0);
    progress('Fetching and verifying the vault…');
    const rows = [];
    let cursor = 0;
    let head = null;
    for (;;) {
      const page = await call(base, `/v1/sync/changes?since=${cursor}&limit=${PAGE}`, { token });
      for (const item of page.items) rows.push(rowFromWire(item));
      cursor = page.cursor;
      if (!page.has_more) {
        head = page.head ? await manifestFromBase64(page.head) : null;
        break;
      }
    }
    const key = verifiedHeadKey(session.vault_id.toLowerCase());
    const stored = storage?.getItem(key);
    const verified = stored ? await manifestFromBase64(stored) : null;
    const chain = [];
    if (verified && head && head.epoch > verified.epoch) {
      let after = verified.epoch;
      for (;;) {
        const page = await call(base, `/v1/sync/manifests?after=${after}&limit=${PAGE}`, { token });
        for (const value of page.manifests) chain.push(await manifestFromBase64(value));
        if (!page.has_more || !page.manifests.length) break;
        after = chain[chain.length - 1].epoch;
      }
    }
    const account = await accountCommitment(kdf, salt);
    const state = await verifyState({ master, vaultID, account, head, chain, rows, verified });
    master.fill(0);
    if (head) storage?.setItem(key, toBase64(head.bytes));
    return { ...state, vaultID: session.vault_id.toLowerCase(), lock: () => logout(base, token) };
  } catch (error) {
    await logout(base, token);
    throw error;
  }
}

/** Ends the server session (best effort: a locked page forgets the token either way). */
async function logout(base, token) {
  await call(base, '/v1/auth/logout', { method: 'POST', token }).catch(() => {});
}
