// Run one command line through bash with separate stdout/stderr, a timeout, cancellation and a
// guarantee that nothing it started outlives it. The launcher starts it (./launcher.ts); when bash
// exits its subreaper (./reaper.ts) ends what is left, and on timeout, on cancel, or when no report
// comes, the whole tree is killed (see ../lib/proctree.ts). Every process is reaped.
import { randomUUID } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import { childEnv } from "./config.js";
import { killTree, markedTree, TREE_MARKER_ENV, type Tree } from "../lib/proctree.js";
import { startCommand } from "./launcher.js";
import type { Exit } from "./started.js";
import { reportOf, underReaper } from "./reaper.js";
import { TailBuffer } from "./tail-buffer.js";

export interface ExecOptions {
  command: string;
  cwd: string;
  env?: Record<string, string>;
  /** The hub\'s callback token of the client session: the command carries its claim (../lib/session-claim.ts). */
  sessionToken?: string;
  stdin?: string;
  timeoutMs: number;
  maxOutput: number;
  signal: AbortSignal;
  /** Called with each decoded chunk as it arrives. */
  onOutput?(stream: "stdout" | "stderr", text: string): void;
}

export interface ExecResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Bytes dropped from the front of each stream because of the output cap. */
  droppedBytes: { stdout: number; stderr: number };
  durationMs: number;
  timedOut: boolean;
  cancelled: boolean;
  /** Processes killed when the command ended, timed out or was cancelled (leftovers included). */
  killedProcesses: number;
}

/** Trees of commands still running, so shutdown can kill them. */
const running = new Set<Tree>();

export async function killAllExecs(): Promise<void> {
  await Promise.all([...running].map((tree) => killTree(tree)));
}

// If some process we could not identify still holds the pipes after the tree was killed, stop
// waiting for them after this long rather than hanging the call.
const PIPE_GRACE_MS = 2000;

export async function runCommand(options: ExecOptions): Promise<ExecResult> {
  const started = performance.now();
  const marker = randomUUID();
  // --norc: bash -c reads ~/.bashrc when its stdin is a socket (it takes that for rshd/sshd),
  // and a command's stdin is one, so a command given stdin ran the rc file and one without did
  // not. Neither does now. The command leads a new session and process group, so the group can be
  // killed whole without touching the server.
  const run = underReaper(["/bin/bash", "--norc", "-c", options.command]);
  const child = await startCommand(run.file, run.args, {
    cwd: options.cwd,
    env: childEnv(options.env, TREE_MARKER_ENV, marker, options.sessionToken),
    stdin: options.stdin !== undefined,
    report: run.reported,
  });
  const tree: Tree = markedTree(child.pid, marker);
  running.add(tree);
  const report = reportOf(child.report);

  const out = { stdout: new TailBuffer(options.maxOutput), stderr: new TailBuffer(options.maxOutput) };
  for (const name of ["stdout", "stderr"] as const) {
    const decoder = new StringDecoder("utf8");
    child[name].on("data", (chunk: Buffer) => {
      out[name].append(chunk);
      const text = decoder.write(chunk);
      if (text) options.onOutput?.(name, text);
    });
  }
  if (options.stdin !== undefined) {
    child.stdin!.on("error", () => undefined); // the command may exit without reading its input
    child.stdin!.end(options.stdin);
  }

  let timedOut = false;
  let cancelled = false;
  let killed = 0;
  let killing: Promise<void> | undefined;
  const kill = () => {
    killing ??= killTree(tree).then((n) => {
      killed = n;
    });
    return killing;
  };
  const timer = setTimeout(() => {
    timedOut = true;
    void kill();
  }, options.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    void kill();
  };
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener("abort", onAbort, { once: true });

  // Whatever bash left running in the background goes with it: ended by the reaper, which says
  // so, or else killed here. Once those die the pipes close.
  let graceTimer: NodeJS.Timeout | undefined;
  let exit: Exit;
  try {
    exit = await child.exit;
    const left = await report;
    if (left !== undefined && !killing) killed = left;
    else await kill();
    graceTimer = setTimeout(() => child.destroyStreams(), PIPE_GRACE_MS);
    await child.closed;
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    options.signal.removeEventListener("abort", onAbort);
    running.delete(tree);
  }
  return {
    exitCode: exit.code,
    signal: exit.signal,
    stdout: out.stdout.text(),
    stderr: out.stderr.text(),
    droppedBytes: { stdout: out.stdout.start, stderr: out.stderr.start },
    durationMs: Math.round(performance.now() - started),
    timedOut,
    cancelled,
    killedProcesses: killed,
  };
}
