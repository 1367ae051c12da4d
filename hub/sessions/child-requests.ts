// What a child sends the hub's clients unasked: requests (sampling, elicitation, roots) and
// notifications (log lines, resource updates). Each goes to the session it belongs to, on the
// call it came from when there is one, and to nobody when the hub cannot tell whose it is.
import {
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  ResultSchema,
  type LoggingLevel,
  type Notification,
  type Request,
  type Result,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/server";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { CALL_META_KEY, INPUT_KEY_META_KEY, SESSION_META_KEY } from "../../servers/lib/session-events.js";
import type { Child } from "../children/child.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import type { TenantChanges } from "./changes.js";
import { protocolError, withoutCodePrefix } from "../protocol/jsonrpc.js";
import { publishedAppUri } from "../catalog/app-uris.js";
import { tenantPrincipal, type ClientSession, type InflightCall, type SessionKind, type SessionRegistry } from "./registry.js";

/** The client capability each request a child may send needs. */
export const CAPABILITY_FOR: Record<string, "sampling" | "elicitation" | "roots"> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

/** The log levels, least severe first. */
export const LOG_LEVELS: LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** Where a child's request or log line goes: a session, and the call in it when it came from one. */
interface Origin {
  session: ClientSession;
  call?: InflightCall;
}

/** The turn of calls whose clients can be asked nothing: they may run together, whatever their server asks goes nowhere. */
const NOBODY_TO_ASK = "nobody";

/**
 * Whose turn a call runs in, should its server take turns (hub/children/queue.ts): a 2025 client's
 * session (whichever of its calls carries a question, it reaches that client), else the call alone (2026
 * clients of a tenant share one context and cannot be told apart); calls whose client declared none of
 * sampling, elicitation and roots share one turn (the 2026 request's declaration is in `meta`).
 */
export function turnOf(session: ClientSession, call: InflightCall, meta: Record<string, unknown> | undefined): string {
  const asker = call.caller ?? session;
  const declared = asker.kind === "modern" ? (meta?.[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown> | undefined) : asker.clientCapabilities;
  if (!Object.values(CAPABILITY_FOR).some((capability) => declared?.[capability])) return NOBODY_TO_ASK;
  return ONE_CLIENT.has(asker.kind) ? `session:${asker.id}` : `call:${call.id}`;
}

/**
 * The session a child's request or notification belongs to, and the call it came from: the call the
 * child names (our servers echo the hub's _meta["agentbox/call"]), looked for among the calls to
 * that child of the session it names (or of the session a per-session instance serves, whatever it
 * names); else, for a child that names no call, the only call in flight to it there (the session's
 * own, or the tenant's), or one of them when they are all one client's. Anything else would be a
 * guess, and a guess can hand one client's question to another: a string saying why nobody is asked.
 * A call its child runs as a task of its own is only ever asked what names that task (childTaskMayAsk).
 */
function originOf(
  sessions: SessionRegistry,
  tenant: ServedTenant,
  child: Child,
  params: Record<string, unknown> | undefined,
  needed?: string,
): Origin | string | { refused: string } {
  const meta = params?._meta as Record<string, unknown> | undefined;
  const owner = tenant.instances.ownerOf(child);
  // its calls are registered under the configured server (hub/sessions/tool-calls.ts)
  const served = owner?.prototype ?? child;
  const [named] = ownSession(sessions, tenant, owner ? owner.session : stringAt(meta, SESSION_META_KEY));
  const marker = stringAt(meta, CALL_META_KEY);
  if (marker !== undefined) {
    // a call of another session or tenant, or one that ended, is no call of this child's: nobody is asked
    const call = named && [...named.inflight].find((c) => c.id === marker && c.child === served);
    return call ? { session: named, call } : `it names a call (_meta["${CALL_META_KEY}"]) that is not in flight to it in the session it names`;
  }
  if (owner && !named) return "its client session has closed";
  const scope = named ? [named] : [...sessionsOf(sessions, tenant)];
  // a call still waiting in its server's queue cannot be the one asking
  const inflight = scope.flatMap((session) => [...session.inflight].filter((c) => c.child === served && c.started).map((call) => ({ session, call })));
  const candidates = inflight.filter(({ call }) => childTaskMayAsk(call, meta));
  if (candidates.length === 1) return candidates[0];
  if (candidates.length === 0) {
    // named, the session is known (a 2025 client is asked outside any call; a 2026 one cannot be)
    if (named) return { session: named };
    return inflight.length === 0
      ? `it names no session in _meta["${SESSION_META_KEY}"] and no call is in flight to it`
      : `it names no session in _meta["${SESSION_META_KEY}"], and the calls in flight to it run as its own tasks, none of which it names in _meta["${RELATED_TASK_META_KEY}"]`;
  }
  const [{ session: first }] = candidates;
  // all one 2025 client's calls: whichever carries the question, it reaches the client whose call asked
  if (ONE_CLIENT.has(first.kind) && candidates.every((c) => c.session === first)) return candidates[candidates.length - 1];
  // whichever of them asks, its client cannot be asked: the refusal is the answer, and no call is failed for another's question
  if (needed && candidates.every((c) => c.call.turn === NOBODY_TO_ASK)) {
    return {
      refused: `None of the ${candidates.length} client requests in flight to the '${child.name}' server declared the ${needed} capability, so nobody can be asked.`,
    };
  }
  const shared = candidates.some((c) => c.session.kind === "modern") ? "context" : owner ? "instance" : "process";
  return `${candidates.length} calls to it are in flight and it does not name the one asking (in _meta["${CALL_META_KEY}"]): ${REMEDY[shared]}`;
}

/**
 * Whether a call may be the one a child's message comes from, as far as the child's own tasks tell.
 * A call its child runs as a task (hub/children/child-task.ts) is that task's, and everything a
 * task says names it (MCP 2025-11-25: _meta["io.modelcontextprotocol/related-task"]): what names
 * no task or another is none of the call's. A just-started server-everything asks for roots, naming
 * nothing, 350 ms after it is initialized: taken for a task's question, it failed the task of a
 * client that did not declare roots. Any other call may be the one, as before.
 */
function childTaskMayAsk(call: InflightCall, meta: Record<string, unknown> | undefined): boolean {
  if (!call.childTask) return true;
  const related = meta?.[RELATED_TASK_META_KEY] as { taskId?: unknown } | undefined;
  return call.childTask.id !== undefined && related?.taskId === call.childTask.id;
}

/** Sessions that are one client's (a 2026 context is shared by its tenant's clients, an implicit one by a client address's). */
const ONE_CLIENT: ReadonlySet<SessionKind> = new Set(["streamable", "sse", "stdio"]);

/** What to do about a question naming no call while several calls to its server are in flight, by what those calls share. */
const REMEDY = {
  instance: "from now on the hub runs one of its calls at a time, so call again",
  context:
    "2026-07-28 clients of a tenant share one context; from now on the hub runs one of their calls to this server at a time, so call again " +
    "(or give each client a context of its own)",
  process:
    "from now on the hub runs one client's calls to it at a time, so call again " +
    '(or configure the server with "instances": "session": a process per client session, whose questions are that session\'s)',
};

const stringAt = (meta: Record<string, unknown> | undefined, key: string): string | undefined => (typeof meta?.[key] === "string" ? meta[key] : undefined);

/** The sessions a child of this tenant may reach: its tenant's, never another's (and however many those have, none of theirs is looked at). */
function sessionsOf(sessions: SessionRegistry, tenant: ServedTenant): ReadonlySet<ClientSession> {
  return sessions.of(tenantPrincipal(tenant));
}

/** A session of this tenant, while it is open: a child reaches no other tenant's (and an instance nobody but its own). */
function ownSession(sessions: SessionRegistry, tenant: ServedTenant, id: string | undefined): ClientSession[] {
  const session = sessions.get(id);
  return session?.tenant === tenant ? [session] : [];
}

/** What a client gets of a child's params: without the hub's own keys (the session and call it named, its input-key hint). */
function stripSessionMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params?._meta) return params;
  const { [SESSION_META_KEY]: _session, [CALL_META_KEY]: _call, [INPUT_KEY_META_KEY]: _inputKey, ...meta } = params._meta as Record<string, unknown>;
  return { ...params, _meta: meta };
}

/** Refusals are protocolError: the child's SDK prefixes "MCP error N:" itself, and the client would read it twice. */
export async function childRequest(sessions: SessionRegistry, tenant: ServedTenant, child: Child, request: Request, signal: AbortSignal): Promise<Result> {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  // a server that asks without naming its call takes its calls in turns from now on, so the next question has one client to go to
  if (stringAt(meta, CALL_META_KEY) === undefined) child.takeTurns();
  const origin = originOf(sessions, tenant, child, request.params, CAPABILITY_FOR[request.method]);
  if (typeof origin === "object" && "refused" in origin) throw protocolError(ErrorCode.InvalidRequest, origin.refused);
  if (typeof origin === "string") {
    throw protocolError(
      ErrorCode.InvalidRequest,
      `The hub cannot tell which client session ${request.method} from the '${child.name}' server belongs to (${origin}), ` +
        "so it asks nobody rather than the wrong client.",
    );
  }
  const outgoing = { method: request.method, params: stripSessionMeta(request.params) } as ServerRequest;
  // a call run in another context (hub/sessions/contexts.ts) asks the client that made it
  const asker = origin.call?.caller ?? origin.session;
  // a 2026-07-28 client is asked only through the call that asks (hub/sessions/pending-call.ts), which checks its capabilities
  if (asker.kind === "modern") {
    if (!origin.call) throw unreachableModernClient(request.method, child.name);
    const hint = (request.params?._meta as Record<string, unknown> | undefined)?.[INPUT_KEY_META_KEY];
    return origin.call.channel.request(outgoing, signal, typeof hint === "string" ? hint : undefined, child);
  }
  const needed = CAPABILITY_FOR[request.method];
  if (needed && !asker.clientCapabilities[needed]) {
    throw protocolError(
      ErrorCode.InvalidRequest,
      `The client of this session does not support ${needed} (it did not declare the capability at initialize), so ${request.method} cannot be ` +
        `forwarded to it.`,
    );
  }
  const server = [...origin.session.servers][0];
  if (!origin.call && !server) throw protocolError(ErrorCode.InvalidRequest, `The client session of this call has no open connection for ${request.method}.`);
  const asked = origin.call ? origin.call.channel.request(outgoing, signal) : server.request(outgoing, ResultSchema, { signal });
  // the client's error carries its SDK's "MCP error N:" prefix, which the child's SDK adds again: said once
  return asked.catch((err: unknown) => {
    throw err instanceof McpError ? protocolError(err.code, withoutCodePrefix(err.message), err.data) : err;
  });
}

/**
 * A 2026-07-28 client can be asked something only as the answer to a call of its own: that
 * revision has no server-to-client requests (a server asks by answering input_required).
 */
export function unreachableModernClient(method: string, server: string): McpError {
  return protocolError(
    ErrorCode.InvalidRequest,
    `The '${server}' server sent ${method} for a 2026-07-28 client outside any call of that client's. That protocol revision has no ` +
      "server-to-client requests (a server asks its client by answering one of its calls with input_required), so nobody was asked.",
  );
}

/**
 * A resource update reaches the sessions that subscribed to that URI in the child's own tenant,
 * unless another server is known to own the URI: a child's output is untrusted, and another
 * tenant's child (or a sibling server) naming a URI is no news about it.
 */
function resourceUpdated(sessions: SessionRegistry, changes: TenantChanges, tenant: ServedTenant, child: Child, uri: string): void {
  // unknown when a session subscribed without listing (the tenant's only resource server then owns it)
  const instance = tenant.instances.ownerOf(child);
  const owner = tenant.resourceOwners.get(uri) ?? tenant.catalog.templateOwner(uri);
  if (owner && owner !== (instance?.prototype ?? child)) return;
  const owners = instance ? ownSession(sessions, tenant, instance.session) : sessionsOf(sessions, tenant);
  // 2026 clients share their tenant's context: they hear an update meant for everyone, or for that context
  if (!instance || [...owners].some((s) => s.kind === "modern")) changes.publish(tenant, { kind: "resource", uri });
  for (const session of owners) {
    if (!session.subscriptions.has(uri)) continue;
    for (const server of session.servers) void server.sendResourceUpdated({ uri }).catch(() => undefined);
  }
}

export function childNotification(
  sessions: SessionRegistry,
  changes: TenantChanges,
  tenant: ServedTenant,
  child: Child,
  notification: Notification,
  log: Logger,
): void {
  if (notification.method === "notifications/resources/updated")
    // clients subscribed to the URI as published (an MCP App's under the child's prefix)
    return resourceUpdated(sessions, changes, tenant, child, publishedAppUri(child.prefix, String(notification.params?.uri ?? "")));
  if (notification.method !== "notifications/message") return;
  const origin = originOf(sessions, tenant, child, notification.params);
  const level = notification.params?.level as LoggingLevel;
  if (typeof origin === "string" || "refused" in origin) {
    // the child's words, bounded, as data: never the entry's own fields
    const data = JSON.stringify(notification.params?.data ?? null).slice(0, 2000);
    log.info("child log message with no session to deliver it to", {
      child: child.name,
      why: typeof origin === "string" ? origin : origin.refused,
      logLevel: String(level).slice(0, 20),
      data,
    });
    return;
  }
  const threshold = (origin.call?.caller ?? origin.session).logLevel;
  if (threshold && LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(threshold)) return;
  const out = { method: notification.method, params: stripSessionMeta(notification.params) } as ServerNotification;
  const send = origin.call ? origin.call.channel.notify(out) : Promise.all([...origin.session.servers].map((s) => s.notification(out)));
  void send.catch((err: unknown) => log.debug("log forward failed", { error: errorMessage(err) }));
}
