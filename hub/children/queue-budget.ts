// What one tenant's calls waiting for a slot of its servers may hold in the hub's memory. A call
// that waits keeps its parsed params (by far the largest part of it: its arguments) until a slot
// frees; a tenant queueing large call after large call behind a busy server would otherwise grow
// the hub without bound, and slow every other tenant with it. One budget per tenant, shared by
// all its servers (and their per-session instances); a call that finds a slot free is never
// refused by it.
import { approximateJsonSize } from "../protocol/json-size.js";

/** A call that had to wait and would have passed its tenant's budget: refused at once, not queued. */
export class QueueBudgetError extends Error {}

/**
 * What a waiting call's params hold, without serializing them: strings by their UTF-8 length,
 * which is at least what V8 keeps of them (a byte a character for Latin-1 text, two for the rest).
 */
export const heldBytes = (params: unknown): number => approximateJsonSize(params, (text) => Buffer.byteLength(text));

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export class QueueBudget {
  /** Bytes the tenant's waiting calls hold now. */
  used = 0;

  constructor(readonly limit: number) {}

  /**
   * Counts a call about to wait, whose reason is `blockedBy`; returns what it was counted for
   * (to release when it stops waiting), or throws QueueBudgetError when it would pass the budget.
   */
  reserve(params: unknown, blockedBy: string): number {
    const bytes = heldBytes(params);
    if (this.used + bytes > this.limit) {
      throw new QueueBudgetError(
        `This call was refused rather than queued: ${blockedBy}, and this tenant's calls already waiting for a slot hold ` +
          `${mib(this.used)}; this one (${mib(bytes)}) would pass the ${mib(this.limit)} that waiting calls may hold ` +
          "(AGENTBOX_QUEUED_CALL_BYTES). Retry once calls in progress have ended, or write large content to a workspace file and pass its path.",
      );
    }
    this.used += bytes;
    return bytes;
  }

  release(bytes: number): void {
    this.used -= bytes;
  }
}
