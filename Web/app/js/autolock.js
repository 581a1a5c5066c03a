// When the page forgets its keys by itself: after `after` milliseconds hidden (another app, a locked phone). Timers
// are throttled or frozen in the background, so the time hidden is also checked when the page shows again.

/** `{ hidden(), visible() }` for `visibilitychange`; `lock()` runs once the page has been hidden for `after` ms. */
export function autoLock({ lock, after, now = () => Date.now(), setTimer = setTimeout, clearTimer = clearTimeout }) {
  let hiddenAt = null;
  let timer = null;
  return {
    hidden() {
      hiddenAt = now();
      clearTimer(timer);
      timer = setTimer(lock, after);
    },
    visible() {
      clearTimer(timer);
      timer = null;
      if (hiddenAt !== null && now() - hiddenAt >= after) lock();
      hiddenAt = null;
    },
  };
}
