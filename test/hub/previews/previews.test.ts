// Previews through a real hub run as root (each tenant its own uid): apps started by tenants in
// terminal sessions open through the URL hub_preview returns, from a client that sends no header,
// and nothing of one tenant's app reaches through another tenant's preview, a tampered URL, or an
// ended one.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import WebSocket from "ws";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { callModern, connectModern } from "../modern/modern-client.js";
import { freePort, get, preview, startApp, startInTerminal, tenantPort, type PreviewData } from "./apps.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const PER_TENANT = 4;

function tamper(url: string): string {
  // the secret's last character changed: a URL one step from a real one
  return url.replace(/([a-z2-7])\/$/, (_m, c: string) => `${c === "a" ? "b" : "a"}/`);
}

function echo(url: string, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once("open", () => socket.send(message));
    socket.once("message", (data) => {
      resolve(String(data));
      socket.close();
    });
    socket.once("error", reject);
    socket.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
}

describe("previews of apps tenants run", () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  let pythonPort: number;
  let appPort: number;
  let python: PreviewData;
  let app: PreviewData;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_PREVIEW_DOMAIN: "localhost", AGENTBOX_PREVIEWS_PER_TENANT: String(PER_TENANT) },
    });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
    pythonPort = await tenantPort(hub, KEY_A);
    await startInTerminal(
      alice,
      `mkdir -p site && printf '<h1>alice python page</h1>' > site/index.html && python3 -m http.server ${pythonPort} --bind 127.0.0.1 --directory site`,
      /Serving HTTP/,
    );
    appPort = await tenantPort(hub, KEY_A);
    await startApp(alice, appPort, "alice-app");
    python = await preview(alice, pythonPort);
    app = await preview(alice, appPort);
  });
  after(() => hub?.stop());

  test("an app started with python3 -m http.server opens through the returned URL with no header", async () => {
    assert.match(python.url, new RegExp(`^${hub.origin}/preview/[a-z2-7]{26}/$`));
    const page = await get(python.url);
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /alice python page/);
    // without the slash: sent to it, so the page's relative links resolve under the prefix
    const bare = await get(python.url.replace(/\/$/, ""));
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.location, new URL(python.url).pathname);
  });

  test("a 2026-07-28 client gets URLs under the address it used to reach the hub", async () => {
    const viaName = `http://localhost:${new URL(hub.origin).port}`;
    const modern = await connectModern({ url: `${viaName}/mcp` } as TestHub, { headers: auth(KEY_A) });
    try {
      const result = await callModern(modern, "hub_preview", { port: appPort });
      assert.equal(result.isError, undefined, textOf(result));
      const data = result.structuredContent as unknown as PreviewData;
      assert.match(data.url, new RegExp(`^${viaName}/preview/[a-z2-7]{26}/$`));
      assert.match((await get(data.url, {}, "127.0.0.1")).body, /page of alice-app/);
      await callModern(modern, "hub_end_preview", { preview: data.url });
    } finally {
      await modern.close();
    }
  });

  test("the subdomain form <port>-<token>.localhost opens the same app, and only at its own port", async () => {
    assert.equal(python.subdomainUrl, `http://${pythonPort}-${python.token}.localhost:${new URL(hub.origin).port}/`);
    const page = await get(python.subdomainUrl!, {}, "127.0.0.1");
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /alice python page/);
    // the token of one port with another port's number names nothing
    const crossed = await get(`http://${appPort}-${python.token}.localhost:${new URL(hub.origin).port}/`, {}, "127.0.0.1");
    assert.equal(crossed.status, 404);
    assert.doesNotMatch(crossed.body, /page of|python page/);
  });

  test("a tampered token gets 404 and nothing of the app", async () => {
    for (const url of [tamper(python.url), tamper(python.url).replace(/\/$/, "/index.html"), `${hub.origin}/preview/${"a".repeat(26)}/`]) {
      const page = await get(url);
      assert.equal(page.status, 404, url);
      assert.doesNotMatch(page.body, /python page/);
    }
    const host = await get(`http://${pythonPort}-${tamper(python.token + "/").slice(0, -1)}.localhost:${new URL(hub.origin).port}/`, {}, "127.0.0.1");
    assert.equal(host.status, 404);
    assert.doesNotMatch(host.body, /python page/);
  });

  test("another tenant cannot preview a port one tenant's app holds", async () => {
    const refused = await call(bob, "hub_preview", { port: pythonPort });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /your processes listen only on TCP ports \d+-\d+/);
    const nothing = await call(bob, "hub_preview", { port: await tenantPort(hub, KEY_B) });
    assert.equal(nothing.isError, true);
    assert.match(textOf(nothing), /Start the app on 127\.0\.0\.1:\d+ first/);
  });

  test("a preview whose app ends shows nothing more, and another tenant cannot take its port", async () => {
    const port = await tenantPort(hub, KEY_B);
    const terminal = await startApp(bob, port, "bob-app");
    const bobs = await preview(bob, port);
    assert.match((await get(bobs.url)).body, /page of bob-app/);
    await call(bob, "terminal_session_kill", { id: terminal });
    await until("bob's app to end", async () => (await get(bobs.url)).status === 502);
    const taken = textOf(await call(alice, "terminal_exec", { command: `python3 -m http.server ${port} --bind 127.0.0.1` }));
    assert.match(taken, /Permission denied/);
    for (const path of ["", "headers", "events"]) assert.equal((await get(bobs.url + path)).status, 502);
    await assert.rejects(echo(bobs.url.replace(/^http/, "ws"), "hi"), /upgrade refused: 502/);
  });

  test("a WebSocket echo server works through the preview, in both forms", async () => {
    assert.equal(await echo(app.url.replace(/^http/, "ws"), "hello"), "alice-app echoes hello");
    const host = new URL(app.subdomainUrl!).host;
    const viaHost = await new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${new URL(hub.origin).port}/`, { headers: { Host: host } });
      socket.once("open", () => socket.send("there"));
      socket.once("message", (data) => (resolve(String(data)), socket.close()));
      socket.once("error", reject);
    });
    assert.equal(viaHost, "alice-app echoes there");
    await assert.rejects(echo(tamper(app.url).replace(/^http/, "ws"), "hi"), /upgrade refused: 404/);
  });

  test("a request's body reaches the app", async () => {
    const res = await fetch(app.url + "echo-body", { method: "POST", body: "x".repeat(100_000) + "end" });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), `alice-app got POST ${"x".repeat(100_000)}end`);
  });

  test("Server-Sent Events pass as the app writes them", async () => {
    const res = await fetch(app.url + "events");
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    // the app sends its second event only when asked: the first arrived while the stream is open
    assert.match(first, /first from alice-app/);
    assert.equal((await get(app.url + "release")).body, "released");
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    assert.match(rest, /second from alice-app/);
  });

  test("one preview's visitors hold at most 256 exchanges open in the hub", async () => {
    const held = await Promise.all(Array.from({ length: 256 }, () => fetch(app.url + "events")));
    assert.ok(held.every((res) => res.status === 200));
    const over = await get(app.url + "events");
    assert.equal(over.status, 503);
    assert.match(over.body, /too many open connections/);
    await get(python.url).then((page) => assert.equal(page.status, 200, "another preview is not held up"));
    assert.equal((await get(app.url + "release")).status, 503, "the app's own release waits for room as well");
    await Promise.all(held.map((res) => res.body?.cancel()));
    await until("room again", async () => (await get(app.url + "release")).status === 200);
  });

  test("the hub's key, session and MCP headers never reach the app; its forwarding headers do", async () => {
    const sent = {
      Authorization: `Bearer ${KEY_A}`,
      "X-API-Key": KEY_A,
      "Mcp-Session-Id": "some-session",
      "MCP-Protocol-Version": "2025-06-18",
      "X-Agentbox-Session-Token": "a-session-token",
      "X-Forwarded-Host": "evil.example",
      "X-Forwarded-Prefix": "/elsewhere",
      Forwarded: "for=1.2.3.4",
    };
    const got = await get(`${app.url}headers?api_key=${KEY_A}&keep=1`, sent);
    const echoed = JSON.parse(got.body) as { url: string; headers: Record<string, string> };
    assert.doesNotMatch(got.body, new RegExp(KEY_A));
    for (const name of ["authorization", "x-api-key", "mcp-session-id", "mcp-protocol-version", "x-agentbox-session-token", "forwarded"]) {
      assert.equal(echoed.headers[name], undefined, name);
    }
    assert.equal(echoed.url, "/headers?keep=1");
    assert.equal(echoed.headers["x-forwarded-prefix"], `/preview/${app.token}`);
    assert.equal(echoed.headers["x-forwarded-host"], new URL(hub.origin).host);
    assert.equal(echoed.headers["x-forwarded-proto"], "http");
  });

  test("in the path form an app's cookies, redirects and origin-wide headers stay within its prefix", async () => {
    const cookie = await get(app.url + "cookie");
    // in the preview's own jar (test/hub/previews/cookies.test.ts), under its path, for no Domain
    const set = String(cookie.headers["set-cookie"]);
    assert.match(set, new RegExp(`^pv_[a-z2-7]{16}_secret-of-alice-app=1; Path=/preview/${app.token}/$`));
    // a WebSocket's handshake sets its cookies the same way
    const socket = new WebSocket(app.url.replace(/^http/, "ws"));
    const handshake = await new Promise<{ headers: Record<string, unknown> }>((resolve, reject) => {
      socket.once("upgrade", resolve);
      socket.once("error", reject);
    });
    socket.close();
    assert.match(String(handshake.headers["set-cookie"]), new RegExp(`^pv_[a-z2-7]{16}_ws-of-alice-app=1; Path=/preview/${app.token}/$`));
    assert.equal(cookie.headers["service-worker-allowed"], undefined);
    assert.equal(cookie.headers["clear-site-data"], undefined);
    const redirect = await get(app.url + "redirect");
    assert.equal(redirect.headers.location, `/preview/${app.token}/login`);
  });

  test("a revoked preview fails, and only its owner can end it", async () => {
    const port = await tenantPort(hub, KEY_B);
    await startApp(bob, port, "bob-revoked");
    const bobs = await preview(bob, port);
    const byAlice = await call(alice, "hub_end_preview", { preview: bobs.url });
    assert.equal(byAlice.isError, true);
    assert.equal((await get(bobs.url)).status, 200);
    const ended = await call(bob, "hub_end_preview", { preview: bobs.url });
    assert.ok(!ended.isError, textOf(ended));
    const page = await get(bobs.url);
    assert.equal(page.status, 410);
    assert.doesNotMatch(page.body, /bob-revoked/);
  });

  test("an expired preview fails", async () => {
    const short = await preview(alice, appPort, { ttlSeconds: 1 });
    // a request in flight at the moment of expiry is cut (the preview's exchanges end with it): ask again
    const page = await until("the preview to expire", async () => {
      const got = await get(short.url).catch(() => undefined);
      return got && got.status !== 200 && got;
    });
    assert.equal(page.status, 410);
    assert.doesNotMatch(page.body, /alice-app/);
    const tooLong = await call(alice, "hub_preview", { port: appPort, ttlSeconds: 10 * 86_400 });
    assert.equal(tooLong.isError, true);
    assert.match(textOf(tooLong), /AGENTBOX_PREVIEW_MAX_TTL_SECONDS/);
  });

  test("previews are listed in hub_sessions and end with their session", async () => {
    const carol = await hub.connect({ headers: auth(KEY_A) });
    const own = await preview(carol, appPort);
    const listed = (await call(carol, "hub_sessions")).structuredContent as { previews: Array<{ url: string; port: number }> };
    assert.deepEqual(
      listed.previews.map((p) => [p.port, p.url]),
      [[appPort, own.url]],
    );
    assert.equal((await get(own.url)).status, 200);
    await call(carol, "hub_end_session");
    await until("the preview to end with its session", async () => (await get(own.url).catch(() => undefined))?.status === 410);
  });

  test("a tenant may hold only so many previews", async () => {
    const port = await tenantPort(hub, KEY_B);
    await startApp(bob, port, "bob-many");
    // bob may hold some from the tests before: he asks until the hub says no
    const open: PreviewData[] = [];
    let refused;
    for (let i = 0; i <= PER_TENANT && !refused; i++) {
      const result = await call(bob, "hub_preview", { port });
      if (result.isError) refused = result;
      else open.push(result.structuredContent as unknown as PreviewData);
    }
    assert.ok(refused && open.length > 0, "the hub refused once the tenant held its limit");
    assert.match(textOf(refused), /AGENTBOX_PREVIEWS_PER_TENANT/);
    // alice's room is her own
    const hers = await preview(alice, appPort);
    await call(alice, "hub_end_preview", { preview: hers.token });
    await call(bob, "hub_end_preview", { preview: open[0].token });
    await preview(bob, port);
  });
});

// With the network shared between tenants (AGENTBOX_NETWORK_ISOLATION=off) a port can pass from one
// tenant to another: the hub's check of the listening socket's owner, per request, still holds.
describe("previews on a hub whose tenants share the network", () => {
  test("a preview whose port passes to another tenant shows nothing of the new holder's app", async () => {
    const hub = await startHub({
      servers: ["terminal"],
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_NETWORK_ISOLATION: "off" },
    });
    try {
      const [alice, bob] = [await hub.connect({ headers: auth(KEY_A) }), await hub.connect({ headers: auth(KEY_B) })];
      const port = await freePort();
      const terminal = await startApp(bob, port, "bob-app");
      const bobs = await preview(bob, port);
      assert.match((await get(bobs.url)).body, /page of bob-app/);
      // bob's app ends; alice's takes the same port
      await call(bob, "terminal_session_kill", { id: terminal });
      await until("bob's app to end", async () => (await get(bobs.url)).status === 502);
      await startApp(alice, port, "alice-second");
      for (const path of ["", "headers", "events"]) {
        const page = await get(bobs.url + path);
        assert.equal(page.status, 502, page.body);
        assert.doesNotMatch(page.body, /alice/);
      }
      await assert.rejects(echo(bobs.url.replace(/^http/, "ws"), "hi"), /upgrade refused: 502/);
    } finally {
      await hub.stop();
    }
  });
});
