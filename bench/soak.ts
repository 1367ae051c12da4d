// Soak under attack: rounds of concurrent honest sessions (browser, terminal, code, file) of one
// tenant while a second, hostile tenant runs the attacks of issue 21 at the same time: large
// results with progress (memory), a session flood, daemons with huge environments (the sweep),
// a disk fill, forged lines on its own server's stdout and stderr, and a squat on the hub's port
// over IPv6. Recorded: every honest call's outcome and the hub's peak RSS, against a stated budget.
// The hub runs as root (each tenant under its own uid), as in the image.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../servers/lib/log.js";
import { listProcesses, realUid } from "../servers/lib/proc-table.js";
import { startHub, textOf, type TestHub } from "../test/helpers/hub.js";
import { servePage } from "./operations.js";
import { rssOf } from "./proc.js";
import { writeResult } from "./results.js";
import { round } from "./stats.js";

const ROUNDS = Number(process.env.BENCH_SOAK_ROUNDS ?? 3);
const SESSIONS = Number(process.env.BENCH_SOAK_SESSIONS ?? 12);
/** The hub's resident memory the soak must stay within (docs/security.md, "What one tenant can cost the others"). */
export const SOAK_RSS_BUDGET_MIB = Number(process.env.BENCH_SOAK_BUDGET_MIB ?? 512);
const HONEST = `honest-${randomBytes(12).toString("hex")}`;
const HOSTILE = `mallory-${randomBytes(12).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

export interface SoakResult {
  rounds: number;
  sessionsPerRound: number;
  honestCalls: number;
  honestErrors: number;
  errors: string[];
  hubPeakRssMiB: number;
  /** processes and threads of the honest tenant's uid at most (what RLIMIT_NPROC counts) */
  honestTasksPeak: number;
  budgetMiB: number;
  attacks: Record<string, string>;
}

async function connect(hub: TestHub, key: string): Promise<Client> {
  const client = new Client({ name: "soak", version: "1.0.0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(hub.url), { requestInit: { headers: auth(key) } }));
  return client;
}

async function tool(client: Client, name: string, args: Record<string, unknown>, onprogress?: () => void): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 120_000, onprogress })) as CallToolResult;
}

/** One honest session's work: every server once or more, each result checked. */
async function honestSession(hub: TestHub, pageUrl: string, tag: string, outcome: (what: string, err?: string) => void): Promise<void> {
  let client: Client | undefined;
  const step = async (what: string, run: () => Promise<CallToolResult>, expect: RegExp) => {
    try {
      const result = await run();
      const text = textOf(result);
      outcome(what, result.isError ? `isError: ${text.slice(0, 300)}` : expect.test(text) ? undefined : `unexpected: ${text.slice(0, 300)}`);
    } catch (err) {
      outcome(what, errorMessage(err));
    }
  };
  try {
    client = await connect(hub, HONEST);
  } catch (err) {
    return outcome("connect", errorMessage(err));
  }
  const c = client;
  const file = `soak/${tag}.txt`;
  await step("file_write", () => tool(c, "file_write", { path: file, content: `hello ${tag}\n` }), /./);
  await step("file_read", () => tool(c, "file_read", { path: file }), new RegExp(`hello ${tag}`));
  await step("terminal_exec", () => tool(c, "terminal_exec", { command: `cat ${file} && echo done-${tag}` }), new RegExp(`done-${tag}`));
  await step("code_execute", () => tool(c, "code_execute", { language: "python", code: `print(6 * 7, "${tag}")` }), /42/);
  await step("browser_navigate", () => tool(c, "browser_navigate", { url: pageUrl }), /Benchmark page/);
  await step("browser_snapshot", () => tool(c, "browser_snapshot", {}), /Second link/);
  await step("terminal_exec again", () => tool(c, "terminal_exec", { command: "true" }), /./);
  await client.close().catch(() => undefined);
}

/** The hostile tenant's attacks, all at once, until `stop` says so; each reports how it ended. */
async function hostileTenant(hub: TestHub, stop: () => boolean, report: (attack: string, how: string) => void): Promise<void> {
  const client = await connect(hub, HOSTILE);
  const pids = (await (await fetch(`${hub.origin}/`, { headers: auth(HOSTILE) })).json()).servers as Array<{ name: string; pid: number | null }>;
  const terminalPid = pids.find((s) => s.name === "terminal")?.pid;
  const port = new URL(hub.origin).port;
  const sh = (command: string) => tool(client, "terminal_exec", { command, timeoutMs: 120_000 }).then(textOf, errorMessage);

  const attacks: Record<string, () => Promise<string>> = {
    // large results through a resumable stream (a progress token makes the reply SSE)
    memory: async () => {
      await tool(client, "file_write", { path: "big.txt", content: "x".repeat(6 * 1024 * 1024) });
      let calls = 0;
      while (calls < 90) {
        const result = await tool(client, "file_read", { path: "big.txt" }, () => undefined).catch((err) => errorMessage(err));
        if (typeof result === "string" || result.isError)
          return `read failed after ${calls} reads: ${typeof result === "string" ? result : textOf(result)}`.slice(0, 300);
        calls++;
      }
      return `${calls} reads of a 6 MB file with a progress token`;
    },
    sessions: async () => {
      const statuses = new Map<number, number>();
      for (let i = 0; i < 3000 && !stop(); i++) {
        const res = await fetch(hub.url, {
          method: "POST",
          headers: { ...auth(HOSTILE), "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "flood", version: "1" } },
          }),
        }).catch(() => undefined);
        await res?.body?.cancel().catch(() => undefined);
        if (res) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
      return `initialize answers by status: ${JSON.stringify(Object.fromEntries(statuses))}`;
    },
    // an environment variable holds at most 128 KiB: ten of 100 KB make each daemon's 1 MB; the
    // command kills its reaper so that the daemons outlive it and the sweeper has to read them (once
    // all have started: on a busy machine 200 starts of 1 MB each take over a second)
    sweep: () =>
      sh(
        `b=$(head -c 100000 /dev/zero | tr '\\0' x); vars=; for v in 0 1 2 3 4 5 6 7 8 9; do vars="$vars B$v=$b"; done; for i in $(seq 200); do env -i $vars AGENTBOX_SESSION=forged setsid sleep 600 >/dev/null 2>&1 < /dev/null & done; for i in $(seq 300); do [ "$(pgrep -c -u $(id -u) -x sleep)" -ge 200 ] && break; sleep 0.1; done; echo "$(pgrep -c -u $(id -u) -x sleep) daemons"; kill -KILL $PPID; sleep 30`,
      ),
    disk: () => sh("dd if=/dev/zero of=fill.bin bs=1M count=2048 2>&1 | tail -1; ls -la fill.bin; rm -f fill.bin"),
    // a tenant can write into its own server's stdout and stderr: pidfd_getfd on a process of its uid
    output: async () => {
      if (!terminalPid) return "no terminal pid visible";
      const forged = JSON.stringify({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "file:///secret.txt" } });
      const line = JSON.stringify({ level: "error", msg: "forged", tenant: "someone-else", component: "hub" });
      const py = [
        "import ctypes, os, sys",
        "libc = ctypes.CDLL(None, use_errno=True)",
        `pidfd = libc.syscall(434, ${terminalPid}, 0)`,
        "out, err = libc.syscall(438, pidfd, 1, 0), libc.syscall(438, pidfd, 2, 0)",
        "if out < 0 or err < 0: sys.exit('pidfd_getfd failed: errno %d' % ctypes.get_errno())",
        // the server's ends are non-blocking: wait until they take more, as a patient attacker would
        "import select",
        "def put(fd, data):",
        "  while data:",
        "    try: data = data[os.write(fd, data):]",
        "    except BlockingIOError: select.select([], [fd], [], 1)",
        `for i in range(20000): put(out, ${JSON.stringify(forged + "\n")}.encode()); put(err, ${JSON.stringify(line + "\n")}.encode())`,
        "print('wrote 20000 forged lines to each')",
      ].join("\n");
      fs.writeFileSync(path.join(hub.workspace, "mallory", "forge.py"), py);
      return sh("/usr/bin/python3 forge.py 2>&1 | tail -2");
    },
    port: () =>
      sh(
        `/usr/bin/python3 -c "import socket; s=socket.socket(socket.AF_INET6); s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1); s.bind(('::1', ${port})); s.listen(); print('squatted')" 2>&1 | tail -1`,
      ),
  };
  await Promise.all(
    Object.entries(attacks).map(async ([name, attack]) => {
      try {
        report(name, (await attack()).trim().slice(-300));
      } catch (err) {
        report(name, `threw: ${errorMessage(err)}`);
      }
    }),
  );
  await client.close().catch(() => undefined);
}

/** The uid a tenant's servers run under, from the pids GET / shows it. */
async function tenantUid(hub: TestHub, key: string): Promise<number | undefined> {
  const servers = (await (await fetch(`${hub.origin}/`, { headers: auth(key) })).json()).servers as Array<{ pid: number | null }>;
  const pid = servers.find((s) => s.pid)?.pid;
  return pid ? realUid(pid) : undefined;
}

/** Tasks (processes and threads) of a uid right now. */
function tasksOf(uid: number): number {
  let tasks = 0;
  for (const p of listProcesses()) {
    if (p.state !== "Z" && realUid(p.pid) === uid) tasks += threadsOf(p.pid);
  }
  return tasks;
}

function threadsOf(pid: number): number {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 1);
  } catch {
    return 0;
  }
}

export async function soak(log: (msg: string) => void, rounds = ROUNDS, sessions = SESSIONS): Promise<SoakResult> {
  const hub = await startHub({
    servers: ["browser", "terminal", "code", "file"],
    // mallory's disk budget is small, so its 2 GB dd meets it (the default is a share of the filesystem)
    config: { tenants: { honest: { apiKey: HONEST }, mallory: { apiKey: HOSTILE, limits: { diskMiB: 256 } } } },
  });
  const page = await servePage();
  let peak = 0;
  let tasksPeak = 0;
  const honestUid = await tenantUid(hub, HONEST);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(hub.pid) ?? 0);
    if (honestUid !== undefined) tasksPeak = Math.max(tasksPeak, tasksOf(honestUid));
  }, 200);
  const errors: string[] = [];
  const attacks: Record<string, string> = {};
  let calls = 0;
  let done = false;
  let giveUp: NodeJS.Timeout | undefined;
  try {
    const hostile = hostileTenant(
      hub,
      () => done,
      (attack, how) => (attacks[attack] = how),
    );
    for (let r = 1; r <= rounds; r++) {
      const before = errors.length;
      await Promise.all(
        Array.from({ length: sessions }, (_, s) =>
          honestSession(hub, page.url, `r${r}s${s}`, (what, err) => {
            calls++;
            if (err) errors.push(`round ${r} session ${s} ${what}: ${err}`);
          }),
        ),
      );
      log(`round ${r}: ${errors.length - before} errors; hub peak RSS so far ${round(peak / 2 ** 20, 1)} MiB`);
    }
    done = true;
    // the attacks end soon after `done`, or are given up on (a timer cleared, so nothing waits for it)
    await Promise.race([hostile, new Promise((resolve) => (giveUp = setTimeout(resolve, 180_000)))]);
  } finally {
    clearTimeout(giveUp);
    done = true;
    clearInterval(sampler);
    await page.close();
    await hub.stop();
    fs.rmSync(path.join(hub.workspace), { recursive: true, force: true });
  }
  return {
    rounds,
    sessionsPerRound: sessions,
    honestCalls: calls,
    honestErrors: errors.length,
    errors: errors.slice(0, 20),
    hubPeakRssMiB: round(peak / 2 ** 20, 1),
    honestTasksPeak: tasksPeak,
    budgetMiB: SOAK_RSS_BUDGET_MIB,
    attacks,
  };
}

export async function runSoak(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const result = await soak(log);
  writeResult("soak", { ...result });
  log(
    `soak: ${result.honestErrors} errors in ${result.honestCalls} honest calls; hub peak RSS ${result.hubPeakRssMiB} MiB (budget ${result.budgetMiB}); honest tenant's tasks at most ${result.honestTasksPeak}`,
  );
  for (const [attack, how] of Object.entries(result.attacks)) log(`  ${attack}: ${how}`);
  for (const error of result.errors) log(`  ${error}`);
  if (result.honestErrors > 0 || result.hubPeakRssMiB > result.budgetMiB) throw new Error("soak failed: honest errors or RSS over budget");
  return { ...result };
}
