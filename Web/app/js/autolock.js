// @ts-check
// When the app forgets its keys by itself: after a time hidden (another app, a locked phone), and after a time without
// a touch while it is open. Timers are throttled or frozen in the background, so the time hidden is also checked when
// the page shows again, and the idle timer re-arms from the last touch rather than being reset on every event.

/**
 * What both locks are given: `lock()`, `after()` (the time in ms, read when it is needed, so a changed setting
 * applies), and the clock and timers (the tests' own, or the page's). A timer is whatever `setTimer` returns.
 * @typedef {object} LockOptions
 * @property {() => unknown} lock
 * @property {() => number} after
 * @property {() => number} [now]
 * @property {(run: () => void, ms: number) => any} [setTimer]
 * @property {(timer: any) => void} [clearTimer]
 */

/**
 * `{ hidden(), visible() }` for `visibilitychange`; `lock()` runs once the page has been hidden for `after` ms.
 * @param {LockOptions} options
 */
export function autoLock({ lock, after, now = () => Date.now(), setTimer = setTimeout, clearTimer = clearTimeout }) {
  /** @type {number | null} */
  let hiddenAt = null;
  /** @type {any} */
  let timer = null;
  return {
    hidden() {
      hiddenAt = now();
      clearTimer(timer);
      timer = setTimer(lock, after());
    },
    visible() {
      clearTimer(timer);
      timer = null;
      if (hiddenAt !== null && now() - hiddenAt >= after()) lock();
      hiddenAt = null;
    },
  };
}

/**
 * `{ start(), touched(), stop() }`: `lock()` runs once `after()` ms have passed since the last `touched()` (or
 * `start()`). A touch only records the time; the one timer checks it when it fires.
 * @param {LockOptions} options
 */
export function idleLock({ lock, after, now = () => Date.now(), setTimer = setTimeout, clearTimer = clearTimeout }) {
  let last = 0;
  /** @type {any} */
  let timer = null;
  const arm = () => {
    clearTimer(timer);
    timer = setTimer(check, Math.max(0, last + after() - now()));
  };
  function check() {
    timer = null;
    if (now() - last >= after()) lock();
    else arm();
  }
  return {
    start() {
      last = now();
      arm();
    },
    touched() {
      last = now();
    },
    stop() {
      clearTimer(timer);
      timer = null;
    },
  };
}
