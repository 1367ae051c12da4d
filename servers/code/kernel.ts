// One interpreter of one code session: a driver process (Python or Node) kept alive between
// executes so variables, imports and functions persist, like a notebook kernel.
//
// Messages travel as JSON lines on fd 3; the user's output stays on fd 1 and fd 2 so that
// subprocesses the code starts are captured too. Interrupting follows the notebook habit:
// SIGINT first (KeyboardInterrupt, state kept), and only when the code ignores it the process
// group is killed and a fresh interpreter started (state lost), and the agent is told which.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import readline from "node:readline";
import type { Duplex } from "node:stream";
import { ToolError } from "../lib/tool.js";
import { toolName } from "../lib/names.js";
import type { Logger } from "../lib/log.js";
import type { CodeConfig } from "./config.js";
import { launchSpec, residentMemory, type Language } from "./launch.js";
import { capTail, StreamCapture } from "./output.js";

export type { Language };

export interface Image {
  mimeType: string;
  data: string;
}

export type ExecStatus = "ok" | "error" | "timeout" | "cancelled" | "crashed";

export interface ExecOutcome {
  status: ExecStatus;
  stdout: string;
  stderr: string;
  value: string | null;
  error: string | null;
  images: Image[];
  truncated: boolean;
  /** False when the interpreter had to be killed (or died): variables and imports are gone. */
  stateKept: boolean;
  /** A sentence for the agent about the interpreter's fate, when there is something to say. */
  note?: string;
  cell: number;
}

interface DriverResult {
  type: "result";
  id: number;
  status: "ok" | "error" | "interrupted";
  value: string | null;
  error: string | null;
  images?: Image[];
}

interface Running {
  id: number;
  out: StreamCapture;
  err: StreamCapture;
  settle(result: DriverResult | "exited"): void;
  result: Promise<DriverResult | "exited">;
  /** Set once a timeout or cancellation is interrupting it. */
  stopping?: boolean;
  /** Resolves when the execute has finished (the interpreter is free again). */
  done: Promise<void>;
}

/** Beyond the interrupt grace: the killed interpreter's exit and the output drain. */
const STOP_SLACK_MS = 3_000;

export interface KernelOptions {
  language: Language;
  name: string;
  session: string;
  /** The hub's callback token for the client session, handed to the interpreter. */
  token?: string;
  workspace: string;
  config: CodeConfig;
  log: Logger;
}

const READY_TIMEOUT_MS = 30_000;

export class Kernel {
  readonly language: Language;
  readonly name: string;
  readonly createdAt = Date.now();
  lastUsed = Date.now();
  executions = 0;
  private proc?: ChildProcess;
  private channel?: Duplex;
  private ready?: Promise<void>;
  private running?: Running;
  private nextId = 0;
  private cell = 0;
  private closed = false;
  /** Set when the interpreter died between executes; the next execute says so. */
  private lostState?: string;
  private startedAt = Date.now();
  /** The process is being killed by a reset, so a running execute can say why it ended. */
  private resetting = false;
  private exitedByReset = false;

  constructor(private readonly options: KernelOptions) {
    this.language = options.language;
    this.name = options.name;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Resident memory of the interpreter process. */
  memoryBytes(): number | undefined {
    return this.proc?.pid ? residentMemory(this.proc.pid) : undefined;
  }

  /** Start the interpreter if it is not running; resolves once the driver said it is ready. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new ToolError(`Session '${this.name}' was closed.`));
    this.ready ??= this.spawn().catch((err) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private spawn(): Promise<void> {
    const { command, args, env } = launchSpec(this.language, this.options.config, this.name, this.options.token);
    const log = this.options.log;
    // its own process group, so killing it also ends the subprocesses the code started
    const proc = spawn(command, args, { cwd: this.options.workspace, env, stdio: ["ignore", "pipe", "pipe", "pipe"], detached: true });
    this.proc = proc;
    this.startedAt = Date.now();
    this.channel = proc.stdio[3] as Duplex;
    proc.stdout!.setEncoding("utf8");
    proc.stderr!.setEncoding("utf8");
    // a dying interpreter resets its pipes; its exit event is what we act on, these must not throw
    for (const stream of [this.channel, proc.stdout!, proc.stderr!]) {
      stream.on("error", (err) => log.debug("interpreter pipe error", { error: err.message }));
    }
    // what the interpreter says before it is ready explains a failed start
    const early: string[] = [];
    let started = false;
    proc.stdout!.on("data", (chunk: string) => this.onOutput("out", chunk));
    proc.stderr!.on("data", (chunk: string) => {
      if (!started) early.push(chunk);
      this.onOutput("err", chunk);
    });
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error("the interpreter did not start in time")), READY_TIMEOUT_MS);
      const fail = (err: Error) => {
        clearTimeout(timer);
        if (started) return;
        started = true;
        this.killProcess(proc);
        const detail = capTail(early.join("").trim(), 2000);
        reject(new ToolError(`Could not start the ${this.language} interpreter (${command}): ${err.message}${detail ? `\n${detail}` : ""}`));
      };
      proc.once("error", fail);
      proc.once("exit", (code, signal) => {
        clearTimeout(timer);
        this.onExit(proc, code, signal);
        fail(new Error(`it exited with ${signal ?? `code ${code}`}`));
      });
      const lines = readline.createInterface({ input: this.channel! });
      lines.on("error", () => undefined); // reported by the channel's own error handler
      lines.on("line", (line) => {
        let message: { type?: string } & Record<string, unknown>;
        try {
          message = JSON.parse(line);
        } catch {
          log.warn("driver sent a line that is not JSON", { line: line.slice(0, 200) });
          return;
        }
        if (message.type === "ready") {
          clearTimeout(timer);
          started = true;
          early.length = 0;
          log.debug("interpreter ready", { language: this.language, name: this.name, pid: proc.pid });
          resolve();
        } else if (message.type === "result" && this.running && message.id === this.running.id) {
          this.running.settle(message as unknown as DriverResult);
        }
      });
    });
  }

  private onOutput(stream: "out" | "err", chunk: string): void {
    const running = this.running;
    if (running) (stream === "out" ? running.out : running.err).feed(chunk);
    else this.options.log.debug("output outside an execute", { stream, chunk: chunk.slice(0, 200) });
  }

  private onExit(proc: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.proc !== proc) return; // an old process we already replaced
    this.proc = undefined;
    this.channel = undefined;
    this.ready = undefined;
    this.exitedByReset = this.resetting;
    this.resetting = false;
    if (this.running) {
      this.running.out.finish();
      this.running.err.finish();
      this.running.settle("exited");
    } else if (!this.closed) {
      this.lostState = `The ${this.language} interpreter of session '${this.name}' had exited (${signal ?? `code ${code}`}); a fresh one was started, earlier variables are gone.`;
    }
  }

  private killProcess(proc: ChildProcess): void {
    if (proc.exitCode !== null || proc.signalCode !== null || !proc.pid) return;
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      proc.kill("SIGKILL");
    }
  }

  async execute(code: string, timeoutMs: number, signal: AbortSignal): Promise<ExecOutcome> {
    // A cancelled execute answers its client at once but needs a moment (the interrupt) to free
    // the interpreter: the next call waits for that, bounded by the grace, instead of being refused.
    if (this.running?.stopping) {
      await Promise.race([this.running.done, delay(this.options.config.interruptGraceMs + STOP_SLACK_MS)]);
    }
    if (this.running) {
      throw new ToolError(
        `Session '${this.name}' (${this.language}) is still running an earlier ${toolName("execute")}; wait for it, interrupt it with ${toolName("reset")}, or use another session name.`,
      );
    }
    const { config } = this.options;
    const marker = `\u0001agentbox-end-${randomUUID()}\u0001`;
    let settle!: (r: DriverResult | "exited") => void;
    const result = new Promise<DriverResult | "exited">((resolve) => (settle = resolve));
    let finished!: () => void;
    const running: Running = {
      done: new Promise<void>((resolve) => (finished = resolve)),
      id: ++this.nextId,
      out: new StreamCapture(marker, config.maxOutputChars),
      err: new StreamCapture(marker, config.maxOutputChars),
      settle,
      result,
    };
    this.running = running;
    this.lastUsed = Date.now();
    this.executions++;
    try {
      await this.start();
      const notes: string[] = [];
      if (this.lostState) notes.push(this.lostState);
      this.lostState = undefined;
      const cell = ++this.cell;
      this.send({ type: "execute", id: running.id, cell, code, marker });
      return await this.await(running, cell, timeoutMs, signal, notes);
    } finally {
      this.running = undefined;
      this.lastUsed = Date.now();
      finished();
    }
  }

  private send(message: Record<string, unknown>): void {
    if (!this.channel) throw new ToolError(`The ${this.language} interpreter of session '${this.name}' is not running.`);
    this.channel.write(JSON.stringify(message) + "\n");
  }

  private async await(running: Running, cell: number, timeoutMs: number, signal: AbortSignal, notes: string[]): Promise<ExecOutcome> {
    let stop: "timeout" | "cancelled" | undefined;
    let timer: NodeJS.Timeout | undefined;
    const stopped = new Promise<"stop">((resolve) => {
      timer = setTimeout(() => {
        stop = "timeout";
        resolve("stop");
      }, timeoutMs);
      const onAbort = () => {
        stop ??= "cancelled";
        resolve("stop");
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    let outcome = await Promise.race([running.result, stopped]);
    clearTimeout(timer);
    let stateKept = true;
    if (outcome === "stop") {
      const why = stop === "timeout" ? `the ${timeoutMs} ms timeout` : "cancellation";
      running.stopping = true;
      outcome = await this.interrupt(running);
      if (outcome === "exited") {
        stateKept = false;
        notes.push(
          `Interrupted by ${why}: the code ignored KeyboardInterrupt, so the interpreter was killed and restarted; variables, imports and functions of session '${this.name}' are gone.`,
        );
      } else {
        notes.push(`Interrupted by ${why} (KeyboardInterrupt); the session's state survived and it is ready for the next ${toolName("execute")}.`);
      }
    } else if (outcome === "exited") {
      stateKept = false;
      notes.push(
        this.exitedByReset
          ? `Session '${this.name}' was reset while this code ran; it has a fresh interpreter.`
          : `The ${this.language} interpreter died while running this code; it was restarted and the session's earlier state is gone.`,
      );
    }
    // the end markers are written before the result message but travel on other pipes
    await Promise.race([Promise.all([running.out.finished, running.err.finished]), delay(2000)]);
    running.out.finish();
    running.err.finish();
    // the dead interpreter is replaced at once, so the session is usable again (start() dedups
    // with a concurrent reset)
    if (!stateKept) await this.start().catch((err) => notes.push(String(err.message ?? err)));
    const { config } = this.options;
    const driver = outcome === "exited" ? undefined : outcome;
    const status: ExecStatus = stop ?? (outcome === "exited" ? "crashed" : driver!.status === "ok" ? "ok" : "error");
    return {
      status,
      stdout: running.out.buffer.text(),
      stderr: running.err.buffer.text(),
      value: driver?.value != null ? capTail(driver.value, config.maxOutputChars) : null,
      error: driver?.error != null ? capTail(driver.error, config.maxOutputChars) : null,
      images: driver?.images ?? [],
      truncated: running.out.buffer.truncated || running.err.buffer.truncated || (driver?.value?.length ?? 0) > config.maxOutputChars,
      stateKept,
      note: notes.length ? notes.join("\n") : undefined,
      cell,
    };
  }

  /** SIGINT, then SIGKILL when the code does not give the interpreter back within the grace time. */
  private async interrupt(running: Running): Promise<DriverResult | "exited"> {
    const proc = this.proc;
    if (!proc?.pid) return running.result;
    proc.kill("SIGINT");
    const answered = await Promise.race([running.result, delay(this.options.config.interruptGraceMs).then(() => undefined)]);
    if (answered) return answered;
    this.options.log.info("interrupt ignored, killing the interpreter", { language: this.language, name: this.name, pid: proc.pid });
    this.killProcess(proc);
    return running.result;
  }

  /** A fresh interpreter: everything the session defined is dropped, a running execute stopped. */
  async restart(): Promise<void> {
    // let a start in progress finish first, so the reset kills a whole interpreter, not a half-started one
    await this.ready?.catch(() => undefined);
    const proc = this.proc;
    if (proc) {
      this.resetting = true;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      this.killProcess(proc);
      await exited; // onExit has forgotten the process by now
    }
    this.lostState = undefined;
    if (!this.closed) await this.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    const proc = this.proc;
    if (!proc) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    this.killProcess(proc);
    await Promise.race([exited, delay(5000)]);
  }

  info() {
    return {
      name: this.name,
      language: this.language,
      pid: this.pid ?? null,
      busy: this.busy,
      executions: this.executions,
      ageSeconds: Math.round((Date.now() - this.createdAt) / 1000),
      idleSeconds: Math.round((Date.now() - this.lastUsed) / 1000),
      interpreterAgeSeconds: this.proc ? Math.round((Date.now() - this.startedAt) / 1000) : null,
      memoryBytes: this.memoryBytes() ?? null,
    };
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
