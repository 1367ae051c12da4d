// A server entry's "taskSupport" marks its tools task-capable (or not) whatever the server declares:
// a third-party stdio server that knows nothing of tasks gets its long call run as a task for a 2026
// client that declared the extension; "forbidden" runs a tool the server calls task-capable the
// usual way; a glob covers several tools; a value the hub does not offer is refused with what it takes.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../../hub/config/config.js";
import { TASK_SUPPORT_META_KEY } from "../../../servers/lib/session-events.js";
import { fixture, startHub, tempDir, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { postModern, withTasks } from "../modern/modern-client.js";

let nextId = 1;
const callTool = (hub: TestHub, name: string, args: Record<string, unknown>) =>
  postModern(hub, { id: nextId++, method: "tools/call", params: { name, arguments: args, _meta: withTasks } });

describe("config taskSupport on a third-party server", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      servers: [],
      extraServers: {
        // the echo fixture declares no taskSupport on any tool
        echo: { ...fixture("echo-server"), taskSupport: { slow: "optional" } },
        plain: { ...fixture("echo-server"), prefix: "plain" },
        // the conformance fixture declares slow_compute and confirm_delete optional
        conformance: { ...fixture("conformance-server"), prefix: "", taskSupport: { "slow_*": "forbidden" } },
      },
    });
  });
  after(() => hub?.stop());

  test("the listing carries the config's word, over the server's", async () => {
    // a 2025-11-25 listing carries execution.taskSupport (a 2026-07-28 one has no such field: its server decides per call)
    const client = await hub.connect();
    const tools = (await client.listTools()).tools as Array<{ name: string; execution?: { taskSupport?: string } }>;
    const support = (name: string) => tools.find((t) => t.name === name)?.execution?.taskSupport;
    assert.equal(support("echo_slow"), "optional");
    assert.equal(support("echo_echo"), undefined, "only the tool named");
    assert.equal(support("plain_slow"), undefined, "the same server unmarked");
    assert.equal(support("slow_compute"), "forbidden", "a glob overrides what the server declared");
    assert.equal(support("confirm_delete"), "optional", "what the server declared stands where the config says nothing");
  });

  test("a 2026-07-28 listing, which has no execution.taskSupport, says it in each tool's _meta", async () => {
    const reply = await postModern(hub, { id: nextId++, method: "tools/list", params: { _meta: withTasks } });
    const tools = reply.json?.result?.tools as Array<{ name: string; execution?: unknown; _meta?: Record<string, unknown> }>;
    const support = (name: string) => tools.find((t) => t.name === name)?._meta?.[TASK_SUPPORT_META_KEY];
    assert.equal(support("echo_slow"), "optional");
    assert.equal(support("echo_echo"), undefined);
    assert.equal(support("slow_compute"), "forbidden");
    assert.equal(support("confirm_delete"), "optional");
    assert.ok(
      tools.every((t) => t.execution === undefined),
      "the revision's own field stays out",
    );
  });

  test("a tool that declares nothing becomes a task when the config marks it, and is polled to its result", async () => {
    const reply = await callTool(hub, "echo_slow", { steps: 2, delayMs: 50 });
    assert.equal(reply.json?.result?.resultType, "task", reply.text);
    const taskId = String(reply.json?.result?.taskId);
    const done = await until("the task to end", async () => {
      const got = await postModern(hub, { id: nextId++, method: "tasks/get", params: { taskId, _meta: withTasks } }, { "Mcp-Name": taskId });
      const result = got.json?.result;
      return result && result.status !== "working" && result;
    });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.deepEqual((done.result as { content: unknown }).content, [{ type: "text", text: "done after 2 steps" }]);
  });

  test("unmarked, and marked forbidden over the server's optional, a call runs the usual way", async () => {
    const plain = await callTool(hub, "plain_slow", { steps: 1, delayMs: 0 });
    assert.equal(plain.json?.result?.resultType, "complete", plain.text);
    const forbidden = await callTool(hub, "slow_compute", { seconds: 0 });
    assert.equal(forbidden.json?.result?.resultType, "complete", forbidden.text);
  });
});

describe("config taskSupport values", () => {
  const load = (taskSupport: unknown) => {
    const file = path.join(tempDir(), "agentbox.json");
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { tool: { command: "node", taskSupport } } }));
    return () => loadConfig({ config: file }, {});
  };

  test('"required" and made-up values are refused with the server, the tool and what is allowed', () => {
    for (const bad of [{ slow: "required" }, { slow: "yes" }, { slow: true }])
      assert.throws(
        load(bad),
        (err: Error) =>
          err instanceof ConfigError &&
          /mcpServers\.tool\.taskSupport\.slow: taskSupport takes "optional" .* or "forbidden" .*"required" is not offered/.test(err.message),
        JSON.stringify(bad),
      );
    assert.throws(load({ "": "optional" }), /taskSupport key is a tool name/);
    assert.throws(load(["optional"]), /mcpServers\.tool\.taskSupport/);
  });

  test("optional and forbidden, by name and by glob, are taken", () => {
    const config = load({ slow: "optional", "*": "forbidden" })();
    assert.deepEqual(config.mcpServers.tool.taskSupport, { slow: "optional", "*": "forbidden" });
  });
});
