// The cheap client of the relay benchmark: node:http with keep-alive and hand-written JSON-RPC,
// the same for every contender, so that what the client costs (the SDK client spends 0.8 ms of
// CPU per call, bench/README.md) does not crowd the 2 cores the servers are measured on.
// A session is opened with initialize when the server hands out an id (the hub, the peers); the
// bare relay hands out none and is called without one. A 2026-07-28 client opens nothing: each
// request carries the revision's envelope in params._meta and its standard headers. Replies may
// be JSON or SSE.
import http from "node:http";

const PROTOCOL_VERSION = "2025-06-18";
const MODERN_VERSION = "2026-07-28";

/** Which protocol era a session speaks: 2025's initialize and session id, or 2026-07-28's per-request envelope. */
export type Era = "2025" | "2026";

interface Reply {
  status: number;
  sessionId?: string;
  /** The JSON-RPC messages in the body: one for JSON, every `data:` event for SSE. */
  messages: Record<string, unknown>[];
}

function parseBody(contentType: string, text: string): Record<string, unknown>[] {
  if (!text) return [];
  if (contentType.includes("text/event-stream")) {
    return text
      .split(/\r?\n\r?\n/)
      .map((event) =>
        event
          .split(/\r?\n/)
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n"),
      )
      .filter((data) => data !== "")
      .map((data) => JSON.parse(data) as Record<string, unknown>);
  }
  return [JSON.parse(text) as Record<string, unknown>];
}

/** What a 2026-07-28 request carries in params._meta in place of a session's initialize. */
const MODERN_ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "agentbox-bench-raw", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

export class RawSession {
  private sessionId?: string;
  private protocolVersion = PROTOCOL_VERSION;
  private nextId = 1;

  constructor(
    private readonly url: URL,
    private readonly agent: http.Agent,
    private readonly era: Era = "2025",
    /** What the client declares at initialize (2025): a client that may be asked something (roots, elicitation, sampling) takes the SDK's path through the hub. */
    private readonly capabilities: Record<string, unknown> = {},
  ) {
    if (era === "2026") this.protocolVersion = MODERN_VERSION;
  }

  private request(method: "POST" | "DELETE", body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Reply> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": this.protocolVersion,
      ...extraHeaders,
    };
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = Buffer.byteLength(payload);
    }
    if (this.sessionId) headers["mcp-session-id"] = this.sessionId;
    return new Promise((resolve, reject) => {
      const req = http.request(this.url, { method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          try {
            const sid = res.headers["mcp-session-id"];
            resolve({
              status: res.statusCode ?? 0,
              sessionId: typeof sid === "string" ? sid : undefined,
              messages: parseBody(String(res.headers["content-type"] ?? ""), Buffer.concat(chunks).toString("utf8")),
            });
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      });
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** A request and its JSON-RPC result; an HTTP or JSON-RPC error throws. */
  private async rpc(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const modern = this.era === "2026";
    const body = { jsonrpc: "2.0", id, method, params: modern ? { ...params, _meta: MODERN_ENVELOPE } : params };
    const named: Record<string, string> = typeof params.name === "string" ? { "mcp-name": params.name } : {};
    const reply = await this.request("POST", body, modern ? { "mcp-method": method, ...named } : {});
    const msg = reply.messages.find((m) => m.id === id);
    if (reply.status !== 200 || !msg) throw new Error(`${method}: HTTP ${reply.status}, ${JSON.stringify(reply.messages).slice(0, 200)}`);
    if (msg.error) throw new Error(`${method}: ${JSON.stringify(msg.error).slice(0, 200)}`);
    if (method === "initialize") this.sessionId = reply.sessionId;
    return msg.result as Record<string, unknown>;
  }

  /** Open the session (2025); a 2026-07-28 client has none to open. */
  async initialize(): Promise<void> {
    if (this.era === "2026") return;
    const result = await this.rpc("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: this.capabilities,
      clientInfo: { name: "agentbox-bench-raw", version: "1.0.0" },
    });
    if (typeof result.protocolVersion === "string") this.protocolVersion = result.protocolVersion;
    const note = await this.request("POST", { jsonrpc: "2.0", method: "notifications/initialized" });
    if (note.status >= 300) throw new Error(`notifications/initialized: HTTP ${note.status}`);
  }

  /** tools/call; a tool error counts as a failure as much as a transport error. */
  async callTool(name: string, args: Record<string, unknown>): Promise<void> {
    const result = await this.rpc("tools/call", { name, arguments: args });
    if (result.isError) throw new Error(`${name} returned an error: ${JSON.stringify(result.content).slice(0, 200)}`);
  }

  /** End the session the way a well-behaved client does (nothing to end on the bare relay). */
  async close(): Promise<void> {
    if (this.sessionId) await this.request("DELETE").catch(() => undefined);
  }
}
