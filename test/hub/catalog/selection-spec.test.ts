// Selection parsing and matching on their own: the URL and config shapes, and how layers of a
// view keep, exclude and refuse tools, over a small catalog of plain tool lists.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { mergeDefaults, parseSelectionQuery, selectionConfigShape, SelectionError, unknownDefaultServers } from "../../../hub/config/selection-spec.js";
import { SessionView, viewForUrl } from "../../../hub/catalog/selection.js";
import { ToolSearch } from "../../../hub/catalog/tool-search.js";

const parse = (query: string) => parseSelectionQuery(new URLSearchParams(query));

describe("selection query parsing", () => {
  test("lists split on commas, repeat and trim; no parameters is no selection", () => {
    assert.deepEqual(parse("servers=file,%20terminal&tools=file_re*&tools=!hub_metrics&catalog=search"), {
      servers: ["file", "terminal"],
      tools: ["file_re*", "!hub_metrics"],
      catalog: "search",
    });
    assert.equal(parse("other=1"), undefined);
    assert.deepEqual(parse("catalog=full"), { catalog: "full" });
  });

  test("bad values are refused with what is allowed", () => {
    const refusals: Array<[string, RegExp]> = [
      ["catalog=all", /\?catalog=: full or search, not 'all'/],
      ["catalog=full&catalog=search", /given 2 times/],
      ["servers=,", /Bad \?servers=: name at least one server/],
      ["servers=../etc", /Bad \?servers= '\.\.\/etc'/],
      ["tools=a{b,c}", /Bad \?tools= 'a\{b'/],
      ["tools=" + "x".repeat(101), /Bad \?tools= 'x+': a tool name or glob/],
      ["tools=" + Array.from({ length: 101 }, (_, i) => `t${i}`).join(","), /Bad \?tools=/],
    ];
    for (const [query, message] of refusals)
      assert.throws(
        () => parse(query),
        (err: Error) => err instanceof SelectionError && message.test(err.message),
        query,
      );
  });

  test("config: the shape drops into any object; a tenant's keys win key by key; unknown servers are named", () => {
    const tenant = z.object({ apiKey: z.string(), ...selectionConfigShape }).strict();
    assert.ok(tenant.safeParse({ apiKey: "k", servers: ["file"], catalog: "search" }).success);
    assert.ok(!tenant.safeParse({ apiKey: "k", catalog: "some" }).success);
    assert.deepEqual(mergeDefaults({ servers: ["file"], tools: ["file_*"] }, { servers: ["arxiv"] }), { servers: ["arxiv"], tools: ["file_*"] });
    assert.equal(mergeDefaults(undefined, undefined), undefined);
    assert.match(unknownDefaultServers({ servers: ["file", "nope"] }, ["file"]) ?? "", /'nope', not in mcpServers \(file\)/);
    assert.equal(unknownDefaultServers({ servers: ["file"] }, ["file"]), undefined);
  });
});

const tool = (name: string): Tool => ({ name, description: name, inputSchema: { type: "object" } });
const SERVERS: Record<string, string[]> = {
  file: ["file_read", "file_write", "file_list"],
  terminal: ["terminal_exec", "terminal_session_create"],
  browser: ["browser_click", "browser_navigate"],
};
const owner = new Map(Object.entries(SERVERS).flatMap(([server, tools]) => tools.map((t) => [t, { child: { name: server } }] as const)));
const base = new SessionView({
  catalog: { tools: Object.values(SERVERS).flat().map(tool), tool: (name) => owner.get(name), suggestTools: () => [], search: new ToolSearch() },
  hubTools: () => [tool("hub_status"), tool("hub_metrics")],
  serverNames: () => Object.keys(SERVERS),
});
const refusal = (view: SessionView, name: string) => JSON.stringify(view.refuseCall(name)?.content ?? []);
const listed = (view: SessionView) =>
  view
    .listTools()
    .map((t) => t.name)
    .sort();

describe("selection matching", () => {
  test("servers and tools intersect; hub tools leave only when excluded", () => {
    const view = base.narrow({ servers: ["file", "terminal"], tools: ["*_read", "terminal_*", "!terminal_session_*", "!hub_metrics"] }, "url");
    assert.deepEqual(listed(view), ["file_read", "hub_status", "terminal_exec"]);
    assert.ok(view.allowsServer("file") && !view.allowsServer("browser"));
    assert.equal(view.refuseCall("file_read"), undefined);
    assert.equal(view.refuseCall("nonexistent"), undefined, "unknown tools are the router's to report");
    assert.match(refusal(view, "browser_click"), /exists but is not in this session's selection.*\?servers=browser/);
  });

  test("a narrowed view can only narrow further", () => {
    const defaults = base.narrow({ servers: ["file"] }, "config");
    assert.deepEqual(listed(defaults.narrow({ tools: ["file_l*"] }, "url")), ["file_list", "hub_metrics", "hub_status"]);
    assert.throws(() => defaults.narrow({ servers: ["terminal"] }, "url"), /outside the hub's configured selection/);
    assert.throws(() => defaults.narrow({ tools: ["terminal_exec"] }, "url"), /matches only tools outside/);
    assert.throws(() => defaults.narrow({ tools: ["!terminal_*"] }, "url"), /matches only tools outside/);
    assert.throws(() => base.narrow({ servers: ["hub"] }, "url"), /Unknown server 'hub'.*file, terminal, browser/);
    assert.match(refusal(defaults, "terminal_exec"), /configured selection excludes it/);
  });

  test("search mode lists the hub's tools and what was found, and allows every selected tool", () => {
    const view = base.narrow({ catalog: "search", servers: ["file"] }, "url");
    assert.deepEqual(listed(view), ["hub_find_tools", "hub_metrics", "hub_status"]);
    assert.equal(view.refuseCall("file_write"), undefined);
    view.found.add("file_write");
    assert.deepEqual(listed(view), ["file_write", "hub_find_tools", "hub_metrics", "hub_status"]);
    assert.throws(() => base.narrow({ catalog: "search", tools: ["!hub_find_tools"] }, "url"), /needs hub_find_tools/);
  });

  test("a bad URL becomes an HTTP 400 with a JSON-RPC error carrying the request id", async () => {
    const res = viewForUrl(base, "/mcp?servers=nope", 42);
    assert.ok(res instanceof Response);
    assert.equal(res.status, 400);
    const body = (await res.json()) as { id: number; error: { code: number; message: string } };
    assert.equal(body.id, 42);
    assert.match(body.error.message, /^Invalid tool selection: Unknown server 'nope'/);
    assert.ok(viewForUrl(base, "/mcp") instanceof SessionView);
  });
});
