// Requests built to break the hub for everyone: a call too large for a child's reader, a child
// that stops reading, ids the SDK cannot carry, a "__proto__" key, rebinding Host names, foreign
// Origins, OAuth probes. Each is answered clearly and every server keeps serving.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { both, initialize, json, post } from "../../helpers/raw-http.js";
import { until } from "../../helpers/wait.js";

/** A raw request with any Host header (fetch would not let us set it). */
function rawPost(hub: TestHub, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const url = new URL(hub.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: url.port, path: "/mcp", method: "POST", headers: { ...json, ...headers } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const listBody = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

describe("hostile input", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      // the server made to stop reading is one of its own: a restart it is in does not reach the other tests
      extraServers: { echo: fixture("echo-server"), wedged: fixture("echo-server") },
      env: { AGENTBOX_HOST: "0.0.0.0", AGENTBOX_CHILD_PING_MS: "1000" },
    });
  });
  after(() => hub.stop());

  test("an 11 MiB call is refused with the limit and the way around it; every server keeps serving", async () => {
    const client = await hub.connect();
    const huge = "x".repeat(11 * 1024 * 1024);
    for (const [tool, args] of [
      ["terminal_exec", { command: `echo ${huge}` }],
      ["echo_echo", { text: huge }],
    ] as const) {
      const result = await call(client, tool, args);
      assert.equal(result.isError, true, tool);
      assert.match(textOf(result), /takes at most 8\.0 MiB per message.*in parts/s, tool);
    }
    assert.equal(textOf(await call(client, "echo_echo", { text: "still here" })), "still here");
    assert.match(textOf(await call(client, "terminal_exec", { command: "echo fine" })), /fine/);
  });

  test("a child that stops reading is restarted, and its next calls work", async () => {
    const client = await hub.connect();
    assert.equal(textOf(await call(client, "wedged_deaf")), "no longer listening");
    const stuck = await call(client, "wedged_echo", { text: "anyone?" });
    assert.equal(stuck.isError, true);
    assert.match(textOf(stuck), /exited while running wedged_echo/);
    const back = await until("the restarted server to answer", async () => {
      const r = await call(client, "wedged_echo", { text: "back" });
      if (!r.isError) return textOf(r);
      assert.match(textOf(r), /restarting|failing/);
      return undefined;
    });
    assert.equal(back, "back");
  });

  test("a malformed tools/call gets InvalidParams saying which part is wrong, in a session and without one", async () => {
    const sessionId = await initialize(hub);
    const cases: [unknown, RegExp][] = [
      [{ name: "echo_echo", arguments: ["ping"] }, /params\.arguments must be an object .*not an array/],
      [{ arguments: { text: "ping" } }, /params\.name must be the tool's name as a string, not a undefined/],
      ["echo_echo", /params must be an object .*not a string/],
      [{ name: "echo_echo", _meta: 7 }, /params\._meta must be an object, not a number/],
    ];
    for (const headers of [json, { ...both, "mcp-session-id": sessionId }]) {
      for (const [params, expected] of cases) {
        const { res, body: reply } = await post(hub, { jsonrpc: "2.0", id: 9, method: "tools/call", params }, headers);
        assert.equal(res.status, 200);
        assert.equal(reply.id, 9);
        assert.equal(reply.error.code, -32602, JSON.stringify(params));
        assert.match(reply.error.message, expected);
      }
    }
    // other methods, on the SDK's path: the same kind of answer, not a schema dump as an internal error
    for (const [method, params, expected] of [
      ["resources/read", { uri: 5 }, /^Invalid resources\/read request: .*expected string, received number.*params\.uri/],
      ["prompts/get", {}, /^Invalid prompts\/get request: .*params\.name/],
      ["logging/setLevel", { level: "loud" }, /^Invalid logging\/setLevel request: .*params\.level/],
    ] as const) {
      const { body: reply } = await post(
        hub,
        { jsonrpc: "2.0", id: 11, method, params },
        { ...json, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      );
      assert.equal(reply.error?.code, -32602, method);
      assert.match(reply.error.message, expected, method);
    }
    const ok = await post(hub, { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "echo_echo", arguments: { text: "fine" } } });
    assert.equal(ok.body.result.content[0].text, "fine");
  });

  test("ids the SDK cannot carry and a __proto__ key are answered, never left hanging", async () => {
    for (const id of ["1.5", "1e300", "18446744073709551616"]) {
      const res = await fetch(hub.url, {
        method: "POST",
        headers: json,
        body: `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`,
        signal: AbortSignal.timeout(10_000),
      });
      assert.equal(res.status, 400, id);
      assert.match((await res.json()).error.message, /id must be a string or an integer/, id);
    }
    const proto = await fetch(hub.url, {
      method: "POST",
      headers: json,
      body: '{"jsonrpc":"2.0","id":7,"method":"tools/list","__proto__":{"polluted":true},"params":{"__proto__":{"x":1}}}',
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(proto.status, 200);
    assert.equal((await proto.json()).id, 7);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("without a key, rebinding Host names and foreign Origins are refused on every bind", async () => {
    for (const host of ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "evil.example:80"]) {
      const res = await rawPost(hub, { Host: host }, listBody);
      assert.equal(res.status, 403, host);
      assert.match(res.text, /not allowed/, host);
    }
    // not even a valid Host: refused before or by the check
    assert.ok([400, 403].includes((await rawPost(hub, { Host: "127.0.0.1@evil.example" }, listBody)).status));
    for (const host of ["127.0.0.1", `localhost:${new URL(hub.url).port}`, "[::1]", "10.1.2.3:8080"]) {
      assert.equal((await rawPost(hub, { Host: host }, listBody)).status, 200, host);
    }
    for (const origin of ["https://evil.example", "http://127.0.0.1.evil.example", "null"]) {
      assert.equal((await rawPost(hub, { Host: "127.0.0.1", Origin: origin }, listBody)).status, 403, origin);
    }
    assert.equal((await rawPost(hub, { Host: "127.0.0.1", Origin: "http://localhost:3000" }, listBody)).status, 200);
  });

  test("protocol errors carry the reason once, without a doubled 'MCP error' prefix", async () => {
    const client = await hub.connect();
    await assert.rejects(
      () => client.callTool({ name: "no_such_tool", arguments: {} }),
      (err: McpError) => {
        assert.equal((err.message.match(/MCP error/g) ?? []).length, 1, err.message);
        assert.match(err.message, /Unknown tool 'no_such_tool'/);
        return true;
      },
    );
  });
});

describe("with an API key, OAuth probes get 404, not a login", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_API_KEY: "probe-key-123" } });
  });
  after(() => hub.stop());

  test("discovery, registration and authorization paths are plain 404s; /mcp asks for the key", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-authorization-server",
      "/.well-known/openid-configuration",
      "/register",
      "/authorize",
      "/token",
    ]) {
      const res = await fetch(hub.origin + path, { method: path === "/register" || path === "/token" ? "POST" : "GET" });
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get("www-authenticate"), null, path);
    }
    const mcp = await fetch(hub.url, { method: "POST", headers: json, body: listBody });
    assert.equal(mcp.status, 401);
    assert.match((await mcp.json()).error.message, /Authorization: Bearer <key>/);
  });
});
