// Servers recorded in the manifest are listed at once and started on their first call.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { distRoot } from "../../../hub/config/config.js";
import { call, fixture, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";

type Status = { servers: Array<{ name: string; state: string; pid: number | null; tools: number }> };

describe("lazy start from the manifest", () => {
  let hub: TestHub;
  let dir: string;
  before(async () => {
    dir = tempDir();
    const config = path.join(dir, "servers.json");
    fs.writeFileSync(config, JSON.stringify({ mcpServers: { echo: fixture("echo-server"), other: fixture("echo-server") } }));
    const manifest = path.join(dir, "manifest.json");
    execFileSync(process.execPath, [path.join(distRoot(), "hub", "children", "manifest.js"), config], { env: { ...process.env, AGENTBOX_MANIFEST: manifest } });
    hub = await startHub({
      extraServers: { echo: fixture("echo-server"), unrecorded: { ...fixture("echo-server"), env: { DIFFERENT: "1" } } },
      env: { AGENTBOX_START: "", AGENTBOX_MANIFEST: manifest },
    });
  });
  after(async () => {
    await hub.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const status = async (): Promise<Status> => (await fetch(hub.origin + "/")).json();

  test("a recorded server is listed and ready without running; an unrecorded one starts with the hub", async () => {
    const { servers } = await status();
    const echo = servers.find((s) => s.name === "echo")!;
    assert.equal(echo.state, "idle");
    assert.equal(echo.pid, null);
    assert.equal(echo.tools, 11);
    assert.equal(servers.find((s) => s.name === "unrecorded")!.state, "ready");
    assert.equal((await fetch(hub.origin + "/readyz")).status, 200);
    const client = await hub.connect();
    assert.ok((await client.listTools()).tools.some((t) => t.name === "echo_slow"));
    // its instructions come from the manifest too: a session hears them before the server runs
    assert.match(client.getInstructions() ?? "", /\n\necho_\*: A test server: echo text back/);
    assert.equal((await status()).servers.find((s) => s.name === "echo")!.pid, null);
  });

  test("the first call starts it, concurrent first calls share one start, and no list_changed is sent for the same tools", async () => {
    const client = await hub.connect();
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const results = await Promise.all([1, 2, 3].map((i) => call(client, "echo_echo", { text: `call ${i}` })));
    assert.deepEqual(results.map(textOf), ["call 1", "call 2", "call 3"]);
    const echo = (await status()).servers.find((s) => s.name === "echo")!;
    assert.equal(echo.state, "ready");
    assert.equal(typeof echo.pid, "number");
    const pids = new Set((await Promise.all([1, 2].map(() => call(client, "echo_stats")))).map((r) => (r.structuredContent as { pid: number }).pid));
    assert.equal(pids.size, 1, "one process serves every call");
    // a list_changed would come on the session's own stream at no set time: nothing marks that none
    // will, so a pause it is (this checks that something did not happen)
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(changed, 0);
  });
});

describe("built-in servers from the build's manifest", () => {
  test("start on their first call and serve it", async () => {
    const hub = await startHub({ servers: ["file", "terminal"], env: { AGENTBOX_START: "" } });
    try {
      const states = async () => Object.fromEntries(((await (await fetch(hub.origin + "/")).json()) as Status).servers.map((s) => [s.name, s.state]));
      assert.deepEqual(await states(), { file: "idle", terminal: "idle" });
      const client = await hub.connect();
      const written = await call(client, "file_write", { path: "lazy.txt", content: "started on demand" });
      assert.equal(written.isError, undefined, textOf(written));
      assert.equal(fs.readFileSync(path.join(hub.workspace, "lazy.txt"), "utf8"), "started on demand");
      assert.deepEqual(await states(), { file: "ready", terminal: "idle" });
    } finally {
      await hub.stop();
    }
  });
});

describe("a server not in the manifest", () => {
  test("a call made before it is up waits for it instead of calling its tool unknown", async () => {
    const hub = await startHub({ extraServers: { echo: fixture("echo-server") }, waitReady: false });
    try {
      const client = await hub.connect();
      assert.equal(textOf(await call(client, "echo_echo", { text: "early" })), "early");
    } finally {
      await hub.stop();
    }
  });
});
