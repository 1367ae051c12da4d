// The audit trail: one JSON line per tool call and per session event, for the operator who must
// answer "what did this agent do". Lines go to a file (created 0600, appended) or to the hub's log
// stream. A write never waits: lines queue in the stream up to a byte bound, past it they are dropped
// and counted, and the count is written as a line of its own once the stream drains, so a slow disk
// costs lost lines (said to be lost), never the hub's memory. The lines of one turn of the event loop
// leave in one write (servers/lib/turn-writes.ts): under load, one system call for many calls.
import fs from "node:fs";
import type { Writable } from "node:stream";
import { holdUntilTurnEnds } from "../../servers/lib/turn-writes.js";

/** What a call ended as: ok; error (the tool's own or the hub's); cancelled by its client; refused before it ran; timed out. */
export type AuditOutcome = "ok" | "error" | "cancelled" | "refused" | "timeout";

// types, not interfaces: a record is read as the plain object of fields it is (lineOf)
export type CallRecord = {
  tenant: string;
  /** A digest of the session's or 2026 context's id (hub_sessions shows the same label): an id is a credential. */
  session: string;
  transport: string;
  era: string;
  protocolVersion: string | null;
  client?: string;
  tool: string;
  /** The server that ran it ("hub" for the hub's own tools); absent when the call never reached one. */
  server?: string;
  outcome: AuditOutcome;
  errorType?: string;
  durationMs: number;
  bytesIn?: number;
  bytesOut?: number;
  taskId?: string;
  arguments?: unknown;
};

export type SessionRecord = {
  tenant: string;
  session: string;
  transport: string;
  event: "opened" | "closed";
  /** Why it closed: its client, idle, ttl, reclaimed, ended (hub_end_session), hub_stopping. */
  reason?: string;
  ageSeconds?: number;
};

/** Where lines go: a file, a stream (the hub's log stream), or nowhere. */
export type AuditDestination = { file: string } | { stream: Writable } | "off";

/** The longest any one string of a record is kept: a tool name or a client's words can be a megabyte the agent chose. */
export const FIELD_CHARS = 256;
/** Bytes queued for a slow destination before lines are dropped (and counted). */
export const DEFAULT_QUEUE_BYTES = 1024 * 1024;

export class AuditLog {
  private readonly out?: Writable;
  private dropped = 0;
  private failed = false;

  /** Throws with the reason when the file cannot be opened: the operator asked for a trail, the hub must not run without it silently. */
  constructor(
    destination: AuditDestination,
    private readonly queueBytes = DEFAULT_QUEUE_BYTES,
    private readonly onFailure: (message: string) => void = () => undefined,
  ) {
    if (destination === "off") return;
    if ("stream" in destination) {
      this.out = destination.stream;
      return;
    }
    // appended, created 0600; an existing file is made 0600 too: the trail names tenants and what they did
    let fd: number;
    try {
      fd = fs.openSync(destination.file, "a", 0o600);
    } catch (err) {
      throw new Error(`Cannot open the audit log (AGENTBOX_AUDIT_LOG) ${destination.file}: ${(err as Error).message}`, { cause: err });
    }
    if (fs.fstatSync(fd).isFile()) fs.fchmodSync(fd, 0o600);
    const stream = fs.createWriteStream("", { fd, autoClose: true });
    stream.on("error", (err) => {
      this.failed = true;
      this.onFailure(`The audit log ${destination.file} failed (${err.message}); its lines are dropped from now on.`);
    });
    this.out = stream;
  }

  get enabled(): boolean {
    return this.out !== undefined;
  }

  /** Lines dropped so far because the destination was slow or failed. */
  get droppedLines(): number {
    return this.dropped;
  }

  call(record: CallRecord): void {
    this.write("call", record);
  }

  session(record: SessionRecord): void {
    this.write("session", record);
  }

  private write(kind: string, record: CallRecord | SessionRecord): void {
    const out = this.out;
    if (!out) return;
    // JSON escapes every control character: nothing in a field ends the line or forges another
    const line = lineOf(kind, record);
    if (this.failed || out.destroyed || out.writableEnded || out.writableLength + Buffer.byteLength(line) > this.queueBytes) {
      this.dropped++;
      return;
    }
    holdUntilTurnEnds(out);
    if (this.dropped) {
      out.write(JSON.stringify({ time: new Date().toISOString(), audit: "dropped", lines: this.dropped }) + "\n");
      this.dropped = 0;
    }
    out.write(line);
  }

  /** Flushes what is queued (a file's stream ends; the hub's log stream stays open). */
  async close(): Promise<void> {
    const out = this.out;
    if (!out || !(out instanceof fs.WriteStream) || out.destroyed) return;
    await new Promise<void>((resolve) => out.end(resolve));
  }
}

/**
 * The record as one JSON line, every top-level string cut to FIELD_CHARS (arguments are bounded
 * where they are taken: ./audit-arguments.ts). A line is written per call: the record is copied only
 * when it has a string to cut, and its JSON follows the line's own two fields (JSON leaves out what
 * is undefined).
 */
function lineOf(kind: string, fields: Readonly<Record<string, unknown>>): string {
  let kept: Record<string, unknown> = fields;
  for (const key in fields) {
    const value = fields[key];
    if (typeof value !== "string" || value.length <= FIELD_CHARS) continue;
    if (kept === fields) kept = { ...fields };
    kept[key] = `${value.slice(0, FIELD_CHARS - 1)}…`;
  }
  const json = JSON.stringify(kept);
  return `{"time":"${timestamp()}","audit":"${kind}"${json === "{}" ? "" : `,${json.slice(1)}`}\n`;
}

let stampedAt = NaN;
let stamp = "";

/** The time of a line, to the millisecond: under load many lines share one, and formatting a Date for each took 0.8 µs. */
function timestamp(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = new Date(now).toISOString();
  }
  return stamp;
}
