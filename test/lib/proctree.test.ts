// killTree by pid with a grace (how the hub stops a child): a root that ignores SIGTERM, and
// children that outlive a root which obeys it and so are no longer below it, all end up dead.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { after, describe, test } from "node:test";
import { descendantsOf, isAlive, killTree, readProc } from "../../servers/lib/proctree.js";
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
