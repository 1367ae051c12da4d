// The deprecated HTTP+SSE transport (protocol 2024-11-05): GET /sse opens the event stream and
// names the endpoint; POST /messages?sessionId=… carries the client's messages.
import type { Context } from "hono";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import type { Hub } from "./hub.js";
import { jsonRpcError, parseJsonRpc } from "./jsonrpc-response.js";
import { newSessionId, RoutableSseTransport } from "./replica.js";
import { clientKey, requestTenant } from "./security.js";
import { bindView, viewForUrl } from "./selection.js";

export class LegacySseEndpoint {
  private readonly transports = new Map<string, SSEServerTransport>();

  constructor(private readonly hub: Hub) {}

  async open(c: Context<{ Bindings: HttpBindings }>): Promise<Response> {
    const { outgoing } = c.env;
    // selection hook (hub/selection.ts): ?servers= ?tools= ?catalog= fixed for the stream's session, or 400
    const view = viewForUrl(this.hub.defaultView(requestTenant(c)), c.req.url);
    if (view instanceof Response) return view;
    const transport = new RoutableSseTransport("/messages", outgoing, newSessionId(this.hub.config.replica));
    const session = this.hub.newSession(transport.sessionId, "sse", requestTenant(c), clientKey(c));
    session.transport = transport;
    bindView(session, view);
    this.transports.set(transport.sessionId, transport);
    outgoing.on("close", () => {
      this.transports.delete(transport.sessionId);
      void this.hub.sessions.close(transport.sessionId);
    });
    await this.hub.createServer(session).connect(transport);
    return RESPONSE_ALREADY_SENT;
  }

  async message(c: Context<{ Bindings: HttpBindings }>): Promise<Response> {
    const id = c.req.query("sessionId") ?? "";
    const transport = this.transports.get(id);
    // a session of another tenant is as unknown as a made-up one
    if (!transport || this.hub.sessions.get(id)?.tenant !== requestTenant(c)) return jsonRpcError(404, -32001, `Session not found: '${id}' is unknown or closed. Open a new stream with GET /sse.`);
    const parsed = parseJsonRpc(await c.req.text());
    if (!parsed.ok) return parsed.response;
    const body = parsed.body;
    this.hub.sessions.get(id)?.touch();
    await transport.handlePostMessage(c.env.incoming, c.env.outgoing, body);
    return RESPONSE_ALREADY_SENT;
  }
}
