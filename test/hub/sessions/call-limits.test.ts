// Per-child call limits: timeouts that progress keeps alive, and bounded concurrency with a queue.
// (A 1 s timeout against 150 ms progress steps: 1.8 s in all, with room for a loaded machine.)
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { untilQueue } from "../../helpers/wait.js";

describe("per-call timeout", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: { ...fixture("echo-server"), timeoutMs: 1000 } } });
  });
  after(() => hub.stop());

  test("a call that keeps reporting progress outlives the timeout", async () => {
    const client = await hub.connect();
    const result = await client.callTool({ name: "echo_slow", arguments: { steps: 12, delayMs: 150 } }, CallToolResultSchema, {
      onprogress: () => undefined,
    });
    assert.equal(textOf(result as never), "done after 12 steps");
  });

  test("a silent call past the timeout fails with a message and is cancelled in the child", async () => {
    const client = await hub.connect();
    const result = await call(client, "echo_slow", { steps: 1, delayMs: 2000 });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /echo_slow timed out/);
  });
});

describe("maxConcurrency", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: { ...fixture("echo-server"), maxConcurrency: 1, maxQueue: 1 } } });
  });
  after(() => hub.stop());

  test("calls beyond the limit queue, and a full queue is refused at once", async () => {
    const client = await hub.connect();
    const order: string[] = [];
    const slow = (label: string) =>
      call(client, "echo_slow", { steps: 2, delayMs: 300 }).then((r) => {
        order.push(label);
        return r;
      });
    const first = slow("first");
    await untilQueue(hub, "echo", { running: 1 });
    const second = slow("second");
    await untilQueue(hub, "echo", { running: 1, queued: 1 });
    const third = await call(client, "echo_echo", { text: "no room" });
    assert.equal(third.isError, true);
    assert.match(textOf(third), /busy/);
    assert.equal((await first).isError, undefined);
    assert.equal((await second).isError, undefined);
    assert.deepEqual(order, ["first", "second"]);
  });
});
