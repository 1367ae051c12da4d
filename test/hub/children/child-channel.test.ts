// The hub's own channel to a child (hub/children/calls.ts over hub/children/stdio-transport.ts), against a real
// process writing raw JSON-RPC lines (test/fixtures/line-server.ts): replies come back as sent,
// progress in order before the result, errors as McpError, and timeouts, cancellation, an
// exiting child and over-long messages each end a call with a clear error and nothing left hanging.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ErrorCode, McpError, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ChildCalls, MessageTooLargeError } from "../../../hub/children/calls.js";
import { sizeOf } from "../../../hub/children/message-sizes.js";
import { ReplyTooLargeError, StdioChildTransport } from "../../../hub/children/stdio-transport.js";

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "line-server.js");
const LIMITS = { timeoutMs: 400, maxTotalMs: 60_000, maxMessageBytes: 64 * 1024 };
// For calls that must end by the child's doing, never by the timeout: a loaded machine can take longer
// than 400 ms to start a child or deliver its exit or an over-long line.
const PATIENT = { ...LIMITS, timeoutMs: 60_000 };

/** A started child with its channel; what the channel leaves to the SDK lands in `others`, errors in `errors`. */
async function startChild(maxLineBytes = 100_000, limits = LIMITS) {
  const transport = new StdioChildTransport({ command: process.execPath, args: [script], env: {}, maxLineBytes });
  const calls = new ChildCalls(transport, limits, "line");
  const others: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  const closed = new Promise<void>((resolve) => (transport.onclose = () => (calls.closeAll(), resolve())));
  // A node child on a loaded machine can take longer than the 400 ms the tests time calls by to start
  // reading stdin: one patient call first, so every test's timing starts with a child that answers.
  const warmUp = new ChildCalls(transport, PATIENT, "line");
  transport.onmessage = (message) => void (warmUp.take(message) || calls.take(message) || others.push(message));
  transport.onerror = (error) => void errors.push(error);
  await transport.start();
  await warmUp.request("echo", {});
  return { transport, calls, others, errors, closed };
}

describe("the hub's channel to a child", () => {
  let child: Awaited<ReturnType<typeof startChild>>;
  before(async () => (child = await startChild()));
  after(() => child.transport.close());

  test("a reply comes back as the child sent it, under an id of the channel's own", async () => {
    const result = (await child.calls.request("echo", { name: "x", arguments: { a: 1 } })) as Record<string, unknown>;
    assert.deepEqual(result.params, { name: "x", arguments: { a: 1 } });
    assert.deepEqual(result.extra, { kept: [1, "two", null] });
    assert.match(String(result.id), /^h\d+$/);
    assert.equal(child.calls.inFlight, 0);
  });

  test("progress arrives in order before the result; a reply in pieces with CRLF is read whole", async () => {
    const seen: number[] = [];
    const result = await child.calls.request("progress", {}, { onprogress: (p) => seen.push(p.progress) });
    assert.deepEqual(seen, [1, 2]);
    assert.deepEqual(result, { done: true });
    const pieces = (await child.calls.request("pieces", {})) as { text: string };
    assert.equal(pieces.text, "é".repeat(5000));
    // the reply's size in bytes as it came (é is two), noted on arrival for the audit trail rather than counted again
    const bytes = sizeOf(pieces);
    assert.ok(bytes > 10_000 && bytes < 10_200, String(bytes));
    pieces.text = "";
    assert.equal(sizeOf(pieces), bytes);
  });

  test("an error reply is an McpError with its code and data", async () => {
    const err = await child.calls.request("fail", {}).catch((e: unknown) => e);
    assert.ok(err instanceof McpError);
    assert.equal(err.code, -32042);
    assert.deepEqual(err.data, { why: "asked to" });
  });

  test("a silent child times out, and is told the call is cancelled", async () => {
    const err = await child.calls.request("silent", {}).catch((e: unknown) => e);
    assert.ok(err instanceof McpError);
    assert.equal(err.code, ErrorCode.RequestTimeout);
    const aborter = new AbortController();
    const pending = child.calls.request("silent", {});
    const cancelledByCaller = child.calls.request("silent", {}, { signal: aborter.signal });
    aborter.abort(new Error("the client went away"));
    await assert.rejects(cancelledByCaller, /the client went away/);
    await assert.rejects(pending, /timed out/);
    const { cancelled } = (await child.calls.request("cancelled", {})) as { cancelled: string[] };
    assert.equal(cancelled.length, 3);
    assert.ok(cancelled.every((id) => /^h\d+$/.test(id)));
  });

  test("a request over the limit is refused before anything is written", async () => {
    assert.throws(() => child.calls.request("echo", { text: "y".repeat(70 * 1024) }), MessageTooLargeError);
    assert.equal(child.calls.inFlight, 0);
  });

  test("messages that are not replies to the channel are left to the SDK", async () => {
    child.others.length = 0;
    child.transport.onmessage?.({ jsonrpc: "2.0", id: 7, result: {} });
    child.transport.onmessage?.({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 7, progress: 1 } });
    assert.equal(child.others.length, 2);
  });
});

describe("when the child misbehaves", () => {
  test("a reply longer than the limit is an error and ends the connection; calls in flight fail at once", async () => {
    const child = await startChild(50_000, PATIENT);
    const waiting = child.calls.request("silent", {});
    await assert.rejects(child.calls.request("huge", {}), /Connection closed/);
    await assert.rejects(waiting, /Connection closed/);
    await child.closed;
    assert.ok(child.errors.some((e) => e instanceof ReplyTooLargeError));
  });

  test("a child that exits fails its calls in flight with ConnectionClosed", async () => {
    const child = await startChild(100_000, PATIENT);
    const waiting = child.calls.request("silent", {});
    const exiting = child.calls.request("exit", {});
    for (const call of [waiting, exiting]) {
      const err = await call.catch((e: unknown) => e);
      assert.ok(err instanceof McpError);
      assert.equal(err.code, ErrorCode.ConnectionClosed);
    }
  });
});
