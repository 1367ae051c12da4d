// A third party's MCP App behind the hub, in a host: the ext-apps example server
// @modelcontextprotocol/server-basic-vanillajs (its get-time tool names ui://get-time/mcp-app.html,
// an app that shows the time it is given and has a "Get Server Time" button calling get-time back)
// runs twice as stdio children, `basic` and `basic2`. The second runs from a copy of the package
// whose HTML is marked, since two copies of one package serve the same bytes and a read must be
// told apart. A real MCP client of the hub lists the tools, reads each app under its published URI,
// and a page in real Chromium loads one through the sandbox proxy of test/helpers/app-host.ts.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ClientCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Frame } from "playwright-core";
import { distRoot, type ServerConfig } from "../../../hub/config/config.js";
import { startAppHost, type AppCsp, type AppHost, type AppResource, type AppToolCall } from "../../helpers/app-host.js";
import { call, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { auditLines } from "../observability/audit-lines.js";

const APPS = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const PACKAGE = path.resolve(distRoot(), "..", "node_modules", "@modelcontextprotocol", "server-basic-vanillajs");
const TITLE = "<title>Get Time App</title>";
const MARKED_TITLE = "<title>Get Time App (second copy)</title>";
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

type Read = { contents: Array<{ uri: string; mimeType?: string; text?: string; _meta?: { ui?: { csp?: AppCsp } } }> };

const basicServer = (packageDir: string): ServerConfig => ({ command: process.execPath, args: [path.join(packageDir, "dist", "index.js"), "--stdio"] });

/** The package copied (it bundles its dependencies) with its app's title marked; readable by the tenant's uid. */
function markedCopy(): string {
  const dir = tempDir("agentbox-basic-app-");
  fs.cpSync(path.join(PACKAGE, "package.json"), path.join(dir, "package.json"));
  fs.cpSync(path.join(PACKAGE, "dist"), path.join(dir, "dist"), { recursive: true });
  const html = path.join(dir, "dist", "mcp-app.html");
  const original = fs.readFileSync(html, "utf8");
  assert.ok(original.includes(TITLE), "the example's app still has the title this test marks");
  fs.writeFileSync(html, original.replace(TITLE, MARKED_TITLE));
  fs.chmodSync(dir, 0o755);
  return dir;
}

describe("a third-party MCP App (server-basic-vanillajs) behind the hub, in a host", () => {
  let copy: string;
  let hub: TestHub;
  let agent: Client;
  let tools: Tool[];
  let host: AppHost;

  before(async () => {
    copy = markedCopy();
    hub = await startHub({ extraServers: { basic: basicServer(PACKAGE), basic2: basicServer(copy) } });
    agent = await hub.connect({ capabilities: APPS as ClientCapabilities });
    tools = (await agent.listTools()).tools;
    host = await startAppHost();
  });

  after(async () => {
    await host?.close();
    await hub?.stop();
    fs.rmSync(copy, { recursive: true, force: true });
  });

  const appUriOf = (tool: string) => (tools.find((t) => t.name === tool)?._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri;
  const read = (uri: string) => agent.readResource({ uri }) as Promise<Read>;

  /**
   * What a host that knows the hub does with an app's tools/call: the app names its server's tool
   * as written (get-time); the hub publishes it under the prefix its app's URI is under.
   */
  const mappedFor = (appUri: string, forwarded: string[]) => (c: AppToolCall) => {
    const prefix = appUri.slice("ui://".length).split("/")[0];
    const published = `${prefix}_${c.name}`;
    const name = tools.some((t) => t.name === published) ? published : c.name;
    forwarded.push(name);
    return agent.callTool({ name, arguments: c.arguments ?? {} }) as Promise<CallToolResult>;
  };

  /** Shows `tool`'s app for a call of it through the hub; the app's frame and that call's time. */
  async function showCall(tool: string, callTool: (c: AppToolCall) => Promise<CallToolResult>): Promise<{ frame: Frame; time: string }> {
    const result = await call(agent, tool, {});
    assert.ok(!result.isError, textOf(result));
    const time = (result.structuredContent as { time: string }).time;
    const [content] = (await read(appUriOf(tool)!)).contents;
    const app: AppResource = { html: content.text!, csp: content._meta?.ui?.csp };
    const { frame } = await host.show(app, { tool, input: {}, result, callTool });
    await until("the call's time in the app", async () => (await frame.locator("#server-time").textContent()) === time);
    return { frame, time };
  }

  test("each instance's tool names its own app under its prefix, and a read of it returns that instance's HTML", async () => {
    const html = fs.readFileSync(path.join(PACKAGE, "dist", "mcp-app.html"), "utf8");
    for (const [prefix, expected] of [
      ["basic", html],
      ["basic2", html.replace(TITLE, MARKED_TITLE)],
    ]) {
      const tool = tools.find((t) => t.name === `${prefix}_get-time`);
      assert.ok(tool, `${prefix}_get-time is listed: ${tools.map((t) => t.name).join(", ")}`);
      const uri = `ui://${prefix}/get-time/mcp-app.html`;
      assert.equal(appUriOf(tool.name), uri);
      assert.equal(tool._meta?.["ui/resourceUri"], uri, "the flat key older hosts read names the same app");
      const { contents } = await read(uri);
      assert.equal(contents.length, 1);
      assert.equal(contents[0].uri, uri, "the contents name the URI as published");
      assert.equal(contents[0].mimeType, "text/html;profile=mcp-app");
      assert.ok(contents[0].text === expected, `${uri} reads back its own instance's HTML`);
      // the example declares no CSP, so a host applies the restrictive default: none may appear on the way
      assert.equal(contents[0]._meta?.ui?.csp, undefined);
    }
    const listed = (await agent.listResources()).resources.map((r) => r.uri);
    assert.ok(listed.includes("ui://basic/get-time/mcp-app.html") && listed.includes("ui://basic2/get-time/mcp-app.html"), listed.join(", "));
    assert.ok(!listed.includes("ui://get-time/mcp-app.html"), "neither instance's own URI is listed as it came");
    await assert.rejects(read("ui://get-time/mcp-app.html"), /Resource not found/, "the URI both instances serve belongs to neither behind the hub");
  });

  test("the app shows the hub's result, and its own call back reaches its instance under the published name", async () => {
    const uri = appUriOf("basic2_get-time")!;
    const forwarded: string[] = [];
    const { frame, time } = await showCall("basic2_get-time", mappedFor(uri, forwarded));
    assert.equal(await frame.title(), "Get Time App (second copy)", "the app shown is the second instance's");
    // the app's button calls get-time through its host: the host forwards it as basic2_get-time
    await frame.locator("#get-time-btn").click();
    const shown = await until("a new time in the app", async () => {
      const text = (await frame.locator("#server-time").textContent()) ?? "";
      return text !== time && text !== "Loading..." ? text : undefined;
    });
    assert.match(shown, ISO_TIME, "the app shows the time its call returned");
    assert.deepEqual(forwarded, ["basic2_get-time"]);
    // the hub's trail: both calls (the agent's and the app's) ran on basic2, none on basic
    const calls = await until("both calls in the audit trail", () => {
      const lines = auditLines(hub.logs.filter((l) => l.startsWith("{")).join("\n")).filter((l) => l.tool?.endsWith("get-time"));
      return lines.length >= 2 ? lines : undefined;
    });
    assert.deepEqual(
      calls.map((l) => [l.tool, l.server, l.outcome]),
      [
        ["basic2_get-time", "basic2", "ok"],
        ["basic2_get-time", "basic2", "ok"],
      ],
    );
    assert.deepEqual(host.violations, [], "the app reached nothing its CSP does not allow");
  });

  test("the app's frame is the sandbox's, not the host's, and reaches no server its CSP leaves out", async () => {
    const { frame } = await showCall("basic_get-time", mappedFor(appUriOf("basic_get-time")!, []));
    assert.equal(await frame.evaluate(() => self.origin), host.sandboxOrigin, "the app runs on the sandbox's origin");
    const reach = await frame.evaluate(() => {
      try {
        return window.top!.document.title;
      } catch {
        return "blocked";
      }
    });
    assert.equal(reach, "blocked", "the app cannot reach into the host's page");
    // the example declares no connectDomains: the hub is not among the places it may fetch
    const before = host.violations.length;
    assert.equal(
      await frame.evaluate(
        (url) =>
          fetch(url).then(
            () => "reached",
            () => "blocked",
          ),
        hub.origin,
      ),
      "blocked",
    );
    await until("the CSP's report of the blocked fetch", () => host.violations.slice(before).some((v) => /connect-src/.test(v)));
  });

  test("a host that forwards the app's call by the name the app wrote gets no tool of that name from the hub", async () => {
    const forwarded: string[] = [];
    const verbatim = (c: AppToolCall) => {
      forwarded.push(c.name);
      return agent.callTool({ name: c.name, arguments: c.arguments ?? {} }) as Promise<CallToolResult>;
    };
    const { frame } = await showCall("basic_get-time", verbatim);
    await frame.locator("#get-time-btn").click();
    await until("the app's error", async () => (await frame.locator("#server-time").textContent()) === "[ERROR]");
    assert.deepEqual(forwarded, ["get-time"]);
    // what that host got: the hub's refusal, naming both instances' tools
    await assert.rejects(agent.callTool({ name: "get-time", arguments: {} }), (err: Error) => {
      assert.match(err.message, /Unknown tool 'get-time'\. Did you mean: .*basic_get-time/);
      assert.match(err.message, /basic2_get-time/);
      return true;
    });
  });
});
