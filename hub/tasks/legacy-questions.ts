// tasks/result for a 2025-era session (2025-11-25): it waits until the task ends and answers with
// what the call itself would have answered (the tool's result, or its JSON-RPC error), tagged with
// io.modelcontextprotocol/related-task. While it waits, a question the task's child asks (the task
// is input_required) is sent to this client on the tasks/result's own stream, tagged the same way,
// and its answer goes back to the child (Task.update), whichever session of the tenant started the
// task: the session that asks is the one whose client is there to answer. One tasks/result at a
// time carries a task's questions, so no question is asked twice; a failed answer frees them for the next.
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode, RELATED_TASK_META_KEY, ResultSchema, type Result, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../servers/lib/log.js";
import { protocolError } from "../protocol/jsonrpc.js";
import { CAPABILITY_FOR } from "../sessions/child-requests.js";
import type { ClientSession } from "../sessions/registry.js";
import type { Task } from "./store.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Questions = NonNullable<Task["inputRequests"]>;

/** What tasks/result answers for a task that ended: the call's own answer. */
function outcomeOf(task: Task): Result {
  if (task.status === "completed") {
    const result = task.result as Result;
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId: task.id } } };
  }
  if (task.status === "failed" && task.error) throw protocolError(task.error.code, task.error.message, task.error.data);
  throw protocolError(ErrorCode.InvalidRequest, `Task ${task.id} was cancelled (tasks/cancel) before it ended, so it has no result.`);
}

/** A child's question as this client is asked it: tagged with its task, in the 2025-11-25 shape. */
function question(asked: Questions[string], taskId: string): ServerRequest {
  const params: Record<string, unknown> = { ...(asked.params as Record<string, unknown> | undefined) };
  // the questions are kept in the 2026 shape, which has no elicitationId for a URL-mode elicitation; a 2025 client needs one
  if (asked.method === "elicitation/create" && params.mode === "url" && typeof params.elicitationId !== "string") params.elicitationId = randomUUID();
  params._meta = { ...(params._meta as Record<string, unknown> | undefined), [RELATED_TASK_META_KEY]: { taskId } };
  return { method: asked.method, params } as ServerRequest;
}

export class TaskQuestions {
  /** Tasks whose questions a tasks/result is asking its client now. */
  private readonly asking = new Set<Task>();
  /** Says, by task id, that a task's questions may be asked again (their asker's client failed to answer). */
  private readonly freed = new EventEmitter().setMaxListeners(0);

  /** tasks/result: the task's outcome, once it has one; its questions meanwhile go to this session's client. */
  async result(task: Task, session: ClientSession, extra: Extra): Promise<Result> {
    for (;;) {
      if (task.terminal) return outcomeOf(task);
      if (task.status === "input_required" && task.inputRequests && !this.asking.has(task)) await this.ask(task, task.inputRequests, session, extra);
      else await this.change(task, extra.signal);
    }
  }

  private async ask(task: Task, questions: Questions, session: ClientSession, extra: Extra): Promise<void> {
    for (const { method } of Object.values(questions)) {
      const needed = CAPABILITY_FOR[method];
      if (needed && !session.clientCapabilities[needed])
        throw protocolError(
          ErrorCode.InvalidRequest,
          `Task ${task.id} waits for an answer to ${method}, which needs the ${needed} capability; this session's client did not declare it ` +
            "at initialize. Call tasks/result from a client that did, or cancel the task with tasks/cancel.",
        );
    }
    this.asking.add(task);
    try {
      const asked = Object.entries(questions).map(async ([key, q]) => [
        key,
        await extra.sendRequest(question(q, task.id), ResultSchema, { signal: extra.signal }),
      ]);
      const answers = Object.fromEntries(await Promise.all(asked));
      // cancelled meanwhile, the task waits on nothing: only the questions it still waits on are answered
      if (task.inputRequests === questions) task.update(answers);
    } catch (error) {
      if (extra.signal.aborted) throw error;
      throw protocolError(
        ErrorCode.InternalError,
        `The client's answer to a question of task ${task.id} failed (${errorMessage(error)}); the task still waits in input_required: ` +
          "call tasks/result again to be asked again, or cancel it with tasks/cancel.",
      );
    } finally {
      this.asking.delete(task);
      this.freed.emit(task.id);
    }
  }

  /** Settles at the task's next change of status, or when its questions are free again; rejects when the request is cancelled. */
  private change(task: Task, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const settle = (outcome: () => void) => () => {
        unwatch();
        this.freed.off(task.id, changed);
        signal.removeEventListener("abort", aborted);
        outcome();
      };
      const changed = settle(resolve);
      const aborted = settle(() => reject(signal.reason));
      const unwatch = task.watch(changed);
      this.freed.on(task.id, changed);
      if (signal.aborted) aborted();
      else signal.addEventListener("abort", aborted, { once: true });
    });
  }
}
