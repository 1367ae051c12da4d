// The process table from /proc: one process, every process (in one go, or a slice at a time for a
// process that serves others: a tenant decides how many there are), the tree below one, and what
// they use.
import fs from "node:fs";
import { nextTurn } from "./next-turn.js";

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  sid: number;
  state: string;
  comm: string;
  /** resident set size in bytes */
  rssBytes: number;
  /** user + system CPU time in clock ticks */
  cpuTicks: number;
  /** when it started, in clock ticks since boot: with the pid, it names one process for good (a pid is reused) */
  startTicks: number;
}

const PAGE_SIZE = 4096;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

// a stat line is a few hundred bytes (comm is at most 16), and what is read of status ends before
// its Groups line: one buffer serves every synchronous read
const headBuffer = Buffer.allocUnsafe(4096);

/** The first 4 KiB of a /proc file, or undefined once the process is gone. */
function readHead(file: string): string | undefined {
  // open, read, close: readFileSync would also fstat the file and size a buffer for each process of a scan
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    return headBuffer.toString("utf8", 0, fs.readSync(fd, headBuffer, 0, headBuffer.length, 0));
  } catch {
    return undefined; // it exited between open and read
  } finally {
    fs.closeSync(fd);
  }
}

export function readProc(pid: number): ProcInfo | undefined {
  const stat = readHead(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : parseStat(pid, stat);
}

/** readProc, off the event loop. */
export async function readProcAsync(pid: number): Promise<ProcInfo | undefined> {
  const stat = await fs.promises.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  return stat === undefined ? undefined : parseStat(pid, stat);
}

/** Clock ticks since boot: the unit of ProcInfo.startTicks. */
export async function ticksSinceBoot(): Promise<number> {
  return Number((await fs.promises.readFile("/proc/uptime", "latin1")).split(" ")[0]) * TICKS_PER_SECOND;
}

function parseStat(pid: number, stat: string): ProcInfo {
  // comm is in parentheses and may itself contain spaces or ')': split after the last ')'
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return {
    pid,
    comm: stat.slice(stat.indexOf("(") + 1, close),
    state: fields[0],
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    sid: Number(fields[3]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
    rssBytes: Number(fields[21]) * PAGE_SIZE,
    startTicks: Number(fields[19]),
  };
}

/** A snapshot of the process table. Processes that vanish while reading are skipped. */
export function listProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const info = readProc(Number(name));
    if (info) out.push(info);
  }
  return out;
}

/**
 * The processes this one may signal, a slice at a time (see readEveryProcess), judged by the owner
 * of each /proc entry: every one for root, otherwise its own uid's and root's (the kernel shows
 * root as the owner of a process that made itself undumpable, which may be one of ours). Another
 * uid's processes are not read at all: a tenant's terminal scans for its command's leftovers at
 * every command, and another tenant's thousands of processes would make each scan cost four times
 * as much. A process of ours that took another uid through a setuid program is missed; a tenant's
 * processes cannot (no_new_privs).
 */
export function signallableProcesses(): Promise<ProcInfo[]> {
  const uid = process.geteuid?.() ?? 0;
  if (uid === 0) return listProcessesAsync();
  return readEveryProcess("stat", parseStat, (name) => {
    const owner = fs.statSync(`/proc/${name}`, { throwIfNoEntry: false })?.uid;
    return owner === uid || owner === 0;
  });
}

/** Every process below `root` in the parent chain (not including root), parents first. */
export function descendantsOf<P extends Pick<ProcInfo, "pid" | "ppid"> = ProcInfo>(root: number, procs: P[] = listProcesses() as unknown as P[]): P[] {
  const children = new Map<number, P[]>();
  for (const p of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const found: P[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** The real uid of a process, from status (/proc/<pid> itself is root's when it is not dumpable). */
export function realUid(pid: number): number | undefined {
  try {
    const line = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** What the hub's sweeper needs of a process: its parent, state and real uid. */
export interface ProcOwner {
  pid: number;
  ppid: number;
  state: string;
  uid: number;
}

// status: "Name" comes first and is escaped by the kernel, so a process cannot fake the lines after it
const STATUS_FIELDS = /^State:\s+(\S+)[^]*?^PPid:\s+(\d+)[^]*?^Uid:\s+(\d+)/m;

/** The process table with each process's owner, a slice at a time (see readEveryProcess). Processes that vanish while reading are skipped. */
export function listOwners(): Promise<ProcOwner[]> {
  return readEveryProcess("status", (pid, status) => {
    const fields = STATUS_FIELDS.exec(status);
    return fields ? { pid, state: fields[1], ppid: Number(fields[2]), uid: Number(fields[3]) } : undefined;
  });
}

/** listProcesses, a slice at a time (see readEveryProcess). */
export function listProcessesAsync(): Promise<ProcInfo[]> {
  return readEveryProcess("stat", parseStat);
}

/** How many processes a scan reads between two turns of the event loop: about a millisecond's work. */
export const PROCESSES_PER_TURN = 64;

/**
 * One file of every process (that `wanted` names): for the hub, whose every tenant may run
 * thousands, and a terminal serving its tenant's sessions. Read in slices, the event loop turning
 * between them, so no scan holds up anyone else for longer than a slice. Each read is
 * synchronous: through the thread pool (a promise for each open, fstat, read and close) the same
 * scan cost three to five times the CPU.
 */
async function readEveryProcess<T>(
  file: "stat" | "status",
  parse: (pid: number, text: string) => T | undefined,
  wanted?: (name: string) => boolean,
): Promise<T[]> {
  const names = await fs.promises.readdir("/proc");
  const out: T[] = [];
  let read = 0;
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    if (++read % PROCESSES_PER_TURN === 0) await nextTurn();
    if (wanted && !wanted(name)) continue;
    const text = readHead(`/proc/${name}/${file}`);
    const parsed = text === undefined ? undefined : parse(Number(name), text);
    if (parsed) out.push(parsed);
  }
  return out;
}

/**
 * The first bytes of a file, read off the event loop into the buffer given (whose size bounds the
 * work, however large the file): for /proc/<pid>/environ, which a process makes as large as it likes.
 */
export async function readStart(file: string, buffer: Buffer): Promise<Buffer> {
  const handle = await fs.promises.open(file, "r");
  try {
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** CPU and memory of a process and everything below it. */
export function treeUsage(pid: number, procs: ProcInfo[] = listProcesses()): { processes: number; rssBytes: number; cpuSeconds: number } {
  const root = procs.find((p) => p.pid === pid);
  if (!root) return { processes: 0, rssBytes: 0, cpuSeconds: 0 };
  const tree = [root, ...descendantsOf(pid, procs)];
  return {
    processes: tree.length,
    rssBytes: tree.reduce((sum, p) => sum + p.rssBytes, 0),
    cpuSeconds: tree.reduce((sum, p) => sum + p.cpuTicks, 0) / TICKS_PER_SECOND,
  };
}
