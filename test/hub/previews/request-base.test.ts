// The links the hub's tools make (hub_preview, hub_live_view, the live view app's CSP) name the
// address the asking request reached the hub by, whichever way the request came: a 2025 session's
// direct call or SDK-served call, the legacy SSE transport, a sessionless plain JSON POST, a
// 2026-07-28 request, a trusted proxy's X-Forwarded-*. Each request carries its own address to
// what answers it (hub/previews/public-address.ts): concurrent requests by two names never trade.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { callModern, connectModern } from "../modern/modern-client.js";
import { freePort, startApp } from "./apps.js";

const PROXIED = { "X-Forwarded-Host": "agents.example.test", "X-Forwarded-Proto": "https" };
const UI_EXTENSION = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };

describe("links name the address each request came by", () => {
  let hub: TestHub;
  let byName: string;
  let byAddress: string;
  let appPort: number;
  let terminal: string;
  const clients: Client[] = [];

  async function connect(base: string, options: { capabilities?: Record<string, unknown>; headers?: Record<string, string>; sse?: boolean } = {}) {
    const client = new Client({ name: "request-base-test", version: "1.0.0" }, { capabilities: options.capabilities ?? {} });
    const requestInit = { headers: options.headers ?? {} };
    const transport = options.sse
      ? new SSEClientTransport(new URL("/sse", base), { requestInit })
      : new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  /** hub_preview's URL for the app, the preview ended again (the tenant's count stays low). */
  async function previewUrl(run: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>): Promise<string> {
    const opened = await run("hub_preview", { port: appPort });
    assert.equal(opened.isError, undefined, textOf(opened));
    const { url } = opened.structuredContent as { url: string };
    const ended = await run("hub_end_preview", { preview: url });
    assert.equal(ended.isError, undefined, textOf(ended));
    return url;
  }

  before(async () => {
    hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_TRUSTED_PROXIES: "127.0.0.1" } });
    byAddress = hub.origin;
    byName = `http://localhost:${new URL(hub.origin).port}`;
    assert.notEqual(byName, byAddress);
    appPort = await freePort();
    const starter = await connect(byAddress);
    terminal = await startApp(starter, appPort, "base-app");
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await hub?.stop();
  });

  test("a 2025 session's plain call (the direct path) and a call the SDK serves (a client that may be asked) each use their own address", async () => {
    const direct = await connect(byName);
    assert.match(await previewUrl((n, a) => call(direct, n, a)), new RegExp(`^${byName}/preview/[a-z2-7]{26}/$`));
    const asked = await connect(byName, { capabilities: { sampling: {}, elicitation: {} } });
    assert.match(await previewUrl((n, a) => call(asked, n, a)), new RegExp(`^${byName}/preview/`));
    const view = await call(direct, "hub_live_view", { terminal });
    assert.equal(view.isError, undefined, textOf(view));
    assert.match((view.structuredContent as { url: string }).url, new RegExp(`^${byName}/live/`));
  });

  test("the legacy SSE transport and a sessionless plain JSON POST use the address they came by", async () => {
    const sse = await connect(byName, { sse: true });
    assert.match(await previewUrl((n, a) => call(sse, n, a)), new RegExp(`^${byName}/preview/`));
    const plain = async (name: string, args: Record<string, unknown>) => {
      const res = await fetch(`${byName}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { result: CallToolResult }).result;
    };
    assert.match(await previewUrl(plain), new RegExp(`^${byName}/preview/`));
  });

  test("a trusted proxy's X-Forwarded-Host and -Proto name the address, for 2025 and 2026-07-28 clients", async () => {
    const proxied = await connect(byAddress, { headers: PROXIED });
    assert.match(await previewUrl((n, a) => call(proxied, n, a)), /^https:\/\/agents\.example\.test\/preview\//);
    const modern = await connectModern({ url: `${byAddress}/mcp` } as TestHub, { headers: PROXIED });
    try {
      assert.match(await previewUrl((n, a) => callModern(modern, n, a)), /^https:\/\/agents\.example\.test\/preview\//);
      const view = await callModern(modern, "hub_live_view", { terminal });
      assert.match((view.structuredContent as { url: string }).url, /^https:\/\/agents\.example\.test\/live\//);
    } finally {
      await modern.close();
    }
  });

  test("calls in flight at once by two names each get their own address", async () => {
    const [named, addressed] = await Promise.all([connect(byName), connect(byAddress)]);
    const urls = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? call(addressed, "hub_live_view", { terminal }) : call(named, "hub_live_view", { terminal }))),
    );
    urls.forEach((result, i) => {
      assert.equal(result.isError, undefined, textOf(result));
      assert.ok((result.structuredContent as { url: string }).url.startsWith(`${i % 2 ? byAddress : byName}/live/`), textOf(result));
    });
  });

  test("the live view app's CSP lets it reach the hub at the address its host used", async () => {
    const host = await connect(byName, { capabilities: UI_EXTENSION });
    const { resources } = await host.listResources();
    const app = resources.find((r) => r.uri.startsWith("ui://"));
    const csp = (app?._meta as { ui?: { csp?: { connectDomains?: string[] } } } | undefined)?.ui?.csp;
    assert.deepEqual(csp?.connectDomains, [byName, byName.replace(/^http/, "ws")]);
    const read = await host.readResource({ uri: app!.uri });
    assert.deepEqual((read.contents[0]._meta as { ui: { csp: unknown } }).ui.csp, csp);
  });
});
