// 1. Hub overhead (and 3. peers' latency): sequential calls of the echo tool, straight to the
// child over stdio and through each HTTP front, interleaved round by round so that the machine's
// noise falls on every contender alike.
import { ECHO_ARGS, setupEcho } from "./echo-setup.js";
import { sequential, type Call } from "./load.js";
import { cpuMs } from "./proc.js";
import { writeResult } from "./results.js";
import { median, round, roundSummary, summarize } from "./stats.js";
import type { Connection } from "./targets.js";

const ROUNDS = 5;
const CALLS_PER_ROUND = Number(process.env.BENCH_OVERHEAD_CALLS ?? 200);
const WARMUP_CALLS = 100;
export const ADDED_P50_TARGET_MS = 0.5;

const spread = (values: number[]) => ({ median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) });

export async function runOverhead(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const setup = await setupEcho();
  const connections: Connection[] = [];
  try {
    const contenders: { key: string; label: string; pid: number; call: Call }[] = [
      {
        key: "direct",
        label: "direct stdio (no hub)",
        pid: setup.direct.pid,
        call: async () => void (await setup.direct.client.callTool({ name: "echo", arguments: ECHO_ARGS })),
      },
    ];
    for (const v of setup.variants) {
      const conn = await v.connect();
      connections.push(conn);
      contenders.push({
        key: v.key,
        label: v.label,
        pid: v.target.pid,
        call: async () => void (await conn.client.callTool({ name: v.tool, arguments: ECHO_ARGS })),
      });
    }
    for (const c of contenders) await sequential(c.call, WARMUP_CALLS);

    const samples = new Map<string, number[]>(contenders.map((c) => [c.key, []]));
    const roundP50 = new Map<string, number[]>(contenders.map((c) => [c.key, []]));
    // CPU the front process (hub, peer; for direct the child itself) and its children spent
    const cpu = new Map(contenders.map((c) => [c.key, { front: 0, children: 0, client: 0, calls: 0 }]));
    const errors = new Map<string, { count: number; first?: string }>(contenders.map((c) => [c.key, { count: 0 }]));
    for (let r = 0; r < ROUNDS; r++) {
      // rotate the order each round: nobody always goes first after a pause
      const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
      for (const c of order) {
        const front0 = cpuMs(c.pid);
        const tree0 = cpuMs(c.pid, true);
        const client0 = process.cpuUsage();
        const result = await sequential(c.call, CALLS_PER_ROUND);
        const client = process.cpuUsage(client0);
        const front = cpuMs(c.pid) - front0;
        const used = cpu.get(c.key)!;
        used.client += (client.user + client.system) / 1000;
        used.front += front;
        used.children += cpuMs(c.pid, true) - tree0 - front;
        used.calls += result.latencies.length;
        samples.get(c.key)!.push(...result.latencies);
        roundP50.get(c.key)!.push(summarize(result.latencies).p50);
        const e = errors.get(c.key)!;
        e.count += result.errors;
        e.first ??= result.firstError;
      }
      log(`overhead round ${r + 1}/${ROUNDS}: ` + contenders.map((c) => `${c.key} ${roundP50.get(c.key)!.at(-1)!.toFixed(3)}ms`).join(", "));
    }

    const perRound = (key: string, f: (x: number, base: number) => number, base = "direct") =>
      roundP50.has(key) ? spread(roundP50.get(key)!.map((x, i) => f(x, roundP50.get(base)![i]))) : undefined;
    const contendersOut = Object.fromEntries(
      contenders.map((c) => [
        c.key,
        {
          label: c.label,
          latencyMs: roundSummary(summarize(samples.get(c.key)!)),
          roundP50Ms: spread(roundP50.get(c.key)!),
          cpuMsPerCall: {
            front: round(cpu.get(c.key)!.front / cpu.get(c.key)!.calls),
            children: round(cpu.get(c.key)!.children / cpu.get(c.key)!.calls),
            client: round(cpu.get(c.key)!.client / cpu.get(c.key)!.calls),
          },
          errors: errors.get(c.key)!.count,
          ...(errors.get(c.key)!.first ? { firstError: errors.get(c.key)!.first } : {}),
        },
      ]),
    );
    const addedSdk = perRound("hub", (x, base) => x - base);
    const addedJson = perRound("hub-json", (x, base) => x - base);
    // what the hub's hop to its child adds beyond one HTTP round trip with the SDK at both ends
    const overFloor = perRound("hub", (x, base) => x - base, "sdk-floor");
    const floorOverDirect = perRound("sdk-floor", (x, base) => x - base);
    const direct = summarize(samples.get("direct")!);
    const p99Added = (key: string) => (samples.has(key) ? round(summarize(samples.get(key)!).p99 - direct.p99) : undefined);
    const result = {
      method: `${ROUNDS} interleaved rounds of ${CALLS_PER_ROUND} sequential echo calls per contender after ${WARMUP_CALLS} warm-up calls; latency from the client's call to its resolved result; CPU per call from /proc of the front process (hub, peer, or for direct the echo child) and of its children, and of the benchmark process (the SDK client)`,
      contenders: contendersOut,
      addedPerCallMs: {
        note: "hub p50 minus direct stdio p50, per round; median and min/max over rounds",
        sdkClient: addedSdk,
        json: addedJson,
        p99SdkClient: p99Added("hub"),
        p99Json: p99Added("hub-json"),
        floorOverDirect,
        hubOverFloor: overFloor,
      },
      // > 1: the peer is slower than the hub (its p50 divided by the hub's, per round)
      peerP50OverHub: Object.fromEntries(
        ["sdk-floor", "supergateway", "mcp-proxy"].filter((k) => roundP50.has(k)).map((k) => [k, perRound(k, (x, base) => x / base, "hub")]),
      ),
      unavailable: setup.unavailable,
      target: {
        addedP50Ms: ADDED_P50_TARGET_MS,
        metSdkClient: addedSdk ? addedSdk.median <= ADDED_P50_TARGET_MS : false,
        metJson: addedJson ? addedJson.median <= ADDED_P50_TARGET_MS : false,
        metOverFloor: overFloor ? overFloor.median <= ADDED_P50_TARGET_MS : false,
      },
    };
    writeResult("overhead", result);
    return result;
  } finally {
    await Promise.allSettled(connections.map((c) => c.close()));
    await setup.stop();
  }
}
