// A tools/call of a 2025 session whose client may be asked things during a call (it declared
// roots, elicitation or sampling, as most desktop and IDE clients do), started on the direct path
// (hub/http/endpoints/direct-call.ts). Most such calls end with a plain result and are answered
// as JSON, without the SDK's per-request work (about 0.25 ms of CPU a call; bench/README.md, table
// 8). The first time the call sends its client anything (a notification, a question), the request
// is handed to the session's SDK server, whose tools/call joins this call in flight
// (./server.ts): what the call sent until then goes out first, in order, and from then on the SDK
// carries it (the response stream, questions and their answers, resumability, cancellation).
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Child } from "../children/child.js";
import type { CallCancellation } from "../protocol/cancellation.js";
import type { CallChannel, ClientSession, JoinableCall } from "./registry.js";

/** Whether the session's client can be asked something during a call, which only the SDK's path can carry to it. */
export function mayBeAsked(session: ClientSession): boolean {
  const caps = session.clientCapabilities;
  return Boolean(caps.sampling || caps.elicitation || caps.roots);
}

export class HandedCall implements JoinableCall {
  /** The SDK's channel for the request, once its tools/call joined. */
  private joined?: CallChannel;
  private handedOver = false;
  /** What the call sent before the SDK joined, in order: each sent once it joins, or failed if it never does. */
  private readonly held: Array<{ send: (to: CallChannel) => void; fail: (error: Error) => void }> = [];
  private readonly afterReplyActions: Array<() => void> = [];
  private result?: Promise<CallToolResult>;
  readonly channel: CallChannel;

  /**
   * `aborter`: the call's cancellation, which the SDK's request signal also triggers once joined.
   * `handOver`: serves the same request through the session's SDK transport (called at most once).
   * `release`: the call is no longer the session's to join (the SDK took it, or refused it).
   */
  constructor(
    base: Pick<CallChannel, "requestId" | "requestBase">,
    private readonly aborter: CallCancellation,
    private readonly handOver: () => void,
    private readonly release: () => void,
  ) {
    this.channel = {
      ...base,
      signal: aborter,
      notify: (notification: ServerNotification) => this.viaSdk((to) => to.notify(notification)),
      request: (request: ServerRequest, signal: AbortSignal, inputKey?: string, asker?: Child) =>
        this.viaSdk((to) => to.request(request, signal, inputKey, asker)),
      afterReply: (action) => (this.joined ? this.joined.afterReply(action) : void this.afterReplyActions.push(action)),
    };
  }

  /** Whether the request went to the SDK: its reply is the SDK's, not the direct path's. */
  get handed(): boolean {
    return this.handedOver;
  }

  /** Whether the SDK's tools/call has taken the call over (a cancellation then goes the SDK's way too). */
  get adopted(): boolean {
    return this.joined !== undefined;
  }

  /** The call as started on the direct path. */
  running(result: Promise<CallToolResult>): void {
    this.result = result;
  }

  /** What runs once the direct path has written the reply (the call was never handed over). */
  takeAfterReply(): Array<() => void> {
    return this.afterReplyActions.splice(0);
  }

  /**
   * The SDK's tools/call for this request takes the call over: `to` is its channel. Undefined when
   * this request was not handed over, or was joined already (a request reusing its id is a call of its own).
   */
  join(to: CallChannel): Promise<CallToolResult> | undefined {
    if (!this.handedOver || this.joined || !this.result) return undefined;
    this.joined = to;
    this.release();
    to.signal.addEventListener("abort", () => this.aborter.abort(to.signal.reason));
    // synchronously, before the handler returns: the SDK writes them before the result
    for (const { send } of this.held.splice(0)) send(to);
    for (const action of this.afterReplyActions.splice(0)) to.afterReply(action);
    return this.result;
  }

  /** The SDK answered the handed request without taking the call: it ends, and nothing it sent waits for an answer. */
  refused(why: string): void {
    if (this.joined) return;
    this.release();
    this.aborter.abort(why);
    const error = new McpError(ErrorCode.InternalError, why);
    for (const { fail } of this.held.splice(0)) fail(error);
    // the SDK's reply (an error) is written: what waited for it may run
    for (const action of this.afterReplyActions.splice(0)) action();
  }

  private viaSdk<T>(send: (to: CallChannel) => Promise<T>): Promise<T> {
    if (this.joined) return send(this.joined);
    if (this.aborter.aborted) return Promise.reject(new McpError(ErrorCode.InternalError, "The call has ended."));
    const sent = new Promise<T>((resolve, reject) => this.held.push({ send: (to) => void send(to).then(resolve, reject), fail: reject }));
    if (!this.handedOver) {
      this.handedOver = true;
      this.handOver();
    }
    return sent;
  }
}
