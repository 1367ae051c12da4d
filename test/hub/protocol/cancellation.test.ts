// The direct path's cancellation (hub/protocol/cancellation.ts): what a call in flight relies on when its
// client cancels or its session closes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CallCancellation } from "../../../hub/protocol/cancellation.js";
import { CallQueue } from "../../../hub/children/queue.js";

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
  const queue = new CallQueue("echo", 1, 4, { taskSlotsPercent: 50 });
  const plain = (signal?: CallCancellation) => ({ isTask: () => false, signal });
  let release!: () => void;
  const running = queue.run(plain(), () => new Promise<void>((r) => (release = r)));
  const cancel = new CallCancellation();
  const waiting = queue.run(plain(cancel), async () => "ran");
  assert.deepEqual(queue.stats, { running: 1, queued: 1 });
  cancel.abort(new Error("cancelled by the client"));
  await assert.rejects(waiting, /cancelled by the client/);
  assert.deepEqual(queue.stats, { running: 1, queued: 0 });
  release();
  await running;
});
