// The settings read back from localStorage are bounded like any stored input; the email is remembered, nothing else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULTS, readSettings, rememberEmail, rememberedEmail, writeSettings } from '../app/js/settings.js';

function storage(initial = {}) {
  const values = new Map(Object.entries(initial));
  return { values, getItem: (key) => values.get(key) ?? null, setItem: (key, value) => values.set(key, String(value)) };
}

test('defaults: five minutes idle, three in the background', () => {
  assert.deepEqual(readSettings(storage()), { idleMinutes: 5, hiddenMinutes: 3 });
  assert.deepEqual(DEFAULTS, { idleMinutes: 5, hiddenMinutes: 3 });
});

test('1 to 60 minutes idle and the offered background times are kept; anything else is refused and not written', () => {
  const kept = storage();
  assert.ok(writeSettings(kept, { idleMinutes: 60, hiddenMinutes: 0 }));
  assert.deepEqual(readSettings(kept), { idleMinutes: 60, hiddenMinutes: 0 });
  for (const wrong of [{ idleMinutes: 0, hiddenMinutes: 3 }, { idleMinutes: 61, hiddenMinutes: 3 }, { idleMinutes: 1.5, hiddenMinutes: 3 },
    { idleMinutes: Number.NaN, hiddenMinutes: 3 }, { idleMinutes: 5, hiddenMinutes: 2 }, { idleMinutes: 5, hiddenMinutes: -1 }]) {
    assert.equal(writeSettings(kept, wrong), false, JSON.stringify(wrong));
  }
  assert.deepEqual(readSettings(kept), { idleMinutes: 60, hiddenMinutes: 0 });
});

test('a damaged stored value falls back to the default, field by field', () => {
  for (const damaged of ['not json', 'null', '[]', '{"idle_minutes": 1e9}', '{"idle_minutes": "5"}']) {
    assert.deepEqual(readSettings(storage({ 'coffer.settings': damaged })), { idleMinutes: 5, hiddenMinutes: 3 }, damaged);
  }
  assert.deepEqual(readSettings(storage({ 'coffer.settings': '{"idle_minutes": 12, "hidden_minutes": 7}' })), { idleMinutes: 12, hiddenMinutes: 3 });
});

test('the email is remembered as typed', () => {
  const kept = storage();
  assert.equal(rememberedEmail(kept), '');
  rememberEmail(kept, 'ada@example.org');
  assert.equal(rememberedEmail(kept), 'ada@example.org');
  assert.deepEqual([...kept.values.keys()], ['coffer.email']);
});
