// Whether a client may open one more session. A session costs the hub ~50 KB and a notice to every
// child when it ends, so one client must not open them without bound or churn through them:
// sessions are capped per tenant (503 when full) and per client address on a keyless hub (429),
// and opened at a bounded rate per client (429). At a cap, the principal's own longest-idle
// sessions with nothing running make room first, so a client that leaks sessions is not locked
// out for the 30 minutes they take to expire, and a session in use is never closed for it.
// How long a session has been idle is its own clock's (./registry.ts); the churn windows are
// rate-limiter-flexible's, which reads the global clock (see ./rate-limits.ts).
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { SessionLimits } from "../config/session-limits.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { identified } from "../tenants/tenants.js";
import { jsonRpcError } from "../protocol/jsonrpc.js";
import { clientPrincipal, tenantPrincipal, type ClientSession, type SessionRegistry } from "./registry.js";

const ADVICE =
  "Reuse the session you have for many calls (send its Mcp-Session-Id), and close the ones you are done with (HTTP DELETE /mcp with their Mcp-Session-Id).";

export class SessionAdmission {
  private readonly churn?: BurstyRateLimiter;

  constructor(
    private readonly limits: SessionLimits,
    private readonly sessions: SessionRegistry,
  ) {
    const rate = limits.sessionRate;
    if (rate) {
      this.churn = new BurstyRateLimiter(
        new RateLimiterMemory({ points: rate.points, duration: rate.seconds }),
        new RateLimiterMemory({ points: rate.points * 5, duration: rate.seconds * 10 }),
      );
    }
  }

  /** The refusal when the cap is reached and no idle session can make room; checked right before a session is added. */
  full(tenant: ServedTenant, clientKey: string): Response | undefined {
    const { maxSessions, maxSessionsPerClient } = this.limits;
    if (!identified(tenant) && !this.makeRoom(clientPrincipal(tenant, clientKey), maxSessionsPerClient)) {
      return this.refuse(
        429,
        `Too many sessions: this client has ${maxSessionsPerClient} open, the most one client address may hold (AGENTBOX_MAX_SESSIONS_PER_CLIENT), and ` +
          `none has been idle long enough to close for it.`,
      );
    }
    if (!this.makeRoom(tenantPrincipal(tenant), maxSessions)) {
      const whose = tenant.person ? "this person's tenant" : tenant.keyDigest ? "this API key's tenant" : "this hub";
      return this.refuse(
        503,
        `Too many sessions: ${whose} has ${maxSessions} open, the most it may hold (AGENTBOX_MAX_SESSIONS), and none has been idle long enough to ` +
          `close for it.`,
      );
    }
    return undefined;
  }

  /** The refusal when this client opens sessions faster than AGENTBOX_SESSION_RATE allows. */
  async tooFast(clientKey: string): Promise<Response | undefined> {
    if (!this.churn) return undefined;
    try {
      await this.churn.consume(clientKey);
      return undefined;
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const rate = this.limits.sessionRate as { points: number; seconds: number };
      return jsonRpcError(
        429,
        -32000,
        `Sessions are being opened too fast: at most ${rate.points} new sessions per ${rate.seconds === 1 ? "second" : `${rate.seconds} s`} per client ` +
          `(AGENTBOX_SESSION_RATE), after a burst. ${ADVICE}`,
        {
          headers: { "retry-after": String(Math.max(1, Math.ceil(res.msBeforeNext / 1000))) },
        },
      );
    }
  }

  /** True when the principal is below its cap, if need be after closing its longest-idle sessions. */
  private makeRoom(principal: string, cap: number): boolean {
    const open = this.sessions.of(principal);
    let excess = this.sessions.capped(principal) - cap + 1;
    if (excess <= 0) return true;
    const idle: ClientSession[] = [];
    for (const session of open) if (!session.lasting && session.idleMs > this.limits.reclaimIdleMs) idle.push(session);
    if (idle.length < excess) return false;
    idle.sort((a, b) => b.idleMs - a.idleMs);
    // close() takes a session out of the registry at once; its servers close after
    for (const session of idle) {
      if (excess-- <= 0) break;
      void this.sessions.close(session.id, "reclaimed");
    }
    return true;
  }

  private refuse(status: 429 | 503, why: string): Response {
    const seconds = Math.ceil(this.limits.reclaimIdleMs / 1000);
    return jsonRpcError(status, -32000, `${why} ${ADVICE} Sessions idle over ${seconds} s are closed to make room when a new one is asked for.`, {
      headers: { "retry-after": String(seconds) },
    });
  }
}
