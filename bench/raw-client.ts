// The cheap client of the relay benchmark: node:http with keep-alive and hand-written JSON-RPC,
// the same for every contender, so that what the client costs (the SDK client spends 0.8 ms of
// CPU per call, bench/README.md) does not crowd the 2 cores the servers are measured on.
// A session is opened with initialize when the server hands out an id (the hub, the peers); the
// bare relay hands out none and is called without one. Replies may be JSON or SSE.
import http from "node:http";

const PROTOCOL_VERSION = "2025-06-18";

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

export class RawSession {
  private sessionId?: string;
  private protocolVersion = PROTOCOL_VERSION;
  private nextId = 1;

  constructor(
    private readonly url: URL,
    private readonly agent: http.Agent,
  ) {}

  private request(method: "POST" | "DELETE", body?: unknown): Promise<Reply> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": this.protocolVersion,
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
    const reply = await this.request("POST", { jsonrpc: "2.0", id, method, params });
    const msg = reply.messages.find((m) => m.id === id);
    if (reply.status !== 200 || !msg) throw new Error(`${method}: HTTP ${reply.status}, ${JSON.stringify(reply.messages).slice(0, 200)}`);
    if (msg.error) throw new Error(`${method}: ${JSON.stringify(msg.error).slice(0, 200)}`);
    if (method === "initialize") this.sessionId = reply.sessionId;
    return msg.result as Record<string, unknown>;
  }

  async initialize(): Promise<void> {
    const result = await this.rpc("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
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
