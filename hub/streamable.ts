// POST/GET/DELETE on /mcp: Streamable HTTP sessions through the SDK's web-standard transport, plus
// the paths the SDK has no opinion on: plain JSON clients without a session, and children calling
// the hub's tools on behalf of one of its sessions.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest, isJSONRPCNotification, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { BoundedEventStore } from "./event-store.js";
import type { Hub, ServedTenant } from "./hub.js";
import { jsonRpcError, parseJsonRpc, type ParsedBody } from "./jsonrpc-response.js";
import { acceptsSse, rateLimitRetryMs, retryAfterSeconds, sseToJson, withFullAccept } from "./plain-json.js";
import { newSessionId } from "./replica.js";
import { callbackSession, clientKey, requestTenant } from "./security.js";
import { bindView, urlSelects, viewForUrl, viewOf } from "./selection.js";
import type { ClientSession } from "./sessions.js";
import { directlyAnswerable, SessionTransport } from "./session-transport.js";

const EVENTS_KEPT_PER_SESSION = 500;

async function readJsonBody(req: Request): Promise<ParsedBody> {
  return parseJsonRpc(await req.text());
}

export class StreamableEndpoint {
  constructor(private readonly hub: Hub) {}

  async handle(c: Context): Promise<Response> {
    const req = c.req.raw;
    const callback = callbackSession(c);
    if (callback) return this.handleInternal(req, callback);
    const tenant = requestTenant(c);
    const sessionId = req.headers.get("mcp-session-id");
    if (sessionId) return this.handleExisting(req, sessionId, tenant);
    if (req.method !== "POST") {
      return jsonRpcError(400, -32000, `Bad Request: ${req.method} needs an Mcp-Session-Id header from an initialize response.`);
    }
    const parsed = await readJsonBody(req);
    if (!parsed.ok) return parsed.response;
    if (isInitializeRequest(parsed.body)) return this.initialize(req, parsed, tenant, clientKey(c));
    return this.handleOneShot(req, parsed, this.hub.implicitSession(tenant, clientKey(c)));
  }

  private async handleExisting(req: Request, sessionId: string, tenant: ServedTenant): Promise<Response> {
    const session = this.hub.sessions.get(sessionId);
    // another tenant's session id is as unknown as a made-up one
    if (!session || session.kind !== "streamable" || !session.transport || session.tenant !== tenant) {
      return jsonRpcError(404, -32001, `Session not found: '${sessionId}' is unknown or has expired. Start a new session with initialize.`);
    }
    session.touch();
    const transport = session.transport as SessionTransport;
    if (req.method !== "POST") return transport.handleRequest(req);
    const parsed = await readJsonBody(req);
    if (!parsed.ok) return parsed.response;
    if (directlyAnswerable(parsed.body, req.headers, session)) {
      const direct = await this.answerDirectly(req, transport, parsed.body, session.id);
      if (direct) return direct;
    }
    const res = await transport.handleRequest(withFullAccept(req, parsed.text), { parsedBody: parsed.body });
    return acceptsSse(req) ? res : sseToJson(res, Array.isArray(parsed.body));
  }

  /** The reply to a request that need not stream (see SessionTransport): JSON, or SSE if it turned out to. */
  private async answerDirectly(req: Request, transport: SessionTransport, request: JSONRPCRequest, sessionId?: string): Promise<Response | undefined> {
    // handlers rarely look at the request's headers, so they are copied only when one does
    const requestInfo = { get headers() { return Object.fromEntries(req.headers.entries()); } };
    const pending = transport.answerDirectly(request, { requestInfo });
    if (!pending) return undefined;
    const outcome = await pending;
    const headers: Record<string, string> = sessionId ? { "mcp-session-id": sessionId } : {};
    if ("cancelled" in outcome) return new Response(null, { status: 202, headers });
    if ("stream" in outcome) {
      const res = new Response(outcome.stream, { status: 200, headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" } });
      return acceptsSse(req) ? res : sseToJson(res, false);
    }
    headers["content-type"] = "application/json";
    // a client that cannot read SSE reads HTTP status instead, as on the SDK path (sseToJson)
    const retryMs = acceptsSse(req) ? undefined : rateLimitRetryMs(outcome.reply);
    if (retryMs !== undefined) headers["retry-after"] = retryAfterSeconds(retryMs);
    return new Response(JSON.stringify(outcome.reply), { status: retryMs === undefined ? 200 : 429, headers });
  }

  private async initialize(req: Request, parsed: { body: unknown; text: string }, tenant: ServedTenant, key: string): Promise<Response> {
    // selection hook (hub/selection.ts): ?servers= ?tools= ?catalog= fixed for the session, or 400
    const view = viewForUrl(this.hub.defaultView(tenant), req.url, (parsed.body as { id?: string | number }).id);
    if (view instanceof Response) return view;
    const id = newSessionId(this.hub.config.replica);
    const session = this.hub.newSession(id, "streamable", tenant, key);
    bindView(session, view);
    const transport = new SessionTransport({
      sessionIdGenerator: () => id,
      eventStore: new BoundedEventStore(EVENTS_KEPT_PER_SESSION),
      onsessionclosed: (closedId) => void this.hub.sessions.close(closedId),
      enableJsonResponse: this.hub.config.jsonResponses,
      maxRequestBodySize: this.hub.config.maxBodyBytes,
    });
    session.transport = transport;
    await this.hub.createServer(session).connect(transport);
    const res = await transport.handleRequest(withFullAccept(req, parsed.text), { parsedBody: parsed.body });
    if (res.status >= 400) await this.hub.sessions.close(id);
    return acceptsSse(req) ? res : sseToJson(res, Array.isArray(parsed.body));
  }

  /**
   * A request outside any Streamable HTTP session, answered as plain JSON: on the session's lane
   * when it need not stream, else by a server made for this one request.
   */
  private async handleOneShot(req: Request, parsed: { body: unknown; text: string }, session: ClientSession): Promise<Response> {
    session.touch();
    // selection hook (hub/selection.ts): a plain JSON request may narrow its session's selection for itself
    const view = urlSelects(req.url) ? viewForUrl(viewOf(session) ?? this.hub.defaultView(session.tenant), req.url, (parsed.body as { id?: string | number }).id) : undefined;
    if (view instanceof Response) return view;
    if (!view && directlyAnswerable(parsed.body, req.headers, session)) {
      const direct = await this.answerDirectly(req, await this.laneOf(session), parsed.body);
      if (direct) return direct;
    }
    if (session.lane && isJSONRPCNotification(parsed.body)) {
      // a cancellation must reach the server running the call: the lane's
      (await session.lane).onmessage?.(parsed.body);
      return new Response(null, { status: 202 });
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: this.hub.config.maxBodyBytes,
    });
    const server = this.hub.createServer(session, view);
    await server.connect(transport);
    try {
      const res = await transport.handleRequest(withFullAccept(req, parsed.text), { parsedBody: parsed.body });
      return await sseToJson(res, Array.isArray(parsed.body));
    } finally {
      void server.close();
    }
  }

  private laneOf(session: ClientSession): Promise<SessionTransport> {
    session.lane ??= (async () => {
      const transport = new SessionTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // closed with the session, like every server of the session
      await this.hub.createServer(session).connect(transport);
      return transport;
    })();
    return session.lane;
  }

  /** Code run for a session (the code server's interpreters) calling tools as that session. */
  private async handleInternal(req: Request, session: ClientSession): Promise<Response> {
    if (req.method !== "POST") return jsonRpcError(405, -32000, "Only POST is supported for internal calls.");
    const parsed = await readJsonBody(req);
    if (!parsed.ok) return parsed.response;
    return this.handleOneShot(req, parsed, session);
  }
}
