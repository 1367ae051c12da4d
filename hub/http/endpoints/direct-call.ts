// The hot path: a plain tools/call answered without an SDK server or SDK transport. Its params go
// to ToolCalls as they came and the child's result comes back as it was sent, serialized once
// into the HTTP reply: no schema parse of the request, no rebuild or re-validation of the result
// (the child already validated it), no SSE stream or event store. Anything this path does not
// cover (initialize, progress, clients that do tasks, batches, malformed requests) goes the SDK's
// way, which answers it to the letter.
//
// Should the call send something before its result after all (a log line, hub_find_tools' list
// change), a client that reads SSE gets the reply as an SSE stream from that moment on, so
// nothing is lost or reordered; a plain JSON client gets the result alone, as on the SDK path. A
// client that can be asked things (sampling, elicitation, roots) gets the SDK's stream instead:
// its request is handed to the session's SDK server, which joins the call (../../sessions/handed-call.ts).
import {
  ErrorCode,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type RequestId,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { CallCancellation } from "../../protocol/cancellation.js";
import { requestIdKey } from "../../protocol/call-table.js";
import { isPlainObject, resultMessage } from "../../protocol/jsonrpc.js";
import type { Params } from "../../sessions/forward.js";
import type { HubServices } from "../services.js";
import type { SessionView } from "../../catalog/selection.js";
import { SESSION_CLOSED, type CallChannel, type ClientSession } from "../../sessions/registry.js";
import { acceptsMediaType, mediaTypeOf } from "../../../servers/lib/media-type.js";
import { acceptsSse } from "./sse-to-json.js";
import { HandedCall, mayBeAsked } from "../../sessions/handed-call.js";
import type { RequestBase } from "../../previews/public-address.js";

export interface DirectToolCall {
  jsonrpc: "2.0";
  id: RequestId;
  method: "tools/call";
  params: unknown;
}

/**
 * A single, well-formed tools/call from a client this path can serve. `canHandOver`: the session
 * has an SDK transport to hand the call to should it ask its client something (../../sessions/handed-call.ts).
 */
export function isDirectToolCall(body: unknown, headers: Headers, session: ClientSession, canHandOver = false): body is DirectToolCall {
  if (!isPlainObject(body) || body.method !== "tools/call" || body.jsonrpc !== "2.0") return false;
  if (typeof body.id !== "string" && !Number.isSafeInteger(body.id)) return false;
  if (session.directCalls.has(requestIdKey(body.id as RequestId))) return false; // a duplicate id in flight: the SDK's to answer
  const meta = (body.params as { _meta?: unknown } | undefined)?._meta;
  if (isPlainObject(meta) && "progressToken" in meta) return false;
  // a call as a task (2025-11-25 params.task), and any call of a client that does tasks (a required-task tool refuses a plain call), are hub/tasks/legacy.ts's
  if (isPlainObject(body.params) && "task" in body.params) return false;
  // a call may ask the client something only on its own response stream, which only the SDK keeps: such a call is handed to it when it does
  if (session.clientCapabilities.tasks || (mayBeAsked(session) && !canHandOver)) return false;
  // no Accept at all is a plain JSON client, answered with JSON on every path
  const accept = headers.get("accept");
  if (accept !== null && !acceptsMediaType(accept, "application/json") && !acceptsMediaType(accept, "*/*")) return false;
  if (mediaTypeOf(headers.get("content-type")) !== "application/json") return false;
  const version = headers.get("mcp-protocol-version");
  return version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

const kindOf = (value: unknown) => (Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`);

/** What is wrong with a tools/call's params, in words a client's developer can act on; undefined when nothing. */
function paramsProblem(params: unknown): string | undefined {
  if (!isPlainObject(params)) return `params must be an object with the tool's name and arguments, not ${kindOf(params)}`;
  if (typeof params.name !== "string") return `params.name must be the tool's name as a string, not ${kindOf(params.name)}`;
  if (params.arguments !== undefined && !isPlainObject(params.arguments))
    return `params.arguments must be an object of the tool's arguments by name, not ${kindOf(params.arguments)}`;
  if (params._meta !== undefined && !isPlainObject(params._meta)) return `params._meta must be an object, not ${kindOf(params._meta)}`;
  return undefined;
}

/** A client's notifications/cancelled for a call on this path: the call is aborted; true when it was one. */
export function cancelsDirectCall(body: unknown, session: ClientSession): boolean {
  if (!isPlainObject(body) || body.method !== "notifications/cancelled" || "id" in body) return false;
  const id = (body.params as { requestId?: RequestId } | undefined)?.requestId;
  if (typeof id !== "string" && typeof id !== "number") return false;
  // a call the SDK has taken over is cancelled the SDK's way (its request signal aborts the call too)
  if (session.handedCalls.get(requestIdKey(id))?.adopted) return false;
  const call = session.directCalls.get(requestIdKey(id));
  call?.abort("cancelled by the client");
  return call !== undefined;
}

const encoder = new TextEncoder();
const sseEvent = (message: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

/** The HTTP reply of one direct call: JSON once the result is in, or an SSE stream once anything comes first. */
class DirectReply {
  readonly response: Promise<Response>;
  private resolve!: (response: Response | Promise<Response>) => void;
  private stream?: ReadableStreamDefaultController<Uint8Array>;

  constructor(
    private readonly sse: boolean,
    private readonly headers: Record<string, string>,
  ) {
    this.response = new Promise((resolve) => (this.resolve = resolve));
  }

  /** The reply is the SDK's (the call was handed to it). */
  handOver(response: Promise<Response>): void {
    this.resolve(response);
  }

  notify(message: JSONRPCMessage): void {
    if (!this.sse) return;
    if (!this.stream) {
      const body = new ReadableStream<Uint8Array>({ start: (controller) => void (this.stream = controller) });
      this.resolve(
        new Response(body, { status: 200, headers: { ...this.headers, "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" } }),
      );
    }
    enqueue(this.stream!, sseEvent(message));
  }

  /** The JSON-RPC response, or none for a call the client cancelled. */
  finish(reply: object | undefined): void {
    if (!this.stream) {
      if (reply === undefined) return this.resolve(new Response(null, { status: 202, headers: this.headers }));
      return this.resolve(new Response(JSON.stringify(reply), { status: 200, headers: { ...this.headers, "content-type": "application/json" } }));
    }
    if (reply !== undefined) enqueue(this.stream, sseEvent(reply));
    try {
      this.stream.close();
    } catch {
      // the client went away first
    }
  }
}

function enqueue(controller: ReadableStreamDefaultController<Uint8Array>, chunk: Uint8Array): void {
  try {
    controller.enqueue(chunk);
  } catch {
    // the client closed the stream; the call runs to its end and its result is dropped
  }
}

function errorReply(id: RequestId, err: unknown, signal: CallCancellation): object | undefined {
  if (signal.aborted && signal.reason !== SESSION_CLOSED) return undefined;
  const error = signal.aborted
    ? { code: ErrorCode.ConnectionClosed, message: "The session was closed before this request finished." }
    : err instanceof McpError
      ? { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) }
      : { code: ErrorCode.InternalError, message: `Internal error: ${(err as Error).message}` };
  return { jsonrpc: "2.0", id, error };
}

/**
 * Run a direct tools/call for a session and answer it over HTTP. `handOver` serves the same request
 * through the session's SDK transport: a call of a client that may be asked something goes there the
 * moment it sends its client anything.
 */
export async function answerToolCall(
  hub: HubServices,
  session: ClientSession,
  view: SessionView,
  call: DirectToolCall,
  req: Request,
  base: RequestBase,
  sessionId?: string,
  handOver?: () => Promise<Response>,
): Promise<Response> {
  const reply = new DirectReply(acceptsSse(req), sessionId ? { "mcp-session-id": sessionId } : {});
  const problem = paramsProblem(call.params);
  if (problem) {
    reply.finish({ jsonrpc: "2.0", id: call.id, error: { code: ErrorCode.InvalidParams, message: `Invalid tools/call: ${problem}.` } });
    return reply.response;
  }
  const aborter = new CallCancellation();
  const key = requestIdKey(call.id);
  session.directCalls.set(key, aborter);
  const afterReply: Array<() => void> = [];
  const handed = handOver && mayBeAsked(session) ? handable(session, call, base, aborter, reply, handOver) : undefined;
  const channel: CallChannel = handed?.channel ?? {
    signal: aborter,
    requestId: call.id,
    requestBase: base,
    notify: async (notification: ServerNotification) => reply.notify({ jsonrpc: "2.0", ...notification } as JSONRPCMessage),
    // a client that could be asked anything gets the handed channel above, or stays off this path (isDirectToolCall)
    request: async (request) => {
      throw new McpError(ErrorCode.InvalidRequest, `The client of this session cannot be asked ${request.method}.`);
    },
    afterReply: (action) => void afterReply.push(action),
  };
  const running = hub.toolCalls.call(session, view, call.params as Params, channel);
  handed?.running(running);
  running
    .then(
      // a handed call's reply is the SDK's
      (result) => handed?.handed || reply.finish(aborter.aborted && aborter.reason !== SESSION_CLOSED ? undefined : resultMessage(call.id, result)),
      (err: unknown) => handed?.handed || reply.finish(errorReply(call.id, err, aborter)),
    )
    .finally(() => {
      session.directCalls.delete(key);
      // a handed call stays joinable until the SDK's tools/call for it runs, which may be after it ended
      if (handed?.handed) return;
      if (handed) session.handedCalls.delete(key);
      // reply.finish has written the reply: it is out of the session's hands
      for (const action of handed?.takeAfterReply() ?? afterReply) action();
    });
  return reply.response;
}

/** The call of a client that may be asked something: JSON when it ends first, the SDK's from the moment it sends its client anything. */
function handable(
  session: ClientSession,
  call: DirectToolCall,
  base: RequestBase,
  aborter: CallCancellation,
  reply: DirectReply,
  handOver: () => Promise<Response>,
): HandedCall {
  const key = requestIdKey(call.id);
  const handed: HandedCall = new HandedCall(
    { requestId: call.id, requestBase: base },
    aborter,
    () => {
      const response = handOver();
      reply.handOver(response);
      // the SDK refused the request (the session closed meanwhile) or failed: the call ends, its questions unanswered
      response.then(
        (res) => void (res.status >= 400 && handed.refused(`The session's SDK transport answered the handed call with HTTP ${res.status}.`)),
        (err: unknown) => handed.refused(`The session's SDK transport failed the handed call: ${(err as Error).message}`),
      );
    },
    () => session.handedCalls.delete(key),
  );
  session.handedCalls.set(key, handed);
  return handed;
}
