// Progress, cancellation, sampling, logging and session lifecycle crossing the hub both ways.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  type LoggingMessageNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

async function stats(hub: TestHub) {
  const client = await hub.connect();
  const result = await call(client, "echo_stats");
  await client.close();
  return result.structuredContent as { cancelledCalls: number; closedSessions: string[]; pid: number };
}

describe("forwarding across the hub", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") } });
  });
  after(() => hub.stop());

  test("progress notifications reach the client with its own token", async () => {
    const client = await hub.connect();
    const seen: number[] = [];
    const result = await client.callTool({ name: "echo_slow", arguments: { steps: 4, delayMs: 20 } }, CallToolResultSchema, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.equal(textOf(result as never), "done after 4 steps");
    assert.deepEqual(seen, [1, 2, 3, 4]);
  });

  test("cancelling a call cancels it in the child", async () => {
    const before = (await stats(hub)).cancelledCalls;
    const client = await hub.connect();
    const controller = new AbortController();
    // give up once the child is working on it: its first progress report says so
    const pending = client.callTool({ name: "echo_slow", arguments: { steps: 100, delayMs: 100 } }, CallToolResultSchema, {
      signal: controller.signal,
      onprogress: () => controller.abort("user gave up"),
    });
    await assert.rejects(pending);
    await until("the child to see the cancellation", async () => (await stats(hub)).cancelledCalls > before);
  });

  test("a child's sampling request is answered by the client that made the call", async () => {
    const client = await hub.connect({ capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const text = (request.params.messages[0].content as { text: string }).text;
      return { role: "assistant", model: "test-model", content: { type: "text", text: `echo of ${text}` } };
    });
    const result = await call(client, "echo_sample", { prompt: "hello" });
    assert.equal(textOf(result), "model said: echo of hello");
  });

  test("sampling for a client that cannot sample fails with a clear error", async () => {
    const client = await hub.connect();
    const result = await call(client, "echo_sample", { prompt: "hello" });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /sampling/i);
  });

  test("log messages from a child reach the calling client, filtered by its level", async () => {
    const client = await hub.connect();
    const logs: LoggingMessageNotification["params"][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    await client.setLoggingLevel("warning");
    await call(client, "echo_log", { message: "too chatty", level: "info" });
    await call(client, "echo_log", { message: "important", level: "error" });
    await until("the log message", async () => logs.length > 0 || undefined);
    assert.deepEqual(
      logs.map((l) => l.data),
      ["important"],
    );
  });

  test("a child is told when a client session ends", async () => {
    const client = await hub.connect();
    const sessionId = textOf(await call(client, "echo_whoami"));
    await client.close();
    // closing the SDK client does not end the session; DELETE does
    await fetch(hub.url, { method: "DELETE", headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" } });
    await until("the session-closed notification", async () => (await stats(hub)).closedSessions.includes(sessionId) || undefined);
  });

  test("an idle session expires, returns 404, and the child is told", async () => {
    const short = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_SESSION_IDLE_MS: "1500" } });
    try {
      const client = await short.connect();
      const sessionId = textOf(await call(client, "echo_whoami"));
      // any request touches the session, so ask once, after the hub has expired it and told the child;
      // the watcher's own session stays alive because it keeps asking
      const watcher = await short.connect();
      const closedByChild = async () => ((await call(watcher, "echo_stats")).structuredContent as { closedSessions: string[] }).closedSessions;
      await until("the idle session to expire", async () => (await closedByChild()).includes(sessionId));
      const res = await fetch(short.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      assert.equal(res.status, 404);
      assert.ok((await stats(short)).closedSessions.includes(sessionId));
    } finally {
      await short.stop();
    }
  });
});
