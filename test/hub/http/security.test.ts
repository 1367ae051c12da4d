// API key, Origin/Host checks, CORS and rate limits, as a client meets them over HTTP.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { json } from "../../helpers/raw-http.js";
import { until } from "../../helpers/wait.js";

const listBody = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

describe("API key", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_API_KEY: "s3cret-key" } });
  });
  after(() => hub.stop());

  test("requests without the key get 401 with a JSON-RPC error; health stays open", async () => {
    const res = await fetch(hub.url, { method: "POST", headers: json, body: listBody });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate")!, /Bearer/);
    const body = await res.json();
    assert.equal(body.jsonrpc, "2.0");
    assert.match(body.error.message, /requires an API key/);
    const wrong = await fetch(hub.url, { method: "POST", headers: { ...json, Authorization: "Bearer nope" }, body: listBody });
    assert.equal(wrong.status, 401);
    assert.match((await wrong.json()).error.message, /not valid/);
    assert.equal((await fetch(hub.origin + "/healthz")).status, 200);
    assert.equal((await fetch(hub.origin + "/readyz")).status, 200);
    assert.equal((await fetch(hub.origin + "/metrics")).status, 401);
  });

  test("the key is accepted as Bearer, X-API-Key and ?api_key=", async () => {
    for (const [url, headers] of [
      [hub.url, { Authorization: "Bearer s3cret-key" }],
      [hub.url, { "X-API-Key": "s3cret-key" }],
      [`${hub.url}?api_key=s3cret-key`, {}],
    ] as const) {
      const res = await fetch(url, { method: "POST", headers: { ...json, ...headers }, body: listBody });
      assert.equal(res.status, 200, JSON.stringify(headers));
    }
    const client = await hub.connect({ headers: { Authorization: "Bearer s3cret-key" } });
    assert.equal(textOf(await call(client, "echo_echo", { text: "authorized" })), "authorized");
  });
});

describe("Origin, Host and CORS", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_CORS_ORIGINS: "https://playground.example" } });
  });
  after(() => hub.stop());

  test("a foreign Origin is refused with 403 (DNS rebinding)", async () => {
    const res = await fetch(hub.url, { method: "POST", headers: { ...json, Origin: "https://evil.example" }, body: listBody });
    assert.equal(res.status, 403);
    assert.match((await res.json()).error.message, /Origin 'https:\/\/evil.example' is not allowed/);
  });

  test("a Host header that is not loopback is refused on a loopback bind", async () => {
    const { request } = await import("node:http");
    const url = new URL(hub.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: "/mcp", method: "POST", headers: { ...json, Host: "attacker.example:80" } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
      req.end(listBody);
    });
    assert.equal(status, 403);
  });

  test("a configured origin gets CORS headers exposing the session id", async () => {
    const preflight = await fetch(hub.url, {
      method: "OPTIONS",
      headers: {
        Origin: "https://playground.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,mcp-session-id,mcp-protocol-version",
      },
    });
    assert.ok(preflight.status < 300);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "https://playground.example");
    assert.match(preflight.headers.get("access-control-allow-headers")!.toLowerCase(), /mcp-session-id/);
    const res = await fetch(hub.url, { method: "POST", headers: { ...json, Origin: "https://playground.example" }, body: listBody });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("access-control-expose-headers")!, /Mcp-Session-Id/);
  });

  test("a loopback origin (a local page) is allowed", async () => {
    const res = await fetch(hub.url, { method: "POST", headers: { ...json, Origin: "http://localhost:5173" }, body: listBody });
    assert.equal(res.status, 200);
  });
});

describe("rate limits", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      env: {
        AGENTBOX_RATE_LIMITS: JSON.stringify({ methods: { "tools/list": "2/min" }, tools: { "*": "100/min", "echo_e*": "3/min", echo_whoami: "1/min" } }),
      },
    });
  });
  after(() => hub.stop());

  test("a limited tools/call is a tool error with retryAfterMs; the most specific rule applies", async () => {
    const client = await hub.connect();
    for (let i = 0; i < 3; i++) assert.equal(textOf(await call(client, "echo_echo", { text: `${i}` })), `${i}`);
    const limited = await call(client, "echo_echo", { text: "one too many" });
    assert.equal(limited.isError, true);
    assert.match(textOf(limited), /Rate limit for echo_echo reached.*retry in \d+ s/);
    assert.equal(limited.structuredContent, undefined, "a client would validate it against the tool's outputSchema");
    assert.ok((limited._meta?.["agentbox/retryAfterMs"] as number) > 0);
    assert.equal((await call(client, "echo_whoami")).isError, undefined);
    assert.equal((await call(client, "echo_whoami")).isError, true, "echo_whoami has its own 1/min");
    assert.equal((await call(client, "echo_stats")).isError, undefined, "other tools keep their own budget");
    // without a key, budgets belong to sessions: another client on the same address has its own
    const other = await hub.connect();
    assert.equal(textOf(await call(other, "echo_echo", { text: "mine" })), "mine");
  });

  test("a limited tools/list is a JSON-RPC error with data.retryAfterMs, and HTTP 429 for plain JSON", async () => {
    const client = await hub.connect();
    await client.listTools();
    await client.listTools();
    await assert.rejects(
      () => client.listTools(),
      (err: McpError) => {
        assert.match(err.message, /Rate limit for tools\/list/);
        assert.ok((err.data as { retryAfterMs: number }).retryAfterMs > 0);
        return true;
      },
    );
    // sessionless clients share one implicit session per address, and with it one budget
    const plain = json;
    for (let i = 0; i < 2; i++) assert.equal((await fetch(hub.url, { method: "POST", headers: plain, body: listBody })).status, 200);
    const res = await fetch(hub.url, { method: "POST", headers: plain, body: listBody });
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get("retry-after")) >= 1);
    assert.ok((await res.json()).error.data.retryAfterMs > 0);
    const metrics = await (await fetch(hub.origin + "/metrics")).text();
    assert.match(metrics, /agentbox_rate_limit_hits_total\{kind="method",name="tools\/list"\} [1-9]/);
  });
});

describe("calls from code in a child", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: { ...fixture("echo-server"), env: { SESSION_CALLBACK: "1" } } }, env: { AGENTBOX_API_KEY: "k" } });
  });
  after(() => hub.stop());

  test("a session's token acts as that session only; any other token is no credential at all", async () => {
    const a = await hub.connect({ headers: { Authorization: "Bearer k" } });
    const b = await hub.connect({ headers: { Authorization: "Bearer k" } });
    const [idA, idB] = [textOf(await call(a, "echo_whoami")), textOf(await call(b, "echo_whoami"))];
    const tokenA = textOf(await call(a, "echo_token"));
    assert.ok(tokenA.length >= 32);
    const whoami = async (token: string, extra: Record<string, string> = {}) => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo_whoami", arguments: {} } });
      const res = await fetch(hub.url, { method: "POST", headers: { ...json, "X-Agentbox-Session-Token": token, ...extra }, body });
      return res.status === 200 ? (await res.json()).result.content[0].text : res.status;
    };
    assert.equal(await whoami(tokenA), idA);
    // naming B's session beside A's token changes nothing: the token alone says whose call it is
    assert.equal(await whoami(tokenA, { "Mcp-Session-Id": idB }), idA);
    const flipped = tokenA.slice(0, -1) + (tokenA.endsWith("A") ? "B" : "A");
    for (const forged of [flipped, "0".repeat(43), ""]) assert.equal(await whoami(forged), 401, forged);
  });
});

describe("sessions in /metrics", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_SESSION_IDLE_MS: "6000" } });
  });
  after(() => hub.stop());

  test("a session left open by a one-shot client is counted idle, not active", async () => {
    const client = await hub.connect();
    await call(client, "echo_echo", { text: "once" });
    const gauge = (text: string, name: string) => Number(new RegExp(`^${name}\\{transport="streamable"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
    const before = await (await fetch(hub.origin + "/metrics")).text();
    assert.equal(gauge(before, "agentbox_sessions_active"), 1);
    // idle after half the idle timeout, at most a minute: here 3 s; the session itself ends at 6 s,
    // so a hub that went on counting it active until then shows it neither active nor idle
    const later = await until("the session to stop counting as active", async () => {
      const text = await (await fetch(hub.origin + "/metrics")).text();
      return gauge(text, "agentbox_sessions_active") === 0 && text;
    });
    assert.equal(gauge(later, "agentbox_sessions_idle"), 1);
  });
});

describe("behind a trusted proxy", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_TRUSTED_PROXIES: "127.0.0.0/8" } });
  });
  after(() => hub.stop());

  const sessionOf = async (forwardedFor?: string) => {
    const headers: Record<string, string> = { ...json, ...(forwardedFor ? { "X-Forwarded-For": forwardedFor } : {}) };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo_whoami", arguments: {} } });
    return (await (await fetch(hub.url, { method: "POST", headers, body })).json()).result.content[0].text as string;
  };

  test("sessionless clients are told apart by X-Forwarded-For from the proxy, and a spoofed chain does not help", async () => {
    const a = await sessionOf("203.0.113.7");
    const b = await sessionOf("198.51.100.9");
    assert.notEqual(a, b);
    assert.equal(await sessionOf("203.0.113.7"), a, "the same client keeps its implicit session");
    // the client's own claim sits left of the address the proxy saw: the nearest untrusted hop counts
    assert.equal(await sessionOf("198.51.100.9, 203.0.113.7"), a);
  });
});
