// Config examples that users copy work as printed: a relative path in a server entry is looked up
// in the config file's folder, then in the agentbox install folder; never in the tenant's workspace
// (the children's working directory, which the agent writes) and never in the hub's own working
// directory. The documented example is read from docs/configuration.md at test time, so the two cannot drift apart.
// Of the examples' mcpServers only the browser entry can run here: "memory" runs
// `npx -y @modelcontextprotocol/server-memory` (a download) and "remote" names
// https://example.test/mcp (not loopback); they are checked only for being left as written.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { installRoot, loadConfig, type ServerConfig } from "../../../hub/config/config.js";
import { call, fixture, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

/** The browser entry as an operator writes it by hand: a relative path, and an empty env. */
const HANDWRITTEN_BROWSER: ServerConfig = { command: "node", args: ["dist/servers/browser/main.js"], env: {} };

/** docs/configuration.md's complete config file example (the first JSON block under "The config file"), as printed. */
function documentedConfig(): { mcpServers: Record<string, ServerConfig> } {
  const page = fs.readFileSync(path.join(installRoot(), "docs", "configuration.md"), "utf8");
  const section = page.slice(page.indexOf("\n## The config file"));
  const block = section.match(/\n```json\n([\s\S]*?)\n```/);
  assert.ok(block, "docs/configuration.md's section The config file has the config file example");
  return JSON.parse(block[1]) as { mcpServers: Record<string, ServerConfig> };
}

/** A folder the hub's tenant (another uid when the test runs as root) may read. */
function readableDir(prefix: string): string {
  const dir = tempDir(prefix);
  fs.chmodSync(dir, 0o755);
  return dir;
}

function writeConfig(dir: string, config: unknown): string {
  const file = path.join(dir, "agentbox.json");
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  fs.chmodSync(file, 0o644);
  return file;
}

describe("config paths: the examples users copy", () => {
  const hubs: TestHub[] = [];
  after(async () => {
    await Promise.all(hubs.map((h) => h.stop()));
  });

  async function browserHubFrom(entry: ServerConfig): Promise<{ hub: TestHub; planted: string }> {
    const configDir = readableDir("agentbox-cfgdir-");
    const elsewhere = readableDir("agentbox-cwd-");
    const workspace = tempDir("agentbox-ws-");
    // the agent plants a server where the relative path pointed before: in its workspace, the
    // children's working directory; it must never run
    const planted = path.join(workspace, "planted-ran");
    const bait = path.join(workspace, "dist", "servers", "browser", "main.js");
    fs.mkdirSync(path.dirname(bait), { recursive: true });
    fs.writeFileSync(bait, `require("fs").writeFileSync(${JSON.stringify(planted)}, "ran");\n`);
    const file = writeConfig(configDir, { mcpServers: { browser: entry } });
    const hub = await startHub({ configFile: file, cwd: elsewhere, workspace });
    hubs.push(hub);
    hub.handToTenant();
    return { hub, planted };
  }

  async function assertBrowserAnswers(hub: TestHub, planted: string): Promise<void> {
    const client = await hub.connect();
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("browser_info"), `the browser's tools are listed: ${names.join(", ")}`);
    const info = (await client.callTool({ name: "browser_info", arguments: {} })) as CallToolResult;
    assert.equal(info.isError, undefined, textOf(info));
    assert.equal(typeof (info.structuredContent as { browserVersion?: unknown }).browserVersion, "string");
    assert.equal(fs.existsSync(planted), false, "the file the agent planted in its workspace never ran");
  }

  test("the documented browser entry, as printed, from another working directory", async () => {
    const entry = documentedConfig().mcpServers.browser;
    assert.deepEqual(entry.args, ["dist/servers/browser/main.js"], "the documented example still names the browser by a relative path");
    const { hub, planted } = await browserHubFrom(entry);
    await assertBrowserAnswers(hub, planted);
  });

  test("a hand-written browser entry (an empty env), from another working directory", async () => {
    const { hub, planted } = await browserHubFrom(HANDWRITTEN_BROWSER);
    await assertBrowserAnswers(hub, planted);
  });

  test("a server next to the config file, named by a path relative to it", async () => {
    const configDir = readableDir("agentbox-cfgdir-");
    fs.mkdirSync(path.join(configDir, "servers"), { mode: 0o755 });
    // a file of the operator's that starts the test's echo server
    const script = path.join(configDir, "servers", "mine.js");
    fs.writeFileSync(script, `import ${JSON.stringify(pathToFileURL(fixture("echo-server").args![0]).href)};\n`);
    fs.chmodSync(script, 0o644);
    const file = writeConfig(configDir, { mcpServers: { mine: { command: "node", args: ["./servers/mine.js"] } } });
    const hub = await startHub({ configFile: file, cwd: readableDir("agentbox-cwd-") });
    hubs.push(hub);
    const client = await hub.connect();
    const echoed = (await client.callTool({ name: "mine_echo", arguments: { text: "from the config folder" } })) as CallToolResult;
    assert.equal(textOf(echoed), "from the config folder");
  });

  test("a shell command in args is passed as written: a bash -c entry serves its tools", async () => {
    const echo = fixture("echo-server").args![0];
    // the script ends in .js and holds a relative name: it is a command line, never a path
    const script = `cd ${path.dirname(echo)} && exec node ${path.basename(echo)}`;
    const file = writeConfig(readableDir("agentbox-cfgdir-"), { mcpServers: { shell: { command: "bash", args: ["-c", script] } } });
    assert.deepEqual(loadConfig({ config: file }, {}).mcpServers.shell, { command: "bash", args: ["-c", script] });
    const hub = await startHub({ configFile: file, cwd: readableDir("agentbox-cwd-") });
    hubs.push(hub);
    const client = await hub.connect();
    const echoed = (await client.callTool({ name: "shell_echo", arguments: { text: "through bash" } })) as CallToolResult;
    assert.equal(textOf(echoed), "through bash");
  });

  test("a relative path found nowhere fails that server alone, naming what was tried; the others serve", async () => {
    const configDir = readableDir("agentbox-cfgdir-");
    const file = writeConfig(configDir, { mcpServers: { mine: { command: "node", args: ["./missing/server.js"] }, echo: fixture("echo-server") } });
    const hub = await startHub({ configFile: file, cwd: readableDir("agentbox-cwd-"), waitReady: false });
    hubs.push(hub);
    const statuses = () =>
      fetch(hub.origin + "/").then(async (r) => ((await r.json()) as { servers: { name: string; state: string; lastError?: string }[] }).servers);
    const servers = await until("echo to be ready", async () => {
      const all = await statuses();
      return all.find((s) => s.name === "echo")?.state === "ready" ? all : undefined;
    });
    const mine = servers.find((s) => s.name === "mine");
    assert.equal(mine?.state, "failed");
    const tried = [path.join(configDir, "missing", "server.js"), path.join(installRoot(), "missing", "server.js")];
    const named = (text: string | undefined) => {
      assert.match(text ?? "", /mcpServers\.mine\.args\[0\]: '\.\/missing\/server\.js' was not found/);
      for (const candidate of tried) assert.ok(text?.includes(candidate), `${candidate} in: ${text}`);
    };
    named(mine?.lastError);
    const client = await hub.connect();
    assert.equal(textOf(await call(client, "echo_echo", { text: "still serving" })), "still serving");
    named(textOf(await call(client, "hub_status")));
    const logged = hub.logs.map((l) => JSON.parse(l) as { msg: string; child?: string; error?: string }).find((e) => e.child === "mine" && e.error);
    named(logged?.error);
  });

  test("flags, package names, URLs and plain words are left as written; a relative cwd is the config folder's", () => {
    const configDir = readableDir("agentbox-cfgdir-");
    fs.mkdirSync(path.join(configDir, "tools"));
    fs.writeFileSync(path.join(configDir, "tools", "server.py"), "");
    fs.writeFileSync(path.join(configDir, "tools", "run.sh"), "");
    const { mcpServers } = documentedConfig();
    const servers = {
      memory: mcpServers.memory,
      remote: mcpServers.remote,
      py: { command: "python3", args: ["-u", "tools/server.py", "--config=conf/x.json", "-m", "pkg.server", "mcp/fetch", "print(1/2)"] },
      docker: { command: "docker", args: ["run", "-i", "--rm", "mcp/fetch"] },
      inCwd: { command: "./run.sh", args: ["server.py"], cwd: "tools" },
    };
    const config = loadConfig({ config: writeConfig(configDir, { mcpServers: servers }) }, {});
    assert.deepEqual(config.mcpServers.memory, { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], prefix: "mem" });
    assert.deepEqual(config.mcpServers.remote, mcpServers.remote);
    assert.deepEqual(config.mcpServers.py.args, [
      "-u",
      path.join(configDir, "tools", "server.py"),
      "--config=conf/x.json",
      "-m",
      "pkg.server",
      "mcp/fetch",
      "print(1/2)",
    ]);
    assert.deepEqual(config.mcpServers.docker.args, ["run", "-i", "--rm", "mcp/fetch"]);
    // with its own cwd an entry's paths are that folder's, as the operating system reads them
    const tools = path.join(configDir, "tools");
    assert.deepEqual(config.mcpServers.inCwd, { command: path.join(tools, "run.sh"), args: [path.join(tools, "server.py")], cwd: tools });
    const missing = { mcpServers: { inCwd: { command: "python3", args: ["other.py"], cwd: "tools" } } };
    const unstartable = loadConfig({ config: writeConfig(configDir, missing) }, {}).mcpServers.inCwd.unstartable;
    assert.ok(unstartable?.includes(`'other.py' was not found; tried ${path.join(tools, "other.py")}.`), unstartable);
    // whitespace makes a command line, never a path, whatever it ends with
    const shell = { mcpServers: { sh: { command: "sh", args: ["-c", "exec python3 tools/server.py", "x y.py"] } } };
    assert.deepEqual(loadConfig({ config: writeConfig(configDir, shell) }, {}).mcpServers.sh, shell.mcpServers.sh);
  });
});
