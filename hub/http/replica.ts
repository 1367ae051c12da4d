// Many replicas behind one router: session ids that name their replica, and a graceful drain.
// With AGENTBOX_REPLICA=r2 every id this hub mints reads `r2.<uuid>`, so nginx (deploy/nginx)
// sends each request to the replica holding its session by one rule and keeps no state.
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { HubServices } from "./services.js";
import { jsonRpcError } from "../protocol/jsonrpc.js";

/** A new session id: `<replica>.<uuid>` when the hub has a replica name, a bare uuid otherwise. */
export function newSessionId(replica: string | undefined): string {
  return replica ? `${replica}.${randomUUID()}` : randomUUID();
}

/** Tool calls running now, across every session. */
export function callsInFlight(hub: HubServices): number {
  return hub.sessions.all().reduce((n, s) => n + s.inflight.size, 0);
}

/**
 * The reply to a request that would open a session on a draining replica: 503, so a router
 * (nginx's proxy_next_upstream http_503) retries it on another replica, and a JSON-RPC error a
 * client reads if it reached this one directly.
 */
export function drainingRefusal(hub: HubServices): Response {
  const name = hub.config.replica ? `Replica '${hub.config.replica}'` : "This agentbox";
  return jsonRpcError(503, -32000, `${name} is draining (shutting down) and takes no new sessions; retry, and the router will send you to another replica.`, {
    headers: { "retry-after": "1" },
  });
}

/**
 * Stop taking new sessions and wait, at most `ms`, for the calls in flight to finish. Resolves
 * with the number of calls still running when the wait ended (0 when all finished).
 */
export async function drain(hub: HubServices, ms: number): Promise<number> {
  hub.draining = true;
  const deadline = new AbortController();
  setMaxListeners(0, deadline.signal); // one wait per busy session
  const timer = setTimeout(() => deadline.abort(), ms);
  try {
    // sessions already here may start calls while draining: count again each time one ends
    while (callsInFlight(hub) > 0 && !deadline.signal.aborted) {
      const busy = hub.sessions.all().filter((s) => s.inflight.size > 0);
      await Promise.race(busy.map((s) => s.inflight.nextEnd(deadline.signal)));
    }
  } finally {
    clearTimeout(timer);
    deadline.abort(); // releases the waits on the sessions whose calls did not end
  }
  return callsInFlight(hub);
}
