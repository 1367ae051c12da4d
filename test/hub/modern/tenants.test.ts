// Two tenants' 2026-07-28 clients: each tenant's default context is its own, so alice's agent
// cannot reach bob's terminal by its id, and bob's listen stream never hears alice's children.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { callModern, connectModern } from "./modern-client.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

describe("2026-07-28 clients of two tenants", () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      extraServers: { loud: fixture("loud-server") },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    alice = await connectModern(hub, { headers: auth(KEY_A) });
    bob = await connectModern(hub, { headers: auth(KEY_B) });
  });
  after(async () => {
    await Promise.allSettled([alice?.close(), bob?.close()]);
    await hub?.stop();
  });

  test("each tenant has its own default context", async () => {
    const id = async (client: Client) => ((await callModern(client, "hub_sessions")).structuredContent as { id: string }).id;
    assert.notEqual(await id(alice), await id(bob));
  });

  test("bob's agent cannot list, type into or read alice's terminal", async () => {
    const created = await callModern(bob, "terminal_session_create", {});
    const bobsTerminal = (created.structuredContent as { id: string }).id;
    await callModern(bob, "terminal_session_send", { id: bobsTerminal, input: "echo bob-secret-$((2*21))\n", waitFor: "bob-secret-42" });
    const listed = await callModern(alice, "terminal_session_list", {});
    assert.doesNotMatch(JSON.stringify(listed), new RegExp(bobsTerminal));
    const typed = await callModern(alice, "terminal_session_send", { id: bobsTerminal, input: "echo pwned\n" });
    assert.equal(typed.isError, true, textOf(typed));
    const read = await callModern(alice, "terminal_session_read", { id: bobsTerminal, mode: "tail" });
    assert.equal(read.isError, true);
    assert.doesNotMatch(textOf(read), /bob-secret/);
  });

  test("a resource update from alice's child reaches alice's listen stream and not bob's", async () => {
    const heard: { alice: string[]; bob: string[] } = { alice: [], bob: [] };
    alice.setNotificationHandler("notifications/resources/updated", (n) => void heard.alice.push(n.params.uri));
    bob.setNotificationHandler("notifications/resources/updated", (n) => void heard.bob.push(n.params.uri));
    const filter = { resourceSubscriptions: ["loud://from-alice", "loud://from-bob"] };
    const subscriptions = await Promise.all([alice.listen(filter), bob.listen(filter)]);
    const updated = (uri: string) => JSON.stringify({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } });
    try {
      await callModern(alice, "loud_emit", { stdout: [updated("loud://from-alice")] });
      await until("alice's update to reach her stream", () => heard.alice.includes("loud://from-alice"));
      // bob's stream is ordered: had alice's update been sent to it, it would arrive before his own
      await callModern(bob, "loud_emit", { stdout: [updated("loud://from-bob")] });
      await until("bob's update to reach his stream", () => heard.bob.includes("loud://from-bob"));
      assert.deepEqual(heard.bob, ["loud://from-bob"]);
      assert.deepEqual(heard.alice, ["loud://from-alice"]);
    } finally {
      await Promise.all(subscriptions.map((s) => s.close()));
    }
  });
});
