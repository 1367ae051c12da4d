// 2. Throughput (and 3. peers' throughput): 1, 8, 32 and 128 client sessions each calling the
// echo tool in a closed loop for a fixed time. The child alone over stdio is the baseline: one
// client with as many calls in flight (a stdio child has no sessions).
import { ECHO_ARGS, setupEcho, type HttpVariant } from "./echo-setup.js";
import { closedLoop, inBatches, type Call, type WindowResult } from "./load.js";
import { cpuMs, parentMap, rssOf, treeRss } from "./proc.js";
import { writeResult } from "./results.js";
import { median, round, summarize } from "./stats.js";
import type { Connection } from "./targets.js";

const LEVELS = (process.env.BENCH_LEVELS ?? "1,8,32,128").split(",").map(Number);
const REPEATS = Number(process.env.BENCH_THROUGHPUT_REPEATS ?? 3);
const WINDOW_MS = Number(process.env.BENCH_THROUGHPUT_MS ?? 800);
const WARM_MS = 400;
export const HUB_VS_CHILD_TARGET = 0.8;

interface Contender {
  key: string;
  label: string;
  /** The N callers for N concurrent sessions. */
  callers(n: number): Call[];
  /** Process whose RSS is the front's own (the hub, the peer); tree adds its children. */
  pid: number;
}

interface Cell {
  runs: WindowResult[];
  /** CPU ms per call: the front process alone, and its children (the echo child[ren]) */
  cpuFront: number[];
  cpuChildren: number[];
  rssMax: number;
  treeRssMax: number;
}

function sampler(pid: number) {
  let rssMax = 0;
  let treeRssMax = 0;
  return {
    tick() {
      rssMax = Math.max(rssMax, rssOf(pid) ?? 0);
      treeRssMax = Math.max(treeRssMax, treeRss(pid, parentMap()).bytes);
    },
    get rssMax() {
      return rssMax;
    },
    get treeRssMax() {
      return treeRssMax;
    },
  };
}

export async function runThroughput(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const maxLevel = Math.max(...LEVELS);
  // the JSON-only client is covered by the latency benchmark; here every front gets the SDK client
  const setup = await setupEcho({ json: false });
  const pools: Connection[] = [];
  try {
    const contenders: Contender[] = [
      {
        key: "direct",
        label: "echo child alone over stdio",
        callers: (n) => Array.from({ length: n }, () => async () => void (await setup.direct.client.callTool({ name: "echo", arguments: ECHO_ARGS }))),
        pid: setup.direct.pid,
      },
    ];
    for (const v of setup.variants) contenders.push(await sessionPool(v, maxLevel, pools, log));

    const cells = new Map<string, Cell>();
    for (const level of LEVELS) {
      for (let r = 0; r < REPEATS; r++) {
        const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
        for (const c of order) {
          const key = `${c.key}@${level}`;
          const cell = cells.get(key) ?? { runs: [], cpuFront: [], cpuChildren: [], rssMax: 0, treeRssMax: 0 };
          const s = sampler(c.pid);
          s.tick();
          const front0 = cpuMs(c.pid);
          const tree0 = cpuMs(c.pid, true);
          const run = await closedLoop(c.callers(level), WARM_MS, WINDOW_MS, () => s.tick());
          const front = cpuMs(c.pid) - front0;
          const children = cpuMs(c.pid, true) - tree0 - front;
          s.tick();
          cell.runs.push(run);
          if (run.allCalls > 0) {
            cell.cpuFront.push(front / run.allCalls);
            cell.cpuChildren.push(children / run.allCalls);
          }
          cell.rssMax = Math.max(cell.rssMax, s.rssMax);
          cell.treeRssMax = Math.max(cell.treeRssMax, s.treeRssMax);
          cells.set(key, cell);
        }
      }
      log(
        `throughput ${level} sessions: ` +
          contenders.map((c) => `${c.key} ${median(cells.get(`${c.key}@${level}`)!.runs.map((x) => x.callsPerSecond)).toFixed(0)}/s`).join(", "),
      );
    }

    const levels = LEVELS.map((level) => {
      const byKey = (key: string) => cells.get(`${key}@${level}`);
      const row: Record<string, unknown> = { sessions: level };
      for (const c of contenders) {
        const cell = byKey(c.key)!;
        const rates = cell.runs.map((x) => x.callsPerSecond);
        const lat = summarize(cell.runs.flatMap((x) => x.latencies));
        const firstError = cell.runs.find((x) => x.firstError)?.firstError;
        row[c.key] = {
          callsPerSecond: { median: round(median(rates), 1), min: round(Math.min(...rates), 1), max: round(Math.max(...rates), 1) },
          latencyMs: { p50: round(lat.p50), p99: round(lat.p99) },
          cpuMsPerCall: { front: round(median(cell.cpuFront)), children: round(median(cell.cpuChildren)) },
          errors: cell.runs.reduce((a, x) => a + x.errors, 0),
          ...(firstError ? { firstError } : {}),
          rssMaxMiB: round(cell.rssMax / 2 ** 20, 1),
          treeRssMaxMiB: round(cell.treeRssMax / 2 ** 20, 1),
        };
      }
      // ratios per repeat (same repeat, same machine state), then median and range
      const ratio = (a: string, b: string) => {
        const ca = byKey(a);
        const cb = byKey(b);
        if (!ca || !cb) return undefined;
        const values = ca.runs.map((x, i) => x.callsPerSecond / cb.runs[i].callsPerSecond);
        return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
      };
      row.ratios = {
        hubOverChild: ratio("hub", "direct"),
        hubOverFloor: ratio("hub", "sdk-floor"),
        hubOverSupergateway: ratio("hub", "supergateway"),
        hubOverMcpProxy: ratio("hub", "mcp-proxy"),
      };
      return row;
    });
    const ratios = levels.map((l) => l.ratios as Record<string, { median: number } | undefined>);
    const result = {
      method: `${REPEATS} repeats per level of a ${WINDOW_MS} ms window after ${WARM_MS} ms warm-up; each session calls echo in a closed loop; contenders interleaved; RSS sampled every 250 ms (front process alone, and with its children); CPU per call from /proc utime+stime over warm-up and window (10 ms ticks), median over repeats; for direct the front is the echo child itself`,
      contenders: Object.fromEntries(contenders.map((c) => [c.key, c.label])),
      levels,
      unavailable: setup.unavailable,
      target: {
        hubOverChild: HUB_VS_CHILD_TARGET,
        metHubOverChild: ratios.every((r) => (r.hubOverChild?.median ?? 0) >= HUB_VS_CHILD_TARGET),
        aheadOfPeers: ratios.every((r) => (r.hubOverSupergateway?.median ?? 0) > 1 && (r.hubOverMcpProxy?.median ?? 0) > 1),
      },
    };
    writeResult("throughput", result);
    return result;
  } finally {
    await inBatches(pools.length, 16, (i) => pools[i].close().catch(() => undefined));
    await setup.stop();
  }
}

/** Open `size` client sessions on an HTTP front once; each level uses the first N of them. */
async function sessionPool(v: HttpVariant, size: number, pools: Connection[], log: (msg: string) => void): Promise<Contender> {
  const t0 = performance.now();
  const sessions = await inBatches(size, 8, () => v.connect());
  pools.push(...sessions);
  log(`throughput: ${size} sessions opened on ${v.key} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return {
    key: v.key,
    label: v.label,
    pid: v.target.pid,
    callers: (n) => sessions.slice(0, n).map((s) => async () => void (await s.client.callTool({ name: v.tool, arguments: ECHO_ARGS }))),
  };
}
