// Tool calls run as tasks (the MCP extension io.modelcontextprotocol/tasks, SEP-2663) for
// 2026-07-28 clients: the hub answers tools/call with a task at once and holds the call itself, so
// a long call outlives the HTTP request that started it and the client polls it with tasks/get.
// A task is its tenant's alone (another tenant's id is an unknown task), keeps its outcome for
// ttlMs after it ends, and runs through the same PendingCall / ToolCalls path as a plain call, so
// selection, rate limits, contexts and cancellation (the child's whole process tree) apply once.
// The SDK v2 answers tasks/* on a 2026 connection with -32601, so hub/modern/endpoint.ts
// hands those methods here before the SDK sees them.
import { EventEmitter, once } from "node:events";
import type { InputRequest } from "@modelcontextprotocol/server";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { protocolError } from "../protocol/jsonrpc.js";
import type { CallRound, PendingCall } from "../sessions/pending-call.js";
import { TaskIds } from "./task-ids.js";
import type { Clock, Timer } from "../protocol/clock.js";

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
const TERMINAL: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

export interface TaskLimits {
  /** How many tasks one tenant may hold at once, running or kept for their result. */
  perTenant: number;
  /** How long a task's outcome is kept after it ends. */
  ttlMs: number;
  /** How many bytes of ended tasks' outcomes one tenant keeps at most: a tenant cannot fill the hub's memory with results nobody fetches. */
  resultBytes: number;
}

/**
 * The progress token a call run as a task is started with, in either era: the child reports
 * progress only when asked to, and the task keeps the latest as its statusMessage (as it keeps why
 * the call waits for a slot of its server); and a call is cancelled after its server's timeoutMs
 * (5 min) without progress, which a task nobody waits on must outlive while its tool reports (a
 * ten-minute build that prints as it goes). It never leaves the hub (the child gets a token of its
 * own, and notifications/progress is not sent on tasks).
 */
export const TASK_PROGRESS_TOKEN = "agentbox/task";

/** How much of a child's progress message a task keeps as its statusMessage: a child's word, shown to every poll. */
const STATUS_MESSAGE_CHARS = 500;

/**
 * A child's progress as the task's statusMessage ("progress descriptions for working", the
 * extension's Task shape): notifications/progress is not supported on tasks, so the latest one
 * is what a poll shows of how the work goes. Its message when it sent one, else its numbers.
 */
function progressMessage(params: Record<string, unknown>): string | undefined {
  if (typeof params.message === "string" && params.message.trim()) {
    const message = params.message.trim();
    return message.length > STATUS_MESSAGE_CHARS ? `${message.slice(0, STATUS_MESSAGE_CHARS - 1)}…` : message;
  }
  if (typeof params.progress !== "number" || !Number.isFinite(params.progress)) return undefined;
  return typeof params.total === "number" && Number.isFinite(params.total) ? `${params.progress} of ${params.total}` : `${params.progress}`;
}

/** A JSON-RPC error object as tasks/get inlines it for a failed task. */
function errorObject(error: unknown): { code: number; message: string; data?: unknown } {
  const e = error as { code?: unknown; message?: unknown; data?: unknown } | null;
  const code = typeof e?.code === "number" ? e.code : ErrorCode.InternalError;
  const message = typeof e?.message === "string" ? e.message : String(error);
  return e?.data === undefined ? { code, message } : { code, message, data: e.data };
}

export class Task {
  readonly createdAt: string;
  lastUpdatedAt: string;
  status: TaskStatus = "working";
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  inputRequests?: Record<string, InputRequest>;
  /** What the task is doing, for whoever polls: the child's latest progress while it works, why it waits, failed or was cancelled. */
  statusMessage?: string;
  /** When its kept outcome is dropped (TaskStore.keepFor). */
  expiry?: Timer;
  /** The size of its kept outcome, once it ended (TaskStore.keepFor). */
  keptBytes = 0;
  /** Whether a tasks/get has shown how it ended: a draining replica stays up until it has (hub/http/replica.ts). */
  outcomeRead = false;
  private answered?: () => void;
  /** Who hears each change of status (the 2025-11-25 front, ./legacy.ts: tasks/result waits on it, notifications/tasks/status tell it). */
  private readonly watchers = new Set<() => void>();
  private readonly call: PendingCall;
  /**
   * The round carrying the call while it is a task: no HTTP request, so nothing but tasks/cancel
   * (the call's own cancellation) ends it; the caller's envelope as it was sent; what the call
   * notifies stays here (progress becomes the statusMessage, log lines have nowhere to go).
   */
  private readonly round: CallRound;

  /** @param open the task's call: started with the task's own round, or one already in flight (its rounds end here) */
  constructor(
    readonly id: string,
    readonly tenant: string,
    /** The tool it runs, as the client named it (hub_sessions and the playground show it). */
    readonly tool: string,
    readonly ttlMs: number,
    open: (round: CallRound) => PendingCall,
    readonly meta: Record<string, unknown> | undefined,
    /** The hub's time, for the task's createdAt and lastUpdatedAt. */
    private readonly clock: Clock,
  ) {
    this.createdAt = this.lastUpdatedAt = this.now();
    const envelope = meta as CallRound["mcpReq"]["envelope"];
    this.round = { mcpReq: { envelope, signal: new AbortController().signal, notify: (notification) => this.heard(notification) }, detached: true };
    this.call = open(this.round);
    this.call.detached = true;
    this.call.taskId = id;
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private heard(notification: Parameters<CallRound["mcpReq"]["notify"]>[0]): Promise<void> {
    if (notification.method !== "notifications/progress" || this.status !== "working" || !notification.params) return Promise.resolve();
    const message = progressMessage(notification.params);
    if (message !== undefined && message !== this.statusMessage) {
      this.statusMessage = message;
      this.lastUpdatedAt = this.now();
    }
    return Promise.resolve();
  }

  get terminal(): boolean {
    return TERMINAL.has(this.status);
  }

  private set(status: TaskStatus, statusMessage?: string): void {
    this.status = status;
    this.statusMessage = statusMessage;
    this.lastUpdatedAt = this.now();
    for (const watcher of [...this.watchers]) watcher();
  }

  /** Calls `watcher` on each change of status until the returned function is called. */
  watch(watcher: () => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Follows the call round by round until it ends: each question puts the task in input_required until tasks/update answers it. */
  async follow(): Promise<void> {
    try {
      for (;;) {
        const next = await this.call.next(this.round);
        if (this.terminal) return;
        if ("result" in next) {
          // a tool's own error is a completed task with result.isError; "failed" is for protocol failures
          this.result = next.result;
          this.set("completed");
          return;
        }
        if (!("inputRequests" in next)) continue; // (a round without a deadline never ends running)
        this.inputRequests = next.inputRequests;
        const asked = Object.keys(next.inputRequests).length;
        this.set("input_required", `Waiting for the answer to ${asked === 1 ? "a request" : `${asked} requests`} in inputRequests: send it with tasks/update.`);
        await new Promise<void>((resolve) => (this.answered = resolve));
        if (this.terminal) return;
      }
    } catch (error) {
      if (this.terminal) return;
      this.error = errorObject(error);
      // the extension's SHOULD: a failed task says why in its statusMessage, beside the JSON-RPC error
      this.set("failed", this.error.message);
    } finally {
      for (const action of this.call.afterReply.splice(0)) queueMicrotask(action);
    }
  }

  /** tasks/update: the answers go to the questions the task is waiting on. */
  update(responses: Record<string, unknown>): void {
    if (this.status !== "input_required") return;
    this.inputRequests = undefined;
    this.call.answer(responses);
    this.set("working");
    this.answered?.();
  }

  /** tasks/cancel (or `by` another way): the call is cancelled (its child's process tree with it); a task that already ended stays as it ended. */
  cancel(by = "tasks/cancel"): void {
    if (this.terminal) return;
    this.inputRequests = undefined;
    this.set("cancelled", `Cancelled by ${by}.`);
    this.call.abandon(`The task was cancelled (${by}).`);
    this.answered?.();
  }

  /** The replica is shutting down with the task still running: it ends failed, saying why, and its call is cancelled. */
  fail(message: string): void {
    if (this.terminal) return;
    this.inputRequests = undefined;
    this.error = { code: -32000, message };
    this.set("failed", message);
    this.call.abandon(message);
    this.answered?.();
  }

  /** The task as tasks/get shows it (and only tasks/get asks): its outcome inlined once it has one. */
  detailed(): Record<string, unknown> {
    if (this.terminal) this.outcomeRead = true;
    return {
      ...this.info(),
      ...(this.status === "completed" ? { result: this.result } : {}),
      ...(this.status === "failed" ? { error: this.error } : {}),
      ...(this.status === "input_required" && this.inputRequests ? { inputRequests: this.inputRequests } : {}),
    };
  }

  /** What every task answer carries (CreateTaskResult is this, flat, with resultType "task"). */
  info(): Record<string, unknown> {
    return {
      taskId: this.id,
      status: this.status,
      ...(this.statusMessage !== undefined ? { statusMessage: this.statusMessage } : {}),
      createdAt: this.createdAt,
      lastUpdatedAt: this.lastUpdatedAt,
      ttlMs: this.ttlMs,
    };
  }
}

/** One hub's tasks, across its tenants. */
export class TaskStore {
  private readonly tasks = new Map<string, Task>();
  private readonly ids: TaskIds;
  private readonly ends = new EventEmitter();
  /** The same tasks by tenant: a tenant's count, its oldest and its listing never walk every tenant's tasks. */
  private readonly byTenant = new Map<string, Set<Task>>();

  /**
   * @param clock when tasks are stamped, and when an ended task's outcome is dropped (ttlMs after it ended)
   * @param replica AGENTBOX_REPLICA: task ids name it, so a router sends tasks/* to the replica holding the task.
   */
  constructor(
    private readonly limits: TaskLimits,
    private readonly clock: Clock,
    replica?: string,
  ) {
    this.ids = new TaskIds(replica);
  }

  /**
   * A new task of `tenant` for the call `open` returns: one it starts with the task's round, or one
   * already in flight (a tool's input_required rounds ending in a task). A tenant at its cap gets an
   * error, and `open` is not called.
   */
  create(tenant: string, tool: string, open: (round: CallRound) => PendingCall, meta: Record<string, unknown> | undefined): Task {
    const held = this.of(tenant);
    if (held.length >= this.limits.perTenant) {
      // a finished task's result makes room before a running one is refused: the oldest ended goes first
      const oldestEnded = held.filter((task) => task.terminal).sort((a, b) => a.lastUpdatedAt.localeCompare(b.lastUpdatedAt))[0];
      if (!oldestEnded)
        throw protocolError(
          ErrorCode.InvalidRequest,
          `This tenant has ${held.length} tasks running, the most it may (AGENTBOX_TASKS_PER_TENANT): cancel one with tasks/cancel, ` +
            "or wait for one to end, then call again.",
        );
      this.drop(oldestEnded);
    }
    const task = new Task(this.ids.mint(), tenant, tool, this.limits.ttlMs, open, meta, this.clock);
    this.tasks.set(task.id, task);
    this.byTenant.set(tenant, (this.byTenant.get(tenant) ?? new Set<Task>()).add(task));
    void task.follow().then(() => {
      this.keepFor(task);
      this.ends.emit("end");
    });
    return task;
  }

  private keepFor(task: Task): void {
    if (!this.tasks.has(task.id)) return; // dropped (the hub stopped, or it made room) before it ended
    task.keptBytes = Buffer.byteLength(JSON.stringify(task.result ?? task.error ?? null));
    // the tenant's kept outcomes stay within their byte budget: the oldest ended go first, this one stays
    const older = this.of(task.tenant)
      .filter((t) => t.terminal && t !== task)
      .sort((a, b) => a.lastUpdatedAt.localeCompare(b.lastUpdatedAt));
    let kept = older.reduce((sum, t) => sum + t.keptBytes, task.keptBytes);
    for (const old of older) {
      if (kept <= this.limits.resultBytes) break;
      kept -= old.keptBytes;
      this.drop(old);
    }
    task.expiry = this.clock.after(task.ttlMs, () => this.drop(task));
  }

  private drop(task: Task): void {
    task.expiry?.cancel();
    this.tasks.delete(task.id);
    const held = this.byTenant.get(task.tenant);
    held?.delete(task);
    if (held?.size === 0) this.byTenant.delete(task.tenant);
  }

  /** The tenant's task of this id; another tenant's, an expired or a made-up id is an unknown task (-32602). */
  get(tenant: string, taskId: unknown): Task {
    const task = typeof taskId === "string" ? this.tasks.get(taskId) : undefined;
    if (!task || task.tenant !== tenant)
      throw protocolError(
        ErrorCode.InvalidParams,
        this.ids.lostHolder(taskId) ??
          `Unknown task: no task ${JSON.stringify(taskId)} here (it never existed, belongs to someone else, or its result expired ttlMs after it ended).`,
      );
    return task;
  }

  /** Every task of a tenant (hub_sessions shows them). */
  of(tenant: string): Task[] {
    return [...(this.byTenant.get(tenant) ?? [])];
  }

  /** Tasks whose call has not ended yet (a draining replica waits for them: hub/http/replica.ts drain). */
  running(): Task[] {
    return [...this.tasks.values()].filter((task) => !task.terminal);
  }

  /** Resolves when the next task's call ends, or when `signal` aborts. */
  async nextEnd(signal: AbortSignal): Promise<void> {
    await once(this.ends, "end", { signal }).catch(() => undefined);
  }

  /** The hub is stopping: every task still running is cancelled. */
  close(): void {
    for (const task of this.tasks.values()) {
      task.cancel("the hub stopping");
      task.expiry?.cancel();
    }
    this.tasks.clear();
    this.byTenant.clear();
  }
}
