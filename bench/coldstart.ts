// 4. Cold start: from spawning the hub process to /readyz answering 200, and to the first
// tools/list that holds a tool of every built-in server. The docker run figure comes from
// bench/results/docker.json (written by bench/docker.*), shown in bench/README.md when present.
import fs from "node:fs";
import { presentBuiltins, serversConfig } from "./builtin.js";
import { writeResult } from "./results.js";
import { median, round } from "./stats.js";
import { connectHttp, hubStatus, startHub, tempDir, waitHubReady } from "./targets.js";

const REPEATS = Number(process.env.BENCH_COLDSTART_REPEATS ?? 4);
const READY_TIMEOUT_MS = 30_000;
export const READY_TARGET_MS = 1000;

const spread = (values: number[]) =>
  values.length ? { median: round(median(values), 1), min: round(Math.min(...values), 1), max: round(Math.max(...values), 1) } : undefined;

export async function runColdStart(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const { present, missing } = presentBuiltins();
  let servers = present;
  const workspace = tempDir("agentbox-bench-cold-");

  const listening: number[] = [];
  const ready: number[] = [];
  const toolsListed: number[] = [];
  const failures: string[] = [];
  const perServer = new Map<string, number[]>();
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    const wall0 = Date.now();
    // startHub resolves when the port accepts connections; info logs carry each child's ready time
    const hub = await startHub({ servers: serversConfig(servers), workspace, env: { AGENTBOX_LOG_LEVEL: "info" } });
    try {
      listening.push(performance.now() - t0);
      if (!(await waitHubReady(hub.origin, READY_TIMEOUT_MS, 5))) {
        // a server that never gets ready is reported and left out of the following runs
        const status = await hubStatus(hub.origin);
        const failing = status.servers.filter((s) => s.state !== "ready");
        for (const f of failing) missing[f.name] = `did not become ready: ${f.state}${f.lastError ? ` (${f.lastError})` : ""}`;
        servers = servers.filter((n) => !failing.some((f) => f.name === n));
        throw new Error(`run ${r + 1} not ready within ${READY_TIMEOUT_MS} ms (${failing.map((f) => f.name).join(", ")})`);
      }
      ready.push(performance.now() - t0);
      for (const [name, at] of childReadyTimes(hub.spawned.output)) perServer.set(name, [...(perServer.get(name) ?? []), at - wall0]);
      const conn = await connectHttp(hub.url);
      for (;;) {
        const { tools } = await conn.client.listTools();
        if (servers.every((s) => tools.some((t) => t.name.startsWith(`${s}_`)))) break;
        if (performance.now() - t0 > 30_000) throw new Error("tools/list never held every server's tools");
      }
      toolsListed.push(performance.now() - t0);
      await conn.close();
    } catch (err) {
      failures.push(String(err));
    } finally {
      await hub.stop();
    }
    log(`coldstart run ${r + 1}/${REPEATS}: ready ${ready.at(-1)?.toFixed(0)} ms, all tools listed ${toolsListed.at(-1)?.toFixed(0)} ms`);
  }
  fs.rmSync(workspace, { recursive: true, force: true });
  const toolsMedian = toolsListed.length ? median(toolsListed) : Infinity;
  const result = {
    method: `${REPEATS} runs: spawn the hub with the built-in servers that start, poll /readyz every 5 ms, then one SDK client session lists tools until every server has its tools in the list; times from spawn; childReadyMs from the hub log line "child ready"`,
    servers,
    missing,
    listeningMs: spread(listening),
    readyzMs: spread(ready),
    allToolsListedMs: spread(toolsListed),
    childReadyMs: Object.fromEntries([...perServer].map(([name, values]) => [name, spread(values)])),
    failures,
    target: { readyMs: READY_TARGET_MS, met: toolsMedian <= READY_TARGET_MS && Object.keys(missing).length === 0 },
  };
  writeResult("coldstart", result);
  return result;
}

/** When each child logged "child ready" (wall clock ms), from the hub's JSON log lines. */
function childReadyTimes(lines: string[]): Map<string, number> {
  const times = new Map<string, number>();
  for (const line of lines) {
    try {
      const entry = JSON.parse(line) as { msg?: string; child?: string; time?: string };
      if (entry.msg === "child ready" && entry.child && entry.time) times.set(entry.child, Date.parse(entry.time));
    } catch {
      // not a log line
    }
  }
  return times;
}
