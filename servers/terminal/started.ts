// A command's process as the exec runner sees it, however it was started: by the launcher
// (./launcher.ts) or, without one, by this server's own spawn, which forks the server.
import { spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A command started, by the launcher or by spawn. */
export interface Started {
  pid: number;
  stdin?: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Descriptor 3, when asked for (the reaper's report). */
  report?: Readable;
  exit: Promise<Exit>;
  /** Once it has exited and its stdout, stderr and report are closed (a ChildProcess's "close"). */
  closed: Promise<void>;
  /** Closes its streams, when something that cannot be found still holds them open. */
  destroyStreams(): void;
}

export interface StartOptions {
  cwd: string;
  env: Record<string, string>;
  /** Give it a stdin to write to (else /dev/null). */
  stdin: boolean;
  /** Give it descriptor 3 to report on. */
  report: boolean;
}

/** The command spawned by this server: a fork of it. */
export function spawned(file: string, args: string[], options: StartOptions): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe", ...(options.report ? (["pipe"] as const) : [])],
    });
    if (child.pid === undefined) {
      child.once("error", reject);
      return;
    }
    resolve({
      pid: child.pid,
      stdin: child.stdin ?? undefined,
      stdout: child.stdout!,
      stderr: child.stderr!,
      report: options.report ? (child.stdio[3] as Readable) : undefined,
      exit: new Promise((done) => child.once("exit", (code, signal) => done({ code, signal }))),
      closed: new Promise((done) => child.once("close", () => done())),
      destroyStreams: () => child.stdio.forEach((stream) => stream?.destroy()),
    });
  });
}
