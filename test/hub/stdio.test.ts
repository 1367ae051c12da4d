// `agentbox --stdio`: the aggregated catalog over stdin/stdout for desktop clients.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { bundled } from "../../hub/config/config.js";
import { call, fixture, tempDir, textOf } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";

describe("stdio mode", () => {
  let client: Client;
  let transport: StdioClientTransport;
  before(async () => {
    const dir = tempDir();
    const config = path.join(dir, "agentbox.json");
    fs.writeFileSync(config, JSON.stringify({ mcpServers: { echo: fixture("echo-server") } }));
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [bundled("hub"), "--stdio", "--config", config],
      env: { ...(process.env as Record<string, string>), AGENTBOX_WORKSPACE: dir, AGENTBOX_RATE_LIMITS: "off" },
      stderr: "ignore",
    });
    client = new Client({ name: "desktop", version: "1" });
    await client.connect(transport);
  });
  after(() => client.close());

  test("lists and calls the children's tools and the hub's own", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("echo_echo") && names.includes("hub_status"), names.join(","));
    assert.equal(textOf(await call(client, "echo_echo", { text: "over stdio" })), "over stdio");
  });

  test("progress crosses the stdio hub", async () => {
    const seen: number[] = [];
    await client.callTool({ name: "echo_slow", arguments: { steps: 3, delayMs: 10 } }, CallToolResultSchema, { onprogress: (p) => seen.push(p.progress) });
    // The SDK *client* drops progress notifications that arrive in the same read as the result
    // (typescript-sdk#2580): on a loaded machine the last two steps can share the result's read.
    // What the hub owes is every step, in order, before the result: so what arrives is a
    // non-empty prefix of 1, 2, 3, never a step out of order or one twice.
    assert.ok(seen.length >= 1, "no progress crossed the hub");
    assert.deepEqual(seen, [1, 2, 3].slice(0, seen.length));
  });

  test("a child crash is a clean error, then the child is back", async () => {
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const crashed = await call(client, "echo_crash");
    assert.equal(crashed.isError, true);
    assert.match(textOf(crashed), /exited while running/);
    const text = await until("the child to be back", async () => {
      const r = await call(client, "echo_echo", { text: "again" }).catch(() => undefined);
      return r && !r.isError && textOf(r);
    });
    assert.equal(text, "again");
    assert.ok(changed >= 1);
  });
});

describe("stdio mode as a desktop client launches it", () => {
  test("started in / by an ordinary user without AGENTBOX_WORKSPACE, it serves and says where its workspace is", async () => {
    const home = tempDir("agentbox-desktop-home-");
    const asRoot = process.getuid?.() === 0;
    if (asRoot) fs.chownSync(home, 65534, 65534);
    fs.chmodSync(home, 0o755);
    const { AGENTBOX_WORKSPACE: _ws, ...env } = process.env as Record<string, string>;
    const hubArgs = [bundled("hub"), "--stdio"];
    // an ordinary user: root becomes nobody, who cannot create /workspace
    const [command, args] = asRoot
      ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", process.execPath, ...hubArgs]]
      : [process.execPath, hubArgs];
    const transport = new StdioClientTransport({ command, args, cwd: "/", env: { ...env, HOME: home, AGENTBOX_RATE_LIMITS: "off" }, stderr: "ignore" });
    const desktop = new Client({ name: "desktop", version: "1" });
    await desktop.connect(transport);
    try {
      const status = (await call(desktop, "hub_status")).structuredContent as { workspace: string };
      assert.equal(status.workspace, path.join(home, "agentbox-workspace"));
      assert.ok(fs.existsSync(status.workspace));
    } finally {
      await desktop.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
