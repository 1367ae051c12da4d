// The table a call passes through on its way (hub/protocol/call-table.ts): what the child channel,
// the queue and each session's calls in flight rely on, and the keys a hostile child or client
// may send to it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CallTable, requestIdKey } from "../../../hub/protocol/call-table.js";
import { ChildCalls } from "../../../hub/children/calls.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

test("entries by key: size, get, has, set over an entry, delete once, insertion order", () => {
  const table = new CallTable<{ n: number }>();
  table.set("h2", { n: 2 }).set("h1", { n: 1 }).set("h3", { n: 3 });
  table.set("h1", { n: 10 });
  assert.equal(table.size, 3);
  assert.deepEqual(table.get("h1"), { n: 10 });
  assert.equal(table.has("h2"), true);
  assert.equal(table.delete("h2"), true);
  assert.equal(table.delete("h2"), false);
  assert.equal(table.has("h2"), false);
  assert.equal(table.get("h2"), undefined);
  assert.equal(table.size, 2);
  assert.deepEqual(table.keys(), ["h1", "h3"]);
  assert.deepEqual(
    [...table].map((v) => v.n),
    [10, 3],
  );
});

test("keys an object would inherit or treat specially are plain keys: nothing found that was not set", () => {
  const table = new CallTable<string>();
  for (const key of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
    assert.equal(table.has(key), false, key);
    assert.equal(table.get(key), undefined, key);
    assert.equal(table.delete(key), false, key);
  }
  table.set("__proto__", "set");
  assert.equal(table.get("__proto__"), "set");
  assert.equal(table.size, 1);
  assert.deepEqual(table.keys(), ["__proto__"]);
  assert.equal(table.delete("__proto__"), true);
  assert.equal(table.size, 0);
});

test("a request id's key tells 1 from '1'", () => {
  const table = new CallTable<string>();
  table.set(requestIdKey(1), "number").set(requestIdKey("1"), "string");
  assert.equal(table.size, 2);
  assert.equal(table.get(requestIdKey(1)), "number");
  assert.equal(table.get(requestIdKey("1")), "string");
});

test("a child answering under an id no call of its has (or one an object would inherit) settles nothing", async () => {
  const sent: JSONRPCMessage[] = [];
  const transport = { send: async (message: JSONRPCMessage) => void sent.push(message) } as unknown as Transport;
  const calls = new ChildCalls(transport, { timeoutMs: 60_000, maxTotalMs: 60_000, maxMessageBytes: 1_000_000 }, "hostile");
  const call = calls.request("tools/call", { name: "t" });
  const id = (sent[0] as { id: string }).id;
  for (const forged of ["__proto__", "constructor", "toString", "h999", `${id} `])
    assert.equal(calls.take({ jsonrpc: "2.0", id: forged, result: { forged: true } } as JSONRPCMessage), false, forged);
  assert.equal(calls.take({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "__proto__", progress: 1 } }), false);
  assert.equal(calls.inFlight, 1);
  assert.equal(calls.take({ jsonrpc: "2.0", id, result: { content: [] } } as JSONRPCMessage), true);
  assert.deepEqual(await call, { content: [] });
  assert.equal(calls.inFlight, 0);
});
