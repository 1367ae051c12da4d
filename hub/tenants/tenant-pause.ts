// The hub removes what a tenant holds beyond its share (its files in /dev/shm, its IPC objects) as
// the tenant's uid, so a link swapped in reaches nothing of anyone else's. But any process of that
// uid may act on the remover as on its own: chmod a folder back to 000 between the remover's chmod
// and its rm, or lower the remover's limits (prlimit needs only the same uid and gid) until it
// cannot start. So the tenant's processes are stopped while the remover runs, and resumed after.
//
// Parents are stopped before their children and resumed after them: a shell stopped first never
// sees its foreground job stop, so it does not take the terminal back from it, and once resumed it
// finds the job running again.
import { listOwners, type ProcOwner } from "../../servers/lib/proc-table.js";
import { signal } from "../../servers/lib/proctree.js";

// a stopped process cannot fork, so each round finds only what was started before the last one stopped
const STOP_ROUNDS = 20;
// a signalled process stops when it next runs; one in uninterruptible sleep, once that ends
const STOP_POLL_MS = 5;

const stoppedState = (p: ProcOwner) => p.state === "T" || p.state === "t" || p.state === "Z" || p.state === "X";

/**
 * Runs `work` while every process of `uid` is stopped (those the tenant had stopped itself stay so
 * after). The hub's own uid is never stopped: `work` then just runs.
 */
export async function whileStopped<T>(uid: number, work: () => Promise<T>, list: () => Promise<ProcOwner[]> = listOwners): Promise<T> {
  if (uid === process.getuid?.()) return work();
  const signalled = new Set<number>();
  const order: number[] = [];
  try {
    for (let round = 0; round < STOP_ROUNDS; round++) {
      const running = (await list()).filter((p) => p.uid === uid && !stoppedState(p));
      if (running.length === 0) break;
      for (const p of parentsFirst(running)) {
        if (signalled.has(p.pid) || !signal(p.pid, "SIGSTOP")) continue;
        signalled.add(p.pid);
        order.push(p.pid);
      }
      await new Promise((resolve) => setTimeout(resolve, STOP_POLL_MS));
    }
    return await work();
  } finally {
    for (const pid of order.reverse()) signal(pid, "SIGCONT");
  }
}

/** Processes ordered so that each comes after its ancestors among them. */
export function parentsFirst(procs: readonly ProcOwner[]): ProcOwner[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const depths = new Map<number, number>();
  const depth = (p: ProcOwner): number => {
    let known = depths.get(p.pid);
    if (known !== undefined) return known;
    // iterative: a tenant decides how deep its tree goes
    const chain = new Set<ProcOwner>();
    let at: ProcOwner | undefined = p;
    while (at && !depths.has(at.pid) && !chain.has(at)) {
      chain.add(at);
      at = byPid.get(at.ppid);
    }
    // at: an ancestor already placed, or none among them (or a loop, from pids reused while listing)
    known = at ? (depths.get(at.pid) ?? 0) : -1;
    for (const q of [...chain].reverse()) depths.set(q.pid, ++known);
    return depths.get(p.pid)!;
  };
  return [...procs].sort((a, b) => depth(a) - depth(b));
}
