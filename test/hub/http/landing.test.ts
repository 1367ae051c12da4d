// The first minute: the start-up log's last line says where to go, and a browser at / or /mcp
// gets a page pointing at the playground and the endpoint, while MCP and JSON clients get what
// they always got. A hostile Host header cannot put markup into the page.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

// what Chromium sends when a person types the address
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

/** The page's text as a person reads it (entities decoded). */
const shownText = (html: string) =>
  html
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

const get = (hub: TestHub, path: string, headers: Record<string, string> = {}) => fetch(`${hub.origin}${path}`, { headers });

/** The last JSON log line the hub wrote before `ready`, waited for (the helper returns at /readyz). */
async function readyLine(hub: TestHub): Promise<Record<string, unknown>> {
  const last = () =>
    hub.logs
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return undefined;
        }
      })
      .filter((e) => e?.component === "hub")
      .at(-1);
  return until("the hub's ready line", () => {
    const line = last();
    return line && String(line.msg).startsWith("ready") && line;
  }).catch(() => assert.fail(`no ready line in:\n${hub.logs.join("\n")}`));
}

/** A browser request whose Host header carries markup: the page must not echo it as markup. */
async function noMarkupFromHost(hub: TestHub): Promise<void> {
  const { port } = new URL(hub.origin);
  for (const host of [`127.0.0.1:${port}"><script>alert(1)</script>`, `evil.example<script>x</script>`]) {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.get({ host: "127.0.0.1", port, path: "/", headers: { Host: host, Accept: BROWSER_ACCEPT } }, (r) => {
        let body = "";
        r.on("data", (d) => (body += d));
        r.on("end", () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on("error", reject);
    });
    assert.doesNotMatch(res.body, /<script>/, `status ${res.status}: ${res.body.slice(0, 200)}`);
  }
}

describe("landing pages on a keyless hub", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: [], extraServers: { echo: fixture("echo-server") } });
  });
  after(() => hub.stop());

  test("the start-up log's last line names the playground and the MCP URL", async () => {
    const line = await readyLine(hub);
    const port = new URL(hub.origin).port;
    assert.equal(line.msg, `ready: open http://127.0.0.1:${port}/playground in a browser; MCP clients connect to http://127.0.0.1:${port}/mcp`);
    assert.equal(line.playground, `http://127.0.0.1:${port}/playground`);
    assert.equal(line.mcp, `http://127.0.0.1:${port}/mcp`);
    assert.match(String(line.servers), /echo:ready:\d+/);
    const playground = await fetch(String(line.playground));
    assert.equal(playground.status, 200, "the address it names is the playground");
  });

  for (const path of ["/", "/mcp", "/v1/mcp"]) {
    test(`a browser at ${path} gets a page linking the playground, the endpoint and client snippets`, async () => {
      const res = await get(hub, path, { Accept: BROWSER_ACCEPT });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      const html = await res.text();
      assert.match(html, /<a class="go" href="\/playground">Open the playground<\/a>/);
      assert.match(html, new RegExp(`<pre id="endpoint">${hub.origin}/mcp</pre>`));
      assert.match(shownText(html), new RegExp(`claude mcp add --transport http agentbox ${hub.origin}/mcp</pre>`));
      assert.ok(shownText(html).includes(`{ "mcpServers": { "agentbox": { "type": "http", "url": "${hub.origin}/mcp" } } }`));
      assert.match(html, /docs\/clients\.md/);
      assert.doesNotMatch(html, /API key|"uptimeSeconds"|echo_/, "a keyless hub's page asks for no key and shows no status");
    });
  }

  test("JSON and MCP clients get exactly what they got before", async () => {
    for (const accept of [undefined, "*/*", "application/json", "text/html, application/json"]) {
      const res = await get(hub, "/", accept ? { Accept: accept } : {});
      assert.equal(res.status, 200, String(accept));
      const status = (await res.json()) as { servers: unknown[]; endpoints: { playground: string } };
      assert.equal(status.endpoints.playground, "/playground");
      assert.equal(status.servers.length, 1);
    }
    const sse = await get(hub, "/mcp", { Accept: "text/event-stream" });
    assert.equal(sse.status, 400);
    assert.match(((await sse.json()) as { error: { message: string } }).error.message, /GET needs an Mcp-Session-Id header/);
    // a session's GET stream is never the page, whatever it accepts
    const withSession = await get(hub, "/mcp", { Accept: `${BROWSER_ACCEPT}`, "Mcp-Session-Id": "no-such-session" });
    assert.notEqual(withSession.headers.get("content-type")?.startsWith("text/html"), true);
    const post = await fetch(`${hub.origin}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: BROWSER_ACCEPT },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.deepEqual(await post.json(), { jsonrpc: "2.0", id: 1, result: {} });
  });

  test("a Host header carrying markup is refused or escaped, never echoed as markup", () => noMarkupFromHost(hub));
});

describe("landing page on a hub with an API key", () => {
  const KEY = "landing-test-key";
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: [], extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_API_KEY: KEY } });
  });
  after(() => hub.stop());

  test("a browser without the key learns how to send it, and nothing of the hub's status", async () => {
    const res = await get(hub, "/", { Accept: BROWSER_ACCEPT });
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /needs an API key on every request: send <code>Authorization: Bearer &lt;key&gt;<\/code>/);
    assert.match(shownText(html), /--header "Authorization: Bearer <key>"/);
    assert.doesNotMatch(html, /echo|uptime|"sessions"|workspace|tenant|pid/i);
  });

  test("a Host header carrying markup is refused or escaped, never echoed as markup", () => noMarkupFromHost(hub));

  test("the status and the endpoint still need the key from anything that is not a browser page view", async () => {
    assert.equal((await get(hub, "/")).status, 401);
    assert.equal((await get(hub, "/", { Accept: "application/json" })).status, 401);
    assert.equal((await get(hub, "/mcp", { Accept: "text/event-stream" })).status, 401);
    const keyed = await get(hub, "/", { Authorization: `Bearer ${KEY}` });
    assert.equal(keyed.status, 200);
    assert.equal(((await keyed.json()) as { servers: unknown[] }).servers.length, 1);
  });
});
