// The tasks extension (io.modelcontextprotocol/tasks) for the page's 2026-07-28 tool calls, which
// the SDK v2 client does not implement: it refuses a tools/call answered with resultType "task".
// So the transport hands such an answer here instead of to the client: the call's request stays
// pending while this polls tasks/get, shows the task's questions (input_required) to the page and
// sends the answers with tasks/update, sends tasks/cancel when the call is cancelled, and finally
// gives the client the task's result or error as the answer to its tools/call.
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY, type JSONRPCMessage } from "@modelcontextprotocol/client";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * tasks/get is the only way a 2026-07-28 client hears of its task (the hub sends no status
 * notification in this era): it asks soon after a change, then less and less often while nothing
 * changes, so a task that runs for minutes costs a request every few seconds, not twice a second.
 */
export const POLL_FIRST_MS = 500;
const POLL_GROWTH = 1.5;
export const POLL_MAX_MS = 5000;

/** How long to wait before the next tasks/get, after waiting `previous` ms and seeing nothing change. */
export function nextPoll(previous: number): number {
  return Math.min(POLL_MAX_MS, Math.round(previous * POLL_GROWTH));
}
/** Keeps the client's per-request timeout from running out on a task that runs long in silence (a progress notification resets it). */
const KEEP_ALIVE_MS = 30_000;

type Id = string | number;
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** A question of a task's child (an entry of inputRequests): elicitation/create, sampling/createMessage, roots/list. */
export interface InputRequest {
  method: string;
  params?: Record<string, unknown>;
}

/** What the page sees of a task one of its calls runs as. */
export interface TaskState {
  taskId: string;
  tool: string;
  status: TaskStatus;
  /** The request of the page's tools/call it answers. */
  requestId: Id;
}

export interface TaskEvents {
  /** A call became a task, or its task changed status. */
  onTask(task: TaskState): void;
  /** The task waits for input: `answer` sends the answers (by key) with tasks/update. */
  onInput(task: TaskState, requests: Record<string, InputRequest>, answer: (responses: Record<string, unknown>) => Promise<void>): void;
}

interface Outgoing {
  tool: string;
  envelope: Record<string, unknown>;
  progressToken?: string | number;
  signal?: AbortSignal;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export class TaskCalls {
  private readonly calls = new Map<Id, Outgoing>();
  private readonly replies = new Map<Id, (message: Record<string, unknown>) => void>();
  private sequence = 0;

  /**
   * @param send sends a request of the page's own on the connection's transport (the page's log shows it)
   * @param deliver gives the client a message as if the hub had sent it
   */
  constructor(
    private readonly send: (message: JSONRPCMessage) => Promise<void>,
    private readonly deliver: (message: JSONRPCMessage) => void,
    private readonly events: TaskEvents,
  ) {}

  /** A message the client sends: a tools/call is remembered, with its envelope, until its answer says what it became. */
  outgoing(message: JSONRPCMessage, signal?: AbortSignal): void {
    const m = message as { id?: Id; method?: string; params?: { name?: unknown; _meta?: Record<string, unknown> } };
    const meta = m.params?._meta ?? {};
    // only a 2026-07-28 call (its envelope in _meta) may be answered with a task
    if (m.method !== "tools/call" || m.id === undefined || !(PROTOCOL_VERSION_META_KEY in meta)) return;
    const id = m.id;
    // a call cancelled before its answer gets none
    signal?.addEventListener("abort", () => this.calls.delete(id), { once: true });
    const envelope = Object.fromEntries(
      [PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY].filter((key) => key in meta).map((key) => [key, meta[key]]),
    );
    const token = meta.progressToken;
    this.calls.set(id, {
      tool: String(m.params?.name ?? ""),
      envelope,
      progressToken: typeof token === "string" || typeof token === "number" ? token : undefined,
      signal,
    });
  }

  /** A message from the hub: true when it was this module's (an answer to its own request, or a tools/call answered with a task). */
  incoming(message: JSONRPCMessage): boolean {
    const m = message as { id?: Id; result?: unknown };
    if (m.id === undefined || "method" in message) return false;
    const waiting = this.replies.get(m.id);
    if (waiting) {
      this.replies.delete(m.id);
      waiting(message as Record<string, unknown>);
      return true;
    }
    const call = this.calls.get(m.id);
    if (!call) return false;
    this.calls.delete(m.id);
    if (!isObject(m.result) || m.result.resultType !== "task" || typeof m.result.taskId !== "string") return false;
    void this.follow(m.id, call, m.result.taskId, m.result.status as TaskStatus);
    return true;
  }

  /** A request of the page's own (tasks/get, tasks/update, tasks/cancel), answered through `incoming`. */
  private request(method: string, params: Record<string, unknown>, envelope: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = `task-${++this.sequence}`;
    return new Promise((resolve, reject) => {
      this.replies.set(id, (reply) => {
        const error = reply.error as { message?: string } | undefined;
        if (error) reject(new Error(`${method}: ${error.message ?? "failed"}`));
        else resolve(isObject(reply.result) ? reply.result : {});
      });
      this.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta: envelope } } as JSONRPCMessage).catch((err: unknown) => {
        this.replies.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      });
    });
  }

  private async follow(requestId: Id, call: Outgoing, taskId: string, first: TaskStatus): Promise<void> {
    const state: TaskState = { taskId, tool: call.tool, status: first, requestId };
    this.events.onTask({ ...state });
    // the page's Cancel aborts the client's request: the task is what has to stop, and the page hears how it ended
    // (cancelled, or completed if it ended first: a task that ended stays as it ended)
    const onAbort = () =>
      void this.request("tasks/cancel", { taskId }, call.envelope)
        .catch(() => undefined)
        .then(() => this.request("tasks/get", { taskId }, call.envelope))
        .then((task) => this.events.onTask({ ...state, status: task.status as TaskStatus }))
        .catch(() => undefined);
    call.signal?.addEventListener("abort", onAbort, { once: true });
    const asked = new Set<string>();
    let lastSign = Date.now();
    let wait = POLL_FIRST_MS;
    /** Ends the pause between two polls early: the call was cancelled, or the page answered the task's questions. */
    let wake = () => {};
    try {
      for (;;) {
        if (call.signal?.aborted) return;
        const task = await this.request("tasks/get", { taskId }, call.envelope);
        if (call.signal?.aborted) return;
        const status = task.status as TaskStatus;
        if (status !== state.status) this.events.onTask({ ...state, status });
        wait = status !== state.status ? POLL_FIRST_MS : nextPoll(wait);
        state.status = status;
        if (status === "completed") return this.deliver({ jsonrpc: "2.0", id: requestId, result: { ...(task.result as object), resultType: "complete" } });
        if (status === "failed") return this.deliver({ jsonrpc: "2.0", id: requestId, error: task.error as { code: number; message: string } });
        if (status === "cancelled")
          return this.deliver({
            jsonrpc: "2.0",
            id: requestId,
            error: { code: -32603, message: `Task ${taskId} was cancelled (by another client of this tenant, or the hub).` },
          });
        if (status === "input_required" && isObject(task.inputRequests)) {
          const fresh = Object.keys(task.inputRequests).filter((key) => !asked.has(key));
          if (fresh.length) {
            fresh.forEach((key) => asked.add(key));
            const requests = task.inputRequests as Record<string, InputRequest>;
            this.events.onInput({ ...state }, requests, async (responses) => {
              await this.request("tasks/update", { taskId, inputResponses: responses }, call.envelope);
              // answered, the task works on at once: look again now, then soon
              wait = POLL_FIRST_MS;
              wake();
            });
          }
        }
        if (call.progressToken !== undefined && Date.now() - lastSign > KEEP_ALIVE_MS) {
          lastSign = Date.now();
          this.deliver({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: call.progressToken, progress: lastSign } });
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            call.signal?.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, wait);
          wake = done;
          call.signal?.addEventListener("abort", done, { once: true });
        });
      }
    } catch (err) {
      if (!call.signal?.aborted)
        this.deliver({ jsonrpc: "2.0", id: requestId, error: { code: -32603, message: `Lost task ${taskId}: ${(err as Error).message}` } });
    } finally {
      call.signal?.removeEventListener("abort", onAbort);
    }
  }
}
