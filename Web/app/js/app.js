// The web vault's page: unlock, then cards (search, tags, validity, near me), a full-screen barcode, TOTP and Steam
// codes, masked credentials, and the items only the CLI can serve. Read-only. Every text from the vault or the server
// reaches the page through `textContent`; nothing decrypted is written to browser storage; locking forgets it all.
import { CofferError, text } from './bytes.js';
import { autoLock } from './autolock.js';
import { encode, load } from './barcode.js';
import { currentCode, showsCodes } from './otp.js';
import { nearestStores, watchMoves } from './places.js';
import { unlock } from './session.js';

const LOCK_AFTER_HIDDEN_MS = 3 * 60 * 1000;
const $ = (id) => document.getElementById(id);

let vault = null;
let barcodes = null;
let filter = { text: '', tag: null };
let distances = null;
let codeTimer = null;
let wakeLock = null;
let stopWatching = null;

function element(tag, className, content) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (content !== undefined) node.textContent = content;
  return node;
}

function showError(error) {
  const message = error instanceof CofferError ? error.message : 'something went wrong in this page';
  $('error').textContent = message;
  $('error').hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').textContent = '';
}

function day(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/** What a card's validity says now: `{ label, kind, usable }`. */
function validity(card, now) {
  if (card.one_time && card.used_at !== null) return { label: `used ${day(card.used_at)}`, kind: 'used', usable: false };
  if (card.valid_to !== null && now > card.valid_to) return { label: `expired ${day(card.valid_to)}`, kind: 'expired', usable: false };
  if (card.valid_from !== null && now < card.valid_from) return { label: `from ${day(card.valid_from)}`, kind: 'future', usable: false };
  if (card.valid_to !== null) return { label: `until ${day(card.valid_to)}`, kind: 'valid', usable: true };
  return { label: card.one_time ? 'one-time' : '', kind: 'valid', usable: true };
}

function payloadText(card) {
  if (card.payload_charset === 'binary') return null;
  return card.payload_charset === 'utf-8' ? text(card.payload) : String.fromCharCode(...card.payload);
}

function cards() {
  return vault.items.filter((item) => item.kind === 'card' && item.content.archived_at === null);
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
  const shown = cards()
    .filter(({ content }) => !filter.tag || content.tags.includes(filter.tag))
    .filter(({ content }) => !query || content.name.toLowerCase().includes(query)
      || content.tags.some((tag) => tag.toLowerCase().includes(query)) || (content.card_number ?? '').includes(query))
    .map((item) => ({ item, state: validity(item.content, now), distance: distances?.get(item.id) }))
    .sort((a, b) => (b.state.usable - a.state.usable) || ((a.distance ?? Infinity) - (b.distance ?? Infinity))
      || a.item.content.name.localeCompare(b.item.content.name));
  $('cards').replaceChildren(...shown.map(({ item, state, distance }) => {
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
  const archived = vault.items.filter((item) => item.kind === 'card' && item.content.archived_at !== null).length;
  if (archived) $('cards').append(element('li', 'meta', `${archived} archived (coffer restore in the CLI)`));
}

function drawGrid(canvas, grid) {
  const room = Math.min(window.innerWidth - 32, 720);
  const scale = Math.max(2, Math.floor(room / grid.width));
  canvas.width = grid.width * scale;
  canvas.height = grid.height * scale;
  const context = canvas.getContext('2d');
  context.fillStyle = '#fff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = '#000';
  for (let y = 0; y < grid.height; y++) {
    for (let x = 0; x < grid.width; x++) {
      if (grid.modules[y * grid.width + x]) context.fillRect(x * scale, y * scale, scale, scale);
    }
  }
}

async function showBarcode(item) {
  clearError();
  const card = item.content;
  $('barcode-name').textContent = card.name;
  const number = card.card_number ?? payloadText(card) ?? '';
  $('barcode-number').textContent = number;
  $('barcode-note').textContent = validity(card, Date.now()).label;
  const canvas = $('barcode-canvas');
  canvas.hidden = !card.symbology;
  if (card.symbology) {
    try {
      const started = performance.now();
      barcodes ??= await load(fetch('coffer-barcode.wasm'));
      drawGrid(canvas, encode(barcodes, card.symbology, card.payload, card.payload_charset));
      document.body.dataset.barcodeMs = String(performance.now() - started);
    } catch (error) {
      showError(error);
      return;
    }
  }
  $('vault').hidden = true;
  $('barcode').hidden = false;
  document.body.dataset.screen = 'barcode';
  // The screen stays on while the cashier scans; a browser without the API just dims as usual.
  wakeLock = await navigator.wakeLock?.request('screen').catch(() => null) ?? null;
}

function closeBarcode() {
  wakeLock?.release().catch(() => {});
  wakeLock = null;
  $('barcode').hidden = true;
  $('vault').hidden = false;
  document.body.dataset.screen = 'vault';
}

function renderCodes() {
  const tokens = vault.items.filter((item) => item.kind === 'otp' && showsCodes(item.content));
  const rows = tokens.map((item) => {
    const row = element('li');
    row.dataset.id = item.id;
    const left = element('div');
    left.append(element('div', 'title', item.content.issuer), element('div', 'meta', item.content.account));
    const code = element('span', 'code', '');
    const remaining = element('span', 'remaining', '');
    row.append(left, code, remaining);
    return { item, code, remaining, row };
  });
  $('codes').replaceChildren(...rows.map(({ row }) => row));
  const tick = async () => {
    const now = Date.now();
    for (const { item, code, remaining } of rows) {
      const current = await currentCode(item.content, now);
      code.textContent = current.code;
      remaining.textContent = `${current.remaining}s`;
    }
  };
  clearInterval(codeTimer);
  tick();
  codeTimer = setInterval(tick, 1000);
}

/** `sk-proj-…`: the value's leading words, never more than 8 characters of it. */
function masked(value) {
  const prefix = value.slice(0, 8).match(/^(?:[A-Za-z0-9]+[-_])+/)?.[0] ?? '';
  return `${prefix}…`;
}

function renderSecrets() {
  const rows = [];
  for (const item of vault.items.filter((candidate) => candidate.kind === 'credential')) {
    const row = element('li', 'open');
    const left = element('div');
    const meta = [item.content.provider ?? 'credential', item.content.username].filter(Boolean).join(' · ');
    left.append(element('div', 'title', item.content.name), element('div', 'meta', meta));
    const value = element('span', 'masked', masked(item.content.value));
    let timer = null;
    row.addEventListener('click', () => {
      const showing = value.textContent !== masked(item.content.value);
      value.textContent = showing ? masked(item.content.value) : item.content.value;
      clearTimeout(timer);
      if (!showing) timer = setTimeout(() => { value.textContent = masked(item.content.value); }, 20_000);
    });
    row.append(left, value);
    rows.push(row);
  }
  for (const item of vault.items.filter((candidate) => candidate.kind === 'note')) {
    const row = element('li', 'open');
    const left = element('div');
    left.append(element('div', 'title', item.content.name), element('div', 'meta', `note (${item.content.template})`));
    const body = element('div', 'meta');
    body.hidden = true;
    for (const field of item.content.fields) body.append(element('div', '', `${field.label}: ${field.value}`));
    if (item.content.text) body.append(element('div', '', item.content.text));
    left.append(body);
    row.addEventListener('click', () => { body.hidden = !body.hidden; });
    row.append(left);
    rows.push(row);
  }
  $('secrets').replaceChildren(...rows);
}

function renderCLI() {
  const rows = [];
  for (const item of vault.items) {
    let title = null;
    let how = null;
    if (item.unsupported) [title, how] = [`an item of kind ${item.kind}`, 'a newer coffer'];
    else if (item.kind === 'otp' && !showsCodes(item.content)) [title, how] = [`${item.content.issuer} (${item.content.account})`, 'HOTP: coffer code'];
    else if (item.kind === 'signing_key') [title, how] = [item.content.name, `${item.content.flavor} key: coffer sign`];
    if (!title) continue;
    const row = element('li');
    row.append(element('div', 'title', title), element('span', 'meta', how));
    rows.push(row);
  }
  $('cli').replaceChildren(...rows);
  $('tabs').querySelector('[data-tab=cli]').textContent = `In the CLI (${rows.length})`;
}

function render() {
  renderTags();
  renderCards();
  renderCodes();
  renderSecrets();
  renderCLI();
  $('fingerprint').textContent = vault.fingerprint ? `Verified vault state ${vault.fingerprint}` : 'The vault is empty';
}

function showTab(name) {
  for (const button of $('tabs').querySelectorAll('button')) button.classList.toggle('active', button.dataset.tab === name);
  for (const tab of document.querySelectorAll('.tab')) tab.hidden = tab.id !== `tab-${name}`;
}

/** Forgets everything decrypted: keys, tokens' session, items, the DOM that showed them. */
function lock() {
  if (!vault) return;
  vault.lock();
  for (const item of vault.items) {
    if (item.content?.secret) item.content.secret.fill(0);
    if (item.content?.payload) item.content.payload.fill(0);
  }
  vault = null;
  distances = null;
  stopWatching?.();
  stopWatching = null;
  filter = { text: '', tag: null };
  clearInterval(codeTimer);
  closeBarcode();
  for (const id of ['cards', 'codes', 'secrets', 'cli', 'tags']) $(id).replaceChildren();
  $('search').value = '';
  $('near-status').hidden = true;
  $('fingerprint').textContent = '';
  $('barcode-canvas').width = 0;
  $('vault').hidden = true;
  $('lock').hidden = true;
  $('login').hidden = false;
  document.body.dataset.screen = 'login';
}

async function onUnlock(event) {
  event.preventDefault();
  clearError();
  const started = performance.now();
  const passphrase = $('passphrase').value;
  $('passphrase').value = '';
  $('unlock').disabled = true;
  try {
    vault = await unlock({ email: $('email').value, passphrase, storage: window.localStorage,
      progress: (message) => { $('progress').textContent = message; } });
    render();
    showTab('cards');
    $('login').hidden = true;
    $('vault').hidden = false;
    $('lock').hidden = false;
    document.body.dataset.screen = 'vault';
    document.body.dataset.unlockMs = String(performance.now() - started);
  } catch (error) {
    showError(error);
  } finally {
    $('unlock').disabled = false;
    $('progress').textContent = '';
  }
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
    // While the page is open, moving on re-sorts the cards (the first report is where the list already is).
    stopWatching ??= watchMoves(() => { if (vault && distances) refreshNear(); });
    status.textContent = distances.size ? 'Sorted by the nearest store of each card' : 'No store of your cards within 50 km';
    renderCards();
  } catch (error) {
    status.hidden = true;
    showError(error);
  }
}

const background = autoLock({ lock, after: LOCK_AFTER_HIDDEN_MS });

function onVisibility() {
  if (document.hidden) {
    background.hidden();
    return;
  }
  background.visible();
  if (vault && distances) refreshNear();
}

function showAbout(show) {
  $('about').hidden = !show;
  $(vault ? 'vault' : 'login').hidden = show;
}

$('login-form').addEventListener('submit', onUnlock);
$('lock').addEventListener('click', lock);
$('barcode-close').addEventListener('click', closeBarcode);
// Only Close (or Escape) leaves the barcode: a tap at the till must not hide it.
document.addEventListener('keydown', (event) => { if (event.key === 'Escape' && !$('barcode').hidden) closeBarcode(); });
$('search').addEventListener('input', (event) => { filter.text = event.target.value; renderCards(); });
$('near').addEventListener('click', onNear);
$('tabs').addEventListener('click', (event) => { if (event.target.dataset.tab) showTab(event.target.dataset.tab); });
for (const id of ['about-link', 'about-link-vault']) {
  $(id).addEventListener('click', (event) => { event.preventDefault(); showAbout(true); });
}
$('about-close').addEventListener('click', () => showAbout(false));
document.addEventListener('visibilitychange', onVisibility);
document.body.dataset.screen = 'login';
load(fetch('coffer-barcode.wasm')).then((exports) => { barcodes = exports; }, () => {});
