// The bounded store behind resumable SSE (hub/http/event-store.ts): what a client reconnecting with
// Last-Event-ID is sent, and what the bound throws away first.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { BoundedEventStore, EventBudget } from "../../../hub/http/event-store.js";
import { approximateJsonSize } from "../../../hub/protocol/json-size.js";

const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: n } });

async function replay(store: BoundedEventStore, after: string): Promise<{ stream: string; sent: Array<[string, number]> }> {
  const { stream, messages } = await replayAll(store, after);
  return { stream, sent: messages.map(([id, m]) => [id, (m as unknown as { params: { progress: number } }).params.progress]) };
}

async function replayAll(store: BoundedEventStore, after: string): Promise<{ stream: string; messages: Array<[string, JSONRPCMessage]> }> {
  const messages: Array<[string, JSONRPCMessage]> = [];
  const stream = await store.replayEventsAfter(after, { send: async (id, message) => void messages.push([id, message]) });
  return { stream, messages };
}

/** A store whose budget holds `events` progress notes per session (and `total` in all). */
const storeFor = (events: number, total = 1e9) => {
  const bytes = approximateJsonSize(note(1)) + 160;
  const budget = new EventBudget(bytes * events, bytes * total);
  return { budget, store: new BoundedEventStore(budget) };
};

const big = (id: number, size: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "x".repeat(size) }] } });

test("replay sends the events of that stream after the id, in order, and names the stream", async () => {
  const store = new BoundedEventStore();
  const a1 = await store.storeEvent("a", note(1));
  const b2 = await store.storeEvent("b", note(2));
  const a3 = await store.storeEvent("a", note(3));
  const a4 = await store.storeEvent("a", note(4));
  assert.deepEqual(await replay(store, a1), {
    stream: "a",
    sent: [
      [a3, 3],
      [a4, 4],
    ],
  });
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

test("past the byte bound the oldest events go first; a resume from a dropped id is told how many it lost", async () => {
  const { store } = storeFor(3);
  const ids: string[] = [];
  for (let n = 1; n <= 5; n++) ids.push(await store.storeEvent(n % 2 ? "a" : "b", note(n)));
  // kept: 3 (a), 4 (b), 5 (a); 1 (a) and 2 (b) are gone
  const fromA = await replayAll(store, ids[0]);
  assert.equal(fromA.stream, "a");
  assert.deepEqual(
    fromA.messages.map(([id]) => id),
    [ids[2], ids[4]],
    "nothing of 'a' was lost after its first event",
  );
  const fromB = await replayAll(store, "b_0");
  const [notice, ...rest] = fromB.messages;
  assert.equal(notice[0], "b_1", "the notice takes the last lost event's id, so resuming from it does not repeat it");
  assert.equal((notice[1] as { method?: string }).method, "notifications/message");
  assert.match(JSON.stringify(notice[1]), /"level":"warning".*1 event\(s\) of this stream were dropped.*AGENTBOX_EVENT_STORE_BYTES/);
  assert.deepEqual(
    rest.map(([id]) => id),
    [ids[3]],
  );
  assert.equal(await store.getStreamIdForEventId(ids[0]), "a", "an evicted id still names its stream");
  assert.deepEqual(await replay(store, notice[0]), { stream: "b", sent: [[ids[3], 4]] });
});

test("a response dropped from the store is answered with an error on resume, not left pending", async () => {
  const { store } = storeFor(3);
  const primed = await store.storeEvent("req", {} as JSONRPCMessage);
  await store.storeEvent("req", note(1));
  await store.storeEvent("req", big(7, 100_000));
  const { messages } = await replayAll(store, primed);
  assert.equal(messages.length, 2, JSON.stringify(messages).slice(0, 300));
  assert.match(JSON.stringify(messages[0][1]), /2 event\(s\) of this stream were dropped/);
  const lost = messages[1][1] as { id: number; error: { message: string } };
  assert.equal(lost.id, 7);
  assert.match(lost.error.message, /result of this request was dropped.*call it again/);
});

test("over the hub's total the largest store loses its oldest events, not a small one", async () => {
  const { budget, store: small } = storeFor(100, 10);
  const greedy = new BoundedEventStore(budget);
  const mine = await small.storeEvent("s", note(1));
  for (let n = 0; n < 30; n++) await greedy.storeEvent("g", note(n));
  assert.ok(budget.used <= budget.total, `${budget.used} > ${budget.total}`);
  assert.deepEqual((await replay(small, "s_0")).sent, [[mine, 1]], "the small store keeps its event");
  greedy.dispose();
  small.dispose();
  assert.equal(budget.used, 0, "a closed session's events no longer count");
});

test("a stream forgotten among many (a POST each) is resumed with a warning, not as if nothing was lost", async () => {
  const { store } = storeFor(3);
  const first = await store.storeEvent("s0", note(0));
  for (let n = 1; n < 150; n++) await store.storeEvent(`s${n}`, note(n));
  const { messages } = await replayAll(store, first);
  assert.equal(messages.length, 1);
  assert.match(JSON.stringify(messages[0][1]), /Events of this stream may have been dropped/);
});

test("streams that still hold events are all remembered, however many; of the emptied ones the latest are", async () => {
  // a session's POSTs each open a stream: thousands of them, every one still holding its events
  const { store } = storeFor(10_000);
  const firsts: string[] = [];
  for (let n = 0; n < 3000; n++) firsts.push(await store.storeEvent(`s${n}`, note(n)));
  const second = await store.storeEvent("s0", note(-1));
  assert.deepEqual(
    await replay(store, firsts[0]),
    { stream: "s0", sent: [[second, -1]] },
    "the oldest stream keeps its events and is resumed without a warning",
  );

  // with room for 3 events, the streams (two events each) empty one after another: the last emptied are still known
  const { store: small } = storeFor(3);
  const ids: string[] = [];
  for (let n = 0; n < 150; n++) {
    ids.push(await small.storeEvent(`t${n}`, note(n)));
    await small.storeEvent(`t${n}`, note(n));
  }
  const recent = await replayAll(small, ids[140]);
  assert.equal(recent.messages.length, 1);
  assert.match(JSON.stringify(recent.messages[0][1]), /1 event\(s\) of this stream were dropped/, "a recently emptied stream says exactly what it lost");
  const old = await replayAll(small, ids[10]);
  assert.match(JSON.stringify(old.messages[0][1]), /Events of this stream may have been dropped/, "a long-emptied stream is forgotten");
});

test("message sizes are estimated without serializing, close to the JSON's length", () => {
  for (const message of [
    note(3),
    big(1, 50_000),
    { jsonrpc: "2.0", id: "x", result: { list: Array.from({ length: 500 }, (_, i) => ({ n: i, name: `item ${i}` })) } },
  ]) {
    const exact = JSON.stringify(message).length;
    const estimate = approximateJsonSize(message);
    assert.ok(estimate >= exact * 0.8 && estimate <= exact * 2, `${estimate} vs ${exact}`);
  }
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.ok(approximateJsonSize(deep) > 200_000, "deep nesting is walked without overflowing the stack");
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
