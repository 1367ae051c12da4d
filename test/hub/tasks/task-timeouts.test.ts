// A server's timeoutMs (time without progress) is there for a client holding a request open; a
// call run as a task has nobody waiting on it, so only maxTotalTimeoutMs bounds it: a tool silent
// longer than timeoutMs (a build that prints nothing for minutes, `sleep 600`) still completes as
// a task, the same call made plainly still times out, and a task past maxTotalTimeoutMs ends.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { envelope, getTask, postModern, withTasks } from "../modern/modern-client.js";

let nextId = 1;
const callTool = (hub: TestHub, name: string, args: Record<string, unknown>, meta = withTasks) =>
  postModern(hub, { id: nextId++, method: "tools/call", params: { name, arguments: args, _meta: meta } });

async function ended(hub: TestHub, taskId: string): Promise<Record<string, unknown>> {
  return until(`task ${taskId} to end`, async () => {
    const task = await getTask(hub, {}, taskId);
    return task && task.status !== "working" && task;
  });
}

describe("a task outlives its server's timeoutMs, not its maxTotalTimeoutMs", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      servers: [],
      extraServers: {
        // echo_slow waits delayMs before its first progress: silent for longer than timeoutMs
        quiet: { ...fixture("echo-server"), prefix: "quiet", timeoutMs: 1000, taskSupport: { slow: "optional" } },
        capped: { ...fixture("echo-server"), prefix: "capped", timeoutMs: 1000, maxTotalTimeoutMs: 2500, taskSupport: { slow: "optional" } },
      },
    });
  });
  after(() => hub?.stop());

  test("a plain call silent past timeoutMs is cut off", async () => {
    const plain = await callTool(hub, "quiet_slow", { steps: 1, delayMs: 4000 }, envelope());
    assert.equal(plain.json?.result?.resultType, "complete", plain.text);
    assert.equal(plain.json?.result?.isError, true, plain.text);
    assert.match(plain.text, /timed out/i);
  });

  test("the same call as a task completes", async () => {
    const reply = await callTool(hub, "quiet_slow", { steps: 1, delayMs: 4000 });
    assert.equal(reply.json?.result?.resultType, "task", reply.text);
    const task = await ended(hub, String(reply.json?.result?.taskId));
    assert.equal(task.status, "completed", JSON.stringify(task));
    assert.deepEqual((task.result as { content: unknown }).content, [{ type: "text", text: "done after 1 steps" }]);
  });

  test("a task silent past maxTotalTimeoutMs ends, saying so", async () => {
    const reply = await callTool(hub, "capped_slow", { steps: 1, delayMs: 8000 });
    assert.equal(reply.json?.result?.resultType, "task", reply.text);
    const task = await ended(hub, String(reply.json?.result?.taskId));
    assert.match(JSON.stringify(task), /Maximum total timeout exceeded/, JSON.stringify(task));
  });
});
