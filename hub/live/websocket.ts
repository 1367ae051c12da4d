// A live view's WebSocket, served by the `ws` package: the views (./views.ts) and viewers
// (./viewer.ts) see only this small connection, so what they rely on is written down here.
// Everything a viewer sends is bounded (MAX_MESSAGE_BYTES, enforced by ws before it buffers a
// message); a protocol fault (an unmasked frame, an oversized message) closes the connection.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";

/** A viewer's messages are input events and acks: a pasted text is the largest. */
export const MAX_MESSAGE_BYTES = 64 * 1024;

export interface WebSocketConnection {
  send(data: string | Buffer): void;
  close(code?: number, reason?: string): void;
  /** Bytes written but not yet handed to the kernel. */
  readonly buffered: number;
  onmessage?: (data: Buffer, text: boolean) => void;
  onclose?: () => void;
}

// one server for every view: noServer, as the hub's HTTP server hands upgrades to the views itself;
// no compression (frames are JPEG already, and deflate state per connection costs memory)
const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false, clientTracking: false });

// ws hands Buffers (its default binaryType); the other shapes only if someone changes that
const bufferOf = (data: RawData): Buffer => (Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(new Uint8Array(data)));

class Connection implements WebSocketConnection {
  private closed = false;
  onmessage?: (data: Buffer, text: boolean) => void;
  onclose?: () => void;

  constructor(private readonly ws: WebSocket) {
    ws.on("message", (data, isBinary) => this.onmessage?.(bufferOf(data), !isBinary));
    ws.on("close", () => this.ended());
    // a fault is followed by close; a listener keeps it from being thrown
    ws.on("error", () => ws.terminate());
  }

  get buffered(): number {
    return this.ws.bufferedAmount;
  }

  send(data: string | Buffer): void {
    if (!this.closed) this.ws.send(data, { binary: typeof data !== "string" });
  }

  close(code = 1000, reason = ""): void {
    if (this.closed) return;
    this.ws.close(code, reason);
    this.ended();
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

/** Answer a WebSocket upgrade and hand the connection to `opened`; an invalid upgrade is answered 400 by ws. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, opened: (connection: WebSocketConnection) => void): void {
  server.handleUpgrade(req, socket, head, (ws) => opened(new Connection(ws)));
}
