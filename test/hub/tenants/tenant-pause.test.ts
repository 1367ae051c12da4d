// While the hub removes what a tenant holds beyond its share, the tenant's processes are stopped
// (hub/tenants/tenant-pause.ts): none of them can race the remover or lower its limits. Parents stop
// before their children and resume after them, so a shell never sees its foreground job stop.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { test } from "node:test";
import { readProc, type ProcOwner } from "../../../servers/lib/proc-table.js";
import { parentsFirst, whileStopped } from "../../../hub/tenants/tenant-pause.js";
import { until } from "../../helpers/wait.js";

const asRoot = process.getuid?.() === 0;
const owner = (pid: number, ppid: number): ProcOwner => ({ pid, ppid, state: "S", uid: 1 });

test("parents come before their children, however the table lists them and however deep it goes", () => {
  const listed = [owner(30, 20), owner(5, 1), owner(20, 10), owner(10, 5), owner(40, 5), owner(7, 99)];
  const order = parentsFirst(listed).map((p) => p.pid);
  const before = (a: number, b: number) => order.indexOf(a) < order.indexOf(b);
  assert.ok(before(5, 10) && before(10, 20) && before(20, 30) && before(5, 40), order.join(" "));
  assert.equal(order.length, listed.length);
  // a chain of 100,000 (no recursion to run out of stack), listed leaf first
  const chain = Array.from({ length: 100_000 }, (_, i) => owner(i + 2, i + 1)).reverse();
  const sorted = parentsFirst(chain);
  assert.equal(sorted[0].pid, 2);
  assert.equal(sorted.at(-1)!.pid, 100_001);
  // pids reused while the table was read can make a loop: still every process, once
  assert.equal(parentsFirst([owner(3, 4), owner(4, 3)]).length, 2);
});

test(
  "a tenant's processes are stopped while the work runs and resumed after it; one it had stopped itself stays so",
  { skip: asRoot ? false : "needs root: a uid of the test's own" },
  async (t) => {
    const uid = 63_000 + (process.pid % 1000);
    // a shell with a child that keeps running, and one more process the tenant stopped itself
    const tree = spawn("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "sh", "-c", "sleep 600 & sleep 600 & kill -STOP $!; wait"], {
      stdio: "ignore",
    });
    t.after(() => void spawnSync("pkill", ["-KILL", "-u", String(uid)]));
    const stateOf = (pid: number) => readProc(pid)?.state;
    const pidsOf = () =>
      spawnSync("pgrep", ["-u", String(uid)], { encoding: "utf8" })
        .stdout.split("\n")
        .filter(Boolean)
        .map(Number);
    const pids = await until("the shell and both sleeps", () => {
      const found = pidsOf();
      return found.length === 3 && found.some((pid) => stateOf(pid) === "T") ? found : undefined;
    });
    const selfStopped = pids.find((pid) => stateOf(pid) === "T")!;
    const running = pids.filter((pid) => pid !== selfStopped);
    const during = await whileStopped(uid, async () => running.map(stateOf));
    assert.deepEqual(during, ["T", "T"]);
    assert.ok(
      running.every((pid) => stateOf(pid) !== "T"),
      "resumed",
    );
    assert.equal(stateOf(selfStopped), "T", "what the tenant stopped itself is left stopped");
    assert.equal(tree.exitCode, null, "the shell runs on");
  },
);
