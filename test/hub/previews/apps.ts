// What the preview tests do as a tenant: start an app in a terminal session (through the hub's
// terminal tools, so it runs under the tenant's uid), ask for a preview, and fetch through it; and,
// for tests that run Previews in-process, an app in a process of its own.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { distRoot } from "../../../hub/config/config.js";
import { previewsFromEnv } from "../../../hub/config/previews.js";
import { MintedSecrets } from "../../../hub/observability/minted-secrets.js";
import type { PortAccessCheck } from "../../../hub/previews/port-access.js";
import { Previews } from "../../../hub/previews/previews.js";
import type { Clock } from "../../../hub/protocol/clock.js";
import { call, textOf, type TestHub } from "../../helpers/hub.js";
import { freePortIn, portsOf } from "../../helpers/tenant-ports.js";

export interface PreviewData {
  port: number;
  url: string;
  subdomainUrl?: string;
  token: string;
  expiresAt: string;
  notes: string[];
}

/** A port of the tenant's own block (the key's; a hub with several tenants confines each to one) that nothing listens on now. */
export async function tenantPort(hub: TestHub, key: string): Promise<number> {
  const [port] = await freePortIn(await portsOf(hub, key), 1);
  return port;
}

/** A port nothing listens on right now (any port is a lone tenant's). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on("error", reject);
  });
}

/** Run a command in a new terminal of this client's session and wait for `ready` in its output; the terminal's id. */
export async function startInTerminal(client: Client, command: string, ready: RegExp): Promise<string> {
  const created = await call(client, "terminal_session_create", {});
  assert.ok(!created.isError, textOf(created));
  const id = (created.structuredContent as { id: string }).id;
  const sent = await call(client, "terminal_session_send", { id, input: `${command}\n`, waitFor: ready.source, timeoutMs: 20_000 });
  assert.ok(!sent.isError && ready.test(textOf(sent)), textOf(sent));
  return id;
}

/** The test app (test/fixtures/preview-app.ts) on a port, as this client's tenant. */
export function startApp(client: Client, port: number, name: string): Promise<string> {
  const script = path.join(distRoot(), "test", "fixtures", "preview-app.js");
  return startInTerminal(client, `${process.execPath} ${script} ${port} ${name}`, /LISTENING \d+/);
}

export async function preview(client: Client, port: number, extra: Record<string, unknown> = {}): Promise<PreviewData> {
  const result = await call(client, "hub_preview", { port, ...extra });
  assert.ok(!result.isError, textOf(result));
  return result.structuredContent as unknown as PreviewData;
}

export interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** GET a URL with a browser's lack of credentials (no header beyond these), optionally at another address than its host names. */
export function get(url: string, headers: Record<string, string> = {}, connectTo?: string): Promise<Got> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const options = {
      host: connectTo ?? target.hostname.replace(/^\[|\]$/g, ""),
      port: target.port,
      path: target.pathname + target.search,
      headers: { Host: target.host, ...headers },
    };
    const req = http.get(options, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
  });
}

// an app that says its name, and writes down every request and upgrade it is sent
const APP = `const s = require("node:http").createServer((q, r) => { console.log("REQUEST " + q.url + " " + (q.headers.cookie ?? "")); r.end("page of " + process.argv[2]); });
s.on("upgrade", (q, socket) => { console.log("UPGRADE " + q.url); socket.end("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n"); });
s.listen(+process.argv[1], "127.0.0.1", () => console.log("LISTENING"));`;

export interface AppProcess {
  child: ChildProcess;
  output: () => string;
}

/** An app in a process of its own (not the hub's, whose sockets are never previewed), under the test's uid. */
export async function startAppProcess(port: number, name: string): Promise<AppProcess> {
  const child = spawn(process.execPath, ["-e", APP, String(port), name], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk;
      if (output.includes("LISTENING")) resolve();
    });
    child.once("exit", () => reject(new Error(`the app ${name} ended before listening`)));
  });
  return { child, output: () => output };
}

export async function stopAppProcess(app: AppProcess): Promise<void> {
  if (app.child.exitCode !== null || app.child.signalCode !== null) return;
  app.child.kill("SIGKILL");
  await once(app.child, "exit");
}

/** The status line a WebSocket upgrade through the preview gets. */
export function upgradeStatus(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const socket = net.connect(Number(target.port), target.hostname, () => {
      socket.write(
        `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    let got = "";
    socket.on("data", (chunk) => {
      got += chunk;
      if (got.includes("\r\n")) {
        resolve(got.split("\r\n")[0]);
        socket.destroy();
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(got.split("\r\n")[0]));
  });
}

/** Time stopped: a reading of the socket tables, once made, is always the one served. */
export const frozenClock: Clock = { now: () => 1_800_000_000_000, after: () => ({ cancel() {} }), every: () => ({ cancel() {} }) };

export interface PreviewServer {
  previews: Previews;
  /** Ends the previews and stops listening. */
  close(): void;
}

/** Previews served in this process on a loopback port, time frozen (`access`: who listens on a port, when a test decides). */
export async function servePreviews(access?: PortAccessCheck): Promise<PreviewServer> {
  let base = "";
  const previews = new Previews(previewsFromEnv({}), undefined, () => base, new MintedSecrets(), frozenClock, access);
  const via = { proto: "http", host: "127.0.0.1", for: "127.0.0.1" };
  const server = http.createServer((req, res) => previews.serveHttp(req, res, via));
  server.on("upgrade", (req, socket, head) => previews.serveUpgrade(req, socket, head, via));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    previews,
    close() {
      previews.stop();
      server.close();
    },
  };
}
