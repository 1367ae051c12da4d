// Start a real hub process on an ephemeral port and connect real SDK clients to it over HTTP.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { builtinServers, bundled, distRoot, type ServerConfig } from "../../hub/config/config.js";
import { until } from "./wait.js";

export interface HubOptions {
  /** Built-in servers to run (default: none unless `extraServers` is empty, then all). */
  servers?: string[];
  /** More mcpServers entries (fixtures, third-party servers). */
  extraServers?: Record<string, ServerConfig>;
  /** Other top-level config keys (rateLimits, ...). */
  config?: Record<string, unknown>;
  /** Extra environment for the hub (children inherit it). Rate limits are off unless set here. */
  env?: Record<string, string>;
  /** Workspace folder; a fresh temporary one by default. */
  workspace?: string;
  /** Port to listen on (default 0: a free one). */
  port?: number;
  /** Wait until /readyz says every child is ready (default true). */
  waitReady?: boolean;
  /** A config file used as it is written (then servers, extraServers and config are not used). */
  configFile?: string;
  /** The hub's working directory (default: the test's). */
  cwd?: string;
}

export interface TestHub {
  origin: string;
  url: string;
  workspace: string;
  pid: number;
  process: ChildProcess;
  logs: string[];
  /**
   * Give fixtures a test wrote (as root) to the uid the hub runs the workspace's tenant under, as
   * if the agent had made them: recursively, for everything still owned by root. No-op otherwise.
   */
  handToTenant(...paths: string[]): void;
  connect(options?: ConnectOptions): Promise<Client>;
  stop(): Promise<void>;
}

export interface ConnectOptions {
  name?: string;
  capabilities?: ClientCapabilities;
  headers?: Record<string, string>;
  path?: string;
}

/** A fixture server as `npm run build` bundles it (scripts/bundle.mjs): it starts in about half the CPU. */
export const fixture = (name: string): ServerConfig => ({
  command: process.execPath,
  args: [path.join(distRoot(), "bundle", "test", "fixtures", `${name}.js`)],
});

export function tempDir(prefix = "agentbox-test-"): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** `options` with `tenant` given a random uid outside the derived range (20000-59999): its config entry's, or the single tenant's. */
function withOwnUid(options: HubOptions, tenant: string): HubOptions {
  const uid = 100_000 + Math.floor(Math.random() * 100_000);
  const config = (options.config ?? {}) as { tenants?: Record<string, object> };
  if (config.tenants?.[tenant]) return { ...options, config: { ...config, tenants: { ...config.tenants, [tenant]: { ...config.tenants[tenant], uid } } } };
  return { ...options, env: { ...options.env, AGENTBOX_TENANT_UID: String(uid) } };
}

export async function startHub(options: HubOptions = {}, attempt = 0): Promise<TestHub> {
  const workspace = options.workspace ?? tempDir("agentbox-ws-");
  const dir = tempDir("agentbox-cfg-");
  const servers = options.servers ?? (options.extraServers ? [] : undefined);
  const mcpServers = { ...builtinServers(servers), ...options.extraServers };
  const configPath = options.configFile ?? path.join(dir, "agentbox.json");
  if (!options.configFile) fs.writeFileSync(configPath, JSON.stringify({ ...options.config, mcpServers }, null, 2));

  const child = spawn(process.execPath, [bundled("hub"), "--port", String(options.port ?? 0), "--config", configPath], {
    env: {
      ...process.env,
      AGENTBOX_WORKSPACE: workspace,
      AGENTBOX_RATE_LIMITS: "off",
      // servers start with the hub, so tests can find their processes; lazy start has its own tests
      AGENTBOX_START: "eager",
      AGENTBOX_LOG_LEVEL: "info",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    cwd: options.cwd,
  });
  const logs: string[] = [];
  const verbose = Boolean(process.env.AGENTBOX_TEST_VERBOSE);
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hub did not start listening:\n${logs.join("\n")}`)), 30_000);
    const onLine = (line: string) => {
      logs.push(line);
      if (verbose) process.stderr.write(line + "\n");
      try {
        const entry = JSON.parse(line);
        if (entry.msg === "listening" && entry.url) {
          clearTimeout(timer);
          resolve(String(entry.url));
        }
      } catch {
        // not a JSON line
      }
    };
    readline.createInterface({ input: child.stdout! }).on("line", onLine);
    readline.createInterface({ input: child.stderr! }).on("line", onLine);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`hub exited with ${code}:\n${logs.join("\n")}`));
    });
  });
  // tenants' uids are derived from their workspace and name, and two test files' hubs meet on one now and then
  // (hub/tenants/uid-locks.ts): the second refuses to start, and is started again with a uid of its own for that tenant
  const clash = () => (attempt < 3 ? /Tenant '([^']+)' would run as uid \d+[^"]*The uid is derived/.exec(logs.join("\n")) : null);
  const origin = await listening.catch((err: unknown) => {
    if (clash()) return undefined;
    throw err;
  });
  if (origin === undefined) {
    const tenant = clash()![1];
    process.stderr.write(`# startHub: tenant '${tenant}''s derived uid met another test file's hub's; starting again with a uid of its own\n`);
    return startHub(withOwnUid(options, tenant), attempt + 1);
  }

  if (options.waitReady !== false) {
    // a hub that never got ready is stopped, or it keeps the test process alive after the failure
    await waitReady(origin, logs, child).catch((err: unknown) => {
      child.kill("SIGTERM");
      throw err;
    });
  }
  // the code server runs as the workspace's tenant: a data folder the test chose is the tenant's
  const dataDir = options.env?.AGENTBOX_CODE_DATA_DIR;
  if (dataDir && process.getuid?.() === 0) {
    const owner = fs.statSync(workspace);
    fs.chownSync(dataDir, owner.uid, owner.gid);
  }

  const clients: Client[] = [];
  const hub: TestHub = {
    origin,
    url: `${origin}/mcp`,
    workspace,
    pid: child.pid!,
    process: child,
    logs,
    handToTenant(...paths) {
      const owner = fs.statSync(workspace);
      if (process.getuid?.() !== 0 || owner.uid === 0) return;
      const give = (p: string) => {
        const st = fs.lstatSync(p);
        if (st.uid === 0) fs.lchownSync(p, owner.uid, owner.gid);
        if (st.isDirectory()) for (const entry of fs.readdirSync(p)) give(path.join(p, entry));
      };
      for (const p of paths.length ? paths : [workspace]) {
        // the folders a fixture was put in, up to the workspace, belong to the tenant too
        for (let dir = path.dirname(p); dir.startsWith(workspace + path.sep); dir = path.dirname(dir)) {
          if (fs.lstatSync(dir).uid === 0) fs.lchownSync(dir, owner.uid, owner.gid);
        }
        give(p);
      }
    },
    async connect(connectOptions: ConnectOptions = {}) {
      const client = new Client({ name: connectOptions.name ?? "agentbox-test", version: "1.0.0" }, { capabilities: connectOptions.capabilities ?? {} });
      const transport = new StreamableHTTPClientTransport(new URL(connectOptions.path ?? "/mcp", origin), {
        requestInit: { headers: connectOptions.headers ?? {} },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.allSettled(clients.map((c) => c.close()));
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        // SIGINT stops it at once; SIGTERM would drain first (AGENTBOX_DRAIN_MS, 25 s), waiting on
        // whatever call a test left running: the tests of draining send SIGTERM themselves
        child.kill("SIGINT");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
      // a workspace made here goes too: left in /tmp, every later hub with tenants would walk it
      // when it measures disk use (SHARED_WRITABLE_DIRS), slower with each test file
      if (!options.workspace) fs.rmSync(workspace, { recursive: true, force: true });
      // an error the hub left unhandled is a bug whatever the test asserted (hub/main.ts logs it so)
      const uncaught = logs.find((line) => /^\{.*"component":"hub".*"msg":"uncaught exception"/.test(line));
      if (uncaught) throw new Error(`the hub had an uncaught exception: ${uncaught}`);
    },
  };
  return hub;
}

async function waitReady(origin: string, logs: string[], child: ChildProcess): Promise<void> {
  let last = "";
  const ready = async () => {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`hub exited with ${child.exitCode ?? child.signalCode}:\n${logs.join("\n")}`);
    try {
      const res = await fetch(`${origin}/readyz`);
      last = await res.text();
      return res.ok;
    } catch (err) {
      last = String(err);
      return false;
    }
  };
  await until("the hub to be ready", ready, 60_000, 100).catch((err: Error) => {
    throw /^timed out/.test(err.message) ? new Error(`hub not ready after 60 s: ${last}\n${logs.slice(-30).join("\n")}`) : err;
  });
}

/** Call a tool and return its result (tool errors come back as isError results, not throws). */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** All text content of a result, joined by newlines. */
export function textOf(result: CallToolResult): string {
  return result.content
    .filter((c): c is { type: "text"; text: string } => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

/** Why a hub started with `options` refused to start (the helper's error, with the hub's log); "it started" (and stopped again) when it did. */
export function refusalOf(options: HubOptions): Promise<string> {
  return startHub(options).then(
    async (started) => {
      await started.stop();
      return "it started";
    },
    (err: Error) => err.message,
  );
}
