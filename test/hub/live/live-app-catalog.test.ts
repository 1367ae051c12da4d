// The live view as an MCP App, as clients list and read it: a 2025 session and a 2026-07-28 client
// that declare the MCP Apps extension see ui://agentbox/live-view among the children's resources
// and `_meta.ui.resourceUri` on the watched tools only; clients that do not declare it see exactly
// what they saw before. The resource holds no key or token, and its CSP names the hub alone.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ClientCapabilities, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import { call, startHub, type TestHub } from "../../helpers/hub.js";
import { connectModern } from "../modern/modern-client.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;
const auth = { Authorization: `Bearer ${KEY}` };
const APP_URI = "ui://agentbox/live-view";
const APPS = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const WATCHED = ["browser_navigate", "browser_click", "browser_type", "terminal_session_create", "terminal_session_send"];
const PAGE = `data:text/html,${encodeURIComponent("<title>Still</title><h1>The same page for everyone</h1>")}`;

type Lister = Pick<Client, "listTools" | "listResources" | "listResourceTemplates" | "readResource">;

const uiOf = (tool: Tool) => (tool._meta as { ui?: { resourceUri?: string } } | undefined)?.ui;

describe("the live view app in the catalog", () => {
  let hub: TestHub;
  let apps: Client;
  let plain: Client;
  let modernApps: ModernClient;
  let modernPlain: ModernClient;

  before(async () => {
    hub = await startHub({ servers: ["browser", "terminal", "file"], config: { tenants: { alice: { apiKey: KEY } } } });
    fs.writeFileSync(path.join(hub.workspace, "notes.md"), "# notes\n");
    hub.handToTenant(path.join(hub.workspace, "notes.md"));
    apps = await hub.connect({ headers: auth, capabilities: APPS as ClientCapabilities });
    plain = await hub.connect({ headers: auth });
    modernApps = await connectModern(hub, { headers: auth, capabilities: APPS });
    modernPlain = await connectModern(hub, { headers: auth });
  });

  after(async () => {
    await Promise.allSettled([modernApps?.close(), modernPlain?.close()]);
    await hub?.stop();
  });

  const eras = () =>
    [
      ["2025", apps, plain],
      ["2026-07-28", modernApps, modernPlain],
    ] as Array<[string, Lister, Lister]>;

  test("a client that renders MCP Apps sees the resource with the children's, in both eras", async () => {
    const wsOrigin = hub.origin.replace(/^http/, "ws");
    for (const [era, withApps, without] of eras()) {
      const listed = (await withApps.listResources()).resources as Resource[];
      const app = listed.find((r) => r.uri === APP_URI);
      assert.ok(app, `${era}: the app is listed`);
      assert.equal(app.mimeType, "text/html;profile=mcp-app");
      assert.deepEqual((app._meta as { ui: unknown }).ui, { csp: { connectDomains: [hub.origin, wsOrigin] }, prefersBorder: true });
      // the children's resources are still there, and only the app is added
      const others = ((await without.listResources()).resources as Resource[]).map((r) => r.uri).sort();
      assert.ok(others.includes("file:///notes.md"), `${era}: a child's resource is listed: ${others.join(", ")}`);
      assert.deepEqual(listed.map((r) => r.uri).sort(), [...others, APP_URI].sort(), era);
      assert.ok(!others.includes(APP_URI), `${era}: a client without the extension is not offered the app`);
      // templates are the children's own
      const templates = (await withApps.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      assert.deepEqual(
        templates,
        (await without.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
      );
      assert.ok(!templates.some((t) => t.startsWith("ui://")));
    }
  });

  test("the resource reads as one HTML document with its CSP, and holds no key or token", async () => {
    const wsOrigin = hub.origin.replace(/^http/, "ws");
    for (const [era, withApps, without] of eras()) {
      for (const reader of [withApps, without]) {
        const { contents } = await reader.readResource({ uri: APP_URI });
        assert.equal(contents.length, 1, era);
        const [item] = contents as Array<{ uri: string; mimeType: string; text: string; _meta: { ui: { csp: Record<string, string[]> } } }>;
        assert.equal(item.uri, APP_URI);
        assert.equal(item.mimeType, "text/html;profile=mcp-app");
        assert.match(item.text, /^<!doctype html>/i);
        // one self-contained document: nothing loaded from anywhere
        assert.doesNotMatch(item.text, /<script[^>]*\ssrc=|<link[^>]*\shref=/i);
        // the CSP names the hub's origin and nothing else: no frames, no other connections or resources
        assert.deepEqual(item._meta.ui.csp, { connectDomains: [hub.origin, wsOrigin] }, era);
        // no secret: not the key, no live view token, no bearer header
        assert.ok(!item.text.includes(KEY), `${era}: the API key is not in the app`);
        assert.doesNotMatch(item.text, /\/live\/[a-z2-7]{26}/);
        assert.doesNotMatch(item.text, /Bearer [A-Za-z0-9]/);
      }
    }
  });

  test("the watched tools carry _meta.ui.resourceUri for Apps clients, no tool does for the others", async () => {
    for (const [era, withApps, without] of eras()) {
      const tools = (await withApps.listTools()).tools as Tool[];
      for (const name of WATCHED) assert.equal(uiOf(tools.find((t) => t.name === name)!)?.resourceUri, APP_URI, `${era}: ${name}`);
      const marked = tools.filter((t) => uiOf(t)).map((t) => t.name);
      for (const name of ["browser_snapshot", "browser_tabs", "terminal_exec", "file_read", "hub_live_view"])
        assert.ok(!marked.includes(name), `${era}: ${name}`);
      const plainTools = (await without.listTools()).tools as Tool[];
      assert.deepEqual(
        plainTools.filter((t) => t._meta && ("ui" in t._meta || "ui/resourceUri" in t._meta)).map((t) => t.name),
        [],
        `${era}: no ui metadata without the extension`,
      );
      // the same tools otherwise: names, schemas, descriptions
      const strip = (t: Tool) => {
        const meta = { ...(t._meta ?? {}) };
        delete meta.ui;
        delete meta["ui/resourceUri"];
        return { ...t, _meta: Object.keys(meta).length ? meta : undefined };
      };
      assert.deepEqual(tools.map(strip), plainTools.map(strip), era);
    }
  });

  test("a watched tool's result is the same for a client that renders Apps and one that does not", async () => {
    const shown = await call(apps, "browser_navigate", { url: PAGE });
    const seen = await call(plain, "browser_navigate", { url: PAGE });
    assert.ok(!shown.isError);
    assert.deepEqual(shown.content, seen.content);
    assert.deepEqual(shown.structuredContent, seen.structuredContent);
    assert.equal(shown._meta, seen._meta);
  });
});
