// The hub: children, their merged catalog, client sessions, and the wiring between them.
import fs from "node:fs";
import type { Logger } from "../servers/lib/log.js";
import { SESSION_CLOSED_METHOD } from "../servers/lib/session-events.js";
import { RECORD_ENV } from "../servers/lib/recording-names.js";
import { Catalog } from "./catalog/catalog.js";
import { childNotification, childRequest } from "./sessions/child-requests.js";
import { resubscribe } from "./sessions/resubscribe.js";
import { Child, LISTED_STATES, type ChildHooks, type ChildLaunch } from "./children/child.js";
import type { HubConfig } from "./config/config.js";
import { EventBudget } from "./http/event-store.js";
import { RateLimits } from "./sessions/rate-limits.js";
import { manifestKey, offersOf, readManifest } from "./children/manifest.js";
import { SessionInstances } from "./children/session-instances.js";
import { QueueBudget } from "./children/queue-budget.js";
import type { QueueSettings } from "./children/queue.js";
import { HubMetrics } from "./observability/metrics.js";
import { MintedSecrets } from "./observability/minted-secrets.js";
import { CallRecords } from "./sessions/call-records.js";
import { DiskBudgets } from "./tenants/disk-budget.js";
import { DiskReserve } from "./tenants/disk-reserve.js";
import { detectIsolation, type Isolation } from "./tenants/isolation.js";
import { ProcessSweeper } from "./tenants/sweeper.js";
import { SessionView } from "./catalog/selection.js";
import { mergeDefaults } from "./config/selection-spec.js";
import { SessionAdmission } from "./sessions/admission.js";
import { ClientSession, SessionRegistry, tenantPrincipal, type CloseReason } from "./sessions/registry.js";
import { TenantChanges } from "./sessions/changes.js";
import { drainingRefusal, newSessionId } from "./http/replica.js";
import { Contexts } from "./sessions/contexts.js";
import type { SessionServices } from "./sessions/services.js";
import { ToolCalls, type HubTools } from "./sessions/tool-calls.js";
import { TaskStore } from "./tasks/store.js";
import { LegacyTasks } from "./tasks/legacy.js";
import type { HubServices } from "./http/services.js";
import type { HubStatus } from "./observability/hub-status.js";
import type { ServedTenant } from "./tenants/served-tenant.js";
import { Previews } from "./previews/previews.js";
import { RecordingLinks } from "./previews/recordings.js";
import { LiveViews, type LiveKind } from "./live/views.js";
import { buildTenants, identified, prepareTenant, severalTenants, stateDir, tenantCommand, tenantEnv, type Tenant } from "./tenants/tenants.js";
import { People } from "./tenants/people.js";
import { UidLocks } from "./tenants/uid-locks.js";
import { machineLockDir } from "./tenants/lock-file.js";
import { machineClaimDir } from "./tenants/uid-claims.js";
import { PortLocks } from "./tenants/port-locks.js";
import { collectorPorts, planNetwork, type NetworkPlan } from "./tenants/network.js";
import { formatRange, parsePortRange } from "./config/network.js";
import { systemClock, type Clock } from "./protocol/clock.js";

export const VERSION: string = JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;

export class Hub implements HubServices {
  readonly startedAt: number;
  readonly metrics = new HubMetrics();
  readonly limits: RateLimits;
  readonly isolation: Isolation;
  /** Tenants apart on the network: each one's own TCP ports (hub/tenants/network.ts). */
  readonly network: NetworkPlan;
  readonly tenants: ServedTenant[];
  readonly sessions: SessionRegistry;
  /** Session caps and churn (hub/sessions/admission.ts). */
  readonly admission: SessionAdmission;
  /** The bytes all sessions' resumable streams may keep (hub/http/event-store.ts). */
  readonly eventBudget: EventBudget;
  readonly toolCalls: ToolCalls;
  /** The audit trail and each session's recent calls (hub/sessions/call-records.ts). */
  readonly records: CallRecords;
  /** Tool calls run as tasks, across every tenant, each its own tenant's, whichever era started them (hub/tasks/). */
  readonly tasks: TaskStore;
  /** The 2025-11-25 tasks on 2025-era sessions' servers (hub/tasks/legacy.ts), over the same store. */
  readonly sessionTasks: LegacyTasks;
  /** More contexts per client, named by handle (hub/sessions/contexts.ts). */
  readonly contexts: Contexts;
  /** Previews of apps the tenants serve (hub/previews/). */
  readonly previews: Previews;
  /** Links that download recordings (hub/previews/recordings.ts). */
  readonly recordings: RecordingLinks;
  /** Live views of the tenants' tabs and terminals (hub/live/). */
  readonly live: LiveViews;
  /** The hub's own tools (hub_*), served beside the children's. */
  readonly hubTools?: HubTools;
  readonly version = VERSION;
  /** Catalog and resource changes per tenant, for the 2026-07-28 listen streams. */
  readonly changes = new TenantChanges();
  /** Each tenant's default context for 2026-07-28 clients, opened on its first such request. */
  private readonly modernSessions = new Map<ServedTenant, ClientSession>();
  private readonly sweeper: ProcessSweeper;
  readonly diskBudgets: DiskBudgets;
  /** Set on SIGTERM (hub/http/replica.ts drain): not ready, no new sessions, calls in flight finish. */
  draining = false;
  /** Set by stop(): sessions closing now need no notice to children about to end anyway. */
  private stopping = false;
  private hubUrl = "";
  private hubPort?: number;
  /** A tenant with its servers and catalog, not started (the constructor's tenants, and each person's on sign-in). */
  private readonly serveTenant: (tenant: Tenant) => ServedTenant;
  /**
   * The uids this hub gives its tenants, locked against every other hub on the machine (hub/tenants/uid-locks.ts): the
   * configured tenants' are taken before the start-up sweep (hub/main.ts), a person's when they first sign in.
   */
  readonly uidLocks?: UidLocks;
  /** The port blocks this hub gives its tenants, locked the same way (hub/tenants/port-locks.ts). */
  private readonly portLocks?: PortLocks;
  /** People signed in with OAuth, each a tenant of their own (hub/tenants/people.ts); none without auth.oauth. */
  readonly people?: People<ServedTenant>;

  constructor(
    readonly config: HubConfig,
    readonly log: Logger,
    hubTools?: (hub: SessionServices) => HubTools,
    /** The credentials the hub mints, known to the log too (hub/main.ts), so neither it nor the audit trail shows them. */
    readonly secrets = new MintedSecrets(),
    isolation: Isolation = detectIsolation(),
    /** The hub's time, handed to everything time decides in (hub/protocol/clock.ts). */
    readonly clock: Clock = systemClock,
  ) {
    this.startedAt = clock.now();
    this.isolation = isolation;
    this.limits = new RateLimits(config.rateLimits);
    this.records = CallRecords.configured(
      config.audit,
      this.secrets,
      (message) => log.error(message),
      (tool) => this.metrics.bookkeepingCalls.inc({ tool }),
    );
    this.metrics.describeReplica(config.replica, () => this.draining);
    this.metrics.capTenantLabels(config.audit.metricsTenants);
    const hooks: ChildHooks = {
      onListChanged: (child, what) => this.onListChanged(child, what),
      onRequest: (child, request, signal) => childRequest(this.sessions, this.tenantOf(child), child, request, signal),
      onNotification: (child, notification) => childNotification(this.sessions, this.changes, this.tenantOf(child), child, notification, log),
      onRestart: (child) => this.metrics.childRestarts.inc({ server: child.name }),
      onLiveEvent: (child, params) => this.live.onEvent(child, params),
      onRestarted: (child) => resubscribe(this.sessions, this.changes, this.tenantOf(child), child, log),
    };
    // the catalog lists a per-session server from the configured one: an instance's lists change nothing
    const instanceHooks: ChildHooks = { ...hooks, onListChanged: () => undefined };
    this.hubTools = hubTools?.(this);
    const reserved = new Set(this.hubTools?.list().map((t) => t.name));
    const manifest = readManifest();
    const lazyByDefault = process.env.AGENTBOX_START !== "eager";
    const keys = [
      ...config.tenants.flatMap((t) => (t.apiKey ? [t.apiKey] : [])),
      ...(config.metricsKey ? [config.metricsKey] : []),
      ...(config.oauth?.introspection ? [config.oauth.introspection.clientSecret] : []),
    ];
    // not minted, but known: an agent that passes its key along is not to have it written down either
    for (const key of keys) this.secrets.remember(config, key);
    this.portLocks = isolation.mode === "uid" ? new PortLocks(machineLockDir(stateDir(config)), config.workspace) : undefined;
    this.network = planNetwork({
      network: config.network,
      tenants: config.tenants,
      tenantsJoin: config.oauth !== undefined,
      hubPort: config.port,
      perTenantUids: isolation.mode === "uid",
      locks: this.portLocks,
      reachable: collectorPorts(process.env),
      parse: parsePortRange,
    });
    this.serveTenant = (tenant) => {
      // one budget for every server of the tenant: its calls waiting for slots, wherever they wait
      const queueing = { taskSlotsPercent: config.taskSlotsPercent, budget: new QueueBudget(config.queuedCallBytes) };
      const childLog = (name: string) => log.child({ child: name, ...(severalTenants(config) ? { tenant: tenant.name } : {}) });
      const children = Object.entries(config.mcpServers).map(([name, cfg]) => {
        const key = manifestKey(cfg, name);
        const recorded = key ? manifest[key] : undefined;
        const lazy = cfg.start === "lazy" || (cfg.start === undefined && lazyByDefault);
        return new Child(name, cfg, this.launchFor(tenant, cfg.prefix ?? name, keys, queueing), hooks, childLog(name), lazy ? recorded : undefined);
      });
      // a session's instance is launched as its server is; it starts on its first request, and its lists are the server's (the catalog's)
      const instances = new SessionInstances(config.sessionInstances, (server, sequence) => {
        const launch = this.launchFor(tenant, server.prefix, keys, queueing);
        return new Child(server.name, server.config, launch, instanceHooks, childLog(server.name).child({ instance: sequence }), offersOf(server));
      });
      return { ...tenant, children, catalog: new Catalog(children, reserved), resourceOwners: new Map(), instances };
    };
    this.tenants = buildTenants(config, isolation, this.network).map(this.serveTenant);
    this.uidLocks =
      isolation.mode === "uid" ? new UidLocks(machineLockDir(stateDir(config)), config.workspace, machineClaimDir(stateDir(config)), log) : undefined;
    this.people = config.oauth
      ? new People(
          { ...config, oauth: config.oauth },
          isolation,
          this.network,
          () => this.tenants,
          {
            serve: (tenant) => this.startPerson(tenant),
            busy: (tenant) => this.sessions.all().some((s) => s.tenant === tenant && (!s.lasting || s.idleMs < config.oauth!.idleMs)),
            drop: (tenant) => this.dropPerson(tenant),
          },
          clock,
          this.uidLocks,
        )
      : undefined;
    this.sessions = new SessionRegistry(config.sessionIdleMs, (session, reason) => this.onSessionClosed(session, reason), this.secrets, clock);
    this.admission = new SessionAdmission(config.sessionLimits, this.sessions);
    this.eventBudget = new EventBudget(config.sessionLimits.eventStoreBytes, config.sessionLimits.eventStoreTotalBytes);
    // a minute without a request counts as idle (sooner when sessions expire sooner)
    this.metrics.countSessions(() => this.sessions.all(), Math.min(60_000, config.sessionIdleMs / 2));
    this.sweeper = new ProcessSweeper(
      this.tenants,
      this.sessions,
      log,
      (tenant) => (command, args) => tenantCommand(tenant, this.isolation, command, args),
      clock,
      { everyMs: config.sweepMs, memoryReserveMiB: config.memoryReserveMiB },
    );
    this.diskBudgets = new DiskBudgets(this.tenants, log, (tenant, command, args) => tenantCommand(tenant, this.isolation, command, args));
    this.contexts = new Contexts({
      sessions: this.sessions,
      ttlMs: config.contextTtlMs,
      idleMs: config.sessionIdleMs,
      newId: () => newSessionId(config.replica),
      // a draining replica takes no new sessions, contexts included: the router sends the next request elsewhere
      open: async (...args) => (this.draining ? drainingRefusal(this) : this.openSession(...args)),
      secrets: this.secrets,
      clock,
    });
    this.toolCalls = new ToolCalls({
      limits: this.limits,
      metrics: this.metrics,
      log,
      hubTools: this.hubTools,
      contexts: this.contexts,
      records: this.records,
    });
    this.tasks = new TaskStore(
      { perTenant: config.tasksPerTenant, ttlMs: config.taskTtlSeconds * 1000, resultBytes: config.taskResultsMiB * 1024 * 1024 },
      clock,
      config.replica,
    );
    this.previews = new Previews(config.previews, config.replica, () => this.hubUrl.replace(/\/mcp$/, ""), this.secrets, clock);
    this.recordings = new RecordingLinks(config.previews.ttlSeconds, config.replica, (requestBase) => this.previews.baseUrl(requestBase), this.secrets, clock);
    this.live = new LiveViews(
      config.previews,
      config.replica,
      () => this.hubUrl.replace(/\/mcp$/, ""),
      this.secrets,
      (tenant, session, kind) => this.liveChild(tenant, session, kind),
      clock,
    );
    this.sessionTasks = new LegacyTasks(this, this.tasks, (tenant) => this.modernSession(tenant));
  }

  private launchFor(tenant: Tenant, prefix: string, secrets: string[], queueing: QueueSettings): ChildLaunch {
    const env = tenantEnv(tenant, secrets);
    env[RECORD_ENV] = this.config.record.join(",");
    // a getter: the hub's URL is known only once the HTTP server listens
    Object.defineProperty(env, "AGENTBOX_HUB_URL", { enumerable: true, get: () => this.hubUrl });
    return {
      env,
      cwd: tenant.workspace,
      // its processes may reach the hub (code calls hub tools over HTTP) beside the tenant's own ports
      command: (command, args) => tenantCommand(tenant, this.isolation, command, args, { hubPort: this.hubPort }),
      maxMessageBytes: this.config.maxMessageBytes,
      output: this.config.childOutput,
      queueing,
      clock: this.clock,
    };
  }

  get listeningBase(): string {
    return this.hubUrl.replace(/\/mcp$/, "");
  }

  get replica(): string | undefined {
    return this.config.replica;
  }

  /** The tenant of a request without an API key (the hub then has exactly one, keyless, and no sign-in). */
  get keylessTenant(): ServedTenant | undefined {
    return !this.people && this.tenants.length === 1 && !identified(this.tenants[0]) ? this.tenants[0] : undefined;
  }

  /** The tenant of a person signed in with OAuth: made, prepared and started on their first request. */
  personTenant(person: string): Promise<ServedTenant> {
    if (!this.people) return Promise.reject(new Error("this hub has no sign-in (auth.oauth)"));
    return this.people.tenantFor(person);
  }

  private async startPerson(tenant: Tenant): Promise<ServedTenant> {
    const served = this.serveTenant(tenant);
    this.tenants.push(served);
    try {
      prepareTenant(served, this.config, (msg, fields) => this.log.warn(msg, { tenant: served.name, ...fields }));
      // whatever an earlier run left under this uid ends before the person's servers start
      await this.sweeper.sweep([served]);
      await Promise.all(served.children.filter((c) => c.state !== "idle").map((c) => c.start()));
    } catch (err) {
      // the person's next request makes the tenant again (./tenants/people.ts): this one must not linger beside it
      this.tenants.splice(this.tenants.indexOf(served), 1);
      await Promise.allSettled(served.children.map((c) => c.stop()));
      this.log.error("a person's tenant could not be started", { tenant: served.name, err: String(err) });
      throw err;
    }
    served.catalog.rebuild();
    this.diskBudgets.add(served);
    this.log.info("a person signed in for the first time: their tenant is ready", { tenant: served.name, uid: served.identity?.uid });
    return served;
  }

  /**
   * A person's tenant that idled (./tenants/people.ts): its sessions closed, its servers and every
   * process under its uid ended, and off the hub's list. Its folder stays, owned by its uid, which
   * the person gets again when they come back.
   */
  private async dropPerson(tenant: ServedTenant): Promise<void> {
    try {
      await Promise.allSettled(this.sessions.all().flatMap((s) => (s.tenant === tenant ? [this.sessions.close(s.id, "idle")] : [])));
      this.modernSessions.delete(tenant);
      await this.changes.dropped(tenant);
      await Promise.allSettled([...tenant.children.map((c) => c.stop()), tenant.instances.stopAll()]);
      // off the list only once its servers are down: a server's last notification still finds its tenant
      const index = this.tenants.indexOf(tenant);
      if (index >= 0) this.tenants.splice(index, 1);
      await this.sweeper.sweep([tenant]);
      this.diskBudgets.remove(tenant);
      this.log.info("a person was away: their tenant's servers stopped and its place is free; their uid and files stay", {
        tenant: tenant.name,
        uid: tenant.identity?.uid,
      });
    } catch (err) {
      this.log.error("dropping an idle person's tenant failed", { tenant: tenant.name, err: String(err) });
    }
  }

  get children(): Child[] {
    return this.tenants.flatMap((t) => t.children);
  }

  /** Prepare every tenant's folders and start every enabled child in parallel. */
  async startChildren(hubUrl: string, hubPort?: number): Promise<void> {
    this.hubUrl = hubUrl;
    this.hubPort = hubPort;
    for (const tenant of this.tenants) prepareTenant(tenant, this.config, (msg, fields) => this.log.warn(msg, { tenant: tenant.name, ...fields }));
    if (this.isolation.mode === "uid") process.umask(0o077);
    // idle children (known from the manifest) start on their first call
    await Promise.all(this.children.filter((c) => c.state !== "idle").map((c) => c.start()));
    for (const tenant of this.tenants) tenant.catalog.rebuild();
    this.sweeper.start(this.people !== undefined);
    this.people?.start();
    const multi = severalTenants(this.config);
    this.diskBudgets.start(DiskReserve.for(this.config.workspace, stateDir(this.config), multi, this.log), this.people !== undefined);
  }

  /** Before the hub listens: nothing an earlier run left under a tenant's uid may live on (it could hold the hub's port). */
  endLeftovers(): Promise<void> {
    return this.sweeper.killAll("left by an earlier run");
  }

  /** Name collisions in the catalog (the same for every tenant: they share one configuration). */
  get collisions(): string[] {
    return this.tenants[0]?.catalog.collisions ?? [];
  }

  get ready(): boolean {
    return this.readyWith(this.children);
  }

  private readyWith(children: Child[]): boolean {
    return !this.draining && children.every((c) => LISTED_STATES.has(c.state) || c.state === "disabled");
  }

  newSession(id: string, kind: ClientSession["kind"], tenant: ServedTenant, clientKey: string, view = this.defaultView(tenant)): ClientSession {
    this.metrics.sessionsOpened.inc({ transport: kind });
    const session = this.sessions.add(new ClientSession(id, kind, tenant, clientKey, view, this.clock));
    this.records.opened(session);
    return session;
  }

  /** A session a client asked for, or the refusal to send when its caps or churn rate say no (hub/sessions/admission.ts). */
  async openSession(id: string, kind: ClientSession["kind"], tenant: ServedTenant, clientKey: string, view: SessionView): Promise<ClientSession | Response> {
    const tooFast = await this.admission.tooFast(clientKey);
    // the cap is checked in the same turn as the session is added: no other request takes the room between
    return tooFast ?? this.admission.full(tenant, clientKey) ?? this.newSession(id, kind, tenant, clientKey, view);
  }

  /** The one session all sessionless requests of a client share (per tenant and address), or the refusal to open it. */
  async implicitSession(tenant: ServedTenant, clientKey: string): Promise<ClientSession | Response> {
    const id = `implicit-${tenant.name}-${clientKey}`;
    const open = this.sessions.get(id);
    if (open) return open;
    const tooFast = await this.admission.tooFast(clientKey);
    // another request of this client may have opened it meanwhile
    return tooFast ?? this.sessions.get(id) ?? this.admission.full(tenant, clientKey) ?? this.newSession(id, "implicit", tenant, clientKey);
  }

  /**
   * The tenant's one context for 2026-07-28 clients: that revision has no sessions, so what their
   * calls leave (terminals, interpreters, browser pages) is kept here. It never idles out and takes
   * no room under the session caps; ended (hub_end_session), the next request opens a fresh one.
   */
  modernSession(tenant: ServedTenant): ClientSession {
    const open = this.modernSessions.get(tenant);
    if (open && !open.closed) return open;
    const session = this.newSession(newSessionId(this.config.replica), "modern", tenant, `modern:${tenant.name}`);
    this.modernSessions.set(tenant, session);
    return session;
  }

  /** What the configured defaults (global, then the tenant's) leave a session; its URL may narrow it. */
  defaultView(tenant: ServedTenant): SessionView {
    const everything = new SessionView({
      catalog: tenant.catalog,
      hubTools: () => this.hubTools?.list() ?? [],
      serverNames: () => tenant.children.map((c) => c.name),
    });
    return everything.narrow(mergeDefaults(this.config.selection, tenant.selection), "config");
  }

  private onSessionClosed(session: ClientSession, reason: CloseReason): void {
    this.records.closed(session, reason);
    if (this.stopping) return;
    // a session that never reached a child (a client churning through sessions) costs none a message
    for (const child of session.reached) void child.notify(SESSION_CLOSED_METHOD, { session: session.id });
    this.previews.endSession(session.id);
    this.recordings.endSession(session.id);
    this.live.endSession(session.id);
    void session.tenant.instances.endSession(session.id);
    this.sweeper.sessionEnded(session);
  }

  /** The tenant's built-in browser or terminal server, as it serves this session (its own instance, if configured so). */
  private liveChild(tenantName: string, session: string, kind: LiveKind): Child | undefined {
    const tenant = this.tenants.find((t) => t.name === tenantName);
    const child = tenant?.children.find((c) => c.name === kind && c.enabled);
    return child && tenant ? tenant.instances.route(child, session) : undefined;
  }

  private tenantOf(child: Child): ServedTenant {
    return this.tenants.find((t) => t.children.includes(child) || t.instances.ownerOf(child))!;
  }

  private onListChanged(child: Child, what: "tools" | "prompts" | "resources"): void {
    const tenant = this.tenantOf(child);
    tenant.catalog.rebuild();
    for (const error of tenant.catalog.collisions) this.log.error(error);
    this.changes.publish(tenant, { kind: what });
    for (const session of this.sessions.all()) {
      if (session.tenant !== tenant) continue;
      for (const server of session.servers) {
        const send = what === "tools" ? server.sendToolListChanged() : what === "prompts" ? server.sendPromptListChanged() : server.sendResourceListChanged();
        void send.catch(() => undefined);
      }
    }
  }

  /** What GET / and hub_status show: one tenant's view when asked by a tenant, else the whole hub. */
  status(tenant?: ServedTenant): HubStatus {
    const tenants = tenant ? [tenant] : this.tenants;
    return {
      name: "agentbox",
      version: VERSION,
      ...(this.config.replica ? { replica: this.config.replica } : {}),
      ...(this.draining ? { draining: true } : {}),
      uptimeSeconds: Math.round((this.clock.now() - this.startedAt) / 1000),
      // a tenant's view holds its own servers only: another tenant's failing server is not its news
      ready: this.readyWith(tenants.flatMap((t) => t.children)),
      sessions: tenant ? this.sessions.of(tenantPrincipal(tenant)).size : this.sessions.size,
      workspace: tenant?.workspace ?? this.config.workspace,
      isolation: {
        mode: this.isolation.mode,
        ...(tenant ? {} : { tenants: this.tenants.length }),
        summary: this.isolation.summary,
        network: this.network.network,
        networkSummary: this.network.networkSummary,
        ...(tenant?.network ? { ports: formatRange(tenant.network.ports) } : {}),
      },
      ...(tenant && this.diskBudgets.usage(tenant) ? { disk: this.diskBudgets.usage(tenant) } : {}),
      servers: tenants.flatMap((t) =>
        t.children.map((c) => ({
          ...(severalTenants(this.config) ? { tenant: t.name } : {}),
          name: c.name,
          prefix: c.prefix,
          transport: c.config.url ? "http" : "stdio",
          state: c.state,
          pid: c.pid ?? null,
          restarts: c.restarts,
          tools: t.catalog.toolCount(c),
          ...(c.config.instances === "session" ? { sessionInstances: t.instances.countOf(c) } : {}),
          ...c.queueStats,
          ...(c.takesTurns ? { oneClientAtATime: true } : {}),
          ...(c.lastError && c.state !== "ready" ? { lastError: c.lastError } : {}),
        })),
      ),
    };
  }

  async stop(): Promise<void> {
    // the children end below, which frees everything of every session at once
    this.stopping = true;
    await this.people?.stop();
    this.previews.stop();
    this.recordings.stop();
    this.live.stop();
    await this.changes.end();
    this.tasks.close();
    await this.sweeper.stop();
    this.diskBudgets.stop();
    await this.sessions.closeAll();
    await this.records.close();
    await Promise.allSettled([...this.children.map((c) => c.stop()), ...this.tenants.map((t) => t.instances.stopAll())]);
    // nothing of a tenant outlives the hub, daemons of live sessions included
    await this.sweeper.killAll("when the hub stopped");
    // only now may another hub give these uids and ports to its tenants
    this.uidLocks?.releaseAll();
    this.portLocks?.releaseAll();
  }
}
