// The live view's parts on their own: tokens expiring on the hub's clock, the fan-out's bound on a
// viewer that never reads, what a hostile child's events get, and the WebSocket's limits.
import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { WebSocket } from "ws";
import { afterEach, describe, mock, test } from "node:test";
import v8 from "node:v8";
import vm from "node:vm";
import type { IncomingMessage, ServerResponse } from "node:http";
import { LiveViews } from "../../../hub/live/views.js";
import { Stream, type LiveChild } from "../../../hub/live/stream.js";
import { Viewer } from "../../../hub/live/viewer.js";
import { acceptWebSocket, MAX_MESSAGE_BYTES, type WebSocketConnection } from "../../../hub/live/websocket.js";
import { MintedSecrets } from "../../../hub/observability/minted-secrets.js";
import { systemClock } from "../../../hub/protocol/clock.js";
import { until } from "../../helpers/wait.js";
import { LIVE_ACK_METHOD, MAX_FRAME_BYTES } from "../../../servers/lib/live.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

class FakeChild implements LiveChild {
  readonly requests: Array<{ method: string; params: Record<string, unknown> }> = [];
  async request(method: string, params: Record<string, unknown>) {
    this.requests.push({ method, params });
    return method === "agentbox/live/open" ? { stream: "s1", kind: "browser", tab: 0, url: "about:blank", title: "" } : {};
  }
  acks(): number {
    return this.requests.filter((r) => r.method === LIVE_ACK_METHOD).length;
  }
}

class FakeSocket implements WebSocketConnection {
  /** Text messages kept; binary ones (frames) only counted, so the fake holds no memory of its own. */
  texts: string[] = [];
  frames = 0;
  sizes: number[] = [];
  closed = false;
  buffered = 0;
  send(data: string | Buffer) {
    if (typeof data === "string") this.texts.push(data);
    else {
      this.frames++;
      this.sizes.push(data.length);
    }
  }
  close() {
    this.closed = true;
  }
}

/** A JPEG's first bytes and then `size` bytes: what the hub checks of a frame. */
const jpeg = (size: number) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(size, 7)]).toString("base64");
const frameEvent = (data: string) => ({ stream: "s1", type: "frame", data, metadata: { deviceWidth: 1280, deviceHeight: 720 } });

type Answer = { status?: number; body: string };

function fakeResponse(): { res: ServerResponse; answer: Answer } {
  const answer: Answer = { body: "" };
  const res = {
    writeHead: (status: number) => void (answer.status = status),
    end: (chunk?: string | Buffer) => void (answer.body += String(chunk ?? "")),
  } as unknown as ServerResponse;
  return { res, answer };
}

describe("view tokens", () => {
  afterEach(() => mock.timers.reset());
  const config = { ttlSeconds: 60, maxTtlSeconds: 120, perTenant: 16 };

  test("a view ends when its time is up, on the hub's clock; past the longest life it is refused", () => {
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: 1_000_000 });
    const views = new LiveViews(
      config,
      undefined,
      () => "http://127.0.0.1:8080",
      new MintedSecrets(),
      () => new FakeChild(),
      systemClock,
    );
    const view = views.open({ tenant: "alice", session: "s1" });
    assert.ok(typeof view !== "string");
    assert.equal(view.expiresAt.getTime(), 1_060_000);
    const path = new URL(view.url).pathname;
    const before = fakeResponse();
    views.serveHttp({ url: path } as IncomingMessage, before.res);
    assert.equal(before.answer.status, 200);
    mock.timers.tick(60_000);
    const after = fakeResponse();
    views.serveHttp({ url: path } as IncomingMessage, after.res);
    assert.equal(after.answer.status, 410);
    assert.match(after.answer.body, /ended \(expired\)/);
    assert.match(String(views.open({ tenant: "alice", session: "s1", ttlSeconds: 121 })), /longer than this hub allows/);
  });
});

describe("fan-out to viewers", () => {
  test("a viewer that never reads holds at most one frame; the stream goes on at the fast viewer's pace", async () => {
    const child = new FakeChild();
    const stream = new Stream("k", "s1", child, { stream: "s1", kind: "browser" }, () => undefined);
    const fast = new Viewer(new FakeSocket(), "alice");
    const stalled = new Viewer(new FakeSocket(), "alice");
    stream.join(fast);
    stream.join(stalled);
    gc();
    const before = process.memoryUsage().arrayBuffers;
    const frames = 300;
    for (let i = 0; i < frames; i++) {
      stream.event(frameEvent(jpeg(64 * 1024)));
      assert.ok(stalled.queued <= 1, "the stalled viewer's queue stays at one frame");
      stream.viewerAcked(fast);
    }
    assert.equal(fast.framesSent, frames);
    assert.equal(stalled.framesSent, 1);
    assert.equal(stalled.queued, 1);
    // 300 frames of 64 KiB passed: what stays is a few frames (the latest, the one waiting), not 19 MiB.
    // V8 frees a collected buffer's memory on a thread of its own, so the figure falls a moment after gc()
    await until(
      "arrayBuffers to fall back to a few frames over where they began",
      async () => {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
        return process.memoryUsage().arrayBuffers - before < 4 * 64 * 1024 * 4;
      },
      5_000,
    );
    assert.equal(child.acks(), frames);
  });

  test("with only a stalled viewer the child is not acknowledged: it sends nothing more", () => {
    const child = new FakeChild();
    const stream = new Stream("k", "s1", child, { stream: "s1", kind: "browser" }, () => undefined);
    const stalled = new Viewer(new FakeSocket(), "alice");
    stream.join(stalled);
    stream.event(frameEvent(jpeg(1000)));
    assert.equal(child.acks(), 1);
    stream.event(frameEvent(jpeg(1000)));
    assert.equal(child.acks(), 1, "the second frame reached no viewer: no ack, so no third");
    assert.equal(stalled.queued, 1);
  });
});

describe("a hostile child", () => {
  test("an event for a stream it does not run, or another child's, is dropped", async () => {
    const mine = new FakeChild();
    const other = new FakeChild();
    const views = new LiveViews(
      { ttlSeconds: 60, maxTtlSeconds: 120, perTenant: 16 },
      undefined,
      () => "http://127.0.0.1:8080",
      new MintedSecrets(),
      () => mine,
      systemClock,
    );
    assert.doesNotThrow(() => views.onEvent(other, frameEvent(jpeg(10))));
    assert.doesNotThrow(() => views.onEvent(mine, { stream: "nope", type: "frame", data: jpeg(10) }));
    assert.doesNotThrow(() => views.onEvent(mine, { stream: 42 }));
    assert.deepEqual(views.backlog(), []);
  });

  test("a huge, malformed or out-of-turn frame reaches no viewer", () => {
    const child = new FakeChild();
    const stream = new Stream("k", "s1", child, { stream: "s1", kind: "browser" }, () => undefined);
    const socket = new FakeSocket();
    const viewer = new Viewer(socket, "alice");
    stream.join(viewer);
    const binary = () => socket.frames;
    stream.event(frameEvent(jpeg(MAX_FRAME_BYTES + 1)));
    stream.event(frameEvent(Buffer.from("not a jpeg at all").toString("base64")));
    stream.event({ stream: "s1", type: "frame", data: 12 });
    assert.equal(binary(), 0);
    stream.event(frameEvent(jpeg(100)));
    assert.equal(binary(), 1);
    // the viewer has not drawn it: the next frame waits, unacknowledged; one more before that ack is out of turn
    stream.event(frameEvent(jpeg(200)));
    const acks = child.acks();
    stream.event(frameEvent(jpeg(5000)));
    assert.equal(child.acks(), acks);
    stream.viewerAcked(viewer);
    assert.equal(binary(), 2);
    assert.ok(socket.sizes[1] < 1000, "the viewer got the frame sent in turn, not the one out of turn");
  });
});

/** A loopback HTTP server whose upgrades become connections as the views get them. */
async function upgrades(): Promise<{ url: string; port: number; next: () => Promise<WebSocketConnection>; close: () => Promise<void> }> {
  const waiting: ((c: WebSocketConnection) => void)[] = [];
  const ready: WebSocketConnection[] = [];
  const server = http.createServer();
  server.on("upgrade", (req, socket, head) =>
    acceptWebSocket(req, socket, head, (c) => {
      const w = waiting.shift();
      if (w) w(c);
      else ready.push(c);
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/`,
    port,
    next: () => (ready.length ? Promise.resolve(ready.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A client frame as a hostile viewer may write it: masked or not, of any length. */
function clientFrame(payload: Buffer, opcode = 1, masked = true): Buffer {
  const mask = Buffer.from([1, 2, 3, 4]);
  const length = payload.length;
  const head =
    length < 126 ? Buffer.from([0x80 | opcode, (masked ? 0x80 : 0) | length]) : Buffer.from([0x80 | opcode, (masked ? 0x80 : 0) | 127, 0, 0, 0, 0, 0, 0, 0, 0]);
  if (length >= 126) head.writeBigUInt64BE(BigInt(length), 2);
  const body = Buffer.from(payload);
  if (masked) for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3];
  return Buffer.concat([head, masked ? mask : Buffer.alloc(0), body]);
}

/** A raw client that has done the handshake: what it writes next is up to the test. */
async function rawClient(port: number): Promise<net.Socket> {
  const socket = net.connect(port, "127.0.0.1");
  socket.write(
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("data", (chunk) => (String(chunk).startsWith("HTTP/1.1 101") ? resolve() : reject(new Error(String(chunk)))));
  });
  return socket;
}

describe("the WebSocket", () => {
  test("a viewer's message comes through, and what the hub sends reaches the viewer", async () => {
    const server = await upgrades();
    try {
      const client = new WebSocket(server.url);
      const [connection] = await Promise.all([server.next(), once(client, "open")]);
      const got: string[] = [];
      connection.onmessage = (data, text) => got.push(`${text}:${data.toString()}`);
      client.send('{"type":"ack"}');
      const reply = once(client, "message");
      connection.send(Buffer.from([0xff, 0xd8]));
      const [data, isBinary] = (await reply) as [Buffer, boolean];
      assert.deepEqual([...data], [0xff, 0xd8]);
      assert.equal(isBinary, true);
      await until("the viewer's message", () => got.length > 0);
      assert.deepEqual(got, ['true:{"type":"ack"}']);
      client.close();
    } finally {
      await server.close();
    }
  });

  test("a message over the limit, or an unmasked one, closes the connection unread", async () => {
    const server = await upgrades();
    try {
      for (const bad of [clientFrame(Buffer.alloc(MAX_MESSAGE_BYTES + 1)), clientFrame(Buffer.from("x"), 1, false)]) {
        const client = await rawClient(server.port);
        const connection = await server.next();
        let closed = false;
        let messages = 0;
        connection.onclose = () => (closed = true);
        connection.onmessage = () => messages++;
        client.on("error", () => undefined);
        client.write(bad);
        await until("the connection to close", () => closed);
        assert.equal(messages, 0);
        client.destroy();
      }
    } finally {
      await server.close();
    }
  });

  test("a request that is no WebSocket upgrade is answered 400, and no connection opens", async () => {
    const server = await upgrades();
    try {
      const socket = net.connect(server.port, "127.0.0.1");
      socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
      const [answer] = (await once(socket, "data")) as [Buffer];
      assert.match(String(answer), /^HTTP\/1\.1 400/);
      socket.destroy();
    } finally {
      await server.close();
    }
  });
});
