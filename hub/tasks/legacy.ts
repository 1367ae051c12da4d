// Tool calls as tasks for 2025-era sessions, in the shape of the 2025-11-25 specification's
// experimental tasks: a tools/call with `params.task` is answered at once with `{ task }`, and the
// client follows it with tasks/get, tasks/result (which waits for the end and answers with the
// tool's own result), tasks/list and tasks/cancel. The tasks are the hub's one TaskStore's
// (./store.ts), the same a 2026-07-28 client's tasks extension uses: a task belongs to its tenant,
// whichever era started it and whichever session of that tenant asks about it (the tenant is the
// principal; the 2026 extension asks servers that serve both to let tasks/get and tasks/cancel reach
// the tasks of the other flow). Its call runs in the tenant's lasting context, as a 2026 task's does,
// so it outlives the session that started it (a closed session's terminals and processes are ended).
//
// The v1 SDK's own task machinery (Protocol's taskStore and taskMessageQueue) is not used: it binds
// a task to one transport session and routes a question's answer through the one Server instance
// that asked it, while these tasks outlive their session and their questions are asked by the
// hub's PendingCall. A child's question puts the task in input_required; the next tasks/result of
// any session of the tenant carries it to its client (with io.modelcontextprotocol/related-task),
// and the answer goes back to the child through Task.update, as a 2026 client's tasks/update does.
import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/server";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  type CallToolRequest,
  type Result,
  type Task as WireTask,
} from "@modelcontextprotocol/sdk/types.js";
import { protocolError } from "../protocol/jsonrpc.js";
import { HUB, type SessionView } from "../catalog/selection.js";
import type { Params } from "../sessions/forward.js";
import { startCall } from "../sessions/pending-call.js";
import type { ClientSession } from "../sessions/registry.js";
import { checkedHandler } from "../sessions/server.js";
import type { SessionServerExtension, SessionServices, SessionToolCall } from "../sessions/services.js";
import { firstStarts, unknownName } from "../sessions/tool-calls.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { taskSupportOf } from "./answer.js";
import { TaskQuestions } from "./legacy-questions.js";
import { TASK_PROGRESS_TOKEN, type Task, type TaskStore } from "./store.js";

/** What the session's server says it does at initialize (ServerCapabilities.tasks, 2025-11-25). */
const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
/** How often a client should poll tasks/get (the SDK's client polls at this pace when a task names none). */
export const POLL_INTERVAL_MS = 1000;
/** How many tasks one tasks/list page holds. */
const PAGE_SIZE = 100;
/** The client capabilities a task's call may ask its client by (hub/sessions/pending-call.ts checks them). */
const ASKING_CAPABILITIES = ["elicitation", "sampling", "roots"] as const;

/** A 2025 client receives a task's questions through tasks/result, not the 2026 extension's tasks/update the task's own message names. */
const INPUT_REQUIRED = "The tool asked a question: call tasks/result to receive and answer it.";

/** A hub task as the 2025-11-25 schema shows it (tasks/get, tasks/list, tasks/cancel, the CreateTaskResult). */
export function wireTask(task: Task): WireTask {
  const statusMessage = task.status === "input_required" ? INPUT_REQUIRED : task.statusMessage;
  return {
    taskId: task.id,
    status: task.status,
    ttl: task.ttlMs,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    pollInterval: POLL_INTERVAL_MS,
    ...(statusMessage ? { statusMessage } : {}),
  };
}

/** The refusal of `params.task` for a tool that cannot run as a task: unknown, outside the selection, or not task-capable. */
function notTaskCapable(session: ClientSession, view: SessionView, name: string): Error {
  const refused = view.refuseCall(name);
  if (refused) return protocolError(ErrorCode.InvalidParams, refused.content.map((c) => ("text" in c ? c.text : "")).join(" "));
  if (view.serverOf(name) !== HUB && !session.tenant.catalog.tool(name)) return unknownName("tool", name, session.tenant.catalog.suggestTools(name));
  return protocolError(
    ErrorCode.MethodNotFound,
    `The tool '${name}' does not run as a task (its execution.taskSupport is "forbidden" or absent in tools/list): call it without params.task.`,
  );
}

/** The task's ttl: the hub keeps every outcome AGENTBOX_TASK_TTL_SECONDS (the spec lets the receiver override the ttl asked; the answer says which applies). */
function checkTtl(ttl: unknown): void {
  if (ttl === undefined || (typeof ttl === "number" && Number.isFinite(ttl) && ttl >= 0)) return;
  throw protocolError(
    ErrorCode.InvalidParams,
    `params.task.ttl must be a number of milliseconds, 0 or more (or left out), not ${JSON.stringify(ttl)}; the task's answer says how long the hub keeps its result.`,
  );
}

export class LegacyTasks implements SessionServerExtension {
  private readonly questions = new TaskQuestions();

  constructor(
    private readonly hub: SessionServices,
    private readonly store: TaskStore,
    /** The tenant's lasting context, where a task's call runs: it outlives the session that started it. */
    private readonly contextOf: (tenant: ServedTenant) => ClientSession,
  ) {}

  /** `view`: the session's at each request (a person's follows their latest token). */
  install(server: Server, session: ClientSession, view: () => SessionView, plainCall: SessionToolCall): void {
    server.registerCapabilities({ tasks: TASKS_CAPABILITY });
    const tenant = session.tenant.name;
    const on = checkedHandler(server, session);
    // checked here too: a malformed call (a ttl that is no number) is InvalidParams naming the field, never an internal error
    on(CallToolRequestSchema, (req, extra) =>
      req.params.task === undefined ? this.plain(session, view(), req, extra, plainCall) : this.create(session, view(), req),
    );
    on(GetTaskRequestSchema, (req) => wireTask(this.store.get(tenant, req.params.taskId)));
    on(GetTaskPayloadRequestSchema, (req, extra) => this.questions.result(this.store.get(tenant, req.params.taskId), session, extra));
    on(ListTasksRequestSchema, (req) => this.list(tenant, req.params?.cursor));
    on(CancelTaskRequestSchema, (req) => this.cancel(this.store.get(tenant, req.params.taskId)));
  }

  /** A call without params.task: as it always was, but a client that does tasks must call a task-only tool as one (-32601, as the spec says). */
  private plain(session: ClientSession, view: SessionView, req: CallToolRequest, extra: Parameters<SessionToolCall>[1], plainCall: SessionToolCall) {
    // a client that did not declare tasks cannot call it any other way: the hub holds its call as it would any long call
    if (session.clientCapabilities.tasks && taskSupportOf({ session, view }, req.params.name) === "required") {
      throw protocolError(
        ErrorCode.MethodNotFound,
        `The tool '${req.params.name}' runs only as a task (execution.taskSupport "required"): call it with params.task, e.g. { "ttl": 60000 }.`,
      );
    }
    return plainCall(req, extra);
  }

  /** tools/call with params.task: the call starts in the tenant's lasting context, and the task is the answer. */
  private async create(session: ClientSession, view: SessionView, req: CallToolRequest): Promise<Result> {
    const { task: asked, ...params } = req.params as Params & CallToolRequest["params"];
    checkTtl(asked?.ttl);
    // a server not recorded in the manifest lists its tools only once it is up: a task asked for right after
    // initialize waits for that, as a plain call does (hub/sessions/tool-calls.ts), rather than call its tool unknown
    if (!session.tenant.catalog.tool(params.name) && view.serverOf(params.name) !== HUB) await firstStarts(session.tenant.children);
    const support = taskSupportOf({ session, view }, params.name);
    if (support !== "optional" && support !== "required") throw notTaskCapable(session, view, params.name);
    const declared = Object.fromEntries(ASKING_CAPABILITIES.flatMap((c) => (session.clientCapabilities[c] ? [[c, session.clientCapabilities[c]]] : [])));
    // the questions its child may ask are the ones the client that started it can answer
    const meta = { ...params._meta, [CLIENT_CAPABILITIES_META_KEY]: declared };
    const context = { hub: this.hub, session: this.contextOf(session.tenant), view };
    const started = { ...params, _meta: { ...meta, progressToken: TASK_PROGRESS_TOKEN } };
    const task = this.store.create(session.tenant.name, params.name, (round) => startCall(context, started, round).call, meta);
    if (session.clientCapabilities.tasks) this.tellStatus(task, session);
    return { task: wireTask(task) };
  }

  /** notifications/tasks/status to the session that started the task, while it is open. */
  private tellStatus(task: Task, session: ClientSession): void {
    const stop = task.watch(() => {
      if (session.closed || task.terminal) stop();
      const notification = { method: "notifications/tasks/status" as const, params: wireTask(task) };
      for (const server of session.servers) void server.notification(notification).catch(() => undefined);
    });
  }

  private list(tenant: string, cursor: string | undefined): Result {
    const start = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isSafeInteger(start) || start < 0 || String(start) !== (cursor ?? "0"))
      throw protocolError(ErrorCode.InvalidParams, `Invalid cursor ${JSON.stringify(cursor)}: pass the nextCursor of the previous tasks/list, or none.`);
    const tasks = this.store.of(tenant);
    const page = tasks.slice(start, start + PAGE_SIZE).map(wireTask);
    return { tasks: page, ...(start + PAGE_SIZE < tasks.length ? { nextCursor: String(start + PAGE_SIZE) } : {}) };
  }

  /** tasks/cancel: the call ends with its child's whole process tree; a task that already ended cannot be (-32602, as the spec says). */
  private cancel(task: Task): Result {
    if (task.terminal)
      throw protocolError(ErrorCode.InvalidParams, `Task ${task.id} already ended (${task.status}): only a working or input_required task can be cancelled.`);
    task.cancel();
    return wireTask(task);
  }
}
