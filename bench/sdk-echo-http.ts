// node dist/bench/sdk-echo-http.js <port>: the echo tool served over Streamable HTTP by the SDK
// itself, in one process, with JSON replies. No hub, no child, no hop: what one HTTP round trip
// with the SDK at both ends costs on this machine, the floor under every HTTP front (bench/README.md).
import { randomUUID } from "node:crypto";
import { serve } from "@hono/node-server";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

function echoServer(): Server {
  const server = new Server({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: "echo", description: "Return the text.", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => ({ content: [{ type: "text", text: String(req.params.arguments?.text ?? "") }] }));
  return server;
}

const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

async function handle(req: Request): Promise<Response> {
  const id = req.headers.get("mcp-session-id");
  if (id) return sessions.get(id)?.handleRequest(req) ?? new Response("unknown session", { status: 404 });
  const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: randomUUID,
    enableJsonResponse: true,
    onsessioninitialized: (sid) => void sessions.set(sid, transport),
    onsessionclosed: (sid) => void sessions.delete(sid),
  });
  await echoServer().connect(transport);
  return transport.handleRequest(req);
}

serve({ fetch: handle, hostname: "127.0.0.1", port: Number(process.argv[2]) });
