// Many replicas behind one router: session ids that name their replica, and a graceful drain.
// With AGENTBOX_REPLICA=r2 every id this hub mints reads `r2.<uuid>`, so nginx (deploy/nginx)
// sends each request to the replica holding its session by one rule and keeps no state.
import { randomUUID } from "node:crypto";
import { EventEmitter, once, setMaxListeners } from "node:events";
import type { HubServices } from "./services.js";
import { jsonRpcError } from "../protocol/jsonrpc.js";
import type { Task, TaskStore } from "../tasks/store.js";
import { TASK_METHODS } from "../tasks/answer.js";

/** A new session id: `<replica>.<uuid>` when the hub has a replica name, a bare uuid otherwise. */
export function newSessionId(replica: string | undefined): string {
  return replica ? `${replica}.${randomUUID()}` : randomUUID();
}

/** Tool calls running now, across every session. */
export function callsInFlight(hub: HubServices): number {
  return hub.sessions.all().reduce((n, s) => n + s.inflight.size, 0);
}

/**
 * Requests whose reply is not made yet (a stream's counts as made once its head is): a call's
 * result is written after the call ends, and a drain that stopped the hub in between would cut
 * it (a 2026 retry answering input_required would get no reply at all).
 */
class RepliesInFlight {
  size = 0;
  private readonly ends = new EventEmitter();

  track<T>(reply: Promise<T>): Promise<T> {
    this.size++;
    return reply.finally(() => {
      this.size--;
      this.ends.emit("end");
    });
  }

  async nextEnd(signal: AbortSignal): Promise<void> {
    await once(this.ends, "end", { signal }).catch(() => undefined);
  }
}

const replies = new WeakMap<HubServices, RepliesInFlight>();

/** The replies this hub is making now (app.ts counts every request through them). */
export function repliesOf(hub: HubServices): RepliesInFlight {
  let tracked = replies.get(hub);
  if (!tracked) replies.set(hub, (tracked = new RepliesInFlight()));
  return tracked;
}

/**
 * The reply to a request that would open a session on a draining replica: 503, so a router
 * (nginx's proxy_next_upstream http_503) retries it on another replica, and a JSON-RPC error a
 * client reads if it reached this one directly.
 */
export function drainingRefusal(hub: HubServices): Response {
  const name = hub.config.replica ? `Replica '${hub.config.replica}'` : "This agentbox";
  return jsonRpcError(
    503,
    -32000,
    `${name} is draining (shutting down) and takes no new sessions or calls; retry, and the router will send you to another replica.`,
    {
      headers: { "retry-after": "1" },
    },
  );
}

/** Whether an id minted as `<replica>.…` (a context handle, a task id) names this replica: one naming another holds nothing here. */
const namesThisReplica = (hub: HubServices, id: unknown): boolean => typeof id === "string" && (!hub.config.replica || id.startsWith(`${hub.config.replica}.`));

/**
 * Whether a 2026-07-28 request is one a draining replica refuses: one that starts something. A
 * retry answering input_required (its requestState) reaches a call only this process holds, a
 * request naming a context handle (Mcp-Param-Context) a context that lives here, and tasks/get,
 * tasks/update or tasks/cancel of one of this replica's tasks a task that runs here: all are served
 * until the drain ends, as the requests of 2025 sessions already here are. Anything else (a new
 * call, one that would become a task included, a list, a listen stream) can be served by any
 * replica, so it gets the refusal the router retries elsewhere.
 */
export function startsSomethingNew(hub: HubServices, req: Request, body: unknown): boolean {
  const messages = (Array.isArray(body) ? body : [body]) as Array<{ method?: unknown; params?: { requestState?: unknown; taskId?: unknown } } | null>;
  const retries = messages.every((m) => typeof m?.params?.requestState === "string");
  const ownTasks = messages.every((m) => TASK_METHODS.has(String(m?.method)) && namesThisReplica(hub, m?.params?.taskId));
  const handle = req.headers.get("mcp-param-context");
  return !retries && !ownTasks && !(handle !== null && namesThisReplica(hub, handle));
}

/**
 * The last part of a drain, kept for clients to read why their tasks failed: a task still running
 * at the deadline is reported failed, and its client's next tasks/get (pinned to this replica by
 * the task id) must still find this process answering, not a refused connection.
 */
const reportWindow = (ms: number) => Math.min(2_000, Math.floor(ms / 5));

function shutDown(hub: HubServices): string {
  const name = hub.config.replica ? `Replica '${hub.config.replica}'` : "This agentbox";
  return (
    `${name} shut down (it was drained: a rolling update, a scale-down or a stop) before this task ended; its call was cancelled ` +
    `and its work is lost. Start the call again (the same tools/call)${hub.config.replica ? ": the router sends it to a live replica" : ""}.`
  );
}

/**
 * The task outcomes a draining replica owes its clients: every task that runs at some point of the
 * drain, until a tasks/get has shown how it ended (or its own client cancelled it). The process
 * exiting right after a task completed would lose a result the client was about to poll for.
 */
class OwedOutcomes {
  private readonly owed = new Set<Task>();

  constructor(private readonly tasks: TaskStore) {
    this.count();
  }

  /** Call it at every turn of the wait: the tasks running now are added before they can end unseen. */
  count(): number {
    for (const task of this.tasks.running()) this.owed.add(task);
    for (const task of this.owed) if (task.outcomeRead || task.status === "cancelled") this.owed.delete(task);
    return this.owed.size;
  }

  /** Resolves when a task's call ends (a poll that reads an outcome is a reply, which the replies in flight report). */
  nextEnd(signal: AbortSignal): Promise<void> {
    return this.tasks.nextEnd(signal);
  }
}

/**
 * Stop taking new sessions and work, and wait, at most `ms`, for the calls in flight and the tasks
 * to finish, their outcomes to be read and the replies to be made. Tasks still running near the
 * end are failed, saying the replica shut down (their calls cancelled), and the rest of the drain
 * waits for their polls to read that. Resolves with the number of calls still running when the
 * wait ended (0 when all finished).
 */
export async function drain(hub: HubServices, ms: number): Promise<number> {
  hub.draining = true;
  const owed = new OwedOutcomes(hub.tasks);
  const window = reportWindow(ms);
  await untilIdle(hub, owed, ms - window);
  const cut = hub.tasks.running();
  for (const task of cut) task.fail(shutDown(hub));
  if (cut.length) hub.log.info("tasks failed at the drain deadline", { tasks: cut.length });
  await untilIdle(hub, owed, window);
  return callsInFlight(hub);
}

/** Waits, at most `ms`, until no call is in flight, no reply is being made and no task's outcome is owed. */
async function untilIdle(hub: HubServices, owed: OwedOutcomes, ms: number): Promise<void> {
  const deadline = new AbortController();
  setMaxListeners(0, deadline.signal); // one wait per busy session
  const timer = setTimeout(() => deadline.abort(), ms);
  const making = repliesOf(hub);
  try {
    // sessions already here may start calls while draining: count again each time one ends
    for (;;) {
      const owing = owed.count(); // first, so it sees every turn
      if ((owing === 0 && callsInFlight(hub) === 0 && making.size === 0) || deadline.signal.aborted) break;
      const busy = hub.sessions.all().filter((s) => s.inflight.size > 0);
      const ends = [making.nextEnd(deadline.signal), ...busy.map((s) => s.inflight.nextEnd(deadline.signal))];
      await Promise.race([...ends, owed.nextEnd(deadline.signal)]);
    }
  } finally {
    clearTimeout(timer);
    deadline.abort(); // releases the waits on the sessions whose calls did not end
  }
}
