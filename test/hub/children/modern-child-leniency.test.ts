// The hub is exact toward its clients and liberal toward a 2026-07-28 child: the child sees the
// capabilities its caller declared (not the hub's), so it asks only what that caller can answer; a
// child that never opens its subscriptions/listen stream properly (a line of JSON for an SSE stream)
// is ready and served without it; a result without resultType is taken as complete, and said once.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { startSloppyModernChild, type SloppyModernChild } from "../../fixtures/sloppy-modern-child.js";
import { callModern, connectModern } from "../modern/modern-client.js";

const stateOf = async (hub: TestHub) => {
  const status = (await (await fetch(`${hub.origin}/`)).json()) as { servers: Array<{ name: string; state: string }> };
  return status.servers.find((s) => s.name === "sloppy")?.state;
};

/** Each test past the first waits for the child on its own, so each fails for its own reason only. */
const ready = (hub: TestHub) => until("the child to be ready", async () => (await stateOf(hub)) === "ready", 90_000);

describe("a 2026-07-28 child that is not quite to the letter", () => {
  let child: SloppyModernChild;
  let hub: TestHub;
  const closing: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    child = await startSloppyModernChild();
    // not waited for: whether the child is ready while its listen stream is still unanswered is the first test's question
    hub = await startHub({ extraServers: { sloppy: { url: child.url, protocol: "2026-07-28" } }, waitReady: false });
  });
  after(async () => {
    await Promise.allSettled(closing.map((c) => c.close()));
    await hub?.stop();
    await child?.close();
  });

  test("is ready and served while its listen stream is unanswered, and answered as a line of JSON", { timeout: 90_000 }, async () => {
    await until("the hub to open the child's listen stream", () => child.listens > 0);
    await until("the child to be ready without its listen stream", async () => (await stateOf(hub)) === "ready");
    const client = await hub.connect();
    closing.push(client);
    assert.equal(textOf(await call(client, "sloppy_add", { a: 2, b: 3 })), "5");
    // the acknowledgement comes now, as a line of JSON on a response held open: nothing waits on it
    child.releaseListen();
    assert.equal(textOf(await call(client, "sloppy_add", { a: 1, b: 1 })), "2");
  });

  test("a result without resultType is taken as complete, and the hub says so once", { timeout: 120_000 }, async () => {
    await ready(hub);
    const client = await hub.connect();
    closing.push(client);
    assert.equal(textOf(await call(client, "sloppy_bare")), "bare result");
    const modern = await connectModern(hub);
    closing.push(modern);
    assert.equal(textOf(await callModern(modern, "sloppy_bare")), "bare result");
    const said = hub.logs.filter((line) => line.includes("results without resultType"));
    assert.equal(said.length, 1, said.join("\n"));
  });

  test("a 2026 caller that declared only sampling is seen so by the child, and asked sampling", { timeout: 120_000 }, async () => {
    await ready(hub);
    const client = await connectModern(hub, { capabilities: { sampling: {} } });
    closing.push(client);
    client.setRequestHandler("sampling/createMessage", (async () => ({
      role: "assistant",
      content: { type: "text", text: "from the model" },
      model: "test",
    })) as never);
    const before = child.declared.length;
    const result = await callModern(client, "sloppy_ask");
    assert.deepEqual(child.declared.slice(before), [{ sampling: {} }]);
    assert.equal(textOf(result), 'sampled {"type":"text","text":"from the model"}');
  });

  test("a 2025 caller that declared only sampling is seen so by the child, and asked sampling", { timeout: 120_000 }, async () => {
    await ready(hub);
    const client = await hub.connect({ capabilities: { sampling: {} } });
    closing.push(client);
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: "assistant", content: { type: "text", text: "legacy model" }, model: "test" }));
    const before = child.declared.length;
    const result = await call(client, "sloppy_ask");
    assert.deepEqual(child.declared.slice(before), [{ sampling: {} }]);
    assert.equal(textOf(result), 'sampled {"type":"text","text":"legacy model"}');
  });
});
