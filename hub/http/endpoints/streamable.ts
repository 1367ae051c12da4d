// Streamable HTTP sessions on /mcp: initialize opens one (SDK transport and session server), and
// each later request of the session takes one of two ways. A plain tools/call is answered
// directly (./direct-call.ts); everything else (GET streams, DELETE, other methods, anything
// unusual) goes to the session's SDK transport. Requests without a session id that are not an
// initialize belong to ./plain-json.ts.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { BoundedEventStore } from "../event-store.js";
import type { HubServices } from "../services.js";
import { jsonRpcError, type ParsedBody } from "../../protocol/jsonrpc.js";
import { newSessionId } from "../replica.js";
import type { Caller } from "../security.js";
import { viewForUrl } from "../../catalog/selection.js";
import { carryingBase, connectSessionServer } from "../../sessions/server.js";
import type { RequestBase } from "../../previews/public-address.js";
import { answerToolCall, cancelsDirectCall, isDirectToolCall } from "./direct-call.js";
import { acceptsSse, sseToJson, withFullAccept } from "./sse-to-json.js";

type Parsed = Extract<ParsedBody, { ok: true }>;

export class StreamableEndpoint {
  /** The SDK transport of each open session, by session id. */
  private readonly transports = new Map<string, WebStandardStreamableHTTPServerTransport>();

  constructor(private readonly hub: HubServices) {}

  /** POST initialize: a new session with the selection its URL asks for (hub/catalog/selection.ts), or 400. */
  async initialize(req: Request, parsed: Parsed, caller: Caller): Promise<Response> {
    const selected = viewForUrl(this.hub.defaultView(caller.tenant), req.url, (parsed.body as { id?: string | number }).id);
    if (selected instanceof Response) return selected;
    // a person's session sees what their sign-in allows, for its whole life
    const view = selected.within(caller.grant);
    const id = newSessionId(this.hub.config.replica);
    const session = await this.hub.openSession(id, "streamable", caller.tenant, caller.clientKey, view);
    if (session instanceof Response) return session;
    const events = new BoundedEventStore(this.hub.eventBudget);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      eventStore: events,
      onsessionclosed: (closedId) => void this.hub.sessions.close(closedId),
      enableJsonResponse: this.hub.config.jsonResponses,
      maxRequestBodySize: this.hub.config.maxBodyBytes,
    });
    // kept through connect (the SDK chains it): closing the session closes its server, then this
    transport.onclose = () => {
      this.transports.delete(id);
      events.dispose();
    };
    this.transports.set(id, transport);
    await connectSessionServer(this.hub, session, transport);
    const res = await viaSdk(transport, req, parsed, caller.base);
    if (res.status >= 400) await this.hub.sessions.close(id, "refused");
    return res;
  }

  /** Any request carrying an Mcp-Session-Id. Another tenant's session id is as unknown as a made-up one. */
  async handle(req: Request, sessionId: string, caller: Caller, readBody: () => Promise<ParsedBody>): Promise<Response> {
    const session = this.hub.sessions.get(sessionId);
    const transport = this.transports.get(sessionId);
    if (!session || !transport || session.tenant !== caller.tenant) {
      return jsonRpcError(404, -32001, `Session not found: '${sessionId}' is unknown or has expired. Start a new session with initialize.`);
    }
    session.touch();
    if (req.method !== "POST") return transport.handleRequest(req);
    const parsed = await readBody();
    if (!parsed.ok) return parsed.response;
    // a person's session sees what their latest token allows: a client that stepped up retries with the wider one
    if (session.tenant.person !== undefined) session.view = session.view.regranted(caller.grant);
    const outOfScope = caller.refuseScope(session.view, parsed.body);
    if (outOfScope) return outOfScope;
    if (isDirectToolCall(parsed.body, req.headers, session, true)) {
      const handOver = handingOver(transport, req, parsed.body, caller.base);
      return answerToolCall(this.hub, session, session.view, parsed.body, req, caller.base, sessionId, handOver);
    }
    if (cancelsDirectCall(parsed.body, session)) return new Response(null, { status: 202, headers: { "mcp-session-id": sessionId } });
    return viaSdk(transport, req, parsed, caller.base);
  }
}

/**
 * A direct call's way to the SDK transport, should it need it (./direct-call.ts). It keeps the parsed
 * body alone, which the call holds anyway, not the request's text: a call can wait long in its
 * server's queue, and thousands of them with large arguments must not hold every body twice.
 */
function handingOver(transport: WebStandardStreamableHTTPServerTransport, req: Request, body: unknown, base: RequestBase): () => Promise<Response> {
  return () => viaSdk(transport, req, { ok: true, body, text: JSON.stringify(body) }, base);
}

/** A POST handed to the session's SDK transport, answered in what the client reads: SSE, or JSON for a plain client. */
async function viaSdk(transport: WebStandardStreamableHTTPServerTransport, req: Request, parsed: Parsed, base: RequestBase): Promise<Response> {
  const res = await transport.handleRequest(withFullAccept(req, parsed.text), { parsedBody: parsed.body, authInfo: carryingBase(base) });
  return acceptsSse(req) ? res : sseToJson(res, Array.isArray(parsed.body));
}
