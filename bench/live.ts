// What a live view costs and how fresh it is (issue 38): the agent's tab shows a page whose text
// changes every 100 ms; 1, then 10 viewers (WebSocket clients that acknowledge each frame at once,
// as the view's page does once it drew it) watch it for a fixed window: frames per second per
// viewer, and the CPU the hub and its children (the browser server and Chromium) spent, from
// /proc. Then a still page: the time from the agent's DOM change (a browser_evaluate call, its
// round trip included) to the next frame reaching a viewer.
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import WebSocket from "ws";
import { builtinServers } from "../hub/config/config.js";
import { cpuMs } from "./proc.js";
import { writeResult } from "./results.js";
import { round, roundSummary, sleep, summarize } from "./stats.js";
import { startHub, waitHubReady } from "./targets.js";

const WINDOW_MS = Number(process.env.BENCH_LIVE_WINDOW_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_LIVE_ROUNDS ?? 15);
const TICKING = `<!doctype html><title>tick</title><p id="t" style="font:48px sans-serif">0</p><script>let n=0;setInterval(()=>{document.getElementById("t").textContent=++n},100)</script>`;
const STILL = `<!doctype html><title>still</title><p id="t" style="font:48px sans-serif">still</p>`;

interface Watcher {
  frames: number;
  lastFrameAt: number;
  socket: WebSocket;
}

function watch(url: string, origin: string): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${url.replace(/^http/, "ws")}/socket`, { origin });
    const watcher: Watcher = { frames: 0, lastFrameAt: 0, socket };
    socket.on("message", (_data, binary) => {
      if (!binary) return;
      watcher.frames++;
      watcher.lastFrameAt = performance.now();
      socket.send(JSON.stringify({ type: "ack" }));
    });
    socket.once("open", () => {
      socket.send(JSON.stringify({ type: "hello", width: 1280, height: 720 }));
      resolve(watcher);
    });
    socket.once("error", reject);
  });
}

export async function runLive(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const site = http.createServer((req, res) => res.writeHead(200, { "content-type": "text/html" }).end(req.url === "/still" ? STILL : TICKING));
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  const hub = await startHub({ servers: builtinServers(["browser"]) });
  const client = new Client({ name: "agentbox-bench-live", version: "1.0.0" });
  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown> | undefined;
  };
  try {
    if (!(await waitHubReady(hub.origin, 60_000))) throw new Error("the hub was not ready within 60 s");
    await client.connect(new StreamableHTTPClientTransport(new URL(hub.url)));
    await tool("browser_navigate", { url: `${siteUrl}/` });
    const { url } = (await tool("hub_live_view", {}))!;
    const streaming = [];
    for (const viewers of [1, 10]) {
      const watchers = await Promise.all(Array.from({ length: viewers }, () => watch(String(url), hub.origin)));
      await sleep(1000); // past the first frames
      const counted = watchers.map((w) => w.frames);
      const hubBefore = cpuMs(hub.pid);
      const allBefore = cpuMs(hub.pid, true);
      await sleep(WINDOW_MS);
      const hubCpu = cpuMs(hub.pid) - hubBefore;
      const childrenCpu = cpuMs(hub.pid, true) - allBefore - hubCpu;
      const fps = watchers.map((w, i) => ((w.frames - counted[i]) * 1000) / WINDOW_MS);
      for (const w of watchers) w.socket.close();
      const row = {
        viewers,
        framesPerSecond: { min: round(Math.min(...fps), 1), mean: round(fps.reduce((a, b) => a + b, 0) / fps.length, 1) },
        cpuPercent: { hub: round((hubCpu / WINDOW_MS) * 100, 1), browserAndChromium: round((childrenCpu / WINDOW_MS) * 100, 1) },
      };
      log(
        `live: ${viewers} viewer(s): ${row.framesPerSecond.mean} frames/s each, hub ${row.cpuPercent.hub}% CPU, browser + Chromium ${row.cpuPercent.browserAndChromium}%`,
      );
      streaming.push(row);
      await sleep(500);
    }
    await tool("browser_navigate", { url: `${siteUrl}/still` });
    const watcher = await watch(String(url), hub.origin);
    const samples: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await sleep(400); // the page is still: no frame comes until it changes
      const before = watcher.frames;
      const t0 = performance.now();
      await tool("browser_evaluate", { code: `document.getElementById("t").textContent = "round ${r}"` });
      const deadline = t0 + 10_000;
      while (watcher.frames === before && performance.now() < deadline) await sleep(2);
      if (watcher.frames === before) throw new Error(`round ${r + 1}: no frame within 10 s of the change`);
      samples.push(watcher.lastFrameAt - t0);
    }
    watcher.socket.close();
    const latencyMs = roundSummary(summarize(samples), 1);
    log(`live: change to frame ${latencyMs.p50} ms (p50), ${latencyMs.p99} ms (p99)`);
    const result = {
      method: `a hub with the browser server; the agent's tab shows a page changing every 100 ms; 1 and 10 WebSocket viewers acknowledging each frame at once, ${WINDOW_MS} ms windows; CPU from /proc (the hub; its children: the browser server and Chromium). Latency: a still page, ${ROUNDS} browser_evaluate changes 400 ms apart, each timed from the call to the next frame's arrival (the call's round trip included)`,
      streaming,
      latencyMs,
    };
    writeResult("live", result);
    return result;
  } finally {
    await client.close().catch(() => undefined);
    await hub.stop();
    site.close();
  }
}
