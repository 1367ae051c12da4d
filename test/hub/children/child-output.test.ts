// A child's output is untrusted: alice controls what her own server writes to its stdout and
// stderr (test/fixtures/loud-server.ts), and attacks bob and the hub's log with it. Bob never
// hears her forged notifications, the hub's log keeps saying whose lines they are, and floods
// are cut off with a summary while the hub keeps serving.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const rpc = (method: string, params: Record<string, unknown>) => JSON.stringify({ jsonrpc: "2.0", method, params });

interface Seen {
  updated: string[];
  logs: string[];
  toolListChanged: number;
  promptListChanged: number;
}

function watch(client: Client): Seen {
  const seen: Seen = { updated: [], logs: [], toolListChanged: 0, promptListChanged: 0 };
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.updated.push(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.logs.push(String(n.params.data)));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void seen.toolListChanged++);
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void seen.promptListChanged++);
  return seen;
}

/** The hub's JSON log entries (its stdout) that mention `marker`. */
function logged(hub: TestHub, marker: string): Array<Record<string, unknown>> {
  return hub.logs
    .filter((l) => l.includes(marker))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** Lines the hub says it dropped from alice's loud server, by summary message. */
function droppedFromAlice(hub: TestHub, what: RegExp): number {
  return hub.logs
    .map((l) => JSON.parse(l) as { msg?: string; tenant?: string; child?: string; dropped?: number })
    .filter((e) => e.tenant === "alice" && e.child === "loud" && what.test(e.msg ?? ""))
    .reduce((sum, e) => sum + (e.dropped ?? 0), 0);
}

async function emit(client: Client, lines: { stdout?: string[]; stderr?: string[]; times?: number }): Promise<void> {
  const result = await call(client, "loud_emit", lines);
  assert.equal(result.isError, undefined, textOf(result));
}

describe("a child's output is untrusted input", () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  let aliceSeen: Seen;
  let bobSeen: Seen;
  let bobSession: string;

  before(async () => {
    hub = await startHub({
      extraServers: { loud: fixture("loud-server") },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
    aliceSeen = watch(alice);
    bobSeen = watch(bob);
    for (const client of [alice, bob]) {
      await client.listResources();
      await client.subscribeResource({ uri: "loud://notes" });
    }
    bobSession = ((await call(bob, "hub_sessions")).structuredContent as { id: string }).id;
  });
  after(() => hub?.stop());

  test("bob never receives a resources/updated that alice's server forges", async () => {
    await emit(alice, { stdout: [rpc("notifications/resources/updated", { uri: "loud://notes" })] });
    // bob's own server's update comes after alice's on the same stream to bob: once it is there, hers would be too
    await emit(bob, { stdout: [rpc("notifications/resources/updated", { uri: "loud://notes" })] });
    await until("bob's own update to reach bob", () => bobSeen.updated.length >= 1);
    await until("alice's update to reach alice", () => aliceSeen.updated.length >= 1);
    assert.deepEqual(bobSeen.updated, ["loud://notes"], "bob got exactly his own server's update");
    assert.deepEqual(aliceSeen.updated, ["loud://notes"], "alice got exactly her own server's update");
  });

  test("a log message naming bob's session from alice's server does not reach bob", async () => {
    const forged = `forged-${randomBytes(4).toString("hex")}`;
    const own = `own-${randomBytes(4).toString("hex")}`;
    const meta = { "agentbox/session": bobSession };
    await emit(alice, { stdout: [rpc("notifications/message", { level: "error", data: forged, _meta: meta })] });
    await emit(bob, { stdout: [rpc("notifications/message", { level: "error", data: own, _meta: meta })] });
    await until("bob's own server's log message to reach bob", () => bobSeen.logs.includes(own));
    assert.ok(!bobSeen.logs.includes(forged), bobSeen.logs.join());
  });

  test("the hub's log lines for alice's server say alice and the hub's words, whatever she writes", async () => {
    const marker = `spoof-${randomBytes(4).toString("hex")}`;
    const spoof = { time: "1970-01-01T00:00:00.000Z", level: "error", msg: "child failed to start", tenant: "bob", child: "file", component: "auth", marker };
    await emit(alice, { stderr: [JSON.stringify(spoof), `plain ${marker}`, `{"__proto__":{"tenant":"bob"},"marker":"${marker}"}`] });
    await until("alice's lines to be logged", () => logged(hub, marker).length >= 3);
    for (const entry of logged(hub, marker)) {
      assert.equal(entry.tenant, "alice", JSON.stringify(entry));
      assert.equal(entry.child, "loud", JSON.stringify(entry));
      assert.equal(entry.component, "hub", JSON.stringify(entry));
      assert.equal(entry.msg, "child output", JSON.stringify(entry));
      assert.notEqual(entry.time, spoof.time, JSON.stringify(entry));
    }
    const relayed = logged(hub, marker).find((e) => (e.output as { tenant?: string })?.tenant === "bob");
    assert.ok(relayed, "alice's own fields are kept, as data under output");
    assert.equal(relayed.level, "error", "at the level she logged");
  });

  test("a flood of 100k stderr lines is cut off with a summary; the hub keeps serving", async () => {
    const marker = `flood-${randomBytes(4).toString("hex")}`;
    const before = droppedFromAlice(hub, /^dropped \d+ lines/);
    await emit(alice, { stderr: [marker], times: 100_000 });
    // every line is either in the log or counted in a summary
    const relayed = () => logged(hub, marker).length;
    await until("every flooded line to be relayed or counted", () => relayed() + droppedFromAlice(hub, /^dropped \d+ lines/) - before === 100_000, 30_000);
    assert.ok(relayed() < 100_000, `the hub logged all ${relayed()} lines`);
    assert.equal(textOf(await call(bob, "loud_emit", {})), "wrote 0 stdout and 0 stderr lines");
    assert.equal((await fetch(hub.origin + "/", { headers: auth(KEY_A) })).status, 200);
  });

  test("a stderr line too long is cut, not held whole", async () => {
    const marker = `long-${randomBytes(4).toString("hex")}`;
    await emit(alice, { stderr: [marker + "x".repeat(1024 * 1024)] });
    const entry = await until("the long line to be logged", () => logged(hub, marker)[0]);
    assert.match(String(entry.output), /more bytes dropped\)$/);
    assert.ok(String(entry.output).length < 64 * 1024, `logged ${String(entry.output).length} characters`);
  });

  test("a flood of resource updates is cut off with a summary", async () => {
    const before = droppedFromAlice(hub, /^dropped \d+ notifications/);
    const seenBefore = aliceSeen.updated.length;
    await emit(alice, { stdout: [rpc("notifications/resources/updated", { uri: "loud://notes" })], times: 5000 });
    const delivered = () => aliceSeen.updated.length - seenBefore;
    await until("every update to be delivered or counted", () => delivered() + droppedFromAlice(hub, /^dropped \d+ notifications/) - before === 5000, 30_000);
    assert.ok(delivered() < 5000, `all ${delivered()} updates went through`);
  });

  test("tools/list_changed in a loop costs a few refreshes, and the last change is not lost", async () => {
    const before = aliceSeen.toolListChanged;
    await emit(alice, { stdout: [rpc("notifications/tools/list_changed", {})], times: 1000 });
    await until("the trailing refresh to reach alice", () => aliceSeen.toolListChanged - before >= 2);
    // a refresh per notification would go on arriving after these: a later change of another list,
    // which takes the same way behind them, marks that they are all through
    const promptsBefore = aliceSeen.promptListChanged;
    await emit(alice, { stdout: [rpc("notifications/prompts/list_changed", {})] });
    await until("the later change to reach alice", () => aliceSeen.promptListChanged > promptsBefore);
    assert.ok(aliceSeen.toolListChanged - before < 100, `${aliceSeen.toolListChanged - before} list refreshes for 1000 notifications`);
  });
});
