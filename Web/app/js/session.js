// @ts-check
// The sync API as `coffer sync` speaks it (FORMAT.md §8.1, §8.2), against the server that served the page: pre-login,
// login with the auth key, the change feed, the manifests between two epochs, logout. Tokens live in the caller's
// objects only.
import { CofferError, fromBase64, toBase64 } from './bytes.js';
import { kdfFromWire, manifestFromBase64, meetsLoginFloor, rowFromWire } from './format.js';

const PAGE = 1000;

/** @typedef {import('./format.js').Manifest} Manifest */
/** @typedef {import('./format.js').LeafRow} LeafRow */

/**
 * The email as the server stores it (§8.1): trimmed, lower-cased, NFC.
 * @param {string} email
 */
export function normaliseEmail(email) {
  return email.trim().toLowerCase().normalize('NFC');
}

/**
 * A JSON call to the sync API; an error answer becomes a CofferError with the server's code. Returns the answer's
 * JSON, not yet checked (the caller checks what it reads).
 * @param {string} base
 * @param {string} path
 * @param {{ method?: string, token?: string | null, body?: object }} options
 * @returns {Promise<any>}
 */
export async function call(base, path, { method = 'GET', token, body } = {}) {
  /** @type {Record<string, string>} */
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
    if (response.status === 401) throw new CofferError('unauthorized', 'the server ended this session');
    if (response.status === 429) throw new CofferError('rate-limited', 'too many attempts: wait a few minutes');
    if (response.status >= 502 && response.status <= 504) throw new CofferError('transport', 'the server is not answering');
    // A refusal the caller may answer (sync.js's 409s) keeps the status and the answer.
    const error = /** @type {CofferError & { status?: number, answer?: any }} */ (
      new CofferError('server', `the server refused (${response.status} ${String(answer?.error ?? 'error').slice(0, 40)})`));
    error.status = response.status;
    error.answer = answer;
    throw error;
  }
  if (answer === null) throw new CofferError('malformed', 'the server sent an answer this version does not understand');
  return answer;
}

/**
 * The account's KDF and salt from pre-login, refused below the login floor before anything is stretched (§8.1).
 * @param {string} base
 * @param {string} email
 */
export async function prelogin(base, email) {
  const answer = await call(base, '/v1/auth/prelogin', { method: 'POST', body: { email } });
  const kdf = kdfFromWire(answer.kdf);
  if (!meetsLoginFloor(kdf)) {
    throw new CofferError('weak-kdf', 'the server asks for weaker passphrase stretching than Coffer\'s defaults; nothing '
      + 'was sent (an account made that way opens only in the CLI, with --allow-weak-kdf)');
  }
  return { kdf, wireKDF: answer.kdf, salt: fromBase64(answer.salt, 'salt') };
}

/**
 * Logs in with the auth key: the session's access token, vault id and passphrase slot.
 * @param {string} base
 * @param {string} email
 * @param {Uint8Array} auth
 */
export function login(base, email, auth) {
  return call(base, '/v1/auth/login', { method: 'POST', body: { email, auth_key: toBase64(auth) } });
}

/**
 * Ends the server session (best effort: a locked page forgets the token either way).
 * @param {string} base
 * @param {string | null} token
 */
export async function logout(base, token) {
  if (token) await call(base, '/v1/auth/logout', { method: 'POST', token }).catch(() => {});
}

/**
 * The feed after `cursor`: `{ rows, cursor, head }`, `head` the last page's manifest (parsed) or null.
 * @param {string} base
 * @param {string} token
 * @param {number} cursor
 * @returns {Promise<{ rows: LeafRow[], cursor: number, head: Manifest | null }>}
 */
export async function pull(base, token, cursor) {
  /** @type {LeafRow[]} */
  const rows = [];
  for (;;) {
    const page = await call(base, `/v1/sync/changes?since=${cursor}&limit=${PAGE}`, { token });
    // A cursor below the one asked for is the server's to answer for: the verification of what it shows decides.
    if (!Array.isArray(page.items) || !Number.isSafeInteger(page.cursor) || page.cursor < 0) {
      throw new CofferError('malformed', 'the server sent a page of changes this version does not understand');
    }
    for (const item of page.items) rows.push(rowFromWire(item));
    // A page that says more follows must move on, or a server could keep the device reading forever.
    if (page.has_more && page.cursor <= cursor) {
      throw new CofferError('malformed', 'the server sent a page of changes that does not move on');
    }
    cursor = page.cursor;
    if (!page.has_more) return { rows, cursor, head: page.head ? await manifestFromBase64(page.head) : null };
  }
}

/**
 * The manifests after epoch `after`, oldest first (§8.2).
 * @param {string} base
 * @param {string} token
 * @param {number} after
 */
export async function manifestsAfter(base, token, after) {
  /** @type {Manifest[]} */
  const chain = [];
  for (;;) {
    const page = await call(base, `/v1/sync/manifests?after=${after}&limit=${PAGE}`, { token });
    for (const value of page.manifests ?? []) chain.push(await manifestFromBase64(value));
    if (!page.has_more || !page.manifests?.length) return chain;
    after = chain[chain.length - 1].epoch;
  }
}
