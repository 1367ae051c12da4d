// Tasks (the tasks extension) of 2026-07-28 clients through real nginx with the shipped config
// (deploy/nginx) and two real hubs: a task id names its replica, and tasks/get|update|cancel
// (Mcp-Name: <taskId>) go there whatever the client's key hashes to; a task whose replica is gone
// or restarted is reported lost in words, with what to do; a draining replica keeps answering its
// tasks' polls while refusing new tasks, and a task that outlives the drain reads failed, saying
// the replica shut down, with its processes ended.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomInt, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { startHub, type TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { auth, endpoint, replicasBehindNginx, rootWith } from "./router.js";
import { callAsTask, created, taskRequest, textOf, untilStatus } from "./task-requests.js";

const NAMES = ["r1", "r2"];
/** Tasks still running 8 s into the drain are failed (its last fifth is kept for polls to read why). */
const DRAIN_MS = 10_000;
const exec = (target: TestHub, key: string, command: string) => callAsTask(target, key, "terminal_exec", { command });

/** Whether a process whose command line holds `marker` runs (whoever runs it). */
function running(marker: string): boolean {
  try {
    execFileSync("pgrep", ["-f", marker], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("tasks over two replicas behind nginx (deploy/nginx)", () => {
  const start = (name: string, port?: number) =>
    startHub({ servers: ["terminal"], port, env: { AGENTBOX_REPLICA: name, AGENTBOX_DRAIN_MS: String(DRAIN_MS) } });
  const replicas = replicasBehindNginx(NAMES, (name) => start(name));
  const { hubs } = replicas;

  it("polls a task through the router with a key that hashes to the other replica, and reaches the task's replica", async () => {
    for (const [holder, key] of replicas.keyOn) {
      const marker = `on-${holder}-${randomInt(1e9)}`;
      const taskId = created(await exec(endpoint(replicas.router.origin), key, `sleep 1; echo ${marker}`));
      assert.match(taskId, new RegExp(`^${holder}\\.[0-9a-f]{16}\\.[0-9a-f-]{36}$`), "a task id names its replica");
      const [other, otherKey] = [...replicas.keyOn].find(([name]) => name !== holder)!;
      // the other key's plain request is the other replica's; its tasks/get of this task is the holder's
      const task = await untilStatus(endpoint(replicas.router.origin), otherKey, taskId, ["completed", "failed", "cancelled"]);
      assert.equal(task.status, "completed", JSON.stringify(task));
      assert.match(textOf(task.result), new RegExp(marker));
      // straight to the other replica, the same request is told where the task lives, not just "unknown"
      const wrong = await taskRequest(hubs.get(other)!, otherKey, "tasks/get", taskId);
      assert.equal(wrong.json?.error?.code, -32602, wrong.text);
      assert.match(wrong.json!.error!.message, new RegExp(`held by replica '${holder}', but this request reached replica '${other}'`));
      assert.match(wrong.json!.error!.message, /Its work is lost: start the call again/);
    }
  });

  it("routes by Mcp-Name only for tasks/get|update|cancel, and answers a task id naming no known replica with what to do", async () => {
    for (const [keyReplica, key] of replicas.keyOn) {
      for (const named of NAMES) {
        for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
          const reached = await rootWith(replicas.router.origin, { ...auth(key), "Mcp-Method": method, "Mcp-Name": `${named}.${randomUUID()}` });
          assert.equal(reached.body.replica, named, `${method}: key of ${keyReplica}, task of ${named}`);
        }
        // a tool's name is no task id: the key's hash decides
        const tool = await rootWith(replicas.router.origin, { ...auth(key), "Mcp-Method": "tools/call", "Mcp-Name": `${named}.tool` });
        assert.equal(tool.body.replica, keyReplica);
      }
    }
    for (const taskId of [`r9.${randomUUID()}`, "agentbox_any.x", "127.0.0.1:22.x", "R1.x", "no-dot-at-all"]) {
      const lost = await taskRequest(endpoint(replicas.router.origin), "anyone", "tasks/get", taskId);
      assert.equal(lost.res.status, 404, `${taskId}: ${lost.text}`);
      assert.equal(lost.json?.error?.code, -32602, taskId);
      assert.match(lost.json?.error?.message ?? "", /^Task lost: .*its work is lost\. Start the call again/, taskId);
    }
  });

  it("a draining replica answers its tasks' polls and refuses new tasks; a task outliving the drain reads failed, its processes ended; then it is lost", async () => {
    const victim = NAMES[1];
    const [survivor, survivorKey] = [...replicas.keyOn].find(([name]) => name !== victim)!;
    const key = replicas.keyOn.get(victim)!;
    const hub = hubs.get(victim)!;
    const mark = `${5000 + randomInt(1000)}.${randomInt(1e6)}`;
    const long = created(await exec(endpoint(replicas.router.origin), key, `sleep ${mark}; echo never`));
    const short = created(await exec(endpoint(replicas.router.origin), key, `sleep 3; echo short-${mark}`));
    assert.ok(long.startsWith(`${victim}.`) && short.startsWith(`${victim}.`), `${long} ${short}`);
    await until("the long task's sleep to run", () => running(`sleep ${mark}`));

    const exited = new Promise<number | null>((r) => hub.process.once("exit", (code) => r(code)));
    hub.process.kill("SIGTERM");
    await until("the replica to drain", async () => {
      const ready = await fetch(`${hub.origin}/readyz`);
      await ready.body?.cancel();
      return ready.status === 503;
    });

    // polls reach it, through the router by the task id, whatever the key
    assert.equal((await untilStatus(endpoint(replicas.router.origin), survivorKey, long, ["working"])).status, "working");
    // a new task straight to it is refused, so the router sends it on
    const refused = await exec(hub, key, "echo new");
    assert.equal(refused.res.status, 503, refused.text);
    assert.match(refused.json?.error?.message ?? "", new RegExp(`Replica '${victim}' is draining`));
    const moved = created(await exec(endpoint(replicas.router.origin), key, "echo moved"));
    assert.ok(moved.startsWith(`${survivor}.`), moved);
    // a new call dressed as a poll of one of its tasks (the headers say tasks/get, the body is a tools/call) is no pass either
    const disguised = await callAsTask(hub, key, "terminal_exec", { command: "echo sneaked" }, { "Mcp-Method": "tasks/get", "Mcp-Name": long });
    assert.ok([400, 503].includes(disguised.res.status), `${disguised.res.status} ${disguised.text}`);
    assert.doesNotMatch(disguised.text, /"resultType":"task"/);
    // a task of another replica is no pass through its drain
    assert.equal((await taskRequest(hub, key, "tasks/get", moved)).res.status, 503);

    // the short task finishes within the drain; the long one is failed at its deadline, saying why
    const finished = await untilStatus(endpoint(replicas.router.origin), key, short, ["completed", "failed", "cancelled"]);
    assert.equal(finished.status, "completed", JSON.stringify(finished));
    assert.match(textOf(finished.result), new RegExp(`short-${mark}`));
    const failed = await untilStatus(endpoint(replicas.router.origin), key, long, ["completed", "failed", "cancelled"], DRAIN_MS + 5_000);
    assert.equal(failed.status, "failed", JSON.stringify(failed));
    const error = failed.error as { code: number; message: string };
    assert.match(error.message, new RegExp(`^Replica '${victim}' shut down .* before this task ended; its call was cancelled and its work is lost\\. Start the call again`));
    await until("the long task's processes to end", () => !running(`sleep ${mark}`));
    assert.equal(await exited, 0);

    // its replica gone, the router says the task is lost with it
    const gone = await taskRequest(endpoint(replicas.router.origin), survivorKey, "tasks/get", long);
    assert.equal(gone.res.status, 404, gone.text);
    assert.match(gone.json?.error?.message ?? "", new RegExp(`^Task lost: replica ${victim}, which held this task, is unreachable .*Start the call again`));

    // back under the same name (and address), the replica says it restarted since
    const restarted = await start(victim, Number(new URL(hub.origin).port));
    hubs.set(victim, restarted);
    const forgotten = await taskRequest(endpoint(replicas.router.origin), survivorKey, "tasks/get", long);
    assert.equal(forgotten.json?.error?.code, -32602, forgotten.text);
    assert.match(forgotten.json!.error!.message, new RegExp(`held by replica '${victim}' before it restarted, and was lost with the restart\\. Its work is lost: start the call again`));
  });
});
