// The hub's own requests to a child (a forwarded tools/call, resources/read, ...), sent and
// matched on the child's transport beside the SDK Client that owns the connection. A relay has
// no use for the Client's per-message schema checks and result parsing: the request is
// serialized once and the reply is handed back as the child sent it. Ids are strings of this
// module's own ("h1", "h2", ...), so they never meet the Client's numeric ones; timeouts,
// progress and cancellation behave as the SDK's do.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type JSONRPCMessage, type Result } from "@modelcontextprotocol/sdk/types.js";
import type { Cancellation } from "../protocol/cancellation.js";
import { CallTable } from "../protocol/call-table.js";
import { noteSize } from "./message-sizes.js";

export interface CallOptions {
  signal?: Cancellation;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Whether nobody waits on the reply now (a call run as a task): such a call is bounded by
   * maxTotalMs alone, not by timeoutMs without progress, which is there for a client holding a
   * request open. Asked when the idle timer runs out, so a call that became a task midway counts.
   */
  detached?: () => boolean;
  /** Hears why the call waits for a slot of its server when it must, and for a task, that it got one (./queue.ts). */
  onqueue?: (status: string) => void;
  /** Whose turn the call runs in, should its server take turns (./queue.ts). */
  turn?: string;
  /** Hears that the call got its slot: from then on the child may be running it. */
  onstart?: () => void;
  /**
   * The token the child reports this call's progress under, instead of the request's own id: a
   * child's task reports its progress under its tools/call's token, which its tasks/result then hears (./child-task.ts).
   */
  progressToken?: string;
  /**
   * Hears that the call goes to the child as a task of the child's own (./child-task.ts): first
   * without an id, as it is sent, then with the task's id once the child has created it.
   */
  onChildTask?: (taskId: string | undefined) => void;
}

export interface CallLimits {
  /** Time without a reply or progress after which a call is cancelled. */
  timeoutMs: number;
  /** Time after which a call is cancelled whatever progress it reports. */
  maxTotalMs: number;
  /** Largest request (serialized) the child is sent. */
  maxMessageBytes: number;
}

/** A request larger than a child's stdio reader takes: refused before it can wedge the child. */
export class MessageTooLargeError extends Error {}

interface Pending {
  /** The number in the request's id (`h<n>`), its key among the calls in flight. */
  n: number;
  resolve(result: Result): void;
  fail(error: Error): void;
  onprogress?: CallOptions["onprogress"];
  timer: NodeJS.Timeout;
  startedAt: number;
  /** A progress token other than the request's id that reports on it. */
  token?: string;
}

type Incoming = {
  id?: unknown;
  method?: unknown;
  params?: { progressToken?: unknown };
  result?: Result;
  error?: { code: number; message: string; data?: unknown };
};

const totalTimeout = (maxTotalMs: number) => new McpError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", { maxTotalTimeout: maxTotalMs });
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** The number in one of the hub's request ids (`h<n>`, exactly as sent), else undefined: a child cannot name a call by another spelling. */
function idNumber(id: string): number | undefined {
  if (id.charCodeAt(0) !== 104 /* h */) return undefined;
  const n = Number(id.slice(1));
  return Number.isSafeInteger(n) && n > 0 && `h${n}` === id ? n : undefined;
}

export class ChildCalls {
  private nextId = 1;
  private readonly pending = new CallTable<Pending>();
  /** The request each progress token other than a request's own id reports on (only strings and numbers: a Map holds nothing of a call). */
  private readonly progressOf = new Map<string, number>();

  constructor(
    private readonly transport: Transport & { sendText?(json: string): Promise<void> },
    private readonly limits: CallLimits,
    private readonly serverName: string,
  ) {}

  get inFlight(): number {
    return this.pending.size;
  }

  /** Takes a message from the child if it answers or reports progress on one of these calls; false leaves it to the SDK. */
  take(message: JSONRPCMessage): boolean {
    const m = message as Incoming;
    if (typeof m.id === "string" && m.method === undefined) {
      const n = idNumber(m.id);
      const call = n === undefined ? undefined : this.pending.get(n);
      if (!call) return false;
      this.settle(call.n);
      if (m.error) call.fail(new McpError(m.error.code, m.error.message, m.error.data));
      else call.resolve(m.result ?? {});
      return true;
    }
    if (m.method !== "notifications/progress" || typeof m.params?.progressToken !== "string") return false;
    const n = this.progressOf.get(m.params.progressToken) ?? idNumber(m.params.progressToken);
    const call = n === undefined ? undefined : this.pending.get(n);
    if (!call) return false;
    if (Date.now() - call.startedAt > this.limits.maxTotalMs) {
      this.cancel(call.n, totalTimeout(this.limits.maxTotalMs));
      return true;
    }
    call.timer.refresh();
    const { progressToken: _token, ...progress } = m.params as { progressToken: string; progress: number };
    call.onprogress?.(progress);
    return true;
  }

  request(method: string, params: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<Result> {
    if (options.signal?.aborted) throw options.signal.reason;
    const n = this.nextId++;
    const id = `h${n}`;
    const token = options.progressToken ?? id;
    const sent = options.onprogress ? { ...params, _meta: { ...(params?._meta as object | undefined), progressToken: token } } : params;
    const message = { jsonrpc: "2.0" as const, id, method, ...(sent !== undefined ? { params: sent } : {}) };
    const json = JSON.stringify(message);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.limits.maxMessageBytes) {
      throw new MessageTooLargeError(
        `The request is ${mib(bytes)} MiB; the '${this.serverName}' server takes at most ${mib(this.limits.maxMessageBytes)} MiB per ` +
          `message (AGENTBOX_MAX_MESSAGE_BYTES). ` +
          "Send large content in parts, or write it to a workspace file and pass its path instead.",
      );
    }
    noteSize(params?.arguments, bytes);
    // What outlives this function (the call's timer, its pending entry, its listener on the signal)
    // reaches only these, never `options`: through the caller's options they reached the whole call
    // (its channel, HTTP request and reply), so whatever still held one of them after the call (the
    // retired tables of the Map the entries once lived in: ../protocol/call-table.ts) kept all of
    // that alive through young-generation collections (bench/README.md)
    const { signal, detached, onprogress } = options;
    return new Promise((resolve, reject) => {
      const onAbort = () => this.cancel(n, signal!.reason instanceof Error ? signal!.reason : new McpError(ErrorCode.RequestTimeout, String(signal!.reason)));
      const idle = (): void => {
        const call = this.pending.get(n);
        if (!call) return;
        if (!detached?.()) return this.cancel(n, new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: this.limits.timeoutMs }));
        const left = this.limits.maxTotalMs - (Date.now() - call.startedAt);
        if (left <= 0) return this.cancel(n, totalTimeout(this.limits.maxTotalMs));
        call.timer = setTimeout(idle, Math.min(left, this.limits.timeoutMs));
      };
      const timer = setTimeout(idle, this.limits.timeoutMs);
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.pending.set(n, {
        n,
        resolve: (result) => (done(), resolve(result)),
        fail: (error) => (done(), reject(error)),
        onprogress,
        timer,
        startedAt: Date.now(),
        ...(onprogress && token !== id ? { token } : {}),
      });
      if (onprogress && token !== id) this.progressOf.set(token, n);
      signal?.addEventListener("abort", onAbort, { once: true });
      // a transport that takes text gets the string already made for the size check; any other serializes the message itself
      const write = this.transport.sendText ? this.transport.sendText(json) : this.transport.send(message);
      write.catch((err: Error) => this.failWith(n, err));
    });
  }

  /** Fail every call in flight: the connection is gone. */
  closeAll(): void {
    for (const call of [...this.pending]) this.failWith(call.n, new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
  }

  private cancel(n: number, reason: Error): void {
    if (!this.pending.has(n)) return;
    this.failWith(n, reason);
    const notice = { jsonrpc: "2.0" as const, method: "notifications/cancelled", params: { requestId: `h${n}`, reason: reason.message } };
    this.transport.send(notice).catch(() => undefined);
  }

  private failWith(n: number, error: Error): void {
    const call = this.pending.get(n);
    if (call && this.settle(n)) call.fail(error);
  }

  private settle(n: number): boolean {
    const call = this.pending.get(n);
    if (!call) return false;
    clearTimeout(call.timer);
    this.pending.delete(n);
    if (call.token !== undefined) this.progressOf.delete(call.token);
    return true;
  }
}
