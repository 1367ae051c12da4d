// Every way a client reaches the hub: SDK Streamable HTTP, plain JSON POSTs, legacy SSE.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { both, eventStream, initialize, json, post, readEvents } from "../../helpers/raw-http.js";
import { until } from "../../helpers/wait.js";

describe("transports", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_MAX_BODY_BYTES: "65536" } });
  });
  after(() => hub.stop());

  test("a plain JSON client needs no session, no Accept and no initialize", async () => {
    const list = await post(hub, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    assert.equal(list.res.status, 200);
    assert.match(list.res.headers.get("content-type")!, /application\/json/);
    assert.ok(list.body.result.tools.some((t: { name: string }) => t.name === "echo_echo"));
    const called = await post(hub, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo_echo", arguments: { text: "plain" } } });
    assert.deepEqual(called.body, { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "plain" }] } });
  });

  test("a plain JSON client's calls share one implicit session per client", async () => {
    const whoami = () => post(hub, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo_whoami", arguments: {} } });
    const first = (await whoami()).body.result.content[0].text;
    assert.equal((await whoami()).body.result.content[0].text, first);
  });

  test("a plain JSON client can initialize and then use its session, getting JSON back", async () => {
    const init = await post(hub, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
    });
    assert.equal(init.res.status, 200);
    assert.equal(init.body.result.serverInfo.name, "agentbox");
    const sessionId = init.res.headers.get("mcp-session-id")!;
    assert.ok(sessionId);
    const called = await post(
      hub,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo_echo", arguments: { text: "in session" } } },
      { ...json, "mcp-session-id": sessionId },
    );
    assert.equal(called.body.result.content[0].text, "in session");
  });

  test("a session's Accept is read whatever its case and parameters: SSE named in capitals is SSE, SSE refused with q=0 is JSON", async () => {
    const sessionId = await initialize(hub);
    const list = (accept: string) =>
      post(
        hub,
        { jsonrpc: "2.0", id: 5, method: "tools/list" },
        { "Content-Type": "Application/JSON; charset=UTF-8", Accept: accept, "mcp-session-id": sessionId },
      );
    const shouted = await list("Application/JSON, Text/Event-Stream");
    assert.equal(shouted.res.status, 200, shouted.text);
    assert.equal(shouted.res.headers.get("content-type"), "text/event-stream");
    assert.match(shouted.text, /^data: .*"echo_echo"/m);
    const refused = await list("application/json, text/event-stream;q=0");
    assert.equal(refused.res.status, 200, refused.text);
    assert.equal(refused.res.headers.get("content-type"), "application/json");
    assert.ok(refused.body.result.tools.some((t: { name: string }) => t.name === "echo_echo"));
  });

  test("a JSON-RPC batch gets an array of responses", async () => {
    const batch = await post(hub, [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo_echo", arguments: { text: "a" } } },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo_echo", arguments: { text: "b" } } },
    ]);
    assert.ok(Array.isArray(batch.body), batch.text);
    assert.deepEqual(batch.body.map((r: { id: number }) => r.id).sort(), [1, 2]);
  });

  test("malformed JSON and non-JSON-RPC bodies get clear JSON-RPC errors, and the hub keeps serving", async () => {
    const broken = await post(hub, "{ not json");
    assert.equal(broken.res.status, 400);
    assert.equal(broken.body.error.code, -32700);
    assert.match(broken.body.error.message, /not valid JSON/);
    const wrongShape = await post(hub, { hello: "world" });
    assert.equal(wrongShape.res.status, 400);
    assert.ok(wrongShape.body.error.code < 0);
    // valid JSON without "jsonrpc" is an Invalid Request that names the field, not a parse error
    const noVersion = await post(hub, { id: 7, method: "tools/list" });
    assert.equal(noVersion.res.status, 400);
    assert.deepEqual(noVersion.body.error, {
      code: -32600,
      message: 'Invalid Request: the "jsonrpc" field is missing; every message carries "jsonrpc": "2.0".',
    });
    assert.equal(noVersion.body.id, 7);
    const oldVersion = await post(hub, { jsonrpc: "1.0", id: 8, method: "tools/list" });
    assert.equal(oldVersion.body.error.code, -32600);
    assert.match(oldVersion.body.error.message, /"jsonrpc" must be "2\.0", not "1\.0"/);
    const unknownMethod = await post(hub, { jsonrpc: "2.0", id: 9, method: "no/such/method" });
    assert.equal(unknownMethod.body.error.code, -32601);
    const ok = await post(hub, { jsonrpc: "2.0", id: 10, method: "tools/list" });
    assert.equal(ok.res.status, 200);
  });

  test("a body over the limit is refused with 413 and a JSON-RPC error", async () => {
    const huge = await post(hub, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo_echo", arguments: { text: "x".repeat(100_000) } } });
    assert.equal(huge.res.status, 413);
    assert.match(huge.body.error.message, /too large.*65536/);
  });

  test("a chunked body with no declared length is held to the same limit, and a small one still works", async () => {
    const chunked = async (text: string) => {
      const body = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(text));
          c.close();
        },
      });
      const res = await fetch(hub.url, { method: "POST", headers: json, body, duplex: "half" } as RequestInit);
      return { res, body: await res.json() };
    };
    const call = (text: string) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo_echo", arguments: { text } } });
    const huge = await chunked(call("x".repeat(100_000)));
    assert.equal(huge.res.status, 413);
    assert.match(huge.body.error.message, /too large.*65536/);
    const small = await chunked(call("hello"));
    assert.equal(small.res.status, 200);
    assert.match(JSON.stringify(small.body.result), /hello/);
  });

  test("an unknown or deleted session gets 404", async () => {
    const unknown = await post(hub, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...both, "mcp-session-id": "no-such-session" });
    assert.equal(unknown.res.status, 404);
    assert.match(unknown.body.error.message, /Session not found/);

    const sessionId = await initialize(hub);
    const del = await fetch(hub.url, { method: "DELETE", headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" } });
    assert.equal(del.status, 200);
    const after = await post(hub, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...both, "mcp-session-id": sessionId });
    assert.equal(after.res.status, 404);
  });

  test("an unsupported MCP-Protocol-Version header is refused", async () => {
    const sessionId = await initialize(hub);
    const res = await post(
      hub,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { ...both, "mcp-session-id": sessionId, "mcp-protocol-version": "1999-01-01" },
    );
    assert.equal(res.res.status, 400);
    assert.match(res.text, /protocol version/i);
  });

  for (const version of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]) {
    test(`a client of protocol ${version} is served`, async () => {
      const { body } = await post(hub, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "v", version: "1" } },
      });
      assert.equal(body.result.protocolVersion, version);
    });
  }

  test("SSE replies carry progress, and a dropped stream resumes with Last-Event-ID", async () => {
    const sessionId = await initialize(hub);
    const headers = { ...both, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    const res = await fetch(hub.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "echo_slow", arguments: { steps: 6, delayMs: 150 }, _meta: { progressToken: "p1" } },
      }),
    });
    assert.match(res.headers.get("content-type")!, /text\/event-stream/);
    // read until the second progress event, then drop the connection
    const seen = await readEvents(res, (events) => events.filter((e) => e.data.includes("notifications/progress")).length >= 2);
    const lastId = [...seen].reverse().find((e) => e.id)?.id;
    assert.ok(lastId, "events carry ids");
    // until the server has noticed the dropped connection it answers 409; clients retry, so do we
    const resumed = await until("the stream to be resumable", async () => {
      const res = await fetch(hub.url, { method: "GET", headers: { ...headers, Accept: "text/event-stream", "last-event-id": lastId! } });
      if (res.status !== 409) return res;
      await res.body?.cancel();
      return undefined;
    });
    assert.equal(resumed.status, 200);
    const rest = await readEvents(resumed, (events) => events.some((e) => e.data.includes('"id":7')));
    const progress = rest.filter((e) => e.data.includes("notifications/progress")).map((e) => JSON.parse(e.data).params.progress);
    assert.ok(progress.length >= 1, "missed progress events are replayed");
    assert.ok(
      progress.every((p: number) => p > 2),
      `only events after the cursor: ${progress}`,
    );
    const final = JSON.parse(rest.find((e) => e.data.includes('"id":7'))!.data);
    assert.equal(final.result.content[0].text, "done after 6 steps");
  });

  test("the legacy HTTP+SSE transport works for old clients", async () => {
    const client = new Client({ name: "old", version: "1" });
    await client.connect(new SSEClientTransport(new URL("/sse", hub.origin)));
    try {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === "echo_echo"));
      assert.equal(textOf(await call(client, "echo_echo", { text: "legacy" })), "legacy");
    } finally {
      await client.close();
    }
  });

  test("a legacy POST that is not one JSON-RPC message, or not JSON, gets 400 and its stream goes on", async () => {
    const stream = eventStream(await fetch(`${hub.origin}/sse`, { headers: { Accept: "text/event-stream" } }));
    try {
      const endpoint = (await stream.next())!.data;
      const send = (body: string, type = "application/json") => fetch(hub.origin + endpoint, { method: "POST", headers: { "Content-Type": type }, body });
      const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
      // a batch passes the hub's JSON-RPC check but is not one message, which is all this transport takes
      const batch = await send(`[${ping(1)}]`);
      assert.equal(batch.status, 400);
      assert.match(await batch.text(), /Invalid message/);
      const plain = await send(ping(2), "text/plain");
      assert.equal(plain.status, 400);
      assert.match(await plain.text(), /Unsupported content-type: text\/plain/);
      const params = { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "raw", version: "1" } };
      const init = { jsonrpc: "2.0", id: 3, method: "initialize", params };
      assert.equal((await send(JSON.stringify(init))).status, 202);
      assert.equal(JSON.parse((await stream.next())!.data).id, 3, "only the initialize was answered");
      assert.equal((await send(ping(4))).status, 202);
      assert.deepEqual(JSON.parse((await stream.next())!.data), { jsonrpc: "2.0", id: 4, result: {} });
    } finally {
      await stream.close();
    }
  });

  test("the SDK client over Streamable HTTP lists and calls", async () => {
    const client = await hub.connect();
    assert.equal(textOf(await call(client, "echo_echo", { text: "sdk" })), "sdk");
  });

  test("an idle connection is kept longer than a router keeps its pooled ones (nginx: 60 s), not Node's 5 s", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const list = () =>
      new Promise<{ status: number; reused: boolean; keepAlive?: string }>((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
        const req = http.request(new URL("/mcp", hub.origin), { method: "POST", agent, headers: { "content-type": "application/json", ...both } }, (res) => {
          res
            .resume()
            .on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, keepAlive: res.headers["keep-alive"] as string | undefined }));
        });
        req.on("error", reject).end(body);
      });
    try {
      // Node writes the server's idle timeout into this header and closes the connection by the
      // same setting: reading it, not idling past 5 s, is how the test learns it
      const first = await list();
      assert.equal(first.status, 200);
      const seconds = Number(/^timeout=(\d+)$/.exec(first.keepAlive ?? "")?.[1]);
      assert.ok(seconds > 60, `Keep-Alive: ${first.keepAlive}`);
      assert.deepEqual(await list(), { status: 200, reused: true, keepAlive: first.keepAlive });
    } finally {
      agent.destroy();
    }
  });
});

describe("JSON responses for Streamable HTTP sessions (AGENTBOX_JSON_RESPONSES)", () => {
  test("a session's replies are plain JSON and the SDK client works with them", async () => {
    const hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_JSON_RESPONSES: "1" } });
    try {
      const sessionId = await initialize(hub);
      const res = await post(
        hub,
        { jsonrpc: "2.0", id: 5, method: "tools/list" },
        { ...both, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      );
      assert.match(res.res.headers.get("content-type")!, /application\/json/);
      assert.ok(res.body.result.tools.length > 0);
      const client = await hub.connect();
      assert.equal(textOf(await call(client, "echo_echo", { text: "json session" })), "json session");
    } finally {
      await hub.stop();
    }
  });
});
