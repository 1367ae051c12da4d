// /mcp (and /v1/mcp): which endpoint a request belongs to, decided once from who sent it
// (hub/http/security.ts), its Mcp-Session-Id and its body: a sessionless request that claims the
// 2026-07-28 per-request envelope goes to ./modern.ts; each endpoint then takes it from there to the reply.
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { HubServices } from "../services.js";
import { jsonRpcError, parseJsonRpc } from "../../protocol/jsonrpc.js";
import { drainingRefusal } from "../replica.js";
import { callerOf, type HubContext } from "../security.js";
import { answerCallback } from "./callback.js";
import { mayBeModern, modernRoute, type ModernEndpoint } from "./modern.js";
import { answerPlainJson } from "./plain-json.js";
import { StreamableEndpoint } from "./streamable.js";

export function mcpEndpoint(hub: HubServices, modern: ModernEndpoint): (c: HubContext) => Promise<Response> {
  const streamable = new StreamableEndpoint(hub);
  return async (c) => {
    const req = c.req.raw;
    const caller = callerOf(c);
    const readBody = async () => parseJsonRpc(await req.text());
    if (caller.session) return answerCallback(hub, req, caller.session, readBody);
    const sessionId = req.headers.get("mcp-session-id");
    if (sessionId) return streamable.handle(req, sessionId, caller, readBody);
    if (req.method !== "POST") return jsonRpcError(400, -32000, `Bad Request: ${req.method} needs an Mcp-Session-Id header from an initialize response.`);
    const parsed = await readBody();
    if (!parsed.ok) return parsed.response;
    const route = mayBeModern(req, parsed.body) ? modernRoute(req, parsed.body) : undefined;
    if (route) return modern.handle(req, parsed.body, caller, route);
    // both below open a session: a draining replica sends the client on (2026 requests are judged by ./modern.ts)
    if (hub.draining) return drainingRefusal(hub);
    if (isInitializeRequest(parsed.body)) return streamable.initialize(req, parsed, caller);
    const session = await hub.implicitSession(caller.tenant, caller.clientKey);
    return session instanceof Response ? session : answerPlainJson(hub, req, parsed, session);
  };
}
