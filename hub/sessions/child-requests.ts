// What a child sends the hub's clients unasked: requests (sampling, elicitation, roots) and
// notifications (log lines, resource updates). Each goes to the session it belongs to, on the
// call it came from when there is one, and to nobody when the hub cannot tell whose it is.
import {
  ErrorCode,
  McpError,
  ResultSchema,
  type LoggingLevel,
  type Notification,
  type Request,
  type Result,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { INPUT_KEY_META_KEY, SESSION_META_KEY } from "../../servers/lib/session-events.js";
import type { Child } from "../children/child.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import type { TenantChanges } from "./changes.js";
import { tenantPrincipal, type ClientSession, type SessionRegistry } from "./registry.js";

/** The client capability each request a child may send needs. */
export const CAPABILITY_FOR: Record<string, "sampling" | "elicitation" | "roots"> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

/** The log levels, least severe first. */
export const LOG_LEVELS: LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/**
 * The session a child's request or notification belongs to, and the call it came from: the
 * session a per-session instance serves (whatever it names), else the session the child names (our
 * servers always do), else the only call in flight to that child.
 * Anything else would be a guess, and a guess can hand one client's question to another.
 */
function originOf(sessions: SessionRegistry, tenant: ServedTenant, child: Child, params: Record<string, unknown> | undefined) {
  const owner = tenant.instances.ownerOf(child);
  if (owner) {
    // its calls are registered under the configured server (hub/sessions/tool-calls.ts)
    const [session] = ownSession(sessions, tenant, owner.session);
    if (!session) return undefined;
    const calls = [...session.inflight].filter((c) => c.child === owner.prototype);
    return { session, call: calls[calls.length - 1] };
  }
  const meta = params?._meta as Record<string, unknown> | undefined;
  const named = sessions.get(typeof meta?.[SESSION_META_KEY] === "string" ? (meta[SESSION_META_KEY] as string) : undefined);
  if (named && named.tenant === tenant) {
    const calls = [...named.inflight].filter((c) => c.child === child);
    return { session: named, call: calls[calls.length - 1] };
  }
  const calls = [...sessionsOf(sessions, tenant)].flatMap((session) =>
    [...session.inflight].filter((c) => c.child === child).map((call) => ({ session, call })),
  );
  return calls.length === 1 ? calls[0] : undefined;
}

/** The sessions a child of this tenant may reach: its tenant's, never another's (and however many those have, none of theirs is looked at). */
function sessionsOf(sessions: SessionRegistry, tenant: ServedTenant): ReadonlySet<ClientSession> {
  return sessions.of(tenantPrincipal(tenant));
}

/** A per-session instance's session, while it is open: an instance reaches nobody else. */
function ownSession(sessions: SessionRegistry, tenant: ServedTenant, id: string): ClientSession[] {
  const session = sessions.get(id);
  return session?.tenant === tenant ? [session] : [];
}

/** What a client gets of a child's params: without the hub's own keys (the session it named, its input-key hint). */
function stripSessionMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params?._meta) return params;
  const { [SESSION_META_KEY]: _session, [INPUT_KEY_META_KEY]: _inputKey, ...meta } = params._meta as Record<string, unknown>;
  return { ...params, _meta: meta };
}

export async function childRequest(sessions: SessionRegistry, tenant: ServedTenant, child: Child, request: Request, signal: AbortSignal): Promise<Result> {
  const origin = originOf(sessions, tenant, child, request.params);
  if (!origin) {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `The hub cannot tell which client session ${request.method} from the '${child.name}' server belongs to ` +
        `(it names none in _meta["${SESSION_META_KEY}"] and ` +
        "not exactly one call is in flight to it), so it asks nobody rather than the wrong client.",
    );
  }
  const outgoing = { method: request.method, params: stripSessionMeta(request.params) } as ServerRequest;
  // a call run in another context (hub/sessions/contexts.ts) asks the client that made it
  const asker = origin.call?.caller ?? origin.session;
  // a 2026-07-28 client is asked only through the call that asks (hub/sessions/input-required.ts), which checks its capabilities
  if (asker.kind === "modern") {
    if (!origin.call) throw unreachableModernClient(request.method, child.name);
    const hint = (request.params?._meta as Record<string, unknown> | undefined)?.[INPUT_KEY_META_KEY];
    return origin.call.channel.request(outgoing, signal, typeof hint === "string" ? hint : undefined);
  }
  const needed = CAPABILITY_FOR[request.method];
  if (needed && !asker.clientCapabilities[needed]) {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `The client of this session does not support ${needed} (it did not declare the capability at initialize), so ${request.method} cannot be ` +
        `forwarded to it.`,
    );
  }
  if (origin.call) return origin.call.channel.request(outgoing, signal);
  const server = [...origin.session.servers][0];
  if (!server) throw new McpError(ErrorCode.InvalidRequest, `The client session of this call has no open connection for ${request.method}.`);
  return server.request(outgoing, ResultSchema, { signal });
}

/**
 * A 2026-07-28 client can be asked something only as the answer to a call of its own: that
 * revision has no server-to-client requests (a server asks by answering input_required).
 */
export function unreachableModernClient(method: string, server: string): McpError {
  return new McpError(
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
    return resourceUpdated(sessions, changes, tenant, child, String(notification.params?.uri ?? ""));
  if (notification.method !== "notifications/message") return;
  const origin = originOf(sessions, tenant, child, notification.params);
  const level = notification.params?.level as LoggingLevel;
  if (!origin) {
    // the child's words, bounded, as data: never the entry's own fields
    const data = JSON.stringify(notification.params?.data ?? null).slice(0, 2000);
    log.info("child log message with no session to deliver it to", { child: child.name, logLevel: String(level).slice(0, 20), data });
    return;
  }
  const threshold = (origin.call?.caller ?? origin.session).logLevel;
  if (threshold && LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(threshold)) return;
  const out = { method: notification.method, params: stripSessionMeta(notification.params) } as ServerNotification;
  const send = origin.call ? origin.call.channel.notify(out) : Promise.all([...origin.session.servers].map((s) => s.notification(out)));
  void send.catch((err: unknown) => log.debug("log forward failed", { error: errorMessage(err) }));
}
