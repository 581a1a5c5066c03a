// What the page may contain, read from its files: text only through textContent, no inline script or style (the CSP
// would block them anyway), no resource from another origin, nothing written to storage but the verified head.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { root } from './support.mjs';

const app = join(root, 'Web/app');
const scripts = readdirSync(join(app, 'js')).map((name) => [name, readFileSync(join(app, 'js', name), 'utf8')]);
const html = readFileSync(join(app, 'index.html'), 'utf8');

test('scripts put text into the page only through textContent, and never evaluate strings', () => {
  for (const [name, source] of scripts) {
    for (const sink of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function', 'setAttribute(\'style', 'srcdoc']) {
      assert.ok(!source.includes(sink), `${name} uses ${sink}`);
    }
  }
});

test('every element app.js asks for by its id is in the page (its `$` returns one, never null)', () => {
  const source = scripts.find(([name]) => name === 'app.js')[1];
  const ids = new Set([...html.matchAll(/\bid="([^"]+)"/g)].map(([, id]) => id));
  const asked = [...source.matchAll(/\$\('([^']+)'\)/g)].map(([, id]) => id);
  for (const [, list] of source.matchAll(/for \(const id of \[([^\]]*)\]\)/g)) {
    asked.push(...[...list.matchAll(/'([^']+)'/g)].map(([, id]) => id));
  }
  assert.ok(asked.length > 50, 'the ids were found in app.js');
  for (const id of asked) assert.ok(ids.has(id), `app.js asks for #${id}, which index.html does not have`);
});

test('the page has no inline script, style or handler, and loads nothing from another origin', () => {
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
  for (const [name, source] of [['index.html', html], ['app.css', readFileSync(join(app, 'app.css'), 'utf8')], ...scripts]) {
    assert.doesNotMatch(source, /(?:src|href)=["']?(?:https?:)?\/\//, `${name} loads from another origin`);
    assert.doesNotMatch(source, /url\(\s*["']?(?:https?:)?\/\//, `${name} loads from another origin`);
    assert.doesNotMatch(source, /fetch\(\s*["'`]https?:/, `${name} fetches from another origin`);
  }
});

test('browser storage is touched only by the store (IndexedDB), the settings and the service worker (the shell)', () => {
  for (const [name, source] of scripts) {
    const writes = source.match(/(?:localStorage|sessionStorage|indexedDB|caches|document\.cookie)|setItem\(/g) ?? [];
    if (name === 'store.js') {
      assert.deepEqual([...new Set(writes)], ['indexedDB'], 'store.js keeps the vault in IndexedDB only');
    } else if (name === 'settings.js') {
      assert.deepEqual(source.match(/setItem\([^)]*/g), ['setItem(SETTINGS, JSON.stringify({ idle_minutes: idleMinutes, hidden_minutes: hiddenMinutes }', 'setItem(EMAIL, email']);
    } else if (name === 'app.js') {
      assert.deepEqual([...new Set(writes)], ['localStorage'], 'app.js only hands localStorage to the settings and the device');
    } else {
      assert.deepEqual(writes, [], `${name} touches browser storage`);
    }
  }
  const worker = readFileSync(join(app, 'sw.js'), 'utf8');
  assert.deepEqual([...new Set(worker.match(/(?:localStorage|sessionStorage|indexedDB|document\.cookie)/g) ?? [])], []);
});

test('the service worker’s shell is every file of the app, and it passes the API through untouched', () => {
  const worker = readFileSync(join(app, 'sw.js'), 'utf8');
  const shell = JSON.parse(worker.match(/const SHELL = (\[[^\]]*\]);/)[1].replaceAll("'", '"').replace(/,\s*\]$/, ']'));
  const files = [...readdirSync(app).filter((name) => !['js', 'sw.js'].includes(name)), ...scripts.map(([name]) => `js/${name}`)];
  if (!files.includes('coffer-barcode.wasm')) files.push('coffer-barcode.wasm');
  assert.deepEqual(shell.filter((path) => path !== './').sort(), files.sort());
  assert.match(worker, /const VERSION = 'coffer-shell-%COFFER_SHELL_VERSION%';/);
  assert.match(worker, /url\.pathname\.startsWith\(scope\.pathname\)/);
  assert.doesNotMatch(worker, /new Response\(/, 'cached responses are returned as they are, CSP header included');
});
