// Density (issue 41): how much memory one agent costs. An agent is one client session of a tenant
// that has a browser page open (browser_navigate to a loopback page), ran a command
// (terminal_exec), holds a Python value (code_execute) and wrote a file (file_write). Measured as
// the PSS of the hub's whole process tree (hub, its children, and everything they started:
// Chromium, interpreters, ptys), added over the idle hub, with 1, 8 and 32 agents open at once;
// and per process, grouped by kind, so the per-agent cost can be traced to what holds it; and the
// CPU the whole tree spends while those agents sit idle (timers, sweeps, walks of the disk).
// The hub runs as root (the tenant under a uid of its own), as in the image.
import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { errorMessage } from "../servers/lib/log.js";
import { startHub, textOf, type TestHub } from "../test/helpers/hub.js";
import { servePage } from "./operations.js";
import { cmdlineOf, cpuMs, descendants, parentMap, pssOf } from "./proc.js";
import { writeResult } from "./results.js";
import { round, sleep } from "./stats.js";

const LEVELS = (process.env.BENCH_DENSITY_LEVELS ?? "1,8,32").split(",").map(Number);
const SETTLE_MS = Number(process.env.BENCH_DENSITY_SETTLE_MS ?? 3000);
const IDLE_CPU_WINDOW_MS = Number(process.env.BENCH_DENSITY_CPU_MS ?? 20_000);
const TARGET_AGENTS_PER_GIB = 20;
const KEY = `density-${randomBytes(12).toString("hex")}`;

const mib = (bytes: number) => round(bytes / 2 ** 20, 1);

/** What a process of the tree is, from its command line. */
export function kindOf(cmdline: string[]): string {
  const line = cmdline.join(" ");
  const exe = cmdline[0]?.split("/").at(-1) ?? "?";
  if (/\/hub\/main\.js\b/.test(line)) return "hub";
  const server = /\/servers\/([a-z]+)\/main\.js\b/.exec(line);
  if (server) return `${server[1]} server (node)`;
  if (/driver\.py\b/.test(line)) return "python interpreter";
  if (/\/code\/js\/driver\.js\b/.test(line)) return "javascript interpreter";
  if (/chrom/.test(exe)) {
    const type = /--type=([a-z-]+)/.exec(line)?.[1];
    if (!type) return "chromium browser";
    const sub = /--utility-sub-type=([\w.]+)/.exec(line)?.[1];
    return `chromium ${type}${sub ? ` (${sub.split(".").at(-1)})` : ""}`;
  }
  return exe;
}

interface KindTotal {
  processes: number;
  pssMiB: number;
}

interface Reading {
  agents: number;
  totalPssMiB: number;
  /** CPU of the whole tree while nothing is asked of it, in ms per second. */
  idleCpuMsPerS?: number;
  processes: number;
  kinds: Record<string, KindTotal>;
}

/** Every process of the hub's tree, its PSS added up by kind. */
function readTree(hubPid: number, agents: number): Reading {
  const kinds: Record<string, KindTotal> = {};
  let total = 0;
  let processes = 0;
  for (const pid of [hubPid, ...descendants(hubPid, parentMap())]) {
    const pss = pssOf(pid);
    if (pss === undefined) continue;
    const kind = kindOf(cmdlineOf(pid));
    const entry = (kinds[kind] ??= { processes: 0, pssMiB: 0 });
    entry.processes++;
    entry.pssMiB += pss / 2 ** 20;
    total += pss;
    processes++;
  }
  for (const entry of Object.values(kinds)) entry.pssMiB = round(entry.pssMiB, 1);
  return { agents, totalPssMiB: mib(total), processes, kinds };
}

/** The tree's CPU over a window in which nothing is asked of it (a process that ends meanwhile counts in its parent's). */
async function idleCpu(hubPid: number): Promise<number> {
  const before = cpuMs(hubPid, true);
  const started = performance.now();
  await sleep(IDLE_CPU_WINDOW_MS);
  return round((cpuMs(hubPid, true) - before) / ((performance.now() - started) / 1000), 1);
}

/** One agent's work; every call must succeed, or the reading would be of something else. */
async function startAgent(hub: TestHub, pageUrl: string, index: number): Promise<Client> {
  const client = await hub.connect({ name: `agent-${index}`, headers: { Authorization: `Bearer ${KEY}` } });
  const call = async (name: string, args: Record<string, unknown>, expect: RegExp) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    const text = textOf(result as Parameters<typeof textOf>[0]);
    if (result.isError || !expect.test(text)) throw new Error(`agent ${index} ${name}: ${text.slice(0, 300)}`);
  };
  await call("browser_navigate", { url: pageUrl }, /Benchmark page/);
  await call("terminal_exec", { command: `echo agent-${index}` }, new RegExp(`agent-${index}`));
  await call("code_execute", { language: "python", code: `x = ${index}` }, /./);
  await call("file_write", { path: `agents/agent-${index}.txt`, content: `agent ${index}\n` }, /./);
  return client;
}

/** After the readings: each agent's Python value is still there (state kept however it was stored). */
async function checkValues(clients: Client[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const [index, client] of clients.entries()) {
    const result = await client.callTool({ name: "code_execute", arguments: { language: "python", code: "x" } }, undefined, { timeout: 120_000 });
    const text = textOf(result as Parameters<typeof textOf>[0]);
    if (result.isError || !new RegExp(`\\b${index}\\b`).test(text)) wrong.push(`agent ${index}: ${text.slice(0, 200)}`);
  }
  return wrong;
}

export async function runDensity(log: (msg: string) => void): Promise<Record<string, unknown>> {
  if (process.getuid?.() !== 0) log("density: not root, so the tenant runs under this uid (the image runs the hub as root)");
  const hub = await startHub({
    servers: ["browser", "terminal", "code", "file"],
    config: { tenants: { density: { apiKey: KEY } } },
    // the log level stays info: the helper learns the hub's port from its "listening" line
    env: { AGENTBOX_MAX_SESSIONS: "1000", AGENTBOX_MAX_SESSIONS_PER_CLIENT: "1000" },
  });
  const page = await servePage();
  const clients: Client[] = [];
  try {
    await sleep(SETTLE_MS);
    const idle = { ...readTree(hub.pid, 0), idleCpuMsPerS: await idleCpu(hub.pid) };
    log(`density idle: ${idle.totalPssMiB} MiB PSS in ${idle.processes} processes, ${idle.idleCpuMsPerS} ms CPU a second`);
    const levels: Array<Reading & { addedPssMiB: number; pssPerAgentMiB: number; agentsPerGiB: number }> = [];
    for (const level of LEVELS) {
      // agents are added in parallel batches (a loaded 2-core machine would take long one by one)
      while (clients.length < level) {
        const batch = Array.from({ length: Math.min(8, level - clients.length) }, (_, i) => clients.length + i);
        clients.push(...(await Promise.all(batch.map((i) => startAgent(hub, page.url, i)))));
      }
      await sleep(SETTLE_MS);
      const reading = { ...readTree(hub.pid, level), idleCpuMsPerS: await idleCpu(hub.pid) };
      const added = reading.totalPssMiB - idle.totalPssMiB;
      const perAgent = round(added / level, 1);
      levels.push({ ...reading, addedPssMiB: round(added, 1), pssPerAgentMiB: perAgent, agentsPerGiB: round(1024 / perAgent, 1) });
      log(
        `density ${level} agents: ${reading.totalPssMiB} MiB PSS in ${reading.processes} processes; ${perAgent} MiB per agent (${round(1024 / perAgent, 1)} per GiB); idle ${reading.idleCpuMsPerS} ms CPU a second`,
      );
    }
    const lost = await checkValues(clients).catch((err) => [errorMessage(err)]);
    if (lost.length) log(`density: values lost: ${lost.slice(0, 3).join("; ")}`);
    const most = levels.at(-1)!;
    const result = {
      method: `PSS (/proc/<pid>/smaps_rollup) of every process of the hub's tree, added; per agent = (total with N agents open − idle total) ÷ N; ${SETTLE_MS} ms settle before each reading. An agent: one client session of one tenant (the hub as root: the tenant under its own uid) that ran browser_navigate to a loopback page, terminal_exec, code_execute (Python, x = <n>) and file_write, and stays open. Agents added 8 at a time up to each level; after the last reading every agent's x is read back. Idle CPU: the tree's user and system time (ended processes' in their parents') over ${IDLE_CPU_WINDOW_MS / 1000} s with no call, after each reading.`,
      idle,
      levels,
      valuesKept: { checked: clients.length, lost: lost.length, ...(lost.length ? { examples: lost.slice(0, 5) } : {}) },
      target: { agentsPerGiB: TARGET_AGENTS_PER_GIB, met: most.agentsPerGiB >= TARGET_AGENTS_PER_GIB && lost.length === 0 },
    };
    writeResult("density", result);
    return result;
  } finally {
    await hub.stop();
    await page.close();
  }
}
