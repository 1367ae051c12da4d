// Bounded concurrency per child (each tenant has its own): calls beyond maxConcurrency wait in a
// bounded queue instead of piling onto the child; a full queue is refused at once. So that one
// client of a tenant cannot hold up the tenant's others:
//  - calls run as tasks, which nobody waits on, may hold only a share of the slots
//    (AGENTBOX_TASK_SLOTS_PERCENT): the rest are always there for calls a client waits on, and a
//    task waiting for the tasks' share lets the calls queued behind it by;
//  - what waiting calls hold counts against the tenant's budget (./queue-budget.ts).
// A call that must wait is told why; a task is told too when it starts, or its status would keep
// saying it waits (an ordinary call's next news is its child's progress, which MCP wants to
// only increase, so it hears nothing more from here).
// A server seen asking a client something without naming the call it asks for takes its calls in
// turns (takeTurns): only calls of one turn (one client, hub/sessions/child-requests.ts says whose)
// run at once, so whatever it asks has one client to go to. Turns are taken in order of arrival,
// and a call waits for its turn at most `turnWaitMs`: a hung call of one client holds another's
// for no longer than that (its own timeouts end it sooner or later).
import type { Cancellation } from "../protocol/cancellation.js";
import { CallTable } from "../protocol/call-table.js";
import { systemClock, type Clock } from "../protocol/clock.js";
import type { QueueBudget } from "./queue-budget.js";

export class QueueFullError extends Error {}

/** A call that waited its longest for another client's calls to the server to end. */
export class TurnWaitError extends QueueFullError {}

/** What the queue knows of a call. */
export interface QueuedCall {
  /** What the call holds while it waits, counted against its tenant's budget. */
  params: unknown;
  /** Whether it runs as a task now: asked whenever slots are counted, since a call may become a task on its way. */
  isTask(): boolean;
  signal?: Cancellation;
  /** Hears why the call waits for a slot, and, for a task, that it got one. */
  onqueue?(status: string): void;
  /** Whose turn it runs in when the server takes turns: calls of one turn may run together. */
  turn?: string;
  /** The queue is done with the call (it ran, or left the queue): what the record holds may go. */
  ended?(): void;
}

/**
 * The queue's record of a call, holding only what the queue reads, and letting go of it once the
 * queue is done with the call. A record that still led to the caller's options after its call had
 * ended (through isTask, and from there to the call's channel, HTTP request and reply, or a 2026
 * call's rounds) kept every call's objects alive through young-generation collections whenever
 * anything still held the record: the retired tables of the Set the running calls once lived in
 * did (../protocol/call-table.ts), and a fifth of the bytes a call allocated was promoted to the
 * old generation (--trace-gc-nvp, bench/README.md). Letting go keeps what any such holder can reach
 * small.
 */
export function queuedCall(params: unknown, options: Pick<QueuedCall, "signal" | "onqueue" | "turn"> & { detached?: () => boolean }): QueuedCall {
  let detached = options.detached;
  const call: QueuedCall = {
    params,
    signal: options.signal,
    onqueue: options.onqueue,
    turn: options.turn,
    isTask: () => detached?.() === true,
    ended: () => {
      detached = undefined;
      call.params = call.signal = call.onqueue = undefined;
    },
  };
  return call;
}

export interface QueueSettings {
  /** The percentage of each server's slots one tenant's tasks may hold at once (AGENTBOX_TASK_SLOTS_PERCENT). */
  taskSlotsPercent: number;
  /** The tenant's budget for calls waiting for a slot, shared by all its servers. */
  budget: QueueBudget;
}

interface Waiting {
  call: QueuedCall;
  /** Its key among the running calls once it runs. */
  key: number;
  start(): void;
}

export class CallQueue {
  private readonly running = new CallTable<QueuedCall>();
  private runs = 0;
  private readonly waiting: Waiting[] = [];
  /** The slots tasks may hold: at least one, or a task could never run. */
  private readonly taskSlots: number;
  /** Set once the server asked without naming its call: from then on its calls run in turns. */
  private turns = false;

  constructor(
    private readonly server: string,
    private readonly maxConcurrency: number,
    private readonly maxQueue: number,
    private readonly settings: QueueSettings,
    /** How long a call waits for its turn before it is refused (the server's timeoutMs). */
    private readonly turnWaitMs = 300_000,
    private readonly clock: Clock = systemClock,
  ) {
    this.taskSlots = Math.min(maxConcurrency, Math.max(1, Math.floor((maxConcurrency * settings.taskSlotsPercent) / 100)));
  }

  get stats() {
    return { running: this.running.size, queued: this.waiting.length };
  }

  get takesTurns(): boolean {
    return this.turns;
  }

  /** From now on only one turn's calls run at once (the calls running now finish as they are). */
  takeTurns(): void {
    this.turns = true;
  }

  async run<T>(call: QueuedCall, work: () => Promise<T>): Promise<T> {
    const key = ++this.runs;
    try {
      // no waiting call may take a slot free now (startWaiting saw to that): the queue's order stands
      if (this.blockedBy(call, undefined, this.waiting.length) === undefined) this.running.set(key, call);
      else await this.wait(call, key);
      try {
        return await work();
      } finally {
        this.running.delete(key);
        this.startWaiting();
      }
    } finally {
      call.ended?.();
    }
  }

  /**
   * Why `call` cannot take a slot now, or undefined when it can (`tasks`: the tasks running, when
   * already counted; `ahead`: how many waiting calls are ahead of it).
   */
  private blockedBy(call: QueuedCall, tasks: number | undefined, ahead: number): string | undefined {
    const max = this.maxConcurrency;
    if (this.turns && call.turn !== undefined) {
      // another client's call running, or waiting ahead of this one (turns come in order: a client calling on cannot keep the turn)
      const otherTurn = (other: QueuedCall) => other.turn !== undefined && other.turn !== call.turn;
      if ([...this.running].some(otherTurn) || this.waiting.slice(0, ahead).some((w) => otherTurn(w.call))) {
        return `the '${this.server}' server asks its clients things without naming the call that asks, so the hub runs one client's calls to it at a time, and another client's are running or due first`;
      }
    }
    if (this.running.size >= max) {
      const busy = max === 1 ? `the '${this.server}' server's one slot is busy` : `all ${max} of the '${this.server}' server's slots are busy`;
      return `${busy} with this tenant's calls (its maxConcurrency)`;
    }
    if (!call.isTask()) return undefined;
    tasks ??= this.tasksRunning();
    if (tasks < this.taskSlots) return undefined;
    return (
      `this tenant's tasks hold ${tasks} of the '${this.server}' server's ${max} slots, the most tasks may ` +
      `(AGENTBOX_TASK_SLOTS_PERCENT, ${this.settings.taskSlotsPercent}%); the rest are kept for calls that are not tasks`
    );
  }

  private tasksRunning(): number {
    let tasks = 0;
    for (const call of this.running) if (call.isTask()) tasks++;
    return tasks;
  }

  private wait(call: QueuedCall, key: number): Promise<void> {
    const { signal } = call;
    if (signal?.aborted) throw signal.reason;
    const blockedBy = this.blockedBy(call, undefined, this.waiting.length)!;
    if (this.waiting.length >= this.maxQueue) {
      throw new QueueFullError(`${this.running.size} calls running and ${this.waiting.length} queued (limit ${this.maxQueue})`);
    }
    const bytes = this.settings.budget.reserve(call.params, blockedBy);
    const waitingSince = Date.now();
    return new Promise<void>((resolve, reject) => {
      // a call in a server's turns waits for its turn no longer than the server's timeout
      const turnWait = this.turns && call.turn !== undefined ? this.clock.after(this.turnWaitMs, () => giveUp()) : undefined;
      const entry: Waiting = {
        call,
        key,
        start: () => {
          turnWait?.cancel();
          signal?.removeEventListener("abort", onAbort);
          this.settings.budget.release(bytes);
          if (call.isTask())
            call.onqueue?.(`Running: it waited ${Math.round((Date.now() - waitingSince) / 1000)} s for a slot of the '${this.server}' server.`);
          resolve();
        },
      };
      const leave = (why: unknown) => {
        const at = this.waiting.indexOf(entry);
        if (at < 0) return;
        turnWait?.cancel();
        signal?.removeEventListener("abort", onAbort);
        this.waiting.splice(at, 1);
        this.settings.budget.release(bytes);
        reject(why);
        // a call that left may have been the turn the calls behind it waited for
        this.startWaiting();
      };
      const onAbort = () => leave(signal?.reason ?? new Error("cancelled while queued"));
      const giveUp = () =>
        leave(
          new TurnWaitError(
            `it waited ${Math.round(this.turnWaitMs / 1000)} s for another client's calls to the '${this.server}' server to end: that server asks ` +
              "its clients things without naming the call that asks, so the hub runs one client's calls to it at a time",
          ),
        );
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(entry);
      const others = this.waiting.length - 1;
      call.onqueue?.(`Waiting for a slot: ${blockedBy}${others ? `; ${others} other call(s) wait too` : ""}. It starts when one is free.`);
    });
  }

  /** Starts waiting calls in order while there are slots they may take: a task past the tasks' share stays, and lets the calls behind it by. */
  private startWaiting(): void {
    // (most calls end with nobody waiting: counting the tasks running then would be wasted)
    if (this.waiting.length === 0) return;
    let tasks = this.tasksRunning();
    for (let i = 0; i < this.waiting.length && this.running.size < this.maxConcurrency;) {
      const { call, key, start } = this.waiting[i];
      if (this.blockedBy(call, tasks, i) !== undefined) {
        i++;
        continue;
      }
      if (call.isTask()) tasks++;
      this.waiting.splice(i, 1);
      this.running.set(key, call);
      start();
    }
  }
}
