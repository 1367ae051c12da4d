// The live view app in a host, as MCP Apps hosts run it: a test page in real Chromium uses the
// SDK's own host side (AppBridge) to load ui://agentbox/live-view, as read through the hub by a real
// MCP client, into the sandbox proxy of test/helpers/app-host.ts (another origin, under the CSP its
// _meta declares), and forwards the app's tools/call to that client. Given a browser_navigate result, the app shows the
// tab live (its pixels), takes over and hands back; given terminal_session_create, the terminal.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Frame, Page } from "playwright-core";
import { startAppHost, type AppCsp, type AppHost, type AppResource } from "../../helpers/app-host.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { listenForTenants } from "../../helpers/tenant-ports.js";
import { until } from "../../helpers/wait.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;
const APPS = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };

// the agent's page: a green block at a fixed place of its 1280×720 viewport
const SITE = `<!doctype html><html><head><title>Watched</title><style>body{margin:0;background:#fff}
#block{position:fixed;left:600px;top:100px;width:400px;height:300px;background:rgb(20,160,40)}</style></head>
<body><div id="block"></div></body></html>`;

interface AppSeen {
  phase: string;
  error: string;
  asked?: Record<string, unknown>;
  view?: { frames: number; kind: string; holder: string; terminal?: string; closed: string };
}

// undefined until the app's script has run: the frame is there before it
const seenBy = (frame: Frame) => frame.evaluate(() => (window as unknown as { liveApp?: AppSeen }).liveApp);

describe("the live view app in a host", () => {
  let hub: TestHub;
  let agent: Client;
  let site: http.Server;
  let siteUrl: string;
  let host: AppHost;
  let app: AppResource;

  before(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(SITE));
    siteUrl = `http://127.0.0.1:${await listenForTenants(site)}/`;
    hub = await startHub({ servers: ["browser", "terminal"], config: { tenants: { alice: { apiKey: KEY } } } });
    agent = await hub.connect({ headers: { Authorization: `Bearer ${KEY}` }, capabilities: APPS as ClientCapabilities });
    // what a host does first: read the resource through the hub
    const { contents } = await agent.readResource({ uri: "ui://agentbox/live-view" });
    const [read] = contents as unknown as Array<{ text: string; _meta: { ui: { csp: AppCsp } } }>;
    app = { html: read.text, csp: read._meta.ui.csp };
    host = await startAppHost();
  });

  after(async () => {
    await host?.close();
    await hub?.stop();
    site?.close();
  });

  /** A host page showing the app for one tool call, its tools/call forwarded to the agent's client; the app's frame. */
  const show = (tool: string, input: Record<string, unknown>, result: CallToolResult): Promise<{ page: Page; frame: Frame }> =>
    host.show(app, { tool, input, result, callTool: (c) => agent.callTool({ name: c.name, arguments: c.arguments ?? {} }) as Promise<CallToolResult> });

  test("a browser_navigate result shows the tab live in the app, and takeover works from it", async () => {
    const input = { url: siteUrl };
    const navigated = await call(agent, "browser_navigate", input);
    assert.ok(!navigated.isError, textOf(navigated));
    const { page, frame } = await show("browser_navigate", input, navigated);
    const seen = await until("frames in the app", async () => {
      const s = await seenBy(frame);
      if (s?.phase === "failed") throw new Error(`the app failed: ${s.error}`);
      return (s?.view?.frames ?? 0) >= 1 ? s : undefined;
    });
    assert.deepEqual(seen.asked, { embedded: true });
    assert.equal(seen.view?.kind, "browser");
    // the block's green is on the app's canvas where the agent's page has it
    const green = await until("the tab's pixels", async () => {
      const rgb = await frame.evaluate(() => {
        const canvas = document.getElementById("screen") as HTMLCanvasElement;
        const d = canvas.getContext("2d")!.getImageData(Math.round((800 / 1280) * canvas.width), Math.round((250 / 720) * canvas.height), 1, 1).data;
        return [d[0], d[1], d[2]];
      });
      return Math.abs(rgb[0] - 20) < 40 && Math.abs(rgb[1] - 160) < 40 && Math.abs(rgb[2] - 40) < 40 ? rgb : undefined;
    });
    assert.ok(green);
    // take over from the app: the agent's tools on that tab wait; hand back: they work again
    await frame.locator("#control").click();
    await until("the person holds control", async () => (await seenBy(frame))?.view?.holder === "you");
    const held = await call(agent, "browser_click", { selector: "#block" });
    assert.ok(!held.isError, "a held tab answers a normal result");
    assert.match(textOf(held), /A person is using this tab through a live view/);
    await frame.locator("#control").click();
    await until("control went back", async () => (await seenBy(frame))?.view?.holder === "agent");
    assert.match(textOf(await call(agent, "browser_click", { selector: "#block" })), /handed control back/);
    assert.deepEqual(host.violations, [], "the app reached nothing its CSP does not allow");
    await page.close();
  });

  test("a terminal_session_create result shows that terminal", async () => {
    const created = await call(agent, "terminal_session_create", {});
    assert.ok(!created.isError, textOf(created));
    const id = (created.structuredContent as { id: string }).id;
    const { page, frame } = await show("terminal_session_create", {}, created);
    const seen = await until("the terminal in the app", async () => {
      const s = await seenBy(frame);
      if (s?.phase === "failed") throw new Error(`the app failed: ${s.error}`);
      return s?.view?.kind === "terminal" ? s : undefined;
    });
    assert.deepEqual(seen.asked, { terminal: id, embedded: true });
    await call(agent, "terminal_session_send", { id, input: "echo app-sees-$((6*7))\n" });
    await until("the terminal's output in the app", async () => ((await frame.locator("#terminal").textContent()) ?? "").includes("app-sees-42"));
    await page.close();
  });
});
