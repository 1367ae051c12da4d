// How a tools/call becomes a task, and what a task shows while it runs (the tasks extension,
// io.modelcontextprotocol/tasks, for 2026-07-28 clients). A tool that runs only as a task is called
// the way a plain call is first: what it asks at once is asked on the request itself
// (input_required, answered by a retry), and the round that leaves it nothing to ask answers with
// the task, which holds the same call (the answer reaches the result). A tool that asks nothing
// becomes a task on its first round. A child's progress while a task runs is the task's
// statusMessage (notifications/progress is not sent on tasks), capped, whatever the child sends.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { envelope, type ModernReply } from "../modern/modern-client.js";
import { call, KEY_A, KEY_B, taskRequest, TENANTS, withTasks } from "./task-client.js";

async function taskOf(hub: TestHub, key: string, taskId: string): Promise<Record<string, unknown>> {
  const reply = await taskRequest(hub, key, "tasks/get", taskId);
  assert.ok(reply.json?.result, reply.text);
  return reply.json.result;
}

const resultOf = (reply: ModernReply) => {
  assert.ok(reply.json?.result, reply.text);
  return reply.json.result;
};
/** A hub of alice's and bob's whose child is the rounds fixture, its tools unprefixed. */
const roundsHub = (env: Record<string, string> = {}) =>
  startHub({ extraServers: { rounds: { ...fixture("task-rounds-server"), prefix: "" } }, config: { tenants: TENANTS }, env });
const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");

describe("2026-07-28 calls that become tasks: the rounds before, the progress during", () => {
  let hub: TestHub;

  before(async () => {
    hub = await roundsHub();
  });
  after(() => hub?.stop());

  test("a task-only tool that asks at once asks on the request (input_required, no task), and the round that answers gets the task, whose result has the answer", async () => {
    const first = resultOf(await call(hub, KEY_A, "ask_then_work", {}));
    assert.equal(first.resultType, "input_required", JSON.stringify(first));
    assert.ok(!("taskId" in first), "no task before the questions are settled");
    const [key, question] = Object.entries(first.inputRequests as Record<string, { method: string }>)[0];
    assert.equal(question.method, "elicitation/create");
    const answers = { inputResponses: { [key]: { action: "accept", content: { name: "Alice" } } }, requestState: first.requestState };

    // bob's client replays alice's state with its own answer: refused, and no task of bob's holds alice's call
    const bobs = await call(hub, KEY_B, "ask_then_work", {}, withTasks, {
      ...answers,
      inputResponses: { [key]: { action: "accept", content: { name: "Mallory" } } },
    });
    assert.equal(bobs.json?.error?.code, -32602, bobs.text);

    const second = resultOf(await call(hub, KEY_A, "ask_then_work", {}, withTasks, answers));
    assert.equal(second.resultType, "task", JSON.stringify(second));
    assert.ok(!("requestState" in second) && !("inputRequests" in second), JSON.stringify(second));
    const taskId = String(second.taskId);
    const done = await until("the task to end", async () => {
      const task = await taskOf(hub, KEY_A, taskId);
      return ["completed", "failed", "cancelled"].includes(String(task.status)) && task;
    });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(textOf(done.result), "Worked for Alice");

    // the state of the round that became the task names nothing any more: a replay starts no second task
    const replay = await call(hub, KEY_A, "ask_then_work", {}, withTasks, answers);
    assert.equal(replay.json?.error?.code, -32602, replay.text);
    // and bob cannot see alice's task
    assert.equal((await taskRequest(hub, KEY_B, "tasks/get", taskId)).json?.error?.code, -32602);
  });

  test("a task-only tool that asks nothing becomes a task on its first round, and shows its progress as the task's statusMessage", async () => {
    // progress reported before the call is a task goes with the request's round (as a plain call's): this tool reports well after
    const meta = { ...withTasks, progressToken: "p-1" };
    const first = resultOf(await call(hub, KEY_A, "work_quietly", { delayMs: 3000, messages: ["compiling", "linking"], holdMs: 60_000 }, meta));
    assert.equal(first.resultType, "task", JSON.stringify(first));
    const taskId = String(first.taskId);
    const working = await until("the latest progress to show", async () => {
      const task = await taskOf(hub, KEY_A, taskId);
      return task.statusMessage === "linking" && task;
    });
    assert.equal(working.status, "working");
    await taskRequest(hub, KEY_A, "tasks/cancel", taskId);
    const cancelled = await taskOf(hub, KEY_A, taskId);
    assert.equal(cancelled.status, "cancelled");
    assert.match(String(cancelled.statusMessage), /tasks\/cancel/);
  });

  test("a child's progress is kept as the task's statusMessage, cut to a status line however long the child makes it; numbers without a message show as numbers", async () => {
    const flood = "x".repeat(200_000);
    const taskId = String(resultOf(await call(hub, KEY_A, "report_progress", { messages: ["starting", flood], holdMs: 60_000 })).taskId);
    const long = await until("the long progress to show", async () => {
      const task = await taskOf(hub, KEY_A, taskId);
      return String(task.statusMessage ?? "").startsWith("xxx") && task;
    });
    assert.ok(String(long.statusMessage).length <= 500, `statusMessage of ${String(long.statusMessage).length} characters`);
    assert.equal(long.status, "working");
    await taskRequest(hub, KEY_A, "tasks/cancel", taskId);

    const numbered = String(resultOf(await call(hub, KEY_A, "report_progress", { messages: ["", ""], holdMs: 60_000 })).taskId);
    await until("the numbers to show", async () => (await taskOf(hub, KEY_A, numbered)).statusMessage === "2 of 2");
    await taskRequest(hub, KEY_A, "tasks/cancel", numbered);
  });
});

describe("2026-07-28 task-only calls at a tenant's task cap", () => {
  let hub: TestHub;

  before(async () => {
    hub = await roundsHub({ AGENTBOX_TASKS_PER_TENANT: "1" });
  });
  after(() => hub?.stop());

  test("a tenant whose tasks all run gets an error on the round that would make one, its call is ended, and its state names nothing after", async () => {
    const running = String(resultOf(await call(hub, KEY_A, "report_progress", { holdMs: 60_000 })).taskId);
    const first = resultOf(await call(hub, KEY_A, "ask_then_work", { holdMs: 60_000 }));
    assert.equal(first.resultType, "input_required", JSON.stringify(first));
    const [key] = Object.keys(first.inputRequests as Record<string, unknown>);
    const answers = { inputResponses: { [key]: { action: "accept", content: { name: "Alice" } } }, requestState: first.requestState };
    const refused = await call(hub, KEY_A, "ask_then_work", { holdMs: 60_000 }, withTasks, answers);
    assert.equal(refused.json?.error?.code, -32600, refused.text);
    assert.match(refused.json.error.message, /AGENTBOX_TASKS_PER_TENANT/);
    // the refused call was ended, not left running unheard (its child was told to stop), and its state reaches nothing
    const plain = envelope();
    await until("the refused call's work to be cancelled", async () => textOf(resultOf(await call(hub, KEY_A, "cancelled_work", {}, plain))) === "1");
    const again = await call(hub, KEY_A, "ask_then_work", { holdMs: 60_000 }, withTasks, answers);
    assert.equal(again.json?.error?.code, -32602, again.text);
    // the running task is untouched, and bob (a tenant of his own) is not held back by alice's cap
    assert.equal((await taskOf(hub, KEY_A, running)).status, "working");
    assert.equal(resultOf(await call(hub, KEY_B, "ask_then_work", {})).resultType, "input_required");
    await taskRequest(hub, KEY_A, "tasks/cancel", running);
  });
});
