// The direct path's cancellation (hub/protocol/cancellation.ts): what a call in flight relies on when its
// client cancels or its session closes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CallCancellation } from "../../../hub/protocol/cancellation.js";
import { CallQueue } from "../../../hub/children/queue.js";
import { QueueBudget } from "../../../hub/children/queue-budget.js";

test("abort runs each listener once, with the reason set, and a removed listener not at all", () => {
  const cancel = new CallCancellation();
  const heard: unknown[] = [];
  const kept = () => heard.push(cancel.reason);
  const removed = () => heard.push("removed");
  cancel.addEventListener("abort", kept);
  cancel.addEventListener("abort", removed);
  cancel.removeEventListener("abort", removed);
  assert.equal(cancel.aborted, false);
  cancel.abort("session closed");
  cancel.abort("again");
  assert.equal(cancel.aborted, true);
  assert.equal(cancel.reason, "session closed");
  assert.deepEqual(heard, ["session closed"]);
});

test("a call waiting in a full queue leaves it when cancelled, with the reason", async () => {
  const budget = new QueueBudget(1024 * 1024);
  const queue = new CallQueue("echo", 1, 4, { taskSlotsPercent: 50, budget });
  const plain = (signal?: CallCancellation) => ({ params: { text: "x".repeat(1000) }, isTask: () => false, signal });
  let release!: () => void;
  const running = queue.run(plain(), () => new Promise<void>((r) => (release = r)));
  const cancel = new CallCancellation();
  const waiting = queue.run(plain(cancel), async () => "ran");
  assert.deepEqual(queue.stats, { running: 1, queued: 1 });
  assert.ok(budget.used > 1000, "the waiting call is counted against its tenant's budget");
  cancel.abort(new Error("cancelled by the client"));
  await assert.rejects(waiting, /cancelled by the client/);
  assert.deepEqual(queue.stats, { running: 1, queued: 0 });
  assert.equal(budget.used, 0, "and no longer once it left");
  release();
  await running;
});
