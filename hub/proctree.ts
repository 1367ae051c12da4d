// Process trees read from /proc: to end a child with everything it started (ptys that called
// setsid included), and to report CPU and memory per child.
import fs from "node:fs";

interface ProcEntry {
  pid: number;
  ppid: number;
  /** resident set size in bytes */
  rss: number;
  /** user + system CPU time in clock ticks */
  cpuTicks: number;
}

const PAGE_SIZE = 4096;

function readProc(pid: number): ProcEntry | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name may contain spaces and parentheses: fields start after the last ')'
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      pid,
      ppid: Number(fields[1]),
      cpuTicks: Number(fields[11]) + Number(fields[12]),
      rss: Number(fields[21]) * PAGE_SIZE,
    };
  } catch {
    return undefined;
  }
}

function allProcesses(): ProcEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync("/proc");
  } catch {
    return [];
  }
  const entries: ProcEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = readProc(Number(name));
    if (entry) entries.push(entry);
  }
  return entries;
}

/** pid and all its descendants (parents before children). */
export function processTree(pid: number): ProcEntry[] {
  const all = allProcesses();
  const byParent = new Map<number, ProcEntry[]>();
  for (const p of all) {
    const list = byParent.get(p.ppid) ?? [];
    list.push(p);
    byParent.set(p.ppid, list);
  }
  const root = all.find((p) => p.pid === pid);
  if (!root) return [];
  const out: ProcEntry[] = [];
  const queue = [root];
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(byParent.get(p.pid) ?? []));
  }
  return out;
}

export function treeUsage(pid: number): { processes: number; rssBytes: number; cpuSeconds: number } {
  const tree = processTree(pid);
  const ticksPerSecond = 100; // USER_HZ is 100 on Linux
  return {
    processes: tree.length,
    rssBytes: tree.reduce((sum, p) => sum + p.rss, 0),
    cpuSeconds: tree.reduce((sum, p) => sum + p.cpuTicks, 0) / ticksPerSecond,
  };
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM the root (so it can free what it holds), wait up to graceMs, then SIGKILL whatever is
 * left of the tree as it was seen, including processes that outlived their parent.
 */
export async function killTree(pid: number, graceMs = 3000): Promise<void> {
  const tree = processTree(pid).map((p) => p.pid);
  if (tree.length === 0) return;
  signalAll([pid], "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && alive(pid)) await new Promise((r) => setTimeout(r, 50));
  const survivors = [...new Set([...tree, ...processTree(pid).map((p) => p.pid)])].filter(alive);
  signalAll(survivors, "SIGKILL");
}

/** Descendants of pid, without pid itself: for telling what a child left behind. */
export function descendants(pid: number): number[] {
  return processTree(pid)
    .slice(1)
    .map((p) => p.pid);
}
