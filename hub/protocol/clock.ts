// The hub's time, passed in wherever time decides something (a flood window, an idle session, a
// sweep, how long a call waits for its client's answer, when a task's outcome or a preview ends),
// so it is visible where it matters and a test can drive it. hub/hub.ts, the composition root,
// hands systemClock down; a unit test enables node:test's mock.timers (Date, setTimeout,
// setInterval) and ticks: systemClock reads those globals at each call, so it follows the mock,
// as libraries that read the globals themselves do (rate-limiter-flexible, the SDK's state codec).

/** A scheduled call that can be called off. */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Calls `fn` once after `ms`; the timer keeps no process alive. */
  after(ms: number, fn: () => void): Timer;
  /** Calls `fn` every `ms` until cancelled; the timer keeps no process alive. */
  every(ms: number, fn: () => void): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return { cancel: () => clearInterval(timer) };
  },
};
