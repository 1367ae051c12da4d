// The deprecated HTTP+SSE transport (protocol 2024-11-05): GET /sse opens the event stream and
// names the endpoint; POST /messages?sessionId=… carries the client's messages.
import type { Context } from "hono";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import type { Hub } from "./hub.js";
import { jsonRpcError } from "./jsonrpc-response.js";
import { newSessionId, RoutableSseTransport } from "./replica.js";
import { clientKey } from "./security.js";

export class LegacySseEndpoint {
  private readonly transports = new Map<string, SSEServerTransport>();

  constructor(private readonly hub: Hub) {}

  async open(c: Context<{ Bindings: HttpBindings }>): Promise<Response> {
    const { outgoing } = c.env;
    const transport = new RoutableSseTransport("/messages", outgoing, newSessionId(this.hub.config.replica));
    const session = this.hub.newSession(transport.sessionId, "sse", clientKey(c));
    session.transport = transport;
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
    if (!transport) return jsonRpcError(404, -32001, `Session not found: '${id}' is unknown or closed. Open a new stream with GET /sse.`);
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch (err) {
      return jsonRpcError(400, -32700, `Parse error: the request body is not valid JSON (${(err as Error).message}).`);
    }
    this.hub.sessions.get(id)?.touch();
    await transport.handlePostMessage(c.env.incoming, c.env.outgoing, body);
    return RESPONSE_ALREADY_SENT;
  }
}
