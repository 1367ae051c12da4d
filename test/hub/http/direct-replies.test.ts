// A request that need not stream is answered with plain JSON; one that sends something before its
// result turns into SSE at that moment; calls that expect to stream keep the SDK's resumable SSE.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { both, eventStream, initialize, post, readEvents } from "../../helpers/raw-http.js";
import { until, untilQueue } from "../../helpers/wait.js";

const VERSION = "2025-11-25";
const toolCall = (id: number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

describe("direct replies for Streamable HTTP sessions", () => {
  let hub: TestHub;
  let sessionId: string;
  let headers: Record<string, string>;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") } });
    sessionId = await initialize(hub, VERSION);
    headers = { ...both, "mcp-session-id": sessionId, "mcp-protocol-version": VERSION };
  });
  after(() => hub.stop());

  test("a call that sends nothing before its result is answered with JSON", async () => {
    const { res, body } = await post(hub, toolCall(1, "echo_echo", { text: "direct" }), headers);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^application\/json/);
    assert.equal(res.headers.get("mcp-session-id"), sessionId);
    assert.deepEqual(body, { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "direct" }] } });
  });

  test("errors and unknown tools come back on the same path, as JSON-RPC", async () => {
    const unknown = await post(hub, toolCall(2, "echo_nope", {}), headers);
    assert.equal(unknown.body.id, 2);
    assert.match(unknown.body.error.message, /Unknown tool 'echo_nope'/);
    const badArgs = await post(hub, toolCall(3, "echo_echo", { text: 42 }), headers);
    assert.equal(badArgs.body.id, 3);
    assert.ok(badArgs.body.result?.isError || badArgs.body.error, JSON.stringify(badArgs.body));
  });

  test("a call that logs before its result turns into SSE, with the log line ahead of the result", async () => {
    const res = await fetch(hub.url, { method: "POST", headers, body: JSON.stringify(toolCall(4, "echo_log", { message: "on the way" })) });
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    const events = (await readEvents(res, (e) => e.some((x) => x.data.includes('"id":4')))).map((e) => JSON.parse(e.data));
    assert.equal(events.length, 2, JSON.stringify(events));
    assert.equal(events[0].method, "notifications/message");
    assert.equal(events[0].params.data, "on the way");
    assert.equal(events[1].id, 4);
    assert.equal(events[1].result.content[0].text, "logged");
  });

  test("a client that reads only JSON still gets the result of a call that logged", async () => {
    const { res, body } = await post(hub, toolCall(5, "echo_log", { message: "unseen" }), { ...headers, Accept: "application/json" });
    assert.equal(res.status, 200);
    assert.equal(body.id, 5);
    assert.equal(body.result.content[0].text, "logged");
  });

  test("a call that asks for progress keeps the resumable SSE reply, with event ids", async () => {
    const res = await fetch(hub.url, {
      method: "POST",
      headers,
      body: JSON.stringify(toolCall(6, "echo_slow", { steps: 2, delayMs: 10 }, { progressToken: "p6" })),
    });
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    const events = await readEvents(res, (e) => e.some((x) => x.data.includes('"id":6')));
    const progress = events.filter((e) => e.data.includes("notifications/progress"));
    assert.ok(progress.length > 0 && progress.every((e) => e.id), "progress events carry ids");
  });

  test("cancelling a call ends its POST, the child is told, and the session keeps serving", async () => {
    const pending = fetch(hub.url, { method: "POST", headers, body: JSON.stringify(toolCall(7, "echo_slow", { steps: 50, delayMs: 100 })) });
    await untilQueue(hub, "echo", { running: 1 });
    const before = (await post(hub, toolCall(8, "echo_stats", {}), headers)).body.result.structuredContent.cancelledCalls;
    const cancel = await post(hub, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "changed my mind" } }, headers);
    assert.equal(cancel.res.status, 202);
    const res = await pending;
    assert.equal(res.status, 202, "the cancelled call's POST ends instead of hanging");
    const cancelledCalls = await until("the child to see the cancellation", async () => {
      const now = (await post(hub, toolCall(9, "echo_stats", {}), headers)).body.result.structuredContent.cancelledCalls as number;
      return now !== before && now;
    });
    assert.equal(cancelledCalls, before + 1);
    assert.equal((await post(hub, toolCall(10, "echo_echo", { text: "still here" }), headers)).body.result.content[0].text, "still here");
  });

  test("a call still running when its session is deleted gets an error reply, not a hang", async () => {
    const doomed = await initialize(hub, VERSION);
    const doomedHeaders = { ...both, "mcp-session-id": doomed, "mcp-protocol-version": VERSION };
    const pending = post(hub, toolCall(11, "echo_slow", { steps: 50, delayMs: 100 }), doomedHeaders);
    await untilQueue(hub, "echo", { running: 1 });
    const del = await fetch(hub.url, { method: "DELETE", headers: { "mcp-session-id": doomed, "mcp-protocol-version": VERSION } });
    assert.equal(del.status, 200);
    const { body } = await pending;
    assert.equal(body.id, 11);
    assert.match(body.error.message, /session was closed/);
  });

  test("a client that can be asked things gets a plain call as JSON, and a call that asks it something as SSE, answered mid-call", async () => {
    const sampler = await initialize(hub, VERSION, { sampling: {}, roots: {} });
    const samplerHeaders = { ...both, "mcp-session-id": sampler, "mcp-protocol-version": VERSION };
    const plain = await post(hub, toolCall(12, "echo_echo", { text: "plain" }), samplerHeaders);
    assert.match(plain.res.headers.get("content-type")!, /^application\/json/, "nothing to ask: no SSE");
    assert.deepEqual(plain.body, { jsonrpc: "2.0", id: 12, result: { content: [{ type: "text", text: "plain" }] } });

    // the child asks the client's model: the call is handed to the session's SDK server as it runs, and runs once
    const samples = async () =>
      Number(/agentbox_tool_calls_total\{tool="echo_sample",outcome="ok"\} (\d+)/.exec(await (await fetch(hub.origin + "/metrics")).text())?.[1] ?? 0);
    const samplesBefore = await samples();
    const res = await fetch(hub.url, { method: "POST", headers: samplerHeaders, body: JSON.stringify(toolCall(13, "echo_sample", { prompt: "hi" })) });
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    const stream = eventStream(res);
    let question: { id: string | number; method: string } | undefined;
    while (!question) {
      const event = await stream.next();
      assert.ok(event, "the stream ended before the question");
      const message = JSON.parse(event.data) as { id?: string | number; method?: string };
      if (message.method === "sampling/createMessage") question = message as { id: string | number; method: string };
    }
    const answer = { jsonrpc: "2.0", id: question.id, result: { role: "assistant", content: { type: "text", text: "hello" }, model: "test" } };
    assert.equal((await post(hub, answer, samplerHeaders)).res.status, 202);
    type Reply = { id?: number; result?: { content: Array<{ text: string }> } };
    let result: Reply | undefined;
    while (!result) {
      const event = await stream.next();
      assert.ok(event, "the stream ended before the result");
      const message = JSON.parse(event.data) as Reply;
      if (message.id === 13) result = message;
    }
    assert.equal(result.result?.content[0].text, "model said: hello");
    assert.equal(await samples(), samplesBefore + 1, "the SDK joined the call in flight rather than starting it again");
    // the same request id again is a new call, not the one handed over
    const again = await post(hub, toolCall(13, "echo_echo", { text: "again" }), samplerHeaders);
    assert.equal(again.body.result.content[0].text, "again");
  });

  test("plain JSON calls without a session: a call that logs still answers JSON, same ids at once both answer", async () => {
    const logged = await post(hub, toolCall(20, "echo_log", { message: "plain" }));
    assert.equal(logged.res.status, 200);
    assert.equal(logged.res.headers.get("mcp-session-id"), null, "an implicit session's id is not handed out");
    assert.equal(logged.body.result.content[0].text, "logged");
    const [a, b] = await Promise.all([post(hub, toolCall(21, "echo_slow", { steps: 2, delayMs: 50 })), post(hub, toolCall(21, "echo_echo", { text: "twin" }))]);
    assert.equal(a.body.result.content[0].text, "done after 2 steps");
    assert.equal(b.body.result.content[0].text, "twin");
  });

  test("a plain JSON client can cancel its sessionless call", async () => {
    const stats = async () => (await post(hub, toolCall(22, "echo_stats", {}))).body.result.structuredContent.cancelledCalls as number;
    const before = await stats();
    const pending = post(hub, toolCall(23, "echo_slow", { steps: 50, delayMs: 100 }));
    await untilQueue(hub, "echo", { running: 1 });
    const cancel = await post(hub, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 23 } });
    assert.equal(cancel.res.status, 202);
    assert.equal((await pending).res.status, 202);
    const after = await until("the child to see the cancellation", async () => {
      const now = await stats();
      return now !== before && now;
    });
    assert.equal(after, before + 1);
  });

  test("the SDK client works with replies that come as JSON or turn into SSE", async () => {
    const client = await hub.connect();
    assert.equal(textOf(await call(client, "echo_echo", { text: "sdk" })), "sdk");
    assert.equal(textOf(await call(client, "echo_log", { message: "x" })), "logged");
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => call(client, "echo_echo", { text: `n${i}` })));
    assert.deepEqual(
      many.map(textOf),
      Array.from({ length: 20 }, (_, i) => `n${i}`),
    );
  });
});
