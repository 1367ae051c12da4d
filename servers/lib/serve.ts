// The stdio bootstrap every child server shares: register tools, listen for the hub's session
// notifications, and shut down cleanly (freeing browsers, ptys, interpreters) on SIGTERM or
// when the hub goes away (stdin closes).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type CallToolResult, type Tool as ListedTool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { createLogger, errorMessage, type Logger } from "./log.js";
import {
  attributionOf,
  describeSession,
  DESCRIBE_SESSION_METHOD,
  emitSessionClosed,
  SESSION_CLOSED_METHOD,
  SESSION_META_KEY,
  SESSION_CALLBACK_CAPABILITY,
  SESSION_STATE_CAPABILITY,
  TOKEN_META_KEY,
} from "./session-events.js";
import { configureToolNames, resolveText, type Text } from "./names.js";
import { listedTool, reply, ToolError, type Tool, type ToolContext } from "./tool.js";
import { RECORDINGS_LIST_METHOD } from "./recording-names.js";
import { listRecordings } from "./recordings.js";
import { serveLive, type LiveProvider } from "./live-host.js";
import { workspaceRoot } from "./workspace.js";
import { LineStdioServerTransport } from "./stdio-transport.js";
import { inSpan, mcpAttributes, mcpSpanName, parentFrom, serviceName, SpanKind, startTracing, stopTracing, TracingConfigError } from "./tracing.js";

export interface ServerSpec {
  name: string;
  version?: string;
  instructions?: Text;
  tools: Tool[];
  /** The server keeps state per client session (terminals, interpreters, pages): declared as SESSION_STATE_CAPABILITY. */
  sessionState?: boolean;
  /** What the server starts calls the hub back as the session or carries its claim: declared as SESSION_CALLBACK_CAPABILITY, so the hub sends `ctx.sessionToken`. */
  sessionCallback?: boolean;
  /** Register resources, prompts or anything else on the SDK server. */
  setup?(server: McpServer, env: { workspace: string; log: Logger }): void | Promise<void>;
  /** Streams a session's tabs or terminals to the hub's live views (./live-host.ts). */
  live?: LiveProvider;
  /** Free what the server holds (browsers, ptys, interpreters) before the process exits. */
  onShutdown?(): void | Promise<void>;
}

function experimentalCapabilities(spec: ServerSpec): Record<string, object> {
  return {
    ...(spec.sessionState ? { [SESSION_STATE_CAPABILITY]: {} } : {}),
    ...(spec.sessionCallback ? { [SESSION_CALLBACK_CAPABILITY]: {} } : {}),
  };
}

/** The session calls made without the hub share (a client that started this server itself). */
export const STANDALONE_SESSION = "standalone";

/** The session a request belongs to, as the hub named it in _meta. */
export function sessionOf(meta: Record<string, unknown> | undefined): string {
  const value = meta?.[SESSION_META_KEY];
  return typeof value === "string" && value ? value : STANDALONE_SESSION;
}

// The SDK is handed an input that takes any object, so its own validation (and its message naming
// the unprefixed tool) never runs; each tool's `call` validates against its real input with our
// message, and tools/list publishes the real input, cleaned of schema noise (./tool-schema.ts).
const ANY_ARGUMENTS = z.looseObject({});

export function registerTools(server: McpServer, tools: Tool[], workspace: string, log: Logger, serverName: string): void {
  const listed: ListedTool[] = [];
  for (const tool of tools) {
    const published = listedTool(tool);
    listed.push(published);
    server.registerTool(
      tool.name,
      {
        title: published.title,
        description: published.description,
        inputSchema: ANY_ARGUMENTS,
        outputSchema: tool.output,
        annotations: tool.annotations,
      },
      async (raw: Record<string, unknown>, extra) => {
        const progressToken = extra._meta?.progressToken;
        const session = sessionOf(extra._meta);
        const ctx: ToolContext = {
          session,
          sessionToken: typeof extra._meta?.[TOKEN_META_KEY] === "string" ? (extra._meta[TOKEN_META_KEY] as string) : undefined,
          signal: extra.signal,
          workspace,
          log: log.child({ tool: tool.name }),
          extra: namingSession(extra, session),
          async progress(progress, total, message) {
            if (progressToken === undefined) return;
            await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total, message } }).catch(() => undefined);
          },
        };
        // the server's own span, continuing the hub's CLIENT span named in _meta.traceparent
        const target = { tool: tool.name };
        const attributes = { ...mcpAttributes("tools/call", target, extra.requestId), "agentbox.server": serverName };
        return inSpan(mcpSpanName("tools/call", target), SpanKind.SERVER, attributes, parentFrom(extra._meta), async () => {
          try {
            return await tool.call(raw, ctx);
          } catch (err) {
            return toolFailure(err, ctx.log);
          }
        });
      },
    );
  }
  // replaces the SDK's listing (registered by the first registerTool above) with the cleaned one
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
}

type Extra = ToolContext["extra"];
type WithMeta = { params?: { _meta?: Record<string, unknown> } & Record<string, unknown> };

/**
 * A tool's questions to the client (sampling, elicitation, roots) and its log lines name the session
 * and the call they belong to, so the hub hands them to that call's client and no other.
 */
function namingSession(extra: Extra, session: string): Extra {
  const attribution = { [SESSION_META_KEY]: session, ...attributionOf(extra._meta) };
  const named = <M extends WithMeta>(message: M): M => ({
    ...message,
    params: { ...message.params, _meta: { ...message.params?._meta, ...attribution } },
  });
  return {
    ...extra,
    sendRequest: ((request: WithMeta, schema: unknown, options: unknown) =>
      extra.sendRequest(named(request) as never, schema as never, options as never)) as Extra["sendRequest"],
    sendNotification: (notification) =>
      extra.sendNotification(notification.method === "notifications/message" ? (named(notification as WithMeta) as never) : notification),
  };
}

function toolFailure(err: unknown, log: Logger): CallToolResult {
  if (!(err instanceof ToolError)) log.warn("tool failed", { error: errorMessage(err), stack: (err as Error)?.stack });
  return reply.error(errorMessage(err));
}

export async function serve(spec: ServerSpec): Promise<McpServer> {
  // stdout carries JSON-RPC, and libraries (pdf.js, mammoth, jsdom…) print diagnostics with
  // console.log: every console channel goes to stderr
  console.log = console.info = console.debug = console.error;
  const log = createLogger({ server: spec.name });
  const workspace = workspaceRoot();
  // the hub checked OTEL_* before starting this server: a refusal here is only said, traces stay off
  await startTracing(serviceName(spec.name)).catch((err) =>
    log.warn("traces off", { error: err instanceof TracingConfigError ? err.message : errorMessage(err) }),
  );
  configureToolNames(
    spec.name,
    spec.tools.map((t) => t.name),
  );
  const server = new McpServer(
    { name: `agentbox-${spec.name}`, version: spec.version ?? "0.1.0" },
    {
      instructions: resolveText(spec.instructions),
      capabilities: { logging: {}, experimental: experimentalCapabilities(spec) },
    },
  );
  registerTools(server, spec.tools, workspace, log, spec.name);
  await spec.setup?.(server, { workspace, log });
  server.server.setNotificationHandler(
    z.object({ method: z.literal(SESSION_CLOSED_METHOD), params: z.object({ session: z.string() }).passthrough() }),
    async (notification) => {
      log.debug("session closed", { session: notification.params.session });
      await emitSessionClosed(notification.params.session);
    },
  );

  server.server.setRequestHandler(
    z.object({ method: z.literal(DESCRIBE_SESSION_METHOD), params: z.object({ session: z.string() }).passthrough() }),
    async (request) => ({ state: await describeSession(request.params.session) }),
  );
  server.server.setRequestHandler(
    z.object({ method: z.literal(RECORDINGS_LIST_METHOD), params: z.object({ session: z.string() }).passthrough() }),
    async (request) => ({ recordings: await listRecordings(workspace, request.params.session) }),
  );

  if (spec.live) serveLive(server.server, spec.live, log);

  let stopping = false;
  const shutdown = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { why });
    const force = setTimeout(() => process.exit(0), 5000);
    force.unref();
    try {
      await spec.onShutdown?.();
    } catch (err) {
      log.error("shutdown failed", { error: errorMessage(err) });
    }
    await stopTracing();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.stdin.on("end", () => void shutdown("stdin closed"));
  process.stdin.on("close", () => void shutdown("stdin closed"));
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: errorMessage(err) }));

  await server.connect(new LineStdioServerTransport());
  log.info("ready", { tools: spec.tools.length, workspace });
  return server;
}
