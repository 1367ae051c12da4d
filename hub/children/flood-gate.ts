// Bounds on what one child can make the hub do per second. A child's output is untrusted (a
// tenant can write to its own server's stdout and stderr), so a flood of log lines or
// notifications is cut off instead of filling the hub's log, CPU and clients.
import type { Clock, Timer } from "../protocol/clock.js";

/**
 * Lets through at most `perSecond` events in each one-second window and counts the rest; the
 * count of dropped events is reported once, when their window ends (so a flood costs one
 * summary line, not one line per dropped event).
 */
export class FloodGate {
  private windowStart = 0;
  private admitted = 0;
  private dropped = 0;
  private timer?: Timer;

  constructor(
    private readonly perSecond: number,
    private readonly onDropped: (count: number) => void,
    private readonly clock: Clock,
  ) {}

  admit(): boolean {
    const now = this.clock.now();
    if (now - this.windowStart >= 1000) {
      this.report();
      this.windowStart = now;
      this.admitted = 0;
    }
    if (this.admitted < this.perSecond) {
      this.admitted++;
      return true;
    }
    if (this.dropped++ === 0) this.timer = this.clock.after(this.windowStart + 1000 - now, () => this.report());
    return false;
  }

  /** Report what was dropped and not yet reported (when the window ends, or the child goes away). */
  report(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.dropped === 0) return;
    const count = this.dropped;
    this.dropped = 0;
    this.onDropped(count);
  }
}

/**
 * Runs an async task on demand, never two at once and at most once per interval: a burst of
 * demands costs one run at once and one more when the interval is over, and no demand is lost
 * (each run gets every key asked for since the last one began).
 */
export class Coalescer<K> {
  private running = false;
  private readonly wanted = new Set<K>();
  private lastRun = 0;
  private timer?: Timer;

  constructor(
    private readonly intervalMs: number,
    private readonly task: (keys: K[]) => Promise<void>,
    private readonly clock: Clock,
  ) {}

  request(key: K): void {
    this.wanted.add(key);
    this.schedule();
  }

  private schedule(): void {
    if (this.running || this.timer) return;
    const wait = this.lastRun + this.intervalMs - this.clock.now();
    if (wait > 0) {
      this.timer = this.clock.after(wait, () => {
        this.timer = undefined;
        void this.run();
      });
      return;
    }
    void this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    const keys = [...this.wanted];
    this.wanted.clear();
    this.lastRun = this.clock.now();
    try {
      await this.task(keys);
    } finally {
      this.running = false;
      if (this.wanted.size) this.schedule();
    }
  }

  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.wanted.clear();
  }
}
