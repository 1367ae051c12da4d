// The stdio transport to a spawned child: one JSON-RPC message per line each way. It differs from
// the SDK's StdioClientTransport in what it leaves out: a line is parsed with JSON.parse and
// handed on, not also validated against the SDK's message schemas (the SDK Client checks the
// messages it handles itself, and the hub's own calls take the child's replies as they are, see
// ./calls.ts); a request can be written already serialized, so it is serialized once.
import { spawn, type ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { holdUntilTurnEnds } from "../../servers/lib/turn-writes.js";
import { LineSplitter } from "../../servers/lib/json-lines.js";
import { noteSize } from "./message-sizes.js";

export interface StdioChildParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Longest line (message) the child may write; a longer one is an error and ends the connection. */
  maxLineBytes: number;
}

/** A child wrote a line longer than the hub reads: its stream is out of step, only a fresh process recovers. */
export class ReplyTooLargeError extends Error {}

const CLOSE_GRACE_MS = 2000;

export class StdioChildTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Called with the child's pid as soon as it is spawned, before it has said anything. */
  onspawn?: (pid: number) => void;
  /** The child's stderr, available before start so no early line is lost. */
  readonly stderr = new PassThrough();
  private child?: ChildProcess;
  /** How the process ended, once it has. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  private readonly lines: LineSplitter;

  constructor(private readonly params: StdioChildParams) {
    this.lines = new LineSplitter(
      params.maxLineBytes,
      (line, bytes) => this.deliver(line, bytes),
      () => {
        this.onerror?.(new ReplyTooLargeError(`The server wrote a message longer than ${params.maxLineBytes} bytes.`));
        void this.close();
      },
    );
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether the child has stopped taking what is written to it (its stdin is full). */
  get inputBlocked(): boolean {
    return Boolean(this.child?.stdin?.writableNeedDrain);
  }

  start(): Promise<void> {
    if (this.child) throw new Error("The child transport is already started.");
    return new Promise((resolve, reject) => {
      const { command, args, env, cwd } = this.params;
      const child = spawn(command, args, { env: { ...getDefaultEnvironment(), ...env }, cwd, stdio: ["pipe", "pipe", "pipe"], shell: false });
      this.child = child;
      // known from here on: the hub's sweeper must not take a server that is slow to start for an escapee
      if (child.pid) this.onspawn?.(child.pid);
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on("spawn", () => resolve());
      child.on("close", (code, signal) => {
        this.exit = { code, signal };
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin!.on("error", (error) => this.onerror?.(error));
      child.stdout!.on("error", (error) => this.onerror?.(error));
      child.stdout!.on("data", (chunk: Buffer) => this.lines.feed(chunk));
      child.stderr!.pipe(this.stderr);
    });
  }

  private deliver(line: string, bytes: number): void {
    if (!line.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = JSON.parse(line) as JSONRPCMessage;
    } catch {
      this.onerror?.(new Error(`The server wrote a line that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    if ("result" in message) noteSize(message.result, bytes);
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.sendText(JSON.stringify(message));
  }

  /**
   * Write one message already serialized (no newline inside, as JSON.stringify makes it). The
   * messages of one turn of the event loop reach the child in one write: one wake-up of the child
   * for all the calls that arrived together, not one per call.
   */
  sendText(json: string): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new Error("Not connected"));
    holdUntilTurnEnds(stdin);
    return new Promise((resolve) => (stdin.write(`${json}\n`) ? resolve() : stdin.once("drain", resolve)));
  }

  /** End its input, then SIGTERM, then SIGKILL, each after a grace, as the SDK's transport does. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const grace = () => Promise.race([closed, new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
    child.stdin?.end();
    await grace();
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      if (signal === "SIGTERM") await grace();
    }
  }
}
