// The process table from /proc, and killing a process with everything it started: one module for
// the hub (ending a child, per-child CPU and memory) and the terminal (ending a command or a pty).
import fs from "node:fs";

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

// a stat line is a few hundred bytes (comm is at most 16): one buffer serves every synchronous read
const statBuffer = Buffer.allocUnsafe(4096);

export function readProc(pid: number): ProcInfo | undefined {
  // open, read, close: readFileSync would also fstat the file and size a buffer for each process of a scan
  let fd: number;
  try {
    fd = fs.openSync(`/proc/${pid}/stat`, "r");
  } catch {
    return undefined;
  }
  try {
    return parseStat(pid, statBuffer.toString("utf8", 0, fs.readSync(fd, statBuffer, 0, statBuffer.length, 0)));
  } catch {
    return undefined; // it exited between open and read
  } finally {
    fs.closeSync(fd);
  }
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
  return readProcesses(() => true);
}

/**
 * The processes this one may signal, judged by the owner of each /proc entry: every one for root,
 * otherwise its own uid's and root's (the kernel shows root as the owner of a process that made
 * itself undumpable, which may be one of ours). Another uid's processes are not read at all: a
 * tenant's terminal scans for its command's leftovers at every command, and another tenant's
 * thousands of processes would make each scan cost four times as much. A process of ours that
 * took another uid through a setuid program is missed; a tenant's processes cannot (no_new_privs).
 */
export function signallableProcesses(): ProcInfo[] {
  const uid = process.geteuid?.() ?? 0;
  if (uid === 0) return listProcesses();
  return readProcesses((name) => {
    const owner = fs.statSync(`/proc/${name}`, { throwIfNoEntry: false })?.uid;
    return owner === uid || owner === 0;
  });
}

function readProcesses(wanted: (name: string) => boolean): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || !wanted(name)) continue;
    const info = readProc(Number(name));
    if (info) out.push(info);
  }
  return out;
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

/**
 * The process table with each process's owner, read off the event loop a few files at a time
 * (however many processes there are, the event loop only parses their status): for the hub, whose
 * every tenant may run thousands. Processes that vanish while reading are skipped.
 */
export function listOwners(): Promise<ProcOwner[]> {
  return readEveryProcess("status", (pid, status) => {
    const fields = STATUS_FIELDS.exec(status);
    return fields ? { pid, state: fields[1], ppid: Number(fields[2]), uid: Number(fields[3]) } : undefined;
  });
}

/** listProcesses, read off the event loop (for the hub: a tenant decides how many processes there are). */
export function listProcessesAsync(): Promise<ProcInfo[]> {
  return readEveryProcess("stat", parseStat);
}

async function readEveryProcess<T>(file: "stat" | "status", parse: (pid: number, text: string) => T | undefined, readersAtOnce = 8): Promise<T[]> {
  const pids = (await fs.promises.readdir("/proc")).filter((name) => /^\d+$/.test(name)).map(Number);
  const out: T[] = [];
  let next = 0;
  const reader = async () => {
    while (next < pids.length) {
      const pid = pids[next++];
      const text = await fs.promises.readFile(`/proc/${pid}/${file}`, "latin1").catch(() => undefined);
      const parsed = text === undefined ? undefined : parse(pid, text);
      if (parsed) out.push(parsed);
    }
  };
  await Promise.all(Array.from({ length: readersAtOnce }, reader));
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

/**
 * The environment variable carrying a tree's marker into every process it starts. Descendants
 * inherit it, so it still names them after they called setsid() or were reparented.
 */
export const TREE_MARKER_ENV = "AGENTBOX_TERMINAL_TREE";

/** What to kill: a process, and optionally the marker (value of TREE_MARKER_ENV) it was started with. */
export interface Tree {
  root: number;
  marker?: string;
  /**
   * The root's ProcInfo.startTicks. A process older than the root cannot be one it started, so
   * only younger ones have their environment read for the marker: most processes a scan meets are
   * older than a command, and reading one's environment costs as much as reading its stat.
   */
  startTicks?: number;
}

/** The tree of a process just started with `marker` in its environment (its start read now, while it surely runs). */
export function markedTree(root: number, marker: string): Tree {
  return { root, marker, startTicks: readProc(root)?.startTicks };
}

function carriesMarker(pid: number, marker: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${TREE_MARKER_ENV}=${marker}`);
  } catch {
    return false;
  }
}

/**
 * Live members of a tree right now: the root, everything below it in the parent chain, whatever
 * is in the root's process group or session (it leads them when spawned detached or on a pty),
 * given a marker every process carrying it, and those of `known` still there. Zombies are left
 * out (they only wait to be reaped), and so is this process.
 */
export function membersOf(tree: Tree, procs: ProcInfo[] = signallableProcesses(), known: number[] = []): number[] {
  const members = new Set<number>(known);
  for (const p of descendantsOf(tree.root, procs)) members.add(p.pid);
  for (const p of procs) {
    if (
      p.pid === tree.root ||
      p.pgrp === tree.root ||
      p.sid === tree.root ||
      (tree.marker && p.startTicks >= (tree.startTicks ?? 0) && carriesMarker(p.pid, tree.marker))
    ) {
      members.add(p.pid);
    }
  }
  members.delete(process.pid);
  const live = new Set(procs.filter((p) => p.state !== "Z").map((p) => p.pid));
  return [...members].filter((pid) => live.has(pid));
}

/** Send a signal; false when the process is gone already. */
export function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false; // already gone
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface KillOptions {
  /** SIGTERM the root first and give it this long to exit (and free what it holds) before SIGKILL; 0: SIGKILL at once. */
  graceMs?: number;
}

/**
 * Kill a process and everything it started. With a grace, the root gets SIGTERM first and up to
 * graceMs to exit; then every member left (see membersOf, plus the descendants seen before the
 * grace, which the root's exit may have reparented out of the parent chain) is stopped, so none
 * can fork between scan and kill, and SIGKILLed, repeating until nothing alive is left. Returns
 * how many distinct processes it found and signalled.
 */
export async function killTree(target: number | Tree, options: KillOptions = {}): Promise<number> {
  const tree = typeof target === "number" ? { root: target } : target;
  const graceMs = options.graceMs ?? 0;
  const signalled = new Set<number>();
  const running = () => ![undefined, "Z"].includes(readProc(tree.root)?.state);
  let earlier: number[] = [];
  if (graceMs > 0 && running()) {
    // the root's exit during the grace may take its descendants out of the parent chain: seen before it, they are still killed
    earlier = membersOf(tree);
    if (signal(tree.root, "SIGTERM")) {
      signalled.add(tree.root);
      const deadline = Date.now() + graceMs;
      // an exited root counts as gone though its parent has not reaped it yet
      while (Date.now() < deadline && running()) await pause(50);
    }
  }
  for (let round = 0; round < 50; round++) {
    signal(-tree.root, "SIGSTOP");
    const members = membersOf(tree, signallableProcesses(), earlier);
    earlier = [];
    if (members.length === 0) break;
    for (const pid of members) signal(pid, "SIGSTOP");
    // A stopped tree cannot grow: one more scan catches children forked just before the stop.
    const all = new Set([...members, ...membersOf(tree)]);
    signal(-tree.root, "SIGKILL");
    for (const pid of all) {
      // counted even if already gone: the group kill just above may have killed and reaped it
      signal(pid, "SIGKILL");
      signalled.add(pid);
    }
    await pause(10);
  }
  return signalled.size;
}
