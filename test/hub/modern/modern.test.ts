// MCP 2026-07-28 on /mcp beside the 2025 eras: the SDK v2 client pinned to that revision (and in
// auto mode) connects, sees the tools a 2025 client sees, keeps its terminal and interpreter
// across calls without a session, and hears list changes on subscriptions/listen, while a 2025
// client on the same endpoint keeps its session. Raw requests check what the client hides.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import type { Client } from "@modelcontextprotocol/client";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { callModern, connectModern, envelope, MODERN, postModern } from "./modern-client.js";

const sessionIdOf = async (client: LegacyClient) => ((await call(client, "hub_sessions")).structuredContent as { id: string }).id;

describe("MCP 2026-07-28 beside the 2025 eras", () => {
  let hub: TestHub;
  let modern: Client;
  let legacy: LegacyClient;

  before(async () => {
    hub = await startHub({ servers: ["terminal", "file", "code"], extraServers: { loud: fixture("loud-server"), conformance: fixture("conformance-server") } });
    legacy = await hub.connect();
    modern = await connectModern(hub);
  });
  after(async () => {
    await modern?.close();
    await hub?.stop();
  });

  test("the pinned client negotiates 2026-07-28 via server/discover, with the hub's capabilities and instructions", async () => {
    assert.equal(modern.getProtocolEra(), "modern");
    assert.equal(modern.getNegotiatedProtocolVersion(), MODERN);
    const discover = modern.getDiscoverResult() as unknown as Record<string, unknown> & { capabilities: Record<string, unknown>; instructions?: string };
    assert.ok((discover.supportedVersions as string[]).includes(MODERN));
    assert.deepEqual(discover.capabilities.tools, { listChanged: true });
    assert.equal(discover.instructions, legacy.getInstructions(), "the same instructions as a 2025 session of the same selection");
    assert.equal(discover.cacheScope, "private");
    assert.equal(discover.ttlMs, 0);
  });

  test("it lists the same tools, in the same order, as a 2025 client", async () => {
    const names = (await modern.listTools()).tools.map((t) => t.name);
    const legacyNames = (await legacy.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, legacyNames);
    assert.ok(names.includes("file_write") && names.includes("terminal_session_create") && names.includes("hub_status"), names.join(","));
    assert.deepEqual(
      (await modern.listTools()).tools.map((t) => t.name),
      names,
      "the order is the same every time",
    );
  });

  test("it writes and reads a file", async () => {
    const written = await callModern(modern, "file_write", { path: "modern.txt", content: "written by a 2026 client" });
    assert.equal(written.isError, undefined, textOf(written));
    const read = await callModern(modern, "file_read", { path: "modern.txt" });
    assert.match(textOf(read), /written by a 2026 client/);
  });

  test("a terminal created in one call takes input in a later one (no session id travels)", async () => {
    const created = await callModern(modern, "terminal_session_create", {});
    assert.equal(created.isError, undefined, textOf(created));
    const id = (created.structuredContent as { id: string }).id;
    const sent = await callModern(modern, "terminal_session_send", { id, input: "echo modern-$((6*7))\n", waitFor: "modern-42" });
    assert.equal(sent.isError, undefined, textOf(sent));
    assert.match((sent.structuredContent as { output: string }).output, /modern-42/);
  });

  test("code_execute keeps its variables across calls", async () => {
    const first = await callModern(modern, "code_execute", { language: "python", code: "kept = 41" });
    assert.equal(first.isError, undefined, textOf(first));
    assert.match(textOf(await callModern(modern, "code_execute", { language: "python", code: "print(kept + 1)" })), /42/);
  });

  test("every 2026 client of a tenant shares its one default context; the 2025 client keeps its own session", async () => {
    const other = await connectModern(hub);
    try {
      const [mine, theirs] = await Promise.all([callModern(modern, "hub_sessions"), callModern(other, "hub_sessions")]);
      const id = (mine.structuredContent as { id: string }).id;
      assert.equal((theirs.structuredContent as { id: string }).id, id);
      const legacySession = await sessionIdOf(legacy);
      assert.notEqual(legacySession, id);
      // the 2025 client is still on the Streamable HTTP session it opened at initialize
      assert.equal((legacy.transport as { sessionId?: string }).sessionId, legacySession);
      assert.match(textOf(await call(legacy, "file_read", { path: "modern.txt" })), /written by a 2026 client/);
    } finally {
      await other.close();
    }
  });

  test("mode auto negotiates 2026-07-28", async () => {
    const auto = await connectModern(hub, { mode: "auto" });
    try {
      assert.equal(auto.getProtocolEra(), "modern");
      assert.equal(auto.getNegotiatedProtocolVersion(), MODERN);
      assert.ok((await auto.listTools()).tools.length > 0);
    } finally {
      await auto.close();
    }
  });

  test("the request's URL selection applies to that request", async () => {
    const narrowed = await connectModern(hub, { query: "?servers=file" });
    try {
      const names = (await narrowed.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("file_read"), names.join(","));
      assert.ok(!names.some((n) => n.startsWith("terminal_")), names.join(","));
      const refused = await callModern(narrowed, "terminal_exec", { command: "true" });
      assert.equal(refused.isError, true);
    } finally {
      await narrowed.close();
    }
    const bad = await postModern(hub, { id: 3, method: "tools/list", params: { _meta: envelope() } }, {}, "?servers=nosuch");
    assert.equal(bad.res.status, 400);
    assert.match(bad.json?.error?.message ?? "", /nosuch/);
  });

  test("lists and reads carry ttlMs and a private cacheScope", async () => {
    for (const method of ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]) {
      const { json } = await postModern(hub, { id: 1, method, params: { _meta: envelope() } });
      assert.equal(json?.result?.cacheScope, "private", `${method}: ${JSON.stringify(json)}`);
      assert.equal(json?.result?.ttlMs, 0, method);
      assert.equal(json?.result?.resultType, "complete", method);
    }
    const read = await postModern(hub, { id: 2, method: "resources/read", params: { uri: "loud://notes", _meta: envelope() } });
    assert.equal(read.json?.result?.cacheScope, "private", read.text);
    assert.equal(read.json?.result?.ttlMs, 0);
  });

  test("subscriptions/listen carries a child's tools list_changed", async () => {
    let changes = 0;
    modern.setNotificationHandler("notifications/tools/list_changed", () => void changes++);
    const subscription = await modern.listen({ toolsListChanged: true });
    try {
      assert.deepEqual(subscription.honoredFilter, { toolsListChanged: true });
      const rpc = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: {} });
      await callModern(modern, "loud_emit", { stdout: [rpc] });
      await until("the list change to reach the listen stream", () => changes > 0);
    } finally {
      await subscription.close();
    }
  });

  test("a child's log line reaches a 2026 call only at the level its envelope asks for", async () => {
    const line = (level: string, data: string) => JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level, data } });
    const emit = (meta: Record<string, unknown>) =>
      postModern(hub, {
        id: 5,
        method: "tools/call",
        params: { name: "loud_emit", arguments: { stdout: [line("debug", "quiet-line"), line("warning", "loud-line")] }, _meta: meta },
      });
    const asked = await emit(envelope({ "io.modelcontextprotocol/logLevel": "info" }));
    assert.match(asked.text, /loud-line/);
    assert.doesNotMatch(asked.text, /quiet-line/, "a line below the asked level was sent");
    assert.match(JSON.stringify(asked.json?.result), /wrote 2 stdout/);
    const unasked = await emit(envelope());
    assert.doesNotMatch(unasked.text, /loud-line/, "a request that named no level opted out of log lines");
    assert.match(JSON.stringify(unasked.json?.result), /wrote 2 stdout/);
  });

  test("a child's sampling request for a client without the capability fails the call with -32021 and the reason, and the hub keeps serving", async () => {
    await assert.rejects(callModern(modern, "conformance_test_sampling", { prompt: "hello" }), (err: { code?: number; message?: string }) => {
      assert.equal(err.code, -32021, String(err.message));
      assert.match(String(err.message), /needs the sampling client capability; this request did not declare it/);
      return true;
    });
    assert.match(textOf(await callModern(modern, "file_read", { path: "modern.txt" })), /written by a 2026 client/);
  });

  test("hub_end_session resets the tenant's context: its terminals end, the next call opens a fresh one", async () => {
    const before = (await callModern(modern, "hub_sessions")).structuredContent as { id: string; transport: string };
    assert.equal(before.transport, "modern");
    const terminal = ((await callModern(modern, "terminal_session_create", {})).structuredContent as { id: string }).id;
    const ended = await callModern(modern, "hub_end_session");
    assert.equal((ended.structuredContent as { ended: string }).ended, before.id);
    const after = (await callModern(modern, "hub_sessions")).structuredContent as { id: string };
    assert.notEqual(after.id, before.id);
    const gone = await callModern(modern, "terminal_session_send", { id: terminal, input: "true\n" });
    assert.equal(gone.isError, true, textOf(gone));
  });

  test("a plain JSON request without the envelope is still a 2025 request", async () => {
    const res = await fetch(hub.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    const body = (await res.json()) as { result: { tools: unknown[]; cacheScope?: string } };
    assert.ok(body.result.tools.length > 0);
    assert.equal(body.result.cacheScope, undefined, "2025 answers carry no 2026 cache fields");
  });
});
