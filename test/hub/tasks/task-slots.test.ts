// One client's tasks cannot starve the same tenant's other clients (issue 36, item 3): a tenant
// floods the terminal server with task-augmented terminal_exec calls of a long sleep, in either
// era; its tasks hold at most their share of the server's slots (AGENTBOX_TASK_SLOTS_PERCENT,
// half of the default 32), the rest stay free for the calls its clients wait on, a slot an
// ordinary call frees goes to the next ordinary call rather than to a queued task, and a call
// that must wait says why (a task in its statusMessage, an ordinary call in its progress).
import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { CallToolResultSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { startHub, type TestHub } from "../../helpers/hub.js";
import { queueOf, until, untilQueue } from "../../helpers/wait.js";
import { envelope, postModern, type ModernReply } from "../modern/modern-client.js";
import { auth, withTasks } from "./task-client.js";
import { connectAs, newKey, startTask, textOf } from "./legacy-client.js";

const ALICE = newKey("alice");
const BOB = newKey("bob");
const CAROL = newKey("carol");
/** The terminal server's slots (its default maxConcurrency) and the tasks' share of them (the default 50%). */
const SLOTS = 32;
const TASK_SLOTS = 16;
const LONG = { timeout: 600_000 };

/** A command that sleeps ten minutes and names itself by `mark`, so the test's processes are its own. */
const sleeper = (mark: string) => ({ command: `sleep 6${mark}`, timeoutMs: 600_000 });

describe("the tasks' share of a server's slots", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: ["terminal"], config: { tenants: { alice: { apiKey: ALICE }, bob: { apiKey: BOB }, carol: { apiKey: CAROL } } } });
  });
  after(() => hub?.stop());

  test("2025-11-25 tasks: a flood of terminal_exec tasks leaves the tenant's ordinary calls their slots, and says why its tasks wait", async () => {
    const flooder = await connectAs(hub, ALICE);
    const mark = `${randomInt(1e6)}`.padStart(6, "0");
    const tasks = [];
    for (let i = 0; i < 40; i++) tasks.push(await startTask(flooder, "terminal_exec", sleeper(mark)));
    await until("every task to run or wait for a slot", async () => {
      const { running, queued } = await queueOf(hub, "terminal", ALICE);
      return running + queued === 40;
    });

    // another client of the same tenant is served at once (the SDK client gives up after 60 s, as the did)
    const other = await connectAs(hub, ALICE, {});
    const marker = `served-${randomInt(1e9)}`;
    assert.match(textOf(await other.callTool({ name: "terminal_exec", arguments: { command: `echo ${marker}` } })), new RegExp(marker));
    assert.deepEqual(await queueOf(hub, "terminal", ALICE), { running: TASK_SLOTS, queued: 40 - TASK_SLOTS }, "the tasks hold half the slots, no more");
    const statuses = await Promise.all(tasks.map((t) => flooder.experimental.tasks.getTask(t.taskId)));
    const waiting = statuses.filter((t) => /^Waiting for a slot/.test(t.statusMessage ?? ""));
    assert.equal(waiting.length, 40 - TASK_SLOTS, JSON.stringify(statuses.map((t) => t.statusMessage)));
    assert.match(waiting[0].statusMessage!, /tasks hold 16 of the 'terminal' server's 32 slots, the most tasks may \(AGENTBOX_TASK_SLOTS_PERCENT, 50%\)/);

    // the ordinary slots filled too: the next ordinary call waits, and hears why
    const holders = Array.from({ length: SLOTS - TASK_SLOTS }, () => new AbortController());
    const held = holders.map((holder) =>
      other.callTool({ name: "terminal_exec", arguments: sleeper(mark) }, CallToolResultSchema, { ...LONG, signal: holder.signal }).catch(() => undefined),
    );
    await untilQueue(hub, "terminal", { running: SLOTS }, ALICE);
    const heard: Progress[] = [];
    const next = `next-${randomInt(1e9)}`;
    const waitingCall = other.callTool({ name: "terminal_exec", arguments: { command: `echo ${next}` } }, CallToolResultSchema, {
      onprogress: (progress) => void heard.push(progress),
    });
    await until("the waiting call to hear why it waits", () => heard.length > 0);
    assert.match(
      heard[0].message ?? "",
      /^Waiting for a slot: all 32 of the 'terminal' server's slots are busy with this tenant's calls \(its maxConcurrency\)/,
    );

    // an ordinary call ends: its slot goes to the ordinary call waiting behind 24 tasks, not to a task
    holders[0].abort();
    assert.match(textOf((await waitingCall) as CallToolResult), new RegExp(next));
    assert.equal((await queueOf(hub, "terminal", ALICE)).queued, 40 - TASK_SLOTS, "every task still waits");

    // a task ends: the first waiting task takes its slot, and its status no longer says it waits
    const firstWaiting = waiting[0].taskId;
    const running = statuses.filter((t) => !waiting.includes(t));
    await flooder.experimental.tasks.cancelTask(running[0].taskId);
    const started = await until("a waiting task to start", async () => {
      const task = await flooder.experimental.tasks.getTask(firstWaiting);
      return task.statusMessage?.startsWith("Running") && task;
    });
    assert.match(started.statusMessage!, /^Running: it waited \d+ s for a slot of the 'terminal' server\.$/);
    assert.equal(started.status, "working");

    // another tenant was never touched by any of it
    const bob = await connectAs(hub, BOB, {});
    assert.match(textOf(await bob.callTool({ name: "terminal_exec", arguments: { command: `echo bob-${marker}` } })), new RegExp(`bob-${marker}`));
    for (const holder of holders) holder.abort();
    await Promise.all(held);
  });

  test("2026-07-28 tasks extension: the same share, the same reason in tasks/get, and the tenant's plain calls still run", async () => {
    const mark = `${randomInt(1e6)}`.padStart(6, "0");
    let id = 1;
    const post = (name: string, args: Record<string, unknown>, meta = withTasks): Promise<ModernReply> =>
      postModern(hub, { id: id++, method: "tools/call", params: { name, arguments: args, _meta: meta } }, auth(CAROL));
    const get = async (taskId: string) => {
      const reply = await postModern(hub, { id: id++, method: "tasks/get", params: { taskId, _meta: withTasks } }, { ...auth(CAROL), "Mcp-Name": taskId });
      assert.ok(reply.json?.result, reply.text);
      return reply.json.result as { status: string; statusMessage?: string };
    };
    const taskIds: string[] = [];
    for (let i = 0; i < TASK_SLOTS + 4; i++) {
      const reply = await post("terminal_exec", sleeper(mark));
      assert.equal(reply.json?.result?.resultType, "task", reply.text);
      taskIds.push(String(reply.json.result.taskId));
    }
    await untilQueue(hub, "terminal", { running: TASK_SLOTS, queued: 4 }, CAROL);
    assert.deepEqual(await queueOf(hub, "terminal", CAROL), { running: TASK_SLOTS, queued: 4 });
    const statuses = await Promise.all(taskIds.map(get));
    const waiting = statuses.filter((t) => /^Waiting for a slot/.test(t.statusMessage ?? ""));
    assert.equal(waiting.length, 4, JSON.stringify(statuses));
    assert.match(waiting[0].statusMessage!, /AGENTBOX_TASK_SLOTS_PERCENT, 50%/);
    assert.ok(
      waiting.every((t) => t.status === "working"),
      "a task waiting for a slot is working, as the extension has it",
    );

    const marker = `plain-${randomInt(1e9)}`;
    const plain = await post("terminal_exec", { command: `echo ${marker}` }, envelope());
    assert.equal(plain.json?.result?.resultType, "complete", plain.text);
    assert.match(textOf(plain.json.result), new RegExp(marker));
  });
});
