// A child's stderr: untrusted bytes (a tenant can write to its own server's stderr). Each line is
// cut at a bounded length, relayed into the hub's log at a bounded rate and nested under
// `output` so it can never set the hub's own fields (tenant, child, msg...), and the first and
// last lines of each run are kept to explain why the child failed.
import type { Readable } from "node:stream";
import type { Logger } from "../../servers/lib/log.js";
import type { OutputLimits } from "../config/config.js";
import { FloodGate } from "./flood-gate.js";
import type { Clock } from "../protocol/clock.js";

const LEVELS = new Set(["debug", "info", "warn", "error"]);
const KEPT_LINES = 20;

/** The first and the last lines a child wrote to stderr in one run. */
export class StderrMemory {
  readonly first: string[] = [];
  readonly last: string[] = [];
  private seen = 0;

  add(line: string): void {
    this.seen++;
    if (this.first.length < KEPT_LINES) return void this.first.push(line);
    this.last.push(line);
    if (this.last.length > KEPT_LINES) this.last.shift();
  }

  /** Every kept line in order, each once (the last lines follow the first unless they overlap). */
  get lines(): string[] {
    return [...this.first, ...this.last];
  }

  get gap(): number {
    return this.seen - this.first.length - this.last.length;
  }
}

/**
 * Reads a child's stderr: every line (cut to the limit) goes to `memory`, and into the log
 * unless the child exceeds its rate. Resolves `ended` when the stream ends.
 */
export class ChildStderr {
  readonly memory = new StderrMemory();
  readonly ended: Promise<void>;
  private readonly gate: FloodGate;

  constructor(
    stream: Readable,
    private readonly log: Logger,
    limits: OutputLimits,
    clock: Clock,
  ) {
    this.gate = new FloodGate(
      limits.linesPerSecond,
      (count) =>
        this.log.warn(`dropped ${count} lines from the child's stderr`, {
          dropped: count,
          limit: `${limits.linesPerSecond} lines/s (AGENTBOX_CHILD_LOG_LINES_PER_SECOND)`,
        }),
      clock,
    );
    this.ended = new Promise<void>((resolve) => {
      readLines(stream, limits.maxLineBytes, (line, cut) => this.line(line, cut));
      stream.once("end", resolve);
      stream.once("close", resolve);
      stream.once("error", () => resolve());
    }).then(() => this.gate.report());
  }

  private line(raw: string, cut: number): void {
    if (!raw.trim()) return;
    const line = cut ? `${raw}… (${cut} more bytes dropped)` : raw;
    this.memory.add(line.length > 500 ? `${line.slice(0, 500)}…` : line);
    if (this.gate.admit()) relayLogLine(this.log, cut ? undefined : raw, line);
  }
}

/**
 * A child's line in the hub's log, at the child's level when it wrote a JSON log line (else
 * info); what it wrote is data under `output`, never the entry's own fields.
 */
function relayLogLine(log: Logger, json: string | undefined, line: string): void {
  let entry: unknown;
  try {
    entry = json?.startsWith("{") ? JSON.parse(json) : undefined;
  } catch {
    entry = undefined;
  }
  if (entry && typeof entry === "object" && !Array.isArray(entry)) {
    const level = String((entry as { level?: unknown }).level);
    log[LEVELS.has(level) ? (level as "info") : "info"]("child output", { output: entry });
  } else {
    log.info("child output", { output: line });
  }
}

/** Calls `onLine` for each line of `stream`, holding at most `maxBytes` of a line (`cut` counts the bytes dropped from it). */
function readLines(stream: Readable, maxBytes: number, onLine: (line: string, cut: number) => void): void {
  let parts: Buffer[] = [];
  let held = 0;
  let cut = 0;
  const hold = (piece: Buffer) => {
    const room = maxBytes - held;
    if (piece.length > room) cut += piece.length - room;
    const kept = piece.subarray(0, Math.max(0, room));
    if (kept.length === 0) return;
    parts.push(kept);
    held += kept.length;
  };
  const flush = () => {
    onLine(Buffer.concat(parts).toString("utf8").replace(/\r$/, ""), cut);
    parts = [];
    held = 0;
    cut = 0;
  };
  stream.on("data", (chunk: Buffer) => {
    let from = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, from)) {
      hold(chunk.subarray(from, newline));
      flush();
      from = newline + 1;
    }
    hold(chunk.subarray(from));
  });
  stream.once("end", () => held + cut > 0 && flush());
}
