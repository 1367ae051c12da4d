// One child MCP server: spawned (stdio) or connected (HTTP), listed, supervised. A child that
// exits fails its calls in flight at once, drops out of the catalog, and comes back after an
// exponential backoff; the hub is told each time so it can send list_changed to its clients.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ClientNotification,
  type Notification,
  type Prompt,
  type Request,
  type ResourceTemplate,
  type Result,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { callAsTask, runsOnlyAsTask } from "./child-task.js";
import { ChildCalls, MessageTooLargeError, type CallOptions } from "./calls.js";
import {
  childTransport,
  exitReason,
  hearIncoming,
  listOffers,
  routeIncoming,
  startFailure,
  Watchdog,
  type ChildConnection,
  type ChildLaunch,
} from "./transport.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerConfig } from "../config/config.js";
import type { ManifestEntry } from "./manifest.js";
import { ReplyTooLargeError, StdioChildTransport } from "./stdio-transport.js";
import { killTree } from "../../servers/lib/proctree.js";
import { nextTurn } from "../../servers/lib/next-turn.js";
import { Coalescer, FloodGate } from "./flood-gate.js";
import { CallQueue, queuedCall } from "./queue.js";
import { CallCancellation } from "../protocol/cancellation.js";
import { ModernLink } from "./modern-link.js";
import { z } from "zod";
import { LIVE_EVENT_METHOD } from "../../servers/lib/live.js";
import { SESSION_CLOSED_METHOD } from "../../servers/lib/session-events.js";

// checked in full by hub/live/stream.ts: here only that it is an object naming its stream
const LIVE_EVENT_NOTIFICATION = z.object({ method: z.literal(LIVE_EVENT_METHOD), params: z.looseObject({ stream: z.string().max(64) }) });

export type ChildState = "idle" | "starting" | "ready" | "restarting" | "failed" | "disabled" | "stopped";

/** Listed (from the build-time manifest) or running: its tools belong in the catalog. */
export const LISTED_STATES: ReadonlySet<ChildState> = new Set(["idle", "ready"]);

export interface ChildHooks {
  /** Tools, prompts or resources of this child appeared, changed or went away. */
  onListChanged(child: Child, what: "tools" | "prompts" | "resources"): void;
  /** A request from the child to the client (sampling, elicitation, roots). */
  onRequest(child: Child, request: Request, signal: AbortSignal): Promise<Result>;
  /** A notification the hub forwards to clients (logging, resources/updated). */
  onNotification(child: Child, notification: Notification): void;
  onRestart(child: Child): void;
  /** A live view's event (servers/lib/live.ts): a frame, a navigation, terminal output. */
  onLiveEvent?(child: Child, params: Record<string, unknown>): void;
  /** The child is ready again after a restart: what it held for clients (resource subscriptions) is gone with its last process. */
  onRestarted?(child: Child): void;
}

export class ChildUnavailableError extends Error {}

export { MessageTooLargeError, type ChildLaunch };

const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_TOTAL_TIMEOUT_MS = 60 * 60_000;
const MAX_BACKOFF_MS = 30_000;
const STABLE_AFTER_MS = 30_000;
// a child announcing list changes in a loop makes the hub list its offers at most this often
const LIST_REFRESH_INTERVAL_MS = 1000;
// how long caughtUp waits for a ping's answer; only a child that does not answer pings (every MCP server must) ever waits it out
const CAUGHT_UP_WAIT_MS = 2000;

export class Child {
  state: ChildState;
  pid?: number;
  restarts = 0;
  lastError?: string;
  startedAt?: number;
  tools: Tool[] = [];
  prompts: Prompt[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  capabilities: ServerCapabilities = {};
  /** What the server tells a model about itself (its initialize result), kept across restarts. */
  instructions?: string;
  readonly prefix: string;
  private client?: Client;
  /** The connection to a child speaking 2026-07-28 (`protocol` in its config), instead of `client` and `calls`. */
  private modern?: ModernLink;
  /** The hub's own requests to the current process (./calls.ts). */
  private calls?: ChildCalls;
  private readonly queue: CallQueue;
  private attempt = 0;
  private restartTimer?: NodeJS.Timeout;
  private stopping = false;
  private starting?: Promise<void>;
  private watchdog?: Watchdog;
  /** The current process's transport and stderr: what explains its failure. */
  private connection?: ChildConnection;
  /** Log messages and resource updates the child may send per second (dropped beyond, and counted). */
  private readonly notices: FloodGate;
  /** Refreshes the lists the child announced changed (./flood-gate.ts). */
  private listRefresh?: Coalescer<"tools" | "prompts" | "resources">;

  constructor(
    readonly name: string,
    readonly config: ServerConfig,
    private readonly launch: ChildLaunch,
    private readonly hooks: ChildHooks,
    private readonly log: Logger,
    /** What the server offers, known without running it: the child then starts on first use. */
    manifest?: ManifestEntry,
  ) {
    this.prefix = config.prefix ?? name;
    this.state = config.enabled === false ? "disabled" : config.unstartable ? "failed" : manifest ? "idle" : "starting";
    if (this.state === "failed") {
      // as written it names a file that is not there: never run (not even from the workspace), its siblings serve
      this.lastError = config.unstartable;
      log.error("child cannot start", { error: config.unstartable });
    }
    if (manifest && this.state === "idle") {
      this.capabilities = manifest.capabilities;
      this.tools = manifest.tools;
      this.prompts = manifest.prompts;
      this.resourceTemplates = manifest.resourceTemplates;
      this.instructions = manifest.instructions;
    }
    const turnWaitMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.queue = new CallQueue(name, config.maxConcurrency ?? 32, config.maxQueue ?? 512, launch.queueing, turnWaitMs, launch.clock);
    const perSecond = launch.output.notificationsPerSecond;
    this.notices = new FloodGate(
      perSecond,
      (count) =>
        log.warn(`dropped ${count} notifications from the child`, { dropped: count, limit: `${perSecond}/s (AGENTBOX_CHILD_NOTIFICATIONS_PER_SECOND)` }),
      launch.clock,
    );
  }

  /** Start an idle child (once, however many calls ask at the same time). */
  private async ensureStarted(): Promise<void> {
    if (this.state === "idle" && !this.starting) {
      this.log.info("starting on first use");
      this.starting = this.start().finally(() => (this.starting = undefined));
    }
    await this.starting;
  }

  /** Spawned by the hub (stdio), as opposed to reached over HTTP. */
  get spawned(): boolean {
    return !this.config.url;
  }

  get enabled(): boolean {
    return this.state !== "disabled";
  }

  get queueStats() {
    return this.queue.stats;
  }

  /** Whether its calls run one client's at a time (./queue.ts): it asked a client something without naming the call that asks. */
  get takesTurns(): boolean {
    return this.queue.takesTurns;
  }

  takeTurns(): void {
    if (this.queue.takesTurns) return;
    this.log.info("the server asked a client without naming the call that asks: from now on one client's calls to it run at a time");
    this.queue.takeTurns();
  }

  /** The latest start, settled once the child is up or has failed. */
  started: Promise<void> = Promise.resolve();

  start(): Promise<void> {
    this.started = this.spawnAndConnect();
    return this.started;
  }

  private async spawnAndConnect(): Promise<void> {
    if (!this.enabled || this.stopping || this.config.unstartable) return;
    const listedBefore = LISTED_STATES.has(this.state) ? JSON.stringify([this.tools, this.prompts, this.resourceTemplates]) : undefined;
    this.state = this.restarts > 0 ? "restarting" : "starting";
    if (this.config.protocol) return this.connectModern(listedBefore);
    const connection = (this.connection = childTransport(this.config, this.launch, this.prefix, this.log));
    const { transport } = connection;
    const client = new Client(
      { name: "agentbox-hub", version: "0.1.0" },
      { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
    );
    this.wireClient(client);
    if (transport instanceof StdioChildTransport) transport.onspawn = (pid) => (this.pid = pid);
    const calls = new ChildCalls(
      transport,
      {
        timeoutMs: this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxTotalMs: this.config.maxTotalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS,
        maxMessageBytes: this.launch.maxMessageBytes,
      },
      this.name,
    );
    try {
      await client.connect(transport);
      const watchdog = (this.watchdog = new Watchdog());
      routeIncoming(transport, calls, () => watchdog.heard(), this.notices);
      this.capabilities = client.getServerCapabilities() ?? {};
      this.instructions = client.getInstructions();
      await this.refreshLists(client);
    } catch (err) {
      // what the process said on its way out (a missing module, a bad argument) says more than "closed"
      await client.close().catch(() => undefined);
      this.forgetProcess(connection);
      return this.failedToStart(await startFailure(err, connection, this.config, this.launch));
    }
    if (this.stopping) {
      // stopped while it started (a session's instance whose session closed): stop() found no process to end
      this.state = "stopped";
      if (this.pid) await killTree(this.pid);
      await client.close().catch(() => undefined);
      return;
    }
    this.client = client;
    this.calls = calls;
    this.watchdog.start(client, transport, this.watchFor(client));
    this.becameReady(listedBefore);
  }

  private failedToStart(error: string): void {
    this.lastError = error;
    this.log.error("child failed to start", { error });
    // what was listed stays listed, so a call says the server is failing rather than "Unknown tool"
    this.state = this.stopping ? "stopped" : "failed";
    this.scheduleRestart();
  }

  private becameReady(listedBefore: string | undefined): void {
    this.lastError = undefined;
    this.startedAt = Date.now();
    this.state = "ready";
    this.log.info("child ready", { pid: this.pid, tools: this.tools.length });
    if (this.restarts > 0) this.hooks.onRestarted?.(this);
    // a child started on first use only announces a change when it offers other tools than recorded
    if (listedBefore === JSON.stringify([this.tools, this.prompts, this.resourceTemplates])) return;
    this.hooks.onListChanged(this, "tools");
    if (this.capabilities.prompts) this.hooks.onListChanged(this, "prompts");
    if (this.capabilities.resources) this.hooks.onListChanged(this, "resources");
  }

  /**
   * A 2026-07-28 child (./modern-link.ts): over HTTP, no process to watch; spawned, the same
   * process as any stdio child's (its uid, environment, stderr, reply limit, watchdog and restarts).
   */
  private async connectModern(listedBefore: string | undefined): Promise<void> {
    const limits = { timeoutMs: this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxTotalMs: this.config.maxTotalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS };
    const connection = this.config.url ? undefined : (this.connection = childTransport(this.config, this.launch, this.prefix, this.log));
    const transport = connection?.transport;
    if (transport instanceof StdioChildTransport) transport.onspawn = (pid) => (this.pid = pid);
    let link: ModernLink | undefined;
    try {
      link = await ModernLink.connect(
        this.name,
        this.config,
        limits,
        {
          ask: (request, signal) => this.hooks.onRequest(this, request, signal),
          listChanged: (what) => this.listRefresh?.request(what),
          warn: (message, fields) => this.log.warn(message, fields),
          // bounded per child like a 2025 child's (./flood-gate.ts)
          notify: (notification) => this.notices.admit() && this.hooks.onNotification(this, notification),
          closed: () => link && this.onClosed(link),
          error: (err) => this.transportError(err),
        },
        transport,
      );
      await this.refreshLists(link);
      this.capabilities = link.capabilities;
      this.instructions = link.instructions;
    } catch (err) {
      await link?.close();
      if (!connection) return this.failedToStart(errorMessage(err));
      this.forgetProcess(connection);
      return this.failedToStart(await startFailure(err, connection, this.config, this.launch));
    }
    if (this.stopping) {
      this.state = "stopped";
      if (this.pid) await killTree(this.pid);
      return void (await link.close());
    }
    const current = (this.modern = link);
    this.listRefresh = new Coalescer(LIST_REFRESH_INTERVAL_MS, (changed) => this.refreshChanged(current, changed), this.launch.clock);
    if (transport) this.watch(link, transport);
    this.becameReady(listedBefore);
  }

  private wireClient(client: Client): void {
    for (const schema of [CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema]) {
      client.setRequestHandler(schema, (request, extra) => this.hooks.onRequest(this, request, extra.signal));
    }
    // a burst of list_changed costs one refresh now and one after the interval, never a loop
    const refresh = (this.listRefresh = new Coalescer(LIST_REFRESH_INTERVAL_MS, (changed) => this.refreshChanged(client, changed), this.launch.clock));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => refresh.request("tools"));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => refresh.request("prompts"));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => refresh.request("resources"));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => this.hooks.onNotification(this, n));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => this.hooks.onNotification(this, n));
    client.setNotificationHandler(LIVE_EVENT_NOTIFICATION, (n) => this.hooks.onLiveEvent?.(this, n.params));
    client.onclose = () => this.onClosed(client);
    client.onerror = (err) => this.transportError(err);
  }

  private transportError(err: Error): void {
    this.log.debug("child transport error", { error: errorMessage(err) });
    // past the reader's limit the stream is out of step: only a fresh process recovers
    if (err instanceof ReplyTooLargeError) this.kill("its reply exceeded the message limit");
  }

  /**
   * A child that stops reading its input or answering would hang every call sent to it: it is
   * restarted instead (watched from once it is current: before, `current` would not hold and stop the watch).
   */
  private watchFor(connected: Client | ModernLink) {
    return {
      current: () => (this.client ?? this.modern) === connected,
      busy: () => this.queue.stats.running > 0,
      kill: (why: string) => this.kill(why),
    };
  }

  /** A spawned 2026 child's watchdog hears everything it says, as a 2025 child's does (./transport.ts). */
  private watch(link: ModernLink, transport: Transport): void {
    const watchdog = (this.watchdog = new Watchdog());
    hearIncoming(transport, () => watchdog.heard());
    watchdog.start(link, transport, this.watchFor(link));
  }

  private async refreshChanged(client: Client | ModernLink, changed: Array<"tools" | "prompts" | "resources">): Promise<void> {
    // a process already replaced has nothing to list
    const current = this.client ?? this.modern;
    if (current && current !== client) return;
    await this.refreshLists(client).catch((err) => this.log.warn("list refresh failed", { error: errorMessage(err) }));
    for (const what of changed) this.hooks.onListChanged(this, what);
  }

  private async refreshLists(client: Client | ModernLink): Promise<void> {
    const offers = client instanceof ModernLink ? await client.listOffers() : await listOffers(client);
    ({ tools: this.tools, prompts: this.prompts, resourceTemplates: this.resourceTemplates } = offers);
  }

  private onClosed(connected: Client | ModernLink): void {
    if ((this.client ?? this.modern) !== connected) return;
    this.client = undefined;
    this.modern = undefined;
    this.calls?.closeAll();
    this.calls = undefined;
    this.watchdog?.stop();
    if (this.stopping) {
      this.state = "stopped";
      return;
    }
    this.listRefresh?.cancel();
    void this.explainExit(this.connection, this.pid, this.lastError);
    this.lastError ??= `exited unexpectedly (pid ${this.pid})`;
    this.forgetProcess(this.connection);
    if (this.startedAt && Date.now() - this.startedAt > STABLE_AFTER_MS) this.attempt = 0;
    // its tools stay listed while it restarts: calls meanwhile hear "restarting", not "Unknown tool"
    this.state = "restarting";
    this.scheduleRestart();
  }

  /**
   * The process is gone: its pid no longer names this server. Kept, it would let the sweep spare
   * (and a kill hit) whatever process of the tenant is given that pid next, until the restart.
   */
  private forgetProcess(connection: ChildConnection | undefined): void {
    if (this.connection === connection) this.pid = undefined;
  }

  /** Says why the process ended: the hub's reason when it killed it, else how it ended and what it said last. */
  private async explainExit(connection: ChildConnection | undefined, pid: number | undefined, killedBecause: string | undefined): Promise<void> {
    const why = killedBecause ?? (connection ? await exitReason(connection, pid) : `exited unexpectedly (pid ${pid})`);
    // a newer process may have started (and answered) meanwhile: its state is not this one's
    if (this.connection === connection && this.state !== "ready") this.lastError = why;
    this.log.warn("child exited; restarting", { pid, why });
  }

  private kill(why: string): void {
    if (!this.pid || this.stopping) return;
    this.lastError = `restarted because ${why}`;
    this.log.warn("killing child", { pid: this.pid, why });
    void killTree(this.pid);
  }

  private scheduleRestart(): void {
    if (this.stopping) return;
    const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.attempt);
    this.attempt++;
    this.restartTimer = setTimeout(() => {
      this.restarts++;
      this.hooks.onRestart(this);
      void this.start();
    }, delay);
    this.restartTimer.unref();
  }

  /** Send a request to the child, within its concurrency limit and timeouts; its result comes back as the child sent it. */
  async request(method: string, params: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<Result> {
    const call = queuedCall(params, options);
    // a call waiting for the child's first start holds a slot: calls beyond them wait in the queue, where their memory is counted
    return this.queue.run(call, async () => {
      options.onstart?.();
      if (this.state === "idle" || this.starting) await this.ensureStarted();
      if (this.modern && this.state === "ready") return this.modern.request(method, params, options);
      if (!this.calls || this.state !== "ready") throw this.unavailable();
      // a tool the child runs only as a task is one all the same: the slot is held until the child's task ends
      if (method === "tools/call" && params && runsOnlyAsTask(this.tools, this.capabilities, params))
        return callAsTask(this.calls, params, options, this.config.maxTotalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS);
      return this.calls.request(method, params, options);
    });
  }

  /**
   * Settles once everything the child wrote before it read a ping sent now has reached the hub and
   * been handled: a spawned child's output is one ordered stream, so the ping's answer comes after
   * whatever it wrote before, however many reads of its output that took (over HTTP, where each
   * reply has its own stream, this is the best there is). A 2026 round waits on this to carry
   * every question a child asked in one go (hub/sessions/pending-call.ts), not just the first to arrive.
   */
  async caughtUp(): Promise<void> {
    const calls = this.calls;
    if (calls) {
      const gaveUp = new CallCancellation();
      const bound = setTimeout(() => gaveUp.abort(new Error(`The '${this.name}' server did not answer a ping.`)), CAUGHT_UP_WAIT_MS);
      // an error answer is an answer too: it came after the same output
      await calls
        .request("ping", undefined, { signal: gaveUp })
        .catch(() => undefined)
        .finally(() => clearTimeout(bound));
    }
    // the messages read before the answer are handled in microtasks queued before it was: all done by the next turn of the loop
    await nextTurn();
  }

  async notify(method: string, params: Record<string, unknown>): Promise<void> {
    // a 2026 child knows nothing of the hub's sessions: its link lets go of what the session held
    if (this.modern && method === SESSION_CLOSED_METHOD) return this.modern.sessionClosed(String(params.session));
    if (this.state !== "ready" || !this.client) return;
    await this.client.notification({ method, params } as ClientNotification).catch(() => undefined);
  }

  unavailable(): ChildUnavailableError {
    if (this.config.unstartable) return new ChildUnavailableError(`The '${this.name}' server cannot start: ${this.config.unstartable}`);
    const why =
      this.state === "disabled"
        ? "is disabled in the configuration"
        : this.state === "stopped"
          ? "has been stopped"
          : `is ${this.state === "failed" ? "failing to start" : "restarting"}${this.lastError ? ` (${this.lastError})` : ""}; try again in a moment`;
    return new ChildUnavailableError(`The '${this.name}' server ${why}.`);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const pid = this.pid;
    const client = this.client;
    this.state = "stopped";
    // SIGTERM lets the child free what it holds; then everything left in its tree is killed
    if (pid) await killTree(pid, { graceMs: 3000 });
    await client?.close().catch(() => undefined);
    await this.modern?.close();
  }
}
