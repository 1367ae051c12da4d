// The hub: children, their merged catalog, client sessions, and the wiring between them.
import { randomBytes } from "node:crypto";
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
import { Child, LISTED_STATES, type ChildHooks } from "./child.js";
import type { HubConfig } from "./config.js";
import { RateLimits } from "./limits.js";
import { manifestKey, readManifest } from "./manifest.js";
import { HubMetrics } from "./metrics.js";
import { Router, type LocalTools } from "./router.js";
import { ClientSession, SessionRegistry } from "./sessions.js";

export const VERSION: string = JSON.parse(
  fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;

const CAPABILITY_FOR: Record<string, "sampling" | "elicitation" | "roots"> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

const LOG_LEVELS: LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

export class Hub {
  readonly startedAt = Date.now();
  readonly metrics = new HubMetrics();
  readonly limits: RateLimits;
  readonly children: Child[];
  readonly catalog: Catalog;
  readonly sessions: SessionRegistry;
  readonly router: Router;
  /** Children use this secret to call the hub's tools as one of its client sessions. */
  readonly internalToken = randomBytes(24).toString("hex");
  /** Set on SIGTERM (hub/replica.ts drain): not ready, no new sessions, calls in flight finish. */
  draining = false;
  private hubUrl = "";

  constructor(
    readonly config: HubConfig,
    readonly log: Logger,
    localTools?: (hub: Hub) => LocalTools,
  ) {
    this.limits = new RateLimits(config.rateLimits);
    this.metrics.describeReplica(config.replica, () => this.draining);
    const hooks: ChildHooks = {
      onListChanged: (child, what) => this.onListChanged(what),
      onRequest: (child, request, extra) => this.forwardChildRequest(child, request, extra),
      onNotification: (child, notification) => this.forwardChildNotification(child, notification),
      onRestart: (child) => this.metrics.childRestarts.inc({ server: child.name }),
    };
    const manifest = readManifest();
    const lazyByDefault = process.env.AGENTBOX_START !== "eager";
    this.children = Object.entries(config.mcpServers).map(([name, cfg]) => {
      const key = manifestKey(cfg);
      const recorded = key ? manifest[key] : undefined;
      const lazy = cfg.start === "lazy" || (cfg.start === undefined && lazyByDefault);
      return new Child(name, cfg, this.childEnv(), hooks, log.child({ child: name }), lazy ? recorded : undefined);
    });
    const local = localTools?.(this);
    this.catalog = new Catalog(this.children, new Set(local?.list().map((t) => t.name)));
    this.sessions = new SessionRegistry(config.sessionIdleMs, (session) => this.onSessionClosed(session));
    this.router = new Router({
      version: VERSION,
      children: this.children,
      catalog: this.catalog,
      limits: this.limits,
      metrics: this.metrics,
      log,
      localTools: local,
    });
  }

  private childEnv(): Record<string, string> {
    // a getter-backed object: the hub URL is known only once the HTTP server listens
    const env: Record<string, string> = {
      AGENTBOX_WORKSPACE: this.config.workspace,
      AGENTBOX_HUB_TOKEN: this.internalToken,
    };
    Object.defineProperty(env, "AGENTBOX_HUB_URL", { enumerable: true, get: () => this.hubUrl });
    return env;
  }

  /** Start every enabled child in parallel; resolves when each has come up or failed once. */
  async startChildren(hubUrl: string): Promise<void> {
    this.hubUrl = hubUrl;
    fs.mkdirSync(this.config.workspace, { recursive: true });
    // idle children (known from the manifest) start on their first call
    await Promise.all(this.children.filter((c) => c.state !== "idle").map((c) => c.start()));
    this.catalog.rebuild();
  }

  get ready(): boolean {
    return !this.draining && this.children.every((c) => LISTED_STATES.has(c.state) || c.state === "disabled");
  }

  newSession(id: string, kind: ClientSession["kind"], clientKey: string): ClientSession {
    this.metrics.sessionsOpened.inc({ transport: kind });
    this.metrics.sessionsActive.inc({ transport: kind });
    return this.sessions.add(new ClientSession(id, kind, clientKey));
  }

  implicitSession(clientKey: string): ClientSession {
    const existing = this.sessions.get(`implicit-${clientKey}`);
    return existing ?? this.newSession(`implicit-${clientKey}`, "implicit", clientKey);
  }

  createServer(session: ClientSession): Server {
    return this.router.createServer(session);
  }

  private onSessionClosed(session: ClientSession): void {
    this.metrics.sessionsActive.dec({ transport: session.kind });
    for (const child of this.children) void child.notify(SESSION_CLOSED_METHOD, { session: session.id });
  }

  private onListChanged(what: "tools" | "prompts" | "resources"): void {
    this.catalog.rebuild();
    for (const error of this.catalog.collisions) this.log.error(error);
    for (const session of this.sessions.all()) {
      for (const server of session.servers) {
        const send =
          what === "tools" ? server.sendToolListChanged() : what === "prompts" ? server.sendPromptListChanged() : server.sendResourceListChanged();
        void send.catch(() => undefined);
      }
    }
  }

  /** The session a child's request or notification belongs to, and the call it came from. */
  private originOf(child: Child, params: Record<string, unknown> | undefined) {
    const meta = params?._meta as Record<string, unknown> | undefined;
    const named = this.sessions.get(typeof meta?.[SESSION_META_KEY] === "string" ? (meta[SESSION_META_KEY] as string) : undefined);
    const candidates = named ? [named] : this.sessions.all();
    for (const session of candidates) {
      // the latest call to this child is the likeliest origin when the child did not say
      const calls = [...session.inflight].filter((c) => c.child === child);
      if (calls.length) return { session, call: calls[calls.length - 1] };
    }
    return named ? { session: named, call: undefined } : undefined;
  }

  private async forwardChildRequest(
    child: Child,
    request: Request,
    extra: RequestHandlerExtra<ClientRequest, ClientNotification>,
  ): Promise<Result> {
    const origin = this.originOf(child, request.params);
    if (!origin) {
      throw new McpError(ErrorCode.InvalidRequest, `No client session is waiting on the '${child.name}' server, so ${request.method} has nobody to ask.`);
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

  status() {
    return {
      name: "agentbox",
      version: VERSION,
      ...(this.config.replica ? { replica: this.config.replica } : {}),
      ...(this.draining ? { draining: true } : {}),
      uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
      ready: this.ready,
      sessions: this.sessions.size,
      workspace: this.config.workspace,
      servers: this.children.map((c) => ({
        name: c.name,
        prefix: c.prefix,
        transport: c.config.url ? "http" : "stdio",
        state: c.state,
        pid: c.pid ?? null,
        restarts: c.restarts,
        tools: this.catalog.toolCount(c),
        ...c.queueStats,
        ...(c.lastError && c.state !== "ready" ? { lastError: c.lastError } : {}),
      })),
    };
  }

  async stop(): Promise<void> {
    await this.sessions.closeAll();
    await Promise.allSettled(this.children.map((c) => c.stop()));
  }
}

function stripSessionMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params?._meta) return params;
  const { [SESSION_META_KEY]: _drop, ...meta } = params._meta as Record<string, unknown>;
  return { ...params, _meta: meta };
}
