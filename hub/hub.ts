// The hub: children, their merged catalog, client sessions, and the wiring between them.
import fs from "node:fs";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  McpError,
  ResultSchema,
  type ClientNotification,
  type ClientRequest,
  type LoggingLevel,
  type Notification,
  type Request,
  type Result,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage, type Logger } from "../servers/lib/log.js";
import { SESSION_CLOSED_METHOD, SESSION_META_KEY } from "../servers/lib/session-events.js";
import { Catalog } from "./catalog.js";
import { Child, LISTED_STATES, type ChildHooks, type ChildLaunch } from "./child.js";
import type { HubConfig } from "./config.js";
import { RateLimits } from "./limits.js";
import { manifestKey, readManifest } from "./manifest.js";
import { HubMetrics } from "./metrics.js";
import { detectIsolation, type Isolation } from "./isolation.js";
import { ProcessSweeper } from "./process-sweeper.js";
import { Router, type LocalTools } from "./router.js";
import { bindView, viewOf, type SessionView } from "./selection.js";
import { mergeDefaults } from "./selection-spec.js";
import { ClientSession, SessionRegistry } from "./sessions.js";
import { buildTenants, prepareTenant, tenantCommand, tenantEnv, type Tenant } from "./tenants.js";

export const VERSION: string = JSON.parse(
  fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;

const CAPABILITY_FOR: Record<string, "sampling" | "elicitation" | "roots"> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

const LOG_LEVELS: LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** A tenant with its own server instances and the catalog they make. */
export interface ServedTenant extends Tenant {
  readonly children: Child[];
  readonly catalog: Catalog;
  /** Which child owns a resource URI, as last seen in one of this tenant's resources/list. */
  readonly resourceOwners: Map<string, Child>;
}

export class Hub {
  readonly startedAt = Date.now();
  readonly metrics = new HubMetrics();
  readonly limits: RateLimits;
  readonly isolation: Isolation;
  readonly tenants: ServedTenant[];
  readonly sessions: SessionRegistry;
  readonly router: Router;
  readonly local?: LocalTools;
  private readonly sweeper: ProcessSweeper;
  /** Set on SIGTERM (hub/replica.ts drain): not ready, no new sessions, calls in flight finish. */
  draining = false;
  private hubUrl = "";

  constructor(
    readonly config: HubConfig,
    readonly log: Logger,
    localTools?: (hub: Hub) => LocalTools,
    isolation: Isolation = detectIsolation(),
  ) {
    this.isolation = isolation;
    this.limits = new RateLimits(config.rateLimits);
    this.metrics.describeReplica(config.replica, () => this.draining);
    const hooks: ChildHooks = {
      onListChanged: (child, what) => this.onListChanged(child, what),
      onRequest: (child, request, extra) => this.forwardChildRequest(child, request, extra),
      onNotification: (child, notification) => this.forwardChildNotification(child, notification),
      onRestart: (child) => this.metrics.childRestarts.inc({ server: child.name }),
    };
    this.local = localTools?.(this);
    const reserved = new Set(this.local?.list().map((t) => t.name));
    const manifest = readManifest();
    const lazyByDefault = process.env.AGENTBOX_START !== "eager";
    const secrets = config.tenants.flatMap((t) => (t.apiKey ? [t.apiKey] : []));
    this.tenants = buildTenants(config, isolation).map((tenant) => {
      const children = Object.entries(config.mcpServers).map(([name, cfg]) => {
        const key = manifestKey(cfg, name);
        const recorded = key ? manifest[key] : undefined;
        const lazy = cfg.start === "lazy" || (cfg.start === undefined && lazyByDefault);
        const childLog = log.child({ child: name, ...(config.tenants.length > 1 ? { tenant: tenant.name } : {}) });
        return new Child(name, cfg, this.launchFor(tenant, cfg.prefix ?? name, secrets), hooks, childLog, lazy ? recorded : undefined);
      });
      return { ...tenant, children, catalog: new Catalog(children, reserved), resourceOwners: new Map() };
    });
    this.sessions = new SessionRegistry(config.sessionIdleMs, (session) => this.onSessionClosed(session));
    // a minute without a request counts as idle (sooner when sessions expire sooner)
    this.metrics.countSessions(() => this.sessions.all(), Math.min(60_000, config.sessionIdleMs / 2));
    this.sweeper = new ProcessSweeper(this.tenants, this.sessions, log, (tenant) => (command, args) => tenantCommand(tenant, this.isolation, command, args));
    this.router = new Router({ version: VERSION, limits: this.limits, metrics: this.metrics, log, localTools: this.local });
  }

  private launchFor(tenant: Tenant, prefix: string, secrets: string[]): ChildLaunch {
    const env = tenantEnv(tenant, secrets);
    // a getter: the hub's URL is known only once the HTTP server listens
    Object.defineProperty(env, "AGENTBOX_HUB_URL", { enumerable: true, get: () => this.hubUrl });
    return {
      env,
      cwd: tenant.workspace,
      command: (command, args) => tenantCommand(tenant, this.isolation, command, args),
      maxMessageBytes: this.config.maxMessageBytes,
    };
  }

  /** The tenant of a request without an API key (the hub then has exactly one, keyless). */
  get keylessTenant(): ServedTenant | undefined {
    return this.tenants.length === 1 && !this.tenants[0].keyDigest ? this.tenants[0] : undefined;
  }

  get children(): Child[] {
    return this.tenants.flatMap((t) => t.children);
  }

  /** Prepare every tenant's folders and start every enabled child in parallel. */
  async startChildren(hubUrl: string): Promise<void> {
    this.hubUrl = hubUrl;
    for (const tenant of this.tenants) prepareTenant(tenant, this.config, (msg, fields) => this.log.warn(msg, { tenant: tenant.name, ...fields }));
    if (this.isolation.mode === "uid") process.umask(0o077);
    // idle children (known from the manifest) start on their first call
    await Promise.all(this.children.filter((c) => c.state !== "idle").map((c) => c.start()));
    for (const tenant of this.tenants) tenant.catalog.rebuild();
    this.sweeper.start();
  }

  /** Name collisions in the catalog (the same for every tenant: they share one configuration). */
  get collisions(): string[] {
    return this.tenants[0]?.catalog.collisions ?? [];
  }

  get ready(): boolean {
    return !this.draining && this.children.every((c) => LISTED_STATES.has(c.state) || c.state === "disabled");
  }

  newSession(id: string, kind: ClientSession["kind"], tenant: ServedTenant, clientKey: string): ClientSession {
    this.metrics.sessionsOpened.inc({ transport: kind });
    return this.sessions.add(new ClientSession(id, kind, tenant, clientKey));
  }

  /** The one session all sessionless requests of a client share (per tenant and address). */
  implicitSession(tenant: ServedTenant, clientKey: string): ClientSession {
    const id = `implicit-${tenant.name}-${clientKey}`;
    return this.sessions.get(id) ?? this.newSession(id, "implicit", tenant, clientKey);
  }

  /** @param view a per-request selection (plain JSON); else the session's own, fixed at initialize */
  createServer(session: ClientSession, view?: SessionView): Server {
    return this.router.createServer(session, view ?? viewOf(session) ?? bindView(session, this.defaultView(session.tenant)));
  }

  /** What the configured defaults (global, then the tenant's) leave a session; its URL may narrow it. */
  defaultView(tenant: ServedTenant): SessionView {
    return this.router.unrestricted(tenant).narrow(mergeDefaults(this.config.selection, tenant.selection), "config");
  }

  private onSessionClosed(session: ClientSession): void {
    for (const child of session.tenant.children) void child.notify(SESSION_CLOSED_METHOD, { session: session.id });
    this.sweeper.sessionEnded(session);
  }

  private tenantOf(child: Child): ServedTenant {
    return this.tenants.find((t) => t.children.includes(child))!;
  }

  private onListChanged(child: Child, what: "tools" | "prompts" | "resources"): void {
    const tenant = this.tenantOf(child);
    tenant.catalog.rebuild();
    for (const error of tenant.catalog.collisions) this.log.error(error);
    for (const session of this.sessions.all()) {
      if (session.tenant !== tenant) continue;
      for (const server of session.servers) {
        const send =
          what === "tools" ? server.sendToolListChanged() : what === "prompts" ? server.sendPromptListChanged() : server.sendResourceListChanged();
        void send.catch(() => undefined);
      }
    }
  }

  /**
   * The session a child's request or notification belongs to, and the call it came from: the
   * session the child names (our servers always do), else the only call in flight to that child.
   * Anything else would be a guess, and a guess can hand one client's question to another.
   */
  private originOf(child: Child, params: Record<string, unknown> | undefined) {
    const meta = params?._meta as Record<string, unknown> | undefined;
    const named = this.sessions.get(typeof meta?.[SESSION_META_KEY] === "string" ? (meta[SESSION_META_KEY] as string) : undefined);
    if (named && named.tenant.children.includes(child)) {
      const calls = [...named.inflight].filter((c) => c.child === child);
      return { session: named, call: calls[calls.length - 1] };
    }
    const calls = this.sessions.all().flatMap((session) => [...session.inflight].filter((c) => c.child === child).map((call) => ({ session, call })));
    return calls.length === 1 ? calls[0] : undefined;
  }

  private async forwardChildRequest(
    child: Child,
    request: Request,
    extra: RequestHandlerExtra<ClientRequest, ClientNotification>,
  ): Promise<Result> {
    const origin = this.originOf(child, request.params);
    if (!origin) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `The hub cannot tell which client session ${request.method} from the '${child.name}' server belongs to (it names none in _meta["${SESSION_META_KEY}"] and ` +
          "not exactly one call is in flight to it), so it asks nobody rather than the wrong client.",
      );
    }
    const needed = CAPABILITY_FOR[request.method];
    if (needed && !origin.session.clientCapabilities[needed]) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `The client of this session does not support ${needed} (it did not declare the capability at initialize), so ${request.method} cannot be forwarded to it.`,
      );
    }
    const params = stripSessionMeta(request.params);
    const outgoing = { method: request.method, params } as never;
    if (origin.call) return origin.call.extra.sendRequest(outgoing, ResultSchema, { signal: extra.signal });
    const server = [...origin.session.servers][0];
    if (!server) throw new McpError(ErrorCode.InvalidRequest, `The client session of this call has no open connection for ${request.method}.`);
    return server.request(outgoing, ResultSchema, { signal: extra.signal });
  }

  private forwardChildNotification(child: Child, notification: Notification): void {
    if (notification.method === "notifications/resources/updated") {
      const uri = String(notification.params?.uri ?? "");
      for (const session of this.sessions.all()) {
        if (!session.subscriptions.has(uri)) continue;
        for (const server of session.servers) void server.sendResourceUpdated({ uri }).catch(() => undefined);
      }
      return;
    }
    if (notification.method !== "notifications/message") return;
    const origin = this.originOf(child, notification.params);
    const level = notification.params?.level as LoggingLevel;
    if (!origin) {
      this.log.info("child log message with no session to deliver it to", { child: child.name, level, data: notification.params?.data });
      return;
    }
    const threshold = origin.session.logLevel;
    if (threshold && LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(threshold)) return;
    const out = { method: notification.method, params: stripSessionMeta(notification.params) } as never;
    const send = origin.call
      ? origin.call.extra.sendNotification(out)
      : Promise.all([...origin.session.servers].map((s) => s.notification(out)));
    void send.catch((err: unknown) => this.log.debug("log forward failed", { error: errorMessage(err) }));
  }

  /** What GET / and hub_status show: one tenant's view when asked by a tenant, else the whole hub. */
  status(tenant?: ServedTenant) {
    const tenants = tenant ? [tenant] : this.tenants;
    return {
      name: "agentbox",
      version: VERSION,
      ...(this.config.replica ? { replica: this.config.replica } : {}),
      ...(this.draining ? { draining: true } : {}),
      uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
      ready: this.ready,
      sessions: tenant ? this.sessions.all().filter((s) => s.tenant === tenant).length : this.sessions.size,
      workspace: tenant?.workspace ?? this.config.workspace,
      isolation: { mode: this.isolation.mode, tenants: this.tenants.length, summary: this.isolation.summary },
      servers: tenants.flatMap((t) => t.children.map((c) => ({
        ...(this.tenants.length > 1 ? { tenant: t.name } : {}),
        name: c.name,
        prefix: c.prefix,
        transport: c.config.url ? "http" : "stdio",
        state: c.state,
        pid: c.pid ?? null,
        restarts: c.restarts,
        tools: t.catalog.toolCount(c),
        ...c.queueStats,
        ...(c.lastError && c.state !== "ready" ? { lastError: c.lastError } : {}),
      }))),
    };
  }

  async stop(): Promise<void> {
    this.sweeper.stop();
    await this.sessions.closeAll();
    await Promise.allSettled(this.children.map((c) => c.stop()));
  }
}

function stripSessionMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params?._meta) return params;
  const { [SESSION_META_KEY]: _drop, ...meta } = params._meta as Record<string, unknown>;
  return { ...params, _meta: meta };
}
