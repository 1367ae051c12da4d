// A child speaking only 2026-07-28, spawned over stdio (`"protocol": "2026-07-28"` with a command)
// or reached over HTTP, behind the hub: listed and called from a 2025 session and a 2026 client,
// its log lines (sent during a call at the level the call names) reaching a 2025 session at the
// level it set and a 2026 client at the level its request's envelope names, and its resource
// updates and list changes (on a subscriptions/listen stream the hub opens to it) reaching clients
// of both eras that subscribed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { LoggingMessageNotificationSchema, ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { serverConfigSchema } from "../../../hub/config/schema.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { startModernNotices, type ModernNotices } from "../../fixtures/modern-notices.js";
import { callModern, connectModern } from "../modern/modern-client.js";

const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

describe("2026-07-28 children over stdio and HTTP", () => {
  let http: ModernNotices;
  let hub: TestHub;
  const closing: Array<{ close(): Promise<void> }> = [];
  const legacy = async () => {
    const client = await hub.connect();
    closing.push(client);
    return client;
  };
  const modern = async () => {
    const client = await connectModern(hub);
    closing.push(client);
    return client;
  };

  before(async () => {
    http = await startModernNotices("web");
    const stdio = { ...fixture("modern-stdio-server"), env: { NOTES_NAME: "pipe" }, protocol: "2026-07-28" as const };
    hub = await startHub({ extraServers: { pipe: stdio, web: { url: http.url, protocol: "2026-07-28" } } });
  });
  after(async () => {
    await Promise.allSettled(closing.map((c) => c.close()));
    await hub?.stop();
    await http?.close();
  });

  for (const name of ["pipe", "web"]) {
    describe(`reached ${name === "pipe" ? "over stdio" : "over HTTP"}`, () => {
      test("its tools are listed and called from a 2025 session and from a 2026 client", { timeout: 60_000 }, async () => {
        const old = await legacy();
        assert.ok((await old.listTools()).tools.some((t) => t.name === `${name}_add`));
        assert.equal(textOf(await call(old, `${name}_add`, { a: 2, b: 3 })), "5");
        const fresh = await modern();
        assert.ok((await fresh.listTools()).tools.some((t) => t.name === `${name}_add`));
        assert.equal(textOf(await callModern(fresh, `${name}_add`, { a: 20, b: 22 })), "42");
      });

      test("its log lines reach a 2025 session at the level the session set", { timeout: 60_000 }, async () => {
        const old = await legacy();
        const heard: Array<{ level: string; data: unknown }> = [];
        old.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.push(n.params));
        await old.setLoggingLevel("info");
        assert.equal(textOf(await call(old, `${name}_say`, { text: `${name} whisper`, level: "debug" })), `said ${name} whisper`);
        await call(old, `${name}_say`, { text: `${name} warning`, level: "warning" });
        await until("the warning to reach the session", () => heard.some((h) => h.data === `${name} warning`));
        assert.deepEqual(
          heard.map((h) => [h.level, h.data]),
          [["warning", `${name} warning`]],
        );
      });

      test("its log lines reach a 2026 client at the level its call names, and none when it names none", { timeout: 60_000 }, async () => {
        const fresh = await modern();
        const heard: unknown[] = [];
        fresh.setNotificationHandler("notifications/message", (n) => void heard.push(n.params.data));
        await fresh.callTool({ name: `${name}_say`, arguments: { text: `${name} unasked`, level: "error" } });
        await fresh.callTool({ name: `${name}_say`, arguments: { text: `${name} too quiet`, level: "info" }, _meta: { [LOG_LEVEL]: "notice" } });
        await fresh.callTool({ name: `${name}_say`, arguments: { text: `${name} loud`, level: "error" }, _meta: { [LOG_LEVEL]: "notice" } });
        await until("the loud line to reach the client", () => heard.includes(`${name} loud`));
        assert.deepEqual(heard, [`${name} loud`]);
      });

      test("its resource updates and list changes reach a subscribed 2025 session", { timeout: 60_000 }, async () => {
        const old = await legacy();
        const uri = `note://${name}/greeting`;
        assert.ok((await old.listResources()).resources.some((r) => r.uri === uri));
        const updated: string[] = [];
        let listChanged = 0;
        old.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
        old.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanged++);
        await old.subscribeResource({ uri });
        await call(old, `${name}_touch`);
        await until("the update to reach the session", () => updated.includes(uri));
        await call(old, `${name}_more`, { note: "legacy" });
        await until("the list change to reach the session", () => listChanged > 0);
        await until("the new note to be listed", async () => (await old.listResources()).resources.some((r) => r.uri === `note://${name}/legacy`));
        assert.equal(((await old.readResource({ uri })).contents[0] as { text?: string }).text, `greeting of ${name}`);
      });

      test("its resource updates and list changes reach a 2026 client's listen stream", { timeout: 60_000 }, async () => {
        const fresh = await modern();
        const uri = `note://${name}/greeting`;
        assert.ok((await fresh.listResources()).resources.some((r) => r.uri === uri));
        const updated: string[] = [];
        let listChanged = 0;
        fresh.setNotificationHandler("notifications/resources/updated", (n) => void updated.push(n.params.uri));
        fresh.setNotificationHandler("notifications/resources/list_changed", () => void listChanged++);
        const stream = await fresh.listen({ resourceSubscriptions: [uri], resourcesListChanged: true });
        try {
          await callModern(fresh, `${name}_touch`);
          await until("the update to reach the stream", () => updated.includes(uri));
          await callModern(fresh, `${name}_more`, { note: "modern" });
          await until("the list change to reach the stream", () => listChanged > 0);
        } finally {
          await stream.close();
        }
      });
    });
  }
});

describe("the protocol option", () => {
  test("names an era of its own, for a server reached over stdio or HTTP", () => {
    assert.ok(serverConfigSchema.safeParse({ url: "http://127.0.0.1:1/mcp", protocol: "auto" }).success);
    assert.ok(serverConfigSchema.safeParse({ command: "node", protocol: "2026-07-28" }).success);
    const bad = serverConfigSchema.safeParse({ command: "node", protocol: "2025-06-18" });
    assert.match(String(bad.error?.issues[0].message), /protocol is "2026-07-28" or "auto"/);
  });
});
