// Starting a command without forking this server. A fork of a Node process copies its page tables,
// and the child tears the copy down again at exec: about 1 ms of CPU per command, while the
// server's event loop waits. The launcher (./launcher/agentbox-launcher.c), started once, is a
// small program whose fork costs a tenth of that. A command's stdio are connections to a socket
// this server listens on, in a folder only its user may enter; each names its command by a nonce
// before the command starts. Without the compiled helper, or if it cannot be started, commands
// are spawned as before.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { createLogger, errorMessage } from "../lib/log.js";
import { signal } from "../lib/proctree.js";
import { launcherFolder } from "./launcher-folder.js";
import { executable } from "./program.js";
import { spawned, type Exit, type Started, type StartOptions } from "./started.js";

const log = createLogger({ server: "terminal", part: "launcher" });

// dist/servers/terminal/ (the bundle keeps this module's own location): the helper is in dist/bin/
const helper = fileURLToPath(new URL("../../bin/agentbox-launcher", import.meta.url));

/** `file` with `args` in a new session, with its stdio: by the launcher where there is one. */
export function startCommand(file: string, args: string[], options: StartOptions): Promise<Started> {
  return launcher.usable() ? launcher.start(file, args, options).catch((err) => launcher.orSpawn(err, file, args, options)) : spawned(file, args, options);
}

// the launcher answers at once; a request it never saw (it died, or something read its pipe) must not hold a call forever
const START_TIMEOUT_MS = 10_000;
// a connection that has not said whose stream it is by then is not the launcher's
const HELLO_TIMEOUT_MS = 5_000;
const HELLO = /^([0-9a-f]{32}) ([ioer])$/;
const MAX_HELLO = 40;

interface Pending {
  kinds: string;
  streams: Map<string, net.Socket>;
  closes: Promise<void>[];
  pid?: number;
  started: boolean;
  hasExited: boolean;
  resolve(started: Started): void;
  reject(err: Error): void;
  exited(exit: Exit): void;
  exit: Promise<Exit>;
  timer: NodeJS.Timeout;
  /** The same command spawned by the server, should the launcher prove unable to start anything. */
  spawn(): Promise<Started>;
}

interface Running {
  process: ChildProcess;
  server: net.Server;
  dir: string;
  /** Whether it has started a command: one that ends before it has cannot start any. */
  startedAny: boolean;
}

class Launcher {
  private readonly pending = new Map<string, Pending>();
  private running?: Promise<Running>;
  private broken = !executable(helper);
  /** The socket's folder, removed when the launcher or this server ends. */
  private dir?: string;

  constructor() {
    process.once("exit", () => this.dir && fs.rmSync(this.dir, { recursive: true, force: true }));
  }

  usable(): boolean {
    return !this.broken;
  }

  /** The launcher could not be started: say so once, and spawn from now on. */
  orSpawn(err: unknown, file: string, args: string[], options: StartOptions): Promise<Started> {
    if (!(err instanceof LauncherUnavailable)) throw err;
    if (!this.broken) log.warn("the command launcher could not start; commands are spawned by the server", { error: errorMessage(err.cause) });
    this.broken = true;
    return spawned(file, args, options);
  }

  async start(file: string, args: string[], options: StartOptions): Promise<Started> {
    const running = await (this.running ??= this.open().catch((err) => {
      this.running = undefined;
      throw new LauncherUnavailable(err);
    }));
    const fields = [file, ...args, ...Object.entries(options.env).map(([key, value]) => `${key}=${value}`)];
    if (fields.some((field) => field.includes("\0")) || options.cwd.includes("\0")) {
      throw new TypeError("The command, its working directory and its environment may not contain NUL bytes");
    }
    const nonce = randomBytes(16).toString("hex");
    const kinds = `${options.stdin ? "i" : ""}oe${options.report ? "r" : ""}`;
    const request = Buffer.from([nonce, options.cwd, kinds, String(args.length + 1), ...fields, ""].join("\0"));
    return new Promise<Started>((resolve, reject) => {
      let exited!: (exit: Exit) => void;
      const exit = new Promise<Exit>((done) => (exited = done));
      const timer = setTimeout(
        () => this.fail(nonce, new Error(`the command launcher did not start it within ${START_TIMEOUT_MS / 1000} s`)),
        START_TIMEOUT_MS,
      );
      const spawn = () => spawned(file, args, options);
      this.pending.set(nonce, { kinds, streams: new Map(), closes: [], started: false, hasExited: false, resolve, reject, exited, exit, timer, spawn });
      running.process.stdin!.write(`${request.length}\n`);
      running.process.stdin!.write(request);
    });
  }

  private async open(): Promise<Running> {
    const { dir, socketPath } = launcherFolder();
    this.dir = dir;
    try {
      const server = net.createServer((socket) => this.accept(socket));
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(socketPath, () => resolve());
      });
      server.on("error", (err) => log.warn("the launcher's socket failed", { error: errorMessage(err) }));
      const child = spawn(helper, [socketPath], { stdio: ["pipe", "pipe", "inherit"] });
      if (child.pid === undefined) {
        server.close();
        throw await new Promise<Error>((resolve) => child.once("error", resolve));
      }
      child.stdin!.on("error", () => undefined); // it ended: "exit" says so
      const running: Running = { process: child, server, dir, startedAny: false };
      let partial = "";
      child.stdout!.setEncoding("latin1").on("data", (chunk: string) => {
        const lines = (partial + chunk).split("\n");
        partial = lines.pop()!;
        for (const line of lines) this.heard(line, running);
      });
      child.once("exit", () => this.lost(running));
      return running;
    } catch (err) {
      this.dir = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** A line from the launcher: started, failed or exited. */
  private heard(line: string, running: Running): void {
    const [what, nonce, ...rest] = line.split(" ");
    const p = this.pending.get(nonce);
    if (what === "started") {
      const pid = Number(rest[0]);
      running.startedAny = true;
      if (p) {
        p.pid = pid;
        this.settle(nonce, p);
      } else if (pid > 0) {
        // given up on (timed out): nobody reads it, so it must not run
        signal(-pid, "SIGKILL");
      }
    } else if (what === "failed" && p) {
      this.fail(nonce, new Error(rest.join(" ")));
    } else if (what === "exited" && p) {
      p.hasExited = true;
      p.exited({ code: rest[0] === "-" ? null : Number(rest[0]), signal: rest[1] === "-" ? null : signalName(Number(rest[1])) });
      this.forget(nonce, p);
    }
  }

  /** A connection to the socket: the stream of the command its first line names, or nothing. */
  private accept(socket: net.Socket): void {
    socket.on("error", () => socket.destroy());
    socket.setTimeout(HELLO_TIMEOUT_MS, () => socket.destroy());
    let head = Buffer.alloc(0);
    const onReadable = () => {
      for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null;) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf(10);
        if (end < 0) {
          if (head.length > MAX_HELLO) socket.destroy();
          continue;
        }
        socket.off("readable", onReadable);
        socket.setTimeout(0);
        const rest = head.subarray(end + 1);
        if (rest.length > 0) socket.unshift(rest);
        this.attach(head.subarray(0, end).toString("latin1"), socket);
        return;
      }
    };
    socket.on("readable", onReadable);
  }

  private attach(hello: string, socket: net.Socket): void {
    const [, nonce, kind] = HELLO.exec(hello) ?? [];
    const p = nonce ? this.pending.get(nonce) : undefined;
    if (!p || !p.kinds.includes(kind) || p.streams.has(kind)) {
      socket.destroy();
      return;
    }
    p.streams.set(kind, socket);
    if (kind === "i")
      socket.resume(); // what a command writes to its stdin is nobody's
    else p.closes.push(new Promise((done) => socket.once("close", () => done())));
    this.settle(nonce, p);
  }

  /** Started once the launcher gave its pid and every stream has come. */
  private settle(nonce: string, p: Pending): void {
    if (p.started || p.pid === undefined || p.streams.size < p.kinds.length) return;
    p.started = true;
    clearTimeout(p.timer);
    const streams = [...p.streams.values()];
    p.resolve({
      pid: p.pid,
      stdin: p.streams.get("i"),
      stdout: p.streams.get("o")!,
      stderr: p.streams.get("e")!,
      report: p.streams.get("r"),
      exit: p.exit,
      closed: Promise.all([p.exit, ...p.closes]).then(() => undefined),
      destroyStreams: () => streams.forEach((stream) => stream.destroy()),
    });
    this.forget(nonce, p);
  }

  private fail(nonce: string, err: Error): void {
    const p = this.pending.get(nonce);
    if (!p) return;
    this.pending.delete(nonce);
    clearTimeout(p.timer);
    for (const stream of p.streams.values()) stream.destroy();
    p.reject(err);
  }

  /** Done with once both started and exited; until then a lost launcher must still end it. */
  private forget(nonce: string, p: Pending): void {
    if (p.started && p.hasExited) this.pending.delete(nonce);
  }

  /**
   * The launcher ended (a command of this user may kill it): commands not yet started fail, and
   * those running are ended, since their exit could no longer be told. The next command starts a
   * new launcher; one that ended before starting anything cannot start commands here at all.
   */
  private lost(running: Running): void {
    this.running = this.dir = undefined;
    running.server.close();
    fs.rmSync(running.dir, { recursive: true, force: true });
    if (!running.startedAny && !this.broken) {
      const { exitCode: code, signalCode: signal } = running.process;
      log.warn("the command launcher ended before it started any command; commands are spawned by the server", { code, signal });
      this.broken = true;
    }
    for (const [nonce, p] of [...this.pending]) {
      if (!p.started) {
        if (p.pid !== undefined) signal(-p.pid, "SIGKILL");
        if (!running.startedAny) {
          // never started one: the server starts them itself
          this.pending.delete(nonce);
          clearTimeout(p.timer);
          p.spawn().then(p.resolve, p.reject);
        } else this.fail(nonce, new Error("the command launcher ended before the command started; run it again"));
        continue;
      }
      this.pending.delete(nonce);
      signal(-p.pid!, "SIGKILL");
      p.exited({ code: null, signal: "SIGKILL" });
    }
  }
}

class LauncherUnavailable extends Error {
  constructor(readonly cause: unknown) {
    super(`the command launcher could not start: ${errorMessage(cause)}`);
  }
}

const signalNames = new Map(Object.entries(os.constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]));
const signalName = (n: number): NodeJS.Signals | null => signalNames.get(n) ?? null;

const launcher = new Launcher();
