// A tools/call of a child's tool that the child runs only as a task (it lists the tool with
// execution.taskSupport "required", MCP 2025-11-25): the child refuses the plain call, so the hub
// sends it as a task (params.task) and follows that task to its end with tasks/result, which the
// specification makes wait until the task is terminal and answer with the tool's own result (or
// its JSON-RPC error). Whichever way the hub's client called (a plain call, a 2025 task of the
// hub's, a 2026 call or task), it is one call to the hub: it holds its server's slot, hears the
// child's progress and questions, and is cancelled, until the child's task ends.
//
// A tool the child lists as "optional" is called plainly: the child runs a plain call the same
// way, and the hub already holds a long call as a task of its own where its client asked for one.
//
// The SDK Client's own task calling (client.experimental.tasks.callToolStream) is not used: the
// hub's calls go beside that Client on the child's transport (./calls.ts), with the hub's timeouts,
// size limit and progress relay, which this keeps by sending its two requests the same way.
import { CreateTaskResultSchema, RELATED_TASK_META_KEY, type Result, type ServerCapabilities, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { CallOptions, ChildCalls } from "./calls.js";

/**
 * Whether the child runs this tools/call only as a task: it lists the tool so (execution.taskSupport
 * "required") and declares tasks for tools/call, without which the specification forbids calling
 * any of its tools as a task, whatever they list (such a child runs the plain call itself).
 */
export function runsOnlyAsTask(tools: readonly Tool[], capabilities: ServerCapabilities, params: Record<string, unknown> | undefined): boolean {
  if (!capabilities.tasks?.requests?.tools?.call) return false;
  return tools.find((t) => t.name === params?.name)?.execution?.taskSupport === "required";
}

let nextToken = 1;

/**
 * The call sent as a task, answered with the task's outcome. `ttlMs`: how long the child is asked to
 * keep the task (the longest the hub waits on a call). The child's task is cancelled (tasks/cancel)
 * when the hub stops waiting on it: its client cancelled, or the call timed out.
 */
export async function callAsTask(calls: ChildCalls, params: Record<string, unknown>, options: CallOptions, ttlMs: number): Promise<Result> {
  // the child reports the task's progress under its tools/call's token, heard by tasks/result until the end
  const progress = options.onprogress ? { progressToken: `t${nextToken++}` } : {};
  // from now on what the child asks is this call's only when it names the task (hub/sessions/child-requests.ts)
  options.onChildTask?.(undefined);
  const answer = await calls.request("tools/call", { ...params, task: { ttl: ttlMs } }, { ...options, ...progress });
  const created = CreateTaskResultSchema.safeParse(answer);
  // a child that ran it at once after all answered with the result itself
  if (!created.success) return answer;
  const { taskId } = created.data.task;
  options.onChildTask?.(taskId);
  try {
    const result = await calls.request("tasks/result", { taskId }, { ...options, ...progress });
    return withoutRelatedTask(result);
  } catch (error) {
    // nobody waits on the task any more: the child stops it (one that already ended answers an error, which changes nothing)
    void calls.request("tasks/cancel", { taskId }).catch(() => undefined);
    throw error;
  }
}

/** The tool's result as the hub's client gets it: the child's task is the hub's business, never named to the client. */
function withoutRelatedTask(result: Result): Result {
  const meta = result._meta;
  if (!meta || !(RELATED_TASK_META_KEY in meta)) return result;
  const { [RELATED_TASK_META_KEY]: _task, ...rest } = meta;
  return Object.keys(rest).length > 0 ? { ...result, _meta: rest } : (({ _meta: _m, ...plain }) => plain)(result);
}
