// Three replicas behind real nginx with the shipped config (deploy/nginx): sessions stay on the
// replica that minted them, losing a replica breaks only its own sessions (404, "session not
// found"), new sessions land on live replicas, and a sessionless client keeps its state.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { call, startHub, textOf, type TestHub } from "../helpers/hub.js";
import { routeTo, type Router } from "./router.js";

const NAMES = ["r1", "r2", "r3"];

async function connect(origin: string, key: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "router-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", origin), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return { client, transport };
}

async function replicaOf(client: Client): Promise<string> {
  return String((await call(client, "hub_status")).structuredContent?.replica);
}

/** A plain JSON-RPC POST without a session, as a simple HTTP client sends it. */
async function plainCall(origin: string, key: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${origin}/mcp`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as { result: { content: Array<{ text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean } };
}

interface Agent {
  key: string;
  client: Client;
  transport: StreamableHTTPClientTransport;
  replica: string;
  file: string;
  text: string;
}

describe("three replicas behind nginx (deploy/nginx)", () => {
  const hubs = new Map<string, TestHub>();
  let router: Router;
  /** Every agent a test connected, closed at the end. */
  const agents: Agent[] = [];

  /**
   * Agents, one API key each, until there are `total` and each replica has `each` (the router
   * hashes keys over the replicas, so enough keys reach all three); each writes a file of its own.
   */
  async function spread(prefix: string, total: number, each: number): Promise<Agent[]> {
    const spread: Agent[] = [];
    const per = new Map<string, number>(NAMES.map((n) => [n, 0]));
    for (let i = 0; spread.length < total || [...per.values()].some((n) => n < each); i++) {
      assert.ok(i < 100, `100 keys did not reach every replica ${each} times: ${JSON.stringify([...per])}`);
      const key = `${prefix}-${i}`;
      const { client, transport } = await connect(router.origin, key);
      const replica = await replicaOf(client);
      assert.ok(transport.sessionId?.startsWith(`${replica}.`), `session ${transport.sessionId} was minted by ${replica}`);
      const file = `notes/${key}.txt`;
      const text = `${key} on ${replica}`;
      assert.equal((await call(client, "file_write", { path: file, content: text })).isError, undefined);
      const agent = { key, client, transport, replica, file, text };
      spread.push(agent);
      agents.push(agent);
      per.set(replica, per.get(replica)! + 1);
    }
    return spread;
  }

  before(async () => {
    const started = await Promise.all(NAMES.map((name) => startHub({ servers: ["file"], env: { AGENTBOX_REPLICA: name } })));
    started.forEach((hub, i) => hubs.set(NAMES[i], hub));
    router = await routeTo(hubs);
  });
  after(async () => {
    await Promise.allSettled(agents.map((s) => s.client.close()));
    await router?.stop();
    await Promise.allSettled([...hubs.values()].map((h) => h.stop()));
  });

  it("spreads a dozen sessions over all three replicas, each keeping its state across calls", async () => {
    const sessions = await spread("agent", 12, 2);
    // each replica has its own workspace: reading it back proves every call reached the same one
    for (const s of sessions) {
      assert.match(textOf(await call(s.client, "file_read", { path: s.file })), new RegExp(s.text));
      assert.equal(await replicaOf(s.client), s.replica);
    }
  });

  it("keeps a sessionless plain JSON client on one replica, so its state holds", async () => {
    const key = "plain-client";
    await plainCall(router.origin, key, "file_write", { path: "plain.txt", content: "written without a session" });
    const replica = (await plainCall(router.origin, key, "hub_status", {})).result.structuredContent?.replica;
    assert.ok(NAMES.includes(String(replica)));
    for (let i = 0; i < 5; i++) {
      const read = await plainCall(router.origin, key, "file_read", { path: "plain.txt" });
      assert.equal(read.result.isError, undefined, JSON.stringify(read));
      assert.match(read.result.content[0].text, /written without a session/);
    }
  });

  it("routes the legacy SSE transport's messages by their sessionId", async () => {
    const client = new Client({ name: "router-test-sse", version: "1.0.0" });
    const transport = new SSEClientTransport(new URL("/sse", router.origin), { requestInit: { headers: { Authorization: "Bearer sse-agent" } } });
    await client.connect(transport);
    try {
      const replica = await replicaOf(client);
      // the SDK keeps the endpoint the server named (with its sessionId) to itself
      const sessionId = (transport as unknown as { _endpoint?: URL })._endpoint?.searchParams.get("sessionId");
      assert.ok(sessionId?.startsWith(`${replica}.`), String(sessionId));
      await call(client, "file_write", { path: "sse.txt", content: "over legacy SSE" });
      assert.match(textOf(await call(client, "file_read", { path: "sse.txt" })), /over legacy SSE/);
    } finally {
      await client.close();
    }
  });

  it("answers a session id naming no replica, or forged to reach elsewhere, with 404 session not found", async () => {
    for (const id of ["r9.0b5a7c9e-0000-4000-8000-000000000000", "no-dot-at-all", "agentbox_any.x", "127.0.0.1:22.x", "R1.x", "-r1.x", "../r1.x"]) {
      const res = await fetch(`${router.origin}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": id },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      assert.equal(res.status, 404, id);
      const body = (await res.json()) as { error: { code: number; message: string } };
      assert.equal(body.error.code, -32001, id);
      assert.match(body.error.message, /Session not found/);
    }
    // the legacy transport's query argument too
    const res = await fetch(`${router.origin}/messages?sessionId=nowhere.1`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    assert.equal(res.status, 404);
  });

  it("breaks only the lost replica's sessions, with a clear 404, and sends new sessions to live ones", async () => {
    const victim = "r2";
    const sessions = await spread("survivor", 3, 1);
    const lost = sessions.filter((x) => x.replica === victim);
    const hub = hubs.get(victim)!;
    const exited = new Promise((r) => hub.process.once("exit", r));
    hub.process.kill("SIGKILL");
    await exited;

    for (const s of sessions) {
      if (s.replica === victim) {
        await assert.rejects(call(s.client, "file_read", { path: s.file }), (err: Error & { code?: number }) => {
          assert.equal(err.code, 404);
          assert.match(err.message, /Session not found: its replica is gone/);
          return true;
        });
      } else {
        assert.match(textOf(await call(s.client, "file_read", { path: s.file })), new RegExp(s.text));
      }
    }
    // the agents whose key hashed to the lost replica start over on a live one
    for (const s of lost) {
      const { client } = await connect(router.origin, s.key);
      const replica = await replicaOf(client);
      assert.notEqual(replica, victim);
      assert.ok(NAMES.includes(replica));
      await client.close();
    }
  });
});
