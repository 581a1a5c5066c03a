// @ts-check
// The web vault's page: unlock (from this browser's encrypted copy, or the server), then cards (search, tags, validity,
// near me), a full-screen barcode, codes, masked credentials and notes, each added and edited here and pushed as the
// CLI pushes (or kept until the server can be reached), and the items only the CLI can serve.
// Every text from the vault or the server reaches the page through `textContent`; nothing decrypted is written to
// browser storage; locking forgets it all, the page's text included.
import { CofferError, hex, text } from './bytes.js';
import { autoLock, idleLock } from './autolock.js';
import { digits, encode, load } from './barcode.js';
import { hasPasskey, unlock, unlockByPasskey } from './device.js';
import { openEditor, stopScanning } from './editor.js';
import { currentCode, hotpCode, timeBased } from './otp.js';
import { nearestStores, watchMoves } from './places.js';
import { addPasskey, removePasskey } from './passkey.js';
import { IndexedStore } from './store.js';
import { readSettings, rememberEmail, rememberedEmail, writeSettings } from './settings.js';

/**
 * @typedef {import('./device.js').Device} Device
 * @typedef {import('./format.js').Card} Card
 * @typedef {import('./format.js').Token} Token
 * @typedef {import('./format.js').Credential} Credential
 * @typedef {import('./format.js').Note} Note
 * @typedef {import('./format.js').SigningKey} SigningKey
 * @typedef {import('./format.js').Kept} Kept
 * @typedef {import('./content.js').Writable} Writable
 * @typedef {import('./content.js').Draft<Token>} TokenDraft
 * @typedef {import('./editor.js').Action} Action
 * @typedef {ReturnType<typeof encode>} Grid
 * @typedef {{ item: Item<Token & Kept>, code: HTMLSpanElement, remaining: HTMLSpanElement, row: HTMLLIElement,
 *   counted: boolean }} CodeRow a token's row in the list of codes
 */

/**
 * @template [C=import('./format.js').Content]
 * @typedef {import('./format.js').Item<C>} Item
 */

/**
 * An element of index.html by its id; every id asked for is in the page (app.test.mjs checks).
 * @param {string} id
 */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const LINEAR = new Set(['code128', 'gs1_128', 'ean13', 'ean8', 'upc_a', 'upc_e', 'code39', 'code93', 'itf', 'itf14', 'codabar']);

/**
 * The open vault, null while locked. The lists, the status line and the forms are drawn only while it is open: lock()
 * hides them first, and render() and renderStatus() draw nothing once it has. The casts to Device below rest on that.
 * @type {Device | null}
 */
let vault = null;
/** @type {IndexedStore | null} */
let store = null;
/** @type {import('./barcode.js').EncoderExports | null} */
let barcodes = null;
/** @type {{ grid: Grid, linear: boolean } | null} */
let shown = null;
/** @type {{ text: string, tag: string | null, archived: boolean }} */
let filter = { text: '', tag: null, archived: false };
let codeFilter = '';
/** @type {Map<string, number> | null} */
let distances = null;
/** @type {number | null} */
let codeTimer = null;
/** @type {CodeRow[]} */
let codeRows = [];
/** @type {Set<CodeRow>} */
let visibleCodes = new Set();
/** @type {IntersectionObserver | null} */
let codeObserver = null;
/** @type {WakeLockSentinel | null} */
let wakeLock = null;
/** @type {(() => void) | null} */
let stopWatching = null;
/** @type {Promise<void> | null} */
let syncing = null;
/** @type {{ timer: number | null, delay: number }} */
let retry = { timer: null, delay: 0 };
/** @type {Set<number | null>} */
const secretTimers = new Set();
/** @type {string[]} */
let photoURLs = [];
/**
 * HOTP codes on screen, by token id, so that a redraw of the list after a sync keeps them: `{ code, timer }`.
 * @type {Map<string, { code: string, timer: number }>}
 */
const countedCodes = new Map();
let settings = readSettings(window.localStorage);

/**
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {string} [className]
 * @param {string | null} [content]
 */
function element(tag, className, content) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (content !== undefined) node.textContent = content;
  return node;
}

/** @param {unknown} error */
function showError(error) {
  const message = error instanceof CofferError ? error.message : 'something went wrong in this page';
  $('error').textContent = message;
  $('error').hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').textContent = '';
  $('notice').hidden = true;
  $('notice').textContent = '';
}

/**
 * A line that says what just happened, until the next action.
 * @param {string} message
 */
function showNotice(message) {
  $('notice').textContent = message;
  $('notice').hidden = false;
}

/** @param {number} ms */
function day(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * "just now", "5 min ago", "3 h ago", or the day.
 * @param {number} ms
 */
function ago(ms, now = Date.now()) {
  const minutes = Math.floor((now - ms) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 24 * 60) return `${Math.floor(minutes / 60)} h ago`;
  return `on ${day(ms)}`;
}

/**
 * What a card's validity says now: `{ label, kind, usable }`.
 * @param {Card} card
 * @param {number} now
 */
function validity(card, now) {
  if (card.one_time && card.used_at !== null) return { label: `used ${day(card.used_at)}`, kind: 'used', usable: false };
  if (card.valid_to !== null && now > card.valid_to) return { label: `expired ${day(card.valid_to)}`, kind: 'expired', usable: false };
  if (card.valid_from !== null && now < card.valid_from) return { label: `from ${day(card.valid_from)}`, kind: 'future', usable: false };
  if (card.valid_to !== null) return { label: `until ${day(card.valid_to)}`, kind: 'valid', usable: true };
  return { label: card.one_time ? 'one-time' : '', kind: 'valid', usable: true };
}

/** @param {Card} card */
function payloadText(card) {
  if (card.payload_charset === 'binary') return null;
  return card.payload_charset === 'utf-8' ? text(card.payload) : String.fromCharCode(...card.payload);
}

/** @returns {Item<Card & Kept>[]} */
function cards() {
  return /** @type {Item<Card & Kept>[]} */ (/** @type {Device} */ (vault).items
    .filter((item) => item.kind === 'card' && /** @type {Card} */ (item.content).archived_at === null));
}

/** @returns {Item<Card & Kept>[]} */
function archivedCards() {
  return /** @type {Item<Card & Kept>[]} */ (/** @type {Device} */ (vault).items
    .filter((item) => item.kind === 'card' && /** @type {Card} */ (item.content).archived_at !== null));
}

function renderTags() {
  const tags = [...new Set(cards().flatMap((item) => item.content.tags))].sort();
  const box = $('tags');
  box.replaceChildren(...tags.map((tag) => {
    const chip = element('button', filter.tag === tag ? 'active' : '', tag);
    chip.type = 'button';
    chip.addEventListener('click', () => {
      filter.tag = filter.tag === tag ? null : tag;
      renderTags();
      renderCards();
    });
    return chip;
  }));
}

function renderCards() {
  const now = Date.now();
  const query = filter.text.trim().toLowerCase();
  const listed = (filter.archived ? archivedCards() : cards())
    .filter(({ content }) => !filter.tag || content.tags.includes(filter.tag))
    .filter(({ content }) => !query || content.name.toLowerCase().includes(query)
      || content.tags.some((tag) => tag.toLowerCase().includes(query)) || (content.card_number ?? '').includes(query))
    .map((item) => ({ item, state: validity(item.content, now), distance: distances?.get(item.id) }))
    .sort((a, b) => (Number(b.state.usable) - Number(a.state.usable)) || ((a.distance ?? Infinity) - (b.distance ?? Infinity))
      || a.item.content.name.localeCompare(b.item.content.name));
  $('cards').replaceChildren(...listed.map(({ item, state, distance }) => {
    const row = element('li', 'open');
    row.dataset.id = item.id;
    const left = element('div');
    left.append(element('div', 'title', item.content.name));
    const meta = [item.content.symbology ?? 'no barcode', ...item.content.tags];
    if (distance !== undefined) meta.unshift(distance < 1000 ? `${Math.round(distance)} m` : `${(distance / 1000).toFixed(1)} km`);
    left.append(element('div', 'meta', meta.join(' · ')));
    row.append(left);
    if (state.label) row.append(element('span', `label ${state.kind}`, state.label));
    row.addEventListener('click', () => showBarcode(item));
    return row;
  }));
  const archived = archivedCards().length;
  if (archived || filter.archived) {
    const toggle = element('li', 'meta open', filter.archived ? 'Back to the cards in use' : `${archived} archived: show them`);
    toggle.id = 'archived-toggle';
    toggle.addEventListener('click', () => {
      filter.archived = !filter.archived;
      renderCards();
    });
    $('cards').append(toggle);
  }
}

/**
 * Draws the grid as large as the barcode area allows with whole device pixels per module, so every edge is crisp. A
 * linear code gets the width and bars a third as tall; a 2D one the largest square. Returns the module size in device
 * pixels, and whether turning the screen would make it larger.
 * @param {HTMLCanvasElement} canvas
 * @param {Grid} grid
 * @param {boolean} linear
 */
function drawGrid(canvas, grid, linear) {
  const ratio = window.devicePixelRatio || 1;
  const area = $('barcode-area');
  // The area is measured without the last drawing in it, which would hold it at its old size.
  canvas.style.width = '0px';
  canvas.style.height = '0px';
  const width = Math.floor(area.clientWidth * ratio);
  const height = Math.floor(area.clientHeight * ratio);
  const scale = Math.max(1, Math.floor((linear ? width : Math.min(width, height)) / (linear ? grid.width : Math.max(grid.width, grid.height))));
  canvas.width = grid.width * scale;
  canvas.height = linear ? Math.min(height, Math.max(grid.height * scale, Math.round(canvas.width / 3))) : grid.height * scale;
  canvas.style.width = `${canvas.width / ratio}px`;
  canvas.style.height = `${canvas.height / ratio}px`;
  // A canvas of the page, only ever drawn in 2D.
  const context = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  context.fillStyle = '#fff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = '#000';
  if (linear) {
    // Every row of a linear symbol is the same: draw one row's bars the canvas's full height.
    const row = grid.modules.subarray(Math.floor(grid.height / 2) * grid.width, (Math.floor(grid.height / 2) + 1) * grid.width);
    for (let x = 0; x < grid.width; x++) if (row[x]) context.fillRect(x * scale, 0, scale, canvas.height);
  } else {
    for (let y = 0; y < grid.height; y++) {
      for (let x = 0; x < grid.width; x++) {
        if (grid.modules[y * grid.width + x]) context.fillRect(x * scale, y * scale, scale, scale);
      }
    }
  }
  const portrait = window.innerHeight > window.innerWidth;
  const sideways = Math.floor((window.innerHeight - 32) * ratio / grid.width);
  return { scale, turn: linear && portrait && sideways >= Math.max(2, scale * 1.5) };
}

function drawShown() {
  if (!shown) return;
  const { scale, turn } = drawGrid(/** @type {HTMLCanvasElement} */ ($('barcode-canvas')), shown.grid, shown.linear);
  $('barcode-turn').hidden = !turn;
  document.body.dataset.barcodeScale = String(scale);
  document.body.dataset.barcodeModules = String(shown.grid.width);
}

/** @param {Item<Card & Kept>} item */
async function showBarcode(item) {
  clearError();
  const card = item.content;
  let grid = null;
  if (card.symbology) {
    try {
      const started = performance.now();
      barcodes ??= await load(fetch('coffer-barcode.wasm'));
      grid = encode(/** @type {import('./barcode.js').EncoderExports} */ (barcodes), card.symbology, card.payload, card.payload_charset);
      document.body.dataset.barcodeMs = String(performance.now() - started);
    } catch (error) {
      showError(error);
      return;
    }
  }
  $('barcode-name').textContent = card.name;
  // The number under the bars is the one the symbol carries, check digit included.
  const carried = card.symbology ? digits(barcodes, card.symbology, card.payload) : null;
  $('barcode-number').textContent = carried ?? card.card_number ?? payloadText(card) ?? '';
  $('barcode-note').textContent = validity(card, Date.now()).label;
  $('barcode-canvas').hidden = !grid;
  $('barcode-use').hidden = !(card.one_time && card.used_at === null);
  $('barcode').dataset.id = item.id;
  $('vault').hidden = true;
  $('barcode').hidden = false;
  document.body.dataset.screen = 'barcode';
  showPhotos(item);
  // A grid is drawn only for a card with a symbology.
  shown = grid ? { grid, linear: LINEAR.has(/** @type {string} */ (card.symbology)) } : null;
  drawShown();
  // The screen stays on while the cashier scans; a browser without the API just dims as usual.
  wakeLock = await navigator.wakeLock?.request('screen').catch(() => null) ?? null;
}

/**
 * The card's photos, each joined and checked (device.photo) and shown from a blob URL dropped on close.
 * @param {Item<Card & Kept>} item
 */
async function showPhotos(item) {
  const box = $('barcode-photos');
  for (const side of item.content.photos.map((photo) => photo.side)) {
    // Locked while an earlier photo was read: the rest are not read.
    if (!vault) return;
    try {
      const photo = await vault.photo(item.id, side);
      if (!photo || $('barcode').dataset.id !== item.id) continue;
      const url = URL.createObjectURL(new Blob([photo.bytes], { type: photo.type }));
      photoURLs.push(url);
      const image = document.createElement('img');
      image.alt = `${side} of the card`;
      image.src = url;
      box.append(image);
    } catch (error) {
      showError(error);
    }
  }
}

function closeBarcode() {
  wakeLock?.release().catch(() => {});
  wakeLock = null;
  shown = null;
  for (const url of photoURLs) URL.revokeObjectURL(url);
  photoURLs = [];
  $('barcode-photos').replaceChildren();
  delete $('barcode').dataset.id;
  const canvas = /** @type {HTMLCanvasElement} */ ($('barcode-canvas'));
  canvas.width = 0;
  canvas.height = 0;
  canvas.style.width = '0px';
  canvas.style.height = '0px';
  for (const id of ['barcode-name', 'barcode-number', 'barcode-note']) $(id).textContent = '';
  $('barcode-turn').hidden = true;
  $('barcode').hidden = true;
  $('vault').hidden = !vault;
  document.body.dataset.screen = vault ? 'vault' : 'login';
}

/** @param {Token} content */
function tokenLabel(content) {
  return `${content.issuer} ${content.account}`.toLowerCase();
}

/**
 * The line a token is listed under: its issuer, or its account when it has none.
 * @param {Token} content
 */
function tokenTitle(content) {
  return content.issuer || content.account;
}

function renderCodes() {
  const query = codeFilter.trim().toLowerCase();
  const tokens = /** @type {Item<Token & Kept>[]} */ (/** @type {Device} */ (vault).items
    .filter((item) => item.kind === 'otp'))
    .filter((item) => !query || tokenLabel(item.content).includes(query))
    .sort((a, b) => tokenTitle(a.content).localeCompare(tokenTitle(b.content)) || a.content.account.localeCompare(b.content.account));
  codeObserver?.disconnect();
  visibleCodes = new Set();
  codeRows = tokens.map((item) => {
    const row = element('li', 'open');
    row.dataset.id = item.id;
    const left = element('div');
    // A token without an issuer is named by its account alone.
    left.append(element('div', 'title', tokenTitle(item.content)), element('div', 'meta', item.content.issuer ? item.content.account : ''));
    const counted = !timeBased(item.content);
    const revealed = countedCodes.get(item.id);
    const code = element('span', 'code', counted ? revealed?.code ?? '······' : '');
    const remaining = element('span', 'remaining', counted ? (revealed ? '' : 'tap') : '');
    const edit = editButton('otp', item);
    row.append(left, code, remaining, edit);
    const entry = { item, code, remaining, row, counted };
    row.addEventListener('click', (event) => {
      if (event.target === edit) return;
      if (counted) showCountedCode(entry);
      else copyCode(entry);
    });
    return entry;
  });
  $('codes').replaceChildren(...codeRows.map(({ row }) => row));
  // Only rows on screen are computed and redrawn each second.
  codeObserver = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const row = codeRows.find((candidate) => candidate.row === entry.target);
      if (!row) continue;
      if (entry.isIntersecting) visibleCodes.add(row);
      else visibleCodes.delete(row);
    }
    tickCodes();
  });
  for (const { row } of codeRows) codeObserver.observe(row);
  clearInterval(codeTimer);
  codeTimer = setInterval(tickCodes, 1000);
}

async function tickCodes() {
  if (!vault || $('tab-codes').hidden || document.hidden) return;
  const now = Date.now();
  for (const entry of visibleCodes) {
    if (entry.counted) continue;
    const current = await currentCode(entry.item.content, now);
    if (current.code !== entry.code.textContent) entry.code.textContent = current.code;
    entry.remaining.textContent = `${current.remaining}s`;
  }
}

/**
 * @param {CodeRow} entry
 * @param {string | null} [code]
 */
async function copyCode(entry, code = null) {
  const text = code ?? (await currentCode(entry.item.content, Date.now())).code;
  try {
    await navigator.clipboard.writeText(text);
    entry.remaining.textContent = 'copied';
  } catch {
    entry.remaining.textContent = '';
  }
}

/**
 * An HOTP code: the next counter is stored first (device.nextHOTP), then this one's code is shown for 30 s.
 * @param {CodeRow} entry
 */
async function showCountedCode(entry) {
  try {
    const id = entry.item.id;
    const counter = await /** @type {Device} */ (vault).nextHOTP(id);
    // Locked while the counter was stored: the code is not shown.
    if (!vault) return;
    // The token is there: nextHOTP has just written it.
    entry.item = /** @type {Item<Token & Kept>} */ (vault.items.find((item) => item.id === id));
    const code = await hotpCode(entry.item.content, counter);
    clearTimeout(countedCodes.get(id)?.timer);
    const timer = setTimeout(() => {
      secretTimers.delete(timer);
      countedCodes.delete(id);
      const shown = codeRows.find((row) => row.item.id === id);
      if (!shown) return;
      shown.code.textContent = '······';
      shown.remaining.textContent = 'tap';
    }, 30_000);
    secretTimers.add(timer);
    countedCodes.set(id, { code, timer });
    entry.code.textContent = code;
    await copyCode(entry, code);
    renderStatus();
    syncNow();
  } catch (error) {
    showError(error);
  }
}

/**
 * `sk-proj-…`: the value's leading words, never more than 8 characters of it.
 * @param {string} value
 */
function masked(value) {
  const prefix = value.slice(0, 8).match(/^(?:[A-Za-z0-9]+[-_])+/)?.[0] ?? '';
  return `${prefix}…`;
}

function renderSecrets() {
  const rows = [];
  const credentials = /** @type {Device} */ (vault).items.filter((candidate) => candidate.kind === 'credential');
  for (const item of /** @type {Item<Credential & Kept>[]} */ (credentials)) {
    const row = element('li', 'open');
    const left = element('div');
    const meta = [item.content.provider ?? 'credential', item.content.username].filter(Boolean).join(' · ');
    left.append(element('div', 'title', item.content.name), element('div', 'meta', meta));
    const value = element('span', 'masked', masked(item.content.value));
    const edit = editButton('credential', item);
    /** @type {number | null} */
    let timer = null;
    row.addEventListener('click', (event) => {
      if (!vault || event.target === edit) return;
      const showing = value.textContent !== masked(item.content.value);
      value.textContent = showing ? masked(item.content.value) : item.content.value;
      clearTimeout(timer);
      secretTimers.delete(timer);
      if (showing) return;
      timer = setTimeout(() => {
        secretTimers.delete(timer);
        value.textContent = masked(item.content.value);
      }, 20_000);
      secretTimers.add(timer);
    });
    row.append(left, value, edit);
    rows.push(row);
  }
  const notes = /** @type {Device} */ (vault).items.filter((candidate) => candidate.kind === 'note');
  for (const item of /** @type {Item<Note & Kept>[]} */ (notes)) {
    const row = element('li', 'open');
    const left = element('div');
    left.append(element('div', 'title', item.content.name), element('div', 'meta', `note (${item.content.template})`));
    const body = element('div', 'meta');
    body.hidden = true;
    for (const field of item.content.fields) body.append(element('div', '', `${field.label}: ${field.value}`));
    if (item.content.text) body.append(element('div', '', item.content.text));
    left.append(body);
    const edit = editButton('note', item);
    row.addEventListener('click', (event) => { if (event.target !== edit) body.hidden = !body.hidden; });
    row.append(left, edit);
    rows.push(row);
  }
  $('secrets').replaceChildren(...rows);
}

function renderCLI() {
  const rows = [];
  for (const item of /** @type {Device} */ (vault).items) {
    /** @type {string | null} */
    let title = null;
    /** @type {string | null} */
    let how = null;
    const key = /** @type {SigningKey} */ (item.content);
    if (item.unsupported) [title, how] = [`an item of kind ${item.kind}`, 'a newer coffer'];
    else if (item.kind === 'signing_key') [title, how] = [key.name, `${key.flavor} key: coffer sign`];
    if (!title) continue;
    const row = element('li');
    row.append(element('div', 'title', title), element('span', 'meta', how));
    rows.push(row);
  }
  $('cli').replaceChildren(...rows);
  /** @type {HTMLElement} */ ($('tabs').querySelector('[data-tab=cli]')).textContent = `In the CLI (${rows.length})`;
}

/**
 * @param {string} kind
 * @param {Item} item
 */
function editButton(kind, item) {
  const button = element('button', 'edit', 'Edit');
  button.type = 'button';
  button.addEventListener('click', () => showEditor(kind, item));
  return button;
}

/**
 * Saves an item written in a form or an action here: kept in this browser first, then pushed when the server answers.
 * @param {string} kind
 * @param {Writable} content
 * @param {string | null} [id]
 */
async function saveItem(kind, content, id) {
  const started = performance.now();
  await /** @type {Device} */ (vault).write(kind, content, id);
  document.body.dataset.writeMs = String(performance.now() - started);
  render();
  syncNow();
}

/**
 * Saves several new items read at once (a scanned token export) in one write; a token the vault already holds (the
 * same kind, account and secret, as `coffer add otp --scan` and `coffer import` judge it) is skipped and named.
 * @param {string} kind `otp`
 * @param {TokenDraft[]} contents
 */
async function saveItems(kind, contents) {
  const held = new Set(/** @type {Device} */ (vault).items.filter((item) => item.kind === kind)
    .map((item) => duplicateKey(/** @type {Token} */ (item.content))));
  /** @type {TokenDraft[]} */
  const fresh = [];
  /** @type {string[]} */
  const skipped = [];
  for (const content of contents) {
    const key = duplicateKey(content);
    if (held.has(key)) skipped.push(content.issuer || content.account);
    else {
      held.add(key);
      fresh.push(content);
    }
  }
  if (!fresh.length) throw new CofferError('duplicate', `${contents.length === 1 ? 'This token is' : 'Every token here is'} already in the vault`);
  await /** @type {Device} */ (vault).writeAll(kind, fresh);
  render();
  syncNow();
  showNotice(`Added ${fresh.length === 1 ? '1 token' : `${fresh.length} tokens`}${skipped.length
    ? `; skipped ${skipped.length} already in the vault: ${skipped.join(', ')}` : ''}.`);
}

/**
 * What makes two tokens the same token (CofferKit's duplicateKey for OTP items).
 * @param {Token} token
 */
function duplicateKey(token) {
  const kind = token.type === 'totp' ? `totp/${token.period}` : token.type;
  return `${kind}/${token.account.toLowerCase()}/${hex(token.secret)}`;
}

/**
 * @param {string} kind
 * @param {Item | null} [item] null for a new item
 */
function showEditor(kind, item = null) {
  clearError();
  const card = kind === 'card' && item ? /** @type {Card & Kept} */ (item.content) : null;
  /** @type {Action[]} */
  const actions = [];
  if (card) {
    // A card to edit is an item's (`item` is there).
    const id = /** @type {Item} */ (item).id;
    actions.push(card.archived_at === null
      ? ['Archive', () => saveItem('card', { ...card, archived_at: Date.now() }, id), 'editor-archive']
      : ['Restore', () => saveItem('card', { ...card, archived_at: null }, id), 'editor-restore']);
  }
  if (item) {
    actions.push(['Delete', async () => {
      if (!window.confirm('Delete this item from every device? It cannot be undone.')) throw new CofferError('cancelled', 'nothing was deleted');
      await /** @type {Device} */ (vault).remove(item.id);
      render();
      syncNow();
    }, 'editor-delete']);
  }
  closeBarcode();
  $('vault').hidden = true;
  $('editor').hidden = false;
  document.body.dataset.screen = 'editor';
  openEditor({ section: $('editor'), kind, item, barcodes, save: saveItem, saveAll: saveItems, actions, close: closeEditor,
    fail: (error) => { if (error.code !== 'cancelled') showError(error); } });
}

function closeEditor() {
  stopScanning();
  $('editor').replaceChildren();
  $('editor').hidden = true;
  if (!vault) return;
  $('vault').hidden = false;
  document.body.dataset.screen = 'vault';
}

async function markUsed() {
  // The barcode screen shows a card.
  const item = /** @type {Item<Card & Kept> | undefined} */ (
    /** @type {Device} */ (vault).items.find((candidate) => candidate.id === $('barcode').dataset.id));
  if (!item) return;
  try {
    await saveItem('card', { ...item.content, used_at: Date.now() }, item.id);
    closeBarcode();
  } catch (error) {
    showError(error);
  }
}

/** @param {CofferError | null} [problem] */
function renderStatus(problem = null) {
  // Locked while a write or a sync was answered: there is nothing to draw.
  if (!vault) return;
  const parts = [];
  if (syncing) parts.push('Syncing…');
  else if (problem?.code === 'transport') parts.push('Offline');
  else if (problem) parts.push(`Not synced: ${problem.message}`);
  parts.push(vault.lastSync ? `last synced ${ago(vault.lastSync)}` : 'never synced here');
  parts.push(vault.waiting ? `${vault.waiting} waiting to be pushed` : 'nothing waiting to be pushed');
  if (vault.conflicts.length) parts.push(`${vault.conflicts.length} conflict ${vault.conflicts.length === 1 ? 'copy' : 'copies'} made here`);
  $('sync-status').textContent = parts.join(' · ');
}

function render() {
  // Locked while a write or a sync was answered: there is nothing to draw.
  if (!vault) return;
  renderTags();
  renderCards();
  renderCodes();
  renderSecrets();
  renderCLI();
  renderStatus();
  $('fingerprint').textContent = vault.fingerprint ? `Verified vault state ${vault.fingerprint}` : 'The vault is empty';
}

/** @param {string} name */
function showTab(name) {
  for (const button of $('tabs').querySelectorAll('button')) button.classList.toggle('active', button.dataset.tab === name);
  for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.tab'))) tab.hidden = tab.id !== `tab-${name}`;
  if (name === 'codes') tickCodes();
}

/** Brings the copy up to date in the background; the list is redrawn only when the state changed. */
async function syncNow() {
  if (!vault || syncing) return;
  const device = vault;
  const before = device.fingerprint;
  const started = performance.now();
  syncing = device.sync();
  document.body.dataset.sync = 'running';
  renderStatus();
  /** @type {CofferError | null} */
  let problem = null;
  try {
    await syncing;
  } catch (error) {
    problem = error instanceof CofferError ? error : new CofferError('sync', 'the sync failed');
  } finally {
    syncing = null;
  }
  document.body.dataset.sync = !problem ? 'done' : problem.code === 'transport' ? 'offline' : 'failed';
  document.body.dataset.syncMs = String(performance.now() - started);
  if (device.pushedAt > started) document.body.dataset.pushMs = String(device.pushedAt - started);
  if (vault !== device) return;
  // Unreachable: try again by itself, 15 s after the first failure, doubling to 5 min.
  clearTimeout(retry.timer);
  retry = problem?.code === 'transport'
    ? { delay: Math.min(Math.max(retry.delay * 2, 15_000), 300_000), timer: null } : { delay: 0, timer: null };
  if (retry.delay) retry.timer = setTimeout(syncNow, retry.delay);
  if (problem && problem.code !== 'transport' && problem.code !== 'rate-limited') showError(problem);
  if (device.fingerprint !== before) render();
  else renderStatus(problem);
}

/**
 * Forgets everything decrypted: keys, the server session, items, and every node and field that showed them. The page
 * forgets at once; the device wipes its keys once a sync under way has stopped (the returned promise).
 */
function lock() {
  if (!vault) return Promise.resolve();
  const device = vault;
  vault = null;
  const locked = device.lock();
  distances = null;
  stopWatching?.();
  stopWatching = null;
  idle.stop();
  clearTimeout(retry.timer);
  retry = { timer: null, delay: 0 };
  for (const timer of secretTimers) clearTimeout(timer);
  secretTimers.clear();
  countedCodes.clear();
  delete document.body.dataset.sync;
  filter = { text: '', tag: null, archived: false };
  codeFilter = '';
  clearInterval(codeTimer);
  codeObserver?.disconnect();
  codeObserver = null;
  codeRows = [];
  visibleCodes = new Set();
  closeBarcode();
  closeEditor();
  stopScanning({ release: true });
  for (const id of ['cards', 'codes', 'secrets', 'cli', 'tags', 'sync-status', 'fingerprint', 'near-status', 'progress']) {
    $(id).replaceChildren();
  }
  for (const id of ['search', 'code-search', 'passphrase']) /** @type {HTMLInputElement} */ ($(id)).value = '';
  $('near-status').hidden = true;
  $('vault').hidden = true;
  $('lock').hidden = true;
  $('about').hidden = true;
  $('login').hidden = false;
  document.body.dataset.screen = 'login';
  document.body.dataset.locked = String(Date.now());
  offerPasskey();
  return locked;
}

/**
 * Unlocks with `open()` (the passphrase or the passkey) and shows the vault.
 * @param {() => Promise<Device>} open
 */
async function unlockWith(open) {
  clearError();
  const started = performance.now();
  /** @type {HTMLButtonElement} */ ($('unlock')).disabled = true;
  /** @type {HTMLButtonElement} */ ($('passkey-unlock')).disabled = true;
  try {
    store ??= await IndexedStore.open();
    const device = await open();
    rememberEmail(window.localStorage, /** @type {HTMLInputElement} */ ($('email')).value.trim());
    vault = device;
    render();
    showTab('cards');
    $('login').hidden = true;
    $('vault').hidden = false;
    $('lock').hidden = false;
    document.body.dataset.screen = 'vault';
    document.body.dataset.unlockMs = String(performance.now() - started);
    idle.start();
    // Opened from this browser's copy: ask the server for anything newer.
    if (device.token) document.body.dataset.sync = 'done';
    else syncNow();
  } catch (error) {
    showError(error);
    offerPasskey();
  } finally {
    /** @type {HTMLButtonElement} */ ($('unlock')).disabled = false;
    /** @type {HTMLButtonElement} */ ($('passkey-unlock')).disabled = false;
    $('progress').textContent = '';
  }
}

// `open()` runs once unlockWith has opened the store (the casts below).

/** @param {Event} event */
function onUnlock(event) {
  event.preventDefault();
  const passphrase = /** @type {HTMLInputElement} */ ($('passphrase')).value;
  /** @type {HTMLInputElement} */ ($('passphrase')).value = '';
  return unlockWith(() => unlock({ email: /** @type {HTMLInputElement} */ ($('email')).value, passphrase,
    store: /** @type {IndexedStore} */ (store), legacy: window.localStorage,
    progress: (message) => { $('progress').textContent = message; } }));
}

function onPasskeyUnlock() {
  return unlockWith(() => unlockByPasskey({ email: /** @type {HTMLInputElement} */ ($('email')).value,
    store: /** @type {IndexedStore} */ (store), credentials: navigator.credentials }));
}

/** Shows "Unlock with passkey" when this browser keeps one for the email typed. */
async function offerPasskey() {
  try {
    store ??= await IndexedStore.open();
    $('passkey-unlock').hidden = !(navigator.credentials && await hasPasskey(store, /** @type {HTMLInputElement} */ ($('email')).value));
  } catch {
    $('passkey-unlock').hidden = true;
  }
}

function showPasskey() {
  const slot = vault?.record.passkey;
  $('passkey-status').textContent = slot
    ? `This browser unlocks with a passkey made ${day(slot.created_at)}. Five failed tries remove it.`
    : 'After this unlock, a passkey (your face, fingerprint or screen lock) can open the vault here instead of the passphrase.';
  $('passkey-add').hidden = Boolean(slot);
  $('passkey-remove').hidden = !slot;
}

async function onPasskeyAdd() {
  clearError();
  try {
    await addPasskey(/** @type {Device} */ (vault), { credentials: navigator.credentials, hostname: window.location.hostname });
  } catch (error) {
    showError(error);
  }
  showPasskey();
}

async function onPasskeyRemove() {
  await removePasskey(/** @type {Device} */ (vault));
  showPasskey();
}

let refreshing = false;
async function refreshNear() {
  if (refreshing) return;
  refreshing = true;
  await onNear();
  refreshing = false;
}

async function onNear() {
  clearError();
  const status = $('near-status');
  status.hidden = false;
  status.textContent = 'Finding where you are…';
  try {
    const usable = cards().filter((item) => validity(item.content, Date.now()).usable);
    distances = await nearestStores(usable, { progress: (message) => { status.textContent = message; } });
    if (!vault) return;
    // While the page is open, moving on re-sorts the cards (the first report is where the list already is).
    stopWatching ??= watchMoves(() => { if (vault && distances) refreshNear(); });
    status.textContent = distances.size ? 'Sorted by the nearest store of each card' : 'No store of your cards within 50 km';
    renderCards();
  } catch (error) {
    status.hidden = true;
    showError(error);
  }
}

const background = autoLock({ lock, after: () => settings.hiddenMinutes * 60_000 });
const idle = idleLock({ lock, after: () => settings.idleMinutes * 60_000 });

function onVisibility() {
  if (document.hidden) {
    // The camera is not left on behind another app: it opens again with the Scan button.
    stopScanning();
    background.hidden();
    return;
  }
  background.visible();
  if (!vault) return;
  tickCodes();
  if (distances) refreshNear();
  if (!vault.lastSync || Date.now() - vault.lastSync > 60_000) syncNow();
}

/** @param {boolean} show */
function showAbout(show) {
  $('about').hidden = !show;
  $(vault ? 'vault' : 'login').hidden = show;
}

function showSettings() {
  /** @type {HTMLInputElement} */ ($('idle-minutes')).value = String(settings.idleMinutes);
  /** @type {HTMLSelectElement} */ ($('hidden-minutes')).value = String(settings.hiddenMinutes);
  showPasskey();
}

function onSettings() {
  const next = { idleMinutes: Number(/** @type {HTMLInputElement} */ ($('idle-minutes')).value),
    hiddenMinutes: Number(/** @type {HTMLSelectElement} */ ($('hidden-minutes')).value) };
  if (writeSettings(window.localStorage, next)) {
    settings = readSettings(window.localStorage);
    $('settings-saved').textContent = `Locks after ${settings.idleMinutes} min without a touch`;
  } else {
    $('settings-saved').textContent = 'Choose 1 to 60 minutes';
  }
}

async function onForget() {
  if (!vault) return;
  const waiting = vault.waiting;
  if (waiting && !window.confirm(`${waiting} change${waiting === 1 ? '' : 's'} made here did not reach the server yet and `
    + 'would be lost. Remove this browser’s copy anyway?')) return;
  const id = vault.vaultText;
  await lock();
  // The store was opened before the vault.
  await /** @type {IndexedStore} */ (store).forget(id);
}

/** The app shell is kept by a service worker (sw.js); a new version waits until the user reloads for it. */
async function installShell() {
  if (!('serviceWorker' in navigator)) return;
  const registration = await navigator.serviceWorker.register('sw.js', { scope: './' }).catch(() => null);
  if (!registration) return;
  const offer = () => { if (registration.waiting && navigator.serviceWorker.controller) $('update').hidden = false; };
  offer();
  registration.addEventListener('updatefound', () => {
    registration.installing?.addEventListener('statechange', offer);
  });
  let reloading = false;
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (reloading || $('update').hidden) return;
    reloading = true;
    window.location.reload();
  });
  $('update-reload').addEventListener('click', () => {
    lock();
    registration.waiting?.postMessage('take-over');
  });
}

$('login-form').addEventListener('submit', onUnlock);
$('passkey-unlock').addEventListener('click', onPasskeyUnlock);
$('passkey-add').addEventListener('click', onPasskeyAdd);
$('passkey-remove').addEventListener('click', onPasskeyRemove);
$('email').addEventListener('change', offerPasskey);
$('lock').addEventListener('click', lock);
$('barcode-close').addEventListener('click', closeBarcode);
// Only Close (or Escape) leaves the barcode: a tap at the till must not hide it.
document.addEventListener('keydown', (event) => { if (event.key === 'Escape' && !$('barcode').hidden) closeBarcode(); });
$('search').addEventListener('input', (event) => { filter.text = /** @type {HTMLInputElement} */ (event.target).value; renderCards(); });
$('code-search').addEventListener('input', (event) => { codeFilter = /** @type {HTMLInputElement} */ (event.target).value; renderCodes(); });
$('near').addEventListener('click', onNear);
$('sync-now').addEventListener('click', syncNow);
$('add-card').addEventListener('click', () => showEditor('card'));
$('add-token').addEventListener('click', () => showEditor('otp'));
$('add-credential').addEventListener('click', () => showEditor('credential'));
$('add-note').addEventListener('click', () => showEditor('note'));
$('barcode-use').addEventListener('click', markUsed);
$('barcode-edit').addEventListener('click', () => {
  const item = vault?.items.find((candidate) => candidate.id === $('barcode').dataset.id);
  if (item) showEditor('card', item);
});
$('tabs').addEventListener('click', (event) => {
  const target = /** @type {HTMLElement} */ (event.target);
  if (!target.dataset.tab) return;
  if (target.dataset.tab === 'settings') showSettings();
  showTab(target.dataset.tab);
});
$('settings-form').addEventListener('change', onSettings);
$('settings-form').addEventListener('submit', (event) => event.preventDefault());
$('forget').addEventListener('click', onForget);
for (const id of ['about-link', 'about-link-vault']) {
  $(id).addEventListener('click', (event) => { event.preventDefault(); showAbout(true); });
}
$('about-close').addEventListener('click', () => showAbout(false));
document.addEventListener('visibilitychange', onVisibility);
for (const kind of ['pointerdown', 'keydown', 'wheel', 'touchstart']) {
  document.addEventListener(kind, () => idle.touched(), { passive: true, capture: true });
}
window.addEventListener('resize', drawShown);
window.addEventListener('online', syncNow);
/** @type {HTMLInputElement} */ ($('email')).value = rememberedEmail(window.localStorage);
document.body.dataset.screen = 'login';
offerPasskey();
installShell();
load(fetch('coffer-barcode.wasm')).then((exports) => { barcodes = exports; }, () => {});
