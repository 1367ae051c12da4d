// 6. Memory: RSS of the hub and of each child (with the processes it started) idle, after the
// browser has launched, and after 1,000 client sessions have been opened, used and closed.
import fs from "node:fs";
import path from "node:path";
import { startBuiltinHub } from "./builtin.js";
import { inBatches } from "./load.js";
import { servePage } from "./operations.js";
import { parentMap, rssOf, treePss, treeRss } from "./proc.js";
import { writeResult } from "./results.js";
import { round, sleep } from "./stats.js";
import { callOk, connectHttp, hubStatus, tempDir, type HttpTarget } from "./targets.js";

const SESSIONS = Number(process.env.BENCH_MEMORY_SESSIONS ?? 1000);
const SETTLE_MS = 1500;
const LEAK_CHECK_SESSIONS = Number(process.env.BENCH_LEAK_SESSIONS ?? 250);
export const IDLE_TARGET_MIB = 200;

const mib = (bytes: number) => round(bytes / 2 ** 20, 1);

interface Snapshot {
  hubMiB: number;
  /** child name → its process tree's RSS */
  childrenMiB: Record<string, number>;
  totalMiB: number;
  /** the same tree as PSS: shared pages split among the processes sharing them */
  totalPssMiB: number;
  processes: number;
  hubSessions: number;
  /** the hub's V8 heap in use (from /metrics): tells garbage not yet collected from a leak */
  hubHeapUsedMiB?: number;
}

/**
 * Make the hub collect its garbage: a heap snapshot (--heapsnapshot-signal) starts with a full
 * GC. The snapshot itself is thrown away; only the heap figure read afterwards matters.
 */
async function collectGarbage(hub: HttpTarget, diagDir: string): Promise<boolean> {
  const before = new Set(fs.readdirSync(diagDir));
  process.kill(hub.pid, "SIGUSR2");
  const deadline = Date.now() + 30_000;
  let lastSize = -1;
  while (Date.now() < deadline) {
    await sleep(200);
    const file = fs.readdirSync(diagDir).find((f) => f.endsWith(".heapsnapshot") && !before.has(f));
    if (!file) continue;
    const size = fs.statSync(path.join(diagDir, file)).size;
    // the hub answers /metrics again only once the snapshot is written; a stable size means done
    if (size > 0 && size === lastSize) {
      fs.rmSync(path.join(diagDir, file), { force: true });
      return true;
    }
    lastSize = size;
  }
  return false;
}
async function hubHeapUsed(origin: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const match = /^agentbox_hub_nodejs_heap_size_used_bytes\s+([\d.e+]+)/m.exec(text);
    return match ? mib(Number(match[1])) : undefined;
  } catch {
    return undefined;
  }
}

async function snapshot(hub: HttpTarget): Promise<Snapshot> {
  const status = await hubStatus(hub.origin);
  const map = parentMap();
  const childrenMiB: Record<string, number> = {};
  for (const s of status.servers) childrenMiB[s.name] = s.pid ? mib(treeRss(s.pid, map).bytes) : 0;
  const total = treeRss(hub.pid, map);
  return {
    hubMiB: mib(rssOf(hub.pid) ?? 0),
    childrenMiB,
    totalMiB: mib(total.bytes),
    totalPssMiB: mib(treePss(hub.pid, map)),
    processes: total.processes,
    hubSessions: status.sessions,
    hubHeapUsedMiB: await hubHeapUsed(hub.origin),
  };
}

async function measureAllStarted(workspace: string, log: (msg: string) => void): Promise<Snapshot> {
  const previous = process.env.AGENTBOX_START;
  process.env.AGENTBOX_START = "eager";
  try {
    const { hub } = await startBuiltinHub({ workspace });
    try {
      await sleep(SETTLE_MS);
      const snap = await snapshot(hub);
      log(`memory idle with every server started: total ${snap.totalMiB} MiB`);
      return snap;
    } finally {
      await hub.stop();
    }
  } finally {
    if (previous === undefined) delete process.env.AGENTBOX_START;
    else process.env.AGENTBOX_START = previous;
  }
}

export async function runMemory(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const workspace = tempDir("agentbox-bench-mem-");
  fs.writeFileSync(path.join(workspace, "note.txt"), "hello\n");
  const page = await servePage();
  const diagDir = tempDir("agentbox-bench-diag-");
  // Servers start on first use; the same tool set with every server started is measured apart.
  const idleAllStarted = await measureAllStarted(workspace, log);
  const { hub, servers, missing } = await startBuiltinHub({
    workspace,
    nodeArgs: ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${diagDir}`],
  });
  try {
    await sleep(SETTLE_MS);
    const idle = await snapshot(hub);
    log(`memory idle: total ${idle.totalMiB} MiB (hub ${idle.hubMiB})`);

    let afterBrowser: Snapshot | { skipped: string };
    if (servers.includes("browser")) {
      const conn = await connectHttp(hub.url);
      try {
        await callOk(conn.client, "browser_navigate", { url: page.url });
        await sleep(SETTLE_MS);
        afterBrowser = await snapshot(hub);
        log(`memory after browser launch: total ${afterBrowser.totalMiB} MiB`);
      } catch (err) {
        afterBrowser = { skipped: `browser_navigate failed: ${String(err).slice(0, 300)}` };
      } finally {
        await conn.close();
      }
    } else {
      afterBrowser = { skipped: "browser server not running" };
    }

    // each session does what a short-lived agent does: open, list, one call, close (DELETE)
    const useTool = servers.includes("file") ? { name: "file_read", arguments: { path: "note.txt" } } : undefined;
    const checkpoints: Record<string, Snapshot> = {};
    let failures = 0;
    let firstFailure: string | undefined;
    const openAndClose = (count: number) =>
      inBatches(count, 16, async () => {
        try {
          const conn = await connectHttp(hub.url);
          await conn.client.listTools();
          if (useTool) await callOk(conn.client, useTool.name, useTool.arguments);
          await conn.close();
        } catch (err) {
          failures++;
          firstFailure ??= String(err).slice(0, 300);
        }
      });
    const half = Math.floor(SESSIONS / 2);
    for (const [label, count] of [
      [`after${half}Sessions`, half],
      [`after${SESSIONS}Sessions`, SESSIONS - half],
    ] as const) {
      await openAndClose(count);
      await sleep(SETTLE_MS);
      checkpoints[label] = await snapshot(hub);
      log(`memory ${label}: total ${checkpoints[label].totalMiB} MiB, hub ${checkpoints[label].hubMiB} MiB, open sessions ${checkpoints[label].hubSessions}`);
    }
    // leak check, after the RSS readings (a heap snapshot inflates RSS): heap after a full GC,
    // then LEAK_CHECK_SESSIONS more sessions, then again
    const heapBefore = (await collectGarbage(hub, diagDir)) ? await hubHeapUsed(hub.origin) : undefined;
    await openAndClose(LEAK_CHECK_SESSIONS);
    const heapAfter = (await collectGarbage(hub, diagDir)) ? await hubHeapUsed(hub.origin) : undefined;
    const leakKiBPerSession =
      heapBefore === undefined || heapAfter === undefined ? undefined : round(((heapAfter - heapBefore) * 1024) / LEAK_CHECK_SESSIONS, 2);
    log(`memory leak check: hub heap after GC ${heapBefore} → ${heapAfter} MiB over ${LEAK_CHECK_SESSIONS} more sessions`);
    const last = checkpoints[`after${SESSIONS}Sessions`];
    const mid = checkpoints[`after${half}Sessions`];
    const result = {
      method: `RSS from /proc (VmRSS) and PSS (smaps_rollup), each child with its descendants; hub alone; total = the hub's whole process tree. ${SETTLE_MS} ms settle before each reading; the hub's heap from /metrics, and for the leak check right after a full GC (forced by a heap snapshot, --heapsnapshot-signal). Sessions: ${SESSIONS} SDK clients, 16 at a time, each initialize + tools/list + ${useTool ? useTool.name : "no call"} + DELETE`,
      servers,
      missing,
      idle,
      idleAllStarted,
      afterBrowser,
      ...checkpoints,
      sessionFailures: failures,
      ...(firstFailure ? { firstSessionFailure: firstFailure } : {}),
      growth: {
        note: "hub RSS growth over the second half of the sessions against the first half; open sessions should be back to what they were",
        hubFirstHalfMiB: round(mid.hubMiB - idle.hubMiB, 1),
        hubSecondHalfMiB: round(last.hubMiB - mid.hubMiB, 1),
        sessionsLeftOpen: last.hubSessions - idle.hubSessions,
      },
      leakCheck: {
        note: `the hub's V8 heap right after a full GC, before and after ${LEAK_CHECK_SESSIONS} more sessions`,
        heapAfterGcBeforeMiB: heapBefore,
        heapAfterGcAfterMiB: heapAfter,
        sessions: LEAK_CHECK_SESSIONS,
        kibPerSession: leakKiBPerSession,
      },
      target: { idleTotalMiB: IDLE_TARGET_MIB, met: idle.totalMiB <= IDLE_TARGET_MIB && Object.keys(missing).length === 0 },
    };
    writeResult("memory", result);
    return result;
  } finally {
    await hub.stop();
    await page.close();
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(diagDir, { recursive: true, force: true });
  }
}
