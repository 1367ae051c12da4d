// Search mode (?catalog=search) through real SDK clients: a small first tools/list, hub_find_tools
// ranking every server's tools, found tools joining the session's catalog with list_changed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { measureCatalog } from "../../../bench/catalog-size.js";
import { BUILTIN_SERVERS } from "../../../hub/config/config.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";

interface Found {
  query: string;
  matches: Array<{ name: string; description: string; inputSchema: { type: string }; score: number }>;
}

async function find(client: Client, query: string, limit?: number): Promise<Found> {
  const result = await call(client, "hub_find_tools", { query, ...(limit ? { limit } : {}) });
  assert.equal(result.isError, undefined, textOf(result));
  return result.structuredContent as unknown as Found;
}

describe("search mode", () => {
  let hub: TestHub;
  before(async () => {
    // built-in servers as by default, listed from the build's manifest and started on their first call
    hub = await startHub({ servers: [...BUILTIN_SERVERS], env: { AGENTBOX_START: "" } });
  });
  after(() => hub.stop());

  // 4,000 until issue 38 added hub_recordings and hub_live_view (0.35 KB each, and the MCP App's `embedded`)
  test("starts with the hub's own tools only, under 4,800 bytes of what a model reads", async () => {
    const client = await hub.connect({ path: "/mcp?catalog=search" });
    const listed = await client.listTools();
    // the catalog budget's measure (bench/catalog-size.ts): output schemas are the client's, not the model's
    const { bytes } = measureCatalog(listed.tools);
    assert.ok(bytes < 4800, `${bytes} bytes`);
    assert.ok(listed.tools.some((t) => t.name === "hub_find_tools"));
    assert.ok(
      listed.tools.every((t) => t.name.startsWith("hub_")),
      listed.tools.map((t) => t.name).join(","),
    );
    assert.match(client.getInstructions() ?? "", /call hub_find_tools with a task/, "the instructions say how to find the rest");
    const full = await (await hub.connect()).listTools();
    assert.ok(!full.tools.some((t) => t.name === "hub_find_tools"), "the full catalog has no need of it");
  });

  test("finds browser_click and terminal_exec; they are then listed (with list_changed) and callable", async () => {
    const client = await hub.connect({ path: "/mcp?catalog=search" });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);

    const click = await find(client, "click a button on a web page");
    assert.ok(
      click.matches.slice(0, 3).some((m) => m.name === "browser_click"),
      click.matches.map((m) => m.name).join(","),
    );
    const shell = await find(client, "run a shell command");
    assert.ok(
      shell.matches.slice(0, 3).some((m) => m.name === "terminal_exec"),
      shell.matches.map((m) => m.name).join(","),
    );
    const exec = shell.matches.find((m) => m.name === "terminal_exec")!;
    assert.equal(exec.inputSchema.type, "object");
    assert.ok(exec.description.length > 0);

    assert.equal(changed, 2, "one notifications/tools/list_changed per search that added tools");
    const listed = (await client.listTools()).tools.map((t) => t.name);
    for (const name of ["browser_click", "terminal_exec"]) assert.ok(listed.includes(name), `${name} in ${listed.join(",")}`);
    assert.ok(!listed.includes("file_write"), "what was not found stays unlisted");

    const ran = await call(client, "terminal_exec", { command: "echo found-and-called" });
    assert.equal(ran.isError, undefined, textOf(ran));
    assert.match(textOf(ran), /found-and-called/);

    await find(client, "run a shell command");
    assert.equal(changed, 2, "a search that adds nothing new sends no notification");
  });

  test("a client that ignores list_changed can call what hub_find_tools returned", async () => {
    const client = await hub.connect({ path: "/mcp?catalog=search" });
    const found = await find(client, "list the files in a folder", 3);
    assert.ok(found.matches.length > 0 && found.matches.length <= 3);
    const listing = found.matches.find((m) => m.name === "file_list");
    assert.ok(listing, found.matches.map((m) => m.name).join(","));
    const result = await call(client, "file_list", {});
    assert.equal(result.isError, undefined, textOf(result));
  });

  test("search ranks only the session's selection, and bad arguments say what is allowed", async () => {
    const client = await hub.connect({ path: "/mcp?catalog=search&servers=file,terminal" });
    const found = await find(client, "click a button on a web page", 20);
    assert.ok(found.matches.length > 0, "the search finds something in the selection");
    assert.ok(
      found.matches.every((m) => /^(file|terminal|hub)_/.test(m.name)),
      found.matches.map((m) => m.name).join(","),
    );
    const refused = await call(client, "browser_click", { selector: "button" });
    assert.match(textOf(refused), /not in this session's selection/);

    const empty = await call(client, "hub_find_tools", { query: "  " });
    assert.equal(empty.isError, true);
    assert.match(textOf(empty), /query: say what the tool should do/);
    const tooMany = await call(client, "hub_find_tools", { query: "files", limit: 500 });
    assert.match(textOf(tooMany), /limit: at most 20/);
  });

  test("a sessionless caller is told its tools/list stays the same, and can call what was found by name", async () => {
    // a script POSTing plain JSON without initialize: no session, so no list that could grow
    const plain = async (body: Record<string, unknown>) => {
      const res = await fetch(`${hub.origin}/mcp?catalog=search`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
      });
      return (await res.json()) as { result: { tools?: Array<{ name: string }>; content?: Array<{ text: string }>; isError?: boolean } };
    };
    const before = (await plain({ method: "tools/list" })).result.tools!.map((t) => t.name);
    const found = (await plain({ method: "tools/call", params: { name: "hub_find_tools", arguments: { query: "run a shell command" } } })).result;
    const text = found.content![0]!.text;
    assert.doesNotMatch(text, /now in your tool list/);
    assert.match(text, /callable by name now; your tools\/list stays the same, because this request has no MCP session \(no Mcp-Session-Id\)/);
    assert.match(text, /terminal_exec/);
    assert.deepEqual(
      (await plain({ method: "tools/list" })).result.tools!.map((t) => t.name),
      before,
      "what the answer says is what tools/list does",
    );
    const ran = (await plain({ method: "tools/call", params: { name: "terminal_exec", arguments: { command: "echo called-by-name" } } })).result;
    assert.equal(ran.isError, undefined);
    assert.match(ran.content![0]!.text, /called-by-name/);
  });

  test("search mode cannot exclude its own way in", async () => {
    await assert.rejects(() => hub.connect({ path: "/mcp?catalog=search&tools=!hub_*" }), /catalog=search needs hub_find_tools/);
  });
});
