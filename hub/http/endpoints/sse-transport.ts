// The server side of the deprecated HTTP+SSE transport (protocol 2024-11-05), on the SDK's public
// Transport interface. The SDK's own SSEServerTransport mints its session id itself and offers no
// way to choose it; this one is given the hub's routable id (hub/http/replica.ts), which the
// endpoint event hands the client and a router reads back from ?sessionId= on each POST.
import type { ServerResponse } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage, type MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

export class SseServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  /** The open event stream, from start() until the client goes or the session closes. */
  private stream?: ServerResponse;

  /** @param endpoint the path the client POSTs its messages to, with `?sessionId=<sessionId>` */
  constructor(
    private readonly endpoint: string,
    private readonly res: ServerResponse,
    readonly sessionId: string,
  ) {}

  async start(): Promise<void> {
    if (this.stream) throw new Error("This SSE transport is already started: connect() starts it, so start() must not be called too.");
    this.res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache, no-transform", Connection: "keep-alive" });
    this.res.write(`event: endpoint\ndata: ${this.endpoint}?sessionId=${encodeURIComponent(this.sessionId)}\n\n`);
    this.stream = this.res;
    this.res.on("close", () => {
      this.stream = undefined;
      this.onclose?.();
    });
  }

  get connected(): boolean {
    return this.stream !== undefined;
  }

  /** A message the client POSTed: false (and onerror) when it is not a JSON-RPC message. */
  receive(message: unknown, extra?: MessageExtraInfo): boolean {
    const parsed = JSONRPCMessageSchema.safeParse(message);
    if (!parsed.success) {
      this.onerror?.(parsed.error);
      return false;
    }
    this.onmessage?.(parsed.data, extra);
    return true;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.stream) throw new Error("Not connected: the client's SSE stream is closed.");
    this.stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    this.stream?.end();
    this.stream = undefined;
    this.onclose?.();
  }
}
