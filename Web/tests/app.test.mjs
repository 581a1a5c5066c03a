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

test('the page has no inline script, style or handler, and loads nothing from another origin', () => {
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
  for (const [name, source] of [['index.html', html], ['app.css', readFileSync(join(app, 'app.css'), 'utf8')], ...scripts]) {
    assert.doesNotMatch(source, /(?:src|href)=["']?(?:https?:)?\/\//, `${name} loads from another origin`);
    assert.doesNotMatch(source, /url\(\s*["']?(?:https?:)?\/\//, `${name} loads from another origin`);
    assert.doesNotMatch(source, /fetch\(\s*["'`]https?:/, `${name} fetches from another origin`);
  }
});

test('only the session keeps anything in browser storage, and only the verified manifest', () => {
  for (const [name, source] of scripts) {
    const writes = source.match(/(?:localStorage|sessionStorage|indexedDB|caches|document\.cookie)|setItem\(/g) ?? [];
    if (name === 'session.js') {
      assert.deepEqual(source.match(/setItem\([^)]*/g), ['setItem(key, toBase64(head.bytes']);
    } else if (name === 'app.js') {
      assert.deepEqual(writes, ['localStorage'], 'app.js only hands localStorage to the session');
    } else {
      assert.deepEqual(writes, [], `${name} touches browser storage`);
    }
  }
});
