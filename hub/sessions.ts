// Client sessions: one SDK Server per session, whatever the transport (Streamable HTTP, legacy
// SSE, plain JSON clients without a session, stdio). Sessions idle past their expiry are closed,
// and every child is told so it can free the session's browser contexts, terminals, interpreters.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ClientCapabilities, LoggingLevel, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { createHash, randomBytes } from "node:crypto";
import type { Child } from "./child.js";
import type { ServedTenant } from "./hub.js";

export type SessionKind = "streamable" | "sse" | "implicit" | "stdio";

export interface InflightCall {
  child: Child;
  tool: string;
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
}

export class ClientSession {
  readonly createdAt = Date.now();
  lastActivity = Date.now();
  readonly inflight = new Set<InflightCall>();
  readonly subscriptions = new Set<string>();
  logLevel?: LoggingLevel;
  /** What the client declared at initialize; none for plain JSON clients. */
  clientCapabilities: ClientCapabilities = {};
  /** Servers connected for this session: one for stateful transports, one per request for implicit sessions. */
  readonly servers = new Set<Server>();
  transport?: Transport;
  /**
   * A server of the session's own for requests outside its transport (plain JSON calls of an
   * implicit session, code calling tools): answered directly, in an id space of their own.
   */
  lane?: Promise<import("./session-transport.js").SessionTransport>;
  closed = false;

  /**
   * The credential code run for this session uses to call tools as this session, and nothing
   * else: random, known only to the hub and to this tenant's servers (never derived from a secret).
   */
  readonly token = randomBytes(32).toString("base64url");

  constructor(
    readonly id: string,
    readonly kind: SessionKind,
    readonly tenant: ServedTenant,
    /** Who the client is: a hash of its API key or its remote address. */
    readonly clientKey: string,
  ) {}

  /** Whose rate-limit budget this session spends: its tenant's when it has a key, else its own. */
  get budget(): string {
    return this.tenant.keyDigest ? `tenant:${this.tenant.name}` : `session:${this.id}`;
  }

  touch(): void {
    this.lastActivity = Date.now();
  }

  get idleMs(): number {
    return this.inflight.size > 0 ? 0 : Date.now() - this.lastActivity;
  }
}

export class SessionRegistry {
  private readonly sessions = new Map<string, ClientSession>();
  private readonly byToken = new Map<string, ClientSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly idleMs: number,
    private readonly onClosed: (session: ClientSession) => void,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(idleMs / 2, 60_000)));
    this.sweeper.unref();
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
    return session;
  }

  /** The session a callback token belongs to (looked up by digest, so no timing tells a prefix). */
  withToken(token: string): ClientSession | undefined {
    return this.byToken.get(tokenDigest(token));
  }

  async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session || session.closed) return;
    session.closed = true;
    this.sessions.delete(id);
    this.byToken.delete(tokenDigest(session.token));
    await Promise.allSettled([...session.servers].map((s) => s.close()));
    await session.transport?.close().catch(() => undefined);
    this.onClosed(session);
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.allSettled(this.all().map((s) => this.close(s.id)));
  }

  private sweep(): void {
    for (const session of this.sessions.values()) {
      if (session.kind !== "stdio" && session.idleMs > this.idleMs) void this.close(session.id);
    }
  }
}

const tokenDigest = (token: string) => createHash("sha256").update(token).digest("base64");
