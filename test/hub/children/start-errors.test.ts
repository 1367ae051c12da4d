// A server that cannot start says why: the lines of its stderr that name the cause (not its last
// line, which for Node is "Node.js v20…"), how it ended, and for a command that is not there,
// where it was looked for; the same words in GET /, hub_status, the hub's log and a call's error.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ServerConfig } from "../../../hub/config/config.js";
import { manifestKey } from "../../../hub/children/manifest.js";
import { call, fixture, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const node = (...args: string[]): ServerConfig => ({ command: process.execPath, args });

const SERVERS: Record<string, ServerConfig> = {
  nomodule: node("/nonexistent/agentbox-server.js"),
  nocommand: { command: "/nonexistent/agentbox-no-such-binary", args: ["--serve"] },
  exits: node("-e", "console.error('starting up'); console.error('fatal: cannot open database /data/app.db'); console.error('bye'); process.exit(3)"),
  killed: node("-e", "console.error('about to be killed'); process.kill(process.pid, 'SIGKILL')"),
};
// listed from a (test) manifest, so its tool is known before it runs: a call starts it and fails
const LAZY: ServerConfig = node("/nonexistent/agentbox-lazy-server.js");

interface ServerStatus {
  name: string;
  state: string;
  lastError?: string;
}

describe("a server that cannot start says why", () => {
  let hub: TestHub;
  let manifestDir: string;
  const statusOf = async (name: string) => ((await (await fetch(hub.origin + "/")).json()).servers as ServerStatus[]).find((s) => s.name === name)!;
  const failed = (name: string) =>
    until(`${name} to fail`, async () => {
      const s = await statusOf(name);
      return s.state !== "starting" && s.lastError ? s : undefined;
    });

  before(async () => {
    manifestDir = tempDir("agentbox-manifest-");
    const entry = {
      capabilities: { tools: {} },
      tools: [{ name: "run", description: "Run.", inputSchema: { type: "object", properties: {} } }],
      prompts: [],
      resourceTemplates: [],
    };
    const manifest = path.join(manifestDir, "manifest.json");
    fs.writeFileSync(manifest, JSON.stringify({ [manifestKey(LAZY, "lazy")!]: entry }));
    hub = await startHub({
      extraServers: { ...SERVERS, lazy: { ...LAZY, start: "lazy" }, echo: fixture("echo-server") },
      waitReady: false,
      env: { AGENTBOX_MANIFEST: manifest },
    });
  });
  after(async () => {
    await hub?.stop();
    fs.rmSync(manifestDir, { recursive: true, force: true });
  });

  test("a Node server with a missing module names the module, not Node's version", async () => {
    const { lastError } = await failed("nomodule");
    assert.match(lastError!, /Cannot find module '\/nonexistent\/agentbox-server\.js'/);
    assert.match(lastError!, /exit code 1/);
  });

  test("a command that does not exist names the path tried", async () => {
    const { lastError } = await failed("nocommand");
    assert.match(lastError!, /\/nonexistent\/agentbox-no-such-binary/);
    assert.match(lastError!, /does not exist|No such file|ENOENT/);
  });

  test("a server that exits with code 3 after an error line has the line and the code", async () => {
    const { lastError } = await failed("exits");
    assert.match(lastError!, /fatal: cannot open database \/data\/app\.db/);
    assert.match(lastError!, /exit code 3/);
  });

  test("a server killed by a signal names the signal", async () => {
    const { lastError } = await failed("killed");
    assert.match(lastError!, /SIGKILL/);
  });

  test("hub_status, the hub's log and a call's error say the same", async () => {
    const client = await hub.connect();
    const result = await call(client, "lazy_run");
    assert.equal(result.isError, true);
    assert.match(textOf(result), /The 'lazy' server is failing to start \(.*Cannot find module '\/nonexistent\/agentbox-lazy-server\.js'/);
    const { lastError } = await failed("exits");
    assert.ok(textOf(await call(client, "hub_status")).includes(lastError!), "hub_status shows the cause");
    const logged = hub.logs
      .map((l) => JSON.parse(l) as { msg: string; child?: string; error?: string })
      .find((e) => e.msg === "child failed to start" && e.child === "exits");
    assert.match(logged?.error ?? "", /fatal: cannot open database.*exit code 3|exit code 3.*fatal: cannot open database/);
  });

  test("a server that crashes after it was ready says how it ended", async () => {
    const client = await hub.connect();
    await until("echo to be ready", async () => (await statusOf("echo")).state === "ready");
    await call(client, "echo_crash");
    const why = await until(
      "the exit to be logged",
      () =>
        hub.logs
          .map((l) => JSON.parse(l) as { msg: string; child?: string; why?: string })
          .find((e) => e.msg === "child exited; restarting" && e.child === "echo")?.why,
    );
    assert.match(why, /^exited unexpectedly \(pid \d+, exit code 3\)$/);
  });
});
