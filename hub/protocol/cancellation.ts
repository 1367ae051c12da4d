// How a call in flight learns that it was cancelled. An AbortSignal is one (the SDK hands one to
// every request handler); a call the hub answers directly gets a CallCancellation instead. It does
// the one thing needed, at a fraction of the cost: creating an AbortController and adding and
// removing its listener took about a tenth of the hub's CPU per forwarded call (bench/README.md).
import type { ServerResponse } from "node:http";
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export class CallCancellation implements Cancellation {
  aborted = false;
  reason: unknown = undefined;
  private listeners?: Array<() => void>;

  addEventListener(_type: "abort", listener: () => void): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  /** Cancel once: every listener runs, once, with `reason` set. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }
}

/**
 * The client hanging up before its reply was written (the connection closed first), as a
 * Cancellation: what the request's AbortSignal says, without building one per request.
 */
export function hangUpOf(response: ServerResponse): Cancellation {
  const hangUp = new CallCancellation();
  const closed = () => {
    if (!response.writableFinished) hangUp.abort("Client connection prematurely closed.");
  };
  if (response.destroyed) closed();
  else response.once("close", closed);
  return hangUp;
}
