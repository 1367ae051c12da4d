// Clients that list often, as real ones do: the MCP Inspector's CLI (the real one, v2) connects,
// lists the tools and calls one for every command (2025: initialize, logging/setLevel, tools/list,
// tools/call, and it never ends its session; 2026-07-28: server/discover, subscriptions/listen,
// tools/list twice, tools/call), and a 2026 client, told ttlMs 0, may list whenever it likes. The
// hub's default limits must never trip them, and still hold a flood.
// And a client that connects while a configured server is still starting gets a complete first list,
// and the server's prompts and resources by name.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DEFAULT_RATE_LIMITS } from "../../../hub/config/config.js";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { InspectorCli, type InspectorEra } from "../../helpers/inspector-cli.js";
import { connectModern } from "../modern/modern-client.js";

const KEY = "listing-key";
const auth = { Authorization: `Bearer ${KEY}` };

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

  test("thirty commands of the real Inspector CLI, fifteen in each era, both eras at once, are all answered", async () => {
    const inspector = new InspectorCli(hub.url, auth);
    try {
      const listed = await inspector.run("legacy", ["--method", "tools/list"]);
      const names = ((listed.json?.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
      assert.ok(names.includes("echo_echo"), `${listed.stdout}\n${listed.stderr}`);
      // one command after another in each era, as a script runs them; the eras side by side, on one budget:
      // 46 lists and 30 calls within a minute (each command costs the CLI ~0.8 s of CPU, so no more than the 30)
      const commands = async (era: InspectorEra) => {
        for (let i = 0; i < 15; i++) {
          const text = `${era}-${i}`;
          const run = await inspector.run(era, ["--method", "tools/call", "--tool-name", "echo_echo", "--tool-arg", `text=${text}`]);
          const result = run.json?.result as { content?: Array<{ text?: string }>; resultType?: string } | undefined;
          assert.equal(run.code, 0, `command ${i} of ${era}: ${run.stdout}\n${run.stderr}`);
          assert.equal(result?.content?.[0]?.text, text, run.stdout);
          // the era it spoke: only a 2026-07-28 result says it is complete
          assert.equal(result?.resultType, era === "modern" ? "complete" : undefined, run.stdout);
        }
      };
      await Promise.all([commands("legacy"), commands("modern")]);
    } finally {
      inspector.cleanup();
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

describe("requests while a configured server starts", () => {
  let hub: TestHub;
  before(async () => {
    // the server takes seconds to serve, as an npx-installed one does: the clients connect before it is up
    hub = await startHub({
      extraServers: { slow: { ...fixture("slow-start-server"), env: { AGENTBOX_FIXTURE_START_MS: "2500" } } },
      waitReady: false,
    });
  });
  after(() => hub.stop());

  const stateOfSlow = async () => {
    const status = (await (await fetch(`${hub.origin}/`)).json()) as { servers: Array<{ name: string; state: string }> };
    return status.servers.find((s) => s.name === "slow")?.state;
  };

  test("the first requests of either era already see the starting server: its tools listed, its prompt, completions and template answered", async () => {
    const [old, modern] = await Promise.all([hub.connect(), connectModern(hub)]);
    assert.equal(await stateOfSlow(), "starting", "the server was up before the clients asked: nothing was tested");
    // a prompt, a completion and a resource of a template name what only the starting server has
    const [oldList, modernList, prompt, modernPrompt, colours, item, ids] = await Promise.all([
      old.listTools(),
      modern.listTools(),
      old.getPrompt({ name: "slow_paint", arguments: { colour: "red" } }),
      modern.getPrompt({ name: "slow_paint", arguments: { colour: "blue" } }),
      old.complete({ ref: { type: "ref/prompt", name: "slow_paint" }, argument: { name: "colour", value: "gr" } }),
      old.readResource({ uri: "slow://items/42" }),
      old.complete({ ref: { type: "ref/resource", uri: "slow://items/{id}" }, argument: { name: "id", value: "1" } }),
    ]);
    for (const list of [oldList, modernList]) {
      const names = list.tools.map((t) => t.name);
      assert.ok(names.includes("slow_pids"), `listed: ${names.join(", ")}`);
    }
    assert.deepEqual(prompt.messages[0]?.content, { type: "text", text: "Paint it red." });
    assert.deepEqual(modernPrompt.messages[0]?.content, { type: "text", text: "Paint it blue." });
    assert.deepEqual(colours.completion.values, ["green"]);
    assert.equal((item.contents[0] as { text?: string }).text, "item 42");
    assert.deepEqual(ids.completion.values, ["17"]);
    assert.equal(await stateOfSlow(), "ready");
    await Promise.all([old.close(), modern.close()]);
  });
});
