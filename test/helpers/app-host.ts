// An MCP Apps host as web hosts run one, for the tests that load an app read through the hub: the
// spec's sandbox proxy. The host page (one loopback origin) uses the SDK's own host side (AppBridge)
// to talk to a sandbox page on another origin, in an iframe sandboxed "allow-scripts
// allow-same-origin allow-forms"; the sandbox page is served under the CSP the host builds from the
// app's `_meta.ui.csp` and writes the app's HTML into an inner iframe sandboxed the same way (what
// the ext-apps basic host does), relaying messages both ways. So the app runs on the sandbox's
// origin, never the host's, and its tools/call reach the test's `callTool`, as a real host would
// forward them to its MCP client.
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { build } from "esbuild";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Browser, Frame, Page } from "playwright-core";
import { launch } from "../playground/browser.js";
import { distRoot } from "../../hub/config/config.js";
import { until } from "./wait.js";

/** The spec's `_meta.ui.csp` of an app's resource. */
export interface AppCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

/** An app as a host has it after resources/read: its HTML and the CSP its _meta declares. */
export interface AppResource {
  html: string;
  csp?: AppCsp;
}

/** A tools/call the app sent its host. */
export interface AppToolCall {
  name: string;
  arguments?: Record<string, unknown>;
}

export interface ShowOptions {
  /** The tool whose call the app is shown for (the host context's toolInfo), as the host listed it. */
  tool: string;
  input: Record<string, unknown>;
  result: CallToolResult;
  /** What the host does with the app's tools/call: forward it to its MCP client. */
  callTool(call: AppToolCall): Promise<CallToolResult>;
}

export interface AppHost {
  /** A host page showing the app for one tool call; the app's own frame (the sandbox's inner one). */
  show(app: AppResource, options: ShowOptions): Promise<{ page: Page; frame: Frame }>;
  /** CSP violations reported in any page shown so far. */
  violations: string[];
  hostOrigin: string;
  sandboxOrigin: string;
  /** Closes the browser and the servers. */
  close(): Promise<void>;
}

// both iframes: the sandbox proxy's (the spec asks allow-scripts and allow-same-origin of it) and the
// app's inside it, as the ext-apps basic host sets them
const SANDBOX = "allow-scripts allow-same-origin allow-forms";

const HOST_SCRIPT = `
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
window.startHost = async (sandboxUrl, toolName, input, result, html) => {
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", ${JSON.stringify(SANDBOX)});
  iframe.style.width = "960px";
  iframe.style.height = "640px";
  const proxyReady = new Promise((resolve) => {
    const onMessage = (event) => {
      if (event.source !== iframe.contentWindow || event.data?.method !== "ui/notifications/sandbox-proxy-ready") return;
      window.removeEventListener("message", onMessage);
      resolve();
    };
    window.addEventListener("message", onMessage);
  });
  iframe.src = sandboxUrl;
  document.body.append(iframe);
  await proxyReady;
  const bridge = new AppBridge(null, { name: "test-host", version: "1.0.0" }, { serverTools: {}, logging: {} }, {
    hostContext: { toolInfo: { tool: { name: toolName, inputSchema: { type: "object" } } }, displayMode: "inline" },
  });
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = height + "px"; };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: input });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await bridge.sendSandboxResourceReady({ html, sandbox: ${JSON.stringify(SANDBOX)} });
};`;

/** The sandbox proxy: takes only the host's messages, writes the app into its inner frame, relays the rest. */
const sandboxScript = (hostOrigin: string) => `
const HOST = ${JSON.stringify(hostOrigin)};
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", ${JSON.stringify(SANDBOX)});
inner.style = "width:100%;height:100%;border:none";
document.body.append(inner);
window.addEventListener("message", (event) => {
  if (event.source === window.parent) {
    if (event.origin !== HOST) return;
    if (event.data?.method === "ui/notifications/sandbox-resource-ready") {
      const { html, sandbox } = event.data.params;
      if (typeof sandbox === "string") inner.setAttribute("sandbox", sandbox);
      const doc = inner.contentDocument;
      doc.open();
      doc.write(html);
      doc.close();
    } else inner.contentWindow.postMessage(event.data, "*");
  } else if (event.source === inner.contentWindow && event.origin === location.origin) {
    window.parent.postMessage(event.data, HOST);
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, HOST);`;

/** The CSP a host builds from the resource's _meta.ui.csp (the spec's construction). */
export function cspOf(csp: AppCsp = {}): string {
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
    `base-uri ${csp.baseUriDomains?.length ? csp.baseUriDomains.join(" ") : "'self'"}`,
  ].join("; ");
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Starts real Chromium and the host's and the sandbox's servers (two origins on loopback). */
export async function startAppHost(): Promise<AppHost> {
  const bundled = await build({
    stdin: { contents: HOST_SCRIPT, resolveDir: path.resolve(distRoot(), ".."), loader: "js" },
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
  });
  const hostJs = bundled.outputFiles[0].text;
  // each page shown gets its own sandbox URL, served under its app's CSP
  const csps = new Map<string, string>();
  let shown = 0;
  const host = http.createServer((req, res) => {
    if (req.url === "/host.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(hostJs);
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>host</title><script src="/host.js"></script>`);
  });
  const sandbox = http.createServer((req, res) => {
    if (req.url === "/sandbox.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(sandboxScript(hostOrigin));
    const csp = csps.get(req.url ?? "");
    if (csp === undefined) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/html", "content-security-policy": csp });
    res.end(`<!doctype html><html><head><style>html,body{margin:0;height:100%}</style></head><body><script src="/sandbox.js"></script></body></html>`);
  });
  const hostOrigin = await listen(host);
  const sandboxOrigin = await listen(sandbox);
  const violations: string[] = [];
  const browser: Browser = await launch();

  return {
    violations,
    hostOrigin,
    sandboxOrigin,
    async show(app, options) {
      const sandboxPath = `/sandbox/${++shown}`;
      csps.set(sandboxPath, cspOf(app.csp));
      const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
      page.on("console", (msg) => {
        if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
      });
      await page.exposeFunction("hostCallTool", (call: AppToolCall) => options.callTool(call));
      await page.goto(`${hostOrigin}/`);
      await page.evaluate(
        ([url, tool, input, result, html]) =>
          (window as unknown as { startHost: (...a: unknown[]) => Promise<void> }).startHost(url, tool, input, result, html),
        [sandboxOrigin + sandboxPath, options.tool, options.input, options.result, app.html] as const,
      );
      const frame = await until("the app's frame", async () => page.frames().find((f) => f.parentFrame()?.url() === sandboxOrigin + sandboxPath));
      return { page, frame };
    },
    async close() {
      await browser.close();
      host.close();
      sandbox.close();
    },
  };
}
