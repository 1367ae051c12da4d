// Published names and collisions in hub/catalog/catalog.ts, over stand-in children that carry only what
// Catalog reads (name, prefix, config, enabled and the lists), so no server process runs.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { Catalog, publishedName } from "../../../hub/catalog/catalog.js";
import type { Child } from "../../../hub/children/child.js";
import type { ServerConfig } from "../../../hub/config/config.js";

const tool = (name: string, description?: string): Tool => ({ name, description, inputSchema: { type: "object" } });

function child(name: string, tools: string[], config: Partial<ServerConfig> = {}, enabled = true): Child {
  return {
    name,
    prefix: config.prefix ?? name,
    config: { command: "unused", ...config },
    enabled,
    tools: tools.map((t) => tool(t)),
    prompts: [],
    resourceTemplates: [],
    capabilities: {},
  } as unknown as Child;
}

function built(children: Child[], reserved: string[] = []): Catalog {
  const catalog = new Catalog(children, new Set(reserved));
  catalog.rebuild();
  return catalog;
}

describe("published names", () => {
  test("prefix, underscore, name; an empty prefix publishes the bare name", () => {
    assert.equal(publishedName("file", "read"), "file_read");
    assert.equal(publishedName("", "read"), "read");
  });

  test("characters MCP clients refuse become _, and names are cut to 64", () => {
    assert.equal(publishedName("web", "get.page/v2"), "web_get_page_v2");
    assert.equal(publishedName("x", "é"), "x__");
    const long = publishedName("server", "a".repeat(100));
    assert.equal(long.length, 64);
    assert.match(long, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.equal(publishedName("", "."), "_");
  });

  test("the owner of a published name is the child and its own name for the tool", () => {
    const file = child("file", ["read", "get.page"]);
    const catalog = built([file]);
    assert.deepEqual(
      catalog.tools.map((t) => t.name),
      ["file_read", "file_get_page"],
    );
    const owner = catalog.tool("file_get_page");
    assert.deepEqual(
      { child: owner?.child, original: owner?.original, takesContext: owner?.takesContext },
      { child: file, original: "get.page", takesContext: false },
    );
    assert.equal(catalog.tool("read"), undefined);
    assert.equal(catalog.tools[0].description, "read (from the file server)");
    assert.deepEqual(catalog.collisions, []);
  });
});

describe("collisions", () => {
  test("two servers under one prefix: the first keeps the name, the second is reported", () => {
    const a = child("a", ["read"], { prefix: "fs" });
    const b = child("b", ["read", "write"], { prefix: "fs" });
    const catalog = built([a, b]);
    assert.equal(catalog.tool("fs_read")?.child, a);
    assert.equal(catalog.tool("fs_write")?.child, b);
    assert.equal(catalog.collisions.length, 1);
    assert.match(catalog.collisions[0], /'fs_read' is published by server 'a' \(tool 'read'\) and by server 'b' \(tool 'read'\)/);
  });

  test("names that differ only after the 64th character collide once cut, and are reported", () => {
    const stem = "x".repeat(70);
    const catalog = built([child("s", [`${stem}_one`, `${stem}_two`])]);
    assert.equal(catalog.tools.length, 1);
    assert.equal(catalog.tool(catalog.tools[0].name)?.original, `${stem}_one`);
    assert.equal(catalog.collisions.length, 1);
    assert.match(catalog.collisions[0], /_two'\)/);
  });

  test("names that differ only in cleaned characters collide", () => {
    const catalog = built([child("s", ["a.b", "a/b"])]);
    assert.deepEqual(
      catalog.tools.map((t) => t.name),
      ["s_a_b"],
    );
    assert.equal(catalog.collisions.length, 1);
  });

  test("a child cannot publish a name the hub serves itself", () => {
    const rogue = child("hub", ["status", "other"]);
    const catalog = built([rogue], ["hub_status"]);
    assert.equal(catalog.tool("hub_status"), undefined);
    assert.equal(catalog.tool("hub_other")?.child, rogue);
    assert.match(catalog.collisions.join("\n"), /'hub_status'.*is a tool the hub serves itself/);
  });

  test("a disabled child publishes nothing and collides with nothing", () => {
    const catalog = built([child("a", ["read"], { prefix: "fs" }, false), child("b", ["read"], { prefix: "fs" })]);
    assert.equal(catalog.tool("fs_read")?.child.name, "b");
    assert.deepEqual(catalog.collisions, []);
  });
});

describe("allow and deny", () => {
  test("allow keeps only matches of the tool's own or published name; deny drops matches of either", () => {
    const names = (config: Partial<ServerConfig>) => built([child("file", ["read", "write", "delete"], config)]).tools.map((t) => t.name);
    assert.deepEqual(names({ tools: { allow: ["read", "file_write"] } }), ["file_read", "file_write"]);
    assert.deepEqual(names({ tools: { deny: ["del*"] } }), ["file_read", "file_write"]);
    assert.deepEqual(names({ tools: { deny: ["file_w*"] } }), ["file_read", "file_delete"]);
    assert.deepEqual(names({ tools: { allow: ["*"], deny: ["write"] } }), ["file_read", "file_delete"]);
    assert.deepEqual(names({ tools: { allow: [], deny: [] } }), ["file_read", "file_write", "file_delete"]);
  });

  test("a denied tool frees its name, so it does not collide", () => {
    const catalog = built([child("a", ["read"], { prefix: "fs", tools: { deny: ["read"] } }), child("b", ["read"], { prefix: "fs" })]);
    assert.equal(catalog.tool("fs_read")?.child.name, "b");
    assert.deepEqual(catalog.collisions, []);
  });
});
