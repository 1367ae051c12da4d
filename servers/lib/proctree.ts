// Killing a process with everything it started: one module for the hub (ending a child) and the
// terminal (ending a command or a pty), which finds what escaped its tree by a marker.
import fs from "node:fs";
import { descendantsOf, readProc, signallableProcesses, type ProcInfo } from "./proc-table.js";

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

const hasMarker = (environ: string, marker: string) => environ.split("\0").includes(`${TREE_MARKER_ENV}=${marker}`);

async function carriesMarker(pid: number, marker: string): Promise<boolean> {
  const environ = await fs.promises.readFile(`/proc/${pid}/environ`, "latin1").catch(() => "");
  return hasMarker(environ, marker);
}

/**
 * Live members of a tree right now: the root, everything below it in the parent chain, whatever
 * is in the root's process group or session (it leads them when spawned detached or on a pty),
 * given a marker every process carrying it, and those of `known` still there. Zombies are left
 * out (they only wait to be reaped), and so is this process. The table is read a slice at a
 * time: the hub must not stall for every process a tenant started, nor a terminal for its
 * tenant's other sessions.
 */
export async function membersOf(tree: Tree, known: number[] = []): Promise<number[]> {
  const procs = await signallableProcesses();
  const members = new Set<number>(known);
  for (const p of descendantsOf(tree.root, procs)) members.add(p.pid);
  for (const p of procs) if (p.pid === tree.root || p.pgrp === tree.root || p.sid === tree.root) members.add(p.pid);
  if (tree.marker) {
    // only what the tree's links did not name (an escaped process, or another command's), one at a
    // time: a tenant may have thousands
    const unnamed = procs.filter((p) => !members.has(p.pid) && youngEnough(tree, p));
    for (const p of unnamed) if (await carriesMarker(p.pid, tree.marker)) members.add(p.pid);
  }
  members.delete(process.pid);
  const live = new Set(procs.filter((p) => p.state !== "Z").map((p) => p.pid));
  return [...members].filter((pid) => live.has(pid));
}

const youngEnough = (tree: Tree, p: ProcInfo) => p.startTicks >= (tree.startTicks ?? 0);

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
    earlier = await membersOf(tree);
    if (signal(tree.root, "SIGTERM")) {
      signalled.add(tree.root);
      const deadline = Date.now() + graceMs;
      // an exited root counts as gone though its parent has not reaped it yet
      while (Date.now() < deadline && running()) await pause(50);
    }
  }
  for (let round = 0; round < 50; round++) {
    signal(-tree.root, "SIGSTOP");
    const members = await membersOf(tree, earlier);
    earlier = [];
    if (members.length === 0) break;
    for (const pid of members) signal(pid, "SIGSTOP");
    // A stopped tree cannot grow: one more scan catches children forked just before the stop.
    const all = new Set([...members, ...(await membersOf(tree))]);
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
