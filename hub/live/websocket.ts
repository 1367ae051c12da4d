// The server side of a WebSocket (RFC 6455), as much as live views need: the handshake, masked
// client frames in (text, binary, ping, close; continuation frames joined), unmasked frames out.
// The hub's run-time dependencies hold no WebSocket server (`ws` is a devDependency), and a view
// needs little: small messages in, one frame at a time out. Everything a viewer sends is bounded
// (MAX_MESSAGE_BYTES); a protocol fault closes the connection.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
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

/** Answer a WebSocket upgrade; undefined (and the socket answered 400) when it is not a valid one. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer): WebSocketConnection | undefined {
  const key = req.headers["sec-websocket-key"];
  if (req.headers.upgrade?.toLowerCase() !== "websocket" || typeof key !== "string" || req.headers["sec-websocket-version"] !== "13") {
    socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nThis is a WebSocket endpoint.\n");
    return undefined;
  }
  const accept = createHash("sha1")
    .update(key + GUID)
    .digest("base64");
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  const connection = new Connection(socket);
  if (head.length) socket.unshift(head);
  return connection;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (length < 126) header[1] = length;
  else if (length < 65536) {
    header[1] = 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([header, payload]);
}

class Connection implements WebSocketConnection {
  private pending: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentsText = false;
  private closed = false;
  onmessage?: (data: Buffer, text: boolean) => void;
  onclose?: () => void;

  constructor(private readonly socket: Duplex) {
    socket.on("data", (chunk: Buffer) => this.read(chunk));
    socket.on("close", () => this.ended());
    socket.on("error", () => socket.destroy());
  }

  get buffered(): number {
    return "writableLength" in this.socket ? this.socket.writableLength : 0;
  }

  send(data: string | Buffer): void {
    if (this.closed) return;
    this.socket.write(typeof data === "string" ? frame(1, Buffer.from(data)) : frame(2, data));
  }

  close(code = 1000, reason = ""): void {
    if (this.closed) return;
    const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
    payload.writeUInt16BE(code, 0);
    payload.write(reason, 2);
    this.socket.end(frame(8, payload));
    this.ended();
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = Buffer.alloc(0);
    this.fragments = [];
    this.onclose?.();
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    // a frame's header, its mask and a payload no larger than the message limit: more waiting is a fault
    if (this.pending.length > MAX_MESSAGE_BYTES + 14) return this.close(1009, "message too big");
    while (!this.closed) {
      const used = this.parse(this.pending);
      if (used === 0) return;
      this.pending = this.pending.subarray(used);
    }
  }

  /** Takes one whole frame off the front of `buf`; 0 when it is not all there yet. */
  private parse(buf: Buffer): number {
    if (buf.length < 2) return 0;
    const fin = (buf[0] & 0x80) !== 0;
    const opcode = buf[0] & 0x0f;
    if (!(buf[1] & 0x80)) return this.fault(1002, "client frames must be masked");
    let length = buf[1] & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (buf.length < 4) return 0;
      length = buf.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (buf.length < 10) return 0;
      const big = buf.readBigUInt64BE(2);
      if (big > BigInt(MAX_MESSAGE_BYTES)) return this.fault(1009, "message too big");
      length = Number(big);
      offset = 10;
    }
    if (length > MAX_MESSAGE_BYTES) return this.fault(1009, "message too big");
    if (buf.length < offset + 4 + length) return 0;
    const mask = buf.subarray(offset, offset + 4);
    const payload = Buffer.from(buf.subarray(offset + 4, offset + 4 + length));
    for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
    this.handle(opcode, fin, payload);
    return offset + 4 + length;
  }

  private handle(opcode: number, fin: boolean, payload: Buffer): void {
    if (opcode === 8) return this.close(1000);
    if (opcode === 9) return void this.socket.write(frame(10, payload));
    if (opcode === 10) return;
    if (opcode === 1 || opcode === 2) {
      if (this.fragments.length) return void this.fault(1002, "a new message began before the last ended");
      this.fragmentsText = opcode === 1;
    } else if (opcode !== 0 || !this.fragments.length) return void this.fault(1002, `unexpected opcode ${opcode}`);
    this.fragments.push(payload);
    const size = this.fragments.reduce((n, f) => n + f.length, 0);
    if (size > MAX_MESSAGE_BYTES) return void this.fault(1009, "message too big");
    if (!fin) return;
    const message = Buffer.concat(this.fragments);
    this.fragments = [];
    this.onmessage?.(message, this.fragmentsText);
  }

  private fault(code: number, reason: string): number {
    this.close(code, reason);
    return 0;
  }
}
