// The MCP server one client session talks to: an SDK Server whose handlers answer from the
// tenant's merged catalog and send everything else to the child that owns it. Each handler is a
// small named function of (context, request, extra). A plain tools/call usually never gets here:
// hub/http/endpoints/direct-call.ts answers it without an SDK server, through the same ToolCalls.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  ResultSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CompleteRequest,
  type GetPromptRequest,
  type ReadResourceRequest,
  type RequestId,
  type Result,
  type ServerNotification,
  type ServerRequest,
  type SetLevelRequest,
  type SubscribeRequest,
  type UnsubscribeRequest,
} from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/v4";
import { forward, type Params } from "./forward.js";
import type { SessionServices } from "./services.js";
import { HUB_INSTRUCTIONS, mergeInstructions, selectedServers } from "../catalog/instructions.js";
import { protocolError, RATE_LIMITED_CODE } from "../protocol/jsonrpc.js";
import { knownOwner, listResources, resourceOwner } from "./resources.js";
import type { CallChannel, ClientSession } from "./registry.js";
import type { SessionView } from "../catalog/selection.js";
import { unknownName } from "./tool-calls.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every handler works with: the hub and the session, seen through the view of this server. */
interface Ctx {
  hub: SessionServices;
  session: ClientSession;
  view: SessionView;
  /** What runs once a request's reply has been written, by request id (see connectSessionServer). */
  afterReply: Map<RequestId, Array<() => void>>;
}

/** The call context of an SDK request handler as a CallChannel. */
function channelOf(ctx: Ctx, extra: Extra): CallChannel {
  return {
    signal: extra.signal,
    notify: (notification) => extra.sendNotification(notification),
    request: (request, signal) => extra.sendRequest(request, ResultSchema, { signal }),
    afterReply: (action) => {
      const actions = ctx.afterReply.get(extra.requestId);
      if (actions) actions.push(action);
      else ctx.afterReply.set(extra.requestId, [action]);
    },
  };
}

async function checkMethodLimit({ hub, session }: Ctx, method: string): Promise<void> {
  const verdict = await hub.limits.checkMethod(session.budget, method);
  if (verdict.allowed) return;
  hub.metrics.rateLimited.inc({ kind: "method", name: method });
  const seconds = Math.ceil(verdict.retryAfterMs / 1000);
  throw protocolError(RATE_LIMITED_CODE, `Rate limit for ${method} reached (${verdict.rule}); retry in ${seconds} s.`, { retryAfterMs: verdict.retryAfterMs });
}

/** A prompt by published name, if the session's selection includes its server. */
function selectedPrompt({ session, view }: Ctx, name: string) {
  const owner = session.tenant.catalog.prompt(name);
  if (owner && view.allowsServer(owner.child.name)) return owner;
  throw unknownName("prompt", name, session.tenant.catalog.suggestPrompts(name));
}

async function listTools(ctx: Ctx) {
  await checkMethodLimit(ctx, "tools/list");
  return { tools: ctx.view.listTools() };
}

async function listPrompts(ctx: Ctx) {
  await checkMethodLimit(ctx, "prompts/list");
  const { catalog } = ctx.session.tenant;
  return { prompts: catalog.prompts.filter((p) => ctx.view.allowsServer(catalog.prompt(p.name)!.child.name)) };
}

async function getPrompt(ctx: Ctx, req: GetPromptRequest, extra: Extra) {
  await checkMethodLimit(ctx, "prompts/get");
  const owner = selectedPrompt(ctx, req.params.name);
  return forward(owner.child, "prompts/get", req.params, ctx.session, channelOf(ctx, extra), { name: owner.original });
}

async function listAllResources(ctx: Ctx) {
  await checkMethodLimit(ctx, "resources/list");
  return { resources: await listResources(ctx.session, ctx.view, ctx.hub.log) };
}

async function listResourceTemplates(ctx: Ctx) {
  await checkMethodLimit(ctx, "resources/templates/list");
  const templates = ctx.session.tenant.catalog.resourceTemplates().filter((t) => ctx.view.allowsServer(t.child.name));
  return { resourceTemplates: templates.map((t) => t.template) };
}

async function readResource(ctx: Ctx, req: ReadResourceRequest, extra: Extra) {
  await checkMethodLimit(ctx, "resources/read");
  return forward(resourceOwner(ctx.session, ctx.view, req.params.uri), "resources/read", req.params as Params, ctx.session, channelOf(ctx, extra));
}

async function subscribe(ctx: Ctx, req: SubscribeRequest, extra: Extra) {
  const owner = resourceOwner(ctx.session, ctx.view, req.params.uri);
  ctx.session.subscriptions.add(req.params.uri);
  if (owner.capabilities.resources?.subscribe) await forward(owner, "resources/subscribe", req.params as Params, ctx.session, channelOf(ctx, extra));
  return {};
}

async function unsubscribe(ctx: Ctx, req: UnsubscribeRequest, extra: Extra) {
  ctx.session.subscriptions.delete(req.params.uri);
  const owner = knownOwner(ctx.session, ctx.view, req.params.uri);
  if (owner?.capabilities.resources?.subscribe) {
    await forward(owner, "resources/unsubscribe", req.params as Params, ctx.session, channelOf(ctx, extra)).catch(() => undefined);
  }
  return {};
}

async function complete(ctx: Ctx, req: CompleteRequest, extra: Extra) {
  const ref = req.params.ref as { type: string; name?: string; uri?: string };
  if (ref.type === "ref/prompt") {
    const owner = selectedPrompt(ctx, ref.name ?? "");
    return forward(owner.child, "completion/complete", req.params, ctx.session, channelOf(ctx, extra), { ref: { ...ref, name: owner.original } });
  }
  const owner = knownOwner(ctx.session, ctx.view, ref.uri ?? "");
  if (!owner) return { completion: { values: [], hasMore: false } };
  return forward(owner, "completion/complete", req.params as Params, ctx.session, channelOf(ctx, extra));
}

async function setLevel({ session }: Ctx, req: SetLevelRequest) {
  session.logLevel = req.params.level;
  return {};
}

/**
 * Registers handlers whose request the SDK checks only for its method, then checks it here: a
 * malformed request is InvalidParams naming the wrong field, instead of the SDK's zod dump as an
 * internal error. (tools/call keeps the SDK's own check: the SDK Server wraps that handler itself.)
 */
function checkedHandler(server: Server) {
  return <S extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(schema: S, handler: (req: z.infer<S>, extra: Extra) => Promise<Result> | Result) => {
    const method = schema.shape.method.value;
    const anyParams = schema.extend({ params: z.unknown().optional() });
    server.setRequestHandler(anyParams, (request, extra) => {
      const parsed = schema.safeParse(request);
      if (!parsed.success) throw protocolError(ErrorCode.InvalidParams, `Invalid ${method} request: ${z.prettifyError(parsed.error).replace(/\n/g, " ")}`);
      return handler(parsed.data, extra);
    });
  };
}

/**
 * The server for one session (Streamable HTTP, legacy SSE, stdio) or one plain JSON request,
 * connected to its transport. A reply is written when the transport's send
 * settles; only then run the actions its call left (hub_end_session closes the session, which
 * closes the stream the reply travels on).
 * @param view what it may see and call; the session's own unless a plain JSON request's URL narrows it
 */
export async function connectSessionServer(hub: SessionServices, session: ClientSession, transport: Transport, view = session.view): Promise<Server> {
  const afterReply: Ctx["afterReply"] = new Map();
  const server = createSessionServer({ hub, session, view, afterReply });
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    const id = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message) ? message.id : undefined;
    const actions = id === undefined ? undefined : afterReply.get(id);
    if (!actions) return;
    afterReply.delete(id!);
    for (const action of actions) action();
  };
  await server.connect(transport);
  return server;
}

function createSessionServer(ctx: Ctx): Server {
  const { hub, session, view } = ctx;
  const server = new Server(
    { name: "agentbox", version: hub.version, title: "agentbox" },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      // the selection hook may add to the hub's sentence (search mode: how to find tools)
      instructions: mergeInstructions(view.instructions(HUB_INSTRUCTIONS), selectedServers(session.tenant.children, view)),
    },
  );
  const on = checkedHandler(server);
  on(ListToolsRequestSchema, () => listTools(ctx));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => hub.toolCalls.call(session, view, req.params as Params, channelOf(ctx, extra)));
  on(ListPromptsRequestSchema, () => listPrompts(ctx));
  on(GetPromptRequestSchema, (req, extra) => getPrompt(ctx, req, extra));
  on(ListResourcesRequestSchema, () => listAllResources(ctx));
  on(ListResourceTemplatesRequestSchema, () => listResourceTemplates(ctx));
  on(ReadResourceRequestSchema, (req, extra) => readResource(ctx, req, extra));
  on(SubscribeRequestSchema, (req, extra) => subscribe(ctx, req, extra));
  on(UnsubscribeRequestSchema, (req, extra) => unsubscribe(ctx, req, extra));
  on(CompleteRequestSchema, (req, extra) => complete(ctx, req, extra));
  on(SetLevelRequestSchema, (req) => setLevel(ctx, req));
  server.oninitialized = () => {
    session.clientCapabilities = server.getClientCapabilities() ?? {};
  };
  session.servers.add(server);
  server.onclose = () => session.servers.delete(server);
  return server;
}
