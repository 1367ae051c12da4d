// parseJsonRpc and friends (hub/protocol/jsonrpc.ts): what the hub answers itself before a
// body reaches the SDK, attacked with the bodies a hostile client would send.
import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonRpcError, jsonRpcResult, parseJsonRpc, protocolError, resultMessage, withoutCodePrefix } from "../../../hub/protocol/jsonrpc.js";

async function refusal(text: string): Promise<{ status: number; body: { id: unknown; error: { code: number; message: string } } }> {
  const parsed = parseJsonRpc(text);
  assert.equal(parsed.ok, false, text);
  const { response } = parsed as { ok: false; response: Response };
  return { status: response.status, body: await response.json() };
}

test("a body that is not JSON is a parse error with the reason", async () => {
  for (const text of ["", "{", "{'a':1}", "[1,"]) {
    const { status, body } = await refusal(text);
    assert.equal(status, 400);
    assert.equal(body.error.code, -32700);
    assert.match(body.error.message, /not valid JSON \(.+\)/);
    assert.equal(body.id, null);
  }
});

test("a request whose id the SDK cannot carry is refused, alone or in a batch", async () => {
  for (const id of ["1.5", "1e300", "18446744073709551616", "true", "{}", "[1]"]) {
    const { status, body } = await refusal(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
    assert.equal(status, 400, id);
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /a string or an integer/);
    assert.equal(body.id, typeof JSON.parse(id) === "number" ? JSON.parse(id) : null);
  }
  const batch = await refusal(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2.5,"method":"ping"}]`);
  assert.equal(batch.body.error.code, -32600);
});

test("valid JSON that is not a JSON-RPC message is an Invalid Request naming the missing or wrong field", async () => {
  const cases: [string, RegExp, unknown][] = [
    [`{"id":1,"method":"tools/list"}`, /the "jsonrpc" field is missing; every message carries "jsonrpc": "2\.0"/, 1],
    [`{"jsonrpc":"1.0","id":"a","method":"ping"}`, /"jsonrpc" must be "2\.0", not "1\.0"/, "a"],
    [`{"jsonrpc":2,"id":1,"method":"ping"}`, /"jsonrpc" must be "2\.0", not 2/, 1],
    [`{"jsonrpc":"2.0","id":1}`, /the "method" field is missing/, 1],
    [`{"jsonrpc":"2.0","id":1,"method":42}`, /"method" must be a string .*not 42/, 1],
    [`{"hello":"world"}`, /the "jsonrpc" field is missing/, null],
    [`42`, /a message must be a JSON object, not 42/, null],
    [`[1,"a",null]`, /a message must be a JSON object, not 1/, null],
    [`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"id":2,"method":"ping"}]`, /the "jsonrpc" field is missing/, 2],
    [`[]`, /the batch is empty/, null],
  ];
  for (const [text, message, id] of cases) {
    const { status, body } = await refusal(text);
    assert.equal(status, 400, text);
    assert.equal(body.error.code, -32600, text);
    assert.match(body.error.message, /^Invalid Request: /, text);
    assert.match(body.error.message, message, text);
    assert.equal(body.id, id, text);
  }
});

test("ids the SDK carries, responses and notifications pass as they are", () => {
  for (const text of [
    `{"jsonrpc":"2.0","id":"x","method":"ping"}`,
    `{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`,
    `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
    `{"jsonrpc":"2.0","id":1.5,"result":{}}`,
    `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
    `{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}`,
  ]) {
    const parsed = parseJsonRpc(text);
    assert.ok(parsed.ok, text);
    assert.deepEqual(parsed.body, JSON.parse(text));
    assert.equal(parsed.text, text);
  }
});

test("__proto__ keys are dropped, so a body cannot set the prototype of what is built from it", () => {
  const parsed = parseJsonRpc(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"__proto__":{"admin":true},"a":1}}}`);
  assert.ok(parsed.ok);
  const args = (parsed.body as { params: { arguments: Record<string, unknown> } }).params.arguments;
  assert.deepEqual(Object.keys(args), ["a"]);
  assert.equal(Object.getPrototypeOf(args), Object.prototype);
  assert.equal({ ...args }.admin, undefined);
  assert.equal(({} as Record<string, unknown>).admin, undefined);
});

test("error replies and messages", async () => {
  const res = jsonRpcError(429, -32029, "slow", { id: 3, data: { retryAfterMs: 5 }, headers: { "Retry-After": "1" } });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.deepEqual(await res.json(), { jsonrpc: "2.0", id: 3, error: { code: -32029, message: "slow", data: { retryAfterMs: 5 } } });
  assert.equal("data" in (await jsonRpcError(400, -1, "m").json()).error, false);
  assert.equal(protocolError(-32602, "bad").message, "bad");
  assert.equal(withoutCodePrefix("MCP error -32602: MCP error -32602: bad"), "bad");
  assert.equal(withoutCodePrefix("bad: MCP error -1: x"), "bad: MCP error -1: x");
});

test("result replies and messages", async () => {
  const res = jsonRpcResult("a", { content: [], _meta: { x: 1 } }, { headers: { "Mcp-Session-Id": "s" } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.equal(res.headers.get("mcp-session-id"), "s");
  assert.deepEqual(await res.json(), { jsonrpc: "2.0", id: "a", result: { content: [], _meta: { x: 1 } } });
  assert.deepEqual(await jsonRpcResult(0, {}).json(), { jsonrpc: "2.0", id: 0, result: {} });
  assert.deepEqual(resultMessage(7, { ok: true }), { jsonrpc: "2.0", id: 7, result: { ok: true } });
});
