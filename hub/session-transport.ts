// The transport of one Streamable HTTP session. It is the SDK's, with one addition: a request that
// does not expect to stream is answered with plain JSON straight from the session's server, without
// the SSE stream, event store and web streams the SDK sets up for every POST (profiled, that
// machinery was most of what a forwarded call cost the hub and the client). Should the call send
// anything before its result after all (a log line, a question for the client), the reply turns
// into an SSE stream at that moment, so nothing is lost or reordered.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { ClientSession } from "./sessions.js";

export type DirectReply = { jsonrpc: "2.0"; id: RequestId; result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** How a direct request ends: its reply, a stream the reply turned into, or cancelled by the client. */
export type DirectOutcome = { reply: DirectReply } | { stream: ReadableStream<Uint8Array> } | { cancelled: true };

interface DirectCall {
  settle(outcome: DirectOutcome): void;
  /** Set once the call sent something before its result and the reply became SSE. */
  stream?: ReadableStreamDefaultController<Uint8Array>;
}

const encoder = new TextEncoder();
const sseEvent = (message: JSONRPCMessage) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

function responseTo(message: JSONRPCMessage): DirectReply | undefined {
  const isResponse = "id" in message && message.id !== undefined && ("result" in message || "error" in message);
  return isResponse ? (message as DirectReply) : undefined;
}

/**
 * A single request that need not stream: well formed, not initialize, no progress wanted, from a
 * client the call cannot ask for a completion or user input (no sampling, no elicitation). Those
 * go the SDK's way, with resumable streams, and so does anything malformed, for its errors.
 */
export function directlyAnswerable(body: unknown, headers: Headers, session: ClientSession): body is JSONRPCRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const message = body as Record<string, unknown>;
  if (message.jsonrpc !== "2.0" || typeof message.method !== "string" || message.method === "initialize") return false;
  if (typeof message.id !== "string" && (typeof message.id !== "number" || !Number.isFinite(message.id))) return false;
  const params = message.params;
  if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))) return false;
  const meta = (params as { _meta?: unknown } | undefined)?._meta;
  if (meta !== undefined && (typeof meta !== "object" || meta === null || "progressToken" in meta)) return false;

  const caps = session.clientCapabilities;
  if (caps.sampling || caps.elicitation) return false;

  // no Accept at all is a plain JSON client, answered with JSON on every path
  const accept = headers.get("accept");
  if (accept !== null && !accept.includes("application/json") && !accept.includes("*/*")) return false;
  const mediaType = (headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (mediaType !== "application/json") return false;
  const version = headers.get("mcp-protocol-version");
  return version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

export class SessionTransport extends WebStandardStreamableHTTPServerTransport {
  private readonly direct = new Map<RequestId, DirectCall>();

  constructor(options: ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0]) {
    super(options);
    // runs before the server's own handler (Protocol.connect chains it): a cancelled request gets
    // no response from the server, so its POST is ended here
    this.onmessage = (message) => {
      if ("method" in message && message.method === "notifications/cancelled") {
        const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (id !== undefined) this.finish(id, { cancelled: true });
      }
    };
  }

  /** Hand one request to the session's server; resolves with its reply or the stream it became. */
  answerDirectly(request: JSONRPCRequest, extra: MessageExtraInfo): Promise<DirectOutcome> | undefined {
    // a second request under an id still in flight: let the SDK path deal with the duplicate
    if (this.direct.has(request.id)) return undefined;
    return new Promise((settle) => {
      this.direct.set(request.id, { settle });
      try {
        this.onmessage?.(request, extra);
      } catch (err) {
        const error = { code: ErrorCode.InternalError, message: `Internal error: ${(err as Error).message}` };
        this.finish(request.id, { reply: { jsonrpc: "2.0", id: request.id, error } });
      }
    });
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const response = responseTo(message);
    if (response) {
      if (this.finish(response.id, { reply: response })) return;
    } else if (options?.relatedRequestId !== undefined) {
      const call = this.direct.get(options.relatedRequestId);
      if (call) return this.stream(call, message);
    }
    return super.send(message, options);
  }

  override async close(): Promise<void> {
    for (const id of [...this.direct.keys()]) {
      const error = { code: ErrorCode.ConnectionClosed, message: "The session was closed before this request finished." };
      this.finish(id, { reply: { jsonrpc: "2.0", id, error } });
    }
    return super.close();
  }

  /** A message of the call before its result: the reply becomes (or already is) an SSE stream. */
  private stream(call: DirectCall, message: JSONRPCMessage): void {
    if (!call.stream) {
      let opened!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({ start: (controller) => void (opened = controller) });
      call.stream = opened;
      call.settle({ stream: body });
    }
    enqueue(call.stream, sseEvent(message));
  }

  /** End a direct call with its outcome; false when the id is not one of them. */
  private finish(id: RequestId, outcome: Extract<DirectOutcome, { reply: DirectReply }> | { cancelled: true }): boolean {
    const call = this.direct.get(id);
    if (!call) return false;
    this.direct.delete(id);
    if (!call.stream) {
      call.settle(outcome);
      return true;
    }
    if ("reply" in outcome) enqueue(call.stream, sseEvent(outcome.reply as JSONRPCMessage));
    try {
      call.stream.close();
    } catch {
      // the client went away first
    }
    return true;
  }
}

function enqueue(controller: ReadableStreamDefaultController<Uint8Array>, chunk: Uint8Array): void {
  try {
    controller.enqueue(chunk);
  } catch {
    // the client closed the stream; the call runs to its end and its result is dropped
  }
}
