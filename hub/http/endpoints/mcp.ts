// /mcp (and /v1/mcp): which endpoint a request belongs to, decided once from who sent it
// (hub/http/security.ts), its Mcp-Session-Id and its body: a sessionless request that claims the
// 2026-07-28 per-request envelope goes to the 2026 room (hub/modern/endpoint.ts); each endpoint then
// takes it from there to the reply.
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { HubServices } from "../services.js";
import { jsonRpcError, parseJsonRpc } from "../../protocol/jsonrpc.js";
import { drainingRefusal, startsSomethingNew } from "../replica.js";
import { callerOf, type HubContext } from "../security.js";
import { answerCallback } from "./callback.js";
import type { ModernEndpoint } from "../../modern/endpoint.js";
import { mayBeModern, modernRoute } from "../../modern/classify.js";
import { answerPlainJson } from "./plain-json.js";
import { StreamableEndpoint } from "./streamable.js";

export function mcpEndpoint(hub: HubServices, modern: ModernEndpoint): (c: HubContext) => Promise<Response> {
  const streamable = new StreamableEndpoint(hub);
  return async (c) => {
    const req = c.req.raw;
    const caller = callerOf(c);
    const readBody = () => req.text().then(parseJsonRpc);
    if (caller.session) return answerCallback(hub, req, caller.session, caller.base, readBody);
    const sessionId = req.headers.get("mcp-session-id");
    if (sessionId) return streamable.handle(req, sessionId, caller, readBody);
    if (req.method !== "POST") return jsonRpcError(400, -32000, `Bad Request: ${req.method} needs an Mcp-Session-Id header from an initialize response.`);
    const parsed = await readBody();
    if (!parsed.ok) return parsed.response;
    const route = mayBeModern(req, parsed.body) ? modernRoute(req, parsed.body) : undefined;
    if (route) {
      // a draining replica serves what names state it holds (a retry, its own task or context) and sends the rest on
      if (hub.draining && startsSomethingNew(hub, req, parsed.body)) return drainingRefusal(hub);
      return modern.handle(req, parsed.body, caller, route);
    }
    // both below open a session: a draining replica sends the client on
    if (hub.draining) return drainingRefusal(hub);
    if (isInitializeRequest(parsed.body)) return streamable.initialize(req, parsed, caller);
    const session = await hub.implicitSession(caller.tenant, caller.clientKey);
    return session instanceof Response ? session : answerPlainJson(hub, req, parsed, session, caller.base, caller);
  };
}
