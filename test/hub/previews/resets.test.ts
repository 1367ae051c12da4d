// A preview's visitors are anyone holding its URL, with no key: whatever one of them does to its
// own TCP connection (reset it after a WebSocket upgrade, exit without reading what the app sent,
// close at once, cut an HTTP response in the middle) ends that connection only. After each, the
// hub process still runs and answers /healthz, a tools/call, and the preview itself.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { freePort, get, preview, startApp, type PreviewData } from "./apps.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;

/** The bytes of a WebSocket upgrade request for a path, written by hand as any client may. */
function upgradeRequest(host: string, path: string): string {
  const key = randomBytes(16).toString("base64");
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
}

/** A raw connection that asked for an upgrade, once the 101 and at least `bytes` of the app's data after it have come. */
async function upgraded(hub: TestHub, path: string, bytes: number): Promise<net.Socket> {
  const { hostname, port } = new URL(hub.origin);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const end = got.indexOf("\r\n\r\n");
      if (end < 0) return;
      if (!got.subarray(0, 12).toString().startsWith("HTTP/1.1 101")) return void reject(new Error(`no upgrade: ${got.toString().slice(0, 200)}`));
      if (got.length - end - 4 < bytes) return;
      socket.off("data", onData);
      socket.pause();
      resolve();
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.once("connect", () => socket.write(upgradeRequest(`${hostname}:${port}`, path)));
  });
  return socket;
}

/** Run a client in a process of its own that does its part and exits with whatever it left unread. */
function clientProcess(hub: TestHub, path: string, script: string): Promise<void> {
  const { hostname, port } = new URL(hub.origin);
  const source = `const net = require("node:net");
const socket = net.connect(${Number(port)}, ${JSON.stringify(hostname)});
const request = ${JSON.stringify(upgradeRequest(`${hostname}:${port}`, path))};
${script}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", source], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`client exited with ${code}: ${stderr}\nthe hub's last lines:\n${hub.logs.slice(-10).join("\n")}`)),
    );
  });
}

describe("a preview's clients that vanish", () => {
  let hub: TestHub;
  let alice: Client;
  let app: PreviewData;

  before(async () => {
    hub = await startHub({ servers: ["terminal"], config: { tenants: { alice: { apiKey: KEY } } } });
    alice = await hub.connect({ headers: { Authorization: `Bearer ${KEY}` } });
    const port = await freePort();
    await startApp(alice, port, "alice-app");
    app = await preview(alice, port);
  });
  after(() => hub?.stop());

  /** The hub process runs and serves: its health, a tool call that reads the session's state, and the preview. */
  async function stillServes(): Promise<void> {
    const health = await fetch(`${hub.origin}/healthz`).catch((err: Error) => err);
    if (!(health instanceof Response)) assert.fail(`the hub does not answer (${health.message}); its last lines:\n${hub.logs.slice(-15).join("\n")}`);
    assert.equal(health.status, 200);
    assert.equal(hub.process.exitCode, null);
    const sessions = await call(alice, "hub_sessions");
    assert.ok(!sessions.isError, textOf(sessions));
    const listed = (sessions.structuredContent as { previews: Array<{ url: string }> }).previews.map((p) => p.url);
    assert.ok(listed.includes(app.url), "the session's preview is still held");
    assert.match((await get(app.url)).body, /page of alice-app/);
  }

  const prefix = () => new URL(app.url).pathname;

  test("a TCP reset after the 101 and the app's first data", async () => {
    for (let i = 0; i < 5; i++) {
      const socket = await upgraded(hub, `${prefix()}flood`, 1);
      socket.resetAndDestroy();
      await new Promise((r) => socket.once("close", r));
      await stillServes();
    }
  });

  test("a TCP reset while the app's data is still coming, the client having read none of it", async () => {
    const socket = await upgraded(hub, `${prefix()}flood`, 0);
    socket.resetAndDestroy();
    await new Promise((r) => socket.once("close", r));
    await stillServes();
  });

  test("a client that exits once the upgrade is answered, without reading what the app sent", async () => {
    for (let i = 0; i < 3; i++) {
      await clientProcess(
        hub,
        `${prefix()}flood`,
        `socket.on("connect", () => socket.write(request));
socket.once("data", (chunk) => { if (String(chunk).startsWith("HTTP/1.1 101")) process.exit(0); process.exit(3); });`,
      );
      await stillServes();
    }
  });

  test("a client that writes its upgrade, closes and exits at once", async () => {
    await clientProcess(hub, `${prefix()}flood`, `socket.on("connect", () => socket.end(request, () => process.exit(0)));`);
    await clientProcess(hub, `${prefix()}flood`, `socket.on("connect", () => { socket.write(request); socket.resetAndDestroy(); process.exit(0); });`);
    // the same at a URL that names no preview, which the hub refuses on the raw socket
    const refused = prefix().replace(/[a-z2-7]{4}\/$/, "aaaa/");
    for (let i = 0; i < 3; i++) {
      await clientProcess(hub, refused, `socket.on("connect", () => { socket.write(request); socket.resetAndDestroy(); process.exit(0); });`);
    }
    // after the 101: a WebSocket close frame (masked, empty) and gone
    await clientProcess(
      hub,
      prefix(),
      `socket.on("connect", () => socket.write(request));
socket.once("data", () => { socket.end(Buffer.from([0x88, 0x80, 1, 2, 3, 4])); process.exit(0); });`,
    );
    await stillServes();
  });

  test("an HTTP client that resets in the middle of a request or a response", async () => {
    const { hostname, port } = new URL(hub.origin);
    const big = "x".repeat(4 << 20);
    const exchanges = [
      // a stream the app keeps open, a short answer, and a large one (the app echoes 4 MB back)
      { request: `GET ${prefix()}events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`, resetAt: "data" },
      { request: `GET ${prefix()}headers HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`, resetAt: "data" },
      { request: `POST ${prefix()}echo-body HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Length: ${big.length}\r\n\r\n${big}`, resetAt: "data" },
      // half of a body sent, then gone
      {
        request: `POST ${prefix()}echo-body HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Length: ${big.length}\r\n\r\n${big.slice(0, 1 << 20)}`,
        resetAt: "written",
      },
    ];
    for (const { request, resetAt } of exchanges) {
      const socket = net.connect(Number(port), hostname);
      await new Promise<void>((resolve, reject) => {
        socket.once("error", reject);
        socket.once("connect", () => socket.write(request, () => resetAt === "written" && resolve()));
        socket.once("data", () => resolve());
      });
      socket.resetAndDestroy();
      await new Promise((r) => socket.once("close", r));
      await stillServes();
    }
    // the stream the app still holds for the vanished client ends when the app ends it
    assert.equal((await get(app.url + "release")).body, "released");
    await stillServes();
  });
});
