// A task's times on the hub's clock (mock.timers drives it): createdAt and lastUpdatedAt are the
// clock's, a running task never expires however long it runs, and an ended one's outcome is kept
// ttlMs after it ended, then its id is an unknown task. Tasks over HTTP are the other tests here.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { systemClock } from "../../../hub/protocol/clock.js";
import type { PendingCall } from "../../../hub/sessions/pending-call.js";
import { TaskStore } from "../../../hub/tasks/store.js";

const START = Date.UTC(2026, 0, 1);
const TTL_MS = 60_000;
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A call whose one round ends with the result `finish` is given, or fails when abandoned (what a task runs; its child is another test's). */
function call(): { open: () => PendingCall; finish: (text: string) => void } {
  let finish!: (text: string) => void;
  let fail!: (error: Error) => void;
  const outcome = new Promise<{ result: unknown }>((resolve, reject) => {
    finish = (text) => resolve({ result: { content: [{ type: "text", text }] } });
    fail = reject;
  });
  const pending = { next: () => outcome, afterReply: [], abandon: (why: string) => fail(new Error(why)), answer() {} } as unknown as PendingCall;
  return { open: () => pending, finish };
}

describe("tasks on the hub's clock", () => {
  let store: TaskStore;
  beforeEach(() => {
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: START });
    store = new TaskStore({ perTenant: 10, ttlMs: TTL_MS, resultBytes: 1024 * 1024 }, systemClock);
  });
  afterEach(() => {
    store.close();
    mock.timers.reset();
  });

  test("a running task is kept however long it runs; its outcome is kept ttlMs after it ended, then it is unknown", async () => {
    const { open, finish } = call();
    const task = store.create("alice", "build", open, undefined);
    assert.equal(task.createdAt, new Date(START).toISOString());
    mock.timers.tick(10 * TTL_MS);
    assert.equal(store.get("alice", task.id).status, "working", "a running task does not expire");
    finish("built");
    await settle();
    assert.equal(task.status, "completed");
    assert.equal(task.lastUpdatedAt, new Date(START + 10 * TTL_MS).toISOString(), "it ended at the clock's time");
    mock.timers.tick(TTL_MS - 1);
    assert.deepEqual(store.get("alice", task.id).detailed().result, { content: [{ type: "text", text: "built" }] });
    mock.timers.tick(1);
    assert.throws(() => store.get("alice", task.id), /Unknown task: .*expired ttlMs after it ended/);
    assert.deepEqual(store.of("alice"), []);
  });

  test("a cancelled task's end is kept ttlMs too, from when it was cancelled", async () => {
    const { open } = call();
    const task = store.create("alice", "build", open, undefined);
    mock.timers.tick(5_000);
    task.cancel();
    await settle();
    assert.equal(task.lastUpdatedAt, new Date(START + 5_000).toISOString());
    mock.timers.tick(TTL_MS - 1);
    assert.equal(store.get("alice", task.id).status, "cancelled");
    mock.timers.tick(1);
    assert.throws(() => store.get("alice", task.id), /Unknown task/);
  });
});
