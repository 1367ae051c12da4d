// The 2026-07-28 requests of the tasks extension, answered before the SDK sees them (it answers
// tasks/* on a 2026 connection with -32601): tasks/get, tasks/update, tasks/cancel, and a
// tools/call that becomes a task. The extension is declared per request, in the envelope's client
// capabilities; a request that did not declare it gets -32021 naming it, for tasks/* and for a
// tool that runs only as a task, and runs as it always did otherwise.
//
// When a call becomes a task: a tool that may run as a task ("optional") is the hub's choice to
// detach, so it becomes one at once and whatever it asks goes to the task (input_required,
// tasks/update). A tool that runs only as a task ("required") is called the way a plain call is
// first, and becomes a task on the round where it asks nothing more: the extension says a server
// that combines input_required rounds with task creation SHOULD settle them on the request before
// it answers with the task, so what such a tool asks at once is asked on the request itself.
import { setTimeout as sleep } from "node:timers/promises";
import { CLIENT_CAPABILITIES_META_KEY, ProtocolErrorCode, SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";
import { ErrorCode, type Result } from "@modelcontextprotocol/sdk/types.js";
import { isPlainObject, jsonRpcError, jsonRpcResult, RATE_LIMITED_CODE } from "../protocol/jsonrpc.js";
import { checkMethodLimit, serverInfoOf, type HandlerCtx } from "../sessions/handlers.js";
import { HUB } from "../catalog/selection.js";
import type { Params } from "../sessions/forward.js";
import { startCall, type PendingCall } from "../sessions/pending-call.js";
import { TASKS_EXTENSION } from "../protocol/extensions.js";
import { TASK_PROGRESS_TOKEN, type TaskStore } from "./store.js";
import { traceRequest } from "../observability/tracing.js";

type TaskSupport = "forbidden" | "optional" | "required";
/** The tasks extension's requests about a task that already exists (they start nothing: a draining replica serves them, hub/http/replica.ts). */
export const TASK_METHODS: ReadonlySet<string> = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);

/** SEP-2243's HeaderMismatch: a standard header that disagrees with the body. */
const HEADER_MISMATCH = -32020;

/**
 * How long a round of a tool that runs only as a task waits for the tool to ask something (or
 * end) before the call becomes a task: a question asked at once is the request's own round, one
 * asked later, while the tool works, is the task's.
 */
const ASK_WINDOW_MS = 1000;

/**
 * How a call's input_required rounds end in a task (the tasks extension's MRTR-then-task
 * composition, served by hub/modern/server.ts): each round waits until the call asks (another round, answered by a retry) or the
 * deadline passes or the call ends; then the tasks room takes the call in flight and the round
 * answers with the task it made (CreateTaskResult), so what the tool asks at once is settled on
 * the request itself and what it asks while it works goes to the task (tasks/update).
 */
export interface TaskEscalation {
  /** Settles when a round has waited long enough for the call's questions. */
  deadline(): Promise<void>;
  /** The call, made a task from here on: the round's answer. Throws (the call abandoned) when no task can be made. */
  adopt(call: PendingCall): Result;
}

interface JsonRpcRequest {
  id: string | number;
  method: string;
  params: Params & { _meta?: Record<string, unknown> };
}

function asRequest(body: unknown): JsonRpcRequest | undefined {
  if (!isPlainObject(body) || typeof body.method !== "string" || !(typeof body.id === "string" || typeof body.id === "number")) return undefined;
  return { id: body.id, method: body.method, params: isPlainObject(body.params) ? (body.params as JsonRpcRequest["params"]) : {} };
}

/** Whether the request's envelope declares the tasks extension among its client capabilities. */
function declaresTasks(request: JsonRpcRequest): boolean {
  const capabilities = request.params._meta?.[CLIENT_CAPABILITIES_META_KEY];
  return isPlainObject(capabilities) && isPlainObject(capabilities.extensions) && capabilities.extensions[TASKS_EXTENSION] !== undefined;
}

/** How a tool may run as a task: as its server declares in its listing (`execution.taskSupport`); undefined for a tool this path leaves alone. */
export function taskSupportOf(ctx: Pick<HandlerCtx, "view" | "session">, name: string): TaskSupport | undefined {
  // a tool outside the request's selection, an unknown one, and the hub's own are answered the usual way (refused, or at once)
  if (ctx.view.refuseCall(name) || ctx.view.serverOf(name) === HUB) return undefined;
  const support = (ctx.session.tenant.catalog.tool(name)?.listed as { execution?: { taskSupport?: unknown } } | undefined)?.execution?.taskSupport;
  return support === "optional" || support === "required" ? support : undefined;
}

const reply = (ctx: HandlerCtx, id: JsonRpcRequest["id"], result: Record<string, unknown>) =>
  jsonRpcResult(id, { ...result, _meta: { [SERVER_INFO_META_KEY]: serverInfoOf(ctx.hub) } });

/** -32021: in-band, yet HTTP 400, as the revision answers a missing capability. */
function missingExtension(id: JsonRpcRequest["id"], what: string): Response {
  const message =
    `${what} needs the ${TASKS_EXTENSION} extension, which this request did not declare: ` +
    `add it to _meta["${CLIENT_CAPABILITIES_META_KEY}"].extensions and send the request again.`;
  return jsonRpcError(400, ProtocolErrorCode.MissingRequiredClientCapability, message, {
    id,
    data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  });
}

/**
 * The answer to a 2026 request that is the tasks extension's, or undefined for any other (the
 * usual path serves it), or, for a tools/call whose rounds end in a task, how they end (the SDK's
 * path serves its rounds: hub/modern/server.ts). `tenant` is the hub's finding of who
 * asks, never the client's word.
 */
export function answerTasks(
  ctx: HandlerCtx,
  tasks: TaskStore,
  tenant: string,
  req: Request,
  body: unknown,
): Response | Promise<Response> | TaskEscalation | undefined {
  const request = asRequest(body);
  if (!request) return undefined;
  if (TASK_METHODS.has(request.method)) {
    if (!declaresTasks(request)) return missingExtension(request.id, request.method);
    // the tasks extension routes tasks/* by their task (Mcp-Name: <taskId>); a router and the hub must not disagree on which
    const named = req.headers.get("mcp-name")?.replace(/^[ \t]+|[ \t]+$/g, "");
    if (named !== undefined && named !== request.params.taskId)
      return jsonRpcError(
        400,
        HEADER_MISMATCH,
        `The Mcp-Name header (${JSON.stringify(named)}) is not the request's params.taskId: send the task's id in both.`,
        {
          id: request.id,
        },
      );
    // polling is not a tool call (a task spent its tool budget once, when it started) but is bounded all the same: rateLimits.methods
    const answered = traceRequest(ctx.session, request.method, request.params, request.id, async () => {
      await checkMethodLimit(ctx, request.method);
      return reply(ctx, request.id, { resultType: "complete", ...taskMethod(tasks, tenant, request) });
    });
    return answered.catch((error: unknown) => errorReply(request.id, error));
  }
  if (request.method !== "tools/call" || typeof request.params.name !== "string") return undefined;
  const support = taskSupportOf(ctx, request.params.name);
  if (!support) return undefined;
  if (!declaresTasks(request)) return support === "required" ? missingExtension(request.id, `The tool ${request.params.name}`) : undefined;
  const meta = request.params._meta;
  if (support === "required") return escalation(tasks, tenant, request.params.name, meta);
  // a retry (its answers, its state) belongs to a call that started plain, before its caller declared the extension: it ends as it began
  if (request.params.requestState !== undefined || request.params.inputResponses !== undefined) return undefined;
  try {
    const params = { ...request.params, _meta: { ...meta, progressToken: TASK_PROGRESS_TOKEN } };
    const task = tasks.create(tenant, request.params.name, (round) => startCall(ctx, params, round).call, meta);
    return reply(ctx, request.id, { resultType: "task", ...task.info() });
  } catch (error) {
    return errorReply(request.id, error);
  }
}

/** How the rounds of a call of a tool that runs only as a task end: in a task of the tenant's, once the tool asks nothing more. */
function escalation(tasks: TaskStore, tenant: string, tool: string, meta: Record<string, unknown> | undefined): TaskEscalation {
  return {
    deadline: () => sleep(ASK_WINDOW_MS, undefined, { ref: false }),
    adopt(call) {
      try {
        return { resultType: "task", ...tasks.create(tenant, tool, () => call, meta).info() };
      } catch (error) {
        // no task holds the call: nobody could ever hear how it ends
        call.abandon(error instanceof Error ? error.message : String(error));
        throw error;
      }
    },
  };
}

/** A refusal in-band; one for a spent rate limit is HTTP 429 with Retry-After, as the hub's other rate-limited replies. */
function errorReply(id: JsonRpcRequest["id"], error: unknown): Response {
  const { code, message, data } = error as { code?: number; message: string; data?: { retryAfterMs?: number } };
  if (code === RATE_LIMITED_CODE)
    return jsonRpcError(429, code, message, { id, data, headers: { "Retry-After": String(Math.ceil((data?.retryAfterMs ?? 1000) / 1000)) } });
  return jsonRpcError(200, code ?? ErrorCode.InternalError, message, { id });
}

function taskMethod(tasks: TaskStore, tenant: string, request: JsonRpcRequest): Record<string, unknown> {
  const task = tasks.get(tenant, request.params.taskId);
  if (request.method === "tasks/get") return task.detailed();
  if (request.method === "tasks/cancel") task.cancel();
  else task.update(isPlainObject(request.params.inputResponses) ? request.params.inputResponses : {});
  return {};
}
