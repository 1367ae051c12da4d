// The table a call passes through on its way (hub/protocol/call-table.ts): what the child channel,
// the queue and each session's calls in flight rely on, and the keys a hostile child or client
// may send to it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CallTable, requestIdKey } from "../../../hub/protocol/call-table.js";
import { ChildCalls } from "../../../hub/children/calls.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

test("entries by key: size, get, has, set over an entry, delete once; a counter's keys in order, then strings in insertion order", () => {
  const table = new CallTable<{ n: number }, number | string>();
  table.set("b", { n: 20 }).set(2, { n: 2 }).set(1, { n: 1 }).set("a", { n: 10 }).set(3, { n: 3 });
  table.set(1, { n: 100 });
  assert.equal(table.size, 5);
  assert.deepEqual(table.get(1), { n: 100 });
  assert.equal(table.has(2), true);
  assert.equal(table.delete(2), true);
  assert.equal(table.delete(2), false);
  assert.equal(table.has(2), false);
  assert.equal(table.get(2), undefined);
  assert.equal(table.size, 4);
  assert.deepEqual(
    [...table].map((v) => v.n),
    [100, 3, 20, 10],
  );
});

test("keys an object would inherit or treat specially are plain keys: nothing found that was not set", () => {
  const table = new CallTable<string, string>();
  for (const key of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
    assert.equal(table.has(key), false, key);
    assert.equal(table.get(key), undefined, key);
    assert.equal(table.delete(key), false, key);
  }
  table.set("__proto__", "set");
  assert.equal(table.get("__proto__"), "set");
  assert.equal(table.size, 1);
  assert.deepEqual([...table], ["set"]);
  assert.equal(table.delete("__proto__"), true);
  assert.equal(table.size, 0);
});

test("a request id's key tells 1 from '1', and any number from any string", () => {
  const table = new CallTable<string, string | number>();
  const ids: Array<string | number> = [1, "1", -1, "-1", 1.5, "1.5", "#1", "'1", 2 ** 60, String(2 ** 60)];
  for (const id of ids) table.set(requestIdKey(id), JSON.stringify(id));
  assert.equal(table.size, ids.length);
  for (const id of ids) assert.equal(table.get(requestIdKey(id)), JSON.stringify(id));
});

test("a child answering under an id no call of its has (or one an object would inherit) settles nothing", async () => {
  const sent: JSONRPCMessage[] = [];
  const transport = { send: async (message: JSONRPCMessage) => void sent.push(message) } as unknown as Transport;
  const calls = new ChildCalls(transport, { timeoutMs: 60_000, maxTotalMs: 60_000, maxMessageBytes: 1_000_000 }, "hostile");
  const call = calls.request("tools/call", { name: "t" });
  const id = (sent[0] as { id: string }).id;
  // the same number spelled otherwise names no call: only the id as sent does
  const n = id.slice(1);
  for (const forged of ["__proto__", "constructor", "toString", "h999", `${id} `, `h0${n}`, `h${n}.0`, `h+${n}`, `H${n}`, n, `h${n}e0`])
    assert.equal(calls.take({ jsonrpc: "2.0", id: forged, result: { forged: true } } as JSONRPCMessage), false, forged);
  for (const token of ["__proto__", `h0${n}`, n])
    assert.equal(calls.take({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 1 } }), false, token);
  assert.equal(calls.inFlight, 1);
  assert.equal(calls.take({ jsonrpc: "2.0", id, result: { content: [] } } as JSONRPCMessage), true);
  assert.deepEqual(await call, { content: [] });
  assert.equal(calls.inFlight, 0);
});
