// Choosing the tools per session by URL (?servers= ?tools=) through real SDK clients over HTTP: what
// is listed, what is refused and why, and that a session's selection cannot be widened later.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import picomatch from "picomatch";
import { BUILTIN_SERVERS } from "../../../hub/config/config.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { both, initialize, json, post } from "../../helpers/raw-http.js";

const HUB_TOOLS = [
  "hub_status",
  "hub_metrics",
  "hub_sessions",
  "hub_calls",
  "hub_end_session",
  "hub_new_context",
  "hub_cancel_task",
  "hub_preview",
  "hub_end_preview",
  "hub_recordings",
  "hub_live_view",
];

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

describe("tool selection by URL", () => {
  let hub: TestHub;
  let all: string[];
  before(async () => {
    // built-in servers as by default, listed from the build's manifest and started on their first call
    hub = await startHub({ servers: [...BUILTIN_SERVERS], extraServers: { conformance: fixture("conformance-server") }, env: { AGENTBOX_START: "" } });
    all = await names(await hub.connect());
  });
  after(() => hub.stop());

  const expected = (keep: (tool: string) => boolean) => all.filter((t) => HUB_TOOLS.includes(t) || keep(t)).sort();

  test("?servers= lists exactly those servers' tools (and the hub's), and refuses the rest with a reason", async () => {
    const client = await hub.connect({ path: "/mcp?servers=file,terminal" });
    const listed = await names(client);
    assert.deepEqual(
      listed,
      expected((t) => t.startsWith("file_") || t.startsWith("terminal_")),
    );
    assert.ok(listed.includes("terminal_exec") && listed.includes("file_read"));

    const refused = await call(client, "browser_navigate", { url: "about:blank" });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /'browser_navigate' exists but is not in this session's selection/);
    assert.match(textOf(refused), /\?servers=browser/, "says how to select it");

    const allowed = await call(client, "terminal_exec", { command: "echo selected" });
    assert.equal(allowed.isError, undefined, textOf(allowed));
    assert.match(textOf(allowed), /selected/);
  });

  test("?tools= takes names and globs; both parameters combine; hub tools go only when excluded", async () => {
    const byTools = await hub.connect({ path: "/mcp?tools=browser_navigate,file_re*" });
    const isFileRe = picomatch("file_re*");
    assert.deepEqual(
      await names(byTools),
      expected((t) => t === "browser_navigate" || isFileRe(t)),
    );
    const outside = await call(byTools, "terminal_exec", { command: "echo no" });
    assert.match(textOf(outside), /'terminal_exec' exists but is not in this session's selection.*\?tools=terminal_exec/s);

    const combined = await hub.connect({ path: "/mcp?servers=file&tools=file_read,!hub_metrics" });
    assert.deepEqual(await names(combined), ["file_read", ...HUB_TOOLS.filter((t) => t !== "hub_metrics")].sort());
    const excludedHubTool = await call(combined, "hub_metrics");
    assert.equal(excludedHubTool.isError, true);
    assert.match(textOf(excludedHubTool), /'hub_metrics' exists but is not in this session's selection/);
    assert.equal((await call(combined, "hub_status")).isError, undefined);
  });

  test("an unknown tool stays an unknown tool, not a selection refusal", async () => {
    const client = await hub.connect({ path: "/mcp?servers=file" });
    await assert.rejects(() => call(client, "no_such_tool"), /Unknown tool 'no_such_tool'/);
  });

  test("?servers= also selects prompts and resources", async () => {
    const withConformance = await hub.connect({ path: "/mcp?servers=conformance" });
    assert.ok((await withConformance.listPrompts()).prompts.length > 0);
    assert.ok((await withConformance.listResources()).resources.some((r) => r.uri === "test://static-text"));

    const fileOnly = await hub.connect({ path: "/mcp?servers=file" });
    assert.deepEqual((await fileOnly.listPrompts()).prompts, []);
    assert.ok(!(await fileOnly.listResources()).resources.some((r) => r.uri.startsWith("test://")));
    assert.deepEqual(
      (await fileOnly.listResourceTemplates()).resourceTemplates.filter((t) => t.uriTemplate.startsWith("test://")),
      [],
    );
    await assert.rejects(() => fileOnly.readResource({ uri: "test://static-text" }), /Resource not found/);
    await assert.rejects(() => fileOnly.getPrompt({ name: "conformance_test_simple_prompt" }), /Unknown prompt/);
  });

  test("a bad selection is refused at initialize: HTTP 400 and a JSON-RPC error naming it", async () => {
    const cases: Array<[string, RegExp]> = [
      ["servers=file,nope", /Unknown server 'nope'.*file, terminal/],
      ["tools=zzz_*", /pattern 'zzz_\*' matches no tool/],
      ["tools=file_raed", /'file_raed' matches no tool\. Did you mean: file_read/],
      ["servers=file&tools=browser_click", /'browser_click' matches no tool of the servers in \?servers=file/],
      ["catalog=maybe", /\?catalog=: full or search, not 'maybe'/],
      ["tools=file_read;rm", /Bad \?tools= 'file_read;rm'/],
      ["servers=", /Bad \?servers=.*at least one server/],
    ];
    for (const [query, message] of cases) {
      const init = {
        jsonrpc: "2.0",
        id: 7,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      };
      const res = await fetch(`${hub.url}?${query}`, { method: "POST", headers: both, body: JSON.stringify(init) });
      assert.equal(res.status, 400, query);
      assert.equal(res.headers.get("mcp-session-id"), null, `${query}: no session is created`);
      const body = (await res.json()) as { id: unknown; error: { code: number; message: string } };
      assert.equal(body.id, 7, query);
      assert.equal(body.error.code, -32602, query);
      assert.match(body.error.message, message, query);
    }
    await assert.rejects(() => hub.connect({ path: "/mcp?servers=nope" }), /Unknown server 'nope'/, "an SDK client sees the reason");
    const sse = await fetch(`${hub.origin}/sse?tools=nothing_here`);
    assert.equal(sse.status, 400);
    assert.match(await sse.text(), /'nothing_here' matches no tool/);
  });

  test("the selection is fixed at initialize: a later request cannot widen it", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    };
    const opened = await fetch(`${hub.url}?servers=file`, { method: "POST", headers: both, body: JSON.stringify(init) });
    const session = opened.headers.get("mcp-session-id")!;
    await opened.text();
    const headers = { ...json, Accept: "application/json", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    // the attacker repeats the session with a wider URL, then with the endpoint's other path
    for (const url of [`${hub.url}?servers=terminal,browser`, `${hub.origin}/v1/mcp?tools=*`, hub.url]) {
      const listed = await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
      const tools = ((await listed.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
      assert.ok(tools.includes("file_read") && tools.every((t) => t.startsWith("file_") || t.startsWith("hub_")), `${url}: ${tools.join(",")}`);
      const exec = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "terminal_exec", arguments: { command: "id" } } }),
      });
      const result = ((await exec.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } }).result;
      assert.equal(result.isError, true, url);
      assert.match(result.content[0].text, /not in this session's selection/);
    }
  });

  test("sessionless plain JSON requests carry the selection per request", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const selected = await fetch(`${hub.url}?servers=terminal`, { method: "POST", headers: json, body: JSON.stringify(list) });
    const tools = ((await selected.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name).sort();
    assert.deepEqual(
      tools,
      expected((t) => t.startsWith("terminal_")),
    );
    const unselected = await post(hub, list);
    assert.equal(unselected.body.result.tools.length, all.length, "the next request without parameters sees everything");

    const callOutside = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "file_list", arguments: {} } };
    const refused = await fetch(`${hub.url}?servers=terminal`, { method: "POST", headers: json, body: JSON.stringify(callOutside) });
    assert.match(((await refused.json()) as { result: { content: Array<{ text: string }> } }).result.content[0].text, /not in this session's selection/);
    const bad = await fetch(`${hub.url}?servers=nope`, { method: "POST", headers: json, body: JSON.stringify(list) });
    assert.equal(bad.status, 400);
  });

  test("/v1/mcp and the legacy /sse endpoint take the same parameters", async () => {
    const v1 = await hub.connect({ path: "/v1/mcp?servers=markitdown" });
    assert.deepEqual(
      await names(v1),
      expected((t) => t.startsWith("markitdown_")),
    );

    const legacy = new Client({ name: "legacy", version: "1" });
    await legacy.connect(new SSEClientTransport(new URL(`${hub.origin}/sse?tools=file_read`)));
    try {
      assert.deepEqual(await names(legacy), ["file_read", ...HUB_TOOLS].sort());
      assert.match(textOf(await call(legacy, "file_list")), /not in this session's selection/);
    } finally {
      await legacy.close();
    }
  });

  test("a raw initialize without parameters still gets the full catalog", async () => {
    const session = await initialize(hub);
    const res = await post(
      hub,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { ...json, Accept: "application/json", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    );
    assert.equal(res.body.result.tools.length, all.length);
  });
});
