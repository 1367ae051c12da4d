// A 2026-07-28 server spawned over stdio is one of its tenant's processes like any stdio child:
// under the tenant's own uid, restarted when it exits (what it wrote on stderr in the hub's log),
// and what it sends unasked reaches only its own tenant's clients: alice's server forging an update
// of a resource bob subscribed to on his own server is no news to bob.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const asRoot = process.getuid?.() === 0;
const URI = "note://pipe/greeting";

describe("a 2026-07-28 server over stdio, for two tenants", () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;

  before(async () => {
    hub = await startHub({
      extraServers: { pipe: { ...fixture("modern-stdio-server"), env: { NOTES_NAME: "pipe" }, protocol: "2026-07-28" } },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
  });
  after(async () => {
    await Promise.allSettled([alice?.close(), bob?.close()]);
    await hub?.stop();
  });

  const status = async (key: string) =>
    ((await (await fetch(hub.origin + "/", { headers: auth(key) })).json()).servers as Array<{ name: string; pid: number | null; state: string }>).find(
      (s) => s.name === "pipe",
    )!;

  test("each tenant's runs under the tenant's own uid", { skip: asRoot ? false : "needs root: tenants get uids of their own only then" }, async () => {
    const uidA = textOf(await call(alice, "pipe_whoami"));
    const uidB = textOf(await call(bob, "pipe_whoami"));
    assert.notEqual(uidA, uidB);
    for (const uid of [uidA, uidB]) {
      assert.notEqual(uid, "0");
      assert.notEqual(Number(uid), process.getuid!());
    }
  });

  test("it is restarted when it exits, and what it said on stderr is in the hub's log", { timeout: 60_000 }, async () => {
    assert.equal(textOf(await call(alice, "pipe_add", { a: 1, b: 2 })), "3");
    const before = (await status(KEY_A)).pid;
    assert.ok(before);
    const crashed = await call(alice, "pipe_crash").catch((err: Error) => err);
    assert.ok(crashed instanceof Error || crashed.isError, "the call that ended the process fails");
    await until("the server to be back", async () => {
      const now = await status(KEY_A);
      return now.state === "ready" && now.pid !== before && now.pid !== null;
    });
    assert.equal(textOf(await call(alice, "pipe_add", { a: 2, b: 2 })), "4");
    assert.ok(
      hub.logs.some((l) => l.includes("notes server crashing on purpose") && l.includes("alice")),
      "its stderr line, named to its tenant",
    );
    // bob's process was never touched
    assert.equal(textOf(await call(bob, "pipe_add", { a: 5, b: 5 })), "10");
  });

  test("its forged update of a resource reaches only its own tenant's subscribers", { timeout: 60_000 }, async () => {
    const heard = { alice: [] as string[], bob: [] as string[] };
    alice.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.alice.push(n.params.uri));
    bob.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.bob.push(n.params.uri));
    for (const client of [alice, bob]) {
      await client.listResources();
      await client.subscribeResource({ uri: URI });
    }
    await call(alice, "pipe_touch_uri", { uri: URI });
    // alice hearing it means the hub has handed it on: bob would have heard by now too
    await until("alice's server's update to reach alice", () => heard.alice.includes(URI));
    await call(bob, "pipe_touch");
    await until("bob's own server's update to reach bob", () => heard.bob.includes(URI));
    assert.deepEqual(heard.bob, [URI], "bob heard his own server's update only");
  });
});
