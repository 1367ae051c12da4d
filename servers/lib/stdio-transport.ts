// A server's own end of stdio: requests on stdin, replies on stdout, one JSON-RPC message per line
// (./json-lines.ts). It differs from the SDK's StdioServerTransport in two costs every call paid:
// - a line is parsed with JSON.parse and handed to the SDK's server, which checks what it gets
//   itself (the message's kind, and each request against its handler's schema); the SDK's transport
//   first validated every message against the whole JSON-RPC union as well, a tenth of a small
//   call's CPU;
// - the replies of one turn of the event loop leave in one write (./turn-writes.ts): a pipe's
//   writes are synchronous in Node, and each reply was a system call and a wake-up of the reader.
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter } from "./json-lines.js";
import { holdUntilTurnEnds } from "./turn-writes.js";

export class LineStdioServerTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private started = false;
  private readonly lines: LineSplitter;

  /** `maxLineBytes`: the longest message taken (the SDK's transport takes as much); a longer one ends the connection. */
  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    maxLineBytes = STDIO_DEFAULT_MAX_BUFFER_SIZE,
  ) {
    this.lines = new LineSplitter(
      maxLineBytes,
      (line) => this.deliver(line),
      () => {
        this.onerror?.(new Error(`A message longer than ${maxLineBytes} bytes arrived: the connection is closed.`));
        void this.close();
      },
    );
  }

  private readonly onData = (chunk: Buffer | string) => this.lines.feed(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  private readonly onStreamError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    if (this.started) throw new Error("The stdio transport is already started (Server.connect starts it).");
    this.started = true;
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onStreamError);
    // a reader gone away (EPIPE) is reported, not thrown from the stream
    this.stdout.on("error", this.onStreamError);
  }

  private deliver(line: string): void {
    if (!line.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = JSON.parse(line) as JSONRPCMessage;
    } catch {
      this.onerror?.(new Error(`A line on stdin is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdout = this.stdout;
    holdUntilTurnEnds(stdout);
    return new Promise((resolve) => (stdout.write(`${JSON.stringify(message)}\n`) ? resolve() : stdout.once("drain", resolve)));
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onStreamError);
    this.stdout.off("error", this.onStreamError);
    // stdin is paused only when nothing else reads it
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.lines.reset();
    this.onclose?.();
  }
}
