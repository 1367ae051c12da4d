// POST/GET/DELETE on /mcp: Streamable HTTP sessions through the SDK's web-standard transport, plus
// the paths the SDK has no opinion on: plain JSON clients without a session, and children calling
// the hub's tools on behalf of one of its sessions.
import { timingSafeEqual } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest, isJSONRPCNotification, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { sessionToken } from "../servers/lib/session-events.js";
import { BoundedEventStore } from "./event-store.js";
import type { Hub } from "./hub.js";
import { jsonRpcError } from "./jsonrpc-response.js";
import { acceptsSse, rateLimitRetryMs, retryAfterSeconds, sseToJson, withFullAccept } from "./plain-json.js";
import { newSessionId } from "./replica.js";
import { clientKey } from "./security.js";
import type { ClientSession } from "./sessions.js";
import { directlyAnswerable, SessionTransport } from "./session-transport.js";

export const INTERNAL_TOKEN_HEADER = "x-agentbox-hub-token";
export const INTERNAL_SESSION_HEADER = "x-agentbox-session";
const EVENTS_KEPT_PER_SESSION = 500;

type Parsed = { ok: true; body: unknown; text: string } | { ok: false; response: Response };

async function readJsonBody(req: Request): Promise<Parsed> {
  const text = await req.text();
  try {
    return { ok: true, body: JSON.parse(text), text };
  } catch (err) {
    return { ok: false, response: jsonRpcError(400, -32700, `Parse error: the request body is not valid JSON (${(err as Error).message}).`) };
  }
}

export class StreamableEndpoint {
  constructor(private readonly hub: Hub) {}

  /** A call from code in a child, carrying the token of the one session it may act as. */
  isInternal(req: Request): boolean {
    const token = req.headers.get(INTERNAL_TOKEN_HEADER);
    const session = req.headers.get(INTERNAL_SESSION_HEADER);
    if (!token || !session) return false;
    const expected = Buffer.from(sessionToken(this.hub.internalToken, session));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  async handle(c: Context): Promise<Response> {
    const req = c.req.raw;
    if (this.isInternal(req)) return this.handleInternal(req);
    const sessionId = req.headers.get("mcp-session-id");
    if (sessionId) return this.handleExisting(req, sessionId);
    if (req.method !== "POST") {
      return jsonRpcError(400, -32000, `Bad Request: ${req.method} needs an Mcp-Session-Id header from an initialize response.`);
    }
    const parsed = await readJsonBody(req);
    if (!parsed.ok) return parsed.response;
    if (isInitializeRequest(parsed.body)) return this.initialize(req, parsed, clientKey(c));
    return this.handleOneShot(req, parsed, this.hub.implicitSession(clientKey(c)));
  }

  private async handleExisting(req: Request, sessionId: string): Promise<Response> {
    const session = this.hub.sessions.get(sessionId);
    if (!session || session.kind !== "streamable" || !session.transport) {
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

  private async initialize(req: Request, parsed: { body: unknown; text: string }, key: string): Promise<Response> {
    const id = newSessionId(this.hub.config.replica);
    const session = this.hub.newSession(id, "streamable", key);
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
    if (directlyAnswerable(parsed.body, req.headers, session)) {
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
    const server = this.hub.createServer(session);
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

  /** A child (the code server) calling tools as one of the hub's client sessions. */
  private async handleInternal(req: Request): Promise<Response> {
    const sessionId = req.headers.get(INTERNAL_SESSION_HEADER) ?? "";
    const session = this.hub.sessions.get(sessionId);
    if (!session) return jsonRpcError(404, -32001, `Session '${sessionId}' has ended; its tools can no longer be called.`);
    if (req.method !== "POST") return jsonRpcError(405, -32000, "Only POST is supported for internal calls.");
    const parsed = await readJsonBody(req);
    if (!parsed.ok) return parsed.response;
    return this.handleOneShot(req, parsed, session);
  }
}
