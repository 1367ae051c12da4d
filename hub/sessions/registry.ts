// Client sessions, whatever carries them (Streamable HTTP, legacy SSE, plain JSON without a
// session, code calling back, stdio): who the client is, what it may see, what it is running.
// What a transport needs to keep (its SDK transport object, its streams) stays in its endpoint
// (hub/http/endpoints/). Sessions idle past their expiry are closed, and every child is told so it can
// free the session's browser contexts, terminals and interpreters.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type {
  CallToolResult,
  ClientCapabilities,
  Implementation,
  LoggingLevel,
  Result,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { EventEmitter, once } from "node:events";
import type { CallCancellation, Cancellation } from "../protocol/cancellation.js";
import { CallTable } from "../protocol/call-table.js";
import type { Clock, Timer } from "../protocol/clock.js";
import type { Child } from "../children/child.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { identified } from "../tenants/tenants.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";
import { sessionLabel } from "../observability/session-label.js";
import type { SessionView } from "../catalog/selection.js";
import type { RequestBase } from "../previews/public-address.js";

/**
 * "modern" is a tenant's one default context for 2026-07-28 clients (hub/modern/endpoint.ts):
 * that revision has no sessions, so what a client's calls leave (terminals, interpreters, pages)
 * lives here for as long as the hub runs. "context" is one more context a client minted a handle for
 * (hub/sessions/contexts.ts), which any client of its tenant may name in a call's `context` argument.
 */
export const SESSION_KINDS = ["streamable", "sse", "implicit", "stdio", "modern", "context"] as const;
export type SessionKind = (typeof SESSION_KINDS)[number];

/**
 * The sessions whose id a client holds and names them by, so it is a credential (with the tenant's
 * key): the others' ids never leave the hub but to its children (an implicit session is its client's
 * address, a tenant's modern context is the hub's own, stdio has one client).
 */
const CLIENT_HELD_IDS: ReadonlySet<SessionKind> = new Set(["streamable", "sse", "context"]);

/** The revision a "modern" context's clients speak (the hub serves it with the SDK v2's createMcpHandler). */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";

/** How a call in flight reaches its client: through an SDK server's request context, or a direct reply. */
export interface CallChannel {
  readonly signal: Cancellation;
  /** The JSON-RPC id of the client's request, for its trace span; a call resumed across 2026 rounds has none of its own. */
  readonly requestId?: string | number;
  /** A notification about this call (progress, a log line), delivered with the call's reply. */
  notify(notification: ServerNotification): Promise<void>;
  /**
   * The least severe log line the call's client wants, when its request says (a 2026-07-28
   * request's envelope; undefined there: none): a 2026 server sends log lines only at a level
   * its request names (hub/sessions/forward.ts). Without this, its session's (logging/setLevel).
   */
  logLevel?(): LoggingLevel | undefined;
  /**
   * A request to the client made while the call runs (sampling, elicitation, roots); `inputKey` is
   * the child's hint for the key a 2026-07-28 client sees it under, `asker` the child that asks
   * (a 2026 round carries all it asks in one go: hub/sessions/pending-call.ts).
   */
  request(request: ServerRequest, signal: AbortSignal, inputKey?: string, asker?: Child): Promise<Result>;
  /** Run `action` once this call's reply has been written (closing the session sooner would cut the reply off). */
  afterReply(action: () => void): void;
  /** Whether no client waits on the reply now (the call runs as a task): its child gets until maxTotalTimeoutMs, not timeoutMs without progress. */
  detached?(): boolean;
  /** The task that runs this call, once a task holds it (hub/tasks/store.ts): the audit trail names it. */
  taskId?(): string | undefined;
  /** The address the call's request reached the hub by, for the links a hub tool makes (none: the hub's own address). */
  readonly requestBase?: RequestBase;
}

/** A call the direct path started that the session's SDK server may take over (./handed-call.ts). */
export interface JoinableCall {
  /** Whether the SDK's tools/call has taken it over. */
  readonly adopted: boolean;
  /** The SDK's tools/call for its request takes it over with its own channel: the call's result, or undefined when it is not to be joined. */
  join(to: CallChannel): Promise<CallToolResult> | undefined;
}

export interface InflightCall {
  /**
   * The hub's name for the call, sent to its child in _meta["agentbox/call"]: what the child sends
   * during the call echoes it, so it reaches this call's client (hub/sessions/child-requests.ts).
   */
  readonly id: string;
  /** Its key among its session's calls in flight: a number, which a table finds faster than the id. */
  readonly seq: number;
  child: Child;
  tool: string;
  channel: CallChannel;
  /** The session whose client made the call, when it runs in another context (a `context` argument): the one a child's question goes to. */
  caller?: ClientSession;
  /** Whose turn it runs in, should its server take turns (hub/children/queue.ts; ./child-requests.ts turnOf). */
  turn?: string;
  /** Set once its server's queue let it through: only then can what the server asks be this call's. */
  started?: boolean;
  /**
   * Set when its child runs it as a task of the child's own (hub/children/child-task.ts), with the
   * task's id once the child created it: then only what the child relates to that task is the call's.
   */
  childTask?: { id?: string };
}

/** A call about to be forwarded; its id random, so no child can name a call it was not sent. */
let inflightCalls = 0;

export function inflightCall(child: Child, tool: string, channel: CallChannel, caller?: ClientSession): InflightCall {
  return { id: randomUUID(), seq: ++inflightCalls, child, tool, channel, ...(caller ? { caller } : {}) };
}

/** A session's calls in flight, which tells a waiter when one ends (a draining hub waits on that). */
export class InflightCalls {
  private readonly calls = new CallTable<InflightCall>();
  private readonly ends = new EventEmitter();

  get size(): number {
    return this.calls.size;
  }

  add(call: InflightCall): void {
    this.calls.set(call.seq, call);
  }

  delete(call: InflightCall): boolean {
    const removed = this.calls.delete(call.seq);
    if (removed) this.ends.emit("end");
    return removed;
  }

  [Symbol.iterator](): Iterator<InflightCall> {
    return this.calls[Symbol.iterator]();
  }

  /** Settles when one of these calls ends, or when `signal` aborts, whichever comes first. */
  async nextEnd(signal: AbortSignal): Promise<void> {
    // once() rejects only on the abort, which is an expected way for the wait to end
    await once(this.ends, "end", { signal }).catch(() => undefined);
  }
}

export class ClientSession {
  readonly createdAt: number;
  lastActivity: number;
  readonly inflight = new InflightCalls();
  readonly subscriptions = new Set<string>();
  logLevel?: LoggingLevel;
  /** What the client declared at initialize; none for plain JSON clients. */
  clientCapabilities: ClientCapabilities = {};
  /** The revision its initialize reply settled on (hub/sessions/server.ts); none without a handshake (plain JSON, a 2026 context). */
  negotiatedVersion?: string;
  /** Who the client said it is at initialize (its own words: shown, never trusted). */
  clientInfo?: Implementation;
  /** SDK servers connected for this session: one for stateful transports, one per request for implicit sessions. */
  readonly servers = new Set<Server>();
  /** The children this session has been named to (hub/sessions/forward.ts): only they can hold anything of it, so only they are told it ended. */
  readonly reached = new Set<Child>();
  /** Tool calls answered without an SDK server (hub/http/endpoints/direct-call.ts), by request id (requestIdKey), so a cancellation finds them. */
  readonly directCalls = new CallTable<CallCancellation, string | number>();
  /** Those of them that the session's SDK server may take over (./handed-call.ts), by the same key. */
  readonly handedCalls = new CallTable<JoinableCall, string | number>();
  closed = false;

  /**
   * The credential code run for this session uses to call tools as this session, and nothing
   * else: random, known only to the hub and to this tenant's servers (never derived from a secret).
   */
  readonly token = randomBytes(32).toString("base64url");
  private shownAs?: string;

  /** Its label (hub/observability/session-label.ts), hashed once: the audit trail names the session on every call. */
  get label(): string {
    return (this.shownAs ??= sessionLabel(this.id));
  }

  constructor(
    readonly id: string,
    readonly kind: SessionKind,
    readonly tenant: ServedTenant,
    /** Who the client is: a hash of its API key or its remote address. */
    readonly clientKey: string,
    /**
     * What this session may see and call, fixed when it starts (hub/catalog/selection.ts), but for
     * a person's sign-in: that follows the token of their latest request (a step-up widens it).
     */
    public view: SessionView,
    /** The hub's time: how long the session has been idle decides when it expires or makes room (./admission.ts). */
    private readonly clock: Clock,
  ) {
    this.createdAt = this.lastActivity = clock.now();
  }

  /** Whose rate-limit budget this session spends: its tenant's when it has a key, else its own. */
  get budget(): string {
    return identified(this.tenant) ? `tenant:${this.tenant.name}` : `session:${this.id}`;
  }

  touch(): void {
    this.lastActivity = this.clock.now();
  }

  /** How long the session has been open. */
  get ageMs(): number {
    return this.clock.now() - this.createdAt;
  }

  /** How long since the client last sent anything for it, calls in flight or not (hub_session shows it). */
  get quietMs(): number {
    return this.clock.now() - this.lastActivity;
  }

  /** How long it has been idle: not at all while a call runs. */
  get idleMs(): number {
    return this.inflight.size > 0 || this.directCalls.size > 0 ? 0 : this.quietMs;
  }

  /** Lives while the hub runs: never closed for idling, never closed to make room for another. */
  get lasting(): boolean {
    return this.kind === "stdio" || this.kind === "modern";
  }

  /**
   * Whose sessions this one is counted among: its tenant's, and, on a keyless hub, its client
   * address's too (a tenant's modern context: its tenant's, but under no cap, see SessionRegistry.capped).
   */
  get principals(): string[] {
    const tenant = tenantPrincipal(this.tenant);
    return identified(this.tenant) || this.lasting ? [tenant] : [tenant, clientPrincipal(this.tenant, this.clientKey)];
  }
}

/**
 * Why a session closed (its audit line says): its client closed it, it idled out, its ttl ran out, it
 * was reclaimed at a cap, hub_end_session ended it, its initialize was refused, the hub stopped.
 */
export type CloseReason = "client" | "idle" | "ttl" | "reclaimed" | "ended" | "refused" | "hub_stopping";

/** The principals sessions count against (hub/sessions/admission.ts): a tenant, and a client of a tenant. */
export const tenantPrincipal = (tenant: ServedTenant) => `tenant:${tenant.name}`;
export const clientPrincipal = (tenant: ServedTenant, clientKey: string) => `client:${tenant.name}:${clientKey}`;

export class SessionRegistry {
  private readonly sessions = new Map<string, ClientSession>();
  private readonly byToken = new Map<string, ClientSession>();
  /** The open sessions of each tenant and client (ClientSession.principals), so caps are checked without a scan. */
  private readonly byPrincipal = new Map<string, Set<ClientSession>>();
  /** The principals with an open modern context (one at most each). */
  private readonly modern = new Set<string>();
  private readonly sweeper: Timer;

  constructor(
    private readonly idleMs: number,
    private readonly onClosed: (session: ClientSession, reason: CloseReason) => void,
    /** Where the sessions' credentials are known, so that nothing the hub writes down shows them (hub/observability/minted-secrets.ts). */
    private readonly secrets: MintedSecrets,
    /** When sessions idle out: the sessions' own clock (ClientSession). */
    clock: Clock,
  ) {
    this.sweeper = clock.every(Math.max(1000, Math.min(idleMs / 2, 60_000)), () => this.sweep());
  }

  get size(): number {
    return this.sessions.size;
  }

  all(): ClientSession[] {
    return [...this.sessions.values()];
  }

  get(id: string | undefined): ClientSession | undefined {
    return id ? this.sessions.get(id) : undefined;
  }

  add(session: ClientSession): ClientSession {
    this.sessions.set(session.id, session);
    this.byToken.set(tokenDigest(session.token), session);
    this.secrets.remember(session, session.token);
    // the id a client holds (Mcp-Session-Id, a handle's start) is shown by the label the audit trail and hub_sessions use
    if (CLIENT_HELD_IDS.has(session.kind))
      this.secrets.remember(session, session.id.slice(session.id.lastIndexOf(".") + 1), `[session ${sessionLabel(session.id)}]`);
    for (const principal of session.principals) {
      const group = this.byPrincipal.get(principal);
      if (group) group.add(session);
      else this.byPrincipal.set(principal, new Set([session]));
      if (session.kind === "modern") this.modern.add(principal);
    }
    return session;
  }

  /**
   * How many of a principal's sessions its cap counts: a tenant's modern context is the hub's, not
   * a client's, so it takes no client's room (at most one per tenant, so no scan is needed).
   */
  capped(principal: string): number {
    const open = this.of(principal);
    return open.size - (this.modern.has(principal) ? 1 : 0);
  }

  /** The open sessions of a principal (tenantPrincipal() or clientPrincipal()). */
  of(principal: string): ReadonlySet<ClientSession> {
    return this.byPrincipal.get(principal) ?? NONE;
  }

  /** The session a callback token belongs to (looked up by digest, so no timing tells a prefix). */
  withToken(token: string): ClientSession | undefined {
    return this.byToken.get(tokenDigest(token));
  }

  /** Close a session: its calls are cancelled, its servers (and with them their transports) closed. */
  async close(id: string, reason: CloseReason = "client"): Promise<void> {
    const session = this.sessions.get(id);
    if (!session || session.closed) return;
    session.closed = true;
    this.sessions.delete(id);
    this.byToken.delete(tokenDigest(session.token));
    this.secrets.forget(session);
    for (const principal of session.principals) {
      const group = this.byPrincipal.get(principal);
      group?.delete(session);
      if (session.kind === "modern") this.modern.delete(principal);
      if (group?.size === 0) this.byPrincipal.delete(principal);
    }
    for (const call of session.directCalls.values()) call.abort(SESSION_CLOSED);
    await Promise.allSettled([...session.servers].map((s) => s.close()));
    this.onClosed(session, reason);
  }

  async closeAll(): Promise<void> {
    this.sweeper.cancel();
    await Promise.allSettled(this.all().map((s) => this.close(s.id, "hub_stopping")));
  }

  private sweep(): void {
    for (const session of this.sessions.values()) {
      if (!session.lasting && session.idleMs > this.idleMs) void this.close(session.id, "idle");
    }
  }
}

const NONE: ReadonlySet<ClientSession> = new Set();

/** The reason a direct call's signal carries when its session closed under it. */
export const SESSION_CLOSED = "session closed";

const tokenDigest = (token: string) => createHash("sha256").update(token).digest("base64");

/** The SDK's names for the two families of revisions (getProtocolEra() on a v2 client). */
export const ERAS = ["modern", "legacy"] as const;

/** The era a session speaks, and the revision it settled on. */
export function eraOf(session: ClientSession): { era: (typeof ERAS)[number]; protocolVersion: string | null } {
  // a minted context speaks the era of the client that minted it (hub/sessions/contexts.ts)
  if (session.kind === "modern" || session.negotiatedVersion === MODERN_PROTOCOL_VERSION) return { era: "modern", protocolVersion: MODERN_PROTOCOL_VERSION };
  return { era: "legacy", protocolVersion: session.negotiatedVersion ?? null };
}
