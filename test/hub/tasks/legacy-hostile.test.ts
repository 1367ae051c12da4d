// What a hostile or careless 2025-era client gets from the 2025-11-25 tasks: params.task for a tool
// that never runs as a task, for an unknown tool, with a nonsense or huge ttl; made-up task ids and
// cursors; more tasks than its tenant may hold; a task-only tool called plainly; a question for a
// client that cannot answer it. Each is a clear error (or the documented answer) and the hub keeps
// serving. A client that does not do tasks gets plain calls, whatever path its call takes.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { connectAs, endSession, newKey, rpcError, startTask, TERMINAL, textOf, untilStatus } from "./legacy-client.js";

const KEY = newKey("mallory");
const TTL_SECONDS = 120;
const PER_TENANT = 3;

describe("2025-11-25 tasks refuse what they cannot do, clearly", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      extraServers: { conformance: { ...fixture("conformance-server"), prefix: "" } },
      config: { tenants: { mallory: { apiKey: KEY } } },
      env: { AGENTBOX_TASK_TTL_SECONDS: String(TTL_SECONDS), AGENTBOX_TASKS_PER_TENANT: String(PER_TENANT) },
    });
  });
  after(() => hub?.stop());

  test("params.task for a tool that never runs as a task, an unknown tool, or with a nonsense ttl is refused; a huge ttl gets the hub's", async () => {
    const client = await connectAs(hub, KEY);
    const forbidden = await rpcError(startTask(client, "greet", { name: "x" }));
    assert.equal(forbidden.code, -32601);
    assert.match(forbidden.message, /'greet' does not run as a task .* call it without params\.task/);
    const unknown = await rpcError(startTask(client, "no_such_tool", {}));
    assert.equal(unknown.code, -32602);
    assert.match(unknown.message, /Unknown tool 'no_such_tool'/);
    const negative = await rpcError(startTask(client, "slow_compute", { seconds: 0 }, { ttl: -1 }));
    assert.equal(negative.code, -32602);
    assert.match(negative.message, /params\.task\.ttl must be a number of milliseconds, 0 or more/);
    const text = await rpcError(startTask(client, "slow_compute", { seconds: 0 }, { ttl: "forever" }));
    assert.equal(text.code, -32602);
    assert.match(text.message, /Invalid tools\/call request: .*"task",\s*"ttl"/s);
    // the spec lets the receiver override the ttl asked for; the answer carries the one that applies
    const huge = await startTask(client, "slow_compute", { seconds: 0 }, { ttl: 1e300 });
    assert.equal(huge.ttl, TTL_SECONDS * 1000);
    assert.equal((await untilStatus(client, huge.taskId, TERMINAL)).status, "completed");
    await client.close();
  });

  test("made-up task ids and cursors are clear errors", async () => {
    const client = await connectAs(hub, KEY);
    // one at a time: a refusal that arrives before its promise is awaited would be an unhandled rejection
    for (const attempt of [
      () => client.experimental.tasks.getTask("made-up"),
      () => client.experimental.tasks.getTaskResult("made-up", CallToolResultSchema),
      () => client.experimental.tasks.cancelTask("made-up"),
    ]) {
      const error = await rpcError(attempt());
      assert.equal(error.code, -32602);
      assert.match(error.message, /Unknown task: no task "made-up" here/);
    }
    const numeric = await rpcError(client.request({ method: "tasks/get", params: { taskId: 7 } } as never, CreateTaskResultSchema));
    assert.equal(numeric.code, -32602);
    assert.match(numeric.message, /Invalid tasks\/get request/);
    const cursor = await rpcError(client.experimental.tasks.listTasks("../../etc"));
    assert.equal(cursor.code, -32602);
    assert.match(cursor.message, /Invalid cursor/);
    await client.close();
  });

  test("a tenant holding as many running tasks as it may is refused the next; cancelling one makes room", async () => {
    const client = await connectAs(hub, KEY);
    const running = [];
    for (let i = 0; i < PER_TENANT; i++) running.push(await startTask(client, "slow_compute", { seconds: 60 }));
    const refused = await rpcError(startTask(client, "slow_compute", { seconds: 60 }));
    assert.match(refused.message, new RegExp(`${PER_TENANT} tasks running, the most it may \\(AGENTBOX_TASKS_PER_TENANT\\)`));
    await client.experimental.tasks.cancelTask(running[0].taskId);
    running.push(await startTask(client, "slow_compute", { seconds: 60 }));
    for (const task of running.slice(1)) await client.experimental.tasks.cancelTask(task.taskId);
    await client.close();
  });

  test("a task-only tool: a client that does tasks must call it as one; a client that does not gets a plain call", async () => {
    const tasker = await connectAs(hub, KEY);
    const plainCall = { method: "tools/call" as const, params: { name: "failing_job", arguments: {} } };
    const refused = await rpcError(tasker.request(plainCall, CallToolResultSchema));
    assert.equal(refused.code, -32601);
    assert.match(refused.message, /'failing_job' runs only as a task .* call it with params\.task/);
    await tasker.close();

    const plain = await connectAs(hub, KEY, {});
    const result = (await plain.request(plainCall, CallToolResultSchema)) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(textOf(result), /The job failed/);
    const exec = (await plain.request(
      { method: "tools/call", params: { name: "terminal_exec", arguments: { command: "echo plain" } } },
      CallToolResultSchema,
    )) as CallToolResult;
    assert.match(textOf(exec), /plain/);
    // asked for a task all the same (the server advertised them), it gets one: its call does not take the hub's direct path
    const task = await startTask(plain, "slow_compute", { seconds: 0, label: "asked" });
    assert.equal(textOf(await plain.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)), "Computed asked after 0 s");
    await plain.close();
  });

  test("a question reaches only a client that can answer it: tasks/result of one that cannot is refused and the task keeps waiting", async () => {
    const starter = await connectAs(hub, KEY);
    const task = await startTask(starter, "confirm_delete", { filename: "a.txt" });
    await untilStatus(starter, task.taskId, ["input_required"]);
    await endSession(starter);
    const mute = await connectAs(hub, KEY, { tasks: { list: {}, cancel: {} } });
    const refused = await rpcError(mute.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
    assert.equal(refused.code, -32600);
    assert.match(refused.message, /waits for an answer to elicitation\/create, which needs the elicitation capability/);
    assert.equal((await mute.experimental.tasks.getTask(task.taskId)).status, "input_required");
    await mute.experimental.tasks.cancelTask(task.taskId);

    // started by a client that cannot be asked at all, the task fails saying why
    const unasked = await startTask(mute, "confirm_delete", { filename: "b.txt" });
    const failed = await untilStatus(mute, unasked.taskId, TERMINAL);
    assert.equal(failed.status, "failed");
    assert.match(String(failed.statusMessage), /elicitation/);
    await mute.close();
  });
});
