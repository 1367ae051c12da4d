// Finding and killing every process a command or terminal started. A process group kill alone
// misses children that called setsid() or were reparented once their parent died, so each tree
// is identified three ways: the parent chain from its root, the root's process group / session,
// and an environment marker every descendant inherits (which survives reparenting).
import fs from "node:fs";
import { descendantsOf, listProcesses } from "../lib/proctree.js";

/** The environment variable carrying a tree's marker into every process it starts. */
export const TREE_MARKER_ENV = "AGENTBOX_TERMINAL_TREE";

function carriesMarker(pid: number, marker: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${TREE_MARKER_ENV}=${marker}`);
  } catch {
    return false;
  }
}

export interface Tree {
  /** The process that was spawned (it leads its own process group and session). */
  root: number;
  /** The value of TREE_MARKER_ENV given to the root. */
  marker: string;
}

/** Live members of a tree right now (zombies excluded: they only wait to be reaped). */
export function membersOf(tree: Tree): number[] {
  const procs = listProcesses();
  const members = new Set<number>();
  for (const p of descendantsOf(tree.root, procs)) members.add(p.pid);
  for (const p of procs) {
    if (p.pid === tree.root || p.pgrp === tree.root || p.sid === tree.root || carriesMarker(p.pid, tree.marker)) {
      members.add(p.pid);
    }
  }
  // Never signal ourselves (or a zombie, which cannot be killed again).
  members.delete(process.pid);
  return [...members].filter((pid) => procs.find((p) => p.pid === pid)?.state !== "Z");
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/**
 * Kill a whole tree. Members are stopped first so none can fork a new child between the scan
 * and the kill; scanning repeats until nothing alive is left (a killed process takes a moment
 * to become a zombie). Returns how many distinct processes were signalled.
 */
export async function killTree(tree: Tree): Promise<number> {
  const killed = new Set<number>();
  for (let round = 0; round < 50; round++) {
    signal(-tree.root, "SIGSTOP");
    const members = membersOf(tree);
    if (members.length === 0) break;
    for (const pid of members) signal(pid, "SIGSTOP");
    // A stopped tree cannot grow: one more scan catches children forked just before the stop.
    const all = new Set([...members, ...membersOf(tree)]);
    signal(-tree.root, "SIGKILL");
    for (const pid of all) {
      signal(pid, "SIGKILL");
      killed.add(pid);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return killed.size;
}
