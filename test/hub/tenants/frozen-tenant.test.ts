// A frozen tenant (over its disk budget) that raises its soft file size limit back and writes, while
// the hub's walk of the disk takes long (on a busy machine, or one with many files, walks take many
// seconds): it must be found and killed from what the free space and its limits show, not at the
// end of the walk. The walk here is a stand-in that never ends after the first one; everything else
// is real: the tenant's processes under its own uid, their limits set by prlimit as the tenant.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, describe, test } from "node:test";
import { createLogger } from "../../../servers/lib/log.js";
import { DiskBudgets, type BudgetedTenant, type DiskProbes } from "../../../hub/tenants/disk-budget.js";
import { freeOn } from "../../../hub/tenants/disk-usage.js";
import { asTenant, detectIsolation, type ProcessLimits } from "../../../hub/tenants/isolation.js";
import { until } from "../../helpers/wait.js";

const skip = process.getuid?.() === 0 ? false : "needs root: budgets hold for tenants the hub runs under their own uids";
const MIB = 1024 * 1024;
const BUDGET = 8 * MIB;
// above every uid a hub derives or a test helper picks, so no hub's sweep takes these processes
const UID = 200_000 + Math.floor(Math.random() * 100_000);

/** Writes 1 MiB files into the folder, once told to; "survived" when it wrote them all. */
const writeLoop = (dir: string) => `read go; for i in $(seq 1 64); do head -c ${MIB} /dev/zero > ${dir}/$$-$i || exit 3; sleep 0.05; done; echo survived`;

/** Alice, a tenant under her own uid (one per suite: a suite's last walk may end after it) with real processes, and the hub's budgets over her; `walk` stands in for the disk walk. */
function aliceUnder(uid: number, walk: DiskProbes["walk"], probeFree: DiskProbes["freeOn"] = freeOn) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "frozen-"));
  fs.chmodSync(root, 0o755);
  const dir = (name: string) => {
    const at = path.join(root, name);
    fs.mkdirSync(at, { mode: 0o700 });
    fs.chownSync(at, uid, uid);
    return at;
  };
  const identity: ProcessLimits = {
    uid,
    gid: uid,
    processes: 256,
    memoryBytes: 1024 * MIB,
    disk: { budgetBytes: BUDGET, frozen: false, locked: false },
    sharedMemoryBytes: MIB,
  };
  const tenant: BudgetedTenant = {
    name: "alice",
    identity,
    workspace: dir("workspace"),
    home: dir("home"),
    tmp: dir("tmp"),
    diskStatus: path.join(root, "disk.json"),
    children: [],
  };
  const isolation = detectIsolation();
  const running: ChildProcess[] = [];
  const asAlice = (script: string) => {
    const { command, args } = asTenant(isolation, identity, "bash", ["-c", script]);
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
    running.push(child);
    const lines = createInterface({ input: child.stdout! });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; said: string[] }>((resolve) => {
      const said: string[] = [];
      lines.on("line", (line) => said.push(line));
      child.once("close", (code, signal) => resolve({ code, signal, said }));
    });
    const said = (line: string) => new Promise<void>((resolve) => lines.on("line", (l) => l === line && resolve()));
    // the hub may kill a raiser before the test tells it to write (another test's writes moved the
    // free space, and the hub read the limits): a write to its closed stdin is no failure
    child.stdin!.on("error", () => undefined);
    return { child, exit, said, tell: () => child.stdin!.write("go\n") };
  };
  const logged: string[] = [];
  const log = createLogger({}, { write: (line) => void logged.push(line) });
  const budgets = new DiskBudgets([tenant], log, (t, command, args) => asTenant(isolation, t.identity!, command, args), { walk, freeOn: probeFree });
  const cleanup = () => {
    budgets.stop();
    for (const child of running) child.kill("SIGKILL");
    fs.rmSync(root, { recursive: true, force: true });
  };
  return { tenant, identity, asAlice, budgets, logged, cleanup };
}

const ticksSinceBoot = () => Math.floor(Number(fs.readFileSync("/proc/uptime", "latin1").split(" ")[0]) * 100);
const softLimit = (pid: number) => /^Max file size\s+(\S+)\s+(\S+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, "utf8"))!.slice(1);
const spawned = (...all: { child: ChildProcess }[]) => Promise.all(all.map(({ child }) => new Promise((resolve) => child.once("spawn", resolve))));

describe("a frozen tenant raising its file size limit back", { skip }, () => {
  // the first walk finds alice over budget; every later one is still under way when the test ends
  let walks = 0;
  let endWalks: () => void = () => {};
  const stuck = new Promise<void>((resolve) => (endWalks = resolve));
  const walk: DiskProbes["walk"] = async (_roots, uids) => {
    if (walks++ > 0) await stuck;
    return { bytes: new Map(uids.map((uid) => [uid, BUDGET])), preallocated: new Map() };
  };
  const { tenant, identity, asAlice, budgets, logged, cleanup } = aliceUnder(UID, walk);

  after(() => {
    endWalks();
    cleanup();
  });

  test("is killed within the walk, alike when it ran before the freeze or started after it; a command that did not raise it lives on", async () => {
    // running before the freeze, so the first hold lowers it; it raises its limit only when told
    const early = asAlice(`read go; ulimit -S -f $(ulimit -H -f); echo raised; ${writeLoop(tenant.workspace)}`);
    const bystander = asAlice("sleep 600");
    await spawned(early, bystander);
    budgets.start();
    await budgets.measureNow();
    assert.equal(identity.disk.frozen, true);
    assert.deepEqual(softLimit(early.child.pid!), ["0", String(BUDGET)], "the freeze lowered what ran");

    // started after the freeze (the kernel's clock ticked since: a process started in the same
    // tick is given the benefit of the doubt), from the frozen limit: it raises at once
    const frozenAt = ticksSinceBoot();
    await until("a clock tick to pass", () => ticksSinceBoot() > frozenAt + 1);
    const late = asAlice(`ulimit -S -f $(ulimit -H -f); echo raised; ${writeLoop(tenant.workspace)}`);
    const raised = Promise.all([early.said("raised"), late.said("raised")]);
    early.tell();
    await raised;
    // the hub's next walk has begun and does not end
    await until("the second walk to begin", () => walks >= 2, 30_000);

    early.tell();
    late.tell();
    const [earlyEnd, lateEnd] = await Promise.all([early.exit, late.exit]);
    assert.equal(earlyEnd.signal, "SIGKILL", `the one lowered by the freeze: ${JSON.stringify(earlyEnd)}`);
    assert.equal(lateEnd.signal, "SIGKILL", `the one started after it: ${JSON.stringify(lateEnd)}`);
    assert.equal(walks, 2, "found without another walk");
    assert.equal(identity.disk.locked, true);
    assert.ok(
      logged.some((line) => line.includes("they raised their file size limit while over budget")),
      logged.join(""),
    );

    // locked: what is left of alice keeps a soft and a hard limit of 0, so it cannot raise it again
    assert.equal(bystander.child.exitCode, null, "the command that never raised its limit lives on");
    await until("the bystander's hard limit to be 0", () => softLimit(bystander.child.pid!)[1] === "0");
    assert.deepEqual(softLimit(bystander.child.pid!), ["0", "0"]);
  });
});

describe("a frozen tenant raising its file size limit back while every walk is cut short", { skip }, () => {
  // the first walk is whole and finds alice over budget; every later one is cut short (over its
  // time: a disk holding tens of millions of files) and has counted less than her budget
  let walks = 0;
  const walk: DiskProbes["walk"] = async (_roots, uids) => {
    const whole = walks++ === 0;
    return { bytes: new Map(uids.map((uid) => [uid, whole ? BUDGET : BUDGET / 2])), preallocated: new Map(), ...(whole ? {} : { partial: true }) };
  };
  // the free space never moves, so only the walks can find her
  const { identity, asAlice, budgets, cleanup } = aliceUnder(UID + 1, walk, async () => ({ bytes: 1024 * 1024 * MIB, inodes: 1_000_000 }));
  after(cleanup);

  test("is still held at those walks: killed, and the tenant locked", async () => {
    const alice = asAlice("read go; ulimit -S -f $(ulimit -H -f); echo raised; sleep 600");
    await spawned(alice);
    await budgets.measureNow();
    assert.equal(identity.disk.frozen, true);
    assert.deepEqual(softLimit(alice.child.pid!), ["0", String(BUDGET)], "the freeze lowered it");
    const raised = alice.said("raised");
    alice.tell();
    await raised;
    await budgets.measureNow();
    await budgets.measureNow();
    assert.equal(walks, 3);
    assert.equal(identity.disk.frozen, true, "a walk cut short does not thaw");
    await until("alice to be killed", () => alice.child.signalCode !== null || alice.child.exitCode !== null, 10_000);
    assert.equal(alice.child.signalCode, "SIGKILL", "killed at a walk cut short");
    assert.equal(identity.disk.locked, true);
  });
});
