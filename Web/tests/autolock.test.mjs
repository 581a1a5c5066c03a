// The page locks after three minutes hidden, by its timer or, when the timer was frozen, on showing again; and after
// the idle time without a touch while it is open.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { autoLock, idleLock } from '../app/js/autolock.js';

function harness(make = autoLock, after = 180_000) {
  const clock = { now: 0, timers: new Map(), next: 1, locks: 0 };
  const guard = make({
    lock: () => { clock.locks++; }, after: () => after, now: () => clock.now,
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

test('idle for five minutes: locked; a touch moves the moment, and the one timer re-arms from it', () => {
  const { clock, guard } = harness(idleLock, 300_000);
  guard.start();
  clock.advance(200_000);
  guard.touched();
  assert.equal(clock.timers.size, 1, 'a touch sets no timer of its own');
  clock.advance(100_000);
  assert.equal(clock.locks, 0, 'the timer fired at five minutes from the start and re-armed from the touch');
  clock.advance(199_999);
  assert.equal(clock.locks, 0);
  clock.advance(1);
  assert.equal(clock.locks, 1);
});

test('the idle setting is read when the timer fires, and stop() ends it', () => {
  let after = 600_000;
  const clock = { now: 0, timers: new Map(), next: 1, locks: 0 };
  const guard = idleLock({ lock: () => { clock.locks++; }, after: () => after, now: () => clock.now,
    setTimer: (run, ms) => { clock.timers.set(clock.next, { run, at: clock.now + ms }); return clock.next++; },
    clearTimer: (id) => clock.timers.delete(id) });
  const advance = (ms) => {
    clock.now += ms;
    for (const [id, timer] of [...clock.timers]) if (timer.at <= clock.now) { clock.timers.delete(id); timer.run(); }
  };
  guard.start();
  after = 60_000;
  advance(600_000);
  assert.equal(clock.locks, 1, 'a shorter setting applies at the next check');
  guard.start();
  guard.stop();
  advance(3_600_000);
  assert.equal(clock.locks, 1);
  assert.equal(clock.timers.size, 0);
});
