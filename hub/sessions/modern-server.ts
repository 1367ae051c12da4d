// The server a 2026-07-28 request is answered by: an SDK v2 low-level Server, built for that one
// request (hub/http/endpoints/modern.ts serves it through the SDK's createMcpHandler), whose
// handlers are the 2025 session server's (./handlers.js, ./tool-calls.ts) over the tenant's
// default modern context and the request's own selection. The revision has no server-to-client
// requests and no session: a child's question is refused (./child-requests.ts), and log lines
// reach the client only at the level its request's envelope asks for.
import { LOG_LEVEL_META_KEY, Server, type CacheHint, type ServerContext } from "@modelcontextprotocol/server";
import type { LoggingLevel, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { Params } from "./forward.js";
import * as answer from "./handlers.js";
import { LOG_LEVELS, unreachableModernClient } from "./child-requests.js";
import type { CallChannel } from "./registry.js";

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

/** Whether a child's log line reaches a 2026 client: only when its request named a level, and at or above it. */
function wantsLog(ctx: ServerContext, notification: ServerNotification): boolean {
  if (notification.method !== "notifications/message") return true;
  const threshold = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined;
  return threshold !== undefined && LOG_LEVELS.indexOf(notification.params.level) >= LOG_LEVELS.indexOf(threshold);
}

/** One request's way back: its notifications ride its own response; anything left for after the reply runs once the handler is done. */
function channelOf(ctx: ServerContext, afterReply: Array<() => void>): CallChannel {
  return {
    signal: ctx.mcpReq.signal,
    notify: async (notification) => {
      if (wantsLog(ctx, notification)) await ctx.mcpReq.notify(notification as Parameters<ServerContext["mcpReq"]["notify"]>[0]);
    },
    request: (request) => Promise.reject(unreachableModernClient(request.method, "hub")),
    afterReply: (action) => afterReply.push(action),
  };
}

/** Runs a handler with its call channel, then whatever the call left for after its reply (hub_end_session ends the context). */
async function withChannel<T>(ctx: ServerContext, handler: (channel: CallChannel) => Promise<T>): Promise<T> {
  const afterReply: Array<() => void> = [];
  try {
    return await handler(channelOf(ctx, afterReply));
  } finally {
    // the reply is not cut off by them: no stream of this request belongs to the context they end
    for (const action of afterReply) queueMicrotask(action);
  }
}

/** The v2 server for one 2026-07-28 request of a tenant's modern context, seen through the request's view. */
export function createModernServer(ctx: answer.HandlerCtx): Server {
  const { hub, session, view } = ctx;
  const server = new Server(
    { name: "agentbox", version: hub.version, title: "agentbox" },
    { capabilities: { ...answer.HUB_CAPABILITIES }, instructions: answer.hubInstructions(ctx), cacheHints: CACHE_HINTS },
  );
  // the SDK's own request types are the same wire shapes as the 2025 SDK's the handlers are written against
  type Any = never;
  server.setRequestHandler("tools/list", () => answer.listTools(ctx) as Any);
  server.setRequestHandler("tools/call", (req, c) => withChannel(c, (ch) => hub.toolCalls.call(session, view, req.params as Params, ch)) as Any);
  server.setRequestHandler("prompts/list", () => answer.listPrompts(ctx) as Any);
  server.setRequestHandler("prompts/get", (req, c) => withChannel(c, (ch) => answer.getPrompt(ctx, req.params as Any, ch)) as Any);
  server.setRequestHandler("resources/list", () => answer.listAllResources(ctx) as Any);
  server.setRequestHandler("resources/templates/list", () => answer.listResourceTemplates(ctx) as Any);
  server.setRequestHandler("resources/read", (req, c) => withChannel(c, (ch) => answer.readResource(ctx, req.params as Any, ch)) as Any);
  server.setRequestHandler("completion/complete", (req, c) => withChannel(c, (ch) => answer.complete(ctx, req.params as Any, ch)) as Any);
  return server;
}
