// 11. What traces cost: echo calls through two hubs started alike, one exporting every span
// (OpenTelemetry, always sampled, to an OTLP/HTTP collector on loopback, in a process of its own) and one with traces off,
// measured round by round in turns so the machine's noise falls on both alike.
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { closedLoop } from "./load.js";
import { writeResult } from "./results.js";
import { spread } from "./stats.js";
import { connectHttp, echoServer, startHub, type Connection } from "./targets.js";

const ROUNDS = 6;
const CALLERS = 4;
const WARM_MS = 500;
const WINDOW_MS = Number(process.env.BENCH_TRACING_WINDOW_MS ?? 3000);

/** The collector in its own process (./collector-process.ts): where it listens, what it has received, and how to stop it. */
async function collectorProcess() {
  const child = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), "collector-process.js")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(String((await lines.next()).value)) as Record<string, number | string>;
  const { endpoint } = await next();
  return {
    endpoint: String(endpoint),
    counts: async () => (child.stdin.write("counts\n"), (await next()) as { spans: number; requests: number }),
    close: () => new Promise<void>((resolve) => (child.once("exit", () => resolve()), child.stdin.end())),
  };
}

export async function runTracing(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const collector = await collectorProcess();
  const off = await startHub({ servers: { echo: echoServer() } });
  const on = await startHub({ servers: { echo: echoServer() }, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_TRACES_SAMPLER: "always_on" } });
  const connections: Connection[] = [];
  try {
    const contenders = [
      { key: "off", url: off.url },
      { key: "on", url: on.url },
    ];
    const perSecond = new Map<string, number[]>(contenders.map((c) => [c.key, []]));
    const errors = new Map<string, number>(contenders.map((c) => [c.key, 0]));
    const callers = new Map<string, (() => Promise<void>)[]>();
    for (const c of contenders) {
      const conns = await Promise.all(Array.from({ length: CALLERS }, () => connectHttp(c.url)));
      connections.push(...conns);
      callers.set(
        c.key,
        conns.map((conn) => async () => void (await conn.client.callTool({ name: "echo_echo", arguments: { text: "ping" } }))),
      );
    }
    // a round of each uncounted: the hubs' and servers' code is still being optimized at first
    for (const c of contenders) await closedLoop(callers.get(c.key)!, WARM_MS, WINDOW_MS);
    for (let r = 0; r < ROUNDS; r++) {
      for (const c of r % 2 ? [...contenders].reverse() : contenders) {
        const result = await closedLoop(callers.get(c.key)!, WARM_MS, WINDOW_MS);
        perSecond.get(c.key)!.push(result.callsPerSecond);
        errors.set(c.key, errors.get(c.key)! + result.errors);
        log(`tracing: round ${r + 1} traces ${c.key}: ${result.callsPerSecond.toFixed(0)} calls/s`);
      }
    }
    const received = await collector.counts();
    const offRate = spread(perSecond.get("off")!, 1);
    const onRate = spread(perSecond.get("on")!, 1);
    const data = {
      callers: CALLERS,
      rounds: ROUNDS,
      windowMs: WINDOW_MS,
      off: { callsPerSecond: offRate, errors: errors.get("off") },
      on: { callsPerSecond: onRate, errors: errors.get("on"), spansReceived: received.spans, exportRequests: received.requests },
      onOverOff: Math.round((onRate.median / offRate.median) * 1000) / 1000,
    };
    writeResult("tracing", data);
    return data;
  } finally {
    await Promise.all(connections.map((c) => c.close()));
    await Promise.all([off.stop(), on.stop()]);
    await collector.close();
  }
}
