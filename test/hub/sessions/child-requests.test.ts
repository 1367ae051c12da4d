// A child's questions and log lines reach the client whose call they belong to, and nobody else:
// two sessions, one with a call in flight to the child, the other calling a tool of that child that
// samples, elicits or logs.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

interface Seen {
  samples: string[];
  elicits: string[];
  logs: string[];
}

async function client(hub: TestHub, name: string): Promise<{ client: Client; seen: Seen }> {
  const seen: Seen = { samples: [], elicits: [], logs: [] };
  const c = await hub.connect({ name, capabilities: { sampling: {}, elicitation: {} } });
  c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const content = req.params.messages[0].content as { text: string };
    seen.samples.push(content.text);
    return { role: "assistant", content: { type: "text", text: `${name} answers` }, model: name };
  });
  c.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.elicits.push(req.params.message);
    return { action: "accept", content: { answer: `${name} user` } };
  });
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.logs.push(String(n.params.data)));
  await c.setLoggingLevel("debug");
  return { client: c, seen };
}

describe("a child's requests and log lines reach their own client only", () => {
  let hub: TestHub;
  let a: { client: Client; seen: Seen };
  let b: { client: Client; seen: Seen };
  let busy: Promise<unknown>;
  const controller = new AbortController();

  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") } });
    a = await client(hub, "A");
    b = await client(hub, "B");
    // A keeps a call in flight to the same child all along
    let running!: () => void;
    const inFlight = new Promise<void>((resolve) => (running = resolve));
    busy = a.client
      .callTool({ name: "echo_slow", arguments: { steps: 300, delayMs: 100 } }, CallToolResultSchema, {
        signal: controller.signal,
        onprogress: () => running(),
      })
      .catch(() => undefined);
    await inFlight;
  });
  after(async () => {
    controller.abort();
    await busy;
    await hub.stop();
  });

  test("sampling goes to the caller's client", async () => {
    const result = await call(b.client, "echo_sample", { prompt: "question from B's call" });
    assert.equal(textOf(result), "model said: B answers");
    assert.deepEqual(b.seen.samples, ["question from B's call"]);
    assert.deepEqual(a.seen.samples, []);
  });

  test("elicitation goes to the caller's client", async () => {
    const result = await call(b.client, "echo_elicit", { question: "B, your name?" });
    assert.equal(textOf(result), 'user said: {"answer":"B user"}');
    assert.deepEqual(b.seen.elicits, ["B, your name?"]);
    assert.deepEqual(a.seen.elicits, []);
  });

  test("log lines go to the caller's client", async () => {
    assert.equal(textOf(await call(b.client, "echo_log", { message: "for B only" })), "logged");
    await until("B's log line to reach B", () => b.seen.logs.includes("for B only"));
    // a line of A's own, logged after B's, marks the point by which a misrouted line would have come
    assert.equal(textOf(await call(a.client, "echo_log", { message: "for A only" })), "logged");
    await until("A's log line to reach A", () => a.seen.logs.includes("for A only"));
    assert.ok(!a.seen.logs.includes("for B only"), a.seen.logs.join());
    assert.ok(!b.seen.logs.includes("for A only"), b.seen.logs.join());
  });

  test("a 2025 client that did not declare elicitation hears the refusal once, its code said once", async () => {
    const undeclared = await hub.connect({ name: "no-elicitation" });
    const result = await call(undeclared, "echo_elicit", { question: "Proceed?" });
    assert.equal(result.isError, true, textOf(result));
    const text = textOf(result);
    assert.match(text, /The client of this session does not support elicitation/);
    assert.equal(text.match(/MCP error -32600/g)?.length, 1, text);
    await undeclared.close();
  });

  test("a client's own error answering a child's question reaches the child, its code said once", async () => {
    const failing = await hub.connect({ name: "failing", capabilities: { elicitation: {} } });
    failing.setRequestHandler(ElicitRequestSchema, async () => {
      throw new Error("the user closed the dialog");
    });
    const result = await call(failing, "echo_elicit", { question: "Proceed?" });
    const text = textOf(result);
    assert.equal(result.isError, true, text);
    assert.match(text, /the user closed the dialog/);
    assert.ok((text.match(/MCP error -?\d+/g)?.length ?? 0) <= 1, text);
    await failing.close();
  });

  test("a request naming no session, with calls of two clients in flight, is refused rather than guessed", async () => {
    const result = await call(b.client, "echo_sample_unattributed", { prompt: "whose is this?" });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /cannot tell which client session/);
    assert.deepEqual(a.seen.samples, []);
    assert.ok(!b.seen.samples.includes("whose is this?"));
  });
});
