// Ending a child with everything it started (ptys that called setsid included).
import { descendantsOf, isAlive } from "../servers/lib/proctree.js";

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * SIGTERM the root (so it can free what it holds), wait up to graceMs, then SIGKILL whatever is
 * left of the tree as it was seen, including processes that outlived their parent.
 */
export async function killTree(pid: number, graceMs = 3000): Promise<void> {
  if (!isAlive(pid)) return;
  const tree = descendantsOf(pid).map((p) => p.pid);
  signalAll([pid], "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && isAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  const survivors = [...new Set([pid, ...tree, ...descendantsOf(pid).map((p) => p.pid)])].filter(isAlive);
  signalAll(survivors, "SIGKILL");
}
