// A child's tool that runs only as a task (execution.taskSupport "required", MCP 2025-11-25)
// through the hub: the hub calls the child with params.task and follows the child's task to its
// end, whichever way its own client called: a 2025 session's task, a 2025 plain call, a 2026-07-28
// call that becomes a task. Real children: server-everything's simulate-research-query (started
// by npx from this checkout, as test/hub/children/third-party.test.ts does; called the moment it is
// listed, while the just-started server asks for roots apart from the task), and a fixture whose
// task works until cancelled and notes the tasks/cancel it gets, or runs while its server asks aside.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  type CallToolResult,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { fixture, startHub, tempDir, type TestHub } from "../../helpers/hub.js";
import { npxServer } from "../../helpers/third-party.js";
import { until, untilQueue } from "../../helpers/wait.js";
import { getTask, startTask as startModernTask } from "../modern/modern-client.js";
import { DOES_TASKS, rpcError, startTask, TERMINAL, textOf, untilStatus } from "../tasks/legacy-client.js";

const RESEARCH = "everything_simulate-research-query";
const REPORT = /# Research Report: tides/;

describe("a child's tool that runs only as a task, through the hub", () => {
  let hub: TestHub;
  let workspace: string;
  let marks: string;
  const closing: Client[] = [];

  before(async () => {
    workspace = tempDir("agentbox-ws-");
    const markDir = path.join(workspace, "marks");
    fs.mkdirSync(markDir);
    marks = path.join(markDir, "tasks.log");
    hub = await startHub({
      workspace,
      extraServers: { everything: npxServer("bash -c", "mcp-server-everything"), holder: { ...fixture("task-only-server"), env: { TASK_CANCEL_MARK: marks } } },
      // the first test calls the moment its tool is listed, while the child is just starting
      waitReady: false,
    });
    hub.handToTenant(markDir);
  });
  after(async () => {
    await Promise.allSettled(closing.map((c) => c.close()));
    await hub?.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  async function legacyClient(capabilities: ClientCapabilities): Promise<Client> {
    const client = await hub.connect({ capabilities });
    closing.push(client);
    return client;
  }

  /** The tool as the hub lists it, once its server is up (the hub is not waited on to be ready). */
  const untilListed = (client: Client, name: string) =>
    until(`the hub to list ${name}`, async () => (await client.listTools()).tools.find((t) => t.name === name), 60_000, 20);

  test("a 2025 session's task: the hub lists the tool as the child does, and tasks/result gives the child's research", async () => {
    const client = await legacyClient(DOES_TASKS);
    // called the moment it is listed: server-everything, just started, then asks for roots (naming no task) while the task runs
    const listed = await untilListed(client, RESEARCH);
    assert.equal(listed.execution?.taskSupport, "required");

    const task = await startTask(client, RESEARCH, { topic: "tides" });
    const ended = await untilStatus(client, task.taskId, TERMINAL);
    assert.equal(ended.status, "completed", `${JSON.stringify(ended)}\nthe hub's log:\n${hub.logs.slice(-40).join("\n")}`);
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), REPORT);
  });

  test("the child's question during its task (elicitation, related to the task) reaches the 2025 client, and its answer the child", async () => {
    const client = await legacyClient(DOES_TASKS);
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { interpretation: "snake" } };
    });
    // the SDK calls a tool as a task when its listing says it must
    await client.listTools();
    let result: CallToolResult | undefined;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: RESEARCH, arguments: { topic: "python", ambiguous: true } },
      CallToolResultSchema,
    )) {
      if (message.type === "error") throw message.error;
      if (message.type === "result") result = message.result as CallToolResult;
    }
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /could have multiple interpretations/);
    assert.match(textOf(result), /# Research Report: python \(snake\)/);
  });

  test("a 2025 plain call: a client without tasks gets the research; one that declared tasks is told to call with params.task", async () => {
    const plain = await legacyClient({});
    const result = await plain.request({ method: "tools/call", params: { name: RESEARCH, arguments: { topic: "tides" } } }, CallToolResultSchema);
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), REPORT);

    const tasking = await legacyClient(DOES_TASKS);
    const refused = await rpcError(tasking.request({ method: "tools/call", params: { name: RESEARCH, arguments: { topic: "tides" } } }, CallToolResultSchema));
    assert.equal(refused.code, ErrorCode.MethodNotFound);
    assert.match(refused.message, /call it with params\.task/);
  });

  test("a 2025 plain call hears the child task's progress, and gets its result with its structured content and isError", async () => {
    const client = await legacyClient({});
    const progress: number[] = [];
    const result = await client.request({ method: "tools/call", params: { name: "holder_count", arguments: {} } }, CallToolResultSchema, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.deepEqual(progress, [1, 2]);
    assert.equal(result.isError, true);
    assert.deepEqual(result.structuredContent, { counted: 2 });
    assert.equal(textOf(result), "counted to 2, then failed");
    // the child's task is the hub's business: its id never reaches the client
    assert.equal(result._meta?.["io.modelcontextprotocol/related-task"], undefined);
  });

  test("a 2026-07-28 client with the tasks extension: its call becomes a task that completes with the research", async () => {
    const taskId = await startModernTask(hub, {}, RESEARCH, { topic: "tides" });
    const done = await until(
      `task ${taskId} to end`,
      async () => {
        const task = await getTask(hub, {}, taskId);
        return task && TERMINAL.includes(String(task.status)) && task;
      },
      30_000,
      100,
    );
    assert.equal(done.status, "completed", JSON.stringify(done));
    const result = done.result as CallToolResult;
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), REPORT);
  });

  test("cancelling the hub's task cancels the child's: the child gets tasks/cancel for the task it created, and its slot is freed", async () => {
    const client = await legacyClient(DOES_TASKS);
    await untilListed(client, "holder_hold");
    const task = await startTask(client, "holder_hold", {});
    const created = await until("the child to create its task", () => /^created (\S+)$/m.exec(readMarks())?.[1], 30_000);
    await untilQueue(hub, "holder", { running: 1 });
    await client.experimental.tasks.cancelTask(task.taskId);
    await until("the child's task to be cancelled", () => readMarks().includes(`cancelled ${created}`), 30_000);
    await untilQueue(hub, "holder", { running: 0 });
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, "cancelled");
  });

  test("what the server asks apart from its task (roots/list naming no task, as a just-started server-everything does) is no question of the task's", async () => {
    // taken for the task's question, it failed the task of a 2025 client that did not declare roots
    const tasking = await legacyClient(DOES_TASKS);
    await untilListed(tasking, "holder_aside");
    const task = await startTask(tasking, "holder_aside", {});
    const ended = await untilStatus(tasking, task.taskId, TERMINAL);
    assert.equal(ended.status, "completed", JSON.stringify(ended));
    const result = await tasking.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.match(textOf(result), /^roots\/list refused: .*the calls in flight to it run as its own tasks/);

    // nor is a client that declared roots asked them in the name of its call, which runs as the task
    const asked: string[] = [];
    const rooted = await legacyClient({ roots: {} });
    rooted.setRequestHandler(ListRootsRequestSchema, async (request) => {
      asked.push(request.method);
      return { roots: [{ uri: "file:///srv/not-asked" }] };
    });
    const plain = await rooted.request({ method: "tools/call", params: { name: "holder_aside", arguments: {} } }, CallToolResultSchema);
    assert.match(textOf(plain), /^roots\/list refused: /);
    assert.deepEqual(asked, []);
  });

  const readMarks = () => (fs.existsSync(marks) ? fs.readFileSync(marks, "utf8") : "");
});

describe("a task asked for the moment the hub starts", () => {
  let hub: TestHub;
  after(() => hub?.stop());

  test("waits for its server's first start, as a plain call does, instead of calling the tool unknown", async () => {
    // a fixture server is in no build manifest: its tools are known only once it is up
    hub = await startHub({ extraServers: { holder: fixture("task-only-server") }, waitReady: false });
    const client = await hub.connect({ capabilities: DOES_TASKS });
    const task = await startTask(client, "holder_count", {});
    const ended = await untilStatus(client, task.taskId, TERMINAL);
    assert.equal(ended.status, "completed", JSON.stringify(ended));
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.match(textOf(result), /counted to 2/);
  });
});
