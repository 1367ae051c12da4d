// The per-child call queue (hub/children/queue.ts) on its own: the share of slots a tenant's tasks
// may hold, the order waiting calls start in, and the tenant's budget for what waiting calls hold.
// The same queue under a real hub, real terminals and real clients: test/hub/tasks/task-slots.test.ts
// and test/hub/http/queued-memory.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CallQueue, QueueFullError, TurnWaitError, queuedCall, type QueuedCall } from "../../../hub/children/queue.js";
import { QueueBudget, QueueBudgetError } from "../../../hub/children/queue-budget.js";
import { CallCancellation } from "../../../hub/protocol/cancellation.js";

const MiB = 1024 * 1024;

/** A call the test ends when it likes, recording what the queue told it and when it started. */
class TestCall implements QueuedCall {
  readonly heard: string[] = [];
  readonly signal = new CallCancellation();
  started = false;
  done?: Promise<unknown>;
  private finish!: () => void;

  constructor(
    readonly name: string,
    public task: boolean,
    readonly params: unknown = { arguments: { text: "small" } },
  ) {}

  isTask = () => this.task;
  onqueue = (status: string) => void this.heard.push(status);

  /** Hands the call to the queue; `order` records the names of the calls in the order they start. */
  enter(queue: CallQueue, order: string[] = []): this {
    this.done = queue.run(this, () => {
      this.started = true;
      order.push(this.name);
      return new Promise<void>((resolve) => (this.finish = resolve));
    });
    return this;
  }

  async end(): Promise<void> {
    this.finish();
    await this.done;
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const queueOf = (slots: number, percent = 50, budget = new QueueBudget(64 * MiB), maxQueue = 100) =>
  new CallQueue("terminal", slots, maxQueue, { taskSlotsPercent: percent, budget });

describe("the tasks' share of a server's slots", () => {
  test("tasks take at most their share; calls that are not tasks take the rest at once", async () => {
    const queue = queueOf(4);
    const tasks = ["t1", "t2", "t3", "t4"].map((name) => new TestCall(name, true).enter(queue));
    await settle();
    assert.deepEqual(
      tasks.map((t) => t.started),
      [true, true, false, false],
      "half of 4 slots",
    );
    const plain = [new TestCall("p1", false).enter(queue), new TestCall("p2", false).enter(queue)];
    await settle();
    assert.ok(
      plain.every((p) => p.started),
      "the waiting tasks did not hold up the ordinary calls queued behind them",
    );
    assert.deepEqual(queue.stats, { running: 4, queued: 2 });
    assert.match(tasks[2].heard[0], /tasks hold 2 of the 'terminal' server's 4 slots, the most tasks may \(AGENTBOX_TASK_SLOTS_PERCENT, 50%\)/);
  });

  test("a slot an ordinary call frees goes to the next ordinary call, never to a task past its share", async () => {
    const queue = queueOf(4);
    const order: string[] = [];
    const running = [new TestCall("t1", true), new TestCall("t2", true), new TestCall("p1", false), new TestCall("p2", false)].map((c) =>
      c.enter(queue, order),
    );
    const waiting = [new TestCall("t3", true), new TestCall("p3", false)].map((c) => c.enter(queue, order));
    await settle();
    assert.match(
      waiting[1].heard[0],
      /^Waiting for a slot: all 4 of the 'terminal' server's slots are busy with this tenant's calls \(its maxConcurrency\); 1 other call\(s\) wait too\. It starts when one is free\.$/,
    );
    await running[2].end();
    await settle();
    assert.deepEqual(order.slice(4), ["p3"], "the ordinary call behind the task got the slot");
    await running[0].end();
    await settle();
    assert.deepEqual(order.slice(4), ["p3", "t3"], "a task's end lets the waiting task in");
    assert.match(waiting[0].heard.at(-1)!, /^Running: it waited \d+ s for a slot of the 'terminal' server\.$/, "a task hears that it started");
    assert.equal(waiting[1].heard.length, 1, "an ordinary call hears only why it waits");
  });

  test("waiting calls start in the order they came when they may", async () => {
    const queue = queueOf(2);
    const order: string[] = [];
    const first = [new TestCall("a", false), new TestCall("b", false)].map((c) => c.enter(queue, order));
    for (const name of ["c", "d", "e"]) new TestCall(name, false).enter(queue, order);
    await first[0].end();
    await first[1].end();
    await settle();
    assert.deepEqual(order, ["a", "b", "c", "d"]);
  });

  test("a call that becomes a task while it waits counts as one when it would start", async () => {
    const queue = queueOf(4);
    const order: string[] = [];
    const tasks = [new TestCall("t1", true), new TestCall("t2", true)].map((c) => c.enter(queue, order));
    const plain = [new TestCall("p1", false), new TestCall("p2", false)].map((c) => c.enter(queue, order));
    const becomes = new TestCall("b", false).enter(queue, order);
    const behind = new TestCall("p3", false).enter(queue, order);
    becomes.task = true;
    await plain[0].end();
    await settle();
    assert.deepEqual(order.slice(4), ["p3"], "the tasks' share was full");
    await tasks[0].end();
    await settle();
    assert.deepEqual(order.slice(4), ["p3", "b"]);
    void behind;
  });

  test("the share rounds down, but tasks always have a slot; 100% lets them take every one", async () => {
    for (const [slots, percent, expected] of [
      [1, 50, 1],
      [3, 50, 1],
      [5, 30, 1],
      [4, 100, 4],
    ]) {
      const queue = queueOf(slots, percent);
      const tasks = Array.from({ length: slots + 1 }, (_, i) => new TestCall(`t${i}`, true).enter(queue));
      await settle();
      assert.equal(tasks.filter((t) => t.started).length, expected, `${percent}% of ${slots}`);
    }
  });
});

describe("the tenant's budget for waiting calls", () => {
  test("a call that must wait past the budget is refused at once, saying so; one that finds a free slot never is", async () => {
    const budget = new QueueBudget(10 * MiB);
    const queue = queueOf(1, 50, budget);
    const big = () => ({ arguments: { text: "x".repeat(4 * MiB) } });
    const holder = new TestCall("holder", false, big()).enter(queue);
    await settle();
    assert.ok(holder.started, "a running call is not counted");
    assert.equal(budget.used, 0);
    const waiting = [new TestCall("w1", false, big()).enter(queue), new TestCall("w2", false, big()).enter(queue)];
    await settle();
    assert.ok(budget.used >= 8 * MiB && budget.used < 9 * MiB, `two 4 MiB calls wait: ${budget.used}`);
    const refused = new TestCall("w3", false, big()).enter(queue);
    await assert.rejects(refused.done!, (error: Error) => {
      assert.ok(error instanceof QueueBudgetError);
      assert.match(error.message, /^This call was refused rather than queued: the 'terminal' server's one slot is busy with this tenant's calls/);
      assert.match(
        error.message,
        /already waiting for a slot hold 8\.0 MiB; this one \(4\.0 MiB\) would pass the 10\.0 MiB that waiting calls may hold \(AGENTBOX_QUEUED_CALL_BYTES\)/,
      );
      return true;
    });
    assert.equal(queue.stats.queued, 2, "the refused call never queued");
    const small = new TestCall("small", false).enter(queue);
    await settle();
    assert.equal(queue.stats.queued, 3, "a small call still fits");
    await holder.end();
    await settle();
    assert.ok(waiting[0].started);
    assert.ok(budget.used < 5 * MiB, "a call that started no longer counts");
    waiting[1].signal.abort(new Error("cancelled by the client"));
    await assert.rejects(waiting[1].done!, /cancelled by the client/);
    assert.ok(budget.used < 1024, "nor one cancelled while it waited");
    void small;
  });

  test("strings count by their UTF-8 bytes, at least what they hold in memory", async () => {
    const budget = new QueueBudget(64 * MiB);
    const queue = queueOf(1, 50, budget);
    new TestCall("holder", false).enter(queue);
    new TestCall("euro", false, { arguments: { text: "€".repeat(MiB) } }).enter(queue);
    await settle();
    assert.ok(budget.used >= 3 * MiB, `a million two-byte characters count 3 MiB: ${budget.used}`);
  });

  test("the queue's length bound still holds, before the budget is asked", async () => {
    const queue = queueOf(1, 50, new QueueBudget(64 * MiB), 1);
    new TestCall("holder", false).enter(queue);
    new TestCall("first", false).enter(queue);
    const refused = new TestCall("second", false).enter(queue);
    await assert.rejects(refused.done!, QueueFullError);
  });
});

describe("a server's calls in turns (once it asked without naming the call that asks)", () => {
  /** A call of `turn`, the queue's own turn key: whose client it is (hub/sessions/child-requests.ts turnOf). */
  const inTurn = (name: string, turn: string) => Object.assign(new TestCall(name, false), { turn });

  test("before the server asked unnamed, calls of every turn run together; after, one turn at a time, in order of arrival", async () => {
    const queue = queueOf(8);
    const order: string[] = [];
    const early = [inTurn("a1", "a"), inTurn("b1", "b")].map((c) => c.enter(queue, order));
    await settle();
    assert.deepEqual(order, ["a1", "b1"]);
    await Promise.all(early.map((c) => c.end()));

    queue.takeTurns();
    const a2 = inTurn("a2", "a").enter(queue, order);
    const b2 = inTurn("b2", "b").enter(queue, order);
    // a's next call came after b's: it waits for b's turn, so a client calling on cannot keep the turn
    const a3 = inTurn("a3", "a").enter(queue, order);
    await settle();
    assert.deepEqual(order.slice(2), ["a2"]);
    assert.match(b2.heard[0], /the 'terminal' server asks its clients things without naming the call that asks/);
    await a2.end();
    await settle();
    assert.deepEqual(order.slice(2), ["a2", "b2"]);
    await b2.end();
    await settle();
    assert.deepEqual(order.slice(2), ["a2", "b2", "a3"]);
    await a3.end();
  });

  test("calls of one turn run together; a call without a turn (the hub's own) is never held", async () => {
    const queue = queueOf(8);
    queue.takeTurns();
    const order: string[] = [];
    const calls = [inTurn("a1", "a"), inTurn("a2", "a"), new TestCall("own", false), inTurn("b1", "b")].map((c) => c.enter(queue, order));
    await settle();
    assert.deepEqual(order, ["a1", "a2", "own"]);
    await Promise.all(calls.slice(0, 3).map((c) => c.end()));
    await settle();
    assert.deepEqual(order, ["a1", "a2", "own", "b1"]);
    await calls[3].end();
  });

  test("a call waits for its turn at most the server's timeout, then is refused saying why; one cancelled leaves at once", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const budget = new QueueBudget(64 * MiB);
    const queue = new CallQueue("terminal", 8, 100, { taskSlotsPercent: 50, budget }, 1000);
    queue.takeTurns();
    const holder = inTurn("hung", "a").enter(queue);
    const waiting = inTurn("b1", "b").enter(queue);
    const cancelled = inTurn("c1", "c").enter(queue);
    await settle();
    assert.deepEqual(queue.stats, { running: 1, queued: 2 });
    cancelled.signal.abort(new Error("the client cancelled"));
    await assert.rejects(cancelled.done!, /the client cancelled/);
    t.mock.timers.tick(999);
    await settle();
    assert.equal(queue.stats.queued, 1);
    t.mock.timers.tick(1);
    await assert.rejects(waiting.done!, (err: Error) => err instanceof TurnWaitError && /it waited 1 s for another client's calls/.test(err.message));
    assert.deepEqual(queue.stats, { running: 1, queued: 0 });
    assert.equal(budget.used, 0, "what the refused and the cancelled call held is released");
    await holder.end();
  });
});

describe("what the queue keeps of a call (queuedCall)", () => {
  const options = () => {
    let detached = false;
    const heard: string[] = [];
    return {
      signal: new CallCancellation(),
      detached: () => detached,
      onqueue: (status: string) => void heard.push(status),
      turn: "session:a",
      becomeTask: () => (detached = true),
      heard,
    };
  };

  test("the record asks its caller whether it is a task while the call is the queue's, and lets go of everything once it ran", async () => {
    const queue = queueOf(2);
    const given = options();
    const call = queuedCall({ arguments: { text: "held" } }, given);
    let duringRun: boolean | undefined;
    await queue.run(call, async () => {
      given.becomeTask();
      duringRun = call.isTask();
    });
    assert.equal(duringRun, true, "a call that became a task on its way counts as one");
    assert.equal(call.isTask(), false, "after the call, the record no longer reaches its caller's options");
    assert.deepEqual([call.params, call.signal, call.onqueue], [undefined, undefined, undefined]);
    assert.equal(call.turn, "session:a", "a plain string: nothing of the call's graph");
  });

  test("a call refused by a full queue, or failing, is let go of too", async () => {
    const queue = queueOf(1, 50, new QueueBudget(64 * MiB), 0);
    const blocker = new TestCall("blocker", false).enter(queue);
    await settle();
    const refused = queuedCall({ arguments: {} }, options());
    await assert.rejects(
      queue.run(refused, async () => undefined),
      QueueFullError,
    );
    assert.equal(refused.params, undefined);
    await blocker.end();
    const failing = queuedCall({ arguments: {} }, options());
    await assert.rejects(
      queue.run(failing, async () => {
        throw new Error("the child failed");
      }),
      /the child failed/,
    );
    assert.deepEqual([failing.params, failing.signal], [undefined, undefined]);
  });
});
