// Table 17: what the hub pays to read the process table, which its tenants fill. Every sweep
// (every 5 s and after a session ends) reads each process's status, and every kill of a server's
// tree (a stop, a restart, a session's instance ending) reads each process's stat three times. Two
// figures per read, with the machine's own processes and with a tenant's thousands more: the CPU it
// costs, and the longest the hub's event loop waits meanwhile (every other tenant's calls wait as
// long). Contenders in one run: the table read in one go, as the hub's kills read it before, and a
// slice at a time, as the hub and a terminal read it now (servers/lib/proc-table.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { descendantsOf, listOwners, listProcesses, listProcessesAsync } from "../servers/lib/proc-table.js";
import { killTree } from "../servers/lib/proctree.js";
import { writeResult } from "./results.js";
import { round, sleep, spread } from "./stats.js";

const ROUNDS = Number(process.env.BENCH_SCANS_ROUNDS ?? 5);
/** How many processes the busy tenant holds (sleeping, under a uid of its own when this runs as root). */
const EXTRA = Number(process.env.BENCH_SCANS_EXTRA ?? 4000);
const TENANT_UID = 45_001;

interface Sample {
  cpuMs: number;
  longestTurnMs: number;
}

/** The CPU this process spends on `work`. */
async function cpuOf(work: () => unknown): Promise<number> {
  const cpu0 = process.cpuUsage();
  await work();
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000;
}

/** The longest wait between two turns of the event loop while `work` runs (a loop of immediates, whose own CPU cpuOf must not count). */
async function longestTurnOf(work: () => unknown): Promise<number> {
  let last = performance.now();
  let longest = 0;
  let turning = true;
  const turn = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (turning) setImmediate(turn);
  };
  setImmediate(turn);
  await work();
  turning = false;
  return Math.max(longest, performance.now() - last);
}

/** A server's tree as the hub kills it: a shell with two children, in a group of its own. */
async function serverTree(): Promise<number> {
  const shell = spawn("/bin/sh", ["-c", "sleep 600 & sleep 601 & wait"], { stdio: "ignore", detached: true });
  while (descendantsOf(shell.pid!).length < 2) await sleep(10);
  return shell.pid!;
}

/** What is measured, made ready first (a tree to kill is started outside the measure). */
type Operation = [name: string, prepare: () => Promise<() => unknown>];

const OPERATIONS: Operation[] = [
  ["stat of every process, in one go", async () => listProcesses],
  ["stat of every process, a slice at a time", async () => listProcessesAsync],
  ["status of every process (a sweep), a slice at a time", async () => listOwners],
  ["a kill of a server's tree (three reads of stat), a slice at a time", async () => killTree.bind(undefined, await serverTree(), {})],
];

/** Start `count` sleeping processes, under a uid of their own when this process may. */
async function busyTenant(count: number): Promise<ChildProcess> {
  const asTenant = process.getuid?.() === 0 ? ["setpriv", `--reuid=${TENANT_UID}`, `--regid=${TENANT_UID}`, "--clear-groups"] : [];
  const script = `i=0; while [ $i -lt ${count} ]; do sleep 900 & i=$((i+1)); done; wait`;
  const [cmd, ...args] = [...asTenant, "/bin/sh", "-c", script];
  const holder = spawn(cmd, args, { stdio: "ignore", detached: true });
  for (let waited = 0; descendantsOf(holder.pid!).length < count && waited < 120_000; waited += 250) await sleep(250);
  return holder;
}

async function measureTable(label: string, log: (msg: string) => void): Promise<Record<string, unknown>> {
  const samples = new Map<string, Sample[]>(OPERATIONS.map(([name]) => [name, []]));
  for (const [, prepare] of OPERATIONS) await (await prepare())(); // warm: the JIT, the first readdir
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, prepare] of OPERATIONS) {
      const cpuMs = await cpuOf(await prepare());
      samples.get(name)!.push({ cpuMs, longestTurnMs: await longestTurnOf(await prepare()) });
    }
  }
  const processes = listProcesses().length;
  const operations = Object.fromEntries(
    [...samples].map(([name, list]) => [
      name,
      { cpuMs: spread(list.map((s) => round(s.cpuMs, 2))), longestTurnMs: spread(list.map((s) => round(s.longestTurnMs, 2))) },
    ]),
  );
  log(`proc-scans: ${label}, ${processes} processes`);
  return { label, processes, operations };
}

export async function runProcScans(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const tables = [await measureTable("the machine's own processes", log)];
  const holder = await busyTenant(EXTRA);
  try {
    tables.push(await measureTable(`with a tenant's ${EXTRA} sleeping processes`, log));
  } finally {
    process.kill(-holder.pid!, "SIGKILL");
  }
  const result = {
    method: `this process reads /proc as the hub does (servers/lib/proc-table.ts, servers/lib/proctree.ts); each read ${ROUNDS} times, the contenders in turns; the CPU of this process for one read, and for another the longest wait between two turns of its event loop while it ran`,
    rounds: ROUNDS,
    tables,
  };
  writeResult("proc-scans", result);
  return result;
}
