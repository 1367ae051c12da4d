// Each session's (and 2026 context's) latest tool calls, for hub_calls and the playground: a ring
// of a fixed length per session, held by the session object itself, so it goes when the session does.
import type { AuditOutcome } from "./audit.js";

export interface RecentCall {
  tool: string;
  outcome: AuditOutcome;
  durationMs: number;
  /** When it started (ISO 8601). */
  at: string;
  errorType?: string;
  taskId?: string;
}

/** How many calls one session keeps. */
export const RECENT_CALLS = 50;

/** A call as the ring keeps it: its start as a number, made a date only when someone reads it (few calls are ever read). */
export type NotedCall = Omit<RecentCall, "at"> & { startedAt: number };

export class RecentCalls {
  private readonly rings = new WeakMap<object, NotedCall[]>();

  constructor(private readonly length = RECENT_CALLS) {}

  add(session: object, call: NotedCall): void {
    const ring = this.rings.get(session);
    if (!ring) return void this.rings.set(session, [call]);
    ring.push(call);
    if (ring.length > this.length) ring.shift();
  }

  /** The session's latest `limit` calls, newest first. */
  of(session: object, limit = this.length): RecentCall[] {
    return (this.rings.get(session) ?? [])
      .slice(-limit)
      .reverse()
      .map(({ tool, outcome, durationMs, startedAt, ...rest }) => ({ tool, outcome, durationMs, at: new Date(startedAt).toISOString(), ...rest }));
  }
}
