// Bounded concurrency per child: calls beyond maxConcurrency wait in a bounded queue instead of
// piling onto the child; a full queue is refused at once.
import type { Cancellation } from "../protocol/cancellation.js";

export class QueueFullError extends Error {}

export class CallQueue {
  private running = 0;
  private readonly waiting: Array<{ start: () => void; abort: () => void }> = [];

  constructor(
    private readonly maxConcurrency: number,
    private readonly maxQueue: number,
  ) {}

  get stats() {
    return { running: this.running, queued: this.waiting.length };
  }

  async run<T>(task: () => Promise<T>, signal?: Cancellation): Promise<T> {
    if (this.running >= this.maxConcurrency) {
      if (this.waiting.length >= this.maxQueue) {
        throw new QueueFullError(`${this.running} calls running and ${this.waiting.length} queued (limit ${this.maxQueue})`);
      }
      await new Promise<void>((resolve, reject) => {
        const entry = {
          start: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          },
          abort: () => reject(signal?.reason ?? new Error("cancelled while queued")),
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) this.waiting.splice(i, 1);
          entry.abort();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        this.waiting.push(entry);
      });
    }
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.start();
    }
  }
}
