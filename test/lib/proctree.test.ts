// killTree by pid with a grace (how the hub stops a child): a root that ignores SIGTERM, and
// children that outlive a root which obeys it and so are no longer below it, all end up dead; a
// kill reads the process table without stalling the event loop. A tree's marker is looked
// for only in processes as young as its root, and a tenant's scan reads no other tenant's processes.
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { descendantsOf, isAlive, PROCESSES_PER_TURN, readProc } from "../../servers/lib/proc-table.js";
import { killTree, membersOf, TREE_MARKER_ENV } from "../../servers/lib/proctree.js";
import { until } from "../helpers/wait.js";

const started: ChildProcess[] = [];
after(() => {
  for (const child of started) child.kill("SIGKILL");
});

/** A shell running `script`, once it has `count` processes below it. */
async function treeOf(script: string, count: number): Promise<{ root: number; below: number[] }> {
  const child = spawn("/bin/sh", ["-c", script], { stdio: "ignore" });
  started.push(child);
  const root = child.pid!;
  const below = await until(`${count} processes below the shell`, () => {
    const pids = descendantsOf(root).map((p) => p.pid);
    return pids.length >= count && pids;
  });
  return { root, below };
}

const running = (pid: number) => ![undefined, "Z"].includes(readProc(pid)?.state);

describe("killTree with a grace", () => {
  test("a root that ignores SIGTERM is killed after the grace, with everything below it", async () => {
    const { root, below } = await treeOf('trap "" TERM; sleep 300 & sleep 301 & wait', 2);
    const killed = await killTree(root, { graceMs: 200 });
    assert.ok(killed >= 3, `signalled ${killed}`);
    for (const pid of [root, ...below]) assert.equal(running(pid), false, `pid ${pid} still running`);
  });

  test("children the root leaves behind when SIGTERM ends it are killed too", async () => {
    // the shell obeys SIGTERM at once; its sleeps are then reparented, out of its parent chain
    const { root, below } = await treeOf("sleep 302 & sleep 303 & wait", 2);
    await killTree(root, { graceMs: 5_000 });
    for (const pid of below) assert.equal(isAlive(pid) && running(pid), false, `orphaned pid ${pid} still running`);
  });

  test("a pid that is gone already is nothing to kill", async () => {
    const { root } = await treeOf("sleep 304 & wait", 1);
    await killTree(root);
    assert.equal(await killTree(root), 0);
  });
});

describe("a kill", () => {
  // a tenant decides how many processes the table holds: read in one go, 4,000 of them stalled the
  // hub for every other tenant about 56 ms a scan, three scans a kill
  test("reads the process table a slice at a time, the event loop turning between slices", async () => {
    // a table of a few hundred processes, as a tenant with a busy terminal makes it
    const filler = await treeOf("for i in $(seq 300); do sleep 311 & done; wait", 300);
    const { root, below } = await treeOf("sleep 309 & sleep 310 & wait", 2);
    const log: string[] = [];
    const open = fs.openSync;
    fs.openSync = ((file: fs.PathLike, ...rest: unknown[]) => {
      if (/^\/proc\/\d+\/stat$/.test(String(file))) log.push("read");
      return (open as (...args: unknown[]) => number)(file, ...rest);
    }) as typeof fs.openSync;
    let turning = true;
    const turn = () => {
      log.push("turn");
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    try {
      await killTree(root);
    } finally {
      turning = false;
      fs.openSync = open;
      await killTree(filler.root);
    }
    for (const pid of [root, ...below]) assert.equal(running(pid), false, `pid ${pid} still running`);
    const reads = log.filter((entry) => entry === "read").length;
    assert.ok(reads >= 300, `only ${reads} processes read`);
    // one scan's last slice and the next scan's first may meet between two immediates (the poll
    // phase between them, where other I/O is served, is not seen here): at most two slices
    const longestRun = Math.max(
      ...log
        .join(" ")
        .split("turn")
        .map((run) => run.split("read").length - 1),
    );
    assert.ok(longestRun <= 2 * PROCESSES_PER_TURN, `${longestRun} processes read between two immediates`);
  });
});

describe("a tree's marker", () => {
  test("names the processes the root started, wherever they went, and no process older than the root", async () => {
    const marker = `m-${process.pid}-${Date.now()}`;
    const env = { ...process.env, [TREE_MARKER_ENV]: marker };
    const older = spawn("sleep", ["305"], { env, stdio: "ignore" });
    started.push(older);
    const olderStart = await until("the older process's start", () => readProc(older.pid!)?.startTicks);
    // start ticks count hundredths of a second since boot: the root starts at a later one
    await until("a later clock tick", () => startsAfter(olderStart));
    // the root's setsid child leaves its group and session, and its parent chain once the root is gone
    const root = spawn("/bin/sh", ["-c", "setsid sleep 306 & wait"], { env, stdio: "ignore", detached: true });
    started.push(root);
    const rootStart = readProc(root.pid!)!.startTicks;
    const escaped = await until("the setsid sleep", () => descendantsOf(root.pid!).find((p) => p.comm === "sleep")?.pid);
    root.kill("SIGKILL");
    await until("the root's exit", () => !running(root.pid!));

    const members = await membersOf({ root: root.pid!, marker, startTicks: rootStart });
    assert.ok(members.includes(escaped), `the escaped sleep ${escaped} is not among ${members.join(", ")}`);
    assert.ok(!members.includes(older.pid!), "a process older than the root was taken for one of its own");
    // without the root's start, every process's environment is read: the older one is named too
    assert.ok((await membersOf({ root: root.pid!, marker })).includes(older.pid!));
    await killTree({ root: root.pid!, marker, startTicks: rootStart });
    assert.equal(running(escaped), false, "the escaped sleep outlived the kill");
  });
});

const asRoot = process.getuid?.() === 0 ? false : "needs root: processes under two uids";

describe("the processes a tenant's scan for leftovers reads", { skip: asRoot }, () => {
  test("are its own uid's and root's, never another tenant's", async () => {
    const uid = 200_000 + Math.floor(Math.random() * 100_000);
    const as = (id: number) => [`--reuid=${id}`, `--regid=${id}`, "--clear-groups"];
    const own = spawn("setpriv", [...as(uid), "sleep", "307"], { stdio: "ignore" });
    const other = spawn("setpriv", [...as(uid + 1), "sleep", "308"], { stdio: "ignore" });
    started.push(own, other);
    for (const child of [own, other]) await until("the sleep", () => readProc(child.pid!)?.comm === "sleep");
    const module = fileURLToPath(import.meta.resolve("../../servers/lib/proc-table.js"));
    const script = `const { signallableProcesses } = await import(${JSON.stringify(module)}); console.log(JSON.stringify((await signallableProcesses()).map((p) => p.pid)));`;
    const seen = JSON.parse(execFileSync("setpriv", [...as(uid), process.execPath, "--input-type=module", "-e", script], { encoding: "utf8" })) as number[];
    assert.ok(seen.includes(own.pid!), "its own process is missing");
    assert.ok(seen.includes(process.pid), "a root process (maybe one of its own made undumpable) is missing");
    assert.ok(!seen.includes(other.pid!), "another uid's process was read");
  });
});

/** Whether a process started now starts after `ticks`. */
function startsAfter(ticks: number): boolean {
  const probe = spawn("true", { stdio: "ignore" });
  const start = readProc(probe.pid!)?.startTicks;
  return start !== undefined && start > ticks;
}
