// What the benchmarks drive: the echo fixture straight over stdio, the hub, and the two peers
// (supergateway, mcp-proxy) in front of the same echo child, all reached by the same SDK client.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { bundled, distRoot, type ServerConfig } from "../hub/config/config.js";
import { freePort, start, waitForPort, type Spawned } from "./proc.js";

export const projectRoot = (): string => path.dirname(distRoot());
export const echoScript = (): string => path.join(distRoot(), "test", "fixtures", "echo-server.js");
export const echoServer = (): ServerConfig => ({ command: process.execPath, args: [echoScript()] });

export function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** Settings for every process the bench starts: no rate limits and no session caps (one client opens thousands), quiet logs. */
export const BENCH_ENV = {
  AGENTBOX_RATE_LIMITS: "off",
  AGENTBOX_SESSION_RATE: "off",
  AGENTBOX_MAX_SESSIONS: "100000",
  AGENTBOX_MAX_SESSIONS_PER_CLIENT: "100000",
  AGENTBOX_LOG_LEVEL: "warn",
};

/** A running HTTP MCP endpoint: the hub or a peer. */
export interface HttpTarget {
  name: string;
  url: string;
  origin: string;
  /** The process holding the endpoint; its tree includes the children it spawned. */
  pid: number;
  spawned: Spawned;
  workspace: string;
  stop(): Promise<void>;
}

/** An SDK client with a way to end its session the way a well-behaved client does. */
export interface Connection {
  client: Client;
  close(): Promise<void>;
}

/** What the client accepts: the SDK default (JSON or SSE, server's choice), or JSON only. */
export type ReplyMode = "default" | "json";

/**
 * The SDK client accepts JSON or SSE on every POST and leaves the choice to the server. A client
 * that accepts only JSON (curl, small scripts) narrows Accept: this fetch does that, to measure
 * that path with the same client code.
 */
const jsonOnlyFetch: typeof fetch = (input, init) => {
  if (init?.method !== "POST") return fetch(input, init);
  const headers = new Headers(init.headers);
  headers.set("accept", "application/json");
  return fetch(input, { ...init, headers });
};

export async function connectHttp(url: string, mode: ReplyMode = "default", name = "agentbox-bench"): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(new URL(url), mode === "json" ? { fetch: jsonOnlyFetch } : {});
  const client = new Client({ name, version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return {
    client,
    async close() {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

/** The echo fixture as its own server over stdio: the baseline without any HTTP in between. */
export async function connectEchoDirect(workspace: string): Promise<Connection & { pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [echoScript()],
    env: { ...(process.env as Record<string, string>), ...BENCH_ENV, AGENTBOX_WORKSPACE: workspace },
    stderr: "ignore",
  });
  const client = new Client({ name: "agentbox-bench", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, pid: transport.pid ?? -1, close: () => client.close() };
}

export interface HubStartOptions {
  servers: Record<string, ServerConfig>;
  workspace?: string;
  env?: Record<string, string>;
  /** Extra node flags for the hub process (e.g. --cpu-prof). */
  nodeArgs?: string[];
}

/** Start the hub on a free loopback port; resolves once the port accepts connections. */
export async function startHub(options: HubStartOptions): Promise<HttpTarget & { config: string }> {
  const workspace = options.workspace ?? tempDir("agentbox-bench-ws-");
  const dir = tempDir("agentbox-bench-cfg-");
  const config = path.join(dir, "agentbox.json");
  fs.writeFileSync(config, JSON.stringify({ mcpServers: options.servers }, null, 2));
  const port = await freePort();
  const spawned = start(process.execPath, [...(options.nodeArgs ?? []), bundled("hub"), "--host", "127.0.0.1", "--port", String(port), "--config", config], {
    ...BENCH_ENV,
    AGENTBOX_WORKSPACE: workspace,
    ...options.env,
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForPort(port, spawned, 30_000);
  return {
    name: "agentbox",
    url: `${origin}/mcp`,
    origin,
    pid: spawned.pid,
    spawned,
    workspace,
    config,
    async stop() {
      await spawned.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      // a workspace the caller passed in is the caller's to remove
      if (!options.workspace) fs.rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** Poll /readyz until every child is ready. */
export async function waitHubReady(origin: string, timeoutMs: number, intervalMs = 10): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${origin}/readyz`);
      await res.arrayBuffer();
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return false;
}

export interface HubStatus {
  sessions: number;
  servers: { name: string; state: string; pid: number | null; tools: number; lastError?: string }[];
}

export async function hubStatus(origin: string): Promise<HubStatus> {
  const res = await fetch(origin + "/");
  return (await res.json()) as HubStatus;
}

/** The real file a package's bin points at, run with this node (no shell, no npx). */
function packageBin(pkg: string, bin: string): string {
  const link = path.join(projectRoot(), "node_modules", ".bin", bin);
  if (!fs.existsSync(link)) throw new Error(`${pkg} is not installed (npm install -D ${pkg})`);
  return fs.realpathSync(link);
}

async function startPeer(name: string, args: (port: number) => string[], workspace: string, readyPath = "/mcp"): Promise<HttpTarget> {
  const port = await freePort();
  const spawned = start(process.execPath, args(port), { ...BENCH_ENV, AGENTBOX_WORKSPACE: workspace });
  await waitForPort(port, spawned, 30_000);
  const origin = `http://127.0.0.1:${port}`;
  return { name, url: `${origin}${readyPath}`, origin, pid: spawned.pid, spawned, workspace, stop: () => spawned.stop() };
}

/**
 * supergateway in its stateful Streamable HTTP mode: its stateless mode spawns a new child per
 * POST, which no one would benchmark against; stateful spawns one child per client session.
 */
export function startSupergateway(workspace: string): Promise<HttpTarget> {
  const bin = packageBin("supergateway", "supergateway");
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(echoScript())}`;
  return startPeer(
    "supergateway",
    (port) => [bin, "--stdio", command, "--outputTransport", "streamableHttp", "--stateful", "--port", String(port), "--logLevel", "none"],
    workspace,
  );
}

/** The echo tool served over HTTP by the SDK in one process (bench/sdk-echo-http.ts): the floor. */
export function startSdkFloor(workspace: string): Promise<HttpTarget> {
  return startPeer("sdk-floor", (port) => [path.join(distRoot(), "bench", "sdk-echo-http.js"), String(port)], workspace);
}

/** The bare relay of bench/relay-server.ts in front of the echo child: the cheapest relay. */
export function startBareRelay(workspace: string): Promise<HttpTarget> {
  return startPeer("relay", (port) => [path.join(distRoot(), "bench", "relay-server.js"), String(port), process.execPath, echoScript()], workspace);
}

/** mcp-proxy with its defaults, bound to loopback, Streamable HTTP only: one shared child. */
export function startMcpProxy(workspace: string): Promise<HttpTarget> {
  const bin = packageBin("mcp-proxy", "mcp-proxy");
  return startPeer(
    "mcp-proxy",
    (port) => [bin, "--host", "127.0.0.1", "--port", String(port), "--server", "stream", "--", process.execPath, echoScript()],
    workspace,
  );
}

/** A call that counts: a tool error is a failure as much as a thrown error. */
export async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join(" ");
    throw new Error(`${name} returned an error: ${text.slice(0, 300)}`);
  }
}
