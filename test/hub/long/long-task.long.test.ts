// Issue 25's done-when, with its real durations: a ten-minute terminal_exec started as a task by a
// 2026-07-28 client outlives that client, and a new client of the same tenant polls it to the end;
// a second one cancelled midway leaves no process behind. The command is silent for six of its
// minutes, past the 5-min timeoutMs that cuts off a plain call. Run beside the rest of the suite
// (scripts/run-tests.mjs starts *.long.test.js files in a process of their own): it is idle waiting.
import assert from "node:assert/strict";
import { randomBytes, randomInt } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { startHub, type TestHub } from "../../helpers/hub.js";
import { processesWith } from "../../helpers/processes.js";
import { until } from "../../helpers/wait.js";
import { connectModern, envelope, postModern, type ModernReply } from "../modern/modern-client.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;
const auth = { Authorization: `Bearer ${KEY}` };
const TASKS = "io.modelcontextprotocol/tasks";
const withTasks = envelope({ "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } } });
const TEN_MINUTES_S = 600;

let nextId = 1;
const taskRequest = (hub: TestHub, method: string, taskId: string) =>
  postModern(hub, { id: nextId++, method, params: { taskId, _meta: withTasks } }, { ...auth, "Mcp-Name": taskId });

function created(reply: ModernReply): string {
  assert.equal(reply.json?.result?.resultType, "task", reply.text);
  return String(reply.json?.result?.taskId);
}

async function taskOf(hub: TestHub, taskId: string): Promise<Record<string, unknown>> {
  const reply = await taskRequest(hub, "tasks/get", taskId);
  assert.ok(reply.json?.result, reply.text);
  return reply.json.result;
}

const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");

/** The lines the command prints, every 30 s for two minutes at its start and two at its end. */
const TICKS = 8;
/** How long it is silent in between: longer than a server's timeoutMs (5 min), which cuts off a plain call, never a task. */
const SILENT_S = TEN_MINUTES_S - TICKS * 30;

/** A shell command that runs `seconds`, printing numbered lines with SILENT_S of silence in the middle; `mark` makes its processes findable. */
const longCommand = (seconds: number, mark: string) =>
  `sleep ${seconds + 5}.${mark} & tick() { sleep 30; echo "tick $1 ${mark}"; }; ` +
  `for i in $(seq 1 ${TICKS / 2}); do tick $i; done; sleep ${seconds - TICKS * 30}; ` +
  `for i in $(seq ${TICKS / 2 + 1} ${TICKS}); do tick $i; done; kill $!; echo "done ${mark}"`;

/** Starts the command as a task from a fresh 2026 client of the tenant, then closes that client. */
async function startFromClientThatLeaves(hub: TestHub, command: string): Promise<string> {
  const client = await connectModern(hub, { headers: auth });
  const taskId = created(
    await postModern(
      hub,
      {
        id: nextId++,
        method: "tools/call",
        params: { name: "terminal_exec", arguments: { command, timeoutMs: (TEN_MINUTES_S + 300) * 1000 }, _meta: withTasks },
      },
      auth,
    ),
  );
  await client.close();
  return taskId;
}

describe("a ten-minute terminal_exec as a task", { timeout: (TEN_MINUTES_S + 240) * 1000 }, () => {
  let hub: TestHub;

  before(async () => {
    // sessions idle out after a minute here (30 min by default): a sweep that took the task's call along would have nine chances
    hub = await startHub({
      servers: ["terminal"],
      config: { tenants: { alice: { apiKey: KEY } } },
      env: { AGENTBOX_SESSION_IDLE_MS: "60000", AGENTBOX_SESSION_RECLAIM_IDLE_MS: "60000" },
    });
  });
  after(() => hub?.stop());

  test("survives its client leaving and is polled to completion by a new client; a second one cancelled midway leaves no process", async () => {
    const mark = `${randomInt(1e9)}`;
    const other = `${randomInt(1e9)}`;
    const started = Date.now();
    const taskId = await startFromClientThatLeaves(hub, longCommand(TEN_MINUTES_S, mark));
    const doomed = await startFromClientThatLeaves(hub, longCommand(TEN_MINUTES_S, other));
    console.log(`# started ${taskId} and ${doomed}; both clients closed`);
    await until(
      "both commands to run",
      () => processesWith(`sleep ${TEN_MINUTES_S + 5}.${mark}`).length > 0 && processesWith(`sleep ${TEN_MINUTES_S + 5}.${other}`).length > 0,
    );

    // midway through the second (its third line, 90 s in, is its task's statusMessage): cancelled by a
    // client that did not start it, its whole tree goes
    await until(`the third line of ${doomed}`, async () => String((await taskOf(hub, doomed)).statusMessage ?? "").includes(`tick 3 ${other}`), 180_000, 1_000);
    const canceller = await connectModern(hub, { headers: auth });
    assert.equal((await taskOf(hub, doomed)).status, "working");
    const ack = await taskRequest(hub, "tasks/cancel", doomed);
    assert.equal(ack.json?.result?.resultType, "complete", ack.text);
    assert.equal((await taskOf(hub, doomed)).status, "cancelled");
    await until("no process of the cancelled task to be left", () => processesWith(other).length === 0, 15_000);
    await canceller.close();
    const canceledAt = Date.now();
    console.log(`# ${doomed} cancelled after ${Math.round((Date.now() - started) / 1000)} s; no process holds ${other}`);

    // nobody connected for minutes: the first keeps running all ten, and a new client polls it to the end. The pause lets
    // what must not happen (an idle sweep of the tenant's sessions or processes ending the call) have its chance.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + (TEN_MINUTES_S - 60) * 1000 - Date.now())));
    console.log(`# nobody connected from ${Math.round((canceledAt - started) / 1000)} s to ${Math.round((Date.now() - started) / 1000)} s`);
    let polls = 0;
    const done = await until(
      `task ${taskId} to end`,
      async () => {
        const client = await connectModern(hub, { headers: auth });
        try {
          const task = await taskOf(hub, taskId);
          if (++polls % 4 === 0) console.log(`# ${Math.round((Date.now() - started) / 1000)} s: ${String(task.status)}`);
          return task.status !== "working" && task;
        } finally {
          await client.close();
        }
      },
      (TEN_MINUTES_S + 120) * 1000,
      15_000,
    );
    const output = textOf(done.result);
    console.log(`# ${taskId} ${String(done.status)} after ${Math.round((Date.now() - started) / 1000)} s: ${JSON.stringify(output.slice(-200))}`);
    assert.equal(done.status, "completed", JSON.stringify(done).slice(0, 2000));
    assert.ok(SILENT_S > 300, "silent for longer than the default timeoutMs");
    assert.match(output, new RegExp(`tick ${TICKS / 2} ${mark}\\ntick ${TICKS / 2 + 1} ${mark}[\\s\\S]*tick ${TICKS} ${mark}[\\s\\S]*done ${mark}`));
    assert.match(output, /Exit code 0\./);
    assert.notEqual((done.result as { isError?: boolean }).isError, true);
    assert.deepEqual(processesWith(mark), []);
  });
});
