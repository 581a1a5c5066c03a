// @ts-check
// The app's settings and the remembered email (FORMAT.md §8.9: `coffer.settings`, `coffer.email` in localStorage).
// Values read back are bounded like any stored input: a damaged value falls back to the default.

export const DEFAULTS = Object.freeze({ idleMinutes: 5, hiddenMinutes: 3 });
const HIDDEN_CHOICES = [0, 1, 3, 5, 15];
const SETTINGS = 'coffer.settings';
const EMAIL = 'coffer.email';

/** @typedef {Pick<Storage, 'getItem' | 'setItem'>} KeyValues localStorage, or the tests' stand-in */

/**
 * @template F
 * @param {unknown} value
 * @param {(value: number) => boolean} ok
 * @param {F} fallback
 */
function bounded(value, ok, fallback) {
  return Number.isInteger(value) && ok(/** @type {number} */ (value)) ? /** @type {number} */ (value) : fallback;
}

/**
 * `{ idleMinutes (1–60), hiddenMinutes (0, 1, 3, 5 or 15) }` from `storage`.
 * @param {KeyValues} storage
 */
export function readSettings(storage) {
  /** @type {any} */
  let stored = {};
  try {
    stored = JSON.parse(storage.getItem(SETTINGS) ?? '{}') ?? {};
  } catch {
    stored = {};
  }
  return {
    idleMinutes: bounded(stored.idle_minutes, (v) => v >= 1 && v <= 60, DEFAULTS.idleMinutes),
    hiddenMinutes: bounded(stored.hidden_minutes, (v) => HIDDEN_CHOICES.includes(v), DEFAULTS.hiddenMinutes),
  };
}

/**
 * Stores the settings; values out of bounds are refused (returns false) and nothing is written.
 * @param {KeyValues} storage
 * @param {{ idleMinutes: number, hiddenMinutes: number }} settings
 */
export function writeSettings(storage, { idleMinutes, hiddenMinutes }) {
  if (bounded(idleMinutes, (v) => v >= 1 && v <= 60, null) === null) return false;
  if (bounded(hiddenMinutes, (v) => HIDDEN_CHOICES.includes(v), null) === null) return false;
  storage.setItem(SETTINGS, JSON.stringify({ idle_minutes: idleMinutes, hidden_minutes: hiddenMinutes }));
  return true;
}

/** @param {KeyValues} storage */
export function rememberedEmail(storage) {
  return storage.getItem(EMAIL) ?? '';
}

/**
 * @param {KeyValues} storage
 * @param {string} email
 */
export function rememberEmail(storage, email) {
  storage.setItem(EMAIL, email);
}
