// Clients that list often, as real ones do: the MCP Inspector's CLI connects, lists the tools and
// calls one for every command (2026-07-28: it lists twice), and a 2026 client, told ttlMs 0, may
// list whenever it likes. The hub's default limits must never trip them, and still hold a flood.
// And a client that connects while a configured server is still starting gets a complete first list.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DEFAULT_RATE_LIMITS } from "../../../hub/config/config.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { connectModern } from "../modern/modern-client.js";

const KEY = "listing-key";
const auth = { Authorization: `Bearer ${KEY}` };

/** One command of the Inspector's CLI: a new connection, its tools/list (two in 2026), the call. */
async function inspectorCommand(hub: TestHub, era: "2025" | "2026", text: string): Promise<string> {
  if (era === "2025") {
    const client: Client = await hub.connect({ headers: auth });
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === "echo_echo"));
      return textOf(await call(client, "echo_echo", { text }));
    } finally {
      await client.close();
    }
  }
  const client = await connectModern(hub, { headers: auth });
  try {
    for (let i = 0; i < 2; i++) assert.ok((await client.listTools()).tools.some((t) => t.name === "echo_echo"));
    const result = await client.callTool({ name: "echo_echo", arguments: { text } });
    return (result.content as Array<{ text: string }>)[0]!.text;
  } finally {
    await client.close();
  }
}

describe("the default limits and clients that list before every call", () => {
  let hub: TestHub;
  before(async () => {
    // the defaults as shipped (the test helper turns limits off unless told), one API key: one budget for every command
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      env: { AGENTBOX_API_KEY: KEY, AGENTBOX_RATE_LIMITS: JSON.stringify(DEFAULT_RATE_LIMITS) },
    });
  });
  after(() => hub.stop());

  test("thirty Inspector CLI commands of each era in a row are all answered", async () => {
    for (let i = 0; i < 30; i++) {
      for (const era of ["2025", "2026"] as const) assert.equal(await inspectorCommand(hub, era, `${era}-${i}`), `${era}-${i}`);
    }
  });

  test("a flood of tools/list is still held, with a retry time", async () => {
    // plain JSON, as a script would flood: the API key's one budget, without an SDK client's work per list
    const list = () =>
      fetch(hub.url, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    let refused: Response | undefined;
    for (let i = 0; i < 1000 && !refused; i++) {
      const res = await list();
      const body = await res.text();
      if (res.status === 429) refused = res;
      else assert.equal(res.status, 200, body);
    }
    assert.ok(refused, "a thousand lists in a row are not all answered");
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  });
});

describe("a list asked while a configured server starts", () => {
  let hub: TestHub;
  before(async () => {
    // the server takes seconds to serve, as an npx-installed one does: the clients connect before it is up
    hub = await startHub({
      extraServers: { slow: { ...fixture("slow-start-server"), env: { AGENTBOX_FIXTURE_START_MS: "2500" } } },
      waitReady: false,
    });
  });
  after(() => hub.stop());

  test("the first tools/list of either era already holds the starting server's tools", async () => {
    const [old, modern] = await Promise.all([hub.connect(), connectModern(hub)]);
    const [oldList, modernList] = await Promise.all([old.listTools(), modern.listTools()]);
    for (const list of [oldList, modernList]) {
      const names = list.tools.map((t) => t.name);
      assert.ok(names.includes("slow_pids"), `listed: ${names.join(", ")}`);
    }
    const status = (await (await fetch(`${hub.origin}/`)).json()) as { servers: Array<{ name: string; state: string }> };
    assert.equal(status.servers.find((s) => s.name === "slow")?.state, "ready");
    await Promise.all([old.close(), modern.close()]);
  });
});
