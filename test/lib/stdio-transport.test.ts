// A server's own end of stdio (servers/lib/stdio-transport.ts, with the framing of
// servers/lib/json-lines.ts): lines cut anywhere by the pipe come out whole, bytes that are not a
// message are reported and the next message still arrives, an overlong line closes the connection,
// and the replies of one turn of the event loop leave in one write. Last, a real server is fed what
// a careless or hostile client could write to its stdin and keeps answering.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { PassThrough, Writable } from "node:stream";
import { test } from "node:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { distRoot } from "../../hub/config/config.js";
import { LineSplitter } from "../../servers/lib/json-lines.js";
import { LineStdioServerTransport } from "../../servers/lib/stdio-transport.js";
import { tempDir } from "../helpers/hub.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A transport over a fake stdin and a stdout that records each write(2) it would make, as its batch of lines. */
function harness(options: { maxLineBytes?: number; highWaterMark?: number; slowWrites?: boolean } = {}) {
  const stdin = new PassThrough();
  const writes: string[][] = [];
  let finishWrite: (() => void) | undefined;
  const write = (lines: string[], done: () => void) => {
    writes.push(lines);
    if (options.slowWrites) finishWrite = done;
    else done();
  };
  const stdout = new Writable({
    highWaterMark: options.highWaterMark,
    writev: (chunks, done) =>
      write(
        chunks.map(({ chunk }) => String(chunk)),
        done,
      ),
    write: (chunk, _encoding, done) => write([String(chunk)], done),
  });
  const transport = new LineStdioServerTransport(stdin, stdout, options.maxLineBytes);
  const messages: unknown[] = [];
  const errors: string[] = [];
  let closed = false;
  transport.onmessage = (message) => void messages.push(message);
  transport.onerror = (error) => void errors.push(error.message);
  transport.onclose = () => void (closed = true);
  return { stdin, stdout, writes, transport, messages, errors, closed: () => closed, finishWrite: () => finishWrite?.() };
}

test("messages cut anywhere by the pipe, a character's bytes included, arrive whole and in order", async () => {
  const { stdin, transport, messages, errors } = harness();
  await transport.start();
  const sent = [
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "naïve café ☕ 𝄞" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: "two", result: {} },
  ];
  const bytes = Buffer.from(sent.map((m) => `${JSON.stringify(m)}\n`).join(""));
  // every cut of the stream into three pieces, the cuts inside ☕ and 𝄞 included
  for (let first = 1; first < bytes.length - 1; first += 7) {
    const second = Math.min(bytes.length - 1, first + 13);
    for (const piece of [bytes.subarray(0, first), bytes.subarray(first, second), bytes.subarray(second)]) stdin.write(piece);
  }
  await nextTurn();
  assert.deepEqual(errors, []);
  const rounds = Math.ceil((bytes.length - 2) / 7);
  assert.equal(messages.length, sent.length * rounds);
  for (let i = 0; i < messages.length; i++) assert.deepEqual(messages[i], sent[i % sent.length]);
});

test("a line that is not JSON is reported and the next message still arrives; blank lines are skipped", async () => {
  const { stdin, transport, messages, errors } = harness();
  await transport.start();
  stdin.write('this is not json\n\n   \n{"jsonrpc":"2.0","id":7,"method":"ping"}\n');
  await nextTurn();
  assert.equal(errors.length, 1);
  assert.match(errors[0], /not JSON: this is not json/);
  assert.deepEqual(messages, [{ jsonrpc: "2.0", id: 7, method: "ping" }]);
});

test("a line longer than the limit closes the connection, and nothing after it is read", async () => {
  const { stdin, transport, messages, errors, closed } = harness({ maxLineBytes: 64 });
  await transport.start();
  stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  stdin.write(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"${"x".repeat(100)}`);
  await nextTurn();
  stdin.write('"}}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
  await nextTurn();
  assert.deepEqual(messages, [{ jsonrpc: "2.0", id: 1, method: "ping" }]);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /longer than 64 bytes/);
  assert.equal(closed(), true);
  assert.equal(stdin.listenerCount("data"), 0, "the transport stopped reading");
});

test("the replies of one turn leave in one write, in order; a later turn's in a write of its own", async () => {
  const { transport, writes } = harness();
  await transport.start();
  const replies: JSONRPCMessage[] = [1, 2, 3].map((id) => ({ jsonrpc: "2.0", id, result: { content: [] } }));
  const sent = replies.map((reply) => transport.send(reply));
  assert.deepEqual(writes, [], "nothing is written before the turn ends");
  await Promise.all(sent);
  await nextTurn();
  assert.deepEqual(writes, [replies.map((reply) => `${JSON.stringify(reply)}\n`)]);
  await transport.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } });
  await nextTurn();
  assert.equal(writes.length, 2);
});

test("a reply to a reader that is not keeping up resolves once the stream drains", async () => {
  const { transport, writes, finishWrite } = harness({ highWaterMark: 16, slowWrites: true });
  await transport.start();
  let resolved = false;
  const sending = transport.send({ jsonrpc: "2.0", id: 1, result: { text: "longer than sixteen bytes" } }).then(() => (resolved = true));
  await nextTurn();
  assert.equal(writes.length, 1, "written");
  assert.equal(resolved, false, "but not yet taken by the reader");
  finishWrite();
  await sending;
  assert.equal(resolved, true);
});

test("a reader gone away is reported as an error, not thrown from the stream", async () => {
  const { stdout, transport, errors } = harness();
  await transport.start();
  stdout.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
  assert.deepEqual(errors, ["write EPIPE"]);
});

test("a transport starts once, and closing it stops reading and pauses stdin", async () => {
  const { stdin, transport, closed } = harness();
  await transport.start();
  await assert.rejects(transport.start(), /already started/);
  await transport.close();
  assert.equal(closed(), true);
  assert.equal(stdin.listenerCount("data"), 0);
  assert.equal(stdin.isPaused(), true);
});

test("the splitter holds a begun line across chunks and forgets it when reset", () => {
  const lines: string[] = [];
  const splitter = new LineSplitter(100, (line) => void lines.push(line), assert.fail);
  splitter.feed(Buffer.from("ab"));
  splitter.feed(Buffer.from("c\nde"));
  splitter.reset();
  splitter.feed(Buffer.from("f\n"));
  assert.deepEqual(lines, ["abc", "f"]);
});

test("a real server fed garbage, stray JSON and a bare object on stdin keeps answering", async () => {
  const server = spawn(process.execPath, [path.join(distRoot(), "bundle", "test", "fixtures", "echo-server.js")], {
    env: { ...process.env, AGENTBOX_WORKSPACE: tempDir("agentbox-stdio-ws-"), AGENTBOX_LOG_LEVEL: "warn" },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const lines: JSONRPCMessage[] = [];
  const got = new Promise<void>((resolve) => {
    const splitter = new LineSplitter(
      1 << 20,
      (line) => {
        lines.push(JSON.parse(line) as JSONRPCMessage);
        if (lines.some((m) => "id" in m && m.id === 3)) resolve();
      },
      assert.fail,
    );
    server.stdout.on("data", (chunk: Buffer) => splitter.feed(chunk));
  });
  const initialize = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } };
  server.stdin.write(
    [
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: initialize }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "{not json",
      "5",
      "null",
      '"a string"',
      "[1,2]",
      JSON.stringify({ jsonrpc: "2.0" }),
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "no/such/method" }),
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "still here" } } }),
    ].join("\n") + "\n",
  );
  await got;
  server.kill();
  const byId = (id: number) => lines.find((m) => "id" in m && m.id === id) as Record<string, unknown>;
  assert.ok("result" in byId(1), "initialized");
  assert.equal((byId(2).error as { code: number }).code, -32601, "an unknown method gets its error");
  assert.deepEqual((byId(3).result as { content: unknown }).content, [{ type: "text", text: "still here" }]);
});
