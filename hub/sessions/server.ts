// The MCP server one client session talks to: an SDK Server whose handlers answer from the
// tenant's merged catalog and send everything else to the child that owns it. Each handler is a
// small named function of (context, request, extra). A plain tools/call usually never gets here:
// hub/http/endpoints/direct-call.ts answers it without an SDK server, through the same ToolCalls.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  isInitializeRequest,
  isJSONRPCRequest,
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
  type RequestId,
  type Result,
  type ServerNotification,
  type ServerRequest,
  type SetLevelRequest,
} from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/v4";
import type { Params } from "./forward.js";
import type { SessionServices, SessionToolCall } from "./services.js";
import { protocolError } from "../protocol/jsonrpc.js";
import { requestIdKey } from "../protocol/call-table.js";
import { traceRequest, type TracedCaller } from "../observability/tracing.js";
import * as answer from "./handlers.js";
import type { CallChannel, ClientSession } from "./registry.js";
import type { SessionView } from "../catalog/selection.js";
import type { RequestBase } from "../previews/public-address.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The skills extension's requests (./skills.ts), which the SDK does not know. */
const ListSkillsRequestSchema = z.object({ method: z.literal("skills/list"), params: z.object({ cursor: z.string().optional() }).loose().optional() });
const GetSkillRequestSchema = z.object({ method: z.literal("skills/get"), params: z.object({ uri: z.string() }).loose() });

/** What every handler works with: the hub and the session, seen through the view of this server. */
interface Ctx extends answer.HandlerCtx {
  /** What runs once a request's reply has been written, by request id (see connectSessionServer). */
  afterReply: Map<RequestId, Array<() => void>>;
}

/** Where a request's address rides to its handler: the SDK hands a transport's authInfo to the handler untouched. */
const REQUEST_BASE_KEY = "agentbox/requestBase";

/** What an endpoint gives the SDK transport with a request (`authInfo`), so that its handler knows the address it came by. */
export function carryingBase(base: RequestBase): AuthInfo {
  return { token: "", clientId: "", scopes: [], extra: { [REQUEST_BASE_KEY]: base } };
}

const requestBaseOf = (extra: Extra) => extra.authInfo?.extra?.[REQUEST_BASE_KEY] as RequestBase | undefined;

/** The call context of an SDK request handler as a CallChannel. */
function channelOf(ctx: Ctx, extra: Extra): CallChannel {
  return {
    signal: extra.signal,
    requestId: extra.requestId,
    requestBase: requestBaseOf(extra),
    notify: (notification) => extra.sendNotification(notification),
    request: (request, signal) => extra.sendRequest(request, ResultSchema, { signal }),
    afterReply: (action) => {
      const actions = ctx.afterReply.get(extra.requestId);
      if (actions) actions.push(action);
      else ctx.afterReply.set(extra.requestId, [action]);
    },
  };
}

async function setLevel({ session }: Ctx, req: SetLevelRequest) {
  session.logLevel = req.params.level;
  return {};
}

/**
 * Registers handlers whose request the SDK checks only for its method, then checks it here: a
 * malformed request is InvalidParams naming the wrong field, instead of the SDK's zod dump as an
 * internal error. (tools/call keeps the SDK's own check: the SDK Server wraps that handler itself.)
 * Each request runs in its trace span (hub/observability/tracing.ts), the malformed ones too.
 */
export function checkedHandler(server: Server, caller: TracedCaller) {
  return <S extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(schema: S, handler: (req: z.infer<S>, extra: Extra) => Promise<Result> | Result) => {
    const method = schema.shape.method.value;
    const anyParams = schema.extend({ params: z.unknown().optional() });
    const checked = async (request: z.infer<typeof anyParams>, extra: Extra) => {
      const parsed = schema.safeParse(request);
      if (!parsed.success) throw protocolError(ErrorCode.InvalidParams, `Invalid ${method} request: ${z.prettifyError(parsed.error).replace(/\n/g, " ")}`);
      return handler(parsed.data, extra);
    };
    // a tools/call has its span where it runs (./tool-calls.ts), however it arrived: one span, a task's call too
    if (method === "tools/call") server.setRequestHandler(anyParams, checked);
    else server.setRequestHandler(anyParams, (request, extra) => traceRequest(caller, method, request.params, extra.requestId, () => checked(request, extra)));
  };
}

/**
 * The server for one session (Streamable HTTP, legacy SSE, stdio) or one plain JSON request,
 * connected to its transport. A reply is written when the transport's send
 * settles; only then run the actions its call left (hub_end_session closes the session, which
 * closes the stream the reply travels on).
 * @param view what it may see and call; the session's own unless a plain JSON request's URL narrows it
 */
export async function connectSessionServer(hub: SessionServices, session: ClientSession, transport: Transport, view?: SessionView): Promise<Server> {
  const afterReply: Ctx["afterReply"] = new Map();
  // without a view of its own, the session's as it is at each request (a person's follows their latest token)
  const server = createSessionServer(
    view
      ? { hub, session, view, afterReply }
      : {
          hub,
          session,
          get view() {
            return session.view;
          },
          afterReply,
        },
  );
  let initializeId: RequestId | undefined;
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    const id = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message) ? message.id : undefined;
    if (id !== undefined && id === initializeId && isJSONRPCResultResponse(message)) recordHandshake(session, server, message.result);
    const actions = id === undefined ? undefined : afterReply.get(id);
    if (!actions) return;
    afterReply.delete(id!);
    for (const action of actions) action();
  };
  await server.connect(transport);
  // the SDK keeps the version its initialize reply settles on to itself: read it off that reply
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message) && isInitializeRequest(message)) initializeId = message.id;
    receive?.(message, extra);
  };
  return server;
}

/** What hub_sessions tells of a session's client: the revision its handshake settled on, and the name it gave. */
function recordHandshake(session: ClientSession, server: Server, result: Result): void {
  const version = (result as { protocolVersion?: unknown }).protocolVersion;
  if (typeof version === "string") session.negotiatedVersion = version;
  session.clientInfo = server.getClientVersion();
}

function createSessionServer(ctx: Ctx): Server {
  const { hub, session } = ctx;
  const server = new Server(
    { name: "agentbox", version: hub.version, title: "agentbox" },
    {
      capabilities: { ...answer.HUB_CAPABILITIES },
      instructions: answer.hubInstructions(ctx),
    },
  );
  const on = checkedHandler(server, session);
  on(ListToolsRequestSchema, () => answer.listTools(ctx));
  // a call the direct path started and handed over when it first sent its client something (./handed-call.ts) is joined, not started again
  const plainCall: SessionToolCall = (req, extra) =>
    session.handedCalls.get(requestIdKey(extra.requestId))?.join(channelOf(ctx, extra)) ??
    hub.toolCalls.call(session, ctx.view, req.params as Params, channelOf(ctx, extra));
  server.setRequestHandler(CallToolRequestSchema, plainCall);
  on(ListPromptsRequestSchema, () => answer.listPrompts(ctx));
  on(GetPromptRequestSchema, (req, extra) => answer.getPrompt(ctx, req.params, channelOf(ctx, extra)));
  on(ListResourcesRequestSchema, (_req, extra) => answer.listAllResources(ctx, undefined, requestBaseOf(extra)));
  on(ListResourceTemplatesRequestSchema, () => answer.listResourceTemplates(ctx));
  on(ReadResourceRequestSchema, (req, extra) => answer.readResource(ctx, req.params, channelOf(ctx, extra)));
  on(SubscribeRequestSchema, (req, extra) => answer.subscribe(ctx, req.params, channelOf(ctx, extra)));
  on(UnsubscribeRequestSchema, (req, extra) => answer.unsubscribe(ctx, req.params, channelOf(ctx, extra)));
  on(CompleteRequestSchema, (req, extra) => answer.complete(ctx, req.params, channelOf(ctx, extra)));
  on(SetLevelRequestSchema, (req) => setLevel(ctx, req));
  on(ListSkillsRequestSchema, () => answer.listAllSkills(ctx));
  on(GetSkillRequestSchema, (req, extra) => answer.getOneSkill(ctx, req.params, channelOf(ctx, extra)));
  // tools/call with params.task and tasks/* (2025-11-25), registered over the plain tools/call it falls back to
  hub.sessionTasks?.install(server, session, () => ctx.view, plainCall);
  server.oninitialized = () => {
    session.clientCapabilities = server.getClientCapabilities() ?? {};
  };
  session.servers.add(server);
  server.onclose = () => session.servers.delete(server);
  return server;
}
