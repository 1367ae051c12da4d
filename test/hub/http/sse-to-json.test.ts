// hub/http/endpoints/sse-to-json.ts on its own: an SSE reply turned back into the JSON-RPC reply a plain HTTP
// client can read, and a reply that is only a rate-limit error turned into HTTP 429.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { rateLimitRetryMs, retryAfterSeconds, sseToJson, withFullAccept } from "../../../hub/http/endpoints/sse-to-json.js";
import { RATE_LIMITED_CODE } from "../../../hub/protocol/jsonrpc.js";

const sse = (body: string, status = 200) =>
  new Response(body, { status, headers: { "content-type": "text/event-stream", "content-length": String(body.length) } });
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const event = (message: unknown, extra = "") => `${extra}data: ${JSON.stringify(message)}\n\n`;
const rateLimited = (retryAfterMs?: number) => ({ jsonrpc: "2.0", id: 1, error: { code: RATE_LIMITED_CODE, message: "slow down", data: { retryAfterMs } } });

describe("SSE to JSON", () => {
  test("the response is picked out of notifications, ids and comments, in CRLF or LF", async () => {
    const body =
      event({ jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } }, "id: s_1\nevent: message\n") +
      ": a comment\r\n\r\n" +
      `id: s_2\r\ndata: {"jsonrpc":"2.0",\r\ndata: "id":7,"result":{"ok":true}}\r\n\r\n`;
    const res = await sseToJson(sse(body), false);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("content-length"), null, "the SSE length no longer fits the body");
    assert.deepEqual(await res.json(), { jsonrpc: "2.0", id: 7, result: { ok: true } });
  });

  test("a batch gets every response as an array; a non-batch only the first", async () => {
    const body = event({ jsonrpc: "2.0", id: 1, result: {} }) + event({ jsonrpc: "2.0", id: 2, error: { code: -32601, message: "no" } });
    assert.deepEqual(
      (await (await sseToJson(sse(body), true)).json()).map((m: { id: number }) => m.id),
      [1, 2],
    );
    assert.equal((await (await sseToJson(sse(body), false)).json()).id, 1);
  });

  test("data that is not JSON is skipped; a stream without a response is 202 with no body", async () => {
    const res = await sseToJson(sse("data: {not json\n\n" + event({ jsonrpc: "2.0", method: "notifications/message" })), false);
    assert.equal(res.status, 202);
    assert.equal(await res.text(), "");
  });

  test("a reply that is not SSE passes through", async () => {
    const res = await sseToJson(new Response("gone", { status: 404, headers: { "content-type": "text/plain" } }), false);
    assert.equal(res.status, 404);
    assert.equal(await res.text(), "gone");
  });
});

describe("rate-limit status", () => {
  test("a reply that is only a rate-limit error becomes 429 with Retry-After in whole seconds", async () => {
    const fromSse = await sseToJson(sse(event(rateLimited(1500))), false);
    assert.equal(fromSse.status, 429);
    assert.equal(fromSse.headers.get("retry-after"), "2");
    const fromJson = await sseToJson(json(rateLimited(10)), false);
    assert.equal(fromJson.status, 429);
    assert.equal(fromJson.headers.get("retry-after"), "1");
    assert.equal((await fromJson.json()).error.code, RATE_LIMITED_CODE, "the body is kept");
  });

  test("other errors, batches of several and non-200 replies keep their status", async () => {
    assert.equal((await sseToJson(json({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "no" } }), false)).status, 200);
    assert.equal((await sseToJson(json([rateLimited(5), { jsonrpc: "2.0", id: 2, result: {} }]), true)).status, 200);
    assert.equal((await sseToJson(json(rateLimited(5), 400), false)).status, 400);
    const broken = await sseToJson(new Response("{", { headers: { "content-type": "application/json" } }), false);
    assert.equal(broken.status, 200);
    assert.equal(await broken.text(), "{");
  });

  test("retry times: a batch of one counts; a missing or odd wait becomes one second", () => {
    assert.equal(rateLimitRetryMs([rateLimited(250)]), 250);
    assert.equal(rateLimitRetryMs(rateLimited()), 1000);
    assert.equal(rateLimitRetryMs({ error: { code: RATE_LIMITED_CODE, data: { retryAfterMs: "soon" } } }), 1000);
    assert.equal(rateLimitRetryMs(null), undefined);
    assert.equal(rateLimitRetryMs([]), undefined);
    assert.equal(retryAfterSeconds(1), "1");
    assert.equal(retryAfterSeconds(2000), "2");
  });
});

test("Accept is set for the SDK unless it is already what SDK clients send", async () => {
  const full = new Request("http://h/mcp", { method: "POST", headers: { accept: "application/json, text/event-stream" }, body: "{}" });
  assert.equal(withFullAccept(full), full);
  // the SDK transport looks for both names as written: the same types in capitals would be refused there with 406
  const shouted = new Request("http://h/mcp", { method: "POST", headers: { accept: "Application/JSON, Text/Event-Stream" }, body: "{}" });
  assert.equal(withFullAccept(shouted, "{}").headers.get("accept"), "application/json, text/event-stream");
  const plain = withFullAccept(
    new Request("http://h/mcp", { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k" }, body: "{}" }),
    '{"a":1}',
  );
  assert.equal(plain.headers.get("accept"), "application/json, text/event-stream");
  assert.equal(plain.headers.get("x-api-key"), "k");
  assert.equal(await plain.text(), '{"a":1}');
});
