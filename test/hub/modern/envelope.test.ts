// What a 2026-07-28 request must carry, and what the hub answers when it does not: the revision's
// errors for a missing or unsupported version and a malformed envelope, and the header checks
// (Mcp-Method, Mcp-Name) that stop a request whose headers say one thing and body another, as an
// agent behind a header-routing proxy would send to get a write past a read-only rule.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { call, startHub, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { envelope, MODERN, postModern } from "./modern-client.js";

const HEADER_MISMATCH = -32020;
const UNSUPPORTED_VERSION = -32022;
const INVALID_PARAMS = -32602;

describe("the 2026-07-28 envelope and headers", () => {
  let hub: TestHub;

  before(async () => {
    // one session per tenant, idle after a second: the modern context must be under neither
    hub = await startHub({ servers: ["file"], env: { AGENTBOX_MAX_SESSIONS: "1", AGENTBOX_SESSION_IDLE_MS: "1000" } });
  });
  after(() => hub?.stop());

  test("a well-formed request is answered, with the serverInfo stamp", async () => {
    const { res, json } = await postModern(hub, { id: 1, method: "tools/list", params: { _meta: envelope() } });
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(json?.result?.tools));
    assert.equal((json?.result?._meta as Record<string, { name: string }>)["io.modelcontextprotocol/serverInfo"].name, "agentbox");
  });

  test("an unsupported protocol version is refused with -32022 naming the supported one", async () => {
    const { json } = await postModern(
      hub,
      { id: 2, method: "tools/list", params: { _meta: envelope({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" }) } },
      { "MCP-Protocol-Version": "2099-01-01" },
    );
    assert.equal(json?.error?.code, UNSUPPORTED_VERSION, JSON.stringify(json));
    assert.match(JSON.stringify(json?.error), new RegExp(MODERN));
  });

  test("a claim with a malformed envelope is refused by the modern path, never served as 2025", async () => {
    const { json, text } = await postModern(hub, {
      id: 3,
      method: "tools/list",
      params: { _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": "all of them" }) },
    });
    assert.equal(json?.error?.code, INVALID_PARAMS, text);
    assert.match(json?.error?.message ?? "", /clientCapabilities/);
  });

  test("a modern version header without the envelope is -32602, not a 2025 request", async () => {
    const { res, json, text } = await postModern(hub, { id: 4, method: "tools/list", params: {} });
    assert.equal(res.status, 400);
    assert.equal(json?.error?.code, INVALID_PARAMS, text);
    assert.match(json?.error?.message ?? "", /envelope/);
  });

  test("an enveloped request without the MCP-Protocol-Version header is refused", async () => {
    const { res, json, text } = await postModern(hub, { id: 5, method: "tools/list", params: { _meta: envelope() } }, { "MCP-Protocol-Version": "" });
    assert.equal(res.status, 400, text);
    assert.match(json?.error?.message ?? "", /MCP-Protocol-Version/i, text);
  });

  test("Mcp-Method disagreeing with the body is -32020", async () => {
    const { res, json, text } = await postModern(hub, { id: 6, method: "tools/list", params: { _meta: envelope() } }, { "Mcp-Method": "prompts/list" });
    assert.equal(res.status, 400);
    assert.equal(json?.error?.code, HEADER_MISMATCH, text);
  });

  test("Mcp-Name naming a harmless tool while the body calls another is -32020, and the call never runs", async () => {
    const { res, json, text } = await postModern(
      hub,
      { id: 7, method: "tools/call", params: { name: "file_write", arguments: { path: "smuggled.txt", content: "x" }, _meta: envelope() } },
      { "Mcp-Name": "file_read" },
    );
    assert.equal(res.status, 400);
    assert.equal(json?.error?.code, HEADER_MISMATCH, text);
    assert.ok(!fs.existsSync(path.join(hub.workspace, "smuggled.txt")), "the mismatched call ran");
    const honest = await postModern(hub, {
      id: 8,
      method: "tools/call",
      params: { name: "file_write", arguments: { path: "honest.txt", content: "x" }, _meta: envelope() },
    });
    assert.equal(honest.res.status, 200, honest.text);
    assert.ok(fs.existsSync(path.join(hub.workspace, "honest.txt")));
  });

  test("a batch holding an enveloped request is refused, not served as 2025", async () => {
    const res = await fetch(hub.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify([{ jsonrpc: "2.0", id: 9, method: "tools/list", params: { _meta: envelope() } }]),
    });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.doesNotMatch(text, /"tools"/);
  });

  test("2025 methods the revision dropped are unknown to it, even enveloped", async () => {
    for (const method of ["logging/setLevel", "resources/subscribe"]) {
      const { json, text } = await postModern(hub, { id: 10, method, params: { level: "debug", uri: "x://y", _meta: envelope() } });
      assert.equal(json?.error?.code, -32601, `${method}: ${text}`);
    }
  });

  test("the tenant's modern context takes no session slot and never idles out", async () => {
    const contextId = async () => {
      const { json, text } = await postModern(hub, { id: 11, method: "tools/call", params: { name: "hub_sessions", arguments: {}, _meta: envelope() } });
      return ((json?.result as { structuredContent?: { id: string; transport: string } }).structuredContent ?? assert.fail(text)) as {
        id: string;
        transport: string;
      };
    };
    const context = await contextId();
    assert.equal(context.transport, "modern");
    // the one slot is still free for a 2025 client, and then taken
    const legacy = await hub.connect();
    assert.equal(((await call(legacy, "hub_sessions")).structuredContent as { transport: string }).transport, "streamable");
    await assert.rejects(hub.connect(), /Too many sessions/);
    // the 2025 session idles out; the modern context, idle as long, lives on
    // (watched from GET /, which touches no session: the hub's report counts them)
    const open = async () => ((await (await fetch(hub.origin + "/")).json()) as { sessions: number }).sessions;
    assert.equal(await open(), 2);
    await until("the idle 2025 session to be closed", async () => (await open()) === 1);
    assert.equal((await contextId()).id, context.id);
    await legacy.close().catch(() => undefined);
  });
});
