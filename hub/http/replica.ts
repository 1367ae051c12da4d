// Many replicas behind one router: session ids that name their replica, and a graceful drain.
// With AGENTBOX_REPLICA=r2 every id this hub mints reads `r2.<uuid>`, so nginx (deploy/nginx)
// sends each request to the replica holding its session by one rule and keeps no state.
import { randomUUID } from "node:crypto";
import { EventEmitter, once, setMaxListeners } from "node:events";
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
 * Requests whose reply is not made yet (a stream's counts as made once its head is): a call's
 * result is written after the call ends, and a drain that stopped the hub in between would cut
 * it (a 2026 retry answering input_required would get no reply at all).
 */
class RepliesInFlight {
  size = 0;
  private readonly ends = new EventEmitter();

  track<T>(reply: Promise<T>): Promise<T> {
    this.size++;
    return reply.finally(() => {
      this.size--;
      this.ends.emit("end");
    });
  }

  async nextEnd(signal: AbortSignal): Promise<void> {
    await once(this.ends, "end", { signal }).catch(() => undefined);
  }
}

const replies = new WeakMap<HubServices, RepliesInFlight>();

/** The replies this hub is making now (app.ts counts every request through them). */
export function repliesOf(hub: HubServices): RepliesInFlight {
  let tracked = replies.get(hub);
  if (!tracked) replies.set(hub, (tracked = new RepliesInFlight()));
  return tracked;
}

/**
 * The reply to a request that would open a session on a draining replica: 503, so a router
 * (nginx's proxy_next_upstream http_503) retries it on another replica, and a JSON-RPC error a
 * client reads if it reached this one directly.
 */
export function drainingRefusal(hub: HubServices): Response {
  const name = hub.config.replica ? `Replica '${hub.config.replica}'` : "This agentbox";
  return jsonRpcError(
    503,
    -32000,
    `${name} is draining (shutting down) and takes no new sessions or calls; retry, and the router will send you to another replica.`,
    {
      headers: { "retry-after": "1" },
    },
  );
}

/**
 * Whether a 2026-07-28 request is one a draining replica refuses: one that starts something. A
 * retry answering input_required (its requestState) reaches a call only this process holds, and a
 * request naming a context handle (Mcp-Param-Context) a context that lives here: both are served
 * until the drain ends, as the requests of 2025 sessions already here are. Anything else (a new
 * call, a list, a listen stream) can be served by any replica, so it gets the refusal the router
 * retries elsewhere.
 */
export function startsSomethingNew(hub: HubServices, req: Request, body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  const retries = messages.every((m) => typeof (m as { params?: { requestState?: unknown } } | null)?.params?.requestState === "string");
  // handles read `<replica>.…` like session ids: one naming another replica holds nothing here
  const handle = req.headers.get("mcp-param-context");
  const namesContextHere = handle !== null && (!hub.config.replica || handle.startsWith(`${hub.config.replica}.`));
  return !retries && !namesContextHere;
}

/**
 * Stop taking new sessions and wait, at most `ms`, for the calls in flight to finish and their
 * replies to be made. Resolves with the number of calls still running when the wait ended (0 when
 * all finished).
 */
export async function drain(hub: HubServices, ms: number): Promise<number> {
  hub.draining = true;
  const deadline = new AbortController();
  setMaxListeners(0, deadline.signal); // one wait per busy session
  const timer = setTimeout(() => deadline.abort(), ms);
  const making = repliesOf(hub);
  try {
    // sessions already here may start calls while draining: count again each time one ends
    while ((callsInFlight(hub) > 0 || making.size > 0) && !deadline.signal.aborted) {
      const busy = hub.sessions.all().filter((s) => s.inflight.size > 0);
      await Promise.race([making.nextEnd(deadline.signal), ...busy.map((s) => s.inflight.nextEnd(deadline.signal))]);
    }
  } finally {
    clearTimeout(timer);
    deadline.abort(); // releases the waits on the sessions whose calls did not end
  }
  return callsInFlight(hub);
}
