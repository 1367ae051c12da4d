// Sending a client's request on to the child that serves it, for one session: the session named
// in _meta (and, for a spawned server that asks for it, its callback token), progress relayed in order before
// the result, cancellation carried across, and the child's failures as protocol errors. A server
// configured `instances: "session"` is reached through the session's own instance of it.
import { CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY } from "@modelcontextprotocol/server";
import { ErrorCode, McpError, type LoggingLevel, type Result } from "@modelcontextprotocol/sdk/types.js";
import { CALL_META_KEY, SESSION_CALLBACK_CAPABILITY, SESSION_META_KEY, TOKEN_META_KEY } from "../../servers/lib/session-events.js";
import { ChildUnavailableError, MessageTooLargeError, type Child } from "../children/child.js";
import { QueueBudgetError } from "../children/queue-budget.js";
import type { CallOptions } from "../children/calls.js";
import { turnOf } from "./child-requests.js";
import { protocolError, withoutCodePrefix } from "../protocol/jsonrpc.js";
import { traceChildRequest } from "../observability/tracing.js";
import { inflightCall, type CallChannel, type ClientSession, type InflightCall } from "./registry.js";

export type Params = Record<string, unknown> & { _meta?: Record<string, unknown> };

/**
 * `params` as the child is sent them: the client's progress token replaced by the child's own, the
 * session and the call named (never a call the client named: only the hub names calls).
 */
function forChild(
  params: Params,
  overrides: Params,
  child: Child,
  session: ClientSession,
  channel: CallChannel,
  call?: InflightCall,
): { params: Params; progressToken: unknown } {
  const modern = Boolean(child.config.protocol);
  // one pass over the caller's _meta, not rest patterns and spreads: those cost 2.5 µs of every call
  const given = params._meta ?? {};
  const named: Record<string, unknown> = {};
  let progressToken: unknown;
  for (const key of Object.keys(given)) {
    if (key === "progressToken") progressToken = given.progressToken;
    // only the hub names calls and hands out callback tokens; a 2026 child hears the level the hub chose for the caller, never one the caller's params carry
    else if (key === CALL_META_KEY || key === TOKEN_META_KEY || (modern && key === LOG_LEVEL_META_KEY)) continue;
    else ownProperty(named, key, given[key]);
  }
  if (modern && !(CLIENT_CAPABILITIES_META_KEY in named)) named[CLIENT_CAPABILITIES_META_KEY] = callerCapabilities(call?.caller ?? session);
  named[SESSION_META_KEY] = session.id;
  if (call) named[CALL_META_KEY] = call.id;
  if (takesCallbackToken(child)) named[TOKEN_META_KEY] = session.token;
  const level = modern ? logLevelFor(session, channel, call) : undefined;
  if (level) named[LOG_LEVEL_META_KEY] = level;
  return { params: { ...params, ...overrides, _meta: named }, progressToken };
}

/** A spawned child that asked for the session's callback token (SESSION_CALLBACK_CAPABILITY); no other is sent it. */
function takesCallbackToken(child: Child): boolean {
  return child.spawned && child.capabilities.experimental?.[SESSION_CALLBACK_CAPABILITY] !== undefined;
}

/** Sets `key` as an own property, as a spread would: assigning "__proto__" would set the prototype instead. */
function ownProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A 2026-07-28 child sees what its caller can be asked (hub/children/modern-link.ts), so it asks only
 * what the caller can answer: a 2026 request's declaration is in its _meta already; a 2025 caller's
 * is what it declared at initialize, of what the hub relays (none for a plain JSON client).
 */
function callerCapabilities(caller: ClientSession): Record<string, unknown> {
  const { sampling, elicitation, roots } = caller.clientCapabilities;
  return { ...(sampling ? { sampling } : {}), ...(elicitation ? { elicitation } : {}), ...(roots ? { roots } : {}) };
}

/**
 * The level a 2026-07-28 child is asked to send log lines at during a request (it sends none
 * unasked): what the caller's own request names, else what its 2025 session set with
 * logging/setLevel, else everything (a 2025 client hears every level until it sets one). The hub
 * still filters each line for its client (./child-requests.ts, ./pending-call.ts).
 */
function logLevelFor(session: ClientSession, channel: CallChannel, call?: InflightCall): LoggingLevel | undefined {
  if (channel.logLevel) return channel.logLevel();
  const asker = call?.caller ?? session;
  return asker.kind === "modern" ? undefined : (asker.logLevel ?? "debug");
}

/** The process a session's request to a configured server goes to: its own instance when the server runs one per session. */
function instanceFor(child: Child, session: ClientSession): Child {
  // a closed session's instances are stopped: one started now would outlive it
  if (session.closed && child.config.instances === "session") throw new ChildUnavailableError(`This client session has closed; open a new one.`);
  return session.tenant.instances.route(child, session.id);
}

/**
 * @param overrides what the child is sent instead of the client's values (a tool's or prompt's own, unprefixed name)
 * @param call the call in flight this request is (a tools/call, ./tool-calls.ts), named to the child
 */
export async function forward(
  configured: Child,
  method: string,
  params: Params,
  session: ClientSession,
  channel: CallChannel,
  overrides: Params = {},
  call?: InflightCall,
): Promise<Result> {
  // A client's prompts/get, resources/read or completion is a call in flight too, named to its child: a
  // question the child asks meanwhile reaches this request (a 2026 one refuses it at once), never a
  // tool call an earlier request of the tenant's shared context left waiting for its retry (the asker
  // would hang), nor another client's call; and a child that names it is not taken for one that names none.
  const tracked = call ? undefined : inflightCall(configured, method, channel);
  if (tracked) session.inflight.add(tracked);
  try {
    const child = instanceFor(configured, session);
    const inflight = call ?? tracked;
    const { params: forwarded, progressToken } = forChild(params, overrides, child, session, channel, inflight);
    // this child now holds state of the session: it is told when the session ends
    session.reached.add(child);
    const detached = channel.detached && (() => channel.detached!());
    // a call in flight runs in its client's turn, should the server take turns, and may ask once its server has it
    const queueing: Queueing = { detached };
    if (inflight) {
      inflight.turn = turnOf(session, inflight, forwarded._meta);
      Object.assign(queueing, {
        turn: inflight.turn,
        onstart: () => (inflight.started = true),
        onChildTask: (id: string | undefined) => (inflight.childTask = id === undefined ? {} : { id }),
      });
    }
    return await traceChildRequest(child.name, method, forwarded, (traced) => send(child, method, traced, progressToken, channel, queueing));
  } catch (err) {
    if (method !== "tools/call" && (err instanceof ChildUnavailableError || err instanceof QueueBudgetError))
      throw protocolError(ErrorCode.InternalError, err.message);
    if (method !== "tools/call" && err instanceof MessageTooLargeError) throw protocolError(ErrorCode.InvalidParams, err.message);
    // the child's message already carries the SDK's "MCP error N:" prefix; a client adds its own
    if (err instanceof McpError) throw protocolError(err.code, withoutCodePrefix(err.message), err.data);
    throw err;
  } finally {
    if (tracked) session.inflight.delete(tracked);
  }
}

/** How a request waits for its server's queue (hub/children/queue.ts). */
type Queueing = Pick<CallOptions, "detached" | "turn" | "onstart" | "onChildTask">;

async function send(child: Child, method: string, params: Params, progressToken: unknown, channel: CallChannel, queueing: Queueing): Promise<Result> {
  if (progressToken === undefined) return await child.request(method, params, { signal: channel.signal, ...queueing });
  // progress is relayed in order, and all of it before the result, or the client loses the tail
  let relayed: Promise<unknown> = Promise.resolve();
  const onprogress = (p: { progress: number; total?: number; message?: string }) => {
    const notification = { method: "notifications/progress" as const, params: { ...p, progressToken: progressToken as string | number } };
    relayed = relayed.then(() => channel.notify(notification)).catch(() => undefined);
  };
  // why the call waits for a slot of its server, before any progress of the child's (a task keeps it as its statusMessage)
  const onqueue = (message: string) => onprogress({ progress: 0, message });
  const result = await child.request(method, params, { signal: channel.signal, onprogress, onqueue, ...queueing });
  await relayed;
  return result;
}

/** The channel of a request the hub sends on its own (a listen's subscription, a renewal after a restart): no client request carries it. */
export function quietChannel(): CallChannel {
  return {
    signal: AbortSignal.timeout(60_000),
    notify: () => Promise.resolve(),
    request: () => Promise.reject(new Error("no client to ask during a subscription the hub makes on its own")),
    afterReply: (action) => queueMicrotask(action),
  };
}
