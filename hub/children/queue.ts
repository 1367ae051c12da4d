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
import type { Cancellation } from "../protocol/cancellation.js";
import type { QueueBudget } from "./queue-budget.js";

export class QueueFullError extends Error {}

/** What the queue knows of a call. */
export interface QueuedCall {
  /** What the call holds while it waits, counted against its tenant's budget. */
  params: unknown;
  /** Whether it runs as a task now: asked whenever slots are counted, since a call may become a task on its way. */
  isTask(): boolean;
  signal?: Cancellation;
  /** Hears why the call waits for a slot, and, for a task, that it got one. */
  onqueue?(status: string): void;
}

export interface QueueSettings {
  /** The percentage of each server's slots one tenant's tasks may hold at once (AGENTBOX_TASK_SLOTS_PERCENT). */
  taskSlotsPercent: number;
  /** The tenant's budget for calls waiting for a slot, shared by all its servers. */
  budget: QueueBudget;
}

interface Waiting {
  call: QueuedCall;
  start(): void;
}

export class CallQueue {
  private readonly running = new Set<QueuedCall>();
  private readonly waiting: Waiting[] = [];
  /** The slots tasks may hold: at least one, or a task could never run. */
  private readonly taskSlots: number;

  constructor(
    private readonly server: string,
    private readonly maxConcurrency: number,
    private readonly maxQueue: number,
    private readonly settings: QueueSettings,
  ) {
    this.taskSlots = Math.min(maxConcurrency, Math.max(1, Math.floor((maxConcurrency * settings.taskSlotsPercent) / 100)));
  }

  get stats() {
    return { running: this.running.size, queued: this.waiting.length };
  }

  async run<T>(call: QueuedCall, work: () => Promise<T>): Promise<T> {
    // no waiting call may take a slot free now (startWaiting saw to that): the queue's order stands
    if (this.blockedBy(call) === undefined) this.running.add(call);
    else await this.wait(call);
    try {
      return await work();
    } finally {
      this.running.delete(call);
      this.startWaiting();
    }
  }

  /** Why `call` cannot take a slot now, or undefined when it can (`tasks`: the tasks running, when already counted). */
  private blockedBy(call: QueuedCall, tasks?: number): string | undefined {
    const max = this.maxConcurrency;
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

  private wait(call: QueuedCall): Promise<void> {
    const { signal } = call;
    if (signal?.aborted) throw signal.reason;
    const blockedBy = this.blockedBy(call)!;
    if (this.waiting.length >= this.maxQueue) {
      throw new QueueFullError(`${this.running.size} calls running and ${this.waiting.length} queued (limit ${this.maxQueue})`);
    }
    const bytes = this.settings.budget.reserve(call.params, blockedBy);
    const waitingSince = Date.now();
    return new Promise<void>((resolve, reject) => {
      const entry: Waiting = {
        call,
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          this.settings.budget.release(bytes);
          if (call.isTask())
            call.onqueue?.(`Running: it waited ${Math.round((Date.now() - waitingSince) / 1000)} s for a slot of the '${this.server}' server.`);
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(entry);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        this.settings.budget.release(bytes);
        reject(signal?.reason ?? new Error("cancelled while queued"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(entry);
      const others = this.waiting.length - 1;
      call.onqueue?.(`Waiting for a slot: ${blockedBy}${others ? `; ${others} other call(s) wait too` : ""}. It starts when one is free.`);
    });
  }

  /** Starts waiting calls in order while there are slots they may take: a task past the tasks' share stays, and lets the calls behind it by. */
  private startWaiting(): void {
    let tasks = this.tasksRunning();
    for (let i = 0; i < this.waiting.length && this.running.size < this.maxConcurrency;) {
      const { call, start } = this.waiting[i];
      if (this.blockedBy(call, tasks) !== undefined) {
        i++;
        continue;
      }
      if (call.isTask()) tasks++;
      this.waiting.splice(i, 1);
      this.running.add(call);
      start();
    }
  }
}
