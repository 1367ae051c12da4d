// Tool calls run as tasks (the MCP extension io.modelcontextprotocol/tasks, SEP-2663) for
// 2026-07-28 clients: the hub answers tools/call with a task at once and holds the call itself, so
// a long call outlives the HTTP request that started it and the client polls it with tasks/get.
// A task is its tenant's alone (another tenant's id is an unknown task), keeps its outcome for
// ttlMs after it ends, and runs through the same PendingCall / ToolCalls path as a plain call, so
// selection, rate limits, contexts and cancellation (the child's whole process tree) apply once.
// The SDK v2 answers tasks/* on a 2026 connection with -32601, so hub/http/endpoints/modern.ts
// hands those methods here before the SDK sees them.
import { randomUUID } from "node:crypto";
import type { InputRequest, ServerContext } from "@modelcontextprotocol/server";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { protocolError } from "../protocol/jsonrpc.js";
import type { PendingCall } from "../sessions/input-required.js";

export { TASKS_EXTENSION } from "../sessions/modern-server.js";

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

/** What a round of a task's call carries: no HTTP request, so nothing cancels it but tasks/cancel, and its notifications have nowhere to go. */
function taskRound(id: string, meta: Record<string, unknown> | undefined, signal: AbortSignal): ServerContext {
  return {
    mcpReq: { id, method: "tools/call", _meta: meta, envelope: meta, signal, requestState: () => undefined, notify: () => Promise.resolve() },
  } as unknown as ServerContext;
}

const now = () => new Date().toISOString();

/** A JSON-RPC error object as tasks/get inlines it for a failed task. */
function errorObject(error: unknown): { code: number; message: string; data?: unknown } {
  const e = error as { code?: unknown; message?: unknown; data?: unknown } | null;
  const code = typeof e?.code === "number" ? e.code : ErrorCode.InternalError;
  const message = typeof e?.message === "string" ? e.message : String(error);
  return e?.data === undefined ? { code, message } : { code, message, data: e.data };
}

export class Task {
  readonly id = randomUUID();
  readonly createdAt = now();
  lastUpdatedAt = this.createdAt;
  status: TaskStatus = "working";
  /** The tool it runs, as the client named it (hub_sessions and the playground show it). */
  tool = "";
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  inputRequests?: Record<string, InputRequest>;
  expiry?: NodeJS.Timeout;
  /** The size of its kept outcome, once it ended (TaskStore.keepFor). */
  keptBytes = 0;
  private answered?: () => void;
  /** Never aborted by a client going away: only tasks/cancel (through the call's cancellation) ends the call early. */
  private readonly rounds = new AbortController();

  constructor(
    readonly tenant: string,
    readonly ttlMs: number,
    private readonly call: PendingCall,
    readonly meta: Record<string, unknown> | undefined,
  ) {}

  round(): ServerContext {
    return taskRound(this.id, this.meta, this.rounds.signal);
  }

  get terminal(): boolean {
    return TERMINAL.has(this.status);
  }

  private set(status: TaskStatus): void {
    this.status = status;
    this.lastUpdatedAt = now();
  }

  /** Follows the call round by round until it ends: each question puts the task in input_required until tasks/update answers it. */
  async follow(): Promise<void> {
    try {
      for (;;) {
        const next = await this.call.next(this.round());
        if (this.terminal) return;
        if ("result" in next) {
          // a tool's own error is a completed task with result.isError; "failed" is for protocol failures
          this.result = next.result;
          this.set("completed");
          return;
        }
        this.inputRequests = next.inputRequests;
        this.set("input_required");
        await new Promise<void>((resolve) => (this.answered = resolve));
        if (this.terminal) return;
      }
    } catch (error) {
      if (this.terminal) return;
      this.error = errorObject(error);
      this.set("failed");
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

  /** tasks/cancel: the call is cancelled (its child's process tree with it); a task that already ended stays as it ended. */
  cancel(): void {
    if (this.terminal) return;
    this.inputRequests = undefined;
    this.set("cancelled");
    this.call.abandon("The task was cancelled (tasks/cancel).");
    this.answered?.();
  }

  /** The task as tasks/get shows it: its outcome inlined once it has one. */
  detailed(): Record<string, unknown> {
    return {
      ...this.info(),
      ...(this.status === "completed" ? { result: this.result } : {}),
      ...(this.status === "failed" ? { error: this.error } : {}),
      ...(this.status === "input_required" && this.inputRequests ? { inputRequests: this.inputRequests } : {}),
    };
  }

  /** What every task answer carries (CreateTaskResult is this, flat, with resultType "task"). */
  info(): Record<string, unknown> {
    return { taskId: this.id, status: this.status, createdAt: this.createdAt, lastUpdatedAt: this.lastUpdatedAt, ttlMs: this.ttlMs };
  }
}

/** One hub's tasks, across its tenants. */
export class TaskStore {
  private readonly tasks = new Map<string, Task>();

  constructor(private readonly limits: TaskLimits) {}

  /** A new task for `call` (not yet started: `start` runs it once the task exists, so a tasks/get right after the answer finds it). */
  create(tenant: string, open: (round: ServerContext) => PendingCall, meta: Record<string, unknown> | undefined): Task {
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
    const call = open(taskRound("", meta, new AbortController().signal));
    const task = new Task(tenant, this.limits.ttlMs, call, meta);
    this.tasks.set(task.id, task);
    void task.follow().then(() => this.keepFor(task));
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
    task.expiry = setTimeout(() => this.tasks.delete(task.id), task.ttlMs);
    task.expiry.unref();
  }

  private drop(task: Task): void {
    clearTimeout(task.expiry);
    this.tasks.delete(task.id);
  }

  /** The tenant's task of this id; another tenant's, an expired or a made-up id is an unknown task (-32602). */
  get(tenant: string, taskId: unknown): Task {
    const task = typeof taskId === "string" ? this.tasks.get(taskId) : undefined;
    if (!task || task.tenant !== tenant)
      throw protocolError(
        ErrorCode.InvalidParams,
        `Unknown task: no task ${JSON.stringify(taskId)} here (it never existed, belongs to someone else, or its result expired ttlMs after it ended).`,
      );
    return task;
  }

  /** Every task of a tenant (hub_sessions shows them). */
  of(tenant: string): Task[] {
    return [...this.tasks.values()].filter((task) => task.tenant === tenant);
  }

  /** The hub is stopping: every task still running is cancelled. */
  close(): void {
    for (const task of this.tasks.values()) {
      task.cancel();
      clearTimeout(task.expiry);
    }
    this.tasks.clear();
  }
}
