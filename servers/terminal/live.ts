// A session's terminal, live (../lib/live.ts): its recent output first, then what it prints as it
// prints it, one batch in flight (what comes meanwhile waits here, bounded: past the bound only the
// tail is kept); and, while a person holds control, what they type goes to the pty.
import type { LiveProvider, LiveStream, StreamEvent } from "../lib/live-host.js";
import { MAX_OUTPUT_CHARS, type LiveInputEvent, type LiveOpenParams } from "../lib/live.js";
import { findTerminal } from "./registry.js";
import type { Terminal } from "./terminal.js";

// what a view draws first: enough of the scrollback to fill a screen or two
const FIRST_CHARS = 64 * 1024;

class TerminalStream implements LiveStream {
  private inFlight = false;
  private waiting = "";
  private readonly stop: () => void;

  constructor(
    private readonly terminal: Terminal,
    private readonly emit: (event: StreamEvent) => void,
  ) {
    this.stop = terminal.watch({
      output: (data) => this.output(data),
      exit: () => this.closed(),
    });
    // a view opened after the program ended is told at once: no exit will come
    if (!terminal.alive) queueMicrotask(() => this.closed());
  }

  private closed(): void {
    this.emit({ type: "closed", why: `the program in terminal ${this.terminal.id} ended` });
  }

  private output(data: string): void {
    if (!this.inFlight) {
      this.inFlight = true;
      return this.emit({ type: "output", data });
    }
    this.waiting = (this.waiting + data).slice(-MAX_OUTPUT_CHARS);
  }

  ack(): void {
    this.inFlight = false;
    const next = this.waiting;
    this.waiting = "";
    if (next) this.output(next);
  }

  control(holder: "person" | "agent"): void {
    const person = holder === "person";
    if (this.terminal.heldByPerson && !person) this.terminal.handedBack = true;
    this.terminal.heldByPerson = person;
  }

  async input(event: LiveInputEvent): Promise<void> {
    if (event.type === "text" && this.terminal.heldByPerson && this.terminal.alive) this.terminal.write(event.text);
  }

  async close(): Promise<void> {
    this.stop();
  }
}

export const terminalLive: LiveProvider = {
  async open(params: LiveOpenParams, emit) {
    const terminal = await findTerminal(params.session, params.terminal ?? "");
    const opened = { kind: "terminal" as const, terminal: terminal.id, cols: terminal.cols, rows: terminal.rows, output: terminal.recentOutput(FIRST_CHARS) };
    return { opened, stream: new TerminalStream(terminal, emit) };
  },
};
