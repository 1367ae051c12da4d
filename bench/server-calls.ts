// What a call costs the server that runs it, with no hub in front: each server spawned alone over
// stdio, driven by the SDK client with the session and call named in _meta as the hub names them,
// 8 calls in flight. The server's CPU per call from /proc, medians of interleaved rounds. Every
// call through the hub pays this on top of the hub's own share (table 8), so a cut here is a cut for
// every client, whichever way it comes in.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CALL_META_KEY, SESSION_META_KEY } from "../servers/lib/session-events.js";
import { cmdlineOf, cpuMs, descendants } from "./proc.js";
import { writeResult } from "./results.js";
import { spread } from "./stats.js";
import { distRoot } from "../hub/config/config.js";
import { echoScript } from "./targets.js";

const ROUNDS = Number(process.env.BENCH_SERVER_CALLS_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_SERVER_CALLS ?? 10000);
const WARM_CALLS = 1500;
const IN_FLIGHT = 8;
const SESSION = "0b9f3c52-7a1e-4d8b-9c2f-5e6a7b8c9d0e";

interface Case {
  name: string;
  script: string;
  tool: string;
  args: Record<string, unknown>;
  /** Measured calls per round, when a call costs too much for CALLS (a command run in a new process). */
  calls?: number;
}

const fileServer = path.join(distRoot(), "servers", "file", "main.js");
const terminalServer = path.join(distRoot(), "servers", "terminal", "main.js");
const CASES: Case[] = [
  { name: "echo fixture: echo", script: echoScript(), tool: "echo", args: { text: "ping" } },
  { name: "file: read 1 KB", script: fileServer, tool: "read", args: { path: "one-kb.txt" } },
  { name: "file: info", script: fileServer, tool: "info", args: { path: "one-kb.txt" } },
  { name: "file: list of 20 entries", script: fileServer, tool: "list", args: { path: "dir" } },
  { name: "file: write 1 KB", script: fileServer, tool: "write", args: { path: "written.txt", content: "y".repeat(1023) + "\n" } },
  { name: "file: grep of 20 files", script: fileServer, tool: "grep", args: { pattern: "file 1", path: "dir" } },
  // bash's own start and run are its process's, not the server's: this is the start (the launcher's fork, or the
  // server's own without one), the watch of its tree and the reply
  { name: "terminal: exec true", script: terminalServer, tool: "exec", args: { command: "true" }, calls: 500 },
];

/** A server's CPU: its own and its helpers' (the terminal's command launcher), not what they run for it. */
function serverCpuMs(pid: number): number {
  const helpers = descendants(pid).filter((child) => cmdlineOf(child)[0]?.endsWith("/agentbox-launcher"));
  return helpers.reduce((total, helper) => total + cpuMs(helper), cpuMs(pid));
}

interface Running {
  client: Client;
  pid: number;
  calls: number;
}

async function startServer(c: Case, workspace: string): Promise<Running> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [c.script],
    env: { ...(process.env as Record<string, string>), AGENTBOX_WORKSPACE: workspace, AGENTBOX_LOG_LEVEL: "warn" },
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-server-calls", version: "1.0.0" });
  await client.connect(transport);
  return { client, pid: transport.pid!, calls: 0 };
}

/** `count` calls, IN_FLIGHT at once; any error result stops the benchmark (a failing call costs something else). */
async function callMany(c: Case, s: Running, count: number): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) {
        const _meta = { [SESSION_META_KEY]: SESSION, [CALL_META_KEY]: `bench-${++s.calls}` };
        const result = await s.client.callTool({ name: c.tool, arguments: c.args, _meta });
        if (result.isError) throw new Error(`${c.name}: ${JSON.stringify(result.content).slice(0, 200)}`);
      }
    }),
  );
}

export async function runServerCalls(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "bench-server-calls-"));
  fs.writeFileSync(path.join(workspace, "one-kb.txt"), "x".repeat(1023) + "\n");
  fs.mkdirSync(path.join(workspace, "dir"));
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(workspace, "dir", `f${i}.txt`), `file ${i}\n`);
  const servers: Running[] = [];
  try {
    for (const c of CASES) servers.push(await startServer(c, workspace));
    const perCall = CASES.map(() => [] as number[]);
    const perSecond = CASES.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...CASES.keys()].reverse() : [...CASES.keys()];
      for (const i of order) {
        // the first calls of each round warm the JIT and are not counted
        const calls = CASES[i].calls ?? CALLS;
        await callMany(CASES[i], servers[i], Math.min(WARM_CALLS, calls));
        const cpu0 = serverCpuMs(servers[i].pid);
        const t0 = performance.now();
        await callMany(CASES[i], servers[i], calls);
        perSecond[i].push((calls / (performance.now() - t0)) * 1000);
        perCall[i].push(((serverCpuMs(servers[i].pid) - cpu0) / calls) * 1000);
      }
      log(`server-calls round ${round + 1}/${ROUNDS}: ${CASES.map((c, i) => `${c.name} ${perCall[i].at(-1)!.toFixed(0)} µs`).join(", ")}`);
    }
    const results = Object.fromEntries(CASES.map((c, i) => [c.name, { cpuUsPerCall: spread(perCall[i], 1), callsPerSecond: spread(perSecond[i], 0) }]));
    const method =
      `Each server alone over stdio (no hub), driven by the SDK client with the session and call named in _meta as the hub names them, ` +
      `${IN_FLIGHT} calls in flight; ${ROUNDS} rounds of ${WARM_CALLS} calls to warm up and ${CALLS} measured per server (${CASES.filter((c) => c.calls)
        .map((c) => `${c.name}: ${c.calls} of each`)
        .join(", ")}), servers interleaved; the server's CPU per call from /proc (the server process, with the terminal's command launcher; not the commands).`;
    const data = { method, results };
    writeResult("server-calls", data);
    return data;
  } finally {
    await Promise.allSettled(servers.map((s) => s.client.close()));
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}
