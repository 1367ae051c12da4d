// What a preview costs a request: an app the agent started in its terminal (as its tenant) serves a
// 2 KiB page; a visitor's requests go through the preview URL and, in the same rounds, straight to
// the app (the floor). Visitors either keep their connections to the hub alive (a browser's tab) or
// open one per request; the hub keeps its own connections to the app alive either way, and checks
// each new one against the kernel's socket tables before it carries a request
// (hub/previews/checked-connection.ts). Requests per second, latency, and the hub's CPU per request
// from /proc, medians of interleaved rounds.
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { builtinServers } from "../hub/config/config.js";
import { cpuMs, freePort } from "./proc.js";
import { writeResult } from "./results.js";
import { round, spread, summarize } from "./stats.js";
import { startHub, waitHubReady } from "./targets.js";

const ROUNDS = Number(process.env.BENCH_PREVIEW_ROUNDS ?? 3);
const REQUESTS = Number(process.env.BENCH_PREVIEW_REQUESTS ?? 4000);
const VISITORS = 16;
const APP = `require("node:http").createServer((q, r) => r.end("x".repeat(2048))).listen(+process.argv[1], "127.0.0.1", () => console.log("LISTENING"))`;

interface Load {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  hubCpuUsPerRequest: number;
}

/** REQUESTS GETs of `url` by VISITORS at once, each on a kept connection or a new one per request. */
async function load(url: string, keepAlive: boolean, hubPid: number): Promise<Load> {
  const agent = new http.Agent({ keepAlive, maxSockets: VISITORS });
  const get = () =>
    new Promise<void>((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          res.resume();
          res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: ${res.statusCode}`))));
        })
        .on("error", reject);
    });
  try {
    for (let i = 0; i < VISITORS; i++) await get();
    let left = REQUESTS;
    const latencies: number[] = [];
    const cpu0 = cpuMs(hubPid);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: VISITORS }, async () => {
        while (left-- > 0) {
          const sent = performance.now();
          await get();
          latencies.push(performance.now() - sent);
        }
      }),
    );
    const wall = performance.now() - t0;
    const hubCpu = cpuMs(hubPid) - cpu0;
    const { p50, p99 } = summarize(latencies);
    return {
      requestsPerSecond: Math.round((REQUESTS / wall) * 1000),
      p50: round(p50),
      p99: round(p99),
      hubCpuUsPerRequest: round((hubCpu * 1000) / REQUESTS, 1),
    };
  } finally {
    agent.destroy();
  }
}

export async function runPreviews(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const hub = await startHub({ servers: builtinServers(["terminal"]) });
  const client = new Client({ name: "agentbox-bench-previews", version: "1.0.0" });
  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown>;
  };
  try {
    if (!(await waitHubReady(hub.origin, 60_000))) throw new Error("the hub was not ready within 60 s");
    await client.connect(new StreamableHTTPClientTransport(new URL(hub.url)));
    const port = await freePort();
    const { id } = await tool("terminal_session_create", {});
    await tool("terminal_session_send", { id, input: `${process.execPath} -e '${APP}' ${port}\n`, waitFor: "LISTENING", timeoutMs: 20_000 });
    const { url } = await tool("hub_preview", { port });
    const direct = `http://127.0.0.1:${port}/`;
    const rows: Record<string, Load[]> = { "preview, kept connections": [], "preview, a connection per request": [], "app directly, kept connections": [] };
    for (let r = 0; r < ROUNDS; r++) {
      rows["preview, kept connections"].push(await load(String(url), true, hub.pid));
      rows["preview, a connection per request"].push(await load(String(url), false, hub.pid));
      rows["app directly, kept connections"].push(await load(direct, true, hub.pid));
    }
    const summary = Object.fromEntries(
      Object.entries(rows).map(([name, loads]) => [
        name,
        {
          requestsPerSecond: spread(
            loads.map((l) => l.requestsPerSecond),
            0,
          ),
          p50Ms: spread(loads.map((l) => l.p50)),
          p99Ms: spread(loads.map((l) => l.p99)),
          hubCpuUsPerRequest: spread(
            loads.map((l) => l.hubCpuUsPerRequest),
            1,
          ),
        },
      ]),
    );
    for (const [name, s] of Object.entries(summary)) {
      log(
        `previews: ${name}: ${s.requestsPerSecond.median} req/s, p50 ${s.p50Ms.median} ms, p99 ${s.p99Ms.median} ms, hub ${s.hubCpuUsPerRequest.median} us CPU/request`,
      );
    }
    const result = {
      method: `a hub with the terminal server; the agent's app (node:http, a 2 KiB reply) started in its terminal; ${ROUNDS} interleaved rounds of ${REQUESTS} GETs by ${VISITORS} visitors at once through the preview URL (keeping their connections, or one per request) and straight to the app; medians of rounds (range in min/max)`,
      rounds: ROUNDS,
      requests: REQUESTS,
      visitors: VISITORS,
      results: summary,
    };
    writeResult("previews", result);
    return result;
  } finally {
    await client.close().catch(() => undefined);
    await hub.stop();
  }
}
