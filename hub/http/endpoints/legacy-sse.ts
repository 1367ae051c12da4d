// The deprecated HTTP+SSE transport (protocol 2024-11-05): GET /sse opens the event stream and
// names the endpoint; POST /messages?sessionId=… carries the client's messages.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { SseServerTransport } from "./sse-transport.js";
import type { HubServices } from "../services.js";
import { jsonRpcError, parseJsonRpc } from "../../protocol/jsonrpc.js";
import { mediaTypeOf } from "../../../servers/lib/media-type.js";
import { newSessionId } from "../replica.js";
import { callerOf, type HubContext } from "../security.js";
import { viewForUrl } from "../../catalog/selection.js";
import { carryingBase, connectSessionServer } from "../../sessions/server.js";

export class LegacySseEndpoint {
  private readonly transports = new Map<string, SseServerTransport>();

  constructor(private readonly hub: HubServices) {}

  async open(c: HubContext): Promise<Response> {
    const { outgoing } = c.env;
    const caller = callerOf(c);
    // selection hook (hub/catalog/selection.ts): ?servers= ?tools= ?catalog= fixed for the stream's session, or 400
    const selected = viewForUrl(this.hub.defaultView(caller.tenant), c.req.url);
    if (selected instanceof Response) return selected;
    const view = selected.within(caller.grant);
    const id = newSessionId(this.hub.config.replica);
    const session = await this.hub.openSession(id, "sse", caller.tenant, caller.clientKey, view);
    if (session instanceof Response) return session;
    const transport = new SseServerTransport("/messages", outgoing, id);
    this.transports.set(transport.sessionId, transport);
    outgoing.on("close", () => {
      this.transports.delete(transport.sessionId);
      void this.hub.sessions.close(transport.sessionId);
    });
    await connectSessionServer(this.hub, session, transport);
    return RESPONSE_ALREADY_SENT;
  }

  async message(c: HubContext): Promise<Response> {
    const id = c.req.query("sessionId") ?? "";
    const transport = this.transports.get(id);
    const session = this.hub.sessions.get(id);
    // a session of another tenant is as unknown as a made-up one
    const caller = callerOf(c);
    if (!transport || !session || session.tenant !== caller.tenant) {
      return jsonRpcError(404, -32001, `Session not found: '${id}' is unknown or closed. Open a new stream with GET /sse.`);
    }
    const parsed = parseJsonRpc(await c.req.text());
    if (!parsed.ok) return parsed.response;
    session.touch();
    if (!transport.connected) return c.text("SSE connection not established", 500);
    const type = c.req.header("content-type");
    if (mediaTypeOf(type) !== "application/json") return c.text(`Error: Unsupported content-type: ${type ?? "none"}`, 400);
    const requestInfo = { headers: c.env.incoming.headers, url: new URL(c.req.url) };
    if (!transport.receive(parsed.body, { requestInfo, authInfo: carryingBase(caller.base) }))
      return c.text(`Invalid message: ${JSON.stringify(parsed.body)}`, 400);
    return c.text("Accepted", 202);
  }
}
