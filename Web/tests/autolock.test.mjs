// The page locks after three minutes hidden, by its timer or, when the timer was frozen, on showing again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { autoLock } from '../app/js/autolock.js';

function harness() {
  const clock = { now: 0, timers: new Map(), next: 1, locks: 0 };
  const guard = autoLock({
    lock: () => { clock.locks++; }, after: 180_000, now: () => clock.now,
    setTimer: (run, ms) => { clock.timers.set(clock.next, { run, at: clock.now + ms }); return clock.next++; },
    clearTimer: (id) => clock.timers.delete(id),
  });
  clock.advance = (ms, { frozen = false } = {}) => {
    clock.now += ms;
    if (frozen) return;
    for (const [id, timer] of [...clock.timers]) if (timer.at <= clock.now) { clock.timers.delete(id); timer.run(); }
  };
  return { clock, guard };
}

test('hidden for three minutes: locked by the timer', () => {
  const { clock, guard } = harness();
  guard.hidden();
  clock.advance(179_999);
  assert.equal(clock.locks, 0);
  clock.advance(1);
  assert.equal(clock.locks, 1);
});

test('back within three minutes: not locked, and the timer is gone', () => {
  const { clock, guard } = harness();
  guard.hidden();
  clock.advance(120_000);
  guard.visible();
  clock.advance(600_000);
  assert.equal(clock.locks, 0);
});

test('a frozen timer: the time hidden decides when the page shows again', () => {
  const { clock, guard } = harness();
  guard.hidden();
  clock.advance(3_600_000, { frozen: true });
  assert.equal(clock.locks, 0);
  guard.visible();
  assert.equal(clock.locks, 1);
});
