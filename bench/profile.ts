// node dist/bench/profile.js [calls] [sessions] [client]: drive the echo tool through a hub started with
// --cpu-prof, then print where the hub spent its CPU (self time by function and by package).
// client: "sdk" (the SDK client, default), or the relay benchmark's raw client speaking "2025" or
// "2026" (MCP 2026-07-28, the envelope on every request), whose own cost stays out of the hub's way.
// This is how the causes in bench/README.md were found; it is not part of `npm run bench`.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { ECHO_ARGS } from "./echo-setup.js";
import { closedLoop } from "./load.js";
import { cpuMs } from "./proc.js";
import { RawSession } from "./raw-client.js";
import { connectHttp, echoServer, startHub, tempDir } from "./targets.js";
import { sleep } from "./stats.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Which package (or hub/servers file) a script URL belongs to. */
function owner(url: string): string {
  if (!url) return "(native / GC / idle)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith("node:")) return url;
  const dist = url.indexOf("/dist/");
  return dist >= 0 ? url.slice(dist + 6) : url;
}

export function selfTimes(profile: Profile): { byFunction: [string, number][]; byOwner: [string, number][]; totalMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    if (node.callFrame.functionName === "(idle)") return;
    total += dt;
    const f = `${node.callFrame.functionName || "(anonymous)"} ${owner(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
    fn.set(f, (fn.get(f) ?? 0) + dt);
    const o = owner(node.callFrame.url);
    pkg.set(o, (pkg.get(o) ?? 0) + dt);
  });
  const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, 25);
  return { byFunction: top(fn), byOwner: top(pkg), totalMs: total };
}

async function rawSessions(url: string, count: number, era: "2025" | "2026"): Promise<RawSession[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: count });
  return Promise.all(
    Array.from({ length: count }, async () => {
      const s = new RawSession(new URL(url), agent, era);
      await s.initialize();
      return s;
    }),
  );
}

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 3000);
  const sessions = Number(process.argv[3] ?? 8);
  const dir = tempDir("agentbox-bench-prof-");
  const client = process.argv[4] ?? "sdk";
  const hub = await startHub({ servers: { echo: echoServer() }, nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`] });
  const conns = client === "sdk" ? await Promise.all(Array.from({ length: sessions }, () => connectHttp(hub.url))) : [];
  const raw = client === "sdk" ? [] : await rawSessions(hub.url, sessions, client === "2026" ? "2026" : "2025");
  const callers = [
    ...conns.map((c) => async () => void (await c.client.callTool({ name: "echo_echo", arguments: ECHO_ARGS }))),
    ...raw.map((s) => () => s.callTool("echo_echo", ECHO_ARGS)),
  ];
  let done = 0;
  const cpu0 = cpuMs(hub.pid);
  while (done < calls) {
    const run = await closedLoop(callers, 0, 2000);
    done += run.calls;
    process.stdout.write(`${done} calls (${run.callsPerSecond.toFixed(0)}/s)\n`);
  }
  // CPU the kernel accounted to the hub: the profile's non-idle time also counts the time the hub
  // was runnable but off the CPU (preempted inside a syscall), which /proc does not
  const hubCpu = cpuMs(hub.pid) - cpu0;
  await Promise.all([...conns.map((c) => c.close()), ...raw.map((s) => s.close())]);
  await hub.stop();
  await sleep(200);
  const file = fs.readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no profile written in ${dir}`);
  const { byFunction, byOwner, totalMs } = selfTimes(JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")));
  process.stdout.write(`\nhub non-idle in the profile ${totalMs.toFixed(0)} ms for ${done} calls = ${(totalMs / done).toFixed(3)} ms per call\n`);
  process.stdout.write(`hub CPU from /proc ${hubCpu.toFixed(0)} ms = ${(hubCpu / done).toFixed(3)} ms per call\n`);
  process.stdout.write(`profile: ${path.join(dir, file)}\n\nself time by package / file:\n`);
  for (const [k, v] of byOwner) process.stdout.write(`  ${((100 * v) / totalMs).toFixed(1).padStart(5)} %  ${k}\n`);
  process.stdout.write(`\nself time by function:\n`);
  for (const [k, v] of byFunction) process.stdout.write(`  ${((100 * v) / totalMs).toFixed(1).padStart(5)} %  ${k}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
