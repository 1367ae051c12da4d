// Two instances of one MCP App server behind the hub (test/fixtures/mcp-app-server.ts, prefixes
// "one" and "two"), both serving ui://labels/app.html: each tool's app URI, in either key and for
// clients of either era, is published under its server's prefix and reads back that server's own
// HTML (its label), listed and read as the hub publishes it. A session whose selection leaves a
// server out cannot read that server's app by naming its published URI. Search mode's
// hub_find_tools never offers the model a tool only an app may call.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { connectModern } from "../modern/modern-client.js";

const FLAT_KEY = "ui/resourceUri";
const appServer = (label: string, prefix: string) => ({ ...fixture("mcp-app-server"), env: { APP_LABEL: label }, prefix });

type Read = { contents: Array<{ uri: string; mimeType?: string; text?: string; _meta?: Record<string, unknown> }> };
interface AppClient {
  listTools(): Promise<{ tools: Tool[] }>;
  readResource(params: { uri: string }): Promise<Read>;
  listResources(): Promise<{ resources: Array<{ uri: string }> }>;
  close(): Promise<void>;
}

const appOf = (tools: Tool[], name: string) => {
  const meta = tools.find((t) => t.name === name)?._meta as { ui?: { resourceUri?: string }; [FLAT_KEY]?: string } | undefined;
  return { nested: meta?.ui?.resourceUri, flat: meta?.[FLAT_KEY] };
};

describe("two instances of one MCP App server", () => {
  let hub: TestHub;
  const closing: AppClient[] = [];

  before(async () => {
    hub = await startHub({ extraServers: { first: appServer("label of the first", "one"), second: appServer("label of the second", "two") } });
  });
  after(async () => {
    await Promise.allSettled(closing.map((c) => c.close()));
    await hub?.stop();
  });

  const eras: Array<[string, () => Promise<AppClient>]> = [
    ["a 2025 client", async () => (await hub.connect()) as unknown as AppClient],
    ["a 2026-07-28 client", async () => (await connectModern(hub)) as unknown as AppClient],
  ];
  for (const [era, connect] of eras) {
    test(`each tool's app reads back its own server's HTML, for ${era}`, { timeout: 60_000 }, async () => {
      const client = await connect();
      closing.push(client);
      const { tools } = await client.listTools();
      for (const [prefix, label] of [
        ["one", "label of the first"],
        ["two", "label of the second"],
      ]) {
        const app = appOf(tools, `${prefix}_show_label`);
        assert.equal(app.nested, `ui://${prefix}/labels/app.html`);
        assert.equal(app.flat, app.nested, "the flat key older hosts read names the same app");
        const read = await client.readResource({ uri: app.nested! });
        assert.equal(read.contents.length, 1);
        assert.equal(read.contents[0].uri, app.nested, "the contents name the URI as published");
        assert.equal(read.contents[0].mimeType, "text/html;profile=mcp-app");
        assert.match(read.contents[0].text ?? "", new RegExp(`<p id="label">${label}</p>`));
        assert.deepEqual((read.contents[0]._meta as { ui?: unknown } | undefined)?.ui, { csp: { connectDomains: [] }, prefersBorder: false });
      }
      const listed = (await client.listResources()).resources.map((r) => r.uri);
      assert.ok(listed.includes("ui://one/labels/app.html") && listed.includes("ui://two/labels/app.html"), listed.join(", "));
      assert.ok(!listed.includes("ui://labels/app.html"), "no server's own app URI is listed as it came");
    });
  }

  test("search mode never offers the model a tool only its app may call", { timeout: 60_000 }, async () => {
    const client = await hub.connect({ path: "/mcp?catalog=search" });
    closing.push(client as unknown as AppClient);
    const found = await call(client, "hub_find_tools", { query: "label", limit: 20 });
    const names = (found.structuredContent as { matches: Array<{ name: string }> }).matches.map((m) => m.name);
    assert.ok(names.includes("one_show_label") && names.includes("two_show_label"), names.join(", "));
    assert.ok(!names.some((n) => n.endsWith("_relabel")), `app-only tools found for the model: ${names.join(", ")}`);
    assert.doesNotMatch(textOf(found), /relabel/);
    // the full list still has them, for the host to check an app's call against (and keep from the model)
    const full = (await ((await hub.connect()) as unknown as AppClient).listTools()).tools;
    assert.deepEqual((full.find((t) => t.name === "one_relabel")?._meta?.ui as { visibility?: string[] } | undefined)?.visibility, ["app"]);
  });

  test("a session that selected one server cannot read the other's app by its published URI", { timeout: 60_000 }, async () => {
    const client = (await hub.connect({ path: "/mcp?servers=first" })) as unknown as AppClient;
    closing.push(client);
    assert.match((await client.readResource({ uri: "ui://one/labels/app.html" })).contents[0].text ?? "", /label of the first/);
    await assert.rejects(client.readResource({ uri: "ui://two/labels/app.html" }), /Resource not found/);
  });
});
