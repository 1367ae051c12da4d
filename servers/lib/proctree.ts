// The process table from /proc, read once for everyone who needs it: the hub (ending a child
// with all it started, per-child CPU and memory) and the terminal (killing a command's tree).
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
}

const PAGE_SIZE = 4096;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export function readProc(pid: number): ProcInfo | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
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

/** Every process below `root` in the parent chain (not including root), parents first. */
export function descendantsOf(root: number, procs: ProcInfo[] = listProcesses()): ProcInfo[] {
  const children = new Map<number, ProcInfo[]>();
  for (const p of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const found: ProcInfo[] = [];
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

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** CPU and memory of a process and everything below it. */
export function treeUsage(pid: number): { processes: number; rssBytes: number; cpuSeconds: number } {
  const procs = listProcesses();
  const root = procs.find((p) => p.pid === pid);
  if (!root) return { processes: 0, rssBytes: 0, cpuSeconds: 0 };
  const tree = [root, ...descendantsOf(pid, procs)];
  return {
    processes: tree.length,
    rssBytes: tree.reduce((sum, p) => sum + p.rssBytes, 0),
    cpuSeconds: tree.reduce((sum, p) => sum + p.cpuTicks, 0) / TICKS_PER_SECOND,
  };
}
