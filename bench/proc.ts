// Processes the benchmark starts (hub, peers) and their memory, read from /proc: the RSS of a
// server is that of its whole process tree (the browser server's Chromium, code interpreters).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import readline from "node:readline";
import { sleep } from "./stats.js";

/** Resident set size of one process in bytes, or undefined when it is gone. */
export function rssOf(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Every live pid with its parent, read once so a tree walk sees one consistent picture. */
function parentMap(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // the command name may contain spaces and parentheses: fields start after the last ")"
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // exited while we looked
    }
  }
  return children;
}

export function descendants(pid: number, map = parentMap()): number[] {
  const out: number[] = [];
  const stack = [...(map.get(pid) ?? [])];
  while (stack.length) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(map.get(p) ?? []));
  }
  return out;
}

/** RSS of a process and all its descendants (shared pages are counted once per process). */
export function treeRss(pid: number, map = parentMap()): { bytes: number; processes: number } {
  const pids = [pid, ...descendants(pid, map)];
  let bytes = 0;
  let processes = 0;
  for (const p of pids) {
    const rss = rssOf(p);
    if (rss === undefined) continue;
    bytes += rss;
    processes++;
  }
  return { bytes, processes };
}

export { parentMap };

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Spawned {
  process: ChildProcess;
  pid: number;
  output: string[];
  stop(): Promise<void>;
}

/** Start a server process, keep its last output lines for error messages. */
export function start(command: string, args: string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  const keep = (line: string) => {
    output.push(line);
    if (output.length > 200) output.shift();
  };
  readline.createInterface({ input: child.stdout! }).on("line", keep);
  readline.createInterface({ input: child.stderr! }).on("line", keep);
  child.on("error", (err) => keep(`spawn error: ${err.message}`));
  return {
    process: child,
    pid: child.pid ?? -1,
    output,
    stop: () => stopTree(child),
  };
}

/** SIGTERM the process, then SIGKILL it and anything it left behind. */
export async function stopTree(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.pid === undefined) return;
  const tree = descendants(child.pid);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  }
  // peers do not always reap the children they spawned: kill the ones still there
  await sleep(50);
  for (const pid of tree) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Wait until a line of the process output matches, e.g. the hub's "listening" log. */
export async function waitForOutput(spawned: Spawned, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  while (Date.now() < deadline) {
    for (; seen < spawned.output.length; seen++) {
      const match = pattern.exec(spawned.output[seen]);
      if (match) return match;
    }
    if (spawned.process.exitCode !== null) break;
    await sleep(5);
  }
  throw new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${spawned.output.slice(-20).join("\n")}`);
}

/** Wait until a TCP port on loopback accepts connections. */
export async function waitForPort(port: number, spawned: Spawned, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (spawned.process.exitCode !== null) break;
    await sleep(20);
  }
  throw new Error(`port ${port} not open within ${timeoutMs} ms:\n${spawned.output.slice(-20).join("\n")}`);
}

/**
 * Proportional set size of a process tree in bytes: shared pages divided among the processes
 * sharing them, so Chromium's many processes are not counted several times over as RSS is.
 */
export function treePss(pid: number, map = parentMap()): number {
  let bytes = 0;
  for (const p of [pid, ...descendants(pid, map)]) bytes += pssOf(p) ?? 0;
  return bytes;
}

/** Proportional set size of one process in bytes (smaps_rollup), or undefined when it is gone. */
export function pssOf(pid: number): number | undefined {
  try {
    const match = /^Pss:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined; // gone, or not readable
  }
}

/**
 * CPU time (user + system) a process and its descendants have used, in ms. On a shared machine
 * wall-clock latency mostly measures the queue for a core; CPU per call is what a server costs.
 * With its descendants, what those that ended have used counts too: a process that ends and is
 * reaped leaves the tree, and its time moves to its parent's cutime and cstime. Without them, a
 * helper ending mid-round took its whole life's CPU out of the round (a round of table 8 once
 * read -0.069 ms per call for a hub's children).
 */
export function cpuMs(pid: number, withChildren = false, map?: Map<number, number[]>): number {
  const pids = withChildren ? [pid, ...descendants(pid, map ?? parentMap())] : [pid];
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  let total = 0;
  for (const p of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12]) + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0)) * tick;
    } catch {
      // exited
    }
  }
  return total;
}

/** A process's arguments, from /proc; none once it is gone. */
export function cmdlineOf(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}
