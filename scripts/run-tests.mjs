// Run every compiled test file with node's test runner. Node 20 takes a folder and Node 22 a
// glob, so the files are listed here instead. Extra arguments narrow the run to paths containing them.
//
// Files named *.long.test.js run for real durations (a ten-minute task) and are mostly idle
// waiting: they start first, in a node --test process of their own beside the rest, so the suite
// takes as long as its longer half, not both. Their lines are prefixed "[long] "; the run fails if
// either half does.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

const root = path.resolve("dist/test");
const filters = process.argv.slice(2);
const files = fs
  .readdirSync(root, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".test.js"))
  .filter((f) => filters.length === 0 || filters.some((filter) => f.includes(filter)))
  .sort()
  .map((f) => path.join(root, f));
if (files.length === 0) {
  console.error(`no test files under ${root}${filters.length ? ` matching ${filters.join(", ")}` : ""}`);
  process.exit(1);
}

const isLong = (file) => file.endsWith(".long.test.js");
const long = files.filter(isLong);
const rest = files.filter((file) => !isLong(file));

/** One node --test process over `group`; resolves to its exit status. `prefix` marks its lines when it shares the terminal. */
function run(group, concurrency, prefix) {
  const child = spawn(process.execPath, ["--test", `--test-concurrency=${concurrency}`, ...group], { stdio: prefix ? ["ignore", "pipe", "pipe"] : "inherit" });
  if (prefix) {
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ])
      readline.createInterface({ input: from }).on("line", (line) => to.write(`${prefix}${line}\n`));
  }
  return new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

/** The machine's CPU time so far, idle and all, summed over cores (ms). */
function cpuTimes() {
  const cores = os.cpus();
  let idle = 0;
  let total = 0;
  for (const { times } of cores) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.irq + times.idle;
  }
  return { idle, total, cores: cores.length };
}

const started = Date.now();
const cpuBefore = cpuTimes();
const halves = [];
if (long.length > 0) halves.push(run(long, long.length, rest.length > 0 ? "[long] " : undefined));
// three files at a time on two cores: with two, the cores sat idle a tenth of the run (a test
// waiting on a page's poll, a child's restart, a task's status), and the suite's time is its CPU's
if (rest.length > 0) halves.push(run(rest, 3));
const statuses = await Promise.all(halves);
if (long.length > 0 && rest.length > 0) console.log(`# long tests exited ${statuses[0]}, the rest ${statuses[1]}`);
// the whole run's wall time, both halves together (each half's own is its duration_ms line)
// and how busy the machine's cores were meanwhile: whether a third file at a time could help or would only queue
const cpuAfter = cpuTimes();
const busy = 1 - (cpuAfter.idle - cpuBefore.idle) / Math.max(1, cpuAfter.total - cpuBefore.total);
console.log(`# suite took ${Math.round((Date.now() - started) / 1000)} s, its ${cpuAfter.cores} cores ${Math.round(busy * 100)}% busy`);
process.exit(statuses.every((status) => status === 0) ? 0 : 1);
