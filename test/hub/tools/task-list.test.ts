// A tenant's tasks are visible and stoppable from the hub's own tools: hub_sessions lists the
// caller's tenant's tasks (id, tool, status, times, ttl, and what an input_required one waits for),
// paged by the same offset and limit as its sessions, and never another tenant's; hub_cancel_task
// ends one of them, from a 2025 client too (which cannot send tasks/cancel), and another tenant's
// id is as unknown to it as a made-up one.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { getTask, startTask as start } from "../modern/modern-client.js";
import type { TaskEntry } from "../../../hub/tools/task-list.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Listing {
  tenantSessions: unknown[];
  tenantTasks: TaskEntry[];
  tasksTotal: number;
  offset: number;
  nextOffset: number | null;
}

const startTask = (hub: TestHub, key: string, name: string, args: Record<string, unknown>) => start(hub, auth(key), name, args);
const taskGet = async (hub: TestHub, key: string, taskId: string) => ({ result: await getTask(hub, auth(key), taskId) });

const listing = async (client: Client, args: Record<string, unknown> = {}) =>
  (await call(client, "hub_sessions", args)).structuredContent as unknown as Listing;

describe("hub_sessions lists the tenant's tasks; hub_cancel_task ends one", () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  let slow: string;
  let asking: string;
  let bobs: string;

  before(async () => {
    hub = await startHub({
      servers: [],
      extraServers: { echo: { ...fixture("echo-server"), taskSupport: { slow: "optional" } }, conformance: { ...fixture("conformance-server"), prefix: "" } },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    // 2025 clients: they cannot speak the tasks extension, yet see and stop their tenant's tasks here
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
    slow = await startTask(hub, KEY_A, "echo_slow", { steps: 600, delayMs: 100 });
    asking = await startTask(hub, KEY_A, "confirm_delete", { filename: "notes.txt" });
    bobs = await startTask(hub, KEY_B, "echo_slow", { steps: 600, delayMs: 100 });
    await until("alice's question to be asked", async () => (await taskGet(hub, KEY_A, asking))?.result?.status === "input_required");
  });
  after(() => hub?.stop());

  test("each tenant's hub_sessions lists its own tasks with tool, status, times, ttl and what waits for input, and none of the other's", async () => {
    const mine = await listing(alice);
    assert.equal(mine.tasksTotal, 2, JSON.stringify(mine.tenantTasks));
    const byId = new Map(mine.tenantTasks.map((t) => [t.id, t]));
    assert.deepEqual([byId.get(slow)?.tool, byId.get(slow)?.status, byId.get(slow)?.waitsForInput], ["echo_slow", "working", undefined]);
    assert.deepEqual([byId.get(asking)?.tool, byId.get(asking)?.status, byId.get(asking)?.waitsForInput], ["confirm_delete", "input_required", 1]);
    for (const task of mine.tenantTasks) {
      assert.ok(!Number.isNaN(Date.parse(task.createdAt)) && task.lastUpdatedAt >= task.createdAt, JSON.stringify(task));
      assert.equal(task.ttlMs, 3600 * 1000);
    }
    const text = textOf(await call(alice, "hub_sessions"));
    assert.match(text, new RegExp(`${asking}\\s+confirm_delete input_required · waits for input \\(1 questions`));
    assert.ok(!JSON.stringify(mine).includes(bobs) && !text.includes(bobs), "bob's task is not alice's to see");
    const his = await listing(bob);
    assert.deepEqual(
      his.tenantTasks.map((t) => t.id),
      [bobs],
    );
  });

  test("one offset and limit page the sessions and the tasks, oldest first", async () => {
    const first = await listing(alice, { limit: 1 });
    assert.deepEqual(
      first.tenantTasks.map((t) => t.id),
      [slow],
    );
    assert.equal(first.tenantSessions.length, 1);
    assert.equal(first.nextOffset, 1);
    const second = await listing(alice, { offset: 1, limit: 1 });
    assert.deepEqual(
      second.tenantTasks.map((t) => t.id),
      [asking],
    );
    assert.equal(second.nextOffset, null);
    const past = await call(alice, "hub_sessions", { offset: 2 });
    assert.equal(past.isError, true);
    assert.match(textOf(past), /offset 2 is past the end/);
  });

  test("hub_cancel_task: another tenant's task id is unknown and stays running; the tenant's own ends, seen by tasks/get", async () => {
    const refused = await call(bob, "hub_cancel_task", { taskId: slow });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /No task .* of your tenant/);
    assert.equal((await taskGet(hub, KEY_A, slow))?.result?.status, "working");
    const made = await call(alice, "hub_cancel_task", { taskId: "made-up" });
    assert.equal(made.isError, true);

    const cancelled = await call(alice, "hub_cancel_task", { taskId: slow });
    assert.equal(cancelled.isError, undefined, textOf(cancelled));
    assert.deepEqual(cancelled.structuredContent, { taskId: slow, tool: "echo_slow", status: "cancelled" });
    const ended = (await taskGet(hub, KEY_A, slow))?.result;
    assert.equal(ended?.status, "cancelled");
    assert.equal(ended?.statusMessage, "Cancelled by hub_cancel_task.", "tasks/get says how it ended");
    const listed = (await call(alice, "hub_sessions", {})).structuredContent as { tenantTasks: Array<{ id: string; statusMessage?: string }> };
    assert.equal(listed.tenantTasks.find((t) => t.id === slow)?.statusMessage, "Cancelled by hub_cancel_task.", "hub_sessions says it too");
    const again = await call(alice, "hub_cancel_task", { taskId: slow });
    assert.match(textOf(again), /had already ended: cancelled/);
    assert.equal((await taskGet(hub, KEY_B, bobs))?.result?.status, "working", "bob's task runs on");
    await call(bob, "hub_cancel_task", { taskId: bobs });
    await call(alice, "hub_cancel_task", { taskId: asking });
  });
});
