// One persistent terminal: a real pty running a shell (or any program), its scrollback, the
// client's read cursor, and waiting for output to match a pattern or go quiet.
import { randomBytes, randomUUID } from "node:crypto";
import * as pty from "node-pty";
import stripAnsi from "strip-ansi";
import { childEnv } from "./config.js";
import { echoDecided, echoEnd } from "./echo.js";
import { killTree, markedTree, TREE_MARKER_ENV, type Tree } from "../lib/proctree.js";
import { TailBuffer } from "./tail-buffer.js";

export interface TerminalOptions {
  /** Absolute path of the program to run. */
  program: string;
  args: string[];
  cwd: string;
  env?: Record<string, string>;
  /** The hub\'s callback token of the client session: the program carries its claim (../lib/session-claim.ts). */
  sessionToken?: string;
  cols: number;
  rows: number;
  /** Bytes of output kept. */
  scrollback: number;
}

export interface WaitOptions {
  /** Absolute output offset the pattern is looked for from. */
  from: number;
  pattern?: RegExp;
  /** Text just typed: the pattern is matched only after the terminal's echo of it. */
  echo?: string;
  quietMs?: number;
  timeoutMs: number;
  signal: AbortSignal;
}

/** Someone following a terminal as it runs (a recording): its output, size changes and end. */
export interface TerminalWatcher {
  output?(data: string): void;
  resize?(cols: number, rows: number): void;
  exit?(): void;
}

export type WaitOutcome = "pattern" | "quiet" | "exited" | "timeout" | "cancelled";

export interface ReadResult {
  text: string;
  /** Unread bytes the scrollback cap dropped before this read. */
  droppedBytes: number;
}

/** Terminal output for a reader: escape sequences removed and CRLF made LF, when asked. */
export function clean(text: string, strip: boolean): string {
  return strip ? stripAnsi(text).replace(/\r+\n/g, "\n") : text;
}

/** Output already searched for a wait pattern is searched again this far back, for matches spanning chunks. */
const SCAN_OVERLAP = 64 * 1024;

export class Terminal {
  readonly id = `t${randomBytes(4).toString("hex")}`;
  readonly marker = randomUUID();
  readonly createdAt = new Date();
  readonly pid: number;
  private readonly tree: Tree;
  cols: number;
  rows: number;
  /** Last time the client used this terminal (for the idle limit). */
  lastUsed = Date.now();
  /** Waits running on it now: a terminal a call is waiting on is in use however long the wait. */
  private waiting = 0;
  exit?: { exitCode: number; signal: number | null };

  private readonly pty: pty.IPty;
  private readonly output: TailBuffer;
  /** Absolute offset of the first byte the client has not read. */
  private cursor = 0;
  private lastOutputAt = Date.now();
  private readonly listeners = new Set<() => void>();
  private readonly watchers = new Set<TerminalWatcher>();
  /** A person types into it through a live view: the agent's input waits meanwhile. */
  heldByPerson = false;
  /** A person handed it back since the agent last sent input: its next send says so, once. */
  handedBack = false;
  private readonly exited: Promise<void>;

  constructor(readonly options: TerminalOptions) {
    this.cols = options.cols;
    this.rows = options.rows;
    this.output = new TailBuffer(options.scrollback);
    this.pty = pty.spawn(options.program, options.args, {
      name: options.env?.TERM ?? "xterm-256color",
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      env: childEnv(options.env, TREE_MARKER_ENV, this.marker, options.sessionToken),
    });
    this.pid = this.pty.pid;
    this.tree = markedTree(this.pid, this.marker);
    this.pty.onData((data) => {
      this.output.append(data);
      this.lastOutputAt = Date.now();
      for (const watcher of this.watchers) watcher.output?.(data);
      this.notify();
    });
    this.exited = new Promise((resolve) => {
      this.pty.onExit(({ exitCode, signal }) => {
        this.exit = { exitCode, signal: signal || null };
        for (const watcher of this.watchers) watcher.exit?.();
        this.notify();
        resolve();
      });
    });
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Bytes of output produced so far (an offset to wait from). */
  get written(): number {
    return this.output.total;
  }

  /** Absolute offset of the first unread byte. */
  get readOffset(): number {
    return this.cursor;
  }

  get unread(): number {
    return this.output.total - this.cursor;
  }

  touch(): void {
    this.lastUsed = Date.now();
  }

  /** Whether the client has left it alone since before `cutoff` (no call on it, none waiting). */
  idleSince(cutoff: number): boolean {
    return this.waiting === 0 && this.lastUsed < cutoff;
  }

  /** The last `chars` characters of the scrollback, escape sequences and all (what a view draws first). */
  recentOutput(chars: number): string {
    return this.output.text(this.output.start).slice(-chars);
  }

  write(data: string): void {
    this.pty.write(data);
  }

  resize(cols: number, rows: number): void {
    this.pty.resize(cols, rows);
    this.cols = cols;
    this.rows = rows;
    for (const watcher of this.watchers) watcher.resize?.(cols, rows);
  }

  /** Follow the terminal from now on; returns how to stop. */
  watch(watcher: TerminalWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Output since the last read, and mark it read. */
  readNew(strip: boolean): ReadResult {
    const droppedBytes = Math.max(0, this.output.start - this.cursor);
    const text = this.output.text(this.cursor);
    this.cursor = this.output.total;
    return { text: clean(text, strip), droppedBytes };
  }

  /** The last `lines` lines of the scrollback; everything counts as read afterwards. */
  readTail(lines: number, strip: boolean): ReadResult {
    const all = clean(this.output.text(this.output.start), strip);
    this.cursor = this.output.total;
    // Split after each newline so raw output keeps its own line endings.
    const parts = all.split(/(?<=\n)/);
    return { text: parts.slice(-lines).join(""), droppedBytes: 0 };
  }

  /**
   * Wait until the pattern shows up in the output after `from` (then, if quietMs is given too,
   * until output pauses that long), or until output is quiet for quietMs, the program exits,
   * the time runs out or the call is cancelled.
   */
  async wait(options: WaitOptions): Promise<WaitOutcome> {
    this.waiting++;
    try {
      return await this.waitFor(options);
    } finally {
      this.waiting--;
      this.touch();
    }
  }

  private async waitFor(options: WaitOptions): Promise<WaitOutcome> {
    const started = Date.now();
    const deadline = started + options.timeoutMs;
    let matched = !options.pattern;
    let scanned = options.from;
    let matchFrom = options.from;
    let echoOpen = options.echo !== undefined;
    for (;;) {
      if (options.signal.aborted) return "cancelled";
      if (!matched && this.output.total > scanned) {
        let ready = true;
        if (echoOpen) {
          const raw = this.output.text(options.from);
          const end = echoEnd(raw, options.echo!);
          ready = end !== undefined;
          if (end !== undefined) matchFrom = options.from + Buffer.byteLength(raw.slice(0, end));
          echoOpen = !echoDecided(raw, options.echo!);
        }
        // Rescan only the new output plus an overlap, not everything since `from` on every chunk.
        if (ready) matched = options.pattern!.test(clean(this.output.text(Math.max(matchFrom, scanned - SCAN_OVERLAP)), true));
        scanned = this.output.total;
      }
      const now = Date.now();
      const quietLeft = options.quietMs ? options.quietMs - (now - Math.max(started, this.lastOutputAt)) : 0;
      if (matched && quietLeft <= 0) return options.pattern ? "pattern" : "quiet";
      if (!this.alive) return "exited";
      if (now >= deadline) return "timeout";
      await this.nextEvent(Math.min(deadline - now, matched ? quietLeft : Infinity), options.signal);
    }
  }

  private nextEvent(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.listeners.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Kill the program and everything it started; resolves once the pty has been reaped. */
  async kill(): Promise<number> {
    const killed = await killTree(this.tree);
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000).unref())]);
    return killed;
  }
}
