// Rate limits and tasks: a tool call started as a task spends the tool's budget once, however often
// its task is polled; polling (tasks/get and the other tasks/* requests) is bounded by a method
// limit of its own, so a client spinning on tasks/get is refused with when to retry.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { startHub, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { envelope, postModern, type ModernReply } from "../modern/modern-client.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const withTasks = envelope({ "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } });
const tenants = { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } };

let nextId = 1;
const exec = (hub: TestHub, key: string, command: string) =>
  postModern(hub, { id: nextId++, method: "tools/call", params: { name: "terminal_exec", arguments: { command }, _meta: withTasks } }, auth(key));
const tasksGet = (hub: TestHub, key: string, taskId: string) =>
  postModern(hub, { id: nextId++, method: "tasks/get", params: { taskId, _meta: withTasks } }, { ...auth(key), "Mcp-Name": taskId });

function created(reply: ModernReply): string {
  assert.equal(reply.json?.result?.resultType, "task", reply.text);
  return String(reply.json?.result?.taskId);
}

const ended = (hub: TestHub, key: string, taskId: string) =>
  until(`task ${taskId} to end`, async () => {
    const task = (await tasksGet(hub, key, taskId)).json?.result;
    return task && task.status !== "working" && task;
  });

const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");

describe("a tool call as a task spends its tool's rate limit once", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: ["terminal"], config: tenants, env: { AGENTBOX_RATE_LIMITS: JSON.stringify({ tools: { terminal_exec: "2/min" } }) } });
  });
  after(() => hub?.stop());

  test("two tasks fit a budget of two however often they are polled; the third is refused as rate-limited", async () => {
    for (const n of [1, 2]) {
      const taskId = created(await exec(hub, KEY_A, `echo run-${n}`));
      const task = await ended(hub, KEY_A, taskId);
      // polled a few more times: polling is not a tool call
      for (let i = 0; i < 5; i++) assert.equal((await tasksGet(hub, KEY_A, taskId)).json?.result?.status, "completed");
      assert.equal(task.status, "completed");
      assert.match(textOf(task.result), new RegExp(`run-${n}`));
      assert.notEqual((task.result as { isError?: boolean }).isError, true, JSON.stringify(task));
    }
    const third = await ended(hub, KEY_A, created(await exec(hub, KEY_A, "echo run-3")));
    assert.equal((third.result as { isError?: boolean }).isError, true, JSON.stringify(third));
    assert.match(textOf(third.result), /Rate limit for terminal_exec reached \(terminal_exec 2\/min\); retry in \d+ s/);
    // another tenant's budget is its own
    const bobs = await ended(hub, KEY_B, created(await exec(hub, KEY_B, "echo bobs")));
    assert.match(textOf(bobs.result), /bobs/);
  });
});

describe("polling tasks is bounded by its own method limit", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: ["terminal"], config: tenants, env: { AGENTBOX_RATE_LIMITS: JSON.stringify({ methods: { "tasks/*": "5/min" } }) } });
  });
  after(() => hub?.stop());

  test("a client spinning on tasks/get is refused with 429, -32029 and when to retry; tool calls and another tenant go on", async () => {
    const taskId = created(await exec(hub, KEY_A, "sleep 30"));
    for (let i = 0; i < 5; i++) assert.equal((await tasksGet(hub, KEY_A, taskId)).json?.result?.status, "working");
    const refused = await tasksGet(hub, KEY_A, taskId);
    assert.equal(refused.res.status, 429, refused.text);
    assert.ok(Number(refused.res.headers.get("retry-after")) >= 1, refused.text);
    assert.equal(refused.json?.error?.code, -32029, refused.text);
    assert.match(refused.json.error.message, /Rate limit for tasks\/get reached \(tasks\/\* 5\/min\); retry in \d+ s/);
    assert.ok(Number((refused.json.error.data as { retryAfterMs?: number }).retryAfterMs) > 0, refused.text);
    // the task itself is untouched, a new call is still served, and bob polls on his own budget
    created(await exec(hub, KEY_A, "true"));
    const bobs = created(await exec(hub, KEY_B, "echo bobs"));
    assert.ok((await tasksGet(hub, KEY_B, bobs)).json?.result, "bob's poll is answered");
    const cancel = await postModern(
      hub,
      { id: nextId++, method: "tasks/cancel", params: { taskId, _meta: withTasks } },
      { ...auth(KEY_A), "Mcp-Name": taskId },
    );
    assert.equal(cancel.json?.result?.resultType, "complete", cancel.text);
  });
});
