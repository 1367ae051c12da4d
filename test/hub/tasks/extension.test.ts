// Tool calls run as tasks for 2026-07-28 clients (the tasks extension, io.modelcontextprotocol/tasks):
// a task outlives the request that started it and is polled by whichever client of its tenant
// comes back; another tenant's client cannot see, poll or cancel it; tasks/cancel ends the call
// with its whole process tree; a child's question during a task is answered with tasks/update.
import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { processesWith } from "../../helpers/processes.js";
import { until } from "../../helpers/wait.js";
import { envelope, type ModernReply } from "../modern/modern-client.js";
import { call, KEY_A, KEY_B, TASKS, taskRequest, TENANTS } from "./task-client.js";

function created(reply: ModernReply): string {
  assert.equal(reply.json?.result?.resultType, "task", reply.text);
  return String(reply.json?.result?.taskId);
}

async function taskOf(hub: TestHub, key: string, taskId: string): Promise<Record<string, unknown>> {
  const reply = await taskRequest(hub, key, "tasks/get", taskId);
  assert.ok(reply.json?.result, reply.text);
  return reply.json.result;
}

const until_ = (hub: TestHub, key: string, taskId: string, statuses: string[], ms = 30_000) =>
  until(
    `task ${taskId} to be ${statuses.join(" or ")}`,
    async () => {
      const task = await taskOf(hub, key, taskId);
      return statuses.includes(String(task.status)) && task;
    },
    ms,
    100,
  );

const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");

describe("2026-07-28 tool calls run as tasks", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      extraServers: { conformance: { ...fixture("conformance-server"), prefix: "" } },
      config: { tenants: TENANTS },
      env: { AGENTBOX_TASKS_PER_TENANT: "4" },
    });
  });
  after(() => hub?.stop());

  test("a terminal_exec task outlives its request and is polled to completion by a new request of the same tenant; bob cannot see it", async () => {
    const marker = `task-done-${randomInt(1e9)}`;
    const taskId = created(await call(hub, KEY_A, "terminal_exec", { command: `sleep 2; echo ${marker}` }));
    // the request that started it is over (its response was read to the end); bob's requests name the same id
    const bobs = await taskRequest(hub, KEY_B, "tasks/get", taskId);
    assert.equal(bobs.json?.error?.code, -32602, bobs.text);
    assert.match(bobs.json.error.message, /Unknown task/);
    const bobCancels = await taskRequest(hub, KEY_B, "tasks/cancel", taskId);
    assert.equal(bobCancels.json?.error?.code, -32602, bobCancels.text);
    const task = await until_(hub, KEY_A, taskId, ["completed", "failed", "cancelled"]);
    assert.equal(task.status, "completed", JSON.stringify(task));
    assert.match(textOf(task.result), new RegExp(marker));
    // the result stays for ttlMs: polling again still finds it
    assert.equal((await taskOf(hub, KEY_A, taskId)).status, "completed");
  });

  test("tasks/cancel ends a running terminal_exec task with every process it started", async () => {
    const mark = `${3000 + randomInt(1000)}.${randomInt(1e6)}`;
    const taskId = created(await call(hub, KEY_A, "terminal_exec", { command: `sleep ${mark}1 & sleep ${mark}2; wait` }));
    await until("both sleeps to run", () => processesWith(`sleep ${mark}1`).length > 0 && processesWith(`sleep ${mark}2`).length > 0);
    const ack = await taskRequest(hub, KEY_A, "tasks/cancel", taskId);
    assert.deepEqual(Object.keys(ack.json?.result ?? {}).sort(), ["_meta", "resultType"], ack.text);
    assert.equal(ack.json?.result?.resultType, "complete");
    assert.equal((await taskOf(hub, KEY_A, taskId)).status, "cancelled");
    await until("no process of the task to be left", () => processesWith(`sleep ${mark}`).length === 0);
  });

  test("a child's question during a task puts it in input_required; tasks/update answers it and the task completes", async () => {
    const taskId = created(await call(hub, KEY_A, "confirm_delete", { filename: "report.txt" }));
    const waiting = await until_(hub, KEY_A, taskId, ["input_required", "completed", "failed", "cancelled"]);
    assert.equal(waiting.status, "input_required", JSON.stringify(waiting));
    const [key, question] = Object.entries(waiting.inputRequests as Record<string, { method: string }>)[0];
    assert.equal(question.method, "elicitation/create");
    // bob cannot answer alice's question
    const bobs = await taskRequest(hub, KEY_B, "tasks/update", taskId, { inputResponses: { [key]: { action: "accept", content: { confirm: true } } } });
    assert.equal(bobs.json?.error?.code, -32602, bobs.text);
    assert.equal((await taskOf(hub, KEY_A, taskId)).status, "input_required");
    const ack = await taskRequest(hub, KEY_A, "tasks/update", taskId, { inputResponses: { [key]: { action: "accept", content: { confirm: true } } } });
    assert.equal(ack.json?.result?.resultType, "complete", ack.text);
    const done = await until_(hub, KEY_A, taskId, ["completed", "failed", "cancelled"]);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(textOf(done.result), "Deleted report.txt");
  });

  test("without the extension: a task-capable tool runs as before, a required one and tasks/* are refused with -32021 naming it", async () => {
    const plain = envelope();
    const sync = await call(hub, KEY_A, "slow_compute", { seconds: 0 }, plain);
    assert.equal(sync.json?.result?.resultType, "complete", sync.text);
    const required = await call(hub, KEY_A, "failing_job", {}, plain);
    assert.equal(required.res.status, 400);
    assert.equal(required.json?.error?.code, -32021, required.text);
    assert.deepEqual(required.json.error.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
    const get = await taskRequest(hub, KEY_A, "tasks/get", "anything", {}, plain);
    assert.equal(get.json?.error?.code, -32021, get.text);
  });

  test("a tenant holds at most AGENTBOX_TASKS_PER_TENANT tasks: ended ones make room, oldest first; then the next is refused with what to do", async () => {
    const quick = created(await call(hub, KEY_A, "slow_compute", { seconds: 0 }));
    await until_(hub, KEY_A, quick, ["completed"]);
    const running: string[] = [];
    // the cap is 4: four running tasks push out every ended one (the earlier tests' and `quick`)
    for (let i = 0; i < 4; i++) running.push(created(await call(hub, KEY_A, "slow_compute", { seconds: 30 })));
    const gone = await taskRequest(hub, KEY_A, "tasks/get", quick);
    assert.equal(gone.json?.error?.code, -32602, gone.text);
    const refused = await call(hub, KEY_A, "slow_compute", { seconds: 30 });
    assert.equal(refused.json?.error?.code, -32600, refused.text);
    assert.match(refused.json.error.message, /4 tasks running.*AGENTBOX_TASKS_PER_TENANT.*tasks\/cancel/s);
    for (const taskId of running) assert.equal((await taskOf(hub, KEY_A, taskId)).status, "working");
    // another tenant's cap is its own
    created(await call(hub, KEY_B, "slow_compute", { seconds: 0 }));
    for (const taskId of running) await taskRequest(hub, KEY_A, "tasks/cancel", taskId);
    created(await call(hub, KEY_A, "slow_compute", { seconds: 0 }));
  });
});

describe("the results a tenant's ended tasks keep", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      config: { tenants: TENANTS },
      env: { AGENTBOX_TASK_RESULTS_MIB: "1" },
    });
  });
  after(() => hub?.stop());

  test("stay within AGENTBOX_TASK_RESULTS_MIB: results nobody fetched make room, the oldest first, another tenant's untouched", async () => {
    // ~600 KB of output each: two of them are more than the tenant's 1 MiB
    const big = (n: number) => `head -c 600000 /dev/zero | tr '\\0' ${n}; echo`;
    const bobs = created(await call(hub, KEY_B, "terminal_exec", { command: big(7) }));
    const first = created(await call(hub, KEY_A, "terminal_exec", { command: big(1) }));
    assert.equal((await until_(hub, KEY_A, first, ["completed", "failed"])).status, "completed");
    const second = created(await call(hub, KEY_A, "terminal_exec", { command: big(2) }));
    const kept = await until_(hub, KEY_A, second, ["completed", "failed"]);
    assert.equal(kept.status, "completed");
    assert.match(textOf(kept.result), /2222222222/);
    const dropped = await taskRequest(hub, KEY_A, "tasks/get", first);
    assert.equal(dropped.json?.error?.code, -32602, dropped.text);
    assert.match(dropped.json.error.message, /Unknown task/);
    assert.match(textOf((await until_(hub, KEY_B, bobs, ["completed", "failed"])).result), /7777777777/);
  });
});
