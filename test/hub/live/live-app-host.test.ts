// The live view app in a host, as MCP Apps hosts run it: a test page in real Chromium uses the
// SDK's own host side (AppBridge) to load ui://agentbox/live-view, as read through the hub by a real
// MCP client, into a sandboxed iframe of its own origin under the CSP its _meta declares, and
// forwards the app's tools/call to that client. Given a browser_navigate result, the app shows the
// tab live (its pixels), takes over and hands back; given terminal_session_create, the terminal.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { build } from "esbuild";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Browser, Frame, Page } from "playwright-core";
import { distRoot } from "../../../hub/config/config.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { listenForTenants } from "../../helpers/tenant-ports.js";
import { until } from "../../helpers/wait.js";
import { launch } from "../../playground/browser.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;
const APPS = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };

// the agent's page: a green block at a fixed place of its 1280×720 viewport
const SITE = `<!doctype html><html><head><title>Watched</title><style>body{margin:0;background:#fff}
#block{position:fixed;left:600px;top:100px;width:400px;height:300px;background:rgb(20,160,40)}</style></head>
<body><div id="block"></div></body></html>`;

// the host: the SDK's AppBridge over postMessage to a sandboxed iframe; the app's tools/call goes to
// window.hostCallTool, which the test wires to its MCP client of the hub
const HOST_SCRIPT = `
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
window.startHost = async (toolName, input, result) => {
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.width = "960px";
  iframe.style.height = "640px";
  iframe.src = "/app";
  document.body.append(iframe);
  const bridge = new AppBridge(null, { name: "test-host", version: "1.0.0" }, { serverTools: {} }, {
    hostContext: { toolInfo: { tool: { name: toolName, inputSchema: { type: "object" } } }, displayMode: "inline" },
  });
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = height + "px"; };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: input });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
};`;

/** The CSP a host builds from the resource's _meta.ui.csp (the spec's construction). */
function cspOf(csp: { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[] }): string {
  const resources = (csp.resourceDomains ?? []).join(" ");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${(csp.connectDomains ?? []).join(" ")}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${csp.frameDomains?.length ? csp.frameDomains.join(" ") : "'none'"}`,
    "object-src 'none'",
    "base-uri 'self'",
  ].join("; ");
}

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
  let host: http.Server;
  let hostUrl: string;
  let browser: Browser;
  const violations: string[] = [];

  before(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(SITE));
    siteUrl = `http://127.0.0.1:${await listenForTenants(site)}/`;
    hub = await startHub({ servers: ["browser", "terminal"], config: { tenants: { alice: { apiKey: KEY } } } });
    agent = await hub.connect({ headers: { Authorization: `Bearer ${KEY}` }, capabilities: APPS as ClientCapabilities });
    // what a host does first: read the resource through the hub
    const { contents } = await agent.readResource({ uri: "ui://agentbox/live-view" });
    const [app] = contents as unknown as Array<{ text: string; _meta: { ui: { csp: Record<string, string[]> } } }>;
    const root = path.resolve(distRoot(), "..");
    const bundled = await build({
      stdin: { contents: HOST_SCRIPT, resolveDir: root, loader: "js" },
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
    });
    const hostJs = bundled.outputFiles[0].text;
    host = http.createServer((req, res) => {
      if (req.url === "/app") return res.writeHead(200, { "content-type": "text/html", "content-security-policy": cspOf(app._meta.ui.csp) }).end(app.text);
      if (req.url === "/host.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(hostJs);
      res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>host</title><script src="/host.js"></script>`);
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/`;
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await hub?.stop();
    site?.close();
    host?.close();
  });

  /** A host page showing the app for one tool call; the app's frame. */
  async function show(tool: string, input: Record<string, unknown>, result: CallToolResult): Promise<{ page: Page; frame: Frame }> {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    page.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
    });
    await page.exposeFunction("hostCallTool", (params: { name: string; arguments?: Record<string, unknown> }) =>
      agent.callTool({ name: params.name, arguments: params.arguments ?? {} }),
    );
    await page.goto(hostUrl);
    await page.evaluate(([t, i, r]) => (window as unknown as { startHost: (...a: unknown[]) => Promise<void> }).startHost(t, i, r), [
      tool,
      input,
      result,
    ] as const);
    const frame = await until("the app's frame", async () => page.frames().find((f) => f.url().endsWith("/app")));
    return { page, frame };
  }

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
    assert.deepEqual(violations, [], "the app reached nothing its CSP does not allow");
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
