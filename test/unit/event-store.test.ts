// The bounded store behind resumable SSE (hub/event-store.ts): what a client reconnecting with
// Last-Event-ID is sent, and what the bound throws away first.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { BoundedEventStore } from "../../hub/event-store.js";

const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: n } });

async function replay(store: BoundedEventStore, after: string): Promise<{ stream: string; sent: Array<[string, number]> }> {
  const sent: Array<[string, number]> = [];
  const stream = await store.replayEventsAfter(after, {
    send: async (id, message) => void sent.push([id, (message as unknown as { params: { progress: number } }).params.progress]),
  });
  return { stream, sent };
}

test("replay sends the events of that stream after the id, in order, and names the stream", async () => {
  const store = new BoundedEventStore();
  const a1 = await store.storeEvent("a", note(1));
  const b2 = await store.storeEvent("b", note(2));
  const a3 = await store.storeEvent("a", note(3));
  const a4 = await store.storeEvent("a", note(4));
  assert.deepEqual(await replay(store, a1), { stream: "a", sent: [[a3, 3], [a4, 4]] });
  assert.deepEqual(await replay(store, a4), { stream: "a", sent: [] });
  assert.deepEqual(await replay(store, b2), { stream: "b", sent: [] });
  assert.equal(await store.getStreamIdForEventId(a3), "a");
});

test("stream ids holding underscores are kept whole", async () => {
  const store = new BoundedEventStore();
  const first = await store.storeEvent("session_x_y", note(1));
  const second = await store.storeEvent("session_x_y", note(2));
  assert.equal(await store.getStreamIdForEventId(first), "session_x_y");
  assert.deepEqual(await replay(store, first), { stream: "session_x_y", sent: [[second, 2]] });
});

test("past the bound the oldest events go first; a resume from an evicted id gets what is left", async () => {
  const store = new BoundedEventStore(3);
  const ids: string[] = [];
  for (let n = 1; n <= 5; n++) ids.push(await store.storeEvent(n % 2 ? "a" : "b", note(n)));
  // kept: 3 (a), 4 (b), 5 (a); 1 and 2 are gone
  assert.deepEqual(await replay(store, ids[0]), { stream: "a", sent: [[ids[2], 3], [ids[4], 5]] });
  assert.deepEqual(await replay(store, ids[1]), { stream: "b", sent: [[ids[3], 4]] });
  assert.equal(await store.getStreamIdForEventId(ids[0]), "a", "an evicted id still names its stream");
});

test("ids that name no stream replay nothing", async () => {
  const store = new BoundedEventStore();
  await store.storeEvent("a", note(1));
  for (const id of ["", "nounderscore", "_5", "zzz"]) {
    assert.deepEqual(await replay(store, id), { stream: "", sent: [] }, id);
    assert.equal(await store.getStreamIdForEventId(id), undefined, id);
  }
  // an id of another stream that never existed: nothing of stream "a" leaks into it
  assert.deepEqual(await replay(store, "other_0"), { stream: "other", sent: [] });
});
