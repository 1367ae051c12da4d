// Tool calls as tasks for 2025-era clients, in the 2025-11-25 experimental tasks shape, through the
// real v1 client's client.experimental.tasks: the task outlives the session that started it and is
// fetched by a new session of its tenant; another tenant's session cannot see, fetch or cancel it;
// tasks/cancel ends the call with its whole process tree; a child's question reaches the client
// that calls tasks/result, and the task goes on once it is answered; a 2026 client of the tenant
// sees the same task.
import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { processesWith } from "../../helpers/processes.js";
import { until } from "../../helpers/wait.js";
import { envelope, postModern } from "../modern/modern-client.js";
import { connectAs, endSession, newKey, rpcError, startTask, TERMINAL, textOf, untilStatus } from "./legacy-client.js";

const KEY_A = newKey("alice");
const KEY_B = newKey("bob");

describe("2025-11-25 tasks for 2025-era sessions", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      servers: ["terminal", "code"],
      extraServers: { conformance: { ...fixture("conformance-server"), prefix: "" } },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
  });
  after(() => hub?.stop());

  test("callToolStream runs terminal_exec as a task: created, polled, its result fetched with tasks/result", async () => {
    const client = await connectAs(hub, KEY_A);
    assert.deepEqual(client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    assert.equal(tools.find((t) => t.name === "terminal_exec")?.execution?.taskSupport, "optional");
    const told: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => void told.push(notification.params.status));
    const marker = `streamed-${randomInt(1e9)}`;
    const kinds: string[] = [];
    let result: CallToolResult | undefined;
    for await (const message of client.experimental.tasks.callToolStream({ name: "terminal_exec", arguments: { command: `sleep 1; echo ${marker}` } })) {
      kinds.push(message.type);
      if (message.type === "taskCreated") assert.equal(message.task.status, "working");
      if (message.type === "result") result = message.result as CallToolResult;
      if (message.type === "error") assert.fail(message.error.message);
    }
    assert.equal(kinds[0], "taskCreated", kinds.join());
    assert.ok(kinds.includes("taskStatus"), kinds.join());
    assert.match(textOf(result), new RegExp(marker));
    assert.ok(result?._meta?.[RELATED_TASK_META_KEY], "tasks/result names its task");
    // the session that started it is told of its status on its own (notifications/tasks/status)
    await until("the task's end to be told", () => told.includes("completed"));
    await client.close();
  });

  test("a task outlives its session; a new session of the tenant fetches it; bob's sessions cannot see, fetch or cancel it", async () => {
    const first = await connectAs(hub, KEY_A);
    const marker = `survived-${randomInt(1e9)}`;
    const task = await startTask(first, "terminal_exec", { command: `sleep 3; echo ${marker}` });
    assert.equal(task.ttl, 3_600_000, "the ttl that applies: the hub's");
    await endSession(first);

    const bob = await connectAs(hub, KEY_B);
    // one at a time: a refusal that arrives before the test awaits it would be an unhandled rejection
    for (const attempt of [
      () => bob.experimental.tasks.getTask(task.taskId),
      () => bob.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
      () => bob.experimental.tasks.cancelTask(task.taskId),
    ]) {
      const error = await rpcError(attempt());
      assert.equal(error.code, -32602);
      assert.match(error.message, /Unknown task/);
    }
    assert.ok(!(await bob.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === task.taskId));

    const second = await connectAs(hub, KEY_A);
    assert.ok((await second.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === task.taskId));
    const result = await second.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.match(textOf(result), new RegExp(marker));
    assert.equal((await second.experimental.tasks.getTask(task.taskId)).status, "completed");
    await Promise.all([bob.close(), second.close()]);
  });

  test("a task runs in the tenant's lasting context: the interpreter of a code_execute task is not ended with the session that started it", async () => {
    const first = await connectAs(hub, KEY_A);
    const marker = `kept-${randomInt(1e9)}`;
    const code = `await new Promise((resolve) => setTimeout(resolve, 3000)); console.log("${marker}")`;
    const task = await startTask(first, "code_execute", { language: "javascript", code });
    // the session's end reaches the code server, which ends that session's interpreters
    await endSession(first);
    const second = await connectAs(hub, KEY_A);
    const result = await second.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.equal(result.structuredContent?.status, "ok", JSON.stringify(result));
    assert.match(textOf(result), new RegExp(marker));
    await second.close();
  });

  test("tasks/cancel ends a running terminal_exec task with every process it started; a second cancel is refused", async () => {
    const client = await connectAs(hub, KEY_A);
    const mark = `${3000 + randomInt(1000)}.${randomInt(1e6)}`;
    const task = await startTask(client, "terminal_exec", { command: `sleep ${mark}1 & sleep ${mark}2; wait` });
    await until("both sleeps to run", () => processesWith(`sleep ${mark}1`).length > 0 && processesWith(`sleep ${mark}2`).length > 0);
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    assert.equal(cancelled.status, "cancelled");
    await until("no process of the task to be left", () => processesWith(`sleep ${mark}`).length === 0);
    const again = await rpcError(client.experimental.tasks.cancelTask(task.taskId));
    assert.equal(again.code, -32602);
    assert.match(again.message, /already ended \(cancelled\)/);
    const fetched = await rpcError(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
    assert.match(fetched.message, /cancelled/);
    await client.close();
  });

  test("a child's question during a task reaches the session that calls tasks/result, not the closed one that started it; the task then completes", async () => {
    const starter = await connectAs(hub, KEY_A);
    const task = await startTask(starter, "confirm_delete", { filename: "report.txt" });
    await endSession(starter);

    const answerer = await connectAs(hub, KEY_A);
    const asked: Array<{ message: string; related: unknown }> = [];
    answerer.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push({ message: String(request.params.message), related: request.params._meta?.[RELATED_TASK_META_KEY] });
      return { action: "accept", content: { confirm: true } };
    });
    assert.equal((await untilStatus(answerer, task.taskId, ["input_required", ...TERMINAL])).status, "input_required");
    const result = await answerer.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.equal(textOf(result), "Deleted report.txt");
    assert.deepEqual(asked, [{ message: "Delete report.txt?", related: { taskId: task.taskId } }]);
    await answerer.close();
  });

  test("callToolStream of a tool that asks: the question is answered on the stream and the result follows", async () => {
    const client = await connectAs(hub, KEY_A);
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
    await client.listTools();
    const seen: string[] = [];
    for await (const message of client.experimental.tasks.callToolStream({ name: "confirm_delete", arguments: { filename: "keep.txt" } })) {
      if (message.type === "error") assert.fail(message.error.message);
      seen.push(message.type === "result" ? textOf(message.result) : message.type === "taskStatus" ? message.task.status : message.type);
    }
    // a task (not a plain call): created, seen waiting for the answer, then its result
    assert.equal(seen[0], "taskCreated", seen.join());
    assert.ok(seen.includes("input_required"), seen.join());
    assert.equal(seen.at(-1), "Kept keep.txt");
    await client.close();
  });

  test("a tool error is a completed task with isError; a protocol error is a failed task whose tasks/result is that error", async () => {
    const client = await connectAs(hub, KEY_A);
    const failing = await startTask(client, "failing_job", {});
    const result = await client.experimental.tasks.getTaskResult(failing.taskId, CallToolResultSchema);
    assert.equal(result.isError, true);
    assert.equal((await client.experimental.tasks.getTask(failing.taskId)).status, "completed");
    const broken = await startTask(client, "protocol_error_job", {});
    const error = await rpcError(client.experimental.tasks.getTaskResult(broken.taskId, CallToolResultSchema));
    const failed = await client.experimental.tasks.getTask(broken.taskId);
    assert.equal(failed.status, "failed");
    // the call's own error: its code, and the message the task's status gives (the client prefixes "MCP error <code>: ")
    assert.equal(error.code, -32603);
    assert.equal(error.message, `MCP error -32603: ${failed.statusMessage}`);
    await client.close();
  });

  test("one task for the tenant whichever era asks: a 2026 client's tasks/get sees a task a 2025 session started, and the other way round", async () => {
    const client = await connectAs(hub, KEY_A);
    const task = await startTask(client, "slow_compute", { seconds: 0, label: "shared" });
    const withTasks = envelope({ "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } });
    const auth = { Authorization: `Bearer ${KEY_A}` };
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const seen = await postModern(hub, { id: 1, method: "tasks/get", params: { taskId: task.taskId, _meta: withTasks } }, { ...auth, "Mcp-Name": task.taskId });
    assert.equal(seen.json?.result?.status, "completed", seen.text);
    assert.equal(textOf(seen.json.result.result), "Computed shared after 0 s");

    const started = await postModern(hub, { id: 2, method: "tools/call", params: { name: "slow_compute", arguments: { seconds: 0 }, _meta: withTasks } }, auth);
    const modernId = String(started.json?.result?.taskId);
    assert.equal(textOf(await client.experimental.tasks.getTaskResult(modernId, CallToolResultSchema)), "Computed result after 0 s");
    await client.close();
  });
});
