// hub_sessions tells each client its protocol era and version, and lists its tenant's sessions and
// 2026 contexts with theirs: a 2025 session the version its initialize settled on, the tenant's
// 2026 context 2026-07-28, a plain JSON client none. Another tenant's sessions are never listed, and
// no session's id but the caller's own is ever shown (an id is all it takes to drive a session).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { callModern, connectModern } from "../modern/modern-client.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Entry {
  label: string;
  current: boolean;
  transport: string;
  era: string;
  protocolVersion: string | null;
  client?: string;
}
interface Sessions {
  id: string;
  transport: string;
  era: string;
  protocolVersion: string | null;
  tenantSessions: Entry[];
  total: number;
  nextOffset: number | null;
}

const JSON_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

/** A raw 2025 session that asks for an older revision than the SDK client would, so the version reported is the handshake's. */
async function initializeRaw(hub: TestHub, key: string, version: string, name = "raw-old-client"): Promise<string> {
  const res = await fetch(hub.url, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...auth(key) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name, version: "0.9" } },
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.text();
  const id = res.headers.get("mcp-session-id")!;
  const done = await fetch(hub.url, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...auth(key), "Mcp-Session-Id": id, "MCP-Protocol-Version": version },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  assert.equal(done.status, 202);
  return id;
}

/** A plain JSON tools/call: no initialize, no session header, no 2026 envelope. */
async function plainCall(hub: TestHub, key: string, name: string): Promise<Sessions> {
  const res = await fetch(hub.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", ...auth(key) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: {} } }),
  });
  const body = (await res.json()) as { result: { structuredContent: Sessions } };
  return body.result.structuredContent;
}

describe("hub_sessions: each client's era, its tenant's sessions only", () => {
  let hub: TestHub;
  let alice2025: Client;
  let alice2026: Awaited<ReturnType<typeof connectModern>>;
  let oldSessionId: string;

  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } } });
    alice2025 = await hub.connect({ headers: auth(KEY_A), name: "alice-v1-sdk" });
    alice2026 = await connectModern(hub, { headers: auth(KEY_A) });
    await callModern(alice2026, "echo_echo", { text: "hi" });
    oldSessionId = await initializeRaw(hub, KEY_A, "2025-03-26");
    await plainCall(hub, KEY_A, "hub_status");
  });
  after(() => hub?.stop());

  test("a 2025 session reports the version its initialize settled on, and lists every era of its tenant", async () => {
    const result = await call(alice2025, "hub_sessions");
    const data = result.structuredContent as unknown as Sessions;
    assert.equal(data.era, "legacy");
    assert.equal(data.protocolVersion, "2025-11-25");
    const byTransport = (t: string) => data.tenantSessions.filter((s) => s.transport === t);
    assert.equal(data.total, 4, JSON.stringify(data.tenantSessions));
    const [modern] = byTransport("modern");
    assert.deepEqual([modern?.era, modern?.protocolVersion, modern?.current], ["modern", "2026-07-28", false]);
    const [implicit] = byTransport("implicit");
    assert.deepEqual([implicit?.era, implicit?.protocolVersion], ["legacy", null]);
    const streamable = byTransport("streamable");
    assert.deepEqual(streamable.map((s) => [s.protocolVersion, s.client, s.current]).sort(), [
      ["2025-03-26", "raw-old-client 0.9", false],
      ["2025-11-25", "alice-v1-sdk 1.0.0", true],
    ]);
    // only the caller's own id: another session's would let this client drive it
    assert.ok(!JSON.stringify(result).includes(oldSessionId), "another session's id is never shown");
    assert.equal(JSON.stringify(data).split(data.id).length - 1, 1, "the caller's own id appears once, as its id");
    assert.match(textOf(result), /\* [0-9a-f]{8}\s+streamable\s+legacy 2025-11-25/);
  });

  test("the 2026 client is told it is in its tenant's 2026-07-28 context", async () => {
    const data = (await callModern(alice2026, "hub_sessions")).structuredContent as unknown as Sessions;
    assert.deepEqual([data.transport, data.era, data.protocolVersion], ["modern", "modern", "2026-07-28"]);
    assert.deepEqual(
      data.tenantSessions.filter((s) => s.current).map((s) => s.transport),
      ["modern"],
    );
  });

  test("a plain JSON client is a 2025 client with no negotiated version", async () => {
    const data = await plainCall(hub, KEY_A, "hub_sessions");
    assert.deepEqual([data.transport, data.era, data.protocolVersion], ["implicit", "legacy", null]);
  });

  test("another tenant sees none of them, from either era", async () => {
    const alice = ((await call(alice2025, "hub_sessions")).structuredContent as unknown as Sessions).tenantSessions.map((s) => s.label);
    const bob2025 = await hub.connect({ headers: auth(KEY_B) });
    const fromBob = (await call(bob2025, "hub_sessions")).structuredContent as unknown as Sessions;
    assert.deepEqual(
      fromBob.tenantSessions.map((s) => [s.transport, s.current]),
      [["streamable", true]],
    );
    const bob2026 = await connectModern(hub, { headers: auth(KEY_B) });
    const fromBob2026 = (await callModern(bob2026, "hub_sessions")).structuredContent as unknown as Sessions;
    assert.deepEqual(fromBob2026.tenantSessions.map((s) => s.transport).sort(), ["modern", "streamable"]);
    for (const label of [...fromBob.tenantSessions, ...fromBob2026.tenantSessions].map((s) => s.label)) assert.ok(!alice.includes(label), label);
    await bob2025.close();
    await bob2026.close();
  });

  test("the list pages: limit and offset, nextOffset to read on, and an offset past the end is refused", async () => {
    const first = (await call(alice2025, "hub_sessions", { limit: 3 })).structuredContent as unknown as Sessions;
    assert.equal(first.tenantSessions.length, 3);
    assert.equal(first.nextOffset, 3);
    const rest = (await call(alice2025, "hub_sessions", { offset: 3, limit: 3 })).structuredContent as unknown as Sessions;
    assert.equal(rest.nextOffset, null);
    const labels = [...first.tenantSessions, ...rest.tenantSessions].map((s) => s.label);
    assert.equal(new Set(labels).size, first.total, "every session once");
    const past = await call(alice2025, "hub_sessions", { offset: 50 });
    assert.equal(past.isError, true);
    assert.match(textOf(past), /offset 50 is past the end/);
  });

  test("a client's name is its own words: shown bounded, to its tenant only", async () => {
    const name = `<img src=x onerror="alert(1)">${"A".repeat(5000)}`;
    await initializeRaw(hub, KEY_A, "2025-11-25", name);
    const data = (await call(alice2025, "hub_sessions", { limit: 500 })).structuredContent as unknown as Sessions;
    const shown = data.tenantSessions.find((s) => s.client?.startsWith("<img"));
    assert.ok(shown, JSON.stringify(data.tenantSessions));
    assert.equal(shown.client!.length, 80, "cut to 80 characters");
  });
});

describe("hub_sessions over the legacy HTTP+SSE transport", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") } });
  });
  after(() => hub?.stop());

  test("an SSE session reports the version its initialize settled on", async () => {
    const client = new Client({ name: "sse-client", version: "2.0.0" });
    await client.connect(new SSEClientTransport(new URL("/sse", hub.origin)));
    const data = (await call(client, "hub_sessions")).structuredContent as unknown as Sessions;
    assert.deepEqual([data.transport, data.era, data.protocolVersion], ["sse", "legacy", "2025-11-25"]);
    assert.deepEqual(
      data.tenantSessions.map((s) => [s.transport, s.client, s.current]),
      [["sse", "sse-client 2.0.0", true]],
    );
    await client.close();
  });
});
