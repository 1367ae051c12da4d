// The server a 2026-07-28 request is answered by: an SDK v2 low-level Server, built for that one
// request (./endpoint.ts serves it through the SDK's createMcpHandler), whose handlers are the 2025
// session server's (hub/sessions/handlers.ts, hub/sessions/tool-calls.ts) over the tenant's default
// modern context and the request's own selection. The revision has no server-to-client requests
// and no session: a child's question during tools/call, prompts/get or resources/read becomes
// input_required (./pending-calls.ts keeps the call for the retry), and log lines reach the client
// only at the level its request's envelope asks for.
import { inputRequired, Server, type CacheHint, type InputRequiredResult, type ServerContext } from "@modelcontextprotocol/server";
import { ErrorCode, McpError, type Result } from "@modelcontextprotocol/sdk/types.js";
import type { Params } from "../sessions/forward.js";
import * as answer from "../sessions/handlers.js";
import { declaredCapabilities, envelopeLogLevel, startRequest, TOOLS_CALL, wantsLog, type PendingCall } from "../sessions/pending-call.js";
import type { CallChannel } from "../sessions/registry.js";
import type { TaskEscalation } from "../tasks/answer.js";
import type { PendingCalls, SealedState } from "./pending-calls.js";
import { TASKS_EXTENSION } from "../protocol/extensions.js";
import { completionResult, notificationForV2, promptResult, readResult, toolCallResult, toolsForV2 } from "../protocol/sdk-seam.js";
import { traceRequest } from "../observability/tracing.js";
import * as z from "zod/v4";

/** A 2026 request's context: the handlers' own, and the calls waiting for their clients' answers. */
export interface ModernCtx extends answer.HandlerCtx {
  pending: PendingCalls;
  /** A tools/call the hub's direct path (./direct.ts) started and hands to the SDK to answer. */
  adopted?: AdoptedCall;
  /** Set for a tools/call that ends its rounds in a task (hub/tasks/answer.ts): a tool that runs only as a task, a caller that declared the extension. */
  asTask?: TaskEscalation;
}

/** A call in flight that this request's tools/call answers, instead of starting one: it joins this round before waiting. */
export interface AdoptedCall {
  call: PendingCall;
  join(round: ServerContext): void;
}

/**
 * Every list and read answers one tenant, through one request's selection, from a catalog that
 * changes whenever a child restarts or says its list changed: only the asking client may keep it,
 * and nobody may keep it past the answer (a listen stream says when to ask again).
 */
const NO_SHARED_CACHE: CacheHint = { ttlMs: 0, cacheScope: "private" };
const CACHE_HINTS = {
  "server/discover": NO_SHARED_CACHE,
  "tools/list": NO_SHARED_CACHE,
  "prompts/list": NO_SHARED_CACHE,
  "resources/list": NO_SHARED_CACHE,
  "resources/templates/list": NO_SHARED_CACHE,
  "resources/read": NO_SHARED_CACHE,
};

/** The skills extension's params (hub/sessions/skills.ts answers them, as in 2025). */
const SkillsListParams = z.object({ cursor: z.string().optional() }).loose();
const SkillsGetParams = z.object({ uri: z.string() }).loose();

function unrelayedQuestion(method: string, during: string): McpError {
  return new McpError(
    ErrorCode.InvalidRequest,
    `A server sent ${method} during ${during} from a 2026-07-28 client; the hub relays a server's questions to such clients (as input_required) ` +
      "during tools/call, prompts/get and resources/read only (the requests that revision lets ask), so nobody was asked.",
  );
}

/** One request's way back: its notifications ride its own response; anything left for after the reply runs once the handler is done. */
function channelOf(ctx: ServerContext, afterReply: Array<() => void>, requestBase: ModernCtx["requestBase"]): CallChannel {
  return {
    signal: ctx.mcpReq.signal,
    requestId: ctx.mcpReq.id,
    requestBase,
    notify: async (notification) => {
      const carried = notificationForV2(notification);
      if (carried && wantsLog(ctx, notification)) await ctx.mcpReq.notify(carried);
    },
    logLevel: () => envelopeLogLevel(ctx),
    // the revision lets only tools/call, prompts/get and resources/read answer input_required (see inRounds)
    request: (request) => Promise.reject(unrelayedQuestion(request.method, ctx.mcpReq.method)),
    afterReply: (action) => afterReply.push(action),
  };
}

/**
 * A request that may ask its client (tools/call, prompts/get, resources/read), in as many rounds as
 * its child asks questions: the first starts it (or joins the call the direct path started and
 * handed over), each retry (named by its sealed requestState, which names this method and this
 * tool, prompt or resource) answers them, and every round ends with the result (`resultOf` gives
 * it the SDK's type for the method) or the next questions.
 */
async function inRounds<P extends Params, R>(
  ctx: ModernCtx,
  request: { method: string; params: P },
  round: ServerContext,
  name: string,
  run: (params: P, channel: CallChannel) => Promise<Result>,
  resultOf: (result: Result) => R,
): Promise<R | InputRequiredResult> {
  const target = `${request.method} ${name}`;
  const state = round.mcpReq.requestState<SealedState>();
  let call: PendingCall;
  if (ctx.adopted && request.method === TOOLS_CALL) {
    call = ctx.adopted.call;
    ctx.adopted.join(round);
  } else if (state) {
    call = ctx.pending.resume(state, ctx.session, target);
    call.answer(round.mcpReq.inputResponses);
  } else {
    call = startRequest(ctx, target, request.params, round, run).call;
  }
  // only a tools/call becomes a task (the extension's one task-augmented method)
  const escalation = request.method === TOOLS_CALL ? ctx.asTask : undefined;
  let kept = false;
  try {
    const next = await call.next(round, escalation?.deadline());
    if ("inputRequests" in next) {
      ctx.pending.keep(call);
      kept = true;
      return inputRequired({ inputRequests: next.inputRequests, requestState: await ctx.pending.seal(call, round) });
    }
    if (escalation) {
      const created = escalation.adopt(call);
      // the task holds the call from here: what it leaves for after its reply is the task's to run when it ends
      kept = true;
      return resultOf(created);
    }
    if ("result" in next) return resultOf(next.result);
    throw new Error("a round without a deadline ended with the call still running");
  } finally {
    if (!kept) for (const action of call.afterReply) queueMicrotask(action);
  }
}

/** Runs a handler with its call channel, then whatever the call left for after its reply (hub_end_session ends the context). */
async function withChannel<T>(ctx: ServerContext, requestBase: ModernCtx["requestBase"], handler: (channel: CallChannel) => Promise<T>): Promise<T> {
  const afterReply: Array<() => void> = [];
  try {
    return await handler(channelOf(ctx, afterReply, requestBase));
  } finally {
    // the reply is not cut off by them: no stream of this request belongs to the context they end
    for (const action of afterReply) queueMicrotask(action);
  }
}

/** The v2 server for one 2026-07-28 request of a tenant's modern context, seen through the request's view. */
export function createModernServer(ctx: ModernCtx): Server {
  const { hub } = ctx;
  const server = new Server(answer.serverInfoOf(hub), {
    // the tasks extension is the hub's own (hub/tasks/), answered before this server sees the request
    capabilities: { ...answer.HUB_CAPABILITIES, extensions: { ...answer.HUB_CAPABILITIES.extensions, [TASKS_EXTENSION]: {} } },
    instructions: answer.hubInstructions(ctx),
    cacheHints: CACHE_HINTS,
    // a forged, expired or another tenant's state is refused before any handler runs
    requestState: { verify: ctx.pending.verify },
  });
  // each request in its trace span; a tools/call has its own where it runs (hub/sessions/tool-calls.ts), across its rounds
  const traced = <T>(req: { method: string; params?: unknown }, c: ServerContext, work: () => Promise<T>) =>
    traceRequest(ctx.session, req.method, req.params, c.mcpReq.id, work);
  // the handlers answer in the 2025 SDK's types; hub/protocol/sdk-seam.ts gives each answer the v2 SDK's, by method
  const leftOut = (tool: string) => hub.log.warn("a tool is left out of 2026-07-28 listings: its schema is not JSON", { tool });
  server.setRequestHandler("tools/list", (req, c) =>
    traced(req, c, async () => ({ tools: toolsForV2((await answer.listTools(ctx, declaredCapabilities(c))).tools, leftOut) })),
  );
  server.setRequestHandler("tools/call", (req, c) =>
    inRounds(
      ctx,
      req,
      c,
      req.params.name,
      (p, ch) => hub.toolCalls.call(ctx.session, ctx.view, p, ch),
      (result) => toolCallResult(result, req.params.name),
    ),
  );
  server.setRequestHandler("prompts/list", (req, c) => traced(req, c, () => answer.listPrompts(ctx)));
  server.setRequestHandler("prompts/get", (req, c) =>
    traced(req, c, () =>
      inRounds(
        ctx,
        req,
        c,
        req.params.name,
        (p, ch) => answer.getPrompt(ctx, p, ch),
        (result) => promptResult(result, req.params.name),
      ),
    ),
  );
  server.setRequestHandler("resources/list", (req, c) => traced(req, c, () => answer.listAllResources(ctx, declaredCapabilities(c))));
  server.setRequestHandler("resources/templates/list", (req, c) => traced(req, c, () => answer.listResourceTemplates(ctx)));
  server.setRequestHandler("resources/read", (req, c) =>
    traced(req, c, () =>
      inRounds(
        ctx,
        req,
        c,
        req.params.uri,
        (p, ch) => answer.readResource(ctx, p, ch),
        (result) => readResult(result, req.params.uri),
      ),
    ),
  );
  server.setRequestHandler("skills/list", { params: SkillsListParams }, (params, c) =>
    traced({ method: "skills/list", params }, c, async () => ({ resultType: "complete", ...(await answer.listAllSkills(ctx)) })),
  );
  server.setRequestHandler("skills/get", { params: SkillsGetParams }, (params, c) =>
    traced({ method: "skills/get", params }, c, async () => ({
      resultType: "complete",
      ...(await withChannel(c, ctx.requestBase, (ch) => answer.getOneSkill(ctx, params, ch))),
    })),
  );
  server.setRequestHandler("completion/complete", (req, c) => {
    const { ref } = req.params;
    const of = ref.type === "ref/prompt" ? `prompt '${ref.name}'` : `resource template '${ref.uri}'`;
    return traced(req, c, async () => completionResult(await withChannel(c, ctx.requestBase, (ch) => answer.complete(ctx, req.params, ch)), of));
  });
  return server;
}
